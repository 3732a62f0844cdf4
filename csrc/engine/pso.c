/*
 * pso.c -- particle swarm optimization, Standard PSO 2011 (SPSO-2011).
 *
 * References: M. Clerc, "Standard Particle Swarm Optimisation", technical
 * report, 2012 (hal-00764996), and M. Zambrano-Bigiarini, M. Clerc,
 * R. Rojas, "Standard Particle Swarm Optimisation 2011 at CEC-2013: a
 * baseline for future PSO improvements", IEEE CEC 2013.
 *
 * The swarm lives in the unit cube.  Each particle i has a position x_i, a
 * velocity v_i, and the best position it has visited, p_i (value pf_i).
 *
 *   start     x_i uniform in the cube, v_i,d uniform in [-x_i,d, 1 - x_i,d]
 *             (so x + v stays in the cube), p_i = x_i.
 *   topology  adaptive random: every particle informs itself and K random
 *             particles (drawn with replacement); l_i is the best p among the
 *             particles that inform i.  The links are drawn again after an
 *             iteration that did not improve the swarm's best value, where an
 *             improvement must exceed a relative 1e-12: a swarm split into
 *             clusters that each sit on their own best point can otherwise
 *             creep by a few ulps per iteration and never redraw its links.
 *   move      with c = 1/2 + ln 2 and w = 1/(2 ln 2) (Clerc's constriction
 *             values),
 *               G   = x + c (p + l - 2x) / 3     (l != p: centre of gravity of
 *                                                 x, x + c(p-x), x + c(l-x))
 *               G   = x + c (p - x) / 2          (the particle is its own
 *                                                 best informant)
 *               x'  = a random point of the ball B(G, |G - x|): a uniform
 *                     direction and a radius uniform in [0, |G - x|], as
 *                     in the reference code (alea_sphere), which puts more
 *                     points near G than a volume-uniform draw would
 *               v  <- w v + x' - x,   x <- x + v
 *             The rotation invariance of this rule is SPSO-2011's point: it
 *             does not favour the coordinate axes as SPSO-2007 did.
 *   confine   a coordinate that leaves [0, 1] is put back on the face and its
 *             velocity becomes -0.5 v on that coordinate (SPSO-2011).
 *
 * We evaluate the swarm synchronously (the moves of one iteration use the
 * information of the previous one), so an iteration is one batch of S points
 * that a vectorized objective evaluates at once; SPSO-2011's reference code
 * also offers this mode.  Fixed coordinates (lower == upper) are left out of
 * the geometry: they do not count in |G - x| nor in the ball's dimension.
 *
 * Restarts (not in SPSO-2011, which runs one swarm): the driver owns the
 * budget, so a swarm that has collapsed -- the spread max_d (max_i x_i,d -
 * min_i x_i,d) of the positions below xtol -- or stalled -- no improvement
 * (in the sense above) of its best value for `stall` iterations -- is
 * replaced by a fresh random swarm with fresh links while budget remains.
 * The stall test matters on multimodal problems: SPSO-2011 keeps a spread-out
 * swarm that explores around a local minimum for a long time (Rastrigin,
 * d = 10: hundreds of iterations with a spread of ~0.5 of the box and no
 * progress), and a new swarm is then the better use of the budget.  The
 * driver keeps the best point of the whole run.  The engine converges only
 * when there is nothing to search (every coordinate fixed); otherwise the
 * budget, the clock or the target ends the run.
 *
 * Options: swarm_size S (0, the default: SPSO-2011's 40, unless the budget
 * allows fewer than MIN_ITERATIONS iterations of 40; then budget /
 * MIN_ITERATIONS particles, at least SPSO-2007's 10 + floor(2 sqrt(m)) for m
 * coordinates that are not fixed; a value of 1 counts as 2), informants K
 * (3), w, c (defaults above), xtol (1e-10, in the unit cube), stall (100
 * iterations without improvement before a restart; 0 = never).
 * Why the budget: a swarm of 40 improves its best by a steady factor per
 * iteration, and a small budget is too few iterations of it (the shifted
 * sphere in 6-D with 3,000 evaluations, 75 iterations of 40: median 6e-3
 * over 10 seeds on [-100, 100]^6; 200 iterations of 15: 1e-12).  Neither the
 * restarts nor the velocity rule play a part there: in 75 iterations the
 * swarm neither collapses nor stalls.  Smaller swarms for every budget were
 * measured too and lose on multimodal problems (benchmarks/compare_engines.py,
 * d = 30, 60,000 evaluations: ackley 6e-9 -> 1.8 with 20 particles), so the
 * swarm shrinks only when the budget is short.
 * seed_point (for composite engines): the particle with the worst best value
 * (particle 0 of a new swarm) is placed at the given point, with no velocity.
 * Memory: O(S n) (positions, velocities, best positions) + O(S K) links.
 */
