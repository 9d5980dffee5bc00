/* linalg/blas.c - the only file that includes <cblas.h> (STYLE.md §9): dense double kernels on
 * model-sized vectors, with int64 lengths split into BLAS-int-sized chunks, and OpenBLAS pinned to
 * one thread because every core already runs an MPI rank. Also the one LAPACK call, the symmetric
 * eigen-decomposition (dsyevd) that checks and factors label-correlation priors (m3l.md §6 A6). */
#include "strux/linalg.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include <cblas.h>

/* Provided by OpenBLAS; declared here so the build does not depend on openblas_config.h. */
void openblas_set_num_threads(int num_threads);
/* LAPACK's Fortran dsyevd, which OpenBLAS carries (there is no LAPACKE header to include). The two
 * trailing lengths are gfortran's hidden lengths of the character arguments. */
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
             double *work, const int *lwork, int *iwork, const int *liwork, int *info,
             size_t jobz_len, size_t uplo_len);

#define CHUNK ((int64_t)INT_MAX)

void strux_blas_init(void)
{
    openblas_set_num_threads(1);
}

double strux_dot(int64_t n, const double *x, const double *y)
{
    double s = 0.0;
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t k = n - o < CHUNK ? n - o : CHUNK;
        s += cblas_ddot((int)k, x + o, 1, y + o, 1);
    }
    return s;
}

void strux_axpy(int64_t n, double a, const double *x, double *y)
{
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t k = n - o < CHUNK ? n - o : CHUNK;
        cblas_daxpy((int)k, a, x + o, 1, y + o, 1);
    }
}

void strux_scal(int64_t n, double a, double *x)
{
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t k = n - o < CHUNK ? n - o : CHUNK;
        cblas_dscal((int)k, a, x + o, 1);
    }
}

double strux_nrm2sq(int64_t n, const double *x)
{
    return strux_dot(n, x, x);
}

/* dsyevd needs 1 + 6n + 2n² doubles and 3 + 5n ints of workspace; both must fit an int. */
#define EIG_MAX_N 30000

strux_status strux_sym_eig(int64_t n, double *A, double *eigval)
{
    STRUX_CHECK(n >= 0 && n <= EIG_MAX_N, STRUX_ERR_UNSUPPORTED,
                "eigen-decomposition of a %" PRId64 " × %" PRId64
                " matrix: LAPACK's int workspace allows n ≤ %d",
                n, n, EIG_MAX_N);
    if (n == 0) return STRUX_OK;
    int ni = (int)n, info = 0, lwork = -1, liwork = -1, iwork_query = 0;
    double work_query = 0.0;
    dsyevd_("V", "L", &ni, A, &ni, eigval, &work_query, &lwork, &iwork_query, &liwork, &info, 1, 1);
    STRUX_CHECK(info == 0, STRUX_ERR_INTERNAL, "dsyevd workspace query: info = %d", info);
    lwork = (int)work_query;
    liwork = iwork_query;
    double *work = NULL;
    int *iwork = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&work, (size_t)lwork, sizeof *work), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&iwork, (size_t)liwork, sizeof *iwork), done);
    dsyevd_("V", "L", &ni, A, &ni, eigval, work, &lwork, iwork, &liwork, &info, 1, 1);
    STRUX_CHECK_GOTO(st, info >= 0, STRUX_ERR_INTERNAL, done, "dsyevd: argument %d is illegal",
                     -info);
    STRUX_CHECK_GOTO(st, info == 0, STRUX_ERR_NUMERIC, done,
                     "dsyevd did not converge on a %" PRId64 " × %" PRId64
                     " matrix (info = %d); NaN or Inf entries?",
                     n, n, info);
done:
    strux_free(&work);
    strux_free(&iwork);
    return st;
}

void strux_gram_cols(int64_t rows, int32_t cols, double alpha, const double *A, double *C)
{
    if (cols <= 0) return;
    /* column-major A (rows×cols) is row-major Aᵀ (cols×rows): C = alpha·Aᵀ·A, upper of row-major */
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, cols, (int)rows, alpha, A, (int)rows, 0.0,
                C, cols);
    for (int32_t i = 0; i < cols; i++)
        for (int32_t j = 0; j < i; j++)
            C[(int64_t)i * cols + j] = C[(int64_t)j * cols + i];
}

void strux_gemv_cols(int64_t rows, int32_t cols, double alpha, const double *A, const double *x,
                     double beta, double *y)
{
    if (rows <= 0) return;
    if (cols <= 0) {
        strux_scal(rows, beta, y);
        return;
    }
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)rows, cols, alpha, A, (int)rows, x, 1, beta, y,
                1);
}

void strux_ger_rows(int32_t rows, int64_t cols, double alpha, const double *x, const double *y,
                    double *A)
{
    if (rows <= 0 || cols <= 0) return;
    if (cols > CHUNK) { /* the leading dimension does not fit a BLAS int: row by row */
        for (int32_t k = 0; k < rows; k++)
            if (x[k] != 0) strux_axpy(cols, alpha * x[k], y, A + (int64_t)k * cols);
        return;
    }
    cblas_dger(CblasRowMajor, rows, (int)cols, alpha, x, 1, y, 1, A, (int)cols);
}

strux_status strux_sym_pinv_solve(int64_t n, const double *A, const double *b, double *x)
{
    if (n == 0) return STRUX_OK;
    double *V = NULL, *ev = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&V, (size_t)(n * n), sizeof *V), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&ev, (size_t)n, sizeof *ev), done);
    memcpy(V, A, (size_t)(n * n) * sizeof *V);
    STRUX_TRY_GOTO(st, strux_sym_eig(n, V, ev), done);
    double cut = (double)n * DBL_EPSILON * (ev[n - 1] > 0 ? ev[n - 1] : 0);
    memset(x, 0, (size_t)n * sizeof *x);
    for (int64_t j = 0; j < n; j++) {
        if (!(ev[j] > cut)) continue;
        const double *u = V + j * n; /* row j: the unit eigenvector of ev[j] */
        strux_axpy(n, strux_dot(n, u, b) / ev[j], u, x);
    }
done:
    strux_free(&V);
    strux_free(&ev);
    return st;
}
