/* tests/unit/test_rates_expr.c - rate expressions (src/solvers/rates.h; dataset_constraints.md
 * §1.4-§1.6): every helper's expansion against the rate computed directly from labels, groups
 * and baseline on a 16-row labelled set for random 0/1 predictions (canonical left side minus γ
 * equals ±(LHS − RHS), and for precision/F1 the multiplied-through ratio); the spec's worked
 * encodings; canonical round trips (parse → canonical → print → parse → canonical gives the same
 * table) and the §1.4 rewrite identity on 1000 random expressions and objectives; rejected
 * expressions with their messages; empty subsets at canonicalisation. */
#include "test_common.h"

#include "solvers/rates.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 16
/* labels, group A (even rows, feature 1), group B (multiples of 3, feature 2), baseline */
static const int8_t y16[N] = {1, 1, -1, 0, -1, 1, -1, 1, 0, -1, 1, -1, 1, 0, -1, 1};
static const int8_t base16[N] = {1, -1, -1, 1, 1, 1, -1, -1, 1, -1, 1, 1, -1, -1, 1, 1};

static int in_a(int r)
{
    return r % 2 == 0;
}

static int in_b(int r)
{
    return r % 3 == 0;
}

static strux_dataset *data16(void)
{
    strux_csr x;
    assert_strux_ok(strux_csr_alloc(&x, N, 2, 2 * N));
    int64_t q = 0;
    for (int r = 0; r < N; r++) {
        if (in_a(r)) x.col[q] = 0, x.val[q++] = 1;
        if (in_b(r)) x.col[q] = 1, x.val[q++] = 1;
        x.ptr[r + 1] = q;
    }
    int64_t *y_ptr;
    int32_t *y_idx;
    assert_strux_ok(strux_alloc_array(&y_ptr, N + 1, sizeof *y_ptr));
    assert_strux_ok(strux_alloc_array(&y_idx, 1, sizeof *y_idx));
    strux_dataset *ds;
    assert_strux_ok(strux_dataset_from_arrays("d16", &x, &y_ptr, &y_idx, N, 0, 2, 2, 0, &ds));
    return ds;
}

typedef struct world {
    strux_dataset *ds;
    strux_subset_defs *d;
    strux_subset_input in;
    const int8_t *baselines[1];
    int64_t n[256];    /* subset sizes */
    uint8_t m[256][N]; /* memberships */
} world;

static world *world_new(void)
{
    world *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->ds = data16();
    f->baselines[0] = base16;
    f->in = (strux_subset_input){.ds = f->ds, .label = y16, .baseline = f->baselines};
    assert_strux_ok(strux_subset_defs_create(&f->d));
    assert_strux_ok(strux_subset_define(f->d, "A", "feature 1 > 0", "t.ini:1"));
    assert_strux_ok(strux_subset_define(f->d, "B", "feature 2 > 0", "t.ini:2"));
    assert_strux_ok(strux_subset_define(f->d, "old_pos", "baseline dep.h5 positive", "t.ini:3"));
    assert_strux_ok(strux_subset_define(f->d, "E", "feature 1 > 5", "t.ini:4"));
    assert_strux_ok(strux_subset_check(f->d));
    return f;
}

static void world_free(world *f)
{
    strux_subset_defs_destroy(&f->d);
    strux_dataset_destroy(&f->ds);
    free(f);
}

/* Evaluate and count every subset (new anonymous ones appear as expressions are parsed). */
static void count_all(world *f)
{
    int32_t K = strux_subset_count(f->d);
    assert_true(K <= 256);
    for (int32_t k = 0; k < K; k++) {
        assert_strux_ok(strux_subset_eval(f->d, k, &f->in, f->m[k]));
        f->n[k] = 0;
        for (int r = 0; r < N; r++)
            f->n[k] += f->m[k][r];
    }
}

