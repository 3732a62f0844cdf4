/*
 * de_lshade.c -- differential evolution, L-SHADE.
 *
 * Tanabe & Fukunaga, "Improving the search performance of SHADE using linear
 * population size reduction", IEEE CEC 2014 (L-SHADE), on top of SHADE
 * (Tanabe & Fukunaga, CEC 2013) and JADE (Zhang & Sanderson, IEEE TEC 2009).
 *
 * One generation, for every member x_i of the population (all in [0,1]^n):
 *   r     = a random slot of the success-history memory (H slots)
 *   CR_i  = N(M_CR[r], 0.1) clipped to [0,1]; 0 when M_CR[r] is "terminal"
 *   F_i   = Cauchy(M_F[r], 0.1), drawn again while <= 0, capped at 1
 *   v     = x_i + F_i (x_pbest - x_i) + F_i (x_r1 - x_r2)   current-to-pbest/1
 *           x_pbest: one of the best max(2, round(p * NP)) members;
 *           x_r1 from the population, x_r2 from population + archive,
 *           i, r1, r2 distinct
 *   repair: v_j < 0 -> (0 + x_ij) / 2, v_j > 1 -> (1 + x_ij) / 2 (the paper's
 *           midpoint between the parent and the violated bound)
 *   u     = binomial crossover of x_i and v (coordinate jrand always from v)
 * The whole generation is asked as one batch (a compiled objective evaluates
 * it in one VM call).  Selection: u replaces x_i when f(u) <= f(x_i); when
 * f(u) < f(x_i) the parent goes to the external archive (a random member is
 * overwritten when it is full) and (F_i, CR_i, |f(x_i) - f(u)|) is a success.
 * Memory update (slot k, round robin, only after a generation with
 * successes), weights w = delta f / sum(delta f):
 *   M_F[k]  = sum(w F^2) / sum(w F)               (weighted Lehmer mean)
 *   M_CR[k] = terminal if M_CR[k] is terminal or max(S_CR) = 0,
 *             else sum(w CR)                      (weighted mean)
 * Linear population size reduction: after each generation
 *   NP = round(NP_init + (NP_min - NP_init) * nfe / budget_of_this_run)
 * and the worst members are removed; the archive holds round(archive_rate
 * * NP) points.  NaN values are worse than any number throughout; a NaN
 * parent's improvement counts as the largest improvement of the generation.
 *
 * Options:
 *   popsize_factor  NP_init = round(popsize_factor * n), clamped to
 *                   [max(4, min_popsize), 5000], then capped by the budget:
 *   evals_per_member  NP_init <= max(n, budget / evals_per_member) (0: no
 *                   cap).  The paper tunes NP_init = 18 n for budgets of
 *                   10,000 n, i.e. ~550 evaluations per initial member; the
 *                   default 550 keeps that ratio for smaller budgets (at the
 *                   default budget of 2,000 n: NP_init = 3.6 n), which gains
 *                   orders of magnitude on rastrigin, rosenbrock and schwefel
 *                   at d = 10..30.  Always NP_init <= 2 budget / 25 - NP_min
 *                   (at least ~25 generations) and >= NP_min.
 *   memory_size     H, slots of the success-history memory
 *   pbest_rate      p of current-to-pbest (at least 2 members are eligible)
 *   archive_rate    archive size / NP (0: no archive)
 *   min_popsize     NP_min, population size at the end of the budget
 *   restarts        1: restart when converged while budget remains; 0: stop
 *   xtol, ftol      the convergence tests below
 *
 * Convergence (tested after every generation): the population has converged
 * when (a) every coordinate's spread (max - min over the population, unit
 * cube) is <= xtol, or (b) every value is finite and max f - min f <=
 * ftol * max(|min f|, |max f|) (a flat population, exactly flat included).
 * With restarts (the default) a converged population is replaced by a fresh
 * uniform one with a fresh memory and an empty archive, and the population
 * reduction is rescheduled over the remaining budget; the driver keeps the
 * best point of every run.  stop() reports DC_STOP_CONVERGED only when
 * restarts are off or fewer than 25 * NP_min evaluations remain.
 * Fixed coordinates (lower == upper) stay at 0.5 and take no part.
 * Known weakness (the paper's rule): in low dimension on non-separable
 * valleys (rosenbrock, d = 2) every memory slot can turn terminal (CR = 0,
 * one coordinate moves per trial) and the run creeps without converging;
 * about 5% of seeds end near 1e-3..1e-6 there.
 * seed_point (composite engines): before the first evaluation the point
 * replaces member 0; later it rides along with the next generation and
 * replaces the worst member unless it is worse.
 * Memory: O(NP_init * n) (population, trials, archive); no O(n^2).
 */
