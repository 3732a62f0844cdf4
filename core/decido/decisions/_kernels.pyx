# cython: language_level=3, freethreading_compatible=True
"""Thin binding over the decision kernels in C (csrc/decide/, csrc/include/decido.h)."""
from cpython.buffer cimport (
    PyBUF_ANY_CONTIGUOUS, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer,
)
from libc.math cimport fabs
from libc.stdint cimport int64_t

cimport decido._capi as c

import numpy as np

from decido.errors import status_error


cdef void* _data(object fresh) except NULL:
    """The data of ``fresh``, an array just made by ``np.empty`` (which owns its data, so
    the buffer can be released at once).  Outputs are written through this pointer: a
    typed memoryview per output costs about as much as the kernel on small requests."""
    cdef Py_buffer view
    PyObject_GetBuffer(fresh, &view, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS)
    cdef void* data = view.buf
    PyBuffer_Release(&view)
    return data


def competition_ranks(const double[::1] score, bint higher_is_better, double rel_tol):
    """(order, ranks) of ``score``, both int64 arrays: ``dc_rank_competition``."""
    cdef size_t n = score.shape[0]
    cdef c.dc_status st = c.DC_OK
    order = np.empty(n, dtype=np.int64)
    ranks = np.empty(n, dtype=np.int64)
    cdef int64_t* o
    cdef int64_t* r
    if n:
        o, r = <int64_t*>_data(order), <int64_t*>_data(ranks)
        with nogil:
            st = c.dc_rank_competition(&score[0], n, higher_is_better, rel_tol, o, r)
    _raise(st)
    return order, ranks


# ---------------------------------------------------------------- kernels
# The normalizations, TOPSIS, WSM, MOORA, VIKOR and SPOTIS are C kernels
# (csrc/decide/kernels.c), one pass each instead of ~10-20 NumPy calls: on the
# service's small requests NumPy's per-call overhead, not the arithmetic, is the
# cost (benchmarks/decide_small.py).  X is m x k column-major float64.

#: the normalizations, in the order of the C enum dc_normalization
NORMALIZATIONS = ("minmax", "vector", "sum", "max", "linear")
_NORM = {
    "minmax": c.DC_NORM_MINMAX,
    "vector": c.DC_NORM_VECTOR,
    "sum": c.DC_NORM_SUM,
    "max": c.DC_NORM_MAX,
    "linear": c.DC_NORM_LINEAR,
}


cdef int _check(const double[::1, :] X, bytes benefit, object w) except -1:
    cdef Py_ssize_t m = X.shape[0], k = X.shape[1]
    if m < 1 or k < 1 or len(benefit) != k or (w is not None and len(w) != k):
        raise ValueError("decido: decision kernel: shapes disagree")
    return 0


cdef int _raise(c.dc_status st) except -1:
    if st != c.DC_OK:
        raise status_error(c.dc_status_code(st).decode(), c.dc_status_title(st).decode(),
                           "decision")
    return 0


cdef c.dc_normalization _norm(str name) except *:
    try:
        return _NORM[name]
    except KeyError:
        raise ValueError(f"decido: decision kernel: unknown normalization {name!r}") from None


def normalize(const double[::1, :] X not None, bytes benefit not None, str norm not None):
    """R, the m x k normalized matrix (column-major): ``dc_mcdm_normalize``."""
    _check(X, benefit, None)
    cdef size_t m = X.shape[0], k = X.shape[1]
    cdef const unsigned char* maximize = benefit
    cdef c.dc_normalization how = _norm(norm)
    R_ = np.empty((m, k), order="F")
    cdef double* R = <double*>_data(R_)
    cdef c.dc_status st
    with nogil:
        st = c.dc_mcdm_normalize(&X[0, 0], m, k, maximize, how, R)
    _raise(st)
    return R_


def topsis(const double[::1, :] X not None, bytes benefit not None,
           const double[::1] w not None, str norm not None):
    """(score, R, V, d_best, d_worst) of TOPSIS with normalization ``norm``.

    ``X`` is m x k column-major, ``benefit`` k bytes (1 = maximize), ``w`` the
    k weights.
    """
    _check(X, benefit, w)
    cdef size_t m = X.shape[0], k = X.shape[1]
    cdef const unsigned char* maximize = benefit
    cdef c.dc_normalization how = _norm(norm)
    R_ = np.empty((m, k), order="F")
    V_ = np.empty((m, k), order="F")
    score_ = np.empty(m)
    best_ = np.empty(m)
    worst_ = np.empty(m)
    cdef double* R = <double*>_data(R_)
    cdef double* V = <double*>_data(V_)
    cdef double* score = <double*>_data(score_)
    cdef double* d_best = <double*>_data(best_)
    cdef double* d_worst = <double*>_data(worst_)
    cdef c.dc_status st
    with nogil:
        st = c.dc_mcdm_topsis(&X[0, 0], m, k, maximize, &w[0], how, R, V, score, d_best,
                              d_worst)
    _raise(st)
    return score_, R_, V_, best_, worst_


