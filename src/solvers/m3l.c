/* solvers/m3l.c - solver.type = m3l: max-margin multi-label learning with a label-correlation
 * prior R (Hariharan, Vishwanathan, Varma; specs/m3l.md §1, §3; issue 16), the linear dual
 * coordinate ascent on the dual block engine (dual.h). The objective is
 *     J(Z) = (λ/2)·tr(Z R⁻¹ Zᵀ) + (1/W)·Σ_i v_i·Σ_l max(0, 1 − y_il·z_l·x_i),   y_il = ±1,
 * the paper's Hamming-loss M3L with C = 1/(2λn); for a singular R it is read in W-form (R = PᵀP,
 * §1.9) and never formed with R⁻¹. Its dual has one coordinate α_il ∈ [0, 1] per (example,
 * label); the engine keeps example i's block as the coefficients c_il = y_il·v_i·α_il/(λW) of
 * U = Σ_i x_i c_iᵀ (the weights R = I would give), and the model holds Z = U·R: a change dc of
 * the block moves Z by x_i ⊗ R·dc (one strux_dual_move, only the labels R·dc touches). The visit
 * of example i is our dual block (issue 16): the scores s_l = z_l·x_i of its active labels once
 * (O(nnz·L)), then for each label in turn the exact clipped step
 *     α_il ← clip(α_il + λW/v_i·(1 − y_il·s_l) / (σ′·R_ll·||x_i||²), 0, 1)
 * (Hsieh et al. 2008 with the curvature R_ll), after which the scores stay exact through
 * s_k += σ′·R_kl·||x_i||²·dc_l over the non-zeros of R's column l (O(L) for a dense R, O(1) for
 * R = I). With R = I this is sdca's per-part path step for step (the same order, the same
 * arithmetic; with shrinking too, as both use shrink.h). Shrinking (m3l.shrinking, §3.5; shrink.h,
 * the one per-label shrinking of the dual solvers): per-label active sets; the coordinate (i, l)
 * leaves label l's passes when it sits at a bound with its projected gradient beyond label l's
 * threshold; the thresholds are the R-coupled extremes of the last epoch's projected gradients,
 *     ub_l = max_k |R_kl|·max_j ĝ_jk,   lb_l = min_k |R_kl|·min_j ĝ_jk
 * (reduced over ranks: 2L numbers), and a label whose range has closed below its level gets all
 * its coordinates back for a full pass, after which a closed range moves it to a finer level; a
 * label never stops (the coupling, R = I included). m3l.pg_tol (§3.6): the run stops after a full
 * pass of every label with every |projected gradient| within it; within it after a pass with
 * coordinates out, every label returns for that verification pass. m3l.block_switch: label-block
 * passes (§3.4) once an epoch's largest |projected gradient| is below it. The certificate
 * scores every coordinate, shrunk or not, with the regulariser in W-form
 * (λ/2)·Σ_l u_l·z_l = (λ/2)·Σ_i c_i·Zᵀx_i: primal J(Z), dual Σ_i b_i − (λ/2)·Σ_l u_l·z_l. */
#include "dual.h"
#include "m3l.h"
#include "shrink.h"
#include "strux/io.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define M3L_AHEAD 8 /* label blocks: steps fetched ahead */
#define M3L_BLOCK_STREAM 0x4d334c4200000001ULL /* "M3LB": the label order of label blocks */

