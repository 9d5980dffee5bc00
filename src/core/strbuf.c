/* core/strbuf.c - a growable text buffer (strux_strbuf, core.h) for messages, reports and files
 * built in memory: printf-style appends that grow the buffer geometrically through the counted
 * allocator, with a sticky status so a caller may append many pieces and check once. */
#include "strux/core.h"

#include <stdarg.h>
#include <stdio.h>

strux_status strux_strbuf_printf(strux_strbuf *b, const char *fmt, ...)
{
    for (;;) {
        if (b->st != STRUX_OK) return b->st;
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0)
            return b->st = strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                                           "vsnprintf failed");
        if (b->s && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return STRUX_OK;
        }
        size_t cap = b->cap ? b->cap : 1024;
        while (cap <= b->n + (size_t)w)
            cap *= 2;
        b->st = strux_realloc_array(&b->s, cap, 1);
        if (b->st == STRUX_OK) b->cap = cap;
    }
}

void strux_strbuf_free(strux_strbuf *b)
{
    strux_free(&b->s);
    *b = (strux_strbuf){0};
}
