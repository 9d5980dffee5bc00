/* tests/common/test_common.h - helpers shared by the cmocka unit tests: relative float
 * comparison, fixture paths, and a status assertion that prints the recorded error message. */
#ifndef STRUX_TEST_COMMON_H
#define STRUX_TEST_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "strux/core.h"
#include "strux/model.h"

/* |a − b| ≤ rtol·max(1, |a|, |b|), with both values printed on failure. */
#define assert_close(a, b, rtol) test_assert_close((a), (b), (rtol), __FILE__, __LINE__)
void test_assert_close(double a, double b, double rtol, const char *file, int line);

/* Status must be STRUX_OK; otherwise fail with the recorded message. */
#define assert_strux_ok(expr) test_assert_status((expr), STRUX_OK, NULL, __FILE__, __LINE__)
/* Status must equal code and the message must contain needle. */
#define assert_strux_fails(expr, code, needle)                                                     \
    test_assert_status((expr), (code), (needle), __FILE__, __LINE__)
void test_assert_status(strux_status got, strux_status want, const char *needle, const char *file,
                        int line);

/* Path of a file under tests/fixtures (static buffer). */
const char *fixture(const char *name);
/* Path of a file under ../shared/data (static buffer); honours $STRUX_DATA. */
const char *shared_data(const char *rel);
/* A fresh temporary directory for this process (created once). */
const char *test_tmpdir(void);

/* A model's n_w weights as one flat label-major vector (rows, then the free parameters): read
 * into / written from w. */
void test_model_get_flat(const strux_model *m, double *w);
void test_model_set_flat(strux_model *m, const double *w);
/* Every kind of the weight store (layouts × precisions), for tests that run per kind. */
#define TEST_MODEL_KINDS 6
extern const strux_model_kind test_model_kinds[TEST_MODEL_KINDS];
/* A flat copy of m's weights (malloc'd; the caller frees). */
double *test_model_flat(const strux_model *m);
/* The largest relative difference |x − y| / max(|x|, |y|) over every weight of a and b (rows, then
 * the free parameters; 0 where equal); INFINITY when their shapes differ. */
double test_model_max_rel_diff(const strux_model *a, const strux_model *b);

#endif
