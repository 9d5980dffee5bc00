/* cli/rates_cli.c - the config's [datasets], [constraints] and [rates] turned into a
 * rate-constrained problem (strux/rates.h, issue 15), checked before any data is read: the task
 * must be binary, the solver sdca with margin rescaling, the bias regularised or free (Alg. 3). */
#include "cli.h"

#include <string.h>

static strux_status on_dataset(void *ctx, const char *name, const char *value, const char *origin)
{
    return strux_rates_define(ctx, name, value, origin);
}

static strux_status on_constraint(void *ctx, const char *name, const char *value,
                                  const char *origin)
{
    return strux_rates_constrain(ctx, name, value, origin);
}

strux_status strux_cli_rates_parse(const strux_config *c, const strux_run_options *o,
                                   strux_rates **out)
{
    strux_rates *r = NULL;
    *out = NULL;
    STRUX_TRY(strux_rates_create(&o->rates, &r));
    strux_status st = strux_config_each(c, "datasets", on_dataset, r);
    if (st == STRUX_OK) st = strux_config_each(c, "constraints", on_constraint, r);
    if (st == STRUX_OK && strux_rates_n_constraints(r) == 0) { /* an ordinary run */
        strux_rates_destroy(&r);
        return STRUX_OK;
    }
    if (st == STRUX_OK && strcmp(o->task.type, "binary") != 0)
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "[constraints] needs task.type = binary (task.type is %s)",
                             o->task.type);
    if (st == STRUX_OK && strcmp(o->solver.type, "sdca") != 0)
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "[constraints] needs solver.type = sdca (the inner weighted SVMs are "
                             "solved by SDCA; solver.type is %s)",
                             o->solver.type);
    if (st == STRUX_OK && strcmp(o->solver.dual_blocks, "sparse") == 0)
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "[constraints] needs the inner SVM's duals as coefficients: "
                             "solver.dual_blocks = auto or dense");
    if (st == STRUX_OK && strcmp(o->surrogate.type, "margin") != 0)
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "[constraints] needs surrogate.type = margin (surrogate.type is %s)",
                             o->surrogate.type);
    if (st == STRUX_OK && o->solver.weighted_average)
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "[constraints] needs solver.weighted_average = false");
    if (st == STRUX_OK) st = strux_rates_check(r);
    if (st != STRUX_OK) {
        strux_rates_destroy(&r);
        return st;
    }
    *out = r;
    return STRUX_OK;
}
