/* solvers/dual.c - the dual block engine of bcfw, sdca and cutting_plane (dual.h): block storage,
 * CoCoA+ rounds (local passes against wl, one allreduce of Δw; between two rounds the caller's
 * round function, where a run stops or checkpoints mid-epoch), the dual objective and gap,
 * BCFW's weighted averaging over rounds, checkpoint state (a round boundary is a complete state),
 * and the line-searched block step that BCFW and SDCA share. The methods supply the per-example
 * visit. */
#include "dual.h"

#include <math.h>
#include <string.h>

#define DUAL_RNG_STREAM 0x4455414c00000001ULL /* "DUAL": example order of the passes */
#define PROGRESS_EVERY 64                     /* examples between progress reports */
#define PREFETCH_AHEAD 4                      /* visits between a prefetch and its use */
#define ORDERED_SUM_MAX_BYTES ((int64_t)256 << 20) /* block-ordered Δw sums up to this buffer */

strux_status strux_dual_attach(strux_solver *s, const dual_method *m)
{
    dual_data *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    d->method = m;
    s->data = d;
    s->ops = &strux_dual_ops;
    return STRUX_OK;
}

static strux_status dual_setup(strux_solver *s)
{
    dual_data *d = s->data;
    const strux_dataset *ds = s->ds;
    const strux_model *m = s->model;
    int64_t n = ds->n_local, p_max;
    int32_t S_max;
    d->sigma = (double)(ds->block_hi - ds->block_lo);
    STRUX_TRY(strux_comm_allreduce_sum(s->comm, &d->sigma, 1));
    if (d->method->own_rounds) d->sigma = 1;
    d->n = ds->weight_sum;
    d->n_local = n;
    STRUX_TRY(strux_alloc_array(&d->off, (size_t)n + 1, sizeof *d->off));
    for (int64_t i = 0; i < n; i++)
        d->off[i + 1] =
            d->off[i] + (d->method->own_blocks ? 0 : strux_task_block_shape(s->task, ds, i).p);
    d->n_active = -1;
    strux_task_block_max(s->task, ds, &p_max, &S_max);
    STRUX_TRY(strux_alloc_array(&d->b, (size_t)n + 1, sizeof *d->b));
    STRUX_TRY(strux_alloc_array(&d->dir, (size_t)p_max + 1, sizeof *d->dir));
    STRUX_TRY(strux_alloc_array(&d->X, (size_t)S_max * (size_t)S_max + 1, sizeof *d->X));
    STRUX_TRY(strux_alloc_array(&d->perm, (size_t)ds->n_global, sizeof *d->perm));
    int32_t n_lb = ds->block_hi - ds->block_lo > 0 ? ds->block_hi - ds->block_lo : 1;
    STRUX_TRY(strux_alloc_array(&d->order, (size_t)n + 1, sizeof *d->order));
    STRUX_TRY(strux_alloc_array(&d->pos, (size_t)n + 1, sizeof *d->pos));
    STRUX_TRY(strux_alloc_array(&d->bucket, (size_t)n_lb + 1, sizeof *d->bucket));
    STRUX_TRY(strux_alloc_array(&d->cursor, (size_t)n_lb, sizeof *d->cursor));
    STRUX_TRY(strux_alloc_array(&d->block_first, (size_t)n_lb + 1, sizeof *d->block_first));
    for (int32_t b = 0; b < n_lb; b++) { /* local index of each block's first example */
        int64_t i0 = 0, i1 = n;
        if (ds->block_hi > ds->block_lo) strux_dataset_block_range(ds, ds->block_lo + b, &i0, &i1);
        d->block_first[b] = i0;
        d->block_first[b + 1] = i1;
    }
    /* the dual starts at c = 0, so w = w0 (0, or the bias centre: model.bias_centre) */
    strux_model_centre(s->model);
    if (s->opt.weighted_average)
        STRUX_TRY(strux_model_create_like(m, &d->w));
    else
        d->w = s->model;
    /* one data block in the whole job: its view is the iterate itself (one copy of the weights);
     * a sparse iterate is viewed as w + σ′·Δw with only the sparse change held (issue 12's one
     * copy where one suffices), a dense one copied whole (its change fills its rows) */
    strux_model_kind kind = strux_model_kind_of(m);
    int32_t n_b = ds->block_hi - ds->block_lo;
    d->shared = strux_model_is_shared(d->w);
    if (d->sigma > 1 && kind.layout == STRUX_LAYOUT_SPARSE) {
        STRUX_TRY(strux_model_create_view(
            d->w, (strux_model_kind){STRUX_LAYOUT_SPARSE, STRUX_PRECISION_DOUBLE}, &d->wl));
        STRUX_TRY(strux_alloc_array(&d->part, (size_t)(n_b > 0 ? n_b : 1), sizeof *d->part));
    } else if (d->sigma > 1) {
        STRUX_TRY(strux_model_create_like(m, &d->wl));
        if (n_b > 1) STRUX_TRY(strux_model_create_like(m, &d->acc));
    } else {
        d->wl = d->w;
    }
    /* the Δw_k summed in block order (strux_block_sum), so that at a fixed solver.blocks the
     * iterates are bit-identical at any rank count; dense double weights and a bounded buffer
     * only (a sparse w sums its blocks' non-zeros in block order, sync_sparse) */
    int64_t len = (int64_t)strux_model_n_rows(m) * strux_model_dim(m) + strux_model_n_extra(m);
    if (d->sigma > 1 && kind.layout != STRUX_LAYOUT_SPARSE &&
        kind.precision == STRUX_PRECISION_DOUBLE &&
        (int64_t)ds->n_blocks * len * (int64_t)sizeof(double) <= ORDERED_SUM_MAX_BYTES) {
        d->dw_len = len;
        STRUX_TRY(strux_alloc_array(&d->dw, (size_t)(n_b > 0 ? n_b : 1) * (size_t)len + 1,
                                    sizeof *d->dw));
        STRUX_TRY(strux_alloc_array(&d->dw_sum, (size_t)len + 1, sizeof *d->dw_sum));
    }
    STRUX_TRY(strux_task_pot_alloc(s->task, ds, &d->pot));
    STRUX_TRY(strux_task_label_alloc(s->task, ds, &d->truth));
    if (d->method->setup) STRUX_TRY(d->method->setup(s, d));
    if (!d->own_blocks) STRUX_TRY(strux_alloc_array(&d->c, (size_t)d->off[n] + 1, sizeof *d->c));
    return STRUX_OK;
}

