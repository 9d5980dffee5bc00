/* io/dataset_file.c - the HDF5 CSR dataset container written by `strux convert`: features as
 * /X/{indptr,indices,data} (int64, int32 0-based, float32) and label sets as /Y/{indptr,indices},
 * with attributes format = "strux-csr", n_rows, dim, n_labels; written whole from a dataset in
 * memory (row by row, for what does not fit in memory: dataset_stream.c). Each rank
 * reads /X/indptr to balance the partition by non-zeros exactly as the text reader does, then
 * only its own rows' slices. */
#include "h5.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <zlib.h>

#define DATA_MAX_DIM 2147483645 /* features, with room for the bias column (data.dim's bound) */

int strux_io_is_hdf5(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8];
    struct stat sb; /* a FIFO or device is not opened here: the text reader refuses it */
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, sig, sizeof sig) == 0;
}

static strux_status write_csr(hid_t f, const char *group, const int64_t *ptr, int64_t n_rows,
                              const int32_t *idx, const float *val, const char *path)
{
    hid_t g = H5Gcreate2(f, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_IO, "%s: cannot create group '%s'", path, group);
    hsize_t n = (hsize_t)n_rows + 1, nnz = (hsize_t)ptr[n_rows];
    strux_status st = h5_write(g, "indptr", H5T_NATIVE_INT64, 1, &n, ptr, path);
    if (st == STRUX_OK) st = h5_write(g, "indices", H5T_NATIVE_INT32, 1, &nnz, idx, path);
    if (st == STRUX_OK && val) st = h5_write(g, "data", H5T_NATIVE_FLOAT, 1, &nnz, val, path);
    H5Gclose(g);
    return st;
}

static strux_status write_dataset(hid_t f, const char *path, const void *ctx)
{
    const strux_dataset *ds = ctx;
    STRUX_TRY(h5_attr_str(f, "format", H5_DATA_FORMAT, path));
    STRUX_TRY(h5_attr_i64(f, "n_rows", ds->n_global, path));
    STRUX_TRY(h5_attr_i64(f, "dim", ds->dim, path));
    STRUX_TRY(h5_attr_i64(f, "n_labels", ds->n_labels, path));
    STRUX_TRY(write_csr(f, "X", ds->x.ptr, ds->n_local, ds->x.col, ds->x.val, path));
    return write_csr(f, "Y", ds->y_ptr, ds->n_local, ds->y_idx, NULL, path);
}

strux_status strux_io_dataset_save(const char *path, const strux_dataset *ds)
{
    STRUX_CHECK(ds->n_local == ds->n_global && ds->bias_col < 0 && !ds->ex_ptr, STRUX_ERR_INTERNAL,
                "convert needs every row, without bias, one row per example");
    return h5_create_atomic(path, write_dataset, ds);
}

/* Offsets must start at 0, never decrease, and end at the length of the index array. */
static strux_status check_indptr(const int64_t *ptr, int64_t n, int64_t len, const char *path,
                                 const char *name)
{
    STRUX_CHECK(ptr[0] == 0, STRUX_ERR_INPUT, "%s: %s[0] = %lld, expected 0", path, name,
                (long long)ptr[0]);
    for (int64_t r = 0; r < n; r++)
        STRUX_CHECK(ptr[r + 1] >= ptr[r], STRUX_ERR_INPUT,
                    "%s: row %lld: %s decreases (%lld after %lld)", path, (long long)r + 1, name,
                    (long long)ptr[r + 1], (long long)ptr[r]);
    STRUX_CHECK(ptr[n] == len, STRUX_ERR_INPUT, "%s: %s ends at %lld but there are %lld entries",
                path, name, (long long)ptr[n], (long long)len);
    return STRUX_OK;
}

