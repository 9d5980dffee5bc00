/* tasks/hier_alpha.c - node weights α of normalised hierarchical models (hierarchical.md §3) and
 * the shared-Frobenius α update of SSVM (§4.2). Implements the α part of hierarchy.h, in this
 * order: root handling (A10), the §3.1 ρ closed form and §3.2 height rule on trees, the §3.3
 * min-Σα² QP (Hildreth's dual coordinate ascent, then an exact active-set step), the max-min LP
 * phase 1 through strux/lp.h, the program dispatcher, and the corrected Algorithm 5 (A1). Runs on
 * one rank; broadcasting α is the caller's. Does not do the DAG extension of Algorithm 5 (§4.3). */
#include "strux/hierarchy.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "strux/lp.h"

/* Hildreth stops when no multiplier moved more than this in a sweep (spec §3.3: 1e-12) ... */
#define QP_DMU_TOL 1e-13
/* ... or when no α_n moved more than this in a sweep and no row is violated by more ... */
#define QP_DALPHA_TOL 1e-14
/* ... or after this many sweeps, accepted only with violation ≤ QP_VIOL_OK. */
#define QP_MAX_SWEEPS 200000
/* ... or when the sweeps have touched this many row entries (bounds the time on large M). */
#define QP_MAX_WORK 4e9
#define QP_VIOL_OK 1e-8
/* The active-set method stops when no row is violated by more than this (absolute: α ≤ T). */
#define QP_FEAS_TOL 1e-11
/* The active-set method treats an entering row as dependent on the active ones (dual step only)
 * when its residual is below this fraction of its norm. */
#define QP_DEP_TOL 1e-10

strux_alpha_root strux_alpha_root_resolve(const strux_hierarchy *h, strux_alpha_root root)
{
    if (root != STRUX_ALPHA_ROOT_AUTO) return root;
    return h->is_tree && !h->virtual_root ? STRUX_ALPHA_ROOT_FREE : STRUX_ALPHA_ROOT_ZERO;
}

static strux_status need_tree(const strux_hierarchy *h, const char *what)
{
    STRUX_CHECK(h->is_tree, STRUX_ERR_CONFIG,
                "%s needs a tree, but node %" PRId64 " of %s has %" PRId64 " parents", what,
                strux_hierarchy_print_id(h, h->multi_parent), h->path,
                h->parent_ptr[h->multi_parent + 1] - h->parent_ptr[h->multi_parent]);
    return STRUX_OK;
}

strux_status strux_alpha_rho_tree(const strux_hierarchy *h, double rho, strux_alpha_root root,
                                  double *alpha)
{
    STRUX_TRY(need_tree(h, "the ρ closed form of the α program"));
    STRUX_CHECK(rho > 1 && isfinite(rho), STRUX_ERR_CONFIG, "task.rho = %g: ρ must be > 1", rho);
    root = strux_alpha_root_resolve(h, root);
    int32_t M = h->n_nodes;
    double *q = NULL;
    STRUX_TRY(strux_alloc_array(&q, (size_t)M, sizeof *q));
    /* bottom-up: q_n with f(n, b) = q_n b^ρ, split fraction k_n (kept in alpha) */
    for (int32_t n = M - 1; n >= 0; n--) {
        if (h->child_ptr[n + 1] == h->child_ptr[n]) {
            q[n] = 1;
            alpha[n] = 1;
            continue;
        }
        double Q = 0;
        for (int64_t c = h->child_ptr[n]; c < h->child_ptr[n + 1]; c++)
            Q += q[h->child_idx[c]];
        double k = 1 / (1 + exp(-log(Q) / (rho - 1))); /* t/(1+t), t = Q^{1/(ρ−1)} */
        if (n == 0 && root == STRUX_ALPHA_ROOT_ZERO) k = 0;
        alpha[n] = k;
        q[n] = pow(k, rho) + Q * pow(1 - k, rho);
    }
    /* top-down: budgets b (reusing q), α_n = k_n b_n, b_child = (1 − k_n) b_n */
    q[0] = 1;
    for (int32_t n = 0; n < M; n++) {
        double k = alpha[n];
        alpha[n] = k * q[n];
        for (int64_t c = h->child_ptr[n]; c < h->child_ptr[n + 1]; c++)
            q[h->child_idx[c]] = (1 - k) * q[n];
    }
    strux_free(&q);
    return STRUX_OK;
}

