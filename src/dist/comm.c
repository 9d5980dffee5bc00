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

struct strux_comm {
    MPI_Comm comm; /* duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN */
    int rank, size;
    int we_initialised; /* MPI_Init was called here, so finalize calls MPI_Finalize */
    double seconds;     /* time inside collectives */
    int64_t bytes;      /* bytes this rank contributed to collectives (0 at one rank) */
    MPI_Datatype loc_type; /* a (double value, int64 index) pair: strux_comm_allreduce_maxloc */
    MPI_Op loc_max;        /* its maximum, ties to the lowest index */
};

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

static strux_status mpi_error(int rc, const char *what, const char *file, int line,
                              const char *func)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return strux_error_set(STRUX_ERR_MPI, file, line, func, "%s failed: %s", what, text);
}

/* Around every MPI call: the watchdog measures from enter to leave; collectives are counted. */
static void watch_enter_call(const char *what, int collective)
{
    if (collective) atomic_fetch_add(&watch.seq, 1);
    atomic_store(&watch.what, what);
    atomic_store(&watch.since, strux_time_now());
}
#define watch_enter(what) watch_enter_call(what, 1)

static void watch_leave(void)
{
    atomic_store(&watch.since, 0.0);
}

#define MPI_TRY_CALL(call, collective)                                                             \
    do {                                                                                           \
        watch_enter_call(#call, collective);                                                       \
        int rc_ = (call);                                                                          \
        watch_leave();                                                                             \
        if (rc_ != MPI_SUCCESS) return mpi_error(rc_, #call, __FILE__, __LINE__, __func__);        \
    } while (0)
#define MPI_TRY(call) MPI_TRY_CALL(call, 1)
#define MPI_TRY_P2P(call) MPI_TRY_CALL(call, 0) /* not a collective: not counted */

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
    MPI_Op_free(&(*c)->loc_max);
    MPI_Type_free(&(*c)->loc_type);
    MPI_Comm_free(&(*c)->comm);
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
    if (rc != MPI_SUCCESS) st = mpi_error(rc, "MPI_Gather", __FILE__, __LINE__, __func__);
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
        st = mpi_error(rc, "MPI_Gatherv", __FILE__, __LINE__, __func__);
    strux_free(&counts);
    strux_free(&displs);
    if (st != STRUX_OK) strux_free(out);
    *n_out = st == STRUX_OK && c->rank == root ? total : 0;
    c->seconds += strux_time_now() - t0;
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
    MPI_Comm host;
    MPI_TRY(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &host));
    int rc = MPI_Comm_size(host, out);
    MPI_Comm_free(&host);
    if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Comm_size", __FILE__, __LINE__, __func__);
    return STRUX_OK;
}

strux_status strux_comm_barrier(strux_comm *c)
{
    double t0 = strux_time_now();
    MPI_TRY(MPI_Barrier(c->comm));
    c->seconds += strux_time_now() - t0;
    return STRUX_OK;
}
