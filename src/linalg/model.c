/* linalg/model.c - the weight store (strux/model.h): life cycle, the row scales, and the public
 * kernels over the stores of model_impl.h (dense: store_dense.c, sparse: store_sparse.c), chosen
 * by the layout at creation. Copy, axpy and dot between kinds (and within a store that has no
 * faster version) go row by row through the stores' row/set_row. Scores and additions fold the row scale into
 * the coefficients (w_k·x = s_k·(v_k·x); w_k += c·x is v_k += (c/s_k)·x), so scaling a row only
 * changes s_k; a scale that leaves [1e-100, 1e100] is folded into its row's stored values. */
#include "strux/model.h"

#include "model_impl.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const strux_opt_spec strux_model_opt_specs[] = {
    {"model.bias", STRUX_OPT_CHOICE, offsetof(strux_model_options, bias), "regularised", 0, 0,
     "none|regularised|free",
     "the bias: none (no bias feature, data.bias is not appended), regularised (the data.bias "
     "feature's weights are regularised like the others, LIBLINEAR's -B), free (the data.bias "
     "feature's weights are left out of the regulariser (λ/2)||w||²; solvers with the flag "
     "free_bias: sgd; and sdca under [constraints], through the bias cutting plane)"},
    {"model.layout", STRUX_OPT_CHOICE, offsetof(strux_model_options, layout), "auto", 0, 0,
     "auto|label_major|feature_major|sparse",
     "how the weight rows are stored: label_major (each row contiguous), feature_major (each "
     "feature's weights of all rows contiguous, LIBLINEAR's layout: an example touches one run "
     "of rows per non-zero), sparse (per row its non-zeros as sorted int32 columns and values: "
     "about nnz x (4 + value size) bytes, grown by the features each row sees; a row that fills "
     "past 2/3 of dim (double) or 1/2 (float) is stored dense), auto (feature_major for models "
     "of several rows; the choice and its bytes are logged)"},
    {"model.precision", STRUX_OPT_CHOICE, offsetof(strux_model_options, precision), "double", 0,
     0, "double|float",
     "the stored weights: double, or float (half the memory and traffic; every sum still "
     "accumulates in double)"},
    {"model.share", STRUX_OPT_CHOICE, offsetof(strux_model_options, share), "auto", 0, 0,
     "auto|host|none",
     "where the model lives when several ranks share a host: host (one copy per host in an MPI-3 "
     "shared-memory window, which the CoCoA+ syncs of the solvers with flag shared_model write "
     "once per host; each rank keeps only its round's change), none (a copy per rank), auto "
     "(host for those solvers when more than one rank runs on a host, else none); the model, its "
     "files and checkpoints are the same either way"},
    {"model.bias_centre", STRUX_OPT_DOUBLE, offsetof(strux_model_options, bias_centre), "0", -1e6,
     1e6, NULL,
     "the value the regulariser pulls every row's bias weight towards, (λ/2)||w − w0||² with w0 "
     "this value at the data.bias column and 0 elsewhere, and where the dual solver starts "
     "(PPDSparse's negative bias start): at −2/data.bias a negative example that shares no "
     "feature with a row's weights starts, and stays, beyond its margin, so 1-vs-All rows grow "
     "only with the examples that touch them (solver.active_sets needs a value < 0); 0: the "
     "plain ||w||². Changes the problem (the bias prior), not only the start; solvers with flag "
     "active_sets"},
    {"model.prune", STRUX_OPT_DOUBLE, offsetof(strux_model_options, prune), "0", 0, 1e300,
     NULL,
     "DiSMEC's pruning: weights with |w| below this are dropped from the model written at the "
     "end of training (its predictions and test scores are those of the pruned model; 0 keeps "
     "every weight; DiSMEC uses 0.01); with model.prune_every also between epochs"},
    {"model.prune_every", STRUX_OPT_INT, offsetof(strux_model_options, prune_every), "0", 0, 1e9,
     NULL,
     "prune the solver's iterate too, every this many epochs, after the certificate (solvers "
     "with flag prune): rows stay small during training; the record's pruned and primal_pruned "
     "columns give the weights dropped and the primal objective after, beside the epoch's own; "
     "a dual solver's later duality gaps then compare the pruned iterate with its own dual bound, "
     "no certificate of the unpruned problem (0: at the export only)"},
    {NULL},
};

