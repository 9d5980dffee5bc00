/* tests/fuzz/fuzz_libsvm.c - libFuzzer target: the LIBSVM/XMC text reader (data/libsvm.c over
 * data/text.c, plain or gzip) on arbitrary bytes, as one rank and as the second of three ranks
 * (the partition code), with a bias column. Seeds: tests/fixtures/ *.svm, *.svm.gz. */
#include "fuzz_common.h"
#include "strux/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, ".svm");
    const strux_read_options opts[] = {
        {.rank = 0, .n_ranks = 1},
        {.rank = 1, .n_ranks = 3, .bias = 1.0},
    };
    for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
        strux_dataset *ds = NULL;
        fuzz_check_status(strux_dataset_read_libsvm(path, &opts[k], &ds));
        strux_dataset_destroy(&ds);
    }
    return 0;
}
