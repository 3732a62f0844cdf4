/*
 * kernels.c -- one-pass kernels of the multi-criteria methods (DESIGN.md §4,
 * docs/decisions.md "Limits and cost").
 *
 * Each kernel reads an m x k column-major matrix (option i, criterion j at
 * X[i + j*m]), benefit flags (1 = maximize) and weights, and writes the result
 * and the intermediate arrays into caller-owned buffers (column-major m x k, or
 * m).  No allocation, no global state; DC_ERR_ARGUMENT for NULL buffers, zero
 * sizes, m*k overflowing size_t or an unknown normalization.
 *
 * These are the only implementation of the normalizations, TOPSIS, WSM, MOORA,
 * VIKOR and SPOTIS: decido._mcdm_methods calls them for every matrix size (the
 * other methods are NumPy there).  tests/decide compares their answers with
 * pymcdm and scikit-criteria; csrc/tests/test_decide.c with worked examples
 * and plain formulas.  Compiled with -ffp-contract=off, so that an answer does
 * not depend on the compiler's choice of fused multiply-adds.
 */
#include "decido.h"

#include <math.h>

/* m x k buffers must be addressable: m*k fits in size_t. */
static int bad_shape(size_t m, size_t k)
{
    return m == 0 || k == 0 || m > SIZE_MAX / k;
}

/* Divisor with zeros replaced by 1: NumPy's ``div + (div == 0)``. */
static double safe(double div)
{
    return div + (div == 0.0 ? 1.0 : 0.0);
}

/* Column minimum and maximum, NaN-propagating (inputs are finite in practice). */
static void column_range(const double *x, size_t m, double *lo, double *hi)
{
    double a = x[0], b = x[0];
    for (size_t i = 1; i < m; i++) {
        double v = x[i];
        if (isnan(a)) {
            break;
        }
        if (isnan(v)) {
            a = b = v;
            break;
        }
        if (v < a) {
            a = v;
        }
        if (v > b) {
            b = v;
        }
    }
    *lo = a;
    *hi = b;
}

/* Euclidean norm of a column, scaled by its largest magnitude so that the squares
 * neither overflow nor underflow. */
static double column_norm(const double *x, size_t m)
{
    double top = 0.0, sum = 0.0;
    for (size_t i = 0; i < m; i++) {
        double a = fabs(x[i]);
        top = a > top ? a : top;
    }
    if (top == 0.0 || !isfinite(top)) {
        return top;
    }
    for (size_t i = 0; i < m; i++) {
        double r = x[i] / top;
        sum += r * r;
    }
    return top * sqrt(sum);
}

/* out[i] = +0.0 + A[i,0] + A[i,1] + ... (left to right). */
static void row_sums(const double *A, size_t m, size_t k, double *out)
{
    for (size_t i = 0; i < m; i++) {
        out[i] = 0.0;
    }
    for (size_t j = 0; j < k; j++) {
        const double *a = A + j * m;
        for (size_t i = 0; i < m; i++) {
            out[i] = out[i] + a[i];
        }
    }
}

/* One column of R: the normalization of x (docs/decisions.md "Normalizations"). A
 * divisor that is zero (min-max span, vector norm) makes every option 1. */
static void normalize_column(const double *x, size_t m, int benefit, dc_normalization norm,
                             double *r)
{
    double lo, hi;
    column_range(x, m, &lo, &hi);
    switch (norm) {
    case DC_NORM_MINMAX: {
        double span = hi - lo;
        for (size_t i = 0; i < m; i++) {
            r[i] = span == 0.0 ? 1.0 : (benefit ? x[i] - lo : hi - x[i]) / span;
        }
        break;
    }
    case DC_NORM_VECTOR: {
        double div = column_norm(x, m);
        for (size_t i = 0; i < m; i++) {
            r[i] = div == 0.0 ? 1.0 : benefit ? x[i] / div : 1.0 - x[i] / div;
        }
        break;
    }
    case DC_NORM_SUM: {
        double total = 0.0;
        for (size_t i = 0; i < m; i++) {
            total += benefit ? x[i] : 1.0 / x[i];
        }
        for (size_t i = 0; i < m; i++) {
            r[i] = (benefit ? x[i] : 1.0 / x[i]) / total;
        }
        break;
    }
    case DC_NORM_MAX:
        for (size_t i = 0; i < m; i++) {
            r[i] = benefit ? x[i] / hi : 1.0 - x[i] / hi;
        }
        break;
    case DC_NORM_LINEAR:
        for (size_t i = 0; i < m; i++) {
            r[i] = benefit ? x[i] / hi : lo / x[i];
        }
        break;
    }
}

