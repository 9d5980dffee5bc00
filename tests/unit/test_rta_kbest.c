/* tests/unit/test_rta_kbest.c - RTA inference against brute-force enumeration of {0,1}^L
 * (rta_impl.h "K-best", "ensemble argmax"; specs/rta.md §2.1, §2.2): every K-best list equals the
 * first min(K, 2^L) labellings sorted by (tree score descending, labelling ascending), for L ≤ 10,
 * Gaussian and small-integer (tie-heavy) potentials, with and without node scores, K up to 2^L + 2;
 * multi-word labellings (L = 70) against an independent max-sum and the order rule; every certified
 * ensemble argmax is the brute-force maximiser (n ≤ 5, L ≤ 8, with and without an excluded label),
 * complete lists always certify, the full scan's candidates are exactly the distinct list entries;
 * no allocation in repeated calls; bad sizes. The references here score labellings from the trees'
 * parent arrays and a linear edge lookup, not through the code under test. */
#include "test_common.h"

#include "tasks/rta_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Union id of edge {a, b} by linear search. */
static int32_t edge_id(const strux_rta_trees *tr, int32_t a, int32_t b)
{
    int32_t i = a < b ? a : b, j = a < b ? b : a;
    for (int32_t e = 0; e < tr->n_edges; e++)
        if (tr->ends[2 * e] == i && tr->ends[2 * e + 1] == j) return e;
    fail_msg("edge (%d, %d) not in the union table", (int)i, (int)j);
    return -1;
}

/* Reference F_t(y) for L ≤ 64 (y as a mask): nodes plus the tree's edges in the union layout. */
static double ref_tree_score(const strux_rta_trees *tr, int32_t t, const double *node,
                             const double *edge, uint64_t y)
{
    double F = 0.0;
    for (int32_t v = 0; v < tr->L; v++) {
        if (node) F += node[2 * v + (int)(y >> v & 1)];
        int32_t p = tr->parent[t * tr->L + v];
        if (p < 0) continue;
        int32_t i = p < v ? p : v, j = p < v ? v : p;
        F += edge[4 * edge_id(tr, p, v) + 2 * (int)(y >> i & 1) + (int)(y >> j & 1)];
    }
    return F;
}

/* Reference F(y) = Σ_t F_t(y). */
static double ref_score(const strux_rta_trees *tr, const double *node, const double *edge,
                        uint64_t y)
{
    double F = 0.0;
    for (int32_t t = 0; t < tr->n; t++)
        F += ref_tree_score(tr, t, node, edge, y);
    return F;
}

/* Gaussian (mode 0) or integers in −2..2 (mode 1, many exact ties). */
static void fill(double *x, int64_t n, int mode, strux_rng *r)
{
    for (int64_t k = 0; k < n; k++)
        x[k] = mode ? (double)((int64_t)strux_rng_below(r, 5) - 2) : strux_rng_normal(r);
}

typedef struct scored {
    double F;
    uint64_t y;
} scored;

static int by_score_then_mask(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->F != y->F) return x->F > y->F ? -1 : 1;
    return (x->y > y->y) - (x->y < y->y);
}

/* §2.1: the list is exactly the brute-force order's prefix; scores exact for integers. */
static void test_kbest_brute(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 7, 0, 0);
    scored *all = malloc(1024 * sizeof *all);
    int64_t lists = 0;
    for (int32_t L = 2; L <= 10; L++) {
        int32_t full = 1 << L;
        int32_t Ks[] = {1, 2, 3, 5, full - 1, full, full + 2};
        strux_rta_trees *tr = NULL;
        assert_strux_ok(strux_rta_trees_sample(L, 3, (strux_rta_sampler)(L % 2), (uint64_t)L, &tr));
        double *node = malloc(2 * (size_t)L * sizeof *node);
        double *edge = malloc(4 * (size_t)tr->n_edges * sizeof *edge);
        for (size_t q = 0; q < sizeof Ks / sizeof *Ks; q++) {
            int32_t K = Ks[q];
            if (K < 1 || K > STRUX_RTA_MAX_K) continue;
            int32_t Kc = K < full ? K : full;
            strux_rta_kbest_ws *ws = NULL;
            assert_strux_ok(strux_rta_kbest_ws_create(L, K, &ws));
            double *score = malloc((size_t)Kc * sizeof *score);
            uint64_t *y = malloc((size_t)Kc * sizeof *y);
            strux_rta_list out = {0, score, y};
            for (int round = 0; round < 6; round++) {
                int mode = round % 2;
                const double *nd = round % 3 == 2 ? NULL : node;
                fill(node, 2 * L, mode, &r);
                fill(edge, 4 * tr->n_edges, mode, &r);
                for (int32_t t = 0; t < tr->n; t++) {
                    strux_rta_kbest(tr, t, nd, edge, ws, &out);
                    for (int32_t k = 0; k < full; k++)
                        all[k] =
                            (scored){ref_tree_score(tr, t, nd, edge, (uint64_t)k), (uint64_t)k};
                    qsort(all, (size_t)full, sizeof *all, by_score_then_mask);
                    assert_int_equal(out.len, Kc);
                    for (int32_t h = 0; h < Kc; h++) {
                        assert_int_equal(out.y[h], all[h].y);
                        if (mode)
                            assert_true(out.score[h] == all[h].F);
                        else
                            assert_close(out.score[h], all[h].F, 1e-12);
                    }
                    lists++;
                }
            }
            free(score);
            free(y);
            strux_rta_kbest_ws_destroy(&ws);
        }
        free(node);
        free(edge);
        strux_rta_trees_destroy(&tr);
    }
    print_message("# %lld K-best lists equal brute force\n", (long long)lists);
    free(all);
}

