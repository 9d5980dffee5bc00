/* io/h5.c - HDF5 helpers (see h5.h): every handle opened here is closed here, every failure is a
 * STRUX_ERR_IO naming the file and the object. */
#include "h5.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H5FAIL(file, what, name)                                                                   \
    strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__, "%s: cannot %s '%s'", file, what,  \
                    name)

void h5_quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* The file is built in memory (HDF5's core driver without a backing store) and written by
 * strux_io_write_atomic: HDF5 never writes to the disk itself. A full disk is then one failed
 * write(2) that strux reports and cleans up, instead of a failed H5Fclose that leaves a file half
 * closed inside HDF5's tables (its exit handler then crashed, issue 18). The cost is one copy of
 * the file image in memory on the writing rank while the file is written: the core driver's own
 * buffer, which file-image callbacks hand over at close instead of a second copy (a model of
 * 160 MB peaked at three copies before, bench/weights.sh). */
#define H5_CORE_INCREMENT ((size_t)1 << 20) /* core driver growth step: 1 MiB */

/* The core driver's buffer of the file being built (one file at a time per process). */
static struct core_image {
    void *buf;
    int keep; /* 1 once the file is finished: the buffer outlives H5Fclose */
} core;

static void *image_malloc(size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)op, (void)udata;
    return core.buf = malloc(size);
}

static void *image_memcpy(void *dst, const void *src, size_t size, H5FD_file_image_op_t op,
                          void *udata)
{
    (void)op, (void)udata;
    return memcpy(dst, src, size);
}

static void *image_realloc(void *ptr, size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)op, (void)udata;
    void *p = realloc(ptr, size);
    if (p) core.buf = p;
    return p;
}

static herr_t image_free(void *ptr, H5FD_file_image_op_t op, void *udata)
{
    (void)udata;
    if (ptr == core.buf && op == H5FD_FILE_IMAGE_OP_FILE_CLOSE && core.keep) return 0;
    if (ptr == core.buf) core.buf = NULL;
    free(ptr);
    return 0;
}

static void *udata_copy(void *udata)
{
    return udata;
}

static herr_t udata_free(void *udata)
{
    (void)udata;
    return 0;
}

strux_status h5_create_temp(const char *path, char *tmp, size_t n, hid_t *f)
{
    strux_io_temp_name(path, tmp, n);
    STRUX_TRY(strux_io_make_parent(path));
    h5_quiet();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    STRUX_CHECK(fapl >= 0, STRUX_ERR_IO, "%s: cannot create a file access list", path);
    H5FD_file_image_callbacks_t cb = {image_malloc, image_memcpy, image_realloc, image_free,
                                      udata_copy,   udata_free,   &core};
    core = (struct core_image){0};
    *f = H5Pset_fapl_core(fapl, H5_CORE_INCREMENT, 0) < 0 ||
                 H5Pset_file_image_callbacks(fapl, &cb) < 0
             ? -1
             : H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    STRUX_CHECK(*f >= 0, STRUX_ERR_IO, "%s: cannot create the HDF5 file in memory", path);
    return STRUX_OK;
}

strux_status h5_finish_temp(hid_t f, const char *tmp, const char *path, strux_status st)
{
    (void)tmp; /* nothing of the file is on disk before strux_io_write_atomic */
    ssize_t size = -1;
    if (st == STRUX_OK &&
        (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 || (size = H5Fget_file_image(f, NULL, 0)) < 0))
        st = strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                             "%s: cannot finish the HDF5 file", path);
    core.keep = st == STRUX_OK;
    if (H5Fclose(f) < 0 && st == STRUX_OK)
        st = strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__, "%s: close failed", path);
    if (st == STRUX_OK && !core.buf)
        st = strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                             "%s: the HDF5 file image was released at close", path);
    if (st == STRUX_OK) st = strux_io_write_atomic(path, core.buf, (size_t)size);
    if (core.keep) free(core.buf);
    core = (struct core_image){0};
    return st == STRUX_OK ? st : strux_error_frame(st, __FILE__, __LINE__, __func__);
}

strux_status h5_create_atomic(const char *path, h5_body_fn body, const void *ctx)
{
    char tmp[4200];
    hid_t f;
    STRUX_TRY(h5_create_temp(path, tmp, sizeof tmp, &f));
    return h5_finish_temp(f, tmp, path, body(f, path, ctx));
}

