/* solvers/label_shrink.c - per-label shrinking of hinge coordinates with labels that settle and
 * refine in step (label_shrink.h; specs/m3l.md §3.5-3.6, A9). */
#include "label_shrink.h"

#include <string.h>

static void reset_thresholds(strux_label_shrink *sh)
{
    for (int32_t l = 0; l < sh->L; l++) {
        sh->th_max[l] = INFINITY; /* nothing shrinks in a full pass */
        sh->th_min[l] = -INFINITY;
    }
}

static void reset_stats(strux_label_shrink *sh)
{
    for (int32_t l = 0; l < sh->L; l++) {
        sh->pg_max[l] = -INFINITY;
        sh->pg_min[l] = INFINITY;
    }
    sh->pg_abs = 0;
}

strux_status strux_label_shrink_init(strux_label_shrink *sh, int32_t L, int on)
{
    *sh = (strux_label_shrink){.L = L, .on = on};
    size_t n = (size_t)L + 1;
    STRUX_TRY(strux_alloc_array(&sh->th_max, n, sizeof *sh->th_max));
    STRUX_TRY(strux_alloc_array(&sh->th_min, n, sizeof *sh->th_min));
    STRUX_TRY(strux_alloc_array(&sh->pg_max, n, sizeof *sh->pg_max));
    STRUX_TRY(strux_alloc_array(&sh->pg_min, n, sizeof *sh->pg_min));
    STRUX_TRY(strux_alloc_array(&sh->settled, n, sizeof *sh->settled));
    STRUX_TRY(strux_alloc_array(&sh->red, 2 * n + 2, sizeof *sh->red));
    strux_label_shrink_reset(sh);
    return STRUX_OK;
}

void strux_label_shrink_free(strux_label_shrink *sh)
{
    strux_free(&sh->th_max);
    strux_free(&sh->th_min);
    strux_free(&sh->pg_max);
    strux_free(&sh->pg_min);
    strux_free(&sh->settled);
    strux_free(&sh->red);
}

void strux_label_shrink_reset(strux_label_shrink *sh)
{
    reset_thresholds(sh);
    reset_stats(sh);
    memset(sh->settled, 0, (size_t)sh->L);
    sh->level = STRUX_SHRINK_LEVEL0;
    sh->n_out = 0;
    sh->last_pg_abs = INFINITY;
}

strux_status strux_label_shrink_epoch_done(strux_label_shrink *sh, strux_comm *comm,
                                           const int64_t *col_ptr, const int32_t *col_idx,
                                           const double *col_val, double pg_tol, int *wake,
                                           int *converged)
{
    int32_t L = sh->L;
    double *red = sh->red;
    int any_settled = 0;
    for (int32_t l = 0; l < L; l++) {
        red[l] = sh->pg_max[l];
        red[L + l] = -sh->pg_min[l];
        any_settled |= sh->settled[l];
    }
    red[2 * L] = (double)sh->n_out;
    red[2 * L + 1] = sh->pg_abs;
    STRUX_TRY(strux_comm_allreduce_max(comm, red, 2 * (int64_t)L + 2));
    /* a full pass: every coordinate visited (none out since the last return, no label settled) */
    int full = !any_settled && red[2 * L] == 0;
    double pg_abs = red[2 * L + 1];
    sh->last_pg_abs = pg_abs;
    *wake = 0;
    *converged = pg_tol > 0 && full && pg_abs <= pg_tol;
    int all_settled = sh->on;
    for (int32_t l = 0; sh->on && l < L; l++) {
        if (sh->settled[l]) continue;
        double hi = -INFINITY, lo = INFINITY;
        int64_t p0 = col_ptr ? col_ptr[l] : l, p1 = col_ptr ? col_ptr[l + 1] : l + 1;
        for (int64_t p = p0; p < p1; p++) {
            int32_t k = col_ptr ? col_idx[p] : l;
            double a = col_ptr ? fabs(col_val[p]) : 1.0;
            if (red[k] > -INFINITY) hi = fmax(hi, a * red[k]);
            if (red[L + k] > -INFINITY) lo = fmin(lo, -a * red[L + k]);
        }
        if (hi - lo <= sh->level) { /* also when no coordinate of the coupled labels was in */
            sh->settled[l] = 1;
        } else {
            all_settled = 0;
            sh->th_max[l] = hi > 0 ? hi : INFINITY;
            sh->th_min[l] = lo < 0 ? lo : -INFINITY;
        }
    }
    /* every label settled: the next level; within pg_tol but not a full pass: verify */
    if (all_settled || (pg_tol > 0 && pg_abs <= pg_tol && !full)) {
        if (all_settled) sh->level = fmax(sh->level / STRUX_SHRINK_STEP, STRUX_SHRINK_LEVEL_MIN);
        memset(sh->settled, 0, (size_t)L);
        reset_thresholds(sh);
        sh->n_out = 0;
        *wake = 1;
    }
    reset_stats(sh);
    return STRUX_OK;
}

strux_status strux_label_shrink_reduce_partial(strux_label_shrink *sh, strux_comm *comm)
{
    int32_t L = sh->L;
    double *red = sh->red;
    for (int32_t l = 0; l < L; l++) {
        red[l] = sh->pg_max[l];
        red[L + l] = -sh->pg_min[l];
    }
    red[2 * L] = sh->pg_abs;
    STRUX_TRY(strux_comm_allreduce_max(comm, red, 2 * (int64_t)L + 1));
    for (int32_t l = 0; l < L; l++) {
        sh->pg_max[l] = red[l];
        sh->pg_min[l] = -red[L + l];
    }
    sh->pg_abs = red[2 * L];
    return STRUX_OK;
}

strux_status strux_label_shrink_save(const strux_label_shrink *sh, strux_blob *b)
{
    size_t n = (size_t)sh->L * sizeof(double);
    const double *v[4] = {sh->th_max, sh->th_min, sh->pg_max, sh->pg_min};
    for (int k = 0; k < 4; k++)
        STRUX_TRY(strux_blob_put(b, v[k], n));
    STRUX_TRY(strux_blob_put(b, sh->settled, (size_t)sh->L));
    const double x[3] = {sh->level, sh->pg_abs, sh->last_pg_abs};
    return strux_blob_put(b, x, sizeof x);
}

strux_status strux_label_shrink_load(strux_label_shrink *sh, strux_blob *b)
{
    size_t n = (size_t)sh->L * sizeof(double);
    double *v[4] = {sh->th_max, sh->th_min, sh->pg_max, sh->pg_min};
    for (int k = 0; k < 4; k++)
        STRUX_TRY(strux_blob_get(b, v[k], n, "shrinking thresholds and ranges"));
    STRUX_TRY(strux_blob_get(b, sh->settled, (size_t)sh->L, "settled labels"));
    double x[3];
    STRUX_TRY(strux_blob_get(b, x, sizeof x, "shrinking level"));
    sh->level = x[0];
    sh->pg_abs = x[1];
    sh->last_pg_abs = x[2];
    return STRUX_OK;
}