#include <math.h>
#include <string.h>

#include "engine/engine.h"

enum {
    OPT_POPSIZE,
    OPT_MEMORY,
    OPT_PBEST,
    OPT_ARCHIVE,
    OPT_MIN_POP,
    OPT_RESTARTS,
    OPT_XTOL,
    OPT_FTOL,
    OPT_EVALS_PER,
    N_OPTIONS
};

static const dc_option_info options[N_OPTIONS] = {
    {"popsize_factor", 18, 2, 100, 0,
     "initial population = popsize_factor * n, clamped to [4, 5000] (and smaller for small "
     "budgets)"},
    {"memory_size", 6, 1, 100, 1, "H, slots of the success-history memory of F and CR"},
    {"pbest_rate", 0.11, 1e-6, 1, 0, "p of current-to-pbest/1, in (0, 1] (at least 2 members)"},
    {"archive_rate", 2.6, 0, 10, 0, "external archive size / population size (0 = no archive)"},
    {"min_popsize", 4, 4, 1000, 1, "population size at the end of the budget"},
    {"restarts", 1, 0, 1, 1, "1 = restart a converged population while budget remains; 0 = stop"},
    {"xtol", 1e-12, 0, 1, 0, "converged: spread of every coordinate (unit cube) <= xtol"},
    {"ftol", 1e-12, 0, 1, 0, "converged: max f - min f <= ftol * max(|min f|, |max f|)"},
    {"evals_per_member", 550, 0, 1e6, 0,
     "initial population at most budget / evals_per_member (0 = no cap)"},
};

static const dc_engine_info info = {
    "de", "Differential evolution (L-SHADE)",
    "L-SHADE: current-to-pbest/1/bin with an archive, success-history adaptation of F and "
    "CR, linear population size reduction; restarts when converged.",
    "population", 0, options, N_OPTIONS};

#define MAX_POP 5000u
#define MIN_GENERATIONS 25 /* the budget rule for NP_init and for restarts */
#define TERMINAL (-1.0)    /* M_CR value: CR = 0 from then on */
#define SIGMA 0.1          /* spread of the F and CR draws */

typedef struct params {
    size_t n, n_free;
    size_t np_init, np_min; /* np_init: for the whole budget (allocation size) */
    size_t H;
    double p, archive_rate, xtol, ftol, evals_per_member;
    int restarts;
    int64_t budget;
} params;

typedef struct rank {
    double f;
    size_t i;
} rank;

typedef struct state {
    params pa;
    dc_rng *rng;
    const dc_allocator *alloc;
    size_t *free_j;        /* the coordinates that are not fixed */
    uint32_t *bits, *idx;  /* n crossover draws, the coordinates taken */
    size_t cap, arc_cap;   /* rows allocated for population and archive */
    double *X, *fx;        /* population (cap x n) and its values */
    double *U, *fu;        /* trials */
    double *A;             /* archive (arc_cap x n) */
    size_t na;             /* archive members */
    double *MF, *MCR;      /* memory, H slots */
    size_t k;              /* next memory slot */
    double *F, *CR;        /* per trial */
    double *SF, *SCR, *dF; /* successes of a generation */
    rank *order;
    size_t np;             /* current population size */
    size_t np0;            /* initial population size of this run */
    int64_t used;          /* evaluations told (all runs) */
    int64_t run_start, run_budget;
    int evolving;          /* 0: the next ask is a fresh population */
    int converged;
    int agreed;            /* the converged runs agree (stop_on_convergence) */
    int stop_on_convergence; /* the run's option */
    dc_restart_log log;    /* where the runs that converged ended */
    int seeded;            /* a seed point waits in U's extra row (cap) */
} state;

