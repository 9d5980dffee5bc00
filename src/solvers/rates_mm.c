/* solvers/rates_mm.c - ramp MM (Alg. 1) around the multiplier cutting plane (Alg. 2) and, with
 * model.bias = free, the bias cutting plane (Alg. 3) of dataset_constraints.md §2-§3.5, as a
 * state machine that resumes where a checkpoint stopped it.
 *
 * Alg. 1: at each anchor the per-example pattern (§2.1), γ̌ and C_0 from allreduced counts; the
 * step's model is the multiplier search's (rates.return: the LP-dual average of its iterates, A5,
 * or the best lower bound's), kept only when its Problem 2 objective is below the last kept
 * step's. Alg. 2: rank 0 keeps one GLPK LP per search through src/lp (a row per cut, warm
 * simplex), picks v by rates.cut (E.1 the LP's maximiser, E.2 the centroid of the cut model's
 * hypograph above L, or the level-set midpoint of §3.4; rates_cut.c), and broadcasts v, ε_t and
 * every stop decision; V_max doubles on saturation (A1). Alg. 3: for fixed v, cuts of G(b) =
 * min_w Ψ from each SDCA dual (affine in b, slope −Σξ/N), b by F.2.1 (the model's minimiser) or
 * F.2.2 (the centroid below the best upper bound, u'_0 inflated to 2ũ_0 − l'_0), over the interval
 * B = [−b_max, b_max] with b_max = ½ + X·√(2(ũ_0 − l'_0)/λ): at an optimum (w*, b*) the losses are
 * ≥ 0, so (λ/2)||w*||² ≤ F(v) − l'_0 ≤ ũ_0 − l'_0, and some optimal b lies in [min w*·x − ½,
 * max w*·x + ½] (beyond it G is monotone) — the §3.5 bound ½ + X²B_c/λ made tighter with the
 * known upper bound ũ_0, so that L'_t stays a lower bound on F(v_t).
 *
 * Resume. Every decision is rank 0's, broadcast, so the state (rates_mm_state, the cuts with their
 * iterates, the anchor, the kept snapshot) is the same on every rank and rides in checkpoints as
 * the hook's shared state; a solve stopped by SIGTERM resumes inside the same SDCA solve of the
 * same bias and multiplier iteration of the same MM step: the pattern is recomputed from the
 * anchor, the loss weights from the pattern and v (not the duals: they come from the checkpoint),
 * and rank 0 replays the LP's rows and solves in their original order, so GLPK's warm-started
 * simplex returns the same vertices. */
#include "rates_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_DOUBLINGS 3  /* A1: V_max doubled at most this often */
#define MAX_BIAS_CUTS 50 /* Alg. 3 iterations per SVMOptimizer call at most (§3.8) */

/* ---- cuts ---- */

static strux_status push_cut(strux_rates *r, double u, double l, const double *g, const double *v,
                             const strux_model *w)
{
    if (r->n_cuts == r->cap_cuts) {
        int32_t cap = r->cap_cuts ? 2 * r->cap_cuts : 16;
        STRUX_TRY(strux_realloc_array(&r->cuts, (size_t)cap, sizeof *r->cuts));
        r->cap_cuts = cap;
    }
    rates_cut *c = &r->cuts[r->n_cuts++];
    *c = (rates_cut){.u = u, .l = l};
    STRUX_TRY(strux_alloc_array(&c->g, (size_t)r->m + 1, sizeof *c->g));
    STRUX_TRY(strux_alloc_array(&c->v, (size_t)r->m + 1, sizeof *c->v));
    if (r->m) {
        memcpy(c->g, g, (size_t)r->m * sizeof *g);
        memcpy(c->v, v, (size_t)r->m * sizeof *v);
    }
    if (w) {
        STRUX_TRY(strux_model_create_like(w, &c->w));
        STRUX_TRY(strux_model_copy(c->w, w));
    }
    return STRUX_OK;
}

static void free_cuts(strux_rates *r)
{
    for (int32_t s = 0; s < r->n_cuts; s++) {
        strux_free(&r->cuts[s].g);
        strux_free(&r->cuts[s].v);
        strux_model_destroy(&r->cuts[s].w);
    }
    r->n_cuts = 0;
}

static strux_status push_bcut(strux_rates *r, double b, double u, double l, double g,
                              const double *G, const strux_model *w)
{
    if (r->n_bcuts == r->cap_bcuts) {
        int32_t cap = r->cap_bcuts ? 2 * r->cap_bcuts : 16;
        STRUX_TRY(strux_realloc_array(&r->bcuts, (size_t)cap, sizeof *r->bcuts));
        r->cap_bcuts = cap;
    }
    rates_bcut *c = &r->bcuts[r->n_bcuts++];
    *c = (rates_bcut){.b = b, .u = u, .l = l, .g = g};
    STRUX_TRY(strux_alloc_array(&c->G, (size_t)r->m + 1, sizeof *c->G));
    if (G) memcpy(c->G, G, (size_t)(r->m + 1) * sizeof *G);
    if (w) {
        STRUX_TRY(strux_model_create_like(w, &c->w));
        STRUX_TRY(strux_model_copy(c->w, w));
    }
    return STRUX_OK;
}

static void free_bcuts(strux_rates *r)
{
    for (int32_t s = 0; s < r->n_bcuts; s++) {
        strux_free(&r->bcuts[s].G);
        strux_model_destroy(&r->bcuts[s].w);
    }
    r->n_bcuts = 0;
}

/* ---- Problem 2 at a model ---- */

/* Ramp and indicator positive rates of every used subset at the scores r->z (sp_ramp, sp_ind:
 * strux_subset_count entries, NaN where unused), summed in data-block order. */
static strux_status rates_at(strux_rates *r, double *sp_ramp, double *sp_ind)
{
    int32_t K = strux_subset_count(r->defs), S = r->n_sets, n_b = strux_rates_blocks(r->train);
    double *sum = NULL, *part = NULL;
    STRUX_TRY(strux_alloc_array(&sum, 2 * (size_t)S + 1, sizeof *sum));
    strux_status st = strux_alloc_array(&part, (size_t)n_b * 2 * (size_t)S + 1, sizeof *part);
    for (int32_t k = 0; st == STRUX_OK && k < n_b; k++) {
        int64_t e0, e1;
        strux_rates_block_range(r->train, k, &e0, &e1);
        double *p = part + (size_t)k * 2 * (size_t)S;
        for (int32_t b = 0; b < S; b++)
            for (int64_t e = e0; e < e1; e++)
                if (r->member[b][e]) {
                    p[b] += strux_rates_ramp(r->z[e]);
                    p[S + b] += r->z[e] >= 0;
                }
    }
    if (st == STRUX_OK) st = strux_block_sum(r->comm, r->train, part, 2 * S, sum);
    strux_free(&part);
    for (int32_t k = 0; k < K; k++)
        sp_ramp[k] = sp_ind[k] = NAN;
    for (int32_t b = 0; b < S; b++) {
        sp_ramp[r->sets[b]] = sum[b] / (double)r->n[r->sets[b]];
        sp_ind[r->sets[b]] = sum[S + b] / (double)r->n[r->sets[b]];
    }
    strux_free(&sum);
    return st;
}

/* Problem 2 at the scores r->z of a model whose stored weights have squared norm norm2 (free
 * bias excluded): objective and each constraint's ramp value − γ and indicator value − γ. */
