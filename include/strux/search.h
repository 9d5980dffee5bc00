/* strux/search.h - surrogates ψ(h, g) and the searches that answer "most violating label" for
 * them with λ-oracle calls (ARCHITECTURE.md §3 Search, slack_bicriteria.md §1.4, §3). A search
 * sees the task only through its oracle and knows nothing of solvers or MPI.
 * Convention: results carry the raw pair (m, g) = (f(y) − f(y_i), L(y, y_i)); each surrogate maps
 * it to its own plane (h, g) (shift h = 1 + m for slack rescaling, h = L + m and g = −(|y| + |y_i|)
 * for the Micro-F1 surrogate; §1.3 implementation rule, §1.6).
 * Surrogates: margin, slack, beta (β-scaling), probloss (ProbLoss, convex extension by default),
 * microf1. Searches: margin (one call), sarawagi (§3.2, needs the slack ξ_i), binary (§3.3),
 * bisect (§3.4), angular (§3.6, constrained oracle), convex_hull (§3.7, with the ban-list integral
 * recovery of §3.8 when surrogate.integral is set). */
#ifndef STRUX_SEARCH_H
#define STRUX_SEARCH_H

#include "strux/task.h"

typedef struct strux_search strux_search;

/* Options of section [surrogate]. Fill with strux_search_options_default() before setting fields
 * by hand: a caller that zero-initialises the struct and sets only type/search gets the defaults
 * of max_calls and tol (0 there means "default"), but eps = 0 (exact stop) and no cache. */
typedef struct strux_search_options {
    char type[STRUX_OPT_STR];   /* surrogate.type: the surrogate ψ */
    char search[STRUX_OPT_STR]; /* surrogate.search: the search answering it; auto = default */
    double beta;                /* surrogate.beta: β of β-scaling, [0, 1] */
    int probloss_convex;        /* surrogate.probloss_convex: tangent continuation for m > 0 */
    int integral;               /* surrogate.integral: convex_hull returns an integral label */
    double eps;                 /* surrogate.eps: stop when best ≥ (1 − eps)·certified bound */
    double tol;                 /* surrogate.tol: relative width of the λ interval that stops
                                   sarawagi, binary and bisect */
    int64_t max_calls;          /* surrogate.max_calls: oracle calls per search at most */
    char queue[STRUX_OPT_STR];  /* surrogate.queue: angular queue, priority (by bound) or fifo */
    int64_t cache;              /* surrogate.cache: labels remembered per example (angular) */
    int warm_start;             /* surrogate.warm_start: per-example λ (bisect) / hull vertices
                                   (convex_hull) from the previous visit */
} strux_search_options;
extern const strux_opt_spec strux_search_opt_specs[]; /* section [surrogate] */
/* Every field at its documented default. */
strux_status strux_search_options_default(strux_search_options *opt);

/* The answer of one search. A fractional answer is mix·y + (1 − mix)·y2 (§1.8); labels are owned
 * by the search object and valid until its next run. */
typedef struct strux_search_result {
    const strux_label *y;  /* most violating label (first vertex if fractional) */
    const strux_label *y2; /* second vertex, or NULL when integral */
    double mix;            /* weight of y (1 when integral) */
    double m, g;           /* raw margin error and loss of the (mixed) answer */
    double psi;            /* Φ = ψ at the answer; the example's surrogate loss ℓ_i */
    double psi_h;  /* ∂ψ/∂m at the answer: the weight of Δφ in the subgradient (§1.8) */
    double ub;     /* certified upper bound on max_y ψ (INFINITY if none) */
    int64_t calls; /* oracle calls this search used */
} strux_search_result;

/* Create the search named by opt for task t on the examples of ds (per-example warm-start state
 * is sized by ds->n_local and allocated here, never per example). Unknown or incompatible names
 * are STRUX_ERR_CONFIG listing valid ones. */
strux_status strux_search_create(const strux_search_options *opt, const strux_task *t,
                                 const strux_dataset *ds, strux_search **out);
