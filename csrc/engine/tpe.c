/*
 * tpe.c -- a multivariate Tree-structured Parzen Estimator.
 *
 * References: J. Bergstra, R. Bardenet, Y. Bengio, B. Kegl, "Algorithms for
 * hyper-parameter optimization", NeurIPS 2011; S. Falkner, A. Klein, F. Hutter,
 * "BOHB", ICML 2018 (the multivariate kernel density); S. Watanabe, "Tree-structured
 * Parzen estimator: understanding its algorithm components", 2023 (the defaults).
 *
 * After `startup` uniform points (0: max(10, 2 d); a start point given to the run
 * takes the first), each row of a batch splits the
 * points told so far at the quantile: the n_good = min(ceil(gamma N), 25) best are
 * "good", the rest "bad" (values as the driver tells them: with constraints the
 * feasibility rule already ranks infeasible rows after feasible ones; NaN last).
 * Each group is a Parzen estimator over the unit cube: an equal-weight mixture of
 * one kernel per point and a prior kernel (the uniform distribution).  A kernel
 * is a product over coordinates of Gaussians truncated to [0, 1] with the group's
 * bandwidth per coordinate, Scott's rule sigma_j = std_j n^{-1/(d+4)} on the
 * group's own spread, at least 0.5 N^{-1/(d+4)} times the spread of all N points
 * (about Optuna's 0.2 N^{-1/(d+4)} of the box while the points are spread out;
 * narrower floors let the good group collapse onto itself: the 4-D sphere at
 * 400 trials, medians of 4 seeds, ends at 6.6e-4 with 0.5, 1.1 with 0.2 and 6.2
 * with 0.05), clipped to [min_bandwidth, 1].  The floor also limits how finely
 * tpe resolves a minimum (the 4-D sphere: 7e-4 at 400 trials and still at 3,000):
 * it is a global sampler, not a local method;
 * an integer or discrete coordinate with at most 16 values uses an
 * Aitchison-Aitken kernel (its own cell with probability 1 - h, h = 0.2, the rest
 * spread evenly) and with more values the Gaussian, snapped to the cell.
 * `candidates` points are drawn from the good estimator l(x) and the one with the
 * largest l(x) / g(x) is asked; when every coordinate is integer or discrete, a draw
 * equal to a point told before is drawn again (up to 20 times, while points are
 * left: values are taken as deterministic, and duplicates stall the estimators).  A batch of several rows (option `batch`, or the
 * caller's hint dc_batch.want) takes each chosen row into the bad group at once
 * (a constant liar: the worst value), so the rows spread out.  O(N d) per
 * candidate; it never converges (the budget, clock or target end the run).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

enum { OPT_BATCH, OPT_STARTUP, OPT_GAMMA, OPT_CANDIDATES, OPT_MIN_BW, N_OPTIONS };

static const dc_option_info options[N_OPTIONS] = {
    {"batch", 1, 1, 65536, 1, "points per batch (a caller's hint overrides it)"},
    {"startup", 0, 0, 1e9, 1, "uniform random points first; 0 = max(10, 2 d)"},
    {"gamma", 0.1, 0.01, 0.5, 0, "the good quantile (at most 25 good points)"},
    {"candidates", 24, 1, 10000, 1, "candidates drawn from l(x) per point"},
    {"min_bandwidth", 1e-9, 0, 0.5, 0, "the smallest kernel width (fraction of the box)"},
};

static const dc_engine_info info = {
    "tpe", "Tree-structured Parzen Estimator",
    "Multivariate TPE: Parzen estimators of the good and the bad points, candidates from "
    "the good one ranked by their density ratio; cheap per point, for hundreds to thousands "
    "of trials and integer or discrete variables.",
    "model", 0, options, N_OPTIONS,
    DC_SUPPORTS_CONSTRAINTS | DC_SUPPORTS_INTEGERS | DC_SUPPORTS_X0};

#define MAX_GOOD 25
#define CAT_LEVELS 16
#define CAT_H 0.2
#define FLOOR_MAGNITUDE 0.5 /* of the kernels' smallest width (see above) */
#define LOG_SQRT_2PI 0.91893853320467274178