def wsm(const double[::1, :] X not None, bytes benefit not None,
        const double[::1] w not None, str norm not None):
    """(score, R, C) of the weighted sum with normalization ``norm``."""
    _check(X, benefit, w)
    cdef size_t m = X.shape[0], k = X.shape[1]
    cdef const unsigned char* maximize = benefit
    cdef c.dc_normalization how = _norm(norm)
    R_ = np.empty((m, k), order="F")
    C_ = np.empty((m, k), order="F")
    score_ = np.empty(m)
    cdef double* R = <double*>_data(R_)
    cdef double* C = <double*>_data(C_)
    cdef double* score = <double*>_data(score_)
    cdef c.dc_status st
    with nogil:
        st = c.dc_mcdm_wsm(&X[0, 0], m, k, maximize, &w[0], how, R, C, score)
    _raise(st)
    return score_, R_, C_


def moora(const double[::1, :] X not None, bytes benefit not None,
          const double[::1] w not None):
    """(score, R, C) of the MOORA ratio system."""
    _check(X, benefit, w)
    cdef size_t m = X.shape[0], k = X.shape[1]
    cdef const unsigned char* maximize = benefit
    R_ = np.empty((m, k), order="F")
    C_ = np.empty((m, k), order="F")
    score_ = np.empty(m)
    cdef double* R = <double*>_data(R_)
    cdef double* C = <double*>_data(C_)
    cdef double* score = <double*>_data(score_)
    cdef c.dc_status st
    with nogil:
        st = c.dc_mcdm_moora(&X[0, 0], m, k, maximize, &w[0], R, C, score)
    _raise(st)
    return score_, R_, C_


def vikor(const double[::1, :] X not None, bytes benefit not None,
          const double[::1] w not None, double v, double rel_tol):
    """(Q, T, S, R) of VIKOR: regrets T, their row sums S and maxima R (a spread of
    S or R within ``rel_tol`` of their magnitude counts as zero)."""
    _check(X, benefit, w)
    cdef size_t m = X.shape[0], k = X.shape[1]
    cdef const unsigned char* maximize = benefit
    T_ = np.empty((m, k), order="F")
    S_ = np.empty(m)
    R_ = np.empty(m)
    Q_ = np.empty(m)
    cdef double* T = <double*>_data(T_)
    cdef double* S = <double*>_data(S_)
    cdef double* Rmax = <double*>_data(R_)
    cdef double* Q = <double*>_data(Q_)
    cdef c.dc_status st
    with nogil:
        st = c.dc_mcdm_vikor(&X[0, 0], m, k, maximize, &w[0], v, rel_tol, T, S, Rmax, Q)
    _raise(st)
    return Q_, T_, S_, R_


def spotis(const double[::1, :] X not None, bytes benefit not None,
           const double[::1] w not None, const double[:, ::1] bounds not None):
    """(score, D, C) of SPOTIS; ``bounds`` is k x 2 (lower, upper), C-ordered."""
    _check(X, benefit, w)
    cdef size_t m = X.shape[0], k = X.shape[1], j
    if bounds.shape[0] != <Py_ssize_t>k or bounds.shape[1] != 2:
        raise ValueError("decido: decision kernel: shapes disagree")
    cdef const unsigned char* maximize = benefit
    lower_ = np.empty(k)
    upper_ = np.empty(k)
    D_ = np.empty((m, k), order="F")
    C_ = np.empty((m, k), order="F")
    score_ = np.empty(m)
    cdef double* lower = <double*>_data(lower_)
    cdef double* upper = <double*>_data(upper_)
    cdef double* D = <double*>_data(D_)
    cdef double* C = <double*>_data(C_)
    cdef double* score = <double*>_data(score_)
    cdef c.dc_status st
    with nogil:
        for j in range(k):
            lower[j] = bounds[j, 0]
            upper[j] = bounds[j, 1]
        st = c.dc_mcdm_spotis(&X[0, 0], m, k, maximize, &w[0], lower, upper, D, C, score)
    _raise(st)
    return score_, D_, C_


