/* search/plane.c - the searches' view of the task: oracle queries and answers on a surrogate's
 * plane (h, g) (slack_bicriteria.md §1.3, §1.6, §2.1), re-scoring of remembered labels, and the
 * filling of a search result (integral or a two-label mixture, §1.8). */
#include "search_impl.h"

#include <math.h>
#include <string.h>

strux_query strux_plane_query(const strux_surrogate *u, double a, double b)
{
    strux_query q;
    if (u->plane == STRUX_PLANE_F1) {
        /* a·(L + m) − b·(|y| + |y_i|): the constant −b·|y_i| does not move the argmax */
        q = strux_query_dir(a, a);
        q.c = -b;
    } else {
        q = strux_query_dir(a, b);
    }
    q.h_shift = u->h_shift;
    return q;
}

void strux_plane_map(const strux_surrogate *u, double size_truth, strux_point *p)
{
    if (u->plane == STRUX_PLANE_F1) {
        p->h = p->L + p->m;
        p->g = -(p->size + size_truth);
    } else {
        p->h = p->m + u->h_shift;
        p->g = p->L;
    }
}

strux_status strux_plane_call(strux_search *s, strux_task *t, const strux_pot *pot,
                              const strux_label *truth, const strux_query *q, strux_label *y,
                              strux_point *p, int *found)
{
    strux_answer a;
    STRUX_TRY(strux_task_oracle(t, pot, truth, q, y, &a));
    s->calls++;
    *found = a.found;
    if (!a.found) return STRUX_OK;
    STRUX_CHECK(isfinite(a.m) && isfinite(a.g), STRUX_ERR_NUMERIC,
                "oracle answer (m, L) = (%g, %g) is not finite on example %lld", a.m, a.g,
                (long long)pot->i);
    p->m = a.m;
    p->L = a.g;
    p->size = a.size;
    strux_plane_map(&s->u, s->size_truth, p);
    return STRUX_OK;
}

void strux_plane_eval(const strux_search *s, const strux_task *t, const strux_pot *pot,
                      const strux_label *truth, const strux_label *y, strux_point *p)
{
    p->m = strux_task_score(t, pot, y) - strux_task_score(t, pot, truth);
    p->L = strux_task_loss(t, y, truth);
    p->size = s->u.plane == STRUX_PLANE_F1 ? strux_task_size(t, y) : 0;
    strux_plane_map(&s->u, s->size_truth, p);
}

void strux_plane_begin(strux_search *s, const strux_task *t, const strux_label *truth)
{
    s->calls = 0;
    s->size_truth = s->u.plane == STRUX_PLANE_F1 ? strux_task_size(t, truth) : 0;
}

strux_status strux_search_answer(strux_search *s, const strux_label *y, const strux_point *p,
                                 double ub, strux_search_result *r)
{
    if (y != &s->y) STRUX_TRY(strux_label_copy(&s->y, y));
    r->y = &s->y;
    r->y2 = NULL;
    r->mix = 1.0;
    r->m = p->m;
    r->g = p->L;
    r->psi = s->u.psi(&s->u, p->h, p->g);
    r->psi_h = s->u.psi_h(&s->u, p->h, p->g);
    r->ub = ub;
    r->calls = s->calls;
    return STRUX_OK;
}

strux_status strux_search_answer_mix(strux_search *s, const strux_label *ya, const strux_point *pa,
                                     const strux_label *yb, const strux_point *pb, double mix,
                                     double ub, strux_search_result *r)
{
    if (mix >= 1) return strux_search_answer(s, ya, pa, ub, r);
    if (mix <= 0) return strux_search_answer(s, yb, pb, ub, r);
    STRUX_TRY(strux_label_copy(&s->y, ya));
    STRUX_TRY(strux_label_copy(&s->y2, yb));
    double h = mix * pa->h + (1 - mix) * pb->h, g = mix * pa->g + (1 - mix) * pb->g;
    r->y = &s->y;
    r->y2 = &s->y2;
    r->mix = mix;
    r->m = mix * pa->m + (1 - mix) * pb->m;
    r->g = mix * pa->L + (1 - mix) * pb->L;
    r->psi = s->u.psi(&s->u, h, g);
    r->psi_h = s->u.psi_h(&s->u, h, g);
    r->ub = ub;
    r->calls = s->calls;
    return STRUX_OK;
}

strux_status strux_search_offer(strux_search *s, const strux_label *y, const strux_point *p,
                                double *phi_best, strux_point *best)
{
    double v = s->u.psi(&s->u, p->h, p->g);
    if (v <= *phi_best) return STRUX_OK;
    *phi_best = v;
    *best = *p;
    return strux_label_copy(&s->y, y);
}

strux_status strux_search_start_slack(strux_search *s, strux_task *t, const strux_pot *pot,
                                      const strux_label *truth, double *phi_best, strux_point *best,
                                      double *lambda_c)
{
    strux_plane_begin(s, t, truth);
    strux_plane_eval(s, t, pot, truth, truth, best);
    STRUX_TRY(strux_label_copy(&s->y, truth));
    *phi_best = 0;
    strux_query q = strux_plane_query(&s->u, 1.0, 0.0);
    strux_point p;
    int found;
    STRUX_TRY(strux_plane_call(s, t, pot, truth, &q, &s->scratch, &p, &found));
    STRUX_TRY(strux_search_offer(s, &s->scratch, &p, phi_best, best));
    double G_hat = strux_task_max_loss(t, truth);
    *lambda_c = (p.h > 0 ? p.h : 1.0) / G_hat;
    return STRUX_OK;
}
