/* search/registry.c - every search by name (STYLE.md §4). */
#include "search_impl.h"

const strux_search_entry strux_search_registry[] = {
    {"margin", strux_search_create_margin},
    {NULL, NULL},
};
