/* tasks/pairwise.c - fully connected pairwise MRF over L binary labels (slack_bicriteria.md
 * §2.4(b), §6 A28): y ∈ {0,1}^L,
 *     f(y) = Σ_k θ_k·y_k + Σ_{k<l} θ_kl·y_k·y_l,   θ_k = w_k·x,   θ_kl = w_kl,
 * one unary weight row per label over the features and one x-independent weight per label pair in
 * the model's n_extra = L(L−1)/2 parameters ("single-product" parametrisation, as Finley &
 * Joachims: one pairwise feature y_k·y_l per pair, the fewest parameters that couple every pair;
 * with a bias feature in x the unary rows already carry the per-label offsets). Hamming loss,
 * |y| = labels on. Pairs are numbered row-major over the upper triangle: (0,1), (0,2), ...,
 * (L−2, L−1). Potentials: s[k] = θ_k (k < L), s[L + p] = θ_p.
 * Oracles (task.inference):
 *   - exact: enumeration of the 2^L labelings in Gray-code order (O(L) per labeling), exact for
 *     every query: wedge, ban list and c;
 *   - lp: the local-polytope relaxation, max over μ_k ∈ [0,1], μ_kl ∈ [0,1] with
 *     μ_kl ≤ μ_k, μ_kl ≤ μ_l, μ_k + μ_l − μ_kl ≤ 1, solved by GLPK (src/lp) on one persistent
 *     problem per task: objective-only updates, warm-started simplex, and the two wedge rows
 *     α·h − g ≥ 0, g − β·h ≥ 0 created once and switched between FREE and LOWER (§2.4(b)).
 *     Infeasible → found = 0; ban lists are not supported (no k-best for an LP).
 *     task.lp_start = fresh restarts every solve from the standard basis (rank-count
 *     independent answers when the LP optimum is not unique, at the cost of the warm start);
 *   - auto: exact when L ≤ 16, else lp.
 * Fractional answers: mu holds μ_k (k < L) then μ_kl in pair order (n_mu = L + L(L−1)/2), and y
 * their rounding at 0.5; integral LP answers are returned as integral labels (n_mu = 0). The
 * feature map, score, loss and |y| are linear in μ, so add_feature/score/loss take fractional
 * labels as they are (overgenerating training, §2.4(b)). Prediction: the same oracle on f alone,
 * rounded at 0.5; the metrics are the multilabel ones (multilabel_metrics.c) plus the fraction of
 * fractional predictions. Knows nothing of MPI, searches or solvers. */
#include "task_impl.h"

#include "strux/lp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define EXACT_AUTO_MAX 16 /* auto picks enumeration up to 2^16 labelings */
#define EXACT_MAX 20      /* explicit exact: up to 2^20 labelings per call */
/* Strict wedge sides in the LP: g ≤ α·h − τ with τ = LP_TAU·(1 + |rhs|). §2.2 suggests 1e−9,
 * but GLPK accepts bound violations up to tol_bnd = 1e−7 (relative), so a smaller τ would let a
 * vertex on the excluded ray through. */
#define LP_TAU 1e-6
/* |μ − round(μ)| below this counts as integral (GLPK vertex values carry rounding only). */
#define INTEGRAL_TOL 1e-9

enum { MODE_EXACT, MODE_LP };

typedef struct pw_data {
    char inference[STRUX_OPT_STR]; /* task.inference as given */
    int fresh;                     /* task.lp_start = fresh */
    int mode;                      /* MODE_EXACT or MODE_LP, fixed by the first check() */
    int32_t L, P;                  /* labels, pairs */
    int32_t *pk, *pl;              /* pair p = (pk[p], pl[p]), pk < pl */
    double *theta;                 /* exact: L×L symmetric θ_kl with zero diagonal */
    double *u;                     /* exact: u_k = Σ_l θ_kl·y_l of the current labeling */
    strux_lp *lp;                  /* lp: the persistent local-polytope problem */
    int32_t row_upper, row_lower; /* lp: the wedge rows α·h − g ≥ τ and g − β·h ≥ τ */
    int wedge_on;                 /* lp: the wedge rows are switched on */
    double *obj, *x, *row;        /* lp: objective, solution, wedge row coefficients (L + P) */
    int32_t *cols;                /* lp: 0..L+P−1, the columns of a dense wedge row */
    int64_t n_lp, n_fractional;   /* lp: solves and fractional answers (log) */
} pw_data;

