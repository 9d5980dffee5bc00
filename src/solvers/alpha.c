/* solvers/alpha.c - the SSVM α update of the hierarchy task as a driver hook (hierarchical.md
 * §4.2, the shared-Frobenius SSVM (6.17)): the solver minimises over V with α fixed (the NHSVM form
 * with V in place of W, node n scored by √α_n·V_n·x), and every so often the hook takes
 * N_n = ‖U_n‖² = α_n·‖V_n‖², runs the corrected Algorithm 5 with the ε guard (task.alpha_floor)
 * on rank 0 (on a DAG its convex extension of §4.3, tasks/hier_alpha_dag.c, warm-started from the
 * current α: an extension of the thesis, and the log says so), broadcasts α′ and tells the task (scores √α′_n) and the solver
 * (strux_solver_rescale_rows with g_n = √(α′_n/α_n)): SGD divides V_n by g_n, so U stays and the
 * joint objective does not rise; the dual solvers keep their dual variables, which stay feasible,
 * so the duality gap of the next solve is a valid certificate (and the solve, to solver.tol,
 * forgets the start).
 * When: sgd, or a dual solver with solver.tol = 0: after every task.alpha_every epochs
 * (after_epoch; SGD's step count runs on); the run ends at the first update with
 * max |α′ − α| ≤ task.alpha_tol, or at solver.epochs.
 * A dual solver with solver.tol > 0: after each solve that reaches solver.tol (after_solve; the
 * driver then solves again, warm-started) or, whichever comes first, once task.alpha_every
 * epochs have passed since the last update without the solve converging (after_epoch, a
 * mid-solve update: a solve far from its tolerance must not hold α at its start for the whole
 * run). Each mid-solve update lengthens that wait by task.alpha_every (every, 2·every,
 * 3·every, ...; a converged solve resets it to task.alpha_every), so a solve that needs K
 * epochs at a fixed α is interrupted about √(2K / task.alpha_every) times and then converges:
 * updates at a fixed cadence can keep the gap above solver.tol for good (seen on
 * tests/e2e/hier_ssvm_dual.sh's data, 400 epochs without convergence at every 5), while a
 * doubling wait left imclef07a at 4 updates in 150 epochs, α still moving by 0.1. The run
 * ends only after a converged solve whose update moves no α_n by more than task.alpha_tol
 * (max |α′ − α|, the same criterion as above): the weights are then the converged solution
 * (U = √α·V, which the rescale keeps) and α its Algorithm 5 image to task.alpha_tol; a
 * mid-solve update never ends it. An epoch whose certificate already shows convergence leaves
 * the update to after_solve (the certificate is of the α before the update, so one update per
 * epoch). Otherwise the run ends at solver.epochs or solver.time_limit, with the driver's "not
 * converged" warning.
 * The rows are replicated, so rank 0 reads every ‖V_n‖² in O(1) from the store and no allreduce
 * is needed; α′ comes from rank 0 alone, so α is bitwise identical on every rank. A node whose α
 * is 0 has U_n = 0 and gets no gradient (its features are 0): it keeps α = 0 (the path
 * constraint is ≤ 1, and 0/0 = 0 leaves the value unchanged), which keeps the dual variables
 * feasible. The hook's state (α, the update count, the record values not yet reported, the
 * epoch of the last update and the current wait) rides in checkpoints, so a stopped run
 * resumes at the same round.
 * Record columns: alpha_change (max |α′ − α| of the update reported in this row, NaN between
 * updates) and alpha_s (its seconds: norms, Algorithm 5, broadcast, rescale). */
