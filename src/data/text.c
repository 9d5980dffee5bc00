/* data/text.c - the one line reader under the text formats (ARCHITECTURE.md §9): libsvm.c,
 * svmhmm.c and the `parent child` edge lists read their lines here.
 * zlib's gzread reads gzip and plain files alike (it tells them apart by the gzip magic); this
 * file cuts the decompressed bytes into lines itself instead of calling gzgets, so that it knows
 * each line's length and can refuse what gzgets would hide: a NUL byte (gzgets hands it on and
 * strlen then merges or cuts lines), a truncated or corrupt gzip stream (gzread ends early and
 * only gzerror says why), an unbounded line. Format matters (comments, fields) stay in the
 * readers. Order: open and the stat checks, filling the chunk, cutting lines, accessors. */
#include "strux/data.h"

#include "data_impl.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define TEXT_CHUNK ((size_t)1 << 17)      /* decompressed bytes per gzread (zlib's buffer too) */
#define TEXT_LINE_START ((size_t)1 << 12) /* first size of the line buffer */

struct strux_text_reader {
    gzFile f;
    char *path;          /* copy of the path, for messages */
    int64_t file_bytes;  /* size of the file on disk (compressed, for gzip) */
    char *chunk;         /* TEXT_CHUNK bytes of decompressed input */
    size_t chunk_n;      /* bytes in chunk */
    size_t chunk_pos;    /* next unread byte of chunk */
    int64_t chunk_start; /* offset of chunk[0] in the decompressed text */
    int at_eof;          /* gzread returned 0 with no error: the stream ended cleanly */
    char *line;          /* current line, NUL-terminated, line end stripped */
    size_t line_cap;     /* bytes allocated for line, ≤ max_line + 2 */
    size_t max_line;     /* longest line accepted, line end excluded */
    int64_t line_no;     /* 1-based number of the current line; 0 before the first */
    int64_t offset;      /* offset of the current line in the decompressed text */
};

strux_status strux_text_reader_open(const char *path, strux_text_reader **out)
{
    strux_status st = STRUX_OK;
    struct stat sb;
    *out = NULL;
    /* stat first: opening a FIFO would block until a writer comes, and the readers read a file
     * twice (validate, then keep this rank's rows), which a pipe cannot give */
    if (stat(path, &sb) != 0)
        return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                               "%s: cannot open for reading: %s", path, strerror(errno));
    STRUX_CHECK(!S_ISDIR(sb.st_mode), STRUX_ERR_IO, "%s: is a directory, not a data file", path);
    STRUX_CHECK(S_ISREG(sb.st_mode), STRUX_ERR_IO,
                "%s: is not a regular file (pipes and devices cannot be read: every file is read "
                "twice)",
                path);
    strux_text_reader *r = NULL;
    STRUX_TRY(strux_alloc(&r, sizeof *r));
    r->file_bytes = (int64_t)sb.st_size;
    r->max_line = STRUX_TEXT_MAX_LINE;
    r->line_cap = TEXT_LINE_START;
    STRUX_TRY_GOTO(st, strux_strdup(&r->path, path), fail);
    STRUX_TRY_GOTO(st, strux_alloc(&r->chunk, TEXT_CHUNK), fail);
    STRUX_TRY_GOTO(st, strux_alloc(&r->line, r->line_cap), fail);
    errno = 0;
    r->f = gzopen(path, "rb");
    STRUX_CHECK_GOTO(st, r->f, STRUX_ERR_INPUT, fail, "%s: cannot open for reading: %s", path,
                     errno ? strerror(errno) : "gzopen failed");
    gzbuffer(r->f, (unsigned)TEXT_CHUNK);
    *out = r;
    return STRUX_OK;
fail:
    strux_text_reader_close(&r);
    return st;
}

void strux_text_reader_close(strux_text_reader **r)
{
    if (!*r) return;
    if ((*r)->f) gzclose((*r)->f);
    strux_free(&(*r)->path);
    strux_free(&(*r)->chunk);
    strux_free(&(*r)->line);
    strux_free(r);
}

/* Refill chunk from the stream. gzread returns what it decompressed before a problem and leaves
 * the reason in gzerror: Z_BUF_ERROR when the file ends inside a gzip stream (truncated),
 * Z_DATA_ERROR for corrupt data, Z_ERRNO for a failed read(2). None of them is a clean end. */
static strux_status fill(strux_text_reader *r)
{
    r->chunk_start += (int64_t)r->chunk_n;
    r->chunk_n = r->chunk_pos = 0;
    int n = gzread(r->f, r->chunk, (unsigned)TEXT_CHUNK);
    int err = Z_OK;
    const char *msg = gzerror(r->f, &err);
    if (err == Z_ERRNO)
        return strux_error_set(STRUX_ERR_IO, __FILE__, __LINE__, __func__,
                               "%s: read failed after line %lld: %s", r->path,
                               (long long)r->line_no, strerror(errno));
    STRUX_CHECK(n >= 0 && err == Z_OK, STRUX_ERR_INPUT,
                "%s: truncated or corrupt gzip stream: zlib stopped at compressed byte %lld of "
                "%lld, after line %lld (%s)",
                r->path, (long long)gzoffset(r->f), (long long)r->file_bytes, (long long)r->line_no,
                msg);
    r->chunk_n = (size_t)n;
    r->at_eof = n == 0;
    return STRUX_OK;
}

