/* solvers/m3l_kernel_t.h - the two loops of the kernel SMO's inner step that read a kernel row,
 * for one cached type: included by m3l_kernel.c once per kernel.cache_precision with T (float or
 * double) and NAME(f) (a suffix) defined. Every sum is double. */

/* Second variable (specs/m3l.md §2.4 steps 3-4, A3): over the local j ≠ p whose projected
 * gradient of label l is not 0 and that pair with p (strux_m3l_pair_ok), the largest h^max_pj
 * without its common factor 1/(8·R_ll); the first on ties. g_p = y_pl·s_pl, so
 * g_p·g_j·y_pl·y_jl = g_p·y_pl·s_jl. Returns the local index (−1: none) and *h. */
static int64_t NAME(pick_q)(const T *row_p, int64_t n, int64_t skip, const double *s_l,
                            const double *a_l, const signed char *y_l, const double *C,
                            const double *diag, double K_pp, double g_p, double y_p, double *h)
{
    int64_t best = -1;
    double best_h = -INFINITY, gy = g_p * y_p, gg = g_p * g_p;
    for (int64_t j = 0; j < n; j++) {
        if (j == skip) continue;
        double g_j = y_l[j] * s_l[j];
        if (strux_m3l_pg(a_l[j], g_j, C[j]) == 0) continue;
        double K_pj = row_p[j], K_jj = diag[j];
        if (!strux_m3l_pair_ok(K_pp, K_jj, K_pj)) continue;
        double v = (gg * K_jj + g_j * g_j * K_pp - 2 * gy * s_l[j] * K_pj) / (K_pp * K_jj - K_pj * K_pj);
        if (v > best_h) {
            best_h = v;
            best = j;
        }
    }
    *h = best_h;
    return best;
}

/* The eager update of label l and the pending flush (§2.5): t_i = K_ip·c_p (+ K_iq·c_q),
 * c = y·δ; s_il −= r4·t_i with r4 = 4·R_ll; u_i += t_i. row_q NULL: a single-variable step. */
static void NAME(update)(const T *row_p, const T *row_q, int64_t n, double c_p, double c_q,
                         double r4, double *s_l, double *u)
{
    if (row_q) {
        for (int64_t i = 0; i < n; i++) {
            double t = (double)row_p[i] * c_p + (double)row_q[i] * c_q;
            s_l[i] -= r4 * t;
            u[i] += t;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            double t = (double)row_p[i] * c_p;
            s_l[i] -= r4 * t;
            u[i] += t;
        }
    }
}