const strux_opt_spec strux_m3l_opt_specs[] = {
    {"m3l.prior", STRUX_OPT_CHOICE, offsetof(strux_m3l_options, prior), "identity", 0, 0,
     "identity|empirical|file|zero_shot",
     "label-correlation prior R of solver.type = m3l and m3l_kernel: identity (1-vs-All), empirical (from the "
     "label vectors of m3l.prior_data by m3l.empirical), file (m3l.r_file), zero_shot (R = Σ_c "
     "p(c)·y_c y_cᵀ over the test classes of m3l.classes); any symmetric PSD R with a positive "
     "diagonal, singular included"},
    {"m3l.empirical", STRUX_OPT_CHOICE, offsetof(strux_m3l_options, empirical), "moment", 0, 0,
     "moment|cooccurrence|correlation",
     "estimator of an empirical prior: moment R = (1/n)·Σ y yᵀ over ±1 labels (the paper's), "
     "cooccurrence R_kl = n_kl/√(n_k·n_l), correlation (Pearson, 0/1 indicators); a label "
     "without rows or variance gets a unit row and column"},
    {"m3l.prior_data", STRUX_OPT_STRING, offsetof(strux_m3l_options, prior_data), "", 0, 0, NULL,
     "LIBSVM multi-label file whose label vectors estimate an empirical prior (only its labels "
     "are read; the paper's mismatch protocol estimates from other rows); empty: data.train"},
    {"m3l.r_file", STRUX_OPT_STRING, offsetof(strux_m3l_options, r_file), "", 0, 0, NULL,
     "prior = file: L rows of L numbers (blank or comma separated, '#' comment lines), or a "
     "model file of an m3l or m3l_kernel run (its /m3l/R)"},
    {"m3l.classes", STRUX_OPT_STRING, offsetof(strux_m3l_options, classes), "", 0, 0, NULL,
     "prior = zero_shot: one test class per line, `p l1,l2,...` (weight p > 0, normalised to "
     "sum 1; the 0-based labels the class has, all others absent)"},
    {"m3l.shrink", STRUX_OPT_DOUBLE, offsetof(strux_m3l_options, shrink), "0", 0, 1, NULL,
     "shrinkage of the prior towards I: R ← (1 − s)·R + s·I (makes an indefinite file PSD)"},
    {"m3l.shrinking", STRUX_OPT_BOOL, offsetof(strux_m3l_options, shrinking), "true", 0, 0, NULL,
     "per-label active sets with R-coupled bounds (specs/m3l.md §3.5): a coordinate at a bound "
     "whose projected gradient lies beyond its label's bound leaves the passes until that "
     "label's range closes; the certificates always score every coordinate; false for "
     "ablations"},
    {"m3l.pg_tol", STRUX_OPT_DOUBLE, offsetof(strux_m3l_options, pg_tol), "0", 0, 1e6, NULL,
     "stop once every projected gradient is at most this in LIBLINEAR's and LIBSVM's -e units "
     "(the hinge's gradient 1 − y·z·x; m3l: over a full pass with every coordinate visited, "
     "m3l_kernel: its τ/2, specs/m3l.md §2.8); 0: off (solver.tol's gap alone stops)"},
    {"m3l.block_switch", STRUX_OPT_DOUBLE, offsetof(strux_m3l_options, block_switch), "0", 0, 1e6,
     NULL,
     "m3l: once a pass's max |projected gradient| (-e units) falls below this, passes visit "
     "label blocks (a label's next coordinates in turn, its classifier moved at once, the "
     "others' moves gathered and applied once per block, specs/m3l.md §3.3-3.4) instead of "
     "examples; 0: example blocks throughout"},
    {"m3l.steps_per_label", STRUX_OPT_INT, offsetof(strux_m3l_options, steps_per_label), "0", 0,
     1e9, NULL,
     "m3l_kernel: SMO steps on the chosen label per outer iteration, before the delayed update "
     "of the other labels (the paper's T; 0: L)"},
    {"m3l.schedule", STRUX_OPT_CHOICE, offsetof(strux_m3l_options, schedule), "joint", 0, 0,
     "joint|per_label",
     "m3l_kernel: joint (each outer iteration on the label of largest |projected gradient|) or "
     "per_label (each label until its projected gradients are within m3l.pg_tol, one after "
     "another, the kernel cache emptied between them: the 1-vs-All baseline)"},
    {NULL},
};

