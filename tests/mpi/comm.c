/* tests/mpi/comm.c - the dist layer under mpirun (run by tests/mpi/comm.sh at -np 1, 2, 4):
 * collectives (allreduce, bcast, gathers, allgather) against closed forms; sparse sums against the same parts added one by one in rank
 * order (bit for bit, for every rank or only the host's first); shared windows (what the writer
 * stores every rank of the host reads, also after growing) and a model held once per host on
 * one; and the error agreement: one rank's failure reaches every rank with that rank's status
 * and message. Rank 0 prints TAP lines for the whole job. */
#include "strux/comm.h"

#include "mpi_check.h"
#include "strux/model.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* strux_comm_collect sink: checks each rank's bytes (rank r sends r + 1 copies of 'a' + r) and
 * counts the ranks seen; fails on purpose at rank fail_at. */
typedef struct collected {
    int seen, good, fail_at;
} collected;

static strux_status collect_sink(void *ctx, int rank, const void *data, size_t n)
{
    collected *k = ctx;
    const char *p = data;
    int good = rank == k->seen && n == (size_t)rank + 1;
    for (size_t j = 0; good && j < n; j++)
        good = p[j] == 'a' + rank;
    k->good += good;
    k->seen++;
    if (rank == k->fail_at)
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__, "sink full at %d", rank);
    return STRUX_OK;
}

/* Part q of rank r: row 0 (every part: its sum depends on the order), row 1 + r and column q;
 * values that do not add associatively. */
static void make_part(int r, int q, strux_sparse_rows *p)
{
    strux_sparse_rows_clear(p);
    int32_t idx[2] = {0, 3 + q};
    double val[2] = {1.0 / (3 + 7 * r + q), 0.1 * (r + 1)};
    assert(strux_sparse_rows_append(p, 0, 2, idx, val, 1.0) == STRUX_OK);
    idx[0] = q;
    assert(strux_sparse_rows_append(p, 1 + r, 1, idx, val, 1e-3) == STRUX_OK);
}

static int same_rows(const strux_sparse_rows *a, const strux_sparse_rows *b)
{
    if (a->n_rows != b->n_rows || a->n != b->n) return 0;
    for (int32_t r = 0; r < a->n_rows; r++)
        if (a->row[r] != b->row[r] || a->ptr[r + 1] != b->ptr[r + 1]) return 0;
    return memcmp(a->col, b->col, (size_t)a->n * sizeof *a->col) == 0 &&
           memcmp(a->val, b->val, (size_t)a->n * sizeof *a->val) == 0;
}

static void test_sparse_sums(strux_comm *c)
{
    int rank = strux_comm_rank(c), size = strux_comm_size(c), on_host = 0;
    strux_sparse_rows mine[4] = {{0}}, want = {0}, part = {0}, tmp = {0}, out = {0},
                      work[2] = {{0}};
    int n_mine = 1 + rank % 3;
    for (int q = 0; q < n_mine; q++)
        make_part(rank, q, &mine[q]);
    for (int r = 0, first = 1; r < size; r++) /* rank order, then each rank's own order */
        for (int q = 0; q < 1 + r % 3; q++, first = 0) {
            make_part(r, q, &part);
            if (first) {
                assert(strux_sparse_rows_add(&part, &tmp, &want) == STRUX_OK);
                continue;
            }
            assert(strux_sparse_rows_add(&want, &part, &tmp) == STRUX_OK);
            strux_sparse_rows t = want;
            want = tmp;
            tmp = t;
        }
    int64_t b0 = strux_comm_bytes(c);
    strux_status st = strux_comm_sum_sparse(c, mine, n_mine, 0, &out, work);
    mpi_check(c, st == STRUX_OK && same_rows(&out, &want),
              "sum_sparse: every rank gets the parts added in rank order, bit for bit");
    mpi_check(c, size == 1 || strux_comm_bytes(c) - b0 >= 12 * (int64_t)(3 * n_mine),
              "sum_sparse: its payload is counted");
    st = strux_comm_sum_sparse(c, mine, n_mine, 1, &out, work);
    strux_comm_host_size(c, &on_host);
    int leader = rank % on_host == 0; /* mpirun fills a host with consecutive ranks */
    mpi_check(c, st == STRUX_OK && (leader ? same_rows(&out, &want) : out.n == 0),
              "sum_sparse to the host's first rank: the same sum there, nothing elsewhere");
    for (int q = 0; q < 4; q++)
        strux_sparse_rows_free(&mine[q]);
    strux_sparse_rows_free(&want);
    strux_sparse_rows_free(&part);
    strux_sparse_rows_free(&tmp);
    strux_sparse_rows_free(&out);
    strux_sparse_rows_free(&work[0]);
    strux_sparse_rows_free(&work[1]);
}

