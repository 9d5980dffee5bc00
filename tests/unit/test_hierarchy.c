/* tests/unit/test_hierarchy.c - label hierarchies from edge lists (data/hierarchy.c): every
 * validation error with its message (empty, negative and too large ids, self-loop, cycles short and
 * long, node limit, unknown label, stop leaf under a leaf), duplicates counted, the spec's §3.1
 * tree by hand, virtual roots over forests, a DAG diamond, 300 seeded random trees, forests and
 * DAGs against brute force (order, CSR, leaves, Ā(l), depth, height, closures, most specific nodes,
 * independence of the edge order), stop leaves, and allocation failures without leaks. */
#include "test_common.h"

#include "strux/hierarchy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static strux_hierarchy *make(int64_t n, const int64_t *p, const int64_t *c, const int64_t *line)
{
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_from_edges("t.hier", n, p, c, line, NULL, &h));
    return h;
}

static void test_errors(void **state)
{
    (void)state;
    strux_hierarchy *h = NULL;
    const int64_t p[4] = {0, 0, 7, 3}, c[4] = {1, 2, 7, -4}, line[4] = {2, 3, 9, 5};
    assert_strux_fails(strux_hierarchy_from_edges("a.hier", 0, p, c, NULL, NULL, &h),
                       STRUX_ERR_INPUT, "a.hier: empty hierarchy");
    assert_strux_fails(strux_hierarchy_from_edges("a.hier", 3, p, c, line, NULL, &h),
                       STRUX_ERR_INPUT, "a.hier:9: self-loop: node 7 is its own parent");
    /* the smallest line wins: the negative id on line 5 before the self-loop on line 9 */
    assert_strux_fails(strux_hierarchy_from_edges("a.hier", 4, p, c, line, NULL, &h),
                       STRUX_ERR_INPUT, "a.hier:5: node id -4 is negative");
    const int64_t big[1] = {INT64_MAX}, zero[1] = {0};
    assert_strux_fails(strux_hierarchy_from_edges("a.hier", 1, zero, big, NULL, NULL, &h),
                       STRUX_ERR_INPUT, "a.hier:1: node id 9223372036854775807 is above");
    /* a cycle below a root, edges out of order: named from its smallest id, at its last line */
    const int64_t cp[5] = {303, 1, 101, 202, 1}, cc[5] = {101, 2, 202, 303, 101};
    const int64_t cl[5] = {4, 1, 2, 3, 5};
    assert_strux_fails(strux_hierarchy_from_edges("a.hier", 5, cp, cc, cl, NULL, &h),
                       STRUX_ERR_INPUT,
                       "a.hier:4: the hierarchy has a cycle: 101 -> 202 -> 303 -> 101");
    /* the smallest unsorted node (5) hangs below the cycle; the walk up from it still names it */
    const int64_t dp[5] = {10, 30, 40, 50, 40}, dc[5] = {20, 40, 50, 30, 5};
    assert_strux_fails(strux_hierarchy_from_edges("e.hier", 5, dp, dc, NULL, NULL, &h),
                       STRUX_ERR_INPUT,
                       "e.hier:4: the hierarchy has a cycle: 30 -> 40 -> 50 -> 30");
    /* two-node cycle with no source at all */
    const int64_t tp[2] = {5, 6}, tc[2] = {6, 5};
    assert_strux_fails(strux_hierarchy_from_edges("b.hier", 2, tp, tc, NULL, NULL, &h),
                       STRUX_ERR_INPUT, "b.hier:2: the hierarchy has a cycle: 5 -> 6 -> 5");
    /* a 40-node cycle is abbreviated */
    int64_t lp[40], lc[40];
    for (int i = 0; i < 40; i++) {
        lp[i] = 10 + i;
        lc[i] = 10 + (i + 1) % 40;
    }
    assert_strux_fails(strux_hierarchy_from_edges("c.hier", 40, lp, lc, NULL, NULL, &h),
                       STRUX_ERR_INPUT,
                       "c.hier:40: the hierarchy has a cycle: 10 -> 11 -> 12 -> 13 -> 14 -> 15 -> "
                       "16 -> 17 -> 18 -> 19 -> 20 -> 21 -> 22 -> 23 -> ... (25 more) -> 49 -> 10");
    const strux_hierarchy_options small = {.max_nodes = 2};
    assert_strux_fails(strux_hierarchy_from_edges("a.hier", 2, p, c, NULL, &small, &h),
                       STRUX_ERR_INPUT, "a.hier: the hierarchy has 3 nodes, more than the limit 2");
    assert_null(h);

    h = make(2, p, c, NULL);
    unsigned char mark[3] = {0};
    int32_t out[3], n_out;
    const int64_t labels[2] = {1, 8};
    assert_strux_fails(strux_hierarchy_closure(h, "d.txt", 12, 2, labels, mark, out, &n_out),
                       STRUX_ERR_INPUT, "d.txt:12: label 8 is not a node of the hierarchy t.hier");
    assert_int_equal(mark[0] + mark[1] + mark[2], 0);
    const int32_t leaf[1] = {1}, bad[1] = {5};
    assert_strux_fails(strux_hierarchy_add_stop_leaves(h, 1, leaf), STRUX_ERR_INPUT,
                       "t.hier: stop leaf requested under node 1, which is a leaf");
    assert_strux_fails(strux_hierarchy_add_stop_leaves(h, 1, bad), STRUX_ERR_INPUT, "index 5");
    assert_int_equal(h->n_nodes, 3);
    strux_hierarchy_destroy(&h);
    assert_null(h);
}

