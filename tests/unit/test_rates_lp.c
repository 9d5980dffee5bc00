/* tests/unit/test_rates_lp.c - the multiplier LP of rate-constrained training (rates_search.c, Alg. 2
 * with E.1; dataset_constraints.md §3.3) for one constraint, through src/lp (GLPK) exactly as
 * rates_search.c builds it (columns v, z; objective z − δv; a row z − g_s·v ≤ u_s − g_s·v_s per cut, the
 * flat cut 0 among them), against the direct 1-D scan of the spec: the maximum of the lower
 * envelope min_s u_s + g_s(v − v_s) over [0, V] is attained at 0, V or a pairwise intersection.
 * 500 random cut sets (2-12 cuts, slopes of both signs, some parallel): U* to 1e-9 relative, v*
 * at the scan's smallest maximiser (the tie-break) to 1e-7·V, and the row duals taken as |y|
 * renormalised form weights μ with Σμ = 1 whose cuts are active at v* and, when 0 < v* < V,
 * balance the slopes (Σ μ_s g_s = 0: the LP-dual average of A5 meets the constraint). */
#include "test_common.h"

#include "strux/lp.h"

#include <math.h>

static double urand(uint64_t *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*st >> 11) / 9007199254740992.0;
}

static double envelope(int n, const double *u, const double *g, const double *vs, double v)
{
    double h = INFINITY;
    for (int s = 0; s < n; s++)
        h = fmin(h, u[s] + g[s] * (v - vs[s]));
    return h;
}

static void test_lp_vs_scan(void **state)
{
    (void)state;
    uint64_t st = 7;
    for (int it = 0; it < 500; it++) {
        int n = 2 + (int)(urand(&st) * 11);
        double V = urand(&st) < 0.3 ? 1000 : 1 + 9 * urand(&st);
        double u[16], g[16], vs[16];
        u[0] = 1 + urand(&st); /* the flat cut */
        g[0] = 0;
        vs[0] = 0;
        for (int s = 1; s < n; s++) {
            vs[s] = V * urand(&st);
            g[s] = urand(&st) < 0.1 ? g[s - 1] : 2 * (urand(&st) - 0.5);
            u[s] = 0.5 + urand(&st) * 0.5;
        }
        /* the scan */
        double best = -INFINITY, vbest = 0;
        double cand[16 * 16 + 2];
        int nc = 0;
        cand[nc++] = 0;
        cand[nc++] = V;
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++)
                if (g[a] != g[b]) {
                    double v = (u[b] - g[b] * vs[b] - u[a] + g[a] * vs[a]) / (g[a] - g[b]);
                    if (v > 0 && v < V) cand[nc++] = v;
                }
        for (int c = 0; c < nc; c++) {
            double h = envelope(n, u, g, vs, cand[c]);
            if (h > best + 1e-12 || (fabs(h - best) <= 1e-12 && cand[c] < vbest)) {
                best = h;
                vbest = cand[c];
            }
        }
        /* the LP as rates_search.c builds it */
        strux_lp *lp = NULL;
        assert_strux_ok(strux_lp_create(2, &lp));
        assert_strux_ok(strux_lp_set_col_bounds(lp, 0, STRUX_LP_DOUBLE, 0, V));
        assert_strux_ok(strux_lp_set_col_bounds(lp, 1, STRUX_LP_FREE, 0, 0));
        double delta = 1e-9 * fmax(1.0, fabs(u[0])) / V, obj[2] = {-delta, 1};
        strux_lp_set_objective(lp, obj, 0);
        for (int s = 0; s < n; s++) {
            int32_t idx[2] = {0, 1}, row;
            double val[2] = {-g[s], 1};
            assert_strux_ok(
                strux_lp_add_row(lp, 2, idx, val, STRUX_LP_UPPER, 0, u[s] - g[s] * vs[s], &row));
        }
        strux_lp_result res;
        double value, x[2], y[16];
        assert_strux_ok(strux_lp_solve(lp, &res, &value));
        assert_int_equal(res, STRUX_LP_OPTIMAL);
        strux_lp_primal(lp, x);
        assert_true(fabs(x[1] - best) <= 1e-9 * fmax(1, fabs(best)));
        assert_true(fabs(x[0] - vbest) <= 1e-7 * V);
        strux_lp_row_duals(lp, y);
        double sum = 0, slope = 0;
        for (int s = 0; s < n; s++)
            sum += y[s] = fabs(y[s]);
        assert_true(sum > 0);
        for (int s = 0; s < n; s++) {
            y[s] /= sum;
            if (y[s] > 1e-9) /* an active cut */
                assert_true(fabs(u[s] + g[s] * (x[0] - vs[s]) - x[1]) <= 1e-8 * fmax(1, fabs(x[1])));
            slope += y[s] * g[s];
        }
        if (x[0] > 1e-7 * V && x[0] < V * (1 - 1e-7))
            assert_true(fabs(slope + delta) <= 1e-7); /* Σ μ g = −δ·(z's weight 1): 0 up to δ */
        strux_lp_destroy(&lp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lp_vs_scan)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
