/* tests/unit/test_solvers.c - every registered solver in one process (one rank) on small synthetic
 * problems: multilabel with margin and with slack rescaling, and a chain with margin rescaling.
 * Checks: the dual solvers' dual objective never decreases from epoch to epoch (exact line
 * searches and exact SMO steps are ascent steps) and stays below the primal; no allocation in the
 * second epoch (the cutting plane's working sets may grow, so it is exempt); the checkpoint state
 * (strux_solver_save + strux_search_save) loaded into a fresh solver continues with bit-identical
 * weights; a blob from another solver or a truncated blob is refused with a message. */
#include "test_common.h"

#include "strux/solver.h"
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static strux_comm *comm;

typedef struct problem {
    const char *task, *surrogate;
    int sequences;
} problem;

static const problem problems[] = {
    {"multilabel", "margin", 0},
    {"multilabel", "slack", 0},
    {"chain", "margin", 1},
};

typedef struct run {
    strux_dataset *ds;
    strux_task *t;
    strux_model *m;
    strux_search *s;
    strux_solver *sv;
} run;

static void run_open(run *r, const problem *p, const char *solver, strux_dataset *ds)
{
    strux_task_options to;
    assert_strux_ok(strux_opt_defaults(strux_task_opt_specs, &to));
    snprintf(to.type, sizeof to.type, "%s", p->task);
    r->ds = ds;
    assert_strux_ok(strux_task_create(&to, &r->t));
    assert_strux_ok(strux_task_check(r->t, ds));
    int32_t rows;
    int64_t extra;
    assert_strux_ok(strux_task_model_shape(r->t, ds, &rows, &extra));
    assert_strux_ok(strux_model_create(rows, ds->dim, extra, STRUX_MODEL_PLAIN, &r->m));
    strux_search_options so;
    assert_strux_ok(strux_search_options_default(&so));
    snprintf(so.type, sizeof so.type, "%s", p->surrogate);
    so.eps = 0;
    assert_strux_ok(strux_search_create(&so, r->t, ds, &r->s));
    strux_solver_options vo;
    assert_strux_ok(strux_opt_defaults(strux_solver_opt_specs, &vo));
    snprintf(vo.type, sizeof vo.type, "%s", solver);
    vo.lambda = 0.05;
    vo.batch = 4;
    assert_strux_ok(strux_solver_create(&vo, r->t, r->s, ds, r->m, comm, &r->sv));
}

static void run_close(run *r)
{
    strux_solver_destroy(&r->sv);
    strux_search_destroy(&r->s);
    strux_model_destroy(&r->m);
    strux_task_destroy(&r->t);
}

static const char *const solver_names[] = {"sgd", "bcfw", "sdca", "cutting_plane"};

static strux_dataset *problem_data(const problem *p)
{
    return p->sequences ? synth_sequences("seq", 40, 5, 6, 3, 11)
                        : synth_rows("rows", 60, 6, 5, 0, 12);
}

/* Run check(problem, solver, data) for every problem and every solver. */
static void for_each_case(void (*check)(const problem *p, const char *solver, strux_dataset *ds))
{
    for (size_t k = 0; k < sizeof problems / sizeof *problems; k++)
        for (size_t v = 0; v < sizeof solver_names / sizeof *solver_names; v++) {
            strux_dataset *ds = problem_data(&problems[k]);
            check(&problems[k], solver_names[v], ds);
            strux_dataset_destroy(&ds);
        }
}

static void check_ascent(const problem *p, const char *solver, strux_dataset *ds)
{
    run r;
    run_open(&r, p, solver, ds);
    int dual = strcmp(solver, "sgd") != 0;
    double last_dual = -INFINITY;
    for (int e = 1; e <= 6; e++) {
        int64_t calls = strux_alloc_calls();
        assert_strux_ok(strux_solver_epoch(r.sv));
        if (e == 2 && strcmp(solver, "cutting_plane") != 0)
            assert_int_equal(strux_alloc_calls(), calls);
        strux_certificate c;
        assert_strux_ok(strux_solver_certificate(r.sv, &c));
        assert_true(isfinite(c.primal) && c.primal >= c.loss);
        if (!dual) continue;
        assert_true(c.dual <= c.primal + 1e-12 * fabs(c.primal));
        assert_true(c.dual >= last_dual - 1e-12 * fabs(c.dual));
        last_dual = c.dual;
    }
    if (dual)
        print_message("# %s %s %s: dual after 6 epochs %.6g\n", p->task, p->surrogate, solver,
                      last_dual);
    run_close(&r);
}

