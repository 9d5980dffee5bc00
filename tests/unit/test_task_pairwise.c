/* tests/unit/test_task_pairwise.c - the pairwise MRF task. Exact inference (Gray-code
 * enumeration, L ≤ 10) against brute-force enumeration for random direction, wedge (generic and
 * dyadic, both strictness flags) and ban-list queries. LP inference (GLPK local polytope) on
 * yeast-sized random instances (L = 6..14): never below the integral optimum, equal to it
 * whenever the LP answer is integral, with and without wedges (infeasible LP ⇒ no integral label
 * in the wedge); fractional answers have consistent (m, g, |y|), feature map and Δφ. Mode
 * selection, unsupported ban lists, prediction and metrics. */
#include "test_common.h"

#include "brute.h"
#include "synth.h"
#include "strux/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pw_case {
    strux_dataset *ds;
    strux_task *t;
    strux_model *m;
    strux_pot pot;
    strux_label truth, y, best;
} pw_case;

static void case_open(pw_case *c, int32_t L, const char *inference, uint64_t seed)
{
    *c = (pw_case){0};
    c->ds = synth_rows("synthetic-pairwise", 12, 4, L, 0, seed);
    strux_task_options to = {.type = "pairwise"};
    snprintf(to.inference, sizeof to.inference, "%s", inference);
    assert_strux_ok(strux_task_create(&to, &c->t));
    assert_strux_ok(strux_task_check(c->t, c->ds));
    int32_t rows;
    int64_t extra;
    assert_strux_ok(strux_task_model_shape(c->t, c->ds, &rows, &extra));
    assert_int_equal(rows, L);
    assert_int_equal(extra, L * (L - 1) / 2);
    assert_strux_ok(strux_model_create(rows, c->ds->dim, extra, STRUX_MODEL_PLAIN, &c->m));
    strux_rng r;
    strux_rng_init(&r, seed, 1, 0);
    double *w = test_model_flat(c->m);
    for (int64_t k = 0; k < strux_model_n_w(c->m); k++) w[k] = strux_rng_normal(&r);
    test_model_set_flat(c->m, w);
    free(w);
    assert_strux_ok(strux_task_pot_alloc(c->t, c->ds, &c->pot));
    assert_strux_ok(strux_task_label_alloc(c->t, c->ds, &c->truth));
    assert_strux_ok(strux_task_label_alloc(c->t, c->ds, &c->y));
    assert_strux_ok(strux_task_label_alloc(c->t, c->ds, &c->best));
}

static void case_close(pw_case *c)
{
    strux_pot_free(&c->pot);
    strux_label_free(&c->truth);
    strux_label_free(&c->y);
    strux_label_free(&c->best);
    strux_model_destroy(&c->m);
    strux_task_destroy(&c->t);
    strux_dataset_destroy(&c->ds);
}

/* Example i's truth with random potentials: unary N(0, 1)·scale, pairwise N(0, 1)·scale/2 (made
 * non-negative when attractive: the LP is then tight), or integers when dyadic. */
static void random_example(pw_case *c, int i, int attractive, int dyadic, strux_rng *r)
{
    int32_t L = c->ds->n_labels, n = L + L * (L - 1) / 2;
    assert_strux_ok(strux_task_potentials(c->t, c->m, c->ds, i, &c->pot));
    assert_strux_ok(strux_task_truth(c->t, c->ds, i, &c->truth));
    if (dyadic) {
        integer_potentials(&c->pot, n, 2, r);
    } else {
        for (int32_t j = 0; j < n; j++) c->pot.s[j] = strux_rng_normal(r) * (j < L ? 1.5 : 0.75);
    }
    if (attractive)
        for (int32_t j = L; j < n; j++) c->pot.s[j] = fabs(c->pot.s[j]);
    c->pot.stamp++;
}

