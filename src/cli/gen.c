/* cli/gen.c - `strux gen OUTPUT --rows N --features D --labels L [...]`: synthetic multi-label
 * data from a planted sparse linear model (data/synth.c), written as the HDF5 CSR container
 * (io/dataset_file.c), or as LIBSVM/XMC text with its `N D L` header when OUTPUT ends in .svm
 * (small sets: tests, other tools). A test set of the same model is the same --seed with
 * --row-offset past the training rows. With --shape, the hierarchical generators of
 * cli/gen_shape.c instead; with --zero-shot the zero-shot generator of gen_zeroshot.c. Rank 0
 * generates and writes; other ranks wait for its status. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_USAGE                                                                                  \
    "usage: strux gen OUTPUT --rows N --features D --labels L [--nnz K] [--labels-per-row M] "     \
    "[--noise S] [--seed S] [--row-offset R]\n"                                                    \
    "       strux gen OUTPUT --shape balanced|unbalanced|random|swiki ...\n"                       \
    "       strux gen PREFIX --zero-shot --rows N --test-rows M ...\n"                             \
    "       strux gen DIR --kind churn [--seed S]\n"                                               \
    "       (strux help gen: every option)"
#define GEN_NNZ 100          /* default non-zeros per row (at most D) */
#define GEN_LABELS_PER_ROW 3 /* default mean labels per row (at most L/2) */
#define GEN_NOISE 0.1        /* default label noise relative to each label's score spread */

strux_status strux_cli_gen_usage(const char *usage, const char *fmt, ...)
{
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__, "gen: %s\n%s", why,
                           usage);
}
#define usage_error(...) strux_cli_gen_usage(GEN_USAGE, __VA_ARGS__)

strux_status strux_cli_gen_checked(strux_status st, const char *usage)
{
    if (st == STRUX_OK) return st;
    char why[1024];
    snprintf(why, sizeof why, "%s", strux_error_message());
    return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__, "%s\n%s", why, usage);
}

static strux_status parse_int(const char *flag, const char *text, int64_t lo, int64_t hi,
                              int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v < lo || v > hi)
        return usage_error("%s needs an integer in [%lld, %lld], got '%s'", flag, (long long)lo,
                           (long long)hi, text);
    *out = v;
    return STRUX_OK;
}

static strux_status parse_real(const char *flag, const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v))
        return usage_error("%s needs a finite number, got '%s'", flag, text);
    *out = v;
    return STRUX_OK;
}

int strux_cli_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

strux_status strux_cli_write_svm(const char *path, const strux_dataset *ds)
{
    char tmp[4200];
    strux_io_temp_name(path, tmp, sizeof tmp);
    STRUX_TRY(strux_io_make_parent(path));
    FILE *f = fopen(tmp, "w");
    STRUX_CHECK(f, STRUX_ERR_IO, "%s: cannot create the file", path);
    int bad = fprintf(f, "%lld %d %d\n", (long long)ds->n_global, ds->dim, ds->n_labels) < 0;
    for (int64_t i = 0; i < ds->n_local && !bad; i++) {
        for (int64_t p = ds->y_ptr[i]; p < ds->y_ptr[i + 1]; p++)
            bad |= fprintf(f, p > ds->y_ptr[i] ? ",%d" : "%d", ds->y_idx[p]) < 0;
        for (int64_t p = ds->x.ptr[i]; p < ds->x.ptr[i + 1]; p++)
            bad |= fprintf(f, " %d:%.9g", ds->x.col[p] + 1, (double)ds->x.val[p]) < 0;
        bad |= fputc('\n', f) == EOF;
    }
    bad |= fclose(f) != 0;
    if (bad) {
        remove(tmp);
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__, "%s: write failed",
                               path);
    }
    return strux_io_commit(tmp, path);
}

strux_status strux_cli_gen_args(int argc, char **argv, const char *usage,
                                const char *const *names, size_t n,
                                strux_status (*take)(void *ctx, size_t f, const char *flag,
                                                     const char *value),
                                void *ctx, const char **out)
{
    *out = NULL;
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        if (a[0] != '-') {
            if (*out)
                return strux_cli_gen_usage(usage, "more than one OUTPUT ('%s', '%s')", *out, a);
            *out = a;
            continue;
        }
        size_t f = 0;
        while (f < n && strcmp(a, names[f]) != 0)
            f++;
        if (f == n) return strux_cli_gen_usage(usage, "unknown option '%s'", a);
        if (k + 1 >= argc) return strux_cli_gen_usage(usage, "%s needs a value", a);
        STRUX_TRY(take(ctx, f, a, argv[++k]));
    }
    return *out ? STRUX_OK : strux_cli_gen_usage(usage, "OUTPUT is missing");
}