static void test_dual_ascent_and_allocation(void **state)
{
    (void)state;
    for_each_case(check_ascent);
}

static void check_round_trip(const problem *p, const char *solver, strux_dataset *ds)
{
    run a, b;
    run_open(&a, p, solver, ds);
    run_open(&b, p, solver, ds);
    for (int e = 0; e < 3; e++)
        assert_strux_ok(strux_solver_epoch(a.sv));
    /* the global part, then the examples in two ranges (as two data blocks would be) */
    int64_t n = ds->n_local, h = n / 2;
    strux_blob blob = {0};
    assert_strux_ok(strux_solver_save(a.sv, &blob));
    assert_strux_ok(strux_solver_save_examples(a.sv, 0, h, &blob));
    assert_strux_ok(strux_search_save(a.s, 0, h, &blob));
    assert_strux_ok(strux_solver_save_examples(a.sv, h, n, &blob));
    assert_strux_ok(strux_search_save(a.s, h, n, &blob));
    assert_strux_ok(strux_model_copy(b.m, a.m));
    assert_strux_ok(strux_solver_load(b.sv, &blob));
    assert_strux_ok(strux_solver_load_examples(b.sv, 0, h, &blob));
    assert_strux_ok(strux_search_load(b.s, 0, h, &blob));
    assert_strux_ok(strux_solver_load_examples(b.sv, h, n, &blob));
    assert_strux_ok(strux_search_load(b.s, h, n, &blob));
    assert_int_equal(blob.pos, blob.n);
    assert_int_equal(strux_solver_epochs_done(b.sv), 3);
    for (int e = 0; e < 2; e++) {
        assert_strux_ok(strux_solver_epoch(a.sv));
        assert_strux_ok(strux_solver_epoch(b.sv));
    }
    {
        double *wa = test_model_flat(a.m), *wb = test_model_flat(b.m);
        assert_memory_equal(wa, wb, (size_t)strux_model_n_w(a.m) * sizeof *wa);
        free(wa);
        free(wb);
    }
    /* a truncated blob is refused */
    blob.pos = 0;
    blob.n /= 2;
    strux_status st = strux_solver_load(b.sv, &blob);
    if (st == STRUX_OK) st = strux_solver_load_examples(b.sv, 0, n, &blob);
    if (st == STRUX_OK) st = strux_search_load(b.s, 0, n, &blob);
    if (strcmp(solver, "sgd") != 0 || strcmp(p->surrogate, "slack") == 0)
        assert_int_not_equal(st, STRUX_OK);
    strux_blob_free(&blob);
    run_close(&a);
    run_close(&b);
}

static void test_state_round_trip(void **state)
{
    (void)state;
    for_each_case(check_round_trip);
}

static void test_state_of_another_solver_is_refused(void **state)
{
    (void)state;
    strux_dataset *ds = problem_data(&problems[0]);
    run a, b;
    run_open(&a, &problems[0], "bcfw", ds);
    run_open(&b, &problems[0], "sdca", ds);
    strux_blob blob = {0};
    assert_strux_ok(strux_solver_save(a.sv, &blob));
    assert_strux_fails(
        strux_solver_load(b.sv, &blob), STRUX_ERR_CONFIG,
        "the checkpoint holds the state of solver 'bcfw', not of solver.type = sdca");
    strux_blob_free(&blob);
    run_close(&a);
    run_close(&b);
    strux_dataset_destroy(&ds);
}

int main(int argc, char **argv)
{
    if (strux_comm_init(&argc, &argv, &comm) != STRUX_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dual_ascent_and_allocation),
        cmocka_unit_test(test_state_round_trip),
        cmocka_unit_test(test_state_of_another_solver_is_refused),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    strux_comm_finalize(&comm);
    return rc;
}
