/* data/svmhmm.c - reader for SVM-hmm sequence text, plain or gzip (ARCHITECTURE.md §4):
 * one token per line, `tag qid:n idx:val idx:val ... [# comment]`, tags 1-based in the file
 * (stored 0-based), feature indices 1-based and strictly ascending; the tokens of one sequence
 * share a qid and are consecutive, and qids ascend through the file. Lines holding only a comment
 * are skipped. Sequences are the examples: rows are tokens, ex_ptr groups them, and the shard of a
 * rank is a contiguous range of sequences balanced by non-zeros (+1 per token). Dimension, bias
 * and features above dim behave as in the LIBSVM reader (strux_read_options). Pass 1 validates
 * every line on every rank (same first error and same partition everywhere); pass 2 keeps this
 * rank's tokens. Lines come from the text reader (text.c), the feature list is parsed by
 * features.c. */
#include "strux/data.h"

#include "data_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One parsed token line. */
typedef struct hmm_token {
    long tag; /* as in the file (1-based) */
    long qid;
    int64_t nnz; /* features kept */
} hmm_token;

/* Facts of pass 1. */
typedef struct hmm_scan {
    int32_t dim;      /* features kept are 1..dim; 0 while unknown */
    int32_t n_labels; /* 0 while unknown */
    int32_t max_feature, max_tag;
    int64_t *tok_nnz; /* kept features per token */
    int64_t n_tok, cap_tok;
    int64_t *seq_ptr; /* first token of every sequence, n_seq + 1 entries when done */
    int64_t n_seq, cap_seq;
} hmm_scan;

/* Next line with any `# comment` and trailing blanks cut off; *line = NULL at end of file,
 * *comment_only = 1 for a line that held only a comment. */
static strux_status next_line(strux_text_reader *r, char **line, int *comment_only)
{
    size_t len;
    STRUX_TRY(strux_text_reader_next_line(r, line, &len));
    if (!*line) return STRUX_OK;
    char *hash = memchr(*line, '#', len);
    *comment_only = hash == *line;
    if (hash) len = (size_t)(hash - *line);
    while (len > 0 && isspace((unsigned char)(*line)[len - 1]))
        len--;
    (*line)[len] = '\0';
    return STRUX_OK;
}

/* Parse one token line. Pass 1 (col == NULL) validates, counts and raises sc->max_feature;
 * pass 2 writes the kept features into col/val (advanced). */
