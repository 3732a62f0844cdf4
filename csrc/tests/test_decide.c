/* test_decide.c -- competition ranks (csrc/decide/rank.c): worked examples of
 * each rule, then random score vectors (ties, near-ties, NaN, infinities,
 * signed zeros; lengths across the insertion-run and merge boundaries) against
 * a plain quadratic reference.  Then the scoring kernels (csrc/decide/kernels.c):
 * bad arguments, worked examples, and random matrices of many shapes in
 * exactly sized heap buffers (out-of-bounds access trips AddressSanitizer)
 * against plain formulas.  Agreement with pymcdm and scikit-criteria is tested
 * from Python (tests/decide).  Prints "test_decide: N passed, M failed" and
 * exits non-zero on any failure. */
#include "decido.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

#define TOL 1e-12
#define MAX_N 300

static int same(const int64_t *a, const int64_t *b, size_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

/* ---- reference: insertion sorts, written from the rules ------------------ */

static double key(const double *s, int higher, int64_t i) { return higher ? -s[i] : s[i]; }

static int key_before(const double *s, int higher, int64_t a, int64_t b)
{
    double ka = key(s, higher, a), kb = key(s, higher, b);
    if (isnan(ka)) {
        return 0;
    }
    return isnan(kb) || ka < kb;
}

static void reference(const double *s, size_t n, int higher, int64_t *order, int64_t *rank)
{
    double max_abs = -1.0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(s[i]) && fabs(s[i]) > max_abs) {
            max_abs = fabs(s[i]);
        }
    }
    double tol = max_abs >= 0.0 ? TOL * max_abs : 0.0;
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j > 0 && key_before(s, higher, (int64_t)i, order[j - 1])) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (int64_t)i;
    }
    size_t start = 0;
    for (size_t p = 1; p <= n; p++) {
        if (p < n) {
            double ka = key(s, higher, order[p - 1]), kb = key(s, higher, order[p]);
            int tie = isnan(kb) ? isnan(ka) : !(kb - ka > tol);
            if (tie) {
                continue;
            }
        }
        for (size_t a = start + 1; a < p; a++) { /* the group in input order */
            for (size_t b = a; b > start && order[b] < order[b - 1]; b--) {
                int64_t t = order[b];
                order[b] = order[b - 1];
                order[b - 1] = t;
            }
        }
        for (size_t q = start; q < p; q++) {
            rank[q] = (int64_t)start + 1;
        }
        start = p;
    }
}

/* ---- worked examples ------------------------------------------------------ */

static void expect(const char *what, const double *s, size_t n, int higher,
                   const int64_t *want_order, const int64_t *want_rank)
{
    int64_t order[16], rank[16];
    dc_status st = dc_rank_competition(s, n, higher, TOL, order, rank);
    CHECK(st == DC_OK, "%s: status %d", what, (int)st);
    CHECK(same(order, want_order, n), "%s: order", what);
    CHECK(same(rank, want_rank, n), "%s: ranks", what);
}

static void examples(void)
{
    {
        double s[] = {0.5, 0.9, 0.7, 0.9};
        int64_t o[] = {1, 3, 2, 0}, r[] = {1, 1, 3, 4};
        expect("1, 1, 3, 4 with ties in input order", s, 4, 1, o, r);
    }
    {
        double s[] = {3.0, 1.0, 2.0, 1.0};
        int64_t o[] = {1, 3, 2, 0}, r[] = {1, 1, 3, 4};
        expect("ascending", s, 4, 0, o, r);
    }
    {
        double s[] = {0.1 + 0.2, 0.3, 0.2};
        int64_t o[] = {0, 1, 2}, r[] = {1, 1, 3};
        expect("0.1 + 0.2 ties 0.3", s, 3, 1, o, r);
    }
    {
        double s[] = {0.3, 0.1 + 0.2, 0.2};
        int64_t o[] = {0, 1, 2}, r[] = {1, 1, 3};
        expect("near-ties take input order", s, 3, 1, o, r);
    }
    {
        double s[] = {NAN, 1.0, INFINITY, NAN, -INFINITY};
        int64_t o[] = {2, 1, 4, 0, 3}, r[] = {1, 2, 3, 4, 4};
        expect("+inf first, NaN last and tied", s, 5, 1, o, r);
    }
    {
        double s[] = {INFINITY, INFINITY, 2.0};
        int64_t o[] = {0, 1, 2}, r[] = {1, 1, 3};
        expect("equal infinities tie", s, 3, 1, o, r);
    }
    {
        double s[] = {NAN, NAN};
        int64_t o[] = {0, 1}, r[] = {1, 1};
        expect("only NaN", s, 2, 0, o, r);
    }
    {
        double s[] = {-0.0, 0.0, 0.0};
        int64_t o[] = {0, 1, 2}, r[] = {1, 1, 1};
        expect("signed zeros tie", s, 3, 1, o, r);
    }
    {
        double s[] = {7.0};
        int64_t o[] = {0}, r[] = {1};
        expect("one option", s, 1, 0, o, r);
    }
    CHECK(dc_rank_competition(NULL, 0, 1, TOL, NULL, NULL) == DC_OK, "n = 0 is a no-op");
    int64_t o[1], r[1];
    double s[1] = {1.0};
    CHECK(dc_rank_competition(NULL, 1, 1, TOL, o, r) == DC_ERR_ARGUMENT, "NULL score");
    CHECK(dc_rank_competition(s, 1, 1, TOL, NULL, r) == DC_ERR_ARGUMENT, "NULL order");
    CHECK(dc_rank_competition(s, 1, 1, TOL, o, NULL) == DC_ERR_ARGUMENT, "NULL rank");
}