typedef struct m3l_data {
    int32_t L;
    strux_m3l_prior prior; /* R (R = I: the moves and score updates of sdca) */
    double *sigma;      /* σ_l = −y_il of one example's hinges (set-up) */
    signed char *sign;  /* per coordinate: σ_l of its hinge (LIBLINEAR's y, kept from set-up) */
    double *xx;         /* per example: ||x_i||² (LIBLINEAR's QD without R_ll) */
    int32_t *rows;      /* its active labels */
    double *s;          /* scores z_l·x_i of the visited example, by label */
    double *tmp;        /* scores of the active labels (sparse scoring) */
    double *dc;         /* the block change of the visit */
    double *rdc;        /* R·dc */
    strux_shrink sh;    /* per-label active sets coupled through |R|, pg_tol's max |ĝ| (shrink.h) */
    int converged;             /* m3l.pg_tol held over a full pass */
    int blocks;                /* passes of label blocks (m3l.block_switch, §3.4 phase 2) */
    int32_t *list;             /* L × n_local: each label's coordinates of a pass, in order */
    int64_t *cnt, *cur;        /* per label: its coordinates in the pass, the next one */
    int32_t *labels;           /* the labels with coordinates left in the pass */
} m3l_data;

static struct strux_solver_ops m3l_ops; /* strux_dual_ops with the W-form certificate */

static strux_status m3l_setup(strux_solver *s, dual_data *d)
{
    m3l_data *m;
    STRUX_TRY(strux_alloc(&m, sizeof *m));
    d->mdata = m;
    const strux_dataset *ds = s->ds;
    int32_t L = strux_model_n_rows(s->model);
    m->L = L;
    /* the flags were checked at creation; the block must be one coefficient per label */
    for (int64_t i = 0; i < ds->n_local; i++) {
        strux_block_shape bs = strux_task_block_shape(s->task, ds, i);
        STRUX_CHECK(bs.p == L && bs.S == 1, STRUX_ERR_INTERNAL,
                    "m3l: example %lld has a dual block of %lld coefficients over %d rows, not "
                    "one per label (%d)",
                    (long long)(ds->first + i), (long long)bs.p, (int)bs.S, (int)L);
    }
    STRUX_TRY(strux_m3l_prior_build(&s->opt.m3l, s->comm, ds, L, &m->prior));
    size_t n = (size_t)L + 1;
    STRUX_TRY(strux_alloc_array(&m->sigma, n > (size_t)d->pot.cap + 1 ? n : (size_t)d->pot.cap + 1,
                                sizeof *m->sigma));
    STRUX_TRY(strux_alloc_array(&m->rows, n, sizeof *m->rows));
    STRUX_TRY(strux_alloc_array(&m->s, n, sizeof *m->s));
    STRUX_TRY(strux_alloc_array(&m->tmp, n, sizeof *m->tmp));
    STRUX_TRY(strux_alloc_array(&m->dc, n, sizeof *m->dc));
    STRUX_TRY(strux_alloc_array(&m->rdc, n, sizeof *m->rdc));
    STRUX_TRY(strux_alloc_array(&m->sign, (size_t)d->off[ds->n_local] + 1, sizeof *m->sign));
    STRUX_TRY(strux_alloc_array(&m->xx, (size_t)ds->n_local + 1, sizeof *m->xx));
    for (int64_t i = 0; i < ds->n_local; i++) {
        STRUX_TRY(strux_task_truth(s->task, ds, i, &d->truth));
        int32_t n_parts = strux_task_hinge_parts(s->task, &d->truth, m->sigma);
        STRUX_CHECK(n_parts == L, STRUX_ERR_INTERNAL, "m3l: example %lld has %d hinges, not %d",
                    (long long)(ds->first + i), (int)n_parts, (int)L);
        for (int32_t k = 0; k < L; k++)
            m->sign[d->off[i] + k] = m->sigma[k] > 0 ? 1 : -1;
        strux_block_shape bs = strux_task_block_shape(s->task, ds, i);
        strux_task_block_gram(ds, &bs, i, d->X);
        m->xx[i] = d->X[0];
    }
    if (s->opt.m3l.block_switch > 0) {
        STRUX_TRY(strux_alloc_array(&m->list, (size_t)L * (size_t)ds->n_local + 1, sizeof *m->list));
        STRUX_TRY(strux_alloc_array(&m->cnt, n, sizeof *m->cnt));
        STRUX_TRY(strux_alloc_array(&m->cur, n, sizeof *m->cur));
        STRUX_TRY(strux_alloc_array(&m->labels, n, sizeof *m->labels));
    }
    return strux_shrink_init(&m->sh, L, d->off[ds->n_local], s->opt.m3l.shrinking);
}

