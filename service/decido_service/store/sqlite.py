"""SQLite backend of the store: one WAL database file shared by every worker process.

- **Connections**: one per thread (and per process: a connection is never reused after a
  ``fork``), opened lazily; :meth:`SQLiteStore.close` closes those this process opened.
- **Durability**: ``journal_mode=WAL`` with ``synchronous=NORMAL`` by default. A commit is in
  the WAL file when ``COMMIT`` returns, so it survives ``kill -9`` of the process (the OS
  still holds the write); only a power loss or OS crash can drop the last commits. Pass
  ``synchronous="full"`` (URL ``?synchronous=full``) to fsync every commit as well.
- **Concurrency**: :meth:`SQLiteStore.admit_many` increments and checks its counters inside
  one ``BEGIN IMMEDIATE`` transaction, which takes the database's single write lock first, so
  concurrent admissions from any number of threads and processes are serialised and a limit
  is never overshot. A writer that finds the lock taken retries every 50 microseconds (not
  SQLite's busy handler, which sleeps 1, 2, 5, 10... ms between tries and made the tail
  latency of a busy service tens of milliseconds); past ``busy_timeout`` the call raises
  :class:`~decido_service.store.StoreError`.
- **Off the event loop**: :class:`SQLiteStore` (the async :class:`~decido_service.store.Store`)
  runs the blocking :class:`~decido_service.store.sqlite_db.SQLiteDatabase` in two threads of
  its own: one for everything that writes (admissions, keys, runs: SQLite has one writer
  anyway) and one for reads (key lookups, peeks, listings), so a slow write stalls neither
  the event loop nor the reads.
- **Schema**: ``schema_version`` records each applied migration;
  :data:`~decido_service.store.sqlite_schema.MIGRATIONS` is the ordered list (migration
  *i* brings the schema to version *i + 1*). :meth:`migrate` runs the missing ones
  inside one ``BEGIN IMMEDIATE``, so workers starting together are safe.
- **Secrets**: only SHA-256 hashes of keys are stored (plus their public 11-character prefix).
"""


from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from decido_service.store import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionEntry,
    DecisionRecord,
    KeyRecord,
    StoreError,
    sqlite_runs,
)
from decido_service.store.sqlite_db import SQLiteDatabase
from decido_service.store.sqlite_schema import MIGRATIONS, parse_sqlite_url
from decido_service.store.sqlite_webhooks import SQLiteWebhooks

__all__ = ["MIGRATIONS", "SQLiteStore", "parse_sqlite_url"]

T = TypeVar("T")


