/* solvers/sdca.c - stochastic dual coordinate ascent (Shalev-Shwartz & Zhang, JMLR 2013).
 * Where the task's margin-rescaled loss is a sum of independent binary hinges (multilabel with
 * Hamming loss: the 1-vs-All SVM, strux_task_hinge_parts) every part k of example i has its own
 * dual coordinate α_ik ∈ [0, 1], kept as block coefficient c_ik = −σ_k·α_ik/(λn), and the visit
 * maximises the dual exactly in each coordinate:
 *     α_ik ← clip(α_ik + λn·(1 + σ_k·w_k·x_i) / (σ′·||x_i||²), 0, 1)
 * (LIBLINEAR's dual coordinate descent for the L1-loss SVM, Hsieh et al. ICML 2008, with
 * C = 1/(λn), without shrinking; no oracle call is needed). For any other task or surrogate the
 * coordinates are the example's block and the closed-form step along the oracle's corner is
 * BCFW's line-searched step (slack_bicriteria.md §4.3), shared with bcfw.c. */
#include "dual.h"

#include <string.h>

typedef struct sdca_data {
    int per_part;  /* the loss separates into binary hinges */
    double *sigma; /* signs σ_k of the visited example's parts */
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
    strux_log(STRUX_LOG_DEBUG, "sdca: %s",
              m->per_part ? "one coordinate per binary hinge" : "block steps along oracle corners");
    return STRUX_OK;
}

static strux_status part_visit(strux_solver *s, dual_data *d, sdca_data *m, int64_t i)
{
    STRUX_TRY(strux_dual_potentials(s, d, i));
    int32_t n_parts = strux_task_hinge_parts(s->task, &d->truth, m->sigma);
    strux_block_shape bs = strux_task_block_shape(s->task, s->ds, i);
    strux_task_block_gram(s->ds, &bs, i, d->X);
    /* λW/v_i: with a loss weight v_i (dual.h) the coordinate keeps its box [0, 1] and its
     * coefficient scales, c_ik = −σ_k·v_i·α_ik/(λW) */
    double v = strux_dataset_weight(s->ds, i), xx = d->X[0], lambda_n = s->opt.lambda * d->n / v;
    if (!(xx > 0) || !(v > 0)) return STRUX_OK; /* hinges that do not depend on w, or weigh 0 */
    double *ci = d->c + d->off[i], *dir = d->dir;
    memset(dir, 0, (size_t)bs.p * sizeof *dir);
    int moved = 0;
    for (int32_t k = 0; k < n_parts; k++) {
        double sk = m->sigma[k], alpha = -ci[k] * sk * lambda_n;
        double grad = 1 + sk * d->pot.s[k]; /* n·∂D/∂α_ik */
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

static void sdca_destroy(dual_data *d)
{
    sdca_data *m = d->mdata;
    if (!m) return;
    strux_free(&m->sigma);
    strux_free(&d->mdata);
}

static const dual_method sdca_method = {
    .visit = sdca_visit, .setup = sdca_setup, .destroy = sdca_destroy};

strux_status strux_solver_create_sdca(strux_solver *s)
{
    return strux_dual_attach(s, &sdca_method);
}
