/* solvers/rates_state.c - the MM state of rate-constrained training in checkpoints: the hook's
 * shared state (identical on every rank) holds rates_mm_state, the bias, the multipliers, the
 * metrics so far, the anchor, every cut of the search under way with its iterate, the bias cuts
 * of the SVMOptimizer call under way, and the kept step's /rates snapshot; the duals and the
 * model are the solver's (the driver's per-block state). Reading checks counts and shapes. */
#include "rates_impl.h"

#include <string.h>

static strux_status put_f64(strux_blob *b, const double *x, int64_t n)
{
    STRUX_TRY(strux_blob_put(b, &n, sizeof n));
    return n ? strux_blob_put(b, x, (size_t)n * sizeof *x) : STRUX_OK;
}

/* n doubles into *x (allocated when *x is NULL; otherwise n must be what was written). */
static strux_status get_f64(strux_blob *b, double **x, int64_t n, const char *what)
{
    int64_t k;
    STRUX_TRY(strux_blob_get(b, &k, sizeof k, what));
    STRUX_CHECK(k == n, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %lld values of %s, this run %lld "
                "(another problem)",
                (long long)k, what, (long long)n);
    if (!*x) STRUX_TRY(strux_alloc_array(x, (size_t)n + 1, sizeof **x));
    return n ? strux_blob_get(b, *x, (size_t)n * sizeof **x, what) : STRUX_OK;
}

static strux_status put_str(strux_blob *b, const char *s)
{
    int64_t n = (int64_t)strlen(s);
    STRUX_TRY(strux_blob_put(b, &n, sizeof n));
    return strux_blob_put(b, s, (size_t)n);
}

