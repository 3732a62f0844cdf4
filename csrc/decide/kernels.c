/*
 * kernels.c -- one-pass scoring kernels of the multi-criteria methods (DESIGN.md
 * §4, docs/decisions.md "Limits and cost").
 *
 * Each kernel reads an m x k column-major matrix X (option i, criterion j at
 * X[i + j*m]), benefit flags (1 = maximize) and weights, and writes the score
 * and the intermediate arrays into caller-owned buffers (column-major m x k, or
 * m).  No allocation, no global state; DC_ERR_ARGUMENT for NULL buffers, zero
 * sizes or m*k overflowing size_t.
 *
 * The kernels are written to give the same bits as decido._mcdm_methods' NumPy
 * code: each element goes through the same IEEE operations in the same order
 * (this file is compiled with -ffp-contract=off: no fused multiply-add), and
 * the reductions follow NumPy's order on a Fortran-ordered matrix:
 *   - a row sum over criteria (``A.sum(axis=1)``) starts from +0.0 and adds
 *     the columns left to right;
 *   - a column sum of squares (``numpy.einsum("ij,ij->j", X, X)``) runs two
 *     lanes that take every other element, in blocks of 8 (see column_sumsq);
 *   - min and max propagate NaN.  Which of +0.0 and -0.0 NumPy returns for a
 *     tie between them is not specified, so dc_mcdm_wsm_minmax reports such a
 *     tie (where it changes the result) instead of guessing.
 * tests/decide/test_decide_fast.py holds every kernel to the NumPy path byte
 * for byte; the Python side only calls a kernel where that is tested.
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

/* Whether the column holds both +0.0 and -0.0. */
static int mixed_zeros(const double *x, size_t m)
{
    int pos = 0, neg = 0;
    for (size_t i = 0; i < m; i++) {
        if (x[i] == 0.0) {
            if (signbit(x[i])) {
                neg = 1;
            } else {
                pos = 1;
            }
        }
    }
    return pos && neg;
}

/* sum(x[i]^2) in numpy.einsum's order for a contiguous column: two lanes, lane 0
 * fed x[0], x[2], ..., lane 1 x[1], x[3], ...; each block of 8 enters a lane
 * as 6, 4, 2, 0 (7, 5, 3, 1) onto the running value; the tail one pair at a
 * time; then +0.0 + (lane 0 + lane 1). */
static double column_sumsq(const double *x, size_t m)
{
    double l0 = 0.0, l1 = 0.0;
    size_t i = 0;
    while (m - i >= 8) {
        l0 = x[i] * x[i] + (x[i + 2] * x[i + 2] + (x[i + 4] * x[i + 4] + (x[i + 6] * x[i + 6] + l0)));
        l1 = x[i + 1] * x[i + 1] +
             (x[i + 3] * x[i + 3] + (x[i + 5] * x[i + 5] + (x[i + 7] * x[i + 7] + l1)));
        i += 8;
    }
    while (i < m) {
        l0 = x[i] * x[i] + l0;
        if (i + 1 < m) {
            l1 = x[i + 1] * x[i + 1] + l1;
        }
        i += 2;
    }
    return 0.0 + (l0 + l1);
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

dc_status dc_mcdm_topsis_vector(const double *X, size_t m, size_t k, const unsigned char *benefit,
                                const double *w, const unsigned char *constant, double *R,
                                double *V, double *score, double *d_best, double *d_worst)
{
    if (bad_shape(m, k) || !X || !benefit || !w || !R || !V || !score || !d_best || !d_worst) {
        return DC_ERR_ARGUMENT;
    }
    for (size_t i = 0; i < m; i++) {
        d_best[i] = 0.0;
        d_worst[i] = 0.0;
    }
    for (size_t j = 0; j < k; j++) {
        const double *x = X + j * m;
        double *r = R + j * m, *v = V + j * m;
        double div = safe(sqrt(column_sumsq(x, m)));
        for (size_t i = 0; i < m; i++) {
            r[i] = x[i] / div;
            if (!benefit[j]) {
                r[i] = 1.0 - r[i];
            }
            if (constant && constant[j]) {
                r[i] = 1.0;
            }
            v[i] = r[i] * w[j];
        }
        /* max and min only enter squared differences: a zero's sign cannot matter */
        double hi, lo;
        column_range(v, m, &lo, &hi);
        for (size_t i = 0; i < m; i++) {
            double d = v[i] - hi;
            d_best[i] = d * d + d_best[i];
            d = v[i] - lo;
            d_worst[i] = d * d + d_worst[i];
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

dc_status dc_mcdm_wsm_minmax(const double *X, size_t m, size_t k, const unsigned char *benefit,
                             const double *w, const unsigned char *constant, double *R,
                             double *C, double *score, int *zero_tie)
{
    if (bad_shape(m, k) || !X || !benefit || !w || !R || !C || !score || !zero_tie) {
        return DC_ERR_ARGUMENT;
    }
    *zero_tie = 0;
    for (size_t j = 0; j < k; j++) {
        const double *x = X + j * m;
        double *r = R + j * m, *c = C + j * m;
        int fixed = constant && constant[j];
        double lo, hi;
        column_range(x, m, &lo, &hi);
        /* the sign of a zero extreme reaches x - lo (benefit) or hi - x (cost) */
        double extreme = benefit[j] ? lo : hi;
        if (!fixed && extreme == 0.0 && mixed_zeros(x, m)) {
            *zero_tie = 1;
        }
        double div = safe(hi - lo);
        for (size_t i = 0; i < m; i++) {
            r[i] = (benefit[j] ? x[i] - lo : hi - x[i]) / div;
            if (fixed) {
                r[i] = 1.0;
            }
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
        double div = safe(sqrt(column_sumsq(x, m)));
        double wj = benefit[j] ? w[j] : -w[j];
        for (size_t i = 0; i < m; i++) {
            r[i] = x[i] / div;
            c[i] = r[i] * wj;
        }
    }
    row_sums(C, m, k, score);
    return DC_OK;
}

/* _spread: (s - min) / (max - min), or +0.0 everywhere unless max - min > 0. */
static void spread(const double *s, size_t m, double *out)
{
    double lo, hi;
    column_range(s, m, &lo, &hi);
    double span = hi - lo;
    for (size_t i = 0; i < m; i++) {
        out[i] = span > 0.0 ? (s[i] - lo) / span : 0.0;
    }
}

dc_status dc_mcdm_vikor(const double *X, size_t m, size_t k, const unsigned char *benefit,
                        const double *w, double v, double *T, double *S, double *Rmax, double *Q)
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
    spread(S, m, Q);
    double u = 1.0 - v;
    double lo, hi;
    column_range(Rmax, m, &lo, &hi);
    double span = hi - lo;
    for (size_t i = 0; i < m; i++) {
        double r = span > 0.0 ? (Rmax[i] - lo) / span : 0.0;
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
