/* data/libsvm.c - reader for LIBSVM/XMC multi-label text, plain or gzip (zlib reads both).
 * Format (ARCHITECTURE.md §4, ../shared/data/README.md): one example per line,
 * `l1,l2,... idx:val idx:val ...`, label ids 0-based, feature indices 1-based and strictly
 * ascending; an example without labels starts with a space; an optional first line `N D L`.
 * Pass 1 validates every line and records per-line non-zeros (every rank, so every rank reports the
 * same first error and computes the same partition); pass 2 stores this rank's rows only. Lines
 * come from the text reader (text.c), the feature list is parsed by features.c. */
#include "strux/data.h"

#include "data_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int64_t n_rows, cap_rows;
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

static strux_status scan_push(scan *sc, int64_t nnz, int32_t nlab)
{
    if (sc->n_rows == sc->cap_rows) {
        int64_t cap = sc->cap_rows ? 2 * sc->cap_rows : 1024;
        STRUX_TRY(strux_realloc_array(&sc->row_nnz, (size_t)cap, sizeof *sc->row_nnz));
        STRUX_TRY(strux_realloc_array(&sc->row_nlab, (size_t)cap, sizeof *sc->row_nlab));
        sc->cap_rows = cap;
    }
    sc->row_nnz[sc->n_rows] = nnz;
    sc->row_nlab[sc->n_rows] = nlab;
    sc->n_rows++;
    return STRUX_OK;
}

/* Pass 1: validate every line, count per-row non-zeros and labels, settle dim and n_labels. */
static strux_status scan_file(strux_text_reader *r, const strux_read_options *opt, scan *sc,
                              int32_t **labels_tmp, size_t *tmp_cap)
{
    char *line;
    sc->dim = opt->dim;
    sc->n_labels = opt->n_labels;
    sc->max_label = -1;
    for (;;) {
        STRUX_TRY(strux_text_reader_next_line(r, &line, NULL));
        if (!line) break;
        if (strux_text_reader_line_no(r) == 1 && is_header(line)) {
            STRUX_TRY(parse_header(r, line, sc, opt));
            continue;
        }
        int64_t nnz;
        int32_t nlab;
        STRUX_TRY(parse_line(r, line, sc, opt, NULL, &nnz, &nlab, labels_tmp, tmp_cap,
                             &sc->max_feature, &sc->max_label));
        STRUX_TRY(scan_push(sc, nnz, nlab));
    }
    STRUX_CHECK(sc->n_rows > 0, STRUX_ERR_INPUT, "%s: no examples (the file is empty%s)",
                strux_text_reader_path(r), sc->have_header ? " after its header" : "");
    STRUX_CHECK(!sc->have_header || sc->header_n == sc->n_rows, STRUX_ERR_INPUT,
                "%s:1: header announces %lld examples but the file has %lld",
                strux_text_reader_path(r), (long long)sc->header_n, (long long)sc->n_rows);
    if (sc->dim == 0) sc->dim = sc->max_feature;
    if (sc->n_labels == 0) sc->n_labels = sc->max_label + 1;
    if (opt->binary_labels) sc->n_labels = 2; /* negative (0) and positive (1) */
    STRUX_CHECK(sc->n_rows >= opt->n_ranks, STRUX_ERR_INPUT,
                "%s: %lld examples cannot be shared by %d ranks (each rank needs at least one); "
                "run with at most %lld ranks",
                strux_text_reader_path(r), (long long)sc->n_rows, opt->n_ranks,
                (long long)sc->n_rows);
    return STRUX_OK;
}

strux_status strux_dataset_read_libsvm(const char *path, const strux_read_options *opt,
                                       strux_dataset **out)
{
    strux_status st = STRUX_OK;
    strux_text_reader *r = NULL;
    scan sc = {0};
    int64_t *prefix = NULL, *y_ptr = NULL;
    int32_t *y_idx = NULL, *labels_tmp = NULL;
    strux_csr x = {0};
    strux_shard plan = {0};
    size_t tmp_cap = 64;
    *out = NULL;

    STRUX_TRY(strux_text_reader_open(path, &r));
    STRUX_TRY_GOTO(st, strux_alloc_array(&labels_tmp, tmp_cap, sizeof *labels_tmp), done);
    STRUX_TRY_GOTO(st, scan_file(r, opt, &sc, &labels_tmp, &tmp_cap), done);

    /* partition by non-zeros (+1 per row so that empty rows still count) */
    STRUX_TRY_GOTO(st, strux_alloc_array(&prefix, (size_t)sc.n_rows + 1, sizeof *prefix), done);
    for (int64_t i = 0; i < sc.n_rows; i++)
        prefix[i + 1] = prefix[i] + sc.row_nnz[i] + 1;
    STRUX_TRY_GOTO(st, strux_shard_plan(prefix, sc.n_rows, opt, &plan), done);
    int64_t lo = plan.lo, hi = plan.hi;

    int64_t nnz = 0, nlab = 0;
    for (int64_t i = lo; i < hi; i++) {
        nnz += sc.row_nnz[i];
        nlab += sc.row_nlab[i];
    }
    STRUX_TRY_GOTO(st, strux_csr_alloc(&x, hi - lo, sc.dim, nnz), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_ptr, (size_t)(hi - lo) + 1, sizeof *y_ptr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_idx, (size_t)nlab, sizeof *y_idx), done);
    for (int64_t i = lo; i < hi; i++) {
        x.ptr[i - lo + 1] = x.ptr[i - lo] + sc.row_nnz[i];
        y_ptr[i - lo + 1] = y_ptr[i - lo] + sc.row_nlab[i];
    }

    /* pass 2: this rank's rows */
    STRUX_TRY_GOTO(st, strux_text_reader_rewind(r), done);
    sink snk = {x.col, x.val, y_idx, 0};
    int64_t row = 0;
    char *line;
    for (;;) {
        STRUX_TRY_GOTO(st, strux_text_reader_next_line(r, &line, NULL), done);
        if (!line || row >= hi) break;
        if (strux_text_reader_line_no(r) == 1 && sc.have_header) continue;
        if (row++ < lo) continue;
        int64_t n1;
        int32_t n2, mf = 0, ml = -1;
        STRUX_TRY_GOTO(
            st, parse_line(r, line, &sc, opt, &snk, &n1, &n2, &labels_tmp, &tmp_cap, &mf, &ml),
            done);
    }
    STRUX_CHECK_GOTO(st, row == hi, STRUX_ERR_INPUT, done, "%s: the file changed while it was read",
                     path);
    STRUX_TRY_GOTO(st,
                   strux_dataset_from_arrays(path, &x, &y_ptr, &y_idx, sc.n_rows, lo, sc.dim,
                                             sc.n_labels, opt->bias, out),
                   done);
    (*out)->n_dropped = snk.n_dropped;
    strux_dataset_set_shard(*out, &plan);
done:
    strux_shard_free(&plan);
    strux_text_reader_close(&r);
    strux_free(&sc.row_nnz);
    strux_free(&sc.row_nlab);
    strux_free(&prefix);
    strux_free(&labels_tmp);
    strux_free(&y_ptr);
    strux_free(&y_idx);
    strux_csr_free(&x);
    return st;
}
