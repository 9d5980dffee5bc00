/* search/hull.c - convex hull search for bi-criteria surrogates (slack_bicriteria.md §3.7,
 * Algorithm 4) and the integral recovery with a ban list (§3.8). Plain λ-oracle calls only.
 * S is kept as the upper-right convex chain of the labels found (sorted by g ascending, h
 * descending): the only part of the hull a λ ≥ 0 oracle reaches (Lemma 12). GetLambda takes the
 * tangent weight ψ_g/ψ_h at the best vertex ŷ, or the weight of the edge from ŷ to the neighbour
 * that lies on the super-level-set side of that tangent (the corrected test of A13, with the
 * default T ← T'). The search stops when the oracle answers with nothing better than S along the
 * asked direction (Theorem 7), and GetMaxFract returns the best point of the two edges at ŷ
 * (closed form for ψ = hg, golden section otherwise). Departures: the truth's point (ψ = 0) is a
 * member of S from the start, so a first answer with ψ < 0 still yields a valid direction (the
 * spec's "return y_i" case, §3.7 degenerate tangents); λ = ∞ is the direction (δ, 1) (A14).
 * Warm start: the chain vertices of the example's previous visit are re-scored under the current
 * w and S is pruned to its own upper-right chain before the first GetLambda. */
#include "search_impl.h"

#include <math.h>

#define HULL_DELTA 1e-9     /* weight of h in the λ = ∞ direction (δ, 1): ties go to larger h */
#define HULL_TERM_TOL 1e-12 /* relative slack of the "nothing better than S" termination test */
#define HULL_GOLDEN_ITERS 80 /* golden-section steps on [0, 1]: 0.618^80 ≈ 2e-17 */
#define HULL_WARM_MAX 8      /* chain vertices remembered per example */

typedef struct hull_vertex {
    strux_point p;
    int32_t slot; /* label slot in the work pool */
} hull_vertex;

typedef struct hull_data {
    int64_t cap;      /* vertices S may hold */
    hull_vertex *S;   /* the chain, n_S of cap */
    hull_vertex *tmp; /* scratch of cap entries for pruning */
    int32_t n_S;
    strux_label_pool work; /* labels of S */
    char *slot_used;
    strux_label_pool ban; /* ban list of the integral recovery */
    int32_t n_ban;
    strux_label_pool warm; /* n_local × HULL_WARM_MAX vertices of the previous visit */
    int32_t *n_warm;
    int integral;
} hull_data;

double strux_hull_line_max(const strux_surrogate *u, double hp, double gp, double hq, double gq,
                           double *s_best)
{
    double dh = hq - hp, dg = gq - gp;
    double vp = u->psi(u, hp, gp), vq = u->psi(u, hq, gq);
    double s = vp >= vq ? 0.0 : 1.0, v = fmax(vp, vq);
    if (u->hg) {
        /* ψ(s) = (hp + s·dh)(gp + s·dg), concave when dh·dg < 0 */
        if (dh * dg < 0) {
            double sc = -(hp * dg + gp * dh) / (2 * dh * dg);
            if (sc > 0 && sc < 1) {
                double vc = (hp + sc * dh) * (gp + sc * dg);
                if (vc > v) s = sc, v = vc;
            }
        }
    } else {
        const double r = (sqrt(5.0) - 1) / 2;
        double a = 0, b = 1, x1 = b - r * (b - a), x2 = a + r * (b - a);
        double f1 = u->psi(u, hp + x1 * dh, gp + x1 * dg);
        double f2 = u->psi(u, hp + x2 * dh, gp + x2 * dg);
        for (int k = 0; k < HULL_GOLDEN_ITERS; k++) {
            if (f1 < f2) {
                a = x1, x1 = x2, f1 = f2;
                x2 = a + r * (b - a);
                f2 = u->psi(u, hp + x2 * dh, gp + x2 * dg);
            } else {
                b = x2, x2 = x1, f2 = f1;
                x1 = b - r * (b - a);
                f1 = u->psi(u, hp + x1 * dh, gp + x1 * dg);
            }
        }
        double sc = f1 > f2 ? x1 : x2, vc = fmax(f1, f2);
        if (vc > v) s = sc, v = vc;
    }
    *s_best = s;
    return v;
}

static int32_t slot_take(hull_data *d)
{
    for (int32_t k = 0; k < d->cap; k++)
        if (!d->slot_used[k]) {
            d->slot_used[k] = 1;
            return k;
        }
    return -1;
}

/* cross product of (b − a) and (c − a) in (x, y) = (g, h) */
static double cross(const strux_point *a, const strux_point *b, const strux_point *c)
{
    return (b->g - a->g) * (c->h - a->h) - (b->h - a->h) * (c->g - a->g);
}

