/* lp/lp.c - the GLPK wrapper (strux/lp.h): the only file that includes <glpk.h> (STYLE.md §1).
 * One glp_prob lives as long as the strux_lp; between solves only the objective, some row
 * coefficients and row types change, so glp_simplex restarts from the last basis
 * (slack_bicriteria.md §2.4(b)): primal simplex after objective-only changes (the old basis stays
 * primal feasible), dual simplex after row changes (a switched-on wedge row usually cuts the old
 * vertex off, which the dual method repairs). A failing warm start is retried once from the
 * standard basis before STRUX_ERR_LP; with strux_lp_set_fresh_start every solve starts there.
 * A problem rebuilt per solve (strux_lp_reset) can instead start at a known feasible vertex
 * (strux_lp_start_at: every row basic, every column at the given bound; primal simplex).
 * strux_lp_solve_integer runs glp_intopt (branch and bound, all columns integer) from the solved
 * relaxation. Presolve is off (it would discard the basis) and GLPK's terminal output is
 * silenced: nothing below src/cli prints. */
#include "strux/lp.h"

#include <glpk.h>
#include <math.h>

struct strux_lp {
    glp_prob *P;
    int32_t n_cols;
    int32_t max_cols;   /* columns at create: the scratch's size and strux_lp_reset's limit */
    int start_set;      /* strux_lp_start_at set the basis of the next solve */
    int rows_changed;   /* rows changed since the last solve: dual simplex */
    int lp_current;     /* the last solve was optimal and nothing changed since (intopt's start) */
    int fresh;          /* start every solve from the standard basis */
    double tol;         /* simplex feasibility and optimality tolerance (0: GLPK's 1e-7) */
    int64_t iterations; /* simplex iterations over every solve */
    int *ind;           /* n_cols + 1 scratch for GLPK's 1-based index arrays */
    double *val;        /* n_cols + 1 scratch */
};

static int glpk_type(strux_lp_bound type)
{
    switch (type) {
    case STRUX_LP_FREE:
        return GLP_FR;
    case STRUX_LP_LOWER:
        return GLP_LO;
    case STRUX_LP_UPPER:
        return GLP_UP;
    case STRUX_LP_DOUBLE:
        return GLP_DB;
    case STRUX_LP_FIXED:
        return GLP_FX;
    }
    return GLP_FR;
}

/* GLPK aborts the process on invalid bounds, so they are checked here first. */
static strux_status check_bounds(strux_lp_bound type, double lo, double hi, const char *what,
                                 int32_t k)
{
    int need_lo = type == STRUX_LP_LOWER || type == STRUX_LP_DOUBLE || type == STRUX_LP_FIXED;
    int need_hi = type == STRUX_LP_UPPER || type == STRUX_LP_DOUBLE;
    STRUX_CHECK((!need_lo || isfinite(lo)) && (!need_hi || isfinite(hi)), STRUX_ERR_LP,
                "%s %d: bound (%g, %g) is not finite", what, k, lo, hi);
    STRUX_CHECK(type != STRUX_LP_DOUBLE || lo < hi, STRUX_ERR_LP,
                "%s %d: double bound needs lo < hi, got (%g, %g)", what, k, lo, hi);
    return STRUX_OK;
}

strux_status strux_lp_create(int32_t n_cols, strux_lp **out)
{
    STRUX_CHECK(n_cols > 0, STRUX_ERR_INTERNAL, "LP with %d columns", n_cols);
    strux_lp *lp;
    STRUX_TRY(strux_alloc(&lp, sizeof *lp));
    strux_status st;
    STRUX_TRY_GOTO(st, strux_alloc_array(&lp->ind, (size_t)n_cols + 1, sizeof *lp->ind), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&lp->val, (size_t)n_cols + 1, sizeof *lp->val), fail);
    glp_term_out(GLP_OFF);
    lp->P = glp_create_prob();
    STRUX_CHECK_GOTO(st, lp->P, STRUX_ERR_LP, fail, "glp_create_prob failed");
    lp->max_cols = n_cols;
    STRUX_TRY_GOTO(st, strux_lp_reset(lp, n_cols), fail);
    *out = lp;
    return STRUX_OK;
