/* gp.c -- a Gaussian process with a Matern-5/2 ARD kernel (see gp.h). */
#include <math.h>
#include <string.h>

#include "common/cholesky.h"
#include "engine/engine.h"
#include "engine/gp.h"

#define SQRT5 2.23606797749978969641
#define LOG_2PI 1.83787706640934548356
#define LBFGS_M 5
#define LOG_L_MIN (-6.9)  /* lengthscales in [1e-3, 1e2] (inputs in about [0, 1]) */
#define LOG_L_MAX 4.6
#define LOG_SF2_MIN (-3.0)
#define LOG_SF2_MAX 3.0
#define LOG_SN2_MIN (-13.8) /* noise in [1e-6, 0.5] of the standardized variance */
#define LOG_SN2_MAX (-0.7)
#define PRIOR_SD 1.7320508075688772

static double prior_mean(size_t d)
{
    return 1.4142135623730951 + 0.5 * log((double)d);
}

dc_status dc_gp_init(dc_gp *gp, const dc_allocator *alloc, size_t d, size_t cap)
{
    size_t cc;
    memset(gp, 0, sizeof *gp);
    gp->alloc = alloc;
    gp->d = d;
    gp->cap = cap;
    if (!dc_mul_size(cap, cap, &cc) || !dc_mul_size(cc, sizeof(double), &cc) ||
        !dc_mul_size(cap, d, &gp->n) || !dc_mul_size(gp->n, sizeof(double), &gp->n)) {
        gp->cap = 0;
        gp->n = 0;
        return DC_ERR_NOMEM;
    }
    gp->n = 0;
    gp->X = dc_mem_calloc(alloc, cap * d, sizeof(double));
    gp->y = dc_mem_calloc(alloc, cap, sizeof(double));
    gp->L = dc_mem_calloc(alloc, cap * cap, sizeof(double));
    gp->U = dc_mem_calloc(alloc, cap * cap, sizeof(double));
    gp->alpha = dc_mem_calloc(alloc, cap, sizeof(double));
    gp->kv = dc_mem_calloc(alloc, cap, sizeof(double));
    gp->work = dc_mem_calloc(alloc, cap > d ? cap : d, sizeof(double));
    gp->theta = dc_mem_calloc(alloc, d + 2, sizeof(double));
    gp->inv_l2 = dc_mem_calloc(alloc, d, sizeof(double));
    gp->fit = dc_mem_calloc(alloc, (d + 2) * (4 * LBFGS_M + 8), sizeof(double));
    if (!gp->X || !gp->y || !gp->L || !gp->U || !gp->alpha || !gp->kv || !gp->work ||
        !gp->theta || !gp->inv_l2 || !gp->fit)
        return DC_ERR_NOMEM;
    dc_gp_default_theta(gp);
    return DC_OK;
}

void dc_gp_free(dc_gp *gp)
{
    size_t cap = gp->cap, d = gp->d;
    dc_mem_free(gp->alloc, gp->X, cap * d * sizeof(double));
    dc_mem_free(gp->alloc, gp->y, cap * sizeof(double));
    dc_mem_free(gp->alloc, gp->L, cap * cap * sizeof(double));
    dc_mem_free(gp->alloc, gp->U, cap * cap * sizeof(double));
    dc_mem_free(gp->alloc, gp->alpha, cap * sizeof(double));
    dc_mem_free(gp->alloc, gp->kv, cap * sizeof(double));
    dc_mem_free(gp->alloc, gp->work, (cap > d ? cap : d) * sizeof(double));
    dc_mem_free(gp->alloc, gp->theta, (d + 2) * sizeof(double));
    dc_mem_free(gp->alloc, gp->inv_l2, d * sizeof(double));
    dc_mem_free(gp->alloc, gp->fit, (d + 2) * (4 * LBFGS_M + 8) * sizeof(double));
    memset(gp, 0, sizeof *gp);
}

void dc_gp_default_theta(dc_gp *gp)
{
    size_t i;
    for (i = 0; i < gp->d; i++)
        gp->theta[i] = prior_mean(gp->d) - PRIOR_SD * PRIOR_SD; /* the log-normal's mode */
    gp->theta[gp->d] = 0.0;
    gp->theta[gp->d + 1] = log(1e-4);
}

