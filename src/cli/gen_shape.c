/* cli/gen_shape.c - `strux gen OUTPUT --shape balanced|unbalanced|random|swiki ...`: synthetic
 * hierarchical data (data/synth_hier.c). Writes the hierarchy as `parent child` lines to --hier
 * (default: OUTPUT with the extension .hier) and the rows, streamed one at a time (memory
 * independent of the row count), to the HDF5 CSR container (io/dataset_stream.c) or, when OUTPUT
 * ends in .svm or .txt, to text: balanced, unbalanced and random as LIBSVM/XMC lines with their
 * `N D M` header and closures without the root as labels (the layout of the shared hierarchical
 * .svm files), swiki as LSHTC lines (leaf labels only, no header; labels joined by ',' without
 * LSHTC's space, which strux's reader does not take). Both files are written atomically. Rank 0
 * generates and writes (cli/gen.c dispatches here); other ranks wait for its status. */
#include "cli.h"
#include "strux/hierarchy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHAPE_FEATURES 1000 /* balanced, unbalanced: d = 1000 (hierarchical.md §7.2) */
#define SHAPE_DEPTH 4       /* balanced: 4 levels, 15 nodes, 8 leaves (§7.2 B) */
#define SHAPE_CUTS 10       /* unbalanced: 10 cuts, 21 nodes, 11 leaves (§7.2 U, A11) */
#define SHAPE_NNZ 50        /* random: non-zeros per row (at most D/2) */
/* swiki: mean non-zeros per document. LSHTC does not publish it; 40 is chosen so that 81,262
 * generated documents (SWIKI-2011's test set) hold about 98,519 distinct features, the count of
 * test-set features the thesis reports (hierarchical.md §7.1): the seed 1 set gives 99,4xx
 * (README, hierarchy section). */
#define SWIKI_NNZ 48
#define SWIKI_LABELS 1.8 /* swiki: leaf labels per document (§7.1 Table 6-2) */

enum { /* the options, as bits of what a shape takes */
       O_ROWS = 1 << 0,
       O_FEATURES = 1 << 1,
       O_DEPTH = 1 << 2,
       O_CUTS = 1 << 3,
       O_NODES = 1 << 4,
       O_EXTRA = 1 << 5,
       O_LABELS = 1 << 6,
       O_NNZ = 1 << 7,
       O_SEED = 1 << 8,
       O_OFFSET = 1 << 9,
       O_HIER = 1 << 10,
       O_SCALE = 1 << 11,
       O_SHAPE = 1 << 12,
       N_OPTIONS = 13,
       O_COMMON = O_ROWS | O_SEED | O_OFFSET | O_HIER | O_SHAPE };

static int bit_index(unsigned bit)
{
    int k = 0;
    while (!(bit & 1u)) {
        bit >>= 1;
        k++;
    }
    return k;
}

static const struct {
    const char *name;
    strux_hier_shape shape;
    unsigned takes; /* O_* bits */
} shapes[] = {
    {"balanced", STRUX_SHAPE_BALANCED, O_COMMON | O_FEATURES | O_DEPTH},
    {"unbalanced", STRUX_SHAPE_UNBALANCED, O_COMMON | O_FEATURES | O_CUTS},
    {"random", STRUX_SHAPE_RANDOM,
     O_COMMON | O_FEATURES | O_DEPTH | O_NODES | O_EXTRA | O_LABELS | O_NNZ},
    {"swiki", STRUX_SHAPE_SWIKI, O_COMMON | O_SCALE | O_LABELS | O_NNZ},
};
#define N_SHAPES (sizeof shapes / sizeof *shapes)

#define usage_error(...) strux_cli_gen_usage(STRUX_GEN_SHAPE_USAGE, __VA_ARGS__)

typedef struct shape_args {
    strux_hier_gen_options o;
    const char *out, *hier;
    char hier_buf[4200];
    int text; /* OUTPUT ends in .svm or .txt */
} shape_args;

/* OUTPUT with its extension (after the last '.' of the last path component) replaced by .hier. */
static void default_hier(const char *out, char *buf, size_t n)
{
    const char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
    size_t keep = dot && (!slash || dot > slash + 1) ? (size_t)(dot - out) : strlen(out);
    snprintf(buf, n, "%.*s.hier", (int)keep, out);
}

