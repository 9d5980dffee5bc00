/* tests/unit/test_hierarchy_pack.c - a hierarchy as bytes and back (data/hierarchy_pack.c, what
 * strux train broadcasts from rank 0): the unpacked copy equals the original in every scalar and
 * every array (derived ones included) on the shared imclef07a tree and funcat_cellcycle tree with
 * stop leaves, a forest under a virtual root with a repeated edge, and a DAG; the copy answers a
 * closure like the original; a blob cut anywhere is an input error naming the packed hierarchy;
 * allocation failures leak nothing; the task keeps its own copy (strux_task_hierarchy_use_hierarchy
 * then check builds the same hierarchy as reading task.hierarchy). */
#include "test_common.h"

#include "strux/hierarchy.h"
#include "strux/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAME_ARRAY(a, b, f, n) assert_memory_equal((a)->f, (b)->f, (size_t)(n) * sizeof *(a)->f)

static void assert_same(const strux_hierarchy *a, const strux_hierarchy *b)
{
    assert_string_equal(a->path, b->path);
    assert_int_equal(a->n_nodes, b->n_nodes);
    assert_int_equal(a->n_edges, b->n_edges);
    assert_int_equal(a->n_leaves, b->n_leaves);
    assert_int_equal(a->max_depth, b->max_depth);
    assert_int_equal(a->max_children, b->max_children);
    assert_int_equal(a->n_stop, b->n_stop);
    assert_int_equal(a->is_tree, b->is_tree);
    assert_int_equal(a->virtual_root, b->virtual_root);
    assert_int_equal(a->n_sources, b->n_sources);
    assert_int_equal(a->multi_parent, b->multi_parent);
    assert_int_equal(a->n_duplicates, b->n_duplicates);
    assert_int_equal(a->duplicate_line, b->duplicate_line);
    assert_int_equal(a->n_file, b->n_file);
    int32_t M = a->n_nodes, L = a->n_leaves;
    int64_t E = a->n_edges;
    SAME_ARRAY(a, b, node_id, M);
    SAME_ARRAY(a, b, parent_ptr, M + 1);
    SAME_ARRAY(a, b, parent_idx, E);
    SAME_ARRAY(a, b, parent_line, E);
    SAME_ARRAY(a, b, child_ptr, M + 1);
    SAME_ARRAY(a, b, child_idx, E);
    SAME_ARRAY(a, b, leaves, L);
    SAME_ARRAY(a, b, leaf_pos, M);
    SAME_ARRAY(a, b, anc_ptr, L + 1);
    SAME_ARRAY(a, b, anc_idx, a->anc_ptr[L]);
    SAME_ARRAY(a, b, depth, M);
    SAME_ARRAY(a, b, height, M);
    SAME_ARRAY(a, b, stop_leaf, M);
    SAME_ARRAY(a, b, find_id, a->n_file);
    SAME_ARRAY(a, b, find_idx, a->n_file);
}

/* Pack, unpack, compare; then every cut of the blob fails cleanly. */
static void round_trip(const strux_hierarchy *h, int cuts)
{
    strux_blob b = {0};
    assert_strux_ok(strux_hierarchy_pack(h, &b));
    strux_hierarchy *g = NULL;
    assert_strux_ok(strux_hierarchy_unpack(&b, &g));
    assert_int_equal(b.pos, b.n); /* it reads exactly what was written */
    assert_same(h, g);
    /* the copy works on its own: the closure of the last leaf's file id */
    int32_t leaf = h->leaves[h->n_leaves - 1];
    if (h->node_id[leaf] >= 0) {
        unsigned char *mark = calloc((size_t)h->n_nodes, 1);
        int32_t *s1 = calloc((size_t)h->n_nodes, sizeof *s1), *s2 = calloc((size_t)h->n_nodes, 4);
        int32_t n1, n2;
        assert_strux_ok(strux_hierarchy_closure(h, "d", 1, 1, &h->node_id[leaf], mark, s1, &n1));
        assert_strux_ok(strux_hierarchy_closure(g, "d", 1, 1, &h->node_id[leaf], mark, s2, &n2));
        assert_int_equal(n1, n2);
        assert_memory_equal(s1, s2, (size_t)n1 * sizeof *s1);
        free(mark);
        free(s1);
        free(s2);
    }
    strux_hierarchy_destroy(&g);
    size_t base = strux_alloc_bytes();
    size_t step = b.n / (size_t)cuts + 1;
    for (size_t n = 0; n < b.n; n += step) {
        strux_blob cut = {.data = b.data, .n = n, .cap = n, .pos = 0};
        assert_strux_fails(strux_hierarchy_unpack(&cut, &g), STRUX_ERR_INPUT, "packed hierarchy");
        assert_null(g);
        assert_int_equal(strux_alloc_bytes(), base);
    }
    strux_blob_free(&b);
}

