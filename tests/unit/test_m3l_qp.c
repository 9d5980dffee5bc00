/* tests/unit/test_m3l_qp.c - the SMO sub-problem solvers of M3L (specs/m3l.md §2.2, §6 A4):
 * Solve1DQP against the closed form and its KKT conditions; Solve2DQP against enumeration of the
 * nine KKT faces of the box (interior, four edges, four corners) on thousands of random PD
 * instances, each face the optimum of many of them; the degenerate (singular or zero-curvature)
 * fallback; bound snapping. */
#include "test_common.h"

#include <math.h>

#include "solvers/m3l.h"

static double f1(double a, double b, double x)
{
    return -0.5 * a * x * x + b * x;
}

static double f2(const double Q[3], const double g[2], const double x[2])
{
    return -0.5 * (Q[0] * x[0] * x[0] + 2 * Q[1] * x[0] * x[1] + Q[2] * x[1] * x[1]) + g[0] * x[0] +
           g[1] * x[1];
}

/* A box as the solver sees it: m = −α, M = C − α with α in [0, C], at a bound a quarter of the
 * time each (m = 0 or M = 0 exactly). */
static void solver_box(strux_rng *rng, double *m, double *M)
{
    double C = exp(4 * strux_rng_uniform(rng) - 2);
    double u = strux_rng_uniform(rng);
    double alpha = u < 0.25 ? 0.0 : u < 0.5 ? C : C * strux_rng_uniform(rng);
    *m = -alpha;
    *M = C - alpha;
}

static void test_solve1d(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 1, 0, 0);
    int hit[3] = {0}; /* at m, inside, at M */
    for (int t = 0; t < 20000; t++) {
        double a = exp(6 * strux_rng_uniform(&rng) - 3), b = 3 * strux_rng_normal(&rng), m, M;
        if (t % 2) {
            solver_box(&rng, &m, &M);
        } else { /* a general box, 0 not necessarily inside */
            m = 2 * strux_rng_normal(&rng);
            M = m + 3 * strux_rng_uniform(&rng);
        }
        double x = strux_m3l_solve1d(a, b, m, M);
        /* closed form: the stationary point b/a when inside, else the nearer end */
        double xs = b / a, want = xs < m ? m : xs > M ? M : xs;
        assert_true(x == want);
        assert_true(m <= x && x <= M);
        /* KKT of the maximisation: gradient b − a·x is 0 inside, ≤ 0 at m, ≥ 0 at M */
        double grad = b - a * x;
        if (x > m && x < M) {
            assert_true(fabs(grad) <= 1e-12 * fmax(1, fabs(b)));
            hit[1]++;
        } else if (x == m && m < M) {
            assert_true(grad <= 1e-12 * fmax(1, fabs(b)));
            hit[0]++;
        } else if (x == M) {
            assert_true(grad >= -1e-12 * fmax(1, fabs(b)));
            hit[2]++;
        }
        /* no point of a fine grid does better */
        for (int k = 0; k <= 50; k++) {
            double z = m + (M - m) * k / 50.0;
            assert_true(f1(a, b, z) <= f1(a, b, x) + 1e-12 * fmax(1, fabs(f1(a, b, x))));
        }
    }
    for (int k = 0; k < 3; k++)
        assert_true(hit[k] > 1000);

    /* A4: the clamped quantity is b/a, not the gradient b */
    assert_true(strux_m3l_solve1d(4, 2, -1, 1) == 0.5);
    assert_true(strux_m3l_solve1d(0.5, 2, -1, 1) == 1.0);
    assert_true(strux_m3l_solve1d(4, -8, -1, 1) == -1.0);
}

static void test_solve1d_zero_curvature(void **state)
{
    (void)state;
    /* a = 0: maximise b·x, a linear function */
    assert_true(strux_m3l_solve1d(0, 3, -1, 2) == 2);
    assert_true(strux_m3l_solve1d(0, -3, -1, 2) == -1);
    assert_true(strux_m3l_solve1d(0, 0, -1, 2) == 0); /* flat: no move */
    assert_true(strux_m3l_solve1d(0, 0, 0.5, 2) == 0.5);
    assert_true(strux_m3l_solve1d(0, 0, -2, -0.5) == -0.5);
    /* curvature so small that b/a overflows still clamps to the right end */
    assert_true(strux_m3l_solve1d(1e-310, 1, -1, 2) == 2);
    assert_true(strux_m3l_solve1d(1e-310, -1, -1, 2) == -1);
    /* a degenerate box */
    assert_true(strux_m3l_solve1d(1, 5, 0, 0) == 0);
}

