/*
 * lbfgsb.c -- projected L-BFGS for box constraints (the unit cube).
 *
 * A local, gradient-based method.  Each iteration:
 *
 *   1. active set A = fixed coordinates and those at a bound with the
 *      gradient pushing outward (u_j = 0, g_j > 0 or u_j = 1, g_j < 0);
 *      the rest are free (F);
 *   2. direction d_F = -H_F g_F by the L-BFGS two-loop recursion with the
 *      stored pairs (s, y) restricted to F (a pair whose restricted
 *      curvature s_F'y_F <= eps y_F'y_F is left out of this recursion),
 *      H0 = gamma I with gamma = s_F'y_F / y_F'y_F of the newest usable
 *      pair; d_A = 0.  With no usable pair, d = -g_F: the first step moves
 *      the coordinate with the largest gradient by 0.1 of the cube (after a
 *      memory reset: by ten times the last accepted step, at most 0.1);
 *   3. projected backtracking line search along the projection arc
 *      u(a) = P(u + a d), initial a = 1 once memory exists, Armijo test
 *      f(u(a)) <= f(u) + c1 g'(u(a) - u), c1 = 1e-4, backtracking by
 *      safeguarded quadratic interpolation in [0.1 a, 0.5 a]; a NaN or
 *      infinite value or gradient at a trial point is a failed trial
 *      (a *= 0.1); a trial coordinate within 1e-14 of a bound is put on it,
 *      so an optimum on a bound is reached exactly;
 *   4. on acceptance the pair s = u+ - u, y = g+ - g is stored (memory m,
 *      a ring) unless s'y <= eps y'y (eps = DBL_EPSILON); when the line
 *      search fails (max_linesearch trials, or a step too small to move
 *      u) the memory is reset and a projected steepest-descent step is
 *      tried; when that fails too the start has converged.
 *
 * This is the two-metric projection scheme (Bertsekas 1982; Gafni &
 * Bertsekas 1984) with a limited-memory metric, as in the projected
 * quasi-Newton methods of Kim, Sra & Dhillon (2010) and Schmidt, Kim & Sra
 * (2012), in the spirit of L-BFGS-B (Byrd, Lu, Nocedal & Zhu 1995) without
 * its generalized Cauchy point and subspace minimization.  The two-loop
 * recursion is Nocedal (1980) / Liu & Nocedal (1989); the interpolating
 * backtracking is Nocedal & Wright (2006), sec. 3.5.
 *
 *   D. P. Bertsekas, Projected Newton methods for optimization problems with
 *     simple constraints, SIAM J. Control Optim. 20 (1982) 221-246.
 *   E. M. Gafni, D. P. Bertsekas, Two-metric projection methods for
 *     constrained optimization, SIAM J. Control Optim. 22 (1984) 936-964.
 *   R. H. Byrd, P. Lu, J. Nocedal, C. Zhu, A limited memory algorithm for
 *     bound constrained optimization, SIAM J. Sci. Comput. 16 (1995) 1190.
 *   D. Kim, S. Sra, I. S. Dhillon, Tackling box-constrained optimization
 *     via a new projected quasi-Newton approach, SIAM J. Sci. Comput. 32
 *     (2010) 3548-3563.
 *   M. Schmidt, D. Kim, S. Sra, Projected Newton-type methods in machine
 *     learning, in Optimization for Machine Learning, MIT Press (2012).
 *   J. Nocedal, Updating quasi-Newton matrices with limited storage, Math.
 *     Comp. 35 (1980) 773-782.
 *   D. C. Liu, J. Nocedal, On the limited memory BFGS method for large
 *     scale optimization, Math. Program. 45 (1989) 503-528.
 *   J. Nocedal, S. J. Wright, Numerical Optimization, 2nd ed., Springer
 *     (2006): Alg. 7.4 (two-loop recursion), sec. 3.5 (interpolation).
 *
 * Gradients come from the driver (DC_ASK_GRADIENT, one point per ask, the
 * line-search trials too: f and g come together and the next iteration
 * needs g): exact by reverse-mode AD for expressions (1 evaluation),
 * central differences for callables (2n+1 evaluations).  When the budget
 * left cannot pay for a finite-difference gradient, the rest is spent on
 * plain function values (DC_ASK_POINTS): a derivative-free walk along the
 * last direction, or uniform points when there is none, so the whole
 * budget is used.
 *
 * Convergence (stop -> DC_STOP_CONVERGED), tested at every accepted point:
 *   pgtol: the projected gradient |P(u - g) - u|_inf < pgtol (cube units);
 *   ftol:  relative decrease (f - f+) <= ftol max(|f|, |f+|) in one
 *          iteration;
 *   the line search failed even with steepest descent.
 * A NaN (or infinite) value or gradient at a start point moves the start to
 * a uniform random point.
 *
 * Options:
 *   memory          10     stored pairs (1..100)
 *   pgtol           1e-10  projected-gradient tolerance (cube units)
 *   ftol            1e-15  relative-decrease tolerance
 *   restarts        0      after convergence, restart from a uniform random
 *                          point while budget remains, up to this many
 *                          times (0: a local method, stop when converged)
 *   start           0      first start: 0 = the cube's centre, 1 = random
 *   max_linesearch  30     trials per line search
 *
 * seed_point(u) replaces the first start point with u (dss polishes with it).
 *
 * Memory: 2 m n doubles for the pairs plus a few n-vectors; no O(n^2).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "engine/engine.h"

enum { OPT_MEMORY, OPT_PGTOL, OPT_FTOL, OPT_RESTARTS, OPT_START, OPT_MAX_LS, N_OPTIONS };

static const dc_option_info options[N_OPTIONS] = {
    {"memory", 10, 1, 100, 1, "number of stored (s, y) correction pairs"},
    {"pgtol", 1e-10, 0, 1, 0,
     "converged when the projected gradient's max-norm (unit cube) is below this"},
    {"ftol", 1e-15, 0, 1, 0,
     "converged when an iteration's relative decrease of f is at most this"},
    {"restarts", 0, 0, 1000000, 1,
     "restarts from uniform random points after convergence while budget remains (0 = local)"},
    {"start", 0, 0, 1, 1, "first start point: 0 = centre of the box, 1 = uniform random"},
    {"max_linesearch", 30, 1, 100, 1, "trial points per line search before the memory is reset"},
};

static const dc_engine_info info = {
    "lbfgsb", "Projected L-BFGS",
    "Projected limited-memory BFGS for box constraints with exact AD gradients (central "
    "differences for callables); a local method, optional random restarts.",
    "local", 0, options, N_OPTIONS};

#define C1 1e-4       /* Armijo constant */
#define FIRST_STEP 0.1 /* first steepest-descent step: this much of the cube */
#define SNAP 1e-14     /* trial coordinates this close to a bound go onto it */

