/* data/synth_hier.c - synthetic hierarchical data (`strux gen --shape`, data.h): a label
 * hierarchy with node ids 0..M−1 (root 0, parents before children) and rows drawn one at a time,
 * each keyed by (seed, global row) alone, so a set is the same however it is split. Four shapes:
 *   balanced   (hierarchical.md §7.2 B) a complete binary tree of K levels (root = level 1, A11:
 *              weights for all 2^K − 1 nodes), W_n ~ N(0, I_D) per node, x ~ N(0, I_D) not
 *              normalised, label l = argmax_l Σ_{n∈Ā(l)} W_n·x, no label noise;
 *   unbalanced (§7.2 U) x ~ N(0, I_D) rescaled to unit ℓ2 norm; C hyperplane cuts through the
 *              origin with normals ~ N(0, I_D); cut k sends its negative side to a leaf and its
 *              positive side on to cut k + 1 (the last cut's positive side is a leaf): 2C + 1
 *              nodes, C + 1 leaves; x goes to the leaf of its region;
 *   random     a random recursive tree of M nodes (each node's parent uniform among the earlier
 *              ones, optionally among those above a depth bound), plus P extra parent edges from
 *              earlier to later nodes (a DAG); sparse rows of K distinct Zipf-popular features
 *              with tf-idf values and unit norm; planted node weights (each feature has N(0, 1)
 *              weights for 8 random non-root nodes); labels: the argmax leaf of the path score
 *              Σ_{n∈Ā(l)} W*_n·x and, for R > 1 labels per row, every leaf whose path score
 *              passes a threshold calibrated on a sample so that rows average R leaves;
 *   swiki      the shape of LSHTC's SWIKI-2011 (hierarchical.md §7.1; issue 19): 50,312 nodes,
 *              36,504 leaves, 456,886 documents, 346,299 features, each times --scale. Its
 *              statistics and the reasons for them are in the comment above setup_swiki.
 * Labels: closures without the root for balanced, unbalanced and random (as the shared
 * hierarchical .svm files); leaves only for swiki (as LSHTC files). Not a reader or writer: the
 * CLI (cli/gen_shape.c) writes the hierarchy and the rows. Knows nothing of MPI or files. */
#include "data_impl.h"
#include "strux/hierarchy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RANDOM_FAN 8           /* random: planted node weights per feature */
#define RANDOM_ZIPF 1.0        /* random: P(feature rank r) ∝ (r + 1)^-1, Zipf's law */
#define CALIB_ENTRIES (1 << 20) /* random: leaf scores held while calibrating the threshold */
#define CALIB_ROWS_MIN 256
#define CALIB_ROWS_MAX 4096
#define DRAWS_PER_NNZ 64 /* random, swiki: a row stops after 64·K + 1024 draws (never in practice) */
#define SWIKI_ZIPF 1.3 /* swiki: P(feature rank r) ∝ (r + 1)^-1.3 (see setup_swiki) */
#define SWIKI_TOPIC 0.4   /* swiki: share of a document's draws from its nodes' keywords */
#define SWIKI_KEYWORDS 10 /* swiki: keywords per non-root node */
#define SWIKI_STOPWORDS 100 /* swiki: the most popular feature ranks, never keywords */
#define SWIKI_LEN_SIGMA 0.5 /* swiki: document non-zeros log-normal, σ of the log */
#define SWIKI_NNZ_CAP 8     /* swiki: at most 8 × the mean non-zeros per document */
#define SWIKI_LABEL_ZIPF 0.8 /* swiki: leaf of popularity rank r drawn ∝ (r + 1)^-0.8 */
#define SWIKI_SIBLING 0.5    /* swiki: a further leaf is a sibling of the first with this chance */
#define SWIKI_MULTI 0.05     /* swiki: share of non-root nodes with extra parents */
#define SWIKI_MORE_PARENTS 0.25 /* swiki: chance of one more extra parent after each */

/* One purpose per RNG stream (seed, stream, index). */
enum {
    STREAM_TREE = 1, /* the hierarchy (index 0) */
    STREAM_MODEL,    /* balanced: W_n (index n); unbalanced: normal of cut k; random: feature r */
    STREAM_ROW,      /* global row i */
    STREAM_CALIB,    /* random: calibration row i */
    STREAM_SCATTER,  /* random, swiki: the vocabulary's columns */
    STREAM_LABELS,   /* swiki: leaf popularity ranks (index 0) */
    STREAM_KEYWORDS  /* swiki: node n's keywords (index n) */
};

struct strux_hier_gen {
    strux_hier_gen_options o;
    strux_hier_gen_info info;
    int64_t *parent, *child; /* [n_edges] file ids, in file order */
    strux_hierarchy *h;      /* built from the edges (node indices by depth, then id) */
    double *W;       /* balanced: M × D by node index; unbalanced: C × D normals */
    strux_vocab vocab;        /* random, swiki */
    strux_planted *plant;     /* random: D × RANDOM_FAN, by feature rank */
    double tau;               /* random: path-score threshold for leaves beyond the argmax */
    strux_alias leaf_pop;     /* swiki: over leaf positions */
    int32_t *keyword;         /* swiki: [M × SWIKI_KEYWORDS] feature ranks by node index */
    /* row scratch, sized at create */
    double *s;          /* [M] node scores by index */
    double *path;       /* [L] leaf path scores */
    float *x;           /* [D] balanced, unbalanced: the dense row */
    int64_t *mark;      /* [D] random, swiki: stamp of the row that drew rank r */
    int32_t *tf;        /* [D] term count of rank r in the current row */
    int64_t stamp;
    uint64_t *key;      /* [max_nnz] column << 32 | rank */
    unsigned char *cmark; /* [M] closure scratch (zero between calls) */
    int32_t *set;       /* [M] a closure, node indices */
    int64_t *ids;       /* [M] file ids */
};

