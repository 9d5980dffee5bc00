/* tests/mpi/hier_ssvm.c - the SSVM α update of the hierarchy task (solvers/alpha.c) under mpirun
 * (run by tests/mpi/hier_ssvm.sh at -np 1, 2, 4 with one scratch directory): a seeded tree of 15
 * nodes and 480 examples labelled by planted node weights (written once by the np 1 run), and the
 * same rows on a DAG of the same nodes (the tree and four extra parent edges, inner and leaf
 * nodes; the α update is then the convex extension of hierarchical.md §4.3). Checked, each at
 * every rank count and on both hierarchies:
 *   - sgd (α every 2 epochs) and sdca (α after each solve to solver.tol and mid-solve after 2,
 *     4, 6, ... epochs without one; solver.blocks = 4): a
 *     checking hook that runs after the α hook compares α with rank 0's bit for bit after every
 *     epoch and every solve, so after every update; α is updated at least twice, every leaf path
 *     of the learned α sums to 1 (Algorithm 5) and α moved away from the ρ = 2 start;
 *   - sdca: after every α update the dual solver's certificate stays a bound (gap ≥ 0), since
 *     strux_solver_rescale_rows keeps the dual variables feasible;
 *   - sgd: the rescale keeps the node scores √α_n·V_n·x (U fixed), checked on every example;
 *   - an sgd run stopped between two α updates and resumed from its checkpoint ends
 *     bit-identical (weights and α) to the uninterrupted run; an sdca run stopped mid-solve
 *     (between two mid-solve updates) ends at the same epoch after the same updates, weights and
 *     α to 1e-12 (see there why not bit for bit);
 *   - rank-count invariance: np 2 and 4 reach np 1's final sdca primal to 1e-9 relative and the
 *     same α to 1e-9 (np 1 writes them to the directory). */
#include "strux/driver.h"
#include "strux/hierarchy.h"
#include "strux/io.h"

#include "mpi_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_NODES 15
#define N_ROWS 480
#define DIM 12

static char dir[900];
static const char *kind = "tree"; /* the hierarchy of the current pass: tree (t.hier), dag (d.hier) */

/* A check's line names the hierarchy of the pass. */
static void check(strux_comm *c, int ok, const char *what)
{
    char line[512];
    snprintf(line, sizeof line, "%s: %s", kind, what);
    mpi_check(c, ok, line);
}

/* Tree: node k > 0 hangs below (k − 1)/2 (a complete binary tree of depth 4); labels: the leaf
 * whose path score Σ_{n∈Ā(l)} w_n·x is largest, w_n planted; the closure without the root. */
static void write_data(void)
{
    char p[1000];
    snprintf(p, sizeof p, "%s/t.hier", dir);
    FILE *f = fopen(p, "w");
    for (int k = 1; k < N_NODES; k++)
        fprintf(f, "%d %d\n", (k - 1) / 2, k);
    fclose(f);
    snprintf(p, sizeof p, "%s/d.hier", dir); /* second parents: 1 → 6, 2 → 7, 1 → 12, 4 → 13 */
    f = fopen(p, "w");
    for (int k = 1; k < N_NODES; k++)
        fprintf(f, "%d %d\n", (k - 1) / 2, k);
    fprintf(f, "1 6\n2 7\n1 12\n4 13\n");
    fclose(f);
    strux_rng r;
    strux_rng_init(&r, 5, 0, 0);
    double w[N_NODES][DIM];
    for (int n = 0; n < N_NODES; n++)
        for (int j = 0; j < DIM; j++)
            w[n][j] = strux_rng_normal(&r);
    snprintf(p, sizeof p, "%s/t.svm", dir);
    f = fopen(p, "w");
    for (int i = 0; i < N_ROWS; i++) {
        double x[DIM], s[N_NODES];
        for (int j = 0; j < DIM; j++)
            x[j] = strux_rng_normal(&r);
        int best = -1;
        for (int n = 0; n < N_NODES; n++) {
            s[n] = n ? s[(n - 1) / 2] : 0;
            for (int j = 0; j < DIM; j++)
                s[n] += w[n][j] * x[j];
            if (n >= 7 && (best < 0 || s[n] > s[best])) best = n;
        }
        if (strux_rng_below(&r, 10) == 0) best = 7 + (int)strux_rng_below(&r, 8); /* noise */
        fprintf(f, "%d,%d,%d", (best - 1) / 2 >= 1 ? ((best - 1) / 2 - 1) / 2 : 0, (best - 1) / 2,
                best);
        for (int j = 0; j < DIM; j++)
            fprintf(f, " %d:%.6f", j + 1, x[j]);
        fprintf(f, "\n");
    }
    fclose(f);
}