/* ---- set-up ---- */

static strux_status setup_exact(pw_data *d)
{
    int32_t L = d->L;
    STRUX_TRY(strux_alloc_array(&d->theta, (size_t)L * (size_t)L, sizeof *d->theta));
    STRUX_TRY(strux_alloc_array(&d->u, (size_t)L, sizeof *d->u));
    return STRUX_OK;
}

static strux_status setup_lp(pw_data *d)
{
    int32_t L = d->L, P = d->P, n = L + P;
    STRUX_TRY(strux_alloc_array(&d->obj, (size_t)n, sizeof *d->obj));
    STRUX_TRY(strux_alloc_array(&d->x, (size_t)n, sizeof *d->x));
    STRUX_TRY(strux_alloc_array(&d->row, (size_t)n, sizeof *d->row));
    STRUX_TRY(strux_alloc_array(&d->cols, (size_t)n, sizeof *d->cols));
    for (int32_t j = 0; j < n; j++)
        d->cols[j] = j;
    STRUX_TRY(strux_lp_create(n, &d->lp));
    strux_lp_set_fresh_start(d->lp, d->fresh);
    for (int32_t j = 0; j < n; j++)
        STRUX_TRY(strux_lp_set_col_bounds(d->lp, j, STRUX_LP_DOUBLE, 0.0, 1.0));
    for (int32_t p = 0; p < P; p++) {
        int32_t kp[2] = {L + p, d->pk[p]}, lq[2] = {L + p, d->pl[p]};
        int32_t all[3] = {d->pk[p], d->pl[p], L + p};
        const double le[2] = {1, -1}, sum[3] = {1, 1, -1};
        /* μ_kl ≤ μ_k, μ_kl ≤ μ_l, μ_k + μ_l − μ_kl ≤ 1 */
        STRUX_TRY(strux_lp_add_row(d->lp, 2, kp, le, STRUX_LP_UPPER, 0, 0, NULL));
        STRUX_TRY(strux_lp_add_row(d->lp, 2, lq, le, STRUX_LP_UPPER, 0, 0, NULL));
        STRUX_TRY(strux_lp_add_row(d->lp, 3, all, sum, STRUX_LP_UPPER, 0, 1, NULL));
    }
    STRUX_TRY(strux_lp_add_row(d->lp, 0, NULL, NULL, STRUX_LP_FREE, 0, 0, &d->row_upper));
    STRUX_TRY(strux_lp_add_row(d->lp, 0, NULL, NULL, STRUX_LP_FREE, 0, 0, &d->row_lower));
    return STRUX_OK;
}

static strux_status setup(pw_data *d, int32_t L)
{
    d->L = L;
    d->P = L * (L - 1) / 2;
    STRUX_TRY(strux_alloc_array(&d->pk, (size_t)(d->P > 0 ? d->P : 1), sizeof *d->pk));
    STRUX_TRY(strux_alloc_array(&d->pl, (size_t)(d->P > 0 ? d->P : 1), sizeof *d->pl));
    for (int32_t k = 0, p = 0; k < L; k++)
        for (int32_t l = k + 1; l < L; l++, p++)
            d->pk[p] = k, d->pl[p] = l;
    const char *inf = d->inference[0] ? d->inference : "auto";
    if (strcmp(inf, "exact") == 0) {
        STRUX_CHECK(L <= EXACT_MAX, STRUX_ERR_CONFIG,
                    "task.inference = exact enumerates 2^%d labelings; at most %d labels are "
                    "allowed (use lp or auto)",
                    L, EXACT_MAX);
        d->mode = MODE_EXACT;
    } else if (strcmp(inf, "lp") == 0) {
        d->mode = MODE_LP;
    } else {
        STRUX_CHECK(strcmp(inf, "auto") == 0, STRUX_ERR_CONFIG,
                    "task.inference = '%s' is not one of: auto|exact|lp", inf);
        d->mode = L <= EXACT_AUTO_MAX ? MODE_EXACT : MODE_LP;
    }
    return d->mode == MODE_EXACT ? setup_exact(d) : setup_lp(d);
}