static strux_status parse_number(const char *flag, const char *text, int is_int, double lo,
                                 double hi, double *out)
{
    char *end;
    errno = 0;
    double v = is_int ? (double)strtoll(text, &end, 10) : strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v) || v < lo || v > hi)
        return is_int ? usage_error("%s needs an integer in [%.0f, %.0f], got '%s'", flag, lo, hi,
                                    text)
                      : usage_error("%s needs a number in [%g, %g], got '%s'", flag, lo, hi, text);
    *out = v;
    return STRUX_OK;
}

static const struct {
    const char *name;
    unsigned bit;
    int is_int; /* 1 integer, 0 number, -1 text */
    double lo, hi;
} options[] = {
    {"--rows", O_ROWS, 1, 1, 9.0e15},          {"--features", O_FEATURES, 1, 1, INT32_MAX - 1},
    {"--depth", O_DEPTH, 1, 2, 20},            {"--cuts", O_CUTS, 1, 1, 100000},
    {"--nodes", O_NODES, 1, 3, 1 << 28},       {"--extra-parents", O_EXTRA, 1, 0, 9.0e15},
    {"--labels-per-row", O_LABELS, 0, 1, 32},  {"--nnz", O_NNZ, 1, 1, INT32_MAX - 1},
    {"--seed", O_SEED, 1, 0, 9.0e15},          {"--row-offset", O_OFFSET, 1, 0, 9.0e15},
    {"--scale", O_SCALE, 0, 0.01, 1},          {"--hier", O_HIER, -1, 0, 0},
    {"--shape", O_SHAPE, -1, 0, 0},
};
#define N_FLAGS (sizeof options / sizeof *options)

/* What the command line gave, as strux_cli_gen_args hands it over. */
typedef struct given_options {
    unsigned given;         /* O_* bits */
    double v[N_OPTIONS];    /* numbers by option bit index */
    const char *shape, *hier;
} given_options;

static strux_status take_option(void *ctx, size_t f, const char *flag, const char *value)
{
    given_options *g = ctx;
    if (g->given & options[f].bit) return usage_error("%s is given twice", flag);
    g->given |= options[f].bit;
    if (options[f].bit == O_HIER)
        g->hier = value;
    else if (options[f].bit == O_SHAPE)
        g->shape = value;
    else
        STRUX_TRY(parse_number(flag, value, options[f].is_int, options[f].lo, options[f].hi,
                               &g->v[bit_index(options[f].bit)]));
    return STRUX_OK;
}

static strux_status parse_args(int argc, char **argv, shape_args *a)
{
    given_options g = {0};
    const char *names[N_FLAGS];
    for (size_t f = 0; f < N_FLAGS; f++)
        names[f] = options[f].name;
    STRUX_TRY(strux_cli_gen_args(argc, argv, STRUX_GEN_SHAPE_USAGE, names, N_FLAGS, take_option,
                                 &g, &a->out));
    const char *shape_name = g.shape;
    unsigned given = g.given;
    const double *v = g.v;
    a->hier = g.hier;
    if (!shape_name) return usage_error("--shape is missing");
    size_t s = 0;
    while (s < N_SHAPES && strcmp(shape_name, shapes[s].name) != 0)
        s++;
    if (s == N_SHAPES)
        return usage_error("--shape %s is not a shape: balanced, unbalanced, random or swiki",
                           shape_name);
    for (size_t f = 0; f < N_FLAGS; f++)
        if ((given & options[f].bit) && !(shapes[s].takes & options[f].bit))
            return usage_error("%s does not apply to --shape %s", options[f].name, shapes[s].name);
#define VALUE(bit, dflt) ((given & (bit)) ? v[bit_index(bit)] : (dflt))
    strux_hier_gen_options *o = &a->o;
    *o = (strux_hier_gen_options){.shape = shapes[s].shape,
                                  .seed = (uint64_t)VALUE(O_SEED, 1),
                                  .first_row = (int64_t)VALUE(O_OFFSET, 0)};
    switch (o->shape) {
    case STRUX_SHAPE_BALANCED:
    case STRUX_SHAPE_UNBALANCED:
        o->dim = (int32_t)VALUE(O_FEATURES, SHAPE_FEATURES);
        o->depth = (int32_t)VALUE(O_DEPTH, SHAPE_DEPTH);
        o->cuts = (int32_t)VALUE(O_CUTS, SHAPE_CUTS);
        break;
    case STRUX_SHAPE_RANDOM:
        if (!(given & O_FEATURES) || !(given & O_NODES))
            return usage_error("--shape random needs --rows, --features and --nodes");
        o->dim = (int32_t)VALUE(O_FEATURES, 0);
        o->n_nodes = (int32_t)VALUE(O_NODES, 0);
        o->depth = (int32_t)VALUE(O_DEPTH, 0);
        o->extra_parents = (int64_t)VALUE(O_EXTRA, 0);
        o->nnz = (int32_t)VALUE(O_NNZ, o->dim / 2 < SHAPE_NNZ ? o->dim / 2 : SHAPE_NNZ);
        o->labels_per_row = VALUE(O_LABELS, 1);
        break;
    case STRUX_SHAPE_SWIKI:
        o->scale = VALUE(O_SCALE, 1);
        o->nnz = (int32_t)VALUE(O_NNZ, SWIKI_NNZ);
        o->labels_per_row = VALUE(O_LABELS, SWIKI_LABELS);
        break;
    }
    if (o->shape != STRUX_SHAPE_SWIKI && !(given & O_ROWS))
        return usage_error("--shape %s needs --rows", shapes[s].name);
    o->n_rows = (int64_t)VALUE(O_ROWS, strux_hier_gen_swiki_size(STRUX_SWIKI_DOCS, o->scale));
#undef VALUE
    a->text = strux_cli_ends_with(a->out, ".svm") || strux_cli_ends_with(a->out, ".txt");
    if (!a->hier) {
        default_hier(a->out, a->hier_buf, sizeof a->hier_buf);
        a->hier = a->hier_buf;
    }
    if (strcmp(a->hier, a->out) == 0)
        return usage_error("--hier %s is OUTPUT itself; give the hierarchy another name", a->hier);
    return strux_cli_gen_checked(strux_hier_gen_options_check(o), STRUX_GEN_SHAPE_USAGE);
}

