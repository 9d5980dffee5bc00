/* tests/unit/test_rates_cut.c - the one-dimensional cut models of rate-constrained training
 * (rates_cut.c; dataset_constraints.md §3.4 E.2 and the level-set midpoint, §3.5 F.2.1 and F.2.2)
 * against a 1-D scan: the envelope on a grid of 100,001 points, the region's area and centroid by
 * the trapezoid rule, the level set's ends and the minimum from the grid. 150 random cut sets per
 * model (2-14 lines, slopes of both signs, some parallel, a flat cut among them as Alg. 2's cut 0
 * and Alg. 3's l'_0 are), bounds drawn inside the model's range: centroids to 1e-6 of the box
 * and of the region's height, the midpoint and the minimiser to two grid steps, the minimum to
 * what the grid can miss at a kink (two steps times the steepest slope); an empty level set is an
 * error. */
#include "test_common.h"

#include "solvers/rates_impl.h"

#include <math.h>

#define GRID 100001

static double urand(uint64_t *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*st >> 11) / 9007199254740992.0;
}

/* A random cut set on [lo, hi]: a flat line first, then lines through points inside. */
static int draw(uint64_t *st, double lo, double hi, double *u, double *g, double *vs)
{
    int n = 2 + (int)(urand(st) * 13);
    u[0] = 0.5 + urand(st);
    g[0] = 0;
    vs[0] = lo;
    for (int s = 1; s < n; s++) {
        vs[s] = lo + (hi - lo) * urand(st);
        g[s] = urand(st) < 0.1 ? g[s - 1] : 4 * (urand(st) - 0.5) / (hi - lo);
        u[s] = urand(st);
    }
    return n;
}

/* The scan of the concave model min_s: value at each grid point into h. */
static void scan_min(int n, const double *u, const double *g, const double *vs, double lo,
                     double hi, double *h)
{
    for (int i = 0; i < GRID; i++)
        h[i] = strux_rates_envelope(n, u, g, vs, lo + (hi - lo) * i / (GRID - 1));
}

/* Area and centroid of {L ≤ z ≤ h(v)} on the grid (trapezoid rule). */
static void scan_centroid(const double *h, double lo, double hi, double L, double *cv, double *cz)
{
    double dv = (hi - lo) / (GRID - 1), A = 0, X = 0, Z = 0;
    for (int i = 0; i < GRID; i++) {
        double w = (i == 0 || i == GRID - 1) ? 0.5 : 1.0, t = h[i] > L ? h[i] - L : 0;
        double v = lo + dv * i;
        A += w * t;
        X += w * t * v;
        Z += w * t * 0.5 * (h[i] + L);
    }
    *cv = X / A;
    *cz = Z / A;
}

static void test_center_and_midpoint(void **state)
{
    (void)state;
    uint64_t st = 11;
    double *h = NULL;
    assert_strux_ok(strux_alloc_array(&h, GRID, sizeof *h));
    for (int it = 0; it < 150; it++) {
        double V = urand(&st) < 0.3 ? 1000 : 0.5 + 9 * urand(&st), u[16], g[16], vs[16];
        int n = draw(&st, 0, V, u, g, vs);
        scan_min(n, u, g, vs, 0, V, h);
        double top = -INFINITY, bottom = INFINITY;
        for (int i = 0; i < GRID; i++) {
            top = fmax(top, h[i]);
            bottom = fmin(bottom, h[i]);
        }
        if (top - bottom < 1e-3) continue; /* a flat model: no region worth a centroid */
        double L = top - (0.05 + 0.9 * urand(&st)) * (top - bottom), cv, cz, v, z, mid;
        scan_centroid(h, 0, V, L, &cv, &cz);
        assert_strux_ok(strux_rates_center(n, u, g, vs, V, L, &v, &z));
        assert_true(fabs(v - cv) <= 1e-6 * V);
        assert_true(fabs(z - cz) <= 1e-6 * (top - L));
        int first = -1, last = -1;
        for (int i = 0; i < GRID; i++)
            if (h[i] >= L) {
                if (first < 0) first = i;
                last = i;
            }
        assert_strux_ok(strux_rates_midpoint(n, u, g, vs, V, L, &mid));
        assert_true(fabs(mid - V * 0.5 * (first + last) / (GRID - 1)) <= 2.0 * V / (GRID - 1));
    }
    /* a lower bound above the model: nothing to take a centre of */
    double u[2] = {1, 2}, g[2] = {0, -1}, vs[2] = {0, 0}, v, z;
    assert_int_equal(strux_rates_center(2, u, g, vs, 1, 1.5, &v, &z), STRUX_ERR_NUMERIC);
    assert_int_equal(strux_rates_midpoint(2, u, g, vs, 1, 1.5, &v), STRUX_ERR_NUMERIC);
    strux_error_clear();
    strux_free(&h);
}

static void test_bias_min_and_center(void **state)
{
    (void)state;
    uint64_t st = 23;
    double *h = NULL, *neg = NULL;
    assert_strux_ok(strux_alloc_array(&h, GRID, sizeof *h));
    assert_strux_ok(strux_alloc_array(&neg, GRID, sizeof *neg));
    for (int it = 0; it < 150; it++) {
        double w = urand(&st) < 0.3 ? 600 : 0.5 + 5 * urand(&st), lo = -w, hi = w;
        double l[16], g[16], bs[16], nl[16], ng[16];
        int n = draw(&st, lo, hi, l, g, bs);
        for (int s = 0; s < n; s++) { /* the convex model max_s l_s + g_s (b − b_s) */
            nl[s] = -l[s];
            ng[s] = -g[s];
        }
        scan_min(n, nl, ng, bs, lo, hi, neg);
        double best = INFINITY, top = -INFINITY;
        for (int i = 0; i < GRID; i++) {
            h[i] = -neg[i];
            best = fmin(best, h[i]);
            top = fmax(top, h[i]);
        }
        double b, val, tol = 1e-9 * fmax(1, fabs(best));
        assert_strux_ok(strux_rates_bias_min(n, l, g, bs, lo, hi, &b, &val));
        double step = (hi - lo) / (GRID - 1), gmax = 0;
        for (int s = 0; s < n; s++)
            gmax = fmax(gmax, fabs(g[s]));
        double slack = 2 * gmax * step + tol; /* how far the grid may miss a kink */
        assert_true(val <= best + tol && val >= best - slack);
        int first = -1, last = -1; /* the grid's minimisers, within the grid's resolution */
        for (int i = 0; i < GRID; i++)
            if (h[i] <= best + slack) {
                if (first < 0) first = i;
                last = i;
            }
        assert_true(b >= lo + step * first - 2 * step && b <= lo + step * last + 2 * step);
        if (top - best < 1e-3) continue;
        double U = best + (0.05 + 0.9 * urand(&st)) * (top - best), cb, cz, zb, zz;
        scan_centroid(neg, lo, hi, -U, &cb, &cz); /* the mirror image of {h' ≤ z ≤ U} */
        assert_strux_ok(strux_rates_bias_center(n, l, g, bs, lo, hi, U, &zb, &zz));
        assert_true(fabs(zb - cb) <= 1e-6 * (hi - lo));
        assert_true(fabs(zz + cz) <= 1e-6 * (U - best));
    }
    strux_free(&h);
    strux_free(&neg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_center_and_midpoint),
                                       cmocka_unit_test(test_bias_min_and_center)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
