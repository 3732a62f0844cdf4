# cython: language_level=3, freethreading_compatible=True
"""Thin binding over the decision kernels in C (csrc/decide/, csrc/include/decido.h)."""
from cpython cimport array
from cpython.mem cimport PyMem_Free, PyMem_Malloc
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


# ---------------------------------------------------------------- small matrices
# One C pass per method (csrc/decide/kernels.c) instead of ~10-20 NumPy calls:
# NumPy's per-call overhead, not the arithmetic, dominates the service's common
# small requests.  The kernels give the bits of decido._mcdm_methods' NumPy
# code on a Fortran-ordered float64 matrix (same IEEE operations in the same
# order, NumPy's summation orders; see decido.h).  decido._mcdm_methods only
# calls them for 2 <= m <= FAST_MAX_OPTIONS options on such matrices, the range
# tests/decide/test_decide_fast.py checks byte for byte against the NumPy path.

#: largest number of options for which the kernels are used
FAST_MAX_OPTIONS = 256


cdef int _check(const double[::1, :] X, bytes benefit, const double[::1] w,
                object constant) except -1:
    cdef Py_ssize_t m = X.shape[0], k = X.shape[1]
    if m < 1 or k < 1 or len(benefit) != k or w.shape[0] != k or (
        constant is not None and len(<bytes?>constant) != k
    ):
        raise ValueError("decido: decision kernel: shapes disagree")
    return 0


cdef int _raise(c.dc_status st) except -1:
    if st != c.DC_OK:
        raise ValueError(f"decido: decision kernel: {c.dc_status_code(st).decode()}")
    return 0


def topsis_vector(const double[::1, :] X not None, bytes benefit not None,
                  const double[::1] w not None, constant):
    """(score, R, V, d_best, d_worst) of TOPSIS with vector normalization.

    ``X`` is m x k column-major, ``benefit`` k bytes (1 = maximize), ``w`` the
    k weights, ``constant`` k bytes (1 = every option ideal) or None.
    """
    _check(X, benefit, w, constant)
    cdef size_t m = X.shape[0], k = X.shape[1]
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
    cdef c.dc_status st
    with nogil:
        st = c.dc_mcdm_topsis_vector(&X[0, 0], m, k, maximize, &w[0], const_, &R[0, 0],
                                     &V[0, 0], &score[0], &d_best[0], &d_worst[0])
    _raise(st)
    return score_, R_, V_, best_, worst_


def wsm_minmax(const double[::1, :] X not None, bytes benefit not None,
               const double[::1] w not None, constant):
    """(score, R, C) of the weighted sum with min-max normalization, or None
    where a +0.0/-0.0 tie at a column extreme makes NumPy's bits unspecified."""
    _check(X, benefit, w, constant)
    cdef size_t m = X.shape[0], k = X.shape[1]
    cdef const unsigned char* maximize = benefit
    cdef const unsigned char* const_ = NULL
    if constant is not None:
        const_ = <bytes>constant
    R_ = np.empty((m, k), order="F")
    C_ = np.empty((m, k), order="F")
    score_ = np.empty(m)
    cdef double[::1, :] R = R_
    cdef double[::1, :] C = C_
    cdef double[::1] score = score_
    cdef int zero_tie = 0
    cdef c.dc_status st
    with nogil:
        st = c.dc_mcdm_wsm_minmax(&X[0, 0], m, k, maximize, &w[0], const_, &R[0, 0],
                                  &C[0, 0], &score[0], &zero_tie)
    _raise(st)
    if zero_tie:
        return None
    return score_, R_, C_


def moora(const double[::1, :] X not None, bytes benefit not None,
          const double[::1] w not None):
    """(score, R, C) of the MOORA ratio system."""
    _check(X, benefit, w, None)
    cdef size_t m = X.shape[0], k = X.shape[1]
    cdef const unsigned char* maximize = benefit
    R_ = np.empty((m, k), order="F")
    C_ = np.empty((m, k), order="F")
    score_ = np.empty(m)
    cdef double[::1, :] R = R_
    cdef double[::1, :] C = C_
    cdef double[::1] score = score_
    cdef c.dc_status st
    with nogil:
        st = c.dc_mcdm_moora(&X[0, 0], m, k, maximize, &w[0], &R[0, 0], &C[0, 0], &score[0])
    _raise(st)
    return score_, R_, C_


def vikor(const double[::1, :] X not None, bytes benefit not None,
          const double[::1] w not None, double v):
    """(Q, T, S, R) of VIKOR: regrets T, their row sums S and maxima R."""
    _check(X, benefit, w, None)
    cdef size_t m = X.shape[0], k = X.shape[1]
    cdef const unsigned char* maximize = benefit
    T_ = np.empty((m, k), order="F")
    S_ = np.empty(m)
    R_ = np.empty(m)
    Q_ = np.empty(m)
    cdef double[::1, :] T = T_
    cdef double[::1] S = S_
    cdef double[::1] Rmax = R_
    cdef double[::1] Q = Q_
    cdef c.dc_status st
    with nogil:
        st = c.dc_mcdm_vikor(&X[0, 0], m, k, maximize, &w[0], v, &T[0, 0], &S[0], &Rmax[0],
                             &Q[0])
    _raise(st)
    return Q_, T_, S_, R_


