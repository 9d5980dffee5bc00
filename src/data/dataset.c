/* data/dataset.c - dataset life cycle: assembly from arrays (with the optional bias column, as
 * LIBLINEAR's -B appends a constant feature), destruction, and label names from labels.txt. */
#include "strux/data.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rebuild x with one more column holding the constant bias at index dim. */
static strux_status append_bias(strux_csr *x, double bias)
{
    strux_csr b;
    STRUX_TRY(strux_csr_alloc(&b, x->n_rows, x->n_cols + 1, x->ptr[x->n_rows] + x->n_rows));
    int64_t q = 0;
    for (int64_t i = 0; i < x->n_rows; i++) {
        for (int64_t p = x->ptr[i]; p < x->ptr[i + 1]; p++, q++) {
            b.col[q] = x->col[p];
            b.val[q] = x->val[p];
        }
        b.col[q] = x->n_cols;
        b.val[q++] = (float)bias;
        b.ptr[i + 1] = q;
    }
    strux_csr_free(x);
    *x = b;
    return STRUX_OK;
}

strux_status strux_dataset_from_arrays(const char *path, strux_csr *x, int64_t **y_ptr,
                                       int32_t **y_idx, int64_t n_global, int64_t first,
                                       int32_t dim, int32_t n_labels, double bias,
                                       strux_dataset **out)
{
    strux_dataset *ds;
    STRUX_TRY(strux_alloc(&ds, sizeof *ds));
    strux_status st = strux_strdup(&ds->path, path);
    if (st == STRUX_OK && bias > 0) st = append_bias(x, bias);
    if (st != STRUX_OK) {
        strux_free(&ds->path);
        strux_free(&ds);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    ds->x = *x;
    ds->x.n_cols = dim + (bias > 0);
    ds->y_ptr = *y_ptr;
    ds->y_idx = *y_idx;
    ds->n_local = x->n_rows;
    ds->n_global = n_global;
    ds->first = first;
    ds->dim = dim + (bias > 0);
    ds->n_labels = n_labels;
    ds->bias_col = bias > 0 ? dim : -1;
    ds->block_hi = 1; /* one block of the local examples until a reader sets its plan */
    ds->weight_sum = (double)n_global;
    *x = (strux_csr){0};
    *y_ptr = NULL;
    *y_idx = NULL;
    *out = ds;
    return STRUX_OK;
}

strux_status strux_dataset_read_weights(strux_dataset *ds, const char *path)
{
    strux_text_reader *r = NULL;
    strux_status st;
    double *w = NULL, sum = 0;
    int64_t line_no = 0;
    STRUX_TRY(strux_text_reader_open(path, &r));
    STRUX_TRY_GOTO(st, strux_alloc_array(&w, (size_t)ds->n_local + 1, sizeof *w), done);
    for (;;) {
        char *line, *end;
        STRUX_TRY_GOTO(st, strux_text_reader_next_line(r, &line, NULL), done);
        if (!line) break;
        line_no = strux_text_reader_line_no(r);
        double v = strtod(line, &end);
        while (*end == ' ' || *end == '\t')
            end++;
        STRUX_CHECK_GOTO(st, end != line && *end == '\0' && isfinite(v) && v >= 0, STRUX_ERR_INPUT,
                         done,
                         "%s:%lld: '%s' is not a loss weight (a finite number >= 0, one per "
                         "example)",
                         path, (long long)line_no, line);
        STRUX_CHECK_GOTO(st, line_no <= ds->n_global, STRUX_ERR_INPUT, done,
                         "%s:%lld: more weights than the %lld examples of %s", path,
                         (long long)line_no, (long long)ds->n_global, ds->path);
        int64_t i = line_no - 1 - ds->first;
        if (i >= 0 && i < ds->n_local) w[i] = v;
        sum += v;
    }
    STRUX_CHECK_GOTO(st, line_no == ds->n_global, STRUX_ERR_INPUT, done,
                     "%s: %lld weights for the %lld examples of %s (one line per example)", path,
                     (long long)line_no, (long long)ds->n_global, ds->path);
    STRUX_CHECK_GOTO(st, sum > 0, STRUX_ERR_INPUT, done, "%s: every weight is zero", path);
    strux_free(&ds->weight);
    ds->weight = w;
    ds->weight_sum = sum;
    w = NULL;
done:
    strux_free(&w);
    strux_text_reader_close(&r);
    return st;
}

/* FNV-1a, 64 bits, over n bytes continuing from h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t k = 0; k < n; k++)
        h = (h ^ b[k]) * 0x100000001b3ULL;
    return h;
}

void strux_dataset_fingerprint(const strux_dataset *ds, int64_t halves[2])
{
    halves[0] = halves[1] = 0;
    for (int64_t i = 0; i < ds->n_local; i++) {
        uint64_t h = 0xcbf29ce484222325ULL;
        int64_t g = ds->first + i;
        h = fnv1a(h, &g, sizeof g);
        int64_t r0 = ds->ex_ptr ? ds->ex_ptr[i] : i, r1 = ds->ex_ptr ? ds->ex_ptr[i + 1] : i + 1;
        for (int64_t r = r0; r < r1; r++) {
            int64_t p0 = ds->x.ptr[r], p1 = ds->x.ptr[r + 1];
            h = fnv1a(h, ds->x.col + p0, (size_t)(p1 - p0) * sizeof *ds->x.col);
            h = fnv1a(h, ds->x.val + p0, (size_t)(p1 - p0) * sizeof *ds->x.val);
            h = fnv1a(h, ds->y_idx + ds->y_ptr[r],
                      (size_t)(ds->y_ptr[r + 1] - ds->y_ptr[r]) * sizeof *ds->y_idx);
        }
        double v = strux_dataset_weight(ds, i);
        h = fnv1a(h, &v, sizeof v);
        halves[0] += (int64_t)(h & 0xffffffffu);
        halves[1] += (int64_t)(h >> 32);
    }
}

int32_t strux_dataset_n_blocks(const strux_dataset *ds)
{
    return ds->block_ptr ? ds->n_blocks : 1;
}

void strux_dataset_block_range(const strux_dataset *ds, int32_t k, int64_t *i0, int64_t *i1)
{
    *i0 = ds->block_ptr ? ds->block_ptr[k] - ds->first : 0;
    *i1 = ds->block_ptr ? ds->block_ptr[k + 1] - ds->first : ds->n_local;
}

void strux_dataset_destroy(strux_dataset **ds)
{
    if (!*ds) return;
    strux_csr_free(&(*ds)->x);
    strux_free(&(*ds)->y_ptr);
    strux_free(&(*ds)->y_idx);
    strux_free(&(*ds)->ex_ptr);
    strux_free(&(*ds)->block_ptr);
    strux_free(&(*ds)->weight);
    strux_free(&(*ds)->path);
    strux_free(ds);
}

void strux_dataset_col_maxabs(const strux_dataset *ds, double *out)
{
    for (int32_t j = 0; j < ds->dim; j++)
        out[j] = 0;
    int64_t nnz = ds->x.ptr[ds->x.n_rows];
    for (int64_t p = 0; p < nnz; p++) {
        double v = fabs((double)ds->x.val[p]);
        if (v > out[ds->x.col[p]]) out[ds->x.col[p]] = v;
    }
}

void strux_dataset_scale_cols(strux_dataset *ds, const double *factor)
{
    int64_t nnz = ds->x.ptr[ds->x.n_rows];
    for (int64_t p = 0; p < nnz; p++)
        if (ds->x.col[p] != ds->bias_col)
            ds->x.val[p] = (float)(ds->x.val[p] * factor[ds->x.col[p]]);
}

void strux_dataset_normalize_rows(strux_dataset *ds)
{
    for (int64_t i = 0; i < ds->x.n_rows; i++) {
        double ss = 0;
        for (int64_t p = ds->x.ptr[i]; p < ds->x.ptr[i + 1]; p++)
            if (ds->x.col[p] != ds->bias_col) ss += (double)ds->x.val[p] * ds->x.val[p];
        if (ss <= 0) continue;
        double f = 1 / sqrt(ss);
        for (int64_t p = ds->x.ptr[i]; p < ds->x.ptr[i + 1]; p++)
            if (ds->x.col[p] != ds->bias_col) ds->x.val[p] = (float)(ds->x.val[p] * f);
    }
}

strux_status strux_label_names_read(const char *path, int32_t n_labels, char ***names)
{
    FILE *f = fopen(path, "r");
    STRUX_CHECK(f, STRUX_ERR_INPUT, "%s: cannot open label names", path);
    strux_status st = strux_alloc_array(names, (size_t)n_labels, sizeof **names);
    char line[4096];
    long long ln = 0;
    while (st == STRUX_OK && fgets(line, sizeof line, f)) {
        ln++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0]) continue;
        char *end;
        long id = strtol(line, &end, 10);
        if (end == line || !isspace((unsigned char)*end) || id < 0) {
            st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                 "%s:%lld: expected 'id name'", path, ln);
            break;
        }
        while (isspace((unsigned char)*end))
            end++;
        if (id >= n_labels) {
            st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                 "%s:%lld: label id %ld is not below the label count %d", path, ln,
                                 id, n_labels);
            break;
        }
        /* the shared .labels layout, `id parent_id depth is_leaf a/b/c`: the name is the path's
         * last segment (hierarchy predict --format paths joins the segments again) */
        long parent, depth, leaf;
        int used = 0;
        char path[4096];
        if (sscanf(end, "%ld %ld %ld %4095s%n", &parent, &depth, &leaf, path, &used) == 4 &&
            end[used + strspn(end + used, " \t")] == '\0' && (leaf == 0 || leaf == 1)) {
            char *seg = strrchr(path, '/');
            end = seg ? seg + 1 : path;
        }
        strux_free(&(*names)[id]);
        st = strux_strdup(&(*names)[id], end);
    }
    fclose(f);
    if (st != STRUX_OK) {
        strux_label_names_free(names, n_labels);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    return STRUX_OK;
}

void strux_label_names_free(char ***names, int32_t n_labels)
{
    if (!*names) return;
    for (int32_t k = 0; k < n_labels; k++)
        strux_free(&(*names)[k]);
    strux_free(names);
}
