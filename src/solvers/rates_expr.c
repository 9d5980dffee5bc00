/* solvers/rates_expr.c - rate constraints and objectives: parser, helper expansion, canonical
 * form and printer (dataset_constraints.md §1.4 canonical form, §1.5 catalogue and ratio
 * metrics, §1.6 errata 1 and 3; issue 15 [constraints] and [rates] objective). In order: linear
 * forms, the recursive-descent parser (sum, product, factor, function call), the expansion of
 * each helper over derived subsets, the constraint level (comparison, ratio helpers), the
 * canonical row with the §1.4 rewrite, the printer, and values of rows and forms. Does not count
 * subsets, check feasibility (rates_feasible.c) or read config sections. */
#include "rates.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- linear forms ---- */

static strux_status lin_push(strux_rates_linear *f, strux_rates_term t)
{
    if (f->n_terms == f->cap) {
        int32_t cap = f->cap ? 2 * f->cap : 4;
        STRUX_TRY(strux_realloc_array(&f->terms, (size_t)cap, sizeof *f->terms));
        f->cap = cap;
    }
    f->terms[f->n_terms++] = t;
    return STRUX_OK;
}

static void lin_free(strux_rates_linear *f)
{
    strux_free(&f->terms);
    memset(f, 0, sizeof *f);
}

static void lin_scale(strux_rates_linear *f, double a)
{
    for (int32_t i = 0; i < f->n_terms; i++)
        f->terms[i].c *= a;
    f->c0 *= a;
}

/* f += a·g */
static strux_status lin_add(strux_rates_linear *f, const strux_rates_linear *g, double a)
{
    for (int32_t i = 0; i < g->n_terms; i++) {
        strux_rates_term t = g->terms[i];
        t.c *= a;
        STRUX_TRY(lin_push(f, t));
    }
    f->c0 += a * g->c0;
    return STRUX_OK;
}

static strux_status term(strux_rates_linear *f, int32_t set, int side, int32_t num, int32_t den,
                         double c)
{
    strux_rates_term t = {.set = set, .side = (int8_t)side, .num = num, .den = den, .c = c};
    return lin_push(f, t);
}

/* ---- parser ---- */

/* A value while parsing: a linear form, or a ratio helper standing alone. */
typedef struct value {
    strux_rates_linear f;
    int ratio;          /* STRUX_RATES_* ratio kind, or 0 */
    int32_t rpos, rneg; /* ratio helpers: D & positive, D & negative */
    size_t rcol;        /* ratio helpers: 0-based column (messages) */
} value;

typedef struct rparser {
    const char *s;        /* the whole text */
    size_t pos;           /* current byte */
    strux_subset_defs *d; /* subsets (anonymous ones are added) */
    const char *origin;   /* messages */
    char what[160];       /* "constraint p_rule", "objective" */
} rparser;

static const struct helper {
    const char *name;
    int n_args;
} helpers[] = {
    {"positive_rate", 1}, {"negative_rate", 1}, {"coverage", 1},  {"tpr", 1},
    {"recall", 1},        {"fpr", 1},           {"fnr", 1},       {"tnr", 1},
    {"error_rate", 1},    {"churn", 2},         {"precision", 1}, {"f1", 1},
};
#define N_HELPERS ((int)(sizeof helpers / sizeof *helpers))

static strux_status rerror(const rparser *p, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static strux_status rerror(const rparser *p, size_t pos, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                           "%s: %s = '%s': column %zu: %s", p->origin, p->what, p->s, pos + 1, msg);
}

static strux_status expected(const rparser *p, const char *what)
{
    char found[48];
    const char *s = p->s + p->pos;
    if (!*s) {
        snprintf(found, sizeof found, "end of text");
    } else {
        size_t len = 0;
        while (s[len] && !isspace((unsigned char)s[len]) && len < 20)
            len++;
        snprintf(found, sizeof found, "'%.*s'", (int)len, s);
    }
    return rerror(p, p->pos, "expected %s, found %s", what, found);
}