/* s_p of every subset for 0/1 predictions (0 for an empty subset). */
static void rates_of(const world *f, const int *pred, double *s_p)
{
    for (int32_t k = 0; k < strux_subset_count(f->d); k++) {
        int64_t pos = 0;
        for (int r = 0; r < N; r++)
            pos += f->m[k][r] && pred[r];
        s_p[k] = f->n[k] ? (double)pos / (double)f->n[k] : 0;
    }
}

/* ---- direct definitions of the helpers ---- */

enum { S_ALL, S_A, S_B, S_AORB, S_LAB, S_UNL };
enum { F_NONE, F_COV, F_NEG, F_TPR, F_FPR, F_FNR, F_TNR, F_ERR, F_CHURN };

static int in_set(int s, int r)
{
    switch (s) {
    case S_A:
        return in_a(r);
    case S_B:
        return in_b(r);
    case S_AORB:
        return in_a(r) || in_b(r);
    case S_LAB:
        return y16[r] != 0;
    case S_UNL:
        return y16[r] == 0;
    default:
        return 1;
    }
}

static double direct(int fn, int s, const int *pred)
{
    double num = 0, den = 0;
    for (int r = 0; r < N; r++) {
        if (!in_set(s, r)) continue;
        switch (fn) {
        case F_COV:
            num += pred[r], den += 1;
            break;
        case F_NEG:
            num += !pred[r], den += 1;
            break;
        case F_TPR:
            if (y16[r] > 0) num += pred[r], den += 1;
            break;
        case F_FNR:
            if (y16[r] > 0) num += !pred[r], den += 1;
            break;
        case F_FPR:
            if (y16[r] < 0) num += pred[r], den += 1;
            break;
        case F_TNR:
            if (y16[r] < 0) num += !pred[r], den += 1;
            break;
        case F_ERR:
            if (y16[r]) num += (y16[r] > 0) != pred[r], den += 1;
            break;
        case F_CHURN:
            num += (base16[r] > 0) != pred[r], den += 1;
            break;
        default:
            break;
        }
    }
    assert_true(fn == F_NONE || den > 0);
    return fn == F_NONE ? 0 : num / den;
}

/* TP, FP, FN over the labelled rows of s */
static void confusion(int s, const int *pred, double *tp, double *fp, double *fn, double *npos)
{
    *tp = *fp = *fn = *npos = 0;
    for (int r = 0; r < N; r++) {
        if (!in_set(s, r)) continue;
        if (y16[r] > 0) *npos += 1, *tp += pred[r], *fn += !pred[r];
        if (y16[r] < 0) *fp += pred[r];
    }
}

static strux_rates_expr *parse_ok(world *f, const char *text, int objective)
{
    strux_rates_expr *e;
    assert_strux_ok(strux_rates_parse(f->d, "c", text, "t.ini:9", objective, &e));
    return e;
}

