/* bench/alpha_dag.c - one SSVM α update on a SWIKI-sized DAG (issue 19: 50,312 nodes, 36,504
 * leaves; the DAG extension of hierarchical.md §4.3, tasks/hier_alpha_dag.c), alone: the time of
 * the structure set-up (once per run), of a cold solve and of a warm one (the previous α, the
 * norms moved by up to ±10%, as between two updates of a run), with Newton steps, barrier
 * stages, the Cholesky factor's size and the KKT residual; Algorithm 5 on the DAG's spanning tree
 * (first parents only) for scale. The DAG: internal nodes in a random recursive tree (node i
 * under a uniform earlier one, depth about ln M), one leaf under each internal node that has no
 * child, the other leaves under internal nodes drawn with weight 1/rank (a few broad categories
 * hold many pages), then EXTRA_PCT percent of all nodes get a
 * second parent, an internal node before them (acyclic by construction; LSHTC's Wikipedia graph
 * has a few percent of multi-parent categories). Norms: N_n = u·10^(3v − 2) (u, v uniform), 5%
 * of them 0 (untouched rows), the root 0 (α_root = 0 on DAGs). Usage: alpha_dag [NODES [LEAVES
 * [EXTRA_PCT [SEED]]]] (defaults 50312 36504 5 1). */
#include "strux/hierarchy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double seconds(void)
{
    return strux_time_now();
}

