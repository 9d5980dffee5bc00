/* data/subsets.c - named subsets for dataset constraints (dataset_constraints.md §0 "datasets
 * D_i", §1.5 Table 1: D^+, D^-, D^A, D^{ab}, U^{·+}; issue 15 [datasets]). In order: the
 * definition table, a recursive-descent parser with column-accurate messages, the printer of the
 * normal form, the name and cycle check, the label-class analysis that lets rate helpers refuse
 * `tpr(unlabeled)` before data is read, and evaluation of a definition over local rows into a
 * byte vector (rows files read and validated here). Does not read baseline models, count over
 * ranks or read config sections (see strux/subsets.h). */
#include "strux/subsets.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum node_op {
    OP_NAME,
    OP_LABEL,
    OP_FEATURE,
    OP_ROWS,
    OP_BASELINE,
    OP_NOT,
    OP_MINUS,
    OP_AND,
    OP_OR
};
enum cmp_op { CMP_GT, CMP_GE, CMP_LT, CMP_LE, CMP_EQ, CMP_NE };
static const char *const cmp_text[] = {">", ">=", "<", "<=", "==", "!="};

struct node {
    enum node_op op;
    int32_t a, b;    /* children (node indices): NOT uses a, binary operators a and b */
    int32_t col;     /* 1-based column of the node in the definition text (messages) */
    int8_t sign;     /* LABEL: +1/-1 class; BASELINE: +1 positive, -1 negative */
    enum cmp_op cmp; /* FEATURE */
    int32_t feature; /* FEATURE: 1-based index as in the file */
    double value;    /* FEATURE: right-hand side */
    char *str;       /* NAME: the name; ROWS: training file; BASELINE: path */
    char *str2;      /* ROWS: test file, or NULL */
};

struct def {
    char *name;         /* NULL for an anonymous subset */
    char *text;         /* normal form (the name itself for a built-in) */
    char *source;       /* as written; messages quote it and node columns count in it */
    char *origin;       /* where it was defined (messages) */
    char *what;         /* "dataset female", or the user of an anonymous subset (messages) */
    struct node *nodes; /* n_nodes nodes, root last (NULL for a built-in) */
    int32_t n_nodes, cap;
    int builtin; /* nonzero for the five built-ins */
};

struct strux_subset_defs {
    struct def *defs; /* n entries, built-ins first */
    int32_t n, cap;
};

static const char *const builtin_names[STRUX_SUBSET_N_BUILTIN] = {"all", "labeled", "unlabeled",
                                                                  "positive", "negative"};
/* may-contain and must-contain-all label classes of each built-in, in builtin_names order */
static const unsigned builtin_classes[STRUX_SUBSET_N_BUILTIN] = {
    STRUX_SUBSET_HAS_POS | STRUX_SUBSET_HAS_NEG | STRUX_SUBSET_HAS_UNL,
    STRUX_SUBSET_HAS_POS | STRUX_SUBSET_HAS_NEG, STRUX_SUBSET_HAS_UNL, STRUX_SUBSET_HAS_POS,
    STRUX_SUBSET_HAS_NEG};
static const char *const keywords[] = {"label", "feature", "rows", "baseline"};
#define ALL_CLASSES (STRUX_SUBSET_HAS_POS | STRUX_SUBSET_HAS_NEG | STRUX_SUBSET_HAS_UNL)

/* ---- definition table ---- */

static void def_free(struct def *f)
{
    for (int32_t i = 0; i < f->n_nodes; i++) {
        strux_free(&f->nodes[i].str);
        strux_free(&f->nodes[i].str2);
    }
    strux_free(&f->nodes);
    strux_free(&f->name);
    strux_free(&f->text);
    strux_free(&f->source);
    strux_free(&f->origin);
    strux_free(&f->what);
    memset(f, 0, sizeof *f);
}

static strux_status table_append(strux_subset_defs *d, struct def *f)
{
    if (d->n == d->cap) {
        int32_t cap = d->cap ? 2 * d->cap : 16;
        STRUX_TRY(strux_realloc_array(&d->defs, (size_t)cap, sizeof *d->defs));
        d->cap = cap;
    }
    d->defs[d->n++] = *f;
    memset(f, 0, sizeof *f);
    return STRUX_OK;
}