strux_status strux_hier_gen_options_check(const strux_hier_gen_options *o)
{
    STRUX_TRY(strux_gen_check_rows(o->n_rows, o->first_row));
    switch (o->shape) {
    case STRUX_SHAPE_BALANCED:
        STRUX_CHECK(o->depth >= 2 && o->depth <= 20, STRUX_ERR_CONFIG,
                    "gen: depth = %d; a balanced tree needs 2 to 20 levels (root = level 1)",
                    o->depth);
        break;
    case STRUX_SHAPE_UNBALANCED:
        STRUX_CHECK(o->cuts >= 1 && o->cuts <= 100000, STRUX_ERR_CONFIG,
                    "gen: cuts = %d; it must be in [1, 100000]", o->cuts);
        break;
    case STRUX_SHAPE_RANDOM:
        STRUX_CHECK(o->n_nodes >= 3 && o->n_nodes <= (1 << 28), STRUX_ERR_CONFIG,
                    "gen: nodes = %d; it must be in [3, %d]", o->n_nodes, 1 << 28);
        STRUX_CHECK(o->depth == 0 || o->depth >= 2, STRUX_ERR_CONFIG,
                    "gen: depth = %d; a random tree needs at least 2 levels (root = level 1)",
                    o->depth);
        {
            int64_t m = o->n_nodes, most = (m - 1) * (m - 2) / 2;
            if (most > 10 * m) most = 10 * m;
            STRUX_CHECK(o->extra_parents >= 0 && o->extra_parents <= most, STRUX_ERR_CONFIG,
                        "gen: extra parents = %lld; with %d nodes it must be in [0, %lld] (at "
                        "most 10 per node, each between two nodes not yet joined)",
                        (long long)o->extra_parents, o->n_nodes, (long long)most);
        }
        break;
    case STRUX_SHAPE_SWIKI:
        STRUX_CHECK(o->scale >= 0.01 && o->scale <= 1, STRUX_ERR_CONFIG,
                    "gen: scale = %g; it must be in [0.01, 1]", o->scale);
        break;
    default:
        return strux_error_set(STRUX_ERR_CONFIG, __FILE__, __LINE__, __func__,
                               "gen: unknown shape %d", (int)o->shape);
    }
    int32_t dim = o->shape == STRUX_SHAPE_SWIKI ? strux_hier_gen_swiki_size(STRUX_SWIKI_FEATURES,
                                                                             o->scale)
                                                : o->dim;
    STRUX_CHECK(dim > 0 && dim < INT32_MAX, STRUX_ERR_CONFIG,
                "gen: features = %d; it must be in [1, %d] (one column is kept for the bias)", dim,
                INT32_MAX - 1);
    if (o->shape == STRUX_SHAPE_RANDOM || o->shape == STRUX_SHAPE_SWIKI) {
        STRUX_CHECK(o->nnz >= 1 && o->nnz <= dim / 2, STRUX_ERR_CONFIG,
                    "gen: nnz = %d; it must be in [1, features / 2 = %d] (distinct features are "
                    "drawn by popularity until a row has them)",
                    o->nnz, dim / 2);
        STRUX_CHECK(isfinite(o->labels_per_row) && o->labels_per_row >= 1 &&
                        o->labels_per_row <= 32,
                    STRUX_ERR_CONFIG, "gen: labels per row = %g; it must be in [1, 32]",
                    o->labels_per_row);
    }
    return STRUX_OK;
}

int32_t strux_hier_gen_swiki_size(int64_t full, double scale)
{
    return (int32_t)llround((double)full * scale);
}

/* ---- hierarchies: edges into g->parent/child, then g->h ---- */

static strux_status alloc_edges(strux_hier_gen *g, int64_t n)
{
    STRUX_TRY(strux_alloc_array(&g->parent, (size_t)n, sizeof *g->parent));
    STRUX_TRY(strux_alloc_array(&g->child, (size_t)n, sizeof *g->child));
    return STRUX_OK;
}

static void add_edge(strux_hier_gen *g, int64_t p, int64_t c)
{
    g->parent[g->info.n_edges] = p;
    g->child[g->info.n_edges++] = c;
}

/* Balanced: heap numbering, node n's children 2n + 1 and 2n + 2. */
static strux_status edges_balanced(strux_hier_gen *g)
{
    int32_t M = (1 << g->o.depth) - 1;
    STRUX_TRY(alloc_edges(g, M - 1));
    for (int32_t n = 1; n < M; n++)
        add_edge(g, (n - 1) / 2, n);
    return STRUX_OK;
}

/* Unbalanced: cut k (1-based) sits at node 0 (k = 1) or 2(k − 1); its negative side is leaf
 * 2k − 1, its positive side node 2k. */
