/* search/surrogate.c - the bi-criteria surrogates ψ(h, g) of slack_bicriteria.md §1.4, written on
 * the raw pair (m, g) = (f(y) − f(y_i), L(y, y_i)), with their partial derivatives (the convex-hull
 * search and the subgradient of §1.8 need them). */
#include "search_impl.h"

#include <string.h>

/* Margin rescaling: ψ = m + g. */
static double mr_psi(const strux_surrogate *u, double m, double g)
{
    (void)u;
    return m + g;
}

static double mr_one(const strux_surrogate *u, double m, double g)
{
    (void)u, (void)m, (void)g;
    return 1.0;
}

static const strux_surrogate surrogates[] = {
    {"margin", "margin", mr_psi, mr_one, mr_one, 0},
};

strux_status strux_surrogate_lookup(const strux_search_options *opt, strux_surrogate *u)
{
    for (size_t k = 0; k < sizeof surrogates / sizeof *surrogates; k++)
        if (strcmp(surrogates[k].name, opt->type) == 0) {
            *u = surrogates[k];
            return STRUX_OK;
        }
    return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                           "surrogate.type = '%s' is unknown; valid types: margin", opt->type);
}
