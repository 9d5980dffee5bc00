/* linalg/kernel.c - kernels between sparse rows, the LRU cache of kernel rows and the scores of
 * a kernel expansion (strux/kernel.h; specs/m3l.md §1.6, §1.8, §2.7, §6 A7, A18). The cache is
 * LIBSVM's: a fixed number of slots, a doubly linked list in recency order and a key → slot map;
 * a miss takes the least recently used slot. Not the solver: which rows are asked for, and how a
 * missed row is computed, are the caller's. */
#include "strux/kernel.h"

#include <math.h>
#include <string.h>

const char *strux_kernel_name(strux_kernel_type type)
{
    return type == STRUX_KERNEL_RBF ? "rbf" : type == STRUX_KERNEL_POLY ? "poly" : "linear";
}

strux_status strux_kernel_parse(const char *name, strux_kernel_type *out)
{
    for (int t = STRUX_KERNEL_LINEAR; t <= STRUX_KERNEL_POLY; t++)
        if (strcmp(name, strux_kernel_name((strux_kernel_type)t)) == 0) {
            *out = (strux_kernel_type)t;
            return STRUX_OK;
        }
    STRUX_CHECK(0, STRUX_ERR_INPUT, "kernel type '%s' is unknown (linear, rbf, poly)", name);
}

double strux_kernel_value(const strux_kernel *k, double dot, double n1, double n2)
{
    double v = dot;
    if (k->type == STRUX_KERNEL_RBF) {
        double d2 = n1 + n2 - 2 * dot;
        v = exp(-k->gamma * (d2 > 0 ? d2 : 0));
    } else if (k->type == STRUX_KERNEL_POLY) {
        double base = k->gamma * dot + k->coef0;
        v = base;
        for (int32_t d = 1; d < k->degree; d++)
            v *= base;
    }
    return v + k->b0 * k->b0;
}

double strux_kernel_norm2(const strux_csr *x, int64_t r, int32_t skip_col)
{
    double s = 0;
    for (int64_t p = x->ptr[r]; p < x->ptr[r + 1]; p++)
        if (x->col[p] != skip_col) s += (double)x->val[p] * (double)x->val[p];
    return s;
}

void strux_kernel_rows(const strux_kernel *k, const strux_csr *x, int64_t r0, int64_t n,
                       const double *norm2, const double *v, double nv, double *out)
{
    for (int64_t i = 0; i < n; i++) {
        double dot = 0;
        for (int64_t p = x->ptr[r0 + i]; p < x->ptr[r0 + i + 1]; p++)
            dot += (double)x->val[p] * v[x->col[p]];
        out[i] = strux_kernel_value(k, dot, k->type == STRUX_KERNEL_RBF ? norm2[i] : 0, nv);
    }
}

/* ---- the cache ---- */

struct strux_kcache {
    int64_t n_keys, row_len, n_slots;
    size_t value_size;
    unsigned char *rows;  /* n_slots × row_len values */
    int32_t *slot_of;     /* n_keys: the slot holding a key, −1 */
    int64_t *key_of;      /* n_slots: the key a slot holds, −1 */
    int32_t *prev, *next; /* recency list over the slots; head = most recent */
    int32_t head, tail;
    int64_t hits, misses;
};

/* Every slot empty, in order 0..n−1 from head to tail. */
static void kcache_reset(strux_kcache *c)
{
    for (int64_t k = 0; k < c->n_keys; k++)
        c->slot_of[k] = -1;
    for (int32_t s = 0; s < (int32_t)c->n_slots; s++) {
        c->key_of[s] = -1;
        c->prev[s] = s - 1;
        c->next[s] = s + 1 < c->n_slots ? s + 1 : -1;
    }
    c->head = 0;
    c->tail = (int32_t)c->n_slots - 1;
}

