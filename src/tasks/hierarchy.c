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
 * leaves of the closures, normalized Δ̃ = sqrt(Σ_{n ∈ y Δ y_i} α_n) (6.9, single-label). The
 * direction oracle hands r_n = a·s_n and the loss's per-node terms to the oracles of
 * hier_infer.c (single-label leaf argmax, multi-label tree DP, multi-label DAG LP/ILP).
 * The task reads the hierarchy file on every rank (it is small and the reader is deterministic:
 * every rank builds the same node order); what depends on the whole training file (single or
 * multi-label, the internal nodes where paths end) is agreed through strux_task_sync_*.
 * Knows nothing of MPI, searches or solvers. */
#include "task_impl.h"

#include "hier_impl.h"
#include "strux/hierarchy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { H_FLAT, H_HSVM, H_NHSVM, H_SSVM } hier_model;
typedef enum { L_AUTO, L_ZERO_ONE, L_NODE, L_NORMALIZED, L_LEAF, L_TREE } hier_loss_kind;

typedef struct hier_data {
    strux_task_options opt;     /* a copy: names, α programme, flags */
    hier_model model;
    hier_loss_kind loss;        /* resolved (never L_AUTO after finalise) */
    int multi;                  /* resolved label space */
    int paths;                  /* format_label: most specific nodes as root paths (predict
                                   --format paths), else the closure's ids */
    char *const *names;         /* [n_names] node names by file id (borrowed; NULL: ids) */
    int32_t n_names;
    int prune, fresh, stop;     /* task.prune, task.lp_start = fresh, partial_paths = stop */
    strux_hierarchy *h;         /* the hierarchy, stop leaves included */
    strux_hier_infer *inf;      /* oracle workspace */
    int32_t m_file;             /* nodes before stop leaves (the sync layout) */
    int32_t M;                  /* nodes now */
    double *alpha;              /* [M] node weights α */
    double *mult;               /* [M] c_n: √α_n while training, 1 once exported */
    int exported;
    strux_hier_stored stored;   /* from a model file (n_nodes = 0: read task.hierarchy) */
    /* facts of this rank's training shard (strux_task_sync_*) */
    int have_facts;
    int local_multi;
    unsigned char *ends;        /* [m_file] a training path ends at this internal node */
    /* scratch (no oracle allocates) */
    unsigned char *mark;        /* [M] zero between calls */
    int32_t *set, *set2;        /* [M] */
    int64_t *ids;               /* label ids of one example / printed ids */
    int64_t ids_cap;
    double *r, *aug, *z, *tmp;  /* [M] */
    double *bleaf, *S;          /* [n_leaves] */
} hier_data;

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
    strux_free(&d->ends);
    strux_free(&d->ids);
    strux_free(&t->data);
}

static const char *model_name(hier_model m)
{
    static const char *const names[] = {"flat", "hsvm", "nhsvm", "ssvm"};
    return names[m];
}

static strux_status read_hierarchy(hier_data *d)
{
    STRUX_CHECK(d->opt.hierarchy[0], STRUX_ERR_CONFIG,
                "task.hierarchy is not set: task.type = hierarchy needs the label hierarchy file "
                "(`parent child` lines)");
    STRUX_TRY(strux_hierarchy_read(d->opt.hierarchy, NULL, &d->h));
    d->m_file = d->h->n_nodes;
    STRUX_CHECK(d->model != H_SSVM || d->h->is_tree, STRUX_ERR_CONFIG,
                "task.model = ssvm needs a tree (Algorithm 5, hierarchical.md §4.3), but node "
                "%lld of %s has two or more parents",
                (long long)strux_hierarchy_print_id(d->h, d->h->multi_parent), d->opt.hierarchy);
    if (!d->h->is_tree && d->model != H_FLAT && d->model != H_HSVM)
        STRUX_CHECK(d->opt.rho == 2, STRUX_ERR_CONFIG,
                    "task.rho = %g: on a DAG (%s) only rho = 2 is solved (hierarchical.md §3.3)",
                    d->opt.rho, d->opt.hierarchy);
    return STRUX_OK;
}

static strux_status ensure_ids(hier_data *d, int64_t n)
{
    if (n <= d->ids_cap) return STRUX_OK;
    int64_t cap = n < 64 ? 64 : 2 * n;
    strux_free(&d->ids);
    STRUX_TRY(strux_alloc_array(&d->ids, (size_t)cap, sizeof *d->ids));
    d->ids_cap = cap;
    return STRUX_OK;
}

/* The upward closure of row i of ds (ascending node indices) into set, its size to *n. */
static strux_status example_closure(hier_data *d, const strux_dataset *ds, int64_t i, int32_t *set,
                                    int32_t *n)
{
    int64_t r = ds->ex_ptr ? ds->ex_ptr[i] : i;
    int64_t k0 = ds->y_ptr[r], k1 = ds->y_ptr[r + 1];
    STRUX_CHECK(k1 > k0, STRUX_ERR_INPUT,
                "%s: example %lld has no label: the hierarchy task needs at least one node",
                ds->path, (long long)(ds->first + i + 1));
    STRUX_TRY(ensure_ids(d, k1 - k0));
    for (int64_t k = k0; k < k1; k++)
        d->ids[k - k0] = ds->y_idx[k];
    return strux_hierarchy_closure(d->h, ds->path, ds->first + i + 1, k1 - k0, d->ids, d->mark,
                                   set, n);
}