typedef struct ranked {
    double v;
    size_t i;
} ranked;

/* a group's estimator: member rows, bandwidths and each kernel's log normalizer */
typedef struct group {
    size_t *rows, n, cap;
    double *sigma;   /* m */
    double *inv_sigma; /* m */
    double *lognorm; /* cap: sum over continuous coordinates of -log(sqrt(2 pi) sigma Z) */
} group;

typedef struct state {
    size_t n, m, *free_idx;
    double *lev;          /* m */
    const dc_allocator *alloc;
    dc_rng *rng;
    size_t batch, startup, n_cand;
    int all_discrete;     /* every free coordinate is integer or discrete */
    double cells;         /* ... and the points there are (capped at 1e18) */
    double gamma, min_bw;
    double *H, *hy;       /* told points (free coordinates), values; then believed rows */
    size_t hn, hcap;
    ranked *order;        /* hcap */
    double *lk;           /* hcap: kernel log densities (scratch) */
    double *cat_same, *cat_other; /* m: a categorical kernel's log density, own cell or
                                     another (relative to the uniform); 0 otherwise */
    group good, bad;
    double *cand, *score; /* n_cand x m, n_cand */
    double *U, *f;        /* rows_cap x n */
    double *xs;           /* m: a start point (seed_point) for the next startup row */
    int seeded;
    size_t rows_cap;
} state;

static int group_init(group *g, const dc_allocator *a, size_t m)
{
    g->sigma = dc_mem_alloc(a, (m ? m : 1) * sizeof(double));
    g->inv_sigma = dc_mem_alloc(a, (m ? m : 1) * sizeof(double));
    return g->sigma != NULL && g->inv_sigma != NULL;
}

static void group_free(group *g, const dc_allocator *a, size_t m)
{
    dc_mem_free(a, g->rows, g->cap * sizeof(size_t));
    dc_mem_free(a, g->lognorm, g->cap * sizeof(double));
    dc_mem_free(a, g->sigma, (m ? m : 1) * sizeof(double));
    dc_mem_free(a, g->inv_sigma, (m ? m : 1) * sizeof(double));
    g->rows = NULL;
    g->lognorm = NULL;
    g->cap = 0;
}

/* room for cap members (the history's capacity) */
static int group_reserve(group *g, const dc_allocator *a, size_t cap)
{
    size_t *rows;
    double *ln;
    if (cap <= g->cap)
        return 1;
    rows = dc_mem_alloc(a, cap * sizeof(size_t));
    ln = dc_mem_alloc(a, cap * sizeof(double));
    if (!rows || !ln) {
        dc_mem_free(a, rows, cap * sizeof(size_t));
        dc_mem_free(a, ln, cap * sizeof(double));
        return 0;
    }
    dc_mem_free(a, g->rows, g->cap * sizeof(size_t));
    dc_mem_free(a, g->lognorm, g->cap * sizeof(double));
    g->rows = rows;
    g->lognorm = ln;
    g->cap = cap;
    g->n = 0;
    return 1;
}

