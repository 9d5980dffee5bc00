/* io/h5.c - HDF5 helpers (see h5.h): every handle opened here is closed here, every failure is a
 * STRUX_ERR_IO naming the file and the object. */
#include "h5.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
    /* the 1.8 file format at least: its superblock, object headers and B-trees carry checksums,
     * so a corrupt file is refused by HDF5 instead of decoded (files stay readable by 1.8) */
    *f = H5Pset_fapl_core(fapl, H5_CORE_INCREMENT, 0) < 0 ||
                 H5Pset_file_image_callbacks(fapl, &cb) < 0 ||
                 H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0
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

/* ---- strings ----
 * strux writes every string fixed-length (attributes, the config and the label names): the bytes
 * sit in the object that holds them, in metadata that the file format's checksums cover. Files
 * written before (strux up to 5dca02a) hold variable-length strings, whose bytes live in a global
 * heap collection: HDF5 1.10 trusts the heap it reads, and a corrupt one crashed or hung it inside
 * H5T__conv_vlen / H5HG_read (issue 18, tests/corpus/model/hdf5-attr-*). Those strings are read
 * here instead: HDF5 hands over each element's raw heap reference (length, collection address,
 * object index) through a conversion to an opaque type, and the collection is read with pread and
 * checked against the file's size before a byte of it is used. */

#define H5_STR_MAX ((size_t)64 << 20) /* bytes of strings one read may allocate */
#define VLEN_REF_TAG "strux: raw global heap reference"
#define GCOL_ALIGN(n) (((n) + 7) & ~(uint64_t)7) /* heap objects are padded to 8 bytes */

static hid_t vlen_str_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* A fixed-length UTF-8 string type of len bytes (at least 1), padded with NULs. */
static hid_t fixed_str_type(size_t len)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, len ? len : 1);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* The conversion from a variable-length string in the file to an opaque type of the same size:
 * the raw reference bytes, untouched (HDF5 copies the element's file bytes into buf first). */
static herr_t vlen_ref_conv(hid_t src, hid_t dst, H5T_cdata_t *cdata, size_t nelmts,
                            size_t buf_stride, size_t bkg_stride, void *buf, void *bkg, hid_t dxpl)
{
    (void)nelmts, (void)buf_stride, (void)bkg_stride, (void)buf, (void)bkg, (void)dxpl;
    if (cdata->command != H5T_CONV_INIT) return 0; /* CONV: the bytes are the result; FREE */
    if (H5Tget_class(dst) != H5T_OPAQUE || H5Tis_variable_str(src) <= 0 ||
        H5Tget_size(src) != H5Tget_size(dst))
        return -1;
    char *tag = H5Tget_tag(dst);
    int ours = tag && strcmp(tag, VLEN_REF_TAG) == 0;
    if (tag) H5free_memory(tag);
    if (!ours) return -1;
    cdata->need_bkg = H5T_BKG_NO;
    return 0;
}

static strux_status register_vlen_ref(const char *file)
{
    static int registered;
    if (registered) return STRUX_OK;
    hid_t src = vlen_str_type(), dst = H5Tcreate(H5T_OPAQUE, 16);
    herr_t rc = dst < 0 || H5Tset_tag(dst, VLEN_REF_TAG) < 0
                    ? -1
                    : H5Tregister(H5T_PERS_SOFT, "strux_vlen_ref", src, dst, vlen_ref_conv);
    H5Tclose(src);
    if (dst >= 0) H5Tclose(dst);
    STRUX_CHECK(rc >= 0, STRUX_ERR_IO, "%s: cannot set up reading variable-length strings", file);
    registered = 1;
    return STRUX_OK;
}

/* Little-endian unsigned integer of n bytes (n ≤ 8; wider ones must have zero high bytes, else
 * UINT64_MAX, which no file offset reaches). */
static uint64_t decode_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t k = n; k-- > 0;) {
        if (k >= 8) {
            if (p[k]) return UINT64_MAX;
            continue;
        }
        v = v << 8 | p[k];
    }
    return v;
}

/* Where an old file's strings are: the file itself (opened again by name, read with pread) and the
 * sizes of its addresses and lengths. */
typedef struct heap_file {
    int fd;
    uint64_t eof, base; /* file size; the base that heap addresses are relative to */
    size_t sizeof_addr, sizeof_size;
} heap_file;

