/* search/registry.c - every search by name (STYLE.md §4). */
#include "search_impl.h"

const strux_search_entry strux_search_registry[] = {
    {"margin", strux_search_create_margin},
    {"sarawagi", strux_search_create_sarawagi},
    {"binary", strux_search_create_binary},
    {"bisect", strux_search_create_bisect},
    {"angular", strux_search_create_angular},
    {"convex_hull", strux_search_create_convex_hull},
    {NULL, NULL},
};
