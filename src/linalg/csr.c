/* linalg/csr.c - CSR storage and the sparse kernels: dot and axpy of a sparse row against a dense
 * double vector (LIBLINEAR's sparse_operator), accumulated in double. */
#include "strux/linalg.h"

strux_status strux_csr_alloc(strux_csr *a, int64_t n_rows, int32_t n_cols, int64_t nnz)
{
    a->n_rows = n_rows;
    a->n_cols = n_cols;
    a->ptr = NULL;
    a->col = NULL;
    a->val = NULL;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_alloc_array(&a->ptr, (size_t)n_rows + 1, sizeof *a->ptr), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&a->col, (size_t)nnz, sizeof *a->col), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&a->val, (size_t)nnz, sizeof *a->val), fail);
    return STRUX_OK;
fail:
    strux_csr_free(a);
    return st;
}

void strux_csr_free(strux_csr *a)
{
    strux_free(&a->ptr);
    strux_free(&a->col);
    strux_free(&a->val);
    a->n_rows = 0;
}

double strux_spdot(const strux_csr *x, int64_t i, const double *w)
{
    double s = 0.0;
    for (int64_t p = x->ptr[i]; p < x->ptr[i + 1]; p++)
        s += (double)x->val[p] * w[x->col[p]];
    return s;
}

void strux_spaxpy(const strux_csr *x, int64_t i, double a, double *w)
{
    for (int64_t p = x->ptr[i]; p < x->ptr[i + 1]; p++)
        w[x->col[p]] += a * (double)x->val[p];
}

double strux_spnorm2(const strux_csr *x, int64_t i)
{
    double s = 0.0;
    for (int64_t p = x->ptr[i]; p < x->ptr[i + 1]; p++)
        s += (double)x->val[p] * x->val[p];
    return s;
}

double strux_sprow_dot(const strux_csr *x, int64_t i, int64_t j)
{
    if (i == j) return strux_spnorm2(x, i);
    int64_t a = x->ptr[i], a_end = x->ptr[i + 1], b = x->ptr[j], b_end = x->ptr[j + 1];
    double s = 0.0;
    while (a < a_end && b < b_end) {
        if (x->col[a] == x->col[b])
            s += (double)x->val[a++] * x->val[b++];
        else if (x->col[a] < x->col[b])
            a++;
        else
            b++;
    }
    return s;
}
