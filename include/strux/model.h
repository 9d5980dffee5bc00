/* strux/model.h - the weight store every task scores with (ARCHITECTURE.md §3): n_rows rows of
 * dim weights (one row per label, node, edge labelling or state) followed by n_extra free
 * parameters (transitions, pairwise potentials), behind kernels: nothing outside src/linalg/
 * computes a weight's address. A row is w_k = s_k·v_k, a stored vector v_k and a per-row scale s_k,
 * so scaling a row is O(1) and scaling the model O(n_rows + n_extra) (SGD's shrink, the hierarchy's
 * V = U/√α). The rows are stored label-major (v[k·dim + j]) or feature-major (v[j·n_rows + k],
 * LIBLINEAR's multi-class layout: an example touches nnz contiguous runs of n_rows) or sparse
 * (per row its non-zeros as ascending int32 columns and values, grown by the columns the kernels
 * add: about nnz × (4 + value size) bytes plus 24 per row; a row that fills past dim·size/(4 +
 * size) entries, 2/3 of dim for double and 1/2 for float, is stored dense), in double or
 * float (float stores, every sum accumulates in double); the free parameters are always double.
 * Every kernel is Not Collective; a model is replicated on every rank (the callers reduce). */
#ifndef STRUX_MODEL_H
#define STRUX_MODEL_H

#include "strux/linalg.h"

typedef struct strux_model strux_model;

typedef enum strux_layout {
    STRUX_LAYOUT_LABEL_MAJOR = 0,  /* row k contiguous */
    STRUX_LAYOUT_FEATURE_MAJOR = 1, /* feature j's n_rows weights contiguous */
    STRUX_LAYOUT_SPARSE = 2         /* per row: sorted columns and values, dense when full */
} strux_layout;

typedef enum strux_precision {
    STRUX_PRECISION_DOUBLE = 0,
    STRUX_PRECISION_FLOAT = 1 /* float stored, double accumulated */
} strux_precision;

typedef struct strux_model_kind {
    strux_layout layout;
    strux_precision precision;
} strux_model_kind;

/* label-major doubles: the layout of the /weights array of model files */
#define STRUX_MODEL_PLAIN ((strux_model_kind){STRUX_LAYOUT_LABEL_MAJOR, STRUX_PRECISION_DOUBLE})

/* Options of section [model]. */
typedef struct strux_model_options {
    char bias[STRUX_OPT_STR];      /* model.bias: none | regularised | free */
    char layout[STRUX_OPT_STR];    /* model.layout: auto | label_major | feature_major | sparse */
    char precision[STRUX_OPT_STR]; /* model.precision: double | float */
    double prune;                  /* model.prune: |w| below it dropped at export (0: none) */
    int64_t prune_every;           /* model.prune_every: also between epochs, every this many */
    char share[STRUX_OPT_STR];     /* model.share: auto | host | none */
    double bias_centre;            /* model.bias_centre: the bias weights' regulariser centre */
} strux_model_options;
extern const strux_opt_spec strux_model_opt_specs[]; /* section [model] */

/* The kind the options ask for a model of n_rows rows (model.layout = auto: feature_major for
 * several rows, every task scoring all rows of an example at once; label_major for one row). */
strux_model_kind strux_model_choose_kind(const strux_model_options *o, int32_t n_rows);
const char *strux_layout_name(strux_layout layout);
const char *strux_precision_name(strux_precision precision);

/* A zero model. STRUX_ERR_NOMEM names the bytes asked for. */
strux_status strux_model_create(int32_t n_rows, int32_t dim, int64_t n_extra,
                                strux_model_kind kind, strux_model **out);
/* A zero model of m's shape, kind and free column. */
strux_status strux_model_create_like(const strux_model *m, strux_model **out);
void strux_model_destroy(strux_model **m);

