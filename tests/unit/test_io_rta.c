/* tests/unit/test_io_rta.c - the rta tree ensemble in model files (src/io/model_rta.c, the task's
 * strux_task_trees / strux_task_set_trees): a model saved with the trees of task.tree_seed = 1
 * loads them back array for array; a task created with another seed but given the file's trees
 * predicts exactly as the task that trained (while its own draw has other trees); trees that are
 * not spanning or disagree with the stored union edges, and data with another label count, are
 * refused with messages naming what is wrong; a model of another task has no /rta. */
#include "test_common.h"

#include "strux/io.h"
#include "synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static strux_task *create(int64_t seed)
{
    strux_task_options to;
    assert_strux_ok(strux_opt_defaults(strux_task_opt_specs, &to));
    snprintf(to.type, sizeof to.type, "rta");
    to.trees = 4;
    to.kbest = 3;
    to.tree_seed = seed;
    strux_task *t;
    assert_strux_ok(strux_task_create(&to, &t));
    return t;
}

/* Predictions of every example of ds under model m into y (n labels). */
static void predict_all(strux_task *t, const strux_model *m, const strux_dataset *ds,
                        strux_label *y)
{
    strux_pot pot;
    assert_strux_ok(strux_task_pot_alloc(t, ds, &pot));
    for (int64_t i = 0; i < ds->n_local; i++) {
        assert_strux_ok(strux_task_potentials(t, m, ds, i, &pot));
        assert_strux_ok(strux_task_predict(t, &pot, &y[i]));
    }
    strux_pot_free(&pot);
}

static void random_weights(strux_model *m, uint64_t seed)
{
    strux_rng r;
    strux_rng_init(&r, seed, 0, 0);
    double *w = test_model_flat(m);
    for (int64_t k = 0; k < strux_model_n_w(m); k++)
        w[k] = strux_rng_normal(&r);
    test_model_set_flat(m, w);
    free(w);
}

static void test_trees_round_trip_and_rebuild(void **state)
{
    (void)state;
    strux_dataset *ds = synth_rows("rows", 30, 5, 7, 0, 5);
    strux_task *t1 = create(1), *t2 = create(2), *t3 = create(2);
    assert_strux_ok(strux_task_check(t1, ds));
    int32_t rows;
    int64_t extra;
    assert_strux_ok(strux_task_model_shape(t1, ds, &rows, &extra));
    strux_model *m;
    assert_strux_ok(strux_model_create(rows, ds->dim, extra, STRUX_MODEL_PLAIN, &m));
    random_weights(m, 9);
    strux_model_info info = {0};
    snprintf(info.task, sizeof info.task, "rta");
    info.n_labels = ds->n_labels;
    assert_strux_ok(strux_task_trees(t1, &info.trees));
    assert_int_equal(info.trees.n_trees, 4);
    char path[512];
    snprintf(path, sizeof path, "%s/rta.h5", test_tmpdir());
    assert_strux_ok(strux_io_model_save(path, m, &info));
    strux_model *m2;
    strux_model_info in2;
    assert_strux_ok(strux_io_model_load(path, &m2, &in2));
    const strux_tree_set *a = &info.trees, *b = &in2.trees;
    assert_int_equal(a->n_trees, b->n_trees);
    assert_int_equal(a->n_labels, b->n_labels);
    assert_int_equal(a->n_edges, b->n_edges);
    assert_int_equal(b->kbest, 3);
    assert_int_equal(b->tree_seed, 1);
    assert_string_equal(b->sampler, "uniform");
    assert_memory_equal(a->trees, b->trees, (size_t)a->n_trees * (a->n_labels - 1) * 2 * 4);
    assert_memory_equal(a->edges, b->edges, (size_t)a->n_edges * 2 * 4);
    assert_memory_equal(a->mult, b->mult, (size_t)a->n_edges * 4);

    /* seed 2 given the file's trees predicts as the seed-1 task that wrote them */
    assert_strux_ok(strux_task_set_trees(t2, b));
    assert_strux_ok(strux_task_check(t2, ds));
    assert_strux_ok(strux_task_check(t3, ds));
    strux_tree_set own = {0};
    assert_strux_ok(strux_task_trees(t3, &own));
    assert_true(own.n_edges != a->n_edges ||
                memcmp(own.edges, a->edges, (size_t)a->n_edges * 2 * 4) != 0);
    strux_tree_set_free(&own);
    strux_label y1[30], y2[30];
    for (int k = 0; k < 30; k++) {
        assert_strux_ok(strux_task_label_alloc(t1, ds, &y1[k]));
        assert_strux_ok(strux_task_label_alloc(t1, ds, &y2[k]));
    }
    predict_all(t1, m, ds, y1);
    predict_all(t2, m2, ds, y2);
    for (int k = 0; k < 30; k++) {
        assert_true(strux_label_equal(&y1[k], &y2[k]));
        strux_label_free(&y1[k]);
        strux_label_free(&y2[k]);
    }

    /* data with another label count */
    strux_dataset *other = synth_rows("other.svm", 5, 5, 6, 0, 6);
    assert_int_equal(strux_task_check(t2, other), STRUX_ERR_INPUT);
    assert_non_null(strstr(strux_error_message(), "6 labels where the task's trees span 7"));
    strux_dataset_destroy(&other);

    /* a tree edge turned into a loop; union edges that disagree with the trees */
    strux_task *t4 = create(1), *t5 = create(1);
    in2.trees.trees[1] = in2.trees.trees[0];
    assert_int_equal(strux_task_set_trees(t4, &in2.trees), STRUX_ERR_INPUT);
    print_message("# loop edge: %s\n", strux_error_message());
    in2.trees.trees[1] = a->trees[1];
    in2.trees.mult[0] += 1;
    assert_int_equal(strux_task_set_trees(t5, &in2.trees), STRUX_ERR_INPUT);
    assert_non_null(strstr(strux_error_message(), "disagree"));
    strux_task_destroy(&t4);
    strux_task_destroy(&t5);

    strux_model_info_free(&info);
    strux_model_info_free(&in2);
    strux_model_destroy(&m);
    strux_model_destroy(&m2);
    strux_task_destroy(&t1);
    strux_task_destroy(&t2);
    strux_task_destroy(&t3);
    strux_dataset_destroy(&ds);
}

static void test_other_tasks_have_no_trees(void **state)
{
    (void)state;
    strux_task_options to;
    assert_strux_ok(strux_opt_defaults(strux_task_opt_specs, &to));
    snprintf(to.type, sizeof to.type, "multilabel");
    strux_task *t;
    assert_strux_ok(strux_task_create(&to, &t));
    strux_tree_set ts;
    assert_strux_ok(strux_task_trees(t, &ts));
    assert_int_equal(ts.n_trees, 0);
    assert_int_equal(strux_task_set_trees(t, &ts), STRUX_ERR_UNSUPPORTED);
    strux_model *m;
    assert_strux_ok(strux_model_create(3, 4, 0, STRUX_MODEL_PLAIN, &m));
    strux_model_info info = {0}, in2;
    char path[512];
    snprintf(path, sizeof path, "%s/ml.h5", test_tmpdir());
    assert_strux_ok(strux_io_model_save(path, m, &info));
    strux_model *m2;
    assert_strux_ok(strux_io_model_load(path, &m2, &in2));
    assert_int_equal(in2.trees.n_trees, 0);
    strux_model_info_free(&in2);
    strux_model_destroy(&m);
    strux_model_destroy(&m2);
    strux_task_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trees_round_trip_and_rebuild),
        cmocka_unit_test(test_other_tasks_have_no_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
