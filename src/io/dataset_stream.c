/* io/dataset_stream.c - the HDF5 CSR container (dataset_file.c's layout: /X/{indptr,indices,data},
 * /Y/{indptr,indices}, attributes format, n_rows, dim, n_labels) written one row at a time, with
 * memory independent of the row count: each of the five arrays is a chunked, deflated,
 * extendible dataset fed from a fixed buffer. HDF5 writes the temporary file itself (a file this
 * size is not built in memory as h5_create_temp does), which is then synced and renamed into
 * place (strux_io_commit); on any failure the temporary is removed. A full disk is reported as
 * "disk full writing PATH (needs about N MB)" with the bytes written so far. Not Collective. */
#include "h5.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define STREAM_CHUNK ((hsize_t)1 << 16) /* elements per chunk and per buffer flush */

typedef struct column {
    const char *name; /* dataset path */
    hid_t type;       /* native type of the elements */
    size_t size;      /* bytes per element */
    hid_t d;          /* the dataset */
    hsize_t n;        /* elements written to the file */
    hsize_t fill;     /* elements in buf */
    void *buf;        /* [STREAM_CHUNK] */
} column;

enum { X_PTR, X_COL, X_VAL, Y_PTR, Y_IDX, N_COLUMNS };

struct strux_dataset_writer {
    char *path;
    char tmp[4200];
    hid_t f;
    int64_t n_rows, rows; /* declared, added */
    int32_t dim, n_labels;
    int64_t nnz_x, nnz_y; /* entries so far (the indptr values) */
    column c[N_COLUMNS];
};

/* The failure of an HDF5 step: a full disk (errno as HDF5's sec2 driver left it) as
 * io_write_failed does, anything else naming the step. */
static strux_status stream_fail(const strux_dataset_writer *w, int e, const char *what)
{
    if (e == ENOSPC || e == EDQUOT) {
        size_t written = 0;
        for (int k = 0; k < N_COLUMNS; k++)
            written += (size_t)(w->c[k].n + w->c[k].fill) * w->c[k].size;
        return io_write_failed(w->path, e, written, what);
    }
    return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__, "%s: cannot %s", w->path,
                           what);
}

static strux_status column_create(strux_dataset_writer *w, column *c)
{
    hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = STREAM_CHUNK;
    hid_t sp = H5Screate_simple(1, &zero, &unlimited);
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    errno = 0;
    c->d = sp < 0 || pl < 0 || H5Pset_chunk(pl, 1, &chunk) < 0 || H5Pset_deflate(pl, 4) < 0
               ? -1
               : H5Dcreate2(w->f, c->name, c->type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    int e = errno;
    if (pl >= 0) H5Pclose(pl);
    if (sp >= 0) H5Sclose(sp);
    if (c->d < 0) return stream_fail(w, e, "create its datasets");
    return strux_alloc_array(&c->buf, (size_t)STREAM_CHUNK, c->size);
}

/* Append the buffer to the dataset. */
static strux_status column_flush(strux_dataset_writer *w, column *c)
{
    if (c->fill == 0) return STRUX_OK;
    hsize_t size = c->n + c->fill;
    errno = 0;
    herr_t rc = H5Dset_extent(c->d, &size);
    hid_t fs = rc < 0 ? -1 : H5Dget_space(c->d);
    hid_t ms = H5Screate_simple(1, &c->fill, NULL);
    if (fs < 0 || ms < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &c->n, NULL, &c->fill, NULL) < 0 ||
        H5Dwrite(c->d, c->type, ms, fs, H5P_DEFAULT, c->buf) < 0)
        rc = -1;
    int e = errno;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (rc < 0) return stream_fail(w, e, "write");
    c->n = size;
    c->fill = 0;
    return STRUX_OK;
}

static strux_status column_put(strux_dataset_writer *w, column *c, const void *v, int64_t n)
{
    const char *p = v;
    while (n > 0) {
        hsize_t room = STREAM_CHUNK - c->fill, take = (hsize_t)n < room ? (hsize_t)n : room;
        memcpy((char *)c->buf + c->fill * c->size, p, take * c->size);
        c->fill += take;
        p += take * c->size;
        n -= (int64_t)take;
        if (c->fill == STREAM_CHUNK) STRUX_TRY(column_flush(w, c));
    }
    return STRUX_OK;
}

