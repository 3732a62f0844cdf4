/*
 * test_convergence.c -- the run option stop_on_convergence and the rule of
 * restarts that agree (engine.h), and compiling many named variables.
 *
 *  - dc_restart_log: a new best restarts the count, DC_AGREE_RESTARTS
 *    consecutive ends at the best point (value and place within the
 *    tolerances) agree, an equal value elsewhere does not, NaN is worse;
 *  - every engine lists the option, reads it by name, refuses bad values;
 *  - on a sphere every engine that restarts stops early with
 *    DC_STOP_CONVERGED (restarts agree) and, with the option at 0, spends the
 *    whole budget (an engine that converged starts again);
 *  - dc_program_range encloses every value the VM computes in the box (random
 *    points of many expressions), squares and sums of squares are >= 0, an
 *    operation without a rule gives (-inf, inf);
 *  - the proven floor: on the 2-D sphere with a budget of 100,000 every engine
 *    but random and tpe (which sample) and moea (multi-objective) stops
 *    (converged) within 5,000 evaluations, an engine built for a smaller budget
 *    (engines.def: bo) reaches 1e-10 within it; with the option at 0 the whole
 *    budget is spent (at most the engine's budget class, tests/budget.h);
 *  - dc_run.interrupt stops a run after the iteration it returns nonzero;
 *  - N named variables: duplicates found wherever they are, names that are
 *    prefixes of each other resolved to their own inputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "engine/engine.h"
#include "expr/expr.h"
#include "tests/budget.h"
#include "tests/check.h"
#include "tests/objectives.h"

static void test_restart_log(void)
{
    dc_restart_log log;
    const double here[2] = {0.25, 0.5}, near[2] = {0.25 + 1e-6, 0.5}, far[2] = {0.75, 0.5};
    CHECK(dc_restart_log_init(&log, dc_mem_default(), 2) == DC_OK, "init");
    CHECK(!dc_restart_log_end(&log, NAN, far), "the first end never agrees");
    CHECK(!dc_restart_log_end(&log, 5.0, here), "a number beats NaN: a new best");
    CHECK(log.best == 5.0 && log.agree == 0, "best %g agree %lld", log.best,
          (long long)log.agree);
    CHECK(!dc_restart_log_end(&log, 5.0 + 1e-12, near), "one end at the best: not yet");
    CHECK(!dc_restart_log_end(&log, 1.0, here), "a better end starts counting again");
    CHECK(!dc_restart_log_end(&log, 7.0, here), "a worse end breaks the run of agreement");
    CHECK(!dc_restart_log_end(&log, 1.0 - 1e-10, near), "within the tolerances");
    CHECK(log.best == 1.0 - 1e-10, "the best moves: %.17g", log.best);
    CHECK(!dc_restart_log_end(&log, 1.0, far), "as good elsewhere: another minimum");
    CHECK(!dc_restart_log_end(&log, 1.0, here), "counting again");
    CHECK(dc_restart_log_end(&log, 1.0, near), "DC_AGREE_RESTARTS ends at the best agree");
    dc_restart_log_free(&log);
    dc_restart_log_free(&log); /* idempotent */
}

static dc_status run_sphere(const char *id, const char *option, double value, int64_t budget,
                            dc_result *res, dc_error *err)
{
    enum { N = 4 };
    double lo[N], hi[N];
    const char *names[1];
    double values[1];
    dc_run run;
    size_t j;
    for (j = 0; j < N; j++) {
        lo[j] = -5.0;
        hi[j] = 5.0;
    }
    dc_run_init(&run);
    run.n = N;
    run.lower = lo;
    run.upper = hi;
    run.objective = sphere;
    run.max_evaluations = budget;
    run.seed = 7;
    if (option) {
        names[0] = option;
        values[0] = value;
        run.option_names = names;
        run.option_values = values;
        run.n_options = 1;
    }
    return dc_optimize(id, &run, res, err);
}

static void test_option_listed(void)
{
    size_t count = 0;
    const dc_option_info *opt = dc_run_options(&count);
    dc_result res;
    dc_error err;
    CHECK(count == 1 && strcmp(opt[0].name, "stop_on_convergence") == 0,
          "the run's options: %zu", count);
    CHECK(opt[0].default_value == 1.0 && opt[0].integer, "default on, an integer");
    CHECK(run_sphere("pso", "stop_on_convergence", 2, 100, &res, &err) == DC_ERR_ARGUMENT &&
              strstr(err.message, "stop_on_convergence") != NULL,
          "out of range: %s", err.message);
    CHECK(run_sphere("pso", "stop_on_convergenc", 1, 100, &res, &err) == DC_ERR_ARGUMENT &&
              strstr(err.message, "stop_on_convergence") != NULL,
          "an unknown option lists it: %s", err.message);
}

