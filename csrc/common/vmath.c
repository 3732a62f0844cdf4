/* vmath.c -- branch-free sin, cos, exp and log kernels that GCC vectorizes.
 *
 * Method.  The arrays are processed in blocks of BLOCK elements.  For each
 * block a straight-line loop (no calls, no branches, no table look-ups, only
 * double and 64-bit integer arithmetic, so -O3 vectorizes it with plain SSE2
 * and IEEE semantics) computes every lane and a lane mask that says "the
 * fast path does not cover this input"; masked lanes keep x in y.  When a
 * block has any, a scalar pass replaces just those with libm's value.  Each
 * lane reads x[i] before writing y[i], so y == x is fine.
 *
 *   sin, cos  On |x| (sin is odd, cos even; the sign of x goes back on at
 *             the end, which also keeps sin(-0) = -0).  n = nearest integer
 *             to |x| * 2/pi by the 1.5 * 2^52 shift trick, whose low mantissa
 *             bits are n mod 4, then the Cody-Waite reduction r = |x| - n pi/2
 *             with pi/2 = P1 + P2 + P3: P1 and P2 have 33 significant bits,
 *             so for |x| <= 2^19 (n < 2^19) n*P1 and n*P2 are exact, so is
 *             |x| - n*P1 (Sterbenz), and a fast two-sum keeps the rounding
 *             error of the next subtraction: r = rh + rl to within 2^-101.
 *             sin and cos of r in [-pi/4, pi/4] are odd and even polynomials
 *             (near-minimax fits made for this file with mpmath) with
 *             first-order corrections for rl; n mod 4 picks one and its sign
 *             with bit masks.  Flagged: |x| > 2^19, inf, NaN, and the rare x so close
 *             to a multiple of pi/2 (|r| < 2^-40 |x|) that r would need more
 *             bits of pi.
 *   exp       k = nearest integer to x / ln2 (shift trick), r = x - k ln2
 *             with ln2 split in a 32-bit head (k*head exact) and a tail,
 *             e^r = 1 + r + r^2/2 + r^3 P(r) with P of degree 8, then 2^k is
 *             added to the exponent field with 64-bit integer arithmetic.
 *             Flagged: |x| > 708 (overflow, subnormal results, inf) and NaN.
 *   log       x = 2^k m with m in [sqrt(1/2), sqrt(2)) by integer arithmetic
 *             on the representation, f = m - 1, s = f / (2 + f),
 *             log(m) = f - f^2/2 + s (f^2/2 + R(s^2)) (the atanh series with
 *             a fitted R), plus k ln2 in two parts.  Flagged: all but
 *             positive normal finite x.
 *
 * Accuracy.  The polynomials are within 2^-56 relative; the evaluation
 * orders keep the rounding errors of the small terms small, so the fast
 * paths stay below 1 ulp (0.5 for the last addition, the rest for the
 * rounding of the reduced argument and of the small terms; maxima measured
 * over 3 x 10^6 inputs per range: sin 0.89, cos 0.92, exp 0.87, log 0.85)
 * and flagged lanes are glibc's (< 1 ulp).  The contract is 4 ulp; test_vmath.c measures against
 * long double references and prints the maxima per function and range.
 *
 * Speed.  The polynomials are in Estrin's form: with Horner's long
 * dependency chains the loops were latency-bound.  Without -march, GCC
 * targets SSE2 (2 doubles per vector); with GCC on x86-64 Linux the block
 * loops are also compiled for x86-64-v3 (AVX2, 4 doubles) and x86-64-v4
 * (AVX-512, 8 doubles), chosen at load time.  In ISO C mode (-std=c11) GCC does not contract a*b + c into fused
 * multiply-adds, so every variant (and the scalar epilogues) gives
 * bit-identical results; contraction (-std=gnu11 on an FMA target) changes
 * some last bits but none of the exactness arguments above. */
#include "common/vmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define CLONES
#endif

