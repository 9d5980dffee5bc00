/* tests/unit/test_hier_infer.c - the hierarchy oracles (tasks/hier_infer.c, hierarchical.md §5)
 * against brute force on seeded random trees and DAGs of at most 12 nodes: the single-label
 * argmax against every leaf (values, leaf path sums, ties to the smallest index); the tree DP
 * against every label of 𝒴_m, enumerated as node sets that satisfy (6.22) (value, validity, and
 * with integer scores the A19 tie rule: no optimal label is a proper subset of the answer); the
 * DAG programme with and without the exact IP and the pruning (IP value = brute force ≤ LP
 * value, pruned LP ≤ full LP, integral LP answers exact, fractional LPs met), started at the
 * incumbent or at GLPK's standard basis, the answer of a call independent of earlier calls; the
 * size cap (a valid label no better than the optimum and no worse than the incumbent, within the
 * cap, exact when the cap does not bite); a hand-made tree;
 * the shared funcat tree (top-down sums = Ā sums, DP = IP = pruned IP);
 * no allocation in any oracle call; allocation failures in create without leaks. */
#include "test_common.h"

#include "strux/hierarchy.h"
#include "tasks/hier_impl.h"

#include <math.h>
#include <string.h>

enum { MAXM = 12 };

/* A random hierarchy on 2..MAXM nodes: node i > 0 has a parent below it; in a DAG, with
 * probability 1/2, a second one. */
static strux_hierarchy *random_hierarchy(strux_rng *r, int dag)
{
    int64_t p[2 * MAXM], c[2 * MAXM];
    int n = 2 + (int)strux_rng_below(r, MAXM - 1), m = 0;
    for (int i = 1; i < n; i++) {
        int a = (int)strux_rng_below(r, (uint64_t)i);
        p[m] = a;
        c[m++] = i;
        if (dag && i > 1 && strux_rng_below(r, 2)) {
            int b = (int)strux_rng_below(r, (uint64_t)i);
            if (b != a) {
                p[m] = b;
                c[m++] = i;
            }
        }
    }
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_from_edges("r.hier", m, p, c, NULL, NULL, &h));
    assert_true(h->n_nodes <= MAXM);
    return h;
}

/* Scores: uniform in [-1, 1], or integers in {-2..2} (many ties). */
static void random_scores(strux_rng *r, int32_t M, int integer, double *x)
{
    for (int32_t k = 0; k < M; k++)
        x[k] = integer ? (double)strux_rng_below(r, 5) - 2 : 2 * strux_rng_uniform(r) - 1;
}

/* Is the node set of bitmask `set` a label of 𝒴_m, i.e. feasible for the integer (6.22)? */
static int is_label(const strux_hierarchy *h, unsigned set)
{
    int has_leaf = 0;
    for (int32_t k = 0; k < h->n_nodes; k++) {
        if (!(set >> k & 1)) continue;
        for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++)
            if (!(set >> h->parent_idx[q] & 1)) return 0;
        int64_t lo = h->child_ptr[k], hi = h->child_ptr[k + 1];
        if (lo == hi) has_leaf = 1;
        int child = lo == hi;
        for (int64_t q = lo; q < hi; q++)
            child |= set >> h->child_idx[q] & 1;
        if (!child) return 0;
    }
    return has_leaf;
}

static double set_value(int32_t M, const double *r, unsigned set)
{
    double v = 0;
    for (int32_t k = 0; k < M; k++)
        if (set >> k & 1) v += r[k];
    return v;
}

/* Brute force over all 2^M node sets: the best label value; *n_labels counts the labels. */
static double brute_multi(const strux_hierarchy *h, const double *r, int *n_labels)
{
    double best = -INFINITY;
    *n_labels = 0;
    for (unsigned set = 1; set < 1u << h->n_nodes; set++) {
        if (!is_label(h, set)) continue;
        ++*n_labels;
        double v = set_value(h->n_nodes, r, set);
        if (v > best) best = v;
    }
    return best;
}

