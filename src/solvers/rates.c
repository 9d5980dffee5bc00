/* solvers/rates.c - rate-constrained training of the binary task (strux/rates.h, issue 15,
 * dataset_constraints.md): the [rates] options, the problem as configured ([datasets],
 * [constraints], the objective), its binding to the sharded training data (subset memberships
 * and sizes allreduced, canonical rows, the infeasibility LP over cells before any solve, the
 * per-example coefficients of §3.7, the baselines), the record columns of the MM hook and the
 * model file's /rates snapshot. The MM itself is rates_mm.c, its inner SVM rates_inner.c, the
 * cut models rates_cut.c, reports and baselines rates_report.c (rates_impl.h). */
#include "rates_impl.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const strux_opt_spec strux_rates_opt_specs[] = {
    {"rates.objective", STRUX_OPT_STRING, offsetof(strux_rates_options, objective),
     "error_rate(labeled)", 0, 0, NULL,
     "rate-constrained training (a non-empty [constraints] section): the objective, a "
     "non-negative combination of rate terms over [datasets]"},
    {"rates.mm_steps", STRUX_OPT_INT, offsetof(strux_rates_options, mm_steps), "8", 1, 1000, NULL,
     "ramp MM steps at most (Alg. 1)"},
    {"rates.mm_tol", STRUX_OPT_DOUBLE, offsetof(strux_rates_options, mm_tol), "1e-6", 0, 1, NULL,
     "MM stops when the Problem 2 objective improves by less than this (relative), or when no "
     "example changes side"},
    {"rates.cut", STRUX_OPT_CHOICE, offsetof(strux_rates_options, cut), "max", 0, 0,
     "max|center|midpoint",
     "multiplier cut chooser: max (E.1: the maximiser of the cut model, any number of "
     "constraints), center (E.2: the centroid of the cut model's hypograph above the best lower "
     "bound) or midpoint (the middle of the multipliers where the cut model reaches the best "
     "lower bound, §3.4); center and midpoint need exactly one constraint"},
    {"rates.eps", STRUX_OPT_DOUBLE, offsetof(strux_rates_options, eps), "1e-5", 1e-12, 1, NULL,
     "the multiplier cutting plane stops when its upper and lower bounds are this close"},
    {"rates.v_max", STRUX_OPT_DOUBLE, offsetof(strux_rates_options, v_max), "1000", 1e-6, 1e12,
     NULL, "multiplier box [0, v_max]; doubled (at most 3 times) while a multiplier at its end "
     "leaves its constraint violated"},
    {"rates.inner_epochs", STRUX_OPT_INT, offsetof(strux_rates_options, inner_epochs), "500", 1,
     1000000000, NULL, "SDCA epochs per inner solve at most"},
    {"rates.max_cuts", STRUX_OPT_INT, offsetof(strux_rates_options, max_cuts), "100", 2, 100000,
     NULL, "multiplier cutting-plane iterations per MM step at most"},
    {"rates.bias_cut", STRUX_OPT_CHOICE, offsetof(strux_rates_options, bias_cut), "min", 0, 0,
     "min|center",
     "with model.bias = free, the bias cutting plane (Alg. 3) over the interval B of §3.5 picks "
     "the next bias as the minimiser of its cut model (min, F.2.1) or the centroid of the region "
     "between the model and the best upper bound (center, F.2.2)"},
    {"rates.start", STRUX_OPT_STRING, offsetof(strux_rates_options, start), "zero", 0, 0, NULL,
     "MM start: zero (w = 0), or a binary strux model file of the same dimension, scaled by the "
     "power of 2 (over its largest training score) that meets the ramp constraints with the "
     "smallest Problem 2 objective, or violates them least (A7)"},
    {"rates.return", STRUX_OPT_CHOICE, offsetof(strux_rates_options, return_rule), "average", 0, 0,
     "average|best_bound",
     "the model a multiplier search returns: the LP-dual average of its iterates (A5) or the "
     "iterate of the best lower bound (the paper's rule)"},
    {"rates.on_violation", STRUX_OPT_CHOICE, offsetof(strux_rates_options, on_violation), "fail",
     0, 0, "fail|keep",
     "a constraint still violated (ramp, randomised reading) when training ends: fail (exit 1, "
     "nothing written) or keep (the model is written and the violation logged)"},
    {NULL},
};

