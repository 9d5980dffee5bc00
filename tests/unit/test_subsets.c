/* tests/unit/test_subsets.c - named subsets (strux/subsets.h; dataset_constraints.md §1.5):
 * accepted definitions and their normal form, rejected ones with origin, column and what was
 * expected, names (identifiers, keywords, built-ins, removal), unknown names listing the defined
 * ones, cycles, the label-class analysis, evaluation of every atom and operator on a hand-made
 * 6-row dataset (also as a shard of a larger file), rows files and their bad lines (file:line),
 * baselines and evaluability, and random expression trees evaluated against sets computed here
 * (which also checks precedence and that the printed form parses back to itself). */
#include "test_common.h"

#include "strux/subsets.h"

#include <stdio.h>
#include <string.h>

/* 6 rows, 3 features (file numbering 1..3):
 *   r0: 1:1 3:2    +1      r3: 1:-1 2:1   +1
 *   r1: 2:0.1      -1      r4: 3:1         0
 *   r2: (empty)     0      r5: 1:2        -1 */
static const int8_t labels6[6] = {1, -1, 0, 1, 0, -1};

static strux_dataset *tiny(int64_t n_global, int64_t first)
{
    static const int64_t ptr[7] = {0, 2, 3, 3, 5, 6, 7};
    static const int32_t col[7] = {0, 2, 1, 0, 1, 2, 0};
    static const float val[7] = {1, 2, 0.1f, -1, 1, 1, 2};
    strux_csr x;
    assert_strux_ok(strux_csr_alloc(&x, 6, 3, 7));
    memcpy(x.ptr, ptr, sizeof ptr);
    memcpy(x.col, col, sizeof col);
    memcpy(x.val, val, sizeof val);
    int64_t *y_ptr;
    int32_t *y_idx;
    assert_strux_ok(strux_alloc_array(&y_ptr, 7, sizeof *y_ptr));
    assert_strux_ok(strux_alloc_array(&y_idx, 1, sizeof *y_idx));
    strux_dataset *ds;
    assert_strux_ok(
        strux_dataset_from_arrays("tiny.svm", &x, &y_ptr, &y_idx, n_global, first, 3, 2, 0, &ds));
    return ds;
}

/* Membership of subset `name` on the tiny set as a string of 0/1, e.g. "100100". */
static const char *members(const strux_subset_defs *d, const char *name,
                           const strux_subset_input *in)
{
    static char s[7];
    uint8_t m[6];
    int32_t k = strux_subset_find(d, name);
    assert_true(k >= 0);
    assert_strux_ok(strux_subset_eval(d, k, in, m));
    for (int r = 0; r < 6; r++)
        s[r] = (char)('0' + m[r]);
    s[6] = '\0';
    return s;
}

static void define_ok(strux_subset_defs *d, const char *name, const char *text)
{
    assert_strux_ok(strux_subset_define(d, name, text, "t.ini:1"));
}

