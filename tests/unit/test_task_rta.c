/* tests/unit/test_task_rta.c - the rta task (src/tasks/rta.c) against brute-force enumeration:
 * model shape 4|E_u| and F(y) = Σ_e c_e·s_e from the rows; the loss equals the degree-weighted
 * Hamming form of §3.1 and max_loss is the loss of the complement; every certified direction-oracle
 * answer (with and without the c term) equals the enumerated maximum on L = 8 labels where the
 * lists (n·K = 12) cannot hold the 256 labels; predictions maximise F when certified; the
 * certificate counter counts; complete lists (K = 2^L) always certify; the same options draw the
 * same trees and another task.tree_seed draws others; wedge and ban queries, one label, a label
 * count that changes, and out-of-range options are refused; eval reports cert_rate; check()
 * survives every allocation failure without leaking. */
#include "test_common.h"

#include "brute.h"
#include "synth.h"
#include "tasks/rta_impl.h"
#include "tasks/task_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static strux_task *create(int64_t trees, int64_t kbest, int64_t seed, const char *sampler)
{
    strux_task_options to;
    assert_strux_ok(strux_opt_defaults(strux_task_opt_specs, &to));
    snprintf(to.type, sizeof to.type, "rta");
    to.trees = trees;
    to.kbest = kbest;
    to.tree_seed = seed;
    snprintf(to.tree_sampler, sizeof to.tree_sampler, "%s", sampler);
    strux_task *t;
    assert_strux_ok(strux_task_create(&to, &t));
    return t;
}

/* A model with normal weights, potentials, truth and label buffers for ds. */
typedef struct bench {
    strux_model *m;
    strux_pot pot;
    strux_label truth, y, best;
} bench;

static void bench_init_kind(bench *b, const strux_task *t, const strux_dataset *ds, uint64_t seed,
                            strux_model_kind kind)
{
    int32_t rows;
    int64_t extra;
    assert_strux_ok(strux_task_model_shape(t, ds, &rows, &extra));
    assert_strux_ok(strux_model_create(rows, ds->dim, extra, kind, &b->m));
    strux_rng r;
    strux_rng_init(&r, seed, 0, 0);
    double *w = test_model_flat(b->m);
    for (int64_t k = 0; k < strux_model_n_w(b->m); k++)
        w[k] = strux_rng_normal(&r);
    test_model_set_flat(b->m, w);
    free(w);
    assert_strux_ok(strux_task_pot_alloc(t, ds, &b->pot));
    assert_strux_ok(strux_task_label_alloc(t, ds, &b->truth));
    assert_strux_ok(strux_task_label_alloc(t, ds, &b->y));
    assert_strux_ok(strux_task_label_alloc(t, ds, &b->best));
}

static void bench_init(bench *b, const strux_task *t, const strux_dataset *ds, uint64_t seed)
{
    bench_init_kind(b, t, ds, seed, STRUX_MODEL_PLAIN);
}

static void bench_free(bench *b)
{
    strux_model_destroy(&b->m);
    strux_pot_free(&b->pot);
    strux_label_free(&b->truth);
    strux_label_free(&b->y);
    strux_label_free(&b->best);
}

/* Model rows 4|E_u| of the trees strux_rta_trees_sample draws from the options; potentials are the
 * rows' scores (under every model kind, against the model's own possibly float-rounded rows);
 * f(y) = Σ_e c_e·s_e(y_e); loss = (1/n) Σ_k D_k·[y_k ≠ y_ik]; max_loss = 2(L − 1) is the loss of
 * the complement of the truth. */
