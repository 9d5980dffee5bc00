/* strux/hierarchy.h - label hierarchies (trees and DAGs) and their structural node weights α.
 * Two parts, in this order:
 *   1. the hierarchy (src/data/hierarchy.c, hierarchical.md §1): built and validated from an edge
 *      list, nodes in a topological order (parent index < child index, root at index 0), parent and
 *      child CSR, leaves, per-leaf ancestor sets Ā(l) in CSR, depth and height, upward closures of
 *      label sets and their most specific nodes, virtual stop leaves for paths that end at an
 *      internal node (task.partial_paths=stop);
 *   2. α programs (src/tasks/hier_alpha.c, hierarchical.md §3 and §4.2): the ρ closed form and the
 *      height rule on trees, the min-Σα² QP for directional constraints and every DAG variant under
 *      1 ≤ Σ ≤ T, the max-min LP on DAGs (GLPK through strux/lp.h), the root handling of A10, and
 *      the corrected Algorithm 5 (shared-Frobenius α update on trees) and its convex extension to
 *      DAGs (§4.3).
 * The hierarchy is a plain struct (like strux_dataset): tasks read its arrays in inner loops. It
 * knows nothing of MPI: the file reader (on the shared text reader) is built on
 * strux_hierarchy_from_edges, and rank 0 sends what it read to the other ranks as the bytes of
 * strux_hierarchy_pack (src/data/hierarchy_pack.c). Everything here is Not Collective. */
#ifndef STRUX_HIERARCHY_H
#define STRUX_HIERARCHY_H

#include "strux/core.h"

/* Largest file id: id p's stop leaf is stored as −2 − p, which must fit in int64_t. */
#define STRUX_HIERARCHY_ID_MAX (INT64_MAX - 1)
/* node_id of the virtual root added over several sources. */
#define STRUX_HIERARCHY_VIRTUAL_ROOT_ID (-1)

typedef struct strux_hierarchy {
    char *path;           /* where the edges came from (messages) */
    int32_t n_nodes;      /* M, virtual nodes included; node 0 is the root */
    int64_t n_edges;      /* distinct edges, virtual ones included (= parent_ptr[M]) */
    int64_t *node_id;     /* [M] file id of each node; < 0 for virtual nodes: the root −1,
                             the stop leaf of file node p is −2 − p */
    int64_t *parent_ptr;  /* [M+1] parents of k are parent_idx[parent_ptr[k]..parent_ptr[k+1]) */
    int32_t *parent_idx;  /* ascending node indices, each < k */
    int64_t *parent_line; /* [n_edges] 1-based source line of each parent edge, 0 if virtual */
    int64_t *child_ptr;   /* [M+1] children of k are child_idx[child_ptr[k]..child_ptr[k+1]) */
    int32_t *child_idx;   /* ascending node indices, each > k */
    int32_t n_leaves;     /* |ℒ|: nodes with no child */
    int32_t *leaves;      /* [n_leaves] ascending node indices */
    int32_t *leaf_pos;    /* [M] position of node k in leaves, or −1 for internal nodes */
    int64_t *anc_ptr;     /* [n_leaves+1] Ā(l) of leaves[i] is anc_idx[anc_ptr[i]..anc_ptr[i+1]) */
    int32_t *anc_idx;     /* ascending node indices: every ancestor of the leaf and the leaf */
    int32_t *depth;       /* [M] nodes on the longest path from the root to k (root: 1) */
    int32_t *height;      /* [M] nodes on the longest path from k down to a leaf (leaf: 1) */
    int32_t *stop_leaf;   /* [M] index of the stop leaf under k, or −1 */
    int32_t max_depth;    /* D = max depth (the root's height) */
    int32_t max_children; /* largest number of children of one node */
    int32_t n_stop;       /* virtual stop leaves */
    int is_tree;          /* 1 if every node but the root has exactly one parent */
    int virtual_root;     /* 1 if node 0 was added over several sources */
    int32_t n_sources;    /* parentless file nodes (1 unless virtual_root) */
    int32_t multi_parent; /* a node with two or more parents (smallest index), −1 on trees */
    int64_t n_duplicates; /* repeated edges dropped (the caller logs a warning) */
    int64_t duplicate_line; /* line of the first repeated edge, 0 if none */
    int32_t n_file;         /* nodes with a file id (not virtual) */
    int64_t *find_id;       /* [n_file] the file ids ascending (strux_hierarchy_find) */
    int32_t *find_idx;      /* [n_file] the node index of each */
} strux_hierarchy;

