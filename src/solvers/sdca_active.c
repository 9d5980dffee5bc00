/* solvers/sdca_active.c - sdca with primal-dual active sets (solver.active_sets; PPDSparse, Yen
 * et al., KDD 2017) for tasks whose margin loss is one binary hinge per label id (1-vs-All, flag
 * label_parts): J(w) = (λ/2)||w − w0||² + (1/W) Σ_i v_i Σ_k max(0, 1 + σ_ik·w_k·x_i), σ = −1 on
 * the example's labels and +1 elsewhere, w0 the bias centre (model.bias_centre = c < 0 at the
 * bias column; the engine starts at w = w0). The dual coordinate of hinge (i, k) is α_ik ∈
 * [0, 1] as in sdca.c's per-part path (c_ik = −σ·v_i·α_ik/(λW)), with the same closed-form step
 * against wl; its share of the dual objective is v_i·α_ik·(1 + σ_ik·c·x_i,bias)/W, the hinge's
 * intercept at w0. Only the active coordinates are held, per example sorted by label: its
 * positives from the start, a negative once its hinge is violated (dual sparsity). After each
 * epoch (w agreed) every example is scored against the rows it touches through the weights by
 * column (strux_model_cols, the bias left out; with model.share = host built once per host in
 * a window of its own, as w is), every other row scoring its bias weight alone:
 * a negative joins when 1 + w_k·x_i > 0 (at most ACTIVE_ADD_MAX at a time, sampled in proportion
 * to the violation), one at α = 0 with its hinge satisfied leaves. With
 * c ≤ −1/x_bias a row that shares no feature with an example leaves it beyond its margin until
 * the row's bias climbs above −1/x_bias, so the rows grow only with the examples that touch
 * them (primal sparsity) and an epoch costs the active coordinates, not examples × labels. The
 * certificate's primal is summed the same way, exactly: the touched rows' hinges, the example's
 * positives, and the rows whose bias alone violates every untouched negative (V, their hinge
 * 1 + b_k·x_bias shared by all). The result is independent of the rank count at a fixed
 * solver.blocks: every decision is per example against the agreed w. Not LIBLINEAR's shrinking
 * (sdca.c): coordinates leave by the primal test here. */
#include "dual.h"

#include "strux/comm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Violated negatives an example takes in at one screening: a row whose bias alone violates
 * every negative after the first epoch (pushed up by its positives while no negative was
 * active) would otherwise join every example at once; the rest join at later screenings, if
 * they still violate. With more violators than this, the example samples them without
 * replacement with probability proportional to the violation (Efraimidis and Spirakis's keys
 * u^(1/v), u keyed by (solver.seed, global example, epoch)): taking the most violated instead
 * gave every example the same few rows of largest bias, so each screening repaired about this
 * many rows and the other rows' biases stayed up for epochs (2000 labels: 8 epochs to undo the
 * first epoch's rise, the primal 300 times J(w0) meanwhile); sampled, every violating row gets
 * its share of each screening's negatives. */
#define ACTIVE_ADD_MAX 64
#define ACTIVE_RNG_STREAM 0x4143540000000000ULL /* "ACT" + the global example index */

/* A violated negative: its label and 1 + w_k·x_i (in the take-in: its sampling key). */
typedef struct candidate {
    double v;
    int32_t k;
} candidate;

/* The order of the take-in: larger key first, then the smaller label (a total order). */
static int before(const candidate *x, const candidate *y)
{
    return x->v != y->v ? x->v > y->v : x->k < y->k;
}

/* Sift c[j] down the heap c[0..n) whose root is its last in `before` order. */
static void sift_down(candidate *c, int32_t n, int32_t j)
{
    for (;;) {
        int32_t l = 2 * j + 1, last = j;
        if (l < n && before(&c[last], &c[l])) last = l;
        if (l + 1 < n && before(&c[last], &c[l + 1])) last = l + 1;
        if (last == j) return;
        candidate t = c[j];
        c[j] = c[last];
        c[last] = t;
        j = last;
    }
}

