/* tests/unit/test_data_svmhmm.c - the SVM-hmm sequence reader: content of a small file (plain and
 * gzip, comments, 1-based tags stored 0-based, sequences grouped by qid), bias and dimension
 * handling as in the LIBSVM reader, the partition of whole sequences over ranks, one fixture per
 * bad-input case asserting status and message, and the loader's choice of format by content. */
#include "test_common.h"

#include "strux/data.h"
#include "strux/io.h"

#include <string.h>

static strux_read_options one_rank(void)
{
    strux_read_options o = {.rank = 0, .n_ranks = 1};
    return o;
}

static void check_good(const strux_dataset *ds)
{
    /* qids 1, 4, 9 hold 3, 2 and 1 tokens */
    assert_int_equal(ds->n_global, 3);
    assert_int_equal(ds->n_local, 3);
    assert_int_equal(ds->first, 0);
    assert_int_equal(ds->x.n_rows, 6);
    assert_non_null(ds->ex_ptr);
    const int64_t ex[4] = {0, 3, 5, 6};
    for (int i = 0; i < 4; i++)
        assert_int_equal(ds->ex_ptr[i], ex[i]);
    assert_int_equal(ds->dim, 7);
    assert_int_equal(ds->n_labels, 3);
    const int32_t tags[6] = {1, 0, 2, 0, 1, 0};
    for (int r = 0; r < 6; r++) {
        assert_int_equal(ds->y_ptr[r + 1] - ds->y_ptr[r], 1);
        assert_int_equal(ds->y_idx[ds->y_ptr[r]], tags[r]);
    }
    /* token 0: 1:0.5 3:-1.25; token 4 has no features; token 3: 1:1e-3 */
    assert_int_equal(ds->x.ptr[1], 2);
    assert_int_equal(ds->x.col[0], 0);
    assert_int_equal(ds->x.col[1], 2);
    assert_true(ds->x.val[1] == -1.25f);
    assert_int_equal(ds->x.ptr[5] - ds->x.ptr[4], 0);
    assert_true(ds->x.val[ds->x.ptr[3]] == 1e-3f);
    assert_int_equal(ds->bias_col, -1);
}

static void test_read_plain_and_gzip(void **state)
{
    (void)state;
    strux_read_options o = one_rank();
    const char *files[] = {"hmm_good.svmhmm", "hmm_good.svmhmm.gz"};
    for (int f = 0; f < 2; f++) {
        strux_dataset *ds = NULL;
        assert_strux_ok(strux_dataset_read_svmhmm(fixture(files[f]), &o, &ds));
        check_good(ds);
        strux_dataset_destroy(&ds);
        assert_null(ds);
    }
}

static void test_bias_dim_and_tag_count(void **state)
{
    (void)state;
    strux_read_options o = one_rank();
    o.bias = 2.0;
    strux_dataset *ds = NULL;
    assert_strux_ok(strux_dataset_read_svmhmm(fixture("hmm_good.svmhmm"), &o, &ds));
    assert_int_equal(ds->dim, 8);
    assert_int_equal(ds->bias_col, 7);
    for (int64_t r = 0; r < ds->x.n_rows; r++) { /* every token ends with the bias */
        assert_int_equal(ds->x.col[ds->x.ptr[r + 1] - 1], 7);
        assert_true(ds->x.val[ds->x.ptr[r + 1] - 1] == 2.0f);
    }
    strux_dataset_destroy(&ds);
    /* features above a given dimension: dropped and counted, or an error */
    o = one_rank();
    o.dim = 4;
    o.drop_above_dim = 1;
    assert_strux_ok(strux_dataset_read_svmhmm(fixture("hmm_good.svmhmm"), &o, &ds));
    assert_int_equal(ds->dim, 4);
    assert_int_equal(ds->n_dropped, 2);
    assert_int_equal(ds->x.ptr[ds->x.n_rows], 5);
    strux_dataset_destroy(&ds);
    o.drop_above_dim = 0;
    assert_strux_fails(strux_dataset_read_svmhmm(fixture("hmm_good.svmhmm"), &o, &ds),
                       STRUX_ERR_INPUT,
                       "hmm_good.svmhmm:4: feature index 7 exceeds the dimension 4");
    o = one_rank();
    o.n_labels = 2;
    assert_strux_fails(strux_dataset_read_svmhmm(fixture("hmm_good.svmhmm"), &o, &ds),
                       STRUX_ERR_INPUT,
                       "hmm_good.svmhmm:4: tag 3 is out of range: the tag count is 2 (tags 1..2)");
    o.n_labels = 5; /* a larger tag count than the data uses is kept */
    assert_strux_ok(strux_dataset_read_svmhmm(fixture("hmm_good.svmhmm"), &o, &ds));
    assert_int_equal(ds->n_labels, 5);
    strux_dataset_destroy(&ds);
}