/* The hierarchy as `parent child` lines, atomically. */
static strux_status write_hier(const char *path, const strux_hier_gen_info *in)
{
    char *buf = NULL;
    size_t cap = (size_t)in->n_edges * 24 + 1, n = 0; /* two ids of ≤ 10 digits per line */
    STRUX_TRY(strux_alloc(&buf, cap));
    for (int64_t e = 0; e < in->n_edges; e++)
        n += (size_t)snprintf(buf + n, cap - n, "%lld %lld\n", (long long)in->parent[e],
                              (long long)in->child[e]);
    strux_status st = strux_io_write_atomic(path, buf, n);
    strux_free(&buf);
    return st;
}

/* One text row, `l1,l2 j:v ...` (features 1-based, %.9g round-trips every float), into buf
 * (room for TEXT_LABEL_BYTES per label and TEXT_FEATURE_BYTES per feature); returns its length. */
#define TEXT_LABEL_BYTES 12   /* ",2147483647" */
#define TEXT_FEATURE_BYTES 28 /* " 2147483647:-1.23456789e-38" */
static size_t text_row(char *buf, int32_t nnz, const int32_t *col, const float *val,
                       int32_t n_labels, const int32_t *labels)
{
    size_t n = 0;
    for (int32_t k = 0; k < n_labels; k++)
        n += (size_t)sprintf(buf + n, k ? ",%d" : "%d", labels[k]);
    for (int32_t p = 0; p < nnz; p++)
        n += (size_t)sprintf(buf + n, " %d:%.9g", col[p] + 1, (double)val[p]);
    buf[n++] = '\n';
    return n;
}

/* Statistics of the generated hierarchy for the log: depth of the leaves (longest root path,
 * root = 1), nodes within depth 5 (SWIKI d5's cut, hierarchical.md A13), nodes with several
 * parents. */
static void log_hierarchy(const char *path, const strux_hierarchy *h)
{
    char summary[256];
    strux_hierarchy_summary(h, summary, sizeof summary);
    double depth_sum = 0;
    int32_t shallow = 0, multi = 0, most_parents = 0;
    for (int32_t q = 0; q < h->n_leaves; q++)
        depth_sum += h->depth[h->leaves[q]];
    for (int32_t k = 0; k < h->n_nodes; k++) {
        int32_t np = (int32_t)(h->parent_ptr[k + 1] - h->parent_ptr[k]);
        shallow += h->depth[k] <= 5;
        multi += np >= 2;
        if (np > most_parents) most_parents = np;
    }
    strux_log(STRUX_LOG_INFO,
              "%s: %s; leaf depth mean %.2f, max %d; %d nodes (%.1f%%) within depth 5; %d nodes "
              "(%.2f%%) with 2 or more parents, at most %d",
              path, summary, depth_sum / h->n_leaves, h->max_depth, shallow,
              100.0 * shallow / h->n_nodes, multi, 100.0 * multi / (h->n_nodes - 1), most_parents);
}

