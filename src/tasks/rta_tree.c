/* tasks/rta_tree.c - random spanning trees of the complete label graph and their union edge table.
 * Implements rta_impl.h "trees" (specs/rta.md §1.6 samplers, §0.2 orientation, §1.5 E_u and c_e):
 * uniform trees from a random Prüfer sequence, the reference code's random recursive trees, rooting
 * breadth-first from label 0, and the union table with multiplicities. Draws come from the
 * counter-based strux_rng keyed by (seed, tree), so every rank builds the same trees. Does not
 * score, infer, or know about models and files (the task reads and writes /rta/trees). */
#include "rta_impl.h"

#include <inttypes.h>
#include <stdlib.h>

/* §1.6 PRUFER_TREE: a uniform sequence of L−2 labels, decoded by the linear-time form of "join the
 * smallest current leaf to the next sequence entry"; writes L−1 undirected edges into pc. */
static void prufer_tree(int32_t L, strux_rng *r, int32_t *seq, int32_t *deg, int32_t *pc)
{
    for (int32_t v = 0; v < L; v++)
        deg[v] = 1;
    for (int32_t h = 0; h < L - 2; h++) {
        seq[h] = (int32_t)strux_rng_below(r, (uint64_t)L);
        deg[seq[h]]++;
    }
    int32_t ptr = 0;
    while (deg[ptr] != 1)
        ptr++;
    int32_t leaf = ptr;
    for (int32_t h = 0; h < L - 2; h++) {
        int32_t x = seq[h];
        pc[2 * h] = x;
        pc[2 * h + 1] = leaf;
        deg[leaf] = 0;
        if (--deg[x] == 1 && x < ptr) {
            leaf = x;
        } else {
            ptr++;
            while (deg[ptr] != 1)
                ptr++;
            leaf = ptr;
        }
    }
    pc[2 * (L - 2)] = L - 1; /* the two labels left with degree 1: leaf and L−1 */
    pc[2 * (L - 2) + 1] = leaf;
}