/* Ā(l) as a bitmask, by walking the parent CSR (independent of the Ā CSR). */
static unsigned ancestors(const strux_hierarchy *h, int32_t l)
{
    unsigned set = 1u << l;
    for (int32_t k = l; k >= 0; k--)
        if (set >> k & 1)
            for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++)
                set |= 1u << h->parent_idx[q];
    return set;
}

static unsigned z_to_set(int32_t M, const double *z)
{
    unsigned set = 0;
    for (int32_t k = 0; k < M; k++) {
        assert_true(z[k] == 0 || z[k] == 1);
        if (z[k] == 1) set |= 1u << k;
    }
    return set;
}

/* Single-label: the leaf path sums and the argmax against every leaf, real and integer scores
 * (ties: smallest leaf index), with the per-leaf term b and without a. */
static void test_single(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 14, 51, 0);
    int n_dag = 0, n_tie = 0;
    for (int t = 0; t < 400; t++) {
        int dag = t % 2, integer = t % 4 >= 2;
        strux_hierarchy *h = random_hierarchy(&rng, dag);
        n_dag += !h->is_tree;
        strux_hier_infer *w = NULL;
        assert_strux_ok(strux_hier_infer_create(h, 0, &w));
        int32_t M = h->n_nodes, L = h->n_leaves;
        double s[MAXM], a[MAXM], r[MAXM], b[MAXM], S[MAXM];
        random_scores(&rng, M, integer, s);
        random_scores(&rng, M, integer, a);
        random_scores(&rng, L, integer, b);
        for (int use_a = 0; use_a < 2; use_a++) {
            for (int32_t k = 0; k < M; k++)
                r[k] = use_a ? s[k] + a[k] : s[k];
            strux_hier_infer_leaf_scores(w, s, use_a ? a : NULL, S);
            double best = -INFINITY;
            int32_t arg = -1, n_best = 0;
            for (int32_t i = 0; i < L; i++) {
                double v = set_value(M, r, ancestors(h, h->leaves[i]));
                assert_close(S[i], v, 1e-12);
                v += b[i];
                if (v > best + 1e-12) {
                    best = v;
                    arg = h->leaves[i];
                    n_best = 1;
                } else if (fabs(v - best) <= 1e-12) {
                    n_best++;
                }
            }
            int32_t leaf;
            double value;
            strux_hier_infer_leaf(w, s, use_a ? a : NULL, b, &leaf, &value);
            assert_close(value, best, 1e-12);
            if (integer || n_best == 1) assert_int_equal(leaf, arg);
            n_tie += integer && n_best > 1;
        }
        strux_hier_infer_destroy(&w);
        strux_hierarchy_destroy(&h);
    }
    assert_true(n_dag > 100);
    assert_true(n_tie > 20);
}

/* The tree DP against all labels: value, a valid label of that value, and with integer scores
 * the A19 answer (no optimal label strictly inside it). */
static void test_tree_dp(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 14, 53, 0);
    int n_tie = 0;
    for (int t = 0; t < 400; t++) {
        int integer = t % 2;
        strux_hierarchy *h = random_hierarchy(&rng, 0);
        strux_hier_infer *w = NULL;
        assert_strux_ok(strux_hier_infer_create(h, 0, &w));
        int32_t M = h->n_nodes;
        double s[MAXM], a[MAXM], r[MAXM], z[MAXM], value;
        random_scores(&rng, M, integer, s);
        random_scores(&rng, M, integer, a);
        for (int32_t k = 0; k < M; k++)
            r[k] = s[k] + a[k];
        int n_labels;
        double best = brute_multi(h, r, &n_labels);
        assert_true(n_labels >= h->n_leaves);
        assert_strux_ok(strux_hier_infer_tree(w, s, a, z, &value));
        unsigned set = z_to_set(M, z);
        assert_true(is_label(h, set));
        assert_close(value, best, 1e-12);
        assert_close(set_value(M, r, set), best, 1e-12);
        if (integer) {
            int n_opt = 0;
            for (unsigned sub = 1; sub < 1u << M; sub++) {
                if (!is_label(h, sub) || set_value(M, r, sub) != best) continue;
                n_opt++;
                assert_false((sub & set) == sub && sub != set);
            }
            n_tie += n_opt > 1;
        }
        /* prediction: a = NULL is a = 0 */
        double zero[MAXM] = {0}, z2[MAXM], v2;
        assert_strux_ok(strux_hier_infer_tree(w, r, NULL, z2, &v2));
        assert_memory_equal(z, z2, (size_t)M * sizeof *z);
        assert_strux_ok(strux_hier_infer_tree(w, r, zero, z2, &v2));
        assert_memory_equal(z, z2, (size_t)M * sizeof *z);
        strux_hier_infer_destroy(&w);
        strux_hierarchy_destroy(&h);
    }
    assert_true(n_tie > 20);
}

