// See CLMDBGuard.h. A guarded call records a jump buffer in a thread-local pointer before
// calling LMDB; the SIGSEGV/SIGBUS handler (and LMDB's assert callback) jumps back to it when
// the fault happened on a thread inside such a call. The handlers are installed with
// SA_NODEFER, so the signal is not left blocked after the jump.
#define _GNU_SOURCE
#include "CLMDBGuard.h"
#include <lmdb.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <fcntl.h>
#include <time.h>

static __thread sigjmp_buf *current_guard;
static __thread int last_signal;
static __thread char last_message[240];

static struct sigaction previous_segv, previous_bus;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

static void forward(int sig, siginfo_t *info, void *context) {
    struct sigaction *previous = sig == SIGBUS ? &previous_bus : &previous_segv;
    if (previous->sa_flags & SA_SIGINFO) {
        if (previous->sa_sigaction) { previous->sa_sigaction(sig, info, context); return; }
    } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        previous->sa_handler(sig);
        return;
    }
    // The default action: put it back; returning re-runs the faulting instruction.
    signal(sig, SIG_DFL);
}

static void on_fault(int sig, siginfo_t *info, void *context) {
    sigjmp_buf *guard = current_guard;
    if (guard == NULL) { forward(sig, info, context); return; }
    current_guard = NULL;
    last_signal = sig;
    // snprintf is not async-signal-safe in general; this thread was inside LMDB, not inside
    // the C library's formatting code, so it is safe here.
    snprintf(last_message, sizeof last_message, "%s reading address %p",
             sig == SIGBUS ? "SIGBUS (a page past the end of the file)" : "SIGSEGV (a wild pointer)",
             info ? info->si_addr : NULL);
    siglongjmp(*guard, 1);
}

static void on_assert(MDB_env *env, const char *message) {
    (void)env;
    sigjmp_buf *guard = current_guard;
    if (guard == NULL) return;  // LMDB aborts
    current_guard = NULL;
    last_signal = 0;
    snprintf(last_message, sizeof last_message, "LMDB assertion: %s", message);
    siglongjmp(*guard, 1);
}

static void install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previous_segv);
    sigaction(SIGBUS, &action, &previous_bus);
}

void tessera_lmdb_guard_env(void *env) {
    pthread_once(&install_once, install);
    mdb_env_set_assert((MDB_env *)env, on_assert);
}

int tessera_lmdb_last_fault_signal(void) { return last_signal; }
const char *tessera_lmdb_last_fault_message(void) { return last_message; }

// One guarded call: `call` runs with this thread's guard set; a fault returns TESSERA_LMDB_FAULT.
#define GUARDED(call)                                   \
    do {                                                \
        sigjmp_buf here;                                \
        sigjmp_buf *outer = current_guard;              \
        if (sigsetjmp(here, 0) != 0) {                  \
            current_guard = outer;                      \
            return TESSERA_LMDB_FAULT;                  \
        }                                               \
        current_guard = &here;                          \
        int rc_ = (call);                               \
        current_guard = outer;                          \
        return rc_;                                     \
    } while (0)

static unsigned long map_base(const void *pointer, unsigned int page_size) {
    if (pointer == NULL || page_size < 512 || (page_size & (page_size - 1)) != 0) return 0;
    const unsigned char *page = (const unsigned char *)((uintptr_t)pointer & ~(uintptr_t)(page_size - 1));
    uint64_t number;
    memcpy(&number, page, sizeof number);
    if (number > (uintptr_t)page / page_size) return 0;
    const unsigned char *base = page - number * page_size;
    // Page 0 and page 1: page number, P_META in the flags, then MDB_MAGIC.
    for (unsigned int i = 0; i < 2; i++) {
        const unsigned char *meta = base + i * page_size;
        uint64_t pgno;
        uint16_t flags;
        uint32_t magic;
        memcpy(&pgno, meta, sizeof pgno);
        memcpy(&flags, meta + 10, sizeof flags);
        memcpy(&magic, meta + 16, sizeof magic);
        if (pgno != i || (flags & 0x08) == 0 || magic != 0xBEEFC0DE) return 0;
    }
    return (unsigned long)(uintptr_t)base;
}

unsigned long tessera_lmdb_map_base(const void *pointer, unsigned int page_size) {
    sigjmp_buf here;
    sigjmp_buf *outer = current_guard;
    if (sigsetjmp(here, 0) != 0) {
        current_guard = outer;
        return 0;
    }
    current_guard = &here;
    unsigned long base = map_base(pointer, page_size);
    current_guard = outer;
    return base;
}

