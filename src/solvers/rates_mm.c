/* solvers/rates_mm.c - ramp MM (Alg. 1 of dataset_constraints.md §2) of rate-constrained
 * training as a state machine that resumes where a checkpoint stopped it: at each anchor the
 * per-example pattern (§2.1), γ̌ and C_0 from allreduced counts; a multiplier search
 * (rates_search.c) whose model is the step's, kept only when its Problem 2 objective is below the
 * last kept step's (a step that is not is retried at a finer search tolerance); V_max doubles on
 * saturation (A1); the start (rates.start, A7); the violations left at the end.
 *
 * Resume. Every decision is rank 0's, broadcast, so the state (rates_mm_state, the cuts with their
 * iterates, the anchor, the kept snapshot; rates_state.c) is the same on every rank and rides in
 * checkpoints as the hook's shared state; a solve stopped by SIGTERM resumes inside the same SDCA
 * solve of the same bias and multiplier iteration of the same MM step: the pattern is recomputed
 * from the anchor, the loss weights from the pattern and v (not the duals: they come from the
 * checkpoint), and the search replays its LP. */
#include "rates_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_DOUBLINGS 3 /* A1: V_max doubled at most this often */

/* ---- Problem 2 at a model ---- */

/* Ramp and indicator positive rates of every used subset at the scores r->z (sp_ramp, sp_ind:
 * strux_subset_count entries, NaN where unused), summed in data-block order. */
static strux_status rates_at(strux_rates *r, double *sp_ramp, double *sp_ind)
{
    int32_t K = strux_subset_count(r->defs), S = r->n_sets, n_b = strux_rates_blocks(r->train);
    double *sum = NULL, *part = NULL;
    STRUX_TRY(strux_alloc_array(&sum, 2 * (size_t)S + 1, sizeof *sum));
    strux_status st = strux_alloc_array(&part, (size_t)n_b * 2 * (size_t)S + 1, sizeof *part);
    for (int32_t k = 0; st == STRUX_OK && k < n_b; k++) {
        int64_t e0, e1;
        strux_rates_block_range(r->train, k, &e0, &e1);
        double *p = part + (size_t)k * 2 * (size_t)S;
        for (int32_t b = 0; b < S; b++)
            for (int64_t e = e0; e < e1; e++)
                if (r->member[b][e]) {
                    p[b] += strux_rates_ramp(r->z[e]);
                    p[S + b] += r->z[e] >= 0;
                }
    }
    if (st == STRUX_OK) st = strux_block_sum(r->comm, r->train, part, 2 * S, sum);
    strux_free(&part);
    for (int32_t k = 0; k < K; k++)
        sp_ramp[k] = sp_ind[k] = NAN;
    for (int32_t b = 0; b < S; b++) {
        sp_ramp[r->sets[b]] = sum[b] / (double)r->n[r->sets[b]];
        sp_ind[r->sets[b]] = sum[S + b] / (double)r->n[r->sets[b]];
    }
    strux_free(&sum);
    return st;
}

/* Problem 2 at the scores r->z of a model whose stored weights have squared norm norm2 (free
 * bias excluded): objective and each constraint's ramp value − γ and indicator value − γ. */
static strux_status problem2_z(strux_rates *r, double norm2, double *obj, double *ramp_viol,
                               double *ind_viol)
{
    int32_t K = strux_subset_count(r->defs);
    double *sr = NULL, *si = NULL;
    strux_status st = strux_alloc_array(&sr, (size_t)K, sizeof *sr);
    if (st == STRUX_OK) st = strux_alloc_array(&si, (size_t)K, sizeof *si);
    if (st == STRUX_OK) st = rates_at(r, sr, si);
    if (st == STRUX_OK) {
        *obj = strux_rates_row_value(&r->row[0], sr) + r->row[0].c0 +
               0.125 * r->lam * norm2; /* (λ/2)||w̃/2||² */
        for (int32_t j = 0; j < r->m; j++) {
            ramp_viol[j] = strux_rates_row_value(&r->row[j + 1], sr) - r->row[j + 1].gamma;
            if (ind_viol)
                ind_viol[j] = strux_rates_row_value(&r->row[j + 1], si) - r->row[j + 1].gamma;
        }
    }
    strux_free(&sr);
    strux_free(&si);
    return st;
}