/* Keep only the upper-right convex chain of S: from the highest-h point (largest g among ties)
 * along the upper hull to the largest-g point; freed label slots return to the pool. */
static void hull_prune(hull_data *d)
{
    int32_t n = d->n_S;
    /* insertion sort by g ascending, h descending */
    for (int32_t k = 1; k < n; k++) {
        hull_vertex v = d->S[k];
        int32_t j = k - 1;
        while (j >= 0 && (d->S[j].p.g > v.p.g || (d->S[j].p.g == v.p.g && d->S[j].p.h < v.p.h))) {
            d->S[j + 1] = d->S[j];
            j--;
        }
        d->S[j + 1] = v;
    }
    int32_t top = 0; /* highest h, last (largest g) among ties */
    for (int32_t k = 1; k < n; k++)
        if (d->S[k].p.h >= d->S[top].p.h) top = k;
    int32_t m = 0;
    for (int32_t k = 0; k < n; k++) {
        hull_vertex v = d->S[k];
        int keep = k >= top && (m == 0 || v.p.g > d->tmp[m - 1].p.g);
        if (keep)
            while (m >= 2 && cross(&d->tmp[m - 2].p, &d->tmp[m - 1].p, &v.p) >= 0) {
                d->slot_used[d->tmp[m - 1].slot] = 0;
                m--;
            }
        if (keep)
            d->tmp[m++] = v;
        else
            d->slot_used[v.slot] = 0;
    }
    for (int32_t k = 0; k < m; k++)
        d->S[k] = d->tmp[k];
    d->n_S = m;
}

static int32_t hull_best(const strux_surrogate *u, const hull_data *d)
{
    int32_t t = 0;
    for (int32_t k = 1; k < d->n_S; k++)
        if (u->psi(u, d->S[k].p.h, d->S[k].p.g) > u->psi(u, d->S[t].p.h, d->S[t].p.g)) t = k;
    return t;
}

/* GetLambda (§3.7 with A13): INFINITY stands for the direction (δ, 1). */
static double hull_lambda(const strux_surrogate *u, const hull_data *d)
{
    int32_t t = hull_best(u, d);
    const strux_point *pt = &d->S[t].p;
    double p = u->psi_h(u, pt->h, pt->g), q = u->psi_g(u, pt->h, pt->g);
    double lambda = p > 0 ? q / p : INFINITY;
    if (!(lambda >= 0)) lambda = 0; /* ψ_g < 0 only where ψ < 0: never at the best vertex */
    for (int32_t n = t - 1; n <= t + 1; n += 2) {
        if (n < 0 || n >= d->n_S) continue;
        const strux_point *pn = &d->S[n].p;
        double side = p > 0 ? p * (pn->h - pt->h) + q * (pn->g - pt->g) : pn->g - pt->g;
        if (side > 0 && pn->g != pt->g) return -(pn->h - pt->h) / (pn->g - pt->g);
    }
    return lambda;
}

/* Value of point p along the direction of weight λ (λ = ∞: the direction (δ, 1)). */
static double along(double lambda, const strux_point *p)
{
    return isinf(lambda) ? HULL_DELTA * p->h + p->g : p->h + lambda * p->g;
}

static strux_query hull_query(const strux_search *s, double lambda)
{
    return isinf(lambda) ? strux_plane_query(&s->u, HULL_DELTA, 1.0)
                         : strux_plane_query(&s->u, 1.0, lambda);
}

static strux_status hull_add(hull_data *d, const strux_label *y, const strux_point *p)
{
    int32_t slot = slot_take(d);
    STRUX_CHECK(slot >= 0, STRUX_ERR_INTERNAL, "convex hull chain over %lld vertices",
                (long long)d->cap);
    STRUX_TRY(strux_label_copy(&d->work.slot[slot], y));
    d->S[d->n_S++] = (hull_vertex){*p, slot};
    return STRUX_OK;
}

static int is_banned(const hull_data *d, const strux_label *y)
{
    for (int32_t k = 0; k < d->n_ban; k++)
        if (strux_label_equal(&d->ban.slot[k], y)) return 1;
    return 0;
}

/* One convex hull search (against the ban list in integral mode). On return S holds the chain,
 * *ta the best vertex, *tb its partner (−1 if the optimum is the vertex), *mix the weight of ta,
 * *psi the optimum over the hull of the non-banned labels, *exact whether it was certified. */
