/*
 * moea.c -- the multi-objective engine: NSGA-II's generational loop with
 * SMS-EMOA's hypervolume selection on the last front.
 *
 * Population of NP members; each generation makes NP offspring and keeps
 * the NP best of the 2 NP by constrained non-dominated sorting (pareto.c:
 * feasible before infeasible, smaller excess, then Pareto fronts).  The
 * front that does not fit whole is thinned by the `selection` rule:
 *   2 = hypervolume: the least exclusive contributor removed one at a time,
 *       each objective's best point kept (SMS-EMOA's rule, Beume, Naujoks &
 *       Emmerich, EJOR 2007, applied to a (NP + NP) generation instead of
 *       one offspring at a time: one batch per generation for the VM);
 *   1 = crowding distance (NSGA-II, Deb, Pratap, Agarwal & Meyarivan, IEEE
 *       TEC 2002);
 *   0 = automatic: hypervolume up to 3 objectives (exact contributions in
 *       O(k log k) each), crowding beyond.
 * Parents: binary tournaments by front, then crowding distance.  Variation
 * (Deb & Agrawal 1995; Deb & Goyal 1996, as pymoo's defaults): simulated
 * binary crossover of each pair with probability crossover_rate, each
 * coordinate with probability 0.5 (distribution index crossover_eta), the
 * children exchanged per coordinate with probability 0.5; then polynomial
 * mutation of each coordinate with probability mutation_rate (1/n by
 * default; index mutation_eta).  A child that repeats a parent (no
 * crossover or mutation changed it: 8 % of the offspring in 2-D) is mutated
 * again, at most NP times a generation (pymoo re-mates such duplicates).
 * All in the unit cube: the driver maps
 * integer and discrete coordinates to cells, so they take part unchanged.
 * With one objective it is a generational GA on the driver's (feasibility
 * rule) values.  It never converges on its own: the budget, the clock, the
 * callback or the monitor ends the run.
 * seed_point (start points): before the first generation each point
 * replaces the next member of the initial population; later it takes the
 * last offspring's place in the next generation.
 */
#include <math.h>
#include <string.h>

#include "engine/pareto.h"

enum { OPT_POPSIZE, OPT_ETA_C, OPT_P_C, OPT_ETA_M, OPT_P_M, OPT_SELECTION, N_OPTIONS };

static const dc_option_info options[N_OPTIONS] = {
    {"popsize", 100, 4, 100000, 1, "population size (and offspring per generation)"},
    {"crossover_eta", 15, 1, 200, 0, "distribution index of simulated binary crossover"},
    {"crossover_rate", 0.9, 0, 1, 0,
     "probability that a pair is crossed (each coordinate then with probability 0.5)"},
    {"mutation_eta", 20, 1, 200, 0, "distribution index of polynomial mutation"},
    {"mutation_rate", 0, 0, 1, 0, "probability that a coordinate is mutated (0 = 1/n)"},
    {"selection", 0, 0, 2, 1,
     "thinning of the last front: 1 = crowding distance (NSGA-II), 2 = hypervolume "
     "contributions (SMS-EMOA), 0 = automatic (2 up to 3 objectives, 1 beyond)"},
};

static const dc_engine_info info = {
    "moea", "Multi-objective evolution (NSGA-II with hypervolume selection)",
    "NSGA-II's generational loop (SBX, polynomial mutation, constrained non-dominated "
    "sorting) whose last front is thinned by exact hypervolume contributions (SMS-EMOA) up "
    "to 3 objectives and by crowding distance beyond.",
    "population", 0, options, N_OPTIONS,
    DC_SUPPORTS_CONSTRAINTS | DC_SUPPORTS_INTEGERS | DC_SUPPORTS_X0 | DC_SUPPORTS_OBJECTIVES};

typedef struct state {
    const dc_allocator *alloc;
    dc_rng *rng;
    size_t n, m, np, n_free;
    size_t *free_j;
    double eta_c, p_c, eta_m, p_m;
    int rule;
    dc_guard *guard;       /* the run's: selection gives up on it */
    double *X, *F, *E;     /* 2 NP rows: the population, then the offspring */
    double *Xt, *Ft, *Et;  /* NP rows: survivors being reordered */
    size_t *sel;           /* NP survivor indices */
    int *rank;             /* NP: front of each member */
    double *crowd;         /* NP */
    int evolving;
    size_t seeded;         /* start points placed in the initial population */
    double *pending;       /* n: a point for the next generation */
    int has_pending;
} state;