static hid_t vlen_str_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

static strux_status attr_write(hid_t loc, const char *name, hid_t type, const void *v,
                               const char *file)
{
    if (H5Aexists(loc, name) > 0) H5Adelete(loc, name);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, type, v);
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    return rc < 0 ? H5FAIL(file, "write attribute", name) : STRUX_OK;
}

strux_status h5_attr_str(hid_t loc, const char *name, const char *value, const char *file)
{
    hid_t t = vlen_str_type();
    strux_status st = attr_write(loc, name, t, &value, file);
    H5Tclose(t);
    return st;
}

strux_status h5_attr_i64(hid_t loc, const char *name, int64_t value, const char *file)
{
    return attr_write(loc, name, H5T_NATIVE_INT64, &value, file);
}

strux_status h5_attr_f64(hid_t loc, const char *name, double value, const char *file)
{
    return attr_write(loc, name, H5T_NATIVE_DOUBLE, &value, file);
}

int h5_has(hid_t loc, const char *name)
{
    return H5Lexists(loc, name, H5P_DEFAULT) > 0 || H5Aexists(loc, name) > 0;
}

/* Number of elements of an attribute (is_attr) or a dataset, or -1. Reads of one value must check
 * it is 1: HDF5 writes every element into the caller's buffer, so an array where a scalar belongs
 * would overflow it. */
static hssize_t n_elements(hid_t obj, int is_attr)
{
    hid_t sp = is_attr ? H5Aget_space(obj) : H5Dget_space(obj);
    if (sp < 0) return -1;
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    return n;
}

#define NOT_SCALAR(file, kind, name, n)                                                            \
    strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,                                 \
                    "%s: %s '%s' holds %lld values where one belongs", file, kind, name,           \
                    (long long)(n))

strux_status h5_read_attr_str(hid_t loc, const char *name, char *buf, size_t n, const char *file)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return H5FAIL(file, "find attribute", name);
    hssize_t n_el = n_elements(a, 1);
    if (n_el != 1) {
        H5Aclose(a);
        return NOT_SCALAR(file, "attribute", name, n_el);
    }
    hid_t ft = H5Aget_type(a);
    strux_status st = STRUX_OK;
    if (H5Tget_class(ft) != H5T_STRING) {
        st = strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                             "%s: attribute '%s' is not a string", file, name);
    } else if (H5Tis_variable_str(ft) > 0) {
        hid_t t = vlen_str_type();
        char *v = NULL;
        if (H5Aread(a, t, &v) < 0 || !v) {
            st = H5FAIL(file, "read attribute", name);
        } else {
            snprintf(buf, n, "%s", v);
            H5free_memory(v);
        }
        H5Tclose(t);
    } else {
        size_t sz = H5Tget_size(ft);
        char *tmp = malloc(sz + 1);
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, sz + 1);
        if (!tmp || H5Aread(a, t, tmp) < 0) {
            st = H5FAIL(file, "read attribute", name);
        } else {
            tmp[sz] = '\0';
            snprintf(buf, n, "%s", tmp);
        }
        free(tmp);
        H5Tclose(t);
    }
    H5Tclose(ft);
    H5Aclose(a);
    return st;
}

static strux_status attr_read(hid_t loc, const char *name, hid_t type, void *v, const char *file)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return H5FAIL(file, "find attribute", name);
    hssize_t n_el = n_elements(a, 1);
    if (n_el != 1) {
        H5Aclose(a);
        return NOT_SCALAR(file, "attribute", name, n_el);
    }
    herr_t rc = H5Aread(a, type, v);
    H5Aclose(a);
    return rc < 0 ? H5FAIL(file, "read attribute", name) : STRUX_OK;
}

strux_status h5_read_attr_i64(hid_t loc, const char *name, int64_t *value, const char *file)
{
    return attr_read(loc, name, H5T_NATIVE_INT64, value, file);
}

strux_status h5_read_attr_f64(hid_t loc, const char *name, double *value, const char *file)
{
    return attr_read(loc, name, H5T_NATIVE_DOUBLE, value, file);
}