static dc_status init(void *sp, const dc_problem *pb, const double *prm)
{
    state *s = sp;
    size_t j, m;
    s->n = pb->n;
    s->alloc = pb->alloc;
    s->rng = pb->rng;
    s->batch = (size_t)prm[OPT_BATCH];
    s->gamma = prm[OPT_GAMMA];
    s->n_cand = (size_t)prm[OPT_CANDIDATES];
    s->min_bw = prm[OPT_MIN_BW];
    s->free_idx = dc_mem_alloc(s->alloc, (s->n ? s->n : 1) * sizeof(size_t));
    if (!s->free_idx)
        return DC_ERR_NOMEM;
    for (j = 0; j < s->n; j++)
        if (!pb->fixed[j])
            s->free_idx[s->m++] = j;
    m = s->m;
    s->startup = prm[OPT_STARTUP] > 0 ? (size_t)prm[OPT_STARTUP] : (2 * m > 10 ? 2 * m : 10);
    s->lev = dc_mem_calloc(s->alloc, m + 1, sizeof(double));
    s->cat_same = dc_mem_calloc(s->alloc, m + 1, sizeof(double));
    s->cat_other = dc_mem_calloc(s->alloc, m + 1, sizeof(double));
    s->cand = dc_mem_alloc(s->alloc, s->n_cand * (m + 1) * sizeof(double));
    s->score = dc_mem_alloc(s->alloc, s->n_cand * sizeof(double));
    s->xs = dc_mem_alloc(s->alloc, (m + 1) * sizeof(double));
    if (!s->xs || !s->lev || !s->cat_same || !s->cat_other || !s->cand || !s->score || !group_init(&s->good, s->alloc, m) ||
        !group_init(&s->bad, s->alloc, m))
        return DC_ERR_NOMEM;
    s->all_discrete = m > 0 && pb->levels != NULL;
    s->cells = 1.0;
    for (j = 0; j < m && pb->levels; j++) {
        double lv = pb->levels[s->free_idx[j]];
        s->all_discrete &= lv > 0.0;
        s->cells = s->cells * lv < 1e18 ? s->cells * lv : 1e18;
        s->lev[j] = lv;
        if (lv > 1.0 && lv <= CAT_LEVELS) {
            s->cat_same[j] = log(1.0 - CAT_H) + log(lv);
            s->cat_other[j] = log(CAT_H / (lv - 1.0)) + log(lv);
        }
    }
    return DC_OK;
}

static int grow_rows(state *s, size_t rows)
{
    size_t k;
    if (rows <= s->rows_cap)
        return 1;
    dc_mem_free(s->alloc, s->U, s->rows_cap * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->f, s->rows_cap * sizeof(double));
    s->rows_cap = 0;
    s->f = NULL;
    if (!dc_mul_size(rows, s->n, &k) || !dc_mul_size(k, sizeof(double), &k)) {
        s->U = NULL;
        return 0;
    }
    s->U = dc_mem_alloc(s->alloc, rows * s->n * sizeof(double));
    s->f = dc_mem_alloc(s->alloc, rows * sizeof(double));
    if (!s->U || !s->f) {
        dc_mem_free(s->alloc, s->U, rows * s->n * sizeof(double));
        dc_mem_free(s->alloc, s->f, rows * sizeof(double));
        s->U = s->f = NULL;
        return 0;
    }
    s->rows_cap = rows;
    for (k = 0; k < rows * s->n; k++)
        s->U[k] = 0.5; /* fixed coordinates keep this; the driver uses the bound */
    return 1;
}

/* room for need told (or believed) points: every history array has hcap rows */
static int grow_history(state *s, size_t need)
{
    size_t cap = s->hcap, m = s->m ? s->m : 1, nc = cap ? cap : 64;
    double *H, *hy, *lk;
    ranked *order;
    if (need <= cap)
        return 1;
    while (nc < need)
        nc *= 2;
    H = dc_mem_alloc(s->alloc, nc * m * sizeof(double));
    hy = dc_mem_alloc(s->alloc, nc * sizeof(double));
    lk = dc_mem_alloc(s->alloc, nc * sizeof(double));
    order = dc_mem_alloc(s->alloc, nc * sizeof(ranked));
    if (!H || !hy || !lk || !order || !group_reserve(&s->good, s->alloc, nc) ||
        !group_reserve(&s->bad, s->alloc, nc)) {
        dc_mem_free(s->alloc, H, nc * m * sizeof(double));
        dc_mem_free(s->alloc, hy, nc * sizeof(double));
        dc_mem_free(s->alloc, lk, nc * sizeof(double));
        dc_mem_free(s->alloc, order, nc * sizeof(ranked));
        return 0;
    }
    if (s->hn) {
        memcpy(H, s->H, s->hn * m * sizeof(double));
        memcpy(hy, s->hy, s->hn * sizeof(double));
    }
    dc_mem_free(s->alloc, s->H, cap * m * sizeof(double));
    dc_mem_free(s->alloc, s->hy, cap * sizeof(double));
    dc_mem_free(s->alloc, s->lk, cap * sizeof(double));
    dc_mem_free(s->alloc, s->order, cap * sizeof(ranked));
    s->H = H;
    s->hy = hy;
    s->lk = lk;
    s->order = order;
    s->hcap = nc;
    return 1;
}

