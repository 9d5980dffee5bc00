/* tasks/block.c - dual blocks (ARCHITECTURE.md §3, task.h "Dual blocks"): the coefficient layout
 * of an example's share w_i = B_i·c of the weights, its application to the weights and its inner
 * products through the example's Gram matrix. The same for every task: a task describes φ once,
 * through the strux_phi sink, and the layout follows from its model shape. */
#include "task_impl.h"

strux_block_shape strux_task_block_shape(const strux_task *t, const strux_dataset *ds, int64_t i)
{
    strux_block_shape b = {.K = t->n_rows, .E = t->n_extra};
    b.S = ds->ex_ptr ? (int32_t)(ds->ex_ptr[i + 1] - ds->ex_ptr[i]) : 1;
    b.p = (int64_t)b.S * b.K + b.E;
    return b;
}

void strux_task_block_max(const strux_task *t, const strux_dataset *ds, int64_t *p_max,
                          int32_t *S_max)
{
    *p_max = 0;
    *S_max = 0;
    for (int64_t i = 0; i < ds->n_local; i++) {
        strux_block_shape b = strux_task_block_shape(t, ds, i);
        if (b.p > *p_max) *p_max = b.p;
        if (b.S > *S_max) *S_max = b.S;
    }
}

void strux_task_block_apply(const strux_task *t, const strux_dataset *ds, int64_t i,
                            const double *c, double scale, strux_model *G)
{
    strux_phi out = strux_task_phi(t, ds, i, G, NULL);
    for (int32_t s = 0; s < out.n_seg; s++)
        strux_model_add(G, &ds->x, out.row0 + s, 0, out.n_rows, scale, c + (int64_t)s * out.n_rows);
    const double *ce = c + (int64_t)out.n_seg * out.n_rows;
    for (int64_t e = 0; e < t->n_extra; e++)
        if (ce[e] != 0) strux_phi_extra(&out, e, scale * ce[e]);
}

void strux_task_block_gram(const strux_dataset *ds, const strux_block_shape *b, int64_t i,
                           double *X)
{
    int64_t r0 = ds->ex_ptr ? ds->ex_ptr[i] : i;
    for (int32_t s = 0; s < b->S; s++)
        for (int32_t q = s; q < b->S; q++)
            X[(int64_t)s * b->S + q] = X[(int64_t)q * b->S + s] =
                strux_sprow_dot(&ds->x, r0 + s, r0 + q);
}

double strux_block_inner(const strux_block_shape *b, const double *X, const double *c,
                         const double *d)
{
    int32_t S = b->S, K = b->K;
    double sum = 0;
    for (int32_t s = 0; s < S; s++)
        for (int32_t q = 0; q < S; q++) {
            double x = X[(int64_t)s * S + q];
            if (x == 0) continue;
            const double *cs = c + (int64_t)s * K, *dq = d + (int64_t)q * K;
            double row = 0;
            for (int32_t k = 0; k < K; k++)
                row += cs[k] * dq[k];
            sum += x * row;
        }
    const double *ce = c + (int64_t)S * K, *de = d + (int64_t)S * K;
    for (int64_t e = 0; e < b->E; e++)
        sum += ce[e] * de[e];
    return sum;
}

void strux_block_gram_apply(const strux_block_shape *b, const double *X, const double *c,
                            double *out)
{
    int32_t S = b->S, K = b->K;
    for (int32_t s = 0; s < S; s++) {
        double *os = out + (int64_t)s * K;
        for (int32_t k = 0; k < K; k++)
            os[k] = 0;
        for (int32_t q = 0; q < S; q++) {
            double x = X[(int64_t)s * S + q];
            if (x != 0) strux_axpy(K, x, c + (int64_t)q * K, os);
        }
    }
    for (int64_t e = (int64_t)S * K; e < b->p; e++)
        out[e] = c[e];
}