/* ---- random vectors against the reference ---------------------------------- */

static uint64_t state = 0x2545f4914f6cdd1du;

static uint64_t next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static double draw(void)
{
    switch (next() % 12) {
    case 0:
        return NAN;
    case 1:
        return (next() & 1) ? INFINITY : -INFINITY;
    case 2:
        return (next() & 1) ? 0.0 : -0.0;
    case 3: /* within the tolerance of 1 */
        return 1.0 + (double)(next() % 5) * 1e-13;
    case 4:
    case 5:
        return (double)(next() % 4); /* exact ties */
    default:
        return ((double)(next() >> 11) * 0x1p-53 - 0.5) * 10.0;
    }
}

static void random_vectors(void)
{
    static double s[MAX_N];
    static int64_t order[MAX_N], rank[MAX_N], want_order[MAX_N], want_rank[MAX_N];
    size_t sizes[] = {2, 3, 15, 16, 17, 31, 32, 33, 64, 100, 257, MAX_N};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        for (int rep = 0; rep < 40; rep++) {
            size_t n = sizes[t];
            int finite_only = rep % 4 == 0;
            for (size_t i = 0; i < n; i++) {
                double v = draw();
                s[i] = finite_only && !isfinite(v) ? 2.5 : v;
            }
            int higher = rep % 2;
            dc_status st = dc_rank_competition(s, n, higher, TOL, order, rank);
            reference(s, n, higher, want_order, want_rank);
            CHECK(st == DC_OK && same(order, want_order, n) && same(rank, want_rank, n),
                  "random n=%zu rep=%d higher=%d", n, rep, higher);
        }
    }
}

/* ---- scoring kernels --------------------------------------------------------- */

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-12 * (1.0 + fabs(b));
}

static int all_near(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!near(a[i], b[i])) {
            return 0;
        }
    }
    return 1;
}

