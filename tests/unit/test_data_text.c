/* tests/unit/test_data_text.c - the one text line reader (data/text.c) and the input hardening of
 * the two readers on it (issues 11, 18): lines, numbers and offsets of plain and gzip text (gzip
 * told by its magic, not its name), CRLF and a last line without newline, lines longer than the
 * read chunk, the line limit, NUL bytes, truncated and corrupt gzip streams, directories and
 * FIFOs, missing files, allocation failures; then through strux_dataset_read_libsvm and
 * strux_dataset_read_svmhmm: NUL, truncated gzip, max_features (set, and from the header) and
 * absurd values, each an input error naming file and line. */
#include "test_common.h"

#include "data/data_impl.h"
#include "strux/data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* Path of a file in the test's temporary directory (static buffer). */
static const char *tmp_path(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", test_tmpdir(), name);
    return path;
}

/* Write n bytes to name in the temporary directory, gzip-compressed if gz; returns the path. */
static const char *write_file(const char *name, const void *bytes, size_t n, int gz)
{
    const char *path = tmp_path(name);
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, bytes, (unsigned)n), (int)n);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(bytes, 1, n, f), n);
        assert_int_equal(fclose(f), 0);
    }
    return path;
}

static const char *write_text(const char *name, const char *text, int gz)
{
    return write_file(name, text, strlen(text), gz);
}

/* Whole file into a malloc'd buffer; *n its size. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    unsigned char *b = malloc((size_t)size);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return b;
}

/* Read every line of path; expect the given lines, then end of file. */
static void expect_lines(const char *path, const char *const *want, int n_want)
{
    strux_text_reader *r = NULL;
    assert_strux_ok(strux_text_reader_open(path, &r));
    assert_string_equal(strux_text_reader_path(r), path);
    for (int pass = 0; pass < 2; pass++) { /* the second after a rewind */
        assert_int_equal(strux_text_reader_line_no(r), 0);
        int64_t offset = 0;
        char *line;
        size_t len;
        for (int k = 0; k < n_want; k++) {
            assert_strux_ok(strux_text_reader_next_line(r, &line, &len));
            assert_non_null(line);
            assert_string_equal(line, want[k]);
            assert_int_equal(len, strlen(want[k]));
            assert_int_equal(strux_text_reader_line_no(r), k + 1);
            assert_int_equal(strux_text_reader_offset(r), offset);
            offset += (int64_t)len + 1; /* "\n" */
        }
        assert_strux_ok(strux_text_reader_next_line(r, &line, &len));
        assert_null(line);
        assert_int_equal(len, 0);
        assert_strux_ok(strux_text_reader_next_line(r, &line, NULL)); /* end stays the end */
        assert_null(line);
        assert_strux_ok(strux_text_reader_rewind(r));
    }
    strux_text_reader_close(&r);
    assert_null(r);
    strux_text_reader_close(&r); /* NULL is fine */
}

static void test_lines_plain_and_gzip(void **state)
{
    (void)state;
    const char *want[] = {"first", "", "  third\tline", "last"};
    const char *text = "first\n\n  third\tline\nlast\n";
    expect_lines(write_text("lines.txt", text, 0), want, 4);
    /* gzip by its magic: a gzip file without .gz, and a plain file named .gz */
    expect_lines(write_text("lines_gzip.txt", text, 1), want, 4);
    expect_lines(write_text("plain.gz", text, 0), want, 4);
    /* the readers' gzip fixtures decompress to their plain twins */
    size_t n_plain;
    unsigned char *plain = slurp(fixture("good.svm"), &n_plain);
    strux_text_reader *a = NULL, *b = NULL;
    assert_strux_ok(strux_text_reader_open(fixture("good.svm"), &a));
    assert_strux_ok(strux_text_reader_open(fixture("good.svm.gz"), &b));
    size_t total = 0;
    for (;;) {
        char *la, *lb;
        size_t na, nb;
        assert_strux_ok(strux_text_reader_next_line(a, &la, &na));
        char copy[256];
        if (la) snprintf(copy, sizeof copy, "%s", la);
        assert_strux_ok(strux_text_reader_next_line(b, &lb, &nb));
        assert_true((la == NULL) == (lb == NULL));
        if (!la) break;
        assert_int_equal(na, nb);
        assert_string_equal(copy, lb);
        total += na + 1;
    }
    assert_int_equal(total, n_plain);
    free(plain);
    strux_text_reader_close(&a);
    strux_text_reader_close(&b);
}