/* ---- views w + Δ (store_view.c) ---- */
/* A view of base (borrowed: it must outlive the view, and the view reads it, never writes it):
 * a model of base's shape whose row k reads base_k + Δ_k, every kernel that writes going into
 * the change Δ, a model of delta_kind of its own (sparse: about 12 bytes a changed weight). It
 * starts with Δ = 0. Its kind_of is base's; it has no storage for collectives, and row_norm2 on
 * it sums its row (O(row)). */
strux_status strux_model_create_view(const strux_model *base, strux_model_kind delta_kind,
                                     strux_model **out);
/* Δ ← 0 (its room kept for the next change): the view reads s_k·base_k again (its own row
 * scales, 1 unless the view was scaled, stay). */
void strux_model_view_reset(strux_model *view);
/* The change Δ since the last reset (owned by the view; its free parameters are the view's
 * minus the base's at the reset). Valid until the view is written again. */
strux_model *strux_model_view_delta(strux_model *view);
int strux_model_is_view(const strux_model *m);

/* ---- one copy per host (store_shared.c; model.share = host) ---- */
/* A block of memory the ranks of a host share, as the caller (src/dist: a window) provides it:
 * every call but base/writer is Collective over the ranks of the job. */
typedef struct strux_model_share {
    void *ctx;
    int writer;                 /* this rank writes the block (one per host) */
    void *(*base)(void *ctx);   /* the block's address in this process */
    size_t (*size)(void *ctx);  /* its bytes */
    /* at least bytes (the writer's value counts), the contents kept; the base may move */
    strux_status (*reserve)(void *ctx, size_t bytes);
    /* the writer's stores before it visible to every rank of the host */
    strux_status (*fence)(void *ctx);
} strux_model_share;
/* A zero model of this shape and kind whose stored values the ranks of a host share: a view
 * (see above) of a packed model in the block (dense values, or sparse rows as one CSR with room
 * for room_nnz entries at first, grown as needed), its change Δ private and sparse. Every kernel
 * reads base + Δ and writes Δ, as any view; strux_model_shared_add_sparse writes the block.
 * Collective. */
strux_status strux_model_create_shared(int32_t n_rows, int32_t dim, int64_t n_extra,
                                       strux_model_kind kind, const strux_model_share *share,
                                       int64_t room_nnz, strux_model **out);
int strux_model_is_shared(const strux_model *m);
/* This rank writes the host's block of shared model m. */
int strux_model_shared_writer(const strux_model *m);
/* w ← w + d for a shared model w, written once into the host's block: the writer merges its d
 * (and its Δ, normally empty) into the block, as strux_model_add_sparse would add them, every
 * rank's Δ is reset and its rows follow the block. d is read on the writer only. Collective. */
strux_status strux_model_shared_add_sparse(strux_model *w, const strux_sparse_rows *d);

int32_t strux_model_n_rows(const strux_model *m);
int32_t strux_model_dim(const strux_model *m);
int64_t strux_model_n_extra(const strux_model *m);
int64_t strux_model_n_w(const strux_model *m); /* n_rows·dim + n_extra */
strux_model_kind strux_model_kind_of(const strux_model *m);
size_t strux_model_bytes(const strux_model *m); /* storage of weights, scales and norms */
/* A column left out of the regulariser in every row (model.bias = free: the bias column), or −1. */
int32_t strux_model_free_col(const strux_model *m);
void strux_model_set_free_col(strux_model *m, int32_t col);
/* The regulariser's centre: (λ/2)||w − w0||² with w0 = value at column col of every row and 0
 * elsewhere (model.bias_centre on the bias column; value 0: the plain ||w||²). norm2 follows it. */
void strux_model_set_centre(strux_model *m, int32_t col, double value);
/* The centre's value (0 when none) and its column (−1 when none). */
double strux_model_centre_of(const strux_model *m, int32_t *col);
/* w ← w0 (zero with the centre; the dual solvers' start). */
void strux_model_centre(strux_model *m);
/* w ← w0 + a·(w − w0) (a new λ under the dual's fixed α; strux_model_scale without a centre). */
void strux_model_scale_about_centre(strux_model *m, double a);

