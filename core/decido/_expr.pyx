# cython: language_level=3, freethreading_compatible=True
"""Thin binding over the C program and workspace (csrc/include/decido.h).

The compiled program is immutable and shared; each call borrows a workspace
from a small pool (one per concurrent caller) and runs with the GIL released.
"""
from cpython.buffer cimport (
    PyBUF_C_CONTIGUOUS,
    PyBUF_FORMAT,
    PyBUF_WRITABLE,
    PyBuffer_Release,
    PyObject_GetBuffer,
)
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport strcmp

cimport decido._capi as c

import numpy as np

from decido.errors import status_error

_POOL_LIMIT = 8
_empty = np.empty


cdef class _Workspace:
    def __dealloc__(self):
        if self.ws is not NULL:
            c.dc_workspace_free(self.ws)
            self.ws = NULL


cdef int _doubles(object obj, Py_buffer *view, int writable) except -1:
    """A C-contiguous float64 buffer of obj (released by the caller)."""
    cdef int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT
    if writable:
        flags |= PyBUF_WRITABLE
    PyObject_GetBuffer(obj, view, flags)
    if view.itemsize != 8 or view.format is NULL or not (
            strcmp(view.format, b"d") == 0 or strcmp(view.format, b"<d") == 0
            or strcmp(view.format, b"=d") == 0 or strcmp(view.format, b"@d") == 0):
        PyBuffer_Release(view)
        raise TypeError("expected a C-contiguous float64 array")
    return 0


cdef _raise_status(c.dc_status st, str message=None):
    raise status_error(c.dc_status_code(st).decode(),
                       message or c.dc_status_title(st).decode(), "expression")


