/* tests/unit/test_rates_step.c - the merged two-hinge coordinate step of rate-constrained
 * training (strux_rates_two_hinge_step, rates.c; dataset_constraints.md §3.7) against a brute
 * force: 2000 random instances (boxes with either side 0, scores inside and outside the flat
 * region, tiny and large curvatures), each maximised over a fine grid of the box plus the
 * candidate kinks; the closed form must be at least as good as every grid point and within 1e-12
 * of the best. Also the zero-feature case and the split of the returned ξ into the two hinge
 * duals being feasible. */
#include "test_common.h"

#include "solvers/rates.h"

#include <math.h>

static double objective(double x, double xi, double a, double b, double s, double Q)
{
    double d = x - xi;
    return 2 * fmin(a, x + b) - x + s * d - 0.5 * Q * d * d;
}

static double urand(uint64_t *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*st >> 11) / 9007199254740992.0;
}

static void test_against_grid(void **state)
{
    (void)state;
    uint64_t st = 42;
    for (int it = 0; it < 2000; it++) {
        double a = urand(&st) < 0.15 ? 0 : 3 * urand(&st);
        double b = urand(&st) < 0.15 ? 0 : 3 * urand(&st);
        if (a == 0 && b == 0) a = 1;
        double xi = -b + (a + b) * urand(&st);
        double s = 6 * (urand(&st) - 0.5);
        double Q = pow(10, 4 * urand(&st) - 2);
        double nu = strux_rates_two_hinge_step(xi, a, b, s, Q);
        assert_true(nu >= -b && nu <= a);
        double f = objective(nu, xi, a, b, s, Q), best = -INFINITY;
        int G = 20000;
        for (int g = 0; g <= G; g++) {
            double x = -b + (a + b) * g / G;
            best = fmax(best, objective(x, xi, a, b, s, Q));
        }
        /* the kink and the two stationary points, clipped, are the only other candidates */
        double cand[3] = {a - b, xi + (s + 1) / Q, xi + (s - 1) / Q};
        for (int c = 0; c < 3; c++) {
            double x = fmin(a, fmax(-b, cand[c]));
            best = fmax(best, objective(x, xi, a, b, s, Q));
        }
        assert_true(f >= best - 1e-12 * fmax(1, fabs(best)));
        /* the split: ξ+ = min(a, ν + b) ∈ [0, a], ξ− = ξ+ − ν ∈ [0, b] */
        double xp = fmin(a, nu + b), xn = xp - nu;
        assert_true(xp >= 0 && xp <= a && xn >= -1e-15 && xn <= b + 1e-15);
    }
}

static void test_zero_features(void **state)
{
    (void)state;
    /* Q = 0: the loss does not depend on ξ's effect on w; the dual is maximised at the end the
     * score says, or at the kink when both hinges are active */
    assert_true(strux_rates_two_hinge_step(0.3, 1.5, 0.5, 2.0, 0) == 1.5);
    assert_true(strux_rates_two_hinge_step(0.3, 1.5, 0.5, -2.0, 0) == -0.5);
    assert_true(strux_rates_two_hinge_step(0.3, 1.5, 0.5, 0.2, 0) == 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_against_grid),
                                       cmocka_unit_test(test_zero_features)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
