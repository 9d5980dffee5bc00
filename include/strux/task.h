/* strux/task.h - a label space with its joint feature map, its loss and its oracles
 * (ARCHITECTURE.md §3). One implementation per file in src/tasks/, found by name in a registry.
 * Conventions (slack_bicriteria.md §1.3, §2.1): for example i with truth y_i and a label y,
 * m(y) = f(y) − f(y_i) is the margin error and g(y) = L(y, y_i) the task loss; the direction oracle
 * answers argmax_y a·m(y) + b·g(y), so the λ-oracle is (a, b) = (1, λ). A task knows nothing of
 * MPI, searches or solvers. Tasks keep no per-example state: every call is "Not Collective". */
#ifndef STRUX_TASK_H
#define STRUX_TASK_H

#include "strux/data.h"
#include "strux/model.h"

typedef struct strux_task strux_task;

/* A label: one state per part (label k of a multilabel output, token of a chain, the one part of
 * a multiclass output). Multilabel states are 0/1. Tasks whose oracle is an LP relaxation also
 * return fractional marginals mu (task-defined layout; n_mu = 0 for an integral label), and then
 * y holds their rounding. Allocated once per solver, reused per example. */
typedef struct strux_label {
    int32_t n;      /* parts in use */
    int32_t cap;    /* capacity of y */
    int32_t *y;     /* state of each part */
    int64_t n_mu;   /* fractional marginals in use (0: integral) */
    int64_t mu_cap; /* capacity of mu */
    double *mu;     /* marginals, or NULL when the task has none */
} strux_label;

/* Room for cap parts and mu_cap marginals (mu_cap may be 0). */
strux_status strux_label_alloc(strux_label *y, int32_t cap, int64_t mu_cap);
void strux_label_free(strux_label *y);
strux_status strux_label_copy(strux_label *dst, const strux_label *src); /* dst->cap ≥ src->n */
int strux_label_equal(const strux_label *a, const strux_label *b);

/* Potentials of one example: the scores of its factors under the current model, computed once per
 * visit. Layout beyond unary is task-defined (documented in each task file). */
typedef struct strux_pot {
    int64_t i;        /* local example index */
    int32_t n_parts;  /* parts of this example */
    int32_t n_states; /* states per part */
    double *s;        /* scores, layout documented in each task file */
    int64_t cap;      /* capacity of s */
    uint64_t stamp;   /* changes each time s is filled (strux_task_potentials; code that fills
                         s itself increments it): oracles that derive something from the scores
                         (sorted gains) keep it for repeated queries */
} strux_pot;

/* A query to the oracle (slack_bicriteria.md §2.1-2.3). */
typedef struct strux_query {
    double a, b; /* maximise a·m(y) + b·g(y) + c·|y|; a, b ≥ 0, not both 0 */
    double c;    /* weight of the label size |y| (any sign; 0 unless the Micro-F1
                    surrogate asks, §1.6: h = H + m, g = −(|y| + |y_i|)) */
    int wedge;   /* nonzero: only labels with beta·h ≤ g ≤ alpha·h, h = m + h_shift (§2.2) */
    double alpha, beta;     /* slope bounds, alpha ≥ beta ≥ 0; alpha may be INFINITY */
    double h_shift;         /* 1 in the chapter-4 convention h = 1 + m */
    int lower_open;         /* beta·h < g instead of ≤ */
    int upper_open;         /* g < alpha·h instead of ≤ */
    const strux_label *ban; /* labels excluded from the argmax (§2.3), n_ban of them */
    int32_t n_ban;
} strux_query;

/* The oracle's answer: the label is written to the caller's strux_label. */
typedef struct strux_answer {
    int found;   /* 0 only when a wedge or ban list leaves no label */
    double m;    /* margin error f(y) − f(y_i) */
    double g;    /* loss L(y, y_i) */
    double size; /* |y|: labels on (multilabel), non-outside tokens (chain), per task */
} strux_answer;

/* Direction query (a, b) with nothing else set. */
static inline strux_query strux_query_dir(double a, double b)
{
    strux_query q = {0};
    q.a = a;
    q.b = b;
    return q;
}

