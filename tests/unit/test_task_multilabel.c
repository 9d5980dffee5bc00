/* tests/unit/test_task_multilabel.c - the multilabel task against brute-force enumeration:
 * direction oracle for random potentials and directions, loss and score, Δφ against two feature
 * maps, metrics against hand counts, label text. Also the registry's error for unknown names. */
#include "test_common.h"

#include "brute.h"
#include "strux/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture_state {
    strux_dataset *ds;
    strux_task *t;
} fixture_state;

static int setup(void **state)
{
    fixture_state *f = calloc(1, sizeof *f);
    strux_read_options o = {.rank = 0, .n_ranks = 1, .bias = 1};
    if (strux_dataset_read_libsvm(shared_data("yeast/yeast_train.svm.gz"), &o, &f->ds)) return -1;
    strux_task_options to = {.type = "multilabel"};
    if (strux_task_create(&to, &f->t) || strux_task_check(f->t, f->ds)) return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_state *f = *state;
    strux_task_destroy(&f->t);
    strux_dataset_destroy(&f->ds);
    free(f);
    return 0;
}

static void test_registry_unknown_name(void **state)
{
    (void)state;
    strux_task_options to = {.type = "nosuchtask"};
    strux_task *t = NULL;
    assert_strux_fails(strux_task_create(&to, &t), STRUX_ERR_CONFIG,
                       "task.type = 'nosuchtask' is unknown; valid types: multilabel");
    assert_null(t);
}

static void test_oracle_matches_enumeration(void **state)
{
    fixture_state *f = *state;
    strux_pot pot;
    strux_label truth, y, best;
    assert_strux_ok(strux_task_pot_alloc(f->t, f->ds, &pot));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &truth));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &y));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &best));
    const double dirs[][3] = {{1, 1, 0},    {1, 0, 0},  {1, 0.3, 0},   {1, 7, 0},
                              {1e-9, 1, 0}, {0.5, 2, 0}, {1, 1, -0.4}, {1, 1, 2.5}};
    strux_model *m;
    assert_strux_ok(strux_model_create(14, f->ds->dim, 0, STRUX_MODEL_PLAIN, &m));
    for (int i = 0; i < 40; i++) {
        assert_strux_ok(strux_task_potentials(f->t, m, f->ds, i, &pot));
        assert_int_equal(strux_task_label_count(f->t, &pot), 16384);
        random_potentials(&pot, 14, 1.0 + i % 3, (uint64_t)i);
        assert_strux_ok(strux_task_truth(f->t, f->ds, i, &truth));
        for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
            strux_query q = strux_query_dir(dirs[d][0], dirs[d][1]);
            q.c = dirs[d][2];
            strux_answer a;
            assert_strux_ok(strux_task_oracle(f->t, &pot, &truth, &q, &y, &a));
            double want = brute_oracle(f->t, &pot, &truth, &q, &best);
            assert_true(a.found);
            assert_close(q.a * a.m + q.b * a.g + q.c * a.size, want, 1e-12);
            assert_close(a.size, strux_task_size(f->t, &y), 0);
            double m2, g2;
            brute_point(f->t, &pot, &truth, &y, &m2, &g2);
            assert_close(a.m, m2, 1e-12); /* the reported pair is the label's */
            assert_close(a.g, g2, 0);
        }
    }
    assert_int_equal(strux_task_oracle_calls(f->t), 40 * 8);
    strux_model_destroy(&m);
    strux_pot_free(&pot);
    strux_label_free(&truth);
    strux_label_free(&y);
    strux_label_free(&best);
}

