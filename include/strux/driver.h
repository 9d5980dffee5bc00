/* strux/driver.h - the life of a training run in the library (ARCHITECTURE.md §3 Driver): the epoch
 * loop, the certificate cadence, the tolerance stop, the epoch and time limits, checkpoints (on a
 * cadence and when a stop flag is raised), held-out scoring, and the per-epoch record as named
 * columns (the training curve). Outer loops (the hierarchy's α update, the constraints' MM step and
 * multiplier LP, λ paths) live in hooks; their state rides in checkpoints, so an interrupted outer
 * loop resumes at the same outer and inner step. The driver knows nothing of the command line:
 * progress printing is a callback on the record, stop requests are a flag the caller raises (from a
 * signal handler, say), and everything a run needs is passed in. Every function is Collective. */
#ifndef STRUX_DRIVER_H
#define STRUX_DRIVER_H

#include "strux/io.h"
#include "strux/solver.h"

#include <signal.h>

typedef struct strux_driver strux_driver;

typedef struct strux_driver_options {
    int64_t epochs;           /* solver.epochs: epochs of strux_driver_run at most */
    double tol;               /* solver.tol: converged when gap ≤ tol·primal (0: never) */
    int64_t certify_every;    /* solver.certify_every: epochs between certificates (0: last only) */
    double time_limit;        /* solver.time_limit: seconds of training at most (0: none) */
    int64_t checkpoint_every; /* output.checkpoint_every: epochs between checkpoints (0: none) */
    double checkpoint_minutes; /* output.checkpoint_minutes: minutes between checkpoints, checked
                                  between epochs and between the rounds of one (0: none) */
    int64_t eval_every;       /* output.eval_every: epochs between held-out scorings (0: last) */
    const char *checkpoint;   /* where checkpoints go; borrowed; NULL or "": never written */
} strux_driver_options;

/* The parts of a run, all borrowed: the driver steps solver, which writes model (training space:
 * data.scale not folded in) from this rank's shard train (its data blocks key the checkpoint);
 * test and col_scale may be NULL; info names the run in checkpoints and its curve is the driver's
 * record (replaced at create, rows appended per epoch). */
typedef struct strux_driver_parts {
    strux_comm *comm;
    const strux_dataset *train;
    strux_task *task;
    strux_search *search;
    strux_solver *solver;
    strux_model *model;
    const strux_dataset *test; /* scored every eval_every epochs into test_* columns */
    const double *col_scale;   /* data.scale factors per feature column, folded in on export */
    strux_model_info *info;    /* rank 0's is written into checkpoints */
} strux_driver_parts;

/* An outer loop (or any extra per-epoch work) attached to the driver. Every callback is optional,
 * collective, and may fail (the run then ends with its status). Hook state must be identical on
 * every rank (a rank-0 decision is broadcast); per-example state belongs in the solver. */
typedef struct strux_driver_hook {
    const char *name;           /* for messages and the checkpoint */
    void *ctx;                  /* passed to every callback; borrowed */
    const char *const *columns; /* NULL-terminated names of the record columns it fills */
    /* nonzero: it changes the problem between solves (loss weights, a fixed bias), so a solve
     * warm-started from the last one's iterate may begin far above the new J(0): the driver's
     * divergence warning (the objective above 10 J(0)) is not given */
    int moves_problem;
    strux_status (*before_epoch)(void *ctx, strux_driver *d);
    /* After the epoch's certificate; may change the model (e.g. rescale rows); *stop = 1 ends the
     * run after this epoch (it is then written out like a converged run). */
    strux_status (*after_epoch)(void *ctx, strux_driver *d, int *stop);
    /* After a solve reached its tolerance: the outer step (MM linearisation, multiplier update, α
     * recomputation, λ change). *done = 1 when the outer loop has finished. */
    strux_status (*after_solve)(void *ctx, strux_driver *d, int *done);
    /* The values of its columns for this epoch's record (NaN where nothing is to report). */
    strux_status (*metrics)(void *ctx, strux_driver *d, double *values);
    strux_status (*save)(void *ctx, strux_blob *b);
    strux_status (*load)(void *ctx, strux_blob *b);
} strux_driver_hook;

/* Called on every rank after each epoch's record is complete (row = the curve's last row); a
 * failure on any rank (the metrics log on a full disk, say) ends the run on every rank. */
typedef strux_status (*strux_driver_record_fn)(void *ctx, const strux_driver *d,
                                               const strux_curve *c);

