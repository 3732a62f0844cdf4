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
        run_engine(id, 6, lo, hi, NULL, &p1, 2000, 11, NULL, &r1);
        run_engine(id, 6, lo, hi, NULL, &p2, 2000, 11, NULL, &r2);
        CHECK(r1.fun == r2.fun && memcmp(r1.x, r2.x, 6 * sizeof(double)) == 0 &&
                  r1.evaluations == r2.evaluations,
              "%s: not reproducible (%g vs %g)", id, r1.fun, r2.fun);
        run_engine(id, 6, lo, hi, NULL, &p3, 2000, 11, NULL, &r3);
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
            CHECK(run_engine(id, 4, plo, phi, prog, &pr, 3000, 5, NULL, &res) == DC_OK &&
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
            st = run_engine(id, 6, lo, hi, NULL, &pr, 500, 3, &a, &res);
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

int main(int argc, char **argv)
{
    test_max_dims();
    size_t k;
    for (k = 0; k < dc_engine_count(); k++) {
        const char *id = dc_engine_at(k)->id;
        if (argc > 1 && strcmp(argv[1], id) != 0)
            continue;
        test_engine(id);
    }
    printf("test_engines: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
