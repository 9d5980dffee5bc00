/* tasks/multilabel.c - multi-label output with independent labels and Hamming loss
 * (slack_bicriteria.md §2.4(a)): y ∈ {0,1}^L, f(y) = Σ_k y_k·(w_k·x), one weight row per label,
 * L(y, y_i) = Σ_k [y_k ≠ y_ik]. Potentials: s[k] = score of y_k = 1 (y_k = 0 scores 0).
 * The direction oracle decomposes per label. Metrics: Hamming loss, subset accuracy, micro-,
 * macro- and example-F1 (multilabel_metrics.c). Knows nothing of MPI, searches or solvers. */
#include "task_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static strux_status ml_scratch_alloc(strux_task *t);

static strux_status ml_check(strux_task *t, const strux_dataset *ds)
{
    STRUX_CHECK(ds->n_labels > 0, STRUX_ERR_INPUT, "%s: no labels: multilabel needs at least one",
                ds->path);
    STRUX_CHECK(ds->ex_ptr == NULL, STRUX_ERR_INPUT,
                "%s: holds sequences; the multilabel task needs one row per example", ds->path);
    STRUX_CHECK(t->n_labels == 0 || t->n_labels == ds->n_labels, STRUX_ERR_INPUT,
                "%s: %d labels where the task has %d", ds->path, ds->n_labels, t->n_labels);
    t->n_labels = ds->n_labels;
    return ml_scratch_alloc(t);
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
    pot->i = i;
    pot->n_parts = L;
    pot->n_states = 2;
    strux_model_scores(m, &ds->x, i, 0, L, pot->s);
    return STRUX_OK;
}

static strux_status ml_potentials_scores(const strux_task *t, const strux_dataset *ds, int64_t i,
                                         const double *row_scores, strux_pot *pot)
{
    (void)ds;
    int32_t L = t->n_labels;
    pot->i = i;
    pot->n_parts = L;
    pot->n_states = 2;
    memcpy(pot->s, row_scores, (size_t)L * sizeof *pot->s);
    return STRUX_OK;
}

static double ml_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    (void)t;
    double e = 0;
    for (int32_t k = 0; k < y->n; k++)
        e += y->y[k] != truth->y[k];
    return e;
}