// The structure of a leaf page: header, pointer array, nodes (LMDB 0.9's MDB_page and
// MDB_node layouts: a node is lo, hi (the data size), flags, key size, then key and data).
static inline void page_header(const unsigned char *page, uint64_t *pgno, uint16_t *flags, uint16_t *lower, uint16_t *upper) {
    memcpy(pgno, page, 8);
    memcpy(flags, page + 10, 2);
    memcpy(lower, page + 12, 2);
    memcpy(upper, page + 14, 2);
}

static int leaf_is_valid(const unsigned char *page, uint64_t number, unsigned int page_size, int main_table) {
    uint64_t pgno;
    uint16_t flags, lower, upper;
    page_header(page, &pgno, &flags, &lower, &upper);
    if (pgno != number) return 0;
    if ((flags & 0x02) == 0 || (flags & (0x01 | 0x04 | 0x08 | 0x20)) != 0) return 0;  // a plain leaf
    if (lower < 16 || lower > upper || upper > page_size) return 0;
    unsigned int count = (lower - 16) / 2;
    for (unsigned int i = 0; i < count; i++) {
        uint16_t offset;
        memcpy(&offset, page + 16 + 2 * i, 2);
        if (offset < upper || (unsigned int)offset + 8 > page_size) return 0;
        const unsigned char *node = page + offset;
        uint16_t lo, hi, node_flags, key_size;
        memcpy(&lo, node, 2);
        memcpy(&hi, node + 2, 2);
        memcpy(&node_flags, node + 4, 2);
        memcpy(&key_size, node + 6, 2);
        // F_BIGDATA 0x01 (the data is an overflow page number), F_SUBDATA 0x02 (a table's
        // record, in the main table only); F_DUPDATA 0x04 is never used by these tables.
        if ((node_flags & ~0x03) != 0 || ((node_flags & 0x02) && !main_table)) return 0;
        size_t data_size = (node_flags & 0x01) ? 8 : ((size_t)lo | (size_t)hi << 16);
        if ((size_t)offset + 8 + key_size + data_size > page_size) return 0;
    }
    return 1;
}

// The check of the leaf page holding `at` (a key LMDB found there) before a write: nothing
// when the page is not the file's (this transaction's own copy), else the page must be a sound
// leaf inside the file. 0 or TESSERA_LMDB_DAMAGED_PAGE.
static int check_page_of(const void *at_pointer, unsigned long map_base, unsigned long map_end, unsigned int page_size,
                         int main_table) {
    uintptr_t at = (uintptr_t)at_pointer;
    if (at < map_base || at >= map_end) return 0;  // a page this transaction copied already
    uintptr_t page = at & ~(uintptr_t)(page_size - 1);
    if (page + page_size > map_end) return TESSERA_LMDB_DAMAGED_PAGE;
    return leaf_is_valid((const unsigned char *)page, (page - map_base) / page_size, page_size, main_table)
        ? 0 : TESSERA_LMDB_DAMAGED_PAGE;
}

int tessera_lmdb_check_leaf(void *txn, unsigned int dbi, void *key, unsigned long map_base, unsigned long map_end,
                            unsigned int page_size) {
    if (map_base == 0 || page_size < 512 || (page_size & (page_size - 1)) != 0) return 0;
    MDB_cursor *cursor = NULL;
    int rc = tessera_mdb_cursor_open(txn, dbi, &cursor);
    if (rc != 0) return rc;
    MDB_val k = *(MDB_val *)key, v;
    rc = tessera_mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
    if (rc == MDB_NOTFOUND) rc = tessera_mdb_cursor_get(cursor, &k, &v, MDB_LAST);
    mdb_cursor_close(cursor);
    if (rc == MDB_NOTFOUND) return 0;  // an empty table
    if (rc != 0) return rc;
    sigjmp_buf here;
    sigjmp_buf *outer = current_guard;
    if (sigsetjmp(here, 0) != 0) {
        current_guard = outer;
        return TESSERA_LMDB_FAULT;
    }
    current_guard = &here;
    int result = check_page_of(k.mv_data, map_base, map_end, page_size, dbi == 1);
    current_guard = outer;
    return result;
}

int tessera_mdb_cursor_get(void *cursor, void *key, void *data, unsigned int op) {
    GUARDED(mdb_cursor_get((MDB_cursor *)cursor, (MDB_val *)key, (MDB_val *)data, (MDB_cursor_op)op));
}
int tessera_mdb_get(void *txn, unsigned int dbi, void *key, void *data) {
    GUARDED(mdb_get((MDB_txn *)txn, dbi, (MDB_val *)key, (MDB_val *)data));
}
int tessera_mdb_put(void *txn, unsigned int dbi, void *key, void *data, unsigned int flags) {
    GUARDED(mdb_put((MDB_txn *)txn, dbi, (MDB_val *)key, (MDB_val *)data, flags));
}
int tessera_mdb_del(void *txn, unsigned int dbi, void *key, void *data) {
    GUARDED(mdb_del((MDB_txn *)txn, dbi, (MDB_val *)key, (MDB_val *)data));
}
static int append_batch(MDB_txn *txn, MDB_dbi dbi, const MDB_val *keys, const MDB_val *values, size_t count,
                        size_t *appended) {
    MDB_cursor *cursor = NULL;
    int rc = mdb_cursor_open(txn, dbi, &cursor);
    if (rc != 0) return rc;
    size_t i = 0;
    for (; i < count; i++) {
        // The keys are read in an order of their own (sorted, not as stored): start loading
        // the key a few entries ahead.
        if (i + 8 < count) __builtin_prefetch(keys[i + 8].mv_data, 0, 3);
        MDB_val k = keys[i], v = values[i];
        rc = mdb_cursor_put(cursor, &k, &v, MDB_APPEND);
        if (rc != 0) break;
    }
    mdb_cursor_close(cursor);
    *appended = i;
    return rc;
}

