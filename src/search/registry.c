/* search/registry.c - every search by name, with the surrogates it answers, what it needs of the
 * solver and the task, and the keys it reads (STYLE.md §4). Adding a search is one file and one
 * row here. */
#include "search_impl.h"

static const char *const slack_keys[] = {"surrogate.eps", "surrogate.tol", "surrogate.max_calls",
                                         NULL};
static const char *const bisect_keys[] = {"surrogate.eps", "surrogate.tol", "surrogate.max_calls",
                                          "surrogate.warm_start", NULL};
static const char *const angular_keys[] = {"surrogate.eps",        "surrogate.max_calls",
                                           "surrogate.queue",      "surrogate.cache",
                                           "surrogate.warm_start", NULL};
static const char *const hull_keys[] = {"surrogate.integral", "surrogate.max_calls",
                                        "surrogate.warm_start", NULL};

const strux_search_entry strux_search_registry[] = {
    {"margin", strux_search_create_margin, STRUX_CAP_ONE_CALL, 0, NULL},
    {"sarawagi", strux_search_create_sarawagi, STRUX_CAP_SLACK_FORM, STRUX_CAP_NEEDS_SLACK,
     slack_keys},
    {"binary", strux_search_create_binary, STRUX_CAP_SLACK_FORM, 0, slack_keys},
    {"bisect", strux_search_create_bisect, STRUX_CAP_SLACK_FORM, 0, bisect_keys},
    {"angular", strux_search_create_angular, STRUX_CAP_SLACK_FORM, STRUX_CAP_NEEDS_WEDGE,
     angular_keys},
    {"convex_hull", strux_search_create_convex_hull, 0, 0, hull_keys},
    {NULL, NULL, 0, 0, NULL},
};