/* hierarchical.md §3.1's tree r(a(a1, a2), b) with ids r = 50, a = 7, b = 9, a1 = 3, a2 = 1, an
 * edge repeated twice (lines 6 and 8) */
static void test_spec_tree(void **state)
{
    (void)state;
    const int64_t p[7] = {7, 50, 7, 50, 50, 7, 50}, c[7] = {3, 7, 1, 9, 9, 1, 9};
    const int64_t line[7] = {1, 2, 3, 4, 6, 7, 8};
    strux_hierarchy *h = make(7, p, c, line);
    assert_int_equal(h->n_duplicates, 3);
    assert_int_equal(h->duplicate_line, 6);
    assert_int_equal(h->n_nodes, 5);
    assert_int_equal(h->n_edges, 4);
    assert_true(h->is_tree);
    assert_false(h->virtual_root);
    assert_int_equal(h->multi_parent, -1);
    /* (depth, id): 50 | 7, 9 | 1, 3 */
    const int64_t ids[5] = {50, 7, 9, 1, 3};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(h->node_id[k], ids[k]);
        assert_int_equal(strux_hierarchy_find(h, ids[k]), k);
    }
    assert_int_equal(strux_hierarchy_find(h, 2), -1);
    assert_int_equal(strux_hierarchy_find(h, -1), -1);
    const int64_t pp[6] = {0, 0, 1, 2, 3, 4};
    const int32_t pi[4] = {0, 0, 1, 1};
    const int64_t pl[4] = {2, 4, 3, 1};
    assert_memory_equal(h->parent_ptr, pp, sizeof pp);
    assert_memory_equal(h->parent_idx, pi, sizeof pi);
    assert_memory_equal(h->parent_line, pl, sizeof pl);
    const int64_t cptr[6] = {0, 2, 4, 4, 4, 4};
    const int32_t ci[4] = {1, 2, 3, 4};
    assert_memory_equal(h->child_ptr, cptr, sizeof cptr);
    assert_memory_equal(h->child_idx, ci, sizeof ci);
    assert_int_equal(h->n_leaves, 3);
    const int32_t leaves[3] = {2, 3, 4}, lpos[5] = {-1, -1, 0, 1, 2};
    assert_memory_equal(h->leaves, leaves, sizeof leaves);
    assert_memory_equal(h->leaf_pos, lpos, sizeof lpos);
    const int64_t ap[4] = {0, 2, 5, 8};
    const int32_t ai[8] = {0, 2, 0, 1, 3, 0, 1, 4};
    assert_memory_equal(h->anc_ptr, ap, sizeof ap);
    assert_memory_equal(h->anc_idx, ai, sizeof ai);
    const int32_t depth[5] = {1, 2, 2, 3, 3}, height[5] = {3, 2, 1, 1, 1};
    assert_memory_equal(h->depth, depth, sizeof depth);
    assert_memory_equal(h->height, height, sizeof height);
    assert_int_equal(h->max_depth, 3);
    assert_int_equal(h->max_children, 2);
    char buf[256];
    strux_hierarchy_summary(h, buf, sizeof buf);
    assert_string_equal(buf, "t.hier: tree, 5 nodes (3 leaves), 4 edges, depth 3, up to 2 "
                             "children, root 50, 3 repeated edges ignored (first at line 6)");

    /* closure of {a1, b} and its most specific nodes; repeats allowed */
    unsigned char mark[5] = {0};
    int32_t out[5], n_out, ms[5], n_ms;
    const int64_t lab[3] = {3, 9, 3};
    assert_strux_ok(strux_hierarchy_closure(h, "d", 1, 3, lab, mark, out, &n_out));
    const int32_t want[4] = {0, 1, 2, 4};
    assert_int_equal(n_out, 4);
    assert_memory_equal(out, want, sizeof want);
    strux_hierarchy_most_specific(h, n_out, out, mark, ms, &n_ms);
    const int32_t want_ms[2] = {2, 4};
    assert_int_equal(n_ms, 2);
    assert_memory_equal(ms, want_ms, sizeof want_ms);
    for (int k = 0; k < 5; k++)
        assert_int_equal(mark[k], 0);

    /* a path ending at a: with a stop leaf under a, its closure gains the stop leaf */
    const int64_t lab_a[1] = {7};
    assert_strux_ok(strux_hierarchy_closure(h, "d", 1, 1, lab_a, mark, out, &n_out));
    assert_int_equal(n_out, 2);
    const int32_t stop_under[3] = {1, 1, 0};
    assert_strux_ok(strux_hierarchy_add_stop_leaves(h, 3, stop_under));
    assert_int_equal(h->n_nodes, 7);
    assert_int_equal(h->n_stop, 2);
    assert_int_equal(h->stop_leaf[1], 5);
    assert_int_equal(h->stop_leaf[0], 6);
    assert_int_equal(h->stop_leaf[2], -1);
    assert_int_equal(h->node_id[5], -2 - 7);
    assert_int_equal(h->node_id[6], -2 - 50);
    assert_int_equal(strux_hierarchy_print_id(h, 5), 7);
    assert_int_equal(strux_hierarchy_print_id(h, 6), 50);
    assert_int_equal(h->n_leaves, 5);
    assert_int_equal(h->n_duplicates, 3);
    assert_int_equal(strux_hierarchy_find(h, 9), 2);
    const int32_t height2[7] = {3, 2, 1, 1, 1, 1, 1};
    assert_memory_equal(h->height, height2, sizeof height2);
    unsigned char mark7[7] = {0};
    int32_t out7[7];
    assert_strux_ok(strux_hierarchy_closure(h, "d", 1, 1, lab_a, mark7, out7, &n_out));
    const int32_t want_a[3] = {0, 1, 5};
    assert_int_equal(n_out, 3);
    assert_memory_equal(out7, want_a, sizeof want_a);
    /* {a1}: a has a child in the set, so no stop leaf; the root has one too (a) */
    const int64_t lab_a1[1] = {3};
    assert_strux_ok(strux_hierarchy_closure(h, "d", 1, 1, lab_a1, mark7, out7, &n_out));
    assert_int_equal(n_out, 3);
    /* adding again is a no-op */
    assert_strux_ok(strux_hierarchy_add_stop_leaves(h, 1, stop_under));
    assert_int_equal(h->n_nodes, 7);
    strux_hierarchy_summary(h, buf, sizeof buf);
    assert_non_null(strstr(buf, "7 nodes (5 leaves), 6 edges"));
    assert_non_null(strstr(buf, "2 stop leaves"));
    strux_hierarchy_destroy(&h);
}