enum { PH_START, PH_SEARCH, PH_DONE };

typedef struct state {
    /* parameters (validated, fixed for the run) */
    size_t n, m;
    double pgtol, ftol;
    int64_t restarts;
    int random_start, max_ls;
    /* the problem */
    const dc_allocator *alloc;
    dc_rng *rng;
    const unsigned char *fixed;
    int64_t budget, cost, used; /* evaluations: run budget, per gradient, asked so far */
    /* iterate and trial */
    double *x, *g, f;           /* accepted point, its gradient and value */
    double *xt, *gt, ft;        /* trial point (the batch's buffers) */
    double *d;                  /* search direction */
    double *w;                  /* 1 on the free set F, 0 on the active set */
    size_t n_bound;             /* active coordinates that are not fixed */
    /* memory: ring of pairs, newest at (head + count - 1) % m */
    double *S, *Y, *sy, *yy, *rho, *al;
    size_t head, count;
    /* line search */
    double alpha, last_step;    /* step along d; inf-norm of the last accepted step */
    int ls_iter, steepest;      /* trials so far; direction is steepest descent */
    int phase, tail, tail_dir;  /* tail: f-only mode at the end of the budget */
    int64_t restarts_left;
    int stop_on_convergence; /* the run's option: stop once restarts agree */
    dc_restart_log log;      /* where the starts ended */
} state;

