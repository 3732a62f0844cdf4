/* test_vmath.c -- accuracy, special values and edge cases of the vmath
 * kernels, plus a small benchmark against plain libm loops.
 *
 *   test_vmath                 run the tests (a few seconds, sanitizers too)
 *   test_vmath --samples N     random inputs per input range (default 120000)
 *   test_vmath --seed S        another random stream
 *   test_vmath --bench         ns/element of each kernel vs a libm loop, n=1000
 *
 * Errors are measured in ulps of the exact result, approximated by the long
 * double (64-bit mantissa) libm functions; the table also shows glibc's own
 * double functions against the same reference.  A check fails when a kernel
 * is more than 4 ulp off, when a special value differs from C99 Annex F, or
 * when the block, length and in-place tests disagree bit for bit.  The last
 * line is "test_vmath: N passed, M failed"; the exit status is nonzero on any
 * failure. */
#include "common/vmath.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/check.h"

#define MAX_ULP 4.0
#define BATCH 4096

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL: %s\n", what);
    }
}

/* ---- random numbers (splitmix64) ----------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double rnd01(void) { return (double)(rnd64() >> 11) * 0x1p-53; }
static double uniform(double a, double b) { return a + (b - a) * rnd01(); }
static double rnd_sign(double v) { return (rnd64() & 1) ? -v : v; }

static double from_u64(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* |x| = m * 2^e with e uniform in [lo, hi) and a random mantissa */
static double log_uniform(int lo, int hi)
{
    int e = lo + (int)(rnd64() % (uint64_t)(hi - lo));
    return ldexp(1.0 + rnd01(), e);
}

static double step_ulps(double x, int k)
{
    for (; k > 0; k--)
        x = nextafter(x, INFINITY);
    for (; k < 0; k++)
        x = nextafter(x, -INFINITY);
    return x;
}

/* ---- the functions under test -------------------------------------------- */

typedef void (*kernel_fn)(const double *, double *, size_t);

static void sincos_s(const double *x, double *y, size_t n)
{
    double c[BATCH];
    for (size_t i = 0; i < n; i += BATCH) {
        size_t m = n - i < BATCH ? n - i : BATCH;
        dc_vmath_sincos(x + i, y + i, c, m);
    }
}

static void sincos_c(const double *x, double *y, size_t n)
{
    double s[BATCH];
    for (size_t i = 0; i < n; i += BATCH) {
        size_t m = n - i < BATCH ? n - i : BATCH;
        dc_vmath_sincos(x + i, s, y + i, m);
    }
}

typedef struct func {
    const char *name;
    kernel_fn kernel;
    double (*libm)(double);
    long double (*ref)(long double);
} func;

static const func FUNCS[] = {
    {"sin", dc_vmath_sin, sin, sinl},          {"cos", dc_vmath_cos, cos, cosl},
    {"sincos.s", sincos_s, sin, sinl},         {"sincos.c", sincos_c, cos, cosl},
    {"exp", dc_vmath_exp, exp, expl},          {"log", dc_vmath_log, log, logl},
};
enum { NFUNCS = sizeof FUNCS / sizeof FUNCS[0] };

/* ---- ulp error ------------------------------------------------------------ */

/* Error of y in ulps of the exact value ref (ulp of the double nearest ref;
 * 2^-1074 in the subnormal range).  Non-finite cases are exact or infinite. */
static double ulp_error(double y, long double ref)
{
    if (isnan(ref))
        return isnan(y) ? 0.0 : INFINITY;
    if (isnan(y))
        return INFINITY;
    double rd = (double)ref;
    if (isinf(rd) || isinf(y))
        return y == rd ? 0.0 : INFINITY;
    int e;
    (void)frexpl(ref, &e);
    int ue = e - 53 < -1074 ? -1074 : e - 53;
    if (ref == 0.0L)
        ue = -1074;
    return (double)(fabsl((long double)y - ref) / ldexpl(1.0L, ue));
}

/* ---- accuracy over input ranges ------------------------------------------- */

typedef double (*gen_fn)(void);

static double g_trig_small(void) { return uniform(-0.7853981633974483, 0.7853981633974483); }
static double g_trig_10(void) { return uniform(-10.0, 10.0); }
static double g_trig_1e3(void) { return uniform(-1000.0, 1000.0); }
static double g_trig_fast(void) { return uniform(-0x1p20, 0x1p20); }
static double g_trig_huge(void) { return rnd_sign(log_uniform(20, 1024)); }
static double g_trig_limit(void) /* around 2^19, where the fast path ends */
{
    return rnd_sign((rnd64() & 1) ? step_ulps(0x1p19, (int)(rnd64() % 201) - 100)
                                  : uniform(0x1p19 - 1000.0, 0x1p19 + 1000.0));
}
static double g_all_exponents(void) { return rnd_sign(log_uniform(-1074, 1024)); }
static double g_tiny(void) { return rnd_sign(log_uniform(-1074, -20)); }
static double g_subnormal(void) { return rnd_sign(from_u64(rnd64() & 0x000fffffffffffffu)); }

