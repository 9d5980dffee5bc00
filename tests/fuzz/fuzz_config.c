/* tests/fuzz/fuzz_config.c - libFuzzer target: the INI config parser and resolver (cli/config.c:
 * strux_config_read_file, strux_config_resolve, then strux_config_format of what resolved), on
 * arbitrary bytes. Seeds: configs/ *.ini. */
#include "fuzz_common.h"
#include "../../src/cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size, ".ini");
    strux_config *c = NULL;
    if (strux_config_create(&c) != STRUX_OK) abort();
    strux_status st = strux_config_read_file(c, path);
    if (st == STRUX_OK) {
        strux_run_options o;
        st = strux_config_resolve(c, &o);
        if (st == STRUX_OK) {
            char *text = NULL;
            st = strux_config_format(&o, &text);
            strux_free(&text);
        }
    }
    fuzz_check_status(st);
    strux_config_destroy(&c);
    return 0;
}
