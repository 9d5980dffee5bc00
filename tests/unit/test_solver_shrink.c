/* tests/unit/test_solver_shrink.c - the dual solvers' per-label shrinking (solvers/shrink.h) and
 * sparse dual lists (solvers/sparse_blocks.h), white-box, against plain references:
 *   - the active coordinates of a block (bit words) against a byte-per-coordinate reference, at
 *     every offset and length across word boundaries;
 *   - LIBLINEAR's test of one coordinate (shrunk at 0 above the upper threshold, at 1 below the
 *     lower one; projected gradients into the label's range); a dense block coefficient read
 *     back as α exactly at the bounds;
 *   - the end of an epoch per label, written out by hand: a label whose range stays above its
 *     level gets the range as thresholds; one that closes over its active coordinates gets all of
 *     them back and a full pass; a full pass that closes moves it tenfold finer; at 1e-12 an
 *     independent label stops (every coordinate out) and a coupled one (|R|) goes on; a label
 *     with nothing active counts as closed; the coupled thresholds are the |R|-weighted extremes;
 *   - the levels in step: a label two levels finer than another waits, out of the passes with its
 *     flags and thresholds kept, and goes on from them once the coarser labels have closed; a
 *     full pass due is never held; the verification pass of pg_tol and a checkpoint's state;
 *   - m3l's measures (m3l.pg_tol, m3l.block_switch): over random epochs of a coupled problem the
 *     epoch's largest |projected gradient| equals a direct computation over the coordinates that
 *     stayed in; a stop at pg_tol comes only after a pass in which every coordinate took part and
 *     every projected gradient (recomputed directly, shrunk ones included) is within it; within
 *     pg_tol after a pass with some coordinates out, every label returns for a full pass that
 *     then stops; with on = 0 nothing shrinks and the measure and stop are the same;
 *   - checkpoint state of a block at unaligned offsets round-trips bit for bit;
 *   - sparse lists: thousands of random list updates of random lengths against a dense reference,
 *     through moves to the end, compactions and growth of a pool that starts at 4 entries, with
 *     no allocation once the pool has its size; save/load of a range of examples round-trips;
 *     a list out of order or longer than its block is refused. */
#include "test_common.h"

#include <math.h>
#include <string.h>

#include "solvers/shrink.h"
#include "solvers/sparse_blocks.h"

static strux_comm *comm;

static int bit(const strux_shrink *sh, int64_t q)
{
    return (int)((sh->out[q >> 6] >> (q & 63)) & 1);
}

static void set_bit(strux_shrink *sh, int64_t q, int on)
{
    uint64_t b = UINT64_C(1) << (q & 63);
    sh->out[q >> 6] = on ? sh->out[q >> 6] | b : sh->out[q >> 6] & ~b;
}

static void test_active_coordinates(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 5, 0, 0);
    const int64_t n_coord = 700;
    strux_shrink sh;
    assert_strux_ok(strux_shrink_init(&sh, 7, n_coord, 1));
    unsigned char ref[700];
    for (int trial = 0; trial < 40; trial++) {
        double density = strux_rng_uniform(&r);
        for (int64_t q = 0; q < n_coord; q++) {
            ref[q] = strux_rng_uniform(&r) < density;
            set_bit(&sh, q, ref[q]);
        }
        for (int64_t q0 = 0; q0 < 200; q0 += 1 + (int64_t)strux_rng_below(&r, 9))
            for (int32_t n = 0; n <= 300; n += 1 + (int32_t)strux_rng_below(&r, 40)) {
                int32_t rows[301], n_ref = 0;
                int32_t n_act = strux_shrink_active(&sh, q0, n, rows);
                for (int32_t k = 0; k < n; k++)
                    if (!ref[q0 + k]) {
                        assert_true(n_ref < n_act);
                        assert_int_equal(rows[n_ref++], k);
                    }
                assert_int_equal(n_act, n_ref);
            }
    }
    strux_shrink_free(&sh);
}

