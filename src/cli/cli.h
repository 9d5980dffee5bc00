/* cli/cli.h - private to src/cli: the run configuration (INI file + --set overrides turned into
 * each module's typed options, STYLE.md §7), the shared evaluation step, and the subcommands.
 * Only src/cli reads strux_config, prints results, and turns statuses into exit codes. */
#ifndef STRUX_CLI_H
#define STRUX_CLI_H

#include "strux/comm.h"
#include "strux/driver.h"
#include "strux/io.h"
#include "strux/rates.h"
#include "strux/solver.h"

#include <stdio.h>

/* [data] section: consumed here, in the driver. */
typedef struct strux_data_options {
    char train[STRUX_OPT_STR];
    char test[STRUX_OPT_STR];
    char label_names[STRUX_OPT_STR];
    char weights[STRUX_OPT_STR]; /* per-example loss weights of data.train, or "" */
    int64_t dim;      /* 0: from the header or the data */
    int64_t n_labels; /* 0: from the header or the data */
    double bias;      /* > 0: constant feature appended to every example */
    char scale[STRUX_OPT_STR]; /* none | maxabs: per-feature scaling learnt on the training data */
    char normalize[STRUX_OPT_STR]; /* none | l2: row l2 normalisation of every data file read */
    int64_t max_features; /* largest feature index accepted; 0: the header's D, else 2^31 - 3 */
} strux_data_options;

/* [output] section. */
typedef struct strux_output_options {
    char model[STRUX_OPT_STR];
    char metrics[STRUX_OPT_STR];
    int64_t eval_every; /* score data.test every this many epochs (0: only after training) */
    char progress[STRUX_OPT_STR]; /* auto | always | never: the live bar on rank 0's stderr */
    char checkpoint[STRUX_OPT_STR]; /* checkpoint file ("" : output.model with .ckpt.h5) */
    int64_t checkpoint_every;       /* epochs between checkpoints (0: only on a signal) */
    double checkpoint_minutes;      /* minutes between checkpoints (0: none timed) */
    char precision[STRUX_OPT_STR];  /* double | float: the type of /weights in output.model */
    char weights[STRUX_OPT_STR];    /* auto | dense | csr: /weights or /weights_csr in output.model */
} strux_output_options;

/* [run] section: how the job behaves as a job. */
#define STRUX_STALL_TIMEOUT 600 /* seconds: run.stall_timeout's default, every command's */
typedef struct strux_job_options {
    double stall_timeout; /* end the job when one MPI call waits longer (0: never) */
    double max_memory;    /* MB a rank may use (0: only the host's MemAvailable bounds it) */
} strux_job_options;

/* Every option of a run. */
typedef struct strux_run_options {
    strux_data_options data;
    strux_task_options task;
    strux_search_options surrogate;
    strux_solver_options solver;
    strux_model_options model;
    strux_output_options output;
    strux_job_options run;
    strux_rates_options rates;
} strux_run_options;

typedef struct strux_config strux_config;

strux_status strux_config_create(strux_config **out);
void strux_config_destroy(strux_config **c);
/* Read an INI file; entries remember "file:line". */
strux_status strux_config_read_file(strux_config *c, const char *path);
/* Entries from the resolved config a model or checkpoint stores (origin names it in messages). */
strux_status strux_config_read_stored(strux_config *c, const char *text, const char *origin);
/* Add "section.key=value" from the command line. */
strux_status strux_config_set(strux_config *c, const char *assignment);
/* fn(ctx, NAME, value, origin) for every entry `section.NAME` in order (the user-named sections
 * [datasets] and [constraints], which strux_config_resolve leaves alone). */
strux_status strux_config_each(const strux_config *c, const char *section,
                               strux_status (*fn)(void *ctx, const char *name, const char *value,
                                                  const char *origin),
                               void *ctx);
/* [datasets], [constraints] and [rates] into a rate-constrained problem, checked (before any data
 * is read); *out = NULL when [constraints] is empty (rates_cli.c). */
