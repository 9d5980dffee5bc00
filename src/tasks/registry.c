/* tasks/registry.c - every task by name, with what it can do and the keys it reads (STYLE.md §4:
 * a const table, no run-time registration). Adding a task is one file and one row here. */
#include "task_impl.h"

static const char *const chain_keys[] = {"task.tags", "task.outside", NULL};
static const char *const pairwise_keys[] = {"task.inference", "task.lp_start", NULL};
static const char *const rta_keys[] = {"task.trees", "task.kbest", "task.tree_seed",
                                       "task.tree_sampler", NULL};
static const char *const hierarchy_keys[] = {
    "task.hierarchy",   "task.model",       "task.labels",      "task.loss",
    "task.margin",      "task.alpha",       "task.rho",         "task.dag_t",
    "task.root_alpha",  "task.alpha_every", "task.alpha_tol",   "task.alpha_floor",
    "task.partial_paths", "task.prune",     "task.lp_start",    "task.lp_max_nodes",
    NULL};

const strux_task_entry strux_task_registry[] = {
    {"multilabel", strux_task_create_multilabel, STRUX_CAP_WEDGE | STRUX_CAP_HINGE_PARTS | STRUX_CAP_LABEL_PARTS, NULL, NULL},
    {"multiclass", strux_task_create_multiclass, STRUX_CAP_WEDGE, NULL, NULL},
    {"chain", strux_task_create_chain, STRUX_CAP_WEDGE, chain_keys, NULL},
    {"pairwise", strux_task_create_pairwise, STRUX_CAP_WEDGE, pairwise_keys, NULL},
    {"rta", strux_task_create_rta, STRUX_CAP_CANDIDATES, rta_keys, NULL},
    {"hierarchy", strux_task_create_hierarchy, 0, hierarchy_keys, strux_task_hierarchy_needs},
    {"binary", strux_task_create_binary, STRUX_CAP_WEDGE | STRUX_CAP_HINGE_PARTS, NULL, NULL},
    {NULL, NULL, 0, NULL, NULL},
};
