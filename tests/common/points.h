/* tests/common/points.h - a synthetic "point task" for search tests (slack_bicriteria.md
 * Appendix A items 1-4): every label is one of N given points (m_k, L_k), label 0 is the truth
 * (0, 0). Its oracle answers direction, wedge and ban-list queries by scanning the points, with
 * the wedge sides realised as in the multilabel oracle (closed sides +τ, open sides −τ,
 * τ = 1e-9·max(1, |slope·h|); α = ∞ open means h > 0). White-box: builds a strux_task by hand. */
#ifndef STRUX_TEST_POINTS_H
#define STRUX_TEST_POINTS_H

#include "strux/search.h"

#define POINTS_MAX 256

typedef struct point_set {
    strux_task *t;      /* the task (owned) */
    strux_dataset ds;   /* one example */
    strux_pot pot;      /* s = [m_0, L_0, m_1, L_1, ...], n_parts = N */
    strux_label truth;  /* label 0 */
} point_set;

/* A point set from n raw pairs (m_k, L_k), labels 1..n (label 0, the truth (0, 0), is added).
 * Only one set is live at a time (loss() reads the last one initialised). */
void points_init(point_set *ps, int n, const double *m, const double *L);
void points_free(point_set *ps);
/* Point (m, L) of label y. */
void points_of(const point_set *ps, const strux_label *y, double *m, double *L);

#endif
