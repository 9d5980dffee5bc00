/* tests/unit/test_task_chain.c - the chain task against brute-force enumeration of its K^T ≤ 4096
 * labels (K = 4 tags, T ≤ 6 tokens): Viterbi for random (a, b, c), k-best Viterbi for ban lists
 * holding the best labels, the loss-indexed DP for random and dyadic wedges against the frontier
 * reference (best h per error count, filtered by the wedge) and, when β = 0, against the full
 * constrained enumeration; unsupported combinations; w·φ = f and Δφ; conlleval chunk counts and
 * metrics by hand; tag names, task.outside and the sequence checks. */
#include "test_common.h"

#include "brute.h"
#include "synth.h"
#include "strux/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K = 4, MAX_T = 6, DIM = 5, N = 24 };

typedef struct fixture_state {
    strux_dataset *ds;
    strux_task *t;
    strux_model *m;
    strux_pot pot;
    strux_label truth, y, best;
} fixture_state;

static strux_task_options chain_options(const char *tags, const char *outside)
{
    strux_task_options to = {.type = "chain"};
    snprintf(to.tags, sizeof to.tags, "%s", tags);
    snprintf(to.outside, sizeof to.outside, "%s", outside);
    return to;
}

static int setup(void **state)
{
    fixture_state *f = calloc(1, sizeof *f);
    f->ds = synth_sequences("synthetic-chain", N, MAX_T, DIM, K, 5);
    strux_task_options to = chain_options(fixture("chain4.tags"), "O");
    if (strux_task_create(&to, &f->t) || strux_task_check(f->t, f->ds)) return -1;
    int32_t rows;
    int64_t extra;
    if (strux_task_model_shape(f->t, f->ds, &rows, &extra) || rows != K ||
        extra != K * K + 2 * K)
        return -1;
    if (strux_model_create(rows, f->ds->dim, extra, STRUX_MODEL_PLAIN, &f->m)) return -1;
    strux_rng r;
    strux_rng_init(&r, 21, 0, 0);
    double *w = test_model_flat(f->m);
    for (int64_t k = 0; k < strux_model_n_w(f->m); k++) w[k] = strux_rng_normal(&r);
    test_model_set_flat(f->m, w);
    free(w);
    if (strux_task_pot_alloc(f->t, f->ds, &f->pot) ||
        strux_task_label_alloc(f->t, f->ds, &f->truth) ||
        strux_task_label_alloc(f->t, f->ds, &f->y) || strux_task_label_alloc(f->t, f->ds, &f->best))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_state *f = *state;
    strux_pot_free(&f->pot);
    strux_label_free(&f->truth);
    strux_label_free(&f->y);
    strux_label_free(&f->best);
    strux_model_destroy(&f->m);
    strux_task_destroy(&f->t);
    strux_dataset_destroy(&f->ds);
    free(f);
    return 0;
}

/* Potentials of example i: the model's, or integers (many ties) every other round. */
static void load_example(fixture_state *f, int i, int round, strux_rng *r)
{
    assert_strux_ok(strux_task_potentials(f->t, f->m, f->ds, i, &f->pot));
    assert_strux_ok(strux_task_truth(f->t, f->ds, i, &f->truth));
    int64_t n = (int64_t)f->pot.n_parts * K + K * K + 2 * K;
    if (round % 2) integer_potentials(&f->pot, n, 2, r);
    else random_potentials(&f->pot, n, 1.0 + round % 3, (uint64_t)(100 * i + round));
}

static void test_viterbi_matches_enumeration(void **state)
{
    fixture_state *f = *state;
    strux_rng r;
    strux_rng_init(&r, 3, 0, 0);
    for (int i = 0; i < N; i++)
        for (int round = 0; round < 16; round++) {
            load_example(f, i, round, &r);
            strux_query q = random_query(&r, 1, round % 2);
            q.wedge = 0;
            strux_answer a;
            assert_strux_ok(strux_task_oracle(f->t, &f->pot, &f->truth, &q, &f->y, &a));
            double want = brute_oracle(f->t, &f->pot, &f->truth, &q, &f->best);
            expect_oracle_answer(f->t, &f->pot, &f->truth, &q, want, &f->y, &a, 1e-12);
        }
}