int tessera_mdb_append_batch(void *txn, unsigned int dbi, const void *keys, const void *values, size_t count,
                             size_t *appended) {
    *appended = 0;
    GUARDED(append_batch((MDB_txn *)txn, dbi, (const MDB_val *)keys, (const MDB_val *)values, count, appended));
}

int tessera_mdb_cursor_del(void *cursor, unsigned int flags) { GUARDED(mdb_cursor_del((MDB_cursor *)cursor, flags)); }
int tessera_mdb_drop(void *txn, unsigned int dbi, int del) { GUARDED(mdb_drop((MDB_txn *)txn, dbi, del)); }
int tessera_mdb_stat(void *txn, unsigned int dbi, void *stat) { GUARDED(mdb_stat((MDB_txn *)txn, dbi, (MDB_stat *)stat)); }
int tessera_mdb_dbi_open(void *txn, const char *name, unsigned int flags, unsigned int *dbi) {
    GUARDED(mdb_dbi_open((MDB_txn *)txn, name, flags, dbi));
}
int tessera_mdb_cursor_open(void *txn, unsigned int dbi, void *cursor_out) {
    GUARDED(mdb_cursor_open((MDB_txn *)txn, dbi, (MDB_cursor **)cursor_out));
}
int tessera_mdb_txn_commit(void *txn) { GUARDED(mdb_txn_commit((MDB_txn *)txn)); }

// ---------------------------------------------------------------------------------------------
// Many lookups in one table of a read-only transaction, walked together.
//
// mdb_get walks one key from the root to its leaf; each page it reaches is usually not in the
// CPU's caches (nor in its TLB), and the next step depends on it, so a row of lookups waits
// for memory once per level per key. Here the keys descend level by level together: every
// key's next page is requested (prefetched) before any of them is read, so the waits overlap.
// It reads LMDB 0.9's page layout (as leaf_is_valid does): header (page number, pad, flags,
// lower, upper), then the node offsets; a branch node's child page number is lo | hi << 16 |
// flags << 32; a leaf node's data size lo | hi << 16, its data after the key (or, with
// F_BIGDATA, on the overflow page whose number it holds).

static inline int tree_compare(const unsigned char *a, size_t a_size, const unsigned char *b, size_t b_size) {
    // LMDB's default order (mdb_cmp_memn): bytes, then the shorter key first.
    int d = memcmp(a, b, a_size < b_size ? a_size : b_size);
    return d != 0 ? d : (a_size < b_size ? -1 : a_size > b_size ? 1 : 0);
}

static inline const unsigned char *tree_page(const tessera_lmdb_tree *tree, uint64_t number) {
    if (number >= (tree->map_end - tree->map_base) / tree->page_size) return NULL;
    return (const unsigned char *)(uintptr_t)(tree->map_base + number * tree->page_size);
}

// A node of page `p` by index, or NULL if its header would leave the page.
static inline const unsigned char *tree_node(const unsigned char *p, unsigned index, unsigned page_size,
                                             uint16_t *key_size) {
    uint16_t offset;
    memcpy(&offset, p + 16 + 2 * index, 2);
    if ((unsigned)offset + 8 > page_size) return NULL;
    memcpy(key_size, p + offset + 6, 2);
    if ((unsigned)offset + 8 + *key_size > page_size) return NULL;
    return p + offset;
}

enum { WALKING = 3 };

