/* tests/unit/test_solver_rta.c - the rta solver (src/solvers/rta.c) in one process on tiny rta
 * problems, against independent references:
 * - the small QP max bᵀλ − ½λᵀQλ over λ ≥ 0, Σλ ≤ 1: solver.qp = exact equals the best KKT point
 *   found by enumerating every support (and whether Σλ = 1) with a dense linear solve (D ≤ 6,
 *   positive definite Q), its KKT residual is ≤ 1e-9 of the scale also for singular Q; projected
 *   never beats exact and never loses to the best single direction;
 * - the Newton model (§3.5, the Gram from the task's factors): the dual's slopes along every
 *   direction equal central finite differences of the exact dual (recomputed from the blocks and
 *   ||w||²), and D(c_i + Σλ_h d_h) − D(c_i) = bᵀλ − ½λᵀQλ for random feasible λ;
 * - from one state, the Newton step (exact and projected QP) gains at least as much dual as the
 *   best-direction step, example by example;
 * - the dual never decreases: after every visit (a round of one example) and from epoch to
 *   epoch, for both updates, with rounds of 3 examples and of the default size;
 * - rounds of the §6.3 variant (every example of a round steps against the same w, then one
 *   line search on the combined step), both the gathered and the summed combination, both
 *   updates: the dual recomputed from the blocks never decreases over a round, γ ∈ [0, 1] with
 *   γ < 1 met, and w equals Σ_i B_i c_i rebuilt from the blocks after every round;
 * - the certificate's gap equals J(w) − D with J enumerated over all 2^L labels whenever the pass
 *   was certified (and is then not flagged a lower bound), and J − D equals the Frank-Wolfe gap
 *   Σ_i max_y [(v/W)(m + ℓ) − G0_i] of §3.6, both by enumeration;
 * - solver.type = rta with a task without candidate lists is refused naming the flag. */
#include "test_common.h"

#include "brute.h"
#include "solvers/rta.h"
#include "strux/solver.h"
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static strux_comm *comm;

/* ---- the QP against enumeration of supports ---- */

/* Solve A x = r (n×n, row-major, overwritten) by Gaussian elimination with partial pivoting;
 * 0 if singular. */
static int dense_solve(int n, double *A, double *r, double *x)
{
    for (int k = 0; k < n; k++) {
        int piv = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[piv * n + k])) piv = i;
        if (fabs(A[piv * n + k]) < 1e-13) return 0;
        for (int j = 0; j < n; j++) {
            double t = A[k * n + j];
            A[k * n + j] = A[piv * n + j];
            A[piv * n + j] = t;
        }
        double t = r[k];
        r[k] = r[piv];
        r[piv] = t;
        for (int i = k + 1; i < n; i++) {
            double f = A[i * n + k] / A[k * n + k];
            for (int j = k; j < n; j++)
                A[i * n + j] -= f * A[k * n + j];
            r[i] -= f * r[k];
        }
    }
    for (int k = n - 1; k >= 0; k--) {
        double s = r[k];
        for (int j = k + 1; j < n; j++)
            s -= A[k * n + j] * x[j];
        x[k] = s / A[k * n + k];
    }
    return 1;
}

/* max over every support S and both faces (Σλ < 1 free, Σλ = 1) of the stationary point there,
 * when feasible: the maximum of a concave QP over the polytope is one of them. */
static double brute_qp(int D, const double *Q, const double *b)
{
    double best = 0; /* λ = 0 */
    double A[64], r[8], x[8], lam[8];
    for (int S = 1; S < (1 << D); S++) {
        int idx[8], k = 0;
        for (int h = 0; h < D; h++)
            if (S >> h & 1) idx[k++] = h;
        for (int face = 0; face < 2; face++) {
            int n = k + face;
            for (int i = 0; i < k; i++) {
                for (int j = 0; j < k; j++)
                    A[i * n + j] = Q[idx[i] * D + idx[j]];
                if (face) A[i * n + k] = 1;
                r[i] = b[idx[i]];
            }
            if (face) {
                for (int j = 0; j < k; j++)
                    A[k * n + j] = 1;
                A[k * n + k] = 0;
                r[k] = 1;
            }
            if (!dense_solve(n, A, r, x)) continue;
            double sum = 0;
            int ok = 1;
            memset(lam, 0, sizeof lam);
            for (int i = 0; i < k; i++) {
                ok &= x[i] >= -1e-12;
                lam[idx[i]] = x[i] > 0 ? x[i] : 0;
                sum += lam[idx[i]];
            }
            if (!ok || sum > 1 + 1e-12) continue;
            double v = strux_rta_qp_value(D, Q, b, lam);
            if (v > best) best = v;
        }
    }
    return best;
}