/* ---- small helpers shared by the rates files ---- */

strux_status strux_rates_dup(char **dst, const char *src)
{
    size_t n = strlen(src) + 1;
    STRUX_TRY(strux_alloc(dst, n));
    memcpy(*dst, src, n);
    return STRUX_OK;
}

double strux_rates_score(const strux_model *m, const strux_dataset *ds, int64_t i)
{
    double s;
    strux_model_scores(m, &ds->x, i, 0, 1, &s);
    return s;
}

int32_t strux_rates_blocks(const strux_dataset *ds)
{
    int32_t n_b = ds->block_hi - ds->block_lo;
    return ds->n_blocks > 0 && n_b > 0 ? n_b : 1;
}

void strux_rates_block_range(const strux_dataset *ds, int32_t b, int64_t *e0, int64_t *e1)
{
    *e0 = 0;
    *e1 = ds->n_local;
    if (ds->n_blocks > 0 && ds->block_hi > ds->block_lo)
        strux_dataset_block_range(ds, ds->block_lo + b, e0, e1);
}

int32_t strux_rates_set_slot(const strux_rates *r, int32_t k)
{
    int32_t b = 0;
    while (r->sets[b] != k)
        b++;
    return b;
}

/* ---- construction ---- */

strux_status strux_rates_create(const strux_rates_options *opt, strux_rates **out)
{
    strux_rates *r;
    STRUX_TRY(strux_alloc(&r, sizeof *r));
    r->opt = *opt;
    r->bias_col = -1;
    strux_status st = strux_subset_defs_create(&r->defs);
    if (st != STRUX_OK) {
        strux_free(&r);
        return st;
    }
    *out = r;
    return STRUX_OK;
}

static void free_vectors(uint8_t **v, int32_t n)
{
    if (v)
        for (int32_t b = 0; b < n; b++)
            strux_free(&v[b]);
}

void strux_rates_destroy(strux_rates **p)
{
    strux_rates *r = *p;
    if (!r) return;
    for (int32_t j = 0; j < r->m; j++) {
        strux_free(&r->con_name[j]);
        strux_free(&r->con_text[j]);
        strux_free(&r->con_origin[j]);
    }
    if (r->e)
        for (int32_t j = 0; j <= r->m; j++)
            strux_rates_expr_destroy(&r->e[j]);
    if (r->row)
        for (int32_t j = 0; j <= r->m; j++)
            strux_rates_row_free(&r->row[j]);
    free_vectors(r->member, r->n_sets);
    free_vectors(r->test_member, r->n_sets);
    for (int32_t b = 0; b < r->n_base; b++) {
        if (r->base) strux_model_destroy(&r->base[b]);
        if (r->base_train) strux_free(&r->base_train[b]);
        if (r->base_test) strux_free(&r->base_test[b]);
    }
    if (r->columns)
        for (char **c = r->columns; *c; c++)
            strux_free(c);
    for (int32_t s = 0; s < r->n_cuts; s++) {
        strux_free(&r->cuts[s].g);
        strux_free(&r->cuts[s].v);
        strux_model_destroy(&r->cuts[s].w);
    }
    for (int32_t s = 0; s < r->n_bcuts; s++) {
        strux_free(&r->bcuts[s].G);
        strux_model_destroy(&r->bcuts[s].w);
    }
    strux_lp_destroy(&r->lp);
    strux_free(&r->cuts);
    strux_free(&r->bcuts);
    strux_free(&r->columns);
    for (int32_t k = 0; k < r->n_defs; k++) {
        strux_free(&r->def_name[k]);
        strux_free(&r->def_text[k]);
    }
    strux_free(&r->def_name);
    strux_free(&r->def_text);
    strux_free(&r->con_name);
    strux_free(&r->con_text);
    strux_free(&r->con_origin);
    strux_free(&r->e);
    strux_free(&r->row);
    strux_free(&r->member);
    strux_free(&r->test_member);
    strux_free(&r->test_n);
    strux_free(&r->base);
    strux_free(&r->base_train);
    strux_free(&r->base_test);
    strux_free(&r->sets);
    strux_free(&r->n);
    strux_free(&r->label);
    strux_free(&r->Ab);
    strux_free(&r->Bb);
    strux_free(&r->ex);
    strux_free(&r->pat);
    strux_free(&r->gam);
    strux_free(&r->z);
    strux_free(&r->G);
    strux_free(&r->viol);
    strux_free(&r->v);
    strux_free(&r->mu);
    strux_free(&r->ramp);
    strux_free(&r->train_val);
    strux_free(&r->test_val);
    strux_free(&r->rec);
    strux_model_destroy(&r->anchor);
    strux_rates_store_free(&r->kept);
    strux_dataset_destroy(&r->inner);
    strux_subset_defs_destroy(&r->defs);
    strux_free(p);
}

