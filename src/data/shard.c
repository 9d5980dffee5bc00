/* data/shard.c - the partition of examples over ranks: contiguous ranges balanced by a weight
 * (non-zeros + 1 per example), identical on every rank for the same input (ARCHITECTURE.md §4). */
#include "strux/data.h"

/* First unit u with prefix[u] >= target (binary search on the non-decreasing prefix). */
static int64_t lower_bound(const int64_t *prefix, int64_t n, double target)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((double)prefix[mid] < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Start of rank r's range: the balanced cut, moved so that every rank keeps at least one unit;
 * computed rank by rank so cuts strictly increase. */
static int64_t cut(const int64_t *prefix, int64_t n, int r, int n_ranks)
{
    int64_t c = 0;
    for (int q = 1; q <= r; q++) {
        if (q == n_ranks) return n;
        int64_t b = lower_bound(prefix, n, (double)prefix[n] * q / n_ranks);
        if (b < c + 1) b = c + 1;
        if (b > n - (n_ranks - q)) b = n - (n_ranks - q);
        c = b;
    }
    return c;
}

strux_status strux_shard_range(const int64_t *prefix, int64_t n, int rank, int n_ranks, int64_t *lo,
                               int64_t *hi)
{
    STRUX_CHECK(n_ranks > 0 && rank >= 0 && rank < n_ranks, STRUX_ERR_INTERNAL, "rank %d of %d",
                rank, n_ranks);
    STRUX_CHECK(n >= n_ranks, STRUX_ERR_INPUT, "%lld examples cannot be shared by %d ranks",
                (long long)n, n_ranks);
    *lo = cut(prefix, n, rank, n_ranks);
    *hi = cut(prefix, n, rank + 1, n_ranks);
    return STRUX_OK;
}

strux_status strux_shard_plan(const int64_t *prefix, int64_t n, const strux_read_options *opt,
                              strux_shard *out)
{
    *out = (strux_shard){0};
    int32_t B = opt->n_blocks > 0 ? opt->n_blocks : opt->n_ranks;
    STRUX_CHECK(B >= opt->n_ranks, STRUX_ERR_CONFIG,
                "solver.blocks = %d data blocks cannot be shared by %d ranks: each rank needs at "
                "least one block",
                B, opt->n_ranks);
    STRUX_CHECK(n >= B, STRUX_ERR_INPUT, "%lld examples cannot be cut into %d data blocks%s",
                (long long)n, B, opt->n_blocks > 0 ? " (solver.blocks)" : " (one per rank)");
    STRUX_TRY(strux_alloc_array(&out->block_ptr, (size_t)B + 1, sizeof *out->block_ptr));
    for (int32_t b = 0; b <= B; b++)
        out->block_ptr[b] = cut(prefix, n, b, B);
    out->n_blocks = B;
    out->block_lo = (int32_t)((int64_t)opt->rank * B / opt->n_ranks);
    out->block_hi = (int32_t)((int64_t)(opt->rank + 1) * B / opt->n_ranks);
    out->lo = out->block_ptr[out->block_lo];
    out->hi = out->block_ptr[out->block_hi];
    return STRUX_OK;
}

void strux_shard_free(strux_shard *s)
{
    strux_free(&s->block_ptr);
}

void strux_dataset_set_shard(strux_dataset *ds, strux_shard *s)
{
    strux_free(&ds->block_ptr);
    ds->block_ptr = s->block_ptr;
    ds->n_blocks = s->n_blocks;
    ds->block_lo = s->block_lo;
    ds->block_hi = s->block_hi;
    s->block_ptr = NULL;
}