/* Q = ZᵀZ for a random p×D Z with `rank` independent columns (the others combinations of them),
 * b random with both signs. */
static void random_qp(strux_rng *r, int D, int rank, double *Q, double *b)
{
    enum { P = 12 };
    double Z[P * 8];
    for (int h = 0; h < D; h++)
        for (int k = 0; k < P; k++)
            Z[h * P + k] = h < rank ? strux_rng_normal(r)
                                    : 0.5 * Z[(h % rank) * P + k] - 0.3 * Z[(h / 2 % rank) * P + k];
    strux_gram_cols(P, D, 1.0, Z, Q);
    for (int h = 0; h < D; h++)
        b[h] = strux_rng_normal(r) * (h % 2 ? 2.0 : 0.7);
}

static void test_qp_against_supports(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 17, 0, 0);
    int n_pd = 0, n_sing = 0;
    for (int trial = 0; trial < 400; trial++) {
        int D = 1 + (int)strux_rng_below(&r, 6);
        int singular = trial % 3 == 0 && D > 1;
        int rank = singular ? 1 + (int)strux_rng_below(&r, (uint64_t)D - 1) : D;
        double Q[64], b[8], lam_p[8], lam_e[8], kkt;
        random_qp(&r, D, rank, Q, b);
        assert_strux_ok(strux_rta_qp_projected(D, Q, b, lam_p));
        assert_strux_ok(strux_rta_qp_exact(D, Q, b, lam_e, &kkt));
        double vp = strux_rta_qp_value(D, Q, b, lam_p), ve = strux_rta_qp_value(D, Q, b, lam_e);
        double scale = 0, sum = 0;
        for (int h = 0; h < D; h++) {
            scale = fmax(scale, fmax(fabs(b[h]), Q[h * D + h]));
            assert_true(lam_e[h] >= 0 && lam_p[h] >= 0);
            sum += lam_e[h];
        }
        assert_true(sum <= 1 + 1e-12);
        if (!(strux_rta_qp_kkt(D, Q, b, lam_e) <= 1e-9 * scale))
            print_message("# trial %d D %d rank %d kkt %g smo %g scale %g\n", trial, D, rank,
                          strux_rta_qp_kkt(D, Q, b, lam_e), kkt, scale);
        assert_true(strux_rta_qp_kkt(D, Q, b, lam_e) <= 1e-9 * scale);
        assert_true(vp <= ve + 1e-12 * scale);
        for (int h = 0; h < D; h++) { /* the best single direction's line search */
            double q = Q[h * D + h], g = b[h] <= 0 ? 0 : q > b[h] ? b[h] / q : 1;
            assert_true(vp >= g * b[h] - 0.5 * g * g * q - 1e-12 * scale);
        }
        if (singular) {
            n_sing++;
            continue;
        }
        double want = brute_qp(D, Q, b);
        assert_true(fabs(ve - want) <= 1e-10 * fmax(1, fabs(want)));
        n_pd++;
    }
    print_message("# QP: %d positive definite cases equal the support enumeration, %d singular "
                  "cases meet KKT\n",
                  n_pd, n_sing);
}

/* ---- the solver on tiny rta problems ---- */

typedef struct run {
    strux_dataset *ds;
    strux_task *t;
    strux_model *m;
    strux_search *s;
    strux_solver *sv;
} run;

