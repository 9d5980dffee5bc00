/* tests/unit/test_lp.c - the GLPK wrapper against hand-solved LPs: a 2-variable LP with a known
 * vertex, an infeasible and an unbounded LP, a row toggled between FREE and active (with warm
 * starts), changed row coefficients, objective-only updates that need no pivots, fresh starts,
 * the argument checks that keep GLPK from aborting, and the integer solve (fractional LP vertex,
 * integral one, no integer point, infeasible relaxation); a problem rebuilt after strux_lp_reset
 * and solved from a start at a given vertex (strux_lp_start_at), feasible or not. */
#include "test_common.h"

#include "strux/lp.h"

#include <math.h>

/* max 3x + 5y  s.t.  x ≤ 4,  2y ≤ 12,  3x + 2y ≤ 18,  x, y ≥ 0  → (2, 6), value 36 */
static strux_lp *wyndor(void)
{
    strux_lp *lp;
    assert_strux_ok(strux_lp_create(2, &lp));
    const int32_t x[1] = {0}, y[1] = {1}, xy[2] = {0, 1};
    const double one[1] = {1}, two[1] = {2}, c32[2] = {3, 2};
    assert_strux_ok(strux_lp_add_row(lp, 1, x, one, STRUX_LP_UPPER, 0, 4, NULL));
    assert_strux_ok(strux_lp_add_row(lp, 1, y, two, STRUX_LP_UPPER, 0, 12, NULL));
    assert_strux_ok(strux_lp_add_row(lp, 2, xy, c32, STRUX_LP_UPPER, 0, 18, NULL));
    const double c[2] = {3, 5};
    strux_lp_set_objective(lp, c, 0);
    return lp;
}

static void expect_optimum(strux_lp *lp, double value, double x0, double x1)
{
    strux_lp_result res;
    double v, x[2];
    assert_strux_ok(strux_lp_solve(lp, &res, &v));
    assert_int_equal(res, STRUX_LP_OPTIMAL);
    assert_close(v, value, 1e-12);
    strux_lp_primal(lp, x);
    assert_close(x[0], x0, 1e-12);
    assert_close(x[1], x1, 1e-12);
}

static void test_known_vertex(void **state)
{
    (void)state;
    strux_lp *lp = wyndor();
    assert_int_equal(strux_lp_n_cols(lp), 2);
    assert_int_equal(strux_lp_n_rows(lp), 3);
    expect_optimum(lp, 36, 2, 6);
    /* the constant c0 shifts the value only */
    const double c[2] = {3, 5};
    strux_lp_set_objective(lp, c, -36);
    expect_optimum(lp, 0, 2, 6);
    strux_lp_destroy(&lp);
    assert_null(lp);
}

static void test_infeasible_and_unbounded(void **state)
{
    (void)state;
    strux_lp *lp;
    assert_strux_ok(strux_lp_create(2, &lp));
    assert_strux_ok(strux_lp_set_col_bounds(lp, 0, STRUX_LP_DOUBLE, 0, 1));
    assert_strux_ok(strux_lp_set_col_bounds(lp, 1, STRUX_LP_DOUBLE, 0, 1));
    const int32_t xy[2] = {0, 1};
    const double ones[2] = {1, 1}, c[2] = {1, 1};
    assert_strux_ok(strux_lp_add_row(lp, 2, xy, ones, STRUX_LP_LOWER, 5, 0, NULL));
    strux_lp_set_objective(lp, c, 0);
    strux_lp_result res;
    double v;
    assert_strux_ok(strux_lp_solve(lp, &res, &v));
    assert_int_equal(res, STRUX_LP_INFEASIBLE); /* x + y ≤ 2 < 5 */
    strux_lp_destroy(&lp);

    assert_strux_ok(strux_lp_create(1, &lp)); /* max x, x ≥ 0 */
    const double one[1] = {1};
    strux_lp_set_objective(lp, one, 0);
    assert_strux_ok(strux_lp_solve(lp, &res, &v));
    assert_int_equal(res, STRUX_LP_UNBOUNDED);
    strux_lp_destroy(&lp);
}

