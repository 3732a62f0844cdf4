/*
 * driver.c -- the one loop every engine runs in.
 *
 *   validate -> init engine -> repeat { ask; evaluate (scaled to the bounds,
 *   within budget and time); tell; callback; monitor; stop tests } -> result
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
#include <time.h>

#include "engine/engine.h"
#include "expr/expr.h"

#define DEFAULT_HISTORY 512u
#define FD_CHUNK 32u /* coordinates per batch of finite differences */

typedef struct driver {
    const dc_run *run;
    const dc_engine_vt *vt;
    const dc_allocator *alloc;
    size_t n;
    double *span;            /* upper - lower */
    unsigned char *fixed;
    dc_workspace *ws;
    double *X;               /* scaled rows */
    size_t x_cap;            /* doubles */
    double *best_x;          /* in x space */
    double best;             /* internal (minimization) sense */
    int have_best;
    int64_t evals, iters, grads;
    double t0, deadline;
    double target;           /* internal sense */
    dc_result *res;
    dc_stop stop;
    size_t chunk;            /* rows evaluated between clock checks */
    double *fd;              /* 2n+1 values for central differences */
} driver;

static double now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *dc_stop_name(dc_stop stop)
{
    switch (stop) {
    case DC_STOP_CONVERGED: return "converged";
    case DC_STOP_TARGET: return "target_reached";
    case DC_STOP_MAX_EVALUATIONS: return "max_evaluations";
    case DC_STOP_TIME_LIMIT: return "time_limit";
    case DC_STOP_CALLBACK: return "stopped";
    case DC_STOP_MONITOR: return "stopped";
    case DC_STOP_ERROR: return "error";
    default: return "running";
    }
}

void dc_run_init(dc_run *run)
{
    memset(run, 0, sizeof *run);
}

static double user_value(const driver *d, double v)
{
    return d->run->maximize ? -v : v;
}

static void history_push(driver *d, double value)
{
    dc_result *r = d->res;
    if (r->n_history == r->history_cap) {
        /* full: keep every other entry (the first and the newest survive) */
        size_t k, w = 0;
        for (k = 0; k < r->n_history; k += 2)
            r->history[w++] = r->history[k];
        r->n_history = w;
    }
    r->history[r->n_history].evaluations = d->evals;
    r->history[r->n_history].best = user_value(d, value);
    r->n_history++;
}

static void consider(driver *d, const double *x, double f)
{
    if (!d->have_best || dc_better(f, d->best)) {
        d->best = f;
        d->have_best = 1;
        memcpy(d->best_x, x, d->n * sizeof(double));
        history_push(d, f);
    }
}

/* u in [0,1]^n -> x in the box (projected; fixed coordinates exact) */
static void scale_rows(const driver *d, const double *U, size_t rows, double *X)
{
    const double *lo = d->run->lower, *hi = d->run->upper;
    size_t r, j, n = d->n;
    for (r = 0; r < rows; r++) {
        const double *u = U + r * n;
        double *x = X + r * n;
        for (j = 0; j < n; j++) {
            double t = u[j];
            double v;
            if (!(t >= 0.0))
                t = 0.0; /* also NaN */
            if (t > 1.0)
                t = 1.0;
            v = lo[j] + t * d->span[j];
            if (v > hi[j])
                v = hi[j];
            x[j] = d->fixed[j] ? lo[j] : v;
        }
    }
}

static int reserve_x(driver *d, size_t rows)
{
    size_t need;
    if (!dc_mul_size(rows, d->n, &need))
        return 0;
    if (need <= d->x_cap)
        return 1;
    dc_mem_free(d->alloc, d->X, d->x_cap * sizeof(double));
    d->X = dc_mem_alloc(d->alloc, need * sizeof(double));
    d->x_cap = d->X ? need : 0;
    return d->X != NULL;
}

/* f(X) for rows rows, through the program or the callable. */
static dc_status evaluate_rows(driver *d, const double *X, size_t rows, double *f)
{
    size_t r;
    if (d->run->program) {
        dc_status st = dc_eval_many(d->run->program, d->ws, X, rows, d->n, f);
        if (st)
            return st;
    } else if (d->run->objective(d->run->objective_data, X, rows, d->n, f)) {
        d->stop = DC_STOP_ERROR;
        return DC_OK;
    }
    if (d->run->maximize)
        for (r = 0; r < rows; r++)
            f[r] = -f[r];
    return DC_OK;
}