strux_status strux_subset_defs_create(strux_subset_defs **out)
{
    strux_subset_defs *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    strux_status st = STRUX_OK;
    for (int k = 0; k < STRUX_SUBSET_N_BUILTIN && st == STRUX_OK; k++) {
        struct def f = {.builtin = 1};
        st = strux_strdup(&f.name, builtin_names[k]);
        if (st == STRUX_OK) st = strux_strdup(&f.text, builtin_names[k]);
        if (st == STRUX_OK) st = strux_strdup(&f.source, builtin_names[k]);
        if (st == STRUX_OK) st = strux_strdup(&f.origin, "built-in");
        if (st == STRUX_OK) st = strux_strdup(&f.what, "built-in dataset");
        if (st == STRUX_OK) st = table_append(d, &f);
        def_free(&f);
    }
    if (st != STRUX_OK) {
        strux_subset_defs_destroy(&d);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = d;
    return STRUX_OK;
}

void strux_subset_defs_destroy(strux_subset_defs **p)
{
    if (!p || !*p) return;
    for (int32_t k = 0; k < (*p)->n; k++)
        def_free(&(*p)->defs[k]);
    strux_free(&(*p)->defs);
    strux_free(p);
}

int32_t strux_subset_count(const strux_subset_defs *d)
{
    return d->n;
}

int32_t strux_subset_find(const strux_subset_defs *d, const char *name)
{
    for (int32_t k = 0; k < d->n; k++)
        if (d->defs[k].name && strcmp(d->defs[k].name, name) == 0) return k;
    return -1;
}

const char *strux_subset_name(const strux_subset_defs *d, int32_t k)
{
    return d->defs[k].name ? d->defs[k].name : d->defs[k].text;
}

const char *strux_subset_text(const strux_subset_defs *d, int32_t k)
{
    return d->defs[k].text;
}

int strux_subset_is_anonymous(const strux_subset_defs *d, int32_t k)
{
    return d->defs[k].name == NULL;
}

/* "all, labeled, ..., female": the named definitions, for unknown-name messages. */
static void defined_names(const strux_subset_defs *d, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t k = 0; k < d->n; k++) {
        if (!d->defs[k].name) continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", d->defs[k].name);
        if (w < 0 || (size_t)w >= n - used) {
            if (n > 6) memcpy(buf + n - 6, ", ...", 6);
            return;
        }
        used += (size_t)w;
    }
}

/* ---- parser ---- */

typedef struct parser {
    const char *s;      /* text being parsed (ends where the expression ends) */
    const char *shown;  /* the text messages quote; columns count in both */
    size_t pos;         /* current byte */
    struct def *f;      /* receives the nodes */
    const char *origin; /* messages */
    const char *what;   /* "dataset female", "constraint eq_opp" */
} parser;

static void skip_ws(parser *p)
{
    while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

/* The error for "expected <what> at the current position". */
static strux_status syntax_error(const parser *p, const char *expected)
{
    char found[48];
    if (!p->s[p->pos]) {
        snprintf(found, sizeof found, "end of text");
    } else {
        size_t len = 0;
        while (p->s[p->pos + len] && !isspace((unsigned char)p->s[p->pos + len]) && len < 20)
            len++;
        snprintf(found, sizeof found, "'%.*s'", (int)(len ? len : 1), p->s + p->pos);
    }
    return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                           "%s: %s = '%s': column %zu: expected %s, found %s", p->origin, p->what,
                           p->shown, p->pos + 1, expected, found);
}

static strux_status push_node(parser *p, const struct node *nd, int32_t *idx)
{
    struct def *f = p->f;
    if (f->n_nodes == f->cap) {
        int32_t cap = f->cap ? 2 * f->cap : 8;
        STRUX_TRY(strux_realloc_array(&f->nodes, (size_t)cap, sizeof *f->nodes));
        f->cap = cap;
    }
    f->nodes[f->n_nodes] = *nd;
    *idx = f->n_nodes++;
    return STRUX_OK;
}

static int is_ident_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static int is_ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Length of the identifier at p->pos (0 if none). */
static size_t ident_len(const parser *p)
{
    size_t n = 0;
    if (!is_ident_start(p->s[p->pos])) return 0;
    while (is_ident_char(p->s[p->pos + n]))
        n++;
    return n;
}

/* A path: a run of characters other than white space and ( ) & |, not starting with - or !. */
static size_t path_len(const parser *p)
{
    const char *s = p->s + p->pos;
    if (!*s || *s == '-' || *s == '!') return 0;
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]) && !strchr("()&|", s[n]))
        n++;
    return n;
}

static strux_status take_path(parser *p, char **out)
{
    skip_ws(p);
    size_t n = path_len(p);
    if (!n) return syntax_error(p, "a file path");
    STRUX_TRY(strux_alloc(out, n + 1));
    memcpy(*out, p->s + p->pos, n);
    p->pos += n;
    return STRUX_OK;
}

static strux_status parse_or(parser *p, int32_t *idx);

