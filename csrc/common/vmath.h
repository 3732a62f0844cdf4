/* vmath.h -- vectorizable elementwise sin, cos, exp and log over arrays.
 *
 * Each kernel maps n doubles x[0..n) to y[0..n).  The output may be the
 * input (y == x); any other overlap is not allowed.  No allocation, no
 * global mutable state: the kernels are safe to call from any thread.
 *
 * Accuracy: every result is within 4 ulp of the correctly rounded value over
 * the whole double range (observed maxima below 0.9 ulp, see test_vmath.c),
 * and the special values follow C99 Annex F as glibc does: NaN gives NaN,
 * sin/cos(+-inf) = NaN, sin(+-0) = +-0, exp(-inf) = 0, exp(+inf) = +inf,
 * exp overflows to +inf, log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf.
 * The floating-point exception flags raised are unspecified.
 *
 * Results are the same on every x86-64 CPU: the AVX2 or AVX-512 variant
 * selected at run time (GCC on Linux) does the same operations in the same order, without
 * fused multiply-adds when compiled as ISO C (-std=c11). */
#ifndef DC_VMATH_H
#define DC_VMATH_H

#include <stddef.h>

void dc_vmath_sin(const double *x, double *y, size_t n);
void dc_vmath_cos(const double *x, double *y, size_t n);
/* s[i] = sin(x[i]) and c[i] = cos(x[i]); s, c and x may be the same array
 * only as s == x or c == x, and s != c. */
void dc_vmath_sincos(const double *x, double *s, double *c, size_t n);
void dc_vmath_exp(const double *x, double *y, size_t n);
void dc_vmath_log(const double *x, double *y, size_t n);

#endif
