/* tasks/multilabel.c - multi-label output with independent labels and Hamming loss
 * (slack_bicriteria.md §2.4(a)): y ∈ {0,1}^L, f(y) = Σ_k y_k·(w_k·x), one weight row per label,
 * L(y, y_i) = Σ_k [y_k ≠ y_ik]. Potentials: s[k] = score of y_k = 1 (y_k = 0 scores 0).
 * The direction oracle decomposes per label. Metrics: Hamming loss, subset accuracy, micro-,
 * macro- and example-F1 (multilabel_metrics.c). Knows nothing of MPI, searches or solvers. */
#include "task_impl.h"

#include <stdio.h>
#include <string.h>

static strux_status ml_check(strux_task *t, const strux_dataset *ds)
{
    STRUX_CHECK(ds->n_labels > 0, STRUX_ERR_INPUT, "%s: no labels: multilabel needs at least one",
                ds->path);
    STRUX_CHECK(ds->ex_ptr == NULL, STRUX_ERR_INPUT,
                "%s: holds sequences; the multilabel task needs one row per example", ds->path);
    STRUX_CHECK(t->n_labels == 0 || t->n_labels == ds->n_labels, STRUX_ERR_INPUT,
                "%s: %d labels where the task has %d", ds->path, ds->n_labels, t->n_labels);
    t->n_labels = ds->n_labels;
    return STRUX_OK;
}

static strux_status ml_model_shape(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                   int64_t *n_extra)
{
    (void)t;
    *n_rows = ds->n_labels;
    *n_extra = 0;
    return STRUX_OK;
}

static strux_status ml_sizes(const strux_task *t, const strux_dataset *ds, int32_t *max_parts,
                             int64_t *max_pot, int64_t *max_mu)
{
    (void)t;
    *max_parts = ds->n_labels;
    *max_pot = ds->n_labels;
    *max_mu = 0;
    return STRUX_OK;
}

static strux_status ml_potentials(const strux_task *t, const strux_model *m,
                                  const strux_dataset *ds, int64_t i, strux_pot *pot)
{
    int32_t L = t->n_labels;
    STRUX_CHECK(m->n_rows == L && m->dim >= ds->dim, STRUX_ERR_INTERNAL,
                "model %d x %d does not fit %d labels x %d features", m->n_rows, m->dim, L,
                ds->dim);
    pot->i = i;
    pot->n_parts = L;
    pot->n_states = 2;
    for (int32_t k = 0; k < L; k++)
        pot->s[k] = strux_spdot(&ds->x, i, strux_model_row(m, k));
    return STRUX_OK;
}

static strux_status ml_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                             strux_label *y)
{
    y->n = t->n_labels;
    y->n_mu = 0;
    memset(y->y, 0, (size_t)y->n * sizeof *y->y);
    for (int64_t p = ds->y_ptr[i]; p < ds->y_ptr[i + 1]; p++) y->y[ds->y_idx[p]] = 1;
    return STRUX_OK;
}

static double ml_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    (void)t;
    double e = 0;
    for (int32_t k = 0; k < y->n; k++) e += y->y[k] != truth->y[k];
    return e;
}

static double ml_size(const strux_task *t, const strux_label *y)
{
    (void)t;
    double n = 0;
    for (int32_t k = 0; k < y->n; k++) n += y->y[k];
    return n;
}

static double ml_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    (void)t;
    double f = 0;
    for (int32_t k = 0; k < y->n; k++)
        if (y->y[k]) f += pot->s[k];
    return f;
}

/* argmax_y a·m(y) + b·L(y, y_i) + c·|y|: label k leaves the truth iff
 * a·gain_k + b + c·(1 − 2y_ik) > 0, with gain_k = s_k·(1 − 2y_ik) the margin change of the flip;
 * ties keep the truth. */
