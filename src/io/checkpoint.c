/* io/checkpoint.c - checkpoint files (docs/model-format.md "Checkpoints"): the model file of the
 * run so far, plus /checkpoint with the epoch, the rank and block counts, time and oracle calls
 * so far, the weights in training space (before data.scale is folded in; only when they differ
 * from the exported /weights or those are float, so the weights are stored once otherwise), the state every rank
 * shares (`shared`: the driver's hooks, the solver's global state) and one blob per data block
 * (block_<b>: the solver's and search's state of its examples), opaque bytes. Written under a
 * temporary name and renamed, so a reader never sees a partial checkpoint and the previous one
 * survives a failed write. */
#include "h5.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

struct strux_checkpoint_writer {
    hid_t f, g; /* the file and its /checkpoint group */
    char path[4096];
    char tmp[4200];
    int32_t n_blocks; /* block blobs expected */
    int32_t added;    /* block blobs written */
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
    w->n_blocks = ck->n_blocks;
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

strux_status strux_io_checkpoint_add(strux_checkpoint_writer *w, int32_t block, const void *data,
                                     size_t n)
{
    STRUX_CHECK(block == w->added && block < w->n_blocks, STRUX_ERR_INTERNAL,
                "checkpoint blob of block %d after %d of %d", block, w->added, w->n_blocks);
    char name[32];
    snprintf(name, sizeof name, "block_%d", block);
    STRUX_TRY(h5_write_bytes(w->g, name, data, n, w->path));
    w->added++;
    return STRUX_OK;
}

strux_status strux_io_checkpoint_end(strux_checkpoint_writer **wp, strux_status st)
{
    strux_checkpoint_writer *w = *wp;
    if (!w) return st;
    if (st == STRUX_OK && w->added != w->n_blocks)
        st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                             "%s: %d of %d block states written", w->path, w->added, w->n_blocks);
    if (w->g >= 0) H5Gclose(w->g);
    st = h5_finish_temp(w->f, w->tmp, w->path, st);
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

static strux_status read_group(hid_t f, hid_t g, const char *path, strux_checkpoint_info *ck,
                               strux_model *w_train, strux_blob *shared)
{
    int64_t n_ranks, n_blocks;
    STRUX_TRY(h5_read_attr_i64(g, "epoch", &ck->epoch, path));
    STRUX_TRY(h5_read_attr_i64(g, "n_ranks", &n_ranks, path));
    STRUX_CHECK(h5_has(g, "n_blocks"), STRUX_ERR_INPUT,
                "%s: a checkpoint without data blocks (written by an older strux); it cannot be "
                "resumed by this version",
                path);
    STRUX_TRY(h5_read_attr_i64(g, "n_blocks", &n_blocks, path));
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

strux_status strux_io_checkpoint_read_block(const char *path, int32_t block, strux_blob *state)
{
    hid_t f, g;
    STRUX_TRY(open_group(path, &f, &g));
    char name[32];
    snprintf(name, sizeof name, "block_%d", block);
    strux_status st = read_bytes(g, name, path, state);
    H5Gclose(g);
    H5Fclose(f);
    return st;
}
