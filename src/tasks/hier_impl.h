/* tasks/hier_impl.h - private inference core of the hierarchy task (hierarchical.md §5, §6).
 * The loss-augmented oracles and the predictors of the hierarchical models, as pure functions on
 * per-node scores, implemented in hier_infer.c, in this order: leaf path sums and the single-label
 * argmax (§5.1; tree O(M) top-down, DAG via the Ā(l) CSR), the multi-label tree DP (§5.3, ties
 * A19), and the multi-label DAG programme (6.22) (§5.4: LP relaxation, the binary IP through
 * strux_lp_solve_integer when the LP is fractional, the exact leaf pruning, the cap on its size,
 * the start at the incumbent).
 * No model, no features, no losses of their own, no MPI: the task turns W_n·x, α and its loss
 * into the two per-node arrays every oracle takes,
 *   s[n]  the node score (√α_n W_n·x, or what the model needs; §5),
 *   a[n]  the loss-augmentation term (§5.2: ±1 on leaves for leaf Hamming, on every node for node
 *         Hamming; 1{n ≠ l_i} on leaves for 0/1; NULL: prediction, §6),
 * and maximises Σ_{n∈y} (s_n + a_n) over the label space: single-label 𝒴_s = {Ā(l) : l ∈ ℒ};
 * multi-label 𝒴_m = {Ā(L) : ∅ ≠ L ⊆ ℒ} (§1), which are exactly the node sets that contain a
 * leaf, hold the parents of each member, and hold a child of each internal member ((6.22)).
 * A workspace is created once per hierarchy; no oracle allocates. Not Collective. */
#ifndef STRUX_HIER_IMPL_H
#define STRUX_HIER_IMPL_H

#include "strux/hierarchy.h"

typedef struct strux_hier_infer strux_hier_infer;

/* Integrality test of an LP solution (§5.4 GLPK recipe: |z − round(z)| ≤ 1e-6). */
#define STRUX_HIER_INTEGRAL_TOL 1e-6
/* A pruned candidate set of at most this many leaves is solved by enumerating the closures of
 * its 2^|C| − 1 leaf subsets (the exact optimum, no LP): 63 at most. */
#define STRUX_HIER_ENUM_MAX 6

/* Flags of strux_hier_infer_dag. */
enum {
    STRUX_HIER_EXACT = 1, /* the binary IP when the LP optimum is fractional (test time, §5.4);
                             without it the fractional z is the answer (training, A18) */
    STRUX_HIER_PRUNE = 2  /* the exact leaf pruning of §5.4 (task.prune) */
};

/* What one DAG solve did (instrumentation and tests). */
typedef struct strux_hier_dag_info {
    double lp_value;      /* optimum of the (pruned) LP; the value itself when no LP was solved */
    int used_lp;          /* an LP was solved (0: the incumbent reached Σ max(0, r), the pruning
                             left at most STRUX_HIER_ENUM_MAX candidates, enumerated, or the
                             incumbent alone was over the cap) */
    int fractional;       /* the LP optimum was fractional */
    int used_ilp;         /* the binary IP was solved */
    int capped;           /* the pruned LP was over the cap: C was cut to the incumbent's leaves
                             and the candidates of largest bound that fit (the answer is not
                             certified optimal) */
    int32_t n_candidates; /* |C| of the pruning (all leaves without STRUX_HIER_PRUNE) */
    int32_t n_cols;       /* columns of the LP solved (kept nodes), 0 without an LP */
    double lp_seconds;    /* wall seconds of building and solving the LP and the IP */
} strux_hier_dag_info;

/* Workspace for h (borrowed: it must outlive the workspace and not change). with_lp makes the
 * GLPK problem (up to M columns) and the scratch strux_hier_infer_dag needs (pass !h->is_tree
 * for the usual choice). STRUX_ERR_NOMEM, STRUX_ERR_LP. */
strux_status strux_hier_infer_create(const strux_hierarchy *h, int with_lp, strux_hier_infer **out);
void strux_hier_infer_destroy(strux_hier_infer **w);
/* fresh = 1: every LP starts from GLPK's standard basis (task.lp_start = fresh, z = 0, which the
 * cover row makes infeasible: a phase 1 first); 0 (default, warm): from the incumbent Ā(l*), the
 * best single-leaf label, a feasible vertex. Either way the answer depends only on the call's
 * scores, never on earlier calls. */
