/* tests/unit/test_data_synth_hier.c - the hierarchical generators (data/synth_hier.c): the sizes
 * of every shape (balanced 2^K − 1 nodes, unbalanced 2C + 1 and C + 1 leaves, random M nodes and
 * M − 1 + P edges from smaller to larger ids, swiki's sizes at a scale); rows that depend only on
 * (seed, row) (another generator, another call order); the row invariants (ascending distinct
 * columns, finite values, unit norms where stated, labels that are closures without the root or,
 * for swiki, leaves); options checked with messages; no allocation per row; allocation failures
 * that leak nothing. The labels of balanced and unbalanced against an independent implementation
 * of §7.2 are in tests/e2e/gen_shape.sh. */
#include "test_common.h"

#include "strux/data.h"
#include "strux/hierarchy.h"

#include <math.h>
#include <string.h>

#define ROWS 200
#define NORM_TOL 1e-5 /* unit norms, in double from float values */

static strux_hier_gen_options shape(strux_hier_shape s)
{
    strux_hier_gen_options o = {.shape = s, .n_rows = ROWS, .seed = 7};
    switch (s) {
    case STRUX_SHAPE_BALANCED:
        o.dim = 40;
        o.depth = 4;
        break;
    case STRUX_SHAPE_UNBALANCED:
        o.dim = 30;
        o.cuts = 10;
        break;
    case STRUX_SHAPE_RANDOM:
        o.dim = 400;
        o.n_nodes = 90;
        o.extra_parents = 12;
        o.nnz = 15;
        o.labels_per_row = 1.5;
        break;
    case STRUX_SHAPE_SWIKI:
        o.scale = 0.01;
        o.nnz = 48;
        o.labels_per_row = 1.8;
        break;
    }
    return o;
}

static strux_hier_gen *create(const strux_hier_gen_options *o)
{
    strux_hier_gen *g = NULL;
    assert_strux_ok(strux_hier_gen_create(o, &g));
    return g;
}

typedef struct row {
    int32_t nnz, n_labels;
    int32_t col[4096], labels[1024];
    float val[4096];
} row;

static void get_row(strux_hier_gen *g, int64_t i, row *r)
{
    const strux_hier_gen_info *in = strux_hier_gen_get_info(g);
    assert_true(in->max_nnz <= 4096 && in->max_labels <= 1024);
    assert_strux_ok(strux_hier_gen_row(g, i, r->col, r->val, &r->nnz, r->labels, &r->n_labels));
}

static int same_row(const row *a, const row *b)
{
    return a->nnz == b->nnz && a->n_labels == b->n_labels &&
           memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) == 0 &&
           memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0 &&
           memcmp(a->labels, b->labels, (size_t)a->n_labels * sizeof *a->labels) == 0;
}

static void test_sizes(void **state)
{
    (void)state;
    static const struct {
        strux_hier_shape s;
        int32_t nodes, leaves, dim;
        int64_t edges; /* −1: not fixed */
    } want[] = {
        {STRUX_SHAPE_BALANCED, 15, 8, 40, 14},
        {STRUX_SHAPE_UNBALANCED, 21, 11, 30, 20},
        {STRUX_SHAPE_RANDOM, 90, -1, 400, 89 + 12},
        {STRUX_SHAPE_SWIKI, 503, 365, 3463, -1},
    };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        strux_hier_gen_options o = shape(want[k].s);
        strux_hier_gen *g = create(&o);
        const strux_hier_gen_info *in = strux_hier_gen_get_info(g);
        assert_int_equal(in->n_nodes, want[k].nodes);
        if (want[k].leaves > 0) assert_int_equal(in->n_leaves, want[k].leaves);
        assert_int_equal(in->dim, want[k].dim);
        if (want[k].edges > 0) assert_int_equal(in->n_edges, want[k].edges);
        for (int64_t e = 0; e < in->n_edges; e++) /* ids 0..M−1, parents before children */
            assert_true(in->parent[e] >= 0 && in->parent[e] < in->child[e] &&
                        in->child[e] < in->n_nodes);
        assert_int_equal(in->h->n_nodes, want[k].nodes);
        assert_int_equal(in->h->is_tree, want[k].s < STRUX_SHAPE_RANDOM);
        assert_int_equal(in->closures, want[k].s != STRUX_SHAPE_SWIKI);
        strux_hier_gen_destroy(&g);
        assert_null(g);
    }
    /* random with a depth bound and no extra parents: a tree no deeper than the bound */
    strux_hier_gen_options o = shape(STRUX_SHAPE_RANDOM);
    o.extra_parents = 0;
    o.depth = 3;
    strux_hier_gen *g = create(&o);
    assert_true(strux_hier_gen_get_info(g)->h->is_tree);
    assert_true(strux_hier_gen_get_info(g)->h->max_depth <= 3);
    strux_hier_gen_destroy(&g);
}

