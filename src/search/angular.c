/* search/angular.c - angular search with the constrained λ-oracle (slack_bicriteria.md §3.6,
 * Algorithm 2, the robust version): exact slack rescaling max_y h·g, h = 1 + m, g = L.
 * An angle is the wedge of rays with slope ρ = g/h between β and α, each side open or closed
 * (A2). Splitting an angle at weight λ: z = O_c(λ, α, β), z' = (λg, h/λ), R on the ray 1/λ; every
 * label of the angle better than z has slope strictly between ρ(z) and ρ(z') (Lemma 8), so the
 * children are (ρQ, ρR) and [ρR, ρP) with z's ray excluded and the R-ray in one child only (A4),
 * both clipped to the parent. Both inherit the bound K(λ)²/4λ (Lemma 5 inside the wedge, A6).
 * Departures from the paper's listing, all from the spec: no early return at a tangent point
 * (A3), a priority queue by bound or FIFO (A5), the 0.999 stop checked against the largest bound
 * left (A7), a degenerate root answer split at the ray 1/λ0 (A8), λ0 = Ĥ/Ĝ (A1) with Ĥ from one
 * O(0) call and Ĝ = the task's largest loss (strux_task_max_loss), a label cache per example;
 * with surrogate.warm_start, λ0 is instead the tangent weight of the best cached label. */
#include "search_impl.h"

#include <math.h>
#include <string.h>

#define ANGULAR_TANGENT_TOL 1e-12 /* |h − λg| below this relative size: z is the tangent point */

typedef struct angle {
    double alpha, beta;         /* slope bounds, alpha may be INFINITY */
    int lower_open, upper_open; /* strictness of the β and α sides */
    double ub;                  /* bound on Φ inside the angle */
} angle;

typedef struct angular_data {
    angle *q; /* queue storage: priority heap or FIFO array */
    int64_t q_cap;
    int fifo;
    strux_label_pool cache; /* n_local × cache_size labels */
    int32_t *n_cached;      /* per example */
    int32_t *next_slot;     /* per example: ring position of the next insertion */
    int64_t cache_size;
} angular_data;

typedef struct queue {
    angle *a;
    int64_t head, n; /* FIFO: live entries a[head..n); heap: a[0..n) */
    int fifo;
} queue;

static void queue_push(queue *Q, angle x)
{
    if (Q->fifo) {
        Q->a[Q->n++] = x;
        return;
    }
    int64_t c = Q->n++;
    while (c > 0 && Q->a[(c - 1) / 2].ub < x.ub) {
        Q->a[c] = Q->a[(c - 1) / 2];
        c = (c - 1) / 2;
    }
    Q->a[c] = x;
}

static int queue_empty(const queue *Q)
{
    return Q->fifo ? Q->head >= Q->n : Q->n == 0;
}

static angle queue_pop(queue *Q)
{
    if (Q->fifo) return Q->a[Q->head++];
    angle top = Q->a[0], last = Q->a[--Q->n];
    int64_t c = 0;
    for (;;) {
        int64_t l = 2 * c + 1;
        if (l >= Q->n) break;
        if (l + 1 < Q->n && Q->a[l + 1].ub > Q->a[l].ub) l++;
        if (Q->a[l].ub <= last.ub) break;
        Q->a[c] = Q->a[l];
        c = l;
    }
    if (Q->n > 0) Q->a[c] = last;
    return top;
}

/* Largest bound among the queued angles (−INFINITY when empty). */
static double queue_max_ub(const queue *Q)
{
    if (queue_empty(Q)) return -INFINITY;
    if (!Q->fifo) return Q->a[0].ub;
    double m = -INFINITY;
    for (int64_t k = Q->head; k < Q->n; k++)
        m = fmax(m, Q->a[k].ub);
    return m;
}

/* The part of parent between slopes lo and hi (sides open as given unless the parent's side is
 * the tighter one); pushed if non-empty and able to beat the best value found by more than the
 * stop tolerance, else its bound goes into *ub_dropped (it stays part of the certificate). */
