/* linalg/store_view.c - the view w + Δ (model_impl.h, strux_store_view_ops;
 * strux_model_create_view in strux/model.h): a model whose row k is base_k + delta_k, the base
 * borrowed and only read, every write going into a change Δ of its own kind (sparse for a sparse
 * base: a CoCoA+ round touches few rows and features, issue 12's "one copy where one suffices").
 * The dual engine's local view during a round is such a view of the agreed iterate. Scores are
 * the base's plus Δ's, additions go into Δ, and a row of the view is the merge of the two rows;
 * the free parameters are held whole in the view. The view keeps no row norms (row_norm2 sums
 * its row) and its own row scales stay 1 unless a caller scales the view itself. Not a store of
 * its own values: no storage for collectives. */
#include "model_impl.h"

#include <math.h>
#include <string.h>

/* The base's row k into (view->bidx, bval), Δ's into (didx, dval), with their scales applied. */
static void both_rows(const strux_model *m, int32_t k, int32_t *nb, int32_t *nd)
{
    const strux_view *v = m->view;
    *nb = strux_model_row_nonzeros(v->base, k, v->bidx, v->bval);
    *nd = strux_model_row_nonzeros(v->delta, k, v->didx, v->dval);
}

static strux_status view_create(strux_model *m)
{
    strux_view *v;
    STRUX_TRY(strux_alloc(&v, sizeof *v));
    m->view = v;
    size_t dim = (size_t)m->dim + 1;
    STRUX_TRY(strux_alloc_array(&v->extra0, (size_t)m->n_extra + 1, sizeof *v->extra0));
    STRUX_TRY(strux_alloc_array(&v->bidx, dim, sizeof *v->bidx));
    STRUX_TRY(strux_alloc_array(&v->didx, dim, sizeof *v->didx));
    STRUX_TRY(strux_alloc_array(&v->bval, dim, sizeof *v->bval));
    return strux_alloc_array(&v->dval, dim, sizeof *v->dval);
}

static void view_destroy(strux_model *m)
{
    strux_view *v = m->view;
    if (!v) return;
    strux_model_destroy(&v->delta);
    if (v->owns_base) {
        strux_model *base = (strux_model *)v->base;
        strux_model_destroy(&base);
    }
    strux_free(&v->extra0);
    strux_free(&v->bidx);
    strux_free(&v->didx);
    strux_free(&v->bval);
    strux_free(&v->dval);
    strux_free(&m->view);
}

static size_t view_bytes(const strux_model *m)
{
    const strux_view *v = m->view;
    return strux_model_bytes(v->delta) + (v->owns_base ? strux_model_bytes(v->base) : 0) +
           (size_t)m->n_extra * sizeof *v->extra0 +
           (size_t)m->dim * 2 * (sizeof *v->bidx + sizeof *v->bval);
}

static void view_scores(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0, int32_t n,
                        const int32_t *rows, double *out)
{
    const strux_view *v = m->view;
    double *dd = m->scratch; /* n ≤ n_rows ≤ its length; free during scores */
    if (rows) {
        strux_model_scores_rows(v->base, x, r, rows, n, out);
        strux_model_scores_rows(v->delta, x, r, rows, n, dd);
    } else {
        strux_model_scores(v->base, x, r, k0, n, out);
        strux_model_scores(v->delta, x, r, k0, n, dd);
    }
    for (int32_t q = 0; q < n; q++)
        out[q] += dd[q];
}

static void view_add(strux_model *m, const strux_csr *x, int64_t r, int32_t n_list,
                     const int32_t *rows, const double *cs)
{
    for (int32_t q = 0; q < n_list; q++)
        strux_model_add_row(m->view->delta, x, r, rows[q], cs[q]);
}

static double view_get(const strux_model *m, int32_t k, int32_t j)
{
    return strux_model_get(m->view->base, k, j) + strux_model_get(m->view->delta, k, j);
}

/* (k, j) ← value: Δ's entry becomes value − base, its norm following. */
static void view_put(strux_model *m, int32_t k, int32_t j, double value)
{
    strux_model *d = m->view->delta;
    double old = d->ops->get(d, k, j),
           now = (value - strux_model_get(m->view->base, k, j)) / d->s[k];
    d->ops->put(d, k, j, now);
    now = d->ops->get(d, k, j);
    d->nrm[k] += now * now - old * old;
}

