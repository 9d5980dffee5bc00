/* solvers/shrink.h - private to src/solvers: LIBLINEAR's shrinking of box-constrained dual
 * coordinates α_ik ∈ [0, 1] (Hsieh et al. ICML 2008 §3.3, liblinear's solve_l2r_l1l2_svc), with
 * an active set, a pair of thresholds and a return range per label k, as LIBLINEAR has per
 * binary problem when it trains 1-vs-All one label at a time. Coordinate (i, k) is example i's
 * k-th coefficient, number q = off[i] + k in the engine's block offsets (dual.h); its flag is one
 * bit. Shared by sdca's
 * per-part path (the parts of a sum of binary hinges) and m3l (its labels, thresholds coupled
 * through |R|, specs/m3l.md §3.5).
 * In the units of the minimisation gradient G = −grad (LIBLINEAR's G = y·w·x − 1): a coordinate
 * at 0 with G above its label's upper threshold, or at 1 with G below the lower one, leaves the
 * passes; the label's thresholds for the next epoch are the extremes of this epoch's projected
 * gradients of its active coordinates, reduced over ranks (so at a fixed solver.blocks the
 * trajectory does not depend on the rank count). Stopping is LIBLINEAR's, per label, at a level
 * per label: when a label's range closes below its level every coordinate of it comes back and
 * nothing of it shrinks in its next pass; when that full pass also closes below the level, the
 * label is where LIBLINEAR trained on it alone stops. The first level is LIBLINEAR's default -e;
 * since the run goes on to solver.tol, the label then goes on at a tenfold finer level, down to
 * SHRINK_EPS_MIN (shrink.c), where an independent label stops for good: nothing else moves its
 * part of the dual. Labels coupled through a prior (m3l)
 * never stop, since the others' steps move their gradients. The levels are kept in step: a label
 * more than one level finer than another label that is still going waits (takes no part in the
 * passes, its flags and thresholds kept) until every label has closed the coarsest level, so the
 * passes go to the labels furthest from their stop, as LIBLINEAR's 1-vs-All at one -e spends
 * nothing on a label that has stopped (on enron, m3l with R = I reached LIBLINEAR's objective in
 * about a third of the coordinate steps). One level of lead is allowed because every epoch has a
 * cost of its own (a certificate, a sync): with none, one slow label made the epochs many and
 * short (yeast's sdca to a 1e-4 gap: 57 epochs without waiting, 136 with no lead, 65 with one).
 * For m3l also (specs/m3l.md §3.6): the epoch's largest |projected gradient| over every rank
 * (m3l.block_switch) and whether every coordinate took part (a full pass of every label), from
 * which strux_shrink_pg_tol stops at m3l.pg_tol or sends every label into a full pass to verify;
 * with on = 0 nothing shrinks and only these are kept (m3l.shrinking = false). Not here: the
 * certificate, which scores every coordinate, shrunk or not (dual.c, m3l.c). */
#ifndef STRUX_SHRINK_H
#define STRUX_SHRINK_H

#include "solver_impl.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

typedef struct strux_shrink {
    int32_t L;               /* labels: coordinate (i, k) has k < L */
    int on;                  /* 0: nothing shrinks, the ranges are only measured */
    int64_t n_coord;         /* coordinates of the local examples: off[n_local] */
    uint64_t *out;           /* bit q: coordinate q sits out (shrunk, or its label stopped) */
    unsigned char *full;     /* per label: 1 while its pass is a full one (nothing shrinks) */
    unsigned char *stopped;  /* per label: 1 once it has stopped for good */
    unsigned char *wait;     /* per label: 1 while it waits, two levels finer than another */
    int32_t n_wait;          /* labels waiting */
    double *th_max, *th_min; /* per label: this epoch's thresholds on G (±∞: none) */
    double *pg_max, *pg_min; /* per label: this epoch's range of projected gradients */
    double *eps;             /* per label: its level, the range under which it returns */
    double *red;             /* 2L: the reduction buffer */
    double pg_abs;           /* the last epoch's largest |projected gradient|, every rank (∞: none) */
    int all_full;            /* 1 when in the last epoch every label's pass was a full one */
} strux_shrink;

/* Label coupling of the thresholds (m3l's |R|): label l's thresholds are the extremes of
 * |a_kl|·(range of label k) over the non-zeros a_kl of column l, given as ptr (L + 1), idx, val.
 * NULL: independent labels (a = I). */
typedef struct strux_shrink_coupling {
    const int64_t *ptr;
    const int32_t *idx;
    const double *val;
} strux_shrink_coupling;

/* State for L labels over n_coord coordinates, none shrunk; on = 0: none ever shrinks.
 * STRUX_ERR_NOMEM. */