/* ---- kernels on sparse rows x_r of a CSR (columns beyond dim are ignored) ---- */
/* out[j] = w_{k0+j}·x_r for j < n. */
void strux_model_scores(const strux_model *m, const strux_csr *x, int64_t r, int32_t k0, int32_t n,
                        double *out);
/* out[j] = w_{rows[j]}·x_r for j < n. */
void strux_model_scores_rows(const strux_model *m, const strux_csr *x, int64_t r,
                             const int32_t *rows, int32_t n, double *out);
/* w_{k0+j} += a·c[j]·x_r for j < n (rows with c[j] = 0 are not touched). */
void strux_model_add(strux_model *m, const strux_csr *x, int64_t r, int32_t k0, int32_t n,
                     double a, const double *c);
/* w_{rows[j]} += a·c[j]·x_r for j < n (distinct rows; rows with c[j] = 0 are not touched). */
void strux_model_add_rows(strux_model *m, const strux_csr *x, int64_t r, const int32_t *rows,
                          int32_t n, double a, const double *c);
/* w_k += c·x_r. */
void strux_model_add_row(strux_model *m, const strux_csr *x, int64_t r, int32_t k, double c);
/* The same when the caller knows score = w_k·x_r before the update and xx = ||x_r||² (over the
 * columns below dim): a double dense store then updates ||w_k||² from them (2c·score + c²·xx)
 * instead of entry by entry (a dual coordinate step's update: half the work per entry). */
void strux_model_add_row_scored(strux_model *m, const strux_csr *x, int64_t r, int32_t k, double c,
                                double score, double xx);
/* The n_extra free parameters (dense doubles, owned by m; writable through a non-const model). */
double *strux_model_extra(const strux_model *m);

/* ---- whole rows and models ---- */
/* ||w_k||², O(1) (kept up to date by every kernel). */
double strux_model_row_norm2(const strux_model *m, int32_t k);
/* The regulariser's ||w − w0||²: every weight but the free column's, free parameters included,
 * w0 the centre (0 unless set); summed from the stored values. */
double strux_model_norm2(const strux_model *m);
/* w_k ← a·w_k, O(1). */
void strux_model_scale_row(strux_model *m, int32_t k, double a);
/* w ← a·w, every weight. */
void strux_model_scale(strux_model *m, double a);
/* w ← a·w for every weight but the free column's (SGD's shrink). */
void strux_model_shrink(strux_model *m, double a);
/* Column j of every row times a[j] (j < dim). */
void strux_model_scale_cols(strux_model *m, const double *a);
void strux_model_zero(strux_model *m);
/* dst ← src; y += a·x; a·b. Models of one shape, any kinds (STRUX_ERR_INTERNAL otherwise). */
strux_status strux_model_copy(strux_model *dst, const strux_model *src);
strux_status strux_model_axpy(double a, const strux_model *x, strux_model *y);
double strux_model_dot(const strux_model *a, const strux_model *b);
/* Row k as dim dense doubles (scale applied) / set from dim doubles. */
void strux_model_get_row(const strux_model *m, int32_t k, double *out);
void strux_model_set_row(strux_model *m, int32_t k, const double *in);
/* Row k ← the n values val at ascending columns idx, every other weight 0 (scale 1). */
void strux_model_set_row_sparse(strux_model *m, int32_t k, int32_t n, const int32_t *idx,
                                const double *val);
/* The non-zeros of row k (scale applied) in ascending column order into idx/val (room for dim);
 * returns their count. */
int32_t strux_model_row_nonzeros(const strux_model *m, int32_t k, int32_t *idx, double *val);
/* The stored non-zeros of row k (O(dim) dense, O(its entries) sparse). */
int32_t strux_model_row_nnz(const strux_model *m, int32_t k);
/* out ← a·w as sparse rows: each row's non-zeros, the non-zero free parameters as row n_rows. */
strux_status strux_model_nonzero_rows(const strux_model *m, double a, strux_sparse_rows *out);
/* w_k += d_k for every row of d (row n_rows: the free parameters), as strux_model_axpy adds:
 * v_k += (1/s_k)·d_k; only the touched rows' norms are recomputed. */
