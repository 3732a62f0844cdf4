/* test_study.c -- the ask/tell study (engine/study.c): every engine through it,
 * determinism, results in any order, partial batches, warm starts, kinds of
 * coordinates, and hostile call sequences (run under ASan/UBSan). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decido.h"
#include "tests/check.h"
#include "tests/failing_alloc.h"

#define N 4
#define MAXK 64

static double sphere(const double *x, size_t n)
{
    double s = 0.0;
    size_t j;
    for (j = 0; j < n; j++)
        s += (x[j] - 0.3) * (x[j] - 0.3);
    return s;
}

static void box(dc_study_spec *sp, double *lo, double *hi, size_t n)
{
    size_t j;
    for (j = 0; j < n; j++) {
        lo[j] = -2.0;
        hi[j] = 3.0;
    }
    dc_study_spec_init(sp);
    sp->n = n;
    sp->lower = lo;
    sp->upper = hi;
    sp->seed = 7;
    sp->budget = 600;
}

/* trials trials in asks of k, told in reverse order; the best value seen */
static double drive(dc_study *s, size_t n, int64_t trials, size_t k, double *first)
{
    int64_t ids[MAXK], done = 0;
    double X[MAXK * N], best = INFINITY;
    size_t i;
    dc_error err;
    *first = NAN;
    while (done < trials) {
        if (dc_study_ask(s, k, ids, X, &err)) {
            CHECK(0, "ask failed: %s", err.message);
            return NAN;
        }
        for (i = k; i-- > 0;) {
            double f = sphere(X + i * n, n);
            if (done + (int64_t)i < (int64_t)k && *first != *first)
                *first = f;
            if (f < best)
                best = f;
            CHECK(dc_study_tell(s, ids[i], DC_TRIAL_OK, &f, 0.0, &err) == DC_OK,
                  "tell failed: %s", err.message);
        }
        done += (int64_t)k;
    }
    return best;
}

/* the engines this test holds to a target on the sphere */
static int known(const char *id)
{
    static const char *const ids[] = {"dss", "de",     "cmaes", "pso",
                                      "nelder_mead", "lbfgsb", "random", "moea"};
    size_t k;
    for (k = 0; k < sizeof ids / sizeof ids[0]; k++)
        if (strcmp(ids[k], id) == 0)
            return 1;
    return 0;
}

static void every_engine(void)
{
    size_t e;
    for (e = 0; e < dc_engine_count(); e++) {
        const dc_engine_info *info = dc_engine_at(e);
        dc_study_spec sp;
        double lo[N], hi[N], first, best;
        dc_study *s = NULL;
        dc_error err;
        int multi = (info->supports & DC_SUPPORTS_OBJECTIVES) && strcmp(info->id, "moea") == 0;
        box(&sp, lo, hi, N);
        if (dc_study_new(info->id, &sp, &s, &err)) {
            CHECK(0, "%s: %s", info->id, err.message);
            continue;
        }
        /* local engines ask one point at a time, populations more; an engine this test
         * does not know (a model-based one, costly per point) gets a short study */
        int64_t trials = known(info->id) ? 600 : 60;
        best = drive(s, N, trials,
                     multi ? 10 : strcmp(info->kind, "local") && strcmp(info->id, "dss") ? 4 : 1,
                     &first);
        CHECK(best < first, "%s: best %g after %lld trials (first %g)", info->id, best,
              (long long)trials, first);
        CHECK(!known(info->id) ||
                  best < (multi || strcmp(info->id, "random") == 0 ? 0.5 : 0.05),
              "%s: best %g after %lld trials", info->id, best, (long long)trials);
        CHECK(dc_study_best(s) >= 0 && dc_study_n_trials(s) >= trials,
              "%s: best %lld, trials %lld", info->id, (long long)dc_study_best(s),
              (long long)dc_study_n_trials(s));
        CHECK(dc_study_n_batches(s) > 0, "%s: no batch told", info->id);
        dc_study_free(s);
    }
}

