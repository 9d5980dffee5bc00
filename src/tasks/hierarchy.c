/* tasks/hierarchy.c - hierarchical classification on a label tree or DAG (hierarchical.md §1-§6):
 * the models flat, hsvm, nhsvm and ssvm of the spec's §2 table as one scaled-feature hierarchical
 * SVM. A label is a node set closed upward (single-label: Ā(l) of one leaf; multi-label: Ā(L) of
 * a non-empty leaf set), held as one 0/1 part per node (y->y[n]); a fractional LP answer of the
 * multi-label DAG oracle in training also carries z in y->mu (A18).
 * The weights have one row per node; node n scores s_n = c_n·W_n·x with c_n = √α_n while
 * training (α: 1 on leaves for flat, 1 everywhere for hsvm, the structural programmes of §3 for
 * nhsvm, learned for ssvm), so φ(x, y) = ∧̃(y) ⊗ x and the solvers' (λ/2)‖W‖² is the spec's
 * regulariser. strux_task_export turns the rows into U_n = √α_n·W_n, the model file's rows, and
 * from then on c ≡ 1 (a model read from a file is scored the same way).
 * Potentials (layout): s[n] = W_n·x for n < M (the block layout B_i^T·w: coefficient n is node
 * n's row), then s[M + n] = c_n·s[n], the node scores.
 * Losses: zero_one 1{l ≠ l_i} (single-label), node_hamming = tree |y Δ y_i|, leaf_hamming on the
 * leaves of the closures, normalized Δ̃ = sqrt(Σ_{n ∈ y Δ y_i} α_n) (6.9, single-label); with
 * task.margin = normalized the margin is divided by Δ̃ instead (6.13, hier_loss.c). The
 * direction oracle hands r_n = a·s_n and the loss's per-node terms to the oracles of
 * hier_infer.c (single-label leaf argmax, multi-label tree DP, multi-label DAG LP/ILP).
 * The hierarchy comes from the caller (strux_task_hierarchy_use_hierarchy: strux train reads
 * and validates the file on rank 0 and broadcasts it) or, without one, from task.hierarchy read
 * here; what depends on the whole training file (single or multi-label, the internal nodes where
 * paths end) is agreed through strux_task_sync_*.
 * This file: set-up (the hierarchy, the training facts, α, check and sync), the ops table and the
 * white-box access of hierarchy.h; the other concerns are in hier_loss.c, hier_metrics.c and
 * hier_model.c (hier_task.h lists them). Knows nothing of MPI, searches or solvers. */
#include "hier_task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- set-up ---- */

static void free_built(hier_data *d)
{
    strux_hier_infer_destroy(&d->inf);
    strux_hierarchy_destroy(&d->h);
    strux_free(&d->alpha);
    strux_free(&d->mult);
    strux_free(&d->mark);
    strux_free(&d->set);
    strux_free(&d->set2);
    strux_free(&d->r);
    strux_free(&d->aug);
    strux_free(&d->z);
    strux_free(&d->tmp);
    strux_free(&d->bleaf);
    strux_free(&d->S);
}

static void hier_destroy(strux_task *t)
{
    hier_data *d = t->data;
    if (!d) return;
    free_built(d);
    strux_hier_stored_free(&d->stored);
    strux_blob_free(&d->given);
    strux_free(&d->ends);
    strux_free(&d->ids);
    strux_free(&t->data);
}

const char *strux_hier_task_model_name(hier_model m)
{
    static const char *const names[] = {"flat", "hsvm", "nhsvm", "ssvm"};
    return names[m];
}

static strux_status read_hierarchy(hier_data *d)
{
    STRUX_CHECK(d->opt.hierarchy[0] || d->given.n > 0, STRUX_ERR_CONFIG,
                "task.hierarchy is not set: task.type = hierarchy needs the label hierarchy file "
                "(`parent child` lines)");
    if (d->given.n >
        0) { /* a fresh copy each time: strux_hier_task_finalise adds stop leaves to d->h */
        d->given.pos = 0;
        STRUX_TRY(strux_hierarchy_unpack(&d->given, &d->h));
    } else {
        STRUX_TRY(strux_hierarchy_read(d->opt.hierarchy, NULL, &d->h));
    }
    d->m_file = d->h->n_nodes;
    if (!d->h->is_tree && d->model != H_FLAT && d->model != H_HSVM)
        STRUX_CHECK(d->opt.rho == 2, STRUX_ERR_CONFIG,
                    "task.rho = %g: on a DAG (%s) only rho = 2 is solved (hierarchical.md §3.3)",
                    d->opt.rho, d->opt.hierarchy);
    return STRUX_OK;
}

