/* solvers/driver.c - the life of a training run (strux/driver.h): epochs of the solver, the
 * certificate every solver.certify_every epochs, the tolerance stop, the epoch and time limits,
 * held-out scoring into test_* columns, the per-epoch record, checkpoints on a cadence of epochs
 * or minutes and on a stop request (between epochs, and between the CoCoA+ rounds inside one:
 * the solver's round function), the solver's and search's state saved per example (any rank
 * count resumes it), and the hooks where outer loops live. One epoch is one_epoch(); a solve is epochs
 * until the certified gap reaches its tolerance; a run is solves separated by the hooks' outer
 * steps. Every step that can fail on one rank is followed by an error agreement, so all ranks stop
 * together with the failing rank's message. Knows nothing of src/cli. */
#include "strux/driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_HOOKS 8
/* A primal above this many times J(0) (the objective of w = 0, which the optimum never exceeds)
 * means the iterates are running away: warned once. */
#define DIVERGENCE_FACTOR 10

/* The base columns of the record, in this order. */
static const char *const base_columns[] = {
    "epoch",  "primal", "loss",       "dual",         "gap",
    "time_s", "comm_s", "comm_bytes", "oracle_calls", NULL,
};
enum {
    COL_EPOCH,
    COL_PRIMAL,
    COL_LOSS,
    COL_DUAL,
    COL_GAP,
    COL_TIME,
    COL_COMM_S,
    COL_COMM_BYTES,
    COL_CALLS,
    N_BASE
};

struct strux_driver {
    strux_driver_options opt;
    strux_driver_parts p;
    strux_driver_hook hook[MAX_HOOKS];
    int hook_col[MAX_HOOKS]; /* first record column of each hook */
    int n_hooks;
    int test_col; /* first test_* column, −1 without data.test */
    /* first of the solver's own columns (strux_solver_columns) */
    int solver_col;
    strux_driver_record_fn record_fn;
    void *record_ctx;
    const volatile sig_atomic_t *stop_flag; /* borrowed, or NULL */
    strux_certificate cert;                 /* the last certificate (NaN where none) */
    int64_t epoch;                          /* epochs completed, resumed runs included */
    int64_t calls;                          /* oracle calls so far, all ranks */
    double train_s;                         /* training seconds so far */
    double wall0_s;                         /* wall time of the runs before this one (resume) */
    double t_start;                         /* this process's start, for the wall time */
    int64_t bytes0;        /* this rank's collective bytes at the start of the epoch */
    int64_t fingerprint;   /* of the training data, every rank's (checkpoints) */
    double zero_bound;     /* J(0) ≤ this: the weighted mean largest loss of the examples */
    int warned;            /* the divergence warning was given */
    int moving;            /* a hook moves the problem between solves: no divergence warning */
    int timed_out;         /* solver.time_limit was reached (decided on the slowest clock) */
    strux_model *exported; /* scratch: the weights with data.scale folded in, or NULL */
    int in_epoch;          /* 1 while the solver's epoch runs (a checkpoint between rounds) */
    int64_t epoch_c0;      /* this rank's oracle calls when the current epoch started */
    double epoch_t0;       /* when the current epoch started */
    double last_checkpoint; /* when the last checkpoint was written (or the run started) */
    double row[STRUX_CURVE_MAX_COLS];
};

/* Is a checkpoint due? *sig: a rank's stop flag (the signal); *timed: output.checkpoint_minutes
 * have passed since the last one on some rank. One decision for all ranks. Collective. */
static strux_status checkpoint_due(strux_driver *d, int *sig, int *timed)
{
    double v[2] = {d->stop_flag ? (double)*d->stop_flag : 0, 0};
    if (d->opt.checkpoint_minutes > 0)
        v[1] = strux_time_now() - d->last_checkpoint >= 60 * d->opt.checkpoint_minutes;
    STRUX_TRY(strux_comm_allreduce_max(d->p.comm, v, 2));
    *sig = (int)v[0];
    *timed = v[1] > 0;
    return STRUX_OK;
}

/* The stop of a run by signal sig, after its checkpoint. */
static strux_status stopped(const strux_driver *d, int sig)
{
    const char *name = sig == SIGUSR1 ? "SIGUSR1" : sig == SIGTERM ? "SIGTERM" : "signal";
    int64_t at = strux_solver_epoch_position(d->p.solver);
    if (at > 0)
        return strux_error_set(STRUX_ERR_INTERRUPTED, __FILE__, __LINE__, __func__,
                               "%s: stopped at example %lld of %lld of epoch %lld (of %lld) and "
                               "wrote the checkpoint %s",
                               name, (long long)at, (long long)d->p.train->n_global,
                               (long long)d->epoch + 1, (long long)d->opt.epochs,
                               d->opt.checkpoint);
    return strux_error_set(STRUX_ERR_INTERRUPTED, __FILE__, __LINE__, __func__,
                           "%s: stopped after epoch %lld of %lld and wrote the checkpoint %s", name,
                           (long long)d->epoch, (long long)d->opt.epochs, d->opt.checkpoint);
}

/* The solver's round function: between two CoCoA+ rounds of an epoch, a stop request or
 * output.checkpoint_minutes write a checkpoint there (an epoch of a large run lasts minutes). */
