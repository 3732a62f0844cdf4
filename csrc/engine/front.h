/*
 * front.h -- the driver's side of a run of several objectives (front.c):
 * evaluating the objectives, the run's archive, its hypervolume for
 * progress, and the result's front.  Engines never see it: they get
 * rows x m values and each row's excess in their batch.
 */
#ifndef DC_ENGINE_FRONT_H
#define DC_ENGINE_FRONT_H

#include "engine/pareto.h"

typedef struct dc_front {
    const dc_run *run;
    const dc_allocator *alloc;
    size_t n, m;
    dc_workspace **ws;  /* m, for programs */
    double *col;        /* col_cap values: one objective over a batch */
    size_t col_cap;
    dc_archive archive;
    double ref[DC_MAX_OBJECTIVES]; /* the given reference point, minimized sense */
    int have_ref;
    double hypervolume; /* at the last dc_front_measure (NaN before) */
    dc_guard *guard;    /* the run's: the hypervolume and thinning give up on it */
    int changed;        /* the archive took a point since the last measurement */
    int measured;       /* a measurement was made (or given up) */
    int unmeasured;     /* the last measurement gave up: hypervolume is NaN */
    /* The best archive measured.  Thinning (at the archive's own, moving reference
     * point) and forgetting what it thinned out can leave a worse archive than one
     * held before, so each measured archive is compared with the best so far: by
     * excess (all members share one), then by the hypervolume at a fixed reference
     * point: the given one, else the one derived from the first archive measured at
     * that excess.  The result is the best one when the final archive is worse. */
    int64_t evals;                   /* set by the driver before measuring */
    double fref[DC_MAX_OBJECTIVES];  /* the fixed reference point, minimized sense */
    int have_best;
    double best_excess, best_hv;     /* the best archive's excess and hypervolume at fref */
    int64_t best_evals;              /* when it was held */
    size_t best_size, best_rows;     /* rows: allocated */
    double *best_X, *best_F, *best_E, *best_V;
    int cur_valid;                   /* cur_*: the archive as last measured */
    double cur_excess, cur_hv;
    int restored;                    /* the result is the best archive, not the final one */
    double final_hv;                 /* then: the final archive's hypervolume at fref */
} dc_front;

/* The run's fields of several objectives, checked (dc_run's rules). */
dc_status dc_front_validate(const dc_run *run, dc_error *err);
/* Zeroed fr on entry; run->n_objectives >= 1; guard: the run's (NULL: none). */
dc_status dc_front_init(dc_front *fr, const dc_run *run, const dc_allocator *alloc,
                        dc_guard *guard);
void dc_front_free(dc_front *fr);
/* F[r * m + k] = objective k at row r of X, minimized (a maximized one
 * negated); *abort = 1 when the callable asked to abort the run. */
dc_status dc_front_eval(dc_front *fr, const double *X, size_t rows, double *F, int *abort);
/* Offer an evaluated point to the archive. */
dc_status dc_front_offer(dc_front *fr, const double *x, const double *f, double excess,
                         double max_violation);
/* Thin the archive to its cap; with measure, also its hypervolume at the
 * run's reference point (given, else derived from the archive as it is),
 * unless the archive is unchanged since the last measurement.  When the guard
 * gives up (the run's time limit or stop, past a grace: driver_eval.c) the
 * hypervolume is NaN and unmeasured 1: the run is ending without it. */
dc_status dc_front_measure(dc_front *fr, int measure);

/* With 4 or more objectives (WFG: about 0.1 s for 100 points of 8) the driver
 * measures the hypervolume for progress after every DC_FRONT_MEASURE_EVERY-th
 * iteration only (and at the end); up to 3, after every iteration. */
#define DC_FRONT_MEASURE_EVERY 10
/* The archive into res (n_pareto, pareto_*, hypervolume, reference_point),
 * in the objectives' own sense; arrays from the result's allocator.  When the
 * best archive measured is better than the final one (see dc_front), it is the
 * result: restored 1, best_evals, best_hv and final_hv say so. */
dc_status dc_front_result(dc_front *fr, dc_result *res);
/* Free what dc_front_result put in res. */
void dc_front_result_free(dc_result *res);

#endif