/* Every kind of the weight store (test_model_kinds): w·φ = f and Δφ must hold for each. */
static void test_potentials_and_delta(void **state)
{
    fixture_state *f = *state;
    strux_pot pot;
    strux_label truth, y;
    assert_strux_ok(strux_task_pot_alloc(f->t, f->ds, &pot));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &truth));
    assert_strux_ok(strux_task_label_alloc(f->t, f->ds, &y));
    for (size_t kd = 0; kd < TEST_MODEL_KINDS; kd++) {
        strux_model *m, *G1, *G2;
        assert_strux_ok(strux_model_create(14, f->ds->dim, 0, test_model_kinds[kd], &m));
        int64_t n_w = strux_model_n_w(m);
        strux_rng r;
        strux_rng_init(&r, 5, 0, 0);
        double *w = test_model_flat(m);
        for (int64_t k = 0; k < n_w; k++) w[k] = strux_rng_normal(&r);
        test_model_set_flat(m, w);
        test_model_get_flat(m, w); /* the model's own values (rounded to float by a float store) */
        double ftol = test_model_kinds[kd].precision == STRUX_PRECISION_FLOAT ? 1e-5 : 1e-10;
        double dtol = test_model_kinds[kd].precision == STRUX_PRECISION_FLOAT ? 1e-5 : 1e-12;
        assert_strux_ok(strux_model_create_like(m, &G1));
        assert_strux_ok(strux_model_create_like(m, &G2));
        for (int i = 0; i < 20; i++) {
            assert_strux_ok(strux_task_potentials(f->t, m, f->ds, i, &pot));
            assert_strux_ok(strux_task_truth(f->t, f->ds, i, &truth));
            assert_strux_ok(strux_task_label_at(f->t, &pot, 12345 + 97 * i, &y));
            /* w·φ(x, y) from an explicit feature map equals the score from the potentials */
            strux_model_zero(G1);
            assert_strux_ok(strux_task_add_feature(f->t, f->ds, i, &y, 1.0, G1));
            double *g1 = test_model_flat(G1);
            double f_y = 0;
            for (int64_t k = 0; k < n_w; k++) f_y += g1[k] * w[k];
            free(g1);
            assert_close(strux_task_score(f->t, &pot, &y), f_y, ftol);
            /* add_delta = φ(y) − φ(y_i) */
            assert_strux_ok(strux_task_add_feature(f->t, f->ds, i, &truth, -1.0, G1));
            strux_model_zero(G2);
            assert_strux_ok(strux_task_add_delta(f->t, f->ds, i, &y, &truth, 1.0, G2));
            g1 = test_model_flat(G1);
            double *g2 = test_model_flat(G2);
            for (int64_t k = 0; k < n_w; k++) assert_close(g1[k], g2[k], dtol);
            free(g1);
            free(g2);
        }
        free(w);
        strux_model_destroy(&G1);
        strux_model_destroy(&G2);
        strux_model_destroy(&m);
    }
    strux_pot_free(&pot);
    strux_label_free(&truth);
    strux_label_free(&y);
}

static void set_label(strux_label *y, int n, const int *bits)
{
    y->n = n;
    for (int k = 0; k < n; k++) y->y[k] = bits[k];
}

static void test_metrics_by_hand(void **state)
{
    (void)state;
    strux_task_options to = {.type = "multilabel"};
    strux_task *t;
    assert_strux_ok(strux_task_create(&to, &t));
    strux_dataset ds = {.n_labels = 3, .path = "x"};
    assert_strux_ok(strux_task_check(t, &ds));
    strux_label p, r;
    assert_strux_ok(strux_label_alloc(&p, 3, 0));
    assert_strux_ok(strux_label_alloc(&r, 3, 0));
    double acc[4 + 9] = {0};
    /* ex 1: pred {0,1} truth {0,2}: tp 1 fp 1 fn 1; ex 2: pred {} truth {}: exact */
    set_label(&p, 3, (int[]){1, 1, 0});
    set_label(&r, 3, (int[]){1, 0, 1});
    assert_strux_ok(strux_task_eval_add(t, &p, &r, acc));
    set_label(&p, 3, (int[]){0, 0, 0});
    set_label(&r, 3, (int[]){0, 0, 0});
    assert_strux_ok(strux_task_eval_add(t, &p, &r, acc));
    assert_int_equal(strux_task_eval_size(t), 13);
    char buf[512];
    {
        strux_scores sc;
        assert_strux_ok(strux_task_eval_report(t, acc, &sc));
        strux_scores_format(&sc, buf, sizeof buf);
    }
    /* hamming 2/6; subset 1/2; micro 2/(2+1+1) = .5; macro (1 + 0 + 0)/3; example (0.5 + 1)/2 */
    assert_string_equal(buf, "\"hamming_loss\": 0.333333, \"subset_accuracy\": 0.500000, "
                             "\"micro_f1\": 0.500000, \"macro_f1\": 0.333333, "
                             "\"example_f1\": 0.750000, \"n\": 2");
    assert_close(strux_task_loss(t, &p, &r), 0, 0);
    set_label(&p, 3, (int[]){1, 0, 1});
    assert_strux_ok(strux_task_format_label(t, &p, buf, sizeof buf));
    assert_string_equal(buf, "0,2");
    set_label(&p, 3, (int[]){0, 0, 0});
    assert_strux_ok(strux_task_format_label(t, &p, buf, sizeof buf));
    assert_string_equal(buf, "");
    strux_label_free(&p);
    strux_label_free(&r);
    strux_task_destroy(&t);
}


/* A multilabel task over m labels with random scores and a random truth (no data file). */
typedef struct small_ml {
    strux_task *t;
    strux_pot pot;
    strux_label truth, y, best;
} small_ml;

