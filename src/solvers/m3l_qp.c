/* solvers/m3l_qp.c - the box-constrained sub-problems of M3L's kernel SMO (specs/m3l.md §2.2):
 * Solve1DQP (with the A4 correction: the clamped quantity is the maximiser b/a), Solve2DQP as
 * printed in §2.2 with its suggested guards (degenerate fallback to a 1-D step, bound snapping),
 * and the scalar pieces of working-set selection: the projected gradient (§2.3), the S_p guard
 * (A3) and h^max (§2.4). Pure functions of their scalars: no state, no allocation, so every MPI
 * rank solving the same scalars gets the same step (§7.2 step e). The scans over points that
 * pick l, p and q are the solver's. */
#include "m3l.h"

#include <assert.h>
#include <math.h>

static double clamp(double x, double m, double M)
{
    return x < m ? m : x > M ? M : x;
}

double strux_m3l_solve1d(double a, double b, double m, double M)
{
    assert(a >= 0 && m <= M);
    if (a > 0) return clamp(b / a, m, M); /* A4; b/a = ±Inf for tiny a still clamps right */
    /* zero curvature: maximise b·x, a linear function */
    return b > 0 ? M : b < 0 ? m : clamp(0.0, m, M);
}

/* −½ xᵀQx + gᵀx */
static double objective(double q11, double q12, double q22, const double g[2], const double x[2])
{
    return -0.5 * (q11 * x[0] * x[0] + 2.0 * q12 * x[0] * x[1] + q22 * x[1] * x[1]) + g[0] * x[0] +
           g[1] * x[1];
}

int strux_m3l_solve2d(double q11, double q12, double q22, const double g[2], const double m[2],
                      const double M[2], double x[2])
{
    double det = q11 * q22 - q12 * q12;
    if (!(det > STRUX_M3L_DET_TOL * q11 * q22)) {
        /* §2.2 guard: Q (nearly) singular, a 1-D step on the first variable (p) */
        x[0] = strux_m3l_solve1d(q11 > 0 ? q11 : 0.0, g[0], m[0], M[0]);
        x[1] = 0.0;
        return 1;
    }
    double xs[2] = {(q22 * g[0] - q12 * g[1]) / det, (q11 * g[1] - q12 * g[0]) / det}; /* Q⁻¹g */
    double x0[2] = {clamp(xs[0], m[0], M[0]), clamp(xs[1], m[1], M[1])};
    int in1 = m[0] <= xs[0] && xs[0] <= M[0], in2 = m[1] <= xs[1] && xs[1] <= M[1];
    if (in1 && in2) {
        x[0] = xs[0];
        x[1] = xs[1];
    } else if (in1) { /* only coordinate 2 out: it sits at its clamped bound */
        x[0] = strux_m3l_solve1d(q11, g[0] - q12 * x0[1], m[0], M[0]);
        x[1] = x0[1];
    } else if (in2) { /* only coordinate 1 out */
        x[0] = x0[0];
        x[1] = strux_m3l_solve1d(q22, g[1] - q12 * x0[0], m[1], M[1]);
    } else { /* both out: one of them sits at its clamped bound; try both */
        double c1[2] = {x0[0], strux_m3l_solve1d(q22, g[1] - q12 * x0[0], m[1], M[1])};
        double c2[2] = {strux_m3l_solve1d(q11, g[0] - q12 * x0[1], m[0], M[0]), x0[1]};
        const double *c =
            objective(q11, q12, q22, g, c1) >= objective(q11, q12, q22, g, c2) ? c1 : c2;
        x[0] = c[0];
        x[1] = c[1];
    }
    return 0;
}

double strux_m3l_hmax(double g_p, double g_j, double s_pj, double K_pp, double K_jj, double K_pj,
                      double R_ll)
{
    return (g_p * g_p * K_jj + g_j * g_j * K_pp - 2.0 * g_p * g_j * s_pj * K_pj) /
           (8.0 * R_ll * (K_pp * K_jj - K_pj * K_pj));
}

double strux_m3l_snap(double alpha, double C)
{
    double tol = STRUX_M3L_SNAP_TOL * C;
    if (fabs(alpha) <= tol) return 0.0;
    if (fabs(alpha - C) <= tol) return C;
    return alpha;
}
