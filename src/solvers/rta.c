/* solvers/rta.c - the marginal-dual conditional gradient of random spanning-tree approximation
 * (specs/rta.md §3.2-3.6), a method of the dual block engine (dual.h) for tasks that hand out
 * candidate lists (flag candidates: task.type = rta).
 * Frame: example i's dual block c_i and loss share b_i are the engine's. A label y is the corner
 * c(y) = −(v/(λW))·coef(φ(x_i, y) − φ(x_i, y_i)), b(y) = (v/W)·ℓ(y, y_i), so c_i, b_i are the
 * union-edge marginals of one α_i (§3.2: μ kept once, on union edges, no per-tree copies), and the
 * truth's corner is (0, 0). Towards a corner h the dual gains, to first order,
 *     b_h = (v/W)·(m(y_h) + ℓ(y_h, y_i)) − G0,   G0 = b_i − λ·c_i·(B_iᵀw)
 * (the candidate values of strux_task_candidates with a = b = 1), and the curvature of a step
 * Σ_h λ_h d_h, d_h = c(y_h) − c_i, is λσ′·||x_i||²·|Σ λ_h d_h|² (σ′: the CoCoA+ scaling).
 * - solver.update = best (§3.4): the best candidate of the ensemble argmax (early stop; without
 *   the truth when solver.exclude_truth) or the truth when that gains more (A11), exact line
 *   search.
 * - solver.update = newton (§3.5): every distinct candidate of the n lists plus the truth, Z =
 *   [d_h], Q = λσ′·||x_i||²·ZᵀZ (dsyrk), λ from the small QP over λ ≥ 0, Σλ ≤ 1 (solver.qp), the
 *   step Zλ (dgemv).
 * The gap of §3.6 is the engine's J(w) − D with J from the exact search; its argmax is the task's
 * ensemble argmax, so the certificate is flagged a lower bound (solver.tol does not stop on it)
 * unless every answer of the pass was certified; cert_rate is their share. Distribution is the
 * engine's CoCoA+ rounds (fixed solver.blocks: the trajectory does not depend on the rank count);
 * not the global line search of the issue's §6.3 variant. Extra record columns: cert_rate,
 * candidates (mean labels per step), inference_s and update_s (slowest rank's seconds of the
 * epoch in K-best/argmax and in the step). */
#include "rta.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QP_KKT_TOL 1e-10

typedef struct rta_method {
    int newton;        /* solver.update = newton */
    int exact_qp;      /* solver.qp = exact */
    int exclude_truth; /* solver.exclude_truth (best only) */
    strux_candidates cand;
    int32_t cap;                   /* directions the buffers below hold */
    double *Z;                     /* p × cap, column h = d_h */
    double *Q;                     /* cap × cap */
    double *bq;                    /* cap: linear gains b_h */
    double *db;                    /* cap: b(y_h) − b_i */
    double *lam;                   /* cap */
    double *step;                  /* p */
    double inference_s, update_s;  /* this epoch, this rank */
    int64_t steps, n_cand;         /* visits that searched, labels they weighed */
    int64_t cert_done, calls_done; /* the task's certified answers and calls at the epoch's end */
    double cert_rate;              /* of the last certificate pass, NaN when none this epoch */
} rta_method;

static const char *const rta_columns[] = {"cert_rate", "candidates", "inference_s", "update_s",
                                          NULL};

/* ---- the small QP ---- */

double strux_rta_qp_value(int32_t D, const double *Q, const double *b, const double *lam)
{
    double v = 0;
    for (int32_t h = 0; h < D; h++) {
        if (lam[h] == 0) continue;
        double qh = 0;
        for (int32_t j = 0; j < D; j++)
            qh += Q[(int64_t)h * D + j] * lam[j];
        v += lam[h] * (b[h] - 0.5 * qh);
    }
    return v;
}

double strux_rta_qp_kkt(int32_t D, const double *Q, const double *b, const double *lam)
{
    double sum = 0, gmax = 0, gmin_active = INFINITY;
    for (int32_t h = 0; h < D; h++) {
        double g = b[h];
        for (int32_t j = 0; j < D; j++)
            g -= Q[(int64_t)h * D + j] * lam[j];
        if (g > gmax) gmax = g;
        if (lam[h] > 0 && g < gmin_active) gmin_active = g;
        sum += lam[h];
    }
    /* a positive slack (above rounding: 1e-12) has gradient 0 */
    if (1 - sum > 1e-12 && 0 < gmin_active) gmin_active = 0;
    return isfinite(gmin_active) ? gmax - gmin_active : gmax;
}

