/* solvers/m3l.h - private to src/solvers: the parts of M3L (Hariharan, Vishwanathan, Varma;
 * specs/m3l.md) that need neither the training driver nor the weight store:
 *   - label-correlation priors R (m3l_prior.c; §1.3, §4.2, §6 A6): identity, empirical from label
 *     sets (moment, co-occurrence, correlation), a text file, zero-shot from test classes,
 * shrinkage towards I, validation, and the factor P with R = PᵀP;
 *   - the box-constrained 1-D and 2-D QP solvers of the kernel SMO and the scalar pieces of its
 *     working-set selection (m3l_qp.c; §2.2-§2.4, §6 A3, A4).
 * R is a dense L×L row-major array of doubles owned by the caller (R[k*L + l] = R_kl). Labels are
 * the 0-based ids of the data files. Every function of the first two parts is local (Not
 * Collective); the caller allreduces empirical counts and agrees on errors (STYLE.md §8). The
 * third part (m3l_setup.c) is the prior a solver trains with, built collectively from the [m3l]
 * keys and shared by solver.type = m3l and m3l_kernel. */
#ifndef STRUX_M3L_H
#define STRUX_M3L_H

#include "strux/io.h"
#include "strux/solver.h"

/* ---- priors (m3l_prior.c) ---- */

/* Estimators of an empirical prior from label vectors (issue 16, m3l.empirical). */
typedef enum strux_m3l_empirical {
    STRUX_M3L_EMPIRICAL_MOMENT,       /* R = (1/n) Σ_i y_i y_iᵀ over ±1 labels (the paper's) */
    STRUX_M3L_EMPIRICAL_COOCCURRENCE, /* R_kl = n_kl / √(n_k·n_l) */
    STRUX_M3L_EMPIRICAL_CORRELATION   /* Pearson correlation of the 0/1 indicators */
} strux_m3l_empirical;

/* "moment", "cooccurrence", "correlation" (the config and model-file spelling). */
const char *strux_m3l_empirical_name(strux_m3l_empirical est);

/* Tolerances of strux_m3l_prior_check / _factor (issue 16 "Bad input"). */
#define STRUX_M3L_SYM_TOL 1e-12  /* |R_kl − R_lk| ≤ tol·max|R| */
#define STRUX_M3L_PSD_TOL 1e-10  /* smallest eigenvalue ≥ −tol·largest */
#define STRUX_M3L_SNAP_TOL 1e-12 /* α within tol·C of 0 or C is put on the bound (§2.2 guards) */
#define STRUX_M3L_DET_TOL 1e-12  /* Solve2DQP: det ≤ tol·Q11·Q22 is degenerate (§2.2 guards) */

/* R = I. */
void strux_m3l_prior_identity(int32_t n_labels, double *R);

/* Doubles in the count buffer of an empirical prior: 1 + L² (layout: [0] rows; [1 + k*L + l]
 * rows holding both labels k and l, so the diagonal holds the rows holding each label). Counts are
 * whole numbers kept in double so the caller can sum buffers of all ranks with one allreduce; they
 * are exact up to 2^53 rows. */
int64_t strux_m3l_prior_counts_len(int32_t n_labels);
/* Add the label sets of ds's local rows into counts (zeroed by the caller before the first call;
 * several datasets may be added). Errors: STRUX_ERR_INPUT naming ds->path and the global row when
 * a label id is not below n_labels. */
strux_status strux_m3l_prior_counts_add(const strux_dataset *ds, int32_t n_labels, double *counts);
/* Finish an empirical R from summed counts. A label present in no row or in every row (no
 * variance) gets a unit row and column, for every estimator (so with no rows R = I). */
void strux_m3l_prior_empirical(const double *counts, int32_t n_labels, strux_m3l_empirical est,
                               double *R);