/* The checking hook: α bit-identical to rank 0's after every epoch and solve. */
typedef struct checker {
    strux_comm *comm;
    strux_alpha_hook **alpha;
    strux_task *task;
    int n_checks, n_bad;
    int gap_bad; /* sdca: a certificate after an update with a negative gap */
} checker;

static strux_status compare_alpha(checker *k)
{
    const double *a = strux_alpha_hook_alpha(*k->alpha);
    const strux_hierarchy *h;
    const double *ta;
    STRUX_TRY(strux_task_hierarchy_state(k->task, &h, &ta));
    double mine[N_NODES], root[N_NODES];
    memcpy(mine, a, sizeof mine);
    memcpy(root, a, sizeof root);
    STRUX_TRY(strux_comm_bcast(k->comm, root, sizeof root, 0));
    double bad = memcmp(mine, root, sizeof mine) != 0 || memcmp(mine, ta, sizeof mine) != 0;
    STRUX_TRY(strux_comm_allreduce_max(k->comm, &bad, 1));
    k->n_checks++;
    k->n_bad += bad != 0;
    return STRUX_OK;
}

static strux_status check_after_epoch(void *ctx, strux_driver *d, int *stop)
{
    (void)d, (void)stop;
    return compare_alpha(ctx);
}

static strux_status check_after_solve(void *ctx, strux_driver *d, int *done)
{
    checker *k = ctx;
    *done = 1; /* the α hook decides */
    STRUX_TRY(compare_alpha(k));
    strux_certificate c;
    STRUX_TRY(strux_solver_certificate(strux_driver_solver(d), &c));
    if (!(c.gap >= -1e-12 * fabs(c.primal))) k->gap_bad++;
    return STRUX_OK;
}

typedef struct run {
    strux_dataset *ds;
    strux_task *task;
    strux_model *model;
    strux_search *search;
    strux_solver *solver;
    strux_driver *driver;
    strux_alpha_hook *alpha;
    strux_model_info info;
    checker chk;
    volatile sig_atomic_t flag;
    double start[N_NODES]; /* α when the run was set up (the task's structural start) */
} run;

static void run_free(run *r)
{
    strux_driver_destroy(&r->driver);
    strux_alpha_hook_destroy(&r->alpha);
    strux_solver_destroy(&r->solver);
    strux_search_destroy(&r->search);
    strux_model_destroy(&r->model);
    strux_task_destroy(&r->task);
    strux_dataset_destroy(&r->ds);
    strux_model_info_free(&r->info);
}