#include "strux/driver.h"
#include "strux/hierarchy.h"
#include "strux/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct strux_alpha_hook {
    strux_comm *comm;    /* borrowed */
    strux_task *task;    /* borrowed */
    strux_solver *solver; /* borrowed */
    strux_model *model;  /* borrowed: the solver's answer (V) */
    int after_solve;     /* 1: update after each converged solve, or `every` epochs after the
                          * last update; 0: every `every` epochs */
    int64_t every;       /* task.alpha_every */
    double solver_tol;   /* solver.tol (after_solve: what a converged certificate is) */
    int64_t last;        /* epoch of the last update (0: none yet) */
    int64_t wait;        /* after_solve: epochs without convergence before a mid-solve update */
    double tol;          /* task.alpha_tol */
    double floor;        /* task.alpha_floor: the ε guard */
    int32_t M;
    double *alpha;       /* [M] current α (= the task's) */
    double *next;        /* [M] α′ */
    double *N;           /* [M] ‖U_n‖² */
    double *work;        /* [M] Algorithm 5's scratch */
    double *g;           /* [M] row factors √(α′/α) */
    int64_t updates;     /* α updates done */
    double change, seconds; /* of the update not yet in a record row (NaN: none) */
    double value;        /* Σ N_n/α′_n of the last update (Algorithm 5's B[root]) */
    strux_alpha_dag *dag; /* the DAG update's structure (rank 0, DAGs only), or NULL */
};

static const char *const alpha_columns[] = {"alpha_change", "alpha_s", NULL};

/* One α update (Collective): α′ on rank 0, broadcast, the task and the solver follow. *change
 * gets max |α′ − α|. */
static strux_status alpha_update(strux_alpha_hook *a, double *change)
{
    double t0 = strux_time_now();
    const strux_hierarchy *h;
    STRUX_TRY(strux_task_hierarchy_state(a->task, &h, NULL));
    strux_status st = STRUX_OK;
    strux_alpha_dag_stats ds = {0};
    if (strux_comm_rank(a->comm) == 0) {
        for (int32_t n = 0; n < a->M; n++)
            a->N[n] = a->alpha[n] * strux_model_row_norm2(a->model, n);
        if (a->dag) { /* warm from the current α */
            st = strux_alpha_dag_solve(a->dag, a->N, a->alpha, a->floor, a->next, NULL, &ds);
            a->value = ds.value;
        } else {
            st = strux_alpha_shared_frobenius(h, a->N, a->floor, a->work, a->next, &a->value);
        }
        for (int32_t n = 0; st == STRUX_OK && n < a->M; n++)
            if (a->alpha[n] == 0) a->next[n] = 0; /* a dead node stays dead (see above) */
    }
    STRUX_TRY(strux_comm_agree(a->comm, st));
    STRUX_TRY(strux_comm_bcast(a->comm, a->next, (size_t)a->M * sizeof *a->next, 0));
    STRUX_TRY(strux_comm_bcast(a->comm, &a->value, sizeof a->value, 0));
    double d = 0;
    for (int32_t n = 0; n < a->M; n++) {
        d = fmax(d, fabs(a->next[n] - a->alpha[n]));
        a->g[n] = a->alpha[n] > 0 && a->next[n] > 0 ? sqrt(a->next[n] / a->alpha[n]) : 0.0;
    }
    STRUX_TRY(strux_task_hierarchy_set_alpha(a->task, a->next));
    STRUX_TRY(strux_solver_rescale_rows(a->solver, a->g));
    memcpy(a->alpha, a->next, (size_t)a->M * sizeof *a->alpha);
    a->updates++;
    *change = d;
    a->change = d;
    a->seconds = strux_time_now() - t0;
    if (a->dag)
        strux_log(STRUX_LOG_INFO,
                  "ssvm alpha update %lld (DAG: the convex extension of hierarchical.md §4.3, not "
                  "in the thesis): max |alpha' - alpha| = %.3e, sum ||U_n||^2/alpha_n = %.6g, "
                  "%lld Newton steps, KKT residual %.1e (%.3fs)",
                  (long long)a->updates, d, a->value, (long long)ds.newton, ds.kkt, a->seconds);
    else
        strux_log(STRUX_LOG_INFO,
                  "ssvm alpha update %lld: max |alpha' - alpha| = %.3e, sum ||U_n||^2/alpha_n = "
                  "%.6g (%.3fs)",
                  (long long)a->updates, d, a->value, a->seconds);
    return STRUX_OK;
}

/* Does this epoch's certificate end the solve (the driver's test in strux_driver_solve)? A
 * NaN gap (no certificate this epoch) never does. */
