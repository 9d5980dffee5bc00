/* tests/unit/test_search_points.c - the searches on synthetic 2-D point sets (slack_bicriteria.md
 * Appendix A items 1-4, §3.8): angular search against brute force on random sets (exact, at most
 * 2M + 1 constrained calls plus the O(0) call of λ0), the Theorem-1 instance (λ-oracle, bisect and
 * binary never see C; angular finds it), the Lemma-13 instance (convex hull: C after exactly 4
 * calls), the convex-hull optimum against the best point of every pairwise segment, the ban-list
 * integral recovery against the integral optimum, certified bounds of every search, the slack
 * input of the Sarawagi-Gupta search, and the configuration errors. */
#include "test_common.h"

#include "points.h"
#include "search/search_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static strux_search *make(point_set *ps, const char *type, const char *search, double eps,
                          const char *queue)
{
    strux_search_options o;
    assert_strux_ok(strux_search_options_default(&o));
    strcpy(o.type, type);
    strcpy(o.search, search);
    strcpy(o.queue, queue);
    o.eps = eps;
    o.cache = 0;
    o.warm_start = 0;
    o.max_calls = 1000;
    strux_search *s = NULL;
    assert_strux_ok(strux_search_create(&o, ps->t, &ps->ds, &s));
    return s;
}

/* Random set of n points on the slack plane (h = 1 + m): h in [−0.5, 3], g integer or real. */
static void random_set(point_set *ps, int n, strux_rng *r, int integer_g)
{
    double m[POINTS_MAX], L[POINTS_MAX];
    for (int k = 0; k < n; k++) {
        m[k] = 3.5 * strux_rng_uniform(r) - 1.5;
        L[k] = integer_g ? 1 + floor(10 * strux_rng_uniform(r)) : 0.1 + 9.9 * strux_rng_uniform(r);
    }
    points_init(ps, n, m, L);
}

static double brute_max(const point_set *ps, const strux_surrogate *u)
{
    double best = -INFINITY;
    for (int k = 0; k < ps->pot.n_parts; k++) {
        strux_point p = {.m = ps->pot.s[2 * k], .L = ps->pot.s[2 * k + 1]};
        strux_plane_map(u, 0, &p);
        best = fmax(best, u->psi(u, p.h, p.g));
    }
    return best;
}

static double psi_of(const strux_surrogate *u, double m, double L)
{
    strux_point p = {.m = m, .L = L};
    strux_plane_map(u, 0, &p);
    return u->psi(u, p.h, p.g);
}

static void test_angular_random_sets(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 1, 0, 0);
    const char *queues[] = {"priority", "fifo"};
    double calls_sum = 0;
    int runs = 0;
    for (int trial = 0; trial < 300; trial++) {
        int n = 3 + (int)strux_rng_below(&r, 58);
        point_set ps;
        random_set(&ps, n, &r, trial % 2);
        for (int qd = 0; qd < 2; qd++) {
            strux_search *s = make(&ps, "slack", "angular", 0, queues[qd]);
            strux_search_result res;
            assert_strux_ok(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res));
            double want = brute_max(&ps, &s->u);
            assert_close(res.psi, want, 1e-12);
            double m, L;
            points_of(&ps, res.y, &m, &L);
            assert_close(psi_of(&s->u, m, L), res.psi, 1e-12); /* the label is the answer's */
            assert_true(res.ub >= want - 1e-12);
            assert_true(res.calls <= 2 * (n + 1) + 1 + 1); /* Theorem 2, plus the O(0) call */
            calls_sum += (double)res.calls;
            runs++;
            /* the 0.999 stop: within eps of the optimum, bound still certified */
            strux_search_destroy(&s);
            s = make(&ps, "slack", "angular", 1e-3, queues[qd]);
            assert_strux_ok(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res));
            assert_true(res.psi >= (1 - 1e-3) * want - 1e-12);
            assert_true(res.ub >= want - 1e-12);
            strux_search_destroy(&s);
        }
        points_free(&ps);
    }
    printf("# angular on random point sets: %.2f oracle calls per exact search\n",
           calls_sum / runs);
}

/* Theorem 1: A = (ε, Ĝ), B = (Ĥ, ε), C = (Ĥ/2, Ĝ/2) with Ĥ = Ĝ = 1, ε = 0.01 (h = 1 + m). */
static void theorem1(point_set *ps)
{
    const double eps = 0.01;
    double h[] = {eps, 1, 0.5}, L[] = {1, eps, 0.5}, m[3];
    for (int k = 0; k < 3; k++) m[k] = h[k] - 1;
    points_init(ps, 3, m, L);
}

