/* cholesky.c -- see cholesky.h.  The right-looking row-oriented algorithm
 * (inner products of contiguous rows), O(n^3 / 3) multiply-adds. */
#include <math.h>

#include "common/cholesky.h"

static double dot(const double *a, const double *b, size_t n)
{
    double s0 = 0.0, s1 = 0.0;
    size_t k = 0;
    for (; k + 1 < n; k += 2) {
        s0 += a[k] * b[k];
        s1 += a[k + 1] * b[k + 1];
    }
    if (k < n)
        s0 += a[k] * b[k];
    return s0 + s1;
}

int dc_cholesky(double *A, size_t n, size_t ld)
{
    size_t i, j;
    for (i = 0; i < n; i++) {
        double *ri = A + i * ld;
        for (j = 0; j < i; j++) {
            const double *rj = A + j * ld;
            ri[j] = (ri[j] - dot(ri, rj, j)) / rj[j];
        }
        {
            double d = ri[i] - dot(ri, ri, i);
            if (!(d > 0.0))
                return -1;
            ri[i] = sqrt(d);
        }
    }
    return 0;
}

void dc_chol_forward(const double *L, size_t n, size_t ld, double *b)
{
    size_t i;
    for (i = 0; i < n; i++)
        b[i] = (b[i] - dot(L + i * ld, b, i)) / L[i * ld + i];
}

void dc_chol_backward(const double *L, size_t n, size_t ld, double *b)
{
    size_t i, k;
    for (i = n; i-- > 0;) {
        b[i] /= L[i * ld + i];
        for (k = 0; k < i; k++)
            b[k] -= L[i * ld + k] * b[i];
    }
}

int dc_chol_append(double *L, size_t n, size_t ld, double *k, double c)
{
    double d;
    size_t j;
    dc_chol_forward(L, n, ld, k);
    d = c - dot(k, k, n);
    if (!(d > 0.0))
        return -1;
    for (j = 0; j < n; j++)
        L[n * ld + j] = k[j];
    L[n * ld + n] = sqrt(d);
    return 0;
}
