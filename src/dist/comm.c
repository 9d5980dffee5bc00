/* dist/comm.c - MPI communicator, collectives and the error agreement (ARCHITECTURE.md §3 Comm,
 * STYLE.md §8). Every MPI call goes through MPI_TRY, which turns a failure into STRUX_ERR_MPI with
 * MPI_Error_string, and marks the time it entered the call for the stall watchdog: a thread that
 * ends the process when one MPI call has waited longer than run.stall_timeout (a rank stopped,
 * killed or hung), naming the call, the run's phase and the ranks that never reached the
 * collective; mpirun then ends the job. To name those ranks the watchdog threads of the waiting
 * ranks ask every rank, over a communicator of their own with non-blocking point-to-point calls,
 * whether it waits in a collective: a rank that does not answer within a grace period (stopped,
 * killed, hung) or answers from outside MPI (running) is the one missing. That needs
 * MPI_THREAD_MULTIPLE (asked for at MPI_Init_thread); without it the message names only the
 * waiting rank. The watchdog _exit()s (below src/cli only it and io/h5.c's reading child do),
 * because a blocked collective cannot return. */
#include "strux/comm.h"

#include "dist_impl.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The watchdog's view of this process (one communicator per process). */
static struct {
    _Atomic double since;     /* when the current MPI call began, 0 outside MPI calls */
    _Atomic double timeout;   /* seconds (0: off) */
    const char *_Atomic what; /* the call, as written in the source */
    atomic_long seq;          /* collectives entered so far (point-to-point calls not counted) */
    char phase[2][128];       /* the run's phase, double-buffered for the watchdog's reads */
    atomic_int phase_at;      /* which buffer is current */
    int rank, size;
    int started;
    const char *fault_phase; /* $STRUX_FAULT_SIGTERM_AT: raise SIGTERM on entering this phase */
    /* the inquiry (MPI_THREAD_MULTIPLE only): the watchdog threads of the ranks answer each other
     * on a communicator of their own; lock serialises their MPI calls with finalize */
    int can_ask; /* MPI_THREAD_MULTIPLE, more than one rank, comm made */
    int closed;  /* finalize has freed comm: no more MPI calls here */
    pthread_mutex_t lock;
    MPI_Comm comm;               /* duplicate of the run's communicator, for the watchdogs only */
    MPI_Request ask_req;         /* the posted receive of another rank's question */
    int ask_in;                  /* its buffer */
    struct stall_state *replies; /* one answer buffer per rank */
    MPI_Request *sent;           /* the answer in flight to each rank */
} watch = {.lock = PTHREAD_MUTEX_INITIALIZER, .comm = MPI_COMM_NULL, .ask_req = MPI_REQUEST_NULL};

#define TAG_ASK 1    /* "are you waiting in a collective?" */
#define TAG_ANSWER 2 /* a stall_state */

/* What a rank answers: whether it is inside an MPI call, which, since when, in which phase. */
typedef struct stall_state {
    int answered; /* set by the receiver */
    int in_mpi;
    long seq;
    double waited;
    char what[48];
    char phase[128];
} stall_state;

static void stall_state_now(stall_state *s)
{
    double since = atomic_load(&watch.since);
    const char *what = atomic_load(&watch.what);
    memset(s, 0, sizeof *s);
    s->in_mpi = since > 0;
    s->seq = atomic_load(&watch.seq);
    s->waited = since > 0 ? strux_time_now() - since : 0;
    snprintf(s->what, sizeof s->what, "%.*s", what ? (int)strcspn(what, "(") : 0, what ? what : "");
    snprintf(s->phase, sizeof s->phase, "%s", watch.phase[atomic_load(&watch.phase_at)]);
}

/* Answer every question that has arrived (watchdog thread, lock held). The answer buffer of a
 * peer is reused only after the previous send to it completed. */
static void answer_questions(void)
{
    for (;;) {
        int flag = 0;
        MPI_Status status;
        if (MPI_Test(&watch.ask_req, &flag, &status) != MPI_SUCCESS || !flag) return;
        int from = status.MPI_SOURCE;
        if (from >= 0 && from < watch.size && from != watch.rank) {
            stall_state *s = &watch.replies[from];
            if (watch.sent[from] != MPI_REQUEST_NULL)
                MPI_Wait(&watch.sent[from], MPI_STATUS_IGNORE);
            stall_state_now(s);
            MPI_Isend(s, (int)sizeof *s, MPI_BYTE, from, TAG_ANSWER, watch.comm, &watch.sent[from]);
        }
        MPI_Irecv(&watch.ask_in, 1, MPI_INT, MPI_ANY_SOURCE, TAG_ASK, watch.comm, &watch.ask_req);
    }
}