strux_status strux_alpha_height_tree(const strux_hierarchy *h, strux_alpha_root root, double *alpha)
{
    STRUX_TRY(need_tree(h, "the height rule of the max-min α program"));
    root = strux_alpha_root_resolve(h, root);
    /* top-down with budget b_n = α_n·h(n); a child gets b_p − α_p = α_p (h(p) − 1) */
    int zero = root == STRUX_ALPHA_ROOT_ZERO;
    for (int32_t n = 0; n < h->n_nodes; n++) {
        double b = 1;
        if (n > 0) {
            int32_t p = h->parent_idx[h->parent_ptr[n]];
            b = p == 0 && zero ? 1 : alpha[p] * (h->height[p] - 1);
        }
        alpha[n] = n == 0 && zero ? 0 : b / h->height[n];
    }
    return STRUX_OK;
}

/* Constraint rows g_j·α ≥ b_j (eq: = b_j) of the QP, sparse. */
struct qp {
    int32_t M;
    int64_t n_rows, nnz;
    int64_t *ptr; /* [n_rows+1] */
    int32_t *idx;
    double *val;
    double *b;     /* right-hand sides */
    double *norm2; /* ‖g_j‖² */
    unsigned char *eq;
};

static void qp_free(struct qp *P)
{
    strux_free(&P->ptr);
    strux_free(&P->idx);
    strux_free(&P->val);
    strux_free(&P->b);
    strux_free(&P->norm2);
    strux_free(&P->eq);
}

/* Row builder: with the arrays still NULL it only counts rows and entries. */
static void put_entry(struct qp *P, int32_t k, double v)
{
    if (P->idx) {
        P->idx[P->nnz] = k;
        P->val[P->nnz] = v;
    }
    P->nnz++;
}

static void end_row(struct qp *P, double rhs, int eq)
{
    if (P->b) {
        P->b[P->n_rows] = rhs;
        P->eq[P->n_rows] = (unsigned char)eq;
        P->ptr[P->n_rows + 1] = P->nnz;
    }
    P->n_rows++;
}

/* The rows of the QP (see strux_alpha_qp), counted or written. */
static void qp_rows(const strux_hierarchy *h, double t, double floor, int directional,
                    int zero_root, struct qp *P)
{
    P->n_rows = P->nnz = 0;
    for (int32_t i = 0; i < h->n_leaves; i++)
        for (int sign = 1; sign >= (t > 1 ? -1 : 1); sign -= 2) {
            for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
                if (!(zero_root && h->anc_idx[q] == 0)) put_entry(P, h->anc_idx[q], sign);
            end_row(P, sign > 0 ? 1.0 : -t, t == 1);
        }
    for (int32_t n = zero_root; n < h->n_nodes; n++) {
        put_entry(P, n, 1.0);
        end_row(P, floor, 0);
    }
    if (directional)
        for (int32_t n = 1; n < h->n_nodes; n++)
            for (int64_t q = h->parent_ptr[n]; q < h->parent_ptr[n + 1]; q++) {
                if (zero_root && h->parent_idx[q] == 0) continue;
                put_entry(P, h->parent_idx[q], -1.0);
                put_entry(P, n, 1.0);
                end_row(P, 0.0, 0);
            }
}

static double row_dot(const struct qp *P, int64_t j, const double *x)
{
    double s = 0;
    for (int64_t z = P->ptr[j]; z < P->ptr[j + 1]; z++)
        s += P->val[z] * x[P->idx[z]];
    return s;
}

/* Largest violation of any row at x. */
static double qp_violation(const struct qp *P, const double *x)
{
    double worst = 0;
    for (int64_t j = 0; j < P->n_rows; j++) {
        double v = P->b[j] - row_dot(P, j, x);
        if (P->eq[j]) v = fabs(v);
        if (v > worst) worst = v;
    }
    return worst;
}

/* Scratch of the dual active-set method, sized M (at most M independent active rows). */
struct gi_work {
    double *Q;    /* M × M, column-major: orthonormal basis of the active normals, N_A = Q R */
    double *R;    /* M × M, column-major, upper triangular */
    double *n;    /* the entering row, dense */
    double *z;    /* primal step direction */
    double *v;    /* Qᵀ n */
    double *r;    /* R⁻¹ Qᵀ n: dual step direction */
    double *u;    /* multipliers of the active rows */
    int64_t *act; /* active row numbers */
    double *sgn;  /* +1, or −1 for an equality row entered from above */
};

