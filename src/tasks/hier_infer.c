/* tasks/hier_infer.c - loss-augmented inference and prediction on label hierarchies
 * (hierarchical.md §5, §6), declared in hier_impl.h. In this order: the workspace and the (6.22)
 * rows, leaf path sums and the single-label argmax (§5.1), the multi-label tree DP (§5.3, A19),
 * the multi-label DAG programme with the exact pruning (§5.4, A18). Everything works on r_n =
 * s_n + a_n; the caller owns the model, the loss and the subgradient (§5.5). GLPK only through
 * strux/lp.h. */
#include "hier_impl.h"

#include "strux/lp.h"

#include <math.h>
#include <string.h>

struct strux_hier_infer {
    const strux_hierarchy *h; /* borrowed */
    double *r;                /* [M] s + a of the current call */
    double *g;                /* [M] top-down path sums (§5.1) or the DP's g(n) (§5.3) */
    double *S;                /* [n_leaves] leaf path sums S(l) */
    double *ub;               /* [n_leaves] the bound U(l) of the pruning */
    int32_t *stack;           /* [M] DP backtrack */
    int32_t *order;           /* [n_leaves] candidate leaves, by descending ub (the cap) */
    unsigned char *keep;      /* [M] node in Ā(C) of the pruning */
    unsigned char *inc;       /* [M] node in the incumbent label Y */
    unsigned char *inc_leaf;  /* [n_leaves] leaf of Y */
    int32_t *cover;           /* [M] chosen leaves covering a node (the enumeration) */
    int32_t *col;             /* [M] LP column of a kept node, −1 otherwise */
    int32_t *node;            /* [M] node of an LP column */
    int32_t *idx;             /* [M + 1] row scratch */
    double *val;              /* [M + 1] row scratch; the LP's objective and solution */
    strux_lp *lp;             /* the (6.22) programme of the current call, M columns at most,
                                 or NULL without with_lp */
    int fresh;                /* task.lp_start = fresh: GLPK's standard basis, not the incumbent */
    int64_t max_nodes;        /* task.lp_max_nodes: cap on the pruned LP's columns (0: none) */
    int32_t enum_max;         /* candidate sets up to this size are enumerated, not LP-solved */
};

void strux_hier_infer_destroy(strux_hier_infer **wp)
{
    if (!wp || !*wp) return;
    strux_hier_infer *w = *wp;
    strux_free(&w->r);
    strux_free(&w->g);
    strux_free(&w->S);
    strux_free(&w->ub);
    strux_free(&w->stack);
    strux_free(&w->order);
    strux_free(&w->keep);
    strux_free(&w->inc);
    strux_free(&w->inc_leaf);
    strux_free(&w->cover);
    strux_free(&w->col);
    strux_free(&w->node);
    strux_free(&w->idx);
    strux_free(&w->val);
    strux_lp_destroy(&w->lp);
    strux_free(wp);
}

strux_status strux_hier_infer_create(const strux_hierarchy *h, int with_lp, strux_hier_infer **out)
{
    *out = NULL;
    int32_t M = h->n_nodes, L = h->n_leaves;
    strux_hier_infer *w = NULL;
    strux_status st;
    STRUX_TRY(strux_alloc(&w, sizeof *w));
    w->h = h;
    w->enum_max = STRUX_HIER_ENUM_MAX;
    STRUX_TRY_GOTO(st, strux_alloc_array(&w->r, (size_t)M, sizeof *w->r), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&w->g, (size_t)M, sizeof *w->g), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&w->S, (size_t)L, sizeof *w->S), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&w->ub, (size_t)L, sizeof *w->ub), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&w->stack, (size_t)M, sizeof *w->stack), done);
    STRUX_TRY_GOTO(st, strux_alloc(&w->keep, (size_t)M), done);
    if (with_lp) {
        STRUX_TRY_GOTO(st, strux_alloc_array(&w->order, (size_t)L, sizeof *w->order), done);
        STRUX_TRY_GOTO(st, strux_alloc(&w->inc, (size_t)M), done);
        STRUX_TRY_GOTO(st, strux_alloc(&w->inc_leaf, (size_t)L), done);
        STRUX_TRY_GOTO(st, strux_alloc_array(&w->cover, (size_t)M, sizeof *w->cover), done);
        STRUX_TRY_GOTO(st, strux_alloc_array(&w->col, (size_t)M, sizeof *w->col), done);
        STRUX_TRY_GOTO(st, strux_alloc_array(&w->node, (size_t)M, sizeof *w->node), done);
        STRUX_TRY_GOTO(st, strux_alloc_array(&w->idx, (size_t)M + 1, sizeof *w->idx), done);
        STRUX_TRY_GOTO(st, strux_alloc_array(&w->val, (size_t)M + 1, sizeof *w->val), done);
        STRUX_TRY_GOTO(st, strux_lp_create(M, &w->lp), done);
    }
    *out = w;
    w = NULL;
    st = STRUX_OK;
