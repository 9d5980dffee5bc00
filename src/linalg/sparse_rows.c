/* linalg/sparse_rows.c - sparse matrices of doubles held by their touched rows (strux_sparse_rows
 * in strux/linalg.h): the (index, value) lists of the model changes that sparse collectives move
 * (issue 13) and their sums, merged row by row in a fixed order so that a sum of several lists
 * is the same doubles however they were split. Room grows by doubling and is kept by clear. */
#include "strux/linalg.h"

#include <string.h>

void strux_sparse_rows_clear(strux_sparse_rows *a)
{
    a->n_rows = 0;
    a->n = 0;
}

void strux_sparse_rows_free(strux_sparse_rows *a)
{
    strux_free(&a->row);
    strux_free(&a->ptr);
    strux_free(&a->col);
    strux_free(&a->val);
    memset(a, 0, sizeof *a);
}

strux_status strux_sparse_rows_reserve(strux_sparse_rows *a, int32_t n_rows, int64_t n)
{
    if (n_rows > a->cap_rows || !a->ptr) {
        int64_t cap = (int64_t)a->cap_rows * 2;
        if (cap < n_rows) cap = n_rows;
        if (cap < 16) cap = 16;
        if (cap > INT32_MAX) cap = INT32_MAX;
        STRUX_TRY(strux_realloc_array(&a->row, (size_t)cap, sizeof *a->row));
        STRUX_TRY(strux_realloc_array(&a->ptr, (size_t)cap + 1, sizeof *a->ptr));
        a->cap_rows = (int32_t)cap;
    }
    if (n > a->cap || !a->col) {
        int64_t cap = a->cap * 2;
        if (cap < n) cap = n;
        if (cap < 64) cap = 64;
        STRUX_TRY(strux_realloc_array(&a->col, (size_t)cap, sizeof *a->col));
        STRUX_TRY(strux_realloc_array(&a->val, (size_t)cap, sizeof *a->val));
        a->cap = cap;
    }
    return STRUX_OK;
}

strux_status strux_sparse_rows_append(strux_sparse_rows *a, int32_t row, int32_t n,
                                      const int32_t *idx, const double *val, double scale)
{
    if (n == 0) return STRUX_OK;
    STRUX_CHECK(a->n_rows == 0 || row > a->row[a->n_rows - 1], STRUX_ERR_INTERNAL,
                "sparse rows appended out of order: row %d after %d", row,
                a->row[a->n_rows - 1]);
    STRUX_TRY(strux_sparse_rows_reserve(a, a->n_rows + 1, a->n + n));
    a->row[a->n_rows] = row;
    a->ptr[a->n_rows] = a->n;
    memcpy(a->col + a->n, idx, (size_t)n * sizeof *idx);
    for (int32_t q = 0; q < n; q++)
        a->val[a->n + q] = scale == 1 ? val[q] : val[q] * scale;
    a->n += n;
    a->ptr[++a->n_rows] = a->n;
    return STRUX_OK;
}

strux_status strux_sparse_rows_add(const strux_sparse_rows *a, const strux_sparse_rows *b,
                                   strux_sparse_rows *out)
{
    strux_sparse_rows_clear(out);
    STRUX_TRY(strux_sparse_rows_reserve(out, a->n_rows + b->n_rows, a->n + b->n));
    int32_t ra = 0, rb = 0;
    int64_t n = 0;
    while (ra < a->n_rows || rb < b->n_rows) {
        int32_t k = ra == a->n_rows                          ? b->row[rb]
                    : rb == b->n_rows || a->row[ra] < b->row[rb] ? a->row[ra]
                                                                 : b->row[rb];
        int64_t i = 0, ie = 0, j = 0, je = 0;
        if (ra < a->n_rows && a->row[ra] == k) {
            i = a->ptr[ra];
            ie = a->ptr[++ra];
        }
        if (rb < b->n_rows && b->row[rb] == k) {
            j = b->ptr[rb];
            je = b->ptr[++rb];
        }
        out->row[out->n_rows] = k;
        out->ptr[out->n_rows++] = n;
        while (i < ie || j < je) {
            if (j == je || (i < ie && a->col[i] < b->col[j])) {
                out->col[n] = a->col[i];
                out->val[n++] = a->val[i++];
            } else if (i == ie || b->col[j] < a->col[i]) {
                out->col[n] = b->col[j];
                out->val[n++] = b->val[j++];
            } else {
                out->col[n] = a->col[i];
                out->val[n++] = a->val[i++] + b->val[j++];
            }
        }
    }
    out->ptr[out->n_rows] = n;
    out->n = n;
    return STRUX_OK;
}

void strux_sparse_rows_scatter(const strux_sparse_rows *a, int64_t ld, double *x)
{
    for (int32_t r = 0; r < a->n_rows; r++)
        for (int64_t p = a->ptr[r]; p < a->ptr[r + 1]; p++)
            x[(int64_t)a->row[r] * ld + a->col[p]] = a->val[p];
}

strux_status strux_sparse_rows_gather(const double *x, int32_t n_rows, int64_t ld, int64_t n_last,
                                      strux_sparse_rows *out)
{
    strux_sparse_rows_clear(out);
    for (int32_t k = 0; k < n_rows; k++) {
        const double *row = x + (int64_t)k * ld;
        int64_t len = k == n_rows - 1 ? n_last : ld, n = 0;
        for (int64_t j = 0; j < len; j++)
            n += row[j] != 0;
        if (n == 0) continue;
        STRUX_TRY(strux_sparse_rows_reserve(out, out->n_rows + 1, out->n + n));
        out->row[out->n_rows] = k;
        out->ptr[out->n_rows] = out->n;
        for (int64_t j = 0; j < len; j++)
            if (row[j] != 0) {
                out->col[out->n] = (int32_t)j;
                out->val[out->n++] = row[j];
            }
        out->ptr[++out->n_rows] = out->n;
    }
    return STRUX_OK;
}