static int bad_norm(dc_normalization norm)
{
    return norm != DC_NORM_MINMAX && norm != DC_NORM_VECTOR && norm != DC_NORM_SUM &&
           norm != DC_NORM_MAX && norm != DC_NORM_LINEAR;
}

dc_status dc_mcdm_normalize(const double *X, size_t m, size_t k, const unsigned char *benefit,
                            dc_normalization norm, double *R)
{
    if (bad_shape(m, k) || bad_norm(norm) || !X || !benefit || !R) {
        return DC_ERR_ARGUMENT;
    }
    for (size_t j = 0; j < k; j++) {
        normalize_column(X + j * m, m, benefit[j], norm, R + j * m);
    }
    return DC_OK;
}

dc_status dc_mcdm_topsis(const double *X, size_t m, size_t k, const unsigned char *benefit,
                         const double *w, dc_normalization norm, double *R, double *V,
                         double *score, double *d_best, double *d_worst)
{
    if (bad_shape(m, k) || bad_norm(norm) || !X || !benefit || !w || !R || !V || !score ||
        !d_best || !d_worst) {
        return DC_ERR_ARGUMENT;
    }
    for (size_t i = 0; i < m; i++) {
        d_best[i] = 0.0;
        d_worst[i] = 0.0;
    }
    for (size_t j = 0; j < k; j++) {
        double *r = R + j * m, *v = V + j * m;
        normalize_column(X + j * m, m, benefit[j], norm, r);
        for (size_t i = 0; i < m; i++) {
            v[i] = r[i] * w[j];
        }
        /* every normalization makes larger better: the ideal is the column max */
        double hi, lo;
        column_range(v, m, &lo, &hi);
        for (size_t i = 0; i < m; i++) {
            double d = v[i] - hi;
            d_best[i] += d * d;
            d = v[i] - lo;
            d_worst[i] += d * d;
        }
    }
    for (size_t i = 0; i < m; i++) {
        d_best[i] = sqrt(d_best[i]);
        d_worst[i] = sqrt(d_worst[i]);
        double denom = d_best[i] + d_worst[i];
        score[i] = denom > 0.0 ? d_worst[i] / denom : 1.0;
    }
    return DC_OK;
}

dc_status dc_mcdm_wsm(const double *X, size_t m, size_t k, const unsigned char *benefit,
                      const double *w, dc_normalization norm, double *R, double *C,
                      double *score)
{
    if (bad_shape(m, k) || bad_norm(norm) || !X || !benefit || !w || !R || !C || !score) {
        return DC_ERR_ARGUMENT;
    }
    for (size_t j = 0; j < k; j++) {
        double *r = R + j * m, *c = C + j * m;
        normalize_column(X + j * m, m, benefit[j], norm, r);
        for (size_t i = 0; i < m; i++) {
            c[i] = r[i] * w[j];
        }
    }
    row_sums(C, m, k, score);
    return DC_OK;
}

dc_status dc_mcdm_moora(const double *X, size_t m, size_t k, const unsigned char *benefit,
                        const double *w, double *R, double *C, double *score)
{
    if (bad_shape(m, k) || !X || !benefit || !w || !R || !C || !score) {
        return DC_ERR_ARGUMENT;
    }
    for (size_t j = 0; j < k; j++) {
        const double *x = X + j * m;
        double *r = R + j * m, *c = C + j * m;
        double div = safe(column_norm(x, m));
        double wj = benefit[j] ? w[j] : -w[j];
        for (size_t i = 0; i < m; i++) {
            r[i] = x[i] / div;
            c[i] = r[i] * wj;
        }
    }
    row_sums(C, m, k, score);
    return DC_OK;
}

