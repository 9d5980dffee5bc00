/* tasks/label.c - label buffers: allocation once per solver, copy and equality for caches, ban
 * lists and tests. */
#include "strux/task.h"

#include <string.h>

strux_status strux_label_alloc(strux_label *y, int32_t cap, int64_t mu_cap)
{
    *y = (strux_label){0};
    STRUX_TRY(strux_alloc_array(&y->y, (size_t)(cap > 0 ? cap : 1), sizeof *y->y));
    y->cap = cap;
    if (mu_cap > 0) {
        strux_status st = strux_alloc_array(&y->mu, (size_t)mu_cap, sizeof *y->mu);
        if (st != STRUX_OK) {
            strux_free(&y->y);
            return strux_error_frame(st, __FILE__, __LINE__, __func__);
        }
        y->mu_cap = mu_cap;
    }
    return STRUX_OK;
}

void strux_label_free(strux_label *y)
{
    strux_free(&y->y);
    strux_free(&y->mu);
    y->n = y->cap = 0;
    y->n_mu = y->mu_cap = 0;
}

strux_status strux_label_copy(strux_label *dst, const strux_label *src)
{
    STRUX_CHECK(dst->cap >= src->n && dst->mu_cap >= src->n_mu, STRUX_ERR_INTERNAL,
                "label of %d parts and %lld marginals into room for %d and %lld", src->n,
                (long long)src->n_mu, dst->cap, (long long)dst->mu_cap);
    memcpy(dst->y, src->y, (size_t)src->n * sizeof *src->y);
    if (src->n_mu > 0) memcpy(dst->mu, src->mu, (size_t)src->n_mu * sizeof *src->mu);
    dst->n = src->n;
    dst->n_mu = src->n_mu;
    return STRUX_OK;
}

int strux_label_equal(const strux_label *a, const strux_label *b)
{
    return a->n == b->n && a->n_mu == b->n_mu &&
           memcmp(a->y, b->y, (size_t)a->n * sizeof *a->y) == 0 &&
           (a->n_mu == 0 || memcmp(a->mu, b->mu, (size_t)a->n_mu * sizeof *a->mu) == 0);
}
