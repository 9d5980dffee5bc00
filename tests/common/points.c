/* tests/common/points.c - the synthetic point task (see points.h). */
#include "points.h"

#include "../../src/tasks/task_impl.h" /* white-box: tests/common objects see no -Isrc */

#include <math.h>
#include <stdlib.h>

#define POINTS_TAU 1e-9

static strux_status pt_sizes(const strux_task *t, const strux_dataset *ds, int32_t *max_parts,
                             int64_t *max_pot, int64_t *max_mu)
{
    (void)t, (void)ds;
    *max_parts = 1;
    *max_pot = 2 * POINTS_MAX + 2;
    *max_mu = 0;
    return STRUX_OK;
}

/* The pot loss() reads: the task API passes none to loss, so the last initialised set is used. */
static const strux_pot *points_current;

static double pt_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    (void)t, (void)truth;
    return points_current->s[2 * y->y[0] + 1];
}

static double pt_size(const strux_task *t, const strux_label *y)
{
    (void)t, (void)y;
    return 0;
}

static double pt_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    (void)t;
    return pot->s[2 * y->y[0]];
}

static int pt_admits(const strux_query *q, double h, double g)
{
    double tb = POINTS_TAU * fmax(1.0, fabs(q->beta * h));
    if (q->lower_open ? !(g >= q->beta * h + tb) : !(g >= q->beta * h - tb)) return 0;
    if (isinf(q->alpha)) return !q->upper_open || h >= POINTS_TAU;
    double ta = POINTS_TAU * fmax(1.0, fabs(q->alpha * h));
    return q->upper_open ? g <= q->alpha * h - ta : g <= q->alpha * h + ta;
}

static strux_status pt_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                              const strux_query *q, strux_label *y, strux_answer *ans)
{
    (void)t, (void)truth;
    int best = -1;
    double v_best = -INFINITY;
    y->n = 1;
    y->n_mu = 0;
    for (int k = 0; k < pot->n_parts; k++) {
        double m = pot->s[2 * k], L = pot->s[2 * k + 1];
        if (q->wedge && !pt_admits(q, m + q->h_shift, L)) continue;
        y->y[0] = k;
        int banned = 0;
        for (int b = 0; b < q->n_ban; b++) banned |= strux_label_equal(&q->ban[b], y);
        if (banned) continue;
        double v = q->a * m + q->b * L;
        if (v > v_best) v_best = v, best = k;
    }
    *ans = (strux_answer){0};
    if (best < 0) return STRUX_OK;
    y->y[0] = best;
    ans->found = 1;
    ans->m = pot->s[2 * best];
    ans->g = pot->s[2 * best + 1];
    return STRUX_OK;
}

static int64_t pt_label_count(const strux_task *t, const strux_pot *pot)
{
    (void)t;
    return pot->n_parts;
}

static strux_status pt_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                strux_label *y)
{
    (void)t, (void)pot;
    y->n = 1;
    y->n_mu = 0;
    y->y[0] = (int32_t)index;
    return STRUX_OK;
}

static const struct strux_task_ops point_ops = {
    .sizes = pt_sizes,
    .oracle = pt_oracle,
    .loss = pt_loss,
    .size = pt_size,
    .score = pt_score,
    .label_count = pt_label_count,
    .label_at = pt_label_at,
};

void points_init(point_set *ps, int n, const double *m, const double *L)
{
    *ps = (point_set){0};
    ps->t = calloc(1, sizeof *ps->t);
    ps->t->ops = &point_ops;
    ps->t->type_name = "points";
    ps->t->caps = STRUX_CAP_WEDGE; /* its oracle answers wedge and ban queries */
    ps->ds.n_local = 1;
    ps->ds.n_global = 1;
    ps->ds.path = "points";
    if (strux_task_pot_alloc(ps->t, &ps->ds, &ps->pot) || strux_label_alloc(&ps->truth, 1, 0))
        abort();
    ps->pot.i = 0;
    ps->pot.n_parts = n + 1;
    ps->pot.stamp++;
    ps->pot.s[0] = ps->pot.s[1] = 0;
    for (int k = 0; k < n; k++) {
        ps->pot.s[2 * k + 2] = m[k];
        ps->pot.s[2 * k + 3] = L[k];
    }
    ps->truth.n = 1;
    ps->truth.y[0] = 0;
    points_current = &ps->pot;
}

void points_free(point_set *ps)
{
    strux_pot_free(&ps->pot);
    strux_label_free(&ps->truth);
    free(ps->t);
}

void points_of(const point_set *ps, const strux_label *y, double *m, double *L)
{
    *m = ps->pot.s[2 * y->y[0]];
    *L = ps->pot.s[2 * y->y[0] + 1];
}
