/* tests/unit/test_kernel.c - kernels, the kernel-row cache and kernel expansions
 * (strux/kernel.h; specs/m3l.md §1.6, §1.8, §2.7, A7): every kernel against its closed form on
 * random sparse rows (the bias column left out, b0² added), kernel rows against pairwise values,
 * the LRU cache's replacement order, hit counts and two-slot floor, and an expansion's scores
 * against the sum written out. */
#include "test_common.h"

#include <math.h>
#include <string.h>

#include "strux/kernel.h"

/* n random sparse rows of d columns (about half the entries), the last column a bias b0. */
static void random_rows(strux_rng *rng, int64_t n, int32_t d, double b0, strux_csr *x)
{
    assert_int_equal(strux_csr_alloc(x, n, d + 1, n * (d + 1)), STRUX_OK);
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < d; j++)
            if (strux_rng_uniform(rng) < 0.5) {
                x->col[at] = j;
                x->val[at++] = (float)strux_rng_normal(rng);
            }
        x->col[at] = d;
        x->val[at++] = (float)b0;
        x->ptr[i + 1] = at;
    }
}

/* x_i·x_j and the squared norms over the columns below d (the bias column left out). */
static double dot_nb(const strux_csr *x, int64_t i, int64_t j, int32_t d)
{
    double v[64] = {0}, s = 0;
    for (int64_t p = x->ptr[i]; p < x->ptr[i + 1]; p++)
        if (x->col[p] < d) v[x->col[p]] = x->val[p];
    for (int64_t p = x->ptr[j]; p < x->ptr[j + 1]; p++)
        if (x->col[p] < d) s += v[x->col[p]] * (double)x->val[p];
    return s;
}

static void test_kernel_values(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 3, 0, 0);
    const int32_t d = 12;
    const double b0 = 1.5;
    strux_csr x;
    random_rows(&rng, 20, d, b0, &x);
    strux_kernel ks[3] = {{STRUX_KERNEL_LINEAR, 0, 1, 0, b0},
                          {STRUX_KERNEL_RBF, 0.3, 1, 0, b0},
                          {STRUX_KERNEL_POLY, 0.2, 3, 1.5, b0}};
    double v[16], row[20], norm2[20];
    for (int64_t i = 0; i < 20; i++)
        norm2[i] = strux_kernel_norm2(&x, i, d);
    for (int t = 0; t < 3; t++) {
        for (int64_t j = 0; j < 20; j++) {
            memset(v, 0, sizeof v);
            for (int64_t p = x.ptr[j]; p < x.ptr[j + 1]; p++)
                if (x.col[p] < d) v[x.col[p]] = x.val[p];
            strux_kernel_rows(&ks[t], &x, 0, 20, norm2, v, norm2[j], row);
            for (int64_t i = 0; i < 20; i++) {
                double dot = dot_nb(&x, i, j, d), want = dot + b0 * b0; /* linear: x·x′ with bias */
                if (t == 1) {
                    double d2 = dot_nb(&x, i, i, d) + dot_nb(&x, j, j, d) - 2 * dot;
                    want = exp(-0.3 * (d2 > 0 ? d2 : 0)) + b0 * b0;
                } else if (t == 2) {
                    want = pow(0.2 * dot + 1.5, 3) + b0 * b0;
                }
                assert_close(row[i], want, 1e-12);
                if (t == 0) /* the linear kernel is the inner product with the bias column */
                    assert_close(row[i], strux_sprow_dot(&x, i, j), 1e-6);
            }
        }
    }
    strux_kernel_type type;
    assert_int_equal(strux_kernel_parse("rbf", &type), STRUX_OK);
    assert_int_equal(type, STRUX_KERNEL_RBF);
    assert_int_equal(strux_kernel_parse("gauss", &type), STRUX_ERR_INPUT);
    assert_non_null(strstr(strux_error_message(), "gauss"));
    strux_csr_free(&x);
}

