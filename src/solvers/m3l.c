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
 * arithmetic). Shrinking (m3l.shrinking, §3.5): per-label active sets; the coordinate (i, l)
 * leaves label l's passes when it sits at a bound with its projected gradient beyond label l's
 * threshold; the thresholds are the R-coupled extremes of the last epoch's projected gradients,
 *     ub_l = max_k |R_kl|·max_j ĝ_jk,   lb_l = min_k |R_kl|·min_j ĝ_jk
 * (reduced over ranks: 2L numbers); a label whose range has closed below its level gets all its
 * coordinates back, and after a full pass that closes too a finer level (shrink.h). The
 * certificate scores every coordinate, shrunk or not (the final verification pass), with the
 * regulariser in W-form (λ/2)·Σ_l u_l·z_l = (λ/2)·Σ_i c_i·Zᵀx_i: primal J(Z), dual
 * Σ_i b_i − (λ/2)·Σ_l u_l·z_l. */
#include "dual.h"
#include "m3l.h"
#include "shrink.h"
#include "strux/io.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const strux_opt_spec strux_m3l_opt_specs[] = {
    {"m3l.prior", STRUX_OPT_CHOICE, offsetof(strux_m3l_options, prior), "identity", 0, 0,
     "identity|empirical|file|zero_shot",
     "label-correlation prior R of solver.type = m3l: identity (1-vs-All), empirical (from the "
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
     "prior = file: L rows of L numbers (blank or comma separated, '#' comment lines)"},
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
    {NULL},
};

typedef struct m3l_data {
    int32_t L;
    double *R;          /* L×L, as used (after shrinkage) */
    int identity;       /* R = I exactly: the moves and score updates of sdca */
    int64_t *col_ptr;   /* non-zeros of R's columns (R symmetric: its rows) */
    int32_t *col_idx;
    double *col_val;
    double *sigma;      /* σ_l = −y_il of the visited example's hinges */
    int32_t *rows;      /* its active labels */
    double *s;          /* scores z_l·x_i of the visited example, by label */
    double *tmp;        /* scores of the active labels (sparse scoring) */
    double *dc;         /* the block change of the visit */
    double *rdc;        /* R·dc */
    strux_shrink sh;    /* per-label active sets, thresholds coupled through |R| (shrink.h) */
    int shrink;
    double eig_min, eig_max;
    char source[2 * STRUX_OPT_STR + 64]; /* where R came from (log, model file) */
} m3l_data;

static struct strux_solver_ops m3l_ops; /* strux_dual_ops with the W-form certificate */

