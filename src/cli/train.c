/* cli/train.c - `strux train CONFIG [--set k=v ...]`: the driver of a training run
 * (ARCHITECTURE.md §1): config → sharded data → task, model, search, solver → epochs with
 * certificates, metrics and log lines → HDF5 model (rank 0, atomically) → held-out evaluation.
 * Every step that can fail on one rank is followed by an error agreement, so all ranks stop
 * together with the failing rank's message. */
#include "cli.h"

#include "strux_git.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Columns of the training curve (model file /training and the metrics log). */
static const char *const curve_columns[] = {
    "epoch", "primal", "loss", "dual", "gap", "time_s", "comm_s", "oracle_calls", NULL,
};
#define N_CURVE_BASE ((int)(sizeof curve_columns / sizeof *curve_columns) - 1)

typedef struct train_run {
    strux_comm *comm;
    strux_config *config;
    strux_run_options opt;
    strux_dataset *train, *test;
    strux_task *task;
    strux_model *model;
    strux_search *search;
    strux_solver *solver;
    strux_metrics *metrics;
    strux_model_info info;
    double *col_scale; /* data.scale factors per feature column, or NULL */
    strux_progress *progress; /* epoch lines, progress bar, held-out scoring (progress.c) */
} train_run;

/* The value of "--set X" / "--set=X" at argv[*k] (advancing *k), or NULL. */
static const char *set_argument(int argc, char **argv, int *k)
{
    if (strncmp(argv[*k], "--set=", 6) == 0) return argv[*k] + 6;
    if (strcmp(argv[*k], "--set") != 0) return NULL;
    return *k + 1 < argc ? argv[++*k] : "";
}

/* Flags and the config path first; then the file's entries, then the overrides in order. */
static strux_status parse_args(train_run *r, int argc, char **argv)
{
    const char *config_path = NULL;
    for (int k = 1; k < argc; k++) {
        if (set_argument(argc, argv, &k)) continue;
        STRUX_CHECK(argv[k][0] != '-', STRUX_ERR_CONFIG,
                    "train: unknown option '%s' (see `strux help train`)", argv[k]);
        STRUX_CHECK(!config_path, STRUX_ERR_CONFIG,
                    "train: more than one config file ('%s', '%s')", config_path, argv[k]);
        config_path = argv[k];
    }
    STRUX_CHECK(config_path, STRUX_ERR_CONFIG,
                "usage: strux train CONFIG [--set section.key=value ...]");
    STRUX_TRY(strux_config_create(&r->config));
    STRUX_TRY(strux_config_read_file(r->config, config_path));
    for (int k = 1; k < argc; k++) {
        const char *assignment = set_argument(argc, argv, &k);
        if (assignment) STRUX_TRY(strux_config_set(r->config, assignment));
    }
    STRUX_TRY(strux_config_resolve(r->config, &r->opt));
    STRUX_CHECK(r->opt.data.train[0], STRUX_ERR_CONFIG,
                "%s: data.train is not set: the training data file is required", config_path);
    return STRUX_OK;
}

/* data.scale = maxabs: x_ij ← x_ij / max_i |x_ij| over all ranks' training rows. */
static strux_status scale_features(train_run *r)
{
    int32_t dim = r->train->dim;
    STRUX_TRY(strux_alloc_array(&r->col_scale, (size_t)dim, sizeof *r->col_scale));
    strux_dataset_col_maxabs(r->train, r->col_scale);
    STRUX_TRY(strux_comm_allreduce_max(r->comm, r->col_scale, dim));
    for (int32_t j = 0; j < dim; j++)
        r->col_scale[j] = r->col_scale[j] > 0 && j != r->train->bias_col ? 1 / r->col_scale[j] : 1;
    strux_dataset_scale_cols(r->train, r->col_scale);
    return STRUX_OK;
}

/* Fold the feature scaling into the weights: (w ∘ f)·x = w·(f ∘ x), so the exported model scores
 * unscaled data. */
static void fold_scaling(train_run *r)
{
    if (!r->col_scale) return;
    strux_model *m = r->model;
    for (int32_t k = 0; k < m->n_rows; k++)
        for (int32_t j = 0; j < m->dim; j++) strux_model_row(m, k)[j] *= r->col_scale[j];
}

