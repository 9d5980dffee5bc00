/* cli/train.c - `strux train [CONFIG] [--resume CHECKPOINT] [--set k=v ...]`: the driver of a
 * training run (ARCHITECTURE.md §1): config → sharded data → task, model, search, solver → epochs
 * with certificates, metrics and log lines, stopping at solver.epochs or when the duality gap
 * reaches solver.tol → HDF5 model (rank 0, atomically) → held-out evaluation. Checkpoints
 * (io/checkpoint.c) are written every output.checkpoint_every epochs and when SIGTERM or SIGUSR1
 * arrives: the flag is agreed over the ranks after each epoch, the checkpoint written, and the
 * run ends with exit status 0 and the command that resumes it. --resume restores the model, the
 * curve, every rank's solver and search state and the epoch, so the resumed run continues the
 * uninterrupted run's trajectory exactly. Every step that can fail on one rank is followed by an
 * error agreement, so all ranks stop together with the failing rank's message. */
#include "cli.h"

#include "strux_git.h"

#include <math.h>
#include <signal.h>
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
    double *col_scale;        /* data.scale factors per feature column, or NULL */
    strux_progress *progress; /* epoch lines, progress bar, held-out scoring (progress.c) */
    const char *resume;       /* --resume checkpoint, or NULL */
    char checkpoint[STRUX_OPT_STR + 16]; /* where checkpoints go */
    int64_t epoch0;                      /* epochs done before this run (resume) */
    int64_t calls;                       /* oracle calls so far, all ranks */
    double train_s;                      /* training time so far */
    double wall0_s;                      /* wall time of the runs before this one (resume) */
} train_run;

/* The signal that asked the run to stop (SIGTERM, SIGUSR1), 0 if none. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
}

/* Install (on = 1) or restore (on = 0) the handlers of the stop signals. */
static void catch_stop_signals(int on)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on ? on_stop_signal : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    stop_signal = 0;
}

/* The value of "--set X" / "--set=X" at argv[*k] (advancing *k), or NULL. */
static const char *set_argument(int argc, char **argv, int *k)
{
    if (strncmp(argv[*k], "--set=", 6) == 0) return argv[*k] + 6;
    if (strcmp(argv[*k], "--set") != 0) return NULL;
    return *k + 1 < argc ? argv[++*k] : "";
}

/* The stored config of a checkpoint, as the entries of c. */
static strux_status read_stored_config(strux_config *c, const char *path)
{
    strux_model *m = NULL;
    strux_model_info info;
    STRUX_TRY(strux_io_model_load(path, &m, &info));
    char origin[STRUX_OPT_STR + 32];
    snprintf(origin, sizeof origin, "%s (stored config)", path);
    strux_status st = strux_config_read_stored(c, info.config, origin);
    strux_model_destroy(&m);
    strux_model_info_free(&info);
    return st;
}

/* Flags and the config path first; then the file's entries (or, when resuming without a config
 * file, the checkpoint's stored config), then the overrides in order. */