static strux_status parse_label(parser *p, struct node *nd)
{
    skip_ws(p);
    const char *s = p->s + p->pos;
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]) && !strchr("()&|", s[n]))
        n++;
    if ((n == 2 && strncmp(s, "+1", 2) == 0) || (n == 1 && s[0] == '1')) {
        nd->sign = 1;
    } else if ((n == 2 && strncmp(s, "-1", 2) == 0) || (n == 1 && s[0] == '0')) {
        nd->sign = -1;
    } else {
        return syntax_error(p, "+1 or -1 after 'label'");
    }
    p->pos += n;
    return STRUX_OK;
}

static strux_status parse_feature(parser *p, struct node *nd)
{
    skip_ws(p);
    const char *s = p->s + p->pos;
    size_t n = 0;
    while (isdigit((unsigned char)s[n]))
        n++;
    errno = 0;
    long j = n ? strtol(s, NULL, 10) : 0;
    if (!n || is_ident_char(s[n]) || s[n] == '.' || j < 1 || j > INT32_MAX || errno)
        return syntax_error(p, "a feature index (an integer from 1) after 'feature'");
    nd->feature = (int32_t)j;
    p->pos += n;
    skip_ws(p);
    s = p->s + p->pos;
    static const enum cmp_op order[] = {CMP_GE, CMP_LE, CMP_EQ, CMP_NE, CMP_GT, CMP_LT};
    size_t k;
    for (k = 0; k < sizeof order / sizeof *order; k++) {
        size_t len = strlen(cmp_text[order[k]]);
        if (strncmp(s, cmp_text[order[k]], len) == 0) {
            nd->cmp = order[k];
            p->pos += len;
            break;
        }
    }
    if (k == sizeof order / sizeof *order) return syntax_error(p, "one of > >= < <= == !=");
    skip_ws(p);
    s = p->s + p->pos;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || is_ident_char(*end) || *end == '.')
        return syntax_error(p, "a finite number");
    nd->value = v;
    p->pos += (size_t)(end - s);
    return STRUX_OK;
}

