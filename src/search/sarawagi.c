/* search/sarawagi.c - the Sarawagi-Gupta golden search (slack_bicriteria.md §3.2, A12) for slack
 * rescaling h = 1 + m, g = L, usable only inside an n-slack cutting-plane solver: it minimises the
 * convex F(λ) = K(λ) − 2·sqrt(ξ_i·λ), an upper bound of max_y h − ξ_i/g, by golden section in
 * log λ on [1e-4, 1e4]·Ĥ/Ĝ (Ĥ from one O(0) call), one oracle call per evaluation, until the
 * interval is relatively narrower than surrogate.tol or the call cap. It returns the label of
 * largest Φ = h·g seen (A12; the caller adds it to W_i iff Φ > ξ_i + ε, which is equivalent to a
 * positive violation h − ξ_i/g) and the bound min K(λ)²/4λ over the calls (Lemma 5).
 * ξ_i comes from strux_search_set_slack before each run; without it the search refuses. */
#include "search_impl.h"

#include <math.h>

#define SARAWAGI_RANGE 1e4 /* λ ∈ [λc/RANGE, λc·RANGE], λc = Ĥ/Ĝ (A12) */

typedef struct golden_state {
    double phi_best, ub;
    strux_point best;
} golden_state;

/* F(λ) with one oracle call; the answer is offered as a candidate. */
static strux_status eval_F(strux_search *s, strux_task *t, const strux_pot *pot,
                           const strux_label *truth, double lambda, golden_state *st, double *F)
{
    strux_query q = strux_plane_query(&s->u, 1.0, lambda);
    strux_point p;
    int found;
    STRUX_TRY(strux_plane_call(s, t, pot, truth, &q, &s->scratch, &p, &found));
    STRUX_TRY(strux_search_offer(s, &s->scratch, &p, &st->phi_best, &st->best));
    double K = p.h + lambda * p.g;
    st->ub = fmin(st->ub, K > 0 ? K * K / (4 * lambda) : 0.0);
    *F = K - 2 * sqrt(s->xi * lambda);
    return STRUX_OK;
}

static strux_status sarawagi_run(strux_search *s, strux_task *t, const strux_pot *pot,
                                 const strux_label *truth, strux_search_result *r)
{
    STRUX_CHECK(!isnan(s->xi), STRUX_ERR_UNSUPPORTED,
                "surrogate.search = sarawagi needs the current slack ξ_i of example %lld, which "
                "only an n-slack cutting-plane solver has (strux_search_set_slack before each "
                "run); use angular, bisect, binary or convex_hull with this solver",
                (long long)pot->i);
    STRUX_CHECK(s->xi >= 0 && isfinite(s->xi), STRUX_ERR_NUMERIC,
                "slack ξ_i = %g of example %lld is not a finite non-negative number", s->xi,
                (long long)pot->i);
    golden_state st = {.ub = INFINITY};
    double lambda_c;
    STRUX_TRY(strux_search_start_slack(s, t, pot, truth, &st.phi_best, &st.best, &lambda_c));
    const double r_g = (sqrt(5.0) - 1) / 2;
    double a = log(lambda_c / SARAWAGI_RANGE), b = log(lambda_c * SARAWAGI_RANGE);
    double x1 = b - r_g * (b - a), x2 = a + r_g * (b - a), f1, f2;
    STRUX_TRY(eval_F(s, t, pot, truth, exp(x1), &st, &f1));
    STRUX_TRY(eval_F(s, t, pot, truth, exp(x2), &st, &f2));
    while (s->calls < s->opt.max_calls && b - a >= log1p(s->opt.tol)) {
        if (f1 <= f2) {
            b = x2, x2 = x1, f2 = f1;
            x1 = b - r_g * (b - a);
            STRUX_TRY(eval_F(s, t, pot, truth, exp(x1), &st, &f1));
        } else {
            a = x1, x1 = x2, f1 = f2;
            x2 = a + r_g * (b - a);
            STRUX_TRY(eval_F(s, t, pot, truth, exp(x2), &st, &f2));
        }
    }
    return strux_search_answer(s, &s->y, &st.best, fmax(st.ub, st.phi_best), r);
}

static const struct strux_search_ops sarawagi_ops = {.run = sarawagi_run};

strux_status strux_search_create_sarawagi(const strux_search_options *opt, const strux_task *t,
                                          const strux_dataset *ds, strux_search *s)
{
    (void)opt, (void)t, (void)ds;
    s->ops = &sarawagi_ops;
    return STRUX_OK;
}
