/* tests/unit/test_task_hierarchy.c - the hierarchy task (tasks/hierarchy.c) through the task
 * interface on seeded random trees and DAGs of at most 12 file nodes (labels: random node sets,
 * so paths ending at internal nodes get stop leaves): every model (flat, hsvm, nhsvm) and loss
 * (zero_one, normalized, node_hamming, leaf_hamming), both label spaces, pruning on and off:
 *   - the direction oracle equals brute-force enumeration of the label space (label_at builds
 *     labels as unions of leaf ancestor sets, independently of the oracles); on multi-label DAGs
 *     the training oracle is the LP relaxation: its value is ≥ the enumerated maximum, and equal
 *     when its answer is integral;
 *   - predict maximises the score over every label, max_loss equals the largest loss;
 *   - the reductions: nhsvm with the flat α and 0/1 loss is flat, hsvm is nhsvm with α ≡ 1 and
 *     node Hamming, ssvm with a frozen (random) α is nhsvm with that α and ssvm's loss (same node
 *     scores, oracle answers and features to 1e-12);
 *   - the export: rows √α_n·W_n scored with c ≡ 1 give the same node scores;
 *   - task.margin = normalized (6.13) on ≥ 200 random trees and DAGs, single-label, flat, hsvm
 *     and nhsvm: the oracle's (m, g) against enumeration with Δ̃ recomputed from α (m = (f(y) −
 *     f(y_i))/Δ̃, g = 1; labels with Δ̃ = 0 are y_i), its loss and max_loss, and add_delta = (φ(y)
 *     − φ(y_i))/Δ̃; ssvm, other losses and multi-label data refused;
 *   - metrics on a hand-made tree; bad input (no hierarchy, label not a node). */
#include "test_common.h"

#include "brute.h"
#include "synth.h"
#include "strux/hierarchy.h"
#include "tasks/task_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { MAXM = 12 };

/* A random hierarchy on 2..MAXM nodes with file ids 0..n-1 (root 0) written to a file: node
 * i > 0 has a parent below it and, in a DAG, with probability 1/2 a second one. Returns n. */
static int write_random_hierarchy(const char *path, strux_rng *r, int dag)
{
    int n = 2 + (int)strux_rng_below(r, MAXM - 1);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 1; i < n; i++) {
        int a = (int)strux_rng_below(r, (uint64_t)i);
        fprintf(f, "%d %d\n", a, i);
        if (dag && i > 1 && strux_rng_below(r, 2)) {
            int b = (int)strux_rng_below(r, (uint64_t)i);
            if (b != a) fprintf(f, "%d %d\n", b, i);
        }
    }
    fclose(f);
    return n;
}

static strux_task_options hopt(const char *path, const char *model, const char *labels,
                               const char *loss, int prune)
{
    strux_task_options o = {.type = "hierarchy", .rho = 2, .dag_t = 1.5, .prune = prune};
    snprintf(o.hierarchy, sizeof o.hierarchy, "%s", path);
    snprintf(o.model, sizeof o.model, "%s", model);
    snprintf(o.labels, sizeof o.labels, "%s", labels);
    snprintf(o.loss, sizeof o.loss, "%s", loss);
    snprintf(o.margin, sizeof o.margin, "plain");
    snprintf(o.alpha, sizeof o.alpha, "rho");
    snprintf(o.root_alpha, sizeof o.root_alpha, "auto");
    snprintf(o.partial_paths, sizeof o.partial_paths, "stop");
    snprintf(o.lp_start, sizeof o.lp_start, "fresh");
    return o;
}

typedef struct hcase {
    strux_task *t;
    strux_model *m;
    strux_pot pot;
    strux_label truth, y, best;
} hcase;

