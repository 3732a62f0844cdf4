/*
 * study.c -- ask/tell optimization: one engine driven by reverse communication
 * (decido.h, "studies").
 *
 * The study holds the engine's state and the problem: the box (each
 * coordinate real, integer, discrete, or on a log scale), the objectives'
 * senses and the ranking of infeasible and failed trials.  The engine's
 * current batch is cut into slots, each handed out as one trial:
 *
 *   DC_ASK_POINTS    one slot per row
 *   DC_ASK_GRADIENT  per row: the row itself, then u + h e_j and u - h e_j for
 *                    each real coordinate j (central differences in the unit
 *                    cube, one-sided at its faces); integer, discrete and fixed
 *                    coordinates get a zero derivative
 *   DC_ASK_TERMS     never asked: the study does not say the objective is
 *                    separable
 *
 * Slots are told in any order.  When every slot of the batch holds a result the
 * batch is told to the engine (values ranked as the driver ranks them); an ask
 * beyond the slots left closes the batch at once, the slots without a result
 * counting as failed (NaN, worst).  A trial's record says which batch and slot
 * it came from, so a result of a closed batch is only recorded.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "engine/driver_check.h"
#include "common/error.h"

#define FD_STEP 1.4901161193847656e-08 /* sqrt(DBL_EPSILON), in the unit cube */
#define FAILED_EXCESS INFINITY         /* a failed trial (NaN values): worst of all */
#define INFEASIBLE_EXCESS DBL_MAX      /* an infeasible trial without values */

enum { S_REAL, S_INTEGER, S_DISCRETE, S_LOG_REAL, S_LOG_INTEGER };

/* One trial: where it came from and whether it was told. */
typedef struct trial_rec {
    int64_t batch;    /* the batch it came from (-1: told as a point) */
    size_t slot;
    unsigned char told;
} trial_rec;

struct dc_study {
    const dc_engine_vt *vt;
    dc_allocator alloc;
    size_t n, m;                /* coordinates; values per trial (objectives, or 1) */
    int multi;
    /* the box */
    double *lo, *hi, *span;     /* per kind: see scale() */
    double *levels;             /* told to the engine (0 for real and log coordinates) */
    unsigned char *kind, *fixed;
    double **values;            /* discrete coordinates' values (NULL elsewhere) */
    size_t *n_values;
    double sign[DC_MAX_OBJECTIVES]; /* -1 for a maximized objective */
    size_t *real;               /* coordinates with a derivative (gradient batches) */
    size_t n_real;
    /* the engine */
    void *state;
    double *params;
    double run_params[N_RUN_OPTIONS];
    dc_problem pb;
    dc_rng rng;
    int started;                /* the engine asked for its first batch */
    int64_t budget;
    int64_t start_trials;       /* trials when the engine last started */
    /* the current batch */
    dc_batch b;
    int open;
    int64_t batch_no;           /* number of the current (or next) batch */
    int64_t told_batches;       /* batches told to the engine */
    size_t slots, handed, filled;
    size_t slot_cap;
    double *slot_f;             /* slots x m, internal sense */
    double *slot_e;             /* slots: excess */
    unsigned char *slot_told;
    double *u;                  /* n: a slot's point in the cube */
    /* trials */
    trial_rec *trials;
    size_t trial_cap;
    int64_t n_trials;
    /* ranking and the best */
    double worst;               /* the largest finite value seen (one objective) */
    int have_worst;
    int64_t best_id;
    double best_f, best_e;
    /* warm-start points told before the engine started: seeds, rows of n + m + 1
     * (u, values, excess) */
    double *seed;
    size_t n_seed, seed_cap;
    int inited;                 /* the engine's init was called: release it */
};

/* ---- the box ---- */

