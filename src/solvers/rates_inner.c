/* solvers/rates_inner.c - the weighted SVM of rate-constrained training for a fixed multiplier v
 * and bias b (dataset_constraints.md §3.7, F.1): the project's SDCA on an inner dataset with two
 * rows per example, its merged two-hinge coordinate step, warm starts, the certificate, and the
 * loop of SDCA epochs through the training driver to a Ψ-gap.
 *
 * Inner rows. Example e's merged loss α̌_e max(0, ½ + z) + β̌_e max(0, ½ − z) is row 2e (the hinge
 * max(0, 1 + s) of loss weight α̌_e, label 0) and row 2e+1 (max(0, 1 − s), weight β̌_e, label 1)
 * with W = N: the SDCA objective is 2·(Ψ − constants). Row 2e carries x_e (the bias column left
 * out with a free bias), row 2e+1 no features: both hinges act on x_e through the merged step at
 * row 2e, which moves ξ = ξ+ − ξ− (engine coefficients c_2e = −ξ+/(λ'W), c_2e+1 = ξ−/(λ'W)), so
 * w = Σ (c_2e + c_2e+1) x_e. The certificate is computed here in one pass of the examples (one
 * score each): primal, dual and gap of the inner SVM (the dual's linear term Σ ξ+(1 − b̃) +
 * ξ−(1 + b̃) over W from c and the stored bias b̃: the engine's loss shares b_i are not kept, which
 * saves the visit a cache line), and on the way the cut's constraint sums G_j and Σξ, the slope
 * of Alg. 3's bias cut. Not here: the choice of v and b (rates_mm.c). */
#include "rates_impl.h"

#include <math.h>
#include <string.h>

/* ---- the inner dataset ---- */

strux_status strux_rates_inner_build(strux_rates *r)
{
    const strux_dataset *t = r->train;
    int64_t n = t->n_local, nnz = t->x.ptr[n];
    strux_csr x = {0};
    int64_t *y_ptr = NULL;
    int32_t *y_idx = NULL;
    strux_status st = strux_csr_alloc(&x, 2 * n, t->dim, nnz);
    if (st == STRUX_OK) st = strux_alloc_array(&y_ptr, (size_t)(2 * n + 1), sizeof *y_ptr);
    if (st == STRUX_OK) st = strux_alloc_array(&y_idx, (size_t)(2 * n), sizeof *y_idx);
    if (st == STRUX_OK) st = strux_alloc_array(&r->ex, 4 * (size_t)n + 1, sizeof *r->ex);
    if (st == STRUX_OK) {
        int64_t k = 0;
        for (int64_t e = 0; e < n; e++) {
            double xx = 0;
            for (int64_t p = t->x.ptr[e]; p < t->x.ptr[e + 1]; p++) {
                if (t->x.col[p] == r->bias_col) continue; /* a free bias is b̃, not a weight */
                x.col[k] = t->x.col[p];
                x.val[k] = t->x.val[p];
                xx += (double)x.val[k] * x.val[k];
                k++;
            }
            x.ptr[2 * e + 1] = x.ptr[2 * e + 2] = k;
            y_ptr[2 * e + 1] = 2 * e + 1;
            y_ptr[2 * e + 2] = 2 * e + 2;
            y_idx[2 * e] = 0; /* row 2e: hinge max(0, 1 + s) */
            y_idx[2 * e + 1] = 1;
            r->ex[4 * e + 2] = xx;
            if (sqrt(xx) > r->X) r->X = sqrt(xx);
        }
        st = strux_dataset_from_arrays(t->path, &x, &y_ptr, &y_idx, 2 * t->n_global,
                                       2 * t->first, t->dim, 2, 0, &r->inner);
    }
    strux_csr_free(&x);
    strux_free(&y_ptr);
    strux_free(&y_idx);
    STRUX_TRY(st);
    STRUX_TRY(strux_comm_allreduce_max(r->comm, &r->X, 1));
    strux_dataset *in = r->inner;
    in->bias_col = t->bias_col;
    if (t->block_ptr) {
        strux_shard sh = {.lo = 2 * t->first,
                          .hi = 2 * (t->first + n),
                          .n_blocks = t->n_blocks,
                          .block_lo = t->block_lo,
                          .block_hi = t->block_hi};
        STRUX_TRY(strux_alloc_array(&sh.block_ptr, (size_t)t->n_blocks + 1, sizeof *sh.block_ptr));
        for (int32_t b = 0; b <= t->n_blocks; b++)
            sh.block_ptr[b] = 2 * t->block_ptr[b];
        strux_dataset_set_shard(in, &sh);
        strux_shard_free(&sh);
    }
    STRUX_TRY(strux_alloc_array(&in->weight, (size_t)(2 * n) + 1, sizeof *in->weight));
    in->weight_sum = (double)r->N; /* W = N: the SDCA objective is 2(Ψ − constants) */
    return STRUX_OK;
}