/* Ban lists made of the best labels (so k-best has to go deep) plus random labels. */
static void test_kbest_ban_list(void **state)
{
    fixture_state *f = *state;
    enum { MAX_BAN = 12 };
    strux_label ban[MAX_BAN];
    for (int b = 0; b < MAX_BAN; b++) assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &ban[b]));
    strux_rng r;
    strux_rng_init(&r, 4, 0, 0);
    int n_deep = 0;
    for (int i = 0; i < N; i++)
        for (int round = 0; round < 8; round++) {
            load_example(f, i, round, &r);
            strux_query q = random_query(&r, 1, round % 2);
            q.wedge = 0;
            q.ban = ban;
            int n_best = 1 + (int)strux_rng_below(&r, 8), n_rand = (int)strux_rng_below(&r, 3);
            for (q.n_ban = 0; q.n_ban < n_best; q.n_ban++)
                if (isinf(brute_oracle(f->t, &f->pot, &f->truth, &q, &ban[q.n_ban]))) break;
            int64_t count = strux_task_label_count(f->t, &f->pot);
            for (int k = 0; k < n_rand; k++)
                assert_strux_ok(strux_task_label_at(f->t, &f->pot,
                                                    (int64_t)strux_rng_below(&r, (uint64_t)count),
                                                    &ban[q.n_ban++]));
            strux_answer a;
            assert_strux_ok(strux_task_oracle(f->t, &f->pot, &f->truth, &q, &f->y, &a));
            double want = brute_oracle(f->t, &f->pot, &f->truth, &q, &f->best);
            expect_oracle_answer(f->t, &f->pot, &f->truth, &q, want, &f->y, &a, 1e-12);
            n_deep += q.n_ban >= 6;
        }
    assert_true(n_deep > 10);
    /* a one-token sequence has K labels: banning all of them leaves nothing */
    f->pot.n_parts = 1;
    f->truth.n = 1;
    strux_query q = strux_query_dir(1, 1);
    for (int k = 0; k < K; k++) assert_strux_ok(strux_task_label_at(f->t, &f->pot, k, &ban[k]));
    q.ban = ban;
    q.n_ban = K;
    strux_answer a;
    assert_strux_ok(strux_task_oracle(f->t, &f->pot, &f->truth, &q, &f->y, &a));
    assert_false(a.found);
    for (int b = 0; b < MAX_BAN; b++) strux_label_free(&ban[b]);
}

static int admitted(const strux_query *q, double m, double g)
{
    double h = m + q->h_shift;
    int lower = q->lower_open ? q->beta * h < g : q->beta * h <= g;
    int upper = isinf(q->alpha) || (q->upper_open ? g < q->alpha * h : g <= q->alpha * h);
    return lower && upper;
}

/* Reference for the wedge oracle: the best m for every error count e over all labels (the
 * frontier), filtered by the wedge, best a·m + b·e. */
static double frontier_reference(const strux_task *t, const strux_pot *pot,
                                 const strux_label *truth, const strux_query *q)
{
    double best_m[MAX_T + 1];
    for (int e = 0; e <= MAX_T; e++) best_m[e] = -INFINITY;
    strux_label y;
    assert_strux_ok(strux_label_alloc(&y, MAX_T, 0));
    int64_t n = strux_task_label_count(t, pot);
    for (int64_t k = 0; k < n; k++) {
        assert_strux_ok(strux_task_label_at(t, pot, k, &y));
        double m, g;
        brute_point(t, pot, truth, &y, &m, &g);
        if (m > best_m[(int)g]) best_m[(int)g] = m;
    }
    strux_label_free(&y);
    double want = -INFINITY;
    for (int e = 0; e <= MAX_T; e++)
        if (best_m[e] > -INFINITY && admitted(q, best_m[e], e) &&
            q->a * best_m[e] + q->b * e > want)
            want = q->a * best_m[e] + q->b * e;
    return want;
}

