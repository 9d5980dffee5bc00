/* io/model_m3l.c - the group /m3l of a model trained by solver.type = m3l or m3l_kernel
 * (docs/model-format.md, issue 16 "Model"): /m3l/R (float64 L×L, the prior as used) and the
 * attributes prior, empirical, shrink, source, eig_min, eig_max, lambda, C_paper. A linear model
 * keeps Z in /weights, so predict, eval and scripts/strux_model.py read it like any multilabel
 * model. A kernel model adds its expansion f_l(x) = Σ_s coef[s,l]·K(sv_s, x): the group
 * /m3l/kernel (attributes type, gamma, degree, coef0, b0), the support vectors as CSR
 * /m3l/sv/{indptr, indices, values, row} (features without the bias column, attribute
 * n_features), /m3l/alpha and /m3l/coef (float64 n_sv × L). Reading checks every shape, index,
 * range and value, so a model that loads scores without further checks. */
#include "h5.h"

#include <math.h>
#include <string.h>

#define GROUP "m3l"

static strux_status write_kexp(hid_t g, const char *path, const strux_kexp *e)
{
    hid_t k = H5Gcreate2(g, "kernel", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    STRUX_CHECK(k >= 0, STRUX_ERR_IO, "%s: cannot create group '/m3l/kernel'", path);
    strux_status st = h5_attr_str(k, "type", strux_kernel_name(e->kernel.type), path);
    if (st == STRUX_OK) st = h5_attr_f64(k, "gamma", e->kernel.gamma, path);
    if (st == STRUX_OK) st = h5_attr_i64(k, "degree", e->kernel.degree, path);
    if (st == STRUX_OK) st = h5_attr_f64(k, "coef0", e->kernel.coef0, path);
    if (st == STRUX_OK) st = h5_attr_f64(k, "b0", e->kernel.b0, path);
    H5Gclose(k);
    STRUX_TRY(st);
    hid_t sv = H5Gcreate2(g, "sv", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    STRUX_CHECK(sv >= 0, STRUX_ERR_IO, "%s: cannot create group '/m3l/sv'", path);
    hsize_t n_ptr = (hsize_t)e->n_sv + 1, nnz = (hsize_t)e->sv.ptr[e->n_sv], n = (hsize_t)e->n_sv;
    st = h5_attr_i64(sv, "n_features", e->sv.n_cols, path);
    if (st == STRUX_OK) st = h5_write(sv, "indptr", H5T_NATIVE_INT64, 1, &n_ptr, e->sv.ptr, path);
    if (st == STRUX_OK) st = h5_write(sv, "indices", H5T_NATIVE_INT32, 1, &nnz, e->sv.col, path);
    if (st == STRUX_OK) st = h5_write(sv, "values", H5T_NATIVE_FLOAT, 1, &nnz, e->sv.val, path);
    if (st == STRUX_OK) st = h5_write(sv, "row", H5T_NATIVE_INT64, 1, &n, e->row, path);
    H5Gclose(sv);
    STRUX_TRY(st);
    hsize_t dims[2] = {(hsize_t)e->n_sv, (hsize_t)e->n_labels};
    STRUX_TRY(h5_write(g, "alpha", H5T_NATIVE_DOUBLE, 2, dims, e->alpha, path));
    return h5_write(g, "coef", H5T_NATIVE_DOUBLE, 2, dims, e->coef, path);
}

strux_status h5_m3l_write(hid_t f, const char *path, const strux_m3l_info *m)
{
    if (m->n_labels <= 0) return STRUX_OK;
    hid_t g = H5Gcreate2(f, GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_IO, "%s: cannot create group '/m3l'", path);
    strux_status st = STRUX_OK;
    hsize_t dims[2] = {(hsize_t)m->n_labels, (hsize_t)m->n_labels};
    STRUX_TRY_GOTO(st, h5_attr_str(g, "prior", m->prior, path), done);
    STRUX_TRY_GOTO(st, h5_attr_str(g, "empirical", m->empirical, path), done);
    STRUX_TRY_GOTO(st, h5_attr_str(g, "source", m->source, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "shrink", m->shrink, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "eig_min", m->eig_min, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "eig_max", m->eig_max, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "lambda", m->lambda, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "C_paper", m->C_paper, path), done);
    STRUX_TRY_GOTO(st, h5_write(g, "R", H5T_NATIVE_DOUBLE, 2, dims, m->R, path), done);
    if (m->kexp.n_labels > 0) STRUX_TRY_GOTO(st, write_kexp(g, path, &m->kexp), done);
done:
    H5Gclose(g);
    return st;
}

/* /m3l/kernel's attributes. */
static strux_status read_kernel(hid_t g, const char *path, strux_kernel *k)
{
    hid_t kg = H5Gopen2(g, "kernel", H5P_DEFAULT);
    STRUX_CHECK(kg >= 0, STRUX_ERR_INPUT, "%s: cannot open group '/m3l/kernel'", path);
    char type[32];
    int64_t degree = 0;
    strux_status st = h5_read_attr_str(kg, "type", type, sizeof type, path);
    if (st == STRUX_OK) st = h5_read_attr_f64(kg, "gamma", &k->gamma, path);
    if (st == STRUX_OK) st = h5_read_attr_i64(kg, "degree", &degree, path);
    if (st == STRUX_OK) st = h5_read_attr_f64(kg, "coef0", &k->coef0, path);
    if (st == STRUX_OK) st = h5_read_attr_f64(kg, "b0", &k->b0, path);
    H5Gclose(kg);
    STRUX_TRY(st);
    if (strux_kernel_parse(type, &k->type) != STRUX_OK)
        return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                               "%s: '/m3l/kernel' type '%s' is none of linear, rbf, poly", path,
                               type);
    STRUX_CHECK(isfinite(k->gamma) && k->gamma > 0 && isfinite(k->coef0) && isfinite(k->b0) &&
                    degree >= 1 && degree <= 10,
                STRUX_ERR_INPUT,
                "%s: '/m3l/kernel' attributes out of range: gamma %g (> 0), degree %lld (1..10), "
                "coef0 %g, b0 %g (finite)",
                path, k->gamma, (long long)degree, k->coef0, k->b0);
    k->degree = (int32_t)degree;
    return STRUX_OK;
}

/* /m3l/sv, /m3l/alpha and /m3l/coef into e (L labels), every entry checked. */
static strux_status read_kexp(hid_t g, const char *path, int32_t L, strux_kexp *e)
{
    STRUX_TRY(read_kernel(g, path, &e->kernel));
    int64_t n_ptr, nnz, len, n_cols, dims[2];
    STRUX_TRY(h5_shape(g, "sv/indptr", 1, &n_ptr, path));
    STRUX_TRY(h5_shape(g, "sv/indices", 1, &nnz, path));
    STRUX_TRY(h5_shape(g, "sv/values", 1, &len, path));
    STRUX_CHECK(n_ptr >= 1 && len == nnz, STRUX_ERR_INPUT,
                "%s: '/m3l/sv' has %lld offsets, %lld indices and %lld values (expected n_sv + 1 "
                "offsets and as many values as indices)",
                path, (long long)n_ptr, (long long)nnz, (long long)len);
    int64_t n = n_ptr - 1;
    STRUX_TRY(h5_shape(g, "sv/row", 1, &len, path));
    STRUX_CHECK(len == n, STRUX_ERR_INPUT, "%s: '/m3l/sv/row' has %lld entries, expected %lld",
                path, (long long)len, (long long)n);
    for (int a = 0; a < 2; a++) {
        STRUX_TRY(h5_shape(g, a ? "coef" : "alpha", 2, dims, path));
        STRUX_CHECK(dims[0] == n && dims[1] == L, STRUX_ERR_INPUT,
                    "%s: '/m3l/%s' is %lld x %lld, expected %lld x %d (support vectors x labels)",
                    path, a ? "coef" : "alpha", (long long)dims[0], (long long)dims[1],
                    (long long)n, (int)L);
    }
    hid_t sv = H5Gopen2(g, "sv", H5P_DEFAULT);
    STRUX_CHECK(sv >= 0, STRUX_ERR_INPUT, "%s: cannot open group '/m3l/sv'", path);
    strux_status st = h5_read_attr_i64(sv, "n_features", &n_cols, path);
    H5Gclose(sv);
    STRUX_TRY(st);
    STRUX_CHECK(n_cols >= 0 && n_cols < INT32_MAX, STRUX_ERR_INPUT,
                "%s: '/m3l/sv' attribute n_features = %lld is out of range", path,
                (long long)n_cols);
    e->n_sv = n;
    e->n_labels = L;
    STRUX_TRY(strux_csr_alloc(&e->sv, n, (int32_t)n_cols, nnz));
    STRUX_TRY(strux_alloc_array(&e->row, (size_t)n + 1, sizeof *e->row));
    STRUX_TRY(strux_alloc_array(&e->alpha, (size_t)(n * L) + 1, sizeof *e->alpha));
    STRUX_TRY(strux_alloc_array(&e->coef, (size_t)(n * L) + 1, sizeof *e->coef));
    STRUX_TRY(h5_read(g, "sv/indptr", H5T_NATIVE_INT64, 0, -1, e->sv.ptr, path));
    STRUX_TRY(h5_read(g, "sv/indices", H5T_NATIVE_INT32, 0, -1, e->sv.col, path));
    STRUX_TRY(h5_read(g, "sv/values", H5T_NATIVE_FLOAT, 0, -1, e->sv.val, path));
    STRUX_TRY(h5_read(g, "sv/row", H5T_NATIVE_INT64, 0, -1, e->row, path));
    STRUX_TRY(h5_read(g, "alpha", H5T_NATIVE_DOUBLE, 0, -1, e->alpha, path));
    STRUX_TRY(h5_read(g, "coef", H5T_NATIVE_DOUBLE, 0, -1, e->coef, path));
    STRUX_CHECK(e->sv.ptr[0] == 0 && e->sv.ptr[n] == nnz, STRUX_ERR_INPUT,
                "%s: '/m3l/sv/indptr' runs from %lld to %lld, expected 0 to %lld", path,
                (long long)e->sv.ptr[0], (long long)e->sv.ptr[n], (long long)nnz);
    for (int64_t r = 0; r < n; r++) {
        STRUX_CHECK(e->sv.ptr[r + 1] >= e->sv.ptr[r] && e->row[r] >= 0, STRUX_ERR_INPUT,
                    "%s: '/m3l/sv' support vector %lld: offsets descend or row %lld < 0", path,
                    (long long)r, (long long)e->row[r]);
        for (int64_t q = e->sv.ptr[r]; q < e->sv.ptr[r + 1]; q++)
            STRUX_CHECK(e->sv.col[q] >= 0 && e->sv.col[q] < n_cols &&
                            (q == e->sv.ptr[r] || e->sv.col[q] > e->sv.col[q - 1]) &&
                            isfinite(e->sv.val[q]),
                        STRUX_ERR_INPUT,
                        "%s: '/m3l/sv' support vector %lld: index %d (of %lld features, "
                        "ascending) or value %g (finite) is invalid",
                        path, (long long)r, e->sv.col[q], (long long)n_cols, e->sv.val[q]);
    }
    for (int64_t j = 0; j < n * L; j++)
        STRUX_CHECK(isfinite(e->alpha[j]) && e->alpha[j] >= 0 && isfinite(e->coef[j]),
                    STRUX_ERR_INPUT,
                    "%s: '/m3l/alpha' or '/m3l/coef' at (%lld, %lld): alpha %g (finite, ≥ 0), "
                    "coef %g (finite)",
                    path, (long long)(j / L), (long long)(j % L), e->alpha[j], e->coef[j]);
    return strux_kexp_prepare(e);
}

static strux_status read_group(hid_t g, const char *path, strux_m3l_info *m)
{
    int64_t dims[2];
    STRUX_TRY(h5_shape(g, "R", 2, dims, path));
    STRUX_CHECK(dims[0] == dims[1] && dims[0] > 0 && dims[0] < INT32_MAX, STRUX_ERR_INPUT,
                "%s: dataset '/m3l/R' is %lld x %lld, not a square prior", path,
                (long long)dims[0], (long long)dims[1]);
    STRUX_TRY(h5_read_attr_str(g, "prior", m->prior, sizeof m->prior, path));
    STRUX_TRY(h5_read_attr_str(g, "empirical", m->empirical, sizeof m->empirical, path));
    STRUX_TRY(h5_read_attr_str(g, "source", m->source, sizeof m->source, path));
    STRUX_TRY(h5_read_attr_f64(g, "shrink", &m->shrink, path));
    STRUX_TRY(h5_read_attr_f64(g, "eig_min", &m->eig_min, path));
    STRUX_TRY(h5_read_attr_f64(g, "eig_max", &m->eig_max, path));
    STRUX_TRY(h5_read_attr_f64(g, "lambda", &m->lambda, path));
    STRUX_TRY(h5_read_attr_f64(g, "C_paper", &m->C_paper, path));
    STRUX_TRY(strux_alloc_array(&m->R, (size_t)(dims[0] * dims[1]), sizeof *m->R));
    m->n_labels = (int32_t)dims[0];
    STRUX_TRY(h5_read(g, "R", H5T_NATIVE_DOUBLE, 0, -1, m->R, path));
    for (int64_t j = 0; j < dims[0] * dims[1]; j++)
        STRUX_CHECK(isfinite(m->R[j]), STRUX_ERR_INPUT,
                    "%s: dataset '/m3l/R' holds a non-finite value at (%lld, %lld)", path,
                    (long long)(j / dims[0]), (long long)(j % dims[0]));
    if (h5_has(g, "kernel")) STRUX_TRY(read_kexp(g, path, m->n_labels, &m->kexp));
    return STRUX_OK;
}

strux_status h5_m3l_read(hid_t f, const char *path, strux_m3l_info *m)
{
    *m = (strux_m3l_info){0};
    if (!h5_has(f, GROUP)) return STRUX_OK;
    hid_t g = H5Gopen2(f, GROUP, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_INPUT, "%s: cannot open group '/m3l'", path);
    strux_status st = read_group(g, path, m);
    H5Gclose(g);
    if (st != STRUX_OK) {
        strux_free(&m->R);
        strux_kexp_free(&m->kexp);
        m->n_labels = 0;
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    return STRUX_OK;
}