static void test_coordinate_rule(void **state)
{
    (void)state;
    strux_shrink sh;
    assert_strux_ok(strux_shrink_init(&sh, 2, 8, 1));
    sh.th_max[1] = 0.5;
    sh.th_min[1] = -0.25;
    /* at 0: G above the upper threshold leaves; below it stays, its PG min(G, 0) ... */
    assert_int_equal(strux_shrink_test(&sh, 1, 3, 0.0, 0.6), 1);
    assert_true(bit(&sh, 3));
    assert_int_equal(strux_shrink_test(&sh, 1, 4, 0.0, 0.4), 0);
    assert_int_equal(strux_shrink_test(&sh, 1, 4, 0.0, -0.3), 0);
    /* ... at 1 the mirror image; inside the box the gradient itself */
    assert_int_equal(strux_shrink_test(&sh, 1, 5, 1.0, -0.3), 1);
    assert_int_equal(strux_shrink_test(&sh, 1, 6, 1.0, 0.7), 0);
    assert_int_equal(strux_shrink_test(&sh, 1, 7, 0.5, 0.2), 0);
    assert_false(bit(&sh, 4) || bit(&sh, 6) || bit(&sh, 7));
    /* projected gradients seen: 0 (at 0 with G > 0), −0.3 (at 0), 0.7 (at 1 with G > 0: it may
     * come down), 0.2 (inside) */
    assert_close(sh.pg_max[1], 0.7, 0);
    assert_close(sh.pg_min[1], -0.3, 0);
    assert_true(sh.pg_max[0] == -INFINITY && sh.pg_min[0] == INFINITY);
    strux_shrink_free(&sh);
}

/* A coefficient stored as c = −σ·α/λ_n reads back as α exactly at the bounds (the sparse lists'
 * α), though (α/λ_n)·λ_n rounds off 1 for many λ_n; inside the box it is the plain product. */
static void test_box_alpha(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 3, 0, 0);
    int off_bound = 0;
    for (int t = 0; t < 10000; t++) {
        double lambda_n = exp(20 * strux_rng_uniform(&r) - 10), sigma = t % 2 ? 1.0 : -1.0;
        double c = -sigma * 1.0 / lambda_n, a = strux_rng_uniform(&r);
        off_bound += -c * sigma * lambda_n != 1.0;
        assert_true(strux_box_alpha(c, sigma, lambda_n) == 1.0);
        assert_true(strux_box_alpha(-sigma * 0.0 / lambda_n, sigma, lambda_n) == 0.0);
        double ca = -sigma * a / lambda_n;
        assert_true(strux_box_alpha(ca, sigma, lambda_n) == -ca * sigma * lambda_n || a < 1e-15);
    }
    print_message("# (1/λ_n)·λ_n ≠ 1 for %d of 10000 random λ_n\n", off_bound);
    assert_true(off_bound > 0); /* the case the snap is for occurs */
    assert_true(strux_box_alpha(-1e-3, 1, 1e3 * (1 + 3e-16)) == 1.0);
    assert_true(strux_box_alpha(-1e-3, 1, 1e3 * (1 - 1e-9)) < 1.0);
    assert_true(strux_box_alpha(1e-20, -1, 1) == 0.0 && strux_box_alpha(1e-9, -1, 1) == 1e-9);
}

/* One epoch end with the given per-label ranges (NAN: nothing of the label active). */
static void end_epoch(strux_shrink *sh, const int64_t *off, int64_t n, const double *lo,
                      const double *hi, const strux_shrink_coupling *cpl)
{
    for (int32_t k = 0; k < sh->L; k++) {
        sh->pg_min[k] = isnan(lo[k]) ? INFINITY : lo[k];
        sh->pg_max[k] = isnan(hi[k]) ? -INFINITY : hi[k];
    }
    assert_strux_ok(strux_shrink_epoch_done(sh, comm, off, n, cpl));
}