strux_status strux_hier_task_ensure_ids(hier_data *d, int64_t n)
{
    if (n <= d->ids_cap) return STRUX_OK;
    int64_t cap = n < 64 ? 64 : 2 * n;
    strux_free(&d->ids);
    STRUX_TRY(strux_alloc_array(&d->ids, (size_t)cap, sizeof *d->ids));
    d->ids_cap = cap;
    return STRUX_OK;
}

/* The upward closure of row i of ds (ascending node indices) into set, its size to *n. */
strux_status strux_hier_task_closure(hier_data *d, const strux_dataset *ds, int64_t i, int32_t *set,
                                     int32_t *n)
{
    int64_t r = ds->ex_ptr ? ds->ex_ptr[i] : i;
    int64_t k0 = ds->y_ptr[r], k1 = ds->y_ptr[r + 1];
    STRUX_CHECK(k1 > k0, STRUX_ERR_INPUT,
                "%s: example %lld has no label: the hierarchy task needs at least one node",
                ds->path, (long long)(ds->first + i + 1));
    STRUX_TRY(strux_hier_task_ensure_ids(d, k1 - k0));
    for (int64_t k = k0; k < k1; k++)
        d->ids[k - k0] = ds->y_idx[k];
    return strux_hierarchy_closure(d->h, ds->path, ds->first + i + 1, k1 - k0, d->ids, d->mark, set,
                                   n);
}

/* SSVM on a DAG (the convex extension of §4.3) starts from the structural α of the DAG (1 ≤
 * Σ_{Ā(l)} α ≤ T) divided by its largest path sum, into SSVM's constraint Σ ≤ 1, then lifted to
 * task.alpha_floor on every node but a zeroed root: the DAG programme leaves some α_n = 0, and a
 * node at 0 never learns (solvers/alpha.c: its U_n stays 0). */
static void ssvm_dag_start(hier_data *d)
{
    const strux_hierarchy *h = d->h;
    double fullest = 0;
    for (int32_t l = 0; l < h->n_leaves; l++) {
        double sum = 0;
        for (int64_t q = h->anc_ptr[l]; q < h->anc_ptr[l + 1]; q++)
            sum += d->alpha[h->anc_idx[q]];
        fullest = fmax(fullest, sum);
    }
    for (int32_t n = 0; n < h->n_nodes; n++) {
        if (fullest > 1) d->alpha[n] /= fullest;
        if (d->alpha[n] > 0 || n > 0) d->alpha[n] = fmax(d->alpha[n], d->opt.alpha_floor);
    }
}

/* The α of the model (§2 table, §3) and c = √α. */
static strux_status set_alpha(hier_data *d)
{
    const strux_hierarchy *h = d->h;
    int32_t M = h->n_nodes;
    if (d->model == H_FLAT || d->model == H_HSVM) {
        for (int32_t n = 0; n < M; n++)
            d->alpha[n] = d->model == H_HSVM || strux_hier_is_leaf(h, n) ? 1.0 : 0.0;
    } else {
        strux_alpha_options ao = {.program = STRUX_ALPHA_RHO,
                                  .rho = d->opt.rho,
                                  .dag_t = d->opt.dag_t,
                                  .root = STRUX_ALPHA_ROOT_AUTO};
        if (strcmp(d->opt.root_alpha, "free") == 0) ao.root = STRUX_ALPHA_ROOT_FREE;
        if (strcmp(d->opt.root_alpha, "zero") == 0) ao.root = STRUX_ALPHA_ROOT_ZERO;
        if (d->model == H_NHSVM && strcmp(d->opt.alpha, "maxmin") == 0)
            ao.program = STRUX_ALPHA_MAXMIN;
        if (d->model == H_NHSVM && strcmp(d->opt.alpha, "rho_directional") == 0)
            ao.program = STRUX_ALPHA_RHO_DIRECTIONAL;
        if (d->model == H_SSVM) ao.rho = 2; /* §4.2: SSVM starts at the structural ρ = 2 α */
        STRUX_TRY(strux_alpha_structural(h, &ao, d->alpha));
        if (d->model == H_SSVM && !h->is_tree) ssvm_dag_start(d);
    }
    for (int32_t n = 0; n < M; n++) {
        if (d->alpha[n] < 0) d->alpha[n] = 0; /* the QP's rounding: −1e-17 is 0 */
        d->mult[n] = d->exported ? 1.0 : sqrt(d->alpha[n]);
    }
    return STRUX_OK;
}