static void test_helpers_vs_direct(void **state)
{
    (void)state;
    world *f = world_new();
    /* text, and LHS − RHS = c1·F(f1, s1) + c2·F(f2, s2) + k */
    static const struct {
        const char *text;
        int f1, s1;
        double c1;
        int f2, s2;
        double c2, k;
    } cases[] = {
        {"coverage(A) <= 0.3", F_COV, S_A, 1, F_NONE, 0, 0, -0.3},
        {"positive_rate(A | B) >= 0.2", F_COV, S_AORB, 1, F_NONE, 0, 0, -0.2},
        {"negative_rate(B) <= 0.7", F_NEG, S_B, 1, F_NONE, 0, 0, -0.7},
        {"tpr(A) >= 0.8", F_TPR, S_A, 1, F_NONE, 0, 0, -0.8},
        {"recall(labeled) >= 0.9", F_TPR, S_LAB, 1, F_NONE, 0, 0, -0.9},
        {"fpr(B) <= 0.1", F_FPR, S_B, 1, F_NONE, 0, 0, -0.1},
        {"fnr(A) <= 0.3", F_FNR, S_A, 1, F_NONE, 0, 0, -0.3},
        {"tnr(all) >= 0.5", F_TNR, S_ALL, 1, F_NONE, 0, 0, -0.5},
        {"error_rate(A | B) <= 0.2", F_ERR, S_AORB, 1, F_NONE, 0, 0, -0.2},
        {"error_rate(labeled) <= 0.25", F_ERR, S_LAB, 1, F_NONE, 0, 0, -0.25},
        {"churn(all, old_pos) <= 0.05", F_CHURN, S_ALL, 1, F_NONE, 0, 0, -0.05},
        {"churn(unlabeled, old_pos) <= 0.05", F_CHURN, S_UNL, 1, F_NONE, 0, 0, -0.05},
        {"churn(A, old_pos) >= 0.5", F_CHURN, S_A, 1, F_NONE, 0, 0, -0.5},
        {"positive_rate(A) <= 1.25 * positive_rate(B)", F_COV, S_A, 1, F_COV, S_B, -1.25, 0},
        {"tpr(B) >= 0.8 * tpr(A)", F_TPR, S_B, 1, F_TPR, S_A, -0.8, 0},
        {"tpr(A) - tpr(B) <= 0.1", F_TPR, S_A, 1, F_TPR, S_B, -1, -0.1},
        {"2 * fpr(A) + 0.1 >= fnr(B) / 4", F_FPR, S_A, 2, F_FNR, S_B, -0.25, 0.1},
        {"-(coverage(A) - 1) <= (coverage(B))", F_COV, S_A, -1, F_COV, S_B, -1, 1},
    };
    strux_rates_expr *e[sizeof cases / sizeof *cases];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        e[i] = parse_ok(f, cases[i].text, 0);
    strux_rates_expr *prec = parse_ok(f, "precision(A) >= 0.6", 0);
    strux_rates_expr *prec2 = parse_ok(f, "0.6 <= precision(B)", 0);
    strux_rates_expr *f1 = parse_ok(f, "f1(labeled) >= 0.7", 0);
    count_all(f);
    strux_rates_row row[sizeof cases / sizeof *cases], rp, rp2, rf;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_strux_ok(strux_rates_canonical(e[i], f->d, f->n, &row[i]));
        for (int32_t t = 0; t < row[i].n; t++) {
            assert_true(row[i].alpha[t] >= 0 && row[i].beta[t] >= 0);
            assert_true(row[i].alpha[t] > 0 || row[i].beta[t] > 0);
        }
    }
    assert_strux_ok(strux_rates_canonical(prec, f->d, f->n, &rp));
    assert_strux_ok(strux_rates_canonical(prec2, f->d, f->n, &rp2));
    assert_strux_ok(strux_rates_canonical(f1, f->d, f->n, &rf));
    strux_rng rng;
    strux_rng_init(&rng, 15, 2, 0);
    for (int t = 0; t < 300; t++) {
        int pred[N];
        double s_p[256];
        for (int r = 0; r < N; r++)
            pred[r] = (int)strux_rng_below(&rng, 2);
        if (t == 0)
            for (int r = 0; r < N; r++)
                pred[r] = 0;
        if (t == 1)
            for (int r = 0; r < N; r++)
                pred[r] = 1;
        rates_of(f, pred, s_p);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            double diff = cases[i].c1 * direct(cases[i].f1, cases[i].s1, pred) +
                          cases[i].c2 * direct(cases[i].f2, cases[i].s2, pred) + cases[i].k;
            double sign = e[i]->sense; /* canonical − γ = LHS − RHS for <=, RHS − LHS for >= */
            assert_close(strux_rates_row_value(&row[i], s_p) - row[i].gamma, sign * diff, 1e-12);
        }
        /* ratios: canonical − γ = (p(TP + FP) − TP)/n+ and (φ(2TP + FN + FP) − 2TP)/n+ */
        double tp, fp, fn, np;
        confusion(S_A, pred, &tp, &fp, &fn, &np);
        assert_close(strux_rates_row_value(&rp, s_p) - rp.gamma, (0.6 * (tp + fp) - tp) / np,
                     1e-12);
        confusion(S_B, pred, &tp, &fp, &fn, &np);
        assert_close(strux_rates_row_value(&rp2, s_p) - rp2.gamma, (0.6 * (tp + fp) - tp) / np,
                     1e-12);
        confusion(S_LAB, pred, &tp, &fp, &fn, &np);
        assert_close(strux_rates_row_value(&rf, s_p) - rf.gamma,
                     (0.7 * (2 * tp + fn + fp) - 2 * tp) / np, 1e-12);
    }
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        strux_rates_row_free(&row[i]);
        strux_rates_expr_destroy(&e[i]);
    }
    strux_rates_row_free(&rp);
    strux_rates_row_free(&rp2);
    strux_rates_row_free(&rf);
    strux_rates_expr_destroy(&prec);
    strux_rates_expr_destroy(&prec2);
    strux_rates_expr_destroy(&f1);
    assert_null(prec);
    world_free(f);
}

