/* tasks/rta_impl.h - private inference core of the RTA task (random spanning-tree ensembles).
 * Follows specs/rta.md: the trees and the union edge table (§0.2, §1.5, §1.6), exact K-best max-sum
 * on one rooted tree (§2.1), the ensemble argmax over the union of the trees' K-best lists with its
 * certificate and early stop (§2.2), and the tree-averaged edge loss (§3.1). Files, in that order:
 * rta_tree.c, rta_kbest.c, rta_argmax.c, rta_loss.c.
 * Pure task-level code: no MPI, no model, no solver, no task registration; the task ops, the
 * marginal dual and the Newton step build on it.
 *
 * Conventions used by every function below:
 * - Labels (nodes) 0..L−1. A labelling y ∈ {0,1}^L is bit-packed into strux_rta_words(L) uint64
 *   words, label i in bit i%64 of word i/64, unused high bits zero.
 * - A union edge e = (i, j) is stored with i < j; its scores are edge[4e + u] with u = 2·b_i + b_j
 *   (§0.1). A tree edge is parent→child (p, c); when p > c the tree reads the 2×2 score transposed,
 *   θ(p→c)[s_p][s_c] = edge[4e + 2·s_c + s_p] (§0.2 swap, strux_rta_theta).
 * - Node scores, optional (NULL means zero), are node[2i + b]. They are not in the spec, whose
 * model has edge factors only; every tree carries all L nodes once, so tree t scores F_t(y) = Σ_i
 * node_i(y_i) + Σ_{e∈T_t} θ_e(y_e) and the ensemble F(y) = Σ_t F_t(y) = n·Σ_i node_i(y_i) +
 * Σ_{e∈E_u} c_e·θ_e(y_e), which keeps the §2.2 bound F ≤ Σ_t L_t[h] exact. */
#ifndef STRUX_RTA_IMPL_H
#define STRUX_RTA_IMPL_H

#include "strux/core.h"

#include <stdint.h>

#define STRUX_RTA_MAX_TREES 1024 /* task.trees range (issue 17) */
#define STRUX_RTA_MAX_K 1024     /* task.kbest range (issue 17) */
/* Certificate slack (§2.2, §6.5): absolute 1e-8 as the reference code, scaled by max(1, |θ_h|) so
 * large potentials do not lose the certificate to rounding between the DP's and F's summation
 * orders. A certified answer is thus within tol of the maximum (equal for integer potentials). */
#define STRUX_RTA_CERT_TOL 1e-8
#define STRUX_RTA_RNG_STREAM 0x5254410000000001ULL /* "RTA": tree t draws from epoch t */

typedef enum strux_rta_sampler {
    STRUX_RTA_SAMPLER_UNIFORM =
        0, /* random Prüfer sequence: uniform over the L^(L−2) trees (§1.6) */
    STRUX_RTA_SAMPLER_RECURSIVE /* reference code: random node order, each node attached to a
                                   uniformly chosen earlier node; not uniform (§0.3 item 6) */
} strux_rta_sampler;

/* n rooted spanning trees of the complete graph on L labels and their union edge table. Tree t's
 * arrays are the slices [t·L, (t+1)·L). Rooting (§1.6 ROOT): breadth-first from label 0, the
 * children of a node in ascending label order, so a node's children are contiguous in order[]. */
typedef struct strux_rta_trees {
    int32_t L;       /* labels = nodes per tree, ≥ 2 */
    int32_t n;       /* trees, 1..STRUX_RTA_MAX_TREES */
    int32_t n_edges; /* |E_u| ≤ min(n(L−1), L(L−1)/2) */
    int32_t *order;  /* n×L: breadth-first node order, root (label 0) first */
    int32_t *parent; /* n×L: parent of node v, −1 at the root */
    int32_t *up;     /* n×L: union edge id of (parent[v], v), −1 at the root */
    int32_t *kid0;   /* n×L: position in order[] of v's first child (children are contiguous) */
    int32_t *nkid;   /* n×L: number of children of v */
    int32_t *ends;   /* n_edges×2: (i, j) with i < j, ascending lexicographically */
    int32_t *mult;   /* n_edges: c_e = trees containing e, 1..n; Σ_e c_e = n(L−1) */
} strux_rta_trees;

/* One K-best list: len real entries (never padded), scores descending, ties by ascending labelling
 * (strux_rta_kbest). Storage belongs to whoever created the list. */