static void run_open(run *r, strux_dataset *ds, const char *task, int64_t trees, int64_t K,
                     const char *update, const char *qp, int64_t sync_every)
{
    strux_task_options to;
    assert_strux_ok(strux_opt_defaults(strux_task_opt_specs, &to));
    snprintf(to.type, sizeof to.type, "%s", task);
    to.trees = trees;
    to.kbest = K;
    r->ds = ds;
    assert_strux_ok(strux_task_create(&to, &r->t));
    assert_strux_ok(strux_task_check(r->t, ds));
    int32_t rows;
    int64_t extra;
    assert_strux_ok(strux_task_model_shape(r->t, ds, &rows, &extra));
    assert_strux_ok(strux_model_create(rows, ds->dim, extra, STRUX_MODEL_PLAIN, &r->m));
    strux_search_options so;
    assert_strux_ok(strux_search_options_default(&so));
    snprintf(so.type, sizeof so.type, "margin");
    assert_strux_ok(strux_search_create(&so, r->t, ds, &r->s));
    strux_solver_options vo;
    assert_strux_ok(strux_opt_defaults(strux_solver_opt_specs, &vo));
    snprintf(vo.type, sizeof vo.type, "rta");
    snprintf(vo.update, sizeof vo.update, "%s", update);
    snprintf(vo.qp, sizeof vo.qp, "%s", qp);
    vo.lambda = 0.05;
    vo.sync_every = sync_every;
    r->sv = NULL;
    strux_status st = strux_solver_create(&vo, r->t, r->s, ds, r->m, comm, &r->sv);
    if (strcmp(task, "rta") == 0) assert_strux_ok(st);
}

static void run_close(run *r)
{
    strux_solver_destroy(&r->sv);
    strux_search_destroy(&r->s);
    strux_model_destroy(&r->m);
    strux_task_destroy(&r->t);
}

static double local_dual(const strux_solver *sv)
{
    const dual_data *d = (const dual_data *)sv->data;
    double sum_b = 0;
    for (int64_t i = 0; i < sv->ds->n_local; i++)
        sum_b += d->b[i];
    return sum_b - 0.5 * sv->opt.lambda * strux_model_norm2(d->wl);
}

/* The dual state (blocks, loss shares, wl) copied out and back. */
typedef struct snapshot {
    double *c, *b;
    strux_model *w;
} snapshot;

static void snap(const strux_solver *sv, snapshot *s, int save)
{
    const dual_data *d = (const dual_data *)sv->data;
    int64_t n = sv->ds->n_local, nc = d->off[n];
    if (!s->c) {
        assert_strux_ok(strux_alloc_array(&s->c, (size_t)nc, sizeof *s->c));
        assert_strux_ok(strux_alloc_array(&s->b, (size_t)n, sizeof *s->b));
        assert_strux_ok(strux_model_create_like(d->wl, &s->w));
    }
    if (save) {
        memcpy(s->c, d->c, (size_t)nc * sizeof *s->c);
        memcpy(s->b, d->b, (size_t)n * sizeof *s->b);
        assert_strux_ok(strux_model_copy(s->w, d->wl));
    } else {
        memcpy(d->c, s->c, (size_t)nc * sizeof *s->c);
        memcpy(d->b, s->b, (size_t)n * sizeof *s->b);
        assert_strux_ok(strux_model_copy(d->wl, s->w));
    }
}

static void snap_free(snapshot *s)
{
    strux_free(&s->c);
    strux_free(&s->b);
    strux_model_destroy(&s->w);
}

/* The exact dual after example i's block moves by step (its loss share by db), the state kept. */
static double dual_after(const strux_solver *sv, int64_t i, const double *step, double db,
                         strux_model *tmp)
{
    const dual_data *d = (const dual_data *)sv->data;
    assert_strux_ok(strux_model_copy(tmp, d->w));
    strux_task_block_apply(sv->task, sv->ds, i, step, 1.0, tmp);
    double sum_b = db;
    for (int64_t k = 0; k < sv->ds->n_local; k++)
        sum_b += d->b[k];
    return sum_b - 0.5 * sv->opt.lambda * strux_model_norm2(tmp);
}