static int is_leaf(const strux_hierarchy *h, int32_t n)
{
    return h->child_ptr[n + 1] == h->child_ptr[n];
}

/* Nodes that count in metrics and printed labels: not the root, not virtual. */
static int counted(const strux_hierarchy *h, int32_t n)
{
    return n > 0 && h->node_id[n] >= 0;
}

/* The α of the model (§2 table, §3) and c = √α. */
static strux_status set_alpha(hier_data *d)
{
    const strux_hierarchy *h = d->h;
    int32_t M = h->n_nodes;
    if (d->model == H_FLAT || d->model == H_HSVM) {
        for (int32_t n = 0; n < M; n++)
            d->alpha[n] = d->model == H_HSVM || is_leaf(h, n) ? 1.0 : 0.0;
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
    }
    for (int32_t n = 0; n < M; n++) {
        if (d->alpha[n] < 0) d->alpha[n] = 0; /* the QP's rounding: −1e-17 is 0 */
        d->mult[n] = d->exported ? 1.0 : sqrt(d->alpha[n]);
    }
    return STRUX_OK;
}

/* Everything that follows from the training facts: the label space, stop leaves, the loss, α,
 * the oracle workspace and the scratch. */
static strux_status finalise(hier_data *d, int multi, const unsigned char *ends)
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
            strux_log(STRUX_LOG_INFO, "hierarchy %s: %d stop leaves under nodes where training "
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
        if (d->model == H_HSVM) loss = L_NODE;
        else if (multi) loss = L_LEAF;
        else loss = d->model == H_NHSVM ? L_NORMALIZED : L_ZERO_ONE;
    }
    STRUX_CHECK(!multi || (loss != L_ZERO_ONE && loss != L_NORMALIZED), STRUX_ERR_CONFIG,
                "task.loss = %s does not decompose over nodes: multi-label hierarchies take "
                "node_hamming, leaf_hamming or tree",
                loss_names[loss]);
    STRUX_CHECK(strcmp(d->opt.margin, "normalized") != 0 || !multi, STRUX_ERR_CONFIG,
                "task.margin = normalized (6.13) needs single-label data, but the training data "
                "of %s is multi-label (an example has two most specific nodes)",
                d->opt.hierarchy);
    STRUX_CHECK(strcmp(d->opt.margin, "normalized") != 0, STRUX_ERR_UNSUPPORTED,
                "task.margin = normalized (6.13) is not implemented yet; use task.margin = plain");
    STRUX_CHECK(d->model != H_SSVM || !multi || h->is_tree, STRUX_ERR_CONFIG,
                "task.model = ssvm needs a tree");
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
    char sum[256];
    strux_hierarchy_summary(h, sum, sizeof sum);
    strux_log(STRUX_LOG_INFO, "hierarchy %s: %s; model %s, %s-label, loss %s", d->opt.hierarchy,
              sum, model_name(d->model), multi ? "multi" : "single", loss_names[loss]);
    return STRUX_OK;
}

