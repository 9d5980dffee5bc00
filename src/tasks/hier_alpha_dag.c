/* tasks/hier_alpha_dag.c - the SSVM α update on a DAG, the convex extension of hierarchical.md
 * §4.3 (A17: not in the thesis, which ran no SSVM on DAGs; every report of it says so):
 *     min_α f(α) = Σ_n N_n/α_n   s.t.  a_l·α ≤ 1 for every leaf l,  α ≥ 0      ((6.23), 0/0 = 0)
 * with a_l the indicator of Ā(l). It is Algorithm 5's problem without the tree, still convex
 * (u²/a is a perspective function, Lemma 2).
 * Reduction: a leaf appears only in its own row a_l, so at an optimum it takes what its ancestors
 * leave, α_l = t_l = 1 − Σ_{n∈Ā(l)\{l}} α_n (tight when N_l > 0; Algorithm 5's E = 1 when
 * N_l = 0), and an internal node with N_n = 0 keeps α_n = 0 (Algorithm 5 too): the unknowns are
 * x_n = α_n of the internal nodes with N_n > 0 and the problem becomes
 *     min Φ(x) = Σ_n N_n/x_n + Σ_{l: N_l>0} N_l/t_l(x) − μ Σ_{l: N_l=0} log t_l(x),
 * whose first two sums keep x > 0 and t > 0 themselves; the leaves with N_l = 0 keep t_l ≥ 0
 * through the log barrier, μ → 0 (none: μ = 0). Each stage is damped Newton (backtracking on Φ
 * inside the domain) on
 *     ∇Φ_n = −N_n/x_n² + Σ_{l below n} q_l,   ∇²Φ = diag(2N_n/x_n³) + Σ_l c_l·a_l a_lᵀ,
 *     q_l = N_l/t_l² or μ/t_l,   c_l = 2N_l/t_l³ or μ/t_l²,
 * solved by a sparse Cholesky (linalg/spchol.c) in a minimum degree order of the pattern (nodes
 * sharing a leaf; on a tree the ancestor pairs, which fill nothing deepest first, on a DAG the
 * extra parents' cross links fill much unless ordered). The pattern, its order and L's structure
 * are built once per hierarchy; an update allocates nothing.
 * Certificate: the leaf multipliers λ_l = q_l give the Lagrange dual
 *     g(λ) = Σ_n 2√(N_n·y_n) − Σ_l λ_l,   y_n = Σ_{l: n∈Ā(l)} λ_l,
 * a lower bound on the optimum for every λ ≥ 0 (weak duality), and the KKT residual
 *     (Σ_{N_n>0} |N_n/α_n − α_n·y_n| + Σ_l λ_l·|1 − a_l·α| + Σ_{N_n=0} y_n·α_n)/f
 *     + max(0, max_l a_l·α − 1)
 * (y_n is the multiplier of α_n ≥ 0 where N_n = 0), both reported. The slacks t_l are carried
 * along each step, t ← t + s·Δt, not recomputed as 1 − Σ x: a nearly full path keeps the digits
 * of its small t_l that the barrier's multipliers μ/t_l need (1 − Σ x has none left). Warm start: the previous α (shrunk into the interior when a path is full).
 * Runs on one rank; broadcasting α is the caller's (solvers/alpha.c). Trees take Algorithm 5
 * (hier_alpha.c), which this reproduces (tests/unit/test_hier_alpha_dag.c). */
#include "strux/hierarchy.h"
#include "strux/linalg.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define DAG_NEWTON_MAX 200   /* Newton steps per barrier stage */
#define DAG_DECREMENT_TOL 1e-22 /* a stage ends when the Newton decrement²/2 ≤ this × f */
#define DAG_STAGE_TOL 1e-8   /* ... for the stages before the last (their μ is not the end) */
#define DAG_LOCAL 1e-10      /* decrement²/2 ≤ this × f: full steps, no line search */
#define DAG_KKT_TOL 1e-13    /* the last stage's stationarity (relative) */
#define DAG_STALL 0.1        /* near the optimum, two steps that cut neither the decrement nor the
                                stationarity by this factor end a stage (the rounding floor) */
