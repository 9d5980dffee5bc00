/* tests/mpi/driver.c - the training driver under mpirun (run by tests/mpi/driver.sh at -np 1, 2,
 * 4): a toy outer loop in the driver's hooks (λ halves after every converged solve, three outer
 * steps, its own record column) trains yeast with SDCA. Checked: the record has the hook's column
 * with the λ of each epoch; a stop raised in the middle of the third outer step writes a
 * checkpoint, and the run resumed from it ends bit-identical to the uninterrupted one; the solve
 * after a λ change, warm-started, reaches the tolerance in fewer epochs than a solve from zero at
 * that λ. Rank 0 prints TAP lines for the whole job. */
#include "strux/driver.h"
#include "strux/io.h"

#include "mpi_check.h"
#include "test_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTER_STEPS 3 /* λ, λ/2, λ/4 */
#define TOL 1e-3      /* relative duality gap of each inner solve */
#define STOP_OUTER 2  /* the stop comes in the third outer step ... */
#define STOP_INNER 2  /* ... after its second epoch */

/* The outer loop: λ halves after each converged solve; its state is the outer step and the
 * epochs of the current solve (for the stop), and it reports λ per epoch. */
typedef struct halving {
    int64_t outer; /* outer steps completed */
    int64_t inner; /* epochs of the current solve */
    int64_t solve_epochs[OUTER_STEPS];
    volatile sig_atomic_t *stop; /* raised at (STOP_OUTER, STOP_INNER) when non-NULL */
} halving;

static strux_status halving_before(void *ctx, strux_driver *d)
{
    (void)d;
    halving *h = ctx;
    if (h->stop && h->outer == STOP_OUTER && h->inner == STOP_INNER) *h->stop = 15;
    return STRUX_OK;
}

static strux_status halving_after_epoch(void *ctx, strux_driver *d, int *stop)
{
    (void)d, (void)stop;
    halving *h = ctx;
    h->inner++;
    return STRUX_OK;
}

static strux_status halving_after_solve(void *ctx, strux_driver *d, int *done)
{
    halving *h = ctx;
    h->solve_epochs[h->outer] = h->inner;
    h->outer++;
    h->inner = 0;
    *done = h->outer >= OUTER_STEPS;
    if (*done) return STRUX_OK;
    strux_solver *s = strux_driver_solver(d);
    return strux_solver_set_lambda(s, strux_solver_lambda(s) / 2);
}

static strux_status halving_metrics(void *ctx, strux_driver *d, double *values)
{
    (void)ctx;
    values[0] = strux_solver_lambda(strux_driver_solver(d));
    return STRUX_OK;
}

static strux_status halving_save(void *ctx, strux_blob *b)
{
    halving *h = ctx;
    STRUX_TRY(strux_blob_put(b, &h->outer, sizeof h->outer));
    STRUX_TRY(strux_blob_put(b, &h->inner, sizeof h->inner));
    return strux_blob_put(b, h->solve_epochs, sizeof h->solve_epochs);
}

static strux_status halving_load(void *ctx, strux_blob *b)
{
    halving *h = ctx;
    STRUX_TRY(strux_blob_get(b, &h->outer, sizeof h->outer, "outer step"));
    STRUX_TRY(strux_blob_get(b, &h->inner, sizeof h->inner, "inner epoch"));
    return strux_blob_get(b, h->solve_epochs, sizeof h->solve_epochs, "solve epochs");
}

static const char *const halving_columns[] = {"outer_lambda", NULL};

/* Everything one run owns. */
typedef struct run {
    strux_dataset *ds;
    strux_task *task;
    strux_model *model;
    strux_search *search;
    strux_solver *solver;
    strux_driver *driver;
    strux_model_info info;
    halving h;
    volatile sig_atomic_t flag;
} run;

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

/* Build a run on yeast at λ; with_hook attaches the outer loop; resume may be NULL. */
static strux_status run_start(strux_comm *c, run *r, double lambda, int with_hook, const char *ckpt,
                              const char *resume)
{
    memset(r, 0, sizeof *r);
    strux_read_options ro = {.rank = strux_comm_rank(c), .n_ranks = strux_comm_size(c), .bias = 1};
    const char *data = getenv("STRUX_DATA");
    char path[4096];
    snprintf(path, sizeof path, "%s/yeast/yeast_train.svm.gz", data ? data : "../shared/data");
    STRUX_TRY(strux_comm_agree(c, strux_io_dataset_load(path, &ro, &r->ds)));
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
    strux_solver_options opt = {.lambda = lambda,
                                .epochs = 1000,
                                .seed = 1,
                                .certify_every = 1,
                                .local_passes = 1,
                                .tol = TOL};
    snprintf(opt.type, sizeof opt.type, "sdca");
    STRUX_TRY(strux_solver_create(&opt, r->task, r->search, r->ds, r->model, c, &r->solver));
    snprintf(r->info.task, sizeof r->info.task, "multilabel");
    snprintf(r->info.solver, sizeof r->info.solver, "sdca");
    STRUX_TRY(strux_strdup(&r->info.config, "[solver]\ntype = sdca\n"));
    r->info.n_labels = r->ds->n_labels;
    strux_driver_options dopt = {
        .epochs = 1000, .tol = TOL, .certify_every = 1, .checkpoint = ckpt};
    strux_driver_parts parts = {.comm = c,
                                .train = r->ds,
                                .task = r->task,
                                .search = r->search,
                                .solver = r->solver,
                                .model = r->model,
                                .info = &r->info};
    STRUX_TRY(strux_driver_create(&dopt, &parts, &r->driver));
    strux_driver_set_stop_flag(r->driver, &r->flag);
    if (with_hook) {
        strux_driver_hook hook = {.name = "halving",
                                  .ctx = &r->h,
                                  .columns = halving_columns,
                                  .before_epoch = halving_before,
                                  .after_epoch = halving_after_epoch,
                                  .after_solve = halving_after_solve,
                                  .metrics = halving_metrics,
                                  .save = halving_save,
                                  .load = halving_load};
        STRUX_TRY(strux_driver_add_hook(r->driver, &hook));
    }
    return strux_driver_start(r->driver, resume);
}

