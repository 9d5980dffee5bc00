/* solvers/cutting_plane.c - n-slack cutting plane (Joachims, Finley, Yu 2009; slack_bicriteria.md
 * §4.4): every example keeps a working set W_i of planes ℓ_i(w) ≥ β + w·a (a = ψ_h·Δφ_i(ŷ),
 * β = ψ − ψ_h·m of a search answer ŷ). A visit computes the slack ξ_i = max(0, max_W β + w·a)
 * (the input of the Sarawagi-Gupta search), adds the answer's plane when ψ > ξ_i + solver.cp_eps,
 * and re-optimises the restricted dual of the block:
 *     max Σ_p α_p β_p/n − (λ/2)||w||²,  w = −(1/(λn)) Σ_{i,p} α_ip B_i a_p,  α ≥ 0, Σ_p α_ip ≤ 1,
 * by SMO steps between two planes of W_i ∪ {0} (the zero plane y = y_i carries 1 − Σ_p α_ip),
 * each an exact line search (GLPK cannot solve the QP; §4.4). solver.cp_qp_passes passes over all
 * working sets per epoch re-optimise without oracle calls. Planes are sparse block coefficient
 * vectors (task.h "Dual blocks") in one append-only pool, compacted between rounds; a full
 * working set drops the plane idle longest (its weight, if any, goes to the zero plane). */
#include "dual.h"

#include <math.h>
#include <string.h>

#define SMO_TOL 1e-12      /* stop when the best pair's gradient gap is below this (loss units) */
#define SMO_MAX_STEPS 1000 /* SMO steps per block visit at most */

typedef struct plane {
    int64_t at;   /* first entry in the pool */
    int32_t nnz;  /* entries */
    double beta;  /* intercept β */
    double alpha; /* weight α_ip ∈ [0, 1] */
    int64_t used; /* last round in which it had weight or was added */
} plane;

typedef struct cp_data {
    int64_t P;    /* planes per example at most */
    plane *W;     /* n_local × P */
    int32_t *n_W; /* planes of each example */
    int32_t *idx; /* pool: block coefficient indices */
    double *val;  /* pool: values */
    int64_t pool_n, pool_cap;
    double *V;      /* P × p_max: the visited block's planes, dense */
    double *Y;      /* p_max: B^T B v */
    double *M;      /* (P+1)²: plane Gram (B v_p)·(B v_q) */
    double *G;      /* P: β_p + v_p·wl */
    double *dalpha; /* P: change of α in this visit */
} cp_data;

static strux_status cp_setup(strux_solver *s, dual_data *d)
{
    cp_data *m;
    STRUX_TRY(strux_alloc(&m, sizeof *m));
    d->mdata = m;
    int64_t n = s->ds->n_local, p_max;
    int32_t S_max;
    strux_task_block_max(s->task, s->ds, &p_max, &S_max);
    m->P = s->opt.cp_max_planes;
    STRUX_TRY(strux_alloc_array(&m->W, (size_t)(n * m->P), sizeof *m->W));
    STRUX_TRY(strux_alloc_array(&m->n_W, (size_t)n, sizeof *m->n_W));
    STRUX_TRY(strux_alloc_array(&m->V, (size_t)(m->P * p_max), sizeof *m->V));
    STRUX_TRY(strux_alloc_array(&m->Y, (size_t)p_max, sizeof *m->Y));
    STRUX_TRY(strux_alloc_array(&m->M, (size_t)((m->P + 1) * (m->P + 1)), sizeof *m->M));
    STRUX_TRY(strux_alloc_array(&m->G, (size_t)m->P, sizeof *m->G));
    STRUX_TRY(strux_alloc_array(&m->dalpha, (size_t)m->P, sizeof *m->dalpha));
    m->pool_cap = 1024;
    STRUX_TRY(strux_alloc_array(&m->idx, (size_t)m->pool_cap, sizeof *m->idx));
    STRUX_TRY(strux_alloc_array(&m->val, (size_t)m->pool_cap, sizeof *m->val));
    return STRUX_OK;
}

static strux_status pool_reserve(cp_data *m, int64_t more)
{
    if (m->pool_n + more <= m->pool_cap) return STRUX_OK;
    int64_t cap = m->pool_cap;
    while (cap < m->pool_n + more)
        cap *= 2;
    STRUX_TRY(strux_realloc_array(&m->idx, (size_t)cap, sizeof *m->idx));
    STRUX_TRY(strux_realloc_array(&m->val, (size_t)cap, sizeof *m->val));
    m->pool_cap = cap;
    return STRUX_OK;
}

