/*
 * bo.c -- Bayesian optimization: a Gaussian process and log expected improvement.
 *
 * A run starts with a Latin hypercube of `initial` points (0: max(5, d + 1), at
 * most a third of the budget; a start point given to the run takes the first row).  Each later batch fits a GP (gp.c: Matern-5/2 ARD,
 * hyperparameters by maximizing the marginal likelihood with a dimension-scaled
 * lengthscale prior) to the points of the current start -- with `transform` 2 (the
 * default) two GPs, one on the values and one on their log (`warp`), and the one
 * under which the values are likelier (the log's Jacobian counted) is used,
 * chosen anew at each fit -- then picks each row by
 * maximizing log EI (Ament et al., NeurIPS 2023): a space-filling set of
 * candidates (uniform in the search region, and perturbations of the best points
 * in a random subset of coordinates) and a (1+1)-ES local search from the best
 * three.  Rows after the first of a batch see the earlier ones as evaluated at the
 * model's mean (Kriging believer), so a batch spreads out (the first 64; later rows
 * of a larger batch are uniform in the search region).  The batch has `batch` rows,
 * or the caller's hint (dc_batch.want).
 *
 * Trust region (TuRBO, Eriksson et al., NeurIPS 2019): above `tr_dims` dimensions
 * (0, the default: always; on BBOB at 100 evaluations it beat the global search on 14
 * of 24 functions at d = 5 and 18 at d = 10: benchmarks/README.md), or once a start
 * holds more than `max_model` points, the search region is a box
 * around the best point, edge L scaled per coordinate by the lengthscales (their
 * geometric mean 1); the model then holds the `local` (max(30, 4 d)) points nearest
 * the best (a local model, standardized on them, resolves the small differences near
 * a minimum: BBOB f1 at d = 5 reaches 4e-8 in 100 evaluations, 6e-4 with the 20 d + 40
 * nearest; without a trust region, the max_model nearest).
 * L doubles after 3 batches that improved and halves after 5 that did not (4 below
 * 5 dimensions);
 * below `min_region` the start ends: the restart log (restart_log.c) decides
 * whether the run converged (with stop_on_convergence), else a new start begins
 * with a new design over the whole box.
 *
 * Integer and discrete coordinates (pb->levels) are rounded to their cell centres
 * before the acquisition sees a point.  Constraints (pb->constrained): the driver
 * tells each row's excess (dc_batch.violation); a second GP models it, the
 * objective's GP holds the feasible points, and the acquisition is log EI + log
 * P(excess <= 0) -- or, before any feasible point, log EI of the excess.  Several
 * objectives (bo_mo.c, ParEGO): each row of a batch models a new random
 * scalarization of them as its one objective (the later rows refit nothing: the
 * batch's hyperparameters, the earlier rows believed), in the whole box (no trust
 * region: its success counts would compare different scalarizations).  NaN values count as the worst
 * value seen.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/bo_mo.h"
#include "engine/gp.h"

enum {
    OPT_BATCH,
    OPT_INITIAL,
    OPT_MAX_MODEL,
    OPT_TR_DIMS,
    OPT_MIN_REGION,
    OPT_CANDIDATES,
    OPT_WARP,
    OPT_TRANSFORM,
    OPT_LOCAL,
    N_OPTIONS
};

static const dc_option_info options[N_OPTIONS] = {
    {"batch", 1, 1, 1024, 1, "points per batch (a caller's hint overrides it)"},
    {"initial", 0, 0, 100000, 1, "points of the initial Latin hypercube; 0 = max(5, d + 1)"},
    {"max_model", 200, 10, 2000, 1,
     "most points in the model (the nearest to the best beyond; O(max_model^3) a batch)"},
    {"tr_dims", 0, 0, 1e9, 1, "a trust region above this many dimensions (0: always)"},
    {"min_region", 1e-6, 0, 0.5, 0, "a start ends when the trust region's edge is below"},
    {"candidates", 0, 0, 1e6, 1,
     "acquisition candidates a point; 0 = min(2000, max(300, 50 d))"},
    {"warp", 0.01, 1e-9, 10, 0, "the log transform: log(y - min + warp * (median - min))"},
    {"transform", 2, 0, 2, 1,
     "the values the model sees: 0 as they are, 1 log (warp), 2 the likelier of both each fit"},
    {"local", 0, 0, 2000, 1,
     "most points of the model in a trust region (the nearest to the best); 0 = max(30, 4 d)"},
};

static const dc_engine_info info = {
    "bo", "Bayesian optimization",
    "A Gaussian process (Matern-5/2 ARD) and log expected improvement in a trust region; for "
    "expensive objectives and budgets of tens to a few hundred evaluations.  Several "
    "objectives: random augmented Chebyshev scalarizations (ParEGO), one a suggestion.",
    "model", 0, options, N_OPTIONS,
    DC_SUPPORTS_CONSTRAINTS | DC_SUPPORTS_INTEGERS | DC_SUPPORTS_X0 | DC_SUPPORTS_OBJECTIVES};

#define LOCAL_STARTS 3
#define LOCAL_STEPS 30
#define L_INIT 0.8
#define L_MAX 1.6
#define SUCC_TOL 3
#define BELIEVED 64 /* rows of a batch the model takes in; later ones are random */