typedef struct strux_rta_list {
    int32_t len;   /* entries, ≤ min(K, 2^L) */
    double *score; /* len tree scores F_t(y) */
    uint64_t *y;   /* len × words labellings */
} strux_rta_list;

typedef struct strux_rta_kbest_ws strux_rta_kbest_ws; /* K-best workspace (rta_kbest.c) */

/* Ensemble inference state for one tree set and one K: the K-best workspace, the n lists, and the
 * distinct candidates of the last strux_rta_argmax call (readable until the next call). */
typedef struct strux_rta_infer {
    const strux_rta_trees *tr; /* borrowed; must outlive this object */
    int32_t K;                 /* list depth, min(K asked, 2^L) */
    int32_t words;             /* uint64 words per labelling */
    strux_rta_kbest_ws *ws;
    strux_rta_list *lists; /* n lists of capacity K */
    double *list_score;    /* storage of the lists: n·K */
    uint64_t *list_y;      /* n·K·words */
    int32_t n_cand;        /* distinct candidates scored by the last call */
    double *cand_F;        /* n·K ensemble scores F(y) */
    uint64_t *cand_y;      /* n·K·words labellings, in scan order (depth-major, then tree) */
    int32_t *slot;         /* hash table of candidate ids, −1 empty; size mask+1 ≥ 2·n·K */
    int32_t *cand_slot;    /* slot of each candidate, to clear the table in O(n_cand) */
    uint32_t mask;         /* table size − 1 (a power of two minus one) */
} strux_rta_infer;

/* Answer of strux_rta_argmax. */
typedef struct strux_rta_result {
    int32_t best;   /* index into inf->cand_* of the best candidate, −1 if there was none */
    double F;       /* its ensemble score, −INFINITY if none */
    int certified;  /* 1: F(best) ≥ F(y) − tol for every y ∈ Y (∖ {exclude}) (§2.2) */
    int32_t depth;  /* list depths scanned, 1..K */
    int32_t n_cand; /* distinct candidates scored */
} strux_rta_result;

/* ---- bits ---- */
static inline int32_t strux_rta_words(int32_t L)
{
    return (L + 63) / 64;
}
static inline int strux_rta_bit(const uint64_t *y, int32_t i)
{
    return (int)((y[i >> 6] >> (i & 63)) & 1u);
}
/* min(K, 2^L) without overflow. */
static inline int32_t strux_rta_kcap(int32_t K, int32_t L)
{
    return (L >= 30 || K <= (INT32_C(1) << L)) ? K : (INT32_C(1) << L);
}

/* ---- trees (rta_tree.c; local, deterministic: every rank draws the same trees) ---- */

/* Draws n trees on L labels; tree t comes from strux_rng stream (seed, STRUX_RTA_RNG_STREAM, t), so
 * the first n trees do not depend on how many are drawn. STRUX_ERR_INPUT if L < 2 or n is outside
 * 1..STRUX_RTA_MAX_TREES; STRUX_ERR_NOMEM. *out is the caller's (strux_rta_trees_destroy). */
strux_status strux_rta_trees_sample(int32_t L, int32_t n, strux_rta_sampler sampler, uint64_t seed,
                                    strux_rta_trees **out);
/* Builds the ensemble from n·(L−1) stored edges pc[(t·(L−1) + h)·2 + {0,1}] (a model file's
 * /rta/trees), taken as undirected and re-rooted as above, so the output of strux_rta_tree_edges
 * round-trips exactly. STRUX_ERR_INPUT naming tree and edge if a label is out of range, an edge is
 * a loop, or a tree is not spanning. */
strux_status strux_rta_trees_from_edges(int32_t L, int32_t n, const int32_t *pc,
                                        strux_rta_trees **out);
void strux_rta_trees_destroy(strux_rta_trees **p);
/* Tree t's L−1 edges parent→child in root order: pc[2h] = parent, pc[2h+1] = child. */
void strux_rta_tree_edges(const strux_rta_trees *tr, int32_t t, int32_t *pc);

/* θ(p→v)[s_p][s_v] of the edge from v's parent in tree t, read from the union scores with the §0.2
 * swap. v must not be the root. */
static inline double strux_rta_theta(const strux_rta_trees *tr, int32_t t, int32_t v,
                                     const double *edge, int s_p, int s_v)
{
    int64_t k = (int64_t)t * tr->L + v;
    int32_t p = tr->parent[k];
    int u = p < v ? 2 * s_p + s_v : 2 * s_v + s_p;
    return edge[4 * (int64_t)tr->up[k] + u];
}

