/* tasks/rta.c - multi-label output scored by a random spanning-tree ensemble (RTA, issue 17).
 * Implements task.h on the inference core of rta_impl.h (specs/rta.md): y ∈ {0,1}^L as for
 * multilabel; n spanning trees of the complete graph on the L labels, drawn at check() from
 * task.tree_seed (every rank draws the same trees); one weight row per (union edge e, labelling u),
 * row 4e + u, so the model has 4|E_u| rows over the features (§1.5) and no free parameters. The
 * score is F(y) = Σ_e c_e·s_e(x, y_e) with s_e(x, u) = w_{4e+u}·x and c_e the multiplicity of e in
 * the trees; φ(x, y) places x in row 4e + u(y_e) with coefficient c_e. Potentials: s[4e + u] =
 * s_e(x, u), which is B_i^T·w of the block layout (S = 1). Loss: the tree-averaged edge loss of
 * §3.1 with s_loss = 1, ℓ = (1/n) Σ_e c_e ℓ_e, at most 2(L − 1).
 * Oracle: the direction query argmax a·m(y) + b·ℓ(y, y_i) + c·|y| is the ensemble argmax (§2.2)
 * with edge scores a·s_e + (b/n)·ℓ_e and node scores c/n on y_k = 1, over the union of the trees'
 * K-best lists. It is exact when certified; otherwise the best candidate found is returned and
 * counted as uncertified (strux_task_rta_certified), except that a label space of at most n·K
 * labels, no more than the lists hold, is enumerated so the answer is exact. Wedge and ban-list
 * queries are refused (no STRUX_CAP_WEDGE). Predict is the same argmax with b = c = 0; eval adds
 * `cert_rate`, the share of predictions certified. The candidates operation (task.h) hands the
 * distinct labels of the lists with their values to the rta solver (src/solvers/rta.c). The trees
 * go out through trees() into the model file (/rta, io/model_rta.c) and come back through
 * set_trees() for predict and eval (no new draw); --resume checks the file's trees against the
 * draw (driver.c). */
#include "rta_impl.h"
#include "task_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct rta_data {
    int32_t n_trees;           /* task.trees */
    int32_t K;                 /* task.kbest */
    uint64_t seed;             /* task.tree_seed */
    strux_rta_sampler sampler; /* task.tree_sampler */
    strux_rta_trees *tr;       /* drawn by check() */
    strux_rta_infer *inf;      /* lists and candidates for tr, depth min(K, 2^L) */
    int32_t words;             /* uint64 words per packed labelling */
    double *edge;              /* 4|E_u| combined edge scores of one query */
    double *ell;               /* 4|E_u| edge losses against the truth */
    double *node;              /* 2L node scores (label-size term) */
    uint64_t *bits;            /* 3·words: packed y, truth, enumeration scratch */
    double *half_deg;          /* L: ½·(Σ_{e∋k} c_e²)^½, the label part of the Gram factor */
    int64_t n_cert, n_calls;   /* certified answers / argmax calls (oracle and predict) */
    int last_cert;             /* was the last predict certified (read by eval_add) */
} rta_data;

static void pack(const strux_label *y, int32_t words, uint64_t *b)
{
    memset(b, 0, (size_t)words * sizeof *b);
    for (int32_t k = 0; k < y->n; k++)
        if (y->y[k]) b[k >> 6] |= UINT64_C(1) << (k & 63);
}

static void unpack(const uint64_t *b, int32_t L, strux_label *y)
{
    y->n = L;
    y->n_mu = 0;
    for (int32_t k = 0; k < L; k++)
        y->y[k] = strux_rta_bit(b, k);
}

/* The trees and everything sized by them. */
static void rta_release(rta_data *d)
{
    strux_rta_infer_destroy(&d->inf);
    strux_rta_trees_destroy(&d->tr);
    strux_free(&d->edge);
    strux_free(&d->ell);
    strux_free(&d->node);
    strux_free(&d->bits);
    strux_free(&d->half_deg);
}

static void rta_destroy(strux_task *t)
{
    rta_data *d = t->data;
    if (!d) return;
    rta_release(d);
    strux_free(&t->data);
}

