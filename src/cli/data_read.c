/* cli/data_read.c - a data file read by the ranks of a job (ARCHITECTURE.md §4, issue 19 "input
 * at this size"): each rank keeps its rows of the partition balanced by non-zeros. HDF5
 * containers (io/dataset_file.c: each rank reads its rows' slices) and SVM-hmm text go through
 * strux_io_dataset_load; so does LIBSVM text in one process or compressed: every rank then
 * decompresses and validates the whole file (a gzip stream has no random access: its byte k is
 * reached only by decompressing bytes 0..k), which stays correct and costs each rank the whole
 * file (`strux convert` makes the HDF5 container, which does not). Plain LIBSVM text at more
 * than one rank is read in parts (data/libsvm.c, strux_libsvm_part_*): rank r scans the lines
 * that start in bytes [r·S/R, (r+1)·S/R) of the S-byte file; the ranks' line counts, per-example
 * non-zeros, labels and offsets are joined by allreduce; when lines failed, the first failing
 * rank repeats its failure with the line's number in the file (the sum of the line counts before
 * its part), so the message is the one a whole-file read gives; then each rank reads its rows
 * from their byte offset. The row ranges are those of a whole-file read. */
#include "cli.h"

#include <string.h>

/* Can path be read in parts? Plain LIBSVM text (not HDF5, not SVM-hmm, not gzip); a file that
 * cannot be opened is left to strux_io_dataset_load's message. */
static int plain_libsvm(const char *path)
{
    if (strux_io_is_hdf5(path) || strux_dataset_is_svmhmm(path)) return 0;
    strux_text_reader *r = NULL;
    if (strux_text_reader_open(path, &r) != STRUX_OK) {
        strux_error_clear();
        return 0;
    }
    int plain = strux_text_reader_is_plain(r);
    strux_text_reader_close(&r);
    return plain;
}

/* The parts' facts joined: every rank gets the file's rows with their non-zeros, labels and
 * offsets, the largest feature and label. first is where this part's examples start. */
static strux_status join_rows(strux_comm *comm, const strux_libsvm_part *p, int64_t first,
                              int64_t n_rows, int64_t **nnz, int32_t **nlab, int64_t **off,
                              int32_t *max_feature, int32_t *max_label)
{
    int64_t n_mine, *buf = NULL;
    const int64_t *my_nnz, *my_off;
    const int32_t *my_nlab;
    int32_t mf, ml;
    strux_libsvm_part_rows(p, &n_mine, &my_nnz, &my_nlab, &my_off, &mf, &ml);
    strux_status st = strux_alloc_array(nnz, (size_t)n_rows + 1, sizeof **nnz);
    if (st == STRUX_OK) st = strux_alloc_array(nlab, (size_t)n_rows + 1, sizeof **nlab);
    if (st == STRUX_OK) st = strux_alloc_array(off, (size_t)n_rows + 1, sizeof **off);
    if (st == STRUX_OK) st = strux_alloc_array(&buf, 3 * (size_t)n_rows + 1, sizeof *buf);
    STRUX_TRY(strux_comm_agree(comm, st));
    for (int64_t i = 0; i < n_mine; i++) { /* each slot is one rank's: the sum gathers them */
        buf[first + i] = my_nnz[i];
        buf[n_rows + first + i] = my_nlab[i];
        buf[2 * n_rows + first + i] = my_off[i];
    }
    st = strux_comm_allreduce_sum_i64(comm, buf, 3 * n_rows);
    for (int64_t i = 0; st == STRUX_OK && i < n_rows; i++) {
        (*nnz)[i] = buf[i];
        (*nlab)[i] = (int32_t)buf[n_rows + i];
        (*off)[i] = buf[2 * n_rows + i];
    }
    strux_free(&buf);
    STRUX_TRY(st);
    double m[2] = {mf, ml};
    STRUX_TRY(strux_comm_allreduce_max(comm, m, 2));
    *max_feature = (int32_t)m[0];
    *max_label = (int32_t)m[1];
    return STRUX_OK;
}

