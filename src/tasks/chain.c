/* tasks/chain.c - first-order linear-chain task (slack_bicriteria.md §2.4(c)): an example is a
 * sequence of T tokens (rows ex_ptr[i]..ex_ptr[i+1] of the dataset), a label is one of K tags per
 * token, and
 *     f(y) = start[y_0] + Σ_t w_{y_t}·x_t + Σ_{t≥1} trans[y_{t−1}][y_t] + end[y_{T−1}],
 * with one emission weight row per tag (model rows = K) and the K×K transition matrix followed by
 * the K start and K end weights in the model's n_extra = K² + 2K parameters (start/end weights
 * let the model learn what may begin or end a sequence - in IOB2 no chunk starts with I-X - at the
 * cost of 2K weights). Loss: Hamming over tokens; |y| = tokens whose tag is not task.outside
 * (§6 A20; every token when unset).
 * Potentials of one example: s[t·K + k] = w_k·x_t for t < T, then trans (K², row = previous tag),
 * start (K) and end (K) copied from the model.
 * Oracles (all exact for the queries they accept):
 *   - direction oracle argmax a·m + b·L + c·|y|: Viterbi with per-token loss augmentation;
 *   - ban list (§2.3): k-best Viterbi for the n_ban + 1 best labels, the first one not banned;
 *   - wedge (§2.2): the loss-indexed DP over (position, tag, #errors) gives the best h_e for every
 *     error count e = 0..T; the answer is the best a·m + b·e over the frontier points (h_e, e) the
 *     wedge admits. This is the exact O_c over all labels when β = 0 or no frontier point lies
 *     above the β ray; a label it passes over has the same loss and a lower h than the frontier
 *     point of its error count, so a search for max ψ(h, g) with ψ increasing in h loses nothing
 *     (the reduction of §2.4(a)). The c·|y| term and ban lists are not combined with a wedge
 *     (STRUX_ERR_UNSUPPORTED): the frontier would need a second index for |y|.
 * Metrics: token accuracy, Hamming loss per token, sequence accuracy, n_tokens, n, and when
 * task.tags names chunk tags (every name "O" or "X-TYPE": IOB1, IOB2, IOE) the chunk precision,
 * recall and F1 of conlleval (conlleval.c). Buffers are sized by check()
 * for the longest sequence seen (the k-best ones grow with the longest ban list) and reused.
 * Knows nothing of MPI, searches or solvers. */
#include "task_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chain_data {
    char tags_path[STRUX_OPT_STR];   /* task.tags, "" if none */
    char outside_opt[STRUX_OPT_STR]; /* task.outside as given */
    char **names;                    /* n_names tag names, or NULL */
    int32_t n_names;                 /* entries of names */
    strux_chunk_tag *chunk;          /* K parsed names for the chunk metrics, or NULL */
    int32_t outside;                 /* tag not counted in |y|, −1: none */
    int32_t max_T;                   /* longest sequence the buffers hold */
    double *V;                       /* Viterbi values, max_T·K */
    int32_t *bp;                     /* Viterbi back-pointers, max_T·K */
    double *D;                       /* loss-indexed DP values, max_T·K·(max_T + 1) */
    int32_t *dbp;                    /* its back-pointers */
    int32_t kb_cap;                  /* list length N the k-best buffers hold */
    int32_t kb_T;                    /* sequence length the k-best buffers hold */
    double *kv;                      /* k-best values, kb_T·K·N */
    int32_t *kprev, *krank;          /* k-best back-pointers (tag, rank), kb_T·K·N */
    int32_t *kcount;                 /* entries per (t, k), kb_T·K */
    double *fv;                      /* final k-best list: values, N */
    int32_t *fk, *fr;                /* final k-best list: last tag and rank, N */
} chain_data;

/* ---- potentials layout ---- */

static const double *pot_trans(const strux_pot *pot)
{
    return pot->s + (int64_t)pot->n_parts * pot->n_states;
}

static const double *pot_start(const strux_pot *pot)
{
    return pot_trans(pot) + (int64_t)pot->n_states * pot->n_states;
}