/* Publish progress to the run's monitor; 1 when it asks the run to stop. */
static int monitor_says_stop(driver *d)
{
    dc_monitor *m = d->run->monitor;
    if (!m)
        return 0;
    dc_monitor_publish(m, d->evals, d->iters, d->have_best ? user_value(d, d->best) : NAN,
                       now() - d->t0, 1);
    if (dc_monitor_stop_requested(m)) {
        d->stop = DC_STOP_MONITOR;
        return 1;
    }
    return 0;
}

static int out_of_time(driver *d)
{
    if (d->deadline > 0 && now() >= d->deadline) {
        d->stop = DC_STOP_TIME_LIMIT;
        return 1;
    }
    return 0;
}

/* Evaluate points in chunks, checking budget and clock between chunks;
 * the chunk grows while a chunk takes well under the clock's tolerance. */
static dc_status eval_points(driver *d, dc_batch *b)
{
    size_t done = 0, rows = b->rows;
    dc_status st;
    if (!reserve_x(d, rows))
        return DC_ERR_NOMEM;
    scale_rows(d, b->U, rows, d->X);
    while (done < rows && !d->stop) {
        size_t k = rows - done, r;
        int64_t left = d->run->max_evaluations - d->evals;
        double t = now();
        if (left <= 0) {
            d->stop = DC_STOP_MAX_EVALUATIONS;
            break;
        }
        if (d->deadline > 0 && k > d->chunk) /* with a clock: grow chunks adaptively */
            k = d->chunk;
        if ((int64_t)k > left)
            k = (size_t)left;
        if ((st = evaluate_rows(d, d->X + done * d->n, k, b->f + done)))
            return st;
        if (d->stop)
            break;
        d->evals += (int64_t)k;
        for (r = 0; r < k; r++)
            consider(d, d->X + (done + r) * d->n, b->f[done + r]);
        done += k;
        if (d->deadline > 0) {
            if (now() - t < 0.005 && d->chunk < 4096)
                d->chunk *= 2;
            if (done < rows && out_of_time(d))
                break;
        }
    }
    if (done < rows && !d->stop)
        d->stop = DC_STOP_MAX_EVALUATIONS;
    return DC_OK;
}

/* f and df/du: exact by AD for programs; central differences otherwise. */
static dc_status eval_gradients(driver *d, dc_batch *b)
{
    size_t r, j, n = d->n;
    int64_t cost = d->run->program ? 1 : (int64_t)(2 * n + 1);
    if (!reserve_x(d, d->run->program ? 1 : 2 * FD_CHUNK))
        return DC_ERR_NOMEM;
    if (!d->run->program && !d->fd) {
        d->fd = dc_mem_alloc(d->alloc, (n + 2 * FD_CHUNK) * sizeof(double));
        if (!d->fd)
            return DC_ERR_NOMEM;
    }
    for (r = 0; r < b->rows && !d->stop; r++) {
        double *g = b->grad + r * n;
        if (d->run->max_evaluations - d->evals < cost) {
            d->stop = DC_STOP_MAX_EVALUATIONS;
            break;
        }
        scale_rows(d, b->U + r * n, 1, d->X);
        if (d->run->program) {
            dc_status st = dc_gradient(d->run->program, d->ws, d->X, &b->f[r], g);
            if (st)
                return st;
            if (d->run->maximize) {
                b->f[r] = -b->f[r];
                for (j = 0; j < n; j++)
                    g[j] = -g[j];
            }
            for (j = 0; j < n; j++)
                g[j] = d->fixed[j] ? 0.0 : g[j] * d->span[j];
        } else {
            /* central differences, one-sided at the bounds: x, then pairs
             * x + h e_j, x - h e_j for FD_CHUNK coordinates at a time */
            double *x0 = d->fd, *vals = d->fd + n;
            size_t j0, q;
            dc_status st;
            memcpy(x0, d->X, n * sizeof(double));
            if ((st = evaluate_rows(d, x0, 1, &b->f[r])) || d->stop)
                return st;
            consider(d, x0, b->f[r]);
            for (j0 = 0; j0 < n; j0 += FD_CHUNK) {
                size_t cnt = n - j0 < FD_CHUNK ? n - j0 : FD_CHUNK;
                for (q = 0; q < cnt; q++) {
                    size_t jj = j0 + q;
                    double *xp = d->X + 2 * q * n, *xm = xp + n;
                    double xj = x0[jj], h = 1.4901161193847656e-08 * (fabs(xj) > 1 ? fabs(xj) : 1);
                    memcpy(xp, x0, n * sizeof(double));
                    memcpy(xm, x0, n * sizeof(double));
                    if (!d->fixed[jj]) {
                        xp[jj] = xj + h <= d->run->upper[jj] ? xj + h : xj;
                        xm[jj] = xj - h >= d->run->lower[jj] ? xj - h : xj;
                    }
                }
                if ((st = evaluate_rows(d, d->X, 2 * cnt, vals)) || d->stop)
                    return st;
                for (q = 0; q < cnt; q++) {
                    size_t jj = j0 + q;
                    double xp = d->X[2 * q * n + jj], xm = d->X[(2 * q + 1) * n + jj];
                    consider(d, d->X + 2 * q * n, vals[2 * q]);
                    consider(d, d->X + (2 * q + 1) * n, vals[2 * q + 1]);
                    g[jj] = (d->fixed[jj] || xp == xm)
                                ? 0.0
                                : (vals[2 * q] - vals[2 * q + 1]) / (xp - xm) * d->span[jj];
                }
            }
        }
        if (d->run->program)
            consider(d, d->X, b->f[r]);
        d->evals += cost;
        d->grads++;
        if (out_of_time(d))
            break;
    }
    return DC_OK;
}