void dc_gp_set_data(dc_gp *gp, const double *X, const double *y, size_t n)
{
    size_t r;
    double mean = 0.0, var = 0.0;
    if (n > gp->cap)
        n = gp->cap;
    gp->n = n;
    memcpy(gp->X, X, n * gp->d * sizeof(double));
    for (r = 0; r < n; r++)
        mean += y[r];
    mean = n ? mean / (double)n : 0.0;
    for (r = 0; r < n; r++)
        var += (y[r] - mean) * (y[r] - mean);
    var = n > 1 ? var / (double)(n - 1) : 0.0;
    gp->ymean = mean;
    gp->ystd = var > 0.0 && isfinite(var) ? sqrt(var) : 1.0;
    for (r = 0; r < n; r++)
        gp->y[r] = (y[r] - mean) / gp->ystd;
}

static void clamp_theta(const dc_gp *gp, double *t)
{
    size_t i, d = gp->d;
    for (i = 0; i < d + 2; i++) {
        double lo = i < d ? LOG_L_MIN : i == d ? LOG_SF2_MIN : LOG_SN2_MIN;
        double hi = i < d ? LOG_L_MAX : i == d ? LOG_SF2_MAX : LOG_SN2_MAX;
        t[i] = !(t[i] >= lo) ? lo : t[i] > hi ? hi : t[i]; /* NaN -> lo */
    }
}

static void set_theta(dc_gp *gp, const double *t)
{
    size_t i;
    memcpy(gp->theta, t, (gp->d + 2) * sizeof(double));
    for (i = 0; i < gp->d; i++)
        gp->inv_l2[i] = exp(-2.0 * t[i]);
    gp->sf2 = exp(t[gp->d]);
    gp->sn2 = exp(t[gp->d + 1]);
}

/* r^2 between two points */
static double dist2(const dc_gp *gp, const double *a, const double *b)
{
    size_t i;
    double s = 0.0;
    for (i = 0; i < gp->d; i++) {
        double t = a[i] - b[i];
        s += t * t * gp->inv_l2[i];
    }
    return s;
}

static double matern(double sf2, double r2)
{
    double r = sqrt(r2);
    return sf2 * (1.0 + SQRT5 * r + (5.0 / 3.0) * r2) * exp(-SQRT5 * r);
}

/* K + sn2 I (lower triangle) into L, factored; alpha.  -1 on failure. */
static int factor_at(dc_gp *gp, double extra_jitter)
{
    size_t a, b, n = gp->n, ld = gp->cap;
    for (a = 0; a < n; a++) {
        const double *xa = gp->X + a * gp->d;
        for (b = 0; b < a; b++)
            gp->L[a * ld + b] = matern(gp->sf2, dist2(gp, xa, gp->X + b * gp->d));
        gp->L[a * ld + a] = gp->sf2 + gp->sn2 + extra_jitter;
    }
    if (dc_cholesky(gp->L, n, ld))
        return -1;
    memcpy(gp->alpha, gp->y, n * sizeof(double));
    dc_chol_forward(gp->L, n, ld, gp->alpha);
    dc_chol_backward(gp->L, n, ld, gp->alpha);
    return 0;
}

int dc_gp_factor(dc_gp *gp)
{
    double jitter = 0.0;
    int k;
    set_theta(gp, gp->theta);
    for (k = 0; k < 8; k++) {
        if (factor_at(gp, jitter) == 0)
            return 0;
        jitter = jitter == 0.0 ? 1e-8 * gp->sf2 : jitter * 10.0;
    }
    return -1;
}

double dc_gp_nll(const dc_gp *gp)
{
    size_t a, n = gp->n, ld = gp->cap;
    double nll = 0.0;
    for (a = 0; a < n; a++)
        nll += 0.5 * gp->y[a] * gp->alpha[a] + log(gp->L[a * ld + a]);
    return nll + 0.5 * (double)n * LOG_2PI;
}

