/* data/hierarchy.c - label hierarchies (trees and DAGs) from an edge list (hierarchical.md §1).
 * Implements the first part of hierarchy.h, in this order: validation of the edges (ids,
 * self-loops, emptiness, duplicates), numbering of the file ids, Kahn's topological sort with a
 * cycle named when it fails, the (depth, id) node order with a virtual root over several sources,
 * the derived arrays (parent and child CSR, leaves, Ā(l) CSR, depth, height), lookups, closures,
 * most specific nodes and the stop leaves of task.partial_paths=stop; last, the `parent child`
 * file reader on the shared text reader (strux_hierarchy_read). Knows nothing of MPI (rank 0
 * reads and builds, dist sends). */
#include "strux/hierarchy.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_impl.h"
#include "strux/data.h"

/* One edge of the input, for sorting and de-duplication. */
struct edge {
    int64_t parent, child, line;
};

static int cmp_edge(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->parent != y->parent) return x->parent < y->parent ? -1 : 1;
    if (x->child != y->child) return x->child < y->child ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_i32(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Position of id in the ascending array ids[0..n), or −1. */
static int32_t find_sorted(const int64_t *ids, int32_t n, int64_t id)
{
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ids[lo] == id ? lo : -1;
}

void strux_hierarchy_destroy(strux_hierarchy **hp)
{
    if (!hp || !*hp) return;
    strux_hierarchy *h = *hp;
    strux_free(&h->path);
    strux_free(&h->node_id);
    strux_free(&h->parent_ptr);
    strux_free(&h->parent_idx);
    strux_free(&h->parent_line);
    strux_free(&h->child_ptr);
    strux_free(&h->child_idx);
    strux_free(&h->leaves);
    strux_free(&h->leaf_pos);
    strux_free(&h->anc_ptr);
    strux_free(&h->anc_idx);
    strux_free(&h->depth);
    strux_free(&h->height);
    strux_free(&h->stop_leaf);
    strux_free(&h->find_id);
    strux_free(&h->find_idx);
    strux_free(hp);
}

/* Derived arrays of a hierarchy whose M nodes (node_id, taken over) and E edges ep[e] → ec[e]
 * (ep[e] < ec[e], distinct, node 0 the only source) are final: CSR both ways, leaves, depth,
 * height, Ā(l), lookup table. Flags and counts other than these are left to the caller. */
static strux_status build(const char *path, int32_t M, int64_t **node_id, int64_t E,
                          const int32_t *ep, const int32_t *ec, const int64_t *eline,
                          strux_hierarchy **out)
{
    strux_status st = STRUX_OK;
    strux_hierarchy *h = NULL;
    int64_t *fill = NULL;
    int32_t *stamp = NULL, *stack = NULL;
    STRUX_TRY_GOTO(st, strux_alloc(&h, sizeof *h), done);
    STRUX_TRY_GOTO(st, strux_strdup(&h->path, path ? path : "(hierarchy)"), done);
    h->n_nodes = M;
    h->n_edges = E;
    h->node_id = *node_id;
    *node_id = NULL;
    h->multi_parent = -1;
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->parent_ptr, (size_t)M + 1, sizeof(int64_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->child_ptr, (size_t)M + 1, sizeof(int64_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->parent_idx, (size_t)E, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->parent_line, (size_t)E, sizeof(int64_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->child_idx, (size_t)E, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->depth, (size_t)M, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->height, (size_t)M, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->leaf_pos, (size_t)M, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->stop_leaf, (size_t)M, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&fill, (size_t)M + 1, sizeof(int64_t)), done);

    /* CSR by counting; entries end up ascending because edges are visited sorted by the other
     * end below (two passes: parents ordered by parent index, children by child index). */
    for (int64_t e = 0; e < E; e++) {
        h->parent_ptr[ec[e] + 1]++;
        h->child_ptr[ep[e] + 1]++;
    }
    for (int32_t k = 0; k < M; k++) {
        h->parent_ptr[k + 1] += h->parent_ptr[k];
        h->child_ptr[k + 1] += h->child_ptr[k];
    }
    memcpy(fill, h->parent_ptr, ((size_t)M + 1) * sizeof *fill);
    for (int64_t e = 0; e < E; e++) {
        int64_t q = fill[ec[e]]++;
        h->parent_idx[q] = ep[e];
        h->parent_line[q] = eline[e];
    }
    memcpy(fill, h->child_ptr, ((size_t)M + 1) * sizeof *fill);
    for (int64_t e = 0; e < E; e++)
        h->child_idx[fill[ep[e]]++] = ec[e];
    /* sort each node's lists (insertion sort: lists are short and usually sorted already) */
    for (int32_t k = 0; k < M; k++) {
        for (int64_t q = h->parent_ptr[k] + 1; q < h->parent_ptr[k + 1]; q++) {
            int32_t v = h->parent_idx[q];
            int64_t line = h->parent_line[q], r = q;
            for (; r > h->parent_ptr[k] && h->parent_idx[r - 1] > v; r--) {
                h->parent_idx[r] = h->parent_idx[r - 1];
                h->parent_line[r] = h->parent_line[r - 1];
            }
            h->parent_idx[r] = v;
            h->parent_line[r] = line;
        }
        int64_t c0 = h->child_ptr[k], c1 = h->child_ptr[k + 1];
        if (c1 - c0 > 1) qsort(h->child_idx + c0, (size_t)(c1 - c0), sizeof(int32_t), cmp_i32);
    }

    /* depth top-down, height bottom-up (parents have smaller indices), leaves, tree test */
    h->is_tree = 1;
    for (int32_t k = 0; k < M; k++) {
        int32_t d = 0;
        for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++)
            if (h->depth[h->parent_idx[q]] > d) d = h->depth[h->parent_idx[q]];
        h->depth[k] = d + 1;
        if (h->parent_ptr[k + 1] - h->parent_ptr[k] > 1) {
            h->is_tree = 0;
            if (h->multi_parent < 0) h->multi_parent = k;
        }
        int64_t nc = h->child_ptr[k + 1] - h->child_ptr[k];
        if (nc > h->max_children) h->max_children = (int32_t)nc;
        if (nc == 0) h->n_leaves++;
        h->stop_leaf[k] = -1;
    }
    for (int32_t k = M - 1; k >= 0; k--) {
        int32_t hk = 0;
        for (int64_t q = h->child_ptr[k]; q < h->child_ptr[k + 1]; q++)
            if (h->height[h->child_idx[q]] > hk) hk = h->height[h->child_idx[q]];
        h->height[k] = hk + 1;
    }
    h->max_depth = h->height[0];
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->leaves, (size_t)h->n_leaves, sizeof(int32_t)), done);
    for (int32_t k = 0, i = 0; k < M; k++) {
        h->leaf_pos[k] = h->child_ptr[k + 1] == h->child_ptr[k] ? i : -1;
        if (h->leaf_pos[k] >= 0) h->leaves[i++] = k;
    }

    /* Ā(l): upward search from each leaf with a stamp per node (no clearing), counted in a first
     * pass and written in a second. */
    STRUX_TRY_GOTO(st, strux_alloc_array(&stamp, (size_t)M, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&stack, (size_t)M, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->anc_ptr, (size_t)h->n_leaves + 1, sizeof(int64_t)),
                   done);
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t k = 0; k < M; k++)
            stamp[k] = -1;
        for (int32_t i = 0; i < h->n_leaves; i++) {
            int32_t top = 0, n = 0;
            stack[top++] = h->leaves[i];
            stamp[h->leaves[i]] = i;
            while (top > 0) {
                int32_t v = stack[--top];
                if (pass) h->anc_idx[h->anc_ptr[i] + n] = v;
                n++;
                for (int64_t q = h->parent_ptr[v]; q < h->parent_ptr[v + 1]; q++) {
                    int32_t p = h->parent_idx[q];
                    if (stamp[p] != i) {
                        stamp[p] = i;
                        stack[top++] = p;
                    }
                }
            }
            if (pass)
                qsort(h->anc_idx + h->anc_ptr[i], (size_t)n, sizeof(int32_t), cmp_i32);
            else
                h->anc_ptr[i + 1] = h->anc_ptr[i] + n;
        }
        if (!pass)
            STRUX_TRY_GOTO(
                st,
                strux_alloc_array(&h->anc_idx, (size_t)h->anc_ptr[h->n_leaves], sizeof(int32_t)),
                done);
    }

    /* lookup table of file ids (virtual nodes are not looked up) */
    int32_t n_file = 0;
    for (int32_t k = 0; k < M; k++)
        n_file += h->node_id[k] >= 0;
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->find_id, (size_t)n_file, sizeof(int64_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&h->find_idx, (size_t)n_file, sizeof(int32_t)), done);
    for (int32_t k = 0, i = 0; k < M; k++)
        if (h->node_id[k] >= 0) h->find_id[i++] = h->node_id[k];
    qsort(h->find_id, (size_t)n_file, sizeof(int64_t), cmp_i64);
    for (int32_t k = 0; k < M; k++)
        if (h->node_id[k] >= 0) h->find_idx[find_sorted(h->find_id, n_file, h->node_id[k])] = k;
    h->n_file = n_file;
    *out = h;
    h = NULL;