static void expect_print(world *f, const char *text, int objective, const char *want)
{
    strux_rates_expr *e = parse_ok(f, text, objective);
    count_all(f);
    strux_rates_row row;
    assert_strux_ok(strux_rates_canonical(e, f->d, f->n, &row));
    char *s;
    assert_strux_ok(strux_rates_print(&row, f->d, &s));
    assert_string_equal(s, want);
    strux_free(&s);
    strux_rates_row_free(&row);
    strux_rates_expr_destroy(&e);
}

static void test_spec_encodings(void **state)
{
    (void)state;
    world *f = world_new();
    /* §1.5: coverage upper and lower bounds, recall, FPR, fairness ratio (§1.6 erratum 6 scaled
     * by 1/κ), equal opportunity, egregious examples (erratum 3) */
    expect_print(f, "coverage(A) <= 0.1", 0, "positive_rate(A) <= 0.1");
    expect_print(f, "coverage(A) >= 0.75", 0, "negative_rate(A) <= 0.25");
    expect_print(f, "recall(A) >= 0.5", 0, "negative_rate(A & positive) <= 0.5");
    expect_print(f, "fpr(labeled) <= 0.25", 0, "positive_rate(negative) <= 0.25");
    expect_print(f, "positive_rate(A) <= 1.25 * positive_rate(B)", 0,
                 "positive_rate(A) + 1.25*negative_rate(B) <= 1.25");
    expect_print(f, "0.8 * positive_rate(B) <= positive_rate(A)", 0,
                 "negative_rate(A) + 0.8*positive_rate(B) <= 1");
    expect_print(f, "tpr(A) >= 0.5 * tpr(B)", 0,
                 "negative_rate(A & positive) + 0.5*positive_rate(B & positive) <= 1");
    expect_print(f, "positive_rate(A & negative) <= 0.5", 0, "positive_rate(A & negative) <= 0.5");
    /* both rates of one set stay when both coefficients end up positive (§1.4) */
    expect_print(f, "positive_rate(A) - 0.5 * negative_rate(A) <= 0.25", 0,
                 "1.5*positive_rate(A) <= 0.75");
    expect_print(f, "2 * positive_rate(A) + negative_rate(A) <= 1.5", 0,
                 "2*positive_rate(A) + negative_rate(A) <= 1.5");
    /* objectives keep the constant of the rewrite (§1.4); the default objective, with 7
     * positive and 6 negative labelled rows */
    expect_print(f, "error_rate(labeled)", 1,
                 "0.5384615384615384*negative_rate(positive) + "
                 "0.46153846153846156*positive_rate(negative)");
    expect_print(f, "-coverage(A) + 2", 1, "negative_rate(A) + 1");
    expect_print(f, "1 - 3 * coverage(A)", 1, "3*negative_rate(A) - 2");
    expect_print(f, "0 * coverage(A) + 0.5", 1, "0 + 0.5");
    expect_print(f, "coverage(A) - coverage(A) <= 1", 0, "0 <= 1");
    world_free(f);
}

