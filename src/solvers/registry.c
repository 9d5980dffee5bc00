/* solvers/registry.c - every solver by name (STYLE.md §4). */
#include "dual.h"

const strux_solver_entry strux_solver_registry[] = {
    {"sgd", strux_solver_create_sgd},
    {"bcfw", strux_solver_create_bcfw},
    {"sdca", strux_solver_create_sdca},
    {"cutting_plane", strux_solver_create_cutting_plane},
    {NULL, NULL},
};
