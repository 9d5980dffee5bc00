/* strux/core.h - status codes and error messages, allocation, logging, timers, counter-based RNG.
 * The bottom of the dependency graph (ARCHITECTURE.md §2): everything else includes this header.
 * Single-threaded per MPI rank: the error record and the allocator counters are process-global. */
#ifndef STRUX_CORE_H
#define STRUX_CORE_H

#include <stddef.h>
#include <stdint.h>

#define STRUX_VERSION "0.1.0"

/* ---- status codes (STYLE.md §5: few broad classes, detail in the message) ---- */
typedef enum strux_status {
    STRUX_OK = 0,
    STRUX_ERR_NOMEM,       /* allocation failed; message names the size */
    STRUX_ERR_INPUT,       /* bad data file; message names file and line */
    STRUX_ERR_CONFIG,      /* bad option; message names key and where it was set */
    STRUX_ERR_IO,          /* file system or HDF5 failure */
    STRUX_ERR_NUMERIC,     /* NaN/Inf or divergence; message names quantity, epoch, example */
    STRUX_ERR_UNSUPPORTED, /* an implementation lacks a method; message names type and method */
    STRUX_ERR_LP,          /* GLPK failure */
    STRUX_ERR_MPI,         /* MPI failure or a collective error raised by another rank */
    STRUX_ERR_INTERNAL,    /* a bug: broken invariant */
    STRUX_ERR_INTERRUPTED, /* a signal asked the run to stop (after a checkpoint) */
    STRUX_N_STATUS
} strux_status;

/* Short name of a status ("input", "config", ...). Never NULL. */
const char *strux_status_name(strux_status st);

/* Record the first message of an error and return code. Later calls before strux_error_clear()
 * replace it (the newest error wins; frames are reset). Not Collective. */
