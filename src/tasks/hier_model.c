/* tasks/hier_model.c - the hierarchy task and the /hierarchy group of model files
 * (docs/model-format.md): the stored form of a trained task (node order, parents, α, model, label
 * space) and, for predict and eval, the task rebuilt from it alone (the same constructor on its
 * file-id edges gives the same node order, stop leaves added back, the order compared with the
 * stored one). The HDF5 side is src/io/model_hier.c. Knows nothing of MPI or HDF5. */
#include "hier_task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

strux_status strux_hier_task_check_stored(hier_data *d)
{
    STRUX_TRY(build_stored(d));
    STRUX_TRY(strux_hier_task_alloc_scan(d));
    d->stop = 0; /* the stop leaves are in already */
    d->exported = 1;
    STRUX_TRY(strux_hier_task_finalise(d, strcmp(d->stored.label_space, "multi") == 0, d->ends));
    return strux_task_hierarchy_set_alpha_raw(d, d->stored.alpha);
}

strux_status strux_task_hierarchy_stored(const struct strux_task *t, strux_hier_stored *out)
{
    *out = (strux_hier_stored){0};
    if (!strux_hier_task_is(t)) return STRUX_OK;
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
    snprintf(out->model, sizeof out->model, "%s", strux_hier_task_model_name(d->model));
    snprintf(out->label_space, sizeof out->label_space, "%s", d->multi ? "multi" : "single");
    return STRUX_OK;
}

strux_status strux_task_hierarchy_use_stored(struct strux_task *t, const strux_hier_stored *s)
{
    STRUX_CHECK(strux_hier_task_is(t), STRUX_ERR_INPUT,
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
