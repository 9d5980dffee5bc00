/* tests/unit/test_data.c - data: the LIBSVM/XMC reader (content, header, gzip, bias, dropped
 * features), one fixture per bad-input case asserting status and message, the nnz-balanced
 * partition, and label names. */
#include "test_common.h"

#include "strux/data.h"

#include <string.h>

static strux_read_options one_rank(void)
{
    strux_read_options o = {.rank = 0, .n_ranks = 1};
    return o;
}

static void check_good(const strux_dataset *ds)
{
    assert_int_equal(ds->n_global, 5);
    assert_int_equal(ds->n_local, 5);
    assert_int_equal(ds->dim, 7);
    assert_int_equal(ds->n_labels, 3);
    /* row 0: 0,2 1:0.5 3:-1.25 7:2 */
    assert_int_equal(ds->x.ptr[1], 3);
    assert_int_equal(ds->x.col[0], 0);
    assert_int_equal(ds->x.col[2], 6);
    assert_true(ds->x.val[1] == -1.25f);
    assert_int_equal(ds->y_ptr[1], 2);
    assert_int_equal(ds->y_idx[0], 0);
    assert_int_equal(ds->y_idx[1], 2);
    /* row 1 has no labels */
    assert_int_equal(ds->y_ptr[2] - ds->y_ptr[1], 0);
    /* row 3: "2,0" is stored sorted */
    assert_int_equal(ds->y_idx[ds->y_ptr[3]], 0);
    assert_int_equal(ds->y_idx[ds->y_ptr[3] + 1], 2);
    assert_true(ds->x.val[ds->x.ptr[4]] == 1e-3f);
}

static void test_read_plain_gzip_header(void **state)
{
    (void)state;
    strux_read_options o = one_rank();
    const char *files[] = {"good.svm", "good.svm.gz", "header.svm"};
    for (int f = 0; f < 3; f++) {
        strux_dataset *ds = NULL;
        assert_strux_ok(strux_dataset_read_libsvm(fixture(files[f]), &o, &ds));
        if (f < 2)
            check_good(ds);
        else {
            assert_int_equal(ds->n_labels, 4); /* from the header, not the data */
            assert_int_equal(ds->dim, 7);
        }
        strux_dataset_destroy(&ds);
        assert_null(ds);
    }
}

static void test_bias_and_dropped_features(void **state)
{
    (void)state;
    strux_read_options o = one_rank();
    o.bias = 1.0;
    o.dim = 5;
    o.n_labels = 3;
    o.drop_above_dim = 1;
    strux_dataset *ds = NULL;
    assert_strux_ok(strux_dataset_read_libsvm(fixture("good.svm"), &o, &ds));
    assert_int_equal(ds->dim, 6);
    assert_int_equal(ds->bias_col, 5);
    assert_int_equal(ds->n_dropped, 2); /* 7:2 and 6:4 */
    /* row 0 keeps 1 and 3, then the bias */
    assert_int_equal(ds->x.ptr[1], 3);
    assert_int_equal(ds->x.col[2], 5);
    assert_true(ds->x.val[2] == 1.0f);
    strux_dataset_destroy(&ds);
    /* without drop_above_dim the same is an error naming the line */
    o.drop_above_dim = 0;
    assert_strux_fails(strux_dataset_read_libsvm(fixture("good.svm"), &o, &ds), STRUX_ERR_INPUT,
                       "good.svm:1: feature index 7 exceeds the dimension 5 set in the config");
    assert_null(ds);
}

typedef struct bad_case {
    const char *file;
    const char *needle;
    int n_ranks;
    int32_t n_labels;
} bad_case;

static const bad_case bad_cases[] = {
    {"bad_token.svm", "bad_token.svm:2: malformed value in feature '3:abc'", 1, 0},
    {"bad_index_zero.svm", "bad_index_zero.svm:2: feature index 0 in '0:1.0' must be >= 1", 1, 0},
    {"bad_index_negative.svm", "bad_index_negative.svm:1: feature index -2", 1, 0},
    {"bad_order.svm", "bad_order.svm:3: feature index 2 after 3; indices must ascend", 1, 0},
    {"bad_duplicate.svm", "bad_duplicate.svm:1: duplicate feature index 2", 1, 0},
    {"bad_nan.svm", "bad_nan.svm:2: feature 2 has a non-finite value 'nan'", 1, 0},
    {"bad_inf.svm", "bad_inf.svm:2: feature 2 has a non-finite value '-inf'", 1, 0},
    {"bad_float_overflow.svm", "bad_float_overflow.svm:2: feature 3 has a non-finite value", 1, 0},
    {"empty.svm", "empty.svm: no examples (the file is empty)", 1, 0},
    {"bad_label.svm", "bad_label.svm:2: malformed label list 'a,b'", 1, 0},
    {"bad_label_duplicate.svm", "bad_label_duplicate.svm:1: label 1 appears twice", 1, 0},
    {"bad_label_comma.svm", "bad_label_comma.svm:2: label list '1,' ends with ','", 1, 0},
    {"bad_header_count.svm",
     "bad_header_count.svm:1: header announces 3 examples but the file "
     "has 2",
     1, 0},
    {"bad_header_dim.svm",
     "bad_header_dim.svm:3: feature index 5 exceeds the dimension 3 given "
     "by the header",
     1, 0},
    {"bad_label_range.svm",
     "bad_label_range.svm:3: label 5 is out of range: the label count is "
     "2",
     1, 0},
    {"two_rows.svm", "two_rows.svm:2: label 1 is out of range: the label count is 1", 1, 1},
    {"bad_empty_line.svm", "bad_empty_line.svm:2: empty line", 1, 0},
    {"bad_missing_colon.svm", "bad_missing_colon.svm:1: malformed feature '1'", 1, 0},
    {"two_rows.svm", "two_rows.svm: 2 examples cannot be shared by 4 ranks", 4, 0},
    {"does-not-exist.svm", "does-not-exist.svm: cannot open for reading", 1, 0},
    {"bad_nul.svm", "bad_nul.svm:2: NUL byte at column 6", 1, 0},
    {"bad_absurd.svm", "bad_absurd.svm:2: feature 2 has an absurd value '5e30' (|value| > 1e+30)",
     1, 0},
};