static void hcase_open(hcase *c, const strux_task_options *o, const strux_dataset *ds,
                       uint64_t seed)
{
    *c = (hcase){0};
    assert_strux_ok(strux_task_create(o, &c->t));
    assert_strux_ok(strux_task_check(c->t, ds));
    int32_t rows;
    int64_t extra;
    assert_strux_ok(strux_task_model_shape(c->t, ds, &rows, &extra));
    assert_int_equal(extra, 0);
    assert_strux_ok(strux_model_create(rows, ds->dim, 0, STRUX_MODEL_PLAIN, &c->m));
    strux_rng r;
    strux_rng_init(&r, seed, 7, 0);
    double *w = test_model_flat(c->m);
    for (int64_t k = 0; k < strux_model_n_w(c->m); k++)
        w[k] = strux_rng_normal(&r);
    test_model_set_flat(c->m, w);
    free(w);
    assert_strux_ok(strux_task_pot_alloc(c->t, ds, &c->pot));
    assert_strux_ok(strux_task_label_alloc(c->t, ds, &c->truth));
    assert_strux_ok(strux_task_label_alloc(c->t, ds, &c->y));
    assert_strux_ok(strux_task_label_alloc(c->t, ds, &c->best));
}

static void hcase_close(hcase *c)
{
    strux_pot_free(&c->pot);
    strux_label_free(&c->truth);
    strux_label_free(&c->y);
    strux_label_free(&c->best);
    strux_model_destroy(&c->m);
    strux_task_destroy(&c->t);
}

/* One configuration on every example of ds against brute force. Returns LP answers seen
 * fractional. */
static int check_config(const strux_task_options *o, const strux_dataset *ds, int dag, int multi,
                        strux_rng *r)
{
    hcase c;
    hcase_open(&c, o, ds, strux_rng_below(r, 1000000));
    int frac = 0;
    double tol = multi && dag ? 1e-7 : 1e-9; /* GLPK's optimality tolerances */
    for (int64_t i = 0; i < ds->n_local; i++) {
        assert_strux_ok(strux_task_potentials(c.t, c.m, ds, i, &c.pot));
        assert_strux_ok(strux_task_truth(c.t, ds, i, &c.truth));
        /* the truth is a label of the space and scores 0 margin, 0 loss */
        assert_true(strux_task_loss(c.t, &c.truth, &c.truth) == 0);
        strux_query qs[4] = {strux_query_dir(1, 1), strux_query_dir(1, 0), strux_query_dir(0, 1),
                             strux_query_dir(strux_rng_uniform(r) * 3, strux_rng_uniform(r) * 3)};
        for (int k = 0; k < 4; k++) {
            strux_answer a;
            assert_strux_ok(strux_task_oracle(c.t, &c.pot, &c.truth, &qs[k], &c.y, &a));
            double want = brute_oracle(c.t, &c.pot, &c.truth, &qs[k], &c.best);
            double got = qs[k].a * a.m + qs[k].b * a.g;
            /* (m, g) are the answer's own */
            assert_close(a.m, strux_task_score(c.t, &c.pot, &c.y) -
                                  strux_task_score(c.t, &c.pot, &c.truth), 1e-9);
            assert_close(a.g, strux_task_loss(c.t, &c.y, &c.truth), 1e-9);
            if (multi && dag) {
                if (got < want - tol * fmax(1, fabs(want)))
                    fail_msg("LP value %.17g below the enumerated maximum %.17g (%s, loss %s, "
                             "prune %d)", got, want, o->model, o->loss, o->prune);
                if (c.y.n_mu == 0) assert_close(got, want, tol);
                else frac++;
            } else {
                assert_int_equal(c.y.n_mu, 0);
                assert_close(got, want, 1e-9);
            }
        }
        /* prediction: the best score over every label */
        assert_strux_ok(strux_task_predict(c.t, &c.pot, &c.y));
        assert_int_equal(c.y.n_mu, 0);
        strux_query q = strux_query_dir(1, 0);
        double want = brute_oracle(c.t, &c.pot, &c.truth, &q, &c.best);
        assert_close(strux_task_score(c.t, &c.pot, &c.y) - strux_task_score(c.t, &c.pot, &c.truth),
                     want, tol);
        q = strux_query_dir(0, 1);
        assert_close(strux_task_max_loss(c.t, &c.truth),
                     brute_oracle(c.t, &c.pot, &c.truth, &q, &c.best), tol);
    }
    hcase_close(&c);
    return frac;
}

