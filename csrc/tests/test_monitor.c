/*
 * test_monitor.c -- dc_monitor through the driver, under ASan + UBSan in CI:
 * the snapshot follows a run and ends equal to its result, a monitor stopped
 * before a run stops it at once, a stop requested from the callback or from
 * another thread ends the run early with the best point so far, a monitor
 * watches one run at a time, and failed allocations (of the monitor or of a
 * watched run) leak nothing and leave the monitor free.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decido.h"
#include "tests/budget.h"
#include "tests/check.h"
#include "tests/objectives.h"
#include "tests/failing_alloc.h"

#define N 4

static const double lo[N] = {-2, -1, 0, -5}, hi[N] = {2, 3, 1, 5};

/* What the callback does and sees. */
typedef struct watch {
    dc_monitor *monitor;
    int64_t stop_at;         /* request a stop at this iteration (0: never) */
    int64_t last_evaluations;
    long calls, bad_snapshots;
    int nested;              /* try a second run on the same monitor */
    dc_status nested_status;
} watch;

static void setup(dc_run *run, int64_t budget, dc_monitor *m)
{
    dc_run_init(run);
    run->n = N;
    run->lower = lo;
    run->upper = hi;
    run->objective = sphere;
    run->max_evaluations = budget;
    run->seed = 5;
    run->monitor = m;
}

static int callback(void *ud, const dc_progress *pr)
{
    watch *w = ud;
    dc_monitor_snapshot s;
    w->calls++;
    dc_monitor_read(w->monitor, &s);
    /* the monitor holds the previous iteration's snapshot (it is published
     * after the callback) */
    if (!s.running || s.iterations != pr->iterations - 1 || s.evaluations > pr->evaluations ||
        s.evaluations < w->last_evaluations)
        w->bad_snapshots++;
    w->last_evaluations = s.evaluations;
    if (w->nested && w->calls == 1) {
        dc_run inner;
        dc_result r;
        dc_error e;
        setup(&inner, 50, w->monitor);
        w->nested_status = dc_optimize("random", &inner, &r, &e);
        if (w->nested_status == DC_OK)
            dc_result_free(&r);
    }
    if (w->stop_at && pr->iterations >= w->stop_at)
        dc_monitor_request_stop(w->monitor);
    return 0;
}

static void test_fresh_and_null(void)
{
    dc_monitor *m = dc_monitor_new(NULL);
    dc_monitor_snapshot s;
    CHECK(m != NULL, "dc_monitor_new(NULL) failed");
    if (!m)
        return;
    dc_monitor_read(m, &s);
    CHECK(s.evaluations == 0 && s.iterations == 0 && isnan(s.best) && s.running == 0 &&
              s.elapsed == 0.0,
          "a fresh monitor is not zeroed");
    CHECK(!dc_monitor_stop_requested(m), "a fresh monitor is stopped");
    dc_monitor_request_stop(m);
    dc_monitor_request_stop(m);
    CHECK(dc_monitor_stop_requested(m) == 1, "stop not seen");
    dc_monitor_free(m);
    dc_monitor_free(NULL);
    dc_monitor_request_stop(NULL);
    CHECK(!dc_monitor_stop_requested(NULL), "NULL monitor stopped");
    dc_monitor_read(NULL, &s);
    CHECK(s.evaluations == 0 && isnan(s.best) && !s.running, "NULL monitor snapshot");
}

/* The snapshot follows the run and ends equal to the result. */
static void test_snapshot(const char *id, int maximize)
{
    dc_monitor *m = dc_monitor_new(NULL);
    watch w;
    dc_run run;
    dc_result res;
    dc_error err;
    dc_monitor_snapshot s;
    memset(&w, 0, sizeof w);
    w.monitor = m;
    setup(&run, capped_budget(id, 600), m);
    run.maximize = maximize;
    run.callback = callback;
    run.callback_data = &w;
    if (dc_optimize(id, &run, &res, &err) != DC_OK) {
        CHECK(0, "%s: %s", id, err.message);
        dc_monitor_free(m);
        return;
    }
    dc_monitor_read(m, &s);
    CHECK(w.calls > 0 && w.bad_snapshots == 0, "%s: %ld of %ld snapshots inconsistent", id,
          w.bad_snapshots, w.calls);
    CHECK(s.evaluations == res.evaluations && s.iterations == res.iterations &&
              s.best == res.fun && !s.running && s.elapsed >= 0.0,
          "%s: final snapshot %lld/%lld/%g/%d, result %lld/%lld/%g", id,
          (long long)s.evaluations, (long long)s.iterations, s.best, s.running,
          (long long)res.evaluations, (long long)res.iterations, res.fun);
    CHECK(res.stop != DC_STOP_MONITOR, "%s: stopped without a request", id);
    dc_result_free(&res);
    /* the monitor watches the next run from zero */
    setup(&run, 40, m);
    if (dc_optimize(id, &run, &res, &err) == DC_OK) {
        dc_monitor_read(m, &s);
        CHECK(s.evaluations == res.evaluations && s.iterations == res.iterations,
              "%s: a second run on the monitor: %lld vs %lld", id, (long long)s.evaluations,
              (long long)res.evaluations);
        dc_result_free(&res);
    } else {
        CHECK(0, "%s: second run: %s", id, err.message);
    }
    dc_monitor_free(m);
}

