/* solvers/sdca.c - stochastic dual coordinate ascent (Shalev-Shwartz & Zhang, JMLR 2013).
 * Where the task's margin-rescaled loss is a sum of independent binary hinges (multilabel with
 * Hamming loss: the 1-vs-All SVM, strux_task_hinge_parts) every part k of example i has its own
 * dual coordinate α_ik ∈ [0, 1], kept as block coefficient c_ik = −σ_k·α_ik/(λn), and the visit
 * maximises the dual exactly in each coordinate:
 *     α_ik ← clip(α_ik + λn·(1 + σ_k·w_k·x_i) / (σ′·||x_i||²), 0, 1)
 * (LIBLINEAR's dual coordinate descent for the L1-loss SVM, Hsieh et al. ICML 2008, with
 * C = 1/(λn); no oracle call is needed), with LIBLINEAR's shrinking (solver.shrinking): a
 * coordinate at a bound whose projected gradient lies beyond the last epoch's range of projected
 * gradients leaves the passes, only the scores of the remaining parts are computed, and every
 * coordinate returns when that range closes below a level that starts at SHRINK_EPS and tightens
 * tenfold at each return (LIBLINEAR stops there; strux goes on to solver.tol). The ranges are
 * reduced over ranks after each epoch, so at a fixed solver.blocks the trajectory does not depend
 * on the rank count. Each example's signs σ_k and ||x_i||² are kept from set-up (LIBLINEAR's y
 * and QD), so a visit reads neither its labels nor its features beyond the active scores.
 * For any other task or surrogate the coordinates are the example's block and the closed-form
 * step along the oracle's corner is BCFW's line-searched step (slack_bicriteria.md §4.3), shared
 * with bcfw.c. */
#include "dual.h"

#include <math.h>
#include <string.h>

/* projected-gradient range under which the shrunk coordinates return (LIBLINEAR's -e for the
 * dual solvers, in the same units: the hinge's gradient 1 − y·w·x) */
#define SHRINK_EPS 0.1

typedef struct sdca_data {
    int per_part;  /* the loss separates into binary hinges */
    int shrink;    /* solver.shrinking, on the per-part path */
    double *sigma; /* signs σ_k of one example's parts (set-up) */
    signed char *sign;  /* per block coefficient: σ_k of its part, 0 beyond the example's parts */
    double *xx;         /* per example: ||x_i||² */
    unsigned char *out; /* per block coefficient: 1 while the coordinate is shrunk */
    int32_t *rows;      /* the visited example's active parts */
    double *scores;     /* their scores w_k·x_i */
    double pg_max, pg_min; /* this epoch's range of projected gradients (minimisation sign) */
    double th_max, th_min; /* the last epoch's: the shrinking thresholds */
    double level;          /* the range under which every coordinate returns */
} sdca_data;

static strux_status sdca_setup(strux_solver *s, dual_data *d)
{
    sdca_data *m;
    STRUX_TRY(strux_alloc(&m, sizeof *m));
    d->mdata = m;
    STRUX_TRY(strux_alloc_array(&m->sigma, (size_t)d->pot.cap + 1, sizeof *m->sigma));
    STRUX_TRY(strux_task_truth(s->task, s->ds, 0, &d->truth));
    m->per_part = (strux_search_caps(s->search) & STRUX_CAP_ONE_CALL) &&
                  (strux_task_caps(s->task) & STRUX_CAP_HINGE_PARTS) &&
                  strux_task_hinge_parts(s->task, &d->truth, m->sigma) > 0;
    m->shrink = m->per_part && s->opt.shrinking;
    m->th_max = INFINITY; /* nothing shrinks in the first epoch */
    m->th_min = -INFINITY;
    m->level = SHRINK_EPS;
    m->pg_max = -INFINITY;
    m->pg_min = INFINITY;
    if (m->per_part) {
        const strux_dataset *ds = s->ds;
        int64_t n_c = d->off[ds->n_local];
        STRUX_TRY(strux_alloc_array(&m->out, (size_t)n_c + 1, sizeof *m->out));
        STRUX_TRY(strux_alloc_array(&m->sign, (size_t)n_c + 1, sizeof *m->sign));
        STRUX_TRY(strux_alloc_array(&m->xx, (size_t)ds->n_local + 1, sizeof *m->xx));
        for (int64_t i = 0; i < ds->n_local; i++) {
            STRUX_TRY(strux_task_truth(s->task, ds, i, &d->truth));
            int32_t n_parts = strux_task_hinge_parts(s->task, &d->truth, m->sigma);
            for (int32_t k = 0; k < n_parts; k++)
                m->sign[d->off[i] + k] = m->sigma[k] > 0 ? 1 : -1;
            strux_block_shape bs = strux_task_block_shape(s->task, ds, i);
            strux_task_block_gram(ds, &bs, i, d->X);
            m->xx[i] = d->X[0];
        }
        STRUX_TRY(strux_alloc_array(&m->rows, (size_t)d->pot.cap + 1, sizeof *m->rows));
        STRUX_TRY(strux_alloc_array(&m->scores, (size_t)d->pot.cap + 1, sizeof *m->scores));
    }
    strux_log(STRUX_LOG_DEBUG, "sdca: %s%s",
              m->per_part ? "one coordinate per binary hinge" : "block steps along oracle corners",
              m->shrink ? ", shrinking" : "");
    return STRUX_OK;
}

