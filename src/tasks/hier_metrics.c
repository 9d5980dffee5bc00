/* tasks/hier_metrics.c - evaluation and printed labels of the hierarchy task (issue 14 metrics):
 * single-label accuracy, macro_f1 (over leaves), tree_loss; multi-label jaccard, example_f1,
 * subset_accuracy, micro_f1 and macro_f1 (most specific nodes), hier_f1 (closures), tree_loss;
 * sums per example that strux_evaluate adds over ranks, reported by eval_report. Then the label
 * text of strux predict: the closure's ascending file ids, or root paths of names
 * (--format paths). The file's root and virtual nodes never count. Knows nothing of MPI. */
#include "hier_task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- evaluation ----
 * single-label: [n, exact, tree distance, then tp, fp, fn per leaf];
 * multi-label: [n, jaccard, example F1, subset, tree distance, closure tp, fp, fn, then tp, fp, fn
 * of the most specific sets per node]. Only counted nodes (not the root, not virtual) take part;
 * the most specific nodes are those of the counted closure. */
enum { S_HEAD = 3, M_HEAD = 8 };

int64_t strux_hier_task_eval_size(const strux_task *t)
{
    const hier_data *d = t->data;
    return d->multi ? M_HEAD + 3 * (int64_t)d->M : S_HEAD + 3 * (int64_t)d->h->n_leaves;
}

/* Most specific counted members of y: 1 in ms[n]. */
static void most_specific(const strux_hierarchy *h, const strux_label *y, unsigned char *ms)
{
    for (int32_t n = 0; n < h->n_nodes; n++) {
        ms[n] = 0;
        if (!y->y[n] || !strux_hier_counted(h, n)) continue;
        int child = 0;
        for (int64_t k = h->child_ptr[n]; k < h->child_ptr[n + 1]; k++) {
            int32_t c = h->child_idx[k];
            if (y->y[c] && strux_hier_counted(h, c)) child = 1;
        }
        ms[n] = !child;
    }
}

strux_status strux_hier_task_eval_add(const strux_task *t, const strux_label *pred,
                                      const strux_label *truth, double *acc)
{
    hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    int32_t M = d->M;
    double dist = 0, tp = 0, fp = 0, fn = 0;
    for (int32_t n = 0; n < M; n++) {
        if (!strux_hier_counted(h, n)) continue;
        int p = pred->y[n] != 0, u = truth->y[n] != 0;
        tp += p && u;
        fp += p && !u;
        fn += !p && u;
    }
    dist = fp + fn;
    acc[0] += 1;
    if (!d->multi) {
        acc[1] += dist == 0;
        acc[2] += dist;
        int32_t lp = -1, lt = -1;
        for (int32_t k = 0; k < h->n_leaves; k++) {
            if (pred->y[h->leaves[k]]) lp = k;
            if (truth->y[h->leaves[k]]) lt = k;
        }
        if (lp >= 0 && lp == lt)
            acc[S_HEAD + 3 * lp] += 1;
        else {
            if (lp >= 0) acc[S_HEAD + 3 * lp + 1] += 1;
            if (lt >= 0) acc[S_HEAD + 3 * lt + 2] += 1;
        }
        return STRUX_OK;
    }
    unsigned char *mp = d->mark, *mt = (unsigned char *)d->tmp; /* tmp: M doubles ≥ M bytes */
    most_specific(h, pred, mp);
    most_specific(h, truth, mt);
    double i = 0, np = 0, nt = 0;
    for (int32_t n = 0; n < M; n++) {
        np += mp[n];
        nt += mt[n];
        i += mp[n] && mt[n];
        acc[M_HEAD + 3 * n] += mp[n] && mt[n];
        acc[M_HEAD + 3 * n + 1] += mp[n] && !mt[n];
        acc[M_HEAD + 3 * n + 2] += !mp[n] && mt[n];
    }
    for (int32_t n = 0; n < M; n++)
        mp[n] = 0; /* mark is zero between calls */
    double uni = np + nt - i;
    acc[1] += uni > 0 ? i / uni : 1.0;
    acc[2] += np + nt > 0 ? 2 * i / (np + nt) : 1.0;
    acc[3] += dist == 0;
    acc[4] += dist;
    acc[5] += tp;
    acc[6] += fp;
    acc[7] += fn;
    return STRUX_OK;
}

static double f1(double tp, double fp, double fn)
{
    return tp + fp + fn > 0 ? 2 * tp / (2 * tp + fp + fn) : 1.0;
}

/* Mean F1 over the classes that occur in a truth or a prediction (0 when none does). */
static double macro_f1(const double *a, int64_t n_class)
{
    double s = 0;
    int64_t n = 0;
    for (int64_t k = 0; k < n_class; k++)
        if (a[3 * k] + a[3 * k + 1] + a[3 * k + 2] > 0) {
            s += f1(a[3 * k], a[3 * k + 1], a[3 * k + 2]);
            n++;
        }
    return n ? s / (double)n : 0.0;
}

