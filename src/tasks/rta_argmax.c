/* tasks/rta_argmax.c - ensemble argmax over the union of the trees' K-best lists, with certificate.
 * Implements rta_impl.h "ensemble argmax" (specs/rta.md §2.2 ENSEMBLE_ARGMAX, §1.5 F = Σ_e c_e
 * s_e): the n K-best lists, distinct candidates found through a bit-packed hash set (§5 A25), each
 * scored once by F, the certificate F(best) ≥ Σ_t L_t[h].score and its early stop, an optional
 * excluded labelling (the truth in loss-augmented inference, §3.4 and A11). All memory is sized at
 * setup. Does not compute gradients, losses or updates (the solver does). */
#include "rta_impl.h"

#include <inttypes.h>
#include <math.h>

strux_status strux_rta_infer_create(const strux_rta_trees *tr, int32_t K, strux_rta_infer **out)
{
    strux_status st = STRUX_OK;
    strux_rta_infer *inf = NULL;
    STRUX_TRY(strux_alloc(&inf, sizeof *inf));
    inf->tr = tr;
    inf->words = strux_rta_words(tr->L);
    STRUX_TRY_GOTO(st, strux_rta_kbest_ws_create(tr->L, K, &inf->ws), fail);
    inf->K = strux_rta_kcap(K, tr->L);
    size_t nK = (size_t)tr->n * (size_t)inf->K, W = (size_t)inf->words;
    size_t slots = 2;
    while (slots < 2 * nK)
        slots *= 2;
    inf->mask = (uint32_t)(slots - 1);
    STRUX_TRY_GOTO(st, strux_alloc_array(&inf->lists, (size_t)tr->n, sizeof *inf->lists), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&inf->list_score, nK, sizeof *inf->list_score), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&inf->list_y, nK * W, sizeof *inf->list_y), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&inf->cand_F, nK, sizeof *inf->cand_F), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&inf->cand_y, nK * W, sizeof *inf->cand_y), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&inf->cand_slot, nK, sizeof *inf->cand_slot), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&inf->slot, slots, sizeof *inf->slot), fail);
    for (size_t k = 0; k < slots; k++)
        inf->slot[k] = -1;
    for (int32_t t = 0; t < tr->n; t++) {
        inf->lists[t].score = inf->list_score + (size_t)t * inf->K;
        inf->lists[t].y = inf->list_y + (size_t)t * inf->K * W;
    }
    *out = inf;
    return STRUX_OK;
fail:
    strux_rta_infer_destroy(&inf);
    return st;
}

void strux_rta_infer_destroy(strux_rta_infer **p)
{
    if (!*p) return;
    strux_rta_infer *inf = *p;
    strux_rta_kbest_ws_destroy(&inf->ws);
    strux_free(&inf->lists);
    strux_free(&inf->list_score);
    strux_free(&inf->list_y);
    strux_free(&inf->cand_F);
    strux_free(&inf->cand_y);
    strux_free(&inf->cand_slot);
    strux_free(&inf->slot);
    strux_free(p);
}

double strux_rta_score(const strux_rta_trees *tr, const double *node, const double *edge,
                       const uint64_t *y)
{
    double F = 0.0;
    for (int32_t e = 0; e < tr->n_edges; e++) {
        int u = 2 * strux_rta_bit(y, tr->ends[2 * e]) + strux_rta_bit(y, tr->ends[2 * e + 1]);
        F += tr->mult[e] * edge[4 * (int64_t)e + u];
    }
    if (node) {
        double s = 0.0;
        for (int32_t i = 0; i < tr->L; i++)
            s += node[2 * i + strux_rta_bit(y, i)];
        F += tr->n * s;
    }
    return F;
}

double strux_rta_tree_score(const strux_rta_trees *tr, int32_t t, const double *node,
                            const double *edge, const uint64_t *y)
{
    const int32_t *up = tr->up + (int64_t)t * tr->L;
    double F = 0.0;
    for (int32_t v = 0; v < tr->L; v++) {
        if (node) F += node[2 * v + strux_rta_bit(y, v)];
        if (up[v] < 0) continue;
        int32_t e = up[v];
        int u = 2 * strux_rta_bit(y, tr->ends[2 * e]) + strux_rta_bit(y, tr->ends[2 * e + 1]);
        F += edge[4 * (int64_t)e + u];
    }
    return F;
}

