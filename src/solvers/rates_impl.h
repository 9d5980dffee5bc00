/* solvers/rates_impl.h - private to the rate-constraint files of src/solvers (rates.c: set-up,
 * binding and the stored classifiers; rates_inner.c: the weighted SVM of a fixed multiplier and
 * bias; rates_mm.c: Alg. 1 as a resumable state machine; rates_search.c: Alg. 2 and 3;
 * rates_state.c: their state in checkpoints; rates_cut.c: the cut models; rates_report.c:
 * reports, randomised predictions, baselines). strux/rates.h is the public side.
 *
 * Units. The spec's score is z = w·x − b (margin ½); the stored weights are w̃ = 2w and the stored
 * bias b̃ = 2b, so the stored score is s = w̃·x − b̃ = 2z (strux/rates.h). With a regularised bias
 * (the bias column a feature) b̃ = 0. With model.bias = free (Alg. 3) the inner rows leave the bias
 * column out, b̃ is held here, and the bias column of every model handed out carries −b̃/c (c the
 * column's value), so that the model alone scores s. */
#ifndef STRUX_RATES_IMPL_H
#define STRUX_RATES_IMPL_H

#include "strux/rates.h"

#include "dual.h"
#include "rates.h"
#include "strux/lp.h"

#define STRUX_RATES_MAX_M 64 /* constraints at most (the LP rows and broadcasts are m-sized) */

/* One cut of Alg. 2: the iterate (w_s, v_s) with u_s = Ψ(w_s, v_s), lower bound l_s ≤ F(v_s),
 * slope g_s = ∇_v Ψ (m entries). */
typedef struct rates_cut {
    double u, l;
    double *g, *v;
    strux_model *w; /* NULL for the flat cut 0 */
} rates_cut;

/* One cut of Alg. 3 (fixed v): the bias b_s (stored units), u'_s = Ψ(w_s, b_s), l'_s = Ψ*(ξ_s, b_s)
 * and slope g'_s = dΨ* / db̃ (per unit of the stored bias b̃); G holds the iterate's constraint sums
 * (m + 1) so the returned iterate's v-cut needs no second pass. */
typedef struct rates_bcut {
    double b, u, l, g;
    double *G;
    strux_model *w; /* NULL for the flat cut 0 */
} rates_bcut;

/* Where the MM run is (rates_mm.c); every field is the same on every rank and rides in
 * checkpoints, with the cuts, the anchor and the kept snapshot. */
enum { MM_STEP_START, MM_SEARCH, MM_DONE };
typedef struct rates_mm_state {
    int64_t step;      /* MM step in progress (1-based) */
    int32_t phase;     /* MM_STEP_START, MM_SEARCH or MM_DONE */
    int32_t doublings; /* V_max doublings so far (A1) */
    double v_max;      /* the multiplier box [0, v_max] */
    double prev;       /* Problem 2 objective of the last kept step (NaN before one) */
    double obj;        /* Problem 2 objective at this step's anchor */
    double u0;         /* Alg. 2's upper bound at this step */
    double eps;        /* Alg. 2's tolerance: rates.eps, a quarter of it per retried step */
    int64_t switched;  /* examples that changed side at this step's linearisation */
    /* Alg. 2 */
    int64_t t;                      /* iteration of the search */
    double L;                       /* best lower bound */
    double U;                       /* the cut model's maximum at this iteration */
    double vt[STRUX_RATES_MAX_M];   /* the multipliers of this iteration's SVMOptimizer call */
    double ht;                      /* the cut model at vt (ũ0 of Alg. 3) */
    double eps_t;                   /* its tolerance */
    int32_t in_solve;               /* an SVMOptimizer call is under way */
    /* Alg. 3 (model.bias = free) */
    int64_t bt;                     /* its iteration */
    double b_max;                   /* the safe interval B = [−b_max, b_max] (stored units) */
    double b_lo, b_hi;              /* the working interval inside it */
    double b_prev;                  /* the bias the last call of this search returned */
    double eps_b;                   /* the SDCA tolerance of this iteration */
    int32_t in_sdca;                /* an SDCA solve is under way */
    int64_t budget;                 /* SDCA epochs left in it */
    int32_t limit;                  /* the driver's epoch or time limit stopped a solve */
} rates_mm_state;