static strux_status pw_check(strux_task *t, const strux_dataset *ds)
{
    pw_data *d = t->data;
    STRUX_CHECK(ds->ex_ptr == NULL, STRUX_ERR_INPUT,
                "%s: holds sequences; the pairwise task needs one row per example", ds->path);
    STRUX_CHECK(ds->n_labels >= 2, STRUX_ERR_INPUT,
                "%s: %d label(s); the pairwise task needs at least 2", ds->path, ds->n_labels);
    STRUX_CHECK(t->n_labels == 0 || t->n_labels == ds->n_labels, STRUX_ERR_INPUT,
                "%s: %d labels where the task has %d", ds->path, ds->n_labels, t->n_labels);
    if (t->n_labels == 0) {
        STRUX_TRY(setup(d, ds->n_labels));
        strux_log(STRUX_LOG_DEBUG, "pairwise: %d labels, %d pairs, %s oracle", d->L, d->P,
                  d->mode == MODE_EXACT ? "exact" : "LP");
    }
    t->n_labels = ds->n_labels;
    return STRUX_OK;
}

static strux_status pw_model_shape(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                   int64_t *n_extra)
{
    (void)t;
    int64_t L = ds->n_labels;
    *n_rows = ds->n_labels;
    *n_extra = L * (L - 1) / 2;
    return STRUX_OK;
}

static strux_status pw_sizes(const strux_task *t, const strux_dataset *ds, int32_t *max_parts,
                             int64_t *max_pot, int64_t *max_mu)
{
    const pw_data *d = t->data;
    int64_t L = ds->n_labels, n = L + L * (L - 1) / 2;
    *max_parts = ds->n_labels;
    *max_pot = n;
    *max_mu = d->mode == MODE_LP ? n : 0;
    return STRUX_OK;
}

static strux_status pw_potentials(const strux_task *t, const strux_model *m,
                                  const strux_dataset *ds, int64_t i, strux_pot *pot)
{
    const pw_data *d = t->data;
    int32_t L = d->L;
    pot->i = i;
    pot->n_parts = L;
    pot->n_states = 2;
    strux_model_scores(m, &ds->x, i, 0, L, pot->s);
    memcpy(pot->s + L, strux_model_extra(m), (size_t)d->P * sizeof *pot->s);
    return STRUX_OK;
}

/* ---- values of (possibly fractional) labels ---- */

/* μ_k of a label: its marginal, or its state. */
static double mu_k(const strux_label *y, int32_t k)
{
    return y->n_mu > 0 ? y->mu[k] : y->y[k];
}

/* μ_kl of pair p = (k, l). */
static double mu_p(const pw_data *d, const strux_label *y, int32_t p)
{
    return y->n_mu > 0 ? y->mu[d->L + p] : y->y[d->pk[p]] * y->y[d->pl[p]];
}

static double pw_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    (void)t;
    double e = 0;
    for (int32_t k = 0; k < y->n; k++)
        e += truth->y[k] ? 1 - mu_k(y, k) : mu_k(y, k);
    return e;
}

static double pw_size(const strux_task *t, const strux_label *y)
{
    (void)t;
    double n = 0;
    for (int32_t k = 0; k < y->n; k++)
        n += mu_k(y, k);
    return n;
}

/* f(μ) = Σ_k θ_k·μ_k + Σ_p θ_p·μ_p */
static double score_of(const pw_data *d, const strux_pot *pot, const strux_label *y)
{
    double f = 0;
    for (int32_t k = 0; k < d->L; k++)
        f += pot->s[k] * mu_k(y, k);
    for (int32_t p = 0; p < d->P; p++)
        f += pot->s[d->L + p] * mu_p(d, y, p);
    return f;
}

static double pw_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    return score_of(t->data, pot, y);
}

/* ---- exact oracle ---- */

static void set_bits(strux_label *y, int32_t L, uint32_t mask)
{
    y->n = L;
    y->n_mu = 0;
    for (int32_t k = 0; k < L; k++)
        y->y[k] = (int32_t)((mask >> k) & 1u);
}

static int mask_banned(const strux_query *q, int32_t L, uint32_t mask)
{
    for (int32_t b = 0; b < q->n_ban; b++) {
        const strux_label *z = &q->ban[b];
        if (z->n != L || z->n_mu != 0) continue;
        int32_t k = 0;
        while (k < L && z->y[k] == (int32_t)((mask >> k) & 1u))
            k++;
        if (k == L) return 1;
    }
    return 0;
}

/* argmax over the admitted, unbanned labelings of a·m + b·g + c·|y|, walking all 2^L labelings
 * in Gray-code order: flipping y_k changes f by ±(θ_k + u_k), u_l by ±θ_kl, g and |y| by ±1.
 * yi = NULL scores f alone (prediction). Returns found; ties keep the first labeling. */
