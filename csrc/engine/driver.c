/*
 * driver.c -- the one loop every engine runs in.
 *
 *   validate (driver_check.c) -> build (buffers, options, the box, the
 *   problem, init engine) -> loop { ask; evaluate (driver_eval.c: scaled to
 *   the bounds, within budget and time); tell; callback; monitor; stop
 *   tests } -> finish (the result) -> release
 *
 * The driver keeps the best point itself, so a run cut short by the budget,
 * the clock, the target, the callback or the monitor still returns the best
 * point seen.  A monitor (monitor.c) gets a snapshot after every iteration
 * and its stop flag is read before the first iteration and after each one.
 * Values are minimized internally (maximize negates them); NaN is worse than
 * any number.  When the engine converges the run ends, unless the run's
 * option stop_on_convergence is 0: then the engine starts again until the
 * budget, clock or target ends the run.  Every evaluated point lies within the bounds: engines work in
 * [0,1]^n and the driver projects and scales.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/driver_check.h"
#include "engine/driver_eval.h"
#include "common/alloc.h"
#include "common/error.h"

#define DEFAULT_HISTORY 512u
#define ALM_MAX_ROUNDS 100

static const char *const stop_names[DC_STOP_COUNT] = {
    [DC_STOP_NONE] = "running",
    [DC_STOP_CONVERGED] = "converged",
    [DC_STOP_TARGET] = "target_reached",
    [DC_STOP_MAX_EVALUATIONS] = "max_evaluations",
    [DC_STOP_TIME_LIMIT] = "time_limit",
    [DC_STOP_CALLBACK] = "stopped",
    [DC_STOP_ERROR] = "error",
    [DC_STOP_MONITOR] = "stopped",
};

const char *dc_stop_name(dc_stop stop)
{
    if ((unsigned)stop >= (unsigned)DC_STOP_COUNT || !stop_names[stop])
        return "running";
    return stop_names[stop];
}

void dc_run_init(dc_run *run)
{
    memset(run, 0, sizeof *run);
}

static double floor_tolerance(const dc_driver *d)
{
    return fmax(DC_FLOOR_ATOL, DC_FLOOR_RTOL * fabs(d->floor));
}

/* The objective's range over the box (bound.c), for an unconstrained program
 * on real or integer coordinates whose run stops on convergence: its lower
 * end (upper when maximizing) is a floor no point can beat. */
static dc_status set_floor(dc_driver *d)
{
    const dc_run *run = d->run;
    double f_lo, f_hi;
    size_t j;
    dc_status st;
    if (d->multi || !run->program || d->pb.constrained || !d->pb.stop_on_convergence)
        return DC_OK;
    for (j = 0; j < d->n; j++)
        if (d->kind[j] == K_DISCRETE)
            return DC_OK;
    if ((st = dc_program_range(run->program, d->lo, d->hi, d->alloc, &f_lo, &f_hi)))
        return st;
    d->floor = run->maximize ? -f_hi : f_lo;
    d->has_floor = isfinite(d->floor);
    return DC_OK;
}

/* The best value is as good as the floor allows: nothing left to improve. */
static int reached_floor(const dc_driver *d)
{
    return d->has_floor && d->have_best && d->best_excess == 0.0 &&
           d->best - d->floor <= floor_tolerance(d);
}

static void describe(dc_driver *d)
{
    dc_result *r = d->res;
    switch (d->stop) {
    case DC_STOP_CONVERGED:
        if (d->at_floor)
            snprintf(r->message, sizeof r->message,
                     "converged: %.10g is within %.3g of a proven bound of the objective "
                     "over the box", r->fun, floor_tolerance(d));
        else
            snprintf(r->message, sizeof r->message, "converged: %s's convergence test was met",
                     d->vt->info->id);
        break;
    case DC_STOP_TARGET:
        snprintf(r->message, sizeof r->message, "target reached: %.10g is at least as good as %.10g",
                 r->fun, d->run->target);
        break;
    case DC_STOP_MAX_EVALUATIONS:
        snprintf(r->message, sizeof r->message, "used the whole budget of %lld evaluations",
                 (long long)d->run->max_evaluations);
        break;
    case DC_STOP_TIME_LIMIT:
        snprintf(r->message, sizeof r->message, "stopped at the time limit of %g s",
                 d->run->time_limit);
        break;
    case DC_STOP_CALLBACK:
        snprintf(r->message, sizeof r->message, "stopped by the callback");
        break;
    case DC_STOP_MONITOR:
        snprintf(r->message, sizeof r->message, "stopped by its monitor");
        break;
    default:
        snprintf(r->message, sizeof r->message, "stopped: the objective or callback failed");
        break;
    }
}