/* "1, 3 and 4" of the ranks r with pick[r] set into buf; the count. */
static int rank_list(const int *pick, char *buf, size_t n)
{
    int count = 0, total = 0;
    for (int r = 0; r < watch.size; r++)
        total += pick[r] != 0;
    size_t len = 0;
    buf[0] = '\0';
    for (int r = 0; r < watch.size && len < n; r++) {
        if (!pick[r]) continue;
        count++;
        len += (size_t)snprintf(buf + len, n - len, "%s%d",
                                count == 1       ? ""
                                : count == total ? " and "
                                                 : ", ",
                                r);
    }
    return count;
}

/* The stall of this rank's call: ask every other rank whether it waits in a collective too, for
 * a grace period, then name the ranks that did not answer (stopped, killed, hung) and those that
 * answered from outside MPI (running: they never reached the collective). The lowest waiting rank
 * prints the verdict and ends the job; the others give it a grace period more to do so, then do
 * it themselves (mpirun normally ends them first). Watchdog thread, lock held. */
static void inquire(const stall_state *me, double timeout)
{
    const double grace = timeout / 2 < 3 ? 3 : timeout / 2 > 10 ? 10 : timeout / 2;
    int size = watch.size, question = (int)me->seq;
    MPI_Request *req = calloc((size_t)size, sizeof *req);
    stall_state *got = calloc((size_t)size, sizeof *got);
    int *missing = calloc((size_t)size, sizeof *missing),
        *busy = calloc((size_t)size, sizeof *busy),
        *waiting = calloc((size_t)size, sizeof *waiting);
    if (!req || !got || !missing || !busy || !waiting)
        return; /* the caller prints the short form */
    for (int r = 0; r < size; r++) {
        req[r] = MPI_REQUEST_NULL;
        if (r == watch.rank) continue;
        MPI_Request q;
        MPI_Isend(&question, 1, MPI_INT, r, TAG_ASK, watch.comm, &q);
        MPI_Request_free(&q);
        MPI_Irecv(&got[r], (int)sizeof got[r], MPI_BYTE, r, TAG_ANSWER, watch.comm, &req[r]);
    }
    double end = strux_time_now() + grace;
    int pending = size - 1;
    while (pending > 0 && strux_time_now() < end) {
        answer_questions();
        for (int r = 0; r < size; r++) {
            int flag = 0;
            if (req[r] == MPI_REQUEST_NULL) continue;
            if (MPI_Test(&req[r], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
                got[r].answered = 1;
                pending--;
            }
        }
        struct timespec tick = {0, 20 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    int lowest_waiting = watch.rank;
    for (int r = 0; r < size; r++) {
        if (r == watch.rank) continue;
        if (!got[r].answered)
            missing[r] = 1;
        else if (!got[r].in_mpi)
            busy[r] = 1;
        else {
            waiting[r] = 1;
            if (r < lowest_waiting) lowest_waiting = r;
        }
    }
    if (lowest_waiting != watch.rank) { /* that rank speaks for the job */
        double until = strux_time_now() + grace + 2;
        while (strux_time_now() < until) {
            answer_questions();
            struct timespec tick = {0, 50 * 1000 * 1000};
            nanosleep(&tick, NULL);
        }
    }
    char msg[4096], list[1024];
    size_t len = (size_t)snprintf(
        msg, sizeof msg,
        "strux: rank %d: %s (collective #%ld) has waited %.0f s (run.stall_timeout = %g s) "
        "during %s.",
        watch.rank, me->what, me->seq, me->waited, timeout, me->phase);
    int n = rank_list(missing, list, sizeof list);
    if (n && len < sizeof msg)
        len += (size_t)snprintf(msg + len, sizeof msg - len,
                                " %s %s never reached it: no answer within %.0f s (stopped, "
                                "killed or hung).",
                                n == 1 ? "Rank" : "Ranks", list, grace);
    for (int r = 0; r < size && len < sizeof msg; r++)
        if (busy[r])
            len += (size_t)snprintf(msg + len, sizeof msg - len,
                                    " Rank %d never reached it: it runs outside MPI, during %s "
                                    "(a hang or a long loop there).",
                                    r, got[r].phase);
    n = rank_list(waiting, list, sizeof list);
    int same = 1;
    for (int r = 0; r < size; r++)
        if (waiting[r] && got[r].seq != me->seq) same = 0;
    if (n && same && len < sizeof msg)
        len +=
            (size_t)snprintf(msg + len, sizeof msg - len, " %s %s %s in collective #%ld too.",
                             n == 1 ? "Rank" : "Ranks", list, n == 1 ? "waits" : "wait", me->seq);
    for (int r = 0; r < size && !same && len < sizeof msg; r++)
        if (waiting[r])
            len += (size_t)snprintf(msg + len, sizeof msg - len,
                                    " Rank %d waits in %s (collective #%ld) during %s.", r,
                                    got[r].what, got[r].seq, got[r].phase);
    if (len < sizeof msg) snprintf(msg + len, sizeof msg - len, " Ending the job.\n");
    fputs(msg, stderr);
    fflush(stderr);
    _exit(1);
}

static void *watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec tick = {0, 200 * 1000 * 1000};
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&watch.lock);
        int ask = watch.can_ask && !watch.closed;
        if (ask) answer_questions();
        double since = atomic_load(&watch.since), timeout = atomic_load(&watch.timeout);
        if (!(since > 0 && timeout > 0 && strux_time_now() - since > timeout)) {
            pthread_mutex_unlock(&watch.lock);
            continue;
        }
        stall_state me;
        stall_state_now(&me);
        if (ask) inquire(&me, timeout); /* does not return unless out of memory */
        fprintf(stderr,
                "strux: rank %d: %s has waited %.0f s for another rank (run.stall_timeout = "
                "%g s) during %s: a rank stopped answering (stopped, killed or hung; %s); "
                "ending the job\n",
                watch.rank, me.what, me.waited, timeout, me.phase,
                watch.size < 2 ? "one rank"
                               : "which one is not known: MPI runs without "
                                 "MPI_THREAD_MULTIPLE, so the ranks cannot be asked");
        fflush(stderr);
        _exit(1);
    }
    return NULL;
}

