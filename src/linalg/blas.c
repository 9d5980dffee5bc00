/* linalg/blas.c - the only file that includes <cblas.h> (STYLE.md §9): dense double kernels on
 * model-sized vectors, with int64 lengths split into BLAS-int-sized chunks, and OpenBLAS pinned to
 * one thread because every core already runs an MPI rank. */
#include "strux/linalg.h"

#include <cblas.h>
#include <limits.h>

/* Provided by OpenBLAS; declared here so the build does not depend on openblas_config.h. */
void openblas_set_num_threads(int num_threads);

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
