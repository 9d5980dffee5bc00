/* tests/unit/test_model_store.c - the weight store (strux/model.h) in every kind (label-major,
 * feature-major and sparse, double and float) against a flat label-major double reference, from
 * dense weights (sparse rows stored dense) and from weights with most entries 0 (sparse rows
 * stored sparse): scores of sparse
 * rows against all rows and a list of rows, additions, row scales (including the fold of extreme
 * scales and SGD's shrink with a free column), column scales, norms kept up to date, copy, axpy
 * and dot across kinds, non-zero iteration, non-finite search, blob round trips and the storage
 * view collectives use (refused by the sparse layout); a sparse row's growth into a dense one,
 * its bytes against nnz × (4 + value size), and the sparse layout at np 1 against label-major
 * double bit for bit. Float kinds are compared with the float rounding of the reference. */
#include "test_common.h"

#include "strux/linalg.h"
#include "strux/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define K 7  /* rows */
#define D 11 /* features */
#define E 3  /* free parameters */
#define NW (K * D + E)

#define N_KINDS 6
static const strux_model_kind kinds[N_KINDS] = {
    {STRUX_LAYOUT_LABEL_MAJOR, STRUX_PRECISION_DOUBLE},
    {STRUX_LAYOUT_FEATURE_MAJOR, STRUX_PRECISION_DOUBLE},
    {STRUX_LAYOUT_LABEL_MAJOR, STRUX_PRECISION_FLOAT},
    {STRUX_LAYOUT_FEATURE_MAJOR, STRUX_PRECISION_FLOAT},
    {STRUX_LAYOUT_SPARSE, STRUX_PRECISION_DOUBLE},
    {STRUX_LAYOUT_SPARSE, STRUX_PRECISION_FLOAT},
};

/* Three sparse rows over D + 2 columns (the last two beyond the model's dim: ignored). */
static void make_x(strux_csr *x)
{
    assert_strux_ok(strux_csr_alloc(x, 3, D + 2, 12));
    static const int32_t col[] = {0, 3, 10, 12, 1, 2, 5, 7, 9, 11, 4, 6};
    static const float val[] = {1.5f, -2, 0.25f, 9, 3, 1, -1, 0.5f, 2, 7, -0.75f, 4};
    static const int64_t ptr[] = {0, 4, 10, 12};
    memcpy(x->col, col, sizeof col);
    memcpy(x->val, val, sizeof val);
    memcpy(x->ptr, ptr, sizeof ptr);
}

static double ref_dot(const strux_csr *x, int64_t r, const double *row)
{
    double s = 0;
    for (int64_t p = x->ptr[r]; p < x->ptr[r + 1]; p++)
        if (x->col[p] < D) s += (double)x->val[p] * row[x->col[p]];
    return s;
}

/* Reference weights as the kind stores them (float kinds: rounded to float). */
static void round_to(strux_model_kind kind, double *w)
{
    if (kind.precision == STRUX_PRECISION_FLOAT)
        for (int k = 0; k < K * D; k++)
            w[k] = (double)(float)w[k];
}

static void assert_model_equals(const strux_model *m, const double *w, double rtol)
{
    double got[NW];
    test_model_get_flat(m, got);
    for (int k = 0; k < NW; k++)
        assert_close(got[k], w[k], rtol);
    for (int32_t k = 0; k < K; k++) {
        double n2 = 0;
        for (int j = 0; j < D; j++)
            n2 += w[k * D + j] * w[k * D + j];
        assert_close(strux_model_row_norm2(m, k), n2, rtol * 10 + 1e-13);
    }
}

/* Additions to m and to the reference w: several rows (zero coefficients untouched), one row. */
static void add_some(strux_model *m, const strux_csr *x, double *w)
{
    const double c[K] = {0.5, 0, -1.25, 0, 0, 2, 0};
    strux_model_add(m, x, 1, 0, K, 3.0, c);
    for (int k = 0; k < K; k++)
        for (int64_t p = x->ptr[1]; p < x->ptr[2]; p++)
            if (x->col[p] < D) w[k * D + x->col[p]] += 3.0 * c[k] * (double)x->val[p];
    strux_model_add_row(m, x, 0, 4, -0.5);
    for (int64_t p = x->ptr[0]; p < x->ptr[1]; p++)
        if (x->col[p] < D) w[4 * D + x->col[p]] += -0.5 * (double)x->val[p];
}

/* Normal weights; with zeros set, about 3 in 4 row weights are 0 (sparse rows stay sparse). */
static int zeros;

static void random_weights(double *w, uint64_t seed)
{
    strux_rng r;
    strux_rng_init(&r, seed, 0, 0);
    for (int k = 0; k < NW; k++) {
        w[k] = strux_rng_normal(&r);
        if (zeros && k < K * D && strux_rng_uniform(&r) < 0.75) w[k] = 0;
    }
}