static strux_status between_rounds(void *ctx, strux_solver *s)
{
    (void)s;
    strux_driver *d = ctx;
    int sig, timed;
    STRUX_TRY(checkpoint_due(d, &sig, &timed));
    if (!sig && !timed) return STRUX_OK;
    STRUX_TRY(strux_driver_checkpoint(d));
    if (sig) return stopped(d, sig);
    char phase[64];
    snprintf(phase, sizeof phase, "epoch %lld", (long long)d->epoch + 1);
    strux_comm_set_phase(d->p.comm, phase);
    return STRUX_OK;
}

strux_status strux_driver_create(const strux_driver_options *opt, const strux_driver_parts *parts,
                                 strux_driver **out)
{
    strux_driver *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    d->opt = *opt;
    d->p = *parts;
    d->test_col = -1;
    d->cert = (strux_certificate){NAN, NAN, NAN, NAN, 0};
    d->t_start = d->last_checkpoint = strux_time_now();
    strux_solver_set_round_fn(parts->solver, between_rounds, d);
    const strux_model *m = parts->model;
    strux_status st = STRUX_OK;
    if (parts->col_scale) st = strux_model_create_like(m, &d->exported);
    if (st != STRUX_OK) {
        strux_driver_destroy(&d);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = d;
    return STRUX_OK;
}

void strux_driver_destroy(strux_driver **d)
{
    if (!*d) return;
    strux_model_destroy(&(*d)->exported);
    strux_free(d);
}

strux_status strux_driver_add_hook(strux_driver *d, const strux_driver_hook *h)
{
    STRUX_CHECK(d->n_hooks < MAX_HOOKS, STRUX_ERR_INTERNAL, "more than %d driver hooks", MAX_HOOKS);
    d->hook[d->n_hooks++] = *h;
    d->moving |= h->moves_problem;
    return STRUX_OK;
}

void strux_driver_set_record_fn(strux_driver *d, strux_driver_record_fn fn, void *ctx)
{
    d->record_fn = fn;
    d->record_ctx = ctx;
}

void strux_driver_set_progress(strux_driver *d, strux_progress_fn fn, void *ctx)
{
    strux_solver_set_progress(d->p.solver, fn, ctx);
}

void strux_driver_set_stop_flag(strux_driver *d, const volatile sig_atomic_t *flag)
{
    d->stop_flag = flag;
}

int strux_driver_limit_reached(const strux_driver *d)
{
    return d->epoch >= d->opt.epochs || d->timed_out;
}

int64_t strux_driver_epoch(const strux_driver *d)
{
    return d->epoch;
}

const strux_certificate *strux_driver_last_certificate(const strux_driver *d)
{
    return &d->cert;
}

strux_solver *strux_driver_solver(const strux_driver *d)
{
    return d->p.solver;
}

const strux_curve *strux_driver_curve(const strux_driver *d)
{
    return &d->p.info->curve;
}

double strux_driver_train_seconds(const strux_driver *d)
{
    return d->train_s;
}

strux_status strux_driver_export(const strux_driver *d, strux_model *dst)
{
    const strux_model *m = d->p.model;
    if (dst != m) STRUX_TRY(strux_model_copy(dst, m));
    if (d->p.col_scale) strux_model_scale_cols(dst, d->p.col_scale);
    return STRUX_OK;
}

/* ---- the record ---- */

/* The record's columns: base, each hook's, then test_<score> for the task's held-out scores
 * except the count "n" (the names come from the report of an empty accumulator). */
static strux_status lay_out_columns(strux_driver *d)
{
    strux_curve *c = &d->p.info->curve;
    strux_curve_free(c);
    STRUX_TRY(strux_curve_init(c, base_columns));
    d->solver_col = c->n_cols;
    for (const char *const *name = strux_solver_columns(d->p.solver); name && *name; name++) {
        int col;
        STRUX_TRY(strux_curve_add_column(c, *name, &col));
    }
    for (int h = 0; h < d->n_hooks; h++) {
        d->hook_col[h] = c->n_cols;
        int col;
        for (const char *const *name = d->hook[h].columns; name && *name; name++)
            STRUX_TRY(strux_curve_add_column(c, *name, &col));
    }
    if (!d->p.test) return STRUX_OK;
    double *acc = NULL;
    strux_scores sc;
    STRUX_TRY(strux_alloc_array(&acc, (size_t)strux_task_eval_size(d->p.task) + 1, sizeof *acc));
    strux_status st = strux_task_eval_report(d->p.task, acc, &sc);
    strux_free(&acc);
    STRUX_TRY(st);
    d->test_col = c->n_cols;
    for (int k = 0; k < sc.n; k++) {
        if (sc.count[k]) continue;
        char name[STRUX_CURVE_NAME];
        snprintf(name, sizeof name, "test_%s", sc.name[k]);
        int col;
        STRUX_TRY(strux_curve_add_column(c, name, &col));
    }
    return STRUX_OK;
}

/* data.test scored with the weights as exported, into the test_* columns of row. */
static strux_status score_test(strux_driver *d, double *row)
{
    const strux_model *m = d->p.model;
    if (d->exported) {
        STRUX_TRY(strux_driver_export(d, d->exported));
        m = d->exported;
    }
    /* a kernel model (m3l_kernel) scores through its expansion, gathered from every rank */
    STRUX_TRY(strux_solver_export_info(d->p.solver, d->p.info));
    const strux_kexp *e = d->p.info->m3l.kexp.n_labels > 0 ? &d->p.info->m3l.kexp : NULL;
    strux_eval_request rq = {.model = m, .kexp = e};
    strux_scores sc;
    STRUX_TRY(strux_evaluate_with(d->p.comm, d->p.task, d->p.test, &rq, &sc));
    const strux_curve *c = &d->p.info->curve;
    for (int k = 0; k < sc.n; k++) {
        char name[STRUX_CURVE_NAME];
        snprintf(name, sizeof name, "test_%s", sc.name[k]);
        int col = strux_curve_column(c, name);
        if (col >= 0) row[col] = sc.value[k];
    }
    return STRUX_OK;
}

/* ---- one epoch ---- */

static int due(int64_t e, int64_t every, int64_t last)
{
    return e == last || (every > 0 && e % every == 0);
}

static strux_status append_row(strux_driver *d, int64_t epoch_calls, int score);

/* One epoch of the solver with its hooks, certificate (when due or force_cert) and record.
 * *stop is set when a hook asks the run to end. */
static strux_status one_epoch(strux_driver *d, int force_cert, int *stop)
{
    strux_comm *comm = d->p.comm;
    const int64_t e = d->epoch + 1;
    char phase[64];
    snprintf(phase, sizeof phase, "epoch %lld", (long long)e);
    strux_comm_set_phase(comm, phase);
    for (int h = 0; h < d->n_hooks; h++)
        if (d->hook[h].before_epoch) STRUX_TRY(d->hook[h].before_epoch(d->hook[h].ctx, d));
    d->bytes0 = strux_comm_bytes(comm);
    double t0 = d->epoch_t0 = strux_time_now();
    int64_t c0 = d->epoch_c0 = strux_task_oracle_calls(d->p.task);
    d->in_epoch = 1;
    strux_status st = strux_solver_epoch(d->p.solver);
    d->in_epoch = 0;
    STRUX_TRY(st);
    int64_t epoch_calls = strux_task_oracle_calls(d->p.task) - c0;
    d->epoch = e;
    d->cert = (strux_certificate){NAN, NAN, NAN, NAN, 0};
    int solver_done = strux_solver_converged(d->p.solver); /* its own rule (m3l.pg_tol) */
    if (force_cert || solver_done || due(e, d->opt.certify_every, d->opt.epochs)) {
        snprintf(phase, sizeof phase, "the certificate after epoch %lld", (long long)e);
        strux_comm_set_phase(comm, phase);
        STRUX_TRY(strux_solver_certificate(d->p.solver, &d->cert));
        if (d->cert.primal > DIVERGENCE_FACTOR * d->zero_bound && !d->warned && !d->moving &&
            strux_comm_rank(comm) == 0) {
            strux_log(STRUX_LOG_WARN,
                      "the objective %.6g after epoch %lld is above %d x %.6g, the objective of "
                      "w = 0 at most, which the optimum never exceeds: the iterates are diverging "
                      "(raise solver.lambda, or scale the data: data.scale = maxabs)",
                      d->cert.primal, (long long)e, DIVERGENCE_FACTOR, d->zero_bound);
            d->warned = 1;
        }
    }
    d->train_s += strux_time_now() - t0;
    for (int h = 0; h < d->n_hooks; h++)
        if (d->hook[h].after_epoch) STRUX_TRY(d->hook[h].after_epoch(d->hook[h].ctx, d, stop));
    return append_row(d, epoch_calls, due(e, d->opt.eval_every, d->opt.epochs));
}

/* The record of the epoch just run (or of an outer step after it): base columns, the solver's,
 * every hook's, test scores when score_test; appended to the curve and passed to the record
 * callback. */
static strux_status append_row(strux_driver *d, int64_t epoch_calls, int score)
{
    strux_comm *comm = d->p.comm;
    const int64_t e = d->epoch;
    const strux_curve *c = &d->p.info->curve;
    double *row = d->row;
    for (int k = 0; k < c->n_cols; k++)
        row[k] = NAN;
    double comm_s = strux_comm_seconds(comm);
    int64_t sums[2] = {epoch_calls, strux_comm_bytes(comm) - d->bytes0};
    STRUX_TRY(strux_comm_allreduce_sum_i64(comm, sums, 2));
    STRUX_TRY(strux_comm_allreduce_max(comm, &comm_s, 1));
    d->calls += sums[0];
    row[COL_EPOCH] = (double)e;
    row[COL_PRIMAL] = d->cert.primal;
    row[COL_LOSS] = d->cert.loss;
    row[COL_DUAL] = d->cert.dual;
    row[COL_GAP] = d->cert.gap;
    row[COL_TIME] = d->train_s;
    row[COL_COMM_S] = comm_s;
    row[COL_COMM_BYTES] = (double)sums[1];
    row[COL_CALLS] = (double)d->calls;
    STRUX_TRY(strux_solver_metrics(d->p.solver, row + d->solver_col));
    for (int h = 0; h < d->n_hooks; h++)
        if (d->hook[h].metrics)
            STRUX_TRY(d->hook[h].metrics(d->hook[h].ctx, d, row + d->hook_col[h]));
    if (d->p.test && score) STRUX_TRY(score_test(d, row));
    STRUX_TRY(strux_curve_append(&d->p.info->curve, row));
    if (d->record_fn) STRUX_TRY(strux_comm_agree(comm, d->record_fn(d->record_ctx, d, c)));
    d->bytes0 = strux_comm_bytes(comm);
    return STRUX_OK;
}

strux_status strux_driver_record(strux_driver *d)
{
    return append_row(d, 0, 0);
}

strux_status strux_driver_solve(strux_driver *d, double eps, int64_t max_epochs, int *converged)
{
    *converged = 0;
    for (int64_t k = 0; k < max_epochs && d->epoch < d->opt.epochs; k++) {
        int stop = 0;
        STRUX_TRY(one_epoch(d, eps > 0 && k + 1 == max_epochs, &stop));
        const strux_certificate *c = &d->cert;
        if (eps > 0 && c->gap <= eps * c->primal && !c->lower_bound) { /* NaN gap: never */
            strux_log(STRUX_LOG_INFO,
                      "converged after epoch %lld: duality gap %.3e <= %g x primal %.6g",
                      (long long)d->epoch, c->gap, eps, c->primal);
            *converged = 1;
            return STRUX_OK;
        }
        if (strux_solver_converged(d->p.solver)) {
            strux_log(STRUX_LOG_INFO,
                      "converged after epoch %lld: the solver's stopping rule holds (every "
                      "projected gradient within m3l.pg_tol); duality gap %.3e, primal %.6g",
                      (long long)d->epoch, c->gap, c->primal);
            *converged = 1;
            return STRUX_OK;
        }
        int sig = 0, timed = 0;
        STRUX_TRY(checkpoint_due(d, &sig, &timed));
        int cadence = d->opt.checkpoint_every > 0 && d->epoch % d->opt.checkpoint_every == 0;
        if (sig || ((cadence || timed) && d->epoch < d->opt.epochs))
            STRUX_TRY(strux_driver_checkpoint(d));
        if (sig) return stopped(d, sig);
        if (stop) return STRUX_OK;
        if (d->opt.time_limit > 0) { /* one decision for all ranks: the slowest clock */
            double t = d->train_s;
            STRUX_TRY(strux_comm_allreduce_max(d->p.comm, &t, 1));
            if (t >= d->opt.time_limit) {
                d->timed_out = 1;
                strux_log(STRUX_LOG_INFO, "solver.time_limit of %gs reached after epoch %lld",
                          d->opt.time_limit, (long long)d->epoch);
                return STRUX_OK;
            }
        }
    }
    return STRUX_OK;
}

strux_status strux_driver_run(strux_driver *d)
{
    int outer = 0;
    for (int h = 0; h < d->n_hooks; h++)
        outer |= d->hook[h].after_solve != NULL;
    while (d->epoch < d->opt.epochs) {
        int converged;
        STRUX_TRY(strux_driver_solve(d, d->opt.tol, d->opt.epochs - d->epoch, &converged));
        if (!converged || !outer) break;
        int done = 1;
        for (int h = 0; h < d->n_hooks; h++) {
            int hook_done = 1;
            if (d->hook[h].after_solve)
                STRUX_TRY(d->hook[h].after_solve(d->hook[h].ctx, d, &hook_done));
            done &= hook_done;
        }
        if (done) break;
    }
    if (strux_comm_rank(d->p.comm) != 0) return STRUX_OK; /* the run's warnings, once */
    if (d->opt.tol > 0 && d->cert.gap > d->opt.tol * d->cert.primal &&
        !strux_solver_converged(d->p.solver))
        strux_log(STRUX_LOG_WARN,
                  "not converged: after %lld epochs the duality gap %.3e is %.3g x the primal "
                  "%.6g, above solver.tol %g (raise solver.epochs)",
                  (long long)d->epoch, d->cert.gap, d->cert.gap / d->cert.primal, d->cert.primal,
                  d->opt.tol);
    if (!(strux_solver_caps(d->p.solver) & STRUX_CAP_DUAL))
        strux_log(STRUX_LOG_WARN,
                  "solver.type = %s certifies no duality gap: the primal after the last epoch is "
                  "%.6g; how far it is from the optimum is unknown (solvers with a dual, which "
                  "stop on solver.tol: %s)",
                  strux_solver_name(d->p.solver), d->cert.primal,
                  strux_solver_names(STRUX_CAP_DUAL));
    return STRUX_OK;
}

/* ---- checkpoints ---- */

void strux_driver_stamp_info(strux_driver *d)
{
    strux_model_info *in = d->p.info;
    time_t now = time(NULL);
    strftime(in->created, sizeof in->created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    in->wall_time_s = d->wall0_s + strux_time_now() - d->t_start;
}

/* The state every rank shares: every hook's (tagged by name) and the solver's global part. */
static strux_status save_shared(const strux_driver *d, strux_blob *b)
{
    for (int h = 0; h < d->n_hooks; h++) {
        char name[32] = {0};
        snprintf(name, sizeof name, "%s", d->hook[h].name);
        STRUX_TRY(strux_blob_put(b, name, sizeof name));
        if (d->hook[h].save) STRUX_TRY(d->hook[h].save(d->hook[h].ctx, b));
    }
    return strux_solver_save(d->p.solver, b);
}

static strux_status load_shared(strux_driver *d, strux_blob *b)
{
    for (int h = 0; h < d->n_hooks; h++) {
        char name[32];
        STRUX_TRY(strux_blob_get(b, name, sizeof name, "hook name"));
        name[sizeof name - 1] = '\0';
        STRUX_CHECK(strncmp(name, d->hook[h].name, sizeof name - 1) == 0, STRUX_ERR_CONFIG,
                    "the checkpoint holds the state of outer loop '%s' where this run has '%s'",
                    name, d->hook[h].name);
        if (d->hook[h].load) STRUX_TRY(d->hook[h].load(d->hook[h].ctx, b));
    }
    return strux_solver_load(d->p.solver, b);
}

/* This rank's examples' state records, keyed by global example id: [first][n][n + 1 offsets]
 * then the records, each the solver's and the search's state of one example (so a checkpoint
 * loads into any rank count and any data blocks). */
static strux_status save_examples(const strux_driver *d, strux_blob *b)
{
    const strux_dataset *ds = d->p.train;
    int64_t n = ds->n_local, head[2] = {ds->first, n};
    STRUX_TRY(strux_blob_put(b, head, sizeof head));
    size_t offsets_at = b->n, data_at = offsets_at + ((size_t)n + 1) * sizeof(int64_t);
    STRUX_TRY(strux_blob_put(b, NULL, data_at - offsets_at));
    for (int64_t i = 0; i <= n; i++) {
        int64_t off = (int64_t)(b->n - data_at);
        memcpy(b->data + offsets_at + (size_t)i * sizeof off, &off, sizeof off);
        if (i == n) break;
        STRUX_TRY(strux_solver_save_examples(d->p.solver, i, i + 1, b));
        STRUX_TRY(strux_search_save(d->p.search, i, i + 1, b));
    }
    return STRUX_OK;
}

/* strux_comm_collect's sink on rank 0: a rank's records into the checkpoint (ranks hold
 * ascending example ranges, so they arrive in example order). */
static strux_status add_examples(void *ctx, int rank, const void *data, size_t n)
{
    int64_t head[2];
    STRUX_CHECK(n >= sizeof head, STRUX_ERR_INTERNAL, "truncated example records of rank %d", rank);
    memcpy(head, data, sizeof head);
    size_t table = ((size_t)head[1] + 1) * sizeof(int64_t);
    STRUX_CHECK(head[1] >= 0 && n >= sizeof head + table, STRUX_ERR_INTERNAL,
                "truncated example records of rank %d", rank);
    const unsigned char *p = data;
    int64_t *offsets = NULL;
    STRUX_TRY(strux_alloc_array(&offsets, (size_t)head[1] + 1, sizeof *offsets));
    memcpy(offsets, p + sizeof head, table);
    strux_status st = STRUX_OK;
    if ((uint64_t)offsets[head[1]] != n - sizeof head - table)
        st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                             "example records of rank %d: %lld bytes announced, %zu sent", rank,
                             (long long)offsets[head[1]], n - sizeof head - table);
    if (st == STRUX_OK)
        st = strux_io_checkpoint_add_examples(ctx, head[0], head[1], offsets,
                                              p + sizeof head + table);
    strux_free(&offsets);
    return st;
}

strux_status strux_driver_checkpoint(strux_driver *d)
{
    strux_comm *comm = d->p.comm;
    strux_comm_set_phase(comm, "the checkpoint write");
    STRUX_TRY(strux_solver_prepare_save(d->p.solver));
    /* between two rounds of an epoch: the oracle calls and the time of its part so far */
    int64_t calls = d->calls;
    double train_s = d->train_s;
    if (d->in_epoch) {
        int64_t part = strux_task_oracle_calls(d->p.task) - d->epoch_c0;
        STRUX_TRY(strux_comm_allreduce_sum_i64(comm, &part, 1));
        calls += part;
        train_s += strux_time_now() - d->epoch_t0;
    }
    strux_blob shared = {0}, records = {0};
    strux_model *exported = NULL;
    strux_checkpoint_writer *w = NULL;
    /* the model file inside the checkpoint is complete: a kernel model's expansion too */
    strux_status st = strux_solver_export_info(d->p.solver, d->p.info);
    if (st == STRUX_OK) st = save_examples(d, &records);
    if (st == STRUX_OK && strux_comm_rank(comm) == 0) {
        const strux_model *m = d->p.model;
        strux_checkpoint_info ck = {.epoch = d->epoch,
                                    .n_ranks = strux_comm_size(comm),
                                    .n_blocks = strux_dataset_n_blocks(d->p.train),
                                    .n_examples = d->p.train->n_global,
                                    .train_s = train_s,
                                    .oracle_calls = calls,
                                    .data_fingerprint = d->fingerprint};
        st = save_shared(d, &shared);
        /* with data.scale the exported weights differ from the training ones: both are kept */
        if (st == STRUX_OK && d->p.col_scale) st = strux_model_create_like(m, &exported);
        if (st == STRUX_OK && exported) st = strux_driver_export(d, exported);
        if (st == STRUX_OK) {
            strux_driver_stamp_info(d);
            st = strux_io_checkpoint_begin(d->opt.checkpoint, exported ? exported : m, d->p.info,
                                           m, &ck, &shared, &w);
        }
    }
    st = strux_comm_agree(comm, st);
    if (st == STRUX_OK) st = strux_comm_collect(comm, records.data, records.n, add_examples, w);
    if (strux_comm_rank(comm) == 0) st = strux_io_checkpoint_end(&w, st);
    strux_model_destroy(&exported);
    strux_blob_free(&shared);
    strux_blob_free(&records);
    STRUX_TRY(strux_comm_agree(comm, st));
    d->last_checkpoint = strux_time_now();
    int64_t at = strux_solver_epoch_position(d->p.solver);
    if (at > 0)
        strux_log(STRUX_LOG_INFO, "checkpoint at example %lld of %lld of epoch %lld written to %s",
                  (long long)at, (long long)d->p.train->n_global, (long long)d->epoch + 1,
                  d->opt.checkpoint);
    else
        strux_log(STRUX_LOG_INFO, "checkpoint after epoch %lld written to %s", (long long)d->epoch,
                  d->opt.checkpoint);
    return STRUX_OK;
}

/* A blob must be read to its end: anything left was written by another strux or other options. */
static strux_status consumed(const strux_blob *b, const char *path, const char *what)
{
    STRUX_CHECK(b->pos == b->n, STRUX_ERR_INPUT,
                "%s: %zu bytes of the %s left unread (written by another strux or with other "
                "options)",
                path, b->n - b->pos, what);
    return STRUX_OK;
}

/* This rank's examples' records from the checkpoint into the solver and the search, one
 * example at a time (each record must be read to its end). */
static strux_status load_examples(strux_driver *d, const char *path)
{
    const strux_dataset *ds = d->p.train;
    int64_t n = ds->n_local, *offsets = NULL;
    strux_blob b = {0};
    strux_status st = strux_alloc_array(&offsets, (size_t)n + 1, sizeof *offsets);
    if (st == STRUX_OK) st = strux_io_checkpoint_read_examples(path, ds->first, n, offsets, &b);
    size_t end = b.n;
    for (int64_t i = 0; i < n && st == STRUX_OK; i++) {
        b.pos = (size_t)offsets[i];
        b.n = (size_t)offsets[i + 1]; /* a record cannot read into the next */
        st = strux_solver_load_examples(d->p.solver, i, i + 1, &b);
        if (st == STRUX_OK) st = strux_search_load(d->p.search, i, i + 1, &b);
        if (st == STRUX_OK) st = consumed(&b, path, "state of an example");
    }
    b.n = end;
    strux_blob_free(&b);
    strux_free(&offsets);
    return st;
}

/* Keys that may differ between a checkpoint and its resumed run: limits, outputs, the paths of
 * the data (the fingerprint checks what they hold) and job settings. */
static int may_differ(const char *key)
{
    static const char *const keys[] = {"solver.epochs",        "solver.tol",   "solver.time_limit",
                                       "solver.certify_every", "data.train",   "data.test",
                                       "data.label_names",     "data.weights", "model.share",
                                       NULL};
    if (strncmp(key, "output.", 7) == 0 || strncmp(key, "run.", 4) == 0) return 1;
    for (const char *const *k = keys; *k; k++)
        if (strcmp(*k, key) == 0) return 1;
    return 0;
}

/* The options that shape the trajectory must be the checkpoint's: every key of its resolved
 * config (INI text) but those above has this run's value. */
static strux_status same_options(const char *path, const char *theirs, const char *ours)
{
    if (!theirs || !ours) return STRUX_OK;
    char section[64] = "", line[STRUX_OPT_STR + 128], key[160], mine[STRUX_OPT_STR];
    for (const char *p = theirs; *p;) {
        size_t n = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        p += n + (p[n] == '\n');
        if (line[0] == '[') {
            snprintf(section, sizeof section, "%.*s", (int)strcspn(line + 1, "]"), line + 1);
            continue;
        }
        char *eq = strstr(line, " = ");
        if (!eq) continue;
        *eq = '\0';
        if (strlen(section) + strlen(line) + 2 > sizeof key) continue; /* not a key of ours */
        snprintf(key, sizeof key, "%.63s.%.95s", section, line);
        const char *value = eq + 3;
        if (may_differ(key)) continue;
        if (!strux_opt_ini_get(ours, key, mine, sizeof mine)) mine[0] = '\0';
        STRUX_CHECK(strcmp(value, mine) == 0, STRUX_ERR_CONFIG,
                    "%s: written with %s = %s; this run has %s = %s (a resumed run keeps the "
                    "options that shape its trajectory; change only limits and outputs)",
                    path, key, value, key, mine);
    }
    return STRUX_OK;
}

/* The checkpoint's label-tree ensemble (task rta, /rta) must be the one this run drew from the
 * same task.* options: its weight rows and dual blocks are indexed by those trees' union edges, so
 * another sampler or tree count would resume a different model silently. */
static strux_status same_trees(const char *path, const strux_tree_set *theirs,
                               const strux_tree_set *ours)
{
    if (theirs->n_trees == 0 && ours->n_trees == 0) return STRUX_OK;
    size_t per = theirs->n_labels > 1 ? 2 * (size_t)(theirs->n_labels - 1) : 0;
    int same = theirs->n_trees == ours->n_trees && theirs->n_labels == ours->n_labels &&
               theirs->n_edges == ours->n_edges && theirs->kbest == ours->kbest;
    same = same && memcmp(theirs->trees, ours->trees,
                          (size_t)theirs->n_trees * per * sizeof *ours->trees) == 0;
    same = same && memcmp(theirs->edges, ours->edges,
                          2 * (size_t)theirs->n_edges * sizeof *ours->edges) == 0;
    same = same &&
           memcmp(theirs->mult, ours->mult, (size_t)theirs->n_edges * sizeof *ours->mult) == 0;
    STRUX_CHECK(same, STRUX_ERR_INPUT,
                "%s: its /rta trees (%d trees, %d union edges, kbest %lld) are not the ones this "
                "run drew (%d trees, %d union edges, kbest %lld from task.tree_seed = %lld): the "
                "checkpoint does not belong to this task",
                path, theirs->n_trees, theirs->n_edges, (long long)theirs->kbest, ours->n_trees,
                ours->n_edges, (long long)ours->kbest, (long long)ours->tree_seed);
    return STRUX_OK;
}

/* The checkpoint's curve, weights (training space), position, shared state and this rank's data
 * blocks. The run must match the one that wrote it: same task, solver, record columns and data
 * blocks (any rank count that can share them). */
static strux_status restore(strux_driver *d, const char *path)
{
    strux_comm *comm = d->p.comm;
    strux_model_info *in = d->p.info;
    const strux_dataset *ds = d->p.train;
    strux_model *m = NULL;
    strux_model_info info;
    strux_checkpoint_info ck;
    strux_blob shared = {0};
    strux_status st = strux_io_model_load(path, &m, &info);
    if (st == STRUX_OK &&
        (strcmp(info.task, in->task) != 0 || strcmp(info.solver, in->solver) != 0))
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "%s: a checkpoint of task %s with solver %s; this run has task %s "
                             "with solver %s",
                             path, info.task, info.solver, in->task, in->solver);
    if (st == STRUX_OK && info.n_labels != in->n_labels)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: written for %d labels; this run's training data %s has %d",
                             path, info.n_labels, ds->path, in->n_labels);
    if (st == STRUX_OK) st = same_trees(path, &info.trees, &in->trees);
    if (st == STRUX_OK && info.curve.n_cols != in->curve.n_cols)
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "%s: its training curve has %d columns, this run's %d (data.test "
                             "or the outer loop differs?)",
                             path, info.curve.n_cols, in->curve.n_cols);
    if (st == STRUX_OK) st = strux_io_checkpoint_read(path, &ck, d->p.model, &shared);
    if (st == STRUX_OK && ck.n_examples != ds->n_global)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: holds the state of %lld examples; this run's training data %s "
                             "has %lld",
                             path, (long long)ck.n_examples, ds->path, (long long)ds->n_global);
    if (st == STRUX_OK && ck.data_fingerprint != d->fingerprint)
        st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                             "%s: written for other training data (fingerprint %016llx; this "
                             "run's %s has %016llx): another file, other rows or other data.* "
                             "options; resume with the data it was written for",
                             path, (unsigned long long)ck.data_fingerprint, ds->path,
                             (unsigned long long)d->fingerprint);
    if (st == STRUX_OK) st = same_options(path, info.config, in->config);
    if (st == STRUX_OK) st = load_shared(d, &shared);
    if (st == STRUX_OK) st = consumed(&shared, path, "shared state");
    if (st == STRUX_OK) st = load_examples(d, path);
    if (st == STRUX_OK) {
        strux_curve_free(&in->curve);
        in->curve = info.curve;
        info.curve = (strux_curve){0};
        d->epoch = ck.epoch;
        d->calls = ck.oracle_calls;
        d->train_s = ck.train_s;
        d->wall0_s = info.wall_time_s;
    }
    strux_blob_free(&shared);
    strux_model_destroy(&m);
    strux_model_info_free(&info);
    STRUX_TRY(strux_comm_agree(comm, st));
    int64_t at = strux_solver_epoch_position(d->p.solver);
    if (at > 0)
        strux_log(STRUX_LOG_INFO, "resumed from %s at example %lld of %lld of epoch %lld", path,
                  (long long)at, (long long)ds->n_global, (long long)d->epoch + 1);
    else
        strux_log(STRUX_LOG_INFO, "resumed from %s after epoch %lld", path, (long long)d->epoch);
    if (ck.n_blocks != strux_dataset_n_blocks(ds) && strux_comm_rank(comm) == 0)
        strux_log(STRUX_LOG_WARN,
                  "%s was written with %d data block(s), this run has %d: it continues from the "
                  "checkpoint's dual point, but its path differs from an unbroken run's from here "
                  "(the optimum is the same); a fixed solver.blocks keeps one path on any rank "
                  "count",
                  path, ck.n_blocks, strux_dataset_n_blocks(ds));
    return STRUX_OK;
}

