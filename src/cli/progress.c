/* cli/progress.c - what `strux train` shows while it runs: one compact line per epoch (epoch,
 * objective, duality gap when the solver has one, the headline held-out metric, training time,
 * ETA from the epoch rate) through the logger, printed from the driver's per-epoch record, and,
 * on rank 0 when stderr is a terminal, a live bar within the epoch driven by the solver's step
 * callback (strux_driver_set_progress), redrawn at most PROGRESS_REDRAW_S apart and erased before
 * the epoch line. When stderr is not a terminal (output.progress = auto), or with --quiet or
 * --log-json, only the log lines appear; output.progress = always draws the bar through a pipe
 * too (mpirun forwards rank 0's stderr through one, so the ranks cannot see the user's terminal).
 * The headline held-out metric is the first test_* column of the record (the task's first score),
 * shown in the epochs where the driver scored data.test. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_REDRAW_S 0.1 /* at most ~10 redraws per second */
#define PROGRESS_BAR_WIDTH 30 /* characters between the brackets */

struct strux_progress {
    int64_t epochs;      /* solver.epochs */
    int bar;             /* nonzero: draw the bar (rank 0, terminal, plain INFO logging) */
    int bar_shown;       /* a bar is on the screen and must be erased */
    int64_t epoch;       /* epoch in progress */
    double t_epoch;      /* its start */
    double t_first;      /* start of the first epoch of this process */
    int64_t epochs_done; /* epochs completed by this process (a resumed run counts anew) */
    double t_drawn;      /* last redraw */
};

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

strux_status strux_progress_create(strux_comm *comm, const strux_run_options *o,
                                   strux_progress **out)
{
    strux_progress *p;
    STRUX_TRY(strux_alloc(&p, sizeof *p));
    *out = p;
    p->epochs = o->solver.epochs;
    int want = strcmp(o->output.progress, "always") == 0 ||
               (strcmp(o->output.progress, "auto") == 0 && isatty(STDERR_FILENO));
    p->bar = want && strux_comm_rank(comm) == 0 && !strux_log_json() &&
             strux_log_level_get() >= STRUX_LOG_INFO;
    p->t_first = -1;
    return STRUX_OK;
}

void strux_progress_destroy(strux_progress **p)
{
    strux_free(p);
}

static void erase_bar(strux_progress *p)
{
    if (!p->bar_shown) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->bar_shown = 0;
}

void strux_progress_step(void *ctx, int64_t done, int64_t total)
{
    strux_progress *p = ctx;
    if (p->t_epoch == 0) p->t_epoch = p->t_drawn = strux_time_now(); /* the epoch's first step */
    if (p->t_first < 0) p->t_first = p->t_epoch;
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

void strux_progress_start(strux_progress *p, const strux_driver *d)
{
    p->epoch = strux_driver_epoch(d) + 1;
}

void strux_progress_record(strux_progress *p, const strux_driver *d, const strux_curve *c)
{
    const double *row = c->v + (c->n_rows - 1) * c->n_cols;
    int64_t epoch = strux_driver_epoch(d);
    double now = strux_time_now();
    if (epoch + 1 == p->epoch && p->epochs_done > 0) return; /* an outer step's record: no line */
    if (p->t_first < 0) p->t_first = now - row[strux_curve_column(c, "time_s")];
    p->epochs_done++;
    p->epoch = epoch + 1;
    p->t_epoch = 0;
    double eta = (now - p->t_first) / (double)p->epochs_done * (double)(p->epochs - epoch);
    double primal = row[strux_curve_column(c, "primal")], gap = row[strux_curve_column(c, "gap")];
    char objective[64] = "", gap_text[64] = "", test[128] = "", t_train[32], t_eta[32];
    if (!isnan(primal)) snprintf(objective, sizeof objective, "  objective %.6g", primal);
    if (!isnan(gap)) snprintf(gap_text, sizeof gap_text, "  gap %.3e", gap);
    for (int k = 0; k < c->n_cols; k++)
        if (strncmp(c->names[k], "test_", 5) == 0) { /* the headline: the first test_ column */
            if (!isnan(row[k])) snprintf(test, sizeof test, "  %s %.6g", c->names[k], row[k]);
            break;
        }
    format_duration(strux_driver_train_seconds(d), t_train, sizeof t_train);
    format_duration(eta, t_eta, sizeof t_eta);
    erase_bar(p);
    strux_log(STRUX_LOG_INFO, "epoch %lld/%lld%s%s%s  time %s  eta %s", (long long)epoch,
              (long long)p->epochs, objective, gap_text, test, t_train, t_eta);
}