/* ---- helpers ---- */

/* strict total order: better value first (NaN last), then lower index */
static int rank_less(const rank *a, const rank *b)
{
    if (dc_better(a->f, b->f))
        return 1;
    if (dc_better(b->f, a->f))
        return 0;
    return a->i < b->i;
}

static void rank_swap(rank *a, rank *b)
{
    rank t = *a;
    *a = *b;
    *b = t;
}

/* order[0..k) = the indices of the k best members, in no particular order
 * (quickselect, median-of-three pivots: O(np) expected, no allocation) */
static void select_best(state *s, size_t k)
{
    rank *a = s->order;
    size_t i, lo = 0, hi = s->np;
    for (i = 0; i < s->np; i++) {
        a[i].f = s->fx[i];
        a[i].i = i;
    }
    /* invariant: a[0..lo) beat a[lo..np), a[0..hi) beat a[hi..np) */
    while (lo < k && k < hi) {
        size_t mid = lo + (hi - lo) / 2, last = hi - 1, store = lo;
        if (rank_less(&a[mid], &a[lo]))
            rank_swap(&a[mid], &a[lo]);
        if (rank_less(&a[last], &a[lo]))
            rank_swap(&a[last], &a[lo]);
        if (rank_less(&a[mid], &a[last]))
            rank_swap(&a[mid], &a[last]); /* the median of three is the pivot a[last] */
        for (i = lo; i < last; i++)
            if (rank_less(&a[i], &a[last]))
                rank_swap(&a[i], &a[store++]);
        rank_swap(&a[store], &a[last]);
        if (store < k)
            lo = store + 1;
        else
            hi = store;
    }
}

/* NP_init of a run with this budget (see the header) */
static size_t run_popsize(const params *pa, int64_t budget)
{
    double cap = HUGE_VAL, gen_cap = 2.0 * (double)budget / MIN_GENERATIONS - (double)pa->np_min;
    size_t np = pa->np_init;
    if (pa->evals_per_member > 0)
        cap = fmax(floor((double)budget / pa->evals_per_member), (double)pa->n);
    cap = fmin(cap, gen_cap);
    if (cap < (double)np)
        np = cap <= (double)pa->np_min ? pa->np_min : (size_t)cap;
    return np;
}

static size_t archive_size(const params *pa, size_t np)
{
    return (size_t)floor(pa->archive_rate * (double)np + 0.5);
}

/* a fresh run: uniform population, memory at 0.5, empty archive */
static void start_run(state *s)
{
    const params *pa = &s->pa;
    size_t i, j, n = pa->n;
    int64_t left = pa->budget - s->used;
    s->run_start = s->used;
    s->run_budget = left > 0 ? left : 1;
    s->np0 = s->np = run_popsize(pa, s->run_budget);
    for (i = 0; i < s->np; i++) {
        double *x = s->X + i * n;
        for (j = 0; j < n; j++)
            x[j] = 0.5;
        for (j = 0; j < pa->n_free; j++)
            x[s->free_j[j]] = dc_rng_uniform(s->rng);
    }
    for (i = 0; i < pa->H; i++) {
        s->MF[i] = 0.5;
        s->MCR[i] = 0.5;
    }
    s->k = 0;
    s->na = 0;
    s->evolving = 0;
    s->converged = 0;
}

/* ---- init / release ---- */