/* Read R from a text file: n_labels rows of n_labels numbers separated by blanks (or commas),
 * lines whose first non-blank character is '#' and blank lines skipped. Errors: STRUX_ERR_IO when
 * the file cannot be opened; STRUX_ERR_INPUT as "path:line: ..." for a malformed number, NaN/Inf
 * or a row whose length differs from the first row's, and naming both sizes when the matrix is not
 * n_labels × n_labels. Symmetry and definiteness are strux_m3l_prior_check's. */
strux_status strux_m3l_prior_read(const char *path, int32_t n_labels, double *R);

/* Zero-shot prior (§4.2) from a classes file, one test class per line, `p l1,l2,...`: weight p > 0
 * (normalised so the weights sum to 1) and the 0-based ids of the labels the class has (none is
 * allowed: all labels absent); y_c is +1 on those, −1 elsewhere, and R = Σ_c p(c)·y_c y_cᵀ, whose
 * rank is at most the number of classes. '#' lines and blank lines are skipped. Errors:
 * STRUX_ERR_IO (cannot open), STRUX_ERR_INPUT "path:line: ..." for a malformed or non-positive
 * weight, a malformed, duplicate or out-of-range label id, and a file without classes. */
strux_status strux_m3l_prior_zero_shot(const char *path, int32_t n_labels, double *R);

/* R ← (1 − s)·R + s·I, s in [0, 1] (m3l.shrink, checked by the option table). */
void strux_m3l_prior_shrink(int32_t n_labels, double s, double *R);

/* A size read from elsewhere (a model's /m3l/R) against the data's label count: STRUX_ERR_INPUT
 * naming source and both sizes unless rows = cols = n_labels. */
strux_status strux_m3l_prior_check_size(int64_t rows, int64_t cols, int32_t n_labels,
                                        const char *source);
/* Entry checks of a legal prior, cheapest first: every entry finite, R_ll > 0, symmetric to
 * STRUX_M3L_SYM_TOL·max|R| (the first offending pair in row-major order, both values).
 * source names where R came from in messages ("m3l.r_file = r.txt"). STRUX_ERR_INPUT. */
strux_status strux_m3l_prior_check(const double *R, int32_t n_labels, const char *source);
/* strux_m3l_prior_check, then the eigen-decomposition R = V Λ Vᵀ: STRUX_ERR_INPUT when R is
 * indefinite (λ_min < −STRUX_M3L_PSD_TOL·λ_max), naming λ_min, the labels its eigenvector weighs
 * most and the smallest m3l.shrink that makes R PSD. On success *eig_min and *eig_max are the
 * extreme eigenvalues and, if P is not NULL, P (L×L row-major) = max(Λ, 0)^{1/2} Vᵀ, so that
 * R = PᵀP up to the clipped negative eigenvalues (singular R allowed, §1.9, A6; rows of P for zero
 * eigenvalues are zero). Errors also: STRUX_ERR_NOMEM, STRUX_ERR_NUMERIC (dsyevd). */
strux_status strux_m3l_prior_factor(const double *R, int32_t n_labels, const char *source,
                                    double *P, double *eig_min, double *eig_max);

/* ---- sub-problem solvers of the kernel SMO (m3l_qp.c, §2.2) ---- */

/* Solve1DQP: argmax of −½·a·x² + b·x over m ≤ x ≤ M (A4: clamp(b/a, m, M)). a must be ≥ 0; with
 * a = 0 (zero curvature) the maximiser of b·x: M if b > 0, m if b < 0, clamp(0, m, M) if b = 0. */
double strux_m3l_solve1d(double a, double b, double m, double M);

/* Solve2DQP: x = argmax of −½·xᵀQx + gᵀx over the box m ≤ x ≤ M with Q = [[q11, q12], [q12, q22]]
 * PSD. Exact when det = q11·q22 − q12² > STRUX_M3L_DET_TOL·q11·q22: the unconstrained maximiser
 * when inside, else the clamp-one, re-optimise-the-other candidates of §2.2. Otherwise degenerate:
 * the 1-D step x = (Solve1DQP(q11, g1, m1, M1), 0) (needs m2 ≤ 0 ≤ M2, as for steps δ) and the
 * return value is 1; 0 otherwise. */