/* L = 70 (two words per labelling): entries distinct, scores recomputed exactly by
 * strux_rta_tree_score and ordered by (score desc, labelling asc over both words); the first equals
 * an independent max-sum; a shorter K gives a prefix. */
static double max_sum(const strux_rta_trees *tr, int32_t t, const double *node, const double *edge,
                      double *m)
{
    int32_t L = tr->L;
    for (int32_t q = L - 1; q >= 0; q--) {
        int32_t v = tr->order[t * L + q];
        for (int s = 0; s < 2; s++) {
            m[2 * v + s] = node[2 * v + s];
            for (int32_t c = 0; c < L; c++) {
                if (tr->parent[t * L + c] != v) continue;
                int32_t e = edge_id(tr, v, c);
                double best = -INFINITY;
                for (int sc = 0; sc < 2; sc++) {
                    int u = v < c ? 2 * s + sc : 2 * sc + s;
                    best = fmax(best, edge[4 * e + u] + m[2 * c + sc]);
                }
                m[2 * v + s] += best;
            }
        }
    }
    return fmax(m[0], m[1]);
}

static void test_kbest_multiword(void **state)
{
    (void)state;
    enum { L = 70, K = 40, W = 2 };
    strux_rng r;
    strux_rng_init(&r, 8, 0, 0);
    strux_rta_trees *tr = NULL;
    assert_strux_ok(strux_rta_trees_sample(L, 4, STRUX_RTA_SAMPLER_UNIFORM, 9, &tr));
    strux_rta_kbest_ws *ws = NULL, *ws10 = NULL;
    assert_strux_ok(strux_rta_kbest_ws_create(L, K, &ws));
    assert_strux_ok(strux_rta_kbest_ws_create(L, 10, &ws10));
    double node[2 * L], m[2 * L], score[K], score10[10];
    uint64_t y[K * W], y10[10 * W];
    double *edge = malloc(4 * (size_t)tr->n_edges * sizeof *edge);
    strux_rta_list out = {0, score, y}, out10 = {0, score10, y10};
    for (int round = 0; round < 8; round++) {
        fill(node, 2 * L, round % 2, &r);
        fill(edge, 4 * tr->n_edges, round % 2, &r);
        for (int32_t t = 0; t < tr->n; t++) {
            strux_rta_kbest(tr, t, node, edge, ws, &out);
            strux_rta_kbest(tr, t, node, edge, ws10, &out10);
            assert_int_equal(out.len, K);
            assert_close(out.score[0], max_sum(tr, t, node, edge, m), 1e-12);
            for (int32_t h = 0; h < K; h++) {
                assert_true(y[h * W + 1] >> (L - 64) == 0); /* unused high bits stay zero */
                assert_close(score[h], strux_rta_tree_score(tr, t, node, edge, y + h * W), 1e-12);
                if (h == 0) continue;
                const uint64_t *a = y + (h - 1) * W, *b = y + h * W;
                assert_true(score[h - 1] >= score[h]);
                int less = a[1] != b[1] ? a[1] < b[1] : a[0] < b[0];
                if (score[h - 1] == score[h]) assert_true(less);
                for (int32_t g = 0; g < h; g++)
                    assert_false(y[g * W] == b[0] && y[g * W + 1] == b[1]);
            }
            assert_int_equal(out10.len, 10);
            assert_memory_equal(y10, y, sizeof y10);
            assert_memory_equal(score10, score, sizeof score10);
        }
    }
    free(edge);
    strux_rta_kbest_ws_destroy(&ws);
    strux_rta_kbest_ws_destroy(&ws10);
    strux_rta_trees_destroy(&tr);
}

