/* solvers/label_shrink.h - private to src/solvers: per-label shrinking of dual coordinates in
 * [0, 1], one per (example, label) hinge (LIBLINEAR's shrinking of its dual coordinate descent,
 * Hsieh et al. 2008, kept per label; specs/m3l.md §3.5-3.6). For solvers whose coordinates are
 * binary hinges of labels: m3l (labels coupled through R's columns) and the 1-vs-All case of
 * sdca's per-part path (no coupling: pass col_ptr NULL).
 * A visited coordinate at a bound whose gradient lies beyond its label's threshold leaves the
 * passes (the caller keeps its flag); the others' projected gradients make the label's range of
 * the epoch; after the epoch the ranges, reduced over ranks and coupled through |R|
 * (ub_l = max_k |R_kl|·max ĝ_k, lb_l = min_k |R_kl|·min ĝ_k), become the thresholds. A label
 * whose range has closed below the level settles: it is left out of every pass until all labels
 * have settled; then the level falls tenfold and every coordinate returns for a full pass (the
 * verification of §3.6). The labels so refine in step, as LIBLINEAR run on every label at -e
 * level, then level/10, ...: a label that converges early costs nothing while the slow ones catch
 * up, instead of refining alone at ever finer levels. Gradients are in LIBLINEAR's units and sign:
 * G = −(1 − y·z·x) (minimisation). Local except strux_label_shrink_epoch_done. */
#ifndef STRUX_LABEL_SHRINK_H
#define STRUX_LABEL_SHRINK_H

#include "strux/comm.h"

#include <math.h>

/* The first level (LIBLINEAR's default -e of its dual solvers), each next one SHRINK_STEP times
 * finer, down to SHRINK_LEVEL_MIN (the run goes on to solver.tol, past LIBLINEAR's stop). */
#define STRUX_SHRINK_LEVEL0 0.1
#define STRUX_SHRINK_STEP 10.0
#define STRUX_SHRINK_LEVEL_MIN 1e-12

typedef struct strux_label_shrink {
    int32_t L;
    int on;                  /* 0: nothing shrinks or settles (ablations); pg_tol still holds */
    double *th_max, *th_min; /* per label: the thresholds (±∞: none on that side) */
    double *pg_max, *pg_min; /* per label: this epoch's projected-gradient range */
    unsigned char *settled;  /* per label: left out until every label has settled */
    double level;            /* a label whose range closes below it settles */
    double pg_abs;           /* this epoch: the largest |projected gradient| visited */
    double last_pg_abs;      /* the last epoch's, over every rank (m3l.block_switch) */
    int64_t n_out;           /* coordinates shrunk since the last full pass (this rank) */
    double *red;             /* 2L + 2: the reduction buffer */
} strux_label_shrink;

/* Every label in, no thresholds, level STRUX_SHRINK_LEVEL0; on = 0: only the largest |projected
 * gradient| is kept (for pg_tol). */
strux_status strux_label_shrink_init(strux_label_shrink *sh, int32_t L, int on);
void strux_label_shrink_free(strux_label_shrink *sh);
/* Back to the state of init (the problem changed under the duals). */
void strux_label_shrink_reset(strux_label_shrink *sh);

/* A visited coordinate of label k at alpha in [0, 1] with G = −(1 − y·z·x): 1 when it leaves
 * the passes (the caller sets its flag), 0 when it stays (its projected gradient recorded). */
static inline int strux_label_shrink_visit(strux_label_shrink *sh, int32_t k, double alpha,
                                           double G)
{
    double pg = G;
    if (alpha == 0) {
        if (G > sh->th_max[k]) {
            sh->n_out++;
            return 1;
        }
        if (G > 0) pg = 0;
    } else if (alpha == 1) {
        if (G < sh->th_min[k]) {
            sh->n_out++;
            return 1;
        }
        if (G < 0) pg = 0;
    }
    if (pg > sh->pg_max[k]) sh->pg_max[k] = pg; /* not fmax/fmin: library calls in this loop */
    if (pg < sh->pg_min[k]) sh->pg_min[k] = pg;
    if (fabs(pg) > sh->pg_abs) sh->pg_abs = fabs(pg);
    return 0;
}

/* After an epoch (every rank, Collective): thresholds from the ranges coupled through R's column
 * non-zeros (col_ptr NULL: each label alone), labels settled. When every label has settled, or
 * when pg_tol > 0 and the epoch's largest |projected gradient| is within it but the pass was not
 * full, every coordinate returns: *wake = 1 and the caller clears its flags. *converged = 1 when
 * pg_tol > 0 and a full pass (nothing shrunk in it) stayed within pg_tol. */
strux_status strux_label_shrink_epoch_done(strux_label_shrink *sh, strux_comm *comm,
                                           const int64_t *col_ptr, const int32_t *col_idx,
                                           const double *col_val, double pg_tol, int *wake,
                                           int *converged);

/* Before a checkpoint between two rounds of an epoch (Collective): the epoch's ranges and
 * largest |projected gradient| so far over all ranks (max reductions, so
 * strux_label_shrink_epoch_done ends the same after it). */
strux_status strux_label_shrink_reduce_partial(strux_label_shrink *sh, strux_comm *comm);
/* Checkpoint: the state every rank shares (thresholds, the epoch's ranges so far, settled labels,
 * level, largest |projected gradient|s); n_out follows the caller's flags. */
strux_status strux_label_shrink_save(const strux_label_shrink *sh, strux_blob *b);
strux_status strux_label_shrink_load(strux_label_shrink *sh, strux_blob *b);

#endif