static int exact_oracle(pw_data *d, const strux_pot *pot, const strux_label *truth,
                        const strux_query *q, strux_label *y)
{
    int32_t L = d->L;
    const double *s = pot->s;
    for (int32_t p = 0; p < d->P; p++) {
        d->theta[d->pk[p] * L + d->pl[p]] = s[L + p];
        d->theta[d->pl[p] * L + d->pk[p]] = s[L + p];
    }
    uint32_t yi = 0;
    for (int32_t k = 0; truth && k < L; k++)
        yi |= (uint32_t)(truth->y[k] != 0) << k;
    double f_i = truth ? score_of(d, pot, truth) : 0;
    for (int32_t k = 0; k < L; k++)
        d->u[k] = 0;
    uint32_t mask = 0, best = 0;
    double f = 0, g = __builtin_popcount(yi), size = 0, v_best = -INFINITY;
    int found = 0;
    for (uint64_t step = 0; step < ((uint64_t)1 << L); step++) {
        if (step > 0) {
            int32_t k = __builtin_ctzll(step);
            uint32_t bit = 1u << k;
            double sign = mask & bit ? -1.0 : 1.0;
            f += sign * (s[k] + d->u[k]);
            size += sign;
            g += yi & bit ? -sign : sign;
            mask ^= bit;
            const double *th = d->theta + (int64_t)k * L;
            for (int32_t l = 0; l < L; l++)
                d->u[l] += sign * th[l];
        }
        double m = g == 0 ? 0.0 : f - f_i; /* only the truth has g = 0: m is exactly 0 there */
        double v = q->a * m + q->b * g + q->c * size;
        if (!(v > v_best) || !strux_query_admits(q, m, g)) continue;
        if (q->n_ban > 0 && mask_banned(q, L, mask)) continue;
        v_best = v;
        best = mask;
        found = 1;
    }
    if (found) set_bits(y, L, best);
    return found;
}

/* ---- LP oracle ---- */

/* The LP solution as a label: integral when every μ is within INTEGRAL_TOL of 0 or 1, else the
 * marginals (clipped to [0, 1]) with their rounding in y. */
static void lp_label(pw_data *d, strux_label *y)
{
    int32_t L = d->L, n = L + d->P;
    int integral = 1;
    for (int32_t j = 0; j < n; j++)
        integral &= fabs(d->x[j] - round(d->x[j])) <= INTEGRAL_TOL;
    y->n = L;
    for (int32_t k = 0; k < L; k++)
        y->y[k] = d->x[k] >= 0.5;
    y->n_mu = integral ? 0 : n;
    if (integral) return;
    d->n_fractional++;
    for (int32_t j = 0; j < n; j++)
        y->mu[j] = fmin(1.0, fmax(0.0, d->x[j]));
}

/* Wedge rows for h = f(μ) − f_i + h_shift and g = Σ_k (1 − 2y_ik)·μ_k + |y_i|:
 *   α·h − g ≥ τ_u  ⇔  Σ_k (α·θ_k − (1 − 2y_ik))·μ_k + α·Σ_p θ_p·μ_p
 *                                                ≥ α·(f_i − h_shift) + |y_i| + τ_u
 *   g − β·h ≥ τ_l  ⇔  Σ_k ((1 − 2y_ik) − β·θ_k)·μ_k − β·Σ_p θ_p·μ_p
 *                                                ≥ β·(h_shift − f_i) − |y_i| + τ_l
 * with τ = 0 on a closed side; α = ∞ leaves the upper row FREE. */
