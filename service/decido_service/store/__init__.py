"""The store: keys, usage counters and run records behind one async protocol.

:class:`Store` is what the service needs from storage; every method is a coroutine, and a
backend keeps blocking work off the event loop itself. The embedded backend is SQLite
(:mod:`decido_service.store.sqlite`), the server one PostgreSQL
(:mod:`decido_service.store.postgres`); :func:`open_store` picks the backend from the URL.
Nothing outside this package knows SQL.

The records (:mod:`~decido_service.store.records`), the run and key rows
(:mod:`~decido_service.store.run_rows`, :mod:`~decido_service.store.key_rows`) and the
admission rule every backend applies (:mod:`~decido_service.store.admission_rule`) are
modules of their own; the names the service uses are re-exported here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from decido_service.store.admission_rule import WINDOWS, judge, window_bounds
from decido_service.store.records import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionEntry,
    DecisionRecord,
    KeyRecord,
    StoreError,
    iso_utc,
    ordered_id,
)
from decido_service.store.run_rows import (
    COUNT_RUNS_SQL,
    FINISHED_STATES,
    RUN_FIELDS,
    RUN_STATES,
    RUN_UPDATABLE,
)
from decido_service.store.webhook_sql import WebhookStore

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
    "WebhookStore",
    "iso_utc",
    "judge",
    "open_store",
    "ordered_id",
    "window_bounds",
]


@runtime_checkable
class Store(WebhookStore, Protocol):
    """What the service needs from storage (every method a coroutine; the webhooks'
    methods are :class:`~decido_service.store.webhook_sql.WebhookStore`'s)."""

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
        transaction (:func:`~decido_service.store.admission_rule.logged`)."""

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