static void small_ml_init(small_ml *s, int m, uint64_t seed)
{
    strux_task_options to = {.type = "multilabel"};
    assert_strux_ok(strux_task_create(&to, &s->t));
    strux_dataset ds = {.n_labels = m, .path = "x"};
    assert_strux_ok(strux_task_check(s->t, &ds));
    assert_strux_ok(strux_task_pot_alloc(s->t, &ds, &s->pot));
    assert_strux_ok(strux_label_alloc(&s->truth, m, 0));
    assert_strux_ok(strux_label_alloc(&s->y, m, 0));
    assert_strux_ok(strux_label_alloc(&s->best, m, 0));
    s->pot.n_parts = m;
    s->pot.n_states = 2;
    random_potentials(&s->pot, m, 1.5, seed);
    strux_rng r;
    strux_rng_init(&r, seed, 1, 0);
    s->truth.n = m;
    for (int k = 0; k < m; k++) s->truth.y[k] = strux_rng_uniform(&r) < 0.3;
}

static void small_ml_free(small_ml *s)
{
    strux_task_destroy(&s->t);
    strux_pot_free(&s->pot);
    strux_label_free(&s->truth);
    strux_label_free(&s->y);
    strux_label_free(&s->best);
}

/* h_e: the largest margin among labels with exactly e errors, by enumeration. */
static void frontier_by_enumeration(small_ml *s, double *h_e)
{
    int m = s->truth.n;
    for (int e = 0; e <= m; e++) h_e[e] = -INFINITY;
    for (int64_t k = 0; k < strux_task_label_count(s->t, &s->pot); k++) {
        assert_strux_ok(strux_task_label_at(s->t, &s->pot, k, &s->y));
        double mm, g;
        brute_point(s->t, &s->pot, &s->truth, &s->y, &mm, &g);
        h_e[(int)g] = fmax(h_e[(int)g], mm);
    }
}

/* The wedge side rule of the oracle (task.h, §2.2), with its tolerance τ. */
static int wedge_admits_ref(const strux_query *q, double h, double g)
{
    double tb = 1e-9 * fmax(1.0, fabs(q->beta * h));
    if (q->lower_open ? !(g >= q->beta * h + tb) : !(g >= q->beta * h - tb)) return 0;
    if (isinf(q->alpha)) return !q->upper_open || h >= 1e-9;
    double ta = 1e-9 * fmax(1.0, fabs(q->alpha * h));
    return q->upper_open ? g <= q->alpha * h - ta : g <= q->alpha * h + ta;
}

/* §2.4(a): the constrained oracle is exact over the loss-indexed frontier (the best-margin label
 * for every error count), whose points come from enumerating all 2^m labels here. */
static void test_constrained_oracle_frontier(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 77, 0, 0);
    int64_t calls = 0;
    for (int m = 1; m <= 12; m++)
        for (int trial = 0; trial < 12; trial++) {
            small_ml s;
            small_ml_init(&s, m, (uint64_t)(100 * m + trial));
            double h_e[13];
            frontier_by_enumeration(&s, h_e);
            for (int qk = 0; qk < 25; qk++) {
                strux_query q = strux_query_dir(1, 3 * strux_rng_uniform(&r));
                q.wedge = 1;
                q.h_shift = 1;
                q.beta = qk % 5 == 0 ? 0 : 4 * strux_rng_uniform(&r);
                q.alpha = qk % 4 == 0 ? INFINITY : q.beta + 6 * strux_rng_uniform(&r);
                q.lower_open = (int)strux_rng_below(&r, 2);
                q.upper_open = (int)strux_rng_below(&r, 2);
                if (qk == 7 && m > 2) { /* a side through a frontier point: strictness decides */
                    q.beta = 2 / (h_e[2] + 1);
                    q.alpha = INFINITY;
                }
                double want = -INFINITY;
                for (int e = 0; e <= m; e++)
                    if (wedge_admits_ref(&q, h_e[e] + 1, e))
                        want = fmax(want, h_e[e] + q.b * e);
                strux_answer a;
                assert_strux_ok(strux_task_oracle(s.t, &s.pot, &s.truth, &q, &s.y, &a));
                calls++;
                if (want == -INFINITY) {
                    assert_false(a.found);
                    continue;
                }
                assert_true(a.found);
                assert_close(a.m + q.b * a.g, want, 1e-12);
                assert_close(a.m, h_e[(int)a.g], 1e-12); /* a frontier label */
                assert_true(wedge_admits_ref(&q, a.m + 1, a.g));
                double mm, g;
                brute_point(s.t, &s.pot, &s.truth, &s.y, &mm, &g);
                assert_close(mm, a.m, 1e-12);
                assert_close(g, a.g, 0);
                double size = 0;
                for (int k = 0; k < m; k++)
                    size += s.y.y[k];
                assert_close(a.size, size, 0);
            }
            /* the unconstrained wedge (0, ∞) agrees with the plain oracle over all labels */
            strux_query q = strux_query_dir(1, 0.7);
            q.wedge = 1;
            q.alpha = INFINITY;
            strux_answer a;
            assert_strux_ok(strux_task_oracle(s.t, &s.pot, &s.truth, &q, &s.y, &a));
            assert_close(a.m + 0.7 * a.g, brute_oracle(s.t, &s.pot, &s.truth, &q, NULL), 1e-12);
            small_ml_free(&s);
        }
    assert_true(calls > 3000);
}