static int get_many(const tessera_lmdb_tree *tree, size_t count, const MDB_val *keys, MDB_val *values,
                    unsigned char *found) {
    const unsigned char *at[TESSERA_LMDB_GET_MANY_MAX];
    const unsigned page_size = tree->page_size;
    const unsigned char *root = tree_page(tree, tree->root);
    for (size_t j = 0; j < count; j++) {
        at[j] = root;
        found[j] = root ? WALKING : 0;
    }
    if (root == NULL) return 0;
    for (unsigned level = 0; level < tree->depth; level++) {
        for (size_t j = 0; j < count; j++) {
            if (found[j] != WALKING) continue;
            found[j] = 0;  // until the walk succeeds
            const unsigned char *p = at[j];
            uint16_t flags, lower;
            memcpy(&flags, p + 10, 2);
            memcpy(&lower, p + 12, 2);
            if (lower < 16 || lower > page_size) continue;
            unsigned n = (unsigned)(lower - 16) >> 1;
            const unsigned char *key = keys[j].mv_data;
            size_t key_size = keys[j].mv_size;
            uint16_t ks;
            const unsigned char *node;
            if ((flags & 0x2F) == 0x01 && level + 1 < tree->depth) {
                // A branch: the last node whose key is at or below the key (node 0's key is
                // empty and stands below every key).
                if (n == 0) continue;
                unsigned lo = 1, hi = n;
                int damaged = 0;
                while (lo < hi) {
                    unsigned mid = (lo + hi) >> 1;
                    if ((node = tree_node(p, mid, page_size, &ks)) == NULL) { damaged = 1; break; }
                    if (tree_compare(node + 8, ks, key, key_size) <= 0) lo = mid + 1; else hi = mid;
                }
                if (damaged || (node = tree_node(p, lo - 1, page_size, &ks)) == NULL) continue;
                uint16_t a, b, c;
                memcpy(&a, node, 2);
                memcpy(&b, node + 2, 2);
                memcpy(&c, node + 4, 2);
                const unsigned char *child = tree_page(tree, (uint64_t)a | (uint64_t)b << 16 | (uint64_t)c << 32);
                if (child == NULL) continue;
                __builtin_prefetch(child);
                at[j] = child;
                found[j] = WALKING;
            } else if ((flags & 0x2F) == 0x02 && level + 1 == tree->depth) {
                // A leaf (not LEAF2, not a sub-page): the node with exactly this key.
                unsigned lo = 0, hi = n;
                node = NULL;
                while (lo < hi) {
                    unsigned mid = (lo + hi) >> 1;
                    const unsigned char *m = tree_node(p, mid, page_size, &ks);
                    if (m == NULL) break;
                    int c = tree_compare(m + 8, ks, key, key_size);
                    if (c == 0) { node = m; break; }
                    if (c < 0) lo = mid + 1; else hi = mid;
                }
                if (node == NULL) continue;
                uint16_t a, b, node_flags;
                memcpy(&a, node, 2);
                memcpy(&b, node + 2, 2);
                memcpy(&node_flags, node + 4, 2);
                size_t size = (size_t)a | (size_t)b << 16;
                const unsigned char *data = node + 8 + ks;
                if (node_flags == 0x01) {  // F_BIGDATA: the value fills overflow pages
                    uint64_t overflow;
                    memcpy(&overflow, data, 8);
                    const unsigned char *op = tree_page(tree, overflow);
                    if (op == NULL) continue;
                    data = op + 16;
                } else if (node_flags != 0 || (size_t)(data - p) + size > page_size) {
                    continue;
                }
                if ((uintptr_t)data + size > tree->map_end) continue;
                // The caller reads the value next: its first lines are on their way.
                __builtin_prefetch(data);
                __builtin_prefetch(data + 64);
                __builtin_prefetch(data + 128);
                __builtin_prefetch(data + 192);
                values[j].mv_data = (void *)data;
                values[j].mv_size = size;
                found[j] = 1;
            }
        }
    }
    for (size_t j = 0; j < count; j++) if (found[j] == WALKING) found[j] = 0;
    return 0;
}

int tessera_lmdb_tree_of(void *txn, const void *name, size_t name_size, unsigned long map_base,
                         unsigned long map_end, unsigned int page_size, tessera_lmdb_tree *tree) {
    if (map_base == 0 || map_end <= map_base || page_size < 512 || (page_size & (page_size - 1)) != 0) return MDB_NOTFOUND;
    MDB_val k = { name_size, (void *)name }, v;
    int rc = tessera_mdb_get(txn, 1 /* MAIN_DBI: the table of tables */, &k, &v);
    if (rc != 0) return rc;
    // The table's record (LMDB 0.9's MDB_db): pad, flags (2 at 4), depth (2 at 6), page and
    // entry counts, root page (8 at 40). Only plain tables (no flags: default key order).
    if (v.mv_size != 48) return MDB_INCOMPATIBLE;
    uint16_t flags, depth;
    uint64_t root;
    memcpy(&flags, (const char *)v.mv_data + 4, 2);
    memcpy(&depth, (const char *)v.mv_data + 6, 2);
    memcpy(&root, (const char *)v.mv_data + 40, 8);
    if (flags != 0 || depth == 0 || depth > 32 || root == ~(uint64_t)0) return MDB_INCOMPATIBLE;
    tree->map_base = map_base;
    tree->map_end = map_end;
    tree->root = root;
    tree->page_size = page_size;
    tree->depth = depth;
    return 0;
}

