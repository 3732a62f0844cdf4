/*
 * test_engines.c -- every registered engine through the driver, under
 * AddressSanitizer + UBSan in CI: budgets are never exceeded, every point
 * evaluated lies within the bounds, NaN values and tiny budgets are
 * survived, fixed coordinates stay fixed, the same seed gives the same
 * result, an aborting objective stops the run, and failed allocations
 * return DC_ERR_NOMEM without leaks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decido.h"
#include "engine/engine.h"
#include "tests/budget.h"
#include "tests/check.h"
#include "tests/failing_alloc.h"

typedef struct probe {
    const double *lo, *hi;
    long calls, evaluated, out_of_bounds, abort_after;
    int nan_every;
} probe;

/* a shifted ellipsoid that records every point; NaN now and then */
static int objective(void *ud, const double *X, size_t rows, size_t n, double *f)
{
    probe *p = ud;
    size_t r, j;
    p->calls++;
    for (r = 0; r < rows; r++) {
        double s = 0.0;
        for (j = 0; j < n; j++) {
            double x = X[r * n + j];
            if (!(x >= p->lo[j] && x <= p->hi[j]))
                p->out_of_bounds++;
            s += (double)(j + 1) * (x - 0.3) * (x - 0.3);
        }
        p->evaluated++;
        f[r] = (p->nan_every && p->evaluated % p->nan_every == 0) ? NAN : s;
    }
    return p->abort_after && p->evaluated >= p->abort_after;
}

static dc_status run_engine(const char *id, size_t n, const double *lo, const double *hi,
                            const dc_program *prog, probe *pr, int64_t budget, uint64_t seed,
                            const dc_allocator *alloc, dc_result *res)
{
    dc_run run;
    dc_error err;
    dc_status st;
    dc_run_init(&run);
    run.n = n;
    run.lower = lo;
    run.upper = hi;
    run.program = prog;
    run.objective = objective;
    run.objective_data = pr;
    run.max_evaluations = budget;
    run.seed = seed;
    run.allocator = alloc;
    st = dc_optimize(id, &run, res, &err);
    if (st && st != DC_ERR_NOMEM)
        printf("  %s: %s\n", id, err.message);
    return st;
}

static void test_engine(const char *id)
{
    double lo[6] = {-2, -1, 0.3, -5, 0, -3}, hi[6] = {2, 3, 0.3, 5, 1, -1};
    size_t dims[3] = {1, 2, 6}, d;
    int64_t budgets[5] = {1, 2, 7, 150, 3000};
    size_t b;
    for (b = 0; b < 5; b++)
        budgets[b] = capped_budget(id, budgets[b]);
    for (d = 0; d < 3; d++) {
        size_t n = dims[d];
        for (b = 0; b < 5; b++) {
            probe pr;
            dc_result res;
            memset(&pr, 0, sizeof pr);
            pr.lo = lo;
            pr.hi = hi;
            pr.nan_every = b == 3 ? 5 : 0;
            if (run_engine(id, n, lo, hi, NULL, &pr, budgets[b], 7, NULL, &res) == DC_OK) {
                size_t j;
                int inside = 1;
                CHECK(res.evaluations <= budgets[b] && pr.evaluated == res.evaluations,
                      "%s n=%zu budget %lld: %lld evaluations reported, %ld made", id, n,
                      (long long)budgets[b], (long long)res.evaluations, pr.evaluated);
                CHECK(pr.out_of_bounds == 0, "%s n=%zu: %ld points out of bounds", id, n,
                      pr.out_of_bounds);
                for (j = 0; j < n; j++)
                    inside &= res.x[j] >= lo[j] && res.x[j] <= hi[j];
                CHECK(inside, "%s: result out of bounds", id);
                if (n >= 3)
                    CHECK(res.x[2] == 0.3, "%s: fixed coordinate moved to %g", id, res.x[2]);
                dc_result_free(&res);
            } else {
                CHECK(0, "%s n=%zu budget %lld failed", id, n, (long long)budgets[b]);
            }
        }
    }
    {
        /* same seed, same result; an aborting objective stops the run */
        probe p1, p2, p3;
        dc_result r1, r2, r3;
        memset(&p1, 0, sizeof p1);
        p1.lo = lo;
        p1.hi = hi;
        p2 = p1;
        p3 = p1;
        p3.abort_after = 40;
        run_engine(id, 6, lo, hi, NULL, &p1, capped_budget(id, 2000), 11, NULL, &r1);
        run_engine(id, 6, lo, hi, NULL, &p2, capped_budget(id, 2000), 11, NULL, &r2);
        CHECK(r1.fun == r2.fun && memcmp(r1.x, r2.x, 6 * sizeof(double)) == 0 &&
                  r1.evaluations == r2.evaluations,
              "%s: not reproducible (%g vs %g)", id, r1.fun, r2.fun);
        run_engine(id, 6, lo, hi, NULL, &p3, capped_budget(id, 2000), 11, NULL, &r3);
        CHECK(r3.stop == DC_STOP_ERROR, "%s: abort gave %s", id, dc_stop_name(r3.stop));
        dc_result_free(&r1);
        dc_result_free(&r2);
        dc_result_free(&r3);
    }
    {
        /* a compiled program: exact gradients, structure, separable terms */
        const char *texts[3] = {"sum(i*(x-0.3)**2)", "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)",
                                "sum(x)**2 + prod(cos(x))"};
        int t;
        for (t = 0; t < 3; t++) {
            dc_options o;
            dc_program *prog = NULL;
            dc_error err;
            dc_result res;
            double plo[4] = {-2, -2, -2, -2}, phi[4] = {2, 2, 2, 2};
            probe pr;
            memset(&pr, 0, sizeof pr);
            dc_options_init(&o);
            o.n = 4;
            if (dc_compile(texts[t], strlen(texts[t]), &o, &prog, &err) != DC_OK) {
                CHECK(0, "compile %s", texts[t]);
                continue;
            }
            CHECK(run_engine(id, 4, plo, phi, prog, &pr, capped_budget(id, 3000), 5, NULL, &res) ==
                          DC_OK &&
                      res.evaluations <= 3000 && isfinite(res.fun),
                  "%s on %s", id, texts[t]);
            dc_result_free(&res);
            dc_program_free(prog);
        }
    }
    {
        /* allocation failures at every step: a status, never a leak */
        long k;
        for (k = 0; k < 60; k++) {
            counting c = {0, k, 0};
            dc_allocator a = {failing_realloc, &c};
            probe pr;
            dc_result res;
            dc_status st;
            memset(&pr, 0, sizeof pr);
            pr.lo = lo;
            pr.hi = hi;
            st = run_engine(id, 6, lo, hi, NULL, &pr, capped_budget(id, 500), 3, &a, &res);
            CHECK(st == DC_OK || st == DC_ERR_NOMEM, "%s OOM at %ld: %s", id, k,
                  dc_status_code(st));
            if (st == DC_OK)
                dc_result_free(&res);
            CHECK(c.live == 0, "%s OOM at %ld: %ld blocks leaked", id, k, c.live);
            if (st == DC_OK)
                break;
        }
    }
}