static strux_status parse_atom(parser *p, int32_t *idx)
{
    skip_ws(p);
    struct node nd = {.col = (int32_t)p->pos + 1, .a = -1, .b = -1};
    char c = p->s[p->pos];
    if (c == '(') {
        p->pos++;
        STRUX_TRY(parse_or(p, idx));
        skip_ws(p);
        if (p->s[p->pos] != ')') return syntax_error(p, "')' or an operator (& | -)");
        p->pos++;
        return STRUX_OK;
    }
    if (c == '!') {
        p->pos++;
        STRUX_TRY(parse_atom(p, &nd.a));
        nd.op = OP_NOT;
        return push_node(p, &nd, idx);
    }
    size_t n = ident_len(p);
    if (!n) return syntax_error(p, "a dataset: a name, label, feature, rows, baseline, '!' or '('");
    const char *w = p->s + p->pos;
    strux_status st = STRUX_OK;
    if (n == 5 && strncmp(w, "label", 5) == 0) {
        p->pos += n;
        nd.op = OP_LABEL;
        STRUX_TRY(parse_label(p, &nd));
    } else if (n == 7 && strncmp(w, "feature", 7) == 0) {
        p->pos += n;
        nd.op = OP_FEATURE;
        STRUX_TRY(parse_feature(p, &nd));
    } else if (n == 4 && strncmp(w, "rows", 4) == 0) {
        p->pos += n;
        nd.op = OP_ROWS;
        STRUX_TRY(take_path(p, &nd.str));
        skip_ws(p);
        if (path_len(p)) st = take_path(p, &nd.str2);
    } else if (n == 8 && strncmp(w, "baseline", 8) == 0) {
        p->pos += n;
        nd.op = OP_BASELINE;
        STRUX_TRY(take_path(p, &nd.str));
        skip_ws(p);
        size_t m = ident_len(p);
        const char *s = p->s + p->pos;
        if (m == 8 && strncmp(s, "positive", 8) == 0) {
            nd.sign = 1;
        } else if (m == 8 && strncmp(s, "negative", 8) == 0) {
            nd.sign = -1;
        } else {
            st = syntax_error(p, "positive or negative after the baseline path");
        }
        p->pos += m;
    } else {
        nd.op = OP_NAME;
        st = strux_alloc(&nd.str, n + 1);
        if (st == STRUX_OK) memcpy(nd.str, w, n);
        p->pos += n;
    }
    if (st == STRUX_OK) st = push_node(p, &nd, idx);
    if (st != STRUX_OK) {
        strux_free(&nd.str);
        strux_free(&nd.str2);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    return STRUX_OK;
}

/* One precedence level: operand (OP operand)*, left associative. */
static strux_status parse_level(parser *p, char sym, enum node_op op,
                                strux_status (*operand)(parser *, int32_t *), int32_t *idx)
{
    STRUX_TRY(operand(p, idx));
    for (;;) {
        skip_ws(p);
        if (p->s[p->pos] != sym) return STRUX_OK;
        struct node nd = {.op = op, .a = *idx, .col = (int32_t)p->pos + 1};
        p->pos++;
        STRUX_TRY(operand(p, &nd.b));
        STRUX_TRY(push_node(p, &nd, idx));
    }
}

static strux_status parse_minus(parser *p, int32_t *idx)
{
    return parse_level(p, '-', OP_MINUS, parse_atom, idx);
}

static strux_status parse_and(parser *p, int32_t *idx)
{
    return parse_level(p, '&', OP_AND, parse_minus, idx);
}

static strux_status parse_or(parser *p, int32_t *idx)
{
    return parse_level(p, '|', OP_OR, parse_and, idx);
}

/* ---- printer: normal form with minimal parentheses ---- */

static int precedence(enum node_op op)
{
    switch (op) {
    case OP_OR:
        return 1;
    case OP_AND:
        return 2;
    case OP_MINUS:
        return 3;
    case OP_NOT:
        return 4;
    default:
        return 5;
    }
}

static strux_status print_node(const struct def *f, int32_t i, strux_strbuf *b)
{
    const struct node *nd = &f->nodes[i];
    char num[32];
    switch (nd->op) {
    case OP_NAME:
        return strux_strbuf_printf(b, "%s", nd->str);
    case OP_LABEL:
        return strux_strbuf_printf(b, "label %s", nd->sign > 0 ? "+1" : "-1");
    case OP_FEATURE:
        strux_format_double(nd->value, num, sizeof num);
        return strux_strbuf_printf(b, "feature %" PRId32 " %s %s", nd->feature, cmp_text[nd->cmp], num);
    case OP_ROWS:
        return nd->str2 ? strux_strbuf_printf(b, "rows %s %s", nd->str, nd->str2)
                        : strux_strbuf_printf(b, "rows %s", nd->str);
    case OP_BASELINE:
        return strux_strbuf_printf(b, "baseline %s %s", nd->str, nd->sign > 0 ? "positive" : "negative");
    case OP_NOT: {
        int paren = precedence(f->nodes[nd->a].op) < precedence(OP_NOT);
        STRUX_TRY(strux_strbuf_printf(b, paren ? "!(" : "!"));
        STRUX_TRY(print_node(f, nd->a, b));
        return paren ? strux_strbuf_printf(b, ")") : STRUX_OK;
    }
    default: {
        static const char sym[] = {[OP_MINUS] = '-', [OP_AND] = '&', [OP_OR] = '|'};
        int pl = precedence(f->nodes[nd->a].op) < precedence(nd->op);
        int pr = precedence(f->nodes[nd->b].op) <= precedence(nd->op);
        STRUX_TRY(strux_strbuf_printf(b, pl ? "(" : ""));
        STRUX_TRY(print_node(f, nd->a, b));
        STRUX_TRY(strux_strbuf_printf(b, "%s %c %s", pl ? ")" : "", sym[nd->op], pr ? "(" : ""));
        STRUX_TRY(print_node(f, nd->b, b));
        return strux_strbuf_printf(b, pr ? ")" : "");
    }
    }
}

/* Parse text from byte start into *f (nodes and normal-form text); messages quote shown. */
static strux_status parse_def(const char *text, size_t start, const char *shown, const char *what,
                              const char *origin, struct def *f)
{
    parser p = {.s = text, .pos = start, .shown = shown, .f = f, .origin = origin, .what = what};
    int32_t root;
    STRUX_TRY(parse_or(&p, &root));
    skip_ws(&p);
    if (p.s[p.pos]) return syntax_error(&p, "an operator (& | -) or the end of the definition");
    assert(root == f->n_nodes - 1);
    strux_strbuf b = {0};
    strux_status st = print_node(f, root, &b);
    if (st == STRUX_OK) {
        f->text = b.s;
        return STRUX_OK;
    }
    strux_free(&b.s);
    return strux_error_frame(st, __FILE__, __LINE__, __func__);
}

static int is_blank(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return !*s;
}

strux_status strux_subset_define(strux_subset_defs *d, const char *name, const char *text,
                                 const char *origin)
{
    size_t n = strlen(name);
    int ident = n > 0 && is_ident_start(name[0]);
    for (size_t i = 1; i < n && ident; i++)
        ident = is_ident_char(name[i]);
    STRUX_CHECK(ident, STRUX_ERR_CONFIG,
                "%s: dataset name '%s' is not an identifier (letters, digits, _; not starting "
                "with a digit)",
                origin, name);
    for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
        STRUX_CHECK(strcmp(name, keywords[i]) != 0, STRUX_ERR_CONFIG,
                    "%s: dataset name '%s' is a keyword (label, feature, rows, baseline)", origin,
                    name);
    int32_t k = strux_subset_find(d, name);
    STRUX_CHECK(k < 0 || !d->defs[k].builtin, STRUX_ERR_CONFIG,
                "%s: dataset '%s' is built in and cannot be redefined", origin, name);
    if (is_blank(text)) {
        if (k >= 0) {
            def_free(&d->defs[k]);
            memmove(d->defs + k, d->defs + k + 1, (size_t)(d->n - k - 1) * sizeof *d->defs);
            d->n--;
        }
        return STRUX_OK;
    }
    char what[160];
    snprintf(what, sizeof what, "dataset %s", name);
    struct def f = {0};
    strux_status st;
    STRUX_TRY_GOTO(st, parse_def(text, 0, text, what, origin, &f), fail);
    STRUX_TRY_GOTO(st, strux_strdup(&f.source, text), fail);
    STRUX_TRY_GOTO(st, strux_strdup(&f.name, name), fail);
    STRUX_TRY_GOTO(st, strux_strdup(&f.origin, origin), fail);
    STRUX_TRY_GOTO(st, strux_strdup(&f.what, what), fail);
    if (k >= 0) {
        def_free(&d->defs[k]);
        d->defs[k] = f;
        return STRUX_OK;
    }
    STRUX_TRY_GOTO(st, table_append(d, &f), fail);
    return STRUX_OK;
fail:
    def_free(&f);
    return st;
}

/* ---- names and cycles ---- */

static strux_status unknown_name(const strux_subset_defs *d, const struct def *f,
                                 const struct node *nd, const char *what)
{
    char names[1024];
    defined_names(d, names, sizeof names);
    return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                           "%s: %s = '%s': column %" PRId32 ": unknown dataset '%s' (defined: %s)",
                           f->origin, what, f->source, nd->col, nd->str, names);
}