/* Check the labels of every local example; on the training data also collect the facts. */
static strux_status scan(hier_data *d, const strux_dataset *ds, int training)
{
    const strux_hierarchy *h = d->h;
    for (int64_t i = 0; i < ds->n_local; i++) {
        int32_t n, n_ms;
        STRUX_TRY(example_closure(d, ds, i, d->set, &n));
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
            if (is_leaf(h, v) || h->stop_leaf[v] >= 0) continue;
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

static strux_status strux_task_hierarchy_set_alpha_raw(hier_data *d, const double *alpha)
{
    for (int32_t n = 0; n < d->M; n++) {
        d->alpha[n] = alpha[n];
        d->mult[n] = d->exported ? 1.0 : sqrt(alpha[n]);
    }
    return STRUX_OK;
}

/* The hierarchy of a model file: rebuilt from its file-id edges (the same constructor, so the
 * same node order) and its stop leaves, then compared with the stored order; its label space,
 * model and α; the rows are exported ones (c ≡ 1). */
static strux_status build_stored(hier_data *d)
{
    const strux_hier_stored *hs = &d->stored;
    const char *where = "the model's /hierarchy";
    int64_t n_e = 0, *par, *chi;
    STRUX_TRY(strux_alloc_array(&par, (size_t)hs->parent_ptr[hs->n_nodes] + 1, sizeof *par));
    strux_status st = strux_alloc_array(&chi, (size_t)hs->parent_ptr[hs->n_nodes] + 1, sizeof *chi);
    int32_t n_stop = 0;
    for (int32_t k = 0; st == STRUX_OK && k < hs->n_nodes; k++) {
        if (hs->node_id[k] < -1) n_stop++;
        if (hs->node_id[k] < 0) continue;
        for (int64_t q = hs->parent_ptr[k]; q < hs->parent_ptr[k + 1]; q++) {
            int64_t p = hs->node_id[hs->parent_idx[q]];
            if (p < 0) continue; /* the virtual root's edges come back by themselves */
            par[n_e] = p;
            chi[n_e++] = hs->node_id[k];
        }
    }
    if (st == STRUX_OK && n_e == 0)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s has no edge between file nodes", where);
    if (st == STRUX_OK) st = strux_hierarchy_from_edges(where, n_e, par, chi, NULL, NULL, &d->h);
    strux_free(&par);
    strux_free(&chi);
    STRUX_TRY(st);
    d->m_file = d->h->n_nodes;
    if (n_stop > 0) {
        int32_t *under;
        STRUX_TRY(strux_alloc_array(&under, (size_t)n_stop, sizeof *under));
        int32_t j = 0;
        for (int32_t k = 0; k < hs->n_nodes; k++)
            if (hs->node_id[k] < -1) under[j++] = strux_hierarchy_find(d->h, -2 - hs->node_id[k]);
        int ok = 1;
        for (int32_t q = 0; q < n_stop; q++)
            ok = ok && under[q] >= 0;
        st = ok ? strux_hierarchy_add_stop_leaves(d->h, n_stop, under)
                : strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                  "%s has a stop leaf under a node that is not in it", where);
        strux_free(&under);
        STRUX_TRY(st);
    }
    const strux_hierarchy *h = d->h;
    int same = h->n_nodes == hs->n_nodes;
    for (int32_t k = 0; same && k < h->n_nodes; k++) {
        same = h->node_id[k] == hs->node_id[k] &&
               h->parent_ptr[k + 1] - h->parent_ptr[k] == hs->parent_ptr[k + 1] - hs->parent_ptr[k];
        for (int64_t q = 0; same && q < h->parent_ptr[k + 1] - h->parent_ptr[k]; q++)
            same = h->parent_idx[h->parent_ptr[k] + q] == hs->parent_idx[hs->parent_ptr[k] + q];
    }
    STRUX_CHECK(same, STRUX_ERR_INPUT,
                "%s: its edges do not rebuild its node order (%d stored nodes, %d rebuilt): the "
                "file is damaged or from another version",
                where, hs->n_nodes, h->n_nodes);
    return STRUX_OK;
}

static strux_status check_stored(hier_data *d)
{
    STRUX_TRY(build_stored(d));
    int32_t M = d->h->n_nodes;
    STRUX_TRY(strux_alloc_array(&d->ends, (size_t)M, 1));
    STRUX_TRY(strux_alloc_array(&d->mark, (size_t)M, 1));
    STRUX_TRY(strux_alloc_array(&d->set, (size_t)M, sizeof *d->set));
    STRUX_TRY(strux_alloc_array(&d->set2, (size_t)M, sizeof *d->set2));
    d->stop = 0; /* the stop leaves are in already */
    d->exported = 1;
    STRUX_TRY(finalise(d, strcmp(d->stored.label_space, "multi") == 0, d->ends));
    return strux_task_hierarchy_set_alpha_raw(d, d->stored.alpha);
}

static strux_status hier_check(strux_task *t, const strux_dataset *ds)
{
    hier_data *d = t->data;
    STRUX_CHECK(ds->ex_ptr == NULL, STRUX_ERR_INPUT,
                "%s: holds sequences; the hierarchy task needs one row per example", ds->path);
    if (!d->h && d->stored.n_nodes > 0) {
        STRUX_TRY(check_stored(d));
        STRUX_TRY(scan(d, ds, 0));
    } else if (!d->h) {
        STRUX_TRY(read_hierarchy(d));
        int32_t M = d->h->n_nodes;
        STRUX_TRY(strux_alloc_array(&d->ends, (size_t)M, 1));
        STRUX_TRY(strux_alloc_array(&d->mark, (size_t)M, 1));
        STRUX_TRY(strux_alloc_array(&d->set, (size_t)M, sizeof *d->set));
        STRUX_TRY(strux_alloc_array(&d->set2, (size_t)M, sizeof *d->set2));
        STRUX_TRY(scan(d, ds, 1));
        d->have_facts = 1;
        STRUX_TRY(finalise(d, d->local_multi, d->ends));
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
    STRUX_TRY(finalise(d, d->local_multi, d->ends));
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

static strux_status hier_potentials(const strux_task *t, const strux_model *m,
                                    const strux_dataset *ds, int64_t i, strux_pot *pot)
{
    const hier_data *d = t->data;
    int32_t M = d->M;
    pot->i = i;
    pot->n_parts = M;
    pot->n_states = 2;
    strux_model_scores(m, &ds->x, i, 0, M, pot->s);
    for (int32_t n = 0; n < M; n++)
        pot->s[M + n] = d->mult[n] * pot->s[n];
    return STRUX_OK;
}

static strux_status hier_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                               strux_label *y)
{
    hier_data *d = t->data;
    int32_t n;
    STRUX_TRY(example_closure(d, ds, i, d->set, &n));
    y->n = d->M;
    y->n_mu = 0;
    memset(y->y, 0, (size_t)d->M * sizeof *y->y);
    for (int32_t k = 0; k < n; k++)
        y->y[d->set[k]] = 1;
    return STRUX_OK;
}

/* Membership of node n in y: z_n of a fractional answer, else 0/1. */
static double member(const strux_label *y, int32_t n)
{
    return y->n_mu > 0 ? y->mu[n] : (double)y->y[n];
}

static double hier_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    const hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    double e = 0;
    switch (d->loss) {
    case L_ZERO_ONE:
        for (int32_t n = 0; n < d->M; n++)
            if (y->y[n] != truth->y[n]) return 1.0;
        return 0.0;
    case L_NORMALIZED:
        for (int32_t n = 0; n < d->M; n++)
            e += d->alpha[n] * fabs(member(y, n) - truth->y[n]);
        return sqrt(e);
    case L_LEAF:
        for (int32_t k = 0; k < h->n_leaves; k++) {
            int32_t n = h->leaves[k];
            e += fabs(member(y, n) - truth->y[n]);
        }
        return e;
    default: /* node Hamming = the tree distance |y Δ y_i| */
        for (int32_t n = 0; n < d->M; n++)
            e += fabs(member(y, n) - truth->y[n]);
        return e;
    }
}

static double hier_size(const strux_task *t, const strux_label *y)
{
    const hier_data *d = t->data;
    double s = 0;
    for (int32_t n = 0; n < d->M; n++)
        s += member(y, n);
    return s;
}

static double hier_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    const hier_data *d = t->data;
    double f = 0;
    for (int32_t n = 0; n < d->M; n++) {
        double v = member(y, n);
        if (v != 0) f += v * pot->s[d->M + n];
    }
    return f;
}

