/* io/h5.h - small HDF5 helpers shared by the model and dataset files: typed attributes, 1-D and
 * 2-D datasets, UTF-8 strings (written fixed-length; the variable-length ones of older files are
 * read without HDF5's global heap code), group listings, each returning strux_status with the file
 * and the object named. Private to src/io. */
#ifndef STRUX_IO_H5_H
#define STRUX_IO_H5_H

#include "strux/io.h"

#include <hdf5.h>

/* Silence HDF5's own error printing (strux reports its own messages). */
void h5_quiet(void);

/* Create an HDF5 file atomically: body(f, path, ctx) fills a file built in memory, which is then
 * written with strux_io_write_atomic (temporary, fsync, rename); on any failure nothing is left
 * on disk and every HDF5 handle is closed. */
typedef strux_status (*h5_body_fn)(hid_t f, const char *path, const void *ctx);
strux_status h5_create_atomic(const char *path, h5_body_fn body, const void *ctx);
/* The two halves of h5_create_atomic, for writers that fill a file across several calls: create
 * the in-memory file (path's temporary name into tmp) and the directories path needs; then close
 * it and, when st is STRUX_OK, write it to path atomically (returns st, or the failure of
 * finishing: a full disk is "disk full writing PATH (needs about N MB)"). */
strux_status h5_create_temp(const char *path, char *tmp, size_t n, hid_t *f);
strux_status h5_finish_temp(hid_t f, const char *tmp, const char *path, strux_status st);
/* A file written on disk as it is filled, for what does not fit in memory (the dataset
 * container of strux convert): created under path's temporary name (HDF5 1.8 format at least);
 * finished by closing it and, when st is STRUX_OK, syncing and renaming it to path
 * (strux_io_commit), else removing it. Returns st or the failure of finishing. */
strux_status h5_create_disk(const char *path, char *tmp, size_t n, hid_t *f);
strux_status h5_finish_disk(hid_t f, const char *tmp, const char *path, strux_status st);
/* A 1-D dataset of n elements of type, chunked and compressed as h5_write does, to be filled by
 * h5_write_at (elements [offset, offset + count)); the caller closes d. */
strux_status h5_dataset_1d(hid_t loc, const char *name, hid_t type, int64_t n, hid_t *d,
                           const char *file);
strux_status h5_write_at(hid_t d, hid_t type, int64_t offset, int64_t count, const void *data,
                         const char *file, const char *name);
/* The model file's content (docs/model-format.md), shared by models and checkpoints. */
strux_status h5_model_write(hid_t f, const char *path, const strux_model *m,
                            const strux_model_info *info);

/* The /rta group of a model file (docs/model-format.md; model_rta.c): written when ts holds trees,
 * read into ts (n_trees = 0 when the file has none), with its shapes checked. */
strux_status h5_trees_write(hid_t f, const char *path, const strux_tree_set *ts);
strux_status h5_trees_read(hid_t f, const char *path, strux_tree_set *ts);
/* The /hierarchy group and the root attributes hierarchy, hierarchy_model, label_space
 * (docs/model-format.md; model_hier.c): written when hs->n_nodes > 0, read (n_nodes = 0 when the
 * file has none) with shapes and index ranges checked. */
strux_status h5_hier_write(hid_t f, const char *path, const strux_hier_stored *hs);
strux_status h5_hier_read(hid_t f, const char *path, strux_hier_stored *hs);
/* /rates of a model file (model_rates.c): nothing when s->m = 0 / absent. */
strux_status h5_rates_write(hid_t f, const char *path, const strux_rates_store *s);
strux_status h5_rates_read(hid_t f, const char *path, strux_rates_store *s);
strux_status h5_attr_str(hid_t loc, const char *name, const char *value, const char *file);
strux_status h5_attr_i64(hid_t loc, const char *name, int64_t value, const char *file);
strux_status h5_attr_f64(hid_t loc, const char *name, double value, const char *file);
/* Read a string attribute into buf (truncated to n). */
strux_status h5_read_attr_str(hid_t loc, const char *name, char *buf, size_t n, const char *file);
strux_status h5_read_attr_i64(hid_t loc, const char *name, int64_t *value, const char *file);
strux_status h5_read_attr_f64(hid_t loc, const char *name, double *value, const char *file);
int h5_has(hid_t loc, const char *name);
/* The names of group g's links (names: max × width chars; names that do not fit, and links
 * beyond max, are left out) in creation order, or by name where the group does not track it; *n
 * of them. A group that cannot be listed is STRUX_ERR_INPUT naming the file and group. */
