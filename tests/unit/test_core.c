/* tests/unit/test_core.c - core: error record and frames, allocator accounting and fault
 * injection, typed options, counter-based RNG. */
#include "test_common.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static strux_status fails_deep(void)
{
    STRUX_CHECK(0, STRUX_ERR_INPUT, "%s:%d: bad token '%s'", "f.svm", 7, "x:y");
    return STRUX_OK;
}

static strux_status fails_up(void)
{
    STRUX_TRY(fails_deep());
    return STRUX_OK;
}

static void test_error_message_and_frames(void **state)
{
    (void)state;
    strux_error_clear();
    assert_int_equal(fails_up(), STRUX_ERR_INPUT);
    assert_string_equal(strux_error_message(), "f.svm:7: bad token 'x:y'");
    const char *trace = strux_error_trace();
    assert_non_null(strstr(trace, "fails_deep"));
    assert_non_null(strstr(trace, "fails_up"));
    assert_string_equal(strux_status_name(STRUX_ERR_CONFIG), "config error");
    assert_string_equal(strux_status_name((strux_status)999), "unknown status");
    strux_error_adopt("rank 1: other");
    assert_string_equal(strux_error_message(), "rank 1: other");
    assert_string_equal(strux_error_trace(), "");
}

static void test_alloc_counts_and_zeroes(void **state)
{
    (void)state;
    size_t before = strux_alloc_bytes();
    int64_t calls = strux_alloc_calls();
    double *a = NULL;
    assert_strux_ok(strux_alloc_array(&a, 10, sizeof *a));
    for (int k = 0; k < 10; k++)
        assert_true(a[k] == 0.0);
    assert_int_equal(strux_alloc_bytes(), before + 10 * sizeof *a);
    assert_strux_ok(strux_realloc_array(&a, 20, sizeof *a));
    for (int k = 10; k < 20; k++)
        assert_true(a[k] == 0.0);
    assert_int_equal(strux_alloc_bytes(), before + 20 * sizeof *a);
    assert_int_equal(strux_alloc_calls(), calls + 2);
    strux_free(&a);
    assert_null(a);
    strux_free(&a); /* NULL is fine */
    assert_int_equal(strux_alloc_bytes(), before);
}

static void test_alloc_overflow_and_injection(void **state)
{
    (void)state;
    void *p = NULL;
    assert_strux_fails(strux_alloc_array(&p, SIZE_MAX / 2, 4), STRUX_ERR_NOMEM, "overflows");
    assert_null(p);
    strux_alloc_fail_after(1);
    assert_strux_ok(strux_alloc(&p, 8));
    void *q = NULL;
    assert_strux_fails(strux_alloc(&q, 8), STRUX_ERR_NOMEM, "8 bytes");
    assert_null(q);
    assert_strux_ok(strux_alloc(&q, 8)); /* injection fires once */
    strux_free(&p);
    strux_free(&q);
}

typedef struct opts {
    char s[STRUX_OPT_STR];
    char c[STRUX_OPT_STR];
    int64_t i;
    double d;
    int b;
} opts;

static const strux_opt_spec specs[] = {
    {"x.s", STRUX_OPT_STRING, offsetof(opts, s), "hello", 0, 0, NULL, "s"},
    {"x.c", STRUX_OPT_CHOICE, offsetof(opts, c), "b", 0, 0, "a|b|ccc", "c"},
    {"x.i", STRUX_OPT_INT, offsetof(opts, i), "3", 1, 10, NULL, "i"},
    {"x.d", STRUX_OPT_DOUBLE, offsetof(opts, d), "1e-3", 0, 1, NULL, "d"},
    {"x.b", STRUX_OPT_BOOL, offsetof(opts, b), "yes", 0, 0, NULL, "b"},
    {NULL},
};

