/* tasks/multiclass.c - multi-class output: exactly one of K classes per example, one weight row per
 * class, f(y) = w_y·x, 0/1 loss L(y, y_i) = [y ≠ y_i], |y| = 1 for every label. Potentials:
 * s[k] = w_k·x. Every oracle enumerates the K labels, so direction, constrained (wedge, §2.2) and
 * banned (§2.3) queries are all exact, with any c. Metrics: accuracy, macro-F1 over the classes
 * seen in truth or predictions, n. Knows nothing of MPI, searches or solvers. */
#include "task_impl.h"

#include <stdio.h>
#include <string.h>

/* Evaluation accumulator layout: 2 totals, then (tp, fp, fn) per class. */
enum { ACC_N, ACC_CORRECT, ACC_PER_CLASS };

static strux_status mc_check(strux_task *t, const strux_dataset *ds)
{
    STRUX_CHECK(ds->ex_ptr == NULL, STRUX_ERR_INPUT,
                "%s: holds sequences; the multiclass task needs one row per example", ds->path);
    STRUX_CHECK(ds->n_labels >= 2, STRUX_ERR_INPUT,
                "%s: %d class(es); the multiclass task needs at least 2", ds->path, ds->n_labels);
    for (int64_t r = 0; r < ds->n_local; r++) {
        int64_t n = ds->y_ptr[r + 1] - ds->y_ptr[r];
        STRUX_CHECK(n == 1, STRUX_ERR_INPUT,
                    "%s: row %lld has %lld labels; the multiclass task needs exactly one per "
                    "example",
                    ds->path, (long long)(ds->first + r + 1), (long long)n);
    }
    STRUX_CHECK(t->n_labels == 0 || t->n_labels == ds->n_labels, STRUX_ERR_INPUT,
                "%s: %d classes where the task has %d", ds->path, ds->n_labels, t->n_labels);
    t->n_labels = ds->n_labels;
    return STRUX_OK;
}

static strux_status mc_model_shape(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                   int64_t *n_extra)
{
    (void)t;
    *n_rows = ds->n_labels;
    *n_extra = 0;
    return STRUX_OK;
}

static strux_status mc_sizes(const strux_task *t, const strux_dataset *ds, int32_t *max_parts,
                             int64_t *max_pot, int64_t *max_mu)
{
    (void)t;
    *max_parts = 1;
    *max_pot = ds->n_labels;
    *max_mu = 0;
    return STRUX_OK;
}

static strux_status mc_potentials(const strux_task *t, const strux_model *m,
                                  const strux_dataset *ds, int64_t i, strux_pot *pot)
{
    int32_t K = t->n_labels;
    pot->i = i;
    pot->n_parts = 1;
    pot->n_states = K;
    strux_model_scores(m, &ds->x, i, 0, K, pot->s);
    return STRUX_OK;
}

static strux_status mc_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                             strux_label *y)
{
    (void)t;
    y->n = 1;
    y->n_mu = 0;
    y->y[0] = ds->y_idx[ds->y_ptr[i]];
    return STRUX_OK;
}

static double mc_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    (void)t;
    return y->y[0] != truth->y[0];
}

static double mc_size(const strux_task *t, const strux_label *y)
{
    (void)t, (void)y;
    return 1.0;
}

static double mc_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    (void)t;
    return pot->s[y->y[0]];
}

/* argmax over the admitted, unbanned classes of a·m + b·g + c (|y| = 1); the first maximiser
 * wins ties. */
static strux_status mc_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                              const strux_query *q, strux_label *y, strux_answer *ans)
{
    int32_t yi = truth->y[0], best = -1;
    double v_best = 0;
    for (int32_t k = 0; k < t->n_labels; k++) {
        double m = pot->s[k] - pot->s[yi], g = k != yi;
        double v = q->a * m + q->b * g + q->c;
        if ((best >= 0 && v <= v_best) || !strux_query_admits(q, m, g)) continue;
        strux_label cand = {.n = 1, .cap = 1, .y = &k};
        if (q->n_ban > 0 && strux_query_banned(q, &cand)) continue;
        best = k;
        v_best = v;
    }
    *ans = (strux_answer){.found = best >= 0};
    if (best < 0) return STRUX_OK;
    y->n = 1;
    y->n_mu = 0;
    y->y[0] = best;
    ans->m = pot->s[best] - pot->s[yi];
    ans->g = best != yi;
    ans->size = 1.0;
    return STRUX_OK;
}

