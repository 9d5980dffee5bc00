/* solvers/sdca.c - stochastic dual coordinate ascent (Shalev-Shwartz & Zhang, JMLR 2013).
 * Where the task's margin-rescaled loss is a sum of independent binary hinges (multilabel with
 * Hamming loss: the 1-vs-All SVM, strux_task_hinge_parts) every part k of example i has its own
 * dual coordinate α_ik ∈ [0, 1], block coefficient c_ik = −σ_k·α_ik/(λn), and the visit
 * maximises the dual exactly in each coordinate:
 *     α_ik ← clip(α_ik + λn·(1 + σ_k·w_k·x_i) / (σ′·||x_i||²), 0, 1)
 * (LIBLINEAR's dual coordinate descent for the L1-loss SVM, Hsieh et al. ICML 2008, with
 * C = 1/(λn); no oracle call is needed), with LIBLINEAR's shrinking and stopping per part
 * (solver.shrinking, shrink.h): each part has its own active set, thresholds and level, as
 * LIBLINEAR has when it trains one label at a time, so a part that has converged costs nothing
 * until its range closes, and only the scores of a visit's active parts are computed. Each
 * example's ||x_i||² (LIBLINEAR's QD) and its parts with σ_k = −1 (its labels, in multilabel) are
 * kept from set-up, so a visit reads neither its labels nor its features beyond the active scores.
 * The dual blocks (solver.dual_blocks) are the engine's dense coefficients c_i, or, with many
 * parts, sdca's own sparse lists of the non-zero α_ik (sparse_blocks.h): in 1-vs-All with many
 * labels an example's α_ik are 0 for every label it is far from.
 * For any other task or surrogate the coordinates are the example's block and the closed-form
 * step along the oracle's corner is BCFW's line-searched step (slack_bicriteria.md §4.3), shared
 * with bcfw.c. */
#include "dual.h"
#include "shrink.h"
#include "sparse_blocks.h"

#include <math.h>
#include <string.h>

/* first pool of the sparse lists: entries per example */
#define SPARSE_FIRST_ROOM 8

typedef struct sdca_data {
    int per_part;     /* the loss separates into binary hinges */
    int shrink;       /* solver.shrinking, on the per-part path */
    int sparse;       /* the α_ik in sparse lists (d->c unused) */
    double *sigma;    /* signs σ_k of one example's parts (set-up) */
    int32_t *n_parts; /* per example: its parts */
    int64_t *neg_ptr; /* per example: its parts with σ_k = −1 are neg[neg_ptr[i] .. [i + 1]), */
    int32_t *neg;     /* ascending */
    double *xx;       /* per example: ||x_i||² */
    strux_shrink sh;  /* per-part active sets (with shrink) */
    strux_sparse_blocks alpha; /* the non-zero α_ik (sparse) */
    int32_t p_max;             /* parts of the largest block */
    int32_t *rows;             /* the visited example's active parts */
    double *scores;            /* their scores w_k·x_i */
    int32_t *moved;            /* the parts its visit moved, */
    double *dc;                /* their coefficient changes */
    int32_t *new_idx;          /* sparse: its new list */
    double *new_val;
} sdca_data;

/* Per-part set-up: the parts, their signs and ||x_i||² of every example; the scratch of a visit;
 * the shrinking state and the sparse lists. */