static dc_status eval_terms(driver *d, dc_batch *b)
{
    size_t r, k, n = d->n;
    int64_t left = d->run->max_evaluations - d->evals;
    if (!d->run->program)
        return DC_ERR_ARGUMENT;
    if ((int64_t)b->rows > left) {
        d->stop = DC_STOP_MAX_EVALUATIONS;
        return DC_OK;
    }
    if (!reserve_x(d, b->rows))
        return DC_ERR_NOMEM;
    scale_rows(d, b->U, b->rows, d->X);
    {
        dc_status st = dc_separable_terms(d->run->program, d->ws, d->X, b->rows, n, b->terms);
        if (st)
            return st;
    }
    if (d->run->maximize)
        for (k = 0; k < b->rows * n; k++)
            b->terms[k] = -b->terms[k];
    for (r = 0; r < b->rows; r++)
        b->f[r] = NAN; /* terms give f only up to a constant */
    d->evals += (int64_t)b->rows;
    out_of_time(d);
    return DC_OK;
}

/* ---- options ---- */

enum { RUN_OPT_STOP_ON_CONVERGENCE, N_RUN_OPTIONS };

static const dc_option_info run_options[N_RUN_OPTIONS] = {
    {"stop_on_convergence", 1, 0, 1, 1,
     "1 = end the run (status converged) when the engine's convergence test is met or its "
     "restarts agree; 0 = start the engine again until the budget, clock or target"},
};

const dc_option_info *dc_run_options(size_t *count)
{
    if (count)
        *count = N_RUN_OPTIONS;
    return run_options;
}

/* The option named name: the engine's own (params) or the run's (run_params). */
static const dc_option_info *find_option(const dc_engine_info *info, const char *name,
                                         double *params, double *run_params, double **slot)
{
    size_t o;
    for (o = 0; o < info->n_options; o++)
        if (strcmp(name, info->options[o].name) == 0) {
            *slot = &params[o];
            return &info->options[o];
        }
    for (o = 0; o < N_RUN_OPTIONS; o++)
        if (strcmp(name, run_options[o].name) == 0) {
            *slot = &run_params[o];
            return &run_options[o];
        }
    return NULL;
}

