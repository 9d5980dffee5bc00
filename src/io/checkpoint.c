/* io/checkpoint.c - checkpoint files (docs/model-format.md "Checkpoints"): the model file of the
 * run so far, plus /checkpoint with the epoch, the rank, block and example counts, time and
 * oracle calls so far, the weights in training space (before data.scale is folded in; only when
 * they differ from the exported /weights or those are float, so the weights are stored once
 * otherwise), the state every rank shares (`shared`: the driver's hooks, the solver's global
 * state) and one opaque state record per training example (the solver's and search's), keyed by
 * global example id: parts of consecutive examples (examples_<p> bytes, offsets_<p> the n + 1
 * offsets of its records, parts the first example of each part and the end), so a reader takes
 * any range of examples whatever rank count wrote them. Written under a temporary name and
 * renamed, so a reader never sees a partial checkpoint and the previous one survives a failed
 * write. */
#include "h5.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

struct strux_checkpoint_writer {
    hid_t f, g; /* the file and its /checkpoint group */
    char path[4096];
    char tmp[4200];
    int64_t n_examples; /* examples whose records are expected */
    int64_t *parts;     /* first example of each part added, then where the last ended */
    int64_t n_parts;
};

static strux_status write_head(strux_checkpoint_writer *w, const strux_model *m,
                               const strux_model_info *info, const strux_model *w_train,
                               const strux_checkpoint_info *ck, const strux_blob *shared)
{
    STRUX_TRY(h5_model_write(w->f, w->path, m, info));
    w->g = H5Gcreate2(w->f, "checkpoint", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    STRUX_CHECK(w->g >= 0, STRUX_ERR_IO, "%s: cannot create group 'checkpoint'", w->path);
    STRUX_TRY(h5_attr_i64(w->g, "epoch", ck->epoch, w->path));
    STRUX_TRY(h5_attr_i64(w->g, "n_ranks", ck->n_ranks, w->path));
    STRUX_TRY(h5_attr_i64(w->g, "n_blocks", ck->n_blocks, w->path));
    STRUX_TRY(h5_attr_i64(w->g, "n_examples", ck->n_examples, w->path));
    STRUX_TRY(h5_attr_f64(w->g, "train_time_s", ck->train_s, w->path));
    STRUX_TRY(h5_attr_i64(w->g, "oracle_calls", ck->oracle_calls, w->path));
    STRUX_TRY(h5_attr_i64(w->g, "data_fingerprint", ck->data_fingerprint, w->path));
    /* exported /weights that are the training ones in double serve both */
    if (w_train != m || info->precision != STRUX_PRECISION_DOUBLE)
        STRUX_TRY(h5_model_write_weights(w->g, w->path, w_train, STRUX_PRECISION_DOUBLE));
    return h5_write_bytes(w->g, "shared", shared->data, shared->n, w->path);
}

strux_status strux_io_checkpoint_begin(const char *path, const strux_model *m,
                                       const strux_model_info *info, const strux_model *w_train,
                                       const strux_checkpoint_info *ck, const strux_blob *shared,
                                       strux_checkpoint_writer **out)
{
    STRUX_CHECK(strux_model_n_w(m) == strux_model_n_w(w_train), STRUX_ERR_INTERNAL,
                "checkpoint weights of %lld and %lld entries", (long long)strux_model_n_w(m),
                (long long)strux_model_n_w(w_train));
    strux_checkpoint_writer *w;
    STRUX_TRY(strux_alloc(&w, sizeof *w));
    snprintf(w->path, sizeof w->path, "%s", path);
    w->g = -1;
    w->n_examples = ck->n_examples;
    strux_status st = h5_create_temp(path, w->tmp, sizeof w->tmp, &w->f);
    if (st != STRUX_OK) {
        strux_free(&w);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = w;
    st = write_head(w, m, info, w_train, ck, shared);
    if (st != STRUX_OK) return strux_io_checkpoint_end(out, st);
    return STRUX_OK;
}

strux_status strux_io_checkpoint_add_examples(strux_checkpoint_writer *w, int64_t first, int64_t n,
                                              const int64_t *offsets, const void *data)
{
    int64_t at = w->n_parts ? w->parts[w->n_parts] : 0;
    STRUX_CHECK(first == at && n >= 0 && first + n <= w->n_examples && offsets[0] == 0,
                STRUX_ERR_INTERNAL, "checkpoint records of examples [%lld, %lld) after %lld of %lld",
                (long long)first, (long long)(first + n), (long long)at, (long long)w->n_examples);
    STRUX_TRY(strux_realloc_array(&w->parts, (size_t)w->n_parts + 2, sizeof *w->parts));
    char name[48];
    hsize_t len = (hsize_t)n + 1;
    snprintf(name, sizeof name, "offsets_%lld", (long long)w->n_parts);
    STRUX_TRY(h5_write(w->g, name, H5T_NATIVE_INT64, 1, &len, offsets, w->path));
    snprintf(name, sizeof name, "examples_%lld", (long long)w->n_parts);
    STRUX_TRY(h5_write_bytes(w->g, name, data, (size_t)offsets[n], w->path));
    w->parts[w->n_parts++] = first;
    w->parts[w->n_parts] = first + n;
    return STRUX_OK;
}

strux_status strux_io_checkpoint_end(strux_checkpoint_writer **wp, strux_status st)
{
    strux_checkpoint_writer *w = *wp;
    if (!w) return st;
    int64_t end = w->n_parts ? w->parts[w->n_parts] : 0;
    if (st == STRUX_OK && end != w->n_examples)
        st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                             "%s: records of %lld of %lld examples written", w->path,
                             (long long)end, (long long)w->n_examples);
    if (st == STRUX_OK) {
        hsize_t len = (hsize_t)w->n_parts + 1;
        int64_t none = 0;
        st = h5_write(w->g, "parts", H5T_NATIVE_INT64, 1, &len, w->n_parts ? w->parts : &none,
                      w->path);
    }
    if (w->g >= 0) H5Gclose(w->g);
    st = h5_finish_temp(w->f, w->tmp, w->path, st);
    strux_free(&w->parts);
    strux_free(wp);
    return st;
}

/* Append dataset `name` of group g (bytes) to b. */
static strux_status read_bytes(hid_t g, const char *name, const char *path, strux_blob *b)
{
    STRUX_CHECK(h5_has(g, name), STRUX_ERR_INPUT,
                "%s: no checkpoint/%s (written by an older strux? resume needs a checkpoint of "
                "this version)",
                path, name);
    int64_t len;
    STRUX_TRY(h5_shape(g, name, 1, &len, path));
    STRUX_CHECK((uint64_t)len <= SIZE_MAX, STRUX_ERR_INPUT,
                "%s: dataset 'checkpoint/%s' of %lld bytes does not fit in memory", path, name,
                (long long)len);
    size_t at = b->n;
    STRUX_TRY(strux_blob_put(b, NULL, (size_t)len));
    return h5_read(g, name, H5T_NATIVE_UINT8, 0, -1, b->data + at, path);
}

/* The attributes of /checkpoint (g), checked. */
static strux_status read_attributes(hid_t g, const char *path, strux_checkpoint_info *ck)
{
    int64_t n_ranks, n_blocks;
    STRUX_TRY(h5_read_attr_i64(g, "epoch", &ck->epoch, path));
    STRUX_TRY(h5_read_attr_i64(g, "n_ranks", &n_ranks, path));
    STRUX_CHECK(h5_has(g, "n_blocks"), STRUX_ERR_INPUT,
                "%s: a checkpoint without data blocks (written by an older strux); it cannot be "
                "resumed by this version",
                path);
    STRUX_TRY(h5_read_attr_i64(g, "n_blocks", &n_blocks, path));
    STRUX_CHECK(h5_has(g, "parts"), STRUX_ERR_INPUT,
                "%s: a checkpoint with its state by data block (written by an older strux); this "
                "version keys it by example and cannot resume it",
                path);
    STRUX_TRY(h5_read_attr_i64(g, "n_examples", &ck->n_examples, path));
    STRUX_CHECK(ck->n_examples >= 1, STRUX_ERR_INPUT,
                "%s: attribute checkpoint/n_examples = %lld is not a count of examples", path,
                (long long)ck->n_examples);
    STRUX_TRY(h5_read_attr_f64(g, "train_time_s", &ck->train_s, path));
    STRUX_TRY(h5_read_attr_i64(g, "oracle_calls", &ck->oracle_calls, path));
    STRUX_CHECK(h5_has(g, "data_fingerprint"), STRUX_ERR_INPUT,
                "%s: a checkpoint without data fingerprint (written by an older strux); it cannot "
                "be resumed by this version",
                path);
    STRUX_TRY(h5_read_attr_i64(g, "data_fingerprint", &ck->data_fingerprint, path));
    STRUX_CHECK(n_ranks >= 1 && n_ranks <= INT32_MAX, STRUX_ERR_INPUT,
                "%s: attribute checkpoint/n_ranks = %lld is outside [1, %d]", path,
                (long long)n_ranks, INT32_MAX);
    STRUX_CHECK(n_blocks >= 1 && n_blocks <= INT32_MAX, STRUX_ERR_INPUT,
                "%s: attribute checkpoint/n_blocks = %lld is outside [1, %d]", path,
                (long long)n_blocks, INT32_MAX);
    STRUX_CHECK(ck->epoch >= 0 && ck->oracle_calls >= 0 && isfinite(ck->train_s), STRUX_ERR_INPUT,
                "%s: checkpoint position epoch = %lld, oracle_calls = %lld, train_time_s = %g "
                "is not a position a run can reach",
                path, (long long)ck->epoch, (long long)ck->oracle_calls, ck->train_s);
    ck->n_ranks = (int32_t)n_ranks;
    ck->n_blocks = (int32_t)n_blocks;
    return STRUX_OK;
}

static strux_status read_group(hid_t f, hid_t g, const char *path, strux_checkpoint_info *ck,
                               strux_model *w_train, strux_blob *shared)
{
    STRUX_TRY(read_attributes(g, path, ck));
    /* training-space weights: checkpoint/weights when they differ from the exported ones */
    STRUX_TRY(h5_model_read_weights(h5_has(g, "weights") ? g : f, path, w_train));
    return read_bytes(g, "shared", path, shared);
}

/* Open path's /checkpoint group (g, in file f). */
static strux_status open_group(const char *path, hid_t *f, hid_t *g)
{
    h5_quiet();
    STRUX_CHECK(strux_io_is_hdf5(path), STRUX_ERR_INPUT,
                "%s: not an HDF5 file (or unreadable); expected a strux checkpoint", path);
    *f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    STRUX_CHECK(*f >= 0, STRUX_ERR_INPUT, "%s: cannot open as HDF5", path);
    *g = h5_has(*f, "checkpoint") ? H5Gopen2(*f, "checkpoint", H5P_DEFAULT) : -1;
    if (*g >= 0) return STRUX_OK;
    H5Fclose(*f);
    return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "%s: a model without checkpoint state (no /checkpoint group): "
                           "--resume needs a file written by output.checkpoint or a signal",
                           path);
}

