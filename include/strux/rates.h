/* strux/rates.h - training the binary task under dataset (rate) constraints (issue 15,
 * specs/dataset_constraints.md): [datasets] definitions, [constraints] expressions and the
 * [rates] settings turned into ramp MM (Alg. 1) around a multiplier cutting plane (Alg. 2, cut
 * chooser E.1, E.2 or the 1-D midpoint, GLPK on rank 0, v broadcast) and, with model.bias = free,
 * a bias cutting plane (Alg. 3, F.2.1 or F.2.2), whose inner problems are weighted SVMs solved by
 * the project's SDCA through the training driver (strux_driver_solve, warm-started). The MM's
 * state rides in the driver's checkpoints: a stopped run resumes inside the same SDCA solve.
 *
 * Parametrisation. The spec's score is f(x) = z = w·x − b (margin ½ ramp σ(z) = clip(½ + z, 0,
 * 1)). The weights the SDCA solver (and the model file) hold are w̃ = 2w, so the stored model
 * scores s = w̃·x = 2z (a free bias rides in the bias column as −2b/c, c = data.bias) and the
 * deterministic classifier is s ≥ 0; the randomised one predicts positive with probability
 * σ(s/2). solver.lambda is the margin-1 SVM's λ' (the binary task's); the constrained problem's λ
 * in the margin-½ parametrisation is λ = 2λ' (dataset_constraints.md §5 A3: λ = 1/n there is
 * λ' = 1/(2n), LIBLINEAR's C = 2).
 *
 * Inner problem. Each example e's merged two-hinge loss α̌_e max(0, ½ + z) + β̌_e max(0, ½ − z)
 * (§3.7) is two rows of an inner dataset (row 2e: the hinge max(0, 1 + s) with loss weight α̌_e,
 * row 2e+1: max(0, 1 − s) with weight β̌_e), with W = N (the number of examples): the SDCA
 * objective is then exactly 2·(Ψ − constants), its gap twice Ψ's. Both rows' duals move together
 * in the merged step (the spec's ξ_e = ξ+ − ξ−); warm starts clip each hinge's dual into its new
 * box and rebuild w.
 *
 * Every function is Collective unless marked. */
#ifndef STRUX_RATES_PUBLIC_H
#define STRUX_RATES_PUBLIC_H

#include "strux/driver.h"
#include "strux/io.h"

typedef struct strux_rates_options {
    char objective[STRUX_OPT_STR];    /* rates.objective: non-negative combination of rates */
    int64_t mm_steps;                 /* rates.mm_steps */
    double mm_tol;                    /* rates.mm_tol: relative improvement stop */
    char cut[STRUX_OPT_STR];          /* rates.cut: max | center | midpoint */
    double eps;                       /* rates.eps: Alg. 2 stop U − L ≤ eps */
    double v_max;                     /* rates.v_max */
    int64_t inner_epochs;             /* rates.inner_epochs: epochs per inner solve at most */
    int64_t max_cuts;                 /* rates.max_cuts: Alg. 2 iterations per MM step at most */
    char bias_cut[STRUX_OPT_STR];     /* rates.bias_cut: min | center (model.bias = free) */
    char start[STRUX_OPT_STR];        /* rates.start: zero */
    char return_rule[STRUX_OPT_STR];  /* rates.return: average | best_bound */
    char on_violation[STRUX_OPT_STR]; /* rates.on_violation: fail | keep */
} strux_rates_options;
extern const strux_opt_spec strux_rates_opt_specs[]; /* section [rates] */

typedef struct strux_rates strux_rates;

/* An empty problem (the objective from opt). Not Collective. */
strux_status strux_rates_create(const strux_rates_options *opt, strux_rates **out);
void strux_rates_destroy(strux_rates **r);
/* [datasets] NAME = TEXT (empty text removes). Not Collective. */
strux_status strux_rates_define(strux_rates *r, const char *name, const char *text,
                                const char *origin);
/* [constraints] NAME = TEXT in config order (a name given again replaces it in place, empty
 * text removes it). Not Collective. */
strux_status strux_rates_constrain(strux_rates *r, const char *name, const char *text,
                                   const char *origin);
/* Check the definitions, parse every constraint and the objective, check the settings: all
 * STRUX_ERR_CONFIG, before any data is read. Not Collective. */
strux_status strux_rates_check(strux_rates *r);
int32_t strux_rates_n_constraints(const strux_rates *r); /* Not Collective */
/* The [datasets] and [constraints] sections as they stand (--set applied) as INI text, for the
 * stored config of model files and checkpoints (a resumed run reads them back); *text is
 * caller-owned. Not Collective. */