#define DAG_MU_START 1e-2    /* first barrier gap m0·μ, relative to f at a cold start */
#define DAG_MU_WARM 1e-6     /* ... at a warm start (the last update's α: near this optimum) */
#define DAG_MU_END 1e-16     /* last barrier gap m0·μ, relative to f */
#define DAG_MU_FACTOR 100.0  /* μ shrinks by this between stages */
#define DAG_ARMIJO 0.25      /* sufficient decrease of the backtracking line search */
#define DAG_BACKTRACK_MAX 80 /* halvings of one line search */
#define DAG_BOUNDARY 0.99    /* a step goes at most this fraction of the way to the boundary */
#define DAG_Z_SPREAD 1e10    /* multipliers stay within this factor of μ/t (IPOPT's κ_Σ) */
#define DAG_FULL_PATH (1 - 1e-6) /* a warm start with a path this full is shrunk ... */
#define DAG_SHRINK (1 - 1e-3)    /* ... to this */

struct strux_alpha_dag {
    const strux_hierarchy *h; /* borrowed */
    int32_t nI;               /* internal nodes */
    int32_t *node;            /* [nI] node of unknown k: internal nodes by descending index */
    int32_t *var;             /* [M] unknown of node n, −1 for leaves */
    int64_t *up_ptr;          /* [L+1] unknowns on Ā(l) of leaf position l */
    int32_t *up_idx;
    int64_t *down_ptr;        /* [nI+1] leaf positions below unknown k */
    int32_t *down_idx;
    int64_t *Hp;              /* [nI+1] ∇²Φ's pattern, upper triangle by columns (unknown order) */
    int32_t *Hi;
    double *Hx;
    int32_t *pinv;            /* [nI] position of unknown k in the elimination order */
    int64_t *Pp;              /* [nI+1] the same pattern permuted to that order (factored) */
    int32_t *Pi;
    double *Px;
    int64_t *to_P;            /* [nnz] where entry p of Hx goes in Px */
    double *b;                /* [nI] right-hand side and solution in the elimination order */
    strux_spchol *chol;
    unsigned char *active;    /* [nI] N > 0 */
    unsigned char *barred;    /* [L] N_l = 0 under an active unknown: a barrier row */
    double *x, *dx, *g, *trial, *acc; /* [nI] */
    double *t, *dt, *c, *q;           /* [L] slack t_l = α_l, its step, curvature, ∂Φ/∂s_l */
    double *z, *dz;                   /* [L] multipliers of the rows with N_l = 0, their step */
};

void strux_alpha_dag_destroy(strux_alpha_dag **out)
{
    strux_alpha_dag *s = *out;
    if (!s) return;
    strux_spchol_destroy(&s->chol);
    strux_free(&s->node);
    strux_free(&s->var);
    strux_free(&s->up_ptr);
    strux_free(&s->up_idx);
    strux_free(&s->down_ptr);
    strux_free(&s->down_idx);
    strux_free(&s->Hp);
    strux_free(&s->Hi);
    strux_free(&s->Hx);
    strux_free(&s->pinv);
    strux_free(&s->Pp);
    strux_free(&s->Pi);
    strux_free(&s->Px);
    strux_free(&s->to_P);
    strux_free(&s->active);
    strux_free(&s->barred);
    double **d[] = {&s->x, &s->dx, &s->g, &s->trial, &s->acc, &s->b, &s->t, &s->dt, &s->c, &s->q,
                      &s->z, &s->dz};
    for (size_t k = 0; k < sizeof d / sizeof *d; k++)
        strux_free(d[k]);
    strux_free(out);
}

