/* cli/train.c - `strux train [CONFIG] [--resume CHECKPOINT] [--set k=v ...]`: parse the config,
 * read the sharded data (data.scale learnt here, once), build task, model, search and solver, hand
 * them to the library's training driver (solvers/driver.c: epochs, certificates, held-out scoring,
 * checkpoints, resume), save the exported model (rank 0, atomically) and print the held-out
 * evaluation. SIGTERM and SIGUSR1 raise the driver's stop flag: it stops after the epoch with a
 * checkpoint and the run ends with exit status 0 and the command that resumes it. Every step that
 * can fail on one rank is followed by an error agreement, so all ranks stop together with the
 * failing rank's message. */
#include "cli.h"
#include "strux/hierarchy.h"

#include "strux_git.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Entries a sparse model's block on a host has room for at first (it grows by half when full;
 * pages are committed only as they fill): 16M entries, 192 MB of address space in double. */
#define SHARED_ROOM ((int64_t)1 << 24)

typedef struct train_run {
    strux_comm *comm;
    strux_config *config;
    strux_run_options opt;
    strux_dataset *train, *test;
    strux_task *task;
    strux_model *model;
    strux_window *window; /* the host's one copy of the model (model.share = host), or NULL */
    strux_search *search;
    strux_solver *solver;
    strux_driver *driver;
    strux_alpha_hook *alpha;  /* the SSVM α update (task.model = ssvm), or NULL */
    strux_lp_hook *lp;        /* LP counter columns (multi-label DAG hierarchies), or NULL */
    strux_prune_hook *prune;  /* pruning between epochs (model.prune_every), or NULL */
    strux_metrics *metrics; /* rank 0's JSON-lines log, or NULL */
    strux_model_info info;
    double *col_scale;                   /* data.scale factors per feature column, or NULL */
    strux_progress *progress;            /* epoch lines and progress bar (progress.c) */
    const char *resume;                  /* --resume checkpoint, or NULL */
    strux_rates *rates;                  /* rate constraints ([constraints]), or NULL */
    const strux_dataset *inner;          /* what the solver sees: train, or the rates' inner data */
    char checkpoint[STRUX_OPT_STR + 16]; /* where checkpoints go */
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
    char *config = NULL;
    STRUX_TRY(strux_io_model_config(path, &config));
    char origin[STRUX_OPT_STR + 32];
    snprintf(origin, sizeof origin, "%s (stored config)", path);
    strux_status st = strux_config_read_stored(c, config, origin);
    strux_free(&config);
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
    STRUX_TRY(strux_cli_rates_parse(r->config, &r->opt, &r->rates));
    /* the rate constraints' outer loop sets the model's bias and scales it on every rank between
     * its inner solves, which one copy per host does not allow: each rank keeps its own */
    STRUX_CHECK(!r->rates || strcmp(r->opt.model.share, "host") != 0, STRUX_ERR_CONFIG,
                "model.share = host is not supported with [constraints] (the rate constraints' "
                "outer loop writes the model on every rank); use model.share = none or auto");
    if (r->rates) snprintf(r->opt.model.share, sizeof r->opt.model.share, "none");
    strux_comm_set_stall_timeout(r->comm, r->opt.run.stall_timeout);
    /* rate constraints honour model.bias = free themselves (Alg. 3 around SDCA's fixed-bias
     * solves), so the solver is checked as for a regularised bias */
    strux_model_options mo = r->opt.model;
    if (r->rates) snprintf(mo.bias, sizeof mo.bias, "regularised");
    STRUX_TRY(strux_solver_check_options(&r->opt.solver, &r->opt.surrogate, &r->opt.task, &mo));
    STRUX_CHECK(strcmp(r->opt.model.bias, "free") != 0 || r->opt.data.bias > 0, STRUX_ERR_CONFIG,
                "model.bias = free needs the bias feature: data.bias is 0");
    STRUX_CHECK(r->opt.model.bias_centre == 0 || r->opt.data.bias > 0, STRUX_ERR_CONFIG,
                "model.bias_centre = %g needs the bias feature: data.bias is 0",
                r->opt.model.bias_centre);
    STRUX_CHECK(r->opt.model.bias_centre == 0 || !r->rates, STRUX_ERR_CONFIG,
                "model.bias_centre = %g is not supported with [constraints] (their weighted SVMs "
                "regularise the plain ||w||²)",
                r->opt.model.bias_centre);
    unsigned caps = 0;
    STRUX_TRY(strux_solver_type_caps(r->opt.solver.type, &caps));
    STRUX_CHECK(!(caps & STRUX_CAP_KERNEL_MODEL) || strcmp(r->opt.data.scale, "none") == 0,
                STRUX_ERR_CONFIG,
                "data.scale = %s with solver.type = %s: a kernel model keeps its support vectors "
                "in the training data's space, which predict cannot scale test rows into; scale "
                "the data files beforehand (data.normalize = l2 is applied to every file alike)",
                r->opt.data.scale, r->opt.solver.type);
    STRUX_CHECK(r->opt.solver.blocks == 0 || r->opt.solver.blocks >= strux_comm_size(r->comm),
                STRUX_ERR_CONFIG,
                "solver.blocks = %lld data blocks cannot be shared by %d ranks: each rank needs "
                "at least one block (run with -np %lld or fewer)",
                (long long)r->opt.solver.blocks, strux_comm_size(r->comm),
                (long long)r->opt.solver.blocks);
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
    /* outputs that would replace an input or cannot be files fail now, before any data is read
     * (issue 18); the checkpoint may replace the one resumed from, which is read in full first */
    if (strux_comm_rank(r->comm) == 0) {
        const char *inputs[] = {r->opt.data.train,   r->opt.data.test, r->opt.data.label_names,
                                r->opt.data.weights, config_path,      r->resume};
        const int n_inputs = (int)(sizeof inputs / sizeof *inputs);
        STRUX_TRY(strux_io_check_output(out->model, inputs, n_inputs));
        STRUX_TRY(strux_io_check_output(r->checkpoint, inputs, n_inputs - 1));
        if (out->metrics[0]) STRUX_TRY(strux_io_check_output(out->metrics, inputs, n_inputs));
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

/* The data blocks of a resumed run with solver.blocks = 0 (one per rank of the run that
 * started it): the checkpoint's when this run's ranks can share them, so the CoCoA+ path is the
 * unbroken run's on any allocation that is not larger; otherwise one per rank (the driver warns
 * that the path changes). 0 when not resuming or solver.blocks is set. Collective. */
static strux_status resume_blocks(train_run *r, int32_t *n_blocks)
{
    *n_blocks = 0;
    if (!r->resume || r->opt.solver.blocks > 0) return STRUX_OK;
    strux_checkpoint_info ck = {0};
    strux_status st = STRUX_OK;
    if (strux_comm_rank(r->comm) == 0) st = strux_io_checkpoint_peek(r->resume, &ck);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    STRUX_TRY(strux_comm_bcast(r->comm, &ck.n_blocks, sizeof ck.n_blocks, 0));
    if (ck.n_blocks >= strux_comm_size(r->comm)) *n_blocks = ck.n_blocks;
    if (*n_blocks != strux_comm_size(r->comm))
        strux_log(STRUX_LOG_INFO,
                  "%s: %d data block(s) (solver.blocks = 0: one per rank of the run that wrote "
                  "it), %d rank(s) now: %s",
                  r->resume, ck.n_blocks, strux_comm_size(r->comm),
                  *n_blocks ? "the ranks share the checkpoint's blocks (the same CoCoA+ path)"
                            : "one block per rank");
    return STRUX_OK;
}

static strux_status load_training_data(train_run *r)
{
    strux_memory_estimate est;
    STRUX_TRY(strux_comm_agree(r->comm, strux_cli_memory_before_data(r->comm, &r->opt, &est)));
    STRUX_TRY(strux_cli_memory_check(r->comm, &r->opt, &est, "before reading the data"));
    strux_read_options ro = {
        .rank = strux_comm_rank(r->comm),
        .n_ranks = strux_comm_size(r->comm),
        .dim = (int32_t)r->opt.data.dim,
        .n_labels = (int32_t)r->opt.data.n_labels,
        .drop_above_dim = 0,
        .bias = strcmp(r->opt.model.bias, "none") == 0 ? 0 : r->opt.data.bias,
        .max_features = (int32_t)r->opt.data.max_features,
        .n_blocks = (int32_t)r->opt.solver.blocks,
        .binary_labels = strcmp(r->opt.task.type, "binary") == 0,
        .normalize = strcmp(r->opt.data.normalize, "l2") == 0,
    };
    int32_t kept;
    STRUX_TRY(resume_blocks(r, &kept));
    if (kept > 0) ro.n_blocks = kept;
    double t0 = strux_time_now();
    strux_comm_set_phase(r->comm, "reading the training data");
    STRUX_TRY(strux_cli_dataset_load(r->comm, r->opt.data.train, &ro, &r->train));
    if (r->opt.data.weights[0])
        STRUX_TRY(
            strux_comm_agree(r->comm, strux_dataset_read_weights(r->train, r->opt.data.weights)));
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
    STRUX_TRY(strux_cli_dataset_load(r->comm, r->opt.data.test, &ro, &r->test));
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
    in->precision = strcmp(r->opt.output.precision, "float") == 0 ? STRUX_PRECISION_FLOAT
                                                                  : STRUX_PRECISION_DOUBLE;
    const char *wt = r->opt.output.weights; /* auto: as the model is held */
    in->weights_csr = strcmp(wt, "csr") == 0 ||
                      (strcmp(wt, "auto") == 0 && r->model &&
                       strux_model_kind_of(r->model).layout == STRUX_LAYOUT_SPARSE);
    in->seed = r->opt.solver.seed;
    STRUX_TRY(strux_config_format(&r->opt, &in->config));
    if (r->rates) { /* the user-named sections ride along (resume, eval) */
        char *extra = NULL;
        STRUX_TRY(strux_rates_config_text(r->rates, &extra));
        size_t n = strlen(in->config), k = strlen(extra);
        strux_status st = strux_realloc_array(&in->config, n + k + 1, 1);
        if (st == STRUX_OK) memcpy(in->config + n, extra, k + 1);
        strux_free(&extra);
        STRUX_TRY(st);
    }
    STRUX_TRY(strux_task_trees(r->task, &in->trees)); /* rta: the ensemble goes into the file */
    STRUX_TRY(strux_solver_m3l_info(r->solver, &in->m3l)); /* m3l: the prior (/m3l) */
    if (r->opt.data.label_names[0])
        STRUX_TRY(strux_label_names_read(r->opt.data.label_names, in->n_labels, &in->label_names));
    return STRUX_OK;
}

/* Rank 0 appends each epoch's record to the metrics log (the driver's record callback). */
static strux_status log_record(void *ctx, const strux_driver *d, const strux_curve *c)
{
    train_run *r = ctx;
    strux_progress_record(r->progress, d, c);
    return r->metrics ? strux_metrics_write_row(r->metrics, c) : STRUX_OK;
}

/* What the task needs to know of the whole training file (strux_task_sync_*), max-reduced. */
static strux_status task_sync(train_run *r)
{
    int64_t n = strux_task_sync_size(r->task);
    if (n == 0) return STRUX_OK;
    double *buf;
    STRUX_TRY(strux_alloc_array(&buf, (size_t)n, sizeof *buf));
    strux_status st = strux_task_sync_local(r->task, buf);
    st = strux_comm_agree(r->comm, st);
    if (st == STRUX_OK) st = strux_comm_allreduce_max(r->comm, buf, n);
    if (st == STRUX_OK) st = strux_comm_agree(r->comm, strux_task_sync_apply(r->task, r->train, buf));
    strux_free(&buf);
    return st;
}

/* task.type = hierarchy: label ids are node ids, so with data.n_labels = 0 the label count is
 * the hierarchy's (largest node id + 1), not the training data's largest id: held-out files and
 * the model's label space may name nodes the training rows never do. Every rank holds the same
 * hierarchy, so the count agrees. */
static void hierarchy_label_count(train_run *r)
{
    const strux_hierarchy *h = NULL;
    const double *alpha = NULL;
    if (r->opt.data.n_labels > 0) return; /* the configured count stands */
    if (strux_task_hierarchy_state(r->task, &h, &alpha) != STRUX_OK) {
        strux_error_clear(); /* not reached after a successful check */
        return;
    }
    int64_t top = h->n_file > 0 ? h->find_id[h->n_file - 1] : -1;
    if (top >= r->train->n_labels && top < INT32_MAX) r->train->n_labels = (int32_t)(top + 1);
}

/* task.type = hierarchy: rank 0 reads and validates task.hierarchy and sends the built structure
 * (strux_hierarchy_pack) to the other ranks, which neither open the file nor rebuild it
 * (hierarchical.md §1: "validated on rank 0 and sent to all"). A bad file ends every rank with
 * rank 0's message, which names the file and line (strux_comm_agree). */
static strux_status share_hierarchy(train_run *r)
{
    if (strcmp(r->opt.task.type, "hierarchy") != 0 || !r->opt.task.hierarchy[0]) return STRUX_OK;
    strux_comm_set_phase(r->comm, "reading the hierarchy");
    const int root = strux_comm_rank(r->comm) == 0;
    strux_hierarchy *h = NULL;
    strux_blob b = {0};
    strux_status st = STRUX_OK;
    if (root) {
        st = strux_hierarchy_read(r->opt.task.hierarchy, NULL, &h);
        if (st == STRUX_OK) st = strux_hierarchy_pack(h, &b);
    }
    st = strux_comm_agree(r->comm, st);
    uint64_t n = b.n;
    if (st == STRUX_OK) st = strux_comm_bcast(r->comm, &n, sizeof n, 0);
    if (st == STRUX_OK)
        st = strux_comm_agree(r->comm, root ? STRUX_OK : strux_blob_put(&b, NULL, (size_t)n));
    if (st == STRUX_OK) st = strux_comm_bcast(r->comm, b.data, (size_t)n, 0);
    if (st == STRUX_OK && !root) st = strux_hierarchy_unpack(&b, &h);
    if (st == STRUX_OK) st = strux_task_hierarchy_use_hierarchy(r->task, h);
    strux_hierarchy_destroy(&h);
    strux_blob_free(&b);
    return strux_comm_agree(r->comm, st);
}

static strux_status set_up(train_run *r)
{
    strux_comm_set_phase(r->comm, "set-up");
    STRUX_TRY(strux_comm_agree(r->comm, strux_task_create(&r->opt.task, &r->task)));
    STRUX_TRY(share_hierarchy(r));
    strux_status st = strux_task_check(r->task, r->train);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    if (strcmp(r->opt.task.type, "hierarchy") == 0) hierarchy_label_count(r);
    STRUX_TRY(task_sync(r));
    int32_t n_rows = 0;
    int64_t n_extra = 0;
    if (st == STRUX_OK) st = strux_task_model_shape(r->task, r->train, &n_rows, &n_extra);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    strux_memory_estimate est;
    strux_cli_memory_with_data(r->comm, &r->opt, r->train, r->task, n_rows, n_extra, &est);
    STRUX_TRY(strux_cli_memory_check(r->comm, &r->opt, &est, "with the data read"));
    strux_model_kind kind = strux_model_choose_kind(&r->opt.model, n_rows);
    if (strux_cli_share_host(r->comm, &r->opt)) { /* one copy per host: Collective */
        STRUX_TRY(strux_window_create(r->comm, 0, &r->window));
        strux_model_share share = strux_window_model_share(r->window);
        int64_t dense = (int64_t)n_rows * r->train->dim;
        STRUX_TRY(strux_comm_agree(
            r->comm, strux_model_create_shared(n_rows, r->train->dim, n_extra, kind, &share,
                                               dense < SHARED_ROOM ? dense : SHARED_ROOM,
                                               &r->model)));
        int on_host = 1;
        (void)strux_comm_host_size(r->comm, &on_host);
        strux_log_all(STRUX_LOG_INFO,
                  "model.share = host: the model is held once per host in a shared window "
                  "(%d ranks on this host)",
                  on_host);
    } else if (st == STRUX_OK) {
        st = strux_model_create(n_rows, r->train->dim, n_extra, kind, &r->model);
    }
    int free_bias = strcmp(r->opt.model.bias, "free") == 0;
    if (st == STRUX_OK && free_bias && !r->rates)
        strux_model_set_free_col(r->model, r->train->bias_col);
    if (st == STRUX_OK && r->model)
        strux_model_set_centre(r->model, r->train->bias_col, r->opt.model.bias_centre);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    r->inner = r->train;
    if (r->rates) /* the weighted SVMs of the rate constraints run on their own rows */
        STRUX_TRY(strux_rates_bind(r->rates, r->comm, r->train, strux_task_name(r->task),
                                   r->opt.solver.lambda, free_bias, &r->inner));
    st = strux_search_create(&r->opt.surrogate, r->task, r->inner, &r->search);
    STRUX_TRY(strux_comm_agree(r->comm, st));
    STRUX_TRY(strux_solver_create(&r->opt.solver, r->task, r->search, r->inner, r->model, r->comm,
                                  &r->solver));
    /* a free bias under rate constraints is Alg. 3's: SDCA never sees the bias column (the inner
     * rows leave it out), the regulariser of Problem 2 leaves it out */
    if (free_bias && r->rates) strux_model_set_free_col(r->model, r->train->bias_col);
    STRUX_TRY(load_test_data(r));
    if (r->rates) STRUX_TRY(strux_rates_bind_test(r->rates, r->test));
    STRUX_TRY(strux_comm_agree(r->comm, fill_info(r)));
    const strux_solver_options *so = &r->opt.solver;
    const strux_output_options *out = &r->opt.output;
    strux_driver_options dopt = {.epochs = so->epochs,
                                 .tol = so->tol,
                                 .certify_every = so->certify_every,
                                 .time_limit = so->time_limit,
                                 .checkpoint_every = out->checkpoint_every,
                                 .checkpoint_minutes = out->checkpoint_minutes,
                                 .eval_every = out->eval_every,
                                 .checkpoint = r->checkpoint};
    if (r->rates) dopt.certify_every = 1; /* inner solves stop on their gap */
    strux_driver_parts parts = {.comm = r->comm,
                                .train = r->inner,
                                .task = r->task,
                                .search = r->search,
                                .solver = r->solver,
                                .model = r->model,
                                .test = r->test,
                                .col_scale = r->col_scale,
                                .info = &r->info};
    STRUX_TRY(strux_comm_agree(r->comm, strux_driver_create(&dopt, &parts, &r->driver)));
    STRUX_TRY(strux_comm_agree(r->comm,
                               strux_alpha_hook_attach(r->driver, r->comm, r->task, r->solver,
                                                       r->model, &r->opt.task, so->tol, &r->alpha)));
    STRUX_TRY(strux_comm_agree(r->comm, strux_lp_hook_attach(r->driver, r->comm, r->task, &r->lp)));
    STRUX_TRY(strux_comm_agree(r->comm,
                               strux_prune_hook_attach(r->driver, r->solver, r->opt.model.prune,
                                                       r->opt.model.prune_every, &r->prune)));
    STRUX_TRY(strux_comm_agree(r->comm, strux_progress_create(r->comm, &r->opt, &r->progress)));
    strux_driver_set_progress(r->driver, strux_progress_step, r->progress);
    strux_driver_set_record_fn(r->driver, log_record, r);
    strux_driver_set_stop_flag(r->driver, &stop_signal);
    if (r->rates) {
        strux_driver_hook h;
        STRUX_TRY(strux_comm_agree(r->comm, strux_rates_hook(r->rates, r->solver, &h)));
        STRUX_TRY(strux_comm_agree(r->comm, strux_driver_add_hook(r->driver, &h)));
    }
    STRUX_TRY(strux_driver_start(r->driver, r->resume));
    strux_progress_start(r->progress, r->driver);
    st = STRUX_OK;
    if (strux_comm_rank(r->comm) == 0 && r->opt.output.metrics[0]) {
        st = strux_metrics_open(r->opt.output.metrics, 0, &r->metrics);
        if (st == STRUX_OK) st = strux_metrics_write_all(r->metrics, &r->info.curve);
    }
    STRUX_TRY(strux_comm_agree(r->comm, st));
    strux_log(STRUX_LOG_INFO,
              "task %s, surrogate %s (search %s), solver %s, lambda %g, %lld "
              "weights (%s, %s: %.1f MB per copy%s)",
              strux_task_name(r->task), strux_surrogate_name(r->search),
              strux_search_name(r->search), strux_solver_name(r->solver), so->lambda,
              (long long)strux_model_n_w(r->model),
              strux_layout_name(strux_model_kind_of(r->model).layout),
              strux_precision_name(strux_model_kind_of(r->model).precision),
              (double)strux_model_bytes(r->model) / 1e6,
              strux_model_kind_of(r->model).layout == STRUX_LAYOUT_SPARSE
                  ? " so far: it grows with the features its rows see"
                  : "");
    return STRUX_OK;
}

/* The driver's run; an interruption names the command that resumes it. */
static strux_status run(train_run *r)
{
    strux_status st = r->rates ? strux_rates_run(r->rates, r->driver, r->model)
                               : strux_driver_run(r->driver);
    if (st != STRUX_ERR_INTERRUPTED) return st;
    char stopped[1024];
    snprintf(stopped, sizeof stopped, "%s", strux_error_message());
    return strux_error_set(st, __FILE__, __LINE__, __func__,
                           "%s; resume with: strux train --resume %s", stopped, r->checkpoint);
}

static strux_status save_model(train_run *r)
{
    strux_comm_set_phase(r->comm, "writing the model");
    strux_status st = strux_driver_export(r->driver, r->model);
    if (st == STRUX_OK) st = strux_task_export(r->task, r->model);
    if (st == STRUX_OK) { /* hierarchy: the node order and the final α go into the file */
        strux_hier_stored_free(&r->info.hier);
        st = strux_task_hierarchy_stored(r->task, &r->info.hier);
    }
    if (st == STRUX_OK && r->opt.model.prune > 0) {
        int64_t dropped = strux_model_prune(r->model, r->opt.model.prune);
        strux_log(STRUX_LOG_INFO, "model.prune = %g dropped %lld of %lld weights (%.1f MB left)",
                  r->opt.model.prune, (long long)dropped, (long long)strux_model_n_w(r->model),
                  (double)strux_model_bytes(r->model) / 1e6);
    }
    if (st == STRUX_OK && strux_comm_rank(r->comm) == 0) {
        strux_driver_stamp_info(r->driver);
        st = strux_io_model_save(r->opt.output.model, r->model, &r->info);
    }
    STRUX_TRY(strux_comm_agree(r->comm, st));
    strux_log(STRUX_LOG_INFO, "model written to %s (%.2fs of training)", r->opt.output.model,
              strux_driver_train_seconds(r->driver));
    if (strux_model_kind_of(r->model).layout == STRUX_LAYOUT_SPARSE) {
        int64_t nnz = 0;
        for (int32_t k = 0; k < strux_model_n_rows(r->model); k++)
            nnz += strux_model_row_nnz(r->model, k);
        strux_log(STRUX_LOG_INFO, "sparse model: %lld non-zeros in %zu bytes (%.1f per non-zero)",
                  (long long)nnz, strux_model_bytes(r->model),
                  nnz ? (double)strux_model_bytes(r->model) / (double)nnz : 0.0);
    }
    return STRUX_OK;
}

static strux_status evaluate_test(train_run *r)
{
    if (!r->test) return STRUX_OK;
    strux_scores sc;
    char *extra = NULL;
    strux_eval_request rq = {.model = r->model,
                             .kexp = r->info.m3l.kexp.n_labels > 0 ? &r->info.m3l.kexp : NULL};
    STRUX_TRY(strux_evaluate_with(r->comm, r->task, r->test, &rq, &sc));
    if (r->rates) /* datasets and constraints on data.test, deterministic and randomised */
        STRUX_TRY(strux_rates_report(r->rates, r->comm, r->test, 1, r->model, &r->info.rates,
                                     &extra));
    strux_cli_print_scores_extra(r->comm, &sc, extra);
    strux_free(&extra);
    return STRUX_OK;
}

int strux_cmd_train(strux_comm *comm, int argc, char **argv)
{
    train_run r = {.comm = comm};
    catch_stop_signals(1);
    strux_status st = strux_comm_agree(comm, parse_args(&r, argc, argv));
    if (st == STRUX_OK) st = load_training_data(&r);
    if (st == STRUX_OK) st = set_up(&r);
    if (st == STRUX_OK) st = run(&r);
    if (st == STRUX_OK && r.rates) /* the constraint table and the randomised classifier */
        st = strux_comm_agree(comm, strux_rates_store_fill(r.rates, &r.info.rates));
    if (st == STRUX_OK) /* m3l_kernel: the kernel expansion goes into the file */
        st = strux_solver_export_info(r.solver, &r.info);
    if (st == STRUX_OK) strux_solver_release(r.solver); /* the model is written without it */
    if (st == STRUX_OK) st = save_model(&r);
    if (st == STRUX_OK) st = evaluate_test(&r);
    int rc = st == STRUX_OK ? 0 : strux_cli_fail(comm, st);
    catch_stop_signals(0);
    strux_driver_destroy(&r.driver);
    strux_alpha_hook_destroy(&r.alpha);
    strux_lp_hook_destroy(&r.lp);
    strux_prune_hook_destroy(&r.prune);
    strux_progress_destroy(&r.progress);
    strux_metrics_close(&r.metrics);
    strux_model_info_free(&r.info);
    strux_solver_destroy(&r.solver);
    strux_search_destroy(&r.search);
    strux_model_destroy(&r.model);
    strux_window_destroy(&r.window);
    strux_task_destroy(&r.task);
    strux_rates_destroy(&r.rates);
    strux_dataset_destroy(&r.train);
    strux_dataset_destroy(&r.test);
    strux_config_destroy(&r.config);
    strux_free(&r.col_scale);
    return rc;
}
