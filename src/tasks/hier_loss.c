/* tasks/hier_loss.c - the hierarchy task's losses and oracles (hierarchical.md §2 table, §5, §6):
 * potentials (s[n] = W_n·x, then the node scores c_n·s[n]) and the truth (the example's upward
 * closure); the losses zero_one, node_hamming = tree, leaf_hamming and normalized Δ̃ (6.9) with
 * their per-node terms; the direction oracle and max_loss (loss-augmented maximisation through
 * hier_infer.c), prediction (§6: the exact answer, ILP where the DAG LP is fractional); φ through
 * the strux_phi sink; the brute-force label enumeration of the oracle tests.
 * task.margin = normalized (6.13, single-label): the task's pair (m, g) is m(y) = (f(y) −
 * f(y_i))/Δ̃(y, y_i) and g(y) = 1 for y ≠ y_i (both 0 for y_i), add_delta adds (φ(y) −
 * φ(y_i))/Δ̃, so margin rescaling over (m, g) is (6.13) with every solver; score and add_feature
 * stay the plain f and φ (prediction is the plain argmax, §6), so only the margin surrogate,
 * which never re-scores labels by f, may train it (strux_task_needs). Knows nothing of MPI,
 * searches or solvers. */
#include "hier_task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

strux_status strux_hier_task_potentials(const strux_task *t, const strux_model *m,
                                        const strux_dataset *ds, int64_t i, strux_pot *pot)
{
    const hier_data *d = t->data;
    int32_t M = d->M;
    pot->i = i;
    pot->n_parts = M;
    pot->n_states = 2;
    strux_model_scores(m, &ds->x, i, 0, M, pot->s);
    for (int32_t n = 0; n < M; n++)
        pot->s[M + n] = d->mult[n] * pot->s[n];
    return STRUX_OK;
}

strux_status strux_hier_task_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                                   strux_label *y)
{
    hier_data *d = t->data;
    int32_t n;
    STRUX_TRY(strux_hier_task_closure(d, ds, i, d->set, &n));
    y->n = d->M;
    y->n_mu = 0;
    memset(y->y, 0, (size_t)d->M * sizeof *y->y);
    for (int32_t k = 0; k < n; k++)
        y->y[d->set[k]] = 1;
    return STRUX_OK;
}

/* Δ̃(y, y_i)² = Σ_{n ∈ y Δ y_i} α_n (6.9), z-weighted for a fractional y. */
static double normalized_loss2(const hier_data *d, const strux_label *y, const strux_label *truth)
{
    double e = 0;
    for (int32_t n = 0; n < d->M; n++)
        e += d->alpha[n] * fabs(strux_hier_member(y, n) - strux_hier_member(truth, n));
    return e;
}

double strux_hier_task_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    const hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    double e = 0;
    if (d->margin_norm) /* (6.13): the margin asked of every y ≠ y_i is 1 */
        return normalized_loss2(d, y, truth) > STRUX_HIER_SAME_LABEL ? 1.0 : 0.0;
    switch (d->loss) {
    case L_ZERO_ONE:
        for (int32_t n = 0; n < d->M; n++)
            if (y->y[n] != truth->y[n]) return 1.0;
        return 0.0;
    case L_NORMALIZED:
        return sqrt(normalized_loss2(d, y, truth));
    case L_LEAF:
        for (int32_t k = 0; k < h->n_leaves; k++) {
            int32_t n = h->leaves[k];
            e += fabs(strux_hier_member(y, n) - truth->y[n]);
        }
        return e;
    default: /* node Hamming = the tree distance |y Δ y_i| */
        for (int32_t n = 0; n < d->M; n++)
            e += fabs(strux_hier_member(y, n) - truth->y[n]);
        return e;
    }
}

double strux_hier_task_size(const strux_task *t, const strux_label *y)
{
    const hier_data *d = t->data;
    double s = 0;
    for (int32_t n = 0; n < d->M; n++)
        s += strux_hier_member(y, n);
    return s;
}

double strux_hier_task_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    const hier_data *d = t->data;
    double f = 0;
    for (int32_t n = 0; n < d->M; n++) {
        double v = strux_hier_member(y, n);
        if (v != 0) f += v * pot->s[d->M + n];
    }
    return f;
}