# ---------------------------------------------------------------- batches (SMAA)
# One decision scored under many samples: the kernel runs once per sample in the loop
# below (no Python per sample), over scratch buffers allocated once.  A sample's
# infeasible options (``feasible[s, i] == 0``) are left out of its matrix, as a decision
# leaves them out: their score is NaN and their rank 0.
_BATCH = {"topsis": 0, "wsm": 1, "moora": 2, "vikor": 3, "spotis": 4}


cdef c.dc_status _score_one(int which, const double* X, size_t m, size_t k,
                            const unsigned char* maximize, const double* w,
                            c.dc_normalization how, double v, double rel_tol,
                            const double* lower, const double* upper, double* A, double* B,
                            double* a, double* b, double* out) noexcept nogil:
    if which == 0:
        return c.dc_mcdm_topsis(X, m, k, maximize, w, how, A, B, out, a, b)
    if which == 1:
        return c.dc_mcdm_wsm(X, m, k, maximize, w, how, A, B, out)
    if which == 2:
        return c.dc_mcdm_moora(X, m, k, maximize, w, A, B, out)
    if which == 3:
        return c.dc_mcdm_vikor(X, m, k, maximize, w, v, rel_tol, A, a, b, out)
    return c.dc_mcdm_spotis(X, m, k, maximize, w, lower, upper, A, B, out)


def scores_batch(str method not None, const double[:, :, ::1] X not None,
                 bytes benefit not None, const double[:, ::1] W not None, str norm,
                 double v, double rel_tol, const double[:, ::1] bounds,
                 const unsigned char[:, ::1] feasible):
    """(S, m) scores of ``method`` (a C kernel) for each sample s: ``X[s]`` holds the
    k x m values (an m x k column-major matrix), ``W[s]`` the k weights; ``norm``, ``v``
    and ``rel_tol``, ``bounds`` (k x 2) as the single-matrix functions take them;
    ``feasible`` (S x m, or None: every option) the options each sample scores."""
    cdef Py_ssize_t S = X.shape[0], k = X.shape[1], m = X.shape[2], s, i, j, n, p
    if m < 1 or k < 1 or len(benefit) != k or W.shape[0] != S or W.shape[1] != k:
        raise ValueError("decido: decision kernel: shapes disagree")
    if feasible is not None and (feasible.shape[0] != S or feasible.shape[1] != m):
        raise ValueError("decido: decision kernel: shapes disagree")
    cdef int which = _BATCH[method]
    cdef c.dc_normalization how = _norm(norm) if norm is not None else c.DC_NORM_MINMAX
    if which == 4 and (bounds is None or bounds.shape[0] != k or bounds.shape[1] != 2):
        raise ValueError("decido: decision kernel: shapes disagree")
    cdef const unsigned char* maximize = benefit
    out_ = np.empty((S, m))
    scratch_ = np.empty(3 * m * k + 3 * m + 2 * k)
    cdef double* out = <double*>_data(out_)
    cdef double* A = <double*>_data(scratch_)
    cdef double* B = A + m * k
    cdef double* G = B + m * k
    cdef double* a = G + m * k
    cdef double* b = a + m
    cdef double* sc = b + m
    cdef double* lower = sc + m
    cdef double* upper = lower + k
    cdef c.dc_status st = c.DC_OK
    cdef double nan = float("nan")
    with nogil:
        if which == 4:
            for j in range(k):
                lower[j] = bounds[j, 0]
                upper[j] = bounds[j, 1]
        for s in range(S):
            if feasible is None:
                st = _score_one(which, &X[s, 0, 0], m, k, maximize, &W[s, 0], how, v,
                                rel_tol, lower, upper, A, B, a, b, out + s * m)
            else:
                n = 0
                for i in range(m):
                    n += feasible[s, i] != 0
                for i in range(m):
                    out[s * m + i] = nan
                if n == 0:
                    continue
                for j in range(k):  # the feasible options' values, column by column
                    p = j * n
                    for i in range(m):
                        if feasible[s, i]:
                            A[p] = X[s, j, i]
                            p += 1
                st = _score_one(which, A, n, k, maximize, &W[s, 0], how, v, rel_tol,
                                lower, upper, G, B, a, b, sc)
                n = 0
                for i in range(m):
                    if feasible[s, i]:
                        out[s * m + i] = sc[n]
                        n += 1
            if st != c.DC_OK:
                break
    _raise(st)
    return out_