/* The engine has converged.  With stop_on_convergence the run ends there;
 * without it the engine starts again (from a uniform random point when it
 * takes one, planning for the budget left), as long as it evaluated
 * something since its last start.
 * *again: 1 when the run goes on. */
static dc_status converged_or_restart(dc_driver *d, int *again)
{
    const dc_engine_vt *vt = d->vt;
    void *state = d->state;
    dc_problem *pb = &d->pb;
    dc_status st;
    size_t j;
    *again = 0;
    d->stop = DC_STOP_CONVERGED;
    if (pb->stop_on_convergence || d->evals == d->start_evals)
        return DC_OK;
    if (vt->release)
        vt->release(state);
    memset(state, 0, vt->state_size);
    pb->budget = d->run->max_evaluations - d->evals; /* a new start plans for what is left */
    if ((st = vt->init(state, pb, d->params)))
        return st;
    if (vt->seed_point) {
        if (!dc_driver_reserve_x(d, 1))
            return DC_ERR_NOMEM;
        for (j = 0; j < d->n; j++)
            d->X[j] = dc_rng_uniform(pb->rng);
        if ((st = vt->seed_point(state, d->X)))
            return st;
    }
    d->start_evals = d->evals;
    d->stop = DC_STOP_NONE;
    *again = 1;
    return DC_OK;
}

/* Evaluate the start points (counted) and start the engine from the best (with
 * several objectives: from each). */
static dc_status start_points(dc_driver *d, dc_error *err)
{
    const dc_engine_vt *vt = d->vt;
    size_t rows = d->run->n_x0, r;
    double *f = dc_mem_alloc(d->alloc, rows * d->m * sizeof(double));
    dc_status st;
    if (!f || !dc_driver_reserve_x(d, rows)) {
        dc_mem_free(d->alloc, f, rows * d->m * sizeof(double));
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    }
    memcpy(d->X, d->run->x0, rows * d->n * sizeof(double));
    st = dc_driver_eval_x(d, d->X, rows, f);
    dc_mem_free(d->alloc, f, rows * d->m * sizeof(double));
    if (st)
        return dc_set_error(err, st, 0, 0, "evaluation failed (%s)", dc_status_code(st));
    for (r = 0; d->multi && r < rows && !d->stop; r++) { /* each seeds the population */
        dc_driver_unscale(d, d->run->x0 + r * d->n, d->xbuf);
        if ((st = vt->seed_point(d->state, d->xbuf)))
            return dc_set_error(err, st, 0, 0, "engine '%s' failed (%s)", vt->info->id,
                                dc_status_code(st));
    }
    if (d->multi)
        return DC_OK;
    if (d->have_best && !d->stop) {
        dc_driver_unscale(d, d->best_x, d->xbuf);
        if ((st = vt->seed_point(d->state, d->xbuf)))
            return dc_set_error(err, st, 0, 0, "engine '%s' failed (%s)", vt->info->id,
                                dc_status_code(st));
    }
    return DC_OK;
}

/* A constraint exactly a*x_j + b in one coordinate (dc_structure_affine1) is
 * a bound: d->lo and d->hi (from the run's bounds) are tightened to it, when
 * the constraint holds at the new bound and the interval keeps a value the
 * coordinate can take.  Returns the number of constraints that are not such
 * bounds (they still rank every point; a bound's constraint holds in the box);
 * *equalities gets 1 when one of those is an equality. */