static int solve_converged(const strux_alpha_hook *a, const strux_driver *d)
{
    const strux_certificate *c = strux_driver_last_certificate(d);
    return c->gap <= a->solver_tol * c->primal && !c->lower_bound;
}

static strux_status alpha_after_epoch(void *ctx, strux_driver *d, int *stop)
{
    strux_alpha_hook *a = ctx;
    const int64_t e = strux_driver_epoch(d);
    double change;
    if (a->after_solve) { /* a mid-solve update; never ends the run */
        if (e - a->last < a->wait || solve_converged(a, d)) return STRUX_OK;
        STRUX_TRY(alpha_update(a, &change));
        a->last = e;
        a->wait = a->wait > INT64_MAX - a->every ? a->wait : a->wait + a->every;
        return STRUX_OK;
    }
    if (e % a->every != 0) return STRUX_OK;
    STRUX_TRY(alpha_update(a, &change));
    a->last = e;
    if (change <= a->tol) *stop = 1;
    return STRUX_OK;
}

static strux_status alpha_after_solve(void *ctx, strux_driver *d, int *done)
{
    strux_alpha_hook *a = ctx;
    double change;
    STRUX_TRY(alpha_update(a, &change));
    a->last = strux_driver_epoch(d);
    a->wait = a->every; /* solves are short again: back to task.alpha_every */
    *done = change <= a->tol;
    if (*done)
        strux_log(STRUX_LOG_INFO,
                  "ssvm alpha settled after epoch %lld: the solve reached solver.tol %g and the "
                  "update moved no alpha by more than task.alpha_tol %g",
                  (long long)a->last, a->solver_tol, a->tol);
    return STRUX_OK;
}

static strux_status alpha_metrics(void *ctx, strux_driver *d, double *values)
{
    (void)d;
    strux_alpha_hook *a = ctx;
    values[0] = a->change;
    values[1] = a->seconds;
    a->change = a->seconds = NAN;
    return STRUX_OK;
}

static strux_status alpha_save(void *ctx, strux_blob *b)
{
    strux_alpha_hook *a = ctx;
    STRUX_TRY(strux_blob_put(b, &a->M, sizeof a->M));
    STRUX_TRY(strux_blob_put(b, &a->updates, sizeof a->updates));
    STRUX_TRY(strux_blob_put(b, &a->change, sizeof a->change));
    STRUX_TRY(strux_blob_put(b, &a->seconds, sizeof a->seconds));
    STRUX_TRY(strux_blob_put(b, &a->last, sizeof a->last));
    STRUX_TRY(strux_blob_put(b, &a->wait, sizeof a->wait));
    return strux_blob_put(b, a->alpha, (size_t)a->M * sizeof *a->alpha);
}

/* The checkpoint's α goes back into the task: the weights of the checkpoint are V at that α. */
static strux_status alpha_load(void *ctx, strux_blob *b)
{
    strux_alpha_hook *a = ctx;
    int32_t M;
    STRUX_TRY(strux_blob_get(b, &M, sizeof M, "alpha size"));
    STRUX_CHECK(M == a->M, STRUX_ERR_INPUT,
                "the checkpoint's SSVM alpha has %d nodes, this run's hierarchy %d", M, a->M);
    STRUX_TRY(strux_blob_get(b, &a->updates, sizeof a->updates, "alpha updates"));
    STRUX_TRY(strux_blob_get(b, &a->change, sizeof a->change, "alpha change"));
    STRUX_TRY(strux_blob_get(b, &a->seconds, sizeof a->seconds, "alpha seconds"));
    STRUX_TRY(strux_blob_get(b, &a->last, sizeof a->last, "alpha last update epoch"));
    STRUX_TRY(strux_blob_get(b, &a->wait, sizeof a->wait, "alpha mid-solve wait"));
    STRUX_TRY(strux_blob_get(b, a->alpha, (size_t)M * sizeof *a->alpha, "alpha"));
    return strux_task_hierarchy_set_alpha(a->task, a->alpha);
}

