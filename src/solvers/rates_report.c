/* solvers/rates_report.c - what rate-constrained training reads and reports besides the MM
 * itself (issue 15): binary models from files (`baseline PATH` datasets and rates.start), a
 * baseline's ±1 predictions (of a model, or from a file of one prediction per training example),
 * the report of datasets and constraints on a data set for the deterministic and the randomised
 * classifier (exact expectations), and randomised predictions. The baselines' weights ride in
 * /rates, so a report needs only the model file and the data (a prediction file is read again
 * on the training data and is not evaluable on data.test). */
#include "rates_impl.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

double strux_rates_ramp(double z)
{
    return z <= -0.5 ? 0.0 : z >= 0.5 ? 1.0 : 0.5 + z;
}

/* ---- binary models and prediction files ---- */

strux_status strux_rates_read_model(strux_rates *r, const char *path, const char *what,
                                    strux_model *out)
{
    int32_t dim = r->train->dim;
    double *row = NULL;
    strux_model *m = NULL;
    strux_model_info info = {0};
    strux_status st = strux_alloc_array(&row, (size_t)dim, sizeof *row);
    if (st == STRUX_OK && strux_comm_rank(r->comm) == 0) { /* rank 0 reads; the row is sent */
        st = strux_io_model_load(path, &m, &info);
        if (st == STRUX_OK &&
            (strcmp(info.task, r->task) != 0 || strux_model_n_rows(m) != 1 ||
             strux_model_dim(m) != dim))
            st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                 "%s (%s): a model of task %s with %d weight row(s) of %d features "
                                 "(bias column included); this run needs a %s model of the "
                                 "training data's %d",
                                 path, what, info.task, strux_model_n_rows(m),
                                 strux_model_dim(m), r->task, dim);
        if (st == STRUX_OK) strux_model_get_row(m, 0, row);
    }
    st = strux_comm_agree(r->comm, st);
    if (st == STRUX_OK) st = strux_comm_bcast(r->comm, row, (size_t)dim * sizeof *row, 0);
    if (st == STRUX_OK) {
        strux_model_zero(out);
        strux_model_set_row(out, 0, row);
    }
    strux_model_destroy(&m);
    strux_model_info_free(&info);
    strux_free(&row);
    return st;
}

/* The local rows' predictions from a file of one ±1 (or 1/0) per example of ds's file, in its
 * order (every rank reads the file and keeps its rows, as `rows` files are read). */
static strux_status read_predictions(const char *path, const strux_dataset *ds, int8_t *pred)
{
    strux_text_reader *rd = NULL;
    STRUX_TRY(strux_text_reader_open(path, &rd));
    int64_t g = 0;
    strux_status st = STRUX_OK;
    for (;;) {
        char *line;
        st = strux_text_reader_next_line(rd, &line, NULL);
        if (st != STRUX_OK || !line) break;
        while (isspace((unsigned char)*line))
            line++;
        size_t len = strlen(line);
        while (len && isspace((unsigned char)line[len - 1]))
            line[--len] = '\0';
        int v = strcmp(line, "+1") == 0 || strcmp(line, "1") == 0    ? 1
                : strcmp(line, "-1") == 0 || strcmp(line, "0") == 0 ? -1
                                                                      : 0;
        if (v == 0) {
            st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                 "%s:%" PRId64 ": '%.40s' is not a prediction (+1/1 or -1/0)", path,
                                 strux_text_reader_line_no(rd), line);
            break;
        }
        if (g >= ds->n_global) {
            st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                                 "%s:%" PRId64 ": more predictions than the %" PRId64
                                 " examples of %s",
                                 path, strux_text_reader_line_no(rd), ds->n_global, ds->path);
            break;
        }
        if (g >= ds->first && g < ds->first + ds->n_local) pred[g - ds->first] = (int8_t)v;
        g++;
    }
    if (st == STRUX_OK && g != ds->n_global)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: %" PRId64 " predictions for the %" PRId64 " examples of %s", path,
                             g, ds->n_global, ds->path);
    strux_text_reader_close(&rd);
    return st;
}

