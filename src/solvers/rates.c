/* solvers/rates.c - ramp MM (Alg. 1) around the multiplier cutting plane (Alg. 2, CutChooser
 * E.1, one GLPK LP per MM step on rank 0, v broadcast) for the binary task under rate constraints
 * (strux/rates.h, dataset_constraints.md §2-§3). The inner problem for fixed v is a weighted SVM on
 * the inner dataset (two hinge rows per example, strux/rates.h) solved by SDCA through the
 * driver's strux_driver_solve, warm-started: each hinge's dual is clipped into its new box and w
 * rebuilt from the duals (§3.7 "Warm start"). Data stays sharded: per-example coefficients are
 * local, every count, rate sum and cut value is allreduced, only w- and m-sized data cross ranks.
 * Regularised bias only (the bias column is a feature); Alg. 3 (free bias) is refused. */
#include "strux/rates.h"

#include "dual.h"
#include "rates.h"
#include "strux/lp.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define MAX_DOUBLINGS 3 /* A1: V_max doubled at most this often */

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
     "multiplier cut chooser: max (E.1, any number of constraints); center and midpoint (one "
     "constraint) are not implemented yet and refused"},
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
     "min|center", "bias cutting plane with model.bias = free (not implemented yet: refused)"},
    {"rates.start", STRUX_OPT_STRING, offsetof(strux_rates_options, start), "zero", 0, 0, NULL,
     "MM start: zero (w = 0)"},
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

/* One cut of Alg. 2: the iterate (w_s, v_s), its primal value u_s, lower bound l_s and slope g_s
 * (g has m entries). */
typedef struct cut {
    double u, l;
    double *g, *v;
    strux_model *w; /* NULL for the flat cut 0 */
} cut;

struct strux_rates {
    strux_rates_options opt;
    strux_subset_defs *defs;
    int32_t n_defs;        /* [datasets] entries as given (the model file stores them) */
    char **def_name, **def_text;
    int32_t m;             /* constraints */
    char **con_name;       /* m names, config order */
    char **con_text;       /* m texts */
    char **con_origin;     /* m origins */
    strux_rates_expr **e;  /* m + 1 parsed: e[0] the objective, e[1..m] the constraints */
    strux_rates_row *row;  /* m + 1 canonical rows */
    /* bound */
    strux_comm *comm;
    const strux_dataset *train;
    strux_dataset *inner;
    double lambda_half; /* λ of Ψ (margin ½) = 2·solver.lambda */
    int64_t N, n_local;
    int8_t *label;
    int32_t n_sets, *sets; /* subsets the rows use */
    uint8_t **member;      /* n_sets membership vectors */
    int64_t *n;            /* global size of every subset */
    double *Ab, *Bb;       /* (m+1)·n_local base coefficients Σ α/|D|, Σ β/|D| */
    uint8_t *pat;          /* anchor pattern per local example: 1 hinge on +, 2 hinge on − */
    double *gam;           /* m surrogate bounds γ̌ */
    double C0;             /* objective constant of the surrogate */
    double *z;             /* scores z = w·x of the local examples (scratch) */
    double *wts;           /* 2·n_local inner loss weights (scratch) */
    double *xx;            /* ||x_e||² of every local example (the merged step) */
    strux_model *anchor;   /* the MM anchor (the returned model of the last step) */
    /* cutting plane */
    cut *cuts;
    int32_t n_cuts, cap_cuts;
    double *v;             /* m multipliers of the last search */
    double *mu;            /* LP dual weights of the cuts of the last search */
    double v_max;
    int have_v;            /* r->v holds a previous search's multipliers */
    strux_rates_store kept; /* the model file's /rates of the MM step whose model is kept */
    /* metrics */
    int64_t mm_step, switched, total_cuts, inner_epochs;
    double mm_objective, lp_s, step_s, comm_s, step_t0;
    double *ramp, *train_val; /* m: ramp value − γ, indicator value − γ at the anchor */
    char **columns;           /* NULL-terminated record column names */
};

/* ---- block-ordered sums (strux_block_sum): bit-identical at any rank count ---- */

static int32_t local_blocks(const strux_dataset *ds)
{
    int32_t n_b = ds->block_hi - ds->block_lo;
    return ds->n_blocks > 0 && n_b > 0 ? n_b : 1;
}

static void block_examples(const strux_dataset *ds, int32_t b, int64_t *e0, int64_t *e1)
{
    *e0 = 0;
    *e1 = ds->n_local;
    if (ds->n_blocks > 0 && ds->block_hi > ds->block_lo)
        strux_dataset_block_range(ds, ds->block_lo + b, e0, e1);
}

/* ---- construction ---- */

strux_status strux_rates_create(const strux_rates_options *opt, strux_rates **out)
{
    strux_rates *r;
    STRUX_TRY(strux_alloc(&r, sizeof *r));
    r->opt = *opt;
    strux_status st = strux_subset_defs_create(&r->defs);
    if (st != STRUX_OK) {
        strux_free(&r);
        return st;
    }
    *out = r;
    return STRUX_OK;
}

static void free_cuts(strux_rates *r)
{
    for (int32_t s = 0; s < r->n_cuts; s++) {
        strux_free(&r->cuts[s].g);
        strux_free(&r->cuts[s].v);
        strux_model_destroy(&r->cuts[s].w);
    }
    r->n_cuts = 0;
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
    if (r->member)
        for (int32_t b = 0; b < r->n_sets; b++)
            strux_free(&r->member[b]);
    if (r->columns)
        for (char **c = r->columns; *c; c++)
            strux_free(c);
    free_cuts(r);
    strux_free(&r->cuts);
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
    strux_free(&r->sets);
    strux_free(&r->n);
    strux_free(&r->label);
    strux_free(&r->Ab);
    strux_free(&r->Bb);
    strux_free(&r->pat);
    strux_free(&r->gam);
    strux_free(&r->z);
    strux_free(&r->wts);
    strux_free(&r->xx);
    strux_free(&r->v);
    strux_free(&r->mu);
    strux_free(&r->ramp);
    strux_free(&r->train_val);
    strux_model_destroy(&r->anchor);
    strux_rates_store_free(&r->kept);
    strux_dataset_destroy(&r->inner);
    strux_subset_defs_destroy(&r->defs);
    strux_free(p);
}

static strux_status dup_string(char **dst, const char *src);

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
        STRUX_TRY(dup_string(&r->def_name[k], name));
    } else {
        strux_free(&r->def_text[k]);
    }
    return dup_string(&r->def_text[k], text);
}

static strux_status dup_string(char **dst, const char *src)
{
    size_t n = strlen(src) + 1;
    STRUX_TRY(strux_alloc(dst, n));
    memcpy(*dst, src, n);
    return STRUX_OK;
}

strux_status strux_rates_constrain(strux_rates *r, const char *name, const char *text,
                                   const char *origin)
{
    int32_t j = 0;
    while (j < r->m && strcmp(r->con_name[j], name) != 0)
        j++;
    int blank = strspn(text, " \t") == strlen(text);
    if (blank) { /* remove */
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
        STRUX_TRY(dup_string(&r->con_name[j], name));
        r->m++;
    } else {
        strux_free(&r->con_text[j]);
        strux_free(&r->con_origin[j]);
    }
    STRUX_TRY(dup_string(&r->con_text[j], text));
    return dup_string(&r->con_origin[j], origin);
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
    STRUX_CHECK(strcmp(r->opt.cut, "max") == 0, STRUX_ERR_CONFIG,
                "rates.cut = %s is not implemented yet; use rates.cut = max (E.1)", r->opt.cut);
    STRUX_CHECK(strcmp(r->opt.start, "zero") == 0, STRUX_ERR_CONFIG,
                "rates.start = '%s': only zero (w = 0) is implemented yet", r->opt.start);
    STRUX_CHECK(r->m <= 64, STRUX_ERR_CONFIG, "%d constraints: at most 64 are supported", r->m);
    STRUX_TRY(strux_subset_check(r->defs));
    STRUX_TRY(strux_alloc_array(&r->e, (size_t)r->m + 1, sizeof *r->e));
    STRUX_TRY(strux_rates_parse(r->defs, "objective", r->opt.objective, "rates.objective", 1,
                                &r->e[0]));
    for (int32_t j = 0; j < r->m; j++)
        STRUX_TRY(strux_rates_parse(r->defs, r->con_name[j], r->con_text[j], r->con_origin[j], 0,
                                    &r->e[j + 1]));
    return STRUX_OK;
}