void strux_hier_infer_set_fresh_start(strux_hier_infer *w, int fresh);
/* Cap on the columns of a pruned LP (task.lp_max_nodes; 0, the default: none). */
void strux_hier_infer_set_max_nodes(strux_hier_infer *w, int64_t max_nodes);
/* Candidate sets of at most enum_max leaves (clamped to [1, 20]; default STRUX_HIER_ENUM_MAX)
 * are enumerated instead of LP-solved (tests lower it to reach the pruned LP on small DAGs). */
void strux_hier_infer_set_enum_max(strux_hier_infer *w, int32_t enum_max);

/* S(l) = Σ_{n∈Ā(l)} (s_n + a_n) for every leaf, in leaf order (h->leaves), to S (n_leaves).
 * Tree: one top-down pass, O(M); DAG: the Ā CSR, O(Σ_l |Ā(l)|). a may be NULL. */
void strux_hier_infer_leaf_scores(strux_hier_infer *w, const double *s, const double *a, double *S);
/* Single-label argmax (§5.1): the leaf l maximising S(l) + b[pos(l)] (b per leaf in leaf order,
 * e.g. a non-decomposable loss such as Δ̃; a and b may be NULL); ties: smallest node index (A19).
 * *leaf gets the node index, *value the maximum. */
void strux_hier_infer_leaf(strux_hier_infer *w, const double *s, const double *a, const double *b,
                           int32_t *leaf, double *value);
/* Multi-label on a tree (§5.3): g(n) bottom-up, then the backtrack from the root: all children
 * with g(c) > 0 strictly, else the single argmax child, smallest index on ties (A19); so no
 * other optimal label is a proper subset of the answer. z (M) gets the 0/1 indicator, *value the
 * maximum. O(M). STRUX_ERR_INTERNAL on a DAG (the task routes DAGs to strux_hier_infer_dag). */
strux_status strux_hier_infer_tree(strux_hier_infer *w, const double *s, const double *a, double *z,
                                   double *value);
/* Multi-label on any hierarchy by (6.22) (§5.4): maximise Σ r_n z_n over the LP relaxation
 * (0 ≤ z ≤ 1, child-sum rows, parent rows, the cover row), built for this call on the kept nodes
 * only and started at the incumbent Y (strux_hier_infer_set_fresh_start): Ā(l*), the best
 * single-leaf label, grown by every leaf of positive marginal gain in leaf order. An LP optimum
 * within STRUX_HIER_INTEGRAL_TOL of integral is rounded and is the exact answer; otherwise
 * STRUX_HIER_EXACT solves the binary IP, and without it the fractional z is returned with the LP
 * value (A18). STRUX_HIER_PRUNE first answers Y itself when V(Y) reaches Σ_n max(0, r_n), a bound
 * on the LP's optimum and the IP's [added] (then C is Y's leaves, no LP), and otherwise keeps only
 * the candidate leaves C (Y's leaves, and those whose bounds can beat Y: ub(l) > 0 (§5.4) and
 * U(l) > V(Y) [added], see prune() in
 * hier_infer.c) and their ancestors Ā(C), the sub-DAG programme (same IP optimum, a tighter LP);
 * |C| ≤ enum_max (strux_hier_infer_set_enum_max) is solved exactly by enumeration, with no LP (then
 * the answer is integral in training too); when Ā(C) has more nodes than the cap, C is cut to Y's
 * leaves and the candidates of largest U that fit (info->capped: a valid label worth at least V(Y),
 * no longer certified optimal; Y itself when its closure alone is over the cap). Without the
 * pruning every node is kept (no cap). z (M) gets the solution, *value its objective; info may be
 * NULL. Needs with_lp (STRUX_ERR_INTERNAL otherwise); STRUX_ERR_LP when GLPK fails or finds no
 * optimum (the programme always has one). */
strux_status strux_hier_infer_dag(strux_hier_infer *w, const double *s, const double *a, int flags,
                                  double *z, double *value, strux_hier_dag_info *info);

#endif