/* Append a plane (dense coefficients a of p entries, intercept β) to example i's working set. */
static strux_status plane_add(cp_data *m, int64_t i, const double *a, int64_t p, double beta,
                              int64_t round)
{
    int32_t nnz = 0;
    for (int64_t j = 0; j < p; j++)
        nnz += a[j] != 0;
    STRUX_TRY(pool_reserve(m, nnz));
    plane *w = &m->W[i * m->P + m->n_W[i]++];
    *w = (plane){.at = m->pool_n, .nnz = nnz, .beta = beta, .used = round};
    for (int64_t j = 0; j < p; j++)
        if (a[j] != 0) {
            m->idx[m->pool_n] = (int32_t)j;
            m->val[m->pool_n++] = a[j];
        }
    return STRUX_OK;
}

/* dst += scale·v_p (dense block vector). */
static void plane_axpy(const cp_data *m, const plane *w, double scale, double *dst)
{
    for (int64_t e = w->at; e < w->at + w->nnz; e++)
        dst[m->idx[e]] += scale * m->val[e];
}

static double plane_dot(const cp_data *m, const plane *w, const double *u)
{
    double sum = 0;
    for (int64_t e = w->at; e < w->at + w->nnz; e++)
        sum += m->val[e] * u[m->idx[e]];
    return sum;
}

/* Apply weight changes dalpha of example i's planes: c_i += −(v_i/(λW)) Σ dα_p a_p,
 * b_i += (v_i/W) Σ dα_p β_p (v_i the loss weight, W = Σ v_i: n without weights), wl follows. */
static void apply_dalpha(strux_solver *s, dual_data *d, cp_data *m, int64_t i)
{
    strux_block_shape bs = strux_task_block_shape(s->task, s->ds, i);
    plane *W = m->W + i * m->P;
    double v = strux_dataset_weight(s->ds, i);
    double *dc = d->dir, lambda_n = s->opt.lambda * d->n / v;
    memset(dc, 0, (size_t)bs.p * sizeof *dc);
    int moved = 0;
    for (int32_t p = 0; p < m->n_W[i]; p++) {
        if (m->dalpha[p] == 0) continue;
        plane_axpy(m, &W[p], -m->dalpha[p] / lambda_n, dc);
        d->b[i] += v * m->dalpha[p] * W[p].beta / d->n;
        moved = 1;
    }
    if (!moved) return;
    strux_axpy(bs.p, 1.0, dc, d->c + d->off[i]);
    strux_dual_move(s, d, i, dc);
}

/* SMO over W_i ∪ {0} against wl (potentials of example i in d->pot). */
static void block_optimise(strux_solver *s, dual_data *d, cp_data *m, int64_t i, int64_t round)
{
    int32_t np = m->n_W[i];
    if (np == 0) return;
    plane *W = m->W + i * m->P;
    strux_block_shape bs = strux_task_block_shape(s->task, s->ds, i);
    strux_task_block_gram(s->ds, &bs, i, d->X);
    /* dense planes, their Gram matrix M (index np is the zero plane) and gradients G */
    int64_t Mn = np + 1;
    memset(m->V, 0, (size_t)(np * bs.p) * sizeof *m->V);
    for (int32_t p = 0; p < np; p++)
        plane_axpy(m, &W[p], 1.0, m->V + p * bs.p);
    for (int32_t p = 0; p < np; p++) {
        strux_block_gram_apply(&bs, d->X, m->V + p * bs.p, m->Y);
        for (int32_t q = 0; q <= p; q++)
            m->M[p * Mn + q] = m->M[q * Mn + p] = strux_dot(bs.p, m->V + q * bs.p, m->Y);
        m->M[p * Mn + np] = m->M[np * Mn + p] = 0;
        m->G[p] = W[p].beta + plane_dot(m, &W[p], d->pot.s);
        m->dalpha[p] = 0;
    }
    m->M[np * Mn + np] = 0;
    double v = strux_dataset_weight(s->ds, i);
    double alpha0 = 1, kappa_scale = d->sigma * v / (s->opt.lambda * d->n);
    for (int32_t p = 0; p < np; p++)
        alpha0 -= W[p].alpha;
    if (alpha0 < 0) alpha0 = 0;
    for (int step = 0; step < SMO_MAX_STEPS; step++) {
        /* up: largest gradient; down: smallest gradient with weight (np: the zero plane, G = 0) */
        int32_t up = np, dn = alpha0 > 0 ? np : -1;
        double G_up = 0, G_dn = alpha0 > 0 ? 0 : INFINITY;
        for (int32_t p = 0; p < np; p++) {
            if (m->G[p] > G_up) up = p, G_up = m->G[p];
            if (W[p].alpha > 0 && m->G[p] < G_dn) dn = p, G_dn = m->G[p];
        }
        if (dn < 0 || up == dn || G_up - G_dn <= SMO_TOL) break;
        double kappa =
            kappa_scale * (m->M[up * Mn + up] + m->M[dn * Mn + dn] - 2 * m->M[up * Mn + dn]);
        double a_dn = dn == np ? alpha0 : W[dn].alpha;
        double delta = kappa > 0 ? (G_up - G_dn) / kappa : a_dn;
        if (delta > a_dn) delta = a_dn;
        if (up == np)
            alpha0 += delta;
        else
            W[up].alpha += delta, m->dalpha[up] += delta;
        if (dn == np)
            alpha0 -= delta;
        else
            W[dn].alpha -= delta, m->dalpha[dn] -= delta;
        for (int32_t r = 0; r < np; r++) /* G_r = β_r + v_r·wl after wl += σ′·B·Δc */
            m->G[r] -= kappa_scale * delta * (m->M[r * Mn + up] - m->M[r * Mn + dn]);
    }
    for (int32_t p = 0; p < np; p++)
        if (W[p].alpha > 0) W[p].used = round;
    apply_dalpha(s, d, m, i);
}