strux_status strux_driver_create(const strux_driver_options *opt, const strux_driver_parts *parts,
                                 strux_driver **out);
void strux_driver_destroy(strux_driver **d);
/* Attach a hook (copied; at most 8), before strux_driver_start. */
strux_status strux_driver_add_hook(strux_driver *d, const strux_driver_hook *h);
void strux_driver_set_record_fn(strux_driver *d, strux_driver_record_fn fn, void *ctx);
/* The solver's within-epoch progress callback, passed through (progress bars). */
void strux_driver_set_progress(strux_driver *d, strux_progress_fn fn, void *ctx);
/* A flag the caller raises (nonzero: the signal number) to stop with a checkpoint after the
 * current epoch, or after the current round of a dual solver's epoch (solver.sync_every); a
 * resumed run continues there. Borrowed. */
void strux_driver_set_stop_flag(strux_driver *d, const volatile sig_atomic_t *flag);

/* Lay out the record (base columns, then each hook's, then test_* of the task's held-out scores)
 * and, when resume is non-NULL, restore that checkpoint: the model, the curve, the driver's
 * position (an epoch, or a round inside one), every hook's state and the solver's and search's
 * state of this rank's examples, at any rank count and data blocks (with other blocks than the
 * checkpoint's the CoCoA+ path differs from there on: a warning says so). */
strux_status strux_driver_start(strux_driver *d, const char *resume);
/* Run to the limits: solves to solver.tol, each followed by the hooks' outer step, until the
 * outer loop is done (without after_solve hooks: the first converged solve), the epoch or time
 * limit, or a stop request (then STRUX_ERR_INTERRUPTED after writing a checkpoint). */
strux_status strux_driver_run(strux_driver *d);
/* Epochs from the current warm start until gap ≤ eps·primal (*converged = 1) or max_epochs more
 * epochs (or a limit) have passed (*converged = 0). */
strux_status strux_driver_solve(strux_driver *d, double eps, int64_t max_epochs, int *converged);
/* The weights as they are exported: data.scale folded in, (w ∘ f)·x = w·(f ∘ x), so the model
 * scores unscaled data; dst has the model's shape and may be the model itself (at the end). */
strux_status strux_driver_export(const strux_driver *d, strux_model *dst);
/* Set the info's creation time and the wall time of the run so far (resumed runs included), as
 * before writing a model. Not Collective. */
void strux_driver_stamp_info(strux_driver *d);
/* Append a record for an outer step taken after the last epoch (an MM step's end, say): the
 * epoch's number, the last certificate, the solver's and every hook's columns as they stand now,
 * no test scores; it goes to the curve and the record callback like an epoch's. */
strux_status strux_driver_record(strux_driver *d);
/* Write a checkpoint of the run so far. */
strux_status strux_driver_checkpoint(strux_driver *d);

int64_t strux_driver_epoch(const strux_driver *d); /* epochs completed */
/* Nonzero once solver.epochs epochs have run or a solve stopped on solver.time_limit (the same on
 * every rank). Not Collective. */
int strux_driver_limit_reached(const strux_driver *d);
const strux_certificate *strux_driver_last_certificate(const strux_driver *d); /* NaN if none */
strux_solver *strux_driver_solver(const strux_driver *d);
const strux_curve *strux_driver_curve(const strux_driver *d);
/* Seconds of training (epochs and certificates) so far, resumed runs included. */
double strux_driver_train_seconds(const strux_driver *d);

/* Score ds with model m: predict every local example, sum the task's evaluation over ranks into
 * out (identical on every rank). When text is non-NULL, rank 0 receives every prediction, one
 * label per line in example order (*text owned by the caller, *len bytes; other ranks get NULL). */
strux_status strux_evaluate(strux_comm *comm, strux_task *t, const strux_model *m,
                            const strux_dataset *ds, strux_scores *out, char **text, size_t *len);
/* What strux_evaluate_with scores with and returns besides the metrics. */
typedef struct strux_eval_request {
    const strux_model *model; /* the weights, used when kexp is NULL */
    const strux_kexp *kexp;   /* a kernel expansion scoring the rows (m3l_kernel), or NULL; the
                                 task's potentials must be its row scores */
    char **text;              /* non-NULL: the predictions to rank 0, as strux_evaluate */
    size_t *len;
    char **scores;            /* non-NULL: the row scores to rank 0, one line per example in
                                 example order, the model's rows as %.17g separated by spaces
                                 (`strux predict --scores`); needs a task whose potentials are
                                 its row scores */
    size_t *scores_len;
} strux_eval_request;
/* strux_evaluate with the request's model or kernel expansion and outputs. Collective. */
strux_status strux_evaluate_with(strux_comm *comm, strux_task *t, const strux_dataset *ds,
                                 const strux_eval_request *rq, strux_scores *out);

