/* solvers/m3l_prior.c - M3L label-correlation priors R (specs/m3l.md §1.3, §4.2, §6 A6; issue 16
 * "Priors" and "Bad input"): builders (identity, empirical counts and their three estimators, text
 * file, zero-shot classes), shrinkage towards I, the checks of a legal prior and its factor P with
 * R = PᵀP from one eigen-decomposition (strux_sym_eig, LAPACK dsyevd).
 * Divisions, in order: text lines, builders, shrink, checks and factor.
 * Does not read HDF5 models (a model's /m3l/R is src/io's), parse options or talk to MPI: the
 * caller sums empirical counts over ranks and agrees on errors. */
#include "m3l.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strux/linalg.h"

const char *strux_m3l_empirical_name(strux_m3l_empirical est)
{
    switch (est) {
    case STRUX_M3L_EMPIRICAL_MOMENT:
        return "moment";
    case STRUX_M3L_EMPIRICAL_COOCCURRENCE:
        return "cooccurrence";
    case STRUX_M3L_EMPIRICAL_CORRELATION:
        return "correlation";
    }
    return "?";
}

/* ---- text lines of any length, grown through strux_alloc (no getline: STYLE.md §6) ---- */

typedef struct text_file {
    FILE *f;
    const char *path; /* borrowed, for messages */
    char *buf;        /* current line without its end of line, NUL-terminated */
    size_t cap;       /* bytes of buf */
    long long line;   /* 1-based number of the current line */
} text_file;

static strux_status text_open(text_file *t, const char *path, const char *what)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    t->f = fopen(path, "r");
    STRUX_CHECK(t->f, STRUX_ERR_IO, "%s: cannot open %s: %s", path, what, strerror(errno));
    return STRUX_OK;
}

static void text_close(text_file *t)
{
    if (t->f) fclose(t->f);
    strux_free(&t->buf);
    t->f = NULL;
}

/* Next line that is neither blank nor a '#' comment; *s points past its leading blanks, NULL at
 * the end of the file. */
static strux_status text_next(text_file *t, char **s)
{
    for (;;) {
        size_t len = 0;
        for (;;) {
            if (t->cap - len < 2) {
                size_t cap = t->cap ? 2 * t->cap : 256;
                STRUX_TRY(strux_realloc_array(&t->buf, cap, 1));
                t->cap = cap;
            }
            if (!fgets(t->buf + len, (int)(t->cap - len < INT32_MAX ? t->cap - len : INT32_MAX),
                       t->f)) {
                STRUX_CHECK(!ferror(t->f), STRUX_ERR_IO, "%s:%lld: read error", t->path,
                            t->line + 1);
                break;
            }
            len += strlen(t->buf + len);
            if (len > 0 && t->buf[len - 1] == '\n') break;
        }
        if (len == 0) {
            *s = NULL;
            return STRUX_OK;
        }
        t->line++;
        t->buf[strcspn(t->buf, "\r\n")] = '\0';
        char *p = t->buf + strspn(t->buf, " \t");
        if (*p && *p != '#') {
            *s = p;
            return STRUX_OK;
        }
    }
}

/* ---- builders ---- */

void strux_m3l_prior_identity(int32_t n_labels, double *R)
{
    int64_t L = n_labels;
    for (int64_t k = 0; k < L; k++)
        for (int64_t l = 0; l < L; l++)
            R[k * L + l] = k == l ? 1.0 : 0.0;
}

int64_t strux_m3l_prior_counts_len(int32_t n_labels)
{
    return 1 + (int64_t)n_labels * n_labels;
}

strux_status strux_m3l_prior_counts_add(const strux_dataset *ds, int32_t n_labels, double *counts)
{
    int64_t L = n_labels;
    double *n_kl = counts + 1;
    for (int64_t r = 0; r < ds->x.n_rows; r++) {
        const int32_t *y = ds->y_idx + ds->y_ptr[r];
        int64_t m = ds->y_ptr[r + 1] - ds->y_ptr[r];
        for (int64_t a = 0; a < m; a++)
            STRUX_CHECK(y[a] >= 0 && y[a] < n_labels, STRUX_ERR_INPUT,
                        "%s: row %" PRId64 " has label %d, but the prior has %d labels", ds->path,
                        ds->first + r + 1, y[a], n_labels);
        for (int64_t a = 0; a < m; a++)
            for (int64_t b = 0; b < m; b++)
                n_kl[y[a] * L + y[b]] += 1.0;
        counts[0] += 1.0;
    }
    return STRUX_OK;
}