static void test_oracles_match_brute_force(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/rand.hier", test_tmpdir());
    strux_rng r;
    strux_rng_init(&r, 14, 0, 0);
    int n_trial[2][2] = {{0}}, frac = 0;
    const char *models[] = {"flat", "hsvm", "nhsvm"};
    for (int trial = 0; trial < 240; trial++) {
        int dag = trial % 2, multi = (trial / 2) % 2;
        int n = write_random_hierarchy(path, &r, dag);
        strux_dataset *ds = synth_rows(path, 4, 5, n, multi ? 2 : 1, 1000 + (uint64_t)trial);
        for (int mo = 0; mo < 3; mo++) {
            const char *losses[] = {"auto", "node_hamming", multi ? "leaf_hamming" : "zero_one",
                                    multi ? "tree" : "normalized"};
            for (int l = 0; l < 4; l++) {
                strux_task_options o =
                    hopt(path, models[mo], multi ? "multi" : "single", losses[l], trial % 4 < 2);
                frac += check_config(&o, ds, dag, multi, &r);
            }
        }
        n_trial[dag][multi]++;
        strux_dataset_destroy(&ds);
    }
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            assert_true(n_trial[a][b] >= 50);
    print_message("# %d fractional LP answers checked as upper bounds\n", frac);
}

/* (m, g) of label y under (6.13), from α alone: Δ̃² = Σ_n α_n |y_n − t_n|, m = (f(y) −
 * f(y_i))/Δ̃ and g = 1, or (0, 0) when Δ̃² ≤ 1e-12 (y is y_i in feature space). Returns Δ̃. */
static double normalized_point(const hcase *c, const double *alpha, int32_t M, const strux_label *y,
                               double *m, double *g)
{
    double e = 0;
    for (int32_t n = 0; n < M; n++)
        e += alpha[n] * fabs((double)y->y[n] - c->truth.y[n]);
    *m = *g = 0;
    if (e <= 1e-12) return 0;
    *m =
        (strux_task_score(c->t, &c->pot, y) - strux_task_score(c->t, &c->pot, &c->truth)) / sqrt(e);
    *g = 1;
    return sqrt(e);
}

