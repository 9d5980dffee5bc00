/* tests/unit/test_io.c - io: model file round trip (weights, names, provenance, curve, config),
 * dataset container round trip and sharded reads identical to the text reader, atomic writes
 * that leave nothing behind on failure, the metrics log, and checkpoints (round trip through the
 * in-memory HDF5 build, shape checks on reading). */
#include "test_common.h"

#include "strux/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_model_round_trip(void **state)
{
    (void)state;
    strux_model *m, *back = NULL;
    assert_strux_ok(strux_model_create(3, 5, 4, STRUX_MODEL_PLAIN, &m));
    double w[3 * 5 + 4];
    for (int64_t k = 0; k < 3 * 5 + 4; k++)
        w[k] = 0.1 * (double)k - 1.0 / 3.0;
    test_model_set_flat(m, w);
    strux_model_info in = {0}, out = {0};
    snprintf(in.task, sizeof in.task, "multilabel");
    snprintf(in.surrogate, sizeof in.surrogate, "margin");
    snprintf(in.search, sizeof in.search, "margin");
    snprintf(in.solver, sizeof in.solver, "sgd");
    snprintf(in.created, sizeof in.created, "2026-01-01T00:00:00Z");
    snprintf(in.version, sizeof in.version, "9.9");
    snprintf(in.git_commit, sizeof in.git_commit, "abc");
    assert_strux_ok(strux_strdup(&in.config, "[solver]\nlambda = 0.5\n"));
    in.n_labels = 3;
    in.n_ranks = 4;
    in.seed = 77;
    in.wall_time_s = 1.5;
    assert_strux_ok(strux_alloc_array(&in.label_names, 3, sizeof *in.label_names));
    assert_strux_ok(strux_strdup(&in.label_names[0], "alpha"));
    assert_strux_ok(strux_strdup(&in.label_names[2], "γ gamma"));
    const char *cols[] = {"epoch", "primal", NULL};
    assert_strux_ok(strux_curve_init(&in.curve, cols));
    for (int e = 1; e <= 3; e++)
        assert_strux_ok(strux_curve_append(&in.curve, (double[]){e, 1.0 / e}));
    char path[512];
    snprintf(path, sizeof path, "%s/m.h5", test_tmpdir());
    assert_strux_ok(strux_io_model_save(path, m, &in));
    assert_strux_ok(strux_io_model_load(path, &back, &out));
    assert_int_equal(strux_model_n_rows(back), 3);
    assert_int_equal(strux_model_dim(back), 5);
    assert_int_equal(strux_model_n_extra(back), 4);
    double got[3 * 5 + 4];
    test_model_get_flat(back, got);
    assert_memory_equal(got, w, sizeof w);
    assert_string_equal(out.task, "multilabel");
    assert_string_equal(out.solver, "sgd");
    assert_string_equal(out.config, in.config);
    assert_string_equal(out.label_names[0], "alpha");
    assert_null(out.label_names[1]);
    assert_string_equal(out.label_names[2], "γ gamma");
    assert_int_equal(out.n_ranks, 4);
    assert_int_equal(out.seed, 77);
    assert_int_equal(out.curve.n_rows, 3);
    assert_int_equal(out.curve.n_cols, 2);
    assert_string_equal(out.curve.names[1], "primal");
    assert_close(out.curve.v[2 * 2 + 1], 1.0 / 3, 0);
    strux_model_destroy(&back);
    strux_model_info_free(&out);

    /* missing directories are created; a directory that cannot exist is an error */
    snprintf(path, sizeof path, "%s/new/dirs/m.h5", test_tmpdir());
    assert_strux_ok(strux_io_model_save(path, m, &in));
    snprintf(path, sizeof path, "%s/sub/m.h5", fixture("good.svm"));
    assert_strux_fails(strux_io_model_save(path, m, &in), STRUX_ERR_IO, "cannot create directory");
    /* not a model */
    assert_strux_fails(strux_io_model_load(fixture("good.svm"), &back, &out), STRUX_ERR_INPUT,
                       "not an HDF5 file");
    strux_model_destroy(&m);
    strux_model_info_free(&in);
}