static void test_options(void **state)
{
    (void)state;
    opts o;
    assert_strux_ok(strux_opt_defaults(specs, &o));
    assert_string_equal(o.s, "hello");
    assert_string_equal(o.c, "b");
    assert_int_equal(o.i, 3);
    assert_true(o.d == 1e-3);
    assert_int_equal(o.b, 1);
    assert_int_equal(strux_opt_count(specs), 5);
    assert_strux_ok(strux_opt_set(&specs[1], &o, "ccc", "f.ini:2"));
    assert_strux_fails(strux_opt_set(&specs[1], &o, "cc", "f.ini:3"), STRUX_ERR_CONFIG,
                       "f.ini:3: x.c = 'cc' is not one of: a|b|ccc");
    assert_strux_fails(strux_opt_set(&specs[2], &o, "11", "--set"), STRUX_ERR_CONFIG,
                       "outside [1, 10]");
    assert_strux_fails(strux_opt_set(&specs[2], &o, "2.5", "--set"), STRUX_ERR_CONFIG,
                       "not an integer");
    assert_strux_fails(strux_opt_set(&specs[3], &o, "nan", "--set"), STRUX_ERR_CONFIG,
                       "not a finite number");
    assert_strux_fails(strux_opt_set(&specs[4], &o, "maybe", "--set"), STRUX_ERR_CONFIG,
                       "not a boolean");
    assert_strux_ok(strux_opt_set(&specs[4], &o, "Off", "--set"));
    assert_int_equal(o.b, 0);
    /* format round-trips, shortest form for doubles */
    char buf[64];
    strux_opt_format(&specs[3], &o, buf, sizeof buf);
    assert_string_equal(buf, "0.001");
    assert_strux_ok(strux_opt_set(&specs[3], &o, "0.1", "t"));
    strux_opt_format(&specs[3], &o, buf, sizeof buf);
    assert_string_equal(buf, "0.1");
    strux_opt_format(&specs[4], &o, buf, sizeof buf);
    assert_string_equal(buf, "false");
}

static void test_rng_is_counter_based(void **state)
{
    (void)state;
    strux_rng a, b, c;
    strux_rng_init(&a, 42, 7, 3);
    strux_rng_init(&b, 42, 7, 3);
    strux_rng_init(&c, 42, 7, 4);
    int same_c = 0;
    for (int k = 0; k < 100; k++) {
        uint64_t x = strux_rng_next(&a);
        assert_true(x == strux_rng_next(&b));
        same_c += x == strux_rng_next(&c);
    }
    assert_int_equal(same_c, 0);
    /* uniform draws: range and mean */
    double sum = 0, sq = 0;
    for (int k = 0; k < 100000; k++) {
        double u = strux_rng_uniform(&a);
        assert_true(u >= 0.0 && u < 1.0);
        sum += u;
    }
    assert_close(sum / 100000, 0.5, 0.01);
    sum = 0;
    for (int k = 0; k < 100000; k++) {
        double z = strux_rng_normal(&a);
        sum += z;
        sq += z * z;
    }
    assert_close(sum / 100000, 0.0, 0.02);
    assert_close(sq / 100000, 1.0, 0.02);
    for (int k = 0; k < 1000; k++)
        assert_true(strux_rng_below(&a, 7) < 7);
}

static void test_rng_permutation(void **state)
{
    (void)state;
    enum { N = 1000 };
    int64_t perm[N];
    int seen[N] = {0};
    strux_rng r;
    strux_rng_init(&r, 1, 2, 3);
    strux_rng_permutation(&r, perm, N);
    int fixed = 0;
    for (int k = 0; k < N; k++) {
        assert_true(perm[k] >= 0 && perm[k] < N);
        seen[perm[k]]++;
        fixed += perm[k] == k;
    }
    for (int k = 0; k < N; k++)
        assert_int_equal(seen[k], 1);
    assert_true(fixed < 10); /* a uniform permutation has ~1 fixed point */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_message_and_frames),
        cmocka_unit_test(test_alloc_counts_and_zeroes),
        cmocka_unit_test(test_alloc_overflow_and_injection),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_rng_is_counter_based),
        cmocka_unit_test(test_rng_permutation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