/* u in [0,1] (projected; NaN to 0) -> coordinate j's value. */
static double scale1(const dc_study *s, size_t j, double t)
{
    double v, cell;
    if (!(t >= 0.0))
        t = 0.0;
    if (t > 1.0)
        t = 1.0;
    switch (s->kind[j]) {
    case S_REAL:
        if (s->fixed[j])
            return s->lo[j];
        v = s->lo[j] + t * s->span[j];
        return v > s->hi[j] ? s->hi[j] : v;
    case S_LOG_REAL:
        if (s->fixed[j])
            return s->hi[j];
        v = exp(s->lo[j] + t * s->span[j]);
        return v < exp(s->lo[j]) ? exp(s->lo[j]) : v > s->hi[j] ? s->hi[j] : v;
    case S_LOG_INTEGER: /* integer k takes [log k, log(k + 1)) of [log lo, log(hi + 1)) */
        v = floor(exp(s->lo[j] + t * s->span[j]));
        {
            double first = floor(exp(s->lo[j]) + 0.5);
            return v < first ? first : v > s->hi[j] ? s->hi[j] : v;
        }
    default:
        cell = floor(t * s->span[j]);
        if (cell > s->span[j] - 1.0)
            cell = s->span[j] - 1.0;
        return s->kind[j] == S_INTEGER ? s->lo[j] + cell : s->values[j][(size_t)cell];
    }
}

static void scale(const dc_study *s, const double *u, double *x)
{
    size_t j;
    for (j = 0; j < s->n; j++)
        x[j] = scale1(s, j, u[j]);
}

/* x inside the box -> the centre of its cell in the cube; 0 when x is not a
 * value the coordinate takes. */
static int unscale(const dc_study *s, const double *x, double *u)
{
    size_t j, k;
    for (j = 0; j < s->n; j++) {
        double v = x[j], t;
        switch (s->kind[j]) {
        case S_DISCRETE:
            for (k = 0; k < s->n_values[j] && s->values[j][k] != v; k++)
                ;
            if (k == s->n_values[j])
                return 0;
            t = ((double)k + 0.5) / s->span[j];
            break;
        case S_INTEGER:
            if (!(v >= s->lo[j] && v <= s->hi[j]) || v != floor(v))
                return 0;
            t = (v - s->lo[j] + 0.5) / s->span[j];
            break;
        case S_LOG_INTEGER:
            if (!(v >= floor(exp(s->lo[j]) + 0.5) && v <= s->hi[j]) || v != floor(v))
                return 0;
            t = s->span[j] > 0 ? (log(v + 0.5) - s->lo[j]) / s->span[j] : 0.5;
            break;
        case S_LOG_REAL:
            if (!(v >= exp(s->lo[j]) * (1 - 1e-15) && v <= s->hi[j]))
                return 0;
            t = s->span[j] > 0 ? (log(v) - s->lo[j]) / s->span[j] : 0.5;
            break;
        default:
            if (!(v >= s->lo[j] && v <= s->hi[j]))
                return 0;
            t = s->span[j] > 0 ? (v - s->lo[j]) / s->span[j] : 0.5;
            break;
        }
        u[j] = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    }
    return 1;
}

static dc_status check_spec(const dc_study_spec *sp, dc_error *err)
{
    size_t j, k;
    if (!sp || sp->n == 0 || !sp->lower || !sp->upper)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "bounds are missing or empty");
    if (sp->n > (size_t)DC_MAX_DIMENSION)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "too many dimensions");
    if (sp->n_objectives > DC_MAX_OBJECTIVES)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "at most %d objectives, got %zu",
                            DC_MAX_OBJECTIVES, sp->n_objectives);
    if (sp->budget <= 0)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "the budget must be positive");
    if (sp->n_options && (!sp->option_names || !sp->option_values))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "options without names or values");
    if ((sp->values == NULL) != (sp->n_values == NULL))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "values and n_values go together");
    for (j = 0; j < sp->n; j++) {
        size_t nv = sp->n_values ? sp->n_values[j] : 0;
        int lg = sp->log_scale && sp->log_scale[j];
        if (nv) {
            if (!sp->values[j])
                return dc_set_error(err, DC_ERR_ARGUMENT, j, 0, "values[%zu] is NULL", j);
            for (k = 0; k < nv; k++)
                if (!isfinite(sp->values[j][k]) || (k && !(sp->values[j][k] > sp->values[j][k - 1])))
                    return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                        "values[%zu] must be finite and increasing", j);
            if (lg)
                return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                    "coordinate %zu: a log scale is for a range, not values", j);
            continue;
        }
        if (!isfinite(sp->lower[j]) || !isfinite(sp->upper[j]) || sp->lower[j] > sp->upper[j] ||
            !isfinite(sp->upper[j] - sp->lower[j]))
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "bounds[%zu] must be finite with lower <= upper, got [%g, %g]", j,
                                sp->lower[j], sp->upper[j]);
        if (sp->integer && sp->integer[j] && ceil(sp->lower[j]) > floor(sp->upper[j]))
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0, "bounds[%zu] hold no integer", j);
        if (lg && !(sp->lower[j] > 0.0))
            return dc_set_error(err, DC_ERR_ARGUMENT, j, 0,
                                "bounds[%zu]: a log scale needs lower > 0, got %g", j,
                                sp->lower[j]);
    }
    return DC_OK;
}

