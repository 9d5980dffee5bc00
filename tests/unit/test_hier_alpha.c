/* tests/unit/test_hier_alpha.c - structural α and the SSVM α update (tasks/hier_alpha.c): the
 * spec's worked vectors (Algorithm 5 on N = [0, 1, 4, 1, 1], the ρ = 2 tree, the height rule),
 * Algorithm 5 on 300 seeded random trees (value at its α = B[root] to 1e-9, 3,000 random feasible α
 * each, half of them near the optimum, never better) and its ε guard, the ρ closed form against
 * the QP on random trees (1e-8, root free and zero), A10's scaling, the height rule against LP
 * phase 1 + phase 2, and every DAG variant checked by an LP optimality certificate (x·z ≥ ‖x‖² for
 * every feasible z), plus the configuration errors. */
#include "test_common.h"

#include "strux/hierarchy.h"
#include "strux/lp.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { MAXN = 40 };

static strux_hierarchy *make(int64_t n, const int64_t *p, const int64_t *c)
{
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_from_edges("t.hier", n, p, c, NULL, NULL, &h));
    return h;
}

/* Random tree (extra = 0) or DAG on 2..MAXN nodes with ids 0..n-1, node 0 the root. */
static strux_hierarchy *random_hierarchy(strux_rng *r, int extra)
{
    int n = 2 + (int)strux_rng_below(r, MAXN - 1), m = 0;
    int64_t p[3 * MAXN], c[3 * MAXN];
    for (int i = 1; i < n; i++) {
        int a = (int)strux_rng_below(r, (uint64_t)i);
        p[m] = a;
        c[m++] = i;
        for (int j = 0; j < extra && i > 1; j++) {
            int b = (int)strux_rng_below(r, (uint64_t)i);
            if (b == a) continue;
            p[m] = b;
            c[m++] = i;
            break;
        }
    }
    return make(m, p, c);
}

/* The spec's tree r(a(a1, a2), b): ids r = 0, a = 1, b = 2, a1 = 3, a2 = 4 (node order = ids). */
static strux_hierarchy *spec_tree(void)
{
    const int64_t p[4] = {0, 0, 1, 1}, c[4] = {1, 2, 3, 4};
    strux_hierarchy *h = make(4, p, c);
    for (int k = 0; k < 5; k++)
        assert_int_equal(h->node_id[k], k);
    return h;
}

/* Σ_{Ā(l)} α for leaf position i. */
static double path_sum(const strux_hierarchy *h, int32_t i, const double *alpha)
{
    double s = 0;
    for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
        s += alpha[h->anc_idx[q]];
    return s;
}

/* Σ N_n/α_n with 0/0 = 0. */
static double frob_value(int32_t M, const double *N, const double *alpha)
{
    double v = 0;
    for (int32_t k = 0; k < M; k++)
        if (N[k] > 0) v += alpha[k] > 0 ? N[k] / alpha[k] : INFINITY;
    return v;
}

static void test_algorithm5_worked(void **state)
{
    (void)state;
    strux_hierarchy *h = spec_tree();
    const double N[5] = {0, 1, 4, 1, 1};
    double alpha[5], work[5], value;
    assert_strux_ok(strux_alpha_shared_frobenius(h, N, 0, work, alpha, &value));
    const double want[5] = {0, 0.414214, 1, 0.585786, 0.585786};
    for (int k = 0; k < 5; k++)
        assert_true(fabs(alpha[k] - want[k]) < 5e-7);
    assert_close(alpha[1], sqrt(2) - 1, 1e-15);
    assert_close(alpha[3], 2 - sqrt(2), 1e-15);
    assert_true(fabs(value - 9.828427) < 5e-7);
    assert_close(value, (1 + sqrt(2)) * (1 + sqrt(2)) + 4, 1e-15);
    assert_close(frob_value(5, N, alpha), value, 1e-14);
    for (int32_t i = 0; i < h->n_leaves; i++)
        assert_close(path_sum(h, i, alpha), 1, 1e-15);

    /* ε guard: a node with tiny ‖U‖² would get α ≈ 7e-16; the guard lifts it to ε, a node with
     * U = 0 (the root) stays at 0 */
    const double Ntiny[5] = {0, 1e-30, 1, 1, 1};
    assert_strux_ok(strux_alpha_shared_frobenius(h, Ntiny, 0, work, alpha, &value));
    assert_true(alpha[1] > 0 && alpha[1] < 1e-15);
    assert_strux_ok(strux_alpha_shared_frobenius(h, Ntiny, 1e-8, work, alpha, &value));
    assert_true(alpha[1] == 1e-8);
    assert_true(alpha[0] == 0);

    /* all-zero norms: every subtree is empty, leaves still take the whole budget */
    const double Nzero[5] = {0};
    assert_strux_ok(strux_alpha_shared_frobenius(h, Nzero, 1e-8, work, alpha, &value));
    assert_true(value == 0);
    const double wz[5] = {0, 0, 1, 1, 1};
    assert_memory_equal(alpha, wz, sizeof wz);

    const double Nbad[5] = {0, -1, 0, 0, 0};
    assert_strux_fails(strux_alpha_shared_frobenius(h, Nbad, 0, work, alpha, &value),
                       STRUX_ERR_NUMERIC, "= -1 at node 1 is not a finite value");
    strux_hierarchy_destroy(&h);

    const int64_t dp[4] = {0, 0, 1, 2}, dc[4] = {1, 2, 3, 3};
    h = make(4, dp, dc);
    assert_strux_fails(strux_alpha_shared_frobenius(h, N, 0, work, alpha, &value), STRUX_ERR_CONFIG,
                       "the SSVM α update (Algorithm 5) needs a tree, but node 3 of t.hier has 2 "
                       "parents");
    strux_hierarchy_destroy(&h);
}