strux_status strux_rates_define(strux_rates *r, const char *name, const char *text,
                                const char *origin)
{
    STRUX_TRY(strux_subset_define(r->defs, name, text, origin));
    int32_t k = 0; /* the entry as given, replaced in place or removed (empty text) */
    while (k < r->n_defs && strcmp(r->def_name[k], name) != 0)
        k++;
    if (strspn(text, " \t") == strlen(text)) {
        if (k == r->n_defs) return STRUX_OK;
        strux_free(&r->def_name[k]);
        strux_free(&r->def_text[k]);
        for (int32_t q = k; q + 1 < r->n_defs; q++) {
            r->def_name[q] = r->def_name[q + 1];
            r->def_text[q] = r->def_text[q + 1];
        }
        r->n_defs--;
        return STRUX_OK;
    }
    if (k == r->n_defs) {
        STRUX_TRY(strux_realloc_array(&r->def_name, (size_t)k + 1, sizeof *r->def_name));
        STRUX_TRY(strux_realloc_array(&r->def_text, (size_t)k + 1, sizeof *r->def_text));
        r->def_name[k] = r->def_text[k] = NULL;
        r->n_defs++;
        STRUX_TRY(strux_rates_dup(&r->def_name[k], name));
    } else {
        strux_free(&r->def_text[k]);
    }
    return strux_rates_dup(&r->def_text[k], text);
}

strux_status strux_rates_constrain(strux_rates *r, const char *name, const char *text,
                                   const char *origin)
{
    int32_t j = 0;
    while (j < r->m && strcmp(r->con_name[j], name) != 0)
        j++;
    if (strspn(text, " \t") == strlen(text)) { /* remove */
        if (j == r->m) return STRUX_OK;
        strux_free(&r->con_name[j]);
        strux_free(&r->con_text[j]);
        strux_free(&r->con_origin[j]);
        for (int32_t k = j; k + 1 < r->m; k++) {
            r->con_name[k] = r->con_name[k + 1];
            r->con_text[k] = r->con_text[k + 1];
            r->con_origin[k] = r->con_origin[k + 1];
        }
        r->m--;
        return STRUX_OK;
    }
    if (j == r->m) {
        STRUX_TRY(strux_realloc_array(&r->con_name, (size_t)r->m + 1, sizeof *r->con_name));
        STRUX_TRY(strux_realloc_array(&r->con_text, (size_t)r->m + 1, sizeof *r->con_text));
        STRUX_TRY(strux_realloc_array(&r->con_origin, (size_t)r->m + 1, sizeof *r->con_origin));
        r->con_name[j] = r->con_text[j] = r->con_origin[j] = NULL;
        STRUX_TRY(strux_rates_dup(&r->con_name[j], name));
        r->m++;
    } else {
        strux_free(&r->con_text[j]);
        strux_free(&r->con_origin[j]);
    }
    STRUX_TRY(strux_rates_dup(&r->con_text[j], text));
    return strux_rates_dup(&r->con_origin[j], origin);
}

int32_t strux_rates_n_constraints(const strux_rates *r)
{
    return r->m;
}

const double *strux_rates_multipliers(const strux_rates *r)
{
    return r->v;
}