done:
    strux_hier_infer_destroy(&w);
    return st;
}

void strux_hier_infer_set_fresh_start(strux_hier_infer *w, int fresh)
{
    w->fresh = fresh;
}

void strux_hier_infer_set_max_nodes(strux_hier_infer *w, int64_t max_nodes)
{
    w->max_nodes = max_nodes;
}

void strux_hier_infer_set_enum_max(strux_hier_infer *w, int32_t enum_max)
{
    w->enum_max = enum_max < 1 ? 1 : enum_max > 20 ? 20 : enum_max;
}

/* r = s + a (a NULL: r = s). */
static void node_values(strux_hier_infer *w, const double *s, const double *a)
{
    int32_t M = w->h->n_nodes;
    for (int32_t k = 0; k < M; k++)
        w->r[k] = a ? s[k] + a[k] : s[k];
}

/* S(l) of every leaf from w->r (§5.1): tree top-down S(n) = S(parent) + r_n; DAG over Ā(l). */
static void path_sums(strux_hier_infer *w, double *S)
{
    const strux_hierarchy *h = w->h;
    if (h->is_tree) {
        w->g[0] = w->r[0];
        for (int32_t k = 1; k < h->n_nodes; k++)
            w->g[k] = w->g[h->parent_idx[h->parent_ptr[k]]] + w->r[k];
        for (int32_t i = 0; i < h->n_leaves; i++)
            S[i] = w->g[h->leaves[i]];
        return;
    }
    for (int32_t i = 0; i < h->n_leaves; i++) {
        double sum = 0;
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
            sum += w->r[h->anc_idx[q]];
        S[i] = sum;
    }
}

void strux_hier_infer_leaf_scores(strux_hier_infer *w, const double *s, const double *a, double *S)
{
    node_values(w, s, a);
    path_sums(w, S);
}

/* argmax over leaves of S + b (b may be NULL), smallest index first on ties; S in leaf order. */
static int32_t best_leaf(const strux_hierarchy *h, const double *S, const double *b, double *value)
{
    int32_t best = 0;
    double v = b ? S[0] + b[0] : S[0];
    for (int32_t i = 1; i < h->n_leaves; i++) {
        double vi = b ? S[i] + b[i] : S[i];
        if (vi > v) {
            v = vi;
            best = i;
        }
    }
    *value = v;
    return best;
}

void strux_hier_infer_leaf(strux_hier_infer *w, const double *s, const double *a, const double *b,
                           int32_t *leaf, double *value)
{
    strux_hier_infer_leaf_scores(w, s, a, w->S);
    *leaf = w->h->leaves[best_leaf(w->h, w->S, b, value)];
}

/* The child of k with the largest g, smallest index on ties (children ascend). */
static int32_t best_child(const strux_hierarchy *h, const double *g, int32_t k)
{
    int64_t lo = h->child_ptr[k];
    int32_t c = h->child_idx[lo];
    for (int64_t q = lo + 1; q < h->child_ptr[k + 1]; q++)
        if (g[h->child_idx[q]] > g[c]) c = h->child_idx[q];
    return c;
}