static void test_kernels(void **state)
{
    zeros = *state != NULL;
    strux_csr x;
    make_x(&x);
    for (int q = 0; q < N_KINDS; q++) {
        strux_model_kind kind = kinds[q];
        double rtol = kind.precision == STRUX_PRECISION_FLOAT ? 1e-6 : 1e-13;
        strux_model *m;
        assert_strux_ok(strux_model_create(K, D, E, kind, &m));
        assert_int_equal(strux_model_n_w(m), NW);
        double w[NW];
        random_weights(w, 11);
        test_model_set_flat(m, w);
        round_to(kind, w);
        assert_model_equals(m, w, 0);

        /* scores against all rows, a range and a list */
        double out[K];
        for (int64_t r = 0; r < 3; r++) {
            strux_model_scores(m, &x, r, 0, K, out);
            for (int k = 0; k < K; k++)
                assert_close(out[k], ref_dot(&x, r, w + k * D), 1e-13);
            strux_model_scores(m, &x, r, 2, 3, out);
            for (int k = 0; k < 3; k++)
                assert_close(out[k], ref_dot(&x, r, w + (k + 2) * D), 1e-13);
            const int32_t rows[] = {6, 0, 3};
            strux_model_scores_rows(m, &x, r, rows, 3, out);
            for (int k = 0; k < 3; k++)
                assert_close(out[k], ref_dot(&x, r, w + rows[k] * D), 1e-13);
        }

        /* additions: several rows (zero coefficients untouched), one row */
        add_some(m, &x, w);
        assert_model_equals(m, w, rtol);

        /* row scales: O(1) changes, extreme ones folded, zero clears */
        strux_model_scale_row(m, 2, -3.0);
        for (int j = 0; j < D; j++) w[2 * D + j] *= -3.0;
        /* 1e-120 is folded into the stored values (a float store cannot hold such a row: it
         * becomes 0 there, so float kinds stay within its range) */
        double tiny = kind.precision == STRUX_PRECISION_FLOAT ? 1e-15 : 1e-60;
        strux_model_scale_row(m, 5, tiny);
        strux_model_scale_row(m, 5, tiny);
        strux_model_scale_row(m, 5, 1 / (tiny * tiny));
        assert_model_equals(m, w, kind.precision == STRUX_PRECISION_FLOAT ? 1e-6 : 1e-12);
        strux_model_scale_row(m, 6, 0);
        for (int j = 0; j < D; j++) w[6 * D + j] = 0;
        assert_model_equals(m, w, rtol);
        /* an addition into a scaled row lands in w, not v */
        strux_model_scale_row(m, 2, 0.25);
        for (int j = 0; j < D; j++) w[2 * D + j] *= 0.25;
        strux_model_add_row(m, &x, 2, 2, 2.0);
        for (int64_t p = x.ptr[2]; p < x.ptr[3]; p++) w[2 * D + x.col[p]] += 2.0 * (double)x.val[p];
        assert_model_equals(m, w, rtol * 4);

        /* the regulariser's norm, with and without a free column; shrink keeps the free column */
        double n2 = 0;
        for (int k = 0; k < NW; k++) n2 += w[k] * w[k];
        assert_close(strux_model_norm2(m), n2, rtol * 4);
        strux_model_set_free_col(m, D - 1);
        for (int k = 0; k < K; k++) n2 -= w[k * D + D - 1] * w[k * D + D - 1];
        assert_close(strux_model_norm2(m), n2, rtol * 4);
        strux_model_shrink(m, 0.5);
        for (int k = 0; k < NW; k++)
            if (k >= K * D || k % D != D - 1) w[k] *= 0.5;
        assert_model_equals(m, w, rtol * 4);
        strux_model_shrink(m, 0); /* SGD's first step, η = 1/λ: only the free column stays */
        for (int k = 0; k < NW; k++)
            if (k >= K * D || k % D != D - 1) w[k] = 0;
        assert_model_equals(m, w, rtol * 4);
        strux_model_set_free_col(m, -1);

        /* column scales, whole-model scale */
        random_weights(w, 12);
        test_model_set_flat(m, w);
        round_to(kind, w);
        double a[D];
        for (int j = 0; j < D; j++) a[j] = 1 + 0.1 * j;
        strux_model_scale_row(m, 1, 2.0);
        for (int j = 0; j < D; j++) w[D + j] *= 2.0;
        strux_model_scale_cols(m, a);
        for (int k = 0; k < K; k++)
            for (int j = 0; j < D; j++) w[k * D + j] *= a[j];
        strux_model_scale(m, -0.5);
        for (int k = 0; k < NW; k++) w[k] *= -0.5;
        assert_model_equals(m, w, rtol * 4);

        /* non-zeros of a row, one weight */
        int32_t idx[D];
        double val[D];
        strux_model_zero(m);
        strux_model_add_row(m, &x, 0, 3, 1.0);
        int32_t nz = strux_model_row_nonzeros(m, 3, idx, val);
        assert_int_equal(nz, 3);
        assert_int_equal(idx[0], 0);
        assert_int_equal(idx[2], 10);
        assert_close(val[1], -2.0, 0);
        assert_close(strux_model_get(m, 3, 10), 0.25, 0);
        assert_int_equal(strux_model_find_non_finite(m), -1);
        strux_model_extra(m)[1] = NAN;
        assert_int_equal(strux_model_find_non_finite(m), K * D + 1);
        strux_model_extra(m)[1] = 0;
        strux_model_add_row(m, &x, 2, 5, INFINITY);
        int64_t bad = strux_model_find_non_finite(m);
        assert_true(bad >= 5 * D && bad < 6 * D);
        strux_model_destroy(&m);
    }
    strux_csr_free(&x);
}

