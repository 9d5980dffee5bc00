/* linalg/model_cols.c - a model's weights by column (strux_model_cols in strux/model.h): per
 * feature the rows with a non-zero weight there and that weight, built from the rows in one
 * pass, so that an example is scored against only the rows it touches, in time that follows the
 * weights it meets rather than the row count (the screening of 1-vs-All active sets, issue 13).
 * A row's partial score sums the example's non-zeros in column order, as the row kernels do.
 * With a share (the block of a host's shared model, model.share = host) the columns are built
 * once per host by its writer and read by the other ranks there. */
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
    if (!c->share) {
        strux_free(&c->ptr);
        strux_free(&c->row);
        strux_free(&c->val);
    }
    strux_free(&c->count);
    strux_free(&c->acc);
    strux_free(&c->seen);
    const strux_model_share *share = c->share;
    memset(c, 0, sizeof *c);
    c->share = share;
}

/* ptr[0..dim] ← offsets of m's columns (skip_col empty). */
static void count_cols(const strux_model *m, int32_t skip_col, int64_t *ptr)
{
    memset(ptr, 0, ((size_t)m->dim + 1) * sizeof *ptr);
    for (int32_t k = 0; k < m->n_rows; k++) {
        int32_t nk = strux_model_row_nonzeros(m, k, m->ridx, m->rval);
        for (int32_t q = 0; q < nk; q++)
            if (m->ridx[q] != skip_col) ptr[m->ridx[q] + 1]++;
    }
    for (int32_t j = 0; j < m->dim; j++)
        ptr[j + 1] += ptr[j];
}

/* m's weights into row/val at the offsets ptr, rows ascending within each column. */
static void fill_cols(const strux_model *m, int32_t skip_col, const int64_t *ptr, int32_t *row,
                      double *val)
{
    int64_t *at = (int64_t *)m->scratch; /* fill positions: scratch holds max(n_rows, dim) */
    memcpy(at, ptr, (size_t)m->dim * sizeof *at);
    for (int32_t k = 0; k < m->n_rows; k++) {
        int32_t nk = strux_model_row_nonzeros(m, k, m->ridx, m->rval);
        for (int32_t q = 0; q < nk; q++) {
            int32_t j = m->ridx[q];
            if (j == skip_col) continue;
            row[at[j]] = k;
            val[at[j]++] = m->rval[q];
        }
    }
}

/* The build into the host's block: [ptr: dim + 1 int64][val: n doubles][row: n int32]. The
 * first fence keeps the writer from overwriting columns another rank still reads. */
static strux_status build_shared(const strux_model *m, int32_t skip_col, strux_model_cols *c)
{
    const strux_model_share *sh = c->share;
    size_t head = ((size_t)m->dim + 1) * sizeof(int64_t), bytes = 0;
    if (sh->writer) {
        if (!c->count) STRUX_TRY(strux_alloc_array(&c->count, (size_t)m->dim + 1, sizeof *c->count));
        count_cols(m, skip_col, c->count);
        bytes = head + (size_t)c->count[m->dim] * (sizeof(double) + sizeof(int32_t));
    }
    STRUX_TRY(sh->reserve(sh->ctx, bytes));
    STRUX_TRY(sh->fence(sh->ctx));
    char *base = sh->base(sh->ctx);
    if (sh->writer) {
        int64_t n = c->count[m->dim];
        memcpy(base, c->count, head);
        fill_cols(m, skip_col, (const int64_t *)base,
                  (int32_t *)(base + head + (size_t)n * sizeof(double)), (double *)(base + head));
    }
    STRUX_TRY(sh->fence(sh->ctx));
    c->ptr = (int64_t *)base;
    c->n = c->ptr[m->dim];
    c->val = (double *)(base + head);
    c->row = (int32_t *)(base + head + (size_t)c->n * sizeof(double));
    return STRUX_OK;
}

strux_status strux_model_cols_build(const strux_model *m, int32_t skip_col, strux_model_cols *c)
{
    if (c->dim != m->dim || c->n_rows != m->n_rows) {
        strux_model_cols_free(c);
        if (!c->share) STRUX_TRY(strux_alloc_array(&c->ptr, (size_t)m->dim + 1, sizeof *c->ptr));
        STRUX_TRY(strux_alloc_array(&c->acc, (size_t)m->n_rows + 1, sizeof *c->acc));
        STRUX_TRY(strux_alloc_array(&c->seen, ((size_t)m->n_rows + 63) / 64, sizeof *c->seen));
        c->dim = m->dim;
        c->n_rows = m->n_rows;
    }
    if (c->share) return build_shared(m, skip_col, c);
    count_cols(m, skip_col, c->ptr);
    int64_t n = c->ptr[m->dim];
    if (n > c->cap) {
        STRUX_TRY(strux_realloc_array(&c->row, (size_t)n, sizeof *c->row));
        STRUX_TRY(strux_realloc_array(&c->val, (size_t)n, sizeof *c->val));
        c->cap = n;
    }
    fill_cols(m, skip_col, c->ptr, c->row, c->val);
    c->n = n;
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
