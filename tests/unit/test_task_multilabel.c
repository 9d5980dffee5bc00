/* tests/unit/test_task_multilabel.c - the multilabel task against brute-force enumeration:
 * direction oracle for random potentials and directions, loss and score, Δφ against two feature
 * maps, metrics against hand counts, label text. Also the registry's error for unknown names. */
#include "test_common.h"

#include "brute.h"
#include "strux/task.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture_state {
    strux_dataset *ds;
    strux_task *t;
} fixture_state;

static int setup(void **state)
{
    fixture_state *f = calloc(1, sizeof *f);
    strux_read_options o = {.rank = 0, .n_ranks = 1, .bias = 1};
    if (strux_dataset_read_libsvm(shared_data("yeast/yeast_train.svm.gz"), &o, &f->ds)) return -1;
    strux_task_options to = {.type = "multilabel"};
    if (strux_task_create(&to, &f->t) || strux_task_check(f->t, f->ds)) return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_state *f = *state;
    strux_task_destroy(&f->t);
    strux_dataset_destroy(&f->ds);
    free(f);
    return 0;
}

static void test_registry_unknown_name(void **state)
{
    (void)state;
    strux_task_options to = {.type = "nosuchtask"};
    strux_task *t = NULL;
    assert_strux_fails(strux_task_create(&to, &t), STRUX_ERR_CONFIG,
                       "task.type = 'nosuchtask' is unknown; valid types: multilabel");
    assert_null(t);
}

static void test_oracle_matches_enumeration(void **state)
{
    fixture_state *f = *state;
    strux_pot pot;
    strux_label truth, y, best;
    assert_strux_ok(strux_task_pot_alloc(f->t, f->ds, &pot));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &truth));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &y));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &best));
    const double dirs[][3] = {{1, 1, 0},    {1, 0, 0},  {1, 0.3, 0},   {1, 7, 0},
                              {1e-9, 1, 0}, {0.5, 2, 0}, {1, 1, -0.4}, {1, 1, 2.5}};
    strux_model *m;
    assert_strux_ok(strux_model_create(14, f->ds->dim, 0, &m));
    for (int i = 0; i < 40; i++) {
        assert_strux_ok(strux_task_potentials(f->t, m, f->ds, i, &pot));
        assert_int_equal(strux_task_label_count(f->t, &pot), 16384);
        random_potentials(&pot, 14, 1.0 + i % 3, (uint64_t)i);
        assert_strux_ok(strux_task_truth(f->t, f->ds, i, &truth));
        for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
            strux_query q = strux_query_dir(dirs[d][0], dirs[d][1]);
            q.c = dirs[d][2];
            strux_answer a;
            assert_strux_ok(strux_task_oracle(f->t, &pot, &truth, &q, &y, &a));
            double want = brute_oracle(f->t, &pot, &truth, &q, &best);
            assert_true(a.found);
            assert_close(q.a * a.m + q.b * a.g + q.c * a.size, want, 1e-12);
            assert_close(a.size, strux_task_size(f->t, &y), 0);
            double m2, g2;
            brute_point(f->t, &pot, &truth, &y, &m2, &g2);
            assert_close(a.m, m2, 1e-12); /* the reported pair is the label's */
            assert_close(a.g, g2, 0);
        }
    }
    assert_int_equal(strux_task_oracle_calls(f->t), 40 * 8);
    strux_model_destroy(&m);
    strux_pot_free(&pot);
    strux_label_free(&truth);
    strux_label_free(&y);
    strux_label_free(&best);
}