static strux_status problem2_z(strux_rates *r, double norm2, double *obj, double *ramp_viol,
                               double *ind_viol)
{
    int32_t K = strux_subset_count(r->defs);
    double *sr = NULL, *si = NULL;
    strux_status st = strux_alloc_array(&sr, (size_t)K, sizeof *sr);
    if (st == STRUX_OK) st = strux_alloc_array(&si, (size_t)K, sizeof *si);
    if (st == STRUX_OK) st = rates_at(r, sr, si);
    if (st == STRUX_OK) {
        *obj = strux_rates_row_value(&r->row[0], sr) + r->row[0].c0 +
               0.125 * r->lam * norm2; /* (λ/2)||w̃/2||² */
        for (int32_t j = 0; j < r->m; j++) {
            ramp_viol[j] = strux_rates_row_value(&r->row[j + 1], sr) - r->row[j + 1].gamma;
            if (ind_viol)
                ind_viol[j] = strux_rates_row_value(&r->row[j + 1], si) - r->row[j + 1].gamma;
        }
    }
    strux_free(&sr);
    strux_free(&si);
    return st;
}

/* Problem 2 at model w. */
static strux_status problem2(strux_rates *r, const strux_model *w, double *obj, double *ramp_viol,
                             double *ind_viol)
{
    strux_rates_scores(r, w);
    return problem2_z(r, strux_model_norm2(w), obj, ramp_viol, ind_viol);
}

/* Each constraint's canonical row − γ at the indicator rates of model w on data.test (NaN where a
 * set is not evaluable or empty there), into val. */
static strux_status test_values(strux_rates *r, const strux_model *w, double *val)
{
    int32_t K = strux_subset_count(r->defs), S = r->n_sets;
    for (int32_t j = 0; j < r->m; j++)
        val[j] = NAN;
    if (!r->test) return STRUX_OK;
    const strux_dataset *t = r->test;
    double *cnt = NULL, *sp = NULL;
    STRUX_TRY(strux_alloc_array(&cnt, (size_t)S + 1, sizeof *cnt));
    strux_status st = strux_alloc_array(&sp, (size_t)K, sizeof *sp);
    for (int64_t e = 0; st == STRUX_OK && e < t->n_local; e++) {
        if (!(strux_rates_score(w, t, e) >= 0)) continue;
        for (int32_t b = 0; b < S; b++)
            if (r->test_member[b] && r->test_member[b][e]) cnt[b] += 1;
    }
    if (st == STRUX_OK) st = strux_comm_allreduce_sum(r->comm, cnt, S);
    for (int32_t k = 0; k < K && st == STRUX_OK; k++)
        sp[k] = NAN;
    for (int32_t b = 0; b < S && st == STRUX_OK; b++) {
        int64_t nb = r->test_n[r->sets[b]];
        sp[r->sets[b]] = nb > 0 ? cnt[b] / (double)nb : NAN;
    }
    for (int32_t j = 0; j < r->m && st == STRUX_OK; j++)
        val[j] = strux_rates_row_value(&r->row[j + 1], sp) - r->row[j + 1].gamma;
    strux_free(&cnt);
    strux_free(&sp);
    return st;
}

/* ---- Alg. 1: the surrogate at the anchor ---- */

/* Pattern of every local example at the anchor scores r->z (§2.1 table: hinge on the positive side
 * when z' ≤ ½, on the negative side when z' ≥ −½), γ̌ and C_0, and (count) the examples that
 * changed side into r->st.switched. */
static strux_status linearise(strux_rates *r, int count)
{
    int32_t m = r->m, S = r->n_sets;
    int64_t *cnt = NULL, changed = 0;
    STRUX_TRY(strux_alloc_array(&cnt, 2 * (size_t)S + 1, sizeof *cnt));
    for (int64_t e = 0; e < r->n_local; e++) {
        uint8_t p = (uint8_t)((r->z[e] <= 0.5) | ((r->z[e] >= -0.5) << 1));
        changed += p != r->pat[e];
        r->pat[e] = p;
        for (int32_t b = 0; b < S; b++)
            if (r->member[b][e]) {
                cnt[b] += r->z[e] > 0.5;
                cnt[S + b] += r->z[e] < -0.5;
            }
    }
    cnt[2 * S] = changed;
    strux_status st = strux_comm_allreduce_sum_i64(r->comm, cnt, 2 * S + 1);
    if (count) r->st.switched = cnt[2 * S];
    for (int32_t j = 0; st == STRUX_OK && j <= m; j++) {
        const strux_rates_row *row = &r->row[j];
        double c = 0;
        for (int32_t t = 0; t < row->n; t++) {
            int32_t b = strux_rates_set_slot(r, row->set[t]);
            c += (row->alpha[t] * (double)cnt[b] + row->beta[t] * (double)cnt[S + b]) /
                 (double)r->n[row->set[t]];
        }
        if (j == 0)
            r->C0 = row->c0 + c;
        else
            r->gam[j - 1] = row->gamma - c;
    }
    strux_free(&cnt);
    return st;
}

/* ---- the multiplier LP (rank 0) ---- */

/* The LP row of cut s: z − Σ g_j v_j ≤ u − Σ g_j v_sj (columns v_0..v_{m-1}, then z). */
static strux_status lp_add_cut(strux_lp *lp, int32_t m, const rates_cut *c)
{
    int32_t idx[STRUX_RATES_MAX_M + 1];
    double val[STRUX_RATES_MAX_M + 1], rhs = c->u;
    for (int32_t j = 0; j < m; j++) {
        idx[j] = j;
        val[j] = -c->g[j];
        rhs -= c->g[j] * c->v[j];
    }
    idx[m] = m;
    val[m] = 1;
    int32_t row;
    return strux_lp_add_row(lp, m + 1, idx, val, STRUX_LP_UPPER, 0, rhs, &row);
}

/* Solve the LP; x gets v (m) and z. */
static strux_status lp_solve(strux_rates *r, double *x)
{
    double t0 = strux_time_now(), value;
    strux_lp_result res;
    STRUX_TRY(strux_lp_solve(r->lp, &res, &value));
    STRUX_CHECK(res == STRUX_LP_OPTIMAL, STRUX_ERR_LP, "the multiplier LP is %s",
                res == STRUX_LP_INFEASIBLE ? "infeasible" : "unbounded");
    strux_lp_primal(r->lp, x);
    r->lp_s += strux_time_now() - t0;
    return STRUX_OK;
}

/* The search's LP with a row per cut so far; after a resume its solves are replayed in their
 * original order (one after the first two rows and after each later row but the last, and one
 * more when an SVMOptimizer call is under way), so GLPK's warm start ends where it was. */
static strux_status lp_open(strux_rates *r)
{
    int32_t m = r->m;
    double x[STRUX_RATES_MAX_M + 1];
    STRUX_TRY(strux_lp_create(m + 1, &r->lp));
    for (int32_t j = 0; j < m; j++)
        STRUX_TRY(strux_lp_set_col_bounds(r->lp, j, STRUX_LP_DOUBLE, 0, r->st.v_max));
    STRUX_TRY(strux_lp_set_col_bounds(r->lp, m, STRUX_LP_FREE, 0, 0));
    double delta = 1e-9 * fmax(1.0, fabs(r->st.u0)) / r->st.v_max; /* tie-break: smallest Σ v */
    for (int32_t j = 0; j < m; j++)
        x[j] = -delta;
    x[m] = 1;
    strux_lp_set_objective(r->lp, x, 0);
    STRUX_TRY(lp_add_cut(r->lp, m, &r->cuts[0]));
    STRUX_TRY(lp_add_cut(r->lp, m, &r->cuts[1]));
    for (int32_t c = 2; c < r->n_cuts; c++) {
        STRUX_TRY(lp_solve(r, x));
        STRUX_TRY(lp_add_cut(r->lp, m, &r->cuts[c]));
    }
    if (r->st.in_solve) STRUX_TRY(lp_solve(r, x));
    return STRUX_OK;
}

/* ---- Alg. 2: one iteration's decision (rank 0, broadcast) ---- */

typedef struct decision {
    double U, ht, eps_t;
    int32_t stop;
    double v[STRUX_RATES_MAX_M];
} decision;