/* ---- random expressions: canonical round trip and the §1.4 identity ---- */

static void random_term(strux_rng *rng, char *buf, size_t n)
{
    static const char *const fns[] = {"positive_rate", "negative_rate", "coverage", "tpr",
                                      "recall",        "fpr",           "fnr",      "tnr",
                                      "error_rate",    "churn"};
    static const char *const sets[] = {"A",      "B",       "A | B", "A - B",
                                       "!A & B", "labeled", "all",   "(A)"};
    static const char *const coefs[] = {"-2.5", "-1", "0.3", "0.5", "1", "1.25", "3", "0.1"};
    const char *fn = fns[strux_rng_below(rng, 10)];
    const char *s = sets[strux_rng_below(rng, 8)];
    const char *c = coefs[strux_rng_below(rng, 8)];
    char t[128];
    if (strcmp(fn, "churn") == 0)
        snprintf(t, sizeof t, "churn(%s, old_pos)", s);
    else
        snprintf(t, sizeof t, "%s(%s)", fn, s);
    switch (strux_rng_below(rng, 7)) {
    case 0:
        snprintf(buf, n, "%s * %s", c, t);
        break;
    case 1:
        snprintf(buf, n, "%s*%s", t, c);
        break;
    case 2:
        snprintf(buf, n, "%s / %s", t, c);
        break;
    case 3:
        snprintf(buf, n, "-%s", t);
        break;
    case 4:
        snprintf(buf, n, "(%s - %s)", t, c);
        break;
    case 5:
        snprintf(buf, n, "%s", c);
        break;
    default:
        snprintf(buf, n, "%s", t);
        break;
    }
}

static void random_side(strux_rng *rng, char *buf, size_t n)
{
    int k = 1 + (int)strux_rng_below(rng, 3);
    buf[0] = '\0';
    for (int i = 0; i < k; i++) {
        char t[200];
        random_term(rng, t, sizeof t);
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s", i ? (strux_rng_below(rng, 2) ? " + " : " - ") : "", t);
    }
}

static void rows_equal(const strux_rates_row *a, const strux_rates_row *b, const char *what)
{
    int same = a->n == b->n && a->gamma == b->gamma && a->c0 == b->c0;
    for (int32_t i = 0; same && i < a->n; i++)
        same = a->set[i] == b->set[i] && a->alpha[i] == b->alpha[i] && a->beta[i] == b->beta[i];
    if (!same) fail_msg("canonical rows differ for '%s'", what);
}

static void test_round_trips(void **state)
{
    (void)state;
    world *f = world_new();
    strux_rng rng;
    strux_rng_init(&rng, 15, 3, 0);
    for (int t = 0; t < 1000; t++) {
        char lhs[700], rhs[700], text[1500];
        int objective = t % 5 == 4;
        random_side(&rng, lhs, sizeof lhs);
        random_side(&rng, rhs, sizeof rhs);
        if (objective)
            snprintf(text, sizeof text, "%s", lhs);
        else
            snprintf(text, sizeof text, "%s %s %s", lhs,
                     strux_rng_below(&rng, 2) ? "<=" : ">=", rhs);
        strux_rates_expr *e = parse_ok(f, text, objective);
        count_all(f);
        strux_rates_row row, row2;
        assert_strux_ok(strux_rates_canonical(e, f->d, f->n, &row));
        for (int32_t i = 0; i < row.n; i++) {
            assert_true(row.alpha[i] >= 0 && row.beta[i] >= 0);
            if (i) assert_true(row.set[i] > row.set[i - 1]);
        }
        /* §1.4 identity at random rates: canonical − γ = ±(LHS − RHS), objective + c0 = LHS */
        double s_p[256];
        for (int32_t k = 0; k < strux_subset_count(f->d); k++)
            s_p[k] = strux_rng_uniform(&rng);
        double l = strux_rates_linear_value(&e->lhs, f->n, s_p);
        double r = strux_rates_linear_value(&e->rhs, f->n, s_p);
        double v = strux_rates_row_value(&row, s_p);
        if (objective)
            assert_close(v + row.c0, l, 1e-9);
        else
            assert_close(v - row.gamma, e->sense * (l - r), 1e-9);
        char *s, *s2;
        assert_strux_ok(strux_rates_print(&row, f->d, &s));
        strux_rates_expr *e2 = parse_ok(f, s, objective);
        count_all(f);
        assert_strux_ok(strux_rates_canonical(e2, f->d, f->n, &row2));
        rows_equal(&row, &row2, text);
        assert_strux_ok(strux_rates_print(&row2, f->d, &s2));
        assert_string_equal(s, s2);
        strux_free(&s);
        strux_free(&s2);
        strux_rates_row_free(&row);
        strux_rates_row_free(&row2);
        strux_rates_expr_destroy(&e);
        strux_rates_expr_destroy(&e2);
    }
    world_free(f);
}