static void test_shape_score_and_loss(void **state)
{
    (void)state;
    enum { L = 7, N_TREES = 4 };
    strux_dataset *ds = synth_rows("rta_rows", 5, 6, L, 0, 3);
    strux_task *t = create(N_TREES, 3, 9, "uniform");
    assert_strux_ok(strux_task_check(t, ds));
    strux_rta_trees *tr;
    assert_strux_ok(strux_rta_trees_sample(L, N_TREES, STRUX_RTA_SAMPLER_UNIFORM, 9, &tr));
    int32_t rows;
    int64_t extra;
    assert_strux_ok(strux_task_model_shape(t, ds, &rows, &extra));
    assert_int_equal(rows, 4 * tr->n_edges);
    assert_int_equal(extra, 0);
    double deg[L] = {0};
    for (int32_t e = 0; e < tr->n_edges; e++) {
        deg[tr->ends[2 * e]] += tr->mult[e];
        deg[tr->ends[2 * e + 1]] += tr->mult[e];
    }
    for (size_t kd = 0; kd < TEST_MODEL_KINDS; kd++) {
        bench b;
        bench_init_kind(&b, t, ds, 5, test_model_kinds[kd]);
        double tol = test_model_kinds[kd].precision == STRUX_PRECISION_FLOAT ? 1e-5 : 1e-15;
        double *row = malloc((size_t)ds->dim * sizeof *row);
        for (int64_t i = 0; i < ds->n_local; i++) {
            assert_strux_ok(strux_task_potentials(t, b.m, ds, i, &b.pot));
            assert_strux_ok(strux_task_truth(t, ds, i, &b.truth));
            for (int32_t k = 0; k < rows; k++) {
                strux_model_get_row(b.m, k, row);
                assert_close(b.pot.s[k], strux_spdot(&ds->x, i, row), tol);
            }
            for (int64_t code = 0; code < (1 << L); code += 11) {
                assert_strux_ok(strux_task_label_at(t, &b.pot, code, &b.y));
                double F = 0, loss = 0;
                for (int32_t e = 0; e < tr->n_edges; e++) {
                    int u = 2 * b.y.y[tr->ends[2 * e]] + b.y.y[tr->ends[2 * e + 1]];
                    F += tr->mult[e] * b.pot.s[4 * e + u];
                }
                for (int32_t k = 0; k < L; k++)
                    loss += deg[k] * (b.y.y[k] != b.truth.y[k]);
                assert_close(strux_task_score(t, &b.pot, &b.y), F, 1e-12);
                assert_close(strux_task_loss(t, &b.y, &b.truth), loss / N_TREES, 1e-15);
            }
            assert_strux_ok(strux_label_copy(&b.y, &b.truth));
            for (int32_t k = 0; k < L; k++)
                b.y.y[k] = !b.y.y[k];
            assert_close(strux_task_loss(t, &b.y, &b.truth), 2.0 * (L - 1), 1e-15);
            assert_close(strux_task_max_loss(t, &b.truth), 2.0 * (L - 1), 0);
        }
        free(row);
        bench_free(&b);
    }
    strux_rta_trees_destroy(&tr);
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
}

/* L = 8, n = 3, K = 4: the lists hold at most 12 of the 256 labels, so no enumeration fallback.
 * Every certified answer equals the enumerated maximum of a·m + b·g + c·|y|; every answer is its
 * own label's (m, g, |y|); the counter counts both; the oracle allocates nothing. Prediction
 * likewise maximises F when certified. */