#include <math.h>
#include <string.h>

#include "engine/engine.h"

/* the automatic swarm: SPSO-2011's size, shrunk to give a short budget this
 * many iterations (see the header) */
enum { DEFAULT_SWARM = 40, MIN_ITERATIONS = 200 };

enum { OPT_SWARM, OPT_INFORMANTS, OPT_W, OPT_C, OPT_XTOL, OPT_STALL, N_OPTIONS };

static const dc_option_info options[N_OPTIONS] = {
    {"swarm_size", 0, 0, 10000, 1,
     "particles in the swarm, S (0 = 40, fewer when the budget is below 200 iterations of "
     "40, at least 10 + floor(2 sqrt(n)); 1 counts as 2)"},
    {"informants", 3, 1, 100, 1, "particles each particle informs, K (adaptive random topology)"},
    {"w", 0.72134752044448170, 0, 1, 0, "inertia weight; default 1/(2 ln 2)"},
    {"c", 1.1931471805599453, 0, 4, 0, "acceleration coefficient; default 1/2 + ln 2"},
    {"xtol", 1e-10, 0, 1, 0,
     "restart when the positions' spread falls below this (fraction of the box)"},
    {"stall", 100, 0, 1e9, 1,
     "restart after this many iterations without improvement of the swarm's best; 0 = never"},
};

static const dc_engine_info info = {
    "pso", "Particle swarm (SPSO-2011)",
    "Standard Particle Swarm Optimisation 2011: adaptive random topology, rotation-invariant "
    "hypersphere moves, restarts when the swarm collapses.",
    "global", 0, options, N_OPTIONS,
    DC_SUPPORTS_CONSTRAINTS | DC_SUPPORTS_INTEGERS | DC_SUPPORTS_X0};

typedef struct params {
    size_t swarm, informants;
    double w, c, xtol;
    int64_t stall;
} params;

typedef struct state {
    params par;
    size_t n, m;        /* dimension, coordinates that are not fixed */
    size_t *free_idx;   /* m */
    dc_rng *rng;
    const dc_allocator *alloc;
    size_t sn;          /* swarm * n */
    double *x, *v, *p;  /* swarm x n each */
    double *f, *pf;     /* swarm each: values of x and of p */
    size_t *links;      /* swarm x informants: i informs links[i*K + k] */
    size_t *inf;        /* swarm: the best informant of each particle */
    double *dir;        /* n: scratch for the random direction */
    double *box;        /* 2n: scratch for the spread (lowest, highest) */
    double *seed;       /* n: a point given by seed_point */
    int seeded;         /* ... to be evaluated at the next ask */
    double best;        /* the current swarm's best value */
    int64_t since;      /* iterations without improvement of best */
    int fresh;          /* the next ask starts a new swarm */
    int done;           /* nothing to search, or the restarts agree: converged */
    int stop_on_convergence; /* the run's option: stop once restarts agree */
    dc_restart_log log; /* where the swarms that collapsed ended */
} state;