/* ±1 predictions of the local rows of ds by the one-row model w (positive iff score ≥ 0). */
static void model_predictions(const strux_model *w, const strux_dataset *ds, int8_t *pred)
{
    for (int64_t e = 0; e < ds->n_local; e++)
        pred[e] = strux_rates_score(w, ds, e) >= 0 ? 1 : -1;
}

strux_status strux_rates_baselines_read(strux_rates *r)
{
    int32_t n = r->n_base = strux_subset_n_baselines(r->defs);
    if (!n) return STRUX_OK;
    STRUX_TRY(strux_alloc_array(&r->base, (size_t)n, sizeof *r->base));
    STRUX_TRY(strux_alloc_array(&r->base_train, (size_t)n, sizeof *r->base_train));
    strux_status st = STRUX_OK;
    for (int32_t b = 0; b < n && st == STRUX_OK; b++) {
        const char *path = strux_subset_baseline_path(r->defs, b);
        int32_t is_model = strux_comm_rank(r->comm) == 0 ? strux_io_is_hdf5(path) != 0 : 0;
        st = strux_comm_bcast(r->comm, &is_model, sizeof is_model, 0);
        if (st == STRUX_OK)
            st = strux_alloc_array(&r->base_train[b], (size_t)r->n_local + 1, sizeof **r->base_train);
        if (st == STRUX_OK && is_model) {
            st = strux_model_create(1, r->train->dim, 0, STRUX_MODEL_PLAIN, &r->base[b]);
            if (st == STRUX_OK) st = strux_rates_read_model(r, path, "baseline", r->base[b]);
            if (st == STRUX_OK) model_predictions(r->base[b], r->train, r->base_train[b]);
        } else if (st == STRUX_OK) {
            st = strux_comm_agree(r->comm, read_predictions(path, r->train, r->base_train[b]));
        }
    }
    return st;
}

strux_status strux_rates_baseline_predictions(strux_rates *r, const strux_dataset *ds, int test,
                                              int8_t **pred)
{
    for (int32_t b = 0; b < r->n_base; b++) {
        pred[b] = NULL;
        if (!r->base[b] && test) continue; /* a prediction file covers the training rows only */
        STRUX_TRY(strux_alloc_array(&pred[b], (size_t)ds->n_local + 1, sizeof **pred));
        if (r->base[b])
            model_predictions(r->base[b], ds, pred[b]);
        else
            STRUX_TRY(read_predictions(strux_subset_baseline_path(r->defs, b), ds, pred[b]));
    }
    return STRUX_OK;
}

/* The baselines of a stored model (/rates): models from their stored weights, prediction files
 * by path. */
static strux_status baselines_from_store(strux_rates *r, const strux_rates_store *s,
                                         const strux_model *like)
{
    if (r->base || !s || s->n_base == 0) return STRUX_OK;
    int32_t n = r->n_base = strux_subset_n_baselines(r->defs);
    STRUX_CHECK(n == s->n_base, STRUX_ERR_INPUT,
                "/rates stores %d baseline(s), its datasets name %d", s->n_base, n);
    STRUX_TRY(strux_alloc_array(&r->base, (size_t)n, sizeof *r->base));
    for (int32_t b = 0; b < n; b++) {
        if (!s->base_is_model[b]) continue;
        STRUX_TRY(strux_model_create_like(like, &r->base[b]));
        strux_model_zero(r->base[b]);
        strux_model_set_row(r->base[b], 0, s->base_w + (size_t)b * (size_t)s->n_w);
    }
    return STRUX_OK;
}

/* ---- the report ---- */

static void sb_num(strux_strbuf *b, const char *key, double x)
{
    if (isfinite(x))
        strux_strbuf_printf(b, "\"%s\": %.15g", key, x);
    else
        strux_strbuf_printf(b, "\"%s\": null", key);
}