/* §1.6 [C]: a random node order; node order[h] attaches to a uniformly chosen earlier node. */
static void recursive_tree(int32_t L, strux_rng *r, int64_t *perm, int32_t *pc)
{
    strux_rng_permutation(r, perm, L);
    for (int32_t h = 1; h < L; h++) {
        pc[2 * (h - 1)] = (int32_t)perm[strux_rng_below(r, (uint64_t)h)];
        pc[2 * (h - 1) + 1] = (int32_t)perm[h];
    }
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Roots tree t (edges pc, undirected) breadth-first from label 0, children in ascending label
 * order. adj (2(L−1)) and start (L+1) are scratch. */
static strux_status root_tree(strux_rta_trees *tr, int32_t t, const int32_t *pc, int32_t *start,
                              int32_t *adj)
{
    int32_t L = tr->L;
    int64_t base = (int64_t)t * L;
    int32_t *order = tr->order + base, *parent = tr->parent + base;
    int32_t *kid0 = tr->kid0 + base, *nkid = tr->nkid + base;
    for (int32_t v = 0; v <= L; v++)
        start[v] = 0;
    for (int32_t h = 0; h < L - 1; h++) {
        for (int k = 0; k < 2; k++) {
            int32_t v = pc[2 * h + k];
            STRUX_CHECK(v >= 0 && v < L, STRUX_ERR_INPUT,
                        "tree %" PRId32 " edge %" PRId32 ": label %" PRId32
                        " is outside 0..%" PRId32,
                        t, h, v, L - 1);
        }
        STRUX_CHECK(pc[2 * h] != pc[2 * h + 1], STRUX_ERR_INPUT,
                    "tree %" PRId32 " edge %" PRId32 ": loop at label %" PRId32, t, h, pc[2 * h]);
        start[pc[2 * h] + 1]++;
        start[pc[2 * h + 1] + 1]++;
    }
    for (int32_t v = 0; v < L; v++)
        start[v + 1] += start[v];
    for (int32_t v = 0; v < L; v++)
        nkid[v] = 0; /* fill cursor, then child count */
    for (int32_t h = 0; h < L - 1; h++) {
        int32_t a = pc[2 * h], b = pc[2 * h + 1];
        adj[start[a] + nkid[a]++] = b;
        adj[start[b] + nkid[b]++] = a;
    }
    for (int32_t v = 0; v < L; v++)
        qsort(adj + start[v], (size_t)(start[v + 1] - start[v]), sizeof *adj, cmp_i32);
    for (int32_t v = 0; v < L; v++)
        parent[v] = -2; /* unvisited */
    order[0] = 0;
    parent[0] = -1;
    int32_t tail = 1;
    for (int32_t q = 0; q < tail; q++) {
        int32_t v = order[q];
        kid0[v] = tail;
        nkid[v] = 0;
        for (int32_t k = start[v]; k < start[v + 1]; k++) {
            int32_t w = adj[k];
            if (parent[w] != -2) continue;
            parent[w] = v;
            order[tail++] = w;
            nkid[v]++;
        }
    }
    STRUX_CHECK(tail == L, STRUX_ERR_INPUT,
                "tree %" PRId32 ": its %" PRId32 " edges do not connect the %" PRId32
                " labels (not a spanning tree)",
                t, L - 1, L);
    return STRUX_OK;
}

/* E_u: the distinct edges (min, max) of all trees, ascending, with their counts; then each tree
 * node's edge to its parent as a union id. key is n(L−1) scratch. */
static strux_status union_edges(strux_rta_trees *tr, int64_t *key)
{
    int32_t L = tr->L;
    int64_t m = 0;
    for (int64_t k = 0; k < (int64_t)tr->n * L; k++) {
        int32_t v = (int32_t)(k % L), p = tr->parent[k];
        if (p < 0) continue;
        key[m++] = (int64_t)(p < v ? p : v) * L + (p < v ? v : p);
    }
    qsort(key, (size_t)m, sizeof *key, cmp_i64);
    int32_t ne = 0;
    for (int64_t k = 0; k < m; k++)
        if (k == 0 || key[k] != key[k - 1]) ne++;
    tr->n_edges = ne;
    STRUX_TRY(strux_alloc_array(&tr->ends, 2 * (size_t)ne, sizeof *tr->ends));
    STRUX_TRY(strux_alloc_array(&tr->mult, (size_t)ne, sizeof *tr->mult));
    int32_t e = -1;
    for (int64_t k = 0; k < m; k++) {
        if (k == 0 || key[k] != key[k - 1]) {
            e++;
            tr->ends[2 * e] = (int32_t)(key[k] / L);
            tr->ends[2 * e + 1] = (int32_t)(key[k] % L);
        }
        tr->mult[e]++;
        key[e] = key[k]; /* compact in place: key[0..ne) become the sorted distinct keys */
    }
    for (int64_t k = 0; k < (int64_t)tr->n * L; k++) {
        int32_t v = (int32_t)(k % L), p = tr->parent[k];
        tr->up[k] = -1;
        if (p < 0) continue;
        int64_t want = (int64_t)(p < v ? p : v) * L + (p < v ? v : p);
        const int64_t *hit = bsearch(&want, key, (size_t)ne, sizeof *key, cmp_i64);
        tr->up[k] = (int32_t)(hit - key);
    }
    return STRUX_OK;
}

/* Shared by both constructors: roots the n trees of pc and builds E_u. */
static strux_status build(int32_t L, int32_t n, const int32_t *pc, strux_rta_trees **out)
{
    strux_status st = STRUX_OK;
    strux_rta_trees *tr = NULL;
    int32_t *start = NULL, *adj = NULL;
    int64_t *key = NULL;
    size_t nL = (size_t)n * (size_t)L;
    STRUX_TRY_GOTO(st, strux_alloc(&tr, sizeof *tr), done);
    tr->L = L;
    tr->n = n;
    STRUX_TRY_GOTO(st, strux_alloc_array(&tr->order, nL, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&tr->parent, nL, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&tr->up, nL, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&tr->kid0, nL, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&tr->nkid, nL, sizeof(int32_t)), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&start, (size_t)L + 1, sizeof *start), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&adj, 2 * (size_t)(L - 1), sizeof *adj), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&key, (size_t)n * (size_t)(L - 1), sizeof *key), done);
    for (int32_t t = 0; t < n; t++)
        STRUX_TRY_GOTO(st, root_tree(tr, t, pc + 2 * (int64_t)t * (L - 1), start, adj), done);
    STRUX_TRY_GOTO(st, union_edges(tr, key), done);
    *out = tr;
    tr = NULL;