strux_model_kind strux_model_choose_kind(const strux_model_options *o, int32_t n_rows)
{
    strux_model_kind kind = STRUX_MODEL_PLAIN;
    if (!strcmp(o->layout, "feature_major") || (!strcmp(o->layout, "auto") && n_rows > 1))
        kind.layout = STRUX_LAYOUT_FEATURE_MAJOR;
    if (!strcmp(o->layout, "sparse")) kind.layout = STRUX_LAYOUT_SPARSE;
    if (!strcmp(o->precision, "float")) kind.precision = STRUX_PRECISION_FLOAT;
    return kind;
}

const char *strux_layout_name(strux_layout layout)
{
    return layout == STRUX_LAYOUT_FEATURE_MAJOR ? "feature_major"
           : layout == STRUX_LAYOUT_SPARSE      ? "sparse"
                                                : "label_major";
}

const char *strux_precision_name(strux_precision precision)
{
    return precision == STRUX_PRECISION_FLOAT ? "float" : "double";
}

strux_status strux_model_alloc(int32_t n_rows, int32_t dim, int64_t n_extra, strux_model_kind kind,
                               const strux_store_ops *ops, int external, strux_model **out)
{
    STRUX_CHECK(n_rows >= 0 && dim >= 0 && n_extra >= 0, STRUX_ERR_INTERNAL,
                "model shape %d x %d + %lld is negative", n_rows, dim, (long long)n_extra);
    strux_model *m;
    STRUX_TRY(strux_alloc(&m, sizeof *m));
    m->n_rows = n_rows;
    m->dim = dim;
    m->n_extra = n_extra;
    m->kind = kind;
    m->free_col = -1;
    m->centre_col = -1;
    m->failed_row = -1;
    m->ops = ops;
    m->external = external;
    int64_t n_scratch = n_rows > dim ? n_rows : dim;
    strux_status st = strux_alloc_array(&m->s, (size_t)n_rows + 1, sizeof *m->s);
    if (st == STRUX_OK) st = strux_alloc_array(&m->nrm, (size_t)n_rows + 1, sizeof *m->nrm);
    if (st == STRUX_OK) st = strux_alloc_array(&m->extra, (size_t)n_extra + 1, sizeof *m->extra);
    if (st == STRUX_OK)
        st = strux_alloc_array(&m->scratch, (size_t)n_scratch + 1, sizeof *m->scratch);
    if (st == STRUX_OK) st = strux_alloc_array(&m->list, (size_t)n_rows + 1, sizeof *m->list);
    if (st == STRUX_OK) st = strux_alloc_array(&m->ridx, 3 * (size_t)dim + 1, sizeof *m->ridx);
    if (st == STRUX_OK) st = strux_alloc_array(&m->rval, 3 * (size_t)dim + 1, sizeof *m->rval);
    if (st == STRUX_OK) st = m->ops->create(m);
    if (st != STRUX_OK) {
        strux_model_destroy(&m);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    for (int32_t k = 0; k < n_rows; k++)
        m->s[k] = 1;
    *out = m;
    return STRUX_OK;
}

strux_status strux_model_create(int32_t n_rows, int32_t dim, int64_t n_extra,
                                strux_model_kind kind, strux_model **out)
{
    return strux_model_alloc(n_rows, dim, n_extra, kind,
                             kind.layout == STRUX_LAYOUT_SPARSE ? &strux_store_sparse_ops
                                                                : &strux_store_dense_ops,
                             0, out);
}

strux_status strux_model_create_like(const strux_model *m, strux_model **out)
{
    STRUX_TRY(strux_model_create(m->n_rows, m->dim, m->n_extra, m->kind, out));
    (*out)->free_col = m->free_col;
    (*out)->centre_col = m->centre_col;
    (*out)->centre = m->centre;
    return STRUX_OK;
}

void strux_model_destroy(strux_model **m)
{
    if (!*m) return;
    if ((*m)->ops) (*m)->ops->destroy(*m);
    strux_free(&(*m)->s);
    strux_free(&(*m)->nrm);
    strux_free(&(*m)->extra);
    strux_free(&(*m)->scratch);
    strux_free(&(*m)->list);
    strux_free(&(*m)->ridx);
    strux_free(&(*m)->rval);
    strux_free(m);
}

int32_t strux_model_n_rows(const strux_model *m) { return m->n_rows; }
int32_t strux_model_dim(const strux_model *m) { return m->dim; }
int64_t strux_model_n_extra(const strux_model *m) { return m->n_extra; }
int64_t strux_model_n_w(const strux_model *m) { return (int64_t)m->n_rows * m->dim + m->n_extra; }
strux_model_kind strux_model_kind_of(const strux_model *m) { return m->kind; }
int32_t strux_model_free_col(const strux_model *m) { return m->free_col; }
void strux_model_set_free_col(strux_model *m, int32_t col) { m->free_col = col; }

void strux_model_set_centre(strux_model *m, int32_t col, double value)
{
    m->centre_col = value != 0 ? col : -1;
    m->centre = value != 0 ? value : 0;
}

double strux_model_centre_of(const strux_model *m, int32_t *col)
{
    *col = m->centre_col;
    return m->centre_col >= 0 ? m->centre : 0;
}

void strux_model_centre(strux_model *m)
{
    strux_model_zero(m);
    if (m->centre_col < 0) return;
    for (int32_t k = 0; k < m->n_rows; k++)
        strux_model_set_row_sparse(m, k, 1, &m->centre_col, &m->centre);
}

void strux_model_scale_about_centre(strux_model *m, double a)
{
    strux_model_scale(m, a);
    if (m->centre_col < 0 || a == 1) return;
    for (int32_t k = 0; k < m->n_rows; k++) { /* w0 + a·(w − w0) = a·w + (1 − a)·w0 */
        double now = strux_model_get(m, k, m->centre_col) + (1 - a) * m->centre;
        int32_t n = strux_model_row_nonzeros(m, k, m->ridx, m->rval), q = 0;
        while (q < n && m->ridx[q] < m->centre_col) q++;
        if (q < n && m->ridx[q] == m->centre_col) {
            m->rval[q] = now;
        } else {
            memmove(m->ridx + q + 1, m->ridx + q, (size_t)(n - q) * sizeof *m->ridx);
            memmove(m->rval + q + 1, m->rval + q, (size_t)(n - q) * sizeof *m->rval);
            m->ridx[q] = m->centre_col;
            m->rval[q] = now;
            n++;
        }
        m->ops->set_row(m, k, n, m->ridx, m->rval);
        m->s[k] = 1;
    }
}

size_t strux_model_bytes(const strux_model *m)
{
    return m->ops->bytes(m) + (size_t)m->n_rows * (2 * sizeof(double) + sizeof(int32_t)) +
           (size_t)m->n_extra * sizeof(double);
}

double *strux_model_extra(const strux_model *m) { return m->extra; }

/* ---- row scales ---- */

/* Fold every row scale into its stored values (s = 1 after). */
static void fold_all(strux_model *m)
{
    int any = 0;
    for (int32_t k = 0; k < m->n_rows; k++)
        any |= m->s[k] != 1;
    if (!any) return;
    m->ops->scale_rows(m, m->s);
    for (int32_t k = 0; k < m->n_rows; k++)
        m->s[k] = 1;
}

/* Fold row k's scale when it leaves [1/STRUX_SCALE_FOLD, STRUX_SCALE_FOLD]. */
static void keep_scale(strux_model *m, int32_t k)
{
    double a = fabs(m->s[k]);
    if (a >= 1 / STRUX_SCALE_FOLD && a <= STRUX_SCALE_FOLD) return;
    double *f = m->scratch; /* n_rows ≤ scratch length */
    for (int32_t q = 0; q < m->n_rows; q++)
        f[q] = 1;
    f[k] = m->s[k];
    m->ops->scale_rows(m, f);
    m->s[k] = 1;
}

static void zero_row(strux_model *m, int32_t k)
{
    m->ops->set_row(m, k, 0, m->ridx, m->rval);
    m->s[k] = 1;
}

/* ---- row-wise kernels over any two stores (model.c's generic path) ---- */

/* Σ_k c[k]·(a_k·b_k) of the stored values, each row's non-zeros merged by column. */
static double rows_dot(const strux_model *a, const strux_model *b, const double *c)
{
    int32_t *ia = a->ridx, *ib = a->ridx + a->dim;
    double *va = a->rval, *vb = a->rval + a->dim, sum = 0;
    for (int32_t k = 0; k < a->n_rows; k++) {
        int32_t na = a->ops->row(a, k, ia, va), nb = b->ops->row(b, k, ib, vb), i = 0, j = 0;
        double row = 0;
        while (i < na && j < nb) {
            if (ia[i] < ib[j])
                i++;
            else if (ia[i] > ib[j])
                j++;
            else
                row += va[i++] * vb[j++];
        }
        sum += c[k] * row;
    }
    return sum;
}

int32_t strux_row_merge(int32_t ny, const int32_t *iy, const double *vy, double c, int32_t nx,
                        const int32_t *ix, const double *vx, int32_t *io, double *vo)
{
    int32_t i = 0, j = 0, n = 0;
    while (i < nx || j < ny) {
        if (j == ny || (i < nx && ix[i] < iy[j])) {
            io[n] = ix[i];
            vo[n++] = 0 + c * vx[i++];
        } else if (i == nx || iy[j] < ix[i]) {
            io[n] = iy[j];
            vo[n++] = vy[j++];
        } else {
            io[n] = ix[i];
            vo[n++] = vy[j++] + c * vx[i++];
        }
    }
    return n;
}

/* y_k += c[k]·x_k of the stored values (rows with c[k] = 0 or an empty x_k untouched), row by
 * row. */
static void rows_axpy(const strux_model *x, strux_model *y, const double *c)
{
    const int32_t D = y->dim;
    int32_t *ix = y->ridx, *iy = y->ridx + D, *io = y->ridx + 2 * (size_t)D;
    double *vx = y->rval, *vy = y->rval + D, *vo = y->rval + 2 * (size_t)D;
    for (int32_t k = 0; k < y->n_rows; k++) {
        if (c[k] == 0) continue;
        int32_t nx = x->ops->row(x, k, ix, vx);
        if (nx == 0) continue;
        int32_t ny = y->ops->row(y, k, iy, vy);
        y->ops->set_row(y, k, strux_row_merge(ny, iy, vy, c[k], nx, ix, vx, io, vo), io, vo);
    }
    y->ops->norms(y); /* every row's, as the dense kernels do */
}

/* ---- kernels ---- */

void strux_model_scores(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0, int32_t n,
                        double *out)
{
    m->ops->scores(m, x, r, k0, n, NULL, out);
    for (int32_t q = 0; q < n; q++)
        out[q] *= m->s[k0 + q];
}

void strux_model_scores_rows(const strux_model *m, const strux_csr *x, int64_t r,
                             const int32_t *rows, int32_t n, double *out)
{
    m->ops->scores(m, x, r, 0, n, rows, out);
    for (int32_t q = 0; q < n; q++)
        out[q] *= m->s[rows[q]];
}

void strux_model_add(strux_model *m, const strux_csr *x, int64_t r, int32_t k0, int32_t n,
                     double a, const double *c)
{
    int32_t n_list = 0;
    if (a == 0) return;
    for (int32_t q = 0; q < n; q++)
        if (c[q] != 0) {
            m->list[n_list] = k0 + q;
            m->scratch[n_list++] = a * c[q] / m->s[k0 + q];
        }
    if (n_list) m->ops->add(m, x, r, n_list, m->list, m->scratch);
}

void strux_model_add_rows(strux_model *m, const strux_csr *x, int64_t r, const int32_t *rows,
                          int32_t n, double a, const double *c)
{
    int32_t n_list = 0;
    if (a == 0) return;
    for (int32_t q = 0; q < n; q++)
        if (c[q] != 0) {
            m->list[n_list] = rows[q];
            m->scratch[n_list++] = a * c[q] / m->s[rows[q]];
        }
    if (n_list) m->ops->add(m, x, r, n_list, m->list, m->scratch);
}

void strux_model_add_row(strux_model *m, const strux_csr *x, int64_t r, int32_t k, double c)
{
    if (c == 0) return;
    double cs = c / m->s[k];
    m->ops->add(m, x, r, 1, &k, &cs);
}

void strux_model_add_row_scored(strux_model *m, const strux_csr *x, int64_t r, int32_t k, double c,
                                double score, double xx)
{
    if (c == 0) return;
    double cs = c / m->s[k];
    if (!m->ops->add_plain || m->kind.precision != STRUX_PRECISION_DOUBLE) {
        m->ops->add(m, x, r, 1, &k, &cs); /* float rounds each entry: its norm from the entries */
        return;
    }
    m->ops->add_plain(m, x, r, k, cs);
    m->nrm[k] += cs * (2 * score / m->s[k] + cs * xx); /* ||v + cs·x||² − ||v||² */
}

double strux_model_row_norm2(const strux_model *m, int32_t k)
{
    if (m->view) { /* a view keeps no norms: summed from its row */
        int32_t n = m->ops->row(m, k, m->ridx, m->rval);
        double n2 = 0;
        for (int32_t q = 0; q < n; q++)
            n2 += m->rval[q] * m->rval[q];
        return m->s[k] * m->s[k] * n2;
    }
    return m->s[k] * m->s[k] * m->nrm[k];
}

double strux_model_norm2(const strux_model *m)
{
    double sum = 0, *c = m->scratch; /* exact from the stored values: c_k = s_k² */
    for (int64_t q = 0; q < m->n_extra; q++)
        sum += m->extra[q] * m->extra[q];
    for (int32_t k = 0; k < m->n_rows; k++)
        c[k] = m->s[k] * m->s[k];
    sum += m->ops->dot ? m->ops->dot(m, m, c) : rows_dot(m, m, c);
    if (m->free_col >= 0)
        for (int32_t k = 0; k < m->n_rows; k++) {
            double b = strux_model_get(m, k, m->free_col);
            sum -= b * b;
        }
    if (m->centre_col >= 0) /* ||w − w0||² = ||w||² − Σ_k (2 b_k c − c²) */
        for (int32_t k = 0; k < m->n_rows; k++)
            sum -= m->centre * (2 * strux_model_get(m, k, m->centre_col) - m->centre);
    return sum;
}

void strux_model_scale_row(strux_model *m, int32_t k, double a)
{
    if (a == 0) {
        zero_row(m, k);
        return;
    }
    m->s[k] *= a;
    keep_scale(m, k);
}

void strux_model_scale(strux_model *m, double a)
{
    for (int32_t k = 0; k < m->n_rows; k++)
        strux_model_scale_row(m, k, a);
    for (int64_t q = 0; q < m->n_extra; q++)
        m->extra[q] *= a;
}

void strux_model_shrink(strux_model *m, double a)
{
    int32_t fc = m->free_col;
    if (fc < 0) {
        strux_model_scale(m, a);
        return;
    }
    for (int32_t k = 0; k < m->n_rows; k++) {
        double b = strux_model_get(m, k, fc);
        strux_model_scale_row(m, k, a);
        double old = m->ops->get(m, k, fc), now = b / m->s[k]; /* b keeps its value */
        m->ops->put(m, k, fc, now);
        now = m->ops->get(m, k, fc);
        m->nrm[k] += now * now - old * old;
    }
    for (int64_t q = 0; q < m->n_extra; q++)
        m->extra[q] *= a;
}

void strux_model_scale_cols(strux_model *m, const double *a)
{
    fold_all(m);
    for (int32_t k = 0; k < m->n_rows; k++) {
        int32_t n = m->ops->row(m, k, m->ridx, m->rval);
        for (int32_t q = 0; q < n; q++)
            m->rval[q] *= a[m->ridx[q]];
        m->ops->set_row(m, k, n, m->ridx, m->rval);
    }
}

void strux_model_zero(strux_model *m)
{
    m->ops->zero(m);
    memset(m->extra, 0, (size_t)m->n_extra * sizeof *m->extra);
    for (int32_t k = 0; k < m->n_rows; k++) {
        m->s[k] = 1;
        m->nrm[k] = 0;
    }
}

static strux_status same_shape(const strux_model *a, const strux_model *b, const char *what)
{
    STRUX_CHECK(a->n_rows == b->n_rows && a->dim == b->dim && a->n_extra == b->n_extra,
                STRUX_ERR_INTERNAL, "model %s between shapes %d x %d + %lld and %d x %d + %lld",
                what, a->n_rows, a->dim, (long long)a->n_extra, b->n_rows, b->dim,
                (long long)b->n_extra);
    return STRUX_OK;
}

/* One store and one stored type: the stores' own copy, dot and axpy apply. */
static int same_kind(const strux_model *a, const strux_model *b)
{
    return a->ops == b->ops && a->kind.layout == b->kind.layout &&
           a->kind.precision == b->kind.precision;
}

strux_status strux_model_copy(strux_model *dst, const strux_model *src)
{
    STRUX_TRY(same_shape(dst, src, "copy"));
    if (dst == src) return STRUX_OK;
    if (dst->view && dst->view->base == src) { /* a view of src: no change, no scale */
        strux_model_view_reset(dst);
        for (int32_t k = 0; k < dst->n_rows; k++)
            dst->s[k] = 1;
        return STRUX_OK;
    }
    memcpy(dst->extra, src->extra, (size_t)src->n_extra * sizeof *src->extra);
    if (same_kind(dst, src) && src->ops->copy) {
        src->ops->copy(dst, src);
        memcpy(dst->s, src->s, (size_t)src->n_rows * sizeof *src->s);
        memcpy(dst->nrm, src->nrm, (size_t)src->n_rows * sizeof *src->nrm);
        return STRUX_OK;
    }
    for (int32_t k = 0; k < src->n_rows; k++) {
        int32_t n = src->ops->row(src, k, dst->ridx, dst->rval);
        dst->ops->set_row(dst, k, n, dst->ridx, dst->rval);
        dst->s[k] = src->s[k];
    }
    if (same_kind(dst, src)) /* the kept norms, not recomputed ones: the copy continues alike */
        memcpy(dst->nrm, src->nrm, (size_t)src->n_rows * sizeof *src->nrm);
    return STRUX_OK;
}

strux_status strux_model_axpy(double a, const strux_model *x, strux_model *y)
{
    STRUX_TRY(same_shape(x, y, "axpy"));
    for (int64_t q = 0; q < x->n_extra; q++)
        y->extra[q] += a * x->extra[q];
    if (a == 0) return STRUX_OK;
    double *c = y->scratch;
    for (int32_t k = 0; k < x->n_rows; k++)
        c[k] = a * x->s[k] / y->s[k];
    if (same_kind(x, y) && x != y && y->ops->axpy)
        y->ops->axpy(x, y, c);
    else
        rows_axpy(x, y, c);
    return STRUX_OK;
}

double strux_model_dot(const strux_model *a, const strux_model *b)
{
    double sum = 0;
    for (int64_t q = 0; q < a->n_extra; q++)
        sum += a->extra[q] * b->extra[q];
    double *c = a->scratch;
    for (int32_t k = 0; k < a->n_rows; k++)
        c[k] = a->s[k] * b->s[k];
    return sum + (same_kind(a, b) && a->ops->dot ? a->ops->dot(a, b, c) : rows_dot(a, b, c));
}

void strux_model_get_row(const strux_model *m, int32_t k, double *out)
{
    memset(out, 0, (size_t)m->dim * sizeof *out);
    int32_t n = m->ops->row(m, k, m->ridx, m->rval);
    for (int32_t q = 0; q < n; q++)
        out[m->ridx[q]] = m->s[k] * m->rval[q];
}

void strux_model_set_row(strux_model *m, int32_t k, const double *in)
{
    int32_t n = 0;
    for (int32_t j = 0; j < m->dim; j++)
        if (STRUX_STORED(in[j])) {
            m->ridx[n] = j;
            m->rval[n++] = in[j];
        }
    m->ops->set_row(m, k, n, m->ridx, m->rval);
    m->s[k] = 1;
}

void strux_model_set_row_sparse(strux_model *m, int32_t k, int32_t n, const int32_t *idx,
                                const double *val)
{
    m->ops->set_row(m, k, n, idx, val);
    m->s[k] = 1;
}

int32_t strux_model_row_nonzeros(const strux_model *m, int32_t k, int32_t *idx, double *val)
{
    int32_t n = m->ops->row(m, k, idx, val);
    for (int32_t q = 0; q < n; q++)
        val[q] *= m->s[k];
    return n;
}

int32_t strux_model_row_nnz(const strux_model *m, int32_t k)
{
    return m->ops->row(m, k, m->ridx, m->rval);
}

strux_status strux_model_nonzero_rows(const strux_model *m, double a, strux_sparse_rows *out)
{
    strux_sparse_rows_clear(out);
    for (int32_t k = 0; k < m->n_rows; k++) {
        int32_t n = m->ops->row(m, k, m->ridx, m->rval);
        for (int32_t q = 0; q < n; q++)
            m->rval[q] *= m->s[k];
        STRUX_TRY(strux_sparse_rows_append(out, k, n, m->ridx, m->rval, a));
    }
    int32_t n = 0; /* the free parameters: row n_rows */
    for (int64_t e = 0; e < m->n_extra; e++)
        n += m->extra[e] != 0;
    if (n == 0) return STRUX_OK;
    STRUX_TRY(strux_sparse_rows_reserve(out, out->n_rows + 1, out->n + n));
    out->row[out->n_rows] = m->n_rows;
    out->ptr[out->n_rows] = out->n;
    for (int64_t e = 0; e < m->n_extra; e++)
        if (m->extra[e] != 0) {
            out->col[out->n] = (int32_t)e;
            out->val[out->n++] = a * m->extra[e];
        }
    out->ptr[++out->n_rows] = out->n;
    return STRUX_OK;
}

void strux_model_add_sparse(strux_model *m, const strux_sparse_rows *d)
{
    const int32_t D = m->dim;
    int32_t *iy = m->ridx + D, *io = m->ridx + 2 * (size_t)D;
    double *vy = m->rval + D, *vo = m->rval + 2 * (size_t)D;
    for (int32_t r = 0; r < d->n_rows; r++) {
        const int32_t k = d->row[r];
        const int64_t p0 = d->ptr[r], n = d->ptr[r + 1] - p0;
        if (k == m->n_rows) { /* the free parameters */
            for (int64_t p = p0; p < p0 + n; p++)
                m->extra[d->col[p]] += d->val[p];
            continue;
        }
        double c = 1 / m->s[k]; /* as axpy: v_k += (a·1/s_k)·Δ_k with a = 1 */
        int32_t ny = m->ops->row(m, k, iy, vy);
        m->ops->set_row(m, k, strux_row_merge(ny, iy, vy, c, (int32_t)n, d->col + p0, d->val + p0,
                                              io, vo),
                        io, vo);
    }
}

int64_t strux_model_prune(strux_model *m, double threshold)
{
    int64_t dropped = 0;
    for (int32_t k = 0; k < m->n_rows; k++) {
        int32_t n = m->ops->row(m, k, m->ridx, m->rval), kept = 0;
        double t = threshold / fabs(m->s[k]); /* |s_k·v| < threshold */
        for (int32_t q = 0; q < n; q++)
            if (fabs(m->rval[q]) >= t) {
                m->ridx[kept] = m->ridx[q];
                m->rval[kept++] = m->rval[q];
            }
        if (kept == n) continue;
        dropped += n - kept;
        m->ops->set_row(m, k, kept, m->ridx, m->rval);
    }
    return dropped;
}

double strux_model_get(const strux_model *m, int32_t k, int32_t j)
{
    return m->s[k] * m->ops->get(m, k, j);
}

void strux_model_set(strux_model *m, int32_t k, int32_t j, double v)
{
    double old = m->ops->get(m, k, j), now = v / m->s[k];
    m->ops->put(m, k, j, now);
    now = m->ops->get(m, k, j);
    m->nrm[k] += now * now - old * old;
}

int64_t strux_model_find_non_finite(const strux_model *m)
{
    int64_t q = m->ops->find_non_finite(m);
    if (q >= 0) return q;
    for (int64_t e = 0; e < m->n_extra; e++)
        if (!isfinite(m->extra[e])) return (int64_t)m->n_rows * m->dim + e;
    return -1;
}

strux_model_buffer strux_model_storage(strux_model *m)
{
    fold_all(m);
    void *v = m->ops->storage ? m->ops->storage(m) : NULL;
    if (!v)
        strux_error_set(STRUX_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "the %s layout has no dense storage for collectives",
                        strux_layout_name(m->kind.layout));
    return (strux_model_buffer){.v = v,
                                .n_v = v ? (int64_t)m->n_rows * m->dim : 0,
                                .extra = m->extra,
                                .n_extra = m->n_extra,
                                .precision = m->kind.precision};
}

void strux_model_refresh(strux_model *m)
{
    m->ops->norms(m);
}

/* Per row: its scale, its kept norm, then its stored values as doubles (exact for float): a
 * count n and n columns (int32) and values where that is smaller than the dim values, else
 * n = −1 and all dim values. A model read back continues bit-identically in any kind of the
 * same precision. */
strux_status strux_model_put(const strux_model *m, strux_blob *b)
{
    double *row = m->scratch; /* dim ≤ scratch length */
    for (int32_t k = 0; k < m->n_rows; k++) {
        int64_t n = m->ops->row(m, k, m->ridx, m->rval);
        double nrm = m->nrm[k];
        if (m->view) { /* a view keeps no norms: its row's */
            nrm = 0;
            for (int64_t q = 0; q < n; q++)
                nrm += m->rval[q] * m->rval[q];
        }
        STRUX_TRY(strux_blob_put(b, &m->s[k], sizeof *m->s));
        STRUX_TRY(strux_blob_put(b, &nrm, sizeof nrm));
        if (n * (int64_t)(sizeof(int32_t) + sizeof(double)) < (int64_t)m->dim * 8) {
            STRUX_TRY(strux_blob_put(b, &n, sizeof n));
            STRUX_TRY(strux_blob_put(b, m->ridx, (size_t)n * sizeof *m->ridx));
            STRUX_TRY(strux_blob_put(b, m->rval, (size_t)n * sizeof *m->rval));
            continue;
        }
        memset(row, 0, (size_t)m->dim * sizeof *row);
        for (int64_t q = 0; q < n; q++)
            row[m->ridx[q]] = m->rval[q];
        n = -1;
        STRUX_TRY(strux_blob_put(b, &n, sizeof n));
        STRUX_TRY(strux_blob_put(b, row, (size_t)m->dim * sizeof *row));
    }
    return strux_blob_put(b, m->extra, (size_t)m->n_extra * sizeof *m->extra);
}

strux_status strux_model_get_blob(strux_model *m, strux_blob *b, const char *what)
{
    double *row = m->scratch;
    for (int32_t k = 0; k < m->n_rows; k++) {
        double s, nrm;
        int64_t n;
        STRUX_TRY(strux_blob_get(b, &s, sizeof s, what));
        STRUX_TRY(strux_blob_get(b, &nrm, sizeof nrm, what));
        STRUX_TRY(strux_blob_get(b, &n, sizeof n, what));
        STRUX_CHECK(isfinite(s) && s != 0 && isfinite(nrm) && n >= -1 && n <= m->dim,
                    STRUX_ERR_INPUT, "%s: row %d has scale %g, norm %g and %lld entries", what, k,
                    s, nrm, (long long)n);
        if (n >= 0) {
            STRUX_TRY(strux_blob_get(b, m->ridx, (size_t)n * sizeof *m->ridx, what));
            STRUX_TRY(strux_blob_get(b, m->rval, (size_t)n * sizeof *m->rval, what));
            for (int64_t q = 0; q < n; q++)
                STRUX_CHECK(m->ridx[q] >= 0 && m->ridx[q] < m->dim &&
                                (q == 0 || m->ridx[q] > m->ridx[q - 1]),
                            STRUX_ERR_INPUT, "%s: row %d entry %lld has column %d", what, k,
                            (long long)q, m->ridx[q]);
            m->ops->set_row(m, k, (int32_t)n, m->ridx, m->rval);
        } else {
            STRUX_TRY(strux_blob_get(b, row, (size_t)m->dim * sizeof *row, what));
            strux_model_set_row(m, k, row);
        }
        m->s[k] = s;
        m->nrm[k] = nrm; /* the kept norm, so the iterate continues bit-identically */
    }
    return strux_blob_get(b, m->extra, (size_t)m->n_extra * sizeof *m->extra, what);
}

strux_status strux_model_status(const strux_model *m)
{
    STRUX_CHECK(m->failed_row < 0, STRUX_ERR_NOMEM,
                "out of memory growing row %d of the sparse model to %lld entries (%zu bytes of "
                "weights held); model.precision = float, model.prune or more ranks shrink it",
                m->failed_row, (long long)m->failed_n, strux_model_bytes(m));
    return STRUX_OK;
}