static strux_status get_str(strux_blob *b, char **s)
{
    int64_t n;
    STRUX_TRY(strux_blob_get(b, &n, sizeof n, "string length"));
    STRUX_CHECK(n >= 0 && n < ((int64_t)1 << 30), STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds a string of %lld bytes", (long long)n);
    STRUX_TRY(strux_alloc(s, (size_t)n + 1));
    STRUX_TRY(strux_blob_get(b, *s, (size_t)n, "string"));
    (*s)[n] = '\0';
    return STRUX_OK;
}

static strux_status put_model(strux_blob *b, const strux_model *w)
{
    int32_t has = w != NULL;
    STRUX_TRY(strux_blob_put(b, &has, sizeof has));
    return has ? strux_model_put(w, b) : STRUX_OK;
}

static strux_status get_model(strux_rates *r, strux_blob *b, strux_model **w)
{
    int32_t has;
    STRUX_TRY(strux_blob_get(b, &has, sizeof has, "model flag"));
    if (!has) return STRUX_OK;
    STRUX_TRY(strux_model_create_like(r->solver->model, w));
    return strux_model_get_blob(*w, b, "a rate-constraint iterate");
}

/* The kept step's /rates snapshot (strux_rates_store). */
static strux_status put_store(strux_blob *b, const strux_rates_store *s)
{
    STRUX_TRY(strux_blob_put(b, &s->m, sizeof s->m));
    if (!s->m) return STRUX_OK;
    for (int32_t j = 0; j < s->m; j++) {
        STRUX_TRY(put_str(b, s->names[j]));
        STRUX_TRY(put_str(b, s->texts[j]));
    }
    STRUX_TRY(strux_blob_put(b, &s->n_defs, sizeof s->n_defs));
    for (int32_t k = 0; k < s->n_defs; k++) {
        STRUX_TRY(put_str(b, s->def_names[k]));
        STRUX_TRY(put_str(b, s->def_texts[k]));
    }
    for (int32_t j = 0; j <= s->m; j++)
        STRUX_TRY(put_str(b, s->canonical[j]));
    STRUX_TRY(put_f64(b, s->v, s->m));
    STRUX_TRY(put_f64(b, s->train_ramp, s->m));
    STRUX_TRY(put_f64(b, s->train_value, s->m));
    STRUX_TRY(put_f64(b, s->test_value, s->m));
    STRUX_TRY(strux_blob_put(b, &s->v_max, sizeof s->v_max));
    STRUX_TRY(strux_blob_put(b, &s->mm_steps, sizeof s->mm_steps));
    STRUX_TRY(strux_blob_put(b, &s->n_mix, sizeof s->n_mix));
    STRUX_TRY(strux_blob_put(b, &s->n_w, sizeof s->n_w));
    STRUX_TRY(put_f64(b, s->mix_w, s->n_mix * s->n_w));
    STRUX_TRY(put_f64(b, s->mix_mu, s->n_mix));
    STRUX_TRY(strux_blob_put(b, &s->n_base, sizeof s->n_base));
    for (int32_t k = 0; k < s->n_base; k++) {
        STRUX_TRY(put_str(b, s->base_paths[k]));
        STRUX_TRY(strux_blob_put(b, &s->base_is_model[k], sizeof s->base_is_model[k]));
    }
    return s->n_base ? put_f64(b, s->base_w, s->n_base * s->n_w) : STRUX_OK;
}

static strux_status get_store(strux_blob *b, strux_rates_store *s)
{
    *s = (strux_rates_store){0};
    int32_t m;
    STRUX_TRY(strux_blob_get(b, &m, sizeof m, "constraints"));
    if (!m) return STRUX_OK;
    STRUX_CHECK(m > 0 && m <= STRUX_RATES_MAX_M, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d constraints", m);
    STRUX_TRY(strux_alloc_array(&s->names, (size_t)m, sizeof *s->names));
    STRUX_TRY(strux_alloc_array(&s->texts, (size_t)m, sizeof *s->texts));
    STRUX_TRY(strux_alloc_array(&s->canonical, (size_t)m + 1, sizeof *s->canonical));
    s->m = m;
    for (int32_t j = 0; j < m; j++) {
        STRUX_TRY(get_str(b, &s->names[j]));
        STRUX_TRY(get_str(b, &s->texts[j]));
    }
    int32_t n_defs;
    STRUX_TRY(strux_blob_get(b, &n_defs, sizeof n_defs, "dataset definitions"));
    STRUX_CHECK(n_defs >= 0 && n_defs <= 1000000, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d datasets", n_defs);
    if (n_defs) {
        STRUX_TRY(strux_alloc_array(&s->def_names, (size_t)n_defs, sizeof *s->def_names));
        STRUX_TRY(strux_alloc_array(&s->def_texts, (size_t)n_defs, sizeof *s->def_texts));
        s->n_defs = n_defs;
        for (int32_t k = 0; k < n_defs; k++) {
            STRUX_TRY(get_str(b, &s->def_names[k]));
            STRUX_TRY(get_str(b, &s->def_texts[k]));
        }
    }
    for (int32_t j = 0; j <= m; j++)
        STRUX_TRY(get_str(b, &s->canonical[j]));
    STRUX_TRY(get_f64(b, &s->v, m, "multipliers"));
    STRUX_TRY(get_f64(b, &s->train_ramp, m, "train ramp values"));
    STRUX_TRY(get_f64(b, &s->train_value, m, "train values"));
    STRUX_TRY(get_f64(b, &s->test_value, m, "test values"));
    STRUX_TRY(strux_blob_get(b, &s->v_max, sizeof s->v_max, "v_max"));
    STRUX_TRY(strux_blob_get(b, &s->mm_steps, sizeof s->mm_steps, "MM steps"));
    STRUX_TRY(strux_blob_get(b, &s->n_mix, sizeof s->n_mix, "iterates"));
    STRUX_TRY(strux_blob_get(b, &s->n_w, sizeof s->n_w, "weights per iterate"));
    STRUX_CHECK(s->n_mix > 0 && s->n_mix <= m + 1 && s->n_w > 0, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d iterates of %lld weights",
                s->n_mix, (long long)s->n_w);
    STRUX_TRY(get_f64(b, &s->mix_w, s->n_mix * s->n_w, "iterates"));
    STRUX_TRY(get_f64(b, &s->mix_mu, s->n_mix, "iterate weights"));
    int32_t n_base;
    STRUX_TRY(strux_blob_get(b, &n_base, sizeof n_base, "baselines"));
    STRUX_CHECK(n_base >= 0 && n_base <= 1000, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d baselines", n_base);
    if (!n_base) return STRUX_OK;
    STRUX_TRY(strux_alloc_array(&s->base_paths, (size_t)n_base, sizeof *s->base_paths));
    STRUX_TRY(strux_alloc_array(&s->base_is_model, (size_t)n_base, sizeof *s->base_is_model));
    s->n_base = n_base;
    for (int32_t k = 0; k < n_base; k++) {
        STRUX_TRY(get_str(b, &s->base_paths[k]));
        STRUX_TRY(strux_blob_get(b, &s->base_is_model[k], sizeof s->base_is_model[k], "kind"));
    }
    return get_f64(b, &s->base_w, n_base * s->n_w, "baseline weights");
}

strux_status strux_rates_mm_save(void *ctx, strux_blob *b)
{
    const strux_rates *r = ctx;
    int32_t m = r->m;
    STRUX_TRY(strux_blob_put(b, &m, sizeof m));
    STRUX_TRY(strux_blob_put(b, &r->st, sizeof r->st));
    STRUX_TRY(strux_blob_put(b, &r->bt, sizeof r->bt));
    STRUX_TRY(strux_blob_put(b, &r->have_v, sizeof r->have_v));
    STRUX_TRY(put_f64(b, r->v, m));
    STRUX_TRY(put_f64(b, r->viol, m));
    STRUX_TRY(put_f64(b, r->ramp, m));
    STRUX_TRY(put_f64(b, r->train_val, m));
    STRUX_TRY(put_f64(b, r->test_val, m));
    int64_t counts[3] = {r->total_cuts, r->total_bcuts, r->inner_epochs};
    double values[2] = {r->mm_objective, r->lp_s};
    STRUX_TRY(strux_blob_put(b, counts, sizeof counts));
    STRUX_TRY(strux_blob_put(b, values, sizeof values));
    STRUX_TRY(put_model(b, r->anchor));
    STRUX_TRY(strux_blob_put(b, &r->n_cuts, sizeof r->n_cuts));
    for (int32_t s = 0; s < r->n_cuts; s++) {
        const rates_cut *c = &r->cuts[s];
        STRUX_TRY(strux_blob_put(b, &c->u, sizeof c->u));
        STRUX_TRY(strux_blob_put(b, &c->l, sizeof c->l));
        STRUX_TRY(put_f64(b, c->g, m));
        STRUX_TRY(put_f64(b, c->v, m));
        STRUX_TRY(put_model(b, c->w));
    }
    STRUX_TRY(strux_blob_put(b, &r->n_bcuts, sizeof r->n_bcuts));
    for (int32_t s = 0; s < r->n_bcuts; s++) {
        const rates_bcut *c = &r->bcuts[s];
        double x[4] = {c->b, c->u, c->l, c->g};
        STRUX_TRY(strux_blob_put(b, x, sizeof x));
        STRUX_TRY(put_f64(b, c->G, m + 1));
        STRUX_TRY(put_model(b, c->w));
    }
    return put_store(b, &r->kept);
}

strux_status strux_rates_mm_load(void *ctx, strux_blob *b)
{
    strux_rates *r = ctx;
    int32_t m;
    STRUX_TRY(strux_blob_get(b, &m, sizeof m, "constraint count"));
    STRUX_CHECK(m == r->m, STRUX_ERR_INPUT,
                "the checkpoint was written under %d rate constraints, this run has %d", m, r->m);
    STRUX_TRY(strux_blob_get(b, &r->st, sizeof r->st, "MM state"));
    STRUX_TRY(strux_blob_get(b, &r->bt, sizeof r->bt, "bias"));
    STRUX_TRY(strux_blob_get(b, &r->have_v, sizeof r->have_v, "multiplier flag"));
    STRUX_TRY(get_f64(b, &r->v, m, "multipliers"));
    STRUX_TRY(get_f64(b, &r->viol, m, "anchor values"));
    STRUX_TRY(get_f64(b, &r->ramp, m, "ramp values"));
    STRUX_TRY(get_f64(b, &r->train_val, m, "train values"));
    STRUX_TRY(get_f64(b, &r->test_val, m, "test values"));
    int64_t counts[3];
    double values[2];
    STRUX_TRY(strux_blob_get(b, counts, sizeof counts, "counts"));
    STRUX_TRY(strux_blob_get(b, values, sizeof values, "metrics"));
    r->total_cuts = counts[0];
    r->total_bcuts = counts[1];
    r->inner_epochs = counts[2];
    r->mm_objective = values[0];
    r->lp_s = values[1];
    strux_model_destroy(&r->anchor);
    STRUX_TRY(get_model(r, b, &r->anchor));
    STRUX_CHECK(r->anchor && r->st.phase == MM_SEARCH && r->st.in_solve, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state is not inside a multiplier search");
    int32_t n;
    STRUX_TRY(strux_blob_get(b, &n, sizeof n, "cuts"));
    STRUX_CHECK(n >= 2 && n <= 1000000, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d cuts", n);
    strux_rates_cuts_free(r);
    for (int32_t s = 0; s < n; s++) {
        double u, l, *g = NULL, *v = NULL;
        strux_model *w = NULL;
        strux_status st = strux_blob_get(b, &u, sizeof u, "cut");
        if (st == STRUX_OK) st = strux_blob_get(b, &l, sizeof l, "cut");
        if (st == STRUX_OK) st = get_f64(b, &g, m, "cut slopes");
        if (st == STRUX_OK) st = get_f64(b, &v, m, "cut multipliers");
        if (st == STRUX_OK) st = get_model(r, b, &w);
        if (st == STRUX_OK) st = strux_rates_cut_push(r, u, l, g, v, w);
        strux_free(&g);
        strux_free(&v);
        strux_model_destroy(&w);
        STRUX_TRY(st);
    }
    STRUX_TRY(strux_blob_get(b, &n, sizeof n, "bias cuts"));
    STRUX_CHECK(n >= 0 && n <= 1000000, STRUX_ERR_INPUT,
                "the checkpoint's rate-constraint state holds %d bias cuts", n);
    strux_rates_bcuts_free(r);
    for (int32_t s = 0; s < n; s++) {
        double x[4], *G = NULL;
        strux_model *w = NULL;
        strux_status st = strux_blob_get(b, x, sizeof x, "bias cut");
        if (st == STRUX_OK) st = get_f64(b, &G, m + 1, "bias cut sums");
        if (st == STRUX_OK) st = get_model(r, b, &w);
        if (st == STRUX_OK) st = strux_rates_bcut_push(r, x[0], x[1], x[2], x[3], G, w);
        strux_free(&G);
        strux_model_destroy(&w);
        STRUX_TRY(st);
    }
    strux_rates_store_free(&r->kept);
    STRUX_TRY(get_store(b, &r->kept));
    r->resumed = 1;
    return STRUX_OK;
}