/* J(0) ≤ (1/W)·Σ v_i·max_y L(y, y_i): at w = 0 every margin is 0, so each example's surrogate is
 * at most its largest loss (slack_bicriteria.md §1.4, the loss-plane surrogates; a heuristic
 * scale for the Micro-F1 plane). */
static strux_status zero_bound(strux_driver *d)
{
    const strux_dataset *ds = d->p.train;
    strux_label y = {0};
    double sum = 0;
    strux_status st = strux_task_label_alloc(d->p.task, ds, &y);
    for (int64_t i = 0; st == STRUX_OK && i < ds->n_local; i++) {
        st = strux_task_truth(d->p.task, ds, i, &y);
        sum += strux_dataset_weight(ds, i) * strux_task_max_loss(d->p.task, &y);
    }
    strux_label_free(&y);
    STRUX_TRY(strux_comm_agree(d->p.comm, st));
    STRUX_TRY(strux_comm_allreduce_sum(d->p.comm, &sum, 1));
    d->zero_bound = sum / ds->weight_sum;
    return STRUX_OK;
}

strux_status strux_driver_start(strux_driver *d, const char *resume)
{
    STRUX_TRY(strux_comm_agree(d->p.comm, lay_out_columns(d)));
    STRUX_TRY(zero_bound(d));
    int64_t halves[2];
    strux_dataset_fingerprint(d->p.train, halves);
    STRUX_TRY(strux_comm_allreduce_sum_i64(d->p.comm, halves, 2));
    d->fingerprint = (int64_t)((uint64_t)halves[0] + ((uint64_t)halves[1] << 32));
    return resume ? restore(d, resume) : STRUX_OK;
}

