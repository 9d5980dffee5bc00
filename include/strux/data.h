/* strux/data.h - datasets: sparse features plus label sets, sharded over ranks by contiguous row
 * ranges balanced by non-zeros (ARCHITECTURE.md §4). The dataset is a plain struct (LIBLINEAR's
 * struct problem): solvers and tasks read it in their inner loops. Knows nothing of MPI: every
 * rank computes the same partition from the same file, so no communication is needed to agree on
 * it. The HDF5 container reader lives in src/io (the only module that includes <hdf5.h>). */
#ifndef STRUX_DATA_H
#define STRUX_DATA_H

#include "strux/linalg.h"

typedef struct strux_dataset {
    char *path;        /* where it was read from (messages) */
    strux_csr x;       /* local feature rows, 0-based columns */
    int64_t *y_ptr;    /* x.n_rows + 1 offsets: labels of row r are y_idx[y_ptr[r]..y_ptr[r+1]) */
    int32_t *y_idx;    /* ascending label ids in [0, n_labels) */
    int64_t *ex_ptr;   /* NULL: one row per example; else n_local + 1 row offsets per example */
    int64_t n_local;   /* examples on this rank */
    int64_t n_global;  /* examples in the whole file */
    int64_t first;     /* global index of the first local example */
    int32_t dim;       /* feature columns, bias included */
    int32_t n_labels;  /* label ids are in [0, n_labels) */
    int32_t bias_col;  /* column of the constant bias feature, or -1 */
    int64_t n_dropped; /* local feature entries dropped because their index exceeded dim */
    int32_t n_blocks;  /* data blocks of the whole file (solver.blocks, or one per rank) */
    int32_t block_lo, block_hi; /* this rank's blocks [block_lo, block_hi) */
    int64_t *block_ptr;         /* n_blocks + 1 global example offsets of the blocks, or NULL:
                                   one block of the local examples (datasets built in memory) */
    double *weight;    /* loss weight v_i of each local example, or NULL: all 1 (data.weights) */
    double weight_sum; /* W = Σ v_i over every example of the file (n_global when unweighted) */
} strux_dataset;

/* The loss weight of local example i: the objective is (λ/2)||w||² + (1/W)·Σ_i v_i·ℓ_i(w), so
 * weight 2 on an example is the same problem as the example twice. */
static inline double strux_dataset_weight(const strux_dataset *ds, int64_t i)
{
    return ds->weight ? ds->weight[i] : 1.0;
}

typedef struct strux_read_options {
    int rank, n_ranks;  /* which shard to keep */
    int32_t dim;        /* > 0: features 1..dim (file numbering); 0: from the header or the data */
    int32_t n_labels;   /* > 0: label count; 0: from the header or the data (max id + 1) */
    int drop_above_dim; /* nonzero: features above dim are dropped and counted (test data);
                           zero: they are an input error */
    double bias;        /* > 0: append a constant feature of this value as column dim */
    int32_t n_blocks;   /* > 0: cut the examples into this many fixed blocks (balanced by
                           non-zeros, independent of the rank count) and give each rank whole
                           blocks; 0: one block per rank */
    int32_t max_features; /* > 0: a feature index above it is an input error (dropped or not),
                             checked before anything is sized by it; 0: the XMC header's D if
                             there is one, else 2^31 - 3 (the largest index of any file) */
    int binary_labels;    /* nonzero (task binary): the label token is one of +1, 1 (label id 1,
                             positive), -1, 0 (label id 0, negative); a line starting with a
                             space is unlabeled; two label ids. LIBSVM text only. */
    const char *dim_origin; /* what set dim, ending the error of an index above it (" of the
                               model M ..."); NULL: the header or the config */
    int normalize;          /* nonzero (data.normalize = l2): each row's features divided by
                               their l2 norm after reading, the bias left alone (all-zero rows
                               stay zero); strux_io_dataset_load applies it */
} strux_read_options;