static void test_crlf_and_last_line_without_newline(void **state)
{
    (void)state;
    const char *want[] = {"a b", "", "c"};
    strux_text_reader *r = NULL;
    assert_strux_ok(strux_text_reader_open(write_text("crlf.txt", "a b\r\n\r\nc", 0), &r));
    char *line;
    size_t len;
    int64_t offsets[] = {0, 5, 7};
    for (int k = 0; k < 3; k++) {
        assert_strux_ok(strux_text_reader_next_line(r, &line, &len));
        assert_string_equal(line, want[k]);
        assert_int_equal(len, strlen(want[k]));
        assert_int_equal(strux_text_reader_offset(r), offsets[k]);
    }
    assert_strux_ok(strux_text_reader_next_line(r, &line, &len));
    assert_null(line);
    assert_int_equal(strux_text_reader_line_no(r), 3);
    strux_text_reader_close(&r);
    /* an empty file has no lines; a lone newline is one empty line */
    assert_strux_ok(strux_text_reader_open(write_text("empty.txt", "", 0), &r));
    assert_strux_ok(strux_text_reader_next_line(r, &line, &len));
    assert_null(line);
    strux_text_reader_close(&r);
    assert_strux_ok(strux_text_reader_open(write_text("newline.txt", "\n", 1), &r));
    assert_strux_ok(strux_text_reader_next_line(r, &line, &len));
    assert_string_equal(line, "");
    assert_strux_ok(strux_text_reader_next_line(r, &line, &len));
    assert_null(line);
    strux_text_reader_close(&r);
}

/* Lines longer than the read chunk and the first buffer come out whole; a NUL byte far into a
 * long line is reported at its column, across chunk boundaries. */
static void test_long_lines_and_nul_column(void **state)
{
    (void)state;
    size_t n1 = 300000, n2 = 5, n = n1 + 1 + n2 + 1;
    char *text = malloc(n + 1);
    assert_non_null(text);
    for (size_t k = 0; k < n1; k++)
        text[k] = (char)('a' + k % 26);
    text[n1] = '\n';
    memcpy(text + n1 + 1, "short\n", 6);
    text[n] = '\0';
    for (int gz = 0; gz < 2; gz++) {
        strux_text_reader *r = NULL;
        assert_strux_ok(strux_text_reader_open(write_file("long.txt", text, n, gz), &r));
        char *line;
        size_t len;
        assert_strux_ok(strux_text_reader_next_line(r, &line, &len));
        assert_int_equal(len, n1);
        assert_memory_equal(line, text, n1);
        assert_int_equal(line[n1], '\0');
        assert_strux_ok(strux_text_reader_next_line(r, &line, &len));
        assert_string_equal(line, "short");
        assert_int_equal(strux_text_reader_offset(r), (int64_t)n1 + 1);
        strux_text_reader_close(&r);
    }
    text[200000] = '\0';
    for (int gz = 0; gz < 2; gz++) {
        strux_text_reader *r = NULL;
        const char *path = write_file("long_nul.txt", text, n, gz);
        assert_strux_ok(strux_text_reader_open(path, &r));
        char *line;
        assert_strux_fails(strux_text_reader_next_line(r, &line, NULL), STRUX_ERR_INPUT,
                           "long_nul.txt:1: NUL byte at column 200001");
        strux_text_reader_close(&r);
    }
    free(text);
}

static void test_nul_byte(void **state)
{
    (void)state;
    const char text[] = "0 1:1\n1 2:1\0 3:1\n0 4:1\n"; /* before: silently "1 2:1" */
    for (int gz = 0; gz < 2; gz++) {
        strux_text_reader *r = NULL;
        size_t before = strux_alloc_bytes();
        assert_strux_ok(
            strux_text_reader_open(write_file("nul.txt", text, sizeof text - 1, gz), &r));
        char *line;
        assert_strux_ok(strux_text_reader_next_line(r, &line, NULL));
        assert_strux_fails(strux_text_reader_next_line(r, &line, NULL), STRUX_ERR_INPUT,
                           "nul.txt:2: NUL byte at column 6");
        strux_text_reader_close(&r);
        assert_int_equal(strux_alloc_bytes(), before);
    }
}