int tessera_mdb_get_many(const tessera_lmdb_tree *tree, size_t count, const void *keys, void *values,
                         unsigned char *found) {
    if (count > TESSERA_LMDB_GET_MANY_MAX) count = TESSERA_LMDB_GET_MANY_MAX;
    GUARDED(get_many(tree, count, (const MDB_val *)keys, (MDB_val *)values, found));
}

// A branch page's structure: its page number, the branch flag, free-space bounds, every node
// inside the page with a child page inside the file (LMDB copies a branch it changes using
// these bounds, and frees the page number the header carries).
static int branch_is_valid(const unsigned char *page, uint64_t number, const tessera_lmdb_tree *tree) {
    uint64_t pgno;
    uint16_t flags, lower, upper;
    page_header(page, &pgno, &flags, &lower, &upper);
    const unsigned page_size = tree->page_size;
    if (pgno != number || (flags & 0x2F) != 0x01) return 0;
    if (lower < 16 + 2 || lower > upper || upper > page_size) return 0;
    unsigned count = (unsigned)(lower - 16) / 2;
    for (unsigned i = 0; i < count; i++) {
        uint16_t offset, key_size;
        memcpy(&offset, page + 16 + 2 * i, 2);
        if (offset < upper || (unsigned)offset + 8 > page_size) return 0;
        memcpy(&key_size, page + offset + 6, 2);
        if ((unsigned)offset + 8 + key_size > page_size) return 0;
        uint16_t a, b, c;
        memcpy(&a, page + offset, 2);
        memcpy(&b, page + offset + 2, 2);
        memcpy(&c, page + offset + 4, 2);
        uint64_t child = (uint64_t)a | (uint64_t)b << 16 | (uint64_t)c << 32;
        if (child < 2 || tree_page(tree, child) == NULL) return 0;
    }
    return 1;
}

// Walks the committed tree to the leaf of `key`, checking every page on the way that is not
// marked in `checked` (a bit per page number; NULL: check all) and marking it.
static int check_path(const tessera_lmdb_tree *tree, const MDB_val *key, unsigned char *checked, size_t checked_pages) {
    uint64_t number = tree->root;
    for (unsigned level = 0; level < tree->depth; level++) {
        const unsigned char *p = tree_page(tree, number);
        if (p == NULL) return TESSERA_LMDB_DAMAGED_PAGE;
        int known = checked != NULL && number < checked_pages && (checked[number >> 3] >> (number & 7)) & 1;
        if (level + 1 == tree->depth) {
            if (!known && !leaf_is_valid(p, number, tree->page_size, 0)) return TESSERA_LMDB_DAMAGED_PAGE;
            if (checked != NULL && number < checked_pages) checked[number >> 3] |= (unsigned char)(1 << (number & 7));
            return 0;
        }
        if (!known) {
            if (!branch_is_valid(p, number, tree)) return TESSERA_LMDB_DAMAGED_PAGE;
            if (checked != NULL && number < checked_pages) checked[number >> 3] |= (unsigned char)(1 << (number & 7));
        }
        uint16_t lower, ks;
        memcpy(&lower, p + 12, 2);
        unsigned n = (unsigned)(lower - 16) >> 1, lo = 1, hi = n;
        while (lo < hi) {
            unsigned mid = (lo + hi) >> 1;
            const unsigned char *node = tree_node(p, mid, tree->page_size, &ks);
            if (tree_compare(node + 8, ks, key->mv_data, key->mv_size) <= 0) lo = mid + 1; else hi = mid;
        }
        const unsigned char *node = tree_node(p, lo - 1, tree->page_size, &ks);
        uint16_t a, b, c;
        memcpy(&a, node, 2);
        memcpy(&b, node + 2, 2);
        memcpy(&c, node + 4, 2);
        number = (uint64_t)a | (uint64_t)b << 16 | (uint64_t)c << 32;
    }
    return TESSERA_LMDB_DAMAGED_PAGE;  // deeper than the table's record says
}

