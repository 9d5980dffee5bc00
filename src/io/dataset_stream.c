/* io/dataset_stream.c - the HDF5 CSR container (dataset_file.c's layout: /X/{indptr,indices,data},
 * /Y/{indptr,indices}, attributes format, n_rows, dim, n_labels) written one row at a time, with
 * memory independent of the row count: each of the five arrays is a chunked, deflated,
 * extendible dataset fed from a fixed buffer. HDF5 writes the temporary file itself (a file this
 * size is not built in memory as h5_create_temp does), which is then synced and renamed into
 * place (strux_io_commit); on any failure the temporary is removed. HDF5 writes through a copy of
 * its sec2 driver whose writes never fail: the first failure is kept (guard_errno) and later
 * writes are dropped, so a full disk never leaves a file HDF5 cannot close (whose clean-up at
 * exit crashed, issue 18); the writer reports it as "disk full writing PATH (needs about N MB)"
 * with the bytes handed over so far. One writer at a time per process. Not Collective. */
#include "h5.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STREAM_CHUNK ((hsize_t)1 << 16) /* elements per chunk and per buffer flush */

/* ---- the guard driver: POSIX files like HDF5's sec2, but a failed write or truncate is kept in
 * guard_errno and reported to HDF5 as done (later writes are dropped), so HDF5 never holds a file
 * it cannot close; the writer checks guard_errno after every dataset write and at the end ---- */
static int guard_errno; /* errno of the first failed write or truncate of this writer, or 0 */
static int guard_nomem; /* 1 when opening failed for want of memory (strux_alloc's message set) */

typedef struct guard_file {
    H5FD_t pub;   /* HDF5's part: first */
    int fd;
    haddr_t eoa;  /* end of the address space HDF5 allocated */
    haddr_t eof;  /* end of what was written */
} guard_file;

#define GUARD_MAXADDR ((haddr_t)INT64_MAX)

static H5FD_t *guard_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    (void)fapl;
    if (!name || !*name || maxaddr == 0 || maxaddr == HADDR_UNDEF) return NULL;
    int o = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
    o |= (flags & H5F_ACC_TRUNC ? O_TRUNC : 0) | (flags & H5F_ACC_CREAT ? O_CREAT : 0) |
         (flags & H5F_ACC_EXCL ? O_EXCL : 0);
    int fd = open(name, o | O_CLOEXEC, 0666);
    struct stat sb;
    guard_file *f = NULL;
    if (fd < 0) return NULL;
    if (fstat(fd, &sb) != 0 || (strux_alloc(&f, sizeof *f) != STRUX_OK && (guard_nomem = 1))) {
        close(fd);
        return NULL;
    }
    f->fd = fd;
    f->eof = (haddr_t)sb.st_size;
    return &f->pub;
}

static herr_t guard_close(H5FD_t *file)
{
    guard_file *f = (guard_file *)file;
    int rc = close(f->fd);
    strux_free(&f);
    return rc == 0 ? 0 : -1;
}

static herr_t guard_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA |
             H5FD_FEAT_DATA_SIEVE | H5FD_FEAT_AGGREGATE_SMALLDATA;
    return 0;
}

static haddr_t guard_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const guard_file *)file)->eoa;
}

static herr_t guard_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    ((guard_file *)file)->eoa = addr;
    return 0;
}

static haddr_t guard_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const guard_file *)file)->eof;
}

static herr_t guard_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                         void *buf)
{
    (void)type, (void)dxpl;
    guard_file *f = (guard_file *)file;
    unsigned char *p = buf;
    while (size > 0) {
        ssize_t n = addr < f->eof ? pread(f->fd, p, size, (off_t)addr) : 0;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) { /* past the end: zeros, as sec2 */
            memset(p, 0, size);
            break;
        }
        p += n;
        addr += (haddr_t)n;
        size -= (size_t)n;
    }
    return 0;
}

static herr_t guard_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                          const void *buf)
{
    (void)type, (void)dxpl;
    guard_file *f = (guard_file *)file;
    const unsigned char *p = buf;
    haddr_t end = addr + size;
    while (size > 0 && guard_errno == 0) {
        ssize_t n = pwrite(f->fd, p, size, (off_t)addr);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            guard_errno = n < 0 ? errno : EIO;
            break;
        }
        p += n;
        addr += (haddr_t)n;
        size -= (size_t)n;
    }
    if (end > f->eof) f->eof = end;
    return 0;
}

static herr_t guard_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)dxpl, (void)closing;
    guard_file *f = (guard_file *)file;
    if (f->eoa != f->eof && guard_errno == 0 && ftruncate(f->fd, (off_t)f->eoa) != 0)
        guard_errno = errno;
    f->eof = f->eoa;
    return 0;
}

static const H5FD_class_t guard_class = {
    .name = "strux_guard",
    .maxaddr = GUARD_MAXADDR,
    .fc_degree = H5F_CLOSE_WEAK,
    .open = guard_open,
    .close = guard_close,
    .query = guard_query,
    .get_eoa = guard_get_eoa,
    .set_eoa = guard_set_eoa,
    .get_eof = guard_get_eof,
    .read = guard_read,
    .write = guard_write,
    .truncate = guard_truncate,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

/* The guard driver's id, registered once per process (-1 if HDF5 refuses it). */
static hid_t guard_driver(void)
{
    static hid_t id = -1;
    if (id < 0) id = H5FDregister(&guard_class);
    return id;
}

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
    int e = guard_errno ? guard_errno : errno;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (rc < 0 || guard_errno) return stream_fail(w, e, "write");
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
    guard_errno = guard_nomem = 0;
    hid_t driver = guard_driver();
    errno = 0;
    w->f = driver < 0 || H5Pset_driver(fapl, driver, NULL) < 0 ||
                   H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0
               ? -1
               : H5Fcreate(w->tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    int e = errno;
    H5Pclose(fapl);
    if (w->f < 0 && guard_nomem) {
        remove(w->tmp); /* created before the allocation failed */
        return strux_error_frame(STRUX_ERR_NOMEM, __FILE__, __LINE__, __func__);
    }
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
        if (c->d >= 0 && H5Dclose(c->d) < 0 && st == STRUX_OK) st = stream_fail(w, EIO, "write");
        strux_free(&c->buf);
    }
    if (w->f >= 0) {
        if (st == STRUX_OK && H5Fflush(w->f, H5F_SCOPE_GLOBAL) < 0) st = stream_fail(w, EIO, "write");
        if (H5Fclose(w->f) < 0 && st == STRUX_OK) st = stream_fail(w, EIO, "close");
        if (st == STRUX_OK && guard_errno) st = stream_fail(w, guard_errno, "write");
        if (st == STRUX_OK)
            st = strux_io_commit(w->tmp, w->path);
        else
            remove(w->tmp);
    }
    strux_free(&w->path);
    strux_free(wp);
    return st == STRUX_OK ? st : strux_error_frame(st, __FILE__, __LINE__, __func__);
}
