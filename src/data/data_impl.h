/* data/data_impl.h - private to src/data and its white-box tests: the parts the text readers
 * share beyond the public line reader (text.c): the `idx:val ...` feature list of LIBSVM and
 * SVM-hmm lines with its checks (features.c), and a test hook for the line limit; and what the
 * synthetic generators share (vocab.c): alias tables and the Zipf vocabulary. */
#ifndef STRUX_DATA_IMPL_H
#define STRUX_DATA_IMPL_H

#include "strux/data.h"

/* Largest |value| a feature may have: beyond it a value is a unit or format mistake, not data
 * (float holds up to 3.4e38, and squares of such values overflow every norm). */
#define STRUX_DATA_MAX_ABS_VALUE 1e30
/* Largest feature index of any file: dim + bias must fit int32_t (data.dim's range too). */
#define STRUX_DATA_MAX_INDEX (INT32_MAX - 2)

/* What a feature list may hold. */
typedef struct strux_feature_rules {
    int32_t dim;            /* > 0: indices above it are dropped or an error; 0: not known yet */
    int drop_above_dim;     /* nonzero: such indices are dropped and counted; zero: an error */
    const char *dim_origin; /* ends the message: " given by the header", " set in the config" */
    int32_t max_index;      /* indices above it are an error, dropped or not (≤ MAX_INDEX) */
    const char *max_origin; /* ends that message: where max_index comes from */
} strux_feature_rules;

/* Parse the features `idx:val ...` from s to the end of the line (1-based ascending indices).
 * With col != NULL the kept features are written to *col (0-based) and *val, both advanced.
 * *nnz = features kept; *n_dropped grows by those dropped; *max_feature rises to the largest
 * kept index. Errors (STRUX_ERR_INPUT, "file:line: ..."): malformed pair, index ≤ 0 or above
 * max_index, duplicate or descending index, NaN/Inf or |value| > STRUX_DATA_MAX_ABS_VALUE, an
 * index above dim without drop_above_dim. */
strux_status strux_features_parse(const strux_text_reader *r, char *s,
                                  const strux_feature_rules *fr, int32_t **col, float **val,
                                  int64_t *nnz, int64_t *n_dropped, int32_t *max_feature);

/* Excerpt of the token at s for messages: up to n - 1 bytes, "..." when cut. Returns out. */
const char *strux_data_token_text(const char *s, char *out, size_t n);

/* Tests: lower the line limit of r (STRUX_TEXT_MAX_LINE otherwise). */
void strux_text_reader_set_max_line(strux_text_reader *r, size_t max_line);

/* ---- synthetic generators' draws (vocab.c) ---- */
typedef struct strux_alias_slot {
    float prob;    /* keep this slot's outcome with this probability, */
    int32_t alias; /* else take this one */
} strux_alias_slot;
/* Vose's alias table: O(1) draws from a fixed discrete distribution over [0, n). */
typedef struct strux_alias {
    int64_t n;              /* outcomes, ≤ INT32_MAX */
    strux_alias_slot *slot; /* [n] */
} strux_alias;
/* The table of P(r) ∝ w[r] ≥ 0 (Σ w > 0; w is read only); *a freed on error. */
strux_status strux_alias_build(strux_alias *a, const double *w, int64_t n);
void strux_alias_free(strux_alias *a);
/* One outcome: one 64-bit draw gives the slot (low half, multiply-shift: bias below n / 2^32)
 * and the coin (high half). */
static inline int64_t strux_alias_draw(const strux_alias *a, strux_rng *r)
{
    uint64_t x = strux_rng_next(r);
    int64_t i = (int64_t)(((x & 0xffffffffu) * (uint64_t)a->n) >> 32);
    float coin = (float)((double)(x >> 32) * 0x1.0p-32);
    return coin < a->slot[i].prob ? i : a->slot[i].alias;
}

/* A Zipf vocabulary of D features: popularity ranks with P(rank r) ∝ (r + 1)^-zipf, the idf
 * 1 + zipf·ln(r + 1) of every rank (ln 1/P up to a constant), and column[r] = (a·r + b) mod D
 * with gcd(a, D) = 1, a and b drawn from (seed, stream, 0). */
typedef struct strux_vocab {
    int32_t dim;            /* D */
    strux_alias popularity; /* over ranks */
    float *idf;             /* [D] per rank */
    int32_t *column;        /* [D] per rank */
} strux_vocab;
strux_status strux_vocab_build(strux_vocab *v, int32_t dim, double zipf, uint64_t seed,
                               uint64_t stream);
void strux_vocab_free(strux_vocab *v);

/* A planted weight of a feature. */
typedef struct strux_planted {
    int32_t k; /* the label or node it is for */
    float w;   /* its value */
} strux_planted;
/* fan distinct targets uniform in [lo, lo + n) (fan ≤ n), each with an N(0, 1) weight, from r. */
void strux_plant_draw(strux_rng *r, int32_t lo, int32_t n, int32_t fan, strux_planted *pl);
/* The rows a generator is asked for: n_rows > 0 from first_row ≥ 0 without overflow
 * (STRUX_ERR_CONFIG naming the value). */
strux_status strux_gen_check_rows(int64_t n_rows, int64_t first_row);
/* Sort n keys ascending (a row's column << 32 | rank). */
void strux_sort_keys(uint64_t *a, int64_t n);

#endif
