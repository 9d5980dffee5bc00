/* io/model_file.c - the HDF5 model file (docs/model-format.md): weights, task / surrogate / search
 * / solver names, label names, the resolved config, provenance and the training curve. Written
 * under a temporary name and renamed into place, so a reader never sees a partial model. */
#include "h5.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MODEL_FORMAT "strux-model"
#define MODEL_FORMAT_VERSION 1

void strux_model_info_free(strux_model_info *info)
{
    strux_free(&info->config);
    strux_label_names_free(&info->label_names, info->n_labels);
    strux_curve_free(&info->curve);
    strux_tree_set_free(&info->trees);
    strux_hier_stored_free(&info->hier);
    strux_free(&info->m3l.R);
    strux_kexp_free(&info->m3l.kexp);
    strux_rates_store_free(&info->rates);
}

/* Rows [r0, r0 + n) of the weights, scales applied (h5_rows_fn). */
static void fill_rows(const void *ctx, int64_t r0, int64_t n, double *buf)
{
    const strux_model *m = ctx;
    for (int64_t r = 0; r < n; r++)
        strux_model_get_row(m, (int32_t)(r0 + r), buf + r * strux_model_dim(m));
}

strux_status h5_model_write_weights(hid_t loc, const char *path, const strux_model *m,
                                    strux_precision precision)
{
    hid_t type = precision == STRUX_PRECISION_FLOAT ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    STRUX_TRY(h5_write_rows(loc, "weights", type, strux_model_n_rows(m), strux_model_dim(m),
                            fill_rows, m, path));
    hsize_t n_extra = (hsize_t)strux_model_n_extra(m);
    return h5_write(loc, "extra", H5T_NATIVE_DOUBLE, 1, &n_extra, strux_model_extra(m), path);
}

/* /weights_csr: indptr (int64, n_rows + 1), indices (int32, ascending per row), data (the
 * non-zeros, row scales folded in, float64 or float32). */
static strux_status write_csr_weights(hid_t loc, const char *path, const strux_model *m,
                                      strux_precision precision)
{
    int32_t n_rows = strux_model_n_rows(m);
    int64_t *ptr = NULL, nnz = 0;
    int32_t *idx = NULL;
    double *val = NULL;
    STRUX_TRY(strux_alloc_array(&ptr, (size_t)n_rows + 1, sizeof *ptr));
    for (int32_t k = 0; k < n_rows; k++)
        ptr[k + 1] = nnz += strux_model_row_nnz(m, k);
    strux_status st = strux_alloc_array(&idx, (size_t)nnz + 1, sizeof *idx);
    if (st == STRUX_OK) st = strux_alloc_array(&val, (size_t)nnz + 1, sizeof *val);
    for (int32_t k = 0; st == STRUX_OK && k < n_rows; k++)
        strux_model_row_nonzeros(m, k, idx + ptr[k], val + ptr[k]);
    if (st == STRUX_OK && precision == STRUX_PRECISION_FLOAT) { /* in place: floats fit */
        float *f = (float *)val;
        for (int64_t q = 0; q < nnz; q++)
            f[q] = (float)val[q];
    }
    hid_t g = st == STRUX_OK ? H5Gcreate2(loc, "weights_csr", H5P_DEFAULT, H5P_DEFAULT,
                                          H5P_DEFAULT)
                             : -1;
    if (st == STRUX_OK && g < 0)
        st = strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                             "%s: cannot create group 'weights_csr'", path);
    hsize_t n_ptr = (hsize_t)n_rows + 1, n_nz = (hsize_t)nnz;
    if (st == STRUX_OK) st = h5_write(g, "indptr", H5T_NATIVE_INT64, 1, &n_ptr, ptr, path);
    if (st == STRUX_OK) st = h5_write(g, "indices", H5T_NATIVE_INT32, 1, &n_nz, idx, path);
    if (st == STRUX_OK)
        st = h5_write(g, "data",
                      precision == STRUX_PRECISION_FLOAT ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, 1,
                      &n_nz, val, path);
    if (g >= 0) H5Gclose(g);
    strux_free(&ptr);
    strux_free(&idx);
    strux_free(&val);
    return st;
}