/* An engine's own dimension limit is enforced by the driver, not only by
 * the Python layer. */
static void test_max_dims(void)
{
    size_t k;
    for (k = 0; k < dc_engine_count(); k++) {
        const dc_engine_info *info = dc_engine_at(k);
        if (info->max_dims) {
            size_t n = info->max_dims + 1, j;
            double *lo = calloc(n, sizeof(double)), *hi = calloc(n, sizeof(double));
            probe pr;
            dc_result res;
            memset(&pr, 0, sizeof pr);
            for (j = 0; j < n; j++)
                hi[j] = 1.0;
            pr.lo = lo;
            pr.hi = hi;
            CHECK(run_engine(info->id, n, lo, hi, NULL, &pr, 100, 1, NULL, &res) ==
                          DC_ERR_ARGUMENT &&
                      pr.evaluated == 0,
                  "%s accepted %zu dimensions", info->id, n);
            free(lo);
            free(hi);
        }
    }
}

/* dc_batch.want: bo, tpe and random give as many rows as the caller would like,
 * distinct ones (a constant liar / Kriging believer spreads a batch), through the
 * vtable as an ask/tell caller (a study) uses it. */
static void test_want_hint(void)
{
    const char *ids[3] = {"bo", "tpe", "random"};
    unsigned char fixed[3] = {0, 0, 0};
    double levels[3] = {0, 0, 5};
    size_t e;
    for (e = 0; e < 3; e++) {
        const dc_engine_vt *vt = dc_engine_find(ids[e]);
        dc_problem pb;
        dc_rng rng;
        double params[16];
        void *st;
        size_t k, round, distinct_batches = 0;
        if (!vt) {
            CHECK(0, "engine %s not registered", ids[e]);
            continue;
        }
        memset(&pb, 0, sizeof pb);
        dc_rng_seed(&rng, 5);
        pb.n = 3;
        pb.alloc = dc_mem_default();
        pb.rng = &rng;
        pb.budget = 100;
        pb.fixed = fixed;
        pb.levels = levels;
        pb.stop_on_convergence = 1;
        for (k = 0; k < vt->info->n_options; k++)
            params[k] = vt->info->options[k].default_value;
        st = calloc(1, vt->state_size);
        CHECK(vt->init(st, &pb, params) == DC_OK, "%s: init", ids[e]);
        for (round = 0; round < 6; round++) {
            dc_batch b;
            size_t r, q, want = round % 2 ? 4 : 1, dup = 0;
            memset(&b, 0, sizeof b);
            b.want = want;
            CHECK(vt->ask(st, &b) == DC_OK, "%s: ask", ids[e]);
            CHECK(b.rows == want, "%s: asked for %zu rows, got %zu", ids[e], want, b.rows);
            for (r = 0; r < b.rows; r++) {
                const double *u = b.U + r * 3;
                b.f[r] = (u[0] - 0.3) * (u[0] - 0.3) + (u[1] - 0.6) * (u[1] - 0.6) + u[2];
                CHECK(e == 2 || fabs(u[2] * 5.0 - floor(u[2] * 5.0) - 0.5) < 1e-9,
                      "%s: a discrete coordinate off its cell's centre (%g)", ids[e], u[2]);
                for (q = 0; q < r; q++)
                    dup += memcmp(u, b.U + q * 3, 3 * sizeof(double)) == 0;
            }
            distinct_batches += want > 1 && dup == 0;
            if (b.violation)
                memset(b.violation, 0, b.rows * sizeof(double));
            CHECK(vt->tell(st, &b) == DC_OK, "%s: tell", ids[e]);
        }
        CHECK(distinct_batches == 3, "%s: %zu of 3 batches of 4 rows were distinct", ids[e],
              distinct_batches);
        vt->release(st);
        free(st);
    }
}