static strux_status parse_token(const strux_text_reader *r, char *s, hmm_scan *sc,
                                const strux_read_options *opt, hmm_token *tk, int32_t **col,
                                float **val, int64_t *n_dropped)
{
    const char *path = strux_text_reader_path(r);
    long long ln = (long long)strux_text_reader_line_no(r);
    char tok[48];
    char *q;
    STRUX_CHECK(*s, STRUX_ERR_INPUT, "%s:%lld: empty line (expected `tag qid:n idx:val ...`)", path,
                ln);
    errno = 0;
    long tag = strtol(s, &q, 10);
    STRUX_CHECK(q != s && isdigit((unsigned char)*s) && errno == 0 && (*q == ' ' || *q == '\t'),
                STRUX_ERR_INPUT, "%s:%lld: malformed tag '%s' (expected a positive integer)", path,
                ln, strux_data_token_text(s, tok, sizeof tok));
    STRUX_CHECK(tag >= 1 && tag < INT32_MAX, STRUX_ERR_INPUT,
                "%s:%lld: tag %ld is out of range: SVM-hmm tags are 1-based", path, ln, tag);
    STRUX_CHECK(sc->n_labels == 0 || tag <= sc->n_labels, STRUX_ERR_INPUT,
                "%s:%lld: tag %ld is out of range: the tag count is %d (tags 1..%d)", path, ln, tag,
                sc->n_labels, sc->n_labels);
    s = q;
    while (*s == ' ' || *s == '\t')
        s++;
    STRUX_CHECK(strncmp(s, "qid:", 4) == 0, STRUX_ERR_INPUT,
                "%s:%lld: expected qid:n after the tag, got '%s'", path, ln,
                strux_data_token_text(s, tok, sizeof tok));
    errno = 0;
    long qid = strtol(s + 4, &q, 10);
    STRUX_CHECK(q != s + 4 && isdigit((unsigned char)s[4]) && errno == 0 &&
                    (*q == '\0' || isspace((unsigned char)*q)),
                STRUX_ERR_INPUT, "%s:%lld: malformed qid '%s' (expected qid:n, n >= 0)", path, ln,
                strux_data_token_text(s, tok, sizeof tok));
    s = q;
    tk->tag = tag;
    tk->qid = qid;
    tk->nnz = 0;
    strux_feature_rules fr = {
        .dim = sc->dim,
        .drop_above_dim = opt->drop_above_dim,
        .dim_origin = opt->dim_origin ? opt->dim_origin : " set in the config",
        .max_index = opt->max_features > 0 ? opt->max_features : STRUX_DATA_MAX_INDEX,
        .max_origin = opt->max_features > 0 ? " set by max_features" : "",
    };
    int64_t dropped = 0;
    int32_t max_feature = 0;
    STRUX_TRY(strux_features_parse(r, s, &fr, col, val, &tk->nnz, &dropped, &max_feature));
    if (col) {
        *n_dropped += dropped;
    } else if (max_feature > sc->max_feature) {
        sc->max_feature = max_feature;
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
static strux_status scan_file(strux_text_reader *r, const strux_read_options *opt, hmm_scan *sc)
{
    char *line;
    int comment_only;
    long last_qid = 0;
    int64_t last_line = 0;
    sc->dim = opt->dim;
    sc->n_labels = opt->n_labels;
    for (;;) {
        STRUX_TRY(next_line(r, &line, &comment_only));
        if (!line) break;
        if (comment_only) continue;
        hmm_token tk;
        STRUX_TRY(parse_token(r, line, sc, opt, &tk, NULL, NULL, NULL));
        if (sc->n_tok == 0 || tk.qid != last_qid) {
            STRUX_CHECK(sc->n_tok == 0 || tk.qid > last_qid, STRUX_ERR_INPUT,
                        "%s:%lld: qid %ld after qid %ld (line %lld): the tokens of a sequence "
                        "must be consecutive and qids must ascend",
                        strux_text_reader_path(r), (long long)strux_text_reader_line_no(r), tk.qid,
                        last_qid, (long long)last_line);
            STRUX_TRY(push_sequence(sc));
            sc->n_seq++;
        }
        last_qid = tk.qid;
        last_line = strux_text_reader_line_no(r);
        STRUX_TRY(push_token(sc, tk.nnz));
        if (tk.tag > sc->max_tag) sc->max_tag = (int32_t)tk.tag;
    }
    STRUX_CHECK(sc->n_tok > 0, STRUX_ERR_INPUT, "%s: no tokens (the file is empty)",
                strux_text_reader_path(r));
    STRUX_TRY(push_sequence(sc));
    if (sc->dim == 0) sc->dim = sc->max_feature;
    if (sc->n_labels == 0) sc->n_labels = sc->max_tag;
    STRUX_CHECK(sc->n_seq >= opt->n_ranks, STRUX_ERR_INPUT,
                "%s: %lld sequences cannot be shared by %d ranks (each rank needs at least one); "
                "run with at most %lld ranks",
                strux_text_reader_path(r), (long long)sc->n_seq, opt->n_ranks,
                (long long)sc->n_seq);
    return STRUX_OK;
}

strux_status strux_dataset_read_svmhmm(const char *path, const strux_read_options *opt,
                                       strux_dataset **out)
{
    strux_status st = STRUX_OK;
    strux_text_reader *r = NULL;
    hmm_scan sc = {0};
    int64_t *prefix = NULL, *y_ptr = NULL, *ex_ptr = NULL;
    int32_t *y_idx = NULL;
    strux_csr x = {0};
    strux_shard plan = {0};
    *out = NULL;

    STRUX_TRY(strux_text_reader_open(path, &r));
    STRUX_TRY_GOTO(st, scan_file(r, opt, &sc), done);

    /* partition sequences by non-zeros + 1 per token */
    STRUX_TRY_GOTO(st, strux_alloc_array(&prefix, (size_t)sc.n_seq + 1, sizeof *prefix), done);
    for (int64_t i = 0; i < sc.n_seq; i++) {
        int64_t w = 0;
        for (int64_t p = sc.seq_ptr[i]; p < sc.seq_ptr[i + 1]; p++)
            w += sc.tok_nnz[p] + 1;
        prefix[i + 1] = prefix[i] + w;
    }
    STRUX_TRY_GOTO(st, strux_shard_plan(prefix, sc.n_seq, opt, &plan), done);
    int64_t lo = plan.lo, hi = plan.hi;
    int64_t t_lo = sc.seq_ptr[lo], t_hi = sc.seq_ptr[hi], nnz = 0;
    for (int64_t p = t_lo; p < t_hi; p++)
        nnz += sc.tok_nnz[p];
    STRUX_TRY_GOTO(st, strux_csr_alloc(&x, t_hi - t_lo, sc.dim, nnz), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_ptr, (size_t)(t_hi - t_lo) + 1, sizeof *y_ptr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_idx, (size_t)(t_hi - t_lo), sizeof *y_idx), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ex_ptr, (size_t)(hi - lo) + 1, sizeof *ex_ptr), done);
    for (int64_t p = t_lo; p < t_hi; p++) {
        x.ptr[p - t_lo + 1] = x.ptr[p - t_lo] + sc.tok_nnz[p];
        y_ptr[p - t_lo + 1] = p - t_lo + 1;
    }
    for (int64_t i = lo; i <= hi; i++)
        ex_ptr[i - lo] = sc.seq_ptr[i] - t_lo;

    /* pass 2: this rank's tokens */
    STRUX_TRY_GOTO(st, strux_text_reader_rewind(r), done);
    int32_t *col = x.col;
    float *val = x.val;
    int64_t tok = 0, n_dropped = 0;
    char *line;
    int comment_only;
    for (;;) {
        STRUX_TRY_GOTO(st, next_line(r, &line, &comment_only), done);
        if (!line || tok >= t_hi) break;
        if (comment_only) continue;
        if (tok++ < t_lo) continue;
        hmm_token tk;
        STRUX_TRY_GOTO(st, parse_token(r, line, &sc, opt, &tk, &col, &val, &n_dropped), done);
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
    strux_dataset_set_shard(*out, &plan);
done:
    strux_shard_free(&plan);
    strux_text_reader_close(&r);
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
    strux_text_reader *r = NULL;
    if (strux_text_reader_open(path, &r) != STRUX_OK) {
        strux_error_clear();
        return 0;
    }
    char *line = NULL;
    int comment_only = 1, is = 0;
    while (comment_only) {
        if (next_line(r, &line, &comment_only) != STRUX_OK) {
            strux_error_clear();
            line = NULL;
        }
        if (!line) break;
    }
    if (line) {
        /* the second field of the first data line is qid:n */
        const char *s = line;
        while (*s && !isspace((unsigned char)*s))
            s++;
        while (*s == ' ' || *s == '\t')
            s++;
        is = strncmp(s, "qid:", 4) == 0;
    }
    strux_text_reader_close(&r);
    return is;
}
