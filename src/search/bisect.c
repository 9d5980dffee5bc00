/* search/bisect.c - bisecting search (slack_bicriteria.md §3.4, Algorithm 1, A10) for slack
 * rescaling h = 1 + m, g = L. Keeps the candidate intervals H ∋ h(y*), G ∋ g(y*) (Lemma 3) and
 * L ∋ λ: an answer y' at λ with λ·g(y') ≤ h(y') asks for more loss (λ grows), else less.
 * The next λ doubles while L is unbounded above, halves while its lower end is 0, and is the
 * geometric midpoint once both ends are finite. The first λ is the one at which the example's
 * best label was found on its previous visit (warm start), else 1 (margin rescaling's weight).
 * Stops (all from §3.4): H or G empty up to surrogate.tol, equal answers at both ends of L
 * (App. D.1), the certificate Φ̂ ≥ (1 − eps)·min K(λ)²/4λ (App. D.2), L relatively narrower than
 * surrogate.tol, the call cap. No approximation guarantee (Theorem 1). */
#include "search_impl.h"

#include <math.h>

typedef struct bisect_data {
    double *lambda_warm; /* per example: λ of the best answer on the last visit, 0 if none */
} bisect_data;

static int interval_empty(double lo, double hi, double tol)
{
    return hi < lo - tol * fmax(1.0, fabs(lo));
}

static strux_status bisect_run(strux_search *s, strux_task *t, const strux_pot *pot,
                               const strux_label *truth, strux_search_result *r)
{
    bisect_data *d = s->data;
    const double tol = s->opt.tol;
    strux_plane_begin(s, t, truth);
    strux_point best, p, p_lo = {0}, p_hi = {0};
    strux_plane_eval(s, t, pot, truth, truth, &best);
    STRUX_TRY(strux_label_copy(&s->y, truth));
    double phi_best = 0, ub = INFINITY;
    double H_lo = 0, H_hi = INFINITY, G_lo = 0, G_hi = INFINITY, L_lo = 0, L_hi = INFINITY;
    int have_lo = 0, have_hi = 0;
    double lambda = s->opt.warm_start && d->lambda_warm[pot->i] > 0 ? d->lambda_warm[pot->i] : 1;
    double lambda_best = lambda;
    while (s->calls < s->opt.max_calls) {
        strux_query q = strux_plane_query(&s->u, 1.0, lambda);
        int found;
        STRUX_TRY(strux_plane_call(s, t, pot, truth, &q, &s->scratch, &p, &found));
        double before = phi_best;
        STRUX_TRY(strux_search_offer(s, &s->scratch, &p, &phi_best, &best));
        if (phi_best > before) lambda_best = lambda;
        double K = p.h + lambda * p.g;
        ub = fmin(ub, K > 0 ? K * K / (4 * lambda) : 0.0);
        /* Lemma 3: h* between h(y') and λg(y'), g* between g(y') and h(y')/λ */
        H_lo = fmax(H_lo, fmin(p.h, lambda * p.g));
        H_hi = fmin(H_hi, fmax(p.h, lambda * p.g));
        G_lo = fmax(G_lo, fmin(p.g, p.h / lambda));
        G_hi = fmin(G_hi, fmax(p.g, p.h / lambda));
        if (lambda * p.g <= p.h) {
            L_lo = lambda, p_lo = p, have_lo = 1;
        } else {
            L_hi = lambda, p_hi = p, have_hi = 1;
        }
        if (interval_empty(H_lo, H_hi, tol) || interval_empty(G_lo, G_hi, tol)) break;
        if (have_lo && have_hi && p_lo.h == p_hi.h && p_lo.g == p_hi.g) break;
        if (phi_best >= (1 - s->opt.eps) * ub) break;
        if (isinf(L_hi))
            lambda = 2 * L_lo;
        else if (L_lo <= 0)
            lambda = L_hi / 2;
        else if (L_hi / L_lo < 1 + tol)
            break;
        else
            lambda = sqrt(L_lo * L_hi);
    }
    if (s->opt.warm_start) d->lambda_warm[pot->i] = lambda_best;
    return strux_search_answer(s, &s->y, &best, fmax(ub, phi_best), r);
}

static void bisect_destroy(strux_search *s)
{
    bisect_data *d = s->data;
    if (!d) return;
    strux_free(&d->lambda_warm);
    strux_free(&s->data);
}

static strux_status bisect_save(const strux_search *s, int64_t i0, int64_t i1, strux_blob *b)
{
    const bisect_data *d = s->data;
    return strux_blob_put(b, d->lambda_warm + i0, (size_t)(i1 - i0) * sizeof *d->lambda_warm);
}

static strux_status bisect_load(strux_search *s, int64_t i0, int64_t i1, strux_blob *b)
{
    bisect_data *d = s->data;
    return strux_blob_get(b, d->lambda_warm + i0, (size_t)(i1 - i0) * sizeof *d->lambda_warm,
                          "bisect warm starts");
}

static const struct strux_search_ops bisect_ops = {
    .run = bisect_run, .destroy = bisect_destroy, .save = bisect_save, .load = bisect_load};

strux_status strux_search_create_bisect(const strux_search_options *opt, const strux_task *t,
                                        const strux_dataset *ds, strux_search *s)
{
    (void)opt, (void)t;
    bisect_data *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    s->data = d;
    s->ops = &bisect_ops;
    int64_t n = ds->n_local > 0 ? ds->n_local : 1;
    STRUX_TRY(strux_alloc_array(&d->lambda_warm, (size_t)n, sizeof *d->lambda_warm));
    return STRUX_OK;
}