typedef struct strux_task_options {
    char type[STRUX_OPT_STR];      /* task.type: registry name */
    char tags[STRUX_OPT_STR];      /* task.tags: chain tag names file (`id name` lines), or "" */
    char outside[STRUX_OPT_STR];   /* task.outside: chain tag not counted in |y|, or "" */
    char inference[STRUX_OPT_STR]; /* task.inference: pairwise oracle, auto|exact|lp ("" = auto) */
    char lp_start[STRUX_OPT_STR];  /* task.lp_start: pairwise LP basis, warm|fresh ("" = warm) */
    int64_t trees;                 /* task.trees: rta spanning trees n, 1..1024 */
    int64_t kbest;                 /* task.kbest: rta list depth K per tree, 1..1024 */
    int64_t tree_seed;             /* task.tree_seed: seed of the rta tree draws */
    char tree_sampler[STRUX_OPT_STR]; /* task.tree_sampler: uniform|recursive */
    char hierarchy[STRUX_OPT_STR];    /* task.hierarchy: `parent child` file (hierarchy task) */
    char model[STRUX_OPT_STR];        /* task.model: flat|hsvm|nhsvm|ssvm */
    char labels[STRUX_OPT_STR];       /* task.labels: auto|single|multi */
    char loss[STRUX_OPT_STR];   /* task.loss: auto|zero_one|node_hamming|normalized|leaf_hamming|tree */
    char margin[STRUX_OPT_STR]; /* task.margin: plain|normalized */
    char alpha[STRUX_OPT_STR];  /* task.alpha: rho|maxmin|rho_directional */
    double rho;                 /* task.rho: ρ > 1 of (6.6) */
    double dag_t;               /* task.dag_t: T of (6.8) */
    char root_alpha[STRUX_OPT_STR];    /* task.root_alpha: auto|free|zero */
    int64_t alpha_every;               /* task.alpha_every: SGD epochs between SSVM α updates */
    double alpha_tol;                  /* task.alpha_tol: SSVM stops when max |α′ − α| ≤ this */
    double alpha_floor;                /* task.alpha_floor: ε guard of Algorithm 5 */
    char partial_paths[STRUX_OPT_STR]; /* task.partial_paths: stop|error */
    int prune;                         /* task.prune: exact leaf pruning of the DAG LP */
    int64_t lp_max_nodes;              /* task.lp_max_nodes: cap on the pruned LP's columns */
} strux_task_options;
extern const strux_opt_spec strux_task_opt_specs[]; /* section [task] */

/* Create a task by name; unknown names list the valid ones (STRUX_ERR_CONFIG). */
strux_status strux_task_create(const strux_task_options *opt, strux_task **out);
void strux_task_destroy(strux_task **t);
const char *strux_task_name(const strux_task *t);
/* Comma-separated names of every registered task. */
const char *strux_task_names(void);
/* STRUX_CAP_* of a task, or of the registry row of a task type (STRUX_ERR_CONFIG if unknown). */
unsigned strux_task_caps(const strux_task *t);
strux_status strux_task_type_caps(const char *type, unsigned *caps);
/* The surrogate flags (STRUX_CAP_*) the options need of the search: STRUX_CAP_ONE_CALL for a
 * task whose pair (m, g) is not (f(y) − f(y_i), L(y, y_i)) under its score op (the hierarchy's
 * task.margin = normalized), so searches that re-score labels would be wrong; 0 when any
 * surrogate does; *why (static text) names the option and its reason. STRUX_ERR_CONFIG for an
 * unknown task.type. */
strux_status strux_task_needs(const strux_task_options *opt, unsigned *needs, const char **why);
/* Does task.type read key? (1 for the keys of [task] every task reads) */
int strux_task_reads_key(const strux_task_options *opt, const char *key);
/* "task.type=a|b" for a key only some tasks read, "" otherwise. */
void strux_task_key_readers(const char *key, char *buf, size_t n);

