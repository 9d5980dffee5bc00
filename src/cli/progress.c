/* cli/progress.c - what `strux train` shows while it runs: one compact line per epoch (epoch,
 * objective, duality gap when the solver has one, the task's headline held-out metric, training
 * time, ETA from the epoch rate) through the logger, and, on rank 0 when stderr is a terminal, a
 * live bar within the epoch driven by the solver's step callback (strux_solver_set_progress),
 * redrawn at most PROGRESS_REDRAW_S apart and erased before the epoch line. When stderr is not a
 * terminal (output.progress = auto), or with --quiet or --log-json, only the log lines appear;
 * output.progress = always draws the bar through a pipe too (mpirun forwards rank 0's stderr
 * through one, so the ranks cannot see the user's terminal).
 * Held-out scoring: data.test (loaded once by the driver) is scored every output.eval_every
 * epochs and after the last one, with the weights as they will be exported (data.scale factors
 * folded in, as train.c does before saving), so the per-epoch values are those `strux eval` would
 * report for a model saved at that epoch. Every metric of the task's report except the count "n"
 * becomes a curve column "test_<metric>" (NaN in epochs not scored); the report's first member is
 * the task's headline metric, the one shown on the epoch line. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_REDRAW_S 0.1 /* at most ~10 redraws per second */
#define PROGRESS_BAR_WIDTH 30 /* characters between the brackets */
#define PROGRESS_MAX_METRICS 8
#define PROGRESS_NAME_BYTES 64

struct strux_progress {
    strux_comm *comm;          /* borrowed */
    strux_task *task;          /* borrowed */
    const strux_model *m;      /* borrowed: the model the solver writes */
    const double *col_scale;   /* borrowed: data.scale factors per column, or NULL */
    const strux_dataset *test; /* borrowed: data.test, or NULL */
    strux_model *folded;       /* m with col_scale folded in (only when col_scale is set) */
    int64_t epochs;            /* solver.epochs */
    int64_t eval_every;        /* output.eval_every */
    int bar;                   /* nonzero: draw the bar (rank 0, terminal, plain INFO logging) */
    int bar_shown;             /* a bar is on the screen and must be erased */
    int64_t epoch;             /* epoch in progress */
    double t_epoch;            /* its start */
    double t_first;            /* start of the first epoch of this process */
    int64_t epochs_done;       /* epochs completed by this process (a resumed run counts anew) */
    double t_drawn;            /* last redraw */
    int n_metrics;             /* held-out metrics that get a column */
    char metric[PROGRESS_MAX_METRICS][PROGRESS_NAME_BYTES];     /* their names */
    char column[PROGRESS_MAX_METRICS][PROGRESS_NAME_BYTES + 8]; /* "test_<name>" */
    const char *columns[STRUX_CURVE_MAX_COLS + 1];              /* base + test_ columns */
};

/* Next `"name": number` member of a flat JSON object body at *s; 0 at the end. Members whose
 * value is not a number are skipped. */
static int next_member(const char **s, char *name, size_t n, double *value)
{
    for (;;) {
        const char *q = strchr(*s, '"');
        if (!q) return 0;
        const char *e = strchr(q + 1, '"');
        if (!e) return 0;
        size_t len = (size_t)(e - q - 1) < n - 1 ? (size_t)(e - q - 1) : n - 1;
        memcpy(name, q + 1, len);
        name[len] = '\0';
        const char *v = e + 1;
        while (*v == ' ' || *v == ':')
            v++;
        char *end;
        *value = strtod(v, &end);
        *s = end;
        if (end != v) return 1;
        *s = v + strcspn(v, ",}"); /* not a number: skip the member */
        if (!**s) return 0;
    }
}

