/* dist/window.c - MPI-3 shared-memory windows (ARCHITECTURE.md §3/§9: dist owns the window,
 * linalg only sees memory): one block of bytes per host, allocated by the host's first rank with
 * MPI_Win_allocate_shared on the host communicator (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED))
 * and mapped by the others (MPI_Win_shared_query), the one copy of a model that the ranks of a
 * host read (model.share = host). Pages are committed as they are first written, so a window
 * larger than its contents costs address space, not memory. The first rank writes; a fence (a
 * host barrier between MPI_Win_sync calls, in a passive-target epoch held for the window's life)
 * makes its stores visible to the others. Growing makes a new window, copies the old contents
 * and frees the old one. Does not lock or arbitrate writers: the callers keep to one writer. */
#include "strux/comm.h"

#include "dist_impl.h"

#include "strux/model.h"

#include <string.h>

struct strux_window {
    strux_comm *c; /* borrowed */
    MPI_Win win;
    void *base;   /* the host's block in this process */
    size_t bytes; /* its size */
};

/* A window of bytes on the host (the first rank allocates it, the others map it). */
static strux_status window_open(strux_window *w, size_t bytes)
{
    strux_comm *c = w->c;
    MPI_Aint mine = c->host_rank == 0 ? (MPI_Aint)(bytes ? bytes : 1) : 0, size = 0;
    int disp = 1;
    void *base = NULL;
    MPI_TRY(MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, c->host, &base, &w->win));
    MPI_TRY(MPI_Win_shared_query(w->win, 0, &size, &disp, &base));
    MPI_TRY(MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win));
    w->base = base;
    w->bytes = bytes;
    return STRUX_OK;
}

static void window_close(strux_window *w)
{
    if (w->win == MPI_WIN_NULL) return;
    MPI_Win_unlock_all(w->win);
    MPI_Win_free(&w->win);
    w->win = MPI_WIN_NULL;
    w->base = NULL;
}

strux_status strux_window_create(strux_comm *c, size_t bytes, strux_window **out)
{
    strux_window *w;
    STRUX_TRY(strux_comm_agree(c, strux_alloc(&w, sizeof *w)));
    w->c = c;
    w->win = MPI_WIN_NULL;
    strux_status st = window_open(w, bytes);
    st = strux_comm_agree(c, st);
    if (st != STRUX_OK) {
        strux_window_destroy(&w);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = w;
    return STRUX_OK;
}

void strux_window_destroy(strux_window **w)
{
    if (!*w) return;
    window_close(*w);
    strux_free(w);
}

void *strux_window_base(const strux_window *w)
{
    return w->base;
}

size_t strux_window_size(const strux_window *w)
{
    return w->bytes;
}

int strux_window_writer(const strux_window *w)
{
    return w->c->host_rank == 0;
}

strux_status strux_window_fence(strux_window *w)
{
    double t0 = strux_time_now();
    MPI_TRY(MPI_Win_sync(w->win));
    MPI_TRY(MPI_Barrier(w->c->host));
    MPI_TRY(MPI_Win_sync(w->win));
    w->c->seconds += strux_time_now() - t0;
    return STRUX_OK;
}

strux_status strux_window_reserve(strux_window *w, size_t bytes)
{
    strux_comm *c = w->c;
    uint64_t need = bytes;
    MPI_TRY(MPI_Bcast(&need, 1, MPI_UINT64_T, 0, c->host));
    if (need <= w->bytes) return STRUX_OK;
    strux_window old = *w;
    strux_status st = window_open(w, (size_t)need);
    st = strux_comm_agree(c, st);
    if (st != STRUX_OK) {
        *w = old;
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    if (c->host_rank == 0) memcpy(w->base, old.base, old.bytes);
    window_close(&old);
    return strux_window_fence(w);
}

/* strux_model_share's callbacks over a window (the model's one copy per host). */
static void *share_base(void *ctx)
{
    return strux_window_base(ctx);
}

static size_t share_size(void *ctx)
{
    return strux_window_size(ctx);
}

static strux_status share_reserve(void *ctx, size_t bytes)
{
    return strux_window_reserve(ctx, bytes);
}

static strux_status share_fence(void *ctx)
{
    return strux_window_fence(ctx);
}

strux_model_share strux_window_model_share(strux_window *w)
{
    return (strux_model_share){.ctx = w,
                               .writer = strux_window_writer(w),
                               .base = share_base,
                               .size = share_size,
                               .reserve = share_reserve,
                               .fence = share_fence};
}