strux_status strux_io_checkpoint_read(const char *path, strux_checkpoint_info *ck,
                                      strux_model *w_train, strux_blob *shared)
{
    hid_t f, g;
    STRUX_TRY(open_group(path, &f, &g));
    strux_status st = read_group(f, g, path, ck, w_train, shared);
    H5Gclose(g);
    H5Fclose(f);
    return st;
}

strux_status strux_io_checkpoint_peek(const char *path, strux_checkpoint_info *ck)
{
    hid_t f, g;
    STRUX_TRY(open_group(path, &f, &g));
    strux_status st = read_attributes(g, path, ck);
    H5Gclose(g);
    H5Fclose(f);
    return st;
}

/* The part table of g: parts[0..n_parts] ascending from 0 to the example count. */
static strux_status read_parts(hid_t g, const char *path, int64_t n_examples, int64_t **parts,
                               int64_t *n_parts)
{
    int64_t len;
    STRUX_TRY(h5_shape(g, "parts", 1, &len, path));
    STRUX_CHECK(len >= 1 && len <= n_examples + 1, STRUX_ERR_INPUT,
                "%s: checkpoint/parts has %lld entries for %lld examples", path, (long long)len,
                (long long)n_examples);
    STRUX_TRY(strux_alloc_array(parts, (size_t)len, sizeof **parts));
    STRUX_TRY(h5_read(g, "parts", H5T_NATIVE_INT64, 0, len, *parts, path));
    *n_parts = len - 1;
    int ok = (*parts)[0] == 0 && (*parts)[len - 1] == n_examples;
    for (int64_t p = 0; ok && p + 1 < len; p++)
        ok = (*parts)[p] < (*parts)[p + 1];
    STRUX_CHECK(ok, STRUX_ERR_INPUT,
                "%s: checkpoint/parts does not cut examples 0..%lld into ascending parts", path,
                (long long)n_examples);
    return STRUX_OK;
}

