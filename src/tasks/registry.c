/* tasks/registry.c - every task by name (STYLE.md §4: a const table, no run-time registration). */
#include "task_impl.h"

const strux_task_entry strux_task_registry[] = {
    {"multilabel", strux_task_create_multilabel},
    {"multiclass", strux_task_create_multiclass},
    {"chain", strux_task_create_chain},
    {"pairwise", strux_task_create_pairwise},
    {NULL, NULL},
};