strux_status strux_shrink_init(strux_shrink *sh, int32_t L, int64_t n_coord, int on);
/* Every coordinate back, every label at the first level (the problem changed). */
void strux_shrink_reset(strux_shrink *sh);
void strux_shrink_free(strux_shrink *sh);

/* The coordinates q0 .. q0 + n − 1 that take part in this pass (not shrunk, their label not
 * waiting): their offsets k = q − q0, ascending, into rows (room for n); returns their count. */
static inline int32_t strux_shrink_active(const strux_shrink *sh, int64_t q0, int32_t n,
                                          int32_t *rows)
{
    int32_t n_act = 0;
    for (int64_t q = q0, q1 = q0 + n; q < q1;) {
        int b = (int)(q & 63), span = 64 - b;
        uint64_t word = ~sh->out[q >> 6] >> b;
        if (q1 - q < span) {
            span = (int)(q1 - q);
            word &= (UINT64_C(1) << span) - 1;
        }
        for (; word; word &= word - 1)
            rows[n_act++] = (int32_t)(q - q0 + __builtin_ctzll(word));
        q += span;
    }
    if (sh->n_wait) {
        int32_t m = 0;
        for (int32_t t = 0; t < n_act; t++)
            if (!sh->wait[rows[t]]) rows[m++] = rows[t];
        n_act = m;
    }
    return n_act;
}

/* α of a coordinate from its dense block coefficient c = −σ·α/λ_n (sdca's and m3l's dense
 * blocks, σ = ±1): the product rounds, so a coordinate clipped to a bound can come back a few
 * ulps off it, where strux_shrink_test would take it for free (its projected gradient then keeps
 * its label's range open); within 4 ulps it is the bound, as the sparse lists store it. */
static inline double strux_box_alpha(double c, double sigma, double lambda_n)
{
    double a = -c * sigma * lambda_n;
    if (fabs(a) <= 4 * DBL_EPSILON) return 0;
    if (fabs(a - 1) <= 4 * DBL_EPSILON) return 1;
    return a;
}

/* The test of active coordinate q of label k before its step, with α its value and g = G its
 * minimisation gradient: 1 when it leaves the passes (its bit set), else 0 and its projected
 * gradient joins label k's range. */
static inline int strux_shrink_test(strux_shrink *sh, int32_t k, int64_t q, double alpha, double g)
{
    double pg = g;
    if (alpha == 0) {
        if (g > sh->th_max[k]) {
            sh->out[q >> 6] |= UINT64_C(1) << (q & 63);
            return 1;
        }
        if (g > 0) pg = 0;
    } else if (alpha == 1) {
        if (g < sh->th_min[k]) {
            sh->out[q >> 6] |= UINT64_C(1) << (q & 63);
            return 1;
        }
        if (g < 0) pg = 0;
    }
    if (pg > sh->pg_max[k]) sh->pg_max[k] = pg;
    if (pg < sh->pg_min[k]) sh->pg_min[k] = pg;
    return 0;
}

/* After an epoch's last sync, on every rank (Collective: one allreduce of 2L values): the
 * epoch's pg_abs and all_full, the next thresholds of every label, and the returns, finer levels
 * and stops of the labels whose range closed. off (n_local + 1) are the engine's block offsets;
 * cpl NULL or the coupling. */
strux_status strux_shrink_epoch_done(strux_shrink *sh, strux_comm *comm, const int64_t *off,
                                     int64_t n_local, const strux_shrink_coupling *cpl);
/* m3l.pg_tol after strux_shrink_epoch_done (local; the same on every rank): 1 when the epoch was
 * a full pass of every label with every |projected gradient| at most tol (§3.6's stop); when they
 * were within tol but some coordinates sat out, every label's next pass is a full one (the
 * verification pass) and 0; else 0. For coupled labels (they never stop: a stopped label never
 * makes a full pass again). */
int strux_shrink_pg_tol(strux_shrink *sh, const int64_t *off, int64_t n_local, double tol);

/* Before a checkpoint between two rounds of an epoch (Collective: one allreduce of 2L values):
 * the epoch's ranges so far over all ranks; strux_shrink_epoch_done ends the same after it. */
strux_status strux_shrink_reduce_partial(strux_shrink *sh, strux_comm *comm);
/* Checkpoint, global: the per-label levels, thresholds, ranges and states (the same on every
 * rank after strux_shrink_reduce_partial). */
strux_status strux_shrink_save_global(const strux_shrink *sh, strux_blob *b);
strux_status strux_shrink_load_global(strux_shrink *sh, strux_blob *b);
/* Checkpoint, per example: the flags of local examples [i0, i1)'s coordinates, a byte each. */
strux_status strux_shrink_save(const strux_shrink *sh, const int64_t *off, int64_t i0, int64_t i1,
                               strux_blob *b);
strux_status strux_shrink_load(strux_shrink *sh, const int64_t *off, int64_t i0, int64_t i1,
                               strux_blob *b);

#endif
