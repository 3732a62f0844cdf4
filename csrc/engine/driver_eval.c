/*
 * driver_eval.c -- the driver's evaluations (driver_eval.h).
 *
 * Engines work in [0,1]^n: points are projected into the cube and scaled to
 * the bounds here (integer and discrete coordinates to their cells), so every
 * evaluated point lies within the bounds.  Evaluation runs in chunks checked
 * against the budget and the clock; every point evaluated is a candidate for
 * the best, which the driver keeps itself (with its history).  With
 * constraints, values become the feasibility-rule key (points) or the
 * augmented Lagrangian (gradients).
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "engine/driver_eval.h"
#include "common/alloc.h"
#include "common/error.h"

double dc_driver_now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void history_push(dc_driver *d, double value)
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
    r->history[r->n_history].best = d->multi ? value : dc_driver_user_value(d, value);
    r->n_history++;
}

/* The best point: feasible before infeasible, then by value (feasible) or
 * by excess (infeasible); g (NULL without constraints) its constraint values */
static void consider_g(dc_driver *d, const double *x, double f, double excess, const double *g)
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

static void consider(dc_driver *d, const double *x, double f)
{
    consider_g(d, x, f, 0.0, NULL);
}

/* u in [0,1]^n -> x in the box (projected; fixed coordinates exact).  An
 * integer coordinate's cube is cut into one equal cell per integer, a
 * discrete one's into one cell per value. */
void dc_driver_scale_rows(const dc_driver *d, const double *U, size_t rows, double *X)
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
void dc_driver_unscale(const dc_driver *d, const double *x, double *u)
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