static void test_newton_model_matches_dual(void **state)
{
    (void)state;
    strux_dataset *ds = synth_rows("rows", 14, 5, 6, 0, 17);
    run r;
    run_open(&r, ds, "rta", 4, 3, "newton", "projected", 1);
    for (int e = 0; e < 2; e++)
        assert_strux_ok(strux_solver_epoch(r.sv));
    const dual_data *d = (const dual_data *)r.sv->data;
    int64_t p = strux_task_block_shape(r.t, ds, 0).p, checked = 0;
    double *dir = NULL, *step = NULL, *db = NULL, worst_fd = 0, worst_model = 0;
    strux_model *tmp;
    assert_strux_ok(strux_model_create_like(d->w, &tmp));
    strux_label truth;
    assert_strux_ok(strux_task_label_alloc(r.t, ds, &truth));
    strux_rng rng;
    strux_rng_init(&rng, 5, 0, 0);
    for (int64_t i = 0; i < ds->n_local; i++) {
        strux_rta_model nm;
        assert_strux_ok(strux_rta_solver_model(r.sv, i, &nm));
        assert_strux_ok(strux_task_truth(r.t, ds, i, &truth));
        const double *ci = d->c + d->off[i];
        assert_strux_ok(strux_realloc_array(&dir, (size_t)(nm.D * p), sizeof *dir));
        assert_strux_ok(strux_realloc_array(&db, (size_t)nm.D, sizeof *db));
        assert_strux_ok(strux_realloc_array(&step, (size_t)p, sizeof *step));
        memset(step, 0, (size_t)p * sizeof *step);
        double kappa = 1 / (r.sv->opt.lambda * d->n), D0 = dual_after(r.sv, i, step, 0, tmp);
        for (int32_t h = 0; h < nm.D; h++) { /* d_h = −κ·coef(φ(y_h) − φ(y_i)) − c_i, densely */
            double *col = dir + h * p;
            memset(col, 0, (size_t)p * sizeof *col);
            const strux_label *y = h == nm.truth ? &truth : &nm.y[h];
            assert_strux_ok(strux_task_block_add_delta(r.t, ds, i, y, &truth, -kappa, col));
            strux_axpy(p, -1.0, ci, col);
            db[h] = strux_task_loss(r.t, y, &truth) / d->n - d->b[i];
        }
        double scale = fmax(1, fabs(D0));
        for (int32_t h = 0; h < nm.D; h++) { /* slopes against central differences */
            double t = 1e-3, Dp, Dm;
            memcpy(step, dir + h * p, (size_t)p * sizeof *step);
            strux_scal(p, t, step);
            Dp = dual_after(r.sv, i, step, t * db[h], tmp);
            strux_scal(p, -1.0, step);
            Dm = dual_after(r.sv, i, step, -t * db[h], tmp);
            worst_fd = fmax(worst_fd, fabs((Dp - Dm) / (2 * t) - nm.b[h]) / scale);
        }
        for (int trial = 0; trial < 4; trial++) { /* the quadratic model at random feasible λ */
            double lam[256], sum = 0, dbl = 0;
            assert_true(nm.D <= 256);
            for (int32_t h = 0; h < nm.D; h++)
                sum += lam[h] = strux_rng_uniform(&rng);
            memset(step, 0, (size_t)p * sizeof *step);
            for (int32_t h = 0; h < nm.D; h++) {
                lam[h] /= sum * (1 + trial);
                strux_axpy(p, lam[h], dir + h * p, step);
                dbl += lam[h] * db[h];
            }
            double model = strux_rta_qp_value(nm.D, nm.Q, nm.b, lam);
            double exact = dual_after(r.sv, i, step, dbl, tmp) - D0;
            worst_model = fmax(worst_model, fabs(exact - model) / scale);
        }
        checked += nm.D;
    }
    print_message("# Newton model: %lld directions, slopes against finite differences within "
                  "%.1e, quadratic model against the exact dual within %.1e\n",
                  (long long)checked, worst_fd, worst_model);
    assert_true(worst_fd <= 1e-8);
    assert_true(worst_model <= 1e-10);
    strux_free(&dir);
    strux_free(&step);
    strux_free(&db);
    strux_label_free(&truth);
    strux_model_destroy(&tmp);
    run_close(&r);
    strux_dataset_destroy(&ds);
}

