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
/* Byte offset in the (decompressed) text of the line last returned, or of the line whose read
 * failed. */
int64_t strux_text_reader_offset(const strux_text_reader *r);
/* Continue at byte offset of the text, counting the line there as line_no + 1 (a reader of part
 * of a file; on gzip input zlib decompresses up to offset). STRUX_ERR_IO when it cannot. */
strux_status strux_text_reader_seek(strux_text_reader *r, int64_t offset, int64_t line_no);
/* Discard the text up to and including the next newline, unchecked (the rest of a line that
 * another reader owns); the line count does not move. */
strux_status strux_text_reader_skip_line(strux_text_reader *r);
/* 1 when the file is plain text (byte offsets are file offsets: it can be read in parts), 0
 * for gzip. */
int strux_text_reader_is_plain(strux_text_reader *r);
/* Size of the file on disk. */
int64_t strux_text_reader_file_bytes(const strux_text_reader *r);
/* The path given to open (owned by the reader). */
const char *strux_text_reader_path(const strux_text_reader *r);
/* Close the file and free the reader; NULL allowed; sets *r = NULL. */
void strux_text_reader_close(strux_text_reader **r);

/* The same file read in parts, one per rank (cli/data_read.c joins them over the ranks of a job):
 * strux_libsvm_part_scan validates the lines that start in bytes [lo, hi) of a plain file (hi <
 * 0: to the end; line 1 is read for the XMC header's facts first) as strux_dataset_read_libsvm
 * does, and keeps each one's non-zeros, labels and byte offset. Line numbers there count from the
 * part's first line; when a line fails, *out still holds the part (the lines before it and where
 * it is) with the status, so that strux_libsvm_part_error, given the line number in the file of
 * the part's first line, can repeat the failure with its true line number. The file-wide facts
 * (rows, largest feature and label, each row's counts and offset, every rank's) then go to
 * strux_libsvm_part_read, which makes the file-wide checks and the partition as
 * strux_dataset_read_libsvm does, and reads this rank's rows from their offset. Other errors:
 * unreadable file (*out NULL), STRUX_ERR_NOMEM. Not Collective. */
typedef struct strux_libsvm_part strux_libsvm_part;
strux_status strux_libsvm_part_scan(const char *path, const strux_read_options *opt, int64_t lo,
                                    int64_t hi, strux_libsvm_part **out);
/* Lines of the part read without error (the header included). */
int64_t strux_libsvm_part_lines(const strux_libsvm_part *p);
/* Its examples: count, and per example non-zeros, labels, byte offset (borrowed); its largest
 * feature index and label id (−1: none). */
void strux_libsvm_part_rows(const strux_libsvm_part *p, int64_t *n_rows, const int64_t **row_nnz,
                            const int32_t **row_nlab, const int64_t **row_off, int32_t *max_feature,
                            int32_t *max_label);
strux_status strux_libsvm_part_error(const strux_libsvm_part *p, int64_t first_line);
strux_status strux_libsvm_part_read(strux_libsvm_part *p, int64_t n_rows, const int64_t *row_nnz,
                                    const int32_t *row_nlab, const int64_t *row_off,
                                    int32_t max_feature, int32_t max_label, strux_dataset **out);
void strux_libsvm_part_destroy(strux_libsvm_part **p);

/* The same file in bounded memory, for copying it elsewhere (strux convert): open validates
 * every line in a first pass that keeps only the file's facts (the same checks and errors as
 * strux_dataset_read_libsvm, with opt->n_ranks = 1), calling progress(ctx, byte, file bytes)
 * every 1,024 lines (may be NULL; gzip: the decompressed byte against the compressed size);
 * next then hands out the examples in order, up to max_rows at a time and no more once max_nnz
 * non-zeros are in, in a chunk whose arrays it grows as needed (n_rows = 0 at the end). Memory: one chunk and one line, whatever the file's
 * size. Not Collective. */
