/* linalg/store_dense.c - the kernels of the dense weight stores (model_impl.h): label- and
 * feature-major, double and float, generated from store_dense_t.h once per stored type and
 * dispatched on the model's kind. */
#include "model_impl.h"

#include <math.h>

#define STORE_AHEAD 4 /* non-zeros between a run's prefetch and its use */

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

void strux_store_scores(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0,
                        int32_t n, const int32_t *rows, double *out)
{
    if (IS_FLOAT(m))
        (IS_FM(m) ? scores_fm_f : scores_lm_f)(m, x, r, k0, n, rows, out);
    else
        (IS_FM(m) ? scores_fm_d : scores_lm_d)(m, x, r, k0, n, rows, out);
}

void strux_store_add(strux_model *m, const strux_csr *x, int64_t r, int32_t n_list,
                     const int32_t *rows, const double *cs)
{
    if (IS_FLOAT(m))
        (IS_FM(m) ? add_fm_f : add_lm_f)(m, x, r, n_list, rows, cs);
    else
        (IS_FM(m) ? add_fm_d : add_lm_d)(m, x, r, n_list, rows, cs);
}

static int64_t offset(const strux_model *m, int32_t k, int32_t j)
{
    return IS_FM(m) ? (int64_t)j * m->n_rows + k : (int64_t)k * m->dim + j;
}

double strux_store_get(const strux_model *m, int32_t k, int32_t j)
{
    int64_t q = offset(m, k, j);
    return IS_FLOAT(m) ? (double)((const float *)m->v)[q] : ((const double *)m->v)[q];
}

void strux_store_put(strux_model *m, int32_t k, int32_t j, double v)
{
    int64_t q = offset(m, k, j);
    if (IS_FLOAT(m))
        ((float *)m->v)[q] = (float)v;
    else
        ((double *)m->v)[q] = v;
}

void strux_store_scale_rows(strux_model *m, const double *a)
{
    (IS_FLOAT(m) ? scale_rows_f : scale_rows_d)(m, a);
}

void strux_store_norms(strux_model *m)
{
    (IS_FLOAT(m) ? norms_f : norms_d)(m);
}

double strux_store_dot(const strux_model *a, const strux_model *b, const double *c)
{
    return (IS_FLOAT(a) ? dot_f : dot_d)(a, b, c);
}

void strux_store_axpy(const strux_model *x, strux_model *y, const double *c)
{
    (IS_FLOAT(x) ? axpy_f : axpy_d)(x, y, c);
}

int64_t strux_store_find_non_finite(const strux_model *m)
{
    int64_t q = (IS_FLOAT(m) ? find_non_finite_f : find_non_finite_d)(m);
    if (q < 0 || !IS_FM(m)) return q;
    return (q % m->n_rows) * m->dim + q / m->n_rows; /* feature-major → label-major index */
}