static void check_normalized(const strux_task_options *o, const strux_dataset *ds, strux_rng *r)
{
    hcase c;
    hcase_open(&c, o, ds, strux_rng_below(r, 1000000));
    const strux_hierarchy *h;
    const double *alpha;
    assert_strux_ok(strux_task_hierarchy_state(c.t, &h, &alpha));
    int32_t M = h->n_nodes;
    strux_model *ga, *gb;
    assert_strux_ok(strux_model_create_like(c.m, &ga));
    assert_strux_ok(strux_model_create_like(c.m, &gb));
    int64_t nw = strux_model_n_w(c.m);
    for (int64_t i = 0; i < ds->n_local; i++) {
        assert_strux_ok(strux_task_potentials(c.t, c.m, ds, i, &c.pot));
        assert_strux_ok(strux_task_truth(c.t, ds, i, &c.truth));
        strux_query qs[4] = {strux_query_dir(1, 1), strux_query_dir(1, 0), strux_query_dir(0, 1),
                             strux_query_dir(strux_rng_uniform(r) * 3, strux_rng_uniform(r) * 3)};
        double max_g = 0;
        for (int k = 0; k < 4; k++) {
            double want = -INFINITY, m, g;
            int64_t n_lab = strux_task_label_count(c.t, &c.pot);
            for (int64_t j = 0; j < n_lab; j++) {
                assert_strux_ok(strux_task_label_at(c.t, &c.pot, j, &c.best));
                normalized_point(&c, alpha, M, &c.best, &m, &g);
                want = fmax(want, qs[k].a * m + qs[k].b * g);
                max_g = fmax(max_g, g);
            }
            strux_answer a;
            assert_strux_ok(strux_task_oracle(c.t, &c.pot, &c.truth, &qs[k], &c.y, &a));
            assert_close(qs[k].a * a.m + qs[k].b * a.g, want, 1e-9);
            double delta = normalized_point(&c, alpha, M, &c.y, &m, &g);
            assert_close(a.m, m, 1e-9);
            assert_true(a.g == g);
            assert_true(strux_task_loss(c.t, &c.y, &c.truth) == g);
            /* add_delta = (φ(y) − φ(y_i))/Δ̃, nothing when y is y_i in feature space */
            strux_model_zero(ga);
            strux_model_zero(gb);
            assert_strux_ok(strux_task_add_delta(c.t, ds, i, &c.y, &c.truth, 0.5, ga));
            if (delta > 0) {
                assert_strux_ok(strux_task_add_feature(c.t, ds, i, &c.y, 0.5 / delta, gb));
                assert_strux_ok(strux_task_add_feature(c.t, ds, i, &c.truth, -0.5 / delta, gb));
            }
            double *fa = test_model_flat(ga), *fb = test_model_flat(gb);
            for (int64_t q = 0; q < nw; q++)
                assert_close(fa[q], fb[q], 1e-12);
            free(fa);
            free(fb);
        }
        assert_true(strux_task_max_loss(c.t, &c.truth) == max_g);
        assert_true(strux_task_loss(c.t, &c.truth, &c.truth) == 0);
    }
    strux_model_destroy(&ga);
    strux_model_destroy(&gb);
    hcase_close(&c);
}

static void test_normalized_margin(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/norm.hier", test_tmpdir());
    strux_rng r;
    strux_rng_init(&r, 17, 0, 0);
    int n_trial[2] = {0};
    const char *models[] = {"flat", "hsvm", "nhsvm"};
    for (int trial = 0; trial < 240; trial++) {
        int dag = trial % 2;
        int n = write_random_hierarchy(path, &r, dag);
        strux_dataset *ds = synth_rows(path, 4, 5, n, 1, 3000 + (uint64_t)trial);
        for (int mo = 0; mo < 3; mo++) {
            strux_task_options o = hopt(path, models[mo], "single", "auto", 1);
            snprintf(o.margin, sizeof o.margin, "normalized");
            if (mo == 2 && trial % 3 == 1) snprintf(o.alpha, sizeof o.alpha, "maxmin");
            check_normalized(&o, ds, &r);
        }
        n_trial[dag]++;
        strux_dataset_destroy(&ds);
    }
    assert_true(n_trial[0] >= 100 && n_trial[1] >= 100);
    /* refused: ssvm, another loss (at create), multi-label training data (at check) */
    strux_task *t;
    strux_task_options o = hopt(path, "ssvm", "single", "auto", 1);
    snprintf(o.margin, sizeof o.margin, "normalized");
    assert_strux_fails(strux_task_create(&o, &t), STRUX_ERR_CONFIG, "task.model = ssvm");
    o = hopt(path, "nhsvm", "single", "zero_one", 1);
    snprintf(o.margin, sizeof o.margin, "normalized");
    assert_strux_fails(strux_task_create(&o, &t), STRUX_ERR_CONFIG, "task.loss = zero_one");
    FILE *f = fopen(path, "w");
    fprintf(f, "0 1\n0 2\n1 3\n1 4\n");
    fclose(f);
    strux_dataset *ds = synth_rows(path, 6, 3, 5, 2, 9);
    o = hopt(path, "nhsvm", "auto", "auto", 1);
    snprintf(o.margin, sizeof o.margin, "normalized");
    assert_strux_ok(strux_task_create(&o, &t));
    assert_strux_fails(strux_task_check(t, ds), STRUX_ERR_CONFIG, "needs single-label data");
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
    unsigned needs;
    const char *why;
    assert_strux_ok(strux_task_needs(&o, &needs, &why));
    assert_int_equal(needs, STRUX_CAP_ONE_CALL);
    snprintf(o.margin, sizeof o.margin, "plain");
    assert_strux_ok(strux_task_needs(&o, &needs, &why));
    assert_int_equal(needs, 0);
}