static void test_forest_and_diamond(void **state)
{
    (void)state;
    /* two trees 4(5) and 2(3, 6): a virtual root over 2 and 4 */
    const int64_t p[3] = {4, 2, 2}, c[3] = {5, 3, 6};
    strux_hierarchy *h = make(3, p, c, NULL);
    assert_true(h->virtual_root);
    assert_true(h->is_tree);
    assert_int_equal(h->n_sources, 2);
    assert_int_equal(h->n_nodes, 6);
    assert_int_equal(h->n_edges, 5);
    const int64_t ids[6] = {-1, 2, 4, 3, 5, 6};
    assert_memory_equal(h->node_id, ids, sizeof ids);
    assert_int_equal(h->parent_line[0], 0);
    assert_int_equal(strux_hierarchy_print_id(h, 0), -1);
    assert_int_equal(h->depth[4], 3);
    char buf[256];
    strux_hierarchy_summary(h, buf, sizeof buf);
    assert_non_null(strstr(buf, "virtual root over 2 sources"));
    strux_hierarchy_destroy(&h);

    /* diamond 0 → 1, 2 → 3, plus 0 → 3 directly: depth is the longest path */
    const int64_t dp[5] = {0, 0, 1, 2, 0}, dc[5] = {1, 2, 3, 3, 3};
    h = make(5, dp, dc, NULL);
    assert_false(h->is_tree);
    assert_int_equal(h->multi_parent, 3);
    assert_int_equal(h->n_leaves, 1);
    assert_int_equal(h->anc_ptr[1], 4);
    assert_int_equal(h->depth[3], 3);
    assert_int_equal(h->max_depth, 3);
    const int32_t pi[3] = {0, 1, 2};
    assert_memory_equal(h->parent_idx + h->parent_ptr[3], pi, sizeof pi);
    strux_hierarchy_summary(h, buf, sizeof buf);
    assert_string_equal(buf, "t.hier: DAG, 4 nodes (1 leaves), 5 edges, depth 3, up to 3 "
                             "children, 2 extra parent edges (node 3 has two parents), root 0");
    strux_hierarchy_destroy(&h);
}

