/* solvers/rates_search.c - the multiplier cutting plane (Alg. 2) and the bias cutting plane
 * (Alg. 3) of rate-constrained training (dataset_constraints.md §3.1-§3.5), resumable from the
 * state in rates_mm_state (rates_impl.h).
 *
 * Alg. 2: rank 0 keeps one GLPK LP per search through src/lp (a row per cut, warm simplex),
 * picks v by rates.cut (E.1 the LP's maximiser, E.2 the centroid of the cut model's hypograph
 * above L, or the level-set midpoint of §3.4; rates_cut.c), and broadcasts v, ε_t and every stop
 * decision; the search returns the LP-dual average of its iterates (A5) or the best lower bound's
 * iterate (rates.return). After a resume rank 0 replays the LP's rows and solves in their
 * original order, so GLPK's warm-started simplex returns the same vertices.
 *
 * Alg. 3: for fixed v, cuts of G(b) = min_w Ψ from each SDCA dual (affine in b, slope −Σξ/N), b by
 * F.2.1 (the model's minimiser) or F.2.2 (the centroid below the best upper bound, u'_0 inflated
 * to 2ũ_0 − l'_0), over the interval B = [−b_max, b_max] with b_max = ½ + X·√(2(ũ_0 − l'_0)/λ): at
 * an optimum (w*, b*) the losses are ≥ 0, so (λ/2)||w*||² ≤ F(v) − l'_0 ≤ ũ_0 − l'_0, and some
 * optimal b lies in [min w*·x − ½, max w*·x + ½] (beyond it G is monotone) — the §3.5 bound
 * ½ + X²B_c/λ made tighter with the known upper bound ũ_0, so that L'_t stays a lower bound on
 * F(v_t). Not here: the MM loop (rates_mm.c), the inner SVM (rates_inner.c). */
#include "rates_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_BIAS_CUTS 50 /* Alg. 3 iterations per SVMOptimizer call at most (§3.8) */

/* ---- cuts ---- */

/* Room for one more of *n entries of size bytes in *a (capacity *cap, doubled when full). */
static strux_status grow(void *a, int32_t n, int32_t *cap, size_t size)
{
    if (n < *cap) return STRUX_OK;
    int32_t c = *cap ? 2 * *cap : 16;
    STRUX_TRY(strux_realloc_array(a, (size_t)c, size));
    *cap = c;
    return STRUX_OK;
}

/* A copy of iterate w (NULL: none) into *out. */
static strux_status keep_iterate(const strux_model *w, strux_model **out)
{
    if (!w) return STRUX_OK;
    STRUX_TRY(strux_model_create_like(w, out));
    return strux_model_copy(*out, w);
}

strux_status strux_rates_cut_push(strux_rates *r, double u, double l, const double *g,
                                  const double *v, const strux_model *w)
{
    STRUX_TRY(grow(&r->cuts, r->n_cuts, &r->cap_cuts, sizeof *r->cuts));
    rates_cut *c = &r->cuts[r->n_cuts++];
    *c = (rates_cut){.u = u, .l = l};
    STRUX_TRY(strux_alloc_array(&c->g, (size_t)r->m + 1, sizeof *c->g));
    STRUX_TRY(strux_alloc_array(&c->v, (size_t)r->m + 1, sizeof *c->v));
    if (r->m) {
        memcpy(c->g, g, (size_t)r->m * sizeof *g);
        memcpy(c->v, v, (size_t)r->m * sizeof *v);
    }
    return keep_iterate(w, &c->w);
}

void strux_rates_cuts_free(strux_rates *r)
{
    for (int32_t s = 0; s < r->n_cuts; s++) {
        strux_free(&r->cuts[s].g);
        strux_free(&r->cuts[s].v);
        strux_model_destroy(&r->cuts[s].w);
    }
    r->n_cuts = 0;
}

strux_status strux_rates_bcut_push(strux_rates *r, double b, double u, double l, double g,
                                   const double *G, const strux_model *w)
{
    STRUX_TRY(grow(&r->bcuts, r->n_bcuts, &r->cap_bcuts, sizeof *r->bcuts));
    rates_bcut *c = &r->bcuts[r->n_bcuts++];
    *c = (rates_bcut){.b = b, .u = u, .l = l, .g = g};
    STRUX_TRY(strux_alloc_array(&c->G, (size_t)r->m + 1, sizeof *c->G));
    if (G) memcpy(c->G, G, (size_t)(r->m + 1) * sizeof *G);
    return keep_iterate(w, &c->w);
}

