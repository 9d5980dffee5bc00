/* tests/unit/test_solver_m3l.c - solver.type = m3l (src/solvers/m3l.c) in one process on a small
 * synthetic multilabel problem with a dense prior R, against an independent solver of the same
 * dual: accelerated projected gradient (FISTA with restarts) on
 *     D(α) = (1/n)·Σ α_il − (1/(2λn²))·Σ K_ij·R_kl·y_ik·α_ik·y_jl·α_jl,   α ∈ [0, 1]^{n×L}
 * (specs/m3l.md §1.7 in strux's units, C = 1/(λn)), formed from the Gram matrix of the rows and R,
 * never from the solver's weights. Checks: the dual never decreases from epoch to epoch and stays
 * below the primal; m3l's certified optimum equals the projected-gradient optimum to 1e-8; the
 * primal at the trained Z computed with an explicit R⁻¹ (Gauss-Jordan here) equals the reported
 * primal; shrinking on and off reach one optimum; the checkpoint state continues bit-identically. */
#include "test_common.h"

#include "strux/solver.h"
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 40
#define DIM 5
#define L 4
#define LAMBDA 0.05

static strux_comm *comm;

static const double R0[L][L] = {
    {1.0, 0.5, -0.3, 0.2}, {0.5, 1.0, 0.1, 0.0}, {-0.3, 0.1, 1.0, 0.4}, {0.2, 0.0, 0.4, 1.0}};

typedef struct run {
    strux_task *t;
    strux_model *m;
    strux_search *s;
    strux_solver *sv;
} run;

static const char *r_file(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/m3l_R.txt", test_tmpdir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# a dense PD prior\n");
    for (int k = 0; k < L; k++)
        fprintf(f, "%.17g %.17g %.17g %.17g\n", R0[k][0], R0[k][1], R0[k][2], R0[k][3]);
    fclose(f);
    return path;
}

static void run_open(run *r, strux_dataset *ds, int shrinking)
{
    strux_task_options to;
    assert_strux_ok(strux_opt_defaults(strux_task_opt_specs, &to));
    assert_strux_ok(strux_task_create(&to, &r->t));
    assert_strux_ok(strux_task_check(r->t, ds));
    int32_t rows;
    int64_t extra;
    assert_strux_ok(strux_task_model_shape(r->t, ds, &rows, &extra));
    assert_int_equal(rows, L);
    assert_strux_ok(strux_model_create(rows, ds->dim, extra, STRUX_MODEL_PLAIN, &r->m));
    strux_search_options so;
    assert_strux_ok(strux_search_options_default(&so));
    assert_strux_ok(strux_search_create(&so, r->t, ds, &r->s));
    strux_solver_options vo;
    assert_strux_ok(strux_opt_defaults(strux_solver_opt_specs, &vo));
    assert_strux_ok(strux_opt_defaults(strux_m3l_opt_specs, &vo.m3l));
    snprintf(vo.type, sizeof vo.type, "m3l");
    snprintf(vo.m3l.prior, sizeof vo.m3l.prior, "file");
    snprintf(vo.m3l.r_file, sizeof vo.m3l.r_file, "%s", r_file());
    vo.m3l.shrinking = shrinking;
    vo.lambda = LAMBDA;
    assert_strux_ok(strux_solver_create(&vo, r->t, r->s, ds, r->m, comm, &r->sv));
}

static void run_close(run *r)
{
    strux_solver_destroy(&r->sv);
    strux_search_destroy(&r->s);
    strux_model_destroy(&r->m);
    strux_task_destroy(&r->t);
}

static double y_of(const strux_dataset *ds, int64_t i, int l)
{
    for (int64_t p = ds->y_ptr[i]; p < ds->y_ptr[i + 1]; p++)
        if (ds->y_idx[p] == l) return 1.0;
    return -1.0;
}

/* The dual optimum by FISTA with adaptive restart on the box, step 1/Lip (Lip from the
 * Gershgorin bound of the Hessian). */