static void test_dataset_container(void **state)
{
    (void)state;
    strux_read_options one = {.rank = 0, .n_ranks = 1};
    strux_dataset *text = NULL;
    assert_strux_ok(strux_dataset_read_libsvm(shared_data("yeast/yeast_test.svm.gz"), &one, &text));
    char path[512];
    snprintf(path, sizeof path, "%s/yeast_test.h5", test_tmpdir());
    assert_strux_ok(strux_io_dataset_save(path, text));
    assert_true(strux_io_is_hdf5(path));
    /* every shard read from HDF5 equals the same shard read from text */
    for (int R = 1; R <= 3; R++)
        for (int r = 0; r < R; r++) {
            strux_read_options o = {.rank = r, .n_ranks = R, .bias = 1};
            strux_dataset *a = NULL, *b = NULL;
            assert_strux_ok(
                strux_dataset_read_libsvm(shared_data("yeast/yeast_test.svm.gz"), &o, &a));
            assert_strux_ok(strux_io_dataset_load(path, &o, &b));
            assert_int_equal(a->first, b->first);
            assert_int_equal(a->n_local, b->n_local);
            assert_int_equal(a->dim, b->dim);
            assert_int_equal(a->n_labels, b->n_labels);
            int64_t nnz = a->x.ptr[a->n_local];
            assert_memory_equal(a->x.ptr, b->x.ptr, (size_t)(a->n_local + 1) * sizeof *a->x.ptr);
            assert_memory_equal(a->x.col, b->x.col, (size_t)nnz * sizeof *a->x.col);
            assert_memory_equal(a->x.val, b->x.val, (size_t)nnz * sizeof *a->x.val);
            assert_memory_equal(a->y_ptr, b->y_ptr, (size_t)(a->n_local + 1) * sizeof *a->y_ptr);
            assert_memory_equal(a->y_idx, b->y_idx,
                                (size_t)a->y_ptr[a->n_local] * sizeof *a->y_idx);
            strux_dataset_destroy(&a);
            strux_dataset_destroy(&b);
        }
    /* a fixed smaller dimension drops and counts, as the text reader does */
    strux_read_options small = {.rank = 0, .n_ranks = 1, .dim = 100, .drop_above_dim = 1};
    strux_dataset *d = NULL;
    assert_strux_ok(strux_io_dataset_read(path, &small, &d));
    assert_true(d->n_dropped > 0);
    strux_dataset_destroy(&d);
    small.drop_above_dim = 0;
    assert_strux_fails(strux_io_dataset_read(path, &small, &d), STRUX_ERR_INPUT,
                       "exceeds the dimension 100");
    strux_read_options many = {.rank = 0, .n_ranks = 1000};
    assert_strux_fails(strux_io_dataset_read(path, &many, &d), STRUX_ERR_INPUT,
                       "917 examples cannot be shared by 1000 ranks");
    strux_dataset_destroy(&text);
}

static void test_metrics_log(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/metrics.jsonl", test_tmpdir());
    strux_metrics *f = NULL;
    strux_curve c;
    const char *cols[] = {"epoch", "gap", "time_s", NULL};
    assert_strux_ok(strux_curve_init(&c, cols));
    assert_strux_ok(strux_metrics_open(path, 0, &f));
    assert_strux_ok(strux_curve_append(&c, (double[]){1, 0.0 / 0.0, 0.25}));
    assert_strux_ok(strux_metrics_write_row(f, &c));
    strux_metrics_close(&f);
    FILE *in = fopen(path, "r");
    char line[256];
    assert_non_null(fgets(line, sizeof line, in));
    fclose(in);
    assert_string_equal(line, "{\"epoch\": 1, \"gap\": null, \"time_s\": 0.25}\n");
    strux_curve_free(&c);
    snprintf(path, sizeof path, "%s/x.jsonl", fixture("good.svm"));
    assert_strux_fails(strux_metrics_open(path, 0, &f), STRUX_ERR_IO, "cannot create directory");
}

