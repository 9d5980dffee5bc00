/* solvers/solver.c - the public solver API: options, creation by name (with the checks of which
 * search and surrogate each solver takes), dispatch, checkpoint state, and the primal objective
 * J(w) shared by every solver's certificate, evaluated with the exact search. */
#include "solver_impl.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const strux_opt_spec strux_solver_opt_specs[] = {
    {"solver.type", STRUX_OPT_STRING, offsetof(strux_solver_options, type), "sgd", 0, 0, NULL,
     "training algorithm: sgd (Pegasos mini-batch subgradient), bcfw (block-coordinate "
     "Frank-Wolfe), sdca (dual coordinate ascent; per-label closed form where the loss is a sum "
     "of binary hinges), cutting_plane (n-slack working sets), rta (spanning-tree ensembles: "
     "steps over the task's candidate lists, rta.md), m3l (multi-label hinges coupled by a "
     "label-correlation prior R, section [m3l], specs/m3l.md); the dual solvers run CoCoA+ "
     "rounds over the ranks and certify a duality gap"},
    {"solver.lambda", STRUX_OPT_DOUBLE, offsetof(strux_solver_options, lambda), "1e-3", 1e-12, 1e6,
     NULL, "regularisation λ of J(w) = (λ/2)||w||² + (1/n) Σ ℓ_i(w)"},
    {"solver.epochs", STRUX_OPT_INT, offsetof(strux_solver_options, epochs), "20", 1, 1e9, NULL,
     "epochs at most (sgd: passes; dual solvers: rounds of solver.local_passes passes)"},
    {"solver.tol", STRUX_OPT_DOUBLE, offsetof(strux_solver_options, tol), "1e-4", 0, 1, NULL,
     "stop once the duality gap is at most tol times the primal objective "
     "(checked after every epoch); 0: run every epoch"},
    {"solver.certify_every", STRUX_OPT_INT, offsetof(strux_solver_options, certify_every), "1", 0,
     1e9, NULL,
     "evaluate the objective (and for the dual solvers the duality gap, on which solver.tol "
     "stops) every this many epochs and after the last one: a pass of exact searches over the "
     "data, as costly as an epoch; other epochs log NaN (0: after the last epoch only)"},
    {"solver.time_limit", STRUX_OPT_DOUBLE, offsetof(strux_solver_options, time_limit), "0", 0,
     1e12, NULL,
     "stop after the epoch in which the training time (epochs and certificates) reaches this many "
     "seconds; the model is written as after the last epoch (0: no limit)"},
    {"solver.seed", STRUX_OPT_INT, offsetof(strux_solver_options, seed), "1", 0, 9.2e18, NULL,
     "seed of every random draw (example order); draws do not depend on the rank count"},
    {"solver.batch", STRUX_OPT_INT, offsetof(strux_solver_options, batch), "16", 1, 1e9, NULL,
     "global mini-batch: examples per step, split over ranks, one allreduce "
     "per step"},
    {"solver.average", STRUX_OPT_BOOL, offsetof(strux_solver_options, average), "true", 0, 0, NULL,
     "export the average of the iterates of the current epoch rather "
     "than the last iterate"},
    {"solver.local_passes", STRUX_OPT_INT, offsetof(strux_solver_options, local_passes), "1", 1,
     1e6, NULL,
     "H: passes each rank makes over its examples of a round before the "
     "allreduce of Δw (CoCoA+ local iterations)"},
    {"solver.sync_every", STRUX_OPT_INT, offsetof(strux_solver_options, sync_every), "0", 0, 1e12,
     NULL,
     "examples (over all ranks) per CoCoA+ round: an allreduce of Δw "
     "after every this many examples of the epoch's order; smaller rounds bring -np > 1 closer "
     "to the serial trajectory at one model-sized allreduce each (0: one round per epoch). rta: "
     "every example of a round steps against the same weights, one collective combines the "
     "steps and a line search scales them, so the trajectory depends on this value and not on "
     "the rank count; 1 is the serial algorithm (0: rounds of 16, README \"RTA\")"},
    {"solver.blocks", STRUX_OPT_INT, offsetof(strux_solver_options, blocks), "0", 0, 1e6, NULL,
     "data blocks of the CoCoA+ rounds: the examples are cut into this many fixed blocks "
     "(balanced by non-zeros) that the ranks share whole, so at a fixed value every rank count "
     "that divides among them (np ≤ blocks) follows one trajectory and a checkpoint resumes at "
     "any of them; 0: one block per rank (the trajectory then depends on the rank count; rta's "
     "does not, so there blocks only decide where a checkpoint resumes)"},
    {"solver.weighted_average", STRUX_OPT_BOOL, offsetof(strux_solver_options, weighted_average),
     "false", 0, 0, NULL,
     "export BCFW's weighted average w̄ ← (t·w̄ + 2·w)/(t + 2) over rounds t (Lacoste-Julien et "
     "al. 2013) instead of the iterate; the gap is then J(w̄) − D"},
    {"solver.active_sets", STRUX_OPT_BOOL, offsetof(strux_solver_options, active_sets), "false",
     0, 0, NULL,
     "sdca on a 1-vs-All task (multilabel: one binary hinge per label): PPDSparse's primal-dual "
     "active sets. An example's dual coordinates are kept sparsely, its positives from the "
     "start and a negative only once its hinge is violated: after each epoch the examples are "
     "scored against the rows they touch (the weights by column) and violated negatives join, "
     "settled ones leave; the certificate's primal is computed the same way, exactly. With "
     "model.bias_centre < 0 (needed: then a negative that shares no feature with a row starts "
     "satisfied) a row grows only with the examples that touch it, and the dual state with the "
     "coordinates that matter, not examples x labels"},
    {"solver.shrinking", STRUX_OPT_BOOL, offsetof(strux_solver_options, shrinking), "true", 0, 0,
     NULL,
     "sdca on binary hinges (1-vs-All): LIBLINEAR's shrinking and stopping per label: leave out "
     "of the passes the coordinates whose projected gradient says they stay at a bound, bring a "
     "label's back when its range closes, then go on at a tenfold finer level (the certificates "
     "always score every coordinate); false for ablations"},
    {"solver.dual_blocks", STRUX_OPT_CHOICE, offsetof(strux_solver_options, dual_blocks), "auto", 0,
     0, "auto|dense|sparse",
     "sdca on binary hinges: its dual variables as a dense block per example, or as lists of the "
     "non-zero ones (1-vs-All with many labels, where most are 0); auto: sparse from 64 labels "
     "(hinges per example) on. sparse needs a sum of binary hinges (task flag hinge_parts, "
     "surrogate flag one_call) and no [constraints]; with solver.active_sets it stays auto (the "
     "active coordinates are kept sparsely by construction)"},
    {"solver.cp_eps", STRUX_OPT_DOUBLE, offsetof(strux_solver_options, cp_eps), "1e-6", 0, 1e6,
     NULL,
     "a label enters example i's working set when its "
     "surrogate value exceeds the slack ξ_i by more than eps (slack_bicriteria.md §4.4)"},
    {"solver.cp_max_planes", STRUX_OPT_INT, offsetof(strux_solver_options, cp_max_planes), "32", 1,
     4096, NULL,
     "planes kept per example; when full, the one "
     "idle longest (zero weight) is dropped"},
    {"solver.cp_qp_passes", STRUX_OPT_INT, offsetof(strux_solver_options, cp_qp_passes), "1", 0,
     1000, NULL,
     "passes over every local working set per round "
     "that re-optimise the restricted dual without oracle calls"},
    {"solver.update", STRUX_OPT_CHOICE, offsetof(strux_solver_options, update), "newton", 0, 0,
     "newton|best",
     "rta step: newton (one capped conic step over every candidate of the trees' lists and the "
     "truth, rta.md §3.5) or best (exact line search towards the best candidate, §3.4); the "
     "spec's box constant C is 1/(λn) here"},
    {"solver.qp", STRUX_OPT_CHOICE, offsetof(strux_solver_options, qp), "projected", 0, 0,
     "projected|exact",
     "rta Newton subproblem max bᵀλ − ½λᵀQλ over λ ≥ 0, Σλ ≤ 1: projected (Newton point, "
     "projection, segment line search) or exact (to a KKT residual of 1e-10)"},
    {"solver.exclude_truth", STRUX_OPT_BOOL, offsetof(strux_solver_options, exclude_truth), "false",
     0, 0, NULL,
     "rta best step: leave the truth out of the candidates (the reference code's update A)"},
    {NULL},
};