/* Make room in a full working set: drop the plane idle longest, preferring planes without weight;
 * a dropped plane's weight moves to the zero plane (then wl moves: returns 1). */
static int evict(strux_solver *s, dual_data *d, cp_data *m, int64_t i)
{
    plane *W = m->W + i * m->P;
    int32_t np = m->n_W[i], worst = 0;
    for (int32_t p = 1; p < np; p++) {
        int idle_p = W[p].alpha == 0, idle_w = W[worst].alpha == 0;
        if (idle_p != idle_w ? idle_p
                             : (idle_p ? W[p].used < W[worst].used : W[p].alpha < W[worst].alpha))
            worst = p;
    }
    int moved = W[worst].alpha > 0;
    if (moved) {
        memset(m->dalpha, 0, (size_t)np * sizeof *m->dalpha);
        m->dalpha[worst] = -W[worst].alpha;
        apply_dalpha(s, d, m, i);
    }
    W[worst] = W[np - 1];
    m->n_W[i]--;
    return moved;
}

static strux_status cp_visit(strux_solver *s, dual_data *d, int64_t i)
{
    cp_data *m = d->mdata;
    if (!(strux_dataset_weight(s->ds, i) > 0)) return STRUX_OK; /* its loss weighs nothing */
    STRUX_TRY(strux_dual_potentials(s, d, i));
    plane *W = m->W + i * m->P;
    double xi = 0;
    for (int32_t p = 0; p < m->n_W[i]; p++) {
        double v = W[p].beta + plane_dot(m, &W[p], d->pot.s);
        if (v > xi) xi = v;
    }
    strux_search_result r;
    STRUX_TRY(strux_dual_answer(s, d, xi, &r));
    if (r.psi > xi + s->opt.cp_eps) {
        int moved = m->n_W[i] == m->P && evict(s, d, m, i);
        strux_block_shape bs = strux_task_block_shape(s->task, s->ds, i);
        memset(d->dir, 0, (size_t)bs.p * sizeof *d->dir);
        STRUX_TRY(strux_search_block_add(&r, s->task, s->ds, i, &d->truth, 1.0, d->dir));
        STRUX_TRY(plane_add(m, i, d->dir, bs.p, strux_search_intercept(&r), d->rounds));
        if (moved) STRUX_TRY(strux_dual_potentials(s, d, i)); /* wl moved: rescore */
    }
    block_optimise(s, d, m, i, d->rounds);
    return STRUX_OK;
}

/* Rewrite the pool with only the live planes, in example order. */
static strux_status compact(const strux_solver *s, cp_data *m)
{
    int64_t live = 0, n = s->ds->n_local;
    for (int64_t i = 0; i < n; i++)
        for (int32_t p = 0; p < m->n_W[i]; p++)
            live += m->W[i * m->P + p].nnz;
    if (m->pool_n <= 2 * live + 1024) return STRUX_OK;
    int32_t *idx;
    double *val;
    STRUX_TRY(strux_alloc_array(&idx, (size_t)live + 1, sizeof *idx));
    strux_status st = strux_alloc_array(&val, (size_t)live + 1, sizeof *val);
    if (st != STRUX_OK) {
        strux_free(&idx);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++)
        for (int32_t p = 0; p < m->n_W[i]; p++) {
            plane *w = &m->W[i * m->P + p];
            memcpy(idx + at, m->idx + w->at, (size_t)w->nnz * sizeof *idx);
            memcpy(val + at, m->val + w->at, (size_t)w->nnz * sizeof *val);
            w->at = at;
            at += w->nnz;
        }
    strux_free(&m->idx);
    strux_free(&m->val);
    m->idx = idx;
    m->val = val;
    m->pool_n = at;
    m->pool_cap = live + 1;
    return STRUX_OK;
}

