/* tests/unit/test_m3l_prior.c - M3L label-correlation priors (specs/m3l.md §1.3, §4.2, §6 A6;
 * issue 16 "Priors", "Bad input"): the dsyevd kernel against A·v = λ·v; each empirical estimator
 * against a direct computation on a hand-made label set, with the counts split over two "ranks";
 * the R and classes text files and every malformed case; zero-shot rank; shrink; every validation
 * message; P with PᵀP = R for definite and singular R; allocation failures without leaks. The bad
 * files are written into a temporary folder from the literal text shown beside each case. */
#include "test_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solvers/m3l.h"
#include "strux/data.h"
#include "strux/linalg.h"

/* ---- helpers ---- */

/* Write text into a fresh file of the temporary folder; returns its path (static buffer). */
static const char *write_file(const char *name, const char *text)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", test_tmpdir(), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* A dataset of n rows without features whose label sets are rows[r] (ascending, ended by −1). */
static strux_dataset *label_dataset(const char *name, const int32_t rows[][8], int64_t n,
                                    int64_t first, int32_t n_labels)
{
    strux_csr x;
    assert_strux_ok(strux_csr_alloc(&x, n, 1, 0));
    int64_t *y_ptr, m = 0;
    int32_t *y_idx;
    for (int64_t r = 0; r < n; r++)
        for (int a = 0; rows[r][a] >= 0; a++)
            m++;
    assert_strux_ok(strux_alloc_array(&y_ptr, (size_t)n + 1, sizeof *y_ptr));
    assert_strux_ok(strux_alloc_array(&y_idx, (size_t)m + 1, sizeof *y_idx));
    m = 0;
    for (int64_t r = 0; r < n; r++) {
        for (int a = 0; rows[r][a] >= 0; a++)
            y_idx[m++] = rows[r][a];
        y_ptr[r + 1] = m;
    }
    strux_dataset *ds;
    assert_strux_ok(
        strux_dataset_from_arrays(name, &x, &y_ptr, &y_idx, n, first, 1, n_labels, 0, &ds));
    return ds;
}

/* max_kl |A_kl − B_kl| */
static double max_diff(const double *A, const double *B, int64_t n)
{
    double d = 0;
    for (int64_t k = 0; k < n; k++)
        d = fmax(d, fabs(A[k] - B[k]));
    return d;
}

/* PᵀP == R to tol·max(1, max|R|) and the reported extreme eigenvalues bracket R's diagonal. */
static void assert_factor(const double *R, int32_t L, double tol)
{
    double P[64], PtP[64], lo, hi;
    assert_true(L <= 8);
    assert_strux_ok(strux_m3l_prior_factor(R, L, "test", P, &lo, &hi));
    double scale = 1.0;
    for (int k = 0; k < L * L; k++)
        scale = fmax(scale, fabs(R[k]));
    for (int k = 0; k < L; k++)
        for (int l = 0; l < L; l++) {
            double s = 0;
            for (int m = 0; m < L; m++)
                s += P[m * L + k] * P[m * L + l];
            PtP[k * L + l] = s;
        }
    assert_true(max_diff(PtP, R, L * L) <= tol * scale);
    for (int l = 0; l < L; l++)
        assert_true(lo <= R[l * L + l] + 1e-12 && R[l * L + l] <= hi + 1e-12);
}

/* Gram matrix B·Bᵀ of a random normal L×r matrix B: PSD of rank min(r, L), positive diagonal. */
static void random_gram(strux_rng *rng, int32_t L, int32_t r, double *R)
{
    double B[128];
    assert_true(L * r <= 128);
    for (int k = 0; k < L * r; k++)
        B[k] = strux_rng_normal(rng);
    for (int k = 0; k < L; k++)
        for (int l = 0; l < L; l++) {
            double s = 0;
            for (int m = 0; m < r; m++)
                s += B[k * r + m] * B[l * r + m];
            R[k * L + l] = s;
        }
}

/* A bad text file and the message it must give (STRUX_ERR_INPUT). */
typedef struct bad_file {
    const char *text, *needle;
} bad_file;

/* Each case written to name and read by a prior reader with n_labels labels. */
static void assert_bad_files(strux_status (*read)(const char *, int32_t, double *),
                             const char *name, const bad_file *bad, size_t n, int32_t n_labels)
{
    double R[16];
    assert_true(n_labels <= 4);
    for (size_t c = 0; c < n; c++)
        assert_strux_fails(read(write_file(name, bad[c].text), n_labels, R), STRUX_ERR_INPUT,
                           bad[c].needle);
}