enum { MAXN = 40 };

/* A random hierarchy on n generator nodes: node i > 0 (i ≥ n_roots) has a parent below it and,
 * in a DAG, up to 2 more; ids are sparse and shuffled, edges shuffled, some repeated. */
typedef struct gen {
    int n, n_edges;
    int64_t id[MAXN];
    int64_t p[4 * MAXN], c[4 * MAXN], line[4 * MAXN];
    unsigned char reach[MAXN][MAXN]; /* reach[a][b]: a is an ancestor of b or a = b */
} gen;

static void gen_random(gen *g, strux_rng *r, int dag, int n_roots)
{
    g->n = 2 + (int)strux_rng_below(r, MAXN - 1);
    if (2 * n_roots > g->n) n_roots = 1;
    int64_t perm[MAXN];
    strux_rng_permutation(r, perm, g->n);
    for (int i = 0; i < g->n; i++)
        g->id[i] = perm[i] * 1000003 + (int64_t)strux_rng_below(r, 7);
    int m = 0;
    for (int i = n_roots; i < g->n; i++) {
        int par[3], np = 1 + (dag ? (int)strux_rng_below(r, 3) : 0);
        for (int j = 0; j < np; j++)
            par[j] = (int)strux_rng_below(r, (uint64_t)i);
        if (i < 2 * n_roots) par[0] = i - n_roots; /* no root is left without a child */
        for (int j = 0; j < np; j++) {
            int dup = 0;
            for (int q = 0; q < j; q++)
                dup |= par[q] == par[j];
            if (dup) continue;
            g->p[m] = g->id[par[j]];
            g->c[m++] = g->id[i];
        }
    }
    int extra = (int)strux_rng_below(r, 3);
    for (int j = 0; j < extra && m > 0; j++) {
        int e = (int)strux_rng_below(r, (uint64_t)m);
        g->p[m] = g->p[e];
        g->c[m++] = g->c[e];
    }
    int64_t order[4 * MAXN];
    strux_rng_permutation(r, order, m);
    int64_t tp[4 * MAXN], tc[4 * MAXN];
    memcpy(tp, g->p, sizeof tp);
    memcpy(tc, g->c, sizeof tc);
    for (int e = 0; e < m; e++) {
        g->p[e] = tp[order[e]];
        g->c[e] = tc[order[e]];
        g->line[e] = e + 1;
    }
    g->n_edges = m;
    /* brute-force reachability over generator indices */
    memset(g->reach, 0, sizeof g->reach);
    for (int i = 0; i < g->n; i++)
        g->reach[i][i] = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int e = 0; e < m; e++) {
            int a = -1, b = -1;
            for (int i = 0; i < g->n; i++) {
                if (g->id[i] == g->p[e]) a = i;
                if (g->id[i] == g->c[e]) b = i;
            }
            for (int x = 0; x < g->n; x++)
                if (g->reach[x][a] && !g->reach[x][b]) g->reach[x][b] = changed = 1;
        }
    }
}