/* Model loading with each allocation failing in turn: NOMEM, nothing leaked, no model returned. */
static void test_model_load_allocation_failures(void **state)
{
    (void)state;
    strux_model *m, *back = NULL;
    assert_strux_ok(strux_model_create(2, 3, 1, STRUX_MODEL_PLAIN, &m));
    strux_model_info in = {0}, out = {0};
    assert_strux_ok(strux_strdup(&in.config, "[task]\ntype = multilabel\n"));
    in.n_labels = 2;
    assert_strux_ok(strux_alloc_array(&in.label_names, 2, sizeof *in.label_names));
    assert_strux_ok(strux_strdup(&in.label_names[1], "b"));
    const char *cols[] = {"epoch", NULL};
    assert_strux_ok(strux_curve_init(&in.curve, cols));
    assert_strux_ok(strux_curve_append(&in.curve, (double[]){1}));
    char path[512];
    snprintf(path, sizeof path, "%s/f.h5", test_tmpdir());
    assert_strux_ok(strux_io_model_save(path, m, &in));
    int64_t before = strux_alloc_calls();
    assert_strux_ok(strux_io_model_load(path, &back, &out));
    int64_t calls = strux_alloc_calls() - before;
    strux_model_destroy(&back);
    strux_model_info_free(&out);
    for (int64_t n = 0; n < calls; n++) {
        size_t bytes = strux_alloc_bytes();
        strux_alloc_fail_after(n);
        assert_strux_fails(strux_io_model_load(path, &back, &out), STRUX_ERR_NOMEM,
                           "out of memory");
        assert_null(back);
        assert_int_equal(strux_alloc_bytes(), bytes);
    }
    strux_alloc_fail_after(-1);
    strux_model_destroy(&m);
    strux_model_info_free(&in);
}

/* A checkpoint round trip (file built in memory, larger than the core driver's 1 MiB step):
 * position, training-space weights and each rank's blob come back exactly; a rank beyond the
 * writers gets the count and no state. */
