# cython: language_level=3, freethreading_compatible=True
"""Thin binding over the decision kernels in C (csrc/decide/, csrc/include/decido.h)."""
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
