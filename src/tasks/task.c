/* tasks/task.c - the public task API: creation by name from the registry, argument checks, oracle
 * call counting, and the dispatch of every method through the ops table (STYLE.md §4). */
#include "task_impl.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

const strux_opt_spec strux_task_opt_specs[] = {
    {"task.type", STRUX_OPT_STRING, offsetof(strux_task_options, type), "multilabel", 0, 0, NULL,
     "output structure by registry name; an unknown name lists the valid ones"},
    {"task.tags", STRUX_OPT_STRING, offsetof(strux_task_options, tags), "", 0, 0, NULL,
     "file of `id name` lines naming the tags (0-based ids, as "
     "data.label_names); chunk tag names (every name O or X-TYPE, e.g. IOB2 B-NP, I-NP, O) "
     "enable the conlleval chunk metrics; empty: token metrics and tag ids"},
    {"task.outside", STRUX_OPT_STRING, offsetof(strux_task_options, outside), "", 0, 0, NULL,
     "the outside tag, by name from task.tags or by 0-based id: the size |y| "
     "of the oracle's c term counts the tokens with another tag (slack_bicriteria.md §6 A20); "
     "empty: every token counts"},
    {"task.inference", STRUX_OPT_CHOICE, offsetof(strux_task_options, inference), "auto", 0, 0,
     "auto|exact|lp",
     "pairwise oracle: exact enumeration of the 2^L "
     "labelings (L <= 20), the local-polytope LP relaxation (GLPK), or auto = exact when "
     "L <= 16"},
    {"task.lp_start", STRUX_OPT_CHOICE, offsetof(strux_task_options, lp_start), "warm", 0, 0,
     "warm|fresh",
     "pairwise LP: warm restarts simplex from the last "
     "basis (fast); fresh starts every solve from the standard basis, so answers do not depend "
     "on earlier solves and -np 1, 2, 4 train identically even when LP optima are not unique. "
     "hierarchy (multi-label DAG LP, rebuilt per example on the pruned nodes): warm starts at "
     "the incumbent label, fresh at the standard basis; both are independent of earlier solves"},
    {"task.trees", STRUX_OPT_INT, offsetof(strux_task_options, trees), "10", 1, 1024, NULL,
     "rta: random spanning trees n of the complete label graph (specs/rta.md §1.4); every rank "
     "draws the same trees"},
    {"task.kbest", STRUX_OPT_INT, offsetof(strux_task_options, kbest), "4", 1, 1024, NULL,
     "rta: K-best list depth per tree (§2.1), capped at 2^L; the ensemble argmax is certified "
     "exact when the lists reach it (§2.2)"},
    {"task.tree_seed", STRUX_OPT_INT, offsetof(strux_task_options, tree_seed), "1", 0, 9.2e18, NULL,
     "rta: seed of the tree draws, apart from solver.seed"},
    {"task.tree_sampler", STRUX_OPT_CHOICE, offsetof(strux_task_options, tree_sampler), "uniform",
     0, 0, "uniform|recursive",
     "rta: uniform = random Prüfer sequences (uniform over spanning trees, §1.6); "
     "recursive = the reference code's random recursive trees (not uniform), for replication"},
    {"task.hierarchy", STRUX_OPT_STRING, offsetof(strux_task_options, hierarchy), "", 0, 0, NULL,
     "hierarchy: the label hierarchy, `parent child` lines of node ids (LSHTC cat_hier.txt, the "
     ".hier files); data label ids are node ids"},
    {"task.model", STRUX_OPT_CHOICE, offsetof(strux_task_options, model), "nhsvm", 0, 0,
     "flat|hsvm|nhsvm|ssvm",
     "hierarchy: flat multi-class SVM on the leaves, HSVM (every node weight 1), normalised HSVM "
     "(structural alpha, hierarchical.md §2.3), or SSVM (alpha learned, shared Frobenius norm; on "
     "a DAG by the convex extension of §4.3, not in the thesis)"},
    {"task.labels", STRUX_OPT_CHOICE, offsetof(strux_task_options, labels), "auto", 0, 0,
     "auto|single|multi",
     "hierarchy: label space; auto = multi when some training example has two most specific "
     "nodes"},
    {"task.loss", STRUX_OPT_CHOICE, offsetof(strux_task_options, loss), "auto", 0, 0,
     "auto|zero_one|node_hamming|normalized|leaf_hamming|tree",
     "hierarchy: structural loss; auto = the model's (hierarchical.md §2 table: flat and ssvm "
     "zero_one, hsvm node_hamming, nhsvm normalized; leaf_hamming for flat, nhsvm and ssvm on "
     "multi-label data); tree = |closure xor closure| (equal to node_hamming)"},
    {"task.margin", STRUX_OPT_CHOICE, offsetof(strux_task_options, margin), "plain", 0, 0,
     "plain|normalized",
     "hierarchy: normalized = the margin-normalised NHSVM (6.13): the margin of each y is divided "
     "by the normalised loss and must reach 1; single-label data, the margin surrogate, any model "
     "but ssvm"},
    {"task.alpha", STRUX_OPT_CHOICE, offsetof(strux_task_options, alpha), "rho", 0, 0,
     "rho|maxmin|rho_directional",
     "hierarchy: structural alpha program of nhsvm (6.6), (6.7) or (6.6) with directional "
     "constraints"},
    {"task.rho", STRUX_OPT_DOUBLE, offsetof(strux_task_options, rho), "2", 0, 1e6, NULL,
     "hierarchy: rho > 1 of program (6.6); only 2 on DAGs"},
    {"task.dag_t", STRUX_OPT_DOUBLE, offsetof(strux_task_options, dag_t), "1.5", 1, 1e6, NULL,
     "hierarchy: T of the DAG relaxation (6.8), 1 <= sum of alpha on a leaf path <= T"},
    {"task.root_alpha", STRUX_OPT_CHOICE, offsetof(strux_task_options, root_alpha), "auto", 0, 0,
     "auto|free|zero",
     "hierarchy: the root's alpha (A10): free on trees with a file root, zero on DAGs and virtual "
     "roots under auto"},
    {"task.alpha_every", STRUX_OPT_INT, offsetof(strux_task_options, alpha_every), "5", 1, 1e9,
     NULL,
     "hierarchy ssvm: epochs between alpha updates (sgd; dual solvers with solver.tol = 0); with "
     "solver.tol > 0 a dual solver updates alpha after each solve that reaches solver.tol, or "
     "after this many epochs without one"},
    {"task.alpha_tol", STRUX_OPT_DOUBLE, offsetof(strux_task_options, alpha_tol), "1e-4", 0, 1,
     NULL, "hierarchy ssvm: stop when an update moves no alpha by more than this"},
    {"task.alpha_floor", STRUX_OPT_DOUBLE, offsetof(strux_task_options, alpha_floor), "1e-8", 0,
     0.5, NULL, "hierarchy ssvm: the epsilon guard of Algorithm 5 on nodes with weight"},
    {"task.partial_paths", STRUX_OPT_CHOICE, offsetof(strux_task_options, partial_paths), "stop",
     0, 0, "stop|error",
     "hierarchy: a training path ending at an internal node gets a virtual stop leaf under it "
     "(stop) or is refused (error)"},
    {"task.prune", STRUX_OPT_BOOL, offsetof(strux_task_options, prune), "true", 0, 0, NULL,
     "hierarchy: exact leaf pruning before the multi-label DAG LP (hierarchical.md §5.4)"},
    {"task.lp_max_nodes", STRUX_OPT_INT, offsetof(strux_task_options, lp_max_nodes), "5000", 0, 2e9,
     NULL,
     "hierarchy: largest pruned multi-label DAG LP, in nodes (columns); an example whose "
     "candidate leaves need more keeps the incumbent's leaves and the highest-bound candidates "
     "that fit, an answer no longer certified optimal (counted in the lp_capped column and "
     "warned); 0: no cap. With task.prune = false the full LP is solved whatever its size"},
    {NULL},
};