/* The exact clipped step of coordinate (i, k) (§3.1; Hsieh et al. 2008 with curvature R_kk) from
 * its score z_k·x_i: its block coefficient and loss share updated; returns the coefficient's
 * change, 0 when it did not move or left the passes (shrunk: its flag set). lambda_n = λW/v_i,
 * sx = σ′·||x_i||². */
static double coord_step(dual_data *d, m3l_data *m, int64_t i, int32_t k, double score,
                         double lambda_n, double sx, double v)
{
    int64_t c = d->off[i] + k;
    double sk = m->sign[c], alpha = strux_box_alpha(d->c[c], sk, lambda_n);
    double grad = 1 + sk * score; /* W/v·∂D/∂α_ik; LIBLINEAR's G is −grad */
    if (strux_shrink_test(&m->sh, k, c, alpha, -grad)) return 0;
    double a_new = alpha + lambda_n * grad / (sx * m->prior.R[(int64_t)k * m->L + k]);
    a_new = a_new < 0 ? 0 : a_new > 1 ? 1 : a_new;
    if (a_new == alpha) return 0;
    double delta = -(a_new - alpha) * sk / lambda_n;
    d->c[c] += delta;
    d->b[i] += v * (a_new - alpha) / d->n;
    return delta;
}

/* Example i's block: every active label's exact clipped step in label order, the scores kept
 * exact through R's columns, then one move of Z by x_i ⊗ R·dc. */
static strux_status m3l_visit(strux_solver *s, dual_data *d, int64_t i)
{
    m3l_data *m = d->mdata;
    const strux_dataset *ds = s->ds;
    int32_t L = m->L;
    double v = strux_dataset_weight(ds, i), xx = m->xx[i];
    if (!(v > 0) || !(xx > 0)) return STRUX_OK; /* hinges that weigh 0 or do not depend on Z */
    int32_t n_act = strux_shrink_active(&m->sh, d->off[i], L, m->rows);
    if (n_act == 0) return STRUX_OK;
    double lambda_n = s->opt.lambda * d->n / v, sx = d->sigma * xx;
    int64_t r = ds->ex_ptr ? ds->ex_ptr[i] : i;
    if (2 * n_act >= L) {
        strux_model_scores(d->wl, &ds->x, r, 0, L, m->s);
    } else {
        strux_model_scores_rows(d->wl, &ds->x, r, m->rows, n_act, m->tmp);
        for (int32_t q = 0; q < n_act; q++)
            m->s[m->rows[q]] = m->tmp[q];
    }
    int moved = 0;
    for (int32_t q = 0; q < n_act; q++) {
        int32_t k = m->rows[q];
        double delta = coord_step(d, m, i, k, m->s[k], lambda_n, sx, v);
        if (delta == 0) continue;
        m->dc[k] = delta;
        moved = 1;
        if (!m->prior.identity) /* the labels after k see the move of Z (R's column k) */
            for (int64_t p = m->prior.col_ptr[k]; p < m->prior.col_ptr[k + 1]; p++)
                m->s[m->prior.col_idx[p]] += sx * m->prior.col_val[p] * delta;
    }
    if (!moved) return STRUX_OK;
    if (m->prior.identity) {
        strux_dual_move(s, d, i, m->dc);
    } else {
        memset(m->rdc, 0, (size_t)L * sizeof *m->rdc);
        for (int32_t q = 0; q < n_act; q++) {
            int32_t l = m->rows[q];
            if (m->dc[l] == 0) continue;
            for (int64_t p = m->prior.col_ptr[l]; p < m->prior.col_ptr[l + 1]; p++)
                m->rdc[m->prior.col_idx[p]] += m->prior.col_val[p] * m->dc[l];
        }
        strux_dual_move(s, d, i, m->rdc);
    }
    for (int32_t q = 0; q < n_act; q++) /* dc is zero between visits */
        m->dc[m->rows[q]] = 0;
    return STRUX_OK;
}

