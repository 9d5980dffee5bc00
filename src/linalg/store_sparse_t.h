/* linalg/store_sparse_t.h - the kernels of the sparse weight store for one stored type, included
 * by store_sparse.c once per precision with T (double or float) and NAME(f) (a suffix) defined.
 * A sparse row holds its entries at ascending columns; a dense row (cap = STRUX_ROW_DENSE) all
 * dim values. Every sum is double and runs in the order of the label-major dense kernels
 * (store_dense_t.h), which only add zeros besides, so both give the same doubles. Columns of x at
 * or beyond dim are skipped. */

/* out[q] = v_k·x_r for k = rows[q] (rows NULL: k = k0 + q), q < n, unscaled: a merge of x's
 * columns with the row's (a binary search per non-zero of x when the row is much longer). */
static void NAME(sp_scores)(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0,
                            int32_t n, const int32_t *rows, double *out)
{
    const int64_t p0 = x->ptr[r], pe = x_end(m, x, r);
    for (int32_t q = 0; q < n; q++) {
        const strux_sparse_row *row = &m->rows[rows ? rows[q] : k0 + q];
        const T *v = row->val;
        double sum = 0;
        if (row->cap == STRUX_ROW_DENSE) {
            for (int64_t p = p0; p < pe; p++)
                sum += (double)x->val[p] * (double)v[x->col[p]];
        } else if (row->n > 0) {
            const int32_t *idx = row->idx, nn = row->n;
            const int search = (int64_t)nn > SPARSE_SEARCH * (pe - p0);
            int32_t i = 0;
            for (int64_t p = p0; p < pe; p++) {
                const int32_t j = x->col[p];
                i = search ? find_from(idx, i, nn, j) : advance(idx, i, nn, j);
                if (i == nn) break;
                if (idx[i] == j) sum += (double)x->val[p] * (double)v[i];
            }
        }
        out[q] = sum;
    }
}

/* v_k += c·x_r on dense row k; nrm follows. */
static void NAME(sp_add_dense)(strux_model *m, const strux_csr *x, int64_t r, int32_t k, double c)
{
    T *v = m->rows[k].val;
    const int64_t p0 = x->ptr[r], pe = x_end(m, x, r);
    double dn = 0;
    for (int64_t p = p0; p < pe; p++) {
        const double old = v[x->col[p]];
        const T now = (T)(old + c * (double)x->val[p]);
        v[x->col[p]] = now;
        dn += (double)now * (double)now - old * old;
    }
    m->nrm[k] += dn;
}

/* v_{rows[q]} += cs[q]·x_r for q < n_list; nrm follows. A sparse row first gains (as zeros) the
 * columns of x's non-zeros it lacks, merged in from the back; a row that would pass dense_at
 * entries turns dense. */
static void NAME(sp_add)(strux_model *m, const strux_csr *x, int64_t r, int32_t n_list,
                         const int32_t *rows, const double *cs)
{
    const int64_t p0 = x->ptr[r], pe = x_end(m, x, r);
    int32_t *nc = m->ridx; /* the new columns (≤ nnz of x ≤ dim) */
    for (int32_t q = 0; q < n_list; q++) {
        const int32_t k = rows[q];
        strux_sparse_row *row = &m->rows[k];
        if (row->cap != STRUX_ROW_DENSE) {
            int32_t nn = row->n, i = 0, n_new = 0;
            const int search = (int64_t)nn > SPARSE_SEARCH * (pe - p0);
            for (int64_t p = p0; p < pe; p++) {
                const int32_t j = x->col[p];
                if (x->val[p] == 0 || (n_new && nc[n_new - 1] == j)) continue;
                i = search ? find_from(row->idx, i, nn, j) : advance(row->idx, i, nn, j);
                if (i == nn || row->idx[i] != j) nc[n_new++] = j;
            }
            if ((int64_t)nn + n_new > m->dense_at) {
                if (make_dense(m, k)) continue; /* left out: strux_model_status reports it */
            } else if (n_new) {
                if (reserve(m, k, nn + n_new)) continue;
                int32_t *idx = row->idx;
                T *v = row->val;
                int32_t a = nn - 1, t = n_new - 1, w = nn + n_new - 1;
                while (t >= 0) {
                    if (a >= 0 && idx[a] > nc[t]) {
                        idx[w] = idx[a];
                        v[w--] = v[a--];
                    } else {
                        idx[w] = nc[t--];
                        v[w--] = 0;
                    }
                }
                row->n = nn + n_new;
            }
        }
        if (row->cap == STRUX_ROW_DENSE) {
            NAME(sp_add_dense)(m, x, r, k, cs[q]);
            continue;
        }
        const int32_t *idx = row->idx, nn = row->n;
        const int search = (int64_t)nn > SPARSE_SEARCH * (pe - p0);
        T *v = row->val;
        int32_t i = 0;
        double dn = 0;
        for (int64_t p = p0; p < pe; p++) {
            const int32_t j = x->col[p];
            i = search ? find_from(idx, i, nn, j) : advance(idx, i, nn, j);
            if (i == nn) break;
            if (idx[i] != j) continue;
            const double old = v[i];
            const T now = (T)(old + cs[q] * (double)x->val[p]);
            v[i] = now;
            dn += (double)now * (double)now - old * old;
        }
        m->nrm[k] += dn;
    }
}