enum { BLOCK = 256 };

/* Bits of a double and back (memcpy: defined behaviour, vectorized). */
static inline uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static inline double from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Adding then subtracting SHIFT rounds a double of magnitude < 2^51 to the
 * nearest integer; the sum's low mantissa bits are that integer. */
static const double SHIFT = 0x1.8p52;

/* ---- sin and cos --------------------------------------------------------- */

static const double TWO_OVER_PI = 0x1.45f306dc9c883p-1;
static const double PIO2_1 = 0x1.921fb544p+0;          /* 33 bits */
static const double PIO2_2 = 0x1.0b4611a6p-34;         /* 33 bits */
static const double PIO2_3 = 0x1.3198a2e037073p-69;    /* rest, 2^-123 off */
/* the bits of 2^19: for |x| <= 2^19, n < 2^19 and n*PIO2_1, n*PIO2_2 are exact */
static const uint64_t TRIG_MAX_BITS = 0x4120000000000000u;
static const double TRIG_TINY_R = 0x1p-40;

/* (sin(r) - r) / r^3 and (cos(r) - 1 + r^2/2) / r^4 as polynomials in
 * z = r^2 on [0, (1.0001 pi/4)^2] (a Lawson-weighted minimax fit for sin, a
 * Chebyshev fit for cos, both with mpmath); relative errors of sin and cos
 * 2^-56.3 and 2^-59.5 with the coefficients rounded to double. */
static const double S0 = -0x1.5555555555548p-3, S1 = 0x1.111111110f7cap-7,
                    S2 = -0x1.a01a019bfd156p-13, S3 = 0x1.71de356710621p-19,
                    S4 = -0x1.ae5e59f437f9fp-26, S5 = 0x1.5d8fa2c3fe00bp-33;
static const double C0 = 0x1.5555555555555p-5, C1 = -0x1.6c16c16c16966p-10,
                    C2 = 0x1.a01a019f4e867p-16, C3 = -0x1.27e4fa17a41b4p-22,
                    C4 = 0x1.1eeb68b109173p-29, C5 = -0x1.907d7aebd5e3dp-37;

/* Lane masks are all ones for "needs libm", else 0.  They are made from
 * sign bits with integer arithmetic only: SSE2 has no 64-bit compares, and
 * GCC neither vectorizes a double compare turned into a 64-bit integer for
 * SSE2 nor if-converts selects of computed values (-ftrapping-math). */
static inline uint64_t sign_mask(uint64_t u)
{
    return 0 - (u >> 63);
}

static const uint64_t SIGN_BIT = (uint64_t)1 << 63;

/* All ones iff |x| > the double whose bits are limit, or x is NaN: on the
 * representations, |x| and limit are below 2^63 and ordered like |x|. */
static inline uint64_t above_mask(double x, uint64_t limit)
{
    return sign_mask(limit - (bits(x) & ~SIGN_BIT));
}

/* m ? x : v, bitwise */
static inline double keep_x(uint64_t m, double v, double x)
{
    return from_bits((bits(v) & ~m) | (bits(x) & m));
}

/* One lane of the reduction of ax = |x| (sin is odd and cos even, so the
 * kernels work on |x|, which also gives sin(-0) = -0): ax = n*pi/2 + r with
 * r = rh + rl, |rl| < 2^-50, and q = n mod 4 (in the low bits); bad is the
 * lane mask. */
typedef struct reduced {
    double rh, rl;
    uint64_t q, bad;
} reduced;