strux_status strux_dual_potentials(strux_solver *s, dual_data *d, int64_t i)
{
    STRUX_TRY(strux_task_potentials(s->task, d->wl, s->ds, i, &d->pot));
    return strux_task_truth(s->task, s->ds, i, &d->truth);
}

strux_status strux_dual_answer(strux_solver *s, dual_data *d, double xi, strux_search_result *r)
{
    if (!isnan(xi)) strux_search_set_slack(s->search, xi);
    return strux_search_run(s->search, s->task, &d->pot, &d->truth, r);
}

void strux_dual_move(strux_solver *s, dual_data *d, int64_t i, const double *dc)
{
    strux_task_block_apply(s->task, s->ds, i, dc, d->sigma, d->wl);
}

strux_status strux_dual_corner_step(strux_solver *s, dual_data *d, int64_t i)
{
    strux_search_result answer, *r = &answer;
    double v = strux_dataset_weight(s->ds, i);
    if (!(v > 0)) return STRUX_OK; /* its loss weighs nothing: the block stays 0 */
    STRUX_TRY(strux_dual_potentials(s, d, i));
    STRUX_TRY(strux_dual_answer(s, d, NAN, r));
    const strux_dataset *ds = s->ds;
    strux_block_shape bs = strux_task_block_shape(s->task, ds, i);
    double *ci = d->c + d->off[i], *dir = d->dir;
    /* corner of the answer: c_s = −a/(λn), b_s = b(ŷ)/n (§4.2); dir = c_s − c_i */
    memset(dir, 0, (size_t)bs.p * sizeof *dir);
    STRUX_TRY(
        strux_search_block_add(r, s->task, ds, i, &d->truth, -v / (s->opt.lambda * d->n), dir));
    double b_s = v * strux_search_intercept(r) / d->n;
    for (int64_t j = 0; j < bs.p; j++)
        dir[j] -= ci[j];
    /* block gap λ(w_i − w_s)·w − b_i + b_s, with B_i^T·wl the leading potentials */
    double gap = -s->opt.lambda * strux_dot(bs.p, dir, d->pot.s) + (b_s - d->b[i]);
    strux_task_block_gram(ds, &bs, i, d->X);
    double q = s->opt.lambda * d->sigma * strux_block_inner(&bs, d->X, dir, dir);
    double gamma = q > 0 ? gap / q : (gap > 0 ? 1.0 : 0.0);
    if (gamma > 1) gamma = 1;
    if (!(gamma > 0)) return STRUX_OK;
    strux_scal(bs.p, gamma, dir);
    strux_axpy(bs.p, 1.0, dir, ci);
    d->b[i] += gamma * (b_s - d->b[i]);
    strux_dual_move(s, d, i, dir);
    return STRUX_OK;
}