strux_status strux_error_set(strux_status code, const char *file, int line, const char *func,
                             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Append an "at file:line (func)" frame to the recorded error and return code. */
strux_status strux_error_frame(strux_status code, const char *file, int line, const char *func);
/* Replace the record with a message produced elsewhere (another rank's, via dist). */
void strux_error_adopt(const char *message);
const char *strux_error_message(void); /* the message, "" if none */
const char *strux_error_trace(void);   /* the frames, one per line, "" if none */
void strux_error_clear(void);

#define STRUX_TRY(expr)                                                                            \
    do {                                                                                           \
        strux_status st_ = (expr);                                                                 \
        if (st_ != STRUX_OK) return strux_error_frame(st_, __FILE__, __LINE__, __func__);          \
    } while (0)
#define STRUX_CHECK(cond, code, ...)                                                               \
    do {                                                                                           \
        if (!(cond)) return strux_error_set((code), __FILE__, __LINE__, __func__, __VA_ARGS__);    \
    } while (0)
/* For functions that own resources: store the status in st and jump to the cleanup label. */
#define STRUX_TRY_GOTO(st, expr, label)                                                            \
    do {                                                                                           \
        (st) = (expr);                                                                             \
        if ((st) != STRUX_OK) {                                                                    \
            strux_error_frame((st), __FILE__, __LINE__, __func__);                                 \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)
#define STRUX_CHECK_GOTO(st, cond, code, label, ...)                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            (st) = strux_error_set((code), __FILE__, __LINE__, __func__, __VA_ARGS__);             \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)

/* ---- allocation (STYLE.md §6: one allocator that counts and can be told to fail) ---- */
/* *(void **)pp = zeroed block of n bytes (n = 0 gives a valid unique block). */
strux_status strux_alloc(void *pp, size_t n);
/* Overflow-checked n × size, zeroed. */
strux_status strux_alloc_array(void *pp, size_t n, size_t size);
/* Resize *(void **)pp to n × size; new bytes are zeroed; *pp unchanged on failure. */
strux_status strux_realloc_array(void *pp, size_t n, size_t size);
/* Duplicate a NUL-terminated string (NULL gives NULL). */
strux_status strux_strdup(char **out, const char *s);
/* Free *(void **)pp (NULL allowed) and set it to NULL. */
void strux_free(void *pp);
size_t strux_alloc_bytes(void);  /* bytes currently allocated */
int64_t strux_alloc_calls(void); /* successful allocations so far (tests: no allocation in loops) */
void strux_alloc_fail_after(int64_t n); /* make the n-th next allocation fail (n < 0: never) */

/* ---- growable text (core/strbuf.c) ---- */
typedef struct strux_strbuf {
    char *s;         /* NUL-terminated text of n bytes (NULL while empty), cap allocated */
    size_t n, cap;
    strux_status st; /* the first failure; every later append is a no-op returning it */
} strux_strbuf;
/* Append printf-style text, growing the buffer; STRUX_ERR_NOMEM (sticky). Not Collective. */
strux_status strux_strbuf_printf(strux_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void strux_strbuf_free(strux_strbuf *b);

/* ---- byte streams for checkpoints: a solver or search writes its state with put and reads it
 * back in the same order with get (STYLE.md §7: state is what a checkpoint holds) ---- */
typedef struct strux_blob {
    unsigned char *data; /* n bytes in use of cap */
    size_t n, cap;
    size_t pos; /* read position */
} strux_blob;
/* Append bytes (the blob grows geometrically); src NULL appends zeros to be filled in place. */
strux_status strux_blob_put(strux_blob *b, const void *src, size_t bytes);
/* Read the next bytes; STRUX_ERR_INPUT naming what when the blob ends early. */
strux_status strux_blob_get(strux_blob *b, void *dst, size_t bytes, const char *what);
void strux_blob_free(strux_blob *b);

/* ---- logging: to stderr, "[strux rK] level: message"; INFO/DEBUG only from rank 0 ---- */
typedef enum strux_log_level {
    STRUX_LOG_ERROR = 0,
    STRUX_LOG_WARN,
    STRUX_LOG_INFO,
    STRUX_LOG_DEBUG
} strux_log_level;
void strux_log_setup(int rank, strux_log_level max_level, int json);
strux_log_level strux_log_level_get(void);
int strux_log_json(void); /* nonzero when lines are JSON objects (--log-json) */
int strux_log_rank(void);
void strux_log(strux_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Like strux_log but printed by every rank (per-rank counts, per-rank failures). */
void strux_log_all(strux_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- timers ---- */
double strux_time_now(void); /* monotonic seconds */

/* ---- counter-based RNG: draws depend on (seed, stream, epoch) and a counter, never on the
 * rank, so every rank count draws the same numbers for the same global example (ARCH §5). ---- */
typedef struct strux_rng {
    uint64_t key; /* hash of (seed, stream, epoch) */
    uint64_t ctr; /* draws so far */
} strux_rng;
void strux_rng_init(strux_rng *r, uint64_t seed, uint64_t stream, uint64_t epoch);
uint64_t strux_rng_next(strux_rng *r);
double strux_rng_uniform(strux_rng *r);             /* [0, 1) with 53 random bits */
uint64_t strux_rng_below(strux_rng *r, uint64_t n); /* uniform in [0, n), n > 0, unbiased */
double strux_rng_normal(strux_rng *r);              /* standard normal (Box-Muller) */
/* Fisher-Yates permutation of 0..n-1 drawn from r. */
void strux_rng_permutation(strux_rng *r, int64_t *perm, int64_t n);

/* ---- capability flags of registry entries (STYLE.md §4): compatibility between a task, a
 * surrogate, a search and a solver is a question about these flags, never about names ---- */
enum {
    STRUX_CAP_DUAL = 1u << 0,        /* solver: keeps a dual and certifies a gap (needs AFFINE) */
    STRUX_CAP_KEEPS_SLACK = 1u << 1, /* solver: keeps each example's slack ξ_i (n-slack planes) */
    STRUX_CAP_NEEDS_SLACK = 1u << 2, /* search: needs ξ_i before every run (Sarawagi-Gupta) */
    STRUX_CAP_AFFINE = 1u << 3,      /* surrogate: ψ affine in h for fixed g, planes are exact */
    STRUX_CAP_ONE_CALL = 1u << 4,    /* surrogate: ψ = h + g, one direction call answers it */
    STRUX_CAP_SLACK_FORM = 1u << 5, /* surrogate: ψ = (1 + m)·g, the λ-searches of §3 answer it */
    STRUX_CAP_NEEDS_WEDGE = 1u << 6, /* search: asks wedge or ban queries (constrained oracle) */
    STRUX_CAP_WEDGE = 1u << 7,       /* task: answers wedge and ban queries */
    STRUX_CAP_HINGE_PARTS = 1u << 8, /* task: its margin loss separates into binary hinges, one
                                        per label (decomposes over labels: 1-vs-All) */
    STRUX_CAP_FREE_BIAS = 1u << 9,   /* solver: can leave the bias out of the regulariser */
    STRUX_CAP_CANDIDATES = 1u << 10, /* task: hands out candidate lists (strux_task_candidates) */
    STRUX_CAP_NEEDS_CANDIDATES = 1u << 11, /* solver: steps over the task's candidate lists */
    STRUX_CAP_NEEDS_HINGE_PARTS = 1u << 12, /* solver: trains only a sum of binary hinges (a task
                                               with hinge_parts, a one_call surrogate): m3l */
    STRUX_CAP_SPARSE_DUALS = 1u << 13, /* solver: can keep the duals of binary hinges as sparse
                                          lists (solver.dual_blocks) */
    STRUX_CAP_SHARED_MODEL = 1u << 14, /* solver: its syncs write one copy of the model per host
                                          (model.share = host): the CoCoA+ engine's */
    STRUX_CAP_ACTIVE_SETS = 1u << 15,  /* solver: 1-vs-All primal-dual active sets and a bias
                                          centre (solver.active_sets, model.bias_centre): sdca */
    STRUX_CAP_LABEL_PARTS = 1u << 16,  /* task: its hinge parts are its label ids, one each
                                          (1-vs-All over the label set): multilabel */
    STRUX_CAP_PRUNE = 1u << 17,        /* solver: its iterate can be pruned between epochs
                                          (model.prune_every): the CoCoA+ engine's */
    STRUX_CAP_KERNEL_MODEL = 1u << 18, /* solver: its model is a kernel expansion over training
                                          rows (m3l_kernel), not weights on the features */
};
/* The names of the flags set in caps, comma-separated, into buf ("" for none). */
void strux_caps_format(unsigned caps, char *buf, size_t n);

/* ---- typed options from key tables (STYLE.md §7). A module declares its options struct and a
 * table of specs; src/cli fills the struct from the INI file and --set overrides; docs/config.md
 * and `strux help config` are printed from the same tables. ---- */
#define STRUX_OPT_STR 1024 /* bytes of every string option, NUL included */

typedef enum strux_opt_type {
    STRUX_OPT_STRING, /* char[STRUX_OPT_STR] */
    STRUX_OPT_CHOICE, /* char[STRUX_OPT_STR], one of spec.choices */
    STRUX_OPT_INT,    /* int64_t in [lo, hi] */
    STRUX_OPT_DOUBLE, /* double in [lo, hi], finite */
    STRUX_OPT_BOOL    /* int: true/false, yes/no, on/off, 1/0 */
} strux_opt_type;

typedef struct strux_opt_spec {
    const char *key; /* "section.name" */
    strux_opt_type type;
    size_t offset;       /* of the field in the options struct */
    const char *def;     /* default as text */
    double lo, hi;       /* inclusive range (INT, DOUBLE) */
    const char *choices; /* "a|b|c" (CHOICE) */
    const char *doc;     /* one line */
} strux_opt_spec;

/* Parse text into the field of base described by spec; origin ("file.ini:12", "--set") goes into
 * the STRUX_ERR_CONFIG message. Not Collective. */
strux_status strux_opt_set(const strux_opt_spec *spec, void *base, const char *text,
                           const char *origin);
/* Set every field of a table to its default. */
strux_status strux_opt_defaults(const strux_opt_spec *specs, void *base);
/* The shortest %g form of v (15 to 17 digits) that reads back as the same double. */
void strux_format_double(double v, char *buf, size_t n);
/* Write the field's value as text into buf (round-trips through strux_opt_set). */
void strux_opt_format(const strux_opt_spec *spec, const void *base, char *buf, size_t n);
/* Does a registry row's NULL-terminated key list (NULL: none) name key? */
int strux_opt_keys_contain(const char *const *keys, const char *key);
/* Number of entries of a table (tables end with a {NULL} sentinel). */
int strux_opt_count(const strux_opt_spec *specs);
/* Value of key "section.name" in INI text made of `[section]` headers and `name = value` lines
 * (the resolved config a model file stores, docs/model-format.md): copies the trimmed value into
 * buf and returns 1, or returns 0 when the key is absent or its value does not fit. */
int strux_opt_ini_get(const char *text, const char *key, char *buf, size_t n);
/* Fill base from such text: the table's defaults, then every key of the table the text sets
 * (checked like any setting; origin, e.g. the model path, names the text in messages). Keys of
 * the text that the table lacks are not looked at. Not Collective. */
strux_status strux_opt_read_ini(const strux_opt_spec *specs, void *base, const char *text,
                                const char *origin);

#endif