/* Everything that follows from the training facts: the label space, stop leaves, the loss, α,
 * the oracle workspace and the scratch. */
strux_status strux_hier_task_finalise(hier_data *d, int multi, const unsigned char *ends)
{
    if (strcmp(d->opt.labels, "single") == 0) multi = 0;
    if (strcmp(d->opt.labels, "multi") == 0) multi = 1;
    d->multi = multi;
    if (d->stop) {
        int32_t n_end = 0;
        for (int32_t n = 0; n < d->m_file; n++)
            if (ends[n]) d->set[n_end++] = n;
        if (n_end > 0) {
            STRUX_TRY(strux_hierarchy_add_stop_leaves(d->h, n_end, d->set));
            strux_log(STRUX_LOG_INFO,
                      "hierarchy %s: %d stop leaves under nodes where training "
                      "paths end (task.partial_paths = stop)",
                      d->opt.hierarchy, n_end);
        }
    }
    strux_hierarchy *h = d->h;
    int32_t M = h->n_nodes, L = h->n_leaves;
    d->M = M;
    hier_loss_kind loss = L_AUTO;
    static const char *const loss_names[] = {"auto",       "zero_one",     "node_hamming",
                                             "normalized", "leaf_hamming", "tree"};
    for (int k = 0; k < 6; k++)
        if (strcmp(d->opt.loss, loss_names[k]) == 0) loss = (hier_loss_kind)k;
    if (loss == L_AUTO) {
        if (d->model == H_HSVM)
            loss = L_NODE;
        else if (multi)
            loss = L_LEAF;
        else
            loss = d->model == H_NHSVM ? L_NORMALIZED : L_ZERO_ONE;
    }
    STRUX_CHECK(!d->margin_norm || !multi, STRUX_ERR_CONFIG,
                "task.margin = normalized (6.13) needs single-label data (§2.3.4: its loss does "
                "not decompose over nodes), but the training data of %s is multi-label (an "
                "example has two most specific nodes)",
                d->opt.hierarchy);
    if (d->margin_norm) loss = L_NORMALIZED; /* Δ̃ divides the margin (6.13) */
    STRUX_CHECK(!multi || (loss != L_ZERO_ONE && loss != L_NORMALIZED), STRUX_ERR_CONFIG,
                "task.loss = %s does not decompose over nodes: multi-label hierarchies take "
                "node_hamming, leaf_hamming or tree",
                loss_names[loss]);
    d->loss = loss;
    STRUX_TRY(strux_alloc_array(&d->alpha, (size_t)M, sizeof *d->alpha));
    STRUX_TRY(strux_alloc_array(&d->mult, (size_t)M, sizeof *d->mult));
    STRUX_TRY(strux_alloc_array(&d->r, (size_t)M, sizeof *d->r));
    STRUX_TRY(strux_alloc_array(&d->aug, (size_t)M, sizeof *d->aug));
    STRUX_TRY(strux_alloc_array(&d->z, (size_t)M, sizeof *d->z));
    STRUX_TRY(strux_alloc_array(&d->tmp, (size_t)M, sizeof *d->tmp));
    STRUX_TRY(strux_alloc_array(&d->bleaf, (size_t)L, sizeof *d->bleaf));
    STRUX_TRY(strux_alloc_array(&d->S, (size_t)L, sizeof *d->S));
    /* the scratch sized by the file's nodes grows to M */
    strux_free(&d->mark);
    strux_free(&d->set);
    strux_free(&d->set2);
    STRUX_TRY(strux_alloc_array(&d->mark, (size_t)M, 1));
    STRUX_TRY(strux_alloc_array(&d->set, (size_t)M, sizeof *d->set));
    STRUX_TRY(strux_alloc_array(&d->set2, (size_t)M, sizeof *d->set2));
    STRUX_TRY(set_alpha(d));
    STRUX_TRY(strux_hier_infer_create(h, multi && !h->is_tree, &d->inf));
    strux_hier_infer_set_fresh_start(d->inf, d->fresh);
    strux_hier_infer_set_max_nodes(d->inf, d->opt.lp_max_nodes);
    char sum[256];
    strux_hierarchy_summary(h, sum, sizeof sum);
    strux_log(STRUX_LOG_INFO, "hierarchy %s: %s; model %s, %s-label, loss %s", d->opt.hierarchy,
              sum, strux_hier_task_model_name(d->model), multi ? "multi" : "single",
              loss_names[loss]);
    return STRUX_OK;
}