static strux_status too_long(const strux_text_reader *r)
{
    return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "%s:%lld: line longer than %zu bytes, the limit of one line", r->path,
                           (long long)r->line_no + 1, r->max_line);
}

/* Room for need bytes in the line buffer: doubling, at most max_line + 2 (a CR and the NUL). */
static strux_status line_reserve(strux_text_reader *r, size_t need)
{
    if (need <= r->line_cap) return STRUX_OK;
    size_t cap = r->line_cap;
    while (cap < need)
        cap *= 2;
    if (cap > r->max_line + 2) cap = r->max_line + 2;
    STRUX_TRY(strux_realloc_array(&r->line, cap, 1));
    r->line_cap = cap;
    return STRUX_OK;
}

strux_status strux_text_reader_next_line(strux_text_reader *r, char **line, size_t *len)
{
    size_t n = 0; /* bytes of the line so far */
    int newline = 0;
    int64_t start = r->chunk_start + (int64_t)r->chunk_pos;
    long long ln = (long long)r->line_no + 1;
    r->offset = start; /* also where a line that fails starts */
    *line = NULL;
    if (len) *len = 0;
    while (!newline) {
        if (r->chunk_pos == r->chunk_n) {
            if (r->at_eof) break;
            STRUX_TRY(fill(r));
            if (r->at_eof) break;
        }
        char *s = r->chunk + r->chunk_pos;
        size_t avail = r->chunk_n - r->chunk_pos;
        const char *nl = memchr(s, '\n', avail);
        size_t take = nl ? (size_t)(nl - s) : avail;
        const char *nul = memchr(s, '\0', take);
        STRUX_CHECK(!nul, STRUX_ERR_INPUT, "%s:%lld: NUL byte at column %zu", r->path, ln,
                    n + (size_t)(nul - s) + 1);
        if (take > r->max_line + 1 - n) return too_long(r); /* + 1: room for a CR */
        STRUX_TRY(line_reserve(r, n + take + 1));
        memcpy(r->line + n, s, take);
        n += take;
        r->chunk_pos += take + (nl != NULL);
        newline = nl != NULL;
    }
    if (n == 0 && !newline) return STRUX_OK; /* end of file */
    while (n > 0 && r->line[n - 1] == '\r')
        n--;
    if (n > r->max_line) return too_long(r);
    r->line[n] = '\0';
    r->line_no++;
    r->offset = start;
    *line = r->line;
    if (len) *len = n;
    return STRUX_OK;
}

strux_status strux_text_reader_rewind(strux_text_reader *r)
{
    STRUX_CHECK(gzrewind(r->f) == 0, STRUX_ERR_IO, "%s: cannot rewind", r->path);
    r->chunk_n = r->chunk_pos = 0;
    r->chunk_start = 0;
    r->at_eof = 0;
    r->line_no = 0;
    r->offset = 0;
    return STRUX_OK;
}

strux_status strux_text_reader_seek(strux_text_reader *r, int64_t offset, int64_t line_no)
{
    STRUX_CHECK(offset >= 0 && gzseek(r->f, (z_off_t)offset, SEEK_SET) == (z_off_t)offset,
                STRUX_ERR_IO, "%s: cannot seek to byte %lld", r->path, (long long)offset);
    r->chunk_n = r->chunk_pos = 0;
    r->chunk_start = offset;
    r->at_eof = 0;
    r->line_no = line_no;
    r->offset = offset;
    return STRUX_OK;
}

strux_status strux_text_reader_skip_line(strux_text_reader *r)
{
    for (;;) {
        if (r->chunk_pos == r->chunk_n) {
            if (r->at_eof) return STRUX_OK;
            STRUX_TRY(fill(r));
            if (r->at_eof) return STRUX_OK;
        }
        const char *s = r->chunk + r->chunk_pos, *nl = memchr(s, '\n', r->chunk_n - r->chunk_pos);
        if (nl) {
            r->chunk_pos += (size_t)(nl - s) + 1;
            return STRUX_OK;
        }
        r->chunk_pos = r->chunk_n;
    }
}

int strux_text_reader_is_plain(strux_text_reader *r)
{
    return gzdirect(r->f);
}

int64_t strux_text_reader_file_bytes(const strux_text_reader *r)
{
    return r->file_bytes;
}

int64_t strux_text_reader_line_no(const strux_text_reader *r)
{
    return r->line_no;
}

int64_t strux_text_reader_offset(const strux_text_reader *r)
{
    return r->offset;
}

const char *strux_text_reader_path(const strux_text_reader *r)
{
    return r->path;
}

void strux_text_reader_set_max_line(strux_text_reader *r, size_t max_line)
{
    r->max_line = max_line;
}
