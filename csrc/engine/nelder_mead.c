/*
 * nelder_mead.c -- adaptive Nelder-Mead simplex search with restarts.
 *
 * References: J. A. Nelder, R. Mead, "A simplex method for function
 * minimization", Computer Journal 7 (1965); J. C. Lagarias, J. A. Reeds,
 * M. H. Wright, P. E. Wright, "Convergence properties of the Nelder-Mead
 * simplex method in low dimensions", SIAM J. Optim. 9 (1998) (the ordering
 * and tie rules used here); F. Gao, L. Han, "Implementing the Nelder-Mead
 * simplex algorithm with adaptive parameters", Comput. Optim. Appl. 51
 * (2012) (the coefficients).
 *
 * The simplex has m + 1 vertices in the m coordinates that are not fixed
 * (fixed coordinates, lower == upper, are left out), ordered by value, best
 * first; xbar is the centroid of the m best and x_w the worst vertex.  One
 * iteration, with Gao & Han's dimension-dependent coefficients
 *   alpha = 1, beta = 1 + 2/m, gamma = 3/4 - 1/(2m), delta = 1 - 1/m
 * (for m = 1 the classic 1, 2, 1/2, 1/2, which they equal at m = 2):
 *   reflect   x_r = xbar + alpha (xbar - x_w)
 *   f_r < f_1            expand x_e = xbar + beta (x_r - xbar); keep the
 *                        better of x_e and x_r
 *   f_1 <= f_r < f_m     keep x_r
 *   f_m <= f_r < f_w     outside contraction x_c = xbar + gamma (x_r - xbar);
 *                        keep it if f_c <= f_r, else shrink
 *   f_r >= f_w           inside contraction x_c = xbar - gamma (xbar - x_w);
 *                        keep it if f_c < f_w, else shrink
 *   shrink    x_i = x_1 + delta (x_i - x_1), i = 2..m+1
 * NaN is worse than any number in every comparison.  Each reflection,
 * expansion and contraction is a batch of one point; the initial simplex and
 * a shrink are batches of m + 1 and m points.
 *
 * Bounds: every trial point is projected onto the unit cube (coordinate-wise
 * clipping), so the search happens in the box; shrink points are convex
 * combinations of vertices and need no projection.
 *
 * Start: the first simplex is built around the centre of the cube, later ones
 * around a uniform random point: x_0 and x_0 + s e_j for each free j, with
 * s = initial_step (a fraction of the box; the step goes the other way when
 * it would leave the cube).
 *
 * Convergence of one descent: the simplex's diameter, max_i |x_i - x_1| in
 * the max-norm over the unit cube, is at most xtol, and the spread of its
 * values f_w - f_1 is at most ftol * max(1, |f_1|) (a spread that is NaN --
 * all values NaN or infinite -- counts as met once the diameter is small,
 * and so does any spread once the diameter is below 1e-6 xtol: a noisy
 * objective must not keep a collapsed simplex shrinking).  A noisy
 * objective usually keeps its simplex at the scale where the noise hides the
 * slope, so it never meets a tiny xtol: set xtol to that scale for it.
 * Then, while restarts remain (restarts = -1: unlimited, the default; the
 * budget, clock or target end the run), the search restarts from a new
 * random point with a fresh simplex; the driver keeps the best point of all
 * descents.  DC_STOP_CONVERGED is reported only after the last allowed
 * restart has converged (or at once when every coordinate is fixed).
 *
 * Dimension: Nelder-Mead is a local method for small n.  Its cost grows
 * about as n^2 (measured here, one descent on the sphere to f ~ 1e-18: about
 * 1,500 evaluations at n = 10, 9,000 at n = 30 and 96,000 at n = 100; the
 * 1e6-conditioned ellipsoid is not solved at n = 30 within 60,000), its
 * simplex tends to degenerate as n grows (Torczon, 1989; Gao & Han's
 * coefficients only delay it), it needs n + 1 evaluations to start and n per
 * shrink, and it keeps n + 1 vertices: O(n^2) memory and O(n^2) work per
 * iteration for the centroid.  Beyond ~100 coordinates the population and
 * gradient engines are the better tools, so the engine declares
 * max_dims = 100 and the Python API rejects larger problems.  (The C driver
 * does not enforce max_dims; the engine still runs, slowly, above it.)
 *
 * Options: initial_step (0.1), xtol (1e-10), ftol (1e-12), restarts (-1 =
 * unlimited; 0 = one descent; k = k restarts after the first descent).
 * seed_point (for composite engines): the next simplex, built at once, is
 * around the given point (not counted as a restart).
 */
