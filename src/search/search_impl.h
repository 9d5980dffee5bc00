/* search/search_impl.h - private layout of searches and surrogates (STYLE.md §4), seen only by
 * src/search and white-box tests. A surrogate is a table of ψ and its partial derivatives on its
 * own plane (h, g), reached from the raw pair (m, L) of an oracle answer by a fixed map
 * (slack_bicriteria.md §1.3, §1.6); a search is an ops table with its own per-example state,
 * answering one surrogate with λ-oracle calls made through the plane helpers of plane.c. */
#ifndef STRUX_SEARCH_IMPL_H
#define STRUX_SEARCH_IMPL_H

#include "strux/search.h"

/* How a surrogate's plane coordinates follow from an answer (m, L, |y|). */
typedef enum strux_plane {
    STRUX_PLANE_LOSS, /* h = m + h_shift, g = L (§1.3) */
    STRUX_PLANE_F1    /* h = L + m, g = −(|y| + |y_i|) (§1.6) */
} strux_plane;

typedef struct strux_surrogate {
    const char *name;
    const char *default_search; /* what surrogate.search = auto picks */
    strux_plane plane;
    double h_shift;             /* LOSS plane: 1 for slack rescaling (h = 1 + m), else 0 */
    int hg;                     /* ψ = h·g (slack rescaling): closed-form line maximum (§3.7) */
    double (*psi)(const struct strux_surrogate *u, double h, double g);
    double (*psi_h)(const struct strux_surrogate *u, double h, double g); /* ∂ψ/∂h = ∂ψ/∂m */
    double (*psi_g)(const struct strux_surrogate *u, double h, double g); /* ∂ψ/∂g */
    double beta;                /* β of β-scaling */
    int convex;                 /* ProbLoss: tangent continuation for h > 0 (§1.5) */
    unsigned caps;              /* STRUX_CAP_AFFINE (the plane of an answer is exact, so the dual
                                   solvers apply, §4.2: all but ProbLoss), ONE_CALL, SLACK_FORM */
    const char *const *keys;    /* keys of [surrogate] only this surrogate reads */
} strux_surrogate;

/* A label's point: raw pair, size and plane coordinates. */
typedef struct strux_point {
    double m, L, size; /* f(y) − f(y_i), L(y, y_i), |y| */
    double h, g;       /* plane coordinates */
} strux_point;

struct strux_search_ops {
    strux_status (*run)(strux_search *s, strux_task *t, const strux_pot *pot,
                        const strux_label *truth, strux_search_result *r);
    void (*destroy)(strux_search *s);
    /* optional: the per-example warm-start state, for checkpoints (strux_search_save) */
    strux_status (*save)(const strux_search *s, int64_t i0, int64_t i1, strux_blob *b);
    strux_status (*load)(strux_search *s, int64_t i0, int64_t i1, strux_blob *b);
};

struct strux_search {
    const struct strux_search_ops *ops;
    const char *type_name;
    strux_surrogate u;      /* the surrogate answered */
    strux_search_options opt;
    strux_label y, y2;      /* answer buffers */
    strux_label scratch;    /* oracle answer buffer */
    int64_t n_local;        /* examples the per-example state is sized for */
    unsigned caps;          /* STRUX_CAP_* of the search row and of its surrogate */
    double xi;              /* slack of the next run, NAN when unset */
    double size_truth;      /* |y_i| of the current run (F1 plane) */
    int64_t calls;          /* oracle calls of the current run */
    void *data;             /* implementation state, owned */
};

/* Registry row: name, constructor, the surrogate flags it needs (STRUX_CAP_ONE_CALL: ψ = h + g;
 * STRUX_CAP_SLACK_FORM: slack rescaling; 0: any surrogate), its own flags (NEEDS_SLACK,
 * NEEDS_WEDGE) and the keys of [surrogate] only this search reads. */
typedef struct strux_search_entry {
    const char *name;
    strux_status (*create)(const strux_search_options *opt, const strux_task *t,
                           const strux_dataset *ds, strux_search *s);
    unsigned needs;
    unsigned caps;
    const char *const *keys;
} strux_search_entry;

extern const strux_search_entry strux_search_registry[];
/* The surrogate named opt->type (with its parameters from opt), or STRUX_ERR_CONFIG. */
strux_status strux_surrogate_lookup(const strux_search_options *opt, strux_surrogate *u);
/* The surrogate table: rows up to a NULL name. */
extern const strux_surrogate strux_surrogates[];

