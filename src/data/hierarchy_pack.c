/* data/hierarchy_pack.c - a built hierarchy as bytes and back (hierarchical.md §1: the hierarchy
 * is "validated on rank 0 and sent to all"). strux_hierarchy_pack writes every field of the
 * struct, derived arrays included, so the receiving ranks neither read the file nor rebuild or
 * re-validate anything: they hold rank 0's structure, byte for byte. The byte layout is private
 * to one binary (native endianness, no version): it travels between the ranks of one job and
 * into a task's own copy, never into a file. Knows nothing of MPI (the caller broadcasts). */
#include "strux/hierarchy.h"

#include <string.h>

/* Scalars first, in this order; the array sizes follow from them. */
#define PACK_SCALARS(X)                                                                            \
    X(n_nodes)                                                                                     \
    X(n_edges) X(n_leaves) X(max_depth) X(max_children) X(n_stop) X(is_tree) X(virtual_root)       \
        X(n_sources) X(multi_parent) X(n_duplicates) X(duplicate_line) X(n_file)

static strux_status put_array(strux_blob *b, const void *a, int64_t n, size_t size)
{
    return n > 0 ? strux_blob_put(b, a, (size_t)n * size) : STRUX_OK;
}

/* Allocate n (at least one, as the builder does) and read them. */
static strux_status get_array(strux_blob *b, void *dst, int64_t n, size_t size, const char *what)
{
    void **p = dst;
    STRUX_CHECK(n >= 0 && (uint64_t)n * size <= b->n - b->pos, STRUX_ERR_INPUT,
                "packed hierarchy: %s of %lld entries runs past the %zu bytes", what, (long long)n,
                b->n);
    STRUX_TRY(strux_alloc_array(p, (size_t)(n > 0 ? n : 1), size));
    return n > 0 ? strux_blob_get(b, *p, (size_t)n * size, what) : STRUX_OK;
}

strux_status strux_hierarchy_pack(const strux_hierarchy *h, strux_blob *b)
{
    const int32_t M = h->n_nodes, L = h->n_leaves;
    const int64_t E = h->n_edges;
    uint64_t len = strlen(h->path);
    STRUX_TRY(strux_blob_put(b, &len, sizeof len));
    STRUX_TRY(strux_blob_put(b, h->path, (size_t)len));
#define PUT(f) STRUX_TRY(strux_blob_put(b, &h->f, sizeof h->f));
    PACK_SCALARS(PUT)
#undef PUT
    STRUX_TRY(put_array(b, h->node_id, M, sizeof *h->node_id));
    STRUX_TRY(put_array(b, h->parent_ptr, M + 1, sizeof *h->parent_ptr));
    STRUX_TRY(put_array(b, h->parent_idx, E, sizeof *h->parent_idx));
    STRUX_TRY(put_array(b, h->parent_line, E, sizeof *h->parent_line));
    STRUX_TRY(put_array(b, h->child_ptr, M + 1, sizeof *h->child_ptr));
    STRUX_TRY(put_array(b, h->child_idx, E, sizeof *h->child_idx));
    STRUX_TRY(put_array(b, h->leaves, L, sizeof *h->leaves));
    STRUX_TRY(put_array(b, h->leaf_pos, M, sizeof *h->leaf_pos));
    STRUX_TRY(put_array(b, h->anc_ptr, L + 1, sizeof *h->anc_ptr));
    STRUX_TRY(put_array(b, h->anc_idx, h->anc_ptr[L], sizeof *h->anc_idx));
    STRUX_TRY(put_array(b, h->depth, M, sizeof *h->depth));
    STRUX_TRY(put_array(b, h->height, M, sizeof *h->height));
    STRUX_TRY(put_array(b, h->stop_leaf, M, sizeof *h->stop_leaf));
    STRUX_TRY(put_array(b, h->find_id, h->n_file, sizeof *h->find_id));
    return put_array(b, h->find_idx, h->n_file, sizeof *h->find_idx);
}

static strux_status unpack_into(strux_blob *b, strux_hierarchy *h)
{
    uint64_t len;
    STRUX_TRY(strux_blob_get(b, &len, sizeof len, "packed hierarchy: path length"));
    STRUX_CHECK(len <= b->n - b->pos, STRUX_ERR_INPUT,
                "packed hierarchy: a path of %llu bytes runs past the %zu bytes",
                (unsigned long long)len, b->n);
    STRUX_TRY(strux_alloc(&h->path, (size_t)len + 1));
    STRUX_TRY(strux_blob_get(b, h->path, (size_t)len, "packed hierarchy: path"));
    h->path[len] = '\0';
#define GET(f) STRUX_TRY(strux_blob_get(b, &h->f, sizeof h->f, "packed hierarchy: " #f));
    PACK_SCALARS(GET)
#undef GET
    const int32_t M = h->n_nodes, L = h->n_leaves;
    const int64_t E = h->n_edges;
    STRUX_CHECK(M > 0 && L > 0 && E >= 0 && h->n_file >= 0, STRUX_ERR_INPUT,
                "packed hierarchy: %d nodes, %d leaves, %lld edges", M, L, (long long)E);
    STRUX_TRY(get_array(b, &h->node_id, M, sizeof *h->node_id, "node_id"));
    STRUX_TRY(get_array(b, &h->parent_ptr, M + 1, sizeof *h->parent_ptr, "parent_ptr"));
    STRUX_TRY(get_array(b, &h->parent_idx, E, sizeof *h->parent_idx, "parent_idx"));
    STRUX_TRY(get_array(b, &h->parent_line, E, sizeof *h->parent_line, "parent_line"));
    STRUX_TRY(get_array(b, &h->child_ptr, M + 1, sizeof *h->child_ptr, "child_ptr"));
    STRUX_TRY(get_array(b, &h->child_idx, E, sizeof *h->child_idx, "child_idx"));
    STRUX_TRY(get_array(b, &h->leaves, L, sizeof *h->leaves, "leaves"));
    STRUX_TRY(get_array(b, &h->leaf_pos, M, sizeof *h->leaf_pos, "leaf_pos"));
    STRUX_TRY(get_array(b, &h->anc_ptr, L + 1, sizeof *h->anc_ptr, "anc_ptr"));
    STRUX_TRY(get_array(b, &h->anc_idx, h->anc_ptr[L], sizeof *h->anc_idx, "anc_idx"));
    STRUX_TRY(get_array(b, &h->depth, M, sizeof *h->depth, "depth"));
    STRUX_TRY(get_array(b, &h->height, M, sizeof *h->height, "height"));
    STRUX_TRY(get_array(b, &h->stop_leaf, M, sizeof *h->stop_leaf, "stop_leaf"));
    STRUX_TRY(get_array(b, &h->find_id, h->n_file, sizeof *h->find_id, "find_id"));
    return get_array(b, &h->find_idx, h->n_file, sizeof *h->find_idx, "find_idx");
}

strux_status strux_hierarchy_unpack(strux_blob *b, strux_hierarchy **out)
{
    *out = NULL;
    STRUX_TRY(strux_alloc(out, sizeof **out));
    strux_status st = unpack_into(b, *out);
    if (st != STRUX_OK) strux_hierarchy_destroy(out);
    return st;
}