static void test_newton_gains_at_least_best(void **state)
{
    (void)state;
    int64_t compared = 0, strictly = 0;
    for (int trial = 0; trial < 3; trial++) {
        strux_dataset *ds = synth_rows("rows", 12, 5, 5, 0, 40 + (uint64_t)trial);
        run r;
        run_open(&r, ds, "rta", 3, 1 + trial, "best", "projected", 0);
        assert_strux_ok(strux_solver_epoch(r.sv));
        assert_strux_ok(strux_solver_epoch(r.sv));
        snapshot s = {0};
        for (int64_t i = 0; i < ds->n_local; i++) {
            snap(r.sv, &s, 1);
            double d0 = local_dual(r.sv), gain[3];
            for (int mode = 0; mode < 3; mode++) { /* best, newton exact, newton projected */
                strux_rta_solver_set_update(r.sv, mode > 0, mode == 1);
                assert_strux_ok(strux_rta_solver_visit(r.sv, i));
                gain[mode] = local_dual(r.sv) - d0;
                snap(r.sv, &s, 0);
            }
            double tol = 1e-12 * fmax(1, fabs(d0));
            assert_true(gain[0] >= -tol);
            assert_true(gain[1] >= gain[0] - tol);
            assert_true(gain[2] >= gain[0] - tol);
            assert_true(gain[1] >= gain[2] - tol);
            compared++;
            strictly += gain[1] > gain[0] + tol;
        }
        snap_free(&s);
        run_close(&r);
        strux_dataset_destroy(&ds);
    }
    print_message("# Newton (exact QP) gained at least the best direction's gain in %lld of %lld "
                  "visits, strictly more in %lld\n",
                  (long long)compared, (long long)compared, (long long)strictly);
    assert_true(strictly > 0);
}

static void test_dual_never_decreases(void **state)
{
    (void)state;
    static const char *const updates[][2] = {
        {"best", "projected"}, {"newton", "projected"}, {"newton", "exact"}};
    for (int u = 0; u < 3; u++)
        for (int64_t sync = 0; sync <= 3; sync += 3) { /* 0: the default */
            strux_dataset *ds = synth_rows("rows", 15, 5, 6, 0, 7);
            run r;
            run_open(&r, ds, "rta", 4, 2, updates[u][0], updates[u][1], sync);
            double last = 0; /* the dual at c = 0 */
            for (int e = 0; e < 4; e++) {
                for (int64_t i = 0; i < ds->n_local; i++) { /* one block: a visit is a step */
                    double before = local_dual(r.sv);
                    assert_strux_ok(strux_rta_solver_visit(r.sv, i));
                    assert_true(local_dual(r.sv) >= before - 1e-13 * fmax(1, fabs(before)));
                }
                assert_strux_ok(strux_solver_epoch(r.sv));
                strux_certificate c;
                assert_strux_ok(strux_solver_certificate(r.sv, &c));
                assert_true(c.dual >= last - 1e-13 * fmax(1, fabs(last)));
                assert_true(c.dual <= c.primal + 1e-12 || c.lower_bound);
                last = c.dual;
            }
            print_message("# %s/%s, rounds of %lld: dual %.8g after 4 epochs\n", updates[u][0],
                          updates[u][1], (long long)sync, last);
            run_close(&r);
            strux_dataset_destroy(&ds);
        }
}

/* ||w − Σ_i B_i c_i||² / max(1, ||w||²): the agreed weights against the blocks. */
static double weights_vs_blocks(const strux_solver *sv)
{
    const dual_data *d = (const dual_data *)sv->data;
    strux_model *sum;
    assert_strux_ok(strux_model_create_like(d->w, &sum));
    for (int64_t i = 0; i < sv->ds->n_local; i++)
        strux_task_block_apply(sv->task, sv->ds, i, d->c + d->off[i], 1.0, sum);
    assert_strux_ok(strux_model_axpy(-1.0, d->w, sum));
    double rel = strux_model_norm2(sum) / fmax(1, strux_model_norm2(d->w));
    strux_model_destroy(&sum);
    return rel;
}