/* doubles near k*pi/2: the nearest double to a random multiple, a few ulps
 * away, or at an offset of 2^-50 .. 2^-3 (the fast path takes |r| >= 2^-40
 * |x|, libm the rest) */
static double g_near_pio2(void)
{
    static const long double pio2 = 1.57079632679489661923132169163975144L;
    uint64_t kmax = (rnd64() & 1) ? 1000 : 667000;
    long double k = (long double)(1 + rnd64() % kmax);
    long double xl = k * pio2;
    if (rnd64() & 1)
        xl += rnd_sign(log_uniform(-50, -3));
    return rnd_sign(step_ulps((double)xl, (int)(rnd64() % 7) - 3));
}

static double g_exp_1(void) { return uniform(-1.0, 1.0); }
static double g_exp_fast(void) { return uniform(-708.0, 708.0); }
static double g_exp_full(void) { return uniform(-746.0, 710.0); }
static double g_exp_edges(void)
{
    /* overflow (709.78), subnormal results (-708.40), zero (-745.13), and the
     * fast path's own limits */
    static const double edge[] = {709.782712893384, -708.3964185322641, -745.1332191019411,
                                  708.0, -708.0};
    double e = edge[rnd64() % 5];
    return (rnd64() & 1) ? step_ulps(e, (int)(rnd64() % 201) - 100) : e + uniform(-0.5, 0.5);
}

/* x = (j + 1/2) ln2 +- a little: the rounding of k = round(x / ln2) */
static double g_exp_half(void)
{
    double j = (double)((int)(rnd64() % 2040) - 1020);
    return step_ulps((j + 0.5) * 0.69314718055994530942, (int)(rnd64() % 9) - 4);
}

static double g_log_1(void) { return uniform(0.5, 2.0); }
static double g_log_near1(void) { return 1.0 + rnd_sign(log_uniform(-60, -1)); }
static double g_log_normal(void) { return log_uniform(-1022, 1024); }
static double g_log_bits(void) { return from_u64(rnd64() >> 1); }
static double g_log_edges(void)
{
    /* sqrt(1/2) * 2^e and 2^e: where the mantissa range switches */
    double b = (rnd64() & 1) ? 0.70710678118654752440 : 1.0;
    return ldexp(step_ulps(b, (int)(rnd64() % 21) - 10), (int)(rnd64() % 2040) - 1020);
}

typedef struct range {
    const char *name;
    gen_fn gen;
} range;

static const range TRIG_RANGES[] = {
    {"|x|<=pi/4", g_trig_small},     {"|x|<=10", g_trig_10},
    {"|x|<=1e3", g_trig_1e3},        {"|x|<=2^20", g_trig_fast},
    {"|x| near 2^19", g_trig_limit}, {"2^20<=|x| (libm)", g_trig_huge},
    {"near k*pi/2", g_near_pio2},
    {"log-uniform all", g_all_exponents}, {"|x|<2^-20", g_tiny},
    {"subnormal", g_subnormal},      {NULL, NULL},
};
static const range EXP_RANGES[] = {
    {"|x|<=1", g_exp_1},             {"[-708,708]", g_exp_fast},
    {"[-746,710]", g_exp_full},      {"near thresholds", g_exp_edges},
    {"near (j+1/2)ln2", g_exp_half}, {"log-uniform all", g_all_exponents},
    {"subnormal", g_subnormal},      {NULL, NULL},
};
static const range LOG_RANGES[] = {
    {"[0.5,2]", g_log_1},            {"1+-2^-60..2^-1", g_log_near1},
    {"log-uniform normal", g_log_normal}, {"random bits >0", g_log_bits},
    {"near 2^e, sqrt(.5)2^e", g_log_edges}, {"subnormal", g_subnormal},
    {NULL, NULL},
};

static double xs[BATCH], ys[BATCH];

/* Runs one function over one range; prints max ulp vs the reference for the
 * kernel and for glibc's double function; returns the kernel's maximum. */
