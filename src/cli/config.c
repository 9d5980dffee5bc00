/* cli/config.c - the run configuration (STYLE.md §7): INI files parsed with inih and
 * `--set section.key=value` overrides become entries that remember where they were set; resolving
 * applies each module's key table (defaults first, then entries in order), rejects unknown sections
 * and keys with the list of valid ones, and warns about keys the chosen implementations ignore.
 * The same tables print docs/config.md (`strux help config`). */
#include "cli.h"

#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef struct config_entry {
    char key[160]; /* "section.name" */
    char value[STRUX_OPT_STR];
    char origin[STRUX_OPT_STR + 32]; /* "file.ini:12" or "--set" */
    int stored;                      /* from a file's stored config: every key is there, so keys the
                                        chosen implementations ignore are not reported */
} config_entry;

struct strux_config {
    config_entry *e;
    int n, cap;
    strux_status st;  /* first failure inside an inih callback */
    const char *path; /* file being parsed */
    int line;         /* lines handed to inih so far */
    FILE *file;       /* file being parsed */
    int file_first;   /* index of the first entry of the file being parsed */
    int indented;     /* the last line handed to inih starts with a blank */
};

static const strux_opt_spec data_specs[] = {
    {"data.train", STRUX_OPT_STRING, offsetof(strux_data_options, train), "", 0, 0, NULL,
     "training data: LIBSVM/XMC multi-label text (plain or .gz) or a `strux convert` HDF5 file"},
    {"data.test", STRUX_OPT_STRING, offsetof(strux_data_options, test), "", 0, 0, NULL,
     "held-out data evaluated after training (empty: none)"},
    {"data.label_names", STRUX_OPT_STRING, offsetof(strux_data_options, label_names), "", 0, 0,
     NULL, "file of `id name` lines stored in the model as label names (also the shared "
     ".labels layout `id parent depth is_leaf a/b/c`: the name is the path's last segment; "
     "hierarchy ids are node ids, `strux predict --format paths` prints root paths of them; "
     "empty: none)"},
    {"data.weights", STRUX_OPT_STRING, offsetof(strux_data_options, weights), "", 0, 0, NULL,
     "loss weights of the training examples: a text file of one number >= 0 per line, one line "
     "per example in file order; the objective becomes (λ/2)||w||² + (1/W)·Σ v_i·ℓ_i with W = Σ "
     "v_i "
     "(weight 2 trains as the example twice); empty: every weight 1"},
    {"data.dim", STRUX_OPT_INT, offsetof(strux_data_options, dim), "0", 0, 2147483645, NULL,
     "feature count (file indices 1..dim); 0: from the XMC header or the largest index"},
    {"data.n_labels", STRUX_OPT_INT, offsetof(strux_data_options, n_labels), "0", 0, 2147483645,
     NULL, "label count (ids 0..n_labels-1); 0: from the XMC header or the largest id"},
    {"data.max_features", STRUX_OPT_INT, offsetof(strux_data_options, max_features), "0", 0,
     2147483645, NULL,
     "largest feature index a data file may hold (file numbering): a larger one is an input "
     "error naming file and line, raised before anything is sized by it; 0: the XMC header's D, "
     "else 2147483645"},
    {"data.bias", STRUX_OPT_DOUBLE, offsetof(strux_data_options, bias), "1", 0, 1e6, NULL,
     "value of a constant feature appended to every example (0: no bias feature)"},
    {"data.scale", STRUX_OPT_CHOICE, offsetof(strux_data_options, scale), "none", 0, 0,
     "none|maxabs",
     "feature scaling: maxabs divides every feature by its largest |value| in the training data "
     "(keeps sparsity); the factors are folded into the exported weights, so the model applies "
     "to unscaled data"},
    {"data.normalize", STRUX_OPT_CHOICE, offsetof(strux_data_options, normalize), "none", 0, 0,
     "none|l2",
     "row normalisation: l2 divides every example's features (not the bias) by their l2 norm, "
     "in training and in every file scored with the model (predict and eval read it from the "
     "model's stored configuration); applied before data.scale"},
    {NULL},
};

