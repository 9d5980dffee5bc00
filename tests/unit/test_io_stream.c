/* tests/unit/test_io_stream.c - outputs written in pieces (io/dataset_stream.c, io/atomic.c): the
 * streamed HDF5 container read back by strux_io_dataset_read equals the rows added (across many
 * chunk boundaries); a writer closed with fewer or given more rows than declared, or closed on an
 * error, leaves no file and no temporary; strux_io_file keeps small and large pieces in order,
 * creates the directories it needs and leaves nothing on an error; allocation failures of the
 * writer leak nothing and leave nothing on disk. The full disk is tests/e2e/gen_shape.sh's. */
#include "test_common.h"

#include "strux/data.h"
#include "strux/io.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define ROWS 5000 /* × up to 30 non-zeros: past the writer's 65,536-entry chunks */

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Entries of dir whose name holds ".tmp.". */
static int temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

/* Row i: (i mod 31) non-zeros at columns 3i + 7p mod 1000 ascending, labels i mod 5 and 7. */
static int32_t row_of(int64_t i, int32_t *col, float *val, int32_t *labels, int32_t *n_labels)
{
    int32_t n = (int32_t)(i % 31);
    for (int32_t p = 0; p < n; p++) {
        col[p] = (int32_t)((i % 50) + 30 * p);
        val[p] = (float)(0.5 + i * 1e-3 - p);
    }
    labels[0] = (int32_t)(i % 5);
    labels[1] = 7;
    *n_labels = i % 4 ? 2 : 0;
    return n;
}

static void test_container_round_trip(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/stream.h5", test_tmpdir());
    strux_dataset_writer *w = NULL;
    assert_strux_ok(strux_io_dataset_writer_open(path, ROWS, 1000, 8, &w));
    int32_t col[32], labels[2], n_labels;
    float val[32];
    for (int64_t i = 0; i < ROWS; i++) {
        int32_t nnz = row_of(i, col, val, labels, &n_labels);
        assert_strux_ok(strux_io_dataset_writer_add(w, nnz, col, val, n_labels, labels));
    }
    assert_strux_ok(strux_io_dataset_writer_close(&w, STRUX_OK));
    assert_null(w);
    strux_read_options ro = {.rank = 0, .n_ranks = 1};
    strux_dataset *ds = NULL;
    assert_strux_ok(strux_io_dataset_read(path, &ro, &ds));
    assert_int_equal(ds->n_global, ROWS);
    assert_int_equal(ds->dim, 1000);
    assert_int_equal(ds->n_labels, 8);
    for (int64_t i = 0; i < ROWS; i++) {
        int32_t nnz = row_of(i, col, val, labels, &n_labels);
        assert_int_equal(ds->x.ptr[i + 1] - ds->x.ptr[i], nnz);
        assert_memory_equal(ds->x.col + ds->x.ptr[i], col, (size_t)nnz * sizeof *col);
        assert_memory_equal(ds->x.val + ds->x.ptr[i], val, (size_t)nnz * sizeof *val);
        assert_int_equal(ds->y_ptr[i + 1] - ds->y_ptr[i], n_labels);
        assert_memory_equal(ds->y_idx + ds->y_ptr[i], labels, (size_t)n_labels * sizeof *labels);
    }
    assert_true(ds->x.ptr[ROWS] > 65536);
    strux_dataset_destroy(&ds);
    assert_int_equal(temporaries(test_tmpdir()), 0);
}

static void test_container_wrong_row_count(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/short.h5", test_tmpdir());
    int32_t col[1] = {0}, labels[1] = {0};
    float val[1] = {1};
    strux_dataset_writer *w = NULL;
    assert_strux_ok(strux_io_dataset_writer_open(path, 3, 10, 2, &w));
    assert_strux_ok(strux_io_dataset_writer_add(w, 1, col, val, 1, labels));
    assert_strux_fails(strux_io_dataset_writer_close(&w, STRUX_OK), STRUX_ERR_INTERNAL,
                       "1 rows added of the 3 declared");
    assert_false(exists(path));
    assert_strux_ok(strux_io_dataset_writer_open(path, 1, 10, 2, &w));
    assert_strux_ok(strux_io_dataset_writer_add(w, 1, col, val, 1, labels));
    assert_strux_fails(strux_io_dataset_writer_add(w, 1, col, val, 1, labels), STRUX_ERR_INTERNAL,
                       "more than the 1 declared rows");
    assert_strux_fails(strux_io_dataset_writer_close(&w, STRUX_ERR_INTERNAL), STRUX_ERR_INTERNAL,
                       "");
    assert_false(exists(path));
    assert_int_equal(temporaries(test_tmpdir()), 0);
}

static void test_file_pieces(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/new/dir/pieces.txt", test_tmpdir());
    size_t big = (size_t)3 << 20, total = 1000 * 7 + big + 5;
    char *want = malloc(total);
    assert_non_null(want);
    strux_io_file *f = NULL;
    assert_strux_ok(strux_io_file_open(path, &f));
    size_t n = 0;
    for (int k = 0; k < 1000; k++, n += 7) {
        char piece[16];
        snprintf(piece, sizeof piece, "%06d\n", k);
        memcpy(want + n, piece, 7);
        assert_strux_ok(strux_io_file_write(f, want + n, 7));
    }
    for (size_t k = 0; k < big; k++)
        want[n + k] = (char)('a' + k % 26);
    assert_strux_ok(strux_io_file_write(f, want + n, big));
    n += big;
    memcpy(want + n, "tail\n", 5);
    assert_strux_ok(strux_io_file_write(f, want + n, 5));
    assert_strux_ok(strux_io_file_close(&f, STRUX_OK));
    assert_null(f);
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    char *got = malloc(total + 1);
    assert_non_null(got);
    assert_int_equal(fread(got, 1, total + 1, in), total);
    fclose(in);
    assert_memory_equal(got, want, total);
    free(got);
    free(want);
    /* closed on an error: nothing stays */
    snprintf(path, sizeof path, "%s/failed.txt", test_tmpdir());
    assert_strux_ok(strux_io_file_open(path, &f));
    assert_strux_ok(strux_io_file_write(f, "x\n", 2));
    assert_strux_fails(strux_io_file_close(&f, STRUX_ERR_INPUT), STRUX_ERR_INPUT, "");
    assert_false(exists(path));
    assert_int_equal(temporaries(test_tmpdir()), 0);
}

static void test_allocation_failures_leave_nothing(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/nomem.h5", test_tmpdir());
    int32_t col[1] = {0}, labels[1] = {0};
    float val[1] = {1};
    for (int64_t n = 0;; n++) {
        size_t bytes = strux_alloc_bytes();
        strux_alloc_fail_after(n);
        strux_dataset_writer *w = NULL;
        strux_status st = strux_io_dataset_writer_open(path, 1, 10, 2, &w);
        if (st == STRUX_OK) st = strux_io_dataset_writer_add(w, 1, col, val, 1, labels);
        st = strux_io_dataset_writer_close(&w, st);
        strux_alloc_fail_after(-1);
        assert_int_equal(strux_alloc_bytes(), bytes);
        if (st == STRUX_OK) break;
        assert_int_equal(st, STRUX_ERR_NOMEM);
        assert_false(exists(path));
        assert_int_equal(temporaries(test_tmpdir()), 0);
    }
    assert_true(exists(path));
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_container_round_trip),
        cmocka_unit_test(test_container_wrong_row_count),
        cmocka_unit_test(test_file_pieces),
        cmocka_unit_test(test_allocation_failures_leave_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