/* ---- the eigen kernel ---- */

static void test_sym_eig(void **state)
{
    (void)state;
    strux_blas_init();
    strux_rng rng;
    strux_rng_init(&rng, 7, 0, 0);
    enum { n = 6 };
    double A[n * n], V[n * n], lambda[n];
    for (int k = 0; k < n; k++)
        for (int l = 0; l <= k; l++)
            A[k * n + l] = A[l * n + k] = strux_rng_normal(&rng);
    memcpy(V, A, sizeof A);
    assert_strux_ok(strux_sym_eig(n, V, lambda));
    for (int j = 0; j < n; j++) {
        if (j > 0) assert_true(lambda[j - 1] <= lambda[j]);
        for (int k = 0; k < n; k++) { /* (A v_j)_k = λ_j v_jk, row j of V is v_j */
            double s = 0;
            for (int l = 0; l < n; l++)
                s += A[k * n + l] * V[j * n + l];
            assert_true(fabs(s - lambda[j] * V[j * n + k]) < 1e-12);
        }
        for (int i = 0; i < n; i++) /* orthonormal rows */
            assert_true(fabs(strux_dot(n, V + i * n, V + j * n) - (i == j)) < 1e-12);
    }
    /* only the upper triangle (row-major) is read */
    double U[n * n], mu[n];
    memcpy(U, A, sizeof A);
    for (int k = 0; k < n; k++)
        for (int l = 0; l < k; l++)
            U[k * n + l] = 999;
    assert_strux_ok(strux_sym_eig(n, U, mu));
    for (int j = 0; j < n; j++)
        assert_true(fabs(mu[j] - lambda[j]) < 1e-12);
    assert_strux_ok(strux_sym_eig(0, V, lambda));
    assert_strux_fails(strux_sym_eig(40000, V, lambda), STRUX_ERR_UNSUPPORTED, "40000 × 40000");
}

/* ---- builders ---- */

static void test_identity(void **state)
{
    (void)state;
    double R[9];
    strux_m3l_prior_identity(3, R);
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < 3; l++)
            assert_true(R[k * 3 + l] == (k == l));
    assert_factor(R, 3, 1e-15);
}

/* Eight rows over five labels: 0..2 vary, 3 is in no row, 4 is in every row (no variance). */
enum { N_ROWS = 8, L5 = 5 };
static const int32_t hand_rows[N_ROWS][8] = {
    {0, 1, 4, -1},    {0, 4, -1}, {1, 2, 4, -1}, {4, -1},
    {0, 1, 2, 4, -1}, {2, 4, -1}, {0, 4, -1},    {1, 4, -1},
};

/* Direct computation of the three estimators from the dense indicator matrix. */
static void direct_estimates(double moment[L5 * L5], double cooc[L5 * L5], double pearson[L5 * L5])
{
    double a[N_ROWS][L5] = {{0}}; /* 0/1 indicators */
    for (int r = 0; r < N_ROWS; r++)
        for (int t = 0; hand_rows[r][t] >= 0; t++)
            a[r][hand_rows[r][t]] = 1;
    double mean[L5] = {0}, sd[L5] = {0};
    for (int k = 0; k < L5; k++) {
        for (int r = 0; r < N_ROWS; r++)
            mean[k] += a[r][k] / N_ROWS;
        for (int r = 0; r < N_ROWS; r++)
            sd[k] += (a[r][k] - mean[k]) * (a[r][k] - mean[k]);
        sd[k] = sqrt(sd[k]);
    }
    for (int k = 0; k < L5; k++)
        for (int l = 0; l < L5; l++) {
            double yy = 0, both = 0, cov = 0;
            for (int r = 0; r < N_ROWS; r++) {
                yy += (2 * a[r][k] - 1) * (2 * a[r][l] - 1);
                both += a[r][k] * a[r][l];
                cov += (a[r][k] - mean[k]) * (a[r][l] - mean[l]);
            }
            double nk = mean[k] * N_ROWS, nl = mean[l] * N_ROWS;
            int unit = sd[k] == 0 || sd[l] == 0; /* labels 3 and 4 */
            double e = k == l;
            moment[k * L5 + l] = unit ? e : yy / N_ROWS;
            cooc[k * L5 + l] = unit ? e : both / sqrt(nk * nl);
            pearson[k * L5 + l] = unit ? e : cov / (sd[k] * sd[l]);
        }
}