typedef struct gen_flag {
    const char *name;
    int64_t lo, hi; /* range of an integer flag */
    int64_t *i;     /* an integer flag's value, or NULL */
    double *x;      /* a real flag's value, or NULL */
} gen_flag;

static strux_status take_flag(void *ctx, size_t f, const char *flag, const char *value)
{
    const gen_flag *t = (const gen_flag *)ctx + f;
    return t->i ? parse_int(flag, value, t->lo, t->hi, t->i) : parse_real(flag, value, t->x);
}

static strux_status parse_args(int argc, char **argv, strux_gen_options *o, const char **out)
{
    int64_t rows = 0, dim = 0, labels = 0, nnz = 0, seed = 1, offset = 0;
    double m = NAN, noise = GEN_NOISE; /* m: NaN until given (parse_real takes finite numbers) */
    gen_flag flags[] = {
        {"--rows", 1, INT64_MAX, &rows, NULL},     {"--features", 1, INT32_MAX - 1, &dim, NULL},
        {"--labels", 1, INT32_MAX, &labels, NULL}, {"--nnz", 1, INT32_MAX - 1, &nnz, NULL},
        {"--seed", 0, INT64_MAX, &seed, NULL},     {"--row-offset", 0, INT64_MAX, &offset, NULL},
        {"--labels-per-row", 0, 0, NULL, &m},      {"--noise", 0, 0, NULL, &noise},
    };
    const char *names[sizeof flags / sizeof *flags];
    for (size_t f = 0; f < sizeof flags / sizeof *flags; f++)
        names[f] = flags[f].name;
    STRUX_TRY(strux_cli_gen_args(argc, argv, GEN_USAGE, names, sizeof flags / sizeof *flags,
                                 take_flag, flags, out));
    if (!rows || !dim || !labels)
        return usage_error("--rows, --features and --labels are required");
    *o = (strux_gen_options){
        .n_rows = rows,
        .first_row = offset,
        .dim = (int32_t)dim,
        .n_labels = (int32_t)labels,
        .nnz = (int32_t)(nnz             ? nnz
                         : dim < GEN_NNZ ? dim
                                         : GEN_NNZ),
        .labels_per_row = !isnan(m)                          ? m
                          : labels >= 2 * GEN_LABELS_PER_ROW ? GEN_LABELS_PER_ROW
                                                             : 0.5 * (double)labels,
        .noise = noise,
        .seed = (uint64_t)seed,
    };
    return strux_cli_gen_checked(strux_gen_options_check(o), GEN_USAGE);
}

static strux_status gen(int argc, char **argv)
{
    for (int k = 1; k < argc; k++) /* --shape: the hierarchy generators (cli/gen_shape.c) */
        if (strcmp(argv[k], "--shape") == 0) return strux_cli_gen_shape(argc, argv);
    strux_gen_options o;
    const char *out;
    STRUX_TRY(parse_args(argc, argv, &o, &out));
    STRUX_TRY(strux_io_check_output(out, NULL, 0));
    strux_dataset *ds = NULL;
    double t0 = strux_time_now();
    STRUX_TRY(strux_dataset_generate(&o, &ds));
    double t1 = strux_time_now();
    strux_status st = strux_cli_ends_with(out, ".svm") ? strux_cli_write_svm(out, ds)
                                                     : strux_io_dataset_save(out, ds);
    if (st == STRUX_OK)
        strux_log(STRUX_LOG_INFO,
                  "%s: %lld rows from row %lld, %d features, %d labels, %lld non-zeros, %.3f "
                  "labels per row, seed %llu; generated in %.2fs, written in %.2fs",
                  out, (long long)ds->n_global, (long long)o.first_row, ds->dim, ds->n_labels,
                  (long long)ds->x.ptr[ds->n_local],
                  (double)ds->y_ptr[ds->n_local] / (double)ds->n_local, (unsigned long long)o.seed,
                  t1 - t0, strux_time_now() - t1);
    strux_dataset_destroy(&ds);
    return st;
}

int strux_cmd_gen(strux_comm *comm, int argc, char **argv)
{
    for (int k = 1; k < argc; k++) /* the zero-shot generator (gen_zeroshot.c) */
        if (strcmp(argv[k], "--zero-shot") == 0)
            return strux_cli_run_on_root(comm, strux_cli_gen_zeroshot, argc, argv);
    for (int k = 1; k < argc; k++) /* a named problem (gen_churn.c) */
        if (strcmp(argv[k], "--kind") == 0) return strux_cli_gen_kind(comm, argc, argv);
    return strux_cli_run_on_root(comm, gen, argc, argv);
}