/* A random α feasible for Σ_{Ā(l)} α ≤ 1 on a tree, by split fractions: around those of alpha0
 * (near = 1) or uniform. */
static void random_feasible(const strux_hierarchy *h, const double *alpha0, int near, strux_rng *r,
                            double *alpha, double *b)
{
    double b0[MAXN];
    b[0] = 1;
    b0[0] = 1;
    for (int32_t n = 0; n < h->n_nodes; n++) {
        double k;
        if (near) {
            double e = b0[n] > 0 ? alpha0[n] / b0[n] : 0.5;
            k = e + 0.02 * (strux_rng_uniform(r) - 0.5);
        } else
            k = strux_rng_uniform(r);
        if (k <= 1e-6) k = 1e-6;
        if (k > 1) k = 1;
        if (h->leaf_pos[n] >= 0 && strux_rng_below(r, 2)) k = 1;
        alpha[n] = k * b[n];
        for (int64_t c = h->child_ptr[n]; c < h->child_ptr[n + 1]; c++) {
            b[h->child_idx[c]] = (1 - k) * b[n];
            b0[h->child_idx[c]] = b0[n] - alpha0[n];
        }
    }
}

static void test_algorithm5_random(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 14, 2, 0);
    int64_t n_trials = 0;
    for (int t = 0; t < 300; t++) {
        strux_hierarchy *h = random_hierarchy(&r, 0);
        int32_t M = h->n_nodes;
        double N[MAXN], alpha[MAXN], work[MAXN], trial[MAXN], b[MAXN], value;
        for (int32_t k = 0; k < M; k++) {
            N[k] = strux_rng_uniform(&r) * strux_rng_uniform(&r) * 10;
            if (strux_rng_below(&r, 6) == 0) N[k] = 0;
        }
        N[0] = t % 2 ? 0 : N[0];
        assert_strux_ok(strux_alpha_shared_frobenius(h, N, 0, work, alpha, &value));
        assert_close(frob_value(M, N, alpha), value, 1e-9);
        for (int32_t i = 0; i < h->n_leaves; i++)
            assert_close(path_sum(h, i, alpha), 1, 1e-12);
        for (int32_t k = 0; k < M; k++)
            assert_true(alpha[k] >= 0);
        for (int s = 0; s < 3000; s++) {
            random_feasible(h, alpha, s % 2, &r, trial, b);
            assert_true(frob_value(M, N, trial) >= value * (1 - 1e-12));
            n_trials++;
        }
        strux_hierarchy_destroy(&h);
    }
    assert_int_equal(n_trials, 900000);
}

