/* strux/io.h - files strux writes and reads besides text data: the HDF5 model (schema in
 * docs/model-format.md), the HDF5 CSR dataset container (`strux convert`), the training curve and
 * the JSON-lines metrics log. The only module that includes <hdf5.h>. Files are written atomically:
 * HDF5 files are built in memory, then every file goes to a temporary name in the same directory,
 * is fsync'ed and renamed (rename(2)), and the directory is fsync'ed; on failure nothing is left
 * behind. Files read are checked before use: every attribute against the integer type it is
 * narrowed to and against the arrays it describes, weights for finiteness (STRUX_ERR_INPUT naming
 * the file, the attribute or dataset and both sizes). */
#ifndef STRUX_IO_H
#define STRUX_IO_H

#include "strux/data.h"
#include "strux/hierarchy.h"
#include "strux/kernel.h"
#include "strux/model.h"

/* ---- training curve: named columns, one row per epoch ---- */
#define STRUX_CURVE_MAX_COLS 48
#define STRUX_CURVE_NAME 64
typedef struct strux_curve {
    int n_cols;
    char names[STRUX_CURVE_MAX_COLS][STRUX_CURVE_NAME]; /* column names, owned */
    double *v;                                          /* n_rows × n_cols, row-major */
    int64_t n_rows, cap;
} strux_curve;

/* Start a curve with the given column names (NULL-terminated list, copied). */
strux_status strux_curve_init(strux_curve *c, const char *const *names);
/* Add a column (before the first row); its index goes to *col. A name already present is an
 * error (two hooks filling one column). */
strux_status strux_curve_add_column(strux_curve *c, const char *name, int *col);
/* Index of the named column, −1 when absent. */
int strux_curve_column(const strux_curve *c, const char *name);
strux_status strux_curve_append(strux_curve *c, const double *row);
void strux_curve_free(strux_curve *c);

/* ---- model file ---- */
/* M3L's prior as the model was trained with it (/m3l, docs/model-format.md); n_labels = 0 when
 * the model is not an m3l model. */
typedef struct strux_m3l_info {
    int32_t n_labels;   /* L; 0: none */
    double *R;          /* L×L row-major, as used (after shrinkage), owned */
    char prior[32];     /* m3l.prior */
    char empirical[32]; /* m3l.empirical ("" unless prior = empirical) */
    char source[2200];  /* where R came from, as the training log says */
    double shrink;      /* m3l.shrink */
    double eig_min, eig_max;
    double lambda;      /* solver.lambda */
    double C_paper;     /* the paper's C = 1/(2λn) */
    strux_kexp kexp;    /* solver.type = m3l_kernel: the kernel expansion (/m3l/kernel, /m3l/sv,
                           /m3l/alpha, /m3l/coef), owned; kexp.n_labels = 0 for a linear model */
} strux_m3l_info;
/* Rate-constrained training (issue 15; /rates, src/io/model_rates.c): the constraint table, the
 * multipliers and the randomised classifier. m = 0: no /rates group. */
typedef struct strux_rates_store {
    int32_t m;           /* constraints */
    char **names;        /* m constraint names, config order */
    char **texts;        /* m constraint expressions as written */
    int32_t n_defs;      /* [datasets] definitions */
    char **def_names;    /* n_defs names, config order */
    char **def_texts;    /* n_defs definitions as written */
    char **canonical;    /* m + 1 canonical rows as text, the objective first */
    double *v;           /* m multipliers of the last multiplier search */
    double *train_ramp;  /* m: ramp (randomised) train value − bound at the returned model */
    double *train_value; /* m: indicator (deterministic) train value − bound */
    double *test_value;  /* m: the same on data.test (NaN: none, or a set not evaluable there) */
    int32_t n_violated;  /* constraints still violated at the end (rates.on_violation = keep) */
    double v_max;        /* the multiplier box at the end */
    int64_t mm_steps;    /* MM steps run */
    int32_t n_mix;       /* iterates of the randomised classifier (LP dual weight > 0, ≤ m + 1) */
    int64_t n_w;         /* weights per iterate: n_rows·dim, label-major, as /weights */
    double *mix_w;       /* n_mix × n_w */
    double *mix_mu;      /* n_mix weights, summing to 1 */
    int32_t n_base;      /* baselines (`baseline PATH` datasets), in order of first use */
    char **base_paths;   /* n_base paths as written */
    int32_t *base_is_model; /* n_base: 1 for a binary model (its weights below), 0 for a file of
                               training predictions */
    double *base_w;      /* n_base × n_w: the models' weights (zeros for a prediction file) */
} strux_rates_store;

void strux_rates_store_free(strux_rates_store *s);