/* ---- the SSVM α update of the hierarchy task (src/solvers/alpha.c, hierarchical.md §4.2) ----
 * A hook that learns the node weights α of task.model = ssvm jointly with the weights: every
 * task.alpha_every epochs (sgd; dual solvers with solver.tol = 0), or, for dual solvers with
 * solver.tol > 0, after each converged solve and after task.alpha_every epochs without one,
 * rank 0 runs Algorithm 5 on N_n = α_n·‖V_n‖² (on a DAG its convex extension, hierarchical.md
 * §4.3, hier_alpha_dag.c), broadcasts α′, and the task and the solver follow
 * (strux_solver_rescale_rows); it stops the run when max |α′ − α| ≤ task.alpha_tol (with
 * solver.tol > 0: only in the update after a converged solve). Columns alpha_change and alpha_s;
 * its state rides in checkpoints. */
typedef struct strux_alpha_hook strux_alpha_hook;
/* Attach to d (before strux_driver_start) when t learns α (*out = NULL otherwise): t, s and m
 * (the solver's model) are borrowed and must outlive the hook; solver_tol is the driver's
 * solver.tol. STRUX_ERR_CONFIG for a solver that cannot follow the update. Collective. */
strux_status strux_alpha_hook_attach(strux_driver *d, strux_comm *comm, strux_task *t,
                                     strux_solver *s, strux_model *m,
                                     const strux_task_options *opt, double solver_tol,
                                     strux_alpha_hook **out);
void strux_alpha_hook_destroy(strux_alpha_hook **a);
/* ---- the inference counters of tasks that solve LPs (src/solvers/lp_counters.c) ----
 * For a task with strux_task_lp_stats (the hierarchy task's multi-label DAG programme, §5.4): a
 * hook adding the record columns lp_free (share of the epoch's oracle calls answered without an
 * LP), lp_candidates (mean candidate leaves), lp_ms (mean milliseconds per LP) and lp_capped
 * (calls over task.lp_max_nodes, warned on rank 0), summed over ranks. */
typedef struct strux_lp_hook strux_lp_hook;
/* Attach to d (before strux_driver_start) when t solves LPs (*out = NULL otherwise); t is
 * borrowed. Collective. */
strux_status strux_lp_hook_attach(strux_driver *d, strux_comm *comm, const strux_task *t,
                                  strux_lp_hook **out);
void strux_lp_hook_destroy(strux_lp_hook **h);
/* t's prediction counters (the test-time ones) summed over ranks into out; *has = 0 when t
 * solves no LPs. Collective. */
strux_status strux_lp_stats_predict_total(strux_comm *comm, const strux_task *t,
                                          strux_lp_stats *out, int *has);
/* Counters as JSON members without braces: lp_calls, lp_free (share without an LP),
 * lp_candidates (mean), lp_solved (LPs), lp_columns (mean per LP), lp_ilp (binary programmes
 * after a fractional LP), lp_capped, lp_ms (mean per LP). */
void strux_lp_stats_format(const strux_lp_stats *s, char *buf, size_t n);

/* The current α (M entries, node order; identical on every rank) and the updates so far. */
const double *strux_alpha_hook_alpha(const strux_alpha_hook *a);
int64_t strux_alpha_hook_updates(const strux_alpha_hook *a);

/* ---- DiSMEC's pruning between epochs (src/solvers/prune.c; model.prune_every) ----
 * Every `every` epochs the solver's iterate loses its weights with |w| < threshold and the primal
 * is evaluated again: columns pruned and primal_pruned. */
typedef struct strux_prune_hook strux_prune_hook;
/* Attach to d (before strux_driver_start); *out = NULL when every ≤ 0 or threshold ≤ 0.
 * STRUX_ERR_CONFIG for a solver without flag prune. s is borrowed. */
strux_status strux_prune_hook_attach(strux_driver *d, strux_solver *s, double threshold,
                                     int64_t every, strux_prune_hook **out);
void strux_prune_hook_destroy(strux_prune_hook **p);

#endif