/* The DAG programme (6.22) on random DAGs and trees, every flag combination: the IP (EXACT)
 * equals brute force, the LP bounds it from above, pruning tightens the LP and keeps the IP,
 * an integral LP answer is a label of the brute-force value. */
static void test_dag(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 14, 57, 0);
    int n_frac = 0, n_ilp = 0, n_pruned = 0, n_single = 0, n_dag = 0, n_enum = 0, n_plp = 0;
    for (int t = 0; t < 400; t++) {
        int integer = t % 3 == 2;
        strux_hierarchy *h = random_hierarchy(&rng, t % 4 != 0);
        n_dag += !h->is_tree;
        strux_hier_infer *w = NULL;
        assert_strux_ok(strux_hier_infer_create(h, 1, &w));
        strux_hier_infer_set_fresh_start(w, t % 5 == 0);
        strux_hier_infer_set_enum_max(w, t % 2 ? 1 : 3); /* pruned LPs, and enumerations */
        int32_t M = h->n_nodes;
        double s[MAXM], a[MAXM], r[MAXM], z[MAXM], value;
        for (int rep = 0; rep < 3; rep++) { /* warm starts over changing objectives */
            random_scores(&rng, M, integer, s);
            random_scores(&rng, M, integer, a);
            if (rep == 2)
                for (int32_t k = 0; k < M; k++)
                    s[k] -= 1; /* mostly negative r: pruning bites */
            for (int32_t k = 0; k < M; k++)
                r[k] = s[k] + a[k];
            int n_labels;
            double best = brute_multi(h, r, &n_labels);
            double lp_full = 0;
            for (int flags = 0; flags < 4; flags++) {
                strux_hier_dag_info info;
                assert_strux_ok(strux_hier_infer_dag(w, s, a, flags, z, &value, &info));
                assert_true(info.lp_value >= best - 1e-9);
                if (flags == 0) lp_full = info.lp_value;
                if (flags & STRUX_HIER_PRUNE) {
                    assert_true(info.lp_value <= lp_full + 1e-9);
                    assert_true(info.n_candidates >= 1 && info.n_candidates <= h->n_leaves);
                    n_pruned += info.n_candidates < h->n_leaves;
                    n_single += info.n_candidates == 1;
                    n_enum += info.n_candidates > 1 && !info.used_lp;
                    n_plp += info.used_lp;
                } else {
                    assert_int_equal(info.n_candidates, h->n_leaves);
                }
                n_frac += info.fractional;
                n_ilp += info.used_ilp;
                if (info.fractional && !(flags & STRUX_HIER_EXACT)) {
                    /* A18: the relaxed solution, value = LP value, z in [0, 1] */
                    assert_close(value, info.lp_value, 1e-12);
                    double v = 0;
                    for (int32_t k = 0; k < M; k++) {
                        assert_true(z[k] >= -1e-9 && z[k] <= 1 + 1e-9);
                        v += r[k] * z[k];
                    }
                    assert_true(fabs(v - value) <= 1e-9 * (1 + fabs(value)));
                    continue;
                }
                assert_int_equal(info.used_ilp, info.fractional);
                unsigned set = z_to_set(M, z);
                assert_true(is_label(h, set));
                assert_true(fabs(value - best) <= 1e-9 * (1 + fabs(best)));
                assert_close(set_value(M, r, set), value, 1e-12);
            }
        }
        strux_hier_infer_destroy(&w);
        strux_hierarchy_destroy(&h);
    }
    print_message("# DAG programme: %d DAGs, %d fractional LPs, %d IPs, %d pruned, %d single\n",
                  n_dag, n_frac, n_ilp, n_pruned, n_single);
    assert_true(n_dag > 200);
    assert_true(n_frac > 0);
    assert_true(n_ilp > 0);
    assert_true(n_pruned > 0);
    assert_true(n_single > 0);
    print_message("# pruned: %d enumerated, %d by LP\n", n_enum, n_plp);
    assert_true(n_enum > 50 && n_plp > 50);
}