static void test_engines_stop(void)
{
    static const char *const restarting[] = {"dss", "cmaes", "pso", "nelder_mead"};
    size_t k;
    for (k = 0; k < dc_engine_count(); k++) {
        const char *id = dc_engine_at(k)->id;
        const int64_t budget = capped_budget(id, 200000), spent = capped_budget(id, 20000);
        dc_result res;
        dc_error err;
        size_t q;
        int restarts = 0;
        for (q = 0; q < sizeof restarting / sizeof restarting[0]; q++)
            restarts |= strcmp(id, restarting[q]) == 0;
        if (run_sphere(id, NULL, 0, budget, &res, &err) != DC_OK) {
            CHECK(0, "%s: %s", id, err.message);
            continue;
        }
        if (restarts || strcmp(id, "lbfgsb") == 0)
            CHECK(res.stop == DC_STOP_CONVERGED && res.evaluations < budget && res.fun < 1e-8,
                  "%s on a sphere: %s after %lld evaluations, f %g", id, dc_stop_name(res.stop),
                  (long long)res.evaluations, res.fun);
        dc_result_free(&res);
        if (run_sphere(id, "stop_on_convergence", 0, spent, &res, &err) != DC_OK) {
            CHECK(0, "%s: %s", id, err.message);
            continue;
        }
        /* a gradient by finite differences costs 2n + 1 = 9: the last may not fit */
        CHECK(res.stop == DC_STOP_MAX_EVALUATIONS && res.evaluations > spent - 9,
              "%s without stop_on_convergence: %s after %lld evaluations", id,
              dc_stop_name(res.stop), (long long)res.evaluations);
        dc_result_free(&res);
    }
}

static dc_program *compile_n(const char *text, int64_t n)
{
    dc_options o;
    dc_program *p = NULL;
    dc_error err;
    dc_options_init(&o);
    o.n = n;
    if (dc_compile(text, strlen(text), &o, &p, &err) != DC_OK)
        CHECK(0, "compile %s: %s", text, err.message);
    return p;
}

static void test_program_range(void)
{
    static const char *const exprs[] = {
        "sum(x**2)", "10*n + sum(x**2 - 10*cos(2*pi*x))",
        "-20*exp(-0.2*sqrt(mean(x**2))) - exp(mean(cos(2*pi*x))) + 20 + e",
        "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)", "1 + sum(x**2)/4000 - prod(cos(x/sqrt(i)))",
        "sum(x**4 - 16*x**2 + 5*x)/2", "sum(abs(x)) / (1 + norm(x))", "max(x) - min(x)",
        "sum(cumsum(x)**2)", "log1p(x[0]**2) + exp(-x[1]) * atan(x[2]) - tanh(x[3])",
        "sum(where(x > 0, x, -2*x)) + sum(clip(x, -1, 0.5))", "sum(floor(x) * sign(x))",
        "sqrt(abs(x[0] * x[1])) / (2 + cos(x[2]))", "cosh(x[0]) - sinh(x[1]) + x[2] % 3",
        "log(2 + x[0]) + acos(x[1] / 5) + asin(x[2] / 5)"};
    const double lo[4] = {-5.0, -2.0, -0.5, -5.0}, hi[4] = {5.0, 3.0, 4.0, -1.0};
    dc_rng rng;
    size_t k;
    int trial;
    dc_rng_seed(&rng, 11);
    for (k = 0; k < sizeof exprs / sizeof exprs[0]; k++) {
        dc_program *p = compile_n(exprs[k], 4);
        dc_workspace *ws;
        double f_lo, f_hi;
        int inside = 1;
        if (!p)
            continue;
        ws = dc_workspace_new(p, NULL);
        CHECK(dc_program_range(p, lo, hi, NULL, &f_lo, &f_hi) == DC_OK, "range %s", exprs[k]);
        for (trial = 0; trial < 2000; trial++) {
            double x[4], f;
            size_t j;
            for (j = 0; j < 4; j++) /* the corners too: one trial in 8 */
                x[j] = trial % 8 == 0 ? (dc_rng_uniform(&rng) < 0.5 ? lo[j] : hi[j])
                                      : lo[j] + (hi[j] - lo[j]) * dc_rng_uniform(&rng);
            dc_eval(p, ws, x, &f);
            if (f == f && !(f >= f_lo && f <= f_hi))
                inside = 0;
        }
        CHECK(inside, "%s: a value outside [%g, %g]", exprs[k], f_lo, f_hi);
        dc_workspace_free(ws);
        dc_program_free(p);
    }
    {
        const double sym[2] = {-5.0, -5.0}, top[2] = {5.0, 5.0};
        dc_program *p = compile_n("sum(x**2)", 2), *q = compile_n("tan(x[0]) + x[1]", 2);
        double f_lo = -1, f_hi = -1;
        if (p && dc_program_range(p, sym, top, NULL, &f_lo, &f_hi) == DC_OK)
            CHECK(f_lo <= 0.0 && f_lo > -1e-300 && f_hi >= 50.0, "sphere: [%g, %g]", f_lo, f_hi);
        if (q && dc_program_range(q, sym, top, NULL, &f_lo, &f_hi) == DC_OK)
            CHECK(f_lo == -INFINITY && f_hi == INFINITY, "tan has no rule: [%g, %g]", f_lo, f_hi);
        dc_program_free(p);
        dc_program_free(q);
    }
}