static void gi_dense_row(const struct qp *P, int64_t j, double sign, double *n)
{
    memset(n, 0, (size_t)P->M * sizeof *n);
    for (int64_t z = P->ptr[j]; z < P->ptr[j + 1]; z++)
        n[P->idx[z]] = sign * P->val[z];
}

/* Append the entering row to N_A = Q R, given v = Qᵀ n and z = n − Q v: one more Gram-Schmidt
 * pass on z keeps Q orthonormal to rounding ("twice is enough"). O(M q). */
static void gi_append(int32_t M, int32_t q, struct gi_work *w)
{
    double *rc = w->R + (size_t)q * M;
    for (int32_t i = 0; i < q; i++) {
        const double *qi = w->Q + (size_t)i * M;
        double d = 0;
        for (int32_t k = 0; k < M; k++)
            d += qi[k] * w->z[k];
        for (int32_t k = 0; k < M; k++)
            w->z[k] -= d * qi[k];
        rc[i] = w->v[i] + d;
    }
    double nz = 0;
    for (int32_t k = 0; k < M; k++)
        nz += w->z[k] * w->z[k];
    nz = sqrt(nz);
    rc[q] = nz;
    for (int32_t k = 0; k < M; k++)
        w->Q[(size_t)q * M + k] = w->z[k] / nz;
}

/* Remove active row k of q from N_A = Q R: delete column k of R, return the Hessenberg part to
 * triangular form by Givens rotations of rows i, i+1 (and columns i, i+1 of Q), drop the last
 * column of Q. O(q² + M q). */
static void gi_drop(int32_t M, int32_t q, struct gi_work *w, int32_t k)
{
    for (int32_t i = k; i + 1 < q; i++) {
        w->act[i] = w->act[i + 1];
        w->sgn[i] = w->sgn[i + 1];
        w->u[i] = w->u[i + 1];
    }
    memmove(w->R + (size_t)k * M, w->R + (size_t)(k + 1) * M,
            (size_t)(q - 1 - k) * (size_t)M * sizeof *w->R);
    for (int32_t i = k; i + 1 < q; i++) {
        double a = w->R[(size_t)i * M + i], b = w->R[(size_t)i * M + i + 1], r = hypot(a, b);
        double c = a / r, s = b / r;
        for (int32_t j = i; j + 1 < q; j++) {
            double *col = w->R + (size_t)j * M, ri = col[i], ri1 = col[i + 1];
            col[i] = c * ri + s * ri1;
            col[i + 1] = -s * ri + c * ri1;
        }
        double *qi = w->Q + (size_t)i * M, *qi1 = w->Q + (size_t)(i + 1) * M;
        for (int32_t m = 0; m < M; m++) {
            double x = qi[m], y = qi1[m];
            qi[m] = c * x + s * y;
            qi1[m] = -s * x + c * y;
        }
    }
}

/* Goldfarb and Idnani's dual active-set method (Math. Programming 27, 1983) for
 * min ½‖x‖² s.t. g_j·x ≥ b_j (= b_j on equality rows): H = I, so it starts at x = 0 and keeps
 * N_A = Q R explicitly. Each round enters the most violated row and takes dual steps (dropping the
 * active inequality whose multiplier reaches 0) until a full primal step makes the row tight.
 * Finite and exact up to rounding; dense O(M²) memory, hence only for small M. Returns 0 (x
 * optimal), 1 (infeasible) or 2 (iteration limit, rounding loops). */