/* The per-node loss terms ℓ (g(y) = Σ_{n∈y} ℓ_n + const) of a decomposable loss into out, and
 * for the normalised loss Δ̃(l) per leaf into bleaf (returns 1 then). */
static int loss_terms(hier_data *d, const strux_label *truth, double scale, double *out)
{
    const strux_hierarchy *h = d->h;
    int32_t M = d->M;
    switch (d->loss) {
    case L_ZERO_ONE:
        for (int32_t n = 0; n < M; n++)
            out[n] = is_leaf(h, n) && !truth->y[n] ? scale : 0.0;
        return 0;
    case L_LEAF:
        for (int32_t n = 0; n < M; n++)
            out[n] = is_leaf(h, n) ? scale * (1 - 2 * truth->y[n]) : 0.0;
        return 0;
    case L_NORMALIZED: {
        double P = 0;
        for (int32_t n = 0; n < M; n++) {
            d->tmp[n] = d->alpha[n] * (1 - 2 * truth->y[n]);
            if (truth->y[n]) P += d->alpha[n];
            out[n] = 0.0;
        }
        strux_hier_infer_leaf_scores(d->inf, d->tmp, NULL, d->S);
        for (int32_t k = 0; k < h->n_leaves; k++)
            d->bleaf[k] = scale * sqrt(fmax(0.0, d->S[k] + P));
        return 1;
    }
    default:
        for (int32_t n = 0; n < M; n++)
            out[n] = scale * (1 - 2 * truth->y[n]);
        return 0;
    }
}

/* y = Ā(leaf). */
static void leaf_label(const hier_data *d, int32_t leaf, strux_label *y)
{
    const strux_hierarchy *h = d->h;
    y->n = d->M;
    y->n_mu = 0;
    memset(y->y, 0, (size_t)d->M * sizeof *y->y);
    int32_t p = h->leaf_pos[leaf];
    for (int64_t k = h->anc_ptr[p]; k < h->anc_ptr[p + 1]; k++)
        y->y[h->anc_idx[k]] = 1;
}

/* argmax over the label space of Σ_{n∈y} (r_n + aug_n) (+ bleaf per leaf, single-label): the
 * label to y (fractional z to mu in a multi-label DAG without exact), the value to *value. */
static strux_status maximise(hier_data *d, const double *r, const double *aug, int use_b, int exact,
                             strux_label *y, double *value)
{
    const strux_hierarchy *h = d->h;
    int32_t M = d->M;
    if (!d->multi) {
        int32_t leaf;
        strux_hier_infer_leaf(d->inf, r, aug, use_b ? d->bleaf : NULL, &leaf, value);
        leaf_label(d, leaf, y);
        return STRUX_OK;
    }
    if (h->is_tree) {
        STRUX_TRY(strux_hier_infer_tree(d->inf, r, aug, d->z, value));
    } else {
        int flags = (exact ? STRUX_HIER_EXACT : 0) | (d->prune ? STRUX_HIER_PRUNE : 0);
        strux_hier_dag_info info;
        STRUX_TRY(strux_hier_infer_dag(d->inf, r, aug, flags, d->z, value, &info));
    }
    y->n = M;
    int frac = 0;
    for (int32_t n = 0; n < M; n++) {
        y->y[n] = d->z[n] > 0.5;
        if (d->z[n] != 0.0 && d->z[n] != 1.0) frac = 1;
    }
    y->n_mu = 0;
    if (frac && y->mu && y->mu_cap >= M) {
        memcpy(y->mu, d->z, (size_t)M * sizeof *y->mu);
        y->n_mu = M;
    }
    return STRUX_OK;
}

