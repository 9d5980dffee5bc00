/* io/atomic.c - atomic file replacement and output-path checks. A file is written under a
 * temporary name in the target's directory, fsync'ed, renamed over the target (atomic within one
 * file system, POSIX rename(2)) and the directory fsync'ed, so a crash or a full disk leaves either
 * the old file or the new one, never a partial one, and never the temporary (SQLite's journal
 * discipline; os_unix.c fsyncs the directory after creating a file). Also: creation of the
 * directories an output needs, and the refusal of outputs that would destroy an input or cannot be
 * a regular file (a device, a FIFO, a directory). Not Collective. */
#include "strux/io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void strux_io_temp_name(const char *path, char *buf, size_t n)
{
    snprintf(buf, n, "%s.tmp.%ld", path, (long)getpid());
}

/* The failure of a write to path: ENOSPC and EDQUOT as "disk full" with the size the file needs
 * (need bytes), anything else with the system's reason. */
strux_status io_write_failed(const char *path, int e, size_t need, const char *what)
{
    if (e == ENOSPC || e == EDQUOT) {
        double mb = (double)need / 1e6;
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                               "disk full writing %s (needs about %.1f MB): %s", path,
                               mb < 0.1 ? 0.1 : mb, strerror(e));
    }
    return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__, "%s: %s failed: %s", path,
                           what, strerror(e));
}

/* Cut the last component of the path in dir, in place ("." for a bare name, "/" at the root). */
static void up_one(char *dir, size_t n)
{
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
}

/* fsync the directory holding path, so the rename that put path there survives a crash. */
static int sync_parent(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    up_one(dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    /* some file systems refuse fsync on a directory (EINVAL): the rename stands regardless */
    int rc = fsync(fd) == 0 || errno == EINVAL || errno == EROFS ? 0 : -1;
    close(fd);
    return rc;
}

/* The last step of every atomic write: rename the synced temporary over path (removed on
 * failure), then sync the directory so the new name survives a crash. */
static strux_status move_into_place(const char *tmp, const char *path)
{
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                               "%s: cannot move the finished file into place: %s", path,
                               strerror(e));
    }
    STRUX_CHECK(sync_parent(path) == 0, STRUX_ERR_IO,
                "%s: written, but its directory could not be synced: %s", path, strerror(errno));
    return STRUX_OK;
}

strux_status strux_io_commit(const char *tmp, const char *path)
{
    /* the content first: a rename that reaches the disk before the data would leave an empty or
     * partial file under the final name after a crash */
    int fd = open(tmp, O_RDONLY);
    int e = 0;
    if (fd < 0 || fsync(fd) != 0) e = errno;
    if (fd >= 0) close(fd);
    if (e != 0 && e != EINVAL) {
        struct stat sb;
        size_t need = stat(tmp, &sb) == 0 ? (size_t)sb.st_size : 0;
        remove(tmp);
        return io_write_failed(path, e, need, "fsync");
    }
    return move_into_place(tmp, path);
}

strux_status strux_io_write_atomic(const char *path, const void *bytes, size_t n)
{
    char tmp[PATH_MAX + 32];
    STRUX_CHECK(strlen(path) < PATH_MAX, STRUX_ERR_IO, "%s: path too long", path);
    strux_io_temp_name(path, tmp, sizeof tmp);
    STRUX_TRY(strux_io_make_parent(path));
    /* O_EXCL: a temporary of the same name is another writer's (the same pid on another node of
     * a shared file system), never ours to truncate; take the next free name instead */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    for (int k = 1; fd < 0 && errno == EEXIST && k < 100; k++) {
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%d", path, (long)getpid(), k);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    STRUX_CHECK(fd >= 0, STRUX_ERR_IO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
    const char *p = bytes;
    size_t left = n;
    int e = 0;
    const char *what = "write";
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            e = w < 0 ? errno : EIO;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (e == 0 && fsync(fd) != 0 && errno != EINVAL) e = errno, what = "fsync";
    if (close(fd) != 0 && e == 0) e = errno, what = "close";
    if (e != 0) {
        remove(tmp);
        return io_write_failed(path, e, n, what);
    }
    return move_into_place(tmp, path);
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
    int made =
        mkdir(dir, 0777) == 0 || (errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode));
    STRUX_CHECK(made, STRUX_ERR_IO, "%s: cannot create directory %s: %s", path, dir,
                errno == EEXIST ? "a file of that name exists" : strerror(errno));
    return STRUX_OK;
}

static const char *kind_of(mode_t mode)
{
    return S_ISDIR(mode)    ? "an existing directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
                            : NULL;
}

/* The directory that will hold path: it must exist and be writable, or its nearest existing
 * ancestor must be a writable directory (strux_io_make_parent creates the rest). */
static strux_status check_parent(const char *path)
{
    char dir[PATH_MAX];
    STRUX_CHECK(strlen(path) < sizeof dir, STRUX_ERR_IO, "%s: path too long", path);
    snprintf(dir, sizeof dir, "%s", path);
    up_one(dir, sizeof dir);
    struct stat sb;
    while (stat(dir, &sb) != 0) {
        STRUX_CHECK(errno == ENOENT || errno == ENOTDIR, STRUX_ERR_IO,
                    "%s: cannot use directory %s: %s", path, dir, strerror(errno));
        up_one(dir, sizeof dir);
    }
    STRUX_CHECK(S_ISDIR(sb.st_mode), STRUX_ERR_IO,
                "%s: cannot create directory: %s exists and is not a directory", path, dir);
    STRUX_CHECK(access(dir, W_OK | X_OK) == 0, STRUX_ERR_IO, "%s: directory %s is not writable: %s",
                path, dir, strerror(errno));
    return STRUX_OK;
}

strux_status strux_io_check_output(const char *path, const char *const *inputs, int n_inputs)
{
    STRUX_CHECK(path && path[0], STRUX_ERR_IO, "empty output path");
    struct stat out;
    if (stat(path, &out) == 0) {
        const char *kind = kind_of(out.st_mode);
        STRUX_CHECK(!kind, STRUX_ERR_IO, "%s: the output is %s; refusing to write there", path,
                    kind);
        for (int k = 0; k < n_inputs; k++) {
            struct stat in;
            if (!inputs[k] || !inputs[k][0] || stat(inputs[k], &in) != 0) continue;
            STRUX_CHECK(in.st_dev != out.st_dev || in.st_ino != out.st_ino, STRUX_ERR_IO,
                        "%s: the output is the input file %s; refusing to overwrite it", path,
                        inputs[k]);
        }
    } else {
        STRUX_CHECK(errno == ENOENT || errno == ENOTDIR, STRUX_ERR_IO,
                    "%s: cannot use the output path: %s", path, strerror(errno));
        /* a dangling symlink would be replaced by the rename: harmless; a path that no file has
         * yet cannot be an input */
    }
    return check_parent(path);
}
