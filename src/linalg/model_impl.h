/* linalg/model_impl.h - private layout of the weight store (strux/model.h), seen only by
 * src/linalg and white-box tests, and the ops table of the stores model.c dispatches to: the
 * dense stores (store_dense.c: label- and feature-major), the sparse store (store_sparse.c) and
 * the view w + Δ over another model (store_view.c).
 * A row is w_k = s[k]·v_k; nrm[k] = ||v_k||² of the stored values, kept up to date by every
 * kernel that writes v (so ||w_k||² = s[k]²·nrm[k] is O(1)). */
#ifndef STRUX_MODEL_IMPL_H
#define STRUX_MODEL_IMPL_H

#include "strux/model.h"

/* A row of the sparse layout: n stored entries at ascending columns idx[0..n) with values val
 * (double or float), room for cap; cap = STRUX_ROW_DENSE: val holds all dim values and idx is
 * NULL (the row filled past strux_model.dense_at). */
typedef struct strux_sparse_row {
    int32_t n;
    int32_t cap;
    int32_t *idx;
    void *val;
} strux_sparse_row;
#define STRUX_ROW_DENSE (-1)

typedef struct strux_store_ops strux_store_ops;

/* A view (store_view.c): row k is base_k + delta_k, the base borrowed and read only, the change
 * kept in a model of its own; the free parameters are held whole in the view's extra, with the
 * base's as they were at the last reset beside them. */
typedef struct strux_view {
    const strux_model *base; /* borrowed, or owned when owns_base */
    int owns_base;           /* a shared model's packed base (store_shared.c) */
    strux_model *delta;      /* owned: the change since the last reset */
    double *extra0;          /* n_extra: the base's free parameters at the last reset */
    int32_t *bidx, *didx;    /* dim columns each: a base row, a delta row */
    double *bval, *dval;     /* their values */
} strux_view;

struct strux_model {
    int32_t n_rows;
    int32_t dim;
    int64_t n_extra;
    strux_model_kind kind;
    int32_t free_col;
    int32_t centre_col;     /* the column the regulariser centres at centre, or −1 */
    double centre;          /* (λ/2)||w − w0||², w0 = centre at centre_col of every row */
    const strux_store_ops *ops;
    void *v;                /* dense layouts: n_rows·dim stored values (double or float) */
    strux_sparse_row *rows; /* sparse layout: n_rows rows */
    strux_view *view;       /* a view w + Δ (store_view.c), else NULL */
    struct strux_shared *shared; /* values in a block shared by a host (store_shared.c) */
    int external;           /* the stored values are a block the store neither allocates nor
                               frees (store_shared.c; its kernels then only read) */
    int32_t dense_at;       /* sparse layout: a row with more entries is stored dense */
    int32_t failed_row;     /* sparse layout: a row that could not grow (its update was left
                               out), or −1: strux_model_status reports it */
    int64_t failed_n;       /* the entries it needed */
    double *s;              /* n_rows row scales */
    double *nrm;            /* n_rows ||v_k||² */
    double *extra;          /* n_extra free parameters */
    double *scratch;        /* max(n_rows, dim) doubles for kernels that write */
    int32_t *list;          /* n_rows row indices for kernels that write */
    int32_t *ridx;          /* 3·dim column indices for the row-wise kernels of model.c */
    double *rval;           /* 3·dim values beside ridx */
};

/* The values a row keeps: all but +0 (−0 is kept, so files and checkpoints round-trip bit for
 * bit); needs <math.h>. */
#define STRUX_STORED(v) ((v) != 0 || signbit(v))

/* A row scale outside [1/STRUX_SCALE_FOLD, STRUX_SCALE_FOLD] is folded into its stored values. */
#define STRUX_SCALE_FOLD 1e100

/* The kernels of one storage layout, on stored values (scales are model.c's). Entries marked
 * "may be NULL" fall back to model.c's row-wise versions over row/set_row. */
struct strux_store_ops {
    /* Allocate the zero stored values of m (shape and kind set) / free them. */
    strux_status (*create)(strux_model *m);
    void (*destroy)(strux_model *m);
    /* Bytes of the stored values and their indices. */
    size_t (*bytes)(const strux_model *m);
    /* out[q] = v_k·x_r for k = rows[q] (rows NULL: k = k0 + q), q < n. */
    void (*scores)(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0, int32_t n,
                   const int32_t *rows, double *out);
    /* v_{rows[q]} += cs[q]·x_r for q < n_list; nrm follows. */
    void (*add)(strux_model *m, const strux_csr *x, int64_t r, int32_t n_list,
                const int32_t *rows, const double *cs);
    /* v_k += c·x_r, nrm not updated (the caller knows its change; may be NULL). */
    void (*add_plain)(strux_model *m, const strux_csr *x, int64_t r, int32_t k, double c);
    /* Stored value of (k, j) as double / set it (nrm not updated). */
    double (*get)(const strux_model *m, int32_t k, int32_t j);
    void (*put)(strux_model *m, int32_t k, int32_t j, double v);
    /* The non-zero stored values of row k at ascending columns; returns their count (≤ dim). */
    int32_t (*row)(const strux_model *m, int32_t k, int32_t *idx, double *val);
    /* Row k ← the n values val at ascending columns idx (every other value 0); nrm[k] follows. */
    void (*set_row)(strux_model *m, int32_t k, int32_t n, const int32_t *idx, const double *val);
    /* Every stored value 0 (nrm too). */
    void (*zero)(strux_model *m);
    /* v_k ← a[k]·v_k for every row with a[k] ≠ 1 (nrm updated). */
    void (*scale_rows)(strux_model *m, const double *a);
    /* nrm recomputed from the stored values. */
    void (*norms)(strux_model *m);
    /* dst's stored values ← src's (same kind; may be NULL). */
    void (*copy)(strux_model *dst, const strux_model *src);
    /* Σ_k c[k]·(a_k·b_k) over the stored values of two models of one kind (may be NULL). */
    double (*dot)(const strux_model *a, const strux_model *b, const double *c);
    /* y_k += c[k]·x_k over the stored values of two models of one kind, nrm of y recomputed
     * (may be NULL). */
    void (*axpy)(const strux_model *x, strux_model *y, const double *c);
    /* Flat label-major index of the first non-finite stored value, or −1. */
    int64_t (*find_non_finite)(const strux_model *m);
    /* The n_rows·dim stored values as one buffer for collectives (NULL: the layout has none). */
    void *(*storage)(strux_model *m);
};

extern const strux_store_ops strux_store_dense_ops;  /* store_dense.c */
extern const strux_store_ops strux_store_sparse_ops; /* store_sparse.c */
extern const strux_store_ops strux_store_view_ops;   /* store_view.c */

/* Free the sharing state of a model in a host's block (store_shared.c; its stores' destroy). */
void strux_shared_free(strux_model *m);
/* The shell of a model of this shape and kind on the given store (model.c): scales 1, every
 * buffer of model.c allocated, ops->create called. */
strux_status strux_model_alloc(int32_t n_rows, int32_t dim, int64_t n_extra, strux_model_kind kind,
                               const strux_store_ops *ops, int external, strux_model **out);
/* io, vo ← y + c·x of two rows given as ascending columns and values (rows_axpy's merge: an entry
 * of x alone becomes 0 + c·x, one of y alone stays as it is); returns the entries written (at
 * most nx + ny). */
int32_t strux_row_merge(int32_t ny, const int32_t *iy, const double *vy, double c, int32_t nx,
                        const int32_t *ix, const double *vx, int32_t *io, double *vo);

#endif