static strux_status part_setup(strux_solver *s, dual_data *d, sdca_data *m)
{
    const strux_dataset *ds = s->ds;
    int64_t n = ds->n_local, n_c = d->off[n], n_neg = 0, p_max;
    int32_t S_max;
    strux_task_block_max(s->task, ds, &p_max, &S_max);
    m->p_max = (int32_t)p_max;
    STRUX_TRY(strux_alloc_array(&m->n_parts, (size_t)n + 1, sizeof *m->n_parts));
    STRUX_TRY(strux_alloc_array(&m->neg_ptr, (size_t)n + 1, sizeof *m->neg_ptr));
    STRUX_TRY(strux_alloc_array(&m->xx, (size_t)n + 1, sizeof *m->xx));
    for (int pass = 0; pass < 2; pass++) { /* count the negative signs, then keep them */
        n_neg = 0;
        for (int64_t i = 0; i < n; i++) {
            STRUX_TRY(strux_task_truth(s->task, ds, i, &d->truth));
            int32_t n_parts = strux_task_hinge_parts(s->task, &d->truth, m->sigma);
            m->n_parts[i] = n_parts;
            for (int32_t k = 0; k < n_parts; k++)
                if (m->sigma[k] < 0) {
                    if (pass) m->neg[n_neg] = k;
                    n_neg++;
                }
            m->neg_ptr[i + 1] = n_neg;
        }
        if (!pass) STRUX_TRY(strux_alloc_array(&m->neg, (size_t)n_neg + 1, sizeof *m->neg));
    }
    for (int64_t i = 0; i < n; i++) {
        strux_block_shape bs = strux_task_block_shape(s->task, ds, i);
        strux_task_block_gram(ds, &bs, i, d->X);
        m->xx[i] = d->X[0];
    }
    size_t room = (size_t)p_max + 1;
    STRUX_TRY(strux_alloc_array(&m->rows, room, sizeof *m->rows));
    STRUX_TRY(strux_alloc_array(&m->scores, room, sizeof *m->scores));
    STRUX_TRY(strux_alloc_array(&m->moved, room, sizeof *m->moved));
    STRUX_TRY(strux_alloc_array(&m->dc, room, sizeof *m->dc));
    if (m->shrink) STRUX_TRY(strux_shrink_init(&m->sh, m->p_max, n_c, 1));
    if (m->sparse) {
        STRUX_TRY(strux_alloc_array(&m->new_idx, room, sizeof *m->new_idx));
        STRUX_TRY(strux_alloc_array(&m->new_val, room, sizeof *m->new_val));
        STRUX_TRY(strux_sparse_blocks_init(&m->alpha, n, n * SPARSE_FIRST_ROOM));
        d->own_blocks = 1;
    }
    return STRUX_OK;
}

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
    if (m->per_part) {
        int64_t p_max;
        int32_t S_max;
        strux_task_block_max(s->task, s->ds, &p_max, &S_max);
        m->sparse =
            strux_solver_sparse_duals(s->opt.type, s->opt.dual_blocks, strux_task_caps(s->task),
                                      strux_search_caps(s->search), p_max);
        STRUX_TRY(part_setup(s, d, m));
    }
    STRUX_CHECK(m->per_part || strcmp(s->opt.dual_blocks, "sparse") != 0, STRUX_ERR_CONFIG,
                "solver.dual_blocks = sparse needs a loss that is a sum of binary hinges (task "
                "flag hinge_parts, a one-call surrogate); this run's is not");
    strux_log(STRUX_LOG_DEBUG, "sdca: %s%s%s",
              m->per_part ? "one coordinate per binary hinge" : "block steps along oracle corners",
              m->shrink ? ", shrinking" : "", m->sparse ? ", sparse dual blocks" : "");
    return STRUX_OK;
}

/* Example i's parts, each its exact clipped step in part order against the scores of the visit's
 * start (the parts are distinct rows, so one step does not move another's score), then one
 * move of wl over the moved rows. The α_ik come from c_i (dense) or the example's list (sparse,
 * walked beside the ascending active parts and rebuilt). */