/* Check the labels of every local example; on the training data also collect the facts. */
static strux_status scan(hier_data *d, const strux_dataset *ds, int training)
{
    const strux_hierarchy *h = d->h;
    for (int64_t i = 0; i < ds->n_local; i++) {
        int32_t n, n_ms;
        STRUX_TRY(strux_hier_task_closure(d, ds, i, d->set, &n));
        strux_hierarchy_most_specific(h, n, d->set, d->mark, d->set2, &n_ms);
        if (!training) continue;
        STRUX_CHECK(n_ms <= 1 || strcmp(d->opt.labels, "single") != 0, STRUX_ERR_INPUT,
                    "%s: example %lld has %d most specific nodes (%lld and %lld) under task.labels "
                    "= single",
                    ds->path, (long long)(ds->first + i + 1), n_ms,
                    (long long)strux_hierarchy_print_id(h, d->set2[0]),
                    (long long)strux_hierarchy_print_id(h, d->set2[1]));
        if (n_ms > 1) d->local_multi = 1;
        for (int32_t k = 0; k < n_ms; k++) {
            int32_t v = d->set2[k];
            if (strux_hier_is_leaf(h, v) || h->stop_leaf[v] >= 0) continue;
            STRUX_CHECK(d->stop, STRUX_ERR_INPUT,
                        "%s: example %lld: the path to node %lld ends at an internal node "
                        "(task.partial_paths = error)",
                        ds->path, (long long)(ds->first + i + 1),
                        (long long)strux_hierarchy_print_id(h, v));
            d->ends[v] = 1;
        }
    }
    return STRUX_OK;
}

strux_status strux_hier_task_alloc_scan(hier_data *d)
{
    int32_t M = d->h->n_nodes;
    STRUX_TRY(strux_alloc_array(&d->ends, (size_t)M, 1));
    STRUX_TRY(strux_alloc_array(&d->mark, (size_t)M, 1));
    STRUX_TRY(strux_alloc_array(&d->set, (size_t)M, sizeof *d->set));
    return strux_alloc_array(&d->set2, (size_t)M, sizeof *d->set2);
}

static strux_status hier_check(strux_task *t, const strux_dataset *ds)
{
    hier_data *d = t->data;
    STRUX_CHECK(ds->ex_ptr == NULL, STRUX_ERR_INPUT,
                "%s: holds sequences; the hierarchy task needs one row per example", ds->path);
    if (!d->h && d->stored.n_nodes > 0) {
        STRUX_TRY(strux_hier_task_check_stored(d));
        STRUX_TRY(scan(d, ds, 0));
    } else if (!d->h) {
        STRUX_TRY(read_hierarchy(d));
        STRUX_TRY(strux_hier_task_alloc_scan(d));
        STRUX_TRY(scan(d, ds, 1));
        d->have_facts = 1;
        STRUX_TRY(strux_hier_task_finalise(d, d->local_multi, d->ends));
    } else {
        STRUX_TRY(scan(d, ds, 0));
    }
    t->n_labels = d->M;
    return STRUX_OK;
}

static int64_t hier_sync_size(const strux_task *t)
{
    const hier_data *d = t->data;
    return d->have_facts ? 1 + (int64_t)d->m_file : 0;
}

static strux_status hier_sync_local(const strux_task *t, double *buf)
{
    const hier_data *d = t->data;
    buf[0] = d->local_multi;
    for (int32_t n = 0; n < d->m_file; n++)
        buf[1 + n] = d->ends[n];
    return STRUX_OK;
}