static dc_status init(void *sp, const dc_problem *pb, const double *p)
{
    state *s = sp;
    size_t j, n = pb->n, np = (size_t)p[OPT_POPSIZE], rows = 2 * np;
    s->alloc = pb->alloc;
    s->rng = pb->rng;
    s->guard = pb->guard;
    s->n = n;
    s->m = pb->n_objectives ? pb->n_objectives : 1;
    s->np = np;
    s->eta_c = p[OPT_ETA_C];
    s->p_c = p[OPT_P_C];
    s->eta_m = p[OPT_ETA_M];
    s->p_m = p[OPT_P_M] > 0 ? p[OPT_P_M] : 1.0 / (double)n;
    s->rule = p[OPT_SELECTION] == 0 ? dc_thin_default(s->m) : (int)p[OPT_SELECTION];
    s->free_j = dc_mem_alloc(s->alloc, n * sizeof(size_t));
    s->X = dc_mem_alloc(s->alloc, rows * n * sizeof(double));
    s->F = dc_mem_calloc(s->alloc, rows * s->m, sizeof(double));
    s->E = dc_mem_calloc(s->alloc, rows, sizeof(double));
    s->Xt = dc_mem_alloc(s->alloc, np * n * sizeof(double));
    s->Ft = dc_mem_alloc(s->alloc, np * s->m * sizeof(double));
    s->Et = dc_mem_alloc(s->alloc, np * sizeof(double));
    s->sel = dc_mem_alloc(s->alloc, np * sizeof(size_t));
    s->rank = dc_mem_calloc(s->alloc, np, sizeof(int));
    s->crowd = dc_mem_calloc(s->alloc, np, sizeof(double));
    s->pending = dc_mem_alloc(s->alloc, n * sizeof(double));
    if (!s->free_j || !s->X || !s->F || !s->E || !s->Xt || !s->Ft || !s->Et || !s->sel ||
        !s->rank || !s->crowd || !s->pending)
        return DC_ERR_NOMEM;
    for (j = 0; j < n; j++)
        if (!pb->fixed || !pb->fixed[j])
            s->free_j[s->n_free++] = j;
    for (j = 0; j < np * n; j++)
        s->X[j] = 0.5;
    for (j = 0; j < np; j++) {
        size_t q;
        for (q = 0; q < s->n_free; q++)
            s->X[j * n + s->free_j[q]] = dc_rng_uniform(s->rng);
    }
    return DC_OK;
}

static void release(void *sp)
{
    state *s = sp;
    const dc_allocator *a = s->alloc;
    size_t n = s->n, np = s->np, m = s->m;
    if (!a)
        return;
    dc_mem_free(a, s->free_j, n * sizeof(size_t));
    dc_mem_free(a, s->X, 2 * np * n * sizeof(double));
    dc_mem_free(a, s->F, 2 * np * m * sizeof(double));
    dc_mem_free(a, s->E, 2 * np * sizeof(double));
    dc_mem_free(a, s->Xt, np * n * sizeof(double));
    dc_mem_free(a, s->Ft, np * m * sizeof(double));
    dc_mem_free(a, s->Et, np * sizeof(double));
    dc_mem_free(a, s->sel, np * sizeof(size_t));
    dc_mem_free(a, s->rank, np * sizeof(int));
    dc_mem_free(a, s->crowd, np * sizeof(double));
    dc_mem_free(a, s->pending, n * sizeof(double));
}

/* ---- variation ---- */

static size_t tournament(state *s)
{
    size_t a = (size_t)dc_rng_below(s->rng, s->np), b = (size_t)dc_rng_below(s->rng, s->np);
    if (s->rank[a] != s->rank[b])
        return s->rank[a] < s->rank[b] ? a : b;
    return s->crowd[b] > s->crowd[a] ? b : a;
}

/* SBX spread factor for one side: beta from the distance to the bound */
static double sbx_betaq(double beta, double eta, double u)
{
    double alpha = 2.0 - pow(beta, -(eta + 1.0));
    if (u <= 1.0 / alpha)
        return pow(u * alpha, 1.0 / (eta + 1.0));
    return pow(1.0 / (2.0 - u * alpha), 1.0 / (eta + 1.0));
}

