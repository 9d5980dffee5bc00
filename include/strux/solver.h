/* strux/solver.h - training algorithms behind one interface (ARCHITECTURE.md §3 Solver): create
 * (setup), epoch (one pass over the local shard, with its collective steps), certificate (primal,
 * dual and gap where defined, global), destroy. A solver knows tasks only through strux/task.h and
 * searches through strux/search.h; it reads a const shard and const options and writes only the
 * model and its own state. Objective (slack_bicriteria.md §1.1):
 *     J(w) = (λ/2)·||w||² + (1/n)·Σ_i ℓ_i(w),   ℓ_i(w) = max_y ψ(m_i(y), L(y, y_i)). */
#ifndef STRUX_SOLVER_H
#define STRUX_SOLVER_H

#include "strux/comm.h"
#include "strux/search.h"

/* Section [m3l]: the label-correlation prior and the schedule of solver.type = m3l (issue 16,
 * specs/m3l.md). Lives inside strux_solver_options, so the solver reads it with the rest. */
typedef struct strux_m3l_options {
    char prior[STRUX_OPT_STR];      /* m3l.prior: identity|empirical|file|zero_shot */
    char empirical[STRUX_OPT_STR];  /* m3l.empirical: moment|cooccurrence|correlation */
    char prior_data[STRUX_OPT_STR]; /* m3l.prior_data: label source of empirical ("": data.train) */
    char r_file[STRUX_OPT_STR];     /* m3l.r_file: L×L text matrix (prior = file) */
    char classes[STRUX_OPT_STR];    /* m3l.classes: test classes `p l1,l2,...` (prior = zero_shot) */
    double shrink;                  /* m3l.shrink: R ← (1 − s)·R + s·I */
    int shrinking;                  /* m3l.shrinking: per-label active sets */
    double pg_tol;        /* m3l.pg_tol: stop once max |projected gradient| ≤ it (0: off) */
    double block_switch;  /* m3l.block_switch: label blocks once max |ĝ| < it (0: never) */
    int64_t steps_per_label;        /* m3l.steps_per_label: SMO steps per outer iteration (0: L) */
    char schedule[STRUX_OPT_STR];   /* m3l.schedule: joint|per_label (m3l_kernel) */
} strux_m3l_options;
extern const strux_opt_spec strux_m3l_opt_specs[]; /* section [m3l] */

/* Section [kernel]: the kernel of solver.type = m3l_kernel (issue 16, specs/m3l.md §2). */
typedef struct strux_kernel_options {
    char type[STRUX_OPT_STR];            /* kernel.type: linear|rbf|poly */
    double gamma;                        /* kernel.gamma: γ of rbf and poly (0: 1/features) */
    int64_t degree;                      /* kernel.degree: poly, 1..10 */
    double coef0;                        /* kernel.coef0: poly */
    double cache_mb;                     /* kernel.cache_mb: MB of kernel rows per rank */
    char cache_precision[STRUX_OPT_STR]; /* kernel.cache_precision: float|double */
} strux_kernel_options;
extern const strux_opt_spec strux_kernel_opt_specs[]; /* section [kernel] */

typedef struct strux_solver_options {
    char type[STRUX_OPT_STR]; /* solver.type */
    double lambda;            /* solver.lambda: λ of J(w) */
    int64_t epochs;           /* solver.epochs */
    int64_t seed;             /* solver.seed */
    double tol;               /* solver.tol: stop when gap ≤ tol·primal (dual solvers) */
    int64_t certify_every;    /* solver.certify_every: epochs between objective evaluations */
    double time_limit;        /* solver.time_limit: seconds of training at most (0: none) */
    int64_t batch;            /* solver.batch: global mini-batch (sgd) */
    int average;              /* solver.average: export the averaged iterate (sgd) */
    int64_t local_passes;     /* solver.local_passes: H block passes per round (dual solvers) */
    int64_t sync_every;       /* solver.sync_every: examples per CoCoA+ round (0: an epoch) */
    int64_t blocks;           /* solver.blocks: fixed data blocks of CoCoA+ (0: one per rank) */
    int weighted_average;     /* solver.weighted_average: BCFW's weighted average over rounds */
    double cp_eps;            /* solver.cp_eps: add a plane when ψ > ξ_i + eps (cutting plane) */
    int64_t cp_max_planes;    /* solver.cp_max_planes: working-set size per example */
    int64_t cp_qp_passes;     /* solver.cp_qp_passes: working-set passes per round */
    char update[STRUX_OPT_STR]; /* solver.update: rta step, newton|best */
    char qp[STRUX_OPT_STR];     /* solver.qp: rta Newton subproblem, projected|exact */
    int exclude_truth;          /* solver.exclude_truth: rta best step never towards y_i */
    int shrinking;              /* solver.shrinking: sdca leaves settled hinge coordinates out */
    char dual_blocks[STRUX_OPT_STR]; /* solver.dual_blocks: sdca's hinge duals, auto|dense|sparse */
    int active_sets;            /* solver.active_sets: sdca's 1-vs-All primal-dual active sets */
    strux_m3l_options m3l;      /* section [m3l] (solver.type = m3l, m3l_kernel) */
    strux_kernel_options kernel; /* section [kernel] (solver.type = m3l_kernel) */
} strux_solver_options;
extern const strux_opt_spec strux_solver_opt_specs[]; /* section [solver] */

