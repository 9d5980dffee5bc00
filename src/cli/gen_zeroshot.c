/* cli/gen_zeroshot.c - `strux gen PREFIX --zero-shot --rows N --test-rows M [...]`: the zero-shot
 * data of specs/m3l.md §7.1 (i) (data/synth_zeroshot.c), written as PREFIX.train.svm,
 * PREFIX.test.svm (LIBSVM/XMC text with its header, dense rows) and PREFIX.classes, the test
 * categories in m3l.classes' format (`p l1,l2,...`, p its share of the test rows), from which
 * m3l.prior = zero_shot builds R = Σ_c p(c)·y_c y_cᵀ. Defaults are shaped like Animals with
 * Attributes (252 features, 85 attributes, 40 training and 10 test categories, pair correlations
 * +0.2 and −0.76). Called by gen.c on rank 0. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZS_USAGE                                                                                   \
    "usage: strux gen PREFIX --zero-shot --rows N --test-rows M [--features D] [--labels L] "     \
    "[--train-classes C] [--test-classes T] [--train-corr R] [--test-corr R] [--noise S] "        \
    "[--spread S] [--seed S]"

#define zs_error(...) strux_cli_gen_usage(ZS_USAGE, __VA_ARGS__)

static strux_status parse(int argc, char **argv, strux_zeroshot_options *o, const char **prefix)
{
    int64_t rows = 0, test_rows = 0, dim = 252, labels = 85, tr_c = 40, te_c = 10, seed = 1;
    double tr_corr = 0.2, te_corr = 0.76, noise = 1.0, spread = 0.5;
    const struct {
        const char *name;
        int64_t *i; /* an integer flag (≥ 0) */
        double *x;  /* a real flag */
    } flags[] = {
        {"--rows", &rows, NULL},           {"--test-rows", &test_rows, NULL},
        {"--features", &dim, NULL},        {"--labels", &labels, NULL},
        {"--train-classes", &tr_c, NULL},  {"--test-classes", &te_c, NULL},
        {"--seed", &seed, NULL},           {"--train-corr", NULL, &tr_corr},
        {"--test-corr", NULL, &te_corr},   {"--noise", NULL, &noise},
        {"--spread", NULL, &spread},
    };
    const size_t n_flags = sizeof flags / sizeof *flags;
    *prefix = NULL;
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        if (strcmp(a, "--zero-shot") == 0) continue;
        if (a[0] != '-') {
            if (*prefix) return zs_error("more than one PREFIX ('%s', '%s')", *prefix, a);
            *prefix = a;
            continue;
        }
        size_t f = 0;
        while (f < n_flags && strcmp(a, flags[f].name) != 0)
            f++;
        if (f == n_flags) return zs_error("unknown option '%s'", a);
        if (k + 1 >= argc) return zs_error("%s needs a value", a);
        const char *v = argv[++k];
        char *end;
        errno = 0;
        if (flags[f].i) {
            long long x = strtoll(v, &end, 10);
            if (end == v || *end || errno == ERANGE || x < 0 || x > INT32_MAX)
                return zs_error("%s needs an integer in [0, %d], got '%s'", a, INT32_MAX, v);
            *flags[f].i = x;
        } else {
            double x = strtod(v, &end);
            if (end == v || *end || !isfinite(x))
                return zs_error("%s needs a finite number, got '%s'", a, v);
            *flags[f].x = x;
        }
    }
    if (!*prefix) return zs_error("PREFIX is missing");
    *o = (strux_zeroshot_options){.train_rows = rows,
                                  .test_rows = test_rows,
                                  .dim = (int32_t)dim,
                                  .n_labels = (int32_t)labels,
                                  .train_classes = (int32_t)tr_c,
                                  .test_classes = (int32_t)te_c,
                                  .train_corr = tr_corr,
                                  .test_corr = te_corr,
                                  .noise = noise,
                                  .spread = spread,
                                  .seed = (uint64_t)seed};
    if (strux_zeroshot_check(o) != STRUX_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", strux_error_message());
        return zs_error("%s", why);
    }
    return STRUX_OK;
}

/* The test classes as `p l1,l2,...` lines, atomically. */
static strux_status write_classes(const char *path, const strux_zeroshot_options *o,
                                  const double *p, const signed char *sig)
{
    size_t cap = 128 + (size_t)o->test_classes * (32 + 12 * (size_t)o->n_labels), n = 0;
    char *text = NULL;
    STRUX_TRY(strux_alloc(&text, cap));
    n += (size_t)snprintf(text + n, cap - n,
                          "# %d test classes of strux gen --zero-shot (seed %llu): weight "
                          "(share of the test rows) and attributes\n",
                          o->test_classes, (unsigned long long)o->seed);
    for (int32_t c = 0; c < o->test_classes; c++) {
        n += (size_t)snprintf(text + n, cap - n, "%.10g ", p[c]);
        int first = 1;
        for (int32_t l = 0; l < o->n_labels; l++)
            if (sig[(int64_t)c * o->n_labels + l] > 0) {
                n += (size_t)snprintf(text + n, cap - n, first ? "%d" : ",%d", l);
                first = 0;
            }
        n += (size_t)snprintf(text + n, cap - n, "\n");
    }
    strux_status st = strux_io_write_atomic(path, text, n);
    strux_free(&text);
    return st;
}

strux_status strux_cli_gen_zeroshot(int argc, char **argv)
{
    strux_zeroshot_options o;
    const char *prefix;
    STRUX_TRY(parse(argc, argv, &o, &prefix));
    char train[STRUX_OPT_STR + 16], test[STRUX_OPT_STR + 16], classes[STRUX_OPT_STR + 16];
    snprintf(train, sizeof train, "%.*s.train.svm", STRUX_OPT_STR - 1, prefix);
    snprintf(test, sizeof test, "%.*s.test.svm", STRUX_OPT_STR - 1, prefix);
    snprintf(classes, sizeof classes, "%.*s.classes", STRUX_OPT_STR - 1, prefix);
    STRUX_TRY(strux_io_check_output(train, NULL, 0));
    STRUX_TRY(strux_io_check_output(test, NULL, 0));
    STRUX_TRY(strux_io_check_output(classes, NULL, 0));
    strux_dataset *tr = NULL, *te = NULL;
    double *p = NULL;
    signed char *sig = NULL;
    strux_status st = strux_alloc_array(&p, (size_t)o.test_classes, sizeof *p);
    if (st == STRUX_OK)
        st = strux_alloc_array(&sig, (size_t)o.test_classes * (size_t)o.n_labels, sizeof *sig);
    if (st == STRUX_OK) st = strux_zeroshot_generate(&o, &tr, &te, p, sig);
    if (st == STRUX_OK) st = strux_cli_write_svm(train, tr);
    if (st == STRUX_OK) st = strux_cli_write_svm(test, te);
    if (st == STRUX_OK) st = write_classes(classes, &o, p, sig);
    if (st == STRUX_OK)
        strux_log(STRUX_LOG_INFO,
                  "%s, %s, %s: %lld training rows of %d categories, %lld test rows of %d, %d "
                  "features, %d attributes (pair correlations %+g and %+g), seed %llu",
                  train, test, classes, (long long)o.train_rows, o.train_classes,
                  (long long)o.test_rows, o.test_classes, o.dim, o.n_labels, o.train_corr,
                  -o.test_corr, (unsigned long long)o.seed);
    strux_dataset_destroy(&tr);
    strux_dataset_destroy(&te);
    strux_free(&p);
    strux_free(&sig);
    return st;
}