/* ---- one text line reader (data/text.c) under every text format: LIBSVM/XMC, SVM-hmm, and
 * `parent child` edge lists. Plain or gzip (told apart by the gzip magic, not the name); one line
 * at a time with its 1-based number, the line end (LF or CRLF) stripped, a last line without a
 * newline included. Errors (naming the file, and the line where there is one): a path that is a
 * directory or not a regular file (STRUX_ERR_IO, checked with stat before opening, so a FIFO never
 * blocks), a path that cannot be opened (STRUX_ERR_INPUT "cannot open for reading"), a NUL byte in
 * a line, a line longer than STRUX_TEXT_MAX_LINE, a truncated or corrupt gzip stream (naming the
 * compressed byte zlib stopped at), all STRUX_ERR_INPUT; a failed read(2) is STRUX_ERR_IO.
 * Not Collective. ---- */
typedef struct strux_text_reader strux_text_reader;

/* Longest line accepted, newline excluded: the line buffer grows geometrically up to it. */
#define STRUX_TEXT_MAX_LINE ((size_t)256 << 20)

/* Open path for reading; the caller closes *out. path is copied. */
strux_status strux_text_reader_open(const char *path, strux_text_reader **out);
/* Next line: *line points into the reader's buffer (NUL-terminated, writable, valid until the
 * next call, rewind or close), *len is its length without the line end. At end of file *line =
 * NULL and *len = 0 (still STRUX_OK). len may be NULL. */
strux_status strux_text_reader_next_line(strux_text_reader *r, char **line, size_t *len);
/* Back to the first line (line number 0 until the next line is read). */
strux_status strux_text_reader_rewind(strux_text_reader *r);
/* 1-based number of the line last returned (0 before the first). */
int64_t strux_text_reader_line_no(const strux_text_reader *r);
/* Byte offset of the line last returned in the (decompressed) text. */
int64_t strux_text_reader_offset(const strux_text_reader *r);
/* The path given to open (owned by the reader). */
const char *strux_text_reader_path(const strux_text_reader *r);
/* Close the file and free the reader; NULL allowed; sets *r = NULL. */
void strux_text_reader_close(strux_text_reader **r);

/* Read a LIBSVM/XMC multi-label text file (plain or gzip): `l1,l2 idx:val ...`, labels 0-based,
 * features 1-based ascending; an optional first line `N D L` (XMC header). Every rank parses the
 * whole file to validate it and balance the partition, and keeps only its own rows.
 * Errors (STRUX_ERR_INPUT, naming file and line): unreadable path, empty file, malformed token,
 * feature index ≤ 0 or above opt->max_features, non-ascending or duplicate indices, NaN/Inf or
 * |value| > 1e30, duplicate label, label ≥ n_labels, header disagreeing with the data, fewer
 * examples than ranks, and the text reader's errors (NUL byte, over-long line, truncated gzip;
 * STRUX_ERR_IO for a directory or non-regular file). Not Collective. */
strux_status strux_dataset_read_libsvm(const char *path, const strux_read_options *opt,
                                       strux_dataset **out);
/* Read an SVM-hmm sequence file (plain or gzip): `tag qid:n idx:val ... [# comment]`, one token
 * per line, tags 1-based in the file (0-based ids in the dataset), the tokens of a sequence
 * consecutive with one qid, qids ascending. Sequences are the examples: x and y_ptr/y_idx hold
 * one row (one tag) per token, ex_ptr groups the rows, and ranks share whole sequences balanced by
 * non-zeros. dim, bias and drop_above_dim as for strux_dataset_read_libsvm; opt->n_labels > 0
 * caps the tags. Errors (STRUX_ERR_INPUT, naming file and line): unreadable path, empty file,
 * malformed tag/qid/feature, tag < 1 or above n_labels, feature index ≤ 0 or above
 * opt->max_features, non-ascending or duplicate indices, NaN/Inf or |value| > 1e30, a qid that is
 * not contiguous or descends, fewer sequences than ranks, and the text reader's errors (as for
 * strux_dataset_read_libsvm). Not Collective. */
strux_status strux_dataset_read_svmhmm(const char *path, const strux_read_options *opt,
                                       strux_dataset **out);
/* Nonzero if the first data line of path (comment lines skipped) reads `tag qid:...`. */
int strux_dataset_is_svmhmm(const char *path);
void strux_dataset_destroy(strux_dataset **ds);

/* The partition of a file's n examples (weights as prefix sums, as below) into data blocks and
 * this rank's share: opt->n_blocks fixed blocks (or one per rank) balanced by weight, rank r
 * owning blocks [⌊r·B/R⌋, ⌊(r+1)·B/R⌋). Identical on every rank; B < R is an input error. */