/* The epoch's global order cut by local data block: bucket b lists, in order, the positions j of
 * the block's examples (d->pos) and their local indices (d->order), from d->bucket[b]; one scan of
 * the permutation per epoch instead of one per block and round. */
static void bucket_order(const strux_dataset *ds, dual_data *d)
{
    int32_t n_b = ds->block_hi - ds->block_lo > 0 ? ds->block_hi - ds->block_lo : 1;
    for (int32_t b = 0; b <= n_b; b++)
        d->bucket[b] = 0;
    for (int32_t b = 0; b < n_b; b++) { /* block b's size, then the prefix sums */
        int64_t i0 = 0, i1 = ds->n_local;
        if (ds->block_hi > ds->block_lo) strux_dataset_block_range(ds, ds->block_lo + b, &i0, &i1);
        d->bucket[b + 1] = d->bucket[b] + (i1 - i0);
    }
    for (int32_t b = 0; b < n_b; b++)
        d->cursor[b] = d->bucket[b];
    int32_t b = 0;
    for (int64_t j = 0; j < ds->n_global; j++) {
        int64_t i = d->perm[j] - ds->first;
        if (i < 0 || i >= ds->n_local) continue;
        if (i < d->block_first[b] || i >= d->block_first[b + 1]) /* blocks are contiguous */
            for (b = 0; !(i >= d->block_first[b] && i < d->block_first[b + 1]); b++)
                ;
        d->pos[d->cursor[b]] = j;
        d->order[d->cursor[b]++] = i;
    }
    for (int32_t k = 0; k < n_b; k++) /* a resumed epoch starts at position next_at */
        for (d->cursor[k] = d->bucket[k];
             d->cursor[k] < d->bucket[k + 1] && d->pos[d->cursor[k]] < d->next_at;)
            d->cursor[k]++;
}

/* The examples of local block b among positions [j0, j1) of the epoch's global order (those of
 * its bucket from its cursor on), H times, against wl; the block's epoch-end work ([i0, i1)
 * locally) after the last round. */
static strux_status block_passes(strux_solver *s, dual_data *d, int32_t b, int64_t i0, int64_t i1,
                                 int64_t j0, int64_t j1)
{
    const strux_dataset *ds = s->ds;
    int64_t q0 = d->cursor[b], q1 = q0;
    while (q1 < d->bucket[b + 1] && d->pos[q1] < j1)
        q1++;
    const strux_csr *x = &ds->x;
    for (int64_t pass = 0; pass < s->opt.local_passes; pass++) {
        int done = 0;
        if (d->method->pass && !d->visit_override)
            STRUX_TRY(d->method->pass(s, d, i0, i1, j0, j1, &done));
        if (done) {
            strux_solver_progress(s, j1, ds->n_global);
            continue;
        }
        for (int64_t q = q0; q < q1; q++) {
            int64_t i = d->order[q];
            /* the visits jump through the data: fetch ahead what the visit of the example
             * PREFETCH_AHEAD later reads (its row offsets one step earlier, then its features
             * and coefficients), which the visit would otherwise wait on */
            if (q + 2 * PREFETCH_AHEAD < q1) {
                int64_t k = d->order[q + 2 * PREFETCH_AHEAD];
                __builtin_prefetch(x->ptr + k, 0, 1);
                __builtin_prefetch(d->off + k, 0, 1);
            }
            if (q + PREFETCH_AHEAD < q1) {
                int64_t k = d->order[q + PREFETCH_AHEAD], p = x->ptr[k];
                __builtin_prefetch(x->col + p, 0, 1);
                __builtin_prefetch(x->val + p, 0, 1);
                if (d->c) __builtin_prefetch(d->c + d->off[k], 1, 1);
                if (d->prefetch_override) d->prefetch_override(d->visit_ctx, k);
            }
            STRUX_TRY(d->visit_override ? d->visit_override(d->visit_ctx, s, d, i)
                                        : d->method->visit(s, d, i));
            if (q % PROGRESS_EVERY == PROGRESS_EVERY - 1)
                strux_solver_progress(s, d->pos[q] + 1, ds->n_global);
        }
    }
    d->cursor[b] = q1;
    if (j1 == ds->n_global && d->method->epoch_end) STRUX_TRY(d->method->epoch_end(s, d, i0, i1));
    return STRUX_OK;
}