/* Problem 2 at model w. */
static strux_status problem2(strux_rates *r, const strux_model *w, double *obj, double *ramp_viol,
                             double *ind_viol)
{
    strux_rates_scores(r, w);
    return problem2_z(r, strux_model_norm2(w), obj, ramp_viol, ind_viol);
}

/* Each constraint's canonical row − γ at the indicator rates of model w on data.test (NaN where a
 * set is not evaluable or empty there), into val. */
static strux_status test_values(strux_rates *r, const strux_model *w, double *val)
{
    int32_t K = strux_subset_count(r->defs), S = r->n_sets;
    for (int32_t j = 0; j < r->m; j++)
        val[j] = NAN;
    if (!r->test) return STRUX_OK;
    const strux_dataset *t = r->test;
    double *cnt = NULL, *sp = NULL;
    STRUX_TRY(strux_alloc_array(&cnt, (size_t)S + 1, sizeof *cnt));
    strux_status st = strux_alloc_array(&sp, (size_t)K, sizeof *sp);
    for (int64_t e = 0; st == STRUX_OK && e < t->n_local; e++) {
        if (!(strux_rates_score(w, t, e) >= 0)) continue;
        for (int32_t b = 0; b < S; b++)
            if (r->test_member[b] && r->test_member[b][e]) cnt[b] += 1;
    }
    if (st == STRUX_OK) st = strux_comm_allreduce_sum(r->comm, cnt, S);
    for (int32_t k = 0; k < K && st == STRUX_OK; k++)
        sp[k] = NAN;
    for (int32_t b = 0; b < S && st == STRUX_OK; b++) {
        int64_t nb = r->test_n[r->sets[b]];
        sp[r->sets[b]] = nb > 0 ? cnt[b] / (double)nb : NAN;
    }
    for (int32_t j = 0; j < r->m && st == STRUX_OK; j++)
        val[j] = strux_rates_row_value(&r->row[j + 1], sp) - r->row[j + 1].gamma;
    strux_free(&cnt);
    strux_free(&sp);
    return st;
}

/* ---- Alg. 1: the surrogate at the anchor ---- */

/* Pattern of every local example at the anchor scores r->z (§2.1 table: hinge on the positive side
 * when z' ≤ ½, on the negative side when z' ≥ −½), γ̌ and C_0, and (count) the examples that
 * changed side into r->st.switched. */
static strux_status linearise(strux_rates *r, int count)
{
    int32_t m = r->m, S = r->n_sets;
    int64_t *cnt = NULL, changed = 0;
    STRUX_TRY(strux_alloc_array(&cnt, 2 * (size_t)S + 1, sizeof *cnt));
    for (int64_t e = 0; e < r->n_local; e++) {
        uint8_t p = (uint8_t)((r->z[e] <= 0.5) | ((r->z[e] >= -0.5) << 1));
        changed += p != r->pat[e];
        r->pat[e] = p;
        for (int32_t b = 0; b < S; b++)
            if (r->member[b][e]) {
                cnt[b] += r->z[e] > 0.5;
                cnt[S + b] += r->z[e] < -0.5;
            }
    }
    cnt[2 * S] = changed;
    strux_status st = strux_comm_allreduce_sum_i64(r->comm, cnt, 2 * S + 1);
    if (count) r->st.switched = cnt[2 * S];
    for (int32_t j = 0; st == STRUX_OK && j <= m; j++) {
        const strux_rates_row *row = &r->row[j];
        double c = 0;
        for (int32_t t = 0; t < row->n; t++) {
            int32_t b = strux_rates_set_slot(r, row->set[t]);
            c += (row->alpha[t] * (double)cnt[b] + row->beta[t] * (double)cnt[S + b]) /
                 (double)r->n[row->set[t]];
        }
        if (j == 0)
            r->C0 = row->c0 + c;
        else
            r->gam[j - 1] = row->gamma - c;
    }
    strux_free(&cnt);
    return st;
}

/* ---- Alg. 1 ---- */

/* The start (rates.start): w = 0, or a binary model file scaled up (A7). The scale is the one of
 * 2^k / max|s(x)| (k = 0..60, s the file model's scores) with the smallest Problem 2 objective
 * among those meeting every ramp constraint, or with the smallest total violation when none
 * does: "scaled up so that few points lie inside the ramp" made concrete, since the largest
 * scales also inflate (λ/2)||w||² and a data set sampled at the model's boundary (the churn
 * problem's D1) has points inside the ramp at any scale. */