/* /weights_csr into m, each array checked against the shape and the others first: the row
 * pointers (n_rows + 1 of them, from 0, never decreasing, ending at the number of indices and
 * values), then per row ascending columns in [0, dim) and finite values. */
static strux_status read_csr_weights(hid_t loc, const char *path, strux_model *m)
{
    int64_t n_rows = strux_model_n_rows(m), dim = strux_model_dim(m), len, nnz, n_data;
    STRUX_TRY(h5_shape(loc, "weights_csr/indptr", 1, &len, path));
    STRUX_CHECK(len == n_rows + 1, STRUX_ERR_INPUT,
                "%s: dataset 'weights_csr/indptr' has %lld entries; n_rows + 1 = %lld", path,
                (long long)len, (long long)(n_rows + 1));
    STRUX_TRY(h5_shape(loc, "weights_csr/indices", 1, &nnz, path));
    STRUX_TRY(h5_shape(loc, "weights_csr/data", 1, &n_data, path));
    STRUX_CHECK(n_data == nnz, STRUX_ERR_INPUT,
                "%s: dataset 'weights_csr/data' has %lld entries but 'weights_csr/indices' %lld",
                path, (long long)n_data, (long long)nnz);
    int64_t *ptr = NULL;
    int32_t *idx = NULL;
    double *val = NULL;
    strux_status st = strux_alloc_array(&ptr, (size_t)len, sizeof *ptr);
    if (st == STRUX_OK)
        st = h5_read(loc, "weights_csr/indptr", H5T_NATIVE_INT64, 0, -1, ptr, path);
    for (int64_t r = 0; st == STRUX_OK && r < n_rows; r++)
        if (ptr[r + 1] < ptr[r] || ptr[0] != 0)
            st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                 "%s: dataset 'weights_csr/indptr' is not a row pointer array: "
                                 "indptr[0] = %lld, indptr[%lld] = %lld, indptr[%lld] = %lld",
                                 path, (long long)ptr[0], (long long)r, (long long)ptr[r],
                                 (long long)(r + 1), (long long)ptr[r + 1]);
    if (st == STRUX_OK && ptr[n_rows] != nnz)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: dataset 'weights_csr/indptr' ends at %lld but "
                             "'weights_csr/indices' and 'weights_csr/data' hold %lld entries",
                             path, (long long)ptr[n_rows], (long long)nnz);
    if (st == STRUX_OK) st = strux_alloc_array(&idx, (size_t)nnz + 1, sizeof *idx);
    if (st == STRUX_OK) st = strux_alloc_array(&val, (size_t)nnz + 1, sizeof *val);
    if (st == STRUX_OK)
        st = h5_read(loc, "weights_csr/indices", H5T_NATIVE_INT32, 0, -1, idx, path);
    if (st == STRUX_OK)
        st = h5_read(loc, "weights_csr/data", H5T_NATIVE_DOUBLE, 0, -1, val, path);
    for (int64_t r = 0; st == STRUX_OK && r < n_rows; r++) {
        for (int64_t p = ptr[r]; st == STRUX_OK && p < ptr[r + 1]; p++) {
            if (idx[p] < 0 || idx[p] >= dim)
                st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                     "%s: dataset 'weights_csr/indices' entry %lld (row %lld) "
                                     "is %d, outside [0, dim = %lld)",
                                     path, (long long)p, (long long)r, idx[p], (long long)dim);
            else if (p > ptr[r] && idx[p] <= idx[p - 1])
                st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                     "%s: dataset 'weights_csr/indices' entry %lld (row %lld) "
                                     "is %d after %d: a row's columns must ascend",
                                     path, (long long)p, (long long)r, idx[p], idx[p - 1]);
            else if (!isfinite(val[p]))
                st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                     "%s: dataset 'weights_csr/data' holds a non-finite value "
                                     "(%g) at entry %lld (row %lld, column %d)",
                                     path, val[p], (long long)p, (long long)r, idx[p]);
        }
        if (st == STRUX_OK)
            strux_model_set_row_sparse(m, (int32_t)r, (int32_t)(ptr[r + 1] - ptr[r]),
                                       idx + ptr[r], val + ptr[r]);
    }
    strux_free(&ptr);
    strux_free(&idx);
    strux_free(&val);
    return st;
}