static void test_wedge_frontier(void **state)
{
    fixture_state *f = *state;
    strux_rng r;
    strux_rng_init(&r, 8, 0, 0);
    int n_wedge = 0, n_empty = 0, n_exact = 0;
    for (int i = 0; i < N; i++)
        for (int round = 0; round < 30; round++) {
            load_example(f, i, round, &r);
            strux_query q = random_query(&r, 0, round % 2);
            q.wedge = 1;
            if (q.alpha == 0 && q.beta == 0) q.alpha = 1;
            if (round % 5 == 0) q.beta = 0;
            strux_answer a;
            assert_strux_ok(strux_task_oracle(f->t, &f->pot, &f->truth, &q, &f->y, &a));
            double want = frontier_reference(f->t, &f->pot, &f->truth, &q);
            expect_oracle_answer(f->t, &f->pot, &f->truth, &q, want, &f->y, &a, 1e-12);
            if (q.beta == 0) { /* no upper bound on h: the frontier filter is the exact O_c */
                double all = brute_oracle(f->t, &f->pot, &f->truth, &q, NULL);
                if (isinf(want)) assert_true(isinf(all));
                else assert_close(all, want, 1e-12);
                n_exact++;
            }
            n_wedge++;
            n_empty += !a.found;
        }
    assert_true(n_empty > 0 && n_empty < n_wedge / 2 && n_exact > 50);
}

static void test_unsupported_combinations(void **state)
{
    fixture_state *f = *state;
    assert_strux_ok(strux_task_potentials(f->t, f->m, f->ds, 0, &f->pot));
    assert_strux_ok(strux_task_truth(f->t, f->ds, 0, &f->truth));
    strux_query q = strux_query_dir(1, 1);
    q.wedge = 1;
    q.alpha = INFINITY;
    q.c = 0.5;
    strux_answer a;
    assert_strux_fails(strux_task_oracle(f->t, &f->pot, &f->truth, &q, &f->y, &a),
                       STRUX_ERR_UNSUPPORTED,
                       "task 'chain' does not support a wedge combined with the set-size term c");
    q.c = 0;
    q.ban = &f->truth;
    q.n_ban = 1;
    assert_strux_fails(strux_task_oracle(f->t, &f->pot, &f->truth, &q, &f->y, &a),
                       STRUX_ERR_UNSUPPORTED, "task 'chain' does not support a wedge combined "
                       "with a ban list");
}

/* Every kind of the weight store (test_model_kinds): w·φ = f and Δφ must hold for each. */
static void test_features_and_delta(void **state)
{
    fixture_state *f = *state;
    double *w = test_model_flat(f->m);
    for (size_t kd = 0; kd < TEST_MODEL_KINDS; kd++) {
        /* the fixture's weights in this kind (rounded to float by a float store) */
        strux_model *m, *G1, *G2;
        assert_strux_ok(strux_model_create(strux_model_n_rows(f->m), strux_model_dim(f->m),
                                           strux_model_n_extra(f->m), test_model_kinds[kd], &m));
        test_model_set_flat(m, w);
        assert_strux_ok(strux_model_create_like(m, &G1));
        assert_strux_ok(strux_model_create_like(m, &G2));
        double tol = test_model_kinds[kd].precision == STRUX_PRECISION_FLOAT ? 1e-5 : 1e-12;
        int64_t n_w = strux_model_n_w(m);
        strux_rng r;
        strux_rng_init(&r, 2, 0, 0);
        for (int i = 0; i < N; i++) {
            assert_strux_ok(strux_task_potentials(f->t, m, f->ds, i, &f->pot));
            assert_strux_ok(strux_task_truth(f->t, f->ds, i, &f->truth));
            int64_t count = strux_task_label_count(f->t, &f->pot);
            for (int rep = 0; rep < 5; rep++) {
                assert_strux_ok(strux_task_label_at(
                    f->t, &f->pot, (int64_t)strux_rng_below(&r, (uint64_t)count), &f->y));
                strux_model_zero(G1);
                assert_strux_ok(strux_task_add_feature(f->t, f->ds, i, &f->y, 1.0, G1));
                assert_close(strux_model_dot(G1, m), strux_task_score(f->t, &f->pot, &f->y), tol);
                assert_strux_ok(strux_task_add_feature(f->t, f->ds, i, &f->truth, -1.0, G1));
                strux_model_zero(G2);
                assert_strux_ok(strux_task_add_delta(f->t, f->ds, i, &f->y, &f->truth, 1.0, G2));
                double *g1 = test_model_flat(G1), *g2 = test_model_flat(G2);
                for (int64_t j = 0; j < n_w; j++) assert_close(g1[j], g2[j], tol);
                free(g1);
                free(g2);
            }
            /* prediction maximises f; |y| counts the tokens not tagged O (id 2) */
            assert_strux_ok(strux_task_predict(f->t, &f->pot, &f->y));
            strux_query q = strux_query_dir(1, 0);
            assert_close(strux_task_score(f->t, &f->pot, &f->y) -
                             strux_task_score(f->t, &f->pot, &f->truth),
                         brute_oracle(f->t, &f->pot, &f->truth, &q, NULL), 1e-12);
            double size = 0;
            for (int p = 0; p < f->y.n; p++) size += f->y.y[p] != 2;
            assert_close(strux_task_size(f->t, &f->y), size, 0);
        }
        strux_model_destroy(&G1);
        strux_model_destroy(&G2);
        strux_model_destroy(&m);
    }
    free(w);
}

