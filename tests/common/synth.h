/* tests/common/synth.h - small synthetic datasets and random oracle queries for the task tests:
 * datasets built in memory (one row per example with given label counts, or sequences of tokens
 * with one tag each), and queries (a, b, c, wedge, strictness, h_shift) drawn either generic
 * (real slopes: boundary ties have probability 0) or on a dyadic grid (integer potentials and
 * slopes such as 1/4, 2, so labels fall exactly on the wedge rays and strictness matters). */
#ifndef STRUX_TEST_SYNTH_H
#define STRUX_TEST_SYNTH_H

#include "strux/task.h"

/* n examples, dim features (random sparse rows, values in [−1, 1]), n_labels labels; example r
 * gets labels drawn at random: exactly n_per labels when n_per > 0, else a random subset. The
 * dataset is a 1-rank dataset named path. Aborts on failure. */
strux_dataset *synth_rows(const char *path, int64_t n, int32_t dim, int32_t n_labels, int n_per,
                          uint64_t seed);
/* n sequences of 1..max_T tokens (lengths drawn), dim features per token, K tags. */
strux_dataset *synth_sequences(const char *path, int64_t n, int32_t max_T, int32_t dim, int32_t K,
                               uint64_t seed);

/* Random query: direction (a, b) ≥ 0 not both 0 (sometimes one of them 0), c ≠ 0 with
 * probability 1/2 when with_c, a wedge with probability 1/2 (α ≥ β, α sometimes ∞, β sometimes
 * 0, random strictness, h_shift 0 or 1). dyadic: a, b, c, α, β on a grid of powers of two. No
 * ban list. */
strux_query random_query(strux_rng *r, int with_c, int dyadic);
/* Integer potentials in [−range, range] (ties in m become likely). */
void integer_potentials(strux_pot *pot, int64_t n, int range, strux_rng *r);

#endif

/* Check an oracle answer against the reference value want (−INFINITY: nothing admitted): found
 * agrees, a·m + b·g + c·size equals want (relative rtol), (m, g, size) are the returned label's
 * own (score, loss and size recomputed), and the label is admitted by q's wedge (exact
 * comparisons, as brute_oracle) and not banned. */
void expect_oracle_answer(const strux_task *t, const strux_pot *pot, const strux_label *truth,
                          const strux_query *q, double want, const strux_label *y,
                          const strux_answer *ans, double rtol);
