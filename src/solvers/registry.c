/* solvers/registry.c - every solver by name, with what it can do and the keys it reads
 * (STYLE.md §4). Adding a solver is one file and one row here. */
#include "m3l.h"
#include "rta.h"

static const char *const sgd_keys[] = {"solver.batch", "solver.average", NULL};
/* the CoCoA+ engine's keys (dual.c), read by every dual solver */
#define DUAL_KEYS "solver.tol", "solver.local_passes", "solver.sync_every", "solver.blocks"
static const char *const bcfw_keys[] = {DUAL_KEYS, "solver.weighted_average", NULL};
static const char *const sdca_keys[] = {DUAL_KEYS, "solver.shrinking", "solver.dual_blocks",
                                        "solver.active_sets", NULL};
/* rta runs its own rounds (no CoCoA+ local passes) */
static const char *const rta_keys[] = {"solver.tol",    "solver.sync_every", "solver.blocks",
                                       "solver.update", "solver.qp",         "solver.exclude_truth",
                                       NULL};
/* the prior's keys (m3l_setup.c), read by both M3L solvers */
#define M3L_PRIOR_KEYS                                                                             \
    "m3l.prior", "m3l.empirical", "m3l.prior_data", "m3l.r_file", "m3l.classes", "m3l.shrink",     \
        "m3l.pg_tol"
static const char *const m3l_keys[] = {DUAL_KEYS, M3L_PRIOR_KEYS, "m3l.shrinking",
                                       "m3l.block_switch", NULL};
static const char *const m3l_kernel_keys[] = {
    "solver.tol",   "solver.blocks",  M3L_PRIOR_KEYS,   "m3l.steps_per_label", "m3l.schedule",
    "kernel.type",  "kernel.gamma",   "kernel.degree",  "kernel.coef0",        "kernel.cache_mb",
    "kernel.cache_precision", NULL};
static const char *const cp_keys[] = {DUAL_KEYS, "solver.cp_eps", "solver.cp_max_planes",
                                      "solver.cp_qp_passes", NULL};

const strux_solver_entry strux_solver_registry[] = {
    {"sgd", strux_solver_create_sgd, STRUX_CAP_FREE_BIAS, sgd_keys},
    {"bcfw", strux_solver_create_bcfw, STRUX_CAP_DUAL | STRUX_CAP_SHARED_MODEL | STRUX_CAP_PRUNE, bcfw_keys},
    {"sdca", strux_solver_create_sdca,
     STRUX_CAP_DUAL | STRUX_CAP_SPARSE_DUALS | STRUX_CAP_SHARED_MODEL | STRUX_CAP_PRUNE |
         STRUX_CAP_ACTIVE_SETS,
     sdca_keys},
    {"cutting_plane", strux_solver_create_cutting_plane,
     STRUX_CAP_DUAL | STRUX_CAP_KEEPS_SLACK | STRUX_CAP_SHARED_MODEL | STRUX_CAP_PRUNE, cp_keys},
    {"m3l", strux_solver_create_m3l,
     STRUX_CAP_DUAL | STRUX_CAP_NEEDS_HINGE_PARTS | STRUX_CAP_SHARED_MODEL | STRUX_CAP_PRUNE, m3l_keys},
    {"m3l_kernel", strux_solver_create_m3l_kernel,
     STRUX_CAP_DUAL | STRUX_CAP_NEEDS_HINGE_PARTS | STRUX_CAP_KERNEL_MODEL, m3l_kernel_keys},
    {"rta", strux_solver_create_rta, STRUX_CAP_DUAL | STRUX_CAP_NEEDS_CANDIDATES, rta_keys},
    {NULL, NULL, 0, NULL},
};