/* copy, axpy and dot between every pair of kinds; blob and storage round trips */
static void test_across_kinds(void **state)
{
    zeros = *state != NULL;
    for (int p = 0; p < N_KINDS; p++)
        for (int q = 0; q < N_KINDS; q++) {
            int lossy = kinds[p].precision == STRUX_PRECISION_FLOAT ||
                        kinds[q].precision == STRUX_PRECISION_FLOAT;
            double rtol = lossy ? 1e-6 : 1e-13;
            strux_model *a, *b;
            assert_strux_ok(strux_model_create(K, D, E, kinds[p], &a));
            assert_strux_ok(strux_model_create(K, D, E, kinds[q], &b));
            double wa[NW], wb[NW];
            random_weights(wa, 21);
            random_weights(wb, 22);
            test_model_set_flat(a, wa);
            test_model_set_flat(b, wb);
            round_to(kinds[p], wa);
            round_to(kinds[q], wb);
            strux_model_scale_row(a, 3, 4.0); /* scales in play on both sides */
            strux_model_scale_row(b, 1, -0.5);
            for (int j = 0; j < D; j++) {
                wa[3 * D + j] *= 4.0;
                wb[D + j] *= -0.5;
            }
            double dot = 0;
            for (int k = 0; k < NW; k++) dot += wa[k] * wb[k];
            assert_close(strux_model_dot(a, b), dot, 1e-12);
            assert_strux_ok(strux_model_axpy(-1.5, a, b));
            for (int k = 0; k < NW; k++) wb[k] += -1.5 * wa[k];
            assert_model_equals(b, wb, rtol);
            assert_strux_ok(strux_model_copy(b, a));
            assert_model_equals(b, wa, rtol);

            strux_blob blob = {0};
            assert_strux_ok(strux_model_put(a, &blob));
            strux_model_zero(b);
            blob.pos = 0;
            assert_strux_ok(strux_model_get_blob(b, &blob, "weights"));
            assert_model_equals(b, wa, rtol);
            strux_blob_free(&blob);

            strux_model_buffer s = strux_model_storage(a); /* scales folded: the plain values */
            if (kinds[p].layout == STRUX_LAYOUT_SPARSE) { /* no dense buffer: refused */
                assert_null(s.v);
                assert_int_equal(s.n_v, 0);
                assert_non_null(strstr(strux_error_message(), "no dense storage"));
                assert_model_equals(a, wa, rtol);
                strux_model_destroy(&a);
                strux_model_destroy(&b);
                continue;
            }
            assert_int_equal(s.n_v, K * D);
            assert_int_equal(s.n_extra, E);
            if (s.precision == STRUX_PRECISION_DOUBLE)
                ((double *)s.v)[0] += 1;
            else
                ((float *)s.v)[0] += 1;
            strux_model_refresh(a);
            wa[0] += 1;
            assert_model_equals(a, wa, rtol);
            strux_model_destroy(&a);
            strux_model_destroy(&b);
        }
    strux_model *a, *b;
    assert_strux_ok(strux_model_create(K, D, E, kinds[0], &a));
    assert_strux_ok(strux_model_create(K, D + 1, E, kinds[1], &b));
    assert_strux_fails(strux_model_axpy(1, a, b), STRUX_ERR_INTERNAL, "model axpy between shapes");
    strux_model_destroy(&a);
    strux_model_destroy(&b);
}

/* Sparse rows that grow: random sparse x rows added to a sparse model and a label-major one of
 * the same precision side by side: the same stored values, kept norms and scores bit for bit
 * (the sparse kernels sum in the dense kernels' order), the sparse rows' bytes within
 * nnz × (4 + value size) × 1.5 (growth) plus 4 entries' room, a row past dense_at stored dense
 * (then no bytes of index), and the blob round trip keeps the kept norms. */