/* The limit is STRUX_TEXT_MAX_LINE (256 MiB); lowered here so the test stays small. */
static void test_line_limit(void **state)
{
    (void)state;
    assert_true(STRUX_TEXT_MAX_LINE >= (size_t)256 << 20);
    for (int gz = 0; gz < 2; gz++) {
        strux_text_reader *r = NULL;
        assert_strux_ok(
            strux_text_reader_open(write_text("limit.txt", "0123456789\r\n0123456789a\n", gz), &r));
        strux_text_reader_set_max_line(r, 10);
        char *line;
        size_t len;
        assert_strux_ok(strux_text_reader_next_line(r, &line, &len)); /* exactly 10: fine */
        assert_int_equal(len, 10);
        assert_strux_fails(strux_text_reader_next_line(r, &line, &len), STRUX_ERR_INPUT,
                           "limit.txt:2: line longer than 10 bytes");
        strux_text_reader_close(&r);
    }
    /* the buffer grows past the chunk up to the limit, and no further */
    size_t n = 40000;
    char *text = malloc(n);
    assert_non_null(text);
    memset(text, 'x', n);
    strux_text_reader *r = NULL;
    assert_strux_ok(strux_text_reader_open(write_file("limit2.txt", text, n, 0), &r));
    strux_text_reader_set_max_line(r, n - 1);
    char *line;
    assert_strux_fails(strux_text_reader_next_line(r, &line, NULL), STRUX_ERR_INPUT,
                       "limit2.txt:1: line longer than 39999 bytes");
    strux_text_reader_close(&r);
    free(text);
}

/* A gzip file of several chunks of lines, cut in half: the reader must say so instead of
 * ending early. A corrupt check value at the end is an error too. */
static void test_truncated_and_corrupt_gzip(void **state)
{
    (void)state;
    size_t n_lines = 40000, cap = n_lines * 32, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    uint64_t x = 12345;
    for (size_t k = 0; k < n_lines; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull; /* incompressible enough */
        n += (size_t)snprintf(text + n, cap - n, "%zu %llu\n", k, (unsigned long long)(x >> 20));
    }
    const char *path = write_file("whole.gz", text, n, 1);
    size_t n_gz;
    unsigned char *gz = slurp(path, &n_gz);
    assert_true(n_gz > 4 * 1024);
    free(text);

    /* the whole file reads to its last line */
    strux_text_reader *r = NULL;
    char *line;
    assert_strux_ok(strux_text_reader_open(path, &r));
    do
        assert_strux_ok(strux_text_reader_next_line(r, &line, NULL));
    while (line);
    assert_int_equal(strux_text_reader_line_no(r), (int64_t)n_lines);
    strux_text_reader_close(&r);

    /* cut in half (what `head -c` of a copy cut short leaves) */
    const char *half = write_file("half.gz", gz, n_gz / 2, 0);
    assert_strux_ok(strux_text_reader_open(half, &r));
    strux_status st;
    do
        st = strux_text_reader_next_line(r, &line, NULL);
    while (st == STRUX_OK && line);
    char needle[256];
    snprintf(needle, sizeof needle,
             "half.gz: truncated or corrupt gzip stream: zlib stopped at compressed byte %zu of "
             "%zu",
             n_gz / 2, n_gz / 2);
    assert_strux_fails(st, STRUX_ERR_INPUT, needle);
    assert_true(strux_text_reader_line_no(r) < (int64_t)n_lines);
    strux_text_reader_close(&r);

    /* cut inside the 8-byte trailer: all data there, the stream still incomplete */
    const char *trailer = write_file("trailer.gz", gz, n_gz - 3, 0);
    assert_strux_ok(strux_text_reader_open(trailer, &r));
    do
        st = strux_text_reader_next_line(r, &line, NULL);
    while (st == STRUX_OK && line);
    assert_strux_fails(st, STRUX_ERR_INPUT, "trailer.gz: truncated or corrupt gzip stream");
    strux_text_reader_close(&r);

    /* a wrong CRC-32 in the trailer */
    gz[n_gz - 8] ^= 0xff;
    const char *bad_crc = write_file("bad_crc.gz", gz, n_gz, 0);
    assert_strux_ok(strux_text_reader_open(bad_crc, &r));
    do
        st = strux_text_reader_next_line(r, &line, NULL);
    while (st == STRUX_OK && line);
    assert_strux_fails(st, STRUX_ERR_INPUT, "bad_crc.gz: truncated or corrupt gzip stream");
    assert_true(strstr(strux_error_message(), "incorrect data check") != NULL);
    strux_text_reader_close(&r);
    free(gz);

    /* the LIBSVM reader on its gzip fixture cut short: an error, not fewer rows */
    unsigned char *good = slurp(fixture("good.svm.gz"), &n_gz);
    const char *cut = write_file("good_cut.svm.gz", good, n_gz - 10, 0);
    free(good);
    strux_read_options o = {.rank = 0, .n_ranks = 1};
    strux_dataset *ds = NULL;
    assert_strux_fails(strux_dataset_read_libsvm(cut, &o, &ds), STRUX_ERR_INPUT,
                       "good_cut.svm.gz: truncated or corrupt gzip stream");
    assert_null(ds);
    good = slurp(fixture("hmm_good.svmhmm.gz"), &n_gz);
    cut = write_file("hmm_cut.svmhmm.gz", good, n_gz / 2, 0);
    free(good);
    assert_strux_fails(strux_dataset_read_svmhmm(cut, &o, &ds), STRUX_ERR_INPUT,
                       "hmm_cut.svmhmm.gz: truncated or corrupt gzip stream");
    assert_null(ds);
}