void strux_rates_scores(strux_rates *r, const strux_model *m)
{
    for (int64_t e = 0; e < r->n_local; e++)
        r->z[e] = 0.5 * strux_rates_score(m, r->train, e);
}

/* ---- weights, bias and warm starts ---- */

/* w = Σ_e (c_2e + c_2e+1)·x_e from the duals, each data block's sum added in block order. */
static strux_status rebuild_w(strux_rates *r, dual_data *d)
{
    strux_model *w = d->w;
    const strux_dataset *in = r->inner;
    int32_t n_b = strux_rates_blocks(in);
    strux_model_buffer mb = strux_model_storage(w);
    int64_t len = mb.n_v + mb.n_extra;
    double *part = NULL, *sum = NULL;
    strux_status st = strux_alloc_array(&part, (size_t)n_b * (size_t)len + 1, sizeof *part);
    if (st == STRUX_OK) st = strux_alloc_array(&sum, (size_t)len + 1, sizeof *sum);
    for (int32_t k = 0; st == STRUX_OK && k < n_b; k++) {
        int64_t i0, i1;
        strux_rates_block_range(in, k, &i0, &i1);
        strux_model_zero(w);
        for (int64_t i = i0; i < i1; i += 2)
            strux_model_add_row(w, &in->x, i, 0, d->c[i] + d->c[i + 1]);
        mb = strux_model_storage(w);
        memcpy(part + (size_t)k * (size_t)len, mb.v, (size_t)mb.n_v * sizeof *part);
        if (mb.n_extra)
            memcpy(part + (size_t)k * (size_t)len + mb.n_v, mb.extra,
                   (size_t)mb.n_extra * sizeof *part);
    }
    if (st == STRUX_OK) st = strux_block_sum(r->comm, in, part, len, sum);
    if (st == STRUX_OK) {
        mb = strux_model_storage(w);
        memcpy(mb.v, sum, (size_t)mb.n_v * sizeof *sum);
        if (mb.n_extra) memcpy(mb.extra, sum + mb.n_v, (size_t)mb.n_extra * sizeof *sum);
        strux_model_refresh(w);
    }
    strux_free(&part);
    strux_free(&sum);
    STRUX_TRY(st);
    return strux_model_copy(d->wl, w);
}

strux_status strux_rates_set_multipliers(strux_rates *r, const double *v, int warm)
{
    strux_solver *s = r->solver;
    dual_data *d = s->data;
    strux_dataset *in = r->inner;
    int64_t n = r->n_local;
    int32_t m = r->m;
    double N = (double)r->N, lamW = s->opt.lambda * d->n;
    for (int64_t e = 0; e < n; e++) { /* α̌_e(v) = N(A_e^0 + Σ v_j A_e^j) on a hinge side (§3.7) */
        double a = r->Ab[e], b = r->Bb[e];
        for (int32_t j = 0; j < m; j++) {
            a += v[j] * r->Ab[(size_t)(j + 1) * n + e];
            b += v[j] * r->Bb[(size_t)(j + 1) * n + e];
        }
        double *x = r->ex + 4 * e;
        x[0] = in->weight[2 * e] = (r->pat[e] & 1) ? N * a : 0.0;
        x[1] = in->weight[2 * e + 1] = (r->pat[e] & 2) ? N * b : 0.0;
    }
    r->cert_ok = 0;
    if (!warm) return STRUX_OK;
    /* each hinge's dual clipped into its new box [0, weight] (§3.7 "Warm start") */
    for (int64_t i = 0; i < 2 * n; i++) {
        double sigma = (i & 1) ? -1.0 : 1.0, xi = -sigma * d->c[i] * lamW;
        if (xi > in->weight[i]) d->c[i] = -sigma * in->weight[i] / lamW;
        else if (xi < 0) d->c[i] = 0;
    }
    strux_dual_problem_changed(s); /* new boxes: SDCA's shrunk coordinates no longer hold */
    return rebuild_w(r, d);
}