strux_status strux_hier_task_eval_report(const strux_task *t, const double *acc, strux_scores *out)
{
    const hier_data *d = t->data;
    double n = acc[0] > 0 ? acc[0] : 1;
    if (!d->multi) {
        strux_scores_add(out, "accuracy", acc[1] / n, 0);
        strux_scores_add(out, "macro_f1", macro_f1(acc + S_HEAD, d->h->n_leaves), 0);
        strux_scores_add(out, "tree_loss", acc[2] / n, 0);
        strux_scores_add(out, "n", acc[0], 1);
        return STRUX_OK;
    }
    double tp = 0, fp = 0, fn = 0;
    for (int32_t k = 0; k < d->M; k++) {
        tp += acc[M_HEAD + 3 * k];
        fp += acc[M_HEAD + 3 * k + 1];
        fn += acc[M_HEAD + 3 * k + 2];
    }
    strux_scores_add(out, "jaccard", acc[1] / n, 0);
    strux_scores_add(out, "example_f1", acc[2] / n, 0);
    strux_scores_add(out, "subset_accuracy", acc[3] / n, 0);
    strux_scores_add(out, "micro_f1", f1(tp, fp, fn), 0);
    strux_scores_add(out, "macro_f1", macro_f1(acc + M_HEAD, d->M), 0);
    strux_scores_add(out, "hier_f1", f1(acc[5], acc[6], acc[7]), 0);
    strux_scores_add(out, "tree_loss", acc[4] / n, 0);
    strux_scores_add(out, "n", acc[0], 1);
    return STRUX_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Append text to buf (capacity n) at *used. */
static strux_status put_text(char *buf, size_t n, size_t *used, const char *text)
{
    size_t k = strlen(text);
    STRUX_CHECK(*used + k < n, STRUX_ERR_INTERNAL, "label text longer than %zu bytes", n);
    memcpy(buf + *used, text, k + 1);
    *used += k;
    return STRUX_OK;
}

/* Node v's name: data.label_names' entry for its file id, else the id. */
static const char *node_name(const hier_data *d, int32_t v, char *tmp, size_t n)
{
    int64_t id = d->h->node_id[v];
    if (d->names && id < d->n_names && d->names[id]) return d->names[id];
    snprintf(tmp, n, "%lld", (long long)id);
    return tmp;
}

/* --format paths: each most specific counted node of y (a member none of whose counted children is
 * one; a stop leaf prints as its node) as the names from below the root down to it joined by '/'
 * (on a DAG along first parents), the paths in ascending node order joined by ','. */
static strux_status format_paths(hier_data *d, const strux_label *y, char *buf, size_t n)
{
    const strux_hierarchy *h = d->h;
    size_t used = 0;
    int first = 1;
    buf[0] = '\0';
    for (int32_t v = 0; v < d->M; v++) {
        if (!y->y[v] || !strux_hier_counted(h, v)) continue;
        int specific = 1;
        for (int64_t e = h->child_ptr[v]; e < h->child_ptr[v + 1] && specific; e++)
            if (y->y[h->child_idx[e]] && strux_hier_counted(h, h->child_idx[e])) specific = 0;
        if (!specific) continue;
        int32_t k = 0; /* the path, bottom up, into d->set2 */
        for (int32_t u = v; u > 0 && strux_hier_counted(h, u); u = h->parent_idx[h->parent_ptr[u]])
            d->set2[k++] = u;
        if (!first) STRUX_TRY(put_text(buf, n, &used, ","));
        first = 0;
        for (int32_t j = k - 1; j >= 0; j--) {
            char tmp[32];
            STRUX_TRY(put_text(buf, n, &used, node_name(d, d->set2[j], tmp, sizeof tmp)));
            if (j) STRUX_TRY(put_text(buf, n, &used, "/"));
        }
    }
    return STRUX_OK;
}

/* The predicted closure as in the data files: ascending file ids of the counted nodes. */
strux_status strux_hier_task_format_label(const strux_task *t, const strux_label *y, char *buf,
                                          size_t n)
{
    hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    if (d->paths) return format_paths(d, y, buf, n);
    STRUX_TRY(strux_hier_task_ensure_ids(d, d->M));
    int64_t k = 0;
    for (int32_t v = 0; v < d->M; v++)
        if (y->y[v] && strux_hier_counted(h, v)) d->ids[k++] = h->node_id[v];
    qsort(d->ids, (size_t)k, sizeof *d->ids, cmp_i64);
    size_t used = 0;
    buf[0] = '\0';
    for (int64_t j = 0; j < k; j++) {
        int w = snprintf(buf + used, n - used, "%s%lld", j ? "," : "", (long long)d->ids[j]);
        STRUX_CHECK(w >= 0 && (size_t)w < n - used, STRUX_ERR_INTERNAL,
                    "label text longer than %zu bytes", n);
        used += (size_t)w;
    }
    return STRUX_OK;
}