strux_status strux_hier_infer_tree(strux_hier_infer *w, const double *s, const double *a, double *z,
                                   double *value)
{
    const strux_hierarchy *h = w->h;
    STRUX_CHECK(h->is_tree, STRUX_ERR_INTERNAL,
                "the multi-label tree DP called on a DAG (%s); use the LP of (6.22)", h->path);
    node_values(w, s, a);
    double *g = w->g;
    /* §5.3 bottom-up: g(n) = r_n + Σ_c max(0, g(c)) if some g(c) > 0, else r_n + max_c g(c) */
    for (int32_t k = h->n_nodes - 1; k >= 0; k--) {
        int64_t lo = h->child_ptr[k], hi = h->child_ptr[k + 1];
        if (lo == hi) {
            g[k] = w->r[k];
            continue;
        }
        double pos = 0, best = -INFINITY;
        for (int64_t q = lo; q < hi; q++) {
            double gc = g[h->child_idx[q]];
            if (gc > 0) pos += gc;
            if (gc > best) best = gc;
        }
        g[k] = w->r[k] + (best > 0 ? pos : best);
    }
    /* backtrack (A19): children with g(c) > 0 strictly, else the single smallest argmax */
    memset(z, 0, (size_t)h->n_nodes * sizeof *z);
    int32_t top = 0;
    w->stack[top++] = 0;
    while (top > 0) {
        int32_t k = w->stack[--top];
        z[k] = 1.0;
        int64_t lo = h->child_ptr[k], hi = h->child_ptr[k + 1];
        if (lo == hi) continue;
        int32_t c = best_child(h, g, k);
        if (g[c] > 0) {
            for (int64_t q = lo; q < hi; q++)
                if (g[h->child_idx[q]] > 0) w->stack[top++] = h->child_idx[q];
        } else {
            w->stack[top++] = c;
        }
    }
    *value = g[0];
    return STRUX_OK;
}

/* keep[n] = 1 on Ā(l) for the leaf at position i; returns the nodes newly kept. */
static int32_t keep_ancestors(strux_hier_infer *w, int32_t i)
{
    const strux_hierarchy *h = w->h;
    int32_t added = 0;
    for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
        if (!w->keep[h->anc_idx[q]]) {
            w->keep[h->anc_idx[q]] = 1;
            added++;
        }
    return added;
}

/* Nodes Ā(l) would add to keep (the cap's test). */
static int32_t ancestors_missing(const strux_hier_infer *w, int32_t i)
{
    const strux_hierarchy *h = w->h;
    int32_t n = 0;
    for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
        n += !w->keep[h->anc_idx[q]];
    return n;
}

/* The incumbent [added]: Ā(l*), the best single-leaf label, then in leaf order every leaf whose
 * marginal gain Σ_{n ∈ Ā(l) \ Y} r_n is positive joins Y. inc[n] marks Y, inc_leaf[i] its
 * leaves; returns V(Y) ≥ V(Ā(l*)). O(Σ_l |Ā(l)|). */
static double incumbent(strux_hier_infer *w, int32_t lstar)
{
    const strux_hierarchy *h = w->h;
    memset(w->inc, 0, (size_t)h->n_nodes);
    memset(w->inc_leaf, 0, (size_t)h->n_leaves);
    double v = 0;
    for (int32_t k = -1; k < h->n_leaves; k++) {
        int32_t i = k < 0 ? lstar : k; /* l* first */
        if (k >= 0 && i == lstar) continue;
        double gain = 0;
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
            if (!w->inc[h->anc_idx[q]]) gain += w->r[h->anc_idx[q]];
        if (k >= 0 && !(gain > 0)) continue;
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
            w->inc[h->anc_idx[q]] = 1;
        w->inc_leaf[i] = 1;
        v += gain;
    }
    return v;
}

/* Candidate positions by descending U, then ascending position (a stable order). */
static void sort_candidates(strux_hier_infer *w, int32_t n)
{
    for (int32_t k = 1; k < n; k++) { /* insertion sort: runs only when the cap bites */
        int32_t v = w->order[k], j = k;
        while (j > 0 && w->ub[w->order[j - 1]] < w->ub[v]) {
            w->order[j] = w->order[j - 1];
            j--;
        }
        w->order[j] = v;
    }
}

