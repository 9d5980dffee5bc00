/* tasks/binary.c - binary classification (issue 15): LIBSVM binary files (+1/1 positive, -1/0
 * negative, read with strux_read_options.binary_labels into label ids 1 and 0; a line starting
 * with a space is unlabeled), one weight row w (the bias is the data's bias column), score
 * s = w·x, prediction positive iff s ≥ 0 (dataset_constraints.md §0, A14). States: 1 positive, 0
 * negative; f(y) = y·s, so margin rescaling with the 0/1 loss is the hinge max(0, 1 − ŷ·s) of the
 * linear SVM (ŷ = ±1), written as one binary hinge part (strux_task_hinge_parts: SDCA's exact
 * coordinate step, LIBLINEAR's -s 3). An unlabeled example (truth state −1) has no loss: its only
 * label is its truth, with f = 0. Potentials: s[0] = w·x. Metrics over the labeled examples:
 * error_rate, precision, recall, f1; positive_rate over every example; n. Knows nothing of MPI,
 * searches or solvers. */
#include "task_impl.h"

#include <stdio.h>
#include <string.h>

#define UNLABELED (-1) /* truth state of an unlabeled example */

/* Evaluation accumulator layout. */
enum { ACC_N, ACC_LABELED, ACC_TP, ACC_FP, ACC_FN, ACC_PRED_POS, ACC_SIZE };

static strux_status bin_check(strux_task *t, const strux_dataset *ds)
{
    STRUX_CHECK(ds->ex_ptr == NULL, STRUX_ERR_INPUT,
                "%s: holds sequences; the binary task needs one row per example", ds->path);
    STRUX_CHECK(ds->n_labels <= 2, STRUX_ERR_INPUT,
                "%s: %d label ids; the binary task reads +1/1 and -1/0 labels (ids 1 and 0)",
                ds->path, ds->n_labels);
    for (int64_t r = 0; r < ds->n_local; r++) {
        int64_t n = ds->y_ptr[r + 1] - ds->y_ptr[r];
        STRUX_CHECK(n <= 1, STRUX_ERR_INPUT,
                    "%s: row %lld has %lld labels; the binary task needs one (or none: unlabeled)",
                    ds->path, (long long)(ds->first + r + 1), (long long)n);
    }
    t->n_labels = 2;
    return STRUX_OK;
}

static strux_status bin_model_shape(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                    int64_t *n_extra)
{
    (void)t, (void)ds;
    *n_rows = 1;
    *n_extra = 0;
    return STRUX_OK;
}

static strux_status bin_sizes(const strux_task *t, const strux_dataset *ds, int32_t *max_parts,
                              int64_t *max_pot, int64_t *max_mu)
{
    (void)t, (void)ds;
    *max_parts = 1;
    *max_pot = 1;
    *max_mu = 0;
    return STRUX_OK;
}

static double bin_score_row(const strux_model *m, const strux_dataset *ds, int64_t i)
{
    double s;
    strux_model_scores(m, &ds->x, i, 0, 1, &s);
    return s;
}

static strux_status bin_potentials(const strux_task *t, const strux_model *m,
                                   const strux_dataset *ds, int64_t i, strux_pot *pot)
{
    (void)t;
    pot->i = i;
    pot->n_parts = 1;
    pot->n_states = 2;
    pot->s[0] = bin_score_row(m, ds, i);
    return STRUX_OK;
}

static strux_status bin_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                              strux_label *y)
{
    (void)t;
    y->n = 1;
    y->n_mu = 0;
    y->y[0] = ds->y_ptr[i + 1] > ds->y_ptr[i] ? ds->y_idx[ds->y_ptr[i]] : UNLABELED;
    return STRUX_OK;
}

static double bin_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    (void)t;
    return truth->y[0] != UNLABELED && y->y[0] != truth->y[0];
}

static double bin_size(const strux_task *t, const strux_label *y)
{
    (void)t;
    return y->y[0] == 1;
}

static double bin_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    (void)t;
    return y->y[0] == 1 ? pot->s[0] : 0.0;
}

/* argmax over the admitted, unbanned labels of a·m + b·g + c·|y|; an unlabeled truth is the only
 * label of its example (no loss). The first maximiser (the truth first) wins ties. */
static strux_status bin_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                               const strux_query *q, strux_label *y, strux_answer *ans)
{
    int32_t yi = truth->y[0], cand[2] = {yi, 1 - yi}, best = -2;
    int n_cand = yi == UNLABELED ? 1 : 2;
    double v_best = 0, f_truth = yi == 1 ? pot->s[0] : 0.0;
    for (int c = 0; c < n_cand; c++) {
        int32_t k = cand[c];
        double m = (k == 1 ? pot->s[0] : 0.0) - f_truth, g = k != yi && yi != UNLABELED;
        double v = q->a * m + q->b * g + q->c * (k == 1);
        if ((best != -2 && v <= v_best) || !strux_query_admits(q, m, g)) continue;
        strux_label lab = {.n = 1, .cap = 1, .y = &k};
        if (q->n_ban > 0 && strux_query_banned(q, &lab)) continue;
        best = k;
        v_best = v;
    }
    (void)t;
    *ans = (strux_answer){.found = best != -2};
    if (best == -2) return STRUX_OK;
    y->n = 1;
    y->n_mu = 0;
    y->y[0] = best;
    ans->m = (best == 1 ? pot->s[0] : 0.0) - f_truth;
    ans->g = best != yi && yi != UNLABELED;
    ans->size = best == 1;
    return STRUX_OK;
}