strux_status strux_rates_check(strux_rates *r)
{
    STRUX_CHECK(r->m <= STRUX_RATES_MAX_M, STRUX_ERR_CONFIG,
                "%d constraints: at most %d are supported", r->m, STRUX_RATES_MAX_M);
    STRUX_CHECK(strcmp(r->opt.cut, "max") == 0 || r->m <= 1, STRUX_ERR_CONFIG,
                "rates.cut = %s needs exactly one constraint ([constraints] has %d: %s%s%s); with "
                "several use rates.cut = max (E.1; the centroid of E.2 and the level-set midpoint "
                "are one-dimensional, A18)",
                r->opt.cut, r->m, r->m > 0 ? r->con_name[0] : "",
                r->m > 1 ? ", " : "", r->m > 1 ? r->con_name[1] : "");
    STRUX_TRY(strux_subset_check(r->defs));
    STRUX_TRY(strux_alloc_array(&r->e, (size_t)r->m + 1, sizeof *r->e));
    STRUX_TRY(strux_rates_parse(r->defs, "objective", r->opt.objective, "rates.objective", 1,
                                &r->e[0]));
    for (int32_t j = 0; j < r->m; j++)
        STRUX_TRY(strux_rates_parse(r->defs, r->con_name[j], r->con_text[j], r->con_origin[j], 0,
                                    &r->e[j + 1]));
    return STRUX_OK;
}

strux_status strux_rates_config_text(const strux_rates *r, char **text)
{
    size_t cap = 64;
    for (int32_t k = 0; k < r->n_defs; k++)
        cap += strlen(r->def_name[k]) + strlen(r->def_text[k]) + 4;
    for (int32_t j = 0; j < r->m; j++)
        cap += strlen(r->con_name[j]) + strlen(r->con_text[j]) + 4;
    STRUX_TRY(strux_alloc(text, cap));
    size_t at = 0;
    if (r->n_defs) at += (size_t)snprintf(*text + at, cap - at, "\n[datasets]\n");
    for (int32_t k = 0; k < r->n_defs; k++)
        at += (size_t)snprintf(*text + at, cap - at, "%s = %s\n", r->def_name[k], r->def_text[k]);
    at += (size_t)snprintf(*text + at, cap - at, "\n[constraints]\n");
    for (int32_t j = 0; j < r->m; j++)
        at += (size_t)snprintf(*text + at, cap - at, "%s = %s\n", r->con_name[j], r->con_text[j]);
    return STRUX_OK;
}

/* ---- binding to the data ---- */

/* The subsets the expressions use, their members and the global size of every subset. */
static strux_status bind_sets(strux_rates *r)
{
    const strux_dataset *train = r->train;
    int64_t n = r->n_local;
    int32_t K = strux_subset_count(r->defs);
    STRUX_TRY(strux_alloc_array(&r->sets, (size_t)K + 1, sizeof *r->sets));
    STRUX_TRY(strux_rates_cell_sets((const strux_rates_expr *const *)r->e, r->m + 1, r->defs,
                                    r->sets, &r->n_sets));
    STRUX_TRY(strux_alloc_array(&r->member, (size_t)r->n_sets + 1, sizeof *r->member));
    STRUX_TRY(strux_alloc_array(&r->n, (size_t)K, sizeof *r->n));
    strux_subset_input in = {.ds = train,
                             .label = r->label,
                             .baseline = (const int8_t *const *)r->base_train};
    strux_status st = STRUX_OK;
    for (int32_t b = 0; b < r->n_sets && st == STRUX_OK; b++) {
        st = strux_alloc_array(&r->member[b], (size_t)n + 1, sizeof **r->member);
        if (st == STRUX_OK) st = strux_subset_eval(r->defs, r->sets[b], &in, r->member[b]);
    }
    /* sizes of every subset: count weights n(A)/n(B) use subsets no rate term does */
    uint8_t *tmp = NULL;
    if (st == STRUX_OK) st = strux_alloc_array(&tmp, (size_t)n + 1, sizeof *tmp);
    for (int32_t k = 0; k < K && st == STRUX_OK; k++) {
        if (!strux_subset_evaluable(r->defs, k, &in)) continue;
        st = strux_subset_eval(r->defs, k, &in, tmp);
        for (int64_t e = 0; st == STRUX_OK && e < n; e++)
            r->n[k] += tmp[e];
    }
    strux_free(&tmp);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    return strux_comm_allreduce_sum_i64(r->comm, r->n, K);
}

/* Canonical rows (an empty set is named there), the infeasibility check over the cells, and the
 * canonical rows in the log. */