static void test_rho_and_height_examples(void **state)
{
    (void)state;
    strux_hierarchy *h = spec_tree();
    double alpha[5];
    assert_strux_ok(strux_alpha_rho_tree(h, 2, STRUX_ALPHA_ROOT_FREE, alpha));
    const double want[5] = {5. / 8, 1. / 4, 3. / 8, 1. / 8, 1. / 8};
    double s2 = 0;
    for (int k = 0; k < 5; k++) {
        assert_close(alpha[k], want[k], 1e-15);
        s2 += alpha[k] * alpha[k];
    }
    assert_close(s2, 0.625, 1e-15);
    /* the same through the dispatcher (AUTO = free on a tree with a file root) and the QP */
    strux_alpha_options opt = {.program = STRUX_ALPHA_RHO, .rho = 2, .dag_t = 1.5};
    assert_strux_ok(strux_alpha_structural(h, &opt, alpha));
    for (int k = 0; k < 5; k++)
        assert_close(alpha[k], want[k], 1e-15);
    int64_t sweeps;
    assert_strux_ok(strux_alpha_qp(h, 1, 0, 0, STRUX_ALPHA_ROOT_FREE, alpha, &sweeps));
    for (int k = 0; k < 5; k++)
        assert_close(alpha[k], want[k], 1e-12);
    assert_true(sweeps > 0);

    assert_strux_ok(strux_alpha_height_tree(h, STRUX_ALPHA_ROOT_FREE, alpha));
    const double hw[5] = {1. / 3, 1. / 3, 2. / 3, 1. / 3, 1. / 3};
    for (int k = 0; k < 5; k++)
        assert_close(alpha[k], hw[k], 1e-15);
    opt.program = STRUX_ALPHA_MAXMIN;
    assert_strux_ok(strux_alpha_structural(h, &opt, alpha));
    for (int k = 0; k < 5; k++)
        assert_close(alpha[k], hw[k], 1e-15);
    double tstar;
    assert_strux_ok(strux_alpha_maxmin_lp(h, 1, STRUX_ALPHA_ROOT_FREE, alpha, &tstar));
    assert_close(tstar, 1. / 3, 1e-12);
    for (int k = 0; k < 5; k++)
        assert_close(alpha[k], hw[k], 1e-9);
    /* root zero: a gets 1/2 and keeps it for a1, a2 (1/2 each), b gets 1 */
    assert_strux_ok(strux_alpha_height_tree(h, STRUX_ALPHA_ROOT_ZERO, alpha));
    const double hz[5] = {0, 0.5, 1, 0.5, 0.5};
    for (int k = 0; k < 5; k++)
        assert_close(alpha[k], hz[k], 1e-15);

    /* a floor no leaf path can meet: infeasible */
    assert_strux_fails(strux_alpha_qp(h, 1, 0.6, 0, STRUX_ALPHA_ROOT_FREE, alpha, NULL),
                       STRUX_ERR_NUMERIC, "α QP on t.hier: constraints violated by");

    /* configuration errors */
    opt = (strux_alpha_options){.program = STRUX_ALPHA_RHO, .rho = 1, .dag_t = 1.5};
    assert_strux_fails(strux_alpha_structural(h, &opt, alpha), STRUX_ERR_CONFIG,
                       "task.rho = 1: ρ must be > 1");
    opt = (strux_alpha_options){.program = STRUX_ALPHA_RHO_DIRECTIONAL, .rho = 3, .dag_t = 1.5};
    assert_strux_fails(strux_alpha_structural(h, &opt, alpha), STRUX_ERR_CONFIG,
                       "task.alpha=rho_directional is the ρ = 2 program");
    strux_hierarchy_destroy(&h);
    const int64_t dp[4] = {0, 0, 1, 2}, dc[4] = {1, 2, 3, 3};
    h = make(4, dp, dc);
    opt = (strux_alpha_options){.program = STRUX_ALPHA_RHO, .rho = 3, .dag_t = 1.5};
    assert_strux_fails(strux_alpha_structural(h, &opt, alpha), STRUX_ERR_CONFIG,
                       "task.rho = 3: on a DAG (t.hier) only ρ = 2 is solved");
    opt.rho = 2;
    opt.dag_t = 0.5;
    assert_strux_fails(strux_alpha_structural(h, &opt, alpha), STRUX_ERR_CONFIG,
                       "task.dag_t = 0.5: T must be ≥ 1");
    assert_strux_fails(strux_alpha_rho_tree(h, 2, STRUX_ALPHA_ROOT_FREE, alpha), STRUX_ERR_CONFIG,
                       "needs a tree, but node 3 of t.hier has 2 parents");
    assert_strux_fails(strux_alpha_height_tree(h, STRUX_ALPHA_ROOT_FREE, alpha), STRUX_ERR_CONFIG,
                       "needs a tree");
    assert_int_equal(strux_alpha_root_resolve(h, STRUX_ALPHA_ROOT_AUTO), STRUX_ALPHA_ROOT_ZERO);
    assert_int_equal(strux_alpha_root_resolve(h, STRUX_ALPHA_ROOT_FREE), STRUX_ALPHA_ROOT_FREE);
    strux_hierarchy_destroy(&h);
    const int64_t fp[2] = {0, 2}, fc[2] = {1, 3};
    h = make(2, fp, fc);
    assert_int_equal(strux_alpha_root_resolve(h, STRUX_ALPHA_ROOT_AUTO), STRUX_ALPHA_ROOT_ZERO);
    strux_hierarchy_destroy(&h);
}

/* Optimality certificate of min Σα² over the polytope {1 ≤ a_l·α ≤ t, α ≥ floor (α_0 = 0 under
 * zero_root), directional}: x is feasible and min_z x·z ≥ ‖x‖² over the polytope (one LP). */