static void test_theorem1_instance(void **state)
{
    (void)state;
    point_set ps;
    theorem1(&ps);
    strux_label y;
    assert_strux_ok(strux_label_alloc(&y, 1, 0));
    for (int k = 0; k <= 400; k++) {
        double lambda = pow(10, -4 + k * 0.02);
        strux_query q = strux_query_dir(1, lambda);
        strux_answer a;
        assert_strux_ok(strux_task_oracle(ps.t, &ps.pot, &ps.truth, &q, &y, &a));
        assert_true(y.y[0] == 1 || y.y[0] == 2); /* only A or B, never C (label 3) */
    }
    const char *blind[] = {"bisect", "binary"};
    for (int k = 0; k < 2; k++) {
        strux_search *s = make(&ps, "slack", blind[k], 0, "priority");
        strux_search_result res;
        assert_strux_ok(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res));
        assert_int_not_equal(res.y->y[0], 3);
        assert_true(res.psi < 0.25 / 10);
        assert_true(res.ub >= 0.25);
        strux_search_destroy(&s);
    }
    strux_search *s = make(&ps, "slack", "angular", 0, "priority");
    strux_search_result res;
    assert_strux_ok(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res));
    assert_int_equal(res.y->y[0], 3);
    assert_close(res.psi, 0.25, 1e-15);
    strux_search_destroy(&s);
    strux_label_free(&y);
    points_free(&ps);
}

/* Lemma 13: A = (2, 4), B = (4, 2), C = (3.05, 3), ψ = hg: ∞ → A, 0.5 → B, 1 → C, 3.05/3 → C. */
static void test_lemma13_instance(void **state)
{
    (void)state;
    double m[] = {2 - 1, 4 - 1, 3.05 - 1}, L[] = {4, 2, 3};
    point_set ps;
    points_init(&ps, 3, m, L);
    strux_search *s = make(&ps, "slack", "convex_hull", 0, "priority");
    strux_search_result res;
    int64_t c0 = strux_task_oracle_calls(ps.t);
    assert_strux_ok(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res));
    assert_int_equal(res.calls, 4);
    assert_int_equal(strux_task_oracle_calls(ps.t) - c0, 4);
    assert_null(res.y2);
    assert_int_equal(res.y->y[0], 3);
    assert_close(res.psi, 3.05 * 3, 1e-15);
    assert_close(res.ub, 3.05 * 3, 1e-15);
    strux_search_destroy(&s);
    points_free(&ps);
}

/* max of ψ on the segment p→q: dense grid, then ternary refinement around the best grid point */
static double segment_max(const strux_surrogate *u, double mp, double Lp, double mq, double Lq)
{
    const int N = 2000;
    int jb = 0;
    double vb = -INFINITY;
    for (int j = 0; j <= N; j++) {
        double t = (double)j / N, v = psi_of(u, mp + t * (mq - mp), Lp + t * (Lq - Lp));
        if (v > vb) vb = v, jb = j;
    }
    double a = fmax(0, (jb - 1.0) / N), b = fmin(1, (jb + 1.0) / N);
    for (int it = 0; it < 100; it++) {
        double t1 = a + (b - a) / 3, t2 = b - (b - a) / 3;
        double v1 = psi_of(u, mp + t1 * (mq - mp), Lp + t1 * (Lq - Lp));
        double v2 = psi_of(u, mp + t2 * (mq - mp), Lp + t2 * (Lq - Lp));
        if (v1 < v2)
            a = t1;
        else
            b = t2;
        vb = fmax(vb, fmax(v1, v2));
    }
    return vb;
}

/* Appendix A item 4: the hull optimum equals the best point over all pairwise segments. */
static void test_hull_vs_all_segments(void **state)
{
    (void)state;
    const char *types[] = {"slack", "margin", "beta", "beta", "probloss", "probloss"};
    const double beta[] = {0, 0, 0.25, 0.75, 0, 0};
    const int convex[] = {0, 0, 0, 0, 1, 0};
    strux_rng r;
    strux_rng_init(&r, 2, 0, 0);
    double calls = 0;
    int runs = 0;
    for (int trial = 0; trial < 40; trial++) {
        point_set ps;
        random_set(&ps, 3 + (int)strux_rng_below(&r, 16), &r, 1);
        for (int k = 0; k < 6; k++) {
            strux_search_options o;
            assert_strux_ok(strux_search_options_default(&o));
            strcpy(o.type, types[k]);
            strcpy(o.search, "convex_hull");
            o.beta = beta[k];
            o.probloss_convex = convex[k];
            o.warm_start = 0;
            strux_search *s;
            assert_strux_ok(strux_search_create(&o, ps.t, &ps.ds, &s));
            strux_search_result res;
            assert_strux_ok(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res));
            double want = -INFINITY;
            const double *P = ps.pot.s;
            for (int a = 0; a < ps.pot.n_parts; a++)
                for (int b = a; b < ps.pot.n_parts; b++)
                    want = fmax(want, segment_max(&s->u, P[2 * a], P[2 * a + 1], P[2 * b],
                                                  P[2 * b + 1]));
            assert_close(res.psi, want, 1e-9);
            assert_true(res.ub >= want - 1e-9 * fmax(1, want));
            /* the answer is the stated mixture of its labels */
            double ma, La, mb = 0, Lb = 0;
            points_of(&ps, res.y, &ma, &La);
            if (res.y2) points_of(&ps, res.y2, &mb, &Lb);
            double mix = res.y2 ? res.mix : 1;
            assert_close(res.m, mix * ma + (1 - mix) * mb, 1e-12);
            assert_close(res.g, mix * La + (1 - mix) * Lb, 1e-12);
            assert_close(psi_of(&s->u, res.m, res.g), res.psi, 1e-12);
            /* at most the labels of the hull's reachable chain, plus one repeat (Theorem 6) */
            assert_true(res.calls <= ps.pot.n_parts + 1);
            calls += (double)res.calls;
            runs++;
            /* §3.8: integral recovery reaches the best label */
            strux_search_destroy(&s);
            o.integral = 1;
            assert_strux_ok(strux_search_create(&o, ps.t, &ps.ds, &s));
            assert_strux_ok(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res));
            assert_null(res.y2);
            assert_close(res.psi, brute_max(&ps, &s->u), 1e-12);
            assert_true(res.ub >= res.psi);
            strux_search_destroy(&s);
        }
        points_free(&ps);
    }
    printf("# convex hull on random point sets: %.2f oracle calls per search\n", calls / runs);
}