static strux_status run_start(strux_comm *c, run *r, const char *solver, int64_t epochs,
                              const char *ckpt, const char *resume)
{
    memset(r, 0, sizeof *r);
    char p[1000];
    snprintf(p, sizeof p, "%s/t.svm", dir);
    strux_read_options ro = {.rank = strux_comm_rank(c),
                             .n_ranks = strux_comm_size(c),
                             .bias = 1,
                             .n_labels = N_NODES,
                             .n_blocks = 4};
    STRUX_TRY(strux_comm_agree(c, strux_io_dataset_load(p, &ro, &r->ds)));
    strux_task_options to = {.rho = 2, .dag_t = 1.5, .prune = 1, .alpha_every = 2,
                             .alpha_tol = 1e-4, .alpha_floor = 1e-8};
    snprintf(to.type, sizeof to.type, "hierarchy");
    snprintf(to.hierarchy, sizeof to.hierarchy, "%s/%c.hier", dir, kind[0]);
    snprintf(to.model, sizeof to.model, "ssvm");
    snprintf(to.labels, sizeof to.labels, "auto");
    snprintf(to.loss, sizeof to.loss, "auto");
    snprintf(to.margin, sizeof to.margin, "plain");
    snprintf(to.alpha, sizeof to.alpha, "rho");
    snprintf(to.root_alpha, sizeof to.root_alpha, "auto");
    snprintf(to.partial_paths, sizeof to.partial_paths, "stop");
    snprintf(to.lp_start, sizeof to.lp_start, "fresh");
    STRUX_TRY(strux_task_create(&to, &r->task));
    STRUX_TRY(strux_comm_agree(c, strux_task_check(r->task, r->ds)));
    int32_t rows;
    int64_t extra;
    STRUX_TRY(strux_task_model_shape(r->task, r->ds, &rows, &extra));
    STRUX_TRY(strux_model_create(rows, r->ds->dim, extra, STRUX_MODEL_PLAIN, &r->model));
    strux_search_options so;
    STRUX_TRY(strux_search_options_default(&so));
    STRUX_TRY(strux_search_create(&so, r->task, r->ds, &r->search));
    int dual = strcmp(solver, "sdca") == 0;
    strux_solver_options opt = {.lambda = 1e-2,
                                .epochs = epochs,
                                .seed = 1,
                                .certify_every = 1,
                                .local_passes = 1,
                                .blocks = 4,
                                .batch = 1,
                                .tol = dual ? 1e-2 : 0};
    snprintf(opt.type, sizeof opt.type, "%s", solver);
    STRUX_TRY(strux_solver_create(&opt, r->task, r->search, r->ds, r->model, c, &r->solver));
    snprintf(r->info.task, sizeof r->info.task, "hierarchy");
    snprintf(r->info.solver, sizeof r->info.solver, "%s", solver);
    STRUX_TRY(strux_strdup(&r->info.config, "[task]\nmodel = ssvm\n"));
    r->info.n_labels = r->ds->n_labels;
    strux_driver_options dopt = {
        .epochs = epochs, .tol = opt.tol, .certify_every = 1, .checkpoint = ckpt};
    strux_driver_parts parts = {.comm = c,
                                .train = r->ds,
                                .task = r->task,
                                .search = r->search,
                                .solver = r->solver,
                                .model = r->model,
                                .info = &r->info};
    STRUX_TRY(strux_driver_create(&dopt, &parts, &r->driver));
    strux_driver_set_stop_flag(r->driver, &r->flag);
    STRUX_TRY(strux_comm_agree(c, strux_alpha_hook_attach(r->driver, c, r->task, r->solver,
                                                          r->model, &to, opt.tol, &r->alpha)));
    STRUX_CHECK(r->alpha, STRUX_ERR_INTERNAL, "no alpha hook for task.model = ssvm");
    r->chk = (checker){.comm = c, .alpha = &r->alpha, .task = r->task};
    strux_driver_hook hook = {.name = "check",
                              .ctx = &r->chk,
                              .after_epoch = check_after_epoch,
                              .after_solve = dual ? check_after_solve : NULL};
    STRUX_TRY(strux_driver_add_hook(r->driver, &hook));
    const strux_hierarchy *h;
    const double *a0;
    STRUX_TRY(strux_task_hierarchy_state(r->task, &h, &a0));
    memcpy(r->start, a0, sizeof r->start);
    return strux_driver_start(r->driver, resume);
}

/* Every leaf path of α sums to 1 (up to the ε guard) and α differs from the start somewhere. */
static int alpha_learned(run *r)
{
    const strux_hierarchy *h;
    const double *a;
    if (strux_task_hierarchy_state(r->task, &h, &a) != STRUX_OK) return 0;
    double moved = 0;
    for (int32_t n = 0; n < h->n_nodes; n++)
        moved = fmax(moved, fabs(a[n] - r->start[n]));
    for (int32_t l = 0; l < h->n_leaves; l++) {
        double s = 0;
        for (int64_t k = h->anc_ptr[l]; k < h->anc_ptr[l + 1]; k++)
            s += a[h->anc_idx[k]];
        /* 1, or above by the ε guard's lifts (task.alpha_floor 1e-8 per node on the path) */
        double lifts = 1e-8 * (double)(h->anc_ptr[l + 1] - h->anc_ptr[l]);
        if (s < 1 - 1e-12 || s > 1 + 1e-12 + lifts) return 0;
    }
    return moved > 1e-3;
}

