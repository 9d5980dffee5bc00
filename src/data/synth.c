/* data/synth.c - synthetic multi-label data from a planted sparse linear model (`strux gen`,
 * strux_dataset_generate in data.h). In order:
 *   1. feature popularity: Zipf's law over popularity ranks, drawn in O(1) from Vose's alias
 *      table (the vocabulary of vocab.c); ranks map to columns by an affine bijection r -> (a·r + b) mod D; all else about a
 *      feature is indexed by its rank, so the popular features share cache lines;
 *   2. the planted model: each of the n_planted most popular features has N(0, 1) weights w*_kj
 *      for PLANT_FAN distinct random labels k, so every label has about KEYWORDS_PER_LABEL
 *      keywords, frequent enough to be learnt from data; the rarer features are noise words, and
 *      a larger D adds noise, not signal;
 *   3. one row: nnz distinct columns by popularity, tf-idf-like positive values (sublinear term
 *      count times an inverse-popularity weight), unit L2 norm; its scores s_k = w*_k·x;
 *   4. calibration: label frequencies p_k ∝ (k + 1)^-1, capped at 1/2, with Σ p_k =
 *      labels_per_row; noise σ_k = noise · std(s_k); threshold τ_k at the (1 − p_k) quantile of
 *      s_k + σ_k ε over a fixed sample of S rows of their own stream; a label too rare for that
 *      sample (p_k·S < CALIB_TAIL, as with thousands of labels, where the quantile would be the
 *      sample's maximum and the label on in about 1/S of the rows) takes the quantile of
 *      s_k + σ_k ε over a longer run of the same stream, the noise integrated out
 *      (calibrate_tail);
 *   5. the requested rows: label k is on iff s_k + σ_k ε_k > τ_k.
 * Every draw comes from strux_rng keyed by (seed, purpose, index): the rank for the model, the
 * global row for features and noise, the sample row for calibration; never by the requested
 * range, so rows are the same however generation is split. Where labels outnumber what the
 * features can carry (D·fan/L keywords a label, rarely touched: 100K labels on 200K features of
 * 20 non-zeros a row), a frequent label's scores are mostly 0 and its rows come from the noise, or
 * it comes out rarer than p_k when the sample never touched it (σ_k = 0): 2.2 labels a row for 3
 * asked there. Not a model of any particular corpus:
 * the labels are independent given x, and features are independent of the labels. */
#include "data_impl.h"

#include <math.h>
#include <stdlib.h>

#define FEATURE_ZIPF 1.0 /* popularity of rank r (0-based) ∝ (r + 1)^-1: Zipf's law of words */
#define TF_MORE 0.3      /* term count: P(tf > t | tf ≥ t), a geometric number of repeats */
#define PLANT_FAN 8      /* labels each keyword has a planted weight for (all when L < 8) */
#define KEYWORDS_PER_LABEL 512  /* features with a planted weight for a given label, on average */
#define LABEL_POWER 1.0         /* label k's frequency ∝ (k + 1)^-1 below the cap */
#define LABEL_FREQ_MAX 0.5      /* the cap: all-zero is then the best constant predictor */
#define CALIB_ENTRIES (1 << 23) /* sample scores held during calibration: 64 MB of doubles */
#define CALIB_ROWS_MIN 1024     /* the sample has CALIB_ENTRIES / L rows within these bounds */
#define CALIB_ROWS_MAX 32768
#define CALIB_TAIL 8              /* sample rows above a label's quantile, at least */
#define CALIB_TAIL_ROWS (1 << 21) /* the rare labels' run of calibration rows, at most */
#define TAIL_Z 40.0 /* Φ̄(40) underflows: the bracket of a rare label's τ, in units of σ */
#define BISECT_STEPS 64     /* of the frequency scale c: halves its bracket to double precision */

/* One purpose per RNG stream, so that e.g. the noise level does not move the features. */
enum {
    STREAM_SCATTER = 1,    /* the affine map from ranks to columns */
    STREAM_MODEL,          /* the planted labels and weights of the feature of rank r */
    STREAM_FEATURES,       /* global row i's columns and values */
    STREAM_NOISE,          /* global row i's label noise */
    STREAM_CALIB_FEATURES, /* calibration row i's columns and values */
    STREAM_CALIB_NOISE     /* calibration row i's label noise */
};

