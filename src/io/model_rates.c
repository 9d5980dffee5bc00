/* io/model_rates.c - the /rates group of a model file (docs/model-format.md "rates"): what
 * rate-constrained training (issue 15, dataset_constraints.md) adds to the deterministic weights.
 *   /rates/names        string (m)        constraint names, config order
 *   /rates/texts        string (m)        constraint expressions as written
 *   /rates/dataset_names, /rates/dataset_texts  string (n_defs)  the [datasets] definitions
 *   /rates/canonical    string (m + 1)    canonical rows (§1.4), the objective first
 *   /rates/v            f64 (m)           multipliers of the last multiplier search
 *   /rates/train_ramp   f64 (m)           ramp (randomised) train value − bound
 *   /rates/train_value  f64 (m)           indicator (deterministic) train value − bound
 *   /rates/test_value   f64 (m)           the same on data.test (NaN without one)
 *   /rates/baseline_paths string (n_base) `baseline PATH` paths as written
 *   /rates/baseline_is_model i32 (n_base) 1: a binary model, 0: a file of training predictions
 *   /rates/baseline_weights f64 (n_base, n_w) the baseline models' weights (zeros for a file)
 *   /rates/mix_weights  f64 (n_mix, n_w)  the randomised classifier's iterates, label-major
 *   /rates/mix_mu       f64 (n_mix)       their LP dual weights (sum 1)
 *   attributes m, n_defs, n_mix, n_base, n_violated (constraints still violated when training
 *   ended under rates.on_violation = keep), v_max, mm_steps.
 * strux eval rebuilds the datasets and constraints from them (/config holds the resolved
 * options only). Reading checks
 * shapes, finiteness and that the weights μ are a distribution. */
#include "h5.h"

#include <math.h>
#include <string.h>

#define GROUP "rates"

void strux_rates_store_free(strux_rates_store *s)
{
    if (s->names)
        for (int32_t j = 0; j < s->m; j++)
            strux_free(&s->names[j]);
    if (s->canonical)
        for (int32_t j = 0; j <= s->m; j++)
            strux_free(&s->canonical[j]);
    if (s->texts)
        for (int32_t j = 0; j < s->m; j++)
            strux_free(&s->texts[j]);
    for (int32_t k = 0; k < s->n_defs; k++) {
        if (s->def_names) strux_free(&s->def_names[k]);
        if (s->def_texts) strux_free(&s->def_texts[k]);
    }
    strux_free(&s->texts);
    strux_free(&s->def_names);
    strux_free(&s->def_texts);
    strux_free(&s->names);
    strux_free(&s->canonical);
    strux_free(&s->v);
    strux_free(&s->train_ramp);
    strux_free(&s->train_value);
    strux_free(&s->test_value);
    if (s->base_paths)
        for (int32_t k = 0; k < s->n_base; k++)
            strux_free(&s->base_paths[k]);
    strux_free(&s->base_paths);
    strux_free(&s->base_is_model);
    strux_free(&s->base_w);
    strux_free(&s->mix_w);
    strux_free(&s->mix_mu);
    *s = (strux_rates_store){0};
}

static strux_status write_group(hid_t g, const char *path, const strux_rates_store *s)
{
    hsize_t m = (hsize_t)s->m, mix[2] = {(hsize_t)s->n_mix, (hsize_t)s->n_w};
    STRUX_TRY(h5_attr_i64(g, "m", s->m, path));
    STRUX_TRY(h5_attr_i64(g, "n_mix", s->n_mix, path));
    STRUX_TRY(h5_attr_i64(g, "mm_steps", s->mm_steps, path));
    STRUX_TRY(h5_attr_f64(g, "v_max", s->v_max, path));
    STRUX_TRY(h5_attr_i64(g, "n_defs", s->n_defs, path));
    STRUX_TRY(h5_write_str_array(g, "names", s->names, s->m, path));
    STRUX_TRY(h5_write_str_array(g, "texts", s->texts, s->m, path));
    if (s->n_defs) {
        STRUX_TRY(h5_write_str_array(g, "dataset_names", s->def_names, s->n_defs, path));
        STRUX_TRY(h5_write_str_array(g, "dataset_texts", s->def_texts, s->n_defs, path));
    }
    STRUX_TRY(h5_write_str_array(g, "canonical", s->canonical, s->m + 1, path));
    STRUX_TRY(h5_write(g, "v", H5T_NATIVE_DOUBLE, 1, &m, s->v, path));
    STRUX_TRY(h5_write(g, "train_ramp", H5T_NATIVE_DOUBLE, 1, &m, s->train_ramp, path));
    STRUX_TRY(h5_write(g, "train_value", H5T_NATIVE_DOUBLE, 1, &m, s->train_value, path));
    STRUX_TRY(h5_write(g, "test_value", H5T_NATIVE_DOUBLE, 1, &m, s->test_value, path));
    STRUX_TRY(h5_write(g, "mix_weights", H5T_NATIVE_DOUBLE, 2, mix, s->mix_w, path));
    STRUX_TRY(h5_write(g, "mix_mu", H5T_NATIVE_DOUBLE, 1, mix, s->mix_mu, path));
    STRUX_TRY(h5_attr_i64(g, "n_violated", s->n_violated, path));
    STRUX_TRY(h5_attr_i64(g, "n_base", s->n_base, path));
    if (!s->n_base) return STRUX_OK;
    hsize_t nb = (hsize_t)s->n_base, bw[2] = {(hsize_t)s->n_base, (hsize_t)s->n_w};
    STRUX_TRY(h5_write_str_array(g, "baseline_paths", s->base_paths, s->n_base, path));
    STRUX_TRY(h5_write(g, "baseline_is_model", H5T_NATIVE_INT32, 1, &nb, s->base_is_model, path));
    return h5_write(g, "baseline_weights", H5T_NATIVE_DOUBLE, 2, bw, s->base_w, path);
}

