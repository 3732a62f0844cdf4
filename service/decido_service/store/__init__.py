"""The store: keys, usage counters and run records behind one async protocol.

:class:`Store` is what the service needs from storage; every method is a coroutine, and a
backend keeps blocking work off the event loop itself. The embedded backend is SQLite
(:mod:`decido_service.store.sqlite`), the server one PostgreSQL
(:mod:`decido_service.store.postgres`); :func:`open_store` picks the backend from the URL.
Nothing outside this package knows SQL.

Counters are identified by ``(name, subject, window)``: ``name`` such as ``"decide.minute"``,
``subject`` a key id or a client address, ``window`` ``"minute"``, ``"hour"`` or
``"month"`` (UTC calendar month, :func:`window_bounds`).

**The admission rule** (:func:`judge`, which every backend applies): a request is a list of
:class:`CounterSpec`; each spec is

- *counted* (``amount`` > 0): it passes when ``limit is None`` or ``used + amount <= limit``;
- a *gate* (``gate=True``): never incremented; it passes when ``limit is None`` or
  ``used < limit`` (there is room for one more);
- *observed* (``amount == 0``, not a gate): never incremented, always passes.

A request is admitted when every spec passes; then every counted spec is incremented, all
in one atomic step. Otherwise nothing is written and ``refused`` is the first spec that did
not pass. Requests of one :meth:`Store.admit_many` call are judged in order, each against
the counts the ones before it left, and committed together: the service's group commit.
A backend must make this exact under any concurrency (SQLite: one write transaction;
a server database: row locks on the counters of the batch).
"""

from __future__ import annotations

import calendar
import json
import os
import random
import uuid
from collections.abc import Callable, Container, Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, NamedTuple, Protocol, TypedDict, runtime_checkable

from decido_service import keys

__all__ = [
    "COUNT_RUNS_SQL",
    "WINDOWS",
    "Admission",
    "AdmissionRequest",
    "CounterSpec",
    "CounterState",
    "DecisionEntry",
    "DecisionRecord",
    "FINISHED_STATES",
    "RUN_FIELDS",
    "RUN_STATES",
    "RUN_UPDATABLE",
    "KeyRecord",
    "Store",
    "StoreError",
    "iso_utc",
    "judge",
    "open_store",
    "ordered_id",
    "window_bounds",
]

WINDOWS: tuple[str, ...] = ("minute", "hour", "month")

#: runs by state (:meth:`Store.count_runs`), the same SQL on both backends; rows written
#: before runs had states count as ``succeeded``
COUNT_RUNS_SQL = "SELECT COALESCE(state, 'succeeded') AS s, count(*) FROM runs GROUP BY s"

#: The columns of a run row: :meth:`Store.record_run` writes them (missing ones NULL),
#: :meth:`Store.get_run` and :meth:`Store.page_runs` return them (plus ``cancel_requested``).
#: ``document`` is the run document as JSON text (the service's, opaque to the store).
RUN_FIELDS: tuple[str, ...] = (
    "id", "key_id", "created_at", "engine", "dims", "status", "value", "evaluations",
    "elapsed_ms", "goal", "seed", "state", "document", "finished_at", "owner", "lease_until",
)
#: The columns :meth:`Store.update_run` may change.
RUN_UPDATABLE: frozenset[str] = frozenset(
    ("status", "value", "evaluations", "elapsed_ms", "seed", "state", "document",
     "finished_at", "owner", "lease_until"))
#: A run's lifecycle: ``queued`` -> ``running`` -> one of :data:`FINISHED_STATES`.
RUN_STATES: tuple[str, ...] = ("queued", "running", "succeeded", "failed", "cancelled")
#: The states a run ends in (it can be deleted then; cancelling it is refused).
FINISHED_STATES: frozenset[str] = frozenset(("succeeded", "failed", "cancelled"))


