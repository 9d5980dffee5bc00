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
    {"predict", "strux predict --model MODEL --data DATA --out PREDICTIONS [--scores FILE]\n"
                "              [--format ids|paths] [--rule deterministic|randomised]\n"
                "  Write one predicted label per line of DATA (multilabel: ids joined by ',';\n"
                "  hierarchy: the closure's ids, or with --format paths each most specific node\n"
                "  as its root path of data.label_names names joined by '/'). --scores FILE\n"
                "  (multilabel) also writes each example's L scores, one line per example\n"
                "  (label l is predicted iff its score > 0; a kernel model's f_l(x)).\n"},
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
            "strux gen OUTPUT --shape balanced|unbalanced|random|swiki [--rows N] [--features D]\n"
            "          [--depth K] [--cuts C] [--nodes M] [--extra-parents P]\n"
            "          [--labels-per-row R] [--nnz K] [--scale S] [--seed S] [--row-offset R]\n"
            "          [--hier FILE]\n"
            "  Write synthetic hierarchical data and its hierarchy (`parent child` lines, to\n"
            "  --hier, default OUTPUT with the extension .hier; node ids, root 0). balanced and\n"
            "  unbalanced are the thesis's sets (hierarchical.md 7.2): a complete binary tree\n"
            "  of K levels (default 4) labelled by the argmax of planted N(0,1) path scores,\n"
            "  rows N(0,1) in D dimensions (default 1000); C recursive hyperplane cuts\n"
            "  (default 10: 21 nodes, 11 leaves), rows of unit norm. random: a random tree of\n"
            "  M nodes (depth at most K) with P extra parents (a DAG), K Zipf tf-idf features a\n"
            "  row (default 50), labels from planted node weights, R leaves a row on average\n"
            "  (default 1). swiki: LSHTC SWIKI-2011's shape times S in [0.01, 1] (default 1):\n"
            "  a DAG of 50,312 nodes and 36,504 leaves, 456,886 documents (default --rows),\n"
            "  346,299 features, K non-zeros (default 48) and R leaf labels (default 1.8) a\n"
            "  document. Labels are closures without the root (swiki: leaves, as LSHTC).\n"
            "  Rows are drawn from (seed, row) alone, so --row-offset cuts the same set; they\n"
            "  are streamed (memory does not grow with N). OUTPUT ending in .svm or .txt is\n"
            "  text (swiki: LSHTC lines without a header), else the HDF5 container.\n"
            "strux gen PREFIX --zero-shot --rows N --test-rows M [--features D] [--labels L]\n"
            "          [--train-classes C] [--test-classes T] [--train-corr R] [--test-corr R]\n"
            "          [--noise S] [--spread S] [--seed S]\n"
            "  Write zero-shot data (specs/m3l.md 7.1 (i)): C training and T test categories\n"
            "  (default 40, 10) with +-1 signatures over L attributes (default 85) whose pairs\n"
            "  (2j, 2j+1) correlate +R on training and -R on test categories (default 0.2,\n"
            "  0.76), D dense features (default 252) around category means (a shared map of\n"
            "  the signature plus a category offset of std S, default 0.5) with noise S\n"
            "  (default 1): PREFIX.train.svm, PREFIX.test.svm and PREFIX.classes (the test\n"
            "  classes for m3l.classes, weighted by their shares of the test rows).\n"
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
