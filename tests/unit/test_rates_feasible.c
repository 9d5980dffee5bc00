/* tests/unit/test_rates_feasible.c - the infeasibility check over the cells of the dataset
 * partition (src/solvers/rates_feasible.c; issue 15 "Bad input"): the issue's example message and
 * its mirror image, a constraint impossible on its own, both sides holding rates, a constant
 * left side, precision and F1 bounds (best ratio by hand), a feasible set; 300 small random
 * instances against enumeration of every vertex of the cell-share polytope (first failing
 * constraint and the best value of its left side); cell counting and the cap on cell subsets. */
#include "test_common.h"

#include "solvers/rates.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "strux/subsets.h"

typedef struct world {
    strux_subset_defs *d;
    strux_rates_expr *e[8];
    int32_t m;
} world;

static void world_init(world *w, int n_groups)
{
    memset(w, 0, sizeof *w);
    assert_strux_ok(strux_subset_defs_create(&w->d));
    static const char *const names[] = {"female", "male", "S2", "S3"};
    for (int g = 0; g < n_groups; g++) {
        char def[32];
        snprintf(def, sizeof def, "feature %d > 0", g + 1);
        assert_strux_ok(strux_subset_define(w->d, names[g], def, "t.ini:1"));
    }
    assert_strux_ok(strux_subset_check(w->d));
}

static void world_add(world *w, const char *name, const char *text)
{
    char origin[32];
    snprintf(origin, sizeof origin, "t.ini:%d", (int)w->m + 2);
    assert_strux_ok(strux_rates_parse(w->d, name, text, origin, 0, &w->e[w->m++]));
}

static void world_free(world *w)
{
    for (int32_t j = 0; j < w->m; j++)
        strux_rates_expr_destroy(&w->e[j]);
    strux_subset_defs_destroy(&w->d);
}

/* The population of the hand-made cases: 200 labelled rows in 4 groups of 50, (female, +1),
 * (female, -1), (male, +1), (male, -1); a 4-row dataset holds one row per group. */
#define GROUP 50
static const int8_t group_label[4] = {1, -1, 1, -1};

static strux_dataset *groups(void)
{
    strux_csr x;
    assert_strux_ok(strux_csr_alloc(&x, 4, 2, 4));
    for (int r = 0; r < 4; r++) {
        x.col[r] = r < 2 ? 0 : 1; /* feature 1: female, feature 2: male */
        x.val[r] = 1;
        x.ptr[r + 1] = r + 1;
    }
    int64_t *y_ptr;
    int32_t *y_idx;
    assert_strux_ok(strux_alloc_array(&y_ptr, 5, sizeof *y_ptr));
    assert_strux_ok(strux_alloc_array(&y_idx, 1, sizeof *y_idx));
    strux_dataset *ds;
    assert_strux_ok(strux_dataset_from_arrays("groups", &x, &y_ptr, &y_idx, 4, 0, 2, 2, 0, &ds));
    return ds;
}

/* Cells over the subsets the constraints use, counted on the 4 group rows (50 rows each), then
 * the check. */
static strux_status check(world *w, int32_t *failed, double *best)
{
    int32_t sets[64], n_sets;
    assert_strux_ok(
        strux_rates_cell_sets((const strux_rates_expr *const *)w->e, w->m, w->d, sets, &n_sets));
    assert_true(n_sets <= 8 && strux_subset_count(w->d) <= 64);
    strux_dataset *ds = groups();
    strux_subset_input in = {.ds = ds, .label = group_label};
    uint8_t m[64][4];
    const uint8_t *member[8];
    int64_t count[1 << 8] = {0}, n[64] = {0};
    for (int32_t k = 0; k < strux_subset_count(w->d); k++) {
        assert_strux_ok(strux_subset_eval(w->d, k, &in, m[k]));
        for (int r = 0; r < 4; r++)
            n[k] += GROUP * m[k][r];
    }
    for (int32_t b = 0; b < n_sets; b++)
        member[b] = m[sets[b]];
    strux_rates_cell_count(n_sets, member, 4, count);
    for (uint32_t p = 0; p < (1u << n_sets); p++)
        count[p] *= GROUP;
    strux_dataset_destroy(&ds);
    strux_rates_cells cells = {.n_sets = n_sets, .sets = sets, .count = count};
    return strux_rates_feasible((const strux_rates_expr *const *)w->e, w->m, w->d, n, &cells,
                                failed, best);
}