static int qp_active_set(const struct qp *P, struct gi_work *w, double *x, int64_t *iters)
{
    int32_t M = P->M, q = 0;
    int64_t it = 0, limit = 50 * (P->n_rows + M);
    memset(x, 0, (size_t)M * sizeof *x);
    for (;; it++) {
        if (it >= limit) return 2;
        /* entering row: an equality row not yet active, else the most violated inequality */
        int64_t p = -1;
        double sp = 0, sign = 1;
        for (int64_t j = 0; j < P->n_rows && p < 0; j++) {
            if (!P->eq[j]) continue;
            int in = 0;
            for (int32_t i = 0; i < q && !in; i++)
                in = w->act[i] == j;
            if (in) continue;
            p = j;
            sp = row_dot(P, j, x) - P->b[j];
            if (sp > 0) {
                sign = -1;
                sp = -sp;
            }
        }
        if (p < 0) {
            double worst = -QP_FEAS_TOL;
            for (int64_t j = 0; j < P->n_rows; j++) {
                if (P->eq[j]) continue;
                double s = row_dot(P, j, x) - P->b[j];
                if (s < worst) {
                    worst = s;
                    p = j;
                }
            }
            if (p < 0) break;
            sp = worst;
        }
        gi_dense_row(P, p, sign, w->n);
        double bp = sign * P->b[p], up = 0;
        double nn = sqrt(P->norm2[p]);
        for (;; it++) {
            if (it >= limit) return 2;
            /* z = (I − Q Qᵀ) n, r = R⁻¹ Qᵀ n */
            for (int32_t i = 0; i < q; i++) { /* n has the few entries of row p */
                const double *qi = w->Q + (size_t)i * M;
                double d = 0;
                for (int64_t e = P->ptr[p]; e < P->ptr[p + 1]; e++)
                    d += qi[P->idx[e]] * w->n[P->idx[e]];
                w->v[i] = d;
            }
            memcpy(w->z, w->n, (size_t)M * sizeof *w->z);
            for (int32_t i = 0; i < q; i++) {
                const double *qi = w->Q + (size_t)i * M;
                for (int32_t k = 0; k < M; k++)
                    w->z[k] -= w->v[i] * qi[k];
            }
            for (int32_t i = q - 1; i >= 0; i--) {
                double s = w->v[i];
                for (int32_t l = i + 1; l < q; l++)
                    s -= w->R[(size_t)l * M + i] * w->r[l];
                w->r[i] = s / w->R[(size_t)i * M + i];
            }
            /* partial (dual) step: the active inequality whose multiplier hits 0 first */
            double t1 = INFINITY;
            int32_t k_drop = -1;
            for (int32_t i = 0; i < q; i++)
                if (!P->eq[w->act[i]] && w->r[i] > 0 && w->u[i] / w->r[i] < t1) {
                    t1 = w->u[i] / w->r[i];
                    k_drop = i;
                }
            /* full (primal) step: makes row p tight */
            double zz = 0;
            for (int32_t k = 0; k < M; k++)
                zz += w->z[k] * w->z[k];
            double t2 = zz > QP_DEP_TOL * QP_DEP_TOL * nn * nn ? -sp / zz : INFINITY;
            double t = t1 < t2 ? t1 : t2;
            if (!isfinite(t)) return 1;
            if (isfinite(t2))
                for (int32_t k = 0; k < M; k++)
                    x[k] += t * w->z[k];
            for (int32_t i = 0; i < q; i++)
                w->u[i] -= t * w->r[i];
            up += t;
            if (t == t2) {
                gi_append(M, q, w);
                w->act[q] = p;
                w->sgn[q] = sign;
                w->u[q++] = up;
                break;
            }
            gi_drop(M, q--, w, k_drop);
            double s = 0;
            for (int32_t k = 0; k < M; k++)
                s += w->n[k] * x[k];
            sp = s - bp;
        }
    }
    *iters = it;
    return 0;
}