/* Examples [lo, hi) of part p (starting at example p0): their offsets and bytes. */
static strux_status read_part(hid_t g, const char *path, int64_t p, int64_t p0, int64_t p_n,
                              int64_t lo, int64_t hi, int64_t *offsets, strux_blob *state)
{
    char on[48], en[48];
    snprintf(on, sizeof on, "offsets_%lld", (long long)p);
    snprintf(en, sizeof en, "examples_%lld", (long long)p);
    int64_t len, bytes, end;
    STRUX_CHECK(h5_has(g, on) && h5_has(g, en), STRUX_ERR_INPUT,
                "%s: no checkpoint/%s or checkpoint/%s (the state records of examples %lld..%lld)",
                path, on, en, (long long)p0 + 1, (long long)(p0 + p_n));
    STRUX_TRY(h5_shape(g, on, 1, &len, path));
    STRUX_TRY(h5_shape(g, en, 1, &bytes, path));
    STRUX_CHECK(len == p_n + 1, STRUX_ERR_INPUT,
                "%s: checkpoint/%s has %lld entries for a part of %lld examples", path, on,
                (long long)len, (long long)p_n);
    STRUX_TRY(h5_read(g, on, H5T_NATIVE_INT64, p_n, 1, &end, path));
    STRUX_CHECK(end == bytes, STRUX_ERR_INPUT,
                "%s: checkpoint/%s holds %lld bytes, but its records end at byte %lld", path, en,
                (long long)bytes, (long long)end);
    STRUX_TRY(h5_read(g, on, H5T_NATIVE_INT64, lo - p0, hi - lo + 1, offsets, path));
    for (int64_t k = 0; k < hi - lo; k++)
        STRUX_CHECK(offsets[k] >= 0 && offsets[k] <= offsets[k + 1] && offsets[k + 1] <= bytes,
                    STRUX_ERR_INPUT,
                    "%s: checkpoint/%s: the record of example %lld is not within its %lld bytes",
                    path, on, (long long)(lo + k), (long long)bytes);
    int64_t start = offsets[0], count = offsets[hi - lo] - start;
    size_t at = state->n;
    STRUX_TRY(strux_blob_put(state, NULL, (size_t)count));
    STRUX_TRY(h5_read(g, en, H5T_NATIVE_UINT8, start, count, state->data + at, path));
    for (int64_t k = 0; k <= hi - lo; k++) /* offsets from the part's to the state's */
        offsets[k] = offsets[k] - start + (int64_t)at;
    return STRUX_OK;
}