static strux_status parse_args(train_run *r, int argc, char **argv)
{
    const char *config_path = NULL;
    for (int k = 1; k < argc; k++) {
        if (set_argument(argc, argv, &k)) continue;
        if (strcmp(argv[k], "--resume") == 0) {
            STRUX_CHECK(k + 1 < argc, STRUX_ERR_CONFIG, "train: --resume needs a checkpoint file");
            r->resume = argv[++k];
            continue;
        }
        STRUX_CHECK(argv[k][0] != '-', STRUX_ERR_CONFIG,
                    "train: unknown option '%s' (see `strux help train`)", argv[k]);
        STRUX_CHECK(!config_path, STRUX_ERR_CONFIG, "train: more than one config file ('%s', '%s')",
                    config_path, argv[k]);
        config_path = argv[k];
    }
    STRUX_CHECK(config_path || r->resume, STRUX_ERR_CONFIG,
                "usage: strux train CONFIG [--resume CHECKPOINT] [--set section.key=value ...]");
    STRUX_TRY(strux_config_create(&r->config));
    if (config_path)
        STRUX_TRY(strux_config_read_file(r->config, config_path));
    else
        STRUX_TRY(read_stored_config(r->config, r->resume));
    for (int k = 1; k < argc; k++) {
        const char *assignment = set_argument(argc, argv, &k);
        if (assignment) STRUX_TRY(strux_config_set(r->config, assignment));
    }
    STRUX_TRY(strux_config_resolve(r->config, &r->opt));
    STRUX_CHECK(r->opt.data.train[0], STRUX_ERR_CONFIG,
                "%s: data.train is not set: the training data file is required",
                config_path ? config_path : r->resume);
    const strux_output_options *out = &r->opt.output;
    if (out->checkpoint[0]) {
        snprintf(r->checkpoint, sizeof r->checkpoint, "%s", out->checkpoint);
    } else {
        size_t len = strlen(out->model);
        int h5 = len > 3 && strcmp(out->model + len - 3, ".h5") == 0;
        snprintf(r->checkpoint, sizeof r->checkpoint, "%.*s.ckpt.h5", (int)(h5 ? len - 3 : len),
                 out->model);
    }
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

/* The exported weights: the feature scaling folded in, (w ∘ f)·x = w·(f ∘ x), so the model
 * scores unscaled data. dst may be r->model itself (at the end of training). */
static void export_weights(const train_run *r, strux_model *dst)
{
    const strux_model *m = r->model;
    if (dst != m) memcpy(dst->w, m->w, (size_t)m->n_w * sizeof *m->w);
    if (!r->col_scale) return;
    for (int32_t k = 0; k < dst->n_rows; k++)
        for (int32_t j = 0; j < dst->dim; j++)
            strux_model_row(dst, k)[j] *= r->col_scale[j];
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
    strux_log(STRUX_LOG_INFO,
              "train data %s: %lld examples, %d features%s, %d labels, %lld "
              "non-zeros, %d rank(s), read in %.2fs",
              r->opt.data.train, (long long)r->train->n_global, r->train->dim,
              r->train->bias_col >= 0 ? " (bias included)" : "", r->train->n_labels, (long long)nnz,
              strux_comm_size(r->comm), strux_time_now() - t0);
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

/* Provenance and names for the model file (rank 0, once). */
static strux_status fill_info(train_run *r)
{
    strux_model_info *in = &r->info;
    snprintf(in->task, sizeof in->task, "%s", strux_task_name(r->task));
    snprintf(in->surrogate, sizeof in->surrogate, "%s", strux_surrogate_name(r->search));
    snprintf(in->search, sizeof in->search, "%s", strux_search_name(r->search));
    snprintf(in->solver, sizeof in->solver, "%s", strux_solver_name(r->solver));
    snprintf(in->version, sizeof in->version, "%s", STRUX_VERSION);
    snprintf(in->git_commit, sizeof in->git_commit, "%s", STRUX_GIT_COMMIT);
    in->n_labels = r->train->n_labels;
    in->n_ranks = strux_comm_size(r->comm);
    in->seed = r->opt.solver.seed;
    STRUX_TRY(strux_config_format(&r->opt, &in->config));
    if (r->opt.data.label_names[0])
        STRUX_TRY(strux_label_names_read(r->opt.data.label_names, in->n_labels, &in->label_names));
    return STRUX_OK;
}

/* The time of writing and the wall time so far, before a model or checkpoint is written. */
static void stamp_info(train_run *r, double t_start)
{
    time_t now = time(NULL);
    strftime(r->info.created, sizeof r->info.created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    r->info.wall_time_s = r->wall0_s + strux_time_now() - t_start;
}

/* --resume: the checkpoint's curve, weights (training space), position and this rank's solver
 * and search state. The run must match the one that wrote it: same task, solver, model shape,
 * rank count, data shard. Collective. */
static strux_status restore(train_run *r)
{
    strux_model *m = NULL;
    strux_model_info info;
    strux_checkpoint_info ck;
    strux_blob state = {0};
    strux_status st = strux_io_model_load(r->resume, &m, &info);
    if (st == STRUX_OK && (strcmp(info.task, strux_task_name(r->task)) != 0 ||
                           strcmp(info.solver, strux_solver_name(r->solver)) != 0))
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "%s: a checkpoint of task %s with solver %s; this run has task %s "
                             "with solver %s",
                             r->resume, info.task, info.solver, strux_task_name(r->task),
                             strux_solver_name(r->solver));
    if (st == STRUX_OK && info.curve.n_cols != r->info.curve.n_cols)
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "%s: its training curve has %d columns, this run's %d (data.test "
                             "differs?)",
                             r->resume, info.curve.n_cols, r->info.curve.n_cols);
    if (st == STRUX_OK)
        st = strux_io_checkpoint_read(r->resume, strux_comm_rank(r->comm), &ck, r->model, &state);
    if (st == STRUX_OK && ck.n_ranks != strux_comm_size(r->comm))
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "%s: written by %d rank(s); resume it with the same number of "
                             "ranks (mpirun -np %d), this run has %d",
                             r->resume, ck.n_ranks, ck.n_ranks, strux_comm_size(r->comm));
    if (st == STRUX_OK) st = strux_solver_load(r->solver, &state);
    if (st == STRUX_OK) st = strux_search_load(r->search, &state);
    if (st == STRUX_OK && state.pos != state.n)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: %zu bytes of rank %d's state left unread (written by another "
                             "strux or with other options)",
                             r->resume, state.n - state.pos, strux_comm_rank(r->comm));
    if (st == STRUX_OK) {
        strux_curve_free(&r->info.curve);
        r->info.curve = info.curve;
        info.curve = (strux_curve){0};
        r->epoch0 = ck.epoch;
        r->calls = ck.oracle_calls;
        r->train_s = ck.train_s;
        r->wall0_s = info.wall_time_s;
    }
    strux_blob_free(&state);
    strux_model_destroy(&m);
    strux_model_info_free(&info);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    strux_log(STRUX_LOG_INFO, "resumed from %s after epoch %lld", r->resume, (long long)r->epoch0);
    return STRUX_OK;
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
    STRUX_TRY(
        strux_comm_agree(r->comm, strux_progress_create(r->comm, &r->opt, r->task, r->model,
                                                        r->col_scale, r->test, &r->progress)));
    strux_solver_set_progress(r->solver, strux_progress_step, r->progress);
    st = strux_curve_init(&r->info.curve, strux_progress_columns(r->progress, curve_columns));
    if (st == STRUX_OK && strux_comm_rank(r->comm) == 0) st = fill_info(r);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    if (r->resume) STRUX_TRY(restore(r));
    st = STRUX_OK;
    if (strux_comm_rank(r->comm) == 0 && r->opt.output.metrics[0]) {
        st = strux_metrics_open(r->opt.output.metrics, 0, &r->metrics);
        if (st == STRUX_OK) st = strux_metrics_write_all(r->metrics, &r->info.curve);
    }
    STRUX_TRY(strux_comm_agree(r->comm, st));
    strux_log(STRUX_LOG_INFO,
              "task %s, surrogate %s (search %s), solver %s, lambda %g, %lld "
              "weights",
              strux_task_name(r->task), strux_surrogate_name(r->search),
              strux_search_name(r->search), strux_solver_name(r->solver), r->opt.solver.lambda,
              (long long)r->model->n_w);
    return STRUX_OK;
}