/* The names of the solvers with every flag of caps (have) or with none of them (!have). */
static const char *list_names(char *names, size_t n, unsigned caps, int have)
{
    names[0] = '\0';
    for (const strux_solver_entry *e = strux_solver_registry; e->name; e++)
        if (have ? (e->caps & caps) == caps : !(e->caps & caps)) {
            if (names[0]) strncat(names, ", ", n - strlen(names) - 1);
            strncat(names, e->name, n - strlen(names) - 1);
        }
    return names;
}

const char *strux_solver_names(unsigned caps)
{
    static char names[512];
    return list_names(names, sizeof names, caps, 1);
}

const char *strux_solver_names_without(unsigned caps)
{
    static char names[512];
    return list_names(names, sizeof names, caps, 0);
}

static strux_status find_entry(const char *type, const strux_solver_entry **out)
{
    const strux_solver_entry *e = strux_solver_registry;
    while (e->name && strcmp(e->name, type) != 0)
        e++;
    STRUX_CHECK(e->name, STRUX_ERR_CONFIG, "solver.type = '%s' is unknown; valid: %s", type,
                strux_solver_names(0));
    *out = e;
    return STRUX_OK;
}

/* What the solver kind needs of the search and surrogate (slack_bicriteria.md §4.2, §3.2). */
static strux_status check_caps(const strux_solver_entry *e, unsigned search_caps,
                               const char *search, const char *surrogate)
{
    STRUX_CHECK(!(search_caps & STRUX_CAP_NEEDS_SLACK) || (e->caps & STRUX_CAP_KEEPS_SLACK),
                STRUX_ERR_CONFIG,
                "surrogate.search = %s needs the slack ξ_i of each example (flag keeps_slack), "
                "which solver.type = %s does not keep; solvers that do: %s",
                search, e->name, strux_solver_names(STRUX_CAP_KEEPS_SLACK));
    STRUX_CHECK(!(e->caps & STRUX_CAP_DUAL) || (search_caps & STRUX_CAP_AFFINE), STRUX_ERR_CONFIG,
                "solver.type = %s keeps a dual, which needs a surrogate affine in the margin (flag "
                "affine; slack_bicriteria.md §4.2); surrogate.type = %s is not: surrogates that "
                "are: %s; solvers without a dual: %s",
                e->name, surrogate, strux_surrogate_names(STRUX_CAP_AFFINE),
                strux_solver_names_without(STRUX_CAP_DUAL));
    /* the candidate-list steps (rta) price a label by its margin-rescaled violation m + ℓ */
    STRUX_CHECK(!(e->caps & STRUX_CAP_NEEDS_CANDIDATES) || (search_caps & STRUX_CAP_ONE_CALL),
                STRUX_ERR_CONFIG,
                "solver.type = %s steps on the margin-rescaled hinge (flag one_call); "
                "surrogate.type = %s is not it: use surrogate.type = %s",
                e->name, surrogate, strux_surrogate_names(STRUX_CAP_ONE_CALL));
    return STRUX_OK;
}