/* Gain of the exact line search along direction h alone: max over 0 ≤ γ ≤ 1 of γb_h − ½γ²Q_hh. */
static double line_gamma(double b, double q)
{
    if (!(b > 0)) return 0;
    return q > b ? b / q : 1.0;
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Euclidean projection of x onto {λ ≥ 0, Σλ ≤ 1} into out (scratch: D doubles). */
static void project_capped_simplex(int32_t D, const double *x, double *out, double *scratch)
{
    double sum = 0;
    for (int32_t h = 0; h < D; h++) {
        out[h] = x[h] > 0 ? x[h] : 0;
        sum += out[h];
    }
    if (sum <= 1) return;
    /* onto the simplex Σλ = 1: λ = max(x − θ, 0) with θ from the sorted values */
    memcpy(scratch, x, (size_t)D * sizeof *scratch);
    qsort(scratch, (size_t)D, sizeof *scratch, cmp_desc);
    double cum = 0, theta = 0;
    for (int32_t k = 0; k < D; k++) {
        cum += scratch[k];
        double t = (cum - 1) / (k + 1);
        if (scratch[k] - t > 0) theta = t;
    }
    for (int32_t h = 0; h < D; h++)
        out[h] = x[h] - theta > 0 ? x[h] - theta : 0;
}

strux_status strux_rta_qp_projected(int32_t D, const double *Q, const double *b, double *lam)
{
    double *x = NULL, *scratch = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&x, (size_t)D + 1, sizeof *x), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&scratch, (size_t)D + 1, sizeof *scratch), done);
    STRUX_TRY_GOTO(st, strux_sym_pinv_solve(D, Q, b, x), done);
    project_capped_simplex(D, x, lam, scratch);
    double lin = strux_dot(D, b, lam), quad = 2 * (lin - strux_rta_qp_value(D, Q, b, lam));
    double gamma = quad > 0 ? lin / quad : (lin > 0 ? 1.0 : 0.0);
    gamma = gamma < 0 ? 0 : gamma > 1 ? 1 : gamma;
    strux_scal(D, gamma, lam);
    double best = strux_rta_qp_value(D, Q, b, lam);
    /* the best single direction, so a Newton step never gains less than it (§3.5) */
    int32_t h_best = -1;
    double g_best = 0;
    for (int32_t h = 0; h < D; h++) {
        double q = Q[(int64_t)h * D + h], g = line_gamma(b[h], q);
        double v = g * b[h] - 0.5 * g * g * q;
        if (v > best && v > g_best) {
            h_best = h;
            g_best = v;
            x[0] = g;
        }
    }
    if (h_best >= 0) {
        memset(lam, 0, (size_t)D * sizeof *lam);
        lam[h_best] = x[0];
    }
done:
    strux_free(&x);
    strux_free(&scratch);
    return st;
}

strux_status strux_rta_qp_exact(int32_t D, const double *Q, const double *b, double *lam,
                                double *kkt)
{
    STRUX_TRY(strux_rta_qp_projected(D, Q, b, lam));
    double *g = NULL;
    STRUX_TRY(strux_alloc_array(&g, (size_t)D + 1, sizeof *g));
    double scale = 0, sum = 0;
    for (int32_t h = 0; h < D; h++) {
        double q = Q[(int64_t)h * D + h];
        scale = fabs(b[h]) > scale ? fabs(b[h]) : scale;
        scale = q > scale ? q : scale;
        g[h + 1] = b[h];
        for (int32_t j = 0; j < D; j++)
            g[h + 1] -= Q[(int64_t)h * D + j] * lam[j];
        sum += lam[h];
    }
    g[0] = 0; /* variable 0 is the slack 1 − Σλ */
    double tol = QP_KKT_TOL * scale, slack = 1 - sum, res = 0;
    int64_t max_steps = 100 * ((int64_t)D + 1) + 10000;
    for (int64_t it = 0; it < max_steps; it++) {
        /* up: the largest gradient; down: the smallest among the positive variables */
        int32_t up = 0, down = -1;
        for (int32_t j = 1; j <= D; j++)
            if (g[j] > g[up]) up = j;
        double gdown = INFINITY;
        if (slack > 0) {
            down = 0;
            gdown = 0;
        }
        for (int32_t j = 1; j <= D; j++)
            if (lam[j - 1] > 0 && g[j] < gdown) {
                down = j;
                gdown = g[j];
            }
        res = down < 0 ? 0 : g[up] - gdown;
        if (res <= tol || up == down) break;
        /* move t from down to up: gain t·res − ½t²·curv */
        double qu = up ? Q[(int64_t)(up - 1) * D + up - 1] : 0;
        double qd = down ? Q[(int64_t)(down - 1) * D + down - 1] : 0;
        double qud = up && down ? Q[(int64_t)(up - 1) * D + down - 1] : 0;
        double curv = qu + qd - 2 * qud, room = down ? lam[down - 1] : slack;
        double t = curv > 0 && res / curv < room ? res / curv : room;
        if (up)
            lam[up - 1] += t;
        else
            slack += t;
        if (t == room) {
            if (down)
                lam[down - 1] = 0;
            else
                slack = 0;
        } else if (down)
            lam[down - 1] -= t;
        else
            slack -= t;
        for (int32_t j = 1; j <= D; j++) {
            double qj_up = up ? Q[(int64_t)(j - 1) * D + up - 1] : 0;
            double qj_down = down ? Q[(int64_t)(j - 1) * D + down - 1] : 0;
            g[j] -= t * (qj_up - qj_down);
        }
    }
    strux_free(&g);
    *kkt = res;
    return STRUX_OK;
}