/* Check that a dataset suits the task (label ranges, structure). */
strux_status strux_task_check(strux_task *t, const strux_dataset *ds);
/* Facts about the training data a task needs from every rank before the model is shaped (the
 * hierarchy task: single- or multi-label data, the internal nodes where training paths end). After
 * strux_task_check on this rank's training shard: strux_task_sync_size doubles (0: nothing to
 * agree on), filled by strux_task_sync_local, max-reduced over ranks by the caller, and handed
 * back to strux_task_sync_apply, which may reshape the task (model rows). Not Collective. */
int64_t strux_task_sync_size(const strux_task *t);
strux_status strux_task_sync_local(const strux_task *t, double *buf);
strux_status strux_task_sync_apply(strux_task *t, const strux_dataset *ds, const double *buf);
/* The trained weights become the exported ones (the hierarchy task: row n ← √α_n·row n, the
 * rows a model file holds) and the task scores them so from then on; m NULL: the weights are
 * already exported (a model read from a file). No-op for tasks without such a map. */
strux_status strux_task_export(strux_task *t, strux_model *m);
/* Weight layout for data with dim feature columns. */
strux_status strux_task_model_shape(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                    int64_t *n_extra);
/* A label buffer (with marginals if the task has them) and a potentials buffer large enough for
 * every example of ds. */
strux_status strux_task_label_alloc(const strux_task *t, const strux_dataset *ds, strux_label *y);
strux_status strux_task_pot_alloc(const strux_task *t, const strux_dataset *ds, strux_pot *pot);
void strux_pot_free(strux_pot *pot);

strux_status strux_task_potentials(const strux_task *t, const strux_model *m,
                                   const strux_dataset *ds, int64_t i, strux_pot *pot);
/* The potentials of example i from its row scores (row_scores[k] = the score of weight row k,
 * k < the model's rows) for a model the weight store cannot hold (M3L's kernel expansion), or the
 * scores `strux predict --scores` writes. STRUX_ERR_UNSUPPORTED for a task whose potentials are
 * more than its row scores (every task but multilabel). */
strux_status strux_task_potentials_scores(const strux_task *t, const strux_dataset *ds, int64_t i,
                                          const double *row_scores, strux_pot *pot);
/* Are the task's potentials its row scores (strux_task_potentials_scores supported)? */
int strux_task_scores_are_potentials(const strux_task *t);
strux_status strux_task_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                              strux_label *y);
/* The (constrained) λ-oracle; counted. */
strux_status strux_task_oracle(strux_task *t, const strux_pot *pot, const strux_label *truth,
                               const strux_query *q, strux_label *y, strux_answer *ans);
double strux_task_loss(const strux_task *t, const strux_label *y, const strux_label *truth);
/* The largest loss L(y, y_i) over labels y of this example (the searches' Ĝ, slack_bicriteria.md
 * §3.6); tasks without their own bound answer the number of parts (the Hamming bound). */
double strux_task_max_loss(const strux_task *t, const strux_label *truth);
/* |y| as the oracle's c term counts it. */
double strux_task_size(const strux_task *t, const strux_label *y);
/* f(y) under the potentials. */
double strux_task_score(const strux_task *t, const strux_pot *pot, const strux_label *y);
strux_status strux_task_predict(const strux_task *t, const strux_pot *pot, strux_label *y);
/* G += scale·φ(x_i, y) (G a model of the task's shape). */
strux_status strux_task_add_feature(const strux_task *t, const strux_dataset *ds, int64_t i,
                                    const strux_label *y, double scale, strux_model *G);
/* G += scale·(φ(x_i, y) − φ(x_i, y_i)) (slack_bicriteria.md §1.8). */
strux_status strux_task_add_delta(const strux_task *t, const strux_dataset *ds, int64_t i,
                                  const strux_label *y, const strux_label *truth, double scale,
                                  strux_model *G);
