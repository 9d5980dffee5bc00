/* tests/unit/test_opt_ini.c - reading option tables back from the resolved config text that model
 * files store (core/opt.c: strux_opt_ini_get, strux_opt_read_ini): section scoping, spacing,
 * absent keys, defaults, and values checked like any setting. */
#include "test_common.h"

#include <stddef.h>
#include <string.h>

typedef struct demo_options {
    char type[STRUX_OPT_STR];
    double bias;
    int64_t depth;
} demo_options;

static const strux_opt_spec demo_specs[] = {
    {"demo.type", STRUX_OPT_STRING, offsetof(demo_options, type), "flat", 0, 0, NULL, "t"},
    {"demo.bias", STRUX_OPT_DOUBLE, offsetof(demo_options, bias), "1", 0, 10, NULL, "b"},
    {"demo.depth", STRUX_OPT_INT, offsetof(demo_options, depth), "3", 1, 9, NULL, "d"},
    {NULL},
};

/* As strux_config_format writes it, plus a look-alike key in another section. */
static const char *const stored = "[data]\n"
                                  "train = ../data/a b.svm.gz\n"
                                  "bias = 0.5\n"
                                  "\n"
                                  "[demo]\n"
                                  "type = tree\n"
                                  "  bias\t=  2.5  \n"
                                  "biased = 7\n";

static void test_ini_get(void **state)
{
    (void)state;
    char v[64];
    assert_int_equal(strux_opt_ini_get(stored, "data.bias", v, sizeof v), 1);
    assert_string_equal(v, "0.5");
    assert_int_equal(strux_opt_ini_get(stored, "demo.bias", v, sizeof v), 1);
    assert_string_equal(v, "2.5");
    assert_int_equal(strux_opt_ini_get(stored, "data.train", v, sizeof v), 1);
    assert_string_equal(v, "../data/a b.svm.gz");
    assert_int_equal(strux_opt_ini_get(stored, "demo.depth", v, sizeof v), 0);
    assert_int_equal(strux_opt_ini_get(stored, "data.type", v, sizeof v), 0);
    assert_int_equal(strux_opt_ini_get(stored, "nodot", v, sizeof v), 0);
    assert_int_equal(strux_opt_ini_get(stored, "data.train", v, 5), 0); /* does not fit */
}

static void test_read_ini(void **state)
{
    (void)state;
    demo_options o;
    assert_strux_ok(strux_opt_read_ini(demo_specs, &o, stored, "m.h5"));
    assert_string_equal(o.type, "tree");
    assert_true(o.bias == 2.5);
    assert_int_equal(o.depth, 3); /* absent: the default */
    assert_strux_fails(strux_opt_read_ini(demo_specs, &o, "[demo]\ndepth = 12\n", "m.h5"),
                       STRUX_ERR_CONFIG, "m.h5 (stored config): demo.depth = 12 is outside");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ini_get),
        cmocka_unit_test(test_read_ini),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
