/* data/libsvm.c - reader for LIBSVM/XMC multi-label text, plain or gzip (zlib reads both).
 * Format (ARCHITECTURE.md §4, ../shared/data/README.md): one example per line,
 * `l1,l2,... idx:val idx:val ...`, label ids 0-based, feature indices 1-based and strictly
 * ascending; an example without labels starts with a space; an optional first line `N D L`.
 * Pass 1 validates every line and records per-line non-zeros; pass 2 stores this rank's rows
 * only. Two ways to run them: the whole file in one process (strux_dataset_read_libsvm: every
 * rank of a job parses everything, so every rank reports the same first error and computes the
 * same partition), or in parts (strux_libsvm_part_*: each rank scans the lines that start in its
 * byte range, cli/data_read.c joins the counts over the ranks, the rank with the first failing
 * line re-reads it to name its line number in the file, and each rank stores its rows from their
 * byte offset). Lines come from the text reader (text.c), the feature list is parsed by
 * features.c. */
#include "strux/data.h"

#include "data_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_PROGRESS_LINES 1024 /* a stream reports its progress every this many lines */

/* Per-file facts gathered by pass 1. */
typedef struct scan {
    int have_header;
    int64_t header_n;
    int32_t header_d;
    int32_t dim;      /* features kept are 1..dim; 0 while unknown */
    int32_t n_labels; /* 0 while unknown */
    int32_t max_feature;
    int32_t max_label; /* -1 if none */
    int64_t *row_nnz;  /* kept features per example */
    int32_t *row_nlab; /* labels per example */
    int64_t *row_off;  /* byte offset of each example's line (reads in parts), or NULL */
    int64_t n_rows, cap_rows;
    int totals_only;   /* stream: count rows, non-zeros and labels, keep nothing per row */
    strux_bytes_progress_fn progress; /* stream: (ctx, bytes read, file bytes) now and then, or NULL */
    void *progress_ctx;
    int64_t nnz, n_label_ids; /* totals (totals_only) */
} scan;

/* Destination of one parsed line in pass 2. */
typedef struct sink {
    int32_t *col;
    float *val;
    int32_t *lab;
    int64_t n_dropped;
} sink;

static int is_header(const char *s)
{
    int fields = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s) break;
        if (!isdigit((unsigned char)*s)) return 0;
        while (isdigit((unsigned char)*s))
            s++;
        if (*s && *s != ' ' && *s != '\t') return 0;
        fields++;
    }
    return fields == 3;
}

static strux_status parse_header(const strux_text_reader *r, const char *line, scan *sc,
                                 const strux_read_options *opt)
{
    long long n, d, l;
    STRUX_CHECK(sscanf(line, "%lld %lld %lld", &n, &d, &l) == 3 && n > 0 && d > 0 && l > 0 &&
                    d < INT32_MAX && l < INT32_MAX,
                STRUX_ERR_INPUT, "%s:%lld: header '%s' must be three positive integers N D L",
                strux_text_reader_path(r), (long long)strux_text_reader_line_no(r), line);
    sc->have_header = 1;
    sc->header_n = n;
    sc->header_d = d > STRUX_DATA_MAX_INDEX ? STRUX_DATA_MAX_INDEX : (int32_t)d;
    if (opt->dim == 0) sc->dim = (int32_t)d;
    /* a label count fixed by the caller (data.n_labels, or the model's for held-out data) must be
     * the one the file declares: its ids mean other labels otherwise */
    STRUX_CHECK(opt->n_labels == 0 || l == opt->n_labels, STRUX_ERR_INPUT,
                "%s:%lld: the header declares %lld labels; expected %d (data.n_labels, or the "
                "model's label count for held-out data)",
                strux_text_reader_path(r), (long long)strux_text_reader_line_no(r), l,
                opt->n_labels);
    if (opt->n_labels == 0) sc->n_labels = (int32_t)l;
    return STRUX_OK;
}