/* §2.2 soundness: certified ⇒ F(best) is the brute-force maximum over Y ∖ {exclude}; complete
 * lists always certify; early stop and full scan agree on the certificate and, when certified, on
 * F; the full scan's candidates are the distinct non-excluded list entries, each with F(y). */
static void test_argmax_brute(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 9, 0, 0);
    int64_t runs = 0, certified = 0, early = 0;
    for (int32_t L = 2; L <= 8; L++)
        for (int32_t n = 1; n <= 5; n++) {
            int32_t full = 1 << L;
            int32_t Ks[] = {1, 2, 3, 6, full};
            strux_rta_trees *tr = NULL;
            assert_strux_ok(strux_rta_trees_sample(L, n, (strux_rta_sampler)(n % 2),
                                                   (uint64_t)(10 * L + n), &tr));
            double *node = malloc(2 * (size_t)L * sizeof *node);
            double *edge = malloc(4 * (size_t)tr->n_edges * sizeof *edge);
            for (size_t q = 0; q < sizeof Ks / sizeof *Ks; q++) {
                int32_t K = Ks[q];
                strux_rta_infer *inf = NULL;
                assert_strux_ok(strux_rta_infer_create(tr, K, &inf));
                for (int round = 0; round < 12; round++) {
                    int mode = round % 2;
                    const double *nd = round % 3 == 2 ? NULL : node;
                    fill(node, 2 * L, mode, &r);
                    fill(edge, 4 * tr->n_edges, mode, &r);
                    double F_max = -INFINITY, F_top = -INFINITY;
                    uint64_t top = 0;
                    for (uint64_t y = 0; y < (uint64_t)full; y++) {
                        double F = ref_score(tr, nd, edge, y);
                        if (F > F_top) F_top = F, top = y;
                    }
                    /* rounds 4k+2, 4k+3: exclude the top (the truth in loss-augmented inference
                     * usually is); 4k+1: a random labelling; 4k: none */
                    uint64_t ex = round % 4 >= 2 ? top : strux_rng_below(&r, (uint64_t)full);
                    const uint64_t *exclude = round % 4 ? &ex : NULL;
                    for (uint64_t y = 0; y < (uint64_t)full; y++)
                        if (!exclude || y != ex) F_max = fmax(F_max, ref_score(tr, nd, edge, y));
                    strux_rta_result a, b;
                    assert_strux_ok(strux_rta_argmax(inf, nd, edge, exclude, 1, &a));
                    uint64_t ya = a.best >= 0 ? inf->cand_y[a.best] : 0;
                    if (a.best >= 0) {
                        assert_close(a.F, ref_score(tr, nd, edge, ya), 1e-12);
                        if (exclude) assert_true(ya != ex);
                    }
                    if (a.certified) assert_close(a.F, F_max, 1e-9);
                    if (K == full) assert_true(a.certified);
                    early += a.certified && a.depth < inf->K;
                    assert_strux_ok(strux_rta_argmax(inf, nd, edge, exclude, 0, &b));
                    assert_int_equal(a.certified, b.certified);
                    if (b.certified) assert_close(b.F, F_max, 1e-9);
                    assert_int_equal(b.depth, inf->K);
                    /* candidates = distinct non-excluded entries of the lists */
                    int32_t distinct = 0;
                    for (int32_t t = 0; t < n; t++)
                        for (int32_t h = 0; h < inf->lists[t].len; h++) {
                            uint64_t y = inf->lists[t].y[h];
                            if (exclude && y == ex) continue;
                            int seen = 0;
                            for (int32_t c = 0; c < b.n_cand; c++)
                                seen += inf->cand_y[c] == y;
                            assert_int_equal(seen, 1);
                        }
                    for (int32_t c = 0; c < b.n_cand; c++) {
                        for (int32_t d = 0; d < c; d++)
                            assert_true(inf->cand_y[d] != inf->cand_y[c]);
                        assert_close(inf->cand_F[c], ref_score(tr, nd, edge, inf->cand_y[c]),
                                     1e-12);
                        assert_true(inf->cand_F[c] <= b.F);
                        distinct++;
                    }
                    assert_int_equal(b.n_cand, distinct);
                    assert_true(a.n_cand <= b.n_cand);
                    runs++;
                    certified += a.certified;
                }
                strux_rta_infer_destroy(&inf);
            }
            free(node);
            free(edge);
            strux_rta_trees_destroy(&tr);
        }
    print_message("# %lld ensembles, %lld certified (%lld before the last depth)\n",
                  (long long)runs, (long long)certified, (long long)early);
    assert_true(certified > 0 && certified < runs); /* both outcomes exercised */
    assert_true(early > 0);
}