typedef struct strux_hierarchy_options {
    int32_t max_nodes; /* > 0: more distinct file ids than this is an input error; 0: the limit
                          is 2^30 (node indices are int32_t, stop leaves may double the count) */
} strux_hierarchy_options;

/* Build a hierarchy from n_edges edges parent[e] → child[e]; line[e] is the edge's 1-based source
 * line (line NULL: edge e is on line e + 1); path names the source in messages and is copied.
 * Ids are any values in [0, STRUX_HIERARCHY_ID_MAX], sparse, in any order; opt may be NULL.
 * Repeated edges are kept once (n_duplicates, duplicate_line). Several sources get a virtual root.
 * Nodes are numbered by (depth, id), so parents come before children and the order is the same
 * for any edge order. Errors, STRUX_ERR_INPUT naming path and line: a negative or too large id, a
 * self-loop, no edges, a cycle (listed as `101 -> 202 -> 303 -> 101`, at the line of the cycle's
 * last edge in the file), more nodes than opt->max_nodes; STRUX_ERR_NOMEM. *out owned by the
 * caller (strux_hierarchy_destroy). */
strux_status strux_hierarchy_from_edges(const char *path, int64_t n_edges, const int64_t *parent,
                                        const int64_t *child, const int64_t *line,
                                        const strux_hierarchy_options *opt, strux_hierarchy **out);
void strux_hierarchy_destroy(strux_hierarchy **h);
/* Read a hierarchy from a text file (plain or gzip) of `parent child` lines (LSHTC cat_hier.txt,
 * the shared .hier files): each line exactly two ids in [0, STRUX_HIERARCHY_ID_MAX] separated by
 * spaces or tabs; blank lines and lines whose first non-blank character is `#` are skipped. Then
 * strux_hierarchy_from_edges with each edge's line number (opt may be NULL). Errors,
 * STRUX_ERR_INPUT "path:line: ..." naming the token: a non-integer, negative or too large id, one
 * id, an extra token; those of the text reader (unopenable file, NUL byte, over-long line, bad
 * gzip; a directory is STRUX_ERR_IO) and of strux_hierarchy_from_edges (empty file, self-loop,
 * cycle, node limit); STRUX_ERR_NOMEM. *out (NULL on error) owned by the caller. */
strux_status strux_hierarchy_read(const char *path, const strux_hierarchy_options *opt,
                                  strux_hierarchy **out);
/* A built hierarchy as bytes appended to b, every field and derived array included, and back:
 * strux_hierarchy_unpack reads what strux_hierarchy_pack wrote, from b->pos on, into a new *out
 * (owned by the caller; NULL on error) equal to h field by field, with nothing rebuilt or
 * re-validated. For sending rank 0's hierarchy to the other ranks of one job (the layout is
 * native and unversioned: never for files). Errors: STRUX_ERR_NOMEM; STRUX_ERR_INPUT when b
 * ends early or its sizes are impossible. */
strux_status strux_hierarchy_pack(const strux_hierarchy *h, strux_blob *b);
strux_status strux_hierarchy_unpack(strux_blob *b, strux_hierarchy **out);

/* Index of the node with file id id (≥ 0), or −1 when there is none. O(log M). */
int32_t strux_hierarchy_find(const strux_hierarchy *h, int64_t id);
/* The id to print for node k: its file id, the file id of the node a stop leaf stands for, or −1
 * for the virtual root. */
int64_t strux_hierarchy_print_id(const strux_hierarchy *h, int32_t k);

/* One line for the log: kind, nodes, leaves, edges, depth, widest node, virtual nodes and
 * duplicates, e.g. "tree: 15 nodes (8 leaves), 14 edges, depth 4, up to 2 children". */
void strux_hierarchy_summary(const strux_hierarchy *h, char *buf, size_t n);