static void test_potentials_and_delta(void **state)
{
    fixture_state *f = *state;
    strux_model *m;
    assert_strux_ok(strux_model_create(14, f->ds->dim, 0, &m));
    strux_rng r;
    strux_rng_init(&r, 5, 0, 0);
    for (int64_t k = 0; k < m->n_w; k++) m->w[k] = strux_rng_normal(&r);
    strux_pot pot;
    strux_label truth, y;
    assert_strux_ok(strux_task_pot_alloc(f->t, f->ds, &pot));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &truth));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &y));
    double *G1 = calloc((size_t)m->n_w, sizeof *G1), *G2 = calloc((size_t)m->n_w, sizeof *G2);
    for (int i = 0; i < 20; i++) {
        assert_strux_ok(strux_task_potentials(f->t, m, f->ds, i, &pot));
        assert_strux_ok(strux_task_truth(f->t, f->ds, i, &truth));
        assert_strux_ok(strux_task_label_at(f->t, &pot, 12345 + 97 * i, &y));
        /* w·φ(x, y) from an explicit feature map equals the score from the potentials */
        memset(G1, 0, (size_t)m->n_w * sizeof *G1);
        assert_strux_ok(strux_task_add_feature(f->t, f->ds, i, &y, 1.0, G1));
        double f_y = 0;
        for (int64_t k = 0; k < m->n_w; k++) f_y += G1[k] * m->w[k];
        assert_close(strux_task_score(f->t, &pot, &y), f_y, 1e-10);
        /* add_delta = φ(y) − φ(y_i) */
        assert_strux_ok(strux_task_add_feature(f->t, f->ds, i, &truth, -1.0, G1));
        memset(G2, 0, (size_t)m->n_w * sizeof *G2);
        assert_strux_ok(strux_task_add_delta(f->t, f->ds, i, &y, &truth, 1.0, G2));
        for (int64_t k = 0; k < m->n_w; k++) assert_close(G1[k], G2[k], 1e-12);
    }
    free(G1);
    free(G2);
    strux_model_destroy(&m);
    strux_pot_free(&pot);
    strux_label_free(&truth);
    strux_label_free(&y);
}

static void set_label(strux_label *y, int n, const int *bits)
{
    y->n = n;
    for (int k = 0; k < n; k++) y->y[k] = bits[k];
}

static void test_metrics_by_hand(void **state)
{
    (void)state;
    strux_task_options to = {.type = "multilabel"};
    strux_task *t;
    assert_strux_ok(strux_task_create(&to, &t));
    strux_dataset ds = {.n_labels = 3, .path = "x"};
    assert_strux_ok(strux_task_check(t, &ds));
    strux_label p, r;
    assert_strux_ok(strux_label_alloc(&p, 3, 0));
    assert_strux_ok(strux_label_alloc(&r, 3, 0));
    double acc[4 + 9] = {0};
    /* ex 1: pred {0,1} truth {0,2}: tp 1 fp 1 fn 1; ex 2: pred {} truth {}: exact */
    set_label(&p, 3, (int[]){1, 1, 0});
    set_label(&r, 3, (int[]){1, 0, 1});
    assert_strux_ok(strux_task_eval_add(t, &p, &r, acc));
    set_label(&p, 3, (int[]){0, 0, 0});
    set_label(&r, 3, (int[]){0, 0, 0});
    assert_strux_ok(strux_task_eval_add(t, &p, &r, acc));
    assert_int_equal(strux_task_eval_size(t), 13);
    char buf[512];
    assert_strux_ok(strux_task_eval_report(t, acc, buf, sizeof buf));
    /* hamming 2/6; subset 1/2; micro 2/(2+1+1) = .5; macro (1 + 0 + 0)/3; example (0.5 + 1)/2 */
    assert_string_equal(buf, "\"hamming_loss\": 0.333333, \"subset_accuracy\": 0.500000, "
                             "\"micro_f1\": 0.500000, \"macro_f1\": 0.333333, "
                             "\"example_f1\": 0.750000, \"n\": 2");
    assert_close(strux_task_loss(t, &p, &r), 0, 0);
    set_label(&p, 3, (int[]){1, 0, 1});
    assert_strux_ok(strux_task_format_label(t, &p, buf, sizeof buf));
    assert_string_equal(buf, "0,2");
    set_label(&p, 3, (int[]){0, 0, 0});
    assert_strux_ok(strux_task_format_label(t, &p, buf, sizeof buf));
    assert_string_equal(buf, "");
    strux_label_free(&p);
    strux_label_free(&r);
    strux_task_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_unknown_name),
        cmocka_unit_test(test_oracle_matches_enumeration),
        cmocka_unit_test(test_potentials_and_delta),
        cmocka_unit_test(test_metrics_by_hand),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