/* The first `keep` of c[0..n) in `before` order, into c[0..keep) (unordered): a heap of the
 * best so far with the worst at its root, O(n log keep), where sorting all n cost O(n log n)
 * per screened example (57 % of an epoch with 10K labels, perf). */
static void take_first(candidate *c, int32_t n, int32_t keep)
{
    for (int32_t j = keep / 2 - 1; j >= 0; j--)
        sift_down(c, keep, j);
    for (int32_t j = keep; j < n; j++)
        if (before(&c[j], &c[0])) {
            c[0] = c[j];
            sift_down(c, keep, 0);
        }
}

static int by_label(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    return (x->k > y->k) - (x->k < y->k);
}

typedef struct act_set {
    int32_t n, cap;
    int32_t *k;        /* labels, ascending */
    signed char *sign; /* σ_k: −1 on the example's labels, +1 elsewhere */
    double *alpha;     /* α_ik ∈ [0, 1] */
} act_set;

typedef struct active_data {
    act_set *a;               /* per local example */
    double *xx;               /* ||x_i||² */
    double *bx;               /* x_i's bias feature value (0: none) */
    double centre;            /* c: the bias weights' regulariser centre */
    int32_t bias_col;         /* −1: no bias column */
    strux_model_cols cols;    /* w by column without the bias (screening, certificate) */
    strux_window *cols_win;   /* with a shared w (model.share = host): cols once per host */
    strux_model_share cols_share;
    int64_t cols_round;       /* d->rounds when cols was built; −1: never */
    double *bias;             /* n_rows: w's bias weights at that build */
    int32_t *over;            /* V: rows whose bias alone violates an untouched negative */
    int32_t n_over;           /* |V| */
    double over_sum;          /* Σ_{k∈V} (1 + b_k·x_bias) */
    double over_bx;           /* the bias value V was found for */
    int32_t *rows, *nk;       /* n_rows + 1 scratch: touched rows, a merged set's labels */
    double *partial, *na;     /* their partial scores / the merged set's α */
    signed char *ns;          /* the merged set's signs */
    double *scores;           /* a visit's scores of its active rows */
    candidate *cand;          /* n_rows: a screening's violated negatives */
} active_data;

/* Room for n coordinates in set a. */
static strux_status set_reserve(act_set *a, int32_t n)
{
    if (n <= a->cap) return STRUX_OK;
    int32_t cap = a->cap + a->cap / 2 > n ? a->cap + a->cap / 2 : n;
    STRUX_TRY(strux_realloc_array(&a->k, (size_t)cap, sizeof *a->k));
    STRUX_TRY(strux_realloc_array(&a->sign, (size_t)cap, sizeof *a->sign));
    STRUX_TRY(strux_realloc_array(&a->alpha, (size_t)cap, sizeof *a->alpha));
    a->cap = cap;
    return STRUX_OK;
}

static int64_t row_of(const strux_dataset *ds, int64_t i)
{
    return ds->ex_ptr ? ds->ex_ptr[i] : i;
}

