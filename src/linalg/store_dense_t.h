/* linalg/store_dense_t.h - the dense kernels of the weight store for one stored type, included
 * by store_dense.c once per precision with T (double or float) and NAME(f) (a suffix) defined.
 * Label-major: v[k·dim + j]; feature-major: v[j·K + k] (K = n_rows). Every sum is double. Columns
 * of x at or beyond dim are skipped (ascending, so the loops stop there). */

/* Feature-major runs are far apart in memory: the run of the non-zero STORE_AHEAD ahead is
 * fetched while this one is summed (the loop is latency-bound otherwise). */
static inline void NAME(prefetch_run)(const T *run, int32_t n)
{
    for (int64_t b = 0; b < (int64_t)n * (int64_t)sizeof(T); b += 64)
        __builtin_prefetch((const char *)run + b, 0, 0);
}

/* out[q] = Σ_j x_j·v_{k,j} for k = rows[q] (rows NULL: k = k0 + q), q < n, unscaled. */
static void NAME(scores_lm)(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0,
                            int32_t n, const int32_t *rows, double *out)
{
    const T *v = m->v;
    const int64_t p0 = x->ptr[r], p1 = dense_row_end(x, r, m->dim);
    const int32_t *restrict col = x->col;
    const float *restrict val = x->val;
    for (int32_t q = 0; q < n; q++) {
        const T *restrict vk = v + (int64_t)(rows ? rows[q] : k0 + q) * m->dim;
        double sum = 0;
        for (int64_t p = p0; p < p1; p++)
            sum += (double)val[p] * (double)vk[col[p]];
        out[q] = sum;
    }
}

static void NAME(scores_fm)(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0,
                            int32_t n, const int32_t *rows, double *out)
{
    const T *v = m->v;
    const int64_t K = m->n_rows, p0 = x->ptr[r], p1 = dense_row_end(x, r, m->dim);
    if (n == 1) { /* one row (M3L's label blocks, shrunk labels): the sum in a register */
        const T *restrict vk = v + (rows ? rows[0] : k0);
        const int32_t *restrict col = x->col;
        const float *restrict val = x->val;
        double sum = 0;
        for (int64_t p = p0; p < p1; p++)
            sum += (double)val[p] * (double)vk[(int64_t)col[p] * K];
        out[0] = sum;
        return;
    }
    double *restrict o = out;
    for (int32_t q = 0; q < n; q++)
        o[q] = 0;
    for (int64_t p = p0; p < p1; p++) {
        const double xj = x->val[p];
        const T *restrict vj = v + (int64_t)x->col[p] * K;
        if (p + STORE_AHEAD < p1) NAME(prefetch_run)(v + (int64_t)x->col[p + STORE_AHEAD] * K + k0, n);
        if (rows)
            for (int32_t q = 0; q < n; q++)
                o[q] += xj * (double)vj[rows[q]];
        else
            for (int32_t q = 0; q < n; q++)
                o[q] += xj * (double)vj[k0 + q];
    }
}

/* v_{rows[q]} += cs[q]·x_r for q < n_list; nrm follows. */
static void NAME(add_lm)(strux_model *m, const strux_csr *x, int64_t r, int32_t n_list,
                         const int32_t *rows, const double *cs)
{
    T *v = m->v;
    const int64_t p0 = x->ptr[r], p1 = dense_row_end(x, r, m->dim);
    const int32_t *restrict col = x->col;
    const float *restrict val = x->val;
    for (int32_t q = 0; q < n_list; q++) {
        const int32_t k = rows[q];
        T *restrict vk = v + (int64_t)k * m->dim;
        const double c = cs[q];
        double dn = 0;
        for (int64_t p = p0; p < p1; p++) {
            const double old = vk[col[p]];
            const T now = (T)(old + c * (double)val[p]);
            vk[col[p]] = now;
            dn += (double)now * (double)now - old * old;
        }
        m->nrm[k] += dn;
    }
}

static void NAME(add_fm)(strux_model *m, const strux_csr *x, int64_t r, int32_t n_list,
                         const int32_t *rows, const double *cs)
{
    T *v = m->v;
    const int64_t K = m->n_rows, p0 = x->ptr[r], p1 = dense_row_end(x, r, m->dim);
    if (n_list == 1) { /* one row: its norm's change in a register */
        T *restrict vk = v + rows[0];
        const int32_t *restrict col = x->col;
        const float *restrict val = x->val;
        const double c = cs[0];
        double dn = 0;
        for (int64_t p = p0; p < p1; p++) {
            const double old = vk[(int64_t)col[p] * K];
            const T now = (T)(old + c * (double)val[p]);
            vk[(int64_t)col[p] * K] = now;
            dn += (double)now * (double)now - old * old;
        }
        m->nrm[rows[0]] += dn;
        return;
    }
    for (int64_t p = p0; p < p1; p++) {
        const double xj = x->val[p];
        T *vj = v + (int64_t)x->col[p] * K;
        for (int32_t q = 0; q < n_list; q++) {
            const int32_t k = rows[q];
            const double old = vj[k];
            const T now = (T)(old + cs[q] * xj);
            vj[k] = now;
            m->nrm[k] += (double)now * (double)now - old * old;
        }
    }
}