static strux_status bind_rows(strux_rates *r)
{
    int32_t m = r->m;
    STRUX_TRY(strux_alloc_array(&r->row, (size_t)m + 1, sizeof *r->row));
    for (int32_t j = 0; j <= m; j++)
        STRUX_TRY(strux_rates_canonical(r->e[j], r->defs, r->n, &r->row[j]));
    int64_t *count = NULL;
    STRUX_TRY(strux_alloc_array(&count, (size_t)1 << r->n_sets, sizeof *count));
    strux_rates_cell_count(r->n_sets, (const uint8_t *const *)r->member, r->n_local, count);
    strux_status st = strux_comm_allreduce_sum_i64(r->comm, count, (int64_t)1 << r->n_sets);
    strux_rates_cells cells = {.n_sets = r->n_sets, .sets = r->sets, .count = count};
    int32_t failed = -1;
    double best = 0;
    if (st == STRUX_OK && m > 0)
        st = strux_rates_feasible((const strux_rates_expr *const *)r->e + 1, m, r->defs, r->n,
                                  &cells, &failed, &best);
    strux_free(&count);
    STRUX_TRY(st);
    for (int32_t j = 0; j <= m; j++) {
        char *text = NULL;
        STRUX_TRY(strux_rates_print(&r->row[j], r->defs, &text));
        if (strux_comm_rank(r->comm) == 0)
            strux_log(STRUX_LOG_INFO, "rates: %s %s: canonical %s", j ? "constraint" : "objective",
                      j ? r->con_name[j - 1] : r->opt.objective, text);
        strux_free(&text);
    }
    return STRUX_OK;
}

/* Per-example base coefficients Σ_{i ∋ e} α_i^j/|D_i|, Σ β_i^j/|D_i| (§3.7). */
static strux_status bind_coefficients(strux_rates *r)
{
    int64_t n = r->n_local;
    int32_t m = r->m;
    STRUX_TRY(strux_alloc_array(&r->Ab, (size_t)(m + 1) * (size_t)n + 1, sizeof *r->Ab));
    STRUX_TRY(strux_alloc_array(&r->Bb, (size_t)(m + 1) * (size_t)n + 1, sizeof *r->Bb));
    for (int32_t j = 0; j <= m; j++) {
        const strux_rates_row *row = &r->row[j];
        for (int32_t t = 0; t < row->n; t++) {
            int32_t b = strux_rates_set_slot(r, row->set[t]);
            double a = row->alpha[t] / (double)r->n[row->set[t]];
            double c = row->beta[t] / (double)r->n[row->set[t]];
            for (int64_t e = 0; e < n; e++)
                if (r->member[b][e]) {
                    r->Ab[(size_t)j * n + e] += a;
                    r->Bb[(size_t)j * n + e] += c;
                }
        }
    }
    return STRUX_OK;
}

strux_status strux_rates_bind(strux_rates *r, strux_comm *comm, const strux_dataset *train,
                              const char *task, double lambda, int free_bias,
                              const strux_dataset **inner)
{
    r->comm = comm;
    snprintf(r->task, sizeof r->task, "%s", task);
    r->train = train;
    r->lam = 2 * lambda;
    r->N = train->n_global;
    r->free_bias = free_bias;
    r->bias_col = free_bias ? train->bias_col : -1;
    int64_t n = r->n_local = train->n_local;
    int32_t m = r->m;
    STRUX_CHECK(train->ex_ptr == NULL, STRUX_ERR_CONFIG,
                "%s: rate constraints need the binary task's one row per example", train->path);
    STRUX_CHECK(!free_bias || train->bias_col >= 0, STRUX_ERR_CONFIG,
                "model.bias = free needs the bias column (data.bias > 0)");
    STRUX_TRY(strux_alloc_array(&r->label, (size_t)n + 1, sizeof *r->label));
    for (int64_t e = 0; e < n; e++)
        r->label[e] = train->y_ptr[e + 1] > train->y_ptr[e]
                          ? (train->y_idx[train->y_ptr[e]] == 1 ? 1 : -1)
                          : 0;
    if (r->bias_col >= 0) /* the bias column's value c (data.bias), the same in every row */
        for (int64_t p = n ? train->x.ptr[0] : 0; n && p < train->x.ptr[1]; p++)
            if (train->x.col[p] == r->bias_col) r->bias_val = train->x.val[p];
    STRUX_TRY(strux_comm_allreduce_max(comm, &r->bias_val, 1));
    STRUX_TRY(strux_rates_baselines_read(r));
    STRUX_TRY(bind_sets(r));
    STRUX_TRY(bind_rows(r));
    STRUX_TRY(bind_coefficients(r));
    STRUX_TRY(strux_alloc_array(&r->pat, (size_t)n + 1, sizeof *r->pat));
    STRUX_TRY(strux_alloc_array(&r->gam, (size_t)m + 1, sizeof *r->gam));
    STRUX_TRY(strux_alloc_array(&r->z, (size_t)n + 1, sizeof *r->z));
    STRUX_TRY(strux_alloc_array(&r->G, (size_t)m + 1, sizeof *r->G));
    STRUX_TRY(strux_alloc_array(&r->viol, (size_t)m + 1, sizeof *r->viol));
    STRUX_TRY(strux_alloc_array(&r->v, (size_t)m + 1, sizeof *r->v));
    STRUX_TRY(strux_alloc_array(&r->ramp, (size_t)m + 1, sizeof *r->ramp));
    STRUX_TRY(strux_alloc_array(&r->train_val, (size_t)m + 1, sizeof *r->train_val));
    STRUX_TRY(strux_alloc_array(&r->test_val, (size_t)m + 1, sizeof *r->test_val));
    STRUX_TRY(strux_alloc_array(&r->rec, 3 * (size_t)m + 1, sizeof *r->rec));
    for (int32_t j = 0; j < m; j++)
        r->ramp[j] = r->train_val[j] = r->test_val[j] = NAN;
    r->mm_objective = NAN;
    STRUX_TRY(strux_rates_inner_build(r));
    *inner = r->inner;
    return STRUX_OK;
}