/* ---- binding to the data ---- */

static double score_row(const strux_model *m, const strux_dataset *ds, int64_t i)
{
    double s;
    strux_model_scores(m, &ds->x, i, 0, 1, &s);
    return s;
}

/* z = w·x / 2 of every local training example under the stored weights w̃ = 2w. */
static void scores(strux_rates *r, const strux_model *m)
{
    for (int64_t e = 0; e < r->n_local; e++)
        r->z[e] = 0.5 * score_row(m, r->train, e);
}

static strux_status build_inner(strux_rates *r)
{
    const strux_dataset *t = r->train;
    int64_t n = t->n_local, nnz = t->x.ptr[n];
    strux_csr x = {0};
    int64_t *y_ptr = NULL;
    int32_t *y_idx = NULL;
    strux_status st = strux_csr_alloc(&x, 2 * n, t->dim, 2 * nnz);
    if (st == STRUX_OK) st = strux_alloc_array(&y_ptr, (size_t)(2 * n + 1), sizeof *y_ptr);
    if (st == STRUX_OK) st = strux_alloc_array(&y_idx, (size_t)(2 * n), sizeof *y_idx);
    if (st == STRUX_OK) {
        int64_t k = 0;
        for (int64_t e = 0; e < n; e++)
            for (int side = 0; side < 2; side++) {
                int64_t row = 2 * e + side;
                for (int64_t p = t->x.ptr[e]; p < t->x.ptr[e + 1]; p++, k++) {
                    x.col[k] = t->x.col[p];
                    x.val[k] = t->x.val[p];
                }
                x.ptr[row + 1] = k;
                y_ptr[row + 1] = row + 1;
                y_idx[row] = side; /* row 2e: label 0, hinge max(0, 1 + s); 2e+1: label 1 */
            }
        st = strux_dataset_from_arrays(t->path, &x, &y_ptr, &y_idx, 2 * t->n_global,
                                       2 * t->first, t->dim, 2, 0, &r->inner);
    }
    strux_csr_free(&x);
    strux_free(&y_ptr);
    strux_free(&y_idx);
    STRUX_TRY(st);
    strux_dataset *in = r->inner;
    in->bias_col = t->bias_col;
    if (t->block_ptr) {
        strux_shard sh = {.lo = 2 * t->first,
                          .hi = 2 * (t->first + n),
                          .n_blocks = t->n_blocks,
                          .block_lo = t->block_lo,
                          .block_hi = t->block_hi};
        STRUX_TRY(strux_alloc_array(&sh.block_ptr, (size_t)t->n_blocks + 1, sizeof *sh.block_ptr));
        for (int32_t b = 0; b <= t->n_blocks; b++)
            sh.block_ptr[b] = 2 * t->block_ptr[b];
        strux_dataset_set_shard(in, &sh);
        strux_shard_free(&sh);
    }
    STRUX_TRY(strux_alloc_array(&in->weight, (size_t)(2 * n) + 1, sizeof *in->weight));
    in->weight_sum = (double)r->N; /* W = N: the SDCA objective is 2(Ψ − constants) */
    return STRUX_OK;
}

strux_status strux_rates_bind(strux_rates *r, strux_comm *comm, const strux_dataset *train,
                              double lambda, const strux_dataset **inner)
{
    r->comm = comm;
    r->train = train;
    r->lambda_half = 2 * lambda;
    r->N = train->n_global;
    int64_t n = r->n_local = train->n_local;
    int32_t K = strux_subset_count(r->defs), m = r->m;
    STRUX_CHECK(train->ex_ptr == NULL, STRUX_ERR_CONFIG,
                "%s: rate constraints need the binary task's one row per example", train->path);
    STRUX_TRY(strux_alloc_array(&r->label, (size_t)n + 1, sizeof *r->label));
    for (int64_t e = 0; e < n; e++)
        r->label[e] = train->y_ptr[e + 1] > train->y_ptr[e]
                          ? (train->y_idx[train->y_ptr[e]] == 1 ? 1 : -1)
                          : 0;
    /* the subsets the objective and constraints use, their members and sizes */
    STRUX_TRY(strux_alloc_array(&r->sets, (size_t)K + 1, sizeof *r->sets));
    STRUX_TRY(strux_rates_cell_sets((const strux_rates_expr *const *)r->e, m + 1, r->defs, r->sets,
                                    &r->n_sets));
    STRUX_TRY(strux_alloc_array(&r->member, (size_t)r->n_sets + 1, sizeof *r->member));
    STRUX_TRY(strux_alloc_array(&r->n, (size_t)K, sizeof *r->n));
    strux_subset_input in = {.ds = train, .label = r->label};
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
    STRUX_TRY(strux_comm_agree(comm, st));
    STRUX_TRY(strux_comm_allreduce_sum_i64(comm, r->n, K));
    /* canonical rows (an empty set is named there), then the infeasibility check */
    STRUX_TRY(strux_alloc_array(&r->row, (size_t)m + 1, sizeof *r->row));
    for (int32_t j = 0; j <= m; j++)
        STRUX_TRY(strux_rates_canonical(r->e[j], r->defs, r->n, &r->row[j]));
    int64_t *count = NULL;
    STRUX_TRY(strux_alloc_array(&count, (size_t)1 << r->n_sets, sizeof *count));
    strux_rates_cell_count(r->n_sets, (const uint8_t *const *)r->member, n, count);
    st = strux_comm_allreduce_sum_i64(comm, count, (int64_t)1 << r->n_sets);
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
        if (comm == NULL || strux_comm_rank(comm) == 0)
            strux_log(STRUX_LOG_INFO, "rates: %s %s: canonical %s", j ? "constraint" : "objective",
                      j ? r->con_name[j - 1] : r->opt.objective, text);
        strux_free(&text);
    }
    /* per-example base coefficients Σ_{i ∋ e} α_i/|D_i|, Σ β_i/|D_i| (§3.7) */
    STRUX_TRY(strux_alloc_array(&r->Ab, (size_t)(m + 1) * (size_t)n + 1, sizeof *r->Ab));
    STRUX_TRY(strux_alloc_array(&r->Bb, (size_t)(m + 1) * (size_t)n + 1, sizeof *r->Bb));
    for (int32_t j = 0; j <= m; j++) {
        const strux_rates_row *row = &r->row[j];
        for (int32_t t = 0; t < row->n; t++) {
            int32_t b = 0;
            while (r->sets[b] != row->set[t])
                b++;
            double a = row->alpha[t] / (double)r->n[row->set[t]];
            double c = row->beta[t] / (double)r->n[row->set[t]];
            for (int64_t e = 0; e < n; e++)
                if (r->member[b][e]) {
                    r->Ab[(size_t)j * n + e] += a;
                    r->Bb[(size_t)j * n + e] += c;
                }
        }
    }
    STRUX_TRY(strux_alloc_array(&r->pat, (size_t)n + 1, sizeof *r->pat));
    STRUX_TRY(strux_alloc_array(&r->gam, (size_t)m + 1, sizeof *r->gam));
    STRUX_TRY(strux_alloc_array(&r->z, (size_t)n + 1, sizeof *r->z));
    STRUX_TRY(strux_alloc_array(&r->wts, (size_t)(2 * n) + 1, sizeof *r->wts));
    STRUX_TRY(strux_alloc_array(&r->xx, (size_t)n + 1, sizeof *r->xx));
    for (int64_t e = 0; e < n; e++)
        for (int64_t p = train->x.ptr[e]; p < train->x.ptr[e + 1]; p++)
            r->xx[e] += train->x.val[p] * train->x.val[p];
    STRUX_TRY(strux_alloc_array(&r->v, (size_t)m + 1, sizeof *r->v));
    STRUX_TRY(strux_alloc_array(&r->ramp, (size_t)m + 1, sizeof *r->ramp));
    STRUX_TRY(strux_alloc_array(&r->train_val, (size_t)m + 1, sizeof *r->train_val));
    for (int32_t j = 0; j < m; j++)
        r->ramp[j] = r->train_val[j] = NAN;
    r->mm_objective = NAN;
    STRUX_TRY(build_inner(r));
    /* the first surrogate's weights (w = 0: both hinges, v = 0), so the driver's bound on J(0)
     * and any certificate before the first search are those of a real problem */
    memset(r->pat, 3, (size_t)n);
    for (int64_t e = 0; e < n; e++) {
        r->inner->weight[2 * e] = (double)r->N * r->Ab[e];
        r->inner->weight[2 * e + 1] = (double)r->N * r->Bb[e];
    }
    *inner = r->inner;
    return STRUX_OK;
}

