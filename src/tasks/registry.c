/* tasks/registry.c - every task by name (STYLE.md §4: a const table, no run-time registration). */
#include "task_impl.h"

const strux_task_entry strux_task_registry[] = {
    {"multilabel", strux_task_create_multilabel},
    {NULL, NULL},
};