/* Draws the trees for L labels unless they were set (rta_set_trees), then sizes the scratch. */
static strux_status rta_setup(rta_data *d, int32_t L)
{
    if (!d->tr) STRUX_TRY(strux_rta_trees_sample(L, d->n_trees, d->sampler, d->seed, &d->tr));
    STRUX_TRY(strux_rta_infer_create(d->tr, d->K, &d->inf));
    d->words = strux_rta_words(L);
    size_t n_e = 4 * (size_t)d->tr->n_edges;
    STRUX_TRY(strux_alloc_array(&d->edge, n_e, sizeof *d->edge));
    STRUX_TRY(strux_alloc_array(&d->ell, n_e, sizeof *d->ell));
    STRUX_TRY(strux_alloc_array(&d->node, 2 * (size_t)L, sizeof *d->node));
    STRUX_TRY(strux_alloc_array(&d->bits, 3 * (size_t)d->words, sizeof *d->bits));
    STRUX_TRY(strux_alloc_array(&d->half_deg, (size_t)L, sizeof *d->half_deg));
    const strux_rta_trees *tr = d->tr;
    for (int32_t e = 0; e < tr->n_edges; e++) {
        double c2 = (double)tr->mult[e] * tr->mult[e];
        d->half_deg[tr->ends[2 * e]] += c2;
        d->half_deg[tr->ends[2 * e + 1]] += c2;
    }
    for (int32_t k = 0; k < L; k++)
        d->half_deg[k] = 0.5 * sqrt(d->half_deg[k]);
    return STRUX_OK;
}

/* Draw the trees for L labels and size the scratch; a second dataset (test data) must have the
 * same label count and keeps the trees. */
static strux_status rta_check(strux_task *t, const strux_dataset *ds)
{
    rta_data *d = t->data;
    STRUX_CHECK(ds->ex_ptr == NULL, STRUX_ERR_INPUT,
                "%s: holds sequences; the rta task needs one row per example", ds->path);
    STRUX_CHECK(ds->n_labels >= 2, STRUX_ERR_INPUT,
                "%s: %d label(s): the rta task needs at least 2 labels to span trees", ds->path,
                ds->n_labels);
    STRUX_CHECK(t->n_labels == 0 || t->n_labels == ds->n_labels, STRUX_ERR_INPUT,
                "%s: %d labels where the task's trees span %d", ds->path, ds->n_labels,
                t->n_labels);
    if (d->inf) return STRUX_OK;
    int32_t L = ds->n_labels;
    strux_status st = rta_setup(d, L);
    if (st != STRUX_OK) {
        rta_release(d); /* all or nothing: a later check() starts afresh */
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    t->n_labels = L;
    return STRUX_OK;
}

static strux_status rta_trees(const strux_task *t, strux_tree_set *out)
{
    const rta_data *d = t->data;
    if (!d->tr) return STRUX_OK;
    const strux_rta_trees *tr = d->tr;
    strux_tree_set ts = {.n_trees = tr->n, .n_labels = tr->L, .n_edges = tr->n_edges};
    strux_status st = STRUX_OK;
    size_t per = 2 * (size_t)(tr->L - 1);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ts.trees, (size_t)tr->n * per, sizeof *ts.trees), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ts.edges, 2 * (size_t)tr->n_edges, sizeof *ts.edges),
                   fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ts.mult, (size_t)tr->n_edges, sizeof *ts.mult), fail);
    for (int32_t k = 0; k < tr->n; k++)
        strux_rta_tree_edges(tr, k, ts.trees + (size_t)k * per);
    memcpy(ts.edges, tr->ends, 2 * (size_t)tr->n_edges * sizeof *ts.edges);
    memcpy(ts.mult, tr->mult, (size_t)tr->n_edges * sizeof *ts.mult);
    ts.kbest = d->K;
    ts.tree_seed = (int64_t)d->seed;
    snprintf(ts.sampler, sizeof ts.sampler, "%s",
             d->sampler == STRUX_RTA_SAMPLER_RECURSIVE ? "recursive" : "uniform");
    *out = ts;
    return STRUX_OK;
fail:
    strux_tree_set_free(&ts);
    return st;
}

/* The stored trees replace the draw: rebuilt from their edges, checked against the stored union
 * edges and multiplicities; K from the file. */