class StoreError(RuntimeError):
    """The store cannot do what was asked (unreachable, locked past the busy timeout,
    closed, missing, or a schema newer than this code). The app answers 503
    ``store_unavailable``."""


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
    """One counter a request passes (see the module docs for ``amount`` and ``gate``);
    ``limit`` ``None`` = unlimited."""

    name: str
    subject: str
    window: str
    limit: int | None
    amount: int = 1
    gate: bool = False


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
    """The answer to one request's counters: ``counters`` in the order of the specs.

    ``revoked_at`` is set (and ``admitted`` false, ``refused`` ``None``) when the admission
    named a key that is revoked or no longer exists."""

    admitted: bool
    counters: list[CounterState]
    refused: CounterState | None
    revoked_at: str | None = None


class DecisionRecord(TypedDict):
    """One entry of the decision log: ``summary`` is what a listing shows (method, best,
    the top of the ranking, timing); ``request`` and ``answer`` are the bodies (``answer``
    ``None`` when it was above the size cap; both ``None`` in a listing)."""

    id: str
    key_id: str
    created_at: str
    summary: dict[str, Any]
    request: Any
    answer: Any


class DecisionEntry(NamedTuple):
    """A decision-log entry as it is written: the columns of its row, the bodies already
    JSON text (the request as received, the answer as sent: nothing is encoded twice)."""

    id: str
    key_id: str
    created_at: str
    created_epoch: float
    summary: str
    request: str
    answer: str | None


class AdmissionRequest(NamedTuple):
    """One request's counters for :meth:`Store.admit_many`; ``key_id`` (optional) is
    checked for revocation in the same transaction; ``log`` (optional) is written to the
    decision log in that transaction when, and only when, the request is admitted."""

    specs: Sequence[CounterSpec]
    now: float
    key_id: str | None = None
    log: DecisionEntry | None = None


