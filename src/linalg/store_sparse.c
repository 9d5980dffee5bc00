/* linalg/store_sparse.c - the sparse weight store (model_impl.h, strux_store_sparse_ops;
 * model.layout = sparse): per row its non-zeros as ascending int32 columns and values (double or
 * float), grown by the columns the kernels add to it (×1.5 at a time), so the store takes about
 * nnz × (4 + value size) bytes plus 24 per row. A row whose entries would pass dense_at =
 * dim·size/(4 + size) (where the sparse row would take more bytes than a dense one: 2/3 of dim
 * for double, 1/2 for float) is stored dense from then on, until set_row gives it fewer than
 * half of that; set_row (pruning, copies) gives back room when a row keeps under half of it.
 * The kernels come from store_sparse_t.h once per stored type. A row that cannot
 * grow (out of memory inside a kernel that returns nothing) stops the process with exit code 5
 * and a message naming the row and the bytes held. */
#include "model_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A row longer than SPARSE_SEARCH × (non-zeros of x) is searched, not merged. */
#define SPARSE_SEARCH 16
#define SPARSE_SCAN 32 /* entries an interpolated guess is scanned from before bisecting */

#define IS_FLOAT(m) ((m)->kind.precision == STRUX_PRECISION_FLOAT)
#define VALUE_SIZE(m) (IS_FLOAT(m) ? sizeof(float) : sizeof(double))

/* The end of x_r's non-zeros below dim (columns ascend). */
static inline int64_t x_end(const strux_model *m, const strux_csr *x, int64_t r)
{
    int64_t pe = x->ptr[r + 1];
    while (pe > x->ptr[r] && x->col[pe - 1] >= m->dim)
        pe--;
    return pe;
}

/* First i in [lo, n) with idx[i] ≥ j (n when none), by binary search / by a linear scan. */
static inline int32_t lower_bound(const int32_t *idx, int32_t lo, int32_t n, int32_t j)
{
    if (lo >= n) return n;
    const int32_t *base = idx + lo;
    int32_t len = n - lo;
    while (len > 1) { /* branch-free halving (a conditional move per step) */
        const int32_t half = len / 2;
        base = base[half] < j ? base + half : base;
        len -= half;
    }
    return (int32_t)(base - idx) + (*base < j);
}

/* First i in [lo, n) with idx[i] ≥ j by interpolation: columns are spread fairly evenly over
 * [idx[lo], idx[n−1]], so the guess lands within a few cache lines of the answer and a short
 * scan finds it (one or two misses where bisection takes a dozen); a guess more than
 * SPARSE_SCAN entries off falls back to bisection. */
static inline int32_t find_from(const int32_t *idx, int32_t lo, int32_t n, int32_t j)
{
    if (lo >= n || idx[lo] >= j) return lo;
    const int32_t hi = n - 1;
    if (idx[hi] < j) return n;
    /* idx[lo] < j ≤ idx[hi] */
    int32_t g = lo + (int32_t)((int64_t)(j - idx[lo]) * (hi - lo) / ((int64_t)idx[hi] - idx[lo]));
    if (idx[g] < j) {
        for (int s = 0; s < SPARSE_SCAN; s++)
            if (idx[++g] >= j) return g;
        return lower_bound(idx, g, n, j);
    }
    for (int s = 0; s < SPARSE_SCAN; s++, g--)
        if (g == lo + 1 || idx[g - 1] < j) return g;
    return lower_bound(idx, lo, g, j);
}

static inline int32_t advance(const int32_t *idx, int32_t i, int32_t n, int32_t j)
{
    while (i < n && idx[i] < j)
        i++;
    return i;
}

/* A row that cannot grow: its update is left out and the model remembers it, so the caller's
 * strux_model_status ends the run with the row and the size (kernels return nothing). */
static int grow_failed(strux_model *m, int32_t k, int64_t n)
{
    strux_error_clear();
    if (m->failed_row < 0) {
        m->failed_row = k;
        m->failed_n = n;
    }
    return -1;
}

/* Room for n ≤ dense_at entries in sparse row k; −1 when it cannot be had. */
static int reserve(strux_model *m, int32_t k, int32_t n)
{
    strux_sparse_row *row = &m->rows[k];
    if (n <= row->cap) return 0;
    int64_t cap = (int64_t)row->cap + row->cap / 2;
    if (cap < n) cap = n;
    if (cap < 4) cap = 4;
    if (cap > m->dense_at) cap = m->dense_at;
    if (strux_realloc_array(&row->idx, (size_t)cap, sizeof *row->idx) != STRUX_OK ||
        strux_realloc_array(&row->val, (size_t)cap, VALUE_SIZE(m)) != STRUX_OK)
        return grow_failed(m, k, cap);
    row->cap = (int32_t)cap;
    return 0;
}

/* Sparse row k's room cut to n entries when n is under half of it (pruning, set_row). */
static void fit(strux_model *m, int32_t k, int32_t n)
{
    strux_sparse_row *row = &m->rows[k];
    if (n >= row->cap / 2) return;
    if (n == 0) {
        strux_free(&row->idx);
        strux_free(&row->val);
    } else {
        if (strux_realloc_array(&row->idx, (size_t)n, sizeof *row->idx) != STRUX_OK) return;
        /* val keeps its larger block if a smaller one cannot be had: room for n either way */
        (void)strux_realloc_array(&row->val, (size_t)n, VALUE_SIZE(m));
    }
    row->cap = n;
}