static void sort_labels(int32_t *a, int32_t n)
{
    for (int32_t i = 1; i < n; i++) {
        int32_t v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

/* Feature rules of this file: the dimension once known, and the index limit: opt->max_features,
 * else the header's D, else the format's limit. */
static strux_feature_rules feature_rules(const scan *sc, const strux_read_options *opt)
{
    strux_feature_rules fr = {
        .dim = sc->dim,
        .drop_above_dim = opt->drop_above_dim,
        .dim_origin = opt->dim_origin   ? opt->dim_origin
                      : sc->have_header ? " given by the header"
                                        : " set in the config",
        .max_index = STRUX_DATA_MAX_INDEX,
        .max_origin = "",
    };
    if (opt->max_features > 0) {
        fr.max_index = opt->max_features;
        fr.max_origin = " set by max_features";
    } else if (sc->have_header) {
        fr.max_index = sc->header_d;
        fr.max_origin = " given by the header";
    }
    return fr;
}

/* Parse one example line. Pass 1 (out == NULL) validates and counts into *nnz / *nlab; pass 2
 * writes features and labels into out. labels_tmp has room for any label list of the line. */
static strux_status parse_line(const strux_text_reader *r, char *s, const scan *sc,
                               const strux_read_options *opt, sink *out, int64_t *nnz,
                               int32_t *nlab, int32_t **labels_tmp, size_t *tmp_cap,
                               int32_t *max_feature, int32_t *max_label)
{
    const char *path = strux_text_reader_path(r);
    long long ln = (long long)strux_text_reader_line_no(r);
    char tok[48];
    *nnz = 0;
    *nlab = 0;
    STRUX_CHECK(*s, STRUX_ERR_INPUT,
                "%s:%lld: empty line (an example without labels and features is a single space)",
                path, ln);
    /* binary labels (task binary): +1 / 1 positive (id 1), -1 / 0 negative (id 0) */
    if (opt->binary_labels && !isspace((unsigned char)*s)) {
        char *end = s;
        while (*end && !isspace((unsigned char)*end))
            end++;
        size_t n = (size_t)(end - s);
        int pos = (n == 2 && memcmp(s, "+1", 2) == 0) || (n == 1 && *s == '1');
        int neg = (n == 2 && memcmp(s, "-1", 2) == 0) || (n == 1 && *s == '0');
        STRUX_CHECK(pos || neg, STRUX_ERR_INPUT,
                    "%s:%lld: label '%s' is not a binary label (+1, 1, -1 or 0; a line starting "
                    "with a space is unlabeled)",
                    path, ln, strux_data_token_text(s, tok, sizeof tok));
        if (out) *out->lab++ = pos;
        if (pos > *max_label) *max_label = pos;
        *nlab = 1;
        s = end;
    } else if (!opt->binary_labels && !isspace((unsigned char)*s)) {
        /* labels: a first token without ':' that does not start with whitespace */
        char *end = s;
        while (*end && !isspace((unsigned char)*end))
            end++;
        if (!memchr(s, ':', (size_t)(end - s))) {
            int32_t n = 0;
            for (char *p = s; p < end;) {
                if ((size_t)n == *tmp_cap) {
                    STRUX_TRY(strux_realloc_array(labels_tmp, *tmp_cap * 2, sizeof **labels_tmp));
                    *tmp_cap *= 2;
                }
                char *q;
                errno = 0;
                long v = strtol(p, &q, 10);
                STRUX_CHECK(q != p && isdigit((unsigned char)*p) && (q == end || *q == ',') &&
                                errno == 0 && v <= INT32_MAX - 1,
                            STRUX_ERR_INPUT,
                            "%s:%lld: malformed label list '%s' (expected l1,l2,... with "
                            "0-based integer ids)",
                            path, ln, strux_data_token_text(s, tok, sizeof tok));
                STRUX_CHECK(sc->n_labels == 0 || v < sc->n_labels, STRUX_ERR_INPUT,
                            "%s:%lld: label %ld is out of range: the label count is %d (ids "
                            "0..%d)",
                            path, ln, v, sc->n_labels, sc->n_labels - 1);
                (*labels_tmp)[n++] = (int32_t)v;
                p = q;
                if (*p == ',') {
                    p++;
                    STRUX_CHECK(p < end, STRUX_ERR_INPUT, "%s:%lld: label list '%s' ends with ','",
                                path, ln, strux_data_token_text(s, tok, sizeof tok));
                }
            }
            sort_labels(*labels_tmp, n);
            for (int32_t k = 1; k < n; k++)
                STRUX_CHECK((*labels_tmp)[k] != (*labels_tmp)[k - 1], STRUX_ERR_INPUT,
                            "%s:%lld: label %d appears twice", path, ln, (*labels_tmp)[k]);
            if (n > 0 && (*labels_tmp)[n - 1] > *max_label) *max_label = (*labels_tmp)[n - 1];
            if (out) {
                memcpy(out->lab, *labels_tmp, (size_t)n * sizeof *out->lab);
                out->lab += n;
            }
            *nlab = n;
            s = end;
        }
    }
    /* features */
    strux_feature_rules fr = feature_rules(sc, opt);
    int64_t dropped = 0;
    STRUX_TRY(strux_features_parse(r, s, &fr, out ? &out->col : NULL, out ? &out->val : NULL, nnz,
                                   &dropped, max_feature));
    if (out) out->n_dropped += dropped;
    return STRUX_OK;
}

static strux_status scan_push(scan *sc, int64_t nnz, int32_t nlab, int64_t off)
{
    if (sc->totals_only) {
        sc->nnz += nnz;
        sc->n_label_ids += nlab;
        sc->n_rows++;
        return STRUX_OK;
    }
    if (sc->n_rows == sc->cap_rows) {
        int64_t cap = sc->cap_rows ? 2 * sc->cap_rows : 1024;
        STRUX_TRY(strux_realloc_array(&sc->row_nnz, (size_t)cap, sizeof *sc->row_nnz));
        STRUX_TRY(strux_realloc_array(&sc->row_nlab, (size_t)cap, sizeof *sc->row_nlab));
        STRUX_TRY(strux_realloc_array(&sc->row_off, (size_t)cap, sizeof *sc->row_off));
        sc->cap_rows = cap;
    }
    sc->row_nnz[sc->n_rows] = nnz;
    sc->row_nlab[sc->n_rows] = nlab;
    sc->row_off[sc->n_rows] = off;
    sc->n_rows++;
    return STRUX_OK;
}

static void scan_free(scan *sc)
{
    strux_free(&sc->row_nnz);
    strux_free(&sc->row_nlab);
    strux_free(&sc->row_off);
}

/* Pass 1 over the lines from the reader's position: validate each, count its non-zeros and
 * labels; up to the end, or to the first line that starts at byte stop_at or later (stop_at ≥ 0).
 * Line 1 may be the XMC header (with_header: the reader starts at the file's first line). On a
 * failure of a line, *fail_line gets its number as the reader counts (else −1). */
static strux_status scan_lines(strux_text_reader *r, const strux_read_options *opt, scan *sc,
                               int64_t stop_at, int with_header, int32_t **labels_tmp,
                               size_t *tmp_cap, int64_t *fail_line)
{
    char *line;
    *fail_line = -1;
    for (;;) {
        strux_status st = strux_text_reader_next_line(r, &line, NULL);
        if (st != STRUX_OK) {
            *fail_line = strux_text_reader_line_no(r) + 1;
            return st;
        }
        if (!line || (stop_at >= 0 && strux_text_reader_offset(r) >= stop_at)) break;
        int64_t nnz = 0;
        int32_t nlab = 0;
        int header = with_header && strux_text_reader_line_no(r) == 1 && is_header(line);
        if (header)
            st = parse_header(r, line, sc, opt);
        else
            st = parse_line(r, line, sc, opt, NULL, &nnz, &nlab, labels_tmp, tmp_cap,
                            &sc->max_feature, &sc->max_label);
        if (st != STRUX_OK) {
            *fail_line = strux_text_reader_line_no(r);
            return st;
        }
        if (!header) STRUX_TRY(scan_push(sc, nnz, nlab, strux_text_reader_offset(r)));
        if (sc->progress && strux_text_reader_line_no(r) % STREAM_PROGRESS_LINES == 0)
            sc->progress(sc->progress_ctx, strux_text_reader_offset(r),
                         strux_text_reader_file_bytes(r));
    }
    return STRUX_OK;
}

/* After pass 1 over the whole file (sc->n_rows, max_feature and max_label are the file's): the
 * file-wide checks, and dim and n_labels settled. */
static strux_status scan_finish(const char *path, const strux_read_options *opt, scan *sc)
{
    STRUX_CHECK(sc->n_rows > 0, STRUX_ERR_INPUT, "%s: no examples (the file is empty%s)", path,
                sc->have_header ? " after its header" : "");
    STRUX_CHECK(!sc->have_header || sc->header_n == sc->n_rows, STRUX_ERR_INPUT,
                "%s:1: header announces %lld examples but the file has %lld", path,
                (long long)sc->header_n, (long long)sc->n_rows);
    if (sc->dim == 0) sc->dim = sc->max_feature;
    if (sc->n_labels == 0) sc->n_labels = sc->max_label + 1;
    if (opt->binary_labels) sc->n_labels = 2; /* negative (0) and positive (1) */
    STRUX_CHECK(sc->n_rows >= opt->n_ranks, STRUX_ERR_INPUT,
                "%s: %lld examples cannot be shared by %d ranks (each rank needs at least one); "
                "run with at most %lld ranks",
                path, (long long)sc->n_rows, opt->n_ranks, (long long)sc->n_rows);
    return STRUX_OK;
}

static void scan_start(const strux_read_options *opt, scan *sc)
{
    sc->dim = opt->dim;
    sc->n_labels = opt->n_labels;
    sc->max_label = -1;
}

/* Pass 2: this rank's rows (the plan's [lo, hi) of the file's examples, whose non-zeros and
 * labels per row are row_nnz and row_nlab, indexed by example), read from the reader's position,
 * which is the line of example lo (the header, if it is next, is skipped). */
static strux_status store_rows(strux_text_reader *r, const strux_read_options *opt, const scan *sc,
                               const int64_t *row_nnz, const int32_t *row_nlab, strux_shard *plan,
                               int32_t **labels_tmp, size_t *tmp_cap, strux_dataset **out)
{
    strux_status st = STRUX_OK;
    int64_t lo = plan->lo, hi = plan->hi, nnz = 0, nlab = 0, *y_ptr = NULL;
    int32_t *y_idx = NULL;
    strux_csr x = {0};
    const char *path = strux_text_reader_path(r);
    for (int64_t i = lo; i < hi; i++) {
        nnz += row_nnz[i];
        nlab += row_nlab[i];
    }
    STRUX_TRY_GOTO(st, strux_csr_alloc(&x, hi - lo, sc->dim, nnz), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_ptr, (size_t)(hi - lo) + 1, sizeof *y_ptr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_idx, (size_t)nlab, sizeof *y_idx), done);
    for (int64_t i = lo; i < hi; i++) {
        x.ptr[i - lo + 1] = x.ptr[i - lo] + row_nnz[i];
        y_ptr[i - lo + 1] = y_ptr[i - lo] + row_nlab[i];
    }
    sink snk = {x.col, x.val, y_idx, 0};
    int64_t row = lo;
    char *line;
    while (row < hi) {
        STRUX_TRY_GOTO(st, strux_text_reader_next_line(r, &line, NULL), done);
        if (!line) break;
        if (strux_text_reader_line_no(r) == 1 && sc->have_header) continue;
        int64_t n1;
        int32_t n2, mf = 0, ml = -1;
        STRUX_TRY_GOTO(
            st, parse_line(r, line, sc, opt, &snk, &n1, &n2, labels_tmp, tmp_cap, &mf, &ml), done);
        STRUX_CHECK_GOTO(st, n1 == row_nnz[row] && n2 == row_nlab[row], STRUX_ERR_INPUT, done,
                         "%s: the file changed while it was read", path);
        row++;
    }
    STRUX_CHECK_GOTO(st, row == hi, STRUX_ERR_INPUT, done, "%s: the file changed while it was read",
                     path);
    STRUX_TRY_GOTO(st,
                   strux_dataset_from_arrays(path, &x, &y_ptr, &y_idx, sc->n_rows, lo, sc->dim,
                                             sc->n_labels, opt->bias, out),
                   done);
    (*out)->n_dropped = snk.n_dropped;
    strux_dataset_set_shard(*out, plan);
done:
    strux_free(&y_ptr);
    strux_free(&y_idx);
    strux_csr_free(&x);
    return st;
}

/* The partition of the file's examples for this rank, from the non-zeros per example. */
static strux_status plan_shards(const strux_read_options *opt, int64_t n, const int64_t *row_nnz,
                                strux_shard *plan)
{
    int64_t *prefix = NULL; /* by non-zeros, +1 per row so that empty rows still count */
    STRUX_TRY(strux_alloc_array(&prefix, (size_t)n + 1, sizeof *prefix));
    for (int64_t i = 0; i < n; i++)
        prefix[i + 1] = prefix[i] + row_nnz[i] + 1;
    strux_status st = strux_shard_plan(prefix, n, opt, plan);
    strux_free(&prefix);
    return st;
}

strux_status strux_dataset_read_libsvm(const char *path, const strux_read_options *opt,
                                       strux_dataset **out)
{
    strux_status st = STRUX_OK;
    strux_text_reader *r = NULL;
    scan sc = {0};
    int32_t *labels_tmp = NULL;
    strux_shard plan = {0};
    size_t tmp_cap = 64;
    *out = NULL;

    STRUX_TRY(strux_text_reader_open(path, &r));
    STRUX_TRY_GOTO(st, strux_alloc_array(&labels_tmp, tmp_cap, sizeof *labels_tmp), done);
    scan_start(opt, &sc);
    int64_t fail_line;
    STRUX_TRY_GOTO(st, scan_lines(r, opt, &sc, -1, 1, &labels_tmp, &tmp_cap, &fail_line), done);
    STRUX_TRY_GOTO(st, scan_finish(path, opt, &sc), done);
    STRUX_TRY_GOTO(st, plan_shards(opt, sc.n_rows, sc.row_nnz, &plan), done);
    STRUX_TRY_GOTO(st, strux_text_reader_rewind(r), done);
    for (int64_t row = 0; row < plan.lo; row++) { /* the lines before this rank's rows */
        char *line;
        STRUX_TRY_GOTO(st, strux_text_reader_next_line(r, &line, NULL), done);
        if (line && strux_text_reader_line_no(r) == 1 && sc.have_header) row--;
    }
    STRUX_TRY_GOTO(st,
                   store_rows(r, opt, &sc, sc.row_nnz, sc.row_nlab, &plan, &labels_tmp, &tmp_cap,
                              out),
                   done);
done:
    strux_shard_free(&plan);
    strux_text_reader_close(&r);
    scan_free(&sc);
    strux_free(&labels_tmp);
    return st;
}

/* ---- reads in parts (cli/data_read.c) ---- */

struct strux_libsvm_part {
    char *path;
    strux_read_options opt;
    scan sc;             /* the header's facts and this part's lines */
    int64_t n_lines;     /* lines of the part read without error (the header included) */
    int64_t fail_offset; /* byte offset of the line that failed, −1 */
    int64_t fail_line;   /* its number counted from the part's first line (1) */
};

void strux_libsvm_part_destroy(strux_libsvm_part **out)
{
    strux_libsvm_part *p = *out;
    if (!p) return;
    strux_free(&p->path);
    scan_free(&p->sc);
    strux_free(out);
}

/* The part's scan; on a failure the failing line is remembered. */
static strux_status part_scan(strux_libsvm_part *p, strux_text_reader *r, int64_t lo, int64_t hi,
                              int32_t **labels_tmp, size_t *tmp_cap)
{
    if (lo > 0) { /* line 1 for the header's facts, then the first line that starts at lo or on */
        char *line;
        STRUX_TRY(strux_text_reader_next_line(r, &line, NULL));
        if (line && is_header(line)) STRUX_TRY(parse_header(r, line, &p->sc, &p->opt));
        STRUX_TRY(strux_text_reader_seek(r, lo - 1, 0));
        STRUX_TRY(strux_text_reader_skip_line(r));
    }
    int64_t fail_line;
    strux_status st = scan_lines(r, &p->opt, &p->sc, hi, lo == 0, labels_tmp, tmp_cap, &fail_line);
    if (st != STRUX_OK && fail_line > 0) {
        p->fail_line = fail_line;
        p->fail_offset = strux_text_reader_offset(r);
        p->n_lines = fail_line - 1;
        return st;
    }
    p->n_lines = p->sc.n_rows + (lo == 0 && p->sc.have_header); /* each line a row or the header */
    return st;
}

strux_status strux_libsvm_part_scan(const char *path, const strux_read_options *opt, int64_t lo,
                                    int64_t hi, strux_libsvm_part **out)
{
    strux_libsvm_part *p = NULL;
    strux_text_reader *r = NULL;
    int32_t *labels_tmp = NULL;
    size_t tmp_cap = 64;
    *out = NULL;
    STRUX_TRY(strux_alloc(&p, sizeof *p));
    p->opt = *opt;
    p->fail_offset = -1;
    scan_start(opt, &p->sc);
    strux_status st = strux_strdup(&p->path, path);
    if (st == STRUX_OK) st = strux_text_reader_open(path, &r);
    if (st == STRUX_OK) st = strux_alloc_array(&labels_tmp, tmp_cap, sizeof *labels_tmp);
    if (st == STRUX_OK) st = part_scan(p, r, lo, hi, &labels_tmp, &tmp_cap);
    strux_text_reader_close(&r);
    strux_free(&labels_tmp);
    if (p->fail_offset < 0 && st != STRUX_OK) { /* not a line's failure: no part */
        strux_libsvm_part_destroy(&p);
        return st;
    }
    *out = p;
    return st;
}

int64_t strux_libsvm_part_lines(const strux_libsvm_part *p)
{
    return p->n_lines;
}

void strux_libsvm_part_rows(const strux_libsvm_part *p, int64_t *n_rows, const int64_t **row_nnz,
                            const int32_t **row_nlab, const int64_t **row_off, int32_t *max_feature,
                            int32_t *max_label)
{
    *n_rows = p->sc.n_rows;
    *row_nnz = p->sc.row_nnz;
    *row_nlab = p->sc.row_nlab;
    *row_off = p->sc.row_off;
    *max_feature = p->sc.max_feature;
    *max_label = p->sc.max_label;
}

strux_status strux_libsvm_part_error(const strux_libsvm_part *p, int64_t first_line)
{
    STRUX_CHECK(p->fail_offset >= 0, STRUX_ERR_INTERNAL, "%s: this part of the file has no error",
                p->path);
    strux_text_reader *r = NULL;
    scan sc = p->sc; /* the header's facts; no rows are added */
    int32_t *labels_tmp = NULL;
    size_t tmp_cap = 64;
    char *line;
    strux_status st = strux_text_reader_open(p->path, &r);
    if (st == STRUX_OK) st = strux_alloc_array(&labels_tmp, tmp_cap, sizeof *labels_tmp);
    if (st == STRUX_OK) st = strux_text_reader_seek(r, p->fail_offset, first_line + p->fail_line - 2);
    if (st == STRUX_OK) st = strux_text_reader_next_line(r, &line, NULL);
    if (st == STRUX_OK && line) {
        int64_t nnz;
        int32_t nlab, mf = 0, ml = -1;
        if (strux_text_reader_line_no(r) == 1 && is_header(line))
            st = parse_header(r, line, &sc, &p->opt);
        else
            st = parse_line(r, line, &sc, &p->opt, NULL, &nnz, &nlab, &labels_tmp, &tmp_cap, &mf,
                            &ml);
    }
    if (st == STRUX_OK)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: the file changed while it was read", p->path);
    strux_text_reader_close(&r);
    strux_free(&labels_tmp);
    return st;
}

strux_status strux_libsvm_part_read(strux_libsvm_part *p, int64_t n_rows, const int64_t *row_nnz,
                                    const int32_t *row_nlab, const int64_t *row_off,
                                    int32_t max_feature, int32_t max_label, strux_dataset **out)
{
    strux_status st = STRUX_OK;
    strux_text_reader *r = NULL;
    int32_t *labels_tmp = NULL;
    strux_shard plan = {0};
    size_t tmp_cap = 64;
    scan sc = p->sc; /* the header's facts, with the file's counts */
    sc.n_rows = n_rows;
    sc.max_feature = max_feature;
    sc.max_label = max_label;
    *out = NULL;
    STRUX_TRY(scan_finish(p->path, &p->opt, &sc));
    STRUX_TRY(plan_shards(&p->opt, n_rows, row_nnz, &plan));
    STRUX_TRY_GOTO(st, strux_alloc_array(&labels_tmp, tmp_cap, sizeof *labels_tmp), done);
    STRUX_TRY_GOTO(st, strux_text_reader_open(p->path, &r), done);
    /* example i is line i + 1 (+ 1 after a header) */
    STRUX_TRY_GOTO(st, strux_text_reader_seek(r, row_off[plan.lo], plan.lo + sc.have_header), done);
    STRUX_TRY_GOTO(st,
                   store_rows(r, &p->opt, &sc, row_nnz, row_nlab, &plan, &labels_tmp, &tmp_cap,
                              out),
                   done);
done:
    strux_shard_free(&plan);
    strux_text_reader_close(&r);
    strux_free(&labels_tmp);
    return st;
}

/* ---- one pass at a time over the whole file, in bounded memory (strux convert) ---- */

struct strux_libsvm_stream {
    strux_text_reader *r;
    strux_read_options opt;
    scan sc;               /* the file's facts and totals, nothing per row */
    int32_t *labels_tmp;
    size_t tmp_cap;
    int64_t row;           /* examples handed out by strux_libsvm_stream_next */
};

void strux_libsvm_stream_close(strux_libsvm_stream **out)
{
    strux_libsvm_stream *s = *out;
    if (!s) return;
    strux_text_reader_close(&s->r);
    strux_free(&s->labels_tmp);
    strux_free(out);
}

strux_status strux_libsvm_stream_open(const char *path, const strux_read_options *opt,
                                      strux_bytes_progress_fn progress, void *ctx,
                                      strux_libsvm_stream **out, strux_libsvm_facts *facts)
{
    strux_libsvm_stream *s = NULL;
    *out = NULL;
    STRUX_TRY(strux_alloc(&s, sizeof *s));
    s->opt = *opt;
    s->tmp_cap = 64;
    scan_start(opt, &s->sc);
    s->sc.totals_only = 1;
    s->sc.progress = progress;
    s->sc.progress_ctx = ctx;
    int64_t fail_line;
    strux_status st = strux_text_reader_open(path, &s->r);
    if (st == STRUX_OK) st = strux_alloc_array(&s->labels_tmp, s->tmp_cap, sizeof *s->labels_tmp);
    if (st == STRUX_OK)
        st = scan_lines(s->r, opt, &s->sc, -1, 1, &s->labels_tmp, &s->tmp_cap, &fail_line);
    if (st == STRUX_OK) st = scan_finish(path, opt, &s->sc);
    if (st == STRUX_OK) st = strux_text_reader_rewind(s->r);
    if (st != STRUX_OK) {
        strux_libsvm_stream_close(&s);
        return st;
    }
    *facts = (strux_libsvm_facts){.n_rows = s->sc.n_rows,
                                  .dim = s->sc.dim,
                                  .n_labels = s->sc.n_labels,
                                  .nnz = s->sc.nnz,
                                  .n_label_ids = s->sc.n_label_ids};
    *out = s;
    return STRUX_OK;
}

/* Room for `more` entries after n in a chunk array of *cap (doubling). */
static strux_status chunk_reserve(void *pp, int64_t *cap, int64_t n, int64_t more, size_t size)
{
    if (n + more <= *cap) return STRUX_OK;
    int64_t c = *cap ? *cap : 4096;
    while (c < n + more)
        c *= 2;
    STRUX_TRY(strux_realloc_array(pp, (size_t)c, size));
    *cap = c;
    return STRUX_OK;
}

strux_status strux_libsvm_stream_next(strux_libsvm_stream *s, int64_t max_rows, int64_t max_nnz,
                                      strux_libsvm_chunk *c)
{
    c->n_rows = c->nnz = c->n_label_ids = 0;
    STRUX_TRY(chunk_reserve(&c->row_nnz, &c->rows_cap, 0, max_rows, sizeof *c->row_nnz));
    STRUX_TRY(chunk_reserve(&c->row_nlab, &c->nlab_cap, 0, max_rows, sizeof *c->row_nlab));
    char *line;
    size_t len;
    while (c->n_rows < max_rows && c->nnz < max_nnz && s->row < s->sc.n_rows) {
        STRUX_TRY(strux_text_reader_next_line(s->r, &line, &len));
        STRUX_CHECK(line, STRUX_ERR_INPUT, "%s: the file changed while it was read",
                    strux_text_reader_path(s->r));
        if (strux_text_reader_line_no(s->r) == 1 && s->sc.have_header) continue;
        /* a line of len bytes holds at most len/2 + 1 features and labels */
        int64_t most = (int64_t)len / 2 + 1;
        STRUX_TRY(chunk_reserve(&c->col, &c->col_cap, c->nnz, most, sizeof *c->col));
        STRUX_TRY(chunk_reserve(&c->val, &c->val_cap, c->nnz, most, sizeof *c->val));
        STRUX_TRY(chunk_reserve(&c->lab, &c->lab_cap, c->n_label_ids, most, sizeof *c->lab));
        sink snk = {c->col + c->nnz, c->val + c->nnz, c->lab + c->n_label_ids, 0};
        int64_t nnz;
        int32_t nlab, mf = 0, ml = -1;
        STRUX_TRY(parse_line(s->r, line, &s->sc, &s->opt, &snk, &nnz, &nlab, &s->labels_tmp,
                             &s->tmp_cap, &mf, &ml));
        c->row_nnz[c->n_rows] = nnz;
        c->row_nlab[c->n_rows] = nlab;
        c->nnz += nnz;
        c->n_label_ids += nlab;
        c->n_rows++;
        s->row++;
        if (s->sc.progress && s->row % STREAM_PROGRESS_LINES == 0)
            s->sc.progress(s->sc.progress_ctx, strux_text_reader_offset(s->r),
                           strux_text_reader_file_bytes(s->r));
    }
    return STRUX_OK;
}

void strux_libsvm_chunk_free(strux_libsvm_chunk *c)
{
    strux_free(&c->row_nnz);
    strux_free(&c->row_nlab);
    strux_free(&c->col);
    strux_free(&c->val);
    strux_free(&c->lab);
    *c = (strux_libsvm_chunk){0};
}