/* A JSON string literal of s (names and texts are printable ASCII/UTF-8 from the config). */
static void sb_str(strux_strbuf *b, const char *s)
{
    strux_strbuf_printf(b, "\"");
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            strux_strbuf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            strux_strbuf_printf(b, "\\u%04x", (unsigned char)*s);
        else
            strux_strbuf_printf(b, "%c", *s);
    strux_strbuf_printf(b, "\"");
}

static int linear_defined(const strux_rates_linear *f, const int64_t *n)
{
    for (int32_t t = 0; t < f->n_terms; t++) {
        const strux_rates_term *u = &f->terms[t];
        if (n[u->set] <= 0 || (u->num >= 0 && n[u->num] < 0) || (u->den >= 0 && n[u->den] <= 0))
            return 0;
    }
    return 1;
}

void strux_rates_constraint_values(const strux_rates_expr *e, const int64_t *n, const double *sp,
                              double *lhs, double *rhs, int *sat, double *ratio)
{
    *lhs = *rhs = *ratio = NAN;
    *sat = -1;
    if (e->ratio != STRUX_RATES_NO_RATIO) {
        int32_t P = e->ratio_pos, M = e->ratio_neg;
        if (n[P] < 0 || n[M] < 0 || n[P] + n[M] <= 0) return;
        double tp = (double)n[P] * (n[P] > 0 ? sp[P] : 0);
        double fp = (double)n[M] * (n[M] > 0 ? sp[M] : 0), fn = (double)n[P] - tp;
        *lhs = e->ratio == STRUX_RATES_PRECISION ? tp / (tp + fp) : 2 * tp / (2 * tp + fn + fp);
        *rhs = e->ratio_bound;
    } else {
        if (!linear_defined(&e->lhs, n) || !linear_defined(&e->rhs, n)) return;
        *lhs = strux_rates_linear_value(&e->lhs, n, sp);
        *rhs = strux_rates_linear_value(&e->rhs, n, sp);
        if (e->lhs.n_terms == 1 && e->rhs.n_terms == 1 && e->lhs.c0 == 0 && e->rhs.c0 == 0) {
            const strux_rates_term *a = &e->lhs.terms[0], *b = &e->rhs.terms[0];
            double ra = a->side > 0 ? sp[a->set] : 1 - sp[a->set];
            double rb = b->side > 0 ? sp[b->set] : 1 - sp[b->set];
            *ratio = ra / rb;
        }
    }
    if (isfinite(*lhs) && isfinite(*rhs)) *sat = e->sense > 0 ? *lhs <= *rhs : *lhs >= *rhs;
}

/* Σ_k μ_k σ(f_k(x)/2) of every local row of ds: the randomised classifier's probability. */
static strux_status mixture_probabilities(const strux_dataset *ds, const strux_model *like,
                                          const strux_rates_store *mix, double *pr)
{
    strux_model *w = NULL;
    STRUX_TRY(strux_model_create_like(like, &w));
    int32_t rows = strux_model_n_rows(like), dim = strux_model_dim(like);
    for (int32_t k = 0; k < mix->n_mix; k++) {
        strux_model_zero(w);
        for (int32_t q = 0; q < rows; q++)
            strux_model_set_row(w, q, mix->mix_w + (size_t)k * mix->n_w + (size_t)q * dim);
        for (int64_t e = 0; e < ds->n_local; e++)
            pr[e] += mix->mix_mu[k] * strux_rates_ramp(0.5 * strux_rates_score(w, ds, e));
    }
    strux_model_destroy(&w);
    return STRUX_OK;
}

/* Local counts of every subset on ds: cnt[k] members (−1 where not evaluable), cnt[K + k] of them
 * predicted positive by pos, rsum[k] the sum of pr over them. */