def ranks_batch(const double[:, ::1] scores not None, bint higher_is_better, double rel_tol,
                const unsigned char[:, ::1] feasible):
    """(S, m) int64: the competition rank of each option in each row of ``scores``
    (``dc_rank_competition`` per row) among the row's feasible options (``feasible``,
    S x m, or None: every option); 0 for the others."""
    cdef Py_ssize_t S = scores.shape[0], m = scores.shape[1], s, p, i, n
    if feasible is not None and (feasible.shape[0] != S or feasible.shape[1] != m):
        raise ValueError("decido: decision kernel: shapes disagree")
    out_ = np.zeros((S, m), dtype=np.int64)
    scratch_ = np.empty(3 * max(m, 1), dtype=np.int64)
    packed_ = np.empty(max(m, 1))
    cdef int64_t* out = <int64_t*>_data(out_)
    cdef int64_t* order = <int64_t*>_data(scratch_)
    cdef int64_t* rank = order + m
    cdef int64_t* index = rank + m
    cdef double* packed = <double*>_data(packed_)
    cdef c.dc_status st = c.DC_OK
    if m == 0:
        return out_
    with nogil:
        for s in range(S):
            n = 0
            for i in range(m):
                if feasible is None or feasible[s, i]:
                    packed[n] = scores[s, i]
                    index[n] = i
                    n += 1
            if n == 0:
                continue
            st = c.dc_rank_competition(packed, n, higher_is_better, rel_tol, order, rank)
            if st != c.DC_OK:
                break
            for p in range(n):
                out[s * m + index[order[p]]] = rank[p]
    _raise(st)
    return out_


def first_count(const double[:, ::1] scores not None, bint higher_is_better, double rel_tol,
                const unsigned char[:, ::1] feasible, Py_ssize_t option):
    """In how many rows of ``scores`` option ``option`` has competition rank 1 among the
    row's feasible options (as ``ranks_batch`` would rank it).  Each row is decided by one
    pass where the option is ahead, or behind by more than the longest chain of ties can
    span ((m - 1) times the tolerance); only the rows between are ranked."""
    cdef Py_ssize_t S = scores.shape[0], m = scores.shape[1], s, i, n, p
    if feasible is not None and (feasible.shape[0] != S or feasible.shape[1] != m):
        raise ValueError("decido: decision kernel: shapes disagree")
    if not 0 <= option < m:
        raise ValueError("decido: decision kernel: option out of range")
    scratch_ = np.empty(3 * m, dtype=np.int64)
    packed_ = np.empty(m)
    cdef int64_t* order = <int64_t*>_data(scratch_)
    cdef int64_t* rank = order + m
    cdef int64_t* index = rank + m
    cdef double* packed = <double*>_data(packed_)
    cdef double sign = -1.0 if higher_is_better else 1.0
    cdef double key, mine, top, best
    cdef Py_ssize_t count = 0
    cdef bint nan_only, ahead
    cdef c.dc_status st = c.DC_OK
    with nogil:
        for s in range(S):
            if feasible is not None and not feasible[s, option]:
                continue
            mine = sign * scores[s, option]
            top = 0.0
            best = mine
            nan_only = True
            n = 0
            for i in range(m):
                if feasible is not None and not feasible[s, i]:
                    continue
                key = sign * scores[s, i]
                packed[n] = scores[s, i]
                index[n] = i
                n += 1
                if key == key:
                    nan_only = False
                    if fabs(key) > top:
                        top = fabs(key)
                    if key < best or best != best:
                        best = key
            if mine != mine:  # NaN ranks first only among NaNs
                count += nan_only
                continue
            if best == mine and n == 1:
                count += 1
                continue
            ahead = True  # no other key within (m - 1) tolerances of mine or better
            for i in range(m):
                if i == option or (feasible is not None and not feasible[s, i]):
                    continue
                key = sign * scores[s, i]
                if key == key and key - mine <= (m - 1) * rel_tol * top:
                    ahead = False
                    break
            if ahead:
                count += 1
                continue
            if mine - best > (m - 1) * rel_tol * top:
                continue  # behind by more than any chain of ties
            st = c.dc_rank_competition(packed, n, higher_is_better, rel_tol, order, rank)
            if st != c.DC_OK:
                break
            for p in range(n):
                if index[order[p]] == option:
                    count += rank[p] == 1
                    break
    _raise(st)
    return count
