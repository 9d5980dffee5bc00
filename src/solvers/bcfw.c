/* solvers/bcfw.c - block-coordinate Frank-Wolfe (Lacoste-Julien, Jaggi, Schmidt, Pletscher, ICML
 * 2013) for any surrogate affine in the margin (slack_bicriteria.md §4.2): visit example i, ask
 * the search for its most violating (possibly fractional) label at the local weights, and move
 * the block towards that corner with exact line search. Rounds, averaging (solver.weighted_average)
 * and the gap are the engine's (dual.c). */
#include "dual.h"

static const dual_method bcfw_method = {.visit = strux_dual_corner_step};

strux_status strux_solver_create_bcfw(strux_solver *s)
{
    return strux_dual_attach(s, &bcfw_method);
}