/* A pass of label blocks (§3.3-3.4 phase 2, A8's schedule): each label's active coordinates among
 * the pass's examples, in the epoch's example order; a label drawn uniformly among those with
 * coordinates left takes its next L steps, z_l scored alone; each move changes Z by
 * x_i ⊗ R·dc at once (within a block only label l is visited, so the paper's delayed update of
 * the other labels gives the same iterates; through the store's rows of x it costs what the
 * delayed dense sum would for sparse data). The draws are keyed by (seed, epoch, the pass's
 * first position and example), so a data block's pass does not depend on the rank count. */
static strux_status m3l_pass(strux_solver *s, dual_data *d, int64_t i0, int64_t i1, int64_t j0,
                             int64_t j1, int *done)
{
    m3l_data *m = d->mdata;
    *done = m->blocks;
    if (!m->blocks) return STRUX_OK;
    const strux_dataset *ds = s->ds;
    int32_t L = m->L, n_lab = 0;
    int64_t n = ds->n_local;
    memset(m->cnt, 0, (size_t)L * sizeof *m->cnt);
    for (int64_t j = j0; j < j1; j++) {
        int64_t i = d->perm[j] - ds->first;
        if (i < i0 || i >= i1 || !(m->xx[i] > 0) || !(strux_dataset_weight(ds, i) > 0)) continue;
        int32_t n_act = strux_shrink_active(&m->sh, d->off[i], L, m->rows);
        for (int32_t q = 0; q < n_act; q++) {
            int32_t k = m->rows[q];
            m->list[k * n + m->cnt[k]++] = (int32_t)i;
        }
    }
    for (int32_t k = 0; k < L; k++) {
        m->cur[k] = 0;
        if (m->cnt[k] > 0) m->labels[n_lab++] = k;
    }
    strux_rng rng;
    strux_rng_init(&rng, (uint64_t)s->opt.seed, M3L_BLOCK_STREAM ^ (uint64_t)(ds->first + i0),
                   (uint64_t)s->epoch * (uint64_t)(ds->n_global + 1) + (uint64_t)j0);
    while (n_lab > 0) {
        int32_t q = (int32_t)strux_rng_below(&rng, (uint64_t)n_lab), k = m->labels[q];
        const int32_t *next = m->list + k * n;
        for (int32_t t = 0; t < L && m->cur[k] < m->cnt[k]; t++) {
            /* a label's coordinates lie L apart in the blocks: fetch ahead what the step
             * M3L_AHEAD later reads (its row's features, coefficient and sign) */
            if (m->cur[k] + M3L_AHEAD < m->cnt[k]) {
                int64_t a = next[m->cur[k] + M3L_AHEAD], p = ds->x.ptr[a];
                __builtin_prefetch(ds->x.col + p, 0, 1);
                __builtin_prefetch(ds->x.val + p, 0, 1);
                __builtin_prefetch(d->c + d->off[a] + k, 1, 1);
                __builtin_prefetch(m->sign + d->off[a] + k, 0, 1);
            }
            int64_t i = next[m->cur[k]++];
            double v = strux_dataset_weight(ds, i), score;
            strux_model_scores(d->wl, &ds->x, i, k, 1, &score);
            double delta =
                coord_step(d, m, i, k, score, s->opt.lambda * d->n / v, d->sigma * m->xx[i], v);
            if (delta == 0) continue;
            if (m->prior.identity) { /* B_i·dc with one coefficient: row k of x_i */
                strux_model_add_row_scored(d->wl, &ds->x, i, k, d->sigma * delta, score,
                                           m->xx[i]);
                continue;
            }
            for (int64_t p = m->prior.col_ptr[k]; p < m->prior.col_ptr[k + 1]; p++)
                m->rdc[m->prior.col_idx[p]] = m->prior.col_val[p] * delta;
            strux_dual_move(s, d, i, m->rdc);
            for (int64_t p = m->prior.col_ptr[k]; p < m->prior.col_ptr[k + 1]; p++)
                m->rdc[m->prior.col_idx[p]] = 0;
        }
        if (m->cur[k] == m->cnt[k]) m->labels[q] = m->labels[--n_lab];
    }
    return STRUX_OK;
}