typedef struct strux_certificate {
    double primal; /* J(w) */
    double loss;   /* (1/n) Σ ℓ_i(w) */
    double dual;   /* dual objective, NAN where the solver has none */
    double gap;    /* primal − dual, NAN where undefined */
    /* 1: primal and gap are lower bounds (a search not certified exact): solver.tol ignores them */
    int lower_bound;
} strux_certificate;

typedef struct strux_solver strux_solver;

/* Set up the named solver on the local shard ds; m (shape from the task) receives the weights.
 * Borrows t, s, ds, m and comm. Collective. */
strux_status strux_solver_create(const strux_solver_options *opt, strux_task *t, strux_search *s,
                                 const strux_dataset *ds, strux_model *m, strux_comm *comm,
                                 strux_solver **out);
void strux_solver_destroy(strux_solver **s);
/* Free the training state (dual blocks, iterates, per-example caches) once training is over, so
 * the model is written without it in memory; afterwards the solver can only be destroyed. The
 * model is untouched. Not Collective. */
void strux_solver_release(strux_solver *s);
const char *strux_solver_name(const strux_solver *s);
unsigned strux_solver_caps(const strux_solver *s); /* STRUX_CAP_* */
/* The flags of solver.type = type; STRUX_ERR_CONFIG when unknown. Not Collective. */
strux_status strux_solver_type_caps(const char *type, unsigned *caps);
/* Can these options run together? Asks the registries' capability flags only, so it runs before
 * any data is read; STRUX_ERR_CONFIG names the missing flag and the entries that have it. */
strux_status strux_solver_check_options(const strux_solver_options *opt,
                                        const strux_search_options *so,
                                        const strux_task_options *to,
                                        const strux_model_options *mo);
/* Whether solver.type = type keeps the duals as sparse lists with solver.dual_blocks =
 * dual_blocks (sdca on a sum of binary hinges, flag sparse_duals): for a task and surrogate with
 * these flags whose examples have at most max_parts hinges. Not Collective. */
int strux_solver_sparse_duals(const char *type, const char *dual_blocks, unsigned task_caps,
                              unsigned search_caps, int64_t max_parts);
/* Names of the solvers whose flags include caps, comma-separated (static buffer). */
const char *strux_solver_names(unsigned caps);
/* Names of the solvers whose flags exclude caps (static buffer). */
const char *strux_solver_names_without(unsigned caps);
/* Does solver.type read key? (1 for the interface-wide keys of [solver]) */
int strux_solver_reads_key(const strux_solver_options *opt, const char *key);
/* "solver.type=a|b" for a key only some solvers read, "" for an interface-wide key. */
void strux_solver_key_readers(const char *key, char *buf, size_t n);
/* Progress within an epoch: fn(ctx, done, total) after each step, with examples processed so far
 * (globally) out of total. Called on every rank; for progress bars and time estimates. */
typedef void (*strux_progress_fn)(void *ctx, int64_t done, int64_t total);
void strux_solver_set_progress(strux_solver *s, strux_progress_fn fn, void *ctx);

/* Between two collective rounds of an epoch (the dual solvers' CoCoA+ syncs, every one but the
 * epoch's last), on every rank: fn(ctx, s) may write a checkpoint (the state is then that of a
 * round boundary, which a resumed run continues from at the next round: strux_solver_save holds
 * the position) and may return STRUX_ERR_INTERRUPTED, which ends the epoch there (the epoch does
 * not count as done). Every rank must take the same decision (fn is Collective). Solvers without
 * rounds inside an epoch (sgd) never call it. */
typedef strux_status (*strux_round_fn)(void *ctx, strux_solver *s);
void strux_solver_set_round_fn(strux_solver *s, strux_round_fn fn, void *ctx);
/* Make the state complete before strux_solver_save (Collective): what ranks accumulate during an
 * epoch and reduce at its end (SDCA's and M3L's shrinking ranges) is reduced now, so a checkpoint
 * between rounds holds it; idempotent, so the epoch's own reduction gives the same result. */
strux_status strux_solver_prepare_save(strux_solver *s);
/* Examples of the current epoch's order already visited (0 between epochs). */
int64_t strux_solver_epoch_position(const strux_solver *s);
/* One epoch: one pass over the data (dual solvers: in CoCoA+ rounds, each with a sync);
 * afterwards m holds the solver's current answer. An epoch interrupted between rounds (see
 * strux_solver_set_round_fn) or resumed from such a checkpoint continues where it stopped.
 * Collective. */
