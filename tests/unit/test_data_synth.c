/* tests/unit/test_data_synth.c - the synthetic multi-label generator (data/synth.c): the same seed
 * gives the same arrays and another seed others; rows do not depend on how generation is split
 * (first_row); the CSR invariants (nnz ascending distinct columns per row, finite positive
 * values, unit norms), also when nnz is most of D (the uniform fill); label frequencies near the
 * power law of the requested mean; options checked with messages; no allocation per row; and
 * allocation failures that leak nothing. */
#include "test_common.h"

#include "strux/data.h"

#include <math.h>
#include <string.h>

#define NORM_TOL 1e-5 /* unit norms, computed in double from float values */

static strux_gen_options small(void)
{
    strux_gen_options o = {.n_rows = 500,
                           .first_row = 0,
                           .dim = 300,
                           .n_labels = 12,
                           .nnz = 15,
                           .labels_per_row = 2.5,
                           .noise = 0.1,
                           .seed = 42};
    return o;
}

static strux_dataset *generate(const strux_gen_options *o)
{
    strux_dataset *ds = NULL;
    assert_strux_ok(strux_dataset_generate(o, &ds));
    return ds;
}

/* Rows [a_lo, a_lo + n) of a equal rows [b_lo, b_lo + n) of b, byte for byte. */
static int same_rows(const strux_dataset *a, int64_t a_lo, const strux_dataset *b, int64_t b_lo,
                     int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t pa = a->x.ptr[a_lo + i], pb = b->x.ptr[b_lo + i];
        int64_t k = a->x.ptr[a_lo + i + 1] - pa;
        if (k != b->x.ptr[b_lo + i + 1] - pb ||
            memcmp(a->x.col + pa, b->x.col + pb, (size_t)k * sizeof *a->x.col) != 0 ||
            memcmp(a->x.val + pa, b->x.val + pb, (size_t)k * sizeof *a->x.val) != 0)
            return 0;
        int64_t ya = a->y_ptr[a_lo + i], yb = b->y_ptr[b_lo + i];
        int64_t m = a->y_ptr[a_lo + i + 1] - ya;
        if (m != b->y_ptr[b_lo + i + 1] - yb ||
            memcmp(a->y_idx + ya, b->y_idx + yb, (size_t)m * sizeof *a->y_idx) != 0)
            return 0;
    }
    return 1;
}

static void test_same_seed_same_data(void **state)
{
    (void)state;
    strux_gen_options o = small();
    strux_dataset *a = generate(&o), *b = generate(&o);
    assert_int_equal(a->n_global, o.n_rows);
    assert_int_equal(a->n_local, o.n_rows);
    assert_int_equal(a->first, 0);
    assert_int_equal(a->dim, o.dim);
    assert_int_equal(a->n_labels, o.n_labels);
    assert_int_equal(a->bias_col, -1);
    assert_true(same_rows(a, 0, b, 0, o.n_rows));
    strux_dataset_destroy(&b);
    o.seed = 43;
    b = generate(&o);
    int64_t same = 0;
    for (int64_t i = 0; i < o.n_rows; i++)
        same += same_rows(a, i, b, i, 1);
    assert_true(same < o.n_rows / 10);
    strux_dataset_destroy(&a);
    strux_dataset_destroy(&b);
}

static void test_rows_do_not_depend_on_the_split(void **state)
{
    (void)state;
    strux_gen_options o = small();
    strux_dataset *all = generate(&o);
    o.n_rows = 120;
    strux_dataset *head = generate(&o);
    o.first_row = 120;
    o.n_rows = 380;
    strux_dataset *tail = generate(&o);
    assert_true(same_rows(all, 0, head, 0, 120));
    assert_true(same_rows(all, 120, tail, 0, 380));
    /* a test set further on: other rows of the same model */
    o.first_row = 500;
    o.n_rows = 500;
    strux_dataset *test = generate(&o);
    int64_t same = 0;
    for (int64_t i = 0; i < 500; i++)
        same += same_rows(all, i, test, i, 1);
    assert_true(same < 50);
    strux_dataset_destroy(&all);
    strux_dataset_destroy(&head);
    strux_dataset_destroy(&tail);
    strux_dataset_destroy(&test);
}