/* One round (positions [j0, j1) of the epoch's order) on every local block, each from the agreed
 * w; leaves this rank's Δw_k: a sparse view's change of each block in part[b] (the view reset
 * after each); else Σ Δw_k in wl (one block: Δw_k = (wl − w)/σ′ in place; several: each block's
 * added into acc, then copied) or in the block-ordered slots. With one block in the whole job wl
 * is w and the passes update it directly. */
static strux_status local_round(strux_solver *s, dual_data *d, int64_t j0, int64_t j1)
{
    const strux_dataset *ds = s->ds;
    if (d->acc) strux_model_zero(d->acc);
    for (int32_t b = ds->block_lo; b < ds->block_hi; b++) {
        if (d->acc) STRUX_TRY(strux_model_copy(d->wl, d->w));
        int64_t i0, i1;
        strux_dataset_block_range(ds, b, &i0, &i1);
        STRUX_TRY(block_passes(s, d, b - ds->block_lo, i0, i1, j0, j1));
        if (d->wl == d->w) continue;
        if (d->part) { /* Δw_k = (σ′·Δw_k)/σ′ of the view's change */
            STRUX_TRY(strux_model_status(strux_model_view_delta(d->wl)));
            STRUX_TRY(strux_model_nonzero_rows(strux_model_view_delta(d->wl), 1 / d->sigma,
                                               &d->part[b - ds->block_lo]));
            strux_model_view_reset(d->wl);
            continue;
        }
        STRUX_TRY(strux_model_axpy(-1.0, d->w, d->wl));
        strux_model_scale(d->wl, 1 / d->sigma);
        if (d->dw_len) { /* this block's Δw_k into its slot */
            strux_model_buffer mb = strux_model_storage(d->wl);
            double *slot = d->dw + (size_t)(b - ds->block_lo) * (size_t)d->dw_len;
            memcpy(slot, mb.v, (size_t)mb.n_v * sizeof *slot);
            if (mb.n_extra) memcpy(slot + mb.n_v, mb.extra, (size_t)mb.n_extra * sizeof *slot);
            if (d->acc) STRUX_TRY(strux_model_copy(d->wl, d->w));
            continue;
        }
        if (d->acc) STRUX_TRY(strux_model_axpy(1.0, d->wl, d->acc));
    }
    if (d->dw_len) return STRUX_OK;
    if (d->acc) STRUX_TRY(strux_model_copy(d->wl, d->acc));
    return STRUX_OK;
}

/* The sparse sync of a sparse w: Σ_k Δw_k over every block in block order, as the blocks'
 * non-zero lists (strux_comm_sum_sparse), or as the dense block-ordered sum when that moves
 * fewer bytes (small models); both add the same values in the same order, so the choice does
 * not change the sum. Then w += ΣΔw_k; wl, reset after each block, reads the new w. */