void strux_comm_set_stall_timeout(strux_comm *c, double seconds)
{
    (void)c;
    atomic_store(&watch.timeout, seconds);
    if (seconds <= 0 || watch.started) return;
    pthread_mutex_lock(&watch.lock);
    if (watch.can_ask && !watch.closed &&
        MPI_Irecv(&watch.ask_in, 1, MPI_INT, MPI_ANY_SOURCE, TAG_ASK, watch.comm, &watch.ask_req) !=
            MPI_SUCCESS)
        watch.can_ask = 0;
    pthread_mutex_unlock(&watch.lock);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    watch.started = pthread_create(&t, &attr, watchdog, NULL) == 0;
    pthread_attr_destroy(&attr);
}

void strux_comm_set_phase(strux_comm *c, const char *phase)
{
    (void)c;
    if (watch.fault_phase && strcmp(watch.fault_phase, phase) == 0) raise(SIGTERM);
    int next = 1 - atomic_load(&watch.phase_at);
    snprintf(watch.phase[next], sizeof watch.phase[next], "%s", phase);
    atomic_store(&watch.phase_at, next);
}

/* A value and its index, reduced by maxloc_op. */
typedef struct value_loc {
    double v;
    int64_t i;
} value_loc;

/* MPI_MAXLOC on (double, int64) pairs: the larger value, the lower index on ties. */
static void maxloc_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const value_loc *a = in;
    value_loc *b = inout;
    for (int k = 0; k < *len; k++)
        if (a[k].v > b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i)) b[k] = a[k];
}

strux_status strux_dist_mpi_error(int rc, const char *what, const char *file, int line,
                                  const char *func)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return strux_error_set(STRUX_ERR_MPI, file, line, func, "%s failed: %s", what, text);
}

void strux_dist_watch_enter(const char *what, int collective)
{
    if (collective) atomic_fetch_add(&watch.seq, 1);
    atomic_store(&watch.what, what);
    atomic_store(&watch.since, strux_time_now());
}

void strux_dist_watch_leave(void)
{
    atomic_store(&watch.since, 0.0);
}

/* Element count per MPI call: MPI counts are int. */
#define CHUNK ((int64_t)1 << 28)

