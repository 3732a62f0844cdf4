"""PostgreSQL backend of the store: one database shared by every node and worker process.

- **Driver**: asyncpg and its connection pool: one pool per worker process
  (:mod:`~decido_service.store.postgres_url` for its sizes), explicit ``BEGIN`` ...
  ``COMMIT``, every statement prepared once per connection (asyncpg's statement cache).
  Chosen over psycopg 3 by a measurement of admission throughput and CPU per admission
  (``benchmarks/load/pg_drivers.py``; numbers in docs/service.md, "PostgreSQL").
- **Admission**: :meth:`PostgresStore.admit_many` is one transaction per group-commit batch
  that locks the batch's counter rows in a fixed order
  (:mod:`~decido_service.store.postgres_counters`), so limits are exact across nodes.
- **Failures**: every database error becomes :class:`~decido_service.store.StoreError`
  (the app's 503 ``store_unavailable``). A transaction that failed before its ``COMMIT``
  was sent (a connection the server had closed, a deadlock, a serialization failure) did
  nothing, so it is retried on a fresh connection, up to ``pool_max + 1`` times; one whose
  ``COMMIT`` was lost is never retried (it may have been counted). A call waits at most
  ``pool_timeout`` for a connection; once the database was found unreachable, calls fail
  at once for :data:`FAIL_FAST` seconds (a quick 503, not a queue of waiting requests).
  The pool reopens a closed connection when it is next handed out, so a node serves
  again as soon as the server is back, with no restart.
- **Schema**: the shared ordered list :data:`~decido_service.store.migrations.MIGRATIONS`;
  :meth:`PostgresStore.migrate` applies the missing ones in one transaction holding a
  transaction-level advisory lock (:data:`MIGRATION_LOCK`), so nodes starting together
  apply each exactly once; a database newer than the code is refused.
- **Secrets**: only SHA-256 hashes of keys are stored (plus their public prefix).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type hints
import orjson
from asyncpg import Connection as Conn
from asyncpg import exceptions as errors

from decido_service import keys
from decido_service.store import (
    ACCOUNT_OF,
    COUNT_RUNS_SQL,
    FINISHED_STATES,
    KEY_COLUMNS,
    RUN_FIELDS,
    SESSION_KEY,
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionEntry,
    DecisionRecord,
    KeyRecord,
    StoreError,
    check_run_changes,
    check_specs,
    iso_utc,
    key_record,
    logged,
    new_key,
    postgres_runs,
    prepare,
    window_bounds,
)
from decido_service.store.migrations import MIGRATIONS
from decido_service.store.postgres_counters import admit_batch, states
from decido_service.store.postgres_url import PostgresOptions, parse_postgres_url, redact_url
from decido_service.store.sqlite_db import PRUNE_GRACE

__all__ = ["MIGRATION_LOCK", "PostgresStore"]

T = TypeVar("T")

#: the advisory lock key that serialises migrations (``pg_advisory_xact_lock``)
MIGRATION_LOCK = 0x646563_69646F  # "decido"
#: seconds during which calls fail at once after the database was found unreachable
FAIL_FAST = 1.0
#: seconds :meth:`PostgresStore.ping` waits for a connection (health checks answer quickly)
PING_TIMEOUT = 1.0
_RUN_FIELDS = RUN_FIELDS
_RUN_SELECT = f"SELECT {postgres_runs.COLUMNS} FROM runs"
_INSERT_DECISION = (
    "INSERT INTO decisions (id, key_id, created_at, created_epoch, summary, request, answer)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7)"
)
_VERSION = "SELECT COALESCE(MAX(version), 0) FROM schema_version"
_HAS_VERSION_TABLE = "SELECT to_regclass('schema_version') IS NOT NULL"
#: errors after which a transaction that never reached COMMIT is retried
_RETRYABLE = (errors.DeadlockDetectedError, errors.SerializationError)
#: what a database failure can raise (asyncpg's errors, the socket's, a timeout)
_FAILURES = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, asyncio.TimeoutError)


class _CommitLost(Exception):
    """The connection failed while ``COMMIT`` was in flight: the outcome is unknown."""


class PostgresStore:
    """The async :class:`~decido_service.store.Store` on one PostgreSQL database (module
    docs). Build with :meth:`from_url`, then :meth:`migrate` (``open_store`` does both)."""

    def __init__(self, options: PostgresOptions, *, url: str,
                 clock: Callable[[], float] | None = None,
                 prune_interval: float | None = 60.0,
                 decision_retention: float = 30 * 86400.0) -> None:
        self.options = options
        self.url = redact_url(url)
        self.prune_interval = prune_interval
        self.decision_retention = float(decision_retention)
        self._clock = clock or time.time
        self._last_prune = time.monotonic()
        self._closed = False
        self._unavailable_until = 0.0
        self._last_failure = ""
        self._pool: asyncpg.Pool | None = None
        self._opening = asyncio.Lock()

    @classmethod
    def from_url(cls, url: str, *, clock: Callable[[], float] | None = None,
                 **kw: Any) -> PostgresStore:
        """A store for ``url`` (``ValueError`` for a malformed one); nothing is opened."""
        return cls(parse_postgres_url(url), url=url, clock=clock, **kw)

    # ------------------------------------------------------------------ plumbing
    async def _connect(self) -> Conn:
        """A new connection of its own (not the pool's), its errors as the server says them."""
        try:
            return await asyncpg.connect(self.options.dsn,
                                         timeout=self.options.connect_timeout)
        except _FAILURES as exc:
            raise StoreError(f"cannot connect to {self.url}: {_first_line(exc)}") from exc

    async def _open(self) -> asyncpg.Pool:
        """The pool, created on first use (its first connections opened then)."""
        if self._closed:
            raise StoreError("the store is closed")
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    self._check_available()
                    try:
                        self._pool = await asyncpg.create_pool(
                            self.options.dsn, min_size=self.options.pool_min,
                            max_size=self.options.pool_max,
                            timeout=self.options.connect_timeout,
                            command_timeout=self.options.command_timeout, reset=_keep_session)
                    except _FAILURES as exc:
                        raise self._failed(exc) from exc
        return self._pool

    async def _acquire(self, pool: asyncpg.Pool, timeout: float | None) -> Conn:
        """A connection of the pool, waiting at most ``timeout`` (default
        ``pool_timeout``) for one; ``StoreError`` when none can be had (no retry: a pool
        that cannot open a connection now will not a moment later)."""
        try:
            conn: Conn = await pool.acquire(
                timeout=self.options.pool_timeout if timeout is None else timeout)
        except _FAILURES as exc:
            raise self._failed(exc) from exc
        return conn

    def _check_available(self) -> None:
        """Fail at once (``StoreError``) for :data:`FAIL_FAST` seconds after the database
        was found unreachable, rather than make every request wait ``pool_timeout``."""
        if time.monotonic() < self._unavailable_until:
            raise StoreError(f"store unavailable: {self._last_failure}")

    def _failed(self, exc: BaseException) -> StoreError:
        """The ``StoreError`` for ``exc``; an unreachable database starts a
        :data:`FAIL_FAST` period."""
        message = _first_line(exc)
        if _unreachable(exc):
            self._unavailable_until = time.monotonic() + FAIL_FAST
            self._last_failure = message
        return StoreError(f"store error: {message}")

    async def _transaction(self, body: Callable[[Conn], Awaitable[T]]) -> T:
        """``await body(conn)`` between ``BEGIN`` and ``COMMIT`` on a pooled connection,
        retried on a fresh one while it failed before ``COMMIT`` (module docs)."""
        self._check_available()
        pool = await self._open()
        attempts = self.options.pool_max + 1
        for attempt in range(attempts):
            conn = await self._acquire(pool, None)
            try:
                await conn.execute("BEGIN")
                try:
                    result = await body(conn)
                except BaseException:
                    if not conn.is_closed():
                        await conn.execute("ROLLBACK")
                    raise
                try:
                    await conn.execute("COMMIT")
                except _FAILURES as exc:
                    raise _CommitLost(_first_line(exc)) from exc
                return result
            except _CommitLost as exc:
                raise StoreError(f"store error: the commit's outcome is unknown ({exc})") \
                    from exc
            except _FAILURES as exc:
                retry = isinstance(exc, _RETRYABLE) or _lost(exc)
                if not retry or attempt + 1 == attempts or self._closed:
                    raise self._failed(exc) from exc
            finally:
                await _release(pool, conn)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _read(self, body: Callable[[Conn], Awaitable[T]],
                    timeout: float | None = None) -> T:
        """``await body(conn)`` on a pooled connection (autocommit), waiting at most
        ``timeout`` (default ``pool_timeout``) for one; retried like :meth:`_transaction`
        when the connection was lost (a read changes nothing)."""
        self._check_available()
        pool = await self._open()
        attempts = self.options.pool_max + 1
        for attempt in range(attempts):
            conn = await self._acquire(pool, timeout)
            try:
                return await body(conn)
            except _FAILURES as exc:
                if not _lost(exc) or attempt + 1 == attempts or self._closed:
                    raise self._failed(exc) from exc
            finally:
                await _release(pool, conn)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _write(self, body: Callable[[Conn], Awaitable[T]]) -> T:
        """:meth:`_transaction`, shielded: a cancelled caller stops waiting, never the
        transaction."""
        return await asyncio.shield(asyncio.ensure_future(self._transaction(body)))

    # ------------------------------------------------------------------ schema
    async def schema_version(self) -> int:
        """The applied schema version (0 for an empty database)."""
        return await self._read(_schema_version)

    async def migrate(self, *, create: bool = True) -> None:
        """Apply the missing migrations under the advisory lock (module docs), on a
        connection of its own so connection errors name their cause. ``create=False``: a
        database without the schema is a ``StoreError`` and nothing is created."""
        if self._closed:
            raise StoreError("the store is closed")
        conn = await self._connect()
        try:
            current = await _schema_version(conn)
            if current == 0 and not create:
                raise StoreError(f"no decido schema in {self.url}; `decido keys create` or "
                                 "`decido serve` creates it")
            if current != len(MIGRATIONS):
                await self._apply_migrations(conn)
        except _FAILURES as exc:
            raise StoreError(f"store error: {_first_line(exc)}") from exc
        finally:
            await conn.close()

    async def _apply_migrations(self, conn: Conn) -> None:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            await conn.execute("CREATE TABLE IF NOT EXISTS schema_version "
                               "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            current = await _schema_version(conn)
            if current > len(MIGRATIONS):
                raise StoreError(f"database schema version {current} is newer than this code "
                                 f"({len(MIGRATIONS)}); upgrade decido")
            for version in range(current, len(MIGRATIONS)):
                for statement in MIGRATIONS[version].postgres:
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)",
                    version + 1, iso_utc(time.time()))

    async def ping(self) -> bool:
        """True when the database answers and its schema is current (never raises)."""
        try:
            return await self._read(_schema_version, PING_TIMEOUT) == len(MIGRATIONS)
        except StoreError:
            return False

    # ------------------------------------------------------------------ keys
    async def create_key(self, plan: str, tier: str, label: str | None = None,
                         limits: dict[str, Any] | None = None,
                         owner: str | None = None) -> tuple[KeyRecord, str]:
        """Create a key; ``(record, secret)``. Only the secret's hash is written; with
        ``owner``, the key joins that key's account."""
        record, secret, row = new_key(plan, tier, label, limits, self._clock())

        async def insert(conn: Conn) -> None:
            await conn.execute(f"INSERT INTO keys ({KEY_COLUMNS}, hash, account) VALUES "
                               "($1, $2, $3, $4, $5, $6, $7, $8, $9, "
                               f"{ACCOUNT_OF.format('$10')})", *row, owner)

        await self._write(insert)
        return record, secret

    async def find_key(self, secret: str) -> KeyRecord | None:
        """The key whose hash matches ``secret``; ``None`` if malformed or unknown."""
        if not keys.is_well_formed(secret):
            return None

        async def find(conn: Conn) -> Any:
            return await conn.fetchrow(f"SELECT {KEY_COLUMNS}, hash FROM keys WHERE hash = $1",
                                       keys.hash_secret(secret))

        row = await self._read(find)
        if row is None or not keys.verify(secret, row[-1]):
            return None
        return key_record(row)

    async def get_key(self, key_id: str) -> KeyRecord | None:
        """The key with this public id, or ``None``."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(f"SELECT {KEY_COLUMNS} FROM keys WHERE id = $1", key_id)

        row = await self._read(get)
        return None if row is None else key_record(row)

    async def list_keys(self) -> list[KeyRecord]:
        """All keys in creation order."""
        async def rows(conn: Conn) -> list[Any]:
            return list(await conn.fetch(f"SELECT {KEY_COLUMNS} FROM keys ORDER BY seq"))

        return [key_record(row) for row in await self._read(rows)]

    async def account_keys(self, key_id: str) -> list[KeyRecord]:
        """The keys of ``key_id``'s account, oldest first (``[]``: unknown id)."""
        async def rows(conn: Conn) -> list[Any]:
            return list(await conn.fetch(
                f"SELECT {KEY_COLUMNS} FROM keys WHERE COALESCE(account, id) = "
                f"{ACCOUNT_OF.format('$1')} ORDER BY seq", key_id))

        return [key_record(row) for row in await self._read(rows)]

    async def service_secret(self, name: str, candidate: str) -> str:
        """The secret stored under ``name`` (``candidate`` the first time)."""
        async def get(conn: Conn) -> str:
            await conn.execute("INSERT INTO service_secrets (name, value) VALUES ($1, $2) "
                               "ON CONFLICT (name) DO NOTHING", name, candidate)
            return str(await conn.fetchval(
                "SELECT value FROM service_secrets WHERE name = $1", name))

        return await self._write(get)

    async def open_session(self, session_id: str, key_id: str, expires: float,
                           now: float) -> None:
        """Record a session (expired ones deleted)."""
        async def insert(conn: Conn) -> None:
            await conn.execute("DELETE FROM sessions WHERE expires_epoch <= $1", now)
            await conn.execute("INSERT INTO sessions (id, key_id, expires_epoch) "
                               "VALUES ($1, $2, $3)", session_id, key_id, expires)

        await self._write(insert)

    async def session_key(self, session_id: str, now: float) -> KeyRecord | None:
        """The key of a live session, else ``None``."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(SESSION_KEY.format("$1", "$2"), session_id, now)

        row = await self._read(get)
        return None if row is None else key_record(row)

    async def close_session(self, session_id: str) -> None:
        """End a session."""
        async def delete(conn: Conn) -> None:
            await conn.execute("DELETE FROM sessions WHERE id = $1", session_id)

        await self._write(delete)

    async def revoke_key(self, key_id: str) -> bool:
        """Revoke; ``True`` if the key exists (an earlier ``revoked_at`` is kept)."""
        when = iso_utc(self._clock())

        async def revoke(conn: Conn) -> bool:
            status = await conn.execute(
                "UPDATE keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2",
                when, key_id)
            return _rowcount(status) == 1

        return await self._write(revoke)

    # ------------------------------------------------------------------ counters
    async def admit_many(self, requests: Sequence[AdmissionRequest],
                         decisions: Sequence[DecisionEntry] = ()) -> list[Admission]:
        """Judge the requests in order and commit the admitted ones' increments, and
        ``decisions``, in one transaction (see
        :mod:`~decido_service.store.postgres_counters`)."""
        prepared = prepare(requests)
        if not prepared and not decisions:
            return []

        async def admit(conn: Conn) -> list[Admission]:
            admissions = await admit_batch(conn, prepared)
            rows = logged(requests, admissions, decisions)
            if rows:
                await conn.executemany(_INSERT_DECISION, rows)
            return admissions

        out = await self._write(admit)
        if prepared:
            await self._maybe_prune(prepared[-1][1])
        return out

    async def peek(self, specs: Sequence[CounterSpec], now: float) -> list[CounterState]:
        """States of ``specs`` as they are (nothing is counted)."""
        checked = check_specs(specs)
        bounds = [window_bounds(s.window, now) for s in checked]
        return await self._read(lambda conn: states(conn, checked, bounds))

    async def prune(self, now: float | None = None) -> int:
        """Delete minute and hour counter rows whose window ended more than
        ``PRUNE_GRACE`` seconds before ``now`` and logged decisions older than
        ``decision_retention`` seconds (the SQLite backend's rule); the number deleted."""
        when = time.time() if now is None else float(now)

        async def delete(conn: Conn) -> int:
            counters = await conn.execute(
                "DELETE FROM counters WHERE \"window\" <> 'month' AND window_end < $1",
                int(when) - PRUNE_GRACE)
            logged = await conn.execute("DELETE FROM decisions WHERE created_epoch < $1",
                                        when - self.decision_retention)
            return _rowcount(counters) + _rowcount(logged)

        return await self._write(delete)

    async def _maybe_prune(self, now: float) -> None:
        if self.prune_interval is None:
            return
        tick = time.monotonic()
        if tick - self._last_prune < self.prune_interval:
            return
        self._last_prune = tick
        try:
            await self.prune(now)
        except StoreError:
            pass  # opportunistic: pruned next time

    # ------------------------------------------------------------------ runs
    async def record_run(self, run: Mapping[str, Any]) -> None:
        """Insert one run record; missing ``id``/``created_at`` are filled in, other
        missing fields are NULL, unknown fields are ignored."""
        values = self._run_values(run)

        async def insert(conn: Conn) -> None:
            await conn.execute(postgres_runs.INSERT, *values)

        await self._write(insert)

    def _run_values(self, run: Mapping[str, Any]) -> list[Any]:
        """The arguments of :data:`_INSERT_RUN` for ``run`` (id and created_at filled)."""
        row = {name: run.get(name) for name in _RUN_FIELDS}
        row["id"] = row["id"] or uuid.uuid4().hex
        row["created_at"] = row["created_at"] or iso_utc(self._clock())
        row["seed"] = _jsonb_seed(row["seed"])
        return [row[f] for f in _RUN_FIELDS]

    async def update_run(self, run_id: str, changes: Mapping[str, Any],
                         expect: Mapping[str, Any] | None = None) -> bool:
        """Set some :data:`RUN_UPDATABLE` columns of a run (see the protocol)."""
        columns = check_run_changes(changes)
        values = [_jsonb_seed(changes[c]) if c == "seed" else changes[c] for c in columns]
        sets = ", ".join(f"{c} = ${i + 2}" + ("::jsonb" if c == "seed" else "")
                         for i, c in enumerate(columns))
        expected = list((expect or {}).items())
        if expected:
            check_run_changes(expect or {})
        where = "".join(f" AND {c} IS NOT DISTINCT FROM ${len(values) + i + 2}"
                        for i, (c, _) in enumerate(expected))

        async def update(conn: Conn) -> bool:
            status = await conn.execute(f"UPDATE runs SET {sets} WHERE id = $1{where}",
                                        run_id, *values, *(v for _, v in expected))
            return _rowcount(status) == 1

        return await self._write(update)

    async def enqueue_run(self, run: Mapping[str, Any], cap: int | None,
                          queue_cap: int | None = None) -> str | None:
        """Insert a run unless its key or the queue is at its cap (the key's advisory
        lock serialises the check and the insert across nodes)."""
        values = self._run_values(run)
        return await self._write(lambda conn: postgres_runs.enqueue(conn, values, cap,
                                                                    queue_cap))

    async def discard_run(self, run_id: str) -> bool:
        """Delete a run whatever its state."""
        async def delete(conn: Conn) -> bool:
            return _rowcount(await conn.execute("DELETE FROM runs WHERE id = $1", run_id)) == 1

        return await self._write(delete)

    async def claim_run(self, owner: str, lease_until: float) -> dict[str, Any] | None:
        """Own the oldest unowned queued run until ``lease_until`` (``SKIP LOCKED``)."""
        row = await self._write(lambda conn: postgres_runs.claim(conn, owner, lease_until))
        return None if row is None else _run_row(row)

    async def expired_runs(self, now: float) -> list[dict[str, Any]]:
        """Unfinished runs whose lease ended before ``now``."""
        rows = await self._read(lambda conn: postgres_runs.expired(conn, now))
        return [_run_row(row) for row in rows]

    async def delete_runs(self, key_id: str) -> int:
        """Delete the key's finished runs; how many."""
        return await self._write(lambda conn: postgres_runs.delete_finished(conn, key_id))

    async def prune_runs(self, finished_before: str) -> int:
        """Delete runs finished before ``finished_before``; how many."""
        return await self._write(lambda conn: postgres_runs.prune(conn, finished_before))

    async def idempotency_begin(self, key_id: str, idem_key: str, fingerprint: str,
                                now: float, ttl: float) -> tuple[str, str | None]:
        """Look up (and when new, record) an idempotency key."""
        return await self._write(lambda conn: postgres_runs.idempotency_begin(
            conn, key_id, idem_key, fingerprint, now, ttl))

    async def idempotency_end(self, key_id: str, idem_key: str,
                              response: str | None) -> None:
        """Store the answer of an idempotency key (``None``: forget it)."""
        await self._write(lambda conn: postgres_runs.idempotency_end(
            conn, key_id, idem_key, response))

    async def get_run(self, key_id: str, run_id: str) -> dict[str, Any] | None:
        """One of ``key_id``'s runs, or ``None``."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(f"{_RUN_SELECT} WHERE id = $1 AND key_id = $2",
                                       run_id, key_id)

        row = await self._read(get)
        return None if row is None else _run_row(row)

    async def page_runs(self, key_id: str, limit: int, starting_after: str | None = None,
                        state: str | None = None,
                        engine: str | None = None) -> list[dict[str, Any]]:
        """A page of ``key_id``'s runs, newest first (see the protocol)."""
        async def page(conn: Conn) -> list[Any]:
            where, args = ["key_id = $1"], list[Any]([key_id])
            if starting_after is not None:
                seq = await conn.fetchval("SELECT seq FROM runs WHERE id = $1 AND key_id = $2",
                                          starting_after, key_id)
                if seq is None:
                    raise ValueError(f"starting_after: no run {starting_after!r} of this key")
                args.append(seq)
                where.append(f"seq < ${len(args)}")
            for column, value in (("state", state), ("engine", engine)):
                if value is not None:
                    args.append(value)
                    where.append(f"{column} = ${len(args)}")
            args.append(int(limit))
            return list(await conn.fetch(f"{_RUN_SELECT} WHERE {' AND '.join(where)} "
                                         f"ORDER BY seq DESC LIMIT ${len(args)}", *args))

        return [_run_row(row) for row in await self._read(page)]

    async def unfinished_runs(self) -> list[dict[str, Any]]:
        """Every queued or running run, oldest first."""
        async def rows(conn: Conn) -> list[Any]:
            return list(await conn.fetch(
                f"{_RUN_SELECT} WHERE state IN ('queued', 'running') ORDER BY seq"))

        return [_run_row(row) for row in await self._read(rows)]

    async def count_runs(self) -> dict[str, int]:
        """Runs by state (see the protocol)."""
        async def rows(conn: Conn) -> list[Any]:
            return list(await conn.fetch(COUNT_RUNS_SQL))

        return {str(r[0]): int(r[1]) for r in await self._read(rows)}

    async def request_cancel(self, key_id: str, run_id: str) -> str | None:
        """Flag an unfinished run for cancellation; its state (see the protocol)."""
        async def cancel(conn: Conn) -> str | None:
            state = await conn.fetchval(
                "SELECT state FROM runs WHERE id = $1 AND key_id = $2 FOR UPDATE",
                run_id, key_id)
            if state is None:
                return None
            if state not in FINISHED_STATES:
                await conn.execute("UPDATE runs SET cancel_requested = 1 WHERE id = $1", run_id)
            return str(state)

        return await self._write(cancel)

    async def delete_run(self, key_id: str, run_id: str) -> str | None:
        """Delete a finished run; its state (see the protocol)."""
        async def delete(conn: Conn) -> str | None:
            state = await conn.fetchval(
                "SELECT state FROM runs WHERE id = $1 AND key_id = $2 FOR UPDATE",
                run_id, key_id)
            if state is None:
                return None
            if state in FINISHED_STATES:
                await conn.execute("DELETE FROM runs WHERE id = $1", run_id)
            return str(state)

        return await self._write(delete)

    # ------------------------------------------------------------------ decision log
    async def list_decisions(self, key_id: str, limit: int,
                             starting_after: str | None = None) -> list[DecisionRecord]:
        """A page of ``key_id``'s log, newest first (see the protocol)."""
        async def page(conn: Conn) -> list[Any]:
            before = 2**63 - 1
            if starting_after is not None:
                found = await conn.fetchrow("SELECT seq FROM decisions WHERE id = $1 AND "
                                            "key_id = $2", starting_after, key_id)
                if found is None:
                    raise ValueError(f"starting_after: no decision {starting_after!r} "
                                     "of this key")
                before = int(found[0])
            return list(await conn.fetch(
                "SELECT id, key_id, created_at, summary FROM decisions WHERE key_id = $1"
                " AND seq < $2 ORDER BY seq DESC LIMIT $3", key_id, before, int(limit)))

        return [DecisionRecord(id=r[0], key_id=r[1], created_at=r[2],
                               summary=orjson.loads(r[3]), request=None, answer=None)
                for r in await self._read(page)]

    async def get_decision(self, key_id: str, decision_id: str) -> DecisionRecord | None:
        """One of ``key_id``'s logged decisions, or ``None``."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(
                "SELECT id, key_id, created_at, summary, request, answer FROM decisions"
                " WHERE id = $1 AND key_id = $2", decision_id, key_id)

        r = await self._read(get)
        if r is None:
            return None
        return DecisionRecord(id=r[0], key_id=r[1], created_at=r[2], summary=orjson.loads(r[3]),
                              request=orjson.loads(r[4]),
                              answer=None if r[5] is None else orjson.loads(r[5]))

    # ------------------------------------------------------------------ lifecycle
    async def close(self) -> None:
        """Close the pool (transactions in progress finish first); later calls raise
        ``StoreError``."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            try:
                await asyncio.wait_for(pool.close(), self.options.pool_timeout)
            except (asyncio.TimeoutError, *_FAILURES):
                pool.terminate()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"


async def _schema_version(conn: Conn) -> int:
    if not await conn.fetchval(_HAS_VERSION_TABLE):
        return 0
    return int(await conn.fetchval(_VERSION) or 0)


def _unreachable(exc: BaseException) -> bool:
    """True when ``exc`` says the connection is gone or could not be made (closed by the
    server, reset, refused, the database not accepting connections): nothing the failed
    statement did can have been committed, and a fresh connection may work."""
    return isinstance(exc, (asyncpg.InterfaceError, OSError, asyncio.TimeoutError,
                            errors.PostgresConnectionError, errors.OperatorInterventionError,
                            errors.ObjectNotInPrerequisiteStateError,
                            errors.TooManyConnectionsError))


async def _keep_session(conn: Conn) -> None:
    """The pool's reset of a connection handed back: nothing beyond asyncpg's own rollback
    of an open transaction (this store sets no session state, takes no session locks and
    listens to nothing), which saves a round trip per call."""


async def _release(pool: asyncpg.Pool, conn: Conn) -> None:
    """Hand ``conn`` back (a broken one is closed and replaced by the pool)."""
    try:
        await pool.release(conn)
    except _FAILURES:
        conn.terminate()


def _lost(exc: BaseException) -> bool:
    """:func:`_unreachable`, but not a statement that timed out (``command_timeout``):
    worth one more try on a fresh connection."""
    return _unreachable(exc) and not isinstance(exc, asyncio.TimeoutError)


def _rowcount(status: str) -> int:
    """The row count of a command status such as ``UPDATE 1``."""
    return int(status.rsplit(" ", 1)[-1])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _jsonb_seed(seed: Any) -> str | None:
    """A seed as JSON text for the ``jsonb`` column (beyond 64 bits: a string, as the
    SQLite backend keeps it)."""
    if isinstance(seed, int) and not -(2**63) <= seed < 2**63:
        seed = str(seed)
    return None if seed is None else json.dumps(seed)


def _run_row(row: Sequence[Any]) -> dict[str, Any]:
    out = dict(zip(RUN_FIELDS, row, strict=False))
    out["seed"] = None if out["seed"] is None else json.loads(out["seed"])
    out["cancel_requested"] = bool(row[len(RUN_FIELDS)])
    return out