static inline reduced reduce(double ax)
{
    reduced o;
    double kd = ax * TWO_OVER_PI + SHIFT;
    double n = kd - SHIFT;
    double a = ax - n * PIO2_1; /* exact */
    double w = n * PIO2_2;     /* exact */
    /* rh + e == a - w exactly: a fast two-sum, valid because either
     * |a| >= |w|, or |a - w| < 2|w| < 2^-13 and both are multiples of
     * 2^-66 (n != 0 means |x| >= 0.5), so that a - w is exact and e = 0. */
    o.rh = a - w;
    o.rl = ((a - o.rh) - w) - n * PIO2_3;
    o.q = bits(kd);
    /* |rh| < 2^-40 |x| only for n != 0 and x close to n pi/2, where r
     * would need more bits of pi than PIO2_1..3 give. */
    o.bad = above_mask(ax, TRIG_MAX_BITS) | sign_mask(bits(fabs(o.rh) - TRIG_TINY_R * ax));
    return o;
}

/* sin(rh + rl) for |rh + rl| <= pi/4 (a bit more), |rl| < 2^-50.
 * Polynomials in Estrin's form: short dependency chains, so that the
 * iterations of a loop overlap. */
static inline double sin_poly(double rh, double rl)
{
    double z = rh * rh, z2 = z * z;
    double p = (S0 + S1 * z) + z2 * (S2 + S3 * z) + (z2 * z2) * (S4 + S5 * z);
    /* sin(rh + rl) ~ rh + rh^3 p + rl (1 - rh^2/2) */
    return rh + (rl + ((z * rh) * p - (0.5 * z) * rl));
}

/* cos(rh + rl), same domain */
static inline double cos_poly(double rh, double rl)
{
    double z = rh * rh, z2 = z * z;
    double hz = 0.5 * z;
    double w = 1.0 - hz;
    double p = (C0 + C1 * z) + z2 * ((C2 + C3 * z) + z2 * (C4 + C5 * z));
    /* (1 - w) - hz is the rounding error of w, exactly; the correction for
     * rl is -rl sin(rh) ~ -rl (rh - rh^3/6) */
    double sr = rh - (z * rh) * (1.0 / 6.0);
    return w + (((1.0 - w) - hz) + (z2 * p - rl * sr));
}

/* The quadrant q picks sin or cos of r (odd q: the other one) and the sign
 * (q & 2: negate; sign: the sign bit to add), all on the representation. */
static inline double quadrant(double sr, double cr, uint64_t q, uint64_t sign)
{
    uint64_t m = 0 - (q & 1);
    uint64_t u = (bits(sr) & ~m) | (bits(cr) & m);
    return from_bits(u ^ ((q & 2) << 62) ^ sign);
}

CLONES static uint64_t sin_block(const double *x, double *y, uint64_t *restrict bad, size_t n)
{
    uint64_t any = 0;
    for (size_t i = 0; i < n; i++) {
        double xi = x[i];
        reduced r = reduce(fabs(xi));
        double s = sin_poly(r.rh, r.rl);
        double c = cos_poly(r.rh, r.rl);
        uint64_t m = r.bad;
        y[i] = keep_x(m, quadrant(s, c, r.q, bits(xi) & SIGN_BIT), xi);
        bad[i] = m;
        any |= m;
    }
    return any;
}

CLONES static uint64_t cos_block(const double *x, double *y, uint64_t *restrict bad, size_t n)
{
    uint64_t any = 0;
    for (size_t i = 0; i < n; i++) {
        double xi = x[i];
        reduced r = reduce(fabs(xi));
        double s = sin_poly(r.rh, r.rl);
        double c = cos_poly(r.rh, r.rl);
        uint64_t m = r.bad;
        y[i] = keep_x(m, quadrant(s, c, r.q + 1, 0), xi); /* cos(x) = sin(x + pi/2) */
        bad[i] = m;
        any |= m;
    }
    return any;
}

CLONES static uint64_t sincos_block(const double *x, double *ys, double *yc,
                                    uint64_t *restrict bad, size_t n)
{
    uint64_t any = 0;
    for (size_t i = 0; i < n; i++) {
        double xi = x[i];
        reduced r = reduce(fabs(xi));
        double s = sin_poly(r.rh, r.rl);
        double c = cos_poly(r.rh, r.rl);
        uint64_t m = r.bad;
        ys[i] = keep_x(m, quadrant(s, c, r.q, bits(xi) & SIGN_BIT), xi);
        yc[i] = keep_x(m, quadrant(s, c, r.q + 1, 0), xi);
        bad[i] = m;
        any |= m;
    }
    return any;
}