void strux_model_add_sparse(strux_model *m, const strux_sparse_rows *d);
/* Drop every row weight with |w| < threshold (DiSMEC's pruning; the free parameters stay), the
 * sparse layout giving back their room; returns how many were dropped. */
int64_t strux_model_prune(strux_model *m, double threshold);
/* STRUX_ERR_NOMEM, naming the row and its size, once a sparse row could not grow (kernels
 * return nothing: that row's update was left out); STRUX_OK otherwise. Callers check it after
 * each epoch. Not Collective. */
strux_status strux_model_status(const strux_model *m);
/* Weight j of row k. */
double strux_model_get(const strux_model *m, int32_t k, int32_t j);
/* Set weight j of row k to v (the row's scale and kept norm follow). */
void strux_model_set(strux_model *m, int32_t k, int32_t j, double v);
/* The first weight that is NaN or ±Inf as its flat label-major index (free parameters after the
 * rows), or −1. */
int64_t strux_model_find_non_finite(const strux_model *m);

/* ---- the weights by column (model_cols.c): scores of an example against the rows it touches ---- */
typedef struct strux_model_cols {
    int32_t dim, n_rows;
    int64_t n, cap;  /* entries, room */
    int64_t *ptr;    /* dim + 1 offsets: column j's entries */
    int32_t *row;    /* their rows, ascending within a column */
    double *val;     /* their weights (row scales applied) */
    double *acc;     /* n_rows partial scores, 0 between calls */
    uint64_t *seen;  /* n_rows marks, one bit a row, 0 between calls */
    /* NULL: ptr, row and val are this rank's; else they lie in this block, one copy per host
     * written by its writer (the model's own block is shared: the columns are the same on every
     * rank of the host), and the build is Collective */
    const strux_model_share *share;
    int64_t *count; /* the writer's dim + 1 column offsets before they go to the block */
} strux_model_cols;
/* c ← m's non-zero weights by column, column skip_col left out (−1: none); room kept. Set
 * c->share before the first build to keep them once per host. */
strux_status strux_model_cols_build(const strux_model *m, int32_t skip_col, strux_model_cols *c);
/* The rows with a weight at one of x_r's non-zeros (skip_col's excepted) into rows, ascending,
 * and their partial scores Σ_j w_kj·x_rj (x's non-zeros in column order) into out;
 * returns their count (≤ n_rows). Not Collective. */
int32_t strux_model_cols_scores(strux_model_cols *c, const strux_csr *x, int64_t r,
                                int32_t *rows, double *out);
/* Frees what c owns; c->share stays set (the next build uses the same block). */
void strux_model_cols_free(strux_model_cols *c);

/* ---- storage for collectives and files (scales folded to 1 first) ---- */
typedef struct strux_model_buffer {
    void *v;            /* n_rows·dim stored values, in the model's layout and precision */
    int64_t n_v;        /* n_rows·dim */
    double *extra;      /* n_extra free parameters */
    int64_t n_extra;
    strux_precision precision;
} strux_model_buffer;
/* The stored values with every row scale folded in; after writing into them (an allreduce) call
 * strux_model_refresh. The sparse layout has no such buffer: v is NULL, n_v 0 and the error
 * (strux_error_message) is STRUX_ERR_UNSUPPORTED; copy it into a dense model to reduce it. */
strux_model_buffer strux_model_storage(strux_model *m);
/* Recompute the row norms after the storage was written directly. */
void strux_model_refresh(strux_model *m);
/* Append the weights to a blob, layout-independent: per row its scale, kept norm and stored
 * values as doubles (its non-zeros with their columns where that is smaller), then the free
 * parameters / read them back (STRUX_ERR_INPUT naming what on a
 * short or corrupt blob), so a checkpointed iterate resumes bit-identically. */
strux_status strux_model_put(const strux_model *m, strux_blob *b);
strux_status strux_model_get_blob(strux_model *m, strux_blob *b, const char *what);

#endif