/* ---- the record ---- */

static const char *const mm_columns[] = {"mm_step", "mm_objective", "mm_switched", "cuts",
                                         "inner_epochs", "lp_s", "step_s", "mm_comm_s"};
enum { N_MM_COLS = 8, N_PER_CON = 3 };

static strux_status rates_metrics(void *ctx, strux_driver *d, double *values)
{
    (void)d;
    strux_rates *r = ctx;
    values[0] = (double)r->mm_step;
    values[1] = r->mm_objective;
    values[2] = (double)r->switched;
    values[3] = (double)r->total_cuts;
    values[4] = (double)r->inner_epochs;
    values[5] = r->lp_s;
    values[6] = r->step_s;
    values[7] = r->comm_s;
    for (int32_t j = 0; j < r->m; j++) {
        values[N_MM_COLS + N_PER_CON * j] = r->ramp[j];
        values[N_MM_COLS + N_PER_CON * j + 1] = r->train_val[j];
        values[N_MM_COLS + N_PER_CON * j + 2] = r->v[j];
    }
    return STRUX_OK;
}

strux_status strux_rates_hook(strux_rates *r, strux_driver_hook *h)
{
    int32_t n_cols = N_MM_COLS + N_PER_CON * r->m;
    STRUX_TRY(strux_alloc_array(&r->columns, (size_t)n_cols + 1, sizeof *r->columns));
    static const char *const suffix[N_PER_CON] = {"ramp", "train", "v"};
    for (int32_t c = 0; c < n_cols; c++) {
        char name[STRUX_OPT_STR];
        if (c < N_MM_COLS)
            snprintf(name, sizeof name, "%s", mm_columns[c]);
        else
            snprintf(name, sizeof name, "%s.%s", r->con_name[(c - N_MM_COLS) / N_PER_CON],
                     suffix[(c - N_MM_COLS) % N_PER_CON]);
        STRUX_TRY(dup_string(&r->columns[c], name));
    }
    *h = (strux_driver_hook){.name = "rates",
                             .ctx = r,
                             .columns = (const char *const *)r->columns,
                             .metrics = rates_metrics};
    return STRUX_OK;
}

/* ---- rates at a model ---- */

static double ramp(double z)
{
    return z <= -0.5 ? 0.0 : z >= 0.5 ? 1.0 : 0.5 + z;
}

/* Ramp and indicator positive rates of every used subset at the scores r->z (sp_ramp, sp_ind:
 * strux_subset_count entries, NaN where unused). */
static strux_status rates_at(strux_rates *r, double *sp_ramp, double *sp_ind)
{
    int32_t K = strux_subset_count(r->defs), S = r->n_sets, n_b = local_blocks(r->train);
    double *sum = NULL, *part = NULL;
    STRUX_TRY(strux_alloc_array(&sum, 2 * (size_t)S + 1, sizeof *sum));
    strux_status st = strux_alloc_array(&part, (size_t)n_b * 2 * (size_t)S + 1, sizeof *part);
    for (int32_t k = 0; st == STRUX_OK && k < n_b; k++) {
        int64_t e0, e1;
        block_examples(r->train, k, &e0, &e1);
        double *p = part + (size_t)k * 2 * (size_t)S;
        for (int32_t b = 0; b < S; b++)
            for (int64_t e = e0; e < e1; e++)
                if (r->member[b][e]) {
                    p[b] += ramp(r->z[e]);
                    p[S + b] += r->z[e] >= 0;
                }
    }
    if (st == STRUX_OK) st = strux_block_sum(r->comm, r->train, part, 2 * S, sum);
    strux_free(&part);
    for (int32_t k = 0; k < K; k++)
        sp_ramp[k] = sp_ind[k] = NAN;
    for (int32_t b = 0; b < S; b++) {
        sp_ramp[r->sets[b]] = sum[b] / (double)r->n[r->sets[b]];
        sp_ind[r->sets[b]] = sum[S + b] / (double)r->n[r->sets[b]];
    }
    strux_free(&sum);
    return st;
}

/* Problem 2 at model w (scores in r->z): objective and each constraint's ramp value − γ and
 * indicator value − γ. */
static strux_status problem2(strux_rates *r, const strux_model *w, double *obj, double *ramp_viol,
                             double *ind_viol)
{
    int32_t K = strux_subset_count(r->defs);
    double *sr = NULL, *si = NULL;
    strux_status st = strux_alloc_array(&sr, (size_t)K, sizeof *sr);
    if (st == STRUX_OK) st = strux_alloc_array(&si, (size_t)K, sizeof *si);
    if (st == STRUX_OK) st = rates_at(r, sr, si);
    if (st == STRUX_OK) {
        *obj = strux_rates_row_value(&r->row[0], sr) + r->row[0].c0 +
               0.125 * r->lambda_half * strux_model_norm2(w); /* (λ/2)||w̃/2||² */
        for (int32_t j = 0; j < r->m; j++) {
            ramp_viol[j] = strux_rates_row_value(&r->row[j + 1], sr) - r->row[j + 1].gamma;
            if (ind_viol) ind_viol[j] = strux_rates_row_value(&r->row[j + 1], si) - r->row[j + 1].gamma;
        }
    }
    strux_free(&sr);
    strux_free(&si);
    return st;
}

/* ---- Alg. 1: the surrogate at the anchor ---- */

/* Pattern of every local example at the anchor scores r->z (§2.1 table: hinge on the positive side
 * when z' ≤ ½, on the negative side when z' ≥ −½), the examples that changed, γ̌ and C_0. */
static strux_status linearise(strux_rates *r, int first)
{
    int32_t m = r->m, S = r->n_sets;
    int64_t *cnt = NULL, changed = 0;
    STRUX_TRY(strux_alloc_array(&cnt, 2 * (size_t)S + 1, sizeof *cnt));
    for (int64_t e = 0; e < r->n_local; e++) {
        uint8_t p = (uint8_t)((r->z[e] <= 0.5) | ((r->z[e] >= -0.5) << 1));
        changed += !first && p != r->pat[e];
        r->pat[e] = p;
        for (int32_t b = 0; b < S; b++)
            if (r->member[b][e]) {
                cnt[b] += r->z[e] > 0.5;
                cnt[S + b] += r->z[e] < -0.5;
            }
    }
    cnt[2 * S] = changed;
    strux_status st = strux_comm_allreduce_sum_i64(r->comm, cnt, 2 * S + 1);
    r->switched = first ? 0 : cnt[2 * S];
    for (int32_t j = 0; st == STRUX_OK && j <= m; j++) {
        const strux_rates_row *row = &r->row[j];
        double c = 0;
        for (int32_t t = 0; t < row->n; t++) {
            int32_t b = 0;
            while (r->sets[b] != row->set[t])
                b++;
            c += (row->alpha[t] * (double)cnt[b] + row->beta[t] * (double)cnt[S + b]) /
                 (double)r->n[row->set[t]];
        }
        if (j == 0)
            r->C0 = row->c0 + c;
        else
            r->gam[j - 1] = row->gamma - c;
    }
    strux_free(&cnt);
    return st;
}