/* The epoch's per-label ranges over all ranks coupled through |R| (§3.5; R = I too, so that no
 * label stops) become the thresholds, returns and levels (shrink.h); m3l.pg_tol's stop or
 * verification pass (§3.6) and m3l.block_switch from the epoch's largest |projected gradient|. */
static strux_status m3l_epoch_done(strux_solver *s, dual_data *d)
{
    m3l_data *m = d->mdata;
    const strux_m3l_prior *p = &m->prior;
    int64_t n = s->ds->n_local;
    strux_shrink_coupling abs_r = {p->col_ptr, p->col_idx, p->col_val};
    STRUX_TRY(strux_shrink_epoch_done(&m->sh, s->comm, d->off, n, &abs_r));
    double tol = s->opt.m3l.pg_tol;
    m->converged = tol > 0 && strux_shrink_pg_tol(&m->sh, d->off, n, tol);
    if (!m->blocks && s->opt.m3l.block_switch > 0 && m->sh.pg_abs < s->opt.m3l.block_switch) {
        m->blocks = 1;
        strux_log(STRUX_LOG_INFO, "m3l: label blocks from epoch %lld (max |projected gradient| "
                  "%.3g below m3l.block_switch = %g)",
                  (long long)s->epoch + 2, m->sh.pg_abs, s->opt.m3l.block_switch);
    }
    return STRUX_OK;
}

static void m3l_reset(dual_data *d)
{
    m3l_data *m = d->mdata;
    strux_shrink_reset(&m->sh);
    m->converged = 0;
    m->blocks = 0;
}

static int m3l_converged(const strux_solver *s)
{
    const dual_data *d = s->data;
    return d && d->mdata && ((const m3l_data *)d->mdata)->converged;
}

/* Primal J(Z) = (λ/2)·Σ_l u_l·z_l + loss (W-form, §1.9; the loss is the engine's exact-search
 * pass), dual Σ_i b_i − (λ/2)·Σ_l u_l·z_l, with Σ_l u_l·z_l = Σ_i c_i·Zᵀx_i over every
 * coordinate. */
static strux_status m3l_certificate(strux_solver *s, strux_certificate *c)
{
    const dual_data *d = s->data;
    m3l_data *m = d->mdata;
    const strux_dataset *ds = s->ds;
    double sums[2] = {0, 0};
    for (int64_t i = 0; i < ds->n_local; i++) {
        int64_t r = ds->ex_ptr ? ds->ex_ptr[i] : i;
        strux_model_scores(d->w, &ds->x, r, 0, m->L, m->tmp);
        sums[0] += strux_dot(m->L, d->c + d->off[i], m->tmp);
        sums[1] += d->b[i];
    }
    STRUX_TRY(strux_comm_allreduce_sum(s->comm, sums, 2));
    double reg = 0.5 * s->opt.lambda * sums[0];
    c->primal = c->loss + reg;
    c->dual = sums[1] - reg;
    c->gap = c->primal - c->dual;
    STRUX_CHECK(isfinite(c->primal) && isfinite(c->dual), STRUX_ERR_NUMERIC,
                "m3l objective: primal %g, dual %g", c->primal, c->dual);
    return STRUX_OK;
}