static double reference_dual(const strux_dataset *ds)
{
    int n = (int)ds->n_local, m = n * L;
    double *Q = calloc((size_t)m * m, sizeof *Q), *a = calloc((size_t)m, sizeof *a);
    double *z = calloc((size_t)m, sizeof *z), *g = calloc((size_t)m, sizeof *g);
    double *prev = calloc((size_t)m, sizeof *prev);
    assert_true(Q && a && z && g && prev);
    double scale = 1.0 / (LAMBDA * n * (double)n), lip = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < L; k++)
            for (int j = 0; j < n; j++)
                for (int l = 0; l < L; l++)
                    Q[(size_t)(i * L + k) * m + j * L + l] = scale * strux_sprow_dot(&ds->x, i, j) *
                                                             R0[k][l] * y_of(ds, i, k) *
                                                             y_of(ds, j, l);
    for (int p = 0; p < m; p++) {
        double row = 0;
        for (int q = 0; q < m; q++)
            row += fabs(Q[(size_t)p * m + q]);
        lip = fmax(lip, row);
    }
    double t = 1, D = 0;
    for (int it = 0; it < 200000; it++) {
        for (int p = 0; p < m; p++) {
            double s = 0;
            for (int q = 0; q < m; q++)
                s += Q[(size_t)p * m + q] * z[q];
            g[p] = 1.0 / n - s;
        }
        memcpy(prev, a, (size_t)m * sizeof *a);
        for (int p = 0; p < m; p++)
            a[p] = fmin(1, fmax(0, z[p] + g[p] / lip));
        double t1 = (1 + sqrt(1 + 4 * t * t)) / 2, dot = 0;
        for (int p = 0; p < m; p++)
            dot += g[p] * (a[p] - prev[p]);
        if (dot < 0) t1 = 1; /* restart when the momentum points downhill */
        for (int p = 0; p < m; p++)
            z[p] = a[p] + (t - 1) / t1 * (a[p] - prev[p]);
        t = t1;
        if (it % 1000 == 999) {
            double move = 0;
            for (int p = 0; p < m; p++)
                move = fmax(move, fabs(a[p] - prev[p]));
            if (move < 1e-14) break;
        }
    }
    for (int p = 0; p < m; p++) {
        double s = 0;
        for (int q = 0; q < m; q++)
            s += Q[(size_t)p * m + q] * a[q];
        D += a[p] / n - 0.5 * a[p] * s;
    }
    free(Q);
    free(a);
    free(z);
    free(g);
    free(prev);
    return D;
}

/* (λ/2)·tr(Z R⁻¹ Zᵀ) + (1/n)·Σ hinge with R⁻¹ by Gauss-Jordan. */
static double primal_explicit(const strux_dataset *ds, const strux_model *mdl)
{
    double A[L][2 * L], inv[L][L];
    for (int k = 0; k < L; k++)
        for (int l = 0; l < 2 * L; l++)
            A[k][l] = l < L ? R0[k][l] : (l - L == k);
    for (int c = 0; c < L; c++) {
        int piv = c;
        for (int r = c + 1; r < L; r++)
            if (fabs(A[r][c]) > fabs(A[piv][c])) piv = r;
        for (int l = 0; l < 2 * L; l++) {
            double tmp = A[c][l];
            A[c][l] = A[piv][l];
            A[piv][l] = tmp;
        }
        double d = A[c][c];
        for (int l = 0; l < 2 * L; l++)
            A[c][l] /= d;
        for (int r = 0; r < L; r++)
            if (r != c) {
                double f = A[r][c];
                for (int l = 0; l < 2 * L; l++)
                    A[r][l] -= f * A[c][l];
            }
    }
    for (int k = 0; k < L; k++)
        for (int l = 0; l < L; l++)
            inv[k][l] = A[k][L + l];
    int32_t dim = strux_model_dim(mdl);
    double *z = calloc((size_t)L * dim, sizeof *z);
    assert_non_null(z);
    for (int k = 0; k < L; k++)
        strux_model_get_row(mdl, k, z + (size_t)k * dim);
    double reg = 0, loss = 0;
    for (int k = 0; k < L; k++)
        for (int l = 0; l < L; l++)
            for (int j = 0; j < dim; j++)
                reg += inv[k][l] * z[(size_t)k * dim + j] * z[(size_t)l * dim + j];
    for (int64_t i = 0; i < ds->n_local; i++) {
        double s[L];
        strux_model_scores(mdl, &ds->x, i, 0, L, s);
        for (int l = 0; l < L; l++)
            loss += fmax(0, 1 - y_of(ds, i, l) * s[l]);
    }
    free(z);
    return 0.5 * LAMBDA * reg + loss / (double)ds->n_local;
}