strux_status strux_comm_init(int *argc, char ***argv, strux_comm **out)
{
    int inited = 0, provided = MPI_THREAD_SINGLE;
    MPI_TRY(MPI_Initialized(&inited));
    /* MPI_THREAD_MULTIPLE: the watchdog thread asks the other ranks while this one waits */
    if (!inited)
        MPI_TRY(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    else
        MPI_TRY(MPI_Query_thread(&provided));
    strux_comm *c;
    STRUX_TRY(strux_alloc(&c, sizeof *c));
    c->we_initialised = !inited;
    MPI_TRY(MPI_Comm_dup(MPI_COMM_WORLD, &c->comm));
    MPI_TRY(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN));
    MPI_TRY(MPI_Comm_rank(c->comm, &c->rank));
    watch.rank = c->rank;
    watch.fault_phase = getenv("STRUX_FAULT_SIGTERM_AT"); /* fault injection (tests/faults) */
    strux_comm_set_phase(c, "start-up");
    MPI_TRY(MPI_Comm_size(c->comm, &c->size));
    MPI_TRY(MPI_Type_contiguous((int)sizeof(value_loc), MPI_BYTE, &c->loc_type));
    MPI_TRY(MPI_Type_commit(&c->loc_type));
    MPI_TRY(MPI_Op_create(maxloc_op, 1, &c->loc_max));
    watch.size = c->size;
    /* the ranks of this host, and the first rank of every host (shared windows, their sums) */
    MPI_TRY(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &c->host));
    MPI_TRY(MPI_Comm_set_errhandler(c->host, MPI_ERRORS_RETURN));
    MPI_TRY(MPI_Comm_rank(c->host, &c->host_rank));
    MPI_TRY(MPI_Comm_size(c->host, &c->host_size));
    MPI_TRY(MPI_Comm_split(c->comm, c->host_rank == 0 ? 0 : MPI_UNDEFINED, c->rank, &c->leaders));
    if (c->leaders != MPI_COMM_NULL) MPI_TRY(MPI_Comm_set_errhandler(c->leaders, MPI_ERRORS_RETURN));
    MPI_TRY(MPI_Comm_dup(c->comm, &watch.comm)); /* on every rank: a collective call */
    watch.replies = calloc((size_t)c->size, sizeof *watch.replies);
    watch.sent = calloc((size_t)c->size, sizeof *watch.sent);
    for (int r = 0; watch.sent && r < c->size; r++)
        watch.sent[r] = MPI_REQUEST_NULL;
    watch.can_ask = provided == MPI_THREAD_MULTIPLE && c->size > 1 && watch.replies && watch.sent;
    *out = c;
    return STRUX_OK;
}

void strux_comm_finalize(strux_comm **c)
{
    if (!*c) return;
    pthread_mutex_lock(&watch.lock); /* the watchdog makes no MPI call from here on */
    watch.closed = 1;
    if (watch.ask_req != MPI_REQUEST_NULL) {
        MPI_Cancel(&watch.ask_req);
        MPI_Wait(&watch.ask_req, MPI_STATUS_IGNORE);
    }
    for (int r = 0; watch.sent && r < watch.size; r++)
        if (watch.sent[r] != MPI_REQUEST_NULL) MPI_Wait(&watch.sent[r], MPI_STATUS_IGNORE);
    if (watch.comm != MPI_COMM_NULL) MPI_Comm_free(&watch.comm);
    pthread_mutex_unlock(&watch.lock);
    if ((*c)->leaders != MPI_COMM_NULL) MPI_Comm_free(&(*c)->leaders);
    MPI_Comm_free(&(*c)->host);
    MPI_Op_free(&(*c)->loc_max);
    MPI_Type_free(&(*c)->loc_type);
    MPI_Comm_free(&(*c)->comm);
    strux_free(&(*c)->gather_n);
    strux_free(&(*c)->gather_counts);
    strux_free(&(*c)->gather_displs);
    int we = (*c)->we_initialised;
    strux_free(c);
    if (we) MPI_Finalize();
}

int strux_comm_rank(const strux_comm *c)
{
    return c->rank;
}

int strux_comm_size(const strux_comm *c)
{
    return c->size;
}

int64_t strux_comm_bytes(const strux_comm *c)
{
    return c->bytes;
}

double strux_comm_seconds(const strux_comm *c)
{
    return c->seconds;
}

strux_status strux_comm_agree(strux_comm *c, strux_status local)
{
    double t0 = strux_time_now();
    int mine = local == STRUX_OK ? c->size : c->rank, first;
    MPI_TRY(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c->comm));
    if (first == c->size) {
        c->seconds += strux_time_now() - t0;
        return STRUX_OK;
    }
    /* the failing rank sends its status and message */
    char msg[2048];
    int code = (int)local;
    if (c->rank == first) snprintf(msg, sizeof msg, "%s", strux_error_message());
    MPI_TRY(MPI_Bcast(&code, 1, MPI_INT, first, c->comm));
    MPI_TRY(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, c->comm));
    msg[sizeof msg - 1] = '\0';
    if (c->rank != first) {
        char prefixed[2100];
        if (c->size > 1)
            snprintf(prefixed, sizeof prefixed, "rank %d: %s", first, msg);
        else
            snprintf(prefixed, sizeof prefixed, "%s", msg);
        strux_error_adopt(prefixed);
    }
    c->seconds += strux_time_now() - t0;
    return (strux_status)code;
}

static strux_status allreduce(strux_comm *c, void *buf, int64_t n, MPI_Datatype type, size_t esz,
                              MPI_Op op)
{
    double t0 = strux_time_now();
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t k = n - o < CHUNK ? n - o : CHUNK;
        MPI_TRY(
            MPI_Allreduce(MPI_IN_PLACE, (char *)buf + o * (int64_t)esz, (int)k, type, op, c->comm));
    }
    c->seconds += strux_time_now() - t0;
    if (c->size > 1) c->bytes += n * (int64_t)esz;
    return STRUX_OK;
}

strux_status strux_comm_allreduce_sum(strux_comm *c, double *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_DOUBLE, sizeof *buf, MPI_SUM);
}

