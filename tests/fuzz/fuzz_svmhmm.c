/* tests/fuzz/fuzz_svmhmm.c - libFuzzer target: the SVM-hmm sequence reader (data/svmhmm.c over
 * data/text.c) on arbitrary bytes, as one rank and as the second of three ranks, with a bias.
 * Seeds: tests/fixtures/ *.svmhmm, *.tags. */
#include "fuzz_common.h"
#include "strux/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, ".svmhmm");
    const strux_read_options opts[] = {
        {.rank = 0, .n_ranks = 1},
        {.rank = 1, .n_ranks = 3, .bias = 1.0},
    };
    for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
        strux_dataset *ds = NULL;
        fuzz_check_status(strux_dataset_read_svmhmm(path, &opts[k], &ds));
        strux_dataset_destroy(&ds);
    }
    (void)strux_dataset_is_svmhmm(path);
    return 0;
}