static void test_not_regular_files(void **state)
{
    (void)state;
    strux_text_reader *r = NULL;
    /* a directory: STRUX_ERR_IO (exit 4), before: a "read failed" after opening it */
    assert_strux_fails(strux_text_reader_open(test_tmpdir(), &r), STRUX_ERR_IO, "is a directory");
    assert_null(r);
    /* a FIFO: refused by stat without opening it (opening would wait for a writer) */
    char fifo[4096];
    snprintf(fifo, sizeof fifo, "%s", tmp_path("fifo"));
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_strux_fails(strux_text_reader_open(fifo, &r), STRUX_ERR_IO, "is not a regular file");
    assert_null(r);
    assert_strux_fails(strux_text_reader_open("/dev/null", &r), STRUX_ERR_IO,
                       "/dev/null: is not a regular file");
    /* a missing file keeps its status and message */
    assert_strux_fails(strux_text_reader_open(tmp_path("missing.txt"), &r), STRUX_ERR_INPUT,
                       "missing.txt: cannot open for reading: No such file or directory");
    assert_null(r);
    /* through the readers */
    strux_read_options o = {.rank = 0, .n_ranks = 1};
    strux_dataset *ds = NULL;
    assert_strux_fails(strux_dataset_read_libsvm(fixture(""), &o, &ds), STRUX_ERR_IO,
                       "is a directory");
    assert_strux_fails(strux_dataset_read_svmhmm(fifo, &o, &ds), STRUX_ERR_IO,
                       "fifo: is not a regular file");
    assert_null(ds);
    assert_int_equal(strux_dataset_is_svmhmm(fifo), 0);
}

/* Every allocation of open and of a growing line fails in turn: STRUX_ERR_NOMEM, nothing leaks. */
static void test_allocation_failures(void **state)
{
    (void)state;
    char text[20000];
    memset(text, 'y', sizeof text);
    text[sizeof text - 1] = '\n';
    const char *path = write_file("alloc.txt", text, sizeof text, 1);
    int64_t before = strux_alloc_calls();
    strux_text_reader *r = NULL;
    char *line;
    assert_strux_ok(strux_text_reader_open(path, &r));
    assert_strux_ok(strux_text_reader_next_line(r, &line, NULL));
    strux_text_reader_close(&r);
    int64_t calls = strux_alloc_calls() - before;
    assert_true(calls >= 4);
    for (int64_t k = 0; k < calls; k++) {
        size_t bytes = strux_alloc_bytes();
        strux_alloc_fail_after(k);
        strux_status st = strux_text_reader_open(path, &r);
        if (st == STRUX_OK) st = strux_text_reader_next_line(r, &line, NULL);
        assert_strux_fails(st, STRUX_ERR_NOMEM, "out of memory");
        strux_text_reader_close(&r);
        assert_int_equal(strux_alloc_bytes(), bytes);
    }
    strux_alloc_fail_after(-1);
}

typedef struct reader_case {
    int svmhmm;       /* 0: LIBSVM, 1: SVM-hmm */
    const char *name; /* file written in the temporary directory */
    const char *text; /* its content (NUL ends it: the NUL case uses a fixture) */
    int32_t dim;      /* read options */
    int drop;
    int32_t max_features;
    const char *needle; /* NULL: reads fine */
} reader_case;