static double snap(const state *s, size_t q, double u)
{
    double lv = s->lev[q];
    u = !(u >= 0.0) ? 0.0 : u > 1.0 ? 1.0 : u;
    if (lv > 0.0) {
        double c = floor(u * lv);
        c = c > lv - 1.0 ? lv - 1.0 : c;
        return (c + 0.5) / lv;
    }
    return u;
}

static int categorical(const state *s, size_t q)
{
    return s->cat_same[q] != 0.0;
}

static int by_value(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (dc_better(x->v, y->v))
        return -1;
    if (dc_better(y->v, x->v))
        return 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static double std_normal_cdf(double z)
{
    return 0.5 * erfc(-z * 0.70710678118654752440);
}

/* the group's bandwidths (Scott's rule on its own spread) and kernel normalizers */
static double spread(const state *s, const size_t *rows, size_t n, size_t q)
{
    size_t k, m = s->m;
    double mean = 0.0, var = 0.0;
    if (n < 2)
        return 0.5;
    for (k = 0; k < n; k++)
        mean += s->H[(rows ? rows[k] : k) * m + q];
    mean /= (double)n;
    for (k = 0; k < n; k++) {
        double t = s->H[(rows ? rows[k] : k) * m + q] - mean;
        var += t * t;
    }
    return sqrt(var / (double)(n - 1));
}

static void fit_group(state *s, group *g, size_t total)
{
    size_t q, k, m = s->m;
    double nn = (double)(g->n ? g->n : 1), shrink = pow(nn, -1.0 / ((double)m + 4.0));
    double floor_shrink = FLOOR_MAGNITUDE * pow((double)total, -1.0 / ((double)m + 4.0));
    for (q = 0; q < m; q++) {
        double sd = spread(s, g->rows, g->n, q) * shrink;
        double lo = spread(s, NULL, total, q) * floor_shrink;
        sd = sd > lo ? sd : lo;
        if (s->lev[q] > 0.0 && sd < 0.5 / s->lev[q])
            sd = 0.5 / s->lev[q];
        g->sigma[q] = sd < s->min_bw ? s->min_bw : sd > 1.0 ? 1.0 : sd;
        if (!(g->sigma[q] > 0.0))
            g->sigma[q] = 1e-12;
        g->inv_sigma[q] = 1.0 / g->sigma[q];
    }
    {
        double base = 0.0; /* the normalizers of kernels away from the box's faces */
        for (q = 0; q < m; q++)
            if (!categorical(s, q))
                base -= log(g->sigma[q]) + LOG_SQRT_2PI;
        for (k = 0; k < g->n; k++) {
            const double *x = s->H + g->rows[k] * m;
            double ln = base;
            for (q = 0; q < m; q++) {
                double sg = g->sigma[q], z;
                if (categorical(s, q) || (x[q] > 9.0 * sg && 1.0 - x[q] > 9.0 * sg))
                    continue; /* the mass outside [0, 1] is below 1e-18 */
                z = std_normal_cdf((1.0 - x[q]) / sg) - std_normal_cdf(-x[q] / sg);
                ln -= log(z > 1e-300 ? z : 1e-300);
            }
            g->lognorm[k] = ln;
        }
    }
}

/* log of the group's mixture density at u (the prior: the uniform density, 1) */
static double log_density(const state *s, const group *g, const double *u)
{
    size_t k, q, m = s->m;
    double mx = 0.0, sum = 0.0;
    for (k = 0; k < g->n; k++) {
        const double *x = s->H + g->rows[k] * m;
        double l = g->lognorm[k], z2 = 0.0;
        for (q = 0; q < m; q++) {
            if (s->cat_same[q] != 0.0) {
                double lv = s->lev[q];
                l += floor(u[q] * lv) == floor(x[q] * lv) ? s->cat_same[q] : s->cat_other[q];
            } else {
                double z = (u[q] - x[q]) * g->inv_sigma[q];
                z2 += z * z;
            }
        }
        l -= 0.5 * z2;
        s->lk[k] = l;
        if (l > mx)
            mx = l;
    }
    for (k = 0; k < g->n; k++) /* kernels below 1e-16 of the largest add nothing */
        if (s->lk[k] - mx > -37.0)
            sum += exp(s->lk[k] - mx);
    sum += exp(-mx); /* the prior kernel */
    return mx + log(sum) - log((double)g->n + 1.0);
}

/* a draw from a truncated normal on [0, 1] (rejection; uniform after 32 misses) */
static double truncated(dc_rng *rng, double mu, double sd)
{
    int k;
    for (k = 0; k < 32; k++) {
        double v = mu + sd * dc_rng_normal(rng);
        if (v >= 0.0 && v <= 1.0)
            return v;
    }
    return dc_rng_uniform(rng);
}

/* a sample of l(x): a kernel (or the prior) chosen at random, then each coordinate */
static void sample_good(state *s, double *u)
{
    size_t q, m = s->m, k = (size_t)dc_rng_below(s->rng, s->good.n + 1);
    if (k == s->good.n) {
        for (q = 0; q < m; q++)
            u[q] = snap(s, q, dc_rng_uniform(s->rng));
        return;
    }
    {
        const double *x = s->H + s->good.rows[k] * m;
        for (q = 0; q < m; q++) {
            if (categorical(s, q)) {
                double lv = s->lev[q];
                if (dc_rng_uniform(s->rng) < CAT_H) { /* another cell */
                    size_t own = (size_t)floor(x[q] * lv), c = (size_t)dc_rng_below(s->rng, (uint64_t)lv - 1);
                    c += c >= own;
                    u[q] = ((double)c + 0.5) / lv;
                } else {
                    u[q] = x[q];
                }
            } else {
                u[q] = snap(s, q, truncated(s->rng, x[q], s->good.sigma[q]));
            }
        }
    }
}

/* u is one of the first k points of the history */
static int seen_before(const state *s, const double *u, size_t k)
{
    size_t i;
    for (i = 0; i < k; i++)
        if (memcmp(s->H + i * s->m, u, s->m * sizeof(double)) == 0)
            return 1;
    return 0;
}

/* split the points (and the rows believed so far: at the end, worst) */
static void split(state *s, size_t total)
{
    size_t i, ng;
    for (i = 0; i < total; i++) {
        s->order[i].v = i < s->hn ? s->hy[i] : INFINITY;
        s->order[i].i = i;
    }
    qsort(s->order, total, sizeof(ranked), by_value);
    ng = (size_t)ceil(s->gamma * (double)total);
    ng = ng < 1 ? 1 : ng > MAX_GOOD ? MAX_GOOD : ng;
    if (ng > total)
        ng = total;
    s->good.n = ng;
    s->bad.n = total - ng;
    for (i = 0; i < ng; i++)
        s->good.rows[i] = s->order[i].i;
    for (i = ng; i < total; i++)
        s->bad.rows[i - ng] = s->order[i].i;
    fit_group(s, &s->good, total);
    fit_group(s, &s->bad, total);
}

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    size_t rows = b->want ? b->want : s->batch, r, q, m = s->m, c;
    if (!grow_rows(s, rows))
        return DC_ERR_NOMEM;
    b->kind = DC_ASK_POINTS;
    b->U = s->U;
    b->f = s->f;
    b->rows = rows;
    if (m == 0) {
        b->rows = 1;
        return DC_OK;
    }
    if (s->hn < s->startup) {
        for (r = 0; r < rows; r++)
            for (q = 0; q < m; q++)
                s->U[r * s->n + s->free_idx[q]] = snap(s, q, dc_rng_uniform(s->rng));
        if (s->seeded) { /* the given start point first */
            for (q = 0; q < m; q++)
                s->U[s->free_idx[q]] = snap(s, q, s->xs[q]);
            s->seeded = 0;
        }
        return DC_OK;
    }
    /* believed rows are stored past the told ones (they are overwritten by tell) */
    if (!grow_history(s, s->hn + rows))
        return DC_ERR_NOMEM;
    for (r = 0; r < rows; r++) {
        double best = -INFINITY;
        size_t pick = 0;
        split(s, s->hn + r);
        for (c = 0; c < s->n_cand; c++) {
            double *u = s->cand + c * m;
            int tries = 0;
            do /* all discrete: a point told before would tell nothing new */
                sample_good(s, u);
            while (s->all_discrete && (double)(s->hn + r) < s->cells && ++tries < 20 &&
                   seen_before(s, u, s->hn + r));
            s->score[c] = log_density(s, &s->good, u) - log_density(s, &s->bad, u);
            if (s->score[c] > best || c == 0) {
                best = s->score[c];
                pick = c;
            }
        }
        for (q = 0; q < m; q++) {
            s->U[r * s->n + s->free_idx[q]] = s->cand[pick * m + q];
            s->H[(s->hn + r) * m + q] = s->cand[pick * m + q]; /* the liar */
        }
    }
    return DC_OK;
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    size_t r, q, m = s->m;
    if (m == 0)
        return DC_OK;
    if (!grow_history(s, s->hn + b->rows))
        return DC_ERR_NOMEM;
    for (r = 0; r < b->rows; r++) {
        const double *u = b->U + r * s->n;
        for (q = 0; q < m; q++)
            s->H[s->hn * m + q] = u[s->free_idx[q]];
        s->hy[s->hn] = b->f[r];
        s->hn++;
    }
    return DC_OK;
}

