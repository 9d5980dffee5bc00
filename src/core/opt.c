/* core/opt.c - typed option fields from text (STYLE.md §7 step 2): parse, range-check and format
 * one key of a module's table. Errors name the key, the offending text and where it was set.
 * Also reads a table's keys back from the resolved config text that model files store
 * (`[section]` headers and `name = value` lines, as `strux train` writes them), so that library
 * users rebuild a model's task without the command-line configuration code. */
#include "strux/core.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int choice_allowed(const char *choices, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0) return 1;
        p += len + (bar ? 1 : 0);
    }
    return 0;
}

static int parse_bool(const char *t, int *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (int k = 0; k < 4; k++) {
        if (strcasecmp(t, yes[k]) == 0) return *out = 1, 1;
        if (strcasecmp(t, no[k]) == 0) return *out = 0, 1;
    }
    return 0;
}

strux_status strux_opt_set(const strux_opt_spec *spec, void *base, const char *text,
                           const char *origin)
{
    char *field = (char *)base + spec->offset;
    char *end;
    switch (spec->type) {
    case STRUX_OPT_STRING:
    case STRUX_OPT_CHOICE:
        STRUX_CHECK(strlen(text) < STRUX_OPT_STR, STRUX_ERR_CONFIG,
                    "%s: %s: value longer than %d bytes", origin, spec->key, STRUX_OPT_STR - 1);
        STRUX_CHECK(spec->type != STRUX_OPT_CHOICE || choice_allowed(spec->choices, text),
                    STRUX_ERR_CONFIG, "%s: %s = '%s' is not one of: %s", origin, spec->key, text,
                    spec->choices);
        memcpy(field, text, strlen(text) + 1);
        return STRUX_OK;
    case STRUX_OPT_INT: {
        errno = 0;
        long long v = strtoll(text, &end, 10);
        STRUX_CHECK(*text && !*end && errno == 0, STRUX_ERR_CONFIG,
                    "%s: %s = '%s' is not an integer", origin, spec->key, text);
        STRUX_CHECK((double)v >= spec->lo && (double)v <= spec->hi, STRUX_ERR_CONFIG,
                    "%s: %s = %lld is outside [%.17g, %.17g]", origin, spec->key, v, spec->lo,
                    spec->hi);
        *(int64_t *)field = (int64_t)v;
        return STRUX_OK;
    }
    case STRUX_OPT_DOUBLE: {
        errno = 0;
        double v = strtod(text, &end);
        STRUX_CHECK(*text && !*end && errno == 0 && isfinite(v), STRUX_ERR_CONFIG,
                    "%s: %s = '%s' is not a finite number", origin, spec->key, text);
        STRUX_CHECK(v >= spec->lo && v <= spec->hi, STRUX_ERR_CONFIG,
                    "%s: %s = %g is outside [%g, %g]", origin, spec->key, v, spec->lo, spec->hi);
        *(double *)field = v;
        return STRUX_OK;
    }
    case STRUX_OPT_BOOL: {
        int v;
        STRUX_CHECK(parse_bool(text, &v), STRUX_ERR_CONFIG,
                    "%s: %s = '%s' is not a boolean (true/false, yes/no, on/off, 1/0)", origin,
                    spec->key, text);
        *(int *)field = v;
        return STRUX_OK;
    }
    }
    return strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__,
                           "option %s has an unknown type", spec->key);
}

void strux_caps_format(unsigned caps, char *buf, size_t n)
{
    static const char *const names[] = {
        "dual",        "keeps_slack", "needs_slack", "affine",    "one_call",   "slack_form",
        "needs_wedge", "wedge",       "hinge_parts", "free_bias", "candidates", "needs_candidates",
        "needs_hinge_parts", "sparse_duals", "shared_model", "active_sets", "label_parts",
        "prune", "kernel_model"};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < sizeof names / sizeof *names && used < n; k++)
        if (caps & (1u << k)) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", names[k]);
            if (w > 0) used += (size_t)w;
        }
}

strux_status strux_opt_defaults(const strux_opt_spec *specs, void *base)
{
    for (const strux_opt_spec *s = specs; s->key; s++)
        STRUX_TRY(strux_opt_set(s, base, s->def, "default"));
    return STRUX_OK;
}

void strux_format_double(double v, char *buf, size_t n)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

void strux_opt_format(const strux_opt_spec *spec, const void *base, char *buf, size_t n)
{
    const char *field = (const char *)base + spec->offset;
    switch (spec->type) {
    case STRUX_OPT_STRING:
    case STRUX_OPT_CHOICE:
        snprintf(buf, n, "%s", field);
        break;
    case STRUX_OPT_INT:
        snprintf(buf, n, "%" PRId64, *(const int64_t *)field);
        break;
    case STRUX_OPT_DOUBLE:
        strux_format_double(*(const double *)field, buf, n);
        break;
    case STRUX_OPT_BOOL:
        snprintf(buf, n, "%s", *(const int *)field ? "true" : "false");
        break;
    }
}

int strux_opt_keys_contain(const char *const *keys, const char *key)
{
    for (const char *const *k = keys; k && *k; k++)
        if (strcmp(*k, key) == 0) return 1;
    return 0;
}

int strux_opt_count(const strux_opt_spec *specs)
{
    int n = 0;
    while (specs[n].key)
        n++;
    return n;
}

/* Trim spaces and tabs at both ends of [s, e) into buf; returns 0 when it does not fit. */
static int copy_trimmed(const char *s, const char *e, char *buf, size_t n)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    if ((size_t)(e - s) >= n) return 0;
    memcpy(buf, s, (size_t)(e - s));
    buf[e - s] = '\0';
    return 1;
}

int strux_opt_ini_get(const char *text, const char *key, char *buf, size_t n)
{
    const char *dot = strchr(key, '.');
    if (!dot || !text) return 0;
    size_t sec_len = (size_t)(dot - key), name_len = strlen(dot + 1);
    int in_section = 0;
    for (const char *line = text; *line;) {
        const char *end = line + strcspn(line, "\n");
        const char *s = line;
        while (s < end && (*s == ' ' || *s == '\t'))
            s++;
        if (*s == '[') {
            const char *close = memchr(s, ']', (size_t)(end - s));
            in_section =
                close && (size_t)(close - s - 1) == sec_len && strncmp(s + 1, key, sec_len) == 0;
        } else if (in_section && (size_t)(end - s) > name_len &&
                   strncmp(s, dot + 1, name_len) == 0) {
            const char *q = s + name_len;
            while (q < end && (*q == ' ' || *q == '\t'))
                q++;
            if (q < end && *q == '=') return copy_trimmed(q + 1, end, buf, n);
        }
        line = *end ? end + 1 : end;
    }
    return 0;
}

strux_status strux_opt_read_ini(const strux_opt_spec *specs, void *base, const char *text,
                                const char *origin)
{
    STRUX_TRY(strux_opt_defaults(specs, base));
    char value[STRUX_OPT_STR];
    for (const strux_opt_spec *s = specs; s->key; s++) {
        if (!strux_opt_ini_get(text, s->key, value, sizeof value)) continue;
        char where[STRUX_OPT_STR + 32];
        snprintf(where, sizeof where, "%s (stored config)", origin);
        STRUX_TRY(strux_opt_set(s, base, value, where));
    }
    return STRUX_OK;
}