#include <math.h>
#include <string.h>

#include "engine/engine.h"

#define MAX_DIMS 100

enum { OPT_STEP, OPT_XTOL, OPT_FTOL, OPT_RESTARTS, N_OPTIONS };

static const dc_option_info options[N_OPTIONS] = {
    {"initial_step", 0.1, 1e-6, 1, 0, "edge of the initial simplex, as a fraction of the box"},
    {"xtol", 1e-10, 0, 1, 0, "converged when the simplex's diameter (fraction of the box) is below"},
    {"ftol", 1e-12, 0, 1e300, 0,
     "... and the spread of its values is below ftol * max(1, |best|)"},
    {"restarts", -1, -1, 1e9, 1,
     "restarts from random points after convergence; -1 = unlimited (until budget/time)"},
};

static const dc_engine_info info = {
    "nelder_mead", "Adaptive Nelder-Mead",
    "Nelder-Mead simplex search with Gao-Han adaptive coefficients, bounds by projection, "
    "restarts from random points; a local method for small dimensions.",
    "local", MAX_DIMS, options, N_OPTIONS};

enum { PH_INIT, PH_REFLECT, PH_EXPAND, PH_OUTSIDE, PH_INSIDE, PH_SHRINK };

typedef struct params {
    double step, xtol, ftol;
    int64_t restarts; /* -1: unlimited */
    double alpha, beta, gamma, delta;
} params;

typedef struct state {
    params par;
    size_t n, m;        /* dimension, free coordinates */
    size_t *free_idx;   /* m */
    dc_rng *rng;
    const dc_allocator *alloc;
    double *X;          /* (m+1) x m vertices, free coordinates only */
    double *fx;         /* m + 1 values */
    size_t *order;      /* vertex indices, best first */
    double *xbar, *xr, *xt; /* m each: centroid, reflected point, trial point */
    double *xs;         /* m: a start point given by seed_point */
    int seeded;         /* the next simplex is built around xs */
    double fr;
    double *U;          /* (m+1) x n: the rows asked */
    double *f;          /* m + 1 */
    size_t rows_cap;    /* m + 1 */
    int phase;
    int64_t restarts_done;
    int done;
    int stop_on_convergence; /* the run's option: stop once restarts agree */
    dc_restart_log log;      /* where the descents ended */
} state;

static dc_status init(void *sp, const dc_problem *pb, const double *prm)
{
    state *s = sp;
    size_t j, k, m1, mm;
    double mf;
    s->par.step = prm[OPT_STEP];
    s->par.xtol = prm[OPT_XTOL];
    s->par.ftol = prm[OPT_FTOL];
    s->par.restarts = (int64_t)prm[OPT_RESTARTS];
    s->stop_on_convergence = pb->stop_on_convergence;
    s->n = pb->n;
    s->rng = pb->rng;
    s->alloc = pb->alloc;
    s->free_idx = dc_mem_alloc(s->alloc, s->n * sizeof(size_t));
    if (!s->free_idx)
        return DC_ERR_NOMEM;
    for (j = 0; j < s->n; j++)
        if (!pb->fixed[j])
            s->free_idx[s->m++] = j;
    mf = s->m < 2 ? 2.0 : (double)s->m;
    s->par.alpha = 1.0;
    s->par.beta = 1.0 + 2.0 / mf;
    s->par.gamma = 0.75 - 1.0 / (2.0 * mf);
    s->par.delta = 1.0 - 1.0 / mf;
    m1 = s->m + 1;
    s->rows_cap = m1;
    if (!dc_mul_size(m1, s->m, &mm) || !dc_mul_size(mm, sizeof(double), &k) ||
        !dc_mul_size(m1, s->n, &k) || !dc_mul_size(k, sizeof(double), &k)) {
        s->rows_cap = 0;
        return DC_ERR_NOMEM;
    }
    s->X = dc_mem_alloc(s->alloc, m1 * s->m * sizeof(double));
    s->fx = dc_mem_alloc(s->alloc, m1 * sizeof(double));
    s->order = dc_mem_alloc(s->alloc, m1 * sizeof(size_t));
    s->xbar = dc_mem_alloc(s->alloc, s->m * sizeof(double));
    s->xr = dc_mem_alloc(s->alloc, s->m * sizeof(double));
    s->xt = dc_mem_alloc(s->alloc, s->m * sizeof(double));
    s->xs = dc_mem_alloc(s->alloc, s->m * sizeof(double));
    s->U = dc_mem_alloc(s->alloc, m1 * s->n * sizeof(double));
    s->f = dc_mem_alloc(s->alloc, m1 * sizeof(double));
    if (!s->X || !s->fx || !s->order || !s->xbar || !s->xr || !s->xt || !s->xs || !s->U || !s->f)
        return DC_ERR_NOMEM;
    for (k = 0; k < m1 * s->n; k++)
        s->U[k] = 0.5; /* fixed coordinates keep this; the driver uses the bound */
    s->phase = PH_INIT;
    return dc_restart_log_init(&s->log, s->alloc, s->m);
}

