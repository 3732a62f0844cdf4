/* test_decide.c -- competition ranks (csrc/decide/rank.c): worked examples of
 * each rule, then random score vectors (ties, near-ties, NaN, infinities,
 * signed zeros; lengths across the insertion-run and merge boundaries) against
 * a plain quadratic reference.  Prints "test_decide: N passed, M failed" and
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

int main(void)
{
    examples();
    random_vectors();
    printf("test_decide: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