static void test_cache_lru(void **state)
{
    (void)state;
    strux_kcache *c;
    /* three rows of 4 doubles fit 100 bytes */
    assert_int_equal(strux_kcache_create(10, 4, 1, 100, &c), STRUX_OK);
    assert_int_equal(strux_kcache_slots(c), 3);
    assert_true(strux_kcache_is_double(c));
    int hit;
    for (int64_t k = 0; k < 3; k++) {
        double *r = strux_kcache_get(c, k, &hit);
        assert_false(hit);
        r[0] = (double)k;
    }
    double *r1 = strux_kcache_get(c, 1, &hit); /* 1 becomes the most recent: 1, 2, 0 */
    assert_true(hit);
    assert_true(r1[0] == 1.0);
    double *r5 = strux_kcache_get(c, 5, &hit); /* replaces 0, the least recent: 5, 1, 2 */
    assert_false(hit);
    r5[0] = 5;
    strux_kcache_get(c, 2, &hit); /* 2, 5, 1 */
    assert_true(hit);
    strux_kcache_get(c, 0, &hit); /* 0 was replaced; now it replaces 1: 0, 2, 5 */
    assert_false(hit);
    double *again = strux_kcache_get(c, 5, &hit);
    assert_true(hit);
    assert_ptr_equal(again, r5);
    assert_true(again[0] == 5.0);
    strux_kcache_get(c, 1, &hit);
    assert_false(hit);
    int64_t hits, misses;
    strux_kcache_counts(c, &hits, &misses);
    assert_int_equal(hits, 3);
    assert_int_equal(misses, 6);
    strux_kcache_clear(c);
    strux_kcache_get(c, 1, &hit);
    assert_false(hit);
    strux_kcache_destroy(&c);
    assert_null(c);
    /* a budget below two rows still holds two (a step needs rows p and q at once) */
    assert_int_equal(strux_kcache_create(10, 1000, 0, 1, &c), STRUX_OK);
    assert_int_equal(strux_kcache_slots(c), 2);
    assert_false(strux_kcache_is_double(c));
    float *a = strux_kcache_get(c, 7, &hit), *b = strux_kcache_get(c, 8, &hit);
    assert_true(a != b);
    assert_ptr_equal(strux_kcache_get(c, 7, &hit), a);
    assert_true(hit);
    strux_kcache_destroy(&c);
}

static void test_expansion_scores(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 5, 0, 0);
    const int32_t d = 10, L = 3;
    strux_csr sv, x;
    random_rows(&rng, 6, d, 0.0, &sv); /* support vectors (their last column holds zeros) */
    random_rows(&rng, 4, d, 2.0, &x); /* test rows with a bias column of 2 at column d */
    strux_kexp e = {.kernel = {STRUX_KERNEL_RBF, 0.25, 1, 0, 2.0}, .n_labels = L, .n_sv = 6,
                    .sv = sv};
    assert_int_equal(strux_alloc_array(&e.coef, 6 * (size_t)L, sizeof *e.coef), STRUX_OK);
    for (int64_t j = 0; j < 6 * L; j++)
        e.coef[j] = strux_rng_normal(&rng);
    assert_int_equal(strux_kexp_prepare(&e), STRUX_OK);
    double *work = NULL, out[3];
    assert_int_equal(strux_alloc_array(&work, (size_t)strux_kexp_work_len(&e, x.n_cols),
                                       sizeof *work),
                     STRUX_OK);
    for (int64_t r = 0; r < 4; r++) {
        strux_kexp_scores(&e, &x, r, d, work, out);
        for (int32_t l = 0; l < L; l++) {
            double want = 0;
            for (int64_t s = 0; s < 6; s++) {
                double v[16] = {0}, dot = 0, n1 = 0, n2 = 0;
                for (int64_t p = sv.ptr[s]; p < sv.ptr[s + 1]; p++) {
                    v[sv.col[p]] = sv.val[p];
                    n1 += (double)sv.val[p] * sv.val[p];
                }
                for (int64_t p = x.ptr[r]; p < x.ptr[r + 1]; p++)
                    if (x.col[p] < d) {
                        dot += v[x.col[p]] * (double)x.val[p];
                        n2 += (double)x.val[p] * x.val[p];
                    }
                want += e.coef[s * L + l] * (exp(-0.25 * (n1 + n2 - 2 * dot)) + 4.0);
            }
            assert_close(out[l], want, 1e-12);
        }
        for (int64_t j = 0; j < strux_kexp_work_len(&e, x.n_cols); j++)
            assert_true(work[j] == 0); /* zero on return */
    }
    strux_free(&work);
    strux_kexp_free(&e);
    strux_csr_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_values),
        cmocka_unit_test(test_cache_lru),
        cmocka_unit_test(test_expansion_scores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
