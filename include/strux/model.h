/* strux/model.h - the weights every task scores with (ARCHITECTURE.md §3): n_rows dense rows of
 * dim weights (one row per label, node or state) followed by n_extra free parameters (transitions,
 * pairwise potentials), all in one flat double array so solvers and collectives treat w as one
 * vector. Replicated on every rank. */
#ifndef STRUX_MODEL_H
#define STRUX_MODEL_H

#include "strux/core.h"

typedef struct strux_model {
    int32_t n_rows;   /* weight rows */
    int32_t dim;      /* features per row (bias column included) */
    int64_t n_extra;  /* free parameters after the rows */
    int64_t n_w;      /* n_rows·dim + n_extra */
    double *w;        /* n_w weights */
    int32_t free_col; /* a column left out of the regulariser in every row (model.bias = free:
                         the bias column), or −1 */
} strux_model;

/* Options of section [model]. */
typedef struct strux_model_options {
    char bias[STRUX_OPT_STR]; /* model.bias: none | regularised | free */
} strux_model_options;
extern const strux_opt_spec strux_model_opt_specs[]; /* section [model] */

strux_status strux_model_create(int32_t n_rows, int32_t dim, int64_t n_extra, strux_model **out);
void strux_model_destroy(strux_model **m);
/* The regulariser's ||w||²: every weight but the free column's. */
double strux_model_norm2(const strux_model *m);
/* w ← a·w for every weight but the free column's (SGD's shrink). */
void strux_model_scale_regularised(strux_model *m, double a);
/* Copy the weights of src (same shape) into dst. */
strux_status strux_model_copy(strux_model *dst, const strux_model *src);
/* Row k of the weights. */
static inline double *strux_model_row(const strux_model *m, int32_t k)
{
    return m->w + (int64_t)k * m->dim;
}
/* The free parameters after the rows. */
static inline double *strux_model_extra(const strux_model *m)
{
    return m->w + (int64_t)m->n_rows * m->dim;
}

#endif