/* Row i from a second generator, asked in reverse order, equals row i of the first. */
static void test_rows_keyed_by_seed_and_row(void **state)
{
    (void)state;
    static row a[8], b;
    for (strux_hier_shape s = STRUX_SHAPE_BALANCED; s <= STRUX_SHAPE_SWIKI; s++) {
        strux_hier_gen_options o = shape(s);
        strux_hier_gen *g1 = create(&o), *g2 = create(&o);
        for (int64_t i = 0; i < 8; i++)
            get_row(g1, 1000 + i, &a[i]);
        for (int64_t i = 7; i >= 0; i--) {
            get_row(g2, 1000 + i, &b);
            assert_true(same_row(&a[i], &b));
        }
        o.seed = 8;
        strux_hier_gen *g3 = create(&o);
        get_row(g3, 1000, &b);
        assert_false(same_row(&a[0], &b));
        strux_hier_gen_destroy(&g1);
        strux_hier_gen_destroy(&g2);
        strux_hier_gen_destroy(&g3);
    }
}

/* Ascending ids of the upward closure of the most specific labels, root left out. */
static int is_closure(const strux_hierarchy *h, const int32_t *labels, int32_t n)
{
    int64_t ids[1024];
    int32_t set[1024], m = 0;
    unsigned char mark[1024] = {0};
    for (int32_t k = 0; k < n; k++)
        ids[k] = labels[k];
    if (h->n_nodes > 1024 ||
        strux_hierarchy_closure(h, "t", 1, n, ids, mark, set, &m) != STRUX_OK)
        return 0;
    int32_t kept = 0;
    for (int32_t k = 0; k < m; k++)
        kept += set[k] != 0;
    if (kept != n) return 0;
    for (int32_t k = 0; k < n; k++)
        if (labels[k] == 0 || (k > 0 && labels[k] <= labels[k - 1])) return 0;
    return 1;
}

static void test_row_invariants(void **state)
{
    (void)state;
    static row r;
    for (strux_hier_shape s = STRUX_SHAPE_BALANCED; s <= STRUX_SHAPE_SWIKI; s++) {
        strux_hier_gen_options o = shape(s);
        strux_hier_gen *g = create(&o);
        const strux_hier_gen_info *in = strux_hier_gen_get_info(g);
        const strux_hierarchy *h = in->h;
        double norm_sum = 0, leaves_sum = 0, nnz_sum = 0;
        for (int64_t i = 0; i < ROWS; i++) {
            get_row(g, i, &r);
            assert_true(r.nnz >= 1 && r.nnz <= in->max_nnz);
            assert_true(r.n_labels >= 1 && r.n_labels <= in->max_labels);
            double n2 = 0;
            for (int32_t p = 0; p < r.nnz; p++) {
                assert_true(r.col[p] >= 0 && r.col[p] < in->dim);
                assert_true(p == 0 || r.col[p] > r.col[p - 1]);
                assert_true(isfinite(r.val[p]));
                n2 += (double)r.val[p] * r.val[p];
            }
            norm_sum += sqrt(n2);
            nnz_sum += r.nnz;
            int32_t leaves = 0;
            for (int32_t k = 0; k < r.n_labels; k++) {
                int32_t node = strux_hierarchy_find(h, r.labels[k]);
                assert_true(node > 0);
                leaves += h->leaf_pos[node] >= 0;
            }
            leaves_sum += leaves;
            if (in->closures) {
                assert_true(is_closure(h, r.labels, r.n_labels));
            } else { /* swiki: distinct leaves, ascending */
                assert_int_equal(leaves, r.n_labels);
                for (int32_t k = 1; k < r.n_labels; k++)
                    assert_true(r.labels[k] > r.labels[k - 1]);
            }
            if (s == STRUX_SHAPE_BALANCED || s == STRUX_SHAPE_UNBALANCED) {
                assert_int_equal(r.nnz, in->dim); /* dense rows */
                assert_int_equal(leaves, 1);
            }
            if (s != STRUX_SHAPE_BALANCED) assert_true(fabs(sqrt(n2) - 1) < NORM_TOL);
            if (s == STRUX_SHAPE_RANDOM) assert_int_equal(r.nnz, o.nnz);
        }
        if (s == STRUX_SHAPE_BALANCED) /* not normalised: ‖x‖ ≈ √D */
            assert_true(fabs(norm_sum / ROWS - sqrt(o.dim)) < 0.2 * sqrt(o.dim));
        if (s == STRUX_SHAPE_SWIKI) {
            assert_true(fabs(leaves_sum / ROWS - 1.8) < 0.25);
            assert_true(fabs(nnz_sum / ROWS - 48) < 6);
        }
        strux_hier_gen_destroy(&g);
    }
}

