/* data/libsvm.c - reader for LIBSVM/XMC multi-label text, plain or gzip (zlib reads both).
 * Format (ARCHITECTURE.md §4, ../shared/data/README.md): one example per line,
 * `l1,l2,... idx:val idx:val ...`, label ids 0-based, feature indices 1-based and strictly
 * ascending; an example without labels starts with a space; an optional first line `N D L`.
 * Pass 1 validates every line and records per-line non-zeros (every rank, so every rank reports the
 * same first error and computes the same partition); pass 2 stores this rank's rows only. */
#include "strux/data.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct line_reader {
    gzFile f;
    const char *path;
    char *buf;       /* current line, NUL-terminated, newline stripped */
    size_t cap;
    int64_t line_no; /* 1-based number of the line in buf */
} line_reader;

/* Per-file facts gathered by pass 1. */
typedef struct scan {
    int have_header;
    int64_t header_n;
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

static strux_status reader_open(line_reader *r, const char *path)
{
    r->path = path;
    r->line_no = 0;
    r->cap = 1 << 16;
    STRUX_TRY(strux_alloc(&r->buf, r->cap));
    r->f = gzopen(path, "rb");
    if (!r->f) {
        strux_free(&r->buf);
        return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                               "%s: cannot open for reading: %s", path,
                               errno ? strerror(errno) : "gzopen failed");
    }
    gzbuffer(r->f, 1 << 17);
    return STRUX_OK;
}

static void reader_close(line_reader *r)
{
    if (r->f) gzclose(r->f);
    r->f = NULL;
    strux_free(&r->buf);
}

/* Next line into r->buf; *got = 0 at end of file. Lines of any length. */
static strux_status reader_next(line_reader *r, int *got)
{
    size_t len = 0;
    *got = 0;
    for (;;) {
        if (!gzgets(r->f, r->buf + len, (int)(r->cap - len > INT_MAX ? INT_MAX : r->cap - len))) {
            int err;
            const char *msg = gzerror(r->f, &err);
            STRUX_CHECK(err == Z_OK || err == Z_BUF_ERROR, STRUX_ERR_INPUT,
                        "%s:%lld: read failed: %s", r->path, (long long)r->line_no + 1, msg);
            if (len == 0) return STRUX_OK; /* clean end of file */
            break;                         /* last line without newline */
        }
        len += strlen(r->buf + len);
        if (len > 0 && r->buf[len - 1] == '\n') break;
        if (len + 1 < r->cap) {
            if (gzeof(r->f)) break;
            continue;
        }
        STRUX_TRY(strux_realloc_array(&r->buf, r->cap * 2, 1));
        r->cap *= 2;
    }
    while (len > 0 && (r->buf[len - 1] == '\n' || r->buf[len - 1] == '\r')) r->buf[--len] = '\0';
    r->line_no++;
    *got = 1;
    return STRUX_OK;
}

/* Copy of a token for messages, truncated. */
static const char *token_text(const char *s, char *out, size_t n)
{
    size_t k = 0;
    while (s[k] && !isspace((unsigned char)s[k]) && k + 1 < n) k++;
    memcpy(out, s, k);
    out[k] = '\0';
    if (s[k] && !isspace((unsigned char)s[k]) && n > 4) memcpy(out + n - 4, "...", 4);
    return out;
}

static int is_header(const char *s)
{
    int fields = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
        if (!isdigit((unsigned char)*s)) return 0;
        while (isdigit((unsigned char)*s)) s++;
        if (*s && *s != ' ' && *s != '\t') return 0;
        fields++;
    }
    return fields == 3;
}