static void check_qp_optimal(const strux_hierarchy *h, double t, double floor, int directional,
                             int zero_root, const double *x)
{
    int32_t M = h->n_nodes;
    double xx = 0, tol = 1e-9;
    for (int32_t k = 0; k < M; k++) {
        xx += x[k] * x[k];
        if (zero_root && k == 0)
            assert_true(x[0] == 0);
        else
            assert_true(x[k] >= floor - tol);
    }
    for (int32_t i = 0; i < h->n_leaves; i++) {
        double s = path_sum(h, i, x);
        assert_true(s >= 1 - tol && s <= t + tol);
    }
    strux_lp *lp;
    assert_strux_ok(strux_lp_create(M, &lp));
    int32_t idx[MAXN + 1];
    double val[MAXN + 1], c[MAXN + 1];
    for (int32_t k = 0; k < M; k++) {
        if (zero_root && k == 0)
            assert_strux_ok(strux_lp_set_col_bounds(lp, 0, STRUX_LP_FIXED, 0, 0));
        else
            assert_strux_ok(strux_lp_set_col_bounds(lp, k, STRUX_LP_LOWER, floor, 0));
        c[k] = -x[k];
    }
    for (int32_t i = 0; i < h->n_leaves; i++) {
        int32_t m = 0;
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++) {
            idx[m] = h->anc_idx[q];
            val[m++] = 1;
        }
        assert_strux_ok(strux_lp_add_row(lp, m, idx, val, t > 1 ? STRUX_LP_DOUBLE : STRUX_LP_FIXED,
                                         1, t, NULL));
    }
    if (directional)
        for (int32_t k = 1; k < M; k++)
            for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++) {
                idx[0] = k;
                val[0] = 1;
                idx[1] = h->parent_idx[q];
                val[1] = -1;
                assert_strux_ok(strux_lp_add_row(lp, 2, idx, val, STRUX_LP_LOWER, 0, 0, NULL));
            }
    strux_lp_set_objective(lp, c, 0);
    strux_lp_result res;
    double v;
    assert_strux_ok(strux_lp_solve(lp, &res, &v));
    assert_int_equal(res, STRUX_LP_OPTIMAL);
    assert_true(-v >= xx - 1e-9);
    strux_lp_destroy(&lp);
}

static void test_trees_random(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 14, 3, 0);
    for (int t = 0; t < 200; t++) {
        strux_hierarchy *h = random_hierarchy(&r, 0);
        int32_t M = h->n_nodes;
        double a[MAXN], q[MAXN], z[MAXN];
        for (int zr = 0; zr < 2; zr++) {
            strux_alpha_root root = zr ? STRUX_ALPHA_ROOT_ZERO : STRUX_ALPHA_ROOT_FREE;
            /* ρ = 2 closed form = QP (to 1e-8), and the QP is certified optimal */
            assert_strux_ok(strux_alpha_rho_tree(h, 2, root, a));
            assert_strux_ok(strux_alpha_qp(h, 1, 0, 0, root, q, NULL));
            for (int32_t k = 0; k < M; k++)
                assert_close(a[k], q[k], 1e-8);
            check_qp_optimal(h, 1, 0, 0, zr, q);
            /* the directional QP is certified optimal too */
            assert_strux_ok(strux_alpha_qp(h, 1, 0, 1, root, q, NULL));
            check_qp_optimal(h, 1, 0, 1, zr, q);
            /* height rule: feasible, directional, min = 1/D, and = LP phase 1 + 2 */
            assert_strux_ok(strux_alpha_height_tree(h, root, a));
            double amin = INFINITY;
            for (int32_t k = zr; k < M; k++) {
                if (a[k] < amin) amin = a[k];
                if (k > 0) assert_true(a[k] >= a[h->parent_idx[h->parent_ptr[k]]] - 1e-15);
            }
            for (int32_t i = 0; i < h->n_leaves; i++)
                assert_close(path_sum(h, i, a), 1, 1e-12);
            double tstar;
            assert_strux_ok(strux_alpha_maxmin_lp(h, 1, root, q, &tstar));
            if (!zr) assert_close(amin, 1.0 / h->max_depth, 1e-12);
            assert_close(tstar, amin, 1e-9);
            for (int32_t k = 0; k < M; k++)
                assert_close(a[k], q[k], 1e-8);
        }
        /* A10: with the root zeroed, the rest is the free α scaled by 1/(1 − α_root) (ρ = 2 and
         * ρ = 3 closed forms) */
        for (double rho = 2; rho <= 3; rho += 1) {
            assert_strux_ok(strux_alpha_rho_tree(h, rho, STRUX_ALPHA_ROOT_FREE, a));
            assert_strux_ok(strux_alpha_rho_tree(h, rho, STRUX_ALPHA_ROOT_ZERO, z));
            for (int32_t k = 1; k < M; k++)
                assert_close(z[k], a[k] / (1 - a[0]), 1e-12);
            for (int32_t i = 0; i < h->n_leaves; i++)
                assert_close(path_sum(h, i, a), 1, 1e-12);
        }
        /* ρ = 3: no random feasible α has a smaller Σ α³ */
        double s3 = 0, b[MAXN], trial[MAXN];
        for (int32_t k = 0; k < M; k++)
            s3 += a[k] * a[k] * a[k];
        for (int s = 0; s < 200; s++) {
            random_feasible(h, a, 1, &r, trial, b);
            /* make the trial an equality point: leaves take the rest */
            for (int32_t k = 0; k < M; k++)
                if (h->leaf_pos[k] >= 0) trial[k] = b[k];
            double v = 0;
            for (int32_t k = 0; k < M; k++)
                v += trial[k] * trial[k] * trial[k];
            assert_true(v >= s3 * (1 - 1e-12));
        }
        strux_hierarchy_destroy(&h);
    }
}