static strux_status hier_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                                const strux_query *q, strux_label *y, strux_answer *ans)
{
    hier_data *d = t->data;
    STRUX_CHECK(!q->wedge && q->n_ban == 0, STRUX_ERR_UNSUPPORTED,
                "task 'hierarchy' answers direction queries only (no wedge or ban list): use the "
                "margin surrogate");
    STRUX_CHECK(q->c == 0, STRUX_ERR_UNSUPPORTED,
                "task 'hierarchy' has no label-size term in its oracle (c = %g)", q->c);
    int32_t M = d->M;
    const double *sc = pot->s + M;
    for (int32_t n = 0; n < M; n++)
        d->r[n] = q->a * sc[n];
    int use_b = loss_terms(d, truth, q->b, d->aug);
    double value;
    STRUX_TRY(maximise(d, d->r, d->aug, use_b, 0, y, &value));
    double m = 0;
    for (int32_t n = 0; n < M; n++)
        m += (member(y, n) - truth->y[n]) * sc[n];
    ans->found = 1;
    ans->m = m;
    ans->g = hier_loss(t, y, truth);
    ans->size = hier_size(t, y);
    return STRUX_OK;
}

static double hier_max_loss(const strux_task *t, const strux_label *truth)
{
    hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    if (d->loss == L_ZERO_ONE) return h->n_leaves > 1 ? 1.0 : 0.0;
    int32_t M = d->M;
    double cst = 0;
    for (int32_t n = 0; n < M; n++) {
        d->r[n] = 0.0;
        if (d->loss == L_LEAF ? is_leaf(h, n) : 1) cst += truth->y[n];
    }
    int use_b = loss_terms(d, truth, 1.0, d->aug);
    if (use_b) {
        double best = 0;
        for (int32_t k = 0; k < h->n_leaves; k++)
            best = fmax(best, d->bleaf[k]);
        return best;
    }
    /* the exact maximiser: a label y of the scratch size (M parts, no mu) */
    strux_label y = {.n = M, .cap = M, .y = d->set, .n_mu = 0, .mu_cap = 0, .mu = NULL};
    double value = 0;
    if (maximise(d, d->r, d->aug, 0, 1, &y, &value) != STRUX_OK) return (double)M;
    return value + cst;
}

static strux_status hier_predict(const strux_task *t, const strux_pot *pot, strux_label *y)
{
    hier_data *d = t->data;
    int32_t M = d->M;
    for (int32_t n = 0; n < M; n++)
        d->aug[n] = 0.0;
    double value;
    STRUX_TRY(maximise(d, pot->s + M, d->aug, 0, 1, y, &value));
    y->n_mu = 0;
    return STRUX_OK;
}

static strux_status hier_add_feature(const strux_task *t, const strux_label *y, double scale,
                                     const strux_phi *out)
{
    const hier_data *d = t->data;
    for (int32_t n = 0; n < d->M; n++) {
        double v = member(y, n);
        if (v != 0 && d->mult[n] != 0) strux_phi_row(out, 0, n, scale * v * d->mult[n]);
    }
    return STRUX_OK;
}

static strux_status hier_add_delta(const strux_task *t, const strux_label *y,
                                   const strux_label *truth, double scale, const strux_phi *out)
{
    const hier_data *d = t->data;
    for (int32_t n = 0; n < d->M; n++) {
        double v = member(y, n) - member(truth, n);
        if (v != 0 && d->mult[n] != 0) strux_phi_row(out, 0, n, scale * v * d->mult[n]);
    }
    return STRUX_OK;
}

/* ---- evaluation ----
 * single-label: [n, exact, tree distance, then tp, fp, fn per leaf];
 * multi-label: [n, jaccard, example F1, subset, tree distance, closure tp, fp, fn, then tp, fp, fn
 * of the most specific sets per node]. Only counted nodes (not the root, not virtual) take part;
 * the most specific nodes are those of the counted closure. */
enum { S_HEAD = 3, M_HEAD = 8 };

static int64_t hier_eval_size(const strux_task *t)
{
    const hier_data *d = t->data;
    return d->multi ? M_HEAD + 3 * (int64_t)d->M : S_HEAD + 3 * (int64_t)d->h->n_leaves;
}

/* Most specific counted members of y: 1 in ms[n]. */
static void most_specific(const strux_hierarchy *h, const strux_label *y, unsigned char *ms)
{
    for (int32_t n = 0; n < h->n_nodes; n++) {
        ms[n] = 0;
        if (!y->y[n] || !counted(h, n)) continue;
        int child = 0;
        for (int64_t k = h->child_ptr[n]; k < h->child_ptr[n + 1]; k++) {
            int32_t c = h->child_idx[k];
            if (y->y[c] && counted(h, c)) child = 1;
        }
        ms[n] = !child;
    }
}