/* Dataset creation properties: chunked + deflate for large arrays, chunks of at most ~1 MiB. */
static hid_t create_props(int rank, const hsize_t *dims)
{
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t n = 1, chunk[2];
    for (int k = 0; k < rank; k++)
        n *= dims[k];
    if (n >= 4096) {
        chunk[0] = dims[0];
        if (rank == 2) chunk[1] = dims[1];
        hsize_t per = rank == 2 ? dims[1] : 1;
        hsize_t max_rows = (1u << 17) / (per ? per : 1);
        if (max_rows < 1) max_rows = 1;
        if (chunk[0] > max_rows) chunk[0] = max_rows;
        if (rank == 2 && chunk[1] > (1u << 17)) chunk[1] = 1u << 17;
        H5Pset_chunk(pl, rank, chunk);
        H5Pset_deflate(pl, 4);
    }
    return pl;
}

strux_status h5_write_rows(hid_t loc, const char *name, hid_t type, int64_t n_rows, int64_t dim,
                           h5_rows_fn fill, const void *ctx, const char *file)
{
    hsize_t dims[2] = {(hsize_t)n_rows, (hsize_t)dim};
    hsize_t block = dim > 0 && dim < (1 << 17) ? (hsize_t)((1 << 17) / dim) : 1;
    double *buf = NULL;
    STRUX_TRY(strux_alloc_array(&buf, (size_t)(block * (hsize_t)(dim ? dim : 1)), sizeof *buf));
    hid_t sp = H5Screate_simple(2, dims, NULL), pl = create_props(2, dims);
    hid_t d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : 0;
    for (hsize_t r0 = 0; rc >= 0 && dim > 0 && r0 < dims[0]; r0 += block) {
        hsize_t off[2] = {r0, 0}, cnt[2] = {dims[0] - r0 < block ? dims[0] - r0 : block, dims[1]};
        fill(ctx, (int64_t)r0, (int64_t)cnt[0], buf);
        hid_t ms = H5Screate_simple(2, cnt, NULL);
        rc = H5Sselect_hyperslab(sp, H5S_SELECT_SET, off, NULL, cnt, NULL);
        if (rc >= 0) rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, sp, H5P_DEFAULT, buf);
        H5Sclose(ms);
    }
    if (d >= 0) H5Dclose(d);
    H5Pclose(pl);
    H5Sclose(sp);
    strux_free(&buf);
    return rc < 0 ? H5FAIL(file, "write dataset", name) : STRUX_OK;
}

strux_status h5_write(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims,
                      const void *data, const char *file)
{
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t pl = create_props(rank, dims);
    hsize_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= dims[k];
    hid_t d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : (n ? H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : 0);
    if (d >= 0) H5Dclose(d);
    H5Pclose(pl);
    H5Sclose(sp);
    return rc < 0 ? H5FAIL(file, "write dataset", name) : STRUX_OK;
}

strux_status h5_write_bytes(hid_t loc, const char *name, const void *data, size_t n,
                            const char *file)
{
    hsize_t dims = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dims, NULL);
    hid_t d = H5Dcreate2(loc, name, H5T_NATIVE_UINT8, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc =
        d < 0 ? -1 : (n ? H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : 0);
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    return rc < 0 ? H5FAIL(file, "write dataset", name) : STRUX_OK;
}

strux_status h5_dims(hid_t loc, const char *name, int *rank, hsize_t *dims, const char *file)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) return H5FAIL(file, "find dataset", name);
    hid_t sp = H5Dget_space(d);
    int r = H5Sget_simple_extent_ndims(sp);
    strux_status st = STRUX_OK;
    if (r < 0)
        st = H5FAIL(file, "read the shape of dataset", name);
    else if (r > 2)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: dataset '%s' has %d dimensions (expected 1 or 2)", file, name, r);
    else {
        H5Sget_simple_extent_dims(sp, dims, NULL);
        *rank = r;
    }
    H5Sclose(sp);
    H5Dclose(d);
    return st;
}

strux_status h5_shape(hid_t loc, const char *name, int rank, int64_t *dims, const char *file)
{
    int r = 0;
    hsize_t d[2] = {0, 0};
    STRUX_TRY(h5_dims(loc, name, &r, d, file));
    STRUX_CHECK(r == rank, STRUX_ERR_INPUT, "%s: dataset '%s' has %d dimensions, expected %d", file,
                name, r, rank);
    for (int k = 0; k < rank; k++) {
        STRUX_CHECK(d[k] <= (hsize_t)INT64_MAX, STRUX_ERR_INPUT,
                    "%s: dataset '%s' has %llu entries along dimension %d, more than a 64-bit "
                    "count holds",
                    file, name, (unsigned long long)d[k], k + 1);
        dims[k] = (int64_t)d[k];
    }
    return STRUX_OK;
}