static const double *pot_end(const strux_pot *pot)
{
    return pot_start(pot) + pot->n_states;
}

static int32_t max_length(const strux_dataset *ds)
{
    int64_t T = 1;
    for (int64_t i = 0; i < ds->n_local; i++)
        if (ds->ex_ptr[i + 1] - ds->ex_ptr[i] > T) T = ds->ex_ptr[i + 1] - ds->ex_ptr[i];
    return (int32_t)T;
}

/* ---- set-up ---- */

static strux_status grow_buffers(chain_data *cd, int32_t T, int32_t K)
{
    if (T <= cd->max_T) return STRUX_OK;
    size_t tk = (size_t)T * (size_t)K, tke = tk * ((size_t)T + 1);
    STRUX_TRY(strux_realloc_array(&cd->V, tk, sizeof *cd->V));
    STRUX_TRY(strux_realloc_array(&cd->bp, tk, sizeof *cd->bp));
    STRUX_TRY(strux_realloc_array(&cd->D, tke, sizeof *cd->D));
    STRUX_TRY(strux_realloc_array(&cd->dbp, tke, sizeof *cd->dbp));
    cd->max_T = T;
    return STRUX_OK;
}

/* k-best lists of length N for sequences of up to max_T tokens; grows with the longest ban list
 * a search has asked for (ban lists are short and rare: integral recovery, §3.8). */
static strux_status grow_kbest(chain_data *cd, int32_t N, int32_t K)
{
    if (N <= cd->kb_cap && cd->max_T <= cd->kb_T) return STRUX_OK;
    if (N < cd->kb_cap) N = cd->kb_cap;
    size_t tk = (size_t)cd->max_T * (size_t)K, tkn = tk * (size_t)N;
    STRUX_TRY(strux_realloc_array(&cd->kv, tkn, sizeof *cd->kv));
    STRUX_TRY(strux_realloc_array(&cd->kprev, tkn, sizeof *cd->kprev));
    STRUX_TRY(strux_realloc_array(&cd->krank, tkn, sizeof *cd->krank));
    STRUX_TRY(strux_realloc_array(&cd->kcount, tk, sizeof *cd->kcount));
    STRUX_TRY(strux_realloc_array(&cd->fv, (size_t)N, sizeof *cd->fv));
    STRUX_TRY(strux_realloc_array(&cd->fk, (size_t)N, sizeof *cd->fk));
    STRUX_TRY(strux_realloc_array(&cd->fr, (size_t)N, sizeof *cd->fr));
    cd->kb_cap = N;
    cd->kb_T = cd->max_T;
    return STRUX_OK;
}

/* task.outside: a 0-based id, or a name from task.tags. */
static strux_status resolve_outside(chain_data *cd, int32_t K)
{
    cd->outside = -1;
    const char *o = cd->outside_opt;
    if (!o[0]) return STRUX_OK;
    char *end;
    long id = strtol(o, &end, 10);
    if (end != o && *end == '\0') {
        STRUX_CHECK(id >= 0 && id < K, STRUX_ERR_CONFIG,
                    "task.outside = %ld is not a tag id: the data has %d tags (ids 0..%d)", id, K,
                    K - 1);
        cd->outside = (int32_t)id;
        return STRUX_OK;
    }
    STRUX_CHECK(cd->names, STRUX_ERR_CONFIG,
                "task.outside = '%s' is a tag name, but task.tags does not name the tags", o);
    for (int32_t k = 0; k < K; k++)
        if (cd->names[k] && strcmp(cd->names[k], o) == 0) cd->outside = k;
    STRUX_CHECK(cd->outside >= 0, STRUX_ERR_CONFIG, "task.outside = '%s' is not a tag of %s", o,
                cd->tags_path);
    return STRUX_OK;
}

