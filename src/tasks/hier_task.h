/* tasks/hier_task.h - private state of the hierarchy task, shared by its files (hierarchical.md
 * §1-§6; what the task does: the header of hierarchy.c). Files, by concern:
 *   hierarchy.c     set-up (the hierarchy, the training facts, α, check and sync), the ops table,
 *                   the white-box access of hierarchy.h;
 *   hier_loss.c     potentials, truth, the losses and the loss-augmented oracles, prediction, φ,
 *                   brute-force label enumeration;
 *   hier_metrics.c  evaluation (the metric columns) and the printed labels (ids, paths);
 *   hier_model.c    the /hierarchy group of model files: the stored form and the task rebuilt
 *                   from it;
 *   hier_infer.c    (hier_impl.h) the inference core the oracles call.
 * Seen only by these files and white-box tests. */
#ifndef STRUX_HIER_TASK_H
#define STRUX_HIER_TASK_H

#include "task_impl.h"

#include "hier_impl.h"
#include "strux/hierarchy.h"

typedef enum { H_FLAT, H_HSVM, H_NHSVM, H_SSVM } hier_model;
typedef enum { L_AUTO, L_ZERO_ONE, L_NODE, L_NORMALIZED, L_LEAF, L_TREE } hier_loss_kind;

typedef struct hier_data {
    strux_task_options opt; /* a copy: names, α programme, flags */
    hier_model model;
    hier_loss_kind loss; /* resolved (never L_AUTO after finalise) */
    int multi;           /* resolved label space */
    int paths;           /* format_label: most specific nodes as root paths (predict
                            --format paths), else the closure's ids */
    char *const *names;  /* [n_names] node names by file id (borrowed; NULL: ids) */
    int32_t n_names;
    int prune, fresh, stop; /* task.prune, task.lp_start = fresh, partial_paths = stop */
    int margin_norm;        /* task.margin = normalized: the margin-normalised NHSVM (6.13) */
    strux_hierarchy *h;     /* the hierarchy, stop leaves included */
    strux_hier_infer *inf;  /* oracle workspace */
    int32_t m_file;         /* nodes before stop leaves (the sync layout) */
    int32_t M;              /* nodes now */
    double *alpha;          /* [M] node weights α */
    double *mult;           /* [M] c_n: √α_n while training, 1 once exported */
    int exported;
    strux_hier_stored stored; /* from a model file (n_nodes = 0: read task.hierarchy) */
    strux_blob given;         /* the caller's hierarchy, packed (n = 0: read task.hierarchy) */
    /* facts of this rank's training shard (strux_task_sync_*) */
    int have_facts;
    int local_multi;
    unsigned char *ends; /* [m_file] a training path ends at this internal node */
    /* scratch (no oracle allocates) */
    unsigned char *mark; /* [M] zero between calls */
    int32_t *set, *set2; /* [M] */
    int64_t *ids;        /* label ids of one example / printed ids */
    int64_t ids_cap;
    double *r, *aug, *z, *tmp; /* [M] */
    double *bleaf, *S;         /* [n_leaves] */
    /* the multi-label DAG programme's counters: [0] the training oracle, [1] prediction */
    strux_lp_stats lp_stats[2];
} hier_data;

/* A leaf: no child. */
static inline int strux_hier_is_leaf(const strux_hierarchy *h, int32_t n)
{
    return h->child_ptr[n + 1] == h->child_ptr[n];
}

/* Nodes that count in metrics and printed labels: not the root, not virtual. */
static inline int strux_hier_counted(const strux_hierarchy *h, int32_t n)
{
    return n > 0 && h->node_id[n] >= 0;
}

/* (6.13) reads a label whose Δ̃² to y_i is at most this as y_i itself (§2.3.4 [added]: 0/0 = 0):
 * its scaled features ∧̃(y) ⊗ x equal y_i's, so no w separates them. The relative cancellation
 * error of Δ̃² = P(l) + P(l_i) − 2·SH(l) is ~1e-16, far below it. */
#define STRUX_HIER_SAME_LABEL 1e-12

/* Membership of node n in y: z_n of a fractional answer, else 0/1. */
static inline double strux_hier_member(const strux_label *y, int32_t n)
{
    return y->n_mu > 0 ? y->mu[n] : (double)y->y[n];
}

/* ---- hierarchy.c ---- */
int strux_hier_task_is(const strux_task *t); /* t is the hierarchy task */
const char *strux_hier_task_model_name(hier_model m);
/* d->ids holds at least n entries. */
strux_status strux_hier_task_ensure_ids(hier_data *d, int64_t n);
/* The upward closure of row i of ds (ascending node indices) into set, its size to *n. */
strux_status strux_hier_task_closure(hier_data *d, const strux_dataset *ds, int64_t i, int32_t *set,
                                     int32_t *n);
/* The scan's arrays for the hierarchy d->h: ends, mark, set, set2 (M entries, zeroed). */
strux_status strux_hier_task_alloc_scan(hier_data *d);
/* Everything that follows from the training facts: label space, stop leaves, loss, α, the
 * oracle workspace and the scratch. */
strux_status strux_hier_task_finalise(hier_data *d, int multi, const unsigned char *ends);

/* ---- hier_model.c ---- */
/* check() of a task given a model file's hierarchy (strux_task_hierarchy_use_stored). */
strux_status strux_hier_task_check_stored(hier_data *d);

/* ---- hier_loss.c: the ops of that name ---- */
strux_status strux_hier_task_potentials(const strux_task *t, const strux_model *m,
                                        const strux_dataset *ds, int64_t i, strux_pot *pot);
strux_status strux_hier_task_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                                   strux_label *y);
double strux_hier_task_loss(const strux_task *t, const strux_label *y, const strux_label *truth);
double strux_hier_task_size(const strux_task *t, const strux_label *y);
double strux_hier_task_score(const strux_task *t, const strux_pot *pot, const strux_label *y);
strux_status strux_hier_task_oracle(const strux_task *t, const strux_pot *pot,
                                    const strux_label *truth, const strux_query *q, strux_label *y,
                                    strux_answer *ans);
double strux_hier_task_max_loss(const strux_task *t, const strux_label *truth);
int strux_hier_task_lp_stats(const strux_task *t, strux_lp_stats *oracle, strux_lp_stats *predict);
strux_status strux_hier_task_predict(const strux_task *t, const strux_pot *pot, strux_label *y);
strux_status strux_hier_task_add_feature(const strux_task *t, const strux_label *y, double scale,
                                         const strux_phi *out);
strux_status strux_hier_task_add_delta(const strux_task *t, const strux_label *y,
                                       const strux_label *truth, double scale,
                                       const strux_phi *out);
int64_t strux_hier_task_label_count(const strux_task *t, const strux_pot *pot);
strux_status strux_hier_task_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                      strux_label *y);

/* ---- hier_metrics.c: the ops of that name ---- */
int64_t strux_hier_task_eval_size(const strux_task *t);
strux_status strux_hier_task_eval_add(const strux_task *t, const strux_label *pred,
                                      const strux_label *truth, double *acc);
strux_status strux_hier_task_eval_report(const strux_task *t, const double *acc, strux_scores *out);
strux_status strux_hier_task_format_label(const strux_task *t, const strux_label *y, char *buf,
                                          size_t n);

#endif
