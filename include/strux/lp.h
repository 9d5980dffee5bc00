/* strux/lp.h - the one wrapper around GLPK (ARCHITECTURE.md §2, src/lp): a persistent
 * maximisation LP whose objective, row coefficients and row bounds change between solves and which
 * is re-solved by warm-started simplex from the previous basis (slack_bicriteria.md §2.4(b): "keep
 * the glp_prob object and warm-start from the last basis"; constraint rows are toggled by switching
 * their type to FREE rather than added and deleted). Indices are 0-based. Only src/lp/lp.c includes
 * <glpk.h>; this header exposes no GLPK type. Not thread-safe; one object per task instance.
 * Not Collective. */
#ifndef STRUX_LP_H
#define STRUX_LP_H

#include "strux/core.h"

typedef struct strux_lp strux_lp;

/* Kind of bound of a row or column. */
typedef enum strux_lp_bound {
    STRUX_LP_FREE,   /* unbounded: a FREE row constrains nothing (a switched-off row) */
    STRUX_LP_LOWER,  /* lo ≤ v */
    STRUX_LP_UPPER,  /* v ≤ hi */
    STRUX_LP_DOUBLE, /* lo ≤ v ≤ hi (lo < hi) */
    STRUX_LP_FIXED   /* v = lo */
} strux_lp_bound;

/* Outcome of a solve. */
typedef enum strux_lp_result {
    STRUX_LP_OPTIMAL,    /* an optimal vertex was found */
    STRUX_LP_INFEASIBLE, /* no point satisfies the rows and bounds */
    STRUX_LP_UNBOUNDED   /* the objective is unbounded above */
} strux_lp_result;

/* A problem with n_cols columns x_j ≥ 0 (bounds changeable), no rows, objective 0; n_cols is also
 * the most columns strux_lp_reset may ask for. */
strux_status strux_lp_create(int32_t n_cols, strux_lp **out);
/* Start over: n_cols columns (at most the count at create) x_j ≥ 0, no rows, objective 0, for a
 * problem built anew per solve (hierarchical.md §5.4: each example's pruned programme). No strux
 * allocation (GLPK's own only). */
strux_status strux_lp_reset(strux_lp *lp, int32_t n_cols);
void strux_lp_destroy(strux_lp **lp);
int32_t strux_lp_n_cols(const strux_lp *lp);
int32_t strux_lp_n_rows(const strux_lp *lp);

strux_status strux_lp_set_col_bounds(strux_lp *lp, int32_t j, strux_lp_bound type, double lo,
                                     double hi);
/* Append the row Σ_p val[p]·x_{idx[p]} with the given bound; its 0-based index goes to *row.
 * Indices must be distinct and in [0, n_cols). */
strux_status strux_lp_add_row(strux_lp *lp, int32_t n, const int32_t *idx, const double *val,
                              strux_lp_bound type, double lo, double hi, int32_t *row);
/* Replace the coefficients of row r (same rules as add_row). */
strux_status strux_lp_set_row(strux_lp *lp, int32_t r, int32_t n, const int32_t *idx,
                              const double *val);
/* Change the bound of row r; STRUX_LP_FREE switches the row off. */
strux_status strux_lp_set_row_bounds(strux_lp *lp, int32_t r, strux_lp_bound type, double lo,
                                     double hi);
/* Objective: maximise c0 + Σ_j c[j]·x_j (c has n_cols entries). */
void strux_lp_set_objective(strux_lp *lp, const double *c, double c0);

/* Solve by simplex from the last basis: primal simplex when only the objective changed since the
 * last solve, dual simplex (falling back to primal) when rows changed. *value is the objective at
 * the optimum (unset otherwise). STRUX_ERR_LP when GLPK fails even from a fresh basis. */
strux_status strux_lp_solve(strux_lp *lp, strux_lp_result *result, double *value);
/* The integer programme of the current problem (every column integral) by GLPK's branch and
 * bound, started from the LP relaxation (solved first unless the last strux_lp_solve was optimal
 * and nothing changed since). *value is its optimum and x (n_cols entries, may be NULL) its
 * solution, both set only when *result is STRUX_LP_OPTIMAL; STRUX_LP_INFEASIBLE when no integer
 * point is feasible, STRUX_LP_INFEASIBLE or STRUX_LP_UNBOUNDED as the relaxation's result when
 * that is not optimal. Columns stay continuous for later strux_lp_solve calls. Integer bounds
 * are the caller's business (GLPK refuses fractional bounds: STRUX_ERR_LP, as for any GLPK
 * failure). */
strux_status strux_lp_solve_integer(strux_lp *lp, strux_lp_result *result, double *value,
                                    double *x);
/* The next solve starts from the basis in which every row is basic and every column is non-basic
 * at the bound x[j] (x[j] must be one of column j's bounds): its vertex is x, so when x
 * satisfies the rows primal simplex starts there, without a phase 1 (a warm start from a known
 * feasible point, e.g. an incumbent integer solution). Overrides fresh for that solve. */
void strux_lp_start_at(strux_lp *lp, const double *x);
/* fresh = 1: every solve starts from GLPK's standard basis instead of the last one (slower, but
 * the answer then depends only on the current problem, not on the order of earlier solves - a
 * warm start may stop at another optimal vertex when the optimum is not unique). Default 0. */
void strux_lp_set_fresh_start(strux_lp *lp, int fresh);
/* The simplex's primal feasibility and optimality tolerance (GLPK's tol_bnd and tol_dj, relative
 * to the rows; default, and tol ≤ 0: GLPK's 1e-7). A reference solver that must be closer to the
 * optimum than 1e-7 sets 1e-10 or so on a well-scaled problem. */
void strux_lp_set_tolerance(strux_lp *lp, double tol);
/* The primal solution of the last optimal solve: x[j] for every column. */
void strux_lp_primal(const strux_lp *lp, double *x);
/* The row duals (shadow prices) of the last optimal solve: y[r] for every row, GLPK's sign
 * convention (for a maximisation, ≥ 0 on an active upper-bounded row). */
void strux_lp_row_duals(const strux_lp *lp, double *y);
/* Simplex iterations of every solve so far (instrumentation). */
int64_t strux_lp_iterations(const strux_lp *lp);

#endif
