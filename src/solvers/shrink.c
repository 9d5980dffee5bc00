/* solvers/shrink.c - per-label shrinking of box-constrained dual coordinates (shrink.h): the
 * state, the end-of-epoch thresholds, returns, levels and stops, checkpoints. The per-coordinate
 * test is inline in shrink.h. */
#include "shrink.h"

#include <string.h>

/* The first level: LIBLINEAR's default -e of the dual solvers, in its units (the hinge's
 * gradient 1 − y·w·x). A full pass closed below a level moves the label to one SHRINK_STEP times
 * finer, down to SHRINK_EPS_MIN. */
#define SHRINK_EPS 0.1
#define SHRINK_STEP 10.0
#define SHRINK_EPS_MIN 1e-12

static size_t n_words(int64_t n_bits)
{
    return (size_t)(n_bits + 63) / 64;
}

/* Every coordinate of label k out (set) or back (clear), in the blocks that have one. */
static void mark_label(strux_shrink *sh, const int64_t *off, int64_t n_local, int32_t k, int set)
{
    for (int64_t i = 0; i < n_local; i++) {
        if (k >= off[i + 1] - off[i]) continue;
        int64_t q = off[i] + k;
        uint64_t bit = UINT64_C(1) << (q & 63);
        sh->out[q >> 6] = set ? sh->out[q >> 6] | bit : sh->out[q >> 6] & ~bit;
    }
}

/* Label k's next pass is a full one: every coordinate back, nothing shrinks. */
static void open_label(strux_shrink *sh, const int64_t *off, int64_t n_local, int32_t k)
{
    mark_label(sh, off, n_local, k, 0);
    sh->th_max[k] = INFINITY;
    sh->th_min[k] = -INFINITY;
    sh->full[k] = 1;
}

/* The labels that wait: those more than one level finer than the coarsest of the labels still
 * going, unless a full pass of theirs is due (shrink.h). Levels come from the same divisions, so
 * top / SHRINK_STEP equals the next level exactly. */
static void update_wait(strux_shrink *sh)
{
    double top = 0;
    for (int32_t k = 0; k < sh->L; k++)
        if (!sh->stopped[k]) top = fmax(top, sh->eps[k]);
    sh->n_wait = 0;
    for (int32_t k = 0; k < sh->L; k++) {
        sh->wait[k] = sh->on && !sh->stopped[k] && !sh->full[k] && sh->eps[k] < top / SHRINK_STEP;
        sh->n_wait += sh->wait[k];
    }
}

static void clear_ranges(strux_shrink *sh)
{
    for (int32_t k = 0; k < sh->L; k++) {
        sh->pg_max[k] = -INFINITY;
        sh->pg_min[k] = INFINITY;
    }
}

strux_status strux_shrink_init(strux_shrink *sh, int32_t L, int64_t n_coord, int on)
{
    *sh = (strux_shrink){.L = L, .n_coord = n_coord, .on = on};
    size_t n = (size_t)L + 1;
    STRUX_TRY(strux_alloc_array(&sh->out, n_words(n_coord) + 1, sizeof *sh->out));
    STRUX_TRY(strux_alloc_array(&sh->full, n, sizeof *sh->full));
    STRUX_TRY(strux_alloc_array(&sh->stopped, n, sizeof *sh->stopped));
    STRUX_TRY(strux_alloc_array(&sh->wait, n, sizeof *sh->wait));
    STRUX_TRY(strux_alloc_array(&sh->th_max, n, sizeof *sh->th_max));
    STRUX_TRY(strux_alloc_array(&sh->th_min, n, sizeof *sh->th_min));
    STRUX_TRY(strux_alloc_array(&sh->pg_max, n, sizeof *sh->pg_max));
    STRUX_TRY(strux_alloc_array(&sh->pg_min, n, sizeof *sh->pg_min));
    STRUX_TRY(strux_alloc_array(&sh->eps, n, sizeof *sh->eps));
    STRUX_TRY(strux_alloc_array(&sh->red, 2 * n, sizeof *sh->red));
    strux_shrink_reset(sh);
    return STRUX_OK;
}

void strux_shrink_reset(strux_shrink *sh)
{
    memset(sh->out, 0, n_words(sh->n_coord) * sizeof *sh->out);
    for (int32_t k = 0; k < sh->L; k++) {
        sh->th_max[k] = INFINITY;
        sh->th_min[k] = -INFINITY;
        sh->full[k] = 1;
        sh->stopped[k] = 0;
        sh->eps[k] = SHRINK_EPS;
        sh->wait[k] = 0;
    }
    sh->n_wait = 0;
    sh->pg_abs = INFINITY;
    sh->all_full = 0;
    clear_ranges(sh);
}

void strux_shrink_free(strux_shrink *sh)
{
    strux_free(&sh->out);
    strux_free(&sh->full);
    strux_free(&sh->stopped);
    strux_free(&sh->wait);
    strux_free(&sh->th_max);
    strux_free(&sh->th_min);
    strux_free(&sh->pg_max);
    strux_free(&sh->pg_min);
    strux_free(&sh->eps);
    strux_free(&sh->red);
}