/* The incumbent bound: when Y reaches Σ max(0, r_n) the answer is Y with no LP, and it is the
 * optimum by brute force. Leaf-Hamming loss terms at w = 0 (the driver's J(0) bound: ±1 on the
 * leaves, 0 inside) always reach it when some leaf is outside the truth; scores with positive
 * nodes above every leaf (a true ancestor of negative leaves) never do, and take the LP path. */
static void test_incumbent_bound(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 14, 71, 0);
    int n_free = 0, n_lp = 0;
    for (int t = 0; t < 300; t++) {
        strux_hierarchy *h = random_hierarchy(&rng, 1);
        int32_t M = h->n_nodes;
        strux_hier_infer *w = NULL;
        assert_strux_ok(strux_hier_infer_create(h, 1, &w));
        strux_hier_infer_set_enum_max(w, 1);
        double s[MAXM] = {0}, a[MAXM], z[MAXM], value, full;
        int leaf_loss = t % 2 == 0, n_labels;
        for (int32_t k = 0; k < M; k++) {
            int leaf = h->child_ptr[k] == h->child_ptr[k + 1];
            a[k] = leaf_loss ? (leaf ? (strux_rng_below(&rng, 3) ? 1.0 : -1.0) : 0.0)
                             : (leaf ? -1.0 - strux_rng_uniform(&rng) : strux_rng_uniform(&rng));
        }
        double best = brute_multi(h, a, &n_labels);
        strux_hier_dag_info info;
        assert_strux_ok(
            strux_hier_infer_dag(w, s, a, STRUX_HIER_EXACT | STRUX_HIER_PRUNE, z, &value, &info));
        assert_true(fabs(value - best) <= 1e-9 * (1 + fabs(best)));
        unsigned set = z_to_set(M, z);
        assert_true(is_label(h, set));
        assert_close(set_value(M, a, set), value, 1e-12);
        double p_all = 0;
        for (int32_t k = 0; k < M; k++)
            p_all += fmax(0.0, a[k]);
        int reaches = fabs(best - p_all) <= 1e-12 * (1 + p_all);
        if (leaf_loss && p_all > 0) assert_true(reaches);
        if (!leaf_loss) assert_false(reaches);
        assert_int_equal(info.used_lp, !reaches && info.n_candidates > 1);
        n_free += reaches;
        n_lp += info.used_lp;
        assert_strux_ok(strux_hier_infer_dag(w, s, a, STRUX_HIER_EXACT, z, &full, NULL));
        assert_true(fabs(full - best) <= 1e-9 * (1 + fabs(best)));
        strux_hier_infer_destroy(&w);
        strux_hierarchy_destroy(&h);
    }
    print_message("# incumbent bound: %d answered without an LP, %d by LP\n", n_free, n_lp);
    assert_true(n_free > 100 && n_lp > 30);
}

/* A call's answer depends on its scores only: the same scores after other calls give the same z
 * bit for bit, from the incumbent (warm) and from the standard basis (fresh). */