int dc_driver_reserve_x(dc_driver *d, size_t rows)
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
dc_status dc_driver_evaluate_rows(dc_driver *d, const double *X, size_t rows, double *f)
{
    size_t r;
    if (d->multi) {
        int abort;
        dc_status st = dc_front_eval(&d->front, X, rows, f, &abort);
        if (abort)
            d->stop = DC_STOP_ERROR;
        return st;
    }
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
int dc_driver_monitor_says_stop(dc_driver *d)
{
    dc_monitor *m = d->run->monitor;
    if (!m)
        return 0;
    if (d->multi)
        dc_monitor_front(m, d->front.hypervolume, (int64_t)d->front.archive.size);
    dc_monitor_publish(m, d->evals, d->iters, dc_driver_shown_best(d), dc_driver_now() - d->t0,
                       1);
    if (dc_monitor_stop_requested(m)) {
        d->stop = DC_STOP_MONITOR;
        return 1;
    }
    return 0;
}

int dc_driver_out_of_time(dc_driver *d)
{
    if (d->deadline > 0 && dc_driver_now() >= d->deadline) {
        d->stop = DC_STOP_TIME_LIMIT;
        return 1;
    }
    return 0;
}

/* The guard's check (engine.h): the interrupt hook at once; the monitor's stop
 * request and the time limit each after DC_GUARD_GRACE seconds.  Giving up
 * sets the run's stop reason (the run ends after this iteration anyway). */
static int guard_check(void *data)
{
    dc_driver *d = data;
    const dc_run *run = d->run;
    double now = dc_driver_now();
    if (run->interrupt && run->interrupt(run->interrupt_data)) {
        d->stop = DC_STOP_ERROR;
        return 1;
    }
    if (!d->stop_seen && run->monitor && dc_monitor_stop_requested(run->monitor)) {
        d->stop_seen = 1;
        if (d->guard_end == 0.0 || now + DC_GUARD_GRACE < d->guard_end)
            d->guard_end = now + DC_GUARD_GRACE;
    }
    if (d->guard_end == 0.0 || now < d->guard_end)
        return 0;
    if (!d->stop)
        d->stop = d->stop_seen ? DC_STOP_MONITOR : DC_STOP_TIME_LIMIT;
    return 1;
}

void dc_driver_guard_init(dc_driver *d)
{
    memset(&d->guard, 0, sizeof d->guard);
    d->guard.check = guard_check;
    d->guard.data = d;
    d->guard_end = d->deadline > 0 ? d->deadline + DC_GUARD_GRACE : 0.0;
    d->stop_seen = 0;
}

/* Several objectives: each row (f: rows x d->m) goes to the archive with its
 * excess, which the engine is told in d->violation (when it gave a buffer). */
static dc_status judge_front(dc_driver *d, const double *X, size_t rows, const double *f)
{
    size_t r, m = d->cons.m;
    dc_status st;
    if (m && (st = dc_cons_eval(&d->cons, X, rows)))
        return st;
    for (r = 0; r < rows; r++) {
        const double *g = m ? d->cons.G + r * m : NULL;
        double e = g ? dc_cons_excess(&d->cons, g) : 0.0;
        if ((st = dc_front_offer(&d->front, X + r * d->n, f + r * d->m, e,
                                 g ? dc_cons_max_violation(&d->cons, g) : 0.0)))
            return st;
        if (d->violation)
            d->violation[r] = e;
    }
    d->have_best = 1;
    return DC_OK;
}

dc_status dc_driver_measure_front(dc_driver *d)
{
    dc_result *r = d->res;
    double before = d->front.hypervolume;
    dc_status st;
    d->front.evals = d->evals;
    st = dc_front_measure(&d->front, d->m <= 3 ||
                                                   d->iters % DC_FRONT_MEASURE_EVERY == 1);
    if (!st && !d->front.unmeasured && d->front.hypervolume != before &&
        (r->n_history == 0 || r->history[r->n_history - 1].best != d->front.hypervolume))
        history_push(d, d->front.hypervolume);
    return st;
}

/* The objective values f[0..rows) of the points X become what the engine is
 * told: unchanged without constraints, else the feasibility-rule key; each
 * point is a candidate for the best; the engine's violation buffer (when it
 * gave one) gets each row's excess.  Several objectives: judge_front. */
dc_status dc_driver_judge_rows(dc_driver *d, const double *X, size_t rows, double *f)
{
    size_t r, m = d->cons.m;
    dc_status st;
    if (d->multi)
        return judge_front(d, X, rows, f);
    if (!m) {
        for (r = 0; r < rows; r++) {
            consider(d, X + r * d->n, f[r]);
            if (d->violation)
                d->violation[r] = 0.0;
        }
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
        if (d->violation)
            d->violation[r] = e;
    }
    return DC_OK;
}

/* Evaluate points X (in the box) in chunks, checking budget and clock between
 * chunks; the chunk grows while a chunk takes well under the clock's
 * tolerance. */
dc_status dc_driver_eval_x(dc_driver *d, const double *X, size_t rows, double *f)
{
    size_t done = 0;
    dc_status st;
    while (done < rows && !d->stop) {
        size_t k = rows - done;
        int64_t left = d->run->max_evaluations - d->evals;
        double t = dc_driver_now();
        if (left <= 0) {
            d->stop = DC_STOP_MAX_EVALUATIONS;
            break;
        }
        if (d->deadline > 0 && k > d->chunk) /* with a clock: grow chunks adaptively */
            k = d->chunk;
        if ((int64_t)k > left)
            k = (size_t)left;
        if ((st = dc_driver_evaluate_rows(d, X + done * d->n, k, f + done * d->m)))
            return st;
        if (d->stop)
            break;
        d->evals += (int64_t)k;
        if ((st = dc_driver_judge_rows(d, X + done * d->n, k, f + done * d->m)))
            return st;
        if (d->violation)
            d->violation += k;
        done += k;
        if (d->deadline > 0) {
            if (dc_driver_now() - t < 0.005 && d->chunk < 4096)
                d->chunk *= 2;
            if (done < rows && dc_driver_out_of_time(d))
                break;
        }
    }
    if (done < rows && !d->stop)
        d->stop = DC_STOP_MAX_EVALUATIONS;
    return DC_OK;
}

dc_status dc_driver_eval_points(dc_driver *d, dc_batch *b)
{
    dc_status st;
    if (!dc_driver_reserve_x(d, b->rows))
        return DC_ERR_NOMEM;
    dc_driver_scale_rows(d, b->U, b->rows, d->X);
    d->violation = b->violation;
    st = dc_driver_eval_x(d, d->X, b->rows, b->f);
    d->violation = NULL;
    return st;
}

/* With constraints, the value of a gradient batch is the augmented
 * Lagrangian: f[0..rows) (objective values of X) become it in place, and
 * each point is a candidate for the best; grad (one row, df/dx in x space)
 * becomes dL/dx when given.  u: the row in the cube (the Lagrangian's best
 * point is remembered for the multiplier update). */
static dc_status to_merit(dc_driver *d, const double *X, size_t rows, double *f, double *grad,
                          const double *u)
{
    size_t r, m = d->cons.m;
    if (!m) {
        for (r = 0; r < rows; r++) {
            consider(d, X + r * d->n, f[r]);
            if (d->violation)
                d->violation[r] = 0.0;
        }
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
dc_status dc_driver_eval_gradients(dc_driver *d, dc_batch *b)
{
    size_t r, j, n = d->n;
    int64_t cost = d->run->program ? 1 : (int64_t)(2 * n + 1);
    dc_status st;
    if (!dc_driver_reserve_x(d, d->run->program ? 1 : 2 * FD_CHUNK))
        return DC_ERR_NOMEM;
    for (r = 0; r < b->rows && !d->stop; r++) {
        double *g = b->grad + r * n;
        if (d->run->max_evaluations - d->evals < cost) {
            d->stop = DC_STOP_MAX_EVALUATIONS;
            break;
        }
        dc_driver_scale_rows(d, b->U + r * n, 1, d->X);
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
            if ((st = dc_driver_evaluate_rows(d, x0, 1, &b->f[r])) || d->stop)
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
                if ((st = dc_driver_evaluate_rows(d, d->X, 2 * cnt, vals)) || d->stop)
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
        if (dc_driver_out_of_time(d))
            break;
    }
    return DC_OK;
}

dc_status dc_driver_eval_terms(dc_driver *d, dc_batch *b)
{
    size_t r, k, n = d->n;
    int64_t left = d->run->max_evaluations - d->evals;
    if (!d->run->program)
        return DC_ERR_ARGUMENT;
    if ((int64_t)b->rows > left) {
        d->stop = DC_STOP_MAX_EVALUATIONS;
        return DC_OK;
    }
    if (!dc_driver_reserve_x(d, b->rows))
        return DC_ERR_NOMEM;
    dc_driver_scale_rows(d, b->U, b->rows, d->X);
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
    dc_driver_out_of_time(d);
    return DC_OK;
}

/* ---- options ---- */