void strux_rates_set_bias(strux_rates *r, double bt)
{
    r->bt = bt;
    r->cert_ok = 0;
}

strux_status strux_rates_inner_model(strux_rates *r, strux_model *out)
{
    STRUX_TRY(strux_model_copy(out, r->solver->model));
    if (r->bias_col >= 0) strux_model_set(out, 0, r->bias_col, -r->bt / r->bias_val);
    return STRUX_OK;
}

/* ---- the merged two-hinge step ---- */

double strux_rates_two_hinge_step(double xi, double a, double b, double s, double Q)
{
    double k0 = a - b, nu;
    if (Q > 0) {
        double c1 = xi + (s + 1) / Q, c2 = xi + (s - 1) / Q;
        nu = c1 <= k0 ? c1 : c2 >= k0 ? c2 : k0;
    } else {
        nu = s > 1 ? a : s < -1 ? -b : k0;
    }
    return nu < -b ? -b : nu > a ? a : nu;
}

/* The merged two-hinge step (§3.7) on example e = i/2, visited at its row 2e (row 2e+1 is a
 * no-op): both hinges act on the same score, so their duals ξ+ ∈ [0, α̌] and ξ− ∈ [0, β̌] enter w
 * only through ξ = ξ+ − ξ−, and for a given ξ the dual is largest at the split ξ+ = min(α̌, ξ + β̌),
 * ξ− = ξ+ − ξ. Over ξ ∈ [−β̌, α̌] the dual is then a concave quadratic plus a piecewise-linear
 * term with one kink at k0 = α̌ − β̌, maximised in closed form: ν = median(c2, k0, c1) clipped to
 * the box, c1,2 = ξ + (s ± 1)/Q with s = w̃·x − b̃ the stored score and Q = σ′||x||²/(λ'W) the
 * CoCoA+-scaled curvature. Two separate coordinates on the same x would walk the (ξ+, ξ−) valley
 * in steps of 1/Q, which stalls SDCA once multipliers give many examples two active hinges. */
static strux_status merged_visit(void *ctx, strux_solver *s, dual_data *d, int64_t i)
{
    strux_rates *r = ctx;
    if (i & 1) return STRUX_OK;
    const double *x = r->ex + 2 * i; /* α̌, β̌, ||x||² of example i/2 */
    double a = x[0], bw = x[1];
    if (!(a > 0) && !(bw > 0)) return STRUX_OK;
    double lamW = s->opt.lambda * d->n, *c = d->c + i;
    double xp = -c[0] * lamW, xn = c[1] * lamW, xi = xp - xn;
    double sc;
    strux_model_scores(d->wl, &s->ds->x, i, 0, 1, &sc);
    double nu =
        strux_rates_two_hinge_step(xi, a, bw, sc - r->bt, x[2] > 0 ? d->sigma * x[2] / lamW : 0);
    double np = fmin(a, nu + bw), nn = np - nu;
    if (nn < 0) nn = 0;
    c[0] = -np / lamW;
    c[1] = nn / lamW;
    double dc = -(nu - xi) / lamW;
    if (dc != 0) strux_dual_move(s, d, i, &dc);
    return STRUX_OK;
}

/* What the merged step of example i/2 reads beyond its row and coefficients: α̌, β̌, ||x||². */
static void merged_prefetch(void *ctx, int64_t i)
{
    const strux_rates *r = ctx;
    __builtin_prefetch(r->ex + 2 * (i & ~(int64_t)1), 0, 1);
}

/* ---- the certificate ---- */

/* Per data block: [0] the weighted hinge losses, [1] the dual's loss shares, [2] Σξ, [3..] the
 * constraint sums G_0..G_m (Σ A^j h+ + B^j h−, h± = max(0, ½ ± z)). */
enum { CERT_LOSS, CERT_SHARES, CERT_XI, CERT_G };