static void expect_infeasible(world *w, int32_t failed_want, double best_want, const char *msg)
{
    int32_t failed;
    double best;
    assert_strux_fails(check(w, &failed, &best), STRUX_ERR_CONFIG, msg);
    assert_int_equal(failed, failed_want);
    assert_close(best, best_want, 1e-8); /* bisection for ratios */
    strux_error_clear();
}

static void test_issue_example(void **state)
{
    (void)state;
    world w;
    world_init(&w, 2);
    world_add(&w, "cov_all", "coverage(all) <= 0.315");
    world_add(&w, "cov_female", "coverage(female) >= 0.9");
    expect_infeasible(&w, 1, 0.63,
                      "t.ini:3: constraint cov_female (coverage(female) >= 0.9) cannot hold "
                      "together with cov_all on the training data: coverage(female) reaches at "
                      "most 0.630");
    world_free(&w);
    /* the other order: coverage(all) ≥ 90/200 */
    world_init(&w, 2);
    world_add(&w, "cov_female", "coverage(female) >= 0.9");
    world_add(&w, "fair", "positive_rate(male) >= 0.8 * positive_rate(female)");
    world_add(&w, "cov_all", "coverage(all) <= 0.315");
    expect_infeasible(&w, 2, 0.81,
                      "t.ini:4: constraint cov_all (coverage(all) <= 0.315) cannot hold together "
                      "with cov_female, fair on the training data: coverage(all) reaches at least "
                      "0.810");
    world_free(&w);
}

static void test_other_shapes(void **state)
{
    (void)state;
    world w;
    /* impossible alone */
    world_init(&w, 2);
    world_add(&w, "big", "coverage(female) >= 1.2");
    expect_infeasible(&w, 0, 1,
                      "t.ini:2: constraint big (coverage(female) >= 1.2) cannot hold on the "
                      "training data: coverage(female) reaches at most 1.000");
    world_free(&w);
    /* rates on both sides: LHS − RHS; a constant left side: the right side */
    world_init(&w, 2);
    world_add(&w, "hi", "0.6 <= coverage(male)");
    world_add(&w, "p_rule", "positive_rate(male) <= 0.5 * positive_rate(female)");
    expect_infeasible(&w, 1, 0.1,
                      "constraint p_rule (positive_rate(male) <= 0.5 * positive_rate(female)) "
                      "cannot hold together with hi on the training data: positive_rate(male) - "
                      "(0.5 * positive_rate(female)) reaches at least 0.100");
    world_free(&w);
    world_init(&w, 2);
    world_add(&w, "low", "coverage(all) <= 0.2");
    world_add(&w, "hi", "0.6 <= coverage(male)");
    expect_infeasible(&w, 1, 0.4,
                      "constraint hi (0.6 <= coverage(male)) cannot hold together with low on "
                      "the training data: coverage(male) reaches at most 0.400");
    world_free(&w);
    /* precision and F1 (labelled rows: 100 positive, 100 negative): with at least 160 of 200
     * predicted positive, precision ≤ 100/160 and F1 ≤ 200/(200 + 60) */
    world_init(&w, 2);
    world_add(&w, "cov", "coverage(all) >= 0.8");
    world_add(&w, "prec", "precision(labeled) >= 0.9");
    expect_infeasible(&w, 1, 0.625,
                      "constraint prec (precision(labeled) >= 0.9) cannot hold together with cov "
                      "on the training data: precision(labeled) reaches at most 0.625");
    world_free(&w);
    world_init(&w, 2);
    world_add(&w, "cov", "coverage(all) >= 0.8");
    world_add(&w, "f1", "0.9 <= f1(labeled)");
    expect_infeasible(&w, 1, 200.0 / 260.0,
                      "constraint f1 (0.9 <= f1(labeled)) cannot hold together with cov on the "
                      "training data: f1(labeled) reaches at most 0.769");
    world_free(&w);
    /* all can hold, helpers included */
    world_init(&w, 2);
    world_add(&w, "cov", "coverage(all) >= 0.5");
    world_add(&w, "p_rule", "positive_rate(male) <= 1.25 * positive_rate(female)");
    world_add(&w, "eq_opp", "tpr(female) >= 0.8 * tpr(male)");
    world_add(&w, "prec", "precision(female) >= 0.5");
    world_add(&w, "err", "error_rate(labeled) <= 0.5");
    int32_t failed;
    double best;
    assert_strux_ok(check(&w, &failed, &best));
    assert_int_equal(failed, -1);
    world_free(&w);
}

/* ---- random instances against vertex enumeration ---- */

