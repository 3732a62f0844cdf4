/*
 * constraints.h -- the constraint layer beside the driver (constraints.c).
 *
 * Engines never see constraints.  The driver asks this layer for:
 *   - g_k(x) = lhs_k - rhs_k of every constraint at a batch of points;
 *   - the excess of a point: sum_k max(0, violation_k - tol), 0 when feasible
 *     (violation: max(0, g) for <=, max(0, -g) for >=, |g| for ==; NaN counts
 *     as an infinite violation);
 *   - a feasibility-rule key for value-comparing engines (Deb 2000): a
 *     feasible point keeps its objective value, an infeasible one gets a
 *     value above every objective value seen so far, ordered by its excess;
 *   - an augmented Lagrangian (Powell-Hestenes-Rockafellar) and its exact
 *     gradient for gradient batches, with multipliers and penalty updated
 *     between subproblems.
 */
#ifndef DC_ENGINE_CONSTRAINTS_H
#define DC_ENGINE_CONSTRAINTS_H

#include "engine/engine.h"

typedef struct dc_cons {
    size_t m, n;
    const dc_program *const *prog;
    const dc_constraint_sense *sense;
    double tol;
    const dc_allocator *alloc;
    dc_workspace **ws;  /* m */
    double *G;          /* g_cap rows x m */
    size_t g_cap;
    double *grad;       /* n: one constraint's gradient */
    double *lambda;     /* m multipliers (of the scaled constraints) */
    double *scale;      /* m: the Lagrangian sees scale_k * g_k, scale_k = min(1,
                           SCALE_LENGTH / |grad g_k|) at its first point (a constraint
                           of a large magnitude, e.g. a volume, would swamp it) */
    double rho;         /* penalty; 0 until the first Lagrangian */
    double worst;       /* largest finite objective value seen (keys) */
    int have_worst;
    double last_violation; /* max violation at the last multiplier update */
} dc_cons;

/* Zeroed c on entry; run->n_constraints > 0. */
dc_status dc_cons_init(dc_cons *c, const dc_run *run, const dc_allocator *a);
void dc_cons_free(dc_cons *c);
/* c->G[r*m + k] = g_k(X[r*n ..]) for r < rows. */
dc_status dc_cons_eval(dc_cons *c, const double *X, size_t rows);
double dc_cons_violation(dc_constraint_sense sense, double g);
double dc_cons_excess(const dc_cons *c, const double *g);
double dc_cons_max_violation(const dc_cons *c, const double *g);
/* Note the finite objective values f[0..rows) (before keys of the batch). */
void dc_cons_observe(dc_cons *c, const double *f, size_t rows);
/* The feasibility-rule key of a point with objective f and excess e. */
double dc_cons_key(const dc_cons *c, double f, double excess);
/* L = f + sum_k psi_k(scale_k g_k); with grad (df/dx in, dL/dx out, n values) the
 * exact gradient by AD of every constraint at x.  g gets the m values. */
dc_status dc_cons_lagrangian(dc_cons *c, const double *x, double f, double *L, double *grad,
                             double *g);
/* Multipliers from the constraint values g at a subproblem's solution; the
 * penalty grows tenfold when the violation did not fall to a quarter. */
void dc_cons_update(dc_cons *c, const double *g);

#endif
