/* solvers/registry.c - every solver by name (STYLE.md §4). */
#include "solver_impl.h"

const strux_solver_entry strux_solver_registry[] = {
    {"sgd", strux_solver_create_sgd},
    {NULL, NULL},
};