static int32_t view_row(const strux_model *m, int32_t k, int32_t *idx, double *val)
{
    const strux_view *v = m->view;
    int32_t nb, nd;
    both_rows(m, k, &nb, &nd);
    int32_t n = strux_row_merge(nb, v->bidx, v->bval, 1.0, nd, v->didx, v->dval, idx, val), kept = 0;
    for (int32_t q = 0; q < n; q++) /* base + Δ may cancel */
        if (STRUX_STORED(val[q])) {
            idx[kept] = idx[q];
            val[kept++] = val[q];
        }
    return kept;
}

/* Row k of the view ← (idx, val): Δ_k = val − base_k. */
static void view_set_row(strux_model *m, int32_t k, int32_t n, const int32_t *idx,
                         const double *val)
{
    strux_view *v = m->view;
    strux_model *d = v->delta;
    int32_t nb = strux_model_row_nonzeros(v->base, k, v->bidx, v->bval);
    /* room: Δ's own row buffers hold 3·dim ≥ n + nb entries */
    int32_t nd = strux_row_merge(n, idx, val, -1.0, nb, v->bidx, v->bval, d->ridx, d->rval);
    strux_model_set_row_sparse(d, k, nd, d->ridx, d->rval);
    double n2 = 0;
    for (int32_t q = 0; q < n; q++)
        n2 += val[q] * val[q];
    m->nrm[k] = n2;
}

/* Every value of the view 0: Δ = −base. */
static void view_zero(strux_model *m)
{
    for (int32_t k = 0; k < m->n_rows; k++)
        view_set_row(m, k, 0, m->ridx, m->rval);
}

static void view_scale_rows(strux_model *m, const double *a)
{
    for (int32_t k = 0; k < m->n_rows; k++) {
        if (a[k] == 1) continue;
        int32_t n = view_row(m, k, m->ridx, m->rval);
        for (int32_t q = 0; q < n; q++)
            m->rval[q] *= a[k];
        view_set_row(m, k, n, m->ridx, m->rval);
    }
}

static void view_norms(strux_model *m)
{
    for (int32_t k = 0; k < m->n_rows; k++) {
        int32_t n = view_row(m, k, m->ridx, m->rval);
        double n2 = 0;
        for (int32_t q = 0; q < n; q++)
            n2 += m->rval[q] * m->rval[q];
        m->nrm[k] = n2;
    }
}

static int64_t view_find_non_finite(const strux_model *m)
{
    int64_t q = strux_model_find_non_finite(m->view->base);
    if (q >= 0 && q < (int64_t)m->n_rows * m->dim) return q;
    q = strux_model_find_non_finite(m->view->delta);
    return q < (int64_t)m->n_rows * m->dim ? q : -1;
}

const strux_store_ops strux_store_view_ops = {
    .create = view_create,
    .destroy = view_destroy,
    .bytes = view_bytes,
    .scores = view_scores,
    .add = view_add,
    .get = view_get,
    .put = view_put,
    .row = view_row,
    .set_row = view_set_row,
    .zero = view_zero,
    .scale_rows = view_scale_rows,
    .norms = view_norms,
    .find_non_finite = view_find_non_finite,
    /* copy, dot, axpy: model.c's row-wise kernels; no storage for collectives */
};

strux_status strux_model_create_view(const strux_model *base, strux_model_kind delta_kind,
                                     strux_model **out)
{
    strux_model *m = NULL;
    STRUX_TRY(strux_model_alloc(base->n_rows, base->dim, base->n_extra, base->kind,
                                &strux_store_view_ops, 0, &m));
    m->free_col = base->free_col;
    m->centre_col = base->centre_col;
    m->centre = base->centre;
    m->view->base = base;
    strux_status st = strux_model_create(base->n_rows, base->dim, base->n_extra, delta_kind,
                                         &m->view->delta);
    if (st != STRUX_OK) {
        strux_model_destroy(&m);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    m->view->delta->free_col = base->free_col;
    strux_model_view_reset(m);
    *out = m;
    return STRUX_OK;
}

void strux_model_view_reset(strux_model *m)
{
    strux_view *v = m->view;
    strux_model_zero(v->delta);
    memcpy(m->extra, v->base->extra, (size_t)m->n_extra * sizeof *m->extra);
    memcpy(v->extra0, v->base->extra, (size_t)m->n_extra * sizeof *v->extra0);
}

strux_model *strux_model_view_delta(strux_model *m)
{
    strux_view *v = m->view;
    for (int64_t e = 0; e < m->n_extra; e++)
        v->delta->extra[e] = m->extra[e] - v->extra0[e];
    return v->delta;
}

int strux_model_is_view(const strux_model *m)
{
    return m->view != NULL;
}