/* Appendix A item 6: exact slack rescaling on the frontier. Enumeration: max_e e·(1 + h_e) equals
 * the maximum of (1 + m)·L over all 2^m labels; search: angular search on the frontier oracle
 * (eps = 0) reaches it. */
static double sr_psi(double m, double g)
{
    return (1 + m) * g;
}

static void test_frontier_exact_slack_rescaling(void **state)
{
    (void)state;
    for (int m = 1; m <= 12; m++)
        for (int trial = 0; trial < 10; trial++) {
            small_ml s;
            small_ml_init(&s, m, (uint64_t)(7 * m + 1000 * trial));
            double h_e[13], best = 0;
            frontier_by_enumeration(&s, h_e);
            for (int e = 0; e <= m; e++) best = fmax(best, e * (1 + h_e[e]));
            double want = brute_max_psi(s.t, &s.pot, &s.truth, sr_psi, NULL);
            assert_close(best, want, 1e-12);
            strux_dataset ds = {.n_labels = m, .n_local = 1, .path = "x"};
            strux_search_options o;
            assert_strux_ok(strux_search_options_default(&o));
            strcpy(o.type, "slack");
            o.eps = 0;
            strux_search *search;
            assert_strux_ok(strux_search_create(&o, s.t, &ds, &search));
            strux_search_result r;
            s.pot.i = 0;
            assert_strux_ok(strux_search_run(search, s.t, &s.pot, &s.truth, &r));
            assert_close(r.psi, want, 1e-12);
            assert_close(sr_psi(r.m, r.g), want, 1e-12);
            strux_search_destroy(&search);
            small_ml_free(&s);
        }
}

/* §2.3: the k-best ban-list oracle returns the best label outside the ban list; the ban list is
 * built from the best labels themselves so that the enumeration must go deep. */
static void test_ban_oracle_kbest(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 5, 0, 0);
    for (int m = 1; m <= 10; m++)
        for (int trial = 0; trial < 6; trial++) {
            small_ml s;
            small_ml_init(&s, m, (uint64_t)(31 * m + trial));
            int64_t n = strux_task_label_count(s.t, &s.pot);
            strux_label ban[40];
            for (int b = 0; b < 40; b++) assert_strux_ok(strux_label_alloc(&ban[b], m, 0));
            strux_query q = strux_query_dir(1, 2 * strux_rng_uniform(&r));
            q.c = trial % 3 == 0 ? strux_rng_uniform(&r) - 0.5 : 0;
            q.ban = ban;
            for (int nb = 0; nb < 40 && nb <= n; nb++) {
                q.n_ban = nb;
                strux_answer a;
                assert_strux_ok(strux_task_oracle(s.t, &s.pot, &s.truth, &q, &s.y, &a));
                double want = brute_oracle(s.t, &s.pot, &s.truth, &q, NULL);
                if (nb == n) { /* everything banned */
                    assert_false(a.found);
                    break;
                }
                assert_true(a.found);
                assert_close(q.a * a.m + q.b * a.g + q.c * a.size, want, 1e-12);
                for (int b = 0; b < nb; b++) assert_false(strux_label_equal(&ban[b], &s.y));
                if (nb < 40) assert_strux_ok(strux_label_copy(&ban[nb], &s.y)); /* ban it next */
            }
            for (int b = 0; b < 40; b++) strux_label_free(&ban[b]);
            small_ml_free(&s);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_unknown_name),
        cmocka_unit_test(test_oracle_matches_enumeration),
        cmocka_unit_test(test_potentials_and_delta),
        cmocka_unit_test(test_metrics_by_hand),
        cmocka_unit_test(test_constrained_oracle_frontier),
        cmocka_unit_test(test_frontier_exact_slack_rescaling),
        cmocka_unit_test(test_ban_oracle_kbest),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