static strux_status load_training_data(train_run *r)
{
    strux_read_options ro = {
        .rank = strux_comm_rank(r->comm),
        .n_ranks = strux_comm_size(r->comm),
        .dim = (int32_t)r->opt.data.dim,
        .n_labels = (int32_t)r->opt.data.n_labels,
        .drop_above_dim = 0,
        .bias = r->opt.data.bias,
    };
    double t0 = strux_time_now();
    STRUX_TRY(strux_comm_agree(r->comm, strux_io_dataset_load(r->opt.data.train, &ro, &r->train)));
    if (strcmp(r->opt.data.scale, "maxabs") == 0) STRUX_TRY(scale_features(r));
    int64_t nnz = r->train->x.ptr[r->train->x.n_rows];
    STRUX_TRY(strux_comm_allreduce_sum_i64(r->comm, &nnz, 1));
    strux_log(STRUX_LOG_INFO, "train data %s: %lld examples, %d features%s, %d labels, %lld "
              "non-zeros, %d rank(s), read in %.2fs",
              r->opt.data.train, (long long)r->train->n_global, r->train->dim,
              r->train->bias_col >= 0 ? " (bias included)" : "", r->train->n_labels,
              (long long)nnz, strux_comm_size(r->comm), strux_time_now() - t0);
    return STRUX_OK;
}

/* data.test, read once: scored during training (progress.c) and after it. */
static strux_status load_test_data(train_run *r)
{
    if (!r->opt.data.test[0]) return STRUX_OK;
    strux_read_options ro =
        strux_cli_heldout_read_options(r->comm, &r->opt, r->model, r->train->n_labels);
    STRUX_TRY(strux_comm_agree(r->comm, strux_io_dataset_load(r->opt.data.test, &ro, &r->test)));
    STRUX_TRY(strux_cli_report_dropped(r->comm, r->test));
    return strux_comm_agree(r->comm, strux_task_check(r->task, r->test));
}

static strux_status set_up(train_run *r)
{
    strux_status st = strux_task_create(&r->opt.task, &r->task);
    if (st == STRUX_OK) st = strux_task_check(r->task, r->train);
    int32_t n_rows = 0;
    int64_t n_extra = 0;
    if (st == STRUX_OK) st = strux_task_model_shape(r->task, r->train, &n_rows, &n_extra);
    if (st == STRUX_OK) st = strux_model_create(n_rows, r->train->dim, n_extra, &r->model);
    if (st == STRUX_OK) st = strux_search_create(&r->opt.surrogate, r->task, r->train, &r->search);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    STRUX_TRY(strux_solver_create(&r->opt.solver, r->task, r->search, r->train, r->model, r->comm,
                                  &r->solver));
    STRUX_TRY(load_test_data(r));
    STRUX_TRY(strux_comm_agree(r->comm, strux_progress_create(r->comm, &r->opt, r->task, r->model,
                                                              r->col_scale, r->test,
                                                              &r->progress)));
    strux_solver_set_progress(r->solver, strux_progress_step, r->progress);
    st = STRUX_OK;
    if (strux_comm_rank(r->comm) == 0 && r->opt.output.metrics[0])
        st = strux_metrics_open(r->opt.output.metrics, 0, &r->metrics);
    if (st == STRUX_OK)
        st = strux_curve_init(&r->info.curve, strux_progress_columns(r->progress, curve_columns));
    STRUX_TRY(strux_comm_agree(r->comm, st));
    strux_log(STRUX_LOG_INFO, "task %s, surrogate %s (search %s), solver %s, lambda %g, %lld "
              "weights",
              strux_task_name(r->task), strux_surrogate_name(r->search),
              strux_search_name(r->search), strux_solver_name(r->solver), r->opt.solver.lambda,
              (long long)r->model->n_w);
    return STRUX_OK;
}