static strux_status heap_file_open(hid_t obj, heap_file *hf, const char *file)
{
    *hf = (heap_file){.fd = -1};
    hid_t fid = H5Iget_file_id(obj);
    hid_t fcpl = fid < 0 ? -1 : H5Fget_create_plist(fid);
    hsize_t ub = 0;
    char name[4096];
    ssize_t len = fid < 0 ? -1 : H5Fget_name(fid, name, sizeof name);
    int ok = fcpl >= 0 && H5Pget_sizes(fcpl, &hf->sizeof_addr, &hf->sizeof_size) >= 0 &&
             H5Pget_userblock(fcpl, &ub) >= 0 && len > 0 && (size_t)len < sizeof name;
    if (fcpl >= 0) H5Pclose(fcpl);
    if (fid >= 0) H5Fclose(fid);
    STRUX_CHECK(ok, STRUX_ERR_IO, "%s: cannot read the file's address sizes", file);
    STRUX_CHECK(hf->sizeof_addr >= 2 && hf->sizeof_addr <= 32 && hf->sizeof_size >= 2 &&
                    hf->sizeof_size <= 32,
                STRUX_ERR_INPUT,
                "%s: addresses of %zu and lengths of %zu bytes: the file is corrupt", file,
                hf->sizeof_addr, hf->sizeof_size);
    hf->base = ub;
    struct stat sb;
    hf->fd = open(name, O_RDONLY | O_CLOEXEC);
    STRUX_CHECK(hf->fd >= 0 && fstat(hf->fd, &sb) == 0, STRUX_ERR_IO, "%s: cannot open: %s", file,
                strerror(errno));
    hf->eof = (uint64_t)sb.st_size;
    return STRUX_OK;
}

static strux_status heap_read(const heap_file *hf, uint64_t off, void *buf, size_t n,
                              const char *file)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(hf->fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        STRUX_CHECK(r > 0, STRUX_ERR_IO, "%s: cannot read %zu bytes at byte %llu: %s", file, n,
                    (unsigned long long)off, r < 0 ? strerror(errno) : "end of file");
        got += (size_t)r;
    }
    return STRUX_OK;
}

#define BAD_HEAP(why, ...)                                                                         \
    strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,                                 \
                    "%s: string '%s' (a variable-length string, heap collection at byte %llu, "    \
                    "object %u): " why ": the file is corrupt",                                    \
                    file, name, (unsigned long long)addr, idx, __VA_ARGS__)

/* The string of len bytes that object idx of the global heap collection at addr holds (file
 * format §III.E: "GCOL", version 1, 3 reserved, collection size; then objects of index (2 bytes),
 * reference count (2), 4 reserved, size, data padded to 8 bytes; index 0 is the free space). */
static strux_status heap_string(const heap_file *hf, uint64_t addr, unsigned idx, uint64_t len,
                                char **out, const char *file, const char *name)
{
    const size_t hdr = 8 + hf->sizeof_size, ohdr = 8 + hf->sizeof_size;
    if (len == 0) return strux_strdup(out, ""); /* an empty or null string: no heap object */
    if (hf->base > hf->eof || addr >= hf->eof - hf->base || hf->eof - hf->base - addr < hdr)
        return BAD_HEAP("the collection lies beyond the end of the file (%llu bytes)",
                        (unsigned long long)hf->eof);
    const uint64_t at = hf->base + addr;
    unsigned char head[40];
    STRUX_TRY(heap_read(hf, at, head, hdr, file));
    if (memcmp(head, "GCOL", 4) != 0 || head[4] != 1)
        return BAD_HEAP("no heap collection there%s", "");
    uint64_t csize = decode_le(head + 8, hf->sizeof_size);
    if (csize < hdr || csize > hf->eof - at)
        return BAD_HEAP("the collection's size %llu exceeds the %llu bytes left in the file",
                        (unsigned long long)csize, (unsigned long long)(hf->eof - at));
    if (len > csize)
        return BAD_HEAP("its length %llu exceeds the collection (%llu bytes)",
                        (unsigned long long)len, (unsigned long long)csize);
    unsigned char *c = NULL;
    STRUX_TRY(strux_alloc(&c, (size_t)csize));
    strux_status st = heap_read(hf, at, c, (size_t)csize, file);
    int found = 0;
    for (uint64_t p = hdr; st == STRUX_OK && !found && csize - p >= ohdr;) {
        unsigned oidx = (unsigned)decode_le(c + p, 2);
        uint64_t osize = decode_le(c + p + 8, hf->sizeof_size);
        if (oidx == 0) break; /* the free space ends the objects */
        if (osize > csize - p - ohdr) {
            st = BAD_HEAP("object %u of %llu bytes overruns the collection", oidx,
                          (unsigned long long)osize);
            break;
        }
        if (oidx == idx) {
            found = 1;
            if (len > osize)
                st = BAD_HEAP("its length %llu exceeds the object's %llu bytes",
                              (unsigned long long)len, (unsigned long long)osize);
            else if ((st = strux_alloc(out, (size_t)len + 1)) == STRUX_OK)
                memcpy(*out, c + p + ohdr, (size_t)len);
        }
        uint64_t step = ohdr + GCOL_ALIGN(osize);
        if (step > csize - p) break;
        p += step;
    }
    strux_free(&c);
    if (st == STRUX_OK && !found) st = BAD_HEAP("the collection has no such object%s", "");
    return st;
}

