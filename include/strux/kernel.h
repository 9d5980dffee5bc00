/* strux/kernel.h - kernels between sparse rows, the LRU cache of kernel rows, and the kernel
 * expansion of a kernel model (specs/m3l.md §1.6, §1.8, §2.7, §6 A7, A18; issue 16 "m3l_kernel").
 * A kernel is computed from x·x′ and the squared norms over the features without the bias
 * column, and the bias feature's value b0 enters as b0² added to every kernel (A7): for linear
 * that is x·x′ with the bias appended, exactly the linear model's inner product; for rbf and poly
 * it is the feature-space bias the appended column cannot give. Rows are float CSR, every sum is
 * double. Everything here is local (Not Collective) and knows nothing of solvers or files. */
#ifndef STRUX_KERNEL_H
#define STRUX_KERNEL_H

#include "strux/linalg.h"

typedef enum strux_kernel_type {
    STRUX_KERNEL_LINEAR = 0, /* x·x′ */
    STRUX_KERNEL_RBF = 1,    /* exp(−γ·||x − x′||²) */
    STRUX_KERNEL_POLY = 2    /* (γ·x·x′ + coef0)^degree */
} strux_kernel_type;

typedef struct strux_kernel {
    strux_kernel_type type;
    double gamma;   /* rbf, poly: γ > 0 (kernel.gamma = 0 resolved to 1/features) */
    int32_t degree; /* poly: 1..10 */
    double coef0;   /* poly */
    double b0;      /* value of the bias feature (data.bias; 0 without one): b0² is added */
} strux_kernel;

/* "linear", "rbf", "poly". */
const char *strux_kernel_name(strux_kernel_type type);
/* The type named name; STRUX_ERR_INPUT naming it when unknown. */
strux_status strux_kernel_parse(const char *name, strux_kernel_type *out);

/* K(x, x′) from dot = x·x′ and n1 = ||x||², n2 = ||x′||² (bias column excluded):
 * linear dot + b0², rbf exp(−γ·max(0, n1 + n2 − 2·dot)) + b0², poly (γ·dot + coef0)^d + b0². */
double strux_kernel_value(const strux_kernel *k, double dot, double n1, double n2);

/* ||x_r||² without column skip_col (the bias column; −1: none). */
double strux_kernel_norm2(const strux_csr *x, int64_t r, int32_t skip_col);
/* out[i] = K(x_{r0+i}, v) for i < n: v is the other row scattered into dense doubles (its bias
 * column 0), nv its squared norm, norm2[i] the squared norms of the rows (bias excluded; only
 * read for rbf). */
void strux_kernel_rows(const strux_kernel *k, const strux_csr *x, int64_t r0, int64_t n,
                       const double *norm2, const double *v, double nv, double *out);

/* ---- the LRU cache of kernel rows (§2.7): rows of row_len values (float, or double with
 * precision_double) keyed by 0..n_keys−1, as many as budget bytes hold but at least two, the
 * least recently used replaced first; the diagonal is the caller's ---- */
typedef struct strux_kcache strux_kcache;
strux_status strux_kcache_create(int64_t n_keys, int64_t row_len, int precision_double,
                                 size_t budget, strux_kcache **out);
void strux_kcache_destroy(strux_kcache **c);
/* The row of key, now the most recently used: *hit = 1 when it was cached; otherwise *hit = 0
 * and the row is a slot (the least recently used one's) for the caller to fill. The pointer stays
 * valid until two later calls have missed. */
void *strux_kcache_get(strux_kcache *c, int64_t key, int *hit);
/* Forget every row (m3l.schedule = per_label empties the cache between labels). */
void strux_kcache_clear(strux_kcache *c);
int64_t strux_kcache_slots(const strux_kcache *c);
int strux_kcache_is_double(const strux_kcache *c);
/* Lookups that hit and that missed so far. */
void strux_kcache_counts(const strux_kcache *c, int64_t *hits, int64_t *misses);

/* ---- a kernel expansion: f_l(x) = Σ_s coef[s·L + l]·K(sv_s, x) (§1.8; the model of
 * solver.type = m3l_kernel, /m3l/kernel, /m3l/sv, /m3l/alpha, /m3l/coef) ---- */
typedef struct strux_kexp {
    strux_kernel kernel;
    int32_t n_labels; /* L; 0: no expansion */
    int64_t n_sv;     /* support vectors: training rows with some α > 0 */
    strux_csr sv;     /* n_sv rows, the features without the bias column (n_cols: features) */
    int64_t *row;     /* n_sv: the training row (0-based, in file order) of each */
    double *alpha;    /* n_sv × L: α of LIBLINEAR's units, in [0, v_i/(λW)] */
    double *coef;     /* n_sv × L */
    double *norm2;    /* n_sv: ||sv_s||² (derived, strux_kexp_prepare) */
} strux_kexp;
void strux_kexp_free(strux_kexp *e);
/* The derived norms (after the arrays are filled). */
strux_status strux_kexp_prepare(strux_kexp *e);
/* Scratch doubles strux_kexp_scores needs for rows of n_cols columns. */
int64_t strux_kexp_work_len(const strux_kexp *e, int32_t n_cols);
/* out[l] = f_l(x_r), l < L, for row r of x whose bias column is bias_col (−1: none; it is left
 * out); work holds strux_kexp_work_len doubles, zero on entry and on return. */
void strux_kexp_scores(const strux_kexp *e, const strux_csr *x, int64_t r, int32_t bias_col,
                       double *work, double *out);

#endif