/* Node scores, oracle answers and features of two tasks on the same weights agree. */
static void expect_same_task(hcase *a, hcase *b, const strux_dataset *ds, strux_rng *r)
{
    int64_t nw = strux_model_n_w(a->m);
    strux_model *ga, *gb;
    assert_strux_ok(strux_model_create_like(a->m, &ga));
    assert_strux_ok(strux_model_create_like(a->m, &gb));
    assert_strux_ok(strux_model_copy(b->m, a->m));
    int32_t M = strux_model_n_rows(a->m);
    for (int64_t i = 0; i < ds->n_local; i++) {
        assert_strux_ok(strux_task_potentials(a->t, a->m, ds, i, &a->pot));
        assert_strux_ok(strux_task_potentials(b->t, b->m, ds, i, &b->pot));
        for (int32_t n = 0; n < 2 * M; n++)
            assert_close(a->pot.s[n], b->pot.s[n], 1e-12);
        assert_strux_ok(strux_task_truth(a->t, ds, i, &a->truth));
        assert_strux_ok(strux_task_truth(b->t, ds, i, &b->truth));
        strux_query q = strux_query_dir(strux_rng_uniform(r), strux_rng_uniform(r));
        strux_answer x, y;
        assert_strux_ok(strux_task_oracle(a->t, &a->pot, &a->truth, &q, &a->y, &x));
        assert_strux_ok(strux_task_oracle(b->t, &b->pot, &b->truth, &q, &b->y, &y));
        assert_true(strux_label_equal(&a->y, &b->y));
        assert_close(x.m, y.m, 1e-12);
        assert_close(x.g, y.g, 1e-12);
        strux_model_zero(ga);
        strux_model_zero(gb);
        assert_strux_ok(strux_task_add_delta(a->t, ds, i, &a->y, &a->truth, 0.5, ga));
        assert_strux_ok(strux_task_add_delta(b->t, ds, i, &b->y, &b->truth, 0.5, gb));
        double *fa = test_model_flat(ga), *fb = test_model_flat(gb);
        for (int64_t k = 0; k < nw; k++)
            assert_close(fa[k], fb[k], 1e-12);
        free(fa);
        free(fb);
    }
    strux_model_destroy(&ga);
    strux_model_destroy(&gb);
}