/* Whole sequences per rank, contiguous and covering the file, at 2 and 3 ranks. */
static void test_partition_by_sequences(void **state)
{
    (void)state;
    for (int R = 2; R <= 3; R++) {
        int64_t next = 0, tokens = 0;
        for (int rank = 0; rank < R; rank++) {
            strux_read_options o = {.rank = rank, .n_ranks = R};
            strux_dataset *ds = NULL;
            assert_strux_ok(strux_dataset_read_svmhmm(fixture("hmm_good.svmhmm"), &o, &ds));
            assert_int_equal(ds->first, next);
            assert_true(ds->n_local >= 1);
            assert_int_equal(ds->ex_ptr[0], 0);
            assert_int_equal(ds->ex_ptr[ds->n_local], ds->x.n_rows);
            assert_int_equal(ds->n_global, 3);
            next += ds->n_local;
            tokens += ds->x.n_rows;
            strux_dataset_destroy(&ds);
        }
        assert_int_equal(next, 3);
        assert_int_equal(tokens, 6);
    }
    strux_read_options o = {.rank = 0, .n_ranks = 4};
    strux_dataset *ds = NULL;
    assert_strux_fails(strux_dataset_read_svmhmm(fixture("hmm_good.svmhmm"), &o, &ds),
                       STRUX_ERR_INPUT, "hmm_good.svmhmm: 3 sequences cannot be shared by 4 ranks");
}

static void test_bad_inputs(void **state)
{
    (void)state;
    const struct {
        const char *file, *message;
    } cases[] = {
        {"hmm_bad_token.svmhmm", "hmm_bad_token.svmhmm:2: malformed value in feature '3:abc'"},
        {"hmm_bad_index_zero.svmhmm",
         "hmm_bad_index_zero.svmhmm:2: feature index 0 in '0:1.0' must be >= 1"},
        {"hmm_bad_order.svmhmm", "hmm_bad_order.svmhmm:1: feature index 2 after 3; indices must "
                                 "ascend"},
        {"hmm_bad_duplicate.svmhmm", "hmm_bad_duplicate.svmhmm:1: duplicate feature index 2"},
        {"hmm_bad_nan.svmhmm", "hmm_bad_nan.svmhmm:2: feature 2 has a non-finite value 'nan'"},
        {"hmm_bad_inf.svmhmm", "hmm_bad_inf.svmhmm:2: feature 2 has a non-finite value '-inf'"},
        {"hmm_empty.svmhmm", "hmm_empty.svmhmm: no tokens (the file is empty)"},
        {"hmm_bad_qid_order.svmhmm",
         "hmm_bad_qid_order.svmhmm:3: qid 1 after qid 2 (line 2): the tokens of a sequence must "
         "be consecutive and qids must ascend"},
        {"hmm_bad_tag_zero.svmhmm",
         "hmm_bad_tag_zero.svmhmm:2: tag 0 is out of range: SVM-hmm tags are 1-based"},
        {"hmm_bad_no_qid.svmhmm", "hmm_bad_no_qid.svmhmm:2: expected qid:n after the tag, got "
                                  "'1:1'"},
        {"hmm_bad_tag.svmhmm", "hmm_bad_tag.svmhmm:2: malformed tag 'B'"},
        {"hmm_bad_empty_line.svmhmm", "hmm_bad_empty_line.svmhmm:2: empty line"},
        {"no-such-file.svmhmm", "no-such-file.svmhmm: cannot open for reading"},
        {"hmm_bad_nul.svmhmm", "hmm_bad_nul.svmhmm:3: NUL byte at column 12"},
        {"hmm_bad_absurd.svmhmm", "hmm_bad_absurd.svmhmm:2: feature 3 has an absurd value '-7e35'"},
    };
    strux_read_options o = one_rank();
    size_t bytes = strux_alloc_bytes();
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        strux_dataset *ds = NULL;
        assert_strux_fails(strux_dataset_read_svmhmm(fixture(cases[k].file), &o, &ds),
                           STRUX_ERR_INPUT, cases[k].message);
        assert_null(ds);
        assert_int_equal(strux_alloc_bytes(), bytes); /* nothing leaks on the error paths */
    }
}

/* Allocation failures at every step report NOMEM and leak nothing. */
static void test_allocation_failures(void **state)
{
    (void)state;
    strux_read_options o = one_rank();
    size_t before = strux_alloc_bytes();
    int failed = 0;
    for (int64_t n = 0; n < 40; n++) {
        strux_dataset *ds = NULL;
        strux_alloc_fail_after(n);
        strux_status st = strux_dataset_read_svmhmm(fixture("hmm_good.svmhmm"), &o, &ds);
        strux_alloc_fail_after(-1);
        if (st == STRUX_OK) {
            strux_dataset_destroy(&ds);
            break;
        }
        assert_int_equal(st, STRUX_ERR_NOMEM);
        assert_null(ds);
        failed++;
    }
    assert_true(failed > 5);
    assert_int_equal(strux_alloc_bytes(), before);
}

static void test_format_by_content(void **state)
{
    (void)state;
    assert_true(strux_dataset_is_svmhmm(fixture("hmm_good.svmhmm")));
    assert_true(strux_dataset_is_svmhmm(fixture("hmm_good.svmhmm.gz")));
    assert_false(strux_dataset_is_svmhmm(fixture("good.svm")));
    assert_false(strux_dataset_is_svmhmm(fixture("no-such-file")));
    assert_false(strux_dataset_is_svmhmm(fixture("hmm_empty.svmhmm")));
    strux_read_options o = one_rank();
    strux_dataset *ds = NULL;
    assert_strux_ok(strux_io_dataset_load(fixture("hmm_good.svmhmm.gz"), &o, &ds));
    check_good(ds);
    strux_dataset_destroy(&ds);
    assert_strux_ok(strux_io_dataset_load(fixture("good.svm"), &o, &ds));
    assert_null(ds->ex_ptr);
    strux_dataset_destroy(&ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_plain_and_gzip),
        cmocka_unit_test(test_bias_dim_and_tag_count),
        cmocka_unit_test(test_partition_by_sequences),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_format_by_content),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