static void test_empirical(void **state)
{
    (void)state;
    /* the rows split over two "ranks", counts summed as the allreduce will */
    strux_dataset *d0 = label_dataset("part0", hand_rows, 3, 0, L5);
    strux_dataset *d1 = label_dataset("part1", hand_rows + 3, N_ROWS - 3, 3, L5);
    int64_t len = strux_m3l_prior_counts_len(L5);
    assert_int_equal(len, 1 + L5 * L5);
    double c0[1 + L5 * L5] = {0}, c1[1 + L5 * L5] = {0}, whole[1 + L5 * L5] = {0};
    assert_strux_ok(strux_m3l_prior_counts_add(d0, L5, c0));
    assert_strux_ok(strux_m3l_prior_counts_add(d1, L5, c1));
    assert_strux_ok(strux_m3l_prior_counts_add(d0, L5, whole));
    assert_strux_ok(strux_m3l_prior_counts_add(d1, L5, whole));
    for (int k = 0; k < len; k++)
        assert_true(c0[k] + c1[k] == whole[k]);
    assert_true(whole[0] == N_ROWS);
    assert_true(whole[1 + 0 * L5 + 1] == 2); /* rows 0 and 4 hold labels 0 and 1 */
    assert_true(whole[1 + 4 * L5 + 4] == N_ROWS);

    double moment[L5 * L5], cooc[L5 * L5], pearson[L5 * L5], R[L5 * L5];
    direct_estimates(moment, cooc, pearson);
    strux_m3l_prior_empirical(whole, L5, STRUX_M3L_EMPIRICAL_MOMENT, R);
    assert_true(max_diff(R, moment, L5 * L5) < 1e-15);
    assert_true(R[0 * L5 + 1] == 0.0); /* hand: labels 0, 1 agree in rows 0, 3, 4, 5, of 8 */
    assert_true(fabs(R[0 * L5 + 2] - (-0.25)) < 1e-15); /* agree in rows 3, 4, 7: (3 − 5)/8 */
    assert_factor(R, L5, 1e-12);
    strux_m3l_prior_empirical(whole, L5, STRUX_M3L_EMPIRICAL_COOCCURRENCE, R);
    assert_true(max_diff(R, cooc, L5 * L5) < 1e-15);
    assert_true(fabs(R[0 * L5 + 1] - 2.0 / 4.0) < 1e-15); /* n_01 = 2, n_0 = n_1 = 4 */
    assert_factor(R, L5, 1e-12);
    strux_m3l_prior_empirical(whole, L5, STRUX_M3L_EMPIRICAL_CORRELATION, R);
    assert_true(max_diff(R, pearson, L5 * L5) < 1e-14);
    assert_factor(R, L5, 1e-12);
    for (int l = 0; l < L5; l++)
        assert_close(R[l * L5 + l], 1.0, 1e-15);
    for (int k = 0; k < L5; k++) /* unit rows and columns for labels 3 (none) and 4 (all) */
        for (int t = 3; t < 5; t++)
            assert_true(R[k * L5 + t] == (k == t) && R[t * L5 + k] == (k == t));

    /* no rows at all: R = I; the estimator names */
    double none[1 + L5 * L5] = {0};
    strux_m3l_prior_empirical(none, L5, STRUX_M3L_EMPIRICAL_MOMENT, R);
    for (int k = 0; k < L5; k++)
        for (int l = 0; l < L5; l++)
            assert_true(R[k * L5 + l] == (k == l));
    assert_string_equal(strux_m3l_empirical_name(STRUX_M3L_EMPIRICAL_COOCCURRENCE), "cooccurrence");
    assert_string_equal(strux_m3l_empirical_name(STRUX_M3L_EMPIRICAL_CORRELATION), "correlation");
    assert_string_equal(strux_m3l_empirical_name(STRUX_M3L_EMPIRICAL_MOMENT), "moment");

    /* prior data with more labels than the model: the file and the global row */
    assert_strux_fails(strux_m3l_prior_counts_add(d1, 3, c1), STRUX_ERR_INPUT,
                       "part1: row 4 has label 4, but the prior has 3 labels");
    strux_dataset_destroy(&d0);
    strux_dataset_destroy(&d1);
}

