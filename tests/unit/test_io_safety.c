/* tests/unit/test_io_safety.c - io under hostile conditions (issue 18): outputs that resolve to an
 * input, a device, a FIFO or a directory are refused before anything is written; atomic writes
 * leave the old file or the new one and never a temporary; a full disk (a 64 KiB tmpfs mounted
 * here, skipped when the test may not mount) is "disk full writing PATH (needs about N MB)" for
 * plain files, models, checkpoints and datasets; the metrics log is exclusive. The model-file
 * checks (attributes against arrays, non-finite weights) are in tests/e2e/file_safety.sh, which
 * builds the bad files with h5py. */
#include "test_common.h"

#include "strux/io.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char path_buf[8][512];

/* test_tmpdir()/name in one of a few rotating buffers. */
static const char *tmp_path(const char *name)
{
    static int next;
    char *p = path_buf[next++ % 8];
    snprintf(p, sizeof path_buf[0], "%s/%s", test_tmpdir(), name);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void read_text(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

/* Number of entries of dir whose name contains ".tmp.". */
static int count_temps(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

static void test_check_output(void **state)
{
    (void)state;
    const char *in = tmp_path("input.svm"), *other = tmp_path("other.svm");
    write_text(in, "0 1:1\n");
    write_text(other, "0 1:1\n");
    const char *inputs[] = {NULL, "", other, in};
    /* the input itself, under its own name, through a symlink and through a hard link */
    assert_strux_fails(strux_io_check_output(in, inputs, 4), STRUX_ERR_IO,
                       "the output is the input file");
    const char *sym = tmp_path("sym.svm"), *hard = tmp_path("hard.svm");
    assert_int_equal(symlink(in, sym), 0);
    assert_int_equal(link(in, hard), 0);
    assert_strux_fails(strux_io_check_output(sym, inputs, 4), STRUX_ERR_IO, "input.svm");
    assert_strux_fails(strux_io_check_output(hard, inputs, 4), STRUX_ERR_IO,
                       "refusing to overwrite it");
    /* things that are not regular files */
    assert_strux_fails(strux_io_check_output("/dev/null", inputs, 4), STRUX_ERR_IO,
                       "a character device");
    const char *fifo = tmp_path("fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_strux_fails(strux_io_check_output(fifo, inputs, 4), STRUX_ERR_IO, "a FIFO");
    assert_strux_fails(strux_io_check_output(test_tmpdir(), inputs, 4), STRUX_ERR_IO,
                       "an existing directory");
    assert_strux_fails(strux_io_check_output("", inputs, 4), STRUX_ERR_IO, "empty output path");
    /* a directory that cannot be created: a file is in the way */
    char under_file[600];
    snprintf(under_file, sizeof under_file, "%s/sub/m.h5", in);
    assert_strux_fails(strux_io_check_output(under_file, inputs, 4), STRUX_ERR_IO,
                       "exists and is not a directory");
    /* fine: a new file, a new file in directories still to be created (nothing is created), an
     * existing file that is no input, and no inputs at all */
    assert_strux_ok(strux_io_check_output(tmp_path("new.h5"), inputs, 4));
    assert_strux_ok(strux_io_check_output(tmp_path("a/b/new.h5"), inputs, 4));
    struct stat sb;
    assert_int_not_equal(stat(tmp_path("a"), &sb), 0);
    const char *just_in[] = {in};
    assert_strux_ok(strux_io_check_output(other, just_in, 1));
    assert_strux_ok(strux_io_check_output(in, NULL, 0));
    /* a read-only directory (root may write anywhere, so only checked for other users) */
    if (geteuid() != 0) {
        const char *ro = tmp_path("ro");
        assert_int_equal(mkdir(ro, 0500), 0);
        char p[600];
        snprintf(p, sizeof p, "%s/m.h5", ro);
        assert_strux_fails(strux_io_check_output(p, NULL, 0), STRUX_ERR_IO, "is not writable");
    }
}

static void test_write_atomic(void **state)
{
    (void)state;
    const char *p = tmp_path("atomic/out.txt");
    char buf[64];
    assert_strux_ok(strux_io_write_atomic(p, "first\n", 6));
    read_text(p, buf, sizeof buf);
    assert_string_equal(buf, "first\n");
    assert_strux_ok(strux_io_write_atomic(p, "second\n", 7));
    read_text(p, buf, sizeof buf);
    assert_string_equal(buf, "second\n");
    assert_strux_ok(strux_io_write_atomic(tmp_path("atomic/empty.txt"), "", 0));
    /* another writer's temporary of the same name (same pid, another node) is left alone */
    char theirs[600];
    strux_io_temp_name(p, theirs, sizeof theirs);
    write_text(theirs, "theirs\n");
    assert_strux_ok(strux_io_write_atomic(p, "third\n", 6));
    read_text(p, buf, sizeof buf);
    assert_string_equal(buf, "third\n");
    read_text(theirs, buf, sizeof buf);
    assert_string_equal(buf, "theirs\n");
    assert_int_equal(remove(theirs), 0);
    /* the rename fails (a directory is in the way): the temporary is removed */
    assert_int_equal(mkdir(tmp_path("atomic/dir"), 0700), 0);
    assert_strux_fails(strux_io_write_atomic(tmp_path("atomic/dir"), "x", 1), STRUX_ERR_IO,
                       "cannot move the finished file into place");
    assert_int_equal(count_temps(tmp_path("atomic")), 0);
    /* strux_io_commit of a file written elsewhere: fsync, rename, nothing left over */
    const char *tmp = tmp_path("atomic/c.tmp.1");
    write_text(tmp, "commit\n");
    assert_strux_ok(strux_io_commit(tmp, tmp_path("atomic/c.txt")));
    read_text(tmp_path("atomic/c.txt"), buf, sizeof buf);
    assert_string_equal(buf, "commit\n");
    assert_int_equal(count_temps(tmp_path("atomic")), 0);
}

/* ---- a full disk: a 64 KiB tmpfs ---- */
static char full_dir[512];

static int unmount_full(void **state)
{
    (void)state;
    if (full_dir[0]) umount(full_dir);
    full_dir[0] = '\0';
    return 0;
}

static void fill_model(strux_model *m, strux_model_info *info)
{
    uint64_t x = 88172645463325252ULL; /* xorshift: weights that do not compress */
    double *w = test_model_flat(m);
    for (int64_t k = 0; k < strux_model_n_w(m); k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        w[k] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
    }
    test_model_set_flat(m, w);
    free(w);
    *info = (strux_model_info){0};
    snprintf(info->task, sizeof info->task, "multilabel");
    const char *cols[] = {"epoch", NULL};
    assert_strux_ok(strux_curve_init(&info->curve, cols));
    assert_strux_ok(strux_curve_append(&info->curve, (double[]){1}));
}

static void test_disk_full(void **state)
{
    (void)state;
    snprintf(full_dir, sizeof full_dir, "%s/full", test_tmpdir());
    assert_int_equal(mkdir(full_dir, 0700), 0);
    if (mount("tmpfs", full_dir, "tmpfs", 0, "size=64k") != 0) {
        full_dir[0] = '\0';
        print_message("# cannot mount a tmpfs (%s); tests/e2e/file_safety.sh covers a full disk "
                      "with an LD_PRELOAD shim\n",
                      strerror(errno));
        skip();
    }
    char p[600];
    /* a plain file: the old content survives, the temporary is removed */
    snprintf(p, sizeof p, "%s/pred.txt", full_dir);
    assert_strux_ok(strux_io_write_atomic(p, "old\n", 4));
    size_t n = 1 << 20;
    char *big = calloc(n, 1);
    assert_non_null(big);
    assert_strux_fails(strux_io_write_atomic(p, big, n), STRUX_ERR_IO,
                       "pred.txt (needs about 1.0 MB)");
    assert_non_null(strstr(strux_error_message(), "disk full writing"));
    free(big);
    char buf[16];
    read_text(p, buf, sizeof buf);
    assert_string_equal(buf, "old\n");
    assert_int_equal(count_temps(full_dir), 0);

    /* a model of 200 x 1000 incompressible weights (1.6 MB) */
    strux_model *m = NULL;
    strux_model_info info;
    assert_strux_ok(strux_model_create(200, 1000, 3, STRUX_MODEL_PLAIN, &m));
    fill_model(m, &info);
    snprintf(p, sizeof p, "%s/m.h5", full_dir);
    assert_strux_fails(strux_io_model_save(p, m, &info), STRUX_ERR_IO, "disk full writing");
    assert_non_null(strstr(strux_error_message(), "m.h5 (needs about 1."));
    assert_int_equal(count_temps(full_dir), 0);
    assert_int_not_equal(access(p, F_OK), 0);

    /* a checkpoint: the model part, the shared state and the example records */
    snprintf(p, sizeof p, "%s/c.ckpt.h5", full_dir);
    strux_checkpoint_info ck = {.epoch = 1, .n_ranks = 2, .n_blocks = 2, .n_examples = 2};
    strux_checkpoint_writer *w = NULL;
    strux_blob shared = {0};
    strux_status st = strux_io_checkpoint_begin(p, m, &info, m, &ck, &shared, &w);
    double *flat = test_model_flat(m);
    const int64_t off[2] = {0, (int64_t)((size_t)strux_model_n_w(m) * sizeof *flat)};
    for (int r = 0; st == STRUX_OK && r < 2; r++)
        st = strux_io_checkpoint_add_examples(w, r, 1, off, flat);
    free(flat);
    assert_strux_fails(strux_io_checkpoint_end(&w, st), STRUX_ERR_IO, "disk full writing");
    assert_null(w);
    assert_int_equal(count_temps(full_dir), 0);
    assert_int_not_equal(access(p, F_OK), 0);

    /* a small model still fits after all the failures: nothing leaked onto the disk */
    strux_model *small = NULL;
    assert_strux_ok(strux_model_create(2, 3, 0, STRUX_MODEL_PLAIN, &small));
    snprintf(p, sizeof p, "%s/small.h5", full_dir);
    assert_strux_ok(strux_io_model_save(p, small, &info));
    strux_model *back = NULL;
    strux_model_info back_info;
    assert_strux_ok(strux_io_model_load(p, &back, &back_info));
    assert_int_equal(strux_model_dim(back), 3);
    strux_model_destroy(&back);
    strux_model_info_free(&back_info);
    strux_model_destroy(&small);
    strux_model_destroy(&m);
    strux_model_info_free(&info);
}

static void test_metrics_exclusive(void **state)
{
    (void)state;
    const char *p = tmp_path("metrics/run.jsonl");
    strux_metrics *a = NULL, *b = NULL;
    strux_curve c;
    const char *cols[] = {"epoch", NULL};
    assert_strux_ok(strux_curve_init(&c, cols));
    assert_strux_ok(strux_curve_append(&c, (double[]){1}));
    assert_strux_ok(strux_metrics_open(p, 0, &a));
    assert_strux_ok(strux_metrics_write_row(a, &c));
    /* a second run, truncating or appending, is refused and does not empty the first's log */
    assert_strux_fails(strux_metrics_open(p, 0, &b), STRUX_ERR_IO,
                       "the metrics log is in use by another run");
    assert_non_null(strstr(strux_error_message(), "run.jsonl"));
    assert_null(b);
    assert_strux_fails(strux_metrics_open(p, 1, &b), STRUX_ERR_IO, "in use by another run");
    char buf[64];
    read_text(p, buf, sizeof buf);
    assert_string_equal(buf, "{\"epoch\": 1}\n");
    strux_metrics_close(&a);
    /* the lock goes with the first run */
    assert_strux_ok(strux_metrics_open(p, 1, &b));
    assert_strux_ok(strux_metrics_write_row(b, &c));
    strux_metrics_close(&b);
    read_text(p, buf, sizeof buf);
    assert_string_equal(buf, "{\"epoch\": 1}\n{\"epoch\": 1}\n");
    strux_curve_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_output),
        cmocka_unit_test(test_write_atomic),
        cmocka_unit_test_teardown(test_disk_full, unmount_full),
        cmocka_unit_test(test_metrics_exclusive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