done:
    strux_free(&fill);
    strux_free(&stamp);
    strux_free(&stack);
    strux_hierarchy_destroy(&h);
    return st;
}

/* Append " -> id" to buf at *len, truncating at n. */
static void put_id(char *buf, size_t n, size_t *len, const char *sep, int64_t id)
{
    if (*len >= n) return;
    int w = snprintf(buf + *len, n - *len, "%s%" PRId64, sep, id);
    if (w > 0) *len += (size_t)w;
}

/* Kahn's sort left the nodes with rem[u] = 1 unsorted: each has an unsorted parent, so walking to
 * unsorted parents from the smallest one must repeat a node. Report that cycle forwards, from its
 * smallest id, at the line of its last edge in the file. par_ptr/par_edge: parent CSR over id
 * positions holding edge numbers; seq and pos are scratch of n entries. */
static strux_status report_cycle(const char *path, int32_t n, const int64_t *ids,
                                 const struct edge *edges, const int32_t *eu,
                                 const int64_t *par_ptr, const int64_t *par_edge,
                                 const unsigned char *rem, int32_t *seq, int32_t *pos)
{
    int32_t v = 0;
    while (!rem[v])
        v++;
    for (int32_t u = 0; u < n; u++)
        pos[u] = -1;
    int32_t len = 0;
    while (pos[v] < 0) {
        pos[v] = len;
        seq[len++] = v;
        int32_t next = -1;
        for (int64_t q = par_ptr[v]; q < par_ptr[v + 1] && next < 0; q++)
            if (rem[eu[par_edge[q]]]) next = eu[par_edge[q]];
        v = next;
    }
    /* cycle nodes seq[pos[v]..len), each one's parent the next; forwards is the reverse */
    int32_t first = pos[v], L = len - first, start = 0;
    int64_t line = 0;
    for (int32_t t = 0; t < L; t++) {
        int32_t c = seq[first + t], p = seq[first + (t + 1) % L];
        for (int64_t q = par_ptr[c]; q < par_ptr[c + 1]; q++) {
            const struct edge *e = &edges[par_edge[q]];
            if (eu[par_edge[q]] == p && e->line > line) line = e->line;
        }
        if (ids[c] < ids[seq[first + start]]) start = t;
    }
    /* forwards from the smallest id: node i of the listing is seq[first + (start − i) mod L] */
    char list[1024];
    size_t n_list = 0;
    for (int32_t i = 0; i < L; i++) {
        if (L > 16 && i == 14) {
            char more[48];
            snprintf(more, sizeof more, " -> ... (%" PRId32 " more) -> ", L - 15);
            put_id(list, sizeof list, &n_list, more, ids[seq[first + (start + 1) % L]]);
            break;
        }
        put_id(list, sizeof list, &n_list, i ? " -> " : "", ids[seq[first + (start - i + L) % L]]);
    }
    put_id(list, sizeof list, &n_list, " -> ", ids[seq[first + start]]);
    return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "%s:%" PRId64 ": the hierarchy has a cycle: %s", path, line, list);
}