static strux_status edges_unbalanced(strux_hier_gen *g)
{
    int32_t C = g->o.cuts;
    STRUX_TRY(alloc_edges(g, 2 * (int64_t)C));
    for (int32_t k = 1; k <= C; k++) {
        int32_t at = k == 1 ? 0 : 2 * (k - 1);
        add_edge(g, at, 2 * k - 1);
        add_edge(g, at, 2 * k);
    }
    return STRUX_OK;
}

/* Extra parent edges p → c (p < c, so edges keep ascending ids and the graph stays acyclic),
 * appended after the M − 1 tree edges (edge c − 1 is c's tree edge). pick draws edge k's pair
 * (ctx: its data); a pair that repeats an edge is drawn again. */
typedef void (*pick_fn)(const strux_hier_gen *g, const int64_t *ctx, strux_rng *r, int64_t k,
                        int64_t *p, int64_t *c);

static strux_status add_extra_parents(strux_hier_gen *g, strux_rng *r, int64_t n_extra,
                                      pick_fn pick, const int64_t *ctx)
{
    int64_t M = g->info.n_nodes, E = g->info.n_edges + n_extra;
    int64_t *link = NULL; /* [M] last extra edge of child c, then [E] the one before edge e */
    STRUX_TRY(strux_alloc_array(&link, (size_t)(M + E), sizeof *link));
    for (int64_t i = 0; i < M + E; i++)
        link[i] = -1;
    for (int64_t k = 0; k < n_extra; k++) {
        int64_t p, c, e;
        for (;;) {
            pick(g, ctx, r, k, &p, &c);
            for (e = link[c]; e >= 0 && g->parent[e] != p; e = link[M + e]) {}
            if (e < 0 && g->parent[c - 1] != p) break;
        }
        e = g->info.n_edges;
        link[M + e] = link[c];
        link[c] = e;
        add_edge(g, p, c);
    }
    strux_free(&link);
    return STRUX_OK;
}

/* Random: c uniform in [2, M) (node 1's only possible parent is the root), p uniform in [0, c). */
static void pick_random(const strux_hier_gen *g, const int64_t *ctx, strux_rng *r, int64_t k,
                        int64_t *p, int64_t *c)
{
    (void)ctx, (void)k;
    *c = 2 + (int64_t)strux_rng_below(r, (uint64_t)g->info.n_nodes - 2);
    *p = (int64_t)strux_rng_below(r, (uint64_t)*c);
}

/* Random: node k's parent uniform among the earlier nodes above the depth bound. */
static strux_status edges_random(strux_hier_gen *g)
{
    int32_t M = g->o.n_nodes, K = g->o.depth > 0 ? g->o.depth : INT32_MAX;
    int32_t *depth = NULL, *open = NULL; /* open: nodes that may take a child */
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, alloc_edges(g, M - 1 + g->o.extra_parents), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&depth, (size_t)M, sizeof *depth), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&open, (size_t)M, sizeof *open), done);
    strux_rng r;
    strux_rng_init(&r, g->o.seed, STREAM_TREE, 0);
    depth[0] = 1;
    int32_t n_open = 1;
    for (int32_t k = 1; k < M; k++) {
        int32_t p = open[strux_rng_below(&r, (uint64_t)n_open)];
        depth[k] = depth[p] + 1;
        add_edge(g, p, k);
        if (depth[k] < K) open[n_open++] = k;
    }
    STRUX_TRY_GOTO(st, add_extra_parents(g, &r, g->o.extra_parents, pick_random, NULL), done);
done:
    strux_free(&depth);
    strux_free(&open);
    return st;
}

/* Swiki: the issue asks for the statistics of a Wikipedia category graph at LSHTC's sizes. What
 * is built, and why:
 *   - I = M − L internal nodes 0..I−1 form a random recursive tree (each one's parent uniform
 *     among the earlier ones): depth grows like ln I (about 10 levels at full size) and few nodes
 *     are shallow; in the real graph only 1,512 of 50,312 nodes lie within depth 5 (the thesis's
 *     SWIKI d5, Table 6-2), about 3%;
 *   - leaves I..M−1: first one under each internal node that has no internal child (so that it
 *     stays internal), the rest by preferential attachment (an internal node takes the next leaf
 *     with probability ∝ its leaves + 1), which gives category sizes a power-law tail;
 *   - extra parents: each node but the root and node 1 has them with probability SWIKI_MULTI (5%),
 *     one, then each further one with probability SWIKI_MORE_PARENTS, drawn uniformly among the
 *     internal nodes created before it (leaves: among all internal nodes): most nodes keep one
 *     parent, a few percent have two or more, and edges keep ascending ids (acyclic).
 * strux gen logs the resulting depth and parent statistics (README, hierarchy section). */
static void pick_swiki(const strux_hier_gen *g, const int64_t *extra_child, strux_rng *r,
                       int64_t k, int64_t *p, int64_t *c)
{
    int64_t I = g->info.n_nodes - g->info.n_leaves;
    *c = extra_child[k];
    *p = (int64_t)strux_rng_below(r, (uint64_t)(*c < I ? *c : I));
}

