/* search/search.c - the public search API: options, creation from (surrogate, search) names,
 * dispatch, the slack input of the Sarawagi-Gupta search, and the subgradient of the surrogate at
 * a search's answer (slack_bicriteria.md §1.8). */
#include "search_impl.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Call cap of the exact search: angular and convex hull end by exhaustion long before (at most
 * 2M + 1 calls for M distinct points, §3.6 Theorem 2); the cap only guards against loops. */
#define EXACT_MAX_CALLS 10000

const strux_opt_spec strux_search_opt_specs[] = {
    {"surrogate.type", STRUX_OPT_CHOICE, offsetof(strux_search_options, type), "margin", 0, 0,
     "margin|slack|beta|probloss|microf1",
     "surrogate loss ψ(h, g) (slack_bicriteria.md §1.4): margin (h + g), slack (slack rescaling "
     "(1 + m)·L), beta (β-scaling m·L^β + L), probloss (ProbLoss §1.5), microf1 (Micro-F1 "
     "surrogate §1.6)"},
    {"surrogate.search", STRUX_OPT_CHOICE, offsetof(strux_search_options, search), "auto", 0, 0,
     "auto|margin|sarawagi|binary|bisect|angular|convex_hull",
     "search answering the surrogate with oracle calls (§3); auto: margin for margin, angular "
     "for slack, convex_hull for beta, probloss and microf1 (Dinkelbach for microf1); "
     "sarawagi, binary, bisect and angular answer slack only, sarawagi only inside a "
     "cutting-plane solver (it needs the slack ξ_i)"},
    {"surrogate.beta", STRUX_OPT_DOUBLE, offsetof(strux_search_options, beta), "0.5", 0, 1, NULL,
     "β of β-scaling ψ = m·L^β + L (§1.4; 0: margin, 1: slack)"},
    {"surrogate.probloss_convex", STRUX_OPT_BOOL, offsetof(strux_search_options, probloss_convex),
     "true", 0, 0, NULL,
     "ProbLoss convex extension: tangent continuation L + sqrt(L)·m for m > 0 (§1.5, A21); "
     "false: the raw ProbLoss 2L·Φ_N(m / sqrt(2L/π))"},
    {"surrogate.integral", STRUX_OPT_BOOL, offsetof(strux_search_options, integral), "false", 0, 0,
     NULL,
     "convex_hull: recover an integral label with ban-list oracle calls (§3.8) instead of "
     "answering with the fractional optimum over the hull (a mixture of two labels, §1.8)"},
    {"surrogate.eps", STRUX_OPT_DOUBLE, offsetof(strux_search_options, eps), "1e-3", 0, 0.5, NULL,
     "stop once the best value found is ≥ (1 − eps) times the certified upper bound "
     "(K(λ)²/4λ, §3.1 Lemma 5; the paper's 0.999 stop for angular, A7); 0: run to exactness"},
    {"surrogate.tol", STRUX_OPT_DOUBLE, offsetof(strux_search_options, tol), "1e-3", 1e-12, 1, NULL,
     "stop when the λ interval is relatively narrower than this (§3.2-3.4)"},
    {"surrogate.max_calls", STRUX_OPT_INT, offsetof(strux_search_options, max_calls), "100", 1, 1e6,
     NULL,
     "oracle calls per search at most (A9 call cap); the answer is then the best label found "
     "and the reported bound stays certified"},
    {"surrogate.queue", STRUX_OPT_CHOICE, offsetof(strux_search_options, queue), "priority", 0, 0,
     "priority|fifo",
     "angular search order: priority (largest bound first, §3.6) or fifo (breadth first, the "
     "order of the Theorem-4 rate, A5)"},
    {"surrogate.cache", STRUX_OPT_INT, offsetof(strux_search_options, cache), "4", 0, 64, NULL,
     "angular: most violating labels remembered per example and re-scored before each search "
     "(the label cache of §3.6); 0: none"},
    {"surrogate.warm_start", STRUX_OPT_BOOL, offsetof(strux_search_options, warm_start), "true", 0,
     0, NULL,
     "start from the previous visit of the example: its best λ (bisect, §3.4), its hull "
     "vertices pruned to their upper-right chain (convex_hull, §3.7), or the tangent weight "
     "h/g of its best cached label as the root weight λ0 instead of Ĥ/Ĝ (angular, needs "
     "surrogate.cache > 0)"},
    {NULL},
};

strux_status strux_search_options_default(strux_search_options *opt)
{
    memset(opt, 0, sizeof *opt);
    return strux_opt_defaults(strux_search_opt_specs, opt);
}