static void set_tags(strux_label *y, int n, const int *tags)
{
    y->n = n;
    for (int p = 0; p < n; p++) y->y[p] = tags[p];
}

static void test_chunk_metrics_by_hand(void **state)
{
    (void)state;
    enum { BNP, INP, O, BVP, IVP };
    strux_task_options to = chain_options(fixture("chain5.tags"), "");
    strux_task *t;
    assert_strux_ok(strux_task_create(&to, &t));
    strux_dataset *ds = synth_sequences("five", 3, 5, 2, 5, 1);
    assert_strux_ok(strux_task_check(t, ds));
    strux_label p, r;
    assert_strux_ok(strux_label_alloc(&p, 5, 0));
    assert_strux_ok(strux_label_alloc(&r, 5, 0));
    double acc[16] = {0};
    assert_true(strux_task_eval_size(t) <= 16);
    /* truth NP[0,1] VP[3,4], pred NP[0] VP[3,4]: 2 in truth, 2 found, 1 correct */
    set_tags(&r, 5, (int[]){BNP, INP, O, BVP, IVP});
    set_tags(&p, 5, (int[]){BNP, O, O, BVP, IVP});
    assert_strux_ok(strux_task_eval_add(t, &p, &r, acc));
    /* I-NP after the boundary opens a chunk: truth NP[0,1] NP[2], pred NP[0,2]: 2, 1, 0 */
    set_tags(&r, 3, (int[]){INP, INP, BNP});
    set_tags(&p, 3, (int[]){BNP, INP, INP});
    assert_strux_ok(strux_task_eval_add(t, &p, &r, acc));
    /* a type change opens a chunk: truth VP[1] NP[2] = pred VP[1] NP[2]: 2, 2, 2 */
    set_tags(&r, 3, (int[]){O, IVP, INP});
    set_tags(&p, 3, (int[]){O, BVP, BNP});
    assert_strux_ok(strux_task_eval_add(t, &p, &r, acc));
    char buf[512];
    {
        strux_scores sc;
        assert_strux_ok(strux_task_eval_report(t, acc, &sc));
        strux_scores_format(&sc, buf, sizeof buf);
    }
    /* tokens 11, correct 4 + 1 + 1 = 6; exact sequences 0; P = 3/5, R = 3/6, F1 = 6/11 */
    assert_string_equal(buf, "\"token_accuracy\": 0.545455, \"hamming_loss\": 0.454545, "
                             "\"sequence_accuracy\": 0.000000, \"chunk_precision\": 0.600000, "
                             "\"chunk_recall\": 0.500000, \"chunk_f1\": 0.545455, \"chunks\": 6, "
                             "\"n_tokens\": 11, \"n\": 3");
    assert_strux_ok(strux_task_format_label(t, &p, buf, sizeof buf));
    assert_string_equal(buf, "O B-VP B-NP");
    assert_close(strux_task_size(t, &p), 3, 0); /* task.outside empty: every token counts */
    strux_label_free(&p);
    strux_label_free(&r);
    strux_dataset_destroy(&ds);
    strux_task_destroy(&t);
}