typedef struct synth {
    int32_t dim, n_labels, nnz; /* D, L, non-zeros per row */
    int32_t fan;                /* planted labels per keyword: min(L, PLANT_FAN) */
    int64_t n_planted;          /* keywords: ranks below min(D, KEYWORDS_PER_LABEL·L/fan) */
    double noise;               /* σ_k = noise · std(s_k) */
    uint64_t seed;
    strux_vocab vocab; /* D: popularity ranks (alias table), their columns and idf */
    strux_planted *plant; /* n_planted × fan: rank r's planted weights (a cache line for fan 8) */
    double *tau;       /* L: thresholds τ_k */
    double *sigma;     /* L: label noise std σ_k */
    double *score;     /* L: the current row's scores s_k */
    double *z;         /* L: the current row's standard normals ε_k */
    int64_t *mark;     /* D: stamp of the last row that drew rank r */
    int64_t stamp;     /* rows drawn so far: the current row's stamp */
    uint64_t *key;     /* nnz: the current row's draws, column << 32 | rank */
} synth;

strux_status strux_gen_options_check(const strux_gen_options *o)
{
    STRUX_TRY(strux_gen_check_rows(o->n_rows, o->first_row));
    STRUX_CHECK(o->dim > 0 && o->dim < INT32_MAX, STRUX_ERR_CONFIG,
                "gen: features = %d; it must be in [1, %d] (one column is kept for the bias)",
                o->dim, INT32_MAX - 1);
    STRUX_CHECK(o->n_labels > 0, STRUX_ERR_CONFIG, "gen: labels = %d; it must be positive",
                o->n_labels);
    STRUX_CHECK(o->nnz > 0 && o->nnz <= o->dim, STRUX_ERR_CONFIG,
                "gen: nnz = %d; it must be in [1, features = %d] (a row holds each feature at "
                "most once)",
                o->nnz, o->dim);
    STRUX_CHECK(o->n_rows <= INT64_MAX / o->nnz, STRUX_ERR_CONFIG,
                "gen: rows × nnz = %lld × %d overflows the non-zero count", (long long)o->n_rows,
                o->nnz);
    double max_m = LABEL_FREQ_MAX * o->n_labels;
    STRUX_CHECK(isfinite(o->labels_per_row) && o->labels_per_row > 0 && o->labels_per_row <= max_m,
                STRUX_ERR_CONFIG,
                "gen: labels per row = %g; it must be in (0, %g]: no label is on in more than half "
                "the rows, and there are %d labels",
                o->labels_per_row, max_m, o->n_labels);
    STRUX_CHECK(isfinite(o->noise) && o->noise >= 0, STRUX_ERR_CONFIG,
                "gen: noise = %g; it must be finite and ≥ 0", o->noise);
    return STRUX_OK;
}

/* The planted labels (distinct) and weights of the feature of rank r, from its own stream. */
static void plant_feature(synth *s, int64_t rank)
{
    strux_rng r;
    strux_rng_init(&r, s->seed, STREAM_MODEL, (uint64_t)rank);
    strux_plant_draw(&r, 0, s->n_labels, s->fan, s->plant + rank * s->fan);
}

/* Row `row` of feature stream `stream` into col/val (nnz entries, ascending, unit norm); s->key
 * keeps the columns' ranks. */
