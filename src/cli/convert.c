/* cli/convert.c - `strux convert INPUT OUTPUT [--dim D] [--n-labels L]`: LIBSVM/XMC text to the
 * HDF5 CSR container (io/dataset_file.c). Rank 0 converts; other ranks wait for its status. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static strux_status convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    strux_read_options ro = {.rank = 0, .n_ranks = 1};
    for (int k = 1; k < argc; k++) {
        if ((strcmp(argv[k], "--dim") == 0 || strcmp(argv[k], "--n-labels") == 0) &&
            k + 1 < argc) {
            char *end;
            long v = strtol(argv[k + 1], &end, 10);
            STRUX_CHECK(*end == '\0' && v > 0 && v < 2147483645, STRUX_ERR_CONFIG,
                        "convert: %s needs a positive integer, got '%s'", argv[k], argv[k + 1]);
            if (argv[k][2] == 'd')
                ro.dim = (int32_t)v;
            else
                ro.n_labels = (int32_t)v;
            k++;
        } else if (argv[k][0] != '-' && !in) {
            in = argv[k];
        } else if (argv[k][0] != '-' && !out) {
            out = argv[k];
        } else {
            return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                   "usage: strux convert INPUT OUTPUT [--dim D] [--n-labels L]");
        }
    }
    STRUX_CHECK(in && out, STRUX_ERR_CONFIG,
                "usage: strux convert INPUT OUTPUT [--dim D] [--n-labels L]");
    const char *inputs[] = {in};
    STRUX_TRY(strux_io_check_output(out, inputs, 1));
    strux_dataset *ds = NULL;
    double t0 = strux_time_now();
    STRUX_TRY(strux_dataset_read_libsvm(in, &ro, &ds));
    strux_status st = strux_io_dataset_save(out, ds);
    if (st == STRUX_OK)
        strux_log(STRUX_LOG_INFO, "%s -> %s: %lld examples, %d features, %d labels, %lld "
                  "non-zeros in %.2fs",
                  in, out, (long long)ds->n_global, ds->dim, ds->n_labels,
                  (long long)ds->x.ptr[ds->n_local], strux_time_now() - t0);
    strux_dataset_destroy(&ds);
    return st;
}

int strux_cmd_convert(strux_comm *comm, int argc, char **argv)
{
    return strux_cli_run_on_root(comm, convert, argc, argv);
}
