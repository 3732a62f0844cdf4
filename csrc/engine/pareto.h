/*
 * pareto.h -- several objectives: dominance, hypervolume contributions, the
 * survivors of a set and the archive of a run (pareto.c, hypervolume.c).
 *
 * Values are minimized (the driver negates maximized objectives); NaN is
 * worse than any number.  Constrained domination (Deb 2000): a point of
 * smaller excess (the constraint layer's sum of violations beyond the
 * tolerance, 0 when feasible) dominates one of larger excess; between equal
 * excesses, Pareto dominance decides.
 */
#ifndef DC_ENGINE_PARETO_H
#define DC_ENGINE_PARETO_H

#include "engine/engine.h"

/* Truncation rules: how a front is thinned to fewer points. */
enum {
    DC_THIN_CROWDING = 1,   /* NSGA-II's crowding distance, largest kept */
    DC_THIN_HYPERVOLUME = 2 /* the least hypervolume contributor removed, one at a time */
};

/* A sort key of two values and a position: qsort by a, then b, then i
 * (the values finite). */
typedef struct dc_key2 {
    double a, b;
    size_t i;
} dc_key2;
int dc_key2_cmp(const void *pa, const void *pb);

/* The default rule for m objectives: exact contributions are cheap up to 3. */
int dc_thin_default(size_t m);

/* a Pareto-dominates b (no worse in every objective, better in one) */
int dc_pareto_dominates(const double *a, const double *b, size_t m);
/* a (excess ea) dominates b (excess eb) by constrained domination */
int dc_cdominates(const double *a, double ea, const double *b, double eb, size_t m);

/* Hypervolume of F's rows (no argument checks; rows outside the box add nothing).
 * guard (NULL: none): once dc_guard_stopped(guard), *out is not the hypervolume. */
dc_status dc_hv_compute(const dc_allocator *alloc, dc_guard *guard, const double *F,
                        size_t rows, size_t m, const double *ref, double *out);
/* Exclusive contribution of row i among the k rows of P (each strictly inside
 * the box); L: scratch of (k - 1) x m doubles; guard as dc_hv_compute's. */
dc_status dc_hv_contribution(const dc_allocator *alloc, dc_guard *guard, const double *P,
                             size_t k, size_t m, const double *ref, size_t i, double *L,
                             double *out);

/* 3 objectives: the contribution of row i among the alive rows of P (k x 3,
 * in increasing third objective, each strictly inside the box); sx, sy:
 * scratch of k doubles each.  Faster than dc_hv_contribution (no sort). */
double dc_hv_contribution3(const double *P, size_t k, const unsigned char *alive,
                           const double *ref, size_t i, double *sx, double *sy);

/* The derived reference point of rows F: per objective, the largest finite
 * value (nadir) plus a tenth of the range of the finite values, or plus
 * max(1, |nadir|) / 10 where the range is 0; NaN where no value is finite. */
void dc_pareto_reference(const double *F, size_t k, size_t m, double *ref);

/* Keep `keep` of the k rows idx[0..k) of F (m objectives, mutually
 * non-dominated): idx is reordered so that the survivors come first.  When
 * the guard gives up during hypervolume thinning, the crowding distance
 * decides instead (O(m k log k)). */
dc_status dc_pareto_thin(const dc_allocator *alloc, dc_guard *guard, const double *F,
                         size_t m, size_t *idx, size_t k, size_t keep, int rule);

/* The `keep` best of k points (F: k x m, E: k excesses) by constrained
 * non-dominated sorting, the last front thinned by rule: out[0..keep) their
 * indices; rank[q] (0 = first front) and crowd[q] (crowding distance within
 * its front) of survivor q, for tournaments. */
/* When the guard gives up (the run is ending), the points not sorted yet
 * fill the survivors in index order, with the current rank and crowding 0. */
dc_status dc_pareto_select(const dc_allocator *alloc, dc_guard *guard, const double *F,
                           const double *E, size_t k, size_t m, size_t keep, int rule,
                           size_t *out, int *rank, double *crowd);

/* The archive: the points of a run not dominated (constrained domination) by
 * any point offered to it, at most cap of them after each dc_archive_thin
 * (the rule of dc_pareto_thin).  While nothing feasible was offered it holds
 * the non-dominated points of least excess. */
typedef struct dc_archive {
    const dc_allocator *alloc;
    dc_guard *guard; /* the run's (NULL: none), for thinning */
    size_t n, m, cap, size, rows; /* rows: allocated */
    int rule;
    double *X;   /* rows x n (the box's coordinates) */
    double *F;   /* rows x m (minimized) */
    double *E;   /* excess */
    double *V;   /* largest violation (reported) */
    size_t *idx; /* rows: scratch of thinning */
} dc_archive;

dc_status dc_archive_init(dc_archive *a, const dc_allocator *alloc, size_t n, size_t m,
                          size_t cap, int rule);
void dc_archive_free(dc_archive *a); /* safe on a zeroed archive */
/* Offer a point; 1 in *taken when it entered. */
dc_status dc_archive_offer(dc_archive *a, const double *x, const double *f, double excess,
                           double max_violation, int *taken);
/* Thin to at most cap points. */
dc_status dc_archive_thin(dc_archive *a);

#endif