/* Tag names and chunk types from task.tags (first check only: K is then fixed). */
static strux_status load_names(chain_data *cd, int32_t K)
{
    if (!cd->tags_path[0]) return STRUX_OK;
    STRUX_TRY(strux_label_names_read(cd->tags_path, K, &cd->names));
    cd->n_names = K;
    for (int32_t k = 0; k < K; k++)
        STRUX_CHECK(cd->names[k], STRUX_ERR_INPUT,
                    "%s: tag %d has no name (the data has %d tags; every id 0..%d needs one)",
                    cd->tags_path, k, K, K - 1);
    /* chunk metrics only for chunk tag sets: every name "O" or "X-TYPE" (IOB1/IOB2/IOE) */
    for (int32_t k = 0; k < K; k++) {
        const char *s = cd->names[k];
        if (strcmp(s, "O") != 0 && !(s[0] && s[1] == '-' && s[2])) return STRUX_OK;
    }
    STRUX_TRY(strux_alloc_array(&cd->chunk, (size_t)K, sizeof *cd->chunk));
    return strux_chunk_tags_parse(cd->names, K, cd->tags_path, cd->chunk);
}

static strux_status chain_check(strux_task *t, const strux_dataset *ds)
{
    chain_data *cd = t->data;
    STRUX_CHECK(ds->ex_ptr, STRUX_ERR_INPUT,
                "%s: one row per example; the chain task needs sequences (SVM-hmm text, "
                "`tag qid:n idx:val ...`)",
                ds->path);
    STRUX_CHECK(ds->n_labels >= 1, STRUX_ERR_INPUT, "%s: no tags", ds->path);
    for (int64_t i = 0; i < ds->n_local; i++) {
        STRUX_CHECK(ds->ex_ptr[i + 1] > ds->ex_ptr[i], STRUX_ERR_INPUT,
                    "%s: sequence %lld has no tokens", ds->path, (long long)(ds->first + i + 1));
        for (int64_t r = ds->ex_ptr[i]; r < ds->ex_ptr[i + 1]; r++)
            STRUX_CHECK(ds->y_ptr[r + 1] - ds->y_ptr[r] == 1, STRUX_ERR_INPUT,
                        "%s: sequence %lld: token %lld has %lld tags; the chain task needs "
                        "exactly one",
                        ds->path, (long long)(ds->first + i + 1),
                        (long long)(r - ds->ex_ptr[i] + 1),
                        (long long)(ds->y_ptr[r + 1] - ds->y_ptr[r]));
    }
    STRUX_CHECK(t->n_labels == 0 || t->n_labels == ds->n_labels, STRUX_ERR_INPUT,
                "%s: %d tags where the task has %d", ds->path, ds->n_labels, t->n_labels);
    if (t->n_labels == 0) {
        STRUX_TRY(load_names(cd, ds->n_labels));
        STRUX_TRY(resolve_outside(cd, ds->n_labels));
    }
    t->n_labels = ds->n_labels;
    return grow_buffers(cd, max_length(ds), ds->n_labels);
}

static strux_status chain_model_shape(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                      int64_t *n_extra)
{
    (void)t;
    int64_t K = ds->n_labels;
    *n_rows = ds->n_labels;
    *n_extra = K * K + 2 * K;
    return STRUX_OK;
}

static strux_status chain_sizes(const strux_task *t, const strux_dataset *ds, int32_t *max_parts,
                                int64_t *max_pot, int64_t *max_mu)
{
    (void)t;
    int64_t K = ds->n_labels, T = max_length(ds);
    *max_parts = (int32_t)T;
    *max_pot = T * K + K * K + 2 * K;
    *max_mu = 0;
    return STRUX_OK;
}

static strux_status chain_potentials(const strux_task *t, const strux_model *m,
                                     const strux_dataset *ds, int64_t i, strux_pot *pot)
{
    int32_t K = t->n_labels;
    int64_t r0 = ds->ex_ptr[i], T = ds->ex_ptr[i + 1] - r0;
    int64_t n_extra = (int64_t)K * K + 2 * K;
    STRUX_CHECK(T * K + n_extra <= pot->cap, STRUX_ERR_INTERNAL,
                "sequence of %lld tokens does not fit the potentials buffer", (long long)T);
    pot->i = i;
    pot->n_parts = (int32_t)T;
    pot->n_states = K;
    for (int64_t p = 0; p < T; p++)
        strux_model_scores(m, &ds->x, r0 + p, 0, K, pot->s + p * K);
    memcpy(pot->s + T * K, strux_model_extra(m), (size_t)n_extra * sizeof *pot->s);
    return STRUX_OK;
}