/* Validate this rank's feature rows in place, dropping columns ≥ dim when allowed. */
static strux_status check_features(strux_csr *x, int64_t first, int32_t dim, int drop,
                                   const char *dim_origin, const char *path, int64_t *n_dropped)
{
    int64_t q = 0;
    for (int64_t r = 0; r < x->n_rows; r++) {
        long long row = (long long)(first + r + 1);
        int64_t start = q;
        for (int64_t p = x->ptr[r]; p < x->ptr[r + 1]; p++) {
            int32_t j = x->col[p];
            float v = x->val[p];
            STRUX_CHECK(j >= 0, STRUX_ERR_INPUT, "%s: row %lld: feature column %d < 0", path, row,
                        j);
            STRUX_CHECK(p == x->ptr[r] || j > x->col[p - 1], STRUX_ERR_INPUT,
                        "%s: row %lld: feature column %d after %d; columns must ascend", path, row,
                        j, x->col[p - 1]);
            STRUX_CHECK(isfinite(v), STRUX_ERR_INPUT, "%s: row %lld: feature %d is not finite",
                        path, row, j + 1);
            if (j >= dim) {
                STRUX_CHECK(drop, STRUX_ERR_INPUT,
                            "%s: row %lld: feature %d exceeds the dimension %d%s", path, row, j + 1,
                            dim, dim_origin ? dim_origin : "");
                (*n_dropped)++;
                continue;
            }
            x->col[q] = j;
            x->val[q++] = v;
        }
        x->ptr[r] = start;
    }
    x->ptr[x->n_rows] = q;
    return STRUX_OK;
}

static strux_status check_labels(const int64_t *ptr, const int32_t *idx, int64_t n_rows,
                                 int64_t first, int32_t n_labels, const char *path)
{
    for (int64_t r = 0; r < n_rows; r++)
        for (int64_t p = ptr[r]; p < ptr[r + 1]; p++) {
            long long row = (long long)(first + r + 1);
            STRUX_CHECK(idx[p] >= 0 && idx[p] < n_labels, STRUX_ERR_INPUT,
                        "%s: row %lld: label %d is out of range: the label count is %d", path, row,
                        idx[p], n_labels);
            STRUX_CHECK(p == ptr[r] || idx[p] > idx[p - 1], STRUX_ERR_INPUT,
                        "%s: row %lld: labels must ascend without repeats (%d after %d)", path, row,
                        idx[p], idx[p - 1]);
        }
    return STRUX_OK;
}