/* The read in parts (see the top). */
static strux_status read_in_parts(strux_comm *comm, const char *path, const strux_read_options *opt,
                                  int64_t file_bytes, strux_dataset **out)
{
    int rank = strux_comm_rank(comm), R = strux_comm_size(comm);
    int64_t lo = (int64_t)((double)file_bytes * rank / R);
    int64_t hi = rank + 1 == R ? -1 : (int64_t)((double)file_bytes * (rank + 1) / R);
    strux_libsvm_part *p = NULL;
    strux_status st = strux_libsvm_part_scan(path, opt, lo, hi, &p);
    /* per rank: lines read, examples, failed (2: a line failed, 1: otherwise) */
    int64_t *counts = NULL, *nnz = NULL, *off = NULL;
    int32_t *nlab = NULL, max_feature = 0, max_label = -1;
    STRUX_TRY(strux_comm_agree(comm, strux_alloc_array(&counts, 3 * (size_t)R, sizeof *counts)));
    if (p) {
        int64_t n;
        const int64_t *a, *c;
        const int32_t *b;
        int32_t mf, ml;
        strux_libsvm_part_rows(p, &n, &a, &b, &c, &mf, &ml);
        counts[rank] = strux_libsvm_part_lines(p);
        counts[R + rank] = n;
    }
    counts[2 * R + rank] = st == STRUX_OK ? 0 : p ? 2 : 1;
    strux_status sc = strux_comm_allreduce_sum_i64(comm, counts, 3 * (int64_t)R);
    if (sc != STRUX_OK) {
        strux_free(&counts);
        strux_libsvm_part_destroy(&p);
        return sc;
    }
    int64_t first_line = 1, first = 0, n_rows = 0;
    int failing = -1;
    for (int q = 0; q < R; q++) {
        if (failing < 0 && counts[2 * R + q]) failing = q;
        if (q < rank) first_line += counts[q], first += counts[R + q];
        n_rows += counts[R + q];
    }
    /* the first failing rank's message with the line's number in the file */
    if (rank == failing && p) st = strux_libsvm_part_error(p, first_line);
    st = strux_comm_agree(comm, st);
    if (st == STRUX_OK)
        st = join_rows(comm, p, first, n_rows, &nnz, &nlab, &off, &max_feature, &max_label);
    if (st == STRUX_OK)
        st = strux_comm_agree(comm, strux_libsvm_part_read(p, n_rows, nnz, nlab, off, max_feature,
                                                           max_label, out));
    if (st == STRUX_OK)
        strux_log_all(STRUX_LOG_INFO,
                  "%s: rank %d scanned bytes %lld..%lld (%lld lines from line %lld) and keeps "
                  "examples %lld..%lld",
                  path, rank, (long long)lo, (long long)(hi < 0 ? file_bytes : hi),
                  (long long)counts[rank], (long long)first_line, (long long)(*out)->first + 1,
                  (long long)((*out)->first + (*out)->n_local));
    strux_free(&counts);
    strux_free(&nnz);
    strux_free(&nlab);
    strux_free(&off);
    strux_libsvm_part_destroy(&p);
    return st;
}

strux_status strux_cli_dataset_load(strux_comm *comm, const char *path,
                                    const strux_read_options *opt, strux_dataset **out)
{
    *out = NULL;
    double split = strux_comm_size(comm) > 1 && plain_libsvm(path);
    double bytes = 0;
    if (split) {
        strux_text_reader *r = NULL;
        if (strux_text_reader_open(path, &r) == STRUX_OK)
            bytes = (double)strux_text_reader_file_bytes(r);
        strux_text_reader_close(&r);
    }
    double v[2] = {-split, bytes}; /* every rank the same way: all can split, or none does */
    STRUX_TRY(strux_comm_allreduce_max(comm, v, 2));
    if (v[0] < 0)
        STRUX_TRY(read_in_parts(comm, path, opt, (int64_t)v[1], out));
    else
        STRUX_TRY(strux_comm_agree(comm, strux_io_dataset_load(path, opt, out)));
    if (v[0] < 0 && opt->normalize) strux_dataset_normalize_rows(*out);
    return STRUX_OK;
}
