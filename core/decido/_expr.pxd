# The compiled-program extension type, for other Cython modules (_engine).
cimport decido._capi as c


cdef class _Workspace:
    cdef c.dc_workspace *ws


cdef class Program:
    cdef c.dc_program *prog
    cdef list _pool
    cdef readonly size_t n_inputs
    cdef readonly object constraint
    cdef _Workspace _borrow(self)
    cdef void _give_back(self, _Workspace w)
