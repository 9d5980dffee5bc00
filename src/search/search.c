/* search/search.c - the public search API: options, creation from (surrogate, search) names,
 * dispatch, and the subgradient of the surrogate at a search's answer (slack_bicriteria.md §1.8). */
#include "search_impl.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const strux_opt_spec strux_search_opt_specs[] = {
    {"surrogate.type", STRUX_OPT_CHOICE, offsetof(strux_search_options, type), "margin", 0, 0,
     "margin", NULL, "surrogate loss ψ(h, g) (slack_bicriteria.md §1.4)"},
    {"surrogate.search", STRUX_OPT_CHOICE, offsetof(strux_search_options, search), "auto", 0, 0,
     "auto|margin", NULL, "search answering the surrogate with oracle calls; auto picks the "
     "surrogate's default"},
    {NULL},
};

static const char *search_names(void)
{
    static char names[256];
    if (!names[0])
        for (const strux_search_entry *e = strux_search_registry; e->name; e++) {
            if (names[0]) strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, e->name, sizeof names - strlen(names) - 1);
        }
    return names;
}

strux_status strux_search_create(const strux_search_options *opt, const strux_task *t,
                                 const strux_dataset *ds, strux_search **out)
{
    strux_surrogate u;
    STRUX_TRY(strux_surrogate_lookup(opt, &u));
    const char *name = strcmp(opt->search, "auto") == 0 ? u.default_search : opt->search;
    const strux_search_entry *e = strux_search_registry;
    while (e->name && strcmp(e->name, name) != 0) e++;
    STRUX_CHECK(e->name, STRUX_ERR_CONFIG, "surrogate.search = '%s' is unknown; valid: auto, %s",
                name, search_names());
    strux_search *s;
    STRUX_TRY(strux_alloc(&s, sizeof *s));
    s->type_name = e->name;
    s->u = u;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &s->y), fail);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &s->y2), fail);
    STRUX_TRY_GOTO(st, e->create(opt, t, ds, s), fail);
    *out = s;
    return STRUX_OK;
fail:
    strux_label_free(&s->y);
    strux_label_free(&s->y2);
    strux_free(&s);
    return st;
}

void strux_search_destroy(strux_search **s)
{
    if (!*s) return;
    if ((*s)->ops && (*s)->ops->destroy) (*s)->ops->destroy(*s);
    strux_label_free(&(*s)->y);
    strux_label_free(&(*s)->y2);
    strux_free(s);
}

strux_status strux_search_run(strux_search *s, strux_task *t, const strux_pot *pot,
                              const strux_label *truth, strux_search_result *r)
{
    STRUX_TRY(s->ops->run(s, t, pot, truth, r));
    STRUX_CHECK(isfinite(r->psi) && isfinite(r->psi_h), STRUX_ERR_NUMERIC,
                "search '%s' gave a non-finite surrogate value %g (slope %g) on example %lld",
                s->type_name, r->psi, r->psi_h, (long long)pot->i);
    return STRUX_OK;
}

const char *strux_search_name(const strux_search *s)
{
    return s->type_name;
}

const char *strux_surrogate_name(const strux_search *s)
{
    return s->u.name;
}

strux_status strux_search_add_subgradient(const strux_search_result *r, const strux_task *t,
                                          const strux_dataset *ds, int64_t i,
                                          const strux_label *truth, double scale, double *G)
{
    if (r->psi <= 0) return STRUX_OK;
    double c = scale * r->psi_h;
    STRUX_TRY(strux_task_add_delta(t, ds, i, r->y, truth, c * r->mix, G));
    if (r->y2 && r->mix < 1) STRUX_TRY(strux_task_add_delta(t, ds, i, r->y2, truth, c * (1 - r->mix), G));
    return STRUX_OK;
}
