/*
 * constraints.c -- the constraint layer beside the driver (see constraints.h).
 *
 * References:
 *   K. Deb, An efficient constraint handling method for genetic algorithms,
 *     Comput. Methods Appl. Mech. Engrg. 186 (2000) 311-338 (feasibility rules).
 *   J. Nocedal, S. J. Wright, Numerical Optimization, 2nd ed., Springer (2006),
 *     sec. 17.3-17.4 (augmented Lagrangian, PHR form for inequalities).
 */
#include <math.h>
#include <string.h>

#include "engine/constraints.h"

#define RHO_MAX 1e12
/* A constraint whose gradient (x units) at the Lagrangian's first point is
 * longer than SCALE_LENGTH enters it divided down to that length: a volume of
 * 1e6 or a stress of 1e4 would otherwise set the penalty for every other
 * constraint (rho is set from the sum of squares) and leave them unpenalized.
 * Shorter ones (G01's linear constraints: 2.4 to 8) are left as they are. */
#define SCALE_LENGTH 10.0
/* An equality holds within the tolerance (|g| <= tol is feasible): the
 * Lagrangian aims at the band |g| <= (1 - BAND_MARGIN) tol, as two
 * inequalities sharing one signed multiplier, so a solution on the band's
 * edge (G11's best known value, 0.7499 for 0.75, is one) is reached from
 * within the tolerance rather than at g = 0. */
#define BAND_MARGIN 1e-4

dc_status dc_cons_init(dc_cons *c, const dc_run *run, const dc_allocator *a)
{
    size_t k;
    c->m = run->n_constraints;
    c->n = run->n;
    c->prog = run->constraints;
    c->sense = run->senses;
    c->tol = run->constraint_tolerance > 0 ? run->constraint_tolerance : 1e-6;
    c->alloc = a;
    c->ws = dc_mem_calloc(a, c->m, sizeof(dc_workspace *));
    c->lambda = dc_mem_calloc(a, c->m, sizeof(double));
    c->scale = dc_mem_alloc(a, c->m * sizeof(double));
    c->grad = dc_mem_alloc(a, c->n * sizeof(double));
    if (!c->ws || !c->lambda || !c->scale || !c->grad)
        return DC_ERR_NOMEM;
    for (k = 0; k < c->m; k++)
        if (!(c->ws[k] = dc_workspace_new(c->prog[k], a)))
            return DC_ERR_NOMEM;
    c->last_violation = INFINITY;
    return DC_OK;
}

void dc_cons_free(dc_cons *c)
{
    size_t k;
    if (!c->alloc)
        return;
    if (c->ws)
        for (k = 0; k < c->m; k++)
            dc_workspace_free(c->ws[k]);
    dc_mem_free(c->alloc, c->ws, c->m * sizeof(dc_workspace *));
    dc_mem_free(c->alloc, c->lambda, c->m * sizeof(double));
    dc_mem_free(c->alloc, c->scale, c->m * sizeof(double));
    dc_mem_free(c->alloc, c->grad, c->n * sizeof(double));
    dc_mem_free(c->alloc, c->G, c->g_cap * (c->m + 1) * sizeof(double));
    memset(c, 0, sizeof *c);
}

dc_status dc_cons_eval(dc_cons *c, const double *X, size_t rows)
{
    size_t k, r;
    double *col;
    if (rows > c->g_cap) {
        size_t need;
        if (!dc_mul_size(rows, c->m + 1, &need))
            return DC_ERR_NOMEM;
        dc_mem_free(c->alloc, c->G, c->g_cap * (c->m + 1) * sizeof(double));
        c->G = dc_mem_alloc(c->alloc, rows * (c->m + 1) * sizeof(double));
        c->g_cap = c->G ? rows : 0; /* rows x m, then one column of rows */
        if (!c->G)
            return DC_ERR_NOMEM;
    }
    col = c->G + c->g_cap * c->m; /* rows scratch values */
    for (k = 0; k < c->m; k++) {
        dc_status st = dc_eval_many(c->prog[k], c->ws[k], X, rows, c->n, col);
        if (st)
            return st;
        for (r = 0; r < rows; r++)
            c->G[r * c->m + k] = col[r];
    }
    return DC_OK;
}

double dc_cons_violation(dc_constraint_sense sense, double g)
{
    if (g != g)
        return INFINITY;
    if (sense == DC_CONSTRAINT_LE)
        return g > 0 ? g : 0.0;
    if (sense == DC_CONSTRAINT_GE)
        return g < 0 ? -g : 0.0;
    return fabs(g);
}

double dc_cons_excess(const dc_cons *c, const double *g)
{
    double e = 0.0;
    size_t k;
    for (k = 0; k < c->m; k++) {
        double v = dc_cons_violation(c->sense[k], g[k]);
        if (v > c->tol)
            e += v - c->tol;
    }
    return e;
}

