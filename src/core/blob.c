/* core/blob.c - growable byte streams: the per-rank state of solvers and searches written into a
 * checkpoint and read back in the same order (strux_blob in core.h). */
#include "strux/core.h"

#include <string.h>

strux_status strux_blob_put(strux_blob *b, const void *src, size_t bytes)
{
    if (b->n + bytes > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + bytes)
            cap *= 2;
        STRUX_TRY(strux_realloc_array(&b->data, cap, 1));
        b->cap = cap;
    }
    if (bytes && src)
        memcpy(b->data + b->n, src, bytes);
    else if (bytes)
        memset(b->data + b->n, 0, bytes);
    b->n += bytes;
    return STRUX_OK;
}

strux_status strux_blob_get(strux_blob *b, void *dst, size_t bytes, const char *what)
{
    STRUX_CHECK(b->pos + bytes <= b->n, STRUX_ERR_INPUT,
                "checkpoint state ends early: %zu bytes of %s wanted, %zu left", bytes, what,
                b->n - b->pos);
    if (bytes) memcpy(dst, b->data + b->pos, bytes);
    b->pos += bytes;
    return STRUX_OK;
}

void strux_blob_free(strux_blob *b)
{
    strux_free(&b->data);
    *b = (strux_blob){0};
}
