// Calls into LMDB that survive damaged pages.
//
// LMDB 0.9 trusts the pages of its file: a damaged page makes it read through a wild pointer
// (SIGSEGV), past the end of the file (SIGBUS), or fail one of its assertions (abort). Each
// function here makes one LMDB call that reads pages; if that call faults, or LMDB's assert
// callback runs, the call returns TESSERA_LMDB_FAULT instead of the process dying. The
// transaction is then in an unknown state: the caller aborts it and reports damage.
//
// Only faults raised while this thread is inside one of these calls are caught; any other
// SIGSEGV or SIGBUS goes to the handler that was installed before (or the default action).
#ifndef CLMDBGUARD_H
#define CLMDBGUARD_H

#include <stddef.h>

// The parameters are LMDB's (MDB_env *, MDB_txn *, MDB_cursor *, MDB_val *, MDB_stat *,
// MDB_cursor **) passed as untyped pointers: this header does not include lmdb.h, whose types
// the CLMDB module owns.

/// The code a guarded call returns when LMDB faulted inside it.
#define TESSERA_LMDB_FAULT (-30600)

/// Installs the fault handlers (once per process; later calls do nothing) and makes `env`'s
/// assertion failures return from the guarded call instead of aborting.
void tessera_lmdb_guard_env(void *env);

/// The signal of the last fault caught on this thread (SIGSEGV, SIGBUS), or 0 for an
/// assertion of LMDB.
int tessera_lmdb_last_fault_signal(void);
/// A description of the last fault caught on this thread.
const char *tessera_lmdb_last_fault_message(void);

/// The address where LMDB mapped the data file, derived from `pointer`, an address LMDB
/// returned inside page P of the map (the start of P minus P × `page_size`; P is read from
/// the page's header), and accepted only if LMDB's two meta pages are found at that address
/// (their magic and page numbers). 0 when it cannot be derived (a damaged page).
unsigned long tessera_lmdb_map_base(const void *pointer, unsigned int page_size);

/// The code `tessera_lmdb_check_leaf` returns for a damaged page.
#define TESSERA_LMDB_DAMAGED_PAGE (-30602)

/// Before a write transaction changes `key` in table `dbi`: finds the leaf page where the
/// key is or would go and, if that page is still the file's own (inside [map_base, map_end),
/// not yet copied by this transaction), checks its structure — its page number, that it is a
/// leaf, its free-space bounds, and that every node lies inside the page — so that LMDB never
/// modifies a damaged page (it would write past its copy of the page, into the heap). Returns
/// 0, TESSERA_LMDB_DAMAGED_PAGE, TESSERA_LMDB_FAULT or an LMDB error code.
int tessera_lmdb_check_leaf(void *txn, unsigned int dbi, void *key, unsigned long map_base, unsigned long map_end,
                            unsigned int page_size);

int tessera_mdb_cursor_get(void *cursor, void *key, void *data, unsigned int op);
int tessera_mdb_get(void *txn, unsigned int dbi, void *key, void *data);
int tessera_mdb_put(void *txn, unsigned int dbi, void *key, void *data, unsigned int flags);
int tessera_mdb_del(void *txn, unsigned int dbi, void *key, void *data);
int tessera_mdb_cursor_del(void *cursor, unsigned int flags);
int tessera_mdb_drop(void *txn, unsigned int dbi, int del);
int tessera_mdb_stat(void *txn, unsigned int dbi, void *stat);
int tessera_mdb_dbi_open(void *txn, const char *name, unsigned int flags, unsigned int *dbi);
int tessera_mdb_cursor_open(void *txn, unsigned int dbi, void *cursor_out);
int tessera_mdb_txn_commit(void *txn);

/// Appends entries in key order through one cursor (`mdb_cursor_put` with MDB_APPEND): entry
/// i is keys[i] → values[i] (MDB_val arrays of `count`). Stops at the first entry that is not
/// after the table's last key, or at an error: `*appended` is then the number appended before
/// it, and the result is MDB_KEYEXIST (put that entry another way, then go on after it) or the
/// error. One guarded call for the whole batch (the guard's cost is paid once, not per entry).
int tessera_mdb_append_batch(void *txn, unsigned int dbi, const void *keys, const void *values, size_t count,
                             size_t *appended);

/// How `tessera_mdb_append_records` cuts records (the caller's record format: Tessera's
/// RecordPieces.swift). A record's head is all of it when it fits a leaf node, else the largest
/// node (`largest_node` − 8 − the key's size, at most `record_limit`, at least `smallest_head`);
/// and when that head does not fit the rest of the page the append goes to, the head is cut to
/// fill that rest instead — if it then keeps at least `least_packed_head` bytes. A head shorter
/// than its record gets `continued` set in its first byte; a record whose first byte already
/// has it (a head whose tail is stored) is appended whole.
typedef struct {
    size_t largest_node;
    size_t record_limit;
    size_t smallest_head;
    size_t least_packed_head;
    size_t page_size;
    unsigned char continued;
} tessera_record_packing;

/// The number of bytes of a record of `size` bytes under a key of `key_size` bytes that stay
/// under the key, cut as `packing` says, when appended to a leaf page with `room` bytes free
/// (-1: not appended, or the room is unknown: only the largest-node limit applies). `size` when
/// the record stays in one piece.
size_t tessera_record_head(const tessera_record_packing *packing, size_t key_size, size_t size, long room);

