/* cli/memory.c - memory accounting of `strux train` (issue 13): per rank the bytes of the
 * training data, the model (one copy, its share of it when the ranks of a host hold it once
 * (model.share), and the copies the solver keeps: sgd its iterate and mini-batch gradient; the
 * dual solvers the CoCoA+ local view, BCFW's average and the block accumulator; a sparse
 * model's view is its round's change, counted at its floor), the dual coefficients (sdca's
 * active sets: their floor, the positives) and the caches (per-example norms, search buffers),
 * estimated before they are allocated, logged by every rank and checked against run.max_memory
 * and the rank's share of the host's MemAvailable (/proc/meminfo). Before the data is read the
 * estimate comes from data.train's HDF5 attributes (exact) or its size on disk (a guess); after
 * it is read, from the data and the task's model and block shapes. A sparse model is counted at
 * its floor (24 bytes a row): it grows with the features its rows see, up to the dense bytes
 * that the log line also names. Sparse dual blocks (sdca, solver.dual_blocks) likewise: their
 * floor, growing with the non-zero duals. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#define MB 1e6

static int is_dual(const char *solver)
{
    return strstr(strux_solver_names(STRUX_CAP_DUAL), solver) != NULL;
}

/* Dual state of sdca's sparse lists before any dual is non-zero, per example with p hinges:
 * offsets, loss share, ||x||², hinge count, sign offsets, list start, length, room, compaction
 * slot (68 bytes), the first pool (8 entries of 12 bytes) and one shrinking bit per hinge. */
static double sparse_duals_floor(double n, double p)
{
    return n * (68 + 8 * 12 + p / 8);
}

/* The run's solver keeps sparse dual lists for blocks of up to max_parts hinges with
 * solver.dual_blocks = dual_blocks. */
static int sparse_duals(const strux_run_options *o, const char *dual_blocks, double max_parts)
{
    unsigned task_caps = 0, search_caps = 0;
    char name[64];
    if (strux_task_type_caps(o->task.type, &task_caps) != STRUX_OK ||
        strux_search_type_caps(&o->surrogate, task_caps, &search_caps, name, sizeof name) !=
            STRUX_OK) {
        strux_error_clear(); /* the options check reports it */
        return 0;
    }
    return strux_solver_sparse_duals(o->solver.type, dual_blocks, task_caps, search_caps,
                                     (int64_t)max_parts);
}

/* solver.type = m3l_kernel: α and signed gradients (doubles) and labels (bytes) per (example,
 * label), and its kernel-row cache: kernel.cache_mb, or every local row of every example if
 * that is less. */
static void kernel_state(const strux_run_options *o, double n_local, double n_global, double L,
                         strux_memory_estimate *e)
{
    unsigned caps = 0;
    if (strux_solver_type_caps(o->solver.type, &caps) != STRUX_OK) {
        strux_error_clear(); /* an unknown solver: the configuration check names it */
        return;
    }
    if (!(caps & STRUX_CAP_KERNEL_MODEL)) return;
    e->dual = n_local * L * 17;
    double row = strcmp(o->solver.kernel.cache_precision, "double") == 0 ? 8 : 4;
    double cache = o->solver.kernel.cache_mb * 1048576.0, all = n_local * n_global * row;
    e->caches += cache < all ? cache : all;
}

static double value_size(const strux_run_options *o)
{
    return strcmp(o->model.precision, "float") == 0 ? 4.0 : 8.0;
}

int strux_cli_share_host(strux_comm *comm, const strux_run_options *o)
{
    unsigned caps = 0;
    int on_host = 1;
    if (strcmp(o->model.share, "host") == 0) return 1;
    if (strcmp(o->model.share, "auto") != 0) return 0;
    if (strux_solver_type_caps(o->solver.type, &caps) != STRUX_OK) strux_error_clear();
    (void)strux_comm_host_size(comm, &on_host);
    return (caps & STRUX_CAP_SHARED_MODEL) && on_host > 1;
}

/* Model copies besides the model itself, for this solver, rank count and block count (the
 * sparse layout's local view holds only its change: counted at the floor, none here). */
static double extra_copies(const strux_run_options *o, int n_ranks)
{
    const strux_solver_options *so = &o->solver;
    if (strcmp(so->type, "sgd") == 0) return 2; /* iterate, mini-batch gradient */
    if (!is_dual(so->type)) return 0;
    double blocks = so->blocks > 0 ? (double)so->blocks : n_ranks;
    double c = so->weighted_average ? 1 : 0;
    if (strcmp(o->model.layout, "sparse") == 0) return c;
    if (blocks > 1) c += 1;                       /* the local view wl */
    if (blocks / n_ranks > 1) c += 1;             /* the accumulator of several local blocks */
    return c;
}