/* The unknowns, the leaf ↔ unknown incidence both ways. */
static strux_status build_incidence(strux_alpha_dag *s)
{
    const strux_hierarchy *h = s->h;
    int32_t M = h->n_nodes, L = h->n_leaves;
    STRUX_TRY(strux_alloc_array(&s->var, (size_t)M, sizeof *s->var));
    for (int32_t n = M - 1; n >= 0; n--)
        s->var[n] = h->leaf_pos[n] >= 0 ? -1 : s->nI++;
    STRUX_TRY(strux_alloc_array(&s->node, (size_t)s->nI + 1, sizeof *s->node));
    for (int32_t n = 0; n < M; n++)
        if (s->var[n] >= 0) s->node[s->var[n]] = n;
    STRUX_TRY(strux_alloc_array(&s->up_ptr, (size_t)L + 1, sizeof *s->up_ptr));
    for (int32_t l = 0; l < L; l++)
        s->up_ptr[l + 1] = s->up_ptr[l] + (h->anc_ptr[l + 1] - h->anc_ptr[l] - 1);
    STRUX_TRY(strux_alloc_array(&s->up_idx, (size_t)s->up_ptr[L] + 1, sizeof *s->up_idx));
    STRUX_TRY(strux_alloc_array(&s->down_ptr, (size_t)s->nI + 2, sizeof *s->down_ptr));
    for (int32_t l = 0; l < L; l++) {
        int64_t at = s->up_ptr[l];
        for (int64_t q = h->anc_ptr[l]; q < h->anc_ptr[l + 1]; q++) {
            int32_t k = s->var[h->anc_idx[q]];
            if (k < 0) continue; /* the leaf itself */
            s->up_idx[at++] = k;
            s->down_ptr[k + 2]++;
        }
    }
    for (int32_t k = 0; k < s->nI; k++)
        s->down_ptr[k + 2] += s->down_ptr[k + 1];
    STRUX_TRY(strux_alloc_array(&s->down_idx, (size_t)s->up_ptr[L] + 1, sizeof *s->down_idx));
    for (int32_t l = 0; l < L; l++)
        for (int64_t p = s->up_ptr[l]; p < s->up_ptr[l + 1]; p++)
            s->down_idx[s->down_ptr[s->up_idx[p] + 1]++] = l;
    return STRUX_OK;
}

/* Column j of the pattern: the unknowns i ≤ j sharing a leaf with j (i ≤ j: node(i) ≥ node(j)),
 * ascending, into rows (marks in mark, stamp j + 1). */
static int32_t pattern_column(const strux_alpha_dag *s, int32_t j, int32_t *mark, int32_t *rows)
{
    int32_t n = 0;
    for (int64_t p = s->down_ptr[j]; p < s->down_ptr[j + 1]; p++) {
        int32_t l = s->down_idx[p];
        for (int64_t r = s->up_ptr[l]; r < s->up_ptr[l + 1]; r++) {
            int32_t i = s->up_idx[r];
            if (i > j || mark[i] == j + 1) continue;
            mark[i] = j + 1;
            rows[n++] = i;
        }
    }
    for (int32_t a = 1; a < n; a++) { /* insertion sort: columns are short but for the top */
        int32_t v = rows[a], b = a - 1;
        while (b >= 0 && rows[b] > v) {
            rows[b + 1] = rows[b];
            b--;
        }
        rows[b + 1] = v;
    }
    return n;
}

/* The pattern in a minimum degree order (strux_spchol_order: deepest first fills L sevenfold on
 * a DAG with 5% random extra parents), and where each of its entries goes. order is scratch. */
static strux_status permute_pattern(strux_alpha_dag *s, int32_t *order)
{
    int32_t nI = s->nI;
    int64_t nnz = s->Hp[nI];
    STRUX_TRY(strux_spchol_order(nI, s->Hp, s->Hi, order));
    STRUX_TRY(strux_alloc_array(&s->pinv, (size_t)nI + 1, sizeof *s->pinv));
    STRUX_TRY(strux_alloc_array(&s->Pp, (size_t)nI + 2, sizeof *s->Pp));
    STRUX_TRY(strux_alloc_array(&s->Pi, (size_t)nnz + 1, sizeof *s->Pi));
    STRUX_TRY(strux_alloc_array(&s->Px, (size_t)nnz + 1, sizeof *s->Px));
    STRUX_TRY(strux_alloc_array(&s->to_P, (size_t)nnz + 1, sizeof *s->to_P));
    for (int32_t k = 0; k < nI; k++)
        s->pinv[order[k]] = k;
    /* counts per permuted column, then entries bucketed by column with rows ascending: taking
     * the entries in the order of their permuted row does that (a counting sort by row) */
    for (int32_t j = 0; j < nI; j++)
        for (int64_t p = s->Hp[j]; p < s->Hp[j + 1]; p++) {
            int32_t a = s->pinv[s->Hi[p]], b = s->pinv[j];
            s->Pp[(a > b ? a : b) + 2]++;
        }
    for (int32_t k = 0; k < nI; k++)
        s->Pp[k + 2] += s->Pp[k + 1];
    int64_t *by_row = NULL, *row_ptr = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&by_row, (size_t)nnz + 1, sizeof *by_row), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&row_ptr, (size_t)nI + 2, sizeof *row_ptr), done);
    for (int32_t j = 0; j < nI; j++)
        for (int64_t p = s->Hp[j]; p < s->Hp[j + 1]; p++) {
            int32_t a = s->pinv[s->Hi[p]], b = s->pinv[j];
            row_ptr[(a < b ? a : b) + 2]++;
        }
    for (int32_t k = 0; k < nI; k++)
        row_ptr[k + 2] += row_ptr[k + 1];
    for (int32_t j = 0; j < nI; j++)
        for (int64_t p = s->Hp[j]; p < s->Hp[j + 1]; p++) {
            int32_t a = s->pinv[s->Hi[p]], b = s->pinv[j];
            by_row[row_ptr[(a < b ? a : b) + 1]++] = p;
        }
    for (int32_t j = 0; j < nI; j++) /* to_P holds each entry's column until it is placed */
        for (int64_t p = s->Hp[j]; p < s->Hp[j + 1]; p++)
            s->to_P[p] = j;
    for (int64_t r = 0; r < nnz; r++) {
        int64_t p = by_row[r];
        int32_t a = s->pinv[s->Hi[p]], b = s->pinv[s->to_P[p]];
        int64_t q = s->Pp[(a > b ? a : b) + 1]++;
        s->Pi[q] = a < b ? a : b;
        s->to_P[p] = q;
    }