typedef struct state {
    size_t n, m;            /* dimension, free coordinates */
    size_t *free_idx;       /* m */
    double *lev;            /* m: cells of a discrete coordinate, 0 real */
    const dc_allocator *alloc;
    dc_rng *rng;
    int constrained, stop_on_convergence;
    int64_t budget;
    size_t batch, initial, max_model, n_cand;
    double min_region, warp;
    size_t local;           /* most model points in a trust region */
    int transform, tr_always;
    /* every point told, free coordinates */
    double *H, *hy, *he;    /* cap x m; values (NaN kept); excess */
    size_t hn, hcap;
    size_t since;           /* first point of the current start */
    size_t designed;        /* initial points asked in the current start */
    /* the trust region */
    double L;
    int succ, fail, tr_on;
    double start_best;      /* best value (or excess) of the start before the last tell */
    /* the models and their data */
    dc_gp gp, gc, gw;       /* the objective's model, the excess's, the other transform's */
    int gp_log;             /* gp models the log-transformed values (gw the raw ones) */
    size_t gcap;
    double *Z, *zy, *ze;    /* gcap x m model inputs; values; excesses */
    double *zw;             /* gcap: the values under the other transform */
    size_t *sel;            /* gcap: selected history rows */
    double *dist;           /* hcap scratch */
    size_t *didx;           /* hcap scratch */
    double *zlo, *zspan;    /* m: model coordinates z = (u - zlo) / zspan */
    double *rlo, *rhi;      /* m: the search region (u) */
    double *cand, *cval;    /* n_cand x m, n_cand */
    double *x, *xt, *xz;    /* m each */
    double *xs;             /* m: a start point (seed_point) for the next design */
    int seeded;
    int feasible_model;     /* the objective GP holds feasible points */
    int excess_only;        /* no feasible point: minimize the excess */
    double ybest, cthr;     /* standardized incumbent, standardized excess threshold */
    size_t fits;
    /* the batch */
    double *U, *f, *viol;   /* rows_cap x n, rows_cap, rows_cap */
    size_t rows_cap;
    dc_restart_log log;
    dc_bo_mo mo;            /* several objectives (mo.k >= 2) */
    int done;
} state;

/* values a row: the objectives, or one */
static size_t row_values(const state *s)
{
    return s->mo.k ? s->mo.k : 1;
}

static int grow_rows(state *s, size_t rows)
{
    size_t cap = s->rows_cap, k, nv = row_values(s);
    if (rows <= cap)
        return 1;
    dc_mem_free(s->alloc, s->U, cap * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->f, cap * nv * sizeof(double));
    dc_mem_free(s->alloc, s->viol, cap * sizeof(double));
    s->rows_cap = 0;
    s->U = s->f = s->viol = NULL;
    if (!dc_mul_size(rows, s->n, &k) || !dc_mul_size(k, sizeof(double), &k))
        return 0;
    s->U = dc_mem_alloc(s->alloc, rows * s->n * sizeof(double));
    s->f = dc_mem_alloc(s->alloc, rows * nv * sizeof(double));
    s->viol = dc_mem_alloc(s->alloc, rows * sizeof(double));
    if (!s->U || !s->f || !s->viol) {
        dc_mem_free(s->alloc, s->U, rows * s->n * sizeof(double));
        dc_mem_free(s->alloc, s->f, rows * nv * sizeof(double));
        dc_mem_free(s->alloc, s->viol, rows * sizeof(double));
        s->U = s->f = s->viol = NULL;
        return 0;
    }
    s->rows_cap = rows;
    for (k = 0; k < rows * s->n; k++)
        s->U[k] = 0.5; /* fixed coordinates keep this; the driver uses the bound */
    return 1;
}

