/* tests/common/preload/enospc.c - an LD_PRELOAD shim that makes the disk look full: after
 * STRUX_ENOSPC_AFTER bytes (default 0) have gone to regular files, write(2), pwrite(2) and their
 * 64-bit aliases fail with ENOSPC (a write that crosses the limit is cut short first, as a real
 * file system does). Pipes, sockets and terminals are untouched, so MPI and the logs still work.
 * tests/e2e/file_safety.sh builds it with `cc -shared -fPIC` and runs strux under it, so the
 * full-disk cases run even where the test may not mount a small tmpfs. Lives in a folder of its
 * own so the unit tests, which link every C file of tests/common, do not pick it up. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static long long budget = -1; /* bytes regular files may still take; -1 until read */

static size_t allowed(int fd, size_t n)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return n;
    if (budget < 0) {
        const char *v = getenv("STRUX_ENOSPC_AFTER");
        budget = v ? atoll(v) : 0;
        if (budget < 0) budget = 0;
    }
    return (long long)n <= budget ? n : (size_t)budget;
}

/* The real call's result, charged to the budget; a write with no budget left is ENOSPC. */
static ssize_t charge(ssize_t rc)
{
    if (rc > 0) budget -= rc;
    return rc;
}

static ssize_t full(void)
{
    errno = ENOSPC;
    return -1;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    size_t ok = allowed(fd, n);
    return ok == 0 && n > 0 ? full() : charge(real(fd, buf, ok));
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    size_t ok = allowed(fd, n);
    return ok == 0 && n > 0 ? full() : charge(real(fd, buf, ok, off));
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return pwrite(fd, buf, n, off);
}