static void test_certified_answers_are_exact(void **state)
{
    (void)state;
    enum { L = 8, N_EX = 12 };
    strux_dataset *ds = synth_rows("rta_rows8", N_EX, 5, L, 0, 21);
    strux_task *t = create(3, 4, 2, "uniform");
    assert_strux_ok(strux_task_check(t, ds));
    bench b;
    bench_init(&b, t, ds, 13);
    const double dirs[][3] = {{1, 0, 0}, {1, 1, 0},    {0.5, 3, 0},
                              {0, 1, 0}, {1, 1, -0.7}, {1, 2, 1.5}};
    int64_t cert0, calls0, n_cert = 0, n_calls = 0;
    strux_task_rta_certified(t, &cert0, &calls0);
    assert_int_equal(cert0, 0);
    assert_int_equal(calls0, 0);
    for (int64_t i = 0; i < N_EX; i++) {
        assert_strux_ok(strux_task_potentials(t, b.m, ds, i, &b.pot));
        assert_strux_ok(strux_task_truth(t, ds, i, &b.truth));
        for (int d = 0; d < 6; d++) {
            strux_query q = strux_query_dir(dirs[d][0], dirs[d][1]);
            q.c = dirs[d][2];
            strux_answer a;
            int64_t c_before, k_before;
            strux_task_rta_certified(t, &c_before, &k_before);
            int64_t allocs = strux_alloc_calls();
            assert_strux_ok(strux_task_oracle(t, &b.pot, &b.truth, &q, &b.y, &a));
            assert_int_equal(strux_alloc_calls(), allocs); /* STYLE.md §6: no allocation */
            int64_t c_after, k_after;
            strux_task_rta_certified(t, &c_after, &k_after);
            assert_int_equal(k_after, k_before + 1);
            double want = brute_oracle(t, &b.pot, &b.truth, &q, NULL);
            double got = q.a * a.m + q.b * a.g + q.c * a.size;
            if (c_after > c_before) {
                expect_oracle_answer(t, &b.pot, &b.truth, &q, want, &b.y, &a, 1e-9);
                n_cert++;
            } else {
                assert_true(got <= want + 1e-9);
                double m, g;
                brute_point(t, &b.pot, &b.truth, &b.y, &m, &g);
                assert_close(a.m, m, 1e-9);
                assert_close(a.g, g, 1e-12);
            }
            n_calls++;
        }
        assert_strux_ok(strux_task_predict(t, &b.pot, &b.y));
        strux_task_rta_certified(t, &cert0, &calls0);
        n_calls++;
        strux_query q0 = strux_query_dir(1, 0);
        double fbest = brute_oracle(t, &b.pot, &b.truth, &q0, NULL);
        double fy = strux_task_score(t, &b.pot, &b.y) - strux_task_score(t, &b.pot, &b.truth);
        if (cert0 == n_cert + 1)
            assert_close(fy, fbest, 1e-9), n_cert++;
        else
            assert_true(fy <= fbest + 1e-9);
    }
    strux_task_rta_certified(t, &cert0, &calls0);
    assert_int_equal(calls0, n_calls);
    assert_int_equal(cert0, n_cert);
    print_message("# L = 8, n = 3, K = 4: %lld of %lld answers certified\n", (long long)n_cert,
                  (long long)n_calls);
    assert_true(n_cert > 0);
    bench_free(&b);
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
}

/* K = 2^L: complete lists certify every answer, and the answer is the enumerated maximum. */
static void test_complete_lists_certify(void **state)
{
    (void)state;
    enum { L = 5, N_EX = 6 };
    strux_dataset *ds = synth_rows("rta_rows5", N_EX, 4, L, 0, 8);
    strux_task *t = create(6, 1 << L, 4, "recursive");
    assert_strux_ok(strux_task_check(t, ds));
    bench b;
    bench_init(&b, t, ds, 3);
    for (int64_t i = 0; i < N_EX; i++) {
        assert_strux_ok(strux_task_potentials(t, b.m, ds, i, &b.pot));
        assert_strux_ok(strux_task_truth(t, ds, i, &b.truth));
        strux_query q = strux_query_dir(1, 2);
        strux_answer a;
        assert_strux_ok(strux_task_oracle(t, &b.pot, &b.truth, &q, &b.y, &a));
        expect_oracle_answer(t, &b.pot, &b.truth, &q, brute_oracle(t, &b.pot, &b.truth, &q, NULL),
                             &b.y, &a, 1e-9);
    }
    int64_t cert, calls;
    strux_task_rta_certified(t, &cert, &calls);
    assert_int_equal(cert, N_EX);
    assert_int_equal(calls, N_EX);
    bench_free(&b);
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
}

/* The candidates' Gram factors (all = 1): f(y)·f(y′) equals coef(φ(y) − φ(y_i))·coef(φ(y′) −
 * φ(y_i)) of the dense block vectors strux_task_block_add_delta writes, for every pair of
 * candidates on L = 7 labels with repeated edges (n = 6); the truth's factor is 0. */