typedef struct strux_shard {
    int64_t lo, hi;             /* this rank's examples [lo, hi) */
    int32_t n_blocks;           /* B */
    int32_t block_lo, block_hi; /* this rank's blocks */
    int64_t *block_ptr;         /* B + 1 global example offsets, owned */
} strux_shard;
strux_status strux_shard_plan(const int64_t *prefix, int64_t n, const strux_read_options *opt,
                              strux_shard *out);
void strux_shard_free(strux_shard *s);
/* Hand a plan's blocks to the dataset read with it (takes block_ptr). */
void strux_dataset_set_shard(strux_dataset *ds, strux_shard *s);
/* Data blocks of the file (1 for a dataset built in memory). */
int32_t strux_dataset_n_blocks(const strux_dataset *ds);
/* Local examples [i0, i1) of block k, block_lo ≤ k < block_hi. */
void strux_dataset_block_range(const strux_dataset *ds, int32_t k, int64_t *i0, int64_t *i1);

/* Shard of n units with weights given as prefix sums (prefix[0] = 0, prefix[n] = total): a
 * contiguous range [lo, hi) per rank, balanced by weight, never empty when n ≥ n_ranks.
 * Identical on every rank for the same input. */
strux_status strux_shard_range(const int64_t *prefix, int64_t n, int rank, int n_ranks, int64_t *lo,
                               int64_t *hi);

/* Build a dataset from arrays already in memory (HDF5 reader, generators, tests): takes ownership
 * of x, y_ptr and y_idx (set to NULL/zero in the caller). Appends the bias column if opt->bias > 0.
 */
strux_status strux_dataset_from_arrays(const char *path, strux_csr *x, int64_t **y_ptr,
                                       int32_t **y_idx, int64_t n_global, int64_t first,
                                       int32_t dim, int32_t n_labels, double bias,
                                       strux_dataset **out);

/* ---- synthetic multi-label data (data/synth.c, `strux gen`) ----
 * A planted sparse linear model: row i's features and label noise are drawn from the counter-based
 * RNG keyed by (seed, i), labels are thresholded planted scores, and the thresholds are calibrated
 * on a fixed sample; so rows [a, b) are the same whichever call generates them, and a test set is
 * the same model's rows at another first_row. */
typedef struct strux_gen_options {
    int64_t n_rows;        /* rows to generate, > 0 */
    int64_t first_row;     /* global index of the first of them, ≥ 0 */
    int32_t dim;           /* feature columns D, > 0 */
    int32_t n_labels;      /* labels L, > 0 */
    int32_t nnz;           /* non-zeros per row, in [1, D] */
    double labels_per_row; /* mean labels per row, in (0, L/2]: no label in over half the rows */
    double noise;          /* label noise: Gaussian std relative to each label's score std, ≥ 0 */
    uint64_t seed;         /* the planted model, the feature popularity and every row's draws */
} strux_gen_options;

/* Check ranges and combinations; STRUX_ERR_CONFIG names the option and its value.
 * Not Collective. */
strux_status strux_gen_options_check(const strux_gen_options *opt);
/* Generate rows [first_row, first_row + n_rows) as a 1-rank dataset (first = 0, no bias) named
 * "synthetic"; the caller destroys *out. Row i has exactly nnz features, ascending distinct
 * columns drawn with Zipf popularity, positive tf-idf-like values, unit L2 norm; label k is on
 * iff w*_k·x_i + σ_k ε_ik > τ_k, where w*_k has about 512 planted weights on popular features,
 * and label frequencies follow a power law of mean labels_per_row. Memory: the rows (8 bytes per
 * non-zero), 36 bytes per feature column, 4 KB per label (the planted model), and a calibration
 * sample of 64 MB (8 KB per label beyond 8192 labels). Time per row: O(nnz log nnz + L).
 * Errors: STRUX_ERR_CONFIG (as strux_gen_options_check), STRUX_ERR_NOMEM. Not Collective. */
strux_status strux_dataset_generate(const strux_gen_options *opt, strux_dataset **out);