/* The best point over the nine faces of the box, each solved on its own affine hull (the KKT
 * enumeration): 0 interior, 1..4 edges (x1 = m1, x1 = M1, x2 = m2, x2 = M2), 5..8 corners. */
static int enumerate_faces(const double Q[3], const double g[2], const double m[2],
                           const double M[2], double best[2])
{
    double cand[9][2];
    int ok[9] = {0};
    double det = Q[0] * Q[2] - Q[1] * Q[1];
    cand[0][0] = (Q[2] * g[0] - Q[1] * g[1]) / det;
    cand[0][1] = (Q[0] * g[1] - Q[1] * g[0]) / det;
    ok[0] = 1;
    for (int e = 0; e < 2; e++) {
        double b1 = e ? M[0] : m[0], b2 = e ? M[1] : m[1];
        cand[1 + e][0] = b1;
        cand[1 + e][1] = (g[1] - Q[1] * b1) / Q[2];
        cand[3 + e][0] = (g[0] - Q[1] * b2) / Q[0];
        cand[3 + e][1] = b2;
        ok[1 + e] = ok[3 + e] = 1;
    }
    for (int c = 0; c < 4; c++) {
        cand[5 + c][0] = c & 1 ? M[0] : m[0];
        cand[5 + c][1] = c & 2 ? M[1] : m[1];
        ok[5 + c] = 1;
    }
    int arg = -1;
    double fbest = -INFINITY;
    for (int k = 0; k < 9; k++) {
        if (!(cand[k][0] >= m[0] && cand[k][0] <= M[0] && cand[k][1] >= m[1] && cand[k][1] <= M[1]))
            continue;
        double f = f2(Q, g, cand[k]);
        if (ok[k] && f > fbest) {
            fbest = f;
            arg = k;
        }
    }
    best[0] = cand[arg][0];
    best[1] = cand[arg][1];
    return arg;
}

/* Q = V·diag(e)·Vᵀ with a random rotation V and eigenvalues in [0.05, 20] (condition ≤ 400), or,
 * every third instance, the §2.1 form 4·R_ll·[[K_pp, s·K_pq], [s·K_pq, K_qq]] of two random
 * points. */
static void random_q(strux_rng *rng, int t, double Q[3])
{
    if (t % 3 == 2) {
        double xp[3], xq[3], kpp = 0, kqq = 0, kpq = 0;
        for (int j = 0; j < 3; j++) {
            xp[j] = strux_rng_normal(rng);
            xq[j] = strux_rng_normal(rng);
            kpp += xp[j] * xp[j];
            kqq += xq[j] * xq[j];
            kpq += xp[j] * xq[j];
        }
        double rll = 0.1 + strux_rng_uniform(rng), s = strux_rng_uniform(rng) < 0.5 ? -1 : 1;
        Q[0] = 4 * rll * kpp;
        Q[1] = 4 * rll * s * kpq;
        Q[2] = 4 * rll * kqq;
        return;
    }
    double th = 2 * M_PI * strux_rng_uniform(rng), c = cos(th), s = sin(th);
    double e1 = exp(log(0.05) + (log(20) - log(0.05)) * strux_rng_uniform(rng));
    double e2 = exp(log(0.05) + (log(20) - log(0.05)) * strux_rng_uniform(rng));
    Q[0] = e1 * c * c + e2 * s * s;
    Q[1] = (e1 - e2) * c * s;
    Q[2] = e1 * s * s + e2 * c * c;
}

