/* vmath.c -- branch-free sin, cos, exp and log kernels that GCC vectorizes.
 *
 * Method.  The arrays are processed in blocks of BLOCK elements.  For each
 * block a straight-line loop (no calls, no branches, no table look-ups, only
 * double and 64-bit integer arithmetic, so -O3 vectorizes it with plain SSE2
 * and IEEE semantics) computes every lane into a local buffer together with
 * a flag per lane that says "the fast path does not cover this input".  A
 * second, scalar pass recomputes just the flagged lanes with libm, then the
 * buffer is copied out (which is what makes y == x safe).
 *
 *   sin, cos  n = nearest integer to x * 2/pi (by the 1.5 * 2^52 shift
 *             trick, whose low mantissa bits are n mod 4), then the
 *             Cody-Waite reduction r = x - n * pi/2 with pi/2 = P1 + P2 + P3:
 *             P1 and P2 have 33 significant bits, so for |n| < 2^20 the
 *             products n*P1 and n*P2 are exact, x - n*P1 is exact (Sterbenz)
 *             and the subtraction of n*P2 is made exact with TwoSum.  The
 *             result is a double-double rh + rl with an absolute error below
 *             2^-96.  sin and cos of r in [-pi/4, pi/4] are odd and even
 *             polynomials (Chebyshev fits made for this file with mpmath) plus
 *             first-order corrections in rl; n mod 4 picks one and its sign
 *             with bit masks.  Fast path: |x| <= 2^20 and |r| >= 2^-40 (or
 *             |x| < 0.5); flagged: larger or non-finite x and the rare x very
 *             close to a nonzero multiple of pi/2, whose r would need more
 *             bits of pi.
 *   exp       k = nearest integer to x / ln2 (shift trick), r = x - k*ln2
 *             with ln2 split in a 32-bit head (k*head exact) and a tail,
 *             e^r = 1 + r + r^2 * P(r) of degree 12, then 2^k is added to
 *             the exponent field with 64-bit integer arithmetic.  Fast path:
 *             -708 <= x <= 709 (normal results); flagged: overflow, the
 *             subnormal range, infinities and NaN.
 *   log       x = 2^k * m with m in [sqrt(1/2), sqrt(2)) by integer
 *             arithmetic on the representation, f = m - 1, s = f / (2 + f),
 *             log(m) = f - f^2/2 + s * (f^2/2 + R(s^2)) (the atanh series,
 *             minimax R), plus k * ln2 in two parts.  Fast path: normal
 *             positive finite x; flagged: zero, negative, subnormal, inf, NaN.
 *
 * Accuracy.  Polynomial errors are below 2^-57 relative and the evaluation
 * orders keep the rounding errors of the small terms small, so each fast
 * path is about 1 ulp (0.5 ulp for the last addition, the rest for the
 * rounding of the reduced argument and of the small terms); flagged lanes are
 * libm (glibc: < 1 ulp).  The contract is 4 ulp; test_vmath.c measures it
 * against long double references and prints the observed maxima.
 *
 * Speed.  Without -march, GCC targets SSE2 (2 doubles per vector); on
 * x86-64 Linux with GCC the block loops are also compiled for x86-64-v3
 * (AVX2, 4 doubles) and chosen at load time.  ISO C mode keeps GCC from
 * contracting a*b + c into fused multiply-adds, so both variants give
 * bit-identical results. */
#include "common/vmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLONES __attribute__((target_clones("default", "arch=x86-64-v3")))
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
static const double TRIG_MAX = 0x1p19;  /* |n| < 2^19: n*PIO2_1, n*PIO2_2 exact */
static const double TRIG_TINY_R = 0x1p-40;

/* (sin(r) - r) / r^3 and (cos(r) - 1 + r^2/2) / r^4 as polynomials in
 * z = r^2 on [0, (1.0001 pi/4)^2]; relative errors 2^-57.1 and 2^-59.5. */
static const double S0 = -0x1.5555555555555p-3, S1 = 0x1.1111111111110p-7,
                    S2 = -0x1.a01a01a019936p-13, S3 = 0x1.71de3a54605eep-19,
                    S4 = -0x1.ae64541266378p-26, S5 = 0x1.61217ec01749dp-33,
                    S6 = -0x1.ab17a79237a19p-41;