static void test_epoch_end_per_label(void **state)
{
    (void)state;
    const int64_t n = 5, L = 3, off[6] = {0, 3, 6, 9, 12, 15};
    strux_shrink sh;
    assert_strux_ok(strux_shrink_init(&sh, (int32_t)L, off[n], 1));
    for (int32_t k = 0; k < L; k++)
        assert_true(sh.full[k] && sh.eps[k] == 0.1 && isinf(sh.th_max[k]));
    /* first (full) pass: label 0 open, label 1 closed (its full pass: finer level), label 2
     * open with a range on one side only */
    double lo1[3] = {-0.4, -0.01, -0.3}, hi1[3] = {0.5, 0.02, -0.1};
    end_epoch(&sh, off, n, lo1, hi1, NULL);
    assert_close(sh.th_max[0], 0.5, 0);
    assert_close(sh.th_min[0], -0.4, 0);
    assert_false(sh.full[0]);
    assert_close(sh.eps[1], 0.01, 1e-15);
    assert_close(sh.th_max[1], 0.02, 0);
    assert_true(isinf(sh.th_max[2]) && sh.th_max[2] > 0); /* no upper end above 0: none */
    assert_close(sh.th_min[2], -0.3, 0);
    /* label 0 shrinks some coordinates, then closes over the rest: all come back, full pass */
    set_bit(&sh, off[1] + 0, 1);
    set_bit(&sh, off[3] + 0, 1);
    set_bit(&sh, off[2] + 2, 1);
    double lo2[3] = {-0.05, -0.5, NAN}, hi2[3] = {0.01, 0.5, NAN};
    end_epoch(&sh, off, n, lo2, hi2, NULL);
    assert_false(bit(&sh, off[1]) || bit(&sh, off[3]));
    assert_true(sh.full[0] && isinf(sh.th_max[0]) && sh.eps[0] == 0.1);
    /* label 2: nothing active counts as closed, its coordinates come back */
    assert_false(bit(&sh, off[2] + 2));
    assert_true(sh.full[2]);
    /* label 0's full pass closes: tenfold finer, thresholds from that pass */
    double lo3[3] = {-0.02, -0.5, -0.2}, hi3[3] = {0.03, 0.5, 0.2};
    end_epoch(&sh, off, n, lo3, hi3, NULL);
    assert_close(sh.eps[0], 0.01, 1e-15);
    assert_false(sh.full[0]);
    assert_close(sh.th_max[0], 0.03, 0);
    /* at the last level a full pass that closes stops an independent label: every coordinate of
     * it out, no longer in the ranges (every label at that level, so none waits) */
    for (int32_t k = 0; k < L; k++) {
        sh.eps[k] = 1e-12;
        sh.wait[k] = 0;
    }
    sh.full[0] = 1;
    double lo4[3] = {0, -0.5, -0.2}, hi4[3] = {0, 0.5, 0.2};
    end_epoch(&sh, off, n, lo4, hi4, NULL);
    assert_true(sh.stopped[0]);
    for (int64_t i = 0; i < n; i++)
        assert_true(bit(&sh, off[i]));
    int32_t rows[3];
    assert_int_equal(strux_shrink_active(&sh, off[4], 3, rows), 2);
    end_epoch(&sh, off, n, lo4, hi4, NULL);
    assert_true(sh.stopped[0]);
    /* reset: every label back at the first level */
    strux_shrink_reset(&sh);
    for (int32_t k = 0; k < L; k++)
        assert_true(!sh.stopped[k] && sh.full[k] && sh.eps[k] == 0.1);
    assert_int_equal(strux_shrink_active(&sh, 0, (int32_t)off[n], (int32_t[15]){0}), 15);
    strux_shrink_free(&sh);
}

/* The levels in step (shrink.h): a label two levels finer than the coarsest waits, out of the
 * passes with its flags and thresholds kept, until the coarser labels have closed their level
 * (one level of lead is allowed); a label due for a full pass does not wait; the waits follow
 * from the checkpointed state; the pg_tol verification pass takes the waiting labels too. */
