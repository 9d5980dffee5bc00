/* tests/mpi/comm.c - the dist layer under mpirun (run by tests/mpi/comm.sh at -np 1, 2, 4):
 * collectives against closed forms, and the error agreement: one rank's failure reaches every
 * rank with that rank's status and message. Rank 0 prints TAP lines for the whole job. */
#include "strux/comm.h"

#include "mpi_check.h"

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
