/* tasks/label.c - label buffers: allocation once per solver, copy and equality for caches, ban
 * lists and tests. */
#include "strux/task.h"

#include <string.h>

strux_status strux_label_alloc(strux_label *y, int32_t cap)
{
    *y = (strux_label){0};
    STRUX_TRY(strux_alloc_array(&y->y, (size_t)(cap > 0 ? cap : 1), sizeof *y->y));
    y->cap = cap;
    return STRUX_OK;
}

void strux_label_free(strux_label *y)
{
    strux_free(&y->y);
    y->n = y->cap = 0;
}

strux_status strux_label_copy(strux_label *dst, const strux_label *src)
{
    STRUX_CHECK(dst->cap >= src->n, STRUX_ERR_INTERNAL, "label of %d parts into room for %d",
                src->n, dst->cap);
    memcpy(dst->y, src->y, (size_t)src->n * sizeof *src->y);
    dst->n = src->n;
    return STRUX_OK;
}

int strux_label_equal(const strux_label *a, const strux_label *b)
{
    return a->n == b->n && memcmp(a->y, b->y, (size_t)a->n * sizeof *a->y) == 0;
}