static void test_options_checked(void **state)
{
    (void)state;
    strux_hier_gen_options o = shape(STRUX_SHAPE_BALANCED);
    o.depth = 1;
    assert_strux_fails(strux_hier_gen_options_check(&o), STRUX_ERR_CONFIG, "depth = 1");
    o = shape(STRUX_SHAPE_UNBALANCED);
    o.cuts = 0;
    assert_strux_fails(strux_hier_gen_options_check(&o), STRUX_ERR_CONFIG, "cuts = 0");
    o = shape(STRUX_SHAPE_RANDOM);
    o.n_nodes = 2;
    assert_strux_fails(strux_hier_gen_options_check(&o), STRUX_ERR_CONFIG, "nodes = 2");
    o = shape(STRUX_SHAPE_RANDOM);
    o.nnz = 201;
    assert_strux_fails(strux_hier_gen_options_check(&o), STRUX_ERR_CONFIG, "nnz = 201");
    o = shape(STRUX_SHAPE_RANDOM);
    o.labels_per_row = 0.5;
    assert_strux_fails(strux_hier_gen_options_check(&o), STRUX_ERR_CONFIG, "labels per row");
    o = shape(STRUX_SHAPE_SWIKI);
    o.scale = 1.5;
    assert_strux_fails(strux_hier_gen_options_check(&o), STRUX_ERR_CONFIG, "scale = 1.5");
    o = shape(STRUX_SHAPE_BALANCED);
    o.n_rows = 0;
    assert_strux_fails(strux_hier_gen_options_check(&o), STRUX_ERR_CONFIG, "rows = 0");
    o = shape(STRUX_SHAPE_RANDOM);
    o.n_nodes = 5;
    o.extra_parents = 0;
    o.labels_per_row = 3; /* more than half the leaves of any 5-node tree */
    strux_hier_gen *g = NULL;
    assert_strux_fails(strux_hier_gen_create(&o, &g), STRUX_ERR_CONFIG, "labels per row = 3");
    assert_null(g);
}

static void test_no_allocation_per_row(void **state)
{
    (void)state;
    static row r;
    for (strux_hier_shape s = STRUX_SHAPE_BALANCED; s <= STRUX_SHAPE_SWIKI; s++) {
        strux_hier_gen_options o = shape(s);
        strux_hier_gen *g = create(&o);
        int64_t before = strux_alloc_calls();
        for (int64_t i = 0; i < ROWS; i++)
            get_row(g, i, &r);
        assert_int_equal(strux_alloc_calls(), before);
        strux_hier_gen_destroy(&g);
    }
}

static void test_allocation_failures_do_not_leak(void **state)
{
    (void)state;
    for (strux_hier_shape s = STRUX_SHAPE_BALANCED; s <= STRUX_SHAPE_SWIKI; s++) {
        strux_hier_gen_options o = shape(s);
        strux_hier_gen *g = NULL;
        int64_t before = strux_alloc_calls();
        assert_strux_ok(strux_hier_gen_create(&o, &g));
        int64_t calls = strux_alloc_calls() - before;
        strux_hier_gen_destroy(&g);
        for (int64_t n = 0; n < calls; n++) {
            size_t bytes = strux_alloc_bytes();
            strux_alloc_fail_after(n);
            assert_strux_fails(strux_hier_gen_create(&o, &g), STRUX_ERR_NOMEM, "out of memory");
            assert_null(g);
            assert_int_equal(strux_alloc_bytes(), bytes);
        }
        strux_alloc_fail_after(-1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_rows_keyed_by_seed_and_row),
        cmocka_unit_test(test_row_invariants),
        cmocka_unit_test(test_options_checked),
        cmocka_unit_test(test_no_allocation_per_row),
        cmocka_unit_test(test_allocation_failures_do_not_leak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