/* v_k += c·x_r, nrm untouched (strux_model_add_row_scored updates it from the row's score). */
static void NAME(add_plain)(strux_model *m, const strux_csr *x, int64_t r, int32_t k, double c)
{
    const int64_t p0 = x->ptr[r], p1 = dense_row_end(x, r, m->dim);
    const int64_t stride = m->kind.layout == STRUX_LAYOUT_FEATURE_MAJOR ? m->n_rows : 1;
    T *restrict vk = (T *)m->v + (stride == 1 ? (int64_t)k * m->dim : k);
    const int32_t *restrict col = x->col;
    const float *restrict val = x->val;
    for (int64_t p = p0; p < p1; p++)
        vk[(int64_t)col[p] * stride] = (T)((double)vk[(int64_t)col[p] * stride] + c * (double)val[p]);
}

/* v_k ← a[k]·v_k for rows with a[k] ≠ 1. */
static void NAME(scale_rows)(strux_model *m, const double *a)
{
    T *v = m->v;
    const int64_t K = m->n_rows, D = m->dim;
    if (m->kind.layout == STRUX_LAYOUT_LABEL_MAJOR) {
        for (int64_t k = 0; k < K; k++)
            if (a[k] != 1)
                for (int64_t j = 0; j < D; j++)
                    v[k * D + j] = (T)(a[k] * (double)v[k * D + j]);
    } else {
        for (int64_t j = 0; j < D; j++)
            for (int64_t k = 0; k < K; k++)
                if (a[k] != 1) v[j * K + k] = (T)(a[k] * (double)v[j * K + k]);
    }
    for (int64_t k = 0; k < K; k++)
        if (a[k] != 1) m->nrm[k] = 0;
    if (m->kind.layout == STRUX_LAYOUT_LABEL_MAJOR) {
        for (int64_t k = 0; k < K; k++)
            if (a[k] != 1)
                for (int64_t j = 0; j < D; j++)
                    m->nrm[k] += (double)v[k * D + j] * (double)v[k * D + j];
    } else {
        for (int64_t j = 0; j < D; j++)
            for (int64_t k = 0; k < K; k++)
                if (a[k] != 1) m->nrm[k] += (double)v[j * K + k] * (double)v[j * K + k];
    }
}

static void NAME(norms)(strux_model *m)
{
    const T *v = m->v;
    const int64_t K = m->n_rows, D = m->dim;
    for (int64_t k = 0; k < K; k++)
        m->nrm[k] = 0;
    if (m->kind.layout == STRUX_LAYOUT_LABEL_MAJOR) {
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < D; j++)
                m->nrm[k] += (double)v[k * D + j] * (double)v[k * D + j];
    } else {
        for (int64_t j = 0; j < D; j++)
            for (int64_t k = 0; k < K; k++)
                m->nrm[k] += (double)v[j * K + k] * (double)v[j * K + k];
    }
}

/* Σ_k c[k]·(a_k·b_k) of the stored values (same kind). */
static double NAME(dot)(const strux_model *a, const strux_model *b, const double *c)
{
    const T *va = a->v, *vb = b->v;
    const int64_t K = a->n_rows, D = a->dim;
    double sum = 0;
    if (a->kind.layout == STRUX_LAYOUT_LABEL_MAJOR) {
        for (int64_t k = 0; k < K; k++) {
            double row = 0;
            for (int64_t j = 0; j < D; j++)
                row += (double)va[k * D + j] * (double)vb[k * D + j];
            sum += c[k] * row;
        }
    } else {
        for (int64_t j = 0; j < D; j++)
            for (int64_t k = 0; k < K; k++)
                sum += c[k] * (double)va[j * K + k] * (double)vb[j * K + k];
    }
    return sum;
}

/* y_k += c[k]·x_k over the stored values (same kind); the norms of the rows written are
 * summed in the same pass. */
static void NAME(axpy)(const strux_model *x, strux_model *y, const double *c)
{
    const T *vx = x->v;
    T *vy = y->v;
    const int64_t K = x->n_rows, D = x->dim;
    if (x->kind.layout == STRUX_LAYOUT_LABEL_MAJOR) {
        for (int64_t k = 0; k < K; k++) {
            if (c[k] == 0) continue;
            double n2 = 0;
            for (int64_t j = 0; j < D; j++) {
                T now = (T)((double)vy[k * D + j] + c[k] * (double)vx[k * D + j]);
                vy[k * D + j] = now;
                n2 += (double)now * (double)now;
            }
            y->nrm[k] = n2;
        }
    } else {
        double *n2 = y->nrm;
        for (int64_t k = 0; k < K; k++)
            n2[k] = 0;
        for (int64_t j = 0; j < D; j++)
            for (int64_t k = 0; k < K; k++) {
                T now = (T)((double)vy[j * K + k] + c[k] * (double)vx[j * K + k]);
                vy[j * K + k] = now;
                n2[k] += (double)now * (double)now;
            }
    }
}

static int64_t NAME(find_non_finite)(const strux_model *m)
{
    const T *v = m->v;
    const int64_t n = (int64_t)m->n_rows * m->dim;
    for (int64_t q = 0; q < n; q++)
        if (!isfinite((double)v[q])) return q;
    return -1;
}