int main(int argc, char **argv)
{
    int32_t M = argc > 1 ? atoi(argv[1]) : 50312, L = argc > 2 ? atoi(argv[2]) : 36504;
    int extra = argc > 3 ? atoi(argv[3]) : 5;
    uint64_t seed = argc > 4 ? (uint64_t)atoll(argv[4]) : 1;
    int32_t I = M - L; /* internal nodes: ids 0..I-1, leaves I..M-1 */
    if (I < 1 || L < 1) {
        fprintf(stderr, "alpha_dag: need NODES > LEAVES >= 1\n");
        return 2;
    }
    strux_rng r;
    strux_rng_init(&r, seed, 0x414c5048, 0);
    int64_t cap = 2 * (int64_t)M, n = 0;
    int64_t *par = malloc((size_t)cap * sizeof *par), *chi = malloc((size_t)cap * sizeof *chi);
    double *cum = malloc((size_t)I * sizeof *cum);
    for (int32_t k = 0; k < I; k++) /* leaf parent weights 1/(k+1), over internal nodes */
        cum[k] = (k ? cum[k - 1] : 0) + 1.0 / (k + 1);
    unsigned char *has_child = calloc((size_t)I, 1);
    int32_t *childless = malloc((size_t)I * sizeof *childless), n_childless = 0, used = 0;
    for (int32_t i = 1; i < M; i++) {
        int32_t p;
        if (i < I) {
            p = (int32_t)strux_rng_below(&r, (uint64_t)i);
            has_child[p] = 1;
        } else if (i == I || used < n_childless) { /* first the internal nodes left childless */
            if (i == I)
                for (int32_t k = 0; k < I; k++)
                    if (!has_child[k]) childless[n_childless++] = k;
            p = used < n_childless ? childless[used++] : 0;
        } else { /* a leaf: an internal node by weight, not the root when others exist */
            double u = strux_rng_uniform(&r) * cum[I - 1];
            int32_t lo = 0, hi = I - 1;
            while (lo < hi) {
                int32_t mid = (lo + hi) / 2;
                if (cum[mid] < u) lo = mid + 1;
                else hi = mid;
            }
            p = I > 1 ? 1 + lo % (I - 1) : 0;
        }
        par[n] = p;
        chi[n++] = i;
        int32_t up = i < I ? i : I;
        if (up > 1 && strux_rng_below(&r, 100) < (uint64_t)extra) {
            int32_t q = (int32_t)strux_rng_below(&r, (uint64_t)up);
            if (q != p) {
                par[n] = q;
                chi[n++] = i;
            }
        }
    }
    free(cum);
    free(has_child);
    free(childless);
    strux_hierarchy *h = NULL, *tree = NULL;
    int64_t n_tree = 0;
    int64_t *tp = malloc((size_t)M * sizeof *tp), *tc = malloc((size_t)M * sizeof *tc);
    for (int64_t e = 0; e < n; e++)
        if (e == 0 || chi[e] != chi[e - 1]) {
            tp[n_tree] = par[e];
            tc[n_tree++] = chi[e];
        }
    if (strux_hierarchy_from_edges("bench-dag", n, par, chi, NULL, NULL, &h) != STRUX_OK ||
        strux_hierarchy_from_edges("bench-tree", n_tree, tp, tc, NULL, NULL, &tree) != STRUX_OK) {
        fprintf(stderr, "alpha_dag: %s\n", strux_error_message());
        return 1;
    }
    char sum[256];
    strux_hierarchy_summary(h, sum, sizeof sum);
    printf("%s\n", sum);
    printf("paths: sum over leaves of |A(l)| = %lld\n", (long long)h->anc_ptr[h->n_leaves]);

    int32_t Mh = h->n_nodes;
    double *N = malloc((size_t)Mh * sizeof *N), *a = malloc((size_t)Mh * sizeof *a);
    double *a2 = malloc((size_t)Mh * sizeof *a2), *work = malloc((size_t)Mh * sizeof *work);
    for (int32_t k = 0; k < Mh; k++) {
        N[k] = strux_rng_uniform(&r) * pow(10, 3 * strux_rng_uniform(&r) - 2);
        if (strux_rng_below(&r, 20) == 0 || k == 0) N[k] = 0;
    }
    strux_alpha_dag *s = NULL;
    strux_alpha_dag_stats st;
    double t0 = seconds();
    if (strux_alpha_dag_create(h, &s) != STRUX_OK) {
        fprintf(stderr, "alpha_dag: %s\n", strux_error_message());
        return 1;
    }
    double t_setup = seconds() - t0;
    printf("set-up (once per run): %.3f s, Cholesky factor %lld entries\n", t_setup,
           (long long)strux_alpha_dag_factor_nnz(s));
    t0 = seconds();
    if (strux_alpha_dag_solve(s, N, NULL, 1e-8, a, NULL, &st) != STRUX_OK) {
        fprintf(stderr, "alpha_dag: %s\n", strux_error_message());
        return 1;
    }
    printf("cold update: %.3f s, %lld Newton steps, %d barrier stages, value %.10g, dual %.10g, "
           "KKT %.2g\n",
           seconds() - t0, (long long)st.newton, st.stages, st.value, st.dual, st.kkt);
    for (int32_t k = 0; k < Mh; k++)
        N[k] *= 0.9 + 0.2 * strux_rng_uniform(&r);
    t0 = seconds();
    if (strux_alpha_dag_solve(s, N, a, 1e-8, a2, NULL, &st) != STRUX_OK) {
        fprintf(stderr, "alpha_dag: %s\n", strux_error_message());
        return 1;
    }
    printf("warm update (norms moved up to 10%%): %.3f s, %lld Newton steps, %d barrier stages, "
           "KKT %.2g\n",
           seconds() - t0, (long long)st.newton, st.stages, st.kkt);
    /* Algorithm 5 on the spanning tree, same norms by file id */
    double *Nt = malloc((size_t)tree->n_nodes * sizeof *Nt), value;
    for (int32_t k = 0; k < tree->n_nodes; k++)
        Nt[k] = N[strux_hierarchy_find(h, tree->node_id[k])];
    t0 = seconds();
    strux_alpha_shared_frobenius(tree, Nt, 1e-8, work, a, &value);
    printf("Algorithm 5 on the spanning tree: %.4f s\n", seconds() - t0);
    strux_alpha_dag_destroy(&s);
    strux_hierarchy_destroy(&h);
    strux_hierarchy_destroy(&tree);
    free(par), free(chi), free(tp), free(tc), free(N), free(a), free(a2), free(work), free(Nt);
    return 0;
}