static strux_status mc_predict(const strux_task *t, const strux_pot *pot, strux_label *y)
{
    int32_t best = 0;
    for (int32_t k = 1; k < t->n_labels; k++)
        if (pot->s[k] > pot->s[best]) best = k;
    y->n = 1;
    y->n_mu = 0;
    y->y[0] = best;
    return STRUX_OK;
}

static strux_status mc_add_feature(const strux_task *t, const strux_label *y, double scale,
                                   const strux_phi *out)
{
    (void)t;
    strux_phi_row(out, 0, y->y[0], scale);
    return STRUX_OK;
}

static strux_status mc_add_delta(const strux_task *t, const strux_label *y,
                                 const strux_label *truth, double scale, const strux_phi *out)
{
    (void)t;
    if (y->y[0] == truth->y[0]) return STRUX_OK;
    strux_phi_row(out, 0, y->y[0], scale);
    strux_phi_row(out, 0, truth->y[0], -scale);
    return STRUX_OK;
}

static int64_t mc_eval_size(const strux_task *t)
{
    return ACC_PER_CLASS + 3 * (int64_t)t->n_labels;
}

static strux_status mc_eval_add(const strux_task *t, const strux_label *pred,
                                const strux_label *truth, double *acc)
{
    (void)t;
    int32_t p = pred->y[0], r = truth->y[0];
    acc[ACC_N] += 1;
    acc[ACC_CORRECT] += p == r;
    double *cp = acc + ACC_PER_CLASS + 3 * (int64_t)p, *cr = acc + ACC_PER_CLASS + 3 * (int64_t)r;
    if (p == r) {
        cp[0] += 1;
    } else {
        cp[1] += 1;
        cr[2] += 1;
    }
    return STRUX_OK;
}

static strux_status mc_eval_report(const strux_task *t, const double *acc, strux_scores *out)
{
    double macro = 0;
    int32_t seen = 0;
    for (int32_t k = 0; k < t->n_labels; k++) {
        const double *c = acc + ACC_PER_CLASS + 3 * (int64_t)k;
        double den = 2 * c[0] + c[1] + c[2];
        if (den == 0) continue; /* a class absent from truth and predictions has no F1 */
        macro += 2 * c[0] / den;
        seen++;
    }
    double N = acc[ACC_N] > 0 ? acc[ACC_N] : 1;
    strux_scores_add(out, "accuracy", acc[ACC_CORRECT] / N, 0);
    strux_scores_add(out, "macro_f1", seen > 0 ? macro / seen : 1.0, 0);
    strux_scores_add(out, "n", acc[ACC_N], 1);
    return STRUX_OK;
}

static strux_status mc_format_label(const strux_task *t, const strux_label *y, char *buf, size_t n)
{
    (void)t;
    snprintf(buf, n, "%d", y->y[0]);
    return STRUX_OK;
}

static int64_t mc_label_count(const strux_task *t, const strux_pot *pot)
{
    (void)pot;
    return t->n_labels;
}

static strux_status mc_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                strux_label *y)
{
    (void)pot;
    STRUX_CHECK(index >= 0 && index < t->n_labels, STRUX_ERR_INTERNAL,
                "label index %lld outside [0, %d)", (long long)index, t->n_labels);
    y->n = 1;
    y->n_mu = 0;
    y->y[0] = (int32_t)index;
    return STRUX_OK;
}

static const struct strux_task_ops multiclass_ops = {
    .check = mc_check,
    .model_shape = mc_model_shape,
    .sizes = mc_sizes,
    .potentials = mc_potentials,
    .truth = mc_truth,
    .oracle = mc_oracle,
    .loss = mc_loss,
    .size = mc_size,
    .score = mc_score,
    .predict = mc_predict,
    .add_feature = mc_add_feature,
    .add_delta = mc_add_delta,
    .eval_size = mc_eval_size,
    .eval_add = mc_eval_add,
    .eval_report = mc_eval_report,
    .format_label = mc_format_label,
    .label_count = mc_label_count,
    .label_at = mc_label_at,
};

strux_status strux_task_create_multiclass(const strux_task_options *opt, strux_task *t)
{
    (void)opt;
    t->ops = &multiclass_ops;
    return STRUX_OK;
}