typedef struct strux_model_info {
    char task[64], surrogate[64], search[64], solver[64];
    char *config;       /* the fully resolved config as INI text, owned */
    char **label_names; /* n_labels entries (entries may be NULL), or NULL, owned */
    int32_t n_labels;
    int32_t n_ranks; /* ranks of the training run */
    int64_t seed;
    double wall_time_s;  /* training wall time */
    char created[32];    /* ISO 8601 UTC */
    char version[32];    /* strux version */
    char git_commit[48]; /* "unknown" outside a git checkout */
    strux_curve curve;   /* per-epoch training curve, owned */
    strux_precision precision; /* type of /weights on disk (output.precision; read: as stored) */
    int weights_csr; /* the weights as /weights_csr (output.weights = csr; read: as stored) */
    /* rta: the tree ensemble (/rta), owned; n_trees = 0 otherwise */
    strux_tree_set trees;
    /* hierarchy: the hierarchy and α (/hierarchy), owned; n_nodes = 0 otherwise */
    strux_hier_stored hier;
    strux_m3l_info m3l; /* m3l: the prior (/m3l) */
    /* rate constraints (/rates), owned; m = 0 otherwise */
    strux_rates_store rates;
} strux_model_info;

void strux_model_info_free(strux_model_info *info);

/* Write model and info to path atomically. Not Collective (call on one rank). */
strux_status strux_io_model_save(const char *path, const strux_model *m,
                                 const strux_model_info *info);
/* Read a model file; *m and info are owned by the caller. Not Collective. */
strux_status strux_io_model_load(const char *path, strux_model **m, strux_model_info *info);
/* Only the stored config (/config, INI text, owned by the caller) of a model file or checkpoint,
 * after the same format checks: what `train --resume` needs before the checkpoint is read. */
strux_status strux_io_model_config(const char *path, char **config);

/* ---- checkpoints (docs/model-format.md "Checkpoints"): a complete model file (the exported
 * weights: predict, eval and inspect work on a checkpoint) plus /checkpoint holding the weights
 * in training space, the run's position, one opaque blob of the state every rank shares and one
 * per data block (the state of its examples), so a run resumes at any rank count that can share
 * the blocks ---- */
typedef struct strux_checkpoint_info {
    int64_t epoch;            /* epochs completed */
    int32_t n_ranks;          /* ranks of the run that wrote it (information) */
    int32_t n_blocks;         /* data blocks (the CoCoA+ partition) of the run that wrote it */
    int64_t n_examples;       /* training examples, each with its state record */
    double train_s;           /* training time so far */
    int64_t oracle_calls;     /* oracle calls so far, all ranks */
    int64_t data_fingerprint; /* of the training data (strux_dataset_fingerprint, combined) */
} strux_checkpoint_info;

typedef struct strux_checkpoint_writer strux_checkpoint_writer;
/* Create path's temporary file and write the model file (m, info), /checkpoint (ck, the
 * training-space weights w_train) and the shared blob. Then add the per-example state records of
 * every example, in parts of ascending global example ids, and end. Not Collective (rank 0). */
strux_status strux_io_checkpoint_begin(const char *path, const strux_model *m,
                                       const strux_model_info *info, const strux_model *w_train,
                                       const strux_checkpoint_info *ck, const strux_blob *shared,
                                       strux_checkpoint_writer **out);
/* The records of global examples [first, first + n): example first + k's record is bytes
 * [offsets[k], offsets[k+1]) of data (offsets[0] = 0, n + 1 entries); first must be where the
 * previous part ended (0 for the first). */
strux_status strux_io_checkpoint_add_examples(strux_checkpoint_writer *w, int64_t first, int64_t n,
                                              const int64_t *offsets, const void *data);
/* Rename the file into place when st is STRUX_OK (and the parts cover every example), else remove
 * it; returns st or the failure of finishing. */
strux_status strux_io_checkpoint_end(strux_checkpoint_writer **w, strux_status st);
/* Read /checkpoint: the position, the training-space weights into w_train (same shape) and the
 * shared blob (appended to shared). Not Collective. */
strux_status strux_io_checkpoint_read(const char *path, strux_checkpoint_info *ck,
                                      strux_model *w_train, strux_blob *shared);
/* Only the attributes of /checkpoint (position, ranks, blocks, examples): what `train --resume`
 * needs before it shards the data. Not Collective. */
strux_status strux_io_checkpoint_peek(const char *path, strux_checkpoint_info *ck);
/* The records of global examples [first, first + n), whatever parts the writer cut them into
 * (any rank count and blocks): their bytes appended to state, example first + k's record at
 * state bytes [offsets[k], offsets[k+1]) (n + 1 entries, absolute positions in state).
 * STRUX_ERR_INPUT naming the file when the range is not in it or its parts are inconsistent.
 * Not Collective. */
strux_status strux_io_checkpoint_read_examples(const char *path, int64_t first, int64_t n,
                                               int64_t *offsets, strux_blob *state);

/* ---- HDF5 CSR dataset container ---- */
/* Write ds (all rows must be local: a 1-rank read) atomically. Not Collective. */
strux_status strux_io_dataset_save(const char *path, const strux_dataset *ds);
/* Read this rank's rows (balanced by non-zeros like the text reader) with the same options and
 * checks as strux_dataset_read_libsvm. Not Collective. */
strux_status strux_io_dataset_read(const char *path, const strux_read_options *opt,
                                   strux_dataset **out);