def spotis(const double[::1, :] X not None, bytes benefit not None,
           const double[::1] w not None, const double[:, ::1] bounds not None):
    """(score, D, C) of SPOTIS; ``bounds`` is k x 2 (lower, upper), C-ordered."""
    _check(X, benefit, w, None)
    cdef size_t m = X.shape[0], k = X.shape[1], j
    if bounds.shape[0] != <Py_ssize_t>k or bounds.shape[1] != 2:
        raise ValueError("decido: decision kernel: shapes disagree")
    cdef const unsigned char* maximize = benefit
    lower_ = np.empty(k)
    upper_ = np.empty(k)
    D_ = np.empty((m, k), order="F")
    C_ = np.empty((m, k), order="F")
    score_ = np.empty(m)
    cdef double[::1] lower = lower_
    cdef double[::1] upper = upper_
    cdef double[::1, :] D = D_
    cdef double[::1, :] C = C_
    cdef double[::1] score = score_
    cdef c.dc_status st
    with nogil:
        for j in range(k):
            lower[j] = bounds[j, 0]
            upper[j] = bounds[j, 1]
        st = c.dc_mcdm_spotis(&X[0, 0], m, k, maximize, &w[0], &lower[0], &upper[0],
                              &D[0, 0], &C[0, 0], &score[0])
    _raise(st)
    return score_, D_, C_


# ---------------------------------------------------------------- whole small decisions
# ``decido.decide``'s direct path: a request without explanations, scored by one of the
# kernels below, goes from the row-major values to the ranking in one call, with no
# NumPy array made.  In a server, between other requests, each NumPy call costs far
# more than in a loop (its code is no longer in the caches); this path makes none.

cdef enum:
    _TOPSIS_VECTOR = 0
    _WSM_MINMAX = 1
    _MOORA = 2

#: kernels of :func:`rank_values`
RANK_TOPSIS_VECTOR = _TOPSIS_VECTOR
RANK_WSM_MINMAX = _WSM_MINMAX
RANK_MOORA = _MOORA


def rank_values(array.array values not None, Py_ssize_t m, Py_ssize_t k, int kernel,
                bytes benefit not None, list weights not None, bint higher_is_better,
                double rel_tol):
    """Score and rank ``m`` options on ``k`` criteria: ``values`` is the m x k matrix
    row-major (an ``array('d')``), ``benefit`` k bytes (1 = maximize), ``weights`` the k
    weights (floats, summing to 1), ``kernel`` one of ``RANK_*``.

    Returns ``(constant, order, ranks, scores)``: the k flags of the criteria with one
    value over the options (bytes), the option indices best first, their competition
    ranks (``dc_rank_competition``) and their scores, in that order (lists); or None
    when the kernel declines (``dc_mcdm_wsm_minmax``'s zero tie).  The kernels are the
    ones of :func:`topsis_vector`, :func:`wsm_minmax` and :func:`moora`, on the same
    column-major values, so the scores have the same bits.
    """
    if m < 1 or k < 1 or len(values) != m * k or len(benefit) != k or len(weights) != k:
        raise ValueError("decido: decision kernel: shapes disagree")
    if kernel < _TOPSIS_VECTOR or kernel > _MOORA:
        raise ValueError(f"decido: decision kernel: unknown kernel {kernel}")
    cdef size_t um = <size_t>m, uk = <size_t>k, i, j, mk = um * uk
    # one block: X (column-major), two m x k outputs, three m-vectors, the weights, then
    # the int64 order and ranks, then the k constant flags
    cdef size_t doubles = 3 * mk + 3 * um + uk
    cdef char *block = <char *>PyMem_Malloc(doubles * sizeof(double) + 2 * um * sizeof(int64_t)
                                            + uk)
    if block == NULL:
        raise MemoryError()
    cdef double *X = <double *>block
    cdef double *A = X + mk
    cdef double *B = A + mk
    cdef double *score = B + mk
    cdef double *v1 = score + um
    cdef double *v2 = v1 + um
    cdef double *w = v2 + um
    cdef int64_t *order = <int64_t *>(w + uk)
    cdef int64_t *rank = order + um
    cdef unsigned char *constant = <unsigned char *>(rank + um)
    cdef const double *rows = values.data.as_doubles
    cdef const unsigned char *maximize = benefit
    cdef int zero_tie = 0, any_constant = 0
    cdef double lo, hi
    cdef c.dc_status st
    try:
        for j in range(uk):
            w[j] = <double?>weights[j]
        with nogil:
            for j in range(uk):
                lo = hi = rows[j]
                for i in range(um):
                    X[i + j * um] = rows[i * uk + j]
                    lo = rows[i * uk + j] if rows[i * uk + j] < lo else lo
                    hi = rows[i * uk + j] if rows[i * uk + j] > hi else hi
                constant[j] = lo == hi
                any_constant |= constant[j]
            if kernel == _TOPSIS_VECTOR:
                st = c.dc_mcdm_topsis_vector(X, um, uk, maximize, w,
                                             constant if any_constant else NULL,
                                             A, B, score, v1, v2)
            elif kernel == _WSM_MINMAX:
                st = c.dc_mcdm_wsm_minmax(X, um, uk, maximize, w,
                                          constant if any_constant else NULL,
                                          A, B, score, &zero_tie)
            else:
                st = c.dc_mcdm_moora(X, um, uk, maximize, w, A, B, score)
            if st == c.DC_OK and not zero_tie:
                st = c.dc_rank_competition(score, um, higher_is_better, rel_tol, order, rank)
        _raise(st)
        if zero_tie:
            return None
        return (
            constant[:uk],
            [order[i] for i in range(um)],
            [rank[i] for i in range(um)],
            [score[order[i]] for i in range(um)],
        )
    finally:
        PyMem_Free(block)
