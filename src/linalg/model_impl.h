/* linalg/model_impl.h - private layout of the weight store (strux/model.h), seen only by
 * src/linalg and white-box tests, and the dense kernels of store_dense.c that model.c dispatches
 * to. A row is w_k = s[k]·v_k; nrm[k] = ||v_k||² of the stored values, kept up to date by every
 * kernel that writes v (so ||w_k||² = s[k]²·nrm[k] is O(1)). */
#ifndef STRUX_MODEL_IMPL_H
#define STRUX_MODEL_IMPL_H

#include "strux/model.h"

struct strux_model {
    int32_t n_rows;
    int32_t dim;
    int64_t n_extra;
    strux_model_kind kind;
    int32_t free_col;
    void *v;          /* n_rows·dim stored values (double or float), in kind.layout */
    double *s;        /* n_rows row scales */
    double *nrm;      /* n_rows ||v_k||² */
    double *extra;    /* n_extra free parameters */
    double *scratch;  /* max(n_rows, dim) doubles for kernels that write */
    int32_t *list;    /* n_rows row indices for kernels that write */
};

/* A row scale outside [1/STRUX_SCALE_FOLD, STRUX_SCALE_FOLD] is folded into its stored values. */
#define STRUX_SCALE_FOLD 1e100

/* Dense kernels (store_dense.c), for both layouts and precisions. */
void strux_store_scores(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0,
                        int32_t n, const int32_t *rows, double *out);
void strux_store_add(strux_model *m, const strux_csr *x, int64_t r, int32_t n_list,
                     const int32_t *rows, const double *cs);
/* Stored value of (k, j) as double / set it (nrm not updated). */
double strux_store_get(const strux_model *m, int32_t k, int32_t j);
void strux_store_put(strux_model *m, int32_t k, int32_t j, double v);
/* v_k ← a·v_k for every row with a[k] ≠ 1 (nrm updated). */
void strux_store_scale_rows(strux_model *m, const double *a);
/* nrm recomputed from the stored values. */
void strux_store_norms(strux_model *m);
/* Σ_k c[k]·(a_k·b_k) over the stored values of two models of one kind (c: n_rows factors). */
double strux_store_dot(const strux_model *a, const strux_model *b, const double *c);
/* y_k += c[k]·x_k over the stored values of two models of one kind (nrm of y recomputed). */
void strux_store_axpy(const strux_model *x, strux_model *y, const double *c);
/* Index (in storage order) of a non-finite stored value, or −1. */
int64_t strux_store_find_non_finite(const strux_model *m);

#endif