strux_status strux_comm_allreduce_sum_float(strux_comm *c, float *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_FLOAT, sizeof *buf, MPI_SUM);
}

strux_status strux_comm_allreduce_sum_i64(strux_comm *c, int64_t *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_INT64_T, sizeof *buf, MPI_SUM);
}

strux_status strux_comm_allreduce_max(strux_comm *c, double *buf, int64_t n)
{
    return allreduce(c, buf, n, MPI_DOUBLE, sizeof *buf, MPI_MAX);
}

strux_status strux_comm_allreduce_maxloc(strux_comm *c, double *value, int64_t *index)
{
    if (c->size == 1) return STRUX_OK;
    value_loc pair = {*value, *index};
    double t0 = strux_time_now();
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &pair, 1, c->loc_type, c->loc_max, c->comm));
    c->seconds += strux_time_now() - t0;
    c->bytes += (int64_t)sizeof pair;
    *value = pair.v;
    *index = pair.i;
    return STRUX_OK;
}

strux_status strux_comm_bcast(strux_comm *c, void *buf, size_t bytes, int root)
{
    double t0 = strux_time_now();
    for (size_t o = 0; o < bytes; o += (size_t)CHUNK) {
        size_t k = bytes - o < (size_t)CHUNK ? bytes - o : (size_t)CHUNK;
        MPI_TRY(MPI_Bcast((char *)buf + o, (int)k, MPI_BYTE, root, c->comm));
    }
    c->seconds += strux_time_now() - t0;
    if (c->size > 1 && c->rank == root) c->bytes += (int64_t)bytes;
    return STRUX_OK;
}

strux_status strux_comm_gather_bytes(strux_comm *c, const void *buf, size_t bytes, int root,
                                     void **out, size_t *n_out)
{
    double t0 = strux_time_now();
    *out = NULL;
    *n_out = 0;
    STRUX_CHECK(bytes <= INT_MAX, STRUX_ERR_MPI, "gather of %zu bytes exceeds one MPI message",
                bytes);
    int mine = (int)bytes;
    int *counts = NULL, *displs = NULL;
    if (c->rank == root) {
        STRUX_TRY(strux_alloc_array(&counts, (size_t)c->size, sizeof *counts));
        STRUX_TRY(strux_alloc_array(&displs, (size_t)c->size, sizeof *displs));
    }
    watch_enter("MPI_Gather (byte counts)");
    int rc = MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, root, c->comm);
    watch_leave();
    strux_status st = STRUX_OK;
    if (rc != MPI_SUCCESS) st = strux_dist_mpi_error(rc, "MPI_Gather", __FILE__, __LINE__, __func__);
    size_t total = 0;
    if (st == STRUX_OK && c->rank == root) {
        for (int r = 0; r < c->size; r++) {
            displs[r] = (int)total;
            total += (size_t)counts[r];
        }
        if (total > INT_MAX)
            st = strux_error_set(STRUX_ERR_MPI, __FILE__, __LINE__, __func__,
                                 "gather of %zu bytes exceeds one MPI message", total);
        else
            st = strux_alloc(out, total);
    }
    /* every rank enters the Gatherv; after a root-side failure the root receives nothing and its
     * status reaches the others at the caller's next strux_comm_agree */
    if (st != STRUX_OK && counts)
        for (int r = 0; r < c->size; r++)
            counts[r] = displs[r] = 0;
    char dummy = 0;
    watch_enter("MPI_Gatherv (bytes)");
    rc = MPI_Gatherv(bytes ? buf : &dummy, mine, MPI_BYTE, st == STRUX_OK ? *out : NULL, counts,
                     displs, MPI_BYTE, root, c->comm);
    watch_leave();
    if (st == STRUX_OK && rc != MPI_SUCCESS)
        st = strux_dist_mpi_error(rc, "MPI_Gatherv", __FILE__, __LINE__, __func__);
    strux_free(&counts);
    strux_free(&displs);
    if (st != STRUX_OK) strux_free(out);
    *n_out = st == STRUX_OK && c->rank == root ? total : 0;
    c->seconds += strux_time_now() - t0;
    return st;
}