static void check_csr(const strux_dataset *ds, int32_t nnz)
{
    for (int64_t i = 0; i < ds->n_local; i++) {
        assert_int_equal(ds->x.ptr[i + 1] - ds->x.ptr[i], nnz);
        double norm2 = 0;
        for (int64_t p = ds->x.ptr[i]; p < ds->x.ptr[i + 1]; p++) {
            assert_true(ds->x.col[p] >= 0 && ds->x.col[p] < ds->dim);
            if (p > ds->x.ptr[i]) assert_true(ds->x.col[p] > ds->x.col[p - 1]);
            assert_true(isfinite(ds->x.val[p]) && ds->x.val[p] > 0);
            norm2 += (double)ds->x.val[p] * ds->x.val[p];
        }
        assert_close(sqrt(norm2), 1.0, NORM_TOL);
        for (int64_t p = ds->y_ptr[i]; p < ds->y_ptr[i + 1]; p++) {
            assert_true(ds->y_idx[p] >= 0 && ds->y_idx[p] < ds->n_labels);
            if (p > ds->y_ptr[i]) assert_true(ds->y_idx[p] > ds->y_idx[p - 1]);
        }
    }
}

static void test_csr_invariants(void **state)
{
    (void)state;
    strux_gen_options o = small();
    strux_dataset *ds = generate(&o);
    check_csr(ds, o.nnz);
    strux_dataset_destroy(&ds);
    /* nnz most of D: the popular columns run out and the uniform fill completes the rows */
    int32_t dims[] = {1, 7, 50, 60};
    int32_t nnzs[] = {1, 7, 50, 45};
    for (int c = 0; c < 4; c++) {
        o.dim = dims[c];
        o.nnz = nnzs[c];
        ds = generate(&o);
        check_csr(ds, o.nnz);
        strux_dataset_destroy(&ds);
    }
}

/* The power law of data/synth.c: p_k = min(1/2, c/(k + 1)), Σ p_k = m. */
static void power_law(int32_t n_labels, double m, double *p)
{
    double lo = 0, hi = 0.5 * n_labels;
    for (int t = 0; t < 200; t++) {
        double c = 0.5 * (lo + hi), sum = 0;
        for (int32_t k = 0; k < n_labels; k++)
            sum += fmin(0.5, c / (k + 1));
        if (sum < m)
            lo = c;
        else
            hi = c;
    }
    for (int32_t k = 0; k < n_labels; k++)
        p[k] = fmin(0.5, hi / (k + 1));
}

static void test_label_frequencies(void **state)
{
    (void)state;
    const double ms[] = {0.5, 3.0, 10.0}; /* the last one: every label at the cap of 1/2 */
    for (int c = 0; c < 3; c++) {
        strux_gen_options o = {.n_rows = 20000,
                               .dim = 2000,
                               .n_labels = 20,
                               .nnz = 30,
                               .labels_per_row = ms[c],
                               .noise = 0.1,
                               .seed = 7};
        strux_dataset *ds = generate(&o);
        double count[20] = {0}, p[20];
        for (int64_t q = 0; q < ds->y_ptr[ds->n_local]; q++)
            count[ds->y_idx[q]]++;
        double mean = (double)ds->y_ptr[ds->n_local] / (double)o.n_rows;
        assert_close(mean, o.labels_per_row, 0.03);
        power_law(o.n_labels, o.labels_per_row, p);
        for (int32_t k = 0; k < o.n_labels; k++) {
            double f = count[k] / (double)o.n_rows;
            /* sampling error of the calibration sample and of these rows, a few σ */
            double tol = 5 * sqrt(p[k] * (1 - p[k]) / 20000.0) + 0.01 * p[k];
            if (fabs(f - p[k]) > tol)
                print_error("label %d: frequency %g, wanted %g\n", k, f, p[k]);
            assert_true(fabs(f - p[k]) <= tol);
        }
        strux_dataset_destroy(&ds);
    }
}

/* With 2000 labels the calibration sample has 2^23/2000 = 4194 rows, fewer than 8 above the
 * quantile of every label from k = 200 on (p_k·4194 < 8): those are calibrated over a longer run
 * (synth.c, calibrate_tail). Before that, with their τ near the sample's maximum, they came out
 * 1.2× as frequent in all and the rows held 3.19 labels instead of 3. */