#define MAXC 5  /* non-empty cells */
#define MAXR 16 /* constraints of the polytope: 2 per cell + rows */

typedef struct poly {
    int nc, nr;
    double a[MAXR][MAXC], b[MAXR]; /* a·x ≤ b */
} poly;

/* Solve the k×k system of the chosen rows; 0 if singular. */
static int solve(const poly *P, const int *pick, double *x)
{
    int k = P->nc;
    double A[MAXC][MAXC + 1];
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < k; j++)
            A[i][j] = P->a[pick[i]][j];
        A[i][k] = P->b[pick[i]];
    }
    for (int c = 0; c < k; c++) {
        int piv = c;
        for (int i = c + 1; i < k; i++)
            if (fabs(A[i][c]) > fabs(A[piv][c])) piv = i;
        if (fabs(A[piv][c]) < 1e-10) return 0;
        for (int j = 0; j <= k; j++) {
            double t = A[c][j];
            A[c][j] = A[piv][j];
            A[piv][j] = t;
        }
        for (int i = 0; i < k; i++) {
            if (i == c) continue;
            double f = A[i][c] / A[c][c];
            for (int j = c; j <= k; j++)
                A[i][j] -= f * A[c][j];
        }
    }
    for (int i = 0; i < k; i++)
        x[i] = A[i][k] / A[i][i];
    return 1;
}

/* min (sign −1) or max (sign +1) of coef·x + c0 over the vertices of P. */
static double vertex_best(const poly *P, const double *coef, double c0, int sign)
{
    int pick[MAXC];
    double best = sign > 0 ? -INFINITY : INFINITY, x[MAXC];
    int k = P->nc;
    for (int i = 0; i < k; i++)
        pick[i] = i;
    for (;;) {
        if (solve(P, pick, x)) {
            int ok = 1;
            for (int r = 0; r < P->nr && ok; r++) {
                double s = 0;
                for (int j = 0; j < k; j++)
                    s += P->a[r][j] * x[j];
                ok = s <= P->b[r] + 1e-9;
            }
            if (ok) {
                double v = c0;
                for (int j = 0; j < k; j++)
                    v += coef[j] * x[j];
                best = sign > 0 ? fmax(best, v) : fmin(best, v);
            }
        }
        int i = k - 1;
        while (i >= 0 && pick[i] == P->nr - k + i)
            i--;
        if (i < 0) break;
        pick[i]++;
        for (int j = i + 1; j < k; j++)
            pick[j] = pick[j - 1] + 1;
    }
    return best;
}