static const strux_opt_spec output_specs[] = {
    {"output.model", STRUX_OPT_STRING, offsetof(strux_output_options, model), "model.h5", 0, 0,
     NULL, "HDF5 model file written at the end of training (atomically)"},
    {"output.metrics", STRUX_OPT_STRING, offsetof(strux_output_options, metrics), "", 0, 0, NULL,
     "JSON-lines file with one object per epoch (empty: none)"},
    {"output.eval_every", STRUX_OPT_INT, offsetof(strux_output_options, eval_every), "1", 0,
     1000000000, NULL,
     "score data.test every this many epochs and after the last one, for the epoch line and the "
     "test_* columns of the metrics log and the model's curve; 0: after the last epoch only"},
    {"output.progress", STRUX_OPT_CHOICE, offsetof(strux_output_options, progress), "auto", 0, 0,
     "auto|always|never",
     "live progress bar within each epoch on rank 0's stderr: auto draws it when stderr is a "
     "terminal; under mpirun stderr is a pipe, so use always to see it there"},
    {"output.checkpoint", STRUX_OPT_STRING, offsetof(strux_output_options, checkpoint), "", 0, 0,
     NULL,
     "checkpoint file (HDF5, atomically replaced): the model so far plus every rank's solver "
     "state, written every output.checkpoint_every epochs or output.checkpoint_minutes and when "
     "SIGTERM or SIGUSR1 arrives (then the run stops after the current epoch, or after the "
     "current round of a dual solver with solver.sync_every > 0, and exits 0); resume with "
     "`strux train --resume FILE`, on any number of ranks; empty: output.model with .h5 "
     "replaced by .ckpt.h5"},
    {"output.checkpoint_every", STRUX_OPT_INT, offsetof(strux_output_options, checkpoint_every),
     "0", 0, 1000000000, NULL,
     "write output.checkpoint every this many epochs (0: only when a signal asks the run to stop)"},
    {"output.checkpoint_minutes", STRUX_OPT_DOUBLE,
     offsetof(strux_output_options, checkpoint_minutes), "0", 0, 1e9, NULL,
     "also write output.checkpoint when this many minutes have passed since the last one, "
     "checked after every epoch and, for the dual solvers with solver.sync_every > 0, after every "
     "round inside one (a long epoch of a large run); a resumed run continues at that round (0: "
     "no timed checkpoints)"},
    {"output.precision", STRUX_OPT_CHOICE, offsetof(strux_output_options, precision), "double", 0,
     0, "double|float",
     "the type of /weights in output.model: double, or float (IEEE 32-bit: half the file; "
     "predictions then use the rounded weights). Checkpoints always hold doubles"},
    {"output.weights", STRUX_OPT_CHOICE, offsetof(strux_output_options, weights), "auto", 0, 0,
     "auto|dense|csr",
     "how output.model stores the weights: dense (/weights, n_rows x dim) or csr (/weights_csr: "
     "indptr, indices, data of the non-zeros, row scales folded in: nnz x 12 bytes; strux "
     "inspect, predict and eval load it as a sparse model); auto: csr for a model.layout = "
     "sparse model, else dense"},
    {NULL},
};

static int task_reads(const strux_run_options *o, const char *key)
{
    return strux_task_reads_key(&o->task, key);
}

static int search_reads(const strux_run_options *o, const char *key)
{
    return strux_search_reads_key(&o->surrogate, key);
}

static int solver_reads(const strux_run_options *o, const char *key)
{
    return strux_solver_reads_key(&o->solver, key);
}

/* A section: its key table, where its struct lives, and (for the sections whose keys belong to
 * registry entries) whether the chosen entries read a key and which entries do. */