static size_t tighten_bounds(dc_driver *d, int *equalities)
{
    const dc_run *run = d->run;
    size_t k, j, q, left = 0;
    for (k = 0; k < run->n_constraints; k++) {
        double a, b, t, lo, hi, g;
        int below, above, step;
        if (!dc_structure_affine1(run->constraints[k], &j, &a, &b)) {
            left++;
            *equalities |= run->senses[k] == DC_CONSTRAINT_EQ;
            continue;
        }
        t = -b / a;
        /* x_j <= t (below) and/or x_j >= t (above) */
        below = run->senses[k] == DC_CONSTRAINT_EQ || (run->senses[k] == DC_CONSTRAINT_LE) == (a > 0);
        above = run->senses[k] == DC_CONSTRAINT_EQ || !below;
        lo = above && t > d->lo[j] ? t : d->lo[j];
        hi = below && t < d->hi[j] ? t : d->hi[j];
        for (q = 0; q < d->n; q++)
            d->xbuf[q] = run->lower[q];
        /* the constraint must hold at the new bounds (rounding); else step inward */
        for (step = 0; step < 4; step++) {
            double lo_v, hi_v;
            d->xbuf[j] = lo;
            if (dc_eval(run->constraints[k], d->cons.ws[k], d->xbuf, &g))
                break;
            lo_v = dc_cons_violation(run->senses[k], g);
            d->xbuf[j] = hi;
            if (dc_eval(run->constraints[k], d->cons.ws[k], d->xbuf, &g))
                break;
            hi_v = dc_cons_violation(run->senses[k], g);
            if (lo_v <= d->cons.tol && hi_v <= d->cons.tol)
                break;
            if (lo_v > d->cons.tol)
                lo = nextafter(lo, INFINITY);
            if (hi_v > d->cons.tol)
                hi = nextafter(hi, -INFINITY);
        }
        if (step == 4 || !(lo <= hi) || (run->integer && run->integer[j] && ceil(lo) > floor(hi))) {
            left++;
            *equalities |= run->senses[k] == DC_CONSTRAINT_EQ;
            continue;
        }
        if (run->n_values && run->n_values[j]) {
            size_t v, inside = 0;
            for (v = 0; v < run->n_values[j]; v++)
                inside += run->values[j][v] >= lo && run->values[j][v] <= hi;
            if (!inside) {
                left++;
                *equalities |= run->senses[k] == DC_CONSTRAINT_EQ;
                continue;
            }
        }
        d->lo[j] = lo;
        d->hi[j] = hi;
    }
    return left;
}

/* The multipliers from the best Lagrangian point since the last update. */
static void alm_update(dc_driver *d)
{
    if (!d->alm_have)
        return;
    dc_cons_update(&d->cons, d->alm_g);
    d->alm_prev_f = d->alm_f;
    d->alm_have = 0;
    d->alm_rounds++;
}

/* A gradient engine converged on the Lagrangian: 1 when the run goes on with
 * new multipliers from that point (not yet feasible, or its value still
 * moving), 0 when the constrained problem is solved too. */
static int alm_restart(dc_driver *d)
{
    const dc_engine_vt *vt = d->vt;
    double f = d->alm_f;
    int feasible;
    if (!d->cons.m || d->last_kind != DC_ASK_GRADIENT || !d->alm_have || !vt->seed_point ||
        d->alm_rounds >= ALM_MAX_ROUNDS || d->evals >= d->run->max_evaluations)
        return 0;
    feasible = dc_cons_excess(&d->cons, d->alm_g) == 0.0;
    if (feasible && d->alm_rounds > 0 &&
        fabs(f - d->alm_prev_f) <= 1e-9 * (1.0 + fabs(f)))
        return 0;
    memcpy(d->xbuf, d->alm_u, d->n * sizeof(double));
    alm_update(d);
    return vt->seed_point(d->state, d->xbuf) == DC_OK;
}

/* ---- a run: build, loop, finish ---- */

/* The buffers that live as long as the run, in the run's arena (d->arena):
 * run once to count, once to carve (dc_arena_take).  Zeroed. */
static void layout(dc_driver *d, dc_arena *a)
{
    const dc_run *run = d->run;
    size_t n = d->n, m = run->n_constraints;
    d->state = dc_arena_take(a, 1, d->vt->state_size);
    d->params = dc_arena_take(a, d->vt->info->n_options + 1, sizeof(double));
    d->span = dc_arena_take(a, n, sizeof(double));
    d->lo = dc_arena_take(a, n, sizeof(double));
    d->hi = dc_arena_take(a, n, sizeof(double));
    d->levels = dc_arena_take(a, n, sizeof(double));
    d->xbuf = dc_arena_take(a, n, sizeof(double));
    d->best_x = dc_arena_take(a, n, sizeof(double));
    d->group = dc_arena_take(a, n, sizeof(int64_t));
    d->kind = dc_arena_take(a, n, 1);
    d->frozen = dc_arena_take(a, n, 1);
    d->fixed = dc_arena_take(a, n, 1);
    d->fd = run->program ? NULL : dc_arena_take(a, n + 2 * FD_CHUNK, sizeof(double));
    d->best_g = dc_arena_take(a, m, sizeof(double));
    d->alm_g = dc_arena_take(a, 2 * m, sizeof(double));
    d->alm_u = m ? dc_arena_take(a, n, sizeof(double)) : NULL;
}