static strux_status generate(const shape_args *a)
{
    const char *inputs[] = {a->out};
    STRUX_TRY(strux_io_check_output(a->out, NULL, 0));
    STRUX_TRY(strux_io_check_output(a->hier, inputs, 1));
    double t0 = strux_time_now();
    strux_hier_gen *g = NULL;
    STRUX_TRY(strux_hier_gen_create(&a->o, &g));
    const strux_hier_gen_info *in = strux_hier_gen_get_info(g);
    int32_t *col = NULL, *labels = NULL;
    float *val = NULL;
    char *line = NULL;
    strux_dataset_writer *w = NULL;
    strux_io_file *text = NULL;
    int64_t nnz_sum = 0, label_sum = 0;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&col, (size_t)in->max_nnz, sizeof *col), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&val, (size_t)in->max_nnz, sizeof *val), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&labels, (size_t)in->max_labels, sizeof *labels), done);
    if (a->text) {
        size_t room = (size_t)in->max_labels * TEXT_LABEL_BYTES +
                      (size_t)in->max_nnz * TEXT_FEATURE_BYTES + 64;
        STRUX_TRY_GOTO(st, strux_alloc(&line, room), done);
        STRUX_TRY_GOTO(st, strux_io_file_open(a->out, &text), done);
        if (in->closures) { /* the XMC header `N D M` (swiki: LSHTC files have none) */
            int n = snprintf(line, room, "%lld %d %d\n", (long long)a->o.n_rows, in->dim,
                             in->n_nodes);
            STRUX_TRY_GOTO(st, strux_io_file_write(text, line, (size_t)n), done);
        }
    } else {
        STRUX_TRY_GOTO(
            st, strux_io_dataset_writer_open(a->out, a->o.n_rows, in->dim, in->n_nodes, &w), done);
    }
    for (int64_t i = 0; i < a->o.n_rows; i++) {
        int32_t nnz, n_labels;
        STRUX_TRY_GOTO(st,
                       strux_hier_gen_row(g, a->o.first_row + i, col, val, &nnz, labels, &n_labels),
                       done);
        nnz_sum += nnz;
        label_sum += n_labels;
        if (text)
            STRUX_TRY_GOTO(st,
                           strux_io_file_write(text, line,
                                               text_row(line, nnz, col, val, n_labels, labels)),
                           done);
        else
            STRUX_TRY_GOTO(st, strux_io_dataset_writer_add(w, nnz, col, val, n_labels, labels),
                           done);
    }
done:
    if (text) st = strux_io_file_close(&text, st);
    if (w) st = strux_io_dataset_writer_close(&w, st);
    /* the hierarchy once the rows are in place; if it fails, the rows go too */
    if (st == STRUX_OK && (st = write_hier(a->hier, in)) != STRUX_OK) remove(a->out);
    if (st == STRUX_OK) {
        log_hierarchy(a->hier, in->h);
        strux_log(STRUX_LOG_INFO,
                  "%s: %lld rows from row %lld, %d features, %d nodes, %d leaves, %lld "
                  "non-zeros, %.3f labels per row (%s), seed %llu; written in %.2fs",
                  a->out, (long long)a->o.n_rows, (long long)a->o.first_row, in->dim, in->n_nodes,
                  in->n_leaves, (long long)nnz_sum, (double)label_sum / (double)a->o.n_rows,
                  in->closures ? "closures without the root" : "leaves",
                  (unsigned long long)a->o.seed, strux_time_now() - t0);
    }
    strux_free(&col);
    strux_free(&val);
    strux_free(&labels);
    strux_free(&line);
    strux_hier_gen_destroy(&g);
    return st;
}

strux_status strux_cli_gen_shape(int argc, char **argv)
{
    shape_args a;
    STRUX_TRY(parse_args(argc, argv, &a));
    return generate(&a);
}