static const strux_opt_spec run_specs[] = {
    {"run.stall_timeout", STRUX_OPT_DOUBLE, offsetof(strux_job_options, stall_timeout), "600", 0,
     1e9, NULL,
     "seconds one MPI call of a rank may wait for the others before the job ends with the call, "
     "the phase and the ranks that never reached it (stopped, killed or hung); 0: wait forever"},
    {"run.max_memory", STRUX_OPT_DOUBLE, offsetof(strux_job_options, max_memory), "0", 0, 1e12,
     NULL,
     "MB of memory a rank may use: a run whose estimate (data, model copies, dual state, caches; "
     "logged by every rank at start) passes it, or passes the rank's share of the host's "
     "MemAvailable, stops before allocating with exit code 5, the estimate and the options "
     "that shrink it; 0: only MemAvailable bounds it"},
    {NULL},
};

typedef struct section {
    const char *name;
    const strux_opt_spec *specs;
    size_t offset; /* of the section's struct in strux_run_options */
    int (*reads)(const strux_run_options *o, const char *key);
    void (*readers)(const char *key, char *buf, size_t n);
    const char *(*names)(void); /* registry names of the section's .type key, or NULL */
} section;

static const char *solver_names(void)
{
    return strux_solver_names(0);
}

static const section sections[] = {
    {"data", data_specs, offsetof(strux_run_options, data), NULL, NULL, NULL},
    {"task", strux_task_opt_specs, offsetof(strux_run_options, task), task_reads,
     strux_task_key_readers, strux_task_names},
    {"surrogate", strux_search_opt_specs, offsetof(strux_run_options, surrogate), search_reads,
     strux_search_key_readers, NULL},
    {"solver", strux_solver_opt_specs, offsetof(strux_run_options, solver), solver_reads,
     strux_solver_key_readers, solver_names},
    {"model", strux_model_opt_specs, offsetof(strux_run_options, model), NULL, NULL, NULL},
    {"output", output_specs, offsetof(strux_run_options, output), NULL, NULL, NULL},
    {"run", run_specs, offsetof(strux_run_options, run), NULL, NULL, NULL},
    {"rates", strux_rates_opt_specs, offsetof(strux_run_options, rates), NULL, NULL, NULL},
    /* solver.type = m3l: its struct lives in the solver's options */
    {"m3l", strux_m3l_opt_specs,
     offsetof(strux_run_options, solver) + offsetof(strux_solver_options, m3l), solver_reads,
     strux_solver_key_readers, NULL},
    /* solver.type = m3l_kernel: its kernel, in the solver's options too */
    {"kernel", strux_kernel_opt_specs,
     offsetof(strux_run_options, solver) + offsetof(strux_solver_options, kernel), solver_reads,
     strux_solver_key_readers, NULL},
};

/* Sections whose keys the user names (issue 15): read with strux_config_each, not resolved. */
static int free_section(const char *key)
{
    size_t len = strcspn(key, ".");
    return (len == 8 && strncmp(key, "datasets", 8) == 0) ||
           (len == 11 && strncmp(key, "constraints", 11) == 0);
}

strux_status strux_config_each(const strux_config *c, const char *section,
                               strux_status (*fn)(void *ctx, const char *name, const char *value,
                                                  const char *origin),
                               void *ctx)
{
    size_t ls = strlen(section);
    for (int k = 0; k < c->n; k++)
        if (strncmp(c->e[k].key, section, ls) == 0 && c->e[k].key[ls] == '.')
            STRUX_TRY(fn(ctx, c->e[k].key + ls + 1, c->e[k].value, c->e[k].origin));
    return STRUX_OK;
}
#define N_SECTIONS ((int)(sizeof sections / sizeof *sections))

strux_status strux_config_create(strux_config **out)
{
    return strux_alloc(out, sizeof **out);
}

void strux_config_destroy(strux_config **c)
{
    if (!*c) return;
    strux_free(&(*c)->e);
    strux_free(c);
}