static void test_normal_form(void **state)
{
    (void)state;
    strux_subset_defs *d;
    assert_strux_ok(strux_subset_defs_create(&d));
    assert_int_equal(strux_subset_count(d), STRUX_SUBSET_N_BUILTIN);
    assert_string_equal(strux_subset_name(d, STRUX_SUBSET_UNLABELED), "unlabeled");
    static const char *const cases[][2] = {
        {"label +1", "label +1"},
        {"label 1", "label +1"},
        {"label   0", "label -1"},
        {"label -1&feature 2>=0.5", "label -1 & feature 2 >= 0.5"},
        {"feature 73 > 0", "feature 73 > 0"},
        {"feature 1 != -1e0", "feature 1 != -1"},
        {"feature 1==0.1", "feature 1 == 0.1"},
        {"((positive))", "positive"},
        {"(positive | negative) & all", "(positive | negative) & all"},
        {"positive | negative & all", "positive | negative & all"},
        {"(positive - negative) - all", "positive - negative - all"},
        {"positive - (negative - all)", "positive - (negative - all)"},
        {"positive & (negative & all)", "positive & (negative & all)"},
        {"!(positive | negative)", "!(positive | negative)"},
        {"!!positive - negative", "!!positive - negative"},
        {"!(positive - negative)", "!(positive - negative)"},
        {"rows a.txt", "rows a.txt"},
        {"rows dir/a-b.txt  t.txt | positive", "rows dir/a-b.txt t.txt | positive"},
        {"rows a.txt-positive", "rows a.txt-positive"},
        {"rows a.txt -positive", "rows a.txt - positive"},
        {"baseline out/m.h5 positive & !labeled", "baseline out/m.h5 positive & !labeled"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        define_ok(d, "x", cases[i][0]);
        int32_t k = strux_subset_find(d, "x");
        assert_string_equal(strux_subset_text(d, k), cases[i][1]);
        /* the normal form is a fixed point */
        define_ok(d, "x", cases[i][1]);
        assert_string_equal(strux_subset_text(d, k), cases[i][1]);
    }
    assert_int_equal(strux_subset_count(d), STRUX_SUBSET_N_BUILTIN + 1);
    strux_subset_defs_destroy(&d);
    assert_null(d);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    strux_subset_defs *d;
    assert_strux_ok(strux_subset_defs_create(&d));
    static const char *const cases[][2] = {
        {"", NULL}, /* blank: removal, not an error */
        {"feature 0 > 1", "column 9: expected a feature index (an integer from 1) after "
                          "'feature', found '0'"},
        {"feature 1.5 > 1", "column 9: expected a feature index"},
        {"feature 3 >", "column 12: expected a finite number, found end of text"},
        {"feature 3 => 1", "column 11: expected one of > >= < <= == !=, found '=>'"},
        {"feature 3 > 1x", "column 13: expected a finite number"},
        {"feature 3 > nan", "column 13: expected a finite number"},
        {"label 2", "column 7: expected +1 or -1 after 'label', found '2'"},
        {"label", "column 6: expected +1 or -1 after 'label', found end of text"},
        {"positive &", "column 11: expected a dataset: a name, label, feature, rows, baseline, "
                       "'!' or '(', found end of text"},
        {"(positive", "column 10: expected ')' or an operator (& | -), found end of text"},
        {"positive negative", "column 10: expected an operator (& | -) or the end of the "
                              "definition, found 'negative'"},
        {"rows", "column 5: expected a file path, found end of text"},
        {"rows -x", "column 6: expected a file path, found '-x'"},
        {"baseline m.h5", "column 14: expected positive or negative after the baseline path"},
        {"baseline m.h5 pos", "column 15: expected positive or negative"},
        {"positive || negative", "column 11: expected a dataset"},
        {"3", "column 1: expected a dataset"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (!cases[i][1]) {
            assert_strux_ok(strux_subset_define(d, "x", cases[i][0], "t.ini:7"));
            continue;
        }
        assert_strux_fails(strux_subset_define(d, "x", cases[i][0], "t.ini:7"), STRUX_ERR_CONFIG,
                           cases[i][1]);
        char head[160];
        snprintf(head, sizeof head, "t.ini:7: dataset x = '%s': ", cases[i][0]);
        assert_non_null(strstr(strux_error_message(), head));
    }
    assert_int_equal(strux_subset_find(d, "x"), -1); /* nothing was added */
    strux_error_clear();
    strux_subset_defs_destroy(&d);
}

static void test_names_and_cycles(void **state)
{
    (void)state;
    strux_subset_defs *d;
    assert_strux_ok(strux_subset_defs_create(&d));
    assert_strux_fails(strux_subset_define(d, "1x", "positive", "--set"), STRUX_ERR_CONFIG,
                       "--set: dataset name '1x' is not an identifier");
    assert_strux_fails(strux_subset_define(d, "a-b", "positive", "--set"), STRUX_ERR_CONFIG,
                       "not an identifier");
    assert_strux_fails(strux_subset_define(d, "rows", "positive", "--set"), STRUX_ERR_CONFIG,
                       "dataset name 'rows' is a keyword");
    assert_strux_fails(strux_subset_define(d, "positive", "label -1", "--set"), STRUX_ERR_CONFIG,
                       "dataset 'positive' is built in");
    define_ok(d, "male", "feature 1 > 0");
    define_ok(d, "female", "feature 2 > 0");
    define_ok(d, "young", "mal & female");
    assert_strux_fails(strux_subset_check(d), STRUX_ERR_CONFIG,
                       "t.ini:1: dataset young = 'mal & female': column 1: unknown dataset 'mal' "
                       "(defined: all, labeled, unlabeled, positive, negative, male, female, "
                       "young)");
    /* messages quote the definition as written, so the column points into it */
    define_ok(d, "young", "male  &  femal");
    assert_strux_fails(strux_subset_check(d), STRUX_ERR_CONFIG,
                       "dataset young = 'male  &  femal': column 10: unknown dataset 'femal'");
    define_ok(d, "young", "male & female");
    assert_strux_ok(strux_subset_check(d));
    /* removal and replacement keep the other definitions */
    define_ok(d, "young", "  ");
    assert_int_equal(strux_subset_find(d, "young"), -1);
    assert_int_equal(strux_subset_count(d), STRUX_SUBSET_N_BUILTIN + 2);
    define_ok(d, "ghost", ""); /* removing what is not there is no error */
    /* cycles: self, and through two others */
    define_ok(d, "a", "a | positive");
    assert_strux_fails(strux_subset_check(d), STRUX_ERR_CONFIG,
                       "dataset a is defined through itself: a -> a");
    define_ok(d, "a", "b & male");
    define_ok(d, "b", "!c");
    define_ok(d, "c", "female - a");
    assert_strux_fails(strux_subset_check(d), STRUX_ERR_CONFIG,
                       "dataset a is defined through itself: a -> b -> c -> a");
    define_ok(d, "c", "female - male");
    assert_strux_ok(strux_subset_check(d));
    /* anonymous subsets: a bare name is that definition; the same normal form is one subset */
    int32_t k1, k2, k3;
    assert_strux_ok(
        strux_subset_define_expr(d, " male ", 0, strlen(" male "), "constraint c", "t.ini:9", &k1));
    assert_int_equal(k1, strux_subset_find(d, "male"));
    assert_strux_ok(strux_subset_define_expr(d, "(male)&positive", 0, strlen("(male)&positive"),
                                             "constraint c", "t.ini:9", &k2));
    assert_strux_ok(strux_subset_define_expr(d, "male & (positive)", 0, strlen("male & (positive)"),
                                             "constraint c", "t.ini:9", &k3));
    assert_int_equal(k2, k3);
    assert_true(strux_subset_is_anonymous(d, k2));
    assert_false(strux_subset_is_anonymous(d, k1));
    assert_string_equal(strux_subset_name(d, k2), "male & positive");
    assert_int_equal(strux_subset_find(d, "male & positive"), -1);
    assert_strux_fails(strux_subset_define_expr(d, "male & femal", 0, strlen("male & femal"),
                                                "constraint c", "t.ini:9", &k3),
                       STRUX_ERR_CONFIG,
                       "t.ini:9: constraint c = 'male & femal': column 8: unknown dataset 'femal' "
                       "(defined: all, labeled, unlabeled, positive, negative, male, female, a, "
                       "b, c)");
    strux_error_clear();
    strux_subset_defs_destroy(&d);
}

static void test_label_classes(void **state)
{
    (void)state;
    strux_subset_defs *d;
    assert_strux_ok(strux_subset_defs_create(&d));
    const unsigned P = STRUX_SUBSET_HAS_POS, N = STRUX_SUBSET_HAS_NEG, U = STRUX_SUBSET_HAS_UNL;
    static const struct {
        const char *text;
        unsigned may;
    } cases[] = {
        {"all", 7},
        {"feature 1 > 0", 7},
        {"unlabeled & feature 1 > 0", 4},
        {"label +1 | unlabeled", 5},
        {"all - labeled", 4},
        {"!positive", 6},
        {"!(feature 1 > 0)", 7},
        {"feature 1 > 0 - negative", 5},
        {"labeled - feature 1 > 0", 3},
        {"!labeled & label -1", 0},
        {"!(positive | rows r.txt)", 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        define_ok(d, "x", cases[i].text);
        assert_int_equal(strux_subset_labels(d, strux_subset_find(d, "x")), cases[i].may);
    }
    assert_int_equal(strux_subset_labels(d, STRUX_SUBSET_NEGATIVE), N);
    /* a cycle (refused by strux_subset_check) does not hang the analysis */
    define_ok(d, "x", "y & positive");
    define_ok(d, "y", "x | unlabeled");
    assert_int_equal(strux_subset_labels(d, strux_subset_find(d, "x")), P);
    assert_int_equal(strux_subset_labels(d, strux_subset_find(d, "y")), P | U);
    strux_subset_defs_destroy(&d);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_eval_tiny(void **state)
{
    (void)state;
    strux_dataset *ds = tiny(6, 0);
    static const int8_t base_a[6] = {1, 1, -1, -1, 1, -1};
    const int8_t *baselines[2] = {base_a, NULL};
    strux_subset_input in = {.ds = ds, .label = labels6, .baseline = baselines};
    strux_subset_defs *d;
    assert_strux_ok(strux_subset_defs_create(&d));
    char rows_tr[256], rows_te[256], def[600];
    snprintf(rows_tr, sizeof rows_tr, "%s/rows_train.txt", test_tmpdir());
    snprintf(rows_te, sizeof rows_te, "%s/rows_test.txt", test_tmpdir());
    write_file(rows_tr, "2\n\n  5 \n6\n");
    write_file(rows_te, "1\n");
    snprintf(def, sizeof def, "rows %s %s", rows_tr, rows_te);
    define_ok(d, "listed", def);
    snprintf(def, sizeof def, "rows %s", rows_tr);
    define_ok(d, "listed_train", def);
    define_ok(d, "f1pos", "feature 1 > 0");
    define_ok(d, "f1ge", "feature 1 >= 1");
    define_ok(d, "f1lt", "feature 1 < 0");
    define_ok(d, "f1le", "feature 1 <= 0");
    define_ok(d, "f2eq", "feature 2 == 0.1"); /* float 0.1 in the data */
    define_ok(d, "f3ne", "feature 3 != 0");
    define_ok(d, "f2gt", "feature 2 > 0.1");
    define_ok(d, "lab_pos", "label +1");
    define_ok(d, "lab_neg", "label -1");
    define_ok(d, "base_pos", "baseline a.h5 positive");
    define_ok(d, "base_neg", "baseline a.h5 negative");
    define_ok(d, "other", "baseline b.txt positive");
    define_ok(d, "not_f1", "!f1pos");
    define_ok(d, "diff", "labeled - f1pos");
    define_ok(d, "uni", "f3ne | lab_neg");
    define_ok(d, "prec", "f3ne | lab_neg & f1pos");   /* | binds loosest */
    define_ok(d, "prec2", "all - f3ne & lab_neg");    /* - binds tighter than & */
    define_ok(d, "prec3", "!f3ne - positive | f2eq"); /* ! tightest */
    assert_strux_ok(strux_subset_check(d));
    assert_string_equal(members(d, "all", &in), "111111");
    assert_string_equal(members(d, "labeled", &in), "110101");
    assert_string_equal(members(d, "unlabeled", &in), "001010");
    assert_string_equal(members(d, "positive", &in), "100100");
    assert_string_equal(members(d, "negative", &in), "010001");
    assert_string_equal(members(d, "lab_pos", &in), "100100");
    assert_string_equal(members(d, "lab_neg", &in), "010001");
    assert_string_equal(members(d, "f1pos", &in), "100001");
    assert_string_equal(members(d, "f1ge", &in), "100001");
    assert_string_equal(members(d, "f1lt", &in), "000100");
    assert_string_equal(members(d, "f1le", &in), "011110");
    assert_string_equal(members(d, "f2eq", &in), "010000");
    assert_string_equal(members(d, "f3ne", &in), "100010");
    assert_string_equal(members(d, "f2gt", &in), "000100");
    assert_string_equal(members(d, "not_f1", &in), "011110");
    assert_string_equal(members(d, "diff", &in), "010100");
    assert_string_equal(members(d, "uni", &in), "110011");
    assert_string_equal(members(d, "prec", &in), "100011");
    assert_string_equal(members(d, "prec2", &in), "010001");
    assert_string_equal(members(d, "prec3", &in), "011001");
    assert_string_equal(members(d, "listed", &in), "010011");
    assert_string_equal(members(d, "base_pos", &in), "110010");
    assert_string_equal(members(d, "base_neg", &in), "001101");
    /* baselines are numbered by first appearance; b.txt has no predictions here */
    assert_int_equal(strux_subset_n_baselines(d), 2);
    assert_string_equal(strux_subset_baseline_path(d, 0), "a.h5");
    assert_string_equal(strux_subset_baseline_path(d, 1), "b.txt");
    assert_null(strux_subset_baseline_path(d, 2));
    int32_t other = strux_subset_find(d, "other");
    assert_false(strux_subset_evaluable(d, other, &in));
    assert_true(strux_subset_evaluable(d, strux_subset_find(d, "base_pos"), &in));
    uint8_t m[6];
    assert_strux_fails(strux_subset_eval(d, other, &in, m), STRUX_ERR_CONFIG,
                       "no predictions of baseline b.txt on tiny.svm");
    /* the test split reads TEST_FILE; rows without one is not evaluable there */
    in.test = 1;
    assert_string_equal(members(d, "listed", &in), "100000");
    int32_t lt = strux_subset_find(d, "listed_train");
    assert_false(strux_subset_evaluable(d, lt, &in));
    assert_true(strux_subset_evaluable(d, strux_subset_find(d, "listed"), &in));
    assert_strux_fails(strux_subset_eval(d, lt, &in, m), STRUX_ERR_CONFIG,
                       "rows has no TEST_FILE, so it cannot be evaluated on the test data");
    in.test = 0;
    /* a feature above the dimension */
    define_ok(d, "wide", "positive & feature 4 > 0");
    assert_strux_fails(strux_subset_eval(d, strux_subset_find(d, "wide"), &in, m), STRUX_ERR_CONFIG,
                       "t.ini:1: dataset wide = 'positive & feature 4 > 0': column 12: feature 4 "
                       "is above the data's dimension 3 (tiny.svm)");
    strux_error_clear();
    strux_subset_defs_destroy(&d);
    strux_dataset_destroy(&ds);
}

static void test_rows_files(void **state)
{
    (void)state;
    /* the 6 rows are a shard of a 10-example file starting at example 3 (0-based 2) */
    strux_dataset *ds = tiny(10, 2);
    strux_subset_input in = {.ds = ds, .label = labels6};
    strux_subset_defs *d;
    assert_strux_ok(strux_subset_defs_create(&d));
    char path[256], def[400];
    snprintf(path, sizeof path, "%s/rows.txt", test_tmpdir());
    snprintf(def, sizeof def, "rows %s", path);
    define_ok(d, "r", def);
    uint8_t m[6];
    int32_t k = strux_subset_find(d, "r");
    write_file(path, "1\n3\n10\n8\n");
    assert_string_equal(members(d, "r", &in), "100001");
    static const char *const bad[][2] = {
        {"1\n2x\n", ":2: '2x' is not an integer example number"},
        {"1\n\n1.0\n", ":3: '1.0' is not an integer example number"},
        {"4\n7\n4\n", ":3: example 4 listed twice"},
        {"11\n", ":1: example 11 outside [1, 10] (tiny.svm)"},
        {"0\n", ":1: example 0 outside [1, 10]"},
        {"-3\n", ":1: example -3 outside [1, 10]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_file(path, bad[i][0]);
        char want[400];
        snprintf(want, sizeof want, "%s%s", path, bad[i][1]);
        assert_strux_fails(strux_subset_eval(d, k, &in, m), STRUX_ERR_INPUT, want);
    }
    remove(path);
    assert_strux_fails(strux_subset_eval(d, k, &in, m), STRUX_ERR_INPUT, "cannot open rows file");
    strux_error_clear();
    strux_subset_defs_destroy(&d);
    strux_dataset_destroy(&ds);
}

/* ---- random expression trees against sets computed here ---- */

typedef struct rexpr {
    char text[512];
    uint8_t m[6];
    int prec; /* 1 |, 2 &, 3 -, 4 !, 5 atom */
} rexpr;

static void cat(rexpr *e, const char *s1, const char *s2, const char *s3)
{
    const char *parts[3] = {s1, s2, s3};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(e->text), m = strlen(parts[i]);
        assert_true(n + m < sizeof e->text);
        memcpy(e->text + n, parts[i], m + 1);
    }
}

static void random_expr(strux_rng *rng, int depth, rexpr *e)
{
    static const char *const atoms[] = {"positive",       "negative", "unlabeled", "f1pos",
                                        "feature 3 != 0", "label -1", "f2eq"};
    static const char *const atom_m[] = {"100100", "010001", "001010", "100001",
                                         "100010", "010001", "010000"};
    uint64_t kind = depth <= 0 ? 0 : strux_rng_below(rng, 5);
    if (kind == 0) {
        uint64_t a = strux_rng_below(rng, 7);
        snprintf(e->text, sizeof e->text, "%s", atoms[a]);
        for (int r = 0; r < 6; r++)
            e->m[r] = (uint8_t)(atom_m[a][r] - '0');
        e->prec = 5;
        return;
    }
    rexpr a, b;
    random_expr(rng, depth - 1, &a);
    if (kind == 1) {
        /* random extra parentheses are harmless */
        int paren = a.prec < 4 || strux_rng_below(rng, 3) == 0;
        e->text[0] = '\0';
        cat(e, paren ? "!(" : "!", a.text, paren ? ")" : "");
        for (int r = 0; r < 6; r++)
            e->m[r] = !a.m[r];
        e->prec = 4;
        return;
    }
    random_expr(rng, depth - 1, &b);
    static const char sym[] = {0, 0, '|', '&', '-'};
    static const int prec[] = {0, 0, 1, 2, 3};
    int pa = a.prec < prec[kind] || strux_rng_below(rng, 4) == 0;
    int pb = b.prec <= prec[kind] || strux_rng_below(rng, 4) == 0;
    char op[4] = {' ', sym[kind], ' ', '\0'};
    e->text[0] = '\0';
    cat(e, pa ? "(" : "", a.text, pa ? ")" : "");
    cat(e, op, pb ? "(" : "", b.text);
    cat(e, pb ? ")" : "", "", "");
    for (int r = 0; r < 6; r++)
        e->m[r] = kind == 2 ? a.m[r] || b.m[r] : kind == 3 ? a.m[r] && b.m[r] : a.m[r] && !b.m[r];
    e->prec = prec[kind];
}

static void test_random_expressions(void **state)
{
    (void)state;
    strux_dataset *ds = tiny(6, 0);
    strux_subset_input in = {.ds = ds, .label = labels6};
    strux_subset_defs *d;
    assert_strux_ok(strux_subset_defs_create(&d));
    define_ok(d, "f1pos", "feature 1 > 0");
    define_ok(d, "f2eq", "feature 2 == 0.1"); /* float 0.1 in the data */
    strux_rng rng;
    strux_rng_init(&rng, 15, 1, 0);
    for (int t = 0; t < 500; t++) {
        rexpr e;
        random_expr(&rng, 4, &e);
        define_ok(d, "x", e.text);
        int32_t k = strux_subset_find(d, "x");
        uint8_t m[6];
        assert_strux_ok(strux_subset_eval(d, k, &in, m));
        if (memcmp(m, e.m, 6) != 0) fail_msg("membership of '%s' differs", e.text);
        /* the normal form means the same and is a fixed point */
        char text[600];
        assert_true(strlen(strux_subset_text(d, k)) < sizeof text);
        strcpy(text, strux_subset_text(d, k));
        define_ok(d, "x", text);
        assert_string_equal(strux_subset_text(d, k), text);
        assert_strux_ok(strux_subset_eval(d, k, &in, m));
        assert_memory_equal(m, e.m, 6);
    }
    strux_subset_defs_destroy(&d);
    strux_dataset_destroy(&ds);
}

static void test_sequences_refused(void **state)
{
    (void)state;
    strux_dataset *ds = tiny(6, 0);
    int64_t ex_ptr[2] = {0, 6};
    ds->ex_ptr = ex_ptr;
    strux_subset_input in = {.ds = ds, .label = labels6};
    strux_subset_defs *d;
    assert_strux_ok(strux_subset_defs_create(&d));
    uint8_t m[6];
    assert_strux_fails(strux_subset_eval(d, STRUX_SUBSET_ALL, &in, m), STRUX_ERR_UNSUPPORTED,
                       "subsets need one row per example; tiny.svm has sequences");
    ds->ex_ptr = NULL;
    strux_error_clear();
    strux_subset_defs_destroy(&d);
    strux_dataset_destroy(&ds);
}

/* Every allocation of define, check, define_expr and eval fails in turn: NOMEM comes back and
 * nothing leaks (STYLE.md §10). */
static strux_status alloc_scenario(const strux_subset_input *in)
{
    strux_subset_defs *d = NULL;
    uint8_t m[6];
    int32_t k;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_subset_defs_create(&d), done);
    STRUX_TRY_GOTO(st, strux_subset_define(d, "a", "feature 1 > 0 | !label -1", "t:1"), done);
    STRUX_TRY_GOTO(
        st, strux_subset_define(d, "b", "(a - positive) & baseline m.h5 negative", "t:2"), done);
    STRUX_TRY_GOTO(st, strux_subset_define(d, "a", "feature 2 > 0 | unlabeled", "t:3"), done);
    STRUX_TRY_GOTO(st, strux_subset_check(d), done);
    STRUX_TRY_GOTO(
        st,
        strux_subset_define_expr(d, "(b) & (a)", 0, strlen("(b) & (a)"), "constraint c", "t:4", &k),
        done);
    STRUX_TRY_GOTO(st, strux_subset_eval(d, k, in, m), done);
    st = STRUX_OK;
done:
    strux_subset_defs_destroy(&d);
    return st;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    strux_dataset *ds = tiny(6, 0);
    static const int8_t base[6] = {1, 1, -1, -1, 1, -1};
    const int8_t *baselines[1] = {base};
    strux_subset_input in = {.ds = ds, .label = labels6, .baseline = baselines};
    size_t before = strux_alloc_bytes();
    int64_t k;
    for (k = 0;; k++) {
        strux_alloc_fail_after(k);
        strux_status st = alloc_scenario(&in);
        strux_alloc_fail_after(-1);
        assert_int_equal(strux_alloc_bytes(), before);
        if (st == STRUX_OK) break;
        assert_int_equal(st, STRUX_ERR_NOMEM);
    }
    assert_true(k > 20);
    strux_error_clear();
    strux_dataset_destroy(&ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normal_form),         cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_names_and_cycles),    cmocka_unit_test(test_label_classes),
        cmocka_unit_test(test_eval_tiny),           cmocka_unit_test(test_rows_files),
        cmocka_unit_test(test_random_expressions),  cmocka_unit_test(test_sequences_refused),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