static void test_parse_errors(void **state)
{
    (void)state;
    world *f = world_new();
    static const struct {
        const char *text;
        int objective;
        const char *msg;
    } cases[] = {
        {"coverage(A) < 0.3", 0,
         "column 13: expected <= or >= (or an operator + - * /), found '<'"},
        {"coverage(A) = 0.3", 0, "column 13: expected <= or >="},
        {"coverage(A)", 0,
         "column 12: expected <= or >= (or an operator + - * /), found end of text"},
        {"foo(A) <= 1", 0,
         "column 1: unknown function 'foo' (valid: positive_rate, negative_rate, coverage, tpr, "
         "recall, fpr, fnr, tnr, error_rate, churn, precision, f1)"},
        {"coverage A <= 1", 0, "column 10: expected '(' after the function name, found 'A'"},
        {"coverage(C) <= 1", 0,
         "t.ini:9: constraint c = 'coverage(C) <= 1': column 10: unknown dataset 'C' (defined: "
         "all, labeled, unlabeled, positive, negative, A, B, old_pos, E)"},
        {"tpr(A | feature 0 > 1) >= 0.5", 0,
         "t.ini:9: constraint c = 'tpr(A | feature 0 > 1) >= 0.5': column 17: expected a feature "
         "index (an integer from 1) after 'feature', found '0'"},
        {"coverage(A & ) <= 1", 0,
         "constraint c = 'coverage(A & ) <= 1': column 14: expected a dataset"},
        {"coverage() <= 1", 0, "column 10: expected a dataset, found ')'"},
        {"coverage(A <= 1", 0, "column 16: expected ')', found end of text"},
        {"churn(A) <= 0.1", 0, "column 8: expected ',' and a second dataset, found ')'"},
        {"coverage(A) * coverage(B) <= 1", 0, "column 13: a product of two rates is not linear"},
        {"1 / coverage(A) <= 1", 0, "column 3: division by a rate is not linear"},
        {"coverage(A) / 0 <= 1", 0, "column 13: division by zero"},
        {"coverage(A) <= 1 1", 0,
         "column 18: expected an operator (+ - * /) or the end of the constraint, found '1'"},
        {"coverage(A) <= 1e999", 0, "column 16: expected a finite number"},
        {"coverage(A) <= (1", 0, "column 18: expected ')' or an operator (+ - * /)"},
        {"<= 1", 0, "column 1: expected a number, a rate such as positive_rate(D), '(' or a sign"},
        {"precision(A) <= 0.9", 0,
         "column 1: precision(...) is a ratio of rates: it may appear only alone against a "
         "constant, as precision(D) >= constant (dataset_constraints.md §1.5)"},
        {"2 * precision(A) >= 0.9", 0, "column 5: precision(...) is a ratio of rates"},
        {"precision(A) >= coverage(B)", 0, "column 1: precision(...) is a ratio of rates"},
        {"f1(A) + 0.1 >= 0.9", 0, "column 1: f1(...) is a ratio of rates"},
        {"-f1(A) >= -0.9", 0, "column 2: f1(...) is a ratio of rates"},
        {"0.9 >= f1(A)", 0, "column 8: f1(...) is a ratio of rates"},
        {"tpr(unlabeled) >= 0.5", 0,
         "column 1: tpr(unlabeled) needs labelled positive rows, but dataset 'unlabeled' has "
         "none"},
        {"0.5 <= recall(unlabeled & A)", 0,
         "column 8: recall(unlabeled & A) needs labelled positive rows"},
        {"fpr(A & positive) <= 0.1", 0,
         "fpr(A & positive) needs labelled negative rows, but dataset 'A & positive' has none"},
        {"error_rate(A - labeled) <= 0.1", 0, "error_rate(A - labeled) needs labelled rows"},
        {"precision(negative) >= 0.5", 0, "precision(negative) needs labelled positive rows"},
        {"error_rate(labeled) <= 1", 1,
         "t.ini:9: c = 'error_rate(labeled) <= 1': column 21: an objective is minimised and "
         "has no comparison"},
        {"precision(A)", 1, "precision(...) is a ratio of rates"},
        {"coverage(A) coverage(B)", 1,
         "column 13: expected an operator (+ - * /) or the end of the objective"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        strux_rates_expr *e = NULL;
        assert_strux_fails(
            strux_rates_parse(f->d, "c", cases[i].text, "t.ini:9", cases[i].objective, &e),
            STRUX_ERR_CONFIG, cases[i].msg);
        assert_null(e);
    }
    /* the leading context names origin, constraint and text */
    strux_rates_expr *e = NULL;
    assert_strux_fails(strux_rates_parse(f->d, "cov_a", " coverage(A) < 0.3 ", "t.ini:9", 0, &e),
                       STRUX_ERR_CONFIG,
                       "t.ini:9: constraint cov_a = 'coverage(A) < 0.3': column 13: expected");
    strux_error_clear();
    world_free(f);
}

static void test_empty_subsets(void **state)
{
    (void)state;
    world *f = world_new();
    strux_rates_expr *cov = parse_ok(f, "coverage(E) <= 0.5", 0);
    strux_rates_expr *err = parse_ok(f, "error_rate(E | A & unlabeled) <= 0.5", 0);
    /* old_pos - all is empty: its churn term has weight 0 and drops out */
    strux_rates_expr *churn = parse_ok(f, "churn(old_pos, old_pos) <= 0.5", 0);
    count_all(f);
    strux_rates_row row;
    assert_strux_fails(strux_rates_canonical(cov, f->d, f->n, &row), STRUX_ERR_CONFIG,
                       "t.ini:9: constraint c (coverage(E) <= 0.5): dataset 'E' (defined as feature "
                       "1 > 5) is empty on the training data, so its rates are undefined");
    assert_strux_fails(strux_rates_canonical(err, f->d, f->n, &row), STRUX_ERR_CONFIG,
                       "dataset '(E | A & unlabeled) & labeled' is empty on the training data");
    assert_strux_ok(strux_rates_canonical(churn, f->d, f->n, &row));
    char *s;
    assert_strux_ok(strux_rates_print(&row, f->d, &s));
    assert_string_equal(s, "negative_rate(old_pos) <= 0.5");
    strux_free(&s);
    strux_rates_row_free(&row);
    strux_rates_expr_destroy(&cov);
    strux_rates_expr_destroy(&err);
    strux_rates_expr_destroy(&churn);
    strux_error_clear();
    world_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helpers_vs_direct), cmocka_unit_test(test_spec_encodings),
        cmocka_unit_test(test_round_trips),       cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_empty_subsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