/* Every search's bound is certified; sarawagi reads the slack and refuses to run without it. */
static void test_bounds_and_slack(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 3, 0, 0);
    const char *searches[] = {"sarawagi", "binary", "bisect", "angular", "convex_hull"};
    for (int trial = 0; trial < 100; trial++) {
        point_set ps;
        random_set(&ps, 3 + (int)strux_rng_below(&r, 40), &r, trial % 2);
        for (int k = 0; k < 5; k++) {
            strux_search *s = make(&ps, "slack", searches[k], 1e-3, "priority");
            strux_search_result res;
            assert_int_equal(!!(strux_search_caps(s) & STRUX_CAP_NEEDS_SLACK), k == 0);
            if (k == 0) {
                assert_strux_fails(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res),
                                   STRUX_ERR_UNSUPPORTED,
                                   "surrogate.search = sarawagi needs the current slack ξ_i");
                strux_search_set_slack(s, 0.3 * trial);
            }
            assert_strux_ok(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res));
            double want = brute_max(&ps, &s->u);
            if (k < 4) assert_true(res.psi <= want + 1e-12); /* convex_hull: fractional */
            assert_true(res.ub >= res.psi - 1e-12);
            assert_true(res.ub >= want - 1e-12);
            if (k == 0) /* the slack held for one run only */
                assert_strux_fails(strux_search_run(s, ps.t, &ps.pot, &ps.truth, &res),
                                   STRUX_ERR_UNSUPPORTED, "needs the current slack");
            strux_search_destroy(&s);
        }
        points_free(&ps);
    }
}

static void test_config_errors(void **state)
{
    (void)state;
    point_set ps;
    theorem1(&ps);
    strux_search_options o;
    assert_strux_ok(strux_search_options_default(&o));
    strux_search *s = NULL;
    strcpy(o.type, "beta");
    strcpy(o.search, "angular");
    assert_strux_fails(strux_search_create(&o, ps.t, &ps.ds, &s), STRUX_ERR_CONFIG,
                       "surrogate.search = angular needs a surrogate with flag slack_form; "
                       "surrogate.type = beta lacks it");
    strcpy(o.search, "margin");
    assert_strux_fails(strux_search_create(&o, ps.t, &ps.ds, &s), STRUX_ERR_CONFIG,
                       "surrogate.search = margin needs a surrogate with flag one_call");
    strcpy(o.search, "golden");
    assert_strux_fails(strux_search_create(&o, ps.t, &ps.ds, &s), STRUX_ERR_CONFIG,
                       "surrogate.search = 'golden' is unknown; valid: auto, margin, sarawagi, "
                       "binary, bisect, angular, convex_hull");
    assert_null(s);
    const char *types[] = {"margin", "slack", "beta", "probloss", "microf1"};
    const char *defaults[] = {"margin", "angular", "convex_hull", "convex_hull", "convex_hull"};
    strcpy(o.search, "auto");
    for (int k = 0; k < 5; k++) {
        strcpy(o.type, types[k]);
        assert_strux_ok(strux_search_create(&o, ps.t, &ps.ds, &s));
        assert_string_equal(strux_search_name(s), defaults[k]);
        assert_string_equal(strux_surrogate_name(s), types[k]);
        strux_search_destroy(&s);
    }
    points_free(&ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_angular_random_sets),
        cmocka_unit_test(test_theorem1_instance),
        cmocka_unit_test(test_lemma13_instance),
        cmocka_unit_test(test_hull_vs_all_segments),
        cmocka_unit_test(test_bounds_and_slack),
        cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