done:
    strux_free(&start);
    strux_free(&adj);
    strux_free(&key);
    strux_rta_trees_destroy(&tr);
    return st;
}

static strux_status check_sizes(int32_t L, int32_t n)
{
    STRUX_CHECK(L >= 2, STRUX_ERR_INPUT, "RTA needs at least 2 labels, got %" PRId32, L);
    STRUX_CHECK(n >= 1 && n <= STRUX_RTA_MAX_TREES, STRUX_ERR_INPUT,
                "RTA tree count %" PRId32 " is outside 1..%d", n, STRUX_RTA_MAX_TREES);
    return STRUX_OK;
}

strux_status strux_rta_trees_sample(int32_t L, int32_t n, strux_rta_sampler sampler, uint64_t seed,
                                    strux_rta_trees **out)
{
    STRUX_TRY(check_sizes(L, n));
    strux_status st = STRUX_OK;
    int32_t *pc = NULL, *seq = NULL, *deg = NULL;
    int64_t *perm = NULL;
    STRUX_TRY_GOTO(st, strux_alloc_array(&pc, 2 * (size_t)n * (size_t)(L - 1), sizeof *pc), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&seq, (size_t)L, sizeof *seq), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&deg, (size_t)L, sizeof *deg), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&perm, (size_t)L, sizeof *perm), done);
    for (int32_t t = 0; t < n; t++) {
        strux_rng r;
        strux_rng_init(&r, seed, STRUX_RTA_RNG_STREAM, (uint64_t)t);
        int32_t *tree_pc = pc + 2 * (int64_t)t * (L - 1);
        if (sampler == STRUX_RTA_SAMPLER_RECURSIVE)
            recursive_tree(L, &r, perm, tree_pc);
        else
            prufer_tree(L, &r, seq, deg, tree_pc);
    }
    STRUX_TRY_GOTO(st, build(L, n, pc, out), done);
done:
    strux_free(&pc);
    strux_free(&seq);
    strux_free(&deg);
    strux_free(&perm);
    return st;
}

strux_status strux_rta_trees_from_edges(int32_t L, int32_t n, const int32_t *pc,
                                        strux_rta_trees **out)
{
    STRUX_TRY(check_sizes(L, n));
    STRUX_TRY(build(L, n, pc, out));
    return STRUX_OK;
}

void strux_rta_trees_destroy(strux_rta_trees **p)
{
    if (!*p) return;
    strux_rta_trees *tr = *p;
    strux_free(&tr->order);
    strux_free(&tr->parent);
    strux_free(&tr->up);
    strux_free(&tr->kid0);
    strux_free(&tr->nkid);
    strux_free(&tr->ends);
    strux_free(&tr->mult);
    strux_free(p);
}

void strux_rta_tree_edges(const strux_rta_trees *tr, int32_t t, int32_t *pc)
{
    const int32_t *order = tr->order + (int64_t)t * tr->L;
    const int32_t *parent = tr->parent + (int64_t)t * tr->L;
    for (int32_t h = 1; h < tr->L; h++) {
        pc[2 * (h - 1)] = parent[order[h]];
        pc[2 * (h - 1) + 1] = order[h];
    }
}
