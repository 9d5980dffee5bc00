/* data/features.c - the `idx:val idx:val ...` feature list that ends LIBSVM/XMC and SVM-hmm
 * lines (ARCHITECTURE.md §4), parsed and checked in one place for both readers: indices 1-based,
 * strictly ascending and bounded, values finite and of sane size. Knows nothing of labels, tags
 * or qids, which stay in libsvm.c and svmhmm.c. */
#include "data_impl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *strux_data_token_text(const char *s, char *out, size_t n)
{
    size_t k = 0;
    while (s[k] && !isspace((unsigned char)s[k]) && k + 1 < n)
        k++;
    memcpy(out, s, k);
    out[k] = '\0';
    if (s[k] && !isspace((unsigned char)s[k]) && n > 4) memcpy(out + n - 4, "...", 4);
    return out;
}

strux_status strux_features_parse(const strux_text_reader *r, char *s,
                                  const strux_feature_rules *fr, int32_t **col, float **val,
                                  int64_t *nnz, int64_t *n_dropped, int32_t *max_feature)
{
    const char *path = strux_text_reader_path(r);
    long long ln = (long long)strux_text_reader_line_no(r);
    char tok[48];
    long prev = 0;
    *nnz = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s) break;
        char *q;
        errno = 0;
        long idx = strtol(s, &q, 10);
        STRUX_CHECK(q != s && *q == ':' && errno == 0 && (isdigit((unsigned char)*s) || *s == '-'),
                    STRUX_ERR_INPUT, "%s:%lld: malformed feature '%s' (expected index:value)", path,
                    ln, strux_data_token_text(s, tok, sizeof tok));
        STRUX_CHECK(idx > 0, STRUX_ERR_INPUT,
                    "%s:%lld: feature index %ld in '%s' must be >= 1 (indices are 1-based)", path,
                    ln, idx, strux_data_token_text(s, tok, sizeof tok));
        STRUX_CHECK(idx <= STRUX_DATA_MAX_INDEX, STRUX_ERR_INPUT,
                    "%s:%lld: feature index %ld is too large (at most %d)", path, ln, idx,
                    STRUX_DATA_MAX_INDEX);
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
                    strux_data_token_text(s, tok, sizeof tok));
        STRUX_CHECK(isfinite(v) && fabs(v) <= 3.4e38, STRUX_ERR_INPUT,
                    "%s:%lld: feature %ld has a non-finite value '%s'", path, ln, idx,
                    strux_data_token_text(vs, tok, sizeof tok));
        STRUX_CHECK(fabs(v) <= STRUX_DATA_MAX_ABS_VALUE, STRUX_ERR_INPUT,
                    "%s:%lld: feature %ld has an absurd value '%s' (|value| > %g)", path, ln, idx,
                    strux_data_token_text(vs, tok, sizeof tok), STRUX_DATA_MAX_ABS_VALUE);
        s = ve;
        int above_dim = fr->dim > 0 && idx > fr->dim;
        STRUX_CHECK(!above_dim || fr->drop_above_dim, STRUX_ERR_INPUT,
                    "%s:%lld: feature index %ld exceeds the dimension %d%s", path, ln, idx, fr->dim,
                    fr->dim_origin);
        /* after the dimension check, so a header's D keeps that message when it is both */
        STRUX_CHECK(idx <= fr->max_index, STRUX_ERR_INPUT,
                    "%s:%lld: feature index %ld is above the limit of %d features%s", path, ln, idx,
                    fr->max_index, fr->max_origin);
        if (above_dim) {
            (*n_dropped)++;
            continue;
        }
        if (idx > *max_feature) *max_feature = (int32_t)idx;
        if (col) {
            *(*col)++ = (int32_t)(idx - 1);
            *(*val)++ = (float)v;
        }
        (*nnz)++;
    }
    return STRUX_OK;
}