done:
    strux_free(&by_row);
    strux_free(&row_ptr);
    return st;
}

static strux_status build_pattern(strux_alpha_dag *s)
{
    int32_t nI = s->nI, *mark = NULL, *rows = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY(strux_alloc_array(&s->Hp, (size_t)nI + 1, sizeof *s->Hp));
    STRUX_TRY_GOTO(st, strux_alloc_array(&mark, (size_t)nI + 1, sizeof *mark), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&rows, (size_t)nI + 1, sizeof *rows), done);
    for (int32_t j = 0; j < nI; j++)
        s->Hp[j + 1] = s->Hp[j] + pattern_column(s, j, mark, rows);
    STRUX_TRY_GOTO(st, strux_alloc_array(&s->Hi, (size_t)s->Hp[nI] + 1, sizeof *s->Hi), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&s->Hx, (size_t)s->Hp[nI] + 1, sizeof *s->Hx), done);
    memset(mark, 0, (size_t)nI * sizeof *mark);
    for (int32_t j = 0; j < nI; j++) {
        int32_t n = pattern_column(s, j, mark, rows);
        memcpy(s->Hi + s->Hp[j], rows, (size_t)n * sizeof *rows);
    }
    STRUX_TRY_GOTO(st, permute_pattern(s, rows), done);
    STRUX_TRY_GOTO(st, strux_spchol_analyse(nI, s->Pp, s->Pi, &s->chol), done);
done:
    strux_free(&mark);
    strux_free(&rows);
    return st;
}

strux_status strux_alpha_dag_create(const strux_hierarchy *h, strux_alpha_dag **out)
{
    strux_alpha_dag *s = NULL;
    STRUX_TRY(strux_alloc(&s, sizeof *s));
    s->h = h;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, build_incidence(s), fail);
    STRUX_TRY_GOTO(st, build_pattern(s), fail);
    size_t nI = (size_t)s->nI + 1, L = (size_t)h->n_leaves + 1;
    STRUX_TRY_GOTO(st, strux_alloc_array(&s->active, nI, 1), fail);
    STRUX_TRY_GOTO(st, strux_alloc_array(&s->barred, L, 1), fail);
    double **vI[] = {&s->x, &s->dx, &s->g, &s->trial, &s->acc, &s->b};
    for (size_t k = 0; k < sizeof vI / sizeof *vI; k++)
        STRUX_TRY_GOTO(st, strux_alloc_array(vI[k], nI, sizeof(double)), fail);
    double **vL[] = {&s->t, &s->dt, &s->c, &s->q, &s->z, &s->dz};
    for (size_t k = 0; k < sizeof vL / sizeof *vL; k++)
        STRUX_TRY_GOTO(st, strux_alloc_array(vL[k], L, sizeof(double)), fail);
    *out = s;
    return STRUX_OK;
fail:
    strux_alpha_dag_destroy(&s);
    return st;
}

int64_t strux_alpha_dag_factor_nnz(const strux_alpha_dag *s)
{
    return strux_spchol_nnz(s->chol);
}