/* Same seed, same ordered tells: the same points, bit for bit. */
static void determinism(void)
{
    const char *ids[] = {"cmaes", "de", "dss", "nelder_mead"};
    size_t e, r, i;
    for (e = 0; e < 4; e++) {
        dc_study_spec sp;
        double lo[N], hi[N], X1[5 * N], X2[5 * N];
        int64_t i1[5], i2[5];
        dc_study *a = NULL, *b = NULL;
        int same = 1;
        box(&sp, lo, hi, N);
        dc_study_new(ids[e], &sp, &a, NULL);
        dc_study_new(ids[e], &sp, &b, NULL);
        for (r = 0; r < 60 && a && b; r++) {
            dc_study_ask(a, 5, i1, X1, NULL);
            dc_study_ask(b, 5, i2, X2, NULL);
            same = same && memcmp(X1, X2, sizeof X1) == 0 && memcmp(i1, i2, sizeof i1) == 0;
            for (i = 0; i < 5; i++) {
                double f = sphere(X1 + i * N, N);
                size_t q = (i * 3) % 5; /* a fixed order, not the asked one */
                f = sphere(X1 + q * N, N);
                dc_study_tell(a, i1[q], DC_TRIAL_OK, &f, 0.0, NULL);
                dc_study_tell(b, i2[q], DC_TRIAL_OK, &f, 0.0, NULL);
            }
        }
        CHECK(a && b && same, "%s: two studies with one seed diverged", ids[e]);
        dc_study_free(a);
        dc_study_free(b);
    }
}

static void hostile(void)
{
    dc_study_spec sp;
    double lo[N], hi[N], X[3 * N], f = 1.0, nan = NAN, x[N] = {0, 0, 0, 0};
    int64_t ids[3], id;
    dc_study *s = NULL;
    dc_error err;
    box(&sp, lo, hi, N);
    CHECK(dc_study_new("cmaes", &sp, &s, &err) == DC_OK, "%s", err.message);
    CHECK(dc_study_ask(s, 0, NULL, NULL, &err) == DC_OK && dc_study_n_trials(s) == 0,
          "ask 0 did something");
    CHECK(dc_study_ask(s, DC_STUDY_MAX_ASK + 1, ids, X, &err) == DC_ERR_ARGUMENT &&
              strstr(err.message, "at most"), "ask huge: %s", err.message);
    CHECK(dc_study_ask(s, (size_t)-1, ids, X, &err) == DC_ERR_ARGUMENT, "ask SIZE_MAX");
    CHECK(dc_study_ask(s, 3, NULL, X, &err) == DC_ERR_ARGUMENT, "NULL ids");
    CHECK(dc_study_ask(s, 3, ids, X, &err) == DC_OK, "%s", err.message);
    CHECK(dc_study_tell(s, 3, DC_TRIAL_OK, &f, 0.0, &err) == DC_ERR_ARGUMENT &&
              strstr(err.message, "unknown trial 3"), "unknown id: %s", err.message);
    CHECK(dc_study_tell(s, -1, DC_TRIAL_OK, &f, 0.0, &err) == DC_ERR_ARGUMENT, "id -1");
    CHECK(dc_study_tell(s, INT64_MAX, DC_TRIAL_OK, &f, 0.0, &err) == DC_ERR_ARGUMENT,
          "id INT64_MAX");
    CHECK(dc_study_tell(s, ids[0], DC_TRIAL_OK, NULL, 0.0, &err) == DC_ERR_ARGUMENT,
          "OK without values");
    CHECK(dc_study_tell(s, ids[0], DC_TRIAL_OK, &f, 0.5, &err) == DC_ERR_ARGUMENT &&
              strstr(err.message, "without constraints"), "excess unconstrained");
    CHECK(dc_study_tell(s, ids[0], DC_TRIAL_OK, &f, -1.0, &err) == DC_ERR_ARGUMENT,
          "negative excess");
    CHECK(dc_study_tell(s, ids[0], (dc_trial_status)42, &f, 0.0, &err) == DC_ERR_ARGUMENT,
          "bad status");
    CHECK(dc_study_tell(s, ids[0], DC_TRIAL_OK, &nan, 0.0, &err) == DC_OK, "NaN value");
    CHECK(dc_study_tell(s, ids[0], DC_TRIAL_OK, &f, 0.0, &err) == DC_ERR_ARGUMENT &&
              strstr(err.message, "already told"), "tell twice: %s", err.message);
    CHECK(dc_study_best(s) == -1, "a NaN is not a best value");
    CHECK(dc_study_tell(s, ids[1], DC_TRIAL_FAILED, NULL, 0.0, &err) == DC_OK, "failed");
    CHECK(dc_study_tell(s, ids[2], DC_TRIAL_INFEASIBLE, NULL, 0.0, &err) == DC_OK, "infeasible");
    CHECK(dc_study_best(s) == -1, "no completed trial");
    x[0] = 99.0;
    CHECK(dc_study_tell_point(s, x, DC_TRIAL_OK, &f, 0.0, &id, &err) == DC_ERR_ARGUMENT,
          "a point outside the bounds");
    x[0] = nan;
    CHECK(dc_study_tell_point(s, x, DC_TRIAL_OK, &f, 0.0, &id, &err) == DC_ERR_ARGUMENT,
          "a NaN point");
    x[0] = 0.3;
    CHECK(dc_study_tell_point(s, x, DC_TRIAL_OK, &f, 0.0, &id, &err) == DC_OK && id == 3 &&
              dc_study_best(s) == 3, "warm point: id %lld best %lld", (long long)id,
          (long long)dc_study_best(s));
    CHECK(dc_study_tell(s, id, DC_TRIAL_OK, &f, 0.0, &err) == DC_ERR_ARGUMENT,
          "a warm point told twice");
    /* many asks without tells: batches close with failed results, nothing breaks */
    {
        int k;
        for (k = 0; k < 50; k++)
            CHECK(dc_study_ask(s, 3, ids, X, &err) == DC_OK, "%s", err.message);
    }
    dc_study_free(s);
    dc_study_free(NULL);
    /* bad specs */
    box(&sp, lo, hi, N);
    CHECK(dc_study_new("nope", &sp, &s, &err) == DC_ERR_ARGUMENT && !s, "unknown engine");
    sp.budget = 0;
    CHECK(dc_study_new("de", &sp, &s, &err) == DC_ERR_ARGUMENT, "budget 0");
    sp.budget = 10;
    sp.n_objectives = 2;
    CHECK(dc_study_new("cmaes", &sp, &s, &err) == DC_ERR_ARGUMENT &&
              strstr(err.message, "one objective"), "cmaes with 2 objectives: %s", err.message);
    sp.n_objectives = 0;
    lo[1] = NAN;
    CHECK(dc_study_new("de", &sp, &s, &err) == DC_ERR_ARGUMENT, "NaN bound");
    lo[1] = -1.0;
    {
        unsigned char lg[N] = {1, 0, 0, 0};
        sp.log_scale = lg;
        CHECK(dc_study_new("de", &sp, &s, &err) == DC_ERR_ARGUMENT &&
                  strstr(err.message, "lower > 0"), "log with lower <= 0");
        sp.log_scale = NULL;
    }
    CHECK(dc_study_new("de", NULL, &s, &err) == DC_ERR_ARGUMENT, "NULL spec");
    CHECK(dc_study_new("de", &sp, NULL, &err) == DC_ERR_ARGUMENT, "NULL out");
}