/* The facts of every rank: rebuilt from the file when they differ from this rank's. */
static strux_status hier_sync_apply(strux_task *t, const strux_dataset *ds, const double *buf)
{
    (void)ds;
    hier_data *d = t->data;
    int same = (buf[0] != 0) == (d->local_multi != 0);
    for (int32_t n = 0; n < d->m_file; n++) {
        unsigned char e = buf[1 + n] != 0;
        same = same && e == d->ends[n];
        d->ends[n] = e;
    }
    d->local_multi = buf[0] != 0;
    if (same) return STRUX_OK;
    int exported = d->exported;
    free_built(d);
    d->exported = exported;
    STRUX_TRY(read_hierarchy(d));
    int32_t M = d->h->n_nodes;
    STRUX_TRY(strux_alloc_array(&d->mark, (size_t)M, 1));
    STRUX_TRY(strux_alloc_array(&d->set, (size_t)M, sizeof *d->set));
    STRUX_TRY(strux_alloc_array(&d->set2, (size_t)M, sizeof *d->set2));
    STRUX_TRY(strux_hier_task_finalise(d, d->local_multi, d->ends));
    t->n_labels = d->M;
    return STRUX_OK;
}

static strux_status hier_export(strux_task *t, strux_model *m)
{
    hier_data *d = t->data;
    STRUX_CHECK(d->h, STRUX_ERR_INTERNAL, "task 'hierarchy' exported before check()");
    if (m && !d->exported)
        for (int32_t n = 0; n < d->M; n++)
            strux_model_scale_row(m, n, d->mult[n]);
    for (int32_t n = 0; n < d->M; n++)
        d->mult[n] = 1.0;
    d->exported = 1;
    return STRUX_OK;
}

static strux_status hier_model_shape(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                     int64_t *n_extra)
{
    (void)ds;
    const hier_data *d = t->data;
    STRUX_CHECK(d->h, STRUX_ERR_INTERNAL, "task 'hierarchy' shaped before check()");
    *n_rows = d->M;
    *n_extra = 0;
    return STRUX_OK;
}

static strux_status hier_sizes(const strux_task *t, const strux_dataset *ds, int32_t *max_parts,
                               int64_t *max_pot, int64_t *max_mu)
{
    (void)ds;
    const hier_data *d = t->data;
    STRUX_CHECK(d->h, STRUX_ERR_INTERNAL, "task 'hierarchy' sized before check()");
    *max_parts = d->M;
    *max_pot = 2 * (int64_t)d->M;
    *max_mu = d->multi && !d->h->is_tree ? d->M : 0;
    return STRUX_OK;
}

static const struct strux_task_ops hierarchy_ops = {
    .check = hier_check,
    .model_shape = hier_model_shape,
    .sizes = hier_sizes,
    .potentials = strux_hier_task_potentials,
    .truth = strux_hier_task_truth,
    .oracle = strux_hier_task_oracle,
    .loss = strux_hier_task_loss,
    .size = strux_hier_task_size,
    .score = strux_hier_task_score,
    .predict = strux_hier_task_predict,
    .add_feature = strux_hier_task_add_feature,
    .add_delta = strux_hier_task_add_delta,
    .max_loss = strux_hier_task_max_loss,
    .eval_size = strux_hier_task_eval_size,
    .eval_add = strux_hier_task_eval_add,
    .eval_report = strux_hier_task_eval_report,
    .format_label = strux_hier_task_format_label,
    .label_count = strux_hier_task_label_count,
    .label_at = strux_hier_task_label_at,
    .lp_stats = strux_hier_task_lp_stats,
    .destroy = hier_destroy,
    .sync_size = hier_sync_size,
    .sync_local = hier_sync_local,
    .sync_apply = hier_sync_apply,
    .export_rows = hier_export,
};

int strux_hier_task_is(const strux_task *t)
{
    return t->ops == &hierarchy_ops;
}

