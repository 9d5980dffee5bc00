/* solvers/rates_cut.c - the one-dimensional cut models of rate-constrained training
 * (dataset_constraints.md §3.4, §3.5): the concave model h(v) = min_s u_s + g_s (v − v_s) of the
 * multiplier search with its E.2 centroid and level-set midpoint (one constraint), and the convex
 * model h'(b) = max_s l_s + g_s (b − b_s) of the bias search with its F.2.1 minimiser and F.2.2
 * centroid. Each works on the breakpoints of the envelope: candidates are the interval's ends and
 * the pairwise intersections of the lines, between which the envelope is linear (O(n² log n) for
 * n cuts, a few dozen at most). The LP of E.1 is rates_mm.c's (any number of constraints). Not
 * Collective; no MPI, no data. */
#include "rates_impl.h"

#include <math.h>
#include <stdlib.h>

double strux_rates_envelope(int32_t n, const double *u, const double *g, const double *vs,
                            double v)
{
    double h = INFINITY;
    for (int32_t s = 0; s < n; s++)
        h = fmin(h, u[s] + g[s] * (v - vs[s]));
    return h;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The breakpoints of min_s u_s + g_s (v − v_s) on [lo, hi], ascending, ends included, into
 * *out (caller frees) and *n_out. */
static strux_status breakpoints(int32_t n, const double *u, const double *g, const double *vs,
                                double lo, double hi, double **out, int32_t *n_out)
{
    double *p = NULL;
    STRUX_TRY(strux_alloc_array(&p, (size_t)n * (size_t)n / 2 + (size_t)n + 3, sizeof *p));
    int32_t k = 0;
    p[k++] = lo;
    p[k++] = hi;
    for (int32_t a = 0; a < n; a++)
        for (int32_t b = a + 1; b < n; b++) {
            if (g[a] == g[b]) continue;
            double v = (u[b] - g[b] * vs[b] - u[a] + g[a] * vs[a]) / (g[a] - g[b]);
            if (v > lo && v < hi) p[k++] = v;
        }
    qsort(p, (size_t)k, sizeof *p, cmp_double);
    int32_t q = 0;
    for (int32_t i = 0; i < k; i++)
        if (q == 0 || p[i] > p[q - 1]) p[q++] = p[i];
    *out = p;
    *n_out = q;
    return STRUX_OK;
}

/* The polygon {(v, z): lo ≤ v ≤ hi, L ≤ z ≤ h(v)} of the concave envelope h as its upper chain
 * (v_k, h(v_k)) from left to right over the interval where h ≥ L (the chain's ends on z = L
 * unless they are lo or hi), into pv, pz (room for the breakpoints plus 2) and *np. */
static strux_status level_chain(int32_t n, const double *u, const double *g, const double *vs,
                                double lo, double hi, double L, double **pv, double **pz,
                                int32_t *np)
{
    double *p = NULL;
    int32_t k;
    STRUX_TRY(breakpoints(n, u, g, vs, lo, hi, &p, &k));
    strux_status st = strux_alloc_array(pv, (size_t)k + 2, sizeof **pv);
    if (st == STRUX_OK) st = strux_alloc_array(pz, (size_t)k + 2, sizeof **pz);
    int32_t q = 0;
    for (int32_t i = 0; st == STRUX_OK && i < k; i++) {
        double h = strux_rates_envelope(n, u, g, vs, p[i]);
        if (i > 0) { /* the segment [p[i-1], p[i]] crosses z = L */
            double h0 = strux_rates_envelope(n, u, g, vs, p[i - 1]);
            if ((h0 < L) != (h < L)) {
                (*pv)[q] = p[i - 1] + (L - h0) * (p[i] - p[i - 1]) / (h - h0);
                (*pz)[q++] = L;
            }
        }
        if (h >= L) {
            (*pv)[q] = p[i];
            (*pz)[q++] = h;
        }
    }
    strux_free(&p);
    *np = q;
    return st;
}

/* Centroid of the polygon under the chain (pv, pz) and above z = L (shoelace formula). */
static strux_status chain_centroid(const double *pv, const double *pz, int32_t np, double L,
                                   double *cv, double *cz)
{
    STRUX_CHECK(np >= 2, STRUX_ERR_NUMERIC,
                "the cut model's region above the lower bound %.9g has no area", L);
    /* vertices: the chain left to right, then (v_last, L) and (v_0, L); coordinates relative to
     * the first vertex, so that large offsets do not cancel */
    double A = 0, X = 0, Z = 0, v0 = pv[0], z0 = L;
    int32_t nv = np + 2;
    for (int32_t i = 0; i < nv; i++) {
        int32_t j = (i + 1) % nv;
        double xa = (i < np ? pv[i] : i == np ? pv[np - 1] : pv[0]) - v0;
        double za = (i < np ? pz[i] : L) - z0;
        double xb = (j < np ? pv[j] : j == np ? pv[np - 1] : pv[0]) - v0;
        double zb = (j < np ? pz[j] : L) - z0;
        double cr = xb * za - xa * zb; /* the chain runs left to right above L: clockwise */
        A += cr;
        X += (xa + xb) * cr;
        Z += (za + zb) * cr;
    }
    STRUX_CHECK(A > 0, STRUX_ERR_NUMERIC,
                "the cut model's region above the lower bound %.9g has no area", L);
    *cv = v0 + X / (3 * A);
    *cz = z0 + Z / (3 * A);
    return STRUX_OK;
}

static strux_status center_on(int32_t n, const double *u, const double *g, const double *vs,
                              double lo, double hi, double L, double *v, double *z)
{
    double *pv = NULL, *pz = NULL;
    int32_t np = 0;
    strux_status st = level_chain(n, u, g, vs, lo, hi, L, &pv, &pz, &np);
    if (st == STRUX_OK) st = chain_centroid(pv, pz, np, L, v, z);
    strux_free(&pv);
    strux_free(&pz);
    return st;
}

strux_status strux_rates_center(int32_t n, const double *u, const double *g, const double *vs,
                                double V, double L, double *v, double *z)
{
    return center_on(n, u, g, vs, 0, V, L, v, z);
}

strux_status strux_rates_midpoint(int32_t n, const double *u, const double *g, const double *vs,
                                  double V, double L, double *v)
{
    double *pv = NULL, *pz = NULL;
    int32_t np = 0;
    strux_status st = level_chain(n, u, g, vs, 0, V, L, &pv, &pz, &np);
    if (st == STRUX_OK && np == 0)
        st = strux_error_set(STRUX_ERR_NUMERIC, __FILE__, __LINE__, __func__,
                             "the cut model stays below the lower bound %.9g", L);
    if (st == STRUX_OK) *v = 0.5 * (pv[0] + pv[np - 1]);
    strux_free(&pv);
    strux_free(&pz);
    return st;
}

/* The bias model is the mirror image: h'(b) = −min_s (−l_s) + (−g_s)(b − b_s). */
static strux_status negated(int32_t n, const double *l, const double *g, double **nl, double **ng)
{
    STRUX_TRY(strux_alloc_array(nl, (size_t)n + 1, sizeof **nl));
    STRUX_TRY(strux_alloc_array(ng, (size_t)n + 1, sizeof **ng));
    for (int32_t s = 0; s < n; s++) {
        (*nl)[s] = -l[s];
        (*ng)[s] = -g[s];
    }
    return STRUX_OK;
}

strux_status strux_rates_bias_min(int32_t n, const double *l, const double *g, const double *bs,
                                  double lo, double hi, double *b, double *val)
{
    /* the envelope is linear between breakpoints, so its minimum is at one; the minimisers form
     * an interval, whose middle is taken (a flat stretch does not send b to an end of B) */
    double *nl = NULL, *ng = NULL, *p = NULL;
    int32_t k = 0;
    strux_status st = negated(n, l, g, &nl, &ng);
    if (st == STRUX_OK) st = breakpoints(n, nl, ng, bs, lo, hi, &p, &k);
    double best = INFINITY, first = NAN, last = NAN;
    for (int32_t i = 0; st == STRUX_OK && i < k; i++)
        best = fmin(best, -strux_rates_envelope(n, nl, ng, bs, p[i]));
    double tol = 1e-12 * fmax(1.0, fabs(best));
    for (int32_t i = 0; st == STRUX_OK && i < k; i++)
        if (-strux_rates_envelope(n, nl, ng, bs, p[i]) <= best + tol) {
            if (isnan(first)) first = p[i];
            last = p[i];
        }
    *b = 0.5 * (first + last);
    *val = best;
    strux_free(&nl);
    strux_free(&ng);
    strux_free(&p);
    return st;
}

strux_status strux_rates_bias_center(int32_t n, const double *l, const double *g, const double *bs,
                                     double lo, double hi, double U, double *b, double *z)
{
    double *nl = NULL, *ng = NULL;
    strux_status st = negated(n, l, g, &nl, &ng);
    if (st == STRUX_OK) st = center_on(n, nl, ng, bs, lo, hi, -U, b, z);
    *z = -*z;
    strux_free(&nl);
    strux_free(&ng);
    return st;
}