/* ---- the inner solve ---- */

/* w = Σ_i B_i·c_i from the duals, summed over ranks; the local view follows. */
static strux_status rebuild_w(strux_rates *r, strux_solver *s, dual_data *d)
{
    strux_model *w = d->w;
    const strux_dataset *in = r->inner;
    int32_t n_b = local_blocks(in);
    strux_model_buffer mb = strux_model_storage(w);
    int64_t len = mb.n_v + mb.n_extra;
    double *part = NULL, *sum = NULL;
    strux_status st = strux_alloc_array(&part, (size_t)n_b * (size_t)len + 1, sizeof *part);
    if (st == STRUX_OK) st = strux_alloc_array(&sum, (size_t)len + 1, sizeof *sum);
    for (int32_t k = 0; st == STRUX_OK && k < n_b; k++) { /* each block's Σ B_i c_i */
        int64_t i0, i1;
        block_examples(in, k, &i0, &i1);
        strux_model_zero(w);
        for (int64_t i = i0; i < i1; i++)
            strux_task_block_apply(s->task, in, i, d->c + d->off[i], 1.0, w);
        mb = strux_model_storage(w);
        memcpy(part + (size_t)k * (size_t)len, mb.v, (size_t)mb.n_v * sizeof *part);
        if (mb.n_extra)
            memcpy(part + (size_t)k * (size_t)len + mb.n_v, mb.extra,
                   (size_t)mb.n_extra * sizeof *part);
    }
    if (st == STRUX_OK) st = strux_block_sum(r->comm, in, part, len, sum);
    if (st == STRUX_OK) {
        mb = strux_model_storage(w);
        memcpy(mb.v, sum, (size_t)mb.n_v * sizeof *sum);
        if (mb.n_extra) memcpy(mb.extra, sum + mb.n_v, (size_t)mb.n_extra * sizeof *sum);
        strux_model_refresh(w);
    }
    strux_free(&part);
    strux_free(&sum);
    STRUX_TRY(st);
    return strux_model_copy(d->wl, w);
}

double strux_rates_two_hinge_step(double xi, double a, double b, double s, double Q)
{
    double k0 = a - b, nu;
    if (Q > 0) {
        double c1 = xi + (s + 1) / Q, c2 = xi + (s - 1) / Q;
        nu = c1 <= k0 ? c1 : c2 >= k0 ? c2 : k0;
    } else {
        nu = s > 1 ? a : s < -1 ? -b : k0;
    }
    return nu < -b ? -b : nu > a ? a : nu;
}

/* The merged two-hinge step (§3.7) on example e = i/2 of the inner dataset, visited at its row
 * 2e (row 2e+1 is a no-op): both hinges act on the same score, so their duals ξ+ ∈ [0, α̌]
 * (row 2e) and ξ− ∈ [0, β̌] (row 2e+1) enter w only through ξ = ξ+ − ξ−, and for a given ξ the
 * dual is largest at the split ξ+ = min(α̌, ξ + β̌), ξ− = ξ+ − ξ. Over ξ ∈ [−β̌, α̌] the dual is
 * then a concave quadratic plus a piecewise-linear term with one kink at k0 = α̌ − β̌, maximised in
 * closed form: ν = median(c2, k0, c1) clipped to the box, c1,2 = ξ + (s ± 1)/Q with s = w̃·x the
 * stored score and Q = σ′||x||²/(λW) the CoCoA+-scaled curvature. Two separate coordinates on the
 * same x would walk the (ξ+, ξ−) valley in steps of 1/Q, which stalls SDCA once multipliers give
 * many examples two active hinges. Engine units (dual.h): c_2e = −ξ+/(λW), c_2e+1 = ξ−/(λW),
 * b = ξ±/W. */
static strux_status merged_visit(void *ctx, strux_solver *s, dual_data *d, int64_t i)
{
    strux_rates *r = ctx;
    if (i & 1) return STRUX_OK;
    const strux_dataset *ds = s->ds;
    int64_t e = i / 2;
    double a = ds->weight[i], bw = ds->weight[i + 1];
    if (!(a > 0) && !(bw > 0)) return STRUX_OK;
    double lamW = s->opt.lambda * d->n;
    double *cp = d->c + d->off[i], *cn = d->c + d->off[i + 1];
    double xp = -cp[0] * lamW, xn = cn[0] * lamW, xi = xp - xn, nu;
    double sc;
    strux_model_scores(d->wl, &ds->x, i, 0, 1, &sc);
    nu = strux_rates_two_hinge_step(xi, a, bw, sc, r->xx[e] > 0 ? d->sigma * r->xx[e] / lamW : 0);
    double np = fmin(a, nu + bw), nn = np - nu;
    if (nn < 0) nn = 0;
    cp[0] = -np / lamW;
    cn[0] = nn / lamW;
    d->b[i] = np / d->n;
    d->b[i + 1] = nn / d->n;
    double dc = -(nu - xi) / lamW;
    if (dc != 0) strux_dual_move(s, d, i, &dc);
    return STRUX_OK;
}

/* New inner loss weights for multipliers v: row 2e α̌_e(v) = N(A_e^0 + Σ v_j A_e^j), row 2e+1
 * β̌_e(v), A = p_e·Ab, B = q_e·Bb (§3.7). Each hinge's dual α ∈ [0, 1] (coefficient
 * c = −σ·v_r·α/(λW)) is warm-started by clipping its ξ = v_r·α into the new box [0, v'_r]; then w
 * is rebuilt from the duals. */
static strux_status set_weights(strux_rates *r, strux_solver *s, const double *v)
{
    dual_data *d = s->data;
    strux_dataset *in = r->inner;
    int64_t n = r->n_local;
    int32_t m = r->m;
    double N = (double)r->N, lamW = s->opt.lambda * d->n;
    for (int64_t e = 0; e < n; e++) {
        double a = r->Ab[e], b = r->Bb[e];
        for (int32_t j = 0; j < m; j++) {
            a += v[j] * r->Ab[(size_t)(j + 1) * n + e];
            b += v[j] * r->Bb[(size_t)(j + 1) * n + e];
        }
        r->wts[2 * e] = (r->pat[e] & 1) ? N * a : 0.0;
        r->wts[2 * e + 1] = (r->pat[e] & 2) ? N * b : 0.0;
    }
    for (int64_t i = 0; i < 2 * n; i++) {
        double sigma = (i & 1) ? -1.0 : 1.0, old = in->weight[i], nw = r->wts[i];
        double *c = d->c + d->off[i];
        double alpha = old > 0 ? -c[0] * sigma * lamW / old : 0.0;
        alpha = alpha < 0 ? 0 : alpha > 1 ? 1 : alpha;
        double xi = old * alpha;
        double a_new = nw > 0 ? (xi < nw ? xi / nw : 1.0) : 0.0;
        c[0] = -sigma * nw * a_new / lamW;
        d->b[i] = nw * a_new / d->n;
        in->weight[i] = nw;
    }
    strux_dual_problem_changed(s); /* new boxes: SDCA's shrunk coordinates no longer hold */
    strux_dual_set_visit(s, merged_visit, r);
    return rebuild_w(r, s, d);
}

/* Solve the inner SVM to a Ψ-gap ≤ eps (the SDCA gap is twice Ψ's). */
static strux_status inner_solve(strux_rates *r, strux_driver *drv, double eps, double *primal,
                                double *dual)
{
    strux_solver *s = strux_driver_solver(drv);
    strux_certificate c;
    STRUX_TRY(strux_solver_certificate(s, &c));
    int64_t e0 = strux_driver_epoch(drv), budget = r->opt.inner_epochs;
    while (!(c.gap <= 2 * eps) && budget > 0) {
        int converged = 0;
        double rel = 2 * eps / (c.primal > 0 ? c.primal : 1.0);
        int64_t before = strux_driver_epoch(drv);
        STRUX_TRY(strux_driver_solve(drv, rel, budget, &converged));
        budget -= strux_driver_epoch(drv) - before;
        if (strux_driver_epoch(drv) == before) break; /* the run's epoch or time limit */
        c = *strux_driver_last_certificate(drv);
        if (isnan(c.gap)) STRUX_TRY(strux_solver_certificate(s, &c));
    }
    r->inner_epochs += strux_driver_epoch(drv) - e0;
    *primal = c.primal;
    *dual = c.dual;
    return STRUX_OK;
}