/* Largest |a − b| over every weight, INFINITY on a shape mismatch. */
static double weight_diff(const strux_model *a, const strux_model *b)
{
    int32_t K = strux_model_n_rows(a), D = strux_model_dim(a);
    if (K != strux_model_n_rows(b) || D != strux_model_dim(b)) return INFINITY;
    double *ra = malloc((size_t)D * sizeof *ra), *rb = malloc((size_t)D * sizeof *rb), w = 0;
    for (int32_t k = 0; k < K; k++) {
        strux_model_get_row(a, k, ra);
        strux_model_get_row(b, k, rb);
        for (int32_t j = 0; j < D; j++)
            w = fmax(w, fabs(ra[j] - rb[j]));
    }
    free(ra);
    free(rb);
    return w;
}

/* sgd: the node scores √α_n·V_n·x of every local example before and after a change to a
 * random α′ followed by strux_solver_rescale_rows (g = √(α′/α)); the largest change. */
static double score_drift(run *r)
{
    strux_pot p = {0};
    if (strux_task_pot_alloc(r->task, r->ds, &p) != STRUX_OK) return INFINITY;
    const strux_hierarchy *h;
    const double *a;
    strux_task_hierarchy_state(r->task, &h, &a);
    int64_t n = r->ds->n_local;
    double *before = malloc((size_t)(n * N_NODES) * sizeof *before), drift = 0;
    for (int64_t i = 0; i < n; i++) {
        strux_task_potentials(r->task, r->model, r->ds, i, &p);
        memcpy(before + i * N_NODES, p.s + N_NODES, N_NODES * sizeof *before);
    }
    double next[N_NODES], g[N_NODES];
    strux_rng rng;
    strux_rng_init(&rng, 9, 0, 0);
    for (int k = 0; k < N_NODES; k++) {
        next[k] = a[k] > 0 ? 0.05 + strux_rng_uniform(&rng) : 0;
        g[k] = a[k] > 0 ? sqrt(next[k] / a[k]) : 0;
    }
    if (strux_task_hierarchy_set_alpha(r->task, next) != STRUX_OK ||
        strux_solver_rescale_rows(r->solver, g) != STRUX_OK)
        drift = INFINITY;
    for (int64_t i = 0; i < n; i++) {
        strux_task_potentials(r->task, r->model, r->ds, i, &p);
        for (int k = 0; k < N_NODES; k++)
            drift = fmax(drift, fabs(p.s[N_NODES + k] - before[i * N_NODES + k]) /
                                    fmax(1, fabs(before[i * N_NODES + k])));
    }
    free(before);
    strux_pot_free(&p);
    return drift;
}