/* solver.cp_qp_passes re-optimisations of the working sets of local examples [i0, i1) against
 * their block's wl; the last block of the epoch compacts the pool (once an epoch). */
static strux_status cp_epoch_end(strux_solver *s, dual_data *d, int64_t i0, int64_t i1)
{
    cp_data *m = d->mdata;
    for (int64_t pass = 0; pass < s->opt.cp_qp_passes; pass++)
        for (int64_t i = i0; i < i1; i++) {
            if (m->n_W[i] == 0) continue;
            STRUX_TRY(strux_dual_potentials(s, d, i));
            block_optimise(s, d, m, i, d->rounds);
        }
    return i1 == s->ds->n_local ? compact(s, m) : STRUX_OK;
}

/* Checkpoint: per example its plane count, then each plane's header and entries. */
static strux_status cp_save(const strux_solver *s, const dual_data *d, int64_t i0, int64_t i1,
                            strux_blob *b)
{
    (void)s;
    const cp_data *m = d->mdata;
    for (int64_t i = i0; i < i1; i++) {
        STRUX_TRY(strux_blob_put(b, &m->n_W[i], sizeof m->n_W[i]));
        for (int32_t p = 0; p < m->n_W[i]; p++) {
            const plane *w = &m->W[i * m->P + p];
            STRUX_TRY(strux_blob_put(b, w, sizeof *w));
            STRUX_TRY(strux_blob_put(b, m->idx + w->at, (size_t)w->nnz * sizeof *m->idx));
            STRUX_TRY(strux_blob_put(b, m->val + w->at, (size_t)w->nnz * sizeof *m->val));
        }
    }
    return STRUX_OK;
}

static strux_status cp_load(strux_solver *s, dual_data *d, int64_t i0, int64_t i1, strux_blob *b)
{
    (void)s;
    cp_data *m = d->mdata; /* a fresh solver: its pool fills block by block */
    for (int64_t i = i0; i < i1; i++) {
        int64_t p_i = d->off[i + 1] - d->off[i];
        STRUX_TRY(strux_blob_get(b, &m->n_W[i], sizeof m->n_W[i], "working set"));
        STRUX_CHECK(m->n_W[i] >= 0 && m->n_W[i] <= m->P, STRUX_ERR_INPUT,
                    "checkpoint working set of %d planes; solver.cp_max_planes is %lld", m->n_W[i],
                    (long long)m->P);
        for (int32_t p = 0; p < m->n_W[i]; p++) {
            plane *w = &m->W[i * m->P + p];
            STRUX_TRY(strux_blob_get(b, w, sizeof *w, "plane"));
            STRUX_CHECK(w->nnz >= 0 && w->nnz <= p_i, STRUX_ERR_INPUT,
                        "checkpoint plane of %d entries in a block of %lld", w->nnz,
                        (long long)p_i);
            STRUX_TRY(pool_reserve(m, w->nnz));
            w->at = m->pool_n;
            STRUX_TRY(strux_blob_get(b, m->idx + w->at, (size_t)w->nnz * sizeof *m->idx, "plane"));
            STRUX_TRY(strux_blob_get(b, m->val + w->at, (size_t)w->nnz * sizeof *m->val, "plane"));
            for (int32_t e = 0; e < w->nnz; e++)
                STRUX_CHECK(m->idx[w->at + e] >= 0 && m->idx[w->at + e] < p_i, STRUX_ERR_INPUT,
                            "checkpoint plane entry %d outside its block of %lld",
                            m->idx[w->at + e], (long long)p_i);
            m->pool_n += w->nnz;
        }
    }
    return STRUX_OK;
}

static void cp_destroy(dual_data *d)
{
    cp_data *m = d->mdata;
    if (!m) return;
    strux_free(&m->W);
    strux_free(&m->n_W);
    strux_free(&m->idx);
    strux_free(&m->val);
    strux_free(&m->V);
    strux_free(&m->Y);
    strux_free(&m->M);
    strux_free(&m->G);
    strux_free(&m->dalpha);
    strux_free(&d->mdata);
}

static const dual_method cp_method = {.visit = cp_visit,
                                      .setup = cp_setup,
                                      .epoch_end = cp_epoch_end,
                                      .save = cp_save,
                                      .load = cp_load,
                                      .destroy = cp_destroy};

strux_status strux_solver_create_cutting_plane(strux_solver *s)
{
    return strux_dual_attach(s, &cp_method);
}