static strux_status chain_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                                strux_label *y)
{
    (void)t;
    int64_t r0 = ds->ex_ptr[i];
    y->n = (int32_t)(ds->ex_ptr[i + 1] - r0);
    y->n_mu = 0;
    for (int32_t p = 0; p < y->n; p++)
        y->y[p] = ds->y_idx[ds->y_ptr[r0 + p]];
    return STRUX_OK;
}

static double chain_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    (void)t;
    double e = 0;
    for (int32_t p = 0; p < y->n; p++)
        e += y->y[p] != truth->y[p];
    return e;
}

static double chain_size(const strux_task *t, const strux_label *y)
{
    const chain_data *cd = t->data;
    double n = 0;
    for (int32_t p = 0; p < y->n; p++)
        n += y->y[p] != cd->outside;
    return n;
}

static double chain_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    (void)t;
    int32_t K = pot->n_states, T = y->n;
    const double *trans = pot_trans(pot);
    double f = pot_start(pot)[y->y[0]] + pot_end(pot)[y->y[T - 1]];
    for (int32_t p = 0; p < T; p++) {
        f += pot->s[(int64_t)p * K + y->y[p]];
        if (p > 0) f += trans[y->y[p - 1] * K + y->y[p]];
    }
    return f;
}

/* ---- oracles ---- */

/* Node score of tag k at token p: a·emission + b·[k ≠ y_ip] + c·[k ≠ outside]. */
static double node_score(const chain_data *cd, const strux_pot *pot, const int32_t *yi, int32_t p,
                         int32_t k, double a, double b, double c)
{
    double u = a * pot->s[(int64_t)p * pot->n_states + k];
    if (yi && k != yi[p]) u += b;
    if (k != cd->outside) u += c;
    return u;
}

/* Viterbi for argmax a·f(y) + Σ_p (b·[y_p ≠ y_ip] + c·[y_p ≠ outside]) (yi may be NULL when
 * b = 0). Ties keep the lowest tag. */
static void viterbi(chain_data *cd, const strux_pot *pot, const int32_t *yi, double a, double b,
                    double c, strux_label *y)
{
    int32_t T = pot->n_parts, K = pot->n_states;
    const double *trans = pot_trans(pot), *start = pot_start(pot), *end = pot_end(pot);
    double *V = cd->V;
    int32_t *bp = cd->bp;
    for (int32_t k = 0; k < K; k++)
        V[k] = a * start[k] + node_score(cd, pot, yi, 0, k, a, b, c);
    for (int32_t p = 1; p < T; p++) {
        const double *Vp = V + (int64_t)(p - 1) * K;
        for (int32_t k = 0; k < K; k++) {
            int32_t arg = 0;
            double best = Vp[0] + a * trans[k];
            for (int32_t j = 1; j < K; j++) {
                double v = Vp[j] + a * trans[j * K + k];
                if (v > best) best = v, arg = j;
            }
            V[(int64_t)p * K + k] = best + node_score(cd, pot, yi, p, k, a, b, c);
            bp[(int64_t)p * K + k] = arg;
        }
    }
    const double *VT = V + (int64_t)(T - 1) * K;
    int32_t k = 0;
    for (int32_t j = 1; j < K; j++)
        if (VT[j] + a * end[j] > VT[k] + a * end[k]) k = j;
    y->n = T;
    y->n_mu = 0;
    for (int32_t p = T - 1; p >= 0; p--) {
        y->y[p] = k;
        if (p > 0) k = bp[(int64_t)p * K + k];
    }
}