static dc_status init(void *sp, const dc_problem *pb, const double *prm)
{
    state *s = sp;
    size_t j, m;
    s->n = pb->n;
    s->alloc = pb->alloc;
    s->rng = pb->rng;
    s->constrained = pb->constrained;
    s->stop_on_convergence = pb->stop_on_convergence;
    s->budget = pb->budget;
    s->batch = (size_t)prm[OPT_BATCH];
    s->max_model = (size_t)prm[OPT_MAX_MODEL];
    s->min_region = prm[OPT_MIN_REGION];
    s->warp = prm[OPT_WARP];
    s->transform = (int)prm[OPT_TRANSFORM];
    s->gp_log = s->transform == 1;
    s->free_idx = dc_mem_alloc(s->alloc, s->n * sizeof(size_t));
    if (!s->free_idx)
        return DC_ERR_NOMEM;
    for (j = 0; j < s->n; j++)
        if (!pb->fixed[j])
            s->free_idx[s->m++] = j;
    m = s->m;
    s->local = prm[OPT_LOCAL] > 0 ? (size_t)prm[OPT_LOCAL] : (4 * m > 30 ? 4 * m : 30);
    s->tr_always = (double)m > prm[OPT_TR_DIMS];
    s->initial = prm[OPT_INITIAL] > 0 ? (size_t)prm[OPT_INITIAL] : (m + 1 > 5 ? m + 1 : 5);
    if (s->budget > 0 && (int64_t)s->initial > s->budget / 3)
        s->initial = s->budget / 3 >= 2 ? (size_t)(s->budget / 3) : 2;
    s->n_cand = prm[OPT_CANDIDATES] > 0 ? (size_t)prm[OPT_CANDIDATES]
                                         : (50 * m < 300 ? 300 : 50 * m > 2000 ? 2000 : 50 * m);
    s->gcap = s->max_model + BELIEVED; /* the model and the believed rows of a batch */
    s->L = L_INIT;
    s->start_best = NAN;
    s->lev = dc_mem_calloc(s->alloc, m + 1, sizeof(double));
    if (!s->lev || dc_bo_mo_init(&s->mo, s->alloc, pb->n_objectives))
        return DC_ERR_NOMEM;
    for (j = 0; j < m && pb->levels; j++)
        s->lev[j] = pb->levels[s->free_idx[j]];
    if (m == 0)
        return dc_restart_log_init(&s->log, s->alloc, 0);
    if (dc_gp_init(&s->gp, s->alloc, m, s->gcap) || dc_gp_init(&s->gc, s->alloc, m, s->gcap) ||
        (s->transform == 2 && dc_gp_init(&s->gw, s->alloc, m, s->gcap)))
        return DC_ERR_NOMEM;
    s->Z = dc_mem_alloc(s->alloc, s->gcap * m * sizeof(double));
    s->zy = dc_mem_alloc(s->alloc, s->gcap * sizeof(double));
    s->zw = dc_mem_alloc(s->alloc, s->gcap * sizeof(double));
    s->ze = dc_mem_alloc(s->alloc, s->gcap * sizeof(double));
    s->sel = dc_mem_alloc(s->alloc, s->gcap * sizeof(size_t));
    s->zlo = dc_mem_alloc(s->alloc, m * sizeof(double));
    s->zspan = dc_mem_alloc(s->alloc, m * sizeof(double));
    s->rlo = dc_mem_alloc(s->alloc, m * sizeof(double));
    s->rhi = dc_mem_alloc(s->alloc, m * sizeof(double));
    s->cand = dc_mem_alloc(s->alloc, s->n_cand * m * sizeof(double));
    s->cval = dc_mem_alloc(s->alloc, s->n_cand * sizeof(double));
    s->x = dc_mem_alloc(s->alloc, m * sizeof(double));
    s->xt = dc_mem_alloc(s->alloc, m * sizeof(double));
    s->xz = dc_mem_alloc(s->alloc, m * sizeof(double));
    s->xs = dc_mem_alloc(s->alloc, m * sizeof(double));
    if (!s->xs || !s->Z || !s->zy || !s->zw || !s->ze || !s->sel || !s->zlo || !s->zspan || !s->rlo || !s->rhi ||
        !s->cand || !s->cval || !s->x || !s->xt || !s->xz)
        return DC_ERR_NOMEM;
    return dc_restart_log_init(&s->log, s->alloc, m);
}

/* u of a discrete coordinate at its cell's centre */
static double snap(const state *s, size_t q, double u)
{
    double lv = s->lev[q];
    if (lv > 0.0) {
        double c = floor(u * lv);
        c = c < 0.0 ? 0.0 : c > lv - 1.0 ? lv - 1.0 : c;
        return (c + 0.5) / lv;
    }
    return u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
}

static void put_row(state *s, size_t r, const double *x)
{
    size_t q;
    double *u = s->U + r * s->n;
    for (q = 0; q < s->m; q++)
        u[s->free_idx[q]] = x[q];
}

/* The current start's initial design: a Latin hypercube over the box. */
static void design(state *s, size_t rows)
{
    size_t r, q, m = s->m;
    for (q = 0; q < m; q++) {
        /* a random permutation of the strata, one column at a time */
        for (r = 0; r < rows; r++)
            s->U[r * s->n + s->free_idx[q]] = (double)r;
        for (r = rows; r > 1; r--) {
            size_t k = (size_t)dc_rng_below(s->rng, r);
            double *a = s->U + (r - 1) * s->n + s->free_idx[q], *b = s->U + k * s->n + s->free_idx[q];
            double t = *a;
            *a = *b;
            *b = t;
        }
        for (r = 0; r < rows; r++) {
            double *u = s->U + r * s->n + s->free_idx[q];
            *u = snap(s, q, (*u + dc_rng_uniform(s->rng)) / (double)rows);
        }
    }
    if (s->seeded && rows) { /* the given start point first */
        for (q = 0; q < m; q++)
            s->U[s->free_idx[q]] = snap(s, q, s->xs[q]);
        s->seeded = 0;
    }
}

/* ---- choosing the model's data ---- */

/* the value a model sees for history row i: NaN as the worst finite value */
static double value_of(const state *s, size_t i, double worst)
{
    double v = s->hy[i];
    return isfinite(v) ? v : worst;
}

/* history row of the best point of the current start (feasible first) */
static size_t best_row(const state *s)
{
    size_t i, b = s->since;
    for (i = s->since + 1; i < s->hn; i++) {
        double ei = s->constrained ? s->he[i] : 0.0, eb = s->constrained ? s->he[b] : 0.0;
        if (ei < eb || (ei == eb && dc_better(s->hy[i], s->hy[b])))
            b = i;
    }
    return b;
}

