/* bench/liblinear_time.c - LIBLINEAR's 1-vs-All timed in memory, as the M3L paper timed it
 * (specs/m3l.md §5.1: data in RAM, LIBLINEAR called through its API), for bench/m3l.sh (1):
 * `-s 3` (L2-regularised L1-loss dual coordinate descent), C = 1/(λn), a bias feature of 1
 * (`-B 1`), one train() per label of a LIBSVM multi-label file read with strux's reader; the
 * seconds inside train() summed over the labels, and strux's objective of the weights,
 *     J = Σ_l (λ/2)||w_l||² + (1/n) Σ_i Σ_l max(0, 1 − y_il w_l·x_i),
 * printed as JSON {"train_s", "objective", "iterations"}. Not a test: no checks beyond the
 * inputs'. Usage: liblinear_time TRAIN LAMBDA EPS */
#include "strux/data.h"

#include <linear.h>
#include <stdio.h>
#include <stdlib.h>

static void quiet(const char *s)
{
    (void)s;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: liblinear_time TRAIN LAMBDA EPS\n");
        return 2;
    }
    double lambda = atof(argv[2]), eps = atof(argv[3]);
    strux_read_options ro = {.rank = 0, .n_ranks = 1};
    strux_dataset *ds = NULL;
    if (strux_dataset_read_libsvm(argv[1], &ro, &ds) != STRUX_OK) {
        fprintf(stderr, "liblinear_time: %s\n", strux_error_message());
        return 1;
    }
    int n = (int)ds->n_local, dim = ds->dim, L = ds->n_labels;
    const strux_csr *x = &ds->x;
    /* the rows as LIBLINEAR's nodes: features 1-based, the bias node dim + 1, a terminator */
    struct feature_node *space = malloc((size_t)(x->ptr[n] + 2 * (int64_t)n) * sizeof *space);
    struct feature_node **rows = malloc((size_t)n * sizeof *rows);
    double *y = malloc((size_t)n * sizeof *y);
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        rows[i] = space + at;
        for (int64_t p = x->ptr[i]; p < x->ptr[i + 1]; p++)
            space[at++] = (struct feature_node){x->col[p] + 1, x->val[p]};
        space[at++] = (struct feature_node){dim + 1, 1.0};
        space[at++] = (struct feature_node){-1, 0.0};
    }
    struct problem prob = {.l = n, .n = dim + 1, .y = y, .x = rows, .bias = 1.0};
    struct parameter param = {.solver_type = L2R_L1LOSS_SVC_DUAL, .eps = eps, .C = 1 / (lambda * n)};
    set_print_string_function(quiet);
    double train_s = 0, reg = 0, hinge = 0;
    for (int l = 0; l < L; l++) {
        for (int i = 0; i < n; i++) {
            y[i] = -1;
            for (int64_t q = ds->y_ptr[i]; q < ds->y_ptr[i + 1]; q++)
                if (ds->y_idx[q] == l) y[i] = 1;
        }
        double t0 = strux_time_now();
        struct model *m = train(&prob, &param);
        train_s += strux_time_now() - t0;
        double sign = m->label[0] == 1 ? 1 : -1; /* w scores the first label seen */
        for (int j = 0; j <= dim; j++)
            reg += m->w[j] * m->w[j];
        for (int i = 0; i < n; i++) {
            double f = 0;
            for (const struct feature_node *v = rows[i]; v->index > 0; v++)
                f += m->w[v->index - 1] * v->value;
            double h = 1 - y[i] * sign * f;
            hinge += h > 0 ? h : 0;
        }
        free_and_destroy_model(&m);
    }
    printf("{\"train_s\": %.6f, \"objective\": %.17g, \"loss\": %.17g}\n", train_s,
           0.5 * lambda * reg + hinge / n, hinge / n);
    free(space);
    free(rows);
    free(y);
    strux_dataset_destroy(&ds);
    return 0;
}