static void test_history_free(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 14, 61, 0);
    int n_lp = 0;
    for (int t = 0; t < 200; t++) {
        strux_hierarchy *h = random_hierarchy(&rng, 1);
        strux_hier_infer *w = NULL;
        assert_strux_ok(strux_hier_infer_create(h, 1, &w));
        strux_hier_infer_set_fresh_start(w, t % 2);
        int32_t M = h->n_nodes;
        double s[MAXM], a[MAXM], s2[MAXM], z[MAXM], z2[MAXM], v, v2;
        random_scores(&rng, M, t % 3 == 0, s);
        random_scores(&rng, M, 0, a);
        int flags = (int)strux_rng_below(&rng, 4);
        strux_hier_dag_info info;
        assert_strux_ok(strux_hier_infer_dag(w, s, a, flags, z, &v, &info));
        n_lp += info.used_lp;
        for (int rep = 0; rep < 3; rep++) {
            random_scores(&rng, M, 0, s2);
            assert_strux_ok(
                strux_hier_infer_dag(w, s2, a, (int)strux_rng_below(&rng, 4), z2, &v2, NULL));
        }
        assert_strux_ok(strux_hier_infer_dag(w, s, a, flags, z2, &v2, NULL));
        assert_memory_equal(z, z2, (size_t)M * sizeof *z);
        assert_true(v == v2);
        strux_hier_infer_destroy(&w);
        strux_hierarchy_destroy(&h);
    }
    assert_true(n_lp > 100);
}

/* task.lp_max_nodes: a pruned LP over the cap keeps l* and the candidates of largest bound that
 * fit; the answer is a label of 𝒴_m within the cap, its value between Ā(l*)'s and the optimum;
 * where the cap does not bite the answer is exact. */
static void test_cap(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 14, 63, 0);
    int n_capped = 0, n_below = 0, n_free = 0;
    for (int t = 0; t < 300; t++) {
        strux_hierarchy *h = random_hierarchy(&rng, t % 4 != 0);
        int32_t M = h->n_nodes;
        strux_hier_infer *w = NULL;
        assert_strux_ok(strux_hier_infer_create(h, 1, &w));
        strux_hier_infer_set_enum_max(w, 1); /* an LP for every |C| > 1: the cap applies */
        double s[MAXM], a[MAXM], r[MAXM], z[MAXM], value, S[MAXM];
        random_scores(&rng, M, 0, s);
        random_scores(&rng, M, 0, a);
        for (int32_t k = 0; k < M; k++)
            r[k] = s[k] + a[k];
        int n_labels;
        double best = brute_multi(h, r, &n_labels);
        strux_hier_infer_leaf_scores(w, s, a, S);
        double vstar = S[0];
        for (int32_t i = 1; i < h->n_leaves; i++)
            vstar = fmax(vstar, S[i]);
        strux_hier_dag_info full;
        assert_strux_ok(
            strux_hier_infer_dag(w, s, a, STRUX_HIER_EXACT | STRUX_HIER_PRUNE, z, &value, &full));
        int64_t cap = 1 + (int64_t)strux_rng_below(&rng, (uint64_t)M + 1);
        strux_hier_infer_set_max_nodes(w, cap);
        strux_hier_dag_info info;
        assert_strux_ok(
            strux_hier_infer_dag(w, s, a, STRUX_HIER_EXACT | STRUX_HIER_PRUNE, z, &value, &info));
        unsigned set = z_to_set(M, z);
        assert_true(is_label(h, set));
        assert_close(set_value(M, r, set), value, 1e-12);
        assert_true(value <= best + 1e-9 * (1 + fabs(best)));
        assert_true(value >= vstar - 1e-9 * (1 + fabs(vstar)));
        assert_int_equal(info.capped, full.used_lp && full.n_cols > cap);
        if (info.capped) {
            n_capped++;
            assert_true(info.n_candidates <= full.n_candidates);
            n_below += value < best - 1e-9 * (1 + fabs(best));
        } else {
            n_free++;
            assert_true(fabs(value - best) <= 1e-9 * (1 + fabs(best)));
        }
        /* the cap holds, except that Ā(l*) alone is always kept */
        if (info.used_lp) assert_true(info.n_cols <= cap);
        /* without the pruning the cap does not apply */
        assert_strux_ok(strux_hier_infer_dag(w, s, a, STRUX_HIER_EXACT, z, &value, &info));
        assert_false(info.capped);
        assert_true(fabs(value - best) <= 1e-9 * (1 + fabs(best)));
        strux_hier_infer_destroy(&w);
        strux_hierarchy_destroy(&h);
    }
    print_message("# cap: %d capped (%d below the optimum), %d within it\n", n_capped, n_below,
                  n_free);
    assert_true(n_capped > 20 && n_below > 0 && n_free > 20);
}