static strux_status part_visit(strux_solver *s, dual_data *d, sdca_data *m, int64_t i)
{
    const strux_dataset *ds = s->ds;
    double v = strux_dataset_weight(ds, i);
    if (!(v > 0)) return STRUX_OK; /* hinges that weigh 0 */
    int32_t n_parts = m->n_parts[i], n_act = n_parts;
    if (m->shrink)
        n_act = strux_shrink_active(&m->sh, d->off[i], n_parts, m->rows);
    else
        for (int32_t k = 0; k < n_parts; k++)
            m->rows[k] = k;
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
    double *ci = m->sparse ? NULL : d->c + d->off[i];
    const int32_t *neg = m->neg + m->neg_ptr[i], *neg_end = m->neg + m->neg_ptr[i + 1];
    const strux_sparse_blocks *sb = &m->alpha;
    const int32_t *a_idx = m->sparse ? sb->idx + sb->start[i] : NULL;
    const double *a_val = m->sparse ? sb->val + sb->start[i] : NULL;
    int32_t a_len = m->sparse ? sb->len[i] : 0, a_at = 0, n_new = 0, n_mv = 0;
    for (int32_t q = 0; q < n_act; q++) {
        int32_t k = m->rows[q];
        while (neg < neg_end && *neg < k)
            neg++;
        double sk = neg < neg_end && *neg == k ? -1.0 : 1.0, alpha;
        if (m->sparse) { /* the list's entries before k are kept as they are */
            while (a_at < a_len && a_idx[a_at] < k) {
                m->new_idx[n_new] = a_idx[a_at];
                m->new_val[n_new++] = a_val[a_at++];
            }
            alpha = a_at < a_len && a_idx[a_at] == k ? a_val[a_at++] : 0.0;
        } else {
            alpha = strux_box_alpha(ci[k], sk, lambda_n);
        }
        double grad = 1 + sk * m->scores[q]; /* n·∂D/∂α_ik; LIBLINEAR's G is −grad */
        double a_new = alpha;
        if (!m->shrink || !strux_shrink_test(&m->sh, k, d->off[i] + k, alpha, -grad)) {
            a_new = alpha + lambda_n * grad / (d->sigma * xx);
            a_new = a_new < 0 ? 0 : a_new > 1 ? 1 : a_new;
        }
        if (m->sparse && a_new != 0) {
            m->new_idx[n_new] = k;
            m->new_val[n_new++] = a_new;
        }
        if (a_new == alpha) continue;
        double dc = -(a_new - alpha) * sk / lambda_n;
        if (!m->sparse) ci[k] += dc;
        d->b[i] += v * (a_new - alpha) / d->n;
        m->moved[n_mv] = k;
        m->dc[n_mv++] = dc;
    }
    if (n_mv == 0) return STRUX_OK;
    strux_model_add_rows(d->wl, &ds->x, r, m->moved, n_mv, d->sigma, m->dc);
    if (!m->sparse) return STRUX_OK;
    for (; a_at < a_len; a_at++) {
        m->new_idx[n_new] = a_idx[a_at];
        m->new_val[n_new++] = a_val[a_at];
    }
    return strux_sparse_blocks_set(&m->alpha, i, n_new, m->new_idx, m->new_val, n_parts);
}

static strux_status sdca_visit(strux_solver *s, dual_data *d, int64_t i)
{
    sdca_data *m = d->mdata;
    return m->per_part ? part_visit(s, d, m, i) : strux_dual_corner_step(s, d, i);
}

/* The per-part state's bytes and non-zero α_ik, logged with --verbose (issue 12: the dual state
 * of 1-vs-All with many labels). */
static void log_dual_state(const dual_data *d, const sdca_data *m)
{
    int64_t n = d->n_local, n_c = d->off[n], nz = 0;
    size_t bytes = (size_t)n * (sizeof *d->off + sizeof *d->b + sizeof *m->n_parts +
                                sizeof *m->neg_ptr + sizeof *m->xx) +
                   (size_t)m->neg_ptr[n] * sizeof *m->neg;
    if (m->shrink) bytes += (size_t)(n_c + 63) / 64 * sizeof *m->sh.out;
    if (m->sparse) {
        bytes += strux_sparse_blocks_bytes(&m->alpha);
        nz = m->alpha.live;
    } else {
        bytes += (size_t)n_c * sizeof *d->c;
        for (int64_t q = 0; q < n_c; q++)
            nz += d->c[q] != 0;
    }
    strux_log(STRUX_LOG_DEBUG, "sdca: dual state %.3f MB (%s blocks), %lld of %lld α non-zero",
              (double)bytes / 1e6, m->sparse ? "sparse" : "dense", (long long)nz, (long long)n_c);
}