/* The negative log posterior (marginal likelihood and the lengthscale prior) at t,
 * leaving the model factored at t; +inf when K is not positive definite.  One
 * Cholesky (n^3 / 6): the line search's trial points need no more. */
static double objective_value(dc_gp *gp, const double *t)
{
    size_t i, d = gp->d;
    double nll, mu = prior_mean(d), var = PRIOR_SD * PRIOR_SD;
    set_theta(gp, t);
    if (factor_at(gp, 0.0))
        return INFINITY;
    nll = dc_gp_nll(gp);
    for (i = 0; i < d; i++)
        nll += 0.5 * (t[i] - mu) * (t[i] - mu) / var;
    return nll;
}

/* The objective's gradient g at t, the model factored at t by objective_value
 * (K^{-1}: about n^3 / 3 more). */
static void objective_gradient(dc_gp *gp, const double *t, double *g)
{
    size_t a, b, i, n = gp->n, d = gp->d, ld = gp->cap;
    double mu = prior_mean(d), var = PRIOR_SD * PRIOR_SD;
    double *U = gp->U;
    for (i = 0; i < d + 2; i++)
        g[i] = 0.0;
    /* U row j = column j of L^{-1} (entries j..n-1) */
    for (b = 0; b < n; b++) {
        double *x = U + b * ld;
        x[b] = 1.0 / gp->L[b * ld + b];
        for (a = b + 1; a < n; a++) {
            const double *la = gp->L + a * ld;
            double s = 0.0;
            size_t k;
            for (k = b; k < a; k++)
                s += la[k] * x[k];
            x[a] = -s / la[a];
        }
    }
    /* W = alpha alpha^T - K^{-1}; K^{-1}[a][b] = sum_{k >= max(a,b)} U[a][k] U[b][k] */
    for (a = 0; a < n; a++) {
        const double *xa = gp->X + a * d, *ua = U + a * ld;
        for (b = 0; b <= a; b++) {
            const double *xb = gp->X + b * d, *ub = U + b * ld;
            double kinv = 0.0, w, r2 = 0.0, r, e, dk, kab;
            size_t k;
            for (k = a; k < n; k++)
                kinv += ua[k] * ub[k];
            w = gp->alpha[a] * gp->alpha[b] - kinv;
            if (a != b)
                w *= 2.0;
            if (a == b) {
                g[d] -= 0.5 * w * gp->sf2;
                g[d + 1] -= 0.5 * w * gp->sn2;
                continue;
            }
            for (i = 0; i < d; i++) {
                double t2 = xa[i] - xb[i];
                gp->work[i] = t2 * t2 * gp->inv_l2[i];
                r2 += gp->work[i];
            }
            r = sqrt(r2);
            e = exp(-SQRT5 * r);
            kab = gp->sf2 * (1.0 + SQRT5 * r + (5.0 / 3.0) * r2) * e;
            dk = gp->sf2 * (5.0 / 3.0) * (1.0 + SQRT5 * r) * e;
            for (i = 0; i < d; i++)
                g[i] -= 0.5 * w * dk * gp->work[i];
            g[d] -= 0.5 * w * kab;
        }
    }
    for (i = 0; i < d; i++)
        g[i] += (t[i] - mu) / var;
}

/* The objective and its gradient g at t. */
static double objective(dc_gp *gp, const double *t, double *g)
{
    double f = objective_value(gp, t);
    if (isfinite(f))
        objective_gradient(gp, t, g);
    return f;
}

/* Projected L-BFGS from t (updated in place to the best point found); returns
 * the best value.  At most max_evals evaluations. */