static double measure(const func *f, const range *r, long samples)
{
    double worst = 0.0, worst_x = 0.0, libm_worst = 0.0;
    for (long done = 0; done < samples; done += BATCH) {
        size_t m = (size_t)(samples - done < BATCH ? samples - done : BATCH);
        for (size_t i = 0; i < m; i++) {
            double x = r->gen();
            if (f->libm == log)
                x = fabs(x);
            xs[i] = x;
        }
        f->kernel(xs, ys, m);
        for (size_t i = 0; i < m; i++) {
            long double ref = f->ref((long double)xs[i]);
            double e = ulp_error(ys[i], ref);
            double el = ulp_error(f->libm(xs[i]), ref);
            if (!(e <= worst) || (done == 0 && i == 0)) {
                worst = e;
                worst_x = xs[i];
            }
            if (el > libm_worst)
                libm_worst = el;
        }
    }
    printf("  %-9s %-24s %8ld  %7.3f  %7.3f   (x = %.17g)\n", f->name, r->name, samples, worst,
           libm_worst, worst_x);
    return worst;
}

static void test_accuracy(long samples)
{
    printf("max ulp error vs long double libm (kernel, glibc double):\n");
    double fmax[NFUNCS];
    for (int k = 0; k < NFUNCS; k++) {
        const func *f = &FUNCS[k];
        const range *rs = f->libm == exp ? EXP_RANGES : f->libm == log ? LOG_RANGES : TRIG_RANGES;
        fmax[k] = 0.0;
        for (const range *r = rs; r->name; r++) {
            double e = measure(f, r, samples);
            char what[96];
            snprintf(what, sizeof what, "%s over %s: %.3f ulp > %.0f", f->name, r->name, e,
                     MAX_ULP);
            check(e <= MAX_ULP, what);
            if (e > fmax[k])
                fmax[k] = e;
        }
    }
    printf("max ulp per function:");
    for (int k = 0; k < NFUNCS; k++)
        printf(" %s %.3f%s", FUNCS[k].name, fmax[k], k + 1 < NFUNCS ? "," : "\n");
}

/* ---- special values ------------------------------------------------------- */

/* Bitwise equality, except that any NaN matches any NaN. */
static int same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

static void expect(const char *name, kernel_fn k, double x, double want)
{
    double y;
    k(&x, &y, 1);
    char what[128];
    snprintf(what, sizeof what, "%s(%a) = %a, want %a", name, x, y, want);
    check(same(y, want), what);
}

/* Within MAX_ULP of the reference (for values on the fast paths). */
static void expect_near(const func *f, double x)
{
    double y;
    f->kernel(&x, &y, 1);
    double e = ulp_error(y, f->ref((long double)x));
    char what[128];
    snprintf(what, sizeof what, "%s(%a) = %a: %.3f ulp", f->name, x, y, e);
    check(e <= MAX_ULP, what);
}