/* The cut model of one constraint as lines (u_s, g_s, v_s). */
static strux_status cut_lines(const strux_rates *r, double **u, double **g, double **vs)
{
    STRUX_TRY(strux_alloc_array(u, (size_t)r->n_cuts, sizeof **u));
    STRUX_TRY(strux_alloc_array(g, (size_t)r->n_cuts, sizeof **g));
    STRUX_TRY(strux_alloc_array(vs, (size_t)r->n_cuts, sizeof **vs));
    for (int32_t s = 0; s < r->n_cuts; s++) {
        (*u)[s] = r->cuts[s].u;
        (*g)[s] = r->cuts[s].g[0];
        (*vs)[s] = r->cuts[s].v[0];
    }
    return STRUX_OK;
}

/* h_t(v) = min_s u_s + <g_s, v − v_s>. */
static double model_at(const strux_rates *r, const double *v)
{
    double h = INFINITY;
    for (int32_t s = 0; s < r->n_cuts; s++) {
        double c = r->cuts[s].u;
        for (int32_t j = 0; j < r->m; j++)
            c += r->cuts[s].g[j] * (v[j] - r->cuts[s].v[j]);
        h = fmin(h, c);
    }
    return h;
}

static strux_status decide_rank0(strux_rates *r, decision *dec)
{
    rates_mm_state *st = &r->st;
    int32_t m = r->m;
    double x[STRUX_RATES_MAX_M + 1], eps = st->eps, floor = eps / (2 * M_E * (m + 1));
    STRUX_TRY(lp_solve(r, x));
    dec->U = x[m];
    dec->stop = (st->t > 1 && dec->U - st->L <= eps) || st->t > r->opt.max_cuts;
    double target = dec->U; /* the model's value the tolerance is measured from (E.1: U_t) */
    if (st->t == 1 && r->have_v) { /* a later search starts at the last multipliers */
        for (int32_t j = 0; j < m; j++)
            dec->v[j] = fmin(r->v[j], st->v_max);
    } else if (strcmp(r->opt.cut, "max") == 0 || m == 0) {
        memcpy(dec->v, x, (size_t)m * sizeof *x);
    } else { /* one constraint: E.2 or the midpoint, on the envelope of the cuts */
        double *u = NULL, *g = NULL, *vs = NULL, zc;
        strux_status s = cut_lines(r, &u, &g, &vs);
        if (s == STRUX_OK && strcmp(r->opt.cut, "center") == 0) {
            s = strux_rates_center(r->n_cuts, u, g, vs, st->v_max, st->L, &dec->v[0], &zc);
            target = zc; /* E.2: ε_t = (z_t − L_t)/2 */
        } else if (s == STRUX_OK) {
            s = strux_rates_midpoint(r->n_cuts, u, g, vs, st->v_max, st->L, &dec->v[0]);
            target = NAN;
        }
        strux_free(&u);
        strux_free(&g);
        strux_free(&vs);
        STRUX_TRY(s);
    }
    dec->ht = model_at(r, dec->v);
    if (isnan(target)) target = dec->ht; /* midpoint: the model at the chosen v */
    dec->eps_t = fmax((target - st->L) / 2, floor);
    return STRUX_OK;
}

/* ---- Alg. 3 and the SVMOptimizer ---- */

/* The anchor's stored bias b̃' (free bias). */
static double anchor_bias(const strux_rates *r)
{
    return -strux_model_get(r->anchor, 0, r->bias_col) * r->bias_val;
}

/* Start an SVMOptimizer call at st->vt: new loss weights (warm start), and with a free bias the
 * flat cut 0 of Alg. 3 and its intervals: the safe B = [−b_max, b_max] (module comment) and the
 * working interval, [b_0 − 1, b_0 + 1] in stored units (the ramp's width) around the bias b_0 the
 * last call of this search returned (the anchor's at the first), clipped to B. */
static strux_status svm_begin(strux_rates *r)
{
    rates_mm_state *st = &r->st;
    STRUX_TRY(strux_rates_set_multipliers(r, st->vt, 1));
    st->in_sdca = 0;
    if (!r->free_bias) return STRUX_OK;
    free_bcuts(r);
    double l0 = r->C0; /* l'_0 = C_0 − Σ v γ̌: every other term of Ψ is ≥ 0 */
    for (int32_t j = 0; j < r->m; j++)
        l0 -= st->vt[j] * r->gam[j];
    double u0 = strcmp(r->opt.bias_cut, "center") == 0 ? 2 * st->ht - l0 : st->ht; /* F.2.2 */
    st->b_max = 2 * (0.5 + r->X * sqrt(2 * fmax(st->ht - l0, 0.0) / r->lam)); /* stored units */
    double b0 = fmin(fmax(st->b_prev, -st->b_max), st->b_max);
    st->b_lo = fmax(b0 - 1, -st->b_max);
    st->b_hi = fmin(b0 + 1, st->b_max);
    st->bt = 1;
    return push_bcut(r, 0, u0, l0, 0, NULL, NULL);
}

/* h' = max_s l'_s + g'_s (b − b_s) over the bias cuts: its minimum *L on [lo, hi], at *b. */
static strux_status bias_model_min(strux_rates *r, double lo, double hi, double *b, double *L)
{
    int32_t n = r->n_bcuts;
    double *lv = NULL, *gv = NULL, *bv = NULL;
    strux_status s = strux_alloc_array(&lv, (size_t)n, sizeof *lv);
    if (s == STRUX_OK) s = strux_alloc_array(&gv, (size_t)n, sizeof *gv);
    if (s == STRUX_OK) s = strux_alloc_array(&bv, (size_t)n, sizeof *bv);
    for (int32_t c = 0; s == STRUX_OK && c < n; c++) {
        lv[c] = r->bcuts[c].l;
        gv[c] = r->bcuts[c].g;
        bv[c] = r->bcuts[c].b;
    }
    if (s == STRUX_OK) s = strux_rates_bias_min(n, lv, gv, bv, lo, hi, b, L);
    strux_free(&lv);
    strux_free(&gv);
    strux_free(&bv);
    return s;
}

/* Nonzero when b lies within 1 % of the working interval's width of one of its ends that is not
 * an end of the safe B: the model's minimum over the working interval then says nothing of the
 * bias beyond it. */
static int at_open_end(const rates_mm_state *st, double b, int *side)
{
    double w = 0.01 * (st->b_hi - st->b_lo);
    *side = b <= st->b_lo + w && st->b_lo > -st->b_max ? -1
            : b >= st->b_hi - w && st->b_hi < st->b_max ? 1
                                                        : 0;
    return *side != 0;
}

/* Alg. 3's step at iteration st->bt. The cut model's minimum L'_t is taken over the working
 * interval, which doubles its distance from b_0 on a side where the minimiser sits at its end
 * (§3.5's adaptive B): once the minimiser is inside it (or at an end of the safe B) the minimum
 * over it is the minimum over all of B, so L'_t is a lower bound on F(v_t). When U'_t − L'_t ≤ ε'
 * (from the second iteration on), or at the iteration cap or a run limit (L'_t then over the
 * safe B), *best is the iterate of the smallest u'_s (s ≥ 1) and *target L'_t; otherwise *best =
 * −1, *b the next bias (F.2.1: the model's minimiser, b_0 at the first iteration, A17; F.2.2:
 * the centroid's) and *target its tolerance (U' − L')/2 or (U' − z_t)/2. */