strux_status strux_task_create_hierarchy(const strux_task_options *opt, strux_task *t)
{
    STRUX_CHECK(opt->rho > 1, STRUX_ERR_CONFIG,
                "task.rho = %g: program (6.6) needs rho > 1 (use task.alpha = maxmin for the "
                "rho = 1 limit)",
                opt->rho);
    hier_model model = H_NHSVM;
    if (strcmp(opt->model, "flat") == 0) model = H_FLAT;
    if (strcmp(opt->model, "hsvm") == 0) model = H_HSVM;
    if (strcmp(opt->model, "ssvm") == 0) model = H_SSVM;
    int margin_norm = strcmp(opt->margin, "normalized") == 0;
    STRUX_CHECK(!margin_norm || model != H_SSVM, STRUX_ERR_CONFIG,
                "task.margin = normalized is the margin-normalised NHSVM (6.13); task.model = ssvm "
                "learns alpha under the unnormalised loss of (6.17): use task.margin = plain");
    STRUX_CHECK(!margin_norm || strcmp(opt->loss, "auto") == 0 ||
                    strcmp(opt->loss, "normalized") == 0,
                STRUX_ERR_CONFIG,
                "task.loss = %s with task.margin = normalized: (6.13) divides the margin by the "
                "normalised loss and asks a margin of 1, so it takes no other loss (set task.loss "
                "= auto or normalized)",
                opt->loss);
    hier_data *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    d->opt = *opt;
    d->model = model;
    d->margin_norm = margin_norm;
    d->prune = opt->prune;
    d->fresh = strcmp(opt->lp_start, "fresh") == 0;
    d->stop = strcmp(opt->partial_paths, "error") != 0;
    t->data = d;
    t->ops = &hierarchy_ops;
    return STRUX_OK;
}

/* (6.13)'s m(y) is divided by Δ̃(y, y_i), which the score op cannot know: margin rescaling
 * only (one oracle call per example, which never re-scores a label by f). */
unsigned strux_task_hierarchy_needs(const strux_task_options *opt, const char **why)
{
    if (strcmp(opt->margin, "normalized") != 0) return 0;
    *why = "task.margin = normalized: the margin-normalised NHSVM (6.13) is margin rescaling with "
           "m(y) divided by the normalised loss, which the task's score cannot re-evaluate";
    return STRUX_CAP_ONE_CALL;
}

/* ---- white-box access for the SSVM α update and tests (task_impl.h) ---- */

strux_status strux_task_hierarchy_state(const struct strux_task *t, const strux_hierarchy **h,
                                        const double **alpha)
{
    STRUX_CHECK(t->ops == &hierarchy_ops, STRUX_ERR_INTERNAL, "task '%s' is not 'hierarchy'",
                t->type_name);
    const hier_data *d = t->data;
    STRUX_CHECK(d->h, STRUX_ERR_INTERNAL, "task 'hierarchy' used before check()");
    *h = d->h;
    if (alpha) *alpha = d->alpha;
    return STRUX_OK;
}

strux_status strux_task_hierarchy_use_hierarchy(strux_task *t, const strux_hierarchy *h)
{
    STRUX_CHECK(t->ops == &hierarchy_ops, STRUX_ERR_CONFIG,
                "a label hierarchy was given to task '%s'", t->type_name);
    hier_data *d = t->data;
    STRUX_CHECK(!d->h, STRUX_ERR_INTERNAL, "task 'hierarchy': a hierarchy given after check()");
    strux_blob_free(&d->given);
    return strux_hierarchy_pack(h, &d->given);
}

int strux_task_hierarchy_learns_alpha(const strux_task *t)
{
    return t->ops == &hierarchy_ops && ((const hier_data *)t->data)->model == H_SSVM;
}

strux_status strux_task_hierarchy_set_format(strux_task *t, int paths, char *const *names,
                                             int32_t n_names)
{
    STRUX_CHECK(t->ops == &hierarchy_ops, STRUX_ERR_CONFIG,
                "--format paths needs a hierarchy model (task.type = hierarchy), not task %s",
                t->type_name);
    hier_data *d = t->data;
    d->paths = paths;
    d->names = names;
    d->n_names = names ? n_names : 0;
    return STRUX_OK;
}

strux_status strux_task_hierarchy_set_alpha(strux_task *t, const double *alpha)
{
    const strux_hierarchy *h;
    STRUX_TRY(strux_task_hierarchy_state(t, &h, NULL));
    hier_data *d = t->data;
    for (int32_t n = 0; n < d->M; n++) {
        STRUX_CHECK(alpha[n] >= 0 && isfinite(alpha[n]), STRUX_ERR_INTERNAL,
                    "alpha[%d] = %g is not a finite non-negative weight", n, alpha[n]);
        d->alpha[n] = alpha[n];
        d->mult[n] = d->exported ? 1.0 : sqrt(alpha[n]);
    }
    return STRUX_OK;
}
