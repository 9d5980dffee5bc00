/* tests/unit/test_task_multiclass.c - the multiclass task against brute-force enumeration of its
 * K ≤ 30 labels: direction, constrained (random and dyadic wedges with both strictness flags) and
 * banned queries with random c; w·φ(x, y) = f(y) and Δφ; the one-label-per-row check naming file
 * and row; metrics counted by hand. */
#include "test_common.h"

#include "brute.h"
#include "synth.h"
#include "strux/task.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K = 30, DIM = 6, N = 25 };

typedef struct fixture_state {
    strux_dataset *ds;
    strux_task *t;
    strux_model *m;
    strux_pot pot;
    strux_label truth, y, best;
} fixture_state;

static int setup(void **state)
{
    fixture_state *f = calloc(1, sizeof *f);
    f->ds = synth_rows("synthetic-mc", N, DIM, K, 1, 3);
    strux_task_options to = {.type = "multiclass"};
    if (strux_task_create(&to, &f->t) || strux_task_check(f->t, f->ds)) return -1;
    int32_t rows;
    int64_t extra;
    if (strux_task_model_shape(f->t, f->ds, &rows, &extra) || rows != K || extra != 0) return -1;
    if (strux_model_create(rows, f->ds->dim, extra, STRUX_MODEL_PLAIN, &f->m)) return -1;
    strux_rng r;
    strux_rng_init(&r, 9, 0, 0);
    double *w = test_model_flat(f->m);
    for (int64_t k = 0; k < strux_model_n_w(f->m); k++) w[k] = strux_rng_normal(&r);
    test_model_set_flat(f->m, w);
    free(w);
    if (strux_task_pot_alloc(f->t, f->ds, &f->pot) || strux_task_label_alloc(f->t, f->ds, &f->truth) ||
        strux_task_label_alloc(f->t, f->ds, &f->y) || strux_task_label_alloc(f->t, f->ds, &f->best))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_state *f = *state;
    strux_pot_free(&f->pot);
    strux_label_free(&f->truth);
    strux_label_free(&f->y);
    strux_label_free(&f->best);
    strux_model_destroy(&f->m);
    strux_task_destroy(&f->t);
    strux_dataset_destroy(&f->ds);
    free(f);
    return 0;
}

/* Random queries (generic and dyadic, with and without bans) against enumeration. */
static void test_oracle_matches_enumeration(void **state)
{
    fixture_state *f = *state;
    strux_label ban[4];
    for (int b = 0; b < 4; b++) assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &ban[b]));
    strux_rng r;
    strux_rng_init(&r, 17, 0, 0);
    int64_t calls = strux_task_oracle_calls(f->t), n_calls = 0, n_empty = 0, n_wedge = 0;
    for (int i = 0; i < N; i++) {
        assert_strux_ok(strux_task_potentials(f->t, f->m, f->ds, i, &f->pot));
        assert_strux_ok(strux_task_truth(f->t, f->ds, i, &f->truth));
        assert_int_equal(strux_task_label_count(f->t, &f->pot), K);
        for (int rep = 0; rep < 60; rep++) {
            int dyadic = rep % 2;
            if (dyadic) integer_potentials(&f->pot, K, 3, &r);
            else random_potentials(&f->pot, K, 1.0 + rep % 3, (uint64_t)(1000 * i + rep));
            strux_query q = random_query(&r, 1, dyadic);
            if (rep % 3 == 0) {
                /* ban the unconstrained answer and random others */
                q.n_ban = 1 + (int32_t)strux_rng_below(&r, 4);
                strux_query q0 = q;
                q0.n_ban = 0;
                brute_oracle(f->t, &f->pot, &f->truth, &q0, &ban[0]);
                for (int b = 1; b < q.n_ban; b++)
                    assert_strux_ok(strux_task_label_at(f->t, &f->pot,
                                                        (int64_t)strux_rng_below(&r, K), &ban[b]));
                q.ban = ban;
            }
            strux_answer a;
            assert_strux_ok(strux_task_oracle(f->t, &f->pot, &f->truth, &q, &f->y, &a));
            double want = brute_oracle(f->t, &f->pot, &f->truth, &q, &f->best);
            expect_oracle_answer(f->t, &f->pot, &f->truth, &q, want, &f->y, &a, 1e-12);
            n_calls++;
            n_empty += !a.found;
            n_wedge += q.wedge;
        }
    }
    assert_int_equal(strux_task_oracle_calls(f->t) - calls, n_calls);
    /* the draws exercise both outcomes of the wedge */
    assert_true(n_empty > 0 && n_empty < n_wedge);
    for (int b = 0; b < 4; b++) strux_label_free(&ban[b]);
}

/* Banning every label leaves nothing; banning all but one returns that one. */
static void test_ban_everything(void **state)
{
    fixture_state *f = *state;
    strux_label ban[K];
    for (int k = 0; k < K; k++) {
        assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &ban[k]));
        assert_strux_ok(strux_task_label_at(f->t, &f->pot, k, &ban[k]));
    }
    assert_strux_ok(strux_task_potentials(f->t, f->m, f->ds, 0, &f->pot));
    assert_strux_ok(strux_task_truth(f->t, f->ds, 0, &f->truth));
    strux_query q = strux_query_dir(1, 1);
    q.ban = ban;
    q.n_ban = K;
    strux_answer a;
    assert_strux_ok(strux_task_oracle(f->t, &f->pot, &f->truth, &q, &f->y, &a));
    assert_false(a.found);
    q.ban = ban + 1;
    q.n_ban = K - 1;
    assert_strux_ok(strux_task_oracle(f->t, &f->pot, &f->truth, &q, &f->y, &a));
    assert_true(a.found);
    assert_int_equal(f->y.y[0], 0);
    for (int k = 0; k < K; k++) strux_label_free(&ban[k]);
}

