/* tests/unit/test_linalg.c - sparse kernels against dense loops, BLAS wrappers against plain C,
 * model shape, copy and norm. */
#include "test_common.h"

#include "strux/linalg.h"
#include "strux/model.h"

static void test_sparse_kernels(void **state)
{
    (void)state;
    strux_csr a;
    assert_strux_ok(strux_csr_alloc(&a, 2, 5, 4));
    /* row 0: {1: 2, 4: -1}; row 1: {0: 0.5, 3: 3} */
    int32_t col[] = {1, 4, 0, 3};
    float val[] = {2, -1, 0.5f, 3};
    for (int k = 0; k < 4; k++) {
        a.col[k] = col[k];
        a.val[k] = val[k];
    }
    a.ptr[1] = 2;
    a.ptr[2] = 4;
    double w[5] = {1, 2, 3, 4, 5};
    assert_close(strux_spdot(&a, 0, w), 2 * 2 - 5, 0);
    assert_close(strux_spdot(&a, 1, w), 0.5 + 12, 0);
    assert_close(strux_spnorm2(&a, 1), 0.25 + 9, 0);
    strux_spaxpy(&a, 0, 2.0, w);
    assert_close(w[1], 6, 0);
    assert_close(w[4], 3, 0);
    assert_close(w[0], 1, 0);
    strux_csr_free(&a);
    assert_null(a.ptr);
}

static void test_blas_wrappers(void **state)
{
    (void)state;
    strux_blas_init();
    double x[7], y[7], dot = 0;
    for (int k = 0; k < 7; k++) {
        x[k] = k - 3;
        y[k] = 0.5 * k;
        dot += x[k] * y[k];
    }
    assert_close(strux_dot(7, x, y), dot, 1e-15);
    assert_close(strux_nrm2sq(7, x), 28, 1e-15);
    strux_axpy(7, 2.0, x, y);
    assert_close(y[6], 3 + 6, 0);
    strux_scal(7, -1.0, y);
    assert_close(y[6], -9, 0);
}

static void test_model(void **state)
{
    (void)state;
    strux_model *a, *b;
    assert_strux_ok(strux_model_create(3, 4, 2, STRUX_MODEL_PLAIN, &a));
    assert_int_equal(strux_model_n_w(a), 14);
    double w[14];
    for (int64_t k = 0; k < 14; k++) w[k] = (double)k;
    test_model_set_flat(a, w);
    assert_true(strux_model_get(a, 2, 0) == 8.0);
    assert_true(strux_model_extra(a)[1] == 13.0);
    assert_close(strux_model_norm2(a), 13.0 * 14 * 27 / 6, 0);
    assert_strux_ok(strux_model_create(3, 4, 2, STRUX_MODEL_PLAIN, &b));
    assert_strux_ok(strux_model_copy(b, a));
    double got[14];
    test_model_get_flat(b, got);
    assert_memory_equal(got, w, sizeof w);
    strux_model_destroy(&b);
    assert_strux_ok(strux_model_create(3, 5, 2, STRUX_MODEL_PLAIN, &b));
    assert_strux_fails(strux_model_copy(b, a), STRUX_ERR_INTERNAL, "model copy between shapes");
    strux_model_destroy(&b);
    strux_model_destroy(&a);
    assert_null(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sparse_kernels),
        cmocka_unit_test(test_blas_wrappers),
        cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