static void test_reductions(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/red.hier", test_tmpdir());
    strux_rng r;
    strux_rng_init(&r, 15, 0, 0);
    for (int trial = 0; trial < 40; trial++) {
        int dag = trial % 2;
        int n = write_random_hierarchy(path, &r, dag);
        strux_dataset *ds = synth_rows(path, 6, 5, n, 1, 2000 + (uint64_t)trial);
        /* nhsvm with the flat α and 0/1 loss = flat */
        strux_task_options of = hopt(path, "flat", "single", "auto", 1);
        strux_task_options on = hopt(path, "nhsvm", "single", "zero_one", 1);
        hcase a, b;
        hcase_open(&a, &of, ds, 1);
        hcase_open(&b, &on, ds, 1);
        const strux_hierarchy *h;
        const double *alpha_flat, *alpha_n;
        assert_strux_ok(strux_task_hierarchy_state(a.t, &h, &alpha_flat));
        assert_strux_ok(strux_task_hierarchy_state(b.t, &h, &alpha_n));
        int differ = 0;
        for (int32_t k = 0; k < h->n_nodes; k++)
            differ |= alpha_flat[k] != alpha_n[k];
        if (h->n_leaves < h->n_nodes - 1) assert_true(differ); /* the test can tell them apart */
        assert_strux_ok(strux_task_hierarchy_set_alpha(b.t, alpha_flat));
        expect_same_task(&a, &b, ds, &r);
        hcase_close(&b);
        hcase_close(&a);
        /* hsvm = nhsvm with α ≡ 1 and node Hamming */
        strux_task_options oh = hopt(path, "hsvm", "single", "auto", 1);
        on = hopt(path, "nhsvm", "single", "node_hamming", 1);
        hcase_open(&a, &oh, ds, 2);
        hcase_open(&b, &on, ds, 2);
        assert_strux_ok(strux_task_hierarchy_state(a.t, &h, &alpha_flat));
        assert_strux_ok(strux_task_hierarchy_set_alpha(b.t, alpha_flat));
        expect_same_task(&a, &b, ds, &r);
        hcase_close(&b);
        hcase_close(&a);
        /* ssvm with α frozen (a random α set on both) = nhsvm with that α and ssvm's loss:
         * 0/1 single-label, leaf Hamming multi-label (on DAGs too: the α update's convex
         * extension of §4.3) */
        for (int multi = 0; multi < 2; multi++) {
            const char *lab = multi ? "multi" : "single", *loss = multi ? "auto" : "zero_one";
            strux_task_options os = hopt(path, "ssvm", lab, "auto", 1);
            on = hopt(path, "nhsvm", lab, loss, 1);
            hcase_open(&a, &os, ds, 4);
            hcase_open(&b, &on, ds, 4);
            assert_strux_ok(strux_task_hierarchy_state(a.t, &h, NULL));
            assert_true(strux_task_hierarchy_learns_alpha(a.t));
            assert_false(strux_task_hierarchy_learns_alpha(b.t));
            double frozen[2 * MAXM + 2];
            for (int32_t k = 0; k < h->n_nodes; k++)
                frozen[k] = strux_rng_uniform(&r);
            assert_strux_ok(strux_task_hierarchy_set_alpha(a.t, frozen));
            assert_strux_ok(strux_task_hierarchy_set_alpha(b.t, frozen));
            expect_same_task(&a, &b, ds, &r);
            hcase_close(&b);
            hcase_close(&a);
        }
        strux_dataset_destroy(&ds);
    }
}

/* Exported rows √α_n·W_n scored with c ≡ 1 give the training node scores. */
static void test_export(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/exp.hier", test_tmpdir());
    strux_rng r;
    strux_rng_init(&r, 16, 0, 0);
    write_random_hierarchy(path, &r, 0);
    strux_dataset *ds = synth_rows(path, 5, 6, 3, 1, 77);
    strux_task_options o = hopt(path, "nhsvm", "auto", "auto", 1);
    hcase c;
    hcase_open(&c, &o, ds, 3);
    int32_t M = strux_model_n_rows(c.m);
    double before[2 * MAXM + 2];
    assert_strux_ok(strux_task_potentials(c.t, c.m, ds, 0, &c.pot));
    memcpy(before, c.pot.s, (size_t)(2 * M) * sizeof *before);
    assert_strux_ok(strux_task_export(c.t, c.m));
    assert_strux_ok(strux_task_potentials(c.t, c.m, ds, 0, &c.pot));
    for (int32_t n = 0; n < M; n++) {
        assert_close(c.pot.s[M + n], before[M + n], 1e-12);
        assert_close(c.pot.s[n], before[M + n], 1e-12); /* row n is U_n now */
    }
    hcase_close(&c);
    strux_dataset_destroy(&ds);
}