static void test_shared(void **state)
{
    (void)state;
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_read(shared_data("imclef07a/ImCLEF07A.hier"), NULL, &h));
    round_trip(h, 200);
    strux_hierarchy_destroy(&h);
    assert_strux_ok(
        strux_hierarchy_read(shared_data("funcat_cellcycle/cellcycle_FUN.hier"), NULL, &h));
    int32_t under[3], n = 0;
    for (int32_t k = 1; k < h->n_nodes && n < 3; k++)
        if (h->leaf_pos[k] < 0) under[n++] = k;
    assert_strux_ok(strux_hierarchy_add_stop_leaves(h, n, under));
    assert_int_equal(h->n_stop, 3);
    round_trip(h, 200);
    strux_hierarchy_destroy(&h);
}

static void test_forest_dag(void **state)
{
    (void)state;
    /* two trees 4(5) and 2(3, 6), the edge 2 → 3 twice: a virtual root, one duplicate */
    const int64_t p[4] = {4, 2, 2, 2}, c[4] = {5, 3, 6, 3};
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_from_edges("f.hier", 4, p, c, NULL, NULL, &h));
    assert_true(h->virtual_root && h->n_duplicates == 1);
    round_trip(h, 1000);
    strux_hierarchy_destroy(&h);
    /* a diamond with an extra direct edge: a DAG */
    const int64_t dp[5] = {0, 0, 1, 2, 0}, dc[5] = {1, 2, 3, 3, 4};
    assert_strux_ok(strux_hierarchy_from_edges("d.hier", 5, dp, dc, NULL, NULL, &h));
    assert_false(h->is_tree);
    round_trip(h, 1000);
    /* allocation failures while unpacking: NOMEM, nothing leaked, *out NULL */
    strux_blob b = {0};
    assert_strux_ok(strux_hierarchy_pack(h, &b));
    size_t base = strux_alloc_bytes();
    int failed = 0;
    for (int64_t n = 0; n < 100; n++) {
        strux_hierarchy *g = NULL;
        b.pos = 0;
        strux_alloc_fail_after(n);
        strux_status st = strux_hierarchy_unpack(&b, &g);
        strux_alloc_fail_after(-1);
        if (st == STRUX_OK) {
            strux_hierarchy_destroy(&g);
            break;
        }
        assert_int_equal(st, STRUX_ERR_NOMEM);
        assert_null(g);
        assert_int_equal(strux_alloc_bytes(), base);
        failed++;
    }
    assert_true(failed >= 15); /* the struct, the path and each of the 15 arrays */
    strux_blob_free(&b);
    strux_hierarchy_destroy(&h);
}

/* A task given a hierarchy (and a task.hierarchy that does not exist, so it cannot have read
 * it) checks the data like a task that reads the file. */
static void test_task_copy(void **state)
{
    (void)state;
    char hier[512], data[512];
    snprintf(hier, sizeof hier, "%s", shared_data("imclef07a/ImCLEF07A.hier"));
    strux_hierarchy *h = NULL;
    assert_strux_ok(strux_hierarchy_read(hier, NULL, &h));
    snprintf(data, sizeof data, "%s/pack.svm", test_tmpdir());
    FILE *f = fopen(data, "w");
    int32_t leaf = h->leaves[0];
    int64_t ids[16];
    int n = 0;
    for (int32_t k = leaf; n < 16;) { /* the leaf's path without the root */
        if (k == 0) break;
        ids[n++] = h->node_id[k];
        k = h->parent_idx[h->parent_ptr[k]];
    }
    for (int i = n - 1; i >= 0; i--)
        fprintf(f, "%s%lld", i == n - 1 ? "" : ",", (long long)ids[i]);
    fprintf(f, " 1:1\n");
    fclose(f);
    strux_read_options ro = {.rank = 0, .n_ranks = 1, .n_labels = 0};
    strux_dataset *ds = NULL;
    assert_strux_ok(strux_dataset_read_libsvm(data, &ro, &ds));
    strux_task *t[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        strux_task_options to;
        assert_strux_ok(strux_opt_defaults(strux_task_opt_specs, &to)); /* nhsvm, auto, ... */
        snprintf(to.type, sizeof to.type, "hierarchy");
        snprintf(to.hierarchy, sizeof to.hierarchy, "%s", k ? "/nonexistent.hier" : hier);
        assert_strux_ok(strux_task_create(&to, &t[k]));
        if (k) assert_strux_ok(strux_task_hierarchy_use_hierarchy(t[k], h));
        assert_strux_ok(strux_task_check(t[k], ds));
    }
    strux_hierarchy_destroy(&h); /* the task kept its own copy */
    const strux_hierarchy *a, *b;
    const double *aa, *ab;
    assert_strux_ok(strux_task_hierarchy_state(t[0], &a, &aa));
    assert_strux_ok(strux_task_hierarchy_state(t[1], &b, &ab));
    assert_same(a, b); /* the path too: the given copy keeps the file's */
    assert_memory_equal(aa, ab, (size_t)a->n_nodes * sizeof *aa);
    strux_task_destroy(&t[0]);
    strux_task_destroy(&t[1]);
    strux_dataset_destroy(&ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared),
        cmocka_unit_test(test_forest_dag),
        cmocka_unit_test(test_task_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