static strux_status hier_eval_add(const strux_task *t, const strux_label *pred,
                                  const strux_label *truth, double *acc)
{
    hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    int32_t M = d->M;
    double dist = 0, tp = 0, fp = 0, fn = 0;
    for (int32_t n = 0; n < M; n++) {
        if (!counted(h, n)) continue;
        int p = pred->y[n] != 0, u = truth->y[n] != 0;
        tp += p && u;
        fp += p && !u;
        fn += !p && u;
    }
    dist = fp + fn;
    acc[0] += 1;
    if (!d->multi) {
        acc[1] += dist == 0;
        acc[2] += dist;
        int32_t lp = -1, lt = -1;
        for (int32_t k = 0; k < h->n_leaves; k++) {
            if (pred->y[h->leaves[k]]) lp = k;
            if (truth->y[h->leaves[k]]) lt = k;
        }
        if (lp >= 0 && lp == lt) acc[S_HEAD + 3 * lp] += 1;
        else {
            if (lp >= 0) acc[S_HEAD + 3 * lp + 1] += 1;
            if (lt >= 0) acc[S_HEAD + 3 * lt + 2] += 1;
        }
        return STRUX_OK;
    }
    unsigned char *mp = d->mark, *mt = (unsigned char *)d->tmp; /* tmp: M doubles ≥ M bytes */
    most_specific(h, pred, mp);
    most_specific(h, truth, mt);
    double i = 0, np = 0, nt = 0;
    for (int32_t n = 0; n < M; n++) {
        np += mp[n];
        nt += mt[n];
        i += mp[n] && mt[n];
        acc[M_HEAD + 3 * n] += mp[n] && mt[n];
        acc[M_HEAD + 3 * n + 1] += mp[n] && !mt[n];
        acc[M_HEAD + 3 * n + 2] += !mp[n] && mt[n];
    }
    for (int32_t n = 0; n < M; n++)
        mp[n] = 0; /* mark is zero between calls */
    double uni = np + nt - i;
    acc[1] += uni > 0 ? i / uni : 1.0;
    acc[2] += np + nt > 0 ? 2 * i / (np + nt) : 1.0;
    acc[3] += dist == 0;
    acc[4] += dist;
    acc[5] += tp;
    acc[6] += fp;
    acc[7] += fn;
    return STRUX_OK;
}

static double f1(double tp, double fp, double fn)
{
    return tp + fp + fn > 0 ? 2 * tp / (2 * tp + fp + fn) : 1.0;
}

/* Mean F1 over the classes that occur in a truth or a prediction (0 when none does). */
static double macro_f1(const double *a, int64_t n_class)
{
    double s = 0;
    int64_t n = 0;
    for (int64_t k = 0; k < n_class; k++)
        if (a[3 * k] + a[3 * k + 1] + a[3 * k + 2] > 0) {
            s += f1(a[3 * k], a[3 * k + 1], a[3 * k + 2]);
            n++;
        }
    return n ? s / (double)n : 0.0;
}

