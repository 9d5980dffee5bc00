/* solvers/m3l_kernel.c - solver.type = m3l_kernel: kernelised M3L by SMO (Hariharan,
 * Vishwanathan, Varma; specs/m3l.md §2, §7.2; issue 16 "m3l_kernel"). The problem is m3l's,
 *     J(Z) = (λ/2)·tr(Z R⁻¹ Zᵀ) + (1/W)·Σ_i v_i·Σ_l max(0, 1 − y_il·z_l·φ(x_i)),
 * solved in the paper's dual: α_il ∈ [0, C_i], C_i = v_i/(2λW), gradients g_il = 2 − 2·y_il·f_l(x_i)
 * (Hamming loss, ρ = 2), kept signed, s_il = y_il·g_il (§2.5), label-major. An outer iteration
 * picks the label l with the largest |ĝ| (the lowest on ties, A17), then takes up to
 * m3l.steps_per_label steps on it, each on the pair (p, q): p the largest |ĝ_pl|, q the largest
 * h^max_pq over S_p (§2.4, A3), solved by Solve2DQP (or Solve1DQP when S_p is empty, §2.2), with
 * label l's gradients updated at once and the other labels' gathered in u; the inner loop ends
 * early once max |ĝ_il| ≤ τ (A2), and one rank-1 update s_·k −= 4·R_kl·u (BLAS dger) flushes u
 * (A1). With m3l.schedule = per_label the labels are trained one after another, each until its
 * |ĝ| ≤ τ, the kernel cache emptied between them (the 1-vs-All baseline with LIBSVM's cache
 * behaviour). τ = 2·m3l.pg_tol (LIBSVM's -e units: g is twice the binary SVM's gradient, §2.8).
 * Kernels (kernel.type): linear, rbf, poly on the features without the bias column, data.bias²
 * added (A7), so the linear kernel trains m3l's model. Kernel rows come from a per-rank LRU cache
 * (kernel.cache_mb; float rows unless kernel.cache_precision = double, A18); the diagonal is
 * kept apart.
 * Distribution by rows (§7.2): a rank owns its rows' α, signed gradients and its part of every
 * kernel row; p and q come from MAXLOC allreduces (ties to the lowest global index), their
 * owners broadcast x and the scalars, every rank solves the same 2×2 problem and updates its own
 * rows: the iterates are the serial ones at any rank count.
 * An epoch is outer iterations until N steps are taken (or the stopping rule holds). The
 * certificate comes from the exact gradients after a flush (§1.9): dual ½Σα(ρ + g), primal
 * ½Σα(ρ − g) + Σ_i C_i·Σ_l max(0, g), times λ (strux's scale). The model is the kernel
 * expansion f_l(x) = Σ_s coef[s,l]·K(sv_s, x), coef = Σ_k R_kl·y_sk·β_sk with β = 2α (LIBLINEAR's
 * units), gathered from every rank (strux_solver_export_info); with the linear kernel the weight
 * store also gets Z = Σ_s x_s ⊗ coef_s. No shrinking (the paper describes none for this solver). */
#include "m3l.h"
#include "solver_impl.h"
#include "strux/kernel.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define T float
#define NAME(f) f##_f
#include "m3l_kernel_t.h"
#undef T
#undef NAME
#define T double
#define NAME(f) f##_d
#include "m3l_kernel_t.h"
#undef T
#undef NAME

const strux_opt_spec strux_kernel_opt_specs[] = {
    {"kernel.type", STRUX_OPT_CHOICE, offsetof(strux_kernel_options, type), "linear", 0, 0,
     "linear|rbf|poly",
     "kernel of solver.type = m3l_kernel: linear x·x′, rbf exp(−γ·||x − x′||²), poly "
     "(γ·x·x′ + coef0)^degree, on the features without the bias column, data.bias² added to "
     "each (specs/m3l.md A7: linear then trains m3l's model)"},
    {"kernel.gamma", STRUX_OPT_DOUBLE, offsetof(strux_kernel_options, gamma), "0", 0, 1e12, NULL,
     "γ of rbf and poly; 0: 1/(features), LIBSVM's default"},
    {"kernel.degree", STRUX_OPT_INT, offsetof(strux_kernel_options, degree), "3", 1, 10, NULL,
     "degree of poly"},
    {"kernel.coef0", STRUX_OPT_DOUBLE, offsetof(strux_kernel_options, coef0), "0", -1e12, 1e12,
     NULL, "coef0 of poly"},
    {"kernel.cache_mb", STRUX_OPT_DOUBLE, offsetof(strux_kernel_options, cache_mb), "200", 1,
     1e9, NULL,
     "MB of kernel rows each rank caches (least recently used replaced; a rank's rows are its "
     "own examples' entries, so the job's cache grows with the ranks)"},
    {"kernel.cache_precision", STRUX_OPT_CHOICE, offsetof(strux_kernel_options, cache_precision),
     "float", 0, 0, "float|double",
     "cached kernel rows in float (LIBSVM's) or double (exact comparisons); the diagonal is "
     "always double"},
    {NULL},
};