/* The exact leaf pruning (§5.4, with an incumbent bound [added]): with Y the incumbent of value
 * v, p_all = Σ_n max(0, r_n) and P(l) = Σ_{n∈Ā(l)} max(0, r_n), a leaf l outside Y is dropped
 * when
 *   ub(l) = r_l + P(l) − max(0, r_l) ≤ 0  (§5.4: taking l out of a label never lowers its value),
 * or
 *   U(l) = S(l) + min(p_all − P(l), Σ_{l' ≠ l} max(0, ub(l'))) ≤ v
 * (no label that contains l beats Y: the other nodes of such a label are worth at most their
 * positive part, and each further leaf adds at most its ub).
 * C is Y's leaves and the rest; the programme on Ā(C) has the optimum of the full one: an optimal
 * label with a leaf of the second kind is worth at most v, and one with leaves of the first kind
 * keeps its value when they are taken out, down to a single leaf, worth at most V(Ā(l*)) ≤ v. The
 * comparison keeps leaves within 1e-9 relative of the bound (safe: keeping is always exact).
 * keep[n] = 1 on Ā(C), order[] holds C (U in ub[]); returns |C|, the kept nodes in *n_keep. Over
 * the cap (more kept nodes than max_nodes, |C| > enum_max) C shrinks to Y's leaves and then the
 * candidates of largest U that fit (*capped = 1; Y alone over the cap leaves C = Y's leaves). */
static int32_t prune(strux_hier_infer *w, double v_inc, double p_all, int32_t *n_keep, int *capped)
{
    const strux_hierarchy *h = w->h;
    double ub_all = 0, slack = 1e-9 * (1 + fabs(v_inc));
    for (int32_t i = 0; i < h->n_leaves; i++) { /* P(l) into ub[], then Σ_l max(0, ub(l)) */
        int32_t l = h->leaves[i];
        double p = 0;
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
            p += fmax(0.0, w->r[h->anc_idx[q]]);
        w->ub[i] = p;
        ub_all += fmax(0.0, w->r[l] + p - fmax(0.0, w->r[l]));
    }
    memset(w->keep, 0, (size_t)h->n_nodes);
    int32_t n_c = 0, kept = 0;
    for (int32_t i = 0; i < h->n_leaves; i++) {
        int32_t l = h->leaves[i];
        double p = w->ub[i], ub = w->r[l] + p - fmax(0.0, w->r[l]);
        double U = w->S[i] + fmin(p_all - p, ub_all - fmax(0.0, ub));
        w->ub[i] = U;
        if (!w->inc_leaf[i] && (!(ub > 0) || !(U > v_inc - slack))) continue;
        w->order[n_c++] = i;
        kept += keep_ancestors(w, i);
    }
    /* the cap is on LPs: a set small enough to enumerate needs none */
    *capped = n_c > w->enum_max && w->max_nodes > 0 && kept > w->max_nodes;
    if (*capped) {
        sort_candidates(w, n_c);
        memset(w->keep, 0, (size_t)h->n_nodes);
        kept = 0;
        for (int32_t k = 0; k < n_c; k++) /* Y's leaves first, whatever the cap */
            if (w->inc_leaf[w->order[k]]) kept += keep_ancestors(w, w->order[k]);
        int32_t m = 0; /* then, by descending U, the others that fit; order[] compacted in place
                          (m ≤ k: nothing unread is overwritten) */
        for (int32_t k = 0; k < n_c; k++) {
            int32_t i = w->order[k];
            if (!w->inc_leaf[i]) {
                if (kept + ancestors_missing(w, i) > w->max_nodes) continue;
                kept += keep_ancestors(w, i);
            }
            w->order[m++] = i;
        }
        n_c = m;
    }
    *n_keep = kept;
    return n_c;
}

/* The integer optimum over the closures of the non-empty subsets of C (order[0..n_c)), which are
 * the labels of the sub-DAG on Ā(C): a Gray-code walk keeping cover counts, O(2^|C| |Ā(l)|).
 * z gets the best label; returns its value. */