/* Names of the searches that answer a surrogate with flags caps (comma-separated). */
static const char *search_names(unsigned surrogate_caps)
{
    static char names[256];
    names[0] = '\0';
    for (const strux_search_entry *e = strux_search_registry; e->name; e++)
        if ((surrogate_caps & e->needs) == e->needs) {
            if (names[0]) strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, e->name, sizeof names - strlen(names) - 1);
        }
    return names;
}

/* The surrogate and the search row of the options (surrogate.search = auto resolved), checked
 * against each other and against the task's flags: every refusal names the missing flag and the
 * entries that have it. */
static strux_status resolve(const strux_search_options *opt, unsigned task_caps, strux_surrogate *u,
                            const strux_search_entry **out)
{
    STRUX_TRY(strux_surrogate_lookup(opt, u));
    const char *name = strcmp(opt->search, "auto") == 0 ? u->default_search : opt->search;
    const strux_search_entry *e = strux_search_registry;
    while (e->name && strcmp(e->name, name) != 0)
        e++;
    STRUX_CHECK(e->name, STRUX_ERR_CONFIG, "surrogate.search = '%s' is unknown; valid: auto, %s",
                name, search_names(~0u));
    char flags[128];
    strux_caps_format(e->needs & ~u->caps, flags, sizeof flags);
    STRUX_CHECK((u->caps & e->needs) == e->needs, STRUX_ERR_CONFIG,
                "surrogate.search = %s needs a surrogate with flag %s; surrogate.type = %s lacks "
                "it: surrogates with it: %s; searches that answer %s: %s",
                e->name, flags, u->name, strux_surrogate_names(e->needs), u->name,
                search_names(u->caps));
    STRUX_CHECK(!(e->caps & STRUX_CAP_NEEDS_WEDGE) || (task_caps & STRUX_CAP_WEDGE),
                STRUX_ERR_CONFIG,
                "surrogate.search = %s asks wedge queries (flag wedge), which this task does not "
                "answer; use surrogate.search = convex_hull or a task with the flag",
                e->name);
    *out = e;
    return STRUX_OK;
}

strux_status strux_search_type_caps(const strux_search_options *opt, unsigned task_caps,
                                    unsigned *caps, char *name, size_t n)
{
    strux_surrogate u;
    const strux_search_entry *e;
    STRUX_TRY(resolve(opt, task_caps, &u, &e));
    *caps = e->caps | u.caps;
    snprintf(name, n, "%s", e->name);
    return STRUX_OK;
}

int strux_search_reads_key(const strux_search_options *opt, const char *key)
{
    strux_surrogate u;
    const strux_search_entry *e;
    if (resolve(opt, ~0u, &u, &e) != STRUX_OK) {
        strux_error_clear(); /* the combination is refused elsewhere, with its message */
        return 1;
    }
    int by_surrogate = 0, by_search = 0;
    for (const strux_surrogate *v = strux_surrogates; v->name; v++)
        by_surrogate |= strux_opt_keys_contain(v->keys, key);
    for (const strux_search_entry *r = strux_search_registry; r->name; r++)
        by_search |= strux_opt_keys_contain(r->keys, key);
    if (by_surrogate) return strux_opt_keys_contain(u.keys, key);
    if (by_search) return strux_opt_keys_contain(e->keys, key);
    return 1;
}

void strux_search_key_readers(const char *key, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const strux_surrogate *v = strux_surrogates; v->name && used < n; v++)
        if (strux_opt_keys_contain(v->keys, key)) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? "|" : "surrogate.type=", v->name);
            if (w > 0) used += (size_t)w;
        }
    for (const strux_search_entry *e = strux_search_registry; e->name && used < n; e++)
        if (strux_opt_keys_contain(e->keys, key)) {
            int w =
                snprintf(buf + used, n - used, "%s%s", used ? "|" : "surrogate.search=", e->name);
            if (w > 0) used += (size_t)w;
        }
}

strux_status strux_search_create(const strux_search_options *opt, const strux_task *t,
                                 const strux_dataset *ds, strux_search **out)
{
    strux_surrogate u;
    const strux_search_entry *e;
    STRUX_TRY(resolve(opt, strux_task_caps(t), &u, &e));
    strux_search *s;
    STRUX_TRY(strux_alloc(&s, sizeof *s));
    s->type_name = e->name;
    s->caps = e->caps | u.caps;
    s->u = u;
    s->opt = *opt;
    strux_search_options def;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_search_options_default(&def), fail);
    if (s->opt.max_calls <= 0) s->opt.max_calls = def.max_calls; /* zero-initialised callers */
    if (s->opt.tol <= 0) s->opt.tol = def.tol;
    s->n_local = ds->n_local;
    s->xi = NAN;
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &s->y), fail);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &s->y2), fail);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &s->scratch), fail);
    STRUX_TRY_GOTO(st, e->create(&s->opt, t, ds, s), fail);
    *out = s;
    return STRUX_OK;