/* The run's arena (the driver's buffers, the engine's state and options) and
 * the result's arrays. */
static dc_status allocate(dc_driver *d, dc_error *err)
{
    const dc_run *run = d->run;
    dc_result *res = d->res;
    size_t n = d->n;
    res->alloc = *d->alloc;
    res->n = n;
    res->history_cap = run->history_capacity ? run->history_capacity : DEFAULT_HISTORY;
    if (res->history_cap < 4)
        res->history_cap = 4;
    layout(d, &d->arena);
    if (!dc_arena_open(&d->arena, d->alloc))
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    layout(d, &d->arena);
    res->x = dc_mem_alloc(d->alloc, n * sizeof(double));
    res->history = dc_mem_alloc(d->alloc, (res->history_cap + 1) * sizeof(dc_history_entry));
    if (!res->x || !res->history)
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    return DC_OK;
}

/* The constraint layer and the buffers that follow the best point's and the
 * Lagrangian's constraint values. */
static dc_status allocate_constraints(dc_driver *d, dc_error *err)
{
    const dc_run *run = d->run;
    size_t m = run->n_constraints;
    if (!m)
        return DC_OK;
    d->res->g = dc_mem_calloc(d->alloc, m, sizeof(double));
    d->res->n_g = m;
    if (!d->res->g || dc_cons_init(&d->cons, run, d->alloc))
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    return DC_OK;
}

/* The box the engine searches: the bounds tightened by constraints on one
 * coordinate, then each coordinate's kind, start and cells.  Returns the
 * number of constraints left (tighten_bounds). */
static size_t set_box(dc_driver *d, int *equalities)
{
    const dc_run *run = d->run;
    size_t j, general;
    memcpy(d->lo, run->lower, d->n * sizeof(double));
    memcpy(d->hi, run->upper, d->n * sizeof(double));
    general = tighten_bounds(d, equalities);
    for (j = 0; j < d->n; j++) {
        size_t nv = run->n_values ? run->n_values[j] : 0;
        if (nv) {
            size_t first = 0, count = 0, v;
            for (v = 0; v < nv; v++)
                if (run->values[j][v] >= d->lo[j] && run->values[j][v] <= d->hi[j] && !count++)
                    first = v;
            d->kind[j] = K_DISCRETE;
            d->lo[j] = (double)first;
            d->span[j] = (double)count; /* one cell per value */
        } else if (run->integer && run->integer[j]) {
            d->kind[j] = K_INTEGER;
            d->lo[j] = ceil(d->lo[j]);
            d->span[j] = floor(d->hi[j]) - d->lo[j] + 1.0; /* one cell per integer */
        } else {
            d->kind[j] = K_REAL;
            d->span[j] = d->hi[j] - d->lo[j];
        }
        d->fixed[j] = d->kind[j] == K_REAL ? d->span[j] == 0.0 : d->span[j] == 1.0;
        d->levels[j] = d->kind[j] == K_REAL ? 0.0 : d->span[j];
        d->frozen[j] = d->fixed[j] || d->kind[j] != K_REAL;
    }
    return general;
}

/* What the engine is told about the problem (d->pb): its size, budget and
 * generator, and for a program without general constraints its structure. */