/* t_l = 1 − Σ_{k on Ā(l)} x_k for every leaf; the smallest to *t_min. */
static void slacks(const strux_alpha_dag *s, const double *x, double *t, double *t_min)
{
    double lo = INFINITY;
    for (int32_t l = 0; l < s->h->n_leaves; l++) {
        double sum = 0;
        for (int64_t p = s->up_ptr[l]; p < s->up_ptr[l + 1]; p++)
            sum += x[s->up_idx[p]];
        t[l] = 1 - sum;
        lo = fmin(lo, t[l]);
    }
    *t_min = lo;
}

/* The kind of leaf row l: 1 when N_l > 0 (a term of f), 2 when N_l = 0 under an unknown with
 * N > 0 (a barrier row with a multiplier z_l), 0 otherwise (constant: t_l = 1 − Σ 0 = 1). */
static int row_kind(const strux_alpha_dag *s, const double *N, int32_t l)
{
    return N[s->h->leaves[l]] > 0 ? 1 : s->barred[l] ? 2 : 0;
}

/* Φ at x with slacks t (+∞ outside the domain); *f gets the objective part Σ N/x + Σ N/t. */
static double barrier_value(const strux_alpha_dag *s, const double *N, double mu, const double *x,
                            const double *t, double *f)
{
    const strux_hierarchy *h = s->h;
    double sum = 0, bar = 0;
    for (int32_t k = 0; k < s->nI; k++)
        if (s->active[k]) {
            if (!(x[k] > 0)) return INFINITY;
            sum += N[s->node[k]] / x[k];
        }
    for (int32_t l = 0; l < h->n_leaves; l++) {
        int kind = row_kind(s, N, l);
        if (kind && !(t[l] > 0)) return INFINITY;
        if (kind == 1) sum += N[h->leaves[l]] / t[l];
        if (kind == 2) bar -= mu * log(t[l]);
    }
    *f = sum;
    return sum + bar;
}

/* The barrier gradient into s->g and the primal-dual Hessian's values into s->Hx at (x, t, z):
 * ∂Φ/∂s_l is q_l = N_l/t_l² or μ/t_l, the curvature c_l = 2N_l/t_l³ or z_l/t_l (= μ/t_l² on the
 * central path). */
static void derivatives(strux_alpha_dag *s, const double *N, double mu)
{
    const strux_hierarchy *h = s->h;
    for (int32_t l = 0; l < h->n_leaves; l++) {
        double Nl = N[h->leaves[l]], t = s->t[l];
        int kind = row_kind(s, N, l);
        s->q[l] = kind == 1 ? Nl / (t * t) : kind == 2 ? mu / t : 0;
        s->c[l] = kind == 1 ? 2 * Nl / (t * t * t) : kind == 2 ? s->z[l] / t : 0;
    }
    for (int32_t j = 0; j < s->nI; j++) {
        double *col = s->Hx + s->Hp[j];
        int64_t len = s->Hp[j + 1] - s->Hp[j];
        if (!s->active[j]) { /* fixed at 0: an identity row and column */
            s->g[j] = 0;
            memset(col, 0, (size_t)len * sizeof *col);
            col[len - 1] = 1; /* the diagonal ends the column */
            continue;
        }
        double Nj = N[s->node[j]], xj = s->x[j], gj = -Nj / (xj * xj);
        for (int64_t p = s->down_ptr[j]; p < s->down_ptr[j + 1]; p++) {
            int32_t l = s->down_idx[p];
            gj += s->q[l];
            for (int64_t r = s->up_ptr[l]; r < s->up_ptr[l + 1]; r++) {
                int32_t i = s->up_idx[r];
                if (i <= j) s->acc[i] += s->c[l];
            }
        }
        s->g[j] = gj;
        for (int64_t p = 0; p < len; p++) {
            int32_t i = s->Hi[s->Hp[j] + p];
            col[p] = s->active[i] ? s->acc[i] : 0;
            s->acc[i] = 0;
        }
        col[len - 1] += 2 * Nj / (xj * xj * xj);
    }
}

/* The slacks' step for the step dx (Δt = −A·Δx) and the largest step that stays a fraction
 * DAG_BOUNDARY inside x > 0 and t > 0, capped at 1. */