/* Hands each rank's state to the checkpoint writer on rank 0 (strux_comm_collect's sink). */
static strux_status add_rank_state(void *ctx, int rank, const void *data, size_t n)
{
    return strux_io_checkpoint_add(ctx, rank, data, n);
}

/* Write the checkpoint of the run after epoch e. Collective. */
static strux_status write_checkpoint(train_run *r, int64_t e, double t_start)
{
    strux_blob state = {0};
    strux_model *exported = NULL;
    strux_checkpoint_writer *w = NULL;
    strux_status st = strux_solver_save(r->solver, &state);
    if (st == STRUX_OK) st = strux_search_save(r->search, &state);
    if (st == STRUX_OK && strux_comm_rank(r->comm) == 0) {
        const strux_model *m = r->model;
        strux_checkpoint_info ck = {.epoch = e,
                                    .n_ranks = strux_comm_size(r->comm),
                                    .train_s = r->train_s,
                                    .oracle_calls = r->calls};
        st = strux_model_create(m->n_rows, m->dim, m->n_extra, &exported);
        if (st == STRUX_OK) {
            export_weights(r, exported);
            stamp_info(r, t_start);
            st = strux_io_checkpoint_begin(r->checkpoint, exported, &r->info, m, &ck, &w);
        }
    }
    st = strux_comm_agree(r->comm, st);
    if (st == STRUX_OK) st = strux_comm_collect(r->comm, state.data, state.n, add_rank_state, w);
    if (strux_comm_rank(r->comm) == 0) st = strux_io_checkpoint_end(&w, st);
    strux_model_destroy(&exported);
    strux_blob_free(&state);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    strux_log(STRUX_LOG_INFO, "checkpoint after epoch %lld written to %s", (long long)e,
              r->checkpoint);
    return STRUX_OK;
}