static void test_exact_matches_enumeration(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 31, 0, 0);
    strux_label ban[5];
    for (int32_t L = 2; L <= 10; L += 4) {
        pw_case c;
        case_open(&c, L, "exact", (uint64_t)L);
        for (int b = 0; b < 5; b++) assert_strux_ok(strux_task_label_alloc(c.t, c.ds, &ban[b]));
        int n_empty = 0, n_wedge = 0;
        for (int i = 0; i < 12; i++)
            for (int round = 0; round < 40; round++) {
                random_example(&c, i, round % 3 == 0, round % 2, &r);
                strux_query q = random_query(&r, 1, round % 2);
                if (round % 4 == 1) { /* ban the best labels and a random one */
                    q.ban = ban;
                    for (q.n_ban = 0; q.n_ban < 4; q.n_ban++)
                        if (isinf(brute_oracle(c.t, &c.pot, &c.truth, &q, &ban[q.n_ban]))) break;
                    assert_strux_ok(strux_task_label_at(
                        c.t, &c.pot, (int64_t)strux_rng_below(&r, (uint64_t)1 << L),
                        &ban[q.n_ban++]));
                }
                strux_answer a;
                assert_strux_ok(strux_task_oracle(c.t, &c.pot, &c.truth, &q, &c.y, &a));
                double want = brute_oracle(c.t, &c.pot, &c.truth, &q, &c.best);
                expect_oracle_answer(c.t, &c.pot, &c.truth, &q, want, &c.y, &a, 1e-12);
                assert_int_equal(c.y.n_mu, 0);
                n_wedge += q.wedge;
                n_empty += !a.found;
            }
        assert_true(n_empty > 0 && n_empty < n_wedge);
        for (int b = 0; b < 5; b++) strux_label_free(&ban[b]);
        case_close(&c);
    }
}

/* The LP relaxation against enumeration over integral labels (yeast-sized L). */
static void test_lp_against_enumeration(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 41, 0, 0);
    int n_integral = 0, n_fractional = 0, n_wedge_integral = 0, n_infeasible = 0, n = 0;
    for (int32_t L = 6; L <= 14; L += 2) {
        pw_case c;
        case_open(&c, L, "lp", 100 + (uint64_t)L);
        for (int i = 0; i < 12; i++)
            for (int round = 0; round < (L <= 10 ? 12 : 4); round++) {
                random_example(&c, i, round % 2, 0, &r);
                strux_query q = random_query(&r, 1, 0);
                strux_answer a;
                assert_strux_ok(strux_task_oracle(c.t, &c.pot, &c.truth, &q, &c.y, &a));
                double want = brute_oracle(c.t, &c.pot, &c.truth, &q, &c.best);
                n++;
                if (!a.found) {
                    /* the polytope holds every integral label: none is in the wedge */
                    assert_true(q.wedge && isinf(want));
                    n_infeasible++;
                    continue;
                }
                double m, g, got = q.a * a.m + q.b * a.g + q.c * a.size;
                brute_point(c.t, &c.pot, &c.truth, &c.y, &m, &g);
                assert_close(a.m, m, 1e-12); /* (m, g, |y|) are the (fractional) label's own */
                assert_close(a.g, g, 1e-12);
                assert_close(a.size, strux_task_size(c.t, &c.y), 1e-12);
                if (!isinf(want)) assert_true(got >= want - 1e-7 * fmax(1, fabs(want)));
                if (c.y.n_mu == 0) {
                    expect_oracle_answer(c.t, &c.pot, &c.truth, &q, want, &c.y, &a, 1e-9);
                    n_integral++;
                    n_wedge_integral += q.wedge;
                } else {
                    n_fractional++;
                    for (int32_t k = 0; k < L; k++)
                        assert_int_equal(c.y.y[k], c.y.mu[k] >= 0.5); /* y is the rounding */
                }
            }
        case_close(&c);
    }
    print_message("# LP answers: %d, integral %d (%d with a wedge), fractional %d, infeasible %d\n",
                  n, n_integral, n_wedge_integral, n_fractional, n_infeasible);
    assert_true(n_integral > n / 3 && n_wedge_integral > 20 && n_fractional > 0 &&
                n_infeasible > 0);
}