static strux_status bias_decide(strux_rates *r, int32_t *best, double *b, double *target)
{
    rates_mm_state *st = &r->st;
    int32_t n = r->n_bcuts, arg = -1, side;
    double Lb, Ub = INFINITY, zc, b0 = 0.5 * (st->b_lo + st->b_hi);
    for (int32_t s = 0; s < n; s++) {
        Ub = fmin(Ub, r->bcuts[s].u);
        if (s > 0 && (arg < 0 || r->bcuts[s].u < r->bcuts[arg].u)) arg = s;
    }
    STRUX_TRY(bias_model_min(r, st->b_lo, st->b_hi, b, &Lb));
    if (n > 1 && at_open_end(st, *b, &side)) { /* widen that side once: a geometric probe */
        if (side < 0) st->b_lo = fmax(b0 - 2 * (b0 - st->b_lo), -st->b_max);
        else st->b_hi = fmin(b0 + 2 * (st->b_hi - b0), st->b_max);
        STRUX_TRY(bias_model_min(r, st->b_lo, st->b_hi, b, &Lb));
    }
    int valid = !at_open_end(st, *b, &side);
    *best = -1;
    *target = (Ub - Lb) / 2;
    if (arg >= 0 && (st->bt > MAX_BIAS_CUTS || st->limit)) { /* the safe B's bound */
        double bb;
        STRUX_TRY(bias_model_min(r, -st->b_max, st->b_max, &bb, &Lb));
        *best = arg;
        *target = Lb;
    } else if (arg >= 0 && valid && Ub - Lb <= st->eps_t) {
        *best = arg;
        *target = Lb;
    } else if (strcmp(r->opt.bias_cut, "center") == 0) {
        double *lv = NULL, *gv = NULL, *bv = NULL;
        strux_status s = strux_alloc_array(&lv, (size_t)n, sizeof *lv);
        if (s == STRUX_OK) s = strux_alloc_array(&gv, (size_t)n, sizeof *gv);
        if (s == STRUX_OK) s = strux_alloc_array(&bv, (size_t)n, sizeof *bv);
        for (int32_t c = 0; s == STRUX_OK && c < n; c++) {
            lv[c] = r->bcuts[c].l;
            gv[c] = r->bcuts[c].g;
            bv[c] = r->bcuts[c].b;
        }
        if (s == STRUX_OK) s = strux_rates_bias_center(n, lv, gv, bv, st->b_lo, st->b_hi, Ub, b, &zc);
        *target = (Ub - zc) / 2;
        strux_free(&lv);
        strux_free(&gv);
        strux_free(&bv);
        STRUX_TRY(s);
    } else if (st->bt == 1) { /* F.2.1 on the flat model: b_1 = b_0 (A17) */
        *b = b0;
    }
    return STRUX_OK;
}

/* The SVMOptimizer at st->vt to st->eps_t: the iterate's Ψ (u), a lower bound on F(v_t) (l), the
 * slopes g = ∇_v Ψ and the iterate itself into w. With a regularised bias one SDCA solve; with a
 * free bias Alg. 3 over b. */
static strux_status svm_run(strux_rates *r, strux_driver *drv, double *u, double *l, double *g,
                            strux_model *w)
{
    rates_mm_state *st = &r->st;
    int32_t m = r->m;
    int ok;
    if (!r->free_bias) {
        if (!st->in_sdca) {
            st->budget = r->opt.inner_epochs;
            st->in_sdca = 1;
        }
        STRUX_TRY(strux_rates_sdca(r, drv, st->eps_t, &ok));
        st->in_sdca = 0;
        *u = strux_rates_psi(r, st->vt);
        *l = strux_rates_psi_dual(r, st->vt);
        for (int32_t j = 0; j < m; j++)
            g[j] = r->G[j + 1] - r->gam[j];
        return strux_rates_inner_model(r, w);
    }
    for (;;) {
        if (!st->in_sdca) {
            double bnext = 0, target = 0;
            int32_t best = -1;
            STRUX_TRY(bias_decide(r, &best, &bnext, &target));
            if (best >= 0) { /* the best upper bound's iterate, with L'_t (Alg. 2's contract) */
                const rates_bcut *c = &r->bcuts[best];
                st->b_prev = c->b;
                *u = c->u;
                *l = target;
                for (int32_t j = 0; j < m; j++)
                    g[j] = c->G[j + 1] - r->gam[j];
                return strux_model_copy(w, c->w);
            }
            st->eps_b = fmax(target, st->eps_t / (2 * M_E)); /* F.2.2's floor ε'/(2e) */
            strux_rates_set_bias(r, bnext);
            st->budget = r->opt.inner_epochs;
            st->in_sdca = 1;
        }
        STRUX_TRY(strux_rates_sdca(r, drv, st->eps_b, &ok));
        st->in_sdca = 0;
        STRUX_TRY(strux_rates_inner_model(r, w));
        /* the dual is affine in b̃ with slope −Σξ/W per unit of b̃ (§3.5, stored units) */
        STRUX_TRY(push_bcut(r, r->bt, strux_rates_psi(r, st->vt), strux_rates_psi_dual(r, st->vt),
                            -r->sum_xi / (2.0 * (double)r->N), r->G, w));
        r->total_bcuts++;
        if (strux_comm_rank(r->comm) == 0)
            strux_log(STRUX_LOG_DEBUG, "rates: bias cut %lld b %.6g u %.9g l %.9g slope %.3g",
                      (long long)st->bt, r->bt, r->bcuts[r->n_bcuts - 1].u,
                      r->bcuts[r->n_bcuts - 1].l, r->bcuts[r->n_bcuts - 1].g);
        st->bt++;
    }
}

/* ---- Alg. 2: the search ---- */

/* A new search at the anchor: cut 0 flat at u0 (raised a hair: the anchor's cut lies under u0 on
 * all of [0, v_max], and a degenerate LP could otherwise give the model-less cut dual weight),
 * and the anchor's own cut Ψ(w', v) = P2(w') + Σ v_j viol_j, exact there since the surrogate is
 * tight at w' (l = −∞: it certifies nothing; §3.2, A5). With a feasible anchor the LP-dual average
 * of the iterates then always exists and meets the surrogate constraints, so MM iterates stay
 * feasible and the objective never rises even when the search stops after one solve. */
static strux_status search_begin(strux_rates *r)
{
    rates_mm_state *st = &r->st;
    double zero[STRUX_RATES_MAX_M + 1] = {0};
    free_cuts(r);
    strux_lp_destroy(&r->lp);
    st->u0 = st->obj;
    for (int32_t j = 0; j < r->m; j++)
        st->u0 += st->v_max * fmax(0.0, r->viol[j]);
    STRUX_TRY(push_cut(r, st->u0 + 1e-6 * fmax(1.0, fabs(st->u0)), r->C0, zero, zero, NULL));
    STRUX_TRY(push_cut(r, st->obj, -INFINITY, r->viol, zero, r->anchor));
    st->t = 1;
    st->L = r->C0;
    st->in_solve = 0;
    if (r->free_bias) st->b_prev = anchor_bias(r);
    return STRUX_OK;
}

/* The search's end: the LP dual weights μ of the cuts and the multipliers, the returned model
 * (rates.return) into ret. */
static strux_status search_finish(strux_rates *r, strux_model *ret)
{
    int32_t m = r->m, rank0 = strux_comm_rank(r->comm) == 0;
    double x[STRUX_RATES_MAX_M + 1];
    strux_free(&r->mu);
    STRUX_TRY(strux_alloc_array(&r->mu, (size_t)r->n_cuts, sizeof *r->mu));
    strux_status st = STRUX_OK;
    if (rank0) {
        strux_lp_row_duals(r->lp, r->mu);
        double sum = 0;
        for (int32_t c = 0; c < r->n_cuts; c++)
            sum += r->mu[c] = fabs(r->mu[c]);
        for (int32_t c = 0; c < r->n_cuts; c++)
            r->mu[c] = sum > 0 ? r->mu[c] / sum : 0;
        strux_lp_primal(r->lp, x);
        for (int32_t j = 0; j < m; j++)
            r->v[j] = x[j];
    }
    strux_lp_destroy(&r->lp);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    STRUX_TRY(strux_comm_bcast(r->comm, r->mu, (size_t)r->n_cuts * sizeof *r->mu, 0));
    if (m) STRUX_TRY(strux_comm_bcast(r->comm, r->v, (size_t)m * sizeof *r->v, 0));
    r->have_v = 1;
    int average = strcmp(r->opt.return_rule, "average") == 0 && r->mu[0] <= 1e-9;
    if (!average) { /* the best lower bound (the paper's rule); cut 0 has no model, cut 1 (the
                     * anchor) no bound */
        int32_t best = 1;
        for (int32_t c = 2; c < r->n_cuts; c++)
            if (r->cuts[c].l > r->cuts[best].l) best = c;
        memset(r->mu, 0, (size_t)r->n_cuts * sizeof *r->mu);
        r->mu[best] = 1;
        if (m) memcpy(r->v, r->cuts[best].v, (size_t)m * sizeof *r->v);
    }
    strux_model_zero(ret);
    for (int32_t c = 1; c < r->n_cuts; c++)
        if (r->mu[c] > 0) STRUX_TRY(strux_model_axpy(r->mu[c], r->cuts[c].w, ret));
    return STRUX_OK;
}

