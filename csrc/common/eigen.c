/*
 * eigen.c -- the symmetric eigensolver (eigen.h): Householder
 * tridiagonalization, then implicit QL.
 */
#include <math.h>

#include "common/eigen.h"

int dc_eigen_sym(long n, double *V, double *d, double *e)
{
    long i, j, k, l, m;
#define A(r, c) V[(c) * n + (r)]
    for (j = 0; j < n; j++)
        d[j] = A(n - 1, j);
    for (i = n - 1; i > 0; i--) {
        double scale = 0.0, h = 0.0;
        for (k = 0; k < i; k++)
            scale += fabs(d[k]);
        if (scale == 0.0) {
            e[i] = d[i - 1];
            for (j = 0; j < i; j++) {
                d[j] = A(i - 1, j);
                A(i, j) = 0.0;
                A(j, i) = 0.0;
            }
        } else {
            double f, g, hh;
            for (k = 0; k < i; k++) {
                d[k] /= scale;
                h += d[k] * d[k];
            }
            f = d[i - 1];
            g = f > 0 ? -sqrt(h) : sqrt(h);
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            for (j = 0; j < i; j++)
                e[j] = 0.0;
            for (j = 0; j < i; j++) {
                f = d[j];
                A(j, i) = f;
                g = e[j] + A(j, j) * f;
                for (k = j + 1; k < i; k++) {
                    g += A(k, j) * d[k];
                    e[k] += A(k, j) * f;
                }
                e[j] = g;
            }
            f = 0.0;
            for (j = 0; j < i; j++) {
                e[j] /= h;
                f += e[j] * d[j];
            }
            hh = f / (h + h);
            for (j = 0; j < i; j++)
                e[j] -= hh * d[j];
            for (j = 0; j < i; j++) {
                f = d[j];
                g = e[j];
                for (k = j; k < i; k++)
                    A(k, j) -= f * e[k] + g * d[k];
                d[j] = A(i - 1, j);
                A(i, j) = 0.0;
            }
        }
        d[i] = h;
    }
    /* accumulate the transformations */
    for (i = 0; i < n - 1; i++) {
        double h;
        A(n - 1, i) = A(i, i);
        A(i, i) = 1.0;
        h = d[i + 1];
        if (h != 0.0) {
            for (k = 0; k <= i; k++)
                d[k] = A(k, i + 1) / h;
            for (j = 0; j <= i; j++) {
                double g = 0.0;
                for (k = 0; k <= i; k++)
                    g += A(k, i + 1) * A(k, j);
                for (k = 0; k <= i; k++)
                    A(k, j) -= g * d[k];
            }
        }
        for (k = 0; k <= i; k++)
            A(k, i + 1) = 0.0;
    }
    for (j = 0; j < n; j++) {
        d[j] = A(n - 1, j);
        A(n - 1, j) = 0.0;
    }
    A(n - 1, n - 1) = 1.0;
    e[0] = 0.0;

    /* implicit QL on the tridiagonal matrix (d, e) */
    {
        double f = 0.0, tst1 = 0.0, eps = 2.220446049250313e-16;
        for (i = 1; i < n; i++)
            e[i - 1] = e[i];
        e[n - 1] = 0.0;
        for (l = 0; l < n; l++) {
            double t = fabs(d[l]) + fabs(e[l]);
            if (t > tst1)
                tst1 = t;
            for (m = l; m < n; m++)
                if (fabs(e[m]) <= eps * tst1)
                    break;
            if (m == n)
                m = n - 1;
            if (m > l) {
                int iter = 0;
                do {
                    double g, p, r, dl1, h, c, c2, c3, el1, s, s2;
                    if (++iter > 60)
                        return -1;
                    g = d[l];
                    p = (d[l + 1] - g) / (2.0 * e[l]);
                    r = sqrt(p * p + 1.0);
                    if (p < 0)
                        r = -r;
                    d[l] = e[l] / (p + r);
                    d[l + 1] = e[l] * (p + r);
                    dl1 = d[l + 1];
                    h = g - d[l];
                    for (i = l + 2; i < n; i++)
                        d[i] -= h;
                    f += h;
                    p = d[m];
                    c = c2 = c3 = 1.0;
                    el1 = e[l + 1];
                    s = s2 = 0.0;
                    for (i = m - 1; i >= l; i--) {
                        c3 = c2;
                        c2 = c;
                        s2 = s;
                        g = c * e[i];
                        h = c * p;
                        r = sqrt(p * p + e[i] * e[i]); /* C is bounded: no overflow */
                        e[i + 1] = s * r;
                        s = e[i] / r;
                        c = p / r;
                        p = c * d[i] - s * g;
                        d[i + 1] = h + s * (c * g + s * d[i]);
                        for (k = 0; k < n; k++) {
                            h = A(k, i + 1);
                            A(k, i + 1) = s * A(k, i) + c * h;
                            A(k, i) = c * A(k, i) - s * h;
                        }
                    }
                    p = -s * s2 * c3 * el1 * e[l] / dl1;
                    e[l] = s * p;
                    d[l] = c * p;
                    if (!isfinite(p))
                        return -1;
                } while (fabs(e[l]) > eps * tst1);
            }
            d[l] += f;
            e[l] = 0.0;
        }
    }
#undef A
    return 0;
}