/* R from the [m3l] keys (every rank the same: empirical counts summed over ranks). */
static strux_status build_prior(strux_solver *s, m3l_data *m)
{
    const strux_m3l_options *o = &s->opt.m3l;
    int32_t L = m->L;
    char *source = m->source;
    const size_t n_source = sizeof m->source;
    if (strcmp(o->prior, "identity") == 0) {
        strux_m3l_prior_identity(L, m->R);
        snprintf(source, n_source, "m3l.prior = identity");
    } else if (strcmp(o->prior, "empirical") == 0) {
        strux_m3l_empirical est = STRUX_M3L_EMPIRICAL_MOMENT;
        if (strcmp(o->empirical, "cooccurrence") == 0) est = STRUX_M3L_EMPIRICAL_COOCCURRENCE;
        if (strcmp(o->empirical, "correlation") == 0) est = STRUX_M3L_EMPIRICAL_CORRELATION;
        int64_t n_counts = strux_m3l_prior_counts_len(L);
        double *counts = NULL;
        strux_dataset *pds = NULL;
        strux_status st = strux_alloc_array(&counts, (size_t)n_counts, sizeof *counts);
        if (st == STRUX_OK && o->prior_data[0]) {
            strux_read_options ro = {.rank = strux_comm_rank(s->comm),
                                     .n_ranks = strux_comm_size(s->comm),
                                     .n_labels = L};
            st = strux_dataset_read_libsvm(o->prior_data, &ro, &pds);
        }
        if (st == STRUX_OK) st = strux_m3l_prior_counts_add(pds ? pds : s->ds, L, counts);
        strux_dataset_destroy(&pds);
        st = strux_comm_agree(s->comm, st);
        if (st == STRUX_OK) st = strux_comm_allreduce_sum(s->comm, counts, n_counts);
        if (st == STRUX_OK) strux_m3l_prior_empirical(counts, L, est, m->R);
        strux_free(&counts);
        STRUX_TRY(st);
        snprintf(source, n_source, "m3l.prior = empirical (%s of %s)", o->empirical,
                 o->prior_data[0] ? o->prior_data : "data.train");
    } else if (strcmp(o->prior, "file") == 0) {
        STRUX_CHECK(o->r_file[0], STRUX_ERR_CONFIG, "m3l.prior = file needs m3l.r_file");
        STRUX_TRY(strux_m3l_prior_read(o->r_file, L, m->R));
        snprintf(source, n_source, "m3l.r_file = %s", o->r_file);
    } else {
        STRUX_CHECK(o->classes[0], STRUX_ERR_CONFIG, "m3l.prior = zero_shot needs m3l.classes");
        STRUX_TRY(strux_m3l_prior_zero_shot(o->classes, L, m->R));
        snprintf(source, n_source, "m3l.classes = %s", o->classes);
    }
    if (o->shrink > 0) strux_m3l_prior_shrink(L, o->shrink, m->R);
    STRUX_TRY(strux_m3l_prior_factor(m->R, L, source, NULL, &m->eig_min, &m->eig_max));
    m->identity = 1;
    for (int32_t k = 0; k < L; k++)
        for (int32_t l = 0; l < L; l++)
            if (m->R[(int64_t)k * L + l] != (k == l ? 1.0 : 0.0)) m->identity = 0;
    /* the non-zeros of every column */
    int64_t nnz = 0;
    for (int64_t j = 0; j < (int64_t)L * L; j++)
        nnz += m->R[j] != 0;
    STRUX_TRY(strux_alloc_array(&m->col_ptr, (size_t)L + 1, sizeof *m->col_ptr));
    STRUX_TRY(strux_alloc_array(&m->col_idx, (size_t)nnz + 1, sizeof *m->col_idx));
    STRUX_TRY(strux_alloc_array(&m->col_val, (size_t)nnz + 1, sizeof *m->col_val));
    for (int32_t l = 0; l < L; l++) {
        int64_t p = m->col_ptr[l];
        for (int32_t k = 0; k < L; k++) {
            double r = m->R[(int64_t)k * L + l];
            if (r == 0) continue;
            m->col_idx[p] = k;
            m->col_val[p++] = r;
        }
        m->col_ptr[l + 1] = p;
    }
    strux_log(STRUX_LOG_INFO, "m3l: prior from %s%s, %d labels, eigenvalues [%.6g, %.6g], %lld "
              "non-zeros%s",
              source, o->shrink > 0 ? " shrunk towards I" : "", (int)L, m->eig_min, m->eig_max,
              (long long)nnz, m->identity ? " (R = I: 1-vs-All)" : "");
    return STRUX_OK;
}

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
    STRUX_TRY(strux_alloc_array(&m->R, (size_t)L * (size_t)L, sizeof *m->R));
    STRUX_TRY(build_prior(s, m));
    size_t n = (size_t)L + 1;
    STRUX_TRY(strux_alloc_array(&m->sigma, n > (size_t)d->pot.cap + 1 ? n : (size_t)d->pot.cap + 1,
                                sizeof *m->sigma));
    STRUX_TRY(strux_alloc_array(&m->rows, n, sizeof *m->rows));
    STRUX_TRY(strux_alloc_array(&m->s, n, sizeof *m->s));
    STRUX_TRY(strux_alloc_array(&m->tmp, n, sizeof *m->tmp));
    STRUX_TRY(strux_alloc_array(&m->dc, n, sizeof *m->dc));
    STRUX_TRY(strux_alloc_array(&m->rdc, n, sizeof *m->rdc));
    STRUX_TRY(strux_shrink_init(&m->sh, L, d->off[ds->n_local]));
    m->shrink = s->opt.m3l.shrinking;
    return STRUX_OK;
}

/* Example i's block: every active label's exact clipped step in label order, the scores kept
 * exact through R's columns, then one move of Z by x_i ⊗ R·dc. */