static strux_status add_entry(strux_config *c, const char *section, const char *name,
                              const char *value, const char *origin)
{
    STRUX_CHECK(strlen(section) + strlen(name) + 2 <= sizeof c->e->key, STRUX_ERR_CONFIG,
                "%s: key '%s.%s' is too long", origin, section, name);
    STRUX_CHECK(strlen(value) < STRUX_OPT_STR, STRUX_ERR_CONFIG, "%s: value of %s.%s is too long",
                origin, section, name);
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 32;
        STRUX_TRY(strux_realloc_array(&c->e, (size_t)cap, sizeof *c->e));
        c->cap = cap;
    }
    config_entry *e = &c->e[c->n++];
    snprintf(e->key, sizeof e->key, "%s.%s", section, name);
    snprintf(e->value, sizeof e->value, "%s", value);
    snprintf(e->origin, sizeof e->origin, "%s", origin);
    return STRUX_OK;
}

static int on_entry(void *user, const char *sec, const char *name, const char *value)
{
    strux_config *c = user;
    char origin[STRUX_OPT_STR + 32];
    snprintf(origin, sizeof origin, "%s:%d", c->path, c->line);
    if (c->st == STRUX_OK) {
        const config_entry *dup = NULL;
        for (int k = c->file_first; k < c->n && sec[0]; k++) {
            const char *key = c->e[k].key;
            size_t ls = strlen(sec);
            if (strncmp(key, sec, ls) == 0 && key[ls] == '.' && strcmp(key + ls + 1, name) == 0)
                dup = &c->e[k];
        }
        if (!sec[0])
            c->st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                    "%s: key '%s' is outside any [section]", origin, name);
        else if (dup && c->indented) /* inih's multi-line values: an indented line continues */
            c->st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                    "%s: an indented line continues the value of %s.%s (set at "
                                    "%s); values are one line: remove the indentation",
                                    origin, sec, name, dup->origin);
        else if (dup) /* one file setting a key twice is a mistake, not an override */
            c->st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                    "%s: duplicate key %s.%s, already set at %s", origin, sec, name,
                                    dup->origin);
        else
            c->st = add_entry(c, sec, name, value, origin);
    }
    return c->st == STRUX_OK;
}

/* inih reader over a FILE* that counts lines and refuses lines inih would truncate. */
static char *read_line(char *str, int num, void *stream)
{
    strux_config *c = stream;
    FILE *f = c->file;
    char *r = fgets(str, num, f);
    if (!r) return NULL;
    c->line++;
    c->indented = str[0] == ' ' || str[0] == '\t';
    size_t len = strlen(str);
    if (len == (size_t)num - 1 && str[len - 1] != '\n' && !feof(f) && c->st == STRUX_OK)
        c->st = strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                "%s:%d: line longer than %d characters", c->path, c->line, num - 2);
    return r;
}

strux_status strux_config_read_file(strux_config *c, const char *path)
{
    struct stat sb; /* a directory or FIFO is not a config file (fopen would read it as empty) */
    STRUX_CHECK(stat(path, &sb) != 0 || S_ISREG(sb.st_mode), STRUX_ERR_IO,
                "%s: %s, not a config file", path,
                S_ISDIR(sb.st_mode) ? "is a directory" : "is not a regular file");
    FILE *f = fopen(path, "r");
    STRUX_CHECK(f, STRUX_ERR_CONFIG, "%s: cannot open the config file", path);
    c->path = path;
    c->line = 0;
    c->st = STRUX_OK;
    c->file = f;
    c->file_first = c->n;
    int rc = ini_parse_stream(read_line, c, on_entry, c);
    fclose(f);
    c->path = NULL;
    c->file = NULL;
    if (c->st != STRUX_OK) return c->st;
    STRUX_CHECK(rc == 0, STRUX_ERR_CONFIG,
                "%s:%d: not an INI line (expected [section] or key = value)", path, rc);
    return STRUX_OK;
}

