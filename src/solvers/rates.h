/* solvers/rates.h - rate expressions for training with dataset constraints (private to
 * src/solvers and its tests; dataset_constraints.md §1.3-§1.6, issue 15 [constraints]).
 *
 * A constraint `LHS <= RHS` or `LHS >= RHS` (or an objective, one side only) is parsed into signed
 * linear forms over rate terms c·(n(A)/n(B))·s(D), s = s_p or s_n, after the helpers are expanded
 * over derived subsets (registered as anonymous subsets in the strux_subset_defs):
 *     positive_rate(D) = s_p(D)              negative_rate(D) = s_n(D)
 *     coverage(D)      = s_p(D)              tpr(D) = recall(D) = s_p(D & positive)
 *     fnr(D) = s_n(D & positive)             fpr(D) = s_p(D & negative)
 *     tnr(D) = s_n(D & negative)
 *     error_rate(D)    = n(D&negative)/n(D&labeled)·s_p(D&negative)
 *                      + n(D&positive)/n(D&labeled)·s_n(D&positive)
 *     churn(D, B)      = n(D&B)/n(D)·s_n(D&B) + n(D-B)/n(D)·s_p(D-B)      (§1.6 erratum 1)
 * Ratio helpers, only as `precision(D) >= p` / `f1(D) >= φ` (or `p <= precision(D)`), are
 * multiplied through by their denominator and divided by n(D&positive) (§1.5, App. B):
 *     precision: (1-p)·s_p(D+) - p·n(D-)/n(D+)·s_p(D-) >= 0
 *     f1:        2(1-φ)·s_p(D+) - φ·s_n(D+) - φ·n(D-)/n(D+)·s_p(D-) >= 0
 * With the subset sizes n(·) (allreduced by the caller) a form becomes a canonical row
 * Σ_i α_i s_p(D_i) + β_i s_n(D_i) ≤ γ with α, β ≥ 0 (§1.4), which strux_rates_print writes back in
 * a form strux_rates_parse reads to the same row. Not Collective; no MPI, no data.
 *
 * Use (what the driver does, issue 15): strux_subset_define for each [datasets] key, then
 * strux_subset_check; strux_rates_parse for each [constraints] key in config order (and the
 * [rates] objective), which adds the derived subsets; after loading, strux_subset_eval of every
 * subset on the local rows, local counts allreduced into n[k]; strux_rates_canonical per
 * constraint (its row goes to the solver, strux_rates_print to the log and the model file);
 * strux_rates_cell_sets, strux_rates_cell_count on the local rows, the counts allreduced, then
 * strux_rates_feasible before any solve. */
#ifndef STRUX_RATES_H
#define STRUX_RATES_H

#include "strux/subsets.h"

/* c · n(num)/n(den) · s_side(set); num, den = -1 mean 1. */
typedef struct strux_rates_term {
    int32_t set;      /* subset index in the strux_subset_defs */
    int8_t side;      /* +1: s_p (positive rate), -1: s_n (negative rate) */
    int32_t num, den; /* count weight n(num)/n(den), or -1 */
    double c;         /* signed coefficient */
} strux_rates_term;

/* Σ terms + c0. */
typedef struct strux_rates_linear {
    strux_rates_term *terms;
    int32_t n_terms, cap;
    double c0;
} strux_rates_linear;

/* Ratio helper kinds (strux_rates_expr.ratio). */
enum { STRUX_RATES_NO_RATIO, STRUX_RATES_PRECISION, STRUX_RATES_F1 };

/* A parsed constraint or objective. The linear forms hold the helpers already expanded. */
typedef struct strux_rates_expr {
    char *name;             /* constraint key, "objective" for the objective */
    char *text;             /* as written (trimmed) */
    char *origin;           /* "adult.ini:14", "--set" */
    int objective;          /* nonzero: no comparison; minimise lhs */
    int sense;              /* constraints: +1 for LHS <= RHS, -1 for LHS >= RHS */
    char *lhs_text;         /* the left side as written (messages) */
    char *rhs_text;         /* the right side as written ("" for an objective) */
    strux_rates_linear lhs; /* left side */
    strux_rates_linear rhs; /* right side (empty for an objective) */
    int ratio;              /* STRUX_RATES_NO_RATIO, _PRECISION or _F1 */
    int32_t ratio_pos;      /* ratio helpers: subset D & positive */
    int32_t ratio_neg;      /* ratio helpers: subset D & negative */
    double ratio_bound;     /* ratio helpers: p or φ */
} strux_rates_expr;

/* Canonical row (§1.4): constraint Σ_i α_i s_p(set_i) + β_i s_n(set_i) ≤ gamma; objective
 * Σ_i (...) + c0. Sets ascend and appear once; α_i, β_i ≥ 0, not both 0. */
typedef struct strux_rates_row {
    int objective; /* nonzero: an objective row (c0 used, gamma unused) */
    int32_t n;     /* terms */
    int32_t *set;  /* n subset indices, ascending */
    double *alpha; /* n coefficients of s_p, ≥ 0 */
    double *beta;  /* n coefficients of s_n, ≥ 0 */
    double gamma;  /* constraint bound */
    double c0;     /* objective constant (kept for reporting, §1.4) */
} strux_rates_row;