/* x_0 and x_0 + step e_j (backwards where the cube ends). */
static void initial_simplex(state *s)
{
    size_t q, k, m = s->m;
    double *x0 = s->X;
    for (q = 0; q < m; q++)
        x0[q] = s->seeded ? s->xs[q] : s->restarts_done == 0 ? 0.5 : dc_rng_uniform(s->rng);
    s->seeded = 0;
    for (k = 1; k <= m; k++) {
        double *xk = s->X + k * m;
        memcpy(xk, x0, m * sizeof(double));
        xk[k - 1] = x0[k - 1] + s->par.step <= 1.0 ? x0[k - 1] + s->par.step
                                                    : x0[k - 1] - s->par.step;
    }
}

/* Put a point of the free coordinates into row r of the batch. */
static void put_row(state *s, size_t r, const double *x)
{
    size_t q;
    double *u = s->U + r * s->n;
    for (q = 0; q < s->m; q++)
        u[s->free_idx[q]] = x[q];
}

static void project(double *x, size_t m)
{
    size_t q;
    for (q = 0; q < m; q++)
        x[q] = !(x[q] >= 0.0) ? 0.0 : (x[q] > 1.0 ? 1.0 : x[q]); /* NaN -> 0 */
}

/* Insert vertex v into order[0..k-1] (sorted) after the values it ties. */
static void insert_sorted(state *s, size_t k, size_t v)
{
    size_t pos = k;
    while (pos > 0 && dc_better(s->fx[v], s->fx[s->order[pos - 1]])) {
        s->order[pos] = s->order[pos - 1];
        pos--;
    }
    s->order[pos] = v;
}

static void sort_all(state *s)
{
    size_t k;
    for (k = 0; k <= s->m; k++)
        insert_sorted(s, k, k);
}

/* Replace the worst vertex by x (value fv) and keep the order. */
static void accept(state *s, const double *x, double fv)
{
    size_t w = s->order[s->m];
    memcpy(s->X + w * s->m, x, s->m * sizeof(double));
    s->fx[w] = fv;
    insert_sorted(s, s->m, w);
}

/* xbar = the centroid of the m best vertices. */
static void centroid(state *s)
{
    size_t k, q, m = s->m;
    for (q = 0; q < m; q++)
        s->xbar[q] = 0.0;
    for (k = 0; k < m; k++) {
        const double *x = s->X + s->order[k] * m;
        for (q = 0; q < m; q++)
            s->xbar[q] += x[q];
    }
    for (q = 0; q < m; q++)
        s->xbar[q] /= (double)m;
}

/* out = xbar + t (from - xbar), projected onto the cube. */
static void along(const state *s, const double *from, double t, double *out)
{
    size_t q;
    for (q = 0; q < s->m; q++)
        out[q] = s->xbar[q] + t * (from[q] - s->xbar[q]);
    project(out, s->m);
}