static void kernel_arguments(void)
{
    double X[4] = {1.0, 2.0, 3.0, 4.0}, w[2] = {0.5, 0.5}, lo[2] = {0.0, 0.0}, hi[2] = {5.0, 5.0};
    unsigned char b[2] = {1, 0};
    double A[4], B[4], s[2], t[2], u[2];
    /* zero sizes */
    CHECK(dc_mcdm_topsis(X, 0, 2, b, w, DC_NORM_VECTOR, A, B, s, t, u) == DC_ERR_ARGUMENT, "topsis m=0");
    CHECK(dc_mcdm_topsis(X, 2, 0, b, w, DC_NORM_VECTOR, A, B, s, t, u) == DC_ERR_ARGUMENT, "topsis k=0");
    CHECK(dc_mcdm_wsm(X, 0, 2, b, w, DC_NORM_MINMAX, A, B, s) == DC_ERR_ARGUMENT, "wsm m=0");
    CHECK(dc_mcdm_normalize(X, 2, 0, b, DC_NORM_SUM, A) == DC_ERR_ARGUMENT, "normalize k=0");
    CHECK(dc_mcdm_normalize(X, 2, 2, b, (dc_normalization)99, A) == DC_ERR_ARGUMENT,
          "unknown normalization");
    CHECK(dc_mcdm_moora(X, 2, 0, b, w, A, B, s) == DC_ERR_ARGUMENT, "moora k=0");
    CHECK(dc_mcdm_vikor(X, 0, 2, b, w, 0.5, 1e-9, A, s, t, u) == DC_ERR_ARGUMENT, "vikor m=0");
    CHECK(dc_mcdm_spotis(X, 2, 0, b, w, lo, hi, A, B, s) == DC_ERR_ARGUMENT, "spotis k=0");
    /* m*k beyond size_t */
    CHECK(dc_mcdm_moora(X, SIZE_MAX / 2 + 1, 2, b, w, A, B, s) == DC_ERR_ARGUMENT, "m*k overflow");
    /* NULL buffers */
    CHECK(dc_mcdm_topsis(NULL, 2, 2, b, w, DC_NORM_VECTOR, A, B, s, t, u) == DC_ERR_ARGUMENT, "NULL X");
    CHECK(dc_mcdm_topsis(X, 2, 2, b, w, DC_NORM_VECTOR, A, B, s, t, NULL) == DC_ERR_ARGUMENT,
          "NULL d_worst");
    CHECK(dc_mcdm_wsm(X, 2, 2, NULL, w, DC_NORM_MINMAX, A, B, s) == DC_ERR_ARGUMENT, "NULL benefit");
    CHECK(dc_mcdm_normalize(X, 2, 2, b, DC_NORM_MAX, NULL) == DC_ERR_ARGUMENT, "NULL R");
    CHECK(dc_mcdm_moora(X, 2, 2, b, NULL, A, B, s) == DC_ERR_ARGUMENT, "NULL w");
    CHECK(dc_mcdm_vikor(X, 2, 2, b, w, 0.5, 1e-9, A, NULL, t, u) == DC_ERR_ARGUMENT, "NULL S");
    CHECK(dc_mcdm_spotis(X, 2, 2, b, w, NULL, hi, A, B, s) == DC_ERR_ARGUMENT, "NULL lower");
    CHECK(dc_mcdm_spotis(X, 2, 2, b, w, lo, hi, A, B, NULL) == DC_ERR_ARGUMENT, "NULL score");
}