static void test_dags_random(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 14, 4, 0);
    int n_dag = 0;
    for (int t = 0; t < 150; t++) {
        strux_hierarchy *h = random_hierarchy(&r, 1);
        n_dag += !h->is_tree;
        double a[MAXN], tstar;
        double T = t % 3 == 0 ? 1 : 1.5;
        for (int zr = 0; zr < 2; zr++) {
            strux_alpha_root root = zr ? STRUX_ALPHA_ROOT_ZERO : STRUX_ALPHA_ROOT_FREE;
            for (int dir = 0; dir < 2; dir++) {
                assert_strux_ok(strux_alpha_qp(h, T, 0, dir, root, a, NULL));
                check_qp_optimal(h, T, 0, dir, zr, a);
            }
            assert_strux_ok(strux_alpha_maxmin_lp(h, T, root, a, &tstar));
            assert_true(tstar > 0);
            check_qp_optimal(h, T, tstar * (1 - 1e-12), 1, zr, a);
        }
        /* the dispatcher on a DAG: AUTO zeroes the root */
        strux_alpha_options opt = {.program = STRUX_ALPHA_MAXMIN, .rho = 2, .dag_t = T};
        assert_strux_ok(strux_alpha_structural(h, &opt, a));
        assert_true(a[0] == 0 || h->is_tree);
        strux_hierarchy_destroy(&h);
    }
    assert_true(n_dag > 100);
}

/* A shared `.hier` file through the file reader (data/hierarchy.c). */
static strux_hierarchy *read_shared_hier(const char *rel)
{
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_read(shared_data(rel), NULL, &h));
    return h;
}

/* The largest shared tree, funcat_cellcycle (500 nodes): the active-set QP reproduces the ρ = 2
 * closed form and LP phase 1 + 2 the height rule (t* = 1/7), both to 1e-10; Algorithm 5 on random
 * norms reaches B[root]. */
static void test_funcat(void **state)
{
    (void)state;
    strux_hierarchy *h = read_shared_hier("funcat_cellcycle/cellcycle_FUN.hier");
    int32_t M = h->n_nodes;
    assert_int_equal(M, 500);
    static double a[500], q[500], N[500], work[500];
    double tstar, value;
    assert_strux_ok(strux_alpha_rho_tree(h, 2, STRUX_ALPHA_ROOT_FREE, a));
    assert_strux_ok(strux_alpha_qp(h, 1, 0, 0, STRUX_ALPHA_ROOT_FREE, q, NULL));
    for (int32_t k = 0; k < M; k++)
        assert_true(fabs(a[k] - q[k]) <= 1e-10);
    assert_strux_ok(strux_alpha_height_tree(h, STRUX_ALPHA_ROOT_FREE, a));
    assert_strux_ok(strux_alpha_maxmin_lp(h, 1, STRUX_ALPHA_ROOT_FREE, q, &tstar));
    assert_close(tstar, 1.0 / 7, 1e-12);
    for (int32_t k = 0; k < M; k++)
        assert_true(fabs(a[k] - q[k]) <= 1e-10);
    strux_rng r;
    strux_rng_init(&r, 14, 6, 0);
    for (int32_t k = 0; k < M; k++)
        N[k] = k == 0 ? 0 : strux_rng_uniform(&r);
    assert_strux_ok(strux_alpha_shared_frobenius(h, N, 0, work, a, &value));
    assert_close(frob_value(M, N, a), value, 1e-12);
    strux_hierarchy_destroy(&h);
}

/* Above STRUX_ALPHA_QP_DENSE_MAX nodes the QP is Hildreth's: still the closed form to 1e-8 on a
 * random tree of 2,100 nodes (root free and zero); max-min is the LP's vertex. */
static void test_hildreth_large(void **state)
{
    (void)state;
    enum { BIG = 2100 };
    assert_true(BIG > STRUX_ALPHA_QP_DENSE_MAX);
    strux_rng r;
    strux_rng_init(&r, 14, 5, 0);
    static int64_t p[BIG], c[BIG];
    for (int i = 1; i < BIG; i++)
        c[i - 1] = i;
    static double a[BIG], q[BIG];
    /* a star: max-min keeps the LP vertex above the dense limit; here it is unique, all 1/2 */
    for (int i = 1; i < BIG; i++)
        p[i - 1] = 0;
    strux_hierarchy *h = make(BIG - 1, p, c);
    double tstar;
    assert_strux_ok(strux_alpha_maxmin_lp(h, 1, STRUX_ALPHA_ROOT_FREE, a, &tstar));
    assert_close(tstar, 0.5, 1e-12);
    for (int32_t k = 0; k < BIG; k++)
        assert_close(a[k], 0.5, 1e-12);
    strux_hierarchy_destroy(&h);
    for (int i = 1; i < BIG; i++)
        p[i - 1] = (int64_t)strux_rng_below(&r, (uint64_t)i);
    h = make(BIG - 1, p, c);
    for (int zr = 0; zr < 2; zr++) {
        strux_alpha_root root = zr ? STRUX_ALPHA_ROOT_ZERO : STRUX_ALPHA_ROOT_FREE;
        int64_t sweeps;
        assert_strux_ok(strux_alpha_rho_tree(h, 2, root, a));
        assert_strux_ok(strux_alpha_qp(h, 1, 0, 0, root, q, &sweeps));
        for (int32_t k = 0; k < BIG; k++)
            assert_true(fabs(a[k] - q[k]) <= 1e-8);
        assert_true(sweeps > 1);
    }
    strux_hierarchy_destroy(&h);
}

