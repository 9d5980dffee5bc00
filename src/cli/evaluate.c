/* cli/evaluate.c - scoring data with a trained model: `strux predict` (one label per line) and
 * `strux eval` (one JSON object of the task's metrics), and the evaluation step `strux train` runs
 * on data.test. Each rank scores its own shard; metrics are sums reduced over ranks; predictions
 * are gathered to rank 0 in example order and written atomically. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* A model file and what it takes to score with it. */
typedef struct loaded_model {
    strux_model *model;
    strux_model_info info;
    strux_run_options opt; /* the training run's resolved options */
    strux_task *task;
    strux_dataset *data;
} loaded_model;

static void loaded_model_free(loaded_model *lm)
{
    strux_dataset_destroy(&lm->data);
    strux_task_destroy(&lm->task);
    strux_model_destroy(&lm->model);
    strux_model_info_free(&lm->info);
}

strux_read_options strux_cli_heldout_read_options(const strux_comm *comm,
                                                  const strux_run_options *o, const strux_model *m,
                                                  int32_t n_labels)
{
    int bias = o->data.bias > 0;
    strux_read_options ro = {
        .rank = strux_comm_rank(comm),
        .n_ranks = strux_comm_size(comm),
        .dim = m->dim - bias,
        .n_labels = n_labels,
        .drop_above_dim = 1,
        .bias = o->data.bias,
    };
    return ro;
}

strux_status strux_cli_report_dropped(strux_comm *comm, const strux_dataset *ds)
{
    int64_t dropped = ds->n_dropped;
    STRUX_TRY(strux_comm_allreduce_sum_i64(comm, &dropped, 1));
    if (dropped > 0)
        strux_log(STRUX_LOG_WARN,
                  "%s: %lld feature entries have an index above the model's %d features and were "
                  "ignored",
                  ds->path, (long long)dropped, ds->dim - (ds->bias_col >= 0));
    return STRUX_OK;
}

/* Append text and a newline to a growing buffer. */
static strux_status append_line(char **buf, size_t *len, size_t *cap, const char *text)
{
    size_t n = strlen(text);
    if (*len + n + 2 > *cap) {
        size_t c = (*cap ? *cap * 2 : 1 << 16) + n;
        STRUX_TRY(strux_realloc_array(buf, c, 1));
        *cap = c;
    }
    memcpy(*buf + *len, text, n);
    (*buf)[*len + n] = '\n';
    *len += n + 1;
    return STRUX_OK;
}

/* Local part: predict, accumulate metrics, and optionally format predictions. */
static strux_status score_shard(strux_task *t, const strux_model *m, const strux_dataset *ds,
                                double *acc, char **text, size_t *len)
{
    strux_pot pot = {0};
    strux_label pred = {0}, truth = {0};
    size_t cap = 0;
    char line[1 << 16];
    strux_status st;
    STRUX_TRY_GOTO(st, strux_task_pot_alloc(t, ds, &pot), done);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &pred), done);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &truth), done);
    for (int64_t i = 0; i < ds->n_local; i++) {
        STRUX_TRY_GOTO(st, strux_task_potentials(t, m, ds, i, &pot), done);
        STRUX_TRY_GOTO(st, strux_task_predict(t, &pot, &pred), done);
        STRUX_TRY_GOTO(st, strux_task_truth(t, ds, i, &truth), done);
        STRUX_TRY_GOTO(st, strux_task_eval_add(t, &pred, &truth, acc), done);
        if (!text) continue;
        STRUX_TRY_GOTO(st, strux_task_format_label(t, &pred, line, sizeof line), done);
        STRUX_TRY_GOTO(st, append_line(text, len, &cap, line), done);
    }
done:
    strux_pot_free(&pot);
    strux_label_free(&pred);
    strux_label_free(&truth);
    return st;
}

