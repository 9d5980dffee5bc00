/* linalg/model.c - life cycle and whole-vector operations of strux_model (strux/model.h). */
#include "strux/model.h"

#include "strux/linalg.h"

#include <stddef.h>
#include <string.h>

const strux_opt_spec strux_model_opt_specs[] = {
    {"model.bias", STRUX_OPT_CHOICE, offsetof(strux_model_options, bias), "regularised", 0, 0,
     "none|regularised|free",
     "the bias: none (no bias feature, data.bias is not appended), regularised (the data.bias "
     "feature's weights are regularised like the others, LIBLINEAR's -B), free (the data.bias "
     "feature's weights are left out of the regulariser (λ/2)||w||²; solvers with the flag "
     "free_bias: sgd)"},
    {NULL},
};

strux_status strux_model_create(int32_t n_rows, int32_t dim, int64_t n_extra, strux_model **out)
{
    STRUX_CHECK(n_rows >= 0 && dim >= 0 && n_extra >= 0, STRUX_ERR_INTERNAL,
                "model shape %d x %d + %lld is negative", n_rows, dim, (long long)n_extra);
    strux_model *m;
    STRUX_TRY(strux_alloc(&m, sizeof *m));
    m->n_rows = n_rows;
    m->dim = dim;
    m->n_extra = n_extra;
    m->n_w = (int64_t)n_rows * dim + n_extra;
    m->free_col = -1;
    strux_status st = strux_alloc_array(&m->w, (size_t)m->n_w, sizeof *m->w);
    if (st != STRUX_OK) {
        strux_free(&m);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = m;
    return STRUX_OK;
}

void strux_model_destroy(strux_model **m)
{
    if (!*m) return;
    strux_free(&(*m)->w);
    strux_free(m);
}

double strux_model_norm2(const strux_model *m)
{
    double sum = strux_nrm2sq(m->n_w, m->w);
    if (m->free_col >= 0)
        for (int32_t k = 0; k < m->n_rows; k++) {
            double b = m->w[(int64_t)k * m->dim + m->free_col];
            sum -= b * b;
        }
    return sum;
}

void strux_model_scale_regularised(strux_model *m, double a)
{
    if (m->free_col < 0) {
        strux_scal(m->n_w, a, m->w);
        return;
    }
    for (int32_t k = 0; k < m->n_rows; k++) {
        double *row = m->w + (int64_t)k * m->dim, b = row[m->free_col];
        strux_scal(m->dim, a, row);
        row[m->free_col] = b;
    }
    strux_scal(m->n_extra, a, m->w + (int64_t)m->n_rows * m->dim);
}

strux_status strux_model_copy(strux_model *dst, const strux_model *src)
{
    STRUX_CHECK(dst->n_rows == src->n_rows && dst->dim == src->dim && dst->n_extra == src->n_extra,
                STRUX_ERR_INTERNAL, "model copy between shapes %d x %d + %lld and %d x %d + %lld",
                src->n_rows, src->dim, (long long)src->n_extra, dst->n_rows, dst->dim,
                (long long)dst->n_extra);
    memcpy(dst->w, src->w, (size_t)src->n_w * sizeof *src->w);
    return STRUX_OK;
}