fail:
    strux_lp_destroy(&lp);
    return st;
}

strux_status strux_lp_reset(strux_lp *lp, int32_t n_cols)
{
    STRUX_CHECK(n_cols > 0 && n_cols <= lp->max_cols, STRUX_ERR_INTERNAL,
                "LP reset to %d columns, outside [1, %d]", n_cols, lp->max_cols);
    glp_erase_prob(lp->P);
    glp_set_obj_dir(lp->P, GLP_MAX);
    glp_add_cols(lp->P, n_cols);
    for (int j = 1; j <= n_cols; j++)
        glp_set_col_bnds(lp->P, j, GLP_LO, 0.0, 0.0);
    lp->n_cols = n_cols;
    lp->rows_changed = 1;
    lp->lp_current = 0;
    lp->start_set = 0;
    return STRUX_OK;
}

void strux_lp_destroy(strux_lp **lp)
{
    if (!*lp) return;
    if ((*lp)->P) glp_delete_prob((*lp)->P);
    strux_free(&(*lp)->ind);
    strux_free(&(*lp)->val);
    strux_free(lp);
}

int32_t strux_lp_n_cols(const strux_lp *lp)
{
    return lp->n_cols;
}

int32_t strux_lp_n_rows(const strux_lp *lp)
{
    return glp_get_num_rows(lp->P);
}

strux_status strux_lp_set_col_bounds(strux_lp *lp, int32_t j, strux_lp_bound type, double lo,
                                     double hi)
{
    STRUX_CHECK(j >= 0 && j < lp->n_cols, STRUX_ERR_INTERNAL, "LP column %d outside [0, %d)", j,
                lp->n_cols);
    STRUX_TRY(check_bounds(type, lo, hi, "column", j));
    glp_set_col_bnds(lp->P, j + 1, glpk_type(type), lo, hi);
    lp->rows_changed = 1;
    lp->lp_current = 0;
    return STRUX_OK;
}

/* Copy a 0-based sparse row into the 1-based scratch arrays, checking the indices. */
static strux_status load_row(strux_lp *lp, int32_t n, const int32_t *idx, const double *val)
{
    STRUX_CHECK(n >= 0 && n <= lp->n_cols, STRUX_ERR_INTERNAL, "LP row with %d entries", n);
    for (int32_t p = 0; p < n; p++) {
        STRUX_CHECK(idx[p] >= 0 && idx[p] < lp->n_cols, STRUX_ERR_INTERNAL,
                    "LP row entry %d: column %d outside [0, %d)", p, idx[p], lp->n_cols);
        STRUX_CHECK(isfinite(val[p]), STRUX_ERR_NUMERIC, "LP row coefficient of column %d is %g",
                    idx[p], val[p]);
        lp->ind[p + 1] = idx[p] + 1;
        lp->val[p + 1] = val[p];
    }
    /* GLPK aborts on duplicate indices: reject them here (rows are short, O(n²) is fine) */
    for (int32_t p = 0; p < n; p++)
        for (int32_t q = p + 1; q < n; q++)
            STRUX_CHECK(idx[p] != idx[q], STRUX_ERR_INTERNAL, "LP row: column %d appears twice",
                        idx[p]);
    return STRUX_OK;
}

strux_status strux_lp_add_row(strux_lp *lp, int32_t n, const int32_t *idx, const double *val,
                              strux_lp_bound type, double lo, double hi, int32_t *row)
{
    int32_t r = glp_get_num_rows(lp->P);
    STRUX_TRY(check_bounds(type, lo, hi, "row", r));
    STRUX_TRY(load_row(lp, n, idx, val));
    glp_add_rows(lp->P, 1);
    glp_set_mat_row(lp->P, r + 1, n, lp->ind, lp->val);
    glp_set_row_bnds(lp->P, r + 1, glpk_type(type), lo, hi);
    lp->rows_changed = 1;
    lp->lp_current = 0;
    if (row) *row = r;
    return STRUX_OK;
}

