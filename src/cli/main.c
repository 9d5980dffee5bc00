/* cli/main.c - the strux command: MPI start-up, logging set-up (the flags --quiet, --verbose and
 * --log-json, accepted anywhere on the command line of every subcommand), dispatch to
 * subcommands, and the mapping of statuses to exit codes. A binary run without mpirun is a 1-rank
 * job. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(strux_comm *comm, int argc, char **argv);
} command;

static const command commands[] = {
    {"train", strux_cmd_train},     {"predict", strux_cmd_predict}, {"eval", strux_cmd_eval},
    {"convert", strux_cmd_convert}, {"gen", strux_cmd_gen},         {"inspect", strux_cmd_inspect},
    {"help", strux_cmd_help},
};

int strux_cli_fail(strux_comm *comm, strux_status st)
{
    if (strux_comm_rank(comm) == 0 && strux_log_json()) {
        strux_log(STRUX_LOG_ERROR, "%s: %s", strux_status_name(st), strux_error_message());
        if (strux_error_trace()[0]) strux_log(STRUX_LOG_DEBUG, "%s", strux_error_trace());
    } else if (strux_comm_rank(comm) == 0) {
        fprintf(stderr, "strux: %s: %s\n", strux_status_name(st), strux_error_message());
        if (strux_log_level_get() >= STRUX_LOG_DEBUG) fputs(strux_error_trace(), stderr);
        fflush(stderr);
    }
    switch (st) {
    case STRUX_OK:
    case STRUX_ERR_INTERRUPTED:
        return 0;
    case STRUX_ERR_CONFIG:
        return 2;
    case STRUX_ERR_INPUT:
        return 3;
    case STRUX_ERR_IO:
        return 4;
    case STRUX_ERR_NOMEM:
        return 5;
    default:
        return 1;
    }
}

int strux_cli_run_on_root(strux_comm *comm, strux_status (*fn)(int argc, char **argv), int argc,
                          char **argv)
{
    strux_status st = strux_comm_rank(comm) == 0 ? fn(argc, argv) : STRUX_OK;
    st = strux_comm_agree(comm, st);
    return st == STRUX_OK ? 0 : strux_cli_fail(comm, st);
}

/* Apply and remove the logging flags from argv (not the value after --set); returns the new argc.
 */
static int take_log_flags(int rank, int argc, char **argv)
{
    strux_log_level level = STRUX_LOG_INFO;
    int json = 0, n = 1;
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--quiet") == 0) {
            level = STRUX_LOG_WARN;
        } else if (strcmp(argv[k], "--verbose") == 0) {
            level = STRUX_LOG_DEBUG;
        } else if (strcmp(argv[k], "--log-json") == 0) {
            json = 1;
        } else {
            argv[n++] = argv[k];
            if (strcmp(argv[k], "--set") == 0 && k + 1 < argc) argv[n++] = argv[++k];
        }
    }
    argv[n] = NULL;
    strux_log_setup(rank, level, json);
    return n;
}

int main(int argc, char **argv)
{
    strux_comm *comm = NULL;
    if (strux_comm_init(&argc, &argv, &comm) != STRUX_OK) {
        fprintf(stderr, "strux: cannot start MPI: %s\n", strux_error_message());
        return 1;
    }
    argc = take_log_flags(strux_comm_rank(comm), argc, argv);
    strux_blas_init();
    strux_comm_set_stall_timeout(comm, STRUX_STALL_TIMEOUT); /* strux train: run.stall_timeout */
    int rc = 2;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        rc = strux_cmd_help(comm, 1, argv);
        if (argc < 2) rc = 2;
    } else if (strcmp(argv[1], "--version") == 0) {
        if (strux_comm_rank(comm) == 0) printf("strux %s\n", STRUX_VERSION);
        rc = 0;
    } else {
        size_t k = 0;
        while (k < sizeof commands / sizeof *commands && strcmp(commands[k].name, argv[1]) != 0)
            k++;
        if (k < sizeof commands / sizeof *commands) {
            rc = commands[k].run(comm, argc - 1, argv + 1);
        } else {
            strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                            "unknown command '%s'; commands: train, predict, eval, convert, "
                            "gen, inspect, help (see `strux help`)",
                            argv[1]);
            rc = strux_cli_fail(comm, STRUX_ERR_CONFIG);
        }
    }
    strux_comm_finalize(&comm);
    return rc;
}