/* The per-node loss terms ℓ (g(y) = Σ_{n∈y} ℓ_n + const) of a decomposable loss into out, and
 * for the normalised loss Δ̃(l) per leaf into bleaf (returns 1 then). */
static int loss_terms(hier_data *d, const strux_label *truth, double scale, double *out)
{
    const strux_hierarchy *h = d->h;
    int32_t M = d->M;
    switch (d->loss) {
    case L_ZERO_ONE:
        for (int32_t n = 0; n < M; n++)
            out[n] = strux_hier_is_leaf(h, n) && !truth->y[n] ? scale : 0.0;
        return 0;
    case L_LEAF:
        for (int32_t n = 0; n < M; n++)
            out[n] = strux_hier_is_leaf(h, n) ? scale * (1 - 2 * truth->y[n]) : 0.0;
        return 0;
    case L_NORMALIZED: {
        double P = 0;
        for (int32_t n = 0; n < M; n++) {
            d->tmp[n] = d->alpha[n] * (1 - 2 * truth->y[n]);
            if (truth->y[n]) P += d->alpha[n];
            out[n] = 0.0;
        }
        strux_hier_infer_leaf_scores(d->inf, d->tmp, NULL, d->S);
        for (int32_t k = 0; k < h->n_leaves; k++)
            d->bleaf[k] = scale * sqrt(fmax(0.0, d->S[k] + P));
        return 1;
    }
    default:
        for (int32_t n = 0; n < M; n++)
            out[n] = scale * (1 - 2 * truth->y[n]);
        return 0;
    }
}

/* y = Ā(leaf). */
static void leaf_label(const hier_data *d, int32_t leaf, strux_label *y)
{
    const strux_hierarchy *h = d->h;
    y->n = d->M;
    y->n_mu = 0;
    memset(y->y, 0, (size_t)d->M * sizeof *y->y);
    int32_t p = h->leaf_pos[leaf];
    for (int64_t k = h->anc_ptr[p]; k < h->anc_ptr[p + 1]; k++)
        y->y[h->anc_idx[k]] = 1;
}

/* What one DAG programme call did, into the counters st (NULL: not counted). */
static void count_dag(strux_lp_stats *st, const strux_hier_dag_info *info)
{
    if (!st) return;
    st->calls++;
    st->no_lp += !info->used_lp;
    st->lps += info->used_lp;
    st->ilps += info->used_ilp;
    st->capped += info->capped;
    st->candidates += info->n_candidates;
    st->columns += info->n_cols;
    st->seconds += info->lp_seconds;
}

/* argmax over the label space of Σ_{n∈y} (r_n + aug_n) (+ bleaf per leaf, single-label): the
 * label to y (fractional z to mu in a multi-label DAG without exact), the value to *value; a
 * DAG programme call is counted in st (may be NULL). */
static strux_status maximise(hier_data *d, const double *r, const double *aug, int use_b, int exact,
                             strux_lp_stats *st, strux_label *y, double *value)
{
    const strux_hierarchy *h = d->h;
    int32_t M = d->M;
    if (!d->multi) {
        int32_t leaf;
        strux_hier_infer_leaf(d->inf, r, aug, use_b ? d->bleaf : NULL, &leaf, value);
        leaf_label(d, leaf, y);
        return STRUX_OK;
    }
    if (h->is_tree) {
        STRUX_TRY(strux_hier_infer_tree(d->inf, r, aug, d->z, value));
    } else {
        int flags = (exact ? STRUX_HIER_EXACT : 0) | (d->prune ? STRUX_HIER_PRUNE : 0);
        strux_hier_dag_info info;
        STRUX_TRY(strux_hier_infer_dag(d->inf, r, aug, flags, d->z, value, &info));
        count_dag(st, &info);
    }
    y->n = M;
    int frac = 0;
    for (int32_t n = 0; n < M; n++) {
        y->y[n] = d->z[n] > 0.5;
        if (d->z[n] != 0.0 && d->z[n] != 1.0) frac = 1;
    }
    y->n_mu = 0;
    if (frac && y->mu && y->mu_cap >= M) {
        memcpy(y->mu, d->z, (size_t)M * sizeof *y->mu);
        y->n_mu = M;
    }
    return STRUX_OK;
}