/* Every part's thresholds, returns, levels and stops from its range over all ranks (shrink.h). */
static strux_status sdca_epoch_done(strux_solver *s, dual_data *d)
{
    sdca_data *m = d->mdata;
    if (m->per_part && strux_log_level_get() >= STRUX_LOG_DEBUG) log_dual_state(d, m);
    if (!m->shrink) return STRUX_OK;
    return strux_shrink_epoch_done(&m->sh, s->comm, d->off, s->ds->n_local, NULL);
}

static void sdca_reset(dual_data *d)
{
    sdca_data *m = d->mdata;
    if (m->shrink) strux_shrink_reset(&m->sh);
}

/* Checkpoint, per example: the sparse lists, then the shrunk flags. */
static strux_status sdca_save(const strux_solver *s, const dual_data *d, int64_t i0, int64_t i1,
                              strux_blob *b)
{
    (void)s;
    const sdca_data *m = d->mdata;
    if (m->sparse) STRUX_TRY(strux_sparse_blocks_save(&m->alpha, i0, i1, b));
    return m->shrink ? strux_shrink_save(&m->sh, d->off, i0, i1, b) : STRUX_OK;
}

static strux_status sdca_load(strux_solver *s, dual_data *d, int64_t i0, int64_t i1, strux_blob *b)
{
    (void)s;
    sdca_data *m = d->mdata;
    if (m->sparse) STRUX_TRY(strux_sparse_blocks_load(&m->alpha, i0, i1, m->p_max, b));
    return m->shrink ? strux_shrink_load(&m->sh, d->off, i0, i1, b) : STRUX_OK;
}

/* The epoch's ranges so far, over all ranks (a checkpoint between rounds). */
static strux_status sdca_reduce_partial(strux_solver *s, dual_data *d)
{
    sdca_data *m = d->mdata;
    return m->shrink ? strux_shrink_reduce_partial(&m->sh, s->comm) : STRUX_OK;
}

/* Checkpoint, global: the shrinking state of every label. */
static strux_status sdca_save_global(const dual_data *d, strux_blob *b)
{
    const sdca_data *m = d->mdata;
    return m->shrink ? strux_shrink_save_global(&m->sh, b) : STRUX_OK;
}

static strux_status sdca_load_global(dual_data *d, strux_blob *b)
{
    sdca_data *m = d->mdata;
    return m->shrink ? strux_shrink_load_global(&m->sh, b) : STRUX_OK;
}

static void sdca_destroy(dual_data *d)
{
    sdca_data *m = d->mdata;
    if (!m) return;
    strux_free(&m->sigma);
    if (m->shrink) strux_shrink_free(&m->sh);
    if (m->sparse) strux_sparse_blocks_free(&m->alpha);
    strux_free(&m->n_parts);
    strux_free(&m->neg_ptr);
    strux_free(&m->neg);
    strux_free(&m->xx);
    strux_free(&m->rows);
    strux_free(&m->scores);
    strux_free(&m->moved);
    strux_free(&m->dc);
    strux_free(&m->new_idx);
    strux_free(&m->new_val);
    strux_free(&d->mdata);
}

static const dual_method sdca_method = {.visit = sdca_visit,
                                        .setup = sdca_setup,
                                        .epoch_done = sdca_epoch_done,
                                        .reset = sdca_reset,
                                        .save = sdca_save,
                                        .load = sdca_load,
                                        .save_global = sdca_save_global,
                                        .load_global = sdca_load_global,
                                        .reduce_partial = sdca_reduce_partial,
                                        .destroy = sdca_destroy};

strux_status strux_solver_create_sdca(strux_solver *s)
{
    return strux_dual_attach(s, s->opt.active_sets ? &strux_sdca_active_method : &sdca_method);
}