static double lbfgs(dc_gp *gp, double *t, int max_evals)
{
    size_t p = gp->d + 2, i;
    double *S = gp->fit, *Y = S + LBFGS_M * p, *rho = Y + LBFGS_M * p, *al = rho + LBFGS_M;
    double *g = al + LBFGS_M, *gn = g + p, *dir = gn + p, *tn = dir + p, *q = tn + p;
    double f, fn;
    int evals = 1, m = 0, head = 0, it;
    f = objective(gp, t, g);
    if (!isfinite(f))
        return f;
    for (it = 0; evals < max_evals; it++) {
        double step = 1.0, gd = 0.0, sy, yy;
        int k, j, moved = 0;
        /* two-loop recursion: dir = -H g */
        memcpy(q, g, p * sizeof(double));
        for (k = 0; k < m; k++) {
            j = (head - 1 - k + 2 * LBFGS_M) % LBFGS_M;
            al[j] = 0.0;
            for (i = 0; i < p; i++)
                al[j] += S[j * p + i] * q[i];
            al[j] *= rho[j];
            for (i = 0; i < p; i++)
                q[i] -= al[j] * Y[j * p + i];
        }
        if (m > 0) {
            j = (head - 1 + LBFGS_M) % LBFGS_M;
            sy = yy = 0.0;
            for (i = 0; i < p; i++) {
                sy += S[j * p + i] * Y[j * p + i];
                yy += Y[j * p + i] * Y[j * p + i];
            }
            for (i = 0; i < p; i++)
                q[i] *= sy / yy;
        } else {
            double gg = 0.0;
            for (i = 0; i < p; i++)
                gg += g[i] * g[i];
            for (i = 0; i < p; i++)
                q[i] /= sqrt(gg) + 1e-12; /* the first step: unit length */
        }
        for (k = m - 1; k >= 0; k--) {
            double be = 0.0;
            j = (head - 1 - k + 2 * LBFGS_M) % LBFGS_M;
            for (i = 0; i < p; i++)
                be += Y[j * p + i] * q[i];
            be *= rho[j];
            for (i = 0; i < p; i++)
                q[i] += S[j * p + i] * (al[j] - be);
        }
        for (i = 0; i < p; i++) {
            dir[i] = -q[i];
            gd += dir[i] * g[i];
        }
        if (!(gd < 0.0)) { /* not a descent direction: steepest descent */
            m = 0;
            gd = 0.0;
            for (i = 0; i < p; i++) {
                dir[i] = -g[i];
                gd -= g[i] * g[i];
            }
            if (!(gd < 0.0))
                break;
        }
        /* backtracking on the projected path */
        while (evals < max_evals) {
            double dec = 0.0;
            for (i = 0; i < p; i++)
                tn[i] = t[i] + step * dir[i];
            clamp_theta(gp, tn);
            for (i = 0; i < p; i++)
                dec += g[i] * (tn[i] - t[i]);
            fn = objective_value(gp, tn); /* the gradient only where accepted */
            evals++;
            if (isfinite(fn) && fn <= f + 1e-4 * dec) {
                objective_gradient(gp, tn, gn);
                moved = 1;
                break;
            }
            step *= 0.3;
        }
        if (!moved)
            break;
        sy = 0.0;
        for (i = 0; i < p; i++) {
            S[head * p + i] = tn[i] - t[i];
            Y[head * p + i] = gn[i] - g[i];
            sy += S[head * p + i] * Y[head * p + i];
        }
        if (sy > 1e-12) {
            rho[head] = 1.0 / sy;
            head = (head + 1) % LBFGS_M;
            if (m < LBFGS_M)
                m++;
        }
        if (f - fn < 1e-7 * (1.0 + fabs(f))) {
            memcpy(t, tn, p * sizeof(double));
            f = fn;
            break;
        }
        memcpy(t, tn, p * sizeof(double));
        memcpy(g, gn, p * sizeof(double));
        f = fn;
    }
    return f;
}

/* a random start for the fit: lengthscales from the prior (half its spread) */
static void random_theta(const dc_gp *gp, dc_rng *rng, double *t)
{
    size_t i;
    for (i = 0; i < gp->d; i++)
        t[i] = prior_mean(gp->d) + PRIOR_SD * dc_rng_normal(rng) * 0.5;
    t[gp->d] = (dc_rng_uniform(rng) - 0.5) * 2.0;
    t[gp->d + 1] = log(1e-6) + dc_rng_uniform(rng) * 6.0;
    clamp_theta(gp, t);
}

int dc_gp_fit(dc_gp *gp, dc_rng *rng, int restarts, int max_evals)
{
    return dc_gp_fit_sub(gp, rng, restarts, max_evals, max_evals, gp->n);
}