static const reader_case reader_cases[] = {
    /* max_features set: an index above it is an error, kept or dropped */
    {0, "big.svm", "0 1:1\n1 2:1 2000000000:1\n", 0, 0, 1000,
     "big.svm:2: feature index 2000000000 is above the limit of 1000 features set by "
     "max_features"},
    {0, "big_drop.svm", "0 1:1\n1 2:1 2001:1\n", 5, 1, 1000,
     "big_drop.svm:2: feature index 2001 is above the limit of 1000 features"},
    {0, "at_limit.svm", "0 1:1\n1 2:1 1000:1\n", 0, 0, 1000, NULL},
    {1, "big.svmhmm", "1 qid:1 1:1\n2 qid:1 3:1 2000000000:1\n", 0, 0, 1000,
     "big.svmhmm:2: feature index 2000000000 is above the limit of 1000 features set by "
     "max_features"},
    {1, "big_drop.svmhmm", "1 qid:1 1:1\n2 qid:2 7:1 5000:1\n", 5, 1, 1000,
     "big_drop.svmhmm:2: feature index 5000 is above the limit of 1000 features"},
    /* no max_features: the header's D bounds even data whose extra features would be dropped */
    {0, "header_big.svm", "2 5 3\n0 1:1\n1 2:1 9:1\n", 3, 1, 0,
     "header_big.svm:3: feature index 9 is above the limit of 5 features given by the header"},
    /* training data keeps its message about the header's dimension */
    {0, "header_dim.svm", "2 5 3\n0 1:1\n1 2:1 9:1\n", 0, 0, 0,
     "header_dim.svm:3: feature index 9 exceeds the dimension 5 given by the header"},
    /* |value| > 1e30 is absurd; 1e30 itself is data */
    {0, "absurd.svm", "0 1:1\n1 2:-3e30\n", 0, 0, 0,
     "absurd.svm:2: feature 2 has an absurd value '-3e30'"},
    {0, "absurd_ok.svm", "0 1:1e30\n1 2:-1e30\n", 0, 0, 0, NULL},
    {1, "absurd.svmhmm", "1 qid:1 1:1\n1 qid:1 4:2e31\n", 0, 0, 0,
     "absurd.svmhmm:2: feature 4 has an absurd value '2e31'"},
    /* beyond float range it stays a non-finite value */
    {0, "overflow.svm", "0 1:1e39\n", 0, 0, 0, "overflow.svm:1: feature 1 has a non-finite value"},
};

static void test_reader_bounds(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof reader_cases / sizeof *reader_cases; k++) {
        const reader_case *c = &reader_cases[k];
        const char *path = write_text(c->name, c->text, 0);
        strux_read_options o = {.rank = 0,
                                .n_ranks = 1,
                                .dim = c->dim,
                                .drop_above_dim = c->drop,
                                .max_features = c->max_features};
        strux_dataset *ds = NULL;
        size_t bytes = strux_alloc_bytes();
        strux_status st = c->svmhmm ? strux_dataset_read_svmhmm(path, &o, &ds)
                                    : strux_dataset_read_libsvm(path, &o, &ds);
        if (!c->needle) {
            assert_strux_ok(st);
            strux_dataset_destroy(&ds);
        } else {
            assert_strux_fails(st, STRUX_ERR_INPUT, c->needle);
            assert_null(ds);
        }
        assert_int_equal(strux_alloc_bytes(), bytes);
    }
}

/* NUL bytes in the readers' input (fixtures): before, the line was cut at the NUL and the rest
 * merged into the next, read without a word. */
static void test_readers_refuse_nul(void **state)
{
    (void)state;
    strux_read_options o = {.rank = 0, .n_ranks = 1};
    strux_dataset *ds = NULL;
    assert_strux_fails(strux_dataset_read_libsvm(fixture("bad_nul.svm"), &o, &ds), STRUX_ERR_INPUT,
                       "bad_nul.svm:2: NUL byte at column 6");
    assert_null(ds);
    assert_strux_fails(strux_dataset_read_svmhmm(fixture("hmm_bad_nul.svmhmm"), &o, &ds),
                       STRUX_ERR_INPUT, "hmm_bad_nul.svmhmm:3: NUL byte at column 12");
    assert_null(ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_plain_and_gzip),
        cmocka_unit_test(test_crlf_and_last_line_without_newline),
        cmocka_unit_test(test_long_lines_and_nul_column),
        cmocka_unit_test(test_nul_byte),
        cmocka_unit_test(test_line_limit),
        cmocka_unit_test(test_truncated_and_corrupt_gzip),
        cmocka_unit_test(test_not_regular_files),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_reader_bounds),
        cmocka_unit_test(test_readers_refuse_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