static dc_status set_box(dc_study *s, const dc_study_spec *sp)
{
    size_t j, k, n = s->n;
    for (j = 0; j < n; j++) {
        size_t nv = sp->n_values ? sp->n_values[j] : 0;
        int integer = sp->integer && sp->integer[j];
        int lg = sp->log_scale && sp->log_scale[j];
        double lo = sp->lower[j], hi = sp->upper[j];
        if (nv) {
            s->kind[j] = S_DISCRETE;
            s->values[j] = dc_mem_alloc(&s->alloc, nv * sizeof(double));
            if (!s->values[j])
                return DC_ERR_NOMEM;
            s->n_values[j] = nv;
            for (k = 0; k < nv; k++)
                s->values[j][k] = sp->values[j][k];
            s->lo[j] = 0.0;
            s->hi[j] = (double)(nv - 1);
            s->span[j] = (double)nv;
        } else if (integer && lg) {
            s->kind[j] = S_LOG_INTEGER;
            s->lo[j] = log(ceil(lo));
            s->hi[j] = floor(hi);
            s->span[j] = log(floor(hi) + 1.0) - s->lo[j];
        } else if (integer) {
            s->kind[j] = S_INTEGER;
            s->lo[j] = ceil(lo);
            s->hi[j] = floor(hi);
            s->span[j] = s->hi[j] - s->lo[j] + 1.0;
        } else if (lg) {
            s->kind[j] = S_LOG_REAL;
            s->lo[j] = log(lo);
            s->hi[j] = hi;
            s->span[j] = log(hi) - s->lo[j];
        } else {
            s->kind[j] = S_REAL;
            s->lo[j] = lo;
            s->hi[j] = hi;
            s->span[j] = hi - lo;
        }
        switch (s->kind[j]) {
        case S_INTEGER:
        case S_DISCRETE:
            s->fixed[j] = s->span[j] == 1.0;
            s->levels[j] = s->span[j];
            break;
        case S_LOG_INTEGER:
            s->fixed[j] = s->hi[j] == floor(exp(s->lo[j]) + 0.5);
            break;
        default:
            s->fixed[j] = s->span[j] == 0.0;
            break;
        }
        if ((s->kind[j] == S_REAL || s->kind[j] == S_LOG_REAL) && !s->fixed[j])
            s->real[s->n_real++] = j;
    }
    return DC_OK;
}

/* ---- the engine ---- */

static dc_status check_engine(dc_study *s, const dc_study_spec *sp, dc_error *err)
{
    dc_run run;
    dc_run_init(&run);
    run.n = sp->n;
    run.integer = sp->integer;
    run.values = sp->values;
    run.n_values = sp->n_values;
    run.n_objectives = sp->n_objectives >= 2 ? sp->n_objectives : 0;
    run.n_constraints = sp->constrained ? 1 : 0;
    run.option_names = sp->option_names;
    run.option_values = sp->option_values;
    run.n_options = sp->n_options;
    if (s->vt->info->max_dims && sp->n > s->vt->info->max_dims)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "engine '%s' handles at most %zu dimensions, got %zu",
                            s->vt->info->id, s->vt->info->max_dims, sp->n);
    if (dc_driver_check_support(s->vt, &run, err))
        return err->status;
    return dc_driver_read_options(s->vt, &run, s->params, s->run_params, err);
}

static dc_status engine_init(dc_study *s, int64_t budget)
{
    dc_status st;
    s->pb.budget = budget;
    s->inited = 1; /* release even after a failed init (the state is zeroed) */
    if ((st = s->vt->init(s->state, &s->pb, s->params)))
        return st;
    s->start_trials = s->n_trials;
    return DC_OK;
}