static dc_status init(void *sp, const dc_problem *pb, const double *params_in)
{
    state *s = sp;
    params *pa = &s->pa;
    size_t j, n = pb->n, rows;
    double np;
    s->rng = pb->rng;
    s->alloc = pb->alloc;
    pa->n = n;
    pa->H = (size_t)params_in[OPT_MEMORY];
    pa->p = params_in[OPT_PBEST];
    pa->archive_rate = params_in[OPT_ARCHIVE];
    pa->np_min = (size_t)params_in[OPT_MIN_POP];
    pa->restarts = params_in[OPT_RESTARTS] != 0.0;
    pa->xtol = params_in[OPT_XTOL];
    pa->ftol = params_in[OPT_FTOL];
    s->stop_on_convergence = pb->stop_on_convergence;
    pa->evals_per_member = params_in[OPT_EVALS_PER];
    pa->budget = pb->budget;
    np = floor(params_in[OPT_POPSIZE] * (double)n + 0.5);
    if (np > MAX_POP)
        np = MAX_POP;
    if (np < 4)
        np = 4;
    if (np < (double)pa->np_min)
        np = (double)pa->np_min;
    pa->np_init = (size_t)np;
    pa->np_init = run_popsize(pa, pa->budget);

    s->free_j = dc_mem_alloc(s->alloc, n * sizeof(size_t));
    s->bits = dc_mem_alloc(s->alloc, n * sizeof(uint32_t));
    s->idx = dc_mem_alloc(s->alloc, n * sizeof(uint32_t));
    if (!s->free_j || !s->bits || !s->idx)
        return DC_ERR_NOMEM;
    for (j = 0; j < n; j++)
        if (!pb->fixed || !pb->fixed[j])
            s->free_j[pa->n_free++] = j;

    s->cap = pa->np_init;
    s->arc_cap = archive_size(pa, s->cap);
    if (!dc_mul_size(s->cap, n, &rows) || !dc_mul_size(rows, sizeof(double), &rows))
        return DC_ERR_NOMEM;
    s->X = dc_mem_alloc(s->alloc, rows);
    s->U = dc_mem_alloc(s->alloc, rows + n * sizeof(double)); /* + a seed row */
    s->A = s->arc_cap ? dc_mem_alloc(s->alloc, s->arc_cap * n * sizeof(double)) : NULL;
    s->fx = dc_mem_calloc(s->alloc, s->cap, sizeof(double));
    s->fu = dc_mem_calloc(s->alloc, s->cap + 1, sizeof(double));
    s->F = dc_mem_alloc(s->alloc, s->cap * sizeof(double));
    s->CR = dc_mem_alloc(s->alloc, s->cap * sizeof(double));
    s->SF = dc_mem_alloc(s->alloc, s->cap * sizeof(double));
    s->SCR = dc_mem_alloc(s->alloc, s->cap * sizeof(double));
    s->dF = dc_mem_alloc(s->alloc, s->cap * sizeof(double));
    s->order = dc_mem_alloc(s->alloc, s->cap * sizeof(rank));
    s->MF = dc_mem_alloc(s->alloc, pa->H * sizeof(double));
    s->MCR = dc_mem_alloc(s->alloc, pa->H * sizeof(double));
    if (!s->X || !s->U || (s->arc_cap && !s->A) || !s->fx || !s->fu || !s->F || !s->CR ||
        !s->SF || !s->SCR || !s->dF || !s->order || !s->MF || !s->MCR)
        return DC_ERR_NOMEM;
    start_run(s);
    return dc_restart_log_init(&s->log, s->alloc, n);
}

static void release(void *sp)
{
    state *s = sp;
    const dc_allocator *a = s->alloc;
    size_t n = s->pa.n, cap = s->cap;
    if (!a)
        return;
    dc_restart_log_free(&s->log);
    dc_mem_free(a, s->free_j, n * sizeof(size_t));
    dc_mem_free(a, s->bits, n * sizeof(uint32_t));
    dc_mem_free(a, s->idx, n * sizeof(uint32_t));
    dc_mem_free(a, s->X, cap * n * sizeof(double));
    dc_mem_free(a, s->U, (cap + 1) * n * sizeof(double));
    dc_mem_free(a, s->A, s->arc_cap * n * sizeof(double));
    dc_mem_free(a, s->fx, cap * sizeof(double));
    dc_mem_free(a, s->fu, (cap + 1) * sizeof(double));
    dc_mem_free(a, s->F, cap * sizeof(double));
    dc_mem_free(a, s->CR, cap * sizeof(double));
    dc_mem_free(a, s->SF, cap * sizeof(double));
    dc_mem_free(a, s->SCR, cap * sizeof(double));
    dc_mem_free(a, s->dF, cap * sizeof(double));
    dc_mem_free(a, s->order, cap * sizeof(rank));
    dc_mem_free(a, s->MF, s->pa.H * sizeof(double));
    dc_mem_free(a, s->MCR, s->pa.H * sizeof(double));
}