/* Depth-first walk from definition k: state 1 = on the current path, 2 = done. path holds the
 * definitions on the current path (for the cycle message). */
static strux_status check_def(const strux_subset_defs *d, int32_t k, uint8_t *state, int32_t *path,
                              int32_t depth)
{
    const struct def *f = &d->defs[k];
    if (state[k] == 2 || f->builtin) return STRUX_OK;
    if (state[k] == 1) {
        char cycle[1024];
        size_t used = 0;
        int32_t start = depth - 1;
        while (start > 0 && path[start] != k)
            start--;
        for (int32_t i = start; i < depth && used < sizeof cycle; i++)
            used += (size_t)snprintf(cycle + used, sizeof cycle - used, "%s -> ",
                                     d->defs[path[i]].name);
        if (used < sizeof cycle) snprintf(cycle + used, sizeof cycle - used, "%s", f->name);
        return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                               "%s: dataset %s is defined through itself: %s", f->origin, f->name,
                               cycle);
    }
    state[k] = 1;
    path[depth] = k;
    for (int32_t i = 0; i < f->n_nodes; i++) {
        if (f->nodes[i].op != OP_NAME) continue;
        int32_t r = strux_subset_find(d, f->nodes[i].str);
        if (r < 0) return unknown_name(d, f, &f->nodes[i], f->what);
        STRUX_TRY(check_def(d, r, state, path, depth + 1));
    }
    state[k] = 2;
    return STRUX_OK;
}

strux_status strux_subset_check(const strux_subset_defs *d)
{
    uint8_t *state;
    int32_t *path = NULL;
    STRUX_TRY(strux_alloc(&state, (size_t)d->n));
    strux_status st = strux_alloc_array(&path, (size_t)d->n + 1, sizeof *path);
    for (int32_t k = 0; k < d->n && st == STRUX_OK; k++)
        st = check_def(d, k, state, path, 0);
    strux_free(&state);
    strux_free(&path);
    return st == STRUX_OK ? STRUX_OK : strux_error_frame(st, __FILE__, __LINE__, __func__);
}

strux_status strux_subset_define_expr(strux_subset_defs *d, const char *text, size_t start,
                                      size_t end, const char *what, const char *origin, int32_t *k)
{
    struct def f = {0};
    char *expr = NULL;
    strux_status st;
    STRUX_CHECK(start <= end && end <= strlen(text), STRUX_ERR_INTERNAL,
                "expression [%zu, %zu) outside its text", start, end);
    STRUX_TRY_GOTO(st, strux_strdup(&expr, text), done);
    expr[end] = '\0';
    STRUX_TRY_GOTO(st, parse_def(expr, start, text, what, origin, &f), done);
    STRUX_TRY_GOTO(st, strux_strdup(&f.source, text), done);
    STRUX_TRY_GOTO(st, strux_strdup(&f.origin, origin), done);
    STRUX_TRY_GOTO(st, strux_strdup(&f.what, what), done);
    for (int32_t i = 0; i < f.n_nodes; i++) {
        if (f.nodes[i].op == OP_NAME && strux_subset_find(d, f.nodes[i].str) < 0) {
            st = unknown_name(d, &f, &f.nodes[i], what);
            goto done;
        }
    }
    if (f.n_nodes == 1 && f.nodes[0].op == OP_NAME) {
        *k = strux_subset_find(d, f.nodes[0].str);
        goto done;
    }
    for (int32_t j = 0; j < d->n; j++) {
        if (!d->defs[j].name && strcmp(d->defs[j].text, f.text) == 0) {
            *k = j;
            goto done;
        }
    }
    STRUX_TRY_GOTO(st, table_append(d, &f), done);
    *k = d->n - 1;
done:
    strux_free(&expr);
    def_free(&f);
    return st;
}