/* The margin-normalised oracle (6.13), single-label (§5.1 variant): for every leaf l,
 * m(l) = (S(l) − S(l_i))/Δ̃(l, l_i) and g(l) = 1, except y_i and the labels with Δ̃² ≤
 * STRUX_HIER_SAME_LABEL, which are y_i in feature space (m = g = 0); the leaf maximising
 * a·m + b·g (smallest index on ties) to y, its (m, g) to ans. O(M) on trees, O(Σ|Ā(l)|) on DAGs. */
static void normalized_margin_oracle(const strux_task *t, const double *sc,
                                     const strux_label *truth, const strux_query *q, strux_label *y,
                                     strux_answer *ans)
{
    hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    loss_terms(d, truth, 1.0, d->aug); /* Δ̃(l) per leaf into bleaf */
    strux_hier_infer_leaf_scores(d->inf, sc, NULL, d->S);
    double s_truth = 0;
    for (int32_t n = 0; n < d->M; n++)
        if (truth->y[n]) s_truth += sc[n];
    int32_t best = -1;
    double best_v = 0, best_m = 0, best_g = 0;
    for (int32_t k = 0; k < h->n_leaves; k++) {
        double delta = d->bleaf[k], m = 0, g = 0;
        if (!truth->y[h->leaves[k]] && delta * delta > STRUX_HIER_SAME_LABEL) {
            m = (d->S[k] - s_truth) / delta;
            g = 1;
        }
        double v = q->a * m + q->b * g;
        if (best < 0 || v > best_v) best = k, best_v = v, best_m = m, best_g = g;
    }
    leaf_label(d, h->leaves[best], y);
    ans->found = 1;
    ans->m = best_m;
    ans->g = best_g;
    ans->size = strux_hier_task_size(t, y);
}

strux_status strux_hier_task_oracle(const strux_task *t, const strux_pot *pot,
                                    const strux_label *truth, const strux_query *q, strux_label *y,
                                    strux_answer *ans)
{
    hier_data *d = t->data;
    STRUX_CHECK(!q->wedge && q->n_ban == 0, STRUX_ERR_UNSUPPORTED,
                "task 'hierarchy' answers direction queries only (no wedge or ban list): use the "
                "margin surrogate");
    STRUX_CHECK(q->c == 0, STRUX_ERR_UNSUPPORTED,
                "task 'hierarchy' has no label-size term in its oracle (c = %g)", q->c);
    int32_t M = d->M;
    const double *sc = pot->s + M;
    if (d->margin_norm) {
        normalized_margin_oracle(t, sc, truth, q, y, ans);
        return STRUX_OK;
    }
    for (int32_t n = 0; n < M; n++)
        d->r[n] = q->a * sc[n];
    int use_b = loss_terms(d, truth, q->b, d->aug);
    double value;
    STRUX_TRY(maximise(d, d->r, d->aug, use_b, 0, &d->lp_stats[0], y, &value));
    double m = 0;
    for (int32_t n = 0; n < M; n++)
        m += (strux_hier_member(y, n) - truth->y[n]) * sc[n];
    ans->found = 1;
    ans->m = m;
    ans->g = strux_hier_task_loss(t, y, truth);
    ans->size = strux_hier_task_size(t, y);
    return STRUX_OK;
}

