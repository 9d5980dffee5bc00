/* tests/mpi/rounds.c - long epochs (issue 19): a stop between the CoCoA+ rounds of an epoch and
 * the resume at another rank count, through the training driver (solvers/driver.c) on yeast with
 * SDCA and BCFW, solver.sync_every = 250 (six rounds an epoch), at the fixed solver.blocks = 4.
 * Run by tests/mpi/rounds.sh as a chain of mpirun jobs sharing one directory: stage `first` at
 * -np 2, `middle` at -np 1, `last` at -np 4. The stop is raised from the progress callback at a
 * fixed example of a fixed epoch, so it lands at the same round at any rank count. Checked:
 *   - first and middle, per solver: the stopped run writes its checkpoint between two rounds of
 *     epoch 2 (its position: example 750 of 1500) and ends with STRUX_ERR_INTERRUPTED; the run
 *     resumed from it at the same rank count ends bit-identical to the unbroken run (weights,
 *     primal);
 *   - middle: the checkpoint of the -np 2 job resumes at -np 1 (the examples' state re-sharded by
 *     global id), stops again between two rounds of epoch 4 and writes a new checkpoint;
 *   - last: that checkpoint resumes at -np 4 and ends equal (1e-9 relative; in fact
 *     bit-identical) to the unbroken -np 4 run: the chain -np 2 → 1 → 4 gives the unbroken model.
 * Rank 0 prints TAP lines for the whole job. */
#include "strux/driver.h"
#include "strux/io.h"

#include "mpi_check.h"
#include "test_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPOCHS 5
#define SYNC_EVERY 250 /* of 1500 examples: 6 rounds an epoch */
#define BLOCKS 4

/* Everything one run owns, and where its stop comes: in epoch stop_epoch + 1, once the epoch
 * has passed example stop_at (stop_epoch < 0: never). */
typedef struct run {
    strux_dataset *ds;
    strux_task *task;
    strux_model *model;
    strux_search *search;
    strux_solver *solver;
    strux_driver *driver;
    strux_model_info info;
    volatile sig_atomic_t flag;
    int64_t stop_epoch, stop_at;
} run;

static char dir[900];

static void run_free(run *r)
{
    strux_driver_destroy(&r->driver);
    strux_solver_destroy(&r->solver);
    strux_search_destroy(&r->search);
    strux_model_destroy(&r->model);
    strux_task_destroy(&r->task);
    strux_dataset_destroy(&r->ds);
    strux_model_info_free(&r->info);
}

/* The progress callback raises the stop flag at the run's stop point (every rank sees the same
 * global count). */
static void progress(void *ctx, int64_t done, int64_t total)
{
    (void)total;
    run *r = ctx;
    if (r->stop_epoch >= 0 && strux_driver_epoch(r->driver) == r->stop_epoch && done >= r->stop_at)
        r->flag = SIGTERM;
}

static strux_status run_start(strux_comm *c, run *r, const char *solver, const char *ckpt,
                              const char *resume)
{
    memset(r, 0, sizeof *r);
    r->stop_epoch = -1;
    strux_read_options ro = {.rank = strux_comm_rank(c),
                             .n_ranks = strux_comm_size(c),
                             .bias = 1,
                             .n_blocks = BLOCKS};
    STRUX_TRY(strux_comm_agree(c, strux_io_dataset_load(shared_data("yeast/yeast_train.svm.gz"),
                                                        &ro, &r->ds)));
    strux_task_options to = {0};
    snprintf(to.type, sizeof to.type, "multilabel");
    STRUX_TRY(strux_task_create(&to, &r->task));
    STRUX_TRY(strux_task_check(r->task, r->ds));
    int32_t rows;
    int64_t extra;
    STRUX_TRY(strux_task_model_shape(r->task, r->ds, &rows, &extra));
    STRUX_TRY(strux_model_create(rows, r->ds->dim, extra, STRUX_MODEL_PLAIN, &r->model));
    strux_search_options so;
    STRUX_TRY(strux_search_options_default(&so));
    STRUX_TRY(strux_search_create(&so, r->task, r->ds, &r->search));
    strux_solver_options opt = {.lambda = 1e-3,
                                .epochs = EPOCHS,
                                .seed = 1,
                                .certify_every = 1,
                                .local_passes = 1,
                                .blocks = BLOCKS,
                                .sync_every = SYNC_EVERY,
                                .shrinking = 1};
    snprintf(opt.type, sizeof opt.type, "%s", solver);
    STRUX_TRY(strux_solver_create(&opt, r->task, r->search, r->ds, r->model, c, &r->solver));
    snprintf(r->info.task, sizeof r->info.task, "multilabel");
    snprintf(r->info.solver, sizeof r->info.solver, "%s", solver);
    STRUX_TRY(strux_strdup(&r->info.config, "[solver]\nsync_every = 250\n"));
    r->info.n_labels = r->ds->n_labels;
    strux_driver_options dopt = {.epochs = EPOCHS, .certify_every = 1, .checkpoint = ckpt};
    strux_driver_parts parts = {.comm = c,
                                .train = r->ds,
                                .task = r->task,
                                .search = r->search,
                                .solver = r->solver,
                                .model = r->model,
                                .info = &r->info};
    STRUX_TRY(strux_driver_create(&dopt, &parts, &r->driver));
    strux_driver_set_stop_flag(r->driver, &r->flag);
    strux_driver_set_progress(r->driver, progress, r);
    return strux_driver_start(r->driver, resume);
}

