/* core/rng.c - counter-based random numbers. The key is a hash of (seed, stream, epoch); draw c is
 * the SplitMix64 finaliser of key + c·γ. Keyed by global example index or epoch, never by rank, so
 * a run draws the same numbers at any rank count (ARCHITECTURE.md §5). Not cryptographic. */
#include "strux/core.h"

#include <math.h>

#define GOLDEN_GAMMA 0x9E3779B97F4A7C15ULL

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void strux_rng_init(strux_rng *r, uint64_t seed, uint64_t stream, uint64_t epoch)
{
    uint64_t k = mix64(seed + GOLDEN_GAMMA);
    k = mix64(k ^ (stream + 2 * GOLDEN_GAMMA));
    k = mix64(k ^ (epoch + 3 * GOLDEN_GAMMA));
    r->key = k;
    r->ctr = 0;
}

uint64_t strux_rng_next(strux_rng *r)
{
    r->ctr++;
    return mix64(r->key + r->ctr * GOLDEN_GAMMA);
}

double strux_rng_uniform(strux_rng *r)
{
    return (double)(strux_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t strux_rng_below(strux_rng *r, uint64_t n)
{
    /* Rejection of the top partial bucket keeps the draw unbiased. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = strux_rng_next(r);
    } while (x >= limit);
    return x % n;
}

double strux_rng_normal(strux_rng *r)
{
    double u1 = 1.0 - strux_rng_uniform(r); /* (0, 1]: log is finite */
    double u2 = strux_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void strux_rng_permutation(strux_rng *r, int64_t *perm, int64_t n)
{
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)strux_rng_below(r, (uint64_t)i + 1);
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}