strux_status h5_rates_write(hid_t f, const char *path, const strux_rates_store *s)
{
    if (s->m <= 0) return STRUX_OK;
    hid_t g = H5Gcreate2(f, GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_IO, "%s: cannot create group '/rates'", path);
    strux_status st = write_group(g, path, s);
    H5Gclose(g);
    return st;
}

static strux_status read_f64(hid_t g, const char *path, const char *name, int64_t n, double **out)
{
    int64_t dims[1];
    STRUX_TRY(h5_shape(g, name, 1, dims, path));
    STRUX_CHECK(dims[0] == n, STRUX_ERR_INPUT, "%s: /rates/%s has %lld entries, expected %lld",
                path, name, (long long)dims[0], (long long)n);
    STRUX_TRY(strux_alloc_array(out, (size_t)n + 1, sizeof **out));
    return h5_read(g, name, H5T_NATIVE_DOUBLE, 0, -1, *out, path);
}

/* The baseline models' weights and the prediction files' paths. */
static strux_status read_baselines(hid_t g, const char *path, strux_rates_store *s)
{
    int64_t nb[1], dims[2];
    STRUX_TRY(h5_shape(g, "baseline_is_model", 1, nb, path));
    STRUX_CHECK(nb[0] >= 1 && nb[0] <= 1000, STRUX_ERR_INPUT,
                "%s: /rates holds %lld baselines", path, (long long)nb[0]);
    STRUX_TRY(h5_read_str_array(g, "baseline_paths", &s->base_paths, nb[0], path));
    s->n_base = (int32_t)nb[0]; /* the paths are owned from here */
    STRUX_TRY(strux_alloc_array(&s->base_is_model, (size_t)nb[0], sizeof *s->base_is_model));
    STRUX_TRY(h5_read(g, "baseline_is_model", H5T_NATIVE_INT32, 0, -1, s->base_is_model, path));
    STRUX_TRY(h5_shape(g, "baseline_weights", 2, dims, path));
    STRUX_CHECK(dims[0] == nb[0] && dims[1] == s->n_w, STRUX_ERR_INPUT,
                "%s: /rates/baseline_weights is %lld x %lld, expected %lld x %lld", path,
                (long long)dims[0], (long long)dims[1], (long long)nb[0], (long long)s->n_w);
    STRUX_TRY(strux_alloc_array(&s->base_w, (size_t)(nb[0] * dims[1]), sizeof *s->base_w));
    STRUX_TRY(h5_read(g, "baseline_weights", H5T_NATIVE_DOUBLE, 0, -1, s->base_w, path));
    for (int64_t k = 0; k < nb[0] * dims[1]; k++)
        STRUX_CHECK(isfinite(s->base_w[k]), STRUX_ERR_INPUT,
                    "%s: /rates/baseline_weights entry %lld is not finite", path, (long long)k);
    for (int64_t k = 0; k < nb[0]; k++)
        STRUX_CHECK(s->base_is_model[k] == 0 || s->base_is_model[k] == 1, STRUX_ERR_INPUT,
                    "%s: /rates/baseline_is_model[%lld] = %d", path, (long long)k,
                    s->base_is_model[k]);
    return STRUX_OK;
}