static strux_status start_model(strux_rates *r, strux_model *anchor)
{
    strux_model_zero(anchor);
    if (strcmp(r->opt.start, "zero") == 0) return STRUX_OK;
    STRUX_TRY(strux_rates_read_model(r, r->opt.start, "rates.start", anchor));
    double *z0 = NULL, top = 0, best_obj = INFINITY, best_viol = INFINITY, best = 0;
    double viol[STRUX_RATES_MAX_M + 1], norm2 = strux_model_norm2(anchor);
    STRUX_TRY(strux_alloc_array(&z0, (size_t)r->n_local + 1, sizeof *z0));
    strux_rates_scores(r, anchor);
    memcpy(z0, r->z, (size_t)r->n_local * sizeof *z0);
    for (int64_t e = 0; e < r->n_local; e++)
        top = fmax(top, fabs(2 * z0[e]));
    strux_status st = strux_comm_allreduce_max(r->comm, &top, 1);
    if (st == STRUX_OK && !(top > 0))
        st = strux_error_set(STRUX_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s (rates.start): every training row scores 0 under it; it cannot "
                             "start MM",
                             r->opt.start);
    for (int k = 0; st == STRUX_OK && k <= 60; k++) {
        double scale = ldexp(1.0, k) / top, obj, over = 0;
        for (int64_t e = 0; e < r->n_local; e++)
            r->z[e] = scale * z0[e];
        st = problem2_z(r, scale * scale * norm2, &obj, viol, NULL);
        for (int32_t j = 0; j < r->m; j++)
            over += fmax(0.0, viol[j]);
        if (over < best_viol || (over == best_viol && obj < best_obj)) {
            best_viol = over;
            best_obj = obj;
            best = scale;
        }
    }
    strux_free(&z0);
    STRUX_TRY(st);
    strux_model_scale(anchor, best);
    if (strux_comm_rank(r->comm) == 0)
        strux_log(STRUX_LOG_INFO,
                  "rates: MM starts from %s scaled by %.6g (Problem 2 objective %.9g, ramp "
                  "constraints over their bounds by %.3g in all, A7)",
                  r->opt.start, best, best_obj, best_viol);
    return STRUX_OK;
}

/* The step's clocks started, the pattern, γ̌ and C_0 at the anchor (count: the examples that
 * changed side into st.switched). */
static strux_status at_anchor(strux_rates *r, int count)
{
    r->step_t0 = strux_time_now();
    r->lp0 = r->lp_s;
    r->comm0 = strux_comm_seconds(r->comm);
    strux_rates_scores(r, r->anchor);
    return linearise(r, count);
}

/* The step's start: the pattern, γ̌ and C_0 at the anchor, its Problem 2 values, a new search.
 * *stop: no example changed side (the surrogate would be the last one). */
static strux_status step_begin(strux_rates *r, int *stop)
{
    rates_mm_state *st = &r->st;
    *stop = 0;
    STRUX_TRY(at_anchor(r, 1));
    if (st->step == 1) st->switched = 0; /* from w = 0 every example was "both hinges" */
    if (st->step > 1 && st->switched == 0) {
        if (strux_comm_rank(r->comm) == 0)
            strux_log(STRUX_LOG_INFO, "rates: MM stops: no example changed side");
        *stop = 1;
        return STRUX_OK;
    }
    STRUX_TRY(problem2(r, r->anchor, &st->obj, r->viol, NULL));
    if (st->step == 1 && strux_comm_rank(r->comm) == 0)
        for (int32_t j = 0; j < r->m; j++)
            if (r->viol[j] > 0)
                strux_log(STRUX_LOG_WARN,
                          "rates: the MM start violates constraint %s (ramp value %.6g above its "
                          "bound); MM runs anyway (A7)",
                          r->con_name[j], r->viol[j]);
    STRUX_TRY(strux_rates_search_begin(r));
    st->phase = MM_SEARCH;
    return STRUX_OK;
}

/* The step's end: its model's Problem 2 values, kept (the new anchor, its /rates snapshot) when
 * its objective is below the last kept step's; *stop when MM ends here. */
