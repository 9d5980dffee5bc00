/* dist/dist_impl.h - private to src/dist: the communicator's layout and the MPI call wrapper
 * shared by comm.c (collectives, error agreement, watchdog) and window.c (shared-memory
 * windows). Every MPI call goes through MPI_TRY, which marks it for the stall watchdog and turns
 * a failure into STRUX_ERR_MPI with MPI_Error_string. */
#ifndef STRUX_DIST_IMPL_H
#define STRUX_DIST_IMPL_H

#include "strux/comm.h"

#include <mpi.h>

struct strux_comm {
    MPI_Comm comm; /* duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN */
    int rank, size;
    MPI_Comm host;    /* the ranks of this host (MPI_COMM_TYPE_SHARED), MPI_ERRORS_RETURN */
    int host_rank, host_size;
    MPI_Comm leaders; /* the first rank of every host (MPI_COMM_NULL elsewhere) */
    int we_initialised; /* MPI_Init was called here, so finalize calls MPI_Finalize */
    double seconds;     /* time inside collectives */
    int64_t bytes;      /* bytes this rank contributed to collectives (0 at one rank) */
    int64_t *gather_n;  /* size: per-rank counts of strux_comm_allgather (allocated at first use) */
    int *gather_counts, *gather_displs; /* size: the same as MPI ints */
    MPI_Datatype loc_type; /* a (double value, int64 index) pair: strux_comm_allreduce_maxloc */
    MPI_Op loc_max;        /* its maximum, ties to the lowest index */
};

/* STRUX_ERR_MPI naming the call and MPI_Error_string(rc). */
strux_status strux_dist_mpi_error(int rc, const char *what, const char *file, int line,
                                  const char *func);
/* Around every MPI call: the watchdog measures from enter to leave; collectives are counted. */
void strux_dist_watch_enter(const char *what, int collective);
void strux_dist_watch_leave(void);
#define watch_enter(what) strux_dist_watch_enter(what, 1)
#define watch_leave() strux_dist_watch_leave()

#define MPI_TRY_CALL(call, collective)                                                             \
    do {                                                                                           \
        strux_dist_watch_enter(#call, collective);                                                 \
        int rc_ = (call);                                                                          \
        strux_dist_watch_leave();                                                                  \
        if (rc_ != MPI_SUCCESS)                                                                    \
            return strux_dist_mpi_error(rc_, #call, __FILE__, __LINE__, __func__);                 \
    } while (0)
#define MPI_TRY(call) MPI_TRY_CALL(call, 1)
#define MPI_TRY_P2P(call) MPI_TRY_CALL(call, 0) /* not a collective: not counted */

#endif