static void test_against_projected_gradient(void **state)
{
    (void)state;
    strux_dataset *ds = synth_rows("rows", N, DIM, L, 0, 21);
    double ref = reference_dual(ds);
    double primal[2];
    for (int shrinking = 0; shrinking <= 1; shrinking++) {
        run r;
        run_open(&r, ds, shrinking);
        strux_certificate c = {0};
        double last = -INFINITY;
        for (int e = 1; e <= 4000; e++) {
            assert_strux_ok(strux_solver_epoch(r.sv));
            if (e > 30 && e % 200 != 0) continue;
            assert_strux_ok(strux_solver_certificate(r.sv, &c));
            assert_true(c.dual <= c.primal + 1e-12 * fabs(c.primal));
            assert_true(c.dual >= last - 1e-12 * fabs(last));
            last = c.dual;
            if (c.gap <= 1e-12 * c.primal) break;
        }
        print_message("# m3l (shrinking %d): primal %.12g dual %.12g gap %.3g; projected "
                      "gradient dual %.12g\n",
                      shrinking, c.primal, c.dual, c.gap, ref);
        assert_true(c.gap <= 1e-10 * c.primal);
        assert_close(c.dual, ref, 1e-8);
        assert_true(ref <= c.primal + 1e-12);
        assert_close(primal_explicit(ds, r.m), c.primal, 1e-10);
        primal[shrinking] = c.primal;
        run_close(&r);
    }
    assert_close(primal[0], primal[1], 1e-10);
    strux_dataset_destroy(&ds);
}

static void test_state_round_trip(void **state)
{
    (void)state;
    strux_dataset *ds = synth_rows("rows", N, DIM, L, 0, 22);
    run a, b;
    run_open(&a, ds, 1);
    run_open(&b, ds, 1);
    for (int e = 0; e < 5; e++)
        assert_strux_ok(strux_solver_epoch(a.sv));
    strux_blob blob = {0};
    assert_strux_ok(strux_solver_save(a.sv, &blob));
    assert_strux_ok(strux_solver_save_examples(a.sv, 0, ds->n_local, &blob));
    assert_strux_ok(strux_model_copy(b.m, a.m));
    blob.pos = 0;
    assert_strux_ok(strux_solver_load(b.sv, &blob));
    assert_strux_ok(strux_solver_load_examples(b.sv, 0, ds->n_local, &blob));
    for (int e = 0; e < 5; e++) {
        assert_strux_ok(strux_solver_epoch(a.sv));
        assert_strux_ok(strux_solver_epoch(b.sv));
    }
    double *wa = test_model_flat(a.m), *wb = test_model_flat(b.m);
    assert_memory_equal(wa, wb, (size_t)strux_model_n_w(a.m) * sizeof *wa);
    free(wa);
    free(wb);
    strux_blob_free(&blob);
    run_close(&a);
    run_close(&b);
    strux_dataset_destroy(&ds);
}

int main(int argc, char **argv)
{
    if (strux_comm_init(&argc, &argv, &comm) != STRUX_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_projected_gradient),
        cmocka_unit_test(test_state_round_trip),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    strux_comm_finalize(&comm);
    return rc;
}