static strux_status run_epochs(train_run *r, double t_start)
{
    int64_t calls = 0;
    double train_s = 0;
    for (int64_t e = 1; e <= r->opt.solver.epochs; e++) {
        strux_progress_epoch_begin(r->progress, e);
        double t0 = strux_time_now();
        int64_t c0 = strux_task_oracle_calls(r->task);
        STRUX_TRY(strux_solver_epoch(r->solver));
        int64_t epoch_calls = strux_task_oracle_calls(r->task) - c0;
        train_s += strux_time_now() - t0;
        strux_certificate cert;
        STRUX_TRY(strux_solver_certificate(r->solver, &cert));
        STRUX_TRY(strux_comm_allreduce_sum_i64(r->comm, &epoch_calls, 1));
        calls += epoch_calls;
        double comm_s = strux_comm_seconds(r->comm);
        STRUX_TRY(strux_comm_allreduce_max(r->comm, &comm_s, 1));
        double row[STRUX_CURVE_MAX_COLS] = {(double)e, cert.primal, cert.loss, cert.dual,
                                            cert.gap,   train_s,     comm_s,    (double)calls};
        STRUX_TRY(strux_progress_epoch_end(r->progress, e, &cert, train_s, row + N_CURVE_BASE));
        STRUX_TRY(strux_curve_append(&r->info.curve, row));
        strux_status st = r->metrics ? strux_metrics_write_row(r->metrics, &r->info.curve)
                                     : STRUX_OK;
        STRUX_TRY(strux_comm_agree(r->comm, st));
    }
    r->info.wall_time_s = strux_time_now() - t_start;
    return STRUX_OK;
}

/* Provenance and names for the model file (rank 0). */
static strux_status fill_info(train_run *r)
{
    strux_model_info *in = &r->info;
    snprintf(in->task, sizeof in->task, "%s", strux_task_name(r->task));
    snprintf(in->surrogate, sizeof in->surrogate, "%s", strux_surrogate_name(r->search));
    snprintf(in->search, sizeof in->search, "%s", strux_search_name(r->search));
    snprintf(in->solver, sizeof in->solver, "%s", strux_solver_name(r->solver));
    snprintf(in->version, sizeof in->version, "%s", STRUX_VERSION);
    snprintf(in->git_commit, sizeof in->git_commit, "%s", STRUX_GIT_COMMIT);
    time_t now = time(NULL);
    strftime(in->created, sizeof in->created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    in->n_labels = r->train->n_labels;
    in->n_ranks = strux_comm_size(r->comm);
    in->seed = r->opt.solver.seed;
    STRUX_TRY(strux_config_format(&r->opt, &in->config));
    if (r->opt.data.label_names[0])
        STRUX_TRY(strux_label_names_read(r->opt.data.label_names, in->n_labels,
                                         &in->label_names));
    return STRUX_OK;
}

static strux_status save_model(train_run *r)
{
    strux_status st = STRUX_OK;
    fold_scaling(r);
    if (strux_comm_rank(r->comm) == 0) {
        st = fill_info(r);
        if (st == STRUX_OK) st = strux_io_model_save(r->opt.output.model, r->model, &r->info);
    }
    STRUX_TRY(strux_comm_agree(r->comm, st));
    strux_log(STRUX_LOG_INFO, "model written to %s (%.2fs of training)", r->opt.output.model,
              r->info.wall_time_s);
    return STRUX_OK;
}

static strux_status evaluate_test(train_run *r)
{
    if (!r->test) return STRUX_OK;
    char json[8192];
    STRUX_TRY(strux_cli_evaluate(r->comm, r->task, r->model, r->test, NULL, json, sizeof json));
    if (strux_comm_rank(r->comm) == 0) {
        printf("%s\n", json);
        fflush(stdout);
    }
    return STRUX_OK;
}

int strux_cmd_train(strux_comm *comm, int argc, char **argv)
{
    train_run r = {.comm = comm};
    double t_start = strux_time_now();
    strux_status st = strux_comm_agree(comm, parse_args(&r, argc, argv));
    if (st == STRUX_OK) st = load_training_data(&r);
    if (st == STRUX_OK) st = set_up(&r);
    if (st == STRUX_OK) st = run_epochs(&r, t_start);
    if (st == STRUX_OK) st = save_model(&r);
    if (st == STRUX_OK) st = evaluate_test(&r);
    int rc = st == STRUX_OK ? 0 : strux_cli_fail(comm, st);
    strux_progress_destroy(&r.progress);
    strux_metrics_close(&r.metrics);
    strux_model_info_free(&r.info);
    strux_solver_destroy(&r.solver);
    strux_search_destroy(&r.search);
    strux_model_destroy(&r.model);
    strux_task_destroy(&r.task);
    strux_dataset_destroy(&r.train);
    strux_dataset_destroy(&r.test);
    strux_config_destroy(&r.config);
    strux_free(&r.col_scale);
    return rc;
}