static strux_status hier_eval_report(const strux_task *t, const double *acc, strux_scores *out)
{
    const hier_data *d = t->data;
    double n = acc[0] > 0 ? acc[0] : 1;
    if (!d->multi) {
        strux_scores_add(out, "accuracy", acc[1] / n, 0);
        strux_scores_add(out, "macro_f1", macro_f1(acc + S_HEAD, d->h->n_leaves), 0);
        strux_scores_add(out, "tree_loss", acc[2] / n, 0);
        strux_scores_add(out, "n", acc[0], 1);
        return STRUX_OK;
    }
    double tp = 0, fp = 0, fn = 0;
    for (int32_t k = 0; k < d->M; k++) {
        tp += acc[M_HEAD + 3 * k];
        fp += acc[M_HEAD + 3 * k + 1];
        fn += acc[M_HEAD + 3 * k + 2];
    }
    strux_scores_add(out, "jaccard", acc[1] / n, 0);
    strux_scores_add(out, "example_f1", acc[2] / n, 0);
    strux_scores_add(out, "subset_accuracy", acc[3] / n, 0);
    strux_scores_add(out, "micro_f1", f1(tp, fp, fn), 0);
    strux_scores_add(out, "macro_f1", macro_f1(acc + M_HEAD, d->M), 0);
    strux_scores_add(out, "hier_f1", f1(acc[5], acc[6], acc[7]), 0);
    strux_scores_add(out, "tree_loss", acc[4] / n, 0);
    strux_scores_add(out, "n", acc[0], 1);
    return STRUX_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Append text to buf (capacity n) at *used. */
static strux_status put_text(char *buf, size_t n, size_t *used, const char *text)
{
    size_t k = strlen(text);
    STRUX_CHECK(*used + k < n, STRUX_ERR_INTERNAL, "label text longer than %zu bytes", n);
    memcpy(buf + *used, text, k + 1);
    *used += k;
    return STRUX_OK;
}

/* Node v's name: data.label_names' entry for its file id, else the id. */
static const char *node_name(const hier_data *d, int32_t v, char *tmp, size_t n)
{
    int64_t id = d->h->node_id[v];
    if (d->names && id < d->n_names && d->names[id]) return d->names[id];
    snprintf(tmp, n, "%lld", (long long)id);
    return tmp;
}

/* --format paths: each most specific counted node of y (a member none of whose counted children is
 * one; a stop leaf prints as its node) as the names from below the root down to it joined by '/'
 * (on a DAG along first parents), the paths in ascending node order joined by ','. */
static strux_status format_paths(hier_data *d, const strux_label *y, char *buf, size_t n)
{
    const strux_hierarchy *h = d->h;
    size_t used = 0;
    int first = 1;
    buf[0] = '\0';
    for (int32_t v = 0; v < d->M; v++) {
        if (!y->y[v] || !counted(h, v)) continue;
        int specific = 1;
        for (int64_t e = h->child_ptr[v]; e < h->child_ptr[v + 1] && specific; e++)
            if (y->y[h->child_idx[e]] && counted(h, h->child_idx[e])) specific = 0;
        if (!specific) continue;
        int32_t k = 0; /* the path, bottom up, into d->set2 */
        for (int32_t u = v; u > 0 && counted(h, u); u = h->parent_idx[h->parent_ptr[u]])
            d->set2[k++] = u;
        if (!first) STRUX_TRY(put_text(buf, n, &used, ","));
        first = 0;
        for (int32_t j = k - 1; j >= 0; j--) {
            char tmp[32];
            STRUX_TRY(put_text(buf, n, &used, node_name(d, d->set2[j], tmp, sizeof tmp)));
            if (j) STRUX_TRY(put_text(buf, n, &used, "/"));
        }
    }
    return STRUX_OK;
}

/* The predicted closure as in the data files: ascending file ids of the counted nodes. */
static strux_status hier_format_label(const strux_task *t, const strux_label *y, char *buf,
                                      size_t n)
{
    hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    if (d->paths) return format_paths(d, y, buf, n);
    STRUX_TRY(ensure_ids(d, d->M));
    int64_t k = 0;
    for (int32_t v = 0; v < d->M; v++)
        if (y->y[v] && counted(h, v)) d->ids[k++] = h->node_id[v];
    qsort(d->ids, (size_t)k, sizeof *d->ids, cmp_i64);
    size_t used = 0;
    buf[0] = '\0';
    for (int64_t j = 0; j < k; j++) {
        int w = snprintf(buf + used, n - used, "%s%lld", j ? "," : "", (long long)d->ids[j]);
        STRUX_CHECK(w >= 0 && (size_t)w < n - used, STRUX_ERR_INTERNAL,
                    "label text longer than %zu bytes", n);
        used += (size_t)w;
    }
    return STRUX_OK;
}

/* Brute force: single-label, one label per leaf; multi-label, the closure of every non-empty
 * leaf set (up to 20 leaves), index + 1 as the set's bits over the leaves. */
static int64_t hier_label_count(const strux_task *t, const strux_pot *pot)
{
    (void)pot;
    const hier_data *d = t->data;
    int32_t L = d->h->n_leaves;
    if (!d->multi) return L;
    return L <= 20 ? ((int64_t)1 << L) - 1 : -1;
}

static strux_status hier_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                  strux_label *y)
{
    (void)pot;
    const hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    if (!d->multi) {
        leaf_label(d, h->leaves[index], y);
        return STRUX_OK;
    }
    y->n = d->M;
    y->n_mu = 0;
    memset(y->y, 0, (size_t)d->M * sizeof *y->y);
    int64_t bits = index + 1;
    for (int32_t k = 0; k < h->n_leaves; k++)
        if (bits >> k & 1)
            for (int64_t a = h->anc_ptr[k]; a < h->anc_ptr[k + 1]; a++)
                y->y[h->anc_idx[a]] = 1;
    return STRUX_OK;
}

static const struct strux_task_ops hierarchy_ops = {
    .check = hier_check,
    .model_shape = hier_model_shape,
    .sizes = hier_sizes,
    .potentials = hier_potentials,
    .truth = hier_truth,
    .oracle = hier_oracle,
    .loss = hier_loss,
    .size = hier_size,
    .score = hier_score,
    .predict = hier_predict,
    .add_feature = hier_add_feature,
    .add_delta = hier_add_delta,
    .max_loss = hier_max_loss,
    .eval_size = hier_eval_size,
    .eval_add = hier_eval_add,
    .eval_report = hier_eval_report,
    .format_label = hier_format_label,
    .label_count = hier_label_count,
    .label_at = hier_label_at,
    .destroy = hier_destroy,
    .sync_size = hier_sync_size,
    .sync_local = hier_sync_local,
    .sync_apply = hier_sync_apply,
    .export_rows = hier_export,
};

