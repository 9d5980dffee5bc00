/* tests/common/test_common.c - shared unit-test helpers (see test_common.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "test_common.h"

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void test_assert_close(double a, double b, double rtol, const char *file, int line)
{
    double scale = fmax(1.0, fmax(fabs(a), fabs(b)));
    if (!(fabs(a - b) <= rtol * scale)) {
        print_error("%.17g != %.17g (relative tolerance %g)\n", a, b, rtol);
        _fail(file, line);
    }
}

void test_assert_status(strux_status got, strux_status want, const char *needle, const char *file,
                        int line)
{
    if (got != want) {
        print_error("status %s (want %s): %s\n%s", strux_status_name(got), strux_status_name(want),
                    strux_error_message(), strux_error_trace());
        _fail(file, line);
    }
    if (needle && !strstr(strux_error_message(), needle)) {
        print_error("message '%s' does not contain '%s'\n", strux_error_message(), needle);
        _fail(file, line);
    }
}

const char *fixture(const char *name)
{
    static char path[4096];
    const char *root = getenv("STRUX_ROOT");
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", root ? root : ".", name);
    return path;
}

const char *shared_data(const char *rel)
{
    static char path[4096];
    const char *root = getenv("STRUX_DATA");
    snprintf(path, sizeof path, "%s/%s", root ? root : "../shared/data", rel);
    return path;
}

static char tmp_dir[256];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_tmpdir(void)
{
    nftw(tmp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *test_tmpdir(void)
{
    char *dir = tmp_dir;
    if (!dir[0]) {
        snprintf(dir, sizeof tmp_dir, "/tmp/strux-test-XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(1);
        }
        atexit(remove_tmpdir);
    }
    return dir;
}

const strux_model_kind test_model_kinds[TEST_MODEL_KINDS] = {
    {STRUX_LAYOUT_LABEL_MAJOR, STRUX_PRECISION_DOUBLE}, {STRUX_LAYOUT_FEATURE_MAJOR, STRUX_PRECISION_DOUBLE},
    {STRUX_LAYOUT_LABEL_MAJOR, STRUX_PRECISION_FLOAT},  {STRUX_LAYOUT_FEATURE_MAJOR, STRUX_PRECISION_FLOAT},
    {STRUX_LAYOUT_SPARSE, STRUX_PRECISION_DOUBLE},      {STRUX_LAYOUT_SPARSE, STRUX_PRECISION_FLOAT},
};

void test_model_get_flat(const strux_model *m, double *w)
{
    int32_t K = strux_model_n_rows(m), D = strux_model_dim(m);
    for (int32_t k = 0; k < K; k++)
        strux_model_get_row(m, k, w + (int64_t)k * D);
    memcpy(w + (int64_t)K * D, strux_model_extra(m),
           (size_t)strux_model_n_extra(m) * sizeof *w);
}

void test_model_set_flat(strux_model *m, const double *w)
{
    int32_t K = strux_model_n_rows(m), D = strux_model_dim(m);
    for (int32_t k = 0; k < K; k++)
        strux_model_set_row(m, k, w + (int64_t)k * D);
    memcpy(strux_model_extra(m), w + (int64_t)K * D,
           (size_t)strux_model_n_extra(m) * sizeof *w);
}

double *test_model_flat(const strux_model *m)
{
    double *w = malloc((size_t)strux_model_n_w(m) * sizeof *w + 1);
    assert_non_null(w);
    test_model_get_flat(m, w);
    return w;
}

static double rel_diff(double x, double y)
{
    return x == y ? 0 : fabs(x - y) / fmax(1e-300, fmax(fabs(x), fabs(y)));
}

double test_model_max_rel_diff(const strux_model *a, const strux_model *b)
{
    int32_t K = strux_model_n_rows(a), D = strux_model_dim(a);
    int64_t E = strux_model_n_extra(a);
    if (K != strux_model_n_rows(b) || D != strux_model_dim(b) || E != strux_model_n_extra(b))
        return INFINITY;
    double worst = 0, *ra = malloc((size_t)D * sizeof *ra + 1), *rb = malloc((size_t)D * sizeof *rb + 1);
    if (!ra || !rb) worst = INFINITY;
    for (int32_t k = 0; ra && rb && k < K; k++) {
        strux_model_get_row(a, k, ra);
        strux_model_get_row(b, k, rb);
        for (int32_t j = 0; j < D; j++)
            worst = fmax(worst, rel_diff(ra[j], rb[j]));
    }
    const double *ea = strux_model_extra(a), *eb = strux_model_extra(b);
    for (int64_t q = 0; q < E; q++)
        worst = fmax(worst, rel_diff(ea[q], eb[q]));
    free(ra);
    free(rb);
    return worst;
}