strux_status h5_model_read_weights(hid_t loc, const char *path, strux_model *m)
{
    if (h5_has(loc, "weights_csr")) {
        int64_t n_extra = strux_model_n_extra(m), n_stored_extra = 0;
        if (n_extra > 0 || h5_has(loc, "extra"))
            STRUX_TRY(h5_shape(loc, "extra", 1, &n_stored_extra, path));
        STRUX_CHECK(n_stored_extra == n_extra, STRUX_ERR_INPUT,
                    "%s: dataset 'extra' has %lld entries; this model has %lld", path,
                    (long long)n_stored_extra, (long long)n_extra);
        STRUX_TRY(read_csr_weights(loc, path, m));
        if (n_extra > 0)
            STRUX_TRY(h5_read(loc, "extra", H5T_NATIVE_DOUBLE, 0, -1, strux_model_extra(m), path));
        int64_t bad = strux_model_find_non_finite(m);
        STRUX_CHECK(bad < 0, STRUX_ERR_INPUT,
                    "%s: dataset 'extra' holds a non-finite value at entry %lld", path,
                    (long long)(bad - (int64_t)strux_model_n_rows(m) * strux_model_dim(m)));
        return STRUX_OK;
    }
    int64_t n_rows = strux_model_n_rows(m), dim = strux_model_dim(m),
            n_extra = strux_model_n_extra(m), wd[2], n_stored_extra = 0;
    STRUX_TRY(h5_shape(loc, "weights", 2, wd, path));
    STRUX_CHECK(wd[0] == n_rows && wd[1] == dim, STRUX_ERR_INPUT,
                "%s: dataset 'weights' is %lld x %lld; this model has %lld x %lld", path,
                (long long)wd[0], (long long)wd[1], (long long)n_rows, (long long)dim);
    if (n_extra > 0 || h5_has(loc, "extra"))
        STRUX_TRY(h5_shape(loc, "extra", 1, &n_stored_extra, path));
    STRUX_CHECK(n_stored_extra == n_extra, STRUX_ERR_INPUT,
                "%s: dataset 'extra' has %lld entries; this model has %lld", path,
                (long long)n_stored_extra, (long long)n_extra);
    strux_model *plain = m;
    if (strux_model_kind_of(m).layout != STRUX_LAYOUT_LABEL_MAJOR ||
        strux_model_kind_of(m).precision != STRUX_PRECISION_DOUBLE)
        STRUX_TRY(strux_model_create((int32_t)n_rows, (int32_t)dim, n_extra, STRUX_MODEL_PLAIN,
                                     &plain));
    strux_model_buffer b = strux_model_storage(plain); /* the file's row-major doubles */
    strux_status st = h5_read(loc, "weights", H5T_NATIVE_DOUBLE, 0, -1, b.v, path);
    if (st == STRUX_OK && n_extra > 0)
        st = h5_read(loc, "extra", H5T_NATIVE_DOUBLE, 0, -1, b.extra, path);
    strux_model_refresh(plain);
    int64_t bad = st == STRUX_OK ? strux_model_find_non_finite(plain) : -1;
    if (bad >= 0 && bad < n_rows * dim)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: dataset 'weights' holds a non-finite value (%g) at row %lld, "
                             "column %lld", path, ((const double *)b.v)[bad],
                             (long long)(bad / dim), (long long)(bad % dim));
    else if (bad >= 0)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: dataset 'extra' holds a non-finite value (%g) at entry %lld",
                             path, b.extra[bad - n_rows * dim], (long long)(bad - n_rows * dim));
    if (st == STRUX_OK && plain != m) st = strux_model_copy(m, plain);
    if (plain != m) strux_model_destroy(&plain);
    return st;
}