strux_status strux_cli_rates_parse(const strux_config *c, const strux_run_options *o,
                                   strux_rates **out);
/* Defaults, then every entry in order; unknown sections or keys are errors listing the valid
 * ones; keys that the chosen implementations do not read are reported as warnings. */
strux_status strux_config_resolve(strux_config *c, strux_run_options *o);
/* Options from the resolved config a model file stores (every section's table read with
 * strux_opt_read_ini, the route library users take too). */
strux_status strux_config_from_stored(const char *text, const char *origin, strux_run_options *o);
/* The fully resolved options as INI text (defaults included); caller frees with strux_free. */
strux_status strux_config_format(const strux_run_options *o, char **text);
/* docs/config.md: every key with type, default and description, as Markdown. */
void strux_config_print_reference(FILE *f);

/* Print scores as one JSON object on rank 0's stdout. Not Collective. */
void strux_cli_print_scores(const strux_comm *comm, const strux_scores *sc);
/* The same with a JSON fragment (`"key": value, ...`, or NULL) appended inside the object. */
void strux_cli_print_scores_extra(const strux_comm *comm, const strux_scores *sc,
                                  const char *extra);
/* Reader options for held-out data scored by a trained model (its dimension and label count;
 * features beyond the model are dropped and counted). */
strux_read_options strux_cli_heldout_read_options(const strux_comm *comm,
                                                  const strux_run_options *o,
                                                  const strux_model *m, int32_t n_labels);
/* Read a data file across the ranks of a job, each rank keeping its rows (data_read.c): plain
 * LIBSVM text at more than one rank in byte ranges, anything else through strux_io_dataset_load;
 * the same rows, partition and first error as a read of the whole file; data.normalize
 * applied. Collective. */
strux_status strux_cli_dataset_load(strux_comm *comm, const char *path,
                                    const strux_read_options *opt, strux_dataset **out);
/* Log the number of dropped feature entries (summed over ranks). Collective. */
strux_status strux_cli_report_dropped(strux_comm *comm, const strux_dataset *ds);
/* One warning (rank 0) for the features of ds whose column has a zero weight in every row of m
 * (features unseen in training; the bias column aside): how many, the first, and their entries
 * summed over ranks. Not an error. Collective. */
strux_status strux_cli_report_unseen(strux_comm *comm, const strux_model *m,
                                     const strux_dataset *ds);

/* What `strux train` shows per epoch (progress.c): the epoch line from the driver's record and
 * the live bar on a terminal. Not Collective. */
typedef struct strux_progress strux_progress;
strux_status strux_progress_create(strux_comm *comm, const strux_run_options *o,
                                   strux_progress **out);
void strux_progress_destroy(strux_progress **p);
/* The run starts (after a resume, at the driver's epoch). */
void strux_progress_start(strux_progress *p, const strux_driver *d);
/* The solver's step callback (a strux_progress_fn with p as its context). */
void strux_progress_step(void *p, int64_t done, int64_t total);
/* After each epoch: erase the bar, log the epoch line from the record's last row. */
void strux_progress_record(strux_progress *p, const strux_driver *d, const strux_curve *c);

/* Memory accounting (memory.c): per rank the bytes of data, model (per copy, times the copies
 * the solver keeps), dual state and caches, estimated before they are allocated. */
typedef struct strux_memory_estimate {
    double data, model, copies, dual, caches; /* bytes; model is one copy */
    int on_host;                              /* ranks sharing the host's one copy (1: none) */
    int model_known;                          /* 0: the model's shape awaits the data */
    int sparse;                               /* model.layout = sparse: model is its floor */
    int dual_sparse; /* sdca's sparse dual lists (solver.dual_blocks): dual is their floor */
} strux_memory_estimate;
/* model.share resolved: 1 when the model is held once per host (host, or auto with a solver
 * with flag shared_model and more than one rank on this host). Not Collective. */
