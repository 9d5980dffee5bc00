/* tests/unit/test_surrogate.c - the surrogates ψ of slack_bicriteria.md §1.4-1.6: values against
 * their closed forms, partial derivatives against central finite differences at many points,
 * the ProbLoss values of Appendix A item 5, the convex extension's continuity, the line maximum of
 * the convex-hull search against a dense scan, and the option errors. */
#include "test_common.h"

#include "search/search_impl.h"

#include <math.h>
#include <string.h>

static strux_surrogate get(const char *type, double beta, int convex)
{
    strux_search_options o;
    assert_strux_ok(strux_search_options_default(&o));
    strcpy(o.type, type);
    o.beta = beta;
    o.probloss_convex = convex;
    strux_surrogate u;
    assert_strux_ok(strux_surrogate_lookup(&o, &u));
    return u;
}

static void test_closed_forms(void **state)
{
    (void)state;
    strux_surrogate u = get("margin", 0, 0);
    assert_close(u.psi(&u, -0.3, 4), 3.7, 1e-15);
    u = get("slack", 0, 0);
    assert_close(u.h_shift, 1, 0);
    assert_close(u.psi(&u, 1 + -0.3, 4), 0.7 * 4, 1e-15); /* (m + 1)·L */
    u = get("beta", 0.25, 0);
    assert_close(u.psi(&u, -0.3, 4), -0.3 * pow(4, 0.25) + 4, 1e-15);
    u = get("microf1", 0, 0);
    assert_int_equal(u.plane, STRUX_PLANE_F1);
    assert_close(u.psi(&u, 3 + 0.5, -(2 + 3)), 3.5 / 5, 1e-15); /* (H + m)/(|y| + |y_i|) */
    assert_close(u.psi(&u, 0, 0), 0, 0);                         /* both sets empty: loss 0 */
    /* ProbLoss: ψ(0, g) = g (tight at zero margin), ψ(h, 0) = 0 */
    for (int c = 0; c < 2; c++) {
        u = get("probloss", 0, c);
        for (double g = 1; g <= 9; g += 2) assert_close(u.psi(&u, 0, g), g, 1e-14);
        assert_close(u.psi(&u, 2.0, 0), 0, 0);
    }
    /* raw ProbLoss = 2g·Φ_N(h / sqrt(2g/π)) at a hand-computed point: g = 2, h = 1 */
    u = get("probloss", 0, 0);
    double z = 1 / sqrt(4 / M_PI);
    assert_close(u.psi(&u, 1, 2), 4 * 0.5 * erfc(-z / sqrt(2)), 1e-14);
    /* convex extension: tangent continuation g + sqrt(g)·h for h > 0, raw for h ≤ 0 */
    strux_surrogate c = get("probloss", 0, 1);
    assert_close(c.psi(&c, 0.5, 4), 4 + 2 * 0.5, 1e-14);
    assert_close(c.psi(&c, -0.5, 4), u.psi(&u, -0.5, 4), 1e-15);
}

/* Appendix A item 5 (raw ProbLoss) */
static void test_probloss_appendix_values(void **state)
{
    (void)state;
    strux_surrogate u = get("probloss", 0, 0);
    const double pts[][4] = {{-1, 3, 1.33310, 0.69149}, {0, 1, 1, 1}, {0.5, 4, 1.90420, 1.12696}};
    for (int k = 0; k < 3; k++) {
        assert_close(u.psi_h(&u, pts[k][0], pts[k][1]), pts[k][2], 5e-6);
        assert_close(u.psi_g(&u, pts[k][0], pts[k][1]), pts[k][3], 5e-6);
    }
    /* convex extension for h > 0: ψ_h = sqrt(g), ψ_g = 1 + h/(2 sqrt g) */
    strux_surrogate c = get("probloss", 0, 1);
    assert_close(c.psi_h(&c, 0.5, 4), 2, 1e-15);
    assert_close(c.psi_g(&c, 0.5, 4), 1 + 0.5 / 4, 1e-15);
}