static void test_rare_label_frequencies(void **state)
{
    (void)state;
    enum { L = 2000, RARE = 200 };
    strux_gen_options o = {.n_rows = 20000,
                           .dim = 20000,
                           .n_labels = L,
                           .nnz = 50,
                           .labels_per_row = 3,
                           .noise = 0.1,
                           .seed = 7};
    strux_dataset *ds = generate(&o);
    static double count[L], p[L];
    memset(count, 0, sizeof count);
    for (int64_t q = 0; q < ds->y_ptr[ds->n_local]; q++)
        count[ds->y_idx[q]]++;
    power_law(L, o.labels_per_row, p);
    double want = 0, got = 0;
    for (int32_t k = RARE; k < L; k++) {
        want += p[k];
        got += count[k] / (double)o.n_rows;
    }
    double mean = (double)ds->y_ptr[ds->n_local] / (double)o.n_rows;
    print_message("# 2000 labels: %.4f labels per row; labels %d..%d: %.4f of %.4f wanted\n", mean,
                  RARE, L - 1, got, want);
    assert_close(mean, o.labels_per_row, 0.02);
    assert_close(got, want, 0.06);
    strux_dataset_destroy(&ds);
}

static void test_options_checked(void **state)
{
    (void)state;
    strux_dataset *ds = NULL;
    strux_gen_options o = small();
    o.nnz = 301;
    assert_strux_fails(strux_dataset_generate(&o, &ds), STRUX_ERR_CONFIG,
                       "nnz = 301; it must be in [1, features = 300]");
    assert_null(ds);
    o = small();
    o.labels_per_row = 6.5;
    assert_strux_fails(strux_gen_options_check(&o), STRUX_ERR_CONFIG,
                       "labels per row = 6.5; it must be in (0, 6]");
    o.labels_per_row = 0;
    assert_strux_fails(strux_gen_options_check(&o), STRUX_ERR_CONFIG, "labels per row = 0");
    o = small();
    o.noise = -1;
    assert_strux_fails(strux_gen_options_check(&o), STRUX_ERR_CONFIG, "noise = -1");
    o.noise = NAN;
    assert_strux_fails(strux_gen_options_check(&o), STRUX_ERR_CONFIG, "noise = nan");
    o = small();
    o.n_rows = 0;
    assert_strux_fails(strux_gen_options_check(&o), STRUX_ERR_CONFIG, "rows = 0");
    o = small();
    o.first_row = INT64_MAX - 10;
    assert_strux_fails(strux_gen_options_check(&o), STRUX_ERR_CONFIG, "row offset");
    o = small();
    o.dim = 0;
    assert_strux_fails(strux_gen_options_check(&o), STRUX_ERR_CONFIG, "features = 0");
    o = small();
    o.n_labels = 0;
    assert_strux_fails(strux_gen_options_check(&o), STRUX_ERR_CONFIG, "labels = 0");
    o = small();
    assert_strux_ok(strux_gen_options_check(&o));
}

static void test_no_allocation_per_row(void **state)
{
    (void)state;
    strux_gen_options o = small();
    int64_t calls[2];
    for (int c = 0; c < 2; c++) {
        o.n_rows = c ? 5000 : 10;
        int64_t before = strux_alloc_calls();
        strux_dataset *ds = generate(&o);
        calls[c] = strux_alloc_calls() - before;
        strux_dataset_destroy(&ds);
    }
    assert_int_equal(calls[0], calls[1]);
}

static void test_allocation_failures_do_not_leak(void **state)
{
    (void)state;
    strux_gen_options o = small();
    strux_dataset *ds = NULL;
    int64_t before = strux_alloc_calls();
    assert_strux_ok(strux_dataset_generate(&o, &ds));
    int64_t calls = strux_alloc_calls() - before;
    strux_dataset_destroy(&ds);
    assert_true(calls > 10);
    for (int64_t n = 0; n < calls; n++) {
        size_t bytes = strux_alloc_bytes();
        strux_alloc_fail_after(n);
        assert_strux_fails(strux_dataset_generate(&o, &ds), STRUX_ERR_NOMEM, "out of memory");
        assert_null(ds);
        assert_int_equal(strux_alloc_bytes(), bytes);
    }
    strux_alloc_fail_after(-1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_data),
        cmocka_unit_test(test_rows_do_not_depend_on_the_split),
        cmocka_unit_test(test_csr_invariants),
        cmocka_unit_test(test_label_frequencies),
        cmocka_unit_test(test_rare_label_frequencies),
        cmocka_unit_test(test_options_checked),
        cmocka_unit_test(test_no_allocation_per_row),
        cmocka_unit_test(test_allocation_failures_do_not_leak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
