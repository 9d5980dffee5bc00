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

#endif
