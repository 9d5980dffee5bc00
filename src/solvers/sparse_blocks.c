/* solvers/sparse_blocks.c - sparse dual blocks in one pool (sparse_blocks.h). */
#include "sparse_blocks.h"

#include <stdlib.h>
#include <string.h>

#define ROOM_MIN 4 /* entries a list gets at least when it moves */

strux_status strux_sparse_blocks_init(strux_sparse_blocks *sb, int64_t n, int64_t first_size)
{
    *sb = (strux_sparse_blocks){.n = n, .size = first_size > 0 ? first_size : ROOM_MIN};
    STRUX_TRY(strux_alloc_array(&sb->start, (size_t)n + 1, sizeof *sb->start));
    STRUX_TRY(strux_alloc_array(&sb->len, (size_t)n + 1, sizeof *sb->len));
    STRUX_TRY(strux_alloc_array(&sb->cap, (size_t)n + 1, sizeof *sb->cap));
    STRUX_TRY(strux_alloc_array(&sb->place, (size_t)n + 1, sizeof *sb->place));
    STRUX_TRY(strux_alloc_array(&sb->idx, (size_t)sb->size, sizeof *sb->idx));
    STRUX_TRY(strux_alloc_array(&sb->val, (size_t)sb->size, sizeof *sb->val));
    return STRUX_OK;
}

void strux_sparse_blocks_free(strux_sparse_blocks *sb)
{
    strux_free(&sb->start);
    strux_free(&sb->len);
    strux_free(&sb->cap);
    strux_free(&sb->place);
    strux_free(&sb->idx);
    strux_free(&sb->val);
}

void strux_sparse_blocks_clear(strux_sparse_blocks *sb)
{
    memset(sb->len, 0, (size_t)sb->n * sizeof *sb->len);
    memset(sb->cap, 0, (size_t)sb->n * sizeof *sb->cap);
    sb->used = sb->live = 0;
}

static int by_start(const void *a, const void *b)
{
    const strux_sparse_place *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Every list moved down to close the holes, in pool order (so no list overwrites one not yet
 * moved); each keeps room for its entries only. */
static void compact(strux_sparse_blocks *sb)
{
    int64_t n_placed = 0, at = 0;
    for (int64_t i = 0; i < sb->n; i++)
        if (sb->cap[i] > 0) sb->place[n_placed++] = (strux_sparse_place){sb->start[i], i};
    qsort(sb->place, (size_t)n_placed, sizeof *sb->place, by_start);
    for (int64_t p = 0; p < n_placed; p++) {
        int64_t i = sb->place[p].i;
        memmove(sb->idx + at, sb->idx + sb->start[i], (size_t)sb->len[i] * sizeof *sb->idx);
        memmove(sb->val + at, sb->val + sb->start[i], (size_t)sb->len[i] * sizeof *sb->val);
        sb->start[i] = at;
        sb->cap[i] = sb->len[i];
        at += sb->len[i];
    }
    sb->used = at;
}

/* Room for one more list of room entries at the end: compact, and grow by half when the live
 * entries fill more than two thirds of the pool. */
static strux_status make_room(strux_sparse_blocks *sb, int64_t room)
{
    compact(sb);
    if (sb->used + room <= sb->size && 3 * (sb->used + room) <= 2 * sb->size) return STRUX_OK;
    int64_t size = sb->size + sb->size / 2;
    if (size < sb->used + 2 * room) size = sb->used + 2 * room;
    STRUX_TRY(strux_realloc_array(&sb->idx, (size_t)size, sizeof *sb->idx));
    STRUX_TRY(strux_realloc_array(&sb->val, (size_t)size, sizeof *sb->val));
    sb->size = size;
    return STRUX_OK;
}

strux_status strux_sparse_blocks_set(strux_sparse_blocks *sb, int64_t i, int32_t n,
                                     const int32_t *idx, const double *val, int32_t max_room)
{
    if (n > sb->cap[i]) { /* a new place at the end, twice its length */
        int32_t room = n > max_room / 2 ? max_room : 2 * n;
        if (room < ROOM_MIN) room = n > ROOM_MIN ? n : ROOM_MIN;
        if (sb->used + room > sb->size) {
            sb->live -= sb->len[i]; /* its old entries are not kept */
            sb->len[i] = sb->cap[i] = 0;
            STRUX_TRY(make_room(sb, room));
        }
        sb->start[i] = sb->used;
        sb->cap[i] = room;
        sb->used += room;
    }
    memcpy(sb->idx + sb->start[i], idx, (size_t)n * sizeof *idx);
    memcpy(sb->val + sb->start[i], val, (size_t)n * sizeof *val);
    sb->live += n - sb->len[i];
    sb->len[i] = n;
    return STRUX_OK;
}

size_t strux_sparse_blocks_bytes(const strux_sparse_blocks *sb)
{
    return (size_t)sb->size * (sizeof *sb->idx + sizeof *sb->val) +
           (size_t)sb->n *
               (sizeof *sb->start + sizeof *sb->len + sizeof *sb->cap + sizeof *sb->place);
}

strux_status strux_sparse_blocks_save(const strux_sparse_blocks *sb, int64_t i0, int64_t i1,
                                      strux_blob *b)
{
    for (int64_t i = i0; i < i1; i++) {
        STRUX_TRY(strux_blob_put(b, &sb->len[i], sizeof sb->len[i]));
        STRUX_TRY(strux_blob_put(b, sb->idx + sb->start[i], (size_t)sb->len[i] * sizeof *sb->idx));
        STRUX_TRY(strux_blob_put(b, sb->val + sb->start[i], (size_t)sb->len[i] * sizeof *sb->val));
    }
    return STRUX_OK;
}

strux_status strux_sparse_blocks_load(strux_sparse_blocks *sb, int64_t i0, int64_t i1,
                                      int32_t max_room, strux_blob *b)
{
    int32_t *idx = NULL;
    double *val = NULL;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_alloc_array(&idx, (size_t)max_room + 1, sizeof *idx), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&val, (size_t)max_room + 1, sizeof *val), done);
    for (int64_t i = i0; i < i1; i++) {
        int32_t n;
        STRUX_TRY_GOTO(st, strux_blob_get(b, &n, sizeof n, "sparse dual block length"), done);
        STRUX_CHECK_GOTO(st, n >= 0 && n <= max_room, STRUX_ERR_INPUT, done,
                         "sparse dual block of local example %lld holds %d entries, its block %d",
                         (long long)i, (int)n, (int)max_room);
        STRUX_TRY_GOTO(st, strux_blob_get(b, idx, (size_t)n * sizeof *idx, "sparse dual block"),
                       done);
        STRUX_TRY_GOTO(st, strux_blob_get(b, val, (size_t)n * sizeof *val, "sparse dual block"),
                       done);
        for (int32_t q = 0; q < n; q++)
            STRUX_CHECK_GOTO(st,
                             idx[q] >= 0 && idx[q] < max_room && (q == 0 || idx[q] > idx[q - 1]),
                             STRUX_ERR_INPUT, done,
                             "sparse dual block of local example %lld: entry %d at %d is out of "
                             "order or range",
                             (long long)i, (int)q, (int)idx[q]);
        STRUX_TRY_GOTO(st, strux_sparse_blocks_set(sb, i, n, idx, val, max_room), done);
    }
done:
    strux_free(&idx);
    strux_free(&val);
    return st;
}