/* By hand: 0 → {1, 2}, 1 → {3, 4}, 2 → {5}. All-zero scores: the DP keeps no child with g > 0,
 * so it follows the smallest child: {0, 1, 3}; the single-label answer is leaf 3. Scores that
 * make 4 and 5 worth taking give {0, 1, 2, 4, 5} = 7, by the DP and by the IP. */
static void test_by_hand(void **state)
{
    (void)state;
    const int64_t p[5] = {0, 0, 1, 1, 2}, c[5] = {1, 2, 3, 4, 5};
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_from_edges("h.hier", 5, p, c, NULL, NULL, &h));
    strux_hier_infer *w = NULL;
    assert_strux_ok(strux_hier_infer_create(h, 1, &w));
    double s[6] = {0}, z[6], value;
    assert_strux_ok(strux_hier_infer_tree(w, s, NULL, z, &value));
    const double want[6] = {1, 1, 0, 1, 0, 0};
    assert_memory_equal(z, want, sizeof want);
    assert_true(value == 0);
    int32_t leaf;
    strux_hier_infer_leaf(w, s, NULL, NULL, &leaf, &value);
    assert_int_equal(leaf, 3);
    const double s2[6] = {5, -1, -3, -2, 2, 4}, want2[6] = {1, 1, 1, 0, 1, 1};
    assert_strux_ok(strux_hier_infer_tree(w, s2, NULL, z, &value));
    assert_memory_equal(z, want2, sizeof want2);
    assert_true(value == 7);
    assert_strux_ok(
        strux_hier_infer_dag(w, s2, NULL, STRUX_HIER_EXACT | STRUX_HIER_PRUNE, z, &value, NULL));
    assert_memory_equal(z, want2, sizeof want2);
    assert_true(value == 7);
    strux_hier_infer_leaf(w, s2, NULL, NULL, &leaf, &value);
    assert_int_equal(leaf, 4); /* leaves 4 and 5 both score 6: the smaller index */
    assert_true(value == 6);
    strux_hier_infer_destroy(&w);
    strux_hierarchy_destroy(&h);
}

/* The largest shared tree, funcat_cellcycle (500 nodes, 324 leaves), read by the file reader:
 * the leaf path sums of the top-down pass equal the sums over the Ā CSR; the DP, the exact IP and
 * the pruned exact IP agree on the optimum for random leaf-Hamming-like augmentations. */
