/* data/synth_churn.c - the synthetic stand-in for the proprietary churn problem of
 * dataset_constraints.md §4.2, built as its §4.5 suggests, at a tenth of the paper's sizes:
 *  1. raw x ∈ R^31 from a mixture of 5 Gaussians; labels from a non-linear ground truth (a sum of
 *     one sine wave per coordinate, a_j sin(b_j x_j + c_j), plus an interaction (u·x)(v·x)/2,
 *     against a threshold that makes about 35 % positive) with 10 % of them flipped;
 *  2. Φ: binning (the feature map of an additive kernel), each coordinate cut into 96 bins of
 *     width 1/16 around 0 with the tails in the end bins, so dim = 31 · 96 = 2976 and every row
 *     has 31 entries of 1/√31 (unit norm); the interaction is what a model linear in Φ cannot
 *     fit;
 *  3. the deployed model: a linear model in Φ-space on a separate old sample of 2000 rows, trained
 *     by 20 seeded Pegasos epochs (λ = 1e-4) on the first 10 coordinates' bins only: decent, not
 *     optimal;
 *  4. D2 (5388) and D3 (6889, labels discarded) i.i.d.; D1 (13184) drawn from the pool with
 *     probability exp(−|f_dep(x)|/τ), τ a third of the median |f_dep| on the old sample: near
 *     the deployed boundary;
 *  5. each set split 80/20 into train and test by a seeded shuffle.
 * Every draw comes from the counter-based RNG keyed by (seed, stream, index), so a seed gives the
 * same files everywhere. Not here: writing files (cli/gen_churn.c). Not Collective. */
#include "strux/data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RAW 31         /* raw features (the paper's 31) */
#define COMPONENTS 5   /* Gaussians of the mixture */
#define BINS 96        /* bins per coordinate */
#define BIN_WIDTH 0.0625
#define OLD_ROWS 2000  /* the deployed model's training sample (a tenth of §4.5's 20 k) */
#define OLD_COORDS 10  /* coordinates the deployed model sees */
#define OLD_LAMBDA 1e-4
#define OLD_EPOCHS 20
#define NOISE 0.1       /* share of flipped labels */
#define POSITIVE 0.35   /* share of positive ground truth */
#define TRAIN_SHARE 0.8 /* §4.2: 80 % train, 20 % test */

/* RNG streams (the counter-based generator is keyed by seed, stream and index) */
enum { S_MODEL = 1, S_OLD, S_D1, S_D2, S_D3, S_SPLIT, S_SGD, S_ACCEPT };

/* The planted world: mixture and ground truth. */
typedef struct world {
    double mean[COMPONENTS][RAW];
    double a[RAW], b[RAW], c[RAW], u[RAW], v[RAW], thr;
} world;

static void unit_vector(strux_rng *g, double *v, double scale)
{
    double n = 0;
    for (int j = 0; j < RAW; j++) {
        v[j] = strux_rng_normal(g);
        n += v[j] * v[j];
    }
    for (int j = 0; j < RAW; j++)
        v[j] *= scale / sqrt(n);
}

/* Raw example i of a stream: component, then the point. */
static void draw_x(const world *wd, uint64_t seed, uint64_t stream, uint64_t i, double *x)
{
    strux_rng g;
    strux_rng_init(&g, seed, stream, i);
    int k = (int)strux_rng_below(&g, COMPONENTS);
    for (int j = 0; j < RAW; j++)
        x[j] = wd->mean[k][j] + 0.8 * strux_rng_normal(&g);
}

static double truth_score(const world *wd, const double *x)
{
    double f = 0, su = 0, sv = 0;
    for (int j = 0; j < RAW; j++) {
        f += wd->a[j] * sin(wd->b[j] * x[j] + wd->c[j]);
        su += wd->u[j] * x[j];
        sv += wd->v[j] * x[j];
    }
    return f + 0.5 * su * sv;
}

/* The noisy label of example i (flip with probability NOISE, from its own draw). */
static int label(const world *wd, uint64_t seed, uint64_t stream, uint64_t i, const double *x)
{
    strux_rng g;
    strux_rng_init(&g, seed, stream + 100, i);
    int y = truth_score(wd, x) > wd->thr;
    return strux_rng_uniform(&g) < NOISE ? !y : y;
}