static void draw_row(synth *s, uint64_t stream, int64_t row, int32_t *col, float *val)
{
    strux_rng r;
    strux_rng_init(&r, s->seed, stream, (uint64_t)row);
    int64_t stamp = ++s->stamp;
    int32_t have = 0;
    /* Popular columns by rejection of repeats; when nnz is a large share of D the repeats pile up,
     * and after 4·nnz + 64 draws the rest come uniformly from the unused columns (selection
     * sampling, Knuth's Algorithm S, in rank order). */
    for (int64_t t = 0; have < s->nnz && t < 4 * (int64_t)s->nnz + 64; t++) {
        int64_t rank = strux_alias_draw(&s->vocab.popularity, &r);
        if (s->mark[rank] == stamp) continue;
        s->mark[rank] = stamp;
        s->key[have++] = (uint64_t)s->vocab.column[rank] << 32 | (uint64_t)rank;
    }
    int64_t unused = (int64_t)s->dim - have;
    for (int64_t rank = 0; have < s->nnz; rank++) {
        if (s->mark[rank] == stamp) continue;
        if (strux_rng_uniform(&r) * (double)unused-- < (double)(s->nnz - have)) {
            s->mark[rank] = stamp;
            s->key[have++] = (uint64_t)s->vocab.column[rank] << 32 | (uint64_t)rank;
        }
    }
    strux_sort_keys(s->key, s->nnz);
    /* x_j = (1 + ln tf) · idf(rank): sublinear term count (tf geometric from 1) times the
     * inverse-popularity weight, then x /= ‖x‖. */
    double norm2 = 0;
    for (int32_t p = 0; p < s->nnz; p++) {
        int tf = 1;
        while (strux_rng_uniform(&r) < TF_MORE)
            tf++;
        double v = (tf > 1 ? 1.0 + log((double)tf) : 1.0) * s->vocab.idf[s->key[p] & 0xffffffffu];
        col[p] = (int32_t)(s->key[p] >> 32);
        val[p] = (float)v;
        norm2 += v * v;
    }
    double inv = 1.0 / sqrt(norm2);
    for (int32_t p = 0; p < s->nnz; p++)
        val[p] = (float)(val[p] * inv);
}

/* s->score = W* x for the row just drawn (ranks in s->key, values in val). */
static void score_row(synth *s, const float *val)
{
    for (int32_t k = 0; k < s->n_labels; k++)
        s->score[k] = 0;
    for (int32_t p = 0; p < s->nnz; p++) {
        int64_t rank = (int64_t)(s->key[p] & 0xffffffffu);
        if (rank >= s->n_planted) continue; /* a noise word */
        const strux_planted *pl = s->plant + rank * s->fan;
        for (int32_t f = 0; f < s->fan; f++)
            s->score[pl[f].k] += (double)val[p] * pl[f].w;
    }
}

/* s->z = L standard normals of row `row` of noise stream `stream`, by Box-Muller in pairs (both
 * outputs; strux_rng_normal keeps one). */
static void draw_noise(synth *s, uint64_t stream, int64_t row)
{
    strux_rng r;
    strux_rng_init(&r, s->seed, stream, (uint64_t)row);
    for (int32_t k = 0; k < s->n_labels; k += 2) {
        double rho = sqrt(-2.0 * log(1.0 - strux_rng_uniform(&r))); /* 1 − u ∈ (0, 1] */
        double phi = 2.0 * M_PI * strux_rng_uniform(&r);
        s->z[k] = rho * cos(phi);
        if (k + 1 < s->n_labels) s->z[k + 1] = rho * sin(phi);
    }
}

/* The labels of a scored row into out (ascending); returns their count. */
static int32_t label_row(synth *s, uint64_t stream, int64_t row, int32_t *out)
{
    int32_t n = 0;
    if (s->noise > 0) draw_noise(s, stream, row);
    for (int32_t k = 0; k < s->n_labels; k++)
        if (s->score[k] + (s->noise > 0 ? s->sigma[k] * s->z[k] : 0.0) > s->tau[k]) out[n++] = k;
    return n;
}