/* Alg. 2 from where the state is (a fresh search, or one a checkpoint stopped inside an
 * SVMOptimizer call) to its end, or to a run limit (st.limit). */
static strux_status search_run(strux_rates *r, strux_driver *drv, strux_model *ret)
{
    rates_mm_state *st = &r->st;
    int32_t m = r->m, rank0 = strux_comm_rank(r->comm) == 0;
    double g[STRUX_RATES_MAX_M + 1], u = NAN, l = NAN;
    strux_model *w = NULL;
    strux_status s = rank0 && !r->lp ? lp_open(r) : STRUX_OK;
    STRUX_TRY(strux_comm_agree(r->comm, s));
    STRUX_TRY(strux_model_create_like(ret, &w));
    for (;;) {
        if (!st->in_solve) {
            decision dec = {0};
            s = rank0 ? decide_rank0(r, &dec) : STRUX_OK;
            STRUX_TRY_GOTO(s, strux_comm_agree(r->comm, s), done);
            STRUX_TRY_GOTO(s, strux_comm_bcast(r->comm, &dec, sizeof dec, 0), done);
            if (dec.stop) break;
            st->U = dec.U;
            st->ht = dec.ht;
            st->eps_t = dec.eps_t;
            memcpy(st->vt, dec.v, sizeof st->vt);
            STRUX_TRY_GOTO(s, svm_begin(r), done);
            st->in_solve = 1;
        }
        STRUX_TRY_GOTO(s, svm_run(r, drv, &u, &l, g, w), done);
        st->in_solve = 0;
        if (l > st->L) st->L = l;
        STRUX_TRY_GOTO(s, push_cut(r, u, l, g, st->vt, w), done);
        r->total_cuts++;
        if (rank0) STRUX_TRY_GOTO(s, lp_add_cut(r->lp, m, &r->cuts[r->n_cuts - 1]), done);
        if (rank0)
            strux_log(STRUX_LOG_DEBUG, "rates: cut %lld v0 %.6g U %.9g L %.9g u %.9g l %.9g",
                      (long long)st->t, m ? st->vt[0] : 0.0, st->U, st->L, u, l);
        st->t++;
        if (st->limit) break;
    }
    s = st->limit ? STRUX_OK : search_finish(r, ret);
done:
    strux_model_destroy(&w);
    return s;
}

/* ---- Alg. 1 ---- */

/* The start (rates.start): w = 0, or a binary model file scaled up (A7). The scale is the one of
 * 2^k / max|s(x)| (k = 0..60, s the file model's scores) with the smallest Problem 2 objective
 * among those meeting every ramp constraint, or with the smallest total violation when none
 * does: "scaled up so that few points lie inside the ramp" made concrete, since the largest
 * scales also inflate (λ/2)||w||² and a data set sampled at the model's boundary (the churn
 * problem's D1) has points inside the ramp at any scale. */
static strux_status start_model(strux_rates *r, strux_model *anchor)
{
    strux_model_zero(anchor);
    if (strcmp(r->opt.start, "zero") == 0) return STRUX_OK;
    STRUX_TRY(strux_rates_read_model(r, r->opt.start, "rates.start", anchor));
    double *z0 = NULL, top = 0, best_obj = INFINITY, best_viol = INFINITY, best = 0;
    double viol[STRUX_RATES_MAX_M + 1], norm2 = strux_model_norm2(anchor);
    STRUX_TRY(strux_alloc_array(&z0, (size_t)r->n_local + 1, sizeof *z0));
    strux_rates_scores(r, anchor);
    memcpy(z0, r->z, (size_t)r->n_local * sizeof *z0);
    for (int64_t e = 0; e < r->n_local; e++)
        top = fmax(top, fabs(2 * z0[e]));
    strux_status st = strux_comm_allreduce_max(r->comm, &top, 1);
    if (st == STRUX_OK && !(top > 0))
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s (rates.start): every training row scores 0 under it; it cannot "
                             "start MM",
                             r->opt.start);
    for (int k = 0; st == STRUX_OK && k <= 60; k++) {
        double scale = ldexp(1.0, k) / top, obj, over = 0;
        for (int64_t e = 0; e < r->n_local; e++)
            r->z[e] = scale * z0[e];
        st = problem2_z(r, scale * scale * norm2, &obj, viol, NULL);
        for (int32_t j = 0; j < r->m; j++)
            over += fmax(0.0, viol[j]);
        if (over < best_viol || (over == best_viol && obj < best_obj)) {
            best_viol = over;
            best_obj = obj;
            best = scale;
        }
    }
    strux_free(&z0);
    STRUX_TRY(st);
    strux_model_scale(anchor, best);
    if (strux_comm_rank(r->comm) == 0)
        strux_log(STRUX_LOG_INFO,
                  "rates: MM starts from %s scaled by %.6g (Problem 2 objective %.9g, ramp "
                  "constraints over their bounds by %.3g in all, A7)",
                  r->opt.start, best, best_obj, best_viol);
    return STRUX_OK;
}

/* The step's start: the pattern, γ̌ and C_0 at the anchor, its Problem 2 values, a new search.
 * *stop: no example changed side (the surrogate would be the last one). */
static strux_status step_begin(strux_rates *r, int *stop)
{
    rates_mm_state *st = &r->st;
    *stop = 0;
    r->step_t0 = strux_time_now();
    r->lp0 = r->lp_s;
    r->comm0 = strux_comm_seconds(r->comm);
    strux_rates_scores(r, r->anchor);
    STRUX_TRY(linearise(r, 1));
    if (st->step == 1) st->switched = 0; /* from w = 0 every example was "both hinges" */
    if (st->step > 1 && st->switched == 0) {
        if (strux_comm_rank(r->comm) == 0)
            strux_log(STRUX_LOG_INFO, "rates: MM stops: no example changed side");
        *stop = 1;
        return STRUX_OK;
    }
    STRUX_TRY(problem2(r, r->anchor, &st->obj, r->viol, NULL));
    if (st->step == 1 && strux_comm_rank(r->comm) == 0)
        for (int32_t j = 0; j < r->m; j++)
            if (r->viol[j] > 0)
                strux_log(STRUX_LOG_WARN,
                          "rates: the MM start violates constraint %s (ramp value %.6g above its "
                          "bound); MM runs anyway (A7)",
                          r->con_name[j], r->viol[j]);
    STRUX_TRY(search_begin(r));
    st->phase = MM_SEARCH;
    return STRUX_OK;
}

/* The step's end: its model's Problem 2 values, kept (the new anchor, its /rates snapshot) when
 * its objective is below the last kept step's; *stop when MM ends here. */
