/* bench/search_compare.c - the search comparison of slack_bicriteria.md §5.2 Tables 1 and 5.1 for
 * slack rescaling on a multilabel data set: along a mini-batch Pegasos SGD trajectory driven by the
 * angular search's answers (the protocol of §4.4: every search runs on the same (i, w), only
 * angular's label updates the model), every search answers every example on every pass, keeping
 * its own per-example state (caches, warm starts) across passes. Per search: oracle calls and wall
 * time per search, the share of searches that found the exact maximiser (brute force over all 2^m
 * labelings when m ≤ 16, else the best answer of all searches including angular with eps = 0),
 * and the Table-1 "success" share: Φ(ŷ) > ξ_i + ε with ξ_i the slack of the example's working set.
 * The Sarawagi-Gupta search receives that ξ_i: W_i holds the angular answers that violated by more
 * than ε when found (the n-slack cutting-plane rule), ξ_i = max(0, max over W_i of Φ under the
 * current w). Prints Markdown tables (one row per search) for each listed pass and for all.
 * Usage: search_compare DATA.svm.gz LAMBDA PASSES REPORT_PASSES (comma list, 1-based) */
#include "strux/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 16
#define EPS_SUCCESS 1e-3 /* ε of the success test Φ > ξ_i + ε */
#define W_MAX 32         /* working-set labels per example (ring) */

enum { S_SARAWAGI, S_BISECT, S_BINARY, S_ANGULAR, S_ANGULAR_A1, S_HULL, S_HULL_INT, S_EXACT,
       N_S };
static const char *names[N_S] = {"sarawagi", "bisect", "binary", "angular",
                                 "angular, λ0 = Ĥ/Ĝ always", "convex_hull", "convex_hull+ban",
                                 "angular eps=0"};
/* thesis figures, yeast: Table 5.1 (queries, Fail-Max) and Table 1 (queries, success) */
static const char *thesis[N_S] = {"15.3 / .36; 43.2 / 16.4%", "7.8 / .26; 10.3 / 16.5%", "-",
                                  "4.5 / 0; 3.8 / 22.4%", "4.5 / 0; 3.8 / 22.4%", "3.1 / .07; -",
                                  "-", "-"};

typedef struct stats {
    double calls, seconds, exact, success, n;
} stats;

static void die(strux_status st)
{
    if (st == STRUX_OK) return;
    fprintf(stderr, "search_compare: %s\n%s", strux_error_message(), strux_error_trace());
    exit(1);
}

static strux_search *make(const strux_task *t, const strux_dataset *ds, const char *search,
                          double eps, int integral, int warm)
{
    strux_search_options o;
    die(strux_search_options_default(&o));
    strcpy(o.type, "slack");
    strcpy(o.search, search);
    o.eps = eps;
    o.integral = integral;
    o.warm_start = warm;
    o.max_calls = 1000;
    strux_search *s;
    die(strux_search_create(&o, t, ds, &s));
    return s;
}

/* Φ = (1 + m)·L of label y (integral) */
static double phi_of(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                     const strux_label *y)
{
    double m = strux_task_score(t, pot, y) - strux_task_score(t, pot, truth);
    return (1 + m) * strux_task_loss(t, y, truth);
}