static const char *const kernel_columns[] = {"smo_steps", "kernel_rows", NULL};

/* The flush's dger runs over whole rows of ld = n rounded up to this many doubles, u zero beyond
 * n: OpenBLAS's axpy kernels take blocks of 16 or 32 with fused multiply-adds and a plain loop for
 * the rest, so without the padding an entry's rounding would depend on where the rank's rows end,
 * and the iterates on the rank count (§7.2 wants them the serial ones). */
#define FLUSH_PAD 64

/* What the owner of a working-set point sends (§7.2 steps b, d), then its non-zeros. */
typedef struct point_head {
    double y, alpha, s, C, K_ii, norm2;
    double K_pq; /* the q point's entry of the p point's kernel row */
    int64_t nnz; /* features without the bias column */
} point_head;

typedef struct kdata {
    strux_m3l_prior prior;
    int32_t L;
    int64_t n, N, first; /* local examples, all, the global index of the first */
    int64_t ld;          /* the label-major arrays' row stride: n rounded up to FLUSH_PAD */
    int n_ranks, rank;
    int64_t *rank_first; /* n_ranks + 1: the global index of each rank's first example */
    strux_kernel kern;
    int32_t bias_col;
    double *diag;     /* n: K_ii */
    double *norm2;    /* n: ||x_i||², bias column excluded */
    signed char *y;   /* L×ld: ±1 (0 in the padding) */
    double *alpha;    /* L×ld: α in [0, C_i] */
    double *s;        /* L×ld: signed gradients y·g */
    double *C;        /* n: v_i/(2λW) */
    double *u;        /* ld: the pending cross-label update (0 in the padding) */
    double *rcol;     /* L: R's column l with R_ll zeroed (the flush) */
    double *lmax_loc; /* L: this rank's max |ĝ| per label */
    double *lmax;     /* L: the job's (after each flush) */
    int need_lmax;    /* lmax_loc to recompute (after a resume) */
    strux_kcache *cache;
    double *row_d[2]; /* n: the p and q rows computed in double (float cache) */
    double *v;        /* dim: the scattered x of a point (bias column 0) */
    unsigned char *pkt; /* point_head + max_nnz·(4 + 4) bytes */
    size_t pkt_bytes;
    double tau; /* 2·m3l.pg_tol */
    int64_t T;  /* steps per outer iteration */
    int per_label;
    int32_t cur, clean; /* per_label: the label trained, labels found converged in a row */
    int converged;
    int64_t steps, rows; /* SMO steps, kernel rows computed on this rank */
} kdata;

static struct strux_solver_ops kernel_ops;

/* ---- one point's data across ranks ---- */