static int same_y(const uint64_t *x, const uint64_t *y, int32_t words)
{
    for (int32_t w = 0; w < words; w++)
        if (x[w] != y[w]) return 0;
    return 1;
}

static uint32_t hash_y(const uint64_t *y, int32_t words)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int32_t w = 0; w < words; w++) {
        h = (h ^ y[w]) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
    }
    return (uint32_t)(h ^ (h >> 32));
}

/* Adds y to the candidates unless present; returns its new id, or −1 if it was there. */
static int32_t add_candidate(strux_rta_infer *inf, const uint64_t *y)
{
    int32_t W = inf->words;
    uint32_t k = hash_y(y, W) & inf->mask;
    while (inf->slot[k] >= 0) {
        if (same_y(inf->cand_y + (int64_t)inf->slot[k] * W, y, W)) return -1;
        k = (k + 1) & inf->mask;
    }
    int32_t id = inf->n_cand++;
    inf->slot[k] = id;
    inf->cand_slot[id] = (int32_t)k;
    for (int32_t w = 0; w < W; w++)
        inf->cand_y[(int64_t)id * W + w] = y[w];
    return id;
}

/* §2.2 bound: a labelling outside the first h entries of every list has F ≤ Σ_t L_t[h].score. */
static int bound_holds(double F, double theta)
{
    return F >= theta - STRUX_RTA_CERT_TOL * fmax(1.0, fabs(theta));
}

strux_status strux_rta_argmax(strux_rta_infer *inf, const double *node, const double *edge,
                              const uint64_t *exclude, int stop_early, strux_rta_result *res)
{
    const strux_rta_trees *tr = inf->tr;
    int32_t n = tr->n, W = inf->words, depth_max = 0;
    for (int32_t k = 0; k < inf->n_cand; k++)
        inf->slot[inf->cand_slot[k]] = -1;
    inf->n_cand = 0;
    for (int32_t t = 0; t < n; t++) {
        strux_rta_kbest(tr, t, node, edge, inf->ws, &inf->lists[t]);
        if (inf->lists[t].len > depth_max) depth_max = inf->lists[t].len;
    }
    *res = (strux_rta_result){.best = -1, .F = -INFINITY, .depth = depth_max};
    for (int32_t h = 0; h < depth_max; h++) {
        if (stop_early && res->best >= 0) {
            int full = 1;
            double theta = 0.0;
            for (int32_t t = 0; t < n; t++) {
                full = full && inf->lists[t].len > h;
                if (full) theta += inf->lists[t].score[h];
            }
            if (full && bound_holds(res->F, theta)) {
                res->certified = 1;
                res->depth = h;
                break;
            }
        }
        for (int32_t t = 0; t < n; t++) {
            const strux_rta_list *lt = &inf->lists[t];
            if (lt->len <= h) continue;
            const uint64_t *y = lt->y + (int64_t)h * W;
            if (exclude && same_y(y, exclude, W)) continue;
            int32_t id = add_candidate(inf, y);
            if (id < 0) continue;
            double F = strux_rta_score(tr, node, edge, y);
            STRUX_CHECK(isfinite(F), STRUX_ERR_NUMERIC,
                        "RTA ensemble score of a candidate is %g: the node or edge scores are not "
                        "finite",
                        F);
            inf->cand_F[id] = F;
            if (F > res->F) {
                res->best = id;
                res->F = F;
            }
        }
    }
    if (!res->certified && res->best >= 0) {
        int complete = tr->L < 31;
        double theta = 0.0;
        for (int32_t t = 0; t < n; t++) {
            const strux_rta_list *lt = &inf->lists[t];
            complete = complete && lt->len == (INT32_C(1) << tr->L);
            theta += lt->score[lt->len - 1];
        }
        res->certified = complete || bound_holds(res->F, theta);
    }
    res->n_cand = inf->n_cand;
    return STRUX_OK;
}