static void kernel_examples(void)
{
    /* 3 options x 2 criteria, column-major: price (cost) and quality (benefit) */
    const double X[6] = {10.0, 30.0, 20.0, /* price */ 1.0, 3.0, 2.0 /* quality */};
    const unsigned char b[2] = {0, 1};
    const double w[2] = {0.25, 0.75};
    double A[6], B[6], s[3], t[3], u[3];

    /* WSM min-max: price (30 - x)/20 = 1, 0, .5; quality (x - 1)/2 = 0, 1, .5 */
    CHECK(dc_mcdm_wsm(X, 3, 2, b, w, DC_NORM_MINMAX, A, B, s) == DC_OK, "wsm ok");
    const double wsm_r[6] = {1.0, 0.0, 0.5, 0.0, 1.0, 0.5}, wsm_s[3] = {0.25, 0.75, 0.5};
    CHECK(memcmp(A, wsm_r, sizeof wsm_r) == 0, "wsm normalized");
    CHECK(memcmp(s, wsm_s, sizeof wsm_s) == 0, "wsm score");
    /* a constant column: min-max divides by zero, so every option is 1; the
     * formulas of vector (1/sqrt(m), cost 1 - 1/sqrt(m)), sum (1/m) hold */
    const double K[3] = {4.0, 4.0, 4.0};
    const unsigned char b1[1] = {1}, cost1[1] = {0};
    const double w1[1] = {1.0};
    dc_mcdm_normalize(K, 3, 1, b1, DC_NORM_MINMAX, A);
    CHECK(A[0] == 1.0 && A[1] == 1.0 && A[2] == 1.0, "constant min-max column is 1");
    dc_mcdm_normalize(K, 3, 1, b1, DC_NORM_VECTOR, A);
    CHECK(near(A[0], 1.0 / sqrt(3.0)) && near(A[2], 1.0 / sqrt(3.0)), "constant vector column");
    dc_mcdm_normalize(K, 3, 1, cost1, DC_NORM_VECTOR, A);
    CHECK(near(A[1], 1.0 - 1.0 / sqrt(3.0)), "constant vector cost column");
    dc_mcdm_normalize(K, 3, 1, cost1, DC_NORM_SUM, A);
    CHECK(near(A[0], 1.0 / 3.0) && near(A[2], 1.0 / 3.0), "constant sum column");
    const double Z[3] = {0.0, 0.0, 0.0};
    dc_mcdm_normalize(Z, 3, 1, cost1, DC_NORM_VECTOR, A);
    CHECK(A[0] == 1.0 && A[2] == 1.0, "a zero norm makes the column 1");
    /* max and linear on price: 10/30, cost 1 - 10/30 and 10/10 */
    dc_mcdm_normalize(X, 3, 1, cost1, DC_NORM_MAX, A);
    CHECK(near(A[0], 1.0 - 1.0 / 3.0) && A[1] == 0.0, "max, cost");
    dc_mcdm_normalize(X, 3, 1, cost1, DC_NORM_LINEAR, A);
    CHECK(A[0] == 1.0 && near(A[1], 1.0 / 3.0), "linear, cost");
    dc_mcdm_normalize(X, 3, 1, b1, DC_NORM_SUM, A);
    CHECK(near(A[0], 10.0 / 60.0) && near(A[1], 0.5), "sum, benefit");
    dc_mcdm_wsm(K, 3, 1, b1, w1, DC_NORM_MINMAX, A, B, s);
    CHECK(s[0] == 1.0 && s[2] == 1.0, "wsm on a constant column");

    /* MOORA: norms 10*sqrt(14) and sqrt(14); price counts negatively */
    CHECK(dc_mcdm_moora(X, 3, 2, b, w, A, B, s) == DC_OK, "moora ok");
    double n0 = sqrt(1400.0), n1 = sqrt(14.0);
    const double moora_s[3] = {-0.25 * 10.0 / n0 + 0.75 * 1.0 / n1,
                               -0.25 * 30.0 / n0 + 0.75 * 3.0 / n1,
                               -0.25 * 20.0 / n0 + 0.75 * 2.0 / n1};
    CHECK(all_near(s, moora_s, 3) && near(A[1], 30.0 / n0), "moora values");

    /* VIKOR, v = .5: regrets price .25 (x - 10)/20, quality .75 (3 - x)/2 */
    CHECK(dc_mcdm_vikor(X, 3, 2, b, w, 0.5, 1e-9, A, s, t, u) == DC_OK, "vikor ok");
    const double vS[3] = {0.75, 0.25, 0.125 + 0.375}, vR[3] = {0.75, 0.25, 0.375};
    CHECK(memcmp(s, vS, sizeof vS) == 0 && memcmp(t, vR, sizeof vR) == 0, "vikor S and R");
    const double vQ[3] = {1.0, 0.0, 0.5 * 0.5 + 0.5 * 0.25};
    CHECK(memcmp(u, vQ, sizeof vQ) == 0, "vikor Q");
    dc_mcdm_vikor(K, 3, 1, b1, w1, 0.5, 1e-9, A, s, t, u);
    CHECK(u[0] == 0.0 && u[1] == 0.0 && u[2] == 0.0 && !signbit(u[0]), "vikor zero spread is +0");
    /* S and R one ulp apart (0.3 against 0.1 + 0.2): they would tie, so no spread;
     * with rel_tol 0 the ulp decides the whole term */
    const double E[4] = {1.0, 0.0, 0.0, 1.0}, wE[2] = {0.1 + 0.2, 0.3};
    const unsigned char b2[2] = {1, 1};
    dc_mcdm_vikor(E, 2, 2, b2, wE, 0.5, 1e-9, A, s, t, u);
    CHECK(s[0] != s[1] && u[0] == 0.0 && u[1] == 0.0, "vikor: S, R within rel_tol do not spread");
    dc_mcdm_vikor(E, 2, 2, b2, wE, 0.5, 0.0, A, s, t, u);
    CHECK(u[0] == 0.0 && u[1] == 1.0, "vikor: rel_tol 0 spreads an ulp");

    /* SPOTIS, bounds price [0, 40], quality [0, 4] */
    const double lo[2] = {0.0, 0.0}, hi[2] = {40.0, 4.0};
    CHECK(dc_mcdm_spotis(X, 3, 2, b, w, lo, hi, A, B, s) == DC_OK, "spotis ok");
    const double sp[3] = {0.25 * 0.25 + 0.75 * 0.75, 0.25 * 0.75 + 0.75 * 0.25, 0.25 * 0.5 + 0.75 * 0.5};
    CHECK(memcmp(s, sp, sizeof sp) == 0, "spotis score");
    const double lo0[2] = {0.0, 2.0}, hi0[2] = {40.0, 2.0};
    dc_mcdm_spotis(X, 3, 2, b, w, lo0, hi0, A, B, s);
    CHECK(B[3] == 0.0 && B[4] == 0.0 && B[5] == 0.0, "spotis zero-width bound is 0");

    /* TOPSIS, vector normalization: two mirrored options tie at .5 */
    const double T2[4] = {3.0, 4.0, 4.0, 3.0};
    const unsigned char bb[2] = {1, 1};
    const double wh[2] = {0.5, 0.5};
    CHECK(dc_mcdm_topsis(T2, 2, 2, bb, wh, DC_NORM_VECTOR, A, B, s, t, u) == DC_OK, "topsis ok");
    CHECK(near(s[0], 0.5) && near(s[1], 0.5) && near(t[0], 0.1) && near(u[1], 0.1),
          "topsis mirrored options");
    CHECK(dc_mcdm_topsis(X, 3, 2, b, w, DC_NORM_VECTOR, A, B, s, t, u) == DC_OK, "topsis 3x2 ok");
    CHECK(s[1] > s[2] && s[2] > s[0] && near(A[0], 1.0 - 10.0 / n0), "topsis order and R");
    const double KK[6] = {4.0, 4.0, 4.0, 2.0, 2.0, 2.0};
    dc_mcdm_topsis(KK, 3, 2, b, w, DC_NORM_VECTOR, A, B, s, t, u);
    CHECK(s[0] == 1.0 && s[1] == 1.0 && t[0] == 0.0, "topsis: every option ideal scores 1");
}

