/* solvers/sparse_blocks.h - private to src/solvers: dual blocks that are mostly zero, stored
 * sparsely (issue 12: 1-vs-All with many labels, where an example's dual variables α_ik are 0 for
 * every label it is far from). Example i's block is a list of (k, value) entries at ascending k,
 * the zero ones left out. The lists live in one pool; a list keeps its place while it fits the
 * room it was given, and moves to the end of the pool with twice its length when it outgrows it.
 * When the end is reached the lists are compacted in place (in pool order, holes closed, no room
 * to spare), and the pool grows by half (realloc, the one allocation after set-up) only when the
 * live entries then fill more than two thirds of it: so allocations follow the growth of the
 * non-zeros, not the visits, the pool stays within about 2.25 times its live entries, and no
 * block is freed and allocated again (which would move glibc's mmap threshold and leave the
 * memory in the heap). Not here: what the values mean (sdca.c). */
#ifndef STRUX_SPARSE_BLOCKS_H
#define STRUX_SPARSE_BLOCKS_H

#include "strux/core.h"

#include <stdint.h>

/* A list's place in the pool (the compaction's scratch). */
typedef struct strux_sparse_place {
    int64_t start, i;
} strux_sparse_place;

typedef struct strux_sparse_blocks {
    int64_t n;                 /* examples */
    int64_t *start;            /* per example: its first entry in the pool */
    int32_t *len;              /* per example: its entries */
    int32_t *cap;              /* per example: the room at start */
    int32_t *idx;              /* pool: an entry's k */
    double *val;               /* pool: its value (never 0) */
    int64_t used;              /* pool entries handed out, holes included */
    int64_t size;              /* pool entries allocated */
    int64_t live;              /* entries in the lists */
    strux_sparse_place *place; /* n: the lists by pool position (compaction) */
} strux_sparse_blocks;

/* Empty lists for n examples, a pool of first_size entries. STRUX_ERR_NOMEM. */
strux_status strux_sparse_blocks_init(strux_sparse_blocks *sb, int64_t n, int64_t first_size);
void strux_sparse_blocks_free(strux_sparse_blocks *sb);
/* Every list empty. */
void strux_sparse_blocks_clear(strux_sparse_blocks *sb);
/* Example i's list ← the n entries (idx ascending, val non-zero), which may be another list's
 * scratch but not the pool; max_room bounds the room a moved list gets (its block's size).
 * STRUX_ERR_NOMEM when the pool cannot grow. */
strux_status strux_sparse_blocks_set(strux_sparse_blocks *sb, int64_t i, int32_t n,
                                     const int32_t *idx, const double *val, int32_t max_room);
/* Bytes held: the pool as allocated and the per-example arrays. */
size_t strux_sparse_blocks_bytes(const strux_sparse_blocks *sb);
/* Checkpoint: the lists of examples [i0, i1) / read back (STRUX_ERR_INPUT naming a list that does
 * not fit max_room or whose entries do not ascend). */
strux_status strux_sparse_blocks_save(const strux_sparse_blocks *sb, int64_t i0, int64_t i1,
                                      strux_blob *b);
strux_status strux_sparse_blocks_load(strux_sparse_blocks *sb, int64_t i0, int64_t i1,
                                      int32_t max_room, strux_blob *b);

#endif