/* ---- Alg. 2: the multiplier cutting plane ---- */

static strux_status add_cut(strux_rates *r, double u, double l, const double *g, const double *v,
                            const strux_model *w)
{
    if (r->n_cuts == r->cap_cuts) {
        int32_t cap = r->cap_cuts ? 2 * r->cap_cuts : 16;
        STRUX_TRY(strux_realloc_array(&r->cuts, (size_t)cap, sizeof *r->cuts));
        r->cap_cuts = cap;
    }
    cut *c = &r->cuts[r->n_cuts];
    memset(c, 0, sizeof *c);
    r->n_cuts++;
    c->u = u;
    c->l = l;
    STRUX_TRY(strux_alloc_array(&c->g, (size_t)r->m + 1, sizeof *c->g));
    STRUX_TRY(strux_alloc_array(&c->v, (size_t)r->m + 1, sizeof *c->v));
    if (r->m) {
        memcpy(c->g, g, (size_t)r->m * sizeof *g);
        memcpy(c->v, v, (size_t)r->m * sizeof *v);
    }
    if (w) {
        STRUX_TRY(strux_model_create_like(w, &c->w));
        STRUX_TRY(strux_model_copy(c->w, w));
    }
    return STRUX_OK;
}

/* The LP row of cut s: z − Σ g_j v_j ≤ u − Σ g_j v_sj (columns v_0..v_{m-1}, then z). */
static strux_status lp_add_cut(strux_lp *lp, int32_t m, const cut *c)
{
    int32_t idx[65];
    double val[65], rhs = c->u;
    for (int32_t j = 0; j < m; j++) {
        idx[j] = j;
        val[j] = -c->g[j];
        rhs -= c->g[j] * c->v[j];
    }
    idx[m] = m;
    val[m] = 1;
    int32_t row;
    return strux_lp_add_row(lp, m + 1, idx, val, STRUX_LP_UPPER, 0, rhs, &row);
}

/* What rank 0 decides and broadcasts each iteration. */
typedef struct decision {
    double U;       /* max of the cut model over V */
    int stop;       /* U − L ≤ eps (or the iteration cap) */
    double v[64];   /* the next multipliers (E.1: the LP's maximiser) */
} decision;

/* The cut values at the current inner solution (scores in r->z): G_j = Σ_e A_e^j h+ + B_e^j h−,
 * j = 0..m, allreduced. */
static strux_status cut_sums(strux_rates *r, double *G)
{
    int32_t m = r->m, n_b = local_blocks(r->train);
    int64_t n = r->n_local;
    double *part = NULL;
    STRUX_TRY(strux_alloc_array(&part, (size_t)n_b * (size_t)(m + 1), sizeof *part));
    for (int32_t k = 0; k < n_b; k++) {
        int64_t e0, e1;
        block_examples(r->train, k, &e0, &e1);
        double *p = part + (size_t)k * (size_t)(m + 1);
        for (int64_t e = e0; e < e1; e++) {
            double hp = (r->pat[e] & 1) ? fmax(0.0, 0.5 + r->z[e]) : 0.0;
            double hn = (r->pat[e] & 2) ? fmax(0.0, 0.5 - r->z[e]) : 0.0;
            for (int32_t j = 0; j <= m; j++)
                p[j] += r->Ab[(size_t)j * n + e] * hp + r->Bb[(size_t)j * n + e] * hn;
        }
    }
    strux_status st = strux_block_sum(r->comm, r->train, part, m + 1, G);
    strux_free(&part);
    return st;
}

/* One multiplier search (Alg. 2, E.1) at the current anchor; leaves the returned model in out,
 * the multipliers in r->v and the LP dual weights of the cuts in r->mu. *saturated: some v_j at
 * v_max with its surrogate constraint violated at the returned model. */
