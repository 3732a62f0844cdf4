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

#include "engine/constraints.h"
#include "engine/engine.h"
#include "expr/expr.h"

#define DEFAULT_HISTORY 512u
#define FD_CHUNK 32u /* coordinates per batch of finite differences */

typedef struct driver {
    const dc_run *run;
    const dc_engine_vt *vt;
    const dc_allocator *alloc;
    size_t n;
    double *lo, *span;       /* effective lower bound and width (integers: ceil(lower)
                                and the number of integers; discrete: the first value's
                                index and the count) */
    double *hi;              /* effective upper bound (x space): the bounds tightened by
                                constraints on one coordinate (tighten_bounds) */
    double *levels;          /* cells of an integer or discrete coordinate, 0 for a real one */
    unsigned char *kind;     /* K_REAL, K_INTEGER, K_DISCRETE */
    unsigned char *fixed;
    unsigned char *frozen;   /* no gradient: fixed, integer or discrete */
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
    /* constraints (constraints.c): m > 0 when there are any */
    dc_cons cons;
    double best_excess;      /* of best_x: 0 when feasible */
    double *best_g;          /* m: g at best_x */
    double *alm_u, *alm_g;   /* the best Lagrangian point since the last update */
    double alm_best, alm_f, alm_prev_f;
    int alm_have, alm_rounds, last_kind;
    double *xbuf;            /* n: a point being evaluated alone */
} driver;

enum { K_REAL, K_INTEGER, K_DISCRETE };
#define ALM_MAX_ROUNDS 100

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

/* The best point: feasible before infeasible, then by value (feasible) or
 * by excess (infeasible); g (NULL without constraints) its constraint values */
static void consider_g(driver *d, const double *x, double f, double excess, const double *g)
{
    int better = !d->have_best || excess < d->best_excess ||
                 (excess == d->best_excess && dc_better(f, d->best));
    if (better) {
        d->best = f;
        d->best_excess = excess;
        d->have_best = 1;
        memcpy(d->best_x, x, d->n * sizeof(double));
        if (g)
            memcpy(d->best_g, g, d->cons.m * sizeof(double));
        history_push(d, f);
    }
}

static void consider(driver *d, const double *x, double f)
{
    consider_g(d, x, f, 0.0, NULL);
}

/* u in [0,1]^n -> x in the box (projected; fixed coordinates exact).  An
 * integer coordinate's cube is cut into one equal cell per integer, a
 * discrete one's into one cell per value. */
static void scale_rows(const driver *d, const double *U, size_t rows, double *X)
{
    const double *hi = d->hi;
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
            if (d->kind[j] == K_REAL) {
                v = d->lo[j] + t * d->span[j];
                if (v > hi[j])
                    v = hi[j];
                x[j] = d->fixed[j] ? d->lo[j] : v;
            } else {
                double cell = floor(t * d->span[j]);
                if (cell > d->span[j] - 1.0)
                    cell = d->span[j] - 1.0;
                x[j] = d->kind[j] == K_INTEGER ? d->lo[j] + cell
                                               : d->run->values[j][(size_t)(d->lo[j] + cell)];
            }
        }
    }
}

/* x in the box -> the centre of its cell in the cube (start points; a point
 * outside bounds tightened by constraints goes to the nearest face) */