/* Every estimator on random label sets is a legal prior (each is a Gram matrix, and a unit row
 * and column keeps it PSD) with a unit diagonal, entries in [−1, 1] and P with PᵀP = R. */
static void test_empirical_random(void **state)
{
    (void)state;
    enum { L = 8, N = 40 };
    strux_rng rng;
    strux_rng_init(&rng, 13, 0, 0);
    int32_t rows[N][8];
    for (int t = 0; t < 50; t++) {
        for (int r = 0; r < N; r++) {
            int m = 0;
            for (int k = 0; k < 7; k++) /* label k with probability (k + 1)/8; label 7 never */
                if (strux_rng_uniform(&rng) < (k + 1) / 8.0 || (t % 5 == 0 && k == 6))
                    rows[r][m++] = k;
            rows[r][m] = -1;
        }
        strux_dataset *ds = label_dataset("random", (const int32_t(*)[8])rows, N, 0, L);
        double counts[1 + L * L] = {0}, R[L * L];
        assert_strux_ok(strux_m3l_prior_counts_add(ds, L, counts));
        strux_dataset_destroy(&ds);
        for (int e = 0; e < 3; e++) {
            strux_m3l_prior_empirical(counts, L, (strux_m3l_empirical)e, R);
            for (int k = 0; k < L; k++) {
                assert_close(R[k * L + k], 1.0, 1e-15);
                for (int l = 0; l < L; l++)
                    assert_true(fabs(R[k * L + l]) <= 1 + 1e-15);
            }
            assert_strux_ok(strux_m3l_prior_check(R, L, "random"));
            assert_factor(R, L, 1e-12);
        }
    }
}

static void test_read_file(void **state)
{
    (void)state;
    double R[9];
    const char *p = write_file("r_good.txt", "# a 3-label prior\n"
                                             "1   0.5 0\n"
                                             "\n"
                                             "  # indented comment\n"
                                             "0.5,1,-0.25\r\n"
                                             "0 -0.25 2e0");
    assert_strux_ok(strux_m3l_prior_read(p, 3, R));
    const double want[9] = {1, 0.5, 0, 0.5, 1, -0.25, 0, -0.25, 2};
    assert_memory_equal(R, want, sizeof want);

    const bad_file bad[] = {
        {"1 0 0\n0 x 0\n0 0 1\n", "r_bad.txt:2: 'x' is not a number"},
        {"1 0 0\n0 1 0\n0 0 1.5.2\n", "r_bad.txt:3: '1.5.2' is not a number"},
        {"1 0 0\n# c\n0 nan 0\n0 0 1\n", "r_bad.txt:3: 'nan' is not a finite number"},
        {"1 0 0\n0 1 0\n0 0 inf\n", "r_bad.txt:3: 'inf' is not a finite number"},
        {"1 0 0\n0 1e999 0\n0 0 1\n", "r_bad.txt:2: '1e999' is not a finite number"},
        {"1 0 0\n0 1\n0 0 1\n", "r_bad.txt:2: 2 numbers, but the first row (line 1) has 3"},
        {"1 0\n0 1\n", "is 2 × 2, but the data has 3 labels (R must be 3 × 3)"},
        {"1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n", "is 4 × 4, but the data has 3 labels"},
        {"1 0 0\n0 1 0\n0 0 1\n0 0 0\n", "is 4 × 3, but the data has 3 labels"},
        {"# nothing\n\n", "r_bad.txt: no rows; R must be 3 × 3"},
    };
    assert_bad_files(strux_m3l_prior_read, "r_bad.txt", bad, sizeof bad / sizeof bad[0], 3);
    assert_strux_fails(strux_m3l_prior_read("/nonexistent/r.txt", 3, R), STRUX_ERR_IO,
                       "/nonexistent/r.txt: cannot open the prior R");

    /* a row longer than any fixed buffer */
    enum { big = 300 };
    static char text[big * big * 3 + big];
    static double Rb[big * big];
    char *t = text;
    for (int k = 0; k < big; k++) {
        for (int l = 0; l < big; l++)
            t += sprintf(t, l ? " %d" : "%d", k == l);
        *t++ = '\n';
    }
    *t = '\0';
    assert_strux_ok(strux_m3l_prior_read(write_file("r_big.txt", text), big, Rb));
    assert_true(Rb[299 * big + 299] == 1 && Rb[299 * big + 298] == 0 && Rb[1] == 0);
}