/* Insert (v, prev, rank) into the descending list of *n ≤ N entries; equal values keep the
 * earlier entry first. */
static void kbest_insert(double *lv, int32_t *lp, int32_t *lr, int32_t *n, int32_t N, double v,
                         int32_t prev, int32_t rank)
{
    if (*n == N && !(v > lv[N - 1])) return;
    int32_t q = *n < N ? (*n)++ : N - 1;
    while (q > 0 && v > lv[q - 1]) {
        lv[q] = lv[q - 1], lp[q] = lp[q - 1], lr[q] = lr[q - 1];
        q--;
    }
    lv[q] = v, lp[q] = prev, lr[q] = rank;
}

/* k-best Viterbi: the N best labels under the augmented score, best first; writes the label of
 * rank r into y. The lists of (p, k) hold the N best prefixes ending in tag k at token p. */
static int32_t kbest_viterbi(chain_data *cd, const strux_pot *pot, const int32_t *yi, double a,
                             double b, double c, int32_t N)
{
    int32_t T = pot->n_parts, K = pot->n_states;
    const double *trans = pot_trans(pot), *start = pot_start(pot), *end = pot_end(pot);
    for (int32_t k = 0; k < K; k++) {
        cd->kcount[k] = 1;
        cd->kv[(int64_t)k * N] = a * start[k] + node_score(cd, pot, yi, 0, k, a, b, c);
        cd->kprev[(int64_t)k * N] = -1;
        cd->krank[(int64_t)k * N] = -1;
    }
    for (int32_t p = 1; p < T; p++)
        for (int32_t k = 0; k < K; k++) {
            int64_t at = ((int64_t)p * K + k) * N;
            int32_t n = 0;
            double u = node_score(cd, pot, yi, p, k, a, b, c);
            for (int32_t j = 0; j < K; j++) {
                int64_t from = ((int64_t)(p - 1) * K + j) * N;
                for (int32_t r = 0; r < cd->kcount[(int64_t)(p - 1) * K + j]; r++)
                    kbest_insert(cd->kv + at, cd->kprev + at, cd->krank + at, &n, N,
                                 cd->kv[from + r] + a * trans[j * K + k] + u, j, r);
            }
            cd->kcount[(int64_t)p * K + k] = n;
        }
    int32_t n = 0;
    for (int32_t k = 0; k < K; k++) {
        int64_t from = ((int64_t)(T - 1) * K + k) * N;
        for (int32_t r = 0; r < cd->kcount[(int64_t)(T - 1) * K + k]; r++)
            kbest_insert(cd->fv, cd->fk, cd->fr, &n, N, cd->kv[from + r] + a * end[k], k, r);
    }
    return n;
}

/* The label of entry q of the final k-best list. */
static void kbest_label(const chain_data *cd, const strux_pot *pot, int32_t N, int32_t q,
                        strux_label *y)
{
    int32_t T = pot->n_parts, K = pot->n_states, k = cd->fk[q], r = cd->fr[q];
    y->n = T;
    y->n_mu = 0;
    for (int32_t p = T - 1; p >= 0; p--) {
        y->y[p] = k;
        int64_t at = ((int64_t)p * K + k) * N + r;
        k = cd->kprev[at];
        r = cd->krank[at];
    }
}

/* Loss-indexed DP: D[p][k][e] = best f of a prefix ending in tag k at token p with e errors;
 * then the best admitted frontier point (h_e, e) under a·m + b·e. Returns found. */