/* p_k = min(LABEL_FREQ_MAX, c·(k + 1)^-LABEL_POWER) with c bisected until Σ p_k = m. */
static void label_frequencies(int32_t n_labels, double m, double *p)
{
    for (int32_t k = 0; k < n_labels; k++)
        p[k] = pow((double)k + 1.0, -LABEL_POWER);
    double lo = 0, hi = LABEL_FREQ_MAX * pow((double)n_labels, LABEL_POWER); /* all capped */
    for (int t = 0; t < BISECT_STEPS; t++) {
        double c = 0.5 * (lo + hi), sum = 0;
        for (int32_t k = 0; k < n_labels; k++)
            sum += fmin(LABEL_FREQ_MAX, c * p[k]);
        if (sum < m)
            lo = c;
        else
            hi = c;
    }
    for (int32_t k = 0; k < n_labels; k++)
        p[k] = fmin(LABEL_FREQ_MAX, hi * p[k]);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* A min-heap of doubles: h[0] the least. */
static void heap_push(double *h, int64_t *n, double x)
{
    int64_t i = (*n)++;
    for (; i > 0 && h[(i - 1) / 2] > x; i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = x;
}

static void heap_replace_min(double *h, int64_t n, double x)
{
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[c] >= x) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* P(s + σε > τ) for a standard normal ε (σ = 0: the indicator of s > τ). */
static double exceed(double s, double sigma, double tau)
{
    return sigma > 0 ? 0.5 * erfc((tau - s) / (sigma * M_SQRT2)) : (double)(s > tau);
}

/* τ_k of the labels too rare for calibrate's sample (rare[k]), from rows 0 .. S_t − 1 of the
 * calibration feature stream, S_t = min(CALIB_TAIL_ROWS, CALIB_TAIL/min p_k): a row is scored
 * only for the labels its keywords reach (O(nnz·fan), not O(L)), and each label keeps its H_k =
 * 2·m_k + CALIB_TAIL largest positive scores in a min-heap, m_k = p_k·S_t rounded (about
 * 2·labels_per_row·S_t values in all), and the count of its other rows. τ_k solves
 *     (1/S_t)·[Σ_heap Φ̄((τ − s)/σ_k) + n_low·Φ̄((τ − s_low)/σ_k) + n_0·Φ̄(τ/σ_k)] = p_k
 * by bisection, with the noise integrated out: n_low positive scores below the heap counted at
 * its least s_low (an upper bound: τ errs high), the n_0 rows at or below 0 at 0 (their noise
 * matters where the label's positive scores are small against σ_k). */
static strux_status calibrate_tail(synth *s, const double *p, const unsigned char *rare,
                                   int32_t *col, float *val)
{
    int64_t L = s->n_labels, S_t = 0, total = 0;
    for (int64_t k = 0; k < L; k++)
        if (rare[k]) {
            double need = fmin((double)CALIB_TAIL_ROWS, ceil((double)CALIB_TAIL / p[k]));
            S_t = (int64_t)need > S_t ? (int64_t)need : S_t;
        }
    int64_t *start = NULL, *len = NULL, *n_pos = NULL;
    int32_t *hit = NULL; /* a row's labels reached, in order */
    unsigned char *seen = NULL;
    double *heap = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&start, (size_t)L + 1, sizeof *start), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&len, (size_t)L, sizeof *len), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&n_pos, (size_t)L, sizeof *n_pos), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&hit, (size_t)s->nnz * (size_t)s->fan, sizeof *hit), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&seen, (size_t)L, sizeof *seen), done);
    for (int64_t k = 0; k < L; k++) {
        start[k] = total;
        if (rare[k]) total += 2 * llround(p[k] * (double)S_t) + CALIB_TAIL;
    }
    start[L] = total;
    STRUX_TRY_GOTO(st, strux_alloc_array(&heap, (size_t)total + 1, sizeof *heap), done);
    for (int64_t k = 0; k < L; k++)
        s->score[k] = 0;
    for (int64_t i = 0; i < S_t; i++) {
        draw_row(s, STREAM_CALIB_FEATURES, i, col, val);
        int32_t n_hit = 0;
        for (int32_t q = 0; q < s->nnz; q++) {
            int64_t rank = (int64_t)(s->key[q] & 0xffffffffu);
            if (rank >= s->n_planted) continue;
            const strux_planted *pl = s->plant + rank * s->fan;
            for (int32_t f = 0; f < s->fan; f++) {
                int32_t k = pl[f].k;
                if (!rare[k]) continue;
                if (!seen[k]) {
                    seen[k] = 1;
                    hit[n_hit++] = k;
                }
                s->score[k] += (double)val[q] * pl[f].w;
            }
        }
        for (int32_t h = 0; h < n_hit; h++) {
            int32_t k = hit[h];
            double x = s->score[k], *hk = heap + start[k];
            int64_t cap = start[k + 1] - start[k];
            n_pos[k] += x > 0;
            if (x > 0 && len[k] < cap)
                heap_push(hk, &len[k], x);
            else if (x > 0 && x > hk[0])
                heap_replace_min(hk, cap, x);
            s->score[k] = 0;
            seen[k] = 0;
        }
    }
    for (int64_t k = 0; k < L; k++) {
        if (!rare[k]) continue;
        double *hk = heap + start[k];
        double sig = s->sigma[k], low = len[k] ? hk[0] : 0;
        double n_low = (double)(n_pos[k] - len[k]), n_0 = (double)(S_t - n_pos[k]);
        qsort(hk, (size_t)len[k], sizeof *hk, cmp_desc);
        double lo = -TAIL_Z * sig, hi = (len[k] ? hk[0] : 0) + TAIL_Z * sig;
        double want = p[k] * (double)S_t;
        for (int t = 0; t < BISECT_STEPS; t++) {
            double tau = 0.5 * (lo + hi), sum = n_low * exceed(low, sig, tau);
            sum += n_0 * exceed(0, sig, tau);
            for (int64_t j = 0; j < len[k] && hk[j] > tau - TAIL_Z * sig; j++)
                sum += exceed(hk[j], sig, tau); /* the rest add less than Φ̄(TAIL_Z) each */
            if (sum > want)
                lo = tau;
            else
                hi = tau;
        }
        s->tau[k] = hi;
    }