/* A search for the same surrogate that answers max_y ψ exactly, for objectives and certificates:
 * the surrogate's default search with eps = 0, no cache or warm start and a 10,000-call guard
 * (convex_hull keeps s's surrogate.integral). Its state is separate from s, so evaluating the
 * objective does not change a training run's trajectory. */
strux_status strux_search_create_exact(const strux_search *s, const strux_task *t,
                                       const strux_dataset *ds, strux_search **out);
void strux_search_destroy(strux_search **s);
/* Run on example pot->i (local index) with its truth. Not Collective. */
strux_status strux_search_run(strux_search *s, strux_task *t, const strux_pot *pot,
                              const strux_label *truth, strux_search_result *r);
/* The example's current slack ξ_i ≥ 0 for the next strux_search_run only (§3.2). Only the
 * Sarawagi-Gupta search reads it, and it refuses to run without it (STRUX_ERR_UNSUPPORTED):
 * ξ_i exists only inside an n-slack cutting-plane solver (ξ_i = max(0, max over the working set
 * W_i of the constraint values)). Other searches ignore it. */
void strux_search_set_slack(strux_search *s, double xi);
/* The flags of the search's row and its surrogate (STRUX_CAP_NEEDS_SLACK: strux_search_set_slack
 * before every run; STRUX_CAP_AFFINE: the planes below are exact, so the dual solvers apply;
 * STRUX_CAP_ONE_CALL, STRUX_CAP_SLACK_FORM, STRUX_CAP_NEEDS_WEDGE). */
unsigned strux_search_caps(const strux_search *s);
/* The same flags from the options alone (before any data is read), checked against each other
 * and against the task's flags; the search's name (auto resolved) into name. */
strux_status strux_search_type_caps(const strux_search_options *opt, unsigned task_caps,
                                    unsigned *caps, char *name, size_t n);
/* Names of the surrogates whose flags include caps (static buffer). */
const char *strux_surrogate_names(unsigned caps);
/* Does the chosen surrogate or search read key? (1 for keys of [surrogate] every one reads) */
int strux_search_reads_key(const strux_search_options *opt, const char *key);
/* "surrogate.search=a|b" (or surrogate.type=...) for a key only some read, "" otherwise. */
void strux_search_key_readers(const char *key, char *buf, size_t n);
/* The per-example warm-start state (label caches, λ warm starts, hull vertices) of local examples
 * [i0, i1) as bytes, and back, for checkpoints (one data block at a time, so a checkpoint
 * resumes at another rank count): a resumed run continues the same trajectory. load needs a
 * search created with the same options. Not Collective. */
strux_status strux_search_save(const strux_search *s, int64_t i0, int64_t i1, strux_blob *b);
strux_status strux_search_load(strux_search *s, int64_t i0, int64_t i1, strux_blob *b);
const char *strux_search_name(const strux_search *s);    /* the search actually used */
const char *strux_surrogate_name(const strux_search *s); /* the surrogate */
/* Subgradient of ℓ_i at the result (§1.8): G += scale·ψ_h·Δφ_i(answer). Nothing when ψ ≤ 0. */
strux_status strux_search_add_subgradient(const strux_search_result *r, const strux_task *t,
                                          const strux_dataset *ds, int64_t i,
                                          const strux_label *truth, double scale, strux_model *G);
/* The answer's plane ℓ_i(w') ≥ b + w'·a with a = ψ_h·Δφ_i(answer) and b = ψ − ψ_h·m
 * (slack_bicriteria.md §4: exact where ψ is affine in h, strux_search_affine), in dual-block form:
 * c += scale·coef(a) (task.h "Dual blocks"); the zero plane (nothing added, b = 0) when ψ ≤ 0. */
strux_status strux_search_block_add(const strux_search_result *r, const strux_task *t,
                                    const strux_dataset *ds, int64_t i, const strux_label *truth,
                                    double scale, double *c);
double strux_search_intercept(const strux_search_result *r);

#endif