static strux_status bin_predict(const strux_task *t, const strux_pot *pot, strux_label *y)
{
    (void)t;
    y->n = 1;
    y->n_mu = 0;
    y->y[0] = pot->s[0] >= 0; /* f(x) ≥ 0 ⇒ positive (A14) */
    return STRUX_OK;
}

static strux_status bin_add_feature(const strux_task *t, const strux_label *y, double scale,
                                    const strux_phi *out)
{
    (void)t;
    if (y->y[0] == 1) strux_phi_row(out, 0, 0, scale);
    return STRUX_OK;
}

static strux_status bin_add_delta(const strux_task *t, const strux_label *y,
                                  const strux_label *truth, double scale, const strux_phi *out)
{
    (void)t;
    if (y->y[0] == truth->y[0]) return STRUX_OK;
    if (y->y[0] == 1) strux_phi_row(out, 0, 0, scale);
    if (truth->y[0] == 1) strux_phi_row(out, 0, 0, -scale);
    return STRUX_OK;
}

static double bin_max_loss(const strux_task *t, const strux_label *truth)
{
    (void)t;
    return truth->y[0] == UNLABELED ? 0.0 : 1.0;
}

/* max(0, 1 + σ·s) with σ = −1 for a positive, +1 for a negative; none when unlabeled. */
static int32_t bin_hinge_parts(const strux_task *t, const strux_label *truth, double *sigma)
{
    (void)t;
    if (truth->y[0] == UNLABELED) return 0;
    sigma[0] = truth->y[0] == 1 ? -1.0 : 1.0;
    return 1;
}

static int64_t bin_eval_size(const strux_task *t)
{
    (void)t;
    return ACC_SIZE;
}

static strux_status bin_eval_add(const strux_task *t, const strux_label *pred,
                                 const strux_label *truth, double *acc)
{
    (void)t;
    int32_t p = pred->y[0], r = truth->y[0];
    acc[ACC_N] += 1;
    acc[ACC_PRED_POS] += p == 1;
    if (r == UNLABELED) return STRUX_OK;
    acc[ACC_LABELED] += 1;
    acc[ACC_TP] += p == 1 && r == 1;
    acc[ACC_FP] += p == 1 && r == 0;
    acc[ACC_FN] += p == 0 && r == 1;
    return STRUX_OK;
}

/* Ratios of empty counts: precision 1 without positive predictions, recall 1 without positives
 * (nothing was missed), as the multi-label metrics do. */
static strux_status bin_eval_report(const strux_task *t, const double *acc, strux_scores *out)
{
    (void)t;
    double tp = acc[ACC_TP], fp = acc[ACC_FP], fn = acc[ACC_FN];
    double lab = acc[ACC_LABELED], n = acc[ACC_N];
    strux_scores_add(out, "error_rate", lab > 0 ? (fp + fn) / lab : 0.0, 0);
    strux_scores_add(out, "precision", tp + fp > 0 ? tp / (tp + fp) : 1.0, 0);
    strux_scores_add(out, "recall", tp + fn > 0 ? tp / (tp + fn) : 1.0, 0);
    strux_scores_add(out, "f1", 2 * tp + fp + fn > 0 ? 2 * tp / (2 * tp + fp + fn) : 1.0, 0);
    strux_scores_add(out, "positive_rate", n > 0 ? acc[ACC_PRED_POS] / n : 0.0, 0);
    strux_scores_add(out, "n", n, 1);
    strux_scores_add(out, "n_labeled", lab, 1);
    return STRUX_OK;
}

static strux_status bin_format_label(const strux_task *t, const strux_label *y, char *buf,
                                     size_t n)
{
    (void)t;
    snprintf(buf, n, "%s", y->y[0] == 1 ? "+1" : y->y[0] == 0 ? "-1" : "0");
    return STRUX_OK;
}

static int64_t bin_label_count(const strux_task *t, const strux_pot *pot)
{
    (void)t, (void)pot;
    return 2;
}

static strux_status bin_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                 strux_label *y)
{
    (void)t, (void)pot;
    STRUX_CHECK(index >= 0 && index < 2, STRUX_ERR_INTERNAL, "label index %lld outside [0, 2)",
                (long long)index);
    y->n = 1;
    y->n_mu = 0;
    y->y[0] = (int32_t)index;
    return STRUX_OK;
}

static const struct strux_task_ops binary_ops = {
    .check = bin_check,
    .model_shape = bin_model_shape,
    .sizes = bin_sizes,
    .potentials = bin_potentials,
    .truth = bin_truth,
    .oracle = bin_oracle,
    .loss = bin_loss,
    .size = bin_size,
    .score = bin_score,
    .predict = bin_predict,
    .add_feature = bin_add_feature,
    .add_delta = bin_add_delta,
    .max_loss = bin_max_loss,
    .hinge_parts = bin_hinge_parts,
    .eval_size = bin_eval_size,
    .eval_add = bin_eval_add,
    .eval_report = bin_eval_report,
    .format_label = bin_format_label,
    .label_count = bin_label_count,
    .label_at = bin_label_at,
};

strux_status strux_task_create_binary(const strux_task_options *opt, strux_task *t)
{
    (void)opt;
    t->ops = &binary_ops;
    return STRUX_OK;
}