static strux_status step_end(strux_rates *r, strux_driver *drv, strux_model *ret, int *stop,
                             int *repeat)
{
    rates_mm_state *st = &r->st;
    int32_t m = r->m;
    double obj_new, *ramp_new = r->rec, *ind = r->rec + m, *tv = r->rec + 2 * m;
    *repeat = 0;
    STRUX_TRY(problem2(r, ret, &obj_new, ramp_new, ind));
    STRUX_TRY(test_values(r, ret, tv));
    /* a step whose objective is not below the anchor's is not kept. With exact inner solves MM
     * never rises; with solves to the search's tolerance ε a step can rise by up to ε, or the
     * search can prove the anchor optimal to ε and return it, while the ramp constraints are
     * still slack by about ε/v (the surrogate's gap closes only over further steps). So the step
     * is retried from the same anchor at ε/4, twice at most (down to rates.eps/16); only then
     * does MM end with the anchor, its /rates snapshot and values. */
    int rise = st->step > 1 && obj_new >= st->prev;
    int retry = rise && st->eps > r->opt.eps / 16 * 1.5;
    r->step_s = strux_time_now() - r->step_t0;
    r->comm_s = strux_comm_seconds(r->comm) - r->comm0;
    if (strux_comm_rank(r->comm) == 0) {
        char vs[512] = "";
        for (int32_t j = 0; j < m && strlen(vs) < 400; j++)
            snprintf(vs + strlen(vs), sizeof vs - strlen(vs),
                     " %s: v %.6g ramp %+.3e train %+.9e", r->con_name[j], r->v[j], ramp_new[j],
                     ind[j]);
        strux_log(STRUX_LOG_INFO,
                  "rates: MM step %lld objective %.9g, %lld switched, %lld cuts, %lld bias cuts, "
                  "%lld inner epochs, %.2fs (lp %.3fs, comm %.3fs);%s%s",
                  (long long)st->step, obj_new, (long long)st->switched,
                  (long long)r->total_cuts, (long long)r->total_bcuts,
                  (long long)r->inner_epochs, r->step_s, r->lp_s - r->lp0, r->comm_s, vs,
                  retry  ? "; not below the last step's objective: retried at a quarter of the "
                           "search's tolerance"
                  : rise ? "; not below the last step's objective: MM stops with that step's model"
                         : "");
    }
    /* the step's record (kept or not: the rise of a step not kept is what the log shows) */
    r->rec_obj = obj_new;
    r->rec_kept = !rise;
    r->recording = 1;
    strux_status s = strux_driver_record(drv);
    r->recording = 0;
    STRUX_TRY(s);
    *stop = rise && !retry;
    if (retry) { /* the same step again, from the same anchor, at ε/4 */
        st->eps /= 4;
        *repeat = 1;
        return STRUX_OK;
    }
    if (rise) return STRUX_OK;
    STRUX_TRY(strux_model_copy(r->anchor, ret));
    r->mm_objective = obj_new;
    memcpy(r->ramp, ramp_new, (size_t)m * sizeof *r->ramp);
    memcpy(r->train_val, ind, (size_t)m * sizeof *r->train_val);
    memcpy(r->test_val, tv, (size_t)m * sizeof *r->test_val);
    strux_rates_store_free(&r->kept);
    STRUX_TRY(strux_rates_snapshot(r, &r->kept));
    *stop = st->step > 1 && st->prev - obj_new < r->opt.mm_tol * fabs(st->prev);
    st->prev = obj_new;
    return STRUX_OK;
}

/* After a resume inside a search: the pattern, γ̌ and C_0 again from the anchor (the switched
 * count is the checkpoint's), the loss weights of the multipliers and the bias of the
 * SVMOptimizer call under way; the duals and w are the checkpoint's. */
static strux_status resume_search(strux_rates *r)
{
    rates_mm_state *st = &r->st;
    r->step_t0 = strux_time_now();
    r->lp0 = r->lp_s;
    r->comm0 = strux_comm_seconds(r->comm);
    strux_rates_scores(r, r->anchor);
    STRUX_TRY(linearise(r, 0));
    if (st->in_solve) STRUX_TRY(strux_rates_set_multipliers(r, st->vt, 0));
    if (r->free_bias) strux_rates_set_bias(r, r->bt);
    return STRUX_OK;
}

/* Constraints still violated (ramp, randomised reading, beyond rates.eps) at the kept model: each
 * named with the value its left side reaches; STRUX_ERR_NUMERIC for the first, or with
 * rates.on_violation = keep warnings and the count in /rates (n_violated). */
static strux_status violations(strux_rates *r)
{
    int32_t K = strux_subset_count(r->defs), rank0 = strux_comm_rank(r->comm) == 0;
    double *sr = NULL, *si = NULL;
    strux_rates_scores(r, r->anchor);
    strux_status s = strux_alloc_array(&sr, (size_t)K, sizeof *sr);
    if (s == STRUX_OK) s = strux_alloc_array(&si, (size_t)K, sizeof *si);
    if (s == STRUX_OK) s = rates_at(r, sr, si);
    for (int32_t j = 0; s == STRUX_OK && j < r->m; j++) {
        if (!(r->ramp[j] > r->opt.eps)) continue;
        double lhs, rhs, ratio;
        int sat;
        strux_rates_constraint_values(r->e[j + 1], r->n, sr, &lhs, &rhs, &sat, &ratio);
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "constraint %s (%s) is still violated when training ends: %s reaches %.4g "
                 "against %.4g (the ramp rates of the kept model, the randomised reading), "
                 "multiplier %.6g with v_max %g",
                 r->con_name[j], r->con_text[j], r->e[j + 1]->lhs_text, lhs, rhs, r->v[j],
                 r->st.v_max);
        r->kept.n_violated++;
        if (strcmp(r->opt.on_violation, "keep") == 0) {
            if (rank0) strux_log(STRUX_LOG_WARN, "%s; the model is kept", msg);
        } else {
            s = strux_error_set(STRUX_ERR_NUMERIC, __FILE__, __LINE__, __func__, "%s", msg);
        }
    }
    strux_free(&sr);
    strux_free(&si);
    return s;
}

strux_status strux_rates_run(strux_rates *r, strux_driver *drv, strux_model *model)
{
    rates_mm_state *st = &r->st;
    int32_t m = r->m;
    int rank0 = strux_comm_rank(r->comm) == 0, stop = 0;
    strux_model *ret = NULL;
    STRUX_TRY(strux_model_create_like(model, &ret));
    strux_status s = STRUX_OK;
    if (r->resumed) {
        STRUX_TRY_GOTO(s, resume_search(r), done);
    } else {
        if (!r->anchor) STRUX_TRY_GOTO(s, strux_model_create_like(model, &r->anchor), done);
        STRUX_TRY_GOTO(s, start_model(r, r->anchor), done);
        *st = (rates_mm_state){.step = 1, .phase = MM_STEP_START, .v_max = r->opt.v_max,
                               .prev = NAN, .eps = r->opt.eps};
    }
    r->resumed = 0;
    while (st->phase != MM_DONE) {
        if (st->phase == MM_STEP_START) {
            if (st->step > r->opt.mm_steps) break;
            STRUX_TRY_GOTO(s, step_begin(r, &stop), done);
            if (stop) break;
        }
        STRUX_TRY_GOTO(s, search_run(r, drv, ret), done);
        if (st->limit) {
            if (rank0)
                strux_log(STRUX_LOG_WARN,
                          "rates: the run's epoch or time limit stopped MM step %lld; the model "
                          "is the last kept step's",
                          (long long)st->step);
            break;
        }
        int saturated = 0; /* A1: some v_j at v_max with its (ramp) constraint violated */
        double obj, rv[STRUX_RATES_MAX_M + 1];
        STRUX_TRY_GOTO(s, problem2(r, ret, &obj, rv, NULL), done);
        for (int32_t j = 0; j < m; j++)
            saturated |= r->v[j] >= 0.99 * st->v_max && rv[j] > r->opt.eps;
        if (saturated && st->doublings < MAX_DOUBLINGS) {
            st->doublings++;
            st->v_max *= 2;
            if (rank0)
                strux_log(STRUX_LOG_INFO, "rates: a multiplier saturated; v_max doubled to %g",
                          st->v_max);
            STRUX_TRY_GOTO(s, search_begin(r), done);
            continue;
        }
        int repeat;
        STRUX_TRY_GOTO(s, step_end(r, drv, ret, &stop, &repeat), done);
        if (stop) break;
        if (repeat) {
            STRUX_TRY_GOTO(s, search_begin(r), done);
            continue;
        }
        st->step++;
        st->phase = MM_STEP_START;
    }
    st->phase = MM_DONE;
    if (st->step > r->opt.mm_steps) st->step = r->opt.mm_steps;
    STRUX_CHECK_GOTO(s, r->kept.m == m, STRUX_ERR_NUMERIC, done,
                     "rate-constrained training ended before its first MM step was complete "
                     "(raise solver.epochs or solver.time_limit)");
    STRUX_TRY_GOTO(s, strux_model_copy(model, r->anchor), done);
    STRUX_TRY_GOTO(s, violations(r), done);
done:
    strux_model_destroy(&ret);
    return s;
}

