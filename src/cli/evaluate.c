/* cli/evaluate.c - scoring data with a trained model: `strux predict` (one label per line, and
 * with --scores the row scores) and `strux eval` (one JSON object of the task's metrics), and the
 * evaluation step `strux train` runs on data.test. A kernel model (/m3l/kernel) scores through
 * its expansion. Each rank scores its own shard; metrics are sums reduced over ranks;
 * predictions are gathered to rank 0 in example order and written atomically. */
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
    strux_rates *rates; /* a rate-constrained model's datasets and constraints (/rates), or NULL */
} loaded_model;

static void loaded_model_free(loaded_model *lm)
{
    strux_dataset_destroy(&lm->data);
    strux_rates_destroy(&lm->rates);
    strux_task_destroy(&lm->task);
    strux_model_destroy(&lm->model);
    strux_model_info_free(&lm->info);
}

strux_read_options strux_cli_heldout_read_options(const strux_comm *comm,
                                                  const strux_run_options *o, const strux_model *m,
                                                  int32_t n_labels)
{
    double b = strcmp(o->model.bias, "none") == 0 ? 0 : o->data.bias; /* as the training data */
    int bias = b > 0;
    strux_read_options ro = {
        .rank = strux_comm_rank(comm),
        .n_ranks = strux_comm_size(comm),
        .dim = strux_model_dim(m) - bias,
        .n_labels = n_labels,
        .drop_above_dim = 1,
        .bias = b,
        .max_features = (int32_t)o->data.max_features,
        .binary_labels = strcmp(o->task.type, "binary") == 0,
        .normalize = strcmp(o->data.normalize, "l2") == 0, /* as the training data */
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

strux_status strux_cli_report_unseen(strux_comm *comm, const strux_model *m,
                                     const strux_dataset *ds)
{
    /* the columns whose weight is zero in every row of the model (the bias column aside) */
    int32_t dim = strux_model_dim(m), n_rows = strux_model_n_rows(m), n_unseen = 0;
    int32_t *idx = NULL, *slot = NULL, *col = NULL;
    double *val = NULL;
    int64_t *count = NULL;
    strux_status st = strux_alloc_array(&idx, (size_t)dim, sizeof *idx);
    if (st == STRUX_OK) st = strux_alloc_array(&val, (size_t)dim, sizeof *val);
    if (st == STRUX_OK) st = strux_alloc_array(&slot, (size_t)dim, sizeof *slot); /* zeroed */
    if (st == STRUX_OK) {
        for (int32_t k = 0; k < n_rows; k++) {
            int32_t n = strux_model_row_nonzeros(m, k, idx, val);
            for (int32_t i = 0; i < n; i++)
                slot[idx[i]] = 1;
        }
        /* slot[j]: position of column j among the unseen ones, or -1 */
        for (int32_t j = 0; j < dim; j++)
            slot[j] = (slot[j] || j == ds->bias_col) ? -1 : n_unseen++;
    }
    /* entries per unseen column in this rank's shard */
    if (st == STRUX_OK && n_unseen > 0)
        st = strux_alloc_array(&count, (size_t)n_unseen, sizeof *count);
    if (st == STRUX_OK && n_unseen > 0) st = strux_alloc_array(&col, (size_t)n_unseen, sizeof *col);
    if (st == STRUX_OK && n_unseen > 0) {
        for (int32_t j = 0; j < dim; j++)
            if (slot[j] >= 0) col[slot[j]] = j;
        const strux_csr *x = &ds->x;
        for (int64_t q = 0; q < x->ptr[x->n_rows]; q++)
            if (x->col[q] < dim && slot[x->col[q]] >= 0) count[slot[x->col[q]]]++;
    }
    /* every rank has the same model, hence the same n_unseen */
    st = strux_comm_agree(comm, st);
    if (st == STRUX_OK && n_unseen > 0) st = strux_comm_allreduce_sum_i64(comm, count, n_unseen);
    if (st == STRUX_OK && n_unseen > 0) {
        int64_t n_cols = 0, n_entries = 0, first = -1;
        for (int32_t u = 0; u < n_unseen; u++)
            if (count[u] > 0) {
                if (first < 0) first = col[u];
                n_cols++;
                n_entries += count[u];
            }
        if (n_cols > 0 && strux_comm_rank(comm) == 0) /* warnings print on every rank */
            strux_log(STRUX_LOG_WARN,
                      "%s: %lld features (the first is feature %lld) have a zero weight in every "
                      "row of the model: they were unseen in training and do not change the "
                      "scores (%lld entries of the data)",
                      ds->path, (long long)n_cols, (long long)first + 1, (long long)n_entries);
    }
    strux_free(&idx);
    strux_free(&val);
    strux_free(&slot);
    strux_free(&col);
    strux_free(&count);
    return st;
}

void strux_cli_print_scores(const strux_comm *comm, const strux_scores *sc)
{
    strux_cli_print_scores_extra(comm, sc, NULL);
}

void strux_cli_print_scores_extra(const strux_comm *comm, const strux_scores *sc,
                                  const char *extra)
{
    if (strux_comm_rank(comm) != 0) return;
    char body[8192];
    strux_scores_format(sc, body, sizeof body);
    printf("{%s%s%s}\n", body, extra && body[0] ? ", " : "", extra ? extra : "");
    fflush(stdout);
}

/* A model whose prediction solves LPs (multi-label DAG hierarchies, hierarchical.md §5.4): its
 * test-time counters, summed over ranks, as a log line and, with extra, as JSON members for
 * strux eval's object (owned by the caller). Collective. */
static strux_status log_lp_counters(strux_comm *comm, const strux_task *t, char **extra)
{
    strux_lp_stats s;
    int has;
    STRUX_TRY(strux_lp_stats_predict_total(comm, t, &s, &has));
    if (!has) return STRUX_OK;
    strux_log(STRUX_LOG_INFO,
              "multi-label DAG prediction: %lld examples, %.1f%% without an LP (few enough "
              "candidate leaves after pruning to enumerate), %.2f candidate leaves on average; "
              "%lld LPs (%.1f columns, "
              "%.3f ms each), %lld binary programmes after a fractional LP, %lld over "
              "task.lp_max_nodes",
              (long long)s.calls, s.calls ? 100.0 * (double)s.no_lp / (double)s.calls : 0.0,
              s.calls ? s.candidates / (double)s.calls : 0.0, (long long)s.lps,
              s.lps ? s.columns / (double)s.lps : 0.0,
              s.lps ? 1e3 * s.seconds / (double)s.lps : 0.0, (long long)s.ilps,
              (long long)s.capped);
    if (!extra) return STRUX_OK;
    STRUX_TRY(strux_alloc(extra, 512));
    strux_lp_stats_format(&s, *extra, 512);
    return STRUX_OK;
}

/* Score the data; with pred_path (scores_path), rank 0 writes the predictions (the row scores)
 * there atomically. */
static strux_status score(strux_comm *comm, const loaded_model *lm, const char *pred_path,
                          const char *scores_path, strux_scores *sc)
{
    char *text = NULL, *scores = NULL;
    size_t len = 0, scores_len = 0;
    strux_eval_request rq = {.model = lm->model,
                             .kexp = lm->info.m3l.kexp.n_labels > 0 ? &lm->info.m3l.kexp : NULL,
                             .text = pred_path ? &text : NULL,
                             .len = &len,
                             .scores = scores_path ? &scores : NULL,
                             .scores_len = &scores_len};
    strux_status st = strux_evaluate_with(comm, lm->task, lm->data, &rq, sc);
    if (st == STRUX_OK && pred_path && strux_comm_rank(comm) == 0)
        st = strux_io_write_atomic(pred_path, text, len);
    if (st == STRUX_OK && scores_path && strux_comm_rank(comm) == 0)
        st = strux_io_write_atomic(scores_path, scores, scores_len);
    strux_free(&text);
    strux_free(&scores);
    return strux_comm_agree(comm, st);
}

/* Every rank reads the model, rebuilds the task from the stored config, and reads its shard. */
static strux_status load(strux_comm *comm, const char *model_path, const char *data_path,
                         loaded_model *lm)
{
    strux_status st = strux_io_model_load(model_path, &lm->model, &lm->info);
    if (st == STRUX_OK) st = strux_config_from_stored(lm->info.config, model_path, &lm->opt);
    if (st == STRUX_OK) st = strux_task_create(&lm->opt.task, &lm->task);
    if (st == STRUX_OK && lm->info.trees.n_trees > 0) { /* rta: the file's trees, not a new draw */
        st = strux_task_set_trees(lm->task, &lm->info.trees);
        if (st != STRUX_OK) {
            char why[1024];
            snprintf(why, sizeof why, "%s", strux_error_message());
            st = strux_error_set(st, __FILE__, __LINE__, __func__, "%s: /rta: %s", model_path, why);
        }
    }
    if (st == STRUX_OK && lm->info.hier.n_nodes > 0) /* hierarchy: the file's, not task.hierarchy */
        st = strux_task_hierarchy_use_stored(lm->task, &lm->info.hier);
    if (st == STRUX_OK && lm->info.rates.m > 0) { /* the stored datasets and constraints */
        const strux_rates_store *rs = &lm->info.rates;
        st = strux_rates_create(&lm->opt.rates, &lm->rates);
        for (int32_t k = 0; st == STRUX_OK && k < rs->n_defs; k++)
            st = strux_rates_define(lm->rates, rs->def_names[k], rs->def_texts[k], model_path);
        for (int32_t j = 0; st == STRUX_OK && j < rs->m; j++)
            st = strux_rates_constrain(lm->rates, rs->names[j], rs->texts[j], model_path);
        if (st == STRUX_OK) st = strux_rates_check(lm->rates);
    }
    STRUX_TRY(strux_comm_agree(comm, st));
    strux_read_options ro =
        strux_cli_heldout_read_options(comm, &lm->opt, lm->model, lm->info.n_labels);
    /* The model's feature space is its training data's (data.dim, a header, or the largest index
     * it had): a feature beyond it is another data set's (scene data on a yeast model, whose label
     * ids fit yeast's), so it is refused with the line, not dropped as data.test's unseen
     * features are during training (issue 18). */
    char origin[4200];
    snprintf(origin, sizeof origin,
             " of the model %s (its training data's features): the data is of another feature "
             "space; to score features the training data lacked, train with data.dim covering "
             "them",
             model_path);
    ro.drop_above_dim = 0;
    ro.dim_origin = origin;
    STRUX_TRY(strux_cli_dataset_load(comm, data_path, &ro, &lm->data));
    STRUX_TRY(strux_cli_report_dropped(comm, lm->data));
    if (lm->info.m3l.kexp.n_labels == 0) /* a kernel model has no weights to be zero */
        STRUX_TRY(strux_cli_report_unseen(comm, lm->model, lm->data));
    STRUX_TRY(strux_comm_agree(comm, strux_task_check(lm->task, lm->data)));
    return strux_comm_agree(comm, strux_task_export(lm->task, NULL));
}

/* --model M --data D [--out P] [--scores S] [--format F] [--rule R]; out, scores, format and
 * rule may be NULL when not accepted. */
static strux_status parse(int argc, char **argv, const char **model, const char **data,
                          const char **out, const char **scores, const char **format,
                          const char **rule, const char *usage)
{
    *model = *data = NULL;
    if (out) *out = NULL;
    if (scores) *scores = NULL;
    if (format) *format = "ids";
    if (rule) *rule = "deterministic";
    for (int k = 1; k < argc; k++) {
        const char **slot = strcmp(argv[k], "--model") == 0              ? model
                            : strcmp(argv[k], "--data") == 0             ? data
                            : out && strcmp(argv[k], "--out") == 0       ? out
                            : scores && strcmp(argv[k], "--scores") == 0 ? scores
                            : format && strcmp(argv[k], "--format") == 0 ? format
                            : rule && strcmp(argv[k], "--rule") == 0     ? rule
                                                                         : NULL;
        STRUX_CHECK(slot && k + 1 < argc, STRUX_ERR_CONFIG, "usage: %s", usage);
        *slot = argv[++k];
    }
    STRUX_CHECK(*model && *data && (!out || *out), STRUX_ERR_CONFIG, "usage: %s", usage);
    STRUX_CHECK(!format || strcmp(*format, "ids") == 0 || strcmp(*format, "paths") == 0,
                STRUX_ERR_CONFIG, "--format %s: expected ids or paths (usage: %s)", *format, usage);
    STRUX_CHECK(!rule || strcmp(*rule, "deterministic") == 0 || strcmp(*rule, "randomised") == 0,
                STRUX_ERR_CONFIG, "--rule %s: expected deterministic or randomised (usage: %s)",
                *rule, usage);
    return STRUX_OK;
}

int strux_cmd_predict(strux_comm *comm, int argc, char **argv)
{
    const char *model, *data, *out, *scores, *format, *rule;
    loaded_model lm = {0};
    strux_scores sc;
    strux_status st = strux_comm_agree(
        comm, parse(argc, argv, &model, &data, &out, &scores, &format, &rule,
                    "strux predict --model MODEL --data DATA --out PREDICTIONS [--scores FILE] "
                    "[--format ids|paths] [--rule deterministic|randomised]"));
    if (st == STRUX_OK) {
        /* before reading anything: --out and --scores must not be an input, a device, a FIFO or
         * a directory, nor the same file */
        const char *inputs[] = {model, data, out};
        if (strux_comm_rank(comm) == 0) st = strux_io_check_output(out, inputs, 2);
        if (st == STRUX_OK && scores && strux_comm_rank(comm) == 0)
            st = strux_io_check_output(scores, inputs, 3);
        st = strux_comm_agree(comm, st);
    }
    if (st == STRUX_OK && scores && strcmp(rule, "randomised") == 0)
        st = strux_comm_agree(comm, strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__,
                                                    __func__,
                                                    "--scores writes the model's scores, which "
                                                    "--rule randomised does not use"));
    if (st == STRUX_OK) st = load(comm, model, data, &lm);
    if (st == STRUX_OK && scores && !strux_task_scores_are_potentials(lm.task))
        st = strux_comm_agree(comm, strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__,
                                                    __func__,
                                                    "--scores: the potentials of task %s are more "
                                                    "than one score per weight row; --scores is "
                                                    "for multilabel models",
                                                    strux_task_name(lm.task)));
    if (st == STRUX_OK && strcmp(format, "paths") == 0) /* names: the model's data.label_names */
        st = strux_comm_agree(comm, strux_task_hierarchy_set_format(lm.task, 1, lm.info.label_names,
                                                                    lm.info.n_labels));
    /* the randomised rule: a rate-constrained model's stochastic classifier (/rates mixture) */
    int randomised = st == STRUX_OK && strcmp(rule, "randomised") == 0;
    if (randomised && !lm.rates)
        st = strux_comm_agree(comm, strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                                    "%s: --rule randomised needs a model trained "
                                                    "under rate constraints (no /rates group)",
                                                    model));
    if (st == STRUX_OK && randomised) {
        char *text = NULL;
        size_t len = 0;
        st = strux_rates_predict_randomised(comm, lm.data, lm.model, &lm.info.rates,
                                            (uint64_t)lm.opt.solver.seed, &text, &len);
        if (st == STRUX_OK && strux_comm_rank(comm) == 0) st = strux_io_write_atomic(out, text, len);
        strux_free(&text);
        st = strux_comm_agree(comm, st);
    } else if (st == STRUX_OK) {
        st = score(comm, &lm, out, scores, &sc);
    }
    if (st == STRUX_OK)
        strux_log(STRUX_LOG_INFO, "%lld predictions (%s) written to %s",
                  (long long)lm.data->n_global, rule, out);
    if (st == STRUX_OK && !randomised) st = log_lp_counters(comm, lm.task, NULL);
    loaded_model_free(&lm);
    return st == STRUX_OK ? 0 : strux_cli_fail(comm, st);
}

int strux_cmd_eval(strux_comm *comm, int argc, char **argv)
{
    const char *model, *data;
    loaded_model lm = {0};
    strux_scores sc;
    strux_status st = strux_comm_agree(
        comm,
        parse(argc, argv, &model, &data, NULL, NULL, NULL, NULL,
              "strux eval --model MODEL --data DATA"));
    char *extra = NULL;
    if (st == STRUX_OK) st = load(comm, model, data, &lm);
    if (st == STRUX_OK) st = score(comm, &lm, NULL, NULL, &sc);
    /* a rate-constrained model: its datasets and constraints on DATA, deterministic and
     * randomised; any file but data.train is read as data.test (`rows` uses its TEST_FILE) */
    if (st == STRUX_OK && lm.rates)
        st = strux_rates_report(lm.rates, comm, lm.data, strcmp(data, lm.opt.data.train) != 0,
                                lm.model, &lm.info.rates, &extra);
    if (st == STRUX_OK && !extra) st = log_lp_counters(comm, lm.task, &extra);
    if (st == STRUX_OK) strux_cli_print_scores_extra(comm, &sc, extra);
    strux_free(&extra);
    loaded_model_free(&lm);
    return st == STRUX_OK ? 0 : strux_cli_fail(comm, st);
}
