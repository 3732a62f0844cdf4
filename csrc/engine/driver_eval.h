/*
 * driver_eval.h -- the driver's state and its evaluations (driver_eval.c):
 * scaling to the bounds, budget and clock, the best point and its history,
 * gradients and separable terms.  driver.c builds the state and runs the loop
 * over these; nothing here calls up into it.
 *
 * Nothing here is public: decido.h is the library's interface.
 */
#ifndef DC_DRIVER_EVAL_H
#define DC_DRIVER_EVAL_H

#include <math.h>

#include "engine/constraints.h"
#include "engine/driver_check.h"
#include "engine/engine.h"
#include "engine/front.h"

#define FD_CHUNK 32u /* coordinates per batch of finite differences */

enum { K_REAL, K_INTEGER, K_DISCRETE };

typedef struct dc_driver {
    const dc_run *run;
    const dc_engine_vt *vt;
    const dc_allocator *alloc;
    dc_arena arena;          /* the buffers below that live as long as the run (layout) */
    size_t n;
    double *lo, *span;       /* effective lower bound and width (integers: ceil(lower)
                                and the number of integers; discrete: the first value's
                                index and the count) */
    double *hi;              /* effective upper bound (x space): the bounds tightened by
                                constraints on one coordinate (tighten_bounds) */
    double *levels;          /* cells of an integer or discrete coordinate, 0 for a real one */
    unsigned char *kind;     /* K_REAL, K_INTEGER, K_DISCRETE */
    unsigned char *fixed;
    unsigned char *frozen;   /* no gradient: fixed, integer or discrete */
    dc_workspace *ws;
    double *X;               /* scaled rows */
    size_t x_cap;            /* doubles */
    double *best_x;          /* in x space */
    double best;             /* internal (minimization) sense */
    int have_best;
    int64_t evals, iters, grads;
    double t0, deadline;
    dc_guard guard;          /* long computations' check (dc_driver_guard_check) */
    double guard_end;        /* they give up from this time on (0: none yet) */
    int stop_seen;           /* the guard saw the monitor's stop request */
    double target;           /* internal sense */
    dc_result *res;
    dc_stop stop;
    size_t chunk;            /* rows evaluated between clock checks */
    double *fd;              /* n + 2 FD_CHUNK values for central differences (callables) */
    /* constraints (constraints.c): m > 0 when there are any */
    dc_cons cons;
    double best_excess;      /* of best_x: 0 when feasible */
    double *best_g;          /* m: g at best_x */
    double *alm_u, *alm_g;   /* the best Lagrangian point since the last update */
    double alm_best, alm_f, alm_prev_f;
    int alm_have, alm_rounds, last_kind;
    double *xbuf;            /* n: a point being evaluated alone */
    /* the engine and what it was told (driver.c) */
    void *state;             /* the engine's state (vt->state_size) */
    double *params;          /* the engine's options (info->n_options + 1) */
    double run_params[N_RUN_OPTIONS];
    dc_problem pb;
    dc_rng rng;
    int64_t *group;          /* structure groups (n), or NULL */
    int64_t start_evals;     /* evaluations when the engine last started */
    int started;             /* the engine's init was called: release it */
    int watched;             /* the run holds its monitor: end it */
    /* several objectives (front.c): m values a row, each row offered to the archive */
    size_t m;                /* values a row: n_objectives, or 1 */
    int multi;               /* n_objectives >= 1 */
    dc_front front;
    double *violation;       /* the batch's excess per row, told to the engine (or NULL) */
    int has_floor;           /* floor is a proven lower bound of the objective */
    int at_floor;            /* the run ended within tolerance of it */
    double floor;            /* internal sense */
} dc_driver;

/* Values are minimized internally: this is v in the caller's sense. */
static inline double dc_driver_user_value(const dc_driver *d, double v)
{
    return d->run->maximize ? -v : v;
}

/* The best value as progress shows it: NaN before any, and with several objectives. */
static inline double dc_driver_shown_best(const dc_driver *d)
{
    return d->have_best && !d->multi ? dc_driver_user_value(d, d->best) : NAN;
}

/* The evaluations (driver_eval.c). */
double dc_driver_now(void);
void dc_driver_scale_rows(const dc_driver *d, const double *U, size_t rows, double *X);
void dc_driver_unscale(const dc_driver *d, const double *x, double *u);
int dc_driver_reserve_x(dc_driver *d, size_t rows);
dc_status dc_driver_evaluate_rows(dc_driver *d, const double *X, size_t rows, double *f);
int dc_driver_monitor_says_stop(dc_driver *d);
int dc_driver_out_of_time(dc_driver *d);
/* Long computations (the front's hypervolume and thinning, survivor selection)
 * may go DC_GUARD_GRACE seconds past the time limit or a stop request; then
 * they give up (engine.h, dc_guard), the run's stop reason set. */
#define DC_GUARD_GRACE 0.25
/* The run's guard (d->guard), set up once the clock has started. */
void dc_driver_guard_init(dc_driver *d);
dc_status dc_driver_judge_rows(dc_driver *d, const double *X, size_t rows, double *f);
dc_status dc_driver_eval_x(dc_driver *d, const double *X, size_t rows, double *f);
dc_status dc_driver_eval_points(dc_driver *d, dc_batch *b);
dc_status dc_driver_eval_gradients(dc_driver *d, dc_batch *b);
dc_status dc_driver_eval_terms(dc_driver *d, dc_batch *b);
/* Several objectives, after an iteration: the archive thinned, its hypervolume
 * measured and recorded in the history when it changed. */
dc_status dc_driver_measure_front(dc_driver *d);

#endif