/* n variable-length strings of an attribute or dataset (is_attr), each into a new out[k]. */
static strux_status read_vlen(hid_t obj, int is_attr, int64_t n, char **out, const char *file,
                              const char *name)
{
    heap_file hf;
    STRUX_TRY(register_vlen_ref(file));
    STRUX_TRY(heap_file_open(obj, &hf, file));
    const size_t ref = 4 + hf.sizeof_addr + 4;
    unsigned char *raw = NULL;
    strux_status st = (uint64_t)n > H5_STR_MAX / ref
                          ? strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                            "%s: '%s' holds %lld strings, more than strux reads",
                                            file, name, (long long)n)
                          : strux_alloc(&raw, (size_t)n * ref);
    hid_t mt = st == STRUX_OK ? H5Tcreate(H5T_OPAQUE, ref) : -1;
    if (st == STRUX_OK && (mt < 0 || H5Tset_tag(mt, VLEN_REF_TAG) < 0 ||
                           (is_attr ? H5Aread(obj, mt, raw)
                                    : H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw)) < 0))
        st = H5FAIL(file, "read the string references of", name);
    for (int64_t k = 0; st == STRUX_OK && k < n; k++) {
        const unsigned char *r = raw + (size_t)k * ref;
        uint64_t len = decode_le(r, 4), addr = decode_le(r + 4, hf.sizeof_addr);
        unsigned idx = (unsigned)decode_le(r + 4 + hf.sizeof_addr, 4);
        st = heap_string(&hf, addr, idx, len, &out[k], file, name);
    }
    if (mt >= 0) H5Tclose(mt);
    strux_free(&raw);
    close(hf.fd);
    return st;
}

/* n strings of an attribute or dataset (is_attr) that holds exactly n, each into a new out[k]
 * (the caller frees them): fixed-length ones through a bounded buffer, variable-length ones as
 * above. Any other type is STRUX_ERR_INPUT naming the object. */
static strux_status read_strings(hid_t obj, int is_attr, int64_t n, char **out, const char *file,
                                 const char *name)
{
    hid_t ft = is_attr ? H5Aget_type(obj) : H5Dget_type(obj);
    if (ft < 0) return H5FAIL(file, "read the type of", name);
    strux_status st = STRUX_OK;
    htri_t var = H5Tget_class(ft) == H5T_STRING ? H5Tis_variable_str(ft) : -1;
    size_t sz = var == 0 ? H5Tget_size(ft) : 0;
    if (var < 0) {
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: '%s' is not a string", file, name);
    } else if (var > 0) {
        st = read_vlen(obj, is_attr, n, out, file, name);
    } else if (sz == 0 || sz >= H5_STR_MAX || (uint64_t)n > H5_STR_MAX / (sz + 1)) {
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: '%s' holds %lld strings of %zu bytes, more than strux reads "
                             "(%zu MiB)",
                             file, name, (long long)n, sz, H5_STR_MAX >> 20);
    } else {
        char *buf = NULL;
        hid_t mt = H5Tcopy(ft); /* same character set: HDF5 1.10 converts no ASCII <-> UTF-8 */
        st = strux_alloc(&buf, (size_t)n * (sz + 1));
        if (st == STRUX_OK &&
            (mt < 0 || H5Tset_size(mt, sz + 1) < 0 || H5Tset_strpad(mt, H5T_STR_NULLTERM) < 0 ||
             (is_attr ? H5Aread(obj, mt, buf)
                      : H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)) < 0))
            st = H5FAIL(file, "read string", name);
        for (int64_t k = 0; st == STRUX_OK && k < n; k++) {
            char *s = buf + (size_t)k * (sz + 1);
            s[sz] = '\0';
            st = strux_strdup(&out[k], s);
        }
        if (mt >= 0) H5Tclose(mt);
        strux_free(&buf);
    }
    H5Tclose(ft);
    return st;
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
    hid_t t = fixed_str_type(strlen(value));
    strux_status st = attr_write(loc, name, t, value, file);
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
    char *v = NULL;
    strux_status st = n_el != 1 ? NOT_SCALAR(file, "attribute", name, n_el)
                                : read_strings(a, 1, 1, &v, file, name);
    if (st == STRUX_OK) snprintf(buf, n, "%s", v);
    strux_free(&v);
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