static void test_rounds_are_monotone(void **state)
{
    (void)state;
    static const char *const updates[][2] = {{"best", "projected"}, {"newton", "projected"}};
    int paths[2] = {0, 0};
    for (int u = 0; u < 2; u++)
        for (int64_t B = 2; B <= 24; B *= 12) { /* 2: gathered; 24 (the epoch): summed */
            strux_dataset *ds = synth_rows("rows", 24, 6, 6, 0, 11);
            run r;
            run_open(&r, ds, "rta", 4, 3, updates[u][0], updates[u][1], B);
            paths[strux_rta_solver_gathers(r.sv)]++;
            int partial = 0;
            for (int e = 0; e < 5; e++) {
                r.sv->epoch = e;
                strux_rta_solver_order(r.sv);
                for (int64_t j0 = 0; j0 < ds->n_global; j0 += B) {
                    double before = local_dual(r.sv), gamma;
                    int64_t j1 = j0 + B < ds->n_global ? j0 + B : ds->n_global;
                    assert_strux_ok(strux_rta_solver_round(r.sv, j0, j1, &gamma));
                    assert_true(gamma >= 0 && gamma <= 1);
                    partial += gamma < 1;
                    assert_true(local_dual(r.sv) >= before - 1e-13 * fmax(1, fabs(before)));
                    assert_true(weights_vs_blocks(r.sv) <= 1e-24);
                }
            }
            print_message("# %s, rounds of %lld (%s): dual %.8g after 5 epochs, %d rounds with "
                          "gamma < 1\n",
                          updates[u][0], (long long)B,
                          strux_rta_solver_gathers(r.sv) ? "gathered" : "summed", local_dual(r.sv),
                          partial);
            assert_true(partial > 0);
            run_close(&r);
            strux_dataset_destroy(&ds);
        }
    assert_int_equal(paths[0], 2);
    assert_int_equal(paths[1], 2);
}

/* J(w) by enumeration, and the Frank-Wolfe gap Σ_i max_y [(v/W)(m + ℓ) − G0_i]. */
static double psi_margin(double m, double g)
{
    return m + g;
}

static void enumerate_gaps(run *r, double *primal, double *fw_gap)
{
    const dual_data *d = (const dual_data *)r->sv->data;
    const strux_dataset *ds = r->ds;
    strux_pot pot;
    strux_label truth;
    assert_strux_ok(strux_task_pot_alloc(r->t, ds, &pot));
    assert_strux_ok(strux_task_label_alloc(r->t, ds, &truth));
    double loss = 0, gap = 0, lambda = r->sv->opt.lambda;
    for (int64_t i = 0; i < ds->n_local; i++) {
        assert_strux_ok(strux_task_potentials(r->t, r->m, ds, i, &pot));
        assert_strux_ok(strux_task_truth(r->t, ds, i, &truth));
        double h = brute_max_psi(r->t, &pot, &truth, psi_margin, NULL); /* ≥ 0: y_i is a label */
        double v = strux_dataset_weight(ds, i);
        loss += v * h;
        strux_block_shape bs = strux_task_block_shape(r->t, ds, i);
        double G0 = d->b[i] - lambda * strux_dot(bs.p, d->c + d->off[i], pot.s);
        gap += v * h / d->n - G0;
    }
    *primal = 0.5 * lambda * strux_model_norm2(r->m) + loss / d->n;
    *fw_gap = gap;
    strux_pot_free(&pot);
    strux_label_free(&truth);
}

/* The epoch's order (rta_epoch_order): a permutation that changes with the epoch, and within the
 * full cycles every 2^k positions from a multiple of 2^k (k ≤ 6 at 64 slices) hold one example
 * of each of 2^k equal parts of the ids, so any rank range made of such parts gets its exact
 * share of every round; n below 16 keeps one slice (a plain permutation). */