/* Upward closure of a label set: the n_ids file ids (any order, repeats allowed) become the
 * ascending indices of every node that is one of them or an ancestor of one, written to out
 * (capacity M) with their count in *n_out. When stop leaves exist, the stop leaf of every internal
 * node of the closure that has no child in it is added (the path ends there). mark is caller
 * scratch of M bytes, all zero on entry and on return. Errors: STRUX_ERR_INPUT "path:line: label
 * ID is not a node of the hierarchy HIER" (path and line name the data file). */
strux_status strux_hierarchy_closure(const strux_hierarchy *h, const char *path, int64_t line,
                                     int64_t n_ids, const int64_t *ids, unsigned char *mark,
                                     int32_t *out, int32_t *n_out);
/* Most specific nodes of a node set: the members (ascending indices in set) none of whose children
 * is a member, ascending, to out (capacity n) with their count in *n_out. mark as above. */
void strux_hierarchy_most_specific(const strux_hierarchy *h, int32_t n, const int32_t *set,
                                   unsigned char *mark, int32_t *out, int32_t *n_out);

/* task.partial_paths=stop: add one virtual stop leaf under each of the n internal nodes (indices,
 * any order, repeats and nodes that already have one ignored) where a training path ends. Stop
 * leaves are appended after the existing nodes (indices stay valid), every derived array is
 * rebuilt, and stop_leaf[k] names each. Errors: STRUX_ERR_INPUT if a node is a leaf or out of
 * range; STRUX_ERR_NOMEM (h unchanged). */
strux_status strux_hierarchy_add_stop_leaves(strux_hierarchy *h, int32_t n, const int32_t *nodes);

/* ---- structural α (hierarchical.md §3) and the SSVM α update (§4.2) ----
 * α has M entries in node order. The root (node 0) belongs to every label, so its score cancels
 * in every margin (A10): ROOT_FREE treats it like any node (the thesis literally), ROOT_ZERO fixes
 * α_root = 0 and leaves it out of the programs. */
typedef enum strux_alpha_root {
    STRUX_ALPHA_ROOT_AUTO, /* free on a tree with a file root; zero on DAGs and virtual roots */
    STRUX_ALPHA_ROOT_FREE,
    STRUX_ALPHA_ROOT_ZERO
} strux_alpha_root;

typedef enum strux_alpha_program {
    STRUX_ALPHA_RHO,            /* (6.6): min Σ α^ρ (ρ = 2 on DAGs) */
    STRUX_ALPHA_MAXMIN,         /* (6.7): max min α with directional constraints (A9 tie-break) */
    STRUX_ALPHA_RHO_DIRECTIONAL /* (6.6) with ρ = 2 plus α_child ≥ α_parent */
} strux_alpha_program;

typedef struct strux_alpha_options {
    strux_alpha_program program;
    double rho;   /* ρ > 1 of (6.6); must be 2 on DAGs and for RHO_DIRECTIONAL */
    double dag_t; /* T ≥ 1 of (6.8): 1 ≤ Σ_{Ā(l)} α ≤ T on DAGs; trees use equality */
    strux_alpha_root root; /* A10 */
} strux_alpha_options;

/* The root handling AUTO resolves to on h (A10). */
strux_alpha_root strux_alpha_root_resolve(const strux_hierarchy *h, strux_alpha_root root);

/* Structural α of NHSVM for the chosen program: on trees the closed forms (RHO) and the height
 * rule (MAXMIN), the QP for RHO_DIRECTIONAL; on DAGs the QP (RHO, RHO_DIRECTIONAL) and LP phase 1
 * then the QP (MAXMIN). Errors: STRUX_ERR_CONFIG for ρ ≤ 1, ρ ≠ 2 where only ρ = 2 is solved, or
 * T < 1 (naming task.rho / task.dag_t); STRUX_ERR_LP, STRUX_ERR_NUMERIC, STRUX_ERR_NOMEM. */
strux_status strux_alpha_structural(const strux_hierarchy *h, const strux_alpha_options *opt,
                                    double *alpha);

/* §3.1 closed form of (6.6) on a tree, any ρ > 1, O(M). root: FREE or ZERO (AUTO resolved).
 * STRUX_ERR_CONFIG on a DAG or ρ ≤ 1. */
strux_status strux_alpha_rho_tree(const strux_hierarchy *h, double rho, strux_alpha_root root,
                                  double *alpha);
/* §3.2 height rule on a tree: α_n = b_n / h(n), b_child = b_n − α_n, b_root = 1, O(M).
 * STRUX_ERR_CONFIG on a DAG. */
