/* strux/search.h - surrogates ψ(h, g) and the searches that answer "most violating label" for
 * them with λ-oracle calls (ARCHITECTURE.md §3 Search, slack_bicriteria.md §1.4, §3). A search
 * sees the task only through its oracle and knows nothing of solvers or MPI.
 * Convention: searches work on the raw pair (m, g) = (f(y) − f(y_i), L(y, y_i)) and each surrogate
 * applies its own shift (§1.3 implementation rule). */
#ifndef STRUX_SEARCH_H
#define STRUX_SEARCH_H

#include "strux/task.h"

typedef struct strux_search strux_search;

typedef struct strux_search_options {
    char type[STRUX_OPT_STR];   /* surrogate.type: the surrogate ψ */
    char search[STRUX_OPT_STR]; /* surrogate.search: the search answering it; auto = default */
} strux_search_options;
extern const strux_opt_spec strux_search_opt_specs[]; /* section [surrogate] */

/* The answer of one search. A fractional answer is mix·y + (1 − mix)·y2 (§1.8); labels are owned
 * by the search object and valid until its next run. */
typedef struct strux_search_result {
    const strux_label *y;  /* most violating label (first vertex if fractional) */
    const strux_label *y2; /* second vertex, or NULL when integral */
    double mix;            /* weight of y (1 when integral) */
    double m, g;           /* raw margin error and loss of the (mixed) answer */
    double psi;            /* Φ = ψ at the answer; the example's surrogate loss ℓ_i */
    double psi_h;          /* ∂ψ/∂m at the answer: the weight of Δφ in the subgradient (§1.8) */
    double ub;             /* certified upper bound on max_y ψ (INFINITY if none) */
    int64_t calls;         /* oracle calls this search used */
} strux_search_result;

/* Create the search named by opt for task t on the examples of ds (per-example warm-start state
 * is sized by ds). Unknown or incompatible names are STRUX_ERR_CONFIG listing valid ones. */
strux_status strux_search_create(const strux_search_options *opt, const strux_task *t,
                                 const strux_dataset *ds, strux_search **out);
void strux_search_destroy(strux_search **s);
/* Run on example pot->i with its truth. Not Collective. */
strux_status strux_search_run(strux_search *s, strux_task *t, const strux_pot *pot,
                              const strux_label *truth, strux_search_result *r);
const char *strux_search_name(const strux_search *s);    /* the search actually used */
const char *strux_surrogate_name(const strux_search *s); /* the surrogate */
/* Subgradient of ℓ_i at the result (§1.8): G += scale·ψ_h·Δφ_i(answer). Nothing when ψ ≤ 0. */
strux_status strux_search_add_subgradient(const strux_search_result *r, const strux_task *t,
                                          const strux_dataset *ds, int64_t i,
                                          const strux_label *truth, double scale, double *G);

#endif
