"""Exact window counters shared by the processes of one machine.

:class:`SharedCounters` keeps counters in a table in a file that every process maps
(``MAP_SHARED``). A check-and-increment (:meth:`SharedCounters.admit`) is one 16-byte
compare-and-swap in C, made with the GIL released: no lock, no system call, nothing that a
killed process could leave held, and with N concurrent calls against a limit L exactly L
are admitted, whichever processes and threads make them.

- **Counters.** A counter is a nonzero 64-bit ``ident`` (a hash of what is counted, made
  by the caller; the same in every process) counted in a window ``[start, end)`` of Unix
  seconds. A call in a later window starts the counter again from zero, in place. A call
  whose window ended while it was in flight (the counter has moved on to a later window)
  counts nothing and is judged as if its window's count were 0.
- **Limits.** A call is admitted unless ``used + amount > limit``. ``limit=None`` is no
  limit, and so is any limit above ``2**32 - 2`` (counts saturate there instead of
  wrapping).
- **Table.** ``slots`` slots of 16 bytes after a 16-byte header (the layout, a file format,
  is in ``csrc/common/counters.c``). A counter lives in one of the ``probes`` slots from
  ``ident % slots`` on; a slot whose window ended by the caller's window start is free
  again. When every probed slot holds another live counter the call is refused with
  ``used == limit`` (``2**32 - 1`` without a limit), the answer of a full counter: a
  service answers 429 rather than admitting what it cannot count.
- **File.** Created with mode ``0o600`` when missing. At open, under a one-time exclusive
  ``flock``, a file whose header or size does not match ``slots`` is re-initialised (every
  counter back to zero), so every process sharing a file must use the same ``slots``. The
  table survives reopening; nothing in it needs to survive a reboot.
- **Without an inline 16-byte CAS** in the C build (:data:`LOCK_FREE` is False), every call
  holds an exclusive ``flock`` on the file (and a thread lock): still exact, at the cost of
  two system calls per call. ``lock=True`` asks for that mode anyway.
- **Processes.** Open the table in each process. A lock-free instance keeps working in a
  child made by ``fork()`` (the mapping is shared); a locking one refuses to, since a
  ``flock`` is held per open file, which parent and child share.
"""

from __future__ import annotations

import fcntl
import mmap
import operator
import os
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

from decido import _counters
from decido.errors import CounterTableError

__all__ = ["LOCK_FREE", "CounterTableError", "SharedCounters"]

#: True when the C build has an inline 16-byte compare-and-swap: calls take no lock.
LOCK_FREE: bool = _counters.lock_free()

_U32 = 2**32 - 1
_U64 = 2**64 - 1
_COUNT_MAX = 2**32 - 2  # counts saturate here; larger limits are no limit
_NO_LIMIT = 2**32 - 1  # the C library's "no limit"
_MAX_SLOTS = 2**32

_T = TypeVar("_T")


