"""Per-address allowances of the unauthenticated endpoints, shared by every worker process.

``GET /v1/health``, ``/v1/engines``, ``/v1/openapi.json`` and ``/v1/docs`` are counted on
the client address's ``ip.minute`` counter. Those counters are not usage of a key (nothing
is billed on them), so they do not go through the SQLite store: a write transaction per
health probe would cost more than the probe. They live in a small memory-mapped table
beside the database (``<db>-addresses``), which every worker maps through
:class:`decido.counters.SharedCounters`:

- **Exact across processes, without a lock**: a check-and-increment is one 16-byte
  compare-and-swap in C (the address's hash, its window's end and the count in one step),
  so with N concurrent requests against a limit of L exactly L are admitted, whichever
  workers they reach, with no system call and no lock that a killed worker could leave
  held. (A build of decido without an inline 16-byte CAS takes an exclusive ``flock``
  around each call instead: still exact.)
- **Layout**: ``SLOTS`` slots of 16 bytes; an address's counter lives in one of the
  ``PROBES`` slots from its hash on, and a slot whose window has ended is free again (the
  file format is in ``csrc/common/counters.c``).
- **Full table**: if every probed slot belongs to another live address (tens of thousands
  of addresses in one window), the request is refused with the state of a full counter, so
  the service answers 429 rather than admitting more than it can count.
- The file is rebuilt when its header does not match (another version, a truncated file);
  it holds nothing that must survive a restart, though a restart keeps it.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache

from decido.counters import SharedCounters
from decido_service.store import Admission, CounterSpec, CounterState, window_bounds

__all__ = ["PROBES", "SLOTS", "AddressCounters", "table_path"]

SLOTS = 1 << 16
PROBES = 64
_WINDOWS = ("minute", "hour")
_LENGTHS = {"minute": 60, "hour": 3600}  # seconds: the windows of window_bounds
_tuple = tuple.__new__


def table_path(db_path: str) -> str:
    """Where the table of the database at ``db_path`` lives: ``<db_path>-addresses``."""
    return os.fspath(db_path) + "-addresses"


class AddressCounters:
    """Check-and-increment of per-address counters in a table shared through ``mmap``.

    Same contract as :meth:`Store.admit <decido_service.store.Store.admit>` for one spec
    with a ``minute`` or ``hour`` window. Thread-safe; safe across processes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._table = SharedCounters(self.path, slots=SLOTS, probes=PROBES)

    def admit(self, spec: CounterSpec, now: float) -> Admission:
        """Count ``spec.amount`` on the counter unless that would pass ``spec.limit``."""
        # every unauthenticated request comes here: the counter's hash and window length
        # are looked up once per spec, the window is computed inline (the floors of
        # window_bounds), and the result tuples are built by tuple.__new__ (a NamedTuple's
        # own __new__ is a Python function)
        ident, length = _plan(spec)
        t = int(now // 1)
        start = t - t % length
        end = start + length
        limit = spec.limit
        admitted, used = self._table.admit(ident, start, end, spec.amount, limit)
        if limit is None:
            # refused without a limit: no slot for the address (a full table)
            state = _tuple(CounterState, (spec.name, None, used if admitted else 0, None, end,
                                          start, end))
        else:
            remaining = limit - used if used < limit else 0
            state = _tuple(CounterState, (spec.name, limit, used, remaining, end, start, end))
        return _tuple(Admission, (admitted, [state], None if admitted else state, None))

    def peek(self, spec: CounterSpec, now: float) -> CounterState:
        """The counter's state; nothing is counted."""
        ident, _ = _plan(spec)
        start, end = window_bounds(spec.window, now)
        return _state(spec, self._table.peek(ident, start, end), start, end)

    def close(self) -> None:
        """Unmap and close the table."""
        self._table.close()


@lru_cache(maxsize=4096)
def _plan(spec: CounterSpec) -> tuple[int, int]:
    """The counter's hash and its window's length in seconds."""
    length = _LENGTHS.get(spec.window)
    if length is None:
        raise ValueError(f"address counters have windows {_WINDOWS}, not {spec.window!r}")
    return _hash(spec.name, spec.window, spec.subject), length


@lru_cache(maxsize=4096)
def _hash(name: str, window: str, subject: str) -> int:
    """A nonzero 64-bit hash of (name, window, subject), the same in every process."""
    digest = hashlib.blake2b(f"{name}\0{window}\0{subject}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") or 1


def _state(spec: CounterSpec, used: int, start: int, end: int) -> CounterState:
    remaining = None if spec.limit is None else max(spec.limit - used, 0)
    return CounterState(spec.name, spec.limit, used, remaining, end, start, end)