static int make_dense(strux_model *m, int32_t k);
static void make_sparse(strux_model *m, int32_t k);

#define T double
#define NAME(f) f##_d
#include "store_sparse_t.h"
#undef T
#undef NAME
#define T float
#define NAME(f) f##_f
#include "store_sparse_t.h"
#undef T
#undef NAME

/* Sparse row k → dense (its entries scattered into dim values). */
static int make_dense(strux_model *m, int32_t k)
{
    strux_sparse_row *row = &m->rows[k];
    void *d = NULL;
    if (strux_alloc_array(&d, (size_t)m->dim + 1, VALUE_SIZE(m)) != STRUX_OK)
        return grow_failed(m, k, m->dim);
    (IS_FLOAT(m) ? sp_scatter_f : sp_scatter_d)(row, d);
    strux_free(&row->idx);
    strux_free(&row->val);
    row->val = d;
    row->n = m->dim;
    row->cap = STRUX_ROW_DENSE;
    return 0;
}

/* Dense row k → an empty sparse row (its values dropped: the caller refills it). */
static void make_sparse(strux_model *m, int32_t k)
{
    strux_sparse_row *row = &m->rows[k];
    strux_free(&row->val);
    row->n = 0;
    row->cap = 0;
}

static strux_status sparse_create(strux_model *m)
{
    size_t vs = VALUE_SIZE(m);
    m->dense_at = (int32_t)((int64_t)m->dim * (int64_t)vs / (int64_t)(sizeof(int32_t) + vs));
    return strux_alloc_array(&m->rows, (size_t)m->n_rows + 1, sizeof *m->rows);
}

static void sparse_destroy(strux_model *m)
{
    if (m->external) /* rows into a host's block (store_shared.c): only the table is ours */
        strux_shared_free(m);
    if (!m->rows || m->external) {
        strux_free(&m->rows);
        return;
    }
    for (int32_t k = 0; k < m->n_rows; k++) {
        strux_free(&m->rows[k].idx);
        strux_free(&m->rows[k].val);
    }
    strux_free(&m->rows);
}

static size_t sparse_bytes(const strux_model *m)
{
    size_t vs = VALUE_SIZE(m), b = (size_t)m->n_rows * sizeof *m->rows;
    for (int32_t k = 0; k < m->n_rows; k++) {
        const strux_sparse_row *row = &m->rows[k];
        b += row->cap == STRUX_ROW_DENSE ? (size_t)m->dim * vs
                                         : (size_t)row->cap * (sizeof(int32_t) + vs);
    }
    return b;
}

static void sparse_scores(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0,
                          int32_t n, const int32_t *rows, double *out)
{
    (IS_FLOAT(m) ? sp_scores_f : sp_scores_d)(m, x, r, k0, n, rows, out);
}

static void sparse_add(strux_model *m, const strux_csr *x, int64_t r, int32_t n_list,
                       const int32_t *rows, const double *cs)
{
    (IS_FLOAT(m) ? sp_add_f : sp_add_d)(m, x, r, n_list, rows, cs);
}

static double sparse_get(const strux_model *m, int32_t k, int32_t j)
{
    return (IS_FLOAT(m) ? sp_get_f : sp_get_d)(m, k, j);
}

static void sparse_put(strux_model *m, int32_t k, int32_t j, double v)
{
    (IS_FLOAT(m) ? sp_put_f : sp_put_d)(m, k, j, v);
}

static int32_t sparse_row(const strux_model *m, int32_t k, int32_t *idx, double *val)
{
    return (IS_FLOAT(m) ? sp_row_f : sp_row_d)(m, k, idx, val);
}

static void sparse_set_row(strux_model *m, int32_t k, int32_t n, const int32_t *idx,
                           const double *val)
{
    (IS_FLOAT(m) ? sp_set_row_f : sp_set_row_d)(m, k, n, idx, val);
}

/* Every row emptied; the rows keep their room (the dual engine zeroes its accumulator each
 * round and refills about the same columns). */
static void sparse_zero(strux_model *m)
{
    for (int32_t k = 0; k < m->n_rows; k++) {
        strux_sparse_row *row = &m->rows[k];
        if (row->cap == STRUX_ROW_DENSE)
            memset(row->val, 0, (size_t)m->dim * VALUE_SIZE(m));
        else
            row->n = 0;
        m->nrm[k] = 0;
    }
}

static void sparse_scale_rows(strux_model *m, const double *a)
{
    (IS_FLOAT(m) ? sp_scale_rows_f : sp_scale_rows_d)(m, a);
}

static void sparse_norms(strux_model *m)
{
    (IS_FLOAT(m) ? sp_norms_f : sp_norms_d)(m);
}

static int64_t sparse_find_non_finite(const strux_model *m)
{
    return (IS_FLOAT(m) ? sp_find_non_finite_f : sp_find_non_finite_d)(m);
}

const strux_store_ops strux_store_sparse_ops = {
    .create = sparse_create,
    .destroy = sparse_destroy,
    .bytes = sparse_bytes,
    .scores = sparse_scores,
    .add = sparse_add,
    .get = sparse_get,
    .put = sparse_put,
    .row = sparse_row,
    .set_row = sparse_set_row,
    .zero = sparse_zero,
    .scale_rows = sparse_scale_rows,
    .norms = sparse_norms,
    .find_non_finite = sparse_find_non_finite,
    /* copy, dot, axpy: model.c's row-wise kernels; no dense storage for collectives */
};