int strux_cli_share_host(strux_comm *comm, const strux_run_options *o);
/* Before any data is read: from data.train's attributes or size, data.dim / data.n_labels. */
strux_status strux_cli_memory_before_data(strux_comm *comm, const strux_run_options *o,
                                          strux_memory_estimate *e);
/* With the data read and the task built, before the model and the solver allocate. */
void strux_cli_memory_with_data(strux_comm *comm, const strux_run_options *o,
                                const strux_dataset *train, const strux_task *task,
                                int32_t n_rows, int64_t n_extra, strux_memory_estimate *e);
/* Log the estimate on every rank and refuse it (STRUX_ERR_NOMEM, exit 5, naming the estimate and
 * the options that shrink it) when it passes run.max_memory or this rank's share of the host's
 * MemAvailable. Collective. */
strux_status strux_cli_memory_check(strux_comm *comm, const strux_run_options *o,
                                    const strux_memory_estimate *e, const char *when);

/* gen.c: LIBSVM/XMC text (`N D L`, then `l1,l2 j:v ...` per row; labels 0-based, features
 * 1-based, %.9g round-trips every float), atomically. gen_zeroshot.c: `strux gen --zero-shot`
 * (rank 0's part). */
strux_status strux_cli_write_svm(const char *path, const strux_dataset *ds);
strux_status strux_cli_gen_zeroshot(int argc, char **argv);

int strux_cmd_train(strux_comm *comm, int argc, char **argv);
int strux_cmd_predict(strux_comm *comm, int argc, char **argv);
int strux_cmd_eval(strux_comm *comm, int argc, char **argv);
int strux_cmd_convert(strux_comm *comm, int argc, char **argv);
int strux_cmd_gen(strux_comm *comm, int argc, char **argv);
/* A usage error of strux gen (cli/gen.c): "gen: REASON" and the usage line, STRUX_ERR_CONFIG. */
strux_status strux_cli_gen_usage(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* st, or when it failed the configuration error of its message followed by the usage line. */
strux_status strux_cli_gen_checked(strux_status st, const char *usage);
/* strux gen's argv: the one OUTPUT into *out; each `FLAG VALUE` whose FLAG is names[f] handed to
 * take(ctx, f, FLAG, VALUE). Usage errors (strux_cli_gen_usage with usage): an unknown option, a
 * flag without its value, a second OUTPUT, no OUTPUT; else take's status. */
strux_status strux_cli_gen_args(int argc, char **argv, const char *usage,
                                const char *const *names, size_t n,
                                strux_status (*take)(void *ctx, size_t f, const char *flag,
                                                     const char *value),
                                void *ctx, const char **out);
/* Nonzero when s ends with suffix. */
int strux_cli_ends_with(const char *s, const char *suffix);
/* `strux gen OUTPUT --shape ...` (cli/gen_shape.c): the hierarchy generators; rank 0's part. */
strux_status strux_cli_gen_shape(int argc, char **argv);
#define STRUX_GEN_SHAPE_USAGE                                                                      \
    "usage: strux gen OUTPUT --shape balanced|unbalanced|random|swiki [--rows N] [--features D] "   \
    "[--depth K] [--cuts C] [--nodes M] [--extra-parents P] [--labels-per-row R] [--nnz K] "       \
    "[--scale S] [--seed S] [--row-offset R] [--hier FILE]"
/* `strux gen DIR --kind KIND ...` (gen_churn.c: the churn problem of dataset_constraints.md
 * §4.5). */
int strux_cli_gen_kind(strux_comm *comm, int argc, char **argv);
int strux_cmd_inspect(strux_comm *comm, int argc, char **argv);
int strux_cmd_help(strux_comm *comm, int argc, char **argv);

/* Print the agreed error (rank 0) and map the status to the process exit code. */
int strux_cli_fail(strux_comm *comm, strux_status st);
/* A command whose work is rank 0's (convert, gen): rank 0 runs fn, every rank agrees on its
 * status and returns the exit code. Collective. */
int strux_cli_run_on_root(strux_comm *comm, strux_status (*fn)(int argc, char **argv), int argc,
                          char **argv);

#endif