static strux_status step_end(strux_rates *r, strux_driver *drv, strux_model *ret, int *stop,
                             int *repeat)
{
    rates_mm_state *st = &r->st;
    int32_t m = r->m;
    double obj_new, *ramp_new = r->rec, *ind = r->rec + m, *tv = r->rec + 2 * m;
    *repeat = 0;
    STRUX_TRY(problem2(r, ret, &obj_new, ramp_new, ind));
    STRUX_TRY(test_values(r, ret, tv));
    /* a step whose objective is not below the anchor's is not kept. With exact inner solves MM
     * never rises; with solves to the search's tolerance ε a step can rise by up to ε, or the
     * search can prove the anchor optimal to ε and return it, while the ramp constraints are
     * still slack by about ε/v (the surrogate's gap closes only over further steps). So the step
     * is retried from the same anchor at ε/4, twice at most (down to rates.eps/16); only then
     * does MM end with the anchor, its /rates snapshot and values. */
    int rise = st->step > 1 && obj_new >= st->prev;
    int retry = rise && st->eps > r->opt.eps / 16 * 1.5;
    r->step_s = strux_time_now() - r->step_t0;
    r->comm_s = strux_comm_seconds(r->comm) - r->comm0;
    if (strux_comm_rank(r->comm) == 0) {
        char vs[512] = "";
        for (int32_t j = 0; j < m && strlen(vs) < 400; j++)
            snprintf(vs + strlen(vs), sizeof vs - strlen(vs),
                     " %s: v %.6g ramp %+.3e train %+.9e", r->con_name[j], r->v[j], ramp_new[j],
                     ind[j]);
        strux_log(STRUX_LOG_INFO,
                  "rates: MM step %lld objective %.9g, %lld switched, %lld cuts, %lld bias cuts, "
                  "%lld inner epochs, %.2fs (lp %.3fs, comm %.3fs);%s%s",
                  (long long)st->step, obj_new, (long long)st->switched,
                  (long long)r->total_cuts, (long long)r->total_bcuts,
                  (long long)r->inner_epochs, r->step_s, r->lp_s - r->lp0, r->comm_s, vs,
                  retry  ? "; not below the last step's objective: retried at a quarter of the "
                           "search's tolerance"
                  : rise ? "; not below the last step's objective: MM stops with that step's model"
                         : "");
    }
    /* the step's record (kept or not: the rise of a step not kept is what the log shows) */
    r->rec_obj = obj_new;
    r->rec_kept = !rise;
    r->recording = 1;
    strux_status s = strux_driver_record(drv);
    r->recording = 0;
    STRUX_TRY(s);
    *stop = rise && !retry;
    if (retry) { /* the same step again, from the same anchor, at ε/4 */
        st->eps /= 4;
        *repeat = 1;
        return STRUX_OK;
    }
    if (rise) return STRUX_OK;
    STRUX_TRY(strux_model_copy(r->anchor, ret));
    r->mm_objective = obj_new;
    memcpy(r->ramp, ramp_new, (size_t)m * sizeof *r->ramp);
    memcpy(r->train_val, ind, (size_t)m * sizeof *r->train_val);
    memcpy(r->test_val, tv, (size_t)m * sizeof *r->test_val);
    strux_rates_store_free(&r->kept);
    STRUX_TRY(strux_rates_snapshot(r, &r->kept));
    *stop = st->step > 1 && st->prev - obj_new < r->opt.mm_tol * fabs(st->prev);
    st->prev = obj_new;
    return STRUX_OK;
}

/* After a resume inside a search: the pattern, γ̌ and C_0 again from the anchor (the switched
 * count is the checkpoint's), the loss weights of the multipliers and the bias of the
 * SVMOptimizer call under way; the duals and w are the checkpoint's. */
static strux_status resume_search(strux_rates *r)
{
    rates_mm_state *st = &r->st;
    STRUX_TRY(at_anchor(r, 0));
    if (st->in_solve) STRUX_TRY(strux_rates_set_multipliers(r, st->vt, 0));
    if (r->free_bias) strux_rates_set_bias(r, r->bt);
    return STRUX_OK;
}

/* Constraints still violated (ramp, randomised reading, beyond rates.eps) at the kept model: each
 * named with the value its left side reaches; STRUX_ERR_NUMERIC for the first, or with
 * rates.on_violation = keep warnings and the count in /rates (n_violated). */