static void test_zero_shot(void **state)
{
    (void)state;
    enum { L = 4 };
    double R[L * L];
    /* weights 2, 1, 1 → p = 1/2, 1/4, 1/4; the third class has no label */
    const char *p = write_file("classes.txt", "# p labels\n"
                                              "2 0,2\n"
                                              "\n"
                                              "1 1,3   \n"
                                              "1\n");
    assert_strux_ok(strux_m3l_prior_zero_shot(p, L, R));
    const double y[3][L] = {{1, -1, 1, -1}, {-1, 1, -1, 1}, {-1, -1, -1, -1}};
    const double w[3] = {0.5, 0.25, 0.25};
    for (int k = 0; k < L; k++)
        for (int l = 0; l < L; l++) {
            double s = 0;
            for (int c = 0; c < 3; c++)
                s += w[c] * y[c][k] * y[c][l];
            assert_true(fabs(R[k * L + l] - s) < 1e-15);
        }
    assert_factor(R, L, 1e-12);

    /* rank ≤ classes: 3 random classes over 8 labels */
    enum { L8 = 8 };
    double R8[L8 * L8], V[L8 * L8], lambda[L8], lo, hi;
    p = write_file("classes8.txt", "0.2 0,1,2,7\n0.5 3,4\n0.3 1,2,5,6\n");
    assert_strux_ok(strux_m3l_prior_zero_shot(p, L8, R8));
    memcpy(V, R8, sizeof R8);
    assert_strux_ok(strux_sym_eig(L8, V, lambda));
    int rank = 0;
    for (int k = 0; k < L8; k++)
        rank += lambda[k] > 1e-12 * lambda[L8 - 1];
    assert_true(rank <= 3);
    for (int l = 0; l < L8; l++)
        assert_close(R8[l * L8 + l], 1.0, 1e-15); /* §4.2: R_ll = 1 */
    assert_factor(R8, L8, 1e-12);                 /* singular: A6 */
    assert_strux_ok(strux_m3l_prior_factor(R8, L8, "zero-shot", NULL, &lo, &hi));
    assert_true(fabs(lo) < 1e-12);
    assert_close(hi, lambda[L8 - 1], 1e-12);

    const bad_file bad[] = {
        {"1 0\n0 1\n", "cls_bad.txt:2: class weight 0 must be positive"},
        {"-1 0\n", "cls_bad.txt:1: class weight -1 must be positive"},
        {"1 0\ninf 1\n", "cls_bad.txt:2: class weight inf must be positive and finite"},
        {"x 0\n", "cls_bad.txt:1: expected 'p l1,l2,...'"},
        {"0.5,1\n", "cls_bad.txt:1: expected 'p l1,l2,...'"},
        {"1 0,4\n", "cls_bad.txt:1: label 4 is outside [0, 4)"},
        {"1 -1\n", "cls_bad.txt:1: label -1 is outside [0, 4)"},
        {"1 0,2,0\n", "cls_bad.txt:1: label 0 appears twice"},
        {"1 0,,2\n", "cls_bad.txt:1: a label id must follow ','"},
        {"1 0,\n", "cls_bad.txt:1: a label id must follow ','"},
        {"1 0 2\n", "cls_bad.txt:1: expected 'p l1,l2,...' (labels separated by commas)"},
        {"1 a\n", "cls_bad.txt:1: 'a' is not a label id"},
        {"1 1.5\n", "cls_bad.txt:1: '1.5' is not a label id"},
        {"# only a comment\n", "cls_bad.txt: no classes"},
        {"1e308 0\n1e308 1\n", "cls_bad.txt: the class weights sum to inf"},
    };
    assert_bad_files(strux_m3l_prior_zero_shot, "cls_bad.txt", bad, sizeof bad / sizeof bad[0], L);
    assert_strux_fails(strux_m3l_prior_zero_shot("/nonexistent/c.txt", L, R), STRUX_ERR_IO,
                       "/nonexistent/c.txt: cannot open the zero-shot classes");
}