typedef struct strux_libsvm_facts {
    int64_t n_rows;
    int32_t dim, n_labels;
    int64_t nnz, n_label_ids; /* non-zeros and label ids of the whole file */
} strux_libsvm_facts;
typedef struct strux_libsvm_chunk {
    int64_t n_rows, nnz, n_label_ids;
    int64_t *row_nnz;  /* [n_rows] non-zeros per example */
    int32_t *row_nlab; /* [n_rows] label ids per example */
    int32_t *col;      /* [nnz] 0-based feature columns, row after row */
    float *val;        /* [nnz] */
    int32_t *lab;      /* [n_label_ids] label ids, ascending per row */
    int64_t rows_cap, nlab_cap, col_cap, val_cap, lab_cap;
} strux_libsvm_chunk;
typedef struct strux_libsvm_stream strux_libsvm_stream;
typedef void (*strux_bytes_progress_fn)(void *ctx, int64_t done, int64_t total);
strux_status strux_libsvm_stream_open(const char *path, const strux_read_options *opt,
                                      strux_bytes_progress_fn progress, void *ctx,
                                      strux_libsvm_stream **out, strux_libsvm_facts *facts);
strux_status strux_libsvm_stream_next(strux_libsvm_stream *s, int64_t max_rows, int64_t max_nnz,
                                      strux_libsvm_chunk *c);
void strux_libsvm_stream_close(strux_libsvm_stream **s);
void strux_libsvm_chunk_free(strux_libsvm_chunk *c);

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

/* ---- synthetic hierarchical data (data/synth_hier.c, `strux gen --shape`) ----
 * A label hierarchy with node ids 0..M−1 (root 0, every edge from a smaller id to a larger one)
 * and rows generated one at a time, each from the counter-based RNG keyed by (seed, row) alone:
 * rows [a, b) are the same whichever calls generate them, so a split is the same set at another
 * first row. Shapes (their definitions are in synth_hier.c's header):
 *   balanced, unbalanced: hierarchical.md §7.2 B and U; labels l = argmax of planted path scores
 *     (B), the region of recursive hyperplane cuts (U); dense N(0, 1) rows, unit norm for U only;
 *   random: a random tree of M nodes with P extra parent edges (a DAG), sparse Zipf tf-idf rows,
 *     labels from planted node weights (the argmax leaf, and for R > 1 every leaf above a
 *     calibrated threshold);
 *   swiki: LSHTC SWIKI-2011's shape at a scale: a DAG of 50,312 nodes with 36,504 leaves, 456,886
 *     documents, 346,299 features (each × scale), 1.8 leaf labels per document on average with
 *     power-law frequencies, Zipf document frequencies, unit-norm tf-idf rows, features drawn
 *     from the keywords of the nodes above a document's leaves (a planted sparse hierarchical
 *     model). */
typedef enum strux_hier_shape {
    STRUX_SHAPE_BALANCED,
    STRUX_SHAPE_UNBALANCED,
    STRUX_SHAPE_RANDOM,
    STRUX_SHAPE_SWIKI
} strux_hier_shape;

/* SWIKI-2011 (LSHTC; hierarchical.md §7.1) at scale 1. */
#define STRUX_SWIKI_NODES 50312
#define STRUX_SWIKI_LEAVES 36504
#define STRUX_SWIKI_DOCS 456886
#define STRUX_SWIKI_FEATURES 346299
#define STRUX_SWIKI_LABELS_MAX 64 /* leaf labels of one document */

typedef struct strux_hier_gen_options {
    strux_hier_shape shape;
    int64_t n_rows;        /* rows to generate, > 0 */
    int64_t first_row;     /* global index of the first of them, ≥ 0 */
    int32_t dim;           /* features D (balanced, unbalanced, random; swiki: from scale) */
    int32_t depth;         /* balanced: levels K ≥ 2 (root = level 1): 2^K − 1 nodes;
                              random: the tree's largest depth, 0 for none */
    int32_t cuts;          /* unbalanced: hyperplane cuts C: 2C + 1 nodes, C + 1 leaves */
    int32_t n_nodes;       /* random: M ≥ 3 */
    int64_t extra_parents; /* random: extra parent edges P (a DAG when P > 0) */
    double labels_per_row; /* random, swiki: mean leaf labels per row in [1, 32] (1: one leaf) */
    int32_t nnz;           /* random: non-zeros per row; swiki: their mean; in [1, D/2] */
    double scale;          /* swiki: sizes × scale, in [0.01, 1] */
    uint64_t seed;         /* the hierarchy, the model and every row's draws */
} strux_hier_gen_options;