/* ---- Candidate lists (tasks with flag candidates: rta) ----
 * The labels an approximate inference weighed for the direction query q (a, b, c; no wedge, no
 * ban list), each once, with its value a·m(y) + b·g(y) + c·|y|. With all = 0 the inference may
 * stop as soon as it can certify its best; with all = 1 every label it can produce is returned
 * (the Newton update's set). exclude_truth leaves y_i out. certified = 1 when the best value is
 * the maximum over every label (y_i excepted when excluded). With all = 1 the task also writes
 * each label's Gram factor: dim values f(y) with coef(φ(x_i, y) − φ(x_i, y_i))·coef(φ(x_i, y′) −
 * φ(x_i, y_i)) = f(y)·f(y′) (block coefficients, task.h "Dual blocks"), so a step over all of
 * them forms its Gram matrix in dim rather than block-size dimensions (f(y_i) = 0). The buffers
 * grow as needed; free them with strux_candidates_free. Counted as an oracle call. */
typedef struct strux_candidates {
    int32_t n;      /* distinct labels */
    int32_t cap;    /* labels allocated */
    int32_t best;   /* index of the highest value (ties: the first met), −1 when n = 0 */
    int certified;  /* the best is the exact maximiser */
    double *value;  /* n values a·m(y) + b·g(y) + c·|y| */
    strux_label *y; /* n labels */
    int32_t dim;    /* Gram factor length (all = 1), 0 otherwise */
    double *f;      /* n × dim Gram factors, row h = f(y_h) */
    int64_t f_cap;  /* doubles allocated in f */
} strux_candidates;
strux_status strux_task_candidates(strux_task *t, const strux_pot *pot, const strux_label *truth,
                                   const strux_query *q, int all, int exclude_truth,
                                   strux_candidates *out);
void strux_candidates_free(strux_candidates *c);
/* Answers of the task's inference certified exact, and its inference calls (oracle and predict),
 * since creation; a task whose inference is always exact reports 0 and 0. Local. */
void strux_task_certified(const strux_task *t, int64_t *certified, int64_t *calls);

/* Counters of a task whose inference solves linear programmes (the hierarchy task's multi-label
 * DAG oracle: (6.22) with the exact pruning and the size cap of hierarchical.md §5.4), this
 * rank's since creation. */
typedef struct strux_lp_stats {
    int64_t calls;     /* inference calls on the programme */
    int64_t no_lp;     /* of them answered without an LP (few enough candidates to enumerate) */
    int64_t lps;       /* LPs solved */
    int64_t ilps;      /* binary programmes solved (prediction, after a fractional LP) */
    int64_t capped;    /* calls whose pruned LP was over the size cap (answer not certified) */
    double candidates; /* candidate leaves, summed over calls */
    double columns;    /* LP columns, summed over LPs */
    double seconds;    /* wall seconds building and solving LPs and binary programmes */
} strux_lp_stats;
/* The counters of the training oracle (oracle) and of prediction (predict, the test-time
 * answers); returns 0 with both zeroed for a task without programmes. Local. */
int strux_task_lp_stats(const strux_task *t, strux_lp_stats *oracle, strux_lp_stats *predict);

/* The task's label-tree ensemble (after check(); tasks without one leave n_trees = 0), copied
 * into out (owned by the caller). */
strux_status strux_task_trees(const strux_task *t, strux_tree_set *out);
/* Use the stored ensemble ts instead of drawing one (before check(); ts is copied): predict and
 * eval rebuild a model's trees from its file. STRUX_ERR_INPUT naming the inconsistency when the
 * trees are not spanning or disagree with the stored union edges and multiplicities;
 * STRUX_ERR_UNSUPPORTED for a task without trees. */
strux_status strux_task_set_trees(strux_task *t, const strux_tree_set *ts);

/* ---- Dual blocks (ARCHITECTURE.md §3) ----
 * Example i's share of the weights is w_i = B_i·c for a coefficient vector c of
 * strux_task_block_size() doubles: coefficient s·K + k places feature row s of the example (s < S:
 * its one row, or its tokens) in weight row k (K = model rows); coefficient S·K + e is free
 * parameter e. The potentials of every task begin with B_i^T·w in this layout (pot->s[j] is w
 * dotted with basis vector j), so c·pot->s = (B_i·c)·w and f(y) = coef(φ(x_i, y))·pot->s.
 * Norms of block vectors use the example's Gram matrix X (S×S, X_st = x_s·x_t). */
