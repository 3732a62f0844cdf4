/*
 * test_multi.c -- runs of several objectives through the driver (moea),
 * under ASan + UBSan in CI: the budget is never exceeded and every point is
 * inside the bounds, the front is non-dominated and its values are the
 * objectives' at its points bit for bit, the same seed replays the run, the
 * hypervolume agrees with dc_hypervolume at the reported reference point,
 * constraints (feasible fronts, and the least violating points when nothing
 * is feasible), integer coordinates, start points, progress, an aborting
 * objective, single-objective engines refused, failed allocations; fronts
 * whose exact hypervolume or thinning would take hours end at the time limit
 * or the stop request (plus the driver's grace), their hypervolume unmeasured;
 * an archive thinned to less than it held earlier gives way to the best one
 * measured (issue 43 item 6).  bo (ParEGO scalarizations): fronts of ZDT1 at 60
 * and DTLZ2 at 100 evaluations larger than moea's at the same budget, replayed by
 * the seed, constrained, integer, a batch of distinct rows (the Kriging
 * believer), failed allocations.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decido.h"
#include "engine/engine.h"
#include "tests/check.h"
#include "tests/failing_alloc.h"

#define PI 3.14159265358979323846

typedef struct probe {
    size_t m;
    long evaluated, out_of_bounds, abort_after;
    const double *lo, *hi;
} probe;

/* ZDT1 (m = 2) or DTLZ2 (m = 3) on [0, 1]^n */
static void zdt_dtlz(size_t m, const double *x, size_t n, double *f)
{
    size_t j;
    double g = 0.0;
    if (m == 2) {
        for (j = 1; j < n; j++)
            g += x[j];
        g = 1.0 + 9.0 * g / (double)(n - 1);
        f[0] = x[0];
        f[1] = g * (1.0 - sqrt(x[0] / g));
        return;
    }
    for (j = 2; j < n; j++)
        g += (x[j] - 0.5) * (x[j] - 0.5);
    f[0] = (1 + g) * cos(x[0] * PI / 2) * cos(x[1] * PI / 2);
    f[1] = (1 + g) * cos(x[0] * PI / 2) * sin(x[1] * PI / 2);
    f[2] = (1 + g) * sin(x[0] * PI / 2);
}

static int objectives(void *ud, const double *X, size_t rows, size_t n, double *F)
{
    probe *p = ud;
    size_t r, j;
    for (r = 0; r < rows; r++) {
        for (j = 0; j < n; j++)
            p->out_of_bounds += !(X[r * n + j] >= p->lo[j] && X[r * n + j] <= p->hi[j]);
        zdt_dtlz(p->m, X + r * n, n, F + r * p->m);
        p->evaluated++;
    }
    return p->abort_after && p->evaluated >= p->abort_after;
}

typedef struct seen {
    long calls;
    int64_t last_front;
    double last_hv;
    int bad;
} seen;

static int progress(void *ud, const dc_progress *pr)
{
    seen *s = ud;
    s->calls++;
    s->bad |= pr->best_x != NULL || pr->front_size < 1 || !(pr->hypervolume >= 0.0);
    s->last_front = pr->front_size;
    s->last_hv = pr->hypervolume;
    return 0;
}

static void setup(dc_run *run, probe *p, size_t n, size_t m, const double *lo, const double *hi)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    p->lo = lo;
    p->hi = hi;
    dc_run_init(run);
    run->n = n;
    run->lower = lo;
    run->upper = hi;
    run->objective = objectives;
    run->objective_data = p;
    run->n_objectives = m;
    run->max_evaluations = 3000;
    run->seed = 5;
}

