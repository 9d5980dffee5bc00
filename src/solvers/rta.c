/* solvers/rta.c - the marginal-dual conditional gradient of random spanning-tree approximation
 * (specs/rta.md §3.2-3.6) for tasks that hand out candidate lists (flag candidates: task.type =
 * rta), on the dual block engine's storage, certificate and checkpoints (dual.h) with rounds of
 * its own (the issue's §6.3 variant).
 * Frame: example i's dual block c_i and loss share b_i are the engine's. A label y is the corner
 * c(y) = −(v/(λW))·coef(φ(x_i, y) − φ(x_i, y_i)), b(y) = (v/W)·ℓ(y, y_i), so c_i, b_i are the
 * union-edge marginals of one α_i (§3.2: μ kept once, on union edges, no per-tree copies), and the
 * truth's corner is (0, 0). Towards a corner h the dual gains, to first order,
 *     b_h = (v/W)·(m(y_h) + ℓ(y_h, y_i)) − G0,   G0 = b_i − λ·c_i·(B_iᵀw)
 * (the candidate values of strux_task_candidates with a = b = 1), and the curvature of a step
 * Σ_h λ_h d_h, d_h = c(y_h) − c_i, is λ·||x_i||²·|Σ λ_h d_h|².
 * - solver.update = best (§3.4): the best candidate of the ensemble argmax (early stop; without
 *   the truth when solver.exclude_truth) or the truth when that gains more (A11), exact line
 *   search.
 * - solver.update = newton (§3.5): every distinct candidate of the n lists plus the truth,
 *   Q = λ·||x_i||²·[d_h·d_h′] formed from the task's Gram factors (dsyrk in L + |E_u| rather than
 *   4|E_u| dimensions, newton_model), λ from the small QP over λ ≥ 0, Σλ ≤ 1 (solver.qp).
 * Rounds (§6.3, made rank-count invariant): the epoch's (seed, epoch)-keyed order, stratified
 * over the example ids so that a round's examples split over the ranks by their shares, is cut into
 * rounds of B examples (solver.sync_every, or adapted to the rounds' γ when 0); every example of
 * a round steps against the same agreed w (its own line search or QP, as if alone); one
 * collective combines the steps: an allgather of the round's block changes with the examples'
 * features (every rank then adds them in the round's order: bit-identical weights at any rank
 * count) or, when ΔW is smaller, an allreduce of ΔW; a global exact line search on the combined
 * step, γ = clip(lin/quad, 0, 1) with lin = Σ (Δb_i − λ·Δc_i·(B_iᵀw)) and quad = λ·||ΔW||² from
 * reduced scalars, keeps every round monotone and scales the blocks' changes. B = 1 is the serial
 * algorithm (γ = 1). The trajectory depends on B only, never on the rank count (no solver.blocks
 * needed; they only place checkpoint blocks).
 * The gap of §3.6 is the engine's J(w) − D with J from the exact search; its argmax is the task's
 * ensemble argmax, so the certificate is flagged a lower bound (solver.tol does not stop on it)
 * unless every answer of the pass was certified; cert_rate is their share. Extra record columns:
 * cert_rate, candidates (mean labels per step), inference_s and update_s (slowest rank's seconds
 * of the epoch in K-best/argmax and in the steps and their combination), gamma (the rounds' mean
 * γ) and round_size (B of the epoch). Not here: the kernel mode of §6.3, the spec's c_e/n edge
 * weights in the regulariser (A7; every union-edge row is regularised once). */
#include "rta.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QP_KKT_TOL 1e-10
/* solver.sync_every = 0 (README "RTA", bench/rta_sync.sh): rounds start at RTA_SYNC_START
 * examples; after each epoch they halve while the rounds' mean γ is below RTA_GAMMA_LOW (the
 * examples' steps overlap: the combined step loses to serial ones) and double, up to
 * RTA_SYNC_MAX, while it is above RTA_GAMMA_HIGH (the steps add up: larger rounds cost little). */
#define RTA_SYNC_START 16
#define RTA_SYNC_MAX 64
#define RTA_GAMMA_LOW 0.8
#define RTA_GAMMA_HIGH 0.95
/* The epoch's order is stratified over RTA_STRATA equal slices of the global example ids (fewer
 * while a slice would hold under RTA_STRATUM_MIN examples; rta_epoch_order). */