strux_status strux_lp_set_row(strux_lp *lp, int32_t r, int32_t n, const int32_t *idx,
                              const double *val)
{
    STRUX_CHECK(r >= 0 && r < glp_get_num_rows(lp->P), STRUX_ERR_INTERNAL,
                "LP row %d outside [0, %d)", r, glp_get_num_rows(lp->P));
    STRUX_TRY(load_row(lp, n, idx, val));
    glp_set_mat_row(lp->P, r + 1, n, lp->ind, lp->val);
    lp->rows_changed = 1;
    lp->lp_current = 0;
    return STRUX_OK;
}

strux_status strux_lp_set_row_bounds(strux_lp *lp, int32_t r, strux_lp_bound type, double lo,
                                     double hi)
{
    STRUX_CHECK(r >= 0 && r < glp_get_num_rows(lp->P), STRUX_ERR_INTERNAL,
                "LP row %d outside [0, %d)", r, glp_get_num_rows(lp->P));
    STRUX_TRY(check_bounds(type, lo, hi, "row", r));
    glp_set_row_bnds(lp->P, r + 1, glpk_type(type), lo, hi);
    lp->rows_changed = 1;
    lp->lp_current = 0;
    return STRUX_OK;
}

void strux_lp_set_objective(strux_lp *lp, const double *c, double c0)
{
    lp->lp_current = 0;
    glp_set_obj_coef(lp->P, 0, c0);
    for (int32_t j = 0; j < lp->n_cols; j++)
        glp_set_obj_coef(lp->P, j + 1, c[j]);
}

/* One glp_simplex call with the given method; returns GLPK's code. */
static int run_simplex(strux_lp *lp, int meth)
{
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.meth = meth;
    parm.presolve = GLP_OFF;
    if (lp->tol > 0) parm.tol_bnd = parm.tol_dj = lp->tol;
    int before = glp_get_it_cnt(lp->P);
    int rc = glp_simplex(lp->P, &parm);
    lp->iterations += glp_get_it_cnt(lp->P) - before;
    return rc;
}

/* Map GLPK's solution status to a result; 0 when it is not conclusive. */
static int classify(glp_prob *P, strux_lp_result *result)
{
    int st = glp_get_status(P);
    if (st == GLP_OPT) {
        *result = STRUX_LP_OPTIMAL;
        return 1;
    }
    if (st == GLP_NOFEAS || glp_get_prim_stat(P) == GLP_NOFEAS) {
        *result = STRUX_LP_INFEASIBLE;
        return 1;
    }
    if (st == GLP_UNBND ||
        (glp_get_prim_stat(P) == GLP_FEAS && glp_get_dual_stat(P) == GLP_NOFEAS)) {
        *result = STRUX_LP_UNBOUNDED;
        return 1;
    }
    return 0;
}

void strux_lp_set_fresh_start(strux_lp *lp, int fresh)
{
    lp->fresh = fresh;
}

void strux_lp_start_at(strux_lp *lp, const double *x)
{
    int m = glp_get_num_rows(lp->P);
    for (int i = 1; i <= m; i++)
        glp_set_row_stat(lp->P, i, GLP_BS);
    for (int j = 1; j <= lp->n_cols; j++) {
        int type = glp_get_col_type(lp->P, j);
        int stat = type == GLP_FR ? GLP_NF : type == GLP_FX ? GLP_NS : GLP_NL;
        if ((type == GLP_UP || type == GLP_DB) && x[j - 1] == glp_get_col_ub(lp->P, j))
            stat = GLP_NU;
        glp_set_col_stat(lp->P, j, stat);
    }
    lp->start_set = 1;
    lp->lp_current = 0;
}

void strux_lp_set_tolerance(strux_lp *lp, double tol)
{
    lp->tol = tol;
}