double dc_cons_max_violation(const dc_cons *c, const double *g)
{
    double e = 0.0;
    size_t k;
    for (k = 0; k < c->m; k++) {
        double v = dc_cons_violation(c->sense[k], g[k]);
        if (v > e)
            e = v;
    }
    return e;
}

void dc_cons_observe(dc_cons *c, const double *f, size_t rows)
{
    size_t r;
    for (r = 0; r < rows; r++)
        if (isfinite(f[r]) && (!c->have_worst || f[r] > c->worst)) {
            c->worst = f[r];
            c->have_worst = 1;
        }
}

double dc_cons_key(const dc_cons *c, double f, double excess)
{
    double w;
    if (excess <= 0.0)
        return f;
    w = c->have_worst ? c->worst : 0.0;
    /* above every objective value seen, in order of the excess; the factor
     * keeps the excess's resolution whatever the objective's scale */
    return w + (1.0 + fabs(w)) * (1.0 + excess);
}

/* c_k as "c <= 0" and the multiplier's sign for the PHR terms */
static double as_le(dc_constraint_sense sense, double g)
{
    return sense == DC_CONSTRAINT_GE ? -g : g;
}

dc_status dc_cons_lagrangian(dc_cons *c, const double *x, double f, double *L, double *grad,
                             double *g)
{
    size_t k, j;
    double sum = f;
    if (c->rho == 0.0) {
        /* first use: long constraints scaled (SCALE_LENGTH), a penalty on the
         * objective's scale */
        double sq = 0.0;
        for (k = 0; k < c->m; k++) {
            double gk, norm = 0.0;
            dc_status st = dc_gradient(c->prog[k], c->ws[k], x, &gk, c->grad);
            if (st)
                return st;
            for (j = 0; j < c->n; j++)
                norm += isfinite(c->grad[j]) ? c->grad[j] * c->grad[j] : 0.0;
            norm = sqrt(norm);
            c->scale[k] = norm > SCALE_LENGTH ? SCALE_LENGTH / norm : 1.0;
            gk *= c->scale[k];
            sq += isfinite(gk) ? gk * gk : 0.0;
        }
        c->rho = 10.0 * (isfinite(f) && fabs(f) > 1.0 ? fabs(f) : 1.0) / (sq > 1.0 ? sq : 1.0);
    }
    for (k = 0; k < c->m; k++) {
        double gk, coef;
        dc_status st = grad ? dc_gradient(c->prog[k], c->ws[k], x, &gk, c->grad)
                            : dc_eval(c->prog[k], c->ws[k], x, &gk);
        if (st)
            return st;
        g[k] = gk;
        gk *= c->scale[k];
        if (c->sense[k] == DC_CONSTRAINT_EQ) {
            double band = c->scale[k] * c->tol * (1.0 - BAND_MARGIN);
            double lp = c->lambda[k] > 0.0 ? c->lambda[k] : 0.0;
            double lm = c->lambda[k] < 0.0 ? -c->lambda[k] : 0.0;
            double up = lp + c->rho * (gk - band), dn = lm + c->rho * (-gk - band);
            up = up > 0.0 ? up : 0.0;
            dn = dn > 0.0 ? dn : 0.0;
            sum += (up * up - lp * lp + dn * dn - lm * lm) / (2.0 * c->rho);
            coef = up - dn;
        } else {
            double ck = as_le(c->sense[k], gk), t = c->lambda[k] + c->rho * ck;
            double tp = t > 0.0 ? t : 0.0;
            sum += (tp * tp - c->lambda[k] * c->lambda[k]) / (2.0 * c->rho);
            coef = c->sense[k] == DC_CONSTRAINT_GE ? -tp : tp;
        }
        coef *= c->scale[k];
        if (grad && coef != 0.0)
            for (j = 0; j < c->n; j++)
                grad[j] += coef * c->grad[j];
    }
    *L = sum;
    return DC_OK;
}

void dc_cons_update(dc_cons *c, const double *g)
{
    size_t k;
    double viol = dc_cons_max_violation(c, g);
    if (c->rho == 0.0 || !isfinite(viol))
        return;
    for (k = 0; k < c->m; k++) {
        double gk = c->scale[k] * g[k];
        if (c->sense[k] == DC_CONSTRAINT_EQ) { /* the band's two sides (lagrangian) */
            double band = c->scale[k] * c->tol * (1.0 - BAND_MARGIN);
            double lp = c->lambda[k] > 0.0 ? c->lambda[k] : 0.0;
            double lm = c->lambda[k] < 0.0 ? -c->lambda[k] : 0.0;
            double up = lp + c->rho * (gk - band), dn = lm + c->rho * (-gk - band);
            c->lambda[k] = (up > 0.0 ? up : 0.0) - (dn > 0.0 ? dn : 0.0);
        } else {
            double t = c->lambda[k] + c->rho * as_le(c->sense[k], gk);
            c->lambda[k] = t > 0.0 ? t : 0.0;
        }
    }
    if (viol > c->tol && viol > 0.25 * c->last_violation && c->rho < RHO_MAX)
        c->rho *= 10.0;
    c->last_violation = viol;
}
