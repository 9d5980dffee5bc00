/* io/model_rta.c - the /rta group of a model file (docs/model-format.md "rta"): the spanning-tree
 * ensemble of task.type = rta, so predict and eval rebuild it from the file instead of drawing it
 * again. /rta/trees int32 (n, L−1, 2) parent→child in root order, /rta/edges int32 (|E_u|, 2),
 * /rta/multiplicity int32 (|E_u|), attributes n_trees, n_labels, kbest, tree_seed, tree_sampler.
 * Reading checks shapes and ranges only; whether the trees span the labels and agree with the
 * union edges is the task's check (strux_task_set_trees). */
#include "h5.h"

#include <string.h>

#define GROUP "rta"

static strux_status write_trees_3d(hid_t g, const char *path, const strux_tree_set *ts)
{
    hsize_t dims[3] = {(hsize_t)ts->n_trees, (hsize_t)(ts->n_labels - 1), 2};
    hid_t sp = H5Screate_simple(3, dims, NULL);
    hid_t d = H5Dcreate2(g, "trees", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc =
        d < 0 ? -1 : H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, ts->trees);
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    STRUX_CHECK(rc >= 0, STRUX_ERR_IO, "%s: cannot write dataset '/rta/trees'", path);
    return STRUX_OK;
}

strux_status h5_trees_write(hid_t f, const char *path, const strux_tree_set *ts)
{
    if (ts->n_trees <= 0) return STRUX_OK;
    hid_t g = H5Gcreate2(f, GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_IO, "%s: cannot create group '/rta'", path);
    strux_status st = STRUX_OK;
    hsize_t dims[2] = {(hsize_t)ts->n_edges, 2};
    STRUX_TRY_GOTO(st, h5_attr_i64(g, "n_trees", ts->n_trees, path), done);
    STRUX_TRY_GOTO(st, h5_attr_i64(g, "n_labels", ts->n_labels, path), done);
    STRUX_TRY_GOTO(st, h5_attr_i64(g, "kbest", ts->kbest, path), done);
    STRUX_TRY_GOTO(st, h5_attr_i64(g, "tree_seed", ts->tree_seed, path), done);
    STRUX_TRY_GOTO(st, h5_attr_str(g, "tree_sampler", ts->sampler, path), done);
    STRUX_TRY_GOTO(st, write_trees_3d(g, path, ts), done);
    STRUX_TRY_GOTO(st, h5_write(g, "edges", H5T_NATIVE_INT32, 2, dims, ts->edges, path), done);
    STRUX_TRY_GOTO(st, h5_write(g, "multiplicity", H5T_NATIVE_INT32, 1, dims, ts->mult, path),
                   done);
done:
    H5Gclose(g);
    return st;
}

/* The 3-D extents of /rta/trees must be (n, L−1, 2). */
static strux_status check_trees_shape(hid_t g, const char *path, const strux_tree_set *ts)
{
    hid_t d = H5Dopen2(g, "trees", H5P_DEFAULT);
    STRUX_CHECK(d >= 0, STRUX_ERR_INPUT, "%s: group '/rta' has no dataset 'trees'", path);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[3] = {0, 0, 0};
    int r = H5Sget_simple_extent_ndims(sp);
    if (r == 3) H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    H5Dclose(d);
    STRUX_CHECK(r == 3 && dims[0] == (hsize_t)ts->n_trees &&
                    dims[1] == (hsize_t)(ts->n_labels - 1) && dims[2] == 2,
                STRUX_ERR_INPUT,
                "%s: dataset '/rta/trees' has shape (%llu, %llu, %llu) with %d dimension(s); "
                "attributes n_trees = %d and n_labels = %d need (%d, %d, 2)",
                path, (unsigned long long)dims[0], (unsigned long long)dims[1],
                (unsigned long long)dims[2], r, ts->n_trees, ts->n_labels, ts->n_trees,
                ts->n_labels - 1);
    return STRUX_OK;
}

static strux_status read_group(hid_t g, const char *path, strux_tree_set *ts)
{
    int64_t n, L, e[2], m;
    STRUX_TRY(h5_read_attr_i64(g, "n_trees", &n, path));
    STRUX_TRY(h5_read_attr_i64(g, "n_labels", &L, path));
    STRUX_TRY(h5_read_attr_i64(g, "kbest", &ts->kbest, path));
    STRUX_TRY(h5_read_attr_i64(g, "tree_seed", &ts->tree_seed, path));
    STRUX_TRY(h5_read_attr_str(g, "tree_sampler", ts->sampler, sizeof ts->sampler, path));
    STRUX_CHECK(n >= 1 && n <= 1024 && L >= 2 && L <= (1 << 20), STRUX_ERR_INPUT,
                "%s: group '/rta' has n_trees = %lld (expected 1..1024) and n_labels = %lld "
                "(expected at least 2)",
                path, (long long)n, (long long)L);
    ts->n_trees = (int32_t)n;
    ts->n_labels = (int32_t)L;
    STRUX_TRY(check_trees_shape(g, path, ts));
    STRUX_TRY(h5_shape(g, "edges", 2, e, path));
    STRUX_TRY(h5_shape(g, "multiplicity", 1, &m, path));
    STRUX_CHECK(e[1] == 2 && e[0] == m && m >= 1 && m <= n * (L - 1), STRUX_ERR_INPUT,
                "%s: '/rta/edges' is %lld x %lld and '/rta/multiplicity' has %lld entries; "
                "expected |E_u| x 2 and |E_u| with 1 <= |E_u| <= n_trees·(n_labels − 1) = %lld",
                path, (long long)e[0], (long long)e[1], (long long)m, (long long)(n * (L - 1)));
    ts->n_edges = (int32_t)m;
    STRUX_TRY(strux_alloc_array(&ts->trees, (size_t)(n * (L - 1) * 2), sizeof *ts->trees));
    STRUX_TRY(strux_alloc_array(&ts->edges, (size_t)(2 * m), sizeof *ts->edges));
    STRUX_TRY(strux_alloc_array(&ts->mult, (size_t)m, sizeof *ts->mult));
    STRUX_TRY(h5_read(g, "trees", H5T_NATIVE_INT32, 0, -1, ts->trees, path));
    STRUX_TRY(h5_read(g, "edges", H5T_NATIVE_INT32, 0, -1, ts->edges, path));
    STRUX_TRY(h5_read(g, "multiplicity", H5T_NATIVE_INT32, 0, -1, ts->mult, path));
    return STRUX_OK;
}

strux_status h5_trees_read(hid_t f, const char *path, strux_tree_set *ts)
{
    *ts = (strux_tree_set){0};
    if (!h5_has(f, GROUP)) return STRUX_OK;
    hid_t g = H5Gopen2(f, GROUP, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_INPUT, "%s: cannot open group '/rta'", path);
    strux_status st = read_group(g, path, ts);
    H5Gclose(g);
    if (st != STRUX_OK) {
        strux_tree_set_free(ts);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    return STRUX_OK;
}