done:
    strux_free(&start);
    strux_free(&len);
    strux_free(&n_pos);
    strux_free(&hit);
    strux_free(&seen);
    strux_free(&heap);
    return st;
}

/* σ_k and τ_k from a sample of rows of the calibration streams. A label whose sample scores tie
 * at the threshold (noise 0 and few columns touching it) comes out rarer than p_k. */
static strux_status calibrate(synth *s, double labels_per_row)
{
    int64_t L = s->n_labels;
    int64_t S = CALIB_ENTRIES / L;
    S = S < CALIB_ROWS_MIN ? CALIB_ROWS_MIN : S > CALIB_ROWS_MAX ? CALIB_ROWS_MAX : S;
    double *v = NULL, *p = NULL; /* v: sample scores, label-major: v[k·S + i] */
    unsigned char *rare = NULL;  /* L: τ_k from calibrate_tail */
    int32_t *col = NULL;
    float *val = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&v, (size_t)(S * L), sizeof *v), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&p, (size_t)L, sizeof *p), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&rare, (size_t)L, sizeof *rare), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&col, (size_t)s->nnz, sizeof *col), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&val, (size_t)s->nnz, sizeof *val), done);
    label_frequencies(s->n_labels, labels_per_row, p);
    for (int64_t i = 0; i < S; i++) {
        draw_row(s, STREAM_CALIB_FEATURES, i, col, val);
        score_row(s, val);
        for (int64_t k = 0; k < L; k++)
            v[k * S + i] = s->score[k];
    }
    for (int64_t k = 0; k < L; k++) {
        double sum = 0, sum2 = 0;
        for (int64_t i = 0; i < S; i++)
            sum += v[k * S + i];
        double mean = sum / (double)S;
        for (int64_t i = 0; i < S; i++)
            sum2 += (v[k * S + i] - mean) * (v[k * S + i] - mean);
        s->sigma[k] = s->noise * sqrt(sum2 / (double)S);
    }
    if (s->noise > 0)
        for (int64_t i = 0; i < S; i++) {
            draw_noise(s, STREAM_CALIB_NOISE, i);
            for (int64_t k = 0; k < L; k++)
                v[k * S + i] += s->sigma[k] * s->z[k];
        }
    int n_rare = 0;
    for (int64_t k = 0; k < L; k++) {
        double *vk = v + k * S;
        qsort(vk, (size_t)S, sizeof *vk, cmp_desc);
        int64_t m = llround(p[k] * (double)S); /* ≤ S/2: vk[m] exists */
        s->tau[k] = m == 0 ? vk[0] : 0.5 * (vk[m - 1] + vk[m]);
        rare[k] = p[k] * (double)S < CALIB_TAIL;
        n_rare += rare[k];
    }
    if (n_rare) STRUX_TRY_GOTO(st, calibrate_tail(s, p, rare, col, val), done);