strux_status strux_alpha_height_tree(const strux_hierarchy *h, strux_alpha_root root,
                                     double *alpha);

/* The §3.3 QP: min Σ α_n² subject to 1 ≤ Σ_{Ā(l)} α ≤ t for every leaf (t = 1: equality),
 * α_n ≥ floor for every node (α_root = 0 under ROOT_ZERO), and α_child ≥ α_parent on every edge
 * when directional. Up to STRUX_ALPHA_QP_DENSE_MAX nodes it is solved exactly (up to rounding) by
 * Goldfarb and Idnani's dual active-set method (dense: 16·M² bytes); above, and if rounding ever
 * makes that method fail, by Hildreth's dual coordinate ascent of spec §3.3 (stops when no
 * multiplier moves by 1e-13 or α stands still while feasible, within a budget of 4e9 row-entry
 * updates; violation ≤ 1e-8 accepted).
 * *iters (may be NULL) gets the active-set iterations or Hildreth's sweeps. STRUX_ERR_NUMERIC if
 * the constraints are infeasible, STRUX_ERR_CONFIG for t < 1, STRUX_ERR_NOMEM. */
#define STRUX_ALPHA_QP_DENSE_MAX 2000
strux_status strux_alpha_qp(const strux_hierarchy *h, double t, double floor, int directional,
                            strux_alpha_root root, double *alpha, int64_t *iters);

/* (6.7) on any hierarchy by LP phase 1 through strux/lp.h: t* = max t s.t. α_n ≥ t for every
 * node (the root excepted under ROOT_ZERO), 1 ≤ Σ_{Ā(l)} α ≤ t_sum, directional constraints, α ≥ 0;
 * then phase 2 [added]: the QP above with floor t* (less 1e-12 relative) makes α unique (on trees:
 * the height rule). Above STRUX_ALPHA_QP_DENSE_MAX nodes phase 2 is skipped (Hildreth does not
 * converge on that thin polytope): α is the LP's vertex, a maximiser but not the least-norm one,
 * and a warning in the log says so. *t_star (may be NULL) gets t*. STRUX_ERR_LP, STRUX_ERR_NOMEM.
 */
strux_status strux_alpha_maxmin_lp(const strux_hierarchy *h, double t_sum, strux_alpha_root root,
                                   double *alpha, double *t_star);

/* Corrected Algorithm 5 (§4.2, A1): α minimising Σ_n N_n/α_n (0/0 = 0) subject to Σ_{Ā(l)} α ≤ 1,
 * α ≥ 0, given N_n = ‖U_n‖² ≥ 0 per node of a tree; every leaf path sums to exactly 1. *value
 * gets the optimum B[root]. Then the ε guard: α_n = max(α_n, eps) on nodes with N_n > 0 (eps = 0:
 * none; spec ε_α = 1e-8). O(M); work is caller scratch of M doubles (no allocation).
 * STRUX_ERR_CONFIG on a DAG (naming a node with two parents), STRUX_ERR_NUMERIC for a negative or
 * non-finite N_n (naming the node). */
strux_status strux_alpha_shared_frobenius(const strux_hierarchy *h, const double *N, double eps,
                                          double *work, double *alpha, double *value);

/* The SSVM α update on a DAG (src/tasks/hier_alpha_dag.c): the convex extension of §4.3 (A17;
 * not in the thesis: label it as an extension wherever it is reported). Minimises Σ_n N_n/α_n
 * (0/0 = 0) subject to Σ_{Ā(l)} α ≤ 1 for every leaf and α ≥ 0, for any hierarchy (trees give
 * Algorithm 5's α): leaves take what their ancestors leave, internal nodes with N_n = 0 keep 0,
 * the rest by barrier Newton on a sparse Cholesky whose structure create builds once for h
 * (borrowed: it must outlive the object). solve allocates nothing: start (M entries, may be NULL)
 * is the warm start (the previous α), eps the ε guard as in strux_alpha_shared_frobenius, alpha
 * (M) the answer, lambda (n_leaves, may be NULL) the multipliers of the leaf rows; stats gets
 * the certificate. STRUX_ERR_NUMERIC for a negative or non-finite N_n (naming the node) or a
 * Newton system that is not positive definite; STRUX_ERR_NOMEM from create. Not Collective. */
