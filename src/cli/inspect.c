/* cli/inspect.c - `strux inspect MODEL`: a human summary of a model file: what was trained, on
 * what shape, by which strux, the per-epoch training curve (with its test_* held-out columns),
 * and the resolved config. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Non-zero weights per row (min / median / max) and in total. */
static void print_nonzeros(const strux_model *m)
{
    int32_t K = strux_model_n_rows(m), *nz = NULL;
    if (K == 0 || strux_alloc_array(&nz, (size_t)K, sizeof *nz) != STRUX_OK) return;
    int64_t total = 0;
    for (int32_t k = 0; k < K; k++)
        total += nz[k] = strux_model_row_nnz(m, k);
    qsort(nz, (size_t)K, sizeof *nz, cmp_i32);
    double med = K % 2 ? nz[K / 2] : 0.5 * ((double)nz[K / 2 - 1] + nz[K / 2]);
    int64_t n_v = (int64_t)K * strux_model_dim(m);
    printf("non-zeros    %lld of %lld row weights (%.2f%%); per row min %d, median %g, max %d\n",
           (long long)total, (long long)n_v, n_v ? 100.0 * (double)total / (double)n_v : 0.0,
           nz[0], med, nz[K - 1]);
    strux_free(&nz);
}

static void print_model(const char *path, const strux_model *m, const strux_model_info *in)
{
    printf("model        %s\n", path);
    printf("task         %s   surrogate %s (search %s)   solver %s\n", in->task, in->surrogate,
           in->search, in->solver);
    printf("weights      %d rows x %d features + %lld extra = %lld, stored as %s%s  "
           "(||w||^2 = %.6g)\n",
           strux_model_n_rows(m), strux_model_dim(m), (long long)strux_model_n_extra(m),
           (long long)strux_model_n_w(m), strux_precision_name(in->precision),
           in->weights_csr ? " CSR (/weights_csr)" : "",
           strux_model_norm2(m));
    print_nonzeros(m);
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
    const strux_hier_stored *hs = &in->hier;
    if (hs->n_nodes > 0) {
        int32_t n_virtual = 0;
        for (int32_t k = 0; k < hs->n_nodes; k++)
            n_virtual += hs->node_id[k] < 0;
        printf("\nhierarchy    %s, %d nodes (%d virtual), %lld edges; model %s, %s-label",
               hs->kind, hs->n_nodes, n_virtual, (long long)hs->parent_ptr[hs->n_nodes], hs->model,
               hs->label_space);
        printf("\nalpha       ");
        for (int32_t k = 0; k < hs->n_nodes && k < 12; k++)
            printf(" %lld:%.4g", (long long)hs->node_id[k], hs->alpha[k]);
        if (hs->n_nodes > 12) printf(" ... (%d more)", hs->n_nodes - 12);
    }
    const strux_m3l_info *m3 = &in->m3l;
    if (m3->n_labels > 0)
        printf("\nm3l prior    %s%s%s, %d x %d, eigenvalues [%.6g, %.6g], shrink %g (from %s); "
               "lambda %g = the paper's C %.6g",
               m3->prior, m3->empirical[0] ? " " : "", m3->empirical, (int)m3->n_labels,
               (int)m3->n_labels, m3->eig_min, m3->eig_max, m3->shrink, m3->source, m3->lambda,
               m3->C_paper);
    const strux_kexp *e = &m3->kexp;
    if (e->n_labels > 0) {
        double bound = 0; /* α at the box's upper end C_i = 1/(λn) of LIBLINEAR's units */
        int64_t at_bound = 0;
        for (int64_t j = 0; j < e->n_sv * e->n_labels; j++)
            bound = e->alpha[j] > bound ? e->alpha[j] : bound;
        for (int64_t j = 0; j < e->n_sv * e->n_labels; j++)
            at_bound += e->alpha[j] == bound && bound > 0;
        printf("\nm3l kernel   %s (gamma %g, degree %d, coef0 %g, bias² %g); %lld support vectors "
               "(%lld non-zeros), largest alpha %.6g held by %lld (example, label) pairs",
               strux_kernel_name(e->kernel.type), e->kernel.gamma, (int)e->kernel.degree,
               e->kernel.coef0, e->kernel.b0 * e->kernel.b0, (long long)e->n_sv,
               (long long)e->sv.ptr[e->n_sv], bound, (long long)at_bound);
    }
    const strux_rates_store *rs = &in->rates;
    if (rs->m > 0) {
        printf("\nrates        %d constraint(s), %lld MM step(s), v_max %g; randomised classifier: "
               "%d iterate(s), mu",
               rs->m, (long long)rs->mm_steps, rs->v_max, rs->n_mix);
        for (int32_t k = 0; k < rs->n_mix; k++)
            printf(" %.6g", rs->mix_mu[k]);
        if (rs->n_violated)
            printf("\n  violated   %d constraint(s) still violated when training ended "
                   "(rates.on_violation = keep)",
                   rs->n_violated);
        for (int32_t k = 0; k < rs->n_defs; k++)
            printf("\n  dataset    %s = %s", rs->def_names[k], rs->def_texts[k]);
        for (int32_t k = 0; k < rs->n_base; k++)
            printf("\n  baseline   %s (%s)", rs->base_paths[k],
                   rs->base_is_model[k] ? "binary model, weights stored"
                                        : "training predictions, not stored");
        printf("\n  objective  %s", rs->canonical[0]);
        for (int32_t j = 0; j < rs->m; j++)
            printf("\n  constraint %s = %s\n             canonical %s\n             v %.9g, "
                   "train value - bound %+.6g (deterministic), %+.6g (ramp, randomised); test "
                   "value - bound %+.6g (deterministic)",
                   rs->names[j], rs->texts[j], rs->canonical[j + 1], rs->v[j], rs->train_value[j],
                   rs->train_ramp[j], rs->test_value[j]);
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
