/* tests/common/brute.h - brute-force references over a task's whole label space (the tasks'
 * label_count/label_at enumeration), for checking oracles and searches on small spaces. */
#ifndef STRUX_TEST_BRUTE_H
#define STRUX_TEST_BRUTE_H

#include "strux/search.h"

/* Raw pair (m, g) of label y for the example of pot. */
void brute_point(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                 const strux_label *y, double *m, double *g);
/* Best value of a·m + b·g + c·|y| over all labels admitted by q (wedge and ban list), or -INFINITY when
 * none is admitted; the maximiser is copied into best if non-NULL. */
double brute_oracle(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                    const strux_query *q, strux_label *best);
/* max over all labels of psi(m, g) (psi given as a callback). */
double brute_max_psi(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                     double (*psi)(double m, double g), strux_label *best);
/* Fill pot->s[0..n) with standard normal draws times scale. */
void random_potentials(strux_pot *pot, int64_t n, double scale, uint64_t seed);

#endif