static double enumerate(strux_hier_infer *w, int32_t n_c, double *z)
{
    const strux_hierarchy *h = w->h;
    memset(w->cover, 0, (size_t)h->n_nodes * sizeof *w->cover);
    double v = 0, best = -INFINITY;
    unsigned set = 0, best_set = 0;
    for (unsigned g = 1; g < 1u << n_c; g++) {
        int32_t j = __builtin_ctz(g), i = w->order[j];
        int add = !(set >> j & 1);
        set ^= 1u << j;
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++) {
            int32_t n = h->anc_idx[q];
            if (add ? w->cover[n]++ == 0 : --w->cover[n] == 0) v += add ? w->r[n] : -w->r[n];
        }
        if (v > best) best = v, best_set = set;
    }
    memset(z, 0, (size_t)h->n_nodes * sizeof *z);
    for (int32_t j = 0; j < n_c; j++)
        if (best_set >> j & 1)
            for (int64_t q = h->anc_ptr[w->order[j]]; q < h->anc_ptr[w->order[j] + 1]; q++)
                z[h->anc_idx[q]] = 1.0;
    double sum = 0;
    for (int32_t k = 0; k < h->n_nodes; k++)
        if (z[k] != 0) sum += w->r[k];
    return sum;
}

/* The (6.22) programme on the kept nodes (the sub-DAG of §5.4, or every node), one column per
 * kept node in node order: Σ_{c ∈ C(n), kept} z_c − z_n ≥ 0 for every kept internal n, z_p − z_c
 * ≥ 0 for every edge into a kept node (its parents are kept: Ā(C) is closed upward), Σ z_l ≥ 1
 * over the kept leaves; 0 ≤ z ≤ 1; objective r. */
static strux_status build_lp(strux_hier_infer *w, int32_t n_cols)
{
    const strux_hierarchy *h = w->h;
    int32_t M = h->n_nodes, j = 0;
    for (int32_t k = 0; k < M; k++) {
        w->col[k] = w->keep[k] ? j : -1;
        if (w->keep[k]) w->node[j++] = k;
    }
    STRUX_TRY(strux_lp_reset(w->lp, n_cols));
    for (j = 0; j < n_cols; j++) {
        STRUX_TRY(strux_lp_set_col_bounds(w->lp, j, STRUX_LP_DOUBLE, 0.0, 1.0));
        w->val[j] = w->r[w->node[j]];
    }
    strux_lp_set_objective(w->lp, w->val, 0.0);
    for (j = 0; j < n_cols; j++) {
        int32_t k = w->node[j], n = 0;
        int64_t lo = h->child_ptr[k], hi = h->child_ptr[k + 1];
        if (lo == hi) continue;
        w->idx[n] = j;
        w->val[n++] = -1.0;
        for (int64_t q = lo; q < hi; q++)
            if (w->col[h->child_idx[q]] >= 0) {
                w->idx[n] = w->col[h->child_idx[q]];
                w->val[n++] = 1.0;
            }
        STRUX_TRY(strux_lp_add_row(w->lp, n, w->idx, w->val, STRUX_LP_LOWER, 0.0, 0.0, NULL));
    }
    for (j = 0; j < n_cols; j++) {
        int32_t k = w->node[j];
        for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++) {
            const int32_t e[2] = {w->col[h->parent_idx[q]], j};
            const double v[2] = {1.0, -1.0};
            STRUX_TRY(strux_lp_add_row(w->lp, 2, e, v, STRUX_LP_LOWER, 0.0, 0.0, NULL));
        }
    }
    int32_t n = 0;
    for (j = 0; j < n_cols; j++)
        if (h->child_ptr[w->node[j]] == h->child_ptr[w->node[j] + 1]) {
            w->idx[n] = j;
            w->val[n++] = 1.0;
        }
    return strux_lp_add_row(w->lp, n, w->idx, w->val, STRUX_LP_LOWER, 1.0, 0.0, NULL);
}

/* z = the incumbent's 0/1 indicator; returns its value. */
static double incumbent_label(const strux_hier_infer *w, double *z)
{
    double v = 0;
    for (int32_t k = 0; k < w->h->n_nodes; k++) {
        z[k] = w->inc[k] ? 1.0 : 0.0;
        if (w->inc[k]) v += w->r[k];
    }
    return v;
}