static void test_special(void)
{
    const double inf = INFINITY, nan = NAN, tiny = 0x1p-1074;
    /* quiet and signalling NaNs of both signs, payloads in the low bits */
    static const uint64_t nans[] = {0x7ff0000000000001u, 0x7ff8000000000fffu,
                                    0xfff8000000000001u, 0x7fffffffffffffffu,
                                    0xffffffffffffffffu, 0x7ff4000000000800u};
    kernel_fn ks[] = {dc_vmath_sin, dc_vmath_cos, sincos_s, sincos_c, dc_vmath_exp, dc_vmath_log};
    const char *names[] = {"sin", "cos", "sincos.s", "sincos.c", "exp", "log"};
    for (int k = 0; k < 6; k++) {
        expect(names[k], ks[k], nan, nan);
        expect(names[k], ks[k], -nan, nan);
        for (size_t j = 0; j < sizeof nans / sizeof nans[0]; j++)
            expect(names[k], ks[k], from_u64(nans[j]), nan);
    }
    for (int k = 0; k < 4; k++) {
        int is_sin = k == 0 || k == 2;
        expect(names[k], ks[k], inf, nan);
        expect(names[k], ks[k], -inf, nan);
        expect(names[k], ks[k], 0.0, is_sin ? 0.0 : 1.0);
        expect(names[k], ks[k], -0.0, is_sin ? -0.0 : 1.0);
        expect(names[k], ks[k], tiny, is_sin ? tiny : 1.0);
        expect(names[k], ks[k], -tiny, is_sin ? -tiny : 1.0);
        expect(names[k], ks[k], DBL_MIN, is_sin ? DBL_MIN : 1.0);
        expect(names[k], ks[k], 0x1p-30, is_sin ? 0x1p-30 : 1.0);
    }
    expect("exp", dc_vmath_exp, 0.0, 1.0);
    expect("exp", dc_vmath_exp, -0.0, 1.0);
    expect("exp", dc_vmath_exp, -inf, 0.0);
    expect("exp", dc_vmath_exp, inf, inf);
    expect("exp", dc_vmath_exp, 709.79, inf);
    expect("exp", dc_vmath_exp, 1e300, inf);
    expect("exp", dc_vmath_exp, -746.0, 0.0);
    expect("exp", dc_vmath_exp, -1e300, 0.0);
    expect("exp", dc_vmath_exp, -745.0, exp(-745.0));
    expect("exp", dc_vmath_exp, tiny, 1.0);
    expect("exp", dc_vmath_exp, -tiny, 1.0);
    expect("exp", dc_vmath_exp, 0x1.62e42fefa39efp+9, exp(0x1.62e42fefa39efp+9)); /* DBL_MAX */
    expect("exp", dc_vmath_exp, -0x1.74385446d71c3p+9, 0x1p-1074);
    expect("exp", dc_vmath_exp, -745.2, 0.0);
    expect("log", dc_vmath_log, 0.0, -inf);
    expect("log", dc_vmath_log, -0.0, -inf);
    expect("log", dc_vmath_log, -1.0, nan);
    expect("log", dc_vmath_log, -tiny, nan);
    expect("log", dc_vmath_log, -inf, nan);
    expect("log", dc_vmath_log, inf, inf);
    expect("log", dc_vmath_log, 1.0, 0.0);
    expect("log", dc_vmath_log, tiny, log(tiny));
    expect("log", dc_vmath_log, 0x1.fffffffffffffp-1023, log(0x1.fffffffffffffp-1023));
    static const double near[][5] = {{1.0, 0x1.921fb54442d18p+0, 1e5, -3.0, 0x1.921fb54442d18p+18},
                                     {1.0, 0x1.921fb54442d18p+0, 1e5, -3.0, 0x1.921fb54442d18p+18},
                                     {1.0, 0x1.921fb54442d18p+0, 1e5, -3.0, 0x1.921fb54442d18p+18},
                                     {1.0, 0x1.921fb54442d18p+0, 1e5, -3.0, 0x1.921fb54442d18p+18},
                                     {1.0, -1.0, 700.0, -700.0, 0x1p-30},
                                     {2.0, DBL_MIN, DBL_MAX, 0.5, 1.0 + 0x1p-52}};
    for (int k = 0; k < NFUNCS; k++)
        for (int j = 0; j < 5; j++)
            expect_near(&FUNCS[k], near[k][j]);
}

/* ---- lengths, blocks, in-place -------------------------------------------- */

enum { LMAX = 1100 };

/* A mix of fast-path and libm inputs for every function. */
static double mixed_input(size_t i)
{
    switch (rnd64() % 8) {
    case 0: return (i % 3 == 0) ? NAN : (i % 3 == 1) ? -INFINITY : 0.0;
    case 1: return g_all_exponents();
    case 2: return g_subnormal();
    case 3: return g_exp_edges();
    case 4: return g_near_pio2();
    default: return uniform(-20.0, 20.0);
    }
}

static void test_lengths(void)
{
    static const size_t lens[] = {0, 1, 2, 3, 5, 255, 256, 257, 511, 512, 513, 1000, 1099};
    static double x[LMAX + 1], y[LMAX + 1], z[LMAX + 1], c[LMAX + 1], one[1];
    const double guard = 12345.5;
    for (size_t i = 0; i < LMAX; i++)
        x[i] = mixed_input(i);
    for (int k = 0; k < NFUNCS; k++) {
        const func *f = &FUNCS[k];
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            size_t n = lens[li];
            int ok = 1;
            y[n] = guard;
            f->kernel(x, y, n);
            ok &= y[n] == guard; /* nothing written past n */
            for (size_t i = 0; i < n; i++) {
                f->kernel(&x[i], one, 1); /* one lane alone: same bits */
                ok &= same(one[0], y[i]);
                ok &= isnan(y[i]) || ulp_error(y[i], f->ref(x[i])) <= MAX_ULP;
            }
            memcpy(z, x, n * sizeof x[0]); /* in place */
            f->kernel(z, z, n);
            for (size_t i = 0; i < n; i++)
                ok &= same(z[i], y[i]);
            char what[80];
            snprintf(what, sizeof what, "%s: length %zu, in place", f->name, n);
            check(ok, what);
        }
    }
    /* sincos == sin and cos bit for bit, also with s == x or c == x */
    dc_vmath_sin(x, y, LMAX);
    dc_vmath_cos(x, c, LMAX);
    dc_vmath_sincos(x, z, ys, LMAX);
    int ok = 1;
    for (size_t i = 0; i < LMAX; i++)
        ok &= same(z[i], y[i]) && same(ys[i], c[i]);
    memcpy(z, x, sizeof x);
    dc_vmath_sincos(z, z, ys, LMAX);
    for (size_t i = 0; i < LMAX; i++)
        ok &= same(z[i], y[i]) && same(ys[i], c[i]);
    memcpy(z, x, sizeof x);
    dc_vmath_sincos(z, ys, z, LMAX);
    for (size_t i = 0; i < LMAX; i++)
        ok &= same(ys[i], y[i]) && same(z[i], c[i]);
    check(ok, "sincos agrees with sin and cos (also in place)");
}