static strux_status local_counts(strux_rates *r, const strux_dataset *ds, int test,
                                 const int8_t *pos, const double *pr, int64_t *cnt, double *rsum)
{
    int32_t K = strux_subset_count(r->defs);
    int64_t n = ds->n_local;
    int8_t *label = NULL, **base = NULL;
    uint8_t *mem = NULL;
    strux_status st = strux_alloc_array(&label, (size_t)n + 1, sizeof *label);
    if (st == STRUX_OK) st = strux_alloc_array(&mem, (size_t)n + 1, sizeof *mem);
    if (st == STRUX_OK) st = strux_alloc_array(&base, (size_t)r->n_base + 1, sizeof *base);
    if (st == STRUX_OK) st = strux_rates_baseline_predictions(r, ds, test, base);
    for (int64_t e = 0; st == STRUX_OK && e < n; e++)
        label[e] = ds->y_ptr[e + 1] > ds->y_ptr[e] ? (ds->y_idx[ds->y_ptr[e]] == 1 ? 1 : -1) : 0;
    strux_subset_input in = {
        .ds = ds, .label = label, .test = test, .baseline = (const int8_t *const *)base};
    for (int32_t k = 0; k < K; k++)
        cnt[k] = -1;
    for (int32_t k = 0; k < K && st == STRUX_OK; k++) {
        if (!strux_subset_evaluable(r->defs, k, &in)) continue;
        st = strux_subset_eval(r->defs, k, &in, mem);
        cnt[k] = 0;
        for (int64_t e = 0; st == STRUX_OK && e < n; e++)
            if (mem[e]) {
                cnt[k]++;
                cnt[K + k] += pos[e];
                rsum[k] += pr[e];
            }
    }
    for (int32_t b = 0; base && b < r->n_base; b++)
        strux_free(&base[b]);
    strux_free(&base);
    strux_free(&label);
    strux_free(&mem);
    return st;
}

strux_status strux_rates_report(strux_rates *r, strux_comm *comm, const strux_dataset *ds, int test,
                                const strux_model *det, const strux_rates_store *mix, char **json)
{
    int32_t K = strux_subset_count(r->defs);
    int64_t n = ds->n_local, *cnt = NULL;
    double *pr = NULL, *rsum = NULL, *sp = NULL, *spr = NULL;
    int8_t *pos = NULL;
    strux_strbuf b = {0};
    strux_status st = STRUX_OK;
    *json = NULL;
    STRUX_TRY_GOTO(st, baselines_from_store(r, mix, det), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&pos, (size_t)n + 1, sizeof *pos), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&pr, (size_t)n + 1, sizeof *pr), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&cnt, 3 * (size_t)K, sizeof *cnt), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&rsum, (size_t)K, sizeof *rsum), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&sp, (size_t)K, sizeof *sp), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&spr, (size_t)K, sizeof *spr), done);
    /* deterministic prediction and the randomised classifier's probability per local row */
    for (int64_t e = 0; e < n; e++)
        pos[e] = strux_rates_score(det, ds, e) >= 0;
    if (mix && mix->n_mix > 0) {
        STRUX_TRY_GOTO(st, mixture_probabilities(ds, det, mix, pr), done);
    } else {
        for (int64_t e = 0; e < n; e++)
            pr[e] = pos[e];
    }
    st = local_counts(r, ds, test, pos, pr, cnt, rsum);
    STRUX_TRY_GOTO(st, strux_comm_agree(comm, st), done);
    /* a set not evaluable on this file is −1 on every rank: mark it before summing counts */
    for (int32_t k = 0; k < K; k++)
        cnt[2 * K + k] = cnt[k] < 0;
    for (int32_t k = 0; k < K; k++)
        if (cnt[k] < 0) cnt[k] = 0;
    STRUX_TRY_GOTO(st, strux_comm_allreduce_sum_i64(comm, cnt, 3 * K), done);
    STRUX_TRY_GOTO(st, strux_comm_allreduce_sum(comm, rsum, K), done);
    for (int32_t k = 0; k < K; k++) {
        if (cnt[2 * K + k]) cnt[k] = -1;
        sp[k] = cnt[k] > 0 ? (double)cnt[K + k] / (double)cnt[k] : NAN;
        spr[k] = cnt[k] > 0 ? rsum[k] / (double)cnt[k] : NAN;
    }
    strux_strbuf_printf(&b, "\"datasets\": {");
    int first = 1;
    for (int32_t k = 0; k < K; k++) {
        if (strux_subset_is_anonymous(r->defs, k)) continue;
        strux_strbuf_printf(&b, "%s", first ? "" : ", ");
        first = 0;
        sb_str(&b, strux_subset_name(r->defs, k));
        if (cnt[k] <= 0) {
            strux_strbuf_printf(&b, ": null");
            continue;
        }
        strux_strbuf_printf(&b, ": {\"n\": %lld, ", (long long)cnt[k]);
        sb_num(&b, "positive_rate", sp[k]);
        strux_strbuf_printf(&b, ", ");
        sb_num(&b, "positive_rate_rand", spr[k]);
        strux_strbuf_printf(&b, "}");
    }
    strux_strbuf_printf(&b, "}, \"constraints\": {");
    for (int32_t j = 0; j < r->m; j++) {
        double l[2], h[2], q[2];
        int sat[2];
        strux_rates_constraint_values(r->e[j + 1], cnt, sp, &l[0], &h[0], &sat[0], &q[0]);
        strux_rates_constraint_values(r->e[j + 1], cnt, spr, &l[1], &h[1], &sat[1], &q[1]);
        strux_strbuf_printf(&b, "%s", j ? ", " : "");
        sb_str(&b, r->con_name[j]);
        if (sat[0] < 0) {
            strux_strbuf_printf(&b, ": null");
            continue;
        }
        strux_strbuf_printf(&b, ": {");
        sb_num(&b, "lhs", l[0]);
        strux_strbuf_printf(&b, ", ");
        sb_num(&b, "rhs", h[0]);
        strux_strbuf_printf(&b, ", \"satisfied\": %s, ", sat[0] ? "true" : "false");
        sb_num(&b, "ratio", q[0]);
        strux_strbuf_printf(&b, ", ");
        sb_num(&b, "lhs_rand", l[1]);
        strux_strbuf_printf(&b, ", ");
        sb_num(&b, "rhs_rand", h[1]);
        strux_strbuf_printf(&b, ", \"satisfied_rand\": %s, ", sat[1] > 0 ? "true" : "false");
        sb_num(&b, "ratio_rand", q[1]);
        strux_strbuf_printf(&b, "}");
    }
    strux_strbuf_printf(&b, "}");
    st = b.st;