/* Whether a spread hi - lo counts as zero: at most rel_tol times the larger of
 * |lo| and |hi| (values that equal ones would tie when ranked; a spread of a
 * few rounding errors would otherwise turn a 0/0 term into 0 or 1). */
static int no_spread(double lo, double hi, double rel_tol)
{
    double span = hi - lo, scale = fmax(fabs(lo), fabs(hi));
    return !(span > 0.0) || span <= rel_tol * scale;
}

/* _spread: (s - min) / (max - min), or +0.0 everywhere when that spread counts as
 * zero (no_spread). */
static void spread(const double *s, size_t m, double rel_tol, double *out)
{
    double lo, hi;
    column_range(s, m, &lo, &hi);
    int flat = no_spread(lo, hi, rel_tol);
    double span = hi - lo;
    for (size_t i = 0; i < m; i++) {
        out[i] = flat ? 0.0 : (s[i] - lo) / span;
    }
}

dc_status dc_mcdm_vikor(const double *X, size_t m, size_t k, const unsigned char *benefit,
                        const double *w, double v, double rel_tol, double *T, double *S,
                        double *Rmax, double *Q)
{
    if (bad_shape(m, k) || !X || !benefit || !w || !T || !S || !Rmax || !Q) {
        return DC_ERR_ARGUMENT;
    }
    for (size_t j = 0; j < k; j++) {
        const double *x = X + j * m;
        double *t = T + j * m;
        double lo, hi;
        column_range(x, m, &lo, &hi);
        /* best - x only enters |.|, and a nonzero span does not see a zero's sign */
        double best = benefit[j] ? hi : lo, span = hi - lo, div = safe(span);
        for (size_t i = 0; i < m; i++) {
            t[i] = span == 0.0 ? 0.0 : w[j] * fabs(best - x[i]) / div;
        }
    }
    row_sums(T, m, k, S);
    /* row maxima, NaN-propagating; T has no -0.0 (w >= 0, |.| >= 0), so no zero ties */
    for (size_t i = 0; i < m; i++) {
        Rmax[i] = T[i];
    }
    for (size_t j = 1; j < k; j++) {
        const double *t = T + j * m;
        for (size_t i = 0; i < m; i++) {
            if (!isnan(Rmax[i]) && (isnan(t[i]) || t[i] > Rmax[i])) {
                Rmax[i] = t[i];
            }
        }
    }
    /* Q = v S~ + (1 - v) R~ (the spreads of S and R); Q holds S~ first */
    spread(S, m, rel_tol, Q);
    double u = 1.0 - v;
    double lo, hi;
    column_range(Rmax, m, &lo, &hi);
    int flat = no_spread(lo, hi, rel_tol);
    double span = hi - lo;
    for (size_t i = 0; i < m; i++) {
        double r = flat ? 0.0 : (Rmax[i] - lo) / span;
        Q[i] = v * Q[i] + u * r;
    }
    return DC_OK;
}

dc_status dc_mcdm_spotis(const double *X, size_t m, size_t k, const unsigned char *benefit,
                         const double *w, const double *lower, const double *upper, double *D,
                         double *C, double *score)
{
    if (bad_shape(m, k) || !X || !benefit || !w || !lower || !upper || !D || !C || !score) {
        return DC_ERR_ARGUMENT;
    }
    for (size_t j = 0; j < k; j++) {
        const double *x = X + j * m;
        double *d = D + j * m, *c = C + j * m;
        double span = upper[j] - lower[j], div = safe(span);
        double ideal = benefit[j] ? upper[j] : lower[j];
        for (size_t i = 0; i < m; i++) {
            d[i] = span == 0.0 ? 0.0 : fabs(x[i] - ideal) / div;
            c[i] = d[i] * w[j];
        }
    }
    row_sums(C, m, k, score);
    return DC_OK;
}