static strux_status part_visit(strux_solver *s, dual_data *d, sdca_data *m, int64_t i)
{
    const strux_dataset *ds = s->ds;
    int64_t p = d->off[i + 1] - d->off[i];
    double v = strux_dataset_weight(ds, i);
    if (!(v > 0)) return STRUX_OK; /* hinges that weigh 0 */
    double *ci = d->c + d->off[i], *dir = d->dir;
    unsigned char *out = m->out + d->off[i];
    const signed char *sign = m->sign + d->off[i];
    int32_t n_parts = 0, n_act = 0;
    while (n_parts < p && sign[n_parts]) n_parts++;
    for (int32_t k = 0; k < n_parts; k++)
        if (!out[k]) m->rows[n_act++] = k;
    if (n_act == 0) return STRUX_OK;
    /* λW/v_i: with a loss weight v_i (dual.h) the coordinate keeps its box [0, 1] and its
     * coefficient scales, c_ik = −σ_k·v_i·α_ik/(λW) */
    double xx = m->xx[i], lambda_n = s->opt.lambda * d->n / v;
    if (!(xx > 0)) return STRUX_OK; /* hinges that do not depend on w */
    /* the parts' block coefficients are weight rows k of the example's one feature row; when
     * most are active all rows are scored at once (contiguous runs), else only the active */
    int64_t r = ds->ex_ptr ? ds->ex_ptr[i] : i;
    if (2 * n_act >= n_parts) {
        strux_model_scores(d->wl, &ds->x, r, 0, n_parts, d->pot.s);
        for (int32_t q = 0; q < n_act; q++)
            m->scores[q] = d->pot.s[m->rows[q]];
    } else {
        strux_model_scores_rows(d->wl, &ds->x, r, m->rows, n_act, m->scores);
    }
    memset(dir, 0, (size_t)p * sizeof *dir);
    int moved = 0;
    for (int32_t q = 0; q < n_act; q++) {
        int32_t k = m->rows[q];
        double sk = sign[k], alpha = -ci[k] * sk * lambda_n;
        double grad = 1 + sk * m->scores[q]; /* n·∂D/∂α_ik; LIBLINEAR's G is −grad */
        if (m->shrink) {
            double g = -grad, pg = g;
            if (alpha == 0) {
                if (g > m->th_max) {
                    out[k] = 1;
                    continue;
                }
                if (g > 0) pg = 0;
            } else if (alpha == 1) {
                if (g < m->th_min) {
                    out[k] = 1;
                    continue;
                }
                if (g < 0) pg = 0;
            }
            m->pg_max = fmax(m->pg_max, pg);
            m->pg_min = fmin(m->pg_min, pg);
        }
        double a_new = alpha + lambda_n * grad / (d->sigma * xx);
        a_new = a_new < 0 ? 0 : a_new > 1 ? 1 : a_new;
        if (a_new == alpha) continue;
        dir[k] = -(a_new - alpha) * sk / lambda_n;
        ci[k] += dir[k];
        d->b[i] += v * (a_new - alpha) / d->n;
        moved = 1;
    }
    if (moved) strux_dual_move(s, d, i, dir);
    return STRUX_OK;
}

