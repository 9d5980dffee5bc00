/* solvers/lp_counters.c - the inference counters of tasks whose oracle solves linear programmes
 * (strux_task_lp_stats: the hierarchy task's multi-label DAG programme (6.22) with the exact
 * pruning and the size cap of hierarchical.md §5.4), summed over ranks: as a driver hook, the
 * record columns of each epoch's oracle calls (training passes and the certificate's),
 *   lp_free        share of the calls answered without an LP (the pruning left few enough
 *                  candidate leaves to enumerate),
 *   lp_candidates  mean candidate leaves per call,
 *   lp_ms          mean milliseconds per LP (building and solving it),
 *   lp_capped      calls whose pruned LP was over task.lp_max_nodes (answer not certified),
 * with a warning on rank 0 for an epoch with capped calls; and the totals of prediction (the
 * test-time counters, binary programmes after a fractional LP included) for strux eval and
 * predict. The counters are wall-clock and call counts, never part of the trajectory, so the
 * hook keeps no checkpoint state. */
#include "strux/driver.h"

#include <math.h>
#include <stdio.h>

struct strux_lp_hook {
    strux_comm *comm;       /* borrowed */
    const strux_task *task; /* borrowed */
    strux_lp_stats start;   /* the oracle counters at the start of the epoch */
};

static const char *const lp_columns[] = {"lp_free", "lp_candidates", "lp_ms", "lp_capped", NULL};

enum { N_FIELDS = 8 };

static void to_doubles(const strux_lp_stats *s, double *v)
{
    v[0] = (double)s->calls;
    v[1] = (double)s->no_lp;
    v[2] = (double)s->lps;
    v[3] = (double)s->ilps;
    v[4] = (double)s->capped;
    v[5] = s->candidates;
    v[6] = s->columns;
    v[7] = s->seconds;
}

/* The counters summed over ranks (counts stay exact in doubles below 2^53). Collective. */
static strux_status reduce(strux_comm *comm, const strux_lp_stats *mine, strux_lp_stats *out)
{
    double v[N_FIELDS];
    to_doubles(mine, v);
    STRUX_TRY(strux_comm_allreduce_sum(comm, v, N_FIELDS));
    *out = (strux_lp_stats){.calls = (int64_t)v[0],
                            .no_lp = (int64_t)v[1],
                            .lps = (int64_t)v[2],
                            .ilps = (int64_t)v[3],
                            .capped = (int64_t)v[4],
                            .candidates = v[5],
                            .columns = v[6],
                            .seconds = v[7]};
    return STRUX_OK;
}

static strux_status lp_before_epoch(void *ctx, strux_driver *d)
{
    (void)d;
    strux_lp_hook *h = ctx;
    strux_lp_stats predict;
    strux_task_lp_stats(h->task, &h->start, &predict);
    return STRUX_OK;
}

static strux_status lp_metrics(void *ctx, strux_driver *d, double *values)
{
    strux_lp_hook *h = ctx;
    strux_lp_stats now, predict, e, all;
    strux_task_lp_stats(h->task, &now, &predict);
    double a[N_FIELDS], b[N_FIELDS];
    to_doubles(&now, a);
    to_doubles(&h->start, b);
    e = (strux_lp_stats){.calls = now.calls - h->start.calls,
                         .no_lp = now.no_lp - h->start.no_lp,
                         .lps = now.lps - h->start.lps,
                         .ilps = now.ilps - h->start.ilps,
                         .capped = now.capped - h->start.capped,
                         .candidates = a[5] - b[5],
                         .columns = a[6] - b[6],
                         .seconds = a[7] - b[7]};
    STRUX_TRY(reduce(h->comm, &e, &all));
    values[0] = all.calls > 0 ? (double)all.no_lp / (double)all.calls : NAN;
    values[1] = all.calls > 0 ? all.candidates / (double)all.calls : NAN;
    values[2] = all.lps > 0 ? 1e3 * all.seconds / (double)all.lps : NAN;
    values[3] = (double)all.capped;
    if (all.capped > 0 && strux_comm_rank(h->comm) == 0)
        strux_log(STRUX_LOG_WARN,
                  "epoch %lld: %lld of %lld multi-label DAG answers came from a pruned LP over "
                  "task.lp_max_nodes, cut to the candidate leaves of largest bound that fit "
                  "(valid labels, not certified optimal)",
                  (long long)strux_driver_epoch(d), (long long)all.capped, (long long)all.calls);
    return STRUX_OK;
}

void strux_lp_hook_destroy(strux_lp_hook **h)
{
    strux_free(h);
}

strux_status strux_lp_hook_attach(strux_driver *d, strux_comm *comm, const strux_task *t,
                                  strux_lp_hook **out)
{
    *out = NULL;
    strux_lp_stats oracle, predict;
    if (!strux_task_lp_stats(t, &oracle, &predict)) return STRUX_OK;
    STRUX_TRY(strux_alloc(out, sizeof **out));
    (*out)->comm = comm;
    (*out)->task = t;
    (*out)->start = oracle;
    strux_driver_hook hook = {.name = "lp_counters",
                              .ctx = *out,
                              .columns = lp_columns,
                              .before_epoch = lp_before_epoch,
                              .metrics = lp_metrics};
    strux_status st = strux_driver_add_hook(d, &hook);
    if (st != STRUX_OK) strux_lp_hook_destroy(out);
    return st;
}

strux_status strux_lp_stats_predict_total(strux_comm *comm, const strux_task *t,
                                          strux_lp_stats *out, int *has)
{
    strux_lp_stats oracle, predict;
    *has = strux_task_lp_stats(t, &oracle, &predict);
    *out = (strux_lp_stats){0};
    if (!*has) return STRUX_OK;
    return reduce(comm, &predict, out);
}

void strux_lp_stats_format(const strux_lp_stats *s, char *buf, size_t n)
{
    double calls = s->calls > 0 ? (double)s->calls : 1, lps = s->lps > 0 ? (double)s->lps : 1;
    snprintf(buf, n,
             "\"lp_calls\": %lld, \"lp_free\": %.6f, \"lp_candidates\": %.4f, \"lp_solved\": %lld, "
             "\"lp_columns\": %.2f, \"lp_ilp\": %lld, \"lp_capped\": %lld, \"lp_ms\": %.4f",
             (long long)s->calls, (double)s->no_lp / calls, s->candidates / calls,
             (long long)s->lps, s->columns / lps, (long long)s->ilps, (long long)s->capped,
             1e3 * s->seconds / lps);
}