struct strux_rates {
    strux_rates_options opt;
    /* the problem as configured */
    strux_subset_defs *defs;
    int32_t n_defs; /* [datasets] entries as given (the model file stores them) */
    char **def_name, **def_text;
    int32_t m;            /* constraints */
    char **con_name;      /* m names, config order */
    char **con_text;      /* m texts */
    char **con_origin;    /* m origins */
    strux_rates_expr **e; /* m + 1 parsed: e[0] the objective, e[1..m] the constraints */
    strux_rates_row *row; /* m + 1 canonical rows */
    /* baselines (`baseline PATH` atoms): a binary model, or training predictions from a file */
    int32_t n_base;
    strux_model **base;   /* n_base models (NULL for a prediction file) */
    int8_t **base_train;  /* n_base ±1 predictions of the local training rows */
    /* bound to the data */
    strux_comm *comm;
    char task[64];        /* the task baselines and rates.start must be models of (binary) */
    const strux_dataset *train;
    strux_dataset *inner; /* two rows per example: 2e carries x_e (hinge ½ + z), 2e+1 is empty */
    double lam;           /* λ of Ψ (margin ½) = 2·solver.lambda */
    int64_t N, n_local;
    int8_t *label;
    int32_t n_sets, *sets; /* subsets the rows use */
    uint8_t **member;      /* n_sets membership vectors */
    int64_t *n;            /* global size of every subset */
    double *Ab, *Bb;       /* (m+1)·n_local base coefficients Σ α/|D|, Σ β/|D| */
    int free_bias;         /* model.bias = free: Alg. 3 over b̃, the bias column out of the rows */
    int32_t bias_col;      /* the data's bias column (free bias), −1 otherwise */
    double bias_val;       /* its value c */
    double X;              /* max ||x_e|| over the inner rows (the interval B of §3.5) */
    /* the inner problem */
    double *ex;            /* 4 per local example: α̌_e, β̌_e, ||x_e||², 0 (the merged step) */
    uint8_t *pat;          /* anchor pattern per local example: 1 hinge on +, 2 hinge on − */
    double *gam;           /* m surrogate bounds γ̌ */
    double C0;             /* objective constant of the surrogate */
    double *z;             /* scores z = s/2 of the local examples (scratch) */
    double bt;             /* the stored bias b̃ of the inner problem */
    strux_solver *solver;  /* borrowed: the driver's SDCA */
    /* the last certificate of the inner problem (rates_inner.c), valid while cert_ok */
    int cert_ok;
    double P, D;           /* SDCA primal and dual (2·Ψ − constants) */
    double *G;             /* m + 1 constraint sums Σ A^j h+ + B^j h− at the certified model */
    double sum_xi;         /* Σ_e ξ_e (spec units) */
    /* the MM run */
    rates_mm_state st;
    int resumed;           /* the state came from a checkpoint */
    strux_model *anchor;   /* the MM anchor (the last kept step's model) */
    rates_cut *cuts;
    int32_t n_cuts, cap_cuts;
    rates_bcut *bcuts;
    int32_t n_bcuts, cap_bcuts;
    strux_lp *lp;          /* rank 0: the LP of the search in progress */
    double *viol;          /* m: the anchor's ramp constraint values − γ */
    double *v;             /* m multipliers of the last search */
    int have_v;            /* r->v holds a previous search's multipliers */
    double *mu;            /* LP dual weights of the cuts of the last search (n_cuts) */
    strux_rates_store kept; /* the model file's /rates of the MM step whose model is kept */
    /* data.test (strux_rates_bind_test): the NAME.test columns */
    const strux_dataset *test;
    uint8_t **test_member; /* n_sets vectors, NULL where a set is not evaluable on test */
    int64_t *test_n;       /* test size of every used subset (−1: not evaluable) */
    int8_t **base_test;    /* n_base test predictions (NULL: a prediction file) */
    /* metrics */
    int64_t total_cuts, total_bcuts, inner_epochs;
    double mm_objective, lp_s, step_s, comm_s, step_t0, lp0, comm0;
    double *ramp, *train_val, *test_val; /* m: ramp − γ, indicator − γ on train and test */
    double *rec;                         /* 3m: the same of the step being recorded */
    double rec_obj;                      /* its Problem 2 objective */
    int rec_kept;                        /* it was kept */
    int recording;                       /* the driver is taking an MM step's record */
    char **columns;                      /* NULL-terminated record column names */
};

/* ---- rates.c ---- */
strux_status strux_rates_dup(char **dst, const char *src);
/* Scores s = w̃·x of local row i of ds (the bias column's weight included). */
double strux_rates_score(const strux_model *m, const strux_dataset *ds, int64_t i);
/* Data blocks of this rank (at least 1) and the local examples [*e0, *e1) of block b of ds. */
int32_t strux_rates_blocks(const strux_dataset *ds);
void strux_rates_block_range(const strux_dataset *ds, int32_t b, int64_t *e0, int64_t *e1);
/* The subset index b in r->sets of subset k (k must be used). */
int32_t strux_rates_set_slot(const strux_rates *r, int32_t k);
/* The /rates snapshot of the current search (its iterates of positive LP weight). */
strux_status strux_rates_snapshot(const strux_rates *r, strux_rates_store *s);

/* ---- rates_inner.c ---- */
/* The inner dataset of the bound training rows (r->inner). */
strux_status strux_rates_inner_build(strux_rates *r);
/* r->z = s/2 of the local training examples under model m (the stored score, bias included). */
void strux_rates_scores(strux_rates *r, const strux_model *m);
/* New loss weights for multipliers v (α̌, β̌ of §3.7 from the pattern), the duals clipped into the
 * new boxes and w rebuilt from them (§3.7 "Warm start"); warm = 0 only sets the weights (the
 * duals and w come from a checkpoint). */