static strux_status active_setup(strux_solver *s, dual_data *d)
{
    const strux_dataset *ds = s->ds;
    int32_t L = strux_model_n_rows(d->w);
    active_data *m;
    STRUX_TRY(strux_alloc(&m, sizeof *m));
    d->mdata = m;
    int32_t centre_col;
    m->centre = strux_model_centre_of(d->w, &centre_col);
    m->bias_col = ds->bias_col;
    m->cols_round = -1;
    if (d->shared) { /* Collective: every rank's w is shared or none is */
        STRUX_TRY(strux_window_create(s->comm, 0, &m->cols_win));
        m->cols_share = strux_window_model_share(m->cols_win);
        m->cols.share = &m->cols_share;
    }
    STRUX_TRY(strux_alloc_array(&m->a, (size_t)ds->n_local + 1, sizeof *m->a));
    STRUX_TRY(strux_alloc_array(&m->xx, (size_t)ds->n_local + 1, sizeof *m->xx));
    STRUX_TRY(strux_alloc_array(&m->bx, (size_t)ds->n_local + 1, sizeof *m->bx));
    STRUX_TRY(strux_alloc_array(&m->bias, (size_t)L + 1, sizeof *m->bias));
    STRUX_TRY(strux_alloc_array(&m->over, (size_t)L + 1, sizeof *m->over));
    STRUX_TRY(strux_alloc_array(&m->rows, (size_t)L + 1, sizeof *m->rows));
    STRUX_TRY(strux_alloc_array(&m->nk, (size_t)L + 1, sizeof *m->nk));
    STRUX_TRY(strux_alloc_array(&m->ns, (size_t)L + 1, sizeof *m->ns));
    STRUX_TRY(strux_alloc_array(&m->partial, (size_t)L + 1, sizeof *m->partial));
    STRUX_TRY(strux_alloc_array(&m->na, (size_t)L + 1, sizeof *m->na));
    STRUX_TRY(strux_alloc_array(&m->scores, (size_t)L + 1, sizeof *m->scores));
    STRUX_TRY(strux_alloc_array(&m->cand, (size_t)L + 1, sizeof *m->cand));
    d->n_active = 0;
    for (int64_t i = 0; i < ds->n_local; i++) { /* the positives start active, at α = 0 */
        int64_t r = row_of(ds, i), y0 = ds->y_ptr[r], n = ds->y_ptr[r + 1] - y0;
        act_set *a = &m->a[i];
        STRUX_TRY(set_reserve(a, (int32_t)n));
        for (int64_t q = 0; q < n; q++) {
            a->k[a->n] = ds->y_idx[y0 + q];
            a->sign[a->n] = -1;
            a->alpha[a->n++] = 0;
        }
        m->xx[i] = strux_spnorm2(&ds->x, r);
        for (int64_t p = ds->x.ptr[r]; p < ds->x.ptr[r + 1]; p++)
            if (ds->x.col[p] == m->bias_col) m->bx[i] = ds->x.val[p];
        d->n_active += a->n;
    }
    strux_log(STRUX_LOG_DEBUG, "sdca: active sets, bias centre %g", m->centre);
    return STRUX_OK;
}

/* The closed-form coordinate steps of sdca.c's per-part path on example i's active hinges. */
static strux_status active_visit(strux_solver *s, dual_data *d, int64_t i)
{
    active_data *m = d->mdata;
    const strux_dataset *ds = s->ds;
    act_set *a = &m->a[i];
    double v = strux_dataset_weight(ds, i);
    if (!(v > 0) || a->n == 0 || !(m->xx[i] > 0)) return STRUX_OK;
    double lambda_n = s->opt.lambda * d->n / v, q = d->sigma * m->xx[i];
    int64_t r = row_of(ds, i);
    strux_model_scores_rows(d->wl, &ds->x, r, a->k, a->n, m->scores);
    for (int32_t t = 0; t < a->n; t++) {
        double sk = a->sign[t], alpha = a->alpha[t];
        double a_new = alpha + lambda_n * (1 + sk * m->scores[t]) / q;
        a_new = a_new < 0 ? 0 : a_new > 1 ? 1 : a_new;
        if (a_new == alpha) continue;
        a->alpha[t] = a_new;
        d->b[i] += v * (a_new - alpha) * (1 + sk * m->centre * m->bx[i]) / d->n;
        strux_model_add_row(d->wl, &ds->x, r, a->k[t], d->sigma * (-(a_new - alpha) * sk / lambda_n));
    }
    return STRUX_OK;
}