static strux_status search(strux_rates *r, strux_driver *drv, double u0, double obj,
                           const double *viol, strux_model *out, int *saturated)
{
    strux_solver *s = strux_driver_solver(drv);
    int32_t m = r->m, rank0 = strux_comm_rank(r->comm) == 0;
    double eps = r->opt.eps, eps_floor = eps / (2 * M_E * (m + 1));
    strux_lp *lp = NULL;
    strux_status st = STRUX_OK;
    free_cuts(r);
    double L = r->C0, *G = NULL, *g = NULL, *x = NULL;
    STRUX_TRY(strux_alloc_array(&G, (size_t)m + 1, sizeof *G));
    STRUX_TRY(strux_alloc_array(&g, (size_t)m + 1, sizeof *g));
    STRUX_TRY(strux_alloc_array(&x, (size_t)m + 2, sizeof *x));
    /* cut 0: flat, no model. The anchor's cut below lies under u0 on all of [0, v_max] (and
     * F(v) ≤ Ψ(w', v)), so cut 0 is raised a hair above u0: still a valid bound, never active,
     * and never given LP dual weight (at a feasible anchor both met at v = 0, and a degenerate
     * LP could weigh the model-less cut, sending the search to the best-bound rule) */
    STRUX_TRY(add_cut(r, u0 + 1e-6 * fmax(1.0, fabs(u0)), r->C0, g, g, NULL));
    /* cut 1: the anchor's own (§3.2, A5): Ψ(w', v) = P2(w') + Σ v_j viol_j, exact there since the
     * surrogate is tight at w' (l = −∞: it certifies nothing). With a feasible anchor (viol ≤ 0)
     * the LP-dual average of the iterates then always exists and meets the surrogate constraints,
     * so the MM iterates stay feasible and the objective never rises even when the search stops
     * after one solve; without it a first cut at a violating multiplier could be returned. */
    STRUX_TRY(add_cut(r, obj, -INFINITY, viol, g, r->anchor));
    if (rank0) {
        st = strux_lp_create(m + 1, &lp);
        for (int32_t j = 0; st == STRUX_OK && j < m; j++)
            st = strux_lp_set_col_bounds(lp, j, STRUX_LP_DOUBLE, 0, r->v_max);
        if (st == STRUX_OK) st = strux_lp_set_col_bounds(lp, m, STRUX_LP_FREE, 0, 0);
        if (st == STRUX_OK) {
            double delta = 1e-9 * fmax(1.0, fabs(u0)) / r->v_max; /* tie-break: smallest Σ v */
            for (int32_t j = 0; j < m; j++)
                x[j] = -delta;
            x[m] = 1;
            strux_lp_set_objective(lp, x, 0);
            st = lp_add_cut(lp, m, &r->cuts[0]);
            if (st == STRUX_OK) st = lp_add_cut(lp, m, &r->cuts[1]);
        }
    }
    STRUX_TRY_GOTO(st, strux_comm_agree(r->comm, st), done);
    for (int64_t t = 1;; t++) {
        decision dec = {0};
        if (rank0) {
            double t0 = strux_time_now(), value;
            strux_lp_result res;
            st = strux_lp_solve(lp, &res, &value);
            if (st == STRUX_OK && res != STRUX_LP_OPTIMAL)
                st = strux_error_set(STRUX_ERR_LP, __FILE__, __LINE__, __func__,
                                     "the multiplier LP is %s",
                                     res == STRUX_LP_INFEASIBLE ? "infeasible" : "unbounded");
            if (st == STRUX_OK) {
                strux_lp_primal(lp, x);
                dec.U = x[m];
                for (int32_t j = 0; j < m; j++) /* t = 1: the model is flat (A17): start at the */
                    dec.v[j] = t == 1 && r->have_v ? fmin(r->v[j], r->v_max) : x[j]; /* last v */
                dec.stop = (t > 1 && dec.U - L <= eps) || t > r->opt.max_cuts;
            }
            r->lp_s += strux_time_now() - t0;
        }
        STRUX_TRY_GOTO(st, strux_comm_agree(r->comm, st), done);
        STRUX_TRY_GOTO(st, strux_comm_bcast(r->comm, &dec, sizeof dec, 0), done);
        if (dec.stop) break;
        double eps_t = fmax((dec.U - L) / 2, eps_floor);
        /* SVMOptimizer at v_t (regularised bias: SDCA directly) */
        STRUX_TRY_GOTO(st, set_weights(r, s, dec.v), done);
        STRUX_TRY_GOTO(st, strux_driver_weights_changed(drv), done);
        double primal = NAN, dual = NAN;
        STRUX_TRY_GOTO(st, inner_solve(r, drv, eps_t, &primal, &dual), done);
        scores(r, s->model);
        STRUX_TRY_GOTO(st, cut_sums(r, G), done);
        double vg = 0, u = G[0] + 0.125 * r->lambda_half * strux_model_norm2(s->model) + r->C0;
        for (int32_t j = 0; j < m; j++) {
            g[j] = G[j + 1] - r->gam[j];
            u += dec.v[j] * g[j];
            vg += dec.v[j] * r->gam[j];
        }
        double l = dual / 2 - vg + r->C0;
        if (l > L) L = l;
        STRUX_TRY_GOTO(st, add_cut(r, u, l, g, dec.v, s->model), done);
        r->total_cuts++;
        if (rank0) STRUX_TRY_GOTO(st, lp_add_cut(lp, m, &r->cuts[r->n_cuts - 1]), done);
        strux_log(STRUX_LOG_DEBUG, "rates: cut %lld v0 %.6g U %.9g L %.9g u %.9g l %.9g (Ψ %.9g)",
                  (long long)t, m ? dec.v[0] : 0.0, dec.U, L, u, l,
                  primal / 2 - vg + r->C0);
    }
    /* the returned model: the LP-dual average of the iterates (A5), or the best lower bound's */
    strux_free(&r->mu);
    STRUX_TRY_GOTO(st, strux_alloc_array(&r->mu, (size_t)r->n_cuts, sizeof *r->mu), done);
    memset(r->mu, 0, (size_t)r->n_cuts * sizeof *r->mu);
    if (rank0) {
        strux_lp_row_duals(lp, r->mu);
        double sum = 0;
        for (int32_t c = 0; c < r->n_cuts; c++)
            sum += r->mu[c] = fabs(r->mu[c]);
        for (int32_t c = 0; c < r->n_cuts; c++)
            r->mu[c] = sum > 0 ? r->mu[c] / sum : 0;
        strux_lp_primal(lp, x);
        for (int32_t j = 0; j < m; j++)
            r->v[j] = x[j];
    }
    STRUX_TRY_GOTO(st, strux_comm_bcast(r->comm, r->mu, (size_t)r->n_cuts * sizeof *r->mu, 0),
                   done);
    if (m) STRUX_TRY_GOTO(st, strux_comm_bcast(r->comm, r->v, (size_t)m * sizeof *r->v, 0), done);
    r->have_v = 1;
    int average = strcmp(r->opt.return_rule, "average") == 0 && r->mu[0] <= 1e-9;
    if (!average) { /* best lower bound (the paper's rule); cut 0 has no model, cut 1 (the
                     * anchor) no bound */
        int32_t best = 1;
        for (int32_t c = 2; c < r->n_cuts; c++)
            if (r->cuts[c].l > r->cuts[best].l) best = c;
        memset(r->mu, 0, (size_t)r->n_cuts * sizeof *r->mu);
        r->mu[best] = 1;
        if (m) memcpy(r->v, r->cuts[best].v, (size_t)m * sizeof *r->v);
    }
    strux_model_zero(out);
    for (int32_t c = 1; c < r->n_cuts; c++)
        if (r->mu[c] > 0) STRUX_TRY_GOTO(st, strux_model_axpy(r->mu[c], r->cuts[c].w, out), done);
    /* saturation (A1): v_j at v_max with the surrogate constraint violated at the returned model */
    scores(r, out);
    STRUX_TRY_GOTO(st, cut_sums(r, G), done);
    *saturated = 0;
    for (int32_t j = 0; j < m; j++)
        if (r->v[j] >= 0.99 * r->v_max && G[j + 1] - r->gam[j] > eps) *saturated = 1;
done:
    strux_lp_destroy(&lp);
    strux_free(&G);
    strux_free(&g);
    strux_free(&x);
    return st;
}

/* ---- Alg. 1 ---- */

static strux_status snapshot(const strux_rates *r, strux_rates_store *s);

strux_status strux_rates_run(strux_rates *r, strux_driver *drv, strux_model *model)
{
    int32_t m = r->m;
    int rank0 = strux_comm_rank(r->comm) == 0;
    double *viol = NULL, *ind = NULL, *ramp_new = NULL, prev = NAN;
    strux_model *ret = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY(strux_model_create_like(model, &r->anchor));
    STRUX_TRY(strux_model_create_like(model, &ret));
    STRUX_TRY_GOTO(st, strux_alloc_array(&viol, (size_t)m + 1, sizeof *viol), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ind, (size_t)m + 1, sizeof *ind), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ramp_new, (size_t)m + 1, sizeof *ramp_new), done);
    r->v_max = r->opt.v_max;
    int doublings = 0, saturated = 0;
    for (r->mm_step = 1; r->mm_step <= r->opt.mm_steps; r->mm_step++) {
        r->step_t0 = strux_time_now();
        double lp0 = r->lp_s, comm0 = strux_comm_seconds(r->comm);
        scores(r, r->anchor);
        STRUX_TRY_GOTO(st, linearise(r, r->mm_step == 1), done);
        if (r->mm_step > 1 && r->switched == 0) {
            if (rank0) strux_log(STRUX_LOG_INFO, "rates: MM stops: no example changed side");
            r->mm_step--;
            break;
        }
        double obj;
        STRUX_TRY_GOTO(st, problem2(r, r->anchor, &obj, viol, NULL), done);
        double u0 = obj;
        for (int32_t j = 0; j < m; j++)
            u0 += r->v_max * fmax(0.0, viol[j]);
        STRUX_TRY_GOTO(st, search(r, drv, u0, obj, viol, ret, &saturated), done);
        while (saturated && doublings < MAX_DOUBLINGS) { /* A1 */
            doublings++;
            r->v_max *= 2;
            if (rank0)
                strux_log(STRUX_LOG_INFO, "rates: a multiplier saturated; v_max doubled to %g",
                          r->v_max);
            u0 = obj;
            for (int32_t j = 0; j < m; j++)
                u0 += r->v_max * fmax(0.0, viol[j]);
            STRUX_TRY_GOTO(st, search(r, drv, u0, obj, viol, ret, &saturated), done);
        }
        /* the step's model; one whose Problem 2 objective is not below the anchor's (inexact
         * inner solves, or a search that proved the anchor optimal to rates.eps and returned it)
         * is not taken: MM ends with the anchor, its /rates snapshot and values */
        double obj_new;
        scores(r, ret);
        STRUX_TRY_GOTO(st, problem2(r, ret, &obj_new, ramp_new, ind), done);
        int rise = r->mm_step > 1 && obj_new >= prev; /* not better: the search kept the anchor */
        r->step_s = strux_time_now() - r->step_t0;
        r->comm_s = strux_comm_seconds(r->comm) - comm0;
        if (rank0) {
            char vs[256] = "";
            for (int32_t j = 0; j < m && strlen(vs) < 200; j++)
                snprintf(vs + strlen(vs), sizeof vs - strlen(vs), " %s: v %.6g ramp %+.3e train %+.9e",
                         r->con_name[j], r->v[j], ramp_new[j], ind[j]);
            strux_log(STRUX_LOG_INFO,
                      "rates: MM step %lld objective %.9g, %lld switched, %lld cuts, %lld inner "
                      "epochs, %.2fs (lp %.3fs, comm %.3fs);%s%s",
                      (long long)r->mm_step, obj_new, (long long)r->switched,
                      (long long)r->total_cuts, (long long)r->inner_epochs, r->step_s,
                      r->lp_s - lp0, r->comm_s, vs,
                      rise ? "; not below the last step's objective: MM stops with that step's "
                             "model"
                           : "");
        }
        if (rise) break;
        STRUX_TRY_GOTO(st, strux_model_copy(r->anchor, ret), done);
        r->mm_objective = obj_new;
        memcpy(r->ramp, ramp_new, (size_t)m * sizeof *r->ramp);
        memcpy(r->train_val, ind, (size_t)m * sizeof *r->train_val);
        strux_rates_store_free(&r->kept);
        STRUX_TRY_GOTO(st, snapshot(r, &r->kept), done);
        if (r->mm_step > 1 && prev - r->mm_objective < r->opt.mm_tol * fabs(prev)) break;
        prev = r->mm_objective;
    }
    if (r->mm_step > r->opt.mm_steps) r->mm_step = r->opt.mm_steps;
    STRUX_TRY_GOTO(st, strux_model_copy(model, r->anchor), done);
    for (int32_t j = 0; j < m; j++)
        if (r->ramp[j] > r->opt.eps) {
            char msg[512];
            snprintf(msg, sizeof msg,
                     "constraint %s (%s) is still violated when training ends: its left side "
                     "exceeds the bound by %.4g (ramp, randomised reading), multiplier %.6g with "
                     "v_max %g",
                     r->con_name[j], r->con_text[j], r->ramp[j], r->v[j], r->v_max);
            if (strcmp(r->opt.on_violation, "keep") == 0) {
                if (rank0) strux_log(STRUX_LOG_WARN, "%s; the model is kept", msg);
            } else {
                st = strux_error_set(STRUX_ERR_NUMERIC, __FILE__, __LINE__, __func__, "%s", msg);
                goto done;
            }
        }