static void push_child(queue *Q, const angle *parent, double lo, int lo_open, double hi,
                       int hi_open, double ub, double phi_best, double eps, double *ub_dropped)
{
    angle c = *parent;
    c.ub = ub;
    if (lo > parent->beta) {
        c.beta = lo;
        c.lower_open = lo_open;
    } else if (lo == parent->beta) {
        c.lower_open = parent->lower_open || lo_open;
    }
    if (hi < parent->alpha) {
        c.alpha = hi;
        c.upper_open = hi_open;
    } else if (hi == parent->alpha) {
        c.upper_open = parent->upper_open || hi_open;
    }
    if (c.alpha < c.beta || (c.alpha == c.beta && (c.lower_open || c.upper_open))) return;
    if (phi_best >= (1 - eps) * ub) {
        *ub_dropped = fmax(*ub_dropped, ub);
        return;
    }
    queue_push(Q, c);
}

static strux_status angular_run(strux_search *s, strux_task *t, const strux_pot *pot,
                                const strux_label *truth, strux_search_result *r)
{
    angular_data *d = s->data;
    const double eps = s->opt.eps;
    const int64_t i = pot->i;
    strux_plane_begin(s, t, truth);
    /* best so far: the truth (Φ = 0), then the cached labels re-scored under the current w */
    strux_point best;
    strux_plane_eval(s, t, pot, truth, truth, &best);
    STRUX_TRY(strux_label_copy(&s->y, truth));
    double phi_best = 0;
    for (int32_t k = 0; k < d->n_cached[i]; k++) {
        const strux_label *c = &d->cache.slot[i * d->cache_size + k];
        strux_point p;
        strux_plane_eval(s, t, pot, truth, c, &p);
        if (p.h * p.g > phi_best) {
            phi_best = p.h * p.g;
            best = p;
            STRUX_TRY(strux_label_copy(&s->y, c));
        }
    }
    /* λ0: the tangent weight h/g of the best cached label when warm-starting (a label still
     * optimal then certifies itself in one call: K(λ0)²/4λ0 = hg), else Ĥ/Ĝ (A1) with
     * Ĥ = K(0) = 1 + max m from one O(0) call and Ĝ = the task's largest loss (strux_task_max_loss)
     */
    strux_point p;
    int found;
    strux_query q;
    double lambda0;
    if (s->opt.warm_start && phi_best > 0) {
        lambda0 = best.h / best.g;
    } else {
        q = strux_plane_query(&s->u, 1.0, 0.0);
        STRUX_TRY(strux_plane_call(s, t, pot, truth, &q, &s->scratch, &p, &found));
        double G_hat = strux_task_max_loss(t, truth);
        lambda0 = (found && p.h > 0 ? p.h : 1.0) / G_hat;
        if (found && p.h * p.g > phi_best) {
            phi_best = p.h * p.g;
            best = p;
            STRUX_TRY(strux_label_copy(&s->y, &s->scratch));
        }
    }
    queue Q = {d->q, 0, 0, d->fifo};
    queue_push(&Q, (angle){INFINITY, 0.0, 0, 0, INFINITY});
    double ub_left = -INFINITY; /* bounds of angles dropped unexplored (stop tolerance) */
    while (!queue_empty(&Q)) {
        if (s->calls >= s->opt.max_calls) break;
        if (Q.fifo && phi_best >= (1 - eps) * queue_max_ub(&Q)) break;
        angle a = queue_pop(&Q);
        if (phi_best >= (1 - eps) * a.ub) { /* priority: the popped ub is the largest left */
            ub_left = fmax(ub_left, a.ub);
            if (!Q.fifo) break;
            continue;
        }
        double lambda = (a.beta == 0 || isinf(a.alpha)) ? lambda0 : 1.0 / sqrt(a.alpha * a.beta);
        q = strux_plane_query(&s->u, 1.0, lambda);
        q.wedge = 1;
        q.alpha = a.alpha;
        q.beta = a.beta;
        q.lower_open = a.lower_open;
        q.upper_open = a.upper_open;
        STRUX_TRY(strux_plane_call(s, t, pot, truth, &q, &s->scratch, &p, &found));
        if (!found) continue; /* the wedge holds no label */
        double h = p.h, g = p.g;
        if (h * g > phi_best) {
            phi_best = h * g;
            best = p;
            STRUX_TRY(strux_label_copy(&s->y, &s->scratch));
        }
        double K = h + lambda * g;
        double ub = fmin(a.ub, K > 0 ? K * K / (4 * lambda) : 0.0);
        double rho_r = 1.0 / lambda;
        if (h <= 0 || g <= 0) { /* A8: z has no usable slope; cut at the ray 1/λ and exclude z */
            push_child(&Q, &a, rho_r, 0, a.alpha, h <= 0, ub, phi_best, eps, &ub_left);
            push_child(&Q, &a, a.beta, g <= 0, rho_r, 1, ub, phi_best, eps, &ub_left);
            continue;
        }
        if (fabs(h - lambda * g) <= ANGULAR_TANGENT_TOL * fmax(h, lambda * g))
            continue; /* z is the tangent point: nothing in this angle beats it (A3) */
        double rho_z = g / h, rho_zp = h / (lambda * lambda * g);
        if (rho_z > rho_zp) {
            push_child(&Q, &a, rho_r, 0, rho_z, 1, ub, phi_best, eps, &ub_left);
            push_child(&Q, &a, rho_zp, 1, rho_r, 1, ub, phi_best, eps, &ub_left);
        } else {
            push_child(&Q, &a, rho_r, 0, rho_zp, 1, ub, phi_best, eps, &ub_left);
            push_child(&Q, &a, rho_z, 1, rho_r, 1, ub, phi_best, eps, &ub_left);
        }
    }
    double ub = fmax(phi_best, fmax(ub_left, queue_max_ub(&Q)));
    /* remember the answer for the next visit (ring of cache_size distinct labels) */
    if (d->cache_size > 0 && phi_best > 0) {
        int dup = 0;
        for (int32_t k = 0; k < d->n_cached[i] && !dup; k++)
            dup = strux_label_equal(&d->cache.slot[i * d->cache_size + k], &s->y);
        if (!dup) {
            int32_t slot = d->next_slot[i];
            STRUX_TRY(strux_label_copy(&d->cache.slot[i * d->cache_size + slot], &s->y));
            d->next_slot[i] = (int32_t)((slot + 1) % d->cache_size);
            if (d->n_cached[i] < d->cache_size) d->n_cached[i]++;
        }
    }
    return strux_search_answer(s, &s->y, &best, ub, r);
}