static int has_edge(const gen *g, int64_t a, int64_t b)
{
    for (int e = 0; e < g->n_edges; e++)
        if (g->p[e] == a && g->c[e] == b) return 1;
    return 0;
}

static void check_random(const gen *g, const strux_hierarchy *h, strux_rng *r)
{
    int32_t M = h->n_nodes, vr = h->virtual_root;
    assert_int_equal(M, g->n + vr);
    int32_t gi[MAXN + 1]; /* generator index of node k, −1 for the virtual root */
    for (int32_t k = 0; k < M; k++)
        gi[k] = -1;
    for (int i = 0; i < g->n; i++) {
        int32_t k = strux_hierarchy_find(h, g->id[i]);
        assert_true(k >= vr);
        gi[k] = i;
    }
    int n_src = 0, tree = 1;
    for (int i = 0; i < g->n; i++) {
        int np = 0;
        for (int j = 0; j < g->n; j++)
            np += j != i && has_edge(g, g->id[j], g->id[i]);
        n_src += np == 0;
        tree &= np <= 1;
    }
    assert_int_equal(vr, n_src > 1);
    assert_int_equal(h->is_tree, tree);
    /* CSR: parents ascending and smaller, exactly the input edges; children the transpose */
    int64_t n_edges = 0;
    for (int32_t k = 0; k < M; k++) {
        for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++) {
            int32_t p = h->parent_idx[q];
            assert_true(p < k);
            if (q > h->parent_ptr[k]) assert_true(h->parent_idx[q - 1] < p);
            if (gi[p] < 0)
                assert_int_equal(h->parent_line[q], 0);
            else
                assert_true(has_edge(g, g->id[gi[p]], g->id[gi[k]]));
            int found = 0;
            for (int64_t s = h->child_ptr[p]; s < h->child_ptr[p + 1]; s++)
                found += h->child_idx[s] == k;
            assert_int_equal(found, 1);
            n_edges++;
        }
        if (k > 0) assert_true(h->parent_ptr[k + 1] > h->parent_ptr[k]);
        if (k > 0) assert_true(h->depth[k] >= h->depth[k - 1]);
    }
    assert_int_equal(n_edges, h->n_edges);
    assert_int_equal(h->child_ptr[M], h->n_edges);
    /* leaves, Ā(l), depth and height against the brute-force reachability */
    int32_t n_leaves = 0;
    for (int32_t k = 0; k < M; k++) {
        int leaf = h->child_ptr[k + 1] == h->child_ptr[k];
        assert_int_equal(h->leaf_pos[k] >= 0, leaf);
        if (!leaf) continue;
        assert_int_equal(h->leaves[n_leaves], k);
        int64_t a0 = h->anc_ptr[n_leaves], a1 = h->anc_ptr[n_leaves + 1];
        int n_anc = vr;
        for (int j = 0; j < g->n; j++)
            n_anc += g->reach[j][gi[k]];
        assert_int_equal(a1 - a0, n_anc);
        for (int64_t q = a0; q < a1; q++) {
            if (q > a0) assert_true(h->anc_idx[q - 1] < h->anc_idx[q]);
            int32_t a = h->anc_idx[q];
            assert_true(gi[a] < 0 || g->reach[gi[a]][gi[k]]);
        }
        assert_int_equal(h->anc_idx[a1 - 1], k);
        n_leaves++;
    }
    assert_int_equal(n_leaves, h->n_leaves);
    for (int32_t k = M - 1; k >= 0; k--) {
        int32_t d = 0, ht = 0;
        for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++)
            if (h->depth[h->parent_idx[q]] > d) d = h->depth[h->parent_idx[q]];
        for (int64_t q = h->child_ptr[k]; q < h->child_ptr[k + 1]; q++)
            if (h->height[h->child_idx[q]] > ht) ht = h->height[h->child_idx[q]];
        assert_int_equal(h->depth[k], d + 1);
        assert_int_equal(h->height[k], ht + 1);
    }
    /* closures of random label sets and their most specific nodes */
    unsigned char mark[MAXN + 1] = {0};
    int32_t out[MAXN + 1], ms[MAXN + 1], n_out, n_ms;
    for (int t = 0; t < 10; t++) {
        int64_t lab[4];
        int n_lab = 1 + (int)strux_rng_below(r, 4);
        unsigned char want[MAXN] = {0};
        for (int j = 0; j < n_lab; j++) {
            int i = (int)strux_rng_below(r, (uint64_t)g->n);
            lab[j] = g->id[i];
            for (int a = 0; a < g->n; a++)
                want[a] |= g->reach[a][i];
        }
        assert_strux_ok(strux_hierarchy_closure(h, "d", 1, n_lab, lab, mark, out, &n_out));
        int n_want = vr;
        for (int a = 0; a < g->n; a++)
            n_want += want[a];
        assert_int_equal(n_out, n_want);
        for (int j = 0; j < n_out; j++) {
            if (j > 0) assert_true(out[j - 1] < out[j]);
            assert_true(gi[out[j]] < 0 || want[gi[out[j]]]);
        }
        strux_hierarchy_most_specific(h, n_out, out, mark, ms, &n_ms);
        int n_ms_want = 0;
        for (int a = 0; a < g->n; a++) {
            if (!want[a]) continue;
            int spec = 1;
            for (int b = 0; b < g->n; b++)
                spec &= !(b != a && want[b] && g->reach[a][b]);
            n_ms_want += spec;
        }
        assert_int_equal(n_ms, n_ms_want);
        for (int j = 0; j < n_ms; j++)
            for (int b = 0; b < g->n; b++)
                assert_false(b != gi[ms[j]] && want[b] && g->reach[gi[ms[j]]][b]);
        for (int k = 0; k < M; k++)
            assert_int_equal(mark[k], 0);
    }
}