fail:
    if (s->ops && s->ops->destroy) s->ops->destroy(s);
    strux_label_free(&s->y);
    strux_label_free(&s->y2);
    strux_label_free(&s->scratch);
    strux_free(&s);
    return st;
}

strux_status strux_search_create_exact(const strux_search *s, const strux_task *t,
                                       const strux_dataset *ds, strux_search **out)
{
    strux_search_options opt = s->opt;
    snprintf(opt.search, sizeof opt.search, "auto");
    opt.eps = 0;
    opt.cache = 0;
    opt.warm_start = 0;
    opt.max_calls = EXACT_MAX_CALLS;
    return strux_search_create(&opt, t, ds, out);
}

void strux_search_destroy(strux_search **s)
{
    if (!*s) return;
    if ((*s)->ops && (*s)->ops->destroy) (*s)->ops->destroy(*s);
    strux_label_free(&(*s)->y);
    strux_label_free(&(*s)->y2);
    strux_label_free(&(*s)->scratch);
    strux_free(s);
}

strux_status strux_search_run(strux_search *s, strux_task *t, const strux_pot *pot,
                              const strux_label *truth, strux_search_result *r)
{
    STRUX_CHECK(pot->i >= 0 && pot->i < s->n_local, STRUX_ERR_INTERNAL,
                "search '%s' created for %lld examples asked about example %lld", s->type_name,
                (long long)s->n_local, (long long)pot->i);
    strux_status st = s->ops->run(s, t, pot, truth, r);
    s->xi = NAN; /* the slack is for one run only */
    STRUX_TRY(st);
    STRUX_CHECK(isfinite(r->psi) && isfinite(r->psi_h), STRUX_ERR_NUMERIC,
                "search '%s' gave a non-finite surrogate value %g (slope %g) on example %lld",
                s->type_name, r->psi, r->psi_h, (long long)pot->i);
    return STRUX_OK;
}

strux_status strux_search_save(const strux_search *s, int64_t i0, int64_t i1, strux_blob *b)
{
    STRUX_CHECK(i0 >= 0 && i0 <= i1 && i1 <= s->n_local, STRUX_ERR_INTERNAL,
                "search state of examples [%lld, %lld) of %lld", (long long)i0, (long long)i1,
                (long long)s->n_local);
    return s->ops->save ? s->ops->save(s, i0, i1, b) : STRUX_OK;
}

strux_status strux_search_load(strux_search *s, int64_t i0, int64_t i1, strux_blob *b)
{
    STRUX_CHECK(i0 >= 0 && i0 <= i1 && i1 <= s->n_local, STRUX_ERR_INTERNAL,
                "search state of examples [%lld, %lld) of %lld", (long long)i0, (long long)i1,
                (long long)s->n_local);
    return s->ops->load ? s->ops->load(s, i0, i1, b) : STRUX_OK;
}

void strux_search_set_slack(strux_search *s, double xi)
{
    s->xi = xi;
}

unsigned strux_search_caps(const strux_search *s)
{
    return s->caps;
}

const char *strux_search_name(const strux_search *s)
{
    return s->type_name;
}

const char *strux_surrogate_name(const strux_search *s)
{
    return s->u.name;
}

/* out += scale·ψ_h·Δφ_i(answer) into the weights (G) or the block coefficients (c). */
static strux_status add_answer(const strux_search_result *r, const strux_task *t,
                               const strux_dataset *ds, int64_t i, const strux_label *truth,
                               double scale, strux_model *G, double *c)
{
    if (r->psi <= 0) return STRUX_OK;
    for (int v = 0; v < 2; v++) {
        const strux_label *y = v == 0 ? r->y : r->y2;
        double a = scale * r->psi_h * (v == 0 ? r->mix : 1 - r->mix);
        if (!y || a == 0) continue;
        STRUX_TRY(G ? strux_task_add_delta(t, ds, i, y, truth, a, G)
                    : strux_task_block_add_delta(t, ds, i, y, truth, a, c));
    }
    return STRUX_OK;
}

strux_status strux_search_add_subgradient(const strux_search_result *r, const strux_task *t,
                                          const strux_dataset *ds, int64_t i,
                                          const strux_label *truth, double scale, strux_model *G)
{
    return add_answer(r, t, ds, i, truth, scale, G, NULL);
}

strux_status strux_search_block_add(const strux_search_result *r, const strux_task *t,
                                    const strux_dataset *ds, int64_t i, const strux_label *truth,
                                    double scale, double *c)
{
    return add_answer(r, t, ds, i, truth, scale, NULL, c);
}

double strux_search_intercept(const strux_search_result *r)
{
    return r->psi > 0 ? r->psi - r->psi_h * r->m : 0.0;
}