/* This rank's part of the one copy: 1/(ranks on the host) when they share it. */
static int sharing(strux_comm *comm, const strux_run_options *o)
{
    int on_host = 1;
    if (!strux_cli_share_host(comm, o)) return 1;
    (void)strux_comm_host_size(comm, &on_host);
    return on_host > 0 ? on_host : 1;
}

/* Model bytes of one copy: dense n_rows·dim values + per row scale, norm, index; a sparse model
 * its floor. */
static double model_bytes(const strux_run_options *o, double n_rows, double dim, double n_extra,
                          double *dense)
{
    double fixed = n_rows * 20 + n_extra * 8;
    *dense = n_rows * dim * value_size(o) + fixed;
    return strcmp(o->model.layout, "sparse") == 0 ? fixed + n_rows * 24 : *dense;
}

strux_status strux_cli_memory_before_data(strux_comm *comm, const strux_run_options *o,
                                          strux_memory_estimate *e)
{
    memset(e, 0, sizeof *e);
    int np = strux_comm_size(comm);
    strux_data_peek pk;
    if (strux_io_dataset_peek(o->data.train, &pk) != STRUX_OK) {
        /* an unreadable or broken file: no estimate; the reader reports it in its own words */
        strux_error_clear();
        return STRUX_OK;
    }
    /* CSR: int32 column + float value per non-zero, int64 row offsets; labels int32 + offsets */
    e->data = ((double)pk.nnz * 8 + (double)pk.n_rows * 16 + (double)pk.label_nnz * 4) / np;
    double dim = o->data.dim > 0 ? (double)o->data.dim : (double)pk.dim;
    double L = o->data.n_labels > 0 ? (double)o->data.n_labels : (double)pk.n_labels;
    double n_local = (double)pk.n_rows / np;
    e->caches = n_local * 16;
    e->sparse = strcmp(o->model.layout, "sparse") == 0;
    const char *t = o->task.type;
    int per_label = !strcmp(t, "multilabel") || !strcmp(t, "multiclass") || !strcmp(t, "binary");
    if (dim > 0 && L > 0 && per_label) { /* one weight row per label (binary: one) */
        double rows = strcmp(t, "binary") == 0 ? 1 : L, dense;
        dim += strcmp(o->model.bias, "none") != 0 && o->data.bias > 0;
        e->model = model_bytes(o, rows, dim, 0, &dense);
        e->copies = extra_copies(o, np);
        e->on_host = sharing(comm, o);
        e->model_known = 1;
        if (o->solver.active_sets) { /* its floor: the positives, 13 bytes each, 64 a row */
            e->dual = ((double)pk.label_nnz * 13) / np + n_local * 72;
        } else if (is_dual(o->solver.type)) {
            e->dual = n_local * (rows + 1) * 8;
            e->dual_sparse = sparse_duals(o, o->solver.dual_blocks, rows);
            if (e->dual_sparse) e->dual = sparse_duals_floor(n_local, rows);
        }
        kernel_state(o, n_local, (double)pk.n_rows, L, e);
    }
    return STRUX_OK;
}

void strux_cli_memory_with_data(strux_comm *comm, const strux_run_options *o,
                                const strux_dataset *train, const strux_task *task,
                                int32_t n_rows, int64_t n_extra, strux_memory_estimate *e)
{
    memset(e, 0, sizeof *e);
    int np = strux_comm_size(comm);
    const strux_csr *x = &train->x;
    e->data = (double)x->ptr[x->n_rows] * 8 + (double)x->n_rows * 16 +
              (double)train->y_ptr[x->n_rows] * 4;
    double dense;
    e->model = model_bytes(o, n_rows, train->dim, (double)n_extra, &dense);
    e->copies = extra_copies(o, np);
    e->on_host = sharing(comm, o);
    e->model_known = 1;
    e->sparse = strcmp(o->model.layout, "sparse") == 0;
    if (o->solver.active_sets) {
        e->dual = (double)train->y_ptr[x->n_rows] * 13 + (double)train->n_local * 72 +
                  (double)n_rows * 40; /* the positives; per row: bias, scratch */
    } else if (is_dual(o->solver.type)) {
        double p = 0, p_max = 0;
        for (int64_t i = 0; i < train->n_local; i++) {
            double p_i = (double)strux_task_block_shape(task, train, i).p;
            p += p_i;
            p_max = p_i > p_max ? p_i : p_max;
        }
        e->dual = (p + (double)train->n_local) * 8;
        e->dual_sparse = sparse_duals(o, o->solver.dual_blocks, p_max);
        if (e->dual_sparse) e->dual = sparse_duals_floor((double)train->n_local, p_max);
    }
    e->caches = (double)train->n_local * 16 + (double)train->dim * 8 * 6; /* + row buffers */
    kernel_state(o, (double)train->n_local, (double)train->n_global, n_rows, e);
}

