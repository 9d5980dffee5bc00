/* solvers/sparse_blocks.c - sparse dual blocks in one pool (sparse_blocks.h). */
#include "sparse_blocks.h"

#include <string.h>

#define ROOM_MIN 4 /* entries a list gets at least when it moves */

strux_status strux_sparse_blocks_init(strux_sparse_blocks *sb, int64_t n, int64_t first_size)
{
    *sb = (strux_sparse_blocks){.n = n, .size = first_size > 0 ? first_size : ROOM_MIN};
    STRUX_TRY(strux_alloc_array(&sb->start, (size_t)n + 1, sizeof *sb->start));
    STRUX_TRY(strux_alloc_array(&sb->len, (size_t)n + 1, sizeof *sb->len));
    STRUX_TRY(strux_alloc_array(&sb->cap, (size_t)n + 1, sizeof *sb->cap));
    STRUX_TRY(strux_alloc_array(&sb->idx, (size_t)sb->size, sizeof *sb->idx));
    STRUX_TRY(strux_alloc_array(&sb->val, (size_t)sb->size, sizeof *sb->val));
    return STRUX_OK;
}

void strux_sparse_blocks_free(strux_sparse_blocks *sb)
{
    strux_free(&sb->start);
    strux_free(&sb->len);
    strux_free(&sb->cap);
    strux_free(&sb->idx);
    strux_free(&sb->val);
}

void strux_sparse_blocks_clear(strux_sparse_blocks *sb)
{
    memset(sb->len, 0, (size_t)sb->n * sizeof *sb->len);
    memset(sb->cap, 0, (size_t)sb->n * sizeof *sb->cap);
    sb->used = sb->live = 0;
}

/* Every list copied without holes, in example order, into a pool of size entries (≥ live). */
static strux_status repack(strux_sparse_blocks *sb, int64_t size)
{
    int32_t *idx = NULL;
    double *val = NULL;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_alloc_array(&idx, (size_t)size, sizeof *idx), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&val, (size_t)size, sizeof *val), fail);
    int64_t at = 0;
    for (int64_t i = 0; i < sb->n; i++) {
        memcpy(idx + at, sb->idx + sb->start[i], (size_t)sb->len[i] * sizeof *idx);
        memcpy(val + at, sb->val + sb->start[i], (size_t)sb->len[i] * sizeof *val);
        sb->start[i] = at;
        sb->cap[i] = sb->len[i];
        at += sb->len[i];
    }
    strux_free(&sb->idx);
    strux_free(&sb->val);
    sb->idx = idx;
    sb->val = val;
    sb->used = at;
    sb->size = size;
    return STRUX_OK;
fail:
    strux_free(&idx);
    return st;
}

strux_status strux_sparse_blocks_set(strux_sparse_blocks *sb, int64_t i, int32_t n,
                                     const int32_t *idx, const double *val, int32_t max_room)
{
    if (n > sb->cap[i]) { /* a new place at the end, twice its length */
        int32_t room = n > max_room / 2 ? max_room : 2 * n;
        if (room < ROOM_MIN) room = n > ROOM_MIN ? n : ROOM_MIN;
        if (sb->used + room > sb->size) {
            sb->live -= sb->len[i]; /* its old entries are not copied */
            sb->len[i] = 0;
            STRUX_TRY(repack(sb, 2 * (sb->live + room)));
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
           (size_t)sb->n * (sizeof *sb->start + sizeof *sb->len + sizeof *sb->cap);
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
            STRUX_CHECK_GOTO(st, idx[q] >= 0 && idx[q] < max_room && (q == 0 || idx[q] > idx[q - 1]),
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