strux_status h5_model_write(hid_t f, const char *path, const strux_model *m,
                            const strux_model_info *info)
{
    STRUX_TRY(h5_attr_str(f, "format", MODEL_FORMAT, path));
    STRUX_TRY(h5_attr_i64(f, "format_version", MODEL_FORMAT_VERSION, path));
    STRUX_TRY(h5_attr_str(f, "task", info->task, path));
    STRUX_TRY(h5_attr_str(f, "surrogate", info->surrogate, path));
    STRUX_TRY(h5_attr_str(f, "search", info->search, path));
    STRUX_TRY(h5_attr_str(f, "solver", info->solver, path));
    STRUX_TRY(h5_attr_i64(f, "n_rows", strux_model_n_rows(m), path));
    STRUX_TRY(h5_attr_i64(f, "dim", strux_model_dim(m), path));
    STRUX_TRY(h5_attr_i64(f, "n_extra", strux_model_n_extra(m), path));
    STRUX_TRY(h5_attr_i64(f, "n_labels", info->n_labels, path));
    STRUX_TRY(h5_attr_str(f, "strux_version", info->version, path));
    STRUX_TRY(h5_attr_str(f, "git_commit", info->git_commit, path));
    STRUX_TRY(h5_attr_str(f, "created", info->created, path));
    STRUX_TRY(h5_attr_i64(f, "n_ranks", info->n_ranks, path));
    STRUX_TRY(h5_attr_i64(f, "seed", info->seed, path));
    STRUX_TRY(h5_attr_f64(f, "wall_time_s", info->wall_time_s, path));

    if (info->weights_csr) {
        STRUX_TRY(write_csr_weights(f, path, m, info->precision));
        hsize_t n_extra = (hsize_t)strux_model_n_extra(m);
        STRUX_TRY(h5_write(f, "extra", H5T_NATIVE_DOUBLE, 1, &n_extra, strux_model_extra(m), path));
    } else {
        STRUX_TRY(h5_model_write_weights(f, path, m, info->precision));
    }
    STRUX_TRY(h5_write_str(f, "config", info->config ? info->config : "", path));
    if (info->label_names)
        STRUX_TRY(h5_write_str_array(f, "label_names", info->label_names, info->n_labels, path));
    STRUX_TRY(h5_trees_write(f, path, &info->trees));
    STRUX_TRY(h5_hier_write(f, path, &info->hier));
    STRUX_TRY(h5_m3l_write(f, path, &info->m3l));
    STRUX_TRY(h5_rates_write(f, path, &info->rates));

    /* creation order is tracked so a reader gets the columns in the order they were written */
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    hid_t g = H5Gcreate2(f, "training", H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    STRUX_CHECK(g >= 0, STRUX_ERR_IO, "%s: cannot create group 'training'", path);
    const strux_curve *c = &info->curve;
    double *col = NULL;
    strux_status st = strux_alloc_array(&col, (size_t)(c->n_rows ? c->n_rows : 1), sizeof *col);
    for (int k = 0; st == STRUX_OK && k < c->n_cols; k++) {
        for (int64_t r = 0; r < c->n_rows; r++)
            col[r] = c->v[r * c->n_cols + k];
        hsize_t n = (hsize_t)c->n_rows;
        st = h5_write(g, c->names[k], H5T_NATIVE_DOUBLE, 1, &n, col, path);
    }
    strux_free(&col);
    H5Gclose(g);
    return st;
}

typedef struct model_and_info {
    const strux_model *m;
    const strux_model_info *info;
} model_and_info;

static strux_status write_model(hid_t f, const char *path, const void *ctx)
{
    const model_and_info *mi = ctx;
    return h5_model_write(f, path, mi->m, mi->info);
}

strux_status strux_io_model_save(const char *path, const strux_model *m,
                                 const strux_model_info *info)
{
    model_and_info mi = {m, info};
    return h5_create_atomic(path, write_model, &mi);
}

static strux_status read_curve(hid_t f, const char *path, strux_curve *c)
{
    hid_t g = H5Gopen2(f, "training", H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_INPUT, "%s: no 'training' group", path);
    /* the column names in creation order (strux_curve_init copies them) */
    char name_of[STRUX_CURVE_MAX_COLS][STRUX_CURVE_NAME];
    const char *names[STRUX_CURVE_MAX_COLS + 1] = {0};
    int n_names = 0;
    strux_status st = h5_link_names(g, STRUX_CURVE_MAX_COLS, STRUX_CURVE_NAME, &name_of[0][0],
                                    &n_names, path, "training");
    for (int k = 0; k < n_names; k++)
        names[k] = name_of[k];
    if (st == STRUX_OK) st = strux_curve_init(c, names);
    double *col = NULL;
    for (int k = 0; st == STRUX_OK && k < c->n_cols; k++) {
        int64_t len;
        char name[96];
        snprintf(name, sizeof name, "training/%s", c->names[k]);
        st = h5_shape(f, name, 1, &len, path);
        if (st != STRUX_OK) break;
        if (k == 0) {
            c->n_rows = c->cap = len;
            st = strux_alloc_array(&c->v, (size_t)c->n_rows + 1, (size_t)c->n_cols * sizeof *c->v);
            if (st == STRUX_OK) st = strux_alloc_array(&col, (size_t)c->n_rows + 1, sizeof *col);
        }
        if (st == STRUX_OK && len != c->n_rows)
            st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                 "%s: training curve column 'training/%s' has %lld entries but "
                                 "'training/%s' has %lld",
                                 path, c->names[k], (long long)len, c->names[0],
                                 (long long)c->n_rows);
        if (st == STRUX_OK) st = h5_read(g, c->names[k], H5T_NATIVE_DOUBLE, 0, -1, col, path);
        for (int64_t r = 0; st == STRUX_OK && r < c->n_rows; r++)
            c->v[r * c->n_cols + k] = col[r];
    }
    strux_free(&col);
    H5Gclose(g);
    return st;
}