/* ---- evaluation ---- */

/* Append text and a newline to a growing buffer. */
static strux_status append_line(char **buf, size_t *len, size_t *cap, const char *text)
{
    size_t n = strlen(text);
    if (*len + n + 2 > *cap) {
        size_t c = (*cap ? *cap * 2 : 1 << 16) + n;
        STRUX_TRY(strux_realloc_array(buf, c, 1));
        *cap = c;
    }
    memcpy(*buf + *len, text, n);
    (*buf)[*len + n] = '\n';
    *len += n + 1;
    return STRUX_OK;
}

/* The row scores of local example i (the kernel expansion's, or the weights') into buf. */
static void row_scores(const strux_eval_request *rq, const strux_dataset *ds, int64_t i,
                       double *work, double *buf)
{
    if (rq->kexp)
        strux_kexp_scores(rq->kexp, &ds->x, i, ds->bias_col, work, buf);
    else
        strux_model_scores(rq->model, &ds->x, i, 0, strux_model_n_rows(rq->model), buf);
}

/* One example's row scores as a line of text. */
static strux_status append_scores(char **buf, size_t *len, size_t *cap, const double *v,
                                  int32_t n, char *line, size_t n_line)
{
    size_t used = 0;
    line[0] = '\0';
    for (int32_t k = 0; k < n && used < n_line; k++) {
        int w = snprintf(line + used, n_line - used, "%s%.17g", k ? " " : "", v[k]);
        if (w > 0) used += (size_t)w;
    }
    STRUX_CHECK(used < n_line, STRUX_ERR_INTERNAL, "a line of %d scores does not fit %zu bytes",
                (int)n, n_line);
    return append_line(buf, len, cap, line);
}

