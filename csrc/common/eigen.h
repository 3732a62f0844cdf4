/* eigen.h -- eigenvalues and eigenvectors of a symmetric matrix (eigen.c). */
#ifndef DC_EIGEN_H
#define DC_EIGEN_H

/* V (n x n) holds a symmetric matrix on entry and its eigenvectors on exit,
 * eigenvector k in V[k*n .. k*n+n) (the algorithm works on columns, stored
 * contiguously: A(r, c) = V[c*n + r]); d the eigenvalues; e is scratch (n).
 * 0 on success, -1 when QL does not converge. */
int dc_eigen_sym(long n, double *V, double *d, double *e);

#endif