int dc_gp_fit_sub(dc_gp *gp, dc_rng *rng, int restarts, int max_evals, int restart_evals,
                  size_t sub)
{
    size_t p = gp->d + 2, n = gp->n;
    double best_t[64], t[64], best_f;
    int r;
    if (p > 64) { /* many dimensions: the fit would not pay; factor at theta */
        return dc_gp_factor(gp);
    }
    memcpy(t, gp->theta, p * sizeof(double));
    clamp_theta(gp, t);
    best_f = max_evals > 0 ? lbfgs(gp, t, max_evals) : objective_value(gp, t);
    memcpy(best_t, t, p * sizeof(double));
    for (r = 0; r < restarts; r++) {
        double f;
        random_theta(gp, rng, t);
        if (sub < n) { /* the restart on the first sub points, judged on all */
            gp->n = sub;
            (void)lbfgs(gp, t, restart_evals);
            gp->n = n;
            f = objective_value(gp, t);
        } else {
            f = lbfgs(gp, t, restart_evals);
        }
        if (dc_better(f, best_f)) {
            best_f = f;
            memcpy(best_t, t, p * sizeof(double));
        }
    }
    if (!isfinite(best_f))
        dc_gp_default_theta(gp);
    else
        memcpy(gp->theta, best_t, p * sizeof(double));
    return dc_gp_factor(gp);
}

void dc_gp_predict(dc_gp *gp, const double *x, double *mean, double *var)
{
    size_t a, n = gp->n;
    double m = 0.0, v;
    for (a = 0; a < n; a++) {
        gp->kv[a] = matern(gp->sf2, dist2(gp, x, gp->X + a * gp->d));
        m += gp->kv[a] * gp->alpha[a];
    }
    dc_chol_forward(gp->L, n, gp->cap, gp->kv);
    v = gp->sf2;
    for (a = 0; a < n; a++)
        v -= gp->kv[a] * gp->kv[a];
    *mean = m;
    *var = v > 1e-12 * gp->sf2 ? v : 1e-12 * gp->sf2;
}

int dc_gp_append(dc_gp *gp, const double *x, double ys)
{
    size_t a, n = gp->n;
    if (n >= gp->cap)
        return -1;
    for (a = 0; a < n; a++)
        gp->kv[a] = matern(gp->sf2, dist2(gp, x, gp->X + a * gp->d));
    if (dc_chol_append(gp->L, n, gp->cap, gp->kv, gp->sf2 + gp->sn2))
        return -1;
    memcpy(gp->X + n * gp->d, x, gp->d * sizeof(double));
    gp->y[n] = ys;
    gp->n = n + 1;
    memcpy(gp->alpha, gp->y, gp->n * sizeof(double));
    dc_chol_forward(gp->L, gp->n, gp->cap, gp->alpha);
    dc_chol_backward(gp->L, gp->n, gp->cap, gp->alpha);
    return 0;
}

/* log(phi(z) + z Phi(z)), stable for large negative z */
static double log_h(double z)
{
    if (z > -6.0) {
        double h = exp(-0.5 * z * z) * 0.3989422804014327 + z * 0.5 * erfc(-z / 1.4142135623730951);
        return log(h > 1e-300 ? h : 1e-300);
    }
    /* h(z) = phi(z) (1 - z R(-z)) with Mills' ratio; asymptotically phi(z) / z^2 (1 - 3/z^2) */
    return -0.5 * z * z - 0.9189385332046727 - 2.0 * log(-z) + log1p(-3.0 / (z * z));
}

double dc_log_ei(double mean, double var, double best)
{
    double s = sqrt(var);
    return log(s) + log_h((best - mean) / s);
}

double dc_log_prob_below(double mean, double var, double threshold)
{
    double z = (threshold - mean) / sqrt(var);
    if (z > -6.0)
        return log(0.5 * erfc(-z / 1.4142135623730951));
    return -0.5 * z * z - 0.9189385332046727 - log(-z) + log1p(-1.0 / (z * z));
}