/* Local part: predict, accumulate the evaluation sums, and optionally format predictions and
 * scores. */
static strux_status score_shard(strux_task *t, const strux_eval_request *rq,
                                const strux_dataset *ds, double *acc, char **text, size_t *len,
                                char **scores, size_t *scores_len)
{
    strux_pot pot = {0};
    strux_label pred = {0}, truth = {0};
    size_t cap = 0, scores_cap = 0;
    char line[1 << 16];
    double *buf = NULL, *work = NULL;
    int32_t n_rows = rq->kexp ? rq->kexp->n_labels : strux_model_n_rows(rq->model);
    int by_scores = rq->kexp || scores;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_task_pot_alloc(t, ds, &pot), done);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &pred), done);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &truth), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&buf, (size_t)n_rows + 1, sizeof *buf), done);
    if (rq->kexp)
        STRUX_TRY_GOTO(st,
                       strux_alloc_array(&work, (size_t)strux_kexp_work_len(rq->kexp, ds->x.n_cols),
                                         sizeof *work),
                       done);
    for (int64_t i = 0; i < ds->n_local; i++) {
        if (by_scores) {
            row_scores(rq, ds, i, work, buf);
            STRUX_TRY_GOTO(st, strux_task_potentials_scores(t, ds, i, buf, &pot), done);
        } else {
            STRUX_TRY_GOTO(st, strux_task_potentials(t, rq->model, ds, i, &pot), done);
        }
        STRUX_TRY_GOTO(st, strux_task_predict(t, &pot, &pred), done);
        STRUX_TRY_GOTO(st, strux_task_truth(t, ds, i, &truth), done);
        STRUX_TRY_GOTO(st, strux_task_eval_add(t, &pred, &truth, acc), done);
        if (scores)
            STRUX_TRY_GOTO(
                st, append_scores(scores, scores_len, &scores_cap, buf, n_rows, line, sizeof line),
                done);
        if (!text) continue;
        STRUX_TRY_GOTO(st, strux_task_format_label(t, &pred, line, sizeof line), done);
        STRUX_TRY_GOTO(st, append_line(text, len, &cap, line), done);
    }