typedef struct strux_block_shape {
    int32_t S; /* feature rows of the example */
    int32_t K; /* weight rows */
    int64_t E; /* free parameters */
    int64_t p; /* S·K + E coefficients */
} strux_block_shape;
strux_block_shape strux_task_block_shape(const strux_task *t, const strux_dataset *ds, int64_t i);
/* Largest p and S over the local examples of ds. */
void strux_task_block_max(const strux_task *t, const strux_dataset *ds, int64_t *p_max,
                          int32_t *S_max);
/* c += scale·coef(φ(x_i, y) − φ(x_i, y_i)). */
strux_status strux_task_block_add_delta(const strux_task *t, const strux_dataset *ds, int64_t i,
                                        const strux_label *y, const strux_label *truth,
                                        double scale, double *c);
/* G += scale·B_i·c (G a model of the task's shape). */
void strux_task_block_apply(const strux_task *t, const strux_dataset *ds, int64_t i,
                            const double *c, double scale, strux_model *G);
/* The example's Gram matrix X (S×S, row-major) into X (room for S_max² doubles). */
void strux_task_block_gram(const strux_dataset *ds, const strux_block_shape *b, int64_t i,
                           double *X);
/* (B_i·c)·(B_i·d) for dense coefficient vectors, given the example's Gram matrix. */
double strux_block_inner(const strux_block_shape *b, const double *X, const double *c,
                         const double *d);
/* out = B_i^T·B_i·c (out ≠ c), so that (B_i·c)·(B_i·d) = d·out. */
void strux_block_gram_apply(const strux_block_shape *b, const double *X, const double *c,
                            double *out);

/* Tasks whose margin-rescaled loss is a sum of independent binary hinges, one per block
 * coefficient k < n, each flip costing loss 1: ℓ_i = Σ_k max(0, 1 + σ_k·(B_i^T w)_k) with
 * σ_k = ±1 written to sigma (multilabel: flipping label k; the 1-vs-All SVM). Returns n, or 0 when
 * the task's loss does not separate so. */
int32_t strux_task_hinge_parts(const strux_task *t, const strux_label *truth, double *sigma);
int64_t strux_task_oracle_calls(const strux_task *t);

/* Named evaluation scores: what a task reports, the driver's test_ columns and `strux eval`'s
 * JSON object are one list of (name, value) pairs, never text parsed back. The first entry is the
 * task's headline metric; count entries (example counts) are printed as integers. */
#define STRUX_SCORES_MAX 16
#define STRUX_SCORE_NAME 32
typedef struct strux_scores {
    int n;
    char name[STRUX_SCORES_MAX][STRUX_SCORE_NAME];
    double value[STRUX_SCORES_MAX];
    int count[STRUX_SCORES_MAX]; /* nonzero: a count, not a rate */
} strux_scores;
/* Append one score (silently ignored past STRUX_SCORES_MAX, which no task reaches). */
void strux_scores_add(strux_scores *s, const char *name, double value, int count);
/* The scores as JSON members without braces: "name": value, rates with 6 decimals, counts as
 * integers (the body of `strux eval`'s object). */
void strux_scores_format(const strux_scores *s, char *buf, size_t n);

/* Evaluation: per-example sums in a double buffer (summed over ranks by the caller), then the
 * scores computed from the sums. */
int64_t strux_task_eval_size(const strux_task *t);
strux_status strux_task_eval_add(const strux_task *t, const strux_label *pred,
                                 const strux_label *truth, double *acc);
strux_status strux_task_eval_report(const strux_task *t, const double *acc, strux_scores *out);
/* Text form of a label as written by `strux predict` (multilabel: "l1,l2,..."). */
strux_status strux_task_format_label(const strux_task *t, const strux_label *y, char *buf,
                                     size_t n);
/* Brute-force support for tests and references: number of labels of this example (−1 if the
 * space is too large to enumerate) and the label with a given index. */
int64_t strux_task_label_count(const strux_task *t, const strux_pot *pot);
strux_status strux_task_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                 strux_label *y);

#endif