/* Checkpoint, per example: the shrunk flags of its coordinates (shrink.h). */
static strux_status m3l_save(const strux_solver *s, const dual_data *d, int64_t i0, int64_t i1,
                             strux_blob *b)
{
    (void)s;
    const m3l_data *m = d->mdata;
    return strux_shrink_save(&m->sh, d->off, i0, i1, b);
}

static strux_status m3l_load(strux_solver *s, dual_data *d, int64_t i0, int64_t i1, strux_blob *b)
{
    (void)s;
    m3l_data *m = d->mdata;
    return strux_shrink_load(&m->sh, d->off, i0, i1, b);
}

/* The epoch's per-label ranges so far, over all ranks (a checkpoint between rounds). */
static strux_status m3l_reduce_partial(strux_solver *s, dual_data *d)
{
    m3l_data *m = d->mdata;
    return strux_shrink_reduce_partial(&m->sh, s->comm);
}

/* Checkpoint, global: the shrinking state of every label and the schedule (label blocks or not). */
static strux_status m3l_save_global(const dual_data *d, strux_blob *b)
{
    const m3l_data *m = d->mdata;
    STRUX_TRY(strux_shrink_save_global(&m->sh, b));
    return strux_blob_put(b, &m->blocks, sizeof m->blocks);
}

static strux_status m3l_load_global(dual_data *d, strux_blob *b)
{
    m3l_data *m = d->mdata;
    STRUX_TRY(strux_shrink_load_global(&m->sh, b));
    return strux_blob_get(b, &m->blocks, sizeof m->blocks, "m3l schedule");
}

static void m3l_destroy(dual_data *d)
{
    m3l_data *m = d->mdata;
    if (!m) return;
    strux_m3l_prior_free(&m->prior);
    strux_free(&m->sigma);
    strux_free(&m->rows);
    strux_free(&m->s);
    strux_free(&m->tmp);
    strux_free(&m->dc);
    strux_free(&m->rdc);
    strux_free(&m->sign);
    strux_free(&m->xx);
    strux_free(&m->list);
    strux_free(&m->cnt);
    strux_free(&m->cur);
    strux_free(&m->labels);
    strux_shrink_free(&m->sh);
    strux_free(&d->mdata);
}

static const dual_method m3l_method = {.visit = m3l_visit,
                                       .pass = m3l_pass,
                                       .setup = m3l_setup,
                                       .epoch_done = m3l_epoch_done,
                                       .reset = m3l_reset,
                                       .save = m3l_save,
                                       .load = m3l_load,
                                       .save_global = m3l_save_global,
                                       .load_global = m3l_load_global,
                                       .reduce_partial = m3l_reduce_partial,
                                       .destroy = m3l_destroy};

strux_status strux_solver_create_m3l(strux_solver *s)
{
    STRUX_TRY(strux_dual_attach(s, &m3l_method));
    m3l_ops = strux_dual_ops;
    m3l_ops.certificate = m3l_certificate;
    m3l_ops.converged = m3l_converged;
    s->ops = &m3l_ops;
    return STRUX_OK;
}

strux_status strux_solver_m3l_info(const strux_solver *s, struct strux_m3l_info *out)
{
    *out = (strux_m3l_info){0};
    const strux_m3l_prior *p = strux_m3l_kernel_prior(s);
    if (s->ops == &m3l_ops && s->data) p = &((const m3l_data *)((const dual_data *)s->data)->mdata)->prior;
    if (!p) return STRUX_OK; /* another solver: no prior */
    return strux_m3l_prior_describe(p, &s->opt.m3l, s->opt.lambda, s->ds->weight_sum, out);
}