strux_status strux_alpha_qp(const strux_hierarchy *h, double t, double floor, int directional,
                            strux_alpha_root root, double *alpha, int64_t *iters)
{
    STRUX_CHECK(t >= 1 && isfinite(t), STRUX_ERR_CONFIG, "task.dag_t = %g: T must be ≥ 1", t);
    root = strux_alpha_root_resolve(h, root);
    int zero_root = root == STRUX_ALPHA_ROOT_ZERO;
    int32_t M = h->n_nodes;
    strux_status st = STRUX_OK;
    struct qp P = {.M = M};
    double *mu = NULL, *prev = NULL;
    qp_rows(h, t, floor, directional, zero_root, &P);
    STRUX_TRY_GOTO(st, strux_alloc_array(&P.ptr, (size_t)P.n_rows + 1, sizeof *P.ptr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&P.idx, (size_t)P.nnz, sizeof *P.idx), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&P.val, (size_t)P.nnz, sizeof *P.val), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&P.b, (size_t)P.n_rows, sizeof *P.b), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&P.norm2, (size_t)P.n_rows, sizeof *P.norm2), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&P.eq, (size_t)P.n_rows, 1), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&mu, (size_t)P.n_rows, sizeof *mu), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&prev, (size_t)M, sizeof *prev), done);
    qp_rows(h, t, floor, directional, zero_root, &P);
    for (int64_t j = 0; j < P.n_rows; j++)
        for (int64_t z = P.ptr[j]; z < P.ptr[j + 1]; z++)
            P.norm2[j] += P.val[z] * P.val[z];

    if (M <= STRUX_ALPHA_QP_DENSE_MAX) {
        struct gi_work w = {0};
        int64_t it = 0;
        int res = 2;
        double **arr[6] = {&w.n, &w.z, &w.v, &w.r, &w.u, &w.sgn};
        STRUX_TRY_GOTO(st, strux_alloc_array(&w.Q, (size_t)M * (size_t)M, sizeof(double)), gi_done);
        STRUX_TRY_GOTO(st, strux_alloc_array(&w.R, (size_t)M * (size_t)M, sizeof(double)), gi_done);
        STRUX_TRY_GOTO(st, strux_alloc_array(&w.act, (size_t)M + 1, sizeof(int64_t)), gi_done);
        for (int i = 0; i < 6; i++)
            STRUX_TRY_GOTO(st, strux_alloc_array(arr[i], (size_t)M + 1, sizeof(double)), gi_done);
        res = qp_active_set(&P, &w, alpha, &it);
        if (iters) *iters = it;
    gi_done:
        strux_free(&w.Q);
        strux_free(&w.R);
        strux_free(&w.act);
        for (int i = 0; i < 6; i++)
            strux_free(arr[i]);
        if (st != STRUX_OK) goto done;
        if (res == 0) goto solved;
        /* infeasible or cycling through rounding: Hildreth decides (and names an infeasibility) */
    }
    /* Hildreth (spec §3.3): α = Σ μ_j g_j; per row δ = (b_j − g_j·α)/‖g_j‖², μ_j ← max(0, μ_j + δ)
     * (no clamp on equality rows), α += Δμ_j g_j */
    memset(alpha, 0, (size_t)M * sizeof *alpha);
    int64_t s = 0;
    double dmu = INFINITY, dalpha = INFINITY;
    int64_t max_sweeps = (int64_t)fmin(QP_MAX_SWEEPS, fmax(100, QP_MAX_WORK / (double)P.nnz));
    for (; s < max_sweeps && dmu > QP_DMU_TOL && dalpha > QP_DALPHA_TOL; s++) {
        dmu = 0;
        memcpy(prev, alpha, (size_t)M * sizeof *prev);
        for (int64_t j = 0; j < P.n_rows; j++) {
            double delta = (P.b[j] - row_dot(&P, j, alpha)) / P.norm2[j];
            double m = mu[j] + delta;
            if (!P.eq[j] && m < 0) m = 0;
            double d = m - mu[j];
            if (d == 0) continue;
            mu[j] = m;
            for (int64_t z = P.ptr[j]; z < P.ptr[j + 1]; z++)
                alpha[P.idx[z]] += d * P.val[z];
            if (fabs(d) > dmu) dmu = fabs(d);
        }
        /* the multipliers of a degenerate problem (max-min phase 2) may drift while α has
         * settled: also stop when α stands still and is feasible */
        dalpha = 0;
        for (int32_t k = 0; k < M; k++)
            if (fabs(alpha[k] - prev[k]) > dalpha) dalpha = fabs(alpha[k] - prev[k]);
        if (dalpha <= QP_DALPHA_TOL && qp_violation(&P, alpha) > QP_DALPHA_TOL) dalpha = INFINITY;
    }
    if (iters) *iters = s;
    double viol = qp_violation(&P, alpha);
    STRUX_CHECK_GOTO(st, isfinite(viol) && viol <= QP_VIOL_OK, STRUX_ERR_NUMERIC, done,
                     "α QP on %s: constraints violated by %g after %" PRId64
                     " Hildreth sweeps (infeasible?)",
                     h->path, viol, s);

solved:
    if (zero_root) alpha[0] = 0;
done:
    qp_free(&P);
    strux_free(&mu);
    strux_free(&prev);
    return st;
}