/* ---- plane helpers (plane.c) ---- */
/* Task query maximising a·h + b·g on u's plane (a, b ≥ 0, not both 0). */
strux_query strux_plane_query(const strux_surrogate *u, double a, double b);
/* Plane coordinates of an answer's raw pair. */
void strux_plane_map(const strux_surrogate *u, double size_truth, strux_point *p);
/* One counted oracle call with query q; *found = 0 when a wedge or ban list leaves nothing. */
strux_status strux_plane_call(strux_search *s, strux_task *t, const strux_pot *pot,
                              const strux_label *truth, const strux_query *q, strux_label *y,
                              strux_point *p, int *found);
/* Point of a known label re-scored under the current potentials (no oracle call). */
void strux_plane_eval(const strux_search *s, const strux_task *t, const strux_pot *pot,
                      const strux_label *truth, const strux_label *y, strux_point *p);
/* Start of a run: reset the call count and record |y_i|. */
void strux_plane_begin(strux_search *s, const strux_task *t, const strux_label *truth);
/* Fill r with an integral answer y (copied into s->y) at point p, bound ub. */
strux_status strux_search_answer(strux_search *s, const strux_label *y, const strux_point *p,
                                 double ub, strux_search_result *r);
/* Fill r with the fractional answer mix·ya + (1 − mix)·yb. */
strux_status strux_search_answer_mix(strux_search *s, const strux_label *ya, const strux_point *pa,
                                     const strux_label *yb, const strux_point *pb, double mix,
                                     double ub, strux_search_result *r);

/* Keep (y, p) as the run's answer (copied into s->y) if its ψ beats *phi_best. */
strux_status strux_search_offer(strux_search *s, const strux_label *y, const strux_point *p,
                                double *phi_best, strux_point *best);
/* Start of a slack-rescaling run: the truth as the answer so far (Φ = 0), one O(0) call (offered
 * too) and *lambda_c = Ĥ/Ĝ (A1), Ĥ = 1 + max m, Ĝ = the number of parts (largest Hamming loss). */
strux_status strux_search_start_slack(strux_search *s, strux_task *t, const strux_pot *pot,
                                      const strux_label *truth, double *phi_best,
                                      strux_point *best, double *lambda_c);

/* ---- label pool (pool.c): n fixed slots of labels in one block, for per-example state ---- */
typedef struct strux_label_pool {
    int64_t n;          /* slots */
    strux_label *slot;  /* views into the blocks below */
    int32_t *y_block;
    double *mu_block;
} strux_label_pool;
strux_status strux_label_pool_create(strux_label_pool *p, int64_t n, const strux_task *t,
                                     const strux_dataset *ds);
void strux_label_pool_free(strux_label_pool *p);
/* Every slot's label (parts, marginals) into b, and back; load checks the slot count and caps. */
/* Slots [first, first + n) as bytes, and back (the count must match). */
strux_status strux_label_pool_save(const strux_label_pool *p, int64_t first, int64_t n,
                                   strux_blob *b);
strux_status strux_label_pool_load(strux_label_pool *p, int64_t first, int64_t n,
                                   strux_blob *b);

/* ---- convex-hull primitives (hull.c), exposed for white-box tests ---- */
/* Maximum of ψ on the segment p + s·(q − p), s ∈ [0, 1] (§3.7 LineMax): closed form for ψ = hg,
 * golden section otherwise (ψ is quasi-concave, hence unimodal on a segment). Returns ψ there. */
double strux_hull_line_max(const strux_surrogate *u, double hp, double gp, double hq, double gq,
                           double *s_best);

strux_status strux_search_create_margin(const strux_search_options *opt, const strux_task *t,
                                        const strux_dataset *ds, strux_search *s);
strux_status strux_search_create_sarawagi(const strux_search_options *opt, const strux_task *t,
                                          const strux_dataset *ds, strux_search *s);
strux_status strux_search_create_binary(const strux_search_options *opt, const strux_task *t,
                                        const strux_dataset *ds, strux_search *s);
strux_status strux_search_create_bisect(const strux_search_options *opt, const strux_task *t,
                                        const strux_dataset *ds, strux_search *s);
strux_status strux_search_create_angular(const strux_search_options *opt, const strux_task *t,
                                         const strux_dataset *ds, strux_search *s);
strux_status strux_search_create_convex_hull(const strux_search_options *opt, const strux_task *t,
                                             const strux_dataset *ds, strux_search *s);

#endif
