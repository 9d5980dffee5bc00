/* tests/fuzz/fuzz_model.c - libFuzzer target: the HDF5 model reader (io/model_file.c) and the
 * checkpoint reader (io/checkpoint.c) on arbitrary bytes written to a file. Seeds: small model
 * and checkpoint files written by the strux binary (make fuzz makes them). HDF5's own decoder is
 * not instrumented for coverage; its crashes still show, with the strux frames that called it. */
#include "fuzz_common.h"
#include "strux/io.h"
#include "strux/model.h"

#include <hdf5.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the readers report; HDF5's stack is noise */
        quiet = 1;
    }
    const char *path = fuzz_write_input(data, size, ".h5");
    strux_model *m = NULL;
    strux_model_info info;
    memset(&info, 0, sizeof info);
    strux_status st = strux_io_model_load(path, &m, &info);
    fuzz_check_status(st);
    if (st == STRUX_OK) {
        strux_checkpoint_info ck;
        strux_blob state;
        memset(&state, 0, sizeof state);
        strux_model *w = NULL;
        if (strux_model_create_like(m, &w) == STRUX_OK) {
            strux_status cs = strux_io_checkpoint_read(path, &ck, w, &state);
            fuzz_check_status(cs);
            if (cs == STRUX_OK) fuzz_check_status(strux_io_checkpoint_read_block(path, 0, &state));
            strux_model_destroy(&w);
        }
        strux_blob_free(&state);
    }
    strux_model_destroy(&m);
    strux_model_info_free(&info);
    return 0;
}