static double max_step(strux_alpha_dag *s, const double *N)
{
    const strux_hierarchy *h = s->h;
    double step = 1 / DAG_BOUNDARY;
    for (int32_t k = 0; k < s->nI; k++)
        if (s->active[k] && s->dx[k] < 0) step = fmin(step, -s->x[k] / s->dx[k]);
    for (int32_t l = 0; l < h->n_leaves; l++) {
        double d = 0;
        for (int64_t p = s->up_ptr[l]; p < s->up_ptr[l + 1]; p++)
            d -= s->dx[s->up_idx[p]];
        s->dt[l] = d;
        int kind = row_kind(s, N, l);
        if (kind && d < 0) step = fmin(step, -s->t[l] / d);
    }
    return fmin(1, DAG_BOUNDARY * step);
}

/* The multipliers' step with the primal step `step` taken (t is the slack after it): the Newton
 * direction of z·t = μ, Δz = μ/t₀ − z − z·Δt/t₀ at the slack t₀ before the step, with its own
 * fraction to the boundary z > 0, then kept within a factor DAG_Z_SPREAD of the central value μ/t
 * (IPOPT's safeguard: the Hessian's z/t stays a bounded multiple of the barrier's). */
static void dual_step(strux_alpha_dag *s, double mu, double step)
{
    const strux_hierarchy *h = s->h;
    double sz = 1 / DAG_BOUNDARY;
    for (int32_t l = 0; l < h->n_leaves; l++) {
        s->dz[l] = 0;
        if (!s->barred[l]) continue;
        double t0 = s->t[l] - step * s->dt[l];
        s->dz[l] = mu / t0 - s->z[l] - s->z[l] * s->dt[l] / t0;
        if (s->dz[l] < 0) sz = fmin(sz, -s->z[l] / s->dz[l]);
    }
    sz = fmin(1, DAG_BOUNDARY * sz);
    for (int32_t l = 0; l < h->n_leaves; l++) {
        if (!s->barred[l]) continue;
        double central = mu / s->t[l], z = s->z[l] + sz * s->dz[l];
        s->z[l] = fmin(fmax(z, central / DAG_Z_SPREAD), central * DAG_Z_SPREAD);
    }
}

/* The stationarity residual of (x, t, z), Σ_k |x_k·(∂f/∂x_k + Σ_l λ_l)| relative to f, with
 * λ_l = N_l/t_l² or z_l: what the last stage drives to its rounding floor. */
static double stationarity(strux_alpha_dag *s, const double *N)
{
    const strux_hierarchy *h = s->h;
    double f = 0, res = 0;
    for (int32_t l = 0; l < h->n_leaves; l++) {
        double Nl = N[h->leaves[l]];
        s->q[l] = Nl > 0 ? Nl / (s->t[l] * s->t[l]) : s->barred[l] ? s->z[l] : 0;
        if (Nl > 0) f += Nl / s->t[l];
    }
    for (int32_t k = 0; k < s->nI; k++) {
        if (!s->active[k]) continue;
        double Nk = N[s->node[k]], x = s->x[k], y = 0;
        for (int64_t p = s->down_ptr[k]; p < s->down_ptr[k + 1]; p++)
            y += s->q[s->down_idx[p]];
        f += Nk / x;
        res += fabs(Nk / x - x * y);
    }
    return f > 0 ? res / f : 0;
}

/* Damped Newton on Φ_μ from (x, t, z) until the decrement²/2 ≤ tol·f (the last stage, last = 1:
 * and the stationarity with z below DAG_KKT_TOL); the steps to *newton. The step is the
 * primal-dual one (Hessian with z/t), a descent direction of Φ_μ, which the backtracking line
 * search measures. Near the optimum (decrement²/2 ≤ DAG_LOCAL·f) a full step that stays inside is
 * taken as it is: the Armijo test cannot see decreases below Φ's rounding there, and Newton
 * converges quadratically; the stage then ends when two steps in a row cut neither the
 * decrement nor the stationarity tenfold (their rounding floor). */