/* k smallest of dist[0..cnt) by index into didx[0..k) (quickselect on didx) */
static void select_nearest(state *s, size_t cnt, size_t k)
{
    size_t lo = 0, hi = cnt;
    while (hi - lo > 1) {
        size_t piv = lo + (size_t)dc_rng_below(s->rng, hi - lo), a = lo, i, t;
        double pv = s->dist[s->didx[piv]];
        t = s->didx[piv];
        s->didx[piv] = s->didx[hi - 1];
        s->didx[hi - 1] = t;
        for (i = lo; i + 1 < hi; i++)
            if (s->dist[s->didx[i]] < pv) {
                t = s->didx[i];
                s->didx[i] = s->didx[a];
                s->didx[a] = t;
                a++;
            }
        t = s->didx[a];
        s->didx[a] = s->didx[hi - 1];
        s->didx[hi - 1] = t;
        if (a == k || a + 1 == k)
            return;
        if (a < k)
            lo = a + 1;
        else
            hi = a;
    }
}

/* Select the model's rows (s->sel, count returned), set the model coordinates. */
static size_t choose_data(state *s, size_t centre)
{
    size_t cnt = s->hn - s->since, i, q, m = s->m, k;
    const double *c = s->H + centre * m;
    for (i = 0; i < cnt; i++) {
        const double *h = s->H + (s->since + i) * m;
        double d2 = 0.0;
        for (q = 0; q < m; q++)
            d2 += (h[q] - c[q]) * (h[q] - c[q]);
        s->dist[i] = d2;
        s->didx[i] = i;
    }
    k = cnt > s->max_model ? s->max_model : cnt;
    if (s->tr_on && k > s->local) /* a local model */
        k = s->local;
    if (k < cnt)
        select_nearest(s, cnt, k);
    for (i = 0; i < k; i++)
        s->sel[i] = s->since + s->didx[i];
    /* model coordinates: the selected points' bounding box and the search region */
    for (q = 0; q < m; q++) {
        double lo = s->rlo[q], hi = s->rhi[q];
        for (i = 0; i < k; i++) {
            double v = s->H[s->sel[i] * m + q];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        s->zlo[q] = lo;
        s->zspan[q] = hi - lo > 1e-12 ? hi - lo : 1e-12;
    }
    return k;
}

static void to_model(const state *s, const double *u, double *z)
{
    size_t q;
    for (q = 0; q < s->m; q++)
        z[q] = (u[q] - s->zlo[q]) / s->zspan[q];
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Log warping of the objective's values (y - min + delta, delta a fraction of the
 * median's distance from the minimum): differences among the best points weigh
 * as much as the large ones among the bad points.  Returns sum log(y - min + delta),
 * the log-likelihood's Jacobian term of the transform (0: the values left as they are). */
static double warp(state *s, double *y, size_t n)
{
    size_t i;
    double lo, med, delta, jac = 0.0;
    if (n < 3)
        return 0.0;
    memcpy(s->dist, y, n * sizeof(double));
    qsort(s->dist, n, sizeof(double), by_double);
    lo = s->dist[0];
    med = s->dist[n / 2];
    if (!(med > lo))
        return 0.0;
    delta = s->warp * (med - lo);
    for (i = 0; i < n; i++) {
        y[i] = log(y[i] - lo + delta);
        jac += y[i];
    }
    return jac;
}

/* Fit gp (and with transform 2 the other transform's gw) on the objective's nf
 * values zy; with transform 2 the likelier model (marginal likelihood of the raw
 * values, the standardization and the log's Jacobian counted) ends in gp. */
static int fit_objective(state *s, size_t nf, int restarts, int evals, size_t sub)
{
    double jac = 0.0, nll_p, nll_w;
    int st, sw;
    if (s->transform == 2)
        memcpy(s->zw, s->zy, nf * sizeof(double));
    if (s->gp_log)
        jac = warp(s, s->zy, nf);
    dc_gp_set_data(&s->gp, s->Z, s->zy, nf);
    st = evals ? dc_gp_fit_sub(&s->gp, s->rng, restarts, evals, 30, sub < nf ? sub : nf)
               : dc_gp_factor(&s->gp);
    if (s->transform != 2)
        return st;
    nll_p = dc_gp_nll(&s->gp) + (double)nf * log(s->gp.ystd) + jac;
    jac = s->gp_log ? 0.0 : warp(s, s->zw, nf);
    dc_gp_set_data(&s->gw, s->Z, s->zw, nf);
    sw = evals ? dc_gp_fit_sub(&s->gw, s->rng, restarts, evals, 30, sub < nf ? sub : nf)
               : dc_gp_factor(&s->gw);
    nll_w = dc_gp_nll(&s->gw) + (double)nf * log(s->gw.ystd) + jac;
    if (sw == 0 && (st != 0 || nll_w < nll_p)) {
        dc_gp t = s->gp;
        s->gp = s->gw;
        s->gw = t;
        s->gp_log = !s->gp_log;
        return 0;
    }
    return st;
}

#define SUB_FIT 100 /* model points beyond which the periodic restart fits a subset */

/* Fit the models on the selected rows; 0 on success. */
static int fit_models(state *s, size_t k)
{
    size_t i, nf = 0, m = s->m;
    double worst = -INFINITY, emin = INFINITY;
    int restarts, evals, st;
    size_t sub;
    for (i = s->since; i < s->hn; i++)
        if (isfinite(s->hy[i]) && s->hy[i] > worst)
            worst = s->hy[i];
    if (!isfinite(worst))
        worst = 0.0;
    /* feasible rows for the objective's model (all rows without constraints) */
    for (i = 0; i < k; i++) {
        size_t h = s->sel[i];
        if (!s->constrained || s->he[h] <= 0.0) {
            to_model(s, s->H + h * m, s->Z + nf * m);
            s->zy[nf++] = value_of(s, h, worst);
        }
    }
    s->excess_only = s->constrained && nf < 2;
    /* a full fit with restarts at first and now and then; else a few warm-started
     * steps, and beyond 40 points only every third batch (the lengthscales settle).
     * Beyond SUB_FIT points (a step costs milliseconds) the periodic restart runs on
     * SUB_FIT of them and the warm start takes its usual 8 steps on all, so that
     * the restart's batch costs about as much as the others, not 5x more */
    restarts = s->fits == 0 ? 3 : s->fits % 8 == 0 ? 1 : 0;
    evals = restarts && k <= SUB_FIT ? 30 : k <= 40 ? 15 : (restarts || s->fits % 3 == 0 ? 8 : 0);
    sub = k <= SUB_FIT ? k : SUB_FIT;
    s->fits++;
    if (s->constrained) {
        double emean = 0.0;
        for (i = 0; i < k; i++) {
            size_t h = s->sel[i];
            to_model(s, s->H + h * m, s->Z + i * m);
            s->ze[i] = log1p(s->he[h]);
            emean += s->ze[i];
            emin = s->ze[i] < emin ? s->ze[i] : emin;
        }
        dc_gp_set_data(&s->gc, s->Z, s->ze, k);
        if (evals ? dc_gp_fit_sub(&s->gc, s->rng, restarts, evals, 30, sub) : dc_gp_factor(&s->gc))
            return -1;
        s->cthr = (0.0 - s->gc.ymean) / s->gc.ystd;
        if (s->excess_only) {
            s->ybest = (emin - s->gc.ymean) / s->gc.ystd;
            (void)emean;
            return 0;
        }
        /* the objective's rows again (Z was overwritten) */
        nf = 0;
        for (i = 0; i < k; i++) {
            size_t h = s->sel[i];
            if (s->he[h] <= 0.0) {
                to_model(s, s->H + h * m, s->Z + nf * m);
                s->zy[nf++] = value_of(s, h, worst);
            }
        }
    }
    st = fit_objective(s, nf, restarts, evals, sub);
    s->ybest = INFINITY;
    for (i = 0; i < nf; i++)
        s->ybest = s->gp.y[i] < s->ybest ? s->gp.y[i] : s->ybest;
    return st;
}

/* ---- the acquisition ---- */

static double acquisition(state *s, const double *u)
{
    double mu, var, a;
    to_model(s, u, s->xz);
    if (s->excess_only) {
        dc_gp_predict(&s->gc, s->xz, &mu, &var);
        return dc_log_ei(mu, var, s->ybest);
    }
    dc_gp_predict(&s->gp, s->xz, &mu, &var);
    a = dc_log_ei(mu, var, s->ybest);
    if (s->constrained) {
        dc_gp_predict(&s->gc, s->xz, &mu, &var);
        a += dc_log_prob_below(mu, var, s->cthr);
    }
    return a;
}

/* The search region: the box, or the trust region around the best point. */
static void set_region(state *s, size_t centre)
{
    size_t q, m = s->m;
    double lg = 0.0;
    if (!s->tr_on) {
        for (q = 0; q < m; q++) {
            s->rlo[q] = 0.0;
            s->rhi[q] = 1.0;
        }
        return;
    }
    for (q = 0; q < m; q++)
        lg += s->gp.theta[q];
    lg /= (double)m;
    for (q = 0; q < m; q++) {
        double w = exp(s->gp.theta[q] - lg), half, c = s->H[centre * m + q];
        w = w < 0.1 ? 0.1 : w > 10.0 ? 10.0 : w;
        half = 0.5 * s->L * w;
        if (s->lev[q] > 0.0 && half < 0.5 / s->lev[q])
            half = 1.0 / s->lev[q]; /* reach the neighbouring cells */
        s->rlo[q] = c - half < 0.0 ? 0.0 : c - half;
        s->rhi[q] = c + half > 1.0 ? 1.0 : c + half;
    }
}

/* the best row of the acquisition over the region, into s->x */
static void maximize(state *s, size_t centre)
{
    size_t c, q, m = s->m, nc = s->n_cand, r;
    size_t top[LOCAL_STARTS];
    double topv[LOCAL_STARTS], best = -INFINITY;
    double p_coord = m <= 20 ? 1.0 : 20.0 / (double)m;
    for (r = 0; r < LOCAL_STARTS; r++) {
        top[r] = 0;
        topv[r] = -INFINITY;
    }
    for (c = 0; c < nc; c++) {
        double *u = s->cand + c * m;
        if (c % 2 == 0) { /* uniform in the region */
            for (q = 0; q < m; q++)
                u[q] = snap(s, q, s->rlo[q] + dc_rng_uniform(s->rng) * (s->rhi[q] - s->rlo[q]));
        } else { /* a perturbation of the centre in some coordinates */
            const double *h = s->H + centre * m;
            int moved = 0;
            for (q = 0; q < m; q++) {
                u[q] = h[q];
                if (dc_rng_uniform(s->rng) < p_coord) {
                    double sd = 0.1 * (s->rhi[q] - s->rlo[q]) * (c % 4 == 1 ? 1.0 : 0.2);
                    double v = u[q] + sd * dc_rng_normal(s->rng);
                    u[q] = snap(s, q, v < s->rlo[q] ? s->rlo[q] : v > s->rhi[q] ? s->rhi[q] : v);
                    moved = 1;
                }
            }
            if (!moved) {
                q = (size_t)dc_rng_below(s->rng, m);
                u[q] = snap(s, q, s->rlo[q] + dc_rng_uniform(s->rng) * (s->rhi[q] - s->rlo[q]));
            }
        }
        s->cval[c] = acquisition(s, u);
        for (r = 0; r < LOCAL_STARTS; r++)
            if (s->cval[c] > topv[r]) {
                size_t k;
                for (k = LOCAL_STARTS - 1; k > r; k--) {
                    topv[k] = topv[k - 1];
                    top[k] = top[k - 1];
                }
                topv[r] = s->cval[c];
                top[r] = c;
                break;
            }
    }
    memcpy(s->x, s->cand + top[0] * m, m * sizeof(double));
    best = topv[0];
    /* (1+1)-ES on the acquisition from the best candidates */
    for (r = 0; r < LOCAL_STARTS; r++) {
        double *y = s->cand + top[r] * m, fy = topv[r], sig = 0.05;
        int it;
        if (!(fy > -INFINITY))
            continue;
        for (it = 0; it < LOCAL_STEPS; it++) {
            double fv;
            for (q = 0; q < m; q++) {
                double w = s->rhi[q] - s->rlo[q], v;
                if (dc_rng_uniform(s->rng) >= p_coord && m > 1) {
                    s->xt[q] = y[q];
                    continue;
                }
                v = y[q] + sig * w * dc_rng_normal(s->rng);
                s->xt[q] = snap(s, q, v < s->rlo[q] ? s->rlo[q] : v > s->rhi[q] ? s->rhi[q] : v);
            }
            fv = acquisition(s, s->xt);
            if (fv > fy) {
                memcpy(y, s->xt, m * sizeof(double));
                fy = fv;
                sig *= 1.5;
            } else {
                sig *= 0.8;
            }
        }
        if (fy > best) {
            best = fy;
            memcpy(s->x, y, m * sizeof(double));
        }
    }
    /* integer and discrete coordinates: every other cell of each (of the region),
     * one coordinate at a time, from the best point found and from the centre */
    for (r = 0; r < 2; r++) {
        const double *from = r == 0 ? s->x : s->H + centre * m;
        size_t cell;
        memcpy(s->xt, from, m * sizeof(double));
        for (q = 0; q < m; q++) {
            double lv = s->lev[q], keep = s->xt[q];
            if (!(lv > 0.0) || lv > 64.0)
                continue;
            for (cell = 0; (double)cell < lv; cell++) {
                double u = ((double)cell + 0.5) / lv, fv;
                if (u < s->rlo[q] || u > s->rhi[q] || u == keep)
                    continue;
                s->xt[q] = u;
                fv = acquisition(s, s->xt);
                if (fv > best) {
                    best = fv;
                    memcpy(s->x, s->xt, m * sizeof(double));
                }
            }
            s->xt[q] = keep;
        }
    }
    if (!(best > -INFINITY)) /* no usable acquisition: a random point of the region */
        for (q = 0; q < m; q++)
            s->x[q] = snap(s, q, s->rlo[q] + dc_rng_uniform(s->rng) * (s->rhi[q] - s->rlo[q]));
}

/* Several objectives, a batch's row r > 0: new weights (its own scalarization, so that
 * the batch spreads along the front), the objective's model on the same rows with the
 * batch's hyperparameters, refactored, and rows 0..r-1 taken in at its mean (Kriging
 * believer, the incumbent at most their means); *centre becomes the best row for the
 * new weights.  0 on success. */
static int mo_reweigh(state *s, size_t k, size_t r, size_t *centre)
{
    size_t i, q, nf = 0, m = s->m;
    double worst = -INFINITY, mu, var;
    dc_bo_mo_scalarize(&s->mo, s->rng, s->constrained ? s->he : NULL, s->since, s->hn, s->hy);
    *centre = best_row(s);
    if (s->excess_only) /* the excess's model alone, unchanged */
        return 0;
    for (i = s->since; i < s->hn; i++)
        if (isfinite(s->hy[i]) && s->hy[i] > worst)
            worst = s->hy[i];
    for (i = 0; i < k; i++) {
        size_t h = s->sel[i];
        if (!s->constrained || s->he[h] <= 0.0) {
            to_model(s, s->H + h * m, s->Z + nf * m);
            s->zy[nf++] = value_of(s, h, isfinite(worst) ? worst : 0.0);
        }
    }
    warp(s, s->zy, nf);
    dc_gp_set_data(&s->gp, s->Z, s->zy, nf);
    if (dc_gp_factor(&s->gp))
        return -1;
    s->ybest = INFINITY;
    for (i = 0; i < nf; i++)
        s->ybest = s->gp.y[i] < s->ybest ? s->gp.y[i] : s->ybest;
    for (i = 0; i < r && i < BELIEVED; i++) {
        for (q = 0; q < m; q++)
            s->xt[q] = s->U[i * s->n + s->free_idx[q]];
        to_model(s, s->xt, s->xz);
        dc_gp_predict(&s->gp, s->xz, &mu, &var);
        if (dc_gp_append(&s->gp, s->xz, mu))
            return -1;
        s->ybest = mu < s->ybest ? mu : s->ybest; /* believed: no improvement there */
    }
    return 0;
}

/* Rows from the model: each maximizes the acquisition given the earlier ones. */
static void model_rows(state *s, size_t rows)
{
    size_t centre = best_row(s), k, r, q, m = s->m;
    int ok;
    if (s->mo.k) {
        dc_bo_mo_scalarize(&s->mo, s->rng, s->constrained ? s->he : NULL, s->since, s->hn, s->hy);
        centre = best_row(s);
    }
    s->tr_on = !s->mo.k && (s->tr_always || s->hn - s->since > s->max_model);
    set_region(s, centre); /* with the previous lengthscales */
    k = choose_data(s, centre);
    ok = fit_models(s, k) == 0;
    if (s->tr_on) {
        set_region(s, centre); /* with the new ones */
        for (q = 0; q < m; q++) {
            s->rlo[q] = s->rlo[q] < s->zlo[q] ? s->zlo[q] : s->rlo[q];
            s->rhi[q] = s->rhi[q] > s->zlo[q] + s->zspan[q] ? s->zlo[q] + s->zspan[q] : s->rhi[q];
            if (s->rhi[q] < s->rlo[q])
                s->rhi[q] = s->rlo[q];
        }
    }
    for (r = 0; r < rows; r++) {
        if (ok && s->mo.k && r > 0)
            ok = mo_reweigh(s, k, r, &centre) == 0;
        if (ok) {
            maximize(s, centre);
        } else {
            for (q = 0; q < m; q++)
                s->x[q] = snap(s, q, s->rlo[q] + dc_rng_uniform(s->rng) * (s->rhi[q] - s->rlo[q]));
        }
        put_row(s, r, s->x);
        if (ok && r + 1 < rows) { /* Kriging believer */
            double mu, var;
            to_model(s, s->x, s->xz);
            if (!s->excess_only) {
                dc_gp_predict(&s->gp, s->xz, &mu, &var);
                ok = dc_gp_append(&s->gp, s->xz, mu) == 0;
            }
            if (ok && s->constrained) {
                dc_gp_predict(&s->gc, s->xz, &mu, &var);
                ok = dc_gp_append(&s->gc, s->xz, mu) == 0;
            }
        }
    }
}

static dc_status ask(void *sp, dc_batch *b)
{
    state *s = sp;
    size_t rows = b->want ? b->want : s->batch;
    if (rows > 1024)
        rows = 1024;
    if (s->m == 0)
        rows = 1;
    if (!grow_rows(s, rows))
        return DC_ERR_NOMEM;
    b->kind = DC_ASK_POINTS;
    b->U = s->U;
    b->f = s->f;
    b->violation = s->constrained ? s->viol : NULL;
    if (s->m == 0) {
        b->rows = 1;
        return DC_OK;
    }
    if (s->designed < s->initial) {
        size_t left = s->initial - s->designed;
        if (!b->want && rows < left) { /* the design in one batch */
            if (!grow_rows(s, left))
                return DC_ERR_NOMEM;
            b->U = s->U;
            b->f = s->f;
            b->violation = s->constrained ? s->viol : NULL;
            rows = left;
        }
        if (rows > left)
            rows = left;
        design(s, rows);
        s->designed += rows;
        b->rows = rows;
        return DC_OK;
    }
    if (s->hn - s->since < 2) { /* the design's values are not all in: more design */
        design(s, rows);
        b->rows = rows;
        return DC_OK;
    }
    model_rows(s, rows);
    b->rows = rows;
    return DC_OK;
}

static int grow_history(state *s, size_t need)
{
    size_t cap = s->hcap, m = s->m ? s->m : 1, newcap;
    double *H, *hy, *he, *dist;
    size_t *didx;
    if (need <= cap)
        return 1;
    newcap = cap ? cap : 64;
    while (newcap < need)
        newcap *= 2;
    H = dc_mem_alloc(s->alloc, newcap * m * sizeof(double));
    hy = dc_mem_alloc(s->alloc, newcap * sizeof(double));
    he = dc_mem_alloc(s->alloc, newcap * sizeof(double));
    dist = dc_mem_alloc(s->alloc, newcap * sizeof(double));
    didx = dc_mem_alloc(s->alloc, newcap * sizeof(size_t));
    if (!H || !hy || !he || !dist || !didx) {
        dc_mem_free(s->alloc, H, newcap * m * sizeof(double));
        dc_mem_free(s->alloc, hy, newcap * sizeof(double));
        dc_mem_free(s->alloc, he, newcap * sizeof(double));
        dc_mem_free(s->alloc, dist, newcap * sizeof(double));
        dc_mem_free(s->alloc, didx, newcap * sizeof(size_t));
        return 0;
    }
    if (s->hn) {
        memcpy(H, s->H, s->hn * m * sizeof(double));
        memcpy(hy, s->hy, s->hn * sizeof(double));
        memcpy(he, s->he, s->hn * sizeof(double));
    }
    dc_mem_free(s->alloc, s->H, cap * m * sizeof(double));
    dc_mem_free(s->alloc, s->hy, cap * sizeof(double));
    dc_mem_free(s->alloc, s->he, cap * sizeof(double));
    dc_mem_free(s->alloc, s->dist, cap * sizeof(double));
    dc_mem_free(s->alloc, s->didx, cap * sizeof(size_t));
    s->H = H;
    s->hy = hy;
    s->he = he;
    s->dist = dist;
    s->didx = didx;
    s->hcap = newcap;
    return 1;
}

/* the best of the current start: (excess, value) ordered lexicographically */
static void start_best(const state *s, double *e, double *v)
{
    size_t b;
    if (s->hn == s->since) {
        *e = INFINITY;
        *v = NAN;
        return;
    }
    b = best_row(s);
    *e = s->constrained ? s->he[b] : 0.0;
    *v = s->hy[b];
}

static dc_status tell(void *sp, const dc_batch *b)
{
    state *s = sp;
    size_t r, q, m = s->m;
    double e0, v0, e1, v1;
    int improved;
    if (m == 0) {
        s->done = 1;
        return DC_OK;
    }
    start_best(s, &e0, &v0);
    if (!grow_history(s, s->hn + b->rows) || !dc_bo_mo_reserve(&s->mo, s->hn + b->rows))
        return DC_ERR_NOMEM;
    for (r = 0; r < b->rows; r++) {
        const double *u = b->U + r * s->n;
        for (q = 0; q < m; q++)
            s->H[s->hn * m + q] = u[s->free_idx[q]];
        s->hy[s->hn] = s->mo.k ? NAN : b->f[r]; /* several: scalarized in model_rows */
        if (s->mo.k)
            dc_bo_mo_store(&s->mo, s->hn, b->f + r * s->mo.k);
        s->he[s->hn] = s->constrained && b->violation ? b->violation[r] : 0.0;
        s->hn++;
    }
    if (s->designed < s->initial || !s->tr_on)
        return DC_OK;
    /* the trust region: grow on success, shrink on failure */
    start_best(s, &e1, &v1);
    improved = e1 < e0 || (e1 == e0 && dc_better(v1, v0) && !(v0 - v1 <= 1e-12 * fabs(v0)));
    if (improved) {
        s->succ++;
        s->fail = 0;
    } else {
        s->fail++;
        s->succ = 0;
    }
    if (s->succ >= SUCC_TOL) {
        s->L = 2.0 * s->L < L_MAX ? 2.0 * s->L : L_MAX;
        s->succ = 0;
    } else if (s->fail >= (m < 5 ? 4 : 5)) {
        s->L *= 0.5;
        s->fail = 0;
    }
    if (s->L < s->min_region) {
        size_t best = best_row(s);
        int agreed = dc_restart_log_end(&s->log, s->hy[best], s->H + best * m);
        if (agreed && s->stop_on_convergence) {
            s->done = 1;
        } else { /* a new start */
            s->since = s->hn;
            s->designed = 0;
            s->L = L_INIT;
            s->succ = s->fail = 0;
            s->tr_on = 0;
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
    size_t m = s->m, cap = s->hcap, mm = m ? m : 1;
    dc_restart_log_free(&s->log);
    dc_bo_mo_free(&s->mo);
    dc_gp_free(&s->gp);
    dc_gp_free(&s->gc);
    dc_gp_free(&s->gw);
    dc_mem_free(s->alloc, s->free_idx, s->n * sizeof(size_t));
    dc_mem_free(s->alloc, s->lev, (m + 1) * sizeof(double));
    dc_mem_free(s->alloc, s->H, cap * mm * sizeof(double));
    dc_mem_free(s->alloc, s->hy, cap * sizeof(double));
    dc_mem_free(s->alloc, s->he, cap * sizeof(double));
    dc_mem_free(s->alloc, s->dist, cap * sizeof(double));
    dc_mem_free(s->alloc, s->didx, cap * sizeof(size_t));
    dc_mem_free(s->alloc, s->Z, s->gcap * m * sizeof(double));
    dc_mem_free(s->alloc, s->zy, s->gcap * sizeof(double));
    dc_mem_free(s->alloc, s->zw, s->gcap * sizeof(double));
    dc_mem_free(s->alloc, s->ze, s->gcap * sizeof(double));
    dc_mem_free(s->alloc, s->sel, s->gcap * sizeof(size_t));
    dc_mem_free(s->alloc, s->zlo, m * sizeof(double));
    dc_mem_free(s->alloc, s->zspan, m * sizeof(double));
    dc_mem_free(s->alloc, s->rlo, m * sizeof(double));
    dc_mem_free(s->alloc, s->rhi, m * sizeof(double));
    dc_mem_free(s->alloc, s->cand, s->n_cand * m * sizeof(double));
    dc_mem_free(s->alloc, s->cval, s->n_cand * sizeof(double));
    dc_mem_free(s->alloc, s->x, m * sizeof(double));
    dc_mem_free(s->alloc, s->xt, m * sizeof(double));
    dc_mem_free(s->alloc, s->xz, m * sizeof(double));
    dc_mem_free(s->alloc, s->xs, m * sizeof(double));
    dc_mem_free(s->alloc, s->U, s->rows_cap * s->n * sizeof(double));
    dc_mem_free(s->alloc, s->f, s->rows_cap * row_values(s) * sizeof(double));
    dc_mem_free(s->alloc, s->viol, s->rows_cap * sizeof(double));
}

/* The next design starts with u (a start point given to the run; evaluated again). */
static dc_status seed_point(void *sp, const double *u)
{
    state *s = sp;
    size_t q;
    for (q = 0; q < s->m; q++)
        s->xs[q] = u[s->free_idx[q]];
    s->seeded = s->m > 0;
    return DC_OK;
}

const dc_engine_vt dc_eng_bo = {&info, sizeof(state), init, ask, tell, stop, release, seed_point};
