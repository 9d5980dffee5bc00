/* strux/linalg.h - sparse rows (CSR: int64 offsets, int32 columns, float32 values) and the few
 * named kernels every solver uses (STYLE.md §9): sparse dot/axpy into dense double rows, and dense
 * double kernels through OpenBLAS pinned to one thread per rank. All sums are double. */
#ifndef STRUX_LINALG_H
#define STRUX_LINALG_H

#include "strux/core.h"

/* Compressed sparse rows. Column indices are 0-based and strictly ascending within a row. */
typedef struct strux_csr {
    int64_t n_rows;
    int32_t n_cols; /* columns are in [0, n_cols) */
    int64_t *ptr;   /* n_rows + 1 offsets into col/val; ptr[0] = 0 */
    int32_t *col;   /* ptr[n_rows] column indices */
    float *val;     /* ptr[n_rows] values */
} strux_csr;

/* Allocate a CSR with n_rows rows and room for nnz entries (ptr zeroed). */
strux_status strux_csr_alloc(strux_csr *a, int64_t n_rows, int32_t n_cols, int64_t nnz);
void strux_csr_free(strux_csr *a);

/* A sparse matrix of doubles by its touched rows (sparse_rows.c): the changes a sparse
 * collective moves. Rows ascend, and so do the columns within a row. */
typedef struct strux_sparse_rows {
    int32_t n_rows; /* touched rows */
    int64_t n;      /* entries */
    int32_t *row;   /* n_rows row ids */
    int64_t *ptr;   /* n_rows + 1 offsets into col/val */
    int32_t *col;   /* n columns */
    double *val;    /* n values */
    int32_t cap_rows;
    int64_t cap; /* room for rows / entries */
} strux_sparse_rows;

/* Empty it (room kept) / free it (zeroed, reusable). */
void strux_sparse_rows_clear(strux_sparse_rows *a);
void strux_sparse_rows_free(strux_sparse_rows *a);
/* Room for n_rows rows and n entries in all. */
strux_status strux_sparse_rows_reserve(strux_sparse_rows *a, int32_t n_rows, int64_t n);
/* Append row (above every row held) with the n entries (idx ascending) times scale; n = 0
 * appends nothing. */
strux_status strux_sparse_rows_append(strux_sparse_rows *a, int32_t row, int32_t n,
                                      const int32_t *idx, const double *val, double scale);
/* out ← a + b entry by entry (a's value plus b's where both hold one; out is neither). */
strux_status strux_sparse_rows_add(const strux_sparse_rows *a, const strux_sparse_rows *b,
                                   strux_sparse_rows *out);

/* x[row·ld + col] ← value for every entry of a (the rest of x untouched). */
void strux_sparse_rows_scatter(const strux_sparse_rows *a, int64_t ld, double *x);
/* out ← the non-zeros of x read as n_rows rows of ld values each, the last one n_last long. */
strux_status strux_sparse_rows_gather(const double *x, int32_t n_rows, int64_t ld, int64_t n_last,
                                      strux_sparse_rows *out);

/* x_i · w over a dense double vector w of length ≥ n_cols. */
double strux_spdot(const strux_csr *x, int64_t i, const double *w);
/* w += a · x_i. */
void strux_spaxpy(const strux_csr *x, int64_t i, double a, double *w);
/* ||x_i||². */
double strux_spnorm2(const strux_csr *x, int64_t i);
/* x_i · x_j of two rows of x (merge of their ascending columns). */
double strux_sprow_dot(const strux_csr *x, int64_t i, int64_t j);

/* Pin OpenBLAS to one thread (ranks own the cores). Call once per process. */
void strux_blas_init(void);
double strux_dot(int64_t n, const double *x, const double *y);    /* Σ x_j y_j */
void strux_axpy(int64_t n, double a, const double *x, double *y); /* y += a x */
void strux_scal(int64_t n, double a, double *x);                  /* x *= a */
double strux_nrm2sq(int64_t n, const double *x);                  /* Σ x_j² */

/* C = alpha·AᵀA for a column-major rows×cols matrix A (column h at A + h·rows): the cols×cols
 * Gram matrix of its columns, row-major, both triangles filled (BLAS dsyrk). rows and cols must
 * fit an int. */
void strux_gram_cols(int64_t rows, int32_t cols, double alpha, const double *A, double *C);
/* y = alpha·A·x + beta·y for a column-major rows×cols matrix A (BLAS dgemv). */
void strux_gemv_cols(int64_t rows, int32_t cols, double alpha, const double *A, const double *x,
                     double beta, double *y);
/* A += alpha·x·yᵀ for a row-major rows×cols matrix A (BLAS dger; x has rows entries, y cols):
 * the rank-1 update of M3L's delayed gradient flush (specs/m3l.md §2.5). */
void strux_ger_rows(int32_t rows, int64_t cols, double alpha, const double *x, const double *y,
                    double *A);
/* x = A⁺b for a dense symmetric positive semi-definite n×n matrix A (not changed): the
 * pseudo-inverse from strux_sym_eig with eigenvalues at or below n·ε·λ_max dropped (MATLAB pinv's
 * cutoff, rta.md A24). Errors as strux_sym_eig. */
strux_status strux_sym_pinv_solve(int64_t n, const double *A, const double *b, double *x);

/* Eigen-decomposition of a dense symmetric n×n matrix A (LAPACK dsyevd): on entry A holds the
 * matrix (symmetric, so row- and column-major alike; only its upper triangle in row-major terms is
 * read); on return eigval[0..n) holds the eigenvalues in ascending order and row j of A
 * (row-major) the unit eigenvector of eigval[j].
 * Workspace comes from strux_alloc. Errors: STRUX_ERR_UNSUPPORTED when n exceeds LAPACK's int
 * workspace sizes, STRUX_ERR_NUMERIC when dsyevd does not converge (NaN or Inf entries),
 * STRUX_ERR_NOMEM. Not Collective. */
strux_status strux_sym_eig(int64_t n, double *A, double *eigval);

/* Sparse Cholesky A = L·Lᵀ of a symmetric positive definite n×n matrix (src/linalg/spchol.c, the
 * up-looking method of Davis 2006; the caller orders the unknowns, strux_spchol_order can).
 * The pattern is the upper triangle by columns: column k holds rows Ai[Ap[k]..Ap[k+1]), each ≤ k,
 * the diagonal included; Ap and Ai are borrowed and must outlive the object. analyse computes the
 * elimination tree and L's structure once (STRUX_ERR_NOMEM; STRUX_ERR_INTERNAL for an entry below
 * the diagonal); factor takes values Ax on that pattern and allocates nothing (STRUX_ERR_NUMERIC
 * naming the column when A is not positive definite); solve overwrites b with A⁻¹b. Not
 * Collective. */
typedef struct strux_spchol strux_spchol;
strux_status strux_spchol_analyse(int32_t n, const int64_t *Ap, const int32_t *Ai,
                                  strux_spchol **out);
strux_status strux_spchol_factor(strux_spchol *c, const double *Ax);
void strux_spchol_solve(const strux_spchol *c, double *b);
int64_t strux_spchol_nnz(const strux_spchol *c); /* entries of L */
/* A fill-reducing elimination order of the same kind of pattern: minimum degree on the explicit
 * elimination graph (ties: the highest index first), order[k] = the k-th unknown to eliminate.
 * Its work and memory grow with the fill it leaves. STRUX_ERR_NOMEM. */
strux_status strux_spchol_order(int32_t n, const int64_t *Ap, const int32_t *Ai, int32_t *order);
void strux_spchol_destroy(strux_spchol **c);

#endif