/* The engine converged or has nothing to ask: start it again (from a uniform
 * random point when it takes one), planning for the trials left. */
static dc_status restart(dc_study *s)
{
    int64_t left = s->budget - s->n_trials;
    size_t j;
    dc_status st;
    if (s->vt->release)
        s->vt->release(s->state);
    memset(s->state, 0, s->vt->state_size);
    if ((st = engine_init(s, left > 0 ? left : s->budget)))
        return st;
    if (s->vt->seed_point) {
        for (j = 0; j < s->n; j++)
            s->u[j] = dc_rng_uniform(&s->rng);
        return s->vt->seed_point(s->state, s->u);
    }
    return DC_OK;
}

/* Warm-start points told before the first ask: the best (one objective) or
 * each (several) seeds the engine. */
static dc_status plant_seeds(dc_study *s)
{
    size_t r, best = 0, w = s->n + s->m + 1;
    const double *row, *top;
    if (!s->n_seed || !s->vt->seed_point || !(s->vt->info->supports & DC_SUPPORTS_X0))
        return DC_OK;
    if (s->multi) {
        for (r = 0; r < s->n_seed; r++) {
            dc_status st = s->vt->seed_point(s->state, s->seed + r * w);
            if (st)
                return st;
        }
        return DC_OK;
    }
    for (r = 1; r < s->n_seed; r++) {
        row = s->seed + r * w;
        top = s->seed + best * w;
        if (row[s->n + 1] < top[s->n + 1] ||
            (row[s->n + 1] == top[s->n + 1] && dc_better(row[s->n], top[s->n])))
            best = r;
    }
    return s->vt->seed_point(s->state, s->seed + best * w);
}

/* Room for need slots (the three slot arrays share slot_cap). */
static int reserve_slots(dc_study *s, size_t need)
{
    size_t fbytes;
    if (need <= s->slot_cap)
        return 1;
    if (!dc_mul_size(need, s->m * sizeof(double), &fbytes))
        return 0;
    dc_mem_free(&s->alloc, s->slot_f, s->slot_cap * s->m * sizeof(double));
    dc_mem_free(&s->alloc, s->slot_e, s->slot_cap * sizeof(double));
    dc_mem_free(&s->alloc, s->slot_told, s->slot_cap);
    s->slot_f = dc_mem_alloc(&s->alloc, fbytes);
    s->slot_e = dc_mem_alloc(&s->alloc, need * sizeof(double));
    s->slot_told = dc_mem_alloc(&s->alloc, need);
    if (!s->slot_f || !s->slot_e || !s->slot_told) {
        dc_mem_free(&s->alloc, s->slot_f, fbytes);
        dc_mem_free(&s->alloc, s->slot_e, need * sizeof(double));
        dc_mem_free(&s->alloc, s->slot_told, need);
        s->slot_f = s->slot_e = NULL;
        s->slot_told = NULL;
        s->slot_cap = 0;
        return 0;
    }
    s->slot_cap = need;
    return 1;
}

static size_t slots_of(const dc_study *s, const dc_batch *b)
{
    return b->kind == DC_ASK_GRADIENT ? b->rows * (1 + 2 * s->n_real) : b->rows;
}

/* The engine's next batch, its slots empty.  want: the points the caller still
 * wants. */
static dc_status open_batch(dc_study *s, size_t want, dc_error *err)
{
    const dc_engine_vt *vt = s->vt;
    int tries;
    dc_status st;
    if (!s->started) {
        s->started = 1;
        if ((st = plant_seeds(s)))
            return dc_set_error(err, st, 0, 0, "engine '%s' could not take a start point (%s)",
                                vt->info->id, dc_status_code(st));
    }
    for (tries = 0; tries < 3; tries++) {
        memset(&s->b, 0, sizeof s->b);
        s->b.want = want;
        if (vt->stop(s->state) == DC_STOP_NONE) {
            if ((st = vt->ask(s->state, &s->b)))
                return dc_set_error(err, st, 0, 0, "engine '%s' failed (%s)", vt->info->id,
                                    dc_status_code(st));
            if (s->b.rows > 0 && s->b.kind != DC_ASK_TERMS &&
                !(s->multi && s->b.kind != DC_ASK_POINTS))
                break;
            if (s->b.rows > 0)
                return dc_set_error(err, DC_ERR_INTERNAL, 0, 0,
                                    "engine '%s' asked for what a study cannot give",
                                    vt->info->id);
        }
        if ((st = restart(s)))
            return dc_set_error(err, st, 0, 0, "engine '%s' could not restart (%s)",
                                vt->info->id, dc_status_code(st));
    }
    if (tries == 3)
        return dc_set_error(err, DC_ERR_INTERNAL, 0, 0, "engine '%s' asked for no points",
                            vt->info->id);
    s->slots = slots_of(s, &s->b);
    if (!reserve_slots(s, s->slots))
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    memset(s->slot_told, 0, s->slots);
    s->open = 1;
    s->handed = s->filled = 0;
    return DC_OK;
}