strux_status strux_hier_infer_dag(strux_hier_infer *w, const double *s, const double *a, int flags,
                                  double *z, double *value, strux_hier_dag_info *info)
{
    const strux_hierarchy *h = w->h;
    int32_t M = h->n_nodes;
    STRUX_CHECK(w->lp, STRUX_ERR_INTERNAL,
                "the (6.22) programme of %s was not built (workspace without with_lp)", h->path);
    strux_hier_dag_info dummy;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    node_values(w, s, a);
    path_sums(w, w->S);
    double vstar;
    int32_t lstar = best_leaf(h, w->S, NULL, &vstar), n_cols = M;
    double v_inc = incumbent(w, lstar);
    info->n_candidates = h->n_leaves;
    if (flags & STRUX_HIER_PRUNE) {
        double p_all = 0; /* Σ_n max(0, r_n) ≥ the LP's optimum (0 ≤ z ≤ 1) ≥ the IP's */
        for (int32_t k = 0; k < M; k++)
            p_all += fmax(0.0, w->r[k]);
        if (v_inc >= p_all - 1e-12 * (1 + p_all)) { /* Y reaches it: optimal for both, no LP */
            for (int32_t i = 0; i < h->n_leaves; i++)
                info->n_candidates -= !w->inc_leaf[i];
            *value = info->lp_value = incumbent_label(w, z);
            return STRUX_OK;
        }
        int32_t n_c = prune(w, v_inc, p_all, &n_cols, &info->capped);
        info->n_candidates = n_c;
        int over = info->capped && n_cols > w->max_nodes; /* the incumbent alone is too big */
        if (n_c <= w->enum_max || over) { /* no LP: enumeration (exact) or Y itself */
            *value = info->lp_value = over ? incumbent_label(w, z) : enumerate(w, n_c, z);
            return STRUX_OK;
        }
    } else {
        memset(w->keep, 1, (size_t)M);
    }
    double t0 = strux_time_now();
    STRUX_TRY(build_lp(w, n_cols));
    info->n_cols = n_cols;
    if (!w->fresh) { /* warm start at the incumbent Y: a feasible vertex, no phase 1 */
        for (int32_t j = 0; j < n_cols; j++)
            w->val[j] = w->inc[w->node[j]] ? 1.0 : 0.0;
        strux_lp_start_at(w->lp, w->val);
    }
    strux_lp_result res;
    double v;
    strux_status st = strux_lp_solve(w->lp, &res, &v);
    info->used_lp = 1;
    info->lp_seconds = strux_time_now() - t0;
    STRUX_TRY(st);
    STRUX_CHECK(res == STRUX_LP_OPTIMAL, STRUX_ERR_LP,
                "the (6.22) LP of %s has no optimum (GLPK result %d)", h->path, (int)res);
    info->lp_value = v;
    strux_lp_primal(w->lp, w->val);
    for (int32_t j = 0; j < n_cols && !info->fractional; j++)
        info->fractional = fabs(w->val[j] - round(w->val[j])) > STRUX_HIER_INTEGRAL_TOL;
    if (info->fractional && (flags & STRUX_HIER_EXACT)) {
        t0 = strux_time_now();
        st = strux_lp_solve_integer(w->lp, &res, &v, w->val);
        info->lp_seconds += strux_time_now() - t0;
        STRUX_TRY(st);
        STRUX_CHECK(res == STRUX_LP_OPTIMAL, STRUX_ERR_LP,
                    "the (6.22) binary programme of %s has no optimum (GLPK result %d)", h->path,
                    (int)res);
        info->used_ilp = 1;
    }
    memset(z, 0, (size_t)M * sizeof *z);
    for (int32_t j = 0; j < n_cols; j++)
        z[w->node[j]] = w->val[j];
    if (info->fractional && !info->used_ilp) {
        *value = v; /* A18: the relaxed z and its value */
        return STRUX_OK;
    }
    /* integral: exact 0/1 and the value summed from them */
    double sum = 0;
    for (int32_t k = 0; k < M; k++) {
        z[k] = round(z[k]);
        if (z[k] != 0) sum += w->r[k];
    }
    *value = sum;
    return STRUX_OK;
}