/* Did any rank receive a stop signal? Collective. */
static strux_status stop_requested(train_run *r, int *sig)
{
    double v = stop_signal;
    STRUX_TRY(strux_comm_allreduce_max(r->comm, &v, 1));
    *sig = (int)v;
    return STRUX_OK;
}

static strux_status run_epochs(train_run *r, double t_start)
{
    const strux_solver_options *so = &r->opt.solver;
    for (int64_t e = r->epoch0 + 1; e <= so->epochs; e++) {
        strux_progress_epoch_begin(r->progress, e);
        double t0 = strux_time_now();
        int64_t c0 = strux_task_oracle_calls(r->task);
        STRUX_TRY(strux_solver_epoch(r->solver));
        int64_t epoch_calls = strux_task_oracle_calls(r->task) - c0;
        r->train_s += strux_time_now() - t0;
        strux_certificate cert = {NAN, NAN, NAN, NAN};
        int64_t every = so->certify_every;
        if (e == so->epochs || (every > 0 && e % every == 0))
            STRUX_TRY(strux_solver_certificate(r->solver, &cert));
        STRUX_TRY(strux_comm_allreduce_sum_i64(r->comm, &epoch_calls, 1));
        r->calls += epoch_calls;
        double comm_s = strux_comm_seconds(r->comm);
        STRUX_TRY(strux_comm_allreduce_max(r->comm, &comm_s, 1));
        double row[STRUX_CURVE_MAX_COLS] = {(double)e, cert.primal, cert.loss, cert.dual,
                                            cert.gap,  r->train_s,  comm_s,    (double)r->calls};
        STRUX_TRY(strux_progress_epoch_end(r->progress, e, &cert, r->train_s, row + N_CURVE_BASE));
        STRUX_TRY(strux_curve_append(&r->info.curve, row));
        strux_status st =
            r->metrics ? strux_metrics_write_row(r->metrics, &r->info.curve) : STRUX_OK;
        STRUX_TRY(strux_comm_agree(r->comm, st));
        if (so->tol > 0 && cert.gap <= so->tol * cert.primal) { /* NaN gap (sgd): never */
            strux_log(STRUX_LOG_INFO,
                      "converged after epoch %lld: duality gap %.3e <= "
                      "solver.tol %g x primal %.6g",
                      (long long)e, cert.gap, so->tol, cert.primal);
            break;
        }
        int sig = 0;
        STRUX_TRY(stop_requested(r, &sig));
        if (sig || (r->opt.output.checkpoint_every > 0 && e % r->opt.output.checkpoint_every == 0 &&
                    e < so->epochs))
            STRUX_TRY(write_checkpoint(r, e, t_start));
        if (sig)
            return strux_error_set(STRUX_ERR_INTERRUPTED, __FILE__, __LINE__, __func__,
                                   "%s: stopped after epoch %lld of %lld and wrote the checkpoint "
                                   "%s; resume with: strux train --resume %s",
                                   sig == SIGUSR1 ? "SIGUSR1" : "SIGTERM", (long long)e,
                                   (long long)so->epochs, r->checkpoint, r->checkpoint);
    }
    return STRUX_OK;
}

static strux_status save_model(train_run *r, double t_start)
{
    strux_status st = STRUX_OK;
    export_weights(r, r->model);
    if (strux_comm_rank(r->comm) == 0) {
        stamp_info(r, t_start);
        st = strux_io_model_save(r->opt.output.model, r->model, &r->info);
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
    catch_stop_signals(1);
    strux_status st = strux_comm_agree(comm, parse_args(&r, argc, argv));
    if (st == STRUX_OK) st = load_training_data(&r);
    if (st == STRUX_OK) st = set_up(&r);
    if (st == STRUX_OK) st = run_epochs(&r, t_start);
    if (st == STRUX_OK) st = save_model(&r, t_start);
    if (st == STRUX_OK) st = evaluate_test(&r);
    int rc = st == STRUX_OK ? 0 : strux_cli_fail(comm, st);
    catch_stop_signals(0);
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