static int frontier_oracle(chain_data *cd, const strux_pot *pot, const strux_label *truth,
                           const strux_query *q, strux_label *y)
{
    int32_t T = pot->n_parts, K = pot->n_states, E = T + 1;
    const int32_t *yi = truth->y;
    const double *trans = pot_trans(pot), *start = pot_start(pot), *end = pot_end(pot);
    double *D = cd->D;
    int32_t *dbp = cd->dbp;
#define AT(p, k, e) ((((int64_t)(p)*K + (k)) * E) + (e))
    for (int64_t z = 0; z < (int64_t)T * K * E; z++)
        D[z] = -INFINITY;
    for (int32_t k = 0; k < K; k++)
        D[AT(0, k, k != yi[0])] = start[k] + pot->s[k];
    for (int32_t p = 1; p < T; p++)
        for (int32_t k = 0; k < K; k++) {
            int32_t err = k != yi[p];
            double emit = pot->s[(int64_t)p * K + k];
            for (int32_t e = err; e <= p + 1; e++) {
                int32_t arg = -1;
                double best = -INFINITY;
                for (int32_t j = 0; j < K; j++) {
                    double v = D[AT(p - 1, j, e - err)] + trans[j * K + k];
                    if (v > best) best = v, arg = j;
                }
                if (arg < 0) continue;
                D[AT(p, k, e)] = best + emit;
                dbp[AT(p, k, e)] = arg;
            }
        }
    double f_truth = chain_score(NULL, pot, truth), v_best = -INFINITY;
    int32_t e_best = -1, k_best = -1;
    for (int32_t e = 0; e <= T; e++) {
        int32_t k_e = -1;
        double F = -INFINITY;
        for (int32_t k = 0; k < K; k++)
            if (D[AT(T - 1, k, e)] + end[k] > F) F = D[AT(T - 1, k, e)] + end[k], k_e = k;
        if (k_e < 0) continue;
        /* only the truth has no errors: its margin error is exactly 0 */
        double m = e == 0 ? 0.0 : F - f_truth;
        double v = q->a * m + q->b * e;
        if (v > v_best && strux_query_admits(q, m, e)) v_best = v, e_best = e, k_best = k_e;
    }
    if (e_best < 0) return 0;
    y->n = T;
    y->n_mu = 0;
    for (int32_t p = T - 1, k = k_best, e = e_best; p >= 0; p--) {
        y->y[p] = k;
        if (p == 0) break;
        int32_t j = dbp[AT(p, k, e)];
        e -= k != yi[p];
        k = j;
    }
#undef AT
    return 1;
}

static strux_status chain_oracle(const strux_task *t, const strux_pot *pot,
                                 const strux_label *truth, const strux_query *q, strux_label *y,
                                 strux_answer *ans)
{
    chain_data *cd = t->data;
    STRUX_CHECK(pot->n_parts <= cd->max_T, STRUX_ERR_INTERNAL,
                "sequence of %d tokens; buffers hold %d (check() was not run on this data)",
                pot->n_parts, cd->max_T);
    *ans = (strux_answer){0};
    if (q->wedge) {
        if (q->c != 0 || q->n_ban > 0)
            return strux_error_set(STRUX_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                                   "task '%s' does not support a wedge combined with %s",
                                   t->type_name, q->c != 0 ? "the set-size term c" : "a ban list");
        ans->found = frontier_oracle(cd, pot, truth, q, y);
    } else if (q->n_ban > 0) {
        int32_t N = q->n_ban + 1;
        STRUX_TRY(grow_kbest(cd, N, pot->n_states));
        int32_t n = kbest_viterbi(cd, pot, truth->y, q->a, q->b, q->c, N);
        for (int32_t r = 0; r < n && !ans->found; r++) {
            kbest_label(cd, pot, N, r, y);
            ans->found = !strux_query_banned(q, y);
        }
    } else {
        viterbi(cd, pot, truth->y, q->a, q->b, q->c, y);
        ans->found = 1;
    }
    if (!ans->found) return STRUX_OK;
    ans->m = chain_score(t, pot, y) - chain_score(t, pot, truth);
    ans->g = chain_loss(t, y, truth);
    ans->size = chain_size(t, y);
    return STRUX_OK;
}

static strux_status chain_predict(const strux_task *t, const strux_pot *pot, strux_label *y)
{
    chain_data *cd = t->data;
    STRUX_CHECK(pot->n_parts <= cd->max_T, STRUX_ERR_INTERNAL,
                "sequence of %d tokens; buffers hold %d (check() was not run on this data)",
                pot->n_parts, cd->max_T);
    viterbi(cd, pot, NULL, 1.0, 0.0, 0.0, y);
    return STRUX_OK;
}