strux_status strux_hierarchy_from_edges(const char *path, int64_t n_edges, const int64_t *parent,
                                        const int64_t *child, const int64_t *line,
                                        const strux_hierarchy_options *opt, strux_hierarchy **out)
{
    strux_status st = STRUX_OK;
    struct edge *edges = NULL;
    int64_t *ids = NULL, *node_id = NULL, *par_ptr = NULL, *par_edge = NULL, *ch_ptr = NULL,
            *ch_edge = NULL, *fill = NULL, *eline = NULL;
    int32_t *eu = NULL, *ev = NULL, *indeg = NULL, *order = NULL, *dep = NULL, *newpos = NULL,
            *ep = NULL, *ec = NULL, *seq = NULL;
    unsigned char *rem = NULL;
    if (!path) path = "(hierarchy)";
    *out = NULL;
    STRUX_CHECK(n_edges > 0, STRUX_ERR_INPUT, "%s: empty hierarchy: no `parent child` edges", path);

    /* the offending edge with the smallest line: a bad id or a self-loop */
    int64_t bad = -1;
    for (int64_t e = 0; e < n_edges; e++) {
        int64_t le = line ? line[e] : e + 1;
        int ok = parent[e] >= 0 && child[e] >= 0 && parent[e] <= STRUX_HIERARCHY_ID_MAX &&
                 child[e] <= STRUX_HIERARCHY_ID_MAX && parent[e] != child[e];
        if (!ok && (bad < 0 || le < (line ? line[bad] : bad + 1))) bad = e;
    }
    if (bad >= 0) {
        int64_t lb = line ? line[bad] : bad + 1, p = parent[bad], c = child[bad];
        STRUX_CHECK(p >= 0 && c >= 0, STRUX_ERR_INPUT,
                    "%s:%" PRId64 ": node id %" PRId64 " is negative; ids are integers ≥ 0", path,
                    lb, p < 0 ? p : c);
        STRUX_CHECK(p <= STRUX_HIERARCHY_ID_MAX && c <= STRUX_HIERARCHY_ID_MAX, STRUX_ERR_INPUT,
                    "%s:%" PRId64 ": node id %" PRId64 " is above the largest id %" PRId64, path,
                    lb, p > c ? p : c, (int64_t)STRUX_HIERARCHY_ID_MAX);
        return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                               "%s:%" PRId64 ": self-loop: node %" PRId64 " is its own parent",
                               path, lb, p);
    }

    /* sort, drop repeated edges (keeping the first line of each) */
    STRUX_TRY_GOTO(st, strux_alloc_array(&edges, (size_t)n_edges, sizeof *edges), done);
    for (int64_t e = 0; e < n_edges; e++)
        edges[e] = (struct edge){parent[e], child[e], line ? line[e] : e + 1};
    qsort(edges, (size_t)n_edges, sizeof *edges, cmp_edge);
    int64_t E = 0, n_dup = 0, dup_line = 0;
    for (int64_t e = 0; e < n_edges; e++) {
        if (E > 0 && edges[E - 1].parent == edges[e].parent &&
            edges[E - 1].child == edges[e].child) {
            n_dup++;
            if (dup_line == 0 || edges[e].line < dup_line) dup_line = edges[e].line;
            continue;
        }
        edges[E++] = edges[e];
    }

    /* number the distinct ids by value */
    STRUX_TRY_GOTO(st, strux_alloc_array(&ids, 2 * (size_t)E, sizeof(int64_t)), done);
    for (int64_t e = 0; e < E; e++) {
        ids[2 * e] = edges[e].parent;
        ids[2 * e + 1] = edges[e].child;
    }
    qsort(ids, 2 * (size_t)E, sizeof(int64_t), cmp_i64);
    int64_t n64 = 0;
    for (int64_t i = 0; i < 2 * E; i++)
        if (n64 == 0 || ids[i] != ids[n64 - 1]) ids[n64++] = ids[i];
    int64_t limit = opt && opt->max_nodes > 0 ? opt->max_nodes : INT32_MAX / 2;
    STRUX_CHECK_GOTO(st, n64 <= limit, STRUX_ERR_INPUT, done,
                     "%s: the hierarchy has %" PRId64 " nodes, more than the limit %" PRId64, path,
                     n64, limit);
    int32_t n = (int32_t)n64;
    STRUX_TRY_GOTO(st, strux_alloc_array(&eu, (size_t)E, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ev, (size_t)E, sizeof(int32_t)), done);
    for (int64_t e = 0; e < E; e++) {
        eu[e] = find_sorted(ids, n, edges[e].parent);
        ev[e] = find_sorted(ids, n, edges[e].child);
    }

    /* both CSRs over id positions, holding edge numbers (edges are sorted by parent already) */
    STRUX_TRY_GOTO(st, strux_alloc_array(&par_ptr, (size_t)n + 1, sizeof(int64_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ch_ptr, (size_t)n + 1, sizeof(int64_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&par_edge, (size_t)E, sizeof(int64_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ch_edge, (size_t)E, sizeof(int64_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&fill, (size_t)n + 1, sizeof(int64_t)), done);
    for (int64_t e = 0; e < E; e++) {
        par_ptr[ev[e] + 1]++;
        ch_ptr[eu[e] + 1]++;
    }
    for (int32_t u = 0; u < n; u++) {
        par_ptr[u + 1] += par_ptr[u];
        ch_ptr[u + 1] += ch_ptr[u];
    }
    memcpy(fill, par_ptr, ((size_t)n + 1) * sizeof *fill);
    for (int64_t e = 0; e < E; e++)
        par_edge[fill[ev[e]]++] = e;
    memcpy(fill, ch_ptr, ((size_t)n + 1) * sizeof *fill);
    for (int64_t e = 0; e < E; e++)
        ch_edge[fill[eu[e]]++] = e;

    /* Kahn's topological sort, FIFO from the sources in id order; longest-path depth on the way */
    STRUX_TRY_GOTO(st, strux_alloc_array(&indeg, (size_t)n, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&order, (size_t)n, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&dep, (size_t)n, sizeof(int32_t)), done);
    int32_t head = 0, tail = 0, n_src = 0;
    for (int32_t u = 0; u < n; u++) {
        indeg[u] = (int32_t)(par_ptr[u + 1] - par_ptr[u]);
        if (indeg[u] == 0) {
            order[tail++] = u;
            dep[u] = 1;
            n_src++;
        }
    }
    while (head < tail) {
        int32_t u = order[head++];
        for (int64_t q = ch_ptr[u]; q < ch_ptr[u + 1]; q++) {
            int32_t c = ev[ch_edge[q]];
            if (dep[c] < dep[u] + 1) dep[c] = dep[u] + 1;
            if (--indeg[c] == 0) order[tail++] = c;
        }
    }
    if (tail < n) {
        STRUX_TRY_GOTO(st, strux_alloc_array(&rem, (size_t)n, 1), done);
        STRUX_TRY_GOTO(st, strux_alloc_array(&seq, (size_t)n, sizeof(int32_t)), done);
        for (int32_t u = 0; u < n; u++)
            rem[u] = indeg[u] > 0;
        /* order, no longer needed, is the pos scratch */
        st = report_cycle(path, n, ids, edges, eu, par_ptr, par_edge, rem, seq, order);
        goto done;
    }

    /* final order by (depth, id); a virtual root goes first when there are several sources */
    int vroot = n_src > 1;
    int32_t M = n + vroot;
    int32_t max_dep = 0;
    for (int32_t u = 0; u < n; u++)
        if (dep[u] > max_dep) max_dep = dep[u];
    STRUX_TRY_GOTO(st, strux_alloc_array(&newpos, (size_t)n, sizeof(int32_t)), done);
    {
        /* counting sort by depth, stable in id order */
        int64_t *cnt = fill; /* n + 1 ≥ max_dep + 1 entries */
        memset(cnt, 0, ((size_t)n + 1) * sizeof *cnt);
        for (int32_t u = 0; u < n; u++)
            cnt[dep[u]]++;
        int64_t acc = vroot;
        for (int32_t d = 1; d <= max_dep; d++) {
            int64_t c = cnt[d];
            cnt[d] = acc;
            acc += c;
        }
        for (int32_t u = 0; u < n; u++)
            newpos[u] = (int32_t)cnt[dep[u]]++;
    }
    STRUX_TRY_GOTO(st, strux_alloc_array(&node_id, (size_t)M, sizeof(int64_t)), done);
    if (vroot) node_id[0] = STRUX_HIERARCHY_VIRTUAL_ROOT_ID;
    for (int32_t u = 0; u < n; u++)
        node_id[newpos[u]] = ids[u];
    int64_t E_all = E + (vroot ? n_src : 0);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ep, (size_t)E_all, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ec, (size_t)E_all, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&eline, (size_t)E_all, sizeof(int64_t)), done);
    for (int64_t e = 0; e < E; e++) {
        ep[e] = newpos[eu[e]];
        ec[e] = newpos[ev[e]];
        eline[e] = edges[e].line;
    }
    if (vroot) {
        int64_t e = E;
        for (int32_t u = 0; u < n; u++)
            if (par_ptr[u + 1] == par_ptr[u]) {
                ep[e] = 0;
                ec[e] = newpos[u];
                eline[e++] = 0;
            }
    }
    strux_hierarchy *h = NULL;
    STRUX_TRY_GOTO(st, build(path, M, &node_id, E_all, ep, ec, eline, &h), done);
    h->virtual_root = vroot;
    h->n_sources = n_src;
    h->n_duplicates = n_dup;
    h->duplicate_line = dup_line;
    *out = h;
done:
    strux_free(&edges);
    strux_free(&ids);
    strux_free(&node_id);
    strux_free(&par_ptr);
    strux_free(&par_edge);
    strux_free(&ch_ptr);
    strux_free(&ch_edge);
    strux_free(&fill);
    strux_free(&eline);
    strux_free(&eu);
    strux_free(&ev);
    strux_free(&indeg);
    strux_free(&order);
    strux_free(&dep);
    strux_free(&newpos);
    strux_free(&ep);
    strux_free(&ec);
    strux_free(&seq);
    strux_free(&rem);
    return st;
}

int32_t strux_hierarchy_find(const strux_hierarchy *h, int64_t id)
{
    if (id < 0) return -1;
    int32_t i = find_sorted(h->find_id, h->n_file, id);
    return i < 0 ? -1 : h->find_idx[i];
}

int64_t strux_hierarchy_print_id(const strux_hierarchy *h, int32_t k)
{
    int64_t id = h->node_id[k];
    if (id >= 0 || id == STRUX_HIERARCHY_VIRTUAL_ROOT_ID) return id;
    return -2 - id;
}

void strux_hierarchy_summary(const strux_hierarchy *h, char *buf, size_t n)
{
    int len = snprintf(buf, n,
                       "%s: %s, %" PRId32 " nodes (%" PRId32 " leaves), %" PRId64
                       " edges, depth %" PRId32 ", up to %" PRId32 " children",
                       h->path, h->is_tree ? "tree" : "DAG", h->n_nodes, h->n_leaves, h->n_edges,
                       h->max_depth, h->max_children);
    if (len < 0 || (size_t)len >= n) return;
    if (!h->is_tree) {
        int64_t extra = h->n_edges - (h->n_nodes - 1);
        int w = snprintf(buf + len, n - (size_t)len,
                         ", %" PRId64 " extra parent edges (node %" PRId64 " has two parents)",
                         extra, strux_hierarchy_print_id(h, h->multi_parent));
        if (w < 0 || (size_t)(len += w) >= n) return;
    }
    if (h->virtual_root) {
        int w = snprintf(buf + len, n - (size_t)len, ", virtual root over %" PRId32 " sources",
                         h->n_sources);
        if (w < 0 || (size_t)(len += w) >= n) return;
    } else {
        int w = snprintf(buf + len, n - (size_t)len, ", root %" PRId64, h->node_id[0]);
        if (w < 0 || (size_t)(len += w) >= n) return;
    }
    if (h->n_stop > 0) {
        int w = snprintf(buf + len, n - (size_t)len, ", %" PRId32 " stop leaves", h->n_stop);
        if (w < 0 || (size_t)(len += w) >= n) return;
    }
    if (h->n_duplicates > 0)
        snprintf(buf + len, n - (size_t)len,
                 ", %" PRId64 " repeated edges ignored (first at line %" PRId64 ")",
                 h->n_duplicates, h->duplicate_line);
}

strux_status strux_hierarchy_closure(const strux_hierarchy *h, const char *path, int64_t line,
                                     int64_t n_ids, const int64_t *ids, unsigned char *mark,
                                     int32_t *out, int32_t *n_out)
{
    int32_t n = 0;
    for (int64_t i = 0; i < n_ids; i++) {
        int32_t k = strux_hierarchy_find(h, ids[i]);
        if (k < 0) {
            for (int32_t j = 0; j < n; j++)
                mark[out[j]] = 0;
            *n_out = 0;
            return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                   "%s:%" PRId64 ": label %" PRId64
                                   " is not a node of the hierarchy %s",
                                   path ? path : "(data)", line, ids[i], h->path);
        }
        if (!mark[k]) {
            mark[k] = 1;
            out[n++] = k;
        }
    }
    /* out doubles as the queue of the upward search */
    for (int32_t j = 0; j < n; j++) {
        int32_t v = out[j];
        for (int64_t q = h->parent_ptr[v]; q < h->parent_ptr[v + 1]; q++) {
            int32_t p = h->parent_idx[q];
            if (!mark[p]) {
                mark[p] = 1;
                out[n++] = p;
            }
        }
    }
    if (h->n_stop > 0) {
        /* mark 2: has a child in the set; internal nodes left at 1 end a path */
        for (int32_t j = 0; j < n; j++)
            for (int64_t q = h->parent_ptr[out[j]]; q < h->parent_ptr[out[j] + 1]; q++)
                mark[h->parent_idx[q]] = 2;
        int32_t n0 = n;
        for (int32_t j = 0; j < n0; j++) {
            int32_t k = out[j];
            if (mark[k] == 1 && h->stop_leaf[k] >= 0) out[n++] = h->stop_leaf[k];
        }
    }
    for (int32_t j = 0; j < n; j++)
        mark[out[j]] = 0;
    qsort(out, (size_t)n, sizeof(int32_t), cmp_i32);
    *n_out = n;
    return STRUX_OK;
}