static void test_random_vs_vertices(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 15, 4, 0);
    int checked_fail = 0, checked_ok = 0;
    for (int t = 0; t < 300; t++) {
        world w;
        world_init(&w, 3);
        int32_t S[3] = {strux_subset_find(w.d, "female"), strux_subset_find(w.d, "male"),
                        strux_subset_find(w.d, "S2")};
        /* cells over (female, male, S2): at most MAXC non-empty, every group non-empty */
        int64_t count[8];
        int64_t n[64] = {0};
        for (;;) {
            int nonempty = 0;
            for (int p = 0; p < 8; p++) {
                count[p] = strux_rng_below(&rng, 2) ? 1 + (int64_t)strux_rng_below(&rng, 5) : 0;
                nonempty += count[p] > 0;
            }
            int64_t g[3] = {0, 0, 0};
            for (int p = 0; p < 8; p++)
                for (int b = 0; b < 3; b++)
                    g[b] += (p >> b & 1) * count[p];
            if (nonempty >= 1 && nonempty <= MAXC && g[0] && g[1] && g[2]) break;
        }
        for (int p = 0; p < 8; p++) {
            for (int b = 0; b < 3; b++)
                if (p >> b & 1) n[S[b]] += count[p];
            n[STRUX_SUBSET_ALL] += count[p];
        }
        w.m = 0;
        int m = 1 + (int)strux_rng_below(&rng, 3);
        static const char *const names[] = {"female", "male", "S2"};
        for (int j = 0; j < m; j++) {
            char text[256] = "", name[16];
            int k = 1 + (int)strux_rng_below(&rng, 3);
            for (int i = 0; i < k; i++) {
                size_t len = strlen(text);
                snprintf(text + len, sizeof text - len, "%s%.3f * %s(%s)", i ? " + " : "",
                         4 * strux_rng_uniform(&rng) - 2,
                         strux_rng_below(&rng, 2) ? "positive_rate" : "negative_rate",
                         names[strux_rng_below(&rng, 3)]);
            }
            size_t len = strlen(text);
            snprintf(text + len, sizeof text - len, " %s %.3f",
                     strux_rng_below(&rng, 2) ? "<=" : ">=", 3 * strux_rng_uniform(&rng) - 1);
            snprintf(name, sizeof name, "c%d", j);
            world_add(&w, name, text);
        }
        /* the polytope: box rows, then canonical rows as they enter */
        int col_of[8], nc = 0, pat[MAXC];
        for (int p = 0; p < 8; p++) {
            col_of[p] = count[p] ? nc : -1;
            if (count[p]) pat[nc++] = p;
        }
        poly P = {.nc = nc};
        for (int c = 0; c < nc; c++) {
            P.a[P.nr][c] = -1, P.b[P.nr++] = 0;
            P.a[P.nr][c] = 1, P.b[P.nr++] = 1;
        }
        int want_failed = -1, ambiguous = 0;
        double want_best = NAN;
        for (int j = 0; j < m && want_failed < 0 && !ambiguous; j++) {
            strux_rates_row row;
            assert_strux_ok(strux_rates_canonical(w.e[j], w.d, n, &row));
            /* coefficients of the row and of the LHS in x, by evaluating at 0 and unit vectors */
            double coef[MAXC], lcoef[MAXC], c0 = 0, l0 = 0;
            for (int c = -1; c < nc; c++) {
                double s_p[64] = {0};
                for (int b = 0; b < 3; b++) {
                    if (c >= 0 && (pat[c] >> b & 1)) s_p[S[b]] = (double)count[pat[c]] / n[S[b]];
                }
                double v = strux_rates_row_value(&row, s_p) - row.gamma;
                double l = strux_rates_linear_value(&w.e[j]->lhs, n, s_p);
                if (c < 0) {
                    c0 = v, l0 = l;
                } else {
                    coef[c] = v - c0, lcoef[c] = l - l0;
                }
            }
            double lowest = vertex_best(&P, coef, c0, -1);
            if (fabs(lowest) < 1e-6) {
                ambiguous = 1;
            } else if (lowest > 0) {
                want_failed = j;
                want_best = vertex_best(&P, lcoef, l0, w.e[j]->sense < 0 ? 1 : -1);
            } else {
                for (int c = 0; c < nc; c++)
                    P.a[P.nr][c] = coef[c];
                P.b[P.nr++] = -c0;
            }
            strux_rates_row_free(&row);
        }
        (void)col_of;
        int32_t sets[3] = {S[0], S[1], S[2]};
        strux_rates_cells cells = {.n_sets = 3, .sets = sets, .count = count};
        int32_t failed;
        double best;
        strux_status st = strux_rates_feasible((const strux_rates_expr *const *)w.e, w.m, w.d, n,
                                               &cells, &failed, &best);
        if (!ambiguous) {
            assert_int_equal(failed, want_failed);
            assert_int_equal(st, want_failed < 0 ? STRUX_OK : STRUX_ERR_CONFIG);
            if (want_failed >= 0) {
                assert_close(best, want_best, 1e-7);
                checked_fail++;
            } else {
                checked_ok++;
            }
        }
        strux_error_clear();
        world_free(&w);
    }
    /* both outcomes were exercised often */
    assert_true(checked_fail > 50 && checked_ok > 50);
}

static void test_cells(void **state)
{
    (void)state;
    const uint8_t a[6] = {1, 0, 1, 1, 0, 0}, b[6] = {0, 0, 1, 1, 1, 0};
    const uint8_t *member[2] = {a, b};
    int64_t count[4] = {0, 0, 0, 0};
    strux_rates_cell_count(2, member, 6, count);
    strux_rates_cell_count(2, member, 2, count); /* adds */
    assert_int_equal(count[0], 3);
    assert_int_equal(count[1], 2);
    assert_int_equal(count[2], 1);
    assert_int_equal(count[3], 2);
    /* cell subsets: each term's set and a ratio helper's D+ and D-, ascending, at most 20 */
    world w;
    world_init(&w, 2);
    world_add(&w, "a", "tpr(male) >= 0.5 * coverage(female)");
    world_add(&w, "b", "precision(labeled) >= 0.5");
    int32_t sets[64], n_sets;
    assert_strux_ok(
        strux_rates_cell_sets((const strux_rates_expr *const *)w.e, w.m, w.d, sets, &n_sets));
    assert_int_equal(n_sets, 4);
    assert_int_equal(sets[0], STRUX_SUBSET_POSITIVE);
    assert_int_equal(sets[1], STRUX_SUBSET_NEGATIVE);
    assert_int_equal(sets[2], strux_subset_find(w.d, "female"));
    assert_string_equal(strux_subset_name(w.d, sets[3]), "male & positive");
    world_free(&w);
    world_init(&w, 0);
    char text[2048] = "", def[32];
    for (int g = 0; g < 21; g++) {
        snprintf(def, sizeof def, "g%d", g);
        char feat[32];
        snprintf(feat, sizeof feat, "feature %d > 0", g + 1);
        assert_strux_ok(strux_subset_define(w.d, def, feat, "t.ini:1"));
        size_t len = strlen(text);
        snprintf(text + len, sizeof text - len, "%scoverage(%s)", g ? " + " : "", def);
    }
    strcat(text, " <= 1");
    world_add(&w, "wide", text);
    assert_strux_fails(
        strux_rates_cell_sets((const strux_rates_expr *const *)w.e, w.m, w.d, sets, &n_sets),
        STRUX_ERR_CONFIG,
        "the constraints use 21 datasets; the feasibility check partitions the "
        "data by at most 20");
    strux_error_clear();
    world_free(&w);
}