// Cuts of a committed tree into runs of about the same number of pages, from its top levels:
// the subtrees of one level are about the same size (a B-tree is balanced, every page at least
// half full), so the lower bounds of every (n / wanted)-th subtree of the highest level with
// at least `wanted` of them cut the table into `wanted` runs, reading only the pages above it.
// Two levels at a time live in the caller's scratch (halves of `capacity` nodes each); a level
// that would not fit is not descended into.
static int cut_keys(const tessera_lmdb_tree *tree, unsigned wanted, MDB_val *cuts, unsigned *count,
                    tessera_lmdb_cut_node *scratch, size_t capacity) {
    *count = 0;
    if (wanted < 2 || tree->depth < 2 || capacity < 2) return 0;
    const unsigned page_size = tree->page_size;
    const size_t half = capacity / 2;
    tessera_lmdb_cut_node *level = scratch, *next = scratch + half;
    size_t n = 1;
    level[0] = (tessera_lmdb_cut_node){ tree->root, NULL, 0 };
    // Down through the branch levels while the current one has fewer than `wanted` subtrees.
    for (unsigned depth = 1; depth < tree->depth && n < wanted; depth++) {
        size_t total = 0;
        for (size_t i = 0; i < n; i++) {
            const unsigned char *p = tree_page(tree, level[i].page);
            if (p == NULL || !branch_is_valid(p, level[i].page, tree)) return TESSERA_LMDB_DAMAGED_PAGE;
            uint16_t lower;
            memcpy(&lower, p + 12, 2);
            total += (unsigned)(lower - 16) >> 1;
        }
        if (total > half) break;
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const unsigned char *p = tree_page(tree, level[i].page);
            uint16_t lower;
            memcpy(&lower, p + 12, 2);
            unsigned nodes = (unsigned)(lower - 16) >> 1;
            for (unsigned j = 0; j < nodes; j++) {
                uint16_t ks;
                const unsigned char *node = tree_node(p, j, page_size, &ks);
                uint16_t a, b, c;
                memcpy(&a, node, 2);
                memcpy(&b, node + 2, 2);
                memcpy(&c, node + 4, 2);
                // A branch's first node has no key of its own: its subtree starts where the
                // branch does.
                next[m++] = (tessera_lmdb_cut_node){ (uint64_t)a | (uint64_t)b << 16 | (uint64_t)c << 32,
                                                     j == 0 ? level[i].lower : node + 8,
                                                     j == 0 ? level[i].lower_size : ks };
            }
        }
        tessera_lmdb_cut_node *t = level;
        level = next;
        next = t;
        n = m;
    }
    // Every (n / wanted)-th subtree's lower bound, ascending and distinct.
    unsigned made = 0;
    const unsigned pieces = n < wanted ? (unsigned)n : wanted;
    for (unsigned j = 1; j < pieces; j++) {
        const tessera_lmdb_cut_node *at = &level[(size_t)j * n / pieces];
        if (at->lower == NULL || at->lower_size == 0) continue;
        if (made > 0 && tree_compare(cuts[made - 1].mv_data, cuts[made - 1].mv_size, at->lower, at->lower_size) >= 0) continue;
        cuts[made].mv_data = (void *)at->lower;
        cuts[made].mv_size = at->lower_size;
        made++;
    }
    *count = made;
    return 0;
}

int tessera_lmdb_cut_keys(const tessera_lmdb_tree *tree, unsigned wanted, void *cuts, unsigned *count,
                          tessera_lmdb_cut_node *scratch, size_t capacity) {
    *count = 0;
    GUARDED(cut_keys(tree, wanted, (MDB_val *)cuts, count, scratch, capacity));
}

int tessera_lmdb_check_path(const tessera_lmdb_tree *tree, void *key, unsigned char *checked, size_t checked_pages) {
    GUARDED(check_path(tree, (const MDB_val *)key, checked, checked_pages));
}

// ---------------------------------------------------------------------------------------------
// Records appended so that they fill their leaf pages.
//
// An append that does not fit the rest of the last leaf page starts a new page and leaves that
// rest empty: with records of 1–2 KB, two or three to a 4 KB page, a sixth of every page. A
// record may instead be cut where the page ends (the caller stores the rest elsewhere), which
// needs the room left on the page the last append went to. LMDB does not say it; its cursor
// knows (the page stack of LMDB 0.9's MDB_cursor, below, as mdb.c declares it in every 0.9
// release). The layout is trusted only when the cursor agrees with what the public API says
// of it — its transaction and table — and the page it points at is a leaf whose node at the
// cursor's index holds the key just put; otherwise the room is unknown (-1) and nothing is cut
// at a page's end. Only the head's size depends on the room: a wrong room could leave a page
// emptier, never store anything wrongly (LMDB places every node itself).

typedef struct {
    void *mc_next, *mc_backup, *mc_xcursor;
    MDB_txn *mc_txn;
    MDB_dbi mc_dbi;
    void *mc_db, *mc_dbx;
    unsigned char *mc_dbflag;
    unsigned short mc_snum, mc_top;
    unsigned int mc_flags;
    const unsigned char *mc_pg[32];
    unsigned short mc_ki[32];
} lmdb09_cursor;