static strux_status lp_set_wedge(pw_data *d, const strux_pot *pot, const strux_label *truth,
                                 const strux_query *q, double f_i, double n_i)
{
    int32_t L = d->L, n = L + d->P;
    if (!q->wedge) {
        if (d->wedge_on) {
            STRUX_TRY(strux_lp_set_row_bounds(d->lp, d->row_upper, STRUX_LP_FREE, 0, 0));
            STRUX_TRY(strux_lp_set_row_bounds(d->lp, d->row_lower, STRUX_LP_FREE, 0, 0));
            d->wedge_on = 0;
        }
        return STRUX_OK;
    }
    d->wedge_on = 1;
    if (isinf(q->alpha)) {
        STRUX_TRY(strux_lp_set_row_bounds(d->lp, d->row_upper, STRUX_LP_FREE, 0, 0));
    } else {
        for (int32_t j = 0; j < n; j++)
            d->row[j] = q->alpha * pot->s[j] - (j < L ? 1.0 - 2.0 * truth->y[j] : 0.0);
        double rhs = q->alpha * (f_i - q->h_shift) + n_i;
        if (q->upper_open) rhs += LP_TAU * (1 + fabs(rhs));
        STRUX_TRY(strux_lp_set_row(d->lp, d->row_upper, n, d->cols, d->row));
        STRUX_TRY(strux_lp_set_row_bounds(d->lp, d->row_upper, STRUX_LP_LOWER, rhs, 0));
    }
    for (int32_t j = 0; j < n; j++)
        d->row[j] = (j < L ? 1.0 - 2.0 * truth->y[j] : 0.0) - q->beta * pot->s[j];
    double rhs = q->beta * (q->h_shift - f_i) - n_i;
    if (q->lower_open) rhs += LP_TAU * (1 + fabs(rhs));
    STRUX_TRY(strux_lp_set_row(d->lp, d->row_lower, n, d->cols, d->row));
    STRUX_TRY(strux_lp_set_row_bounds(d->lp, d->row_lower, STRUX_LP_LOWER, rhs, 0));
    return STRUX_OK;
}

/* max a·m + b·g + c·|y| over the local polytope (∩ the wedge); truth = NULL maximises f. */
static strux_status lp_oracle(pw_data *d, const strux_pot *pot, const strux_label *truth,
                              const strux_query *q, strux_label *y, int *found)
{
    int32_t L = d->L, n = L + d->P;
    double f_i = truth ? score_of(d, pot, truth) : 0, n_i = 0;
    for (int32_t k = 0; truth && k < L; k++)
        n_i += truth->y[k];
    for (int32_t j = 0; j < n; j++) {
        d->obj[j] = q->a * pot->s[j];
        if (j < L && truth) d->obj[j] += q->b * (1.0 - 2.0 * truth->y[j]);
        if (j < L) d->obj[j] += q->c;
    }
    strux_lp_set_objective(d->lp, d->obj, -q->a * f_i + q->b * n_i);
    STRUX_TRY(lp_set_wedge(d, pot, truth, q, f_i, n_i));
    strux_lp_result result;
    double value;
    STRUX_TRY(strux_lp_solve(d->lp, &result, &value));
    d->n_lp++;
    STRUX_CHECK(result != STRUX_LP_UNBOUNDED, STRUX_ERR_INTERNAL,
                "pairwise LP unbounded on example %lld (its polytope is bounded)",
                (long long)pot->i);
    *found = result == STRUX_LP_OPTIMAL;
    if (!*found) return STRUX_OK;
    strux_lp_primal(d->lp, d->x);
    lp_label(d, y);
    return STRUX_OK;
}

static strux_status pw_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                              const strux_query *q, strux_label *y, strux_answer *ans)
{
    pw_data *d = t->data;
    *ans = (strux_answer){0};
    if (d->mode == MODE_EXACT) {
        ans->found = exact_oracle(d, pot, truth, q, y);
    } else {
        if (q->n_ban > 0)
            return strux_error_set(STRUX_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                                   "task '%s' (LP inference) does not support ban lists",
                                   t->type_name);
        STRUX_TRY(lp_oracle(d, pot, truth, q, y, &ans->found));
    }
    if (!ans->found) return STRUX_OK;
    ans->m = pw_score(t, pot, y) - pw_score(t, pot, truth);
    ans->g = pw_loss(t, y, truth);
    ans->size = pw_size(t, y);
    return STRUX_OK;
}

static strux_status pw_predict(const strux_task *t, const strux_pot *pot, strux_label *y)
{
    pw_data *d = t->data;
    strux_query q = strux_query_dir(1.0, 0.0);
    if (d->mode == MODE_EXACT) {
        exact_oracle(d, pot, NULL, &q, y);
        return STRUX_OK;
    }
    int found;
    STRUX_TRY(lp_oracle(d, pot, NULL, &q, y, &found));
    STRUX_CHECK(found, STRUX_ERR_INTERNAL, "pairwise LP without a wedge is infeasible");
    return STRUX_OK;
}

/* ---- feature map: linear in μ ---- */

