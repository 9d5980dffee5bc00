/* search/search_impl.h - private layout of searches and surrogates (STYLE.md §4). A surrogate is a
 * table of ψ and its partial derivatives on the raw pair (m, g); a search is an ops table with
 * its own state, answering one surrogate. */
#ifndef STRUX_SEARCH_IMPL_H
#define STRUX_SEARCH_IMPL_H

#include "strux/search.h"

typedef struct strux_surrogate {
    const char *name;
    const char *default_search; /* what surrogate.search = auto picks */
    double (*psi)(const struct strux_surrogate *u, double m, double g);
    double (*psi_h)(const struct strux_surrogate *u, double m, double g); /* ∂ψ/∂m */
    double (*psi_g)(const struct strux_surrogate *u, double m, double g); /* ∂ψ/∂g */
    double param; /* surrogate parameter (β of β-scaling), 0 if none */
} strux_surrogate;

struct strux_search_ops {
    strux_status (*run)(strux_search *s, strux_task *t, const strux_pot *pot,
                        const strux_label *truth, strux_search_result *r);
    void (*destroy)(strux_search *s);
};

struct strux_search {
    const struct strux_search_ops *ops;
    const char *type_name;
    strux_surrogate u;  /* the surrogate answered */
    strux_label y, y2;  /* answer buffers */
    void *data;         /* implementation state, owned */
};

typedef struct strux_search_entry {
    const char *name;
    strux_status (*create)(const strux_search_options *opt, const strux_task *t,
                           const strux_dataset *ds, strux_search *s);
} strux_search_entry;

extern const strux_search_entry strux_search_registry[];
/* The surrogate named name (with its parameter from opt), or STRUX_ERR_CONFIG. */
strux_status strux_surrogate_lookup(const strux_search_options *opt, strux_surrogate *u);

strux_status strux_search_create_margin(const strux_search_options *opt, const strux_task *t,
                                        const strux_dataset *ds, strux_search *s);

#endif