static void test_funcat(void **state)
{
    (void)state;
    strux_hierarchy *h = NULL;
    assert_strux_ok(
        strux_hierarchy_read(shared_data("funcat_cellcycle/cellcycle_FUN.hier"), NULL, &h));
    int32_t M = h->n_nodes, L = h->n_leaves;
    assert_int_equal(M, 500);
    strux_hier_infer *w = NULL;
    assert_strux_ok(strux_hier_infer_create(h, 1, &w));
    static double s[500], a[500], S[500], z[500], z2[500];
    strux_rng rng;
    strux_rng_init(&rng, 14, 59, 0);
    for (int t = 0; t < 10; t++) {
        for (int32_t k = 0; k < M; k++) {
            s[k] = 2 * strux_rng_uniform(&rng) - 1 - 0.1 * t;
            a[k] = h->child_ptr[k] == h->child_ptr[k + 1] ? (strux_rng_below(&rng, 2) ? 1 : -1) : 0;
        }
        strux_hier_infer_leaf_scores(w, s, a, S);
        for (int32_t i = 0; i < L; i++) {
            double sum = 0;
            for (int64_t q = h->anc_ptr[i]; q < h->anc_ptr[i + 1]; q++)
                sum += s[h->anc_idx[q]] + a[h->anc_idx[q]];
            assert_close(S[i], sum, 1e-12);
        }
        double v_dp, v_ip, v_pr;
        strux_hier_dag_info info;
        assert_strux_ok(strux_hier_infer_tree(w, s, a, z, &v_dp));
        assert_strux_ok(strux_hier_infer_dag(w, s, a, STRUX_HIER_EXACT, z2, &v_ip, &info));
        assert_true(fabs(v_dp - v_ip) <= 1e-9 * (1 + fabs(v_dp)));
        assert_true(info.lp_value >= v_ip - 1e-9);
        assert_strux_ok(
            strux_hier_infer_dag(w, s, a, STRUX_HIER_EXACT | STRUX_HIER_PRUNE, z2, &v_pr, &info));
        assert_true(fabs(v_dp - v_pr) <= 1e-9 * (1 + fabs(v_dp)));
        assert_true(info.n_candidates < L);
    }
    strux_hier_infer_destroy(&w);
    strux_hierarchy_destroy(&h);
}

/* No oracle allocates; the tree DP refuses a DAG and the DAG programme a workspace without LP;
 * allocation failures in create leave nothing behind. */
static void test_allocations(void **state)
{
    (void)state;
    const int64_t p[6] = {0, 0, 1, 2, 1, 3}, c[6] = {1, 2, 3, 3, 4, 5};
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_from_edges("d.hier", 6, p, c, NULL, NULL, &h));
    assert_false(h->is_tree);
    size_t base = strux_alloc_bytes();
    strux_hier_infer *w = NULL;
    assert_strux_ok(strux_hier_infer_create(h, 0, &w));
    double s[6] = {1, -2, 3, -1, 2, 1}, a[6] = {0, 1, 0, -1, 1, -1}, S[6], z[6], value;
    assert_strux_fails(strux_hier_infer_dag(w, s, a, 0, z, &value, NULL), STRUX_ERR_INTERNAL,
                       "was not built");
    assert_strux_fails(strux_hier_infer_tree(w, s, a, z, &value), STRUX_ERR_INTERNAL,
                       "called on a DAG (d.hier)");
    strux_hier_infer_destroy(&w);
    assert_strux_ok(strux_hier_infer_create(h, 1, &w));
    int64_t calls = strux_alloc_calls();
    for (int rep = 0; rep < 3; rep++) {
        int32_t leaf;
        strux_hier_infer_leaf_scores(w, s, a, S);
        strux_hier_infer_leaf(w, s, a, NULL, &leaf, &value);
        for (int flags = 0; flags < 4; flags++)
            assert_strux_ok(strux_hier_infer_dag(w, s, a, flags, z, &value, NULL));
        s[rep] += 2;
    }
    assert_int_equal(strux_alloc_calls(), calls);
    strux_hier_infer_destroy(&w);
    assert_null(w);
    assert_int_equal(strux_alloc_bytes(), base);
    int failed = 0;
    for (int64_t n = 0; n < 50; n++) {
        strux_alloc_fail_after(n);
        strux_status st = strux_hier_infer_create(h, 1, &w);
        strux_alloc_fail_after(-1);
        if (st == STRUX_OK) {
            strux_hier_infer_destroy(&w);
            break;
        }
        assert_int_equal(st, STRUX_ERR_NOMEM);
        assert_null(w);
        assert_int_equal(strux_alloc_bytes(), base);
        failed++;
    }
    assert_true(failed >= 7);
    strux_hierarchy_destroy(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single),  cmocka_unit_test(test_tree_dp),
        cmocka_unit_test(test_dag),     cmocka_unit_test(test_incumbent_bound),
        cmocka_unit_test(test_by_hand), cmocka_unit_test(test_allocations),
        cmocka_unit_test(test_funcat),  cmocka_unit_test(test_history_free),
        cmocka_unit_test(test_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