void strux_alpha_hook_destroy(strux_alpha_hook **out)
{
    strux_alpha_hook *a = *out;
    if (!a) return;
    strux_free(&a->alpha);
    strux_free(&a->next);
    strux_free(&a->N);
    strux_free(&a->work);
    strux_free(&a->g);
    strux_alpha_dag_destroy(&a->dag);
    strux_free(out);
}

static strux_status alpha_hook_build(strux_driver *d, strux_comm *comm, strux_task *t,
                                     strux_solver *s, strux_model *m,
                                     const strux_task_options *opt, double solver_tol,
                                     strux_alpha_hook *a)
{
    const strux_hierarchy *h;
    const double *alpha;
    STRUX_TRY(strux_task_hierarchy_state(t, &h, &alpha));
    STRUX_CHECK(strux_solver_can_rescale_rows(s), STRUX_ERR_CONFIG,
                "task.model = ssvm: solver.type = %s cannot follow the alpha update (its working "
                "state is not kept per weight row); use sgd, sdca or bcfw",
                strux_solver_name(s));
    a->comm = comm;
    a->task = t;
    a->solver = s;
    a->model = m;
    a->after_solve = (strux_solver_caps(s) & STRUX_CAP_DUAL) && solver_tol > 0;
    a->every = opt->alpha_every > 0 ? opt->alpha_every : 1;
    a->solver_tol = solver_tol;
    a->wait = a->every;
    a->tol = opt->alpha_tol;
    a->floor = opt->alpha_floor;
    a->M = h->n_nodes;
    a->change = a->seconds = a->value = NAN;
    STRUX_TRY(strux_alloc_array(&a->alpha, (size_t)a->M, sizeof *a->alpha));
    STRUX_TRY(strux_alloc_array(&a->next, (size_t)a->M, sizeof *a->next));
    STRUX_TRY(strux_alloc_array(&a->N, (size_t)a->M, sizeof *a->N));
    STRUX_TRY(strux_alloc_array(&a->work, (size_t)a->M, sizeof *a->work));
    STRUX_TRY(strux_alloc_array(&a->g, (size_t)a->M, sizeof *a->g));
    memcpy(a->alpha, alpha, (size_t)a->M * sizeof *a->alpha);
    if (!h->is_tree && strux_comm_rank(comm) == 0) {
        double t0 = strux_time_now();
        STRUX_TRY(strux_alpha_dag_create(h, &a->dag));
        strux_log(STRUX_LOG_INFO,
                  "ssvm on the DAG %s: alpha by the convex extension of hierarchical.md §4.3 (not "
                  "in the thesis, which runs SSVM on trees only), barrier Newton on a sparse "
                  "Cholesky of %lld entries (set up in %.2fs)",
                  h->path, (long long)strux_alpha_dag_factor_nnz(a->dag),
                  strux_time_now() - t0);
    }
    strux_driver_hook hook = {.name = "ssvm_alpha",
                              .ctx = a,
                              .columns = alpha_columns,
                              .after_epoch = alpha_after_epoch,
                              .after_solve = a->after_solve ? alpha_after_solve : NULL,
                              .metrics = alpha_metrics,
                              .save = alpha_save,
                              .load = alpha_load};
    return strux_driver_add_hook(d, &hook);
}

strux_status strux_alpha_hook_attach(strux_driver *d, strux_comm *comm, strux_task *t,
                                     strux_solver *s, strux_model *m,
                                     const strux_task_options *opt, double solver_tol,
                                     strux_alpha_hook **out)
{
    *out = NULL;
    if (!strux_task_hierarchy_learns_alpha(t)) return STRUX_OK;
    STRUX_TRY(strux_alloc(out, sizeof **out));
    strux_status st = alpha_hook_build(d, comm, t, s, m, opt, solver_tol, *out);
    if (st != STRUX_OK) strux_alpha_hook_destroy(out);
    return st;
}

const double *strux_alpha_hook_alpha(const strux_alpha_hook *a)
{
    return a->alpha;
}

int64_t strux_alpha_hook_updates(const strux_alpha_hook *a)
{
    return a->updates;
}