void strux_m3l_prior_empirical(const double *counts, int32_t n_labels, strux_m3l_empirical est,
                               double *R)
{
    int64_t L = n_labels;
    double n = counts[0];
    const double *n_kl = counts + 1;
    for (int64_t k = 0; k < L; k++) {
        double n_k = n_kl[k * L + k];
        for (int64_t l = 0; l < L; l++) {
            double n_l = n_kl[l * L + l], c = n_kl[k * L + l], r;
            if (n_k <= 0 || n_k >= n || n_l <= 0 || n_l >= n) {
                r = k == l ? 1.0 : 0.0; /* no rows or no variance: unit row and column */
            } else if (est == STRUX_M3L_EMPIRICAL_MOMENT) {
                /* Σ_i y_ik y_il with y = 2·[label] − 1: rows agreeing minus rows disagreeing */
                r = (n - 2 * n_k - 2 * n_l + 4 * c) / n;
            } else if (est == STRUX_M3L_EMPIRICAL_COOCCURRENCE) {
                r = c / sqrt(n_k * n_l);
            } else {
                /* Pearson on 0/1: (n·n_kl − n_k·n_l) / √((n·n_k − n_k²)(n·n_l − n_l²)) */
                r = (n * c - n_k * n_l) / sqrt((n * n_k - n_k * n_k) * (n * n_l - n_l * n_l));
            }
            R[k * L + l] = r;
        }
    }
}

/* One number of an R file: blanks or a comma before it; NaN and Inf are errors. */
static strux_status read_number(text_file *t, char **s, double *v)
{
    char *p = *s + strspn(*s, " \t,");
    char *end;
    *v = strtod(p, &end);
    STRUX_CHECK(end != p && (*end == '\0' || strchr(" \t,", *end)), STRUX_ERR_INPUT,
                "%s:%lld: '%.*s' is not a number", t->path, t->line, (int)strcspn(p, " \t,"), p);
    STRUX_CHECK(isfinite(*v), STRUX_ERR_INPUT, "%s:%lld: '%.*s' is not a finite number", t->path,
                t->line, (int)strcspn(p, " \t,"), p);
    *s = end;
    return STRUX_OK;
}

static int at_end(const char *s)
{
    return s[strspn(s, " \t,")] == '\0';
}

/* Reads into R while the file fits n_labels × n_labels; counts rows and columns beyond that so the
 * message can name the file's size. */
static strux_status read_matrix(text_file *t, int32_t n_labels, double *R)
{
    int64_t L = n_labels, rows = 0, cols = -1;
    long long first_line = 0;
    char *s;
    for (;;) {
        STRUX_TRY(text_next(t, &s));
        if (!s) break;
        int64_t c = 0;
        while (!at_end(s)) {
            double v;
            STRUX_TRY(read_number(t, &s, &v));
            if (rows < L && c < L) R[rows * L + c] = v;
            c++;
        }
        if (cols < 0) {
            cols = c;
            first_line = t->line;
        }
        STRUX_CHECK(c == cols, STRUX_ERR_INPUT,
                    "%s:%lld: %" PRId64 " numbers, but the first row (line %lld) has %" PRId64,
                    t->path, t->line, c, first_line, cols);
        rows++;
    }
    STRUX_CHECK(rows > 0, STRUX_ERR_INPUT, "%s: no rows; R must be %" PRId64 " × %" PRId64, t->path,
                L, L);
    STRUX_TRY(strux_m3l_prior_check_size(rows, cols, n_labels, t->path));
    return STRUX_OK;
}

strux_status strux_m3l_prior_read(const char *path, int32_t n_labels, double *R)
{
    text_file t;
    STRUX_TRY(text_open(&t, path, "the prior R"));
    strux_status st = read_matrix(&t, n_labels, R);
    text_close(&t);
    if (st != STRUX_OK) return strux_error_frame(st, __FILE__, __LINE__, __func__);
    return STRUX_OK;
}