strux_status h5_link_names(hid_t g, int max, size_t width, char *names, int *n, const char *file,
                           const char *group);

/* Dataset of given rank (1 or 2) and native type, optionally gzip-compressed in chunks. */
strux_status h5_write(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims,
                      const void *data, const char *file);
/* Contiguous, unfiltered 1-D byte dataset (opaque state that does not compress). */
/* A 2-D dataset of n_rows × dim, stored as type, filled from doubles block by block: fill(ctx,
 * r0, n, buf) writes rows [r0, r0 + n) into buf (n·dim doubles), so the array is never copied
 * whole. */
typedef void (*h5_rows_fn)(const void *ctx, int64_t r0, int64_t n, double *buf);
strux_status h5_write_rows(hid_t loc, const char *name, hid_t type, int64_t n_rows, int64_t dim,
                           h5_rows_fn fill, const void *ctx, const char *file);
/* The precision of a floating-point dataset (32 or 64 bits; anything else is STRUX_ERR_INPUT). */
strux_status h5_stored_precision(hid_t loc, const char *name, strux_precision *out,
                                 const char *file);
/* /weights (rows with scales applied, stored as precision) and /extra of m under loc / read
 * them into m (any kind), checking their shapes against m and refusing NaN/Inf (STRUX_ERR_INPUT
 * naming the entry). */
strux_status h5_model_write_weights(hid_t loc, const char *path, const strux_model *m,
                                    strux_precision precision);
strux_status h5_model_read_weights(hid_t loc, const char *path, strux_model *m);
strux_status h5_write_bytes(hid_t loc, const char *name, const void *data, size_t n,
                            const char *file);
/* Dimensions of a dataset (rank ≤ 2). */
strux_status h5_dims(hid_t loc, const char *name, int *rank, hsize_t *dims, const char *file);
/* Extents of a dataset that must have the given rank (1 or 2), each checked to fit int64_t;
 * STRUX_ERR_INPUT naming file, dataset and sizes otherwise. */
strux_status h5_shape(hid_t loc, const char *name, int rank, int64_t *dims, const char *file);
/* Read elements [offset, offset + count) of a 1-D dataset, or a whole dataset (count < 0: the
 * caller has checked its shape against out's size with h5_shape). */
strux_status h5_read(hid_t loc, const char *name, hid_t type, int64_t offset, int64_t count,
                     void *out, const char *file);
/* String scalar dataset and string arrays (NULL entries written as "", read back as NULL). */
strux_status h5_write_str(hid_t loc, const char *name, const char *value, const char *file);
strux_status h5_read_str(hid_t loc, const char *name, char **out, const char *file);
strux_status h5_write_str_array(hid_t loc, const char *name, char *const *v, int64_t n,
                                const char *file);
strux_status h5_read_str_array(hid_t loc, const char *name, char ***out, int64_t n,
                               const char *file);

/* For a file in the HDF5 format strux wrote before (superblock version 0 or 1: no metadata
 * checksums, on which a corrupt byte can crash HDF5 1.10), run read(path, ctx) in a child process
 * first (stdout and stderr to /dev/null, at most 20 s + 1 s per 10 MB, its memory growth capped at
 * 4 × the file's size + 256 MB): STRUX_ERR_INPUT naming the file (a `what`: "model") when it
 * crashed or did not finish; the child's own error (status and message) when its read failed;
 * STRUX_OK when it succeeded, and the caller reads the file itself. Files of the current format
 * return STRUX_OK at once. */
strux_status h5_vet_legacy(const char *path, strux_status (*read)(const char *path, void *ctx),
                           void *ctx, const char *what);

/* The error of a failed write of path (errno e after need bytes were due, in step `what`):
 * "disk full writing PATH (needs about N MB)" for ENOSPC and EDQUOT, else the system's reason.
 * (atomic.c) */
strux_status io_write_failed(const char *path, int e, size_t need, const char *what);

/* model_m3l.c: the group /m3l of an m3l model (nothing when m->n_labels = 0; absent on read:
 * n_labels = 0). */
strux_status h5_m3l_write(hid_t f, const char *path, const strux_m3l_info *m);
strux_status h5_m3l_read(hid_t f, const char *path, strux_m3l_info *m);

#endif