/* ---- feature map ---- */

/* Free parameters: transitions trans[j·K + k] at 0, start weights at K², end weights at K² + K. */
static strux_status chain_add_feature(const strux_task *t, const strux_label *y, double scale,
                                      const strux_phi *out)
{
    int32_t K = t->n_labels, T = y->n;
    int64_t start = (int64_t)K * K, end = start + K;
    for (int32_t p = 0; p < T; p++) {
        strux_phi_row(out, p, y->y[p], scale);
        if (p > 0) strux_phi_extra(out, y->y[p - 1] * K + y->y[p], scale);
    }
    strux_phi_extra(out, start + y->y[0], scale);
    strux_phi_extra(out, end + y->y[T - 1], scale);
    return STRUX_OK;
}

static strux_status chain_add_delta(const strux_task *t, const strux_label *y,
                                    const strux_label *truth, double scale, const strux_phi *out)
{
    int32_t K = t->n_labels, T = y->n;
    int64_t start = (int64_t)K * K, end = start + K;
    const int32_t *a = y->y, *b = truth->y;
    for (int32_t p = 0; p < T; p++) {
        if (a[p] != b[p]) {
            strux_phi_row(out, p, a[p], scale);
            strux_phi_row(out, p, b[p], -scale);
        }
        if (p > 0 && (a[p - 1] != b[p - 1] || a[p] != b[p])) {
            strux_phi_extra(out, a[p - 1] * K + a[p], scale);
            strux_phi_extra(out, b[p - 1] * K + b[p], -scale);
        }
    }
    if (a[0] != b[0]) {
        strux_phi_extra(out, start + a[0], scale);
        strux_phi_extra(out, start + b[0], -scale);
    }
    if (a[T - 1] != b[T - 1]) {
        strux_phi_extra(out, end + a[T - 1], scale);
        strux_phi_extra(out, end + b[T - 1], -scale);
    }
    return STRUX_OK;
}

/* ---- evaluation ---- */

/* Accumulator layout: sequences, tokens, correct tokens, exact sequences, then conlleval's
 * chunks in truth, chunks predicted, chunks correct. */
enum { ACC_SEQ, ACC_TOK, ACC_TOK_OK, ACC_EXACT, ACC_CHUNKS, ACC_SIZE = ACC_CHUNKS + 3 };

static int64_t chain_eval_size(const strux_task *t)
{
    (void)t;
    return ACC_SIZE;
}

static strux_status chain_eval_add(const strux_task *t, const strux_label *pred,
                                   const strux_label *truth, double *acc)
{
    const chain_data *cd = t->data;
    double errors = chain_loss(t, pred, truth);
    acc[ACC_SEQ] += 1;
    acc[ACC_TOK] += truth->n;
    acc[ACC_TOK_OK] += truth->n - errors;
    acc[ACC_EXACT] += errors == 0;
    if (cd->chunk) strux_chunk_count(cd->chunk, truth->y, pred->y, truth->n, acc + ACC_CHUNKS);
    return STRUX_OK;
}

static strux_status chain_eval_report(const strux_task *t, const double *acc, strux_scores *out)
{
    const chain_data *cd = t->data;
    double tok = acc[ACC_TOK] > 0 ? acc[ACC_TOK] : 1, seq = acc[ACC_SEQ] > 0 ? acc[ACC_SEQ] : 1;
    strux_scores_add(out, "token_accuracy", acc[ACC_TOK_OK] / tok, 0);
    strux_scores_add(out, "hamming_loss", 1 - acc[ACC_TOK_OK] / tok, 0);
    strux_scores_add(out, "sequence_accuracy", acc[ACC_EXACT] / seq, 0);
    if (cd->chunk) {
        /* conlleval: P = correct/found, R = correct/in truth, F1 = 2PR/(P + R), 0 when empty */
        const double *c = acc + ACC_CHUNKS;
        double P = c[1] > 0 ? c[2] / c[1] : 0, R = c[0] > 0 ? c[2] / c[0] : 0;
        strux_scores_add(out, "chunk_precision", P, 0);
        strux_scores_add(out, "chunk_recall", R, 0);
        strux_scores_add(out, "chunk_f1", P + R > 0 ? 2 * P * R / (P + R) : 0, 0);
        strux_scores_add(out, "chunks", c[0], 1);
    }
    strux_scores_add(out, "n_tokens", acc[ACC_TOK], 1);
    strux_scores_add(out, "n", acc[ACC_SEQ], 1);
    return STRUX_OK;
}

