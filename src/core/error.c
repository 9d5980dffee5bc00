/* core/error.c - the error record: one message written where an error is detected, plus the
 * "at file:line (function)" frames appended by STRUX_TRY on the way up (STYLE.md §5). */
#include "strux/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MESSAGE_BYTES 2048
#define TRACE_BYTES 4096

static char message[MESSAGE_BYTES];
static char trace[TRACE_BYTES];

static const char *const status_names[STRUX_N_STATUS] = {
    [STRUX_OK] = "ok",
    [STRUX_ERR_NOMEM] = "out of memory",
    [STRUX_ERR_INPUT] = "input error",
    [STRUX_ERR_CONFIG] = "config error",
    [STRUX_ERR_IO] = "I/O error",
    [STRUX_ERR_NUMERIC] = "numeric error",
    [STRUX_ERR_UNSUPPORTED] = "unsupported",
    [STRUX_ERR_LP] = "LP solver error",
    [STRUX_ERR_MPI] = "MPI error",
    [STRUX_ERR_INTERNAL] = "internal error",
    [STRUX_ERR_INTERRUPTED] = "interrupted",
};

const char *strux_status_name(strux_status st)
{
    if ((int)st < 0 || st >= STRUX_N_STATUS) return "unknown status";
    return status_names[st];
}

static void append_frame(const char *file, int line, const char *func)
{
    size_t used = strlen(trace);
    if (used + 1 >= TRACE_BYTES) return;
    snprintf(trace + used, TRACE_BYTES - used, "  at %s:%d (%s)\n", file, line, func);
}

strux_status strux_error_set(strux_status code, const char *file, int line, const char *func,
                             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    trace[0] = '\0';
    append_frame(file, line, func);
    return code;
}

strux_status strux_error_frame(strux_status code, const char *file, int line, const char *func)
{
    append_frame(file, line, func);
    return code;
}

void strux_error_adopt(const char *msg)
{
    snprintf(message, sizeof message, "%s", msg);
    trace[0] = '\0';
}

const char *strux_error_message(void)
{
    return message;
}

const char *strux_error_trace(void)
{
    return trace;
}

void strux_error_clear(void)
{
    message[0] = '\0';
    trace[0] = '\0';
}
