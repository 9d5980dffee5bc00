/* search/margin.c - the one-call search: a single λ-oracle call with λ = 1 answers margin
 * rescaling exactly (ψ = m + g is the oracle's own objective, slack_bicriteria.md §1.2), and
 * certifies its answer (ub = Φ). */
#include "search_impl.h"

#include <string.h>

static strux_status margin_run(strux_search *s, strux_task *t, const strux_pot *pot,
                               const strux_label *truth, strux_search_result *r)
{
    strux_plane_begin(s, t, truth);
    strux_query q = strux_plane_query(&s->u, 1.0, 1.0);
    strux_point p;
    int found;
    STRUX_TRY(strux_plane_call(s, t, pot, truth, &q, &s->y, &p, &found));
    STRUX_TRY(strux_search_answer(s, &s->y, &p, s->u.psi(&s->u, p.h, p.g), r));
    return STRUX_OK;
}

static const struct strux_search_ops margin_ops = {.run = margin_run};

strux_status strux_search_create_margin(const strux_search_options *opt, const strux_task *t,
                                        const strux_dataset *ds, strux_search *s)
{
    (void)opt, (void)t, (void)ds;
    s->ops = &margin_ops;
    return STRUX_OK;
}