done:
    if (st == STRUX_OK)
        *json = b.s;
    else
        strux_free(&b.s);
    strux_free(&pos);
    strux_free(&pr);
    strux_free(&cnt);
    strux_free(&rsum);
    strux_free(&sp);
    strux_free(&spr);
    return st;
}

#define RAND_RULE_STREAM 0x52414e44ULL /* "RAND": the randomised classifier's draws */

strux_status strux_rates_predict_randomised(strux_comm *comm, const strux_dataset *ds,
                                            const strux_model *like, const strux_rates_store *mix,
                                            uint64_t seed, char **text, size_t *len)
{
    int64_t n = ds->n_local;
    double *pr = NULL;
    char *mine = NULL;
    *text = NULL;
    *len = 0;
    strux_status st = strux_alloc_array(&pr, (size_t)n + 1, sizeof *pr);
    if (st == STRUX_OK) st = strux_alloc_array(&mine, 3 * (size_t)n + 1, 1);
    if (st == STRUX_OK) st = mixture_probabilities(ds, like, mix, pr);
    size_t at = 0;
    for (int64_t e = 0; st == STRUX_OK && e < n; e++) {
        strux_rng g;
        strux_rng_init(&g, seed, RAND_RULE_STREAM, (uint64_t)(ds->first + e));
        const char *lab = strux_rng_uniform(&g) < pr[e] ? "+1\n" : "-1\n";
        memcpy(mine + at, lab, 3);
        at += 3;
    }
    strux_free(&pr);
    st = strux_comm_agree(comm, st);
    void *all = NULL;
    if (st == STRUX_OK) st = strux_comm_gather_bytes(comm, mine, at, 0, &all, len);
    strux_free(&mine);
    *text = all;
    return st;
}
