/* io/model_m3l.c - the group /m3l of a model trained by solver.type = m3l (docs/model-format.md,
 * issue 16 "Model"): /m3l/R (float64 L×L, the prior as used) and the attributes prior,
 * empirical, shrink, source, eig_min, eig_max, lambda, C_paper. The weights Z stay in /weights,
 * so predict, eval and scripts/strux_model.py read an m3l model like any multilabel model. */
#include "h5.h"

#include <math.h>

#define GROUP "m3l"

strux_status h5_m3l_write(hid_t f, const char *path, const strux_m3l_info *m)
{
    if (m->n_labels <= 0) return STRUX_OK;
    hid_t g = H5Gcreate2(f, GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_IO, "%s: cannot create group '/m3l'", path);
    strux_status st = STRUX_OK;
    hsize_t dims[2] = {(hsize_t)m->n_labels, (hsize_t)m->n_labels};
    STRUX_TRY_GOTO(st, h5_attr_str(g, "prior", m->prior, path), done);
    STRUX_TRY_GOTO(st, h5_attr_str(g, "empirical", m->empirical, path), done);
    STRUX_TRY_GOTO(st, h5_attr_str(g, "source", m->source, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "shrink", m->shrink, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "eig_min", m->eig_min, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "eig_max", m->eig_max, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "lambda", m->lambda, path), done);
    STRUX_TRY_GOTO(st, h5_attr_f64(g, "C_paper", m->C_paper, path), done);
    STRUX_TRY_GOTO(st, h5_write(g, "R", H5T_NATIVE_DOUBLE, 2, dims, m->R, path), done);
done:
    H5Gclose(g);
    return st;
}

static strux_status read_group(hid_t g, const char *path, strux_m3l_info *m)
{
    int64_t dims[2];
    STRUX_TRY(h5_shape(g, "R", 2, dims, path));
    STRUX_CHECK(dims[0] == dims[1] && dims[0] > 0 && dims[0] < INT32_MAX, STRUX_ERR_INPUT,
                "%s: dataset '/m3l/R' is %lld x %lld, not a square prior", path,
                (long long)dims[0], (long long)dims[1]);
    STRUX_TRY(h5_read_attr_str(g, "prior", m->prior, sizeof m->prior, path));
    STRUX_TRY(h5_read_attr_str(g, "empirical", m->empirical, sizeof m->empirical, path));
    STRUX_TRY(h5_read_attr_str(g, "source", m->source, sizeof m->source, path));
    STRUX_TRY(h5_read_attr_f64(g, "shrink", &m->shrink, path));
    STRUX_TRY(h5_read_attr_f64(g, "eig_min", &m->eig_min, path));
    STRUX_TRY(h5_read_attr_f64(g, "eig_max", &m->eig_max, path));
    STRUX_TRY(h5_read_attr_f64(g, "lambda", &m->lambda, path));
    STRUX_TRY(h5_read_attr_f64(g, "C_paper", &m->C_paper, path));
    STRUX_TRY(strux_alloc_array(&m->R, (size_t)(dims[0] * dims[1]), sizeof *m->R));
    m->n_labels = (int32_t)dims[0];
    STRUX_TRY(h5_read(g, "R", H5T_NATIVE_DOUBLE, 0, -1, m->R, path));
    for (int64_t j = 0; j < dims[0] * dims[1]; j++)
        STRUX_CHECK(isfinite(m->R[j]), STRUX_ERR_INPUT,
                    "%s: dataset '/m3l/R' holds a non-finite value at (%lld, %lld)", path,
                    (long long)(j / dims[0]), (long long)(j % dims[0]));
    return STRUX_OK;
}

strux_status h5_m3l_read(hid_t f, const char *path, strux_m3l_info *m)
{
    *m = (strux_m3l_info){0};
    if (!h5_has(f, GROUP)) return STRUX_OK;
    hid_t g = H5Gopen2(f, GROUP, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_INPUT, "%s: cannot open group '/m3l'", path);
    strux_status st = read_group(g, path, m);
    H5Gclose(g);
    if (st != STRUX_OK) {
        strux_free(&m->R);
        m->n_labels = 0;
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    return STRUX_OK;
}
