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
 * a form strux_rates_parse reads to the same row. Not Collective; no MPI, no data. */
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

#endif
