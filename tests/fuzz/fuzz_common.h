/* tests/fuzz/fuzz_common.h - shared by the libFuzzer targets (make fuzz): the readers take a path,
 * so each input is written to one private temporary file per process and the reader opens that.
 * Also checks the contract every reader keeps on any input: a status, and on failure a message;
 * memory errors, undefined behaviour and leaks are the sanitizers' to find. */
#ifndef STRUX_FUZZ_COMMON_H
#define STRUX_FUZZ_COMMON_H

#include "strux/core.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_path[256]; /* this process's input file, "" until the first input */

static void fuzz_remove_input(void)
{
    if (fuzz_path[0]) remove(fuzz_path);
}

/* Write the input to the file (suffix: the extension a reader may look at) and return its path;
 * aborts if that fails (a harness failure, not a finding). Logging is cut to errors. */
static const char *fuzz_write_input(const uint8_t *data, size_t size, const char *suffix)
{
    if (!fuzz_path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(fuzz_path, sizeof fuzz_path, "%s/strux-fuzz-%d%s", dir && dir[0] ? dir : "/tmp",
                 (int)getpid(), suffix);
        strux_log_setup(0, STRUX_LOG_ERROR, 0);
        atexit(fuzz_remove_input);
    }
    FILE *f = fopen(fuzz_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(fuzz_path);
        abort();
    }
    return fuzz_path;
}

/* A failing reader must say why. */
static void fuzz_check_status(strux_status st)
{
    if (st != STRUX_OK && strux_error_message()[0] == '\0') {
        fprintf(stderr, "status %d (%s) without a message\n", (int)st, strux_status_name(st));
        abort();
    }
    strux_error_clear();
}

#endif