void strux_rates_bcuts_free(strux_rates *r)
{
    for (int32_t s = 0; s < r->n_bcuts; s++) {
        strux_free(&r->bcuts[s].G);
        strux_model_destroy(&r->bcuts[s].w);
    }
    r->n_bcuts = 0;
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
double strux_rates_anchor_bias(const strux_rates *r)
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
    strux_rates_bcuts_free(r);
    double l0 = r->C0; /* l'_0 = C_0 − Σ v γ̌: every other term of Ψ is ≥ 0 */
    for (int32_t j = 0; j < r->m; j++)
        l0 -= st->vt[j] * r->gam[j];
    double u0 = strcmp(r->opt.bias_cut, "center") == 0 ? 2 * st->ht - l0 : st->ht; /* F.2.2 */
    st->b_max = 2 * (0.5 + r->X * sqrt(2 * fmax(st->ht - l0, 0.0) / r->lam)); /* stored units */
    double b0 = fmin(fmax(st->b_prev, -st->b_max), st->b_max);
    st->b_lo = fmax(b0 - 1, -st->b_max);
    st->b_hi = fmin(b0 + 1, st->b_max);
    st->bt = 1;
    return strux_rates_bcut_push(r, 0, u0, l0, 0, NULL, NULL);
}

/* The bias model h'(b) = max_s l'_s + g'_s (b − b_s) over the bias cuts: its minimum *L on
 * [lo, hi] at *b, or (U finite) the centroid (*b, *L) of {(b, z): lo ≤ b ≤ hi, h'(b) ≤ z ≤ U}. */
static strux_status bias_model(strux_rates *r, double lo, double hi, double U, double *b,
                               double *L)
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
    if (s == STRUX_OK)
        s = isfinite(U) ? strux_rates_bias_center(n, lv, gv, bv, lo, hi, U, b, L)
                        : strux_rates_bias_min(n, lv, gv, bv, lo, hi, b, L);
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
    STRUX_TRY(bias_model(r, st->b_lo, st->b_hi, INFINITY, b, &Lb));
    if (n > 1 && at_open_end(st, *b, &side)) { /* widen that side once: a geometric probe */
        if (side < 0) st->b_lo = fmax(b0 - 2 * (b0 - st->b_lo), -st->b_max);
        else st->b_hi = fmin(b0 + 2 * (st->b_hi - b0), st->b_max);
        STRUX_TRY(bias_model(r, st->b_lo, st->b_hi, INFINITY, b, &Lb));
    }
    int valid = !at_open_end(st, *b, &side);
    *best = -1;
    *target = (Ub - Lb) / 2;
    if (arg >= 0 && (st->bt > MAX_BIAS_CUTS || st->limit)) { /* the safe B's bound */
        double bb;
        STRUX_TRY(bias_model(r, -st->b_max, st->b_max, INFINITY, &bb, &Lb));
        *best = arg;
        *target = Lb;
    } else if (arg >= 0 && valid && Ub - Lb <= st->eps_t) {
        *best = arg;
        *target = Lb;
    } else if (strcmp(r->opt.bias_cut, "center") == 0) {
        STRUX_TRY(bias_model(r, st->b_lo, st->b_hi, Ub, b, &zc));
        *target = (Ub - zc) / 2;
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
        STRUX_TRY(strux_rates_bcut_push(r, r->bt, strux_rates_psi(r, st->vt), strux_rates_psi_dual(r, st->vt),
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
strux_status strux_rates_search_begin(strux_rates *r)
{
    rates_mm_state *st = &r->st;
    double zero[STRUX_RATES_MAX_M + 1] = {0};
    strux_rates_cuts_free(r);
    strux_lp_destroy(&r->lp);
    st->u0 = st->obj;
    for (int32_t j = 0; j < r->m; j++)
        st->u0 += st->v_max * fmax(0.0, r->viol[j]);
    STRUX_TRY(strux_rates_cut_push(r, st->u0 + 1e-6 * fmax(1.0, fabs(st->u0)), r->C0, zero, zero, NULL));
    STRUX_TRY(strux_rates_cut_push(r, st->obj, -INFINITY, r->viol, zero, r->anchor));
    st->t = 1;
    st->L = r->C0;
    st->in_solve = 0;
    if (r->free_bias) st->b_prev = strux_rates_anchor_bias(r);
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
strux_status strux_rates_search_run(strux_rates *r, strux_driver *drv, strux_model *ret)
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
        STRUX_TRY_GOTO(s, strux_rates_cut_push(r, u, l, g, st->vt, w), done);
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