strux_status h5_create_disk(const char *path, char *tmp, size_t n, hid_t *f)
{
    strux_io_temp_name(path, tmp, n);
    STRUX_TRY(strux_io_make_parent(path));
    h5_quiet();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    STRUX_CHECK(fapl >= 0, STRUX_ERR_IO, "%s: cannot create a file access list", path);
    *f = H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0
             ? -1
             : H5Fcreate(tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    STRUX_CHECK(*f >= 0, STRUX_ERR_IO, "%s: cannot create %s", path, tmp);
    return STRUX_OK;
}

strux_status h5_finish_disk(hid_t f, const char *tmp, const char *path, strux_status st)
{
    if (H5Fclose(f) < 0 && st == STRUX_OK)
        st = strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__, "%s: close failed", path);
    if (st == STRUX_OK) return strux_io_commit(tmp, path);
    remove(tmp);
    return st;
}

strux_status h5_dataset_1d(hid_t loc, const char *name, hid_t type, int64_t n, hid_t *d,
                           const char *file)
{
    hsize_t dims = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dims, NULL), pl = create_props(1, &dims);
    *d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    H5Pclose(pl);
    H5Sclose(sp);
    return *d < 0 ? H5FAIL(file, "create dataset", name) : STRUX_OK;
}

strux_status h5_write_at(hid_t d, hid_t type, int64_t offset, int64_t count, const void *data,
                         const char *file, const char *name)
{
    if (count == 0) return STRUX_OK;
    hid_t fs = H5Dget_space(d);
    hsize_t off = (hsize_t)offset, cnt = (hsize_t)count;
    herr_t rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &cnt, NULL);
    hid_t ms = H5Screate_simple(1, &cnt, NULL);
    if (rc >= 0) rc = H5Dwrite(d, type, ms, fs, H5P_DEFAULT, data);
    H5Sclose(ms);
    H5Sclose(fs);
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
    hid_t t = fixed_str_type(strlen(value));
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, value);
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
    strux_status st = n_el != 1 ? NOT_SCALAR(file, "dataset", name, n_el)
                                : read_strings(d, 0, 1, out, file, name);
    H5Dclose(d);
    return st;
}

strux_status h5_write_str_array(hid_t loc, const char *name, char *const *v, int64_t n,
                                const char *file)
{
    size_t width = 1; /* fixed-length strings as wide as the longest */
    for (int64_t k = 0; k < n; k++)
        if (v[k] && strlen(v[k]) > width) width = strlen(v[k]);
    char *w = NULL;
    STRUX_TRY(strux_alloc_array(&w, (size_t)(n ? n : 1), width));
    for (int64_t k = 0; k < n; k++)
        if (v[k]) memcpy(w + (size_t)k * width, v[k], strlen(v[k]));
    hid_t t = fixed_str_type(width);
    hsize_t dims = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dims, NULL);
    hid_t d = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = d < 0 ? -1 : (n ? H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) : 0);
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
    STRUX_TRY(strux_alloc_array(out, (size_t)(n ? n : 1), sizeof **out));
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    strux_status st = d < 0 ? H5FAIL(file, "find dataset", name)
                      : n   ? read_strings(d, 0, n, *out, file, name)
                            : STRUX_OK;
    if (d >= 0) H5Dclose(d);
    for (int64_t k = 0; k < n; k++) /* an empty name is no name */
        if ((*out)[k] && !(*out)[k][0]) strux_free(&(*out)[k]);
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

