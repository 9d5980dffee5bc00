/* tests/common/brute.c - brute-force enumeration references (see brute.h). */
#include "brute.h"

#include <math.h>
#include <stdlib.h>

void brute_point(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                 const strux_label *y, double *m, double *g)
{
    *m = strux_task_score(t, pot, y) - strux_task_score(t, pot, truth);
    *g = strux_task_loss(t, y, truth);
}

static int admitted(const strux_query *q, const strux_label *y, double m, double g)
{
    for (int32_t k = 0; k < q->n_ban; k++)
        if (strux_label_equal(&q->ban[k], y)) return 0;
    if (!q->wedge) return 1;
    double h = m + q->h_shift;
    int lower = q->lower_open ? q->beta * h < g : q->beta * h <= g;
    int upper = isinf(q->alpha) ? 1 : (q->upper_open ? g < q->alpha * h : g <= q->alpha * h);
    return lower && upper;
}

/* max over the labels admitted by q of value(m, g, |y|), the maximiser copied into best. */
static double brute_max(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                        const strux_query *q, double (*value)(const void *ctx, double m, double g,
                                                              double size),
                        const void *ctx, strux_label *best)
{
    strux_label y;
    if (strux_label_alloc(&y, truth->cap, truth->mu_cap) != STRUX_OK) abort();
    int64_t n = strux_task_label_count(t, pot);
    if (n < 0) abort();
    double v_best = -INFINITY;
    for (int64_t k = 0; k < n; k++) {
        if (strux_task_label_at(t, pot, k, &y) != STRUX_OK) abort();
        double m, g;
        brute_point(t, pot, truth, &y, &m, &g);
        if (q && !admitted(q, &y, m, g)) continue;
        double v = value(ctx, m, g, strux_task_size(t, &y));
        if (v > v_best) {
            v_best = v;
            if (best && strux_label_copy(best, &y) != STRUX_OK) abort();
        }
    }
    strux_label_free(&y);
    return v_best;
}

static double query_value(const void *ctx, double m, double g, double size)
{
    const strux_query *q = ctx;
    return q->a * m + q->b * g + q->c * size;
}

double brute_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                    const strux_query *q, strux_label *best)
{
    return brute_max(t, pot, truth, q, query_value, q, best);
}

typedef double (*psi_fn)(double m, double g);

static double psi_value(const void *ctx, double m, double g, double size)
{
    (void)size;
    return (*(const psi_fn *)ctx)(m, g);
}

double brute_max_psi(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                     double (*psi)(double m, double g), strux_label *best)
{
    psi_fn f = psi;
    return brute_max(t, pot, truth, NULL, psi_value, &f, best);
}

void random_potentials(strux_pot *pot, int64_t n, double scale, uint64_t seed)
{
    strux_rng r;
    strux_rng_init(&r, seed, 0, 0);
    for (int64_t k = 0; k < n; k++) pot->s[k] = scale * strux_rng_normal(&r);
    pot->stamp++;
}