/* A solver that steps over candidate lists needs a task that hands them out. */
static strux_status check_task(const strux_solver_entry *e, unsigned task_caps, const char *task)
{
    STRUX_CHECK(!(e->caps & STRUX_CAP_NEEDS_CANDIDATES) || (task_caps & STRUX_CAP_CANDIDATES),
                STRUX_ERR_CONFIG,
                "solver.type = %s steps over the task's candidate lists (flag candidates), which "
                "task.type = %s does not hand out (task.type = rta does)",
                e->name, task);
    return STRUX_OK;
}

/* A solver of binary hinges (m3l) needs a task whose margin loss separates into them and the
 * surrogate whose loss is that margin loss. */
static strux_status check_hinge_parts(const strux_solver_entry *e, unsigned task_caps,
                                      const char *task, unsigned search_caps,
                                      const char *surrogate)
{
    if (!(e->caps & STRUX_CAP_NEEDS_HINGE_PARTS)) return STRUX_OK;
    STRUX_CHECK(task_caps & STRUX_CAP_HINGE_PARTS, STRUX_ERR_CONFIG,
                "solver.type = %s trains a sum of binary hinges, one per label (flag "
                "hinge_parts), which task.type = %s lacks: use task.type = multilabel",
                e->name, task);
    STRUX_CHECK(search_caps & STRUX_CAP_ONE_CALL, STRUX_ERR_CONFIG,
                "solver.type = %s trains the margin-rescaled hinge (flag one_call); "
                "surrogate.type = %s is not it: use surrogate.type = margin",
                e->name, surrogate);
    return STRUX_OK;
}

/* A bias left out of the regulariser breaks the dual solvers' closed forms (their dual would need
 * the equality constraint of an unregularised offset). */
static strux_status check_bias(const strux_solver_entry *e, int free_bias)
{
    STRUX_CHECK(!free_bias || (e->caps & STRUX_CAP_FREE_BIAS), STRUX_ERR_CONFIG,
                "model.bias = free needs a solver with flag free_bias (the bias left out of the "
                "regulariser); solver.type = %s lacks it: solvers with it: %s; or keep "
                "model.bias = regularised (a larger data.bias regularises the bias less)",
                e->name, strux_solver_names(STRUX_CAP_FREE_BIAS));
    return STRUX_OK;
}

/* Active sets (sdca): one binary hinge per label id, margin rescaling, and a negative bias centre
 * (without it every negative of every row is violated at the start and every coordinate joins);
 * the centre is implemented by them alone (the intercepts of the hinges it shifts). */