done:
    strux_pot_free(&pot);
    strux_label_free(&pred);
    strux_label_free(&truth);
    strux_free(&buf);
    strux_free(&work);
    return st;
}

strux_status strux_evaluate(strux_comm *comm, strux_task *t, const strux_model *m,
                            const strux_dataset *ds, strux_scores *out, char **text, size_t *len)
{
    strux_eval_request rq = {.model = m, .text = text, .len = len};
    return strux_evaluate_with(comm, t, ds, &rq, out);
}

/* Rank 0 gets every rank's bytes in rank order (example order). */
static strux_status gather_text(strux_comm *comm, const char *mine, size_t n, char **out,
                                size_t *len)
{
    void *all = NULL;
    STRUX_TRY(strux_comm_gather_bytes(comm, mine, n, 0, &all, len));
    *out = all;
    return STRUX_OK;
}

strux_status strux_evaluate_with(strux_comm *comm, strux_task *t, const strux_dataset *ds,
                                 const strux_eval_request *rq, strux_scores *out)
{
    int64_t n_acc = strux_task_eval_size(t);
    double *acc = NULL;
    char *mine = NULL, *mine_scores = NULL;
    size_t n_mine = 0, n_scores = 0;
    strux_status st = strux_alloc_array(&acc, (size_t)n_acc + 1, sizeof *acc);
    if (st == STRUX_OK)
        st = score_shard(t, rq, ds, acc, rq->text ? &mine : NULL, &n_mine,
                         rq->scores ? &mine_scores : NULL, &n_scores);
    STRUX_TRY_GOTO(st, strux_comm_agree(comm, st), done);
    STRUX_TRY_GOTO(st, strux_comm_allreduce_sum(comm, acc, n_acc), done);
    if (rq->text) STRUX_TRY_GOTO(st, gather_text(comm, mine, n_mine, rq->text, rq->len), done);
    if (rq->scores)
        STRUX_TRY_GOTO(st, gather_text(comm, mine_scores, n_scores, rq->scores, rq->scores_len),
                       done);
    st = strux_task_eval_report(t, acc, out);
done:
    strux_free(&acc);
    strux_free(&mine);
    strux_free(&mine_scores);
    return st;
}