strux_status h5_read(hid_t loc, const char *name, hid_t type, int64_t offset, int64_t count,
                     void *out, const char *file)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) return H5FAIL(file, "find dataset", name);
    herr_t rc;
    if (count < 0) {
        rc = H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out);
    } else if (count == 0) {
        rc = 0;
    } else {
        hid_t fs = H5Dget_space(d);
        hsize_t off = (hsize_t)offset, cnt = (hsize_t)count;
        rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &cnt, NULL);
        hid_t ms = H5Screate_simple(1, &cnt, NULL);
        if (rc >= 0) rc = H5Dread(d, type, ms, fs, H5P_DEFAULT, out);
        H5Sclose(ms);
        H5Sclose(fs);
    }
    H5Dclose(d);
    return rc < 0 ? H5FAIL(file, "read dataset", name) : STRUX_OK;
}

strux_status h5_write_str(hid_t loc, const char *name, const char *value, const char *file)
{
    hid_t t = vlen_str_type();
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value);
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
    return rc < 0 ? H5FAIL(file, "write string", name) : STRUX_OK;
}

strux_status h5_read_str(hid_t loc, const char *name, char **out, const char *file)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) return H5FAIL(file, "find dataset", name);
    hssize_t n_el = n_elements(d, 0);
    if (n_el != 1) {
        H5Dclose(d);
        return NOT_SCALAR(file, "dataset", name, n_el);
    }
    hid_t t = vlen_str_type();
    char *v = NULL;
    herr_t rc = H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v);
    strux_status st = rc < 0 || !v ? H5FAIL(file, "read string", name) : strux_strdup(out, v);
    if (v) H5free_memory(v);
    H5Tclose(t);
    H5Dclose(d);
    return st;
}

strux_status h5_write_str_array(hid_t loc, const char *name, char *const *v, int64_t n,
                                const char *file)
{
    const char **w = NULL;
    STRUX_TRY(strux_alloc_array(&w, (size_t)n, sizeof *w));
    for (int64_t k = 0; k < n; k++)
        w[k] = v[k] ? v[k] : "";
    hid_t t = vlen_str_type();
    hsize_t dims = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dims, NULL);
    hid_t d = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, w);
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
    strux_free(&w);
    return rc < 0 ? H5FAIL(file, "write strings", name) : STRUX_OK;
}

strux_status h5_read_str_array(hid_t loc, const char *name, char ***out, int64_t n,
                               const char *file)
{
    int64_t len;
    STRUX_TRY(h5_shape(loc, name, 1, &len, file));
    STRUX_CHECK(len == n, STRUX_ERR_INPUT,
                "%s: dataset '%s' holds %lld strings but attribute n_labels = %lld", file, name,
                (long long)len, (long long)n);
    char **raw = NULL;
    STRUX_TRY(strux_alloc_array(&raw, (size_t)n, sizeof *raw));
    strux_status st = strux_alloc_array(out, (size_t)n, sizeof **out);
    if (st != STRUX_OK) {
        strux_free(&raw);
        return st;
    }
    hid_t t = vlen_str_type();
    st = h5_read(loc, name, t, 0, -1, raw, file);
    for (int64_t k = 0; k < n; k++) {
        if (st == STRUX_OK && raw[k] && raw[k][0]) st = strux_strdup(&(*out)[k], raw[k]);
        if (raw[k]) H5free_memory(raw[k]);
    }
    H5Tclose(t);
    strux_free(&raw);
    return st;
}

strux_status h5_stored_precision(hid_t loc, const char *name, strux_precision *out,
                                 const char *file)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) return H5FAIL(file, "find dataset", name);
    hid_t t = H5Dget_type(d);
    H5T_class_t cls = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    H5Tclose(t);
    H5Dclose(d);
    STRUX_CHECK(cls == H5T_FLOAT && (size == 4 || size == 8), STRUX_ERR_INPUT,
                "%s: dataset '%s' is not of 32- or 64-bit floating point", file, name);
    *out = size == 4 ? STRUX_PRECISION_FLOAT : STRUX_PRECISION_DOUBLE;
    return STRUX_OK;
}