static strux_status violations(strux_rates *r)
{
    int32_t K = strux_subset_count(r->defs), rank0 = strux_comm_rank(r->comm) == 0;
    double *sr = NULL, *si = NULL;
    strux_rates_scores(r, r->anchor);
    strux_status s = strux_alloc_array(&sr, (size_t)K, sizeof *sr);
    if (s == STRUX_OK) s = strux_alloc_array(&si, (size_t)K, sizeof *si);
    if (s == STRUX_OK) s = rates_at(r, sr, si);
    for (int32_t j = 0; s == STRUX_OK && j < r->m; j++) {
        if (!(r->ramp[j] > r->opt.eps)) continue;
        double lhs, rhs, ratio;
        int sat;
        strux_rates_constraint_values(r->e[j + 1], r->n, sr, &lhs, &rhs, &sat, &ratio);
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "constraint %s (%s) is still violated when training ends: %s reaches %.4g "
                 "against %.4g (the ramp rates of the kept model, the randomised reading), "
                 "multiplier %.6g with v_max %g",
                 r->con_name[j], r->con_text[j], r->e[j + 1]->lhs_text, lhs, rhs, r->v[j],
                 r->st.v_max);
        r->kept.n_violated++;
        if (strcmp(r->opt.on_violation, "keep") == 0) {
            if (rank0) strux_log(STRUX_LOG_WARN, "%s; the model is kept", msg);
        } else {
            s = strux_error_set(STRUX_ERR_NUMERIC, __FILE__, __LINE__, __func__, "%s", msg);
        }
    }
    strux_free(&sr);
    strux_free(&si);
    return s;
}

strux_status strux_rates_run(strux_rates *r, strux_driver *drv, strux_model *model)
{
    rates_mm_state *st = &r->st;
    int32_t m = r->m;
    int rank0 = strux_comm_rank(r->comm) == 0, stop = 0;
    strux_model *ret = NULL;
    STRUX_TRY(strux_model_create_like(model, &ret));
    strux_status s = STRUX_OK;
    if (r->resumed) {
        STRUX_TRY_GOTO(s, resume_search(r), done);
    } else {
        if (!r->anchor) STRUX_TRY_GOTO(s, strux_model_create_like(model, &r->anchor), done);
        STRUX_TRY_GOTO(s, start_model(r, r->anchor), done);
        *st = (rates_mm_state){.step = 1, .phase = MM_STEP_START, .v_max = r->opt.v_max,
                               .prev = NAN, .eps = r->opt.eps};
    }
    r->resumed = 0;
    while (st->phase != MM_DONE) {
        if (st->phase == MM_STEP_START) {
            if (st->step > r->opt.mm_steps) break;
            STRUX_TRY_GOTO(s, step_begin(r, &stop), done);
            if (stop) break;
        }
        STRUX_TRY_GOTO(s, strux_rates_search_run(r, drv, ret), done);
        if (st->limit) {
            if (rank0)
                strux_log(STRUX_LOG_WARN,
                          "rates: the run's epoch or time limit stopped MM step %lld; the model "
                          "is the last kept step's",
                          (long long)st->step);
            break;
        }
        int saturated = 0; /* A1: some v_j at v_max with its (ramp) constraint violated */
        double obj, rv[STRUX_RATES_MAX_M + 1];
        STRUX_TRY_GOTO(s, problem2(r, ret, &obj, rv, NULL), done);
        for (int32_t j = 0; j < m; j++)
            saturated |= r->v[j] >= 0.99 * st->v_max && rv[j] > r->opt.eps;
        if (saturated && st->doublings < MAX_DOUBLINGS) {
            st->doublings++;
            st->v_max *= 2;
            if (rank0)
                strux_log(STRUX_LOG_INFO, "rates: a multiplier saturated; v_max doubled to %g",
                          st->v_max);
            STRUX_TRY_GOTO(s, strux_rates_search_begin(r), done);
            continue;
        }
        int repeat;
        STRUX_TRY_GOTO(s, step_end(r, drv, ret, &stop, &repeat), done);
        if (stop) break;
        if (repeat) {
            STRUX_TRY_GOTO(s, strux_rates_search_begin(r), done);
            continue;
        }
        st->step++;
        st->phase = MM_STEP_START;
    }
    st->phase = MM_DONE;
    if (st->step > r->opt.mm_steps) st->step = r->opt.mm_steps;
    STRUX_CHECK_GOTO(s, r->kept.m == m, STRUX_ERR_NUMERIC, done,
                     "rate-constrained training ended before its first MM step was complete "
                     "(raise solver.epochs or solver.time_limit)");
    STRUX_TRY_GOTO(s, strux_model_copy(model, r->anchor), done);
    STRUX_TRY_GOTO(s, violations(r), done);
done:
    strux_model_destroy(&ret);
    return s;
}