/* A 2-D run over [lo, hi], every other field at its default. */
static void init_2d(dc_run *run, const double *lo, const double *hi)
{
    dc_run_init(run);
    run->n = 2;
    run->lower = lo;
    run->upper = hi;
}

static void test_floor_stops(void)
{
    const double lo[2] = {-5.0, -5.0}, hi[2] = {5.0, 5.0};
    dc_program *p = compile_n("sum(x**2)", 2);
    size_t k;
    if (!p)
        return;
    for (k = 0; k < dc_engine_count(); k++) {
        const char *id = dc_engine_at(k)->id, *name = "stop_on_convergence";
        /* 100,000, and the run that spends its budget 20,000; at most the engine's
         * budget class (engines.def) */
        const int64_t budget = capped_budget(id, 100000), spent = capped_budget(id, 20000);
        /* an engine built for a small budget (bo) need not end converged within it,
         * only reach the floor's 1e-10 (bo: 9.6e-12 after 200 evaluations) */
        const int small = engine_budget(id) > 0;
        double off = 0.0;
        int spend;
        /* random and tpe sample (tpe resolves a minimum only as finely as its kernels:
         * 2.5e-6 after 1,000) and moea is a multi-objective engine (with one objective a
         * plain GA): none is expected to stop on convergence */
        int samples = strcmp(id, "random") == 0 || strcmp(id, "moea") == 0 ||
                      strcmp(id, "tpe") == 0;
        for (spend = samples; spend < 2; spend++) {
            dc_run run;
            dc_result res;
            dc_error err;
            init_2d(&run, lo, hi);
            run.program = p;
            run.max_evaluations = spend ? spent : budget;
            run.seed = 3;
            if (spend) {
                run.option_names = &name;
                run.option_values = &off;
                run.n_options = 1;
            }
            if (dc_optimize(id, &run, &res, &err) != DC_OK) {
                CHECK(0, "%s: %s", id, err.message);
                continue;
            }
            if (spend)
                CHECK(res.stop == DC_STOP_MAX_EVALUATIONS && res.evaluations > spent - 9,
                      "%s, stop_on_convergence 0: %s after %lld", id, dc_stop_name(res.stop),
                      (long long)res.evaluations);
            else if (small)
                CHECK(res.fun <= 1e-10 && (res.stop == DC_STOP_CONVERGED ||
                                           res.stop == DC_STOP_MAX_EVALUATIONS),
                      "%s on the 2-D sphere: %s after %lld evaluations, f %g", id,
                      dc_stop_name(res.stop), (long long)res.evaluations, res.fun);
            else
                CHECK(res.stop == DC_STOP_CONVERGED && res.evaluations <= 5000 && res.fun <= 1e-10,
                      "%s on the 2-D sphere: %s after %lld evaluations, f %g", id,
                      dc_stop_name(res.stop), (long long)res.evaluations, res.fun);
            printf("  %-12s stop_on_convergence=%d: %-16s %6lld evaluations\n", id, !spend,
                   dc_stop_name(res.stop), (long long)res.evaluations);
            dc_result_free(&res);
        }
    }
    dc_program_free(p);
}