/* ---- ask: one generation of trials ---- */

static double draw_f(state *s, double mf)
{
    int tries;
    for (tries = 0; tries < 100; tries++) {
        double f = dc_rng_cauchy(s->rng, mf, SIGMA);
        if (f > 0.0)
            return f > 1.0 ? 1.0 : f;
    }
    return SIGMA; /* practically unreachable: M_F > 0 always */
}

static double draw_cr(state *s, double mcr)
{
    double cr;
    if (mcr == TERMINAL)
        return 0.0;
    cr = mcr + SIGMA * dc_rng_normal(s->rng);
    return cr < 0.0 ? 0.0 : cr > 1.0 ? 1.0 : cr;
}

/* uniform in [0, bound), bound < 2^32: multiply-shift on 32 bits (a bias
 * below bound / 2^32, which is below 1.2e-6 here; no division) */
static size_t below(dc_rng *rng, size_t bound)
{
    return (size_t)(((dc_rng_next(rng) >> 32) * (uint64_t)bound) >> 32);
}

/* one coordinate of current-to-pbest/1, with the midpoint repair */
static double mutant(const double *x, const double *xp, const double *x1, const double *x2,
                     double F, size_t j)
{
    double v = x[j] + F * (xp[j] - x[j]) + F * (x1[j] - x2[j]);
    if (v < 0.0)
        return 0.5 * x[j];
    if (v > 1.0)
        return 0.5 + 0.5 * x[j];
    return v;
}

static void make_trials(state *s)
{
    const params *pa = &s->pa;
    size_t n = pa->n, np = s->np, i, j, q, m;
    size_t pnum = (size_t)floor(pa->p * (double)np + 0.5);
    uint32_t *bits = s->bits, *idx = s->idx;
    if (pnum < 2)
        pnum = 2;
    if (pnum > np)
        pnum = np;
    select_best(s, pnum);
    for (i = 0; i < np; i++) {
        const double *x = s->X + i * n, *xp, *x1, *x2;
        double *u = s->U + i * n;
        size_t r = below(s->rng, pa->H);
        size_t ip, r1, r2, jrand;
        uint32_t threshold;
        double F, CR;
        F = s->F[i] = draw_f(s, s->MF[r]);
        CR = s->CR[i] = draw_cr(s, s->MCR[r]);
        ip = s->order[below(s->rng, pnum)].i;
        do
            r1 = below(s->rng, np);
        while (r1 == i);
        do
            r2 = below(s->rng, np + s->na);
        while (r2 == i || r2 == r1);
        jrand = s->free_j[below(s->rng, pa->n_free)];
        xp = s->X + ip * n;
        x1 = s->X + r1 * n;
        x2 = r2 < np ? s->X + r2 * n : s->A + (r2 - np) * n;
        /* binomial crossover: coordinate j takes the mutant when a 32-bit
         * uniform (two per generator output) is below CR * 2^32; the list
         * of those coordinates is built without branches (a 50/50 branch
         * per coordinate costs more than the arithmetic).  Fixed
         * coordinates are 0.5 in every member and in the archive, so their
         * mutant is exactly 0.5 again. */
        threshold = CR >= 1.0 ? UINT32_MAX : (uint32_t)(CR * 4294967296.0);
        for (j = 0; j + 1 < n; j += 2) {
            uint64_t w = dc_rng_next(s->rng);
            bits[j] = (uint32_t)w;
            bits[j + 1] = (uint32_t)(w >> 32);
        }
        if (j < n)
            bits[j] = (uint32_t)(dc_rng_next(s->rng) >> 32);
        for (j = 0, m = 0; j < n; j++) {
            idx[m] = (uint32_t)j;
            m += bits[j] < threshold;
        }
        memcpy(u, x, n * sizeof(double));
        for (q = 0; q < m; q++)
            u[idx[q]] = mutant(x, xp, x1, x2, F, idx[q]);
        u[jrand] = mutant(x, xp, x1, x2, F, jrand);
    }
}

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    if (s->converged)
        start_run(s);
    b->kind = DC_ASK_POINTS;
    b->rows = s->np;
    if (!s->evolving) {
        b->U = s->X;
        b->f = s->fx;
    } else {
        make_trials(s);
        if (s->seeded) {
            /* the seed point rides along in the extra row */
            memmove(s->U + s->np * s->pa.n, s->U + s->cap * s->pa.n, s->pa.n * sizeof(double));
            b->rows++;
        }
        b->U = s->U;
        b->f = s->fu;
    }
    return DC_OK;
}