/* w by column and its bias weights, once per agreed w; V for bias value bx. */
static strux_status build_cols(dual_data *d, active_data *m)
{
    if (m->cols_round == d->rounds) return STRUX_OK;
    STRUX_TRY(strux_model_cols_build(d->w, m->bias_col, &m->cols));
    for (int32_t k = 0; k < strux_model_n_rows(d->w); k++)
        m->bias[k] = m->bias_col >= 0 ? strux_model_get(d->w, k, m->bias_col) : 0;
    m->cols_round = d->rounds;
    m->over_bx = NAN;
    return STRUX_OK;
}

static void find_over(const dual_data *d, active_data *m, double bx)
{
    if (m->over_bx == bx) return;
    m->n_over = 0;
    m->over_sum = 0;
    for (int32_t k = 0; k < strux_model_n_rows(d->w); k++)
        if (1 + m->bias[k] * bx > 0) {
            m->over[m->n_over++] = k;
            m->over_sum += 1 + m->bias[k] * bx;
        }
    m->over_bx = bx;
}

/* The next label of three ascending lists (INT32_MAX when all are done). */
static inline int32_t next3(const int32_t *a, int32_t ia, int32_t na, const int32_t *b, int32_t ib,
                            int32_t nb, const int32_t *c, int32_t ic, int32_t nc)
{
    int32_t k = INT32_MAX;
    if (ia < na && a[ia] < k) k = a[ia];
    if (ib < nb && b[ib] < k) k = b[ib];
    if (ic < nc && c[ic] < k) k = c[ic];
    return k;
}

/* Example i's active set against the agreed w: each label of the set, of the rows i touches
 * and of V, with its score (partial + bias); violated negatives join (ACTIVE_ADD_MAX of them
 * sampled when more violate), satisfied ones at α = 0 leave, positives stay. */
static strux_status screen(const strux_solver *s, dual_data *d, active_data *m, int64_t i)
{
    const strux_dataset *ds = s->ds;
    act_set *a = &m->a[i];
    int64_t r = row_of(ds, i);
    int32_t nt = strux_model_cols_scores(&m->cols, &ds->x, r, m->rows, m->partial);
    find_over(d, m, m->bx[i]);
    int32_t ia = 0, it = 0, iv = 0, n = 0, nc = 0;
    for (;;) {
        int32_t k = next3(a->k, ia, a->n, m->rows, it, nt, m->over, iv, m->n_over);
        if (k == INT32_MAX) break;
        double score = m->bias[k] * m->bx[i];
        if (it < nt && m->rows[it] == k) score += m->partial[it++];
        if (iv < m->n_over && m->over[iv] == k) iv++;
        if (ia < a->n && a->k[ia] == k) {
            if (a->sign[ia] < 0 || a->alpha[ia] > 0 || 1 + score > 0) {
                m->nk[n] = k;
                m->ns[n] = a->sign[ia];
                m->na[n++] = a->alpha[ia];
            }
            ia++;
        } else if (1 + score > 0) { /* a violated negative (positives are always held) */
            m->cand[nc++] = (candidate){1 + score, k};
        }
    }
    if (nc > ACTIVE_ADD_MAX) {
        strux_rng rng;
        strux_rng_init(&rng, (uint64_t)s->opt.seed, ACTIVE_RNG_STREAM + (uint64_t)(ds->first + i),
                       (uint64_t)s->epoch);
        for (int32_t c = 0; c < nc; c++) /* log(u^(1/v)), u ∈ (0, 1] */
            m->cand[c].v = log(1 - strux_rng_uniform(&rng)) / m->cand[c].v;
        take_first(m->cand, nc, ACTIVE_ADD_MAX);
        nc = ACTIVE_ADD_MAX;
        qsort(m->cand, (size_t)nc, sizeof *m->cand, by_label);
    }
    STRUX_TRY(set_reserve(a, n + nc));
    int32_t t = 0, c = 0, w = 0; /* the kept and the new, by label */
    while (t < n || c < nc) {
        if (c == nc || (t < n && m->nk[t] < m->cand[c].k)) {
            a->k[w] = m->nk[t];
            a->sign[w] = m->ns[t];
            a->alpha[w++] = m->na[t++];
        } else {
            a->k[w] = m->cand[c++].k;
            a->sign[w] = 1;
            a->alpha[w++] = 0;
        }
    }
    d->n_active += w - a->n;
    a->n = w;
    return STRUX_OK;
}