/* auto chooses by budget, dimension and kinds, and the result names the choice */
static void test_auto_choice(void)
{
    struct {
        size_t n;
        int64_t budget;
        int discrete;
        const char *expect;
    } cases[4] = {{3, 100, 0, "bo"}, {3, 5000, 0, "cmaes"}, {25, 150, 0, "cmaes"},
                  {4, 100, 1, "tpe"}};
    size_t c, j, k;
    for (c = 0; c < 4; c++) {
        double lo[25], hi[25];
        double v3[3] = {1, 2, 3};
        const double *values[25];
        size_t n_values[25];
        probe pr;
        dc_run run;
        dc_result res;
        dc_error err;
        for (j = 0; j < cases[c].n; j++) {
            lo[j] = -1;
            hi[j] = 1;
            values[j] = v3;
            n_values[j] = cases[c].discrete ? 3 : 0;
        }
        memset(&pr, 0, sizeof pr);
        pr.lo = lo;
        pr.hi = hi;
        dc_run_init(&run);
        run.n = cases[c].n;
        run.lower = lo;
        run.upper = hi;
        run.objective = objective;
        run.objective_data = &pr;
        run.max_evaluations = cases[c].budget;
        run.seed = 3;
        if (cases[c].discrete) {
            run.values = values;
            run.n_values = n_values;
            pr.lo = NULL;
        }
        if (cases[c].discrete) { /* the values lie outside [-1, 1]: no bound check */
            for (j = 0; j < cases[c].n; j++) {
                lo[j] = 1;
                hi[j] = 3;
            }
            pr.lo = lo;
        }
        CHECK(dc_optimize("auto", &run, &res, &err) == DC_OK, "auto: %s", err.message);
        CHECK(strcmp(res.engine_chosen, cases[c].expect) == 0, "auto chose %s for case %zu, "
              "expected %s", res.engine_chosen, c, cases[c].expect);
        dc_result_free(&res);
    }
    for (k = 0; k < dc_engine_count(); k++) { /* any other engine names itself */
        const char *id = dc_engine_at(k)->id;
        double lo[2] = {-1, -1}, hi[2] = {1, 1};
        probe pr;
        dc_run run;
        dc_result res;
        if (strcmp(id, "auto") == 0)
            continue;
        memset(&pr, 0, sizeof pr);
        pr.lo = lo;
        pr.hi = hi;
        if (run_engine(id, 2, lo, hi, NULL, &pr, 20, 1, NULL, &res) == DC_OK) {
            CHECK(strcmp(res.engine_chosen, id) == 0, "%s reported %s", id, res.engine_chosen);
            dc_result_free(&res);
        }
        (void)run;
    }
}

/* DC_TEST_ENGINE=<id> runs the engine loop on that engine only */
static void every_engine(void)
{
    const char *only = getenv("DC_TEST_ENGINE");
    size_t k;
    for (k = 0; k < dc_engine_count(); k++) {
        const char *id = dc_engine_at(k)->id;
        if (only && strcmp(only, id) != 0)
            continue;
        test_engine(id);
    }
}

TEST_MAIN("test_engines",
          TEST(test_max_dims),
          TEST(test_want_hint),
          TEST(test_auto_choice),
          TEST(every_engine))
