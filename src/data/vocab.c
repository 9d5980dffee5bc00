/* data/vocab.c - what the synthetic generators (synth.c, synth_hier.c) draw from: Vose's alias
 * table for any discrete distribution (O(1) draws); a Zipf vocabulary built on it: feature
 * popularity ranks with P(rank r) ∝ (r + 1)^-s, the idf of every rank, and the scatter of ranks over
 * columns by an affine bijection r -> (a·r + b) mod D, so that popular features are spread over
 * the column range; a feature's planted weights (distinct targets, N(0, 1) weights); and the sort
 * of a row's (column, rank) keys. Declared in data_impl.h. Knows nothing of rows or labels. */
#include "data_impl.h"

#include <math.h>
#include <stdlib.h>

#define SHELL_SORT_MAX 1024 /* longer rows are sorted by qsort */

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

strux_status strux_alias_build(strux_alias *a, const double *w, int64_t n)
{
    *a = (strux_alias){0};
    STRUX_CHECK(n > 0 && n <= INT32_MAX, STRUX_ERR_INTERNAL, "alias table of %lld outcomes",
                (long long)n);
    double *p = NULL;
    int32_t *work = NULL; /* small outcomes stacked from the front, large ones from the back */
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&a->slot, (size_t)n, sizeof *a->slot), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&p, (size_t)n, sizeof *p), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&work, (size_t)n, sizeof *work), done);
    a->n = n;
    double total = 0;
    for (int64_t r = 0; r < n; r++)
        total += w[r];
    STRUX_CHECK_GOTO(st, total > 0 && isfinite(total), STRUX_ERR_INTERNAL, done,
                     "alias table: weights sum to %g", total);
    int64_t n_small = 0, n_large = 0;
    for (int64_t r = 0; r < n; r++) {
        p[r] = w[r] * ((double)n / total); /* mean 1 */
        if (p[r] < 1)
            work[n_small++] = (int32_t)r;
        else
            work[n - 1 - n_large++] = (int32_t)r;
    }
    while (n_small > 0 && n_large > 0) {
        int32_t l = work[--n_small], g = work[n - n_large--];
        a->slot[l] = (strux_alias_slot){(float)p[l], g};
        p[g] -= 1.0 - p[l];
        if (p[g] < 1)
            work[n_small++] = g;
        else
            work[n - 1 - n_large++] = g;
    }
    while (n_small > 0) { /* rounding leftovers */
        int32_t l = work[--n_small];
        a->slot[l] = (strux_alias_slot){1.0f, l};
    }
    while (n_large > 0) {
        int32_t g = work[n - n_large--];
        a->slot[g] = (strux_alias_slot){1.0f, g};
    }
done:
    strux_free(&p);
    strux_free(&work);
    if (st != STRUX_OK) strux_alias_free(a);
    return st;
}

void strux_alias_free(strux_alias *a)
{
    strux_free(&a->slot);
    a->n = 0;
}

strux_status strux_vocab_build(strux_vocab *v, int32_t dim, double zipf, uint64_t seed,
                               uint64_t stream)
{
    *v = (strux_vocab){.dim = dim};
    double *p = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&v->idf, (size_t)dim, sizeof *v->idf), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&v->column, (size_t)dim, sizeof *v->column), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&p, (size_t)dim, sizeof *p), done);
    for (int64_t r = 0; r < dim; r++) {
        p[r] = pow((double)r + 1.0, -zipf);
        /* ln(r + 1) is ln 1/P(rank r) up to a constant: an idf for a document frequency ∝ P */
        v->idf[r] = (float)(1.0 + zipf * log((double)r + 1.0));
    }
    STRUX_TRY_GOTO(st, strux_alias_build(&v->popularity, p, dim), done);
    strux_rng r;
    strux_rng_init(&r, seed, stream, 0);
    uint64_t D = (uint64_t)dim;
    uint64_t a = D > 1 ? 1 + strux_rng_below(&r, D - 1) : 1;
    while (gcd_u64(a, D) != 1)
        a = a + 1 < D ? a + 1 : 1;
    uint64_t b = strux_rng_below(&r, D);
    for (uint64_t rank = 0; rank < D; rank++)
        v->column[rank] = (int32_t)((rank * a + b) % D);
done:
    strux_free(&p);
    if (st != STRUX_OK) strux_vocab_free(v);
    return st;
}

void strux_vocab_free(strux_vocab *v)
{
    strux_alias_free(&v->popularity);
    strux_free(&v->idf);
    strux_free(&v->column);
}

void strux_plant_draw(strux_rng *r, int32_t lo, int32_t n, int32_t fan, strux_planted *pl)
{
    for (int32_t f = 0; f < fan; f++) {
        int fresh;
        do {
            pl[f].k = lo + (int32_t)strux_rng_below(r, (uint64_t)n);
            fresh = 1;
            for (int32_t g = 0; g < f; g++)
                fresh &= pl[g].k != pl[f].k;
        } while (!fresh);
        pl[f].w = (float)strux_rng_normal(r);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Shell sort (Knuth's gaps 1, 4, 13, ...) for rows of the usual length, which beats qsort's call
 * per comparison; qsort for long rows. */
void strux_sort_keys(uint64_t *a, int64_t n)
{
    if (n > SHELL_SORT_MAX) {
        qsort(a, (size_t)n, sizeof *a, cmp_u64);
        return;
    }
    int64_t h = 1;
    while (h < n / 3)
        h = 3 * h + 1;
    for (; h > 0; h /= 3)
        for (int64_t i = h; i < n; i++) {
            uint64_t v = a[i];
            int64_t j = i;
            for (; j >= h && a[j - h] > v; j -= h)
                a[j] = a[j - h];
            a[j] = v;
        }
}

strux_status strux_gen_check_rows(int64_t n_rows, int64_t first_row)
{
    STRUX_CHECK(n_rows > 0, STRUX_ERR_CONFIG, "gen: rows = %lld; it must be positive",
                (long long)n_rows);
    STRUX_CHECK(first_row >= 0 && first_row <= INT64_MAX - n_rows, STRUX_ERR_CONFIG,
                "gen: row offset = %lld; it must be ≥ 0 and leave room for %lld rows",
                (long long)first_row, (long long)n_rows);
    return STRUX_OK;
}
