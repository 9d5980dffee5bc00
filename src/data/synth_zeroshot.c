/* data/synth_zeroshot.c - the zero-shot generator of specs/m3l.md §7.1 (i) (`strux gen
 * --zero-shot`, strux_zeroshot_generate in data.h), shaped like Animals with Attributes (§4.3,
 * §5.6): disjoint training and test categories, each a ±1 signature over L attributes, and dense
 * Gaussian features around category means. In order:
 *   1. signatures: attributes come in pairs (2j, 2j + 1); the first of a pair is +1 with
 *      probability 1/2, the second equals it with probability (1 + ρ)/2, ρ = train_corr for
 *      training categories and −test_corr for test categories, so a pair's correlation has one
 *      sign on the training categories and the other on the test ones (the paper's "has black"
 *      and "is weak": +0.2 and −0.76); an odd last attribute is independent;
 *   2. means: μ_c = A·y_c/√L + b_c with A a D×L matrix of N(0, 1) (how attributes show in the
 *      features, shared by all categories) and b_c ~ N(0, spread²) per feature (what is
 *      particular to a category, so attributes of unseen categories are predicted with error);
 *   3. rows: a category uniformly at random among the set's categories, x = μ_c + N(0, noise²)
 *      per feature, labels = the attributes where y_c = +1.
 * Every draw is keyed by (seed, purpose, index): the category for signatures and means, the row
 * index of its set for rows, so the sets do not depend on each other's sizes. The test classes'
 * weights p(c) are their shares of the test rows (§6 A12: empirical test frequencies). */
#include "strux/data.h"

#include <math.h>

/* One purpose per RNG stream. */
enum {
    ZS_STREAM_SIGNATURE = 0x5a530001, /* category c's signature (test categories after training) */
    ZS_STREAM_LOADING,                /* row j of A */
    ZS_STREAM_OFFSET,                 /* category c's b_c */
    ZS_STREAM_TRAIN_ROW,              /* training row i: its category and noise */
    ZS_STREAM_TEST_ROW                /* test row i */
};

strux_status strux_zeroshot_check(const strux_zeroshot_options *o)
{
    STRUX_CHECK(o->train_rows > 0 && o->test_rows > 0, STRUX_ERR_CONFIG,
                "--rows %lld and --test-rows %lld must be positive", (long long)o->train_rows,
                (long long)o->test_rows);
    STRUX_CHECK(o->dim > 0 && o->n_labels > 0, STRUX_ERR_CONFIG,
                "--features %d and --labels %d must be positive", o->dim, o->n_labels);
    STRUX_CHECK(o->train_classes > 0 && o->test_classes > 0, STRUX_ERR_CONFIG,
                "--train-classes %d and --test-classes %d must be positive", o->train_classes,
                o->test_classes);
    STRUX_CHECK(o->train_corr >= 0 && o->train_corr <= 1 && o->test_corr >= 0 &&
                    o->test_corr <= 1,
                STRUX_ERR_CONFIG,
                "--train-corr %g and --test-corr %g must be in [0, 1] (the test correlation is "
                "its negative)",
                o->train_corr, o->test_corr);
    STRUX_CHECK(o->noise >= 0 && o->spread >= 0, STRUX_ERR_CONFIG,
                "--noise %g and --spread %g must be non-negative", o->noise, o->spread);
    STRUX_CHECK((int64_t)o->dim * (o->train_rows > o->test_rows ? o->train_rows : o->test_rows) <
                    ((int64_t)1 << 40),
                STRUX_ERR_CONFIG, "%d features × %lld rows is too large for dense rows", o->dim,
                (long long)(o->train_rows > o->test_rows ? o->train_rows : o->test_rows));
    return STRUX_OK;
}

/* Category c's signature (c ≥ train_classes: a test category) into y (L entries ±1). */
static void signature(const strux_zeroshot_options *o, int32_t c, signed char *y)
{
    strux_rng r;
    strux_rng_init(&r, o->seed, ZS_STREAM_SIGNATURE, (uint64_t)c);
    double rho = c < o->train_classes ? o->train_corr : -o->test_corr;
    int32_t L = o->n_labels;
    for (int32_t l = 0; l + 1 < L; l += 2) {
        y[l] = strux_rng_uniform(&r) < 0.5 ? 1 : -1;
        y[l + 1] = strux_rng_uniform(&r) < 0.5 * (1 + rho) ? y[l] : (signed char)-y[l];
    }
    if (L % 2) y[L - 1] = strux_rng_uniform(&r) < 0.5 ? 1 : -1;
}

/* The rows of one set: n rows from the categories [c0, c0 + n_c) (means mu, row-major by
 * category), its own stream; class_rows counts the rows of each category. */