static double clip01(double v)
{
    return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

static void crossover(state *s, double *c1, double *c2)
{
    size_t q;
    if (dc_rng_uniform(s->rng) >= s->p_c)
        return;
    for (q = 0; q < s->n_free; q++) {
        size_t j = s->free_j[q];
        double y1, y2, u, b1, b2, lo, hi;
        if (dc_rng_uniform(s->rng) >= 0.5 || fabs(c1[j] - c2[j]) <= 1e-14)
            continue;
        y1 = fmin(c1[j], c2[j]);
        y2 = fmax(c1[j], c2[j]);
        u = dc_rng_uniform(s->rng);
        b1 = sbx_betaq(1.0 + 2.0 * y1 / (y2 - y1), s->eta_c, u);
        b2 = sbx_betaq(1.0 + 2.0 * (1.0 - y2) / (y2 - y1), s->eta_c, u);
        lo = clip01(0.5 * ((y1 + y2) - b1 * (y2 - y1)));
        hi = clip01(0.5 * ((y1 + y2) + b2 * (y2 - y1)));
        if (dc_rng_uniform(s->rng) < 0.5) {
            c1[j] = hi;
            c2[j] = lo;
        } else {
            c1[j] = lo;
            c2[j] = hi;
        }
    }
}

static void mutate(state *s, double *c)
{
    size_t q;
    double power = 1.0 / (s->eta_m + 1.0);
    for (q = 0; q < s->n_free; q++) {
        size_t j = s->free_j[q];
        double y = c[j], u, xy, val, dq;
        if (dc_rng_uniform(s->rng) >= s->p_m)
            continue;
        u = dc_rng_uniform(s->rng);
        if (u < 0.5) {
            xy = 1.0 - y;
            val = 2.0 * u + (1.0 - 2.0 * u) * pow(xy, s->eta_m + 1.0);
            dq = pow(val, power) - 1.0;
        } else {
            xy = y;
            val = 2.0 * (1.0 - u) + 2.0 * (u - 0.5) * pow(xy, s->eta_m + 1.0);
            dq = 1.0 - pow(val, power);
        }
        c[j] = clip01(y + dq);
    }
}

/* the child repeats one of its parents (a coordinate of the box it was not
 * changed in: no pair crossover, no mutation, or parents alike) */
static int repeats(const state *s, const double *c, const double *pa, const double *pb)
{
    size_t q, ja = 1, jb = 1;
    for (q = 0; q < s->n_free && (ja || jb); q++) {
        size_t j = s->free_j[q];
        ja = ja && c[j] == pa[j];
        jb = jb && c[j] == pb[j];
    }
    return ja || jb;
}

/* Two children of two tournament winners; a child that repeats a parent is
 * mutated again (a repeat would spend an evaluation on a known point: 8 % of
 * the offspring in 2-D), at most NP times a generation so that a collapsed
 * population still gets its offspring. */
static void make_offspring(state *s)
{
    size_t n = s->n, i, again = s->np;
    double *O = s->X + s->np * n;
    for (i = 0; i < s->np; i += 2) {
        double *c1 = O + i * n, *c2 = i + 1 < s->np ? O + (i + 1) * n : s->Xt; /* scratch */
        const double *pa = s->X + tournament(s) * n, *pb = s->X + tournament(s) * n;
        memcpy(c1, pa, n * sizeof(double));
        memcpy(c2, pb, n * sizeof(double));
        crossover(s, c1, c2);
        mutate(s, c1);
        mutate(s, c2);
        for (; again && repeats(s, c1, pa, pb); again--)
            mutate(s, c1);
        for (; again && i + 1 < s->np && repeats(s, c2, pa, pb); again--)
            mutate(s, c2);
    }
    if (s->has_pending) {
        memcpy(O + (s->np - 1) * n, s->pending, n * sizeof(double));
        s->has_pending = 0;
    }
}

/* ---- ask / tell ---- */

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    size_t off = s->evolving ? s->np : 0;
    if (s->evolving)
        make_offspring(s);
    b->kind = DC_ASK_POINTS;
    b->rows = s->np;
    b->U = s->X + off * s->n;
    b->f = s->F + off * s->m;
    b->violation = s->E + off;
    return DC_OK;
}

/* keep the NP best of the k rows (population and offspring), in selection order */
static dc_status survive(state *s, size_t k)
{
    size_t q, n = s->n, m = s->m;
    dc_status st = dc_pareto_select(s->alloc, s->guard, s->F, s->E, k, m, s->np, s->rule,
                                    s->sel, s->rank, s->crowd);
    if (st)
        return st;
    for (q = 0; q < s->np; q++) {
        memcpy(s->Xt + q * n, s->X + s->sel[q] * n, n * sizeof(double));
        memcpy(s->Ft + q * m, s->F + s->sel[q] * m, m * sizeof(double));
        s->Et[q] = s->E[s->sel[q]];
    }
    memcpy(s->X, s->Xt, s->np * n * sizeof(double));
    memcpy(s->F, s->Ft, s->np * m * sizeof(double));
    memcpy(s->E, s->Et, s->np * sizeof(double));
    return DC_OK;
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    (void)b;
    if (!s->evolving) {
        s->evolving = 1;
        return survive(s, s->np);
    }
    return survive(s, 2 * s->np);
}

static dc_stop stop(const void *sp)
{
    const state *s = sp;
    return s->n_free == 0 ? DC_STOP_CONVERGED : DC_STOP_NONE;
}

static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    size_t q;
    double *dst = s->evolving ? s->pending : s->X + (s->seeded % s->np) * s->n;
    for (q = 0; q < s->n; q++)
        dst[q] = 0.5;
    for (q = 0; q < s->n_free; q++) {
        size_t j = s->free_j[q];
        dst[j] = clip01(u[j] != u[j] ? 0.0 : u[j]);
    }
    if (s->evolving)
        s->has_pending = 1;
    else
        s->seeded++;
    return DC_OK;
}

const dc_engine_vt dc_eng_moea = {&info, sizeof(state), init, ask, tell, stop, release,
                                  seed_point};