static strux_status sync_sparse(strux_solver *s, dual_data *d)
{
    const strux_dataset *ds = s->ds;
    int32_t n_b = ds->block_hi - ds->block_lo, n_rows = strux_model_n_rows(d->w);
    int64_t dim = strux_model_dim(d->w), n_extra = strux_model_n_extra(d->w);
    int64_t size[2] = {0, 0}, bytes0 = strux_comm_bytes(s->comm); /* entries, rows */
    for (int32_t b = 0; b < n_b; b++) {
        size[0] += d->part[b].n;
        size[1] += d->part[b].n_rows;
    }
    STRUX_TRY(strux_comm_allreduce_sum_i64(s->comm, size, 2));
    int n_ranks = strux_comm_size(s->comm);
    int32_t K = ds->n_blocks > 0 ? ds->n_blocks : n_ranks;
    double len = (double)n_rows * (double)dim + (double)n_extra,
           dense = (double)n_ranks * K * len * sizeof(double),
           sparse = (double)size[0] * 12 + (double)size[1] * 8;
    if (n_ranks > 1 && dense < sparse && K * len * sizeof(double) <= ORDERED_SUM_MAX_BYTES) {
        double *slots = NULL, *sum = NULL;
        strux_status st = strux_alloc_array(&slots, (size_t)(n_b > 0 ? n_b : 1) * (size_t)len + 1,
                                            sizeof *slots);
        if (st == STRUX_OK) st = strux_alloc_array(&sum, (size_t)len + 1, sizeof *sum);
        for (int32_t b = 0; st == STRUX_OK && b < n_b; b++)
            strux_sparse_rows_scatter(&d->part[b], dim, slots + (size_t)b * (size_t)len);
        st = strux_comm_agree(s->comm, st);
        if (st == STRUX_OK) st = strux_block_sum(s->comm, ds, slots, (int64_t)len, sum);
        if (st == STRUX_OK)
            st = strux_sparse_rows_gather(sum, n_rows + 1, dim, n_extra, &d->sum);
        strux_free(&slots);
        strux_free(&sum);
        STRUX_TRY(strux_comm_agree(s->comm, st));
    } else {
        STRUX_TRY(strux_comm_sum_sparse(s->comm, d->part, n_b, d->shared, &d->sum, d->work));
    }
    d->sync_bytes += strux_comm_bytes(s->comm) - bytes0;
    d->sync_nnz += d->sum.n;
    if (d->shared) return strux_model_shared_add_sparse(d->w, &d->sum);
    strux_model_add_sparse(d->w, &d->sum);
    return strux_model_status(d->w);
}

/* w += wl, the round's Σ_k Δw_k that a dense sync left in wl: a model of this rank's, or, for
 * one copy per host, merged into the host's block by its writer (the others pass nothing). */
static strux_status add_to_w(dual_data *d)
{
    if (!d->shared) return strux_model_axpy(1.0, d->wl, d->w);
    strux_sparse_rows_clear(&d->sum);
    strux_status st = strux_model_shared_writer(d->w)
                          ? strux_model_nonzero_rows(d->wl, 1.0, &d->sum)
                          : STRUX_OK;
    strux_status as = strux_model_shared_add_sparse(d->w, &d->sum);
    return st != STRUX_OK ? st : as;
}

/* The CoCoA+ sync: the Δw_k of every block summed over ranks, w += ΣΔw_k, wl ← w. */
static strux_status sync_round(strux_solver *s, dual_data *d)
{
    int64_t bytes0 = strux_comm_bytes(s->comm);
    if (d->part) {
        STRUX_TRY(strux_comm_agree(s->comm, sync_sparse(s, d)));
        bytes0 = strux_comm_bytes(s->comm); /* counted by sync_sparse */
    } else if (d->dw_len) { /* Σ_k Δw_k in block order */
        STRUX_TRY(strux_block_sum(s->comm, s->ds, d->dw, d->dw_len, d->dw_sum));
        for (int64_t j = 0; j < d->dw_len; j++)
            d->sync_nnz += d->dw_sum[j] != 0;
        strux_model_buffer mb = strux_model_storage(d->wl);
        memcpy(mb.v, d->dw_sum, (size_t)mb.n_v * sizeof *d->dw_sum);
        if (mb.n_extra) memcpy(mb.extra, d->dw_sum + mb.n_v, (size_t)mb.n_extra * sizeof *mb.extra);
        strux_model_refresh(d->wl);
        STRUX_TRY(strux_comm_agree(s->comm, add_to_w(d)));
        STRUX_TRY(strux_model_copy(d->wl, d->w));
    } else if (d->wl != d->w) {
        STRUX_TRY(strux_solver_allreduce_model(s, d->wl));
        STRUX_TRY(strux_comm_agree(s->comm, add_to_w(d)));
        STRUX_TRY(strux_model_copy(d->wl, d->w));
    }
    if (d->wl != d->w) {
        d->syncs++;
        d->sync_bytes += strux_comm_bytes(s->comm) - bytes0;
    }
    d->rounds++;
    if (d->w != s->model) { /* w̄ ← (t·w̄ + 2·w)/(t + 2), t = rounds before this one */
        double t = (double)(d->rounds - 1);
        strux_model_scale(s->model, t / (t + 2));
        STRUX_TRY(strux_model_axpy(2 / (t + 2), d->w, s->model));
    }
    return STRUX_OK;
}