strux_status strux_rates_bind_test(strux_rates *r, const strux_dataset *test)
{
    if (!test) return STRUX_OK;
    int32_t K = strux_subset_count(r->defs);
    int64_t n = test->n_local;
    int8_t *label = NULL;
    uint8_t *mem = NULL;
    r->test = test;
    STRUX_TRY(strux_alloc_array(&r->test_member, (size_t)r->n_sets + 1, sizeof *r->test_member));
    STRUX_TRY(strux_alloc_array(&r->test_n, (size_t)K, sizeof *r->test_n));
    STRUX_TRY(strux_alloc_array(&r->base_test, (size_t)r->n_base + 1, sizeof *r->base_test));
    strux_status st = strux_alloc_array(&label, (size_t)n + 1, sizeof *label);
    if (st == STRUX_OK) st = strux_alloc_array(&mem, (size_t)n + 1, sizeof *mem);
    for (int64_t e = 0; st == STRUX_OK && e < n; e++)
        label[e] = test->y_ptr[e + 1] > test->y_ptr[e]
                       ? (test->y_idx[test->y_ptr[e]] == 1 ? 1 : -1)
                       : 0;
    if (st == STRUX_OK) st = strux_rates_baseline_predictions(r, test, 1, r->base_test);
    strux_subset_input in = {.ds = test,
                             .label = label,
                             .test = 1,
                             .baseline = (const int8_t *const *)r->base_test};
    for (int32_t k = 0; k < K; k++)
        r->test_n[k] = -1;
    for (int32_t k = 0; k < K && st == STRUX_OK; k++) {
        if (!strux_subset_evaluable(r->defs, k, &in)) continue;
        st = strux_subset_eval(r->defs, k, &in, mem);
        r->test_n[k] = 0;
        for (int64_t e = 0; st == STRUX_OK && e < n; e++)
            r->test_n[k] += mem[e];
    }
    for (int32_t b = 0; b < r->n_sets && st == STRUX_OK; b++) {
        if (r->test_n[r->sets[b]] < 0) continue;
        st = strux_alloc_array(&r->test_member[b], (size_t)n + 1, sizeof **r->test_member);
        if (st == STRUX_OK) st = strux_subset_eval(r->defs, r->sets[b], &in, r->test_member[b]);
    }
    strux_free(&label);
    strux_free(&mem);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    /* a set not evaluable is so on every rank (its files, its baselines): −1 stays −1 */
    int64_t *neg = NULL;
    STRUX_TRY(strux_alloc_array(&neg, (size_t)K, sizeof *neg));
    for (int32_t k = 0; k < K; k++) {
        neg[k] = r->test_n[k] < 0;
        if (neg[k]) r->test_n[k] = 0;
    }
    st = strux_comm_allreduce_sum_i64(r->comm, r->test_n, K);
    for (int32_t k = 0; k < K; k++)
        if (neg[k]) r->test_n[k] = -1;
    strux_free(&neg);
    return st;
}

/* ---- the record ---- */

