/* solvers/dual.h - private to src/solvers: the engine shared by the dual block solvers (bcfw,
 * sdca, cutting_plane). The problem is the dual of J(w) = (λ/2)||w||² + (1/n) Σ_i ℓ_i(w) with
 * ℓ_i a maximum of planes b + w·a (slack_bicriteria.md §4):
 *     D = Σ_i b_i − (λ/2)||w||²,   w = Σ_i B_i c_i,
 * where example i's dual block is its coefficient vector c_i (task.h "Dual blocks") and its loss
 * share b_i (both already carry the 1/(λn) and 1/n factors of the corners c = −a/(λn),
 * b = b(ŷ)/n). With loss weights (data.weights) every n here is W = Σ v_i and example i's
 * corners are scaled by v_i: c = −v_i·a/(λW), b = v_i·b(ŷ)/W. Distribution is CoCoA+ (Ma et al., ICML 2015): an epoch visits the global
 * examples in a permutation keyed by (seed, epoch), cut into rounds of solver.sync_every examples
 * (one round when 0). The examples are cut into K fixed data blocks (solver.blocks, or one per
 * rank; each rank owns whole blocks): in a round every block k makes H = solver.local_passes
 * passes over its examples of the round against its own view wl = w + σ′·Δw_k, the quadratic
 * term of every step scaled by σ′ = K, then one allreduce adds the Δw_k of all blocks (safe
 * "adding" aggregation). A block's work depends only on w and its examples, so at a fixed K the
 * trajectory does not depend on the rank count; with one block σ′ = 1 and wl is the serial
 * iterate. */
#ifndef STRUX_DUAL_H
#define STRUX_DUAL_H

#include "solver_impl.h"

typedef struct dual_data dual_data;

/* What a dual solver adds to the engine. */
typedef struct dual_method {
    /* Update example i's block against d->wl; the engine has computed nothing for it yet. */
    strux_status (*visit)(strux_solver *s, dual_data *d, int64_t i);
    /* optional: extra state once the engine is set up, before the dual blocks are allocated
     * (the method sets own_blocks to keep them itself) */
    strux_status (*setup)(strux_solver *s, dual_data *d);
    /* optional: after an epoch's last sync, on every rank (collectives allowed) */
    strux_status (*epoch_done)(strux_solver *s, dual_data *d);
    /* optional: the problem changed under the duals (λ, loss weights): forget what was learnt
     * about it (SDCA's shrunk coordinates) */
    void (*reset)(dual_data *d);
    /* optional: one pass over the local examples [i0, i1) of one data block among positions
     * [j0, j1) of the epoch's order in another order than the visits' (m3l's label blocks);
     * *done = 0 leaves the pass to the visits */
    strux_status (*pass)(strux_solver *s, dual_data *d, int64_t i0, int64_t i1, int64_t j0,
                         int64_t j1, int *done);
    /* optional: work on local examples [i0, i1) of one data block after the last round's passes
     * of an epoch, before its sync (against that block's wl) */
    strux_status (*epoch_end)(strux_solver *s, dual_data *d, int64_t i0, int64_t i1);
    /* optional: per-example state beyond the dual blocks of local examples [i0, i1), for
     * checkpoints (saved one example at a time: nothing global here) */
    strux_status (*save)(const strux_solver *s, const dual_data *d, int64_t i0, int64_t i1,
                         strux_blob *b);
    strux_status (*load)(strux_solver *s, dual_data *d, int64_t i0, int64_t i1, strux_blob *b);
    /* optional: the state the same on every rank (shrinking thresholds), for checkpoints; after
     * reduce_partial (Collective) that includes what the epoch so far has accumulated per rank,
     * reduced over the ranks (a checkpoint between rounds) */
    strux_status (*save_global)(const dual_data *d, strux_blob *b);
    strux_status (*load_global)(dual_data *d, strux_blob *b);
    strux_status (*reduce_partial)(strux_solver *s, dual_data *d);
    void (*destroy)(dual_data *d);
    /* the method runs its own rounds (rta): σ′ = 1 and no CoCoA+ view or Δw slots */
    int own_rounds;
    /* optional: the primal objective at the model (strux_solver_ops.primal) */
    strux_status (*primal)(strux_solver *s, dual_data *d, strux_certificate *c);
    /* the method keeps its examples' dual coordinates itself (sparse: sdca's active sets), the
     * engine's blocks c are empty */
    int own_blocks;
} dual_method;