static void set_problem(dc_driver *d, size_t general, int equalities)
{
    const dc_run *run = d->run;
    dc_problem *pb = &d->pb;
    size_t j, n = d->n;
    dc_rng_seed(&d->rng, run->seed);
    memset(pb, 0, sizeof *pb);
    pb->n = n;
    pb->alloc = d->alloc;
    pb->rng = &d->rng;
    pb->budget = run->max_evaluations;
    pb->fixed = d->fixed;
    pb->structure = DC_STRUCT_GENERAL;
    pb->stop_on_convergence = d->run_params[RUN_OPT_STOP_ON_CONVERGENCE] != 0.0;
    pb->exact_gradient = run->program != NULL;
    pb->constrained = general > 0;
    pb->equalities = equalities;
    pb->n_objectives = run->n_objectives;
    pb->guard = &d->guard;
    for (j = 0; j < n; j++)
        if (d->kind[j] != K_REAL)
            pb->levels = d->levels;
    if (run->program && !pb->constrained) { /* constraints couple everything (bounds do not) */
        pb->exact_gradient = 1;
        pb->structure = dc_structure_kind_of(run->program);
        pb->separable = pb->structure == DC_STRUCT_SEPARABLE;
        pb->identical_terms = pb->separable && dc_structure_identical_terms(run->program);
        for (j = 1; j < n && pb->identical_terms; j++)
            if (d->lo[j] != d->lo[0] || d->hi[j] != d->hi[0] || d->kind[j] != d->kind[0])
                pb->identical_terms = 0;
        pb->n_groups = dc_structure_groups(run->program, d->group);
        pb->group = d->group;
    }
}

/* Everything a run needs, up to the engine's init (the clock starts there). */
static dc_status build(dc_driver *d, dc_error *err)
{
    const dc_run *run = d->run;
    const dc_engine_vt *vt = d->vt;
    dc_status st;
    size_t general;
    int equalities = 0;
    if ((st = allocate(d, err)))
        return st;
    if ((st = dc_driver_read_options(vt, run, d->params, d->run_params, err)))
        return st;
    if ((st = allocate_constraints(d, err)))
        return st;
    if (d->multi && dc_front_init(&d->front, run, d->alloc, &d->guard))
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    general = set_box(d, &equalities);
    if (run->program) {
        d->ws = dc_workspace_new(run->program, d->alloc);
        if (!d->ws)
            return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    }
    set_problem(d, general, equalities);
    if ((st = set_floor(d)))
        return dc_set_error(err, st, 0, 0, "out of memory");
    d->t0 = dc_driver_now();
    d->deadline = run->time_limit > 0 ? d->t0 + run->time_limit : 0.0;
    dc_driver_guard_init(d);
    d->started = 1; /* release runs even after a failed init (the state is zeroed) */
    if ((st = vt->init(d->state, &d->pb, d->params)))
        return dc_set_error(err, st, 0, 0, "engine '%s' could not start (%s)", vt->info->id,
                            dc_status_code(st));
    return DC_OK;
}

/* The batch the engine asked for, evaluated. */
static dc_status evaluate(dc_driver *d, dc_batch *b)
{
    if (d->cons.m && d->last_kind == DC_ASK_GRADIENT && b->kind != DC_ASK_GRADIENT)
        alm_update(d); /* a gradient phase (a composite's polish) ended */
    d->last_kind = b->kind;
    if (d->multi && b->kind != DC_ASK_POINTS)
        return DC_ERR_ARGUMENT; /* gradients and terms are of one objective */
    if (b->kind == DC_ASK_GRADIENT)
        return dc_driver_eval_gradients(d, b);
    if (b->kind == DC_ASK_TERMS)
        return dc_driver_eval_terms(d, b);
    return dc_driver_eval_points(d, b);
}

/* After an iteration: the interrupt hook, the callback, the monitor, the clock. */
static void after_iteration(dc_driver *d)
{
    const dc_run *run = d->run;
    if (run->interrupt && run->interrupt(run->interrupt_data))
        d->stop = DC_STOP_ERROR;
    if (!d->stop && run->callback && d->have_best) {
        dc_progress pr;
        int rc;
        pr.evaluations = d->evals;
        pr.iterations = d->iters;
        pr.best = dc_driver_shown_best(d);
        pr.best_x = d->multi ? NULL : d->best_x;
        pr.hypervolume = d->multi ? d->front.hypervolume : NAN;
        pr.front_size = d->multi ? (int64_t)d->front.archive.size : 0;
        pr.elapsed = dc_driver_now() - d->t0;
        rc = run->callback(run->callback_data, &pr);
        if (rc)
            d->stop = rc < 0 ? DC_STOP_ERROR : DC_STOP_CALLBACK;
    }
    if (!d->stop && !dc_driver_monitor_says_stop(d))
        dc_driver_out_of_time(d);
}