/* What a generator made: sizes, the hierarchy's edges in file order (borrowed, valid until
 * destroy) and the hierarchy built from them. */
typedef struct strux_hier_gen_info {
    int32_t n_nodes, n_leaves; /* M, |ℒ| */
    int32_t dim;               /* D */
    int64_t n_edges;
    const int64_t *parent, *child; /* [n_edges] file ids */
    const struct strux_hierarchy *h;
    int32_t max_nnz;    /* non-zeros of a row, at most */
    int32_t max_labels; /* labels of a row, at most */
    int closures;       /* 1: labels are closures without the root; 0 (swiki): leaves only */
} strux_hier_gen_info;

typedef struct strux_hier_gen strux_hier_gen;

/* round(full × scale): a swiki size at a scale. */
int32_t strux_hier_gen_swiki_size(int64_t full, double scale);
/* Check ranges and combinations; STRUX_ERR_CONFIG names the option and its value. */
strux_status strux_hier_gen_options_check(const strux_hier_gen_options *opt);
/* Build the hierarchy and the planted model (memory: O(M·D) doubles for balanced, O(C·D) for
 * unbalanced, O(D) for random and swiki; never the rows). *out owned by the caller. Errors:
 * STRUX_ERR_CONFIG (as strux_hier_gen_options_check; random: more labels per row than half the
 * leaves), STRUX_ERR_NOMEM. Not Collective. */
strux_status strux_hier_gen_create(const strux_hier_gen_options *opt, strux_hier_gen **out);
const strux_hier_gen_info *strux_hier_gen_get_info(const strux_hier_gen *g);
/* Global row `row`: *nnz ≤ max_nnz ascending distinct 0-based columns and values into col/val,
 * *n_labels ≤ max_labels ascending node ids into labels (closures without the root, or swiki's
 * leaves). No allocation. Errors: STRUX_ERR_INTERNAL only. */
strux_status strux_hier_gen_row(strux_hier_gen *g, int64_t row, int32_t *col, float *val,
                                int32_t *nnz, int32_t *labels, int32_t *n_labels);
void strux_hier_gen_destroy(strux_hier_gen **g);

/* ---- zero-shot data (data/synth_zeroshot.c, `strux gen --zero-shot`; specs/m3l.md §7.1 (i)):
 * disjoint training and test categories with ±1 attribute signatures whose paired attributes
 * (2j, 2j + 1) correlate with one sign on the training categories and the other on the test
 * categories, dense Gaussian features around category means built from the signatures plus a
 * category offset. ---- */
typedef struct strux_zeroshot_options {
    int64_t train_rows, test_rows; /* rows of each set, > 0 */
    int32_t dim;                   /* dense features D, > 0 */
    int32_t n_labels;              /* attributes L, > 0 */
    int32_t train_classes, test_classes; /* categories of each set, > 0 */
    double train_corr;             /* pair correlation on training categories, in [0, 1] */
    double test_corr;              /* its negative on test categories, in [0, 1] */
    double noise;                  /* per-feature noise std of a row around its category mean */
    double spread;                 /* per-feature std of a category's own offset */
    uint64_t seed;
} strux_zeroshot_options;
/* STRUX_ERR_CONFIG naming the option out of range. Not Collective. */
strux_status strux_zeroshot_check(const strux_zeroshot_options *o);
/* The training and test sets (1-rank datasets, no bias), the test categories' shares of the test
 * rows into test_p (test_classes entries) and their signatures into test_signatures
 * (test_classes × L, ±1). Errors: as strux_zeroshot_check, STRUX_ERR_NOMEM. Not Collective. */
strux_status strux_zeroshot_generate(const strux_zeroshot_options *o, strux_dataset **train,
                                     strux_dataset **test, double *test_p,
                                     signed char *test_signatures);

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