/* Every check on the hierarchy of the current pass (kind). */
static void run_checks(strux_comm *c)
{
    int np = strux_comm_size(c);
    char ckpt[1000];
    snprintf(ckpt, sizeof ckpt, "%s/ssvm-%s-%d.ckpt.h5", dir, kind, np);

    /* sgd: α every 2 epochs, 12 epochs */
    run a;
    strux_status st = run_start(c, &a, "sgd", 12, ckpt, NULL);
    if (st == STRUX_OK) st = strux_driver_run(a.driver);
    check(c, st == STRUX_OK && a.chk.n_checks == 12 && a.chk.n_bad == 0,
              "sgd: alpha is bitwise identical on every rank after every epoch (6 updates)");
    check(c, st == STRUX_OK && strux_alpha_hook_updates(a.alpha) == 6 && alpha_learned(&a),
              "sgd: 6 updates; every leaf path of the learned alpha sums to 1, away from its start");

    /* the same run stopped after epoch 5 (between the updates of epochs 4 and 6), resumed */
    run b;
    st = run_start(c, &b, "sgd", 12, ckpt, NULL);
    b.flag = 0;
    int conv;
    if (st == STRUX_OK) st = strux_driver_solve(b.driver, 0, 5, &conv);
    if (st == STRUX_OK) {
        b.flag = SIGTERM;
        st = strux_driver_solve(b.driver, 0, 1, &conv);
    }
    check(c, st == STRUX_ERR_INTERRUPTED && strux_driver_epoch(b.driver) == 6 &&
                     strux_alpha_hook_updates(b.alpha) == 3,
              "sgd: a stop after epoch 6 writes a checkpoint after the third update");
    strux_error_clear();
    run_free(&b);
    /* stop mid-round: after epoch 5 */
    st = run_start(c, &b, "sgd", 12, ckpt, NULL);
    if (st == STRUX_OK) st = strux_driver_solve(b.driver, 0, 4, &conv);
    if (st == STRUX_OK) {
        b.flag = SIGTERM;
        st = strux_driver_solve(b.driver, 0, 1, &conv);
    }
    check(c, st == STRUX_ERR_INTERRUPTED && strux_driver_epoch(b.driver) == 5,
              "sgd: a stop after epoch 5 (mid-round) writes a checkpoint");
    strux_error_clear();
    run_free(&b);
    st = run_start(c, &b, "sgd", 12, ckpt, ckpt);
    int at = st == STRUX_OK && strux_driver_epoch(b.driver) == 5 &&
             strux_alpha_hook_updates(b.alpha) == 2;
    if (st == STRUX_OK) st = strux_driver_run(b.driver);
    double dw = st == STRUX_OK ? weight_diff(a.model, b.model) : INFINITY;
    int same_alpha = st == STRUX_OK && memcmp(strux_alpha_hook_alpha(a.alpha),
                                              strux_alpha_hook_alpha(b.alpha),
                                              N_NODES * sizeof(double)) == 0;
    check(c, at && dw == 0 && same_alpha,
              "sgd: resumed mid-round at the same epoch and update, ends bit-identical (weights, "
              "alpha)");
    if (strux_comm_rank(c) == 0 && dw != 0) printf("# max weight difference %g\n", dw);
    run_free(&b);
    double drift = score_drift(&a);
    check(c, drift <= 1e-12,
              "sgd: strux_solver_rescale_rows after a new alpha keeps every node score (U fixed)");
    run_free(&a);

    /* sdca: α after each solve to 1e-2 (or mid-solve, see solvers/alpha.c) */
    st = run_start(c, &a, "sdca", 300, ckpt, NULL);
    if (st == STRUX_OK) st = strux_driver_run(a.driver);
    int64_t upd = st == STRUX_OK ? strux_alpha_hook_updates(a.alpha) : 0;
    check(c, st == STRUX_OK && upd >= 2 && a.chk.n_bad == 0 && alpha_learned(&a),
              "sdca: alpha after each solve, bitwise identical on every rank after every update, "
              "leaf paths sum to 1");
    check(c, st == STRUX_OK && a.chk.gap_bad == 0,
              "sdca: after every alpha update the duality gap is still >= 0 (duals kept feasible)");
    const strux_certificate *cert = strux_driver_last_certificate(a.driver);
    double primal = cert->primal;
    const double *alpha = strux_alpha_hook_alpha(a.alpha);
    char ref[1000];
    snprintf(ref, sizeof ref, "%s/ssvm-ref-%s.txt", dir, kind);
    if (strux_comm_rank(c) == 0) printf("# %s sdca: %lld alpha updates, %lld epochs, primal %.12g\n",
                                        kind, (long long)upd, (long long)strux_driver_epoch(a.driver),
                                        primal);
    double want[1 + N_NODES];
    int ok = 1;
    if (np == 1) {
        FILE *f = fopen(ref, "w");
        fprintf(f, "%a\n", primal);
        for (int n = 0; n < N_NODES; n++)
            fprintf(f, "%a\n", alpha[n]);
        fclose(f);
    } else {
        FILE *f = fopen(ref, "r");
        ok = f != NULL;
        for (int k = 0; ok && k < 1 + N_NODES; k++)
            ok = fscanf(f, "%la", &want[k]) == 1;
        if (f) fclose(f);
        ok = ok && fabs(primal - want[0]) <= 1e-9 * fabs(want[0]);
        for (int n = 0; ok && n < N_NODES; n++)
            ok = fabs(alpha[n] - want[1 + n]) <= 1e-9;
    }
    check(c, st == STRUX_OK && ok,
              "sdca (solver.blocks = 4): final primal and alpha equal np 1's to 1e-9");

    /* the same sdca run stopped mid-solve after epoch 7: the first solve has not converged, the
     * mid-solve updates came at epochs 2 and 6 (waits 2, then 4, now 6: the next is due at 12);
     * resumed from the checkpoint it ends at the same epoch after the same updates, which needs
     * the hook's last update epoch and wait from the checkpoint (without them the next update
     * would come at 8). Not bit for bit: the checkpoint stores the training weights with the
     * row scales of the α rescale folded in (io/checkpoint.c writes them as HDF5 weights), so
     * the resumed arithmetic rounds differently (about 1e-14); weights and α to 1e-12. */
    st = run_start(c, &b, "sdca", 300, ckpt, NULL);
    conv = 1;
    if (st == STRUX_OK) st = strux_driver_solve(b.driver, 1e-2, 6, &conv);
    int mid = st == STRUX_OK && !conv && strux_alpha_hook_updates(b.alpha) == 2;
    if (st == STRUX_OK) {
        b.flag = SIGTERM;
        st = strux_driver_solve(b.driver, 1e-2, 1, &conv);
    }
    check(c, mid && st == STRUX_ERR_INTERRUPTED && strux_driver_epoch(b.driver) == 7,
              "sdca: a stop after epoch 7 (mid-solve, 2 mid-solve updates) writes a checkpoint");
    strux_error_clear();
    run_free(&b);
    st = run_start(c, &b, "sdca", 300, ckpt, ckpt);
    at = st == STRUX_OK && strux_driver_epoch(b.driver) == 7 &&
         strux_alpha_hook_updates(b.alpha) == 2;
    if (st == STRUX_OK) st = strux_driver_run(b.driver);
    double dws = st == STRUX_OK ? weight_diff(a.model, b.model) : INFINITY, das = 0;
    for (int n = 0; st == STRUX_OK && n < N_NODES; n++)
        das = fmax(das,
                   fabs(strux_alpha_hook_alpha(a.alpha)[n] - strux_alpha_hook_alpha(b.alpha)[n]));
    int same = st == STRUX_OK && strux_driver_epoch(a.driver) == strux_driver_epoch(b.driver) &&
               strux_alpha_hook_updates(a.alpha) == strux_alpha_hook_updates(b.alpha);
    check(c, at && same && dws <= 1e-12 && das <= 1e-12,
              "sdca: resumed mid-solve at epoch 7, ends at the same epoch after the same "
              "updates, weights and alpha to 1e-12");
    if (strux_comm_rank(c) == 0)
        printf("# %s sdca resume: epochs %lld / %lld, updates %lld / %lld, max weight difference "
               "%.3g, max alpha difference %.3g\n",
               kind, (long long)strux_driver_epoch(a.driver), (long long)strux_driver_epoch(b.driver),
               (long long)strux_alpha_hook_updates(a.alpha),
               (long long)strux_alpha_hook_updates(b.alpha), dws, das);
    run_free(&b);
    run_free(&a);
    if (strux_comm_rank(c) == 0) remove(ckpt);
}

int main(int argc, char **argv)
{
    strux_comm *c = NULL;
    if (strux_comm_init(&argc, &argv, &c) != STRUX_OK) return 1;
    strux_log_setup(strux_comm_rank(c), STRUX_LOG_WARN, 0);
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "/tmp");
    if (strux_comm_size(c) == 1) write_data();
    strux_comm_barrier(c);
    run_checks(c);
    kind = "dag";
    run_checks(c);
    strux_comm_finalize(&c);
    return 0;
}
