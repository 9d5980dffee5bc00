/* cli/convert.c - `strux convert INPUT OUTPUT [--dim D] [--n-labels L]`: LIBSVM/XMC text to the
 * HDF5 CSR container. Rank 0 converts; other ranks wait for its status. It streams: a first
 * pass validates the text keeping only its totals (data/libsvm.c strux_libsvm_stream_*), a second
 * reads the examples in pieces (CONVERT_ROWS examples, CONVERT_NNZ non-zeros at most) and hands
 * them row by row to the container's streaming writer (io/dataset_stream.c), so its memory is one
 * piece and the writer's buffers whatever the size of the input; on a terminal a line on stderr
 * shows each pass's progress. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONVERT_ROWS 65536    /* examples per piece of the second pass at most ... */
#define CONVERT_NNZ (1 << 18) /* ... and non-zeros: a piece of 2 MB and its rows' offsets */
#define CONVERT_REDRAW_S 0.25 /* seconds between two redraws of the progress line */

/* The progress line (stderr a terminal only). */
typedef struct convert_progress {
    int on;
    const char *pass;
    double t_drawn;
} convert_progress;

static void show_progress(void *ctx, int64_t done, int64_t total)
{
    convert_progress *p = ctx;
    double now = strux_time_now();
    if (!p->on || total <= 0 || now - p->t_drawn < CONVERT_REDRAW_S) return;
    p->t_drawn = now;
    double frac = (double)done / (double)total;
    fprintf(stderr, "\r\033[Kconvert: %s %3d%%  (%.1f of %.1f MB)", p->pass,
            (int)(100 * (frac < 1 ? frac : 1)), (double)done / 1e6, (double)total / 1e6);
    fflush(stderr);
}

static void end_progress(convert_progress *p)
{
    if (p->on) fputs("\r\033[K", stderr);
}

/* The two passes: validate (totals only), then copy piece by piece into the container. */
static strux_status stream(const char *in, const char *out, const strux_read_options *ro,
                           convert_progress *pg, strux_libsvm_facts *f)
{
    strux_libsvm_stream *s = NULL;
    strux_dataset_writer *w = NULL;
    strux_libsvm_chunk c = {0};
    pg->pass = "checking";
    STRUX_TRY(strux_libsvm_stream_open(in, ro, show_progress, pg, &s, f));
    strux_status st = strux_io_dataset_writer_open(out, f->n_rows, f->dim, f->n_labels, &w);
    pg->pass = "writing";
    for (int64_t done = 0; st == STRUX_OK && done < f->n_rows; done += c.n_rows) {
        st = strux_libsvm_stream_next(s, CONVERT_ROWS, CONVERT_NNZ, &c);
        if (st == STRUX_OK && c.n_rows == 0)
            st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                 "%s: the file changed while it was read", in);
        for (int64_t i = 0, x = 0, y = 0; st == STRUX_OK && i < c.n_rows; i++) {
            st = strux_io_dataset_writer_add(w, (int32_t)c.row_nnz[i], c.col + x, c.val + x,
                                             c.row_nlab[i], c.lab + y);
            x += c.row_nnz[i];
            y += c.row_nlab[i];
        }
    }
    st = strux_io_dataset_writer_close(&w, st);
    strux_libsvm_chunk_free(&c);
    strux_libsvm_stream_close(&s);
    return st;
}

static strux_status convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    strux_read_options ro = {.rank = 0, .n_ranks = 1};
    for (int k = 1; k < argc; k++) {
        if ((strcmp(argv[k], "--dim") == 0 || strcmp(argv[k], "--n-labels") == 0) &&
            k + 1 < argc) {
            char *end;
            long v = strtol(argv[k + 1], &end, 10);
            STRUX_CHECK(*end == '\0' && v > 0 && v < 2147483645, STRUX_ERR_CONFIG,
                        "convert: %s needs a positive integer, got '%s'", argv[k], argv[k + 1]);
            if (argv[k][2] == 'd')
                ro.dim = (int32_t)v;
            else
                ro.n_labels = (int32_t)v;
            k++;
        } else if (argv[k][0] != '-' && !in) {
            in = argv[k];
        } else if (argv[k][0] != '-' && !out) {
            out = argv[k];
        } else {
            return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                   "usage: strux convert INPUT OUTPUT [--dim D] [--n-labels L]");
        }
    }
    STRUX_CHECK(in && out, STRUX_ERR_CONFIG,
                "usage: strux convert INPUT OUTPUT [--dim D] [--n-labels L]");
    const char *inputs[] = {in};
    STRUX_TRY(strux_io_check_output(out, inputs, 1));
    double t0 = strux_time_now();
    convert_progress pg = {.on = isatty(STDERR_FILENO)};
    strux_libsvm_facts f;
    strux_status st = stream(in, out, &ro, &pg, &f);
    end_progress(&pg);
    STRUX_TRY(st);
    strux_log(STRUX_LOG_INFO, "%s -> %s: %lld examples, %d features, %d labels, %lld non-zeros in "
              "%.2fs",
              in, out, (long long)f.n_rows, f.dim, f.n_labels, (long long)f.nnz,
              strux_time_now() - t0);
    return STRUX_OK;
}

int strux_cmd_convert(strux_comm *comm, int argc, char **argv)
{
    return strux_cli_run_on_root(comm, convert, argc, argv);
}