void strux_dual_epoch_order(strux_solver *s, dual_data *d)
{
    strux_rng rng;
    strux_rng_init(&rng, (uint64_t)s->opt.seed, DUAL_RNG_STREAM, (uint64_t)s->epoch);
    strux_rng_permutation(&rng, d->perm, s->ds->n_global);
}

/* One pass over the data in the global order of (seed, epoch), cut into rounds of
 * solver.sync_every examples (all of them when 0), each round H local passes and a sync; between
 * two rounds the caller's round function (a stop or a checkpoint: it may end the epoch there, and
 * a resumed epoch starts at next_at). */
static strux_status dual_epoch(strux_solver *s)
{
    dual_data *d = s->data;
    int64_t n = s->ds->n_global, B = s->opt.sync_every > 0 ? s->opt.sync_every : n;
    d->syncs = d->sync_nnz = d->sync_bytes = 0;
    strux_dual_epoch_order(s, d);
    bucket_order(s->ds, d);
    for (int64_t j0 = d->next_at; j0 < n; j0 += B) {
        int64_t j1 = j0 + B < n ? j0 + B : n;
        STRUX_TRY(strux_comm_agree(s->comm, local_round(s, d, j0, j1)));
        STRUX_TRY(sync_round(s, d));
        if (j1 == n) break;
        d->next_at = j1;
        STRUX_TRY(strux_solver_round(s));
    }
    d->next_at = 0;
    STRUX_TRY(strux_comm_agree(s->comm, strux_model_status(d->wl)));
    int64_t bad = strux_model_find_non_finite(d->w); /* agreed weights: every rank sees it */
    STRUX_CHECK(bad < 0, STRUX_ERR_NUMERIC, "weight %lld is not finite after epoch %lld",
                (long long)bad, (long long)s->epoch + 1);
    return d->method->epoch_done ? d->method->epoch_done(s, d) : STRUX_OK;
}

/* D = Σ_i b_i − (λ/2)||w||² at the iterate; gap = J(model) − D ≥ 0. */
static strux_status dual_certificate(strux_solver *s, strux_certificate *c)
{
    const dual_data *d = s->data;
    double sum_b = 0; /* in block order: the same at any rank count */
    STRUX_TRY(strux_block_sum_examples(s->comm, s->ds, d->b, &sum_b));
    c->dual = sum_b - 0.5 * s->opt.lambda * strux_model_norm2(d->w);
    c->gap = c->primal - c->dual;
    STRUX_CHECK(isfinite(c->dual), STRUX_ERR_NUMERIC, "dual objective is %g", c->dual);
    return STRUX_OK;
}

/* Checkpoint, global part (identical on every rank): the round count, the position in an
 * interrupted epoch, the iterate when it differs from the model, the method's global state. wl
 * equals w between rounds. */
static strux_status dual_save(const strux_solver *s, strux_blob *b)
{
    const dual_data *d = s->data;
    STRUX_TRY(strux_blob_put(b, &d->rounds, sizeof d->rounds));
    STRUX_TRY(strux_blob_put(b, &d->next_at, sizeof d->next_at));
    if (d->w != s->model) STRUX_TRY(strux_model_put(d->w, b));
    return d->method->save_global ? d->method->save_global(d, b) : STRUX_OK;
}

static strux_status dual_load(strux_solver *s, strux_blob *b)
{
    dual_data *d = s->data;
    STRUX_TRY(strux_blob_get(b, &d->rounds, sizeof d->rounds, "rounds"));
    STRUX_TRY(strux_blob_get(b, &d->next_at, sizeof d->next_at, "position in the epoch"));
    STRUX_CHECK(d->next_at >= 0 && d->next_at < s->ds->n_global, STRUX_ERR_INPUT,
                "the checkpoint stops its epoch at example %lld of %lld (another data file?)",
                (long long)d->next_at, (long long)s->ds->n_global);
    if (d->w != s->model) STRUX_TRY(strux_model_get_blob(d->w, b, "iterate"));
    if (d->method->load_global) STRUX_TRY(d->method->load_global(d, b));
    return strux_model_copy(d->wl, d->w);
}

static strux_status dual_prepare_save(strux_solver *s)
{
    dual_data *d = s->data;
    return d->method->reduce_partial ? d->method->reduce_partial(s, d) : STRUX_OK;
}

static int64_t dual_epoch_position(const strux_solver *s)
{
    const dual_data *d = s->data;
    return d->next_at;
}