/* Φ(x): the active bin's column of each coordinate, ascending. */
static void features(const double *x, int32_t *col)
{
    for (int j = 0; j < RAW; j++) {
        int c = (int)floor(x[j] / BIN_WIDTH) + BINS / 2;
        col[j] = j * BINS + (c < 0 ? 0 : c >= BINS ? BINS - 1 : c);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static strux_status make_world(uint64_t seed, world *wd)
{
    strux_rng g;
    strux_rng_init(&g, seed, S_MODEL, 0);
    for (int k = 0; k < COMPONENTS; k++)
        for (int j = 0; j < RAW; j++)
            wd->mean[k][j] = 0.6 * strux_rng_normal(&g);
    for (int j = 0; j < RAW; j++) {
        wd->a[j] = strux_rng_normal(&g);
        wd->b[j] = 0.5 + 2 * strux_rng_uniform(&g);
        wd->c[j] = 2 * M_PI * strux_rng_uniform(&g);
    }
    unit_vector(&g, wd->u, 1.0);
    unit_vector(&g, wd->v, 1.0);
    /* the threshold: the (1 − POSITIVE) quantile of the ground truth on a calibration sample */
    enum { CAL = 20000 };
    double *s = NULL, x[RAW];
    STRUX_TRY(strux_alloc_array(&s, CAL, sizeof *s));
    for (int i = 0; i < CAL; i++) {
        draw_x(wd, seed, S_MODEL + 50, (uint64_t)i, x);
        s[i] = truth_score(wd, x);
    }
    qsort(s, CAL, sizeof *s, cmp_double);
    wd->thr = s[(int)((1 - POSITIVE) * CAL)];
    strux_free(&s);
    return STRUX_OK;
}

/* The deployed model: Pegasos on the old sample over the first OLD_COORDS coordinates' bins,
 * with a bias (feature value 1, regularised like LIBLINEAR -B 1). w has dim + 1 entries, the bias
 * last. */
static strux_status deploy(const world *wd, uint64_t seed, int32_t dim, double *w)
{
    int32_t *cols = NULL;
    int8_t *y = NULL;
    int64_t *perm = NULL;
    double x[RAW], v = 1 / sqrt((double)RAW);
    strux_status st = strux_alloc_array(&cols, (size_t)OLD_ROWS * RAW, sizeof *cols);
    if (st == STRUX_OK) st = strux_alloc_array(&y, OLD_ROWS, sizeof *y);
    if (st == STRUX_OK) st = strux_alloc_array(&perm, OLD_ROWS, sizeof *perm);
    for (int64_t i = 0; st == STRUX_OK && i < OLD_ROWS; i++) {
        draw_x(wd, seed, S_OLD, (uint64_t)i, x);
        features(x, cols + i * RAW);
        y[i] = label(wd, seed, S_OLD, (uint64_t)i, x) ? 1 : -1;
    }
    if (st == STRUX_OK) memset(w, 0, (size_t)(dim + 1) * sizeof *w);
    int64_t t = 0;
    for (int ep = 0; st == STRUX_OK && ep < OLD_EPOCHS; ep++) {
        strux_rng g;
        strux_rng_init(&g, seed, S_SGD, (uint64_t)ep);
        strux_rng_permutation(&g, perm, OLD_ROWS);
        for (int64_t k = 0; k < OLD_ROWS; k++, t++) {
            const int32_t *c = cols + perm[k] * RAW;
            double eta = 1 / (OLD_LAMBDA * (double)(t + 1)), s = w[dim];
            for (int q = 0; q < OLD_COORDS; q++)
                s += v * w[c[q]];
            double shrink = 1 - eta * OLD_LAMBDA;
            for (int32_t j = 0; j <= dim; j++)
                w[j] *= shrink;
            if (y[perm[k]] * s < 1) {
                for (int q = 0; q < OLD_COORDS; q++)
                    w[c[q]] += eta * y[perm[k]] * v;
                w[dim] += eta * y[perm[k]];
            }
        }
    }
    strux_free(&cols);
    strux_free(&y);
    strux_free(&perm);
    return st;
}

static double deployed_score(const double *w, int32_t dim, const double *x)
{
    int32_t col[RAW];
    features(x, col);
    double s = w[dim];
    for (int j = 0; j < RAW; j++)
        s += w[col[j]] / sqrt((double)RAW);
    return s;
}

/* One set's raw draws: n examples of stream s (D1: accepted from the pool with probability
 * exp(−|f_dep|/τ)), their stream indices into idx. */
static strux_status draw_set(const world *wd, uint64_t seed, int s, int64_t n, const double *w,
                             int32_t dim, double tau, uint64_t *idx)
{
    double x[RAW];
    uint64_t i = 0;
    for (int64_t k = 0; k < n; i++) {
        STRUX_CHECK(i < (uint64_t)n * 1000, STRUX_ERR_INTERNAL,
                    "churn generator: the active sampler accepts too rarely");
        if (s == S_D1) {
            draw_x(wd, seed, (uint64_t)s, i, x);
            strux_rng g;
            strux_rng_init(&g, seed, S_ACCEPT, i);
            if (strux_rng_uniform(&g) >= exp(-fabs(deployed_score(w, dim, x)) / tau)) continue;
        }
        idx[k++] = i;
    }
    return STRUX_OK;
}

strux_status strux_churn_generate(const strux_churn_options *opt, strux_churn *out)
{
    world *wd = NULL;
    const int32_t dim = RAW * BINS;
    const uint64_t seed = opt->seed;
    *out = (strux_churn){0};
    out->dim = dim;
    STRUX_TRY(strux_alloc(&wd, sizeof *wd));
    strux_status st = make_world(seed, wd);
    if (st == STRUX_OK) st = strux_alloc_array(&out->w_dep, (size_t)dim + 1, sizeof *out->w_dep);
    if (st == STRUX_OK) st = deploy(wd, seed, dim, out->w_dep);
    /* τ: a third of the median |f_dep| on the old sample */
    double tau = 1, *a = NULL, x[RAW];
    if (st == STRUX_OK) st = strux_alloc_array(&a, OLD_ROWS, sizeof *a);
    for (int64_t i = 0; st == STRUX_OK && i < OLD_ROWS; i++) {
        draw_x(wd, seed, S_OLD, (uint64_t)i, x);
        a[i] = fabs(deployed_score(out->w_dep, dim, x));
    }
    if (st == STRUX_OK) {
        qsort(a, OLD_ROWS, sizeof *a, cmp_double);
        tau = a[OLD_ROWS / 2] / 3;
    }
    strux_free(&a);
    /* each set drawn, shuffled and split; rows of train then test, D1, D2, D3 in turn */
    const int64_t n_set[3] = {opt->n1, opt->n2, opt->n3};
    const int streams[3] = {S_D1, S_D2, S_D3};
    int64_t n_split[2] = {0, 0};
    uint64_t *idx[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3 && st == STRUX_OK; k++) {
        int64_t *perm = NULL;
        st = strux_alloc_array(&idx[k], (size_t)n_set[k], sizeof *idx[k]);
        if (st == STRUX_OK) st = draw_set(wd, seed, streams[k], n_set[k], out->w_dep, dim, tau, idx[k]);
        if (st == STRUX_OK) st = strux_alloc_array(&perm, (size_t)n_set[k], sizeof *perm);
        if (st == STRUX_OK) { /* the shuffle decides the split */
            strux_rng g;
            strux_rng_init(&g, seed, S_SPLIT, (uint64_t)k);
            strux_rng_permutation(&g, perm, n_set[k]);
            uint64_t *tmp = NULL;
            st = strux_alloc_array(&tmp, (size_t)n_set[k], sizeof *tmp);
            for (int64_t q = 0; st == STRUX_OK && q < n_set[k]; q++)
                tmp[q] = idx[k][perm[q]];
            if (st == STRUX_OK) memcpy(idx[k], tmp, (size_t)n_set[k] * sizeof *tmp);
            strux_free(&tmp);
        }
        strux_free(&perm);
        int64_t n_train = (int64_t)llround(TRAIN_SHARE * (double)n_set[k]);
        out->n_rows[k][0] = n_train;
        out->n_rows[k][1] = n_set[k] - n_train;
        n_split[0] += n_train;
        n_split[1] += n_set[k] - n_train;
    }
    for (int sp = 0; sp < 2 && st == STRUX_OK; sp++) {
        strux_csr xs = {0};
        int64_t *y_ptr = NULL;
        int32_t *y_idx = NULL, col[RAW];
        st = strux_csr_alloc(&xs, n_split[sp], dim, n_split[sp] * RAW);
        if (st == STRUX_OK) st = strux_alloc_array(&y_ptr, (size_t)n_split[sp] + 1, sizeof *y_ptr);
        if (st == STRUX_OK) st = strux_alloc_array(&y_idx, (size_t)n_split[sp] + 1, sizeof *y_idx);
        int64_t row = 0, nnz = 0, n_lab = 0;
        for (int k = 0; k < 3 && st == STRUX_OK; k++) {
            int64_t q0 = sp ? out->n_rows[k][0] : 0, q1 = q0 + out->n_rows[k][sp];
            out->first[k][sp] = row;
            for (int64_t q = q0; q < q1; q++, row++) {
                draw_x(wd, seed, (uint64_t)streams[k], idx[k][q], x);
                features(x, col);
                for (int j = 0; j < RAW; j++, nnz++) {
                    xs.col[nnz] = col[j];
                    xs.val[nnz] = (float)(1 / sqrt((double)RAW));
                }
                xs.ptr[row + 1] = nnz;
                if (streams[k] != S_D3) { /* D3's labels are discarded */
                    int y = label(wd, seed, (uint64_t)streams[k], idx[k][q], x);
                    y_idx[n_lab++] = y; /* label ids: 1 positive, 0 negative */
                    out->n_pos[k][sp] += y;
                }
                y_ptr[row + 1] = n_lab;
            }
        }
        if (st == STRUX_OK)
            st = strux_dataset_from_arrays(sp ? "churn test" : "churn train", &xs, &y_ptr, &y_idx,
                                           n_split[sp], 0, dim, 2, 0, sp ? &out->test : &out->train);
        strux_csr_free(&xs);
        strux_free(&y_ptr);
        strux_free(&y_idx);
    }
    for (int k = 0; k < 3; k++)
        strux_free(&idx[k]);
    strux_free(&wd);
    if (st != STRUX_OK) strux_churn_free(out);
    return st;
}

void strux_churn_free(strux_churn *c)
{
    strux_dataset_destroy(&c->train);
    strux_dataset_destroy(&c->test);
    strux_free(&c->w_dep);
}