@runtime_checkable
class Store(Protocol):
    """What the service needs from storage (every method a coroutine)."""

    async def ping(self) -> bool:
        """True when the store answers a trivial query and its schema is current."""

    async def create_key(self, plan: str, tier: str, label: str | None = None,
                         limits: dict[str, Any] | None = None,
                         owner: str | None = None) -> tuple[KeyRecord, str]:
        """Create a key; return its record and the secret (the only time it is seen).
        With ``owner`` (a key id) the new key joins that key's account
        (:meth:`account_keys`); an unknown ``owner`` leaves it in an account of its own."""

    async def find_key(self, secret: str) -> KeyRecord | None:
        """The key for a presented secret (revoked keys included), else ``None``.
        Malformed secrets return ``None`` without a lookup."""

    async def get_key(self, key_id: str) -> KeyRecord | None:
        """The key with this public id, or ``None``."""

    async def list_keys(self) -> list[KeyRecord]:
        """All keys, oldest first."""

    async def revoke_key(self, key_id: str) -> bool:
        """Set ``revoked_at`` (kept if already set); ``False`` for an unknown id."""

    async def open_session(self, session_id: str, key_id: str, expires: float,
                           now: float) -> None:
        """Record a dashboard session of ``key_id`` valid until ``expires`` (epoch
        seconds); sessions expired at ``now`` are deleted on the way."""

    async def session_key(self, session_id: str, now: float) -> KeyRecord | None:
        """The key of a session that exists and has not expired at ``now`` (revoked keys
        included: the caller ends their sessions), else ``None``."""

    async def close_session(self, session_id: str) -> None:
        """End a session (nothing happens for an unknown id)."""

    async def account_keys(self, key_id: str) -> list[KeyRecord]:
        """The keys of ``key_id``'s account (itself, the key that made it and every key
        made by a key of the account; revoked ones included), oldest first; ``[]`` for an
        unknown id."""

    async def service_secret(self, name: str, candidate: str) -> str:
        """The secret stored under ``name``; the first call for a name stores
        ``candidate`` and returns it, every later call (any worker, any node) the same
        value."""

    async def admit_many(self, requests: Sequence[AdmissionRequest],
                         decisions: Sequence[DecisionEntry] = ()) -> list[Admission]:
        """:func:`judge` each request in order and commit the admitted ones' increments
        together (and, with ``key_id``, refuse a revoked key's request); ``decisions``, and
        the ``log`` of every admitted request, are written to the decision log in the same
        transaction (:func:`logged`)."""

    async def peek(self, specs: Sequence[CounterSpec], now: float) -> list[CounterState]:
        """Current states of ``specs`` without counting."""

    async def record_run(self, run: Mapping[str, Any]) -> None:
        """Store one optimization run record (:data:`RUN_FIELDS`; missing ``id`` and
        ``created_at`` are filled in, other missing fields are NULL)."""

    async def update_run(self, run_id: str, changes: Mapping[str, Any],
                         expect: Mapping[str, Any] | None = None) -> bool:
        """Set the :data:`RUN_UPDATABLE` columns in ``changes`` (``ValueError`` for any
        other); ``False`` when there is no such run, or (``expect``) when one of the
        row's columns named there is not equal to the value given (``None``: NULL)."""

    async def enqueue_run(self, run: Mapping[str, Any], cap: int | None,
                          queue_cap: int | None = None) -> str | None:
        """:meth:`record_run`, but only while the run's key has fewer than ``cap`` runs
        ``queued`` or ``running`` and the store fewer than ``queue_cap`` runs ``queued``
        (``None``: no cap), checked and written atomically for the key; ``None`` when
        written, else (nothing written) ``"cap"`` or ``"queue"``, the cap reached."""

    async def discard_run(self, run_id: str) -> bool:
        """Delete a run whatever its state (an admission that failed after it was
        recorded); ``False`` when there is no such run."""

    async def claim_run(self, owner: str, lease_until: float) -> dict[str, Any] | None:
        """Take the oldest ``queued`` run no process owns: it is ``owner``'s until
        ``lease_until`` (epoch seconds), and no other call takes it; ``None`` when there
        is none. Concurrent callers (any process, any node) never take the same run."""

    async def expired_runs(self, now: float) -> list[dict[str, Any]]:
        """The unfinished runs whose owner's lease ended before ``now``."""

    async def delete_runs(self, key_id: str) -> int:
        """Delete every finished run of ``key_id``; how many."""

    async def prune_runs(self, finished_before: str) -> int:
        """Delete every run (of any key) finished before ``finished_before`` (ISO 8601
        UTC, as :func:`iso_utc` writes); how many."""

    async def idempotency_begin(self, key_id: str, idem_key: str, fingerprint: str,
                                now: float, ttl: float) -> tuple[str, str | None]:
        """Look up ``idem_key`` of ``key_id`` (a record older than ``ttl`` seconds counts
        as absent and is replaced): ``("new", None)`` when there was none (a pending
        record is written), ``("pending", None)`` while the first request with it is
        still being answered, ``("mismatch", None)`` when it was used with another
        ``fingerprint``, ``("done", response)`` with the stored answer."""

    async def idempotency_end(self, key_id: str, idem_key: str,
                              response: str | None) -> None:
        """Store the answer of the request that began ``idem_key`` (``None``: forget the
        pending record, so a retry is a new request)."""

    async def get_run(self, key_id: str, run_id: str) -> dict[str, Any] | None:
        """One of ``key_id``'s runs (:data:`RUN_FIELDS` and ``cancel_requested``), or
        ``None`` (another key's too)."""

    async def page_runs(self, key_id: str, limit: int, starting_after: str | None = None,
                        state: str | None = None,
                        engine: str | None = None) -> list[dict[str, Any]]:
        """Up to ``limit`` of ``key_id``'s runs, newest first (creation order), after the
        one with id ``starting_after`` (``ValueError`` when that is not one of the key's),
        optionally only those in ``state`` or of ``engine``."""

    async def unfinished_runs(self) -> list[dict[str, Any]]:
        """Every run (of any key) not in one of :data:`FINISHED_STATES`, oldest first."""

    async def count_runs(self) -> dict[str, int]:
        """The number of runs (of every key) in each state that has any; finished runs
        count until their retention ends, rows from before runs had states as
        ``succeeded``."""

    async def request_cancel(self, key_id: str, run_id: str) -> str | None:
        """Set the run's ``cancel_requested`` flag unless it is finished; its state, or
        ``None`` when ``key_id`` has no such run."""

    async def delete_run(self, key_id: str, run_id: str) -> str | None:
        """Delete the run if it is finished; its state (the row is gone only when that is
        one of :data:`FINISHED_STATES`), or ``None`` when ``key_id`` has no such run."""

    async def list_decisions(self, key_id: str, limit: int,
                             starting_after: str | None = None) -> list[DecisionRecord]:
        """Up to ``limit`` of ``key_id``'s logged decisions, newest first, after the one
        with id ``starting_after`` (``ValueError`` when that is not one of the key's);
        ``request`` and ``answer`` are ``None`` in a listing."""

    async def get_decision(self, key_id: str, decision_id: str) -> DecisionRecord | None:
        """One of ``key_id``'s logged decisions, or ``None`` (another key's too)."""

    async def close(self) -> None:
        """Release every connection; the store is unusable afterwards."""