static void test_bad_inputs(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof bad_cases / sizeof *bad_cases; k++) {
        const bad_case *c = &bad_cases[k];
        for (int rank = 0; rank < c->n_ranks; rank++) { /* the same error on every rank */
            strux_read_options o = {.rank = rank, .n_ranks = c->n_ranks, .n_labels = c->n_labels};
            strux_dataset *ds = NULL;
            size_t bytes = strux_alloc_bytes();
            assert_strux_fails(strux_dataset_read_libsvm(fixture(c->file), &o, &ds),
                               STRUX_ERR_INPUT, c->needle);
            assert_null(ds);
            assert_int_equal(strux_alloc_bytes(), bytes); /* nothing leaked on the error path */
        }
    }
}

static void test_shards_cover_and_balance(void **state)
{
    (void)state;
    /* yeast: every rank count gives disjoint contiguous shards covering all rows */
    for (int R = 1; R <= 5; R++) {
        int64_t next = 0, total_nnz = 0, max_nnz = 0;
        for (int r = 0; r < R; r++) {
            strux_read_options o = {.rank = r, .n_ranks = R};
            strux_dataset *ds = NULL;
            assert_strux_ok(
                strux_dataset_read_libsvm(shared_data("yeast/yeast_train.svm.gz"), &o, &ds));
            assert_int_equal(ds->first, next);
            assert_true(ds->n_local > 0);
            next += ds->n_local;
            int64_t nnz = ds->x.ptr[ds->n_local];
            total_nnz += nnz;
            if (nnz > max_nnz) max_nnz = nnz;
            assert_int_equal(ds->n_labels, 14);
            assert_int_equal(ds->dim, 103);
            strux_dataset_destroy(&ds);
        }
        assert_int_equal(next, 1500);
        assert_true(max_nnz <= total_nnz / R + 2 * 103 + 2); /* within about one row of even */
    }
}

static void test_shard_range_edge_cases(void **state)
{
    (void)state;
    /* one heavy unit must not leave a rank empty */
    int64_t prefix[] = {0, 1000, 1001, 1002, 1003};
    int64_t lo, hi, next = 0;
    for (int r = 0; r < 4; r++) {
        assert_strux_ok(strux_shard_range(prefix, 4, r, 4, &lo, &hi));
        assert_int_equal(lo, next);
        assert_int_equal(hi - lo, 1);
        next = hi;
    }
    for (int r = 0; r < 2; r++) {
        assert_strux_ok(strux_shard_range(prefix, 4, r, 2, &lo, &hi));
        assert_true(hi > lo);
    }
    assert_strux_fails(strux_shard_range(prefix, 4, 0, 5, &lo, &hi), STRUX_ERR_INPUT,
                       "4 examples cannot be shared by 5 ranks");
}

static void test_label_names(void **state)
{
    (void)state;
    char **names = NULL;
    assert_strux_ok(strux_label_names_read(shared_data("yeast/labels.txt"), 14, &names));
    assert_string_equal(names[0], "Class1");
    assert_string_equal(names[13], "Class14");
    strux_label_names_free(&names, 14);
    assert_null(names);
    assert_strux_fails(strux_label_names_read(shared_data("yeast/labels.txt"), 5, &names),
                       STRUX_ERR_INPUT, "labels.txt:6: label id 5 is not below the label count 5");
}

/* Every allocation of a read fails in turn: the reader reports STRUX_ERR_NOMEM and frees all it
 * took (STYLE.md §10 fault injection). */
static void test_allocation_failures_do_not_leak(void **state)
{
    (void)state;
    strux_read_options o = {.rank = 1, .n_ranks = 2, .bias = 1};
    strux_dataset *ds = NULL;
    int64_t before = strux_alloc_calls();
    assert_strux_ok(strux_dataset_read_libsvm(fixture("good.svm.gz"), &o, &ds));
    int64_t calls = strux_alloc_calls() - before;
    strux_dataset_destroy(&ds);
    assert_true(calls > 5);
    for (int64_t n = 0; n < calls; n++) {
        size_t bytes = strux_alloc_bytes();
        strux_alloc_fail_after(n);
        assert_strux_fails(strux_dataset_read_libsvm(fixture("good.svm.gz"), &o, &ds),
                           STRUX_ERR_NOMEM, "out of memory");
        assert_null(ds);
        assert_int_equal(strux_alloc_bytes(), bytes);
    }
    strux_alloc_fail_after(-1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_plain_gzip_header),
        cmocka_unit_test(test_bias_and_dropped_features),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_shards_cover_and_balance),
        cmocka_unit_test(test_shard_range_edge_cases),
        cmocka_unit_test(test_label_names),
        cmocka_unit_test(test_allocation_failures_do_not_leak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
