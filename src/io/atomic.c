/* io/atomic.c - atomic file replacement: write under a temporary name in the target's directory,
 * then rename(2), which POSIX makes atomic within one file system. */
#include "strux/io.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void strux_io_temp_name(const char *path, char *buf, size_t n)
{
    snprintf(buf, n, "%s.tmp.%ld", path, (long)getpid());
}

strux_status strux_io_commit(const char *tmp, const char *path)
{
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                               "%s: cannot move the finished file into place: %s", path,
                               strerror(e));
    }
    return STRUX_OK;
}