#: the columns of a key row in the order :func:`key_record` reads and :func:`new_key` writes
#: them (the hash of the secret follows them in a written row)
KEY_COLUMNS = "id, prefix, plan, tier, label, created_at, revoked_at, limits"
#: the account of the key whose id is the statement's parameter (none: NULL)
ACCOUNT_OF = "(SELECT COALESCE(account, id) FROM keys WHERE id = {})"
#: the key of a live session: the parameters are the session id and the time now
SESSION_KEY = ("SELECT " + KEY_COLUMNS + " FROM keys WHERE id = (SELECT key_id FROM sessions "
               "WHERE id = {} AND expires_epoch > {})")


def new_key(plan: str, tier: str, label: str | None, limits: dict[str, Any] | None,
            now: float) -> tuple[KeyRecord, str, tuple[Any, ...]]:
    """A new key: its record, its secret (shown once) and the row a backend inserts
    (:data:`KEY_COLUMNS`, then the secret's hash: only the hash is ever stored).
    ``ValueError`` for a malformed argument."""
    for what, value in (("plan", plan), ("tier", tier)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{what} must be a non-empty string")
    if label is not None and not isinstance(label, str):
        raise ValueError("label must be a string or None")
    if limits is not None and not isinstance(limits, dict):
        raise ValueError("limits must be a dict or None")
    secret, prefix, digest = keys.new_key_material()
    record = KeyRecord(id=uuid.uuid4().hex, prefix=prefix, plan=plan, tier=tier, label=label,
                       created_at=iso_utc(now), revoked_at=None, limits=limits)
    row = (record["id"], prefix, plan, tier, label, record["created_at"], None,
           None if limits is None else json.dumps(limits, sort_keys=True), digest)
    return record, secret, row


def key_record(row: Sequence[Any]) -> KeyRecord:
    """The record of a row read as :data:`KEY_COLUMNS`."""
    return KeyRecord(id=row[0], prefix=row[1], plan=row[2], tier=row[3], label=row[4],
                     created_at=row[5], revoked_at=row[6],
                     limits=None if row[7] is None else json.loads(row[7]))


def logged(requests: Sequence[AdmissionRequest], admissions: Sequence[Admission],
           decisions: Sequence[DecisionEntry]) -> list[DecisionEntry]:
    """The decision-log rows an :meth:`Store.admit_many` call writes: ``decisions``, then
    the ``log`` of each admitted request."""
    return [*decisions, *(r.log for r, a in zip(requests, admissions, strict=True)
                          if r.log is not None and a.admitted)]


def judge(specs: Sequence[CounterSpec], used: Sequence[int],
          bounds: Sequence[tuple[int, int]]) -> Admission:
    """The admission rule (module docs) for one request whose counters stand at ``used``
    in the windows ``bounds``: the states after it when admitted, before it when not.
    (Run for every request of every batch: plain loops, no ``zip(strict=True)``, whose
    keyword parsing cost more than the rule.)"""
    n = len(specs)
    if len(used) != n or len(bounds) != n:
        raise ValueError("judge: specs, used and bounds differ in length")
    refused_at = -1
    for i in range(n):
        spec = specs[i]
        limit = spec.limit
        if limit is not None and ((used[i] >= limit) if spec.gate
                                  else (used[i] + spec.amount > limit)):
            refused_at = i
            break
    admitted = refused_at < 0
    states = []
    for i in range(n):
        spec = specs[i]
        now_used = used[i] + spec.amount if admitted and not spec.gate else used[i]
        start, end = bounds[i]
        limit = spec.limit
        states.append(CounterState(spec.name, limit, now_used,
                                   None if limit is None else max(limit - now_used, 0),
                                   end, start, end))
    return Admission(admitted, states, None if admitted else states[refused_at])


#: one request of a batch as a backend prepares it: its specs, the time it is judged at,
#: its key id, its counters' windows
Prepared = tuple[list[CounterSpec], float, "str | None", list[tuple[int, int]]]
#: a counter row: name, subject, window, window start
Ident = tuple[str, str, str, int]


def increment(spec: CounterSpec) -> int:
    """What admitting ``spec`` adds to its counter (nothing for a gate or an observer)."""
    return 0 if spec.gate else spec.amount


def batch_totals(prepared: Sequence[Prepared], skip: Container[str]) -> dict[Ident, list[int]]:
    """``{counter row: [window end, total increment]}`` of a batch, the requests whose key
    id is in ``skip`` (revoked keys) left out: what a backend writes (and locks) in one
    statement before it judges the requests in order."""
    totals: dict[Ident, list[int]] = {}
    for specs, _, key_id, bounds in prepared:
        if key_id is not None and key_id in skip:
            continue
        for i, spec in enumerate(specs):  # bounds[i]: spec i's window (prepare())
            start, end = bounds[i]
            total = totals.get((spec.name, spec.subject, spec.window, start))
            if total is None:
                total = totals[(spec.name, spec.subject, spec.window, start)] = [end, 0]
            if not spec.gate:
                total[1] += spec.amount
    return totals


def counter_state(spec: CounterSpec, used: int, bounds: tuple[int, int]) -> CounterState:
    """The state of ``spec``'s counter at ``used`` in the window ``bounds``."""
    remaining = None if spec.limit is None else max(spec.limit - used, 0)
    return CounterState(spec.name, spec.limit, used, remaining, bounds[1], bounds[0], bounds[1])


def check_specs(specs: Sequence[CounterSpec]) -> list[CounterSpec]:
    """``specs`` as a list, or ``ValueError`` for a malformed or repeated spec."""
    out = [s if type(s) is CounterSpec else CounterSpec(*s) for s in specs]
    for s in out:
        if s.window not in WINDOWS:
            raise ValueError(f"unknown counter window {s.window!r}; expected one of {WINDOWS}")
        amount, limit = s.amount, s.limit
        if type(amount) is not int and not isinstance(amount, int) or amount < 0:
            raise ValueError(f"counter {s.name!r}: amount must be an integer >= 0")
        if limit is not None and (type(limit) is not int and not isinstance(limit, int)
                                  or limit < 0):
            raise ValueError(f"counter {s.name!r}: limit must be an integer >= 0 or None")
    if len(out) > 1 and len({(s.name, s.subject, s.window) for s in out}) < len(out):
        seen: set[tuple[str, str, str]] = set()
        for s in out:
            if (s.name, s.subject, s.window) in seen:
                raise ValueError(f"counter {s.name!r} for {s.subject!r} appears twice")
            seen.add((s.name, s.subject, s.window))
    return out


def prepare(requests: Sequence[AdmissionRequest]) -> list[Prepared]:
    """The requests of an :meth:`Store.admit_many` as a backend judges them: specs
    checked (:func:`check_specs`), the time as a float, the key id, each counter's window
    (:func:`window_bounds`, computed once per window and second of the batch)."""
    windows: dict[tuple[str, int], tuple[int, int]] = {}
    out: list[Prepared] = []
    for specs, now, key_id, _ in requests:
        checked = check_specs(specs)
        when = float(now)
        second = int(when // 1)
        bounds = []
        for spec in checked:
            found = windows.get((spec.window, second))
            if found is None:
                found = windows[(spec.window, second)] = window_bounds(spec.window, second)
            bounds.append(found)
        out.append((checked, when, key_id, bounds))
    return out


def check_run_changes(changes: Mapping[str, Any]) -> list[str]:
    """The columns of an :meth:`Store.update_run`, or ``ValueError`` for one that is not
    in :data:`RUN_UPDATABLE` (or for none at all)."""
    columns = list(changes)
    unknown = [c for c in columns if c not in RUN_UPDATABLE]
    if unknown or not columns:
        raise ValueError(f"a run update sets some of {sorted(RUN_UPDATABLE)}, not {unknown}")
    return columns


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


def ordered_id(prefix: str, epoch: float) -> str:
    """A new record id: ``prefix``, then 12 hex digits of the creation time in milliseconds
    and 12 of randomness (48 bits). Ids of later records sort after earlier ones (to the
    millisecond), so a table's unique index on them grows at its end: a decision-log row
    cost ~35 us of CPU to insert with fully random ids, ~19 us with these (batches of 10,
    WAL: ``benchmarks/load/log_ids.py``). The randomness only keeps ids apart, it guards
    nothing (every read of a record is scoped to its key), so it comes from the process's
    ``random`` generator (seeded from the OS) rather than a system call per id."""
    return f"{prefix}{int(epoch * 1000):012x}{random.getrandbits(48):012x}"


def iso_utc(epoch: float) -> str:
    """``2025-01-31T23:59:59Z``: ISO 8601, UTC, whole seconds."""
    return _iso_second(int(epoch // 1))


@lru_cache(maxsize=4)
def _iso_second(second: int) -> str:
    """:func:`iso_utc` of a whole second, remembered: every logged decision and run of the
    same second has the same text (formatting it cost ~3 us, the cache ~0.2 us)."""
    return datetime.fromtimestamp(second, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


async def open_store(url: str = "./decido.db", *, create: bool = True,
                     clock: Callable[[], float] | None = None,
                     decision_retention: float = 30 * 86400.0) -> Store:
    """Open (and migrate) the store at ``url``.

    ``postgresql://user@host/db`` (or ``postgres://``): the PostgreSQL backend
    (:mod:`decido_service.store.postgres`; URL options in
    :mod:`decido_service.store.postgres_url`). Otherwise SQLite:
    ``sqlite:///abs/path.db`` (absolute, as in ``file:///``; ``sqlite:////abs``
    works too), ``sqlite:relative/path.db``, or a plain filesystem path. Query parameter
    ``?synchronous=full`` makes every commit fsync (survives power loss; the default,
    ``normal``, survives a killed process). ``create=False``: a missing database (SQLite:
    file; PostgreSQL: schema) is a :class:`StoreError` naming what was looked for, and
    nothing is created. ``clock`` stamps ``created_at`` of new keys;
    ``decision_retention`` is how many seconds decision-log entries are kept."""
    from decido_service.store.postgres_url import is_postgres_url

    if is_postgres_url(url):
        return await _open_postgres(url, create=create, clock=clock,
                                    decision_retention=decision_retention)
    from decido_service.store.sqlite import SQLiteStore, parse_sqlite_url

    path, options = parse_sqlite_url(url)
    if not create and not os.path.exists(path):
        raise StoreError(f"no database at {os.path.abspath(path)} (from {url!r}); "
                         "`decido keys create` or `decido serve` creates one")
    store = SQLiteStore(path, clock=clock, decision_retention=decision_retention, **options)
    try:
        await store.migrate()
    except BaseException:
        await store.close()
        raise
    return store


async def _open_postgres(url: str, *, create: bool, clock: Callable[[], float] | None,
                         decision_retention: float) -> Store:
    try:
        from decido_service.store.postgres import PostgresStore
    except ImportError as exc:
        raise StoreError(f"a postgresql:// store needs asyncpg ({exc}); "
                         "pip install 'decido[service]'") from exc
    store = PostgresStore.from_url(url, clock=clock, decision_retention=decision_retention)
    try:
        await store.migrate(create=create)
    except BaseException:
        await store.close()
        raise
    return store
