/* cholesky.h -- Cholesky factorization of a symmetric positive definite
 * matrix and the triangular solves that use it (cholesky.c).  Matrices are
 * row-major n x n with leading dimension ld (>= n). */
#ifndef DC_CHOLESKY_H
#define DC_CHOLESKY_H

#include <stddef.h>

/* A = L L^T: the lower triangle of A (row-major, ld) is overwritten by L, the
 * strict upper triangle is left alone.  0 on success, -1 when a pivot is not
 * positive (A is not numerically positive definite; A is then partly
 * overwritten). */
int dc_cholesky(double *A, size_t n, size_t ld);
/* Solve L y = b in place (b: n values). */
void dc_chol_forward(const double *L, size_t n, size_t ld, double *b);
/* Solve L^T x = y in place (y: n values). */
void dc_chol_backward(const double *L, size_t n, size_t ld, double *b);
/* Append a row to a factor of size n (capacity ld >= n + 1): the new matrix
 * [[A, k], [k^T, c]] = L' L'^T.  k (n values) is overwritten by L^{-1} k.
 * 0 on success, -1 when the new pivot is not positive. */
int dc_chol_append(double *L, size_t n, size_t ld, double *k, double c);

#endif