/* An ask beyond the batch closes it; a late result still counts for the best. */
static void partial_batches(void)
{
    dc_study_spec sp;
    double lo[N], hi[N], X[64 * N], f;
    int64_t ids[64];
    dc_study *s = NULL;
    size_t i;
    box(&sp, lo, hi, N);
    dc_study_new("de", &sp, &s, NULL);
    CHECK(s && dc_study_ask(s, 1, ids, X, NULL) == DC_OK, "ask 1");
    CHECK(dc_study_n_batches(s) == 0, "a batch closed too early");
    CHECK(dc_study_ask(s, 63, ids + 1, X + N, NULL) == DC_OK, "ask 63");
    CHECK(dc_study_n_batches(s) >= 1, "the ask beyond the batch did not close it");
    for (i = 1; i < 64; i++) {
        f = 10.0 + sphere(X + i * N, N);
        dc_study_tell(s, ids[i], DC_TRIAL_OK, &f, 0.0, NULL);
    }
    f = -1.0; /* the first trial, told after its batch closed */
    CHECK(dc_study_tell(s, ids[0], DC_TRIAL_OK, &f, 0.0, NULL) == DC_OK, "late tell");
    CHECK(dc_study_best(s) == ids[0], "the late result is the best");
    dc_study_free(s);
}

