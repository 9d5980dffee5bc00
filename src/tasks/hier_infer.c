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
    double *ub;               /* [n_leaves] §5.4 bound ub(l) */
    int32_t *stack;           /* [M] DP backtrack */
    unsigned char *keep;      /* [M] node in Ā(C) of the pruning */
    unsigned char *fixed;     /* [M] column currently fixed at 0 in the LP */
    strux_lp *lp;             /* (6.22) rows over M columns, or NULL without with_lp */
};

void strux_hier_infer_destroy(strux_hier_infer **wp)
{
    if (!wp || !*wp) return;
    strux_hier_infer *w = *wp;
    strux_free(&w->r);
    strux_free(&w->g);
    strux_free(&w->ub);
    strux_free(&w->stack);
    strux_free(&w->keep);
    strux_free(&w->fixed);
    strux_lp_destroy(&w->lp);
    strux_free(wp);
}

/* The rows of (6.22), built once: Σ_{c∈C(n)} z_c − z_n ≥ 0 for every internal n, z_p − z_c ≥ 0
 * for every edge, Σ_{l∈ℒ} z_l ≥ 1; columns in [0, 1]. idx/val: scratch of M + 1 entries. */
static strux_status build_lp(const strux_hierarchy *h, strux_lp *lp, int32_t *idx, double *val)
{
    int32_t M = h->n_nodes;
    for (int32_t k = 0; k < M; k++)
        STRUX_TRY(strux_lp_set_col_bounds(lp, k, STRUX_LP_DOUBLE, 0.0, 1.0));
    for (int32_t k = 0; k < M; k++) {
        int64_t lo = h->child_ptr[k], hi = h->child_ptr[k + 1];
        if (lo == hi) continue;
        int32_t n = 0;
        idx[n] = k;
        val[n++] = -1.0;
        for (int64_t q = lo; q < hi; q++) {
            idx[n] = h->child_idx[q];
            val[n++] = 1.0;
        }
        STRUX_TRY(strux_lp_add_row(lp, n, idx, val, STRUX_LP_LOWER, 0.0, 0.0, NULL));
    }
    for (int32_t k = 0; k < M; k++)
        for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++) {
            const int32_t e[2] = {h->parent_idx[q], k};
            const double v[2] = {1.0, -1.0};
            STRUX_TRY(strux_lp_add_row(lp, 2, e, v, STRUX_LP_LOWER, 0.0, 0.0, NULL));
        }
    for (int32_t i = 0; i < h->n_leaves; i++) {
        idx[i] = h->leaves[i];
        val[i] = 1.0;
    }
    STRUX_TRY(strux_lp_add_row(lp, h->n_leaves, idx, val, STRUX_LP_LOWER, 1.0, 0.0, NULL));
    return STRUX_OK;
}

strux_status strux_hier_infer_create(const strux_hierarchy *h, int with_lp, strux_hier_infer **out)
{
    *out = NULL;
    int32_t M = h->n_nodes;
    strux_hier_infer *w = NULL;
    int32_t *idx = NULL;
    double *val = NULL;
    strux_status st;
    STRUX_TRY(strux_alloc(&w, sizeof *w));
    w->h = h;
    STRUX_TRY_GOTO(st, strux_alloc_array(&w->r, (size_t)M, sizeof *w->r), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&w->g, (size_t)M, sizeof *w->g), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&w->ub, (size_t)h->n_leaves, sizeof *w->ub), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&w->stack, (size_t)M, sizeof *w->stack), done);
    STRUX_TRY_GOTO(st, strux_alloc(&w->keep, (size_t)M), done);
    STRUX_TRY_GOTO(st, strux_alloc(&w->fixed, (size_t)M), done);
    if (with_lp) {
        STRUX_TRY_GOTO(st, strux_alloc_array(&idx, (size_t)M + 1, sizeof *idx), done);
        STRUX_TRY_GOTO(st, strux_alloc_array(&val, (size_t)M + 1, sizeof *val), done);
        STRUX_TRY_GOTO(st, strux_lp_create(M, &w->lp), done);
        STRUX_TRY_GOTO(st, build_lp(h, w->lp, idx, val), done);
    }
    *out = w;
    w = NULL;
    st = STRUX_OK;