static int converged(const state *s)
{
    size_t k, q, m = s->m;
    const double *x1 = s->X + s->order[0] * m;
    double f1 = s->fx[s->order[0]], fw = s->fx[s->order[m]];
    double tol = s->par.ftol * (fabs(f1) > 1.0 ? fabs(f1) : 1.0), diameter = 0.0;
    if (m == 0)
        return 1;
    for (k = 1; k <= m; k++) {
        const double *x = s->X + s->order[k] * m;
        for (q = 0; q < m; q++) {
            double d = fabs(x[q] - x1[q]);
            if (!(d <= s->par.xtol))
                return 0;
            diameter = d > diameter ? d : diameter;
        }
    }
    /* a simplex a million times below xtol (or a single point) has nothing
     * left to resolve, whatever its values say (noise, NaN) */
    return !(fw - f1 > tol) || diameter <= 1e-6 * s->par.xtol;
}

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    size_t k, m = s->m;
    b->kind = DC_ASK_POINTS;
    b->U = s->U;
    b->f = s->f;
    b->rows = 1;
    switch (s->phase) {
    case PH_INIT:
        initial_simplex(s);
        for (k = 0; k <= m; k++)
            put_row(s, k, s->X + k * m);
        b->rows = m + 1;
        break;
    case PH_REFLECT:
        centroid(s);
        along(s, s->X + s->order[m] * m, -s->par.alpha, s->xr);
        put_row(s, 0, s->xr);
        break;
    case PH_SHRINK: {
        const double *x1 = s->X + s->order[0] * m;
        size_t q;
        for (k = 1; k <= m; k++) {
            double *x = s->X + s->order[k] * m;
            for (q = 0; q < m; q++)
                x[q] = x1[q] + s->par.delta * (x[q] - x1[q]);
            put_row(s, k - 1, x);
        }
        b->rows = m;
        break;
    }
    default: /* expansion and contractions: xt was set by tell */
        put_row(s, 0, s->xt);
        break;
    }
    return DC_OK;
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    size_t k, m = s->m;
    double fv = s->f[0];
    (void)b;
    switch (s->phase) {
    case PH_INIT:
        for (k = 0; k <= m; k++)
            s->fx[k] = s->f[k];
        sort_all(s);
        s->phase = PH_REFLECT;
        break;
    case PH_REFLECT:
        s->fr = fv;
        if (dc_better(fv, s->fx[s->order[0]])) {
            along(s, s->xr, s->par.beta, s->xt);
            s->phase = PH_EXPAND;
        } else if (dc_better(fv, s->fx[s->order[m - 1]])) {
            accept(s, s->xr, fv);
        } else if (dc_better(fv, s->fx[s->order[m]])) {
            along(s, s->xr, s->par.gamma, s->xt);
            s->phase = PH_OUTSIDE;
        } else {
            along(s, s->X + s->order[m] * m, s->par.gamma, s->xt);
            s->phase = PH_INSIDE;
        }
        break;
    case PH_EXPAND:
        if (dc_better(fv, s->fr))
            accept(s, s->xt, fv);
        else
            accept(s, s->xr, s->fr);
        s->phase = PH_REFLECT;
        break;
    case PH_OUTSIDE: /* keep x_c if f_c <= f_r */
        if (!dc_better(s->fr, fv)) {
            accept(s, s->xt, fv);
            s->phase = PH_REFLECT;
        } else {
            s->phase = PH_SHRINK;
        }
        break;
    case PH_INSIDE: /* keep x_c if f_c < f_w */
        if (dc_better(fv, s->fx[s->order[m]])) {
            accept(s, s->xt, fv);
            s->phase = PH_REFLECT;
        } else {
            s->phase = PH_SHRINK;
        }
        break;
    case PH_SHRINK:
        for (k = 1; k <= m; k++)
            s->fx[s->order[k]] = s->f[k - 1];
        /* stable re-sort from the current order: on ties the best stays first */
        for (k = 1; k <= m; k++)
            insert_sorted(s, k, s->order[k]);
        s->phase = PH_REFLECT;
        break;
    default:
        break;
    }
    if (s->phase == PH_REFLECT && converged(s)) {
        int agreed = dc_restart_log_end(&s->log, s->fx[s->order[0]], s->X + s->order[0] * m) &&
                     s->stop_on_convergence;
        if (m == 0 || agreed || (s->par.restarts >= 0 && s->restarts_done >= s->par.restarts)) {
            s->done = 1;
        } else {
            s->restarts_done++;
            s->phase = PH_INIT;
        }
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
    size_t m1 = s->rows_cap;
    dc_restart_log_free(&s->log);
    dc_mem_free(s->alloc, s->free_idx, s->n * sizeof(size_t));
    dc_mem_free(s->alloc, s->X, m1 * s->m * sizeof(double));
    dc_mem_free(s->alloc, s->fx, m1 * sizeof(double));
    dc_mem_free(s->alloc, s->order, m1 * sizeof(size_t));
    dc_mem_free(s->alloc, s->xbar, s->m * sizeof(double));
    dc_mem_free(s->alloc, s->xr, s->m * sizeof(double));
    dc_mem_free(s->alloc, s->xt, s->m * sizeof(double));
    dc_mem_free(s->alloc, s->xs, s->m * sizeof(double));
    dc_mem_free(s->alloc, s->U, m1 * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->f, m1 * sizeof(double));
}

/* The next simplex (a fresh one at once, not counted as a restart) is built
 * around u: a composite engine hands over the point to refine. */
static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    size_t q;
    for (q = 0; q < s->m; q++)
        s->xs[q] = u[s->free_idx[q]];
    project(s->xs, s->m);
    s->seeded = 1;
    s->phase = PH_INIT;
    s->done = 0;
    return DC_OK;
}

const dc_engine_vt dc_eng_nelder_mead = {&info,    sizeof(state), init,   ask,
                                         tell,     stop,          release, seed_point};