static strux_status inner_certificate(void *ctx, strux_solver *s, strux_certificate *cert)
{
    strux_rates *r = ctx;
    dual_data *d = s->data;
    const strux_dataset *in = r->inner;
    int32_t m = r->m, n_b = strux_rates_blocks(in), len = CERT_G + m + 1;
    int64_t n = r->n_local;
    double lamW = s->opt.lambda * d->n, *part = NULL, *sum = NULL;
    STRUX_TRY(strux_alloc_array(&part, (size_t)n_b * (size_t)len, sizeof *part));
    strux_status st = strux_alloc_array(&sum, (size_t)len, sizeof *sum);
    for (int32_t k = 0; st == STRUX_OK && k < n_b; k++) {
        int64_t i0, i1;
        strux_rates_block_range(in, k, &i0, &i1);
        double *p = part + (size_t)k * (size_t)len;
        for (int64_t i = i0; i < i1; i += 2) {
            int64_t e = i / 2;
            const double *x = r->ex + 4 * e;
            double sc = strux_rates_score(d->w, in, i) - r->bt, z = 0.5 * sc;
            double hp = (r->pat[e] & 1) ? fmax(0.0, 0.5 + z) : 0.0;
            double hn = (r->pat[e] & 2) ? fmax(0.0, 0.5 - z) : 0.0;
            double xp = -d->c[i] * lamW, xn = d->c[i + 1] * lamW;
            p[CERT_LOSS] += 2 * (x[0] * hp + x[1] * hn);
            p[CERT_SHARES] += xp * (1 - r->bt) + xn * (1 + r->bt);
            p[CERT_XI] += xp - xn;
            for (int32_t j = 0; j <= m; j++)
                p[CERT_G + j] += r->Ab[(size_t)j * n + e] * hp + r->Bb[(size_t)j * n + e] * hn;
        }
    }
    if (st == STRUX_OK) st = strux_block_sum(r->comm, r->train, part, len, sum);
    if (st == STRUX_OK) {
        double reg = 0.5 * s->opt.lambda * strux_model_norm2(d->w);
        cert->loss = sum[CERT_LOSS] / d->n;
        cert->primal = reg + cert->loss;
        cert->dual = sum[CERT_SHARES] / d->n - reg;
        cert->gap = cert->primal - cert->dual;
        cert->lower_bound = 0;
        r->P = cert->primal;
        r->D = cert->dual;
        r->sum_xi = sum[CERT_XI];
        memcpy(r->G, sum + CERT_G, (size_t)(m + 1) * sizeof *r->G);
        r->cert_ok = 1;
        if (!isfinite(cert->primal) || !isfinite(cert->dual))
            st = strux_error_set(STRUX_ERR_NUMERIC, __FILE__, __LINE__, __func__,
                                 "the inner SVM's primal %g or dual %g is not finite",
                                 cert->primal, cert->dual);
    }
    strux_free(&part);
    strux_free(&sum);
    return st;
}

double strux_rates_psi(const strux_rates *r, const double *v)
{
    double u = r->P / 2 + r->C0;
    for (int32_t j = 0; j < r->m; j++)
        u -= v[j] * r->gam[j];
    return u;
}

double strux_rates_psi_dual(const strux_rates *r, const double *v)
{
    double l = r->D / 2 + r->C0;
    for (int32_t j = 0; j < r->m; j++)
        l -= v[j] * r->gam[j];
    return l;
}

strux_status strux_rates_inner_attach(strux_rates *r, strux_solver *s)
{
    const dual_data *d = s->data;
    STRUX_CHECK(s->ops == &strux_dual_ops && d->off[2 * r->n_local] == 2 * r->n_local,
                STRUX_ERR_INTERNAL,
                "rate constraints need the dual engine's one coefficient per inner row");
    r->solver = s;
    strux_dual_set_visit(s, merged_visit, merged_prefetch, r);
    strux_solver_set_certificate(s, inner_certificate, r);
    return STRUX_OK;
}

/* ---- the solve ---- */

strux_status strux_rates_sdca(strux_rates *r, strux_driver *drv, double eps, int *ok)
{
    *ok = 0;
    for (;;) {
        if (!r->cert_ok) {
            strux_certificate c;
            STRUX_TRY(strux_solver_certificate(r->solver, &c));
        }
        if (r->P - r->D <= 2 * eps) { /* the SDCA gap is twice Ψ's */
            *ok = 1;
            return STRUX_OK;
        }
        if (r->st.budget <= 0) return STRUX_OK;
        if (strux_driver_limit_reached(drv)) {
            r->st.limit = 1;
            return STRUX_OK;
        }
        int converged;
        r->st.budget--; /* before the epoch: a checkpoint written after it holds the rest */
        r->inner_epochs++;
        r->cert_ok = 0;
        STRUX_TRY(strux_driver_solve(drv, 0, 1, &converged));
    }
}