/* ---- helpers ---- */

/* all finite: NaN * 0 and inf * 0 are NaN (branch-free) */
static int finite_vec(const double *v, size_t n)
{
    double z = 0.0;
    size_t j;
    for (j = 0; j < n; j++)
        z += v[j] * 0.0;
    return z == 0.0;
}

/* a'b with four partial sums (shorter dependency chains; a fixed order, so
 * results are reproducible) */
static double dot(const double *a, const double *b, size_t n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        s0 += a[j] * b[j];
        s1 += a[j + 1] * b[j + 1];
        s2 += a[j + 2] * b[j + 2];
        s3 += a[j + 3] * b[j + 3];
    }
    for (; j < n; j++)
        s0 += a[j] * b[j];
    return (s0 + s1) + (s2 + s3);
}

static double clip01(double v)
{
    return v > 0.0 ? (v < 1.0 ? v : 1.0) : 0.0; /* NaN -> 0 */
}

static void random_point(state *s, double *u)
{
    size_t j;
    for (j = 0; j < s->n; j++)
        u[j] = dc_rng_uniform(s->rng);
}

static void new_start(state *s, int random)
{
    size_t j;
    if (random)
        random_point(s, s->xt);
    else
        for (j = 0; j < s->n; j++)
            s->xt[j] = 0.5;
    s->phase = PH_START;
    s->count = 0;
    s->head = 0;
    s->last_step = 0.0;
}

/* the projected gradient's max-norm at the accepted point */
static double pg_norm(const state *s)
{
    double m = 0.0;
    size_t j;
    for (j = 0; j < s->n; j++) {
        double p;
        if (s->fixed[j])
            continue;
        p = fabs(clip01(s->x[j] - s->g[j]) - s->x[j]);
        if (p > m)
            m = p;
    }
    return m;
}

/* A start has converged: restart while options and budget allow, or stop. */
static void converged(state *s)
{
    int agreed = dc_restart_log_end(&s->log, s->f, s->x) && s->stop_on_convergence;
    if (!agreed && s->restarts_left > 0 && s->used < s->budget) {
        s->restarts_left--;
        new_start(s, 1);
    } else {
        s->phase = PH_DONE;
    }
}

/* d = -H_F g_F by the two-loop recursion over the pairs restricted to F
 * (w is F's indicator: the loops stay branch-free).  Returns 0 when no pair
 * is usable (d = -g_F then). */
static int two_loop(state *s)
{
    size_t n = s->n, m = s->m, k, j;
    double *d = s->d, gamma = 0.0;
    const double *w = s->w;
    int used = 0;
    for (j = 0; j < n; j++)
        d[j] = w[j] * s->g[j];
    /* newest to oldest */
    for (k = s->count; k-- > 0;) {
        size_t i = (s->head + k) % m;
        const double *si = s->S + i * n, *yi = s->Y + i * n;
        double sy = s->sy[i], yy = s->yy[i], sq, a;
        if (s->n_bound) { /* the pair restricted to F */
            sy = yy = 0.0;
            for (j = 0; j < n; j++) {
                sy += w[j] * si[j] * yi[j];
                yy += w[j] * yi[j] * yi[j];
            }
        }
        if (!(sy > DBL_EPSILON * yy) || !(yy > 0.0)) {
            s->rho[i] = 0.0; /* not usable on this free set */
            continue;
        }
        if (!used)
            gamma = sy / yy;
        used = 1;
        sq = dot(si, d, n); /* d is zero off F */
        s->rho[i] = 1.0 / sy;
        a = s->al[i] = s->rho[i] * sq;
        for (j = 0; j < n; j++)
            d[j] -= a * w[j] * yi[j];
    }
    if (!used) {
        for (j = 0; j < n; j++)
            d[j] = -d[j];
        return 0;
    }
    for (j = 0; j < n; j++)
        d[j] *= gamma;
    /* oldest to newest */
    for (k = 0; k < s->count; k++) {
        size_t i = (s->head + k) % m;
        const double *si = s->S + i * n, *yi = s->Y + i * n;
        double c;
        if (s->rho[i] == 0.0)
            continue;
        c = s->al[i] - s->rho[i] * dot(yi, d, n);
        for (j = 0; j < n; j++)
            d[j] += c * w[j] * si[j];
    }
    for (j = 0; j < n; j++)
        d[j] = -d[j];
    return 1;
}