static dc_status read_options(const dc_engine_vt *vt, const dc_run *run, double *params,
                              double *run_params, dc_error *err)
{
    const dc_engine_info *info = vt->info;
    size_t k, o;
    for (o = 0; o < info->n_options; o++)
        params[o] = info->options[o].default_value;
    for (o = 0; o < N_RUN_OPTIONS; o++)
        run_params[o] = run_options[o].default_value;
    for (k = 0; k < run->n_options; k++) {
        const char *name = run->option_names[k];
        double v = run->option_values[k], *slot = NULL;
        const dc_option_info *opt = name ? find_option(info, name, params, run_params, &slot)
                                         : NULL;
        if (!opt) {
            char known[200];
            size_t used = 0, q;
            known[0] = '\0';
            for (q = 0; q < info->n_options + N_RUN_OPTIONS && used < sizeof known; q++) {
                const char *known_name = q < info->n_options
                                             ? info->options[q].name
                                             : run_options[q - info->n_options].name;
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", q ? ", " : "",
                                         known_name);
            }
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "unknown option '%.40s' for engine '%s' (options: %s)",
                                name ? name : "(null)", info->id, known);
        }
        if (!(v >= opt->min_value && v <= opt->max_value))
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "option '%s' of engine '%s' must be between %g and %g, got %g",
                                opt->name, info->id, opt->min_value, opt->max_value, v);
        if (opt->integer && v != floor(v))
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "option '%s' of engine '%s' must be an integer, got %g",
                                opt->name, info->id, v);
        *slot = v;
    }
    return DC_OK;
}

static dc_status validate(const dc_run *run, dc_error *err)
{
    size_t j;
    if (!run || run->n == 0 || !run->lower || !run->upper)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "bounds are missing or empty");
    if (run->n > (size_t)DC_MAX_DIMENSION)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "too many dimensions");
    if (!run->program && !run->objective)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "no objective");
    if (run->program && dc_program_n_inputs(run->program) != run->n)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "the objective has %zu inputs but there are %zu bounds",
                            dc_program_n_inputs(run->program), run->n);
    if (run->max_evaluations <= 0)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "max_evaluations must be positive");
    if (run->time_limit != run->time_limit)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "time_limit is NaN");
    if (run->has_target && run->target != run->target)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "target is NaN");
    for (j = 0; j < run->n; j++) {
        if (!isfinite(run->lower[j]) || !isfinite(run->upper[j]))
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "bounds[%zu] must be finite, got [%g, %g]", j, run->lower[j],
                                run->upper[j]);
        if (run->lower[j] > run->upper[j])
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "bounds[%zu]: the lower bound %g is above the upper bound %g", j,
                                run->lower[j], run->upper[j]);
        if (!isfinite(run->upper[j] - run->lower[j]))
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "bounds[%zu]: the interval is too wide to represent", j);
    }
    return DC_OK;
}