typedef struct strux_alpha_dag strux_alpha_dag;
typedef struct strux_alpha_dag_stats {
    double value;  /* Σ N_n/α_n at α before the ε guard */
    double dual;   /* Lagrange dual at λ: a lower bound on the optimum (weak duality) */
    double kkt;    /* KKT residual (stationarity, complementarity, relative; path excess) */
    int64_t newton; /* Newton steps */
    int32_t stages; /* barrier stages (1 when every leaf has N_l > 0) */
} strux_alpha_dag_stats;
strux_status strux_alpha_dag_create(const strux_hierarchy *h, strux_alpha_dag **out);
void strux_alpha_dag_destroy(strux_alpha_dag **s);
strux_status strux_alpha_dag_solve(strux_alpha_dag *s, const double *N, const double *start,
                                   double eps, double *alpha, double *lambda,
                                   strux_alpha_dag_stats *stats);
/* Entries of the Cholesky factor of its Newton systems (the cost of one step). */
int64_t strux_alpha_dag_factor_nnz(const strux_alpha_dag *s);

/* ---- the hierarchy task's node weights (src/tasks/hierarchy.c), for the SSVM α update
 * (src/solvers/alpha.c) and tests ---- */
struct strux_task;
/* Its hierarchy (stop leaves included) and node weights α (borrowed; after check).
 * STRUX_ERR_INTERNAL for another task or before check. */
strux_status strux_task_hierarchy_state(const struct strux_task *t, const strux_hierarchy **h,
                                        const double **alpha);
/* How format_label prints (strux predict --format): paths = 0, the closure's ascending file ids
 * joined by ','; paths = 1, each most specific node as the names of its root path (root and
 * virtual nodes left out) joined by '/', the paths joined by ','. names[id] (n_names entries,
 * borrowed, NULL entries allowed; names may be NULL) names file id id, else the id is printed.
 * STRUX_ERR_CONFIG for another task. */
strux_status strux_task_hierarchy_set_format(struct strux_task *t, int paths, char *const *names,
                                             int32_t n_names);
/* A new α (M finite values ≥ 0; while training the scores then use c_n = √α_n). */
strux_status strux_task_hierarchy_set_alpha(struct strux_task *t, const double *alpha);
/* A trained hierarchy task as the model file keeps it (/hierarchy, docs/model-format.md): the
 * node order, parents, α and the resolved model and label space, so predict and eval rebuild the
 * task from the file alone (stop leaves included). n_nodes = 0: none. */
typedef struct strux_hier_stored {
    int32_t n_nodes;
    int64_t *node_id;    /* [n_nodes] file ids in model order; virtual nodes negative */
    int64_t *parent_ptr; /* [n_nodes + 1] */
    int32_t *parent_idx; /* [parent_ptr[n_nodes]] */
    double *alpha;       /* [n_nodes] */
    char kind[8];        /* tree|dag */
    char model[16];      /* flat|hsvm|nhsvm|ssvm */
    char label_space[16]; /* single|multi */
} strux_hier_stored;
void strux_hier_stored_free(strux_hier_stored *s);
/* The stored form of t after check (α as now); n_nodes = 0 for another task. out owned. */
strux_status strux_task_hierarchy_stored(const struct strux_task *t, strux_hier_stored *out);
/* Use s instead of reading task.hierarchy (before check; copied): check then rebuilds the node
 * order from its edges and stop leaves (STRUX_ERR_INPUT when they do not give the stored order),
 * takes its label space and α, and scores exported rows (c ≡ 1). */
strux_status strux_task_hierarchy_use_stored(struct strux_task *t, const strux_hier_stored *s);
/* Use h (copied; the task keeps its own) instead of reading task.hierarchy (before check): the
 * caller has read and validated the file, on rank 0 of a job that broadcast it
 * (strux_hierarchy_pack). STRUX_ERR_CONFIG for another task; STRUX_ERR_NOMEM. */
strux_status strux_task_hierarchy_use_hierarchy(struct strux_task *t, const strux_hierarchy *h);
/* 1 when t is the hierarchy task with task.model = ssvm (α learned, §4.2), else 0. */
int strux_task_hierarchy_learns_alpha(const struct strux_task *t);

#endif