/* ---- benchmark ------------------------------------------------------------ */

static double now_ns(void)
{
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

enum { BN = 1000, BREPS = 100, BROUNDS = 60 };

static double bench_sink;

/* ns per element of BREPS calls of one call pattern. */
static double time_once(int which, const double *x, double *y, double *y2)
{
    double t0 = now_ns();
    for (int rep = 0; rep < BREPS; rep++) {
        if (which % 10 >= 5) /* in place: start from a copy of x */
            memcpy(y, x, sizeof(double) * BN);
        switch (which) {
        case 0: dc_vmath_sin(x, y, BN); break;
        case 1: dc_vmath_cos(x, y, BN); break;
        case 2: dc_vmath_sincos(x, y, y2, BN); break;
        case 3: dc_vmath_exp(x, y, BN); break;
        case 4: dc_vmath_log(x, y, BN); break;
        case 5: dc_vmath_sin(y, y, BN); break;
        case 6: dc_vmath_exp(y, y, BN); break;
        case 10: for (int i = 0; i < BN; i++) y[i] = sin(x[i]); break;
        case 11: for (int i = 0; i < BN; i++) y[i] = cos(x[i]); break;
        case 12: for (int i = 0; i < BN; i++) { y[i] = sin(x[i]); y2[i] = cos(x[i]); } break;
        case 13: for (int i = 0; i < BN; i++) y[i] = exp(x[i]); break;
        case 14: for (int i = 0; i < BN; i++) y[i] = log(x[i]); break;
        case 15: for (int i = 0; i < BN; i++) y[i] = sin(y[i]); break;
        case 16: for (int i = 0; i < BN; i++) y[i] = exp(y[i]); break;
        default: break;
        }
        bench_sink += y[rep % BN];
    }
    return (now_ns() - t0) / ((double)BREPS * BN);
}

static void bench(void)
{
    static double x[BN], y[BN], y2[BN];
    static const char *names[] = {"sin [-10,10]", "cos [-10,10]", "sincos [-10,10]",
                                  "exp [-50,50]", "log [1e-10,1e10]", "sin in place*",
                                  "exp in place*"};
    printf("ns/element, n = %d (best of %d alternating rounds of %d calls each)\n", BN, BROUNDS,
           BREPS);
    printf("  %-18s %8s %8s %7s\n", "kernel", "vmath", "libm", "ratio");
    for (int k = 0; k < 7; k++) {
        for (int i = 0; i < BN; i++)
            x[i] = k < 3 || k == 5 ? uniform(-10, 10)
                   : k == 3 || k == 6 ? uniform(-50, 50)
                                      : pow(10.0, uniform(-10, 10));
        double tv = INFINITY, tl = INFINITY;
        for (int round = 0; round < BROUNDS; round++) {
            tv = fmin(tv, time_once(k, x, y, y2));
            tl = fmin(tl, time_once(10 + k, x, y, y2));
        }
        printf("  %-18s %8.3f %8.3f %6.2fx\n", names[k], tv, tl, tl / tv);
    }
    printf("  (* y = x copied in, then y computed in place; both columns include the copy)\n");
    if (bench_sink == 42.0)
        printf(" \n");
}

/* ---- main ----------------------------------------------------------------- */

static long samples = 120000;

static void test_accuracy_sampled(void)
{
    test_accuracy(samples);
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {TEST(test_special), TEST(test_lengths),
                                      TEST(test_accuracy_sampled)};
    int do_bench = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bench") == 0)
            do_bench = 1;
        else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            rng_state = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [--bench] [--samples N] [--seed S]\n", argv[0]);
            return 2;
        }
    }
    if (do_bench) {
        bench();
        return 0;
    }
    return run_tests("test_vmath", tests, sizeof tests / sizeof tests[0], NULL, 0);
}
