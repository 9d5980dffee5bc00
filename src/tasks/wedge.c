/* tasks/wedge.c - the admission rules of constrained and banned oracle queries, shared by every
 * task whose oracle filters candidate labels (slack_bicriteria.md §2.2, §2.3): the wedge
 * β·h ≤ g ≤ α·h on h = m + h_shift with per-side strictness realised through the tolerance τ, and
 * the ban list. */
#include "task_impl.h"

#include <math.h>

/* τ of a strict side whose bound is v (§2.2: τ ≈ 1e−9·max(1, |α·h|)). */
static double tau(double v)
{
    return STRUX_WEDGE_TAU * fmax(1.0, fabs(v));
}

int strux_query_admits(const strux_query *q, double m, double g)
{
    if (!q->wedge) return 1;
    double h = m + q->h_shift;
    double lo = q->beta * h;
    if (q->lower_open ? !(g >= lo + tau(lo)) : !(g >= lo)) return 0;
    if (isinf(q->alpha)) return 1;
    double hi = q->alpha * h;
    return q->upper_open ? g <= hi - tau(hi) : g <= hi;
}

int strux_query_banned(const strux_query *q, const strux_label *y)
{
    for (int32_t k = 0; k < q->n_ban; k++)
        if (strux_label_equal(&q->ban[k], y)) return 1;
    return 0;
}