done:
    strux_free(&idx);
    strux_free(&val);
    strux_hier_infer_destroy(&w);
    return st;
}

void strux_hier_infer_set_fresh_start(strux_hier_infer *w, int fresh)
{
    if (w->lp) strux_lp_set_fresh_start(w->lp, fresh);
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
    /* S lands in ub, which the single-label path does not otherwise use */
    strux_hier_infer_leaf_scores(w, s, a, w->ub);
    *leaf = w->h->leaves[best_leaf(w->h, w->ub, b, value)];
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

/* §5.4 pruning: keep[n] = 1 on Ā(C), C = {l : ub(l) > 0} ∪ {l*}; returns |C|, *lstar = l*'s
 * leaf position, *lstar_value its path sum. ub(l) = r_l + Σ_{n∈𝒜(l)} max(0, r_n). */
static int32_t prune(strux_hier_infer *w, int32_t *lstar, double *lstar_value)
{
    const strux_hierarchy *h = w->h;
    path_sums(w, w->ub);
    *lstar = best_leaf(h, w->ub, NULL, lstar_value);
    memset(w->keep, 0, (size_t)h->n_nodes);
    int32_t n_c = 0;
    for (int32_t i = 0; i < h->n_leaves; i++) {
        int32_t l = h->leaves[i];
        double ub = w->r[l];
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
            if (h->anc_idx[q] != l && w->r[h->anc_idx[q]] > 0) ub += w->r[h->anc_idx[q]];
        if (!(ub > 0) && i != *lstar) continue;
        n_c++;
        for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
            w->keep[h->anc_idx[q]] = 1;
    }
    return n_c;
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
    info->n_candidates = h->n_leaves;
    if (flags & STRUX_HIER_PRUNE) {
        int32_t lstar;
        double vstar;
        info->n_candidates = prune(w, &lstar, &vstar);
        if (info->n_candidates == 1) {
            /* only l* can be in an optimal label: Ā(l*), no LP */
            memset(z, 0, (size_t)M * sizeof *z);
            for (int64_t q = h->anc_ptr[lstar]; q < h->anc_ptr[lstar + 1]; q++)
                z[h->anc_idx[q]] = 1.0;
            *value = info->lp_value = vstar;
            return STRUX_OK;
        }
    } else {
        memset(w->keep, 1, (size_t)M);
    }
    /* the sub-DAG programme: columns outside Ā(C) fixed at 0 (their rows become trivial or
     * restricted to the kept children, as §5.4 asks); only changed bounds are touched */
    for (int32_t k = 0; k < M; k++) {
        if (w->fixed[k] == !w->keep[k]) continue;
        w->fixed[k] = !w->keep[k];
        STRUX_TRY(w->fixed[k] ? strux_lp_set_col_bounds(w->lp, k, STRUX_LP_FIXED, 0.0, 0.0)
                              : strux_lp_set_col_bounds(w->lp, k, STRUX_LP_DOUBLE, 0.0, 1.0));
    }
    strux_lp_set_objective(w->lp, w->r, 0.0);
    strux_lp_result res;
    double v;
    STRUX_TRY(strux_lp_solve(w->lp, &res, &v));
    STRUX_CHECK(res == STRUX_LP_OPTIMAL, STRUX_ERR_LP,
                "the (6.22) LP of %s has no optimum (GLPK result %d)", h->path, (int)res);
    info->lp_value = v;
    strux_lp_primal(w->lp, z);
    for (int32_t k = 0; k < M && !info->fractional; k++)
        info->fractional = fabs(z[k] - round(z[k])) > STRUX_HIER_INTEGRAL_TOL;
    if (info->fractional && (flags & STRUX_HIER_EXACT)) {
        STRUX_TRY(strux_lp_solve_integer(w->lp, &res, &v, z));
        STRUX_CHECK(res == STRUX_LP_OPTIMAL, STRUX_ERR_LP,
                    "the (6.22) binary programme of %s has no optimum (GLPK result %d)", h->path,
                    (int)res);
        info->used_ilp = 1;
    } else if (info->fractional) {
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
