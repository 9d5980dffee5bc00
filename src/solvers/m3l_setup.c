/* solvers/m3l_setup.c - the label-correlation prior R a solver of M3L trains with (specs/m3l.md
 * §1.3, §4.2, §6 A6; issue 16 "Priors"), shared by solver.type = m3l (m3l.c) and m3l_kernel
 * (m3l_kernel.c): built from the [m3l] keys with the builders of m3l_prior.c, the empirical
 * counts summed over ranks, a model file's /m3l/R read for m3l.prior = file, then shrunk, checked
 * and factored; its column non-zeros (the solvers visit only those) and the description the model
 * file keeps. Collective where it says so; every rank ends with the same R. */
#include "m3l.h"

#include <stdio.h>
#include <string.h>

/* R from a model file's /m3l/R (m3l.r_file naming an HDF5 model of an m3l run). */
static strux_status read_model_prior(const char *path, int32_t L, double *R)
{
    strux_model *m = NULL;
    strux_model_info info = {0};
    strux_status st = strux_io_model_load(path, &m, &info);
    if (st == STRUX_OK && info.m3l.n_labels == 0)
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "m3l.r_file = %s: a model without a prior (/m3l/R): it was not "
                             "trained by solver.type = m3l or m3l_kernel",
                             path);
    char source[STRUX_OPT_STR + 32];
    snprintf(source, sizeof source, "/m3l/R of %s", path);
    if (st == STRUX_OK)
        st = strux_m3l_prior_check_size(info.m3l.n_labels, info.m3l.n_labels, L, source);
    if (st == STRUX_OK) memcpy(R, info.m3l.R, (size_t)L * (size_t)L * sizeof *R);
    strux_model_destroy(&m);
    strux_model_info_free(&info);
    return st;
}

/* Empirical R: the label counts of ds (or of m3l.prior_data, read sharded) summed over ranks. */
static strux_status empirical_prior(const strux_m3l_options *o, strux_comm *comm,
                                    const strux_dataset *ds, int32_t L, double *R)
{
    strux_m3l_empirical est = STRUX_M3L_EMPIRICAL_MOMENT;
    if (strcmp(o->empirical, "cooccurrence") == 0) est = STRUX_M3L_EMPIRICAL_COOCCURRENCE;
    if (strcmp(o->empirical, "correlation") == 0) est = STRUX_M3L_EMPIRICAL_CORRELATION;
    int64_t n_counts = strux_m3l_prior_counts_len(L);
    double *counts = NULL;
    strux_dataset *pds = NULL;
    strux_status st = strux_alloc_array(&counts, (size_t)n_counts, sizeof *counts);
    if (st == STRUX_OK && o->prior_data[0]) {
        strux_read_options ro = {
            .rank = strux_comm_rank(comm), .n_ranks = strux_comm_size(comm), .n_labels = L};
        st = strux_dataset_read_libsvm(o->prior_data, &ro, &pds);
    }
    if (st == STRUX_OK) st = strux_m3l_prior_counts_add(pds ? pds : ds, L, counts);
    strux_dataset_destroy(&pds);
    st = strux_comm_agree(comm, st);
    if (st == STRUX_OK) st = strux_comm_allreduce_sum(comm, counts, n_counts);
    if (st == STRUX_OK) strux_m3l_prior_empirical(counts, L, est, R);
    strux_free(&counts);
    return st;
}

/* R and where it came from, before shrinkage. Collective (the empirical prior). */
static strux_status build_R(const strux_m3l_options *o, strux_comm *comm, const strux_dataset *ds,
                            strux_m3l_prior *p)
{
    int32_t L = p->L;
    char *source = p->source;
    const size_t n_source = sizeof p->source;
    if (strcmp(o->prior, "identity") == 0) {
        strux_m3l_prior_identity(L, p->R);
        snprintf(source, n_source, "m3l.prior = identity");
    } else if (strcmp(o->prior, "empirical") == 0) {
        STRUX_TRY(empirical_prior(o, comm, ds, L, p->R));
        snprintf(source, n_source, "m3l.prior = empirical (%s of %s)", o->empirical,
                 o->prior_data[0] ? o->prior_data : "data.train");
    } else if (strcmp(o->prior, "file") == 0) {
        STRUX_CHECK(o->r_file[0], STRUX_ERR_CONFIG, "m3l.prior = file needs m3l.r_file");
        if (strux_io_is_hdf5(o->r_file))
            STRUX_TRY(read_model_prior(o->r_file, L, p->R));
        else
            STRUX_TRY(strux_m3l_prior_read(o->r_file, L, p->R));
        snprintf(source, n_source, "m3l.r_file = %s", o->r_file);
    } else {
        STRUX_CHECK(o->classes[0], STRUX_ERR_CONFIG, "m3l.prior = zero_shot needs m3l.classes");
        STRUX_TRY(strux_m3l_prior_zero_shot(o->classes, L, p->R));
        snprintf(source, n_source, "m3l.classes = %s", o->classes);
    }
    return STRUX_OK;
}