/* ---- label classes (may contain / contains every row of) ---- */

static void classes_of(const strux_subset_defs *d, int32_t k, unsigned *may, unsigned *must,
                       int depth);

static void classes_node(const strux_subset_defs *d, const struct def *f, int32_t i, int depth,
                         unsigned *may, unsigned *must)
{
    const struct node *nd = &f->nodes[i];
    unsigned ma, mu, mb, ub;
    switch (nd->op) {
    case OP_NAME: {
        int32_t k = strux_subset_find(d, nd->str);
        if (k < 0 || depth > d->n) { /* unknown or cyclic: know nothing */
            *may = ALL_CLASSES;
            *must = 0;
            return;
        }
        classes_of(d, k, may, must, depth + 1);
        return;
    }
    case OP_LABEL:
        *may = *must = nd->sign > 0 ? STRUX_SUBSET_HAS_POS : STRUX_SUBSET_HAS_NEG;
        return;
    case OP_NOT:
        classes_node(d, f, nd->a, depth, &ma, &mu);
        *may = ALL_CLASSES & ~mu;
        *must = ALL_CLASSES & ~ma;
        return;
    case OP_AND:
    case OP_OR:
    case OP_MINUS:
        classes_node(d, f, nd->a, depth, &ma, &mu);
        classes_node(d, f, nd->b, depth, &mb, &ub);
        if (nd->op == OP_AND) {
            *may = ma & mb;
            *must = mu & ub;
        } else if (nd->op == OP_OR) {
            *may = ma | mb;
            *must = mu | ub;
        } else {
            *may = ma & ~ub;
            *must = mu & ~mb;
        }
        return;
    default:
        *may = ALL_CLASSES;
        *must = 0;
        return;
    }
}

static void classes_of(const strux_subset_defs *d, int32_t k, unsigned *may, unsigned *must,
                       int depth)
{
    const struct def *f = &d->defs[k];
    if (f->builtin) {
        *may = *must = builtin_classes[k];
        return;
    }
    classes_node(d, f, f->n_nodes - 1, depth, may, must);
}

unsigned strux_subset_labels(const strux_subset_defs *d, int32_t k)
{
    unsigned may, must;
    classes_of(d, k, &may, &must, 0);
    return may;
}

/* ---- baselines ---- */

int32_t strux_subset_n_baselines(const strux_subset_defs *d)
{
    int32_t n = 0;
    while (strux_subset_baseline_path(d, n))
        n++;
    return n;
}

/* The b-th distinct baseline path (NULL past the end); with want set, instead the index of want. */
static const char *baseline_scan(const strux_subset_defs *d, int32_t b, const char *want,
                                 int32_t *index)
{
    int32_t seen = 0;
    for (int32_t k = 0; k < d->n; k++) {
        const struct def *f = &d->defs[k];
        for (int32_t i = 0; i < f->n_nodes; i++) {
            const struct node *nd = &f->nodes[i];
            if (nd->op != OP_BASELINE) continue;
            int first = 1; /* first appearance of this path? */
            for (int32_t k2 = 0; k2 <= k && first; k2++) {
                const struct def *g = &d->defs[k2];
                int32_t end = k2 == k ? i : g->n_nodes;
                for (int32_t i2 = 0; i2 < end && first; i2++)
                    first =
                        !(g->nodes[i2].op == OP_BASELINE && strcmp(g->nodes[i2].str, nd->str) == 0);
            }
            if (!first) continue;
            if (want ? strcmp(want, nd->str) == 0 : seen == b) {
                if (index) *index = seen;
                return nd->str;
            }
            seen++;
        }
    }
    return NULL;
}

const char *strux_subset_baseline_path(const strux_subset_defs *d, int32_t b)
{
    return baseline_scan(d, b, NULL, NULL);
}

/* ---- evaluation ---- */