static int on_stored_entry(void *user, const char *sec, const char *name, const char *value)
{
    strux_config *c = user;
    if (c->st == STRUX_OK) c->st = add_entry(c, sec, name, value, c->path);
    if (c->st == STRUX_OK) c->e[c->n - 1].stored = 1;
    return c->st == STRUX_OK;
}

strux_status strux_config_read_stored(strux_config *c, const char *text, const char *origin)
{
    c->path = origin;
    c->st = STRUX_OK;
    int rc = ini_parse_string(text, on_stored_entry, c);
    c->path = NULL;
    if (c->st != STRUX_OK) return c->st;
    STRUX_CHECK(rc == 0, STRUX_ERR_CONFIG, "%s: stored config line %d is not INI", origin, rc);
    return STRUX_OK;
}

strux_status strux_config_from_stored(const char *text, const char *origin, strux_run_options *o)
{
    memset(o, 0, sizeof *o);
    for (int s = 0; s < N_SECTIONS; s++)
        STRUX_TRY(
            strux_opt_read_ini(sections[s].specs, (char *)o + sections[s].offset, text, origin));
    return STRUX_OK;
}

strux_status strux_config_set(strux_config *c, const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    const char *dot = strchr(assignment, '.');
    STRUX_CHECK(eq, STRUX_ERR_CONFIG, "--set '%s' has no '=': expected section.key=value",
                assignment);
    STRUX_CHECK(eq && dot && dot < eq && dot > assignment, STRUX_ERR_CONFIG,
                "--set '%s': expected section.key=value", assignment);
    char section[64], name[96];
    size_t ls = (size_t)(dot - assignment), ln = (size_t)(eq - dot - 1);
    STRUX_CHECK(ls < sizeof section && ln < sizeof name && ln > 0, STRUX_ERR_CONFIG,
                "--set '%s': expected section.key=value", assignment);
    memcpy(section, assignment, ls);
    section[ls] = '\0';
    memcpy(name, dot + 1, ln);
    name[ln] = '\0';
    return add_entry(c, section, name, eq + 1, "--set");
}

static const section *find_section(const char *key, size_t len)
{
    for (int s = 0; s < N_SECTIONS; s++)
        if (strlen(sections[s].name) == len && strncmp(sections[s].name, key, len) == 0)
            return &sections[s];
    return NULL;
}

static const strux_opt_spec *find_spec(const section *s, const char *key)
{
    for (const strux_opt_spec *p = s->specs; p->key; p++)
        if (strcmp(p->key, key) == 0) return p;
    return NULL;
}

static void list_keys(const section *s, char *buf, size_t n)
{
    buf[0] = '\0';
    for (const strux_opt_spec *p = s->specs; p->key; p++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", used ? ", " : "", p->key);
    }
}

static void list_sections(char *buf, size_t n)
{
    buf[0] = '\0';
    for (int s = 0; s < N_SECTIONS; s++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s[%s]", used ? ", " : "", sections[s].name);
    }
}

strux_status strux_config_resolve(strux_config *c, strux_run_options *o)
{
    memset(o, 0, sizeof *o);
    for (int s = 0; s < N_SECTIONS; s++)
        STRUX_TRY(strux_opt_defaults(sections[s].specs, (char *)o + sections[s].offset));
    char list[2048];
    for (int k = 0; k < c->n; k++) {
        const config_entry *e = &c->e[k];
        if (free_section(e->key)) continue;
        const section *s = find_section(e->key, strcspn(e->key, "."));
        if (!s) {
            list_sections(list, sizeof list);
            return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                   "%s: unknown section [%.*s]; valid sections: %s", e->origin,
                                   (int)strcspn(e->key, "."), e->key, list);
        }
        const strux_opt_spec *p = find_spec(s, e->key);
        if (!p) {
            list_keys(s, list, sizeof list);
            return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                                   "%s: unknown key '%s'; valid keys of [%s]: %s", e->origin,
                                   e->key, s->name, list);
        }
        STRUX_TRY(strux_opt_set(p, (char *)o + s->offset, e->value, e->origin));
    }
    for (int k = 0; k < c->n; k++) {
        const config_entry *e = &c->e[k];
        if (free_section(e->key)) continue;
        const section *s = find_section(e->key, strcspn(e->key, "."));
        if (e->stored || !s->reads || s->reads(o, e->key)) continue;
        char only[512] = "";
        s->readers(e->key, only, sizeof only);
        strux_log(STRUX_LOG_WARN, "%s: %s is ignored: it is read only when %s", e->origin, e->key,
                  only);
    }
    return STRUX_OK;
}

