/* data/svmhmm.c - reader for SVM-hmm sequence text, plain or gzip (ARCHITECTURE.md §4):
 * one token per line, `tag qid:n idx:val idx:val ... [# comment]`, tags 1-based in the file
 * (stored 0-based), feature indices 1-based and strictly ascending; the tokens of one sequence
 * share a qid and are consecutive, and qids ascend through the file. Lines holding only a comment
 * are skipped. Sequences are the examples: rows are tokens, ex_ptr groups them, and the shard of a
 * rank is a contiguous range of sequences balanced by non-zeros (+1 per token). Dimension, bias
 * and features above dim behave as in the LIBSVM reader (strux_read_options). Pass 1 validates
 * every line on every rank (same first error and same partition everywhere); pass 2 keeps this
 * rank's tokens. */
#include "strux/data.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct hmm_reader {
    gzFile f;
    const char *path;
    char *buf;       /* current line, NUL-terminated, newline and comment stripped */
    size_t cap;
    int64_t line_no; /* 1-based number of the line in buf */
} hmm_reader;

/* One parsed token line. */
typedef struct hmm_token {
    long tag;    /* as in the file (1-based) */
    long qid;
    int64_t nnz; /* features kept */
} hmm_token;

/* Facts of pass 1. */
typedef struct hmm_scan {
    int32_t dim;       /* features kept are 1..dim; 0 while unknown */
    int32_t n_labels;  /* 0 while unknown */
    int32_t max_feature, max_tag;
    int64_t *tok_nnz;  /* kept features per token */
    int64_t n_tok, cap_tok;
    int64_t *seq_ptr;  /* first token of every sequence, n_seq + 1 entries when done */
    int64_t n_seq, cap_seq;
} hmm_scan;

static strux_status reader_open(hmm_reader *r, const char *path)
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

static void reader_close(hmm_reader *r)
{
    if (r->f) gzclose(r->f);
    r->f = NULL;
    strux_free(&r->buf);
}

/* Next line into r->buf with any `# comment` cut off; *got = 0 at end of file, *comment_only = 1
 * for a line that held only a comment. */