strux_status strux_kcache_create(int64_t n_keys, int64_t row_len, int precision_double,
                                 size_t budget, strux_kcache **out)
{
    strux_kcache *c;
    STRUX_TRY(strux_alloc(&c, sizeof *c));
    c->n_keys = n_keys;
    c->row_len = row_len > 0 ? row_len : 1;
    c->value_size = precision_double ? sizeof(double) : sizeof(float);
    size_t row_bytes = (size_t)c->row_len * c->value_size;
    c->n_slots = (int64_t)(budget / row_bytes);
    if (c->n_slots < 2) c->n_slots = 2;
    if (c->n_slots > n_keys + 1) c->n_slots = n_keys + 1;
    if (c->n_slots > INT32_MAX) c->n_slots = INT32_MAX;
    strux_status st = strux_alloc_array(&c->rows, (size_t)c->n_slots, row_bytes);
    if (st == STRUX_OK) st = strux_alloc_array(&c->slot_of, (size_t)n_keys + 1, sizeof *c->slot_of);
    if (st == STRUX_OK) st = strux_alloc_array(&c->key_of, (size_t)c->n_slots, sizeof *c->key_of);
    if (st == STRUX_OK) st = strux_alloc_array(&c->prev, (size_t)c->n_slots, sizeof *c->prev);
    if (st == STRUX_OK) st = strux_alloc_array(&c->next, (size_t)c->n_slots, sizeof *c->next);
    if (st != STRUX_OK) {
        strux_kcache_destroy(&c);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    kcache_reset(c);
    *out = c;
    return STRUX_OK;
}

void strux_kcache_destroy(strux_kcache **c)
{
    if (!*c) return;
    strux_free(&(*c)->rows);
    strux_free(&(*c)->slot_of);
    strux_free(&(*c)->key_of);
    strux_free(&(*c)->prev);
    strux_free(&(*c)->next);
    strux_free(c);
}

/* Move slot s to the head of the recency list. */
static void kcache_touch(strux_kcache *c, int32_t s)
{
    if (c->head == s) return;
    c->next[c->prev[s]] = c->next[s];
    if (c->next[s] >= 0) c->prev[c->next[s]] = c->prev[s];
    else c->tail = c->prev[s];
    c->prev[s] = -1;
    c->next[s] = c->head;
    c->prev[c->head] = s;
    c->head = s;
}

void *strux_kcache_get(strux_kcache *c, int64_t key, int *hit)
{
    int32_t s = c->slot_of[key];
    *hit = s >= 0;
    if (s >= 0) {
        c->hits++;
    } else {
        c->misses++;
        s = c->tail;
        if (c->key_of[s] >= 0) c->slot_of[c->key_of[s]] = -1;
        c->key_of[s] = key;
        c->slot_of[key] = s;
    }
    kcache_touch(c, s);
    return c->rows + (size_t)s * (size_t)c->row_len * c->value_size;
}

void strux_kcache_clear(strux_kcache *c)
{
    kcache_reset(c);
}

int64_t strux_kcache_slots(const strux_kcache *c)
{
    return c->n_slots;
}

int strux_kcache_is_double(const strux_kcache *c)
{
    return c->value_size == sizeof(double);
}

void strux_kcache_counts(const strux_kcache *c, int64_t *hits, int64_t *misses)
{
    *hits = c->hits;
    *misses = c->misses;
}

/* ---- the kernel expansion ---- */

void strux_kexp_free(strux_kexp *e)
{
    strux_csr_free(&e->sv);
    strux_free(&e->row);
    strux_free(&e->alpha);
    strux_free(&e->coef);
    strux_free(&e->norm2);
    e->n_sv = 0;
    e->n_labels = 0;
}

strux_status strux_kexp_prepare(strux_kexp *e)
{
    strux_free(&e->norm2);
    STRUX_TRY(strux_alloc_array(&e->norm2, (size_t)e->n_sv + 1, sizeof *e->norm2));
    for (int64_t s = 0; s < e->n_sv; s++)
        e->norm2[s] = strux_kernel_norm2(&e->sv, s, -1);
    return STRUX_OK;
}

int64_t strux_kexp_work_len(const strux_kexp *e, int32_t n_cols)
{
    int64_t cols = n_cols > e->sv.n_cols ? n_cols : e->sv.n_cols;
    return cols + e->n_sv + 1;
}

void strux_kexp_scores(const strux_kexp *e, const strux_csr *x, int64_t r, int32_t bias_col,
                       double *work, double *out)
{
    int64_t cols = x->n_cols > e->sv.n_cols ? x->n_cols : e->sv.n_cols;
    double *v = work, *kv = work + cols, nv = 0;
    for (int64_t p = x->ptr[r]; p < x->ptr[r + 1]; p++)
        if (x->col[p] != bias_col) {
            v[x->col[p]] = x->val[p];
            nv += (double)x->val[p] * (double)x->val[p];
        }
    strux_kernel_rows(&e->kernel, &e->sv, 0, e->n_sv, e->norm2, v, nv, kv);
    /* coef is n_sv × L row-major: column-major L × n_sv, so out = coef_cm · kv */
    strux_gemv_cols(e->n_labels, (int32_t)e->n_sv, 1.0, e->coef, kv, 0.0, out);
    for (int64_t p = x->ptr[r]; p < x->ptr[r + 1]; p++)
        v[x->col[p]] = 0;
    memset(kv, 0, (size_t)e->n_sv * sizeof *kv);
}
