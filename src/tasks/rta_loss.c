/* tasks/rta_loss.c - the RTA training loss: per-tree edge loss averaged over the trees.
 * Implements rta_impl.h "loss" (specs/rta.md §3.1, the default loss of the reference code, §5 A8):
 * ℓ_e(y_k, u) = ([b_i(u) ≠ b_i(y_k)] + [b_j(u) ≠ b_j(y_k)]) / s_loss, ℓ_t = Σ_{e∈T_t} ℓ_e, and
 * ℓ = (1/n) Σ_t ℓ_t = (1/n) Σ_{e∈E_u} c_e ℓ_e. The variants of §3.1 (`hamming-exact`, `uniform`)
 * and the NIPS normalisation (A16) are not here. */
#include "rta_impl.h"

void strux_rta_edge_loss(const strux_rta_trees *tr, const uint64_t *truth, double s_loss,
                         double *ell)
{
    for (int32_t e = 0; e < tr->n_edges; e++) {
        int bi = strux_rta_bit(truth, tr->ends[2 * e]),
            bj = strux_rta_bit(truth, tr->ends[2 * e + 1]);
        for (int u = 0; u < 4; u++)
            ell[4 * (int64_t)e + u] = ((u >> 1 != bi) + ((u & 1) != bj)) / s_loss;
    }
}

double strux_rta_loss(const strux_rta_trees *tr, const uint64_t *y, const uint64_t *truth,
                      double s_loss)
{
    int64_t sum = 0; /* Σ_e c_e·(wrong ends of e) */
    for (int32_t e = 0; e < tr->n_edges; e++) {
        int32_t i = tr->ends[2 * e], j = tr->ends[2 * e + 1];
        int wrong = (strux_rta_bit(y, i) != strux_rta_bit(truth, i)) +
                    (strux_rta_bit(y, j) != strux_rta_bit(truth, j));
        sum += (int64_t)tr->mult[e] * wrong;
    }
    return (double)sum / (tr->n * s_loss);
}