/* Algorithm 5 allocates nothing; every allocation of the QP (both methods), the LP program and
 * the ρ closed form fails once in turn: NOMEM and nothing leaks. */
static void test_allocations(void **state)
{
    (void)state;
    strux_hierarchy *h = spec_tree();
    const double N[5] = {0, 1, 4, 1, 1};
    double alpha[5], work[5], value;
    int64_t calls = strux_alloc_calls();
    assert_strux_ok(strux_alpha_shared_frobenius(h, N, 1e-8, work, alpha, &value));
    assert_int_equal(strux_alloc_calls(), calls);
    size_t base = strux_alloc_bytes();
    for (int which = 0; which < 3; which++) {
        int failed = 0;
        for (int64_t n = 0; n < 100; n++) {
            strux_alloc_fail_after(n);
            strux_status st =
                which == 0   ? strux_alpha_qp(h, 1, 0, 1, STRUX_ALPHA_ROOT_FREE, alpha, NULL)
                : which == 1 ? strux_alpha_maxmin_lp(h, 1, STRUX_ALPHA_ROOT_FREE, alpha, NULL)
                             : strux_alpha_rho_tree(h, 2, STRUX_ALPHA_ROOT_FREE, alpha);
            strux_alloc_fail_after(-1);
            assert_int_equal(strux_alloc_bytes(), base);
            if (st == STRUX_OK) break;
            assert_int_equal(st, STRUX_ERR_NOMEM);
            failed++;
        }
        assert_true(failed > 0);
    }
    strux_hierarchy_destroy(&h);
}

/* ---- the SSVM α update on DAGs (hier_alpha_dag.c) ---- */

/* Random norms: a spread of magnitudes, some zero (dead or untouched rows). */
static void random_norms(strux_rng *r, int32_t M, int zero_root, double *N)
{
    for (int32_t k = 0; k < M; k++) {
        N[k] = strux_rng_uniform(r) * pow(10, 3 * strux_rng_uniform(r) - 2);
        if (strux_rng_below(r, 6) == 0) N[k] = 0;
    }
    if (zero_root) N[0] = 0;
}

/* The KKT residual and the Lagrange dual bound of (α, λ) computed from scratch: y_n = Σ λ_l over
 * the leaves below n, f = Σ N/α, g = Σ 2√(N y) − Σ λ; stationarity |N/α − α·y| where N > 0,
 * complementarity λ_l·|1 − a_l·α| and y_n·α_n where N = 0 (the multiplier of α_n ≥ 0), relative
 * to f; checks λ ≥ 0, α ≥ 0 and the paths ≤ 1. */
static double check_certificate(const strux_hierarchy *h, const double *N, const double *alpha,
                                const double *lambda, double *f_out, double *gap_rel)
{
    double y[MAXN] = {0}, f = 0, g = 0, stat = 0, comp = 0;
    for (int32_t i = 0; i < h->n_leaves; i++) {
        assert_true(lambda[i] >= 0);
        double path = path_sum(h, i, alpha);
        assert_true(path <= 1 + 1e-12);
        comp += lambda[i] * fabs(1 - path);
        g -= lambda[i];
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
            y[h->anc_idx[q]] += lambda[i];
    }
    for (int32_t n = 0; n < h->n_nodes; n++) {
        assert_true(alpha[n] >= 0);
        if (!(N[n] > 0)) comp += y[n] * alpha[n]; /* the multiplier of α_n ≥ 0 */
        if (!(N[n] > 0)) continue;
        f += N[n] / alpha[n];
        g += 2 * sqrt(N[n] * y[n]);
        stat += fabs(N[n] / alpha[n] - alpha[n] * y[n]);
    }
    *f_out = f;
    *gap_rel = f > 0 ? (f - g) / f : 0;
    return f > 0 ? (stat + comp) / f : 0;
}

/* An independent optimum of min Σ N_n/α_n s.t. Σ_{Ā(l)} α ≤ 1, α ≥ 0: Kelley's outer
 * approximation, each N_n/α_n by its tangents N(2/a − α/a²) (below the convex function) in an
 * epigraph column t_n, the LP min Σ t_n solved by GLPK; a tangent at each new α_n that the LP
 * underestimates. Returns the best value of a feasible α (an upper bound) once the LP's lower
 * bound is within 1e-10 of it. */
/* The tangent of N/α at a, in the column τ = t/N of the epigraph t ≥ N/α: the row
 * a²·τ + α ≥ 2a (coefficients near 1: GLPK's tolerances are relative to them). */