#define RTA_STRATA 64
#define RTA_STRATUM_MIN 8
#define RTA_REC_HEAD 4    /* doubles before a record's features: position, Δb, lin, nnz */
#define PROGRESS_EVERY 64 /* examples between progress reports */

typedef struct rta_method {
    int newton;        /* solver.update = newton */
    int exact_qp;      /* solver.qp = exact */
    int exclude_truth; /* solver.exclude_truth (best only) */
    strux_candidates cand;
    int32_t cap;                   /* directions the buffers below hold */
    double *Q;                     /* cap × cap: the QP's matrix */
    double *G;                     /* cap × cap: the Gram factors' Gram */
    double *bq;                    /* cap: linear gains b_h */
    double *db;                    /* cap: b(y_h) − b_i */
    double *a;                     /* cap: Δ_h·c_i */
    double *lam;                   /* cap */
    int32_t D, truth;              /* directions of the last Newton model, the truth's index */
    double *step;                  /* p: the visited example's block change */
    int64_t *strata;               /* n_global: the epoch's order grouped by slice */
    int64_t B;                     /* examples per round this epoch */
    int64_t B_max;                 /* the most B can be */
    int adapt;                     /* B follows γ (solver.sync_every = 0) */
    int gather;                    /* this round gathers block changes (1) or sums ΔW (0) */
    int64_t p_max, nnz_max;        /* over all ranks: block size, features per example */
    double *rec;                   /* this rank's records of the round (rta_step) */
    int64_t rec_len, rec_cap;      /* doubles used, allocated (rec and all) */
    double *all;                   /* every rank's records (gathered rounds) */
    int64_t *at;                   /* B: offset in all of the record at each position, −1 */
    strux_csr xr;                  /* the round's features in position order (gathered) */
    double *Cr;                    /* B × p_max: the round's block changes (gathered) */
    double *Gr;                    /* B × B: their Gram (gathered) */
    strux_model *dW;               /* the round's ΔW (summed rounds) */
    double inference_s, update_s;  /* this epoch, this rank */
    int64_t steps, n_cand;         /* visits that searched, labels they weighed */
    int64_t rounds;                /* this epoch */
    int64_t epoch_B;               /* examples per round this epoch (B may change after it) */
    double gamma_sum;              /* Σ γ over this epoch's rounds */
    int64_t cert_done, calls_done; /* the task's certified answers and calls at the epoch's end */
    double cert_rate;              /* of the last certificate pass, NaN when none this epoch */
} rta_method;

static const char *const rta_columns[] = {"cert_rate", "candidates", "inference_s", "update_s",
                                          "gamma",     "round_size", NULL};

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

static strux_status grow(rta_method *m, int32_t D)
{
    if (D <= m->cap) return STRUX_OK;
    int32_t cap = m->cap > 0 ? m->cap : 16;
    while (cap < D)
        cap *= 2;
    STRUX_TRY(strux_realloc_array(&m->Q, (size_t)cap * (size_t)cap, sizeof *m->Q));
    STRUX_TRY(strux_realloc_array(&m->G, (size_t)cap * (size_t)cap, sizeof *m->G));
    STRUX_TRY(strux_realloc_array(&m->bq, (size_t)cap, sizeof *m->bq));
    STRUX_TRY(strux_realloc_array(&m->db, (size_t)cap, sizeof *m->db));
    STRUX_TRY(strux_realloc_array(&m->a, (size_t)cap, sizeof *m->a));
    STRUX_TRY(strux_realloc_array(&m->lam, (size_t)cap, sizeof *m->lam));
    m->cap = cap;
    return STRUX_OK;
}

/* Rounds of B examples gather their records (RTA_REC_HEAD + 2·nnz_max + p_max doubles each) when
 * these are fewer doubles than ΔW and the B×B Gram is no larger; otherwise they sum ΔW. */
static int gathers(const dual_data *d, const rta_method *m, int64_t B)
{
    double n_w = (double)strux_model_n_w(d->w);
    double rec = (double)(RTA_REC_HEAD + 2 * m->nnz_max + m->p_max);
    return (double)B * rec < n_w && (double)B * (double)B <= n_w;
}