int main(int argc, char **argv)
{
    strux_comm *c = NULL;
    if (strux_comm_init(&argc, &argv, &c) != STRUX_OK) return 1;
    strux_log_setup(strux_comm_rank(c), STRUX_LOG_WARN, 0);
    const double lambda = 1e-2;
    char ckpt[4200];
    snprintf(ckpt, sizeof ckpt, "%s/driver-%d.ckpt.h5", argc > 1 ? argv[1] : "/tmp",
             strux_comm_size(c));

    /* the uninterrupted outer loop */
    run a;
    strux_status st = run_start(c, &a, lambda, 1, ckpt, NULL);
    if (st == STRUX_OK) st = strux_driver_run(a.driver);
    mpi_check(c, st == STRUX_OK, "the outer loop runs through the driver's hooks");
    const strux_curve *cv = strux_driver_curve(a.driver);
    int col = strux_curve_column(cv, "outer_lambda");
    int cols_ok = col >= 0 && cv->n_rows == strux_driver_epoch(a.driver) && a.h.outer == 3;
    for (int64_t r = 0; cols_ok && r < cv->n_rows; r++) {
        double v = cv->v[r * cv->n_cols + col];
        cols_ok = v == lambda || v == lambda / 2 || v == lambda / 4;
    }
    cols_ok = cols_ok && cv->v[(cv->n_rows - 1) * cv->n_cols + col] == lambda / 4;
    mpi_check(c, cols_ok, "the record has the hook's column outer_lambda, λ of every epoch");

    /* the same loop stopped in the middle of its third outer step, then resumed */
    run b;
    st = run_start(c, &b, lambda, 1, ckpt, NULL);
    b.h.stop = &b.flag;
    if (st == STRUX_OK) st = strux_driver_run(b.driver);
    int stopped =
        st == STRUX_ERR_INTERRUPTED && b.h.outer == STOP_OUTER && b.h.inner == STOP_INNER + 1;
    mpi_check(c, stopped, "a stop in the third outer step ends the run with a checkpoint");
    strux_error_clear();
    run_free(&b);
    st = run_start(c, &b, lambda, 1, ckpt, ckpt);
    int resumed_at = st == STRUX_OK && b.h.outer == STOP_OUTER && b.h.inner == STOP_INNER + 1;
    if (st == STRUX_OK) st = strux_driver_run(b.driver);
    mpi_check(c, resumed_at && st == STRUX_OK,
              "the resumed run starts at the same outer and inner step");
    double diff = st == STRUX_OK ? test_model_max_rel_diff(a.model, b.model) : INFINITY;
    mpi_check(c,
              diff == 0 && strux_driver_epoch(a.driver) == strux_driver_epoch(b.driver) &&
                  strux_solver_lambda(b.solver) == lambda / 4,
              "the resumed run ends bit-identical to the uninterrupted one");
    if (strux_comm_rank(c) == 0 && diff != 0) printf("# max relative difference %g\n", diff);
    run_free(&b);

    /* solve(eps) from the warm start after a λ change against one from zero at that λ */
    run z;
    int converged = 0;
    st = run_start(c, &z, lambda / 2, 0, ckpt, NULL);
    if (st == STRUX_OK) st = strux_driver_solve(z.driver, TOL, 1000, &converged);
    int64_t cold = strux_driver_epoch(z.driver), warm = a.h.solve_epochs[1];
    mpi_check(c, st == STRUX_OK && converged && warm < cold,
              "solve(eps) after λ/2 from the warm start needs fewer epochs than from zero");
    if (strux_comm_rank(c) == 0)
        printf("# epochs per solve: %lld, %lld, %lld (warm); from zero at λ/2: %lld\n",
               (long long)a.h.solve_epochs[0], (long long)a.h.solve_epochs[1],
               (long long)a.h.solve_epochs[2], (long long)cold);
    run_free(&z);
    run_free(&a);
    if (strux_comm_rank(c) == 0) remove(ckpt);
    strux_comm_finalize(&c);
    return 0;
}