static void test_random(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 14, 1, 0);
    for (int t = 0; t < 300; t++) {
        gen g;
        gen_random(&g, &r, t % 3 == 2, t % 3 == 1 ? 3 : 1);
        strux_hierarchy *h = make(g.n_edges, g.p, g.c, g.line);
        check_random(&g, h, &r);
        /* the same edges reversed give the same numbering */
        int64_t rp[4 * MAXN], rc[4 * MAXN];
        for (int e = 0; e < g.n_edges; e++) {
            rp[e] = g.p[g.n_edges - 1 - e];
            rc[e] = g.c[g.n_edges - 1 - e];
        }
        strux_hierarchy *h2 = make(g.n_edges, rp, rc, NULL);
        assert_memory_equal(h->node_id, h2->node_id, (size_t)h->n_nodes * sizeof(int64_t));
        assert_memory_equal(h->parent_idx, h2->parent_idx, (size_t)h->n_edges * sizeof(int32_t));
        strux_hierarchy_destroy(&h2);
        /* stop leaves under every other internal file node keep every invariant */
        int32_t internal[MAXN + 1], n_int = 0;
        for (int32_t k = h->virtual_root; k < h->n_nodes; k++)
            if (h->leaf_pos[k] < 0 && k % 2 == 0) internal[n_int++] = k;
        int32_t M0 = h->n_nodes, L0 = h->n_leaves;
        assert_strux_ok(strux_hierarchy_add_stop_leaves(h, n_int, internal));
        assert_int_equal(h->n_nodes, M0 + n_int);
        assert_int_equal(h->n_leaves, L0 + n_int);
        for (int j = 0; j < n_int; j++) {
            int32_t s = h->stop_leaf[internal[j]];
            assert_true(s >= M0);
            assert_int_equal(h->parent_ptr[s + 1] - h->parent_ptr[s], 1);
            assert_int_equal(h->parent_idx[h->parent_ptr[s]], internal[j]);
            assert_int_equal(strux_hierarchy_print_id(h, s), h->node_id[internal[j]]);
            int64_t a0 = h->anc_ptr[h->leaf_pos[s]], a1 = h->anc_ptr[h->leaf_pos[s] + 1];
            int has_parent = 0;
            for (int64_t q = a0; q < a1; q++)
                has_parent += h->anc_idx[q] == internal[j];
            assert_int_equal(has_parent, 1);
            assert_int_equal(h->anc_idx[a1 - 1], s);
        }
        strux_hierarchy_destroy(&h);
    }
}