/* Slot k's point in the cube (s->u): a row, or a row moved for a difference.
 * *h gets the step (0 for a row itself). */
static void slot_point(dc_study *s, size_t k, double *h)
{
    size_t per = s->b.kind == DC_ASK_GRADIENT ? 1 + 2 * s->n_real : 1;
    size_t row = k / per, w = k % per, j;
    const double *U = s->b.U + row * s->n;
    for (j = 0; j < s->n; j++)
        s->u[j] = !(U[j] >= 0.0) ? 0.0 : U[j] > 1.0 ? 1.0 : U[j];
    *h = 0.0;
    if (w) {
        size_t c = s->real[(w - 1) / 2];
        double t = s->u[c];
        s->u[c] = w % 2 ? (t + FD_STEP <= 1.0 ? t + FD_STEP : t)
                        : (t - FD_STEP >= 0.0 ? t - FD_STEP : t);
        *h = s->u[c] - t;
    }
}

/* One objective: the value the engine is told for f with excess e. */
static double key(const dc_study *s, double f, double e)
{
    double w, k;
    if (e <= 0.0)
        return f;
    if (f != f && isinf(e))
        return NAN; /* failed: worse than anything */
    w = s->have_worst ? s->worst : 0.0;
    k = w + (1.0 + fabs(w)) * (1.0 + e);
    return isfinite(k) ? k : DBL_MAX;
}

static void observe(dc_study *s, const double *f)
{
    if (!s->multi && isfinite(f[0]) && (!s->have_worst || f[0] > s->worst)) {
        s->worst = f[0];
        s->have_worst = 1;
    }
}

/* Tell the engine the batch: the slots told, the others failed. */
static dc_status close_batch(dc_study *s, dc_error *err)
{
    dc_batch *b = &s->b;
    size_t r, k, q, per = b->kind == DC_ASK_GRADIENT ? 1 + 2 * s->n_real : 1;
    dc_status st;
    for (k = 0; k < s->slots; k++)
        if (!s->slot_told[k]) {
            for (q = 0; q < s->m; q++)
                s->slot_f[k * s->m + q] = NAN;
            s->slot_e[k] = FAILED_EXCESS;
        }
    for (r = 0; r < b->rows; r++) {
        size_t base = r * per;
        if (s->multi) {
            memcpy(b->f + r * s->m, s->slot_f + base * s->m, s->m * sizeof(double));
            if (b->violation)
                b->violation[r] = isinf(s->slot_e[base]) ? DBL_MAX : s->slot_e[base];
            continue;
        }
        b->f[r] = key(s, s->slot_f[base], s->slot_e[base]);
        if (b->violation) /* as the driver fills it: the excess (0 without constraints) */
            b->violation[r] = !s->pb.constrained       ? 0.0
                              : isinf(s->slot_e[base]) ? DBL_MAX
                                                       : s->slot_e[base];
        if (b->kind == DC_ASK_GRADIENT) {
            double *g = b->grad + r * s->n, h;
            for (k = 0; k < s->n; k++)
                g[k] = 0.0;
            for (q = 0; q < s->n_real; q++) {
                size_t kp = base + 1 + 2 * q, km = kp + 1;
                double fp = key(s, s->slot_f[kp], s->slot_e[kp]);
                double fm = key(s, s->slot_f[km], s->slot_e[km]), hp, hm, d;
                slot_point(s, kp, &hp);
                slot_point(s, km, &hm);
                h = hp - hm;
                d = h > 0.0 ? (fp - fm) / h : 0.0;
                g[s->real[q]] = isfinite(d) ? d : 0.0;
            }
        }
    }
    s->open = 0;
    s->batch_no++;
    s->told_batches++;
    if ((st = s->vt->tell(s->state, b)))
        return dc_set_error(err, st, 0, 0, "engine '%s' failed (%s)", s->vt->info->id,
                            dc_status_code(st));
    return DC_OK;
}