done:
    strux_free(&v);
    strux_free(&p);
    strux_free(&rare);
    strux_free(&col);
    strux_free(&val);
    return st;
}

static void synth_free(synth *s)
{
    strux_vocab_free(&s->vocab);
    strux_free(&s->plant);
    strux_free(&s->tau);
    strux_free(&s->sigma);
    strux_free(&s->score);
    strux_free(&s->z);
    strux_free(&s->mark);
    strux_free(&s->key);
}

static strux_status synth_setup(synth *s, const strux_gen_options *o)
{
    s->dim = o->dim;
    s->n_labels = o->n_labels;
    s->nnz = o->nnz;
    s->fan = o->n_labels < PLANT_FAN ? o->n_labels : PLANT_FAN;
    int64_t keywords = ((int64_t)KEYWORDS_PER_LABEL * o->n_labels + s->fan - 1) / s->fan;
    s->n_planted = keywords < o->dim ? keywords : o->dim;
    s->noise = o->noise;
    s->seed = o->seed;
    size_t D = (size_t)o->dim, L = (size_t)o->n_labels;
    STRUX_TRY(
        strux_alloc_array(&s->plant, (size_t)s->n_planted * (size_t)s->fan, sizeof *s->plant));
    STRUX_TRY(strux_alloc_array(&s->tau, L, sizeof *s->tau));
    STRUX_TRY(strux_alloc_array(&s->sigma, L, sizeof *s->sigma));
    STRUX_TRY(strux_alloc_array(&s->score, L, sizeof *s->score));
    STRUX_TRY(strux_alloc_array(&s->z, L, sizeof *s->z));
    STRUX_TRY(strux_alloc_array(&s->mark, D, sizeof *s->mark));
    STRUX_TRY(strux_alloc_array(&s->key, (size_t)o->nnz, sizeof *s->key));
    STRUX_TRY(strux_vocab_build(&s->vocab, s->dim, FEATURE_ZIPF, s->seed, STREAM_SCATTER));
    for (int64_t rank = 0; rank < s->n_planted; rank++)
        plant_feature(s, rank);
    return calibrate(s, o->labels_per_row);
}

strux_status strux_dataset_generate(const strux_gen_options *opt, strux_dataset **out)
{
    *out = NULL;
    STRUX_TRY(strux_gen_options_check(opt));
    synth s = {0};
    strux_csr x = {0};
    int64_t *y_ptr = NULL;
    int32_t *y_idx = NULL;
    int64_t n = opt->n_rows, K = opt->nnz, L = opt->n_labels;
    /* Room for the expected label count and some; doubled (rarely) when a row might not fit. */
    size_t cap = (size_t)n * ((size_t)ceil(opt->labels_per_row) + 1) + (size_t)L;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, synth_setup(&s, opt), done);
    STRUX_TRY_GOTO(st, strux_csr_alloc(&x, n, opt->dim, n * K), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_ptr, (size_t)n + 1, sizeof *y_ptr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_idx, cap, sizeof *y_idx), done);
    for (int64_t i = 0; i < n; i++) {
        int64_t row = opt->first_row + i;
        draw_row(&s, STREAM_FEATURES, row, x.col + i * K, x.val + i * K);
        x.ptr[i + 1] = (i + 1) * K;
        score_row(&s, x.val + i * K);
        if (cap - (size_t)y_ptr[i] < (size_t)L) {
            STRUX_TRY_GOTO(st, strux_realloc_array(&y_idx, 2 * cap, sizeof *y_idx), done);
            cap *= 2;
        }
        y_ptr[i + 1] = y_ptr[i] + label_row(&s, STREAM_NOISE, row, y_idx + y_ptr[i]);
    }
    STRUX_TRY_GOTO(st,
                   strux_dataset_from_arrays("synthetic", &x, &y_ptr, &y_idx, n, 0, opt->dim,
                                             opt->n_labels, 0.0, out),
                   done);
done:
    synth_free(&s);
    strux_csr_free(&x);
    strux_free(&y_ptr);
    strux_free(&y_idx);
    return st;
}
