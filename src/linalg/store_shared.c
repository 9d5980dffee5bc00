/* linalg/store_shared.c - one copy of a model per host (model.share = host, issue 13): the
 * stored values live in one block of memory that the ranks of a host share (the caller's: a
 * dist window, strux_model_share), and each rank sees them through a view (store_view.c) whose
 * private change Δ takes every write, so no kernel ever writes the block by accident. Only
 * strux_model_shared_add_sparse writes it, on the host's writer, between two fences: the CoCoA+
 * sync's w += ΣΔw_k, done once per host instead of once per rank.
 * The block: a 16-byte header (sparse: the room and the entries in use), the free parameters
 * (double), then dense: the n_rows·dim values in the model's layout; sparse: the row offsets
 * (int64, n_rows + 1) and one CSR of int32 columns and values with room for cap entries. A
 * sparse sum is merged in place, rows taken from the last to the first so that every row moves
 * only towards the end (rows only grow at a sync; pruning is left to the view's Δ), after
 * growing the block by half again when it is full. Each rank's row table (the sparse store's
 * rows, pointing into the block) is rebuilt after each merge. */
#include "model_impl.h"

#include <math.h>
#include <string.h>

#define HEAD 16 /* int64 room, int64 entries in use */

typedef struct strux_shared {
    strux_model_share share;
    int64_t *new_off;       /* the writer's row offsets after a merge (n_rows + 1) */
    strux_sparse_rows list; /* the writer's sum to merge: Δ + c·d */
    strux_sparse_rows part[2];
} strux_shared;

#define IS_SPARSE(m) ((m)->kind.layout == STRUX_LAYOUT_SPARSE)
#define VSIZE(m) ((m)->kind.precision == STRUX_PRECISION_FLOAT ? sizeof(float) : sizeof(double))

static size_t off_at(const strux_model *m)
{
    return HEAD + (size_t)m->n_extra * sizeof(double);
}

static size_t idx_at(const strux_model *m)
{
    return off_at(m) + (IS_SPARSE(m) ? ((size_t)m->n_rows + 1) * sizeof(int64_t) : 0);
}

/* The value array after cap columns (an even count keeps it 8-byte aligned). */
static size_t val_at(const strux_model *m, int64_t cap)
{
    return idx_at(m) + (size_t)(cap + (cap & 1)) * sizeof(int32_t);
}

static size_t block_bytes(const strux_model *m, int64_t cap)
{
    if (!IS_SPARSE(m)) return off_at(m) + (size_t)m->n_rows * (size_t)m->dim * VSIZE(m);
    return val_at(m, cap) + (size_t)cap * VSIZE(m);
}

static char *block(const strux_model *m)
{
    return m->shared->share.base(m->shared->share.ctx);
}

/* This process's pointers into the block: the free parameters, and the dense values or every
 * sparse row. */
static void refresh(strux_model *m)
{
    char *b = block(m);
    m->extra = (double *)(b + HEAD);
    if (!IS_SPARSE(m)) {
        m->v = b + off_at(m);
        return;
    }
    const int64_t *head = (const int64_t *)b, *off = (const int64_t *)(b + off_at(m));
    int32_t *idx = (int32_t *)(b + idx_at(m));
    char *val = b + val_at(m, head[0]);
    for (int32_t k = 0; k < m->n_rows; k++) {
        strux_sparse_row *row = &m->rows[k];
        row->n = row->cap = (int32_t)(off[k + 1] - off[k]);
        row->idx = idx + off[k];
        row->val = val + (size_t)off[k] * VSIZE(m);
    }
}

void strux_shared_free(strux_model *m)
{
    strux_shared *sh = m->shared;
    m->extra = NULL; /* the block's, not the model's */
    if (!sh) return;
    strux_free(&sh->new_off);
    strux_sparse_rows_free(&sh->list);
    strux_sparse_rows_free(&sh->part[0]);
    strux_sparse_rows_free(&sh->part[1]);
    strux_free(&m->shared);
}