static strux_status read_group(hid_t g, const char *path, strux_rates_store *s)
{
    int64_t m, n_mix, steps, dims[2], n_defs;
    STRUX_TRY(h5_read_attr_i64(g, "m", &m, path));
    STRUX_TRY(h5_read_attr_i64(g, "n_mix", &n_mix, path));
    STRUX_TRY(h5_read_attr_i64(g, "mm_steps", &steps, path));
    STRUX_TRY(h5_read_attr_f64(g, "v_max", &s->v_max, path));
    STRUX_CHECK(m >= 1 && m <= 64 && n_mix >= 1 && n_mix <= m + 1, STRUX_ERR_INPUT,
                "%s: /rates holds m = %lld constraints and n_mix = %lld iterates (need 1 <= m <= "
                "64, 1 <= n_mix <= m + 1)",
                path, (long long)m, (long long)n_mix);
    s->m = (int32_t)m;
    s->n_mix = (int32_t)n_mix;
    s->mm_steps = steps;
    STRUX_TRY(h5_read_attr_i64(g, "n_defs", &n_defs, path));
    STRUX_CHECK(n_defs >= 0 && n_defs <= 1000000, STRUX_ERR_INPUT,
                "%s: /rates holds n_defs = %lld dataset definitions", path, (long long)n_defs);
    STRUX_TRY(h5_read_str_array(g, "names", &s->names, m, path));
    STRUX_TRY(h5_read_str_array(g, "texts", &s->texts, m, path));
    if (n_defs) {
        STRUX_TRY(h5_read_str_array(g, "dataset_names", &s->def_names, n_defs, path));
        s->n_defs = (int32_t)n_defs; /* the names are owned from here */
        STRUX_TRY(h5_read_str_array(g, "dataset_texts", &s->def_texts, n_defs, path));
    }
    STRUX_TRY(h5_read_str_array(g, "canonical", &s->canonical, m + 1, path));
    STRUX_TRY(read_f64(g, path, "v", m, &s->v));
    STRUX_TRY(read_f64(g, path, "train_ramp", m, &s->train_ramp));
    STRUX_TRY(read_f64(g, path, "train_value", m, &s->train_value));
    if (h5_has(g, "test_value")) { /* files of earlier strux lack the test values */
        STRUX_TRY(read_f64(g, path, "test_value", m, &s->test_value));
    } else {
        STRUX_TRY(strux_alloc_array(&s->test_value, (size_t)m, sizeof *s->test_value));
        for (int64_t j = 0; j < m; j++)
            s->test_value[j] = NAN;
    }
    int64_t n_violated = 0;
    if (H5Aexists(g, "n_violated") > 0)
        STRUX_TRY(h5_read_attr_i64(g, "n_violated", &n_violated, path));
    STRUX_CHECK(n_violated >= 0 && n_violated <= m, STRUX_ERR_INPUT,
                "%s: /rates holds n_violated = %lld of %lld constraints", path,
                (long long)n_violated, (long long)m);
    s->n_violated = (int32_t)n_violated;
    STRUX_TRY(read_f64(g, path, "mix_mu", n_mix, &s->mix_mu));
    STRUX_TRY(h5_shape(g, "mix_weights", 2, dims, path));
    STRUX_CHECK(dims[0] == n_mix && dims[1] >= 1, STRUX_ERR_INPUT,
                "%s: /rates/mix_weights is %lld x %lld, expected %lld rows", path,
                (long long)dims[0], (long long)dims[1], (long long)n_mix);
    s->n_w = dims[1];
    STRUX_TRY(strux_alloc_array(&s->mix_w, (size_t)(n_mix * dims[1]), sizeof *s->mix_w));
    STRUX_TRY(h5_read(g, "mix_weights", H5T_NATIVE_DOUBLE, 0, -1, s->mix_w, path));
    double sum = 0;
    for (int64_t k = 0; k < n_mix; k++) {
        STRUX_CHECK(s->mix_mu[k] > 0 && isfinite(s->mix_mu[k]), STRUX_ERR_INPUT,
                    "%s: /rates/mix_mu[%lld] = %g is not a positive weight", path, (long long)k,
                    s->mix_mu[k]);
        sum += s->mix_mu[k];
    }
    STRUX_CHECK(fabs(sum - 1) <= 1e-9, STRUX_ERR_INPUT,
                "%s: /rates/mix_mu sums to %.17g, not 1", path, sum);
    for (int64_t k = 0; k < n_mix * s->n_w; k++)
        STRUX_CHECK(isfinite(s->mix_w[k]), STRUX_ERR_INPUT,
                    "%s: /rates/mix_weights entry %lld is not finite", path, (long long)k);
    for (int64_t j = 0; j < m; j++)
        STRUX_CHECK(isfinite(s->v[j]) && s->v[j] >= 0, STRUX_ERR_INPUT,
                    "%s: /rates/v[%lld] = %g is not a multiplier", path, (long long)j, s->v[j]);
    return h5_has(g, "baseline_paths") ? read_baselines(g, path, s) : STRUX_OK;
}

strux_status h5_rates_read(hid_t f, const char *path, strux_rates_store *s)
{
    *s = (strux_rates_store){0};
    if (!h5_has(f, GROUP)) return STRUX_OK;
    hid_t g = H5Gopen2(f, GROUP, H5P_DEFAULT);
    STRUX_CHECK(g >= 0, STRUX_ERR_INPUT, "%s: cannot open group '/rates'", path);
    strux_status st = read_group(g, path, s);
    H5Gclose(g);
    if (st != STRUX_OK) {
        strux_rates_store_free(s);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    return STRUX_OK;
}