static strux_status check_active_sets(const strux_solver_entry *e, const strux_solver_options *o,
                                      unsigned task_caps, const char *task, unsigned search_caps,
                                      const char *surrogate, const strux_model_options *mo)
{
    if (!o->active_sets && mo->bias_centre == 0) return STRUX_OK;
    const char *what = o->active_sets ? "solver.active_sets = true" : "model.bias_centre != 0";
    STRUX_CHECK(e->caps & STRUX_CAP_ACTIVE_SETS, STRUX_ERR_CONFIG,
                "%s needs a solver with flag active_sets; solver.type = %s lacks it: solvers with "
                "it: %s",
                what, e->name, strux_solver_names(STRUX_CAP_ACTIVE_SETS));
    STRUX_CHECK(task_caps & STRUX_CAP_LABEL_PARTS, STRUX_ERR_CONFIG,
                "%s needs a task whose hinges are one per label id (flag label_parts); task.type "
                "= %s lacks it: use task.type = multilabel",
                what, task);
    STRUX_CHECK(search_caps & STRUX_CAP_ONE_CALL, STRUX_ERR_CONFIG,
                "%s trains the margin-rescaled hinges (flag one_call); surrogate.type = %s is not "
                "it: use surrogate.type = margin",
                what, surrogate);
    STRUX_CHECK(o->active_sets, STRUX_ERR_CONFIG,
                "model.bias_centre = %g is implemented by sdca's active sets: set "
                "solver.active_sets = true, or model.bias_centre = 0",
                mo->bias_centre);
    STRUX_CHECK(mo->bias_centre < 0, STRUX_ERR_CONFIG,
                "solver.active_sets = true needs model.bias_centre < 0 (PPDSparse's negative bias "
                "start: -2/data.bias starts every negative that shares no feature with a row "
                "beyond its margin; at 0 every negative of every row would join)");
    STRUX_CHECK(strcmp(mo->bias, "regularised") == 0, STRUX_ERR_CONFIG,
                "model.bias_centre needs model.bias = regularised (a bias column to centre), not "
                "%s",
                mo->bias);
    STRUX_CHECK(strcmp(o->dual_blocks, "auto") == 0, STRUX_ERR_CONFIG,
                "solver.dual_blocks = %s does not apply with solver.active_sets = true (it holds "
                "the active coordinates alone, sparse by construction): leave it at auto",
                o->dual_blocks);
    return STRUX_OK;
}

/* One copy of the model per host is written by the CoCoA+ engine's syncs alone. */
static strux_status check_share(const strux_solver_entry *e, const char *share)
{
    STRUX_CHECK(strcmp(share, "host") != 0 || (e->caps & STRUX_CAP_SHARED_MODEL),
                STRUX_ERR_CONFIG,
                "model.share = host needs a solver with flag shared_model (its syncs write the "
                "host's one copy of the model); solver.type = %s lacks it: solvers with it: %s; "
                "or model.share = auto | none",
                e->name, strux_solver_names(STRUX_CAP_SHARED_MODEL));
    return STRUX_OK;
}

strux_status strux_solver_check_options(const strux_solver_options *opt,
                                        const strux_search_options *so,
                                        const strux_task_options *to, const strux_model_options *mo)
{
    const strux_solver_entry *e;
    unsigned search_caps, task_caps;
    char search[64];
    STRUX_TRY(find_entry(opt->type, &e));
    STRUX_TRY(check_bias(e, strcmp(mo->bias, "free") == 0));
    STRUX_TRY(check_share(e, mo->share));
    STRUX_CHECK(mo->prune_every == 0 || (e->caps & STRUX_CAP_PRUNE), STRUX_ERR_CONFIG,
                "model.prune_every needs a solver with flag prune (its iterate pruned between "
                "epochs); solver.type = %s lacks it: solvers with it: %s",
                e->name, strux_solver_names(STRUX_CAP_PRUNE));
    STRUX_CHECK(mo->prune_every == 0 || mo->prune > 0, STRUX_ERR_CONFIG,
                "model.prune_every = %lld needs the threshold model.prune > 0",
                (long long)mo->prune_every);
    STRUX_TRY(strux_task_type_caps(to->type, &task_caps));
    STRUX_TRY(check_task(e, task_caps, to->type));
    STRUX_TRY(strux_search_type_caps(so, task_caps, &search_caps, search, sizeof search));
    /* the certificate's exact search is the surrogate's default (strux_search_create_exact):
     * it must suit the task too, or the run would fail after reading the data */
    strux_search_options exact = *so;
    unsigned exact_caps;
    char exact_name[64];
    snprintf(exact.search, sizeof exact.search, "auto");
    STRUX_TRY(
        strux_search_type_caps(&exact, task_caps, &exact_caps, exact_name, sizeof exact_name));
    STRUX_TRY(check_hinge_parts(e, task_caps, to->type, search_caps, so->type));
    unsigned needs;
    const char *why;
    STRUX_TRY(strux_task_needs(to, &needs, &why));
    char flags[128];
    strux_caps_format(needs & ~search_caps, flags, sizeof flags);
    STRUX_CHECK((search_caps & needs) == needs, STRUX_ERR_CONFIG,
                "task.type = %s needs a surrogate with flag %s (%s); surrogate.type = %s with "
                "surrogate.search = %s lacks it: surrogates with it: %s",
                to->type, flags, why, so->type, search, strux_surrogate_names(needs));
    STRUX_CHECK(strcmp(opt->dual_blocks, "sparse") != 0 ||
                    ((task_caps & STRUX_CAP_HINGE_PARTS) && (search_caps & STRUX_CAP_ONE_CALL)),
                STRUX_ERR_CONFIG,
                "solver.dual_blocks = sparse keeps the duals of a sum of binary hinges, one per "
                "label (task flag hinge_parts, surrogate flag one_call); task.type = %s with "
                "surrogate.type = %s is not one: use solver.dual_blocks = dense or auto",
                to->type, so->type);
    STRUX_TRY(check_active_sets(e, opt, task_caps, to->type, search_caps, so->type, mo));
    return check_caps(e, search_caps, search, so->type);
}