class SQLiteStore(SQLiteWebhooks):
    """The async :class:`~decido_service.store.Store` on one SQLite file (module docs).

    ``database`` is the blocking :class:`SQLiteDatabase` underneath (for tests and tools
    that want to call it directly, e.g. ``prune``)."""

    def __init__(self, path: str | os.PathLike[str], *, clock: Callable[[], float] | None = None,
                 **options: Any) -> None:
        self.database = SQLiteDatabase(path, clock=clock, **options)
        self.path = self.database.path
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="decido-store-write")
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="decido-store-read")

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        return await _shielded(self._writer, functools.partial(fn, *args))

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        return await _shielded(self._reader, functools.partial(fn, *args))

    async def migrate(self) -> None:
        """Bring the schema to the current version (safe across processes)."""
        await self._write(self.database.migrate)

    async def schema_version(self) -> int:
        """The applied schema version (0 for a new file)."""
        return await self._read(self.database.schema_version)

    async def ping(self) -> bool:
        """True when the file answers and its schema is current (never raises)."""
        try:
            return await self._read(self.database.ping)
        except StoreError:
            return False

    async def create_key(self, plan: str, tier: str, label: str | None = None,
                         limits: dict[str, Any] | None = None,
                         owner: str | None = None) -> tuple[KeyRecord, str]:
        """Create a key; ``(record, secret)``."""
        return await self._write(self.database.create_key, plan, tier, label, limits, owner)

    async def find_key(self, secret: str) -> KeyRecord | None:
        """The key of ``secret`` (revoked included), else ``None``."""
        return await self._read(self.database.find_key, secret)

    async def get_key(self, key_id: str) -> KeyRecord | None:
        """The key with this id, else ``None``."""
        return await self._read(self.database.get_key, key_id)

    async def list_keys(self) -> list[KeyRecord]:
        """All keys, oldest first."""
        return await self._read(self.database.list_keys)

    async def account_keys(self, key_id: str) -> list[KeyRecord]:
        """The keys of ``key_id``'s account, oldest first."""
        return await self._read(self.database.account_keys, key_id)

    async def service_secret(self, name: str, candidate: str) -> str:
        """The secret stored under ``name`` (``candidate`` the first time)."""
        return await self._write(self.database.service_secret, name, candidate)

    async def open_session(self, session_id: str, key_id: str, expires: float,
                           now: float) -> None:
        """Record a session (expired ones deleted)."""
        await self._write(self.database.open_session, session_id, key_id, expires, now)

    async def session_key(self, session_id: str, now: float) -> KeyRecord | None:
        """The key of a live session, else ``None``."""
        return await self._read(self.database.session_key, session_id, now)

    async def close_session(self, session_id: str) -> None:
        """End a session."""
        await self._write(self.database.close_session, session_id)

    async def revoke_key(self, key_id: str) -> bool:
        """Revoke; ``False`` for an unknown id."""
        return await self._write(self.database.revoke_key, key_id)

    async def admit_many(self, requests: Sequence[AdmissionRequest],
                         decisions: Sequence[DecisionEntry] = ()) -> list[Admission]:
        """Judge and commit a batch of admissions (and log ``decisions``) in one
        transaction."""
        return await self._write(self.database.admit_many, requests, decisions)

    async def peek(self, specs: Sequence[CounterSpec], now: float) -> list[CounterState]:
        """Counter states without counting."""
        return await self._read(self.database.peek, specs, now)

    async def record_run(self, run: Mapping[str, Any]) -> None:
        """Insert one run record."""
        await self._write(self.database.record_run, run)

    async def update_run(self, run_id: str, changes: Mapping[str, Any],
                         expect: Mapping[str, Any] | None = None) -> bool:
        """Set some columns of a run; ``False`` for an unknown id (or one not as
        ``expect`` says)."""
        return await self._write(self.database.update_run, run_id, changes, expect)

    async def enqueue_run(self, run: Mapping[str, Any], cap: int | None,
                          queue_cap: int | None = None) -> str | None:
        """Insert a run unless its key or the queue is at its cap."""
        return await self._write(sqlite_runs.enqueue_run, self.database, run, cap, queue_cap)

    async def discard_run(self, run_id: str) -> bool:
        """Delete a run whatever its state."""
        return await self._write(sqlite_runs.discard_run, self.database, run_id)

    async def claim_run(self, owner: str, lease_until: float) -> dict[str, Any] | None:
        """Own the oldest unowned queued run until ``lease_until``."""
        return await self._write(sqlite_runs.claim_run, self.database, owner, lease_until)

    async def expired_runs(self, now: float) -> list[dict[str, Any]]:
        """Unfinished runs whose lease ended before ``now``."""
        return await self._read(sqlite_runs.expired_runs, self.database, now)

    async def delete_runs(self, key_id: str) -> int:
        """Delete the key's finished runs; how many."""
        return await self._write(sqlite_runs.delete_runs, self.database, key_id)

    async def prune_runs(self, finished_before: str) -> int:
        """Delete runs finished before ``finished_before``; how many."""
        return await self._write(sqlite_runs.prune_runs, self.database, finished_before)

    async def idempotency_begin(self, key_id: str, idem_key: str, fingerprint: str,
                                now: float, ttl: float) -> tuple[str, str | None]:
        """Look up (and when new, record) an idempotency key."""
        return await self._write(sqlite_runs.idempotency_begin, self.database, key_id,
                                 idem_key, fingerprint, now, ttl)

    async def idempotency_end(self, key_id: str, idem_key: str,
                              response: str | None) -> None:
        """Store the answer of an idempotency key (``None``: forget it)."""
        await self._write(sqlite_runs.idempotency_end, self.database, key_id, idem_key,
                          response)

    async def get_run(self, key_id: str, run_id: str) -> dict[str, Any] | None:
        """One of ``key_id``'s runs, or ``None``."""
        return await self._read(self.database.get_run, key_id, run_id)

    async def page_runs(self, key_id: str, limit: int, starting_after: str | None = None,
                        state: str | None = None,
                        engine: str | None = None) -> list[dict[str, Any]]:
        """A page of ``key_id``'s runs, newest first."""
        return await self._read(self.database.page_runs, key_id, limit, starting_after,
                                state, engine)

    async def unfinished_runs(self) -> list[dict[str, Any]]:
        """Every queued or running run, oldest first."""
        return await self._read(self.database.unfinished_runs)

    async def count_runs(self) -> dict[str, int]:
        """Runs by state (see the protocol)."""
        return await self._read(self.database.count_runs)

    async def request_cancel(self, key_id: str, run_id: str) -> str | None:
        """Flag an unfinished run for cancellation; its state or ``None``."""
        return await self._write(self.database.request_cancel, key_id, run_id)

    async def delete_run(self, key_id: str, run_id: str) -> str | None:
        """Delete a finished run; its state or ``None``."""
        return await self._write(self.database.delete_run, key_id, run_id)

    async def list_decisions(self, key_id: str, limit: int,
                             starting_after: str | None = None) -> list[DecisionRecord]:
        """A page of the key's decision log, newest first."""
        return await self._read(self.database.list_decisions, key_id, limit, starting_after)

    async def get_decision(self, key_id: str, decision_id: str) -> DecisionRecord | None:
        """One of the key's logged decisions."""
        return await self._read(self.database.get_decision, key_id, decision_id)

    async def close(self) -> None:
        """Let queued calls finish, then close the connections of this process."""
        loop = asyncio.get_running_loop()
        for pool in (self._writer, self._reader):
            await loop.run_in_executor(None, functools.partial(pool.shutdown, wait=True))
        self.database.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"


async def _shielded(pool: ThreadPoolExecutor, call: Callable[[], T]) -> T:
    """``call()`` in ``pool``; a caller that is cancelled stops waiting, never the call
    (a write handed to the database always completes). A closed store's pools take no
    more calls: ``StoreError``."""
    try:
        future = asyncio.get_running_loop().run_in_executor(pool, call)
    except RuntimeError as exc:  # "cannot schedule new futures after shutdown"
        raise StoreError("the store is closed") from exc
    return await asyncio.shield(future)
