/* cli/gen_churn.c - `strux gen DIR --kind churn [--seed S]`: the synthetic churn problem of
 * dataset_constraints.md §4.5 (data/synth_churn.c) written for configs/churn.ini:
 *   DIR/train.svm, DIR/test.svm    LIBSVM binary rows (+1/-1; D3's rows start with a space,
 *                                  unlabeled), D1, D2, D3 in turn, 2976 features
 *   DIR/d{1,2,3}_{train,test}.txt  each set's 1-based row numbers (`rows` datasets)
 *   DIR/deployed.h5                the deployed model, a binary strux model of the same data
 *                                  (bias feature 1, as data.bias = 1)
 * and a summary in the log: sizes, positives, the deployed model's recall on D2's train rows (the
 * recall the constraint must keep, A12) and the objective's weights n(D1)/(n(D1) + n(D2)) and
 * n(D2−)/(n(D1) + n(D2)) (A11). Every file is written atomically. Runs on rank 0. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHURN_USAGE "usage: strux gen DIR --kind churn [--seed S]"

static strux_status write_text(const char *dir, const char *name, strux_strbuf *t)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    strux_status st = strux_io_write_atomic(path, t->s ? t->s : "", t->n);
    strux_strbuf_free(t);
    return st;
}

/* LIBSVM binary rows: `+1 j:v ...`, `-1 ...`, or ` j:v ...` for an unlabeled row. */
static strux_status write_rows(const char *dir, const char *name, const strux_dataset *ds)
{
    strux_strbuf t = {0};
    strux_status st = STRUX_OK;
    for (int64_t i = 0; st == STRUX_OK && i < ds->n_local; i++) {
        int64_t n = ds->y_ptr[i + 1] - ds->y_ptr[i];
        st = strux_strbuf_printf(&t, "%s", n ? (ds->y_idx[ds->y_ptr[i]] == 1 ? "+1" : "-1") : "");
        for (int64_t p = ds->x.ptr[i]; st == STRUX_OK && p < ds->x.ptr[i + 1]; p++)
            st = strux_strbuf_printf(&t, " %d:%.9g", ds->x.col[p] + 1, (double)ds->x.val[p]);
        if (st == STRUX_OK) st = strux_strbuf_printf(&t, "\n");
    }
    if (st != STRUX_OK) {
        strux_strbuf_free(&t);
        return st;
    }
    return write_text(dir, name, &t);
}

/* The deployed model as a binary strux model file with a resolved config of its data. */
static strux_status write_deployed(const char *dir, const strux_churn *c)
{
    char path[4200], train[4200], dimset[64];
    snprintf(path, sizeof path, "%s/deployed.h5", dir);
    snprintf(train, sizeof train, "data.train=%s/train.svm", dir);
    snprintf(dimset, sizeof dimset, "data.dim=%d", c->dim);
    strux_config *cfg = NULL;
    strux_run_options o;
    strux_model *m = NULL;
    strux_model_info info = {0};
    const char *sets[] = {"task.type=binary", "solver.type=sgd", "solver.lambda=0.001", dimset,
                          train};
    strux_status st = strux_config_create(&cfg);
    for (size_t k = 0; st == STRUX_OK && k < sizeof sets / sizeof *sets; k++)
        st = strux_config_set(cfg, sets[k]);
    if (st == STRUX_OK) st = strux_config_resolve(cfg, &o);
    if (st == STRUX_OK) st = strux_config_format(&o, &info.config);
    if (st == STRUX_OK) st = strux_model_create(1, c->dim + 1, 0, STRUX_MODEL_PLAIN, &m);
    if (st == STRUX_OK) {
        strux_model_set_row(m, 0, c->w_dep);
        snprintf(info.task, sizeof info.task, "binary");
        snprintf(info.surrogate, sizeof info.surrogate, "margin");
        snprintf(info.search, sizeof info.search, "margin");
        snprintf(info.solver, sizeof info.solver, "sgd");
        snprintf(info.version, sizeof info.version, "%s", STRUX_VERSION);
        snprintf(info.git_commit, sizeof info.git_commit, "synthetic (strux gen --kind churn)");
        info.n_labels = 2;
        info.n_ranks = 1;
        st = strux_io_model_save(path, m, &info);
    }
    strux_model_destroy(&m);
    strux_model_info_free(&info);
    strux_config_destroy(&cfg);
    return st;
}

/* Score of row i of ds under the deployed weights (bias feature 1). */
static double deployed_score(const strux_churn *c, const strux_dataset *ds, int64_t i)
{
    double s = c->w_dep[c->dim];
    for (int64_t p = ds->x.ptr[i]; p < ds->x.ptr[i + 1]; p++)
        s += c->w_dep[ds->x.col[p]] * ds->x.val[p];
    return s;
}