/* One class line `p l1,l2,...` into the weight *p and the ±1 signature y (L entries). */
static strux_status parse_class(const text_file *t, char *s, int32_t n_labels, double *p, double *y)
{
    char *end;
    *p = strtod(s, &end);
    STRUX_CHECK(end != s && (*end == '\0' || *end == ' ' || *end == '\t'), STRUX_ERR_INPUT,
                "%s:%lld: expected 'p l1,l2,...', a weight and label ids", t->path, t->line);
    STRUX_CHECK(isfinite(*p) && *p > 0, STRUX_ERR_INPUT,
                "%s:%lld: class weight %g must be positive and finite", t->path, t->line, *p);
    for (int32_t l = 0; l < n_labels; l++)
        y[l] = -1.0;
    s = end + strspn(end, " \t");
    while (*s) {
        errno = 0;
        long id = strtol(s, &end, 10);
        STRUX_CHECK(end != s && (*end == '\0' || *end == ',' || *end == ' ' || *end == '\t'),
                    STRUX_ERR_INPUT, "%s:%lld: '%.*s' is not a label id", t->path, t->line,
                    (int)strcspn(s, ", \t"), s);
        STRUX_CHECK(id >= 0 && id < n_labels && errno != ERANGE, STRUX_ERR_INPUT,
                    "%s:%lld: label %ld is outside [0, %d)", t->path, t->line, id, n_labels);
        STRUX_CHECK(y[id] < 0, STRUX_ERR_INPUT, "%s:%lld: label %ld appears twice", t->path,
                    t->line, id);
        y[id] = 1.0;
        s = end;
        if (*s == ',') {
            s++;
            STRUX_CHECK(*s >= '0' && *s <= '9', STRUX_ERR_INPUT,
                        "%s:%lld: a label id must follow ','", t->path, t->line);
        } else {
            s += strspn(s, " \t");
            STRUX_CHECK(*s == '\0', STRUX_ERR_INPUT,
                        "%s:%lld: expected 'p l1,l2,...' (labels separated by commas)", t->path,
                        t->line);
        }
    }
    return STRUX_OK;
}

static strux_status read_classes(text_file *t, int32_t n_labels, double *y, double *R)
{
    int64_t L = n_labels, n_classes = 0;
    double total = 0.0;
    memset(R, 0, (size_t)(L * L) * sizeof *R);
    char *s;
    for (;;) {
        STRUX_TRY(text_next(t, &s));
        if (!s) break;
        double p;
        STRUX_TRY(parse_class(t, s, n_labels, &p, y));
        for (int64_t k = 0; k < L; k++)
            for (int64_t l = 0; l < L; l++)
                R[k * L + l] += p * y[k] * y[l]; /* §4.2 */
        total += p;
        n_classes++;
    }
    STRUX_CHECK(n_classes > 0, STRUX_ERR_INPUT, "%s: no classes; expected lines 'p l1,l2,...'",
                t->path);
    STRUX_CHECK(isfinite(total), STRUX_ERR_INPUT, "%s: the class weights sum to %g", t->path,
                total);
    for (int64_t k = 0; k < L * L; k++)
        R[k] /= total; /* p(c) normalised to sum 1 */
    return STRUX_OK;
}

strux_status strux_m3l_prior_zero_shot(const char *path, int32_t n_labels, double *R)
{
    text_file t;
    STRUX_TRY(text_open(&t, path, "the zero-shot classes"));
    double *y = NULL;
    strux_status st = strux_alloc_array(&y, (size_t)n_labels, sizeof *y);
    if (st == STRUX_OK) st = read_classes(&t, n_labels, y, R);
    strux_free(&y);
    text_close(&t);
    if (st != STRUX_OK) return strux_error_frame(st, __FILE__, __LINE__, __func__);
    return STRUX_OK;
}

/* ---- shrink ---- */

void strux_m3l_prior_shrink(int32_t n_labels, double s, double *R)
{
    int64_t L = n_labels;
    for (int64_t k = 0; k < L; k++)
        for (int64_t l = 0; l < L; l++)
            R[k * L + l] = (1.0 - s) * R[k * L + l] + (k == l ? s : 0.0);
}

/* ---- checks and factor ---- */

strux_status strux_m3l_prior_check_size(int64_t rows, int64_t cols, int32_t n_labels,
                                        const char *source)
{
    STRUX_CHECK(rows == n_labels && cols == n_labels, STRUX_ERR_INPUT,
                "R (%s) is %" PRId64 " × %" PRId64
                ", but the data has %d labels (R must be %d × %d)",
                source, rows, cols, n_labels, n_labels, n_labels);
    return STRUX_OK;
}