static strux_status writer_open(strux_dataset_writer *w)
{
    STRUX_TRY(strux_io_make_parent(w->path));
    strux_io_temp_name(w->path, w->tmp, sizeof w->tmp);
    h5_quiet();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    STRUX_CHECK(fapl >= 0, STRUX_ERR_IO, "%s: cannot create a file access list", w->path);
    /* the 1.8 file format at least (checksummed metadata), as every file strux writes */
    errno = 0;
    w->f = H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0
               ? -1
               : H5Fcreate(w->tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    int e = errno;
    H5Pclose(fapl);
    STRUX_CHECK(w->f >= 0, STRUX_ERR_IO, "%s: cannot create %s%s%s", w->path, w->tmp,
                e ? ": " : "", e ? strerror(e) : "");
    STRUX_TRY(h5_attr_str(w->f, "format", H5_DATA_FORMAT, w->path));
    STRUX_TRY(h5_attr_i64(w->f, "n_rows", w->n_rows, w->path));
    STRUX_TRY(h5_attr_i64(w->f, "dim", w->dim, w->path));
    STRUX_TRY(h5_attr_i64(w->f, "n_labels", w->n_labels, w->path));
    const char *groups[] = {"X", "Y"};
    for (int k = 0; k < 2; k++) {
        hid_t g = H5Gcreate2(w->f, groups[k], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        STRUX_CHECK(g >= 0, STRUX_ERR_IO, "%s: cannot create group '%s'", w->path, groups[k]);
        H5Gclose(g);
    }
    static const struct {
        const char *name;
        int kind; /* 0 int64, 1 int32, 2 float */
    } spec[N_COLUMNS] = {{"X/indptr", 0}, {"X/indices", 1}, {"X/data", 2}, {"Y/indptr", 0},
                         {"Y/indices", 1}};
    for (int k = 0; k < N_COLUMNS; k++) {
        column *c = &w->c[k];
        c->name = spec[k].name;
        c->type = spec[k].kind == 0   ? H5T_NATIVE_INT64
                  : spec[k].kind == 1 ? H5T_NATIVE_INT32
                                      : H5T_NATIVE_FLOAT;
        c->size = spec[k].kind == 0 ? sizeof(int64_t) : sizeof(int32_t);
        STRUX_TRY(column_create(w, c));
    }
    int64_t zero = 0;
    STRUX_TRY(column_put(w, &w->c[X_PTR], &zero, 1));
    return column_put(w, &w->c[Y_PTR], &zero, 1);
}

strux_status strux_io_dataset_writer_open(const char *path, int64_t n_rows, int32_t dim,
                                          int32_t n_labels, strux_dataset_writer **out)
{
    *out = NULL;
    strux_dataset_writer *w = NULL;
    STRUX_TRY(strux_alloc(&w, sizeof *w));
    w->f = -1;
    for (int k = 0; k < N_COLUMNS; k++)
        w->c[k].d = -1;
    w->n_rows = n_rows;
    w->dim = dim;
    w->n_labels = n_labels;
    strux_status st = strux_strdup(&w->path, path);
    if (st == STRUX_OK) st = writer_open(w);
    *out = w;
    if (st != STRUX_OK) return strux_io_dataset_writer_close(out, st);
    return STRUX_OK;
}

strux_status strux_io_dataset_writer_add(strux_dataset_writer *w, int32_t nnz, const int32_t *col,
                                         const float *val, int32_t n_labels, const int32_t *labels)
{
    STRUX_CHECK(w->rows < w->n_rows, STRUX_ERR_INTERNAL, "%s: more than the %lld declared rows",
                w->path, (long long)w->n_rows);
    STRUX_TRY(column_put(w, &w->c[X_COL], col, nnz));
    STRUX_TRY(column_put(w, &w->c[X_VAL], val, nnz));
    STRUX_TRY(column_put(w, &w->c[Y_IDX], labels, n_labels));
    w->nnz_x += nnz;
    w->nnz_y += n_labels;
    STRUX_TRY(column_put(w, &w->c[X_PTR], &w->nnz_x, 1));
    STRUX_TRY(column_put(w, &w->c[Y_PTR], &w->nnz_y, 1));
    w->rows++;
    return STRUX_OK;
}

strux_status strux_io_dataset_writer_close(strux_dataset_writer **wp, strux_status st)
{
    strux_dataset_writer *w = *wp;
    if (!w) return st;
    if (st == STRUX_OK && w->rows != w->n_rows)
        st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                             "%s: %lld rows added of the %lld declared", w->path,
                             (long long)w->rows, (long long)w->n_rows);
    for (int k = 0; k < N_COLUMNS; k++) {
        column *c = &w->c[k];
        if (st == STRUX_OK) st = column_flush(w, c);
        errno = 0;
        if (c->d >= 0 && H5Dclose(c->d) < 0 && st == STRUX_OK) st = stream_fail(w, errno, "write");
        strux_free(&c->buf);
    }
    if (w->f >= 0) {
        errno = 0;
        if (st == STRUX_OK && H5Fflush(w->f, H5F_SCOPE_GLOBAL) < 0) st = stream_fail(w, errno, "write");
        errno = 0;
        if (H5Fclose(w->f) < 0 && st == STRUX_OK) st = stream_fail(w, errno, "close");
        if (st == STRUX_OK)
            st = strux_io_commit(w->tmp, w->path);
        else
            remove(w->tmp);
    }
    strux_free(&w->path);
    strux_free(wp);
    return st == STRUX_OK ? st : strux_error_frame(st, __FILE__, __LINE__, __func__);
}