/* Warm start: a local engine starts from the best point told before any ask. */
static void warm_start(void)
{
    dc_study_spec sp;
    double lo[N], hi[N], X[N], x[N] = {0.3, 0.3, 0.3, 0.25}, y[N] = {2, 2, 2, 2}, f;
    int64_t ids[1], id;
    dc_study *s = NULL;
    box(&sp, lo, hi, N);
    dc_study_new("nelder_mead", &sp, &s, NULL);
    f = sphere(y, N);
    dc_study_tell_point(s, y, DC_TRIAL_OK, &f, 0.0, &id, NULL);
    f = sphere(x, N);
    dc_study_tell_point(s, x, DC_TRIAL_OK, &f, 0.0, &id, NULL);
    CHECK(dc_study_best(s) == 1 && dc_study_n_trials(s) == 2, "warm best");
    CHECK(dc_study_ask(s, 1, ids, X, NULL) == DC_OK && ids[0] == 2, "ask after warm");
    CHECK(fabs(X[0] - 0.3) < 0.02 && fabs(X[3] - 0.25) < 0.02,
          "nelder_mead did not start at the warm point: %g %g", X[0], X[3]);
    dc_study_free(s);
}

/* integer, discrete and log coordinates take their values */
static void kinds(void)
{
    dc_study_spec sp;
    double lo[4] = {0, 1e-4, 1, 0}, hi[4] = {5, 1.0, 1000, 0};
    double v3[3] = {-1.0, 0.5, 7.0}, X[50 * 4];
    const double *vals[4] = {NULL, NULL, NULL, v3};
    size_t nv[4] = {0, 0, 0, 3}, i;
    unsigned char integer[4] = {1, 0, 1, 0}, lg[4] = {0, 1, 1, 0};
    int64_t ids[50];
    dc_study *s = NULL;
    dc_error err;
    int ok = 1, small = 0;
    dc_study_spec_init(&sp);
    sp.n = 4;
    sp.lower = lo;
    sp.upper = hi;
    sp.integer = integer;
    sp.values = vals;
    sp.n_values = nv;
    sp.log_scale = lg;
    sp.budget = 100;
    sp.seed = 3;
    CHECK(dc_study_new("de", &sp, &s, &err) == DC_OK, "%s", err.message);
    CHECK(s && dc_study_ask(s, 50, ids, X, &err) == DC_OK, "%s", err.message);
    for (i = 0; s && i < 50; i++) {
        const double *x = X + i * 4;
        ok = ok && x[0] == floor(x[0]) && x[0] >= 0 && x[0] <= 5;
        ok = ok && x[1] >= 1e-4 && x[1] <= 1.0;
        ok = ok && x[2] == floor(x[2]) && x[2] >= 1 && x[2] <= 1000;
        ok = ok && (x[3] == -1.0 || x[3] == 0.5 || x[3] == 7.0);
        small += x[1] < 1e-2; /* a log scale puts half the points below 1e-2 */
    }
    CHECK(ok, "a coordinate took a value it cannot take");
    CHECK(small > 10, "log scale: only %d of 50 below 1e-2", small);
    {
        double x[4] = {2, 0.01, 10, 0.5}, bad[4] = {2, 0.01, 10, 0.6}, f = 1.0;
        int64_t id;
        CHECK(dc_study_tell_point(s, x, DC_TRIAL_OK, &f, 0.0, &id, &err) == DC_OK, "%s",
              err.message);
        CHECK(dc_study_tell_point(s, bad, DC_TRIAL_OK, &f, 0.0, &id, &err) == DC_ERR_ARGUMENT,
              "0.6 is not one of the values");
    }
    dc_study_free(s);
}