static strux_status reader_next(hmm_reader *r, int *got, int *comment_only)
{
    size_t len = 0;
    *got = 0;
    for (;;) {
        if (!gzgets(r->f, r->buf + len, (int)(r->cap - len > INT_MAX ? INT_MAX : r->cap - len))) {
            int err;
            const char *msg = gzerror(r->f, &err);
            STRUX_CHECK(err == Z_OK || err == Z_BUF_ERROR, STRUX_ERR_INPUT,
                        "%s:%lld: read failed: %s", r->path, (long long)r->line_no + 1, msg);
            if (len == 0) return STRUX_OK;
            break;
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
    r->line_no++;
    *got = 1;
    char *hash = strchr(r->buf, '#');
    *comment_only = hash == r->buf;
    if (hash) *hash = '\0';
    len = strlen(r->buf);
    while (len > 0 && isspace((unsigned char)r->buf[len - 1])) r->buf[--len] = '\0';
    return STRUX_OK;
}

static const char *token_text(const char *s, char *out, size_t n)
{
    size_t k = 0;
    while (s[k] && !isspace((unsigned char)s[k]) && k + 1 < n) k++;
    memcpy(out, s, k);
    out[k] = '\0';
    if (s[k] && !isspace((unsigned char)s[k]) && n > 4) memcpy(out + n - 4, "...", 4);
    return out;
}

/* Parse one token line. Pass 1 (col == NULL) validates, counts and raises sc->max_feature;
 * pass 2 writes the kept features into col/val (advanced). */
static strux_status parse_token(const hmm_reader *r, hmm_scan *sc, int drop, hmm_token *tk,
                                int32_t **col, float **val, int64_t *n_dropped)
{
    const char *path = r->path;
    long long ln = (long long)r->line_no;
    char tok[48];
    char *s = r->buf, *q;
    STRUX_CHECK(*s, STRUX_ERR_INPUT, "%s:%lld: empty line (expected `tag qid:n idx:val ...`)",
                path, ln);
    errno = 0;
    long tag = strtol(s, &q, 10);
    STRUX_CHECK(q != s && isdigit((unsigned char)*s) && errno == 0 && (*q == ' ' || *q == '\t'),
                STRUX_ERR_INPUT, "%s:%lld: malformed tag '%s' (expected a positive integer)",
                path, ln, token_text(s, tok, sizeof tok));
    STRUX_CHECK(tag >= 1 && tag < INT32_MAX, STRUX_ERR_INPUT,
                "%s:%lld: tag %ld is out of range: SVM-hmm tags are 1-based", path, ln, tag);
    STRUX_CHECK(sc->n_labels == 0 || tag <= sc->n_labels, STRUX_ERR_INPUT,
                "%s:%lld: tag %ld is out of range: the tag count is %d (tags 1..%d)", path, ln,
                tag, sc->n_labels, sc->n_labels);
    s = q;
    while (*s == ' ' || *s == '\t') s++;
    STRUX_CHECK(strncmp(s, "qid:", 4) == 0, STRUX_ERR_INPUT,
                "%s:%lld: expected qid:n after the tag, got '%s'", path, ln,
                token_text(s, tok, sizeof tok));
    errno = 0;
    long qid = strtol(s + 4, &q, 10);
    STRUX_CHECK(q != s + 4 && isdigit((unsigned char)s[4]) && errno == 0 &&
                    (*q == '\0' || isspace((unsigned char)*q)),
                STRUX_ERR_INPUT, "%s:%lld: malformed qid '%s' (expected qid:n, n >= 0)", path, ln,
                token_text(s, tok, sizeof tok));
    s = q;
    tk->tag = tag;
    tk->qid = qid;
    tk->nnz = 0;
    long prev = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
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
        double v = strtod(vs, &ve);
        STRUX_CHECK(ve != vs && (*ve == '\0' || isspace((unsigned char)*ve)), STRUX_ERR_INPUT,
                    "%s:%lld: malformed value in feature '%s'", path, ln,
                    token_text(s, tok, sizeof tok));
        STRUX_CHECK(isfinite(v) && fabs(v) <= 3.4e38, STRUX_ERR_INPUT,
                    "%s:%lld: feature %ld has a non-finite value '%s'", path, ln, idx,
                    token_text(vs, tok, sizeof tok));
        s = ve;
        if (sc->dim > 0 && idx > sc->dim) {
            STRUX_CHECK(drop, STRUX_ERR_INPUT, "%s:%lld: feature index %ld exceeds the dimension "
                        "%d set in the config",
                        path, ln, idx, sc->dim);
            if (col) (*n_dropped)++;
            continue;
        }
        if (col) {
            *(*col)++ = (int32_t)(idx - 1);
            *(*val)++ = (float)v;
        } else if (idx > sc->max_feature) {
            sc->max_feature = (int32_t)idx;
        }
        tk->nnz++;
    }
    return STRUX_OK;
}

static strux_status push_token(hmm_scan *sc, int64_t nnz)
{
    if (sc->n_tok == sc->cap_tok) {
        int64_t cap = sc->cap_tok ? 2 * sc->cap_tok : 4096;
        STRUX_TRY(strux_realloc_array(&sc->tok_nnz, (size_t)cap, sizeof *sc->tok_nnz));
        sc->cap_tok = cap;
    }
    sc->tok_nnz[sc->n_tok++] = nnz;
    return STRUX_OK;
}

/* Record that a sequence starts at token sc->n_tok (also called once at the end). */
static strux_status push_sequence(hmm_scan *sc)
{
    if (sc->n_seq + 1 >= sc->cap_seq) {
        int64_t cap = sc->cap_seq ? 2 * sc->cap_seq : 1024;
        STRUX_TRY(strux_realloc_array(&sc->seq_ptr, (size_t)cap, sizeof *sc->seq_ptr));
        sc->cap_seq = cap;
    }
    sc->seq_ptr[sc->n_seq] = sc->n_tok;
    return STRUX_OK;
}

/* Pass 1: validate every line, count features per token and tokens per sequence. */
static strux_status scan_file(hmm_reader *r, const strux_read_options *opt, hmm_scan *sc)
{
    int got, comment_only;
    long last_qid = 0;
    int64_t last_line = 0;
    sc->dim = opt->dim;
    sc->n_labels = opt->n_labels;
    for (;;) {
        STRUX_TRY(reader_next(r, &got, &comment_only));
        if (!got) break;
        if (comment_only) continue;
        hmm_token tk;
        STRUX_TRY(parse_token(r, sc, opt->drop_above_dim, &tk, NULL, NULL, NULL));
        if (sc->n_tok == 0 || tk.qid != last_qid) {
            STRUX_CHECK(sc->n_tok == 0 || tk.qid > last_qid, STRUX_ERR_INPUT,
                        "%s:%lld: qid %ld after qid %ld (line %lld): the tokens of a sequence "
                        "must be consecutive and qids must ascend",
                        r->path, (long long)r->line_no, tk.qid, last_qid, (long long)last_line);
            STRUX_TRY(push_sequence(sc));
            sc->n_seq++;
        }
        last_qid = tk.qid;
        last_line = r->line_no;
        STRUX_TRY(push_token(sc, tk.nnz));
        if (tk.tag > sc->max_tag) sc->max_tag = (int32_t)tk.tag;
    }
    STRUX_CHECK(sc->n_tok > 0, STRUX_ERR_INPUT, "%s: no tokens (the file is empty)", r->path);
    STRUX_TRY(push_sequence(sc));
    if (sc->dim == 0) sc->dim = sc->max_feature;
    if (sc->n_labels == 0) sc->n_labels = sc->max_tag;
    STRUX_CHECK(sc->n_seq >= opt->n_ranks, STRUX_ERR_INPUT,
                "%s: %lld sequences cannot be shared by %d ranks (each rank needs at least one); "
                "run with at most %lld ranks",
                r->path, (long long)sc->n_seq, opt->n_ranks, (long long)sc->n_seq);
    return STRUX_OK;
}

strux_status strux_dataset_read_svmhmm(const char *path, const strux_read_options *opt,
                                       strux_dataset **out)
{
    strux_status st = STRUX_OK;
    hmm_reader r = {0};
    hmm_scan sc = {0};
    int64_t *prefix = NULL, *y_ptr = NULL, *ex_ptr = NULL;
    int32_t *y_idx = NULL;
    strux_csr x = {0};
    *out = NULL;

    STRUX_TRY(reader_open(&r, path));
    STRUX_TRY_GOTO(st, scan_file(&r, opt, &sc), done);

    /* partition sequences by non-zeros + 1 per token */
    STRUX_TRY_GOTO(st, strux_alloc_array(&prefix, (size_t)sc.n_seq + 1, sizeof *prefix), done);
    for (int64_t i = 0; i < sc.n_seq; i++) {
        int64_t w = 0;
        for (int64_t p = sc.seq_ptr[i]; p < sc.seq_ptr[i + 1]; p++) w += sc.tok_nnz[p] + 1;
        prefix[i + 1] = prefix[i] + w;
    }
    int64_t lo, hi;
    STRUX_TRY_GOTO(st, strux_shard_range(prefix, sc.n_seq, opt->rank, opt->n_ranks, &lo, &hi),
                   done);
    int64_t t_lo = sc.seq_ptr[lo], t_hi = sc.seq_ptr[hi], nnz = 0;
    for (int64_t p = t_lo; p < t_hi; p++) nnz += sc.tok_nnz[p];
    STRUX_TRY_GOTO(st, strux_csr_alloc(&x, t_hi - t_lo, sc.dim, nnz), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_ptr, (size_t)(t_hi - t_lo) + 1, sizeof *y_ptr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_idx, (size_t)(t_hi - t_lo), sizeof *y_idx), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ex_ptr, (size_t)(hi - lo) + 1, sizeof *ex_ptr), done);
    for (int64_t p = t_lo; p < t_hi; p++) {
        x.ptr[p - t_lo + 1] = x.ptr[p - t_lo] + sc.tok_nnz[p];
        y_ptr[p - t_lo + 1] = p - t_lo + 1;
    }
    for (int64_t i = lo; i <= hi; i++) ex_ptr[i - lo] = sc.seq_ptr[i] - t_lo;

    /* pass 2: this rank's tokens */
    STRUX_CHECK_GOTO(st, gzrewind(r.f) == 0, STRUX_ERR_INPUT, done, "%s: cannot rewind", path);
    r.line_no = 0;
    int32_t *col = x.col;
    float *val = x.val;
    int64_t tok = 0, n_dropped = 0;
    int got, comment_only;
    for (;;) {
        STRUX_TRY_GOTO(st, reader_next(&r, &got, &comment_only), done);
        if (!got || tok >= t_hi) break;
        if (comment_only) continue;
        if (tok++ < t_lo) continue;
        hmm_token tk;
        STRUX_TRY_GOTO(st, parse_token(&r, &sc, opt->drop_above_dim, &tk, &col, &val, &n_dropped),
                       done);
        y_idx[tok - 1 - t_lo] = (int32_t)(tk.tag - 1);
    }
    STRUX_CHECK_GOTO(st, tok == t_hi, STRUX_ERR_INPUT, done,
                     "%s: the file changed while it was read", path);
    STRUX_TRY_GOTO(st,
                   strux_dataset_from_arrays(path, &x, &y_ptr, &y_idx, sc.n_seq, lo, sc.dim,
                                             sc.n_labels, opt->bias, out),
                   done);
    (*out)->ex_ptr = ex_ptr;
    ex_ptr = NULL;
    (*out)->n_local = hi - lo;
    (*out)->n_dropped = n_dropped;
done:
    reader_close(&r);
    strux_free(&sc.tok_nnz);
    strux_free(&sc.seq_ptr);
    strux_free(&prefix);
    strux_free(&y_ptr);
    strux_free(&y_idx);
    strux_free(&ex_ptr);
    strux_csr_free(&x);
    return st;
}

int strux_dataset_is_svmhmm(const char *path)
{
    hmm_reader r = {0};
    if (reader_open(&r, path) != STRUX_OK) {
        strux_error_clear();
        return 0;
    }
    int got = 0, comment_only = 1, is = 0;
    while (comment_only) {
        if (reader_next(&r, &got, &comment_only) != STRUX_OK) {
            strux_error_clear();
            got = 0;
        }
        if (!got) break;
    }
    if (got) {
        /* the second field of the first data line is qid:n */
        const char *s = r.buf;
        while (*s && !isspace((unsigned char)*s)) s++;
        while (*s == ' ' || *s == '\t') s++;
        is = strncmp(s, "qid:", 4) == 0;
    }
    reader_close(&r);
    return is;
}
