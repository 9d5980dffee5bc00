/* tasks/rta_kbest.c - exact K-best max-sum on one rooted spanning tree over binary labels.
 * Implements rta_impl.h "K-best" (specs/rta.md §2.1 KBEST_TREE, TOP_K_MERGE, TOP_K_SUM): leaves
 * first, each node folds its children's messages into a top-K list per own state; the root merges
 * its two lists. Departure from the spec's pseudocode: every list entry carries the bit-packed
 * labelling of its subtree instead of back-pointers, so there is no BACKTRACK pass and ties can be
 * broken by the labelling itself (order: score descending, then labelling ascending as a binary
 * number). That order is compatible with disjoint unions (two sums differing in one operand compare
 * as that operand does), so the heap of TOP_K_SUM yields the exact top-K of the product order.
 * Real list lengths, no sentinels or score shifts (§5 A22); all memory is sized at setup.
 * Does not know about ensembles, certificates or losses (rta_argmax.c, rta_loss.c). */
#include "rta_impl.h"

#include <assert.h>
#include <inttypes.h>

/* A sorted list of (val, key): key is `words` uint64 per entry. */
typedef struct klist {
    int32_t len;
    double *val;
    uint64_t *key;
} klist;

typedef struct heap_item {
    double val; /* A[a] + M[b] */
    int32_t a, b;
} heap_item;

struct strux_rta_kbest_ws {
    int32_t L;         /* labels */
    int32_t K;         /* list depth min(K, 2^L) */
    int32_t words;     /* uint64 per labelling */
    int32_t *len;      /* L×2: length of B[v][s] */
    double *val;       /* L×2×K: B[v][s] scores, subtree of v given y_v = s */
    uint64_t *key;     /* L×2×K×words: B[v][s] subtree labellings */
    double *tmp_val;   /* 3×K: the fold's current, next and message lists */
    uint64_t *tmp_key; /* 3×K×words */
    heap_item *heap;   /* K+2 */
};

strux_status strux_rta_kbest_ws_create(int32_t L, int32_t K, strux_rta_kbest_ws **out)
{
    STRUX_CHECK(L >= 2, STRUX_ERR_INPUT, "RTA needs at least 2 labels, got %" PRId32, L);
    STRUX_CHECK(K >= 1 && K <= STRUX_RTA_MAX_K, STRUX_ERR_INPUT,
                "RTA list depth K = %" PRId32 " is outside 1..%d", K, STRUX_RTA_MAX_K);
    strux_status st = STRUX_OK;
    strux_rta_kbest_ws *ws = NULL;
    STRUX_TRY(strux_alloc(&ws, sizeof *ws));
    ws->L = L;
    ws->K = strux_rta_kcap(K, L);
    ws->words = strux_rta_words(L);
    size_t lists = 2 * (size_t)L * (size_t)ws->K;
    STRUX_TRY_GOTO(st, strux_alloc_array(&ws->len, 2 * (size_t)L, sizeof *ws->len), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ws->val, lists, sizeof *ws->val), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ws->key, lists * (size_t)ws->words, sizeof *ws->key),
                   fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ws->tmp_val, 3 * (size_t)ws->K, sizeof *ws->tmp_val),
                   fail);
    STRUX_TRY_GOTO(
        st,
        strux_alloc_array(&ws->tmp_key, 3 * (size_t)ws->K * (size_t)ws->words, sizeof *ws->tmp_key),
        fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ws->heap, (size_t)ws->K + 2, sizeof *ws->heap), fail);
    *out = ws;
    return STRUX_OK;
fail:
    strux_rta_kbest_ws_destroy(&ws);
    return st;
}

void strux_rta_kbest_ws_destroy(strux_rta_kbest_ws **p)
{
    if (!*p) return;
    strux_rta_kbest_ws *ws = *p;
    strux_free(&ws->len);
    strux_free(&ws->val);
    strux_free(&ws->key);
    strux_free(&ws->tmp_val);
    strux_free(&ws->tmp_key);
    strux_free(&ws->heap);
    strux_free(p);
}

