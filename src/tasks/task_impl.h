/* tasks/task_impl.h - private layout of strux_task and its ops table (STYLE.md §4), seen only by
 * src/tasks and white-box tests. A NULL method means "not supported": the public dispatcher in
 * task.c turns it into STRUX_ERR_UNSUPPORTED naming the type and the method. */
#ifndef STRUX_TASK_IMPL_H
#define STRUX_TASK_IMPL_H

#include "strux/task.h"

/* Where a task writes φ(x_i, y) (ARCHITECTURE.md §3, task.h "Dual blocks"): into a model
 * (G, through the store's kernels) or into example i's block coefficients (c). A feature map is described once,
 * by calls to strux_phi_row (feature row s of the example placed in weight row k) and
 * strux_phi_extra (free parameter e); the sink decides where the value lands. */
typedef struct strux_phi {
    const strux_dataset *ds; /* borrowed */
    int64_t row0;            /* first feature row of the example */
    int32_t n_seg;           /* feature rows of the example (S) */
    int32_t n_rows;          /* weight rows of the model (K) */
    strux_model *G;          /* a model, or NULL */
    double *c;               /* block coefficients (S·K + n_extra), or NULL */
} strux_phi;

static inline void strux_phi_row(const strux_phi *out, int32_t s, int32_t k, double v)
{
    if (out->c)
        out->c[(int64_t)s * out->n_rows + k] += v;
    else
        strux_model_add_row(out->G, &out->ds->x, out->row0 + s, k, v);
}

static inline void strux_phi_extra(const strux_phi *out, int64_t e, double v)
{
    if (out->c)
        out->c[(int64_t)out->n_seg * out->n_rows + e] += v;
    else
        strux_model_extra(out->G)[e] += v;
}

struct strux_task_ops {
    strux_status (*check)(strux_task *t, const strux_dataset *ds);
    strux_status (*model_shape)(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                int64_t *n_extra);
    /* largest number of parts, potential doubles and label marginals over the examples of ds */
    strux_status (*sizes)(const strux_task *t, const strux_dataset *ds, int32_t *max_parts,
                          int64_t *max_pot, int64_t *max_mu);
    strux_status (*potentials)(const strux_task *t, const strux_model *m, const strux_dataset *ds,
                               int64_t i, strux_pot *pot);
    /* optional: the potentials from the example's row scores, for tasks whose potentials are
     * those scores (strux_task_potentials_scores) */
    strux_status (*potentials_scores)(const strux_task *t, const strux_dataset *ds, int64_t i,
                                      const double *row_scores, strux_pot *pot);
    strux_status (*truth)(const strux_task *t, const strux_dataset *ds, int64_t i, strux_label *y);
    strux_status (*oracle)(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                           const strux_query *q, strux_label *y, strux_answer *ans);
    double (*loss)(const strux_task *t, const strux_label *y, const strux_label *truth);
    double (*size)(const strux_task *t, const strux_label *y);
    double (*score)(const strux_task *t, const strux_pot *pot, const strux_label *y);
    strux_status (*predict)(const strux_task *t, const strux_pot *pot, strux_label *y);
    /* out += scale·φ(x, y) through strux_phi_row / strux_phi_extra */
    strux_status (*add_feature)(const strux_task *t, const strux_label *y, double scale,
                                const strux_phi *out);
    /* optional fast path for φ(y) − φ(y_i); task.c falls back to two add_feature calls */
    strux_status (*add_delta)(const strux_task *t, const strux_label *y, const strux_label *truth,
                              double scale, const strux_phi *out);
    /* optional: the largest loss an example can have (default: its parts, the Hamming bound) */
    double (*max_loss)(const strux_task *t, const strux_label *truth);
    /* optional: the margin-rescaled loss as independent binary hinges (strux_task_hinge_parts) */
    int32_t (*hinge_parts)(const strux_task *t, const strux_label *truth, double *sigma);
    int64_t (*eval_size)(const strux_task *t);
    strux_status (*eval_add)(const strux_task *t, const strux_label *pred, const strux_label *truth,
                             double *acc);
    strux_status (*eval_report)(const strux_task *t, const double *acc, strux_scores *out);
    strux_status (*format_label)(const strux_task *t, const strux_label *y, char *buf, size_t n);
    int64_t (*label_count)(const strux_task *t, const strux_pot *pot);
    strux_status (*label_at)(const strux_task *t, const strux_pot *pot, int64_t index,
                             strux_label *y);
    /* optional (flag candidates): the candidate labels of q (strux_task_candidates) */
    strux_status (*candidates)(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                               const strux_query *q, int all, int exclude_truth,
                               strux_candidates *out);
    /* optional: the label-tree ensemble out and in (strux_task_trees, strux_task_set_trees) */
    strux_status (*trees)(const strux_task *t, strux_tree_set *out);
    strux_status (*set_trees)(strux_task *t, const strux_tree_set *ts);
    /* optional: certified answers and inference calls so far (strux_task_certified) */
    void (*certified)(const strux_task *t, int64_t *certified, int64_t *calls);
    /* optional: the LP counters of strux_task_lp_stats (returns 0 when there are none) */
    int (*lp_stats)(const strux_task *t, strux_lp_stats *oracle, strux_lp_stats *predict);
    void (*destroy)(strux_task *t);
    /* optional: strux_task_sync_size/local/apply and strux_task_export */
    int64_t (*sync_size)(const strux_task *t);
    strux_status (*sync_local)(const strux_task *t, double *buf);
    strux_status (*sync_apply)(strux_task *t, const strux_dataset *ds, const double *buf);
    strux_status (*export_rows)(strux_task *t, strux_model *m);
};