static strux_status sdca_visit(strux_solver *s, dual_data *d, int64_t i)
{
    sdca_data *m = d->mdata;
    return m->per_part ? part_visit(s, d, m, i) : strux_dual_corner_step(s, d, i);
}

/* The epoch's projected-gradient range over all ranks becomes the next epoch's thresholds (an
 * end at or below 0 of the upper one, or at or above 0 of the lower one, means none on that
 * side); when it has closed below the level every coordinate returns and the level tightens. */
static strux_status sdca_epoch_done(strux_solver *s, dual_data *d)
{
    sdca_data *m = d->mdata;
    if (!m->shrink) return STRUX_OK;
    double r[2] = {m->pg_max, -m->pg_min}; /* −∞ each when no coordinate was active */
    STRUX_TRY(strux_comm_allreduce_max(s->comm, r, 2));
    if (r[0] + r[1] <= m->level) {
        memset(m->out, 0, (size_t)d->off[s->ds->n_local] * sizeof *m->out);
        m->th_max = INFINITY;
        m->th_min = -INFINITY;
        m->level = fmax(m->level / 10, 1e-12);
    } else {
        m->th_max = r[0] > 0 ? r[0] : INFINITY;
        m->th_min = -r[1] < 0 ? -r[1] : -INFINITY;
    }
    m->pg_max = -INFINITY;
    m->pg_min = INFINITY;
    return STRUX_OK;
}

static void sdca_reset(dual_data *d)
{
    sdca_data *m = d->mdata;
    if (!m->shrink) return;
    memset(m->out, 0, (size_t)d->off[d->n_local] * sizeof *m->out);
    m->th_max = INFINITY;
    m->th_min = -INFINITY;
    m->pg_max = -INFINITY;
    m->pg_min = INFINITY;
    m->level = SHRINK_EPS;
}

/* Checkpoint, per data block: the shrunk flags of its coefficients and the thresholds (global,
 * the same in every block). */
static strux_status sdca_save(const strux_solver *s, const dual_data *d, int64_t i0, int64_t i1,
                              strux_blob *b)
{
    (void)s;
    const sdca_data *m = d->mdata;
    if (!m->per_part) return STRUX_OK;
    STRUX_TRY(strux_blob_put(b, &m->th_max, sizeof m->th_max));
    STRUX_TRY(strux_blob_put(b, &m->th_min, sizeof m->th_min));
    STRUX_TRY(strux_blob_put(b, &m->level, sizeof m->level));
    return strux_blob_put(b, m->out + d->off[i0], (size_t)(d->off[i1] - d->off[i0]));
}

static strux_status sdca_load(strux_solver *s, dual_data *d, int64_t i0, int64_t i1,
                              strux_blob *b)
{
    (void)s;
    sdca_data *m = d->mdata;
    if (!m->per_part) return STRUX_OK;
    STRUX_TRY(strux_blob_get(b, &m->th_max, sizeof m->th_max, "sdca shrinking thresholds"));
    STRUX_TRY(strux_blob_get(b, &m->th_min, sizeof m->th_min, "sdca shrinking thresholds"));
    STRUX_TRY(strux_blob_get(b, &m->level, sizeof m->level, "sdca shrinking thresholds"));
    return strux_blob_get(b, m->out + d->off[i0], (size_t)(d->off[i1] - d->off[i0]),
                          "sdca shrunk coordinates");
}

static void sdca_destroy(dual_data *d)
{
    sdca_data *m = d->mdata;
    if (!m) return;
    strux_free(&m->sigma);
    strux_free(&m->out);
    strux_free(&m->sign);
    strux_free(&m->xx);
    strux_free(&m->rows);
    strux_free(&m->scores);
    strux_free(&d->mdata);
}

static const dual_method sdca_method = {.visit = sdca_visit,
                                        .setup = sdca_setup,
                                        .epoch_done = sdca_epoch_done,
                                        .reset = sdca_reset,
                                        .save = sdca_save,
                                        .load = sdca_load,
                                        .destroy = sdca_destroy};

strux_status strux_solver_create_sdca(strux_solver *s)
{
    return strux_dual_attach(s, s->opt.active_sets ? &strux_sdca_active_method : &sdca_method);
}