static void test_candidate_gram_factors(void **state)
{
    (void)state;
    enum { L = 7, N_EX = 5 };
    strux_dataset *ds = synth_rows("rta_rows7", N_EX, 4, L, 0, 21);
    strux_task *t = create(6, 5, 2, "uniform");
    assert_strux_ok(strux_task_check(t, ds));
    bench b;
    bench_init(&b, t, ds, 9);
    strux_candidates c = {0};
    int64_t p = strux_task_block_shape(t, ds, 0).p, pairs = 0;
    double *V = NULL, worst = 0;
    for (int64_t i = 0; i < N_EX; i++) {
        assert_strux_ok(strux_task_potentials(t, b.m, ds, i, &b.pot));
        assert_strux_ok(strux_task_truth(t, ds, i, &b.truth));
        strux_query q = strux_query_dir(1, 1);
        assert_strux_ok(strux_task_candidates(t, &b.pot, &b.truth, &q, 1, 0, &c));
        assert_true(c.n > 1);
        assert_int_equal(c.dim, L + p / 4); /* the labels and the p/4 union edges */
        assert_strux_ok(strux_realloc_array(&V, (size_t)(c.n * p), sizeof *V));
        memset(V, 0, (size_t)(c.n * p) * sizeof *V);
        for (int32_t h = 0; h < c.n; h++)
            assert_strux_ok(
                strux_task_block_add_delta(t, ds, i, &c.y[h], &b.truth, 1.0, V + h * p));
        for (int32_t h = 0; h < c.n; h++)
            for (int32_t k = 0; k < c.n; k++) {
                double dense = strux_dot(p, V + h * p, V + k * p);
                double fact = strux_dot(c.dim, c.f + (int64_t)h * c.dim, c.f + (int64_t)k * c.dim);
                worst = fmax(worst, fabs(dense - fact) / fmax(1, fabs(dense)));
                pairs++;
            }
        for (int32_t h = 0; h < c.n; h++)
            if (strux_label_equal(&c.y[h], &b.truth))
                assert_true(strux_nrm2sq(c.dim, c.f + (int64_t)h * c.dim) == 0);
    }
    print_message("# Gram factors: %lld candidate pairs, largest relative difference %.2e\n",
                  (long long)pairs, worst);
    assert_true(worst <= 1e-12);
    strux_free(&V);
    strux_candidates_free(&c);
    bench_free(&b);
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
}

/* Two tasks with the same options predict alike (same trees); another tree_seed draws other
 * trees. */
static void test_trees_follow_the_seed(void **state)
{
    (void)state;
    enum { L = 9 };
    strux_dataset *ds = synth_rows("rta_rows9", 3, 4, L, 0, 5);
    strux_task *t1 = create(5, 4, 17, "uniform"), *t2 = create(5, 4, 17, "uniform");
    strux_task *t3 = create(5, 4, 18, "uniform");
    assert_strux_ok(strux_task_check(t1, ds));
    assert_strux_ok(strux_task_check(t2, ds));
    assert_strux_ok(strux_task_check(t3, ds));
    strux_rta_trees *a, *c;
    assert_strux_ok(strux_rta_trees_sample(L, 5, STRUX_RTA_SAMPLER_UNIFORM, 17, &a));
    assert_strux_ok(strux_rta_trees_sample(L, 5, STRUX_RTA_SAMPLER_UNIFORM, 18, &c));
    int differ = a->n_edges != c->n_edges;
    for (int32_t e = 0; !differ && e < a->n_edges; e++)
        differ = a->ends[2 * e] != c->ends[2 * e] || a->ends[2 * e + 1] != c->ends[2 * e + 1] ||
                 a->mult[e] != c->mult[e];
    assert_true(differ);
    bench b1, b2;
    bench_init(&b1, t1, ds, 7);
    bench_init(&b2, t2, ds, 7);
    for (int64_t i = 0; i < 3; i++) {
        assert_strux_ok(strux_task_potentials(t1, b1.m, ds, i, &b1.pot));
        assert_strux_ok(strux_task_potentials(t2, b2.m, ds, i, &b2.pot));
        assert_strux_ok(strux_task_predict(t1, &b1.pot, &b1.y));
        assert_strux_ok(strux_task_predict(t2, &b2.pot, &b2.y));
        assert_true(strux_label_equal(&b1.y, &b2.y));
    }
    bench_free(&b1);
    bench_free(&b2);
    strux_rta_trees_destroy(&a);
    strux_rta_trees_destroy(&c);
    strux_task_destroy(&t1);
    strux_task_destroy(&t2);
    strux_task_destroy(&t3);
    strux_dataset_destroy(&ds);
}