#define GD 60  /* features: a double row turns dense past 40 entries, a float one past 30 */
#define GK 4   /* rows */
#define GN 40  /* x rows */
#define GP 6   /* non-zeros per x row */
static void test_sparse_growth(void **state)
{
    (void)state;
    strux_csr x;
    assert_strux_ok(strux_csr_alloc(&x, GN, GD + 10, GN * GP));
    strux_rng r;
    strux_rng_init(&r, 5, 0, 0);
    for (int i = 0; i < GN; i++) {
        x.ptr[i + 1] = x.ptr[i] + GP;
        int32_t c = (int32_t)(strux_rng_uniform(&r) * 30);
        for (int p = 0; p < GP; p++) { /* ascending distinct columns, some beyond GD */
            x.col[i * GP + p] = c;
            x.val[i * GP + p] = (float)strux_rng_normal(&r);
            c += 1 + (int32_t)(strux_rng_uniform(&r) * 7);
        }
    }
    for (int prec = 0; prec < 2; prec++) {
        strux_model_kind sk = {STRUX_LAYOUT_SPARSE, (strux_precision)prec},
                         dk = {STRUX_LAYOUT_LABEL_MAJOR, (strux_precision)prec};
        size_t vs = prec ? sizeof(float) : sizeof(double);
        strux_model *sp, *de;
        assert_strux_ok(strux_model_create(GK, GD, 0, sk, &sp));
        assert_strux_ok(strux_model_create(GK, GD, 0, dk, &de));
        for (int i = 0; i < GN; i++) {
            /* row 0 takes every x row (turns dense), rows 1..3 every 16th (stay sparse) */
            double c[GK] = {0.5 - 0.01 * i, i % 16 == 1 ? 1.5 : 0, i % 16 == 2 ? -0.75 : 0,
                            i % 16 == 3 ? 2 : 0};
            strux_model_add(sp, &x, i, 0, GK, 1.0, c);
            strux_model_add(de, &x, i, 0, GK, 1.0, c);
            if (i % 7 == 3) { /* scales in play */
                strux_model_scale_row(sp, i % GK, -1.25);
                strux_model_scale_row(de, i % GK, -1.25);
            }
        }
        double ws[GK * GD], wd[GK * GD], os[GK], od[GK];
        test_model_get_flat(sp, ws);
        test_model_get_flat(de, wd);
        assert_memory_equal(ws, wd, sizeof ws);
        for (int k = 0; k < GK; k++)
            assert_true(strux_model_row_norm2(sp, k) == strux_model_row_norm2(de, k));
        assert_true(strux_model_norm2(sp) == strux_model_norm2(de));
        for (int i = 0; i < GN; i++) {
            strux_model_scores(sp, &x, i, 0, GK, os);
            strux_model_scores(de, &x, i, 0, GK, od);
            assert_memory_equal(os, od, sizeof os);
        }
        /* bytes: row 0 dense (GD values), rows 1..3 sparse within 1.5 × nnz entries + 4 */
        int32_t idx[GD];
        double val[GD];
        size_t want = GD * vs, fixed = GK * (2 * sizeof(double) + sizeof(int32_t));
        int64_t nnz0 = strux_model_row_nonzeros(sp, 0, idx, val);
        assert_true(nnz0 > (int64_t)(GD * vs / (4 + vs))); /* past dense_at */
        for (int k = 1; k < GK; k++) {
            int32_t n = strux_model_row_nonzeros(sp, k, idx, val);
            assert_true(n >= GP && n < GD / 2);
            want += (size_t)(1.5 * n + 4) * (4 + vs);
        }
        size_t got = strux_model_bytes(sp) - fixed;
        assert_true(got <= want + GK * 24);
        assert_true(got < strux_model_bytes(de) - fixed); /* smaller than the dense model */
        /* blob round trip into a fresh sparse model keeps scales and kept norms bit for bit */
        strux_blob blob = {0};
        assert_strux_ok(strux_model_put(sp, &blob));
        /* sparse rows travel as their non-zeros: row 0 dense, rows 1..3 as (column, value) */
        size_t want_blob = 24 + GD * sizeof(double);
        for (int k = 1; k < GK; k++)
            want_blob += 24 + (size_t)strux_model_row_nonzeros(sp, k, idx, val) * 12;
        assert_int_equal(blob.n, want_blob);
        strux_model *back;
        assert_strux_ok(strux_model_create(GK, GD, 0, sk, &back));
        blob.pos = 0;
        assert_strux_ok(strux_model_get_blob(back, &blob, "weights"));
        strux_blob_free(&blob);
        for (int k = 0; k < GK; k++)
            assert_true(strux_model_row_norm2(back, k) == strux_model_row_norm2(sp, k));
        test_model_get_flat(back, wd);
        assert_memory_equal(ws, wd, sizeof ws);
        /* set_row with few entries makes the dense row sparse again */
        double row[GD] = {0};
        row[7] = 3;
        size_t before = strux_model_bytes(back);
        strux_model_set_row(back, 0, row);
        assert_true(strux_model_bytes(back) < before - GD * vs / 2);
        assert_true(strux_model_get(back, 0, 7) == 3 && strux_model_row_norm2(back, 0) == 9);
        strux_model_destroy(&back);
        strux_model_destroy(&sp);
        strux_model_destroy(&de);
    }
    strux_csr_free(&x);
}

/* Long sparse rows against short x rows (the kernels search a row instead of merging it): rows
 * with evenly spread columns and with clustered ones (interpolation far off: bisection), x
 * columns before, inside and after a row's range; scores and additions equal label-major's. */