static void test_levels_in_step(void **state)
{
    (void)state;
    const int64_t n = 4, L = 3, off[5] = {0, 3, 6, 9, 12};
    strux_shrink sh;
    assert_strux_ok(strux_shrink_init(&sh, (int32_t)L, off[n], 1));
    int32_t rows[3];
    /* the first (full) pass closes label 0 only: it goes to 0.01, one level ahead, no wait */
    double lo1[3] = {-0.02, -0.3, -0.3}, hi1[3] = {0.03, 0.3, 0.3};
    end_epoch(&sh, off, n, lo1, hi1, NULL);
    assert_close(sh.eps[0], 0.01, 1e-15);
    assert_true(!sh.wait[0] && sh.n_wait == 0);
    /* label 0 closes 0.01 over its active coordinates, then in its full pass: at 0.001, two
     * levels finer than labels 1 and 2, it waits */
    double lo2[3] = {-0.002, -0.3, -0.3}, hi2[3] = {0.003, 0.3, 0.3};
    end_epoch(&sh, off, n, lo2, hi2, NULL);
    assert_true(sh.full[0] && !sh.wait[0]);
    end_epoch(&sh, off, n, lo2, hi2, NULL);
    assert_close(sh.eps[0], 0.001, 1e-15);
    assert_true(sh.wait[0] && !sh.wait[1] && !sh.wait[2] && sh.n_wait == 1);
    set_bit(&sh, off[2] + 0, 1); /* a flag of its own: kept while it waits */
    for (int64_t i = 0; i < n; i++) {
        assert_int_equal(strux_shrink_active(&sh, off[i], 3, rows), 2);
        assert_true(rows[0] == 1 && rows[1] == 2);
    }
    /* labels 1 and 2 close 0.1 (over their active coordinates, then in full passes); label 0
     * waits with its thresholds until the coarsest level is 0.01 */
    double lo3[3] = {NAN, -0.04, -0.3}, hi3[3] = {NAN, 0.05, 0.3};
    end_epoch(&sh, off, n, lo3, hi3, NULL);
    assert_true(sh.full[1] && sh.wait[0]);
    double lo4[3] = {NAN, -0.04, -0.04}, hi4[3] = {NAN, 0.05, 0.05};
    end_epoch(&sh, off, n, lo4, hi4, NULL);
    assert_true(sh.full[2] && sh.wait[0] && fabs(sh.eps[1] - 0.01) < 1e-15 && !sh.wait[1]);
    assert_close(sh.th_max[0], 0.003, 0);
    end_epoch(&sh, off, n, lo4, hi4, NULL);
    assert_int_equal(sh.n_wait, 0);
    assert_true(!sh.wait[0] && !sh.full[0] && fabs(sh.eps[0] - 0.001) < 1e-15);
    assert_true(bit(&sh, off[2] + 0));
    assert_close(sh.th_max[0], 0.003, 0);
    assert_close(sh.th_min[0], -0.002, 0);
    assert_int_equal(strux_shrink_active(&sh, off[2], 3, rows), 2);
    assert_int_equal(strux_shrink_active(&sh, off[1], 3, rows), 3);
    strux_shrink_free(&sh);
    /* the waits of a loaded state: levels 0.1, 0.001, 0.01 (label 1 waits), nothing stopped */
    strux_shrink a, b;
    assert_strux_ok(strux_shrink_init(&a, (int32_t)L, off[n], 1));
    assert_strux_ok(strux_shrink_init(&b, (int32_t)L, off[n], 1));
    const double lev[3] = {0.1, 0.001, 0.01};
    for (int32_t k = 0; k < L; k++) {
        a.eps[k] = lev[k];
        a.full[k] = 0;
    }
    strux_blob glob = {0};
    assert_strux_ok(strux_shrink_save_global(&a, &glob));
    glob.pos = 0;
    assert_strux_ok(strux_shrink_load_global(&b, &glob));
    strux_blob_free(&glob);
    assert_true(!b.wait[0] && b.wait[1] && !b.wait[2] && b.n_wait == 1);
    /* within pg_tol with label 1 waiting: every label's verification pass, none waits */
    b.pg_abs = 1e-4;
    assert_int_equal(strux_shrink_pg_tol(&b, off, n, 1e-3), 0);
    assert_int_equal(b.n_wait, 0);
    for (int32_t k = 0; k < L; k++)
        assert_true(b.full[k] && !b.wait[k]);
    assert_int_equal(strux_shrink_active(&b, 0, (int32_t)off[n], (int32_t[12]){0}), 12);
    strux_shrink_free(&a);
    strux_shrink_free(&b);
}