strux_status strux_model_create_shared(int32_t n_rows, int32_t dim, int64_t n_extra,
                                       strux_model_kind kind, const strux_model_share *share,
                                       int64_t room_nnz, strux_model **out)
{
    strux_model *p = NULL, *w = NULL;
    int sparse = kind.layout == STRUX_LAYOUT_SPARSE;
    strux_status st = strux_model_alloc(
        n_rows, dim, n_extra, kind, sparse ? &strux_store_sparse_ops : &strux_store_dense_ops, 1,
        &p);
    if (st == STRUX_OK) {
        strux_free(&p->extra); /* the block holds the free parameters */
        st = strux_alloc(&p->shared, sizeof *p->shared);
    }
    if (st == STRUX_OK) {
        p->shared->share = *share;
        st = strux_alloc_array(&p->shared->new_off, (size_t)n_rows + 1, sizeof(int64_t));
    }
    int64_t cap = room_nnz < 64 ? 64 : room_nnz;
    size_t bytes = p ? block_bytes(p, cap) : 0;
    /* every rank reserves, or none: the failure of one is agreed by the caller's reserve */
    strux_status rs = share->reserve(share->ctx, st == STRUX_OK ? bytes : 0);
    if (st == STRUX_OK) st = rs;
    if (st == STRUX_OK && share->writer) {
        char *b = share->base(share->ctx);
        memset(b, 0, idx_at(p)); /* header, free parameters, row offsets */
        if (!sparse) memset(b + off_at(p), 0, block_bytes(p, 0) - off_at(p));
        ((int64_t *)b)[0] = cap;
    }
    rs = share->fence(share->ctx);
    if (st == STRUX_OK) st = rs;
    if (st == STRUX_OK) {
        refresh(p);
        st = strux_model_create_view(
            p, (strux_model_kind){STRUX_LAYOUT_SPARSE, STRUX_PRECISION_DOUBLE}, &w);
    }
    if (st != STRUX_OK) {
        strux_model_destroy(&p);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    w->view->owns_base = 1;
    *out = w;
    return STRUX_OK;
}

int strux_model_is_shared(const strux_model *m)
{
    return m->view && m->view->owns_base;
}

int strux_model_shared_writer(const strux_model *m)
{
    return m->view->base->shared->share.writer;
}

static inline double load(const char *val, int64_t i, int is_float)
{
    return is_float ? (double)((const float *)val)[i] : ((const double *)val)[i];
}

static inline void store(char *val, int64_t i, double v, int is_float)
{
    if (is_float)
        ((float *)val)[i] = (float)v;
    else
        ((double *)val)[i] = v;
}

/* Entries of row k merged with the list's row r (union of their columns). */
static int64_t merged_count(const int32_t *idx, int64_t n, const strux_sparse_rows *d, int32_t r)
{
    int64_t i = 0, j = d->ptr[r], je = d->ptr[r + 1], c = 0;
    while (i < n || j < je) {
        if (j == je || (i < n && idx[i] < d->col[j]))
            i++;
        else if (i == n || d->col[j] < idx[i])
            j++;
        else
            i++, j++;
        c++;
    }
    return c;
}

/* The writer's merge of d (row n_rows: the free parameters) into the packed rows: new offsets,
 * the block grown when full (reserve is Collective: every rank calls it once per merge, the
 * others with 0), then rows moved or merged from the last touched one down: v ← v + d (as
 * strux_row_merge with c = 1: an entry of d alone becomes 0 + d). */
static strux_status merge_sparse(strux_model *p, const strux_sparse_rows *d)
{
    strux_shared *sh = p->shared;
    const strux_model_share *share = &sh->share;
    if (!d) return share->reserve(share->ctx, 0); /* not the writer, or it failed */
    char *b = block(p);
    int64_t *head = (int64_t *)b, *off = (int64_t *)(b + off_at(p)), *now = sh->new_off;
    const int32_t n_rows = p->n_rows;
    int32_t first = n_rows, r = 0;
    now[0] = 0;
    for (int32_t k = 0; k < n_rows; k++) {
        int64_t len = off[k + 1] - off[k];
        while (r < d->n_rows && d->row[r] < k) r++;
        if (r < d->n_rows && d->row[r] == k) {
            if (first == n_rows) first = k;
            len = merged_count((int32_t *)(b + idx_at(p)) + off[k], len, d, r);
        }
        now[k + 1] = now[k] + len;
    }
    int64_t cap = head[0], total = now[n_rows];
    size_t need = total > cap ? block_bytes(p, total + total / 2) : 0;
    STRUX_TRY(share->reserve(share->ctx, need));
    if (need) { /* a larger block: the values move up to their new place */
        b = block(p);
        head = (int64_t *)b;
        off = (int64_t *)(b + off_at(p));
        int64_t grown = total + total / 2;
        memmove(b + val_at(p, grown), b + val_at(p, cap), (size_t)off[n_rows] * VSIZE(p));
        head[0] = cap = grown;
    }
    int32_t *idx = (int32_t *)(b + idx_at(p));
    char *val = b + val_at(p, cap);
    const int is_float = p->kind.precision == STRUX_PRECISION_FLOAT;
    const size_t vs = VSIZE(p);
    r = d->n_rows - 1;
    while (r >= 0 && d->row[r] >= n_rows) r--;
    for (int32_t k = n_rows - 1; k >= first; k--) {
        while (r >= 0 && d->row[r] > k) r--;
        int64_t a0 = off[k], a = off[k + 1] - 1, t = now[k + 1] - 1;
        if (r < 0 || d->row[r] != k) { /* untouched: moved whole */
            if (now[k] != a0) {
                memmove(idx + now[k], idx + a0, (size_t)(a + 1 - a0) * sizeof *idx);
                memmove(val + (size_t)now[k] * vs, val + (size_t)a0 * vs,
                        (size_t)(a + 1 - a0) * vs);
            }
            continue;
        }
        for (int64_t j = d->ptr[r + 1] - 1, j0 = d->ptr[r]; t >= now[k]; t--) {
            if (j < j0 || (a >= a0 && idx[a] > d->col[j])) {
                idx[t] = idx[a];
                store(val, t, load(val, a--, is_float), is_float);
            } else if (a < a0 || d->col[j] > idx[a]) {
                idx[t] = d->col[j];
                store(val, t, 0 + d->val[j--], is_float);
            } else {
                idx[t] = idx[a];
                store(val, t, load(val, a--, is_float) + d->val[j--], is_float);
            }
        }
    }
    memcpy(off, now, ((size_t)n_rows + 1) * sizeof *off);
    head[1] = total;
    for (r = d->n_rows - 1; r >= 0 && d->row[r] >= n_rows; r--) /* the free parameters */
        for (int64_t q = d->ptr[r]; q < d->ptr[r + 1]; q++)
            ((double *)(b + HEAD))[d->col[q]] += d->val[q];
    return STRUX_OK;
}

/* The writer's addition of d into dense values in the block, row by row as strux_model_add_sparse does (d
 * NULL: not the writer, or it failed; the collective reserve is still taken). */
static strux_status merge_dense(strux_model *p, const strux_sparse_rows *d)
{
    const strux_model_share *share = &p->shared->share;
    STRUX_TRY(share->reserve(share->ctx, 0));
    if (d) strux_model_add_sparse(p, d);
    return STRUX_OK;
}

strux_status strux_model_shared_add_sparse(strux_model *w, const strux_sparse_rows *d)
{
    strux_model *p = (strux_model *)w->view->base;
    strux_shared *sh = p->shared;
    strux_status st = STRUX_OK;
    if (sh->share.writer) {
        /* list = Δ + c·d with c_k = 1/s_k the view's row scales (w = s·(base + Δ)): merged
         * with c = 1 it gives the base what strux_model_add_sparse gives a model, v + c·d */
        strux_sparse_rows *scaled = &sh->part[1];
        strux_sparse_rows_clear(scaled);
        for (int32_t r = 0; st == STRUX_OK && r < d->n_rows; r++) {
            int32_t k = d->row[r];
            int64_t p0 = d->ptr[r];
            st = strux_sparse_rows_append(scaled, k, (int32_t)(d->ptr[r + 1] - p0), d->col + p0,
                                          d->val + p0, k < w->n_rows ? 1 / w->s[k] : 1);
        }
        if (st == STRUX_OK) st = strux_model_nonzero_rows(w->view->delta, 1.0, &sh->part[0]);
        if (st == STRUX_OK) st = strux_sparse_rows_add(&sh->part[0], scaled, &sh->list);
    }
    /* the merge's reserve and the fence are collective: every rank takes them, failed or not */
    const strux_sparse_rows *list = sh->share.writer && st == STRUX_OK ? &sh->list : NULL;
    strux_status ms = IS_SPARSE(p) ? merge_sparse(p, list) : merge_dense(p, list);
    if (st == STRUX_OK) st = ms;
    strux_status fs = sh->share.fence(sh->share.ctx);
    if (st == STRUX_OK) st = fs;
    refresh(p);
    strux_model_view_reset(w);
    return st;
}