static void fd_check(const strux_surrogate *u, double h, double g)
{
    double e = 1e-6 * fmax(1, fabs(h));
    double fh = (u->psi(u, h + e, g) - u->psi(u, h - e, g)) / (2 * e);
    double eg = 1e-6 * fmax(1, fabs(g));
    double fg = (u->psi(u, h, g + eg) - u->psi(u, h, g - eg)) / (2 * eg);
    assert_close(u->psi_h(u, h, g), fh, 1e-6);
    assert_close(u->psi_g(u, h, g), fg, 1e-6);
}

static void test_derivatives_finite_differences(void **state)
{
    (void)state;
    const char *types[] = {"margin", "slack", "beta", "beta", "beta", "probloss", "probloss"};
    const double betas[] = {0, 0, 0.25, 0.5, 0.75, 0, 0};
    const int convex[] = {0, 0, 0, 0, 0, 0, 1};
    for (int k = 0; k < 7; k++) {
        strux_surrogate u = get(types[k], betas[k], convex[k]);
        for (double h = -3.1; h <= 3.1; h += 0.37)
            for (double g = 0.5; g <= 12; g += 1.3) {
                if (convex[k] && fabs(h) < 1e-5) continue; /* the extension's seam */
                fd_check(&u, h, g);
            }
    }
    strux_surrogate f1 = get("microf1", 0, 0);
    for (double h = -2; h <= 9; h += 0.7)
        for (double g = -20; g <= -1; g += 1.5) fd_check(&f1, h, g);
}

/* The convex-hull search's line maximum against a dense scan of the segment. */
static void test_line_max_dense_scan(void **state)
{
    (void)state;
    const char *types[] = {"margin", "slack", "beta", "probloss", "probloss", "microf1"};
    const int convex[] = {0, 0, 0, 0, 1, 0};
    strux_rng r;
    strux_rng_init(&r, 11, 0, 0);
    for (int k = 0; k < 6; k++) {
        strux_surrogate u = get(types[k], 0.5, convex[k]);
        for (int trial = 0; trial < 200; trial++) {
            /* two points of an upper-right chain: h falls as g grows */
            double gp = 1 + floor(10 * strux_rng_uniform(&r));
            double gq = gp + 1 + floor(5 * strux_rng_uniform(&r));
            double hq = 4 * strux_rng_uniform(&r) - 1, hp = hq + 3 * strux_rng_uniform(&r);
            if (u.plane == STRUX_PLANE_F1) { /* g = −(|y| + |y_i|) < 0 */
                double a = gp, b = gq;
                gp = -b - 1, gq = -a;
            }
            double s, v = strux_hull_line_max(&u, hp, gp, hq, gq, &s);
            double scan = -INFINITY;
            for (int j = 0; j <= 100000; j++) {
                double t = j / 100000.0;
                scan = fmax(scan, u.psi(&u, hp + t * (hq - hp), gp + t * (gq - gp)));
            }
            assert_true(v >= scan - 1e-9 * fmax(1, fabs(scan)));
            assert_close(v, scan, 1e-8);
            assert_close(u.psi(&u, hp + s * (hq - hp), gp + s * (gq - gp)), v, 1e-12);
        }
    }
}

static void test_option_errors(void **state)
{
    (void)state;
    strux_search_options o;
    assert_strux_ok(strux_search_options_default(&o));
    strcpy(o.type, "hinge");
    strux_surrogate u;
    assert_strux_fails(strux_surrogate_lookup(&o, &u), STRUX_ERR_CONFIG,
                       "surrogate.type = 'hinge' is unknown; valid types: margin, slack, beta, "
                       "probloss, microf1");
    strcpy(o.type, "beta");
    o.beta = 1.5;
    assert_strux_fails(strux_surrogate_lookup(&o, &u), STRUX_ERR_CONFIG,
                       "surrogate.beta = 1.5 is outside [0, 1]");
    assert_strux_fails(strux_opt_set(&strux_search_opt_specs[2], &o, "-0.1", "x.ini:3"),
                       STRUX_ERR_CONFIG, "x.ini:3: surrogate.beta = -0.1 is outside [0, 1]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_forms),
        cmocka_unit_test(test_probloss_appendix_values),
        cmocka_unit_test(test_derivatives_finite_differences),
        cmocka_unit_test(test_line_max_dense_scan),
        cmocka_unit_test(test_option_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