static void test_epoch_end_coupled(void **state)
{
    (void)state;
    const int64_t n = 2, off[3] = {0, 2, 4};
    /* |R| columns: label 0 = {0: 1, 1: −0.5}, label 1 = {1: 2} */
    const int64_t ptr[3] = {0, 2, 3};
    const int32_t idx[3] = {0, 1, 1};
    const double val[3] = {1, -0.5, 2};
    strux_shrink_coupling cpl = {ptr, idx, val};
    strux_shrink sh;
    assert_strux_ok(strux_shrink_init(&sh, 2, off[n], 1));
    double lo[2] = {-0.2, -1.0}, hi[2] = {0.3, 0.8};
    end_epoch(&sh, off, n, lo, hi, &cpl);
    assert_close(sh.th_max[0], fmax(0.3, 0.5 * 0.8), 1e-15);
    assert_close(sh.th_min[0], fmin(-0.2, -0.5 * 1.0), 1e-15);
    assert_close(sh.th_max[1], 1.6, 1e-15);
    assert_close(sh.th_min[1], -2.0, 1e-15);
    /* a coupled label at the last level goes on after a closed full pass */
    sh.eps[1] = 1e-12;
    sh.full[1] = 1;
    double lo2[2] = {-0.2, 0}, hi2[2] = {0.3, 0};
    end_epoch(&sh, off, n, lo2, hi2, &cpl);
    assert_false(sh.stopped[1]);
    strux_shrink_free(&sh);
}

/* LIBLINEAR's projected gradient of a coordinate at alpha in [0, 1] with gradient G. */
static double projected(double alpha, double g)
{
    if (alpha == 0) return fmin(g, 0);
    if (alpha == 1) return fmax(g, 0);
    return g;
}

/* Random epochs of L coupled labels (|R| = I: none stops) with gradients of scale 2^−epoch, the
 * coordinates visited as m3l does (the active ones of each block, each tested); each epoch's
 * pg_abs and the pg_tol stop against a direct computation. Returns the epoch of the stop. */
static int pg_tol_epochs(int on, double tol, int *verified)
{
    enum { N = 40, L = 5 };
    int64_t off[N + 1], ptr[L + 1];
    int32_t idx[L];
    double val[L];
    for (int64_t i = 0; i <= N; i++)
        off[i] = i * L;
    for (int32_t k = 0; k <= L; k++)
        ptr[k] = k;
    for (int32_t k = 0; k < L; k++) {
        idx[k] = k;
        val[k] = 1;
    }
    strux_shrink_coupling cpl = {ptr, idx, val};
    strux_shrink sh;
    assert_strux_ok(strux_shrink_init(&sh, L, off[N], on));
    strux_rng r;
    strux_rng_init(&r, 11, (uint64_t)on, 0);
    *verified = 0;
    for (int epoch = 0; epoch < 60; epoch++) {
        double scale = ldexp(1, -epoch), pg_in = 0, pg_all = 0;
        int n_in = 0;
        for (int64_t i = 0; i < N; i++) {
            int32_t rows[L], n_act = strux_shrink_active(&sh, off[i], L, rows), a = 0;
            for (int32_t k = 0; k < L; k++) {
                double u = strux_rng_uniform(&r), alpha = u < 0.4 ? 0 : u < 0.7 ? 1 : u;
                double g = scale * (2 * strux_rng_uniform(&r) - 1), pg = projected(alpha, g);
                pg_all = fmax(pg_all, fabs(pg));
                if (a == n_act || rows[a] != k) continue; /* sat out */
                a++;
                if (strux_shrink_test(&sh, k, off[i] + k, alpha, g)) {
                    assert_true(on);
                    continue;
                }
                pg_in = fmax(pg_in, fabs(pg));
                n_in++;
            }
        }
        assert_strux_ok(strux_shrink_epoch_done(&sh, comm, off, N, &cpl));
        assert_close(sh.pg_abs, pg_in, 0);
        if (!on) assert_true(sh.all_full && n_in == N * L);
        int had_full = sh.all_full;
        if (strux_shrink_pg_tol(&sh, off, N, tol)) {
            assert_true(n_in == N * L && pg_all <= tol); /* every coordinate, within tol */
            strux_shrink_free(&sh);
            return epoch;
        }
        if (pg_in <= tol) { /* within tol, not a full pass: every label's next pass is full */
            assert_false(had_full);
            *verified = 1;
            for (int32_t k = 0; k < L; k++)
                assert_true(sh.full[k] && isinf(sh.th_max[k]) && isinf(sh.th_min[k]));
            assert_int_equal(strux_shrink_active(&sh, 0, (int32_t)off[N], (int32_t[N * L]){0}),
                             N * L);
        }
    }
    strux_shrink_free(&sh);
    return -1;
}