/* The same container written one row at a time, memory independent of the row count (strux gen
 * --shape): open declares the rows and sizes and creates path's temporary; add appends the next
 * row (nnz ascending 0-based columns and values, n_labels ascending label ids; not checked);
 * close with st = STRUX_OK and every declared row added moves the file into place atomically,
 * otherwise (or when finishing fails) removes the temporary; it returns st or that failure and
 * frees *w. Errors: STRUX_ERR_IO naming path (a full disk: "disk full writing PATH (needs about N
 * MB)"), STRUX_ERR_NOMEM; STRUX_ERR_INTERNAL for more or fewer rows than declared. Not
 * Collective. */
typedef struct strux_dataset_writer strux_dataset_writer;
strux_status strux_io_dataset_writer_open(const char *path, int64_t n_rows, int32_t dim,
                                          int32_t n_labels, strux_dataset_writer **w);
strux_status strux_io_dataset_writer_add(strux_dataset_writer *w, int32_t nnz, const int32_t *col,
                                         const float *val, int32_t n_labels, const int32_t *labels);
strux_status strux_io_dataset_writer_close(strux_dataset_writer **w, strux_status st);
/* What a data file tells of its size without reading its rows (memory estimates before
 * loading): an HDF5 container its attributes and array lengths (exact = 1); a text file its
 * bytes and a non-zero count guessed from them (exact = 0; rows, features and labels from an
 * XMC header line "N D L", else 0). */
typedef struct strux_data_peek {
    int exact;
    int64_t n_rows, dim, n_labels, nnz, label_nnz;
    int64_t file_bytes;
} strux_data_peek;
strux_status strux_io_dataset_peek(const char *path, strux_data_peek *out);
/* Nonzero if path is an HDF5 file (by its signature). */
int strux_io_is_hdf5(const char *path);
/* Read by content: HDF5, SVM-hmm text (first data line `tag qid:n ...`) or LIBSVM/XMC text. */
strux_status strux_io_dataset_load(const char *path, const strux_read_options *opt,
                                   strux_dataset **out);

/* ---- atomic files and the metrics log ---- */
/* "<path>.tmp.<pid>" into buf. */
void strux_io_temp_name(const char *path, char *buf, size_t n);
/* fsync tmp, rename it to path and fsync path's directory; on failure remove tmp and fail
 * (ENOSPC and EDQUOT as "disk full writing PATH (needs about N MB)"). */
strux_status strux_io_commit(const char *tmp, const char *path);
/* Write n bytes to path atomically: temporary file in path's directory (created as needed),
 * fsync, rename, fsync of the directory. On any failure the temporary is removed, path is left as
 * it was, and STRUX_ERR_IO names path (a full disk or quota: "disk full writing PATH (needs about
 * N MB)"). Not Collective. */
strux_status strux_io_write_atomic(const char *path, const void *bytes, size_t n);
/* An output written in pieces, too large to hold in memory (strux gen's text): open creates a
 * temporary in path's directory (created as needed); write appends (gathered up to 1 MiB);
 * close with st = STRUX_OK syncs the file and moves it into place atomically, otherwise, or
 * when a write failed, removes the temporary; it returns st or the first write's failure
 * ("disk full writing PATH (needs about N MB)", N the bytes given so far) and frees *f. A
 * failed write returns its error at once as well. Not Collective. */
typedef struct strux_io_file strux_io_file;
strux_status strux_io_file_open(const char *path, strux_io_file **f);
strux_status strux_io_file_write(strux_io_file *f, const void *bytes, size_t n);
strux_status strux_io_file_close(strux_io_file **f, strux_status st);
/* Can path be an output? STRUX_ERR_IO naming path and the reason when it resolves (same device
 * and inode) to any of the n_inputs input files (NULL or "" entries are skipped), when it is a
 * device, a FIFO, a socket or an existing directory, or when its directory neither exists nor can
 * be created, or is not writable. Creates nothing. Call it before reading any input, so a bad
 * output fails in seconds, not after training. Not Collective (call on the rank that writes). */
strux_status strux_io_check_output(const char *path, const char *const *inputs, int n_inputs);
/* Create the directories leading to path (like mkdir -p of its dirname). */
strux_status strux_io_make_parent(const char *path);

typedef struct strux_metrics strux_metrics;
/* Open a JSON-lines log (truncate, or append when append is nonzero) under an exclusive lock
 * (flock): STRUX_ERR_IO naming path when another run holds it, so two runs never interleave
 * their lines. The lock lasts until strux_metrics_close. */
strux_status strux_metrics_open(const char *path, int append, strux_metrics **out);
/* One line: {"name": value, ...} from the curve's last row. */
strux_status strux_metrics_write_row(strux_metrics *f, const strux_curve *c);
/* Every row of the curve, in order (a resumed run rewrites the log up to its checkpoint). */
strux_status strux_metrics_write_all(strux_metrics *f, const strux_curve *c);
void strux_metrics_close(strux_metrics **f);

#endif