static strux_status draw_set(const strux_zeroshot_options *o, int64_t n, int32_t c0, int32_t n_c,
                             uint64_t stream, const double *mu, const signed char *sig,
                             int64_t *class_rows, strux_dataset **out)
{
    int32_t D = o->dim, L = o->n_labels;
    strux_csr x = {0};
    int64_t *y_ptr = NULL;
    int32_t *y_idx = NULL;
    strux_status st = strux_csr_alloc(&x, n, D, n * D);
    if (st == STRUX_OK) st = strux_alloc_array(&y_ptr, (size_t)n + 1, sizeof *y_ptr);
    if (st == STRUX_OK) st = strux_alloc_array(&y_idx, (size_t)(n * L) + 1, sizeof *y_idx);
    for (int64_t i = 0; st == STRUX_OK && i < n; i++) {
        strux_rng r;
        strux_rng_init(&r, o->seed, stream, (uint64_t)i);
        int32_t c = (int32_t)strux_rng_below(&r, (uint64_t)n_c);
        class_rows[c]++;
        const double *m = mu + (int64_t)(c0 + c) * D;
        for (int32_t j = 0; j < D; j++) {
            x.col[i * D + j] = j;
            x.val[i * D + j] = (float)(m[j] + o->noise * strux_rng_normal(&r));
        }
        x.ptr[i + 1] = (i + 1) * D;
        y_ptr[i + 1] = y_ptr[i];
        for (int32_t l = 0; l < L; l++)
            if (sig[(int64_t)(c0 + c) * L + l] > 0) y_idx[y_ptr[i + 1]++] = l;
    }
    if (st == STRUX_OK)
        st = strux_dataset_from_arrays("zero-shot", &x, &y_ptr, &y_idx, n, 0, D, L, 0.0, out);
    strux_csr_free(&x);
    strux_free(&y_ptr);
    strux_free(&y_idx);
    return st;
}

strux_status strux_zeroshot_generate(const strux_zeroshot_options *o, strux_dataset **train,
                                     strux_dataset **test, double *test_p,
                                     signed char *test_signatures)
{
    *train = *test = NULL;
    STRUX_TRY(strux_zeroshot_check(o));
    int32_t D = o->dim, L = o->n_labels, C = o->train_classes + o->test_classes;
    signed char *sig = NULL;
    double *A = NULL, *mu = NULL;
    int64_t *rows = NULL;
    strux_status st = strux_alloc_array(&sig, (size_t)C * (size_t)L, sizeof *sig);
    if (st == STRUX_OK) st = strux_alloc_array(&A, (size_t)D * (size_t)L, sizeof *A);
    if (st == STRUX_OK) st = strux_alloc_array(&mu, (size_t)C * (size_t)D, sizeof *mu);
    if (st == STRUX_OK) st = strux_alloc_array(&rows, (size_t)C, sizeof *rows);
    if (st != STRUX_OK) goto done;
    for (int32_t c = 0; c < C; c++)
        signature(o, c, sig + (int64_t)c * L);
    for (int32_t j = 0; j < D; j++) {
        strux_rng r;
        strux_rng_init(&r, o->seed, ZS_STREAM_LOADING, (uint64_t)j);
        for (int32_t l = 0; l < L; l++)
            A[(int64_t)j * L + l] = strux_rng_normal(&r);
    }
    for (int32_t c = 0; c < C; c++) { /* μ_c = A·y_c/√L + b_c */
        strux_rng r;
        strux_rng_init(&r, o->seed, ZS_STREAM_OFFSET, (uint64_t)c);
        for (int32_t j = 0; j < D; j++) {
            double s = 0;
            for (int32_t l = 0; l < L; l++)
                s += A[(int64_t)j * L + l] * sig[(int64_t)c * L + l];
            mu[(int64_t)c * D + j] = s / sqrt((double)L) + o->spread * strux_rng_normal(&r);
        }
    }
    st = draw_set(o, o->train_rows, 0, o->train_classes, ZS_STREAM_TRAIN_ROW, mu, sig, rows, train);
    if (st == STRUX_OK)
        st = draw_set(o, o->test_rows, o->train_classes, o->test_classes, ZS_STREAM_TEST_ROW, mu,
                      sig, rows + o->train_classes, test);
    if (st != STRUX_OK) goto done;
    for (int32_t c = 0; c < o->test_classes; c++) {
        test_p[c] = (double)rows[o->train_classes + c] / (double)o->test_rows;
        for (int32_t l = 0; l < L; l++)
            test_signatures[(int64_t)c * L + l] = sig[(int64_t)(o->train_classes + c) * L + l];
    }
done:
    strux_free(&sig);
    strux_free(&A);
    strux_free(&mu);
    strux_free(&rows);
    if (st != STRUX_OK) {
        strux_dataset_destroy(train);
        strux_dataset_destroy(test);
    }
    return st;
}