/* Two objectives through moea; constraints rank an infeasible point last. */
static void several_and_constrained(void)
{
    dc_study_spec sp;
    double lo[2] = {0, 0}, hi[2] = {1, 1}, X[20 * 2];
    int64_t ids[20];
    dc_study *s = NULL;
    dc_error err;
    size_t i, r;
    dc_study_spec_init(&sp);
    sp.n = 2;
    sp.lower = lo;
    sp.upper = hi;
    sp.n_objectives = 2;
    sp.budget = 400;
    sp.constrained = 1;
    CHECK(dc_study_new("moea", &sp, &s, &err) == DC_OK, "%s", err.message);
    for (r = 0; s && r < 20; r++) {
        CHECK(dc_study_ask(s, 20, ids, X, &err) == DC_OK, "%s", err.message);
        for (i = 0; i < 20; i++) {
            double f[2] = {X[2 * i], 1.0 - sqrt(X[2 * i]) + X[2 * i + 1]};
            double e = X[2 * i] < 0.2 ? 0.2 - X[2 * i] : 0.0;
            dc_study_tell(s, ids[i], i % 7 == 3 ? DC_TRIAL_FAILED : DC_TRIAL_OK, f, e, &err);
        }
    }
    CHECK(s && dc_study_best(s) == -1, "several objectives have no single best");
    dc_study_free(s);
    /* one objective with an excess: the feasible point is the best */
    dc_study_spec_init(&sp);
    sp.n = 2;
    sp.lower = lo;
    sp.upper = hi;
    sp.budget = 50;
    sp.constrained = 1;
    CHECK(dc_study_new("de", &sp, &s, &err) == DC_OK, "%s", err.message);
    dc_study_ask(s, 2, ids, X, &err);
    {
        double f0 = -5.0, f1 = 3.0;
        dc_study_tell(s, ids[0], DC_TRIAL_OK, &f0, 1.0, &err);
        dc_study_tell(s, ids[1], DC_TRIAL_OK, &f1, 0.0, &err);
    }
    CHECK(dc_study_best(s) == ids[1], "an infeasible point beat a feasible one");
    dc_study_free(s);
    {
        unsigned char integer[2] = {1, 0};
        sp.constrained = 0;
        sp.integer = integer;
        CHECK(dc_study_new("lbfgsb", &sp, &s, &err) == DC_ERR_ARGUMENT && !s &&
                  strstr(err.message, "integer"), "lbfgsb takes no integers: %s", err.message);
    }
}

/* A gradient batch (lbfgsb) is the point and two neighbours per real coordinate that is
 * not fixed; the engine is told once all of them are. */
static void gradient_slots(void)
{
    dc_study_spec sp;
    double lo[3] = {-1, 2, -1}, hi[3] = {1, 2, 1}, X[5 * 3], f;
    int64_t ids[5];
    dc_study *s = NULL;
    dc_error err;
    size_t i;
    int64_t r;
    dc_study_spec_init(&sp);
    sp.n = 3;
    sp.lower = lo;
    sp.upper = hi;
    sp.budget = 300;
    CHECK(dc_study_new("lbfgsb", &sp, &s, &err) == DC_OK, "%s", err.message);
    for (i = 0; s && i < 5; i++) {
        CHECK(dc_study_ask(s, 1, ids + i, X + 3 * i, &err) == DC_OK, "%s", err.message);
        CHECK(dc_study_n_batches(s) == 0, "the gradient was told before its 5 points");
    }
    CHECK(s && X[1] == 2.0 && X[4] == 2.0 && X[13] == 2.0, "the fixed coordinate moved");
    CHECK(s && X[3] > X[0] && X[6] < X[0] && X[5] == X[2] && X[8] == X[2] && X[9] == X[0] &&
              X[11] > X[2] && X[12] == X[0] && X[14] < X[2],
          "the neighbours are not along one coordinate each");
    for (i = 0; s && i < 5; i++) {
        f = (X[3 * i] - 0.5) * (X[3 * i] - 0.5) + X[3 * i + 2] * X[3 * i + 2];
        dc_study_tell(s, ids[i], DC_TRIAL_OK, &f, 0.0, &err);
    }
    CHECK(s && dc_study_n_batches(s) == 1, "the gradient batch was not told");
    {
        double best = INFINITY;
        for (r = 0; s && r < 60; r++) { /* and it converges on finite differences */
            dc_study_ask(s, 1, ids, X, &err);
            f = (X[0] - 0.5) * (X[0] - 0.5) + X[2] * X[2];
            best = f < best ? f : best;
            dc_study_tell(s, ids[0], DC_TRIAL_OK, &f, 0.0, &err);
        }
        CHECK(best < 1e-12, "lbfgsb's best %g after 65 trials", best);
    }
    dc_study_free(s);
}