static size_t automatic_swarm(int64_t budget, size_t free_coords)
{
    size_t least = 10 + (size_t)floor(2.0 * sqrt((double)free_coords));
    int64_t fit;
    if (budget <= 0 || budget >= (int64_t)DEFAULT_SWARM * MIN_ITERATIONS)
        return DEFAULT_SWARM;
    fit = budget / MIN_ITERATIONS;
    if (least > DEFAULT_SWARM)
        least = DEFAULT_SWARM;
    return fit > (int64_t)least ? (size_t)fit : least;
}

static dc_status init(void *sp, const dc_problem *pb, const double *prm)
{
    state *s = sp;
    size_t j, k, free_coords = 0;
    for (j = 0; j < pb->n; j++)
        free_coords += !pb->fixed[j];
    s->par.swarm = (size_t)prm[OPT_SWARM];
    if (s->par.swarm == 0)
        s->par.swarm = automatic_swarm(pb->budget, free_coords);
    else if (s->par.swarm == 1)
        s->par.swarm = 2;
    s->par.informants = (size_t)prm[OPT_INFORMANTS];
    s->par.w = prm[OPT_W];
    s->par.c = prm[OPT_C];
    s->par.xtol = prm[OPT_XTOL];
    s->stop_on_convergence = pb->stop_on_convergence;
    s->par.stall = (int64_t)prm[OPT_STALL];
    s->n = pb->n;
    s->rng = pb->rng;
    s->alloc = pb->alloc;
    s->fresh = 1;
    if (!dc_mul_size(s->par.swarm, s->n, &s->sn) ||
        !dc_mul_size(s->sn, sizeof(double), &k) ||
        !dc_mul_size(s->par.swarm, s->par.informants * sizeof(size_t), &k)) {
        s->sn = 0;
        return DC_ERR_NOMEM;
    }
    s->free_idx = dc_mem_alloc(s->alloc, s->n * sizeof(size_t));
    s->x = dc_mem_alloc(s->alloc, s->sn * sizeof(double));
    s->v = dc_mem_alloc(s->alloc, s->sn * sizeof(double));
    s->p = dc_mem_alloc(s->alloc, s->sn * sizeof(double));
    s->f = dc_mem_alloc(s->alloc, s->par.swarm * sizeof(double));
    s->pf = dc_mem_alloc(s->alloc, s->par.swarm * sizeof(double));
    s->links = dc_mem_alloc(s->alloc, s->par.swarm * s->par.informants * sizeof(size_t));
    s->inf = dc_mem_alloc(s->alloc, s->par.swarm * sizeof(size_t));
    s->dir = dc_mem_alloc(s->alloc, s->n * sizeof(double));
    s->box = dc_mem_alloc(s->alloc, 2 * s->n * sizeof(double));
    s->seed = dc_mem_alloc(s->alloc, s->n * sizeof(double));
    if (!s->free_idx || !s->x || !s->v || !s->p || !s->f || !s->pf || !s->links || !s->inf ||
        !s->dir || !s->box || !s->seed)
        return DC_ERR_NOMEM;
    for (j = 0; j < s->n; j++)
        if (!pb->fixed[j])
            s->free_idx[s->m++] = j;
    /* fixed coordinates: any value (the driver uses the bound), no motion */
    for (k = 0; k < s->sn; k++) {
        s->x[k] = 0.5;
        s->v[k] = 0.0;
    }
    return dc_restart_log_init(&s->log, s->alloc, s->n);
}

/* Each particle informs itself (implicitly) and K random particles. */
static void draw_links(state *s)
{
    size_t k, total = s->par.swarm * s->par.informants;
    for (k = 0; k < total; k++)
        s->links[k] = (size_t)dc_rng_below(s->rng, s->par.swarm);
}

/* inf[t] = the particle with the best p among those informing t. */
static void find_informants(state *s)
{
    size_t i, k, S = s->par.swarm, K = s->par.informants;
    for (i = 0; i < S; i++)
        s->inf[i] = i;
    for (i = 0; i < S; i++)
        for (k = 0; k < K; k++) {
            size_t t = s->links[i * K + k];
            if (dc_better(s->pf[i], s->pf[s->inf[t]]))
                s->inf[t] = i;
        }
}