static strux_status parse_header(const line_reader *r, scan *sc, const strux_read_options *opt)
{
    long long n, d, l;
    STRUX_CHECK(sscanf(r->buf, "%lld %lld %lld", &n, &d, &l) == 3 && n > 0 && d > 0 && l > 0 &&
                    d < INT32_MAX && l < INT32_MAX,
                STRUX_ERR_INPUT, "%s:%lld: header '%s' must be three positive integers N D L",
                r->path, (long long)r->line_no, r->buf);
    sc->have_header = 1;
    sc->header_n = n;
    if (opt->dim == 0) sc->dim = (int32_t)d;
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

/* Parse one example line. Pass 1 (out == NULL) validates and counts into *nnz / *nlab; pass 2
 * writes features and labels into out. labels_tmp has room for any label list of the line. */
static strux_status parse_line(const line_reader *r, const scan *sc, int drop, sink *out,
                               int64_t *nnz, int32_t *nlab, int32_t **labels_tmp, size_t *tmp_cap,
                               int32_t *max_feature, int32_t *max_label)
{
    const char *path = r->path;
    long long ln = (long long)r->line_no;
    char tok[48];
    char *s = r->buf;
    *nnz = 0;
    *nlab = 0;
    STRUX_CHECK(*s, STRUX_ERR_INPUT,
                "%s:%lld: empty line (an example without labels and features is a single space)",
                path, ln);
    /* labels: a first token without ':' that does not start with whitespace */
    if (!isspace((unsigned char)*s)) {
        char *end = s;
        while (*end && !isspace((unsigned char)*end)) end++;
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
                            path, ln, token_text(s, tok, sizeof tok));
                STRUX_CHECK(sc->n_labels == 0 || v < sc->n_labels, STRUX_ERR_INPUT,
                            "%s:%lld: label %ld is out of range: the label count is %d (ids "
                            "0..%d)",
                            path, ln, v, sc->n_labels, sc->n_labels - 1);
                (*labels_tmp)[n++] = (int32_t)v;
                p = q;
                if (*p == ',') {
                    p++;
                    STRUX_CHECK(p < end, STRUX_ERR_INPUT, "%s:%lld: label list '%s' ends with ','",
                                path, ln, token_text(s, tok, sizeof tok));
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
    long prev = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
        char *q;
        errno = 0;
        long idx = strtol(s, &q, 10);
        STRUX_CHECK(q != s && *q == ':' && errno == 0 && (isdigit((unsigned char)*s) || *s == '-'),
                    STRUX_ERR_INPUT, "%s:%lld: malformed feature '%s' (expected index:value)",
                    path, ln, token_text(s, tok, sizeof tok));
        STRUX_CHECK(idx > 0, STRUX_ERR_INPUT,
                    "%s:%lld: feature index %ld in '%s' must be >= 1 (indices are 1-based)", path,
                    ln, idx, token_text(s, tok, sizeof tok));
        STRUX_CHECK(idx < INT32_MAX - 1, STRUX_ERR_INPUT,
                    "%s:%lld: feature index %ld is too large (at most %d)", path, ln, idx,
                    INT32_MAX - 2);
        STRUX_CHECK(idx != prev, STRUX_ERR_INPUT, "%s:%lld: duplicate feature index %ld", path, ln,
                    idx);
        STRUX_CHECK(idx > prev, STRUX_ERR_INPUT,
                    "%s:%lld: feature index %ld after %ld; indices must ascend", path, ln, idx,
                    prev);
        prev = idx;
        char *vs = q + 1, *ve;
        errno = 0;
        double v = strtod(vs, &ve);
        STRUX_CHECK(ve != vs && (*ve == '\0' || isspace((unsigned char)*ve)), STRUX_ERR_INPUT,
                    "%s:%lld: malformed value in feature '%s'", path, ln,
                    token_text(s, tok, sizeof tok));
        STRUX_CHECK(isfinite(v) && fabs(v) <= 3.4e38, STRUX_ERR_INPUT,
                    "%s:%lld: feature %ld has a non-finite value '%s'", path, ln, idx,
                    token_text(vs, tok, sizeof tok));
        s = ve;
        if (sc->dim > 0 && idx > sc->dim) {
            STRUX_CHECK(drop, STRUX_ERR_INPUT,
                        "%s:%lld: feature index %ld exceeds the dimension %d%s", path, ln, idx,
                        sc->dim, sc->have_header ? " given by the header" : " set in the config");
            if (out) out->n_dropped++;
            continue;
        }
        if (idx > *max_feature) *max_feature = (int32_t)idx;
        if (out) {
            *out->col++ = (int32_t)(idx - 1);
            *out->val++ = (float)v;
        }
        (*nnz)++;
    }
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
static strux_status scan_file(line_reader *r, const strux_read_options *opt, scan *sc,
                              int32_t **labels_tmp, size_t *tmp_cap)
{
    int got;
    sc->dim = opt->dim;
    sc->n_labels = opt->n_labels;
    sc->max_label = -1;
    for (;;) {
        STRUX_TRY(reader_next(r, &got));
        if (!got) break;
        if (r->line_no == 1 && is_header(r->buf)) {
            STRUX_TRY(parse_header(r, sc, opt));
            continue;
        }
        int64_t nnz;
        int32_t nlab;
        STRUX_TRY(parse_line(r, sc, opt->drop_above_dim, NULL, &nnz, &nlab, labels_tmp, tmp_cap,
                             &sc->max_feature, &sc->max_label));
        STRUX_TRY(scan_push(sc, nnz, nlab));
    }
    STRUX_CHECK(sc->n_rows > 0, STRUX_ERR_INPUT, "%s: no examples (the file is empty%s)", r->path,
                sc->have_header ? " after its header" : "");
    STRUX_CHECK(!sc->have_header || sc->header_n == sc->n_rows, STRUX_ERR_INPUT,
                "%s:1: header announces %lld examples but the file has %lld", r->path,
                (long long)sc->header_n, (long long)sc->n_rows);
    if (sc->dim == 0) sc->dim = sc->max_feature;
    if (sc->n_labels == 0) sc->n_labels = sc->max_label + 1;
    STRUX_CHECK(sc->n_rows >= opt->n_ranks, STRUX_ERR_INPUT,
                "%s: %lld examples cannot be shared by %d ranks (each rank needs at least one); "
                "run with at most %lld ranks",
                r->path, (long long)sc->n_rows, opt->n_ranks, (long long)sc->n_rows);
    return STRUX_OK;
}

strux_status strux_dataset_read_libsvm(const char *path, const strux_read_options *opt,
                                       strux_dataset **out)
{
    strux_status st = STRUX_OK;
    line_reader r = {0};
    scan sc = {0};
    int64_t *prefix = NULL, *y_ptr = NULL;
    int32_t *y_idx = NULL, *labels_tmp = NULL;
    strux_csr x = {0};
    size_t tmp_cap = 64;
    *out = NULL;

    STRUX_TRY(reader_open(&r, path));
    STRUX_TRY_GOTO(st, strux_alloc_array(&labels_tmp, tmp_cap, sizeof *labels_tmp), done);
    STRUX_TRY_GOTO(st, scan_file(&r, opt, &sc, &labels_tmp, &tmp_cap), done);

    /* partition by non-zeros (+1 per row so that empty rows still count) */
    STRUX_TRY_GOTO(st, strux_alloc_array(&prefix, (size_t)sc.n_rows + 1, sizeof *prefix), done);
    for (int64_t i = 0; i < sc.n_rows; i++) prefix[i + 1] = prefix[i] + sc.row_nnz[i] + 1;
    int64_t lo, hi;
    STRUX_TRY_GOTO(st, strux_shard_range(prefix, sc.n_rows, opt->rank, opt->n_ranks, &lo, &hi),
                   done);

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
    STRUX_CHECK_GOTO(st, gzrewind(r.f) == 0, STRUX_ERR_INPUT, done, "%s: cannot rewind", path);
    r.line_no = 0;
    sink snk = {x.col, x.val, y_idx, 0};
    int64_t row = 0;
    int got;
    for (;;) {
        STRUX_TRY_GOTO(st, reader_next(&r, &got), done);
        if (!got || row >= hi) break;
        if (r.line_no == 1 && sc.have_header) continue;
        if (row++ < lo) continue;
        int64_t n1;
        int32_t n2, mf = 0, ml = -1;
        STRUX_TRY_GOTO(st,
                       parse_line(&r, &sc, opt->drop_above_dim, &snk, &n1, &n2, &labels_tmp,
                                  &tmp_cap, &mf, &ml),
                       done);
    }
    STRUX_CHECK_GOTO(st, row == hi, STRUX_ERR_INPUT, done,
                     "%s: the file changed while it was read", path);
    STRUX_TRY_GOTO(st,
                   strux_dataset_from_arrays(path, &x, &y_ptr, &y_idx, sc.n_rows, lo, sc.dim,
                                             sc.n_labels, opt->bias, out),
                   done);
    (*out)->n_dropped = snk.n_dropped;
done:
    reader_close(&r);
    strux_free(&sc.row_nnz);
    strux_free(&sc.row_nlab);
    strux_free(&prefix);
    strux_free(&labels_tmp);
    strux_free(&y_ptr);
    strux_free(&y_idx);
    strux_csr_free(&x);
    return st;
}