/* max over all labelings of (1 + m)·L by enumeration (m ≤ 16) */
static double brute_sr(const strux_pot *pot, const strux_label *truth)
{
    int L = truth->n;
    double best = 0;
    for (int64_t j = 0; j < ((int64_t)1 << L); j++) {
        double m = 0, e = 0;
        for (int k = 0; k < L; k++) {
            int b = (int)((j >> k) & 1);
            if (b != truth->y[k]) m += b ? pot->s[k] : -pot->s[k], e += 1;
        }
        best = fmax(best, (1 + m) * e);
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: search_compare DATA LAMBDA PASSES REPORT_PASSES\n");
        return 2;
    }
    double lambda = atof(argv[2]);
    int passes = atoi(argv[3]);
    strux_read_options ro = {.rank = 0, .n_ranks = 1, .bias = 1};
    strux_dataset *ds;
    die(strux_dataset_read_libsvm(argv[1], &ro, &ds));
    strux_task_options to = {.type = "multilabel"};
    strux_task *t;
    die(strux_task_create(&to, &t));
    die(strux_task_check(t, ds));
    int32_t rows;
    int64_t extra;
    die(strux_task_model_shape(t, ds, &rows, &extra));
    strux_model *w;
    die(strux_model_create(rows, ds->dim, extra, STRUX_MODEL_PLAIN, &w));
    strux_search *s[N_S] = {
        make(t, ds, "sarawagi", 1e-3, 0, 1),    make(t, ds, "bisect", 1e-3, 0, 1),
        make(t, ds, "binary", 1e-3, 0, 1),      make(t, ds, "angular", 1e-3, 0, 1),
        make(t, ds, "angular", 1e-3, 0, 0),     make(t, ds, "convex_hull", 0, 0, 1),
        make(t, ds, "convex_hull", 0, 1, 1),    make(t, ds, "angular", 0, 0, 1)};
    strux_pot pot;
    strux_label truth;
    die(strux_task_pot_alloc(t, ds, &pot));
    die(strux_task_label_alloc(t, ds, &truth));
    strux_label *W = calloc((size_t)(ds->n_local * W_MAX), sizeof *W);
    int *n_W = calloc((size_t)ds->n_local, sizeof *n_W);
    for (int64_t k = 0; k < ds->n_local * W_MAX; k++) die(strux_label_alloc(&W[k], truth.cap, 0));
    strux_model *G;
    die(strux_model_create_like(w, &G));
    int brute = ds->n_labels <= 16;
    enum { MAX_G = 8 };
    int report[MAX_G], n_rep = 0; /* passes with their own table; group n_rep: all passes */
    for (const char *p = argv[4]; *p && n_rep < MAX_G - 1; p += strcspn(p, ","), p += *p == ',')
        report[n_rep++] = atoi(p);
    stats st[MAX_G][N_S];
    memset(st, 0, sizeof st);
    int64_t step = 0;
    for (int pass = 1; pass <= passes; pass++) {
        int grp = -1;
        for (int g = 0; g < n_rep; g++)
            if (report[g] == pass) grp = g;
        for (int64_t b0 = 0; b0 < ds->n_local; b0 += BATCH) {
            strux_model_zero(G);
            int64_t b1 = b0 + BATCH < ds->n_local ? b0 + BATCH : ds->n_local;
            for (int64_t i = b0; i < b1; i++) {
                die(strux_task_potentials(t, w, ds, i, &pot));
                die(strux_task_truth(t, ds, i, &truth));
                double xi = 0;
                for (int k = 0; k < n_W[i]; k++)
                    xi = fmax(xi, phi_of(t, &pot, &truth, &W[i * W_MAX + k]));
                strux_search_result r[N_S];
                double phi[N_S], best = 0;
                for (int k = 0; k < N_S; k++) {
                    if (k == S_SARAWAGI) strux_search_set_slack(s[k], xi);
                    double t0 = strux_time_now();
                    die(strux_search_run(s[k], t, &pot, &truth, &r[k]));
                    double dt = strux_time_now() - t0;
                    /* an integral label's Φ; a fractional answer is judged by its better vertex */
                    phi[k] = phi_of(t, &pot, &truth, r[k].y);
                    if (r[k].y2) phi[k] = fmax(phi[k], phi_of(t, &pot, &truth, r[k].y2));
                    best = fmax(best, phi[k]);
                    for (int g = 0; g < 2; g++) {
                        stats *x = g ? &st[n_rep][k] : grp >= 0 ? &st[grp][k] : NULL;
                        if (!x) continue;
                        x->calls += (double)r[k].calls;
                        x->seconds += dt;
                        x->n += 1;
                        x->success += phi[k] > xi + EPS_SUCCESS;
                    }
                }
                double want = brute ? brute_sr(&pot, &truth) : best;
                for (int k = 0; k < N_S; k++) {
                    int hit = phi[k] >= want - 1e-9 * fmax(1, want);
                    st[n_rep][k].exact += hit;
                    if (grp >= 0) st[grp][k].exact += hit;
                }
                /* cutting-plane working set: angular's label if it violates by more than ε */
                const strux_search_result *a = &r[S_ANGULAR];
                if (phi[S_ANGULAR] > xi + EPS_SUCCESS) {
                    die(strux_label_copy(&W[i * W_MAX + n_W[i] % W_MAX], a->y));
                    n_W[i] = n_W[i] < W_MAX ? n_W[i] + 1 : W_MAX;
                }
                die(strux_search_add_subgradient(a, t, ds, i, &truth, 1.0, G));
            }
            step++;
            double eta = 1 / (lambda * (double)step);
            strux_model_scale(w, 1 - eta * lambda);
            die(strux_model_axpy(-eta / (double)(b1 - b0), G, w));
        }
    }
    for (int g = 0; g <= n_rep; g++) {
        if (g < n_rep)
            printf("\npass %d (%s):\n\n", report[g],
                   report[g] == 1 ? "from w = 0" : "warm: after earlier passes");
        else
            printf("\nall %d passes:\n\n", passes);
        printf("| search | oracle calls / search | µs / search | exact maximiser | success "
               "(Φ > ξ+ε) | thesis yeast: T5.1 calls / Fail-Max; T1 calls / success |\n"
               "|---|---|---|---|---|---|\n");
        for (int k = 0; k < N_S; k++) {
            const stats *x = &st[g][k];
            printf("| %s | %.2f | %.1f | %.1f%% | %.1f%% | %s |\n", names[k], x->calls / x->n,
                   1e6 * x->seconds / x->n, 100 * x->exact / x->n, 100 * x->success / x->n,
                   thesis[k]);
        }
    }
    printf("\n%lld examples, %d passes; exact = %s\n", (long long)ds->n_local, passes,
           brute ? "Φ equal to the brute-force maximum over all labelings"
                 : "Φ equal to the best answer of all searches (angular with eps = 0 is exact)");
    return 0;
}