/* Every kind of the weight store (test_model_kinds): w·φ(μ) = f(μ) and Δφ must hold for each. */
/* Fractional answers: w·φ(μ) = f(μ) and add_delta = φ(μ) − φ(y_i), for every model kind. */
static void test_fractional_features(void **state)
{
    (void)state;
    for (size_t kd = 0; kd < TEST_MODEL_KINDS; kd++) {
        pw_case c;
        case_open(&c, 8, "lp", 7);
        {   /* the case's weights in this kind (rounded to float by a float store) */
            strux_model *mk;
            assert_strux_ok(strux_model_create(strux_model_n_rows(c.m), strux_model_dim(c.m),
                                               strux_model_n_extra(c.m), test_model_kinds[kd], &mk));
            double *w = test_model_flat(c.m);
            test_model_set_flat(mk, w);
            free(w);
            strux_model_destroy(&c.m);
            c.m = mk;
        }
        double tol = test_model_kinds[kd].precision == STRUX_PRECISION_FLOAT ? 1e-5 : 1e-12;
        strux_rng r;
        strux_rng_init(&r, 5, 0, 0);
        strux_model *m = c.m, *G1, *G2;
        assert_strux_ok(strux_model_create_like(m, &G1));
        assert_strux_ok(strux_model_create_like(m, &G2));
        int64_t n_w = strux_model_n_w(m);
        double *row = malloc((size_t)c.ds->dim * sizeof *row);
        int n_fractional = 0;
        for (int i = 0; i < 12; i++)
            for (int round = 0; round < 10; round++) {
                /* the model's own potentials, with strongly repulsive pairs: fractional optima */
                assert_strux_ok(strux_task_potentials(c.t, m, c.ds, i, &c.pot));
                assert_strux_ok(strux_task_truth(c.t, c.ds, i, &c.truth));
                double *pair = strux_model_extra(m);
                for (int32_t p = 0; p < 28; p++) pair[p] = -fabs(strux_rng_normal(&r)) * 3;
                for (int32_t k = 0; k < 8; k++) { /* bias */
                    strux_model_get_row(m, k, row);
                    row[c.ds->dim - 1] = 1.5;
                    strux_model_set_row(m, k, row);
                }
                assert_strux_ok(strux_task_potentials(c.t, m, c.ds, i, &c.pot));
                strux_query q = strux_query_dir(1, strux_rng_uniform(&r));
                strux_answer a;
                assert_strux_ok(strux_task_oracle(c.t, &c.pot, &c.truth, &q, &c.y, &a));
                n_fractional += c.y.n_mu > 0;
                strux_model_zero(G1);
                assert_strux_ok(strux_task_add_feature(c.t, c.ds, i, &c.y, 1.0, G1));
                assert_close(strux_model_dot(G1, m), strux_task_score(c.t, &c.pot, &c.y), tol);
                assert_strux_ok(strux_task_add_feature(c.t, c.ds, i, &c.truth, -1.0, G1));
                strux_model_zero(G2);
                assert_strux_ok(strux_task_add_delta(c.t, c.ds, i, &c.y, &c.truth, 1.0, G2));
                double *g1 = test_model_flat(G1), *g2 = test_model_flat(G2);
                for (int64_t j = 0; j < n_w; j++) assert_close(g1[j], g2[j], tol);
                free(g1);
                free(g2);
            }
        assert_true(n_fractional > 10);
        free(row);
        strux_model_destroy(&G1);
        strux_model_destroy(&G2);
        case_close(&c);
    }
}

/* A wedge ray through the LP's own optimum y*: closed, y* stays admissible (same value); open,
 * the answer lies strictly inside (α·h − g ≥ τ > 0), i.e. the strict side is realised by τ. */
static void test_lp_strict_sides(void **state)
{
    (void)state;
    pw_case c;
    case_open(&c, 6, "lp", 11);
    strux_rng r;
    strux_rng_init(&r, 12, 0, 0);
    int n = 0;
    for (int i = 0; i < 12; i++) {
        random_example(&c, i, 1, 0, &r);
        strux_query q = strux_query_dir(1, 0.5);
        strux_answer a;
        assert_strux_ok(strux_task_oracle(c.t, &c.pot, &c.truth, &q, &c.y, &a));
        double h = a.m + 1, v = a.m + 0.5 * a.g;
        if (c.y.n_mu > 0 || a.g == 0 || h <= 0.1) continue;
        n++;
        q.wedge = 1;
        q.h_shift = 1;
        q.alpha = a.g / h; /* y* on the upper ray */
        q.beta = 0;
        assert_strux_ok(strux_task_oracle(c.t, &c.pot, &c.truth, &q, &c.y, &a));
        assert_true(a.found);
        assert_close(a.m + 0.5 * a.g, v, 1e-7);
        assert_true(q.alpha * (a.m + 1) - a.g >= -1e-7);
        q.upper_open = 1;
        assert_strux_ok(strux_task_oracle(c.t, &c.pot, &c.truth, &q, &c.y, &a));
        if (!a.found) continue;
        assert_true(q.alpha * (a.m + 1) - a.g >= 5e-7);
        assert_true(a.m + 0.5 * a.g <= v + 1e-9);
    }
    assert_true(n >= 4);
    case_close(&c);
}

