"""The store interface: keys, usage counters and run records behind one small protocol.

Every method is synchronous and thread-safe; the app calls them through a thread executor.
The embedded backend is SQLite (:mod:`decido_service.store.sqlite`); backends for a fleet of
nodes plug into the same :class:`Store` protocol later.

Counters are identified by ``(name, subject, window)``: ``name`` such as ``"decide.minute"``,
``subject`` a key id or a client address, ``window`` ``"minute"``, ``"hour"`` or
``"month"`` (UTC calendar month). :meth:`Store.admit` checks and increments all the counters
of one request in one transaction: either every counter has room and all are incremented, or
none is touched and the first counter without room is reported as ``refused``.
:meth:`Store.admit_many` does that for several requests in one transaction (the service's
group commit: one commit for every request that asked in the same event-loop turn).
"""

from __future__ import annotations

import calendar
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, NamedTuple, Protocol, TypedDict, runtime_checkable

__all__ = [
    "WINDOWS",
    "Admission",
    "AdmissionRequest",
    "CounterSpec",
    "CounterState",
    "KeyRecord",
    "Store",
    "StoreError",
    "iso_utc",
    "open_store",
    "window_bounds",
]

WINDOWS: tuple[str, ...] = ("minute", "hour", "month")


class StoreError(RuntimeError):
    """The store cannot do what was asked (unreachable, locked past the busy timeout,
    closed, or a schema newer than this code). The app answers 503 ``store_unavailable``."""


class KeyRecord(TypedDict):
    """A key as the store returns it: public fields only, never the secret or its hash."""

    id: str
    prefix: str
    plan: str
    tier: str
    label: str | None
    created_at: str
    revoked_at: str | None
    limits: dict[str, Any] | None


class CounterSpec(NamedTuple):
    """One counter a request must pass: ``limit`` ``None`` = unlimited (still counted)."""

    name: str
    subject: str
    window: str
    limit: int | None
    amount: int


class CounterState(NamedTuple):
    """A counter's state in its current window (after the increment when admitted).

    ``reset`` equals ``window_end``: the epoch second at which the window ends."""

    name: str
    limit: int | None
    used: int
    remaining: int | None
    reset: int
    window_start: int
    window_end: int


class Admission(NamedTuple):
    """Result of :meth:`Store.admit`: ``counters`` in the order of the specs.

    ``revoked_at`` is set (and ``admitted`` false, ``refused`` ``None``) when the admission
    named a key that is revoked or no longer exists."""

    admitted: bool
    counters: list[CounterState]
    refused: CounterState | None
    revoked_at: str | None = None


class AdmissionRequest(NamedTuple):
    """One request's counters for :meth:`Store.admit_many`; ``key_id`` (optional) is
    checked for revocation in the same transaction."""

    specs: Sequence[CounterSpec]
    now: float | None = None
    key_id: str | None = None


@runtime_checkable
class Store(Protocol):
    """What the service needs from storage. All methods are synchronous and thread-safe."""

    def migrate(self) -> None:
        """Bring the schema to the current version (idempotent, safe across processes)."""

    def ping(self) -> bool:
        """True when the store answers a trivial query."""

    def create_key(
        self,
        plan: str,
        tier: str,
        label: str | None = None,
        limits: dict[str, Any] | None = None,
    ) -> tuple[KeyRecord, str]:
        """Create a key; return its record and the secret (the only time it is seen)."""

    def find_key(self, secret: str) -> KeyRecord | None:
        """The key for a presented secret (revoked keys included), else ``None``.
        Malformed secrets return ``None`` without a lookup."""

    def list_keys(self) -> list[KeyRecord]:
        """All keys, oldest first."""

    def revoke_key(self, key_id: str) -> bool:
        """Set ``revoked_at`` (kept if already set); ``False`` for an unknown id."""

    def admit(self, specs: Sequence[CounterSpec], now: float | None = None,
              key_id: str | None = None) -> Admission:
        """All-or-nothing check-and-increment of ``specs`` in one transaction (and, with
        ``key_id``, a check that the key is not revoked)."""

    def admit_many(self, requests: Sequence[AdmissionRequest]) -> list[Admission]:
        """:meth:`admit` for each request, in order, in one transaction."""

    def peek(self, specs: Sequence[CounterSpec], now: float | None = None) -> list[CounterState]:
        """Current states of ``specs`` without counting."""

    def record_run(self, run: Mapping[str, Any]) -> None:
        """Store one optimization run record."""

    def close(self) -> None:
        """Close every connection; the store is unusable afterwards."""


def window_bounds(window: str, now: float) -> tuple[int, int]:
    """``(start, end)`` in epoch seconds of the UTC ``window`` containing ``now``.

    ``minute`` and ``hour`` are floors of the epoch; ``month`` is the calendar month, so
    it is 28 to 31 days long and December rolls over into January of the next year."""
    t = int(now // 1)
    if window == "minute":
        start = t - t % 60
        return start, start + 60
    if window == "hour":
        start = t - t % 3600
        return start, start + 3600
    if window == "month":
        return _month_bounds(t // 60)  # months start and end on whole minutes
    raise ValueError(f"unknown counter window {window!r}; expected one of {WINDOWS}")


@lru_cache(maxsize=64)
def _month_bounds(minute: int) -> tuple[int, int]:
    dt = datetime.fromtimestamp(minute * 60, tz=timezone.utc)
    year, month = dt.year, dt.month
    start = calendar.timegm((year, month, 1, 0, 0, 0))
    year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return start, calendar.timegm((year, month, 1, 0, 0, 0))


def iso_utc(epoch: float) -> str:
    """``2025-01-31T23:59:59Z``: ISO 8601, UTC, whole seconds."""
    return datetime.fromtimestamp(int(epoch // 1), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def open_store(url: str = "./decido.db", *, clock: Callable[[], float] | None = None) -> Store:
    """Open (and migrate) the store at ``url``.

    Accepted: ``sqlite:///abs/path.db`` (absolute, as in ``file:///``; ``sqlite:////abs``
    works too), ``sqlite:relative/path.db``, or a plain filesystem path. Query parameter
    ``?synchronous=full`` makes every commit fsync (survives power loss; the default,
    ``normal``, survives a killed process). ``clock`` stamps ``created_at`` of new keys."""
    from decido_service.store.sqlite import SQLiteStore, parse_sqlite_url

    path, options = parse_sqlite_url(url)
    store = SQLiteStore(path, clock=clock, **options)
    store.migrate()
    return store