static void test_shrink(void **state)
{
    (void)state;
    enum { L = 3 };
    const double R0[L * L] = {2, -1, 0.5, -1, 1, 0.25, 0.5, 0.25, 3};
    double R[L * L];
    memcpy(R, R0, sizeof R);
    strux_m3l_prior_shrink(L, 0.0, R);
    assert_memory_equal(R, R0, sizeof R);
    strux_m3l_prior_shrink(L, 1.0, R);
    for (int k = 0; k < L; k++)
        for (int l = 0; l < L; l++)
            assert_true(R[k * L + l] == (k == l));
    memcpy(R, R0, sizeof R);
    strux_m3l_prior_shrink(L, 0.25, R);
    for (int k = 0; k < L; k++)
        for (int l = 0; l < L; l++)
            assert_close(R[k * L + l], 0.75 * R0[k * L + l] + 0.25 * (k == l), 1e-15);

    /* the Fig. 5 sweep at r = ±1 is singular but legal; shrink makes it definite */
    double r2[4] = {1, -1, -1, 1}, lo, hi;
    assert_factor(r2, 2, 1e-15);
    strux_m3l_prior_shrink(2, 0.5, r2);
    assert_strux_ok(strux_m3l_prior_factor(r2, 2, "test", NULL, &lo, &hi));
    assert_close(lo, 0.5, 1e-15);
    assert_close(hi, 1.5, 1e-15);

    /* the shrink named by the indefinite message is the smallest that works: [[1, 2], [2, 1]] has
     * λ_min = −1, so s ≥ 1/2 */
    double bad[4] = {1, 2, 2, 1};
    assert_strux_fails(strux_m3l_prior_factor(bad, 2, "test", NULL, &lo, &hi), STRUX_ERR_INPUT,
                       "set m3l.shrink ≥ 0.5 ");
    memcpy(R, bad, sizeof bad);
    strux_m3l_prior_shrink(2, 0.5 - 1e-3, R);
    assert_strux_fails(strux_m3l_prior_factor(R, 2, "test", NULL, &lo, &hi), STRUX_ERR_INPUT,
                       "indefinite");
    memcpy(R, bad, sizeof bad);
    strux_m3l_prior_shrink(2, 0.5, R);
    assert_strux_ok(strux_m3l_prior_factor(R, 2, "test", NULL, &lo, &hi));
    assert_true(fabs(lo) < 1e-15);
}

static void test_validation_messages(void **state)
{
    (void)state;
    enum { L = 4 };
    double R[L * L], P[L * L], lo, hi;

    strux_m3l_prior_identity(L, R);
    R[1 * L + 2] = 0.3;
    R[2 * L + 1] = 0.25;
    assert_strux_fails(strux_m3l_prior_check(R, L, "m3l.r_file = r.txt"), STRUX_ERR_INPUT,
                       "R (m3l.r_file = r.txt) is not symmetric: R(1, 2) = 0.29999999999999999 "
                       "but R(2, 1) = 0.25");
    assert_strux_fails(strux_m3l_prior_factor(R, L, "x", P, &lo, &hi), STRUX_ERR_INPUT,
                       "not symmetric");
    R[2 * L + 1] = 0.3 + 0.5e-12; /* within 1e-12·max|R| = 1e-12 */
    assert_strux_ok(strux_m3l_prior_check(R, L, "x"));
    R[2 * L + 1] = 0.3 + 2e-12;
    assert_strux_fails(strux_m3l_prior_check(R, L, "x"), STRUX_ERR_INPUT, "tolerance 1e-12");

    strux_m3l_prior_identity(L, R); /* labels 1 and 3 make it indefinite: eigenvalue −1 */
    R[1 * L + 3] = R[3 * L + 1] = 2;
    assert_strux_fails(strux_m3l_prior_factor(R, L, "empirical", P, &lo, &hi), STRUX_ERR_INPUT,
                       "R (empirical) is indefinite: smallest eigenvalue -1 (largest 3); its "
                       "eigenvector weighs most labels ");
    const char *msg = strux_error_message(); /* labels 1 and 3 (±0.707) in either order, only */
    assert_true(strstr(msg, "1 (0.707)") || strstr(msg, "1 (-0.707)"));
    assert_true(strstr(msg, "3 (0.707)") || strstr(msg, "3 (-0.707)"));
    assert_null(strstr(msg, "0 ("));
    assert_null(strstr(msg, "2 ("));
    assert_non_null(strstr(msg, "; set m3l.shrink ≥ 0.5 to move R towards I"));
    /* slightly negative within −1e-10·λ_max is PSD */
    strux_m3l_prior_identity(L, R);
    R[0] = R[1] = R[L] = R[L + 1] = 1.0;
    R[1] = R[L] = 1.0 + 1e-11; /* eigenvalue −1e-11 ≥ −1e-10·(2 + 1e-11) */
    assert_strux_ok(strux_m3l_prior_factor(R, L, "x", P, &lo, &hi));
    assert_true(lo < 0 && lo > -2e-10);
    R[1] = R[L] = 1.0 + 1e-9;
    assert_strux_fails(strux_m3l_prior_factor(R, L, "x", P, &lo, &hi), STRUX_ERR_INPUT,
                       "indefinite");

    strux_m3l_prior_identity(L, R);
    R[2 * L + 2] = 0;
    assert_strux_fails(strux_m3l_prior_check(R, L, "x"), STRUX_ERR_INPUT,
                       "R (x) has R_ll = 0 ≤ 0 for label 2; the diagonal must be positive");
    R[2 * L + 2] = -1;
    assert_strux_fails(strux_m3l_prior_check(R, L, "x"), STRUX_ERR_INPUT, "R_ll = -1 ≤ 0");
    strux_m3l_prior_identity(L, R);
    R[0 * L + 3] = NAN;
    assert_strux_fails(strux_m3l_prior_check(R, L, "x"), STRUX_ERR_INPUT,
                       "R (x) has nan at (0, 3)");
    R[0 * L + 3] = 0;
    R[3 * L + 3] = -INFINITY;
    assert_strux_fails(strux_m3l_prior_factor(R, L, "x", P, &lo, &hi), STRUX_ERR_INPUT,
                       "R (x) has -inf at (3, 3)");

    assert_strux_ok(strux_m3l_prior_check_size(4, 4, 4, "model.h5:/m3l/R"));
    assert_strux_fails(strux_m3l_prior_check_size(3, 4, 5, "model.h5:/m3l/R"), STRUX_ERR_INPUT,
                       "R (model.h5:/m3l/R) is 3 × 4, but the data has 5 labels (R must be 5 × 5)");
}