/* ---- checkpoints: the hook's shared state ---- */

static strux_status put_f64(strux_blob *b, const double *x, int64_t n)
{
    STRUX_TRY(strux_blob_put(b, &n, sizeof n));
    return n ? strux_blob_put(b, x, (size_t)n * sizeof *x) : STRUX_OK;
}

/* n doubles into *x (allocated when *x is NULL; otherwise n must be what was written). */
static strux_status get_f64(strux_blob *b, double **x, int64_t n, const char *what)
{
    int64_t k;
    STRUX_TRY(strux_blob_get(b, &k, sizeof k, what));
    STRUX_CHECK(k == n, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %lld values of %s, this run %lld "
                "(another problem)",
                (long long)k, what, (long long)n);
    if (!*x) STRUX_TRY(strux_alloc_array(x, (size_t)n + 1, sizeof **x));
    return n ? strux_blob_get(b, *x, (size_t)n * sizeof **x, what) : STRUX_OK;
}

static strux_status put_str(strux_blob *b, const char *s)
{
    int64_t n = (int64_t)strlen(s);
    STRUX_TRY(strux_blob_put(b, &n, sizeof n));
    return strux_blob_put(b, s, (size_t)n);
}

static strux_status get_str(strux_blob *b, char **s)
{
    int64_t n;
    STRUX_TRY(strux_blob_get(b, &n, sizeof n, "string length"));
    STRUX_CHECK(n >= 0 && n < ((int64_t)1 << 30), STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds a string of %lld bytes", (long long)n);
    STRUX_TRY(strux_alloc(s, (size_t)n + 1));
    STRUX_TRY(strux_blob_get(b, *s, (size_t)n, "string"));
    (*s)[n] = '\0';
    return STRUX_OK;
}

static strux_status put_model(strux_blob *b, const strux_model *w)
{
    int32_t has = w != NULL;
    STRUX_TRY(strux_blob_put(b, &has, sizeof has));
    return has ? strux_model_put(w, b) : STRUX_OK;
}

static strux_status get_model(strux_rates *r, strux_blob *b, strux_model **w)
{
    int32_t has;
    STRUX_TRY(strux_blob_get(b, &has, sizeof has, "model flag"));
    if (!has) return STRUX_OK;
    STRUX_TRY(strux_model_create_like(r->solver->model, w));
    return strux_model_get_blob(*w, b, "a rate-constraint iterate");
}

/* The kept step's /rates snapshot (strux_rates_store). */
static strux_status put_store(strux_blob *b, const strux_rates_store *s)
{
    STRUX_TRY(strux_blob_put(b, &s->m, sizeof s->m));
    if (!s->m) return STRUX_OK;
    for (int32_t j = 0; j < s->m; j++) {
        STRUX_TRY(put_str(b, s->names[j]));
        STRUX_TRY(put_str(b, s->texts[j]));
    }
    STRUX_TRY(strux_blob_put(b, &s->n_defs, sizeof s->n_defs));
    for (int32_t k = 0; k < s->n_defs; k++) {
        STRUX_TRY(put_str(b, s->def_names[k]));
        STRUX_TRY(put_str(b, s->def_texts[k]));
    }
    for (int32_t j = 0; j <= s->m; j++)
        STRUX_TRY(put_str(b, s->canonical[j]));
    STRUX_TRY(put_f64(b, s->v, s->m));
    STRUX_TRY(put_f64(b, s->train_ramp, s->m));
    STRUX_TRY(put_f64(b, s->train_value, s->m));
    STRUX_TRY(put_f64(b, s->test_value, s->m));
    STRUX_TRY(strux_blob_put(b, &s->v_max, sizeof s->v_max));
    STRUX_TRY(strux_blob_put(b, &s->mm_steps, sizeof s->mm_steps));
    STRUX_TRY(strux_blob_put(b, &s->n_mix, sizeof s->n_mix));
    STRUX_TRY(strux_blob_put(b, &s->n_w, sizeof s->n_w));
    STRUX_TRY(put_f64(b, s->mix_w, s->n_mix * s->n_w));
    STRUX_TRY(put_f64(b, s->mix_mu, s->n_mix));
    STRUX_TRY(strux_blob_put(b, &s->n_base, sizeof s->n_base));
    for (int32_t k = 0; k < s->n_base; k++) {
        STRUX_TRY(put_str(b, s->base_paths[k]));
        STRUX_TRY(strux_blob_put(b, &s->base_is_model[k], sizeof s->base_is_model[k]));
    }
    return s->n_base ? put_f64(b, s->base_w, s->n_base * s->n_w) : STRUX_OK;
}

static strux_status get_store(strux_blob *b, strux_rates_store *s)
{
    *s = (strux_rates_store){0};
    int32_t m;
    STRUX_TRY(strux_blob_get(b, &m, sizeof m, "constraints"));
    if (!m) return STRUX_OK;
    STRUX_CHECK(m > 0 && m <= STRUX_RATES_MAX_M, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d constraints", m);
    STRUX_TRY(strux_alloc_array(&s->names, (size_t)m, sizeof *s->names));
    STRUX_TRY(strux_alloc_array(&s->texts, (size_t)m, sizeof *s->texts));
    STRUX_TRY(strux_alloc_array(&s->canonical, (size_t)m + 1, sizeof *s->canonical));
    s->m = m;
    for (int32_t j = 0; j < m; j++) {
        STRUX_TRY(get_str(b, &s->names[j]));
        STRUX_TRY(get_str(b, &s->texts[j]));
    }
    int32_t n_defs;
    STRUX_TRY(strux_blob_get(b, &n_defs, sizeof n_defs, "dataset definitions"));
    STRUX_CHECK(n_defs >= 0 && n_defs <= 1000000, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d datasets", n_defs);
    if (n_defs) {
        STRUX_TRY(strux_alloc_array(&s->def_names, (size_t)n_defs, sizeof *s->def_names));
        STRUX_TRY(strux_alloc_array(&s->def_texts, (size_t)n_defs, sizeof *s->def_texts));
        s->n_defs = n_defs;
        for (int32_t k = 0; k < n_defs; k++) {
            STRUX_TRY(get_str(b, &s->def_names[k]));
            STRUX_TRY(get_str(b, &s->def_texts[k]));
        }
    }
    for (int32_t j = 0; j <= m; j++)
        STRUX_TRY(get_str(b, &s->canonical[j]));
    STRUX_TRY(get_f64(b, &s->v, m, "multipliers"));
    STRUX_TRY(get_f64(b, &s->train_ramp, m, "train ramp values"));
    STRUX_TRY(get_f64(b, &s->train_value, m, "train values"));
    STRUX_TRY(get_f64(b, &s->test_value, m, "test values"));
    STRUX_TRY(strux_blob_get(b, &s->v_max, sizeof s->v_max, "v_max"));
    STRUX_TRY(strux_blob_get(b, &s->mm_steps, sizeof s->mm_steps, "MM steps"));
    STRUX_TRY(strux_blob_get(b, &s->n_mix, sizeof s->n_mix, "iterates"));
    STRUX_TRY(strux_blob_get(b, &s->n_w, sizeof s->n_w, "weights per iterate"));
    STRUX_CHECK(s->n_mix > 0 && s->n_mix <= m + 1 && s->n_w > 0, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d iterates of %lld weights",
                s->n_mix, (long long)s->n_w);
    STRUX_TRY(get_f64(b, &s->mix_w, s->n_mix * s->n_w, "iterates"));
    STRUX_TRY(get_f64(b, &s->mix_mu, s->n_mix, "iterate weights"));
    int32_t n_base;
    STRUX_TRY(strux_blob_get(b, &n_base, sizeof n_base, "baselines"));
    STRUX_CHECK(n_base >= 0 && n_base <= 1000, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d baselines", n_base);
    if (!n_base) return STRUX_OK;
    STRUX_TRY(strux_alloc_array(&s->base_paths, (size_t)n_base, sizeof *s->base_paths));
    STRUX_TRY(strux_alloc_array(&s->base_is_model, (size_t)n_base, sizeof *s->base_is_model));
    s->n_base = n_base;
    for (int32_t k = 0; k < n_base; k++) {
        STRUX_TRY(get_str(b, &s->base_paths[k]));
        STRUX_TRY(strux_blob_get(b, &s->base_is_model[k], sizeof s->base_is_model[k], "kind"));
    }
    return get_f64(b, &s->base_w, n_base * s->n_w, "baseline weights");
}

strux_status strux_rates_mm_save(void *ctx, strux_blob *b)
{
    const strux_rates *r = ctx;
    int32_t m = r->m;
    STRUX_TRY(strux_blob_put(b, &m, sizeof m));
    STRUX_TRY(strux_blob_put(b, &r->st, sizeof r->st));
    STRUX_TRY(strux_blob_put(b, &r->bt, sizeof r->bt));
    STRUX_TRY(strux_blob_put(b, &r->have_v, sizeof r->have_v));
    STRUX_TRY(put_f64(b, r->v, m));
    STRUX_TRY(put_f64(b, r->viol, m));
    STRUX_TRY(put_f64(b, r->ramp, m));
    STRUX_TRY(put_f64(b, r->train_val, m));
    STRUX_TRY(put_f64(b, r->test_val, m));
    int64_t counts[3] = {r->total_cuts, r->total_bcuts, r->inner_epochs};
    double values[2] = {r->mm_objective, r->lp_s};
    STRUX_TRY(strux_blob_put(b, counts, sizeof counts));
    STRUX_TRY(strux_blob_put(b, values, sizeof values));
    STRUX_TRY(put_model(b, r->anchor));
    STRUX_TRY(strux_blob_put(b, &r->n_cuts, sizeof r->n_cuts));
    for (int32_t s = 0; s < r->n_cuts; s++) {
        const rates_cut *c = &r->cuts[s];
        STRUX_TRY(strux_blob_put(b, &c->u, sizeof c->u));
        STRUX_TRY(strux_blob_put(b, &c->l, sizeof c->l));
        STRUX_TRY(put_f64(b, c->g, m));
        STRUX_TRY(put_f64(b, c->v, m));
        STRUX_TRY(put_model(b, c->w));
    }
    STRUX_TRY(strux_blob_put(b, &r->n_bcuts, sizeof r->n_bcuts));
    for (int32_t s = 0; s < r->n_bcuts; s++) {
        const rates_bcut *c = &r->bcuts[s];
        double x[4] = {c->b, c->u, c->l, c->g};
        STRUX_TRY(strux_blob_put(b, x, sizeof x));
        STRUX_TRY(put_f64(b, c->G, m + 1));
        STRUX_TRY(put_model(b, c->w));
    }
    return put_store(b, &r->kept);
}

strux_status strux_rates_mm_load(void *ctx, strux_blob *b)
{
    strux_rates *r = ctx;
    int32_t m;
    STRUX_TRY(strux_blob_get(b, &m, sizeof m, "constraint count"));
    STRUX_CHECK(m == r->m, STRUX_ERR_INPUT,
                "the checkpoint was written under %d rate constraints, this run has %d", m, r->m);
    STRUX_TRY(strux_blob_get(b, &r->st, sizeof r->st, "MM state"));
    STRUX_TRY(strux_blob_get(b, &r->bt, sizeof r->bt, "bias"));
    STRUX_TRY(strux_blob_get(b, &r->have_v, sizeof r->have_v, "multiplier flag"));
    STRUX_TRY(get_f64(b, &r->v, m, "multipliers"));
    STRUX_TRY(get_f64(b, &r->viol, m, "anchor values"));
    STRUX_TRY(get_f64(b, &r->ramp, m, "ramp values"));
    STRUX_TRY(get_f64(b, &r->train_val, m, "train values"));
    STRUX_TRY(get_f64(b, &r->test_val, m, "test values"));
    int64_t counts[3];
    double values[2];
    STRUX_TRY(strux_blob_get(b, counts, sizeof counts, "counts"));
    STRUX_TRY(strux_blob_get(b, values, sizeof values, "metrics"));
    r->total_cuts = counts[0];
    r->total_bcuts = counts[1];
    r->inner_epochs = counts[2];
    r->mm_objective = values[0];
    r->lp_s = values[1];
    strux_model_destroy(&r->anchor);
    STRUX_TRY(get_model(r, b, &r->anchor));
    STRUX_CHECK(r->anchor && r->st.phase == MM_SEARCH && r->st.in_solve, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state is not inside a multiplier search");
    int32_t n;
    STRUX_TRY(strux_blob_get(b, &n, sizeof n, "cuts"));
    STRUX_CHECK(n >= 2 && n <= 1000000, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d cuts", n);
    free_cuts(r);
    for (int32_t s = 0; s < n; s++) {
        double u, l, *g = NULL, *v = NULL;
        strux_model *w = NULL;
        strux_status st = strux_blob_get(b, &u, sizeof u, "cut");
        if (st == STRUX_OK) st = strux_blob_get(b, &l, sizeof l, "cut");
        if (st == STRUX_OK) st = get_f64(b, &g, m, "cut slopes");
        if (st == STRUX_OK) st = get_f64(b, &v, m, "cut multipliers");
        if (st == STRUX_OK) st = get_model(r, b, &w);
        if (st == STRUX_OK) st = push_cut(r, u, l, g, v, w);
        strux_free(&g);
        strux_free(&v);
        strux_model_destroy(&w);
        STRUX_TRY(st);
    }
    STRUX_TRY(strux_blob_get(b, &n, sizeof n, "bias cuts"));
    STRUX_CHECK(n >= 0 && n <= 1000000, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d bias cuts", n);
    free_bcuts(r);
    for (int32_t s = 0; s < n; s++) {
        double x[4], *G = NULL;
        strux_model *w = NULL;
        strux_status st = strux_blob_get(b, x, sizeof x, "bias cut");
        if (st == STRUX_OK) st = get_f64(b, &G, m + 1, "bias cut sums");
        if (st == STRUX_OK) st = get_model(r, b, &w);
        if (st == STRUX_OK) st = push_bcut(r, x[0], x[1], x[2], x[3], G, w);
        strux_free(&G);
        strux_model_destroy(&w);
        STRUX_TRY(st);
    }
    strux_rates_store_free(&r->kept);
    STRUX_TRY(get_store(b, &r->kept));
    r->resumed = 1;
    return STRUX_OK;
}