/* n = 1, K = 1, the only listed labelling excluded: no candidate, nothing certified. */
static void test_argmax_empty(void **state)
{
    (void)state;
    strux_rta_trees *tr = NULL;
    strux_rta_infer *inf = NULL;
    assert_strux_ok(strux_rta_trees_sample(5, 1, STRUX_RTA_SAMPLER_UNIFORM, 1, &tr));
    assert_strux_ok(strux_rta_infer_create(tr, 1, &inf));
    double edge[16] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}; /* all ones is best */
    uint64_t ex = 31;
    strux_rta_result res;
    assert_strux_ok(strux_rta_argmax(inf, NULL, edge, &ex, 1, &res));
    assert_int_equal(res.best, -1);
    assert_int_equal(res.n_cand, 0);
    assert_false(res.certified);
    assert_true(isinf(res.F) && res.F < 0);
    for (int u = 0; u < 4; u++)
        edge[u] = NAN; /* every labelling uses edge 0 */
    assert_strux_fails(strux_rta_argmax(inf, NULL, edge, NULL, 0, &res), STRUX_ERR_NUMERIC,
                       "not finite");
    strux_rta_infer_destroy(&inf);
    strux_rta_trees_destroy(&tr);
}

/* STYLE.md §6: setup allocates, repeated inference does not. */
static void test_no_allocation(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 10, 0, 0);
    strux_rta_trees *tr = NULL;
    strux_rta_infer *inf = NULL;
    assert_strux_ok(strux_rta_trees_sample(53, 20, STRUX_RTA_SAMPLER_UNIFORM, 1, &tr));
    assert_strux_ok(strux_rta_infer_create(tr, 10, &inf));
    double *node = malloc(2 * 53 * sizeof *node);
    double *edge = malloc(4 * (size_t)tr->n_edges * sizeof *edge);
    uint64_t ex = 0;
    int64_t calls = strux_alloc_calls();
    for (int round = 0; round < 40; round++) {
        fill(node, 2 * 53, round % 2, &r);
        fill(edge, 4 * tr->n_edges, round % 2, &r);
        strux_rta_result res;
        assert_strux_ok(strux_rta_argmax(inf, node, edge, round % 3 ? &ex : NULL, round % 2, &res));
        assert_true(res.best >= 0);
        ex = inf->cand_y[res.best];
    }
    assert_int_equal(strux_alloc_calls(), calls);
    free(node);
    free(edge);
    strux_rta_infer_destroy(&inf);
    strux_rta_trees_destroy(&tr);
}

static void test_bad_sizes(void **state)
{
    (void)state;
    size_t bytes = strux_alloc_bytes();
    strux_rta_kbest_ws *ws = NULL;
    assert_strux_fails(strux_rta_kbest_ws_create(5, 0, &ws), STRUX_ERR_INPUT,
                       "K = 0 is outside 1..1024");
    assert_strux_fails(strux_rta_kbest_ws_create(5, 1025, &ws), STRUX_ERR_INPUT, "K = 1025");
    assert_strux_fails(strux_rta_kbest_ws_create(1, 4, &ws), STRUX_ERR_INPUT, "at least 2 labels");
    assert_null(ws);
    strux_rta_trees *tr = NULL;
    strux_rta_infer *inf = NULL;
    assert_strux_ok(strux_rta_trees_sample(6, 3, STRUX_RTA_SAMPLER_UNIFORM, 1, &tr));
    for (int64_t k = 1; k <= 20; k++) { /* every allocation of the setup failing in turn */
        strux_alloc_fail_after(k);
        strux_status st = strux_rta_infer_create(tr, 4, &inf);
        strux_alloc_fail_after(-1);
        if (st == STRUX_OK) break;
        assert_int_equal(st, STRUX_ERR_NOMEM);
        assert_null(inf);
    }
    assert_non_null(inf);
    assert_int_equal(inf->K, 4);
    strux_rta_infer_destroy(&inf);
    assert_strux_ok(strux_rta_infer_create(tr, 1000, &inf));
    assert_int_equal(inf->K, 64); /* capped at 2^L */
    strux_rta_infer_destroy(&inf);
    strux_rta_trees_destroy(&tr);
    assert_int_equal(strux_alloc_bytes(), bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kbest_brute),   cmocka_unit_test(test_kbest_multiword),
        cmocka_unit_test(test_argmax_brute),  cmocka_unit_test(test_argmax_empty),
        cmocka_unit_test(test_no_allocation), cmocka_unit_test(test_bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
