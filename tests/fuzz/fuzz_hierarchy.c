/* tests/fuzz/fuzz_hierarchy.c - libFuzzer target: the hierarchy edge-list reader (data/hierarchy.c:
 * strux_hierarchy_read over data/text.c, plain or gzip, and strux_hierarchy_from_edges under it)
 * on arbitrary bytes, with a small node limit as a second pass. On a hierarchy that reads, the
 * structure's documented invariants are checked (parents before children, CSR both ways, leaves,
 * Ā(l), depth/height, lookups) and stop leaves are added under every internal file node, the
 * way task.partial_paths=stop does; a broken invariant aborts (a finding). Seeds: tests/fixtures
 * hier_*.txt and the small .hier/.edges files of the shared data. */
#include "fuzz_common.h"
#include "strux/hierarchy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_REQUIRE(cond)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "hierarchy invariant broken: %s (line %d)\n", #cond, __LINE__);        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The invariants strux/hierarchy.h states for a hierarchy of M nodes. */
static void check_invariants(const strux_hierarchy *h)
{
    int32_t M = h->n_nodes;
    FUZZ_REQUIRE(M >= 2 && h->parent_ptr[0] == 0 && h->child_ptr[0] == 0);
    FUZZ_REQUIRE(h->parent_ptr[M] == h->n_edges && h->child_ptr[M] == h->n_edges);
    FUZZ_REQUIRE(h->parent_ptr[1] == 0); /* the root has no parent */
    int32_t n_leaves = 0, max_depth = 0;
    for (int32_t k = 0; k < M; k++) {
        FUZZ_REQUIRE(h->parent_ptr[k] <= h->parent_ptr[k + 1]);
        FUZZ_REQUIRE(k == 0 || h->parent_ptr[k + 1] > h->parent_ptr[k]);
        int32_t d = 0;
        for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++) {
            int32_t p = h->parent_idx[q];
            FUZZ_REQUIRE(p >= 0 && p < k);
            FUZZ_REQUIRE(q == h->parent_ptr[k] || h->parent_idx[q - 1] < p);
            if (h->depth[p] > d) d = h->depth[p];
        }
        FUZZ_REQUIRE(h->depth[k] == d + 1);
        if (h->depth[k] > max_depth) max_depth = h->depth[k];
        int32_t ht = 0;
        for (int64_t q = h->child_ptr[k]; q < h->child_ptr[k + 1]; q++) {
            int32_t c = h->child_idx[q];
            FUZZ_REQUIRE(c > k && c < M);
            FUZZ_REQUIRE(q == h->child_ptr[k] || h->child_idx[q - 1] < c);
            if (h->height[c] > ht) ht = h->height[c];
        }
        FUZZ_REQUIRE(h->height[k] == ht + 1);
        int leaf = h->child_ptr[k + 1] == h->child_ptr[k];
        FUZZ_REQUIRE(leaf ? h->leaf_pos[k] == n_leaves && h->leaves[n_leaves] == k
                          : h->leaf_pos[k] == -1);
        n_leaves += leaf;
        if (h->node_id[k] >= 0) FUZZ_REQUIRE(strux_hierarchy_find(h, h->node_id[k]) == k);
    }
    FUZZ_REQUIRE(n_leaves == h->n_leaves && h->max_depth == h->height[0]);
    FUZZ_REQUIRE(max_depth == h->max_depth);
    /* Ā(l): the leaf, ascending, each entry but the root has a parent in the set */
    for (int32_t i = 0; i < h->n_leaves; i++) {
        int64_t a0 = h->anc_ptr[i], a1 = h->anc_ptr[i + 1];
        FUZZ_REQUIRE(a1 > a0 && h->anc_idx[a0] == 0 && h->anc_idx[a1 - 1] == h->leaves[i]);
        for (int64_t q = a0 + 1; q < a1; q++)
            FUZZ_REQUIRE(h->anc_idx[q - 1] < h->anc_idx[q]);
    }
    char buf[512];
    strux_hierarchy_summary(h, buf, sizeof buf);
    FUZZ_REQUIRE(strlen(buf) < sizeof buf);
}

/* Stop leaves under every internal node with a file id, then the invariants again, and the
 * upward closure of each leaf equal to its Ā(l). */
static void check_stop_leaves(strux_hierarchy *h)
{
    int32_t M = h->n_nodes, n = 0;
    int32_t *nodes = malloc((size_t)M * sizeof *nodes);
    if (!nodes) return;
    for (int32_t k = 0; k < M; k++)
        if (h->child_ptr[k + 1] > h->child_ptr[k] && h->node_id[k] >= 0) nodes[n++] = k;
    strux_status st = strux_hierarchy_add_stop_leaves(h, n, nodes);
    fuzz_check_status(st);
    free(nodes);
    if (st != STRUX_OK) return;
    check_invariants(h);
    FUZZ_REQUIRE(h->n_stop == n);
    int32_t M2 = h->n_nodes;
    unsigned char *mark = calloc((size_t)M2, 1);
    int32_t *out = malloc(2 * (size_t)M2 * sizeof *out);
    int64_t id;
    for (int32_t i = 0; mark && out && i < h->n_leaves && i < 64; i++) {
        int32_t l = h->leaves[i], n_out = 0;
        if (h->node_id[l] < 0) continue; /* virtual stop leaves are not looked up */
        id = h->node_id[l];
        st = strux_hierarchy_closure(h, "fuzz", 1, 1, &id, mark, out, &n_out);
        FUZZ_REQUIRE(st == STRUX_OK);
        FUZZ_REQUIRE(n_out == h->anc_ptr[i + 1] - h->anc_ptr[i]);
        for (int32_t j = 0; j < n_out; j++)
            FUZZ_REQUIRE(out[j] == h->anc_idx[h->anc_ptr[i] + j] && mark[out[j]] == 0);
    }
    free(mark);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, ".hier");
    const strux_hierarchy_options small = {.max_nodes = 16};
    const strux_hierarchy_options *opts[] = {NULL, &small};
    for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
        strux_hierarchy *h = NULL;
        strux_status st = strux_hierarchy_read(path, opts[k], &h);
        fuzz_check_status(st);
        if (st == STRUX_OK) {
            check_invariants(h);
            check_stop_leaves(h);
        }
        strux_hierarchy_destroy(&h);
    }
    return 0;
}
