/* search/binary.c - binary search on the convex bound F̄ (slack_bicriteria.md §3.3, A11) for
 * slack rescaling h = 1 + m, g = L: F̄(μ) = K(μ²)²/(4μ²) is convex in μ and the sign of its slope
 * is that of λg − h at the oracle answer, so λ = μ² is bisected geometrically on
 * [1e-4, 1e4]·Ĥ/Ĝ (the range A12 suggests for the golden search; Ĥ from one O(0) call).
 * Stops: the λ interval relatively narrower than surrogate.tol, equal answers at both ends
 * (App. D.1, Lemma 4: the answer is then constant in between), the certificate
 * Φ̂ ≥ (1 − eps)·min K(λ)²/4λ (App. D.2), or the call cap. No approximation guarantee (Thm 1). */
#include "search_impl.h"

#include <math.h>

#define BINARY_RANGE 1e4 /* λ ∈ [λc/RANGE, λc·RANGE], λc = Ĥ/Ĝ */

static strux_status binary_run(strux_search *s, strux_task *t, const strux_pot *pot,
                               const strux_label *truth, strux_search_result *r)
{
    double phi_best, lambda_c, ub = INFINITY;
    strux_point best, p, p_lo = {0}, p_hi = {0};
    STRUX_TRY(strux_search_start_slack(s, t, pot, truth, &phi_best, &best, &lambda_c));
    double lo = lambda_c / BINARY_RANGE, hi = lambda_c * BINARY_RANGE;
    int have_lo = 0, have_hi = 0;
    while (s->calls < s->opt.max_calls) {
        double lambda = sqrt(lo * hi);
        strux_query q = strux_plane_query(&s->u, 1.0, lambda);
        int found;
        STRUX_TRY(strux_plane_call(s, t, pot, truth, &q, &s->scratch, &p, &found));
        STRUX_TRY(strux_search_offer(s, &s->scratch, &p, &phi_best, &best));
        double K = p.h + lambda * p.g;
        ub = fmin(ub, K > 0 ? K * K / (4 * lambda) : 0.0);
        if (lambda * p.g < p.h) {
            lo = lambda, p_lo = p, have_lo = 1;
        } else {
            hi = lambda, p_hi = p, have_hi = 1;
        }
        if (hi / lo < 1 + s->opt.tol) break;
        if (have_lo && have_hi && p_lo.h == p_hi.h && p_lo.g == p_hi.g) break;
        if (phi_best >= (1 - s->opt.eps) * ub) break;
    }
    return strux_search_answer(s, &s->y, &best, fmax(ub, phi_best), r);
}

static const struct strux_search_ops binary_ops = {.run = binary_run};

strux_status strux_search_create_binary(const strux_search_options *opt, const strux_task *t,
                                        const strux_dataset *ds, strux_search *s)
{
    (void)opt, (void)t, (void)ds;
    s->ops = &binary_ops;
    return STRUX_OK;
}