strux_status strux_rates_set_multipliers(strux_rates *r, const double *v, int warm);
/* The inner problem's bias b̃ (stored units): the loss shares follow, the duals and w stay. */
void strux_rates_set_bias(strux_rates *r, double bt);
/* SDCA epochs until the Ψ-gap is at most eps or r->st.budget epochs have run (the budget is
 * checkpointed, so a resumed solve continues where it stopped); *ok: the gap was reached. */
strux_status strux_rates_sdca(strux_rates *r, strux_driver *drv, double eps, int *ok);
/* Ψ and Ψ* (spec units, constants included) of the certified inner iterate at multipliers v. */
double strux_rates_psi(const strux_rates *r, const double *v);
double strux_rates_psi_dual(const strux_rates *r, const double *v);
/* The model the inner solver holds, with the bias column set to −b̃/c (free bias), into out. */
strux_status strux_rates_inner_model(strux_rates *r, strux_model *out);
/* Install the merged step and the certificate on the solver (after it is created). */
strux_status strux_rates_inner_attach(strux_rates *r, strux_solver *s);

/* ---- rates_cut.c: the cut models (pure functions, unit-tested against scans) ---- */
/* h(v) = min_s u_s + g_s (v − v_s) over n lines (m = 1). */
double strux_rates_envelope(int32_t n, const double *u, const double *g, const double *vs,
                            double v);
/* E.2 for m = 1: the centroid (v, z) of {(v, z): 0 ≤ v ≤ V, L ≤ z ≤ h(v)}. STRUX_ERR_NUMERIC when
 * the region is empty or has no area. */
strux_status strux_rates_center(int32_t n, const double *u, const double *g, const double *vs,
                                double V, double L, double *v, double *z);
/* The 1-D level-set midpoint (§3.4 [code]): the middle of {v ∈ [0, V]: h(v) ≥ L}. */
strux_status strux_rates_midpoint(int32_t n, const double *u, const double *g, const double *vs,
                                  double V, double L, double *v);
/* Alg. 3's model h'(b) = max_s l_s + g_s (b − b_s) over n lines on [lo, hi]: F.2.1, its minimum
 * *val at the smallest minimiser *b; F.2.2, the centroid (b, z) of {(b, z): lo ≤ b ≤ hi,
 * h'(b) ≤ z ≤ U}. */
strux_status strux_rates_bias_min(int32_t n, const double *l, const double *g, const double *bs,
                                  double lo, double hi, double *b, double *val);
strux_status strux_rates_bias_center(int32_t n, const double *l, const double *g, const double *bs,
                                     double lo, double hi, double U, double *b, double *z);

/* ---- rates_search.c ---- */
/* Append a multiplier cut (its iterate w copied; NULL for the flat cut) / a bias cut (G: m + 1
 * sums, or NULL), and drop them all. */
strux_status strux_rates_cut_push(strux_rates *r, double u, double l, const double *g,
                                  const double *v, const strux_model *w);
void strux_rates_cuts_free(strux_rates *r);
strux_status strux_rates_bcut_push(strux_rates *r, double b, double u, double l, double g,
                                   const double *G, const strux_model *w);
void strux_rates_bcuts_free(strux_rates *r);
/* The anchor's stored bias b̃' (free bias). */
double strux_rates_anchor_bias(const strux_rates *r);
/* A new multiplier search at the anchor (r->st.obj and r->viol its Problem 2 values). */
strux_status strux_rates_search_begin(strux_rates *r);
/* Alg. 2 from where the state is (a fresh search, or one a checkpoint stopped inside an
 * SVMOptimizer call) to its end, its model into ret, or to a run limit (r->st.limit). */
strux_status strux_rates_search_run(strux_rates *r, strux_driver *drv, strux_model *ret);

/* ---- rates_state.c: the hook's checkpoint state ---- */
strux_status strux_rates_mm_save(void *ctx, strux_blob *b);
strux_status strux_rates_mm_load(void *ctx, strux_blob *b);

/* ---- rates_report.c ---- */
/* The one-row weights of the binary model file at path (read on rank 0, its task and dimension
 * checked, broadcast) into out; what names it in messages ("baseline", "rates.start"). */
strux_status strux_rates_read_model(strux_rates *r, const char *path, const char *what,
                                    strux_model *out);
/* Read every baseline: models into r->base, their (or the files') training predictions into
 * r->base_train. */
strux_status strux_rates_baselines_read(strux_rates *r);
/* Each baseline's ±1 predictions of the local rows of ds (test: data.test; a prediction file
 * has none there, NULL), into pred (n_base entries, caller frees each with strux_free). */
strux_status strux_rates_baseline_predictions(strux_rates *r, const strux_dataset *ds, int test,
                                              int8_t **pred);
/* A constraint's two sides as written at positive rates sp (n: subset sizes, −1 where not
 * evaluable): *lhs, *rhs, *sat (−1: not evaluable), *ratio (LHS rate / RHS rate when each side is
 * one rate term, else NaN; for a ratio helper its ratio against its bound). */
void strux_rates_constraint_values(const strux_rates_expr *e, const int64_t *n, const double *sp,
                                   double *lhs, double *rhs, int *sat, double *ratio);
/* σ(z) = clip(½ + z, 0, 1). */
double strux_rates_ramp(double z);

#endif