/* ask; evaluate; tell; until a stop test ends the run. */
static dc_status loop(dc_driver *d, dc_error *err)
{
    const dc_run *run = d->run;
    const dc_engine_vt *vt = d->vt;
    dc_status st;
    int again;
    if (run->monitor && dc_monitor_stop_requested(run->monitor))
        d->stop = DC_STOP_MONITOR; /* stopped before it started */
    if (!d->stop && run->n_x0 && (st = start_points(d, err)))
        return st;
    while (!d->stop) {
        dc_batch b;
        memset(&b, 0, sizeof b);
        if ((d->stop = vt->stop(d->state)) == DC_STOP_CONVERGED && alm_restart(d))
            d->stop = DC_STOP_NONE;
        if (d->stop == DC_STOP_NONE && (st = vt->ask(d->state, &b)))
            return dc_set_error(err, st, 0, 0, "engine '%s' failed (%s)", vt->info->id,
                                dc_status_code(st));
        if (d->stop == DC_STOP_CONVERGED || (d->stop == DC_STOP_NONE && b.rows == 0)) {
            if ((st = converged_or_restart(d, &again)))
                return dc_set_error(err, st, 0, 0, "engine '%s' could not restart (%s)",
                                    vt->info->id, dc_status_code(st));
            if (again)
                continue;
        }
        if (d->stop)
            break;
        if ((st = evaluate(d, &b)))
            return dc_set_error(err, st, 0, 0, "evaluation failed (%s)", dc_status_code(st));
        if (d->have_best && run->has_target && d->best <= d->target && d->best_excess == 0.0) {
            d->stop = DC_STOP_TARGET;
            break;
        }
        if (d->stop)
            break;
        if ((st = vt->tell(d->state, &b)))
            return dc_set_error(err, st, 0, 0, "engine '%s' failed (%s)", vt->info->id,
                                dc_status_code(st));
        d->iters++;
        if (d->multi && (st = dc_driver_measure_front(d)))
            return dc_set_error(err, st, 0, 0, "out of memory");
        after_iteration(d);
        if (!d->stop && reached_floor(d)) { /* after the iteration: the engine saw it */
            d->stop = DC_STOP_CONVERGED;
            d->at_floor = 1;
        }
    }
    return DC_OK;
}

/* The result: the best point (the centre when the run was cut short before
 * any evaluation), its value and constraints, counts, history, message. */
static dc_status finish(dc_driver *d)
{
    const dc_run *run = d->run;
    dc_result *res = d->res;
    dc_status st;
    size_t j, n = d->n;
    if (!d->have_best && d->stop != DC_STOP_ERROR && d->evals < run->max_evaluations) {
        /* nothing evaluated yet (a run cut short at once): the centre */
        double f[DC_MAX_OBJECTIVES], *u = d->best_x;
        for (j = 0; j < n; j++)
            u[j] = 0.5;
        dc_driver_scale_rows(d, u, 1, d->xbuf);
        if ((st = dc_driver_evaluate_rows(d, d->xbuf, 1, f)))
            return st;
        if (d->stop != DC_STOP_ERROR) {
            d->evals++;
            if ((st = dc_driver_judge_rows(d, d->xbuf, 1, f)))
                return st;
        }
    }
    d->front.evals = d->evals;
    if (d->multi && (st = dc_front_result(&d->front, res)))
        return st;
    memcpy(res->x, d->multi && res->n_pareto ? res->pareto_x : d->best_x, n * sizeof(double));
    res->fun = dc_driver_shown_best(d);
    res->evaluations = d->evals;
    res->iterations = d->iters;
    res->gradients = d->grads;
    res->stop = d->stop;
    res->elapsed = dc_driver_now() - d->t0;
    snprintf(res->engine_chosen, sizeof res->engine_chosen, "%s",
             strcmp(d->vt->info->id, "auto") == 0 ? dc_auto_chosen(d->state) : d->vt->info->id);
    if (res->n_history == 0 || res->history[res->n_history - 1].evaluations != d->evals) {
        res->history[res->n_history].evaluations = d->evals;
        res->history[res->n_history].best = d->multi ? res->hypervolume : res->fun;
        res->n_history++;
    } else if (d->multi && d->front.restored) { /* the last entry is the result's */
        res->history[res->n_history - 1].best = res->hypervolume;
    }
    res->feasible = 1;
    if (d->multi) {
        res->feasible = res->n_pareto > 0 && res->pareto_feasible[0];
        res->max_violation = res->n_pareto ? res->pareto_violation[0] : 0.0;
    } else if (d->cons.m) {
        memcpy(res->g, d->best_g, d->cons.m * sizeof(double));
        res->max_violation = dc_cons_max_violation(&d->cons, d->best_g);
        res->feasible = d->have_best && d->best_excess == 0.0;
    }
    describe(d);
    if (d->multi && d->front.unmeasured) {
        size_t used = strlen(res->message);
        snprintf(res->message + used, sizeof res->message - used,
                 "; the hypervolume was not measured: computing it exactly for %zu points "
                 "of %zu objectives did not end within %g s after the %s",
                 res->n_pareto, d->m, DC_GUARD_GRACE,
                 d->stop_seen ? "stop request" : "time limit");
    }
    if (d->multi && d->front.restored) {
        size_t used = strlen(res->message);
        snprintf(res->message + used, sizeof res->message - used,
                 "; the front is the archive held after %lld evaluations: hypervolume %.6g "
                 "at the %s reference point, the final archive's %.6g",
                 (long long)d->front.best_evals, d->front.best_hv,
                 d->front.have_ref ? "given" : "fixed", d->front.final_hv);
    }
    if (!res->feasible) {
        size_t used = strlen(res->message);
        snprintf(res->message + used, sizeof res->message - used,
                 "; no feasible point found (least maximum violation %.6g)",
                 res->max_violation);
    }
    return DC_OK;
}