/* dss on integer coordinates (its neighbourhood search) reaches the integer optimum. */
static void dss_integers(void)
{
    dc_study_spec sp;
    double lo[3] = {-10, -10, -10}, hi[3] = {10, 10, 10}, X[3], f;
    unsigned char integer[3] = {1, 1, 1};
    int64_t id, r;
    dc_study *s = NULL;
    dc_error err;
    dc_study_spec_init(&sp);
    sp.n = 3;
    sp.lower = lo;
    sp.upper = hi;
    sp.integer = integer;
    sp.budget = 400;
    sp.seed = 5;
    CHECK(dc_study_new("dss", &sp, &s, &err) == DC_OK, "%s", err.message);
    for (r = 0; s && r < 400; r++) {
        dc_study_ask(s, 1, &id, X, &err);
        CHECK(X[0] == floor(X[0]) && X[1] == floor(X[1]) && X[2] == floor(X[2]),
              "not integers");
        f = (X[0] - 3) * (X[0] - 3) + (X[1] + 2) * (X[1] + 2) + (X[2] - 7) * (X[2] - 7);
        dc_study_tell(s, id, DC_TRIAL_OK, &f, 0.0, &err);
        if (f == 0.0)
            break;
    }
    CHECK(s && r < 400, "dss did not reach (3, -2, 7) in 400 trials");
    dc_study_free(s);
}

/* One objective with constraints on an engine that reads the violations (moea keeps a
 * violation per row): the feasible optimum is found. */
static void violations_of_one_objective(void)
{
    dc_study_spec sp;
    double lo[2] = {0, 0}, hi[2] = {1, 1}, X[20 * 2], best = INFINITY;
    int64_t ids[20];
    dc_study *s = NULL;
    dc_error err;
    size_t i, r;
    dc_study_spec_init(&sp);
    sp.n = 2;
    sp.lower = lo;
    sp.upper = hi;
    sp.budget = 2000;
    sp.constrained = 1;
    sp.seed = 2;
    sp.option_names = (const char *const[]){"popsize"};
    sp.option_values = (const double[]){20};
    sp.n_options = 1;
    CHECK(dc_study_new("moea", &sp, &s, &err) == DC_OK, "%s", err.message);
    for (r = 0; s && r < 100; r++) {
        dc_study_ask(s, 20, ids, X, &err);
        for (i = 0; i < 20; i++) {
            double f = X[2 * i] + X[2 * i + 1], e = X[2 * i] < 0.3 ? 0.3 - X[2 * i] : 0.0;
            if (e == 0.0 && f < best)
                best = f;
            dc_study_tell(s, ids[i], DC_TRIAL_OK, &f, e, &err);
        }
    }
    CHECK(best < 0.31, "moea's best feasible %g (optimum 0.3)", best);
    dc_study_free(s);
}

/* Every allocation failure is reported and nothing leaks. */
static void allocation_failures(void)
{
    long k;
    for (k = 0; k < 60; k++) {
        counting c = {0, k, 0};
        dc_allocator a = {failing_realloc, &c};
        dc_study_spec sp;
        double lo[N], hi[N], X[8 * N], f = 1.0;
        int64_t ids[8];
        dc_study *s = NULL;
        dc_status st;
        size_t i;
        box(&sp, lo, hi, N);
        sp.allocator = &a;
        st = dc_study_new("cmaes", &sp, &s, NULL);
        if (!st) {
            int r;
            for (r = 0; r < 5 && !st; r++) {
                st = dc_study_ask(s, 8, ids, X, NULL);
                for (i = 0; i < 8 && !st; i++)
                    st = dc_study_tell(s, ids[i], DC_TRIAL_OK, &f, 0.0, NULL);
            }
            CHECK(st == DC_OK || st == DC_ERR_NOMEM, "status %d", (int)st);
            dc_study_free(s);
        } else {
            CHECK(st == DC_ERR_NOMEM && !s, "new: status %d", (int)st);
        }
        CHECK(c.live == 0, "fail_after %ld: %ld blocks leaked", k, c.live);
    }
}

TEST_MAIN("test_study",
          TEST(every_engine),
          TEST(determinism),
          TEST(hostile),
          TEST(partial_batches),
          TEST(warm_start),
          TEST(kinds),
          TEST(several_and_constrained),
          TEST(gradient_slots),
          TEST(dss_integers),
          TEST(violations_of_one_objective),
          TEST(allocation_failures))
