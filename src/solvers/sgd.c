/* solvers/sgd.c - Pegasos-style stochastic subgradient descent with global mini-batches
 * (slack_bicriteria.md §4.1; Shalev-Shwartz et al., Pegasos, 2007/2011):
 *     w ← (1 − η_t λ)·w − (η_t/B)·Σ_{i∈batch} ∂ℓ_i(w),   η_t = 1/(λ t),
 * with ∂ℓ_i = ψ_h·Δφ_i(ŷ) at the search's answer ŷ (§1.8); with loss weights v_i (data.weights)
 * each subgradient is weighted by v_i and the batch mean by n/W, an unbiased estimate of the
 * gradient of (1/W)·Σ v_i ℓ_i. The example order is a permutation of
 * the global indices drawn from (seed, epoch), identical on every rank; each rank sums the
 * subgradients of the batch members it owns and one allreduce per step adds them, so -np 1, 2, 4
 * follow the same trajectory up to floating-point summation order. With solver.average the model
 * receives the running average of this epoch's iterates (suffix averaging: the exported point is
 * far less noisy than the last iterate at the same cost). */
#include "solver_impl.h"

#include <math.h>
#include <string.h>

#define SGD_RNG_STREAM 0x5347440000000001ULL /* "SGD": the example-order stream */

typedef struct sgd_data {
    strux_model *w; /* the iterate (the model receives it or its epoch average) */
    strux_model *G; /* summed subgradient of the current mini-batch */
    int64_t *perm;  /* this epoch's order of the global examples */
    strux_pot pot;
    strux_label truth;
    int64_t t; /* steps taken */
} sgd_data;

static strux_status sgd_setup(strux_solver *s)
{
    sgd_data *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    s->data = d;
    const strux_model *m = s->model;
    STRUX_TRY(strux_model_create_like(m, &d->w));
    STRUX_TRY(strux_model_copy(d->w, m));
    STRUX_TRY(strux_model_create_like(m, &d->G));
    STRUX_TRY(strux_alloc_array(&d->perm, (size_t)s->ds->n_global, sizeof *d->perm));
    STRUX_TRY(strux_task_pot_alloc(s->task, s->ds, &d->pot));
    STRUX_TRY(strux_task_label_alloc(s->task, s->ds, &d->truth));
    return STRUX_OK;
}

/* Add the subgradients of the batch members this rank owns into G. */
static strux_status batch_subgradient(strux_solver *s, sgd_data *d, int64_t b0, int64_t b1)
{
    const strux_dataset *ds = s->ds;
    strux_search_result r;
    for (int64_t j = b0; j < b1; j++) {
        int64_t i = d->perm[j] - ds->first;
        if (i < 0 || i >= ds->n_local) continue;
        STRUX_TRY(strux_task_potentials(s->task, d->w, ds, i, &d->pot));
        STRUX_TRY(strux_task_truth(s->task, ds, i, &d->truth));
        STRUX_TRY(strux_search_run(s->search, s->task, &d->pot, &d->truth, &r));
        STRUX_TRY(strux_search_add_subgradient(&r, s->task, ds, i, &d->truth,
                                               strux_dataset_weight(ds, i), d->G));
    }
    return STRUX_OK;
}

static strux_status sgd_epoch(strux_solver *s)
{
    sgd_data *d = s->data;
    const int64_t n = s->ds->n_global, B = s->opt.batch;
    const double lambda = s->opt.lambda;
    strux_rng rng;
    strux_rng_init(&rng, (uint64_t)s->opt.seed, SGD_RNG_STREAM, (uint64_t)s->epoch);
    strux_rng_permutation(&rng, d->perm, n);
    if (s->opt.average) strux_model_zero(s->model);
    int64_t steps = 0;
    for (int64_t b0 = 0; b0 < n; b0 += B) {
        int64_t b1 = b0 + B < n ? b0 + B : n;
        strux_model_zero(d->G);
        STRUX_TRY(strux_comm_agree(s->comm, batch_subgradient(s, d, b0, b1)));
        STRUX_TRY(strux_solver_allreduce_model(s, d->G));
        d->t++;
        double eta = 1.0 / (lambda * (double)d->t);
        strux_model_shrink(d->w, 1.0 - eta * lambda);
        STRUX_TRY(strux_model_axpy(-eta * (double)n / (s->ds->weight_sum * (double)(b1 - b0)),
                                   d->G, d->w));
        steps++;
        strux_solver_progress(s, b1, n);
        if (s->opt.average) { /* running mean of this epoch's iterates */
            strux_model_scale(s->model, 1 - 1 / (double)steps);
            STRUX_TRY(strux_model_axpy(1 / (double)steps, d->w, s->model));
        }
    }
    if (!s->opt.average) STRUX_TRY(strux_model_copy(s->model, d->w));
    STRUX_TRY(strux_comm_agree(s->comm, strux_model_status(d->w)));
    int64_t bad = strux_model_find_non_finite(s->model);
    STRUX_CHECK(bad < 0, STRUX_ERR_NUMERIC,
                "weight %lld is not finite after epoch %lld (lower the step: raise solver.lambda)",
                (long long)bad, (long long)s->epoch + 1);
    return STRUX_OK;
}

static void sgd_destroy(strux_solver *s)
{
    sgd_data *d = s->data;
    if (!d) return;
    strux_model_destroy(&d->w);
    strux_model_destroy(&d->G);
    strux_free(&d->perm);
    strux_pot_free(&d->pot);
    strux_label_free(&d->truth);
    strux_free(&s->data);
}

/* Checkpoint: the step count and the iterate (the model holds the exported average). */
static strux_status sgd_save(const strux_solver *s, strux_blob *b)
{
    const sgd_data *d = s->data;
    STRUX_TRY(strux_blob_put(b, &d->t, sizeof d->t));
    return strux_model_put(d->w, b);
}

static strux_status sgd_load(strux_solver *s, strux_blob *b)
{
    sgd_data *d = s->data;
    STRUX_TRY(strux_blob_get(b, &d->t, sizeof d->t, "sgd steps"));
    return strux_model_get_blob(d->w, b, "sgd iterate");
}

/* Features of row k times g_k: the scores stay when row k of the iterate (and of the exported
 * model, the average) is divided by g_k; a dead row (g_k = 0) becomes 0. The step count runs on. */
static strux_status sgd_rescale_rows(strux_solver *s, const double *g)
{
    sgd_data *d = s->data;
    for (int32_t k = 0; k < strux_model_n_rows(d->w); k++) {
        double f = g[k] > 0 ? 1 / g[k] : 0.0;
        strux_model_scale_row(d->w, k, f);
        strux_model_scale_row(s->model, k, f);
    }
    return STRUX_OK;
}

static const struct strux_solver_ops sgd_ops = {
    .rescale_rows = sgd_rescale_rows,
    .setup = sgd_setup,
    .epoch = sgd_epoch,
    .save = sgd_save,
    .load = sgd_load,
    .destroy = sgd_destroy,
};

strux_status strux_solver_create_sgd(strux_solver *s)
{
    s->ops = &sgd_ops;
    return STRUX_OK;
}