static strux_status rta_set_trees(strux_task *t, const strux_tree_set *ts)
{
    rta_data *d = t->data;
    STRUX_CHECK(!d->tr, STRUX_ERR_INTERNAL, "task '%s': trees set after check()", t->type_name);
    STRUX_CHECK(ts->n_labels >= 2, STRUX_ERR_INPUT,
                "the stored trees span %d label(s); the rta task needs at least 2", ts->n_labels);
    STRUX_CHECK(ts->kbest >= 1 && ts->kbest <= STRUX_RTA_MAX_K, STRUX_ERR_INPUT,
                "the stored kbest %lld is outside [1, %d]", (long long)ts->kbest, STRUX_RTA_MAX_K);
    strux_rta_trees *tr = NULL;
    STRUX_TRY(strux_rta_trees_from_edges(ts->n_labels, ts->n_trees, ts->trees, &tr));
    int same = tr->n_edges == ts->n_edges;
    for (int32_t e = 0; same && e < tr->n_edges; e++)
        same = tr->ends[2 * e] == ts->edges[2 * e] && tr->ends[2 * e + 1] == ts->edges[2 * e + 1] &&
               tr->mult[e] == ts->mult[e];
    if (!same) {
        strux_rta_trees_destroy(&tr);
        return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                               "the stored union edges and multiplicities (%d edges) disagree "
                               "with the stored trees",
                               ts->n_edges);
    }
    d->tr = tr;
    d->n_trees = ts->n_trees;
    d->K = (int32_t)ts->kbest;
    d->seed = (uint64_t)ts->tree_seed;
    t->n_labels = ts->n_labels;
    return STRUX_OK;
}

static strux_status rta_model_shape(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                    int64_t *n_extra)
{
    const rta_data *d = t->data;
    (void)ds;
    STRUX_CHECK(d->tr, STRUX_ERR_INTERNAL, "task '%s': model shape asked before check()",
                t->type_name);
    *n_rows = 4 * d->tr->n_edges;
    *n_extra = 0;
    return STRUX_OK;
}

static strux_status rta_sizes(const strux_task *t, const strux_dataset *ds, int32_t *max_parts,
                              int64_t *max_pot, int64_t *max_mu)
{
    const rta_data *d = t->data;
    STRUX_CHECK(d->tr, STRUX_ERR_INTERNAL, "task '%s': sizes asked before check()", t->type_name);
    *max_parts = ds->n_labels > t->n_labels ? ds->n_labels : t->n_labels;
    *max_pot = 4 * (int64_t)d->tr->n_edges;
    *max_mu = 0;
    return STRUX_OK;
}

static strux_status rta_potentials(const strux_task *t, const strux_model *m,
                                   const strux_dataset *ds, int64_t i, strux_pot *pot)
{
    const rta_data *d = t->data;
    int32_t rows = 4 * d->tr->n_edges;
    pot->i = i;
    pot->n_parts = t->n_labels;
    pot->n_states = 2;
    strux_model_scores(m, &ds->x, i, 0, rows, pot->s);
    return STRUX_OK;
}

static double rta_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    rta_data *d = t->data;
    uint64_t *by = d->bits, *bt = d->bits + d->words;
    pack(y, d->words, by);
    pack(truth, d->words, bt);
    return strux_rta_loss(d->tr, by, bt, 1.0);
}

/* Every label wrong: (1/n) Σ_k D_k = 2(L − 1) (§3.1, s_loss = 1). */
static double rta_max_loss(const strux_task *t, const strux_label *truth)
{
    (void)truth;
    return 2.0 * (t->n_labels - 1);
}

static double rta_size(const strux_task *t, const strux_label *y)
{
    (void)t;
    double n = 0;
    for (int32_t k = 0; k < y->n; k++)
        n += y->y[k];
    return n;
}

static double rta_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    rta_data *d = t->data;
    pack(y, d->words, d->bits);
    return strux_rta_score(d->tr, NULL, pot->s, d->bits);
}

/* The best labelling under node and edge by enumeration of all 2^L, into best; ties go to the
 * smaller labelling read as a binary number (the K-best order). Only for 2^L ≤ n·K. */
static void enumerate_best(const rta_data *d, const double *node, const double *edge,
                           uint64_t *best)
{
    int32_t L = d->tr->L;
    uint64_t *y = d->bits + 2 * d->words;
    double F_best = -INFINITY;
    for (int64_t code = 0; code < (INT64_C(1) << L); code++) {
        y[0] = (uint64_t)code;
        double F = strux_rta_score(d->tr, node, edge, y);
        if (F > F_best) {
            F_best = F;
            best[0] = y[0];
        }
    }
}