static void rskip(rparser *p)
{
    while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

static void value_free(value *v)
{
    lin_free(&v->f);
}

static strux_status ratio_alone(const rparser *p, const value *v)
{
    const char *name = v->ratio == STRUX_RATES_PRECISION ? "precision" : "f1";
    return rerror(p, v->rcol,
                  "%s(...) is a ratio of rates: it may appear only alone against a constant, as "
                  "%s(D) >= constant (dataset_constraints.md §1.5)",
                  name, name);
}

/* Subset `(k) OP other` as an anonymous subset. */
static strux_status derive(rparser *p, int32_t k, const char *op, int32_t other, int32_t *out)
{
    /* a few intersections that are plainly one of their operands keep logs readable */
    int pos_neg = other == STRUX_SUBSET_POSITIVE || other == STRUX_SUBSET_NEGATIVE;
    if (strcmp(op, "&") == 0 &&
        (k == other || k == STRUX_SUBSET_ALL || (k == STRUX_SUBSET_LABELED && pos_neg))) {
        *out = other;
        return STRUX_OK;
    }
    if (strcmp(op, "&") == 0 && other == STRUX_SUBSET_LABELED &&
        (k == STRUX_SUBSET_POSITIVE || k == STRUX_SUBSET_NEGATIVE)) {
        *out = k;
        return STRUX_OK;
    }
    const char *a = strux_subset_name(p->d, k), *b = strux_subset_name(p->d, other);
    size_t n = strlen(a) + strlen(b) + 16;
    char *text;
    STRUX_TRY(strux_alloc(&text, n));
    snprintf(text, n, "(%s) %s (%s)", a, op, b);
    strux_status st =
        strux_subset_define_expr(p->d, text, 0, strlen(text), p->what, p->origin, out);
    strux_free(&text);
    return st == STRUX_OK ? STRUX_OK : strux_error_frame(st, __FILE__, __LINE__, __func__);
}

/* The label classes a helper needs in its dataset. */
static strux_status need_labels(const rparser *p, size_t col, const char *fn, int32_t k,
                                unsigned mask, const char *which)
{
    if (strux_subset_labels(p->d, k) & mask) return STRUX_OK;
    return rerror(p, col, "%s(%s) needs %s rows, but dataset '%s' has none", fn,
                  strux_subset_name(p->d, k), which, strux_subset_name(p->d, k));
}

/* One dataset argument: the text up to ')' (or ',' when comma is set) at parenthesis depth 0. */
static strux_status dataset_arg(rparser *p, int comma, int32_t *k)
{
    rskip(p);
    size_t start = p->pos, end = start;
    int depth = 0;
    for (; p->s[end]; end++) {
        char c = p->s[end];
        if (c == '(') depth++;
        if (c == ')' && depth-- == 0) break;
        if (c == ',' && comma && depth == 0) break;
    }
    size_t stop = end;
    while (stop > start && isspace((unsigned char)p->s[stop - 1]))
        stop--;
    if (stop == start) return expected(p, "a dataset");
    if (!p->s[end] || (comma && p->s[end] != ',')) {
        p->pos = end;
        return expected(p, comma ? "',' and a second dataset" : "')'");
    }
    STRUX_TRY(strux_subset_define_expr(p->d, p->s, start, end, p->what, p->origin, k));
    p->pos = end + 1;
    return STRUX_OK;
}

/* name(args): a helper expanded into v (§1.5). */
static strux_status parse_call(rparser *p, value *v)
{
    size_t col = p->pos, n = 0;
    while (isalnum((unsigned char)p->s[p->pos + n]) || p->s[p->pos + n] == '_')
        n++;
    int h;
    for (h = 0; h < N_HELPERS; h++)
        if (strlen(helpers[h].name) == n && strncmp(helpers[h].name, p->s + col, n) == 0) break;
    if (h == N_HELPERS) {
        char valid[400];
        size_t used = 0;
        for (int i = 0; i < N_HELPERS; i++)
            used += (size_t)snprintf(valid + used, sizeof valid - used, "%s%s", i ? ", " : "",
                                     helpers[i].name);
        return rerror(p, col, "unknown function '%.*s' (valid: %s)", (int)n, p->s + col, valid);
    }
    const char *fn = helpers[h].name;
    p->pos += n;
    rskip(p);
    if (p->s[p->pos] != '(') return expected(p, "'(' after the function name");
    p->pos++;
    int32_t k, b = -1;
    STRUX_TRY(dataset_arg(p, helpers[h].n_args == 2, &k));
    if (helpers[h].n_args == 2) STRUX_TRY(dataset_arg(p, 0, &b));
    const unsigned P = STRUX_SUBSET_HAS_POS, N = STRUX_SUBSET_HAS_NEG;
    int32_t kp, kn, kl, kb, kd;
    strux_rates_linear *f = &v->f;
    if (!strcmp(fn, "positive_rate") || !strcmp(fn, "coverage")) return term(f, k, 1, -1, -1, 1);
    if (!strcmp(fn, "negative_rate")) return term(f, k, -1, -1, -1, 1);
    if (!strcmp(fn, "tpr") || !strcmp(fn, "recall") || !strcmp(fn, "fnr")) {
        STRUX_TRY(need_labels(p, col, fn, k, P, "labelled positive"));
        STRUX_TRY(derive(p, k, "&", STRUX_SUBSET_POSITIVE, &kp));
        return term(f, kp, fn[0] == 'f' ? -1 : 1, -1, -1, 1);
    }
    if (!strcmp(fn, "fpr") || !strcmp(fn, "tnr")) {
        STRUX_TRY(need_labels(p, col, fn, k, N, "labelled negative"));
        STRUX_TRY(derive(p, k, "&", STRUX_SUBSET_NEGATIVE, &kn));
        return term(f, kn, fn[0] == 'f' ? 1 : -1, -1, -1, 1);
    }
    if (!strcmp(fn, "error_rate")) {
        STRUX_TRY(need_labels(p, col, fn, k, P | N, "labelled"));
        STRUX_TRY(derive(p, k, "&", STRUX_SUBSET_POSITIVE, &kp));
        STRUX_TRY(derive(p, k, "&", STRUX_SUBSET_NEGATIVE, &kn));
        STRUX_TRY(derive(p, k, "&", STRUX_SUBSET_LABELED, &kl));
        STRUX_TRY(term(f, kn, 1, kn, kl, 1)); /* false positives */
        return term(f, kp, -1, kp, kl, 1);    /* false negatives */
    }
    if (!strcmp(fn, "churn")) {
        /* §1.6 erratum 1: baseline-positive rows change when predicted negative, and back */
        STRUX_TRY(derive(p, k, "&", b, &kb));
        STRUX_TRY(derive(p, k, "-", b, &kd));
        STRUX_TRY(term(f, kb, -1, kb, k, 1));
        return term(f, kd, 1, kd, k, 1);
    }
    /* precision, f1: expanded at the constraint level, where the bound is known */
    STRUX_TRY(need_labels(p, col, fn, k, P, "labelled positive"));
    STRUX_TRY(derive(p, k, "&", STRUX_SUBSET_POSITIVE, &v->rpos));
    STRUX_TRY(derive(p, k, "&", STRUX_SUBSET_NEGATIVE, &v->rneg));
    v->ratio = fn[0] == 'p' ? STRUX_RATES_PRECISION : STRUX_RATES_F1;
    v->rcol = col;
    return STRUX_OK;
}

static strux_status parse_sum(rparser *p, value *v);

static strux_status parse_factor(rparser *p, value *v)
{
    rskip(p);
    char c = p->s[p->pos];
    if (c == '+' || c == '-') {
        p->pos++;
        STRUX_TRY(parse_factor(p, v));
        if (v->ratio) return ratio_alone(p, v);
        if (c == '-') lin_scale(&v->f, -1);
        return STRUX_OK;
    }
    if (c == '(') {
        p->pos++;
        STRUX_TRY(parse_sum(p, v));
        rskip(p);
        if (p->s[p->pos] != ')') return expected(p, "')' or an operator (+ - * /)");
        p->pos++;
        return STRUX_OK;
    }
    if (isdigit((unsigned char)c) || c == '.') {
        char *end;
        errno = 0;
        double x = strtod(p->s + p->pos, &end);
        if (errno || !isfinite(x) || isalpha((unsigned char)*end) || *end == '_')
            return expected(p, "a finite number");
        p->pos = (size_t)(end - p->s);
        v->f.c0 = x;
        return STRUX_OK;
    }
    if (isalpha((unsigned char)c) || c == '_') return parse_call(p, v);
    return expected(p, "a number, a rate such as positive_rate(D), '(' or a sign");
}

static strux_status parse_prod(rparser *p, value *v)
{
    STRUX_TRY(parse_factor(p, v));
    for (;;) {
        rskip(p);
        char c = p->s[p->pos];
        if (c != '*' && c != '/') return STRUX_OK;
        size_t col = p->pos++;
        value w = {0};
        strux_status st = parse_factor(p, &w);
        if (st == STRUX_OK && (v->ratio || w.ratio)) st = ratio_alone(p, v->ratio ? v : &w);
        if (st == STRUX_OK && c == '/') {
            if (w.f.n_terms)
                st = rerror(p, col, "division by a rate is not linear");
            else if (w.f.c0 == 0)
                st = rerror(p, col, "division by zero");
            else
                lin_scale(&v->f, 1 / w.f.c0);
        } else if (st == STRUX_OK) {
            if (v->f.n_terms && w.f.n_terms) {
                st = rerror(p, col, "a product of two rates is not linear");
            } else if (v->f.n_terms) {
                lin_scale(&v->f, w.f.c0);
            } else {
                lin_scale(&w.f, v->f.c0);
                strux_rates_linear t = v->f;
                v->f = w.f;
                w.f = t;
            }
        }
        value_free(&w);
        if (st != STRUX_OK) return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
}

static strux_status parse_sum(rparser *p, value *v)
{
    STRUX_TRY(parse_prod(p, v));
    for (;;) {
        rskip(p);
        char c = p->s[p->pos];
        if (c != '+' && c != '-') return STRUX_OK;
        p->pos++;
        value w = {0};
        strux_status st = parse_prod(p, &w);
        if (st == STRUX_OK && (v->ratio || w.ratio)) st = ratio_alone(p, v->ratio ? v : &w);
        if (st == STRUX_OK) st = lin_add(&v->f, &w.f, c == '+' ? 1 : -1);
        value_free(&w);
        if (st != STRUX_OK) return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
}

/* ---- constraint level ---- */

static strux_status substr(const char *s, size_t a, size_t b, char **out)
{
    while (a < b && isspace((unsigned char)s[a]))
        a++;
    while (b > a && isspace((unsigned char)s[b - 1]))
        b--;
    STRUX_TRY(strux_alloc(out, b - a + 1));
    memcpy(*out, s + a, b - a);
    return STRUX_OK;
}

/* e->lhs := the ratio constraint multiplied through (§1.5), e->rhs := 0, sense >=. */
static strux_status expand_ratio(strux_rates_expr *e, const value *r, double bound)
{
    e->ratio = r->ratio;
    e->ratio_pos = r->rpos;
    e->ratio_neg = r->rneg;
    e->ratio_bound = bound;
    e->sense = -1;
    strux_rates_linear *f = &e->lhs;
    int32_t kp = r->rpos, kn = r->rneg;
    if (r->ratio == STRUX_RATES_PRECISION) {
        /* TP - p(TP + FP) >= 0, divided by n(D+) */
        STRUX_TRY(term(f, kp, 1, -1, -1, 1 - bound));
        return term(f, kn, 1, kn, kp, -bound);
    }
    /* 2TP - φ(2TP + FN + FP) >= 0, divided by n(D+) */
    STRUX_TRY(term(f, kp, 1, -1, -1, 2 * (1 - bound)));
    STRUX_TRY(term(f, kp, -1, -1, -1, -bound));
    return term(f, kn, 1, kn, kp, -bound);
}

static strux_status parse_expr(rparser *p, strux_rates_expr *e)
{
    value l = {0}, r = {0};
    strux_status st;
    size_t start = p->pos;
    STRUX_TRY_GOTO(st, parse_sum(p, &l), done);
    rskip(p);
    size_t cmp = p->pos;
    const char *s = p->s + p->pos;
    STRUX_TRY_GOTO(st, substr(p->s, start, cmp, &e->lhs_text), done);
    if (e->objective) {
        if (!*s) {
            st = l.ratio ? ratio_alone(p, &l) : STRUX_OK;
        } else if (strncmp(s, "<=", 2) == 0 || strncmp(s, ">=", 2) == 0 || *s == '<' || *s == '>' ||
                   *s == '=') {
            st = rerror(p, cmp, "an objective is minimised and has no comparison");
        } else {
            st = expected(p, "an operator (+ - * /) or the end of the objective");
        }
        if (st == STRUX_OK) st = strux_strdup(&e->rhs_text, "");
        if (st == STRUX_OK) {
            e->lhs = l.f;
            memset(&l.f, 0, sizeof l.f);
        }
        goto done;
    }
    if (strncmp(s, "<=", 2) == 0 || strncmp(s, ">=", 2) == 0) {
        e->sense = s[0] == '<' ? 1 : -1;
    } else {
        st = expected(p, "<= or >= (or an operator + - * /)");
        goto done;
    }
    p->pos += 2;
    STRUX_TRY_GOTO(st, parse_sum(p, &r), done);
    rskip(p);
    if (p->s[p->pos]) {
        st = expected(p, "an operator (+ - * /) or the end of the constraint");
        goto done;
    }
    STRUX_TRY_GOTO(st, substr(p->s, cmp + 2, p->pos, &e->rhs_text), done);
    if (l.ratio || r.ratio) {
        const value *ratio = l.ratio ? &l : &r, *other = l.ratio ? &r : &l;
        int ok = !other->ratio && other->f.n_terms == 0 && e->sense == (l.ratio ? -1 : 1);
        if (!ok) {
            st = ratio_alone(p, ratio);
            goto done;
        }
        if (r.ratio) { /* c <= precision(D): keep the helper on the left in messages */
            char *t = e->lhs_text;
            e->lhs_text = e->rhs_text;
            e->rhs_text = t;
        }
        STRUX_TRY_GOTO(st, expand_ratio(e, ratio, other->f.c0), done);
        goto done;
    }
    e->lhs = l.f;
    e->rhs = r.f;
    memset(&l.f, 0, sizeof l.f);
    memset(&r.f, 0, sizeof r.f);
    st = STRUX_OK;
done:
    value_free(&l);
    value_free(&r);
    return st;
}

strux_status strux_rates_parse(strux_subset_defs *d, const char *name, const char *text,
                               const char *origin, int objective, strux_rates_expr **out)
{
    strux_rates_expr *e;
    STRUX_TRY(strux_alloc(&e, sizeof *e));
    e->objective = objective;
    e->ratio_pos = e->ratio_neg = -1;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_strdup(&e->name, name), fail);
    STRUX_TRY_GOTO(st, substr(text, 0, strlen(text), &e->text), fail);
    STRUX_TRY_GOTO(st, strux_strdup(&e->origin, origin), fail);
    rparser p = {.s = e->text, .d = d, .origin = origin};
    if (objective)
        snprintf(p.what, sizeof p.what, "%s", name);
    else
        snprintf(p.what, sizeof p.what, "constraint %s", name);
    STRUX_TRY_GOTO(st, parse_expr(&p, e), fail);
    *out = e;
    return STRUX_OK;
fail:
    strux_rates_expr_destroy(&e);
    return st;
}

void strux_rates_expr_destroy(strux_rates_expr **p)
{
    if (!p || !*p) return;
    strux_rates_expr *e = *p;
    strux_free(&e->name);
    strux_free(&e->text);
    strux_free(&e->origin);
    strux_free(&e->lhs_text);
    strux_free(&e->rhs_text);
    lin_free(&e->lhs);
    lin_free(&e->rhs);
    strux_free(p);
}

/* ---- canonical form (§1.4) ---- */

/* " (defined as TEXT)" for a named dataset (its definition in normal form), "" for a built-in
 * or an expression, into buf. */
static const char *definition(const strux_subset_defs *d, int32_t k, char *buf, size_t n)
{
    const char *name = strux_subset_name(d, k), *text = strux_subset_text(d, k);
    if (strux_subset_is_anonymous(d, k) || strcmp(name, text) == 0) return "";
    snprintf(buf, n, " (defined as %s)", text);
    return buf;
}

/* Add sign·f into per-subset signed coefficients cp, cn and the constant *c. */
static strux_status collect(const strux_rates_expr *e, const strux_rates_linear *f, double sign,
                            const strux_subset_defs *d, const int64_t *n, double *cp, double *cn,
                            uint8_t *used, double *c)
{
    *c += sign * f->c0;
    char def[STRUX_OPT_STR + 32];
    for (int32_t i = 0; i < f->n_terms; i++) {
        const strux_rates_term *t = &f->terms[i];
        double w = 1;
        if (t->den >= 0) {
            STRUX_CHECK(n[t->den] > 0, STRUX_ERR_CONFIG,
                        "%s: constraint %s (%s): dataset '%s'%s is empty on the training data",
                        e->origin, e->name, e->text, strux_subset_name(d, t->den),
                        definition(d, t->den, def, sizeof def));
            w = (t->num >= 0 ? (double)n[t->num] : 1.0) / (double)n[t->den];
        }
        if (w == 0) continue; /* a count-weighted rate of an empty subset adds nothing */
        STRUX_CHECK(n[t->set] > 0, STRUX_ERR_CONFIG,
                    "%s: constraint %s (%s): dataset '%s'%s is empty on the training data, so its "
                    "rates are undefined",
                    e->origin, e->name, e->text, strux_subset_name(d, t->set),
                    definition(d, t->set, def, sizeof def));
        double a = sign * t->c * w;
        if (t->side > 0)
            cp[t->set] += a;
        else
            cn[t->set] += a;
        used[t->set] = 1;
    }
    return STRUX_OK;
}

void strux_rates_row_free(strux_rates_row *row)
{
    strux_free(&row->set);
    strux_free(&row->alpha);
    strux_free(&row->beta);
    memset(row, 0, sizeof *row);
}

strux_status strux_rates_canonical(const strux_rates_expr *e, const strux_subset_defs *d,
                                   const int64_t *n, strux_rates_row *row)
{
    int32_t K = strux_subset_count(d);
    double *cp = NULL, *cn = NULL, c = 0;
    uint8_t *used = NULL;
    memset(row, 0, sizeof *row);
    row->objective = e->objective;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_alloc_array(&cp, (size_t)K, sizeof *cp), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&cn, (size_t)K, sizeof *cn), done);
    STRUX_TRY_GOTO(st, strux_alloc(&used, (size_t)K), done);
    /* LHS <= RHS  ⇔  LHS - RHS <= 0;  LHS >= RHS  ⇔  RHS - LHS <= 0 */
    double sign = e->objective ? 1 : e->sense;
    STRUX_TRY_GOTO(st, collect(e, &e->lhs, sign, d, n, cp, cn, used, &c), done);
    STRUX_TRY_GOTO(st, collect(e, &e->rhs, -sign, d, n, cp, cn, used, &c), done);
    int32_t m = 0;
    for (int32_t k = 0; k < K; k++) {
        if (!used[k]) continue;
        /* §1.4: c·s_p = c + |c|·s_n for c < 0, and likewise for s_n; the constant moves to c */
        if (cp[k] < 0) {
            cn[k] -= cp[k];
            c += cp[k];
            cp[k] = 0;
        }
        if (cn[k] < 0) {
            cp[k] -= cn[k];
            c += cn[k];
            cn[k] = 0;
        }
        if (cp[k] == 0 && cn[k] == 0) used[k] = 0;
        m += used[k];
    }
    STRUX_TRY_GOTO(st, strux_alloc_array(&row->set, (size_t)m, sizeof *row->set), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&row->alpha, (size_t)m, sizeof *row->alpha), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&row->beta, (size_t)m, sizeof *row->beta), done);
    for (int32_t k = 0; k < K; k++) {
        if (!used[k]) continue;
        row->set[row->n] = k;
        row->alpha[row->n] = cp[k] + 0.0;
        row->beta[row->n++] = cn[k] + 0.0;
    }
    /* constraint: Σ + c ≤ 0, so γ = -c; objective: Σ + c */
    if (e->objective)
        row->c0 = c + 0.0;
    else
        row->gamma = -c + 0.0;