double strux_hier_task_max_loss(const strux_task *t, const strux_label *truth)
{
    hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    if (d->loss == L_ZERO_ONE) return h->n_leaves > 1 ? 1.0 : 0.0;
    if (d->margin_norm) { /* 1 when some label differs from y_i in feature space */
        loss_terms(d, truth, 1.0, d->aug);
        for (int32_t k = 0; k < h->n_leaves; k++)
            if (!truth->y[h->leaves[k]] && d->bleaf[k] * d->bleaf[k] > STRUX_HIER_SAME_LABEL)
                return 1.0;
        return 0.0;
    }
    int32_t M = d->M;
    double cst = 0;
    for (int32_t n = 0; n < M; n++) {
        d->r[n] = 0.0;
        if (d->loss == L_LEAF ? strux_hier_is_leaf(h, n) : 1) cst += truth->y[n];
    }
    int use_b = loss_terms(d, truth, 1.0, d->aug);
    if (use_b) {
        double best = 0;
        for (int32_t k = 0; k < h->n_leaves; k++)
            best = fmax(best, d->bleaf[k]);
        return best;
    }
    /* the exact maximiser: a label y of the scratch size (M parts, no mu) */
    strux_label y = {.n = M, .cap = M, .y = d->set, .n_mu = 0, .mu_cap = 0, .mu = NULL};
    double value = 0;
    if (maximise(d, d->r, d->aug, 0, 1, NULL, &y, &value) != STRUX_OK) return (double)M;
    return value + cst;
}

int strux_hier_task_lp_stats(const strux_task *t, strux_lp_stats *oracle, strux_lp_stats *predict)
{
    const hier_data *d = t->data;
    if (!d->inf || !d->multi || d->h->is_tree) return 0;
    *oracle = d->lp_stats[0];
    *predict = d->lp_stats[1];
    return 1;
}

strux_status strux_hier_task_predict(const strux_task *t, const strux_pot *pot, strux_label *y)
{
    hier_data *d = t->data;
    int32_t M = d->M;
    for (int32_t n = 0; n < M; n++)
        d->aug[n] = 0.0;
    double value;
    STRUX_TRY(maximise(d, pot->s + M, d->aug, 0, 1, &d->lp_stats[1], y, &value));
    y->n_mu = 0;
    return STRUX_OK;
}

strux_status strux_hier_task_add_feature(const strux_task *t, const strux_label *y, double scale,
                                         const strux_phi *out)
{
    const hier_data *d = t->data;
    for (int32_t n = 0; n < d->M; n++) {
        double v = strux_hier_member(y, n);
        if (v != 0 && d->mult[n] != 0) strux_phi_row(out, 0, n, scale * v * d->mult[n]);
    }
    return STRUX_OK;
}

/* φ(y) − φ(y_i), divided by Δ̃(y, y_i) under (6.13) (the per-pair feature difference of
 * §2.3.4, c_i = 1/Δ̃ in §4.1 step 4; nothing for a label that is y_i in feature space). */
strux_status strux_hier_task_add_delta(const strux_task *t, const strux_label *y,
                                       const strux_label *truth, double scale, const strux_phi *out)
{
    const hier_data *d = t->data;
    if (d->margin_norm) {
        double e = normalized_loss2(d, y, truth);
        if (e <= STRUX_HIER_SAME_LABEL) return STRUX_OK;
        scale /= sqrt(e);
    }
    for (int32_t n = 0; n < d->M; n++) {
        double v = strux_hier_member(y, n) - strux_hier_member(truth, n);
        if (v != 0 && d->mult[n] != 0) strux_phi_row(out, 0, n, scale * v * d->mult[n]);
    }
    return STRUX_OK;
}

/* Brute force: single-label, one label per leaf; multi-label, the closure of every non-empty
 * leaf set (up to 20 leaves), index + 1 as the set's bits over the leaves. */
int64_t strux_hier_task_label_count(const strux_task *t, const strux_pot *pot)
{
    (void)pot;
    const hier_data *d = t->data;
    int32_t L = d->h->n_leaves;
    if (!d->multi) return L;
    return L <= 20 ? ((int64_t)1 << L) - 1 : -1;
}

strux_status strux_hier_task_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                      strux_label *y)
{
    (void)pot;
    const hier_data *d = t->data;
    const strux_hierarchy *h = d->h;
    if (!d->multi) {
        leaf_label(d, h->leaves[index], y);
        return STRUX_OK;
    }
    y->n = d->M;
    y->n_mu = 0;
    memset(y->y, 0, (size_t)d->M * sizeof *y->y);
    int64_t bits = index + 1;
    for (int32_t k = 0; k < h->n_leaves; k++)
        if (bits >> k & 1)
            for (int64_t a = h->anc_ptr[k]; a < h->anc_ptr[k + 1]; a++)
                y->y[h->anc_idx[a]] = 1;
    return STRUX_OK;
}