cdef class Program:
    """A compiled expression (see decido.Expression for the public API)."""

    def __cinit__(self, bytes text, int64_t n, list variables, size_t max_length,
                  size_t max_depth, size_t max_instructions, str source,
                  bint constraint=False):
        cdef c.dc_options opt
        cdef c.dc_constraint_info info
        cdef c.dc_error err
        cdef c.dc_status st
        cdef const char **names = NULL
        cdef Py_ssize_t k
        cdef const char *ptext = text
        cdef size_t tlen = len(text)
        encoded = [v.encode("utf-8") for v in variables]
        self._pool = []
        c.dc_options_init(&opt)
        opt.n = n
        opt.max_length = max_length
        opt.max_depth = max_depth
        opt.max_instructions = max_instructions
        if encoded:
            names = <const char **>malloc(len(encoded) * sizeof(char *))
            if names is NULL:
                raise MemoryError()
            for k in range(len(encoded)):
                names[k] = <const char *>encoded[k]
            opt.variables = names
            opt.n_variables = len(encoded)
        try:
            with nogil:
                if constraint:
                    st = c.dc_compile_constraint(ptext, tlen, &opt, &self.prog, &info, &err)
                else:
                    st = c.dc_compile(ptext, tlen, &opt, &self.prog, &err)
        finally:
            free(names)
        if st != c.DC_OK:
            raise status_error(c.dc_status_code(st).decode(),
                               err.message.decode("utf-8", "replace"), "expression",
                               source=(source, text, err.position, err.length))
        self.n_inputs = c.dc_program_n_inputs(self.prog)
        # a constraint: (sense 0 <=, 1 >=, 2 ==, name byte span, operator byte span)
        self.constraint = None
        if constraint:
            self.constraint = (<int>info.sense, info.name_pos, info.name_len, info.op_pos,
                               info.op_len)

    def __dealloc__(self):
        self._pool = None
        if self.prog is not NULL:
            c.dc_program_free(self.prog)
            self.prog = NULL

    cdef _Workspace _borrow(self):
        cdef _Workspace w
        try:
            return self._pool.pop()
        except IndexError:
            w = _Workspace()
            w.ws = c.dc_workspace_new(self.prog, NULL)
            if w.ws is NULL:
                raise MemoryError()
            return w

    cdef void _give_back(self, _Workspace w):
        if len(self._pool) < _POOL_LIMIT:
            self._pool.append(w)

    @property
    def n_instructions(self):
        return c.dc_program_n_instructions(self.prog)

    @property
    def n_registers(self):
        return c.dc_program_n_registers(self.prog)

    def evaluate(self, object x):
        """f(x) for one C-contiguous float64 row of length n_inputs."""
        cdef Py_buffer bx
        cdef double value = 0.0
        cdef c.dc_status st
        cdef _Workspace w
        _doubles(x, &bx, 0)
        try:
            if <size_t>(bx.len // 8) != self.n_inputs:
                raise ValueError(f"expected {self.n_inputs} values, got {bx.len // 8}")
            w = self._borrow()
            with nogil:
                st = c.dc_eval(self.prog, w.ws, <const double *>bx.buf, &value)
            self._give_back(w)
        finally:
            PyBuffer_Release(&bx)
        if st != c.DC_OK:
            _raise_status(st)
        return value

    def evaluate_many(self, object X):
        """One value per row of a C-contiguous float64 (rows, n_inputs) array."""
        cdef Py_buffer bx, bo
        cdef c.dc_status st = c.DC_OK
        cdef size_t rows, stride = self.n_inputs
        cdef _Workspace w
        _doubles(X, &bx, 0)
        try:
            if bx.ndim != 2 or <size_t>bx.shape[1] != self.n_inputs:
                raise ValueError(f"expected an array of shape (P, {self.n_inputs})")
            rows = bx.shape[0]
            # np.empty's default dtype is float64; a dtype argument and a typed
            # memoryview of the result cost more than the evaluation of 64 rows at n = 100
            out = _empty(rows)
            if rows == 0:
                return out
            _doubles(out, &bo, 1)
            w = self._borrow()
            with nogil:
                st = c.dc_eval_many(self.prog, w.ws, <const double *>bx.buf, rows, stride,
                                    <double *>bo.buf)
            PyBuffer_Release(&bo)
            self._give_back(w)
        finally:
            PyBuffer_Release(&bx)
        if st != c.DC_OK:
            _raise_status(st)
        return out

    def gradient(self, object x):
        """(f(x), grad f(x)) for one C-contiguous float64 row."""
        cdef Py_buffer bx, bg
        cdef double value = 0.0
        cdef c.dc_status st
        cdef _Workspace w
        grad = np.empty(self.n_inputs, dtype=np.float64)
        _doubles(x, &bx, 0)
        try:
            if <size_t>(bx.len // 8) != self.n_inputs:
                raise ValueError(f"expected {self.n_inputs} values, got {bx.len // 8}")
            _doubles(grad, &bg, 1)
            try:
                w = self._borrow()
                with nogil:
                    st = c.dc_gradient(self.prog, w.ws, <const double *>bx.buf, &value,
                                       <double *>bg.buf)
                self._give_back(w)
            finally:
                PyBuffer_Release(&bg)
        finally:
            PyBuffer_Release(&bx)
        if st != c.DC_OK:
            _raise_status(st)
        return value, grad

    def separable_terms(self, const double[:, ::1] T):
        cdef Py_ssize_t rows = T.shape[0], n = self.n_inputs
        out = np.zeros((rows, n), dtype=np.float64)
        cdef double[:, ::1] G = out
        cdef c.dc_status st = c.DC_OK
        cdef _Workspace w
        if c.dc_structure_kind_of(self.prog) > 1:  # not constant or separable
            _raise_status(c.DC_ERR_NOT_SEPARABLE, "the expression is not separable")
        if rows == 0 or n == 0:
            return out
        w = self._borrow()
        with nogil:
            st = c.dc_separable_terms(self.prog, w.ws, &T[0, 0], rows, n, &G[0, 0])
        self._give_back(w)
        if st != c.DC_OK:
            _raise_status(st)
        return out

    def range(self, const double[::1] lo, const double[::1] hi):
        """(f_lo, f_hi): an interval enclosing every value over the box [lo, hi] (n_inputs
        values each; loose in general, -inf/inf where unknown)."""
        cdef double f_lo = 0.0, f_hi = 0.0
        cdef double dummy = 0.0
        cdef c.dc_status st
        if <size_t>lo.shape[0] != self.n_inputs or <size_t>hi.shape[0] != self.n_inputs:
            raise ValueError(f"expected {self.n_inputs} bounds")
        with nogil:
            st = c.dc_program_range(self.prog, &lo[0] if lo.shape[0] else &dummy,
                                    &hi[0] if hi.shape[0] else &dummy, NULL, &f_lo, &f_hi)
        if st != c.DC_OK:
            _raise_status(st)
        return f_lo, f_hi

    def disassemble(self):
        cdef size_t need = c.dc_program_disassemble(self.prog, NULL, 0)
        cdef char *buf = <char *>malloc(need + 1)
        if buf is NULL:
            raise MemoryError()
        try:
            c.dc_program_disassemble(self.prog, buf, need + 1)
            return buf[:need].decode("utf-8", "replace")
        finally:
            free(buf)

    def structure(self):
        """(kind, identical_terms, group ids, used flags, edges or None)."""
        cdef size_t n = self.n_inputs
        cdef size_t count = 0
        cdef c.dc_status st
        group = np.full(n, -1, dtype=np.int64)
        used = np.zeros(n, dtype=np.uint8)
        cdef int64_t[::1] gv = group
        cdef unsigned char[::1] uv = used
        if n:
            c.dc_structure_groups(self.prog, &gv[0])
            c.dc_structure_used(self.prog, &uv[0])
        kind = c.dc_structure_kind_name(c.dc_structure_kind_of(self.prog)).decode()
        identical = bool(c.dc_structure_identical_terms(self.prog))
        st = c.dc_structure_edges(self.prog, NULL, 0, &count)
        edges = None
        cdef int64_t[:, ::1] ev
        if st == c.DC_OK:
            edges = np.zeros((count, 2), dtype=np.int64)
            if count:
                ev = edges
                c.dc_structure_edges(self.prog, &ev[0, 0], count, &count)
        return kind, identical, group, used.astype(bool), edges


def c_version():
    return c.dc_version().decode()