/* One record per MM step (its end; NaN on the epochs' records): the step, its Problem 2
 * objective on train and whether it was kept (below the last kept step's), the examples that
 * changed side, cumulative cuts, bias cuts and inner epochs, the step's LP seconds (rank 0),
 * wall seconds and communication seconds; per constraint its ramp value − γ, indicator value − γ
 * on train and test, and multiplier. */
static const char *const mm_columns[] = {"mm_step",   "mm_objective", "mm_kept",
                                         "mm_switched", "cuts",       "bias_cuts",
                                         "inner_epochs", "lp_s",      "step_s",
                                         "mm_comm_s"};
enum { N_MM_COLS = 10, N_PER_CON = 4 };

static strux_status rates_metrics(void *ctx, strux_driver *d, double *values)
{
    (void)d;
    strux_rates *r = ctx;
    int32_t n_cols = N_MM_COLS + N_PER_CON * r->m;
    for (int32_t c = 0; c < n_cols; c++)
        values[c] = NAN;
    if (!r->recording) return STRUX_OK;
    values[0] = (double)r->st.step;
    values[1] = r->rec_obj;
    values[2] = r->rec_kept;
    values[3] = (double)r->st.switched;
    values[4] = (double)r->total_cuts;
    values[5] = (double)r->total_bcuts;
    values[6] = (double)r->inner_epochs;
    values[7] = r->lp_s - r->lp0;
    values[8] = r->step_s;
    values[9] = r->comm_s;
    for (int32_t j = 0; j < r->m; j++) {
        double *c = values + N_MM_COLS + N_PER_CON * j;
        c[0] = r->rec[j];
        c[1] = r->rec[r->m + j];
        c[2] = r->rec[2 * r->m + j];
        c[3] = r->v[j];
    }
    return STRUX_OK;
}

strux_status strux_rates_hook(strux_rates *r, strux_solver *solver, strux_driver_hook *h)
{
    STRUX_TRY(strux_rates_inner_attach(r, solver));
    int32_t n_cols = N_MM_COLS + N_PER_CON * r->m;
    STRUX_TRY(strux_alloc_array(&r->columns, (size_t)n_cols + 1, sizeof *r->columns));
    static const char *const suffix[N_PER_CON] = {"ramp", "train", "test", "v"};
    for (int32_t c = 0; c < n_cols; c++) {
        char name[STRUX_OPT_STR];
        if (c < N_MM_COLS)
            snprintf(name, sizeof name, "%s", mm_columns[c]);
        else
            snprintf(name, sizeof name, "%s.%s", r->con_name[(c - N_MM_COLS) / N_PER_CON],
                     suffix[(c - N_MM_COLS) % N_PER_CON]);
        STRUX_TRY(strux_rates_dup(&r->columns[c], name));
    }
    *h = (strux_driver_hook){.name = "rates",
                             .ctx = r,
                             .columns = (const char *const *)r->columns,
                             .metrics = rates_metrics,
                             .moves_problem = 1,
                             .save = strux_rates_mm_save,
                             .load = strux_rates_mm_load};
    return STRUX_OK;
}

/* ---- the stored classifiers ---- */

static strux_status snapshot_table(const strux_rates *r, strux_rates_store *s)
{
    int32_t m = r->m;
    s->m = m;
    s->v_max = r->st.v_max;
    s->mm_steps = r->st.step;
    STRUX_TRY(strux_alloc_array(&s->names, (size_t)m + 1, sizeof *s->names));
    STRUX_TRY(strux_alloc_array(&s->texts, (size_t)m + 1, sizeof *s->texts));
    if (r->n_defs) {
        STRUX_TRY(strux_alloc_array(&s->def_names, (size_t)r->n_defs, sizeof *s->def_names));
        STRUX_TRY(strux_alloc_array(&s->def_texts, (size_t)r->n_defs, sizeof *s->def_texts));
        s->n_defs = r->n_defs;
        for (int32_t k = 0; k < r->n_defs; k++) {
            STRUX_TRY(strux_rates_dup(&s->def_names[k], r->def_name[k]));
            STRUX_TRY(strux_rates_dup(&s->def_texts[k], r->def_text[k]));
        }
    }
    STRUX_TRY(strux_alloc_array(&s->canonical, (size_t)m + 2, sizeof *s->canonical));
    STRUX_TRY(strux_alloc_array(&s->v, (size_t)m + 1, sizeof *s->v));
    STRUX_TRY(strux_alloc_array(&s->train_ramp, (size_t)m + 1, sizeof *s->train_ramp));
    STRUX_TRY(strux_alloc_array(&s->train_value, (size_t)m + 1, sizeof *s->train_value));
    STRUX_TRY(strux_alloc_array(&s->test_value, (size_t)m + 1, sizeof *s->test_value));
    for (int32_t j = 0; j <= m; j++) {
        STRUX_TRY(strux_rates_print(&r->row[j], r->defs, &s->canonical[j]));
        if (j == m) break;
        STRUX_TRY(strux_rates_dup(&s->names[j], r->con_name[j]));
        STRUX_TRY(strux_rates_dup(&s->texts[j], r->con_text[j]));
        s->v[j] = r->v[j];
        s->train_ramp[j] = r->ramp[j];
        s->train_value[j] = r->train_val[j];
        s->test_value[j] = r->test_val[j];
    }
    return STRUX_OK;
}