/* ---- trials ---- */

static dc_status new_trial(dc_study *s, int64_t batch, size_t slot, int64_t *id)
{
    size_t need = (size_t)s->n_trials + 1;
    if (!dc_mem_grow(&s->alloc, (void **)&s->trials, &s->trial_cap, need, sizeof(trial_rec)))
        return DC_ERR_NOMEM;
    s->trials[s->n_trials].batch = batch;
    s->trials[s->n_trials].slot = slot;
    s->trials[s->n_trials].told = 0;
    *id = s->n_trials++;
    return DC_OK;
}

/* The result in the internal sense: f (m values) and excess e. */
static dc_status read_result(const dc_study *s, dc_trial_status status, const double *values,
                             double excess, double *f, double *e, dc_error *err)
{
    size_t q;
    if (status == DC_TRIAL_OK) {
        if (!values)
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "a completed trial needs its values");
        if (excess < 0.0)
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "the excess must be >= 0, got %g", excess);
        for (q = 0; q < s->m; q++)
            f[q] = values[q] == values[q] ? s->sign[q] * values[q] : NAN;
        *e = excess == excess ? excess : INFEASIBLE_EXCESS;
        if (*e > 0.0 && !s->pb.constrained)
            return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                                "an excess was told to a study without constraints");
        return DC_OK;
    }
    if (status != DC_TRIAL_FAILED && status != DC_TRIAL_INFEASIBLE)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "unknown trial status %d", (int)status);
    for (q = 0; q < s->m; q++)
        f[q] = NAN;
    *e = status == DC_TRIAL_FAILED ? FAILED_EXCESS : INFEASIBLE_EXCESS;
    return DC_OK;
}

/* Every completed trial is a candidate for the best (one objective). */
static void consider(dc_study *s, int64_t id, dc_trial_status status, const double *f, double e)
{
    if (status != DC_TRIAL_OK)
        return;
    observe(s, f);
    if (s->multi || f[0] != f[0])
        return;
    if (s->best_id < 0 || e < s->best_e || (e == s->best_e && dc_better(f[0], s->best_f))) {
        s->best_id = id;
        s->best_f = f[0];
        s->best_e = e;
    }
}

/* ---- public ---- */

void dc_study_spec_init(dc_study_spec *spec)
{
    memset(spec, 0, sizeof *spec);
}

void dc_study_free(dc_study *s)
{
    size_t j, n;
    dc_allocator a;
    if (!s)
        return;
    a = s->alloc;
    n = s->n;
    if (s->inited && s->vt->release)
        s->vt->release(s->state);
    dc_mem_free(&a, s->state, s->vt->state_size);
    dc_mem_free(&a, s->params, (s->vt->info->n_options + 1) * sizeof(double));
    for (j = 0; s->values && j < n; j++)
        dc_mem_free(&a, s->values[j], (s->n_values ? s->n_values[j] : 0) * sizeof(double));
    dc_mem_free(&a, s->values, n * sizeof(double *));
    dc_mem_free(&a, s->n_values, n * sizeof(size_t));
    dc_mem_free(&a, s->lo, n * sizeof(double));
    dc_mem_free(&a, s->hi, n * sizeof(double));
    dc_mem_free(&a, s->span, n * sizeof(double));
    dc_mem_free(&a, s->levels, n * sizeof(double));
    dc_mem_free(&a, s->kind, n);
    dc_mem_free(&a, s->fixed, n);
    dc_mem_free(&a, s->real, n * sizeof(size_t));
    dc_mem_free(&a, s->u, n * sizeof(double));
    dc_mem_free(&a, s->slot_f, s->slot_cap * s->m * sizeof(double));
    dc_mem_free(&a, s->slot_e, s->slot_cap * sizeof(double));
    dc_mem_free(&a, s->slot_told, s->slot_cap);
    dc_mem_free(&a, s->trials, s->trial_cap * sizeof(trial_rec));
    dc_mem_free(&a, s->seed, s->seed_cap * (n + s->m + 1) * sizeof(double));
    dc_mem_free(&a, s, sizeof *s);
}

