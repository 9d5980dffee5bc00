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

#define FILE_BUFFER ((size_t)1 << 20) /* strux_io_file: smaller writes are gathered up to 1 MiB */

struct strux_io_file {
    char path[PATH_MAX];
    char tmp[PATH_MAX + 32];
    int fd;
    size_t given;      /* bytes handed over so far (the size a full disk message names) */
    char *buf;         /* FILE_BUFFER bytes, allocated at the first small write */
    size_t fill;       /* bytes in buf */
    int e;             /* errno of the first failure, 0 if none */
    const char *what;  /* the step that failed */
};

strux_status strux_io_file_open(const char *path, strux_io_file **out)
{
    *out = NULL;
    STRUX_CHECK(strlen(path) < PATH_MAX, STRUX_ERR_IO, "%s: path too long", path);
    STRUX_TRY(strux_io_make_parent(path));
    strux_io_file *f = NULL;
    STRUX_TRY(strux_alloc(&f, sizeof *f));
    snprintf(f->path, sizeof f->path, "%s", path);
    strux_io_temp_name(path, f->tmp, sizeof f->tmp);
    /* O_EXCL: a temporary of the same name is another writer's (the same pid on another node of
     * a shared file system), never ours to truncate; take the next free name instead */
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    for (int k = 1; f->fd < 0 && errno == EEXIST && k < 100; k++) {
        snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld.%d", path, (long)getpid(), k);
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    if (f->fd < 0) {
        int e = errno;
        strux_free(&f);
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                               "%s: cannot create the temporary file: %s", path, strerror(e));
    }
    f->what = "write";
    *out = f;
    return STRUX_OK;
}

/* write(2) all of p, retrying on EINTR; the first failure is kept in f->e. */
static void file_put(strux_io_file *f, const char *p, size_t n)
{
    while (n > 0 && f->e == 0) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            f->e = w < 0 ? errno : EIO;
            break;
        }
        p += w;
        n -= (size_t)w;
    }
}

strux_status strux_io_file_write(strux_io_file *f, const void *bytes, size_t n)
{
    f->given += n;
    if (f->fill + n > FILE_BUFFER || !f->buf) {
        file_put(f, f->buf, f->fill);
        f->fill = 0;
        if (n >= FILE_BUFFER) {
            file_put(f, bytes, n);
            n = 0;
        } else if (!f->buf) {
            STRUX_TRY(strux_alloc(&f->buf, FILE_BUFFER));
        }
    }
    if (n > 0) memcpy(f->buf + f->fill, bytes, n);
    f->fill += n;
    return f->e ? io_write_failed(f->path, f->e, f->given, f->what) : STRUX_OK;
}

strux_status strux_io_file_close(strux_io_file **fp, strux_status st)
{
    strux_io_file *f = *fp;
    if (!f) return st;
    file_put(f, f->buf, f->fill);
    if (f->e == 0 && fsync(f->fd) != 0 && errno != EINVAL) f->e = errno, f->what = "fsync";
    if (close(f->fd) != 0 && f->e == 0) f->e = errno, f->what = "close";
    if (st == STRUX_OK && f->e != 0) st = io_write_failed(f->path, f->e, f->given, f->what);
    if (st == STRUX_OK)
        st = move_into_place(f->tmp, f->path);
    else
        remove(f->tmp);
    strux_free(&f->buf);
    strux_free(fp);
    return st;
}

strux_status strux_io_write_atomic(const char *path, const void *bytes, size_t n)
{
    strux_io_file *f;
    STRUX_TRY(strux_io_file_open(path, &f));
    return strux_io_file_close(&f, strux_io_file_write(f, bytes, n));
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