static void test_toggled_row(void **state)
{
    (void)state;
    strux_lp *lp = wyndor();
    const int32_t xy[2] = {0, 1};
    const double ones[2] = {1, 1};
    int32_t r;
    assert_strux_ok(strux_lp_add_row(lp, 2, xy, ones, STRUX_LP_FREE, 0, 0, &r));
    assert_int_equal(r, 3);
    expect_optimum(lp, 36, 2, 6); /* a FREE row constrains nothing */
    /* x + y ≤ 7: vertices (1, 6) → 33, (4, 3) → 27, (0, 6) → 30 */
    assert_strux_ok(strux_lp_set_row_bounds(lp, r, STRUX_LP_UPPER, 0, 7));
    expect_optimum(lp, 33, 1, 6);
    assert_strux_ok(strux_lp_set_row_bounds(lp, r, STRUX_LP_FREE, 0, 0));
    expect_optimum(lp, 36, 2, 6);
    /* x + y ≥ 100 cannot hold */
    assert_strux_ok(strux_lp_set_row_bounds(lp, r, STRUX_LP_LOWER, 100, 0));
    strux_lp_result res;
    double v;
    assert_strux_ok(strux_lp_solve(lp, &res, &v));
    assert_int_equal(res, STRUX_LP_INFEASIBLE);
    /* x + 2y ≤ 7: (4, 1.5) → 19.5 beats (0, 3.5) → 17.5 */
    const double c12[2] = {1, 2};
    assert_strux_ok(strux_lp_set_row(lp, r, 2, xy, c12));
    assert_strux_ok(strux_lp_set_row_bounds(lp, r, STRUX_LP_UPPER, 0, 7));
    expect_optimum(lp, 19.5, 4, 1.5);
    /* x + 2y = 7 as an equality keeps the same vertex */
    assert_strux_ok(strux_lp_set_row_bounds(lp, r, STRUX_LP_FIXED, 7, 0));
    expect_optimum(lp, 19.5, 4, 1.5);
    strux_lp_destroy(&lp);
}

static void test_warm_start(void **state)
{
    (void)state;
    strux_lp *lp = wyndor();
    expect_optimum(lp, 36, 2, 6);
    int64_t it = strux_lp_iterations(lp);
    assert_true(it > 0);
    expect_optimum(lp, 36, 2, 6); /* same problem: the basis is already optimal */
    assert_int_equal(strux_lp_iterations(lp), it);
    /* objective-only change: max 3x + y moves to (4, 3) (value 15) from the old basis */
    const double c[2] = {3, 1};
    strux_lp_set_objective(lp, c, 0);
    expect_optimum(lp, 15, 4, 3);
    assert_true(strux_lp_iterations(lp) - it <= 2);
    strux_lp_destroy(&lp);
    /* fresh starts: every solve repeats the pivots of a solve from scratch */
    lp = wyndor();
    strux_lp_set_fresh_start(lp, 1);
    expect_optimum(lp, 36, 2, 6);
    it = strux_lp_iterations(lp);
    expect_optimum(lp, 36, 2, 6);
    assert_int_equal(strux_lp_iterations(lp), 2 * it);
    strux_lp_destroy(&lp);
}

/* max x + y  s.t.  x − y ≤ 0.5,  0 ≤ x, y ≤ 1  → (1, 1), value 2, the row inactive */
static void build_box(strux_lp *lp)
{
    const int32_t xy[2] = {0, 1};
    const double a[2] = {1, -1}, ones[2] = {1, 1};
    assert_strux_ok(strux_lp_set_col_bounds(lp, 0, STRUX_LP_DOUBLE, 0, 1));
    assert_strux_ok(strux_lp_set_col_bounds(lp, 1, STRUX_LP_DOUBLE, 0, 1));
    assert_strux_ok(strux_lp_add_row(lp, 2, xy, a, STRUX_LP_UPPER, 0, 0.5, NULL));
    strux_lp_set_objective(lp, ones, 0);
}

static void test_reset_and_start_at(void **state)
{
    (void)state;
    strux_lp *lp = wyndor(); /* 2 columns at most */
    expect_optimum(lp, 36, 2, 6);
    assert_strux_ok(strux_lp_reset(lp, 2));
    assert_int_equal(strux_lp_n_rows(lp), 0);
    build_box(lp);
    expect_optimum(lp, 2, 1, 1); /* the standard basis */
    /* a start at the optimal vertex: no pivot */
    assert_strux_ok(strux_lp_reset(lp, 2));
    build_box(lp);
    const double at[2] = {1, 1};
    strux_lp_start_at(lp, at);
    int64_t it = strux_lp_iterations(lp);
    expect_optimum(lp, 2, 1, 1);
    assert_int_equal(strux_lp_iterations(lp), it);
    /* from the feasible (0, 1) and the infeasible (1, 0) (x − y = 1 > 0.5) as well */
    const double starts[2][2] = {{0, 1}, {1, 0}};
    for (int k = 0; k < 2; k++) {
        assert_strux_ok(strux_lp_reset(lp, 2));
        build_box(lp);
        strux_lp_start_at(lp, starts[k]);
        expect_optimum(lp, 2, 1, 1);
    }
    /* one column: max x, x ≤ 1 */
    assert_strux_ok(strux_lp_reset(lp, 1));
    assert_int_equal(strux_lp_n_cols(lp), 1);
    assert_strux_ok(strux_lp_set_col_bounds(lp, 0, STRUX_LP_DOUBLE, 0, 1));
    const double one[1] = {1};
    strux_lp_set_objective(lp, one, 0);
    strux_lp_result res;
    double v;
    assert_strux_ok(strux_lp_solve(lp, &res, &v));
    assert_close(v, 1, 1e-12);
    assert_strux_fails(strux_lp_reset(lp, 3), STRUX_ERR_INTERNAL, "outside [1, 2]");
    strux_lp_destroy(&lp);
}

