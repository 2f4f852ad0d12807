#ifndef TESSERA_CLMDB_SHIM_H
#define TESSERA_CLMDB_SHIM_H
#include <lmdb.h>

/* Asks the processor to start loading the cache line holding `p` (a hint: never faults,
   whatever the address). */
static inline void tessera_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }

/* A walk in key order has just reached the leaf page at `page` (inside the map; LMDB 0.9's
   layout: flags at 10, lower bound at 12, node offsets from 16): starts loading the first
   two lines of each of its nodes, and the first lines of the page after it in the file (the
   next leaf of a table written in key order). Reads only the header and the node offsets. */
static inline void tessera_prefetch_leaf(const unsigned char *page, unsigned page_size) {
    unsigned short flags, lower;
    __builtin_memcpy(&flags, page + 10, 2);
    __builtin_memcpy(&lower, page + 12, 2);
    if ((flags & 0x2F) != 0x02 || lower < 16 || lower > page_size) return;
    unsigned n = (unsigned)(lower - 16) >> 1;
    for (unsigned i = 0; i < n; i++) {
        unsigned short offset;
        __builtin_memcpy(&offset, page + 16 + 2 * i, 2);
        if (offset < page_size) {
            __builtin_prefetch(page + offset, 0, 3);
            __builtin_prefetch(page + offset + 64, 0, 3);
        }
    }
    __builtin_prefetch(page + page_size, 0, 3);
    __builtin_prefetch(page + page_size + 64, 0, 3);
}
#endif