static double NAME(sp_get)(const strux_model *m, int32_t k, int32_t j)
{
    const strux_sparse_row *row = &m->rows[k];
    const T *v = row->val;
    if (row->cap == STRUX_ROW_DENSE) return (double)v[j];
    int32_t i = lower_bound(row->idx, 0, row->n, j);
    return i < row->n && row->idx[i] == j ? (double)v[i] : 0.0;
}

/* Stored (k, j) ← value; a zero at a column the row lacks adds nothing. */
static void NAME(sp_put)(strux_model *m, int32_t k, int32_t j, double value)
{
    strux_sparse_row *row = &m->rows[k];
    if (row->cap != STRUX_ROW_DENSE) {
        int32_t i = lower_bound(row->idx, 0, row->n, j);
        if (i < row->n && row->idx[i] == j) {
            ((T *)row->val)[i] = (T)value;
            return;
        }
        if (!STRUX_STORED(value)) return;
        if ((int64_t)row->n + 1 > m->dense_at) {
            if (make_dense(m, k)) return;
        } else {
            if (reserve(m, k, row->n + 1)) return;
            T *v = row->val;
            memmove(row->idx + i + 1, row->idx + i, (size_t)(row->n - i) * sizeof *row->idx);
            memmove(v + i + 1, v + i, (size_t)(row->n - i) * sizeof *v);
            row->idx[i] = j;
            v[i] = (T)value;
            row->n++;
            return;
        }
    }
    ((T *)row->val)[j] = (T)value;
}

static int32_t NAME(sp_row)(const strux_model *m, int32_t k, int32_t *idx, double *val)
{
    const strux_sparse_row *row = &m->rows[k];
    const T *v = row->val;
    int32_t n = 0;
    if (row->cap == STRUX_ROW_DENSE) {
        for (int32_t j = 0; j < m->dim; j++)
            if (STRUX_STORED(v[j])) {
                idx[n] = j;
                val[n++] = (double)v[j];
            }
    } else {
        for (int32_t i = 0; i < row->n; i++)
            if (STRUX_STORED(v[i])) {
                idx[n] = row->idx[i];
                val[n++] = (double)v[i];
            }
    }
    return n;
}

/* The values of row k (n of them at v) into nrm[k], in column order. */
static void NAME(sp_norm_row)(strux_model *m, int32_t k)
{
    const strux_sparse_row *row = &m->rows[k];
    const T *v = row->val;
    const int32_t n = row->cap == STRUX_ROW_DENSE ? m->dim : row->n;
    double n2 = 0;
    for (int32_t i = 0; i < n; i++)
        n2 += (double)v[i] * (double)v[i];
    m->nrm[k] = n2;
}

static void NAME(sp_set_row)(strux_model *m, int32_t k, int32_t n, const int32_t *idx,
                             const double *val)
{
    strux_sparse_row *row = &m->rows[k];
    int32_t nz = 0;
    for (int32_t q = 0; q < n; q++)
        nz += STRUX_STORED(val[q]);
    if (nz > m->dense_at || (row->cap == STRUX_ROW_DENSE && nz > m->dense_at / 2)) {
        if (row->cap != STRUX_ROW_DENSE) {
            row->n = 0;
            if (make_dense(m, k)) return;
        }
        T *v = row->val;
        memset(v, 0, (size_t)m->dim * sizeof *v);
        for (int32_t q = 0; q < n; q++)
            v[idx[q]] = (T)val[q];
    } else {
        if (row->cap == STRUX_ROW_DENSE) make_sparse(m, k);
        if (reserve(m, k, nz)) return;
        fit(m, k, nz);
        T *v = row->val;
        int32_t w = 0;
        for (int32_t q = 0; q < n; q++)
            if (STRUX_STORED(val[q])) {
                row->idx[w] = idx[q];
                v[w++] = (T)val[q];
            }
        row->n = w;
    }
    NAME(sp_norm_row)(m, k);
}

static void NAME(sp_scale_rows)(strux_model *m, const double *a)
{
    for (int32_t k = 0; k < m->n_rows; k++) {
        if (a[k] == 1) continue;
        strux_sparse_row *row = &m->rows[k];
        T *v = row->val;
        const int32_t n = row->cap == STRUX_ROW_DENSE ? m->dim : row->n;
        for (int32_t i = 0; i < n; i++)
            v[i] = (T)(a[k] * (double)v[i]);
        NAME(sp_norm_row)(m, k);
    }
}

static void NAME(sp_norms)(strux_model *m)
{
    for (int32_t k = 0; k < m->n_rows; k++)
        NAME(sp_norm_row)(m, k);
}

static int64_t NAME(sp_find_non_finite)(const strux_model *m)
{
    for (int32_t k = 0; k < m->n_rows; k++) {
        const strux_sparse_row *row = &m->rows[k];
        const T *v = row->val;
        const int dense = row->cap == STRUX_ROW_DENSE;
        const int32_t n = dense ? m->dim : row->n;
        for (int32_t i = 0; i < n; i++)
            if (!isfinite((double)v[i])) return (int64_t)k * m->dim + (dense ? i : row->idx[i]);
    }
    return -1;
}

/* Row k's sparse entries scattered into d (dim zeroed values). */
static void NAME(sp_scatter)(const strux_sparse_row *row, void *d)
{
    const T *v = row->val;
    T *out = d;
    for (int32_t i = 0; i < row->n; i++)
        out[row->idx[i]] = v[i];
}