/* ---- exp ----------------------------------------------------------------- */

static const double INV_LN2 = 0x1.71547652b82fep+0;
static const double LN2_HI = 0x1.62e42ffp-1;           /* 32 bits: k*LN2_HI exact */
static const double LN2_LO = -0x1.718432a1b0e26p-35;   /* ln2 - LN2_HI, 2^-89 off */
/* fast path: |x| <= 708, where 2^k e^r is normal and finite */
static const uint64_t EXP_MAX_BITS = 0x4086200000000000u; /* 708.0 */

/* (e^r - 1 - r - r^2/2) / r^3 on [-1.0002 ln2/2, 1.0002 ln2/2] (weighted
 * minimax, mpmath): relative error of e^r below 2^-57.3. */
static const double E0 = 0x1.5555555555501p-3, E1 = 0x1.55555555531ffp-5,
                    E2 = 0x1.11111111288c9p-7, E3 = 0x1.6c16c17cc5ecbp-10,
                    E4 = 0x1.a01a011c0e4edp-13, E5 = 0x1.a019ab23d0174p-16,
                    E6 = 0x1.71df555eaff6ap-19, E7 = 0x1.289f94f27cb50p-22,
                    E8 = 0x1.ad20073f6531bp-26;

CLONES static uint64_t exp_block(const double *x, double *y, uint64_t *restrict bad, size_t n)
{
    uint64_t any = 0;
    for (size_t i = 0; i < n; i++) {
        double xi = x[i];
        double kd = xi * INV_LN2 + SHIFT;
        double k = kd - SHIFT;
        double hi = xi - k * LN2_HI; /* exact */
        double lo = k * LN2_LO;
        double r = hi - lo;
        double rc = (hi - r) - lo;   /* r + rc = hi - lo to 2^-106 */
        double z = r * r;
        double z2 = z * z;
        /* Estrin: short dependency chains, so that neighbouring iterations
         * overlap (Horner's chain made this loop latency-bound) */
        double p01 = E0 + E1 * r, p23 = E2 + E3 * r, p45 = E4 + E5 * r;
        double p67 = E6 + E7 * r;
        double p = (p01 + z * p23) + z2 * ((p45 + z * p67) + z2 * E8);
        /* e^(r+rc) ~ 1 + r + r^2 (1/2 + r p) + rc; the dropped rc r is
         * below 2^-56.5 */
        double tail = (0.5 * z + (z * r) * p) + rc;
        double er = 1.0 + (r + tail);
        /* times 2^k: k's low bits sit at the bottom of kd's mantissa, the
         * shift moves them into the exponent field (mod 2^64). */
        uint64_t m = above_mask(xi, EXP_MAX_BITS);
        y[i] = keep_x(m, from_bits(bits(er) + (bits(kd) << 52)), xi);
        bad[i] = m;
        any |= m;
    }
    return any;
}

/* ---- log ----------------------------------------------------------------- */

static const uint64_t SQRT_HALF_BITS = 0x3fe6a09e667f3bcdu; /* sqrt(1/2) */
static const uint64_t EXP_BIAS_1024 = (uint64_t)1024 << 52;
static const uint64_t TWO52_BITS = 0x4330000000000000u;  /* 2^52 */
static const double TWO52_PLUS_1024 = 0x1p52 + 1024.0;

/* log(1+f) = 2 atanh(s) = 2s + s z R(z), z = s^2 in [0, 1.0001 (3-2sqrt2)^2]:
 * R(z) = sum 2 z^j / (2j+3) as a Chebyshev fit (mpmath), relative error of
 * log(1+f) below 2^-57.5. */