static void tangent(strux_lp *lp, int32_t alpha_col, int32_t tau_col, double a)
{
    int32_t idx[2] = {tau_col, alpha_col};
    double val[2] = {a * a, 1};
    assert_strux_ok(strux_lp_add_row(lp, 2, idx, val, STRUX_LP_LOWER, 2 * a, 0, NULL));
}

/* An independent optimum of min Σ N_n/α_n s.t. Σ_{Ā(l)} α ≤ 1, α ≥ 0: Kelley's outer
 * approximation, each N_n/α_n = N_n·τ_n with τ_n ≥ 1/α_n replaced by its tangents (below the
 * convex function), the LP min Σ N_n·τ_n solved by GLPK; a tangent at each new α_n the LP
 * underestimates, until no tangent is added or the LP's lower bound is within 1e-10. The value
 * returned is that of the best LP point made feasible (scaled by 1/max path sum): an upper bound
 * on the optimum. GLPK's tolerances are set to 1e-11 (at its default 1e-7 the cuts stop moving
 * the LP 2e-7 short of the optimum). */
static double outer_approximation(const strux_hierarchy *h, const double *N, double *lower_out)
{
    int32_t M = h->n_nodes, col[MAXN], idx[MAXN + 1];
    double val[MAXN + 1], obj[2 * MAXN] = {0}, x[2 * MAXN];
    int32_t nt = 0;
    for (int32_t n = 0; n < M; n++)
        col[n] = N[n] > 0 ? M + nt++ : -1;
    strux_lp *lp = NULL;
    assert_strux_ok(strux_lp_create(M + nt, &lp));
    strux_lp_set_tolerance(lp, 1e-11);
    for (int32_t i = 0; i < h->n_leaves; i++) {
        int32_t m = 0;
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++) {
            idx[m] = h->anc_idx[q];
            val[m++] = 1;
        }
        assert_strux_ok(strux_lp_add_row(lp, m, idx, val, STRUX_LP_UPPER, 0, 1, NULL));
    }
    for (int32_t n = 0; n < M; n++) {
        if (col[n] < 0) continue;
        obj[col[n]] = -N[n]; /* maximise −Σ N τ */
        for (int e = 0; e <= 20; e++)
            tangent(lp, n, col[n], ldexp(1, -e));
    }
    strux_lp_set_objective(lp, obj, 0);
    double best = INFINITY, lower = -INFINITY;
    int added = 1;
    for (int it = 0; it < 5000 && added && !(isfinite(best) && best - lower <= 1e-10 * best); it++) {
        strux_lp_result res;
        double v;
        assert_strux_ok(strux_lp_solve(lp, &res, &v));
        assert_int_equal(res, STRUX_LP_OPTIMAL);
        lower = -v;
        strux_lp_primal(lp, x);
        double f = 0, fullest = 0;
        for (int32_t i = 0; i < h->n_leaves; i++)
            fullest = fmax(fullest, path_sum(h, i, x));
        for (int32_t n = 0; n < M; n++)
            if (col[n] >= 0) f += x[n] > 0 ? N[n] * fmax(fullest, 1) / x[n] : INFINITY;
        if (f < best) best = f;
        added = 0;
        for (int32_t n = 0; n < M; n++) {
            if (col[n] < 0) continue;
            double a = fmax(x[n], 1e-9);
            if (1 / a > x[col[n]] * (1 + 1e-12)) {
                tangent(lp, n, col[n], a);
                added = 1;
            }
        }
    }
    assert_true(isfinite(best) && best - lower <= 1e-7 * best);
    strux_lp_destroy(&lp);
    *lower_out = lower;
    return best;
}

/* On trees the extension is Algorithm 5: the same α to 1e-9 and value to 1e-9 relative, from a
 * cold start and warm from a perturbed α; the spec's worked vector exactly so. */
