/* strux/subsets.h - named subsets of a dataset: the "datasets" D_i of dataset_constraints.md §0
 * and §1.5 that rate constraints are written over (issue 15, section [datasets]). A definition is
 * an expression over atoms
 *     label +1 | label -1          (also 1, 0: the binary file's spellings)
 *     feature J OP V               J 1-based as in the file, absent feature = 0,
 *                                  OP one of > >= < <= == !=
 *     rows FILE [TEST_FILE]        1-based example numbers, one per line (TEST_FILE for data.test)
 *     baseline PATH positive|negative   rows a baseline classifier labels +1 / -1
 *     NAME                         another definition or a built-in: all, labeled, unlabeled,
 *                                  positive, negative
 * combined with ! (complement), - (difference), & (intersection), | (union) and parentheses.
 * Precedence, tightest first: !, -, &, | (as Python's set operators); binary operators are left
 * associative. Membership is evaluated over the local rows of a strux_dataset into a byte vector.
 *
 * Not here: reading baseline models (the caller supplies each baseline's ±1 predictions per
 * local row, strux_subset_input.baseline), counting over ranks (the caller allreduces), config
 * sections (the caller passes each `name = value` with its origin). Not Collective. */
#ifndef STRUX_SUBSETS_H
#define STRUX_SUBSETS_H

#include "strux/data.h"

typedef struct strux_subset_defs strux_subset_defs;

/* The built-ins occupy the first indices of every definition table, in this order. */
enum {
    STRUX_SUBSET_ALL,       /* every row */
    STRUX_SUBSET_LABELED,   /* label +1 or -1 */
    STRUX_SUBSET_UNLABELED, /* label 0 */
    STRUX_SUBSET_POSITIVE,  /* label +1 */
    STRUX_SUBSET_NEGATIVE,  /* label -1 */
    STRUX_SUBSET_N_BUILTIN
};

/* Label classes a subset may contain (strux_subset_labels). */
#define STRUX_SUBSET_HAS_POS 1u /* rows labelled +1 */
#define STRUX_SUBSET_HAS_NEG 2u /* rows labelled -1 */
#define STRUX_SUBSET_HAS_UNL 4u /* unlabeled rows */

/* What a definition is evaluated over. Every pointer is borrowed. */
typedef struct strux_subset_input {
    const strux_dataset *ds;       /* local rows x (ex_ptr NULL), n_local, n_global, first, dim */
    const int8_t *label;           /* ds->n_local entries: +1, -1, or 0 for unlabeled */
    int test;                      /* nonzero: ds is data.test, so `rows` reads its TEST_FILE */
    const int8_t *const *baseline; /* NULL, or one entry per strux_subset_n_baselines: NULL (not
                                      available here) or ds->n_local predictions, +1 or -1 */
} strux_subset_input;

/* A table holding only the built-ins; the caller destroys it. STRUX_ERR_NOMEM. */
strux_status strux_subset_defs_create(strux_subset_defs **out);
/* Free the table and every definition; NULL allowed; sets *p = NULL. */
void strux_subset_defs_destroy(strux_subset_defs **p);

/* Add, replace (same name) or, when text is empty or blank, remove the definition `name = text`.
 * origin ("adult.ini:12", "--set") leads every message. Names other definitions are not looked up
 * here (definitions may come in any order): strux_subset_check does that. Errors:
 * STRUX_ERR_CONFIG for a name that is not an identifier or is a built-in or keyword, and for a
 * syntax error (origin, name, the text, the 1-based column and what was expected). */
strux_status strux_subset_define(strux_subset_defs *d, const char *name, const char *text,
                                 const char *origin);
/* Check every definition: each name it uses is defined (else STRUX_ERR_CONFIG listing the
 * defined names) and no definition uses itself through others (else STRUX_ERR_CONFIG naming the
 * cycle). */
strux_status strux_subset_check(const strux_subset_defs *d);
/* An anonymous subset given by the expression text[start, end) (the argument of a rate term, or
 * one a helper derives, such as `(female) & (positive)`): parsed, its names checked, and its
 * index returned in *k. A bare name returns that definition's index; an expression printed the
 * same as an earlier anonymous one returns the earlier index. Errors as strux_subset_define and
 * strux_subset_check, with `what` (e.g. "constraint eq_opp") in place of the dataset name; they
 * quote all of text (the whole constraint) and count columns in it. */
strux_status strux_subset_define_expr(strux_subset_defs *d, const char *text, size_t start,
                                      size_t end, const char *what, const char *origin, int32_t *k);

int32_t strux_subset_count(const strux_subset_defs *d); /* definitions, built-ins included */
/* Index of a named definition or built-in, -1 if none. */
int32_t strux_subset_find(const strux_subset_defs *d, const char *name);
/* A name for messages and rate terms: the definition's name, or for an anonymous subset its
 * expression as printed (never NULL; borrowed). */
const char *strux_subset_name(const strux_subset_defs *d, int32_t k);
/* The definition printed in normal form (minimal parentheses, single spaces); the name itself
 * for a built-in. Borrowed, valid until the table changes. */
const char *strux_subset_text(const strux_subset_defs *d, int32_t k);
/* Nonzero when k has no name of its own (made by strux_subset_define_expr). */
int strux_subset_is_anonymous(const strux_subset_defs *d, int32_t k);
/* STRUX_SUBSET_HAS_* classes subset k may contain, judged from the definition alone (`label`,
 * the built-ins and the operators; every other atom may contain every class). A class missing
 * from the mask is certainly absent, so `tpr(unlabeled)` can be refused before any data is read.
 * Definitions must have passed strux_subset_check. */
unsigned strux_subset_labels(const strux_subset_defs *d, int32_t k);

/* Distinct baseline paths named by `baseline` atoms, in order of first appearance. */
int32_t strux_subset_n_baselines(const strux_subset_defs *d);
const char *strux_subset_baseline_path(const strux_subset_defs *d, int32_t b);

/* Nonzero when subset k can be evaluated on in: every `rows` atom it uses has a file for this
 * split and every `baseline` atom has predictions. A subset that cannot is `null` in a report. */
int strux_subset_evaluable(const strux_subset_defs *d, int32_t k, const strux_subset_input *in);
/* member[r] = 1 if local row r of in->ds belongs to subset k, else 0 (in->ds->n_local entries,
 * caller-owned). Errors: STRUX_ERR_CONFIG for a feature index above the data's dimension (or the
 * bias column), a cycle, an unknown name, or a subset not evaluable on in (naming the atom);
 * STRUX_ERR_INPUT naming file:line for a `rows` file that cannot be read or holds a non-integer,
 * duplicate or out-of-range id; STRUX_ERR_UNSUPPORTED for sequence data (ds->ex_ptr set);
 * STRUX_ERR_NOMEM. */
strux_status strux_subset_eval(const strux_subset_defs *d, int32_t k, const strux_subset_input *in,
                               uint8_t *member);

#endif