/* Tags separated by spaces: names when task.tags gives them, else 0-based ids. */
static strux_status chain_format_label(const strux_task *t, const strux_label *y, char *buf,
                                       size_t n)
{
    const chain_data *cd = t->data;
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t p = 0; p < y->n; p++) {
        const char *sep = p ? " " : "";
        int w = cd->names ? snprintf(buf + used, n - used, "%s%s", sep, cd->names[y->y[p]])
                          : snprintf(buf + used, n - used, "%s%d", sep, y->y[p]);
        STRUX_CHECK(w > 0 && (size_t)w < n - used, STRUX_ERR_INTERNAL,
                    "label text longer than %zu bytes", n);
        used += (size_t)w;
    }
    return STRUX_OK;
}

/* ---- enumeration (brute-force references) ---- */

static int64_t chain_label_count(const strux_task *t, const strux_pot *pot)
{
    int64_t n = 1;
    for (int32_t p = 0; p < pot->n_parts; p++) {
        if (n > ((int64_t)1 << 40) / t->n_labels) return -1;
        n *= t->n_labels;
    }
    return n;
}

static strux_status chain_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                   strux_label *y)
{
    y->n = pot->n_parts;
    y->n_mu = 0;
    for (int32_t p = 0; p < y->n; p++) {
        y->y[p] = (int32_t)(index % t->n_labels);
        index /= t->n_labels;
    }
    STRUX_CHECK(index == 0, STRUX_ERR_INTERNAL, "label index beyond the label space");
    return STRUX_OK;
}

static void chain_destroy(strux_task *t)
{
    chain_data *cd = t->data;
    if (!cd) return;
    strux_label_names_free(&cd->names, cd->n_names);
    strux_free(&cd->chunk);
    strux_free(&cd->V);
    strux_free(&cd->bp);
    strux_free(&cd->D);
    strux_free(&cd->dbp);
    strux_free(&cd->kv);
    strux_free(&cd->kprev);
    strux_free(&cd->krank);
    strux_free(&cd->kcount);
    strux_free(&cd->fv);
    strux_free(&cd->fk);
    strux_free(&cd->fr);
    strux_free(&t->data);
}

static const struct strux_task_ops chain_ops = {
    .check = chain_check,
    .model_shape = chain_model_shape,
    .sizes = chain_sizes,
    .potentials = chain_potentials,
    .truth = chain_truth,
    .oracle = chain_oracle,
    .loss = chain_loss,
    .size = chain_size,
    .score = chain_score,
    .predict = chain_predict,
    .add_feature = chain_add_feature,
    .add_delta = chain_add_delta,
    .eval_size = chain_eval_size,
    .eval_add = chain_eval_add,
    .eval_report = chain_eval_report,
    .format_label = chain_format_label,
    .label_count = chain_label_count,
    .label_at = chain_label_at,
    .destroy = chain_destroy,
};

strux_status strux_task_create_chain(const strux_task_options *opt, strux_task *t)
{
    chain_data *cd;
    STRUX_TRY(strux_alloc(&cd, sizeof *cd));
    snprintf(cd->tags_path, sizeof cd->tags_path, "%s", opt->tags);
    snprintf(cd->outside_opt, sizeof cd->outside_opt, "%s", opt->outside);
    cd->outside = -1;
    t->data = cd;
    t->ops = &chain_ops;
    return STRUX_OK;
}
