/*
 * objectives.c -- hand-written C reference implementations of the six
 * benchmark objectives used by benchmarks/compare_eval.py.
 *
 * Each objective is the plain scalar loop a competent C programmer writes:
 * one pass over x, libm calls, no SIMD intrinsics, no precomputed tables.
 * Whatever the compiler does with it (auto-vectorization, libmvec under
 * -ffast-math) is up to the compiler flags; compare_eval.py builds this file
 * twice: -O2 (the reference) and -O3 -ffast-math -march=native (the limit).
 *
 * Entry points (called through ctypes):
 *   ref_count()                    number of objectives
 *   ref_name(id)                   the objective's registry name
 *   ref_eval_many(id, X, P, n, out)
 *                                  out[p] = f(X[p*n .. p*n+n)), for checking
 *   ref_time(id, X, P, n, reps, checksum)
 *                                  evaluates the P x n population reps times
 *                                  and returns the CPU nanoseconds spent,
 *                                  measured here with clock_gettime(
 *                                  CLOCK_PROCESS_CPUTIME_ID), so the ctypes
 *                                  call overhead is not counted.  The sum of
 *                                  all values goes to *checksum so the work
 *                                  cannot be dropped.
 * Unknown ids return -1.
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stddef.h>
#include <time.h>

static const double PI = 3.14159265358979323846;
static const double E = 2.71828182845904523536;

/* 10*n + sum(x**2 - 10*cos(2*pi*x)) */
static double rastrigin(const double *x, long n)
{
    double s = 0.0;
    for (long j = 0; j < n; ++j)
        s += x[j] * x[j] - 10.0 * cos(2.0 * PI * x[j]);
    return 10.0 * (double)n + s;
}

/* -20*exp(-0.2*sqrt(mean(x**2))) - exp(mean(cos(2*pi*x))) + 20 + e */
static double ackley(const double *x, long n)
{
    double s2 = 0.0, sc = 0.0;
    for (long j = 0; j < n; ++j) {
        s2 += x[j] * x[j];
        sc += cos(2.0 * PI * x[j]);
    }
    return -20.0 * exp(-0.2 * sqrt(s2 / (double)n)) - exp(sc / (double)n) + 20.0 + E;
}

/* sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2) */
static double rosenbrock(const double *x, long n)
{
    double s = 0.0;
    for (long j = 0; j + 1 < n; ++j) {
        double t = x[j + 1] - x[j] * x[j];
        double u = 1.0 - x[j];
        s += 100.0 * t * t + u * u;
    }
    return s;
}

/* 1 + sum(x**2)/4000 - prod(cos(x/sqrt(i))) */
static double griewank(const double *x, long n)
{
    double s = 0.0, p = 1.0;
    for (long j = 0; j < n; ++j) {
        s += x[j] * x[j];
        p *= cos(x[j] / sqrt((double)(j + 1)));
    }
    return 1.0 + s / 4000.0 - p;
}

/* 418.9828872724338*n - sum(x*sin(sqrt(abs(x)))) */
static double schwefel(const double *x, long n)
{
    double s = 0.0;
    for (long j = 0; j < n; ++j)
        s += x[j] * sin(sqrt(fabs(x[j])));
    return 418.9828872724338 * (double)n - s;
}

/* sum(x**4 - 16*x**2 + 5*x)/2 */
static double styblinski_tang(const double *x, long n)
{
    double s = 0.0;
    for (long j = 0; j < n; ++j) {
        double x2 = x[j] * x[j];
        s += x2 * x2 - 16.0 * x2 + 5.0 * x[j];
    }
    return s / 2.0;
}

static const char *const NAMES[] = {
    "rastrigin", "ackley", "rosenbrock", "griewank", "schwefel", "styblinski_tang",
};
#define N_OBJECTIVES ((int)(sizeof NAMES / sizeof NAMES[0]))

int ref_count(void);
const char *ref_name(int id);
int ref_eval_many(int id, const double *X, long P, long n, double *out);
double ref_time(int id, const double *X, long P, long n, long reps, double *checksum);

int ref_count(void)
{
    return N_OBJECTIVES;
}

const char *ref_name(int id)
{
    return (id >= 0 && id < N_OBJECTIVES) ? NAMES[id] : NULL;
}

#define EVAL_LOOP(fn)                                                                  \
    for (long p = 0; p < P; ++p)                                                       \
        out[p] = fn(X + p * n, n);

int ref_eval_many(int id, const double *X, long P, long n, double *out)
{
    switch (id) {
    case 0: EVAL_LOOP(rastrigin); break;
    case 1: EVAL_LOOP(ackley); break;
    case 2: EVAL_LOOP(rosenbrock); break;
    case 3: EVAL_LOOP(griewank); break;
    case 4: EVAL_LOOP(schwefel); break;
    case 5: EVAL_LOOP(styblinski_tang); break;
    default: return -1;
    }
    return 0;
}

/* The empty asm with a memory clobber after each repetition tells the
 * compiler that X may have changed, so no evaluation can be hoisted out of
 * the repetition loop; the checksum keeps every value live. */
#define TIME_LOOP(fn)                                                                  \
    for (long r = 0; r < reps; ++r) {                                                  \
        for (long p = 0; p < P; ++p)                                                   \
            acc += fn(X + p * n, n);                                                   \
        __asm__ __volatile__("" : : : "memory");                                       \
    }

double ref_time(int id, const double *X, long P, long n, long reps, double *checksum)
{
    struct timespec t0, t1;
    double acc = 0.0;
    if (id < 0 || id >= N_OBJECTIVES)
        return -1.0;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    switch (id) {
    case 0: TIME_LOOP(rastrigin); break;
    case 1: TIME_LOOP(ackley); break;
    case 2: TIME_LOOP(rosenbrock); break;
    case 3: TIME_LOOP(griewank); break;
    case 4: TIME_LOOP(schwefel); break;
    default: TIME_LOOP(styblinski_tang); break;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    *checksum = acc;
    return (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
}