static strux_status edges_swiki(strux_hier_gen *g)
{
    int64_t M = g->info.n_nodes, L = g->info.n_leaves, I = M - L;
    int64_t *kids = NULL, *urn = NULL, *extra_child = NULL;
    strux_status st = STRUX_OK;
    strux_rng r;
    strux_rng_init(&r, g->o.seed, STREAM_TREE, 0);
    /* who gets extra parents first: their number sizes the edge arrays */
    int64_t n_extra = 0, cap = 0;
    for (int64_t c = 2; c < M; c++)
        if (strux_rng_uniform(&r) < SWIKI_MULTI) {
            int64_t most = (c < I ? c : I) - 1; /* candidates besides the tree parent */
            int64_t n = 1;
            while (n < most && strux_rng_uniform(&r) < SWIKI_MORE_PARENTS)
                n++;
            if (n_extra + n > cap) {
                int64_t want = 2 * cap + n + 1024;
                STRUX_TRY_GOTO(st, strux_realloc_array(&extra_child, (size_t)want,
                                                       sizeof *extra_child),
                               done);
                cap = want;
            }
            for (int64_t t = 0; t < n; t++)
                extra_child[n_extra++] = c;
        }
    STRUX_TRY_GOTO(st, alloc_edges(g, M - 1 + n_extra), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&kids, (size_t)I, sizeof *kids), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&urn, (size_t)L, sizeof *urn), done);
    for (int64_t k = 1; k < I; k++) {
        int64_t p = (int64_t)strux_rng_below(&r, (uint64_t)k);
        kids[p]++;
        add_edge(g, p, k);
    }
    int64_t n_urn = 0, leaf = I;
    for (int64_t p = 0; p < I; p++)
        if (kids[p] == 0) {
            add_edge(g, p, leaf++);
            urn[n_urn++] = p;
        }
    for (; leaf < M; leaf++) {
        /* P(p) ∝ leaves(p) + 1: uniform with probability I / (I + n_urn), else a past choice */
        uint64_t u = strux_rng_below(&r, (uint64_t)(I + n_urn));
        int64_t p = (int64_t)u < I ? (int64_t)u : urn[(int64_t)u - I];
        add_edge(g, p, leaf);
        urn[n_urn++] = p;
    }
    STRUX_TRY_GOTO(st, add_extra_parents(g, &r, n_extra, pick_swiki, extra_child), done);
done:
    strux_free(&kids);
    strux_free(&urn);
    strux_free(&extra_child);
    return st;
}

/* ---- the models ---- */

/* d standard normals of stream (seed, stream, index) into out (double or float). */
static void normals(uint64_t seed, uint64_t stream, uint64_t index, int32_t d, double *out,
                    float *out_f)
{
    strux_rng r;
    strux_rng_init(&r, seed, stream, index);
    for (int32_t j = 0; j < d; j++) {
        double z = strux_rng_normal(&r);
        if (out) out[j] = z;
        if (out_f) out_f[j] = (float)z;
    }
}

/* Balanced: W_n ~ N(0, I_D) by file id n, stored by node index. Unbalanced: cut k's normal. */
static strux_status setup_dense(strux_hier_gen *g)
{
    int64_t D = g->info.dim;
    int64_t rows = g->o.shape == STRUX_SHAPE_BALANCED ? g->info.n_nodes : g->o.cuts;
    STRUX_TRY(strux_alloc_array(&g->W, (size_t)(rows * D), sizeof *g->W));
    STRUX_TRY(strux_alloc_array(&g->x, (size_t)D, sizeof *g->x));
    for (int64_t k = 0; k < rows; k++) {
        int64_t at = g->o.shape == STRUX_SHAPE_BALANCED ? strux_hierarchy_find(g->h, k) : k;
        normals(g->o.seed, STREAM_MODEL, (uint64_t)k, (int32_t)D, g->W + at * D, NULL);
    }
    return STRUX_OK;
}

/* Random: feature rank r has N(0, 1) weights for RANDOM_FAN distinct non-root nodes (the root
 * weight cancels in every margin; with fewer nodes the spare slots stay on the root at 0). */