static void test_dag_update_trees(void **state)
{
    (void)state;
    strux_hierarchy *h = spec_tree();
    const double N5[5] = {0, 1, 4, 1, 1};
    double alpha[MAXN], a5[MAXN], work[MAXN], lambda[MAXN], warm[MAXN], value, f, gap;
    strux_alpha_dag *s = NULL;
    strux_alpha_dag_stats st;
    assert_strux_ok(strux_alpha_dag_create(h, &s));
    assert_strux_ok(strux_alpha_dag_solve(s, N5, NULL, 0, alpha, lambda, &st));
    assert_close(st.value, (1 + sqrt(2)) * (1 + sqrt(2)) + 4, 1e-12);
    const double want[5] = {0, sqrt(2) - 1, 1, 2 - sqrt(2), 2 - sqrt(2)};
    for (int k = 0; k < 5; k++)
        assert_true(fabs(alpha[k] - want[k]) <= 1e-12);
    assert_true(st.stages == 1 && st.kkt <= 1e-12);
    const double Nbad[5] = {0, 1, NAN, 1, 1};
    assert_strux_fails(strux_alpha_dag_solve(s, Nbad, NULL, 0, alpha, lambda, &st),
                       STRUX_ERR_NUMERIC, "= nan at node 2 is not a finite value");
    strux_alpha_dag_destroy(&s);
    strux_hierarchy_destroy(&h);

    strux_rng r;
    strux_rng_init(&r, 19, 1, 0);
    int n_zero_leaf = 0;
    for (int t = 0; t < 300; t++) {
        h = random_hierarchy(&r, 0);
        int32_t M = h->n_nodes;
        double N[MAXN];
        random_norms(&r, M, t % 2, N);
        for (int32_t i = 0; i < h->n_leaves; i++)
            n_zero_leaf += N[h->leaves[i]] == 0;
        assert_strux_ok(strux_alpha_shared_frobenius(h, N, 0, work, a5, &value));
        assert_strux_ok(strux_alpha_dag_create(h, &s));
        for (int w = 0; w < 2; w++) {
            for (int32_t k = 0; k < M; k++)
                warm[k] = a5[k] * (0.5 + 0.5 * strux_rng_uniform(&r));
            assert_strux_ok(strux_alpha_dag_solve(s, N, w ? warm : NULL, 0, alpha, lambda, &st));
            for (int32_t k = 0; k < M; k++)
                assert_true(fabs(alpha[k] - a5[k]) <= 1e-9);
            assert_true(fabs(st.value - value) <= 1e-9 * fmax(value, 1e-300));
            assert_true(check_certificate(h, N, alpha, lambda, &f, &gap) <= 1e-8);
            assert_true(gap <= 1e-9 && st.kkt <= 1e-8);
        }
        strux_alpha_dag_destroy(&s);
        strux_hierarchy_destroy(&h);
    }
    assert_true(n_zero_leaf > 100); /* the barrier stages ran */
}

/* ≥ 200 random DAGs: the value of the outer approximation to 1e-7, KKT ≤ 1e-8, the dual bound
 * within 1e-9; the same answer warm-started from another norm vector's α; the ε guard; no
 * allocation in a solve. */
static void test_dag_update_random(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 19, 2, 0);
    int n_dag = 0;
    double worst_value = 0, worst_kkt = 0;
    for (int t = 0; t < 300; t++) {
        strux_hierarchy *h = random_hierarchy(&r, 1);
        n_dag += !h->is_tree;
        int32_t M = h->n_nodes;
        double N[MAXN], N2[MAXN], alpha[MAXN], a2[MAXN], lambda[MAXN], f, gap;
        random_norms(&r, M, 1, N);
        random_norms(&r, M, 1, N2);
        strux_alpha_dag *s = NULL;
        strux_alpha_dag_stats st;
        assert_strux_ok(strux_alpha_dag_create(h, &s));
        assert_strux_ok(strux_alpha_dag_solve(s, N2, NULL, 0, a2, NULL, &st));
        int64_t calls = strux_alloc_calls();
        assert_strux_ok(strux_alpha_dag_solve(s, N, t % 2 ? a2 : NULL, 0, alpha, lambda, &st));
        assert_int_equal(strux_alloc_calls(), calls);
        double kkt = check_certificate(h, N, alpha, lambda, &f, &gap);
        assert_close(f, st.value, 1e-12);
        double lower, ref = outer_approximation(h, N, &lower);
        double dv = fabs(f - ref) / fmax(ref, 1e-300);
        worst_value = fmax(worst_value, dv);
        worst_kkt = fmax(worst_kkt, kkt);
        assert_true(dv <= 1e-7 && f <= ref * (1 + 1e-12) && f >= lower * (1 - 1e-7));
        assert_true(kkt <= 1e-8 && st.kkt <= 1e-8);
        assert_true(gap <= 1e-9 && gap >= -1e-12);
        /* the ε guard lifts only nodes with N > 0 */
        assert_strux_ok(strux_alpha_dag_solve(s, N, alpha, 0.3, a2, NULL, &st));
        for (int32_t k = 0; k < M; k++)
            assert_true(a2[k] == (N[k] > 0 && alpha[k] < 0.3 ? 0.3 : a2[k]) &&
                        (N[k] > 0 || fabs(a2[k] - alpha[k]) <= 1e-9));
        strux_alpha_dag_destroy(&s);
        strux_hierarchy_destroy(&h);
    }
    printf("# DAG alpha update on 300 random DAGs: value within %.2g of the outer approximation, "
           "KKT residual at most %.2g\n",
           worst_value, worst_kkt);
    assert_true(n_dag >= 200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_algorithm5_worked),
        cmocka_unit_test(test_algorithm5_random),
        cmocka_unit_test(test_rho_and_height_examples),
        cmocka_unit_test(test_trees_random),
        cmocka_unit_test(test_dags_random),
        cmocka_unit_test(test_funcat),
        cmocka_unit_test(test_hildreth_large),
        cmocka_unit_test(test_allocations),
        cmocka_unit_test(test_dag_update_trees),
        cmocka_unit_test(test_dag_update_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