static const double C0 = 0x1.5555555555555p-5, C1 = -0x1.6c16c16c16966p-10,
                    C2 = 0x1.a01a019f4e867p-16, C3 = -0x1.27e4fa17a41b4p-22,
                    C4 = 0x1.1eeb68b109173p-29, C5 = -0x1.907d7aebd5e3dp-37;

/* 0 when c holds, else the bits of 1.0.  The select is on doubles, which
 * SSE2 can vectorize (it has no 64-bit integer compares). */
static inline uint64_t flag_unless(int c)
{
    return bits(c ? 0.0 : 1.0);
}

/* One lane of the reduction of ax = |x| (sin is odd and cos even, so the
 * kernels work on |x|, which also gives sin(-0) = -0): ax = n*pi/2 + rh + rl
 * with |rl| <= ulp(rh)/2 and q = n mod 4 (in the low bits).  The lane
 * needs libm unless in_range (false for NaN) and r_ok. */
typedef struct reduced {
    double rh, rl;
    uint64_t q;
    int in_range, r_ok;
} reduced;

static inline reduced reduce(double ax)
{
    reduced o;
    double kd = ax * TWO_OVER_PI + SHIFT;
    double n = kd - SHIFT;
    double a = ax - n * PIO2_1; /* exact */
    double w = n * PIO2_2;     /* exact */
    double t = n * PIO2_3;
    /* s + e == a - w exactly: a fast two-sum, valid because either
     * |a| >= |w|, or |a - w| < 2|w| < 2^-13 and both are multiples of
     * 2^-66 (n != 0 means |x| >= 0.5), so that a - w is exact and e = 0. */
    double s = a - w;
    double e = (a - s) - w;
    double l = e - t;
    o.rh = s + l; /* renormalize */
    o.rl = l - (o.rh - s);
    o.q = bits(kd);
    /* |rh| < 2^-40 |x| only for n != 0 and x close to n pi/2, where r
     * would need more bits of pi than PIO2_1..3 give. */
    o.in_range = ax <= TRIG_MAX;
    o.r_ok = fabs(o.rh) >= TRIG_TINY_R * ax;
    return o;
}

/* sin(rh + rl) for |rh + rl| <= pi/4 (a bit more), |rl| <= ulp(rh)/2.
 * Polynomials in Estrin's form: short dependency chains, so that the
 * iterations of a loop overlap. */
static inline double sin_poly(double rh, double rl)
{
    double z = rh * rh, z2 = z * z;
    double p = (S0 + S1 * z) + z2 * (S2 + S3 * z) + (z2 * z2) * ((S4 + S5 * z) + z2 * S6);
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
     * rl is -rl sin(rh) ~ -rl rh */
    return w + (((1.0 - w) - hz) + (z2 * p - rh * rl));
}

/* The quadrant q picks sin or cos of r (odd q: the other one) and the sign
 * (q & 2: negate; sign: the sign bit to add), all on the representation. */
static inline double quadrant(double sr, double cr, uint64_t q, uint64_t sign)
{
    uint64_t m = 0 - (q & 1);
    uint64_t u = (bits(sr) & ~m) | (bits(cr) & m);
    return from_bits(u ^ ((q & 2) << 62) ^ sign);
}

static const uint64_t SIGN_BIT = (uint64_t)1 << 63;

/* Flagged lanes keep x in y (and get nonzero bad[i]) for the libm pass.
 * Two single-compare selects, not one on c1 & c2: SSE2 vectorizes these. */
#define TRIG_STORE(dst, val, r, xi)                                                     \
    do {                                                                                \
        double v_ = (r).r_ok ? (val) : (xi);                                            \
        (dst) = (r).in_range ? v_ : (xi);                                               \
    } while (0)

static inline uint64_t trig_flag(reduced r)
{
    return flag_unless(r.in_range) | flag_unless(r.r_ok);
}