strux_status strux_comm_allgather(strux_comm *c, const double *buf, int64_t n, double *out,
                                  int64_t cap, int64_t *n_out)
{
    double t0 = strux_time_now();
    if (!c->gather_n) {
        STRUX_TRY(strux_alloc_array(&c->gather_n, (size_t)c->size, sizeof *c->gather_n));
        STRUX_TRY(strux_alloc_array(&c->gather_counts, (size_t)c->size, sizeof(int)));
        STRUX_TRY(strux_alloc_array(&c->gather_displs, (size_t)c->size, sizeof(int)));
    }
    MPI_TRY(MPI_Allgather(&n, 1, MPI_INT64_T, c->gather_n, 1, MPI_INT64_T, c->comm));
    int64_t total = 0;
    for (int r = 0; r < c->size; r++) {
        c->gather_displs[r] = (int)(total < INT_MAX ? total : 0);
        c->gather_counts[r] = (int)(c->gather_n[r] < INT_MAX ? c->gather_n[r] : 0);
        total += c->gather_n[r];
    }
    /* every rank sees the same counts, so all refuse together (no rank waits in the Allgatherv) */
    STRUX_CHECK(total <= cap && total <= INT_MAX, STRUX_ERR_MPI,
                "allgather of %lld doubles exceeds its buffer (%lld) or one MPI message",
                (long long)total, (long long)cap);
    MPI_TRY(MPI_Allgatherv(buf, (int)n, MPI_DOUBLE, out, c->gather_counts, c->gather_displs,
                           MPI_DOUBLE, c->comm));
    *n_out = total;
    c->seconds += strux_time_now() - t0;
    if (c->size > 1) c->bytes += n * (int64_t)sizeof *buf;
    return STRUX_OK;
}

/* ---- sparse sums (strux_comm_sum_sparse) ---- */

/* The wire form of one part: n_rows (int64), n (int64), then per row its id and entry count
 * (int32 each), the n columns (int32) and the n values (double). A rank's parts follow a header
 * of its rank, its part count and its length in 8-byte words (int64 each), padded to whole
 * words (the unit of the gathers). */
static size_t part_bytes(const strux_sparse_rows *p)
{
    return 16 + (size_t)p->n_rows * 8 + (size_t)p->n * 12;
}

static char *put_bytes(char *at, const void *src, size_t n)
{
    memcpy(at, src, n);
    return at + n;
}

static char *encode_part(char *at, const strux_sparse_rows *p)
{
    int64_t head[2] = {p->n_rows, p->n};
    at = put_bytes(at, head, sizeof head);
    for (int32_t r = 0; r < p->n_rows; r++) {
        int32_t rc[2] = {p->row[r], (int32_t)(p->ptr[r + 1] - p->ptr[r])};
        at = put_bytes(at, rc, sizeof rc);
    }
    at = put_bytes(at, p->col, (size_t)p->n * sizeof *p->col);
    return put_bytes(at, p->val, (size_t)p->n * sizeof *p->val);
}

/* One part from the wire into p (its room grown); the position after it, or NULL when the
 * bytes end early or do not parse (*st says why when it is not the bytes). */
static const char *decode_part(const char *at, const char *end, strux_sparse_rows *p,
                               strux_status *st)
{
    int64_t head[2];
    *st = STRUX_OK;
    if (end - at < 16) return NULL;
    memcpy(head, at, sizeof head);
    at += 16;
    if (head[0] < 0 || head[1] < 0 || head[0] > INT32_MAX || (end - at) / 12 < head[1] ||
        (end - at - head[1] * 12) / 8 < head[0])
        return NULL;
    strux_sparse_rows_clear(p);
    *st = strux_sparse_rows_reserve(p, (int32_t)head[0], head[1]);
    if (*st != STRUX_OK) return NULL;
    int64_t n = 0;
    for (int32_t r = 0; r < (int32_t)head[0]; r++) {
        int32_t rc[2];
        memcpy(rc, at, sizeof rc);
        at += sizeof rc;
        p->row[r] = rc[0];
        p->ptr[r] = n;
        n += rc[1];
    }
    if (n != head[1]) return NULL;
    p->ptr[head[0]] = n;
    p->n_rows = (int32_t)head[0];
    p->n = n;
    memcpy(p->col, at, (size_t)n * sizeof *p->col);
    at += (size_t)n * sizeof *p->col;
    memcpy(p->val, at, (size_t)n * sizeof *p->val);
    return at + (size_t)n * sizeof *p->val;
}

#define WORD 8 /* bytes per unit of the sparse gathers (MPI_UINT64_T) */

/* Concatenate every member's words of comm in member order (Gatherv to member 0 when gather, else
 * Allgatherv): *all (allocated here) holds *n_all words where they arrive (member 0 only when
 * gather). Collective over the job: each step's failure is agreed on c. */