static void test_argument_checks(void **state)
{
    (void)state;
    strux_lp *lp = wyndor();
    const int32_t dup[2] = {1, 1}, bad[1] = {2};
    const double v2[2] = {1, 1}, nan1[1] = {NAN};
    assert_strux_fails(strux_lp_add_row(lp, 2, dup, v2, STRUX_LP_UPPER, 0, 1, NULL),
                       STRUX_ERR_INTERNAL, "column 1 appears twice");
    assert_strux_fails(strux_lp_add_row(lp, 1, bad, v2, STRUX_LP_UPPER, 0, 1, NULL),
                       STRUX_ERR_INTERNAL, "column 2 outside [0, 2)");
    assert_strux_fails(strux_lp_set_row_bounds(lp, 0, STRUX_LP_DOUBLE, 1, 1), STRUX_ERR_LP,
                       "double bound needs lo < hi");
    assert_strux_fails(strux_lp_set_row_bounds(lp, 9, STRUX_LP_FREE, 0, 0), STRUX_ERR_INTERNAL,
                       "LP row 9 outside [0, 3)");
    assert_strux_fails(strux_lp_set_col_bounds(lp, 0, STRUX_LP_LOWER, INFINITY, 0), STRUX_ERR_LP,
                       "is not finite");
    const int32_t x[1] = {0};
    assert_strux_fails(strux_lp_set_row(lp, 0, 1, x, nan1), STRUX_ERR_NUMERIC,
                       "coefficient of column 0 is nan");
    assert_int_equal(strux_lp_n_rows(lp), 3); /* nothing was added */
    expect_optimum(lp, 36, 2, 6);
    strux_lp_destroy(&lp);
}

/* Integer solve: max 5x + 4y s.t. 6x + 4y ≤ 24, x + 2y ≤ 6: the LP optimum (3, 1.5) = 21 is
 * fractional, the integer one is (4, 0) = 20 (by hand over the 12 integer points); afterwards the
 * LP is the LP again. 2x = 1 has an LP point but no integer one. */
static void test_integer(void **state)
{
    (void)state;
    strux_lp *lp;
    assert_strux_ok(strux_lp_create(2, &lp));
    const int32_t xy[2] = {0, 1}, x0[1] = {0};
    const double r1[2] = {6, 4}, r2[2] = {1, 2}, c[2] = {5, 4}, two[1] = {2};
    assert_strux_ok(strux_lp_add_row(lp, 2, xy, r1, STRUX_LP_UPPER, 0, 24, NULL));
    assert_strux_ok(strux_lp_add_row(lp, 2, xy, r2, STRUX_LP_UPPER, 0, 6, NULL));
    strux_lp_set_objective(lp, c, 0);
    strux_lp_result res;
    double v, x[2];
    /* without a previous LP solve, then after one */
    for (int pass = 0; pass < 2; pass++) {
        if (pass) expect_optimum(lp, 21, 3, 1.5);
        assert_strux_ok(strux_lp_solve_integer(lp, &res, &v, x));
        assert_int_equal(res, STRUX_LP_OPTIMAL);
        assert_close(v, 20, 1e-12);
        assert_close(x[0], 4, 1e-12);
        assert_true(x[1] == 0);
    }
    expect_optimum(lp, 21, 3, 1.5);
    /* a changed objective is picked up: max x + 3y → LP (0, 3) = 9 is integral */
    const double c2[2] = {1, 3};
    strux_lp_set_objective(lp, c2, 0);
    assert_strux_ok(strux_lp_solve_integer(lp, &res, &v, NULL));
    assert_int_equal(res, STRUX_LP_OPTIMAL);
    assert_close(v, 9, 1e-12);
    /* an added row that only fractional points meet */
    assert_strux_ok(strux_lp_add_row(lp, 1, x0, two, STRUX_LP_FIXED, 1, 1, NULL));
    expect_optimum(lp, 8.75, 0.5, 2.75);
    assert_strux_ok(strux_lp_solve_integer(lp, &res, &v, x));
    assert_int_equal(res, STRUX_LP_INFEASIBLE);
    /* an infeasible relaxation is reported as such */
    assert_strux_ok(strux_lp_set_col_bounds(lp, 0, STRUX_LP_DOUBLE, 0.75, 1));
    assert_strux_ok(strux_lp_solve_integer(lp, &res, &v, x));
    assert_int_equal(res, STRUX_LP_INFEASIBLE);
    strux_lp_destroy(&lp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_vertex),       cmocka_unit_test(test_infeasible_and_unbounded),
        cmocka_unit_test(test_toggled_row),        cmocka_unit_test(test_warm_start),
        cmocka_unit_test(test_argument_checks),    cmocka_unit_test(test_integer),
        cmocka_unit_test(test_reset_and_start_at),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