// Bytes free on the leaf page `cursor` is on, whose current node must have `key`; -1 if unknown.
static long cursor_leaf_room(MDB_cursor *cursor, MDB_txn *txn, MDB_dbi dbi, const MDB_val *key, size_t page_size) {
    const lmdb09_cursor *c = (const lmdb09_cursor *)(const void *)cursor;
    if (c->mc_txn != txn || c->mc_dbi != dbi || c->mc_snum == 0 || c->mc_snum > 32 || c->mc_top + 1 != c->mc_snum)
        return -1;
    const unsigned char *p = c->mc_pg[c->mc_top];
    if (p == NULL) return -1;
    uint64_t pgno;
    uint16_t flags, lower, upper, key_size;
    page_header(p, &pgno, &flags, &lower, &upper);
    if ((flags & 0x02) == 0 || (flags & (0x01 | 0x04 | 0x08 | 0x20 | 0x40)) != 0) return -1;  // a plain leaf
    if (lower < 16 || lower > upper || upper > page_size) return -1;
    unsigned index = c->mc_ki[c->mc_top];
    if (index >= (unsigned)(lower - 16) / 2) return -1;
    const unsigned char *node = tree_node(p, index, (unsigned)page_size, &key_size);
    if (node == NULL || key_size != key->mv_size || memcmp(node + 8, key->mv_data, key_size) != 0) return -1;
    return (long)(upper - lower);
}

// The size of the head of a record of `size` bytes under a key of `key_size` bytes appended
// to a page with `room` bytes free (-1: unknown). See tessera_record_packing.
size_t tessera_record_head(const tessera_record_packing *pk, size_t key_size, size_t size, long room) {
    size_t limit = pk->largest_node - 8 - key_size;
    if (pk->record_limit < limit) limit = pk->record_limit;
    if (limit < pk->smallest_head) limit = pk->smallest_head;
    size_t head = size > limit ? limit : size;
    if (room < 0) return head;
    // LMDB's leaf node: 8 bytes of header, the key, the data, rounded up to even, and its
    // 2-byte offset in the page's table.
    size_t need = ((8 + key_size + head + 1) & ~(size_t)1) + 2;
    if (need <= (size_t)room || (size_t)room < 10 + key_size + pk->least_packed_head) return head;
    size_t fill = (size_t)room - 10 - key_size;
    if ((8 + key_size + fill) & 1) fill -= 1;
    return fill >= pk->least_packed_head && fill < head ? fill : head;
}

static int append_records(MDB_txn *txn, MDB_dbi dbi, const MDB_val *keys, const MDB_val *prefixes,
                          const MDB_val *values, size_t count, const tessera_record_packing *pk, size_t *heads,
                          size_t *appended) {
    MDB_cursor *cursor = NULL;
    int rc = mdb_cursor_open(txn, dbi, &cursor);
    if (rc != 0) return rc;
    MDB_val last_key, last_value;
    long room;
    rc = mdb_cursor_get(cursor, &last_key, &last_value, MDB_LAST);
    if (rc == MDB_NOTFOUND) {
        room = (long)pk->page_size - 16;  // the first put makes an empty leaf
        rc = 0;
    } else {
        room = rc == 0 ? cursor_leaf_room(cursor, txn, dbi, &last_key, pk->page_size) : -1;
    }
    size_t i = 0;
    if (rc == 0) {
        for (; i < count; i++) {
            if (i + 8 < count) __builtin_prefetch(keys[i + 8].mv_data, 0, 3);
            MDB_val k = keys[i];
            size_t prefix = prefixes ? prefixes[i].mv_size : 0;
            size_t size = prefix + values[i].mv_size;
            const unsigned char *first = prefix ? prefixes[i].mv_data : values[i].mv_data;
            // A record already cut (its head, moved here with its tail kept elsewhere) stays whole.
            size_t head = size > 0 && (first[0] & pk->continued) == 0 ? tessera_record_head(pk, k.mv_size, size, room) : size;
            MDB_val d = {head, NULL};
            rc = mdb_cursor_put(cursor, &k, &d, MDB_APPEND | MDB_RESERVE);
            if (rc != 0) break;
            unsigned char *out = d.mv_data;
            size_t from_prefix = prefix < head ? prefix : head;
            if (from_prefix) memcpy(out, prefixes[i].mv_data, from_prefix);
            if (head > from_prefix) memcpy(out + from_prefix, values[i].mv_data, head - from_prefix);
            if (head < size) out[0] |= pk->continued;
            heads[i] = head;
            room = cursor_leaf_room(cursor, txn, dbi, &k, pk->page_size);
        }
    }
    mdb_cursor_close(cursor);
    *appended = i;
    return rc;
}

int tessera_mdb_append_records(void *txn, unsigned int dbi, const void *keys, const void *prefixes, const void *values,
                               size_t count, const tessera_record_packing *packing, size_t *heads, size_t *appended) {
    *appended = 0;
    GUARDED(append_records((MDB_txn *)txn, dbi, (const MDB_val *)keys, (const MDB_val *)prefixes,
                           (const MDB_val *)values, count, packing, heads, appended));
}