static int interrupt_fifth(void *ud)
{
    int *calls = ud;
    return ++*calls >= 5;
}

static int count_callback(void *ud, const dc_progress *pr)
{
    int *calls = ud;
    (void)pr;
    ++*calls;
    return 0;
}

/* dc_run.interrupt: polled after every iteration, before the callback; nonzero ends the run
 * as DC_STOP_ERROR with the best point so far */
static void test_interrupt_hook(void)
{
    double lo[2] = {-1, -1}, hi[2] = {1, 1};
    int polls = 0, callbacks = 0;
    dc_run run;
    dc_result res;
    dc_error err;
    init_2d(&run, lo, hi);
    run.objective = sphere;
    run.max_evaluations = 1000000;
    run.interrupt = interrupt_fifth;
    run.interrupt_data = &polls;
    run.callback = count_callback;
    run.callback_data = &callbacks;
    if (dc_optimize("nelder_mead", &run, &res, &err) != DC_OK) {
        CHECK(0, "interrupt: %s", err.message);
        return;
    }
    CHECK(res.stop == DC_STOP_ERROR && res.iterations == 5 && polls == 5 && callbacks == 4,
          "interrupted: %s after %lld iterations, %d polls, %d callbacks", dc_stop_name(res.stop),
          (long long)res.iterations, polls, callbacks);
    CHECK(res.evaluations > 0 && isfinite(res.fun), "the best so far: %g", res.fun);
    dc_result_free(&res);
}

static void test_many_names(void)
{
    enum { N = 20000 };
    char **names = calloc(N, sizeof(char *));
    char *text = malloc((size_t)N * 16);
    double *x = malloc(N * sizeof(double)), v = 0.0;
    size_t k, used = 0;
    dc_options o;
    dc_program *p = NULL;
    dc_error err;
    dc_status st;
    CHECK(names && text && x, "out of memory");
    if (!names || !text || !x)
        goto done;
    for (k = 0; k < N; k++) {
        /* "a1", "a12", "a123"...: many names are prefixes of others */
        names[k] = malloc(16);
        if (!names[k])
            goto done;
        snprintf(names[k], 16, "a%zu", k);
        x[k] = (double)k;
        used += (size_t)snprintf(text + used, (size_t)N * 16 - used, "%s%s", k ? "+" : "",
                                 names[k]);
    }
    dc_options_init(&o);
    o.variables = (const char *const *)names;
    o.n_variables = N;
    o.max_length = used;
    o.max_instructions = 4 * N;
    st = dc_compile(text, used, &o, &p, &err);
    CHECK(st == DC_OK, "%d names: %s", N, err.message);
    if (p) {
        dc_workspace *ws = dc_workspace_new(p, NULL);
        CHECK(ws && dc_eval(p, ws, x, &v) == DC_OK && v == (double)N * (N - 1) / 2,
              "the sum of %d named inputs: %g", N, v);
        dc_workspace_free(ws);
        dc_program_free(p);
        p = NULL;
    }
    /* a duplicate at the very end, and one far apart */
    snprintf(names[N - 1], 16, "a%d", N - 2);
    st = dc_compile("a0", 2, &o, &p, &err);
    CHECK(st == DC_ERR_VARIABLE && strstr(err.message, "listed twice"), "duplicate: %s",
          err.message);
    dc_program_free(p);
    p = NULL;
    snprintf(names[N - 1], 16, "a0");
    st = dc_compile("a0", 2, &o, &p, &err);
    CHECK(st == DC_ERR_VARIABLE && strstr(err.message, "'a0'"), "duplicate: %s", err.message);
    dc_program_free(p);
    p = NULL;
    snprintf(names[N - 1], 16, "b");
    st = dc_compile("a1 + a", 6, &o, &p, &err);
    CHECK(st == DC_ERR_UNKNOWN_NAME, "a prefix of a name is no name: %s", dc_status_code(st));
    dc_program_free(p);
done:
    if (names)
        for (k = 0; k < N; k++)
            free(names[k]);
    free(names);
    free(text);
    free(x);
}

TEST_MAIN("test_convergence",
          TEST(test_restart_log),
          TEST(test_option_listed),
          TEST(test_engines_stop),
          TEST(test_program_range),
          TEST(test_floor_stops),
          TEST(test_interrupt_hook),
          TEST(test_many_names))