done:
    strux_free(&viol);
    strux_free(&ind);
    strux_free(&ramp_new);
    strux_model_destroy(&ret);
    return st;
}

/* ---- the stored classifiers and the report ---- */

static strux_status snapshot(const strux_rates *r, strux_rates_store *s)
{
    int32_t m = r->m;
    *s = (strux_rates_store){0};
    s->m = m;
    s->v_max = r->v_max;
    s->mm_steps = r->mm_step;
    strux_status st = strux_alloc_array(&s->names, (size_t)m + 1, sizeof *s->names);
    if (st == STRUX_OK) st = strux_alloc_array(&s->texts, (size_t)m + 1, sizeof *s->texts);
    if (st == STRUX_OK && r->n_defs) {
        st = strux_alloc_array(&s->def_names, (size_t)r->n_defs, sizeof *s->def_names);
        if (st == STRUX_OK)
            st = strux_alloc_array(&s->def_texts, (size_t)r->n_defs, sizeof *s->def_texts);
        if (st == STRUX_OK) s->n_defs = r->n_defs;
        for (int32_t k = 0; st == STRUX_OK && k < r->n_defs; k++) {
            st = dup_string(&s->def_names[k], r->def_name[k]);
            if (st == STRUX_OK) st = dup_string(&s->def_texts[k], r->def_text[k]);
        }
    }
    if (st == STRUX_OK) st = strux_alloc_array(&s->canonical, (size_t)m + 2, sizeof *s->canonical);
    if (st == STRUX_OK) st = strux_alloc_array(&s->v, (size_t)m + 1, sizeof *s->v);
    if (st == STRUX_OK) st = strux_alloc_array(&s->train_ramp, (size_t)m + 1, sizeof *s->train_ramp);
    if (st == STRUX_OK)
        st = strux_alloc_array(&s->train_value, (size_t)m + 1, sizeof *s->train_value);
    for (int32_t j = 0; st == STRUX_OK && j <= m; j++) {
        st = strux_rates_print(&r->row[j], r->defs, &s->canonical[j]);
        if (st == STRUX_OK && j < m) {
            st = dup_string(&s->names[j], r->con_name[j]);
            if (st == STRUX_OK) st = dup_string(&s->texts[j], r->con_text[j]);
            s->v[j] = r->v[j];
            s->train_ramp[j] = r->ramp[j];
            s->train_value[j] = r->train_val[j];
        }
    }
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
        for (int32_t row = 0; row < rows; row++)
            strux_model_get_row(r->cuts[c].w, row, s->mix_w + (size_t)k * s->n_w + (size_t)row * dim);
        k++;
    }
    if (st != STRUX_OK) strux_rates_store_free(s);
    return st;
}

/* A growing string. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
    strux_status st;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->st != STRUX_OK) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__, "vsnprintf");
            return;
        }
        if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? 2 * b->cap : 1024;
        while (cap < b->n + (size_t)k + 1)
            cap *= 2;
        b->st = strux_realloc_array(&b->s, cap, 1);
        if (b->st != STRUX_OK) return;
        b->cap = cap;
    }
}

static void sb_num(sbuf *b, const char *key, double x)
{
    if (isfinite(x))
        sb_printf(b, "\"%s\": %.15g", key, x);
    else
        sb_printf(b, "\"%s\": null", key);
}

/* A JSON string literal of s (names and texts are printable ASCII/UTF-8 from the config). */
static void sb_str(sbuf *b, const char *s)
{
    sb_printf(b, "\"");
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            sb_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            sb_printf(b, "\\u%04x", (unsigned char)*s);
        else
            sb_printf(b, "%c", *s);
    sb_printf(b, "\"");
}

static int linear_defined(const strux_rates_linear *f, const int64_t *n)
{
    for (int32_t t = 0; t < f->n_terms; t++) {
        const strux_rates_term *u = &f->terms[t];
        if (n[u->set] <= 0 || (u->num >= 0 && n[u->num] < 0) || (u->den >= 0 && n[u->den] <= 0))
            return 0;
    }
    return 1;
}

/* One constraint's values at positive rates sp (n: sizes, −1 where not evaluable). */
static void constraint_values(const strux_rates_expr *e, const int64_t *n, const double *sp,
                              double *lhs, double *rhs, int *sat, double *ratio)
{
    *lhs = *rhs = *ratio = NAN;
    *sat = -1;
    if (e->ratio != STRUX_RATES_NO_RATIO) {
        int32_t P = e->ratio_pos, M = e->ratio_neg;
        if (n[P] < 0 || n[M] < 0 || n[P] + n[M] <= 0) return;
        double tp = (double)n[P] * (n[P] > 0 ? sp[P] : 0), fp = (double)n[M] * (n[M] > 0 ? sp[M] : 0);
        double fn = (double)n[P] - tp;
        *lhs = e->ratio == STRUX_RATES_PRECISION ? tp / (tp + fp) : 2 * tp / (2 * tp + fn + fp);
        *rhs = e->ratio_bound;
    } else {
        if (!linear_defined(&e->lhs, n) || !linear_defined(&e->rhs, n)) return;
        *lhs = strux_rates_linear_value(&e->lhs, n, sp);
        *rhs = strux_rates_linear_value(&e->rhs, n, sp);
        if (e->lhs.n_terms == 1 && e->rhs.n_terms == 1 && e->lhs.c0 == 0 && e->rhs.c0 == 0) {
            const strux_rates_term *a = &e->lhs.terms[0], *b = &e->rhs.terms[0];
            double ra = a->side > 0 ? sp[a->set] : 1 - sp[a->set];
            double rb = b->side > 0 ? sp[b->set] : 1 - sp[b->set];
            *ratio = ra / rb;
        }
    }
    if (isfinite(*lhs) && isfinite(*rhs)) *sat = e->sense > 0 ? *lhs <= *rhs : *lhs >= *rhs;
}