dc_status dc_study_new(const char *engine, const dc_study_spec *sp, dc_study **out,
                       dc_error *error)
{
    dc_error scratch;
    dc_error *err = error ? error : &scratch;
    const dc_allocator *a;
    const dc_engine_vt *vt;
    dc_study *s;
    dc_status st;
    size_t n, q, j;
    memset(err, 0, sizeof *err);
    if (!out)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL study");
    *out = NULL;
    if ((st = check_spec(sp, err)))
        return st;
    vt = dc_engine_find(engine ? engine : dc_engine_default());
    if (!vt)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "unknown engine '%.40s'",
                            engine ? engine : "(null)");
    a = sp->allocator ? sp->allocator : dc_mem_default();
    s = dc_mem_calloc(a, 1, sizeof *s);
    if (!s)
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    n = sp->n;
    s->vt = vt;
    s->alloc = *a;
    s->n = n;
    s->multi = sp->n_objectives >= 2;
    s->m = s->multi ? sp->n_objectives : 1;
    s->best_id = -1;
    s->budget = sp->budget;
    for (q = 0; q < s->m; q++)
        s->sign[q] = sp->maximized && sp->maximized[q] ? -1.0 : 1.0;
    s->state = dc_mem_calloc(a, 1, vt->state_size);
    s->params = dc_mem_calloc(a, vt->info->n_options + 1, sizeof(double));
    s->lo = dc_mem_alloc(a, n * sizeof(double));
    s->hi = dc_mem_alloc(a, n * sizeof(double));
    s->span = dc_mem_alloc(a, n * sizeof(double));
    s->levels = dc_mem_calloc(a, n, sizeof(double));
    s->kind = dc_mem_calloc(a, n, 1);
    s->fixed = dc_mem_calloc(a, n, 1);
    s->real = dc_mem_alloc(a, n * sizeof(size_t));
    s->u = dc_mem_alloc(a, n * sizeof(double));
    s->values = dc_mem_calloc(a, n, sizeof(double *));
    s->n_values = dc_mem_calloc(a, n, sizeof(size_t));
    if (!s->state || !s->params || !s->lo || !s->hi || !s->span || !s->levels || !s->kind ||
        !s->fixed || !s->real || !s->u || !s->values || !s->n_values) {
        dc_study_free(s);
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    }
    if ((st = check_engine(s, sp, err))) {
        dc_study_free(s);
        return st;
    }
    if ((st = set_box(s, sp))) {
        dc_study_free(s);
        return dc_set_error(err, st, 0, 0, "out of memory");
    }
    dc_rng_seed(&s->rng, sp->seed);
    s->pb.n = n;
    s->pb.alloc = &s->alloc;
    s->pb.rng = &s->rng;
    s->pb.fixed = s->fixed;
    s->pb.structure = DC_STRUCT_GENERAL;
    s->pb.stop_on_convergence = s->run_params[RUN_OPT_STOP_ON_CONVERGENCE] != 0.0;
    s->pb.constrained = sp->constrained != 0;
    s->pb.n_objectives = s->multi ? s->m : 0;
    for (j = 0; j < n; j++)
        if (s->levels[j] > 0.0)
            s->pb.levels = s->levels;
    if ((st = engine_init(s, sp->budget))) {
        dc_study_free(s);
        return dc_set_error(err, st, 0, 0, "engine '%s' could not start (%s)", vt->info->id,
                            dc_status_code(st));
    }
    *out = s;
    return DC_OK;
}