static void test_modes_and_unsupported(void **state)
{
    (void)state;
    pw_case c;
    case_open(&c, 4, "lp", 3);
    strux_rng r;
    strux_rng_init(&r, 1, 0, 0);
    random_example(&c, 0, 0, 0, &r);
    strux_query q = strux_query_dir(1, 1);
    q.ban = &c.truth;
    q.n_ban = 1;
    strux_answer a;
    assert_strux_fails(strux_task_oracle(c.t, &c.pot, &c.truth, &q, &c.y, &a),
                       STRUX_ERR_UNSUPPORTED,
                       "task 'pairwise' (LP inference) does not support ban lists");
    case_close(&c);
    /* explicit exact beyond 2^20 labelings is refused; auto picks the LP above L = 16 */
    strux_dataset *ds = synth_rows("wide", 3, 2, 21, 0, 1);
    strux_task_options to = {.type = "pairwise", .inference = "exact"};
    strux_task *t;
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_fails(strux_task_check(t, ds), STRUX_ERR_CONFIG,
                       "task.inference = exact enumerates 2^21 labelings");
    strux_task_destroy(&t);
    snprintf(to.inference, sizeof to.inference, "auto");
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_ok(strux_task_check(t, ds));
    strux_label y;
    assert_strux_ok(strux_task_label_alloc(t, ds, &y));
    assert_true(y.mu_cap == 21 + 210); /* LP: room for the marginals */
    strux_label_free(&y);
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
    ds = synth_sequences("seq", 3, 3, 2, 4, 1);
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_fails(strux_task_check(t, ds), STRUX_ERR_INPUT, "seq: holds sequences");
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
}

/* Prediction maximises f (exact: over labels; LP: rounding of the relaxed optimum), and the
 * metrics count fractional predictions. */
static void test_predict_and_metrics(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 9, 0, 0);
    pw_case c;
    case_open(&c, 9, "exact", 4);
    for (int i = 0; i < 12; i++) {
        random_example(&c, i, 0, 0, &r);
        assert_strux_ok(strux_task_predict(c.t, &c.pot, &c.y));
        strux_query q = strux_query_dir(1, 0);
        double f_y = strux_task_score(c.t, &c.pot, &c.y) - strux_task_score(c.t, &c.pot, &c.truth);
        assert_close(f_y, brute_oracle(c.t, &c.pot, &c.truth, &q, NULL), 1e-12);
    }
    case_close(&c);
    case_open(&c, 3, "lp", 4);
    /* θ = (1, 1, 1), θ_01 = θ_02 = θ_12 = −1.5: the LP optimum is μ_k = 1/2, μ_kl = 0 (value 1.5;
       the best labeling scores 1), rounded up to {0, 1, 2} */
    for (int k = 0; k < 3; k++) c.pot.s[k] = 1.0, c.pot.s[3 + k] = -1.5;
    c.pot.n_parts = 3;
    assert_strux_ok(strux_task_predict(c.t, &c.pot, &c.y));
    assert_int_equal(c.y.n_mu, 6);
    for (int k = 0; k < 3; k++) {
        assert_close(c.y.mu[k], 0.5, 1e-12);
        assert_close(c.y.mu[3 + k], 0, 1e-12);
        assert_int_equal(c.y.y[k], 1);
    }
    assert_close(strux_task_score(c.t, &c.pot, &c.y), 1.5, 1e-12);
    double *acc = calloc((size_t)strux_task_eval_size(c.t), sizeof *acc);
    c.truth.n = 3;
    c.truth.y[0] = 1, c.truth.y[1] = 1, c.truth.y[2] = 0;
    assert_strux_ok(strux_task_eval_add(c.t, &c.y, &c.truth, acc)); /* fractional, 1 error */
    assert_strux_ok(strux_task_eval_add(c.t, &c.truth, &c.truth, acc));
    char buf[512];
    {
        strux_scores sc;
        assert_strux_ok(strux_task_eval_report(c.t, acc, &sc));
        strux_scores_format(&sc, buf, sizeof buf);
    }
    assert_string_equal(buf, "\"hamming_loss\": 0.166667, \"subset_accuracy\": 0.500000, "
                             "\"micro_f1\": 0.888889, \"macro_f1\": 0.666667, "
                             "\"example_f1\": 0.900000, \"n\": 2, "
                             "\"fractional_predictions\": 0.500000");
    assert_strux_ok(strux_task_format_label(c.t, &c.y, buf, sizeof buf));
    assert_string_equal(buf, "0,1,2");
    free(acc);
    case_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_matches_enumeration),
        cmocka_unit_test(test_lp_against_enumeration),
        cmocka_unit_test(test_fractional_features),
        cmocka_unit_test(test_lp_strict_sides),
        cmocka_unit_test(test_modes_and_unsupported),
        cmocka_unit_test(test_predict_and_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