/// Appends records in key order through one cursor, cut as `packing` says: record i is
/// prefixes[i] ‖ values[i] (`prefixes` may be NULL: no prefixes) under keys[i] (MDB_val arrays
/// of `count`); heads[i] is the number of its bytes stored (the rest is the caller's to store).
/// Stops like `tessera_mdb_append_batch`: `*appended` entries are written, and the result is 0,
/// MDB_KEYEXIST (entry `*appended` is not after the table's last key) or an error.
int tessera_mdb_append_records(void *txn, unsigned int dbi, const void *keys, const void *prefixes, const void *values,
                               size_t count, const tessera_record_packing *packing, size_t *heads, size_t *appended);

/// Writes entries in ascending key order through one cursor: entry i puts keys[i] → values[i],
/// or deletes keys[i] when deletes[i] is set (`deletes` may be NULL; a key that is absent is
/// nothing to delete). Before each write, the leaf page the cursor finds for the key is checked
/// as `tessera_lmdb_check_leaf` checks it (map_base 0: no check). `*done` is the number of
/// entries written; the result is 0, TESSERA_LMDB_DAMAGED_PAGE (entry `*done` was not written)
/// or an error. One guarded call for the whole run.
int tessera_mdb_write_sorted(void *txn, unsigned int dbi, const void *keys, const void *values,
                             const unsigned char *deletes, size_t count, unsigned long map_base, unsigned long map_end,
                             unsigned int page_size, size_t *done);

/// The most keys `tessera_mdb_get_many` reads in one call.
#define TESSERA_LMDB_GET_MANY_MAX 64

/// Where one table's B-tree lies in a read-only transaction's view of the map: its root page
/// and depth, the map's address and the end of the file in it (`tessera_lmdb_tree_of`).
typedef struct {
    unsigned long map_base;
    unsigned long map_end;
    unsigned long long root;
    unsigned int page_size;
    unsigned int depth;
} tessera_lmdb_tree;

/// Reads the record of table `name` (its root page and depth) as the read-only transaction
/// `txn` sees it, from the table of tables. 0 on success; MDB_NOTFOUND if there is no such
/// table or the map is unknown, MDB_INCOMPATIBLE for an empty table or one with flags (a key
/// order of its own), or the error of the read.
int tessera_lmdb_tree_of(void *txn, const void *name, size_t name_size, unsigned long map_base,
                         unsigned long map_end, unsigned int page_size, tessera_lmdb_tree *tree);

/// Looks up `count` keys (an MDB_val array, at most TESSERA_LMDB_GET_MANY_MAX) in `tree`,
/// walking them down the tree together so that their page reads overlap (see guard.c).
/// found[i] is 1 with values[i] set when key i was found; 0 when this walk did not find it —
/// absent, or a page that does not look as expected — and the caller then asks LMDB (mdb_get),
/// which is the judge. Returns 0, or TESSERA_LMDB_FAULT if reading a page faulted. Only for a
/// read-only transaction, whose pages stay as they are until it ends.
int tessera_mdb_get_many(const tessera_lmdb_tree *tree, size_t count, const void *keys, void *values,
                         unsigned char *found);

/// A subtree met by `tessera_lmdb_cut_keys`: its page and its first key as its parent has it.
typedef struct {
    unsigned long long page;
    const unsigned char *lower;
    unsigned short lower_size;
} tessera_lmdb_cut_node;

/// Keys that cut `tree` (a committed tree, from `tessera_lmdb_tree_of`) into at most `wanted`
/// runs of about the same number of pages, ascending: the first keys of every (n / wanted)-th
/// of the n subtrees of the highest level that has at least `wanted` (a lower level if none
/// has and it fits in half of `scratch`, `capacity` nodes). Reads only the branch pages above
/// that level, each checked as `tessera_lmdb_check_path` checks one. `cuts` (an MDB_val array
/// of `wanted - 1`) points into the map: valid while the transaction runs. Returns 0 with
/// `*count` cuts (none for a table of one page), TESSERA_LMDB_DAMAGED_PAGE or
/// TESSERA_LMDB_FAULT.
int tessera_lmdb_cut_keys(const tessera_lmdb_tree *tree, unsigned wanted, void *cuts, unsigned *count,
                          tessera_lmdb_cut_node *scratch, size_t capacity);

/// Before a write transaction changes `key` in a table: walks the table's committed B-tree
/// (`tree`, from `tessera_lmdb_tree_of` in that transaction: the record of the last commit)
/// from the root to the key's leaf and checks every page on the way — page number, kind,
/// free-space bounds, every node inside its page and, in a branch, every child inside the
/// file. LMDB copies each of those pages when it writes (with the bounds they carry) and
/// frees the page number their header carries, trusting both; `tessera_lmdb_check_leaf` finds
/// the leaf through LMDB's own descent, which a damaged branch or leaf misleads. Returns 0,
/// TESSERA_LMDB_DAMAGED_PAGE or TESSERA_LMDB_FAULT. `checked` (a bit per page number below
/// `checked_pages`, or NULL) marks pages already checked in the transaction: they are not
/// checked again (committed pages do not change while it runs).
int tessera_lmdb_check_path(const tessera_lmdb_tree *tree, void *key, unsigned char *checked, size_t checked_pages);

/// Starts a thread that asks the kernel to begin writing back the dirty pages of file `fd`
/// every millisecond (Linux `sync_file_range`, no waiting) until `tessera_writeback_stop`:
/// during a large commit, so that the disk works while the commit copies pages and its
/// `fdatasync` waits for less. NULL when no thread could be started (or not on Linux).
void *tessera_writeback_start(int fd);
/// Stops and joins the thread of `tessera_writeback_start` (NULL: nothing).
void tessera_writeback_stop(void *handle);

#endif