static void new_swarm(state *s)
{
    size_t i, q;
    for (i = 0; i < s->par.swarm; i++) {
        double *x = s->x + i * s->n, *v = s->v + i * s->n;
        for (q = 0; q < s->m; q++) {
            size_t j = s->free_idx[q];
            x[j] = dc_rng_uniform(s->rng);
            v[j] = dc_rng_uniform(s->rng) - x[j]; /* uniform in [-x, 1 - x] */
        }
    }
}

/* SPSO-2011's move of particle i (positions stay in the cube), in two
 * passes: v <- w v + (G - x) while drawing the direction z; then
 * v <- v + |G - x| U z / |z| and x <- x + v, confined. */
static void move(state *s, size_t i)
{
    size_t q, n = s->n, m = s->m;
    const size_t *idx = s->free_idx;
    double *x = s->x + i * n, *v = s->v + i * n, *dir = s->dir;
    const double *p = s->p + i * n, *l = s->p + s->inf[i] * n;
    double w = s->par.w, radius = 0.0, norm = 0.0, scale;
    double cp, cl; /* G - x = cp (p - x) + cl (l - x) */
    if (s->inf[i] == i) {
        cp = s->par.c / 2.0;
        cl = 0.0;
    } else {
        cp = cl = s->par.c / 3.0;
    }
    for (q = 0; q < m; q++) {
        size_t j = idx[q];
        double d = cp * (p[j] - x[j]) + cl * (l[j] - x[j]);
        double z = dc_rng_normal(s->rng);
        radius += d * d;
        v[j] = w * v[j] + d;
        dir[j] = z;
        norm += z * z;
    }
    /* a random direction and a radius uniform in [0, |G - x|] */
    scale = norm > 0.0 ? sqrt(radius) * dc_rng_uniform(s->rng) / sqrt(norm) : 0.0;
    for (q = 0; q < m; q++) {
        size_t j = idx[q];
        double u, vj = v[j] + scale * dir[j];
        u = x[j] + vj;
        if (u < 0.0) {
            u = 0.0;
            vj = -0.5 * vj;
        } else if (u > 1.0) {
            u = 1.0;
            vj = -0.5 * vj;
        } else if (u != u) {
            u = 0.5; /* not reachable with finite data; keeps the cube */
            vj = 0.0;
        }
        x[j] = u;
        v[j] = vj;
    }
}

/* Largest spread max_j (max_i x_ij - min_i x_ij) over the free coordinates
 * (row by row: the swarm is stored particle-major). */
static double spread(const state *s)
{
    size_t i, q, m = s->m;
    const size_t *idx = s->free_idx;
    double *lo = s->box, *hi = s->box + s->n, worst = 0.0;
    for (q = 0; q < m; q++)
        lo[idx[q]] = hi[idx[q]] = s->x[idx[q]];
    for (i = 1; i < s->par.swarm; i++) {
        const double *x = s->x + i * s->n;
        for (q = 0; q < m; q++) {
            size_t j = idx[q];
            lo[j] = x[j] < lo[j] ? x[j] : lo[j];
            hi[j] = x[j] > hi[j] ? x[j] : hi[j];
        }
    }
    for (q = 0; q < m; q++)
        if (hi[idx[q]] - lo[idx[q]] > worst)
            worst = hi[idx[q]] - lo[idx[q]];
    return worst;
}

/* An improvement of the swarm's best that counts: more than a relative
 * 1e-12 (a swarm split into clusters that each sit on their own best point
 * can improve by a few ulps per iteration for ever; such creeping must not
 * keep the topology, nor a stalled swarm, alive). */