static strux_status gather_words(strux_comm *c, MPI_Comm comm, int gather, const char *mine,
                                 int64_t words, char **all, int64_t *n_all)
{
    *all = NULL;
    *n_all = 0;
    int size = 0, me = 0, *counts = NULL, *displs = NULL;
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_size(comm, &size);
        MPI_Comm_rank(comm, &me);
    }
    strux_status st = strux_alloc_array(&counts, (size_t)size + 1, sizeof *counts);
    if (st == STRUX_OK) st = strux_alloc_array(&displs, (size_t)size + 1, sizeof *displs);
    STRUX_TRY_GOTO(st, strux_comm_agree(c, st), done);
    int mine_words = (int)words, rc = MPI_SUCCESS;
    if (comm != MPI_COMM_NULL) {
        watch_enter("MPI_Allgather (sparse sum sizes)");
        rc = MPI_Allgather(&mine_words, 1, MPI_INT, counts, 1, MPI_INT, comm);
        watch_leave();
    }
    if (rc != MPI_SUCCESS) st = strux_dist_mpi_error(rc, "MPI_Allgather", __FILE__, __LINE__, __func__);
    int64_t total = 0;
    for (int r = 0; r < size; r++) {
        displs[r] = (int)total;
        total += counts[r];
    }
    if (st == STRUX_OK && total > INT_MAX)
        st = strux_error_set(STRUX_ERR_MPI, __FILE__, __LINE__, __func__,
                             "a sparse sum of %lld bytes exceeds one MPI message",
                             (long long)total * WORD);
    int receives = comm != MPI_COMM_NULL && (!gather || me == 0);
    if (st == STRUX_OK && receives) st = strux_alloc(all, (size_t)total * WORD);
    STRUX_TRY_GOTO(st, strux_comm_agree(c, st), done);
    if (comm != MPI_COMM_NULL) {
        watch_enter(gather ? "MPI_Gatherv (sparse sum)" : "MPI_Allgatherv (sparse sum)");
        rc = gather ? MPI_Gatherv(mine, mine_words, MPI_UINT64_T, *all, counts, displs,
                                  MPI_UINT64_T, 0, comm)
                    : MPI_Allgatherv(mine, mine_words, MPI_UINT64_T, *all, counts, displs,
                                     MPI_UINT64_T, comm);
        watch_leave();
        if (rc != MPI_SUCCESS)
            st = strux_dist_mpi_error(rc, "MPI_Gatherv", __FILE__, __LINE__, __func__);
    }
    if (st == STRUX_OK && receives) *n_all = total;
done:
    strux_free(&counts);
    strux_free(&displs);
    if (st != STRUX_OK) strux_free(all);
    return st;
}

/* The parts of every rank in all (n words of rank buffers in any order), added in rank order and
 * within a rank in its order, into out. */
static strux_status sum_parts(const strux_comm *c, const char *all, int64_t n,
                              strux_sparse_rows *out, strux_sparse_rows work[2])
{
    const char **at = NULL, *end = all + n * WORD;
    STRUX_TRY(strux_alloc_array(&at, (size_t)c->size, sizeof *at));
    strux_status st = STRUX_OK;
    for (const char *p = all; p < end;) { /* each rank's buffer by its header */
        int64_t head[3];
        memcpy(head, p, sizeof head);
        if (head[0] < 0 || head[0] >= c->size || head[2] < 3 || head[2] > (end - p) / WORD) {
            st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                                 "a sparse sum's buffer does not parse at word %lld",
                                 (long long)((p - all) / WORD));
            break;
        }
        at[head[0]] = p;
        p += head[2] * WORD;
    }
    /* ((p0 + p1) + p2) + ...: acc and work[1] trade places after each addition */
    strux_sparse_rows *acc = out, *tmp = &work[1];
    strux_sparse_rows_clear(acc);
    int first = 1;
    for (int r = 0; r < c->size && st == STRUX_OK; r++) {
        if (!at[r]) continue;
        int64_t head[3];
        memcpy(head, at[r], sizeof head);
        const char *p = at[r] + sizeof head, *stop = at[r] + head[2] * WORD;
        for (int64_t q = 0; q < head[1] && st == STRUX_OK; q++) {
            p = decode_part(p, stop, first ? acc : &work[0], &st);
            if (!p) {
                if (st == STRUX_OK)
                    st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                                         "rank %d's sparse part %lld is cut short", r,
                                         (long long)q);
                break;
            }
            if (first) {
                first = 0;
                continue;
            }
            st = strux_sparse_rows_add(acc, &work[0], tmp);
            strux_sparse_rows *t = acc;
            acc = tmp;
            tmp = t;
        }
    }
    if (acc != out) { /* the sum is in the caller's work[1]: trade the two */
        strux_sparse_rows t = *out;
        *out = *acc;
        *acc = t;
    }
    strux_free(&at);
    return st;
}