static int owner_of(const kdata *k, int64_t g)
{
    int lo = 0, hi = k->n_ranks - 1;
    while (lo < hi) { /* the last rank whose first example is at or before g */
        int mid = (lo + hi + 1) / 2;
        if (k->rank_first[mid] <= g) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Point g (global) for label l: its owner's scalars and features into the packet, broadcast;
 * K_pq is row_p's entry of g when row_p is given (the q point). Collective. */
static strux_status fetch_point(strux_solver *s, kdata *k, int64_t g, int32_t l,
                                const void *row_p, point_head *h, const int32_t **idx,
                                const float **val)
{
    const strux_dataset *ds = s->ds;
    int root = owner_of(k, g);
    int32_t *pidx = (int32_t *)(k->pkt + sizeof *h);
    if (root == k->rank) {
        int64_t i = g - k->first, c = (int64_t)l * k->ld + i;
        h->y = k->y[c];
        h->alpha = k->alpha[c];
        h->s = k->s[c];
        h->C = k->C[i];
        h->K_ii = k->diag[i];
        h->norm2 = k->norm2[i];
        h->K_pq = !row_p ? 0
                  : strux_kcache_is_double(k->cache) ? ((const double *)row_p)[i]
                                                     : ((const float *)row_p)[i];
        h->nnz = 0;
        int64_t cap = (int64_t)((k->pkt_bytes - sizeof *h) / 8);
        float *pval = (float *)(pidx + cap);
        for (int64_t q = ds->x.ptr[i]; q < ds->x.ptr[i + 1]; q++)
            if (ds->x.col[q] != k->bias_col) {
                pidx[h->nnz] = ds->x.col[q];
                pval[h->nnz++] = ds->x.val[q];
            }
        memcpy(k->pkt, h, sizeof *h);
    }
    if (k->n_ranks > 1) {
        STRUX_TRY(strux_comm_bcast(s->comm, k->pkt, k->pkt_bytes, root));
        memcpy(h, k->pkt, sizeof *h);
    }
    int64_t cap = (int64_t)((k->pkt_bytes - sizeof *h) / 8);
    *idx = pidx;
    *val = (const float *)(pidx + cap);
    return STRUX_OK;
}

/* The local part of point g's kernel row: from the cache, or computed from its features. */
static const void *kernel_row(strux_solver *s, kdata *k, int64_t g, const point_head *h,
                              const int32_t *idx, const float *val, double *scratch)
{
    int hit;
    void *row = strux_kcache_get(k->cache, g, &hit);
    if (hit) return row;
    for (int64_t q = 0; q < h->nnz; q++)
        k->v[idx[q]] = val[q];
    int dbl = strux_kcache_is_double(k->cache);
    double *out = dbl ? row : scratch;
    strux_kernel_rows(&k->kern, &s->ds->x, 0, k->n, k->norm2, k->v, h->norm2, out);
    if (!dbl)
        for (int64_t i = 0; i < k->n; i++)
            ((float *)row)[i] = (float)out[i];
    for (int64_t q = 0; q < h->nnz; q++)
        k->v[idx[q]] = 0;
    k->rows++;
    return row;
}

/* ---- the iteration ---- */

/* This rank's max |ĝ| of label l. */
static double label_max(const kdata *k, int32_t l)
{
    const double *a = k->alpha + (int64_t)l * k->ld, *sl = k->s + (int64_t)l * k->ld;
    const signed char *y = k->y + (int64_t)l * k->ld;
    double m = 0;
    for (int64_t i = 0; i < k->n; i++)
        m = fmax(m, fabs(strux_m3l_pg(a[i], y[i] * sl[i], k->C[i])));
    return m;
}

/* The job's per-label maxima from this rank's. Collective. */
static strux_status share_lmax(strux_solver *s, kdata *k)
{
    memcpy(k->lmax, k->lmax_loc, (size_t)k->L * sizeof *k->lmax);
    return k->n_ranks > 1 ? strux_comm_allreduce_max(s->comm, k->lmax, k->L) : STRUX_OK;
}

/* One SMO step on label l with first variable g_p (global): §2.4 steps 3-5, §2.2, §2.5.
 * Collective. */
static strux_status smo_step(strux_solver *s, kdata *k, int32_t l, int64_t g_p)
{
    int64_t n = k->n, off = (int64_t)l * k->ld;
    double *a_l = k->alpha + off, *s_l = k->s + off;
    const signed char *y_l = k->y + off;
    int dbl = strux_kcache_is_double(k->cache);
    double R_ll = k->prior.R[(int64_t)l * k->L + l];
    point_head hp, hq;
    const int32_t *idx;
    const float *val;
    STRUX_TRY(fetch_point(s, k, g_p, l, NULL, &hp, &idx, &val));
    const void *row_p = kernel_row(s, k, g_p, &hp, idx, val, k->row_d[0]);
    double grad_p = hp.y * hp.s, h = -INFINITY;
    int64_t skip = g_p - k->first, jq;
    if (skip < 0 || skip >= n) skip = -1;
    jq = dbl ? pick_q_d(row_p, n, skip, s_l, a_l, y_l, k->C, k->diag, hp.K_ii, grad_p, hp.y, &h)
             : pick_q_f(row_p, n, skip, s_l, a_l, y_l, k->C, k->diag, hp.K_ii, grad_p, hp.y, &h);
    int64_t g_q = jq >= 0 ? k->first + jq : INT64_MAX;
    STRUX_TRY(strux_comm_allreduce_maxloc(s->comm, &h, &g_q));
    double r4 = 4 * R_ll, d[2] = {0, 0};
    const void *row_q = NULL;
    if (h > -INFINITY) {
        STRUX_TRY(fetch_point(s, k, g_q, l, row_p, &hq, &idx, &val));
        row_q = kernel_row(s, k, g_q, &hq, idx, val, k->row_d[1]);
        double g[2] = {grad_p, hq.y * hq.s}, m[2] = {-hp.alpha, -hq.alpha},
               M[2] = {hp.C - hp.alpha, hq.C - hq.alpha};
        if (strux_m3l_solve2d(r4 * hp.K_ii, r4 * hp.y * hq.y * hq.K_pq, r4 * hq.K_ii, g, m, M, d))
            row_q = NULL; /* degenerate: the 1-D step on p */
    } else {
        d[0] = strux_m3l_solve1d(r4 * hp.K_ii, grad_p, -hp.alpha, hp.C - hp.alpha);
    }
    /* the steps as taken, after snapping onto the bounds (§2.2 guards) */
    d[0] = strux_m3l_snap(hp.alpha + d[0], hp.C) - hp.alpha;
    if (row_q) d[1] = strux_m3l_snap(hq.alpha + d[1], hq.C) - hq.alpha;
    if (skip >= 0) a_l[skip] = hp.alpha + d[0];
    if (row_q && g_q >= k->first && g_q < k->first + n) a_l[g_q - k->first] = hq.alpha + d[1];
    double c_p = hp.y * d[0], c_q = row_q ? hq.y * d[1] : 0;
    if (dbl)
        update_d(row_p, row_q, n, c_p, c_q, r4, s_l, k->u);
    else
        update_f(row_p, row_q, n, c_p, c_q, r4, s_l, k->u);
    k->steps++;
    return STRUX_OK;
}

/* One outer iteration on label l (§2.6 with A1, A2): up to T steps, then the flush of u into
 * the other labels through R's column l and the new per-label maxima. Collective. */
static strux_status outer_iteration(strux_solver *s, kdata *k, int32_t l)
{
    int64_t n = k->n, off = (int64_t)l * k->ld;
    memset(k->u, 0, (size_t)n * sizeof *k->u);
    for (int64_t t = 0; t < k->T; t++) {
        const double *a_l = k->alpha + off, *s_l = k->s + off;
        const signed char *y_l = k->y + off;
        double best = -1;
        int64_t g_p = INT64_MAX;
        for (int64_t i = 0; i < n; i++) {
            double v = fabs(strux_m3l_pg(a_l[i], y_l[i] * s_l[i], k->C[i]));
            if (v > best) {
                best = v;
                g_p = k->first + i;
            }
        }
        STRUX_TRY(strux_comm_allreduce_maxloc(s->comm, &best, &g_p));
        if (!(best > k->tau)) break; /* label l converged (A2) */
        STRUX_TRY(smo_step(s, k, l, g_p));
    }
    const strux_m3l_prior *p = &k->prior;
    int flush = 0;
    memset(k->rcol, 0, (size_t)k->L * sizeof *k->rcol);
    for (int64_t q = p->col_ptr[l]; q < p->col_ptr[l + 1]; q++)
        if (p->col_idx[q] != l) {
            k->rcol[p->col_idx[q]] = p->col_val[q];
            flush = 1;
        }
    if (flush) strux_ger_rows(k->L, k->ld, -4.0, k->rcol, k->u, k->s);
    for (int64_t q = p->col_ptr[l]; q < p->col_ptr[l + 1]; q++)
        k->lmax_loc[p->col_idx[q]] = label_max(k, p->col_idx[q]);
    k->lmax_loc[l] = label_max(k, l);
    return share_lmax(s, k);
}

/* The label of the next outer iteration, −1 when every |ĝ| ≤ τ: the largest max |ĝ| (joint;
 * the lowest on ties), or the label in training until its |ĝ| ≤ τ (per_label). */
static int32_t next_label(kdata *k)
{
    if (!k->per_label) {
        int32_t l = 0;
        for (int32_t q = 1; q < k->L; q++)
            if (k->lmax[q] > k->lmax[l]) l = q;
        return k->lmax[l] > k->tau ? l : -1;
    }
    while (k->clean < k->L) {
        if (k->lmax[k->cur] > k->tau) return k->cur;
        k->cur = (k->cur + 1) % k->L; /* the next label, with an empty cache */
        k->clean++;
        strux_kcache_clear(k->cache);
    }
    return -1;
}

static strux_status kernel_epoch(strux_solver *s)
{
    kdata *k = s->data;
    if (k->need_lmax) {
        for (int32_t l = 0; l < k->L; l++)
            k->lmax_loc[l] = label_max(k, l);
        STRUX_TRY(share_lmax(s, k));
        k->need_lmax = 0;
    }
    int64_t start = k->steps, done_steps = 0;
    do {
        int32_t l = next_label(k);
        if (l < 0) {
            k->converged = 1;
            break;
        }
        k->clean = 0; /* per_label: label l needs work */
        int64_t before = k->steps;
        STRUX_TRY(outer_iteration(s, k, l));
        STRUX_CHECK(k->steps > before, STRUX_ERR_INTERNAL,
                    "m3l_kernel: label %d has max |projected gradient| %g > tau %g but no step",
                    (int)l, k->lmax[l], k->tau);
        done_steps = k->steps - start;
        strux_solver_progress(s, done_steps < k->N ? done_steps : k->N, k->N);
    } while (done_steps < k->N);
    return STRUX_OK;
}

/* ---- set-up ---- */

/* The kernel of the [kernel] keys on ds: γ = 0 becomes 1/features; b0 the bias feature's value,
 * the same in every row (the reader appends it). */
static strux_status set_kernel(strux_solver *s, kdata *k)
{
    const strux_kernel_options *o = &s->opt.kernel;
    const strux_dataset *ds = s->ds;
    STRUX_TRY(strux_kernel_parse(o->type, &k->kern.type));
    int32_t features = ds->dim - (ds->bias_col >= 0);
    k->kern.gamma = o->gamma > 0 ? o->gamma : 1.0 / (features > 0 ? features : 1);
    k->kern.degree = (int32_t)o->degree;
    k->kern.coef0 = o->coef0;
    double b0 = 0;
    if (ds->bias_col >= 0)
        for (int64_t q = ds->x.ptr[0]; q < ds->x.ptr[1]; q++)
            if (ds->x.col[q] == ds->bias_col) b0 = ds->x.val[q];
    STRUX_TRY(strux_comm_allreduce_max(s->comm, &b0, 1));
    k->kern.b0 = b0;
    return STRUX_OK;
}

/* The global offsets of every rank's examples (a rank's rows are contiguous). */
static strux_status set_ranks(strux_solver *s, kdata *k)
{
    k->n_ranks = strux_comm_size(s->comm);
    k->rank = strux_comm_rank(s->comm);
    STRUX_TRY(strux_alloc_array(&k->rank_first, (size_t)k->n_ranks + 1, sizeof *k->rank_first));
    k->rank_first[k->rank + 1] = k->n;
    STRUX_TRY(strux_comm_allreduce_sum_i64(s->comm, k->rank_first, k->n_ranks + 1));
    for (int r = 0; r < k->n_ranks; r++)
        k->rank_first[r + 1] += k->rank_first[r];
    STRUX_CHECK(k->rank_first[k->rank] == k->first, STRUX_ERR_INTERNAL,
                "m3l_kernel: rank %d holds examples from %lld, the ranks' counts say %lld", k->rank,
                (long long)k->first, (long long)k->rank_first[k->rank]);
    return STRUX_OK;
}

/* Labels ±1 (the task's hinges: σ_l = −y_l), boxes, norms, the diagonal; α = 0, g = ρ = 2. */
static strux_status set_examples(strux_solver *s, kdata *k)
{
    const strux_dataset *ds = s->ds;
    int64_t n = k->n, L = k->L, ld = k->ld;
    strux_label truth = {0};
    double *sigma = NULL;
    strux_status st = strux_task_label_alloc(s->task, ds, &truth);
    if (st == STRUX_OK) st = strux_alloc_array(&sigma, (size_t)L + 1, sizeof *sigma);
    double C_unit = 1 / (2 * s->opt.lambda * ds->weight_sum);
    for (int64_t i = 0; st == STRUX_OK && i < n; i++) {
        st = strux_task_truth(s->task, ds, i, &truth);
        if (st != STRUX_OK) break;
        int32_t parts = strux_task_hinge_parts(s->task, &truth, sigma);
        if (parts != L) {
            st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                                 "m3l_kernel: example %lld has %d hinges, not %d",
                                 (long long)(k->first + i), (int)parts, (int)L);
            break;
        }
        for (int64_t l = 0; l < L; l++) {
            k->y[l * ld + i] = sigma[l] > 0 ? -1 : 1;
            k->s[l * ld + i] = 2.0 * k->y[l * ld + i];
        }
        k->C[i] = strux_dataset_weight(ds, i) * C_unit;
        k->norm2[i] = strux_kernel_norm2(&ds->x, i, k->bias_col);
        k->diag[i] = strux_kernel_value(&k->kern, k->norm2[i], k->norm2[i], k->norm2[i]);
    }
    strux_label_free(&truth);
    strux_free(&sigma);
    return st;
}

static strux_status kernel_setup(strux_solver *s)
{
    kdata *k = s->data;
    const strux_dataset *ds = s->ds;
    const strux_m3l_options *o = &s->opt.m3l;
    k->L = strux_model_n_rows(s->model);
    k->n = ds->n_local;
    k->N = ds->n_global;
    k->first = ds->first;
    k->bias_col = ds->bias_col;
    STRUX_CHECK(ds->ex_ptr == NULL, STRUX_ERR_INTERNAL, "m3l_kernel: examples of several rows");
    k->per_label = strcmp(o->schedule, "per_label") == 0;
    STRUX_CHECK(!k->per_label || o->pg_tol > 0, STRUX_ERR_CONFIG,
                "m3l.schedule = per_label trains each label until its projected gradients are "
                "within m3l.pg_tol, which is 0 (off): set m3l.pg_tol > 0 (LIBSVM's -e, e.g. "
                "1e-3)");
    k->tau = 2 * o->pg_tol;
    k->T = o->steps_per_label > 0 ? o->steps_per_label : k->L;
    STRUX_TRY(strux_m3l_prior_build(o, s->comm, ds, k->L, &k->prior));
    STRUX_TRY(set_kernel(s, k));
    STRUX_TRY(set_ranks(s, k));
    k->ld = (k->n + FLUSH_PAD - 1) / FLUSH_PAD * FLUSH_PAD;
    size_t n = (size_t)k->n + 1, nl = (size_t)k->L * (size_t)k->ld + 1;
    STRUX_TRY(strux_alloc_array(&k->y, nl, sizeof *k->y));
    STRUX_TRY(strux_alloc_array(&k->alpha, nl, sizeof *k->alpha));
    STRUX_TRY(strux_alloc_array(&k->s, nl, sizeof *k->s));
    STRUX_TRY(strux_alloc_array(&k->C, n, sizeof *k->C));
    STRUX_TRY(strux_alloc_array(&k->u, (size_t)k->ld + 1, sizeof *k->u));
    STRUX_TRY(strux_alloc_array(&k->diag, n, sizeof *k->diag));
    STRUX_TRY(strux_alloc_array(&k->norm2, n, sizeof *k->norm2));
    STRUX_TRY(strux_alloc_array(&k->row_d[0], n, sizeof *k->row_d[0]));
    STRUX_TRY(strux_alloc_array(&k->row_d[1], n, sizeof *k->row_d[1]));
    STRUX_TRY(strux_alloc_array(&k->v, (size_t)ds->dim + 1, sizeof *k->v));
    STRUX_TRY(strux_alloc_array(&k->rcol, (size_t)k->L + 1, sizeof *k->rcol));
    STRUX_TRY(strux_alloc_array(&k->lmax_loc, (size_t)k->L + 1, sizeof *k->lmax_loc));
    STRUX_TRY(strux_alloc_array(&k->lmax, (size_t)k->L + 1, sizeof *k->lmax));
    STRUX_TRY(set_examples(s, k));
    double max_nnz = 0;
    for (int64_t i = 0; i < k->n; i++)
        max_nnz = fmax(max_nnz, (double)(ds->x.ptr[i + 1] - ds->x.ptr[i]));
    STRUX_TRY(strux_comm_allreduce_max(s->comm, &max_nnz, 1));
    k->pkt_bytes = sizeof(point_head) + (size_t)max_nnz * 8;
    STRUX_TRY(strux_alloc(&k->pkt, k->pkt_bytes));
    const strux_kernel_options *ko = &s->opt.kernel;
    STRUX_TRY(strux_kcache_create(k->N, k->n, strcmp(ko->cache_precision, "double") == 0,
                                  (size_t)(ko->cache_mb * 1048576.0), &k->cache));
    k->need_lmax = 1;
    strux_log(STRUX_LOG_INFO,
              "m3l_kernel: %s kernel (gamma %g, degree %d, coef0 %g, bias² %g), %lld cached rows "
              "of %lld %s per rank, %s schedule, %lld steps per outer iteration, tau %g",
              strux_kernel_name(k->kern.type), k->kern.gamma, (int)k->kern.degree, k->kern.coef0,
              k->kern.b0 * k->kern.b0, (long long)strux_kcache_slots(k->cache), (long long)k->n,
              ko->cache_precision, o->schedule, (long long)k->T, k->tau);
    return STRUX_OK;
}

/* ---- certificate, state, model ---- */

/* §1.9 from the exact gradients: dual ½Σα(ρ + g), regulariser ½Σα(ρ − g), hinge Σ C_i·max(0, g),
 * gap Σ C_i·max(0, g) − Σ α·g; times λ. */
static strux_status kernel_certificate(strux_solver *s, strux_certificate *c)
{
    kdata *k = s->data;
    double sum[4] = {0, 0, 0, 0}; /* dual, regulariser, hinge, Σ α·g */
    for (int64_t l = 0; l < k->L; l++)
        for (int64_t i = 0; i < k->n; i++) {
            int64_t q = l * k->ld + i;
            double g = k->y[q] * k->s[q], a = k->alpha[q];
            sum[0] += 0.5 * a * (2 + g);
            sum[1] += 0.5 * a * (2 - g);
            sum[2] += k->C[i] * (g > 0 ? g : 0);
            sum[3] += a * g;
        }
    STRUX_TRY(strux_comm_allreduce_sum(s->comm, sum, 4));
    double lambda = s->opt.lambda;
    c->loss = lambda * sum[2];
    c->primal = lambda * (sum[1] + sum[2]);
    c->dual = lambda * sum[0];
    c->gap = lambda * (sum[2] - sum[3]);
    c->lower_bound = 0;
    STRUX_CHECK(isfinite(c->primal) && isfinite(c->dual), STRUX_ERR_NUMERIC,
                "m3l_kernel objective after epoch %lld: primal %g, dual %g",
                (long long)s->epoch + 1, c->primal, c->dual);
    return STRUX_OK;
}

static int kernel_converged(const strux_solver *s)
{
    const kdata *k = s->data;
    return k->converged;
}

static strux_status kernel_metrics(strux_solver *s, double *values)
{
    kdata *k = s->data;
    int64_t rows = k->rows;
    STRUX_TRY(strux_comm_allreduce_sum_i64(s->comm, &rows, 1));
    values[0] = (double)k->steps;
    values[1] = (double)rows;
    return STRUX_OK;
}

/* Checkpoint, global part: the counters and the schedule's position. */
static strux_status kernel_save(const strux_solver *s, strux_blob *b)
{
    const kdata *k = s->data;
    STRUX_TRY(strux_blob_put(b, &k->steps, sizeof k->steps));
    STRUX_TRY(strux_blob_put(b, &k->cur, sizeof k->cur));
    STRUX_TRY(strux_blob_put(b, &k->clean, sizeof k->clean));
    return strux_blob_put(b, &k->converged, sizeof k->converged);
}

static strux_status kernel_load(strux_solver *s, strux_blob *b)
{
    kdata *k = s->data;
    STRUX_TRY(strux_blob_get(b, &k->steps, sizeof k->steps, "m3l_kernel steps"));
    STRUX_TRY(strux_blob_get(b, &k->cur, sizeof k->cur, "m3l_kernel label"));
    STRUX_TRY(strux_blob_get(b, &k->clean, sizeof k->clean, "m3l_kernel label"));
    STRUX_TRY(strux_blob_get(b, &k->converged, sizeof k->converged, "m3l_kernel state"));
    STRUX_CHECK(k->cur >= 0 && k->cur < k->L, STRUX_ERR_INPUT,
                "the checkpoint's m3l_kernel label %d is outside [0, %d)", (int)k->cur, (int)k->L);
    return STRUX_OK;
}

/* Checkpoint, per data block: α and the signed gradients of its examples, label by label. */
static strux_status kernel_save_examples(const strux_solver *s, int64_t i0, int64_t i1,
                                         strux_blob *b)
{
    const kdata *k = s->data;
    int64_t head[2] = {i1 - i0, k->L};
    STRUX_TRY(strux_blob_put(b, head, sizeof head));
    for (int64_t l = 0; l < k->L; l++) {
        STRUX_TRY(strux_blob_put(b, k->alpha + l * k->ld + i0, (size_t)(i1 - i0) * sizeof(double)));
        STRUX_TRY(strux_blob_put(b, k->s + l * k->ld + i0, (size_t)(i1 - i0) * sizeof(double)));
    }
    return STRUX_OK;
}

static strux_status kernel_load_examples(strux_solver *s, int64_t i0, int64_t i1, strux_blob *b)
{
    kdata *k = s->data;
    int64_t head[2];
    STRUX_TRY(strux_blob_get(b, head, sizeof head, "m3l_kernel block size"));
    STRUX_CHECK(head[0] == i1 - i0 && head[1] == k->L, STRUX_ERR_INPUT,
                "the checkpoint holds %lld examples of %lld labels for this data block, this run "
                "has %lld of %d (a different data file)",
                (long long)head[0], (long long)head[1], (long long)(i1 - i0), (int)k->L);
    for (int64_t l = 0; l < k->L; l++) {
        STRUX_TRY(strux_blob_get(b, k->alpha + l * k->ld + i0, (size_t)(i1 - i0) * sizeof(double),
                                 "m3l_kernel alpha"));
        STRUX_TRY(strux_blob_get(b, k->s + l * k->ld + i0, (size_t)(i1 - i0) * sizeof(double),
                                 "m3l_kernel gradients"));
    }
    k->need_lmax = 1;
    return STRUX_OK;
}

/* This rank's support vectors as records: row, non-zeros, α (L, β = 2α), coef (L), columns,
 * values. */
static strux_status pack_support(strux_solver *s, kdata *k, strux_blob *b)
{
    const strux_dataset *ds = s->ds;
    const strux_m3l_prior *p = &k->prior;
    int64_t n = k->n, L = k->L, ld = k->ld;
    double *beta = k->rcol; /* L: β·y of the example */
    for (int64_t i = 0; i < n; i++) {
        int any = 0;
        for (int64_t l = 0; l < L; l++)
            any |= k->alpha[l * ld + i] > 0;
        if (!any) continue;
        int64_t head[2] = {k->first + i, 0};
        for (int64_t q = ds->x.ptr[i]; q < ds->x.ptr[i + 1]; q++)
            head[1] += ds->x.col[q] != k->bias_col;
        STRUX_TRY(strux_blob_put(b, head, sizeof head));
        for (int64_t l = 0; l < L; l++) {
            double a = 2 * k->alpha[l * ld + i];
            beta[l] = k->y[l * ld + i] * a;
            STRUX_TRY(strux_blob_put(b, &a, sizeof a));
        }
        for (int32_t l = 0; l < L; l++) {
            double c = 0;
            for (int64_t q = p->col_ptr[l]; q < p->col_ptr[l + 1]; q++)
                c += p->col_val[q] * beta[p->col_idx[q]];
            STRUX_TRY(strux_blob_put(b, &c, sizeof c));
        }
        for (int64_t q = ds->x.ptr[i]; q < ds->x.ptr[i + 1]; q++)
            if (ds->x.col[q] != k->bias_col)
                STRUX_TRY(strux_blob_put(b, &ds->x.col[q], sizeof ds->x.col[q]));
        for (int64_t q = ds->x.ptr[i]; q < ds->x.ptr[i + 1]; q++)
            if (ds->x.col[q] != k->bias_col)
                STRUX_TRY(strux_blob_put(b, &ds->x.val[q], sizeof ds->x.val[q]));
    }
    return STRUX_OK;
}

/* The records of every rank (in rank order: global row order) into the expansion e. */
static strux_status unpack_support(const kdata *k, int32_t n_cols, strux_blob *b, strux_kexp *e)
{
    int64_t L = k->L, n_sv = 0, nnz = 0;
    for (b->pos = 0; b->pos < b->n; n_sv++) { /* count */
        int64_t head[2];
        STRUX_TRY(strux_blob_get(b, head, sizeof head, "support vector"));
        b->pos += (size_t)(2 * L) * sizeof(double) + (size_t)head[1] * 8;
        nnz += head[1];
    }
    strux_kexp_free(e);
    e->kernel = k->kern;
    e->n_labels = k->L;
    e->n_sv = n_sv;
    STRUX_TRY(strux_csr_alloc(&e->sv, n_sv, n_cols, nnz));
    STRUX_TRY(strux_alloc_array(&e->row, (size_t)n_sv + 1, sizeof *e->row));
    STRUX_TRY(strux_alloc_array(&e->alpha, (size_t)(n_sv * L) + 1, sizeof *e->alpha));
    STRUX_TRY(strux_alloc_array(&e->coef, (size_t)(n_sv * L) + 1, sizeof *e->coef));
    b->pos = 0;
    for (int64_t r = 0; r < n_sv; r++) {
        int64_t head[2];
        STRUX_TRY(strux_blob_get(b, head, sizeof head, "support vector"));
        e->row[r] = head[0];
        STRUX_TRY(strux_blob_get(b, e->alpha + r * L, (size_t)L * sizeof(double), "alpha"));
        STRUX_TRY(strux_blob_get(b, e->coef + r * L, (size_t)L * sizeof(double), "coef"));
        int64_t at = e->sv.ptr[r];
        STRUX_TRY(strux_blob_get(b, e->sv.col + at, (size_t)head[1] * sizeof(int32_t), "columns"));
        STRUX_TRY(strux_blob_get(b, e->sv.val + at, (size_t)head[1] * sizeof(float), "values"));
        e->sv.ptr[r + 1] = at + head[1];
    }
    return strux_kexp_prepare(e);
}

/* The kernel expansion of the current α on every rank (gathered on rank 0 in rank order and
 * broadcast); with the linear kernel also Z = Σ_s x_s ⊗ coef_s into the weight store. */
static strux_status kernel_export_info(strux_solver *s, strux_model_info *info)
{
    kdata *k = s->data;
    strux_blob mine = {0}, all = {0};
    strux_status st = pack_support(s, k, &mine);
    STRUX_TRY_GOTO(st, strux_comm_agree(s->comm, st), done);
    void *gathered = NULL;
    size_t n_all = 0;
    STRUX_TRY_GOTO(st, strux_comm_gather_bytes(s->comm, mine.data, mine.n, 0, &gathered, &n_all),
                   done);
    all = (strux_blob){.data = gathered, .n = n_all, .cap = n_all};
    uint64_t len = n_all;
    STRUX_TRY_GOTO(st, strux_comm_bcast(s->comm, &len, sizeof len, 0), done);
    if (k->rank != 0) st = strux_blob_put(&all, NULL, (size_t)len);
    STRUX_TRY_GOTO(st, strux_comm_agree(s->comm, st), done);
    STRUX_TRY_GOTO(st, strux_comm_bcast(s->comm, all.data, (size_t)len, 0), done);
    int32_t n_cols = s->ds->dim - (k->bias_col >= 0);
    st = unpack_support(k, n_cols, &all, &info->m3l.kexp);
    STRUX_TRY_GOTO(st, strux_comm_agree(s->comm, st), done);
    if (k->kern.type == STRUX_KERNEL_LINEAR) { /* Z into the weight store, summed over ranks */
        strux_model_zero(s->model);
        const strux_kexp *e = &info->m3l.kexp;
        for (int64_t r = 0; r < e->n_sv; r++)
            if (e->row[r] >= k->first && e->row[r] < k->first + k->n)
                strux_model_add(s->model, &s->ds->x, e->row[r] - k->first, 0, k->L, 1.0,
                                e->coef + r * k->L);
        STRUX_TRY_GOTO(st, strux_solver_allreduce_model(s, s->model), done);
    }
done:
    strux_blob_free(&mine);
    strux_blob_free(&all);
    return st;
}

static void kernel_destroy(strux_solver *s)
{
    kdata *k = s->data;
    if (!k) return;
    strux_m3l_prior_free(&k->prior);
    strux_free(&k->rank_first);
    strux_free(&k->diag);
    strux_free(&k->norm2);
    strux_free(&k->y);
    strux_free(&k->alpha);
    strux_free(&k->s);
    strux_free(&k->C);
    strux_free(&k->u);
    strux_free(&k->rcol);
    strux_free(&k->lmax_loc);
    strux_free(&k->lmax);
    strux_kcache_destroy(&k->cache);
    strux_free(&k->row_d[0]);
    strux_free(&k->row_d[1]);
    strux_free(&k->v);
    strux_free(&k->pkt);
    strux_free(&s->data);
}

static struct strux_solver_ops kernel_ops = {
    .setup = kernel_setup,
    .epoch = kernel_epoch,
    .certificate = kernel_certificate,
    .own_primal = 1,
    .converged = kernel_converged,
    .export_info = kernel_export_info,
    .save = kernel_save,
    .load = kernel_load,
    .save_examples = kernel_save_examples,
    .load_examples = kernel_load_examples,
    .destroy = kernel_destroy,
    .columns = kernel_columns,
    .metrics = kernel_metrics,
};

strux_status strux_solver_create_m3l_kernel(strux_solver *s)
{
    kdata *k;
    STRUX_TRY(strux_alloc(&k, sizeof *k));
    s->data = k;
    s->ops = &kernel_ops;
    return STRUX_OK;
}

const strux_m3l_prior *strux_m3l_kernel_prior(const strux_solver *s)
{
    if (s->ops != &kernel_ops || !s->data) return NULL;
    const kdata *k = s->data;
    return &k->prior;
}