/* The non-zeros of every column of R. */
static strux_status list_columns(strux_m3l_prior *p)
{
    int32_t L = p->L;
    int64_t nnz = 0;
    for (int64_t j = 0; j < (int64_t)L * L; j++)
        nnz += p->R[j] != 0;
    STRUX_TRY(strux_alloc_array(&p->col_ptr, (size_t)L + 1, sizeof *p->col_ptr));
    STRUX_TRY(strux_alloc_array(&p->col_idx, (size_t)nnz + 1, sizeof *p->col_idx));
    STRUX_TRY(strux_alloc_array(&p->col_val, (size_t)nnz + 1, sizeof *p->col_val));
    for (int32_t l = 0; l < L; l++) {
        int64_t q = p->col_ptr[l];
        for (int32_t k = 0; k < L; k++) {
            double r = p->R[(int64_t)k * L + l];
            if (r == 0) continue;
            p->col_idx[q] = k;
            p->col_val[q++] = r;
        }
        p->col_ptr[l + 1] = q;
    }
    return STRUX_OK;
}

strux_status strux_m3l_prior_build(const strux_m3l_options *o, strux_comm *comm,
                                   const strux_dataset *ds, int32_t L, strux_m3l_prior *p)
{
    *p = (strux_m3l_prior){.L = L};
    STRUX_TRY(strux_alloc_array(&p->R, (size_t)L * (size_t)L, sizeof *p->R));
    STRUX_TRY(build_R(o, comm, ds, p));
    if (o->shrink > 0) strux_m3l_prior_shrink(L, o->shrink, p->R);
    STRUX_TRY(strux_m3l_prior_factor(p->R, L, p->source, NULL, &p->eig_min, &p->eig_max));
    p->identity = 1;
    for (int32_t k = 0; k < L; k++)
        for (int32_t l = 0; l < L; l++)
            if (p->R[(int64_t)k * L + l] != (k == l ? 1.0 : 0.0)) p->identity = 0;
    STRUX_TRY(list_columns(p));
    strux_log(STRUX_LOG_INFO,
              "m3l: prior from %s%s, %d labels, eigenvalues [%.6g, %.6g], %lld non-zeros%s",
              p->source, o->shrink > 0 ? " shrunk towards I" : "", (int)L, p->eig_min, p->eig_max,
              (long long)p->col_ptr[L], p->identity ? " (R = I: 1-vs-All)" : "");
    return STRUX_OK;
}

void strux_m3l_prior_free(strux_m3l_prior *p)
{
    strux_free(&p->R);
    strux_free(&p->col_ptr);
    strux_free(&p->col_idx);
    strux_free(&p->col_val);
}

strux_status strux_m3l_prior_describe(const strux_m3l_prior *p, const strux_m3l_options *o,
                                      double lambda, double W, strux_m3l_info *out)
{
    size_t n = (size_t)p->L * (size_t)p->L;
    strux_free(&out->R);
    STRUX_TRY(strux_alloc_array(&out->R, n, sizeof *out->R));
    memcpy(out->R, p->R, n * sizeof *out->R);
    out->n_labels = p->L;
    snprintf(out->prior, sizeof out->prior, "%.31s", o->prior);
    snprintf(out->empirical, sizeof out->empirical, "%.31s",
             strcmp(o->prior, "empirical") == 0 ? o->empirical : "");
    snprintf(out->source, sizeof out->source, "%s", p->source);
    out->shrink = o->shrink;
    out->eig_min = p->eig_min;
    out->eig_max = p->eig_max;
    out->lambda = lambda;
    out->C_paper = 1 / (2 * lambda * W);
    return STRUX_OK;
}