/* Free what build allocated (the result too when the run failed: st). */
static void release(dc_driver *d, dc_status st)
{
    const dc_run *run = d->run;
    const dc_engine_vt *vt = d->vt;
    if (d->watched && d->multi && st == DC_OK)
        dc_monitor_front(run->monitor, d->res->hypervolume, (int64_t)d->res->n_pareto);
    if (d->watched)
        dc_monitor_end(run->monitor, d->evals, d->iters, dc_driver_shown_best(d),
                       st == DC_OK ? d->res->elapsed : d->started ? dc_driver_now() - d->t0 : 0.0);
    if (d->started && vt->release)
        vt->release(d->state);
    dc_arena_close(&d->arena, d->alloc);
    dc_cons_free(&d->cons);
    dc_mem_free(d->alloc, d->X, d->x_cap * sizeof(double));
    dc_workspace_free(d->ws);
    dc_front_free(&d->front);
    if (st)
        dc_result_free(d->res);
}

dc_status dc_optimize(const char *engine, const dc_run *run, dc_result *res, dc_error *error)
{
    dc_error scratch;
    dc_error *err = error ? error : &scratch;
    const dc_engine_vt *vt;
    dc_driver d;
    dc_status st;

    memset(err, 0, sizeof *err);
    if (!res)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL result");
    memset(res, 0, sizeof *res);
    if ((st = dc_driver_validate(run, err)))
        return st;
    vt = dc_engine_find(engine ? engine : dc_engine_default());
    if (!vt)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "unknown engine '%.40s'",
                            engine ? engine : "(null)");
    if (vt->info->max_dims && run->n > vt->info->max_dims)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "engine '%s' handles at most %zu dimensions, got %zu", vt->info->id,
                            vt->info->max_dims, run->n);
    if ((st = dc_driver_check_support(vt, run, err)))
        return st;
    memset(&d, 0, sizeof d);
    d.run = run;
    d.vt = vt;
    d.alloc = run->allocator ? run->allocator : dc_mem_default();
    d.n = run->n;
    d.res = res;
    d.chunk = run->program || run->objectives ? 64 : 1;
    d.multi = run->n_objectives > 0;
    d.m = d.multi ? run->n_objectives : 1;
    d.target = run->maximize ? -run->target : run->target;
    if (run->monitor) {
        if (!dc_monitor_begin(run->monitor))
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "the monitor is already watching another run");
        d.watched = 1; /* from here on every exit goes through release */
    }
    if (!(st = build(&d, err)) && !(st = loop(&d, err)))
        st = finish(&d);
    release(&d, st);
    return st;
}

void dc_result_free(dc_result *r)
{
    if (!r || !r->alloc.realloc)
        return;
    dc_mem_free(&r->alloc, r->x, r->n * sizeof(double));
    r->x = NULL;
    dc_mem_free(&r->alloc, r->history, (r->history_cap + 1) * sizeof(dc_history_entry));
    r->history = NULL;
    dc_mem_free(&r->alloc, r->g, r->n_g * sizeof(double));
    r->g = NULL;
    dc_front_result_free(r);
}