static void test_checkpoint_round_trip(void **state)
{
    (void)state;
    strux_model *m = NULL, *w_train = NULL, *back = NULL;
    assert_strux_ok(strux_model_create(300, 500, 7, STRUX_MODEL_PLAIN, &m));
    assert_strux_ok(strux_model_create(300, 500, 7, STRUX_MODEL_PLAIN, &w_train));
    int64_t n_w = strux_model_n_w(m);
    double *wm = malloc((size_t)n_w * sizeof *wm), *wt = malloc((size_t)n_w * sizeof *wt);
    for (int64_t k = 0; k < n_w; k++) {
        wm[k] = 1.0 / (double)(k + 1);
        wt[k] = -(double)k;
    }
    test_model_set_flat(m, wm);
    test_model_set_flat(w_train, wt);
    strux_model_info info = {0};
    snprintf(info.task, sizeof info.task, "multilabel");
    const char *cols[] = {"epoch", NULL};
    assert_strux_ok(strux_curve_init(&info.curve, cols));
    assert_strux_ok(strux_curve_append(&info.curve, (double[]){1}));
    char path[512];
    snprintf(path, sizeof path, "%s/c.ckpt.h5", test_tmpdir());
    strux_checkpoint_info ck = {.epoch = 5,
                                .n_ranks = 1,
                                .n_blocks = 2,
                                .n_examples = 3,
                                .train_s = 1.25,
                                .oracle_calls = 99};
    strux_checkpoint_writer *w = NULL;
    strux_blob shared = {0};
    assert_strux_ok(strux_blob_put(&shared, "shared!", 7));
    assert_strux_ok(strux_io_checkpoint_begin(path, m, &info, w_train, &ck, &shared, &w));
    /* the records of examples 0, 1 in one part, of example 2 in another */
    const int64_t off01[3] = {0, 5, 10}, off2[2] = {0, 3};
    assert_strux_fails(strux_io_checkpoint_add_examples(w, 1, 1, off2, "two"), STRUX_ERR_INTERNAL,
                       "records of examples [1, 2) after 0 of 3");
    assert_strux_ok(strux_io_checkpoint_add_examples(w, 0, 2, off01, "zero_one__"));
    assert_strux_ok(strux_io_checkpoint_add_examples(w, 2, 1, off2, "two"));
    assert_strux_ok(strux_io_checkpoint_end(&w, STRUX_OK));
    /* a checkpoint is a model file */
    strux_model_info back_info;
    assert_strux_ok(strux_io_model_load(path, &back, &back_info));
    double *gm = test_model_flat(back);
    assert_memory_equal(gm, wm, (size_t)n_w * sizeof *wm);
    free(gm);
    strux_model_destroy(&back);
    strux_model_info_free(&back_info);
    {
        strux_checkpoint_info got = {0};
        strux_blob blob = {0};
        assert_strux_ok(strux_model_create(300, 500, 7, STRUX_MODEL_PLAIN, &back));
        assert_strux_ok(strux_io_checkpoint_read(path, &got, back, &blob));
        assert_int_equal(got.epoch, 5);
        assert_int_equal(got.n_ranks, 1);
        assert_int_equal(got.n_blocks, 2);
        assert_int_equal(got.oracle_calls, 99);
        double *gt = test_model_flat(back);
        assert_memory_equal(gt, wt, (size_t)n_w * sizeof *wt);
        free(gt);
        assert_int_equal(blob.n, 7);
        assert_memory_equal(blob.data, "shared!", 7);
        assert_int_equal(got.n_examples, 3);
        /* any range, across the writer's parts, appended after what the blob holds */
        strux_blob b = {0};
        int64_t off[3];
        assert_strux_ok(strux_blob_put(&b, "xy", 2));
        assert_strux_ok(strux_io_checkpoint_read_examples(path, 1, 2, off, &b));
        assert_int_equal(b.n, 10);
        assert_memory_equal(b.data, "xyone__two", 10);
        assert_int_equal(off[0], 2);
        assert_int_equal(off[1], 7);
        assert_int_equal(off[2], 10);
        assert_strux_fails(strux_io_checkpoint_read_examples(path, 2, 2, off, &b), STRUX_ERR_INPUT,
                           "holds the state of 3 examples, not of examples 3..4");
        strux_blob_free(&b);
        strux_checkpoint_info peek = {0};
        assert_strux_ok(strux_io_checkpoint_peek(path, &peek));
        assert_int_equal(peek.n_blocks, 2);
        assert_int_equal(peek.epoch, 5);
        strux_blob_free(&blob);
        strux_model_destroy(&back);
    }
    /* a model of another shape is refused with both sizes */
    strux_blob blob = {0};
    strux_checkpoint_info got = {0};
    assert_strux_ok(strux_model_create(300, 499, 7, STRUX_MODEL_PLAIN, &back));
    assert_strux_fails(strux_io_checkpoint_read(path, &got, back, &blob), STRUX_ERR_INPUT,
                       "dataset 'weights' is 300 x 500; this model has 300 x 499");
    strux_blob_free(&blob);
    strux_model_destroy(&back);
    /* a failed write leaves nothing: no file, no temporary */
    snprintf(path, sizeof path, "%s/failed.ckpt.h5", test_tmpdir());
    assert_strux_ok(strux_io_checkpoint_begin(path, m, &info, w_train, &ck, &shared, &w));
    assert_strux_ok(strux_io_checkpoint_add_examples(w, 0, 1, off2, "xyz"));
    assert_strux_fails(strux_io_checkpoint_end(&w, STRUX_OK), STRUX_ERR_INTERNAL,
                       "records of 1 of 3 examples written");
    strux_blob_free(&shared);
    assert_int_not_equal(access(path, F_OK), 0);
    char tmp[600];
    strux_io_temp_name(path, tmp, sizeof tmp);
    assert_int_not_equal(access(tmp, F_OK), 0);
    strux_model_destroy(&m);
    strux_model_destroy(&w_train);
    free(wm);
    free(wt);
    strux_model_info_free(&info);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_round_trip),
        cmocka_unit_test(test_dataset_container),
        cmocka_unit_test(test_metrics_log),
        cmocka_unit_test(test_model_load_allocation_failures),
        cmocka_unit_test(test_checkpoint_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