static strux_status m3l_visit(strux_solver *s, dual_data *d, int64_t i)
{
    m3l_data *m = d->mdata;
    const strux_dataset *ds = s->ds;
    int32_t L = m->L;
    STRUX_TRY(strux_task_truth(s->task, ds, i, &d->truth));
    int32_t n_parts = strux_task_hinge_parts(s->task, &d->truth, m->sigma);
    STRUX_CHECK(n_parts == L, STRUX_ERR_INTERNAL, "m3l: example %lld has %d hinges, not %d",
                (long long)(ds->first + i), (int)n_parts, (int)L);
    double v = strux_dataset_weight(ds, i);
    if (!(v > 0)) return STRUX_OK; /* hinges that weigh 0 */
    double *ci = d->c + d->off[i];
    int32_t n_act = strux_shrink_active(&m->sh, d->off[i], L, m->rows);
    if (n_act == 0) return STRUX_OK;
    strux_block_shape bs = strux_task_block_shape(s->task, ds, i);
    strux_task_block_gram(ds, &bs, i, d->X);
    double xx = d->X[0], lambda_n = s->opt.lambda * d->n / v, sx = d->sigma * xx;
    if (!(xx > 0)) return STRUX_OK; /* hinges that do not depend on Z */
    int64_t r = ds->ex_ptr ? ds->ex_ptr[i] : i;
    if (2 * n_act >= L) {
        strux_model_scores(d->wl, &ds->x, r, 0, L, m->s);
    } else {
        strux_model_scores_rows(d->wl, &ds->x, r, m->rows, n_act, m->tmp);
        for (int32_t q = 0; q < n_act; q++)
            m->s[m->rows[q]] = m->tmp[q];
    }
    memset(m->dc, 0, (size_t)L * sizeof *m->dc);
    int moved = 0;
    for (int32_t q = 0; q < n_act; q++) {
        int32_t k = m->rows[q];
        double sk = m->sigma[k], alpha = -ci[k] * sk * lambda_n;
        double grad = 1 + sk * m->s[k]; /* W/v·∂D/∂α_ik; LIBLINEAR's G is −grad */
        if (m->shrink && strux_shrink_test(&m->sh, k, d->off[i] + k, alpha, -grad)) continue;
        double r_kk = m->R[(int64_t)k * L + k];
        double a_new = alpha + lambda_n * grad / (sx * r_kk);
        a_new = a_new < 0 ? 0 : a_new > 1 ? 1 : a_new;
        if (a_new == alpha) continue;
        double delta = -(a_new - alpha) * sk / lambda_n;
        m->dc[k] += delta;
        ci[k] += delta;
        d->b[i] += v * (a_new - alpha) / d->n;
        moved = 1;
        if (!m->identity) /* the labels after k see the move of Z (R's column k) */
            for (int64_t p = m->col_ptr[k]; p < m->col_ptr[k + 1]; p++)
                m->s[m->col_idx[p]] += sx * m->col_val[p] * delta;
    }
    if (!moved) return STRUX_OK;
    if (m->identity) {
        strux_dual_move(s, d, i, m->dc);
        return STRUX_OK;
    }
    memset(m->rdc, 0, (size_t)L * sizeof *m->rdc);
    for (int32_t l = 0; l < L; l++) {
        if (m->dc[l] == 0) continue;
        for (int64_t p = m->col_ptr[l]; p < m->col_ptr[l + 1]; p++)
            m->rdc[m->col_idx[p]] += m->col_val[p] * m->dc[l];
    }
    strux_dual_move(s, d, i, m->rdc);
    return STRUX_OK;
}

/* The per-label thresholds coupled through |R| (§3.5), returns and levels (shrink.h). */
static strux_status m3l_epoch_done(strux_solver *s, dual_data *d)
{
    m3l_data *m = d->mdata;
    if (!m->shrink) return STRUX_OK;
    strux_shrink_coupling abs_r = {m->col_ptr, m->col_idx, m->col_val};
    return strux_shrink_epoch_done(&m->sh, s->comm, d->off, s->ds->n_local, &abs_r);
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

/* Checkpoint, per example: its coordinates' shrunk flags (shrink.h). */
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
    return m->shrink ? strux_shrink_reduce_partial(&m->sh, s->comm) : STRUX_OK;
}

/* Checkpoint, global: the shrinking state of every label. */
static strux_status m3l_save_global(const dual_data *d, strux_blob *b)
{
    const m3l_data *m = d->mdata;
    return strux_shrink_save_global(&m->sh, b);
}

static strux_status m3l_load_global(dual_data *d, strux_blob *b)
{
    m3l_data *m = d->mdata;
    return strux_shrink_load_global(&m->sh, b);
}

static void m3l_destroy(dual_data *d)
{
    m3l_data *m = d->mdata;
    if (!m) return;
    strux_free(&m->R);
    strux_free(&m->col_ptr);
    strux_free(&m->col_idx);
    strux_free(&m->col_val);
    strux_free(&m->sigma);
    strux_free(&m->rows);
    strux_free(&m->s);
    strux_free(&m->tmp);
    strux_free(&m->dc);
    strux_free(&m->rdc);
    strux_shrink_free(&m->sh);
    strux_free(&d->mdata);
}

static const dual_method m3l_method = {.visit = m3l_visit,
                                       .setup = m3l_setup,
                                       .epoch_done = m3l_epoch_done,
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
    s->ops = &m3l_ops;
    return STRUX_OK;
}

strux_status strux_solver_m3l_info(const strux_solver *s, struct strux_m3l_info *out)
{
    *out = (strux_m3l_info){0};
    if (s->ops != &m3l_ops || !s->data) return STRUX_OK; /* another solver: no prior */
    const dual_data *d = s->data;
    const m3l_data *m = d->mdata;
    const strux_m3l_options *o = &s->opt.m3l;
    size_t n = (size_t)m->L * (size_t)m->L;
    STRUX_TRY(strux_alloc_array(&out->R, n, sizeof *out->R));
    memcpy(out->R, m->R, n * sizeof *out->R);
    out->n_labels = m->L;
    snprintf(out->prior, sizeof out->prior, "%.31s", o->prior);
    snprintf(out->empirical, sizeof out->empirical, "%.31s",
             strcmp(o->prior, "empirical") == 0 ? o->empirical : "");
    snprintf(out->source, sizeof out->source, "%s", m->source);
    out->shrink = o->shrink;
    out->eig_min = m->eig_min;
    out->eig_max = m->eig_max;
    out->lambda = s->opt.lambda;
    out->C_paper = 1 / (2 * s->opt.lambda * d->n);
    return STRUX_OK;
}