/* ---- the method ---- */

static strux_status grow(rta_method *m, int64_t p, int32_t D)
{
    if (D <= m->cap) return STRUX_OK;
    int32_t cap = m->cap > 0 ? m->cap : 16;
    while (cap < D)
        cap *= 2;
    STRUX_TRY(strux_realloc_array(&m->Z, (size_t)p * (size_t)cap, sizeof *m->Z));
    STRUX_TRY(strux_realloc_array(&m->Q, (size_t)cap * (size_t)cap, sizeof *m->Q));
    STRUX_TRY(strux_realloc_array(&m->bq, (size_t)cap, sizeof *m->bq));
    STRUX_TRY(strux_realloc_array(&m->db, (size_t)cap, sizeof *m->db));
    STRUX_TRY(strux_realloc_array(&m->lam, (size_t)cap, sizeof *m->lam));
    m->cap = cap;
    return STRUX_OK;
}

static strux_status rta_setup(strux_solver *s, dual_data *d)
{
    STRUX_CHECK(strux_search_caps(s->search) & STRUX_CAP_ONE_CALL, STRUX_ERR_CONFIG,
                "solver.type = rta steps on the margin-rescaled hinge (flag one_call); "
                "surrogate.type = %s is not it: use surrogate.type = margin",
                strux_surrogate_name(s->search));
    int64_t p_max;
    int32_t S_max;
    strux_task_block_max(s->task, s->ds, &p_max, &S_max);
    STRUX_CHECK(S_max <= 1, STRUX_ERR_UNSUPPORTED,
                "solver.type = rta needs one feature row per example; task '%s' has %d",
                strux_task_name(s->task), S_max);
    rta_method *m;
    STRUX_TRY(strux_alloc(&m, sizeof *m));
    d->mdata = m;
    m->newton = strcmp(s->opt.update, "best") != 0;
    m->exact_qp = strcmp(s->opt.qp, "exact") == 0;
    m->exclude_truth = s->opt.exclude_truth;
    m->cert_rate = NAN;
    STRUX_TRY(strux_alloc_array(&m->step, (size_t)p_max + 1, sizeof *m->step));
    strux_task_certified(s->task, &m->cert_done, &m->calls_done);
    return STRUX_OK;
}

/* The corner of label y in column col (p doubles): coef(φ(y) − φ(y_i))·(−v/(λW)) − c_i; its
 * loss-share change into *db. */
static strux_status corner(strux_solver *s, dual_data *d, int64_t i, const strux_label *y,
                           int64_t p, double *col, double *db)
{
    double v = strux_dataset_weight(s->ds, i);
    const double *ci = d->c + d->off[i];
    memset(col, 0, (size_t)p * sizeof *col);
    STRUX_TRY(strux_task_block_add_delta(s->task, s->ds, i, y, &d->truth,
                                         -v / (s->opt.lambda * d->n), col));
    strux_axpy(p, -1.0, ci, col);
    *db = v * strux_task_loss(s->task, y, &d->truth) / d->n - d->b[i];
    return STRUX_OK;
}

/* c_i += step, b_i += db, wl moves. */
static void apply(strux_solver *s, dual_data *d, int64_t i, int64_t p, const double *step,
                  double db)
{
    strux_axpy(p, 1.0, step, d->c + d->off[i]);
    d->b[i] += db;
    strux_dual_move(s, d, i, step);
}