static void test_sparse_search(void **state)
{
    (void)state;
    enum { SD = 3000, SK = 3, SN = 200 };
    strux_model *sp, *de;
    strux_model_kind sk = {STRUX_LAYOUT_SPARSE, STRUX_PRECISION_DOUBLE};
    assert_strux_ok(strux_model_create(SK, SD, 0, sk, &sp));
    assert_strux_ok(strux_model_create(SK, SD, 0, STRUX_MODEL_PLAIN, &de));
    static double row[SD];
    strux_rng r;
    strux_rng_init(&r, 9, 0, 0);
    for (int k = 0; k < SK; k++) {
        memset(row, 0, sizeof row);
        for (int j = 0; j < SD; j++) {
            int on = k == 0   ? j % 3 == 1                      /* even */
                     : k == 1 ? (j < 40 || (j > 2900 && j % 2)) /* two clusters */
                              : (j % 500 < 150 && j % 2 == 0);  /* bands */
            if (on) row[j] = strux_rng_normal(&r);
        }
        strux_model_set_row(sp, k, row);
        strux_model_set_row(de, k, row);
    }
    strux_csr x;
    assert_strux_ok(strux_csr_alloc(&x, SN, SD, SN * 3));
    for (int i = 0; i < SN; i++) {
        x.ptr[i + 1] = x.ptr[i] + 3;
        int32_t c = (int32_t)(strux_rng_uniform(&r) * 1000);
        for (int p = 0; p < 3; p++) {
            x.col[i * 3 + p] = c;
            x.val[i * 3 + p] = (float)strux_rng_normal(&r);
            c += 1 + (int32_t)(strux_rng_uniform(&r) * 900);
            if (c >= SD) c = SD - 3 + p;
        }
    }
    double os[SK], od[SK];
    const double cs[SK] = {0.5, -1, 2};
    for (int i = 0; i < SN; i++) {
        strux_model_scores(sp, &x, i, 0, SK, os);
        strux_model_scores(de, &x, i, 0, SK, od);
        assert_memory_equal(os, od, sizeof os);
        if (i % 10 == 0) { /* a few additions: new columns land inside long rows */
            strux_model_add(sp, &x, i, 0, SK, 0.1, cs);
            strux_model_add(de, &x, i, 0, SK, 0.1, cs);
        }
    }
    static double ws[SK * SD], wd[SK * SD];
    test_model_get_flat(sp, ws);
    test_model_get_flat(de, wd);
    assert_memory_equal(ws, wd, sizeof ws);
    for (int k = 0; k < SK; k++)
        assert_true(strux_model_row_norm2(sp, k) == strux_model_row_norm2(de, k));
    strux_csr_free(&x);
    strux_model_destroy(&sp);
    strux_model_destroy(&de);
}

/* Scores by column (strux_model_cols, the active-set screening) against a reference: the rows
 * with a weight at one of x's columns (skip_col's excepted), ascending, each with Σ_j w_kj·x_j
 * summed in x's column order, for models where an example meets few rows (the list is sorted)
 * and many (the row marks are read in order), the scratch left clean between calls. */
static void test_cols_scores(void **state)
{
    (void)state;
    enum { CD = 100, CN = 60, CP = 5 };
    const int32_t n_rows[] = {20000, 130};
    strux_rng r;
    strux_rng_init(&r, 21, 0, 0);
    strux_csr x;
    assert_strux_ok(strux_csr_alloc(&x, CN, CD, CN * CP));
    for (int i = 0; i < CN; i++) {
        x.ptr[i + 1] = x.ptr[i] + CP;
        for (int p = 0; p < CP; p++) {
            x.col[i * CP + p] = 20 * p + (int32_t)strux_rng_below(&r, 20);
            x.val[i * CP + p] = (float)strux_rng_normal(&r);
        }
    }
    for (int q = 0; q < 2; q++) {
        const int32_t nk = n_rows[q], skip = 7;
        strux_model *m;
        assert_strux_ok(strux_model_create(nk, CD, 0, STRUX_MODEL_PLAIN, &m));
        double *w, *out;
        int32_t *rows;
        assert_strux_ok(strux_alloc_array(&w, (size_t)nk * CD, sizeof *w));
        assert_strux_ok(strux_alloc_array(&out, (size_t)nk, sizeof *out));
        assert_strux_ok(strux_alloc_array(&rows, (size_t)nk, sizeof *rows));
        const double density = q == 0 ? 1.0 / nk : 0.3; /* a weight a column, or 39 */
        for (int32_t k = 0; k < nk; k++) {
            for (int j = 0; j < CD; j++)
                w[(size_t)k * CD + j] = strux_rng_uniform(&r) < density ? strux_rng_normal(&r) : 0;
            w[(size_t)k * CD + skip] = 1; /* the skipped column touches every row */
            strux_model_set_row(m, k, w + (size_t)k * CD);
        }
        strux_model_cols c = {0};
        assert_strux_ok(strux_model_cols_build(m, skip, &c));
        x.col[0] = skip; /* row 0 of x meets the skipped column: no row from it */
        int64_t touched = 0;
        for (int i = 0; i < CN; i++) {
            int32_t n = strux_model_cols_scores(&c, &x, i, rows, out), t = 0;
            touched += n;
            for (int32_t k = 0; k < nk; k++) {
                double s = 0;
                int hit = 0;
                for (int64_t p = x.ptr[i]; p < x.ptr[i + 1]; p++) {
                    double wk = w[(size_t)k * CD + x.col[p]];
                    if (x.col[p] == skip || wk == 0) continue;
                    hit = 1;
                    s += x.val[p] * wk;
                }
                if (!hit) continue;
                assert_true(t < n);
                assert_int_equal(rows[t], k);
                assert_true(out[t] == s);
                t++;
            }
            assert_int_equal(t, n);
        }
        /* 20000 rows: a few per example (the list sorted); 130: most (the marks read) */
        const int64_t words = (nk + 63) / 64;
        if (q == 0) assert_true(touched < CN * words / 8);
        else assert_true(touched > CN * words * 8);
        strux_model_cols_free(&c);
        strux_free(&w);
        strux_free(&out);
        strux_free(&rows);
        strux_model_destroy(&m);
    }
    strux_csr_free(&x);
}

