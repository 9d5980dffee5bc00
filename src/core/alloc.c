/* core/alloc.c - the one allocator (STYLE.md §6): zeroed blocks with a size header so that live
 * bytes are counted, overflow-checked arrays, and fault injection for tests (fail the n-th call).
 * Blocks of MMAP_THRESHOLD bytes and more are mapped by glibc and unmapped when freed: the
 * threshold is fixed at the first allocation, because glibc's default raises it to the size of
 * each mapped block freed (up to 32 MB), after which blocks of that size come from the heap and
 * stay there when freed (issue 12: the sparse dual blocks freed before the model is written
 * raised the peak RSS of the write by 27 MB). */
#include "strux/core.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Header in front of every block; 16 bytes keeps the payload aligned for any scalar type. */
typedef union block_header {
    size_t size;
    max_align_t align;
} block_header;

#define MMAP_THRESHOLD (128 * 1024) /* glibc's initial M_MMAP_THRESHOLD */

static size_t live_bytes;
static int64_t n_calls;
static int64_t fail_countdown = -1;

static int injected_failure(void)
{
    if (fail_countdown < 0) return 0;
    if (fail_countdown == 0) {
        fail_countdown = -1;
        return 1;
    }
    fail_countdown--;
    return 0;
}

static strux_status out_of_memory(size_t n)
{
    return strux_error_set(STRUX_ERR_NOMEM, __FILE__, __LINE__, __func__,
                           "out of memory allocating %zu bytes (%zu bytes live)", n, live_bytes);
}

strux_status strux_alloc(void *pp, size_t n)
{
    void **out = pp;
    if (n > SIZE_MAX - sizeof(block_header)) return out_of_memory(n);
    if (n_calls == 0) mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    block_header *b = injected_failure() ? NULL : calloc(1, sizeof(block_header) + n);
    if (!b) return out_of_memory(n);
    b->size = n;
    live_bytes += n;
    n_calls++;
    *out = b + 1;
    return STRUX_OK;
}

strux_status strux_alloc_array(void *pp, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return strux_error_set(STRUX_ERR_NOMEM, __FILE__, __LINE__, __func__,
                               "array of %zu elements of %zu bytes overflows size_t", n, size);
    return strux_alloc(pp, n * size);
}

strux_status strux_realloc_array(void *pp, size_t n, size_t size)
{
    void **io = pp;
    if (!*io) return strux_alloc_array(pp, n, size);
    if (size != 0 && n > SIZE_MAX / size)
        return strux_error_set(STRUX_ERR_NOMEM, __FILE__, __LINE__, __func__,
                               "array of %zu elements of %zu bytes overflows size_t", n, size);
    size_t bytes = n * size;
    if (bytes > SIZE_MAX - sizeof(block_header)) return out_of_memory(bytes);
    block_header *old = (block_header *)*io - 1;
    size_t old_size = old->size;
    block_header *b = injected_failure() ? NULL : realloc(old, sizeof(block_header) + bytes);
    if (!b) return out_of_memory(bytes);
    if (bytes > old_size) memset((char *)(b + 1) + old_size, 0, bytes - old_size);
    b->size = bytes;
    live_bytes = live_bytes - old_size + bytes;
    n_calls++;
    *io = b + 1;
    return STRUX_OK;
}

strux_status strux_strdup(char **out, const char *s)
{
    if (!s) {
        *out = NULL;
        return STRUX_OK;
    }
    size_t n = strlen(s);
    STRUX_TRY(strux_alloc(out, n + 1));
    memcpy(*out, s, n);
    return STRUX_OK;
}

void strux_free(void *pp)
{
    void **io = pp;
    if (!*io) return;
    block_header *b = (block_header *)*io - 1;
    live_bytes -= b->size;
    free(b);
    *io = NULL;
}

size_t strux_alloc_bytes(void)
{
    return live_bytes;
}

int64_t strux_alloc_calls(void)
{
    return n_calls;
}

void strux_alloc_fail_after(int64_t n)
{
    fail_countdown = n;
}
