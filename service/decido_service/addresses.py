"""Per-address allowances of the unauthenticated endpoints, shared by every worker process.

``GET /v1/health``, ``/v1/engines``, ``/v1/openapi.json`` and ``/v1/docs`` are counted on
the client address's ``ip.minute`` counter. Those counters are not usage of a key (nothing
is billed on them), so they do not go through the SQLite store: a write transaction per
health probe would cost more than the probe. They live in a small memory-mapped table
beside the database (``<db>-addresses``), which every worker maps:

- **Exact across processes**: every check-and-increment holds an exclusive ``flock`` on the
  table for a few microseconds, so with N concurrent requests against a limit of L exactly
  L are admitted, whichever workers they reach.
- **Layout**: a 16-byte header (magic, slot count) and ``SLOTS`` slots of 24 bytes: a 64-bit
  hash of (counter name, window, address), the window's end (epoch seconds) and the count.
  Lookup probes at most ``PROBES`` slots from the hash; a slot whose window has ended is
  free.
- **Full table**: if every probed slot belongs to another live address (tens of thousands
  of addresses in one window), the request is refused with the state of a full counter, so
  the service answers 429 rather than admitting more than it can count.
- The file is rebuilt when its header does not match (another version, a truncated file);
  it holds nothing that must survive a restart, though a restart keeps it.
"""

from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import struct
import threading
from functools import lru_cache

from decido_service.store import Admission, CounterSpec, CounterState, window_bounds

__all__ = ["PROBES", "SLOTS", "AddressCounters", "table_path"]

MAGIC = b"DCADDR01"
SLOTS = 1 << 16
PROBES = 64
_HEADER = struct.Struct("<8sQ")
_SLOT = struct.Struct("<QqQ")  # hash, window end, count
_SIZE = _HEADER.size + SLOTS * _SLOT.size
_WINDOWS = ("minute", "hour")


def table_path(db_path: str) -> str:
    """Where the table of the database at ``db_path`` lives: ``<db_path>-addresses``."""
    return os.fspath(db_path) + "-addresses"


class AddressCounters:
    """Check-and-increment of per-address counters in a table shared through ``mmap``.

    Same contract as :meth:`Store.admit <decido_service.store.Store.admit>` for one spec
    with a ``minute`` or ``hour`` window. Thread-safe; safe across processes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._thread_lock = threading.Lock()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if os.fstat(fd).st_size != _SIZE or os.pread(fd, _HEADER.size, 0) != \
                        _HEADER.pack(MAGIC, SLOTS):
                    os.ftruncate(fd, 0)  # zero every slot
                    os.ftruncate(fd, _SIZE)
                    os.pwrite(fd, _HEADER.pack(MAGIC, SLOTS), 0)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            self._map = mmap.mmap(fd, _SIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def admit(self, spec: CounterSpec, now: float) -> Admission:
        """Count ``spec.amount`` on the counter unless that would pass ``spec.limit``."""
        start, end = _bounds(spec, now)
        ident = _hash(spec.name, spec.window, spec.subject)
        with self._thread_lock:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                slot, used = self._find(ident, end, now)
                if slot is None:  # no free slot near this address: refuse, count nothing
                    state = _state(spec, spec.limit or 0, start, end)
                    return Admission(False, [state], state)
                if spec.limit is not None and used + spec.amount > spec.limit:
                    state = _state(spec, used, start, end)
                    return Admission(False, [state], state)
                used += spec.amount
                _SLOT.pack_into(self._map, slot, ident, end, used)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        return Admission(True, [_state(spec, used, start, end)], None)

    def peek(self, spec: CounterSpec, now: float) -> CounterState:
        """The counter's state; nothing is counted."""
        start, end = _bounds(spec, now)
        ident = _hash(spec.name, spec.window, spec.subject)
        with self._thread_lock:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                _, used = self._find(ident, end, now)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        return _state(spec, used, start, end)

    def _find(self, ident: int, end: int, now: float) -> tuple[int | None, int]:
        """``(offset, count)`` of the counter's slot in the window ending at ``end``: its
        own slot if it has one, else the first free one (count 0), else ``None``."""
        free = None
        home = ident % SLOTS
        for probe in range(PROBES):
            offset = _HEADER.size + ((home + probe) % SLOTS) * _SLOT.size
            slot_ident, slot_end, count = _SLOT.unpack_from(self._map, offset)
            if slot_ident == ident:
                return offset, count if slot_end == end else 0
            if free is None and (slot_ident == 0 or slot_end <= now):
                free = offset  # empty, or its window has ended
        return free, 0

    def close(self) -> None:
        """Unmap and close the table."""
        self._map.close()
        os.close(self._fd)


def _bounds(spec: CounterSpec, now: float) -> tuple[int, int]:
    if spec.window not in _WINDOWS:
        raise ValueError(f"address counters have windows {_WINDOWS}, not {spec.window!r}")
    return window_bounds(spec.window, now)


@lru_cache(maxsize=4096)
def _hash(name: str, window: str, subject: str) -> int:
    """A nonzero 64-bit hash of (name, window, subject), the same in every process."""
    digest = hashlib.blake2b(f"{name}\0{window}\0{subject}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") or 1


def _state(spec: CounterSpec, used: int, start: int, end: int) -> CounterState:
    remaining = None if spec.limit is None else max(spec.limit - used, 0)
    return CounterState(spec.name, spec.limit, used, remaining, end, start, end)