struct dual_data {
    const dual_method *method;
    void *mdata;      /* the method's own state, owned */
    int64_t n_local;  /* local examples */
    int64_t *off;     /* n_local + 1 offsets of the blocks in c */
    double *c;        /* block coefficients of every local example (NULL with own_blocks) */
    int own_blocks;   /* the method keeps the blocks (sdca's sparse lists): the visit override,
                         λ changes and row rescaling of c do not apply */
    double *b;        /* loss shares b_i of the local examples */
    strux_model *w;   /* the agreed iterate: the solver's model, or its own when averaging */
    strux_model *wl;  /* this rank's view w + σ′·Δw during a round: w itself with one block; a
                         strux_model view of w holding only σ′·Δw for a sparse w; else a copy */
    double sigma;     /* σ′ = data blocks of all ranks */
    strux_model *acc; /* Σ Δw_k of this rank's blocks (dense views with several local blocks) */
    strux_sparse_rows *part; /* sparse views: each local block's Δw_k of the round */
    strux_sparse_rows sum, work[2]; /* Σ_k Δw_k of a sparse sync, and its scratch */
    int64_t syncs, sync_nnz, sync_bytes; /* this epoch's: syncs, Σ entries of ΣΔw_k, bytes */
    int shared;         /* w is one copy per host (model.share = host): its writer applies syncs */
    int64_t n_active;   /* the method's dual coordinates held on this rank (−1: all, dense) */
    double *dw;       /* this rank's Δw_k, one slot per local block (the block-ordered sum) */
    double *dw_sum;   /* Σ_k Δw_k in block order */
    int64_t dw_len;   /* stored weights + free parameters per slot; 0: rank-ordered allreduce */
    double n;         /* W = Σ v_i: the global example count, or the sum of the loss weights */
    int64_t rounds;   /* syncs so far (weighted averaging) */
    int64_t next_at;  /* where in the epoch's order the next round starts (0 between epochs) */
    int64_t *perm;    /* the global example order of the current pass */
    int64_t *order;   /* its local examples bucketed by local data block, in order */
    int64_t *pos;     /* their positions in perm */
    int64_t *bucket;  /* local blocks + 1 offsets of the buckets in order/pos */
    int64_t *cursor;  /* per local block: its next unvisited entry this epoch */
    int64_t *block_first; /* local blocks + 1: each block's first local example */
    strux_pot pot;    /* potentials of the visited example at wl */
    strux_label truth;
    double *dir; /* scratch block vector (p_max) */
    double *X;   /* Gram matrix of the visited example (S_max²) */
    /* optional: a caller's visit replacing the method's (strux_dual_set_visit) */
    strux_status (*visit_override)(void *ctx, strux_solver *s, dual_data *d, int64_t i);
    /* optional with it: fetch ahead what that visit of example i will read beyond the example's
     * row and coefficients (which the engine fetches) */
    void (*prefetch_override)(void *ctx, int64_t i);
    void *visit_ctx;
};

/* The solver ops of every dual method: setup, epoch, certificate, save, load, destroy. */
extern const struct strux_solver_ops strux_dual_ops;
/* Create-time: remember the method (its data is created in setup). */
strux_status strux_dual_attach(strux_solver *s, const dual_method *m);

/* The epoch's global example order, keyed by (solver.seed, epoch), into d->perm. */
void strux_dual_epoch_order(strux_solver *s, dual_data *d);
/* Potentials of example i at wl and its truth (into d->pot, d->truth). */
strux_status strux_dual_potentials(strux_solver *s, dual_data *d, int64_t i);
/* The search's answer for example i (after strux_dual_potentials); xi ≥ 0 is passed to a search
 * that needs the slack (NAN: none). */
strux_status strux_dual_answer(strux_solver *s, dual_data *d, double xi, strux_search_result *r);
/* Visit example i with the line-searched block step towards the corner of the search's answer at
 * wl (BCFW, Lacoste-Julien et al. 2013, with exact line search; SDCA's closed-form step on the
 * block, §4.3): γ maximises the dual along c_s − c_i with curvature λσ′||B_i(c_s − c_i)||².
 * Updates c_i, b_i and wl. */
strux_status strux_dual_corner_step(strux_solver *s, dual_data *d, int64_t i);
/* Replace the method's visit by visit(ctx, s, d, i) (NULL: the method's again), with prefetch
 * (optional) called a few visits ahead of example i's. The rate-constraint MM uses it for the
 * merged two-hinge step over the example pairs of its inner dataset (rates_inner.c): the engine's
 * rounds, syncs, certificate and checkpoints stay the method's. */
void strux_dual_set_visit(strux_solver *s,
                          strux_status (*visit)(void *ctx, strux_solver *s, dual_data *d, int64_t i),
                          void (*prefetch)(void *ctx, int64_t i), void *ctx);
/* The problem changed under the duals (new loss weights): the method forgets its derived state. */
void strux_dual_problem_changed(strux_solver *s);
/* wl += σ′·B_i·dc for a change dc of block i (the caller has added dc to c_i). */
void strux_dual_move(strux_solver *s, dual_data *d, int64_t i, const double *dc);

/* sdca_active.c: sdca's primal-dual active sets (solver.active_sets) */
extern const dual_method strux_sdca_active_method;

strux_status strux_solver_create_bcfw(strux_solver *s);
strux_status strux_solver_create_sdca(strux_solver *s);
strux_status strux_solver_create_cutting_plane(strux_solver *s);
/* m3l.c: M3L's linear dual coordinate ascent with a label-correlation prior */
strux_status strux_solver_create_m3l(strux_solver *s);

#endif