/* Stopped before the run: one evaluation (the centre), no iteration; a stop
 * is permanent, so the next run stops at once too. */
static void test_stopped_before(const char *id)
{
    dc_monitor *m = dc_monitor_new(NULL);
    dc_run run;
    dc_result res;
    dc_error err;
    dc_monitor_snapshot s;
    int k;
    dc_monitor_request_stop(m);
    setup(&run, 1000, m);
    for (k = 0; k < 2; k++) {
        if (dc_optimize(id, &run, &res, &err) != DC_OK) {
            CHECK(0, "%s: %s", id, err.message);
            break;
        }
        dc_monitor_read(m, &s);
        CHECK(res.stop == DC_STOP_MONITOR && res.evaluations == 1 && res.iterations == 0 &&
                  strcmp(dc_stop_name(res.stop), "stopped") == 0 &&
                  strcmp(res.message, "stopped by its monitor") == 0,
              "%s: pre-stopped run gave %s (%s) after %lld evaluations", id,
              dc_stop_name(res.stop), res.message, (long long)res.evaluations);
        CHECK(res.x[0] == 0.0 && res.x[1] == 1.0 && isfinite(res.fun) && s.best == res.fun &&
                  s.evaluations == 1 && !s.running,
              "%s: pre-stopped run's point or snapshot", id);
        dc_result_free(&res);
    }
    dc_monitor_free(m);
}

/* A stop requested in the callback's context ends the run after that
 * iteration, keeping the best point. */
static void test_stop_from_callback(const char *id)
{
    dc_monitor *m = dc_monitor_new(NULL);
    watch w;
    dc_run run;
    dc_result res;
    dc_error err;
    memset(&w, 0, sizeof w);
    w.monitor = m;
    w.stop_at = 3;
    setup(&run, capped_budget(id, 100000), m);
    run.callback = callback;
    run.callback_data = &w;
    if (dc_optimize(id, &run, &res, &err) != DC_OK) {
        CHECK(0, "%s: %s", id, err.message);
    } else {
        /* an engine may converge before its third iteration */
        if (res.stop != DC_STOP_CONVERGED) {
            size_t j;
            int inside = 1;
            for (j = 0; j < N; j++)
                inside &= res.x[j] >= lo[j] && res.x[j] <= hi[j];
            CHECK(res.stop == DC_STOP_MONITOR && res.iterations == 3 &&
                      res.evaluations < run.max_evaluations && isfinite(res.fun) && inside,
                  "%s: stop from the callback gave %s after %lld iterations", id,
                  dc_stop_name(res.stop), (long long)res.iterations);
        }
        dc_result_free(&res);
    }
    dc_monitor_free(m);
}

typedef struct stopper {
    dc_monitor *monitor;
    int64_t seen_first, seen_last;
    long reads;
} stopper;

static void *stop_later(void *arg)
{
    stopper *s = arg;
    struct timespec pause = {0, 1000000};
    dc_monitor_snapshot snap;
    int k;
    for (k = 0; k < 30000; k++) { /* at most ~30 s */
        dc_monitor_read(s->monitor, &snap);
        s->reads++;
        if (snap.running && snap.evaluations > 0 && !s->seen_first)
            s->seen_first = snap.evaluations;
        if (snap.running && snap.iterations >= 20) {
            s->seen_last = snap.evaluations;
            break;
        }
        nanosleep(&pause, NULL);
    }
    dc_monitor_request_stop(s->monitor);
    return NULL;
}