void strux_hierarchy_most_specific(const strux_hierarchy *h, int32_t n, const int32_t *set,
                                   unsigned char *mark, int32_t *out, int32_t *n_out)
{
    for (int32_t j = 0; j < n; j++)
        mark[set[j]] = 1;
    for (int32_t j = 0; j < n; j++)
        for (int64_t q = h->parent_ptr[set[j]]; q < h->parent_ptr[set[j] + 1]; q++)
            if (mark[h->parent_idx[q]]) mark[h->parent_idx[q]] = 2;
    int32_t m = 0;
    for (int32_t j = 0; j < n; j++)
        if (mark[set[j]] == 1) out[m++] = set[j];
    for (int32_t j = 0; j < n; j++)
        mark[set[j]] = 0;
    *n_out = m;
}

strux_status strux_hierarchy_add_stop_leaves(strux_hierarchy *h, int32_t n, const int32_t *nodes)
{
    strux_status st = STRUX_OK;
    int32_t M = h->n_nodes, add = 0;
    int32_t *stop = NULL, *ep = NULL, *ec = NULL;
    int64_t *eline = NULL, *node_id = NULL;
    strux_hierarchy *g = NULL;
    STRUX_TRY(strux_alloc_array(&stop, (size_t)M, sizeof(int32_t)));
    memcpy(stop, h->stop_leaf, (size_t)M * sizeof *stop);
    for (int32_t i = 0; i < n; i++) {
        int32_t k = nodes[i];
        STRUX_CHECK_GOTO(st, k >= 0 && k < M, STRUX_ERR_INPUT, done,
                         "%s: stop leaf requested under node index %" PRId32 " of %" PRId32,
                         h->path, k, M);
        STRUX_CHECK_GOTO(st, h->child_ptr[k + 1] > h->child_ptr[k], STRUX_ERR_INPUT, done,
                         "%s: stop leaf requested under node %" PRId64 ", which is a leaf", h->path,
                         strux_hierarchy_print_id(h, k));
        STRUX_CHECK_GOTO(st, h->node_id[k] >= 0, STRUX_ERR_INPUT, done,
                         "%s: stop leaf requested under a virtual node", h->path);
        if (stop[k] < 0) stop[k] = M + add++;
    }
    if (add == 0) goto done;
    int32_t M2 = M + add;
    int64_t E2 = h->n_edges + add;
    STRUX_TRY_GOTO(st, strux_alloc_array(&node_id, (size_t)M2, sizeof(int64_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ep, (size_t)E2, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ec, (size_t)E2, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&eline, (size_t)E2, sizeof(int64_t)), done);
    memcpy(node_id, h->node_id, (size_t)M * sizeof *node_id);
    int64_t e = 0;
    for (int32_t k = 0; k < M; k++)
        for (int64_t q = h->parent_ptr[k]; q < h->parent_ptr[k + 1]; q++) {
            ep[e] = h->parent_idx[q];
            ec[e] = k;
            eline[e++] = h->parent_line[q];
        }
    for (int32_t k = 0; k < M; k++)
        if (stop[k] >= M) {
            node_id[stop[k]] = -2 - h->node_id[k];
            ep[e] = k;
            ec[e] = stop[k];
            eline[e++] = 0;
        }
    STRUX_TRY_GOTO(st, build(h->path, M2, &node_id, E2, ep, ec, eline, &g), done);
    for (int32_t k = 0; k < M; k++)
        g->stop_leaf[k] = stop[k];
    g->n_stop = h->n_stop + add;
    g->virtual_root = h->virtual_root;
    g->n_sources = h->n_sources;
    g->n_duplicates = h->n_duplicates;
    g->duplicate_line = h->duplicate_line;
    /* swap contents: h takes g's arrays, g (then destroyed) takes h's */
    strux_hierarchy tmp = *h;
    *h = *g;
    *g = tmp;
done:
    strux_hierarchy_destroy(&g);
    strux_free(&stop);
    strux_free(&ep);
    strux_free(&ec);
    strux_free(&eline);
    strux_free(&node_id);
    return st;
}

/* ---- the `parent child` file reader (LSHTC cat_hier.txt, the shared .hier files) ---- */

/* Parse one node id token at s (its end at *end): digits only, at most STRUX_HIERARCHY_ID_MAX.
 * what is "parent" or "child" for messages. */
static strux_status parse_id(const char *path, long long ln, const char *s, const char *what,
                             int64_t *id, const char **end)
{
    char tok[48];
    const char *q = s;
    while (*q && !isspace((unsigned char)*q))
        q++;
    *end = q;
    const char *d = s + (*s == '-');
    int digits = d < q;
    for (const char *p = d; p < q; p++)
        digits = digits && isdigit((unsigned char)*p);
    STRUX_CHECK(digits, STRUX_ERR_INPUT,
                "%s:%lld: %s id '%s' is not an integer (lines are `parent child` with integer "
                "ids ≥ 0)",
                path, ln, what, strux_data_token_text(s, tok, sizeof tok));
    STRUX_CHECK(*s != '-', STRUX_ERR_INPUT, "%s:%lld: %s id %s is negative; ids are integers ≥ 0",
                path, ln, what, strux_data_token_text(s, tok, sizeof tok));
    uint64_t v = 0;
    for (const char *p = d; p < q; p++) {
        unsigned dig = (unsigned)(*p - '0');
        STRUX_CHECK(v <= ((uint64_t)STRUX_HIERARCHY_ID_MAX - dig) / 10, STRUX_ERR_INPUT,
                    "%s:%lld: %s id %s is above the largest id %" PRId64, path, ln, what,
                    strux_data_token_text(s, tok, sizeof tok), (int64_t)STRUX_HIERARCHY_ID_MAX);
        v = v * 10 + dig;
    }
    *id = (int64_t)v;
    return STRUX_OK;
}

/* Skip spaces and tabs (the reader has stripped the line end; a stray \r or \v is whitespace). */
static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

/* One line: blank and `#` lines give *n_ids = 0, else exactly two ids. */
static strux_status parse_edge_line(const char *path, long long ln, const char *s, int *n_ids,
                                    int64_t *parent, int64_t *child)
{
    char tok[48];
    s = skip_space(s);
    *n_ids = 0;
    if (!*s || *s == '#') return STRUX_OK;
    const char *end;
    STRUX_TRY(parse_id(path, ln, s, "parent", parent, &end));
    s = skip_space(end);
    STRUX_CHECK(*s, STRUX_ERR_INPUT, "%s:%lld: one id where `parent child` (two ids) was expected",
                path, ln);
    STRUX_TRY(parse_id(path, ln, s, "child", child, &end));
    s = skip_space(end);
    STRUX_CHECK(!*s, STRUX_ERR_INPUT,
                "%s:%lld: extra token '%s' after `parent child` (exactly two ids per line)", path,
                ln, strux_data_token_text(s, tok, sizeof tok));
    *n_ids = 2;
    return STRUX_OK;
}

strux_status strux_hierarchy_read(const char *path, const strux_hierarchy_options *opt,
                                  strux_hierarchy **out)
{
    *out = NULL;
    strux_text_reader *r = NULL;
    int64_t *p = NULL, *c = NULL, *line = NULL;
    int64_t n = 0, cap = 0;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_text_reader_open(path, &r), done);
    for (;;) {
        char *s;
        STRUX_TRY_GOTO(st, strux_text_reader_next_line(r, &s, NULL), done);
        if (!s) break;
        int64_t ln = strux_text_reader_line_no(r), a = 0, b = 0;
        int n_ids;
        STRUX_TRY_GOTO(st, parse_edge_line(path, (long long)ln, s, &n_ids, &a, &b), done);
        if (!n_ids) continue;
        if (n == cap) {
            int64_t cap2 = cap ? 2 * cap : 1024;
            STRUX_TRY_GOTO(st, strux_realloc_array(&p, (size_t)cap2, sizeof *p), done);
            STRUX_TRY_GOTO(st, strux_realloc_array(&c, (size_t)cap2, sizeof *c), done);
            STRUX_TRY_GOTO(st, strux_realloc_array(&line, (size_t)cap2, sizeof *line), done);
            cap = cap2;
        }
        p[n] = a;
        c[n] = b;
        line[n++] = ln;
    }
    STRUX_TRY_GOTO(st, strux_hierarchy_from_edges(path, n, p, c, line, opt, out), done);
    if ((*out)->n_duplicates > 0) /* issue 14: not an error, one warning */
        strux_log(STRUX_LOG_WARN,
                  "%s: %" PRId64 " duplicate edges kept once (the first repeat on line %" PRId64
                  ")",
                  path, (*out)->n_duplicates, (*out)->duplicate_line);
    st = STRUX_OK;
done:
    strux_text_reader_close(&r);
    strux_free(&p);
    strux_free(&c);
    strux_free(&line);
    return st;
}

void strux_hier_stored_free(strux_hier_stored *s)
{
    strux_free(&s->node_id);
    strux_free(&s->parent_ptr);
    strux_free(&s->parent_idx);
    strux_free(&s->alpha);
    s->n_nodes = 0;
}