strux_status strux_lp_solve(strux_lp *lp, strux_lp_result *result, double *value)
{
    /* a start at a feasible vertex wants primal simplex; after row changes the old basis is
     * repaired by dual simplex */
    if (lp->fresh && !lp->start_set) glp_std_basis(lp->P);
    int primal = lp->fresh || lp->start_set || !lp->rows_changed;
    lp->start_set = 0;
    int rc = run_simplex(lp, primal ? GLP_PRIMAL : GLP_DUALP);
    if (rc != 0 || !classify(lp->P, result)) {
        /* warm start failed (singular or invalid basis, stalled dual phase): start afresh */
        glp_std_basis(lp->P);
        rc = run_simplex(lp, GLP_PRIMAL);
        STRUX_CHECK(rc == 0, STRUX_ERR_LP,
                    "glp_simplex failed with code %d on an LP of %d rows "
                    "and %d columns",
                    rc, glp_get_num_rows(lp->P), lp->n_cols);
        STRUX_CHECK(classify(lp->P, result), STRUX_ERR_LP,
                    "glp_simplex ended without a conclusive status (%d) on an LP of %d rows and "
                    "%d columns",
                    glp_get_status(lp->P), glp_get_num_rows(lp->P), lp->n_cols);
    }
    lp->rows_changed = 0;
    lp->lp_current = *result == STRUX_LP_OPTIMAL;
    if (*result == STRUX_LP_OPTIMAL) *value = glp_get_obj_val(lp->P);
    return STRUX_OK;
}

/* Branch and bound over all-integer columns from the optimal LP relaxation (presolve off, so
 * intopt needs that optimal basis; hierarchical.md §5.4 GLPK recipe). The columns are marked
 * integer for this call only, so later strux_lp_solve calls still solve the LP. */
strux_status strux_lp_solve_integer(strux_lp *lp, strux_lp_result *result, double *value, double *x)
{
    if (!lp->lp_current) {
        double v;
        STRUX_TRY(strux_lp_solve(lp, result, &v));
        if (*result != STRUX_LP_OPTIMAL) return STRUX_OK;
    }
    for (int j = 1; j <= lp->n_cols; j++)
        glp_set_col_kind(lp->P, j, GLP_IV);
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_OFF;
    int rc = glp_intopt(lp->P, &parm);
    int mst = glp_mip_status(lp->P);
    for (int j = 1; j <= lp->n_cols; j++)
        glp_set_col_kind(lp->P, j, GLP_CV);
    /* intopt may leave another basis behind: the next LP solve repairs it (or starts afresh) */
    lp->rows_changed = 1;
    lp->lp_current = 0;
    STRUX_CHECK(rc == 0, STRUX_ERR_LP,
                "glp_intopt failed with code %d on an ILP of %d rows and "
                "%d columns",
                rc, glp_get_num_rows(lp->P), lp->n_cols);
    STRUX_CHECK(mst == GLP_OPT || mst == GLP_NOFEAS, STRUX_ERR_LP,
                "glp_intopt ended without a conclusive status (%d) on an ILP of %d rows and %d "
                "columns",
                mst, glp_get_num_rows(lp->P), lp->n_cols);
    *result = mst == GLP_OPT ? STRUX_LP_OPTIMAL : STRUX_LP_INFEASIBLE;
    if (*result != STRUX_LP_OPTIMAL) return STRUX_OK;
    *value = glp_mip_obj_val(lp->P);
    if (x)
        for (int32_t j = 0; j < lp->n_cols; j++)
            x[j] = glp_mip_col_val(lp->P, j + 1);
    return STRUX_OK;
}

void strux_lp_primal(const strux_lp *lp, double *x)
{
    for (int32_t j = 0; j < lp->n_cols; j++)
        x[j] = glp_get_col_prim(lp->P, j + 1);
}

int64_t strux_lp_iterations(const strux_lp *lp)
{
    return lp->iterations;
}

void strux_lp_row_duals(const strux_lp *lp, double *y)
{
    int32_t m = (int32_t)glp_get_num_rows(lp->P);
    for (int32_t i = 0; i < m; i++)
        y[i] = glp_get_row_dual(lp->P, i + 1);
}