static double ml_size(const strux_task *t, const strux_label *y)
{
    (void)t;
    double n = 0;
    for (int32_t k = 0; k < y->n; k++)
        n += y->y[k];
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

/* ---- oracles (slack_bicriteria.md §2.1-2.4(a)) ----
 * Scratch (not state: nothing survives a call) for the constrained and ban-list oracles lives in
 * ml_data, allocated by ml_check (the label count is known there) and never in an oracle call. */

#define ML_BAN_MAX 1024   /* ban-list entries one query may carry (k-best nodes are sized by it) */
#define ML_WEDGE_TAU 1e-9 /* relative tolerance realising strict wedge sides (§2.2) */

typedef struct ml_gain {
    double v;  /* sort key */
    int32_t k; /* label index */
} ml_gain;

/* A node of the k-best enumeration: the flip set of its parent plus rank j of the regret order. */
typedef struct ml_node {
    double cost;    /* regret sum of the flip set */
    int32_t j;      /* largest rank in the set, −1 for the empty set */
    int32_t parent; /* node holding the set without rank j, −1 for the empty set */
} ml_node;

typedef struct ml_data {
    ml_gain *gain;     /* n_labels: per-label flip gains, sorted (the wedge oracle: its first
                          n_sorted; the rest are still in heap) */
    ml_gain *gain_tmp; /* n_labels: the sort's scratch; the wedge oracle's heap of the gains not
                          yet in order */
    int32_t n_sorted, n_heap;
    /* what gain holds: the potentials (buffer and stamp) and the truth it was sorted for, so the
     * repeated wedge queries of a search on one example share one order */
    const strux_pot *gain_pot;
    uint64_t gain_stamp;
    int32_t *gain_truth;
    int32_t truth_size; /* labels on in gain_truth */
    ml_node *node; /* 2·ML_BAN_MAX + 3 nodes of the k-best enumeration */
    int32_t *heap; /* node indices, min-heap by cost */
} ml_data;

static void ml_destroy(strux_task *t)
{
    ml_data *d = t->data;
    if (!d) return;
    strux_free(&d->gain);
    strux_free(&d->gain_truth);
    strux_free(&d->gain_tmp);
    strux_free(&d->node);
    strux_free(&d->heap);
    strux_free(&t->data);
}

static strux_status ml_scratch_alloc(strux_task *t)
{
    if (t->data) return STRUX_OK;
    ml_data *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    t->data = d;
    STRUX_TRY(strux_alloc_array(&d->gain, (size_t)t->n_labels, sizeof *d->gain));
    STRUX_TRY(strux_alloc_array(&d->gain_truth, (size_t)t->n_labels, sizeof *d->gain_truth));
    STRUX_TRY(strux_alloc_array(&d->gain_tmp, (size_t)t->n_labels, sizeof *d->gain_tmp));
    STRUX_TRY(strux_alloc_array(&d->node, 2 * ML_BAN_MAX + 3, sizeof *d->node));
    STRUX_TRY(strux_alloc_array(&d->heap, 2 * ML_BAN_MAX + 3, sizeof *d->heap));
    return STRUX_OK;
}

/* Order of the gains: larger v first, then smaller label index. */
static int gain_before(const ml_gain *x, const ml_gain *y)
{
    return x->v > y->v || (x->v == y->v && x->k < y->k);
}

/* Stable bottom-up merge sort into gain_before order, through the scratch tmp (n entries):
 * oracles must not allocate (the ban-list oracle's regrets). */
static void gain_sort(ml_gain *a, ml_gain *tmp, int32_t n)
{
    ml_gain *src = a, *dst = tmp;
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int32_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = gain_before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        ml_gain *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* The wedge oracle's order, drawn as far as a query needs it: the gains not yet in order form a
 * binary heap by gain_before (built in O(L)), and each one taken costs O(log L), so a search whose
 * queries stop after the first few error counts never sorts the rest. */
static void gain_heap_down(ml_gain *h, int32_t n, int32_t c)
{
    ml_gain x = h[c];
    for (;;) {
        int32_t l = 2 * c + 1;
        if (l >= n) break;
        if (l + 1 < n && gain_before(&h[l + 1], &h[l])) l++;
        if (!gain_before(&h[l], &x)) break;
        h[c] = h[l];
        c = l;
    }
    h[c] = x;
}

static void gain_heap_build(ml_data *d, int32_t n)
{
    d->n_sorted = 0;
    d->n_heap = n;
    for (int32_t c = n / 2 - 1; c >= 0; c--)
        gain_heap_down(d->gain_tmp, n, c);
}

/* gain[e], taking gains off the heap until it is in order. */
static double gain_at(ml_data *d, int32_t e)
{
    while (d->n_sorted <= e) {
        ml_gain *h = d->gain_tmp;
        d->gain[d->n_sorted++] = h[0];
        h[0] = h[--d->n_heap];
        gain_heap_down(h, d->n_heap, 0);
    }
    return d->gain[e].v;
}

/* Fill ans from the label in y. */
static void ml_answer(const strux_pot *pot, const strux_label *truth, const strux_label *y,
                      strux_answer *ans)
{
    double m = 0, g = 0, size = 0;
    for (int32_t k = 0; k < y->n; k++) {
        if (y->y[k] != truth->y[k]) {
            m += y->y[k] ? pot->s[k] : -pot->s[k];
            g += 1;
        }
        size += y->y[k];
    }
    ans->found = 1;
    ans->m = m;
    ans->g = g;
    ans->size = size;
}

/* ML_WEDGE_TAU·max(1, |x|) */
static inline double wedge_tol(double x)
{
    double ax = fabs(x);
    return ML_WEDGE_TAU * (ax > 1.0 ? ax : 1.0);
}

/* Does the wedge of q admit the point (h, g)? Strict sides are g ≤ αh − τ and g ≥ βh + τ and
 * closed sides g ≤ αh + τ and g ≥ βh − τ, τ = ML_WEDGE_TAU·max(1, |slope·h|), so a label on a ray
 * shared by two wedges (closed in one, open in the other) is admitted by exactly one of them.
 * α = ∞: no upper side when closed; when open, g < ∞·h reads h > 0 (h ≥ τ). */
static inline int wedge_admits(const strux_query *q, double h, double g)
{
    double bh = q->beta * h, tb = wedge_tol(bh);
    if (q->lower_open ? !(g >= bh + tb) : !(g >= bh - tb)) return 0;
    if (isinf(q->alpha)) return !q->upper_open || h >= ML_WEDGE_TAU;
    double ah = q->alpha * h, ta = wedge_tol(ah);
    return q->upper_open ? g <= ah - ta : g <= ah + ta;
}

/* Is (h, g) beyond the upper side even when closed (g > αh + τ; α = ∞ open: h < τ)? The bound
 * αh + τ does not grow as h falls, so every (h′, g′) with h′ ≤ h and g′ > g is beyond it too. */
static inline int wedge_above(const strux_query *q, double h, double g)
{
    if (isinf(q->alpha)) return q->upper_open && h < ML_WEDGE_TAU;
    double ah = q->alpha * h;
    return g > ah + wedge_tol(ah);
}

/* Constrained λ-oracle by the loss-indexed frontier of §2.4(a): for every error count e the label
 * flipping the e largest gains gain_k = s_k·(1 − 2y_ik) has the largest margin h_e among all
 * labels with e errors, and among these frontier labels F = {y_0..y_m} the answer maximises
 * a·m + b·e subject to the wedge on (h_e, e), h = m + h_shift.
 * Exactness: the answer is exact over F, not over all labels (that would be a knapsack over the
 * label subsets). F contains, with its (h, g), a maximiser of every ψ increasing in h (a label
 * with e errors is dominated by (h_e, e)), and the unconstrained maximum of a·m + b·e over F
 * equals the one over all labels; so a search whose every query is answered over F (angular
 * search: root and wedges alike) finds max over all labels of ψ. Ties in h_e go to the smaller e,
 * equal gains to the smaller label index. */
static strux_status ml_oracle_wedge(const strux_task *t, const strux_pot *pot,
                                    const strux_label *truth, const strux_query *q, strux_label *y,
                                    strux_answer *ans)
{
    ml_data *d = t->data;
    int32_t L = t->n_labels;
    if (d->gain_pot != pot || d->gain_stamp != pot->stamp ||
        memcmp(d->gain_truth, truth->y, (size_t)L * sizeof *truth->y) != 0) {
        for (int32_t k = 0; k < L; k++)
            d->gain_tmp[k] = (ml_gain){truth->y[k] ? -pot->s[k] : pot->s[k], k};
        gain_heap_build(d, L);
        d->gain_pot = pot;
        d->gain_stamp = pot->stamp;
        memcpy(d->gain_truth, truth->y, (size_t)L * sizeof *truth->y);
        d->truth_size = 0;
        for (int32_t k = 0; k < L; k++)
            d->truth_size += truth->y[k] != 0;
    }
    /* The scan ends at the first e after which no e can be the answer, drawing no gain beyond:
     * (1) once the next gain is ≤ 0, h_e never grows again (gains descend) while g = e does, so
     * a point beyond the upper side keeps every later point beyond it; (2) v_e = a·m_e + b·e
     * grows by a·gain_e + b, which (a ≥ 0) never grows again once it is ≤ 0, so from an e whose
     * v_e is no more than the best admitted no later e beats it (ties keep the smaller e). */
    double m_e = 0, best = -INFINITY, m_best = 0;
    int32_t e_best = -1;
    for (int32_t e = 0; e <= L; e++) {
        if (e > 0) m_e += gain_at(d, e - 1);
        double h = m_e + q->h_shift, v = q->a * m_e + q->b * e;
        if (v > best && wedge_admits(q, h, (double)e)) {
            best = v;
            e_best = e;
            m_best = m_e;
        }
        if (e == L) break;
        if (wedge_above(q, h, (double)e) && gain_at(d, e) <= 0) break;
        if (q->a >= 0 && v <= best && q->a * gain_at(d, e) + q->b <= 0) break;
    }
    y->n = L;
    y->n_mu = 0;
    memcpy(y->y, truth->y, (size_t)L * sizeof *y->y);
    if (e_best < 0) {
        *ans = (strux_answer){0};
        return STRUX_OK;
    }
    /* the answer's coordinates come from the frontier: m summed in gain order */
    int32_t size = d->truth_size;
    for (int32_t e = 0; e < e_best; e++) {
        int32_t k = d->gain[e].k;
        y->y[k] = !truth->y[k];
        size += y->y[k] ? 1 : -1;
    }
    *ans = (strux_answer){.found = 1, .m = m_best, .g = e_best, .size = size};
    return STRUX_OK;
}

static int ml_banned(const strux_query *q, const strux_label *y)
{
    for (int32_t b = 0; b < q->n_ban; b++)
        if (strux_label_equal(&q->ban[b], y)) return 1;
    return 0;
}

static void heap_push(const ml_node *node, int32_t *heap, int32_t *n, int32_t v)
{
    int32_t c = (*n)++;
    while (c > 0 && node[heap[(c - 1) / 2]].cost > node[v].cost) {
        heap[c] = heap[(c - 1) / 2];
        c = (c - 1) / 2;
    }
    heap[c] = v;
}

static int32_t heap_pop(const ml_node *node, int32_t *heap, int32_t *n)
{
    int32_t top = heap[0], last = heap[--*n], c = 0;
    for (;;) {
        int32_t l = 2 * c + 1;
        if (l >= *n) break;
        if (l + 1 < *n && node[heap[l + 1]].cost < node[heap[l]].cost) l++;
        if (node[heap[l]].cost >= node[last].cost) break;
        heap[c] = heap[l];
        c = l;
    }
    if (*n > 0) heap[c] = last;
    return top;
}

/* Ban-list oracle (§2.3) by k-best enumeration: the unconstrained maximiser y* decomposes per
 * label, and every other label is y* with a set of labels toggled, costing the sum of their
 * regrets δ_k = |a·gain_k + b + c·(1 − 2y_ik)|. Flip sets are generated in increasing cost by the
 * classic best-first scheme over regrets sorted ascending (a set with largest rank j spawns "add
 * j+1" and "replace j by j+1"); the first label not in the ban list is the answer, after at most
 * n_ban + 1 pops. */
static strux_status ml_oracle_ban(const strux_task *t, const strux_pot *pot,
                                  const strux_label *truth, const strux_query *q, strux_label *y,
                                  strux_answer *ans)
{
    ml_data *d = t->data;
    int32_t L = t->n_labels;
    STRUX_CHECK(q->n_ban <= ML_BAN_MAX, STRUX_ERR_UNSUPPORTED,
                "task '%s': ban list of %d labels exceeds the %d the k-best oracle holds",
                t->type_name, q->n_ban, ML_BAN_MAX);
    for (int32_t k = 0; k < L; k++) {
        double sign = truth->y[k] ? -1.0 : 1.0;
        double v = q->a * sign * pot->s[k] + q->b + q->c * sign;
        d->gain[k] = (ml_gain){-fabs(v), k}; /* descending −δ = ascending regret */
        y->y[k] = v > 0 ? !truth->y[k] : truth->y[k];
    }
    gain_sort(d->gain, d->gain_tmp, L);
    d->gain_pot = NULL; /* gain now holds regrets, not the wedge oracle's gains */
    y->n = L;
    y->n_mu = 0;
    int32_t n_node = 0, n_heap = 0;
    d->node[n_node++] = (ml_node){0.0, -1, -1};
    heap_push(d->node, d->heap, &n_heap, 0);
    while (n_heap > 0) {
        int32_t v = heap_pop(d->node, d->heap, &n_heap);
        const ml_node nv = d->node[v];
        /* toggle the set of v on y*, test, untoggle */
        for (int32_t p = v; d->node[p].j >= 0; p = d->node[p].parent)
            y->y[d->gain[d->node[p].j].k] ^= 1;
        int banned = ml_banned(q, y);
        if (!banned) {
            ml_answer(pot, truth, y, ans);
            return STRUX_OK;
        }
        for (int32_t p = v; d->node[p].j >= 0; p = d->node[p].parent)
            y->y[d->gain[d->node[p].j].k] ^= 1;
        int32_t j1 = nv.j + 1;
        if (j1 >= L) continue;
        double delta1 = -d->gain[j1].v;
        d->node[n_node] = (ml_node){nv.cost + delta1, j1, v};
        heap_push(d->node, d->heap, &n_heap, n_node++);
        if (nv.j >= 0) {
            d->node[n_node] = (ml_node){nv.cost + d->gain[nv.j].v + delta1, j1, nv.parent};
            heap_push(d->node, d->heap, &n_heap, n_node++);
        }
    }
    *ans = (strux_answer){0}; /* every label is banned */
    return STRUX_OK;
}

/* argmax_y a·m(y) + b·L(y, y_i) + c·|y|: label k leaves the truth iff
 * a·gain_k + b + c·(1 − 2y_ik) > 0, with gain_k = s_k·(1 − 2y_ik) the margin change of the flip;
 * ties keep the truth. Wedge queries go to the frontier oracle, ban lists to the k-best one. */
static strux_status ml_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                              const strux_query *q, strux_label *y, strux_answer *ans)
{
    if (q->wedge || q->n_ban > 0) {
        STRUX_CHECK(t->data, STRUX_ERR_INTERNAL, "task '%s' queried before check()", t->type_name);
        STRUX_CHECK(!(q->wedge && q->n_ban > 0), STRUX_ERR_UNSUPPORTED,
                    "task '%s' does not support a wedge and a ban list in one query", t->type_name);
        STRUX_CHECK(!q->wedge || q->c == 0, STRUX_ERR_UNSUPPORTED,
                    "task '%s': the constrained oracle has no label-size term (c = %g)",
                    t->type_name, q->c);
        return q->wedge ? ml_oracle_wedge(t, pot, truth, q, y, ans)
                        : ml_oracle_ban(t, pot, truth, q, y, ans);
    }
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
    for (int32_t k = 0; k < y->n; k++)
        y->y[k] = pot->s[k] > 0;
    return STRUX_OK;
}

static strux_status ml_add_feature(const strux_task *t, const strux_label *y, double scale,
                                   const strux_phi *out)
{
    (void)t;
    for (int32_t k = 0; k < y->n; k++)
        if (y->y[k]) strux_phi_row(out, 0, k, scale);
    return STRUX_OK;
}

static strux_status ml_add_delta(const strux_task *t, const strux_label *y,
                                 const strux_label *truth, double scale, const strux_phi *out)
{
    (void)t;
    for (int32_t k = 0; k < y->n; k++)
        if (y->y[k] != truth->y[k]) strux_phi_row(out, 0, k, y->y[k] ? scale : -scale);
    return STRUX_OK;
}

/* Margin rescaling with Hamming loss: Σ_k max(0, 1 + (1 − 2y_ik)·w_k·x), one hinge per label. */
static int32_t ml_hinge_parts(const strux_task *t, const strux_label *truth, double *sigma)
{
    for (int32_t k = 0; k < t->n_labels; k++)
        sigma[k] = truth->y[k] ? -1.0 : 1.0;
    return t->n_labels;
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

static strux_status ml_eval_report(const strux_task *t, const double *acc, strux_scores *out)
{
    strux_mlmetrics_report(t->n_labels, acc, out);
    return STRUX_OK;
}

static const struct strux_task_ops multilabel_ops = {
    .check = ml_check,
    .model_shape = ml_model_shape,
    .sizes = ml_sizes,
    .potentials = ml_potentials,
    .potentials_scores = ml_potentials_scores,
    .truth = strux_labelset_truth,
    .oracle = ml_oracle,
    .loss = ml_loss,
    .size = ml_size,
    .score = ml_score,
    .predict = ml_predict,
    .add_feature = ml_add_feature,
    .hinge_parts = ml_hinge_parts,
    .add_delta = ml_add_delta,
    .eval_size = ml_eval_size,
    .eval_add = ml_eval_add,
    .eval_report = ml_eval_report,
    .format_label = strux_labelset_format,
    .label_count = strux_labelset_count,
    .label_at = strux_labelset_at,
    .destroy = ml_destroy,
};

strux_status strux_task_create_multilabel(const strux_task_options *opt, strux_task *t)
{
    (void)opt;
    t->ops = &multilabel_ops;
    return STRUX_OK;
}