static int evaluable_node(const strux_subset_defs *d, const struct def *f, int32_t i,
                          const strux_subset_input *in, int depth)
{
    const struct node *nd = &f->nodes[i];
    if (depth > d->n) return 0; /* a cycle: strux_subset_eval names it */
    switch (nd->op) {
    case OP_NAME: {
        int32_t k = strux_subset_find(d, nd->str);
        if (k < 0) return 0;
        const struct def *g = &d->defs[k];
        return g->builtin || evaluable_node(d, g, g->n_nodes - 1, in, depth + 1);
    }
    case OP_ROWS:
        return !in->test || nd->str2 != NULL;
    case OP_BASELINE: {
        int32_t b = -1;
        baseline_scan(d, 0, nd->str, &b);
        return in->baseline && b >= 0 && in->baseline[b];
    }
    case OP_NOT:
        return evaluable_node(d, f, nd->a, in, depth);
    case OP_MINUS:
    case OP_AND:
    case OP_OR:
        return evaluable_node(d, f, nd->a, in, depth) && evaluable_node(d, f, nd->b, in, depth);
    default:
        return 1;
    }
}

int strux_subset_evaluable(const strux_subset_defs *d, int32_t k, const strux_subset_input *in)
{
    const struct def *f = &d->defs[k];
    return f->builtin || evaluable_node(d, f, f->n_nodes - 1, in, 0);
}

/* Mark the local rows listed in a `rows` file (1-based global example numbers, one per line,
 * blank lines ignored), checking each id once over the whole file. */
static strux_status read_rows(const char *path, const strux_dataset *ds, uint8_t *member)
{
    FILE *fp = fopen(path, "r");
    STRUX_CHECK(fp, STRUX_ERR_INPUT, "%s: cannot open rows file: %s", path, strerror(errno));
    uint8_t *seen = NULL;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_alloc(&seen, (size_t)(ds->n_global / 8 + 1)), done);
    memset(member, 0, (size_t)ds->n_local);
    char line[256];
    for (int64_t line_no = 1; fgets(line, sizeof line, fp); line_no++) {
        size_t len = strlen(line);
        STRUX_CHECK_GOTO(st, len + 1 < sizeof line || line[len - 1] == '\n' || feof(fp),
                         STRUX_ERR_INPUT, done,
                         "%s:%" PRId64 ": line too long for an example number", path, line_no);
        while (len && isspace((unsigned char)line[len - 1]))
            line[--len] = '\0';
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s) continue;
        char *end;
        errno = 0;
        long long id = strtoll(s, &end, 10);
        STRUX_CHECK_GOTO(st, end != s && !*end && !errno, STRUX_ERR_INPUT, done,
                         "%s:%" PRId64 ": '%s' is not an integer example number", path, line_no, s);
        STRUX_CHECK_GOTO(st, id >= 1 && id <= ds->n_global, STRUX_ERR_INPUT, done,
                         "%s:%" PRId64 ": example %lld outside [1, %" PRId64 "] (%s)", path,
                         line_no, id, ds->n_global, ds->path ? ds->path : "the data");
        int64_t g = (int64_t)id - 1;
        STRUX_CHECK_GOTO(st, !(seen[g / 8] & (1u << (g % 8))), STRUX_ERR_INPUT, done,
                         "%s:%" PRId64 ": example %lld listed twice", path, line_no, id);
        seen[g / 8] |= (uint8_t)(1u << (g % 8));
        if (g >= ds->first && g < ds->first + ds->n_local) member[g - ds->first] = 1;
    }
    STRUX_CHECK_GOTO(st, !ferror(fp), STRUX_ERR_INPUT, done, "%s: read error", path);
    st = STRUX_OK;
done:
    fclose(fp);
    strux_free(&seen);
    return st;
}