strux_status strux_comm_sum_sparse(strux_comm *c, const strux_sparse_rows *parts, int32_t n_parts,
                                   int host_leaders, strux_sparse_rows *out,
                                   strux_sparse_rows work[2])
{
    double t0 = strux_time_now(), s0 = c->seconds; /* the agreements inside count once */
    size_t bytes = 3 * sizeof(int64_t);
    for (int32_t q = 0; q < n_parts; q++)
        bytes += part_bytes(&parts[q]);
    int64_t words = (int64_t)((bytes + WORD - 1) / WORD), n_host = 0, n_all = 0;
    char *mine = NULL, *host = NULL, *all = NULL;
    strux_status st = STRUX_OK;
    if (words > INT_MAX)
        st = strux_error_set(STRUX_ERR_MPI, __FILE__, __LINE__, __func__,
                             "a sparse sum of %zu bytes from one rank exceeds one MPI message",
                             bytes);
    if (st == STRUX_OK) st = strux_alloc(&mine, (size_t)words * WORD);
    if (st == STRUX_OK) {
        int64_t head[3] = {c->rank, n_parts, words};
        char *at = put_bytes(mine, head, sizeof head);
        for (int32_t q = 0; q < n_parts; q++)
            at = encode_part(at, &parts[q]);
    }
    STRUX_TRY_GOTO(st, strux_comm_agree(c, st), done); /* every rank, or none, goes on */
    strux_sparse_rows_clear(out);
    if (host_leaders) { /* the host's ranks to its first, then the first ranks to each other */
        STRUX_TRY_GOTO(st, gather_words(c, c->host, 1, mine, words, &host, &n_host), done);
        STRUX_TRY_GOTO(st, gather_words(c, c->leaders, 0, host, n_host, &all, &n_all), done);
        int n_leaders = 0;
        if (c->leaders != MPI_COMM_NULL) MPI_Comm_size(c->leaders, &n_leaders);
        if (c->size > 1) c->bytes += (int64_t)bytes + (n_leaders > 1 ? n_host * WORD : 0);
    } else {
        STRUX_TRY_GOTO(st, gather_words(c, c->comm, 0, mine, words, &all, &n_all), done);
        if (c->size > 1) c->bytes += (int64_t)bytes;
    }
    if (all) st = sum_parts(c, all, n_all, out, work);
done:
    strux_free(&mine);
    strux_free(&host);
    strux_free(&all);
    c->seconds = s0 + (strux_time_now() - t0);
    return st;
}

#define COLLECT_TAG 7 /* point-to-point tag of strux_comm_collect */

static strux_status transfer(strux_comm *c, char *data, size_t n, int peer)
{
    for (size_t o = 0; o < n; o += (size_t)CHUNK) {
        int k = (int)(n - o < (size_t)CHUNK ? n - o : (size_t)CHUNK);
        if (c->rank == 0)
            MPI_TRY_P2P(
                MPI_Recv(data + o, k, MPI_BYTE, peer, COLLECT_TAG, c->comm, MPI_STATUS_IGNORE));
        else
            MPI_TRY_P2P(MPI_Send(data + o, k, MPI_BYTE, 0, COLLECT_TAG, c->comm));
    }
    return STRUX_OK;
}

/* Sizes first (so rank 0 can allocate, or refuse, before any bulk transfer), then every rank's
 * bytes in rank order through one reused buffer. */
strux_status strux_comm_collect(strux_comm *c, const void *data, size_t n, strux_bytes_sink sink,
                                void *ctx)
{
    double t0 = strux_time_now();
    uint64_t mine = n, *sizes = NULL, largest = 0;
    char *buf = NULL;
    strux_status st = STRUX_OK;
    if (c->rank == 0) st = strux_alloc_array(&sizes, (size_t)c->size, sizeof *sizes);
    MPI_TRY(MPI_Gather(&mine, 1, MPI_UINT64_T, sizes, 1, MPI_UINT64_T, 0, c->comm));
    for (int r = 1; c->rank == 0 && st == STRUX_OK && r < c->size; r++)
        if (sizes[r] > largest) largest = sizes[r];
    if (c->rank == 0 && st == STRUX_OK) st = strux_alloc(&buf, (size_t)largest);
    int go = st == STRUX_OK;
    MPI_TRY(MPI_Bcast(&go, 1, MPI_INT, 0, c->comm));
    if (go && c->rank != 0) st = transfer(c, (char *)data, n, 0);
    for (int r = 0; go && c->rank == 0 && r < c->size; r++) {
        if (r > 0) {
            strux_status rs = transfer(c, buf, (size_t)sizes[r], r);
            if (rs != STRUX_OK) {
                st = rs;
                break; /* an MPI failure: the stream is broken */
            }
        }
        if (st == STRUX_OK) st = sink(ctx, r, r > 0 ? buf : data, r > 0 ? (size_t)sizes[r] : n);
    }
    strux_free(&buf);
    strux_free(&sizes);
    c->seconds += strux_time_now() - t0;
    return st;
}

strux_status strux_comm_host_size(strux_comm *c, int *out)
{
    *out = c->host_size;
    return STRUX_OK;
}

strux_status strux_comm_barrier(strux_comm *c)
{
    double t0 = strux_time_now();
    MPI_TRY(MPI_Barrier(c->comm));
    c->seconds += strux_time_now() - t0;
    return STRUX_OK;
}