static void unscale(const driver *d, const double *x, double *u)
{
    size_t j, k;
    for (j = 0; j < d->n; j++) {
        if (d->kind[j] == K_DISCRETE) {
            for (k = 0; k + 1 < d->run->n_values[j] && d->run->values[j][k] != x[j]; k++)
                ;
            u[j] = ((double)k - d->lo[j] + 0.5) / d->span[j];
        } else if (d->kind[j] == K_INTEGER) {
            u[j] = (x[j] - d->lo[j] + 0.5) / d->span[j];
        } else {
            u[j] = d->span[j] > 0 ? (x[j] - d->lo[j]) / d->span[j] : 0.5;
        }
        u[j] = u[j] < 0.0 ? 0.0 : u[j] > 1.0 ? 1.0 : u[j];
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

/* The objective values f[0..rows) of the points X become what the engine is
 * told: unchanged without constraints, else the feasibility-rule key; each
 * point is a candidate for the best. */
static dc_status judge_rows(driver *d, const double *X, size_t rows, double *f)
{
    size_t r, m = d->cons.m;
    dc_status st;
    if (!m) {
        for (r = 0; r < rows; r++)
            consider(d, X + r * d->n, f[r]);
        return DC_OK;
    }
    if ((st = dc_cons_eval(&d->cons, X, rows)))
        return st;
    dc_cons_observe(&d->cons, f, rows);
    for (r = 0; r < rows; r++) {
        const double *g = d->cons.G + r * m;
        double e = dc_cons_excess(&d->cons, g);
        consider_g(d, X + r * d->n, f[r], e, g);
        f[r] = dc_cons_key(&d->cons, f[r], e);
    }
    return DC_OK;
}

/* Evaluate points X (in the box) in chunks, checking budget and clock between
 * chunks; the chunk grows while a chunk takes well under the clock's
 * tolerance. */
static dc_status eval_x(driver *d, const double *X, size_t rows, double *f)
{
    size_t done = 0;
    dc_status st;
    while (done < rows && !d->stop) {
        size_t k = rows - done;
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
        if ((st = evaluate_rows(d, X + done * d->n, k, f + done)))
            return st;
        if (d->stop)
            break;
        d->evals += (int64_t)k;
        if ((st = judge_rows(d, X + done * d->n, k, f + done)))
            return st;
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

static dc_status eval_points(driver *d, dc_batch *b)
{
    if (!reserve_x(d, b->rows))
        return DC_ERR_NOMEM;
    scale_rows(d, b->U, b->rows, d->X);
    return eval_x(d, d->X, b->rows, b->f);
}

/* With constraints, the value of a gradient batch is the augmented
 * Lagrangian: f[0..rows) (objective values of X) become it in place, and
 * each point is a candidate for the best; grad (one row, df/dx in x space)
 * becomes dL/dx when given.  u: the row in the cube (the Lagrangian's best
 * point is remembered for the multiplier update). */
static dc_status to_merit(driver *d, const double *X, size_t rows, double *f, double *grad,
                          const double *u)
{
    size_t r, m = d->cons.m;
    if (!m) {
        for (r = 0; r < rows; r++)
            consider(d, X + r * d->n, f[r]);
        return DC_OK;
    }
    for (r = 0; r < rows; r++) {
        double L;
        dc_status st = dc_cons_lagrangian(&d->cons, X + r * d->n, f[r], &L, grad, d->alm_g + m);
        const double *g = d->alm_g + m;
        if (st)
            return st;
        consider_g(d, X + r * d->n, f[r], dc_cons_excess(&d->cons, g), g);
        if (u && (!d->alm_have || dc_better(L, d->alm_best))) {
            d->alm_best = L;
            d->alm_f = f[r];
            d->alm_have = 1;
            memcpy(d->alm_u, u, d->n * sizeof(double));
            memcpy(d->alm_g, g, m * sizeof(double));
        }
        f[r] = L;
    }
    return DC_OK;
}

/* f and df/du: exact by AD for programs; central differences otherwise. */
static dc_status eval_gradients(driver *d, dc_batch *b)
{
    size_t r, j, n = d->n;
    int64_t cost = d->run->program ? 1 : (int64_t)(2 * n + 1);
    dc_status st;
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
            if ((st = dc_gradient(d->run->program, d->ws, d->X, &b->f[r], g)))
                return st;
            if (d->run->maximize) {
                b->f[r] = -b->f[r];
                for (j = 0; j < n; j++)
                    g[j] = -g[j];
            }
            if ((st = to_merit(d, d->X, 1, &b->f[r], g, b->U + r * n)))
                return st;
            for (j = 0; j < n; j++)
                g[j] = d->frozen[j] ? 0.0 : g[j] * d->span[j];
        } else {
            /* central differences, one-sided at the bounds: x, then pairs
             * x + h e_j, x - h e_j for FD_CHUNK coordinates at a time */
            double *x0 = d->fd, *vals = d->fd + n;
            size_t j0, q;
            memcpy(x0, d->X, n * sizeof(double));
            if ((st = evaluate_rows(d, x0, 1, &b->f[r])) || d->stop)
                return st;
            if ((st = to_merit(d, x0, 1, &b->f[r], NULL, b->U + r * n)))
                return st;
            for (j0 = 0; j0 < n; j0 += FD_CHUNK) {
                size_t cnt = n - j0 < FD_CHUNK ? n - j0 : FD_CHUNK;
                for (q = 0; q < cnt; q++) {
                    size_t jj = j0 + q;
                    double *xp = d->X + 2 * q * n, *xm = xp + n;
                    double xj = x0[jj], h = 1.4901161193847656e-08 * (fabs(xj) > 1 ? fabs(xj) : 1);
                    memcpy(xp, x0, n * sizeof(double));
                    memcpy(xm, x0, n * sizeof(double));
                    if (!d->frozen[jj]) {
                        xp[jj] = xj + h <= d->hi[jj] ? xj + h : xj;
                        xm[jj] = xj - h >= d->lo[jj] ? xj - h : xj;
                    }
                }
                if ((st = evaluate_rows(d, d->X, 2 * cnt, vals)) || d->stop)
                    return st;
                if ((st = to_merit(d, d->X, 2 * cnt, vals, NULL, NULL)))
                    return st;
                for (q = 0; q < cnt; q++) {
                    size_t jj = j0 + q;
                    double xp = d->X[2 * q * n + jj], xm = d->X[(2 * q + 1) * n + jj];
                    g[jj] = (d->frozen[jj] || xp == xm)
                                ? 0.0
                                : (vals[2 * q] - vals[2 * q + 1]) / (xp - xm) * d->span[jj];
                }
            }
        }
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

/* integer and discrete coordinates, start points, constraints */
static dc_status validate_kinds(const dc_run *run, dc_error *err)
{
    size_t j, k, r;
    for (j = 0; j < run->n; j++) {
        size_t nv = run->n_values ? run->n_values[j] : 0;
        if (nv) {
            const double *v = run->values ? run->values[j] : NULL;
            if (!v)
                return dc_set_error(err, DC_ERR_ARGUMENT, j, 0, "values[%zu] is NULL", j);
            for (k = 0; k < nv; k++)
                if (!isfinite(v[k]) || (k && !(v[k] > v[k - 1])))
                    return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                        "values[%zu] must be finite and increasing", j);
        } else if (run->integer && run->integer[j] &&
                   ceil(run->lower[j]) > floor(run->upper[j])) {
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "x[%zu] is an integer but [%g, %g] holds no integer", j,
                                run->lower[j], run->upper[j]);
        }
    }
    if (run->n_x0 && !run->x0)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "x0 is NULL");
    for (r = 0; r < run->n_x0; r++)
        for (j = 0; j < run->n; j++) {
            double x = run->x0[r * run->n + j];
            size_t nv = run->n_values ? run->n_values[j] : 0;
            int ok = isfinite(x);
            if (ok && nv) {
                for (k = 0; k < nv && run->values[j][k] != x; k++)
                    ;
                ok = k < nv;
            } else if (ok) {
                ok = x >= run->lower[j] && x <= run->upper[j] &&
                     !(run->integer && run->integer[j] && x != floor(x));
            }
            if (!ok)
                return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                    "x0[%zu][%zu] = %g is not a value x[%zu] can take", r, j, x,
                                    j);
        }
    if (run->n_constraints && (!run->constraints || !run->senses))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "constraints are NULL");
    for (k = 0; k < run->n_constraints; k++) {
        if (!run->constraints[k] || dc_program_n_inputs(run->constraints[k]) != run->n)
            return dc_set_error(err, DC_ERR_ARGUMENT, k, 0,
                                "constraint %zu must be a program over the %zu inputs", k,
                                run->n);
        if ((unsigned)run->senses[k] > (unsigned)DC_CONSTRAINT_EQ)
            return dc_set_error(err, DC_ERR_ARGUMENT, k, 0, "constraint %zu: unknown sense", k);
    }
    if (run->constraint_tolerance != run->constraint_tolerance)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "constraint_tolerance is NaN");
    return DC_OK;
}