static strux_status read_body(hid_t f, const char *path, const strux_read_options *opt,
                              strux_dataset **out)
{
    strux_status st = STRUX_OK;
    char fmt[64];
    int64_t n, dim_file, n_labels_file;
    int64_t *xptr = NULL, *yptr_all = NULL, *prefix = NULL, *y_ptr = NULL;
    int32_t *y_idx = NULL;
    strux_csr x = {0};
    strux_shard plan = {0};
    int64_t nnz_x, nnz_y;

    STRUX_TRY(h5_read_attr_str(f, "format", fmt, sizeof fmt, path));
    STRUX_CHECK(strcmp(fmt, H5_DATA_FORMAT) == 0, STRUX_ERR_INPUT,
                "%s: not a strux dataset (format '%s')", path, fmt);
    STRUX_TRY(h5_read_attr_i64(f, "n_rows", &n, path));
    STRUX_TRY(h5_read_attr_i64(f, "dim", &dim_file, path));
    STRUX_TRY(h5_read_attr_i64(f, "n_labels", &n_labels_file, path));
    STRUX_CHECK(n > 0, STRUX_ERR_INPUT, "%s: no examples", path);
    /* every attribute against the type it is narrowed to, and every array's length against the
     * attributes, before anything is allocated or read (issue 18: a 2^32+50-row file was read as
     * 50 rows) */
    STRUX_CHECK(n < INT64_MAX, STRUX_ERR_INPUT, "%s: attribute n_rows = %lld is too large", path,
                (long long)n);
    STRUX_CHECK(dim_file >= 0 && dim_file <= DATA_MAX_DIM, STRUX_ERR_INPUT,
                "%s: attribute dim = %lld is outside [0, %d]", path, (long long)dim_file,
                DATA_MAX_DIM);
    STRUX_CHECK(n_labels_file >= 0 && n_labels_file <= INT32_MAX, STRUX_ERR_INPUT,
                "%s: attribute n_labels = %lld is outside [0, %d]", path, (long long)n_labels_file,
                INT32_MAX);
    STRUX_CHECK(n >= opt->n_ranks, STRUX_ERR_INPUT,
                "%s: %lld examples cannot be shared by %d ranks (each rank needs at least one); "
                "run with at most %lld ranks",
                path, (long long)n, opt->n_ranks, (long long)n);
    int32_t dim = opt->dim > 0 ? opt->dim : (int32_t)dim_file;
    /* a file may declare fewer labels than the model (a split without the last ids), never more */
    STRUX_CHECK(opt->n_labels == 0 || n_labels_file <= opt->n_labels, STRUX_ERR_INPUT,
                "%s: attribute n_labels = %lld; expected at most %d (data.n_labels, or the model's "
                "label count for held-out data)",
                path, (long long)n_labels_file, opt->n_labels);
    int32_t n_labels = opt->n_labels > 0 ? opt->n_labels : (int32_t)n_labels_file;

    int64_t len;
    STRUX_TRY(h5_shape(f, "X/indptr", 1, &len, path));
    STRUX_CHECK(len == n + 1, STRUX_ERR_INPUT,
                "%s: attribute n_rows = %lld but dataset 'X/indptr' has %lld entries (expected "
                "n_rows + 1)",
                path, (long long)n, (long long)len);
    STRUX_TRY(h5_shape(f, "Y/indptr", 1, &len, path));
    STRUX_CHECK(len == n + 1, STRUX_ERR_INPUT,
                "%s: attribute n_rows = %lld but dataset 'Y/indptr' has %lld entries (expected "
                "n_rows + 1)",
                path, (long long)n, (long long)len);
    STRUX_TRY(h5_shape(f, "X/indices", 1, &nnz_x, path));
    STRUX_TRY(h5_shape(f, "X/data", 1, &len, path));
    STRUX_CHECK(len == nnz_x, STRUX_ERR_INPUT,
                "%s: dataset 'X/data' has %lld entries but 'X/indices' has %lld", path,
                (long long)len, (long long)nnz_x);
    STRUX_TRY(h5_shape(f, "Y/indices", 1, &nnz_y, path));
    STRUX_TRY_GOTO(st, strux_alloc_array(&xptr, (size_t)n + 1, sizeof *xptr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&yptr_all, (size_t)n + 1, sizeof *yptr_all), done);
    STRUX_TRY_GOTO(st, h5_read(f, "X/indptr", H5T_NATIVE_INT64, 0, n + 1, xptr, path), done);
    STRUX_TRY_GOTO(st, h5_read(f, "Y/indptr", H5T_NATIVE_INT64, 0, n + 1, yptr_all, path), done);
    STRUX_TRY_GOTO(st, check_indptr(xptr, n, nnz_x, path, "X/indptr"), done);
    STRUX_TRY_GOTO(st, check_indptr(yptr_all, n, nnz_y, path, "Y/indptr"), done);

    STRUX_TRY_GOTO(st, strux_alloc_array(&prefix, (size_t)n + 1, sizeof *prefix), done);
    for (int64_t i = 0; i < n; i++)
        prefix[i + 1] = prefix[i] + (xptr[i + 1] - xptr[i]) + 1;
    STRUX_TRY_GOTO(st, strux_shard_plan(prefix, n, opt, &plan), done);
    int64_t lo = plan.lo, hi = plan.hi;

    int64_t nnz = xptr[hi] - xptr[lo], nlab = yptr_all[hi] - yptr_all[lo];
    STRUX_TRY_GOTO(st, strux_csr_alloc(&x, hi - lo, dim, nnz), done);
    for (int64_t i = lo; i <= hi; i++)
        x.ptr[i - lo] = xptr[i] - xptr[lo];
    STRUX_TRY_GOTO(st, h5_read(f, "X/indices", H5T_NATIVE_INT32, xptr[lo], nnz, x.col, path), done);
    STRUX_TRY_GOTO(st, h5_read(f, "X/data", H5T_NATIVE_FLOAT, xptr[lo], nnz, x.val, path), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_ptr, (size_t)(hi - lo) + 1, sizeof *y_ptr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&y_idx, (size_t)nlab + 1, sizeof *y_idx), done);
    for (int64_t i = lo; i <= hi; i++)
        y_ptr[i - lo] = yptr_all[i] - yptr_all[lo];
    STRUX_TRY_GOTO(st, h5_read(f, "Y/indices", H5T_NATIVE_INT32, yptr_all[lo], nlab, y_idx, path),
                   done);

    int64_t n_dropped = 0;
    STRUX_TRY_GOTO(
        st, check_features(&x, lo, dim, opt->drop_above_dim, opt->dim_origin, path, &n_dropped),
        done);
    STRUX_TRY_GOTO(st, check_labels(y_ptr, y_idx, hi - lo, lo, n_labels, path), done);
    STRUX_TRY_GOTO(
        st,
        strux_dataset_from_arrays(path, &x, &y_ptr, &y_idx, n, lo, dim, n_labels, opt->bias, out),
        done);
    (*out)->n_dropped = n_dropped;
    strux_dataset_set_shard(*out, &plan);