static void test_checks_and_names(void **state)
{
    (void)state;
    strux_task *t;
    strux_dataset *rows = synth_rows("rows.svm", 4, 3, 4, 1, 1);
    strux_dataset *seq = synth_sequences("seq.svmhmm", 4, 3, 3, 4, 1);
    strux_task_options to = chain_options("", "");
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_fails(strux_task_check(t, rows), STRUX_ERR_INPUT,
                       "rows.svm: one row per example; the chain task needs sequences");
    assert_strux_ok(strux_task_check(t, seq));
    strux_label y;
    assert_strux_ok(strux_label_alloc(&y, 3, 0));
    set_tags(&y, 3, (int[]){3, 0, 1});
    char buf[512];
    assert_strux_ok(strux_task_format_label(t, &y, buf, sizeof buf));
    assert_string_equal(buf, "3 0 1"); /* ids without task.tags */
    double acc[16] = {0};
    assert_strux_ok(strux_task_eval_add(t, &y, &y, acc));
    {
        strux_scores sc;
        assert_strux_ok(strux_task_eval_report(t, acc, &sc));
        strux_scores_format(&sc, buf, sizeof buf);
    }
    assert_null(strstr(buf, "chunk"));
    strux_task_destroy(&t);

    to = chain_options(fixture("chain2.tags"), "");
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_fails(strux_task_check(t, seq), STRUX_ERR_INPUT,
                       "chain2.tags: tag 2 has no name (the data has 4 tags");
    strux_task_destroy(&t);
    size_t bytes = strux_alloc_bytes();
    to = chain_options(fixture("chain4.tags"), "X");
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_fails(strux_task_check(t, seq), STRUX_ERR_CONFIG,
                       "task.outside = 'X' is not a tag of");
    strux_task_destroy(&t);
    assert_int_equal(strux_alloc_bytes(), bytes); /* the names read before the failure are freed */
    to = chain_options("", "7");
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_fails(strux_task_check(t, seq), STRUX_ERR_CONFIG,
                       "task.outside = 7 is not a tag id: the data has 4 tags");
    strux_task_destroy(&t);
    to = chain_options(fixture("chain_letters.tags"), "b"); /* names that are not chunk tags */
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_ok(strux_task_check(t, seq));
    memset(acc, 0, sizeof acc);
    assert_strux_ok(strux_task_eval_add(t, &y, &y, acc));
    {
        strux_scores sc;
        assert_strux_ok(strux_task_eval_report(t, acc, &sc));
        strux_scores_format(&sc, buf, sizeof buf);
    }
    assert_null(strstr(buf, "chunk"));
    assert_strux_ok(strux_task_format_label(t, &y, buf, sizeof buf));
    assert_string_equal(buf, "d a b");
    assert_close(strux_task_size(t, &y), 2, 0); /* outside = b */
    strux_task_destroy(&t);
    to = chain_options("", "3"); /* an id works without names */
    assert_strux_ok(strux_task_create(&to, &t));
    assert_strux_ok(strux_task_check(t, seq));
    set_tags(&y, 3, (int[]){3, 0, 3});
    assert_close(strux_task_size(t, &y), 1, 0);
    strux_task_destroy(&t);
    strux_label_free(&y);
    strux_dataset_destroy(&rows);
    strux_dataset_destroy(&seq);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_viterbi_matches_enumeration),
        cmocka_unit_test(test_kbest_ban_list),
        cmocka_unit_test(test_wedge_frontier),
        cmocka_unit_test(test_unsupported_combinations),
        cmocka_unit_test(test_features_and_delta),
        cmocka_unit_test(test_chunk_metrics_by_hand),
        cmocka_unit_test(test_checks_and_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