class SharedCounters:
    """Window counters in a table shared through a memory-mapped file.

    Args:
        path: the table's file; created (mode ``0o600``) when missing.
        slots: number of slots (1 to ``2**32``); a file made with another number is
            re-initialised.
        probes: how many slots from ``ident % slots`` on a counter may use
            (1 to ``slots``).
        lock: ``None`` locks (``flock``) around each call only when the C build has no
            inline 16-byte CAS; ``True`` always does; ``False`` never does, and is refused
            where the build has no inline CAS.

    Thread-safe and safe across processes. Use it as a context manager, or call
    :meth:`close` once no call is in progress.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        slots: int = 65536,
        probes: int = 64,
        lock: bool | None = None,
    ) -> None:
        slots = operator.index(slots)
        probes = operator.index(probes)
        if not 1 <= slots <= _MAX_SLOTS:
            raise ValueError(f"slots must be 1..{_MAX_SLOTS}, not {slots}")
        if not 1 <= probes <= min(slots, _U32):
            raise ValueError(f"probes must be 1..{min(slots, _U32)} (slots), not {probes}")
        if lock is False and not LOCK_FREE:
            raise ValueError("lock=False needs an inline 16-byte compare-and-swap, which this "
                             "build of decido does not have")
        self.path = os.fspath(path)
        self.slots = slots
        self.probes = probes
        self._locked = (not LOCK_FREE) if lock is None else bool(lock)
        self._thread_lock = threading.Lock()
        self._pid = os.getpid()
        size = _counters.table_size(slots)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                self._map, self._table = _open_table(fd, size, slots)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    @property
    def lock_free(self) -> bool:
        """True when calls take no lock: the C build has an inline 16-byte CAS and
        ``lock=True`` was not asked for."""
        return not self._locked

    def admit(
        self, ident: int, start: int, end: int, amount: int, limit: int | None
    ) -> tuple[bool, int]:
        """Count ``amount`` on counter ``ident`` in the window ``[start, end)`` unless the
        count would pass ``limit``.

        Returns ``(admitted, used)``: ``used`` is the count after the call (the new count
        when admitted, the unchanged count when refused over the limit, ``limit`` when the
        table has no slot for the counter; see the module's notes).

        Raises:
            ValueError: ``ident`` not in 1..2**64-1, not ``0 <= start < end < 2**32``,
                ``amount`` not in 1..2**32-2 or a negative ``limit``; or the table is
                closed.
        """
        if not (0 < ident <= _U64 and 0 <= start < end <= _U32):
            raise ValueError(_window_error(ident, start, end))
        if not 0 < amount <= _COUNT_MAX:
            raise ValueError(f"amount must be 1..{_COUNT_MAX}, not {amount!r}")
        if limit is None or limit > _COUNT_MAX:
            limit = _NO_LIMIT
        elif limit < 0:
            raise ValueError(f"limit must be None or >= 0, not {limit!r}")
        if self._locked:
            return self._under_lock(
                self._table.admit, ident, start, end, amount, limit, self.probes
            )
        return self._table.admit(ident, start, end, amount, limit, self.probes)

    def peek(self, ident: int, start: int, end: int) -> int:
        """The count of counter ``ident`` in the window ``[start, end)``, 0 when it has
        none; nothing is counted. Raises ``ValueError`` as :meth:`admit` does."""
        if not (0 < ident <= _U64 and 0 <= start < end <= _U32):
            raise ValueError(_window_error(ident, start, end))
        if self._locked:
            return self._under_lock(self._table.peek, ident, end, self.probes)
        return self._table.peek(ident, end, self.probes)

    def close(self) -> None:
        """Unmap and close the table (idempotent). No call may be in progress."""
        with self._thread_lock:
            if self._fd < 0:
                return
            self._table.release()
            try:
                self._map.close()
            finally:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> SharedCounters:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "lock-free" if self.lock_free else "locked"
        return (f"SharedCounters({self.path!r}, slots={self.slots}, probes={self.probes}, "
                f"{mode}{', closed' if self._fd < 0 else ''})")

    def _under_lock(self, call: Callable[..., _T], *args: int) -> _T:
        """``call(*args)`` holding the thread lock and an exclusive ``flock``."""
        if os.getpid() != self._pid:
            raise RuntimeError("decido: a locking SharedCounters cannot be used across "
                               "fork(); open the table again in the child")
        with self._thread_lock:
            if self._fd < 0:
                raise ValueError("decido: shared counters: the table is closed")
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                return call(*args)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)


def _open_table(fd: int, size: int, slots: int) -> tuple[mmap.mmap, _counters.Table]:
    """Map the file (the caller holds an exclusive ``flock``), re-initialising it unless
    it is a valid table of ``slots`` slots."""
    fresh = os.fstat(fd).st_size != size
    if fresh:
        os.ftruncate(fd, 0)  # zero every slot
        os.ftruncate(fd, size)
    mapped = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    table = _counters.Table(mapped)
    try:
        if not fresh:
            try:
                table.check()
            except CounterTableError:
                fresh = True
        if fresh:
            table.init(slots)
    except BaseException:
        table.release()
        mapped.close()
        raise
    return mapped, table


def _window_error(ident: object, start: object, end: object) -> str:
    if not (isinstance(ident, int) and 0 < ident <= _U64):
        return f"ident must be 1..2**64-1, not {ident!r}"
    return f"the window must satisfy 0 <= start < end < 2**32, not [{start!r}, {end!r})"