strux_status strux_rates_config_text(const strux_rates *r, char **text);

/* Bind to the training data (binary labels) of task (its name: baselines and rates.start must be
 * models of it): read the baselines (a model file of the training data's dimension, read on rank
 * 0 and broadcast, or a file of ±1 predictions, one per training example; STRUX_ERR_INPUT naming
 * the file otherwise), evaluate the datasets on the local rows, allreduce their sizes,
 * canonicalise, run the infeasibility check (STRUX_ERR_CONFIG naming the first constraint that
 * cannot hold), and build the inner dataset (*inner, owned by r) the solver and the driver must
 * be created on. lambda is solver.lambda (λ'); free_bias: model.bias = free (Alg. 3; the data's
 * bias column is then the bias, not a feature). */
strux_status strux_rates_bind(strux_rates *r, strux_comm *comm, const strux_dataset *train,
                              const char *task, double lambda, int free_bias,
                              const strux_dataset **inner);
/* data.test (after strux_rates_bind; NULL: none): the datasets on its rows, for the NAME.test
 * columns of the record and /rates/test_value. A dataset not evaluable there (a `rows` file
 * without TEST_FILE, a prediction-file baseline) gives NaN. */
strux_status strux_rates_bind_test(strux_rates *r, const strux_dataset *test);
/* The hook giving the metrics columns and carrying the MM's state in checkpoints, with the inner
 * solver (the driver's SDCA, created on the inner dataset; borrowed) taking the merged two-hinge
 * step and the inner certificate (attach before strux_driver_start). STRUX_ERR_INTERNAL for a
 * solver without the dual engine's one coefficient per row. Not Collective. */
strux_status strux_rates_hook(strux_rates *r, strux_solver *solver, strux_driver_hook *h);
/* Ramp MM to the end; leaves the deterministic classifier (rates.return) in model (the solver's
 * model, which the driver exports). STRUX_ERR_NUMERIC when a constraint is still violated at the
 * end and rates.on_violation = fail. */
strux_status strux_rates_run(strux_rates *r, strux_driver *d, strux_model *model);
/* The multipliers of the last MM step (m entries; borrowed). Not Collective. */
const double *strux_rates_multipliers(const strux_rates *r);
/* After strux_rates_run: the constraint table, multipliers, train values and the randomised
 * classifier of the kept MM step (its search's iterates of positive LP dual weight, their
 * weights μ renormalised; with rates.return = best_bound the one iterate returned) moved into s
 * (caller frees with strux_rates_store_free; a second call fails). The same on every rank. Not
 * Collective. */
strux_status strux_rates_store_fill(strux_rates *r, strux_rates_store *s);
/* The report of issue 15 on a data set ds (train or data.test, test nonzero: `rows` reads its
 * TEST_FILE) for the deterministic classifier det (positive iff score ≥ 0) and the randomised one
 * of mix (each iterate with probability μ, positive with probability σ(score/2), the ramp of the
 * margin-½ score): `"datasets": {NAME: {n, positive_rate, positive_rate_rand}, ...},
 * "constraints": {NAME: {lhs, rhs, satisfied, ratio, lhs_rand, rhs_rand, satisfied_rand,
 * ratio_rand}, ...}` as a JSON fragment into *json (caller frees; identical on every rank). Every
 * non-anonymous dataset is listed, null where it is not evaluable on ds or empty; a constraint
 * whose sets are not all evaluable and non-empty is null; ratio (LHS rate / RHS rate) is null
 * unless each side is one rate term. r must have passed strux_rates_check (it need not be bound).
 * Collective. */
/* Randomised predictions (strux predict --rule randomised): row i of ds (global index g) is +1
 * when u_g < Σ_s μ_s σ(f_s(x)/2) for u_g uniform in [0, 1) from the stream (seed, g) — the same
 * draws at any rank count — else −1; one line per row, gathered on rank 0 (*text, *len; NULL
 * elsewhere, caller frees). Collective. */
strux_status strux_rates_predict_randomised(strux_comm *comm, const strux_dataset *ds,
                                            const strux_model *like, const strux_rates_store *mix,
                                            uint64_t seed, char **text, size_t *len);
strux_status strux_rates_report(strux_rates *r, strux_comm *comm, const strux_dataset *ds, int test,
                                const strux_model *det, const strux_rates_store *mix, char **json);

#endif