strux_status strux_task_create_hierarchy(const strux_task_options *opt, strux_task *t)
{
    STRUX_CHECK(opt->rho > 1, STRUX_ERR_CONFIG,
                "task.rho = %g: program (6.6) needs rho > 1 (use task.alpha = maxmin for the "
                "rho = 1 limit)",
                opt->rho);
    hier_data *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    d->opt = *opt;
    d->model = H_NHSVM;
    if (strcmp(opt->model, "flat") == 0) d->model = H_FLAT;
    if (strcmp(opt->model, "hsvm") == 0) d->model = H_HSVM;
    if (strcmp(opt->model, "ssvm") == 0) d->model = H_SSVM;
    d->prune = opt->prune;
    d->fresh = strcmp(opt->lp_start, "fresh") == 0;
    d->stop = strcmp(opt->partial_paths, "error") != 0;
    t->data = d;
    t->ops = &hierarchy_ops;
    return STRUX_OK;
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

strux_status strux_task_hierarchy_stored(const struct strux_task *t, strux_hier_stored *out)
{
    *out = (strux_hier_stored){0};
    if (t->ops != &hierarchy_ops) return STRUX_OK;
    const hier_data *d = t->data;
    STRUX_CHECK(d->h, STRUX_ERR_INTERNAL, "task 'hierarchy' stored before check()");
    const strux_hierarchy *h = d->h;
    int32_t M = h->n_nodes;
    int64_t E = h->parent_ptr[M];
    strux_status st = strux_alloc_array(&out->node_id, (size_t)M, sizeof *out->node_id);
    if (st == STRUX_OK)
        st = strux_alloc_array(&out->parent_ptr, (size_t)M + 1, sizeof *out->parent_ptr);
    if (st == STRUX_OK)
        st = strux_alloc_array(&out->parent_idx, (size_t)E + 1, sizeof *out->parent_idx);
    if (st == STRUX_OK) st = strux_alloc_array(&out->alpha, (size_t)M, sizeof *out->alpha);
    if (st != STRUX_OK) {
        strux_hier_stored_free(out);
        return st;
    }
    out->n_nodes = M;
    memcpy(out->node_id, h->node_id, (size_t)M * sizeof *out->node_id);
    memcpy(out->parent_ptr, h->parent_ptr, (size_t)(M + 1) * sizeof *out->parent_ptr);
    memcpy(out->parent_idx, h->parent_idx, (size_t)E * sizeof *out->parent_idx);
    memcpy(out->alpha, d->alpha, (size_t)M * sizeof *out->alpha);
    snprintf(out->kind, sizeof out->kind, "%s", h->is_tree ? "tree" : "dag");
    snprintf(out->model, sizeof out->model, "%s", model_name(d->model));
    snprintf(out->label_space, sizeof out->label_space, "%s", d->multi ? "multi" : "single");
    return STRUX_OK;
}

strux_status strux_task_hierarchy_use_stored(struct strux_task *t, const strux_hier_stored *s)
{
    STRUX_CHECK(t->ops == &hierarchy_ops, STRUX_ERR_INPUT,
                "the model holds a label hierarchy (/hierarchy) but its task is '%s'",
                t->type_name);
    hier_data *d = t->data;
    STRUX_CHECK(!d->h, STRUX_ERR_INTERNAL, "task 'hierarchy': the stored hierarchy after check()");
    strux_hier_stored *c = &d->stored;
    strux_hier_stored_free(c);
    *c = *s;
    c->node_id = NULL, c->parent_ptr = NULL, c->parent_idx = NULL, c->alpha = NULL;
    c->n_nodes = 0;
    int32_t M = s->n_nodes;
    int64_t E = s->parent_ptr[M];
    STRUX_TRY(strux_alloc_array(&c->node_id, (size_t)M, sizeof *c->node_id));
    STRUX_TRY(strux_alloc_array(&c->parent_ptr, (size_t)M + 1, sizeof *c->parent_ptr));
    STRUX_TRY(strux_alloc_array(&c->parent_idx, (size_t)E + 1, sizeof *c->parent_idx));
    STRUX_TRY(strux_alloc_array(&c->alpha, (size_t)M, sizeof *c->alpha));
    memcpy(c->node_id, s->node_id, (size_t)M * sizeof *c->node_id);
    memcpy(c->parent_ptr, s->parent_ptr, (size_t)(M + 1) * sizeof *c->parent_ptr);
    memcpy(c->parent_idx, s->parent_idx, (size_t)E * sizeof *c->parent_idx);
    memcpy(c->alpha, s->alpha, (size_t)M * sizeof *c->alpha);
    c->n_nodes = M;
    snprintf(d->opt.labels, sizeof d->opt.labels, "%s", s->label_space);
    d->model = strcmp(s->model, "flat") == 0   ? H_FLAT
               : strcmp(s->model, "hsvm") == 0 ? H_HSVM
               : strcmp(s->model, "ssvm") == 0 ? H_SSVM
                                               : H_NHSVM;
    return STRUX_OK;
}