static void test_solve2d_faces(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 2, 0, 0);
    int face_hits[9] = {0}, n_degenerate = 0;
    for (int t = 0; t < 30000; t++) {
        double Q[3], g[2], m[2], M[2], x[2], best[2];
        random_q(&rng, t, Q);
        for (int k = 0; k < 2; k++) {
            g[k] = 4 * strux_rng_normal(&rng);
            if (t % 4 == 3) { /* a general box */
                m[k] = 2 * strux_rng_normal(&rng);
                M[k] = m[k] + 3 * strux_rng_uniform(&rng);
            } else {
                solver_box(&rng, &m[k], &M[k]);
            }
        }
        int degenerate = strux_m3l_solve2d(Q[0], Q[1], Q[2], g, m, M, x);
        if (degenerate) { /* §2.1 points nearly (anti)parallel: not what this test is about */
            n_degenerate++;
            continue;
        }
        int face = enumerate_faces(Q, g, m, M, best);
        face_hits[face]++;
        assert_true(m[0] <= x[0] && x[0] <= M[0] && m[1] <= x[1] && x[1] <= M[1]);
        double fx = f2(Q, g, x), fb = f2(Q, g, best);
        double cond = Q[0] * Q[2] / (Q[0] * Q[2] - Q[1] * Q[1]);
        if (!(fx >= fb - 1e-12 * fmax(1, fabs(fb)) &&
              fabs(x[0] - best[0]) <= 1e-12 * cond * fmax(1, fabs(best[0])) &&
              fabs(x[1] - best[1]) <= 1e-12 * cond * fmax(1, fabs(best[1])))) {
            print_error("instance %d: Q = [%.17g %.17g %.17g], g = [%.17g %.17g], box [%.17g, "
                        "%.17g] × [%.17g, %.17g]: got (%.17g, %.17g) f = %.17g, faces give "
                        "(%.17g, %.17g) f = %.17g on face %d\n",
                        t, Q[0], Q[1], Q[2], g[0], g[1], m[0], M[0], m[1], M[1], x[0], x[1], fx,
                        best[0], best[1], fb, face);
            fail();
        }
        /* KKT of the maximisation at x: gradient g − Qx points out of the box or is 0 */
        double gr[2] = {g[0] - Q[0] * x[0] - Q[1] * x[1], g[1] - Q[1] * x[0] - Q[2] * x[1]};
        for (int k = 0; k < 2; k++) {
            double tol = 1e-9 * (fabs(g[k]) + 1) * cond;
            if (x[k] > m[k] && x[k] < M[k]) assert_true(fabs(gr[k]) <= tol);
            if (x[k] == m[k] && m[k] < M[k]) assert_true(gr[k] <= tol);
            if (x[k] == M[k] && m[k] < M[k]) assert_true(gr[k] >= -tol);
        }
    }
    for (int f = 0; f < 9; f++)
        assert_true(face_hits[f] >= 1000); /* 1660 to 4854 */
    assert_true(n_degenerate < 100);
}