struct strux_task {
    const struct strux_task_ops *ops;
    const char *type_name;
    void *data;             /* implementation state, owned */
    int32_t n_labels;       /* label count fixed by check(), 0 before */
    int32_t n_rows;         /* model rows (K of the block layout), fixed by check() */
    int64_t n_extra;        /* model free parameters, fixed by check() */
    int64_t n_oracle_calls; /* counted by strux_task_oracle */
    unsigned caps;          /* STRUX_CAP_* of its registry row */
};

/* Registry row: a name, its constructor (fills ops and data), its capability flags (STRUX_CAP_*),
 * the keys of [task] only this task reads (NULL-terminated) and, optionally, the surrogate flags
 * some of its options need (strux_task_needs; NULL: none). */
typedef struct strux_task_entry {
    const char *name;
    strux_status (*create)(const strux_task_options *opt, strux_task *t);
    unsigned caps;
    const char *const *keys;
    unsigned (*needs)(const strux_task_options *opt, const char **why);
} strux_task_entry;

extern const strux_task_entry strux_task_registry[];

strux_status strux_task_create_multilabel(const strux_task_options *opt, strux_task *t);
strux_status strux_task_create_multiclass(const strux_task_options *opt, strux_task *t);
strux_status strux_task_create_chain(const strux_task_options *opt, strux_task *t);
strux_status strux_task_create_pairwise(const strux_task_options *opt, strux_task *t);
strux_status strux_task_create_rta(const strux_task_options *opt, strux_task *t);
strux_status strux_task_create_hierarchy(const strux_task_options *opt, strux_task *t);
unsigned strux_task_hierarchy_needs(const strux_task_options *opt, const char **why);
strux_status strux_task_create_binary(const strux_task_options *opt, strux_task *t);
/* hierarchy: the SSVM α state is public (strux/hierarchy.h, strux_task_hierarchy_*). */
/* rta: ensemble argmax answers certified exact, and argmax calls (oracle and predict) since
 * creation (rta.c). */
void strux_task_rta_certified(const strux_task *t, int64_t *certified, int64_t *calls);

/* Room for n labels of t->n_labels parts in c (keeps the first c->n) and, when dim > 0, for
 * their n × dim Gram factors (c->dim = dim). */
strux_status strux_candidates_reserve(const strux_task *t, strux_candidates *c, int32_t n,
                                      int32_t dim);

/* The sink writing example i's φ into G (weights) or c (block coefficients); one of them NULL. */
strux_phi strux_task_phi(const strux_task *t, const strux_dataset *ds, int64_t i, strux_model *G,
                         double *c);

/* ---- helpers shared by task implementations ---- */

/* Does the wedge of q admit a label with margin error m and loss g (slack_bicriteria.md §2.2)?
 * Always true without a wedge. h = m + h_shift; a strict side g < α·h is realised as
 * g ≤ α·h − τ with τ = STRUX_WEDGE_TAU·max(1, |α·h|) (likewise β·h < g); α = INFINITY drops
 * the upper side. (wedge.c) */
#define STRUX_WEDGE_TAU 1e-9
int strux_query_admits(const strux_query *q, double m, double g);
/* Is y one of the banned labels of q (§2.3)? */
int strux_query_banned(const strux_query *q, const strux_label *y);

/* Multi-label metrics shared by the multilabel and pairwise tasks (multilabel_metrics.c):
 * per-example sums over L labels in a buffer of strux_mlmetrics_size(L) doubles, reported as
 * Hamming loss, subset accuracy, micro-, macro- and example-F1 and n. pred->y holds 0/1 states. */
int64_t strux_mlmetrics_size(int32_t L);
/* Label-set tasks' (multilabel, pairwise, rta) ops: the truth of example i (0/1 per label, from
 * its label set); "l1,l2,..." of the labels on; all 2^L sets of L ≤ 30 labels for brute force,
 * set `index` as its bits. */
strux_status strux_labelset_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                                  strux_label *y);
strux_status strux_labelset_format(const strux_task *t, const strux_label *y, char *buf, size_t n);
int64_t strux_labelset_count(const strux_task *t, const strux_pot *pot);
strux_status strux_labelset_at(const strux_task *t, const strux_pot *pot, int64_t index,
                               strux_label *y);
void strux_mlmetrics_add(int32_t L, const strux_label *pred, const strux_label *truth, double *acc);
void strux_mlmetrics_report(int32_t L, const double *acc, strux_scores *out);

/* Chunk counting as conlleval does it (conlleval.c), for IOB1/IOB2/IOE tag names: each tag has a
 * prefix ('B', 'I', 'E', 'O', ...) and a chunk type id (names "B-NP" → 'B', type of "NP"; "O" →
 * 'O', type −1). A sequence is scored with a sentence boundary before and after it. */
typedef struct strux_chunk_tag {
    char prefix;  /* first character before '-', or the whole one-character name */
    int32_t type; /* id of the text after the first '-', −1 if none */
} strux_chunk_tag;
/* Parse names[0..K) (NULL entries are errors) into tags[0..K). */
strux_status strux_chunk_tags_parse(char *const *names, int32_t K, const char *path,
                                    strux_chunk_tag *tags);
/* Add the chunk counts of one sequence of T tokens: found[0] += chunks in truth, found[1] += chunks
 * in pred, found[2] += chunks in both with the same boundaries and type. */
void strux_chunk_count(const strux_chunk_tag *tags, const int32_t *truth, const int32_t *pred,
                       int32_t T, double found[3]);

#endif
