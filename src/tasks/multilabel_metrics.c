/* tasks/multilabel_metrics.c - what the label-set tasks (multilabel, pairwise, rta) share: the
 * multi-label evaluation (slack_bicriteria.md §6 A26: per-example sums of errors, exact matches,
 * example-F1 and per-label (tp, fp, fn), reported as Hamming loss, subset accuracy, micro-, macro-
 * and example-F1), the text form of a label set, and the brute-force enumeration of label sets. */
#include "task_impl.h"

#include <stdio.h>
#include <string.h>

/* Accumulator layout: 4 totals, then (tp, fp, fn) per label. */
enum { ACC_N, ACC_ERRORS, ACC_EXACT, ACC_EXAMPLE_F1, ACC_PER_LABEL };

int64_t strux_mlmetrics_size(int32_t L)
{
    return ACC_PER_LABEL + 3 * (int64_t)L;
}

void strux_mlmetrics_add(int32_t L, const strux_label *pred, const strux_label *truth, double *acc)
{
    double tp = 0, fp = 0, fn = 0;
    for (int32_t k = 0; k < L; k++) {
        int p = pred->y[k], r = truth->y[k];
        double *lab = acc + ACC_PER_LABEL + 3 * (int64_t)k;
        lab[0] += p && r;
        lab[1] += p && !r;
        lab[2] += !p && r;
        tp += p && r;
        fp += p && !r;
        fn += !p && r;
    }
    acc[ACC_N] += 1;
    acc[ACC_ERRORS] += fp + fn;
    acc[ACC_EXACT] += fp + fn == 0;
    /* example F1 = 2|y ∩ ŷ| / (|y| + |ŷ|); both empty counts as a perfect answer */
    acc[ACC_EXAMPLE_F1] += 2 * tp + fp + fn > 0 ? 2 * tp / (2 * tp + fp + fn) : 1.0;
}

void strux_mlmetrics_report(int32_t L, const double *acc, strux_scores *out)
{
    double tp = 0, fp = 0, fn = 0, macro = 0;
    for (int32_t k = 0; k < L; k++) {
        const double *lab = acc + ACC_PER_LABEL + 3 * (int64_t)k;
        tp += lab[0];
        fp += lab[1];
        fn += lab[2];
        /* a label never predicted and never true is answered perfectly: F1 = 1 */
        double den = 2 * lab[0] + lab[1] + lab[2];
        macro += den > 0 ? 2 * lab[0] / den : 1.0;
    }
    double N = acc[ACC_N] > 0 ? acc[ACC_N] : 1;
    double micro_den = 2 * tp + fp + fn;
    strux_scores_add(out, "hamming_loss", acc[ACC_ERRORS] / (N * L), 0);
    strux_scores_add(out, "subset_accuracy", acc[ACC_EXACT] / N, 0);
    strux_scores_add(out, "micro_f1", micro_den > 0 ? 2 * tp / micro_den : 1.0, 0);
    strux_scores_add(out, "macro_f1", macro / L, 0);
    strux_scores_add(out, "example_f1", acc[ACC_EXAMPLE_F1] / N, 0);
    strux_scores_add(out, "n", acc[ACC_N], 1);
}

strux_status strux_labelset_format(const strux_task *t, const strux_label *y, char *buf, size_t n)
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

int64_t strux_labelset_count(const strux_task *t, const strux_pot *pot)
{
    (void)pot;
    return t->n_labels <= 30 ? (int64_t)1 << t->n_labels : -1;
}

strux_status strux_labelset_at(const strux_task *t, const strux_pot *pot, int64_t index,
                               strux_label *y)
{
    (void)pot;
    y->n = t->n_labels;
    y->n_mu = 0;
    for (int32_t k = 0; k < y->n; k++)
        y->y[k] = (int32_t)((index >> k) & 1);
    return STRUX_OK;
}

strux_status strux_labelset_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                                  strux_label *y)
{
    y->n = t->n_labels;
    y->n_mu = 0;
    memset(y->y, 0, (size_t)y->n * sizeof *y->y);
    for (int64_t p = ds->y_ptr[i]; p < ds->y_ptr[i + 1]; p++)
        y->y[ds->y_idx[p]] = 1;
    return STRUX_OK;
}