/* Wedge and ban queries are refused naming the task; one label, a second dataset with another
 * label count, sequences, and out-of-range options are errors; the registry row has no
 * STRUX_CAP_WEDGE and reads the four keys. */
static void test_refusals(void **state)
{
    (void)state;
    strux_dataset *ds = synth_rows("rta_rows4", 3, 4, 4, 0, 1);
    strux_dataset *one = synth_rows("rta_one", 3, 4, 1, 1, 1);
    strux_dataset *six = synth_rows("rta_six", 3, 4, 6, 0, 1);
    strux_task *t = create(3, 2, 1, "uniform");
    assert_strux_fails(strux_task_check(t, one), STRUX_ERR_INPUT, "rta_one: 1 label(s)");
    assert_strux_ok(strux_task_check(t, ds));
    assert_strux_fails(strux_task_check(t, six), STRUX_ERR_INPUT,
                       "rta_six: 6 labels where the task's trees span 4");
    bench b;
    bench_init(&b, t, ds, 1);
    assert_strux_ok(strux_task_potentials(t, b.m, ds, 0, &b.pot));
    assert_strux_ok(strux_task_truth(t, ds, 0, &b.truth));
    strux_query q = strux_query_dir(1, 1);
    q.wedge = 1;
    q.alpha = 2;
    q.beta = 0.5;
    strux_answer a;
    assert_strux_fails(strux_task_oracle(t, &b.pot, &b.truth, &q, &b.y, &a), STRUX_ERR_UNSUPPORTED,
                       "task 'rta' answers direction queries only");
    q = strux_query_dir(1, 1);
    q.ban = &b.truth;
    q.n_ban = 1;
    assert_strux_fails(strux_task_oracle(t, &b.pot, &b.truth, &q, &b.y, &a), STRUX_ERR_UNSUPPORTED,
                       "task 'rta' answers direction queries only");
    unsigned caps;
    assert_strux_ok(strux_task_type_caps("rta", &caps));
    assert_false(caps & STRUX_CAP_WEDGE);
    strux_task_options to;
    assert_strux_ok(strux_opt_defaults(strux_task_opt_specs, &to));
    assert_int_equal(to.trees, 10);
    assert_int_equal(to.kbest, 4);
    assert_int_equal(to.tree_seed, 1);
    assert_string_equal(to.tree_sampler, "uniform");
    snprintf(to.type, sizeof to.type, "rta");
    for (const char *const *k = (const char *const[]){"task.trees", "task.kbest", "task.tree_seed",
                                                      "task.tree_sampler", NULL};
         *k; k++)
        assert_true(strux_task_reads_key(&to, *k));
    const strux_opt_spec *trees = NULL, *kbest = NULL, *sampler = NULL;
    for (const strux_opt_spec *s = strux_task_opt_specs; s->key; s++) {
        if (!strcmp(s->key, "task.trees")) trees = s;
        if (!strcmp(s->key, "task.kbest")) kbest = s;
        if (!strcmp(s->key, "task.tree_sampler")) sampler = s;
    }
    assert_strux_fails(strux_opt_set(trees, &to, "0", "--set"), STRUX_ERR_CONFIG, "task.trees");
    assert_strux_fails(strux_opt_set(trees, &to, "1025", "--set"), STRUX_ERR_CONFIG, "task.trees");
    assert_strux_fails(strux_opt_set(kbest, &to, "0", "--set"), STRUX_ERR_CONFIG, "task.kbest");
    assert_strux_fails(strux_opt_set(sampler, &to, "prim", "--set"), STRUX_ERR_CONFIG,
                       "task.tree_sampler");
    to.trees = 0;
    strux_task *bad = NULL;
    assert_strux_fails(strux_task_create(&to, &bad), STRUX_ERR_CONFIG,
                       "task.trees = 0 is outside [1, 1024]");
    assert_null(bad);
    bench_free(&b);
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
    strux_dataset_destroy(&one);
    strux_dataset_destroy(&six);
}

