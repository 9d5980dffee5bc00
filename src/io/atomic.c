/* io/atomic.c - atomic file replacement: write under a temporary name in the target's directory,
 * then rename(2), which POSIX makes atomic within one file system; and creation of the
 * directories an output path needs. */
#include "strux/io.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

strux_status strux_io_make_parent(const char *path)
{
    char dir[4096];
    STRUX_CHECK(strlen(path) < sizeof dir, STRUX_ERR_IO, "%s: path too long", path);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return STRUX_OK;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) break;
        *p = '/';
    }
    struct stat sb;
    int made = mkdir(dir, 0777) == 0 || (errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode));
    STRUX_CHECK(made, STRUX_ERR_IO, "%s: cannot create directory %s: %s", path, dir,
                errno == EEXIST ? "a file of that name exists" : strerror(errno));
    return STRUX_OK;
}