/* Hand-made tree 0 → {1, 2}, 1 → {3, 4}: metrics of fixed predictions. */
static void test_metrics(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/m.hier", test_tmpdir());
    FILE *f = fopen(path, "w");
    fprintf(f, "0 1\n0 2\n1 3\n1 4\n");
    fclose(f);
    strux_dataset *ds = synth_rows(path, 4, 3, 5, 1, 5);
    strux_task_options o = hopt(path, "nhsvm", "multi", "auto", 1);
    strux_task *t;
    assert_strux_ok(strux_task_create(&o, &t));
    assert_strux_ok(strux_task_check(t, ds));
    assert_true(strux_task_eval_size(t) > 0);
    strux_label p, u;
    assert_strux_ok(strux_task_label_alloc(t, ds, &p));
    assert_strux_ok(strux_task_label_alloc(t, ds, &u));
    const strux_hierarchy *h;
    assert_strux_ok(strux_task_hierarchy_state(t, &h, NULL));
    int32_t M = h->n_nodes;
    double acc[8 + 3 * 16] = {0};
    /* truth {1, 3} + {2}; prediction {1, 4} */
    p.n = u.n = M;
    memset(p.y, 0, (size_t)M * sizeof *p.y);
    memset(u.y, 0, (size_t)M * sizeof *u.y);
    int32_t n1 = strux_hierarchy_find(h, 1), n2 = strux_hierarchy_find(h, 2),
            n3 = strux_hierarchy_find(h, 3), n4 = strux_hierarchy_find(h, 4);
    u.y[0] = u.y[n1] = u.y[n3] = u.y[n2] = 1;
    p.y[0] = p.y[n1] = p.y[n4] = 1;
    assert_strux_ok(strux_task_eval_add(t, &p, &u, acc));
    strux_scores s;
    assert_strux_ok(strux_task_eval_report(t, acc, &s));
    char buf[512];
    strux_scores_format(&s, buf, sizeof buf);
    /* most specific: truth {3, 2}, pred {4}: jaccard 0; closures: tp {1}, fp {4}, fn {3, 2} */
    assert_string_equal(buf, "\"jaccard\": 0.000000, \"example_f1\": 0.000000, "
                             "\"subset_accuracy\": 0.000000, \"micro_f1\": 0.000000, "
                             "\"macro_f1\": 0.000000, \"hier_f1\": 0.400000, "
                             "\"tree_loss\": 3.000000, \"n\": 1");
    assert_strux_ok(strux_task_format_label(t, &u, buf, sizeof buf));
    assert_string_equal(buf, "1,2,3");
    strux_label_free(&p);
    strux_label_free(&u);
    strux_task_destroy(&t);
    strux_dataset_destroy(&ds);
}

static void test_bad_input(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/b.hier", test_tmpdir());
    FILE *f = fopen(path, "w");
    fprintf(f, "0 1\n0 2\n1 3\n2 3\n");
    fclose(f);
    strux_dataset *ds = synth_rows("bad.svm", 4, 3, 20, 1, 5); /* labels 5..19 are not nodes */
    strux_task *t;
    strux_task_options o = hopt("", "nhsvm", "auto", "auto", 1);
    assert_strux_ok(strux_task_create(&o, &t));
    assert_strux_fails(strux_task_check(t, ds), STRUX_ERR_CONFIG, "task.hierarchy is not set");
    strux_task_destroy(&t);
    o = hopt(path, "nhsvm", "auto", "auto", 1);
    assert_strux_ok(strux_task_create(&o, &t));
    assert_strux_fails(strux_task_check(t, ds), STRUX_ERR_INPUT, "is not a node");
    strux_task_destroy(&t);
    o.rho = 1;
    assert_strux_fails(strux_task_create(&o, &t), STRUX_ERR_CONFIG, "rho > 1");
    strux_dataset_destroy(&ds);
}

int main(void)
{
    strux_log_setup(0, STRUX_LOG_ERROR, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracles_match_brute_force),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_normalized_margin),
        cmocka_unit_test(test_export),
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