static const double L0 = 0x1.5555555555558p-1, L1 = 0x1.99999999952d7p-2,
                    L2 = 0x1.2492492df281ap-2, L3 = 0x1.c71c62e3f11e6p-3,
                    L4 = 0x1.7462b51cb66b1p-3, L5 = 0x1.39fe51a7c18f9p-3,
                    L6 = 0x1.2b5900de53b32p-3;

CLONES static uint64_t log_block(const double *x, double *y, uint64_t *restrict bad, size_t n)
{
    uint64_t any = 0;
    for (size_t i = 0; i < n; i++) {
        double xi = x[i];
        uint64_t ix = bits(xi);
        /* t >> 52 = k + 1024 where x = 2^k m, m in [sqrt(1/2), sqrt(2));
         * the + 2^62 bias keeps it unsigned for every positive x. */
        uint64_t t = ix - SQRT_HALF_BITS + EXP_BIAS_1024;
        uint64_t kb = t >> 52;
        double k = from_bits(TWO52_BITS | kb) - TWO52_PLUS_1024;
        double mant = from_bits(ix - (kb << 52) + EXP_BIAS_1024);
        double f = mant - 1.0; /* exact */
        double hfsq = 0.5 * f * f;
        double s = f / (2.0 + f);
        double z = s * s;
        double z2 = z * z;
        double p = (L0 + L1 * z) + z2 * (L2 + L3 * z) + (z2 * z2) * ((L4 + L5 * z) + z2 * L6);
        double rz = z * p;
        /* k ln2 + f - hfsq + s (hfsq + R), small terms first */
        double v = k * LN2_HI - ((hfsq - (s * (hfsq + rz) + k * LN2_LO)) - f);
        /* not positive normal finite: ix - 2^52 >= 0x7fe0000000000000 */
        uint64_t u = ix - ((uint64_t)1 << 52);
        uint64_t m = sign_mask(u | (u + ((uint64_t)1 << 53)));
        y[i] = keep_x(m, v, xi);
        bad[i] = m;
        any |= m;
    }
    return any;
}

/* ---- drivers ------------------------------------------------------------- */

typedef uint64_t (*block_fn)(const double *, double *, uint64_t *, size_t);

/* y[0..n) = f(x[0..n)) block by block.  The kernel leaves x in the lanes it
 * flags, so the libm pass works in y alone, also when y == x. */
static void run(block_fn kernel, double (*libm)(double), const double *x, double *y,
                size_t n)
{
    uint64_t bad[BLOCK];
    for (size_t i = 0; i < n; i += BLOCK) {
        size_t m = n - i < BLOCK ? n - i : BLOCK;
        if (kernel(x + i, y + i, bad, m)) {
            for (size_t j = 0; j < m; j++)
                if (bad[j])
                    y[i + j] = libm(y[i + j]);
        }
    }
}

void dc_vmath_sin(const double *x, double *y, size_t n)
{
    run(sin_block, sin, x, y, n);
}

void dc_vmath_cos(const double *x, double *y, size_t n)
{
    run(cos_block, cos, x, y, n);
}

void dc_vmath_exp(const double *x, double *y, size_t n)
{
    run(exp_block, exp, x, y, n);
}

void dc_vmath_log(const double *x, double *y, size_t n)
{
    run(log_block, log, x, y, n);
}

void dc_vmath_sincos(const double *x, double *s, double *c, size_t n)
{
    uint64_t bad[BLOCK];
    for (size_t i = 0; i < n; i += BLOCK) {
        size_t m = n - i < BLOCK ? n - i : BLOCK;
        if (sincos_block(x + i, s + i, c + i, bad, m)) {
            for (size_t j = 0; j < m; j++) {
                if (bad[j]) {
                    double v = s[i + j]; /* == x[i + j], also when c == x */
                    s[i + j] = sin(v);
                    c[i + j] = cos(v);
                }
            }
        }
    }
}