/* Ensemble argmax under d->edge (and node, or NULL) into y; counts the certificate. */
static strux_status rta_infer(const strux_task *t, const double *node, strux_label *y, int *cert)
{
    rta_data *d = t->data;
    strux_rta_result res;
    STRUX_TRY(strux_rta_argmax(d->inf, node, d->edge, NULL, 1, &res));
    STRUX_CHECK(res.best >= 0, STRUX_ERR_INTERNAL, "task '%s': the K-best lists are empty",
                t->type_name);
    uint64_t *b = d->bits;
    memcpy(b, d->inf->cand_y + (int64_t)res.best * d->words, (size_t)d->words * sizeof *b);
    int32_t L = d->tr->L;
    /* A label space no larger than the lists: enumeration is no dearer than the scan, and exact. */
    if (!res.certified && L < 31 && (INT64_C(1) << L) <= (int64_t)d->n_trees * d->K) {
        enumerate_best(d, node, d->edge, b);
        res.certified = 1;
    }
    d->n_calls++;
    d->n_cert += res.certified;
    *cert = res.certified;
    unpack(b, L, y);
    return STRUX_OK;
}

/* Fill ans from y: m = F(y) − F(y_i) under the potentials, g = ℓ(y, y_i). */
static void rta_answer(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                       const strux_label *y, strux_answer *ans)
{
    ans->found = 1;
    ans->m = rta_score(t, pot, y) - rta_score(t, pot, truth);
    ans->g = rta_loss(t, y, truth);
    ans->size = rta_size(t, y);
}

/* The edge (d->edge) and node (*node, NULL when c = 0) scores of query q for the example of pot:
 * Σ_e c_e·(a·s_e + (b/n)·ℓ_e) + n·Σ_k (c/n)·y_k = a·F + b·ℓ + c·|y|; packs truth into bits[words].
 */
static strux_status query_scores(const strux_task *t, const strux_pot *pot,
                                 const strux_label *truth, const strux_query *q,
                                 const double **node)
{
    rta_data *d = t->data;
    STRUX_CHECK(!q->wedge && q->n_ban == 0, STRUX_ERR_UNSUPPORTED,
                "task '%s' answers direction queries only (no wedge or ban-list queries): choose a "
                "search that does not need them, e.g. search.type = margin",
                t->type_name);
    STRUX_CHECK(d->tr, STRUX_ERR_INTERNAL, "task '%s' queried before check()", t->type_name);
    int64_t n_e = 4 * (int64_t)d->tr->n_edges;
    pack(truth, d->words, d->bits + d->words);
    strux_rta_edge_loss(d->tr, d->bits + d->words, 1.0, d->ell);
    double bn = q->b / d->tr->n;
    for (int64_t k = 0; k < n_e; k++)
        d->edge[k] = q->a * pot->s[k] + bn * d->ell[k];
    *node = NULL;
    if (q->c != 0) {
        for (int32_t k = 0; k < d->tr->L; k++) {
            d->node[2 * k] = 0;
            d->node[2 * k + 1] = q->c / d->tr->n;
        }
        *node = d->node;
    }
    return STRUX_OK;
}

/* The Gram factor of y against the truth t (both packed) into f (L + |E_u| doubles). With spins
 * σ = 2b − 1, [y_e = y′_e] = (1 + σ_iσ′_i)(1 + σ_jσ′_j)/4 on e = (i, j), so coef(φ(y))·coef(φ(y′))
 * = Σ_e c_e²[y_e = y′_e] = g(y)·g(y′) with g(y) = ½·((Σ_e c_e²)^½, (Σ_{e∋k} c_e²)^½·σ_k,
 * c_e·σ_iσ_j) (§1.5: c_e at row 4e + u(y_e)); f(y) = g(y) − g(t), whose constant entry is 0 and
 * left out. */
static void gram_factor(const rta_data *d, const uint64_t *y, const uint64_t *t, double *f)
{
    const strux_rta_trees *tr = d->tr;
    for (int32_t k = 0; k < tr->L; k++)
        f[k] = 2 * d->half_deg[k] * (strux_rta_bit(y, k) - strux_rta_bit(t, k));
    double *fe = f + tr->L;
    for (int32_t e = 0; e < tr->n_edges; e++) {
        int32_t i = tr->ends[2 * e], j = tr->ends[2 * e + 1];
        int sy = strux_rta_bit(y, i) == strux_rta_bit(y, j) ? 1 : -1;
        int st = strux_rta_bit(t, i) == strux_rta_bit(t, j) ? 1 : -1;
        fe[e] = 0.5 * tr->mult[e] * (sy - st);
    }
}