/* Random shapes in exactly sized buffers, checked against plain formulas. */
static void kernel_shapes(void)
{
    size_t ms[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 64, 257};
    /* an array rather than k += 4 up to 9: GCC 12's -Wstringop-overflow (Release) then
     * no longer imagines a write at offset k = 9 of a k-byte buffer */
    const size_t ks[] = {1, 5, 9};
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++) {
        for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
            size_t m = ms[a], k = ks[ki], mk = m * k;
            double *X = malloc(mk * sizeof *X), *A = malloc(mk * sizeof *A);
            double *B = malloc(mk * sizeof *B), *s = malloc(m * sizeof *s);
            double *t = malloc(m * sizeof *t), *u = malloc(m * sizeof *u);
            double *w = malloc(k * sizeof *w), *lo = malloc(k * sizeof *lo);
            double *hi = malloc(k * sizeof *hi);
            unsigned char *b = malloc(k), *c = malloc(k);
            if (!X || !A || !B || !s || !t || !u || !w || !lo || !hi || !b || !c) {
                CHECK(0, "out of memory");
                free(X), free(A), free(B), free(s), free(t), free(u); /* free(NULL) is a no-op */
                free(w), free(lo), free(hi), free(b), free(c);
                return;
            }
            for (size_t j = 0; j < k; j++) {
                w[j] = 1.0 / (double)k;
                b[j] = (unsigned char)(next() & 1);
                c[j] = 0;
                lo[j] = -10.0;
                hi[j] = 10.0;
            }
            for (size_t i = 0; i < mk; i++) {
                X[i] = ((double)(next() >> 11) * 0x1p-53 - 0.5) * 20.0;
            }
            int ok = 1;
            ok &= dc_mcdm_wsm(X, m, k, b, w, DC_NORM_MINMAX, A, B, s) == DC_OK;
            for (size_t i = 0; i < m; i++) {
                double want = 0.0;
                for (size_t j = 0; j < k; j++) {
                    want += B[i + j * m];
                    ok &= A[i + j * m] >= 0.0 && A[i + j * m] <= 1.0;
                }
                ok &= near(s[i], want);
            }
            ok &= dc_mcdm_moora(X, m, k, b, w, A, B, s) == DC_OK;
            for (size_t j = 0; j < k; j++) {
                double ss = 0.0;
                for (size_t i = 0; i < m; i++) {
                    ss += A[i + j * m] * A[i + j * m];
                }
                ok &= near(ss, 1.0); /* unit columns */
            }
            ok &= dc_mcdm_vikor(X, m, k, b, w, 0.5, 1e-9, A, s, t, u) == DC_OK;
            for (size_t i = 0; i < m; i++) {
                ok &= t[i] <= s[i] + 1e-12 && u[i] >= 0.0 && u[i] <= 1.0;
            }
            ok &= dc_mcdm_spotis(X, m, k, b, w, lo, hi, A, B, s) == DC_OK;
            for (size_t i = 0; i < m; i++) {
                ok &= s[i] >= 0.0 && s[i] <= 1.0;
            }
            ok &= dc_mcdm_topsis(X, m, k, b, w, DC_NORM_VECTOR, A, B, s, t, u) == DC_OK;
            for (size_t i = 0; i < m; i++) {
                ok &= s[i] >= 0.0 && s[i] <= 1.0;
            }
            CHECK(ok, "kernels on %zu x %zu", m, k);
            free(X), free(A), free(B), free(s), free(t), free(u);
            free(w), free(lo), free(hi), free(b), free(c);
        }
    }
}

TEST_MAIN("test_decide",
          TEST(examples),
          TEST(random_vectors),
          TEST(kernel_arguments),
          TEST(kernel_examples),
          TEST(kernel_shapes))