/* DiSMEC's pruning in every kind: |w| < t dropped (row scales applied), non-zeros per row
 * counted, the free parameters kept; a sparse model gives back room. */
static void test_prune(void **state)
{
    zeros = *state != NULL;
    for (int q = 0; q < N_KINDS; q++) {
        strux_model *m;
        assert_strux_ok(strux_model_create(K, D, E, kinds[q], &m));
        double w[NW];
        random_weights(w, 31);
        test_model_set_flat(m, w);
        round_to(kinds[q], w);
        strux_model_scale_row(m, 2, -3.0);
        for (int j = 0; j < D; j++) w[2 * D + j] *= -3.0;
        size_t before = strux_model_bytes(m);
        int64_t want = 0;
        for (int k = 0; k < K * D; k++)
            if (w[k] != 0 && fabs(w[k]) < 0.8) {
                w[k] = 0;
                want++;
            }
        assert_int_equal(strux_model_prune(m, 0.8), want);
        assert_model_equals(m, w, kinds[q].precision == STRUX_PRECISION_FLOAT ? 1e-6 : 1e-13);
        for (int32_t k = 0; k < K; k++) {
            int32_t nz = 0;
            for (int j = 0; j < D; j++) nz += w[k * D + j] != 0;
            assert_int_equal(strux_model_row_nnz(m, k), nz);
        }
        if (kinds[q].layout == STRUX_LAYOUT_SPARSE)
            assert_true(strux_model_bytes(m) < before);
        else
            assert_int_equal(strux_model_bytes(m), before);
        assert_int_equal(strux_model_prune(m, 0.8), 0);
        strux_model_destroy(&m);
    }
}

/* Views w + Δ over a base of every kind, Δ sparse or label-major double: reads are base + Δ
 * (scores, rows, weights, norms, copies, dot, blob), writes land in Δ and never in the base, the
 * change is the view minus the base, and a reset reads the base again. */