/* After the epoch's last sync (every rank, w agreed): every local example screened. */
static strux_status active_epoch_done(strux_solver *s, dual_data *d)
{
    active_data *m = d->mdata;
    strux_status st = build_cols(d, m);
    for (int64_t i = 0; st == STRUX_OK && i < s->ds->n_local; i++)
        st = screen(s, d, m, i);
    return strux_comm_agree(s->comm, st);
}

/* Σ_k max(0, 1 + σ_k·w_k·x_i) over every label, from the rows x_i touches, its labels and V. */
static double hinge_sum(const strux_dataset *ds, active_data *m, int64_t i)
{
    int64_t r = row_of(ds, i), y0 = ds->y_ptr[r], ny = ds->y_ptr[r + 1] - y0;
    const int32_t *y = ds->y_idx + y0;
    int32_t nt = strux_model_cols_scores(&m->cols, &ds->x, r, m->rows, m->partial);
    double loss = m->over_sum;
    int32_t it = 0, iy = 0, iv = 0;
    for (;;) {
        int32_t k = next3(m->rows, it, nt, y, iy, (int32_t)ny, NULL, 0, 0);
        if (k == INT32_MAX) break;
        double score = m->bias[k] * m->bx[i], sk = 1;
        if (it < nt && m->rows[it] == k) score += m->partial[it++];
        if (iy < ny && y[iy] == k) {
            sk = -1;
            iy++;
        }
        while (iv < m->n_over && m->over[iv] < k) iv++;
        if (iv < m->n_over && m->over[iv] == k) loss -= 1 + m->bias[k] * m->bx[i];
        double h = 1 + sk * score;
        loss += h > 0 ? h : 0;
    }
    return loss;
}

/* J(w) = (λ/2)||w − w0||² + (1/W) Σ_i v_i·Σ_k hinge, summed in block order. */
static strux_status active_primal(strux_solver *s, dual_data *d, strux_certificate *c)
{
    active_data *m = d->mdata;
    const strux_dataset *ds = s->ds;
    int32_t n_b = ds->block_hi - ds->block_lo;
    double *part = NULL, sum = 0;
    strux_status st = strux_alloc_array(&part, (size_t)(n_b > 0 ? n_b : 1), sizeof *part);
    if (st == STRUX_OK && s->model == d->w) st = build_cols(d, m);
    if (st == STRUX_OK && s->model != d->w)
        st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                             "active sets certify the iterate only");
    for (int32_t b = 0; st == STRUX_OK && b < (n_b > 0 ? n_b : 1); b++) {
        int64_t i0 = 0, i1 = ds->n_local;
        if (n_b > 0) strux_dataset_block_range(ds, ds->block_lo + b, &i0, &i1);
        for (int64_t i = i0; i < i1; i++) {
            double v = strux_dataset_weight(ds, i);
            if (v == 0) continue;
            find_over(d, m, m->bx[i]);
            part[b] += v * hinge_sum(ds, m, i);
        }
    }
    st = strux_comm_agree(s->comm, st);
    if (st == STRUX_OK) st = strux_block_sum(s->comm, ds, part, 1, &sum);
    strux_free(&part);
    STRUX_TRY(st);
    c->loss = sum / ds->weight_sum;
    c->primal = 0.5 * s->opt.lambda * strux_model_norm2(s->model) + c->loss;
    c->dual = NAN;
    c->gap = NAN;
    STRUX_CHECK(isfinite(c->primal), STRUX_ERR_NUMERIC, "primal objective is %g", c->primal);
    return STRUX_OK;
}