static void test_windows(strux_comm *c)
{
    strux_window *w = NULL;
    strux_status st = strux_window_create(c, 64, &w);
    int writer = st == STRUX_OK && strux_window_writer(w);
    int64_t *b = st == STRUX_OK ? strux_window_base(w) : NULL;
    if (writer) b[0] = 4242;
    if (st == STRUX_OK) st = strux_window_fence(w);
    mpi_check(c, st == STRUX_OK && b[0] == 4242,
              "window: what the host's first rank stores every rank of the host reads");
    size_t big = (size_t)1 << 22;
    if (st == STRUX_OK) st = strux_window_reserve(w, writer ? big : 0);
    b = st == STRUX_OK ? strux_window_base(w) : NULL;
    if (writer) b[big / sizeof *b - 1] = 17;
    if (st == STRUX_OK) st = strux_window_fence(w);
    mpi_check(c, st == STRUX_OK && strux_window_size(w) == big && b[0] == 4242 &&
                     b[big / sizeof *b - 1] == 17,
              "window: a reserve grows it (the writer's size) and keeps its contents");

    /* a sparse model held once per host: the writer's sums, everyone's reads */
    strux_model *m = NULL;
    strux_model_share share = strux_window_model_share(w);
    if (st == STRUX_OK)
        st = strux_model_create_shared(3, 5, 1, (strux_model_kind){STRUX_LAYOUT_SPARSE, 0},
                                       &share, 2, &m);
    strux_sparse_rows d = {0};
    int32_t idx[3] = {0, 2, 4};
    double val[3] = {1.5, -2, 0.25};
    assert(strux_sparse_rows_append(&d, 1, 3, idx, val, 1.0) == STRUX_OK);
    assert(strux_sparse_rows_append(&d, 3, 1, idx, val, 1.0) == STRUX_OK); /* free parameter */
    for (int t = 0; st == STRUX_OK && t < 40; t++) /* 40 merges: the block grows from 64 */
        st = strux_model_shared_add_sparse(m, writer ? &d : &(strux_sparse_rows){0});
    mpi_check(c,
              st == STRUX_OK && strux_model_is_shared(m) && strux_model_get(m, 1, 2) == -80 &&
                  strux_model_get(m, 1, 4) == 10 && strux_model_get(m, 0, 0) == 0 &&
                  strux_model_extra(m)[0] == 60 && strux_model_row_nnz(m, 1) == 3,
              "model.share = host: the writer's sums land once per host, every rank reads them");
    strux_sparse_rows_free(&d);
    strux_model_destroy(&m);
    strux_window_destroy(&w);
}

