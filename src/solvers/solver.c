/* solvers/solver.c - the public solver API: options, creation by name, dispatch, and the primal
 * objective J(w) shared by every solver's certificate. */
#include "solver_impl.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const strux_opt_spec strux_solver_opt_specs[] = {
    {"solver.type", STRUX_OPT_CHOICE, offsetof(strux_solver_options, type), "sgd", 0, 0, "sgd",
     NULL, "training algorithm"},
    {"solver.lambda", STRUX_OPT_DOUBLE, offsetof(strux_solver_options, lambda), "1e-3", 1e-12, 1e6,
     NULL, NULL, "regularisation λ of J(w) = (λ/2)||w||² + (1/n) Σ ℓ_i(w)"},
    {"solver.epochs", STRUX_OPT_INT, offsetof(strux_solver_options, epochs), "20", 1, 1e9, NULL,
     NULL, "passes over the training data"},
    {"solver.seed", STRUX_OPT_INT, offsetof(strux_solver_options, seed), "1", 0, 9.2e18, NULL,
     NULL, "seed of every random draw (example order); draws do not depend on the rank count"},
    {"solver.batch", STRUX_OPT_INT, offsetof(strux_solver_options, batch), "16", 1, 1e9, NULL,
     "solver.type=sgd", "global mini-batch: examples per step, split over ranks, one allreduce "
     "per step"},
    {"solver.average", STRUX_OPT_BOOL, offsetof(strux_solver_options, average), "true", 0, 0,
     NULL, "solver.type=sgd", "export the average of the iterates of the current epoch rather "
     "than the last iterate"},
    {NULL},
};

strux_status strux_solver_create(const strux_solver_options *opt, strux_task *t, strux_search *s,
                                 const strux_dataset *ds, strux_model *m, strux_comm *comm,
                                 strux_solver **out)
{
    const strux_solver_entry *e = strux_solver_registry;
    while (e->name && strcmp(e->name, opt->type) != 0) e++;
    STRUX_CHECK(e->name, STRUX_ERR_CONFIG, "solver.type = '%s' is unknown", opt->type);
    strux_solver *sv;
    STRUX_TRY(strux_alloc(&sv, sizeof *sv));
    *sv = (strux_solver){.type_name = e->name, .opt = *opt, .task = t, .search = s, .ds = ds,
                         .model = m, .comm = comm};
    strux_status st = e->create(sv);
    if (st == STRUX_OK && sv->ops->setup) st = sv->ops->setup(sv);
    st = strux_comm_agree(comm, st);
    if (st != STRUX_OK) {
        strux_solver_destroy(&sv);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = sv;
    return STRUX_OK;
}

void strux_solver_destroy(strux_solver **s)
{
    if (!*s) return;
    if ((*s)->ops && (*s)->ops->destroy) (*s)->ops->destroy(*s);
    strux_free(s);
}

const char *strux_solver_name(const strux_solver *s)
{
    return s->type_name;
}

void strux_solver_set_progress(strux_solver *s, strux_progress_fn fn, void *ctx)
{
    s->progress = fn;
    s->progress_ctx = ctx;
}

strux_status strux_solver_epoch(strux_solver *s)
{
    STRUX_TRY(s->ops->epoch(s));
    s->epoch++;
    return STRUX_OK;
}

strux_status strux_solver_certificate(strux_solver *s, strux_certificate *c)
{
    STRUX_TRY(strux_objective_primal(s->task, s->search, s->ds, s->model, s->comm, s->opt.lambda,
                                     c));
    if (s->ops->certificate) STRUX_TRY(s->ops->certificate(s, c));
    return STRUX_OK;
}

strux_status strux_objective_primal(strux_task *t, strux_search *s, const strux_dataset *ds,
                                    const strux_model *m, strux_comm *comm, double lambda,
                                    strux_certificate *c)
{
    strux_pot pot = {0};
    strux_label truth = {0};
    strux_search_result r;
    double sum = 0;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_task_pot_alloc(t, ds, &pot), done);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &truth), done);
    for (int64_t i = 0; i < ds->n_local; i++) {
        STRUX_TRY_GOTO(st, strux_task_potentials(t, m, ds, i, &pot), done);
        STRUX_TRY_GOTO(st, strux_task_truth(t, ds, i, &truth), done);
        STRUX_TRY_GOTO(st, strux_search_run(s, t, &pot, &truth, &r), done);
        sum += r.psi > 0 ? r.psi : 0; /* y = y_i scores ψ(0, 0) = 0, so ℓ_i ≥ 0 */
    }
done:
    strux_pot_free(&pot);
    strux_label_free(&truth);
    STRUX_TRY(strux_comm_agree(comm, st));
    STRUX_TRY(strux_comm_allreduce_sum(comm, &sum, 1));
    c->loss = sum / (double)ds->n_global;
    c->primal = 0.5 * lambda * strux_model_norm2(m) + c->loss;
    c->dual = NAN;
    c->gap = NAN;
    STRUX_CHECK(isfinite(c->primal), STRUX_ERR_NUMERIC, "primal objective is %g", c->primal);
    return STRUX_OK;
}