static strux_status write_all(const char *dir, const strux_churn *c)
{
    STRUX_TRY(write_rows(dir, "train.svm", c->train));
    STRUX_TRY(write_rows(dir, "test.svm", c->test));
    static const char *const split[2] = {"train", "test"};
    for (int k = 0; k < 3; k++)
        for (int sp = 0; sp < 2; sp++) {
            strux_strbuf t = {0};
            strux_status st = STRUX_OK;
            for (int64_t i = 0; st == STRUX_OK && i < c->n_rows[k][sp]; i++)
                st = strux_strbuf_printf(&t, "%lld\n", (long long)(c->first[k][sp] + i + 1));
            char name[64];
            snprintf(name, sizeof name, "d%d_%s.txt", k + 1, split[sp]);
            if (st == STRUX_OK) st = write_text(dir, name, &t);
            strux_strbuf_free(&t);
            STRUX_TRY(st);
        }
    return write_deployed(dir, c);
}

static strux_status gen_churn(int argc, char **argv)
{
    const char *dir = NULL, *kind = NULL;
    long long seed = 1;
    for (int k = 1; k < argc; k++) {
        if (argv[k][0] != '-') {
            STRUX_CHECK(!dir, STRUX_ERR_CONFIG, "gen: more than one DIR ('%s', '%s')\n%s", dir,
                        argv[k], CHURN_USAGE);
            dir = argv[k];
            continue;
        }
        STRUX_CHECK(k + 1 < argc, STRUX_ERR_CONFIG, "gen: %s needs a value\n%s", argv[k],
                    CHURN_USAGE);
        if (strcmp(argv[k], "--kind") == 0) {
            kind = argv[++k];
        } else if (strcmp(argv[k], "--seed") == 0) {
            char *end;
            errno = 0;
            seed = strtoll(argv[++k], &end, 10);
            STRUX_CHECK(*argv[k] && !*end && !errno && seed >= 0, STRUX_ERR_CONFIG,
                        "gen: --seed needs an integer >= 0, got '%s'\n%s", argv[k], CHURN_USAGE);
        } else {
            return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                   "gen: unknown option '%s' with --kind\n%s", argv[k],
                                   CHURN_USAGE);
        }
    }
    STRUX_CHECK(kind && strcmp(kind, "churn") == 0, STRUX_ERR_CONFIG,
                "gen: --kind %s: the kinds are: churn\n%s", kind ? kind : "(none)", CHURN_USAGE);
    STRUX_CHECK(dir, STRUX_ERR_CONFIG, "gen: DIR is missing\n%s", CHURN_USAGE);
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/train.svm", dir);
    STRUX_TRY(strux_io_make_parent(probe));
    strux_churn_options o = {.seed = (uint64_t)seed, .n1 = 13184, .n2 = 5388, .n3 = 6889};
    strux_churn c;
    double t0 = strux_time_now();
    STRUX_TRY(strux_churn_generate(&o, &c));
    strux_status st = write_all(dir, &c);
    if (st == STRUX_OK) {
        /* the deployed model's recall on D2's train rows (A12) */
        int64_t tp = 0, pos = 0;
        for (int64_t i = c.first[1][0]; i < c.first[1][0] + c.n_rows[1][0]; i++) {
            int y = c.train->y_idx[c.train->y_ptr[i]] == 1;
            pos += y;
            tp += y && deployed_score(&c, c.train, i) >= 0;
        }
        int64_t n1 = c.n_rows[0][0], n2 = c.n_rows[1][0], neg2 = n2 - c.n_pos[1][0];
        strux_log(STRUX_LOG_INFO,
                  "%s: churn problem (seed %lld, %d features): train D1 %lld (%lld positive), D2 "
                  "%lld (%lld positive), D3 %lld unlabeled; test D1 %lld, D2 %lld, D3 %lld; "
                  "deployed recall on D2 train %.17g (%lld of %lld); objective weights "
                  "n(D1)/(n(D1)+n(D2)) = %.17g, n(D2-)/(n(D1)+n(D2)) = %.17g; %.2fs",
                  dir, seed, c.dim, (long long)n1, (long long)c.n_pos[0][0], (long long)n2,
                  (long long)c.n_pos[1][0], (long long)c.n_rows[2][0], (long long)c.n_rows[0][1],
                  (long long)c.n_rows[1][1], (long long)c.n_rows[2][1], (double)tp / (double)pos,
                  (long long)tp, (long long)pos, (double)n1 / (double)(n1 + n2),
                  (double)neg2 / (double)(n1 + n2), strux_time_now() - t0);
    }
    strux_churn_free(&c);
    return st;
}

int strux_cli_gen_kind(strux_comm *comm, int argc, char **argv)
{
    return strux_cli_run_on_root(comm, gen_churn, argc, argv);
}