strux_status strux_rates_report(strux_rates *r, strux_comm *comm, const strux_dataset *ds, int test,
                                const strux_model *det, const strux_rates_store *mix, char **json)
{
    int32_t K = strux_subset_count(r->defs);
    int64_t n = ds->n_local, *cnt = NULL;
    int8_t *label = NULL;
    uint8_t *mem = NULL;
    double *pr = NULL, *rsum = NULL, *sp = NULL, *spr = NULL, *row = NULL;
    int8_t *pos = NULL;
    strux_model *w = NULL;
    sbuf b = {0};
    strux_status st = STRUX_OK;
    *json = NULL;
    STRUX_TRY_GOTO(st, strux_alloc_array(&label, (size_t)n + 1, sizeof *label), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&mem, (size_t)n + 1, sizeof *mem), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&pos, (size_t)n + 1, sizeof *pos), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&pr, (size_t)n + 1, sizeof *pr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&cnt, 3 * (size_t)K, sizeof *cnt), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&rsum, (size_t)K, sizeof *rsum), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&sp, (size_t)K, sizeof *sp), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&spr, (size_t)K, sizeof *spr), done);
    for (int64_t e = 0; e < n; e++)
        label[e] = ds->y_ptr[e + 1] > ds->y_ptr[e] ? (ds->y_idx[ds->y_ptr[e]] == 1 ? 1 : -1) : 0;
    /* deterministic prediction and the randomised classifier's probability per local row */
    for (int64_t e = 0; e < n; e++)
        pos[e] = score_row(det, ds, e) >= 0;
    if (mix && mix->n_mix > 0) {
        int32_t rows = strux_model_n_rows(det), dim = strux_model_dim(det);
        STRUX_TRY_GOTO(st, strux_model_create_like(det, &w), done);
        for (int32_t k = 0; k < mix->n_mix; k++) {
            strux_model_zero(w);
            for (int32_t q = 0; q < rows; q++)
                strux_model_set_row(w, q, mix->mix_w + (size_t)k * mix->n_w + (size_t)q * dim);
            for (int64_t e = 0; e < n; e++)
                pr[e] += mix->mix_mu[k] * ramp(0.5 * score_row(w, ds, e));
        }
    } else {
        for (int64_t e = 0; e < n; e++)
            pr[e] = pos[e];
    }
    strux_subset_input in = {.ds = ds, .label = label, .test = test};
    for (int32_t k = 0; k < K; k++) {
        cnt[k] = -1;
        if (!strux_subset_evaluable(r->defs, k, &in)) continue;
        STRUX_TRY_GOTO(st, strux_subset_eval(r->defs, k, &in, mem), agree);
        cnt[k] = 0;
        for (int64_t e = 0; e < n; e++)
            if (mem[e]) {
                cnt[k]++;
                cnt[K + k] += pos[e];
                rsum[k] += pr[e];
            }
    }
agree:
    STRUX_TRY_GOTO(st, strux_comm_agree(comm, st), done);
    /* a set not evaluable on this file is −1 on every rank: mark it before summing counts */
    for (int32_t k = 0; k < K; k++)
        cnt[2 * K + k] = cnt[k] < 0;
    for (int32_t k = 0; k < K; k++)
        if (cnt[k] < 0) cnt[k] = 0;
    STRUX_TRY_GOTO(st, strux_comm_allreduce_sum_i64(comm, cnt, 3 * K), done);
    STRUX_TRY_GOTO(st, strux_comm_allreduce_sum(comm, rsum, K), done);
    for (int32_t k = 0; k < K; k++) {
        if (cnt[2 * K + k]) cnt[k] = -1;
        sp[k] = cnt[k] > 0 ? (double)cnt[K + k] / (double)cnt[k] : NAN;
        spr[k] = cnt[k] > 0 ? rsum[k] / (double)cnt[k] : NAN;
    }
    sb_printf(&b, "\"datasets\": {");
    int first = 1;
    for (int32_t k = 0; k < K; k++) {
        if (strux_subset_is_anonymous(r->defs, k)) continue;
        sb_printf(&b, "%s", first ? "" : ", ");
        first = 0;
        sb_str(&b, strux_subset_name(r->defs, k));
        if (cnt[k] <= 0) {
            sb_printf(&b, ": null");
            continue;
        }
        sb_printf(&b, ": {\"n\": %lld, ", (long long)cnt[k]);
        sb_num(&b, "positive_rate", sp[k]);
        sb_printf(&b, ", ");
        sb_num(&b, "positive_rate_rand", spr[k]);
        sb_printf(&b, "}");
    }
    sb_printf(&b, "}, \"constraints\": {");
    for (int32_t j = 0; j < r->m; j++) {
        double l[2], h[2], q[2];
        int sat[2];
        constraint_values(r->e[j + 1], cnt, sp, &l[0], &h[0], &sat[0], &q[0]);
        constraint_values(r->e[j + 1], cnt, spr, &l[1], &h[1], &sat[1], &q[1]);
        sb_printf(&b, "%s", j ? ", " : "");
        sb_str(&b, r->con_name[j]);
        if (sat[0] < 0) {
            sb_printf(&b, ": null");
            continue;
        }
        sb_printf(&b, ": {");
        sb_num(&b, "lhs", l[0]);
        sb_printf(&b, ", ");
        sb_num(&b, "rhs", h[0]);
        sb_printf(&b, ", \"satisfied\": %s, ", sat[0] ? "true" : "false");
        sb_num(&b, "ratio", q[0]);
        sb_printf(&b, ", ");
        sb_num(&b, "lhs_rand", l[1]);
        sb_printf(&b, ", ");
        sb_num(&b, "rhs_rand", h[1]);
        sb_printf(&b, ", \"satisfied_rand\": %s, ", sat[1] > 0 ? "true" : "false");
        sb_num(&b, "ratio_rand", q[1]);
        sb_printf(&b, "}");
    }
    sb_printf(&b, "}");
    st = b.st;
done:
    if (st == STRUX_OK)
        *json = b.s;
    else
        strux_free(&b.s);
    strux_model_destroy(&w);
    strux_free(&label);
    strux_free(&mem);
    strux_free(&pos);
    strux_free(&pr);
    strux_free(&cnt);
    strux_free(&rsum);
    strux_free(&sp);
    strux_free(&spr);
    strux_free(&row);
    return st;
}

#define RAND_RULE_STREAM 0x52414e44ULL /* "RAND": the randomised classifier's draws */

strux_status strux_rates_predict_randomised(strux_comm *comm, const strux_dataset *ds,
                                            const strux_model *like, const strux_rates_store *mix,
                                            uint64_t seed, char **text, size_t *len)
{
    int64_t n = ds->n_local;
    double *pr = NULL;
    char *mine = NULL;
    strux_model *w = NULL;
    *text = NULL;
    *len = 0;
    strux_status st = strux_alloc_array(&pr, (size_t)n + 1, sizeof *pr);
    if (st == STRUX_OK) st = strux_model_create_like(like, &w);
    if (st == STRUX_OK) st = strux_alloc_array(&mine, 3 * (size_t)n + 1, 1);
    int32_t rows = strux_model_n_rows(like), dim = strux_model_dim(like);
    for (int32_t k = 0; st == STRUX_OK && k < mix->n_mix; k++) {
        strux_model_zero(w);
        for (int32_t q = 0; q < rows; q++)
            strux_model_set_row(w, q, mix->mix_w + (size_t)k * mix->n_w + (size_t)q * dim);
        for (int64_t e = 0; e < n; e++)
            pr[e] += mix->mix_mu[k] * ramp(0.5 * score_row(w, ds, e));
    }
    size_t at = 0;
    for (int64_t e = 0; st == STRUX_OK && e < n; e++) {
        strux_rng g;
        strux_rng_init(&g, seed, RAND_RULE_STREAM, (uint64_t)(ds->first + e));
        const char *lab = strux_rng_uniform(&g) < pr[e] ? "+1\n" : "-1\n";
        memcpy(mine + at, lab, 3);
        at += 3;
    }
    strux_model_destroy(&w);
    strux_free(&pr);
    st = strux_comm_agree(comm, st);
    void *all = NULL;
    if (st == STRUX_OK) st = strux_comm_gather_bytes(comm, mine, at, 0, &all, len);
    strux_free(&mine);
    *text = all;
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