dc_status dc_study_ask(dc_study *s, size_t k, int64_t *ids, double *X, dc_error *error)
{
    dc_error scratch;
    dc_error *err = error ? error : &scratch;
    size_t got = 0, take, i, need;
    double h;
    dc_status st;
    memset(err, 0, sizeof *err);
    if (!s)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL study");
    if (k == 0)
        return DC_OK;
    if (!ids || !X)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL output");
    if (k > DC_STUDY_MAX_ASK || !dc_mul_size(k, s->n, &need))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "at most %zu points in one ask, got %zu", DC_STUDY_MAX_ASK, k);
    if (!dc_mem_grow(&s->alloc, (void **)&s->trials, &s->trial_cap, (size_t)s->n_trials + k,
                     sizeof(trial_rec)))
        return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
    if (s->open && s->slots - s->handed < k && (st = close_batch(s, err)))
        return st; /* beyond the batch's rest: its points not handed out count as failed */
    while (got < k) {
        if (!s->open && (st = open_batch(s, k - got, err)))
            return st;
        if (s->handed == s->slots) { /* asked beyond the batch: close it */
            if ((st = close_batch(s, err)))
                return st;
            continue;
        }
        take = s->slots - s->handed < k - got ? s->slots - s->handed : k - got;
        for (i = 0; i < take; i++) {
            if ((st = new_trial(s, s->batch_no, s->handed, &ids[got])))
                return dc_set_error(err, st, 0, 0, "out of memory");
            slot_point(s, s->handed, &h);
            scale(s, s->u, X + got * s->n);
            s->handed++;
            got++;
        }
    }
    return DC_OK;
}

dc_status dc_study_tell(dc_study *s, int64_t id, dc_trial_status status, const double *values,
                        double excess, dc_error *error)
{
    dc_error scratch;
    dc_error *err = error ? error : &scratch;
    double f[DC_MAX_OBJECTIVES], e;
    trial_rec *t;
    dc_status st;
    memset(err, 0, sizeof *err);
    if (!s)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL study");
    if (id < 0 || id >= s->n_trials)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "unknown trial %lld (trials 0 to %lld)",
                            (long long)id, (long long)s->n_trials - 1);
    t = &s->trials[id];
    if (t->told)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "trial %lld was already told",
                            (long long)id);
    if ((st = read_result(s, status, values, excess, f, &e, err)))
        return st;
    t->told = 1;
    consider(s, id, status, f, e);
    if (s->open && t->batch == s->batch_no) {
        memcpy(s->slot_f + t->slot * s->m, f, s->m * sizeof(double));
        s->slot_e[t->slot] = e;
        s->slot_told[t->slot] = 1;
        if (++s->filled == s->slots)
            return close_batch(s, err);
    }
    return DC_OK;
}

dc_status dc_study_tell_point(dc_study *s, const double *x, dc_trial_status status,
                              const double *values, double excess, int64_t *id, dc_error *error)
{
    dc_error scratch;
    dc_error *err = error ? error : &scratch;
    double f[DC_MAX_OBJECTIVES], e;
    int64_t got;
    dc_status st;
    memset(err, 0, sizeof *err);
    if (!s || !x || !id)
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0, "NULL study, point or id");
    if (!unscale(s, x, s->u))
        return dc_set_error(err, DC_ERR_ARGUMENT, 0, 0,
                            "the point is outside the bounds or not a value a variable takes");
    if ((st = read_result(s, status, values, excess, f, &e, err)))
        return st;
    if (!s->started && status == DC_TRIAL_OK) {
        size_t w = s->n + s->m + 1;
        double *row;
        if (!dc_mem_grow(&s->alloc, (void **)&s->seed, &s->seed_cap, s->n_seed + 1,
                         w * sizeof(double)))
            return dc_set_error(err, DC_ERR_NOMEM, 0, 0, "out of memory");
        row = s->seed + s->n_seed++ * w;
        memcpy(row, s->u, s->n * sizeof(double));
        memcpy(row + s->n, f, s->m * sizeof(double));
        row[s->n + s->m] = e;
    }
    if ((st = new_trial(s, -1, 0, &got)))
        return dc_set_error(err, st, 0, 0, "out of memory");
    s->trials[got].told = 1;
    consider(s, got, status, f, e);
    *id = got;
    return DC_OK;
}

int64_t dc_study_n_trials(const dc_study *s)
{
    return s ? s->n_trials : 0;
}

int64_t dc_study_best(const dc_study *s)
{
    return s ? s->best_id : -1;
}

int64_t dc_study_n_batches(const dc_study *s)
{
    return s ? s->told_batches : 0;
}
