/* solvers/prune.c - DiSMEC's pruning between epochs (model.prune_every, Babbar & Schölkopf,
 * WSDM 2017, §3: weights below model.prune dropped) as a driver hook: every model.prune_every
 * epochs, after the epoch's certificate, the solver's iterate loses its weights with |w| <
 * model.prune (strux_solver_prune: the CoCoA+ engine's iterate, its view following) and the
 * primal objective is evaluated again, so the record shows what the pruning cost: pruned (the
 * weights dropped) and primal_pruned (J after it; J before is the epoch's primal, NaN when that
 * epoch was not certified). A dual solver's iterate is then no longer exactly w(α): the next
 * duality gaps compare the pruned iterate with the dual bound computed from it, not a
 * certificate of the unpruned problem (the log says so once). The export's pruning (at the
 * end, train.c) is separate and always applies. */
#include "strux/driver.h"
#include "strux/model.h"

#include <math.h>

struct strux_prune_hook {
    strux_solver *solver; /* borrowed */
    double threshold;     /* model.prune */
    int64_t every;        /* model.prune_every */
    double dropped, after; /* this epoch's record values (NaN between prunings) */
    int warned;
};

static const char *const prune_columns[] = {"pruned", "primal_pruned", NULL};

static strux_status prune_after_epoch(void *ctx, strux_driver *d, int *stop)
{
    (void)stop;
    strux_prune_hook *p = ctx;
    p->dropped = p->after = NAN;
    int64_t e = strux_driver_epoch(d);
    if (e % p->every != 0) return STRUX_OK;
    int64_t dropped = 0;
    STRUX_TRY(strux_solver_prune(p->solver, p->threshold, &dropped));
    strux_certificate c;
    STRUX_TRY(strux_solver_certificate(p->solver, &c));
    p->dropped = (double)dropped;
    p->after = c.primal;
    strux_log(STRUX_LOG_INFO,
              "model.prune_every: after epoch %lld dropped %lld weights below %g: primal %.9g "
              "before, %.9g after",
              (long long)e, (long long)dropped, p->threshold,
              strux_driver_last_certificate(d)->primal, c.primal);
    if (!p->warned && (strux_solver_caps(p->solver) & STRUX_CAP_DUAL)) {
        strux_log(STRUX_LOG_WARN,
                  "model.prune_every: the pruned iterate is no longer the dual's w(α); the "
                  "duality gaps from here on are not certificates of the unpruned problem");
        p->warned = 1;
    }
    return STRUX_OK;
}

static strux_status prune_metrics(void *ctx, strux_driver *d, double *values)
{
    (void)d;
    const strux_prune_hook *p = ctx;
    values[0] = p->dropped;
    values[1] = p->after;
    return STRUX_OK;
}

strux_status strux_prune_hook_attach(strux_driver *d, strux_solver *s, double threshold,
                                     int64_t every, strux_prune_hook **out)
{
    *out = NULL;
    if (every <= 0 || !(threshold > 0)) return STRUX_OK;
    STRUX_CHECK(strux_solver_caps(s) & STRUX_CAP_PRUNE, STRUX_ERR_CONFIG,
                "model.prune_every needs a solver with flag prune; solver.type = %s lacks it",
                strux_solver_name(s));
    STRUX_TRY(strux_alloc(out, sizeof **out));
    strux_prune_hook *p = *out;
    p->solver = s;
    p->threshold = threshold;
    p->every = every;
    p->dropped = p->after = NAN;
    strux_driver_hook hook = {.name = "prune",
                              .ctx = p,
                              .columns = prune_columns,
                              .after_epoch = prune_after_epoch,
                              .metrics = prune_metrics};
    strux_status st = strux_driver_add_hook(d, &hook);
    if (st != STRUX_OK) strux_free(out);
    return st;
}

void strux_prune_hook_destroy(strux_prune_hook **p)
{
    strux_free(p);
}