/* ---- K-best max-sum on one tree (rta_kbest.c, §2.1) ---- */

/* Workspace for trees on L labels and lists of depth min(K, 2^L); allocates once. STRUX_ERR_INPUT
 * if L < 2 or K is outside 1..STRUX_RTA_MAX_K; STRUX_ERR_NOMEM. */
strux_status strux_rta_kbest_ws_create(int32_t L, int32_t K, strux_rta_kbest_ws **out);
void strux_rta_kbest_ws_destroy(strux_rta_kbest_ws **p);
/* The min(K, 2^L) best labellings of tree t under node (L×2, or NULL) and edge (|E_u|×4) scores,
 * written to out (capacity ≥ min(K, 2^L) entries). Order: score descending; equal computed scores
 * by ascending labelling, read as the binary number Σ_i b_i·2^i (so, between two tied labellings,
 * the one with 0 at the highest label where they differ comes first). This order decomposes over
 * disjoint subtrees, so the list is exactly the first min(K, 2^L) labellings of Y sorted that way
 * whenever sums are exact (e.g. integer potentials). No allocation. */
void strux_rta_kbest(const strux_rta_trees *tr, int32_t t, const double *node, const double *edge,
                     strux_rta_kbest_ws *ws, strux_rta_list *out);

/* ---- ensemble argmax (rta_argmax.c, §2.2) ---- */

/* Sizes lists, candidates and hash table for tr (borrowed) and depth min(K, 2^L); allocates once.
 * STRUX_ERR_INPUT if K is outside 1..STRUX_RTA_MAX_K; STRUX_ERR_NOMEM. */
strux_status strux_rta_infer_create(const strux_rta_trees *tr, int32_t K, strux_rta_infer **out);
void strux_rta_infer_destroy(strux_rta_infer **p);
/* F(y) = n·Σ_i node_i(y_i) + Σ_e c_e·edge_e(y_e) (node may be NULL). */
double strux_rta_score(const strux_rta_trees *tr, const double *node, const double *edge,
                       const uint64_t *y);
/* F_t(y) = Σ_i node_i(y_i) + Σ_{e∈T_t} edge_e(y_e). */
double strux_rta_tree_score(const strux_rta_trees *tr, int32_t t, const double *node,
                            const double *edge, const uint64_t *y);
/* K-best lists of all n trees, then the scan of §2.2: depth by depth, tree by tree, each distinct
 * labelling other than exclude (NULL: none) scored once by F; the best is the first met with the
 * highest F (ties go to the earlier in scan order). Before depth h (0-based) the scan stops,
 * certified, when F(best) ≥ θ_h − tol with θ_h = Σ_t L_t[h].score, if stop_early; at the end the
 * answer is certified when F(best) ≥ θ_{K−1} − tol or the lists are complete (K = 2^L). With
 * stop_early = 0 every distinct candidate of the lists is scored (the Newton update's set, §3.5).
 * inf->lists and inf->cand_* hold the lists and candidates until the next call. No allocation.
 * STRUX_ERR_NUMERIC if a score is not finite. Local. */
strux_status strux_rta_argmax(strux_rta_infer *inf, const double *node, const double *edge,
                              const uint64_t *exclude, int stop_early, strux_rta_result *res);

/* ---- loss (rta_loss.c, §3.1) ---- */

/* ℓ_e(u) = ([b_i(u) ≠ b_i(truth)] + [b_j(u) ≠ b_j(truth)]) / s_loss on every union edge e = (i, j):
 * ell is |E_u|×4, in the edge-score layout, so Σ_e c_e·ell_e(y_e) = n·ℓ(truth, y). */
void strux_rta_edge_loss(const strux_rta_trees *tr, const uint64_t *truth, double s_loss,
                         double *ell);
/* ℓ(truth, y) = (1/n) Σ_t Σ_{e∈T_t} ℓ_e(y_e) = (1/n) Σ_e c_e ℓ_e(y_e) = (1/(n·s_loss)) Σ_i
 * D_i·[y_i ≠ truth_i], with D_i the degree of label i summed over the trees. */
double strux_rta_loss(const strux_rta_trees *tr, const uint64_t *y, const uint64_t *truth,
                      double s_loss);

#endif
