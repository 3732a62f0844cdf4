# cython: language_level=3, freethreading_compatible=True
"""Thin binding over the shared counter table in C (csrc/common/counters.c,
csrc/include/decido.h).  The public API is decido.counters.SharedCounters."""
from libc.stdint cimport uint32_t, uint64_t

cimport decido._capi as c

from decido.errors import CounterTableError


cdef int _raise(c.dc_status st) except -1:
    if st != c.DC_OK:
        raise CounterTableError(
            c.dc_status_code(st).decode(),
            f"decido: shared counters: {c.dc_status_title(st).decode().lower()}",
        )
    return 0


def lock_free():
    """True when the C build has an inline 16-byte compare-and-swap."""
    return c.dc_counters_lock_free() == 1


def table_size(uint64_t slots):
    """Bytes of a table of ``slots`` slots; 0 when ``slots`` is 0 or too large."""
    return c.dc_counters_size(slots)


cdef class Table:
    """A counter table in a writable buffer (a shared ``mmap``).

    Holds the buffer until :meth:`release`; every call works on a reference of
    its own, so a release in another thread cannot unmap memory under a call
    (the owner's ``mmap.close()`` then fails instead).
    """

    cdef unsigned char[::1] _view

    def __cinit__(self, buffer):
        self._view = buffer

    cdef unsigned char[::1] _get(self):
        cdef unsigned char[::1] view = self._view
        if view is None:
            raise ValueError("decido: shared counters: the table is closed")
        if view.shape[0] == 0:
            _raise(c.DC_ERR_COUNTER_TABLE)
        return view

    def init(self, uint64_t slots):
        """Write the header and zero every slot (``dc_counters_init``); no other
        user of the table may be active."""
        cdef unsigned char[::1] view = self._get()
        cdef c.dc_status st
        with nogil:
            st = c.dc_counters_init(&view[0], <size_t>view.shape[0], slots)
        _raise(st)

    def check(self):
        """Raise :class:`CounterTableError` unless the header and size are valid."""
        cdef unsigned char[::1] view = self._get()
        _raise(c.dc_counters_check(&view[0], <size_t>view.shape[0]))

    def admit(self, uint64_t ident, uint32_t start, uint32_t end, uint32_t amount,
              uint32_t limit, uint32_t probes):
        """(admitted, used) of ``dc_counters_admit``; ``limit`` 2**32 - 1 is none."""
        cdef unsigned char[::1] view = self._get()
        cdef uint32_t used = 0
        cdef int admitted = 0
        cdef c.dc_status st
        with nogil:
            st = c.dc_counters_admit(&view[0], <size_t>view.shape[0], ident, start, end,
                                     amount, limit, probes, &used, &admitted)
        _raise(st)
        return admitted == 1, used

    def peek(self, uint64_t ident, uint32_t end, uint32_t probes):
        """The count of ``dc_counters_peek``: 0 when the window has none."""
        cdef unsigned char[::1] view = self._get()
        cdef uint32_t count = 0
        cdef c.dc_status st
        with nogil:
            st = c.dc_counters_peek(&view[0], <size_t>view.shape[0], ident, end, probes,
                                    &count)
        _raise(st)
        return count

    def release(self):
        """Drop the buffer (the owner can then close its ``mmap``)."""
        self._view = None