/* Checkpoint, per example: its active labels, signs and α. */
static strux_status active_save(const strux_solver *s, const dual_data *d, int64_t i0, int64_t i1,
                                strux_blob *b)
{
    (void)s;
    const active_data *m = d->mdata;
    for (int64_t i = i0; i < i1; i++) {
        const act_set *a = &m->a[i];
        STRUX_TRY(strux_blob_put(b, &a->n, sizeof a->n));
        STRUX_TRY(strux_blob_put(b, a->k, (size_t)a->n * sizeof *a->k));
        STRUX_TRY(strux_blob_put(b, a->sign, (size_t)a->n * sizeof *a->sign));
        STRUX_TRY(strux_blob_put(b, a->alpha, (size_t)a->n * sizeof *a->alpha));
    }
    return STRUX_OK;
}

static strux_status active_load(strux_solver *s, dual_data *d, int64_t i0, int64_t i1,
                                strux_blob *b)
{
    active_data *m = d->mdata;
    int32_t L = strux_model_n_rows(d->w);
    for (int64_t i = i0; i < i1; i++) {
        act_set *a = &m->a[i];
        int32_t n;
        STRUX_TRY(strux_blob_get(b, &n, sizeof n, "active set size"));
        STRUX_CHECK(n >= 0 && n <= L, STRUX_ERR_INPUT,
                    "the checkpoint's active set of example %lld holds %d of %d labels",
                    (long long)(s->ds->first + i), n, L);
        STRUX_TRY(set_reserve(a, n));
        STRUX_TRY(strux_blob_get(b, a->k, (size_t)n * sizeof *a->k, "active labels"));
        STRUX_TRY(strux_blob_get(b, a->sign, (size_t)n * sizeof *a->sign, "active signs"));
        STRUX_TRY(strux_blob_get(b, a->alpha, (size_t)n * sizeof *a->alpha, "active duals"));
        for (int32_t t = 0; t < n; t++)
            STRUX_CHECK(a->k[t] >= 0 && a->k[t] < L && (t == 0 || a->k[t] > a->k[t - 1]) &&
                            (a->sign[t] == 1 || a->sign[t] == -1) && a->alpha[t] >= 0 &&
                            a->alpha[t] <= 1,
                        STRUX_ERR_INPUT,
                        "the checkpoint's active set of example %lld is corrupt at entry %d",
                        (long long)(s->ds->first + i), t);
        d->n_active += n - a->n;
        a->n = n;
    }
    m->cols_round = -1;
    return STRUX_OK;
}

/* The iterate changed outside the rounds (pruning): the weights by column are stale. */
static void active_reset(dual_data *d)
{
    active_data *m = d->mdata;
    m->cols_round = -1;
}

static void active_destroy(dual_data *d)
{
    active_data *m = d->mdata;
    if (!m) return;
    for (int64_t i = 0; m->a && i < d->n_local; i++) {
        strux_free(&m->a[i].k);
        strux_free(&m->a[i].sign);
        strux_free(&m->a[i].alpha);
    }
    strux_free(&m->a);
    strux_free(&m->xx);
    strux_free(&m->bx);
    strux_model_cols_free(&m->cols);
    strux_window_destroy(&m->cols_win);
    strux_free(&m->bias);
    strux_free(&m->over);
    strux_free(&m->rows);
    strux_free(&m->nk);
    strux_free(&m->ns);
    strux_free(&m->partial);
    strux_free(&m->na);
    strux_free(&m->scores);
    strux_free(&m->cand);
    strux_free(&d->mdata);
}

const dual_method strux_sdca_active_method = {.visit = active_visit,
                                              .setup = active_setup,
                                              .epoch_done = active_epoch_done,
                                              .reset = active_reset,
                                              .save = active_save,
                                              .load = active_load,
                                              .destroy = active_destroy,
                                              .primal = active_primal,
                                              .own_blocks = 1};
