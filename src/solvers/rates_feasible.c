/* solvers/rates_feasible.c - can the rate constraints hold together on the training data?
 * (issue 15 "Bad input"; dataset_constraints.md §1.2 randomised classifiers, §1.4 canonical rows,
 * §1.5 ratio metrics multiplied through.) A randomised classifier that treats every example on its
 * own can give each row any probability of a positive prediction, and every rate is linear in
 * those probabilities; rows with the same membership pattern over the constraint subsets (one
 * cell of the partition) are interchangeable, so one variable per cell, x_c ∈ [0, 1] = the share
 * of cell c predicted positive, decides it exactly:
 *     s_p(D) = Σ_{c ⊆ D} count_c x_c / n(D),   s_n(D) = 1 − s_p(D).
 * Constraint rows enter one at a time in config order; before row j enters, an LP minimises its
 * canonical left side over the box and rows < j. If even the minimum exceeds γ_j, row j is the
 * first that cannot hold, and a second LP (or, for precision/F1, a bisection over LPs) finds the
 * best value its left side as written reaches while rows < j hold. Counting the cells is local
 * (strux_rates_cell_count); summing them over ranks is the caller's. GLPK through strux/lp.h. */
#include "rates.h"

#include "strux/lp.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A row "cannot hold" when its minimum exceeds γ by more than this, relative to the row's scale
 * max(1, |γ|, Σ α + β): GLPK's simplex reaches vertices of these O(1)-scaled LPs to ~1e-12, and
 * its own feasibility tolerance is 1e-7, so 1e-9 separates rounding from a real violation. */
#define FEAS_RTOL 1e-9
/* Bisection steps for the best precision/F1 (interval [0, 1] halves each step: 2^-50 ≈ 1e-15). */
#define RATIO_STEPS 50

strux_status strux_rates_cell_sets(const strux_rates_expr *const *e, int32_t m,
                                   const strux_subset_defs *d, int32_t *sets, int32_t *n_sets)
{
    int32_t K = strux_subset_count(d);
    uint8_t *used;
    STRUX_TRY(strux_alloc(&used, (size_t)K));
    for (int32_t j = 0; j < m; j++) {
        for (int side = 0; side < 2; side++) {
            const strux_rates_linear *f = side ? &e[j]->rhs : &e[j]->lhs;
            for (int32_t i = 0; i < f->n_terms; i++)
                used[f->terms[i].set] = 1;
        }
        if (e[j]->ratio) used[e[j]->ratio_pos] = used[e[j]->ratio_neg] = 1;
    }
    *n_sets = 0;
    for (int32_t k = 0; k < K; k++)
        if (used[k]) sets[(*n_sets)++] = k;
    strux_free(&used);
    STRUX_CHECK(*n_sets <= STRUX_RATES_MAX_CELL_SETS, STRUX_ERR_CONFIG,
                "the constraints use %" PRId32 " datasets; the feasibility check partitions the "
                "data by at most %d",
                *n_sets, STRUX_RATES_MAX_CELL_SETS);
    return STRUX_OK;
}

void strux_rates_cell_count(int32_t n_sets, const uint8_t *const *member, int64_t n_rows,
                            int64_t *count)
{
    for (int64_t r = 0; r < n_rows; r++) {
        uint32_t p = 0;
        for (int32_t b = 0; b < n_sets; b++)
            p |= (uint32_t)(member[b][r] != 0) << b;
        count[p]++;
    }
}

/* The non-empty cells as LP columns, and each subset's bit and size over them. */
typedef struct cellmap {
    const strux_rates_cells *cells; /* borrowed */
    int32_t n_cols;                 /* non-empty cells */
    uint32_t *pattern;              /* n_cols membership patterns */
    double *count;                  /* n_cols row counts */
    double *size;                   /* n_sets: rows in subset sets[b] */
} cellmap;

static int32_t bit_of(const cellmap *cm, int32_t set)
{
    for (int32_t b = 0; b < cm->cells->n_sets; b++)
        if (cm->cells->sets[b] == set) return b;
    return -1;
}

/* A linear function Σ coef[c] x_c + c0 of the cell shares. */
typedef struct form {
    double *coef; /* n_cols */
    double c0;
} form;

/* f += a·s_p(set) (side > 0) or a·s_n(set) = a − a·s_p(set). */
static strux_status add_rate(const cellmap *cm, int32_t set, int side, double a, form *f)
{
    int32_t b = bit_of(cm, set);
    STRUX_CHECK(b >= 0, STRUX_ERR_INTERNAL, "subset %" PRId32 " is not among the cell subsets",
                set);
    STRUX_CHECK(cm->size[b] > 0, STRUX_ERR_INTERNAL, "subset %" PRId32 " has no rows in the cells",
                set);
    if (side < 0) {
        f->c0 += a;
        a = -a;
    }
    for (int32_t c = 0; c < cm->n_cols; c++)
        if (cm->pattern[c] >> b & 1u) f->coef[c] += a * cm->count[c] / cm->size[b];
    return STRUX_OK;
}

