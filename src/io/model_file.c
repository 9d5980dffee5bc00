/* io/model_file.c - the HDF5 model file (docs/model-format.md): weights, task / surrogate / search /
 * solver names, label names, the resolved config, provenance and the training curve. Written under
 * a temporary name and renamed into place, so a reader never sees a partial model. */
#include "h5.h"

#include <stdio.h>
#include <string.h>

#define MODEL_FORMAT "strux-model"
#define MODEL_FORMAT_VERSION 1

void strux_model_info_free(strux_model_info *info)
{
    strux_free(&info->config);
    strux_label_names_free(&info->label_names, info->n_labels);
    strux_curve_free(&info->curve);
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
    STRUX_TRY(h5_attr_i64(f, "n_rows", m->n_rows, path));
    STRUX_TRY(h5_attr_i64(f, "dim", m->dim, path));
    STRUX_TRY(h5_attr_i64(f, "n_extra", m->n_extra, path));
    STRUX_TRY(h5_attr_i64(f, "n_labels", info->n_labels, path));
    STRUX_TRY(h5_attr_str(f, "strux_version", info->version, path));
    STRUX_TRY(h5_attr_str(f, "git_commit", info->git_commit, path));
    STRUX_TRY(h5_attr_str(f, "created", info->created, path));
    STRUX_TRY(h5_attr_i64(f, "n_ranks", info->n_ranks, path));
    STRUX_TRY(h5_attr_i64(f, "seed", info->seed, path));
    STRUX_TRY(h5_attr_f64(f, "wall_time_s", info->wall_time_s, path));

    hsize_t dims[2] = {(hsize_t)m->n_rows, (hsize_t)m->dim};
    STRUX_TRY(h5_write(f, "weights", H5T_NATIVE_DOUBLE, 2, dims, m->w, path));
    dims[0] = (hsize_t)m->n_extra;
    STRUX_TRY(h5_write(f, "extra", H5T_NATIVE_DOUBLE, 1, dims, strux_model_extra(m), path));
    STRUX_TRY(h5_write_str(f, "config", info->config ? info->config : "", path));
    if (info->label_names)
        STRUX_TRY(h5_write_str_array(f, "label_names", info->label_names, info->n_labels, path));

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
        for (int64_t r = 0; r < c->n_rows; r++) col[r] = c->v[r * c->n_cols + k];
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

/* Column names of a loaded curve live as long as the process: kept in a small static pool so
 * strux_curve's names stay static strings. */
static const char *intern(const char *name)
{
    static char pool[STRUX_CURVE_MAX_COLS * 4][64];
    static int used;
    for (int k = 0; k < used; k++)
        if (strcmp(pool[k], name) == 0) return pool[k];
    if (used == (int)(sizeof pool / sizeof *pool)) return "unknown";
    snprintf(pool[used], sizeof pool[used], "%s", name);
    return pool[used++];
}

typedef struct curve_visit {
    const char *names[STRUX_CURVE_MAX_COLS + 1];
    int n;
} curve_visit;

static herr_t visit_name(hid_t g, const char *name, const H5L_info_t *li, void *op)
{
    (void)g, (void)li;
    curve_visit *v = op;
    if (v->n < STRUX_CURVE_MAX_COLS) v->names[v->n++] = intern(name);
    return 0;
}

static strux_status read_curve(hid_t f, const char *path, strux_curve *c)
{
    hid_t g = H5Gopen2(f, "training", H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_IO, "%s: no 'training' group", path);
    curve_visit v = {{0}, 0};
    H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL, visit_name, &v);
    if (v.n == 0) H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_name, &v);
    strux_status st = strux_curve_init(c, v.names);
    double *col = NULL;
    for (int k = 0; st == STRUX_OK && k < c->n_cols; k++) {
        int rank;
        hsize_t dims[2];
        st = h5_dims(g, c->names[k], &rank, dims, path);
        if (st != STRUX_OK) break;
        if (k == 0) {
            c->n_rows = c->cap = (int64_t)dims[0];
            st = strux_alloc_array(&c->v, (size_t)(c->n_rows * c->n_cols + 1), sizeof *c->v);
            if (st == STRUX_OK)
                st = strux_alloc_array(&col, (size_t)c->n_rows + 1, sizeof *col);
        }
        if (st == STRUX_OK && (int64_t)dims[0] != c->n_rows)
            st = strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                                 "%s: training curve columns differ in length", path);
        if (st == STRUX_OK) st = h5_read(g, c->names[k], H5T_NATIVE_DOUBLE, 0, -1, col, path);
        for (int64_t r = 0; st == STRUX_OK && r < c->n_rows; r++) c->v[r * c->n_cols + k] = col[r];
    }
    strux_free(&col);
    H5Gclose(g);
    return st;
}

static strux_status read_body(hid_t f, const char *path, strux_model **m, strux_model_info *info)
{
    char fmt[64];
    int64_t version, n_rows, dim, n_extra, n_labels, n_ranks;
    STRUX_TRY(h5_read_attr_str(f, "format", fmt, sizeof fmt, path));
    STRUX_CHECK(strcmp(fmt, MODEL_FORMAT) == 0, STRUX_ERR_INPUT,
                "%s: not a strux model (format '%s')", path, fmt);
    STRUX_TRY(h5_read_attr_i64(f, "format_version", &version, path));
    STRUX_CHECK(version == MODEL_FORMAT_VERSION, STRUX_ERR_INPUT,
                "%s: model format version %lld; this strux reads version %d", path,
                (long long)version, MODEL_FORMAT_VERSION);
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
    info->n_labels = (int32_t)n_labels;
    info->n_ranks = (int32_t)n_ranks;
    STRUX_TRY(strux_model_create((int32_t)n_rows, (int32_t)dim, n_extra, m));
    STRUX_TRY(h5_read(f, "weights", H5T_NATIVE_DOUBLE, 0, -1, (*m)->w, path));
    if (n_extra > 0)
        STRUX_TRY(h5_read(f, "extra", H5T_NATIVE_DOUBLE, 0, -1, strux_model_extra(*m), path));
    STRUX_TRY(h5_read_str(f, "config", &info->config, path));
    if (h5_has(f, "label_names"))
        STRUX_TRY(h5_read_str_array(f, "label_names", &info->label_names, n_labels, path));
    return read_curve(f, path, &info->curve);
}

strux_status strux_io_model_load(const char *path, strux_model **m, strux_model_info *info)
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