static void test_view(void **state)
{
    zeros = *state != NULL;
    strux_csr x;
    make_x(&x);
    const strux_model_kind deltas[2] = {{STRUX_LAYOUT_SPARSE, STRUX_PRECISION_DOUBLE},
                                        STRUX_MODEL_PLAIN};
    for (int q = 0; q < N_KINDS; q++)
        for (int e = 0; e < 2; e++) {
            strux_model *base, *view, *other;
            assert_strux_ok(strux_model_create(K, D, E, kinds[q], &base));
            double wb[NW], w[NW];
            random_weights(wb, 41);
            test_model_set_flat(base, wb);
            round_to(kinds[q], wb);
            strux_model_scale_row(base, 2, -2.0); /* a scaled base row */
            for (int j = 0; j < D; j++) wb[2 * D + j] *= -2.0;
            assert_strux_ok(strux_model_create_view(base, deltas[e], &view));
            assert_true(strux_model_is_view(view) && !strux_model_is_view(base));
            memcpy(w, wb, sizeof w);
            assert_model_equals(view, w, 1e-15);

            add_some(view, &x, w);
            strux_model_extra(view)[1] += 2;
            w[K * D + 1] += 2;
            assert_model_equals(view, w, 1e-13);
            assert_model_equals(base, wb, 0);
            double out[K];
            for (int64_t r = 0; r < 3; r++) {
                strux_model_scores(view, &x, r, 0, K, out);
                for (int k = 0; k < K; k++)
                    assert_close(out[k], ref_dot(&x, r, w + k * D), 1e-12);
                const int32_t rows[] = {5, 2};
                strux_model_scores_rows(view, &x, r, rows, 2, out);
                for (int k = 0; k < 2; k++)
                    assert_close(out[k], ref_dot(&x, r, w + rows[k] * D), 1e-12);
            }
            assert_close(strux_model_get(view, 4, 3), w[4 * D + 3], 1e-13);

            /* the change: view − base, the free parameters included */
            double dw[NW];
            test_model_get_flat(strux_model_view_delta(view), dw);
            for (int k = 0; k < NW; k++)
                assert_close(dw[k], w[k] - wb[k], 1e-12);
            assert_int_equal(strux_model_row_nnz(strux_model_view_delta(view), 1), 0);

            /* reads through the row-wise kernels and the blob */
            double n2 = 0, dot = 0;
            for (int k = 0; k < NW; k++) {
                n2 += w[k] * w[k];
                dot += w[k] * wb[k];
            }
            assert_close(strux_model_norm2(view), n2, 1e-12);
            assert_close(strux_model_dot(view, base), dot, 1e-12);
            assert_close(strux_model_dot(base, view), dot, 1e-12);
            assert_strux_ok(strux_model_create(K, D, E, STRUX_MODEL_PLAIN, &other));
            assert_strux_ok(strux_model_copy(other, view));
            assert_model_equals(other, w, 1e-13);
            strux_blob blob = {0};
            assert_strux_ok(strux_model_put(view, &blob));
            strux_model_zero(other);
            blob.pos = 0;
            assert_strux_ok(strux_model_get_blob(other, &blob, "view"));
            assert_model_equals(other, w, 1e-13);
            strux_blob_free(&blob);

            /* writes of whole rows and models: Δ follows, the base stays */
            double row[D];
            for (int j = 0; j < D; j++) row[j] = j % 3 ? 0.0 : j + 0.5;
            strux_model_set_row(view, 6, row);
            memcpy(w + 6 * D, row, sizeof row);
            strux_model_scale_row(view, 0, 3.0);
            for (int j = 0; j < D; j++) w[j] *= 3.0;
            assert_strux_ok(strux_model_axpy(0.5, other, view));
            test_model_get_flat(other, dw); /* other held the view before set_row and scale */
            for (int k = 0; k < NW; k++) w[k] += 0.5 * dw[k];
            assert_model_equals(view, w, 1e-12);
            assert_model_equals(base, wb, 0);
            assert_strux_ok(strux_model_copy(view, base));
            assert_model_equals(view, wb, 1e-13);
            strux_model_zero(view);
            memset(w, 0, sizeof w);
            assert_model_equals(view, w, 1e-13);
            assert_model_equals(base, wb, 0);
            strux_model_view_reset(view);
            assert_model_equals(view, wb, 1e-15);
            assert_int_equal(strux_model_find_non_finite(view), -1);
            strux_model_add_row(view, &x, 2, 1, NAN);
            int64_t bad = strux_model_find_non_finite(view);
            assert_true(bad >= D && bad < 2 * D);
            strux_model_destroy(&other);
            strux_model_destroy(&view);
            strux_model_destroy(&base);
        }
    strux_csr_free(&x);
}

/* A host's block in one process (a realloc'd buffer) for the shared store. */
typedef struct fake_block {
    char *b;
    size_t n;
    int grown;
} fake_block;
static void *fake_base(void *ctx) { return ((fake_block *)ctx)->b; }
static size_t fake_size(void *ctx) { return ((fake_block *)ctx)->n; }
static strux_status fake_reserve(void *ctx, size_t bytes)
{
    fake_block *f = ctx;
    if (bytes <= f->n) return STRUX_OK;
    STRUX_TRY(strux_realloc_array(&f->b, bytes, 1));
    memset(f->b + f->n, 0x7f, bytes - f->n); /* new room holds garbage until written */
    f->n = bytes;
    f->grown++;
    return STRUX_OK;
}
static strux_status fake_fence(void *ctx)
{
    (void)ctx;
    return STRUX_OK;
}

/* Random sparse rows over K rows (and the free parameters as row K) of D columns. */
static void random_rows(strux_rng *r, strux_sparse_rows *d)
{
    strux_sparse_rows_clear(d);
    int32_t idx[D];
    double val[D];
    for (int32_t k = 0; k <= K; k++) {
        if (strux_rng_uniform(r) < 0.4) continue;
        int32_t n = 0;
        for (int32_t j = 0; j < (k == K ? E : D); j++)
            if (strux_rng_uniform(r) < 0.3) {
                idx[n] = j;
                val[n++] = strux_rng_normal(r);
            }
        assert_strux_ok(strux_sparse_rows_append(d, k, n, idx, val, 1.0));
    }
}

/* One copy per host (store_shared.c) in one process: sums merged into the block give what
 * strux_model_add_sparse gives a model of the same kind, bit for bit, through row scales of the
 * view and the block's growth from 64 entries; a write through the view stays out of the block
 * until the next merge takes it in. */
