/* io/model_hier.c - the /hierarchy group of a model file (docs/model-format.md "hierarchy"): the
 * trained hierarchy task's node order and parents and its node weights α, so predict and eval
 * rebuild the task from the file alone (stop leaves included, no task.hierarchy needed).
 * /hierarchy/node_id int64 (M) file ids in model order (the virtual root −1, the stop leaf of
 * file node p −2 − p), /hierarchy/parent_ptr int64 (M + 1), /hierarchy/parent_idx int32
 * (parent_ptr[M]), /hierarchy/alpha float64 (M); root attributes hierarchy (tree|dag),
 * hierarchy_model (flat|hsvm|nhsvm|ssvm), label_space (single|multi). Reading checks shapes,
 * the CSR and the topological order (every parent index below its child's); whether the edges
 * rebuild the stored order is the task's check (strux_task_hierarchy_use_stored). */
#include "h5.h"

#include <math.h>
#include <string.h>

#define GROUP "hierarchy"

strux_status h5_hier_write(hid_t f, const char *path, const strux_hier_stored *hs)
{
    if (hs->n_nodes <= 0) return STRUX_OK;
    STRUX_TRY(h5_attr_str(f, "hierarchy", hs->kind, path));
    STRUX_TRY(h5_attr_str(f, "hierarchy_model", hs->model, path));
    STRUX_TRY(h5_attr_str(f, "label_space", hs->label_space, path));
    hid_t g = H5Gcreate2(f, GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_IO, "%s: cannot create group '/hierarchy'", path);
    strux_status st = STRUX_OK;
    hsize_t m = (hsize_t)hs->n_nodes, m1 = m + 1, e = (hsize_t)hs->parent_ptr[hs->n_nodes];
    STRUX_TRY_GOTO(st, h5_write(g, "node_id", H5T_NATIVE_INT64, 1, &m, hs->node_id, path), done);
    STRUX_TRY_GOTO(st, h5_write(g, "parent_ptr", H5T_NATIVE_INT64, 1, &m1, hs->parent_ptr, path),
                   done);
    STRUX_TRY_GOTO(st, h5_write(g, "parent_idx", H5T_NATIVE_INT32, 1, &e, hs->parent_idx, path),
                   done);
    STRUX_TRY_GOTO(st, h5_write(g, "alpha", H5T_NATIVE_DOUBLE, 1, &m, hs->alpha, path), done);
done:
    H5Gclose(g);
    return st;
}

static strux_status read_group(hid_t f, hid_t g, const char *path, strux_hier_stored *hs)
{
    STRUX_TRY(h5_read_attr_str(f, "hierarchy", hs->kind, sizeof hs->kind, path));
    STRUX_TRY(h5_read_attr_str(f, "hierarchy_model", hs->model, sizeof hs->model, path));
    STRUX_TRY(h5_read_attr_str(f, "label_space", hs->label_space, sizeof hs->label_space, path));
    STRUX_CHECK(strcmp(hs->kind, "tree") == 0 || strcmp(hs->kind, "dag") == 0, STRUX_ERR_INPUT,
                "%s: attribute hierarchy = '%s' (expected tree or dag)", path, hs->kind);
    STRUX_CHECK(strcmp(hs->label_space, "single") == 0 || strcmp(hs->label_space, "multi") == 0,
                STRUX_ERR_INPUT, "%s: attribute label_space = '%s' (expected single or multi)",
                path, hs->label_space);
    int64_t m, m1, e, a;
    STRUX_TRY(h5_shape(g, "node_id", 1, &m, path));
    STRUX_TRY(h5_shape(g, "parent_ptr", 1, &m1, path));
    STRUX_TRY(h5_shape(g, "parent_idx", 1, &e, path));
    STRUX_TRY(h5_shape(g, "alpha", 1, &a, path));
    STRUX_CHECK(m >= 1 && m < (1 << 30) && m1 == m + 1 && a == m, STRUX_ERR_INPUT,
                "%s: '/hierarchy' has %lld node ids, %lld parent offsets and %lld alphas; "
                "expected M, M + 1 and M with M >= 1",
                path, (long long)m, (long long)m1, (long long)a);
    hs->n_nodes = (int32_t)m;
    STRUX_TRY(strux_alloc_array(&hs->node_id, (size_t)m, sizeof *hs->node_id));
    STRUX_TRY(strux_alloc_array(&hs->parent_ptr, (size_t)m1, sizeof *hs->parent_ptr));
    STRUX_TRY(strux_alloc_array(&hs->parent_idx, (size_t)e + 1, sizeof *hs->parent_idx));
    STRUX_TRY(strux_alloc_array(&hs->alpha, (size_t)m, sizeof *hs->alpha));
    STRUX_TRY(h5_read(g, "node_id", H5T_NATIVE_INT64, 0, -1, hs->node_id, path));
    STRUX_TRY(h5_read(g, "parent_ptr", H5T_NATIVE_INT64, 0, -1, hs->parent_ptr, path));
    if (e > 0) STRUX_TRY(h5_read(g, "parent_idx", H5T_NATIVE_INT32, 0, -1, hs->parent_idx, path));
    STRUX_TRY(h5_read(g, "alpha", H5T_NATIVE_DOUBLE, 0, -1, hs->alpha, path));
    STRUX_CHECK(hs->parent_ptr[0] == 0 && hs->parent_ptr[m] == e, STRUX_ERR_INPUT,
                "%s: '/hierarchy/parent_ptr' runs from %lld to %lld; expected 0 to %lld", path,
                (long long)hs->parent_ptr[0], (long long)hs->parent_ptr[m], (long long)e);
    for (int32_t k = 0; k < hs->n_nodes; k++) {
        STRUX_CHECK(hs->parent_ptr[k + 1] >= hs->parent_ptr[k] && (k == 0) == (hs->parent_ptr[k + 1] == hs->parent_ptr[k]),
                    STRUX_ERR_INPUT,
                    "%s: '/hierarchy/parent_ptr' gives node %d %lld parents (the root, node 0, "
                    "has none; every other node at least one)",
                    path, k, (long long)(hs->parent_ptr[k + 1] - hs->parent_ptr[k]));
        for (int64_t q = hs->parent_ptr[k]; q < hs->parent_ptr[k + 1]; q++)
            STRUX_CHECK(hs->parent_idx[q] >= 0 && hs->parent_idx[q] < k, STRUX_ERR_INPUT,
                        "%s: '/hierarchy/parent_idx' names parent %d of node %d (expected a "
                        "node index below %d)",
                        path, hs->parent_idx[q], k, k);
        STRUX_CHECK(hs->alpha[k] >= 0 && isfinite(hs->alpha[k]), STRUX_ERR_INPUT,
                    "%s: '/hierarchy/alpha' of node %d is %g (expected a finite value >= 0)",
                    path, k, hs->alpha[k]);
    }
    return STRUX_OK;
}

strux_status h5_hier_read(hid_t f, const char *path, strux_hier_stored *hs)
{
    *hs = (strux_hier_stored){0};
    if (!h5_has(f, GROUP)) return STRUX_OK;
    hid_t g = H5Gopen2(f, GROUP, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_INPUT, "%s: cannot open group '/hierarchy'", path);
    strux_status st = read_group(f, g, path, hs);
    H5Gclose(g);
    if (st != STRUX_OK) {
        strux_hier_stored_free(hs);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    return STRUX_OK;
}
