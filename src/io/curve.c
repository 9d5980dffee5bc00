/* io/curve.c - the training curve (named columns, one row per epoch) and the JSON-lines metrics
 * log written from it, one object per epoch. The log is held under an exclusive flock(2) while
 * open, so two runs given one output.metrics fail instead of interleaving their lines. */
#include "h5.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

struct strux_metrics {
    FILE *f;
    char *path;
};

strux_status strux_curve_init(strux_curve *c, const char *const *names)
{
    *c = (strux_curve){0};
    int col;
    for (int k = 0; names[k]; k++)
        STRUX_TRY(strux_curve_add_column(c, names[k], &col));
    return STRUX_OK;
}

strux_status strux_curve_add_column(strux_curve *c, const char *name, int *col)
{
    STRUX_CHECK(c->n_rows == 0, STRUX_ERR_INTERNAL, "column %s added to a curve with rows", name);
    STRUX_CHECK(c->n_cols < STRUX_CURVE_MAX_COLS, STRUX_ERR_INTERNAL,
                "curve with more than %d columns", STRUX_CURVE_MAX_COLS);
    STRUX_CHECK(strlen(name) < STRUX_CURVE_NAME, STRUX_ERR_INTERNAL, "column name %s too long",
                name);
    STRUX_CHECK(strux_curve_column(c, name) < 0, STRUX_ERR_INTERNAL, "two columns named %s", name);
    snprintf(c->names[c->n_cols], sizeof c->names[0], "%s", name);
    *col = c->n_cols++;
    return STRUX_OK;
}

int strux_curve_column(const strux_curve *c, const char *name)
{
    for (int k = 0; k < c->n_cols; k++)
        if (strcmp(c->names[k], name) == 0) return k;
    return -1;
}

strux_status strux_curve_append(strux_curve *c, const double *row)
{
    if (c->n_rows == c->cap) {
        int64_t cap = c->cap ? 2 * c->cap : 64;
        STRUX_TRY(strux_realloc_array(&c->v, (size_t)(cap * c->n_cols), sizeof *c->v));
        c->cap = cap;
    }
    memcpy(c->v + c->n_rows * c->n_cols, row, (size_t)c->n_cols * sizeof *row);
    c->n_rows++;
    return STRUX_OK;
}

void strux_curve_free(strux_curve *c)
{
    strux_free(&c->v);
    c->n_rows = c->cap = 0;
}

strux_status strux_metrics_open(const char *path, int append, strux_metrics **out)
{
    STRUX_TRY(strux_io_make_parent(path));
    /* lock before truncating: a second run must not empty the log of the run holding it */
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : 0), 0666);
    STRUX_CHECK(fd >= 0, STRUX_ERR_IO, "%s: cannot open the metrics log for writing: %s", path,
                strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        STRUX_CHECK(e != EWOULDBLOCK, STRUX_ERR_IO,
                    "%s: the metrics log is in use by another run (it holds the file's lock); "
                    "give this run its own output.metrics",
                    path);
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                               "%s: cannot lock the metrics log: %s", path, strerror(e));
    }
    if (!append && ftruncate(fd, 0) != 0) {
        int e = errno;
        close(fd);
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                               "%s: cannot truncate the metrics log: %s", path, strerror(e));
    }
    FILE *f = fdopen(fd, append ? "a" : "w");
    if (!f) {
        int e = errno;
        close(fd);
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                               "%s: cannot open the metrics log for writing: %s", path,
                               strerror(e));
    }
    strux_metrics *m = NULL;
    strux_status st = strux_alloc(&m, sizeof *m);
    if (st == STRUX_OK) st = strux_strdup(&m->path, path);
    if (st != STRUX_OK) {
        fclose(f);
        if (m) strux_free(&m);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    m->f = f;
    *out = m;
    return STRUX_OK;
}

static strux_status write_row(strux_metrics *m, const strux_curve *c, int64_t r)
{
    const double *row = c->v + r * c->n_cols;
    fputc('{', m->f);
    for (int k = 0; k < c->n_cols; k++) {
        double v = row[k];
        fprintf(m->f, "%s\"%s\": ", k ? ", " : "", c->names[k]);
        if (!isfinite(v))
            fputs("null", m->f);
        else if (v == floor(v) && fabs(v) < 9e15)
            fprintf(m->f, "%.0f", v);
        else
            fprintf(m->f, "%.10g", v);
    }
    fputs("}\n", m->f);
    errno = 0;
    if (fflush(m->f) != 0 || ferror(m->f))
        return io_write_failed(m->path, errno ? errno : EIO, (size_t)ftell(m->f) + 4096, "write");
    return STRUX_OK;
}

strux_status strux_metrics_write_row(strux_metrics *m, const strux_curve *c)
{
    STRUX_CHECK(c->n_rows > 0, STRUX_ERR_INTERNAL, "empty curve");
    return write_row(m, c, c->n_rows - 1);
}

strux_status strux_metrics_write_all(strux_metrics *m, const strux_curve *c)
{
    for (int64_t r = 0; r < c->n_rows; r++)
        STRUX_TRY(write_row(m, c, r));
    return STRUX_OK;
}

void strux_metrics_close(strux_metrics **m)
{
    if (!*m) return;
    fclose((*m)->f);
    strux_free(&(*m)->path);
    strux_free(m);
}