/* An integer attribute that is narrowed to a smaller type must lie in [lo, hi]. */
static strux_status check_attr_range(const char *path, const char *name, int64_t v, int64_t lo,
                                     int64_t hi)
{
    STRUX_CHECK(v >= lo && v <= hi, STRUX_ERR_INPUT,
                "%s: attribute %s = %lld is outside [%lld, %lld]", path, name, (long long)v,
                (long long)lo, (long long)hi);
    return STRUX_OK;
}


/* The root attributes that make the file a strux model of the version this strux reads. */
static strux_status check_format(hid_t f, const char *path)
{
    char fmt[64];
    int64_t version;
    STRUX_TRY(h5_read_attr_str(f, "format", fmt, sizeof fmt, path));
    STRUX_CHECK(strcmp(fmt, MODEL_FORMAT) == 0, STRUX_ERR_INPUT,
                "%s: not a strux model (format '%s')", path, fmt);
    STRUX_TRY(h5_read_attr_i64(f, "format_version", &version, path));
    STRUX_CHECK(version == MODEL_FORMAT_VERSION, STRUX_ERR_INPUT,
                "%s: model format version %lld; this strux reads version %d", path,
                (long long)version, MODEL_FORMAT_VERSION);
    return STRUX_OK;
}

static strux_status read_body(hid_t f, const char *path, strux_model **m, strux_model_info *info)
{
    int64_t n_rows, dim, n_extra, n_labels, n_ranks;
    STRUX_TRY(check_format(f, path));
    STRUX_TRY(h5_read_attr_str(f, "task", info->task, sizeof info->task, path));
    STRUX_TRY(h5_read_attr_str(f, "surrogate", info->surrogate, sizeof info->surrogate, path));
    STRUX_TRY(h5_read_attr_str(f, "search", info->search, sizeof info->search, path));
    STRUX_TRY(h5_read_attr_str(f, "solver", info->solver, sizeof info->solver, path));
    STRUX_TRY(h5_read_attr_str(f, "strux_version", info->version, sizeof info->version, path));
    STRUX_TRY(h5_read_attr_str(f, "git_commit", info->git_commit, sizeof info->git_commit, path));
    STRUX_TRY(h5_read_attr_str(f, "created", info->created, sizeof info->created, path));
    STRUX_TRY(h5_read_attr_i64(f, "n_rows", &n_rows, path));
    STRUX_TRY(h5_read_attr_i64(f, "dim", &dim, path));
    STRUX_TRY(h5_read_attr_i64(f, "n_extra", &n_extra, path));
    STRUX_TRY(h5_read_attr_i64(f, "n_labels", &n_labels, path));
    STRUX_TRY(h5_read_attr_i64(f, "n_ranks", &n_ranks, path));
    STRUX_TRY(h5_read_attr_i64(f, "seed", &info->seed, path));
    STRUX_TRY(h5_read_attr_f64(f, "wall_time_s", &info->wall_time_s, path));
    /* every attribute against the type it is narrowed to, then against the arrays it describes,
     * before anything is allocated from it (issue 18: a disagreeing n_rows overflowed the heap) */
    STRUX_TRY(check_attr_range(path, "n_rows", n_rows, 0, INT32_MAX));
    STRUX_TRY(check_attr_range(path, "dim", dim, 0, INT32_MAX));
    STRUX_TRY(check_attr_range(path, "n_extra", n_extra, 0, INT64_MAX / 2));
    STRUX_TRY(check_attr_range(path, "n_labels", n_labels, 0, INT32_MAX));
    STRUX_TRY(check_attr_range(path, "n_ranks", n_ranks, 0, INT32_MAX));
    int64_t wd[2], n_stored_extra = 0;
    info->weights_csr = h5_has(f, "weights_csr") && !h5_has(f, "weights");
    if (info->weights_csr) { /* the rows and columns checked entry by entry as they are read */
        wd[0] = n_rows;
        wd[1] = dim;
    } else {
        STRUX_TRY(h5_shape(f, "weights", 2, wd, path)); /* attributes first: they size the model */
    }
    STRUX_CHECK(wd[0] == n_rows, STRUX_ERR_INPUT,
                "%s: attribute n_rows = %lld but dataset 'weights' has %lld rows", path,
                (long long)n_rows, (long long)wd[0]);
    STRUX_CHECK(wd[1] == dim, STRUX_ERR_INPUT,
                "%s: attribute dim = %lld but dataset 'weights' has %lld columns", path,
                (long long)dim, (long long)wd[1]);
    if (n_extra > 0 || h5_has(f, "extra"))
        STRUX_TRY(h5_shape(f, "extra", 1, &n_stored_extra, path));
    STRUX_CHECK(n_stored_extra == n_extra, STRUX_ERR_INPUT,
                "%s: attribute n_extra = %lld but dataset 'extra' has %lld entries", path,
                (long long)n_extra, (long long)n_stored_extra);
    info->n_labels = (int32_t)n_labels;
    info->n_ranks = (int32_t)n_ranks;
    strux_model_kind kind = STRUX_MODEL_PLAIN;
    if (info->weights_csr) kind.layout = STRUX_LAYOUT_SPARSE; /* memory as on disk */
    STRUX_TRY(strux_model_create((int32_t)n_rows, (int32_t)dim, n_extra, kind, m));
    STRUX_TRY(h5_stored_precision(f, info->weights_csr ? "weights_csr/data" : "weights",
                                  &info->precision, path));
    STRUX_TRY(h5_model_read_weights(f, path, *m));
    STRUX_TRY(h5_read_str(f, "config", &info->config, path));
    if (h5_has(f, "label_names"))
        STRUX_TRY(h5_read_str_array(f, "label_names", &info->label_names, n_labels, path));
    STRUX_TRY(h5_trees_read(f, path, &info->trees));
    STRUX_TRY(h5_hier_read(f, path, &info->hier));
    STRUX_TRY(h5_m3l_read(f, path, &info->m3l));
    STRUX_TRY(h5_rates_read(f, path, &info->rates));
    STRUX_CHECK(info->rates.m == 0 || info->rates.n_w == n_rows * dim, STRUX_ERR_INPUT,
                "%s: /rates/mix_weights has %lld weights per iterate, /weights %lld", path,
                (long long)info->rates.n_w, (long long)(n_rows * dim));
    return read_curve(f, path, &info->curve);
}