static void describe(driver *d)
{
    dc_result *r = d->res;
    switch (d->stop) {
    case DC_STOP_CONVERGED:
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
static dc_status converged_or_restart(driver *d, void *state, dc_problem *pb,
                                      const double *params, int64_t *start_evals, int *again)
{
    const dc_engine_vt *vt = d->vt;
    dc_status st;
    size_t j;
    *again = 0;
    d->stop = DC_STOP_CONVERGED;
    if (pb->stop_on_convergence || d->evals == *start_evals)
        return DC_OK;
    if (vt->release)
        vt->release(state);
    memset(state, 0, vt->state_size);
    pb->budget = d->run->max_evaluations - d->evals; /* a new start plans for what is left */
    if ((st = vt->init(state, pb, params)))
        return st;
    if (vt->seed_point) {
        if (!reserve_x(d, 1))
            return DC_ERR_NOMEM;
        for (j = 0; j < d->n; j++)
            d->X[j] = dc_rng_uniform(pb->rng);
        if ((st = vt->seed_point(state, d->X)))
            return st;
    }
    *start_evals = d->evals;
    d->stop = DC_STOP_NONE;
    *again = 1;
    return DC_OK;
}

dc_status dc_optimize(const char *engine, const dc_run *run, dc_result *res, dc_error *error)
{
    dc_error scratch;
    dc_error *err = error ? error : &scratch;
    const dc_engine_vt *vt;
    driver d;
    dc_problem pb;
    dc_rng rng;
    void *state = NULL;
    double *params = NULL, run_params[N_RUN_OPTIONS];
    int64_t *group = NULL, start_evals = 0;
    dc_status st;
    int started = 0, watched = 0, again;
    size_t j, n;

    memset(err, 0, sizeof *err);
    if (!res)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL result");
    memset(res, 0, sizeof *res);
    if ((st = validate(run, err)))
        return st;
    vt = dc_engine_find(engine ? engine : dc_engine_default());
    if (!vt)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "unknown engine '%.40s'",
                            engine ? engine : "(null)");
    n = run->n;
    if (vt->info->max_dims && n > vt->info->max_dims)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "engine '%s' handles at most %zu dimensions, got %zu", vt->info->id,
                            vt->info->max_dims, n);
    if (run->monitor) {
        if (!dc_monitor_begin(run->monitor))
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "the monitor is already watching another run");
        watched = 1; /* from here on every exit goes through cleanup */
    }
    memset(&d, 0, sizeof d);
    d.run = run;
    d.vt = vt;
    d.alloc = run->allocator ? run->allocator : dc_mem_default();
    d.n = n;
    d.res = res;
    d.chunk = run->program ? 64 : 1;
    d.target = run->maximize ? -run->target : run->target;
    res->alloc = *d.alloc;
    res->n = n;
    res->history_cap = run->history_capacity ? run->history_capacity : DEFAULT_HISTORY;
    if (res->history_cap < 4)
        res->history_cap = 4;
    params = dc_mem_calloc(d.alloc, vt->info->n_options + 1, sizeof(double));
    d.span = dc_mem_alloc(d.alloc, n * sizeof(double));
    d.fixed = dc_mem_alloc(d.alloc, n);
    d.best_x = dc_mem_alloc(d.alloc, n * sizeof(double));
    res->x = dc_mem_alloc(d.alloc, n * sizeof(double));
    res->history = dc_mem_alloc(d.alloc, (res->history_cap + 1) * sizeof(dc_history_entry));
    state = dc_mem_calloc(d.alloc, 1, vt->state_size);
    if (!params || !d.span || !d.fixed || !d.best_x || !res->x || !res->history || !state) {
        st = dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
        goto cleanup;
    }
    if ((st = read_options(vt, run, params, run_params, err)))
        goto cleanup;
    for (j = 0; j < n; j++) {
        d.span[j] = run->upper[j] - run->lower[j];
        d.fixed[j] = run->upper[j] == run->lower[j];
    }
    if (run->program) {
        d.ws = dc_workspace_new(run->program, d.alloc);
        if (!d.ws) {
            st = dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
            goto cleanup;
        }
    }
    dc_rng_seed(&rng, run->seed);
    memset(&pb, 0, sizeof pb);
    pb.n = n;
    pb.alloc = d.alloc;
    pb.rng = &rng;
    pb.budget = run->max_evaluations;
    pb.fixed = d.fixed;
    pb.structure = DC_STRUCT_GENERAL;
    pb.stop_on_convergence = run_params[RUN_OPT_STOP_ON_CONVERGENCE] != 0.0;
    if (run->program) {
        pb.exact_gradient = 1;
        pb.structure = dc_structure_kind_of(run->program);
        pb.separable = pb.structure == DC_STRUCT_SEPARABLE;
        pb.identical_terms = pb.separable && dc_structure_identical_terms(run->program);
        for (j = 1; j < n && pb.identical_terms; j++)
            if (run->lower[j] != run->lower[0] || run->upper[j] != run->upper[0])
                pb.identical_terms = 0;
        group = dc_mem_alloc(d.alloc, n * sizeof(int64_t));
        if (!group) {
            st = dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
            goto cleanup;
        }
        pb.n_groups = dc_structure_groups(run->program, group);
        pb.group = group;
    }
    d.t0 = now();
    d.deadline = run->time_limit > 0 ? d.t0 + run->time_limit : 0.0;
    started = 1; /* release runs even after a failed init (the state is zeroed) */
    if ((st = vt->init(state, &pb, params))) {
        st = dc_set_error(err, st, 0, 0, "engine '%s' could not start (%s)", vt->info->id,
                          dc_status_code(st));
        goto cleanup;
    }
    if (run->monitor && dc_monitor_stop_requested(run->monitor))
        d.stop = DC_STOP_MONITOR; /* stopped before it started */
    while (!d.stop) {
        dc_batch b;
        memset(&b, 0, sizeof b);
        if ((d.stop = vt->stop(state)) == DC_STOP_NONE &&
            (st = vt->ask(state, &b))) {
            st = dc_set_error(err, st, 0, 0, "engine '%s' failed (%s)", vt->info->id,
                              dc_status_code(st));
            goto cleanup;
        }
        if (d.stop == DC_STOP_CONVERGED || (d.stop == DC_STOP_NONE && b.rows == 0)) {
            if ((st = converged_or_restart(&d, state, &pb, params, &start_evals, &again))) {
                st = dc_set_error(err, st, 0, 0, "engine '%s' could not restart (%s)",
                                  vt->info->id, dc_status_code(st));
                goto cleanup;
            }
            if (again)
                continue;
        }
        if (d.stop)
            break;
        if (b.kind == DC_ASK_GRADIENT)
            st = eval_gradients(&d, &b);
        else if (b.kind == DC_ASK_TERMS)
            st = eval_terms(&d, &b);
        else
            st = eval_points(&d, &b);
        if (st) {
            st = dc_set_error(err, st, 0, 0, "evaluation failed (%s)", dc_status_code(st));
            goto cleanup;
        }
        if (d.have_best && run->has_target && d.best <= d.target) {
            d.stop = DC_STOP_TARGET;
            break;
        }
        if (d.stop)
            break;
        if ((st = vt->tell(state, &b))) {
            st = dc_set_error(err, st, 0, 0, "engine '%s' failed (%s)", vt->info->id,
                              dc_status_code(st));
            goto cleanup;
        }
        d.iters++;
        if (run->interrupt && run->interrupt(run->interrupt_data))
            d.stop = DC_STOP_ERROR;
        if (!d.stop && run->callback && d.have_best) {
            dc_progress pr;
            int rc;
            pr.evaluations = d.evals;
            pr.iterations = d.iters;
            pr.best = user_value(&d, d.best);
            pr.best_x = d.best_x;
            pr.elapsed = now() - d.t0;
            rc = run->callback(run->callback_data, &pr);
            if (rc)
                d.stop = rc < 0 ? DC_STOP_ERROR : DC_STOP_CALLBACK;
        }
        if (!d.stop && !monitor_says_stop(&d))
            out_of_time(&d);
    }
    if (!d.have_best && d.stop != DC_STOP_ERROR && d.evals < run->max_evaluations) {
        /* nothing evaluated yet (a run cut short at once): the centre */
        double f;
        for (j = 0; j < n; j++)
            d.best_x[j] = d.fixed[j] ? run->lower[j] : run->lower[j] + 0.5 * d.span[j];
        if ((st = evaluate_rows(&d, d.best_x, 1, &f)))
            goto cleanup;
        if (d.stop != DC_STOP_ERROR) {
            d.evals++;
            d.best = f;
            d.have_best = 1;
            history_push(&d, f);
        }
    }
    memcpy(res->x, d.best_x, n * sizeof(double));
    res->fun = d.have_best ? user_value(&d, d.best) : NAN;
    res->evaluations = d.evals;
    res->iterations = d.iters;
    res->gradients = d.grads;
    res->stop = d.stop;
    res->elapsed = now() - d.t0;
    if (res->n_history == 0 || res->history[res->n_history - 1].evaluations != d.evals) {
        res->history[res->n_history].evaluations = d.evals;
        res->history[res->n_history].best = res->fun;
        res->n_history++;
    }
    describe(&d);
    st = DC_OK;
cleanup:
    if (watched)
        dc_monitor_end(run->monitor, d.evals, d.iters, d.have_best ? user_value(&d, d.best) : NAN,
                       st == DC_OK ? res->elapsed : started ? now() - d.t0 : 0.0);
    if (started && vt->release)
        vt->release(state);
    dc_mem_free(d.alloc, state, vt ? vt->state_size : 0);
    dc_mem_free(d.alloc, params, ((vt ? vt->info->n_options : 0) + 1) * sizeof(double));
    dc_mem_free(d.alloc, d.span, n * sizeof(double));
    dc_mem_free(d.alloc, d.fixed, n);
    dc_mem_free(d.alloc, d.best_x, n * sizeof(double));
    dc_mem_free(d.alloc, d.X, d.x_cap * sizeof(double));
    dc_mem_free(d.alloc, d.fd, (n + 2 * FD_CHUNK) * sizeof(double));
    dc_mem_free(d.alloc, group, n * sizeof(int64_t));
    dc_workspace_free(d.ws);
    if (st)
        dc_result_free(res);
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
}
