/* docs/example_predict.c - predicting with a strux model from C, through the installed library.
 * Reads a model file (docs/model-format.md), rebuilds its task from the config stored in it,
 * reads one LIBSVM/XMC file (plain or gzip) and prints one predicted label per line, exactly as
 * `strux predict --out` writes them. One process, no MPI.
 *
 * Build against an installed strux (`make install PREFIX=$P`):
 *     cc -std=c11 docs/example_predict.c -o example_predict \
 *        $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs --static strux)
 * Run:
 *     ./example_predict model.h5 test.svm.gz > predictions.txt
 *
 * The route: strux_io_model_load gives the weights and the stored config; strux_opt_read_ini
 * fills the task options from that config's [task] section with the task key table, and
 * strux_opt_ini_get reads data.bias, which decides the constant feature appended to each example
 * (the model's last column when data.bias > 0); features beyond the model's dimension are dropped,
 * as `strux predict` does. Then per example: potentials, predict, format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strux/io.h"
#include "strux/task.h"

/* Print the recorded error and return the process exit code. */
static int fail(strux_status st)
{
    fprintf(stderr, "example_predict: %s: %s\n", strux_status_name(st), strux_error_message());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODEL DATA\n", argv[0]);
        return 2;
    }
    strux_model *m = NULL;
    strux_model_info info = {0};
    strux_task *task = NULL;
    strux_dataset *ds = NULL;
    strux_pot pot = {0};
    strux_label y = {0};
    char text[1 << 16];
    strux_status st;

    /* the model, and its task rebuilt from the stored config */
    STRUX_TRY_GOTO(st, strux_io_model_load(argv[1], &m, &info), done);
    strux_task_options task_opt;
    STRUX_TRY_GOTO(st, strux_opt_read_ini(strux_task_opt_specs, &task_opt, info.config, argv[1]),
                   done);
    STRUX_TRY_GOTO(st, strux_task_create(&task_opt, &task), done);

    /* the data, read the way the model saw its training data */
    char bias_text[64];
    double bias = strux_opt_ini_get(info.config, "data.bias", bias_text, sizeof bias_text)
                      ? atof(bias_text)
                      : 0.0;
    if (strux_opt_ini_get(info.config, "model.bias", bias_text, sizeof bias_text) &&
        strcmp(bias_text, "none") == 0)
        bias = 0; /* model.bias = none: no bias column */
    strux_read_options ro = {
        .rank = 0,
        .n_ranks = 1,
        .dim = strux_model_dim(m) - (bias > 0), /* the model's feature columns, bias excluded */
        .n_labels = info.n_labels,
        .drop_above_dim = 1, /* unseen features carry no weight */
        .bias = bias,
    };
    STRUX_TRY_GOTO(st, strux_io_dataset_load(argv[2], &ro, &ds), done);
    STRUX_TRY_GOTO(st, strux_task_check(task, ds), done);

    /* predict every example */
    STRUX_TRY_GOTO(st, strux_task_pot_alloc(task, ds, &pot), done);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(task, ds, &y), done);
    for (int64_t i = 0; i < ds->n_local; i++) {
        STRUX_TRY_GOTO(st, strux_task_potentials(task, m, ds, i, &pot), done);
        STRUX_TRY_GOTO(st, strux_task_predict(task, &pot, &y), done);
        STRUX_TRY_GOTO(st, strux_task_format_label(task, &y, text, sizeof text), done);
        puts(text);
    }

done:
    strux_pot_free(&pot);
    strux_label_free(&y);
    strux_dataset_destroy(&ds);
    strux_task_destroy(&task);
    strux_model_destroy(&m);
    strux_model_info_free(&info);
    return st == STRUX_OK ? 0 : fail(st);
}