/* Checkpoint, per data block: the dual blocks and loss shares of local examples [i0, i1), then
 * the method's per-example state. */
static strux_status dual_save_examples(const strux_solver *s, int64_t i0, int64_t i1, strux_blob *b)
{
    const dual_data *d = s->data;
    int64_t n = i1 - i0, n_c = d->off[i1] - d->off[i0];
    STRUX_TRY(strux_blob_put(b, &n, sizeof n));
    STRUX_TRY(strux_blob_put(b, &n_c, sizeof n_c));
    if (d->c) STRUX_TRY(strux_blob_put(b, d->c + d->off[i0], (size_t)n_c * sizeof *d->c));
    STRUX_TRY(strux_blob_put(b, d->b + i0, (size_t)n * sizeof *d->b));
    return d->method->save ? d->method->save(s, d, i0, i1, b) : STRUX_OK;
}

static strux_status dual_load_examples(strux_solver *s, int64_t i0, int64_t i1, strux_blob *b)
{
    dual_data *d = s->data;
    int64_t n, n_c;
    STRUX_TRY(strux_blob_get(b, &n, sizeof n, "example count"));
    STRUX_TRY(strux_blob_get(b, &n_c, sizeof n_c, "block size"));
    STRUX_CHECK(n == i1 - i0 && n_c == d->off[i1] - d->off[i0], STRUX_ERR_INPUT,
                "the checkpoint holds %lld dual blocks of %lld coefficients for this data block, "
                "this run has %lld of %lld (a different data file)",
                (long long)n, (long long)n_c, (long long)(i1 - i0),
                (long long)(d->off[i1] - d->off[i0]));
    if (d->c)
        STRUX_TRY(strux_blob_get(b, d->c + d->off[i0], (size_t)n_c * sizeof *d->c, "dual blocks"));
    STRUX_TRY(strux_blob_get(b, d->b + i0, (size_t)n * sizeof *d->b, "loss shares"));
    return d->method->load ? d->method->load(s, d, i0, i1, b) : STRUX_OK;
}

static void dual_destroy(strux_solver *s)
{
    dual_data *d = s->data;
    if (!d) return;
    if (d->method->destroy) d->method->destroy(d);
    strux_free(&d->off);
    strux_free(&d->c);
    strux_free(&d->b);
    strux_free(&d->dir);
    strux_free(&d->X);
    strux_free(&d->perm);
    strux_free(&d->order);
    strux_free(&d->pos);
    strux_free(&d->bucket);
    strux_free(&d->cursor);
    strux_free(&d->block_first);
    strux_model_destroy(&d->acc);
    for (int32_t b = 0; d->part && b < s->ds->block_hi - s->ds->block_lo; b++)
        strux_sparse_rows_free(&d->part[b]);
    strux_free(&d->part);
    strux_sparse_rows_free(&d->sum);
    strux_sparse_rows_free(&d->work[0]);
    strux_sparse_rows_free(&d->work[1]);
    strux_free(&d->dw);
    strux_free(&d->dw_sum);
    if (d->wl != d->w) strux_model_destroy(&d->wl);
    if (d->w != s->model) strux_model_destroy(&d->w);
    strux_pot_free(&d->pot);
    strux_label_free(&d->truth);
    strux_free(&s->data);
}

void strux_dual_set_visit(strux_solver *s,
                          strux_status (*visit)(void *ctx, strux_solver *s, dual_data *d, int64_t i),
                          void (*prefetch)(void *ctx, int64_t i), void *ctx)
{
    dual_data *d = s->data;
    d->visit_override = visit;
    d->prefetch_override = prefetch;
    d->visit_ctx = ctx;
}

void strux_dual_problem_changed(strux_solver *s)
{
    dual_data *d = s->data;
    if (d->method->reset) d->method->reset(d);
}

/* A new λ keeps the dual variables α: the blocks c = −α·a/(λn) and every w built from them
 * scale by λ_old/λ_new, the loss shares b = α·b(ŷ)/n stay (blocks a method keeps are its α). */
static void dual_set_lambda(strux_solver *s, double lambda)
{
    dual_data *d = s->data;
    strux_dual_problem_changed(s);
    double r = s->opt.lambda / lambda;
    if (d->c) strux_scal(d->off[s->ds->n_local], r, d->c);
    strux_model_scale_about_centre(d->w, r); /* w = w0 + Σ B_i c_i */
    if (d->part) /* a view of w, Δw = 0 between rounds: it follows w */
        strux_model_view_reset(d->wl);
    else if (d->wl != d->w)
        strux_model_scale_about_centre(d->wl, r);
    if (d->w != s->model) strux_model_scale_about_centre(s->model, r);
}