/* Every kind of the weight store (test_model_kinds): w·φ = f and Δφ must hold for each. */
static void test_features_and_delta(void **state)
{
    fixture_state *f = *state;
    double *w = test_model_flat(f->m);
    for (size_t kd = 0; kd < TEST_MODEL_KINDS; kd++) {
        /* the fixture's weights in this kind (rounded to float by a float store) */
        strux_model *m, *G1, *G2;
        assert_strux_ok(strux_model_create(strux_model_n_rows(f->m), strux_model_dim(f->m),
                                           strux_model_n_extra(f->m), test_model_kinds[kd], &m));
        test_model_set_flat(m, w);
        assert_strux_ok(strux_model_create_like(m, &G1));
        assert_strux_ok(strux_model_create_like(m, &G2));
        double tol = test_model_kinds[kd].precision == STRUX_PRECISION_FLOAT ? 1e-5 : 1e-12;
        int64_t n_w = strux_model_n_w(m);
        for (int i = 0; i < N; i++) {
            assert_strux_ok(strux_task_potentials(f->t, m, f->ds, i, &f->pot));
            assert_strux_ok(strux_task_truth(f->t, f->ds, i, &f->truth));
            for (int k = 0; k < K; k += 7) {
                assert_strux_ok(strux_task_label_at(f->t, &f->pot, k, &f->y));
                strux_model_zero(G1);
                assert_strux_ok(strux_task_add_feature(f->t, f->ds, i, &f->y, 1.0, G1));
                assert_close(strux_model_dot(G1, m), strux_task_score(f->t, &f->pot, &f->y), tol);
                assert_strux_ok(strux_task_add_feature(f->t, f->ds, i, &f->truth, -1.0, G1));
                strux_model_zero(G2);
                assert_strux_ok(strux_task_add_delta(f->t, f->ds, i, &f->y, &f->truth, 1.0, G2));
                double *g1 = test_model_flat(G1), *g2 = test_model_flat(G2);
                for (int64_t j = 0; j < n_w; j++) assert_close(g1[j], g2[j], tol);
                free(g1);
                free(g2);
            }
            /* prediction is the best score */
            assert_strux_ok(strux_task_predict(f->t, &f->pot, &f->y));
            strux_query q = strux_query_dir(1, 0);
            double best = brute_oracle(f->t, &f->pot, &f->truth, &q, NULL);
            assert_close(strux_task_score(f->t, &f->pot, &f->y) -
                             strux_task_score(f->t, &f->pot, &f->truth),
                         best, 1e-12);
        }
        strux_model_destroy(&G1);
        strux_model_destroy(&G2);
        strux_model_destroy(&m);
    }
    free(w);
}

static void test_one_label_per_row(void **state)
{
    (void)state;
    strux_task_options to = {.type = "multiclass"};
    strux_task *t;
    strux_dataset *ds = synth_rows("two-labels.svm", 5, 3, 4, 2, 1);
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_fails(strux_task_check(t, ds), STRUX_ERR_INPUT,
                       "two-labels.svm: row 1 has 2 labels; the multiclass task needs exactly one");
    strux_dataset_destroy(&ds);
    ds = synth_sequences("seq.svmhmm", 3, 4, 3, 4, 1);
    assert_strux_fails(strux_task_check(t, ds), STRUX_ERR_INPUT, "seq.svmhmm: holds sequences");
    strux_dataset_destroy(&ds);
    strux_task_destroy(&t);
}

static void set1(strux_label *y, int k)
{
    y->n = 1;
    y->y[0] = k;
}

static void test_metrics_by_hand(void **state)
{
    fixture_state *f = *state;
    double *acc = calloc((size_t)strux_task_eval_size(f->t), sizeof *acc);
    assert_int_equal(strux_task_eval_size(f->t), 2 + 3 * K);
    /* (pred, truth): (0,0) (1,0) (1,1) (2,1): accuracy 1/2; F1 of class 0 = 2/3, class 1 = 1/2,
       class 2 = 0; other classes unseen; macro = (2/3 + 1/2 + 0)/3 */
    const int pairs[4][2] = {{0, 0}, {1, 0}, {1, 1}, {2, 1}};
    for (int p = 0; p < 4; p++) {
        set1(&f->y, pairs[p][0]);
        set1(&f->truth, pairs[p][1]);
        assert_strux_ok(strux_task_eval_add(f->t, &f->y, &f->truth, acc));
    }
    char buf[256];
    {
        strux_scores sc;
        assert_strux_ok(strux_task_eval_report(f->t, acc, &sc));
        strux_scores_format(&sc, buf, sizeof buf);
    }
    assert_string_equal(buf, "\"accuracy\": 0.500000, \"macro_f1\": 0.388889, \"n\": 4");
    assert_strux_ok(strux_task_format_label(f->t, &f->y, buf, sizeof buf));
    assert_string_equal(buf, "2");
    assert_close(strux_task_loss(f->t, &f->y, &f->truth), 1, 0);
    assert_close(strux_task_size(f->t, &f->y), 1, 0);
    free(acc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_matches_enumeration),
        cmocka_unit_test(test_ban_everything),
        cmocka_unit_test(test_features_and_delta),
        cmocka_unit_test(test_one_label_per_row),
        cmocka_unit_test(test_metrics_by_hand),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