static int improves(double now, double before)
{
    return dc_better(now, before) && !(before - now <= 1e-12 * fabs(before));
}

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    size_t i;
    size_t target = 0;
    if (s->fresh) {
        new_swarm(s);
    } else {
        for (i = 1; i < s->par.swarm; i++)
            if (dc_better(s->pf[target], s->pf[i]))
                target = i;
        for (i = 0; i < s->par.swarm; i++)
            if (!(s->seeded && i == target))
                move(s, i);
    }
    if (s->seeded) {
        double *x = s->x + target * s->n, *v = s->v + target * s->n;
        for (i = 0; i < s->m; i++) {
            x[s->free_idx[i]] = s->seed[s->free_idx[i]];
            v[s->free_idx[i]] = 0.0;
        }
        s->seeded = 0;
    }
    b->kind = DC_ASK_POINTS;
    b->U = s->x;
    b->rows = s->par.swarm;
    b->f = s->f;
    return DC_OK;
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    size_t i, S = s->par.swarm;
    double best;
    (void)b;
    if (s->fresh) {
        memcpy(s->p, s->x, s->sn * sizeof(double));
        memcpy(s->pf, s->f, S * sizeof(double));
        s->best = s->pf[0];
        for (i = 1; i < S; i++)
            if (dc_better(s->pf[i], s->best))
                s->best = s->pf[i];
        s->fresh = 0;
        s->since = 0;
        s->done = s->m == 0;
        draw_links(s);
        find_informants(s);
        return DC_OK;
    }
    best = s->best;
    for (i = 0; i < S; i++)
        if (dc_better(s->f[i], s->pf[i])) {
            s->pf[i] = s->f[i];
            memcpy(s->p + i * s->n, s->x + i * s->n, s->n * sizeof(double));
            if (dc_better(s->f[i], best))
                best = s->f[i];
        }
    if (improves(best, s->best)) {
        s->best = best;
        s->since = 0;
    } else {
        if (dc_better(best, s->best))
            s->best = best;
        s->since++;
        draw_links(s); /* no improvement: a new random topology */
    }
    find_informants(s);
    if (!(spread(s) >= s->par.xtol)) {
        s->fresh = 1; /* collapsed: restart with a new swarm, or stop once restarts agree */
        size_t at = 0; /* the swarm's best particle */
        for (i = 1; i < S; i++)
            if (dc_better(s->pf[i], s->pf[at]))
                at = i;
        if (dc_restart_log_end(&s->log, s->pf[at], s->p + at * s->n) && s->stop_on_convergence)
            s->done = 1;
    } else if (s->par.stall > 0 && s->since >= s->par.stall) {
        s->fresh = 1; /* stalled: restart with a new swarm */
    }
    return DC_OK;
}

static dc_stop stop(const void *sp)
{
    const state *s = sp;
    return s->done ? DC_STOP_CONVERGED : DC_STOP_NONE;
}

static void release(void *sp)
{
    state *s = sp;
    size_t S = s->par.swarm;
    dc_restart_log_free(&s->log);
    dc_mem_free(s->alloc, s->free_idx, s->n * sizeof(size_t));
    dc_mem_free(s->alloc, s->x, s->sn * sizeof(double));
    dc_mem_free(s->alloc, s->v, s->sn * sizeof(double));
    dc_mem_free(s->alloc, s->p, s->sn * sizeof(double));
    dc_mem_free(s->alloc, s->f, S * sizeof(double));
    dc_mem_free(s->alloc, s->pf, S * sizeof(double));
    dc_mem_free(s->alloc, s->links, S * s->par.informants * sizeof(size_t));
    dc_mem_free(s->alloc, s->inf, S * sizeof(size_t));
    dc_mem_free(s->alloc, s->dir, s->n * sizeof(double));
    dc_mem_free(s->alloc, s->box, 2 * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->seed, s->n * sizeof(double));
}

/* Take in u: the particle with the worst best value (particle 0 of a new
 * swarm) is placed at u, with no velocity, for the next ask. */
static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    size_t q;
    for (q = 0; q < s->m; q++) {
        size_t j = s->free_idx[q];
        s->seed[j] = !(u[j] >= 0.0) ? 0.0 : (u[j] > 1.0 ? 1.0 : u[j]);
    }
    s->seeded = 1;
    return DC_OK;
}

const dc_engine_vt dc_eng_pso = {&info, sizeof(state), init, ask, tell, stop, release, seed_point};