strux_status strux_config_format(const strux_run_options *o, char **text)
{
    size_t cap = 1 << 14, used = 0;
    STRUX_TRY(strux_alloc(text, cap));
    char value[STRUX_OPT_STR];
    for (int s = 0; s < N_SECTIONS; s++) {
        for (const strux_opt_spec *p = sections[s].specs; p->key; p++) {
            strux_opt_format(p, (const char *)o + sections[s].offset, value, sizeof value);
            size_t need = strlen(p->key) + strlen(value) + 64;
            if (used + need >= cap) {
                STRUX_TRY(strux_realloc_array(text, cap * 2 + need, 1));
                cap = cap * 2 + need;
            }
            if (p == sections[s].specs)
                used += (size_t)snprintf(*text + used, cap - used, "%s[%s]\n", s ? "\n" : "",
                                         sections[s].name);
            used += (size_t)snprintf(*text + used, cap - used, "%s = %s\n",
                                     p->key + strlen(sections[s].name) + 1, value);
        }
    }
    return STRUX_OK;
}

static const char *type_name(const strux_opt_spec *p)
{
    switch (p->type) {
    case STRUX_OPT_STRING:
        return "string";
    case STRUX_OPT_CHOICE:
        return "choice";
    case STRUX_OPT_INT:
        return "integer";
    case STRUX_OPT_DOUBLE:
        return "number";
    case STRUX_OPT_BOOL:
        return "boolean";
    }
    return "?";
}

void strux_config_print_reference(FILE *f)
{
    fputs("# strux configuration reference\n\n"
          "Generated by `strux help config` from the key tables of the code; a test fails when\n"
          "this page and the tables disagree. A config is an INI file; any key can be overridden\n"
          "with `strux train CONFIG --set section.key=value`. Unknown sections and keys are\n"
          "errors; keys the chosen implementation does not read are reported as warnings.\n"
          "Relative paths are relative to the working directory of the run.\n",
          f);
    for (int s = 0; s < N_SECTIONS; s++) {
        fprintf(f, "\n## [%s]\n\n| key | type | default | description |\n|---|---|---|---|\n",
                sections[s].name);
        for (const strux_opt_spec *p = sections[s].specs; p->key; p++) {
            char range[256] = "";
            if (p->type == STRUX_OPT_CHOICE) {
                snprintf(range, sizeof range, " (one of: %s)", p->choices);
                for (char *q = range; *q; q++)
                    if (*q == '|') *q = '/'; /* '|' would split the Markdown table cell */
            } else if (p->type == STRUX_OPT_INT || p->type == STRUX_OPT_DOUBLE) {
                snprintf(range, sizeof range, " (range [%.15g, %.15g])", p->lo, p->hi);
            } else if (sections[s].names &&
                       strcmp(p->key + strlen(sections[s].name), ".type") == 0) {
                snprintf(range, sizeof range, " (one of: %s)", sections[s].names());
            }
            char readers[256] = "", only[300] = "";
            if (sections[s].readers) sections[s].readers(p->key, readers, sizeof readers);
            if (readers[0]) snprintf(only, sizeof only, " Read only when `%s`.", readers);
            for (char *q = only; *q; q++)
                if (*q == '|') *q = '/';
            fprintf(f, "| `%s` | %s | `%s` | %s%s.%s |\n", p->key, type_name(p),
                    p->def[0] ? p->def : "\"\"", p->doc, range, only);
        }
    }
}