static strux_status best_step(strux_solver *s, dual_data *d, rta_method *m, int64_t i, int64_t p,
                              double G0, double scale, double curv)
{
    const strux_candidates *c = &m->cand;
    double b_truth = -G0, b_best = c->best >= 0 ? scale * c->value[c->best] - G0 : -INFINITY;
    double db;
    if (!m->exclude_truth && b_truth > b_best) { /* the truth's corner (0, 0) gains most (A11) */
        memcpy(m->step, d->c + d->off[i], (size_t)p * sizeof *m->step);
        strux_scal(p, -1.0, m->step);
        db = -d->b[i];
        b_best = b_truth;
    } else {
        if (c->best < 0) return STRUX_OK;
        STRUX_TRY(corner(s, d, i, &c->y[c->best], p, m->step, &db));
    }
    double gamma = line_gamma(b_best, curv * strux_nrm2sq(p, m->step));
    if (!(gamma > 0)) return STRUX_OK;
    strux_scal(p, gamma, m->step);
    apply(s, d, i, p, m->step, gamma * db);
    return STRUX_OK;
}

static strux_status newton_step(strux_solver *s, dual_data *d, rta_method *m, int64_t i, int64_t p,
                                double G0, double scale, double curv)
{
    const strux_candidates *c = &m->cand;
    int32_t D = 0, have_truth = 0;
    STRUX_TRY(grow(m, p, c->n + 1));
    for (int32_t h = 0; h < c->n; h++) {
        if (strux_label_equal(&c->y[h], &d->truth)) have_truth = 1;
        STRUX_TRY(corner(s, d, i, &c->y[h], p, m->Z + (int64_t)D * p, &m->db[D]));
        m->bq[D++] = scale * c->value[h] - G0;
    }
    if (!have_truth) { /* the truth's corner (0, 0): d = −c_i */
        double *col = m->Z + (int64_t)D * p;
        memcpy(col, d->c + d->off[i], (size_t)p * sizeof *col);
        strux_scal(p, -1.0, col);
        m->db[D] = -d->b[i];
        m->bq[D++] = -G0;
    }
    m->n_cand += D - c->n; /* the truth, when added, counts as a candidate */
    strux_gram_cols(p, D, curv, m->Z, m->Q);
    if (m->exact_qp) {
        double kkt;
        STRUX_TRY(strux_rta_qp_exact(D, m->Q, m->bq, m->lam, &kkt));
    } else {
        STRUX_TRY(strux_rta_qp_projected(D, m->Q, m->bq, m->lam));
    }
    if (!(strux_rta_qp_value(D, m->Q, m->bq, m->lam) > 0)) return STRUX_OK;
    strux_gemv_cols(p, D, 1.0, m->Z, m->lam, 0.0, m->step);
    apply(s, d, i, p, m->step, strux_dot(D, m->lam, m->db));
    return STRUX_OK;
}

static strux_status rta_visit(strux_solver *s, dual_data *d, int64_t i)
{
    rta_method *m = d->mdata;
    double v = strux_dataset_weight(s->ds, i);
    if (!(v > 0)) return STRUX_OK; /* its loss weighs nothing: the block stays 0 */
    double t0 = strux_time_now();
    STRUX_TRY(strux_dual_potentials(s, d, i));
    strux_query q = strux_query_dir(1, 1); /* a·m + b·ℓ: the margin-rescaled violation */
    STRUX_TRY(strux_task_candidates(s->task, &d->pot, &d->truth, &q, m->newton,
                                    !m->newton && m->exclude_truth, &m->cand));
    double t1 = strux_time_now();
    m->inference_s += t1 - t0;
    m->steps++;
    m->n_cand += m->cand.n;
    strux_block_shape bs = strux_task_block_shape(s->task, s->ds, i);
    strux_task_block_gram(s->ds, &bs, i, d->X);
    double G0 = d->b[i] - s->opt.lambda * strux_dot(bs.p, d->c + d->off[i], d->pot.s);
    double curv = s->opt.lambda * d->sigma * d->X[0];
    strux_status st = m->newton ? newton_step(s, d, m, i, bs.p, G0, v / d->n, curv)
                                : best_step(s, d, m, i, bs.p, G0, v / d->n, curv);
    m->update_s += strux_time_now() - t1;
    return st;
}

static void rta_destroy(dual_data *d)
{
    rta_method *m = d->mdata;
    if (!m) return;
    strux_candidates_free(&m->cand);
    strux_free(&m->Z);
    strux_free(&m->Q);
    strux_free(&m->bq);
    strux_free(&m->db);
    strux_free(&m->lam);
    strux_free(&m->step);
    strux_free(&d->mdata);
}