/* Labelling order for equal scores: ascending as a binary number (highest word first). */
static int key_less(const uint64_t *x, const uint64_t *y, int32_t words)
{
    for (int32_t w = words - 1; w >= 0; w--)
        if (x[w] != y[w]) return x[w] < y[w];
    return 0;
}

/* Same for the disjoint unions A.key[a] | M.key[b], without forming them. */
static int union_less(const klist *A, const klist *M, int32_t words, int32_t a1, int32_t b1,
                      int32_t a2, int32_t b2)
{
    const uint64_t *x0 = A->key + (int64_t)a1 * words, *x1 = M->key + (int64_t)b1 * words;
    const uint64_t *y0 = A->key + (int64_t)a2 * words, *y1 = M->key + (int64_t)b2 * words;
    for (int32_t w = words - 1; w >= 0; w--) {
        uint64_t x = x0[w] | x1[w], y = y0[w] | y1[w];
        if (x != y) return x < y;
    }
    return 0;
}

/* Whether heap item p comes before q in the list order. */
static int item_before(const heap_item *p, const heap_item *q, const klist *A, const klist *M,
                       int32_t words)
{
    if (p->val != q->val) return p->val > q->val;
    return union_less(A, M, words, p->a, p->b, q->a, q->b);
}

static void heap_push(heap_item *h, int32_t *n, heap_item it, const klist *A, const klist *M,
                      int32_t words)
{
    int32_t k = (*n)++;
    while (k > 0) {
        int32_t up = (k - 1) / 2;
        if (!item_before(&it, &h[up], A, M, words)) break;
        h[k] = h[up];
        k = up;
    }
    h[k] = it;
}

static heap_item heap_pop(heap_item *h, int32_t *n, const klist *A, const klist *M, int32_t words)
{
    heap_item top = h[0], last = h[--*n];
    int32_t k = 0;
    for (;;) {
        int32_t c = 2 * k + 1;
        if (c >= *n) break;
        if (c + 1 < *n && item_before(&h[c + 1], &h[c], A, M, words)) c++;
        if (!item_before(&h[c], &last, A, M, words)) break;
        h[k] = h[c];
        k = c;
    }
    if (*n > 0) h[k] = last;
    return top;
}

static void copy_key(uint64_t *dst, const uint64_t *src, int32_t words)
{
    for (int32_t w = 0; w < words; w++)
        dst[w] = src[w];
}

/* TOP_K_MERGE: the first K of X0 + shift0 and X1 + shift1 (each sorted) in list order. */
static void top_k_merge(const klist *X0, double shift0, const klist *X1, double shift1, int32_t K,
                        int32_t words, klist *out)
{
    int32_t i = 0, j = 0;
    out->len = 0;
    while (out->len < K && (i < X0->len || j < X1->len)) {
        int take0;
        if (j >= X1->len) {
            take0 = 1;
        } else if (i >= X0->len) {
            take0 = 0;
        } else {
            double v0 = X0->val[i] + shift0, v1 = X1->val[j] + shift1;
            take0 = v0 != v1 ? v0 > v1
                             : key_less(X0->key + (int64_t)i * words, X1->key + (int64_t)j * words,
                                        words);
        }
        const klist *X = take0 ? X0 : X1;
        int32_t *k = take0 ? &i : &j;
        out->val[out->len] = X->val[*k] + (take0 ? shift0 : shift1);
        copy_key(out->key + (int64_t)out->len * words, X->key + (int64_t)*k * words, words);
        (*k)++;
        out->len++;
    }
}

/* TOP_K_SUM: the first K of {A[a] + M[b]} in list order; the successor rule pushes each (a, b) once
 * and only after a predecessor that comes no later, so pops come out in order. */