static void test_pg_tol(void **state)
{
    (void)state;
    int verified;
    /* 2^−e ≤ 1e-3 from epoch 10: shrinking on, a pass with coordinates out comes first, then
     * the verification pass that stops */
    int e_on = pg_tol_epochs(1, 1e-3, &verified);
    print_message("# pg_tol 1e-3: shrinking on stops at epoch %d (verified %d)\n", e_on, verified);
    assert_true(verified && e_on >= 10 && e_on <= 12);
    int e_off = pg_tol_epochs(0, 1e-3, &verified);
    assert_false(verified);
    assert_int_equal(e_off, 10);
}

static void test_state_round_trip(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 9, 0, 0);
    const int64_t n = 9;
    int64_t off[10];
    off[0] = 0;
    for (int64_t i = 0; i < n; i++)
        off[i + 1] = off[i] + 13; /* blocks across word boundaries */
    strux_shrink a, b;
    assert_strux_ok(strux_shrink_init(&a, 13, off[n], 1));
    assert_strux_ok(strux_shrink_init(&b, 13, off[n], 1));
    for (int64_t q = 0; q < off[n]; q++)
        set_bit(&a, q, (int)strux_rng_below(&r, 2));
    for (int32_t k = 0; k < 13; k++) {
        a.eps[k] = strux_rng_uniform(&r);
        a.th_max[k] = strux_rng_uniform(&r);
        a.th_min[k] = -strux_rng_uniform(&r);
        a.full[k] = (unsigned char)strux_rng_below(&r, 2);
        a.stopped[k] = (unsigned char)strux_rng_below(&r, 2);
    }
    for (int64_t q = 0; q < off[n]; q++) /* b starts from the other pattern */
        set_bit(&b, q, !bit(&a, q));
    for (int32_t k = 0; k < 13; k++) {
        a.pg_max[k] = strux_rng_uniform(&r);
        a.pg_min[k] = -strux_rng_uniform(&r);
    }
    strux_blob glob = {0};
    assert_strux_ok(strux_shrink_save_global(&a, &glob));
    glob.pos = 0;
    assert_strux_ok(strux_shrink_load_global(&b, &glob));
    strux_blob_free(&glob);
    const int64_t cut[4] = {0, 2, 7, 9}; /* example ranges of 2, 5 and 2 examples */
    for (int blk = 0; blk < 3; blk++) {
        strux_blob blob = {0};
        assert_strux_ok(strux_shrink_save(&a, off, cut[blk], cut[blk + 1], &blob));
        blob.pos = 0;
        assert_strux_ok(strux_shrink_load(&b, off, cut[blk], cut[blk + 1], &blob));
        strux_blob_free(&blob);
    }
    for (int64_t q = 0; q < off[n]; q++)
        assert_int_equal(bit(&a, q), bit(&b, q));
    assert_memory_equal(a.eps, b.eps, 13 * sizeof *a.eps);
    assert_memory_equal(a.th_max, b.th_max, 13 * sizeof *a.th_max);
    assert_memory_equal(a.th_min, b.th_min, 13 * sizeof *a.th_min);
    assert_memory_equal(a.pg_max, b.pg_max, 13 * sizeof *a.pg_max);
    assert_memory_equal(a.pg_min, b.pg_min, 13 * sizeof *a.pg_min);
    assert_memory_equal(a.full, b.full, 13);
    assert_memory_equal(a.stopped, b.stopped, 13);
    strux_shrink_free(&a);
    strux_shrink_free(&b);
}

static void check_lists(const strux_sparse_blocks *sb, const double *ref, int64_t n, int32_t P)
{
    int64_t live = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t at = 0;
        for (int32_t k = 0; k < P; k++) {
            if (ref[i * P + k] == 0) continue;
            assert_true(at < sb->len[i]);
            assert_int_equal(sb->idx[sb->start[i] + at], k);
            assert_true(sb->val[sb->start[i] + at] == ref[i * P + k]);
            at++;
        }
        assert_int_equal(at, sb->len[i]);
        assert_true(sb->len[i] <= sb->cap[i] || sb->len[i] == 0);
        live += at;
    }
    assert_int_equal(live, sb->live);
    assert_true(sb->used <= sb->size);
}

