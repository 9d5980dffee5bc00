/* tests/unit/test_task_registry.c - the contract every registered task keeps, checked by looping
 * over the registry (STYLE.md §10): it accepts some of the synthetic dataset kinds (single-label
 * rows, sequences, binary rows) and rejects the others with an input error; every required method exists;
 * labels enumerate distinctly; the truth has loss 0; the direction oracle equals enumeration and
 * reports its label's own (m, g, |y|); prediction maximises f; w·φ = f and Δφ = φ(y) − φ(y_i);
 * dual blocks map to the same Δφ and the potentials begin with their scores (task.h "Dual blocks");
 * wedge and ban-list queries are either answered with an admitted, unbanned label or refused with
 * STRUX_ERR_UNSUPPORTED naming the task; evaluation reports n. Unknown names list every task. */
#include "test_common.h"

#include "brute.h"
#include "synth.h"
#include "tasks/task_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 6 };

static strux_task *create(const char *name)
{
    strux_task_options to;
    assert_strux_ok(strux_opt_defaults(strux_task_opt_specs, &to));
    snprintf(to.type, sizeof to.type, "%s", name);
    strux_task *t;
    assert_strux_ok(strux_task_create(&to, &t));
    return t;
}

static void check_methods(const strux_task *t)
{
    const struct strux_task_ops *o = t->ops;
    assert_true(o->check && o->model_shape && o->sizes && o->potentials && o->truth && o->oracle &&
                o->loss && o->size && o->score && o->predict && o->add_feature && o->eval_size &&
                o->eval_add && o->eval_report && o->format_label && o->label_count && o->label_at);
}

/* Wedge or ban answers: a label in the wedge and not banned, or a refusal naming the task. */
static void check_constrained(strux_task *t, const strux_pot *pot, const strux_label *truth,
                              const strux_query *q, strux_label *y)
{
    strux_answer a;
    strux_status st = strux_task_oracle(t, pot, truth, q, y, &a);
    if (st == STRUX_ERR_UNSUPPORTED) {
        char needle[128];
        snprintf(needle, sizeof needle, "task '%s'", strux_task_name(t));
        assert_non_null(strstr(strux_error_message(), needle));
        return;
    }
    assert_strux_ok(st);
    if (!a.found) return;
    double m, g;
    brute_point(t, pot, truth, y, &m, &g);
    assert_close(a.m, m, 1e-9);
    assert_close(a.g, g, 1e-9);
    for (int32_t k = 0; k < q->n_ban; k++)
        assert_false(strux_label_equal(&q->ban[k], y));
    if (q->wedge) {
        double h = m + q->h_shift;
        assert_true(q->beta * h <= g + 1e-7 && (isinf(q->alpha) || g <= q->alpha * h + 1e-7));
    }
}

/* Dual blocks: the block coefficients of Δφ applied to the weights give Δφ (delta, flat
 * label-major); the potentials begin with B_i^T·w (c·pot = (B_i c)·w = f(y) − f(y_i)); the Gram
 * inner product is the norm of the applied vector. tol: 1e-12 for double models, looser for float
 * stores (the applied vector is rounded to float). */
static void check_block(const strux_task *t, const strux_dataset *ds, int64_t i,
                        const strux_model *m, const strux_pot *pot, const strux_label *y,
                        const strux_label *truth, const double *delta, double tol)
{
    strux_block_shape b = strux_task_block_shape(t, ds, i);
    int64_t p_max;
    int32_t S_max;
    strux_task_block_max(t, ds, &p_max, &S_max);
    assert_true(b.p <= p_max && b.S <= S_max && b.p <= pot->cap);
    double *c = calloc((size_t)b.p, sizeof *c);
    strux_model *Gm;
    assert_strux_ok(strux_model_create_like(m, &Gm));
    double *X = calloc((size_t)S_max * (size_t)S_max, sizeof *X);
    assert_strux_ok(strux_task_block_add_delta(t, ds, i, y, truth, 1.0, c));
    strux_task_block_apply(t, ds, i, c, 1.0, Gm);
    int64_t n_w = strux_model_n_w(m);
    double *G = test_model_flat(Gm);
    for (int64_t j = 0; j < n_w; j++)
        assert_close(G[j], delta[j], tol);
    assert_close(strux_dot(b.p, c, pot->s),
                 strux_task_score(t, pot, y) - strux_task_score(t, pot, truth), 1e-10);
    strux_task_block_gram(ds, &b, i, X);
    assert_close(strux_block_inner(&b, X, c, c), strux_nrm2sq(n_w, G), fmax(tol, 1e-10));
    free(c);
    free(G);
    strux_model_destroy(&Gm);
    free(X);
}

