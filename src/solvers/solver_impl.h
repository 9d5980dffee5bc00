/* solvers/solver_impl.h - private layout of solvers and their ops table (STYLE.md §4). */
#ifndef STRUX_SOLVER_IMPL_H
#define STRUX_SOLVER_IMPL_H

#include "strux/solver.h"

struct strux_solver_ops {
    strux_status (*setup)(strux_solver *s);
    strux_status (*epoch)(strux_solver *s);
    /* optional: dual and gap; the primal is strux_objective_primal unless primal is set or
     * own_primal */
    strux_status (*certificate)(strux_solver *s, strux_certificate *c);
    /* optional: the primal objective and loss at the model into c (Collective), for a solver
     * that has a faster exact way than the searches over every example (sdca's active sets) */
    strux_status (*primal)(strux_solver *s, strux_certificate *c);
    /* nonzero: certificate computes primal and loss too (no pass of exact searches: the kernel
     * SMO, whose model the weight store cannot hold, has them from its gradients) */
    int own_primal;
    /* optional: has the solver's own stopping rule been met (m3l.pg_tol)? Identical on every
     * rank after an epoch. */
    int (*converged)(const strux_solver *s);
    /* optional: the parts of the model file's info that follow the iterate (m3l_kernel: the
     * kernel expansion, gathered from every rank). Collective. */
    strux_status (*export_info)(strux_solver *s, struct strux_model_info *info);
    /* checkpoint state beyond the model and the epoch count: the global part (identical on
     * every rank) and the per-example part of local examples [i0, i1) (one data block) */
    strux_status (*save)(const strux_solver *s, strux_blob *b);
    strux_status (*load)(strux_solver *s, strux_blob *b);
    strux_status (*save_examples)(const strux_solver *s, int64_t i0, int64_t i1, strux_blob *b);
    strux_status (*load_examples)(strux_solver *s, int64_t i0, int64_t i1, strux_blob *b);
    /* optional: adapt the state to a new λ before it takes effect (s->opt.lambda is the old) */
    void (*set_lambda)(strux_solver *s, double lambda);
    void (*destroy)(strux_solver *s);
    /* optional: extra record columns (NULL-terminated names) and their values after an epoch
     * (Collective; NaN where nothing is to report) */
    const char *const *columns;
    strux_status (*metrics)(strux_solver *s, double *values);
    /* optional: follow a change of the task's features (strux_solver_rescale_rows); g has one
     * factor per weight row, g_k = 0 meaning the row is dead */
    strux_status (*rescale_rows)(strux_solver *s, const double *g);
    /* optional: strux_solver_prepare_save (Collective) and strux_solver_epoch_position */
    strux_status (*prepare_save)(strux_solver *s);
    int64_t (*epoch_position)(const strux_solver *s);
    /* optional: drop the iterate's weights with |w| < threshold between epochs (the working
     * copies follow); *dropped counts them */
    strux_status (*prune)(strux_solver *s, double threshold, int64_t *dropped);
};

struct strux_solver {
    const struct strux_solver_ops *ops;
    const char *type_name;
    unsigned caps; /* STRUX_CAP_* of its registry row */
    strux_solver_options opt;
    strux_task *task;           /* borrowed */
    strux_search *search;       /* borrowed */
    strux_search *exact;        /* owned: the exact search of the objective (certificates) */
    const strux_dataset *ds;    /* borrowed: the local shard */
    strux_model *model;         /* borrowed: the answer */
    strux_comm *comm;           /* borrowed */
    int64_t epoch;              /* epochs completed */
    strux_progress_fn progress; /* NULL, or called after each step */
    void *progress_ctx;
    strux_round_fn round;       /* NULL, or called between the rounds of an epoch */
    void *round_ctx;
    void *data; /* implementation state, owned */
    /* NULL, or the whole certificate of an outer loop's own problem (strux_solver_set_certificate) */
    strux_status (*cert_override)(void *ctx, strux_solver *s, strux_certificate *c);
    void *cert_ctx;
};

/* Between two rounds of an epoch (see strux_solver_set_round_fn): the caller's round function. */
static inline strux_status strux_solver_round(strux_solver *s)
{
    return s->round ? s->round(s->round_ctx, s) : STRUX_OK;
}
/* Replace the solver's certificate (primal, dual, gap) by cert(ctx, s, c): an outer loop that
 * reweights the rows of an inner problem it knows better (rate constraints: one score per example
 * for two rows, and its own sums on the way) certifies it itself. NULL restores the solver's. */
void strux_solver_set_certificate(strux_solver *s,
                                  strux_status (*cert)(void *ctx, strux_solver *s,
                                                       strux_certificate *c),
                                  void *ctx);

/* Report done of total examples processed in this epoch (see strux_solver_set_progress). */
static inline void strux_solver_progress(const strux_solver *s, int64_t done, int64_t total)
{
    if (s->progress) s->progress(s->progress_ctx, done, total);
}

/* Registry row: name, constructor (fills ops and data), capability flags (STRUX_CAP_*) and the
 * keys of [solver] that this kind reads beyond the interface-wide ones (NULL-terminated). */
typedef struct strux_solver_entry {
    const char *name;
    strux_status (*create)(strux_solver *s);
    unsigned caps;
    const char *const *keys;
} strux_solver_entry;

extern const strux_solver_entry strux_solver_registry[];

/* solver.dual_blocks = auto: sparse lists of the hinge duals from this many hinges per example */
#define STRUX_SPARSE_DUALS_MIN_PARTS 64

strux_status strux_solver_create_sgd(strux_solver *s);
/* m ← Σ over ranks of m (the stored values, row scales folded first; a sparse model as its
 * non-zeros, gathered, summed on rank 0 in rank order and broadcast). Collective. */
strux_status strux_solver_allreduce_model(strux_solver *s, strux_model *m);
/* Sums over the whole job in a fixed data-block order: local holds len values for each of this
 * rank's data blocks (block_lo..block_hi−1, in order); out (len) gets Σ_k local_k over all
 * n_blocks blocks, added in block order. Every block is computed on exactly one rank, so the
 * result is bit-identical at any rank count for a fixed solver.blocks (an allreduce of
 * rank-local sums is not: its association follows the ranks). */
strux_status strux_block_sum(strux_comm *comm, const strux_dataset *ds, const double *local,
                             int64_t len, double *out);
/* The same for one value per local example (n_local of them): each block's values summed in
 * example order, then the blocks in block order. */
strux_status strux_block_sum_examples(strux_comm *comm, const strux_dataset *ds, const double *x,
                                      double *out);

#endif