done:
    strux_shard_free(&plan);
    strux_free(&xptr);
    strux_free(&yptr_all);
    strux_free(&prefix);
    strux_free(&y_ptr);
    strux_free(&y_idx);
    strux_csr_free(&x);
    return st;
}

strux_status strux_io_dataset_read(const char *path, const strux_read_options *opt,
                                   strux_dataset **out)
{
    *out = NULL;
    h5_quiet();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    STRUX_CHECK(f >= 0, STRUX_ERR_INPUT, "%s: cannot open as HDF5", path);
    strux_status st = read_body(f, path, opt, out);
    H5Fclose(f);
    return st == STRUX_OK ? st : strux_error_frame(st, __FILE__, __LINE__, __func__);
}

strux_status strux_io_dataset_load(const char *path, const strux_read_options *opt,
                                   strux_dataset **out)
{
    if (strux_io_is_hdf5(path))
        STRUX_TRY(strux_io_dataset_read(path, opt, out));
    else if (strux_dataset_is_svmhmm(path))
        STRUX_TRY(strux_dataset_read_svmhmm(path, opt, out));
    else
        STRUX_TRY(strux_dataset_read_libsvm(path, opt, out));
    if (opt->normalize) strux_dataset_normalize_rows(*out);
    return STRUX_OK;
}

/* HDF5: the attributes and array lengths; text: the bytes on disk (× 3 when gzip'd, a low ratio
 * for LIBSVM text), about 12 bytes of text per non-zero ("1234:0.56789 "): a low guess, so the
 * check before reading refuses only what cannot fit; an XMC header line gives rows, features
 * and labels. */
strux_status strux_io_dataset_peek(const char *path, strux_data_peek *out)
{
    memset(out, 0, sizeof *out);
    struct stat sb;
    STRUX_CHECK(stat(path, &sb) == 0, STRUX_ERR_INPUT, "%s: cannot read (does it exist?)", path);
    out->file_bytes = (int64_t)sb.st_size;
    if (!strux_io_is_hdf5(path)) {
        unsigned char head[2] = {0};
        FILE *f = fopen(path, "rb");
        if (f) {
            if (fread(head, 1, 2, f) != 2) head[0] = 0;
            fclose(f);
        }
        int64_t text = out->file_bytes * (head[0] == 0x1f && head[1] == 0x8b ? 3 : 1);
        out->nnz = text / 12;
        gzFile g = gzopen(path, "rb"); /* an XMC header "rows features labels" gives the shape */
        char line[128];
        long long n, d, l;
        char rest;
        if (g && gzgets(g, line, sizeof line) &&
            sscanf(line, "%lld %lld %lld %c", &n, &d, &l, &rest) == 3 && n > 0 && d > 0 && l > 0) {
            out->n_rows = n;
            out->dim = d;
            out->n_labels = l;
        }
        if (g) gzclose(g);
        return STRUX_OK;
    }
    h5_quiet();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    STRUX_CHECK(f >= 0, STRUX_ERR_INPUT, "%s: cannot open as HDF5", path);
    strux_status st = h5_read_attr_i64(f, "n_rows", &out->n_rows, path);
    if (st == STRUX_OK) st = h5_read_attr_i64(f, "dim", &out->dim, path);
    if (st == STRUX_OK) st = h5_read_attr_i64(f, "n_labels", &out->n_labels, path);
    if (st == STRUX_OK) st = h5_shape(f, "X/indices", 1, &out->nnz, path);
    if (st == STRUX_OK) st = h5_shape(f, "Y/indices", 1, &out->label_nnz, path);
    H5Fclose(f);
    out->exact = st == STRUX_OK;
    return st;
}