static strux_status hull_search(strux_search *s, strux_task *t, const strux_pot *pot,
                                const strux_label *truth, int warm, int32_t *ta, int32_t *tb,
                                double *mix, double *psi, int *exact, double *ub_hg)
{
    hull_data *d = s->data;
    const strux_surrogate *u = &s->u;
    const int64_t i = pot->i;
    d->n_S = 0;
    for (int64_t k = 0; k < d->cap; k++)
        d->slot_used[k] = 0;
    strux_point p;
    if (!is_banned(d, truth)) {
        strux_plane_eval(s, t, pot, truth, truth, &p);
        STRUX_TRY(hull_add(d, truth, &p));
    }
    if (warm)
        for (int32_t k = 0; k < d->n_warm[i]; k++) {
            const strux_label *y = &d->warm.slot[i * HULL_WARM_MAX + k];
            strux_plane_eval(s, t, pot, truth, y, &p);
            STRUX_TRY(hull_add(d, y, &p));
        }
    hull_prune(d);
    double lambda = d->n_S > 0 ? hull_lambda(u, d) : INFINITY;
    *exact = 0;
    while (s->calls < s->opt.max_calls) {
        strux_query q = hull_query(s, lambda);
        q.ban = d->ban.slot;
        q.n_ban = d->n_ban;
        int found;
        STRUX_TRY(strux_plane_call(s, t, pot, truth, &q, &s->scratch, &p, &found));
        if (!found) { /* every label is banned */
            *exact = 1;
            break;
        }
        if (u->hg && !isinf(lambda) && lambda > 0) { /* Lemma 5 on the SR plane */
            double K = p.h + lambda * p.g;
            *ub_hg = fmin(*ub_hg, K > 0 ? K * K / (4 * lambda) : 0.0);
        }
        double v = along(lambda, &p), v_S = -INFINITY;
        int known = 0;
        for (int32_t k = 0; k < d->n_S; k++) {
            v_S = fmax(v_S, along(lambda, &d->S[k].p));
            known = known || strux_label_equal(&d->work.slot[d->S[k].slot], &s->scratch);
        }
        if (known || v <= v_S + HULL_TERM_TOL * fmax(1.0, fabs(v_S))) { /* Theorem 7 */
            *exact = 1;
            break;
        }
        STRUX_TRY(hull_add(d, &s->scratch, &p));
        hull_prune(d);
        lambda = hull_lambda(u, d);
    }
    /* GetMaxFract */
    *tb = -1;
    *mix = 1;
    if (d->n_S == 0) { /* the ban list left no label at all */
        *ta = -1;
        *psi = -INFINITY;
        return STRUX_OK;
    }
    *ta = hull_best(u, d);
    const strux_point *pt = &d->S[*ta].p;
    *psi = u->psi(u, pt->h, pt->g);
    for (int32_t n = *ta - 1; n <= *ta + 1; n += 2) {
        if (n < 0 || n >= d->n_S) continue;
        double sb, v = strux_hull_line_max(u, pt->h, pt->g, d->S[n].p.h, d->S[n].p.g, &sb);
        if (v > *psi && sb > 0) {
            *psi = v;
            *tb = n;
            *mix = 1 - sb;
        }
    }
    return STRUX_OK;
}

/* Remember the chain vertices nearest the optimum (the truth excluded) for the next visit. */
static strux_status hull_remember(hull_data *d, const strux_label *truth, int64_t i, int32_t ta)
{
    int32_t lo = ta - HULL_WARM_MAX / 2 < 0 ? 0 : ta - HULL_WARM_MAX / 2, n = 0;
    for (int32_t k = lo; k < d->n_S && n < HULL_WARM_MAX; k++) {
        const strux_label *y = &d->work.slot[d->S[k].slot];
        if (strux_label_equal(y, truth)) continue;
        STRUX_TRY(strux_label_copy(&d->warm.slot[i * HULL_WARM_MAX + n], y));
        n++;
    }
    d->n_warm[i] = n;
    return STRUX_OK;
}