strux_status strux_io_checkpoint_read_examples(const char *path, int64_t first, int64_t n,
                                               int64_t *offsets, strux_blob *state)
{
    hid_t f, g;
    STRUX_TRY(open_group(path, &f, &g));
    strux_checkpoint_info ck;
    int64_t *parts = NULL, n_parts = 0;
    strux_status st = read_attributes(g, path, &ck);
    if (st == STRUX_OK && !(first >= 0 && n >= 0 && first + n <= ck.n_examples))
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: holds the state of %lld examples, not of examples %lld..%lld "
                             "(another training file?)",
                             path, (long long)ck.n_examples, (long long)first + 1,
                             (long long)(first + n));
    if (st == STRUX_OK) st = read_parts(g, path, ck.n_examples, &parts, &n_parts);
    offsets[0] = (int64_t)state->n;
    for (int64_t p = 0; st == STRUX_OK && p < n_parts; p++) {
        int64_t lo = parts[p] > first ? parts[p] : first;
        int64_t hi = parts[p + 1] < first + n ? parts[p + 1] : first + n;
        if (lo >= hi) continue;
        st = read_part(g, path, p, parts[p], parts[p + 1] - parts[p], lo, hi,
                       offsets + (lo - first), state);
    }
    strux_free(&parts);
    H5Gclose(g);
    H5Fclose(f);
    return st;
}