int strux_solver_sparse_duals(const char *type, const char *dual_blocks, unsigned task_caps,
                              unsigned search_caps, int64_t max_parts)
{
    unsigned caps = 0;
    if (strux_solver_type_caps(type, &caps) != STRUX_OK) {
        strux_error_clear(); /* an unknown solver: the options check names it */
        return 0;
    }
    if (!(caps & STRUX_CAP_SPARSE_DUALS) || !(task_caps & STRUX_CAP_HINGE_PARTS) ||
        !(search_caps & STRUX_CAP_ONE_CALL))
        return 0;
    return strcmp(dual_blocks, "sparse") == 0 ||
           (strcmp(dual_blocks, "auto") == 0 && max_parts >= STRUX_SPARSE_DUALS_MIN_PARTS);
}

int strux_solver_reads_key(const strux_solver_options *opt, const char *key)
{
    int listed = 0;
    for (const strux_solver_entry *e = strux_solver_registry; e->name; e++)
        if (strux_opt_keys_contain(e->keys, key)) {
            if (strcmp(e->name, opt->type) == 0) return 1;
            listed = 1;
        }
    return !listed;
}

void strux_solver_key_readers(const char *key, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const strux_solver_entry *e = strux_solver_registry; e->name; e++)
        if (strux_opt_keys_contain(e->keys, key) && used < n) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? "|" : "solver.type=", e->name);
            if (w > 0) used += (size_t)w;
        }
}

strux_status strux_solver_type_caps(const char *type, unsigned *caps)
{
    const strux_solver_entry *e;
    STRUX_TRY(find_entry(type, &e));
    *caps = e->caps;
    return STRUX_OK;
}

unsigned strux_solver_caps(const strux_solver *s)
{
    return s->caps;
}