static void test_sparse_lists(void **state)
{
    (void)state;
    strux_rng r;
    strux_rng_init(&r, 13, 0, 0);
    enum { N = 40, P = 50 };
    static double ref[N * P];
    int32_t idx[P];
    double val[P];
    strux_sparse_blocks sb;
    assert_strux_ok(strux_sparse_blocks_init(&sb, N, 4));
    int64_t calls_at_size = -1, size_seen = sb.size;
    for (int step = 0; step < 6000; step++) {
        int64_t i = (int64_t)strux_rng_below(&r, N);
        /* phases: lists grow, shrink, grow again (moves, compactions and growth) */
        double density = step < 2000 ? 0.6 : step < 4000 ? 0.05 : 0.3;
        int32_t n = 0;
        for (int32_t k = 0; k < P; k++) {
            ref[i * P + k] = strux_rng_uniform(&r) < density ? strux_rng_uniform(&r) + 0.5 : 0;
            if (ref[i * P + k] != 0) {
                idx[n] = k;
                val[n++] = ref[i * P + k];
            }
        }
        assert_strux_ok(strux_sparse_blocks_set(&sb, i, n, idx, val, P));
        check_lists(&sb, ref, N, P);
        if (sb.size != size_seen) {
            size_seen = sb.size;
            calls_at_size = strux_alloc_calls();
        }
    }
    /* in the last phase the pool had its size: compactions only, no allocation */
    assert_true(calls_at_size < 0 || strux_alloc_calls() == calls_at_size);
    assert_true(sb.size <= 3 * (int64_t)N * P);
    /* save examples [10, 30), load into a fresh set, compare */
    strux_blob blob = {0};
    assert_strux_ok(strux_sparse_blocks_save(&sb, 10, 30, &blob));
    strux_sparse_blocks other;
    assert_strux_ok(strux_sparse_blocks_init(&other, N, 4));
    blob.pos = 0;
    assert_strux_ok(strux_sparse_blocks_load(&other, 10, 30, P, &blob));
    for (int64_t i = 0; i < N; i++) {
        assert_int_equal(other.len[i], i >= 10 && i < 30 ? sb.len[i] : 0);
        for (int32_t q = 0; q < other.len[i]; q++) {
            assert_int_equal(other.idx[other.start[i] + q], sb.idx[sb.start[i] + q]);
            assert_true(other.val[other.start[i] + q] == sb.val[sb.start[i] + q]);
        }
    }
    /* a list longer than its block, or out of order, is refused */
    blob.pos = 0;
    assert_int_equal(strux_sparse_blocks_load(&other, 10, 30, 2, &blob), STRUX_ERR_INPUT);
    strux_blob_free(&blob);
    strux_blob bad = {0};
    int32_t two = 2, rev[2] = {5, 3};
    double v2[2] = {1, 1};
    assert_strux_ok(strux_blob_put(&bad, &two, sizeof two));
    assert_strux_ok(strux_blob_put(&bad, rev, sizeof rev));
    assert_strux_ok(strux_blob_put(&bad, v2, sizeof v2));
    bad.pos = 0;
    assert_int_equal(strux_sparse_blocks_load(&other, 0, 1, P, &bad), STRUX_ERR_INPUT);
    assert_non_null(strstr(strux_error_message(), "out of order"));
    strux_error_clear();
    strux_blob_free(&bad);
    strux_sparse_blocks_free(&other);
    strux_sparse_blocks_free(&sb);
}

int main(int argc, char **argv)
{
    if (strux_comm_init(&argc, &argv, &comm) != STRUX_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_active_coordinates),  cmocka_unit_test(test_coordinate_rule),
        cmocka_unit_test(test_box_alpha),
        cmocka_unit_test(test_epoch_end_per_label), cmocka_unit_test(test_levels_in_step),
        cmocka_unit_test(test_epoch_end_coupled),
        cmocka_unit_test(test_pg_tol),              cmocka_unit_test(test_state_round_trip),
        cmocka_unit_test(test_sparse_lists),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    strux_comm_finalize(&comm);
    return rc;
}