done:
    strux_free(&cp);
    strux_free(&cn);
    strux_free(&used);
    if (st != STRUX_OK) strux_rates_row_free(row);
    return st;
}

/* ---- printer ---- */

static strux_status put(char **s, size_t *len, size_t *cap, const char *a, const char *b,
                        const char *c)
{
    size_t add = strlen(a) + strlen(b) + strlen(c);
    if (*len + add + 1 > *cap) {
        size_t nc = *cap ? *cap : 64;
        while (nc < *len + add + 1)
            nc *= 2;
        STRUX_TRY(strux_realloc_array(s, nc, 1));
        *cap = nc;
    }
    *len += (size_t)snprintf(*s + *len, *cap - *len, "%s%s%s", a, b, c);
    return STRUX_OK;
}

strux_status strux_rates_print(const strux_rates_row *row, const strux_subset_defs *d, char **out)
{
    char *s = NULL, num[40];
    size_t len = 0, cap = 0;
    strux_status st = put(&s, &len, &cap, "", "", "");
    for (int32_t i = 0; i < row->n && st == STRUX_OK; i++) {
        for (int side = 0; side < 2 && st == STRUX_OK; side++) {
            double a = side ? row->beta[i] : row->alpha[i];
            if (a == 0) continue;
            if (len) st = put(&s, &len, &cap, " + ", "", "");
            if (st == STRUX_OK && a != 1) {
                strux_format_double(a, num, sizeof num);
                st = put(&s, &len, &cap, num, "*", "");
            }
            if (st == STRUX_OK)
                st = put(&s, &len, &cap, side ? "negative_rate(" : "positive_rate(",
                         strux_subset_name(d, row->set[i]), ")");
        }
    }
    if (st == STRUX_OK && !len) st = put(&s, &len, &cap, "0", "", "");
    if (st == STRUX_OK && row->objective && row->c0 != 0) {
        strux_format_double(fabs(row->c0), num, sizeof num);
        st = put(&s, &len, &cap, row->c0 < 0 ? " - " : " + ", num, "");
    }
    if (st == STRUX_OK && !row->objective) {
        strux_format_double(row->gamma, num, sizeof num);
        st = put(&s, &len, &cap, " <= ", num, "");
    }
    if (st != STRUX_OK) {
        strux_free(&s);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = s;
    return STRUX_OK;
}

/* ---- values ---- */

double strux_rates_row_value(const strux_rates_row *row, const double *s_p)
{
    double v = 0;
    for (int32_t i = 0; i < row->n; i++)
        v += row->alpha[i] * s_p[row->set[i]] + row->beta[i] * (1 - s_p[row->set[i]]);
    return v;
}

double strux_rates_linear_value(const strux_rates_linear *f, const int64_t *n, const double *s_p)
{
    double v = f->c0;
    for (int32_t i = 0; i < f->n_terms; i++) {
        const strux_rates_term *t = &f->terms[i];
        double w = t->den >= 0 ? (t->num >= 0 ? (double)n[t->num] : 1.0) / (double)n[t->den] : 1;
        double s = t->side > 0 ? s_p[t->set] : 1 - s_p[t->set];
        v += t->c * w * s;
    }
    return v;
}