static void test_shared(void **state)
{
    (void)state;
    strux_csr x;
    make_x(&x);
    const strux_model_kind ks[4] = {{STRUX_LAYOUT_SPARSE, STRUX_PRECISION_DOUBLE},
                                    {STRUX_LAYOUT_SPARSE, STRUX_PRECISION_FLOAT},
                                    {STRUX_LAYOUT_FEATURE_MAJOR, STRUX_PRECISION_DOUBLE},
                                    {STRUX_LAYOUT_LABEL_MAJOR, STRUX_PRECISION_FLOAT}};
    for (int q = 0; q < 4; q++) {
        fake_block f = {0};
        strux_model_share share = {.ctx = &f, .writer = 1, .base = fake_base, .size = fake_size,
                                   .reserve = fake_reserve, .fence = fake_fence};
        strux_model *w, *ref;
        assert_strux_ok(strux_model_create_shared(K, D, E, ks[q], &share, 8, &w));
        assert_strux_ok(strux_model_create(K, D, E, ks[q], &ref));
        assert_true(strux_model_is_shared(w) && strux_model_is_view(w));
        strux_sparse_rows d = {0};
        strux_rng r;
        strux_rng_init(&r, 51, 0, 0);
        double a[NW], b[NW];
        for (int round = 0; round < 12; round++) {
            random_rows(&r, &d);
            if (round == 4) { /* a scaled row: the sum lands as v + d/s */
                strux_model_scale_row(w, 3, -2.5);
                strux_model_scale_row(ref, 3, -2.5);
            }
            if (round == 7) { /* a write through the view, then a merge of nothing */
                strux_model_add_row(w, &x, 1, 5, 0.75);
                strux_model_add_row(ref, &x, 1, 5, 0.75);
                test_model_get_flat(w, a);
                test_model_get_flat(ref, b);
                assert_memory_equal(a, b, sizeof a);
                strux_sparse_rows_clear(&d);
            }
            assert_strux_ok(strux_model_shared_add_sparse(w, &d));
            strux_model_add_sparse(ref, &d);
            test_model_get_flat(w, a);
            test_model_get_flat(ref, b);
            assert_memory_equal(a, b, sizeof a);
            assert_int_equal(strux_model_row_nnz(strux_model_view_delta(w), 5), 0);
        }
        if (ks[q].layout == STRUX_LAYOUT_SPARSE) assert_true(f.grown >= 2);
        double out[K], want[K];
        strux_model_scores(w, &x, 1, 0, K, out);
        strux_model_scores(ref, &x, 1, 0, K, want);
        for (int k = 0; k < K; k++)
            assert_close(out[k], want[k], 1e-15);
        strux_sparse_rows_free(&d);
        strux_model_destroy(&w);
        strux_model_destroy(&ref);
        strux_free(&f.b);
    }
    strux_csr_free(&x);
}

/* model.layout = auto and model.precision pick the kind */
static void test_choose_kind(void **state)
{
    (void)state;
    strux_model_options o = {.bias = "regularised", .layout = "auto", .precision = "double"};
    assert_int_equal(strux_model_choose_kind(&o, 14).layout, STRUX_LAYOUT_FEATURE_MAJOR);
    assert_int_equal(strux_model_choose_kind(&o, 1).layout, STRUX_LAYOUT_LABEL_MAJOR);
    strcpy(o.layout, "label_major");
    strcpy(o.precision, "float");
    assert_int_equal(strux_model_choose_kind(&o, 14).layout, STRUX_LAYOUT_LABEL_MAJOR);
    assert_int_equal(strux_model_choose_kind(&o, 14).precision, STRUX_PRECISION_FLOAT);
    strux_model *m;
    assert_strux_ok(strux_model_create(1000, 20000, 0, strux_model_choose_kind(&o, 1000), &m));
    assert_true(strux_model_bytes(m) < (size_t)1000 * 20000 * 4 + 100000);
    strux_model_destroy(&m);
    strcpy(o.layout, "sparse"); /* an empty sparse model holds no weights */
    assert_int_equal(strux_model_choose_kind(&o, 1).layout, STRUX_LAYOUT_SPARSE);
    assert_strux_ok(strux_model_create(1000, 20000, 0, strux_model_choose_kind(&o, 1000), &m));
    assert_true(strux_model_bytes(m) < (size_t)1000 * 64);
    strux_model_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_kernels, NULL),
        cmocka_unit_test_prestate(test_kernels, "zeros"),
        cmocka_unit_test_prestate(test_across_kinds, NULL),
        cmocka_unit_test_prestate(test_across_kinds, "zeros"),
        cmocka_unit_test(test_sparse_growth),
        cmocka_unit_test(test_sparse_search),
        cmocka_unit_test(test_cols_scores),
        cmocka_unit_test_prestate(test_prune, NULL),
        cmocka_unit_test_prestate(test_prune, "zeros"),
        cmocka_unit_test(test_choose_kind),
        cmocka_unit_test_prestate(test_view, NULL),
        cmocka_unit_test_prestate(test_view, "zeros"),
        cmocka_unit_test(test_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
