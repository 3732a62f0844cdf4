/*
 * engine.h -- the interface every optimization engine implements.
 *
 * An engine is a struct behind a vtable: init / ask / tell / stop / release.
 * It sees the dimension, points in the unit cube [0,1]^n, and the values the
 * driver computed for them -- never the bounds' scaling, the expression, the
 * clock, the budget or Python.  The driver (driver.c) owns evaluation,
 * budget, time limit, target, callback, history and the best point; an
 * engine adds only its own convergence tests (stop).
 *
 * A batch asks for one of three things:
 *   DC_ASK_POINTS    f at rows points                       (rows evaluations)
 *   DC_ASK_GRADIENT  f and df/du at rows points (unit cube)  (rows evaluations;
 *                    exact by AD for programs, central differences for
 *                    callables, which the driver counts as 2n+1 each)
 *   DC_ASK_TERMS     for separable programs: G[k*n + j] = g_j at coordinate j
 *                    of row k, with f = c + sum_j g_j    (rows evaluations:
 *                    n term evaluations count as one evaluation)
 * Buffers in a batch belong to the engine.  The driver fills f (and grad or
 * terms), then calls tell with the same batch.  If the budget or the time
 * runs out mid-batch, the driver stops without calling tell.
 */
#ifndef DC_ENGINE_H
#define DC_ENGINE_H

#include "common/alloc.h"
#include "common/rng.h"
#include "decido.h"

enum { DC_ASK_POINTS, DC_ASK_GRADIENT, DC_ASK_TERMS };

/* A long computation inside a run (the hypervolume, thinning the archive, an
 * engine's survivor selection) checks the run's clock and stop requests
 * through its guard: it counts its work in rough units of a few operations
 * (dc_guard_spend) and every DC_GUARD_UNITS of them the driver's check runs
 * (a clock read, the monitor's flag, the interrupt hook).  Once the check
 * says stop, gave_up stays 1 and every guarded computation ends early with a
 * usable answer, each caller saying which (front.c, pareto.c).  A NULL guard
 * never stops anything (dc_hypervolume, tests). */
typedef struct dc_guard {
    int (*check)(void *data); /* nonzero: give up */
    void *data;
    uint64_t work;            /* units since the last check */
    int gave_up;
} dc_guard;

#define DC_GUARD_UNITS (1u << 16)

/* Count units of work; 1 when the computation must give up. */
static inline int dc_guard_spend(dc_guard *g, uint64_t units)
{
    if (!g)
        return 0;
    if (g->gave_up)
        return 1;
    g->work += units;
    if (g->work < DC_GUARD_UNITS)
        return 0;
    g->work = 0;
    g->gave_up = g->check(g->data) != 0;
    return g->gave_up;
}

/* 1 once the computation gave up (nothing counted). */
static inline int dc_guard_stopped(const dc_guard *g)
{
    return g && g->gave_up;
}

typedef struct dc_batch {
    int kind;
    const double *U; /* rows x n, in [0,1] (the driver projects anything outside) */
    size_t rows;
    size_t want;     /* rows the caller would like next (0: the engine's choice); a hint */
    double *f;       /* rows */
    double *grad;    /* DC_ASK_GRADIENT: rows x n, df/du */
    double *terms;   /* DC_ASK_TERMS: rows x n */
    /* several objectives: f holds rows x n_objectives values (minimized).  When the
     * engine gives violation (engine-owned, rows; DC_ASK_POINTS), the driver fills
     * violation[r] with row r's excess: 0 when feasible, else the constraint layer's
     * sum of violations beyond the tolerance (one objective too: f[r] is then the
     * feasibility-rule key, the objective itself for a feasible row) */
    double *violation;
} dc_batch;

/* What an engine knows about the problem (all in the unit cube). */
typedef struct dc_problem {
    size_t n;
    const dc_allocator *alloc;
    dc_rng *rng;               /* the run's generator; use it, or split it */
    int64_t budget;            /* max evaluations of the run */
    int exact_gradient;        /* gradients come from AD (cheap) */
    int separable;             /* DC_ASK_TERMS is available */
    int identical_terms;       /* ... and every g_j is the same function of u
                                  (identical terms and equal bounds) */
    const unsigned char *fixed; /* fixed[j]: lower == upper (nothing to search) */
    dc_structure_kind structure;
    const int64_t *group;      /* structure groups (n), or NULL */
    size_t n_groups;
    int stop_on_convergence;   /* the run's option: an engine that restarts
                                  stops once its restarts agree (below) */
    int constrained;           /* the driver's constraint layer ranks the values
                                  (constraints that are only bounds on one coordinate
                                  tighten the box instead and do not count) */
    int equalities;            /* ... and some of those are equalities */
    const double *levels;      /* levels[j] > 0: coordinate j is integer or discrete, its
                                  [0, 1] cut into levels[j] equal cells, one per value;
                                  0 for a real coordinate; NULL when every one is real */
    size_t n_objectives;       /* >= 2: several objectives (engines with
                                  DC_SUPPORTS_OBJECTIVES); 0 or 1: one */
    dc_guard *guard;           /* the run's guard for an engine's long computations
                                  (survivor selection); never NULL in a run */
} dc_problem;