/* The candidates of q (task.h): the distinct labellings of the trees' K-best lists under the
 * query's scores (§2.2; all: no early stop, the Newton update's set of §3.5, with the Gram
 * factors of gram_factor), or, when the answer is not certified and 2^L ≤ n·K, every labelling
 * (certified by enumeration, as the oracle). Value of y: its combined score minus a·F(y_i). */
static strux_status rta_candidates(const strux_task *t, const strux_pot *pot,
                                   const strux_label *truth, const strux_query *q, int all,
                                   int exclude_truth, strux_candidates *out)
{
    rta_data *d = t->data;
    const double *node;
    STRUX_TRY(query_scores(t, pot, truth, q, &node));
    const uint64_t *bt = d->bits + d->words;
    double base = q->a * strux_rta_score(d->tr, NULL, pot->s, bt);
    strux_rta_result res;
    STRUX_TRY(strux_rta_argmax(d->inf, node, d->edge, exclude_truth ? bt : NULL, !all, &res));
    int32_t L = d->tr->L;
    int enumerate = !res.certified && L < 31 && (INT64_C(1) << L) <= (int64_t)d->n_trees * d->K;
    int32_t n = enumerate ? (int32_t)(INT64_C(1) << L) : res.n_cand;
    int32_t dim = all ? L + d->tr->n_edges : 0;
    STRUX_TRY(strux_candidates_reserve(t, out, n, dim));
    out->n = 0;
    out->best = -1;
    out->certified = enumerate ? 1 : res.certified;
    uint64_t *y = d->bits + 2 * d->words;
    for (int32_t k = 0; k < n; k++) {
        double F;
        if (enumerate) {
            y[0] = (uint64_t)k;
            if (exclude_truth && y[0] == bt[0]) continue;
            F = strux_rta_score(d->tr, node, d->edge, y);
        } else {
            memcpy(y, d->inf->cand_y + (int64_t)k * d->words, (size_t)d->words * sizeof *y);
            F = d->inf->cand_F[k];
        }
        int32_t j = out->n++;
        unpack(y, L, &out->y[j]);
        out->value[j] = F - base;
        if (dim) gram_factor(d, y, bt, out->f + (int64_t)j * dim);
        if (out->best < 0 || out->value[j] > out->value[out->best]) out->best = j;
    }
    return STRUX_OK;
}

/* argmax_y a·m(y) + b·ℓ(y, y_i) + c·|y| (file comment): Σ_e c_e·(a·s_e + (b/n)·ℓ_e) = a·F + b·ℓ,
 * and n·Σ_k (c/n)·y_k = c·|y|; F(y_i) is a constant. */
static strux_status rta_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                               const strux_query *q, strux_label *y, strux_answer *ans)
{
    const double *node;
    STRUX_TRY(query_scores(t, pot, truth, q, &node));
    int cert;
    STRUX_TRY(rta_infer(t, node, y, &cert));
    rta_answer(t, pot, truth, y, ans);
    return STRUX_OK;
}

static strux_status rta_predict(const strux_task *t, const strux_pot *pot, strux_label *y)
{
    rta_data *d = t->data;
    STRUX_CHECK(d->tr, STRUX_ERR_INTERNAL, "task '%s' queried before check()", t->type_name);
    memcpy(d->edge, pot->s, 4 * (size_t)d->tr->n_edges * sizeof *d->edge);
    return rta_infer(t, NULL, y, &d->last_cert);
}

static strux_status rta_add_feature(const strux_task *t, const strux_label *y, double scale,
                                    const strux_phi *out)
{
    const rta_data *d = t->data;
    const strux_rta_trees *tr = d->tr;
    for (int32_t e = 0; e < tr->n_edges; e++) {
        int u = 2 * y->y[tr->ends[2 * e]] + y->y[tr->ends[2 * e + 1]];
        strux_phi_row(out, 0, 4 * e + u, scale * tr->mult[e]);
    }
    return STRUX_OK;
}