static strux_status model_load(const char *path, strux_model **m, strux_model_info *info)
{
    *m = NULL;
    *info = (strux_model_info){0};
    h5_quiet();
    STRUX_CHECK(strux_io_is_hdf5(path), STRUX_ERR_INPUT,
                "%s: not an HDF5 file (or unreadable); expected a strux model", path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    STRUX_CHECK(f >= 0, STRUX_ERR_INPUT, "%s: cannot open as HDF5", path);
    strux_status st = read_body(f, path, m, info);
    H5Fclose(f);
    if (st != STRUX_OK) {
        strux_model_destroy(m);
        strux_model_info_free(info);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    return STRUX_OK;
}

/* The whole of what a reader of the file takes from it: the model, and a checkpoint's state. */
static strux_status read_everything(const char *path, void *ctx)
{
    (void)ctx;
    strux_model *m = NULL, *w = NULL;
    strux_model_info info;
    strux_status st = model_load(path, &m, &info);
    int has_checkpoint = 0;
    if (st == STRUX_OK) {
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        has_checkpoint = f >= 0 && h5_has(f, "checkpoint");
        if (f >= 0) H5Fclose(f);
    }
    if (st == STRUX_OK && has_checkpoint) {
        strux_checkpoint_info ck = {0};
        strux_blob state = {0};
        st = strux_model_create_like(m, &w); /* a checkpoint's training-space weights */
        int64_t *offsets = NULL;
        if (st == STRUX_OK) st = strux_io_checkpoint_read(path, &ck, w, &state);
        if (st == STRUX_OK)
            st = strux_alloc_array(&offsets, (size_t)ck.n_examples + 1, sizeof *offsets);
        if (st == STRUX_OK)
            st = strux_io_checkpoint_read_examples(path, 0, ck.n_examples, offsets, &state);
        strux_free(&offsets);
        strux_blob_free(&state);
        strux_model_destroy(&w);
    }
    if (st == STRUX_OK) strux_model_info_free(&info);
    strux_model_destroy(&m);
    return st;
}

strux_status strux_io_model_load(const char *path, strux_model **m, strux_model_info *info)
{
    *m = NULL;
    *info = (strux_model_info){0};
    STRUX_TRY(h5_vet_legacy(path, read_everything, NULL, "model"));
    return model_load(path, m, info);
}

strux_status strux_io_model_config(const char *path, char **config)
{
    *config = NULL;
    STRUX_TRY(h5_vet_legacy(path, read_everything, NULL, "model"));
    h5_quiet();
    STRUX_CHECK(strux_io_is_hdf5(path), STRUX_ERR_INPUT,
                "%s: not an HDF5 file (or unreadable); expected a strux model", path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    STRUX_CHECK(f >= 0, STRUX_ERR_INPUT, "%s: cannot open as HDF5", path);
    strux_status st = check_format(f, path);
    if (st == STRUX_OK) st = h5_read_str(f, "config", config, path);
    H5Fclose(f);
    if (st != STRUX_OK) strux_free(config);
    return st;
}