/* A shared `.hier` file through the file reader. */
static strux_hierarchy *read_shared_hier(const char *rel)
{
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_read(shared_data(rel), NULL, &h));
    return h;
}

/* The reader on fixtures: comments, blank lines, tabs, CRLF and a last line without a newline;
 * gzip; then every bad line with its file:line and value, and the edge-level errors at the file
 * line (empty, self-loop, cycle); allocation failures without leaks; the node limit. */
static void test_read(void **state)
{
    (void)state;
    strux_hierarchy *h = NULL;
    const char *gz[2] = {"hier_good.txt", "hier_good.txt.gz"};
    for (int g = 0; g < 2; g++) {
        assert_strux_ok(strux_hierarchy_read(fixture(gz[g]), NULL, &h));
        assert_int_equal(h->n_nodes, 5);
        assert_int_equal(h->n_edges, 4);
        assert_int_equal(h->n_leaves, 3);
        assert_true(h->is_tree);
        const int64_t ids[5] = {10, 20, 30, 40, 50};
        assert_memory_equal(h->node_id, ids, sizeof ids);
        /* parent edges of nodes 1..4 come from file lines 3, 4, 6, 8 */
        const int64_t pl[4] = {3, 4, 6, 8};
        assert_memory_equal(h->parent_line, pl, sizeof pl);
        strux_hierarchy_destroy(&h);
    }
    const struct {
        const char *file, *needle;
    } bad[] = {
        {"hier_bad_token.txt", "hier_bad_token.txt:3: child id 'x3' is not an integer"},
        {"hier_bad_float.txt", "hier_bad_float.txt:2: child id '2.5' is not an integer"},
        {"hier_bad_negative.txt", "hier_bad_negative.txt:3: parent id -3 is negative"},
        {"hier_bad_overflow.txt",
         "hier_bad_overflow.txt:2: child id 99999999999999999999 is above the largest id "
         "9223372036854775806"},
        {"hier_bad_idmax.txt",
         "hier_bad_idmax.txt:2: child id 9223372036854775807 is above the largest id"},
        {"hier_bad_extra.txt", "hier_bad_extra.txt:2: extra token '3' after `parent child`"},
        {"hier_bad_comment.txt", "hier_bad_comment.txt:2: extra token '#' after"},
        {"hier_bad_one.txt", "hier_bad_one.txt:2: one id where `parent child`"},
        {"hier_bad_self_loop.txt", "hier_bad_self_loop.txt:2: self-loop: node 1"},
        {"hier_bad_cycle.txt",
         "hier_bad_cycle.txt:4: the hierarchy has a cycle: 101 -> 202 -> 303 -> 101"},
        {"hier_empty.txt", "hier_empty.txt: empty hierarchy"},
        {"hier_bad_nul.txt", "hier_bad_nul.txt:2: "},
        {"hier_no_such_file.txt", "hier_no_such_file.txt"},
    };
    size_t base = strux_alloc_bytes();
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        h = (strux_hierarchy *)&h; /* must be reset to NULL on error */
        assert_strux_fails(strux_hierarchy_read(fixture(bad[b].file), NULL, &h), STRUX_ERR_INPUT,
                           bad[b].needle);
        assert_null(h);
        assert_int_equal(strux_alloc_bytes(), base);
    }
    /* every allocation of a read fails once in turn: NOMEM, nothing leaks */
    int failed = 0;
    for (int64_t n = 0; n < 200; n++) {
        strux_alloc_fail_after(n);
        strux_status st = strux_hierarchy_read(fixture("hier_good.txt.gz"), NULL, &h);
        strux_alloc_fail_after(-1);
        if (st == STRUX_OK) {
            strux_hierarchy_destroy(&h);
            break;
        }
        assert_int_equal(st, STRUX_ERR_NOMEM);
        assert_null(h);
        assert_int_equal(strux_alloc_bytes(), base);
        failed++;
    }
    assert_true(failed > 10);
    /* the node limit of the options */
    const strux_hierarchy_options opt = {.max_nodes = 4};
    assert_strux_fails(strux_hierarchy_read(fixture("hier_good.txt"), &opt, &h), STRUX_ERR_INPUT,
                       "hier_good.txt: the hierarchy has 5 nodes, more than the limit 4");
}