static void form_clear(const cellmap *cm, form *f)
{
    memset(f->coef, 0, (size_t)cm->n_cols * sizeof *f->coef);
    f->c0 = 0;
}

/* f := the canonical row's left side. */
static strux_status row_form(const cellmap *cm, const strux_rates_row *row, form *f)
{
    form_clear(cm, f);
    for (int32_t i = 0; i < row->n; i++) {
        if (row->alpha[i] > 0) STRUX_TRY(add_rate(cm, row->set[i], 1, row->alpha[i], f));
        if (row->beta[i] > 0) STRUX_TRY(add_rate(cm, row->set[i], -1, row->beta[i], f));
    }
    return STRUX_OK;
}

/* f += a·g for a linear form g of the expression (count weights from n). */
static strux_status linear_form(const cellmap *cm, const strux_rates_linear *g, const int64_t *n,
                                double a, form *f)
{
    f->c0 += a * g->c0;
    for (int32_t i = 0; i < g->n_terms; i++) {
        const strux_rates_term *t = &g->terms[i];
        double w = t->den >= 0 ? (t->num >= 0 ? (double)n[t->num] : 1.0) / (double)n[t->den] : 1;
        if (w != 0 && t->c != 0) STRUX_TRY(add_rate(cm, t->set, t->side, a * t->c * w, f));
    }
    return STRUX_OK;
}

/* max (sense > 0) or min (sense < 0) of f over the LP's current rows. */
static strux_status optimise(strux_lp *lp, const form *f, int sense, double *value)
{
    int32_t n_cols = strux_lp_n_cols(lp);
    for (int32_t c = 0; c < n_cols; c++)
        f->coef[c] *= sense;
    strux_lp_set_objective(lp, f->coef, sense * f->c0);
    for (int32_t c = 0; c < n_cols; c++)
        f->coef[c] *= sense;
    strux_lp_result res;
    double v;
    STRUX_TRY(strux_lp_solve(lp, &res, &v));
    STRUX_CHECK(res == STRUX_LP_OPTIMAL, STRUX_ERR_LP,
                "feasibility LP over the dataset cells: no optimum (result %d) on a bounded, "
                "feasible problem",
                (int)res);
    *value = sense * v;
    return STRUX_OK;
}

/* Best precision or F1 of constraint e while the LP's rows hold (bisection on the bound). */
static strux_status best_ratio(strux_lp *lp, const cellmap *cm, const strux_rates_expr *e,
                               const int64_t *n, form *f, double *best)
{
    double lo = 0, hi = 1, n_pos = (double)n[e->ratio_pos];
    for (int t = 0; t < RATIO_STEPS; t++) {
        double q = 0.5 * (lo + hi), v;
        /* precision ≥ q ⇔ (1−q)TP − q·FP ≥ 0;  F1 ≥ q ⇔ (2−q)TP − q·FP − q·n+ ≥ 0 (÷ n+) */
        form_clear(cm, f);
        if (e->ratio == STRUX_RATES_PRECISION) {
            STRUX_TRY(add_rate(cm, e->ratio_pos, 1, 1 - q, f));
        } else {
            STRUX_TRY(add_rate(cm, e->ratio_pos, 1, 2 - q, f));
            f->c0 -= q;
        }
        if (n[e->ratio_neg] > 0)
            STRUX_TRY(add_rate(cm, e->ratio_neg, 1, -q * (double)n[e->ratio_neg] / n_pos, f));
        STRUX_TRY(optimise(lp, f, 1, &v));
        if (v >= -FEAS_RTOL)
            lo = q;
        else
            hi = q;
    }
    *best = lo;
    return STRUX_OK;
}