/* Features of row k times g_k: the corners c = −a/(λn) of every example scale so by row, so the
 * dual variables stay and every block coefficient of row k (s·K + k), and every weight row k built
 * from them, is multiplied by g_k; the loss shares b stay. Between rounds (wl = w, acc = 0). */
static strux_status dual_rescale_rows(strux_solver *s, const double *g)
{
    dual_data *d = s->data;
    STRUX_CHECK(d->c, STRUX_ERR_UNSUPPORTED,
                "rescaling weight rows needs the dual blocks as coefficients (solver.dual_blocks "
                "= dense)");
    strux_dual_problem_changed(s);
    for (int64_t i = 0; i < s->ds->n_local; i++) {
        strux_block_shape b = strux_task_block_shape(s->task, s->ds, i);
        double *c = d->c + d->off[i];
        for (int32_t r = 0; r < b.S; r++)
            for (int32_t k = 0; k < b.K; k++)
                c[(int64_t)r * b.K + k] *= g[k];
    }
    for (int32_t k = 0; k < strux_model_n_rows(d->w); k++) {
        strux_model_scale_row(d->w, k, g[k]);
        if (d->wl != d->w && !d->part) strux_model_scale_row(d->wl, k, g[k]);
        if (d->acc) strux_model_scale_row(d->acc, k, g[k]);
        if (d->w != s->model) strux_model_scale_row(s->model, k, g[k]);
    }
    if (d->part) strux_model_view_reset(d->wl); /* a view follows w */
    return STRUX_OK;
}

/* Per epoch: CoCoA+ syncs, the bytes they sent (summed over ranks) and the entries of their
 * sums Σ_k Δw_k (the changed weights; NaN where the sum is a plain allreduce of wl); the dual
 * coordinates held (sdca's active sets; NaN where every coordinate is). */
static const char *const dual_columns[] = {"syncs", "sync_bytes", "sync_nnz", "active", NULL};

static strux_status dual_metrics(strux_solver *s, double *values)
{
    const dual_data *d = s->data;
    int64_t sums[2] = {d->sync_bytes, d->n_active};
    double nnz = (double)d->sync_nnz; /* with one copy per host only its writers sum */
    STRUX_TRY(strux_comm_allreduce_sum_i64(s->comm, sums, 2));
    STRUX_TRY(strux_comm_allreduce_max(s->comm, &nnz, 1));
    values[0] = (double)d->syncs;
    values[1] = (double)sums[0];
    values[2] = d->part || d->dw_len || d->syncs == 0 ? nnz : NAN;
    values[3] = d->n_active >= 0 ? (double)sums[1] : NAN;
    return STRUX_OK;
}

static strux_status dual_primal(strux_solver *s, strux_certificate *c)
{
    dual_data *d = s->data;
    if (d->method->primal) return d->method->primal(s, d, c);
    return strux_objective_primal(s->task, s->exact, s->ds, s->model, s->comm, s->opt.lambda, c);
}

/* Between epochs (wl = w): prune the iterate and the model, and let the view or copy follow. */
static strux_status dual_prune(strux_solver *s, double threshold, int64_t *dropped)
{
    dual_data *d = s->data;
    *dropped = strux_model_prune(d->w, threshold);
    if (d->w != s->model) (void)strux_model_prune(s->model, threshold);
    if (d->wl != d->w) STRUX_TRY(strux_model_copy(d->wl, d->w));
    strux_dual_problem_changed(s);
    return strux_model_status(d->w);
}

const struct strux_solver_ops strux_dual_ops = {
    .prune = dual_prune,
    .primal = dual_primal,
    .columns = dual_columns,
    .metrics = dual_metrics,
    .rescale_rows = dual_rescale_rows,
    .set_lambda = dual_set_lambda,
    .setup = dual_setup,
    .epoch = dual_epoch,
    .certificate = dual_certificate,
    .save = dual_save,
    .load = dual_load,
    .save_examples = dual_save_examples,
    .load_examples = dual_load_examples,
    .destroy = dual_destroy,
    .prepare_save = dual_prepare_save,
    .epoch_position = dual_epoch_position,
};