#define UNSUPPORTED(t, method)                                                                     \
    strux_error_set(STRUX_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,                           \
                    "task '%s' does not support %s", (t)->type_name, method)

const char *strux_task_names(void)
{
    static char names[512];
    if (!names[0])
        for (const strux_task_entry *e = strux_task_registry; e->name; e++) {
            if (names[0]) strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, e->name, sizeof names - strlen(names) - 1);
        }
    return names;
}

static strux_status find_entry(const char *type, const strux_task_entry **out)
{
    const strux_task_entry *e = strux_task_registry;
    while (e->name && strcmp(e->name, type) != 0)
        e++;
    STRUX_CHECK(e->name, STRUX_ERR_CONFIG, "task.type = '%s' is unknown; valid types: %s", type,
                strux_task_names());
    *out = e;
    return STRUX_OK;
}

strux_status strux_task_type_caps(const char *type, unsigned *caps)
{
    const strux_task_entry *e;
    STRUX_TRY(find_entry(type, &e));
    *caps = e->caps;
    return STRUX_OK;
}

strux_status strux_task_needs(const strux_task_options *opt, unsigned *needs, const char **why)
{
    const strux_task_entry *e;
    STRUX_TRY(find_entry(opt->type, &e));
    *why = "";
    *needs = e->needs ? e->needs(opt, why) : 0;
    return STRUX_OK;
}