static strux_status pw_add_feature(const strux_task *t, const strux_label *y, double scale,
                                   const strux_phi *out)
{
    const pw_data *d = t->data;
    for (int32_t k = 0; k < d->L; k++)
        if (mu_k(y, k) != 0) strux_phi_row(out, 0, k, scale * mu_k(y, k));
    for (int32_t p = 0; p < d->P; p++)
        strux_phi_extra(out, p, scale * mu_p(d, y, p));
    return STRUX_OK;
}

static strux_status pw_add_delta(const strux_task *t, const strux_label *y,
                                 const strux_label *truth, double scale, const strux_phi *out)
{
    const pw_data *d = t->data;
    for (int32_t k = 0; k < d->L; k++) {
        double dk = mu_k(y, k) - truth->y[k];
        if (dk != 0) strux_phi_row(out, 0, k, scale * dk);
    }
    for (int32_t p = 0; p < d->P; p++) {
        double dp = mu_p(d, y, p) - mu_p(d, truth, p);
        if (dp != 0) strux_phi_extra(out, p, scale * dp);
    }
    return STRUX_OK;
}

/* ---- evaluation: the multilabel metrics of the rounding, plus fractional predictions ---- */

static int64_t pw_eval_size(const strux_task *t)
{
    return strux_mlmetrics_size(t->n_labels) + 1;
}

static strux_status pw_eval_add(const strux_task *t, const strux_label *pred,
                                const strux_label *truth, double *acc)
{
    strux_mlmetrics_add(t->n_labels, pred, truth, acc);
    acc[strux_mlmetrics_size(t->n_labels)] += pred->n_mu > 0;
    return STRUX_OK;
}

static strux_status pw_eval_report(const strux_task *t, const double *acc, strux_scores *out)
{
    strux_mlmetrics_report(t->n_labels, acc, out);
    double N = acc[0] > 0 ? acc[0] : 1; /* acc[0] is the example count of the shared layout */
    strux_scores_add(out, "fractional_predictions", acc[strux_mlmetrics_size(t->n_labels)] / N, 0);
    return STRUX_OK;
}

static strux_status pw_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                strux_label *y)
{
    (void)pot;
    set_bits(y, t->n_labels, (uint32_t)index);
    return STRUX_OK;
}

static void pw_destroy(strux_task *t)
{
    pw_data *d = t->data;
    if (!d) return;
    if (d->n_lp > 0)
        strux_log(STRUX_LOG_DEBUG,
                  "pairwise LP: %lld solves, %lld simplex iterations, %lld "
                  "fractional answers",
                  (long long)d->n_lp, (long long)strux_lp_iterations(d->lp),
                  (long long)d->n_fractional);
    strux_lp_destroy(&d->lp);
    strux_free(&d->pk);
    strux_free(&d->pl);
    strux_free(&d->theta);
    strux_free(&d->u);
    strux_free(&d->obj);
    strux_free(&d->x);
    strux_free(&d->row);
    strux_free(&d->cols);
    strux_free(&t->data);
}

static const struct strux_task_ops pairwise_ops = {
    .check = pw_check,
    .model_shape = pw_model_shape,
    .sizes = pw_sizes,
    .potentials = pw_potentials,
    .truth = strux_labelset_truth,
    .oracle = pw_oracle,
    .loss = pw_loss,
    .size = pw_size,
    .score = pw_score,
    .predict = pw_predict,
    .add_feature = pw_add_feature,
    .add_delta = pw_add_delta,
    .eval_size = pw_eval_size,
    .eval_add = pw_eval_add,
    .eval_report = pw_eval_report,
    .format_label = strux_labelset_format,
    .label_count = strux_labelset_count,
    .label_at = pw_label_at,
    .destroy = pw_destroy,
};

strux_status strux_task_create_pairwise(const strux_task_options *opt, strux_task *t)
{
    pw_data *d;
    strux_status st = STRUX_OK;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    snprintf(d->inference, sizeof d->inference, "%s", opt->inference);
    STRUX_CHECK_GOTO(st,
                     !opt->lp_start[0] || strcmp(opt->lp_start, "warm") == 0 ||
                         strcmp(opt->lp_start, "fresh") == 0,
                     STRUX_ERR_CONFIG, fail, "task.lp_start = '%s' is not one of: warm|fresh",
                     opt->lp_start);
    d->fresh = strcmp(opt->lp_start, "fresh") == 0;
    t->data = d;
    t->ops = &pairwise_ops;
    return STRUX_OK;
fail:
    strux_free(&d);
    return st;
}