/* trial point u(a) = P(u + a d); 0 when it does not move u at all.  A
 * coordinate moving to within SNAP of a bound lands on it (an epsilon-active
 * band, as in Bertsekas 1982): an optimum on a bound is reached exactly. */
static int set_trial(state *s)
{
    size_t j;
    int moved = 0;
    for (j = 0; j < s->n; j++) { /* d = 0 on fixed coordinates */
        double dj = s->d[j], v = s->x[j] + s->alpha * dj;
        v = v > 0.0 ? v : 0.0;
        v = v < 1.0 ? v : 1.0;
        v = dj > 0.0 && v > 1.0 - SNAP ? 1.0 : v;
        v = dj < 0.0 && v < SNAP ? 0.0 : v;
        s->xt[j] = v;
        moved |= v != s->x[j];
    }
    return moved;
}

/* Choose the direction and the first trial of a line search (or give up). */
static void begin_search(state *s)
{
    size_t j, n = s->n;
    double gd = 0.0, dmax = 0.0;
    s->n_bound = 0;
    for (j = 0; j < n; j++) {
        int out = (s->x[j] <= 0.0 && s->g[j] > 0.0) | (s->x[j] >= 1.0 && s->g[j] < 0.0);
        s->n_bound += (size_t)(out & !s->fixed[j]);
        s->w[j] = (out | s->fixed[j]) ? 0.0 : 1.0;
    }
    for (;;) {
        s->steepest = !two_loop(s);
        gd = 0.0;
        dmax = 0.0;
        for (j = 0; j < n; j++) {
            gd += s->g[j] * s->d[j];
            if (fabs(s->d[j]) > dmax)
                dmax = fabs(s->d[j]);
        }
        if (gd < 0.0 && isfinite(gd) && dmax > 0.0)
            break;
        if (s->steepest) { /* no descent direction at all: stationary */
            converged(s);
            return;
        }
        s->count = 0; /* the metric lost positive definiteness: reset */
    }
    if (s->steepest) {
        double scale = FIRST_STEP;
        if (s->last_step > 0.0 && 10.0 * s->last_step < scale)
            scale = 10.0 * s->last_step;
        s->alpha = scale / dmax;
    } else {
        s->alpha = 1.0;
    }
    s->ls_iter = 0;
    s->phase = PH_SEARCH;
    if (!set_trial(s)) {
        if (s->steepest)
            converged(s);
        else {
            s->count = 0;
            begin_search(s);
        }
    }
}

/* the line search failed: reset the memory, or converge if it was empty */
static void search_failed(state *s)
{
    if (s->steepest) {
        converged(s);
    } else {
        s->count = 0;
        begin_search(s);
    }
}