static strux_status ml_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                              const strux_query *q, strux_label *y, strux_answer *ans)
{
    if (q->wedge || q->n_ban > 0)
        return strux_error_set(STRUX_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                               "task '%s' does not support constrained or banned oracle queries",
                               t->type_name);
    double m = 0, g = 0, size = 0;
    y->n = t->n_labels;
    y->n_mu = 0;
    for (int32_t k = 0; k < y->n; k++) {
        int yt = truth->y[k];
        double sign = yt ? -1.0 : 1.0;
        double gain = sign * pot->s[k];
        int flip = q->a * gain + q->b + q->c * sign > 0;
        y->y[k] = flip ? !yt : yt;
        if (flip) {
            m += gain;
            g += 1;
        }
        size += y->y[k];
    }
    ans->found = 1;
    ans->m = m;
    ans->g = g;
    ans->size = size;
    return STRUX_OK;
}

static strux_status ml_predict(const strux_task *t, const strux_pot *pot, strux_label *y)
{
    y->n = t->n_labels;
    y->n_mu = 0;
    for (int32_t k = 0; k < y->n; k++) y->y[k] = pot->s[k] > 0;
    return STRUX_OK;
}

static strux_status ml_add_feature(const strux_task *t, const strux_dataset *ds, int64_t i,
                                   const strux_label *y, double scale, double *G)
{
    (void)t;
    int64_t dim = ds->dim;
    for (int32_t k = 0; k < y->n; k++)
        if (y->y[k]) strux_spaxpy(&ds->x, i, scale, G + k * dim);
    return STRUX_OK;
}

static strux_status ml_add_delta(const strux_task *t, const strux_dataset *ds, int64_t i,
                                 const strux_label *y, const strux_label *truth, double scale,
                                 double *G)
{
    (void)t;
    int64_t dim = ds->dim;
    for (int32_t k = 0; k < y->n; k++)
        if (y->y[k] != truth->y[k])
            strux_spaxpy(&ds->x, i, y->y[k] ? scale : -scale, G + k * dim);
    return STRUX_OK;
}

static int64_t ml_eval_size(const strux_task *t)
{
    return strux_mlmetrics_size(t->n_labels);
}

static strux_status ml_eval_add(const strux_task *t, const strux_label *pred,
                                const strux_label *truth, double *acc)
{
    strux_mlmetrics_add(t->n_labels, pred, truth, acc);
    return STRUX_OK;
}

static strux_status ml_eval_report(const strux_task *t, const double *acc, char *buf, size_t n)
{
    strux_mlmetrics_report(t->n_labels, acc, buf, n);
    return STRUX_OK;
}

static strux_status ml_format_label(const strux_task *t, const strux_label *y, char *buf,
                                    size_t n)
{
    (void)t;
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t k = 0; k < y->n; k++) {
        if (!y->y[k]) continue;
        int w = snprintf(buf + used, n - used, used ? ",%d" : "%d", k);
        STRUX_CHECK(w > 0 && (size_t)w < n - used, STRUX_ERR_INTERNAL,
                    "label text longer than %zu bytes", n);
        used += (size_t)w;
    }
    return STRUX_OK;
}

static int64_t ml_label_count(const strux_task *t, const strux_pot *pot)
{
    (void)pot;
    return t->n_labels <= 30 ? (int64_t)1 << t->n_labels : -1;
}

static strux_status ml_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                strux_label *y)
{
    (void)pot;
    y->n = t->n_labels;
    y->n_mu = 0;
    for (int32_t k = 0; k < y->n; k++) y->y[k] = (int32_t)((index >> k) & 1);
    return STRUX_OK;
}

static const struct strux_task_ops multilabel_ops = {
    .check = ml_check,
    .model_shape = ml_model_shape,
    .sizes = ml_sizes,
    .potentials = ml_potentials,
    .truth = ml_truth,
    .oracle = ml_oracle,
    .loss = ml_loss,
    .size = ml_size,
    .score = ml_score,
    .predict = ml_predict,
    .add_feature = ml_add_feature,
    .add_delta = ml_add_delta,
    .eval_size = ml_eval_size,
    .eval_add = ml_eval_add,
    .eval_report = ml_eval_report,
    .format_label = ml_format_label,
    .label_count = ml_label_count,
    .label_at = ml_label_at,
};

strux_status strux_task_create_multilabel(const strux_task_options *opt, strux_task *t)
{
    (void)opt;
    t->ops = &multilabel_ops;
    return STRUX_OK;
}