static strux_status newton_stage(strux_alpha_dag *s, const double *N, double mu, int last,
                                 int64_t *newton)
{
    const strux_hierarchy *h = s->h;
    double tol = last ? DAG_DECREMENT_TOL : DAG_STAGE_TOL;
    double f, phi = barrier_value(s, N, mu, s->x, s->t, &f), last_dec = INFINITY;
    double last_res = INFINITY;
    int stalls = 0;
    for (int it = 0; it < DAG_NEWTON_MAX; it++) {
        derivatives(s, N, mu);
        for (int64_t p = 0; p < s->Hp[s->nI]; p++)
            s->Px[s->to_P[p]] = s->Hx[p];
        STRUX_TRY(strux_spchol_factor(s->chol, s->Px));
        for (int32_t k = 0; k < s->nI; k++)
            s->b[s->pinv[k]] = -s->g[k];
        strux_spchol_solve(s->chol, s->b);
        for (int32_t k = 0; k < s->nI; k++)
            s->dx[k] = s->b[s->pinv[k]];
        double dec = fmax(0, -strux_dot(s->nI, s->g, s->dx)); /* Newton decrement² */
        double res = last ? stationarity(s, N) : 0;
        (*newton)++;
        if (dec / 2 <= tol * f && res <= DAG_KKT_TOL) return STRUX_OK;
        int local = dec / 2 <= DAG_LOCAL * f;
        /* the floor: quadratic convergence cuts the decrement by orders of magnitude a step */
        stalls = local && dec > DAG_STALL * last_dec && res > DAG_STALL * last_res ? stalls + 1 : 0;
        if (stalls >= 2) return STRUX_OK;
        last_dec = dec;
        last_res = res;
        double step = max_step(s, N), trial_f = 0, trial_phi = INFINITY;
        int accepted = 0;
        for (int b = 0; b < DAG_BACKTRACK_MAX && !accepted; b++) {
            if (b > 0) step /= 2;
            for (int32_t k = 0; k < s->nI; k++)
                s->trial[k] = s->x[k] + step * s->dx[k];
            for (int32_t l = 0; l < h->n_leaves; l++)
                s->c[l] = s->t[l] + step * s->dt[l]; /* c is free until the next derivatives */
            trial_phi = barrier_value(s, N, mu, s->trial, s->c, &trial_f);
            accepted = (local && step == 1 && isfinite(trial_phi)) ||
                       trial_phi <= phi - DAG_ARMIJO * step * dec;
        }
        if (!accepted) return STRUX_OK; /* rounding: no decrease is left to find */
        memcpy(s->x, s->trial, (size_t)s->nI * sizeof *s->x);
        memcpy(s->t, s->c, (size_t)h->n_leaves * sizeof *s->t);
        dual_step(s, mu, step);
        phi = barrier_value(s, N, mu, s->x, s->t, &f);
        STRUX_CHECK(isfinite(phi), STRUX_ERR_NUMERIC, "DAG alpha update: Newton left the domain");
    }
    strux_log(STRUX_LOG_WARN,
              "DAG alpha update: %d Newton steps at mu = %g without reaching the tolerance",
              DAG_NEWTON_MAX, mu);
    return STRUX_OK;
}

/* A strictly feasible start: start (when given and positive on the unknowns) or 1/(2·longest
 * path of unknowns), shrunk when a leaf's path is (nearly) full; the slacks from it. */
static void starting_point(strux_alpha_dag *s, const double *start)
{
    const strux_hierarchy *h = s->h;
    int64_t longest = 1;
    for (int32_t l = 0; l < h->n_leaves; l++)
        if (s->up_ptr[l + 1] - s->up_ptr[l] > longest) longest = s->up_ptr[l + 1] - s->up_ptr[l];
    for (int32_t k = 0; k < s->nI; k++) {
        double v = start ? start[s->node[k]] : 0;
        s->x[k] = !s->active[k] ? 0 : isfinite(v) && v > 0 ? v : 0.5 / (double)longest;
    }
    double t_min;
    slacks(s, s->x, s->t, &t_min);
    if (t_min >= 1 - DAG_FULL_PATH) return;
    double fullest = 1 - t_min;
    for (int32_t k = 0; k < s->nI; k++)
        s->x[k] *= DAG_SHRINK / fullest;
    slacks(s, s->x, s->t, &t_min);
}

/* α from x and the slacks, the leaf multipliers λ (N_l/t_l², or z_l), and the certificate
 * (value, dual bound, KKT residual). */
