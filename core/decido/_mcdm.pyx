# cython: language_level=3, freethreading_compatible=True
"""Thin binding over the decision kernels in C (csrc/decide/, csrc/include/decido.h)."""
cimport cython
from libc.math cimport sqrt
from libc.stdint cimport int64_t

cimport decido._capi as c

import numpy as np


def competition_ranks(const double[::1] score, bint higher_is_better, double rel_tol):
    """(order, ranks) of ``score``, both int64 arrays: ``dc_rank_competition``."""
    cdef size_t n = score.shape[0]
    cdef c.dc_status st = c.DC_OK
    order = np.empty(n, dtype=np.int64)
    ranks = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = order
    cdef int64_t[::1] r = ranks
    if n:
        with nogil:
            st = c.dc_rank_competition(&score[0], n, higher_is_better, rel_tol, &o[0], &r[0])
    if st != c.DC_OK:
        raise ValueError(f"decido: {c.dc_status_code(st).decode()}")
    return order, ranks


# ---------------------------------------------------------------- small TOPSIS
# TOPSIS with vector normalization over a small column-major matrix, in one C
# pass instead of ~20 NumPy calls (the per-call overhead of NumPy dominates for
# the service's common 5 x 2 request).  The results are bit-for-bit those of
# decido._mcdm_methods.topsis: the element-wise steps are the same IEEE
# operations in the same order, max/min only feed squared differences (so the
# sign of a zero maximum cannot matter), and the two sums of squares follow
# the summation order of numpy.einsum on these layouts:
#   "ij,ij->j" (column norms, contiguous columns): two SSE lanes, each fed
#   every other element (blocks of 8 in the order 6,4,2,0 / 7,5,3,1), then
#   lane 0 + lane 1; "ij,ij->i" (row distances): left to right over columns.
# The kernel is only used where that order is checked by tests/decide
# (test_decide_fast.py): 2 <= m <= TOPSIS_FAST_MAX_OPTIONS, float64,
# Fortran-contiguous; everything else takes the NumPy path.

#: largest number of options for which topsis_vector is used
TOPSIS_FAST_MAX_OPTIONS = 256


cdef inline double _column_sumsq(const double* x, Py_ssize_t m) noexcept nogil:
    cdef double l0 = 0.0, l1 = 0.0
    cdef Py_ssize_t i = 0
    while m - i >= 8:
        l0 = x[i] * x[i] + (x[i + 2] * x[i + 2] + (x[i + 4] * x[i + 4] + (x[i + 6] * x[i + 6] + l0)))
        l1 = x[i + 1] * x[i + 1] + (x[i + 3] * x[i + 3] + (x[i + 5] * x[i + 5] + (x[i + 7] * x[i + 7] + l1)))
        i += 8
    while i < m:
        l0 = x[i] * x[i] + l0
        if i + 1 < m:
            l1 = x[i + 1] * x[i + 1] + l1
        i += 2
    return 0.0 + (l0 + l1)


@cython.cdivision(True)
def topsis_vector(const double[::1, :] X not None, bytes benefit not None,
                  const double[::1] w not None, constant):
    """(score, R, V, d_best, d_worst) of TOPSIS with vector normalization.

    ``X`` is m x k column-major, ``benefit`` k bytes (1 = maximize), ``w`` the
    k weights, ``constant`` k bytes (1 = every option ideal) or None.
    """
    cdef Py_ssize_t m = X.shape[0], k = X.shape[1], i, j
    if m < 1 or len(benefit) != k or w.shape[0] != k or (
        constant is not None and len(<bytes?>constant) != k
    ):
        raise ValueError("decido: topsis_vector: shapes disagree")
    cdef const unsigned char* maximize = benefit
    cdef const unsigned char* const_ = NULL
    if constant is not None:
        const_ = <bytes>constant
    R_ = np.empty((m, k), order="F")
    V_ = np.empty((m, k), order="F")
    score_ = np.empty(m)
    best_ = np.empty(m)
    worst_ = np.empty(m)
    cdef double[::1, :] R = R_
    cdef double[::1, :] V = V_
    cdef double[::1] score = score_
    cdef double[::1] d_best = best_
    cdef double[::1] d_worst = worst_
    cdef double div, hi, lo, d, denom
    with nogil:
        for i in range(m):
            d_best[i] = 0.0
            d_worst[i] = 0.0
        for j in range(k):
            div = sqrt(_column_sumsq(&X[0, j], m))
            div = div + (1.0 if div == 0.0 else 0.0)
            for i in range(m):
                R[i, j] = X[i, j] / div
                if not maximize[j]:
                    R[i, j] = 1.0 - R[i, j]
                if const_ != NULL and const_[j]:
                    R[i, j] = 1.0
                V[i, j] = R[i, j] * w[j]
            hi = V[0, j]
            lo = V[0, j]
            for i in range(1, m):
                if V[i, j] > hi:
                    hi = V[i, j]
                if V[i, j] < lo:
                    lo = V[i, j]
            for i in range(m):
                d = V[i, j] - hi
                d_best[i] = d * d + d_best[i]
                d = V[i, j] - lo
                d_worst[i] = d * d + d_worst[i]
        for i in range(m):
            d_best[i] = sqrt(d_best[i])
            d_worst[i] = sqrt(d_worst[i])
            denom = d_best[i] + d_worst[i]
            score[i] = d_worst[i] / denom if denom > 0 else 1.0
    return score_, R_, V_, best_, worst_