/* accept the trial: store the pair, test convergence, go on */
static void accept(state *s)
{
    size_t n = s->n, j, slot;
    double sy = 0.0, yy = 0.0, smax = 0.0, f0 = s->f, scale;
    double *sv, *yv;
    for (j = 0; j < n; j++) {
        double sj = s->xt[j] - s->x[j], yj = s->gt[j] - s->g[j];
        sy += sj * yj;
        yy += yj * yj;
        if (fabs(sj) > smax)
            smax = fabs(sj);
    }
    if (sy > DBL_EPSILON * yy && yy > 0.0) { /* else skip the pair */
        slot = s->count < s->m ? (s->head + s->count) % s->m : s->head;
        sv = s->S + slot * n;
        yv = s->Y + slot * n;
        for (j = 0; j < n; j++) {
            sv[j] = s->xt[j] - s->x[j];
            yv[j] = s->gt[j] - s->g[j];
        }
        s->sy[slot] = sy;
        s->yy[slot] = yy;
        if (s->count < s->m)
            s->count++;
        else
            s->head = (s->head + 1) % s->m;
    }
    s->last_step = smax;
    memcpy(s->x, s->xt, n * sizeof(double));
    memcpy(s->g, s->gt, n * sizeof(double));
    s->f = s->ft;
    scale = fabs(f0) > fabs(s->f) ? fabs(f0) : fabs(s->f);
    if (f0 - s->f <= s->ftol * scale || pg_norm(s) < s->pgtol)
        converged(s);
    else
        begin_search(s);
}

/* ---- the vtable ---- */

static dc_status init(void *sp, const dc_problem *pb, const double *params)
{
    state *s = sp;
    size_t n = pb->n, mn;
    s->alloc = pb->alloc;
    s->n = n;
    s->m = (size_t)params[OPT_MEMORY];
    s->pgtol = params[OPT_PGTOL];
    s->ftol = params[OPT_FTOL];
    s->restarts = (int64_t)params[OPT_RESTARTS];
    s->random_start = params[OPT_START] != 0.0;
    s->max_ls = (int)params[OPT_MAX_LS];
    s->rng = pb->rng;
    s->fixed = pb->fixed;
    s->budget = pb->budget;
    s->cost = pb->exact_gradient ? 1 : (int64_t)(2 * n + 1);
    s->restarts_left = s->restarts;
    s->stop_on_convergence = pb->stop_on_convergence;
    if (!dc_mul_size(s->m, n, &mn) || !dc_mul_size(mn, sizeof(double), &mn))
        return DC_ERR_NOMEM;
    s->x = dc_mem_alloc(s->alloc, n * sizeof(double));
    s->g = dc_mem_alloc(s->alloc, n * sizeof(double));
    s->xt = dc_mem_alloc(s->alloc, n * sizeof(double));
    s->gt = dc_mem_alloc(s->alloc, n * sizeof(double));
    s->d = dc_mem_alloc(s->alloc, n * sizeof(double));
    s->w = dc_mem_alloc(s->alloc, n * sizeof(double));
    s->sy = dc_mem_alloc(s->alloc, s->m * sizeof(double));
    s->yy = dc_mem_alloc(s->alloc, s->m * sizeof(double));
    s->rho = dc_mem_alloc(s->alloc, s->m * sizeof(double));
    s->al = dc_mem_alloc(s->alloc, s->m * sizeof(double));
    s->S = dc_mem_alloc(s->alloc, mn);
    s->Y = dc_mem_alloc(s->alloc, mn);
    if (!s->x || !s->g || !s->xt || !s->gt || !s->d || !s->w || !s->sy || !s->yy || !s->rho ||
        !s->al || !s->S || !s->Y)
        return DC_ERR_NOMEM;
    s->f = NAN;
    new_start(s, s->random_start);
    return dc_restart_log_init(&s->log, s->alloc, n);
}

/* The budget left cannot pay for a gradient: f-only points.  Along the last
 * direction when there is one (a walk with the same step while it improves,
 * halving it when not), else uniform points. */
