/* solvers/bcfw.c - block-coordinate Frank-Wolfe (Lacoste-Julien, Jaggi, Schmidt, Pletscher, ICML
 * 2013) for any surrogate affine in the margin (slack_bicriteria.md §4.2): visit example i, ask
 * the search for its most violating (possibly fractional) label at the local weights, and move
 * the block towards that corner with exact line search. Rounds, averaging (solver.weighted_average)
 * and the gap are the engine's (dual.c). */
#include "dual.h"

#include <math.h>

static strux_status bcfw_visit(strux_solver *s, dual_data *d, int64_t i)
{
    strux_search_result r;
    STRUX_TRY(strux_dual_potentials(s, d, i));
    STRUX_TRY(strux_dual_answer(s, d, NAN, &r));
    return strux_dual_block_step(s, d, i, &r);
}

static const dual_method bcfw_method = {.visit = bcfw_visit};

strux_status strux_solver_create_bcfw(strux_solver *s)
{
    return strux_dual_attach(s, &bcfw_method);
}