static void check_on_kind(strux_task *t, const strux_dataset *ds, strux_model_kind kind)
{
    int32_t rows;
    int64_t extra;
    assert_strux_ok(strux_task_model_shape(t, ds, &rows, &extra));
    strux_model *m, *G1m, *G2m;
    assert_strux_ok(strux_model_create(rows, ds->dim, extra, kind, &m));
    int64_t n_w = strux_model_n_w(m);
    strux_rng r;
    strux_rng_init(&r, 77, 0, 0);
    {
        double *w = test_model_flat(m);
        for (int64_t k = 0; k < n_w; k++)
            w[k] = strux_rng_normal(&r);
        test_model_set_flat(m, w); /* rounded to float by a float store */
        free(w);
    }
    /* w·φ = f, Δφ and the blocks against the model's own (possibly float-rounded) values */
    int is_float = kind.precision == STRUX_PRECISION_FLOAT;
    double ftol = is_float ? 1e-5 : 1e-10, dtol = is_float ? 1e-5 : 1e-12;
    strux_pot pot;
    strux_label truth, y, z;
    assert_strux_ok(strux_task_pot_alloc(t, ds, &pot));
    assert_strux_ok(strux_task_label_alloc(t, ds, &truth));
    assert_strux_ok(strux_task_label_alloc(t, ds, &y));
    assert_strux_ok(strux_task_label_alloc(t, ds, &z));
    assert_strux_ok(strux_model_create_like(m, &G1m));
    assert_strux_ok(strux_model_create_like(m, &G2m));
    double *acc = calloc((size_t)strux_task_eval_size(t) + 1, sizeof *acc);
    for (int64_t i = 0; i < ds->n_local; i++) {
        assert_strux_ok(strux_task_potentials(t, m, ds, i, &pot));
        assert_strux_ok(strux_task_truth(t, ds, i, &truth));
        assert_close(strux_task_loss(t, &truth, &truth), 0, 0);
        int64_t count = strux_task_label_count(t, &pot);
        assert_true(count > 1 && count <= 4096);
        /* labels enumerate distinctly; the truth is among them */
        int seen_truth = 0;
        for (int64_t k = 0; k < count; k++) {
            assert_strux_ok(strux_task_label_at(t, &pot, k, &y));
            seen_truth += strux_label_equal(&y, &truth);
            if (k > 0) assert_false(strux_label_equal(&y, &z));
            assert_strux_ok(strux_label_copy(&z, &y));
        }
        assert_int_equal(seen_truth, 1);
        /* direction oracle = enumeration; its answer is its label's */
        const double dirs[][2] = {{1, 1}, {1, 0}, {0.5, 3}};
        for (int d = 0; d < 3; d++) {
            strux_query q = strux_query_dir(dirs[d][0], dirs[d][1]);
            strux_answer a;
            assert_strux_ok(strux_task_oracle(t, &pot, &truth, &q, &y, &a));
            assert_true(a.found);
            expect_oracle_answer(t, &pot, &truth, &q, brute_oracle(t, &pot, &truth, &q, NULL), &y,
                                 &a, 1e-9);
            assert_true(q.a * a.m + q.b * a.g >= -1e-12); /* the truth scores 0 */
        }
        /* prediction maximises f */
        assert_strux_ok(strux_task_predict(t, &pot, &y));
        strux_query q0 = strux_query_dir(1, 0);
        assert_close(strux_task_score(t, &pot, &y) - strux_task_score(t, &pot, &truth),
                     brute_oracle(t, &pot, &truth, &q0, NULL), 1e-9);
        /* w·φ(x, y) = f(y) and Δφ */
        assert_strux_ok(strux_task_label_at(t, &pot, count - 1 - i % count, &y));
        strux_model_zero(G1m);
        assert_strux_ok(strux_task_add_feature(t, ds, i, &y, 1.0, G1m));
        assert_close(strux_model_dot(G1m, m), strux_task_score(t, &pot, &y), ftol);
        assert_strux_ok(strux_task_add_feature(t, ds, i, &truth, -1.0, G1m));
        strux_model_zero(G2m);
        assert_strux_ok(strux_task_add_delta(t, ds, i, &y, &truth, 1.0, G2m));
        double *G1 = test_model_flat(G1m), *G2 = test_model_flat(G2m);
        for (int64_t j = 0; j < n_w; j++)
            assert_close(G1[j], G2[j], dtol);
        check_block(t, ds, i, m, &pot, &y, &truth, G2, dtol);
        free(G1);
        free(G2);
        /* constrained and banned queries */
        strux_query q = strux_query_dir(1, 1);
        q.wedge = 1;
        q.alpha = 2;
        q.beta = 0.5;
        q.h_shift = 1;
        check_constrained(t, &pot, &truth, &q, &y);
        q = strux_query_dir(1, 1);
        q.ban = &truth;
        q.n_ban = 1;
        check_constrained(t, &pot, &truth, &q, &y);
        assert_strux_ok(strux_task_eval_add(t, &truth, &truth, acc));
        char text[1024];
        assert_strux_ok(strux_task_format_label(t, &truth, text, sizeof text));
    }
    char report[4096];
    {
        strux_scores sc;
        assert_strux_ok(strux_task_eval_report(t, acc, &sc));
        strux_scores_format(&sc, report, sizeof report);
    }
    char n_field[32];
    snprintf(n_field, sizeof n_field, "\"n\": %d", N);
    assert_non_null(strstr(report, n_field));
    strux_model_destroy(&G1m);
    strux_model_destroy(&G2m);
    free(acc);
    strux_pot_free(&pot);
    strux_label_free(&truth);
    strux_label_free(&y);
    strux_label_free(&z);
    strux_model_destroy(&m);
}