/* The engines whose info has a flag, comma-separated, into buf. */
static const char *engines_with(unsigned flag, char *buf, size_t cap)
{
    size_t k, used = 0;
    buf[0] = '\0';
    for (k = 0; k < dc_engine_count() && used < cap; k++)
        if (dc_engine_at(k)->supports & flag)
            used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? ", " : "",
                                     dc_engine_at(k)->id);
    return buf;
}

/* What the run asks of the engine beyond a box, against what it supports. */
static dc_status check_support(const dc_engine_vt *vt, const dc_run *run, dc_error *err)
{
    char buf[200];
    size_t j;
    int discrete = 0;
    const char *what = NULL;
    unsigned flag = 0;
    for (j = 0; j < run->n; j++)
        if ((run->integer && run->integer[j]) || (run->n_values && run->n_values[j]))
            discrete = 1;
    if (run->n_constraints && !(vt->info->supports & DC_SUPPORTS_CONSTRAINTS)) {
        what = "constraints";
        flag = DC_SUPPORTS_CONSTRAINTS;
    } else if (discrete && !(vt->info->supports & DC_SUPPORTS_INTEGERS)) {
        what = "integer or discrete variables";
        flag = DC_SUPPORTS_INTEGERS;
    } else if (run->n_x0 && !((vt->info->supports & DC_SUPPORTS_X0) && vt->seed_point)) {
        what = "a start point (x0)";
        flag = DC_SUPPORTS_X0;
    }
    if (!what)
        return DC_OK;
    return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                        "engine '%s' cannot take %s; engines that can: %s", vt->info->id, what,
                        engines_with(flag, buf, sizeof buf));
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
    return validate_kinds(run, err);
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