/* Parse `name = text` (objective nonzero: an objective, no comparison) into *out (caller
 * destroys). Dataset arguments are subset expressions over d (strux_subset_check must have
 * passed); derived subsets are added to d as anonymous subsets. Errors (STRUX_ERR_CONFIG, led by
 * origin and `constraint NAME = 'text'`): a syntax error with its column and what was expected;
 * an unknown function (listing the valid ones); an unknown dataset (listing the defined ones); a
 * product of two rates or a division by one; a ratio helper anywhere but alone against a constant
 * bound; a label helper on a dataset that has no rows of the needed label (tpr(unlabeled));
 * a comparison in an objective or none in a constraint. */
strux_status strux_rates_parse(strux_subset_defs *d, const char *name, const char *text,
                               const char *origin, int objective, strux_rates_expr **out);
void strux_rates_expr_destroy(strux_rates_expr **p);

/* Canonical row of e given the global size n[k] of every subset k of d (strux_subset_count
 * entries; only the sets e uses are read). The caller frees row with strux_rates_row_free.
 * Errors: STRUX_ERR_CONFIG when a rate's set, or the denominator of a count weight, is empty
 * (naming the constraint and the subset); STRUX_ERR_NOMEM. */
strux_status strux_rates_canonical(const strux_rates_expr *e, const strux_subset_defs *d,
                                   const int64_t *n, strux_rates_row *row);
void strux_rates_row_free(strux_rates_row *row);
/* Write a row as `a*positive_rate(D) + b*negative_rate(E) <= g` (an objective: `... + c0`), with
 * the shortest decimal that reads back to the same double; *out is caller-owned (strux_free).
 * Parsing the text back and canonicalising it with the same n gives the same row. */
strux_status strux_rates_print(const strux_rates_row *row, const strux_subset_defs *d, char **out);

/* Σ α_i s_p[set_i] + β_i (1 - s_p[set_i]): the row's left side at positive rates s_p (indexed by
 * subset, randomised reading s_n = 1 - s_p, §1.2). */
double strux_rates_row_value(const strux_rates_row *row, const double *s_p);
/* Σ c·n(num)/n(den)·s + c0 of a linear form at positive rates s_p and sizes n (the sizes must
 * make every weight defined). */
double strux_rates_linear_value(const strux_rates_linear *f, const int64_t *n, const double *s_p);

/* ---- the merged two-hinge coordinate step (rates.c, §3.7) ---- */
/* The maximiser over ξ ∈ [−b, a] of 2·min(a, ξ + b) − ξ + s·(ξ − xi) − Q(ξ − xi)²/2: the dual of
 * the loss a·max(0, 1 + s) + b·max(0, 1 − s) of stored score s (two hinges on one example, duals
 * split as ξ+ = min(a, ξ + b), ξ− = ξ+ − ξ) with curvature Q = σ′||x||²/(λW) > 0 (Q = 0: the
 * step of a zero feature vector). a, b ≥ 0. Not Collective. */
double strux_rates_two_hinge_step(double xi, double a, double b, double s, double Q);

/* ---- the infeasibility check (rates_feasible.c) ---- */

/* At most this many subsets span the cell partition: its counts are 2^n_sets int64s (8 MB), small
 * enough to allreduce densely. */
#define STRUX_RATES_MAX_CELL_SETS 20

/* The partition of the training rows by membership in n_sets subsets: row pattern p has bit b set
 * when the row belongs to subset sets[b]; count[p] rows have pattern p (2^n_sets entries, summed
 * over ranks by the caller). Every pointer is borrowed. */
typedef struct strux_rates_cells {
    int32_t n_sets;       /* ≤ STRUX_RATES_MAX_CELL_SETS */
    const int32_t *sets;  /* n_sets subset indices */
    const int64_t *count; /* 2^n_sets global row counts */
} strux_rates_cells;

/* The subsets whose rates m expressions use (every term's set and the ratio helpers' D+ and D-),
 * ascending, into sets (room for strux_subset_count entries) and *n_sets. STRUX_ERR_CONFIG when
 * there are more than STRUX_RATES_MAX_CELL_SETS. */
strux_status strux_rates_cell_sets(const strux_rates_expr *const *e, int32_t m,
                                   const strux_subset_defs *d, int32_t *sets, int32_t *n_sets);
/* count[p] += number of the n_rows local rows whose pattern over member[0..n_sets) is p (member[b]
 * is the membership byte vector of subset sets[b]); count has 2^n_sets entries. */
void strux_rates_cell_count(int32_t n_sets, const uint8_t *const *member, int64_t n_rows,
                            int64_t *count);

/* Can the m constraints hold together on the training data for a randomised classifier that
 * predicts each example on its own? An LP over the cells (one variable per non-empty cell: the
 * share of it predicted positive, in [0, 1]; s_p(D) = Σ_{cells ⊆ D} count·x / n(D)) adds the
 * canonical rows in config order; the first constraint whose left side cannot reach γ with
 * those before it is reported in *failed (-1 when all can hold), with the best value in *best of
 * its left side as written (or of the side holding the rates, or LHS − RHS when both do; for a
 * ratio helper the best ratio, §1.5 multiplied-through reading) while the earlier ones hold.
 * n as for strux_rates_canonical; cells must cover strux_rates_cell_sets. Returns STRUX_OK, or
 * STRUX_ERR_CONFIG with e.g. `constraint cov_female (coverage(female) >= 0.9) cannot hold
 * together with cov_all on the training data: coverage(female) reaches at most 0.630`; errors of
 * strux_rates_canonical; STRUX_ERR_LP. Not Collective (run it on every rank or on rank 0 and
 * broadcast). */
strux_status strux_rates_feasible(const strux_rates_expr *const *e, int32_t m,
                                  const strux_subset_defs *d, const int64_t *n,
                                  const strux_rates_cells *cells, int32_t *failed, double *best);

#endif
