/* cli/help.c - `strux help [command|config]`: usage of every subcommand, and the configuration
 * reference printed from the key tables (the source of docs/config.md). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

typedef struct usage {
    const char *name;
    const char *text;
} usage;

static const usage usages[] = {
    {"train", "strux train CONFIG [--set section.key=value ...]\n"
              "  Train on data.train as configured, write output.model (HDF5, atomically) and\n"
              "  output.metrics (JSON lines per epoch); evaluate on data.test if set and print\n"
              "  its metrics as one JSON object on stdout. Run under mpirun/srun for several\n"
              "  ranks: the data is sharded, the result does not depend on the rank count.\n"
              "  Each epoch logs one line (objective, gap, held-out metric every\n"
              "  output.eval_every epochs, time, ETA); on a terminal a live bar runs within\n"
              "  the epoch (output.progress). The dual solvers (solver.type = bcfw, sdca,\n"
              "  cutting_plane) stop when the duality gap reaches solver.tol.\n"
              "strux train [CONFIG] --resume CHECKPOINT [--set section.key=value ...]\n"
              "  Continue from a checkpoint (output.checkpoint, written every\n"
              "  output.checkpoint_every epochs and when SIGTERM or SIGUSR1 stops a run after\n"
              "  its epoch, with exit status 0) with the same number of ranks; without CONFIG\n"
              "  the checkpoint's stored config is used. The result equals an uninterrupted\n"
              "  run's.\n"},
    {"predict", "strux predict --model MODEL --data DATA --out PREDICTIONS [--format ids|paths]\n"
                "  Write one predicted label per line of DATA (multilabel: ids joined by ',';\n"
                "  hierarchy: the closure's ids, or with --format paths each most specific node\n"
                "  as its root path of data.label_names names joined by '/').\n"},
    {"eval", "strux eval --model MODEL --data DATA\n"
             "  Print the task's metrics on DATA as one JSON object (multilabel: hamming_loss,\n"
             "  subset_accuracy, micro_f1, macro_f1, example_f1, n).\n"},
    {"convert", "strux convert INPUT OUTPUT [--dim D] [--n-labels L]\n"
                "  Convert LIBSVM/XMC text (plain or .gz) to the HDF5 CSR container, from which\n"
                "  every rank reads only its own rows.\n"},
    {"gen", "strux gen OUTPUT --rows N --features D --labels L [--nnz K] [--labels-per-row M]\n"
            "          [--noise S] [--seed S] [--row-offset R]\n"
            "  Write synthetic multi-label data from a planted sparse linear model: K features\n"
            "  per row (default min(100, D)) with Zipf popularity, tf-idf-like values, unit\n"
            "  norm; label k on iff w*_k.x + noise > t_k, label frequencies a power law with M\n"
            "  labels per row on average (default min(3, L/2), at most L/2); noise S is the\n"
            "  label noise relative to each label's score spread (default 0.1). --seed\n"
            "  (default 1) fixes the model and the rows; row i is the same in every run, so a\n"
            "  test set of the same model is the same seed with --row-offset past the training\n"
            "  rows. OUTPUT is the HDF5 container, or LIBSVM/XMC text when it ends in .svm.\n"
            "strux gen DIR --kind churn [--seed S]\n"
            "  Write the synthetic churn problem of configs/churn.ini into DIR: train.svm and\n"
            "  test.svm (binary, D3's rows unlabeled), the rows files d{1,2,3}_{train,test}.txt\n"
            "  of D1 (sampled near the deployed model's boundary), D2 and D3 (i.i.d.), 80/20,\n"
            "  and the deployed model deployed.h5 (dataset_constraints.md §4.5).\n"},
    {"inspect", "strux inspect MODEL\n"
                "  Print a model's summary, provenance, training curve and resolved config.\n"},
    {"help", "strux help [COMMAND | config]\n"
             "  Usage of a command, or the reference of every configuration key.\n"},
};

static void print_all(void)
{
    printf("strux %s - distributed max-margin structured prediction\n\nCommands:\n",
           STRUX_VERSION);
    for (size_t k = 0; k < sizeof usages / sizeof *usages; k++) printf("\n%s", usages[k].text);
    printf("\nOptions of every command: --quiet (warnings and errors only), --verbose (debug\n"
           "messages, error traces), --log-json (every log line as one JSON object:\n"
           "{\"rank\", \"level\", \"msg\"}). `strux --version` prints the version.\n"
           "Exit codes: 0 success, 1 runtime error, 2 usage or config error, 3 input data\n"
           "error, 4 file error, 5 out of memory.\n");
}

int strux_cmd_help(strux_comm *comm, int argc, char **argv)
{
    if (strux_comm_rank(comm) != 0) return 0;
    if (argc < 2) {
        print_all();
        return 0;
    }
    if (strcmp(argv[1], "config") == 0) {
        strux_config_print_reference(stdout);
        return 0;
    }
    for (size_t k = 0; k < sizeof usages / sizeof *usages; k++)
        if (strcmp(argv[1], usages[k].name) == 0) {
            fputs(usages[k].text, stdout);
            return 0;
        }
    fprintf(stderr, "strux: no help for '%s'\n", argv[1]);
    return 2;
}