strux_status strux_shrink_epoch_done(strux_shrink *sh, strux_comm *comm, const int64_t *off,
                                     int64_t n_local, const strux_shrink_coupling *cpl)
{
    int32_t L = sh->L;
    double *up = sh->red, *down = sh->red + L; /* −∞ each where no coordinate was active */
    for (int32_t k = 0; k < L; k++) {
        up[k] = sh->pg_max[k];
        down[k] = -sh->pg_min[k];
    }
    STRUX_TRY(strux_comm_allreduce_max(comm, sh->red, 2 * (int64_t)L));
    sh->pg_abs = 0; /* max |ĝ| = max over labels of max ĝ and −min ĝ */
    sh->all_full = 1;
    for (int32_t k = 0; k < L; k++) {
        sh->pg_abs = fmax(sh->pg_abs, fmax(up[k], down[k]));
        sh->all_full &= sh->full[k] && !sh->stopped[k];
    }
    for (int32_t l = 0; l < L && sh->on; l++) {
        if (sh->stopped[l] || sh->wait[l]) continue;
        double hi = up[l], lo = -down[l];
        if (cpl) {
            hi = -INFINITY;
            lo = INFINITY;
            for (int64_t p = cpl->ptr[l]; p < cpl->ptr[l + 1]; p++) {
                int32_t k = cpl->idx[p];
                double a = fabs(cpl->val[p]);
                if (up[k] > -INFINITY) hi = fmax(hi, a * up[k]);
                if (down[k] > -INFINITY) lo = fmin(lo, -a * down[k]);
            }
        }
        double range = hi - lo;                    /* −∞ when nothing of the label was active */
        if (range <= sh->eps[l] && !sh->full[l]) { /* closed over the active ones: a full pass */
            open_label(sh, off, n_local, l);
            continue;
        }
        if (range <= sh->eps[l]) { /* closed over every coordinate: LIBLINEAR would stop here */
            if (sh->eps[l] <= SHRINK_EPS_MIN && !cpl) {
                sh->stopped[l] = 1;
                mark_label(sh, off, n_local, l, 1);
                continue;
            }
            sh->eps[l] = fmax(sh->eps[l] / SHRINK_STEP, SHRINK_EPS_MIN);
        }
        sh->th_max[l] = hi > 0 ? hi : INFINITY; /* LIBLINEAR's PGmax_old, PGmin_old */
        sh->th_min[l] = lo < 0 ? lo : -INFINITY;
        sh->full[l] = 0;
    }
    update_wait(sh);
    clear_ranges(sh);
    return STRUX_OK;
}

int strux_shrink_pg_tol(strux_shrink *sh, const int64_t *off, int64_t n_local, double tol)
{
    if (!(sh->pg_abs <= tol)) return 0;
    if (sh->all_full) return 1;
    for (int32_t l = 0; l < sh->L; l++)
        if (!sh->stopped[l]) open_label(sh, off, n_local, l);
    update_wait(sh);
    return 0;
}

/* Over all ranks, the epoch's ranges so far (a checkpoint between two rounds of an epoch): a
 * max reduction, so strux_shrink_epoch_done's own reduction ends the same. */
strux_status strux_shrink_reduce_partial(strux_shrink *sh, strux_comm *comm)
{
    int32_t L = sh->L;
    for (int32_t k = 0; k < L; k++) {
        sh->red[k] = sh->pg_max[k];
        sh->red[L + k] = -sh->pg_min[k];
    }
    STRUX_TRY(strux_comm_allreduce_max(comm, sh->red, 2 * (int64_t)L));
    for (int32_t k = 0; k < L; k++) {
        sh->pg_max[k] = sh->red[k];
        sh->pg_min[k] = -sh->red[L + k];
    }
    return STRUX_OK;
}

strux_status strux_shrink_save_global(const strux_shrink *sh, strux_blob *b)
{
    size_t n = (size_t)sh->L * sizeof(double);
    const double *v[5] = {sh->eps, sh->th_max, sh->th_min, sh->pg_max, sh->pg_min};
    for (int k = 0; k < 5; k++)
        STRUX_TRY(strux_blob_put(b, v[k], n));
    STRUX_TRY(strux_blob_put(b, sh->full, (size_t)sh->L));
    return strux_blob_put(b, sh->stopped, (size_t)sh->L);
}

strux_status strux_shrink_load_global(strux_shrink *sh, strux_blob *b)
{
    size_t n = (size_t)sh->L * sizeof(double);
    double *v[5] = {sh->eps, sh->th_max, sh->th_min, sh->pg_max, sh->pg_min};
    for (int k = 0; k < 5; k++)
        STRUX_TRY(strux_blob_get(b, v[k], n, "shrinking levels and ranges"));
    STRUX_TRY(strux_blob_get(b, sh->full, (size_t)sh->L, "shrinking label states"));
    STRUX_TRY(strux_blob_get(b, sh->stopped, (size_t)sh->L, "shrinking label states"));
    update_wait(sh);
    return STRUX_OK;
}

/* The flags of examples [i0, i1), one byte per coordinate, through a buffer on the stack. */
strux_status strux_shrink_save(const strux_shrink *sh, const int64_t *off, int64_t i0, int64_t i1,
                               strux_blob *b)
{
    unsigned char buf[256];
    for (int64_t q = off[i0], q1 = off[i1]; q < q1;) {
        size_t n = 0;
        for (; n < sizeof buf && q < q1; n++, q++)
            buf[n] = (unsigned char)((sh->out[q >> 6] >> (q & 63)) & 1);
        STRUX_TRY(strux_blob_put(b, buf, n));
    }
    return STRUX_OK;
}

strux_status strux_shrink_load(strux_shrink *sh, const int64_t *off, int64_t i0, int64_t i1,
                               strux_blob *b)
{
    unsigned char buf[256];
    for (int64_t q = off[i0], q1 = off[i1]; q < q1;) {
        size_t n = (size_t)(q1 - q) < sizeof buf ? (size_t)(q1 - q) : sizeof buf;
        STRUX_TRY(strux_blob_get(b, buf, n, "shrunk coordinates"));
        for (size_t t = 0; t < n; t++, q++) {
            uint64_t bit = UINT64_C(1) << (q & 63);
            sh->out[q >> 6] = buf[t] ? sh->out[q >> 6] | bit : sh->out[q >> 6] & ~bit;
        }
    }
    return STRUX_OK;
}