int main(int argc, char **argv)
{
    strux_comm *c;
    if (strux_comm_init(&argc, &argv, &c) != STRUX_OK) return 1;
    int rank = strux_comm_rank(c), size = strux_comm_size(c);

    double v[3] = {rank, 1.0, -rank * 0.5};
    strux_status st = strux_comm_allreduce_sum(c, v, 3);
    double n = size;
    mpi_check(c, st == STRUX_OK && v[0] == n * (n - 1) / 2 && v[1] == n && v[2] == -n * (n - 1) / 4,
              "allreduce_sum");

    int64_t iv[2] = {rank + 1, (int64_t)1 << 40};
    st = strux_comm_allreduce_sum_i64(c, iv, 2);
    mpi_check(c,
              st == STRUX_OK && iv[0] == (int64_t)size * (size + 1) / 2 &&
                  iv[1] == (int64_t)size << 40,
              "allreduce_sum_i64");

    double mx = rank == size - 1 ? 7.5 : -1;
    st = strux_comm_allreduce_max(c, &mx, 1);
    mpi_check(c, st == STRUX_OK && mx == 7.5, "allreduce_max");

    /* maxloc: the largest value wins; on a tie the lowest index, whichever rank holds it; an
     * index beyond 2^31 survives */
    double val = rank % 2 ? 3.0 : 1.0;
    int64_t at = ((int64_t)1 << 33) + 10 * (size - rank);
    st = strux_comm_allreduce_maxloc(c, &val, &at);
    int64_t winner = size > 1 ? ((int64_t)1 << 33) + 10 * (size - (size % 2 ? size - 2 : size - 1))
                            : ((int64_t)1 << 33) + 10;
    mpi_check(c, st == STRUX_OK && val == (size > 1 ? 3.0 : 1.0) && at == winner,
              "allreduce_maxloc: the largest value, the lowest index among its ties");
    double none = -INFINITY;
    int64_t none_at = rank == 0 ? INT64_MAX : 5 + rank;
    st = strux_comm_allreduce_maxloc(c, &none, &none_at);
    mpi_check(c, st == STRUX_OK && none == -INFINITY && none_at == (size > 1 ? 6 : INT64_MAX),
              "allreduce_maxloc: all equal, the lowest index");

    char word[16] = "";
    if (rank == 0) snprintf(word, sizeof word, "hello");
    st = strux_comm_bcast(c, word, sizeof word, 0);
    mpi_check(c, st == STRUX_OK && strcmp(word, "hello") == 0, "bcast");

    char mine[16];
    snprintf(mine, sizeof mine, "r%d;", rank);
    void *all = NULL;
    size_t n_all = 0;
    st = strux_comm_gather_bytes(c, mine, strlen(mine), 0, &all, &n_all);
    char want[128] = "";
    for (int r = 0; r < size; r++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "r%d;", r);
    int gathered = rank == 0 ? n_all == strlen(want) && memcmp(all, want, n_all) == 0
                             : all == NULL && n_all == 0;
    mpi_check(c, st == STRUX_OK && gathered, "gather_bytes in rank order");
    strux_free(&all);

    /* rank r gives r + 1 doubles 100·r + k; every rank receives them all in rank order */
    double give[8], got[64];
    for (int k = 0; k <= rank && k < 8; k++)
        give[k] = 100.0 * rank + k;
    int64_t n_got = -1;
    st = strux_comm_allgather(c, give, rank < 8 ? rank + 1 : 8, got, 64, &n_got);
    int in_order = st == STRUX_OK && n_got == (int64_t)size * (size + 1) / 2;
    for (int r = 0, o = 0; in_order && r < size; o += r + 1, r++)
        for (int k = 0; k <= r; k++)
            in_order &= got[o + k] == 100.0 * r + k;
    mpi_check(c, in_order, "allgather: every rank's doubles on every rank in rank order");
    st = strux_comm_allgather(c, give, rank < 8 ? rank + 1 : 8, got, 1, &n_got);
    mpi_check(c, size == 1 ? st == STRUX_OK : st == STRUX_ERR_MPI,
              "allgather: a total beyond the buffer is refused on every rank, no rank hangs");

    char bytes[64];
    memset(bytes, 'a' + rank, sizeof bytes);
    collected k = {0, 0, -1};
    st = strux_comm_collect(c, bytes, (size_t)rank + 1, collect_sink, &k);
    mpi_check(c, st == STRUX_OK && (rank != 0 || (k.seen == size && k.good == size)),
              "collect hands every rank's bytes to rank 0 in rank order");
    k = (collected){0, 0, 0};
    st = strux_comm_collect(c, bytes, (size_t)rank + 1, collect_sink, &k);
    mpi_check(c, rank == 0 ? st == STRUX_ERR_IO && k.seen == 1 : st == STRUX_OK,
              "collect: a sink failure on rank 0 is returned there and no rank hangs");
    st = strux_comm_agree(c, st);
    mpi_check(c, st == STRUX_ERR_IO, "collect: the sink failure reaches every rank by agreement");

    test_sparse_sums(c);
    test_windows(c);

    st = strux_comm_agree(c, STRUX_OK);
    mpi_check(c, st == STRUX_OK, "agree: all succeed");

    /* the last rank fails; every rank must return its status and message */
    strux_status local = STRUX_OK;
    if (rank == size - 1)
        local = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                "data.svm:3: boom on rank %d", rank);
    st = strux_comm_agree(c, local);
    char expect[128];
    if (rank == size - 1 || size == 1)
        snprintf(expect, sizeof expect, "data.svm:3: boom on rank %d", size - 1);
    else
        snprintf(expect, sizeof expect, "rank %d: data.svm:3: boom on rank %d", size - 1, size - 1);
    mpi_check(c, st == STRUX_ERR_INPUT && strcmp(strux_error_message(), expect) == 0,
              "agree: one rank's failure reaches every rank");

    /* two ranks fail: the lowest failing rank wins */
    local = STRUX_OK;
    if (rank >= size / 2)
        local = strux_error_set(rank == size / 2 ? STRUX_ERR_IO : STRUX_ERR_NUMERIC, __FILE__,
                                __LINE__, __func__, "failure %d", rank);
    st = strux_comm_agree(c, local);
    mpi_check(c, st == STRUX_ERR_IO && strstr(strux_error_message(), "failure"),
              "agree: lowest failing rank wins");
    mpi_check(c, strux_comm_seconds(c) >= 0, "communication time is counted");
    strux_comm_finalize(&c);
    return 0;
}