static void test_order_is_stratified(void **state)
{
    (void)state;
    static const int64_t sizes[][2] = {{1000, 64}, {333, 32}, {37, 4}, {12, 1}}; /* n, slices */
    for (int c = 0; c < 4; c++) {
        int64_t n = sizes[c][0], S = sizes[c][1], cycles = n / S;
        strux_dataset *ds = synth_rows("rows", n, 3, 3, 0, 5);
        run r;
        run_open(&r, ds, "rta", 2, 1, "best", "projected", 16);
        int64_t *prev = calloc((size_t)n, sizeof *prev);
        char *seen = calloc((size_t)n, 1);
        for (int e = 0; e < 3; e++) {
            r.sv->epoch = e;
            const int64_t *o = strux_rta_solver_order(r.sv);
            memset(seen, 0, (size_t)n);
            for (int64_t j = 0; j < n; j++) {
                assert_true(o[j] >= 0 && o[j] < n && !seen[o[j]]);
                seen[o[j]] = 1;
            }
            for (int64_t W = 2; W <= S; W *= 2)
                for (int64_t j0 = 0; j0 + W <= cycles * S; j0 += W) {
                    uint64_t parts = 0; /* W ≤ 64 */
                    for (int64_t j = j0; j < j0 + W; j++)
                        parts |= 1ULL << (o[j] * S / n / (S / W));
                    assert_true(parts == (W == 64 ? ~0ULL : (1ULL << W) - 1));
                }
            if (e > 0) assert_true(memcmp(prev, o, (size_t)n * sizeof *o) != 0);
            memcpy(prev, o, (size_t)n * sizeof *o);
        }
        free(prev);
        free(seen);
        run_close(&r);
        strux_dataset_destroy(&ds);
    }
}

static void test_gap_is_primal_minus_dual(void **state)
{
    (void)state;
    int certified = 0, total = 0;
    for (int K = 1; K <= 16; K *= 4) { /* L = 4: K = 16 lists are complete */
        strux_dataset *ds = synth_rows("rows", 10, 4, 4, 0, 3);
        run r;
        run_open(&r, ds, "rta", 2, K, "newton", "exact", 0);
        for (int e = 0; e < 3; e++) {
            assert_strux_ok(strux_solver_epoch(r.sv));
            strux_certificate c;
            assert_strux_ok(strux_solver_certificate(r.sv, &c));
            double J, fw;
            enumerate_gaps(&r, &J, &fw);
            double tol = 1e-10 * fmax(1, fabs(J));
            assert_true(fabs((J - c.dual) - fw) <= tol); /* §3.6: the FW gap is J − D */
            assert_true(c.primal <= J + tol);
            if (!c.lower_bound) {
                assert_true(fabs(c.primal - J) <= tol);
                assert_true(fabs(c.gap - (J - c.dual)) <= tol);
                certified++;
            }
            if (K == 16) assert_false(c.lower_bound);
            total++;
        }
        run_close(&r);
        strux_dataset_destroy(&ds);
    }
    print_message("# gap = J - D (enumerated) in %d of %d certified passes\n", certified, total);
}

static void test_task_without_candidates_is_refused(void **state)
{
    (void)state;
    strux_dataset *ds = synth_rows("rows", 6, 4, 3, 0, 1);
    run r;
    run_open(&r, ds, "multilabel", 1, 1, "newton", "projected", 0);
    assert_null(r.sv);
    assert_non_null(strstr(strux_error_message(), "flag candidates"));
    run_close(&r);
    strux_dataset_destroy(&ds);
}

int main(int argc, char **argv)
{
    if (strux_comm_init(&argc, &argv, &comm) != STRUX_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qp_against_supports),
        cmocka_unit_test(test_newton_model_matches_dual),
        cmocka_unit_test(test_newton_gains_at_least_best),
        cmocka_unit_test(test_dual_never_decreases),
        cmocka_unit_test(test_rounds_are_monotone),
        cmocka_unit_test(test_order_is_stratified),
        cmocka_unit_test(test_gap_is_primal_minus_dual),
        cmocka_unit_test(test_task_without_candidates_is_refused),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    strux_comm_finalize(&comm);
    return rc;
}