static void angular_destroy(strux_search *s)
{
    angular_data *d = s->data;
    if (!d) return;
    strux_free(&d->q);
    strux_label_pool_free(&d->cache);
    strux_free(&d->n_cached);
    strux_free(&d->next_slot);
    strux_free(&s->data);
}

static strux_status angular_save(const strux_search *s, int64_t i0, int64_t i1, strux_blob *b)
{
    const angular_data *d = s->data;
    size_t n = (size_t)(i1 - i0);
    STRUX_TRY(strux_label_pool_save(&d->cache, i0 * d->cache_size, (i1 - i0) * d->cache_size, b));
    STRUX_TRY(strux_blob_put(b, d->n_cached + i0, n * sizeof *d->n_cached));
    return strux_blob_put(b, d->next_slot + i0, n * sizeof *d->next_slot);
}

static strux_status angular_load(strux_search *s, int64_t i0, int64_t i1, strux_blob *b)
{
    angular_data *d = s->data;
    size_t n = (size_t)(i1 - i0);
    STRUX_TRY(strux_label_pool_load(&d->cache, i0 * d->cache_size, (i1 - i0) * d->cache_size, b));
    STRUX_TRY(strux_blob_get(b, d->n_cached + i0, n * sizeof *d->n_cached, "cache"));
    return strux_blob_get(b, d->next_slot + i0, n * sizeof *d->next_slot, "cache");
}

static const struct strux_search_ops angular_ops = {
    .run = angular_run, .destroy = angular_destroy, .save = angular_save, .load = angular_load};

strux_status strux_search_create_angular(const strux_search_options *opt, const strux_task *t,
                                         const strux_dataset *ds, strux_search *s)
{
    angular_data *d;
    STRUX_TRY(strux_alloc(&d, sizeof *d));
    s->data = d;
    s->ops = &angular_ops;
    d->fifo = strcmp(opt->queue, "fifo") == 0;
    /* every call pushes at most two angles, and one root: 2·max_calls + 1 entries */
    d->q_cap = 2 * s->opt.max_calls + 1;
    STRUX_TRY(strux_alloc_array(&d->q, (size_t)d->q_cap, sizeof *d->q));
    d->cache_size = opt->cache;
    int64_t n = ds->n_local;
    STRUX_TRY(strux_label_pool_create(&d->cache, n * d->cache_size, t, ds));
    STRUX_TRY(strux_alloc_array(&d->n_cached, (size_t)(n > 0 ? n : 1), sizeof *d->n_cached));
    STRUX_TRY(strux_alloc_array(&d->next_slot, (size_t)(n > 0 ? n : 1), sizeof *d->next_slot));
    return STRUX_OK;
}