static dc_stop stop(const void *sp)
{
    (void)sp;
    return DC_STOP_NONE;
}

static void release(void *sp)
{
    state *s = sp;
    size_t m = s->m;
    group_free(&s->good, s->alloc, m);
    group_free(&s->bad, s->alloc, m);
    dc_mem_free(s->alloc, s->free_idx, (s->n ? s->n : 1) * sizeof(size_t));
    dc_mem_free(s->alloc, s->lev, (m + 1) * sizeof(double));
    dc_mem_free(s->alloc, s->xs, (m + 1) * sizeof(double));
    dc_mem_free(s->alloc, s->cat_same, (m + 1) * sizeof(double));
    dc_mem_free(s->alloc, s->cat_other, (m + 1) * sizeof(double));
    dc_mem_free(s->alloc, s->lk, s->hcap * sizeof(double));
    dc_mem_free(s->alloc, s->cand, s->n_cand * (m + 1) * sizeof(double));
    dc_mem_free(s->alloc, s->score, s->n_cand * sizeof(double));
    dc_mem_free(s->alloc, s->H, s->hcap * (m ? m : 1) * sizeof(double));
    dc_mem_free(s->alloc, s->hy, s->hcap * sizeof(double));
    dc_mem_free(s->alloc, s->order, s->hcap * sizeof(ranked));
    dc_mem_free(s->alloc, s->U, s->rows_cap * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->f, s->rows_cap * sizeof(double));
}

/* The next startup row is u (a start point given to the run; evaluated again). */
static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    size_t q;
    for (q = 0; q < s->m; q++)
        s->xs[q] = u[s->free_idx[q]];
    s->seeded = s->m > 0 && s->hn < s->startup;
    return DC_OK;
}

const dc_engine_vt dc_eng_tpe = {&info, sizeof(state), init, ask, tell, stop, release, seed_point};
