/* tests/common/synth.c - synthetic datasets and random queries (see synth.h). */
#include "synth.h"

#include "brute.h"
#include "test_common.h"

#include <math.h>
#include <stdlib.h>

static void need(strux_status st)
{
    if (st != STRUX_OK) abort();
}

/* Random sparse features: each of dim columns present with probability 1/2. */
static strux_csr random_rows(int64_t n_rows, int32_t dim, strux_rng *r)
{
    strux_csr x;
    need(strux_csr_alloc(&x, n_rows, dim, n_rows * dim));
    int64_t q = 0;
    for (int64_t i = 0; i < n_rows; i++) {
        for (int32_t j = 0; j < dim; j++) {
            if (strux_rng_uniform(r) < 0.5) continue;
            x.col[q] = j;
            x.val[q++] = (float)(2 * strux_rng_uniform(r) - 1);
        }
        x.ptr[i + 1] = q;
    }
    return x;
}

strux_dataset *synth_rows(const char *path, int64_t n, int32_t dim, int32_t n_labels, int n_per,
                          uint64_t seed)
{
    strux_rng r;
    strux_rng_init(&r, seed, 11, 0);
    strux_csr x = random_rows(n, dim, &r);
    int64_t *y_ptr;
    int32_t *y_idx;
    need(strux_alloc_array(&y_ptr, (size_t)n + 1, sizeof *y_ptr));
    need(strux_alloc_array(&y_idx, (size_t)(n * n_labels), sizeof *y_idx));
    int64_t q = 0;
    for (int64_t i = 0; i < n; i++) {
        if (n_per > 0) {
            /* n_per distinct labels, ascending: a partial Fisher-Yates over the label ids */
            int64_t perm[64];
            for (int32_t k = 0; k < n_labels; k++) perm[k] = k;
            for (int k = 0; k < n_per; k++) {
                int64_t j = k + (int64_t)strux_rng_below(&r, (uint64_t)(n_labels - k));
                int64_t t = perm[k];
                perm[k] = perm[j], perm[j] = t;
            }
            for (int32_t k = 0; k < n_labels; k++)
                for (int p = 0; p < n_per; p++)
                    if (perm[p] == k) y_idx[q++] = k;
        } else {
            for (int32_t k = 0; k < n_labels; k++)
                if (strux_rng_uniform(&r) < 0.3) y_idx[q++] = k;
        }
        y_ptr[i + 1] = q;
    }
    strux_dataset *ds;
    need(strux_dataset_from_arrays(path, &x, &y_ptr, &y_idx, n, 0, dim, n_labels, 1.0, &ds));
    return ds;
}

strux_dataset *synth_sequences(const char *path, int64_t n, int32_t max_T, int32_t dim, int32_t K,
                               uint64_t seed)
{
    strux_rng r;
    strux_rng_init(&r, seed, 12, 0);
    int64_t *ex_ptr;
    need(strux_alloc_array(&ex_ptr, (size_t)n + 1, sizeof *ex_ptr));
    for (int64_t i = 0; i < n; i++)
        ex_ptr[i + 1] = ex_ptr[i] + 1 + (int64_t)strux_rng_below(&r, (uint64_t)max_T);
    int64_t rows = ex_ptr[n];
    strux_csr x = random_rows(rows, dim, &r);
    int64_t *y_ptr;
    int32_t *y_idx;
    need(strux_alloc_array(&y_ptr, (size_t)rows + 1, sizeof *y_ptr));
    need(strux_alloc_array(&y_idx, (size_t)rows, sizeof *y_idx));
    for (int64_t t = 0; t < rows; t++) {
        y_ptr[t + 1] = t + 1;
        y_idx[t] = (int32_t)strux_rng_below(&r, (uint64_t)K);
    }
    strux_dataset *ds;
    need(strux_dataset_from_arrays(path, &x, &y_ptr, &y_idx, n, 0, dim, K, 1.0, &ds));
    ds->ex_ptr = ex_ptr;
    ds->n_local = n;
    return ds;
}

static double pick(strux_rng *r, const double *v, int n)
{
    return v[strux_rng_below(r, (uint64_t)n)];
}

strux_query random_query(strux_rng *r, int with_c, int dyadic)
{
    static const double grid[] = {0.25, 0.5, 1, 2, 4};
    strux_query q = {0};
    double u = strux_rng_uniform(r);
    q.a = u < 0.15 ? 0 : (dyadic ? pick(r, grid, 5) : 0.1 + 3 * strux_rng_uniform(r));
    q.b = u > 0.85 ? 0 : (dyadic ? pick(r, grid, 5) : 5 * strux_rng_uniform(r));
    if (with_c && strux_rng_uniform(r) < 0.5)
        q.c = (strux_rng_uniform(r) < 0.5 ? -1 : 1) *
              (dyadic ? pick(r, grid, 5) : 2 * strux_rng_uniform(r));
    if (strux_rng_uniform(r) < 0.5) {
        q.wedge = 1;
        q.h_shift = strux_rng_uniform(r) < 0.5 ? 0.0 : 1.0;
        double s1 = dyadic ? pick(r, grid, 5) : 3 * strux_rng_uniform(r);
        double s2 = dyadic ? pick(r, grid, 5) : 3 * strux_rng_uniform(r);
        q.beta = fmin(s1, s2);
        q.alpha = fmax(s1, s2);
        if (strux_rng_uniform(r) < 0.25) q.beta = 0;
        if (strux_rng_uniform(r) < 0.25) q.alpha = INFINITY;
        q.lower_open = strux_rng_uniform(r) < 0.5;
        q.upper_open = strux_rng_uniform(r) < 0.5;
    }
    return q;
}

void integer_potentials(strux_pot *pot, int64_t n, int range, strux_rng *r)
{
    for (int64_t k = 0; k < n; k++)
        pot->s[k] = (double)((int64_t)strux_rng_below(r, (uint64_t)(2 * range + 1)) - range);
    pot->stamp++;
}

void expect_oracle_answer(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                          const strux_query *q, double want, const strux_label *y,
                          const strux_answer *ans, double rtol)
{
    if (isinf(want)) {
        assert_false(ans->found);
        return;
    }
    assert_true(ans->found);
    assert_close(q->a * ans->m + q->b * ans->g + q->c * ans->size, want, rtol);
    double m, g;
    brute_point(t, pot, truth, y, &m, &g);
    assert_close(ans->m, m, 1e-12);
    assert_close(ans->g, g, 1e-12);
    assert_close(ans->size, strux_task_size(t, y), 1e-12);
    for (int32_t k = 0; k < q->n_ban; k++) assert_false(strux_label_equal(&q->ban[k], y));
    if (!q->wedge) return;
    double h = m + q->h_shift;
    assert_true(q->lower_open ? q->beta * h < g : q->beta * h <= g);
    if (!isinf(q->alpha)) assert_true(q->upper_open ? g < q->alpha * h : g <= q->alpha * h);
}