/* Evaluate the start points (counted) and start the engine from the best. */
static dc_status start_points(driver *d, const dc_engine_vt *vt, void *state, dc_error *err)
{
    size_t rows = d->run->n_x0;
    double *f = dc_mem_alloc(d->alloc, rows * sizeof(double));
    dc_status st;
    if (!f || !reserve_x(d, rows)) {
        dc_mem_free(d->alloc, f, rows * sizeof(double));
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    }
    memcpy(d->X, d->run->x0, rows * d->n * sizeof(double));
    st = eval_x(d, d->X, rows, f);
    dc_mem_free(d->alloc, f, rows * sizeof(double));
    if (st)
        return dc_set_error(err, st, 0, 0, "evaluation failed (%s)", dc_status_code(st));
    if (d->have_best && !d->stop) {
        unscale(d, d->best_x, d->xbuf);
        if ((st = vt->seed_point(state, d->xbuf)))
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
static size_t tighten_bounds(driver *d, int *equalities)
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
static void alm_update(driver *d)
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
static int alm_restart(driver *d, const dc_engine_vt *vt, void *state)
{
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
    return vt->seed_point(state, d->xbuf) == DC_OK;
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
    int started = 0, watched = 0, again, equalities = 0;
    size_t j, n, general = 0;

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
    if ((st = check_support(vt, run, err)))
        return st;
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
    d.lo = dc_mem_alloc(d.alloc, n * sizeof(double));
    d.hi = dc_mem_alloc(d.alloc, n * sizeof(double));
    d.levels = dc_mem_alloc(d.alloc, n * sizeof(double));
    d.kind = dc_mem_alloc(d.alloc, n);
    d.frozen = dc_mem_alloc(d.alloc, n);
    d.xbuf = dc_mem_alloc(d.alloc, n * sizeof(double));
    d.fixed = dc_mem_alloc(d.alloc, n);
    d.best_x = dc_mem_alloc(d.alloc, n * sizeof(double));
    res->x = dc_mem_alloc(d.alloc, n * sizeof(double));
    res->history = dc_mem_alloc(d.alloc, (res->history_cap + 1) * sizeof(dc_history_entry));
    state = dc_mem_calloc(d.alloc, 1, vt->state_size);
    if (!params || !d.span || !d.lo || !d.hi || !d.levels || !d.kind || !d.frozen || !d.xbuf || !d.fixed ||
        !d.best_x || !res->x || !res->history || !state) {
        st = dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
        goto cleanup;
    }
    if ((st = read_options(vt, run, params, run_params, err)))
        goto cleanup;
    if (run->n_constraints) {
        size_t m = run->n_constraints;
        d.best_g = dc_mem_calloc(d.alloc, m, sizeof(double));
        d.alm_g = dc_mem_calloc(d.alloc, 2 * m, sizeof(double));
        d.alm_u = dc_mem_alloc(d.alloc, n * sizeof(double));
        res->g = dc_mem_calloc(d.alloc, m, sizeof(double));
        res->n_g = m;
        if (!d.best_g || !d.alm_g || !d.alm_u || !res->g ||
            dc_cons_init(&d.cons, run, d.alloc)) {
            st = dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
            goto cleanup;
        }
    }
    memcpy(d.lo, run->lower, n * sizeof(double));
    memcpy(d.hi, run->upper, n * sizeof(double));
    general = tighten_bounds(&d, &equalities);
    for (j = 0; j < n; j++) {
        size_t nv = run->n_values ? run->n_values[j] : 0;
        if (nv) {
            size_t first = 0, count = 0, v;
            for (v = 0; v < nv; v++)
                if (run->values[j][v] >= d.lo[j] && run->values[j][v] <= d.hi[j] && !count++)
                    first = v;
            d.kind[j] = K_DISCRETE;
            d.lo[j] = (double)first;
            d.span[j] = (double)count; /* one cell per value */
        } else if (run->integer && run->integer[j]) {
            d.kind[j] = K_INTEGER;
            d.lo[j] = ceil(d.lo[j]);
            d.span[j] = floor(d.hi[j]) - d.lo[j] + 1.0; /* one cell per integer */
        } else {
            d.kind[j] = K_REAL;
            d.span[j] = d.hi[j] - d.lo[j];
        }
        d.fixed[j] = d.kind[j] == K_REAL ? d.span[j] == 0.0 : d.span[j] == 1.0;
        d.levels[j] = d.kind[j] == K_REAL ? 0.0 : d.span[j];
        d.frozen[j] = d.fixed[j] || d.kind[j] != K_REAL;
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
    pb.exact_gradient = run->program != NULL;
    pb.constrained = general > 0;
    pb.equalities = equalities;
    for (j = 0; j < n; j++)
        if (d.kind[j] != K_REAL)
            pb.levels = d.levels;
    if (run->program && !pb.constrained) { /* constraints couple everything (bounds do not) */
        pb.exact_gradient = 1;
        pb.structure = dc_structure_kind_of(run->program);
        pb.separable = pb.structure == DC_STRUCT_SEPARABLE;
        pb.identical_terms = pb.separable && dc_structure_identical_terms(run->program);
        for (j = 1; j < n && pb.identical_terms; j++)
            if (d.lo[j] != d.lo[0] || d.hi[j] != d.hi[0] || d.kind[j] != d.kind[0])
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
    if (!d.stop && run->n_x0 && (st = start_points(&d, vt, state, err)))
        goto cleanup;
    while (!d.stop) {
        dc_batch b;
        memset(&b, 0, sizeof b);
        if ((d.stop = vt->stop(state)) == DC_STOP_CONVERGED && alm_restart(&d, vt, state))
            d.stop = DC_STOP_NONE;
        if (d.stop == DC_STOP_NONE && (st = vt->ask(state, &b))) {
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
        if (d.cons.m && d.last_kind == DC_ASK_GRADIENT && b.kind != DC_ASK_GRADIENT)
            alm_update(&d); /* a gradient phase (a composite's polish) ended */
        d.last_kind = b.kind;
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
        if (d.have_best && run->has_target && d.best <= d.target && d.best_excess == 0.0) {
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
        double f, *u = d.best_x;
        for (j = 0; j < n; j++)
            u[j] = 0.5;
        scale_rows(&d, u, 1, d.xbuf);
        if ((st = evaluate_rows(&d, d.xbuf, 1, &f)))
            goto cleanup;
        if (d.stop != DC_STOP_ERROR) {
            d.evals++;
            if ((st = judge_rows(&d, d.xbuf, 1, &f)))
                goto cleanup;
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
    res->feasible = 1;
    if (d.cons.m) {
        memcpy(res->g, d.best_g, d.cons.m * sizeof(double));
        res->max_violation = dc_cons_max_violation(&d.cons, d.best_g);
        res->feasible = d.have_best && d.best_excess == 0.0;
    }
    describe(&d);
    if (!res->feasible) {
        size_t used = strlen(res->message);
        snprintf(res->message + used, sizeof res->message - used,
                 "; no feasible point found (least maximum violation %.6g)",
                 res->max_violation);
    }
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
    dc_mem_free(d.alloc, d.lo, n * sizeof(double));
    dc_mem_free(d.alloc, d.hi, n * sizeof(double));
    dc_mem_free(d.alloc, d.levels, n * sizeof(double));
    dc_mem_free(d.alloc, d.kind, n);
    dc_mem_free(d.alloc, d.frozen, n);
    dc_mem_free(d.alloc, d.xbuf, n * sizeof(double));
    dc_mem_free(d.alloc, d.best_g, run->n_constraints * sizeof(double));
    dc_mem_free(d.alloc, d.alm_g, 2 * run->n_constraints * sizeof(double));
    dc_mem_free(d.alloc, d.alm_u, n * sizeof(double));
    dc_cons_free(&d.cons);
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
    dc_mem_free(&r->alloc, r->g, r->n_g * sizeof(double));
    r->g = NULL;
}
