/* linalg/model_cols.c - a model's weights by column (strux_model_cols in strux/model.h): per
 * feature the rows with a non-zero weight there and that weight, built from the rows in one
 * pass, so that an example is scored against only the rows it touches, in time that follows the
 * weights it meets rather than the row count (the screening of 1-vs-All active sets, issue 13).
 * A row's partial score sums the example's non-zeros in column order, as the row kernels do. */
#include "model_impl.h"

#include <stdlib.h>
#include <string.h>

static int by_row(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

void strux_model_cols_free(strux_model_cols *c)
{
    strux_free(&c->ptr);
    strux_free(&c->row);
    strux_free(&c->val);
    strux_free(&c->acc);
    strux_free(&c->seen);
    memset(c, 0, sizeof *c);
}

strux_status strux_model_cols_build(const strux_model *m, int32_t skip_col, strux_model_cols *c)
{
    if (c->dim != m->dim || c->n_rows != m->n_rows) {
        strux_model_cols_free(c);
        STRUX_TRY(strux_alloc_array(&c->ptr, (size_t)m->dim + 1, sizeof *c->ptr));
        STRUX_TRY(strux_alloc_array(&c->acc, (size_t)m->n_rows + 1, sizeof *c->acc));
        STRUX_TRY(strux_alloc_array(&c->seen, ((size_t)m->n_rows + 63) / 64, sizeof *c->seen));
        c->dim = m->dim;
        c->n_rows = m->n_rows;
    }
    memset(c->ptr, 0, ((size_t)m->dim + 1) * sizeof *c->ptr);
    int64_t n = 0;
    for (int32_t k = 0; k < m->n_rows; k++) { /* counts per column */
        int32_t nk = strux_model_row_nonzeros(m, k, m->ridx, m->rval);
        for (int32_t q = 0; q < nk; q++)
            if (m->ridx[q] != skip_col) c->ptr[m->ridx[q] + 1]++;
        n += nk;
    }
    if (n > c->cap) {
        STRUX_TRY(strux_realloc_array(&c->row, (size_t)n, sizeof *c->row));
        STRUX_TRY(strux_realloc_array(&c->val, (size_t)n, sizeof *c->val));
        c->cap = n;
    }
    for (int32_t j = 0; j < m->dim; j++)
        c->ptr[j + 1] += c->ptr[j];
    int64_t *at = (int64_t *)m->scratch; /* fill positions: scratch holds max(n_rows, dim) */
    memcpy(at, c->ptr, (size_t)m->dim * sizeof *at);
    for (int32_t k = 0; k < m->n_rows; k++) { /* rows ascend within each column */
        int32_t nk = strux_model_row_nonzeros(m, k, m->ridx, m->rval);
        for (int32_t q = 0; q < nk; q++) {
            int32_t j = m->ridx[q];
            if (j == skip_col) continue;
            c->row[at[j]] = k;
            c->val[at[j]++] = m->rval[q];
        }
    }
    c->n = c->ptr[m->dim];
    return STRUX_OK;
}

int32_t strux_model_cols_scores(strux_model_cols *c, const strux_csr *x, int64_t r,
                                int32_t *rows, double *out)
{
    int32_t n = 0;
    for (int64_t p = x->ptr[r]; p < x->ptr[r + 1]; p++) {
        const int32_t j = x->col[p];
        if (j >= c->dim) continue;
        const double xv = x->val[p];
        for (int64_t e = c->ptr[j]; e < c->ptr[j + 1]; e++) {
            const int32_t k = c->row[e];
            const uint64_t bit = (uint64_t)1 << (k & 63);
            if (!(c->seen[k >> 6] & bit)) {
                c->seen[k >> 6] |= bit;
                rows[n++] = k;
            }
            c->acc[k] += xv * c->val[e];
        }
    }
    /* Ascending rows, the scratch back to 0: with many rows touched the marks are read word by
     * word in row order (n_rows/64 words), else the list is sorted (n log n). */
    const int64_t words = ((int64_t)c->n_rows + 63) / 64;
    if (words <= 8 * (int64_t)n) {
        int32_t q = 0;
        for (int64_t w = 0; q < n; w++) {
            for (uint64_t b = c->seen[w]; b; b &= b - 1) {
                const int32_t k = (int32_t)(64 * w + __builtin_ctzll(b));
                rows[q] = k;
                out[q++] = c->acc[k];
                c->acc[k] = 0;
            }
            c->seen[w] = 0;
        }
        return n;
    }
    qsort(rows, (size_t)n, sizeof *rows, by_row);
    for (int32_t q = 0; q < n; q++) {
        int32_t k = rows[q];
        out[q] = c->acc[k];
        c->acc[k] = 0;
        c->seen[k >> 6] = 0;
    }
    return n;
}
