/* search/surrogate.c - the bi-criteria surrogates ψ(h, g) of slack_bicriteria.md §1.4-1.6 on their
 * own planes, with the partial derivatives the convex-hull search (§3.7) and the subgradient
 * (§1.8) need. Planes: margin, slack, beta and probloss use h = m + shift, g = L (shift 1 for slack
 * rescaling only, §1.3/A16); microf1 uses h = L + m, g = −(|y| + |y_i|) (§1.6). Every ψ is 0 at the
 * truth's point. Where a derivative is undefined at g = 0 (only the truth and other zero-loss
 * labels sit there) the stated convention is the limit the convex-hull search needs: its tangent
 * weight ψ_g/ψ_h must be +∞ (ask for more loss) when ψ_h = 0. */
#include "search_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Margin rescaling: ψ = h + g. */
static double mr_psi(const strux_surrogate *u, double h, double g)
{
    (void)u;
    return h + g;
}

static double one(const strux_surrogate *u, double h, double g)
{
    (void)u, (void)h, (void)g;
    return 1.0;
}

/* Slack rescaling on h = 1 + m: ψ = h·g, ψ_h = g, ψ_g = h. */
static double sr_psi(const strux_surrogate *u, double h, double g)
{
    (void)u;
    return h * g;
}

static double sr_psi_h(const strux_surrogate *u, double h, double g)
{
    (void)u, (void)h;
    return g;
}

static double sr_psi_g(const strux_surrogate *u, double h, double g)
{
    (void)u, (void)g;
    return h;
}

/* β-scaling: ψ = h·g^β + g (0 ≤ β ≤ 1; β = 0 is margin, β = 1 slack rescaling without the shift).
 * At g = 0, ψ_g takes its h = 0 value 1 (g^(β−1) is unbounded there). */
static double beta_psi(const strux_surrogate *u, double h, double g)
{
    return h * pow(g, u->beta) + g;
}

static double beta_psi_h(const strux_surrogate *u, double h, double g)
{
    (void)h;
    return pow(g, u->beta);
}

static double beta_psi_g(const strux_surrogate *u, double h, double g)
{
    if (g <= 0) return 1.0;
    return u->beta * h * pow(g, u->beta - 1) + 1.0;
}

/* ProbLoss (§1.5): ψ = 2g·Φ_N(u), u = h / sqrt(2g/π), so ψ_h = sqrt(g)·exp(−u²/2) and
 * ψ_g = 2Φ_N(u) − u·φ_N(u); the convex extension continues with the tangent g + sqrt(g)·h for
 * h > 0 (A21). ψ(h, 0) = 0 with ψ_g(h, 0) = 1 (ψ(0, g)/g). */
static double std_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

static double std_pdf(double x)
{
    return exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
}

static double pl_psi(const strux_surrogate *u, double h, double g)
{
    if (g <= 0) return 0.0;
    if (u->convex && h > 0) return g + sqrt(g) * h;
    return 2.0 * g * std_cdf(h / sqrt(2.0 * g / M_PI));
}

static double pl_psi_h(const strux_surrogate *u, double h, double g)
{
    if (g <= 0) return 0.0;
    if (u->convex && h > 0) return sqrt(g);
    double z = h / sqrt(2.0 * g / M_PI);
    return sqrt(g) * exp(-0.5 * z * z);
}

static double pl_psi_g(const strux_surrogate *u, double h, double g)
{
    if (g <= 0) return 1.0;
    if (u->convex && h > 0) return 1.0 + h / (2.0 * sqrt(g));
    double z = h / sqrt(2.0 * g / M_PI);
    return 2.0 * std_cdf(z) - z * std_pdf(z);
}

/* Micro-F1 surrogate (§1.6): ψ = h/(−g) with h = H + m, g = −(|y| + |y_i|) < 0; ψ_h = 1/(−g),
 * ψ_g = h/g². Both sets empty (g = 0, only y = y_i = ∅): loss 0 (A20), with the tangent
 * (ψ_h, ψ_g) = (1, 0) so that the convex-hull search asks the λ = 0 oracle next. */
static double f1_psi(const strux_surrogate *u, double h, double g)
{
    (void)u;
    return g < 0 ? h / -g : 0.0;
}

static double f1_psi_h(const strux_surrogate *u, double h, double g)
{
    (void)u, (void)h;
    return g < 0 ? 1.0 / -g : 1.0;
}

static double f1_psi_g(const strux_surrogate *u, double h, double g)
{
    (void)u;
    return g < 0 ? h / (g * g) : 0.0;
}

static const char *const beta_keys[] = {"surrogate.beta", NULL};
static const char *const probloss_keys[] = {"surrogate.probloss_convex", NULL};

#define AFFINE STRUX_CAP_AFFINE
const strux_surrogate strux_surrogates[] = {
    {"margin", "margin", STRUX_PLANE_LOSS, 0, 0, mr_psi, one, one, 0, 0,
     AFFINE | STRUX_CAP_ONE_CALL, NULL},
    {"slack", "angular", STRUX_PLANE_LOSS, 1, 1, sr_psi, sr_psi_h, sr_psi_g, 0, 0,
     AFFINE | STRUX_CAP_SLACK_FORM, NULL},
    {"beta", "convex_hull", STRUX_PLANE_LOSS, 0, 0, beta_psi, beta_psi_h, beta_psi_g, 0, 0, AFFINE,
     beta_keys},
    {"probloss", "convex_hull", STRUX_PLANE_LOSS, 0, 0, pl_psi, pl_psi_h, pl_psi_g, 0, 0, 0,
     probloss_keys},
    {"microf1", "convex_hull", STRUX_PLANE_F1, 0, 0, f1_psi, f1_psi_h, f1_psi_g, 0, 0, AFFINE,
     NULL},
    {NULL},
};

const char *strux_surrogate_names(unsigned caps)
{
    static char names[256];
    names[0] = '\0';
    for (const strux_surrogate *u = strux_surrogates; u->name; u++)
        if ((u->caps & caps) == caps) {
            if (names[0]) strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, u->name, sizeof names - strlen(names) - 1);
        }
    return names;
}

strux_status strux_surrogate_lookup(const strux_search_options *opt, strux_surrogate *u)
{
    for (const strux_surrogate *v = strux_surrogates; v->name; v++)
        if (strcmp(v->name, opt->type) == 0) {
            *u = *v;
            u->beta = opt->beta;
            u->convex = opt->probloss_convex;
            STRUX_CHECK(opt->beta >= 0 && opt->beta <= 1, STRUX_ERR_CONFIG,
                        "surrogate.beta = %g is outside [0, 1] (β-scaling is quasi-concave only "
                        "there, slack_bicriteria.md §1.4)",
                        opt->beta);
            return STRUX_OK;
        }
    return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                           "surrogate.type = '%s' is unknown; valid types: %s", opt->type,
                           strux_surrogate_names(0));
}
