#ifndef TESSERA_CLMDB_SHIM_H
#define TESSERA_CLMDB_SHIM_H
#include <lmdb.h>

/* Asks the processor to start loading the cache line holding `p` (a hint: never faults,
   whatever the address). */
static inline void tessera_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }
#endif