/* The shared hierarchies (data/README.md counts nodes without the root): imclef07a 96 + 1 nodes,
 * 63 leaves, depth 3 + 1; funcat_cellcycle 499 + 1 nodes, depth 6 + 1. */
static void test_shared_files(void **state)
{
    (void)state;
    char buf[256];
    strux_hierarchy *h = read_shared_hier("imclef07a/ImCLEF07A.hier");
    strux_hierarchy_summary(h, buf, sizeof buf);
    /* the summary opens with the path as given (STRUX_DATA may move it) */
    assert_non_null(strstr(buf, "imclef07a/ImCLEF07A.hier: tree, 97 nodes (63 leaves), 96 edges, "
                                "depth 4, up to 8 children, root 0"));
    strux_hierarchy_destroy(&h);
    h = read_shared_hier("funcat_cellcycle/cellcycle_FUN.hier");
    strux_hierarchy_summary(h, buf, sizeof buf);
    assert_non_null(strstr(buf, "funcat_cellcycle/cellcycle_FUN.hier: tree, 500 nodes (324 "
                                "leaves), 499 edges, depth 7, up to 18 children, root 0"));
    strux_hierarchy_destroy(&h);
}

/* Every allocation of a build and of adding stop leaves fails once in turn: NOMEM, nothing leaks,
 * and the hierarchy given to add_stop_leaves is unchanged. */
static void test_alloc_failures(void **state)
{
    (void)state;
    const int64_t p[5] = {0, 0, 1, 2, 0}, c[5] = {1, 2, 3, 3, 4};
    size_t base = strux_alloc_bytes();
    int failed = 0;
    for (int64_t n = 0; n < 200; n++) {
        strux_hierarchy *h = NULL;
        strux_alloc_fail_after(n);
        strux_status st = strux_hierarchy_from_edges("f.hier", 5, p, c, NULL, NULL, &h);
        strux_alloc_fail_after(-1);
        if (st == STRUX_OK) {
            strux_hierarchy_destroy(&h);
            break;
        }
        assert_int_equal(st, STRUX_ERR_NOMEM);
        assert_null(h);
        assert_int_equal(strux_alloc_bytes(), base);
        failed++;
    }
    assert_true(failed > 10);
    strux_hierarchy *h = make(5, p, c, NULL);
    const int32_t under[2] = {1, 2};
    for (int64_t n = 0; n < 200; n++) {
        size_t before = strux_alloc_bytes();
        strux_alloc_fail_after(n);
        strux_status st = strux_hierarchy_add_stop_leaves(h, 2, under);
        strux_alloc_fail_after(-1);
        if (st == STRUX_OK) break;
        assert_int_equal(st, STRUX_ERR_NOMEM);
        assert_int_equal(strux_alloc_bytes(), before);
        assert_int_equal(h->n_nodes, 5);
        assert_int_equal(h->stop_leaf[1], -1);
    }
    assert_int_equal(h->n_nodes, 7);
    strux_hierarchy_destroy(&h);
    assert_int_equal(strux_alloc_bytes(), base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_spec_tree),
        cmocka_unit_test(test_forest_and_diamond),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_shared_files),
        cmocka_unit_test(test_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