/* Round buffers for up to B_max examples per round, for the combinations B ≤ B_max can use. */
static strux_status rounds_setup(strux_solver *s, dual_data *d, rta_method *m, int64_t p_max)
{
    const strux_dataset *ds = s->ds;
    int64_t n = ds->n_global;
    m->adapt = s->opt.sync_every == 0;
    m->B_max = m->adapt ? RTA_SYNC_MAX : s->opt.sync_every;
    m->B_max = m->B_max < n ? m->B_max : n;
    m->B = m->adapt && RTA_SYNC_START < m->B_max ? RTA_SYNC_START : m->B_max;
    double mx[2] = {(double)p_max, 0};
    for (int64_t i = 0; i < ds->n_local; i++) {
        double nnz = (double)(ds->x.ptr[i + 1] - ds->x.ptr[i]);
        mx[1] = nnz > mx[1] ? nnz : mx[1];
    }
    STRUX_TRY(strux_comm_allreduce_max(s->comm, mx, 2));
    m->p_max = (int64_t)mx[0];
    m->nnz_max = (int64_t)mx[1];
    int64_t B = m->B_max, gB = B; /* gathered rounds of up to gB examples */
    while (gB > 0 && !gathers(d, m, gB))
        gB--;
    m->rec_cap = B * (RTA_REC_HEAD + 2 * m->nnz_max + m->p_max);
    STRUX_TRY(strux_alloc_array(&m->rec, (size_t)m->rec_cap + 1, sizeof *m->rec));
    if (gB > 0) {
        STRUX_TRY(strux_alloc_array(&m->all, (size_t)m->rec_cap + 1, sizeof *m->all));
        STRUX_TRY(strux_alloc_array(&m->at, (size_t)gB, sizeof *m->at));
        STRUX_TRY(strux_csr_alloc(&m->xr, gB, ds->x.n_cols, gB * m->nnz_max + 1));
        STRUX_TRY(strux_alloc_array(&m->Cr, (size_t)(gB * m->p_max) + 1, sizeof *m->Cr));
        STRUX_TRY(strux_alloc_array(&m->Gr, (size_t)(gB * gB), sizeof *m->Gr));
    }
    if (gB < B) STRUX_TRY(strux_model_create_like(d->w, &m->dW));
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
    STRUX_CHECK(S_max <= 1 && strux_model_n_extra(d->w) == 0, STRUX_ERR_UNSUPPORTED,
                "solver.type = rta needs one feature row per example and no free parameters; "
                "task '%s' has %d rows and %lld free parameters",
                strux_task_name(s->task), S_max, (long long)strux_model_n_extra(d->w));
    rta_method *m;
    STRUX_TRY(strux_alloc(&m, sizeof *m));
    d->mdata = m;
    m->newton = strcmp(s->opt.update, "best") != 0;
    m->exact_qp = strcmp(s->opt.qp, "exact") == 0;
    m->exclude_truth = s->opt.exclude_truth;
    m->cert_rate = NAN;
    STRUX_TRY(strux_alloc_array(&m->step, (size_t)p_max + 1, sizeof *m->step));
    STRUX_TRY(strux_alloc_array(&m->strata, (size_t)s->ds->n_global, sizeof *m->strata));
    STRUX_TRY(rounds_setup(s, d, m, p_max));
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

/* §3.4: the line-searched step towards the best candidate (or the truth, A11) into m->step, its
 * loss-share change into *db; *took = 0 when nothing gains. */
static strux_status best_step(strux_solver *s, dual_data *d, rta_method *m, int64_t i, int64_t p,
                              double G0, double scale, double curv, double *db, int *took)
{
    const strux_candidates *c = &m->cand;
    double b_truth = -G0, b_best = c->best >= 0 ? scale * c->value[c->best] - G0 : -INFINITY;
    *took = 0;
    if (!m->exclude_truth && b_truth > b_best) { /* the truth's corner (0, 0) gains most (A11) */
        memcpy(m->step, d->c + d->off[i], (size_t)p * sizeof *m->step);
        strux_scal(p, -1.0, m->step);
        *db = -d->b[i];
        b_best = b_truth;
    } else {
        if (c->best < 0) return STRUX_OK;
        STRUX_TRY(corner(s, d, i, &c->y[c->best], p, m->step, db));
    }
    double gamma = line_gamma(b_best, curv * strux_nrm2sq(p, m->step));
    if (!(gamma > 0)) return STRUX_OK;
    strux_scal(p, gamma, m->step);
    *db *= gamma;
    *took = 1;
    return STRUX_OK;
}

/* §3.5: the capped conic step over every candidate and the truth into m->step. Columns d_h =
 * −κΔ_h − c_i with Δ_h = coef(φ(y_h) − φ(y_i)), κ = v/(λW); their Gram
 *     d_h·d_h′ = κ²·f_h·f_h′ + κ·(a_h + a_h′) + ||c_i||²,   a_h = Δ_h·c_i,
 * from the task's Gram factors f (dsyrk in L + |E_u| rather than 4|E_u| dimensions) and a_h as a
 * score of y_h under c_i; the step Σ λ_h d_h = −κ Σ λ_h Δ_h − (Σλ)·c_i. */
/* The Newton model of the step (b, Q of §3.5) over the candidates and the truth: m->bq, m->Q,
 * m->db for D = m->D directions, the truth's at m->truth. */
static strux_status newton_model(strux_solver *s, dual_data *d, rta_method *m, int64_t i, int64_t p,
                                 double G0, double scale, double curv)
{
    const strux_candidates *c = &m->cand;
    double v = strux_dataset_weight(s->ds, i), kappa = v / (s->opt.lambda * d->n);
    const double *ci = d->c + d->off[i];
    strux_pot at_c = d->pot; /* the scores of c_i in the potentials' layout (task.h) */
    at_c.s = (double *)ci;
    double a_truth = strux_task_score(s->task, &at_c, &d->truth);
    int32_t n = c->n, D = n, truth = -1;
    for (int32_t h = 0; h < n && truth < 0; h++)
        if (strux_label_equal(&c->y[h], &d->truth)) truth = h;
    if (truth < 0) truth = D++; /* the truth's corner (0, 0): d = −c_i */
    STRUX_TRY(grow(m, D));
    for (int32_t h = 0; h < n; h++) {
        m->a[h] = h == truth ? 0 : strux_task_score(s->task, &at_c, &c->y[h]) - a_truth;
        m->db[h] = v * strux_task_loss(s->task, &c->y[h], &d->truth) / d->n - d->b[i];
        m->bq[h] = scale * c->value[h] - G0;
    }
    if (truth == n) {
        m->a[n] = 0;
        m->db[n] = -d->b[i];
        m->bq[n] = -G0;
    }
    strux_gram_cols(c->dim, n, kappa * kappa, c->f, m->G);
    double ci2 = strux_nrm2sq(p, ci);
    for (int32_t h = 0; h < D; h++)
        for (int32_t k = 0; k < D; k++) {
            double g = h < n && k < n ? m->G[(int64_t)h * n + k] : 0;
            m->Q[(int64_t)h * D + k] = curv * (g + kappa * (m->a[h] + m->a[k]) + ci2);
        }
    m->D = D;
    m->truth = truth;
    return STRUX_OK;
}

static strux_status newton_step(strux_solver *s, dual_data *d, rta_method *m, int64_t i, int64_t p,
                                double G0, double scale, double curv, double *db, int *took)
{
    const strux_candidates *c = &m->cand;
    double kappa = strux_dataset_weight(s->ds, i) / (s->opt.lambda * d->n);
    const double *ci = d->c + d->off[i];
    *took = 0;
    STRUX_TRY(newton_model(s, d, m, i, p, G0, scale, curv));
    int32_t n = c->n, D = m->D, truth = m->truth;
    m->n_cand += D - n; /* the truth, when added, counts as a candidate */
    if (m->exact_qp) {
        double kkt;
        STRUX_TRY(strux_rta_qp_exact(D, m->Q, m->bq, m->lam, &kkt));
    } else {
        STRUX_TRY(strux_rta_qp_projected(D, m->Q, m->bq, m->lam));
    }
    if (!(strux_rta_qp_value(D, m->Q, m->bq, m->lam) > 0)) return STRUX_OK;
    double sum = 0;
    for (int32_t h = 0; h < D; h++)
        sum += m->lam[h];
    memcpy(m->step, ci, (size_t)p * sizeof *m->step);
    strux_scal(p, -sum, m->step);
    for (int32_t h = 0; h < n; h++)
        if (m->lam[h] > 0 && h != truth)
            STRUX_TRY(strux_task_block_add_delta(s->task, s->ds, i, &c->y[h], &d->truth,
                                                 -kappa * m->lam[h], m->step));
    *db = strux_dot(D, m->lam, m->db);
    *took = 1;
    return STRUX_OK;
}

/* Example i's candidates at w (m->cand), its block shape, G0 = b_i − λ·c_i·(B_i^T w) and the
 * curvature λ·||x_i||² of its steps. */
static strux_status search(strux_solver *s, dual_data *d, rta_method *m, int64_t i,
                           strux_block_shape *bs, double *G0, double *curv)
{
    STRUX_TRY(strux_dual_potentials(s, d, i));
    strux_query q = strux_query_dir(1, 1); /* a·m + b·ℓ: the margin-rescaled violation */
    STRUX_TRY(strux_task_candidates(s->task, &d->pot, &d->truth, &q, m->newton,
                                    !m->newton && m->exclude_truth, &m->cand));
    *bs = strux_task_block_shape(s->task, s->ds, i);
    strux_task_block_gram(s->ds, bs, i, d->X);
    *G0 = d->b[i] - s->opt.lambda * strux_dot(bs->p, d->c + d->off[i], d->pot.s);
    *curv = s->opt.lambda * d->X[0];
    return STRUX_OK;
}

/* Example i (at position j of the epoch's order) steps against the agreed w; its step goes into
 * the round's records: [j, Δb_i, lin_i, nnz, the nnz columns and values of x_i (gathered rounds
 * only), Δc_i], with lin_i = Δb_i − λ·Δc_i·(B_i^T w) its share of the combined step's slope. */
static strux_status rta_step(strux_solver *s, dual_data *d, int64_t i, int64_t j)
{
    rta_method *m = d->mdata;
    double v = strux_dataset_weight(s->ds, i);
    if (!(v > 0)) return STRUX_OK; /* its loss weighs nothing: the block stays 0 */
    double t0 = strux_time_now(), G0, curv, db = 0;
    strux_block_shape bs;
    STRUX_TRY(search(s, d, m, i, &bs, &G0, &curv));
    double t1 = strux_time_now();
    m->inference_s += t1 - t0;
    m->steps++;
    m->n_cand += m->cand.n;
    int took;
    STRUX_TRY(m->newton ? newton_step(s, d, m, i, bs.p, G0, v / d->n, curv, &db, &took)
                        : best_step(s, d, m, i, bs.p, G0, v / d->n, curv, &db, &took));
    if (took) {
        const strux_csr *x = &s->ds->x;
        int64_t nnz = m->gather ? x->ptr[i + 1] - x->ptr[i] : 0;
        double *r = m->rec + m->rec_len;
        r[0] = (double)j;
        r[1] = db;
        r[2] = db - s->opt.lambda * strux_dot(bs.p, m->step, d->pot.s);
        r[3] = (double)nnz;
        for (int64_t k = 0; k < nnz; k++) {
            r[RTA_REC_HEAD + k] = x->col[x->ptr[i] + k];
            r[RTA_REC_HEAD + nnz + k] = x->val[x->ptr[i] + k];
        }
        memcpy(r + RTA_REC_HEAD + 2 * nnz, m->step, (size_t)bs.p * sizeof *r);
        m->rec_len += RTA_REC_HEAD + 2 * nnz + bs.p;
    }
    m->update_s += strux_time_now() - t1;
    return STRUX_OK;
}

static void rta_destroy(dual_data *d)
{
    rta_method *m = d->mdata;
    if (!m) return;
    strux_candidates_free(&m->cand);
    strux_free(&m->Q);
    strux_free(&m->G);
    strux_free(&m->bq);
    strux_free(&m->db);
    strux_free(&m->a);
    strux_free(&m->lam);
    strux_free(&m->step);
    strux_free(&m->strata);
    strux_free(&m->rec);
    strux_free(&m->all);
    strux_free(&m->at);
    strux_csr_free(&m->xr);
    strux_free(&m->Cr);
    strux_free(&m->Gr);
    strux_model_destroy(&m->dW);
    strux_free(&d->mdata);
}

/* ---- rounds (the issue's §6.3 variant) ---- */

/* The records' length from r on. */
static int64_t rec_size(const double *r, int64_t p)
{
    return RTA_REC_HEAD + 2 * (int64_t)r[3] + p;
}

/* The local block changes of the round times γ: c_i += γ·Δc_i, b_i += γ·Δb_i. */
static void apply_blocks(strux_solver *s, dual_data *d, const rta_method *m, double gamma)
{
    int64_t p = strux_model_n_rows(d->w);
    for (int64_t o = 0; o < m->rec_len; o += rec_size(m->rec + o, p)) {
        const double *r = m->rec + o;
        int64_t i = d->perm[(int64_t)r[0]] - s->ds->first;
        strux_axpy(p, gamma, r + RTA_REC_HEAD + 2 * (int64_t)r[3], d->c + d->off[i]);
        d->b[i] += gamma * r[1];
    }
}

/* γ maximising the dual along the combined step: γ·lin − ½γ²·quad over [0, 1]. One step alone
 * was line-searched (or QP-optimal) on its own block, so its γ is 1 (exactly, not to rounding):
 * sync_every = 1 is the serial algorithm. */
static double round_gamma(double lin, double quad, int64_t steps)
{
    if (steps <= 1) return 1.0;
    if (!(quad > 0)) return lin > 0 ? 1.0 : 0.0;
    double g = lin / quad;
    return g < 0 ? 0 : g > 1 ? 1 : g;
}

/* The gathered round: every rank receives every step of the round, orders them by position, and
 * applies w += γ·Σ x_k Δc_kᵀ in that order: the same bits at any rank count. quad = λ·||ΔW||² =
 * λ·Σ_{k,k′} (x_k·x_k′)(Δc_k·Δc_k′) (the Δc Gram by dsyrk). */
static strux_status combine_gathered(strux_solver *s, dual_data *d, rta_method *m, int64_t j0,
                                     int64_t j1)
{
    int64_t p = strux_model_n_rows(d->w), n_all;
    STRUX_TRY(strux_comm_allgather(s->comm, m->rec, m->rec_len, m->all, m->rec_cap, &n_all));
    double t0 = strux_time_now();
    for (int64_t k = 0; k < j1 - j0; k++)
        m->at[k] = -1;
    for (int64_t o = 0; o < n_all; o += rec_size(m->all + o, p))
        m->at[(int64_t)m->all[o] - j0] = o;
    int32_t R = 0;
    double lin = 0;
    strux_csr *xr = &m->xr;
    xr->ptr[0] = 0;
    for (int64_t k = 0; k < j1 - j0; k++) {
        if (m->at[k] < 0) continue;
        const double *r = m->all + m->at[k];
        int64_t nnz = (int64_t)r[3], o = xr->ptr[R];
        lin += r[2];
        for (int64_t q = 0; q < nnz; q++) {
            xr->col[o + q] = (int32_t)r[RTA_REC_HEAD + q];
            xr->val[o + q] = (float)r[RTA_REC_HEAD + nnz + q];
        }
        xr->ptr[R + 1] = o + nnz;
        memcpy(m->Cr + (int64_t)R * p, r + RTA_REC_HEAD + 2 * nnz, (size_t)p * sizeof *m->Cr);
        R++;
    }
    double quad = 0;
    if (R > 1) {
        strux_gram_cols(p, R, 1.0, m->Cr, m->Gr);
        for (int32_t k = 0; k < R; k++)
            for (int32_t q = 0; q < R; q++)
                quad += strux_sprow_dot(xr, k, q) * m->Gr[(int64_t)k * R + q];
        quad *= s->opt.lambda;
    }
    double gamma = round_gamma(lin, quad, R);
    if (gamma > 0)
        for (int32_t k = 0; k < R; k++)
            strux_model_add(d->w, xr, k, 0, (int32_t)p, gamma, m->Cr + (int64_t)k * p);
    apply_blocks(s, d, m, gamma);
    m->update_s += strux_time_now() - t0;
    m->gamma_sum += gamma;
    return STRUX_OK;
}

/* The summed round: ΔW of this rank's steps (in position order), one allreduce of it, lin and the
 * step count from a second of two scalars; quad = λ·||ΔW||². */
static strux_status combine_summed(strux_solver *s, dual_data *d, rta_method *m)
{
    int64_t p = strux_model_n_rows(d->w);
    double t0 = strux_time_now(), sums[2] = {0, 0};
    strux_model_zero(m->dW);
    for (int64_t o = 0; o < m->rec_len; o += rec_size(m->rec + o, p)) {
        const double *r = m->rec + o;
        int64_t i = d->perm[(int64_t)r[0]] - s->ds->first;
        strux_task_block_apply(s->task, s->ds, i, r + RTA_REC_HEAD, 1.0, m->dW);
        sums[0] += r[2];
        sums[1] += 1;
    }
    m->update_s += strux_time_now() - t0;
    STRUX_TRY(strux_solver_allreduce_model(s, m->dW));
    STRUX_TRY(strux_comm_allreduce_sum(s->comm, sums, 2));
    t0 = strux_time_now();
    double gamma = round_gamma(sums[0], s->opt.lambda * strux_model_norm2(m->dW), (int64_t)sums[1]);
    if (gamma > 0) STRUX_TRY(strux_model_axpy(gamma, m->dW, d->w));
    apply_blocks(s, d, m, gamma);
    m->update_s += strux_time_now() - t0;
    m->gamma_sum += gamma;
    return STRUX_OK;
}

/* One round: the local examples among positions [j0, j1) step against w, then the combination. */
static strux_status rta_round(strux_solver *s, dual_data *d, int64_t j0, int64_t j1)
{
    rta_method *m = d->mdata;
    const strux_dataset *ds = s->ds;
    strux_status st = STRUX_OK;
    m->rec_len = 0;
    m->gather = gathers(d, m, j1 - j0);
    for (int64_t j = j0; j < j1 && st == STRUX_OK; j++) {
        int64_t i = d->perm[j] - ds->first;
        if (i >= 0 && i < ds->n_local) st = rta_step(s, d, i, j);
        if (j % PROGRESS_EVERY == PROGRESS_EVERY - 1) strux_solver_progress(s, j + 1, ds->n_global);
    }
    STRUX_TRY(strux_comm_agree(s->comm, st));
    m->rounds++;
    return m->gather ? combine_gathered(s, d, m, j0, j1) : combine_summed(s, d, m);
}

/* The epoch's order: the engine's (seed, epoch) permutation, stratified so that every round
 * splits over the ranks by their share of the examples, not at random (a random order gives
 * np 2 at most 1.67x at B = 16: README "RTA"). The ids are cut into S equal slices (S a power of
 * two, at most RTA_STRATA, at least RTA_STRATUM_MIN examples a slice); each slice keeps the
 * permutation's order, and the epoch deals one example of every slice per cycle, visiting the
 * slices in bit-reversed order, so any 2^k consecutive positions of a cycle (k ≤ log2 S) from a
 * multiple of 2^k hold one example of each of 2^k equal parts of the ids. Depends on n, the seed
 * and the epoch only: the same at every rank count. */
static void rta_epoch_order(strux_solver *s, dual_data *d, rta_method *m)
{
    int64_t n = s->ds->n_global, S = 1, cnt[RTA_STRATA + 1] = {0};
    int bits = 0;
    while (2 * S <= RTA_STRATA && 2 * S * RTA_STRATUM_MIN <= n) {
        S *= 2;
        bits++;
    }
    strux_dual_epoch_order(s, d);
    for (int64_t j = 0; j < n; j++)
        cnt[d->perm[j] * S / n + 1]++;
    for (int64_t t = 0; t < S; t++)
        cnt[t + 1] += cnt[t];
    int64_t fill[RTA_STRATA];
    memcpy(fill, cnt, (size_t)S * sizeof *fill);
    for (int64_t j = 0; j < n; j++)
        m->strata[fill[d->perm[j] * S / n]++] = d->perm[j];
    int64_t rev[RTA_STRATA] = {0}; /* t bit-reversed */
    for (int64_t t = 0; t < S; t++)
        for (int b = 0; b < bits; b++)
            rev[t] |= ((t >> b) & 1) << (bits - 1 - b);
    int64_t j = 0;
    for (int64_t c = 0; j < n; c++)
        for (int64_t t = 0; t < S; t++)
            if (cnt[rev[t]] + c < cnt[rev[t] + 1]) d->perm[j++] = m->strata[cnt[rev[t]] + c];
}

static const dual_method rta_method_ops = {
    .setup = rta_setup, .destroy = rta_destroy, .own_rounds = 1};

/* ---- the engine's ops with the epoch statistics and the certificate's certification ---- */

/* One pass over the data in the epoch's (seed, epoch) order, cut into rounds of B examples. */
static strux_status rta_epoch(strux_solver *s)
{
    dual_data *d = s->data;
    rta_method *m = d->mdata;
    int64_t n = s->ds->n_global;
    m->inference_s = m->update_s = m->gamma_sum = 0;
    m->steps = m->n_cand = m->rounds = 0;
    m->cert_rate = NAN;
    rta_epoch_order(s, d, m);
    m->epoch_B = m->B;
    for (int64_t j0 = 0; j0 < n; j0 += m->B)
        STRUX_TRY(rta_round(s, d, j0, j0 + m->B < n ? j0 + m->B : n));
    if (m->adapt) { /* the next epoch's rounds (RTA_SYNC_START) */
        double g = m->gamma_sum / (double)m->rounds;
        if (g < RTA_GAMMA_LOW && m->B > 1) m->B /= 2;
        if (g > RTA_GAMMA_HIGH && 2 * m->B <= m->B_max) m->B *= 2;
    }
    STRUX_TRY(strux_comm_agree(s->comm, strux_model_status(d->w)));
    int64_t bad = strux_model_find_non_finite(d->w); /* agreed weights: every rank sees it */
    STRUX_CHECK(bad < 0, STRUX_ERR_NUMERIC, "weight %lld is not finite after epoch %lld",
                (long long)bad, (long long)s->epoch + 1);
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
    values[4] = m->rounds > 0 ? m->gamma_sum / (double)m->rounds : NAN;
    values[5] = (double)m->epoch_B;
    return STRUX_OK;
}

static strux_status rta_setup_ops(strux_solver *s)
{
    return strux_dual_ops.setup(s);
}
/* The engine's state and the next epoch's round size. */
static strux_status rta_save(const strux_solver *s, strux_blob *b)
{
    const rta_method *m = ((const dual_data *)s->data)->mdata;
    STRUX_TRY(strux_dual_ops.save(s, b));
    return strux_blob_put(b, &m->B, sizeof m->B);
}
static strux_status rta_load(strux_solver *s, strux_blob *b)
{
    rta_method *m = ((dual_data *)s->data)->mdata;
    STRUX_TRY(strux_dual_ops.load(s, b));
    STRUX_TRY(strux_blob_get(b, &m->B, sizeof m->B, "round size"));
    STRUX_CHECK(m->B >= 1 && m->B <= m->B_max, STRUX_ERR_INPUT,
                "the checkpoint's rounds of %lld examples are outside [1, %lld] of this run",
                (long long)m->B, (long long)m->B_max);
    return STRUX_OK;
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
    dual_data *d = s->data;
    d->perm[0] = s->ds->first + i;
    return rta_round(s, d, 0, 1);
}

strux_status strux_rta_solver_round(strux_solver *s, int64_t j0, int64_t j1, double *gamma)
{
    dual_data *d = s->data;
    rta_method *m = d->mdata;
    double before = m->gamma_sum;
    STRUX_TRY(rta_round(s, d, j0, j1));
    *gamma = m->gamma_sum - before;
    return STRUX_OK;
}

strux_status strux_rta_solver_model(strux_solver *s, int64_t i, strux_rta_model *out)
{
    dual_data *d = s->data;
    rta_method *m = d->mdata;
    strux_block_shape bs;
    double G0, curv;
    STRUX_TRY(search(s, d, m, i, &bs, &G0, &curv));
    STRUX_TRY(newton_model(s, d, m, i, bs.p, G0, strux_dataset_weight(s->ds, i) / d->n, curv));
    *out = (strux_rta_model){.D = m->D, .truth = m->truth, .y = m->cand.y, .b = m->bq, .Q = m->Q};
    return STRUX_OK;
}

int strux_rta_solver_gathers(const strux_solver *s)
{
    const dual_data *d = s->data;
    const rta_method *m = d->mdata;
    return gathers(d, m, m->B);
}

const int64_t *strux_rta_solver_order(strux_solver *s)
{
    dual_data *d = s->data;
    rta_epoch_order(s, d, d->mdata);
    return d->perm;
}

strux_status strux_solver_create_rta(strux_solver *s)
{
    STRUX_TRY(strux_dual_attach(s, &rta_method_ops));
    s->ops = &rta_ops;
    return STRUX_OK;
}