static strux_status rta_add_delta(const strux_task *t, const strux_label *y,
                                  const strux_label *truth, double scale, const strux_phi *out)
{
    const rta_data *d = t->data;
    const strux_rta_trees *tr = d->tr;
    for (int32_t e = 0; e < tr->n_edges; e++) {
        int32_t i = tr->ends[2 * e], j = tr->ends[2 * e + 1];
        int u = 2 * y->y[i] + y->y[j], ut = 2 * truth->y[i] + truth->y[j];
        if (u == ut) continue;
        strux_phi_row(out, 0, 4 * e + u, scale * tr->mult[e]);
        strux_phi_row(out, 0, 4 * e + ut, -scale * tr->mult[e]);
    }
    return STRUX_OK;
}

/* Multi-label sums, then certified predictions and predictions counted. */
static int64_t rta_eval_size(const strux_task *t)
{
    return strux_mlmetrics_size(t->n_labels) + 2;
}

static strux_status rta_eval_add(const strux_task *t, const strux_label *pred,
                                 const strux_label *truth, double *acc)
{
    const rta_data *d = t->data;
    strux_mlmetrics_add(t->n_labels, pred, truth, acc);
    int64_t o = strux_mlmetrics_size(t->n_labels);
    acc[o] += d->last_cert;
    acc[o + 1] += 1;
    return STRUX_OK;
}

static strux_status rta_eval_report(const strux_task *t, const double *acc, strux_scores *out)
{
    strux_mlmetrics_report(t->n_labels, acc, out);
    int64_t o = strux_mlmetrics_size(t->n_labels);
    strux_scores_add(out, "cert_rate", acc[o + 1] > 0 ? acc[o] / acc[o + 1] : 0.0, 0);
    return STRUX_OK;
}

static const struct strux_task_ops rta_ops = {
    .check = rta_check,
    .model_shape = rta_model_shape,
    .sizes = rta_sizes,
    .potentials = rta_potentials,
    .truth = strux_labelset_truth,
    .oracle = rta_oracle,
    .loss = rta_loss,
    .size = rta_size,
    .score = rta_score,
    .predict = rta_predict,
    .add_feature = rta_add_feature,
    .add_delta = rta_add_delta,
    .max_loss = rta_max_loss,
    .eval_size = rta_eval_size,
    .eval_add = rta_eval_add,
    .eval_report = rta_eval_report,
    .format_label = strux_labelset_format,
    .label_count = strux_labelset_count,
    .label_at = strux_labelset_at,
    .candidates = rta_candidates,
    .certified = strux_task_rta_certified,
    .trees = rta_trees,
    .set_trees = rta_set_trees,
    .destroy = rta_destroy,
};

void strux_task_rta_certified(const strux_task *t, int64_t *certified, int64_t *calls)
{
    const rta_data *d = t->data;
    *certified = d ? d->n_cert : 0;
    *calls = d ? d->n_calls : 0;
}

strux_status strux_task_create_rta(const strux_task_options *opt, strux_task *t)
{
    STRUX_CHECK(opt->trees >= 1 && opt->trees <= STRUX_RTA_MAX_TREES, STRUX_ERR_CONFIG,
                "task.trees = %lld is outside [1, %d]", (long long)opt->trees, STRUX_RTA_MAX_TREES);
    STRUX_CHECK(opt->kbest >= 1 && opt->kbest <= STRUX_RTA_MAX_K, STRUX_ERR_CONFIG,
                "task.kbest = %lld is outside [1, %d]", (long long)opt->kbest, STRUX_RTA_MAX_K);
    STRUX_CHECK(
        strcmp(opt->tree_sampler, "uniform") == 0 || strcmp(opt->tree_sampler, "recursive") == 0,
        STRUX_ERR_CONFIG, "task.tree_sampler = '%s' is not uniform|recursive", opt->tree_sampler);
    rta_data *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    d->n_trees = (int32_t)opt->trees;
    d->K = (int32_t)opt->kbest;
    d->seed = (uint64_t)opt->tree_seed;
    d->sampler = strcmp(opt->tree_sampler, "recursive") == 0 ? STRUX_RTA_SAMPLER_RECURSIVE
                                                             : STRUX_RTA_SAMPLER_UNIFORM;
    t->data = d;
    t->ops = &rta_ops;
    return STRUX_OK;
}