strux_status strux_alpha_maxmin_lp(const strux_hierarchy *h, double t_sum, strux_alpha_root root,
                                   double *alpha, double *t_star)
{
    STRUX_CHECK(t_sum >= 1 && isfinite(t_sum), STRUX_ERR_CONFIG, "task.dag_t = %g: T must be ≥ 1",
                t_sum);
    root = strux_alpha_root_resolve(h, root);
    int zero_root = root == STRUX_ALPHA_ROOT_ZERO;
    int32_t M = h->n_nodes, tcol = M;
    strux_status st = STRUX_OK;
    strux_lp *lp = NULL;
    int32_t *idx = NULL;
    double *val = NULL, *obj = NULL;
    STRUX_TRY_GOTO(st, strux_alloc_array(&idx, (size_t)M + 1, sizeof *idx), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&val, (size_t)M + 1, sizeof *val), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&obj, (size_t)M + 1, sizeof *obj), done);
    STRUX_TRY_GOTO(st, strux_lp_create(M + 1, &lp), done);
    if (zero_root) STRUX_TRY_GOTO(st, strux_lp_set_col_bounds(lp, 0, STRUX_LP_FIXED, 0, 0), done);
    /* α_n − t ≥ 0 */
    for (int32_t n = zero_root; n < M; n++) {
        idx[0] = n;
        val[0] = 1;
        idx[1] = tcol;
        val[1] = -1;
        STRUX_TRY_GOTO(st, strux_lp_add_row(lp, 2, idx, val, STRUX_LP_LOWER, 0, 0, NULL), done);
    }
    /* 1 ≤ Σ_{Ā(l)} α ≤ T */
    for (int32_t i = 0; i < h->n_leaves; i++) {
        int32_t m = 0;
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++) {
            idx[m] = h->anc_idx[q];
            val[m++] = 1;
        }
        STRUX_TRY_GOTO(st,
                       strux_lp_add_row(lp, m, idx, val,
                                        t_sum > 1 ? STRUX_LP_DOUBLE : STRUX_LP_FIXED, 1, t_sum,
                                        NULL),
                       done);
    }
    /* α_n − α_p ≥ 0 */
    for (int32_t n = 1; n < M; n++)
        for (int64_t q = h->parent_ptr[n]; q < h->parent_ptr[n + 1]; q++) {
            if (zero_root && h->parent_idx[q] == 0) continue;
            idx[0] = n;
            val[0] = 1;
            idx[1] = h->parent_idx[q];
            val[1] = -1;
            STRUX_TRY_GOTO(st, strux_lp_add_row(lp, 2, idx, val, STRUX_LP_LOWER, 0, 0, NULL), done);
        }
    obj[tcol] = 1;
    strux_lp_set_objective(lp, obj, 0);
    strux_lp_result res;
    double t = 0;
    STRUX_TRY_GOTO(st, strux_lp_solve(lp, &res, &t), done);
    STRUX_CHECK_GOTO(st, res == STRUX_LP_OPTIMAL, STRUX_ERR_LP, done, "max-min α LP on %s: %s",
                     h->path, res == STRUX_LP_INFEASIBLE ? "infeasible" : "unbounded");
    if (t_star) *t_star = t;
    /* phase 2 [added]: the least-norm α among the maximisers (floor a hair below t* so rounding
     * in the LP cannot make the QP infeasible), solved exactly up to the dense limit. Above it
     * Hildreth does not converge on this thin polytope (a 5000-node DAG: violation 0.5 after 4e9
     * updates), so the phase-1 vertex is kept: a maximiser, deterministic, not the least-norm one.
     */
    if (M > STRUX_ALPHA_QP_DENSE_MAX) {
        strux_lp_primal(lp, obj);
        memcpy(alpha, obj, (size_t)M * sizeof *alpha);
        if (zero_root) alpha[0] = 0;
        strux_log(STRUX_LOG_WARN,
                  "max-min α on %s: %" PRId32 " nodes, more than the %d the least-norm tie-break "
                  "handles: α is the LP's vertex (min α = %g)",
                  h->path, M, STRUX_ALPHA_QP_DENSE_MAX, t);
        goto done;
    }
    STRUX_TRY_GOTO(st, strux_alpha_qp(h, t_sum, t * (1 - 1e-12), 1, root, alpha, NULL), done);
done:
    strux_lp_destroy(&lp);
    strux_free(&idx);
    strux_free(&val);
    strux_free(&obj);
    return st;
}