/* Another thread reads progress and stops the run. */
static void test_stop_from_thread(void)
{
    dc_monitor *m = dc_monitor_new(NULL);
    stopper s;
    pthread_t t;
    dc_run run;
    dc_result res;
    dc_error err;
    const char *opts[1] = {"batch"};
    double vals[1] = {4};
    memset(&s, 0, sizeof s);
    s.monitor = m;
    setup(&run, INT64_C(1) << 40, m);
    run.time_limit = 30.0; /* a safety net */
    run.option_names = opts;
    run.option_values = vals;
    run.n_options = 1;
    if (pthread_create(&t, NULL, stop_later, &s) != 0) {
        CHECK(0, "pthread_create");
        dc_monitor_free(m);
        return;
    }
    if (dc_optimize("random", &run, &res, &err) != DC_OK) {
        CHECK(0, "random: %s", err.message);
        pthread_join(t, NULL);
    } else {
        pthread_join(t, NULL);
        CHECK(res.stop == DC_STOP_MONITOR && res.iterations >= 20 && isfinite(res.fun),
              "stop from a thread gave %s after %lld iterations", dc_stop_name(res.stop),
              (long long)res.iterations);
        CHECK(s.seen_first > 0 && s.seen_last >= s.seen_first &&
                  s.seen_last <= res.evaluations,
              "the reader saw %lld then %lld of %lld evaluations", (long long)s.seen_first,
              (long long)s.seen_last, (long long)res.evaluations);
        dc_result_free(&res);
    }
    dc_monitor_free(m);
}

/* One run at a time: a second run on a busy monitor is refused. */
static void test_busy(void)
{
    dc_monitor *m = dc_monitor_new(NULL);
    watch w;
    dc_run run;
    dc_result res;
    dc_error err;
    memset(&w, 0, sizeof w);
    w.monitor = m;
    w.nested = 1;
    w.nested_status = DC_OK;
    setup(&run, 300, m);
    run.callback = callback;
    run.callback_data = &w;
    CHECK(dc_optimize("random", &run, &res, &err) == DC_OK && res.evaluations == 300,
          "outer run");
    CHECK(w.nested_status == DC_ERR_ARGUMENT, "a busy monitor was accepted (%s)",
          dc_status_code(w.nested_status));
    dc_result_free(&res);
    setup(&run, 30, m);
    CHECK(dc_optimize("random", &run, &res, &err) == DC_OK, "the monitor stayed busy");
    dc_result_free(&res);
    dc_monitor_free(m);
}

static void test_out_of_memory(void)
{
    counting c = {0, 0, 0};
    dc_allocator a = {failing_realloc, &c};
    dc_monitor *m = dc_monitor_new(&a);
    long k;
    CHECK(m == NULL && c.live == 0, "dc_monitor_new ignored a failed allocation");
    c.fail_after = 1;
    m = dc_monitor_new(&a);
    CHECK(m != NULL && c.live == 1, "dc_monitor_new with one allocation");
    dc_monitor_free(m);
    CHECK(c.live == 0, "dc_monitor_free leaked");
    /* a watched run failing at every allocation frees the monitor's claim */
    m = dc_monitor_new(NULL);
    for (k = 0; k < 60; k++) {
        counting rc = {0, k, 0};
        dc_allocator ra = {failing_realloc, &rc};
        dc_run run;
        dc_result res;
        dc_error err;
        dc_monitor_snapshot s;
        dc_status st;
        setup(&run, 200, m);
        run.allocator = &ra;
        st = dc_optimize("cmaes", &run, &res, &err);
        dc_monitor_read(m, &s);
        CHECK(st == DC_OK || st == DC_ERR_NOMEM, "OOM at %ld: %s", k, dc_status_code(st));
        CHECK(!s.running, "OOM at %ld: the monitor still shows a run", k);
        if (st == DC_OK)
            dc_result_free(&res);
        CHECK(rc.live == 0, "OOM at %ld: %ld blocks leaked", k, rc.live);
        if (st == DC_OK)
            break;
    }
    {
        dc_run run;
        dc_result res;
        dc_error err;
        setup(&run, 30, m);
        CHECK(dc_optimize("cmaes", &run, &res, &err) == DC_OK, "the monitor stayed claimed");
        dc_result_free(&res);
    }
    dc_monitor_free(m);
}

static void every_engine(void)
{
    size_t k;
    for (k = 0; k < dc_engine_count(); k++) {
        const char *id = dc_engine_at(k)->id;
        test_snapshot(id, 0);
        test_snapshot(id, 1);
        test_stopped_before(id);
        test_stop_from_callback(id);
    }
}

TEST_MAIN("test_monitor",
          TEST(test_fresh_and_null),
          TEST(every_engine),
          TEST(test_stop_from_thread),
          TEST(test_busy),
          TEST(test_out_of_memory))