typedef struct dc_engine_vt {
    const dc_engine_info *info;
    size_t state_size;
    /* params: the engine's options in info->options order, validated.  The
     * state arrives zeroed; release is called after init even when init
     * fails, so release must cope with a partly built state. */
    dc_status (*init)(void *state, const dc_problem *pb, const double *params);
    dc_status (*ask)(void *state, dc_batch *batch);
    dc_status (*tell)(void *state, const dc_batch *batch);
    /* DC_STOP_NONE to go on, DC_STOP_CONVERGED when the engine is done */
    dc_stop (*stop)(const void *state);
    void (*release)(void *state);
    /* Optional (may be NULL): start from, or take in, the point u (after
     * init, before the next ask).  Local methods start there; population
     * methods may put it in their population.  Used by composite engines. */
    dc_status (*seed_point)(void *state, const double *u);
} dc_engine_vt;

/* NaN counts as worse than any number: compare with this. */
static inline int dc_better(double a, double b)
{
    return a < b || (b != b && a == a);
}

/* Restarts that agree (restart_log.c).  An engine that restarts (a local
 * search from new points, a population that collapsed) logs the value and
 * the point (unit cube; its own coordinates, dim of them) each start ended
 * at.  Once DC_AGREE_RESTARTS consecutive starts have ended at the best
 * point logged so far -- the value within DC_AGREE_FTOL * max(1, |best|),
 * every coordinate within DC_AGREE_XTOL -- more restarts keep finding the
 * same minimum and, when the run's stop_on_convergence option is on, the
 * engine reports DC_STOP_CONVERGED.  A start that ends better (beyond the
 * tolerance) becomes the best and the count starts again; one that ends
 * elsewhere (worse, or as good at another point) breaks the run of
 * agreement.  NaN is worse than any number. */
#define DC_AGREE_RESTARTS 2
#define DC_AGREE_FTOL 1e-9
#define DC_AGREE_XTOL 1e-4

/* A proven floor (driver.c): for an unconstrained run of a compiled program,
 * interval arithmetic over the box bounds the objective below (bound.c).  A
 * best value within max(DC_FLOOR_ATOL, DC_FLOOR_RTOL * |floor|) of it cannot
 * improve meaningfully, and with stop_on_convergence the run ends there
 * (converged).  The tolerance stays below the 1e-8 at which the
 * benchmarks count a problem solved for floors up to 2.8e6 in magnitude, and
 * is 16 ulp of the floor beyond 2.8 in magnitude (the floor itself is a few
 * ulp below the exact bound: one ulp outward per operation). */
#define DC_FLOOR_ATOL 1e-14
#define DC_FLOOR_RTOL 3.6e-15

typedef struct dc_restart_log {
    const dc_allocator *alloc;
    size_t dim;
    double *x;      /* the best end point (dim) */
    double best;    /* its value */
    int64_t starts; /* starts logged */
    int64_t agree;  /* consecutive starts (after the best) that ended at it */
} dc_restart_log;

dc_status dc_restart_log_init(dc_restart_log *log, const dc_allocator *alloc, size_t dim);
/* Log the value and point a start ended at; 1 when the restarts now agree. */
int dc_restart_log_end(dc_restart_log *log, double value, const double *x);
void dc_restart_log_free(dc_restart_log *log); /* safe on a zeroed log */

/* The registry (registry.c; rows in engines.def). */
const dc_engine_vt *dc_engine_find(const char *id);
/* The id of the engine the `auto` engine chose (auto.c), given its state. */
const char *dc_auto_chosen(const void *state);

/* The driver's side of a dc_monitor (monitor.c).  begin claims the monitor
 * for one run and publishes a zeroed, running snapshot; it returns 0 when
 * another run holds the monitor.  publish is for the claiming run only; end
 * publishes the final snapshot (not running) and releases the claim. */
int dc_monitor_begin(dc_monitor *monitor);
void dc_monitor_publish(dc_monitor *monitor, int64_t evaluations, int64_t iterations, double best,
                        double elapsed, int running);
/* several objectives: the front's hypervolume and size, published with the next
 * dc_monitor_publish (the driver calls it just before) */
void dc_monitor_front(dc_monitor *monitor, double hypervolume, int64_t front_size);
void dc_monitor_end(dc_monitor *monitor, int64_t evaluations, int64_t iterations, double best,
                    double elapsed);

#endif
