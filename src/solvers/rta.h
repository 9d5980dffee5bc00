/* solvers/rta.h - private to src/solvers and its white-box tests: the small QP of the rta solver's
 * Newton step (specs/rta.md §3.5) and a switch of the update for tests that compare the two
 * updates from one state. All local (Not Collective), no allocation beyond what is said. */
#ifndef STRUX_SOLVERS_RTA_H
#define STRUX_SOLVERS_RTA_H

#include "dual.h"

/* Value bᵀλ − ½λᵀQλ of λ for a row-major D×D Q. */
double strux_rta_qp_value(int32_t D, const double *Q, const double *b, const double *lam);
/* KKT residual of λ for max bᵀλ − ½λᵀQλ over {λ ≥ 0, Σλ ≤ 1}, read as the simplex over λ and the
 * slack λ_0 = 1 − Σλ (gradient g_0 = 0; positive above 1e-12): max_j g_j − min_{j: λ_j > 0} g_j
 * with g = b − Qλ; 0 at the maximiser. */
double strux_rta_qp_kkt(int32_t D, const double *Q, const double *b, const double *lam);
/* solver.qp = projected: the Newton point Q⁺b (strux_sym_pinv_solve), projected onto
 * {λ ≥ 0, Σλ ≤ 1} (clipped, or onto the simplex by sorting when the clipped sum passes 1), an
 * exact line search on the segment [0, λ_P]; then the better of that and the best single
 * direction's line search (so it never gains less than one direction). Q is D×D PSD, row-major.
 * STRUX_ERR_NOMEM, STRUX_ERR_NUMERIC (non-finite Q). */
strux_status strux_rta_qp_projected(int32_t D, const double *Q, const double *b, double *lam);
/* solver.qp = exact: the projected point, then pairwise (maximal violating pair) coordinate steps
 * over λ and the slack until the KKT residual is at most 1e-10·(max|b| + max Q_jj); *kkt = the
 * residual reached (within 100·(D + 1) + 10000 steps). */
strux_status strux_rta_qp_exact(int32_t D, const double *Q, const double *b, double *lam,
                                double *kkt);

/* Tests: switch solver s (solver.type = rta, set up) to update newton (1) or best (0) and qp exact
 * (1) or projected (0). */
void strux_rta_solver_set_update(strux_solver *s, int newton, int exact_qp);
/* Tests: a round of local example i alone with the current update (Collective). */
strux_status strux_rta_solver_visit(strux_solver *s, int64_t i);
/* Tests: the epoch's order of the n_global example ids (epoch s->epoch), then one round over its
 * positions [j0, j1) (Collective); *gamma = the round's combined step size. */
const int64_t *strux_rta_solver_order(strux_solver *s);
strux_status strux_rta_solver_round(strux_solver *s, int64_t j0, int64_t j1, double *gamma);
/* Tests: the Newton model of local example i at the current state (solver.update = newton): D
 * directions d_h = c(y_h) − c_i towards the candidates y[h] and the truth (at index truth; y[truth]
 * is the truth unless truth = D − 1 was added), the dual's slopes b_h along them and
 * Q = λ·||x_i||²·[d_h·d_h′], so D(c_i + Σλ_h d_h) − D(c_i) = bᵀλ − ½λᵀQλ. Borrowed until the
 * next step. */
typedef struct strux_rta_model {
    int32_t D, truth;
    const strux_label *y;
    const double *b, *Q;
} strux_rta_model;
strux_status strux_rta_solver_model(strux_solver *s, int64_t i, strux_rta_model *out);
/* Tests: 1 when rounds gather the steps' block changes, 0 when they sum ΔW. */
int strux_rta_solver_gathers(const strux_solver *s);

strux_status strux_solver_create_rta(strux_solver *s);

#endif