/* Group listing: HDF5 1.10 lists a group in creation or name order by first building a table of
 * its links, and when a link of a group in dense storage fails to decode it frees the table's
 * unfilled entries (H5G__link_release_table from H5G__dense_iterate: a double free on a corrupt
 * file, tests/corpus/model/hdf5-curve-iterate-segv.h5). Its native order walks the name index
 * with no table, so the links are listed in that order and sorted here. */
typedef struct link_list {
    char *names;     /* max × width */
    int64_t *corder; /* creation order, INT64_MAX when the group does not track it */
    int max, n;
    size_t width;
} link_list;

static herr_t list_link(hid_t g, const char *name, const H5L_info_t *li, void *op)
{
    (void)g;
    link_list *l = op;
    if (l->n >= l->max || strlen(name) >= l->width) return 0; /* not one of ours: left out */
    snprintf(l->names + (size_t)l->n * l->width, l->width, "%s", name);
    l->corder[l->n++] = li->corder_valid ? li->corder : INT64_MAX;
    return 0;
}

strux_status h5_link_names(hid_t g, int max, size_t width, char *names, int *n, const char *file,
                           const char *group)
{
    link_list l = {names, NULL, max, 0, width};
    *n = 0;
    STRUX_TRY(strux_alloc_array(&l.corder, (size_t)(max ? max : 1), sizeof *l.corder));
    herr_t rc = H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, list_link, &l);
    if (rc < 0) {
        strux_free(&l.corder);
        return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                               "%s: cannot list group '%s': the file is corrupt", file, group);
    }
    char tmp[256];
    for (int i = 1; i < l.n; i++) /* insertion sort by (creation order, name): a few dozen */
        for (int k = i; k > 0; k--) {
            char *a = names + (size_t)(k - 1) * width, *b = names + (size_t)k * width;
            if (l.corder[k - 1] < l.corder[k] ||
                (l.corder[k - 1] == l.corder[k] && strcmp(a, b) <= 0))
                break;
            int64_t c = l.corder[k - 1];
            l.corder[k - 1] = l.corder[k];
            l.corder[k] = c;
            for (size_t off = 0; off < width; off += sizeof tmp) {
                size_t m = width - off < sizeof tmp ? width - off : sizeof tmp;
                memcpy(tmp, a + off, m);
                memcpy(a + off, b + off, m);
                memcpy(b + off, tmp, m);
            }
        }
    *n = l.n;
    strux_free(&l.corder);
    return STRUX_OK;
}

/* ---- files in the format strux wrote before ----
 * Superblock version 0 or 1 (HDF5's default format, strux up to 5dca02a): no checksum covers
 * the object headers or B-trees, and HDF5 1.10 decodes a corrupt one out of bounds (heap overflows
 * and crashes in H5O__msg_iterate_real, H5A__read: the model fuzzer's findings). Such a file is
 * read once by a child process first, under a memory cap: a corrupt header can state an object
 * of many GB, which HDF5's metadata cache allocates before it finds the file too short (18 GB in
 * H5C_protect under H5Fopen: the model fuzzer's oom inputs). The caller reads the file only when
 * the child's read succeeded; when it failed cleanly, the child's error (status and message,
 * through a pipe) is the result, so the file is never read again without the cap. */

#define VET_CLEAN_FAILURE 42 /* the child's read failed with a strux error: no crash */

/* The superblock version of an HDF5 file (its byte 8), or -1. */
static int superblock_version(const char *path)
{
    unsigned char head[9];
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head ? head[8] : -1;
}

/* The child's memory cap: what reading a file of `bytes` takes (the weights and checkpoint
 * arrays at most twice their size in the file, float32 read as double, once more in a
 * conversion buffer, and a spare copy) and 256 MB for HDF5's caches and strux's own tables. */
static double vet_cap_bytes(double bytes)
{
    return 4 * bytes + 256.0 * (1 << 20);
}

