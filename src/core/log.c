/* core/log.c - the logger: every message of strux below src/cli goes through here (LIBLINEAR's
 * print_string habit). Plain lines "[strux rK] level: text" or, with json set, one JSON object
 * per line for log collectors. INFO and DEBUG are printed by rank 0 only unless strux_log_all. */
#include "strux/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int log_rank;
static strux_log_level log_max = STRUX_LOG_INFO;
static int log_json;

static const char *const level_names[] = {"error", "warning", "info", "debug"};

void strux_log_setup(int rank, strux_log_level max_level, int json)
{
    log_rank = rank;
    log_max = max_level;
    log_json = json;
}

strux_log_level strux_log_level_get(void)
{
    return log_max;
}

int strux_log_json(void)
{
    return log_json;
}

int strux_log_rank(void)
{
    return log_rank;
}

static void json_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

static void emit(strux_log_level level, const char *fmt, va_list ap)
{
    char text[4096];
    vsnprintf(text, sizeof text, fmt, ap);
    if (log_json) {
        fprintf(stderr, "{\"rank\":%d,\"level\":\"%s\",\"msg\":\"", log_rank, level_names[level]);
        json_escape(stderr, text);
        fputs("\"}\n", stderr);
    } else if (level == STRUX_LOG_INFO) {
        fprintf(stderr, "[strux r%d] %s\n", log_rank, text);
    } else {
        fprintf(stderr, "[strux r%d] %s: %s\n", log_rank, level_names[level], text);
    }
    fflush(stderr);
}

void strux_log(strux_log_level level, const char *fmt, ...)
{
    if (level > log_max) return;
    if (level >= STRUX_LOG_INFO && log_rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    emit(level, fmt, ap);
    va_end(ap);
}

void strux_log_all(strux_log_level level, const char *fmt, ...)
{
    if (level > log_max) return;
    va_list ap;
    va_start(ap, fmt);
    emit(level, fmt, ap);
    va_end(ap);
}