CLONES static uint64_t sin_block(const double *x, double *y, uint64_t *restrict bad, size_t n)
{
    uint64_t any = 0;
    for (size_t i = 0; i < n; i++) {
        double xi = x[i];
        reduced r = reduce(fabs(xi));
        double s = sin_poly(r.rh, r.rl);
        double c = cos_poly(r.rh, r.rl);
        TRIG_STORE(y[i], quadrant(s, c, r.q, bits(xi) & SIGN_BIT), r, xi);
        bad[i] = trig_flag(r);
        any |= bad[i];
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
        /* cos(x) = sin(x + pi/2) */
        TRIG_STORE(y[i], quadrant(s, c, r.q + 1, 0), r, xi);
        bad[i] = trig_flag(r);
        any |= bad[i];
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
        TRIG_STORE(ys[i], quadrant(s, c, r.q, bits(xi) & SIGN_BIT), r, xi);
        TRIG_STORE(yc[i], quadrant(s, c, r.q + 1, 0), r, xi);
        bad[i] = trig_flag(r);
        any |= bad[i];
    }
    return any;
}

/* ---- exp ----------------------------------------------------------------- */

static const double INV_LN2 = 0x1.71547652b82fep+0;
static const double LN2_HI = 0x1.62e42ffp-1;           /* 32 bits: k*LN2_HI exact */
static const double LN2_LO = -0x1.718432a1b0e26p-35;   /* ln2 - LN2_HI, 2^-89 off */
/* fast path: -708 <= x <= 709, where 2^k e^r is normal and finite */
static const double EXP_MID = 0.5, EXP_HALF = 708.5;

/* (e^r - 1 - r - r^2/2) / r^3 on [-1.0002 ln2/2, 1.0002 ln2/2]: relative
 * error of e^r below 2^-59.8. */
static const double E0 = 0x1.5555555555556p-3, E1 = 0x1.5555555555555p-5,
                    E2 = 0x1.11111111109b2p-7, E3 = 0x1.6c16c16c167e0p-10,
                    E4 = 0x1.a01a01a7c54aep-13, E5 = 0x1.a01a01a47bb19p-16,
                    E6 = 0x1.71de0da9d06acp-19, E7 = 0x1.27e4e1f1e809dp-22,
                    E8 = 0x1.af38b4925be09p-26, E9 = 0x1.1f66e5b718f3ep-29;

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
        double p67 = E6 + E7 * r, p89 = E8 + E9 * r;
        double p03 = p01 + z * p23, p47 = p45 + z * p67;
        double p = p03 + z2 * (p47 + z2 * p89);
        /* e^(r+rc) ~ 1 + r + rc (1 + r) + r^2/2 + r^3 p */
        double tail = (0.5 * z + (z * r) * p) + (rc + rc * r);
        double er = 1.0 + (r + tail);
        /* times 2^k: k's low bits sit at the bottom of kd's mantissa, the
         * shift moves them into the exponent field (mod 2^64). */
        int ok = fabs(xi - EXP_MID) <= EXP_HALF;
        y[i] = ok ? from_bits(bits(er) + (bits(kd) << 52)) : xi;
        bad[i] = flag_unless(ok);
        any |= bad[i];
    }
    return any;
}

/* ---- log ----------------------------------------------------------------- */

static const uint64_t SQRT_HALF_BITS = 0x3fe6a09e667f3bcdu; /* sqrt(1/2) */
static const uint64_t EXP_BIAS_1024 = (uint64_t)1024 << 52;
static const uint64_t TWO52_BITS = 0x4330000000000000u;  /* 2^52 */
static const double TWO52_PLUS_1024 = 0x1p52 + 1024.0;

/* log(1+f) = 2 atanh(s) = 2s + s z R(z), z = s^2 in [0, 1.0001 (3-2sqrt2)^2]:
 * R(z) = sum 2 z^j / (2j+3) as a minimax polynomial, relative error of
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
        double m = from_bits(ix - (kb << 52) + EXP_BIAS_1024);
        double f = m - 1.0;  /* exact */
        double hfsq = 0.5 * f * f;
        double s = f / (2.0 + f);
        double z = s * s;
        double z2 = z * z;
        double p = (L0 + L1 * z) + z2 * (L2 + L3 * z) + (z2 * z2) * ((L4 + L5 * z) + z2 * L6);
        double rz = z * p;
        /* k ln2 + f - hfsq + s (hfsq + R), small terms first */
        double v = k * LN2_HI - ((hfsq - (s * (hfsq + rz) + k * LN2_LO)) - f);
        int ok_lo = xi >= 0x1p-1022, ok_hi = xi <= 0x1.fffffffffffffp+1023;
        v = ok_lo ? v : xi;
        y[i] = ok_hi ? v : xi;
        bad[i] = flag_unless(ok_lo) | flag_unless(ok_hi);
        any |= bad[i];
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