/* Every allocation of parse, canonical, print and the check fails in turn: NOMEM comes back and
 * nothing leaks (STYLE.md §10). */
static strux_status alloc_scenario(void)
{
    strux_subset_defs *d = NULL;
    strux_rates_expr *e[3] = {NULL, NULL, NULL};
    strux_rates_row row = {0};
    char *text = NULL;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_subset_defs_create(&d), done);
    STRUX_TRY_GOTO(st, strux_subset_define(d, "female", "feature 1 > 0", "t:1"), done);
    STRUX_TRY_GOTO(st, strux_subset_define(d, "male", "feature 2 > 0", "t:2"), done);
    STRUX_TRY_GOTO(
        st,
        strux_rates_parse(d, "a", "error_rate(female) - 0.5 * tpr(male) <= 0.3", "t:3", 0, &e[0]),
        done);
    STRUX_TRY_GOTO(st, strux_rates_parse(d, "b", "churn(all, female) <= 0.9", "t:4", 0, &e[1]),
                   done);
    STRUX_TRY_GOTO(st, strux_rates_parse(d, "c", "precision(male) >= 0.99", "t:5", 0, &e[2]), done);
    /* sizes: one row per (sex, label) group, as in the hand-made cases */
    int64_t n[64] = {0};
    n[STRUX_SUBSET_ALL] = n[STRUX_SUBSET_LABELED] = 4;
    for (int32_t k = STRUX_SUBSET_POSITIVE; k < strux_subset_count(d); k++)
        n[k] = 2;
    for (int32_t k = 0; k < strux_subset_count(d); k++)
        if (strchr(strux_subset_name(d, k), '&') || strchr(strux_subset_name(d, k), '-')) n[k] = 1;
    STRUX_TRY_GOTO(st, strux_rates_canonical(e[0], d, n, &row), done);
    STRUX_TRY_GOTO(st, strux_rates_print(&row, d, &text), done);
    int32_t sets[64], n_sets, failed;
    double best;
    STRUX_TRY_GOTO(
        st, strux_rates_cell_sets((const strux_rates_expr *const *)e, 3, d, sets, &n_sets), done);
    int64_t count[1 << 10] = {0};
    for (uint32_t p = 0; p < (1u << n_sets); p++)
        count[p] = 1;
    strux_rates_cells cells = {.n_sets = n_sets, .sets = sets, .count = count};
    st = strux_rates_feasible((const strux_rates_expr *const *)e, 3, d, n, &cells, &failed, &best);
    if (st == STRUX_ERR_CONFIG) st = STRUX_OK; /* the made-up counts may well be infeasible */
done:
    strux_free(&text);
    strux_rates_row_free(&row);
    for (int j = 0; j < 3; j++)
        strux_rates_expr_destroy(&e[j]);
    strux_subset_defs_destroy(&d);
    return st;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    size_t before = strux_alloc_bytes();
    int64_t k;
    for (k = 0;; k++) {
        strux_alloc_fail_after(k);
        strux_status st = alloc_scenario();
        strux_alloc_fail_after(-1);
        assert_int_equal(strux_alloc_bytes(), before);
        if (st == STRUX_OK) break;
        assert_int_equal(st, STRUX_ERR_NOMEM);
    }
    assert_true(k > 30);
    strux_error_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_example),       cmocka_unit_test(test_other_shapes),
        cmocka_unit_test(test_random_vs_vertices),  cmocka_unit_test(test_cells),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