strux_status strux_solver_create(const strux_solver_options *opt, strux_task *t, strux_search *s,
                                 const strux_dataset *ds, strux_model *m, strux_comm *comm,
                                 strux_solver **out)
{
    const strux_solver_entry *e;
    STRUX_TRY(find_entry(opt->type, &e));
    STRUX_TRY(check_caps(e, strux_search_caps(s), strux_search_name(s), strux_surrogate_name(s)));
    STRUX_TRY(check_bias(e, strux_model_free_col(m) >= 0));
    STRUX_TRY(check_task(e, strux_task_caps(t), strux_task_name(t)));
    STRUX_TRY(check_hinge_parts(e, strux_task_caps(t), strux_task_name(t), strux_search_caps(s),
                                strux_surrogate_name(s)));
    strux_solver *sv;
    STRUX_TRY(strux_alloc(&sv, sizeof *sv));
    *sv = (strux_solver){.type_name = e->name,
                         .caps = e->caps,
                         .opt = *opt,
                         .task = t,
                         .search = s,
                         .ds = ds,
                         .model = m,
                         .comm = comm};
    strux_status st = strux_search_create_exact(s, t, ds, &sv->exact);
    if (st == STRUX_OK) st = e->create(sv);
    if (st == STRUX_OK && sv->ops->setup) st = sv->ops->setup(sv);
    st = strux_comm_agree(comm, st);
    if (st != STRUX_OK) {
        strux_solver_destroy(&sv);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = sv;
    return STRUX_OK;
}

void strux_solver_destroy(strux_solver **s)
{
    if (!*s) return;
    if ((*s)->ops && (*s)->ops->destroy) (*s)->ops->destroy(*s);
    strux_search_destroy(&(*s)->exact);
    strux_free(s);
}

void strux_solver_release(strux_solver *s)
{
    if (s->ops && s->ops->destroy) s->ops->destroy(s);
    s->ops = NULL;
}

const char *strux_solver_name(const strux_solver *s)
{
    return s->type_name;
}

void strux_solver_set_progress(strux_solver *s, strux_progress_fn fn, void *ctx)
{
    s->progress = fn;
    s->progress_ctx = ctx;
}

void strux_solver_set_round_fn(strux_solver *s, strux_round_fn fn, void *ctx)
{
    s->round = fn;
    s->round_ctx = ctx;
}

strux_status strux_solver_prepare_save(strux_solver *s)
{
    return s->ops->prepare_save ? s->ops->prepare_save(s) : STRUX_OK;
}

int64_t strux_solver_epoch_position(const strux_solver *s)
{
    return s->ops->epoch_position ? s->ops->epoch_position(s) : 0;
}

strux_status strux_solver_epoch(strux_solver *s)
{
    STRUX_TRY(s->ops->epoch(s));
    s->epoch++;
    return STRUX_OK;
}

const char *const *strux_solver_columns(const strux_solver *s)
{
    return s->ops->columns;
}

strux_status strux_solver_metrics(strux_solver *s, double *values)
{
    return s->ops->metrics ? s->ops->metrics(s, values) : STRUX_OK;
}

double strux_solver_lambda(const strux_solver *s)
{
    return s->opt.lambda;
}

strux_status strux_solver_set_lambda(strux_solver *s, double lambda)
{
    STRUX_CHECK(lambda > 0 && isfinite(lambda), STRUX_ERR_CONFIG,
                "solver.lambda = %g must be a positive number", lambda);
    if (s->ops->set_lambda) s->ops->set_lambda(s, lambda);
    s->opt.lambda = lambda;
    return STRUX_OK;
}

strux_status strux_solver_prune(strux_solver *s, double threshold, int64_t *dropped)
{
    STRUX_CHECK(s->ops->prune, STRUX_ERR_UNSUPPORTED,
                "solver.type = %s cannot prune its iterate between epochs (flag prune)",
                s->type_name);
    return s->ops->prune(s, threshold, dropped);
}

int strux_solver_can_rescale_rows(const strux_solver *s)
{
    return s->ops->rescale_rows != NULL && !(s->caps & STRUX_CAP_KEEPS_SLACK);
}

strux_status strux_solver_rescale_rows(strux_solver *s, const double *g)
{
    STRUX_CHECK(strux_solver_can_rescale_rows(s), STRUX_ERR_UNSUPPORTED,
                "solver.type = %s cannot follow a change of the task's features (its working "
                "state is not kept per weight row); use sgd, sdca or bcfw",
                s->type_name);
    return s->ops->rescale_rows(s, g);
}

int64_t strux_solver_epochs_done(const strux_solver *s)
{
    return s->epoch;
}

void strux_solver_set_certificate(strux_solver *s,
                                  strux_status (*cert)(void *ctx, strux_solver *s,
                                                       strux_certificate *c),
                                  void *ctx)
{
    s->cert_override = cert;
    s->cert_ctx = ctx;
}

strux_status strux_solver_certificate(strux_solver *s, strux_certificate *c)
{
    if (s->cert_override) return s->cert_override(s->cert_ctx, s, c);
    if (s->ops->primal)
        STRUX_TRY(s->ops->primal(s, c));
    else if (!s->ops->own_primal)
        STRUX_TRY(strux_objective_primal(s->task, s->exact, s->ds, s->model, s->comm,
                                         s->opt.lambda, c));
    if (s->ops->certificate) STRUX_TRY(s->ops->certificate(s, c));
    return STRUX_OK;
}

int strux_solver_converged(const strux_solver *s)
{
    return s->ops && s->ops->converged ? s->ops->converged(s) : 0;
}

strux_status strux_solver_export_info(strux_solver *s, struct strux_model_info *info)
{
    return s->ops && s->ops->export_info ? s->ops->export_info(s, info) : STRUX_OK;
}

strux_status strux_solver_save(const strux_solver *s, strux_blob *b)
{
    char name[32] = {0};
    snprintf(name, sizeof name, "%s", s->type_name);
    STRUX_TRY(strux_blob_put(b, name, sizeof name));
    STRUX_TRY(strux_blob_put(b, &s->epoch, sizeof s->epoch));
    STRUX_TRY(strux_blob_put(b, &s->opt.lambda, sizeof s->opt.lambda)); /* an outer loop moves it */
    return s->ops->save ? s->ops->save(s, b) : STRUX_OK;
}

strux_status strux_solver_save_examples(const strux_solver *s, int64_t i0, int64_t i1,
                                        strux_blob *b)
{
    return s->ops->save_examples ? s->ops->save_examples(s, i0, i1, b) : STRUX_OK;
}

strux_status strux_solver_load_examples(strux_solver *s, int64_t i0, int64_t i1, strux_blob *b)
{
    return s->ops->load_examples ? s->ops->load_examples(s, i0, i1, b) : STRUX_OK;
}

strux_status strux_solver_load(strux_solver *s, strux_blob *b)
{
    char name[32];
    STRUX_TRY(strux_blob_get(b, name, sizeof name, "solver name"));
    name[sizeof name - 1] = '\0';
    STRUX_CHECK(strcmp(name, s->type_name) == 0, STRUX_ERR_CONFIG,
                "the checkpoint holds the state of solver '%s', not of solver.type = %s", name,
                s->type_name);
    STRUX_TRY(strux_blob_get(b, &s->epoch, sizeof s->epoch, "epoch"));
    STRUX_TRY(strux_blob_get(b, &s->opt.lambda, sizeof s->opt.lambda, "lambda"));
    STRUX_CHECK(s->opt.lambda > 0 && isfinite(s->opt.lambda), STRUX_ERR_INPUT,
                "the checkpoint holds lambda = %g", s->opt.lambda);
    return s->ops->load ? s->ops->load(s, b) : STRUX_OK;
}

strux_status strux_objective_primal(strux_task *t, strux_search *s, const strux_dataset *ds,
                                    const strux_model *m, strux_comm *comm, double lambda,
                                    strux_certificate *c)
{
    strux_pot pot = {0};
    strux_label truth = {0};
    strux_search_result r;
    double sum = 0, *part = NULL;
    int32_t n_b = ds->block_hi - ds->block_lo;
    strux_status st;
    STRUX_TRY_GOTO(st, strux_alloc_array(&part, (size_t)(n_b > 0 ? n_b : 1), sizeof *part), done);
    STRUX_TRY_GOTO(st, strux_task_pot_alloc(t, ds, &pot), done);
    STRUX_TRY_GOTO(st, strux_task_label_alloc(t, ds, &truth), done);
    for (int32_t b = 0; b < (n_b > 0 ? n_b : 1); b++) { /* per data block: strux_block_sum */
        int64_t i0 = 0, i1 = ds->n_local;
        if (n_b > 0) strux_dataset_block_range(ds, ds->block_lo + b, &i0, &i1);
        for (int64_t i = i0; i < i1; i++) {
            if (strux_dataset_weight(ds, i) == 0) continue; /* a loss that weighs nothing */
            STRUX_TRY_GOTO(st, strux_task_potentials(t, m, ds, i, &pot), done);
            STRUX_TRY_GOTO(st, strux_task_truth(t, ds, i, &truth), done);
            STRUX_TRY_GOTO(st, strux_search_run(s, t, &pot, &truth, &r), done);
            part[b] += strux_dataset_weight(ds, i) * (r.psi > 0 ? r.psi : 0); /* ℓ_i ≥ 0 */
        }
    }
done:
    strux_pot_free(&pot);
    strux_label_free(&truth);
    if (st == STRUX_OK) st = strux_comm_agree(comm, st);
    else (void)strux_comm_agree(comm, st);
    if (st == STRUX_OK) st = strux_block_sum(comm, ds, part, 1, &sum);
    strux_free(&part);
    STRUX_TRY(st);
    c->loss = sum / ds->weight_sum;
    c->primal = 0.5 * lambda * strux_model_norm2(m) + c->loss;
    c->dual = NAN;
    c->gap = NAN;
    STRUX_CHECK(isfinite(c->primal), STRUX_ERR_NUMERIC, "primal objective is %g", c->primal);
    return STRUX_OK;
}

/* Root's sum of every rank's model blob (in rank order) into m, as a blob in *sum. */
static strux_status sum_blobs(strux_model *m, strux_blob *all, strux_blob *sum, int n_ranks)
{
    strux_model *acc = NULL, *one = NULL;
    strux_status st = strux_model_create_like(m, &acc);
    if (st == STRUX_OK) st = strux_model_create_like(m, &one);
    for (int r = 0; st == STRUX_OK && r < n_ranks; r++) {
        st = strux_model_get_blob(one, all, "a rank's sparse weights");
        if (st == STRUX_OK) st = strux_model_axpy(1.0, one, acc);
    }
    if (st == STRUX_OK) st = strux_model_put(acc, sum);
    strux_model_destroy(&acc);
    strux_model_destroy(&one);
    return st;
}

/* The sparse layout's sum: each rank's non-zeros (a model blob: per row its columns and values)
 * gathered on rank 0, summed there rank by rank and broadcast, so a sync moves the non-zeros,
 * never n_rows·dim values. */
static strux_status allreduce_sparse(strux_solver *s, strux_model *m)
{
    strux_blob mine = {0}, all = {0}, sum = {0};
    strux_status st = strux_model_put(m, &mine);
    STRUX_TRY(strux_comm_agree(s->comm, st));
    void *gathered = NULL;
    size_t n_all = 0;
    st = strux_comm_gather_bytes(s->comm, mine.data, mine.n, 0, &gathered, &n_all);
    strux_blob_free(&mine);
    if (st == STRUX_OK && strux_comm_rank(s->comm) == 0) {
        all = (strux_blob){.data = gathered, .n = n_all, .cap = n_all};
        st = sum_blobs(m, &all, &sum, strux_comm_size(s->comm));
    } else {
        strux_free(&gathered);
    }
    st = strux_comm_agree(s->comm, st);
    int64_t n = (int64_t)sum.n;
    if (st == STRUX_OK) st = strux_comm_bcast(s->comm, &n, sizeof n, 0);
    if (st == STRUX_OK && strux_comm_rank(s->comm) != 0) st = strux_blob_put(&sum, NULL, (size_t)n);
    if (st == STRUX_OK) st = strux_comm_bcast(s->comm, sum.data, (size_t)n, 0);
    sum.pos = 0;
    if (st == STRUX_OK) st = strux_model_get_blob(m, &sum, "the summed sparse weights");
    strux_blob_free(&all);
    strux_blob_free(&sum);
    return strux_comm_agree(s->comm, st);
}

strux_status strux_block_sum(strux_comm *comm, const strux_dataset *ds, const double *local,
                             int64_t len, double *out)
{
    int32_t K = ds->n_blocks, lo = ds->block_lo, hi = ds->block_hi;
    if (K <= 0 || hi <= lo) { /* an unsharded set: one block per rank */
        K = strux_comm_size(comm);
        lo = strux_comm_rank(comm);
        hi = lo + 1;
    }
    double *buf = NULL;
    if (strux_comm_size(comm) == 1) {
        buf = (double *)local;
    } else {
        STRUX_TRY(strux_alloc_array(&buf, (size_t)K * (size_t)len + 1, sizeof *buf));
        memcpy(buf + (size_t)lo * (size_t)len, local, (size_t)(hi - lo) * (size_t)len * sizeof *buf);
        strux_status st = strux_comm_allreduce_sum(comm, buf, (size_t)K * (size_t)len);
        if (st != STRUX_OK) {
            strux_free(&buf);
            return st;
        }
    }
    for (int64_t j = 0; j < len; j++) {
        double acc = buf[j];
        for (int32_t k = 1; k < K; k++)
            acc += buf[(size_t)k * (size_t)len + (size_t)j];
        out[j] = acc;
    }
    if (buf != local) strux_free(&buf);
    return STRUX_OK;
}

strux_status strux_block_sum_examples(strux_comm *comm, const strux_dataset *ds, const double *x,
                                      double *out)
{
    int32_t n_b = ds->block_hi - ds->block_lo;
    if (ds->n_blocks <= 0 || n_b <= 0) n_b = 1;
    double *part = NULL;
    STRUX_TRY(strux_alloc_array(&part, (size_t)n_b, sizeof *part));
    for (int32_t b = 0; b < n_b; b++) {
        int64_t i0 = 0, i1 = ds->n_local;
        if (ds->n_blocks > 0 && ds->block_hi > ds->block_lo)
            strux_dataset_block_range(ds, ds->block_lo + b, &i0, &i1);
        for (int64_t i = i0; i < i1; i++)
            part[b] += x[i];
    }
    strux_status st = strux_block_sum(comm, ds, part, 1, out);
    strux_free(&part);
    return st;
}

strux_status strux_solver_allreduce_model(strux_solver *s, strux_model *m)
{
    if (strux_comm_size(s->comm) == 1) return STRUX_OK;
    if (strux_model_kind_of(m).layout == STRUX_LAYOUT_SPARSE) return allreduce_sparse(s, m);
    strux_model_buffer b = strux_model_storage(m);
    STRUX_TRY(b.precision == STRUX_PRECISION_FLOAT
                  ? strux_comm_allreduce_sum_float(s->comm, b.v, b.n_v)
                  : strux_comm_allreduce_sum(s->comm, b.v, b.n_v));
    if (b.n_extra) STRUX_TRY(strux_comm_allreduce_sum(s->comm, b.extra, b.n_extra));
    strux_model_refresh(m);
    return STRUX_OK;
}