static void plant_feature(strux_hier_gen *g, int64_t rank)
{
    strux_rng r;
    strux_rng_init(&r, g->o.seed, STREAM_MODEL, (uint64_t)rank);
    int32_t M = g->info.n_nodes, fan = M - 1 < RANDOM_FAN ? M - 1 : RANDOM_FAN;
    strux_plant_draw(&r, 1, M - 1, fan, g->plant + rank * RANDOM_FAN);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Distinct features of one row, drawn until the row has `want` of them (or after
 * DRAWS_PER_NNZ·want + 1024 draws): each draw is, with probability topic, a keyword of a node
 * of set (n_set node indices: swiki), else a rank by popularity; a repeat adds to the term count.
 * x_j = (1 + ln tf)·idf(rank), then x /= ‖x‖, columns ascending. Returns the non-zeros. */
static int32_t draw_words(strux_hier_gen *g, strux_rng *r, int32_t want, const int32_t *set,
                          int32_t n_set, double topic, int32_t *col, float *val)
{
    int64_t stamp = ++g->stamp, limit = (int64_t)DRAWS_PER_NNZ * want + 1024;
    int32_t have = 0;
    for (int64_t t = 0; have < want && t < limit; t++) {
        int64_t rank;
        if (n_set > 0 && strux_rng_uniform(r) < topic) {
            int32_t node = set[strux_rng_below(r, (uint64_t)n_set)];
            rank = g->keyword[(int64_t)node * SWIKI_KEYWORDS +
                              (int64_t)strux_rng_below(r, SWIKI_KEYWORDS)];
        } else {
            rank = strux_alias_draw(&g->vocab.popularity, r);
        }
        if (g->mark[rank] == stamp) {
            g->tf[rank]++;
            continue;
        }
        g->mark[rank] = stamp;
        g->tf[rank] = 1;
        g->key[have++] = (uint64_t)g->vocab.column[rank] << 32 | (uint64_t)rank;
    }
    strux_sort_keys(g->key, have);
    double norm2 = 0;
    for (int32_t p = 0; p < have; p++) {
        int64_t rank = (int64_t)(g->key[p] & 0xffffffffu);
        double v = (1.0 + log((double)g->tf[rank])) * g->vocab.idf[rank];
        col[p] = (int32_t)(g->key[p] >> 32);
        val[p] = (float)v;
        norm2 += v * v;
    }
    double inv = 1.0 / sqrt(norm2);
    for (int32_t p = 0; p < have; p++)
        val[p] = (float)(val[p] * inv);
    return have;
}

/* g->path[q] = Σ_{n∈Ā(leaf q)} g->s[n]; returns the argmax position (ties: the first). */
static int32_t path_scores(strux_hier_gen *g)
{
    const strux_hierarchy *h = g->h;
    int32_t best = 0;
    for (int32_t q = 0; q < h->n_leaves; q++) {
        double v = 0;
        for (int64_t a = h->anc_ptr[q]; a < h->anc_ptr[q + 1]; a++)
            v += g->s[h->anc_idx[a]];
        g->path[q] = v;
        if (v > g->path[best]) best = q;
    }
    return best;
}

/* Random: node scores s = W* x of the row just drawn (ranks in g->key, values in val). */
static void random_scores(strux_hier_gen *g, int32_t nnz, const float *val)
{
    memset(g->s, 0, (size_t)g->info.n_nodes * sizeof *g->s);
    for (int32_t p = 0; p < nnz; p++) {
        const strux_planted *pl = g->plant + (int64_t)(g->key[p] & 0xffffffffu) * RANDOM_FAN;
        for (int32_t f = 0; f < RANDOM_FAN; f++)
            g->s[pl[f].k] += (double)val[p] * pl[f].w;
    }
}

/* Random with R > 1 labels per row: τ such that a row has on average R − 1 leaves besides the
 * argmax with path score above τ, from a sample of rows of the calibration stream. τ stays
 * positive: leaves no planted weight reaches (score 0) never join, so a tree too small for R
 * gives fewer (the log line of strux gen shows the mean). */
static strux_status calibrate_random(strux_hier_gen *g, int32_t *col, float *val)
{
    int64_t L = g->h->n_leaves;
    int64_t S = CALIB_ENTRIES / L;
    S = S < CALIB_ROWS_MIN ? CALIB_ROWS_MIN : S > CALIB_ROWS_MAX ? CALIB_ROWS_MAX : S;
    double *v = NULL;
    STRUX_TRY(strux_alloc_array(&v, (size_t)(S * (L - 1)) + 1, sizeof *v));
    int64_t n = 0;
    for (int64_t i = 0; i < S; i++) {
        strux_rng r;
        strux_rng_init(&r, g->o.seed, STREAM_CALIB, (uint64_t)i);
        int32_t nnz = draw_words(g, &r, g->o.nnz, NULL, 0, 0, col, val);
        random_scores(g, nnz, val);
        int32_t best = path_scores(g);
        for (int32_t q = 0; q < L; q++)
            if (q != best) v[n++] = g->path[q];
    }
    qsort(v, (size_t)n, sizeof *v, cmp_desc);
    int64_t m = llround((g->o.labels_per_row - 1) * (double)S);
    if (m > n) m = n;
    g->tau = m == 0 ? v[0] : m == n ? v[n - 1] : 0.5 * (v[m - 1] + v[m]);
    if (!(g->tau > 0)) {
        double smallest = INFINITY; /* the smallest positive sample score */
        for (int64_t k = 0; k < n; k++)
            if (v[k] > 0 && v[k] < smallest) smallest = v[k];
        g->tau = isfinite(smallest) ? smallest : INFINITY;
    }
    strux_free(&v);
    return STRUX_OK;
}

static strux_status setup_random(strux_hier_gen *g)
{
    int32_t D = g->info.dim;
    STRUX_TRY(strux_vocab_build(&g->vocab, D, RANDOM_ZIPF, g->o.seed, STREAM_SCATTER));
    STRUX_TRY(strux_alloc_array(&g->plant, (size_t)D * RANDOM_FAN, sizeof *g->plant));
    for (int64_t rank = 0; rank < D; rank++)
        plant_feature(g, rank);
    if (g->o.labels_per_row > 1) {
        int32_t *col = NULL;
        float *val = NULL;
        strux_status st = strux_alloc_array(&col, (size_t)g->info.max_nnz, sizeof *col);
        if (st == STRUX_OK) st = strux_alloc_array(&val, (size_t)g->info.max_nnz, sizeof *val);
        if (st == STRUX_OK) st = calibrate_random(g, col, val);
        strux_free(&col);
        strux_free(&val);
        STRUX_TRY(st);
    }
    return STRUX_OK;
}

/* Swiki: the vocabulary (Zipf document frequencies); leaf popularity ranks by a random
 * permutation, leaf of rank r drawn ∝ (r + 1)^-SWIKI_LABEL_ZIPF; SWIKI_KEYWORDS keyword ranks per
 * non-root node, by popularity among the ranks past the SWIKI_STOPWORDS most popular (so that
 * document frequencies stay Zipf-like), distinct within a node. */
static strux_status setup_swiki(strux_hier_gen *g)
{
    const strux_hierarchy *h = g->h;
    int32_t M = h->n_nodes, L = h->n_leaves, D = g->info.dim;
    int32_t stop = D / 4 < SWIKI_STOPWORDS ? D / 4 : SWIKI_STOPWORDS;
    STRUX_TRY(strux_vocab_build(&g->vocab, D, SWIKI_ZIPF, g->o.seed, STREAM_SCATTER));
    int64_t *rank = NULL;
    double *w = NULL;
    strux_status st = STRUX_OK;
    STRUX_TRY_GOTO(st, strux_alloc_array(&rank, (size_t)L, sizeof *rank), done);
    STRUX_TRY_GOTO(st, strux_alloc_array(&w, (size_t)L, sizeof *w), done);
    strux_rng r;
    strux_rng_init(&r, g->o.seed, STREAM_LABELS, 0);
    strux_rng_permutation(&r, rank, L);
    for (int32_t q = 0; q < L; q++)
        w[q] = pow((double)rank[q] + 1.0, -SWIKI_LABEL_ZIPF);
    STRUX_TRY_GOTO(st, strux_alias_build(&g->leaf_pop, w, L), done);
    STRUX_TRY_GOTO(st,
                   strux_alloc_array(&g->keyword, (size_t)M * SWIKI_KEYWORDS, sizeof *g->keyword),
                   done);
    for (int32_t k = 1; k < M; k++) {
        int32_t *kw = g->keyword + (int64_t)k * SWIKI_KEYWORDS;
        strux_rng_init(&r, g->o.seed, STREAM_KEYWORDS, (uint64_t)h->node_id[k]);
        for (int32_t t = 0; t < SWIKI_KEYWORDS; t++) {
            int fresh;
            do {
                kw[t] = (int32_t)strux_alias_draw(&g->vocab.popularity, &r);
                fresh = kw[t] >= stop;
                for (int32_t e = 0; e < t && fresh; e++)
                    fresh = kw[e] != kw[t];
            } while (!fresh);
        }
    }
done:
    strux_free(&rank);
    strux_free(&w);
    return st;
}

/* ---- rows ---- */

/* The closure of the leaves at positions q[0..n): its node indices (root included) into g->set,
 * *n_set of them, and when labels is not NULL, the closure without the root as ascending file
 * ids into labels (*n_labels of them). */
static strux_status closure_ids(strux_hier_gen *g, const int32_t *q, int32_t n, int32_t *labels,
                                int32_t *n_labels, int32_t *n_set)
{
    const strux_hierarchy *h = g->h;
    for (int32_t t = 0; t < n; t++)
        g->ids[t] = h->node_id[h->leaves[q[t]]];
    STRUX_TRY(strux_hierarchy_closure(h, "generated", 0, n, g->ids, g->cmark, g->set, n_set));
    if (!labels) return STRUX_OK;
    int32_t m = 0;
    for (int32_t t = 0; t < *n_set; t++)
        if (g->set[t] != 0) g->ids[m++] = h->node_id[g->set[t]];
    qsort(g->ids, (size_t)m, sizeof *g->ids, cmp_i64);
    for (int32_t t = 0; t < m; t++)
        labels[t] = (int32_t)g->ids[t];
    *n_labels = m;
    return STRUX_OK;
}

static void dense_row(strux_hier_gen *g, int64_t row, int32_t *col, float *val)
{
    int32_t D = g->info.dim;
    normals(g->o.seed, STREAM_ROW, (uint64_t)row, D, NULL, g->x);
    if (g->o.shape == STRUX_SHAPE_UNBALANCED) { /* §7.2 U step 1: unit ℓ2 norm */
        double norm2 = 0;
        for (int32_t j = 0; j < D; j++)
            norm2 += (double)g->x[j] * g->x[j];
        double inv = 1.0 / sqrt(norm2);
        for (int32_t j = 0; j < D; j++)
            g->x[j] = (float)(g->x[j] * inv);
    }
    for (int32_t j = 0; j < D; j++) {
        col[j] = j;
        val[j] = g->x[j];
    }
}

static double dot(const double *w, const float *x, int32_t d)
{
    double v = 0;
    for (int32_t j = 0; j < d; j++)
        v += w[j] * x[j];
    return v;
}

/* Poisson(mean) by Knuth's product of uniforms (small means only). */
static int32_t poisson(strux_rng *r, double mean)
{
    double limit = exp(-mean), p = strux_rng_uniform(r);
    int32_t k = 0;
    while (p > limit) {
        p *= strux_rng_uniform(r);
        k++;
    }
    return k;
}

/* Swiki: 1 + Poisson(R − 1) distinct leaves (at most STRUX_SWIKI_LABELS_MAX): the first by
 * popularity, each further one with probability SWIKI_SIBLING a child of a parent of the first
 * (when that child is a leaf not taken yet), else by popularity. Positions into q; returns n. */
static int32_t swiki_leaves(strux_hier_gen *g, strux_rng *r, int32_t *q)
{
    const strux_hierarchy *h = g->h;
    int32_t want = 1 + poisson(r, g->o.labels_per_row - 1);
    if (want > STRUX_SWIKI_LABELS_MAX) want = STRUX_SWIKI_LABELS_MAX;
    if (want > h->n_leaves) want = h->n_leaves;
    q[0] = (int32_t)strux_alias_draw(&g->leaf_pop, r);
    int32_t n = 1, first = h->leaves[q[0]];
    while (n < want) {
        int32_t cand;
        if (strux_rng_uniform(r) < SWIKI_SIBLING) {
            int64_t np = h->parent_ptr[first + 1] - h->parent_ptr[first];
            int32_t p = h->parent_idx[h->parent_ptr[first] + (int64_t)strux_rng_below(r, (uint64_t)np)];
            int64_t nc = h->child_ptr[p + 1] - h->child_ptr[p];
            cand = h->leaf_pos[h->child_idx[h->child_ptr[p] + (int64_t)strux_rng_below(r, (uint64_t)nc)]];
        } else {
            cand = (int32_t)strux_alias_draw(&g->leaf_pop, r);
        }
        int fresh = cand >= 0;
        for (int32_t t = 0; t < n && fresh; t++)
            fresh = q[t] != cand;
        if (fresh) q[n++] = cand;
    }
    return n;
}

strux_status strux_hier_gen_row(strux_hier_gen *g, int64_t row, int32_t *col, float *val,
                                int32_t *nnz, int32_t *labels, int32_t *n_labels)
{
    const strux_hierarchy *h = g->h;
    int32_t D = g->info.dim, n_set = 0;
    int32_t *q = g->set + h->n_nodes; /* leaf positions: the second half of the scratch */
    strux_rng r;
    strux_rng_init(&r, g->o.seed, STREAM_ROW, (uint64_t)row);
    switch (g->o.shape) {
    case STRUX_SHAPE_BALANCED:
        dense_row(g, row, col, val);
        *nnz = D;
        for (int32_t k = 0; k < h->n_nodes; k++)
            g->s[k] = dot(g->W + (int64_t)k * D, g->x, D);
        q[0] = path_scores(g);
        return closure_ids(g, q, 1, labels, n_labels, &n_set);
    case STRUX_SHAPE_UNBALANCED: {
        dense_row(g, row, col, val);
        *nnz = D;
        int32_t k = 1, C = g->o.cuts;
        while (k <= C && dot(g->W + (int64_t)(k - 1) * D, g->x, D) >= 0)
            k++;
        int64_t leaf = k <= C ? 2 * k - 1 : 2 * C; /* negative side of cut k, or the last region */
        q[0] = h->leaf_pos[strux_hierarchy_find(h, leaf)];
        return closure_ids(g, q, 1, labels, n_labels, &n_set);
    }
    case STRUX_SHAPE_RANDOM: {
        *nnz = draw_words(g, &r, g->o.nnz, NULL, 0, 0, col, val);
        random_scores(g, *nnz, val);
        int32_t best = path_scores(g), n = 0;
        q[n++] = best;
        if (g->o.labels_per_row > 1)
            for (int32_t t = 0; t < h->n_leaves; t++)
                if (t != best && g->path[t] > g->tau) q[n++] = t;
        return closure_ids(g, q, n, labels, n_labels, &n_set);
    }
    case STRUX_SHAPE_SWIKI: {
        int32_t n = swiki_leaves(g, &r, q);
        STRUX_TRY(closure_ids(g, q, n, NULL, NULL, &n_set));
        /* LSHTC files hold the leaves only */
        for (int32_t t = 0; t < n; t++)
            g->ids[t] = h->node_id[h->leaves[q[t]]];
        qsort(g->ids, (size_t)n, sizeof *g->ids, cmp_i64);
        for (int32_t t = 0; t < n; t++)
            labels[t] = (int32_t)g->ids[t];
        *n_labels = n;
        /* the topic nodes: the closure without the root */
        int32_t m = 0;
        for (int32_t t = 0; t < n_set; t++)
            if (g->set[t] != 0) g->set[m++] = g->set[t];
        double z = strux_rng_normal(&r);
        double len = (double)g->o.nnz * exp(SWIKI_LEN_SIGMA * z - 0.5 * SWIKI_LEN_SIGMA * SWIKI_LEN_SIGMA);
        int64_t want = llround(len);
        if (want < 1) want = 1;
        if (want > g->info.max_nnz) want = g->info.max_nnz;
        *nnz = draw_words(g, &r, (int32_t)want, g->set, m, SWIKI_TOPIC, col, val);
        return STRUX_OK;
    }
    }
    return strux_error_set(STRUX_ERR_INTERNAL, __FILE__, __LINE__, __func__, "unknown shape");
}

/* ---- life cycle ---- */

void strux_hier_gen_destroy(strux_hier_gen **gp)
{
    strux_hier_gen *g = *gp;
    if (!g) return;
    strux_free(&g->parent);
    strux_free(&g->child);
    strux_hierarchy_destroy(&g->h);
    strux_free(&g->W);
    strux_vocab_free(&g->vocab);
    strux_free(&g->plant);
    strux_alias_free(&g->leaf_pop);
    strux_free(&g->keyword);
    strux_free(&g->s);
    strux_free(&g->path);
    strux_free(&g->x);
    strux_free(&g->mark);
    strux_free(&g->tf);
    strux_free(&g->key);
    strux_free(&g->cmark);
    strux_free(&g->set);
    strux_free(&g->ids);
    strux_free(gp);
}

static strux_status create(strux_hier_gen *g)
{
    const strux_hier_gen_options *o = &g->o;
    strux_hier_gen_info *in = &g->info;
    switch (o->shape) {
    case STRUX_SHAPE_BALANCED:
        in->n_nodes = (1 << o->depth) - 1;
        in->dim = o->dim;
        STRUX_TRY(edges_balanced(g));
        break;
    case STRUX_SHAPE_UNBALANCED:
        in->n_nodes = 2 * o->cuts + 1;
        in->dim = o->dim;
        STRUX_TRY(edges_unbalanced(g));
        break;
    case STRUX_SHAPE_RANDOM:
        in->n_nodes = o->n_nodes;
        in->dim = o->dim;
        STRUX_TRY(edges_random(g));
        break;
    case STRUX_SHAPE_SWIKI:
        in->n_nodes = strux_hier_gen_swiki_size(STRUX_SWIKI_NODES, o->scale);
        in->n_leaves = strux_hier_gen_swiki_size(STRUX_SWIKI_LEAVES, o->scale);
        in->dim = strux_hier_gen_swiki_size(STRUX_SWIKI_FEATURES, o->scale);
        STRUX_TRY(edges_swiki(g));
        break;
    }
    STRUX_TRY(strux_hierarchy_from_edges("generated", in->n_edges, g->parent, g->child, NULL, NULL,
                                         &g->h));
    const strux_hierarchy *h = g->h;
    STRUX_CHECK(h->n_nodes == in->n_nodes && !h->virtual_root, STRUX_ERR_INTERNAL,
                "generated hierarchy: %d nodes, expected %d", h->n_nodes, in->n_nodes);
    in->n_leaves = h->n_leaves;
    in->parent = g->parent;
    in->child = g->child;
    in->h = h;
    int32_t M = h->n_nodes, L = h->n_leaves, D = in->dim;
    in->closures = o->shape != STRUX_SHAPE_SWIKI;
    in->max_labels = in->closures ? M - 1 : STRUX_SWIKI_LABELS_MAX;
    in->max_nnz = o->shape == STRUX_SHAPE_RANDOM ? o->nnz
                  : o->shape == STRUX_SHAPE_SWIKI
                      ? (SWIKI_NNZ_CAP * o->nnz < D / 2 ? SWIKI_NNZ_CAP * o->nnz : D / 2)
                      : D;
    if (o->shape == STRUX_SHAPE_RANDOM)
        STRUX_CHECK(o->labels_per_row <= 0.5 * L, STRUX_ERR_CONFIG,
                    "gen: labels per row = %g; the random tree has %d leaves, so at most %g",
                    o->labels_per_row, L, 0.5 * L);
    STRUX_TRY(strux_alloc_array(&g->s, (size_t)M, sizeof *g->s));
    STRUX_TRY(strux_alloc_array(&g->path, (size_t)L, sizeof *g->path));
    STRUX_TRY(strux_alloc_array(&g->cmark, (size_t)M, sizeof *g->cmark));
    STRUX_TRY(strux_alloc_array(&g->set, 2 * (size_t)M, sizeof *g->set));
    STRUX_TRY(strux_alloc_array(&g->ids, (size_t)M, sizeof *g->ids));
    if (o->shape == STRUX_SHAPE_RANDOM || o->shape == STRUX_SHAPE_SWIKI) {
        STRUX_TRY(strux_alloc_array(&g->mark, (size_t)D, sizeof *g->mark));
        STRUX_TRY(strux_alloc_array(&g->tf, (size_t)D, sizeof *g->tf));
        STRUX_TRY(strux_alloc_array(&g->key, (size_t)in->max_nnz, sizeof *g->key));
    }
    switch (o->shape) {
    case STRUX_SHAPE_BALANCED:
    case STRUX_SHAPE_UNBALANCED:
        return setup_dense(g);
    case STRUX_SHAPE_RANDOM:
        return setup_random(g);
    case STRUX_SHAPE_SWIKI:
        return setup_swiki(g);
    }
    return STRUX_OK;
}

strux_status strux_hier_gen_create(const strux_hier_gen_options *o, strux_hier_gen **out)
{
    *out = NULL;
    STRUX_TRY(strux_hier_gen_options_check(o));
    strux_hier_gen *g = NULL;
    STRUX_TRY(strux_alloc(&g, sizeof *g));
    g->o = *o;
    strux_status st = create(g);
    if (st != STRUX_OK) {
        strux_hier_gen_destroy(&g);
        return strux_error_frame(st, __FILE__, __LINE__, __func__);
    }
    *out = g;
    return STRUX_OK;
}

const strux_hier_gen_info *strux_hier_gen_get_info(const strux_hier_gen *g)
{
    return &g->info;
}
