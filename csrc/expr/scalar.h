/* scalar.h -- the scalar meaning of the opcodes libm has no function for
 * (the fn column of opcodes.def).  The VM's kernels and the constant folder
 * both use these, so a folded constant and the same expression evaluated at
 * run time agree. */
#ifndef DC_SCALAR_H
#define DC_SCALAR_H

#include <math.h>

static inline double dc_add(double a, double b) { return a + b; }
static inline double dc_sub(double a, double b) { return a - b; }
static inline double dc_mul(double a, double b) { return a * b; }
static inline double dc_div(double a, double b) { return a / b; }
static inline double dc_neg(double a) { return -a; }
static inline double dc_lt(double a, double b) { return a < b ? 1.0 : 0.0; }
static inline double dc_le(double a, double b) { return a <= b ? 1.0 : 0.0; }
static inline double dc_gt(double a, double b) { return a > b ? 1.0 : 0.0; }
static inline double dc_ge(double a, double b) { return a >= b ? 1.0 : 0.0; }
static inline double dc_eq(double a, double b) { return a == b ? 1.0 : 0.0; }
static inline double dc_ne(double a, double b) { return a != b ? 1.0 : 0.0; }
/* & rather than &&: both sides are cheap, and the loop vectorizes */
static inline double dc_and(double a, double b) { return ((a != 0.0) & (b != 0.0)) ? 1.0 : 0.0; }
static inline double dc_or(double a, double b) { return ((a != 0.0) | (b != 0.0)) ? 1.0 : 0.0; }
static inline double dc_not(double a) { return a == 0.0 ? 1.0 : 0.0; }

static inline double dc_mod(double a, double b)
{
    /* Python / numpy remainder: the result takes the sign of b. */
    double r = fmod(a, b);
    if (b == 0.0)
        return r; /* NaN */
    if (r != 0.0) {
        if ((b < 0.0) != (r < 0.0))
            r += b;
    } else {
        r = copysign(0.0, b);
    }
    return r;
}

/* IEEE 754-2019 minimum / maximum: NaN propagates (the first NaN wins),
 * -0 < +0, and on other ties the first argument is the one returned. */
static inline int dc_min_first(double a, double b)
{
    return a < b || a != a || (a == b && (signbit(a) || !signbit(b)));
}
static inline int dc_max_first(double a, double b)
{
    return a > b || a != a || (a == b && (!signbit(a) || signbit(b)));
}
static inline double dc_min2(double a, double b) { return dc_min_first(a, b) ? a : b; }
static inline double dc_max2(double a, double b) { return dc_max_first(a, b) ? a : b; }
static inline double dc_truth(double a) { return a != 0.0 ? 1.0 : 0.0; }
static inline double dc_sqrtpow(double a)
{
    /* pow(a, 0.5): sqrt, but pow(-0, .5) = +0 and pow(-inf, .5) = +inf */
    return a == -INFINITY ? INFINITY : sqrt(a) + 0.0;
}
/* a ** k by squaring for an integer k in [2, 16]: the products dc_build_pow emits for a
 * constant exponent, in the same order (a square is formed only when a higher bit needs it) */
static inline double dc_pow_squaring(double a, unsigned k)
{
    double acc = 1.0, sq = a;
    int have = 0;
    while (k) {
        if (k & 1u) {
            acc = have ? acc * sq : sq;
            have = 1;
        }
        k >>= 1;
        if (k)
            sq = sq * sq;
    }
    return acc;
}
/* a ** b with an exponent known only at run time: the rewrites the compiler makes for a
 * constant one (dc_build_pow), so x**k gives the same bits whether k is written or read */
static inline double dc_pow(double a, double b)
{
    if (b == 1.0)
        return a;
    if (b == 0.5)
        return dc_sqrtpow(a);
    if (b == -1.0)
        return 1.0 / a;
    if (b >= 2.0 && b <= 16.0 && b == floor(b))
        return dc_pow_squaring(a, (unsigned)b);
    return pow(a, b);
}
static inline double dc_sign(double a)
{
    return a > 0.0 ? 1.0 : a < 0.0 ? -1.0 : a == 0.0 ? 0.0 : a;
}
static inline double dc_where(double c, double a, double b) { return c != 0.0 ? a : b; }
static inline double dc_clip(double v, double lo, double hi) { return dc_min2(dc_max2(v, lo), hi); }
/* which argument dc_clip returns: 0 v, 1 lo, 2 hi (max2(v, lo) picks v when
 * v >= lo or v is NaN, then min2 picks it unless hi is smaller) */
static inline int dc_clip_arg(double v, double lo, double hi)
{
    int pick_v = dc_max_first(v, lo);
    return dc_min_first(pick_v ? v : lo, hi) ? !pick_v : 2;
}

#endif