static void top_k_sum(const klist *A, const klist *M, int32_t K, int32_t words, heap_item *heap,
                      klist *out)
{
    int32_t n = 0;
    out->len = 0;
    heap_push(heap, &n, (heap_item){A->val[0] + M->val[0], 0, 0}, A, M, words);
    while (out->len < K && n > 0) {
        heap_item it = heap_pop(heap, &n, A, M, words);
        out->val[out->len] = it.val;
        uint64_t *dst = out->key + (int64_t)out->len * words;
        const uint64_t *ka = A->key + (int64_t)it.a * words, *kb = M->key + (int64_t)it.b * words;
        for (int32_t w = 0; w < words; w++)
            dst[w] = ka[w] | kb[w];
        out->len++;
        if (out->len == K) break;
        if (it.b == 0 && it.a + 1 < A->len)
            heap_push(heap, &n, (heap_item){A->val[it.a + 1] + M->val[0], it.a + 1, 0}, A, M,
                      words);
        if (it.b + 1 < M->len)
            heap_push(heap, &n, (heap_item){A->val[it.a] + M->val[it.b + 1], it.a, it.b + 1}, A, M,
                      words);
    }
}

/* B[v][s] as a list view. */
static klist b_list(strux_rta_kbest_ws *ws, int32_t v, int s)
{
    int64_t slot = 2 * (int64_t)v + s;
    return (klist){ws->len[slot], ws->val + slot * ws->K,
                   ws->key + slot * ws->K * (int64_t)ws->words};
}

static klist tmp_list(strux_rta_kbest_ws *ws, int k)
{
    return (klist){0, ws->tmp_val + (int64_t)k * ws->K,
                   ws->tmp_key + (int64_t)k * ws->K * ws->words};
}

void strux_rta_kbest(const strux_rta_trees *tr, int32_t t, const double *node, const double *edge,
                     strux_rta_kbest_ws *ws, strux_rta_list *out)
{
    assert(ws->L == tr->L && t >= 0 && t < tr->n);
    int32_t L = tr->L, K = ws->K, words = ws->words;
    const int32_t *order = tr->order + (int64_t)t * L;
    const int32_t *kid0 = tr->kid0 + (int64_t)t * L, *nkid = tr->nkid + (int64_t)t * L;
    for (int32_t q = L - 1; q >= 0; q--) { /* reverse breadth-first: children before parents */
        int32_t v = order[q];
        for (int s = 0; s < 2; s++) {
            klist cur = tmp_list(ws, 0), nxt = tmp_list(ws, 1), msg = tmp_list(ws, 2);
            cur.len = 1; /* the empty product */
            cur.val[0] = 0.0;
            for (int32_t w = 0; w < words; w++)
                cur.key[w] = 0;
            for (int32_t k = kid0[v]; k < kid0[v] + nkid[v]; k++) {
                int32_t c = order[k];
                klist c0 = b_list(ws, c, 0), c1 = b_list(ws, c, 1);
                top_k_merge(&c0, strux_rta_theta(tr, t, c, edge, s, 0), &c1,
                            strux_rta_theta(tr, t, c, edge, s, 1), K, words, &msg);
                top_k_sum(&cur, &msg, K, words, ws->heap, &nxt);
                klist swap = cur;
                cur = nxt;
                nxt = swap;
            }
            /* B[v][s] := cur + node_v(s), with bit v set to s */
            klist b = b_list(ws, v, s);
            double add = node ? node[2 * v + s] : 0.0;
            uint64_t bit = (uint64_t)s << (v & 63);
            for (int32_t h = 0; h < cur.len; h++) {
                b.val[h] = cur.val[h] + add;
                copy_key(b.key + (int64_t)h * words, cur.key + (int64_t)h * words, words);
                b.key[(int64_t)h * words + v / 64] |= bit;
            }
            ws->len[2 * v + s] = cur.len;
        }
    }
    int32_t root = order[0];
    klist r0 = b_list(ws, root, 0), r1 = b_list(ws, root, 1);
    klist res = {0, out->score, out->y};
    top_k_merge(&r0, 0.0, &r1, 0.0, K, words, &res);
    out->len = res.len;
}