int strux_m3l_solve2d(double q11, double q12, double q22, const double g[2], const double m[2],
                      const double M[2], double x[2]);

/* Projected gradient of the maximisation dual on [0, C] (§2.3): g inside, max(0, g) at α = 0,
 * min(0, g) at α = C. Inline: the SMO's scans call it once per point. */
static inline double strux_m3l_pg(double alpha, double g, double C)
{
    if (alpha <= 0 && g < 0) return 0.0;
    if (alpha >= C && g > 0) return 0.0; /* with C = 0 (a loss weight of 0) both: 0 */
    return g;
}

/* Whether j may pair with p (§2.4 step 3, A3): K_pp·K_jj − K_pj² > STRUX_M3L_DET_TOL·K_pp·K_jj,
 * the threshold under which strux_m3l_solve2d solves Q_pq = 4·R_ll·[[K_pp, ±K_pj], [±K_pj, K_jj]]
 * exactly; excludes j = p and (anti-)parallel points. Inline, as strux_m3l_pg. */
static inline int strux_m3l_pair_ok(double K_pp, double K_jj, double K_pj)
{
    return K_pp * K_jj - K_pj * K_pj > STRUX_M3L_DET_TOL * K_pp * K_jj;
}

/* h^max_pj of §2.4 step 4, the unconstrained gain ½·gᵀQ_pq⁻¹g of the pair, g = (g_pl, g_jl),
 * s_pj = y_pl·y_jl:
 *   (g_pl²·K_jj + g_jl²·K_pp − 2·g_pl·g_jl·s_pj·K_pj) / (8·R_ll·(K_pp·K_jj − K_pj²)).
 * Only for pairs that strux_m3l_pair_ok accepts. */
double strux_m3l_hmax(double g_p, double g_j, double s_pj, double K_pp, double K_jj, double K_pj,
                      double R_ll);

/* α after a step, put exactly on 0 or C when within STRUX_M3L_SNAP_TOL·C of it (bound status
 * drives the projected gradient and the selection, §2.2 guards, §2.3). */
double strux_m3l_snap(double alpha, double C);

/* ---- the prior a solver trains with (m3l_setup.c) ---- */

typedef struct strux_m3l_prior {
    int32_t L;
    double *R;        /* L×L, as used (after shrinkage) */
    int identity;     /* R = I exactly (1-vs-All) */
    int64_t *col_ptr; /* the non-zeros of R's columns (R symmetric: its rows) */
    int32_t *col_idx;
    double *col_val;
    double eig_min, eig_max;
    char source[2 * STRUX_OPT_STR + 64]; /* where R came from (log, model file) */
} strux_m3l_prior;

/* R for L labels from the [m3l] keys (prior, empirical over the ranks' label sets of ds or of
 * m3l.prior_data, file: a text matrix or a model's /m3l/R, zero_shot; then m3l.shrink), checked
 * (strux_m3l_prior_factor), its column non-zeros listed, and logged. Every rank gets the same R.
 * Errors: those of the builders and checks, STRUX_ERR_CONFIG for a missing m3l.r_file or
 * m3l.classes. Collective. */
strux_status strux_m3l_prior_build(const strux_m3l_options *o, strux_comm *comm,
                                   const strux_dataset *ds, int32_t L, strux_m3l_prior *p);
void strux_m3l_prior_free(strux_m3l_prior *p);
/* The model file's /m3l description of p (R copied) for a solver of λ on W-weighted data. */
strux_status strux_m3l_prior_describe(const strux_m3l_prior *p, const strux_m3l_options *o,
                                      double lambda, double W, strux_m3l_info *out);

/* m3l_kernel.c: solver.type = m3l_kernel, and the prior of such a solver (NULL for every other
 * solver). */
strux_status strux_solver_create_m3l_kernel(strux_solver *s);
const strux_m3l_prior *strux_m3l_kernel_prior(const strux_solver *s);

#endif