/* MemAvailable of /proc/meminfo in bytes, or 0 when unknown. */
static double mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    double kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

/* The address-space or data-segment limit of this process (ulimit -v, -d) in bytes, its name in
 * why; 0 when neither is set. */
static double process_limit(const char **why)
{
    static const struct {
        int resource;
        const char *name;
    } limits[] = {{RLIMIT_AS, "the address-space limit (ulimit -v)"},
                  {RLIMIT_DATA, "the data-segment limit (ulimit -d)"}};
    double bound = 0;
    for (size_t k = 0; k < sizeof limits / sizeof *limits; k++) {
        struct rlimit rl;
        if (getrlimit(limits[k].resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            (bound == 0 || (double)rl.rlim_cur < bound)) {
            bound = (double)rl.rlim_cur;
            *why = limits[k].name;
        }
    }
    return bound;
}

strux_status strux_cli_memory_check(strux_comm *comm, const strux_run_options *o,
                                    const strux_memory_estimate *e, const char *when)
{
    int on_host = 1;
    STRUX_TRY(strux_comm_host_size(comm, &on_host));
    double models = e->model * (1.0 / (e->on_host > 0 ? e->on_host : 1) + e->copies);
    double total = e->data + models + e->dual + e->caches;
    char model_text[160];
    if (e->model_known)
        snprintf(model_text, sizeof model_text, "model %.1f MB%s x %.0f cop%s%s", e->model / MB,
                 e->sparse ? " (sparse: its floor; it grows with the features seen)" : "",
                 1 + e->copies, e->copies == 0 ? "y" : "ies",
                 e->on_host > 1 ? ", the first held once per host" : "");
    else
        snprintf(model_text, sizeof model_text, "model not known until the data is read");
    strux_log_all(STRUX_LOG_INFO,
                  "memory estimate %s: data %.1f MB, %s, dual state %.1f MB%s, caches %.1f MB: "
                  "%.1f MB",
                  when, e->data / MB, model_text, e->dual / MB,
                  e->dual_sparse ? " (sparse lists: their floor; they grow with the non-zero duals)"
                                 : "",
                  e->caches / MB, total / MB);
    const char *rlimit_name = NULL;
    double avail = mem_available() / on_host, limit = o->run.max_memory * MB,
           process = process_limit(&rlimit_name);
    const char *why = NULL;
    double bound = 0;
    if (limit > 0 && total > limit) {
        why = "run.max_memory";
        bound = limit;
    } else if (process > 0 && total > process) {
        why = rlimit_name;
        bound = process;
    } else if (avail > 0 && total > avail) {
        why = "this rank's share of the host's MemAvailable";
        bound = avail;
    }
    strux_status st = STRUX_OK;
    if (why) {
        char shrink[512] = "";
        size_t n = 0;
        if (strcmp(o->model.precision, "float") != 0 && e->model_known)
            n += (size_t)snprintf(shrink + n, sizeof shrink - n,
                                  "model.precision = float (model %.1f MB less); ",
                                  models / 2 / MB);
        if (strcmp(o->model.layout, "sparse") != 0 && e->model_known)
            n += (size_t)snprintf(shrink + n, sizeof shrink - n,
                                  "model.layout = sparse (rows hold the features they see); ");
        if (!e->dual_sparse && e->dual > 0 && sparse_duals(o, "sparse", 1))
            n += (size_t)snprintf(shrink + n, sizeof shrink - n,
                                  "solver.dual_blocks = sparse (lists of the non-zero duals); ");
        snprintf(shrink + n, sizeof shrink - n,
                 "more ranks (data and dual state split: %.1f MB of them here)",
                 (e->data + e->dual) / MB);
        st = strux_error_set(STRUX_ERR_NOMEM, __FILE__, __LINE__, __func__,
                             "the run needs about %.1f MB per rank %s (data %.1f MB, %s, dual "
                             "state %.1f MB, caches %.1f MB), more than %s (%.1f MB); options "
                             "that shrink it: %s",
                             total / MB, when, e->data / MB, model_text, e->dual / MB,
                             e->caches / MB, why, bound / MB, shrink);
    }
    return strux_comm_agree(comm, st);
}