strux_status strux_m3l_prior_check(const double *R, int32_t n_labels, const char *source)
{
    int64_t L = n_labels;
    double max_abs = 0.0;
    for (int64_t k = 0; k < L; k++)
        for (int64_t l = 0; l < L; l++) {
            double v = R[k * L + l];
            STRUX_CHECK(isfinite(v), STRUX_ERR_INPUT, "R (%s) has %g at (%" PRId64 ", %" PRId64 ")",
                        source, v, k, l);
            if (fabs(v) > max_abs) max_abs = fabs(v);
        }
    for (int64_t l = 0; l < L; l++)
        STRUX_CHECK(R[l * L + l] > 0, STRUX_ERR_INPUT,
                    "R (%s) has R_ll = %g ≤ 0 for label %" PRId64 "; the diagonal must be positive",
                    source, R[l * L + l], l);
    double tol = STRUX_M3L_SYM_TOL * max_abs;
    for (int64_t k = 0; k < L; k++)
        for (int64_t l = k + 1; l < L; l++)
            STRUX_CHECK(fabs(R[k * L + l] - R[l * L + k]) <= tol, STRUX_ERR_INPUT,
                        "R (%s) is not symmetric: R(%" PRId64 ", %" PRId64
                        ") = %.17g but R(%" PRId64 ", %" PRId64
                        ") = %.17g (tolerance %g·max|R| = %g)",
                        source, k, l, R[k * L + l], l, k, R[l * L + k], STRUX_M3L_SYM_TOL, tol);
    return STRUX_OK;
}

/* The (up to) three labels an eigenvector v weighs most, as "k (v_k), ..." into buf; labels with
 * less than a thousandth of the largest weight are left out. */
static void heaviest_labels(const double *v, int64_t L, char *buf, size_t n)
{
    int64_t top[3] = {-1, -1, -1};
    for (int64_t k = 0; k < L; k++) {
        for (int a = 0; a < 3; a++) {
            if (top[a] < 0 || fabs(v[k]) > fabs(v[top[a]])) {
                for (int b = 2; b > a; b--)
                    top[b] = top[b - 1];
                top[a] = k;
                break;
            }
        }
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int a = 0; a < 3 && top[a] >= 0 && used < n; a++)
        if (a == 0 || fabs(v[top[a]]) >= 1e-3 * fabs(v[top[0]]))
            used += (size_t)snprintf(buf + used, n - used, "%s%" PRId64 " (%.3f)", a ? ", " : "",
                                     top[a], v[top[a]]);
}

static strux_status check_psd(const double *V, const double *lambda, int64_t L, const char *source)
{
    double lmin = lambda[0], lmax = lambda[L - 1];
    if (lmin >= -STRUX_M3L_PSD_TOL * lmax) return STRUX_OK;
    char labels[128];
    heaviest_labels(V, L, labels, sizeof labels);
    /* (1 − s)·λ_min + s ≥ 0 ⇔ s ≥ −λ_min / (1 − λ_min) */
    double s_min = -lmin / (1.0 - lmin);
    return strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                           "R (%s) is indefinite: smallest eigenvalue %.6g (largest %.6g); its "
                           "eigenvector weighs most labels %s; set m3l.shrink ≥ %.6g to move R "
                           "towards I",
                           source, lmin, lmax, labels, s_min);
}

strux_status strux_m3l_prior_factor(const double *R, int32_t n_labels, const char *source,
                                    double *P, double *eig_min, double *eig_max)
{
    int64_t L = n_labels;
    STRUX_TRY(strux_m3l_prior_check(R, n_labels, source));
    if (L == 0) {
        *eig_min = *eig_max = 0.0;
        return STRUX_OK;
    }
    double *V = NULL, *lambda = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&V, (size_t)(L * L), sizeof *V), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&lambda, (size_t)L, sizeof *lambda), done);
    memcpy(V, R, (size_t)(L * L) * sizeof *V);
    STRUX_TRY_GOTO(st, strux_sym_eig(L, V, lambda), done); /* row m of V: eigenvector of λ_m */
    STRUX_TRY_GOTO(st, check_psd(V, lambda, L, source), done);
    *eig_min = lambda[0];
    *eig_max = lambda[L - 1];
    if (P) {
        /* R = V Λ Vᵀ = PᵀP with P = Λ^{1/2} Vᵀ: P_ml = √λ_m · v_m[l]; λ_m < 0 within tolerance
         * counts as 0 (A6: singular R is legal) */
        for (int64_t m = 0; m < L; m++) {
            double r = lambda[m] > 0 ? sqrt(lambda[m]) : 0.0;
            for (int64_t l = 0; l < L; l++)
                P[m * L + l] = r * V[m * L + l];
        }
    }
done:
    strux_free(&V);
    strux_free(&lambda);
    return st;
}