/* In the child: let the data segment (heap and private mappings; under ASan also its shadow,
 * already mapped) grow by at most cap bytes beyond what it is now, so that a larger allocation
 * fails (malloc returns NULL, and HDF5 reports it) instead of taking the memory. Linux (VmData
 * of /proc/self/status); elsewhere no cap. */
static void vet_set_cap(double cap)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256];
    double vm_data = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmData:", 7) == 0) vm_data = strtod(line + 7, NULL) * 1024; /* kB */
    fclose(f);
    struct rlimit rl;
    if (vm_data < 0 || getrlimit(RLIMIT_DATA, &rl) != 0) return;
    double want = vm_data + cap;
    if (want >= (double)RLIM_INFINITY / 2) return;
    if (rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur <= want) return;
    rl.rlim_cur = (rlim_t)want;
    setrlimit(RLIMIT_DATA, &rl);
}

/* In the child: send the failure (status, then the message) to fd; best effort. */
static void vet_send_error(int fd, strux_status st)
{
    const char *msg = strux_error_message();
    int code = (int)st;
    size_t n = strlen(msg);
    if (write(fd, &code, sizeof code) == (ssize_t)sizeof code) {
        for (size_t off = 0; off < n;) {
            ssize_t w = write(fd, msg + off, n - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
    }
}

/* In the parent, after the child has ended: the child's failure read from fd as a strux error;
 * STRUX_OK when nothing usable came (the caller then reads the file itself). */
static strux_status vet_receive_error(int fd)
{
    int code = 0;
    char msg[4096];
    size_t n = 0;
    if (read(fd, &code, sizeof code) != (ssize_t)sizeof code || code <= STRUX_OK) return STRUX_OK;
    for (;;) {
        ssize_t r = read(fd, msg + n, sizeof msg - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
        if (n == sizeof msg - 1) break;
    }
    msg[n] = '\0';
    if (n == 0) return STRUX_OK;
    return strux_error_set((strux_status)code, __FILE__, __LINE__, __func__, "%s", msg);
}

/* A sanitizer's death callback (libFuzzer's records the input as a crash) must not run for a
 * crash in the child, which is expected and handled. Weak: absent without a sanitizer. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

strux_status h5_vet_legacy(const char *path, strux_status (*read)(const char *path, void *ctx),
                           void *ctx, const char *what)
{
    int version = superblock_version(path);
    if (version < 0 || version >= 2) return STRUX_OK;
    struct stat sb;
    double bytes = stat(path, &sb) == 0 ? (double)sb.st_size : 0;
    double limit = 20 + bytes / 10e6; /* s: 10 MB/s */
    int fds[2];
    STRUX_CHECK(pipe(fds) == 0, STRUX_ERR_IO, "%s: cannot start a process to read it: %s", path,
                strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                               "%s: cannot start a process to read it: %s", path, strerror(e));
    }
    if (pid == 0) {
        close(fds[0]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 2), dup2(null, 1);
        if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(NULL);
        vet_set_cap(vet_cap_bytes(bytes));
        strux_status st = read(path, ctx);
        if (st == STRUX_OK) _exit(0);
        vet_send_error(fds[1], st);
        _exit(VET_CLEAN_FAILURE);
    }
    close(fds[1]);
    int status = 0;
    pid_t done = 0;
    double end = strux_time_now() + limit;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 && strux_time_now() < end) {
        struct timespec tick = {0, 10 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        close(fds[0]);
        return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                               "%s: HDF5 did not finish reading this %s within %.0f s: the file "
                               "is corrupt (it is in the format without metadata checksums that "
                               "strux wrote before)",
                               path, what, limit);
    }
    strux_status child_error = STRUX_OK;
    if (WIFEXITED(status) && WEXITSTATUS(status) == VET_CLEAN_FAILURE)
        child_error = vet_receive_error(fds[0]);
    close(fds[0]);
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == VET_CLEAN_FAILURE))
        return child_error;
    char how[64];
    if (WIFSIGNALED(status))
        snprintf(how, sizeof how, "signal %d", WTERMSIG(status));
    else
        snprintf(how, sizeof how, "exit %d", WEXITSTATUS(status));
    return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "%s: HDF5 1.10 crashed reading this %s (%s, in a process of its own): "
                           "the file is corrupt (it is in the format without metadata checksums "
                           "that strux wrote before)",
                           path, what, how);
}
