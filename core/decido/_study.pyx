# cython: language_level=3, freethreading_compatible=True
"""Thin binding over the C study (dc_study, engine/study.c): one engine driven by ask/tell.

The caller (decido.study) checks every argument first; a status the C side still returns
becomes the exception of decido.errors.status_error (an EngineError, MemoryError)."""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc

cimport decido._capi as c

import numpy as np

from decido.errors import status_error

#: the most points one ask hands out (decido.h)
MAX_ASK = c.DC_STUDY_MAX_ASK
#: trial statuses, in dc_trial_status order
OK = c.DC_TRIAL_OK
FAILED = c.DC_TRIAL_FAILED
INFEASIBLE = c.DC_TRIAL_INFEASIBLE


cdef _raise(c.dc_error *err):
    raise status_error(c.dc_status_code(err.status).decode(),
                       err.message.decode("utf-8", "replace"), "engine")


cdef class CStudy:
    """One dc_study.  Not thread-safe: the Python Study serialises calls."""
    cdef c.dc_study *ptr
    cdef readonly size_t n
    cdef readonly size_t m

    def __cinit__(self, str engine, object lower, object upper, object integer,
                  object discrete, object log_scale, size_t n_objectives, object maximized,
                  uint64_t seed, int64_t budget, dict options, bint constrained):
        cdef const double[::1] lo = np.ascontiguousarray(lower, dtype=np.float64)
        cdef const double[::1] hi = np.ascontiguousarray(upper, dtype=np.float64)
        cdef const unsigned char[::1] ints, logs, maxed
        cdef const double[::1] vals
        cdef c.dc_study_spec spec
        cdef c.dc_error err
        cdef c.dc_status st
        cdef size_t n = lo.shape[0], j, k, n_opt = len(options)
        cdef const double **values = NULL
        cdef size_t *n_values = NULL
        cdef const char **names = NULL
        cdef double *option_values = NULL
        self.ptr = NULL
        self.n = n
        self.m = n_objectives if n_objectives >= 2 else 1
        c.dc_study_spec_init(&spec)
        spec.n = n
        spec.lower = &lo[0] if n else NULL
        spec.upper = &hi[0] if n else NULL
        if integer is not None:
            ints = np.ascontiguousarray(integer, dtype=np.uint8)
            spec.integer = &ints[0]
        if log_scale is not None:
            logs = np.ascontiguousarray(log_scale, dtype=np.uint8)
            spec.log_scale = &logs[0]
        if maximized is not None:
            maxed = np.ascontiguousarray(maximized, dtype=np.uint8)
            spec.maximized = &maxed[0]
        spec.n_objectives = n_objectives
        spec.seed = seed
        spec.budget = budget
        spec.constrained = constrained
        keep = []  # the arrays the C pointers point into
        encoded = [str(name).encode() for name in options]
        try:
            if discrete is not None:
                values = <const double **>malloc(n * sizeof(double *))
                n_values = <size_t *>malloc(n * sizeof(size_t))
                if values == NULL or n_values == NULL:
                    raise MemoryError("decido: out of memory (study)")
                for j in range(n):
                    values[j] = NULL
                    n_values[j] = 0
                    if discrete[j] is not None:
                        arr = np.ascontiguousarray(discrete[j], dtype=np.float64)
                        keep.append(arr)
                        vals = arr
                        values[j] = &vals[0]
                        n_values[j] = vals.shape[0]
                spec.values = values
                spec.n_values = n_values
            if n_opt:
                names = <const char **>malloc(n_opt * sizeof(char *))
                option_values = <double *>malloc(n_opt * sizeof(double))
                if names == NULL or option_values == NULL:
                    raise MemoryError("decido: out of memory (study)")
                for k, (name, value) in enumerate(zip(encoded, options.values())):
                    names[k] = name
                    option_values[k] = float(value)
                spec.option_names = names
                spec.option_values = option_values
                spec.n_options = n_opt
            cengine = engine.encode()
            st = c.dc_study_new(cengine, &spec, &self.ptr, &err)
            if st != c.DC_OK:
                _raise(&err)
        finally:
            free(values)
            free(n_values)
            free(names)
            free(option_values)

    def __dealloc__(self):
        c.dc_study_free(self.ptr)

    def ask(self, size_t k):
        """k trials: (ids int64 (k,), X float64 (k, n))."""
        ids = np.empty(k, dtype=np.int64)
        X = np.empty((k, self.n), dtype=np.float64)
        cdef int64_t[::1] iv = ids
        cdef double[:, ::1] xv = X
        cdef c.dc_error err
        cdef c.dc_status st
        if k == 0:
            return ids, X
        st = c.dc_study_ask(self.ptr, k, &iv[0], &xv[0, 0], &err)
        if st != c.DC_OK:
            _raise(&err)
        return ids, X

    def tell(self, int64_t trial, int status, object values, double excess):
        """The result of trial: values (m floats, or None unless OK) and the excess."""
        cdef const double[::1] v
        cdef const double *p = NULL
        cdef c.dc_error err
        cdef c.dc_status st
        if values is not None:
            v = np.ascontiguousarray(values, dtype=np.float64)
            p = &v[0]
        st = c.dc_study_tell(self.ptr, trial, <c.dc_trial_status>status, p, excess, &err)
        if st != c.DC_OK:
            _raise(&err)

    def tell_point(self, object x, int status, object values, double excess):
        """A point never asked, told as a new trial; its number."""
        cdef const double[::1] xv = np.ascontiguousarray(x, dtype=np.float64)
        cdef const double[::1] v
        cdef const double *p = NULL
        cdef int64_t out = -1
        cdef c.dc_error err
        cdef c.dc_status st
        if values is not None:
            v = np.ascontiguousarray(values, dtype=np.float64)
            p = &v[0]
        st = c.dc_study_tell_point(self.ptr, &xv[0], <c.dc_trial_status>status, p, excess,
                                   &out, &err)
        if st != c.DC_OK:
            _raise(&err)
        return out

    @property
    def n_trials(self):
        return c.dc_study_n_trials(self.ptr)

    @property
    def best(self):
        """The best completed trial's number (one objective), or -1."""
        return c.dc_study_best(self.ptr)

    @property
    def n_batches(self):
        return c.dc_study_n_batches(self.ptr)