/* One instance per face, by hand, with Q = I (the answer is the clamped g). */
static void test_solve2d_by_hand(void **state)
{
    (void)state;
    const double m[2] = {-1, -1}, M[2] = {1, 1};
    const struct {
        double g[2], x[2];
    } cases[] = {
        {{0.5, -0.25}, {0.5, -0.25}}, {{-3, 0.5}, {-1, 0.5}}, {{3, 0.5}, {1, 0.5}},
        {{0.5, -3}, {0.5, -1}},       {{0.5, 3}, {0.5, 1}},   {{-3, -3}, {-1, -1}},
        {{3, -3}, {1, -1}},           {{-3, 3}, {-1, 1}},     {{3, 3}, {1, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double x[2];
        assert_int_equal(strux_m3l_solve2d(1, 0, 1, cases[c].g, m, M, x), 0);
        assert_true(x[0] == cases[c].x[0] && x[1] == cases[c].x[1]);
    }
    /* coupling: Q = [[2, 1], [1, 2]], g = (3, −3): Q⁻¹g = (3, −3) is out in both coordinates;
     * x2 = −1 gives x1 = clamp((3 + 1)/2) = 1 (corner), the other candidate x1 = 1 gives
     * x2 = clamp((−3 − 1)/2) = −1: both reach the corner (1, −1) */
    double x[2], g[2] = {3, -3};
    strux_m3l_solve2d(2, 1, 2, g, m, M, x);
    assert_true(x[0] == 1 && x[1] == -1);
    /* only coordinate 2 out: Q = [[2, 1], [1, 2]], g = (0, 3): Q⁻¹g = (−1, 2); x2 = 1 and
     * x1 = (0 − 1)/2 */
    g[0] = 0;
    g[1] = 3;
    strux_m3l_solve2d(2, 1, 2, g, m, M, x);
    assert_true(x[0] == -0.5 && x[1] == 1);
}

static void test_solve2d_degenerate(void **state)
{
    (void)state;
    const double m[2] = {-0.5, -1}, M[2] = {2, 1}, g[2] = {1, -1};
    double x[2];
    /* parallel points (K_pq² = K_pp·K_qq), anti-parallel points, Q = 0: a 1-D step on p */
    assert_int_equal(strux_m3l_solve2d(2, 2, 2, g, m, M, x), 1);
    assert_true(x[0] == 0.5 && x[1] == 0);
    assert_int_equal(strux_m3l_solve2d(2, -2, 2, g, m, M, x), 1);
    assert_true(x[0] == 0.5 && x[1] == 0);
    assert_int_equal(strux_m3l_solve2d(0, 0, 0, g, m, M, x), 1); /* zero curvature: the bound */
    assert_true(x[0] == 2 && x[1] == 0);
    const double gn[2] = {-1, 5};
    assert_int_equal(strux_m3l_solve2d(0, 0, 0, gn, m, M, x), 1);
    assert_true(x[0] == -0.5 && x[1] == 0);
    assert_int_equal(strux_m3l_solve2d(0, 0, 3, gn, m, M, x), 1); /* q11 = 0, q22 > 0 */
    assert_true(x[0] == -0.5 && x[1] == 0);
    /* at the threshold: det = 1e-13·q11·q22 is degenerate, 1e-11 is not */
    double q12 = sqrt(1 - 1e-13);
    assert_int_equal(strux_m3l_solve2d(1, q12, 1, g, m, M, x), 1);
    q12 = sqrt(1 - 1e-11);
    assert_int_equal(strux_m3l_solve2d(1, q12, 1, g, m, M, x), 0);
    double best[2];
    const double Q[3] = {1, q12, 1};
    enumerate_faces(Q, g, m, M, best);
    assert_true(f2(Q, g, x) >= f2(Q, g, best) - 1e-9);
    /* the fallback step never loses: f(x) ≥ f(0) = 0 */
    strux_rng rng;
    strux_rng_init(&rng, 3, 0, 0);
    for (int t = 0; t < 2000; t++) {
        double a = exp(2 * strux_rng_normal(&rng)), b = exp(2 * strux_rng_normal(&rng));
        double s = strux_rng_uniform(&rng) < 0.5 ? -1 : 1;
        const double Qs[3] = {a, s * sqrt(a * b), b}; /* rank one */
        double gs[2] = {strux_rng_normal(&rng), strux_rng_normal(&rng)}, ms[2], Ms[2];
        solver_box(&rng, &ms[0], &Ms[0]);
        solver_box(&rng, &ms[1], &Ms[1]);
        assert_int_equal(strux_m3l_solve2d(Qs[0], Qs[1], Qs[2], gs, ms, Ms, x), 1);
        assert_true(x[1] == 0 && ms[0] <= x[0] && x[0] <= Ms[0]);
        assert_true(f2(Qs, gs, x) >= 0);
        assert_true(x[0] == strux_m3l_solve1d(a, gs[0], ms[0], Ms[0]));
    }
}

static void test_projected_gradient(void **state)
{
    (void)state;
    const double C = 2;
    assert_true(strux_m3l_pg(1, 0.5, C) == 0.5); /* inside: g */
    assert_true(strux_m3l_pg(1, -0.5, C) == -0.5);
    assert_true(strux_m3l_pg(0, 0.5, C) == 0.5); /* at 0: can only increase */
    assert_true(strux_m3l_pg(0, -0.5, C) == 0);
    assert_true(strux_m3l_pg(C, 0.5, C) == 0); /* at C: can only decrease */
    assert_true(strux_m3l_pg(C, -0.5, C) == -0.5);
}

/* S_p guard (A3) and h^max (§2.4): h^max is the objective at the unconstrained maximiser, and
 * Solve2DQP reaches it when the box is wide enough; a pair the guard accepts never takes the
 * degenerate fallback. */
static void test_selection(void **state)
{
    (void)state;
    assert_false(strux_m3l_pair_ok(2, 2, 2));  /* parallel */
    assert_false(strux_m3l_pair_ok(2, 2, -2)); /* anti-parallel: singular for a linear kernel */
    assert_false(strux_m3l_pair_ok(1, 4, 2 * (1 - 1e-14)));
    assert_false(strux_m3l_pair_ok(0, 4, 0)); /* a zero row */
    assert_true(strux_m3l_pair_ok(1, 4, 0));
    assert_true(strux_m3l_pair_ok(1, 4, 1.999));

    strux_rng rng;
    strux_rng_init(&rng, 5, 0, 0);
    for (int t = 0; t < 5000; t++) {
        double xp[3], xj[3], kpp = 0, kjj = 0, kpj = 0;
        for (int k = 0; k < 3; k++) {
            xp[k] = strux_rng_normal(&rng);
            xj[k] = strux_rng_normal(&rng);
            kpp += xp[k] * xp[k];
            kjj += xj[k] * xj[k];
            kpj += xp[k] * xj[k];
        }
        if (t % 10 == 0) kpj = sqrt(kpp * kjj) * (1 - 1e-15); /* nearly parallel */
        double rll = 0.1 + strux_rng_uniform(&rng), s = strux_rng_uniform(&rng) < 0.5 ? -1 : 1;
        double g[2] = {strux_rng_normal(&rng), strux_rng_normal(&rng)};
        const double Q[3] = {4 * rll * kpp, 4 * rll * s * kpj, 4 * rll * kjj};
        const double m[2] = {-1e9, -1e9}, M[2] = {1e9, 1e9};
        double x[2];
        int degenerate = strux_m3l_solve2d(Q[0], Q[1], Q[2], g, m, M, x);
        if (!strux_m3l_pair_ok(kpp, kjj, kpj)) {
            assert_true(t % 10 == 0);
            continue;
        }
        assert_false(degenerate);
        double h = strux_m3l_hmax(g[0], g[1], s, kpp, kjj, kpj, rll);
        assert_true(h >= 0);
        assert_close(f2(Q, g, x), h, 1e-9);
    }
}

static void test_snap(void **state)
{
    (void)state;
    const double C = 4;
    assert_true(strux_m3l_snap(0, C) == 0);
    assert_true(strux_m3l_snap(3e-12, C) == 0);
    assert_true(strux_m3l_snap(-3e-12, C) == 0);
    assert_true(strux_m3l_snap(5e-12, C) == 5e-12);
    assert_true(strux_m3l_snap(C - 3e-12, C) == C);
    assert_true(strux_m3l_snap(C + 3e-12, C) == C);
    assert_true(strux_m3l_snap(C - 5e-12, C) == C - 5e-12);
    assert_true(strux_m3l_snap(1.5, C) == 1.5);
    /* a step to the upper bound M = C − α lands exactly on C after snapping */
    strux_rng rng;
    strux_rng_init(&rng, 4, 0, 0);
    for (int t = 0; t < 1000; t++) {
        double c = 1.0 / 3 + strux_rng_uniform(&rng), alpha = c * strux_rng_uniform(&rng);
        double d = strux_m3l_solve1d(1, 1e9, -alpha, c - alpha);
        assert_true(strux_m3l_snap(alpha + d, c) == c);
        d = strux_m3l_solve1d(1, -1e9, -alpha, c - alpha);
        assert_true(strux_m3l_snap(alpha + d, c) == 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solve1d),
        cmocka_unit_test(test_solve1d_zero_curvature),
        cmocka_unit_test(test_solve2d_faces),
        cmocka_unit_test(test_solve2d_by_hand),
        cmocka_unit_test(test_solve2d_degenerate),
        cmocka_unit_test(test_projected_gradient),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_snap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