strux_status strux_alpha_structural(const strux_hierarchy *h, const strux_alpha_options *opt,
                                    double *alpha)
{
    STRUX_CHECK(opt->rho > 1 && isfinite(opt->rho), STRUX_ERR_CONFIG,
                "task.rho = %g: ρ must be > 1", opt->rho);
    if (!h->is_tree) {
        STRUX_CHECK(opt->dag_t >= 1 && isfinite(opt->dag_t), STRUX_ERR_CONFIG,
                    "task.dag_t = %g: T must be ≥ 1", opt->dag_t);
        STRUX_CHECK(opt->program == STRUX_ALPHA_MAXMIN || opt->rho == 2, STRUX_ERR_CONFIG,
                    "task.rho = %g: on a DAG (%s) only ρ = 2 is solved (hierarchical.md §3.3)",
                    opt->rho, h->path);
    }
    STRUX_CHECK(opt->program != STRUX_ALPHA_RHO_DIRECTIONAL || opt->rho == 2, STRUX_ERR_CONFIG,
                "task.rho = %g: task.alpha=rho_directional is the ρ = 2 program", opt->rho);
    double t = h->is_tree ? 1 : opt->dag_t;
    switch (opt->program) {
    case STRUX_ALPHA_RHO:
        if (h->is_tree)
            STRUX_TRY(strux_alpha_rho_tree(h, opt->rho, opt->root, alpha));
        else
            STRUX_TRY(strux_alpha_qp(h, t, 0, 0, opt->root, alpha, NULL));
        return STRUX_OK;
    case STRUX_ALPHA_MAXMIN:
        if (h->is_tree)
            STRUX_TRY(strux_alpha_height_tree(h, opt->root, alpha));
        else
            STRUX_TRY(strux_alpha_maxmin_lp(h, t, opt->root, alpha, NULL));
        return STRUX_OK;
    case STRUX_ALPHA_RHO_DIRECTIONAL:
        STRUX_TRY(strux_alpha_qp(h, t, 0, 1, opt->root, alpha, NULL));
        return STRUX_OK;
    }
    return strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__, "unknown α program %d",
                           (int)opt->program);
}

strux_status strux_alpha_shared_frobenius(const strux_hierarchy *h, const double *N, double eps,
                                          double *work, double *alpha, double *value)
{
    STRUX_TRY(need_tree(h, "the SSVM α update (Algorithm 5)"));
    int32_t M = h->n_nodes;
    for (int32_t n = 0; n < M; n++)
        STRUX_CHECK(isfinite(N[n]) && N[n] >= 0, STRUX_ERR_NUMERIC,
                    "SSVM α update: ‖U_n‖² = %g at node %" PRId64 " is not a finite value ≥ 0",
                    N[n], strux_hierarchy_print_id(h, n));
    /* bottom-up: B (in work) and the kept fraction E (in alpha), E from the old N (A1 item 4) */
    for (int32_t n = M - 1; n >= 0; n--) {
        if (h->child_ptr[n + 1] == h->child_ptr[n]) {
            work[n] = N[n];
            alpha[n] = 1; /* a leaf takes its whole remaining budget (A1 item 2) */
            continue;
        }
        double S = 0;
        for (int64_t c = h->child_ptr[n]; c < h->child_ptr[n + 1]; c++)
            S += work[h->child_idx[c]];
        double den = sqrt(N[n]) + sqrt(S);
        alpha[n] = den > 0 ? sqrt(N[n]) / den : 0;
        work[n] = den * den;
    }
    *value = work[0];
    /* top-down: α_n = L_p E_n (no square root, A1 item 1), the root included (item 3); the budget
     * left below n, L_n = L_p (1 − E_n), replaces B in work */
    work[0] = 1 - alpha[0];
    for (int32_t n = 1; n < M; n++) {
        double Lp = work[h->parent_idx[h->parent_ptr[n]]], E = alpha[n];
        alpha[n] = Lp * E;
        work[n] = Lp * (1 - E);
    }
    /* ε guard (§4.2, A15): no node with U_n ≠ 0 is frozen at α = 0 */
    if (eps > 0)
        for (int32_t n = 0; n < M; n++)
            if (N[n] > 0 && alpha[n] < eps) alpha[n] = eps;
    return STRUX_OK;
}