strux_status strux_cli_evaluate(strux_comm *comm, strux_task *t, const strux_model *m,
                                const strux_dataset *ds, const char *pred_path, char *json,
                                size_t n)
{
    int64_t n_acc = strux_task_eval_size(t);
    double *acc = NULL;
    char *text = NULL;
    void *all = NULL;
    size_t len = 0, all_len = 0;
    strux_status st = strux_alloc_array(&acc, (size_t)n_acc, sizeof *acc);
    if (st == STRUX_OK) st = score_shard(t, m, ds, acc, pred_path ? &text : NULL, &len);
    STRUX_TRY_GOTO(st, strux_comm_agree(comm, st), done);
    STRUX_TRY_GOTO(st, strux_comm_allreduce_sum(comm, acc, n_acc), done);
    if (pred_path) {
        STRUX_TRY_GOTO(st, strux_comm_gather_bytes(comm, text, len, 0, &all, &all_len), done);
        if (strux_comm_rank(comm) == 0) st = strux_io_write_atomic(pred_path, all, all_len);
        STRUX_TRY_GOTO(st, strux_comm_agree(comm, st), done);
    }
    char body[8192];
    STRUX_TRY_GOTO(st, strux_task_eval_report(t, acc, body, sizeof body), done);
    snprintf(json, n, "{%s}", body);
done:
    strux_free(&acc);
    strux_free(&text);
    strux_free(&all);
    return st;
}

/* Every rank reads the model, rebuilds the task from the stored config, and reads its shard. */
static strux_status load(strux_comm *comm, const char *model_path, const char *data_path,
                         loaded_model *lm)
{
    strux_status st = strux_io_model_load(model_path, &lm->model, &lm->info);
    if (st == STRUX_OK) st = strux_config_from_stored(lm->info.config, model_path, &lm->opt);
    if (st == STRUX_OK) st = strux_task_create(&lm->opt.task, &lm->task);
    STRUX_TRY(strux_comm_agree(comm, st));
    strux_read_options ro =
        strux_cli_heldout_read_options(comm, &lm->opt, lm->model, lm->info.n_labels);
    STRUX_TRY(strux_comm_agree(comm, strux_io_dataset_load(data_path, &ro, &lm->data)));
    STRUX_TRY(strux_cli_report_dropped(comm, lm->data));
    return strux_comm_agree(comm, strux_task_check(lm->task, lm->data));
}

/* --model M --data D [--out P]; out_path may be NULL when --out is not accepted. */
static strux_status parse(int argc, char **argv, const char **model, const char **data,
                          const char **out, const char *usage)
{
    *model = *data = NULL;
    if (out) *out = NULL;
    for (int k = 1; k < argc; k++) {
        const char **slot = strcmp(argv[k], "--model") == 0        ? model
                            : strcmp(argv[k], "--data") == 0       ? data
                            : out && strcmp(argv[k], "--out") == 0 ? out
                                                                   : NULL;
        STRUX_CHECK(slot && k + 1 < argc, STRUX_ERR_CONFIG, "usage: %s", usage);
        *slot = argv[++k];
    }
    STRUX_CHECK(*model && *data && (!out || *out), STRUX_ERR_CONFIG, "usage: %s", usage);
    return STRUX_OK;
}

int strux_cmd_predict(strux_comm *comm, int argc, char **argv)
{
    const char *model, *data, *out;
    loaded_model lm = {0};
    char json[8192];
    strux_status st =
        strux_comm_agree(comm, parse(argc, argv, &model, &data, &out,
                                     "strux predict --model MODEL --data DATA --out PREDICTIONS"));
    if (st == STRUX_OK) {
        /* before reading anything: --out must not be an input, a device, a FIFO or a directory */
        const char *inputs[] = {model, data};
        if (strux_comm_rank(comm) == 0) st = strux_io_check_output(out, inputs, 2);
        st = strux_comm_agree(comm, st);
    }
    if (st == STRUX_OK) st = load(comm, model, data, &lm);
    if (st == STRUX_OK)
        st = strux_cli_evaluate(comm, lm.task, lm.model, lm.data, out, json, sizeof json);
    if (st == STRUX_OK)
        strux_log(STRUX_LOG_INFO, "%lld predictions written to %s", (long long)lm.data->n_global,
                  out);
    loaded_model_free(&lm);
    return st == STRUX_OK ? 0 : strux_cli_fail(comm, st);
}

int strux_cmd_eval(strux_comm *comm, int argc, char **argv)
{
    const char *model, *data;
    loaded_model lm = {0};
    char json[8192];
    strux_status st = strux_comm_agree(
        comm, parse(argc, argv, &model, &data, NULL, "strux eval --model MODEL --data DATA"));
    if (st == STRUX_OK) st = load(comm, model, data, &lm);
    if (st == STRUX_OK)
        st = strux_cli_evaluate(comm, lm.task, lm.model, lm.data, NULL, json, sizeof json);
    if (st == STRUX_OK && strux_comm_rank(comm) == 0) printf("%s\n", json);
    loaded_model_free(&lm);
    return st == STRUX_OK ? 0 : strux_cli_fail(comm, st);
}
