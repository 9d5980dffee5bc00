/* strux/comm.h - the distribution layer: the only module that calls MPI (STYLE.md §8). A rank sees
 * an opaque strux_comm; collectives work on dense double/float/int64 buffers and bytes; every collective
 * that follows local, fallible work is preceded by strux_comm_agree so that one rank's failure ends
 * every rank with that rank's message instead of a hang. Time spent inside collectives is counted
 * (the comm_s metric). A binary started without mpirun is a 1-rank job. */
#ifndef STRUX_COMM_H
#define STRUX_COMM_H

#include "strux/core.h"
#include "strux/linalg.h"

typedef struct strux_comm strux_comm;

/* MPI_Init (if needed) and a communicator with MPI_ERRORS_RETURN. Collective. */
strux_status strux_comm_init(int *argc, char ***argv, strux_comm **out);
/* Free the communicator and MPI_Finalize. Collective. */
void strux_comm_finalize(strux_comm **c);
int strux_comm_rank(const strux_comm *c);
/* The stall watchdog (run.stall_timeout): when one MPI call of this rank waits longer than
 * seconds, the process prints which call waited, during which phase, and the ranks that never
 * reached it (the waiting ranks ask every rank; needs MPI_THREAD_MULTIPLE, else only the waiting
 * rank is named), and ends with status 1 (mpirun then ends the job), instead of spinning forever
 * behind a stopped rank. 0 turns it off. Every rank must set the same value: a rank without the
 * watchdog does not answer the others' question. Not Collective. */
void strux_comm_set_stall_timeout(strux_comm *c, double seconds);
/* The run's phase for the watchdog's message ("reading the training data", "set-up", "epoch 5",
 * "the certificate after epoch 5", "the checkpoint write", "writing the model"). For fault
 * injection a process whose environment sets STRUX_FAULT_SIGTERM_AT to a phase raises SIGTERM on
 * itself when it enters that phase (tests/faults/signals.sh). Not Collective. */
void strux_comm_set_phase(strux_comm *c, const char *phase);
int strux_comm_size(const strux_comm *c);
/* The number of ranks on this rank's host (MPI_COMM_TYPE_SHARED). Not Collective. */
strux_status strux_comm_host_size(strux_comm *c, int *out);

/* Error agreement. Collective: every rank passes its local status; all ranks return the status of
 * the lowest failing rank and adopt its message (prefixed "rank K: " when K ≠ own rank and
 * size > 1), or STRUX_OK everywhere. */
strux_status strux_comm_agree(strux_comm *c, strux_status local);

/* In-place sums/maxima over all ranks. Collective. Buffers may exceed INT_MAX elements. */
strux_status strux_comm_allreduce_sum(strux_comm *c, double *buf, int64_t n);
strux_status strux_comm_allreduce_sum_float(strux_comm *c, float *buf, int64_t n);
strux_status strux_comm_allreduce_sum_i64(strux_comm *c, int64_t *buf, int64_t n);
strux_status strux_comm_allreduce_max(strux_comm *c, double *buf, int64_t n);
/* Concatenate every rank's n doubles of buf on every rank, in rank order, into out (room for cap
 * doubles); *n_out = the total. STRUX_ERR_MPI on every rank when the total exceeds cap or one MPI
 * message. Collective. */
strux_status strux_comm_allgather(strux_comm *c, const double *buf, int64_t n, double *out,
                                  int64_t cap, int64_t *n_out);
/* The sum of every rank's sparse parts, added part by part in rank order and, within a rank,
 * in the order given: ((p0 + p1) + p2) + ..., so that the sum is the same doubles however the
 * parts are spread over the ranks (the data blocks of a CoCoA+ round: parts in block order).
 * Every rank's parts reach every rank once (MPI_Allgatherv of their rows, columns and values:
 * 12 bytes an entry and 8 a row), and each rank sums them; with host_leaders only the first
 * rank of each host gets the sum (out empty elsewhere): the ranks of a host gather theirs on it
 * and only the first ranks exchange across hosts (a host that shares one copy of the model).
 * The payload each rank sends is counted in strux_comm_bytes. out and the two work lists belong
 * to the caller and keep their room between calls. STRUX_ERR_MPI when the parts pass 16 GB.
 * Collective. */
strux_status strux_comm_sum_sparse(strux_comm *c, const strux_sparse_rows *parts, int32_t n_parts,
                                   int host_leaders, strux_sparse_rows *out,
                                   strux_sparse_rows work[2]);
/* The largest of every rank's (*value, *index) pair, ties going to the lowest index (MPI_MAXLOC
 * on a double and an int64: M3L's kernel SMO picks its working set so, specs/m3l.md §7.2, A17),
 * into *value and *index on every rank. Collective. */
strux_status strux_comm_allreduce_maxloc(strux_comm *c, double *value, int64_t *index);
/* Broadcast bytes from root. Collective. */
strux_status strux_comm_bcast(strux_comm *c, void *buf, size_t bytes, int root);
/* Concatenate every rank's bytes on root in rank order. On root *out (allocated with strux_alloc,
 * caller frees) holds *n_out bytes; elsewhere *out = NULL. Collective. */
strux_status strux_comm_gather_bytes(strux_comm *c, const void *buf, size_t bytes, int root,
                                     void **out, size_t *n_out);
/* Hand every rank's bytes to sink on rank 0, rank by rank in rank order, holding at most one
 * other rank's bytes at a time (checkpoints of large dual states). After a sink failure rank 0
 * still receives and drops the remaining ranks' bytes, so no rank hangs; the failure is returned
 * on rank 0 (the caller agrees afterwards). Collective. */
typedef strux_status (*strux_bytes_sink)(void *ctx, int rank, const void *data, size_t n);
strux_status strux_comm_collect(strux_comm *c, const void *data, size_t n, strux_bytes_sink sink,
                                void *ctx);
strux_status strux_comm_barrier(strux_comm *c);
/* Bytes this rank has contributed to collectives so far (payload only; 0 at one rank). */
int64_t strux_comm_bytes(const strux_comm *c);
/* Seconds spent in collectives since init (per rank). */
double strux_comm_seconds(const strux_comm *c);

/* ---- shared-memory windows (window.c): one block of memory per host ---- */
typedef struct strux_window strux_window;
struct strux_model_share; /* strux/model.h */
/* bytes shared by the ranks of each host (MPI_Win_allocate_shared on the host communicator):
 * the host's first rank holds them, the others map them; pages are committed when first
 * written. Collective (every rank of the job). */
strux_status strux_window_create(strux_comm *c, size_t bytes, strux_window **out);
/* Collective; accepts NULL. */
void strux_window_destroy(strux_window **w);
/* The block in this process and its size. Not Collective. */
void *strux_window_base(const strux_window *w);
size_t strux_window_size(const strux_window *w);
/* This rank is its host's first: the one that writes the block. Not Collective. */
int strux_window_writer(const strux_window *w);
/* Every rank of the host waits here until the writer's stores before it are visible to all.
 * Collective. */
strux_status strux_window_fence(strux_window *w);
/* At least bytes (the writer's value counts): a larger window with the old contents (the base
 * moves), or nothing when it is large enough. Collective. */
strux_status strux_window_reserve(strux_window *w, size_t bytes);
/* The window as the block a shared model lives in (strux_model_create_shared); the window must
 * outlive the model. */
struct strux_model_share strux_window_model_share(strux_window *w);

#endif