/* A point to take in (composite engines): before the first evaluation it
 * replaces member 0 of the population; later it is evaluated with the next
 * generation and replaces the worst member if it is not worse. */
static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    size_t n = s->pa.n, q;
    double *dst = s->evolving ? s->U + s->cap * n : s->X;
    for (q = 0; q < n; q++)
        dst[q] = 0.5;
    for (q = 0; q < s->pa.n_free; q++) {
        size_t j = s->free_j[q];
        double v = u[j];
        dst[j] = v >= 0.0 ? (v <= 1.0 ? v : 1.0) : 0.0; /* NaN -> 0 */
    }
    s->seeded = s->evolving;
    return DC_OK;
}

/* ---- tell: selection, memory, population reduction, convergence ---- */

static void archive_add(state *s, const double *x, size_t cap)
{
    size_t n = s->pa.n;
    double *slot;
    if (cap == 0)
        return;
    if (s->na < cap)
        slot = s->A + (s->na++) * n;
    else
        slot = s->A + below(s->rng, s->na) * n;
    memcpy(slot, x, n * sizeof(double));
}

static void update_memory(state *s, size_t ns)
{
    const params *pa = &s->pa;
    double sum_d = 0.0, max_d = 0.0, num_f = 0.0, den_f = 0.0, m_cr = 0.0, max_cr = 0.0;
    size_t q;
    if (ns == 0)
        return;
    for (q = 0; q < ns; q++)
        if (isfinite(s->dF[q]) && s->dF[q] > max_d)
            max_d = s->dF[q];
    for (q = 0; q < ns; q++) {
        if (!isfinite(s->dF[q]))
            s->dF[q] = max_d > 0.0 ? max_d : 1.0; /* a NaN or infinite parent */
        sum_d += s->dF[q];
    }
    for (q = 0; q < ns; q++) {
        double w = sum_d > 0.0 ? s->dF[q] / sum_d : 1.0 / (double)ns;
        num_f += w * s->SF[q] * s->SF[q];
        den_f += w * s->SF[q];
        m_cr += w * s->SCR[q];
        if (s->SCR[q] > max_cr)
            max_cr = s->SCR[q];
    }
    s->MF[s->k] = den_f > 0.0 ? num_f / den_f : 0.5;
    if (s->MCR[s->k] == TERMINAL || max_cr == 0.0)
        s->MCR[s->k] = TERMINAL;
    else
        s->MCR[s->k] = m_cr;
    s->k = (s->k + 1) % pa->H;
}

/* remove the worst members down to target, keeping the others in order */
static void reduce(state *s, size_t target)
{
    size_t n = s->pa.n, i, w = 0, cap;
    if (target >= s->np)
        return;
    select_best(s, target);
    for (i = target; i < s->np; i++)
        s->fu[s->order[i].i] = 1.0; /* fu is free here: 1 marks a removal */
    for (i = 0; i < target; i++)
        s->fu[s->order[i].i] = 0.0;
    for (i = 0; i < s->np; i++) {
        if (s->fu[i] != 0.0)
            continue;
        if (w != i) {
            memcpy(s->X + w * n, s->X + i * n, n * sizeof(double));
            s->fx[w] = s->fx[i];
        }
        w++;
    }
    s->np = target;
    cap = archive_size(&s->pa, target);
    while (s->na > cap) {
        /* drop random members: move the last one into the chosen slot */
        size_t r = below(s->rng, s->na);
        s->na--;
        if (r != s->na)
            memcpy(s->A + r * n, s->A + s->na * n, n * sizeof(double));
    }
}