static strux_status hull_run(strux_search *s, strux_task *t, const strux_pot *pot,
                             const strux_label *truth, strux_search_result *r)
{
    hull_data *d = s->data;
    const strux_surrogate *u = &s->u;
    strux_plane_begin(s, t, truth);
    d->n_ban = 0;
    int32_t ta, tb;
    double mix, psi, ub_hg = INFINITY;
    int exact;
    STRUX_TRY(
        hull_search(s, t, pot, truth, s->opt.warm_start, &ta, &tb, &mix, &psi, &exact, &ub_hg));
    if (s->opt.warm_start) STRUX_TRY(hull_remember(d, truth, pot->i, ta));
    if (!d->integral) {
        double ub = exact ? psi : ub_hg;
        if (tb < 0) return strux_search_answer(s, &d->work.slot[d->S[ta].slot], &d->S[ta].p, ub, r);
        return strux_search_answer_mix(s, &d->work.slot[d->S[ta].slot], &d->S[ta].p,
                                       &d->work.slot[d->S[tb].slot], &d->S[tb].p, mix, ub, r);
    }
    /* §3.8: ban the two vertices of a fractional optimum until the hull of the remaining labels
     * cannot beat the best integral label seen (a valid certificate) or its optimum is a vertex */
    strux_point best;
    strux_plane_eval(s, t, pot, truth, truth, &best);
    STRUX_TRY(strux_label_copy(&s->y, truth));
    double phi_best = 0, ub = INFINITY;
    for (;;) {
        for (int32_t k = 0; k < 2; k++) {
            int32_t v = k ? tb : ta;
            if (v < 0) continue;
            const strux_point *pv = &d->S[v].p;
            if (u->psi(u, pv->h, pv->g) > phi_best) {
                phi_best = u->psi(u, pv->h, pv->g);
                best = *pv;
                STRUX_TRY(strux_label_copy(&s->y, &d->work.slot[d->S[v].slot]));
            }
        }
        if (exact && (tb < 0 || psi <= phi_best)) {
            ub = phi_best;
            break;
        }
        if (!exact || s->calls >= s->opt.max_calls || d->n_ban + 2 > d->ban.n) {
            ub = u->hg ? fmax(phi_best, ub_hg) : INFINITY;
            break;
        }
        STRUX_TRY(strux_label_copy(&d->ban.slot[d->n_ban++], &d->work.slot[d->S[ta].slot]));
        STRUX_TRY(strux_label_copy(&d->ban.slot[d->n_ban++], &d->work.slot[d->S[tb].slot]));
        STRUX_TRY(hull_search(s, t, pot, truth, 0, &ta, &tb, &mix, &psi, &exact, &ub_hg));
    }
    return strux_search_answer(s, &s->y, &best, ub, r);
}

static void hull_destroy(strux_search *s)
{
    hull_data *d = s->data;
    if (!d) return;
    strux_free(&d->S);
    strux_free(&d->tmp);
    strux_label_pool_free(&d->work);
    strux_free(&d->slot_used);
    strux_label_pool_free(&d->ban);
    strux_label_pool_free(&d->warm);
    strux_free(&d->n_warm);
    strux_free(&s->data);
}

static strux_status hull_save(const strux_search *s, int64_t i0, int64_t i1, strux_blob *b)
{
    const hull_data *d = s->data;
    STRUX_TRY(strux_label_pool_save(&d->warm, i0 * HULL_WARM_MAX, (i1 - i0) * HULL_WARM_MAX, b));
    return strux_blob_put(b, d->n_warm + i0, (size_t)(i1 - i0) * sizeof *d->n_warm);
}

static strux_status hull_load(strux_search *s, int64_t i0, int64_t i1, strux_blob *b)
{
    hull_data *d = s->data;
    STRUX_TRY(strux_label_pool_load(&d->warm, i0 * HULL_WARM_MAX, (i1 - i0) * HULL_WARM_MAX, b));
    return strux_blob_get(b, d->n_warm + i0, (size_t)(i1 - i0) * sizeof *d->n_warm,
                          "hull vertices");
}

static const struct strux_search_ops hull_ops = {
    .run = hull_run, .destroy = hull_destroy, .save = hull_save, .load = hull_load};

strux_status strux_search_create_convex_hull(const strux_search_options *opt, const strux_task *t,
                                             const strux_dataset *ds, strux_search *s)
{
    hull_data *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    s->data = d;
    s->ops = &hull_ops;
    d->integral = opt->integral;
    /* S: the truth, the warm vertices and one label per oracle call */
    d->cap = s->opt.max_calls + HULL_WARM_MAX + 2;
    STRUX_TRY(strux_alloc_array(&d->S, (size_t)d->cap, sizeof *d->S));
    STRUX_TRY(strux_alloc_array(&d->tmp, (size_t)d->cap, sizeof *d->tmp));
    STRUX_TRY(strux_alloc_array(&d->slot_used, (size_t)d->cap, 1));
    STRUX_TRY(strux_label_pool_create(&d->work, d->cap, t, ds));
    STRUX_TRY(strux_label_pool_create(&d->ban, d->integral ? 2 * s->opt.max_calls : 0, t, ds));
    int64_t n = s->opt.warm_start ? ds->n_local : 0;
    STRUX_TRY(strux_label_pool_create(&d->warm, n * HULL_WARM_MAX, t, ds));
    STRUX_TRY(strux_alloc_array(&d->n_warm, (size_t)(n > 0 ? n : 1), sizeof *d->n_warm));
    return STRUX_OK;
}