/* The contract under every model kind {label_major, feature_major, sparse} × {double, float}. */
static void check_on(strux_task *t, const strux_dataset *ds)
{
    for (size_t kd = 0; kd < TEST_MODEL_KINDS; kd++)
        check_on_kind(t, ds, test_model_kinds[kd]);
}

static void test_every_task_keeps_the_contract(void **state)
{
    (void)state;
    /* the third kind, two labels one per row, is the binary task's (multiclass and multilabel
     * take it too) */
    strux_dataset *kinds[3] = {synth_rows("rows", N, 3, 4, 1, 1),
                               synth_sequences("sequences", N, 4, 3, 3, 2),
                               synth_rows("binary rows", N, 3, 2, 1, 3)};
    int n_tasks = 0;
    for (const strux_task_entry *e = strux_task_registry; e->name; e++, n_tasks++) {
        if (strcmp(e->name, "hierarchy") == 0) { /* needs its file: test_task_hierarchy.c */
            strux_task *t = create(e->name);
            check_methods(t);
            assert_strux_fails(strux_task_check(t, kinds[0]), STRUX_ERR_CONFIG,
                               "task.hierarchy is not set");
            strux_task_destroy(&t);
            continue;
        }
        int accepted = 0;
        for (int d = 0; d < 3; d++) {
            strux_task *t = create(e->name);
            check_methods(t);
            strux_status st = strux_task_check(t, kinds[d]);
            if (st == STRUX_OK) {
                print_message("# %s on %s\n", e->name, kinds[d]->path);
                check_on(t, kinds[d]);
                accepted++;
            } else {
                assert_int_equal(st, STRUX_ERR_INPUT);
                assert_non_null(strstr(strux_error_message(), kinds[d]->path));
            }
            strux_task_destroy(&t);
            assert_null(t);
        }
        assert_true(accepted >= 1);
    }
    assert_true(n_tasks >= 4);
    strux_dataset_destroy(&kinds[0]);
    strux_dataset_destroy(&kinds[1]);
    strux_dataset_destroy(&kinds[2]);
}

static void test_unknown_name_lists_every_task(void **state)
{
    (void)state;
    strux_task_options to = {.type = "nosuchtask"};
    strux_task *t = NULL;
    char want[512] = "task.type = 'nosuchtask' is unknown; valid types: ";
    for (const strux_task_entry *e = strux_task_registry; e->name; e++) {
        if (e != strux_task_registry) strcat(want, ", ");
        strcat(want, e->name);
    }
    assert_strux_fails(strux_task_create(&to, &t), STRUX_ERR_CONFIG, want);
    assert_null(t);
    assert_true(strstr(want, "multiclass") && strstr(want, "chain") && strstr(want, "pairwise"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_task_keeps_the_contract),
        cmocka_unit_test(test_unknown_name_lists_every_task),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