/* every front point: inside the bounds, f its objectives' values, none dominated */
static void check_front(const dc_result *res, size_t n, size_t m, const unsigned char *maxed)
{
    size_t p, q, k;
    for (p = 0; p < res->n_pareto; p++) {
        double f[3];
        zdt_dtlz(m, res->pareto_x + p * n, n, f);
        for (k = 0; k < m; k++)
            CHECK(f[k] == res->pareto_f[p * m + k], "point %zu objective %zu: %.17g vs %.17g",
                  p, k, f[k], res->pareto_f[p * m + k]);
        for (q = 0; q < res->n_pareto; q++) {
            int dominated = q != p, better = 0;
            for (k = 0; k < m && dominated; k++) {
                double a = res->pareto_f[q * m + k], b = res->pareto_f[p * m + k];
                if (maxed && maxed[k]) {
                    a = -a;
                    b = -b;
                }
                dominated = a <= b;
                better |= a < b;
            }
            CHECK(!(dominated && better), "point %zu dominated by %zu", p, q);
        }
    }
}

static void basics(size_t m)
{
    double lo[8] = {0, 0, 0, 0, 0, 0, 0, 0}, hi[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    double hv, minimized[300];
    size_t n = 8, p, k;
    dc_run run;
    probe pr;
    seen sn;
    dc_result a, b;
    dc_error err;
    setup(&run, &pr, n, m, lo, hi);
    memset(&sn, 0, sizeof sn);
    run.callback = progress;
    run.callback_data = &sn;
    CHECK(dc_optimize("moea", &run, &a, &err) == DC_OK, "moea: %s", err.message);
    CHECK(a.evaluations == 3000 && pr.evaluated == 3000, "budget: %lld", (long long)a.evaluations);
    CHECK(pr.out_of_bounds == 0, "points outside the bounds");
    CHECK(a.n_pareto >= 2 && a.n_pareto <= DC_DEFAULT_ARCHIVE, "front of %zu", a.n_pareto);
    CHECK(a.stop == DC_STOP_MAX_EVALUATIONS, "stop %s", dc_stop_name(a.stop));
    CHECK(sn.calls == a.iterations && !sn.bad, "progress: %ld calls", sn.calls);
    CHECK(sn.last_front == (int64_t)a.n_pareto && sn.last_hv == a.hypervolume,
          "the last progress is the result's");
    CHECK(isnan(a.fun) && a.feasible, "fun NaN, feasible");
    check_front(&a, n, m, NULL);
    for (p = 0; p < a.n_pareto; p++)
        for (k = 0; k < m; k++)
            minimized[p * m + k] = a.pareto_f[p * m + k];
    CHECK(dc_hypervolume(minimized, a.n_pareto, m, a.reference_point, NULL, &hv, NULL) ==
              DC_OK && hv == a.hypervolume, "hypervolume %.17g vs %.17g", hv, a.hypervolume);
    CHECK(a.n_history >= 2 && a.history[a.n_history - 1].best == a.hypervolume, "history");
    /* replay */
    setup(&run, &pr, n, m, lo, hi);
    CHECK(dc_optimize("moea", &run, &b, &err) == DC_OK, "replay");
    CHECK(a.n_pareto == b.n_pareto && a.hypervolume == b.hypervolume &&
              !memcmp(a.pareto_x, b.pareto_x, a.n_pareto * n * sizeof(double)),
          "the same seed replays the run");
    dc_result_free(&b);
    /* maximized objectives: the values in their own sense */
    {
        unsigned char maxed[3] = {1, 0, 1};
        run.maximized = maxed;
        run.max_evaluations = 500;
        CHECK(dc_optimize("moea", &run, &b, &err) == DC_OK, "maximized");
        check_front(&b, n, m, maxed);
        for (k = 0; k < m; k++) {
            double worst = b.pareto_f[k];
            for (p = 1; p < b.n_pareto; p++)
                worst = maxed[k] ? fmin(worst, b.pareto_f[p * m + k])
                                 : fmax(worst, b.pareto_f[p * m + k]);
            CHECK(maxed[k] ? b.reference_point[k] < worst : b.reference_point[k] > worst,
                  "derived reference beyond the front in objective %zu", k);
        }
        dc_result_free(&b);
    }
    dc_result_free(&a);
}

static void refusals(void)
{
    double lo[2] = {0, 0}, hi[2] = {1, 1};
    dc_run run;
    probe pr;
    dc_result res;
    dc_error err;
    setup(&run, &pr, 2, 2, lo, hi);
    CHECK(dc_optimize("de", &run, &res, &err) == DC_ERR_ARGUMENT &&
              strstr(err.message, "moea"), "a single-objective engine: %s", err.message);
    run.n_objectives = 9;
    CHECK(dc_optimize("moea", &run, &res, &err) == DC_ERR_ARGUMENT, "9 objectives");
    run.n_objectives = 2;
    run.has_target = 1;
    CHECK(dc_optimize("moea", &run, &res, &err) == DC_ERR_ARGUMENT, "a target");
    run.has_target = 0;
    pr.abort_after = 150;
    CHECK(dc_optimize("moea", &run, &res, &err) == DC_OK && res.stop == DC_STOP_ERROR &&
              res.n_pareto >= 1, "an aborting objective ends the run with its front");
    dc_result_free(&res);
}

/* one constraint over 4 coordinates, compiled and set on the run (which holds *g and *sense:
 * the caller frees *g after the run) */
static void one_constraint(dc_run *run, const char *text, dc_program **g,
                           dc_constraint_sense *sense)
{
    dc_options o;
    dc_constraint_info info;
    dc_error err;
    dc_options_init(&o);
    o.n = 4;
    CHECK(dc_compile_constraint(text, strlen(text), &o, g, &info, &err) == DC_OK, "compile %s",
          text);
    *sense = info.sense;
    run->constraints = (const dc_program *const *)g;
    run->senses = sense;
    run->n_constraints = 1;
}

/* x[0] + x[1] >= 1.5 (feasible part of ZDT1), then x[0] >= 2 (never) */
static void constrained(void)
{
    double lo[4] = {0, 0, 0, 0}, hi[4] = {1, 1, 1, 1};
    const char *texts[2] = {"x[0] + x[1] >= 1.5", "x[0] + x[2] >= 2.5"};
    size_t t, p;
    for (t = 0; t < 2; t++) {
        dc_program *g = NULL;
        dc_constraint_sense sense;
        dc_run run;
        probe pr;
        dc_result res;
        dc_error err;
        setup(&run, &pr, 4, 2, lo, hi);
        one_constraint(&run, texts[t], &g, &sense);
        CHECK(dc_optimize("moea", &run, &res, &err) == DC_OK, "constrained: %s", err.message);
        CHECK(res.n_pareto >= 1, "never an empty front");
        for (p = 0; p < res.n_pareto; p++) {
            const double *x = res.pareto_x + p * 4;
            double v = t == 0 ? fmax(0.0, 1.5 - x[0] - x[1]) : fmax(0.0, 2.5 - x[0] - x[2]);
            CHECK(res.pareto_feasible[p] == (t == 0) && fabs(res.pareto_violation[p] - v) < 1e-12,
                  "point %zu feasible %d violation %g (%g)", p, res.pareto_feasible[p],
                  res.pareto_violation[p], v);
        }
        CHECK(res.feasible == (t == 0), "feasible flag");
        if (t == 1)
            CHECK(res.pareto_violation[0] < 0.51, "least violation %g (at best 0.5)", res.pareto_violation[0]);
        dc_result_free(&res);
        dc_program_free(g);
    }
}

static void integers_and_x0(void)
{
    double lo[3] = {0, -3, 0}, hi[3] = {1, 3.5, 1}, x0[6] = {0.25, 2, 0.5, 1, -3, 0};
    unsigned char integer[3] = {0, 1, 0};
    dc_run run;
    probe pr;
    dc_result res;
    dc_error err;
    size_t p;
    setup(&run, &pr, 3, 2, lo, hi);
    run.integer = integer;
    run.x0 = x0;
    run.n_x0 = 2;
    run.max_evaluations = 400;
    CHECK(dc_optimize("moea", &run, &res, &err) == DC_OK, "integers: %s", err.message);
    for (p = 0; p < res.n_pareto; p++) {
        double v = res.pareto_x[p * 3 + 1];
        CHECK(v == floor(v) && v >= -3 && v <= 3, "x[1] = %g is an integer in range", v);
    }
    dc_result_free(&res);
}

static void allocation_failures(const char *engine, int64_t budget)
{
    double lo[4] = {0, 0, 0, 0}, hi[4] = {1, 1, 1, 1};
    long k;
    for (k = 0; k < 400; k += 7) {
        counting c = {0, k, 0};
        dc_allocator a = {failing_realloc, &c};
        dc_run run;
        probe pr;
        dc_result res;
        dc_error err;
        dc_status st;
        setup(&run, &pr, 4, 3, lo, hi);
        run.allocator = &a;
        run.max_evaluations = budget;
        st = dc_optimize(engine, &run, &res, &err);
        if (st == DC_OK)
            dc_result_free(&res);
        CHECK(st == DC_OK || st == DC_ERR_NOMEM, "%s failure %ld: %s", engine, k,
              dc_status_code(st));
        CHECK(c.live == 0, "%s failure %ld: %ld blocks leaked", engine, k, c.live);
    }
}

/* ---- long computations honour the clock and the stop (issue 38) ---- */

typedef struct many {
    size_t m;
    long evaluated, stop_after;
    dc_monitor *monitor;
    double stopped_at; /* when the objective asked the monitor to stop */
} many;

static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* m objectives whose distinct values are all mutually non-dominated: m = 3 on
 * n = 3, the sphere of zdt_dtlz (its points at x[2] = 0.5); else the simplex
 * f_k = x_k / sum_j x_j (n = m) */
static int many_objectives(void *ud, const double *X, size_t rows, size_t n, double *F)
{
    many *p = ud;
    size_t r, j, k;
    for (r = 0; r < rows; r++) {
        if (p->m == 3) {
            zdt_dtlz(3, X + r * n, n, F + r * 3);
        } else {
            double s = 1e-9;
            for (j = 0; j < n; j++)
                s += X[r * n + j];
            for (k = 0; k < p->m; k++)
                F[r * p->m + k] = X[r * n + k] / s;
        }
        if (++p->evaluated == p->stop_after && p->monitor) {
            dc_monitor_request_stop(p->monitor);
            p->stopped_at = now_s();
        }
    }
    return 0;
}

/* start points spread over [0, 1]^n (a fixed sequence: no generator needed) */
static double *spread(size_t rows, size_t n, int third_half)
{
    double *x0 = malloc(rows * n * sizeof(double));
    size_t r, j;
    for (r = 0; x0 && r < rows; r++)
        for (j = 0; j < n; j++)
            x0[r * n + j] = third_half && j >= 2
                                ? 0.5
                                : fmod((double)(r + 1) * (0.6180339887 + 0.1 * (double)j), 1.0);
    return x0;
}

/* 8 objectives, 600 start points kept whole (the exact hypervolume of such a
 * front takes hours): the run ends at its time limit plus the grace, its
 * front kept, its hypervolume NaN and said to be unmeasured. */
static void front_within_time_limit(void)
{
    double lo[8] = {0}, hi[8] = {1, 1, 1, 1, 1, 1, 1, 1}, t;
    size_t n = 8, rows = 600;
    double *x0 = spread(rows, n, 0);
    many p = {8, 0, 0, NULL, 0.0};
    dc_run run;
    dc_result res;
    dc_error err;
    CHECK(x0 != NULL, "x0");
    dc_run_init(&run);
    run.n = n;
    run.lower = lo;
    run.upper = hi;
    run.objective = many_objectives;
    run.objective_data = &p;
    run.n_objectives = 8;
    run.max_evaluations = 1000000;
    run.time_limit = 0.3;
    run.archive_capacity = 100000;
    run.x0 = x0;
    run.n_x0 = rows;
    t = now_s();
    CHECK(dc_optimize("moea", &run, &res, &err) == DC_OK, "8 objectives: %s", err.message);
    t = now_s() - t;
    CHECK(t < run.time_limit + 1.0, "ended %.3f s after its start (time limit %g s)", t,
          run.time_limit);
    CHECK(res.stop == DC_STOP_TIME_LIMIT, "stop %s", dc_stop_name(res.stop));
    CHECK(res.n_pareto > 100, "the front kept (%zu points)", res.n_pareto);
    CHECK(isnan(res.hypervolume), "hypervolume %g: not measured", res.hypervolume);
    CHECK(strstr(res.message, "hypervolume was not measured") != NULL &&
              strstr(res.message, "time limit") != NULL,
          "message: %s", res.message);
    dc_result_free(&res);
    free(x0);
}

/* the same run stopped through its monitor: it ends within a fraction of a
 * second of the request (no time limit at all) */
static void front_stopped_by_monitor(void)
{
    double lo[8] = {0}, hi[8] = {1, 1, 1, 1, 1, 1, 1, 1}, t;
    size_t n = 8, rows = 600;
    double *x0 = spread(rows, n, 0);
    many p = {8, 0, 700, NULL, 0.0};
    dc_run run;
    dc_result res;
    dc_error err;
    p.monitor = dc_monitor_new(NULL);
    CHECK(x0 != NULL && p.monitor != NULL, "x0, monitor");
    dc_run_init(&run);
    run.n = n;
    run.lower = lo;
    run.upper = hi;
    run.objective = many_objectives;
    run.objective_data = &p;
    run.n_objectives = 8;
    run.max_evaluations = 1000000;
    run.archive_capacity = 100000;
    run.monitor = p.monitor;
    run.x0 = x0;
    run.n_x0 = rows;
    CHECK(dc_optimize("moea", &run, &res, &err) == DC_OK, "8 objectives: %s", err.message);
    t = now_s() - p.stopped_at;
    CHECK(p.stopped_at > 0 && t < 1.0, "ended %.3f s after the stop request", t);
    CHECK(res.stop == DC_STOP_MONITOR, "stop %s", dc_stop_name(res.stop));
    CHECK(isnan(res.hypervolume) && strstr(res.message, "stop request") != NULL,
          "hypervolume %g, message: %s", res.hypervolume, res.message);
    dc_result_free(&res);
    dc_monitor_free(p.monitor);
    free(x0);
}

/* 3 objectives, 20000 start points on the front and a cap of 20: thinning by
 * hypervolume contributions gives way to the crowding distance past the
 * time limit, and the front still ends at its cap */
static void thinning_within_time_limit(void)
{
    double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, t;
    size_t rows = 20000, p, q;
    double *x0 = spread(rows, 3, 1);
    many pr = {3, 0, 0, NULL, 0.0};
    dc_run run;
    dc_result res;
    dc_error err;
    CHECK(x0 != NULL, "x0");
    dc_run_init(&run);
    run.n = 3;
    run.lower = lo;
    run.upper = hi;
    run.objective = many_objectives;
    run.objective_data = &pr;
    run.n_objectives = 3;
    run.max_evaluations = 1000000;
    run.time_limit = 0.5;
    run.archive_capacity = 20;
    run.x0 = x0;
    run.n_x0 = rows;
    t = now_s();
    CHECK(dc_optimize("moea", &run, &res, &err) == DC_OK, "3 objectives: %s", err.message);
    t = now_s() - t;
    CHECK(t < run.time_limit + 1.0, "ended %.3f s after its start", t);
    CHECK(res.n_pareto >= 1 && res.n_pareto <= 20, "front of %zu points", res.n_pareto);
    for (p = 0; p < res.n_pareto; p++)
        for (q = 0; q < res.n_pareto; q++)
            CHECK(q == p || !(res.pareto_f[q * 3] <= res.pareto_f[p * 3] &&
                              res.pareto_f[q * 3 + 1] <= res.pareto_f[p * 3 + 1] &&
                              res.pareto_f[q * 3 + 2] <= res.pareto_f[p * 3 + 2] &&
                              memcmp(res.pareto_f + q * 3, res.pareto_f + p * 3,
                                     3 * sizeof(double)) != 0),
                  "point %zu dominated by %zu", p, q);
    dc_result_free(&res);
    free(x0);
}

/* ZDT1 with a small archive and a given reference point: thinning at the
 * archive's own reference point loses hypervolume at the given one, so the
 * final archive is worse than one held earlier.  The result is the best one
 * measured: its hypervolume at the given point is the largest in the history,
 * and the message says when it was held. */
static void best_front_kept(void)
{
    double lo[30], hi[30], ref[2] = {1.1, 1.1}, hv, best = 0.0;
    size_t n = 30, j, restored = 0, seed;
    dc_run run;
    probe pr;
    dc_result res;
    dc_error err;
    for (j = 0; j < n; j++) {
        lo[j] = 0.0;
        hi[j] = 1.0;
    }
    for (seed = 1; seed <= 4; seed++) {
        setup(&run, &pr, n, 2, lo, hi);
        run.seed = seed;
        run.max_evaluations = 20000;
        run.archive_capacity = 10;
        run.reference_point = ref;
        CHECK(dc_optimize("moea", &run, &res, &err) == DC_OK, "moea: %s", err.message);
        check_front(&res, n, 2, NULL);
        CHECK(res.n_pareto <= 10, "front of %zu above the cap", res.n_pareto);
        CHECK(dc_hypervolume(res.pareto_f, res.n_pareto, 2, ref, NULL, &hv, NULL) == DC_OK &&
                  hv == res.hypervolume, "hypervolume %.17g vs %.17g", hv, res.hypervolume);
        best = 0.0;
        for (j = 0; j < res.n_history; j++)
            best = fmax(best, res.history[j].best);
        CHECK(res.hypervolume == best, "seed %zu: the front's %.17g below the best measured %.17g",
              seed, res.hypervolume, best);
        CHECK(res.history[res.n_history - 1].best == res.hypervolume, "the last history entry");
        restored += strstr(res.message, "the front is the archive held after") != NULL;
        dc_result_free(&res);
    }
    CHECK(restored > 0, "no run restored its best archive: the test lost its case");
}

/* ---- bo with several objectives ---- */

/* the front's hypervolume at a fixed reference (1.1, 1.1[, 1.1]) */
static double hv_at_fixed(const dc_result *res, size_t m)
{
    double ref[3] = {1.1, 1.1, 1.1}, hv = -1.0;
    CHECK(dc_hypervolume(res->pareto_f, res->n_pareto, m, ref, NULL, &hv, NULL) == DC_OK,
          "hypervolume");
    return hv;
}

/* ZDT1 (m = 2, 60 evaluations) and DTLZ2 (m = 3, 100) in 5 dimensions: bo's front
 * is valid, replayed by its seed, and larger than moea's (one random population at
 * this budget) on every seed */
static void bo_fronts(size_t m)
{
    double lo[5] = {0, 0, 0, 0, 0}, hi[5] = {1, 1, 1, 1, 1};
    size_t n = 5, seed;
    int64_t budget = m == 2 ? 60 : 100;
    for (seed = 1; seed <= 3; seed++) {
        dc_run run;
        probe pr;
        dc_result a, b, c;
        dc_error err;
        setup(&run, &pr, n, m, lo, hi);
        run.seed = seed;
        run.max_evaluations = budget;
        CHECK(dc_optimize("bo", &run, &a, &err) == DC_OK, "bo, %zu objectives: %s", m,
              err.message);
        CHECK(a.evaluations == budget && pr.evaluated == budget && pr.out_of_bounds == 0,
              "bo: %lld evaluations, %ld outside", (long long)a.evaluations, pr.out_of_bounds);
        CHECK(a.n_pareto >= 2, "bo: a front of %zu", a.n_pareto);
        check_front(&a, n, m, NULL);
        setup(&run, &pr, n, m, lo, hi);
        run.seed = seed;
        run.max_evaluations = budget;
        CHECK(dc_optimize("bo", &run, &b, &err) == DC_OK && a.n_pareto == b.n_pareto &&
                  !memcmp(a.pareto_x, b.pareto_x, a.n_pareto * n * sizeof(double)),
              "bo: the same seed replays the run");
        setup(&run, &pr, n, m, lo, hi);
        run.seed = seed;
        run.max_evaluations = budget;
        CHECK(dc_optimize("moea", &run, &c, &err) == DC_OK, "moea: %s", err.message);
        CHECK(hv_at_fixed(&a, m) > hv_at_fixed(&c, m), "seed %zu, %zu objectives: bo %g, moea %g",
              seed, m, hv_at_fixed(&a, m), hv_at_fixed(&c, m));
        dc_result_free(&a);
        dc_result_free(&b);
        dc_result_free(&c);
    }
}

/* constraints (x[0] + x[1] >= 1.5) and an integer coordinate */
static void bo_constrained_integer(void)
{
    double lo[4] = {0, 0, 0, -3}, hi[4] = {1, 1, 1, 3};
    unsigned char integer[4] = {0, 0, 0, 1};
    dc_program *g = NULL;
    dc_constraint_sense sense;
    dc_run run;
    probe pr;
    dc_result res;
    dc_error err;
    size_t p, feasible = 0;
    setup(&run, &pr, 4, 2, lo, hi);
    one_constraint(&run, "x[0] + x[1] >= 1.5", &g, &sense);
    run.integer = integer;
    run.max_evaluations = 40;
    CHECK(dc_optimize("bo", &run, &res, &err) == DC_OK, "bo constrained: %s", err.message);
    CHECK(res.feasible && res.n_pareto >= 1, "a feasible front");
    for (p = 0; p < res.n_pareto; p++) {
        const double *x = res.pareto_x + p * 4;
        feasible += res.pareto_feasible[p] && x[0] + x[1] >= 1.5;
        CHECK(x[3] == floor(x[3]), "x[3] = %g an integer", x[3]);
    }
    CHECK(feasible == res.n_pareto, "%zu of %zu front points feasible", feasible, res.n_pareto);
    dc_result_free(&res);
    dc_program_free(g);
}

/* through the vtable as a study asks: batches of 4 rows, all distinct */
static void bo_batch_distinct(void)
{
    const dc_engine_vt *vt = dc_engine_find("bo");
    unsigned char fixed[5] = {0, 0, 0, 0, 0};
    double params[16];
    dc_problem pb;
    dc_rng rng;
    void *st;
    size_t k, round, distinct = 0;
    memset(&pb, 0, sizeof pb);
    dc_rng_seed(&rng, 7);
    pb.n = 5;
    pb.alloc = dc_mem_default();
    pb.rng = &rng;
    pb.budget = 100;
    pb.fixed = fixed;
    pb.n_objectives = 2;
    for (k = 0; k < vt->info->n_options; k++)
        params[k] = vt->info->options[k].default_value;
    st = calloc(1, vt->state_size);
    CHECK(st && vt->init(st, &pb, params) == DC_OK, "bo: init");
    for (round = 0; round < 8; round++) {
        dc_batch b;
        size_t r, q, dup = 0;
        memset(&b, 0, sizeof b);
        b.want = 4;
        /* the design's last rows may be fewer; every batch from the model has 4 */
        CHECK(vt->ask(st, &b) == DC_OK && b.rows >= 1 && b.rows <= 4 && (round < 2 || b.rows == 4),
              "bo: ask 4, got %zu", b.rows);
        for (r = 0; r < b.rows; r++) {
            zdt_dtlz(2, b.U + r * 5, 5, b.f + r * 2);
            for (q = 0; q < r; q++)
                dup += memcmp(b.U + r * 5, b.U + q * 5, 5 * sizeof(double)) == 0;
        }
        distinct += dup == 0;
        CHECK(vt->tell(st, &b) == DC_OK, "bo: tell");
    }
    CHECK(distinct == 8, "%zu of 8 batches distinct", distinct);
    vt->release(st);
    free(st);
}

static void basics2(void) { basics(2); }
static void basics3(void) { basics(3); }
static void moea_allocation_failures(void) { allocation_failures("moea", 300); }
static void bo_allocation_failures(void) { allocation_failures("bo", 30); }
static void bo_fronts2(void) { bo_fronts(2); }
static void bo_fronts3(void) { bo_fronts(3); }

TEST_MAIN("test_multi",
          TEST(basics2),
          TEST(basics3),
          TEST(refusals),
          TEST(constrained),
          TEST(integers_and_x0),
          TEST(moea_allocation_failures),
          TEST(bo_allocation_failures),
          TEST(bo_fronts2),
          TEST(bo_fronts3),
          TEST(bo_constrained_integer),
          TEST(bo_batch_distinct),
          TEST(front_within_time_limit),
          TEST(front_stopped_by_monitor),
          TEST(thinning_within_time_limit),
          TEST(best_front_kept))