static int has_converged(const state *s)
{
    const params *pa = &s->pa;
    size_t n = pa->n, i, q;
    double lo_f = INFINITY, hi_f = -INFINITY, spread = 0.0;
    int finite = 1;
    for (i = 0; i < s->np; i++) {
        double f = s->fx[i];
        if (!isfinite(f)) {
            finite = 0;
            break;
        }
        lo_f = f < lo_f ? f : lo_f;
        hi_f = f > hi_f ? f : hi_f;
    }
    if (finite && s->np > 0 && hi_f - lo_f <= pa->ftol * fmax(fabs(lo_f), fabs(hi_f)))
        return 1;
    for (q = 0; q < pa->n_free && spread <= pa->xtol; q++) {
        size_t j = s->free_j[q];
        double lo = s->X[j], hi = s->X[j];
        for (i = 1; i < s->np; i++) {
            double v = s->X[i * n + j];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        if (hi - lo > spread)
            spread = hi - lo;
    }
    return spread <= pa->xtol;
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    const params *pa = &s->pa;
    size_t n = pa->n, i, ns = 0, arc_cap = archive_size(pa, s->np);
    int64_t nfe;
    s->used += (int64_t)b->rows;
    if (!s->evolving) {
        s->evolving = 1;
    } else {
        for (i = 0; i < s->np; i++) {
            double fu = s->fu[i], fx = s->fx[i];
            if (dc_better(fx, fu))
                continue; /* the trial is worse */
            if (dc_better(fu, fx)) {
                archive_add(s, s->X + i * n, arc_cap);
                s->SF[ns] = s->F[i];
                s->SCR[ns] = s->CR[i];
                s->dF[ns] = fx - fu; /* NaN / inf when the parent was NaN / inf */
                ns++;
            }
            memcpy(s->X + i * n, s->U + i * n, n * sizeof(double));
            s->fx[i] = fu;
        }
        update_memory(s, ns);
        if (s->seeded && b->rows > s->np) {
            size_t worst = 0;
            for (i = 1; i < s->np; i++)
                if (!dc_better(s->fx[i], s->fx[worst]))
                    worst = i;
            if (!dc_better(s->fx[worst], s->fu[s->np])) {
                memcpy(s->X + worst * n, s->U + s->np * n, n * sizeof(double));
                s->fx[worst] = s->fu[s->np];
            }
        }
        s->seeded = 0;
    }
    nfe = s->used - s->run_start;
    {
        double t = (double)nfe / (double)s->run_budget;
        double target = floor((double)s->np0 + ((double)pa->np_min - (double)s->np0) * t + 0.5);
        if (target < (double)pa->np_min)
            target = (double)pa->np_min;
        if (target < (double)s->np)
            reduce(s, (size_t)target);
    }
    s->converged = pa->n_free == 0 || has_converged(s);
    if (s->converged && pa->n_free > 0) {
        size_t at = 0; /* the population's best member */
        for (i = 1; i < s->np; i++)
            if (dc_better(s->fx[i], s->fx[at]))
                at = i;
        s->agreed = dc_restart_log_end(&s->log, s->fx[at], s->X + at * n) &&
                    s->stop_on_convergence;
    }
    return DC_OK;
}

static dc_stop stop(const void *sp)
{
    const state *s = sp;
    int64_t left = s->pa.budget - s->used;
    if (s->pa.n_free == 0)
        return DC_STOP_CONVERGED; /* nothing to search */
    if (s->converged &&
        (!s->pa.restarts || s->agreed || left < (int64_t)(MIN_GENERATIONS * s->pa.np_min)))
        return DC_STOP_CONVERGED;
    return DC_STOP_NONE;
}

const dc_engine_vt dc_eng_de = {&info, sizeof(state), init, ask, tell, stop, release, seed_point};
