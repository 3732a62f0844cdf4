/*
 * bo_mo.h -- several objectives for bo (bo_mo.c): ParEGO's random scalarizations.
 *
 * bo keeps every told point's objective vector here.  For each row it asks a weight
 * vector w is drawn uniformly from the simplex and every point's value becomes
 * the augmented Chebyshev scalarization of its objectives, each normalized by the
 * range of the non-dominated points seen (ParEGO, Knowles, IEEE TEC 2006, normalizes
 * by the range of all of them):
 *     s(x) = max_j w_j f~_j(x) + rho * sum_j w_j f~_j(x),   rho = 0.05;
 * bo then models s with its one GP and maximizes log EI as for one objective.
 * A point with a NaN objective scalarizes to NaN (bo counts it as the worst).
 */
#ifndef DC_BO_MO_H
#define DC_BO_MO_H

#include "common/alloc.h"
#include "common/rng.h"
#include "decido.h"

typedef struct dc_bo_mo {
    const dc_allocator *alloc;
    size_t k;     /* objectives (0: one objective, nothing here is used) */
    double *F;    /* cap x k: the told points' objectives */
    size_t cap;
    double *w;    /* k: the current weights */
    double *lo, *span; /* k: the normalization */
} dc_bo_mo;

/* k >= 2 objectives, or k < 2: one objective (no buffers). */
dc_status dc_bo_mo_init(dc_bo_mo *mo, const dc_allocator *alloc, size_t k);
/* Room for `need` points; 0 on allocation failure. */
int dc_bo_mo_reserve(dc_bo_mo *mo, size_t need);
/* Point `row`'s objectives f (k values). */
void dc_bo_mo_store(dc_bo_mo *mo, size_t row, const double *f);
/* New weights; hy[i] for rows [from, to) becomes their scalarization.  excess
 * (may be NULL): the rows' constraint excess; the normalization then takes the
 * feasible rows (excess <= 0) when there are any. */
void dc_bo_mo_scalarize(dc_bo_mo *mo, dc_rng *rng, const double *excess, size_t from,
                        size_t to, double *hy);
void dc_bo_mo_free(dc_bo_mo *mo); /* safe on a zeroed struct */

#endif
