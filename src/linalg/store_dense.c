/* linalg/store_dense.c - the dense weight stores (model_impl.h, strux_store_dense_ops): label-
 * and feature-major, double and float, n_rows·dim values in one block; the kernels are generated
 * from store_dense_t.h once per stored type and dispatched on the model's kind. */
#include "model_impl.h"

#include <math.h>
#include <string.h>

#define STORE_AHEAD 4 /* non-zeros between a run's prefetch and its use */

/* The end of row r's entries below column dim (columns ascend: the kernels' loops stop there,
 * and need no test per entry). */
static inline int64_t dense_row_end(const strux_csr *x, int64_t r, int32_t dim)
{
    int64_t p = x->ptr[r + 1];
    while (p > x->ptr[r] && x->col[p - 1] >= dim)
        p--;
    return p;
}

#define T double
#define NAME(f) f##_d
#include "store_dense_t.h"
#undef T
#undef NAME
#define T float
#define NAME(f) f##_f
#include "store_dense_t.h"
#undef T
#undef NAME

#define IS_FLOAT(m) ((m)->kind.precision == STRUX_PRECISION_FLOAT)
#define IS_FM(m) ((m)->kind.layout == STRUX_LAYOUT_FEATURE_MAJOR)
#define VALUE_SIZE(m) (IS_FLOAT(m) ? sizeof(float) : sizeof(double))

static size_t n_values(const strux_model *m)
{
    return (size_t)((int64_t)m->n_rows * m->dim);
}

/* External values (a host's block, store_shared.c) are set and freed by their owner. */
static strux_status dense_create(strux_model *m)
{
    if (m->external) return STRUX_OK;
    return strux_alloc_array(&m->v, n_values(m) + 1, VALUE_SIZE(m));
}

static void dense_destroy(strux_model *m)
{
    if (m->external) {
        strux_shared_free(m);
        m->v = NULL;
        return;
    }
    strux_free(&m->v);
}

static size_t dense_bytes(const strux_model *m)
{
    return n_values(m) * VALUE_SIZE(m);
}

static void dense_scores(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0,
                         int32_t n, const int32_t *rows, double *out)
{
    if (IS_FLOAT(m))
        (IS_FM(m) ? scores_fm_f : scores_lm_f)(m, x, r, k0, n, rows, out);
    else
        (IS_FM(m) ? scores_fm_d : scores_lm_d)(m, x, r, k0, n, rows, out);
}

static void dense_add(strux_model *m, const strux_csr *x, int64_t r, int32_t n_list,
                      const int32_t *rows, const double *cs)
{
    if (IS_FLOAT(m))
        (IS_FM(m) ? add_fm_f : add_lm_f)(m, x, r, n_list, rows, cs);
    else
        (IS_FM(m) ? add_fm_d : add_lm_d)(m, x, r, n_list, rows, cs);
}

static void dense_add_plain(strux_model *m, const strux_csr *x, int64_t r, int32_t k, double c)
{
    (IS_FLOAT(m) ? add_plain_f : add_plain_d)(m, x, r, k, c);
}

static int64_t offset(const strux_model *m, int32_t k, int32_t j)
{
    return IS_FM(m) ? (int64_t)j * m->n_rows + k : (int64_t)k * m->dim + j;
}

static double dense_get(const strux_model *m, int32_t k, int32_t j)
{
    int64_t q = offset(m, k, j);
    return IS_FLOAT(m) ? (double)((const float *)m->v)[q] : ((const double *)m->v)[q];
}

static void dense_put(strux_model *m, int32_t k, int32_t j, double v)
{
    int64_t q = offset(m, k, j);
    if (IS_FLOAT(m))
        ((float *)m->v)[q] = (float)v;
    else
        ((double *)m->v)[q] = v;
}

static int32_t dense_row(const strux_model *m, int32_t k, int32_t *idx, double *val)
{
    int32_t n = 0;
    for (int32_t j = 0; j < m->dim; j++) {
        double v = dense_get(m, k, j);
        if (STRUX_STORED(v)) {
            idx[n] = j;
            val[n++] = v;
        }
    }
    return n;
}

static void dense_set_row(strux_model *m, int32_t k, int32_t n, const int32_t *idx,
                          const double *val)
{
    for (int32_t j = 0; j < m->dim; j++)
        dense_put(m, k, j, 0);
    double n2 = 0;
    for (int32_t q = 0; q < n; q++) {
        dense_put(m, k, idx[q], val[q]);
        double v = dense_get(m, k, idx[q]);
        n2 += v * v;
    }
    m->nrm[k] = n2;
}

static void dense_zero(strux_model *m)
{
    memset(m->v, 0, n_values(m) * VALUE_SIZE(m));
    memset(m->nrm, 0, (size_t)m->n_rows * sizeof *m->nrm);
}

static void dense_scale_rows(strux_model *m, const double *a)
{
    (IS_FLOAT(m) ? scale_rows_f : scale_rows_d)(m, a);
}

static void dense_norms(strux_model *m)
{
    (IS_FLOAT(m) ? norms_f : norms_d)(m);
}

static void dense_copy(strux_model *dst, const strux_model *src)
{
    memcpy(dst->v, src->v, n_values(src) * VALUE_SIZE(src));
}

static double dense_dot(const strux_model *a, const strux_model *b, const double *c)
{
    return (IS_FLOAT(a) ? dot_f : dot_d)(a, b, c);
}

static void dense_axpy(const strux_model *x, strux_model *y, const double *c)
{
    (IS_FLOAT(x) ? axpy_f : axpy_d)(x, y, c);
}

static int64_t dense_find_non_finite(const strux_model *m)
{
    int64_t q = (IS_FLOAT(m) ? find_non_finite_f : find_non_finite_d)(m);
    if (q < 0 || !IS_FM(m)) return q;
    return (q % m->n_rows) * m->dim + q / m->n_rows; /* feature-major → label-major index */
}

static void *dense_storage(strux_model *m)
{
    return m->v;
}

const strux_store_ops strux_store_dense_ops = {
    .create = dense_create,
    .destroy = dense_destroy,
    .bytes = dense_bytes,
    .scores = dense_scores,
    .add = dense_add,
    .add_plain = dense_add_plain,
    .get = dense_get,
    .put = dense_put,
    .row = dense_row,
    .set_row = dense_set_row,
    .zero = dense_zero,
    .scale_rows = dense_scale_rows,
    .norms = dense_norms,
    .copy = dense_copy,
    .dot = dense_dot,
    .axpy = dense_axpy,
    .find_non_finite = dense_find_non_finite,
    .storage = dense_storage,
};