static void format_duration(double s, char *buf, size_t n)
{
    if (!(s >= 0) || s > 1e8)
        snprintf(buf, n, "?");
    else if (s < 10)
        snprintf(buf, n, "%.2fs", s);
    else if (s < 60)
        snprintf(buf, n, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* Names of the task's held-out metrics: its report on an empty accumulator. */
static strux_status find_metrics(strux_progress *p)
{
    double *acc = NULL;
    char body[8192];
    STRUX_TRY(strux_alloc_array(&acc, (size_t)strux_task_eval_size(p->task) + 1, sizeof *acc));
    strux_status st = strux_task_eval_report(p->task, acc, body, sizeof body);
    strux_free(&acc);
    STRUX_TRY(st);
    const char *s = body;
    char name[PROGRESS_NAME_BYTES];
    double v;
    while (next_member(&s, name, sizeof name, &v) && p->n_metrics < PROGRESS_MAX_METRICS) {
        if (strcmp(name, "n") == 0) continue;
        snprintf(p->metric[p->n_metrics], sizeof p->metric[0], "%s", name);
        snprintf(p->column[p->n_metrics], sizeof p->column[0], "test_%s", name);
        p->n_metrics++;
    }
    return STRUX_OK;
}

strux_status strux_progress_create(strux_comm *comm, const strux_run_options *o, strux_task *t,
                                   const strux_model *m, const double *col_scale,
                                   const strux_dataset *test, strux_progress **out)
{
    strux_progress *p;
    STRUX_TRY(strux_alloc(&p, sizeof *p));
    *out = p;
    p->comm = comm;
    p->task = t;
    p->m = m;
    p->col_scale = col_scale;
    p->test = test;
    p->epochs = o->solver.epochs;
    p->eval_every = o->output.eval_every;
    int want = strcmp(o->output.progress, "always") == 0 ||
               (strcmp(o->output.progress, "auto") == 0 && isatty(STDERR_FILENO));
    p->bar = want && strux_comm_rank(comm) == 0 && !strux_log_json() &&
             strux_log_level_get() >= STRUX_LOG_INFO;
    p->t_first = -1;
    if (test) STRUX_TRY(find_metrics(p));
    if (test && col_scale) STRUX_TRY(strux_model_create(m->n_rows, m->dim, m->n_extra, &p->folded));
    return STRUX_OK;
}

void strux_progress_destroy(strux_progress **p)
{
    if (!*p) return;
    strux_model_destroy(&(*p)->folded);
    strux_free(p);
}

const char *const *strux_progress_columns(strux_progress *p, const char *const *base)
{
    int n = 0;
    while (base[n] && n < STRUX_CURVE_MAX_COLS)
        p->columns[n] = base[n], n++;
    if (n + p->n_metrics > STRUX_CURVE_MAX_COLS) p->n_metrics = STRUX_CURVE_MAX_COLS - n;
    for (int k = 0; k < p->n_metrics; k++)
        p->columns[n++] = p->column[k];
    p->columns[n] = NULL;
    return p->columns;
}

static void erase_bar(strux_progress *p)
{
    if (!p->bar_shown) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->bar_shown = 0;
}

void strux_progress_epoch_begin(strux_progress *p, int64_t epoch)
{
    p->epoch = epoch;
    p->t_epoch = p->t_drawn = strux_time_now();
    if (p->t_first < 0) p->t_first = p->t_epoch;
}

void strux_progress_step(void *ctx, int64_t done, int64_t total)
{
    strux_progress *p = ctx;
    if (!p->bar || total <= 0 || done >= total) return;
    double now = strux_time_now();
    if (now - p->t_drawn < PROGRESS_REDRAW_S) return;
    p->t_drawn = now;
    double frac = (double)done / (double)total;
    double elapsed = now - p->t_epoch;
    double per_epoch = p->epochs_done > 0 ? (p->t_epoch - p->t_first) / (double)p->epochs_done
                                          : (done > 0 ? elapsed / frac : NAN);
    double eta =
        (done > 0 ? elapsed * (1 - frac) / frac : NAN) + per_epoch * (double)(p->epochs - p->epoch);
    char bar[PROGRESS_BAR_WIDTH + 1], when[32];
    int full = (int)(frac * PROGRESS_BAR_WIDTH);
    for (int k = 0; k < PROGRESS_BAR_WIDTH; k++)
        bar[k] = k < full ? '#' : '.';
    bar[PROGRESS_BAR_WIDTH] = '\0';
    format_duration(eta, when, sizeof when);
    fprintf(stderr, "\r\033[Kepoch %lld/%lld [%s] %3d%%  %lld/%lld  eta %s", (long long)p->epoch,
            (long long)p->epochs, bar, (int)(100 * frac), (long long)done, (long long)total, when);
    fflush(stderr);
    p->bar_shown = 1;
}

/* Score data.test with the weights as exported; values[k] gets metric k. Collective. */
static strux_status score_test(strux_progress *p, double *values)
{
    const strux_model *m = p->m;
    if (p->folded) {
        STRUX_TRY(strux_model_copy(p->folded, m));
        for (int32_t k = 0; k < m->n_rows; k++)
            for (int32_t j = 0; j < m->dim; j++)
                strux_model_row(p->folded, k)[j] *= p->col_scale[j];
        m = p->folded;
    }
    char json[8192];
    STRUX_TRY(strux_cli_evaluate(p->comm, p->task, m, p->test, NULL, json, sizeof json));
    const char *s = json;
    char name[PROGRESS_NAME_BYTES];
    double v;
    while (next_member(&s, name, sizeof name, &v))
        for (int k = 0; k < p->n_metrics; k++)
            if (strcmp(name, p->metric[k]) == 0) values[k] = v;
    return STRUX_OK;
}

strux_status strux_progress_epoch_end(strux_progress *p, int64_t epoch, const strux_certificate *c,
                                      double train_s, double *tail)
{
    for (int k = 0; k < p->n_metrics; k++)
        tail[k] = NAN;
    int due = p->test && (epoch == p->epochs || (p->eval_every > 0 && epoch % p->eval_every == 0));
    if (due) STRUX_TRY(score_test(p, tail));
    double now = strux_time_now();
    p->epochs_done++;
    double eta = (now - p->t_first) / (double)p->epochs_done * (double)(p->epochs - epoch);
    char objective[64] = "", gap[64] = "", test[128] = "", t_train[32], t_eta[32];
    if (!isnan(c->primal)) snprintf(objective, sizeof objective, "  objective %.6g", c->primal);
    if (!isnan(c->gap)) snprintf(gap, sizeof gap, "  gap %.3e", c->gap);
    if (due && p->n_metrics > 0) snprintf(test, sizeof test, "  %s %.6g", p->column[0], tail[0]);
    format_duration(train_s, t_train, sizeof t_train);
    format_duration(eta, t_eta, sizeof t_eta);
    erase_bar(p);
    strux_log(STRUX_LOG_INFO, "epoch %lld/%lld%s%s%s  time %s  eta %s", (long long)epoch,
              (long long)p->epochs, objective, gap, test, t_train, t_eta);
    return STRUX_OK;
}