// ---------------------------------------------------------------------------------------------
// Puts and deletes in key order through one cursor.
//
// mdb_put and mdb_del start every write with a descent from the root; a cursor that stays on
// the leaf of the last write finds the next key there when it is on the same page (LMDB's
// mdb_cursor_set compares it with the page's first and last keys before it searches). Sorted
// writes into an index (a batch's held-back puts, `DeferredPuts`) land several to a page.
// Before each write the leaf the cursor stands on is checked as `tessera_lmdb_check_leaf`
// checks it (the page of the key the cursor found): a page still the file's own, not yet
// copied by this transaction, must be a sound leaf.

static int write_sorted(MDB_txn *txn, MDB_dbi dbi, const MDB_val *keys, const MDB_val *values,
                        const unsigned char *deletes, size_t count, unsigned long map_base, unsigned long map_end,
                        unsigned int page_size, size_t *done) {
    MDB_cursor *cursor = NULL;
    int rc = mdb_cursor_open(txn, dbi, &cursor);
    if (rc != 0) return rc;
    size_t i = 0;
    for (; i < count; i++) {
        if (i + 8 < count) __builtin_prefetch(keys[i + 8].mv_data, 0, 3);
        MDB_val k = keys[i], found_key = keys[i], found_value;
        int deleting = deletes != NULL && deletes[i];
        // The first key at or after k: its page is where k is or would go (the page checked).
        rc = mdb_cursor_get(cursor, &found_key, &found_value, MDB_SET_RANGE);
        int positioned = rc == 0;
        int exact = positioned && found_key.mv_size == k.mv_size &&
                    (k.mv_size == 0 || memcmp(found_key.mv_data, k.mv_data, k.mv_size) == 0);
        if (rc == MDB_NOTFOUND) {
            rc = mdb_cursor_get(cursor, &found_key, &found_value, MDB_LAST);  // after the last key
            positioned = rc == 0;
            if (rc == MDB_NOTFOUND) rc = 0;  // an empty table: no page to check
        }
        if (rc != 0) break;
        // As tessera_lmdb_check_leaf: the page of the key found, when it is still the file's.
        if (positioned && map_base != 0) {
            rc = check_page_of(found_key.mv_data, map_base, map_end, page_size, 0);
            if (rc != 0) break;
        }
        if (deleting) {
            if (!exact) continue;  // absent: nothing to delete
            rc = mdb_cursor_del(cursor, 0);
        } else {
            MDB_val v = values[i];
            rc = mdb_cursor_put(cursor, &k, &v, 0);
        }
        if (rc != 0) break;
    }
    mdb_cursor_close(cursor);
    *done = i;
    return rc;
}

int tessera_mdb_write_sorted(void *txn, unsigned int dbi, const void *keys, const void *values,
                             const unsigned char *deletes, size_t count, unsigned long map_base, unsigned long map_end,
                             unsigned int page_size, size_t *done) {
    *done = 0;
    GUARDED(write_sorted((MDB_txn *)txn, dbi, (const MDB_val *)keys, (const MDB_val *)values, deletes, count, map_base,
                         map_end, page_size, done));
}

// ---------------------------------------------------------------------------------------------
// Writeback started during a large commit.
//
// LMDB's commit writes every dirty page (`writev`, `pwrite`: copies into the page cache), then
// waits for them to reach the disk (`fdatasync`). The kernel starts writing dirty pages back
// on its own only past a share of the memory (10 % by default): for a commit of a few hundred
// megabytes the disk starts only at `fdatasync`, after every page has been copied. A helper
// thread asking for writeback every millisecond while the commit runs (`sync_file_range` with
// SYNC_FILE_RANGE_WRITE: start writing what is dirty now, do not wait) lets the disk work
// while the commit is still copying; the commit's own `fdatasync` then waits for less. It
// changes nothing about what is durable when: the commit still ends with `fdatasync`.

struct tessera_writeback {
    int fd;
    atomic_int stop;
    pthread_t thread;
};

static void *writeback_loop(void *argument) {
    struct tessera_writeback *w = argument;
    while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
#ifdef __linux__
        (void)sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

void *tessera_writeback_start(int fd) {
#ifdef __linux__
    struct tessera_writeback *w = malloc(sizeof *w);
    if (w == NULL) return NULL;
    w->fd = fd;
    atomic_init(&w->stop, 0);
    if (pthread_create(&w->thread, NULL, writeback_loop, w) != 0) {
        free(w);
        return NULL;
    }
    return w;
#else
    (void)fd;
    return NULL;
#endif
}

void tessera_writeback_stop(void *handle) {
    struct tessera_writeback *w = handle;
    if (w == NULL) return;
    atomic_store_explicit(&w->stop, 1, memory_order_relaxed);
    pthread_join(w->thread, NULL);
    free(w);
}