static void tail_next(state *s, int improved)
{
    if (s->tail_dir) {
        if (!improved)
            s->alpha *= 0.5;
        if (set_trial(s))
            return;
        s->tail_dir = 0;
    }
    random_point(s, s->xt);
}

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    b->U = s->xt;
    b->rows = s->phase == PH_DONE ? 0 : 1;
    b->f = &s->ft;
    if (!s->tail && s->cost > 1 && s->budget - s->used < s->cost) {
        s->tail = 1; /* the pending trial (or start point) is the first tail point */
        s->tail_dir = s->phase == PH_SEARCH;
    }
    if (s->tail) {
        b->kind = DC_ASK_POINTS;
        s->used += 1;
    } else {
        b->kind = DC_ASK_GRADIENT;
        b->grad = s->gt;
        s->used += s->cost;
    }
    return DC_OK;
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    int ok;
    (void)b;
    if (s->tail) {
        int improved = dc_better(s->ft, s->f);
        if (improved) {
            memcpy(s->x, s->xt, s->n * sizeof(double));
            s->f = s->ft;
        }
        tail_next(s, improved);
        return DC_OK;
    }
    ok = isfinite(s->ft) && finite_vec(s->gt, s->n);
    if (s->phase == PH_START) {
        if (!ok) {
            random_point(s, s->xt); /* NaN at the start: somewhere else */
            return DC_OK;
        }
        memcpy(s->x, s->xt, s->n * sizeof(double));
        memcpy(s->g, s->gt, s->n * sizeof(double));
        s->f = s->ft;
        if (pg_norm(s) < s->pgtol)
            converged(s);
        else
            begin_search(s);
        return DC_OK;
    }
    if (s->phase != PH_SEARCH)
        return DC_OK;
    {
        size_t j;
        double gs = 0.0, slope, a = s->alpha, next;
        for (j = 0; j < s->n; j++)
            gs += s->g[j] * (s->xt[j] - s->x[j]);
        if (ok && s->ft <= s->f + C1 * (gs < 0.0 ? gs : 0.0) && (gs < 0.0 || s->ft < s->f)) {
            accept(s);
            return DC_OK;
        }
        if (++s->ls_iter >= s->max_ls) {
            search_failed(s);
            return DC_OK;
        }
        if (!ok) {
            next = 0.1 * a;
        } else {
            /* minimizer of the quadratic through f(0), slope gs/a, f(a) */
            double den;
            slope = gs / a;
            den = 2.0 * (s->ft - s->f - slope * a);
            next = den > 0.0 ? -slope * a * a / den : 0.5 * a;
            if (!(next >= 0.1 * a))
                next = 0.1 * a;
            if (next > 0.5 * a)
                next = 0.5 * a;
        }
        s->alpha = next;
        if (!set_trial(s))
            search_failed(s);
    }
    return DC_OK;
}

/* start from u (composite engines polish their best point with this) */
static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    size_t j;
    new_start(s, 0);
    for (j = 0; j < s->n; j++)
        s->xt[j] = clip01(u[j]);
    return DC_OK;
}

static dc_stop stop(const void *sp)
{
    const state *s = sp;
    return s->phase == PH_DONE ? DC_STOP_CONVERGED : DC_STOP_NONE;
}

static void release(void *sp)
{
    state *s = sp;
    size_t n = s->n, mn = s->m * s->n * sizeof(double);
    if (!s->alloc)
        return;
    dc_restart_log_free(&s->log);
    dc_mem_free(s->alloc, s->x, n * sizeof(double));
    dc_mem_free(s->alloc, s->g, n * sizeof(double));
    dc_mem_free(s->alloc, s->xt, n * sizeof(double));
    dc_mem_free(s->alloc, s->gt, n * sizeof(double));
    dc_mem_free(s->alloc, s->d, n * sizeof(double));
    dc_mem_free(s->alloc, s->w, n * sizeof(double));
    dc_mem_free(s->alloc, s->sy, s->m * sizeof(double));
    dc_mem_free(s->alloc, s->yy, s->m * sizeof(double));
    dc_mem_free(s->alloc, s->rho, s->m * sizeof(double));
    dc_mem_free(s->alloc, s->al, s->m * sizeof(double));
    dc_mem_free(s->alloc, s->S, mn);
    dc_mem_free(s->alloc, s->Y, mn);
}

const dc_engine_vt dc_eng_lbfgsb = {&info, sizeof(state), init,    ask,
                                    tell,  stop,          release, seed_point};
