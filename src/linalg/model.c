/* linalg/model.c - life cycle and whole-vector operations of strux_model (strux/model.h). */
#include "strux/model.h"

#include "strux/linalg.h"

#include <string.h>

#include <string.h>

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
    return strux_nrm2sq(m->n_w, m->w);
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