/* eval: the multi-label metrics, then cert_rate = certified predictions / predictions. */
static void test_eval_reports_cert_rate(void **state)
{
    (void)state;
    enum { L = 6, N_EX = 8 };
    strux_dataset *ds = synth_rows("rta_eval", N_EX, 4, L, 0, 2);
    strux_task *t = create(2, 1, 3, "uniform");
    assert_strux_ok(strux_task_check(t, ds));
    bench b;
    bench_init(&b, t, ds, 2);
    double *acc = calloc((size_t)strux_task_eval_size(t), sizeof *acc);
    int64_t cert = 0, calls = 0;
    for (int64_t i = 0; i < N_EX; i++) {
        assert_strux_ok(strux_task_potentials(t, b.m, ds, i, &b.pot));
        assert_strux_ok(strux_task_truth(t, ds, i, &b.truth));
        assert_strux_ok(strux_task_predict(t, &b.pot, &b.y));
        assert_strux_ok(strux_task_eval_add(t, &b.y, &b.truth, acc));
    }
    strux_task_rta_certified(t, &cert, &calls);
    assert_int_equal(calls, N_EX);
    strux_scores sc;
    assert_strux_ok(strux_task_eval_report(t, acc, &sc));
    assert_string_equal(sc.name[sc.n - 1], "cert_rate");
    assert_close(sc.value[sc.n - 1], (double)cert / N_EX, 1e-15);
    print_message("# n = 2, K = 1, L = 6: cert_rate %.3f\n", sc.value[sc.n - 1]);
    int has_n = 0;
    for (int k = 0; k < sc.n; k++)
        has_n += !strcmp(sc.name[k], "n") && sc.value[k] == N_EX;
    assert_int_equal(has_n, 1);
    free(acc);
    bench_free(&b);
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
}

/* The n-th allocation of check() failing, for every n: STRUX_ERR_NOMEM, nothing leaks once the task
 * is destroyed, and a second check() of the same task then succeeds and draws the trees. */
static void test_check_allocation_failures(void **state)
{
    (void)state;
    strux_dataset *ds = synth_rows("rta_nomem", 3, 4, 6, 0, 4);
    int failed = 0;
    for (int64_t n = 1;; n++) {
        size_t before = strux_alloc_bytes();
        strux_task *t = create(3, 4, 1, "uniform");
        strux_alloc_fail_after(n);
        strux_status st = strux_task_check(t, ds);
        strux_alloc_fail_after(-1);
        if (st == STRUX_OK) {
            strux_task_destroy(&t);
            assert_int_equal(strux_alloc_bytes(), before);
            break;
        }
        assert_int_equal(st, STRUX_ERR_NOMEM);
        failed++;
        assert_strux_ok(strux_task_check(t, ds));
        int32_t rows;
        int64_t extra;
        assert_strux_ok(strux_task_model_shape(t, ds, &rows, &extra));
        assert_true(rows > 0);
        strux_task_destroy(&t);
        assert_int_equal(strux_alloc_bytes(), before);
    }
    print_message("# %d allocation failures in check() handled\n", failed);
    assert_true(failed >= 6);
    strux_dataset_destroy(&ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_score_and_loss),
        cmocka_unit_test(test_certified_answers_are_exact),
        cmocka_unit_test(test_complete_lists_certify),
        cmocka_unit_test(test_candidate_gram_factors),
        cmocka_unit_test(test_trees_follow_the_seed),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_eval_reports_cert_rate),
        cmocka_unit_test(test_check_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