static void test_factor(void **state)
{
    (void)state;
    strux_rng rng;
    strux_rng_init(&rng, 11, 0, 0);
    double R[64];
    for (int32_t L = 1; L <= 8; L++) {
        for (int32_t r = 1; r <= L + 1; r++) { /* rank min(r, L): singular for r < L */
            random_gram(&rng, L, r, R);
            assert_factor(R, L, 1e-12);
        }
    }
    double one[4] = {1, 1, 1, 1}, lo, hi; /* rank one, labels always together */
    assert_factor(one, 2, 1e-15);
    assert_strux_ok(strux_m3l_prior_factor(one, 2, "x", NULL, &lo, &hi));
    assert_true(fabs(lo) < 1e-15);
    assert_close(hi, 2, 1e-15);
    assert_strux_ok(strux_m3l_prior_factor(one, 0, "x", NULL, &lo, &hi)); /* no labels */
}

/* Every allocation failing in turn: the status is NOMEM and no byte leaks. */
static void test_alloc_failures(void **state)
{
    (void)state;
    enum { L = 3 };
    double R[L * L] = {2, 1, 0, 1, 2, 0, 0, 0, 1}, P[L * L], lo, hi;
    char cls[4096], rfile[4096]; /* write_file's buffer is static */
    snprintf(cls, sizeof cls, "%s", write_file("cls_alloc.txt", "1 0,1\n2 2\n"));
    snprintf(rfile, sizeof rfile, "%s", write_file("r_alloc.txt", "1 0 0\n0 1 0\n0 0 1\n"));
    for (int what = 0; what < 3; what++) {
        for (int64_t n = 0;; n++) {
            size_t before = strux_alloc_bytes();
            strux_alloc_fail_after(n);
            strux_status st = what == 0   ? strux_m3l_prior_factor(R, L, "x", P, &lo, &hi)
                              : what == 1 ? strux_m3l_prior_zero_shot(cls, L, P)
                                          : strux_m3l_prior_read(rfile, L, P);
            strux_alloc_fail_after(-1);
            assert_int_equal(strux_alloc_bytes(), before);
            if (st == STRUX_OK) break;
            assert_int_equal(st, STRUX_ERR_NOMEM);
            assert_true(n < 10);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sym_eig),   cmocka_unit_test(test_identity),
        cmocka_unit_test(test_empirical), cmocka_unit_test(test_empirical_random),
        cmocka_unit_test(test_read_file), cmocka_unit_test(test_zero_shot),
        cmocka_unit_test(test_shrink),    cmocka_unit_test(test_validation_messages),
        cmocka_unit_test(test_factor),    cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