static void finish(strux_alpha_dag *s, const double *N, double *alpha, double *lambda,
                   strux_alpha_dag_stats *out)
{
    const strux_hierarchy *h = s->h;
    int32_t M = h->n_nodes, L = h->n_leaves;
    for (int32_t n = 0; n < M; n++) {
        int32_t k = s->var[n];
        alpha[n] = k >= 0 ? s->x[k] : fmax(0, s->t[h->leaf_pos[n]]);
    }
    double f = 0, dual = 0, stat = 0, comp = 0, infeas = 0;
    for (int32_t k = 0; k < s->nI; k++)
        s->acc[k] = 0;
    for (int32_t l = 0; l < L; l++) {
        double Nl = N[h->leaves[l]], t = s->t[l];
        int kind = row_kind(s, N, l);
        double lam = kind == 1 ? Nl / (t * t) : kind == 2 ? s->z[l] : 0;
        if (lambda) lambda[l] = lam;
        dual -= lam;
        double path = 0;
        for (int64_t q = h->anc_ptr[l]; q < h->anc_ptr[l + 1]; q++)
            path += alpha[h->anc_idx[q]];
        comp += lam * fabs(1 - path);
        infeas = fmax(infeas, path - 1);
        for (int64_t p = s->up_ptr[l]; p < s->up_ptr[l + 1]; p++)
            s->acc[s->up_idx[p]] += lam;
        if (!(Nl > 0)) comp += lam * alpha[h->leaves[l]]; /* α_l ≥ 0's multiplier is y_l = λ_l */
        if (Nl > 0) { /* the leaf's own row of the stationarity: y_l = λ_l */
            double a = alpha[h->leaves[l]];
            f += Nl / a;
            dual += 2 * sqrt(Nl * lam);
            stat += fabs(Nl / a - a * lam);
        }
    }
    for (int32_t k = 0; k < s->nI; k++) {
        double Nk = N[s->node[k]], y = s->acc[k], a = s->x[k];
        s->acc[k] = 0;
        if (!(Nk > 0)) continue;
        f += Nk / a;
        dual += 2 * sqrt(Nk * y);
        stat += fabs(Nk / a - a * y);
    }
    out->value = f;
    out->dual = dual;
    out->kkt = f > 0 ? (stat + comp) / f + fmax(0, infeas) : fmax(0, infeas);
}

strux_status strux_alpha_dag_solve(strux_alpha_dag *s, const double *N, const double *start,
                                   double eps, double *alpha, double *lambda,
                                   strux_alpha_dag_stats *stats)
{
    const strux_hierarchy *h = s->h;
    int32_t M = h->n_nodes;
    strux_alpha_dag_stats st = {0};
    for (int32_t n = 0; n < M; n++)
        STRUX_CHECK(isfinite(N[n]) && N[n] >= 0, STRUX_ERR_NUMERIC,
                    "SSVM α update: ‖U_n‖² = %g at node %" PRId64 " is not a finite value ≥ 0",
                    N[n], strux_hierarchy_print_id(h, n));
    for (int32_t k = 0; k < s->nI; k++)
        s->active[k] = N[s->node[k]] > 0;
    /* the rows of the leaves with N_l = 0 under an unknown: the barrier's (m0 of them) */
    int64_t m0 = 0;
    for (int32_t l = 0; l < h->n_leaves; l++) {
        int under = 0;
        for (int64_t p = s->up_ptr[l]; p < s->up_ptr[l + 1] && !under; p++)
            under = s->active[s->up_idx[p]];
        s->barred[l] = under && !(N[h->leaves[l]] > 0);
        m0 += s->barred[l];
    }
    starting_point(s, start);
    double f, mu = 0;
    barrier_value(s, N, 0, s->x, s->t, &f);
    if (m0 > 0) mu = (start ? DAG_MU_WARM : DAG_MU_START) * fmax(f, 1e-300) / (double)m0;
    for (int32_t l = 0; l < h->n_leaves; l++)
        s->z[l] = s->barred[l] ? mu / s->t[l] : 0; /* on the central path of the first μ */
    for (int last = m0 == 0;; st.stages++) {
        STRUX_TRY(newton_stage(s, N, mu, last, &st.newton));
        if (last) break;
        barrier_value(s, N, 0, s->x, s->t, &f);
        mu /= DAG_MU_FACTOR;
        for (int32_t l = 0; l < h->n_leaves; l++) /* each stage starts on its central path */
            s->z[l] = s->barred[l] ? mu / s->t[l] : 0;
        if (mu * (double)m0 <= DAG_MU_END * f) {
            mu = DAG_MU_END * f / (double)m0;
            last = 1;
        }
    }
    st.stages++;
    finish(s, N, alpha, lambda, &st);
    /* ε guard (§4.2, A15), as after Algorithm 5 */
    if (eps > 0)
        for (int32_t n = 0; n < M; n++)
            if (N[n] > 0 && alpha[n] < eps) alpha[n] = eps;
    if (stats) *stats = st;
    return STRUX_OK;
}