unsigned strux_task_caps(const strux_task *t)
{
    return t->caps;
}

int strux_task_reads_key(const strux_task_options *opt, const char *key)
{
    int listed = 0;
    for (const strux_task_entry *e = strux_task_registry; e->name; e++)
        if (strux_opt_keys_contain(e->keys, key)) {
            if (strcmp(e->name, opt->type) == 0) return 1;
            listed = 1;
        }
    return !listed;
}

void strux_task_key_readers(const char *key, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const strux_task_entry *e = strux_task_registry; e->name; e++)
        if (strux_opt_keys_contain(e->keys, key) && used < n) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? "|" : "task.type=", e->name);
            if (w > 0) used += (size_t)w;
        }
}

double strux_task_max_loss(const strux_task *t, const strux_label *truth)
{
    if (t->ops->max_loss) return t->ops->max_loss(t, truth);
    return truth->n > 0 ? truth->n : 1;
}

strux_status strux_task_create(const strux_task_options *opt, strux_task **out)
{
    const strux_task_entry *e;
    STRUX_TRY(find_entry(opt->type, &e));
    strux_task *t;
    STRUX_TRY(strux_alloc(&t, sizeof *t));
    t->type_name = e->name;
    t->caps = e->caps;
    strux_status st = e->create(opt, t);
    if (st != STRUX_OK) {
        strux_free(&t);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = t;
    return STRUX_OK;
}

void strux_task_destroy(strux_task **t)
{
    if (!*t) return;
    if ((*t)->ops->destroy) (*t)->ops->destroy(*t);
    strux_free(t);
}

const char *strux_task_name(const strux_task *t)
{
    return t->type_name;
}

strux_status strux_task_check(strux_task *t, const strux_dataset *ds)
{
    if (t->ops->check) STRUX_TRY(t->ops->check(t, ds));
    return strux_task_model_shape(t, ds, &t->n_rows, &t->n_extra);
}

int64_t strux_task_sync_size(const strux_task *t)
{
    return t->ops->sync_size ? t->ops->sync_size(t) : 0;
}

strux_status strux_task_sync_local(const strux_task *t, double *buf)
{
    return t->ops->sync_local ? t->ops->sync_local(t, buf) : STRUX_OK;
}

strux_status strux_task_sync_apply(strux_task *t, const strux_dataset *ds, const double *buf)
{
    if (!t->ops->sync_apply) return STRUX_OK;
    STRUX_TRY(t->ops->sync_apply(t, ds, buf));
    return strux_task_model_shape(t, ds, &t->n_rows, &t->n_extra);
}

strux_status strux_task_export(strux_task *t, strux_model *m)
{
    return t->ops->export_rows ? t->ops->export_rows(t, m) : STRUX_OK;
}

strux_status strux_task_model_shape(const strux_task *t, const strux_dataset *ds, int32_t *n_rows,
                                    int64_t *n_extra)
{
    if (!t->ops->model_shape) return UNSUPPORTED(t, "model_shape");
    return t->ops->model_shape(t, ds, n_rows, n_extra);
}

strux_status strux_task_label_alloc(const strux_task *t, const strux_dataset *ds, strux_label *y)
{
    int32_t parts;
    int64_t pot, mu;
    STRUX_TRY(t->ops->sizes(t, ds, &parts, &pot, &mu));
    return strux_label_alloc(y, parts, mu);
}

strux_status strux_task_pot_alloc(const strux_task *t, const strux_dataset *ds, strux_pot *pot)
{
    int32_t parts;
    int64_t n, mu;
    STRUX_TRY(t->ops->sizes(t, ds, &parts, &n, &mu));
    *pot = (strux_pot){0};
    STRUX_TRY(strux_alloc_array(&pot->s, (size_t)(n > 0 ? n : 1), sizeof *pot->s));
    pot->cap = n;
    return STRUX_OK;
}

void strux_pot_free(strux_pot *pot)
{
    strux_free(&pot->s);
    pot->cap = 0;
}

strux_status strux_task_potentials(const strux_task *t, const strux_model *m,
                                   const strux_dataset *ds, int64_t i, strux_pot *pot)
{
    STRUX_CHECK(i >= 0 && i < ds->n_local, STRUX_ERR_INTERNAL, "example %lld outside [0, %lld)",
                (long long)i, (long long)ds->n_local);
    STRUX_CHECK(strux_model_n_rows(m) == t->n_rows && strux_model_dim(m) >= ds->dim &&
                    strux_model_n_extra(m) == t->n_extra,
                STRUX_ERR_INTERNAL, "model %d x %d + %lld does not fit task '%s' (%d rows + %lld) "
                "on %d features", strux_model_n_rows(m), strux_model_dim(m),
                (long long)strux_model_n_extra(m), t->type_name, t->n_rows, (long long)t->n_extra,
                ds->dim);
    pot->stamp++;
    return t->ops->potentials(t, m, ds, i, pot);
}

strux_status strux_task_potentials_scores(const strux_task *t, const strux_dataset *ds, int64_t i,
                                          const double *row_scores, strux_pot *pot)
{
    STRUX_CHECK(t->ops->potentials_scores, STRUX_ERR_UNSUPPORTED,
                "task '%s': its potentials are more than its row scores (potentials_scores); "
                "a kernel model or --scores needs task.type = multilabel",
                t->type_name);
    pot->stamp++;
    return t->ops->potentials_scores(t, ds, i, row_scores, pot);
}

int strux_task_scores_are_potentials(const strux_task *t)
{
    return t->ops->potentials_scores != NULL;
}

strux_status strux_task_truth(const strux_task *t, const strux_dataset *ds, int64_t i,
                              strux_label *y)
{
    return t->ops->truth(t, ds, i, y);
}

strux_status strux_task_oracle(strux_task *t, const strux_pot *pot, const strux_label *truth,
                               const strux_query *q, strux_label *y, strux_answer *ans)
{
    STRUX_CHECK(q->a >= 0 && q->b >= 0 && (q->a > 0 || q->b > 0), STRUX_ERR_INTERNAL,
                "oracle direction (%g, %g) must be non-negative and non-zero", q->a, q->b);
    STRUX_CHECK(!q->wedge || q->alpha >= q->beta, STRUX_ERR_INTERNAL,
                "wedge slopes alpha %g < beta %g", q->alpha, q->beta);
    t->n_oracle_calls++;
    return t->ops->oracle(t, pot, truth, q, y, ans);
}

strux_status strux_task_candidates(strux_task *t, const strux_pot *pot, const strux_label *truth,
                                   const strux_query *q, int all, int exclude_truth,
                                   strux_candidates *out)
{
    if (!t->ops->candidates) return UNSUPPORTED(t, "candidates");
    STRUX_CHECK(q->a >= 0 && q->b >= 0 && (q->a > 0 || q->b > 0), STRUX_ERR_INTERNAL,
                "candidate direction (%g, %g) must be non-negative and non-zero", q->a, q->b);
    t->n_oracle_calls++;
    return t->ops->candidates(t, pot, truth, q, all, exclude_truth, out);
}

strux_status strux_candidates_reserve(const strux_task *t, strux_candidates *c, int32_t n,
                                      int32_t dim)
{
    c->dim = dim;
    if ((int64_t)n * dim > c->f_cap) {
        STRUX_TRY(strux_realloc_array(&c->f, (size_t)n * (size_t)dim, sizeof *c->f));
        c->f_cap = (int64_t)n * dim;
    }
    if (n <= c->cap) return STRUX_OK;
    int32_t cap = c->cap > 0 ? c->cap : 16;
    while (cap < n)
        cap *= 2;
    STRUX_TRY(strux_realloc_array(&c->value, (size_t)cap, sizeof *c->value));
    STRUX_TRY(strux_realloc_array(&c->y, (size_t)cap, sizeof *c->y));
    for (int32_t k = c->cap; k < cap; k++) {
        c->y[k] = (strux_label){0};
        strux_status st = strux_label_alloc(&c->y[k], t->n_labels, 0);
        if (st != STRUX_OK) {
            c->cap = k; /* the labels allocated so far stay owned */
            return strux_error_frame(st, __FILE__, __LINE__, __func__);
        }
    }
    c->cap = cap;
    return STRUX_OK;
}

strux_status strux_task_trees(const strux_task *t, strux_tree_set *out)
{
    *out = (strux_tree_set){0};
    return t->ops->trees ? t->ops->trees(t, out) : STRUX_OK;
}

strux_status strux_task_set_trees(strux_task *t, const strux_tree_set *ts)
{
    if (!t->ops->set_trees) return UNSUPPORTED(t, "set_trees");
    return t->ops->set_trees(t, ts);
}

void strux_task_certified(const strux_task *t, int64_t *certified, int64_t *calls)
{
    *certified = *calls = 0;
    if (t->ops->certified) t->ops->certified(t, certified, calls);
}

int strux_task_lp_stats(const strux_task *t, strux_lp_stats *oracle, strux_lp_stats *predict)
{
    *oracle = *predict = (strux_lp_stats){0};
    return t->ops->lp_stats ? t->ops->lp_stats(t, oracle, predict) : 0;
}

void strux_candidates_free(strux_candidates *c)
{
    for (int32_t k = 0; k < c->cap; k++)
        strux_label_free(&c->y[k]);
    strux_free(&c->y);
    strux_free(&c->value);
    strux_free(&c->f);
    *c = (strux_candidates){0};
}

double strux_task_loss(const strux_task *t, const strux_label *y, const strux_label *truth)
{
    return t->ops->loss(t, y, truth);
}

double strux_task_size(const strux_task *t, const strux_label *y)
{
    return t->ops->size(t, y);
}

double strux_task_score(const strux_task *t, const strux_pot *pot, const strux_label *y)
{
    return t->ops->score(t, pot, y);
}

strux_status strux_task_predict(const strux_task *t, const strux_pot *pot, strux_label *y)
{
    if (!t->ops->predict) return UNSUPPORTED(t, "predict");
    return t->ops->predict(t, pot, y);
}

strux_phi strux_task_phi(const strux_task *t, const strux_dataset *ds, int64_t i, strux_model *G,
                         double *c)
{
    strux_phi out = {.ds = ds, .n_rows = t->n_rows, .G = G, .c = c};
    out.row0 = ds->ex_ptr ? ds->ex_ptr[i] : i;
    out.n_seg = ds->ex_ptr ? (int32_t)(ds->ex_ptr[i + 1] - ds->ex_ptr[i]) : 1;
    return out;
}

static strux_status add_delta(const strux_task *t, const strux_label *y, const strux_label *truth,
                              double scale, const strux_phi *out)
{
    STRUX_CHECK(t->n_rows > 0, STRUX_ERR_INTERNAL,
                "task '%s': feature map used before strux_task_check", t->type_name);
    if (t->ops->add_delta) return t->ops->add_delta(t, y, truth, scale, out);
    STRUX_TRY(t->ops->add_feature(t, y, scale, out));
    return t->ops->add_feature(t, truth, -scale, out);
}

strux_status strux_task_add_feature(const strux_task *t, const strux_dataset *ds, int64_t i,
                                    const strux_label *y, double scale, strux_model *G)
{
    STRUX_CHECK(t->n_rows > 0, STRUX_ERR_INTERNAL,
                "task '%s': feature map used before strux_task_check", t->type_name);
    strux_phi out = strux_task_phi(t, ds, i, G, NULL);
    return t->ops->add_feature(t, y, scale, &out);
}

strux_status strux_task_add_delta(const strux_task *t, const strux_dataset *ds, int64_t i,
                                  const strux_label *y, const strux_label *truth, double scale,
                                  strux_model *G)
{
    strux_phi out = strux_task_phi(t, ds, i, G, NULL);
    return add_delta(t, y, truth, scale, &out);
}

strux_status strux_task_block_add_delta(const strux_task *t, const strux_dataset *ds, int64_t i,
                                        const strux_label *y, const strux_label *truth,
                                        double scale, double *c)
{
    strux_phi out = strux_task_phi(t, ds, i, NULL, c);
    return add_delta(t, y, truth, scale, &out);
}

int32_t strux_task_hinge_parts(const strux_task *t, const strux_label *truth, double *sigma)
{
    return t->ops->hinge_parts ? t->ops->hinge_parts(t, truth, sigma) : 0;
}

int64_t strux_task_oracle_calls(const strux_task *t)
{
    return t->n_oracle_calls;
}

int64_t strux_task_eval_size(const strux_task *t)
{
    return t->ops->eval_size ? t->ops->eval_size(t) : 0;
}

strux_status strux_task_eval_add(const strux_task *t, const strux_label *pred,
                                 const strux_label *truth, double *acc)
{
    if (!t->ops->eval_add) return UNSUPPORTED(t, "eval");
    return t->ops->eval_add(t, pred, truth, acc);
}

void strux_scores_add(strux_scores *s, const char *name, double value, int count)
{
    if (s->n >= STRUX_SCORES_MAX) return;
    snprintf(s->name[s->n], sizeof s->name[0], "%s", name);
    s->value[s->n] = value;
    s->count[s->n] = count;
    s->n++;
}

void strux_scores_format(const strux_scores *s, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < s->n && used < n; k++) {
        int w = snprintf(buf + used, n - used, s->count[k] ? "%s\"%s\": %.0f" : "%s\"%s\": %.6f",
                         k ? ", " : "", s->name[k], s->value[k]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

strux_status strux_task_eval_report(const strux_task *t, const double *acc, strux_scores *out)
{
    if (!t->ops->eval_report) return UNSUPPORTED(t, "eval");
    out->n = 0;
    return t->ops->eval_report(t, acc, out);
}

strux_status strux_task_format_label(const strux_task *t, const strux_label *y, char *buf, size_t n)
{
    if (!t->ops->format_label) return UNSUPPORTED(t, "format_label");
    return t->ops->format_label(t, y, buf, n);
}

int64_t strux_task_label_count(const strux_task *t, const strux_pot *pot)
{
    return t->ops->label_count ? t->ops->label_count(t, pot) : -1;
}

strux_status strux_task_label_at(const strux_task *t, const strux_pot *pot, int64_t index,
                                 strux_label *y)
{
    if (!t->ops->label_at) return UNSUPPORTED(t, "label_at");
    return t->ops->label_at(t, pot, index, y);
}