/* Value of feature column j (0-based) in local row r; absent = 0. */
static double feature_value(const strux_csr *x, int64_t r, int32_t j)
{
    int64_t lo = x->ptr[r], hi = x->ptr[r + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (x->col[mid] < j) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < x->ptr[r + 1] && x->col[lo] == j ? (double)x->val[lo] : 0.0;
}

static int compare(enum cmp_op op, double a, double b)
{
    switch (op) {
    case CMP_GT:
        return a > b;
    case CMP_GE:
        return a >= b;
    case CMP_LT:
        return a < b;
    case CMP_LE:
        return a <= b;
    case CMP_EQ:
        return a == b;
    default:
        return a != b;
    }
}

static strux_status eval_def(const strux_subset_defs *d, int32_t k, const strux_subset_input *in,
                             uint8_t *out, int depth);

static strux_status eval_node(const strux_subset_defs *d, const struct def *f, int32_t i,
                              const strux_subset_input *in, uint8_t *out, int depth)
{
    const struct node *nd = &f->nodes[i];
    const strux_dataset *ds = in->ds;
    int64_t n = ds->n_local;
    switch (nd->op) {
    case OP_NAME: {
        int32_t k = strux_subset_find(d, nd->str);
        if (k < 0) return unknown_name(d, f, nd, f->what);
        return eval_def(d, k, in, out, depth + 1);
    }
    case OP_LABEL:
        for (int64_t r = 0; r < n; r++)
            out[r] = in->label[r] == nd->sign;
        return STRUX_OK;
    case OP_FEATURE: {
        int32_t j = nd->feature - 1;
        STRUX_CHECK(j < ds->dim && j != ds->bias_col, STRUX_ERR_CONFIG,
                    "%s: %s = '%s': column %" PRId32 ": feature %" PRId32
                    " is above the data's dimension %" PRId32 " (%s)",
                    f->origin, f->what, f->source, nd->col, nd->feature,
                    ds->bias_col >= 0 ? ds->dim - 1 : ds->dim, ds->path ? ds->path : "data");
        /* features are stored as float: compare with V as the reader would have stored it, so
         * that `feature 2 == 0.1` matches a file's 0.1 */
        double v = (double)(float)nd->value;
        for (int64_t r = 0; r < n; r++)
            out[r] = (uint8_t)compare(nd->cmp, feature_value(&ds->x, r, j), v);
        return STRUX_OK;
    }
    case OP_ROWS: {
        const char *path = in->test ? nd->str2 : nd->str;
        STRUX_CHECK(path, STRUX_ERR_CONFIG,
                    "%s: %s = '%s': column %" PRId32
                    ": rows has no TEST_FILE, so it cannot be evaluated on the test data",
                    f->origin, f->what, f->source, nd->col);
        STRUX_TRY(read_rows(path, ds, out));
        return STRUX_OK;
    }
    case OP_BASELINE: {
        int32_t b = -1;
        baseline_scan(d, 0, nd->str, &b);
        const int8_t *pred = in->baseline && b >= 0 ? in->baseline[b] : NULL;
        STRUX_CHECK(pred, STRUX_ERR_CONFIG,
                    "%s: %s = '%s': column %" PRId32 ": no predictions of baseline %s on %s",
                    f->origin, f->what, f->source, nd->col, nd->str,
                    ds->path ? ds->path : "this data");
        for (int64_t r = 0; r < n; r++)
            out[r] = pred[r] == nd->sign;
        return STRUX_OK;
    }
    case OP_NOT:
        STRUX_TRY(eval_node(d, f, nd->a, in, out, depth));
        for (int64_t r = 0; r < n; r++)
            out[r] = !out[r];
        return STRUX_OK;
    default: {
        STRUX_TRY(eval_node(d, f, nd->a, in, out, depth));
        uint8_t *rhs;
        STRUX_TRY(strux_alloc(&rhs, (size_t)n));
        strux_status st = eval_node(d, f, nd->b, in, rhs, depth);
        if (st == STRUX_OK) {
            for (int64_t r = 0; r < n; r++)
                out[r] = nd->op == OP_AND  ? out[r] && rhs[r]
                         : nd->op == OP_OR ? out[r] || rhs[r]
                                           : out[r] && !rhs[r];
        }
        strux_free(&rhs);
        return st == STRUX_OK ? STRUX_OK : strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    }
}

static strux_status eval_def(const strux_subset_defs *d, int32_t k, const strux_subset_input *in,
                             uint8_t *out, int depth)
{
    const struct def *f = &d->defs[k];
    STRUX_CHECK(depth <= d->n, STRUX_ERR_CONFIG,
                "%s: dataset %s is defined through itself (run strux_subset_check)", f->origin,
                strux_subset_name(d, k));
    if (f->builtin) {
        for (int64_t r = 0; r < in->ds->n_local; r++) {
            int8_t y = in->label[r];
            out[r] = k == STRUX_SUBSET_ALL         ? 1
                     : k == STRUX_SUBSET_LABELED   ? y != 0
                     : k == STRUX_SUBSET_UNLABELED ? y == 0
                     : k == STRUX_SUBSET_POSITIVE  ? y > 0
                                                   : y < 0;
        }
        return STRUX_OK;
    }
    return eval_node(d, f, f->n_nodes - 1, in, out, depth);
}

strux_status strux_subset_eval(const strux_subset_defs *d, int32_t k, const strux_subset_input *in,
                               uint8_t *member)
{
    STRUX_CHECK(k >= 0 && k < d->n, STRUX_ERR_INTERNAL,
                "subset %" PRId32 " outside [0, %" PRId32 ")", k, d->n);
    STRUX_CHECK(in->ds->ex_ptr == NULL, STRUX_ERR_UNSUPPORTED,
                "dataset %s: subsets need one row per example; %s has sequences",
                strux_subset_name(d, k), in->ds->path ? in->ds->path : "the data");
    STRUX_TRY(eval_def(d, k, in, member, 0));
    return STRUX_OK;
}