/* Train to the end (or the stop); *primal gets the last certificate's primal. */
static strux_status train(run *r, double *primal)
{
    strux_status st = strux_driver_run(r->driver);
    *primal = strux_driver_last_certificate(r->driver)->primal;
    return st;
}

/* The checkpoint path of a solver and a stage, into p. */
static const char *ckpt_path(char *p, size_t n, const char *solver, const char *stage)
{
    snprintf(p, n, "%s/%s-%s.ckpt.h5", dir, solver, stage);
    return p;
}

/* A run stopped at (epoch, example): it ends interrupted with its checkpoint there. */
static int stopped_run(strux_comm *c, const char *solver, const char *resume, int64_t epoch,
                       int64_t at, const char *ckpt, const char *what)
{
    run r;
    double primal;
    strux_status st = run_start(c, &r, solver, ckpt, resume);
    r.stop_epoch = epoch;
    r.stop_at = at;
    if (st == STRUX_OK) st = train(&r, &primal);
    int64_t pos = strux_solver_epoch_position(r.solver);
    int ok = st == STRUX_ERR_INTERRUPTED && strux_driver_epoch(r.driver) == epoch && pos > at &&
             pos < r.ds->n_global && strstr(strux_error_message(), "stopped at example") != NULL;
    char line[256];
    snprintf(line, sizeof line, "%s: %s", solver, what);
    mpi_check(c, ok, line);
    if (!ok && strux_comm_rank(c) == 0)
        printf("# status %d, epoch %lld, position %lld: %s\n", (int)st,
               (long long)strux_driver_epoch(r.driver), (long long)pos, strux_error_message());
    strux_error_clear();
    run_free(&r);
    return ok;
}

/* Resume ckpt and train to the end; compare with the unbroken run u (weights, primal). */
static void resumed_run(strux_comm *c, const char *solver, const char *ckpt, const run *u,
                        double u_primal, double tol, const char *what)
{
    run r;
    double primal = NAN;
    strux_status st = run_start(c, &r, solver, NULL, ckpt);
    if (st == STRUX_OK) st = train(&r, &primal);
    double dw = st == STRUX_OK ? test_model_max_rel_diff(u->model, r.model) : INFINITY;
    int ok = st == STRUX_OK && strux_driver_epoch(r.driver) == EPOCHS && dw <= tol &&
             fabs(primal - u_primal) <= tol * fabs(u_primal);
    char line[256];
    snprintf(line, sizeof line, "%s: %s", solver, what);
    mpi_check(c, ok, line);
    if (strux_comm_rank(c) == 0)
        printf("# %s: max relative weight difference %.3g, primal %.17g vs %.17g\n", solver, dw,
               primal, u_primal);
    if (st != STRUX_OK && strux_comm_rank(c) == 0) printf("# %s\n", strux_error_message());
    strux_error_clear();
    run_free(&r);
}

int main(int argc, char **argv)
{
    strux_comm *c = NULL;
    if (strux_comm_init(&argc, &argv, &c) != STRUX_OK) return 1;
    strux_log_setup(strux_comm_rank(c), STRUX_LOG_WARN, 0);
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "/tmp");
    const char *stage = argc > 2 ? argv[2] : "first";
    const char *solvers[] = {"sdca", "bcfw"};
    for (int k = 0; k < 2; k++) {
        const char *s = solvers[k];
        run u;
        double u_primal = NAN;
        strux_status st = run_start(c, &u, s, NULL, NULL);
        if (st == STRUX_OK) st = train(&u, &u_primal);
        char line[128];
        snprintf(line, sizeof line, "%s: the unbroken run trains", s);
        mpi_check(c, st == STRUX_OK, line);
        char own[1024], first[1024], chain[1024];
        ckpt_path(own, sizeof own, s, stage);
        ckpt_path(first, sizeof first, s, "first");
        ckpt_path(chain, sizeof chain, s, "chain");
        if (strcmp(stage, "last") != 0) {
            /* a stop in epoch 2 after example 600: at the round boundary 750 */
            if (stopped_run(c, s, NULL, 1, 600, own,
                            "a stop between two rounds of epoch 2 writes its checkpoint there"))
                resumed_run(c, s, own, &u, u_primal, 0,
                            "resumed mid-epoch, ends bit-identical to the unbroken run");
        }
        if (strcmp(stage, "middle") == 0) /* the -np 2 job's checkpoint, then a stop in epoch 4 */
            stopped_run(c, s, first, 3, 1000, chain,
                        "the -np 2 checkpoint resumes here and stops again mid-epoch 4");
        if (strcmp(stage, "last") == 0)
            resumed_run(c, s, chain, &u, u_primal, 1e-9,
                        "the chain -np 2 -> 1 -> 4 ends with the unbroken run's model (1e-9)");
        run_free(&u);
    }
    strux_comm_finalize(&c);
    return 0;
}