/* ---- the synthetic churn problem (data/synth_churn.c, `strux gen DIR --kind churn`) ----
 * dataset_constraints.md §4.5's stand-in for the proprietary data of §4.2 at a tenth of its sizes:
 * 31 raw features from a Gaussian mixture, a non-linear ground truth with 10 % label noise, a
 * binning feature map to 2976 columns (31 entries of 1/√31 per row), a deployed linear model
 * trained on a separate old sample with a third of the features, D2 and D3 i.i.d. (D3
 * unlabeled), D1 sampled near the deployed boundary; each split 80/20 into train and test. */
typedef struct strux_churn_options {
    uint64_t seed;         /* every draw */
    int64_t n1, n2, n3;    /* sizes of D1, D2, D3 before the split (13184, 5388, 6889) */
} strux_churn_options;
typedef struct strux_churn {
    strux_dataset *train, *test; /* D1, D2, D3 rows in turn (no bias column; D3 unlabeled) */
    int64_t first[3][2];         /* D_k's first row in train [0] and test [1] */
    int64_t n_rows[3][2];        /* its rows there */
    int64_t n_pos[3][2];         /* its positive rows there (0 for D3) */
    int32_t dim;                 /* feature columns (2976) */
    double *w_dep;               /* the deployed model: dim weights, then the weight of a bias
                                    feature of value 1 */
} strux_churn;
/* Generate the problem (the caller frees it with strux_churn_free). STRUX_ERR_NOMEM; deterministic
 * for a seed. Not Collective. */
strux_status strux_churn_generate(const strux_churn_options *opt, strux_churn *out);
void strux_churn_free(strux_churn *c);

/* Per-example loss weights from a text file of one non-negative number per line, one line per
 * example of the whole file (in file order): the local slice goes to ds->weight, the sum over
 * every line to ds->weight_sum. Errors (STRUX_ERR_INPUT, file:line): a line that is not a finite
 * number ≥ 0, a line count other than ds->n_global, all weights zero; the text reader's errors.
 * Not Collective (every rank reads the whole file). */
strux_status strux_dataset_read_weights(strux_dataset *ds, const char *path);

/* This rank's share of the training data's fingerprint: the sum (mod 2^64, as two 32-bit halves
 * so an int64 allreduce adds them exactly) of a hash of every local example keyed by its global
 * index (its rows' columns and value bits, its labels, its loss weight). Summed over ranks it
 * does not depend on the rank count; checkpoints compare it on resume. Not Collective. */
void strux_dataset_fingerprint(const strux_dataset *ds, int64_t halves[2]);

/* Largest |x_ij| of every feature column over the local rows (out has ds->dim entries). */
void strux_dataset_col_maxabs(const strux_dataset *ds, double *out);
/* Multiply feature column j by factor[j] (the bias column is left alone). */
void strux_dataset_scale_cols(strux_dataset *ds, const double *factor);
/* data.normalize = l2: divide every row's feature values by their l2 norm (sum of squares in
 * double over the stored values in row order, the bias column excluded and kept as it is; an
 * all-zero row stays zero). */
void strux_dataset_normalize_rows(strux_dataset *ds);

/* A spanning-tree ensemble over the labels (task.type = rta, specs/rta.md §1.5-1.6) as plain
 * arrays: what a model file stores under /rta so predict and eval rebuild the ensemble instead of
 * drawing it again. n_trees = 0: none. Arrays owned (strux_tree_set_free). */
typedef struct strux_tree_set {
    int32_t n_trees;  /* n */
    int32_t n_labels; /* L: nodes per tree */
    int32_t n_edges;  /* |E_u| */
    int32_t *trees;   /* n·(L−1)·2: tree t's edges parent→child in root order */
    int32_t *edges;   /* |E_u|·2: union edges (i, j), i < j, ascending */
    int32_t *mult;    /* |E_u|: trees holding each union edge */
    int64_t kbest;    /* task.kbest */
    int64_t tree_seed;
    char sampler[16]; /* task.tree_sampler */
} strux_tree_set;
void strux_tree_set_free(strux_tree_set *ts);

/* Label names from a file of `id name` lines (labels.txt); names[k] = NULL where absent. */
strux_status strux_label_names_read(const char *path, int32_t n_labels, char ***names);
void strux_label_names_free(char ***names, int32_t n_labels);

#endif