static const dual_method rta_method_ops = {
    .visit = rta_visit, .setup = rta_setup, .destroy = rta_destroy};

/* ---- the engine's ops with the epoch statistics and the certificate's certification ---- */

static strux_status rta_epoch(strux_solver *s)
{
    dual_data *d = s->data;
    rta_method *m = d->mdata;
    m->inference_s = m->update_s = 0;
    m->steps = m->n_cand = 0;
    m->cert_rate = NAN;
    STRUX_TRY(strux_dual_ops.epoch(s));
    strux_task_certified(s->task, &m->cert_done, &m->calls_done);
    return STRUX_OK;
}

/* The engine's J(w) − D; the primal's argmaxes since the epoch's end are the exact search's
 * ensemble argmaxes: a lower bound unless all certified. */
static strux_status rta_certificate(strux_solver *s, strux_certificate *c)
{
    dual_data *d = s->data;
    rta_method *m = d->mdata;
    STRUX_TRY(strux_dual_ops.certificate(s, c));
    int64_t n[2];
    strux_task_certified(s->task, &n[0], &n[1]);
    n[0] -= m->cert_done;
    n[1] -= m->calls_done;
    STRUX_TRY(strux_comm_allreduce_sum_i64(s->comm, n, 2));
    m->cert_rate = n[1] > 0 ? (double)n[0] / (double)n[1] : 1.0;
    c->lower_bound = n[0] < n[1];
    strux_task_certified(s->task, &m->cert_done, &m->calls_done);
    return STRUX_OK;
}

static strux_status rta_metrics(strux_solver *s, double *values)
{
    dual_data *d = s->data;
    rta_method *m = d->mdata;
    int64_t n[2] = {m->steps, m->n_cand};
    double t[2] = {m->inference_s, m->update_s};
    STRUX_TRY(strux_comm_allreduce_sum_i64(s->comm, n, 2));
    STRUX_TRY(strux_comm_allreduce_max(s->comm, t, 2));
    values[0] = m->cert_rate;
    values[1] = n[0] > 0 ? (double)n[1] / (double)n[0] : 0;
    values[2] = t[0];
    values[3] = t[1];
    return STRUX_OK;
}

static strux_status rta_setup_ops(strux_solver *s)
{
    return strux_dual_ops.setup(s);
}
static strux_status rta_save(const strux_solver *s, strux_blob *b)
{
    return strux_dual_ops.save(s, b);
}
static strux_status rta_load(strux_solver *s, strux_blob *b)
{
    return strux_dual_ops.load(s, b);
}
static strux_status rta_prepare_save(strux_solver *s)
{
    return strux_dual_ops.prepare_save(s);
}
static int64_t rta_epoch_position(const strux_solver *s)
{
    return strux_dual_ops.epoch_position(s);
}
static strux_status rta_save_examples(const strux_solver *s, int64_t i0, int64_t i1, strux_blob *b)
{
    return strux_dual_ops.save_examples(s, i0, i1, b);
}
static strux_status rta_load_examples(strux_solver *s, int64_t i0, int64_t i1, strux_blob *b)
{
    return strux_dual_ops.load_examples(s, i0, i1, b);
}
static void rta_set_lambda(strux_solver *s, double lambda)
{
    strux_dual_ops.set_lambda(s, lambda);
}
static void rta_destroy_ops(strux_solver *s)
{
    strux_dual_ops.destroy(s);
}

static const struct strux_solver_ops rta_ops = {
    .set_lambda = rta_set_lambda,
    .setup = rta_setup_ops,
    .epoch = rta_epoch,
    .certificate = rta_certificate,
    .save = rta_save,
    .load = rta_load,
    .save_examples = rta_save_examples,
    .prepare_save = rta_prepare_save,
    .epoch_position = rta_epoch_position,
    .load_examples = rta_load_examples,
    .destroy = rta_destroy_ops,
    .columns = rta_columns,
    .metrics = rta_metrics,
};

void strux_rta_solver_set_update(strux_solver *s, int newton, int exact_qp)
{
    rta_method *m = ((dual_data *)s->data)->mdata;
    m->newton = newton;
    m->exact_qp = exact_qp;
}

strux_status strux_rta_solver_visit(strux_solver *s, int64_t i)
{
    return rta_visit(s, s->data, i);
}

strux_status strux_solver_create_rta(strux_solver *s)
{
    STRUX_TRY(strux_dual_attach(s, &rta_method_ops));
    s->ops = &rta_ops;
    return STRUX_OK;
}