/* The baseline models' weights (a prediction file stores none: is_model 0, zeros). */
static strux_status snapshot_baselines(const strux_rates *r, strux_rates_store *s)
{
    if (!r->n_base) return STRUX_OK;
    int32_t dim = strux_model_dim(r->anchor);
    s->n_base = r->n_base;
    STRUX_TRY(strux_alloc_array(&s->base_paths, (size_t)r->n_base, sizeof *s->base_paths));
    STRUX_TRY(strux_alloc_array(&s->base_is_model, (size_t)r->n_base, sizeof *s->base_is_model));
    STRUX_TRY(strux_alloc_array(&s->base_w, (size_t)r->n_base * (size_t)dim, sizeof *s->base_w));
    for (int32_t b = 0; b < r->n_base; b++) {
        STRUX_TRY(strux_rates_dup(&s->base_paths[b], strux_subset_baseline_path(r->defs, b)));
        s->base_is_model[b] = r->base[b] != NULL;
        if (r->base[b]) strux_model_get_row(r->base[b], 0, s->base_w + (size_t)b * (size_t)dim);
    }
    return STRUX_OK;
}

strux_status strux_rates_snapshot(const strux_rates *r, strux_rates_store *s)
{
    *s = (strux_rates_store){0};
    strux_status st = snapshot_table(r, s);
    if (st == STRUX_OK) st = snapshot_baselines(r, s);
    /* the randomised classifier: cuts s ≥ 1 of positive LP dual weight, renormalised */
    double sum = 0;
    for (int32_t c = 1; c < r->n_cuts; c++)
        if (r->mu[c] > 1e-12) {
            s->n_mix++;
            sum += r->mu[c];
        }
    if (st == STRUX_OK && s->n_mix == 0)
        st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                             "the last multiplier search left no iterate of positive weight");
    const strux_model *w0 = s->n_mix ? r->cuts[1].w : NULL;
    int32_t rows = w0 ? strux_model_n_rows(w0) : 0, dim = w0 ? strux_model_dim(w0) : 0;
    s->n_w = (int64_t)rows * dim;
    if (st == STRUX_OK)
        st = strux_alloc_array(&s->mix_w, (size_t)(s->n_mix * s->n_w), sizeof *s->mix_w);
    if (st == STRUX_OK) st = strux_alloc_array(&s->mix_mu, (size_t)s->n_mix, sizeof *s->mix_mu);
    for (int32_t c = 1, k = 0; st == STRUX_OK && c < r->n_cuts; c++) {
        if (!(r->mu[c] > 1e-12)) continue;
        s->mix_mu[k] = r->mu[c] / sum;
        for (int32_t q = 0; q < rows; q++)
            strux_model_get_row(r->cuts[c].w, q, s->mix_w + (size_t)k * s->n_w + (size_t)q * dim);
        k++;
    }
    if (st != STRUX_OK) strux_rates_store_free(s);
    return st;
}

strux_status strux_rates_store_fill(strux_rates *r, strux_rates_store *s)
{
    STRUX_CHECK(r->kept.m == r->m && r->m > 0, STRUX_ERR_INTERNAL,
                "no MM step was kept: nothing to store");
    *s = r->kept; /* moved */
    r->kept = (strux_rates_store){0};
    return STRUX_OK;
}