strux_status strux_solver_epoch(strux_solver *s);
/* λ of the objective: the one home of solver.lambda once the solver exists. */
double strux_solver_lambda(const strux_solver *s);
/* Change λ between epochs (a λ path, an outer loop): the dual solvers keep their dual variables
 * and rescale the weights built from them, so the next epochs warm-start; SGD keeps its iterate
 * and step count. Every rank must pass the same λ. Not Collective. */
strux_status strux_solver_set_lambda(strux_solver *s, double lambda);
/* The task's features of weight row k are now g_k ≥ 0 times what they were (the SSVM α update
 * of the hierarchy task, hierarchical.md §4.2: g_n = √(α′_n/α_n)); adapt the state between epochs
 * so the next epochs warm-start. The primal solver (sgd) keeps the scores: its iterate's row k
 * becomes row k / g_k (0 when g_k = 0), which keeps U_n = √α_n·W_n. The dual solvers keep their
 * dual variables (the certificate stays a valid bound): every block coefficient of row k and the
 * weights built from them become g_k times what they were. Every rank must pass the same g.
 * STRUX_ERR_UNSUPPORTED for solvers whose state the change cannot follow (cutting_plane's working
 * sets, rta's candidate lists). Not Collective. */
strux_status strux_solver_rescale_rows(strux_solver *s, const double *g);
/* DiSMEC's pruning between epochs: the iterate's weights with |w| < threshold dropped (its
 * working copies follow; a dual solver's iterate is then no longer exactly w(α), so the next
 * duality gaps compare the pruned iterate with Σ b_i − (λ/2)||w||² of it). *dropped counts them.
 * STRUX_ERR_UNSUPPORTED for a solver without flag prune. Not Collective (replicated). */
strux_status strux_solver_prune(strux_solver *s, double threshold, int64_t *dropped);
/* Does the solver support strux_solver_rescale_rows? */
int strux_solver_can_rescale_rows(const strux_solver *s);
/* Epochs completed. */
int64_t strux_solver_epochs_done(const strux_solver *s);
/* The solver's state beyond the model, as bytes, for checkpoints, in two parts: the global part,
 * identical on every rank (the epoch count, λ, the SGD iterate, the round count, the position in
 * an interrupted epoch; the example order is keyed by (seed, epoch), so no RNG state is needed),
 * and the per-example part of local examples [i0, i1) (dual blocks, working sets): the driver
 * saves it example by example, keyed by global example id, so a checkpoint resumes at another
 * rank count and with other data blocks. Load into a solver created with the same options.
 * Local. */
strux_status strux_solver_save(const strux_solver *s, strux_blob *b);
strux_status strux_solver_load(strux_solver *s, strux_blob *b);
strux_status strux_solver_save_examples(const strux_solver *s, int64_t i0, int64_t i1,
                                        strux_blob *b);
strux_status strux_solver_load_examples(strux_solver *s, int64_t i0, int64_t i1, strux_blob *b);
/* Primal (and dual, gap) at the current model. Collective. */
strux_status strux_solver_certificate(strux_solver *s, strux_certificate *c);
/* Has the solver's own stopping rule been met after the last epoch (m3l.pg_tol: every
 * projected gradient within the tolerance)? 0 for solvers without one. Identical on every rank.
 * Not Collective. */
int strux_solver_converged(const strux_solver *s);
/* Fill the parts of a model file's info that follow the iterate (solver.type = m3l_kernel: the
 * kernel expansion of the current α, /m3l/sv, /m3l/alpha, /m3l/coef, gathered from every rank
 * into info->m3l.kexp on every rank); nothing for other solvers. Call before the solver is
 * released. Collective. */
struct strux_model_info;
strux_status strux_solver_export_info(strux_solver *s, struct strux_model_info *info);
/* The solver's own record columns (NULL-terminated names; NULL: none), and their values for the
 * last epoch into values (Collective; rta: cert_rate, candidates, inference_s, update_s). */
const char *const *strux_solver_columns(const strux_solver *s);
/* solver.type = m3l: the prior as used and its provenance (strux/io.h; R copied, freed with the
 * model info); out->n_labels = 0 for every other solver. Not Collective. */
struct strux_m3l_info;
strux_status strux_solver_m3l_info(const strux_solver *s, struct strux_m3l_info *out);
strux_status strux_solver_metrics(strux_solver *s, double *values);

/* J(w) and the mean surrogate loss at model m over the whole (sharded) dataset; oracle calls made
 * here are not counted as training calls by the caller's bookkeeping. Collective. */
strux_status strux_objective_primal(strux_task *t, strux_search *s, const strux_dataset *ds,
                                    const strux_model *m, strux_comm *comm, double lambda,
                                    strux_certificate *c);

#endif
