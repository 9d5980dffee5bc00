/* cli/inspect.c - `strux inspect MODEL`: a human summary of a model file: what was trained, on
 * what shape, by which strux, the per-epoch training curve (with its test_* held-out columns),
 * and the resolved config. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void print_model(const char *path, const strux_model *m, const strux_model_info *in)
{
    printf("model        %s\n", path);
    printf("task         %s   surrogate %s (search %s)   solver %s\n", in->task, in->surrogate,
           in->search, in->solver);
    printf("weights      %d rows x %d features + %lld extra = %lld, stored as %s  "
           "(||w||^2 = %.6g)\n",
           strux_model_n_rows(m), strux_model_dim(m), (long long)strux_model_n_extra(m),
           (long long)strux_model_n_w(m), strux_precision_name(in->precision),
           strux_model_norm2(m));
    printf("labels       %d", in->n_labels);
    if (in->label_names) {
        printf(":");
        for (int32_t k = 0; k < in->n_labels && k < 16; k++)
            printf(" %s", in->label_names[k] ? in->label_names[k] : "?");
        if (in->n_labels > 16) printf(" ...");
    }
    const strux_tree_set *ts = &in->trees;
    if (ts->n_trees > 0)
        printf("\ntrees        n = %d spanning trees (%s, seed %lld), K = %lld, |E_u| = %d union "
               "edges",
               ts->n_trees, ts->sampler, (long long)ts->tree_seed, (long long)ts->kbest,
               ts->n_edges);
    const strux_rates_store *rs = &in->rates;
    if (rs->m > 0) {
        printf("\nrates        %d constraint(s), %lld MM step(s), v_max %g; randomised classifier: "
               "%d iterate(s), mu",
               rs->m, (long long)rs->mm_steps, rs->v_max, rs->n_mix);
        for (int32_t k = 0; k < rs->n_mix; k++)
            printf(" %.6g", rs->mix_mu[k]);
        for (int32_t k = 0; k < rs->n_defs; k++)
            printf("\n  dataset    %s = %s", rs->def_names[k], rs->def_texts[k]);
        printf("\n  objective  %s", rs->canonical[0]);
        for (int32_t j = 0; j < rs->m; j++)
            printf("\n  constraint %s = %s\n             canonical %s\n             v %.9g, "
                   "train value - bound %+.6g (deterministic), %+.6g (ramp, randomised)",
                   rs->names[j], rs->texts[j], rs->canonical[j + 1], rs->v[j], rs->train_value[j],
                   rs->train_ramp[j]);
    }
    printf("\ntrained      %s with strux %s (commit %s) on %d rank(s), seed %lld, %.2fs\n",
           in->created, in->version, in->git_commit, in->n_ranks, (long long)in->seed,
           in->wall_time_s);
    const strux_curve *c = &in->curve;
    printf("\ntraining curve (%lld epochs)\n", (long long)c->n_rows);
    int width[STRUX_CURVE_MAX_COLS]; /* 14, or wider for long names (test_* columns) */
    for (int k = 0; k < c->n_cols; k++) {
        width[k] = (int)strlen(c->names[k]) + 2 > 14 ? (int)strlen(c->names[k]) + 2 : 14;
        printf("%*s", width[k], c->names[k]);
    }
    printf("\n");
    for (int64_t r = 0; r < c->n_rows; r++) {
        for (int k = 0; k < c->n_cols; k++) {
            double v = c->v[r * c->n_cols + k];
            if (isnan(v))
                printf("%*s", width[k], "-");
            else
                printf("%*.6g", width[k], v);
        }
        printf("\n");
    }
    printf("\nconfig\n%s", in->config);
}

int strux_cmd_inspect(strux_comm *comm, int argc, char **argv)
{
    strux_status st = STRUX_OK;
    if (argc != 2)
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "usage: strux inspect MODEL");
    strux_model *m = NULL;
    strux_model_info info = {0};
    if (st == STRUX_OK && strux_comm_rank(comm) == 0) {
        st = strux_io_model_load(argv[1], &m, &info);
        if (st == STRUX_OK) print_model(argv[1], m, &info);
    }
    st = strux_comm_agree(comm, st);
    strux_model_destroy(&m);
    strux_model_info_free(&info);
    return st == STRUX_OK ? 0 : strux_cli_fail(comm, st);
}
