/* search/margin.c - the one-call search: a single λ-oracle call with λ = 1 answers margin
 * rescaling exactly (ψ = m + g is the oracle's own objective, slack_bicriteria.md §1.2), and
 * certifies its answer (ub = Φ). */
#include "search_impl.h"

#include <string.h>

static strux_status margin_run(strux_search *s, strux_task *t, const strux_pot *pot,
                               const strux_label *truth, strux_search_result *r)
{
    strux_query q = strux_query_dir(1.0, 1.0);
    strux_answer a;
    STRUX_TRY(strux_task_oracle(t, pot, truth, &q, &s->y, &a));
    r->y = &s->y;
    r->y2 = NULL;
    r->mix = 1.0;
    r->m = a.m;
    r->g = a.g;
    r->psi = s->u.psi(&s->u, a.m, a.g);
    r->psi_h = s->u.psi_h(&s->u, a.m, a.g);
    r->ub = r->psi;
    r->calls = 1;
    return STRUX_OK;
}

static const struct strux_search_ops margin_ops = {.run = margin_run};

strux_status strux_search_create_margin(const strux_search_options *opt, const strux_task *t,
                                        const strux_dataset *ds, strux_search *s)
{
    (void)t, (void)ds;
    STRUX_CHECK(strcmp(s->u.name, "margin") == 0, STRUX_ERR_CONFIG,
                "surrogate.search = margin answers only surrogate.type = margin (got '%s')",
                opt->type);
    s->ops = &margin_ops;
    return STRUX_OK;
}