/* Constraint j cannot hold with rows < j: find the best value and write the message. */
static strux_status report(strux_lp *lp, const cellmap *cm, const strux_rates_expr *const *e,
                           int32_t j, const int64_t *n, form *f, double *best)
{
    const strux_rates_expr *x = e[j];
    int maximise;
    char what[512];
    if (x->ratio) {
        STRUX_TRY(best_ratio(lp, cm, x, n, f, best));
        maximise = 1;
        snprintf(what, sizeof what, "%s", x->lhs_text);
    } else {
        /* the side holding the rates, or LHS − RHS; maximise what a >= wants larger */
        form_clear(cm, f);
        if (x->lhs.n_terms == 0 && x->rhs.n_terms > 0) {
            STRUX_TRY(linear_form(cm, &x->rhs, n, 1, f));
            maximise = x->sense > 0;
            snprintf(what, sizeof what, "%s", x->rhs_text);
        } else if (x->rhs.n_terms == 0) {
            STRUX_TRY(linear_form(cm, &x->lhs, n, 1, f));
            maximise = x->sense < 0;
            snprintf(what, sizeof what, "%s", x->lhs_text);
        } else {
            STRUX_TRY(linear_form(cm, &x->lhs, n, 1, f));
            STRUX_TRY(linear_form(cm, &x->rhs, n, -1, f));
            maximise = x->sense < 0;
            snprintf(what, sizeof what, "%s - (%s)", x->lhs_text, x->rhs_text);
        }
        STRUX_TRY(optimise(lp, f, maximise ? 1 : -1, best));
    }
    char others[512] = "";
    size_t used = 0;
    for (int32_t i = 0; i < j && used < sizeof others; i++)
        used += (size_t)snprintf(others + used, sizeof others - used, "%s%s", i ? ", " : "",
                                 e[i]->name);
    return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                           "%s: constraint %s (%s) cannot hold%s%s on the training data: %s "
                           "reaches at %s %.3f",
                           x->origin, x->name, x->text, j ? " together with " : "", others, what,
                           maximise ? "most" : "least", *best);
}

strux_status strux_rates_feasible(const strux_rates_expr *const *e, int32_t m,
                                  const strux_subset_defs *d, const int64_t *n,
                                  const strux_rates_cells *cells, int32_t *failed, double *best)
{
    *failed = -1;
    *best = NAN;
    STRUX_CHECK(cells->n_sets >= 0 && cells->n_sets <= STRUX_RATES_MAX_CELL_SETS,
                STRUX_ERR_INTERNAL, "%" PRId32 " cell subsets", cells->n_sets);
    uint32_t n_patterns = 1u << cells->n_sets;
    cellmap cm = {.cells = cells};
    form f = {0};
    strux_rates_row row = {0};
    strux_lp *lp = NULL;
    int32_t *idx = NULL;
    double *val = NULL;
    strux_status st;
    for (uint32_t p = 0; p < n_patterns; p++)
        cm.n_cols += cells->count[p] > 0;
    STRUX_CHECK(cm.n_cols > 0, STRUX_ERR_CONFIG,
                "the training data has no rows to check the constraints on");
    STRUX_TRY_GOTO(st, strux_alloc_array(&cm.pattern, (size_t)cm.n_cols, sizeof *cm.pattern), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&cm.count, (size_t)cm.n_cols, sizeof *cm.count), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&cm.size, (size_t)cells->n_sets + 1, sizeof *cm.size),
                   done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&f.coef, (size_t)cm.n_cols, sizeof *f.coef), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&idx, (size_t)cm.n_cols, sizeof *idx), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&val, (size_t)cm.n_cols, sizeof *val), done);
    int32_t c = 0;
    for (uint32_t p = 0; p < n_patterns; p++) {
        if (cells->count[p] <= 0) continue;
        cm.pattern[c] = p;
        cm.count[c++] = (double)cells->count[p];
        for (int32_t b = 0; b < cells->n_sets; b++)
            if (p >> b & 1u) cm.size[b] += (double)cells->count[p];
    }
    STRUX_TRY_GOTO(st, strux_lp_create(cm.n_cols, &lp), done);
    for (c = 0; c < cm.n_cols; c++)
        STRUX_TRY_GOTO(st, strux_lp_set_col_bounds(lp, c, STRUX_LP_DOUBLE, 0, 1), done);
    for (int32_t j = 0; j < m; j++) {
        STRUX_TRY_GOTO(st, strux_rates_canonical(e[j], d, n, &row), done);
        STRUX_TRY_GOTO(st, row_form(&cm, &row, &f), done);
        double lowest, scale = fmax(1, fabs(row.gamma));
        for (int32_t i = 0; i < row.n; i++)
            scale = fmax(scale, row.alpha[i] + row.beta[i]);
        STRUX_TRY_GOTO(st, optimise(lp, &f, -1, &lowest), done);
        if (lowest > row.gamma + FEAS_RTOL * scale) {
            *failed = j;
            st = report(lp, &cm, e, j, n, &f, best);
            goto done;
        }
        int32_t nz = 0;
        for (c = 0; c < cm.n_cols; c++) {
            if (f.coef[c] == 0) continue;
            idx[nz] = c;
            val[nz++] = f.coef[c];
        }
        STRUX_TRY_GOTO(
            st, strux_lp_add_row(lp, nz, idx, val, STRUX_LP_UPPER, 0, row.gamma - f.c0, NULL),
            done);
        strux_rates_row_free(&row);
    }
    st = STRUX_OK;
done:
    strux_rates_row_free(&row);
    strux_lp_destroy(&lp);
    strux_free(&cm.pattern);
    strux_free(&cm.count);
    strux_free(&cm.size);
    strux_free(&f.coef);
    strux_free(&idx);
    strux_free(&val);
    return st;
}
