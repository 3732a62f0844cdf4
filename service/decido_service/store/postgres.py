"""PostgreSQL backend of the store: one database shared by every node and worker process.

- **Driver**: psycopg 3 with its async connection pool (``psycopg_pool``): one pool per
  worker process (:mod:`~decido_service.store.postgres_url` for its sizes), connections in
  autocommit mode with explicit ``BEGIN`` ... ``COMMIT``, statements prepared by the server
  after a few uses. (Chosen over asyncpg by measured admission throughput, see
  docs/service.md, "PostgreSQL".)
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
  The pool replaces broken connections by itself (retrying a failed connection attempt
  for ``pool_timeout`` seconds, then on demand), so a node serves again as soon as the
  server is back, with no restart.
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

import psycopg
from psycopg import AsyncConnection, errors
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from decido_service import keys
from decido_service.store import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionRecord,
    KeyRecord,
    StoreError,
    check_specs,
    iso_utc,
    window_bounds,
)
from decido_service.store.migrations import MIGRATIONS
from decido_service.store.postgres_counters import Prepared, admit_batch, states
from decido_service.store.postgres_url import PostgresOptions, parse_postgres_url, redact_url
from decido_service.store.sqlite_db import PRUNE_GRACE, _decision_row

__all__ = ["MIGRATION_LOCK", "PostgresStore"]

T = TypeVar("T")
Conn = AsyncConnection[Any]

#: the advisory lock key that serialises migrations (``pg_advisory_xact_lock``)
MIGRATION_LOCK = 0x646563_69646F  # "decido"
#: seconds during which calls fail at once after the database was found unreachable
FAIL_FAST = 1.0
#: seconds :meth:`PostgresStore.ping` waits for a connection (health checks answer quickly)
PING_TIMEOUT = 1.0
_KEY_COLUMNS = "id, prefix, plan, tier, label, created_at, revoked_at, limits"
_RUN_FIELDS = (
    "id", "key_id", "created_at", "engine", "dims", "status", "value", "evaluations",
    "elapsed_ms", "goal", "seed",
)
_INSERT_DECISION = (
    "INSERT INTO decisions (id, key_id, created_at, created_epoch, summary, request, answer)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s)"
)
_VERSION = "SELECT COALESCE(MAX(version), 0) FROM schema_version"
_HAS_VERSION_TABLE = "SELECT to_regclass('schema_version') IS NOT NULL"
#: errors after which a transaction that never reached COMMIT is retried
_RETRYABLE = (errors.DeadlockDetected, errors.SerializationFailure)


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
        self._pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            options.conninfo, min_size=options.pool_min, max_size=options.pool_max,
            timeout=options.pool_timeout, kwargs={"autocommit": True}, open=False,
            name="decido-store", reconnect_timeout=options.pool_timeout)

    @classmethod
    def from_url(cls, url: str, *, clock: Callable[[], float] | None = None,
                 **kw: Any) -> PostgresStore:
        """A store for ``url`` (``ValueError`` for a malformed one); nothing is opened."""
        return cls(parse_postgres_url(url), url=url, clock=clock, **kw)

    # ------------------------------------------------------------------ plumbing
    async def _connect(self) -> Conn:
        """A new connection of its own (not the pool's): errors are as libpq says them."""
        try:
            return await AsyncConnection.connect(self.options.conninfo, autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {self.url}: {_first_line(exc)}") from exc

    async def _open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")
        if self._pool.closed:
            await self._pool.open(wait=False)

    def _check_available(self) -> None:
        """Fail at once (``StoreError``) for :data:`FAIL_FAST` seconds after the database
        was found unreachable, rather than make every request wait ``pool_timeout``."""
        if time.monotonic() < self._unavailable_until:
            raise StoreError(f"store unavailable: {self._last_failure}")

    def _failed(self, exc: psycopg.Error) -> StoreError:
        """The ``StoreError`` for ``exc``; an unreachable database starts a
        :data:`FAIL_FAST` period."""
        message = _first_line(exc)
        if isinstance(exc, PoolTimeout) or _connection_lost(exc):
            self._unavailable_until = time.monotonic() + FAIL_FAST
            self._last_failure = message
        return StoreError(f"store error: {message}")

    async def _transaction(self, body: Callable[[Conn], Awaitable[T]]) -> T:
        """``await body(conn)`` between ``BEGIN`` and ``COMMIT`` on a pooled connection,
        retried on a fresh one while it failed before ``COMMIT`` (module docs)."""
        await self._open()
        self._check_available()
        attempts = self.options.pool_max + 1
        for attempt in range(attempts):
            try:
                async with self._pool.connection() as conn:
                    await conn.execute("BEGIN")
                    try:
                        result = await body(conn)
                    except BaseException:
                        if not conn.broken:
                            await conn.execute("ROLLBACK")
                        raise
                    try:
                        await conn.execute("COMMIT")
                    except psycopg.Error as exc:
                        raise _CommitLost(_first_line(exc)) from exc
                    return result
            except _CommitLost as exc:
                raise StoreError(f"store error: the commit's outcome is unknown ({exc})") \
                    from exc
            except psycopg.Error as exc:
                retry = isinstance(exc, _RETRYABLE) or _connection_lost(exc)
                if not retry or attempt + 1 == attempts or self._closed:
                    raise self._failed(exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    async def _read(self, body: Callable[[Conn], Awaitable[T]],
                    timeout: float | None = None) -> T:
        """``await body(conn)`` on a pooled connection (autocommit), waiting at most
        ``timeout`` (default ``pool_timeout``) for one; retried like :meth:`_transaction`
        when the connection was lost (a read changes nothing)."""
        await self._open()
        self._check_available()
        attempts = self.options.pool_max + 1
        for attempt in range(attempts):
            try:
                async with self._pool.connection(timeout) as conn:
                    return await body(conn)
            except psycopg.Error as exc:
                if not _connection_lost(exc) or attempt + 1 == attempts or self._closed:
                    raise self._failed(exc) from exc
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
        except psycopg.Error as exc:
            raise StoreError(f"store error: {_first_line(exc)}") from exc
        finally:
            await conn.close()

    async def _apply_migrations(self, conn: Conn) -> None:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
            await conn.execute("CREATE TABLE IF NOT EXISTS schema_version "
                               "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            current = await _schema_version(conn)
            if current > len(MIGRATIONS):
                raise StoreError(f"database schema version {current} is newer than this code "
                                 f"({len(MIGRATIONS)}); upgrade decido")
            for version in range(current, len(MIGRATIONS)):
                for statement in MIGRATIONS[version].postgres:
                    await conn.execute(statement)  # type: ignore[arg-type]  # literal SQL
                await conn.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES (%s, %s)",
                    [version + 1, iso_utc(time.time())])

    async def ping(self) -> bool:
        """True when the database answers and its schema is current (never raises)."""
        try:
            return await self._read(_schema_version, PING_TIMEOUT) == len(MIGRATIONS)
        except StoreError:
            return False

    # ------------------------------------------------------------------ keys
    async def create_key(self, plan: str, tier: str, label: str | None = None,
                         limits: dict[str, Any] | None = None) -> tuple[KeyRecord, str]:
        """Create a key; ``(record, secret)``. Only the secret's hash is written."""
        for what, value in (("plan", plan), ("tier", tier)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"{what} must be a non-empty string")
        if label is not None and not isinstance(label, str):
            raise ValueError("label must be a string or None")
        if limits is not None and not isinstance(limits, dict):
            raise ValueError("limits must be a dict or None")
        secret, prefix, digest = keys.new_key_material()
        record = KeyRecord(id=uuid.uuid4().hex, prefix=prefix, plan=plan, tier=tier,
                           label=label, created_at=iso_utc(self._clock()), revoked_at=None,
                           limits=limits)
        row = [record["id"], prefix, plan, tier, label, record["created_at"], None,
               None if limits is None else json.dumps(limits, sort_keys=True), digest]

        async def insert(conn: Conn) -> None:
            await conn.execute(f"INSERT INTO keys ({_KEY_COLUMNS}, hash) VALUES "
                               "(%s, %s, %s, %s, %s, %s, %s, %s, %s)", row)

        await self._write(insert)
        return record, secret

    async def find_key(self, secret: str) -> KeyRecord | None:
        """The key whose hash matches ``secret``; ``None`` if malformed or unknown."""
        if not keys.is_well_formed(secret):
            return None

        async def find(conn: Conn) -> Any:
            cur = await conn.execute(f"SELECT {_KEY_COLUMNS}, hash FROM keys WHERE hash = %s",
                                     [keys.hash_secret(secret)])
            return await cur.fetchone()

        row = await self._read(find)
        if row is None or not keys.verify(secret, row[-1]):
            return None
        return _key_record(row)

    async def get_key(self, key_id: str) -> KeyRecord | None:
        """The key with this public id, or ``None``."""
        async def get(conn: Conn) -> Any:
            cur = await conn.execute(f"SELECT {_KEY_COLUMNS} FROM keys WHERE id = %s", [key_id])
            return await cur.fetchone()

        row = await self._read(get)
        return None if row is None else _key_record(row)

    async def list_keys(self) -> list[KeyRecord]:
        """All keys in creation order."""
        async def rows(conn: Conn) -> list[Any]:
            cur = await conn.execute(f"SELECT {_KEY_COLUMNS} FROM keys ORDER BY seq")
            return await cur.fetchall()

        return [_key_record(row) for row in await self._read(rows)]

    async def revoke_key(self, key_id: str) -> bool:
        """Revoke; ``True`` if the key exists (an earlier ``revoked_at`` is kept)."""
        when = iso_utc(self._clock())

        async def revoke(conn: Conn) -> bool:
            cur = await conn.execute(
                "UPDATE keys SET revoked_at = COALESCE(revoked_at, %s) WHERE id = %s",
                [when, key_id])
            return cur.rowcount == 1

        return await self._write(revoke)

    # ------------------------------------------------------------------ counters
    async def admit_many(self, requests: Sequence[AdmissionRequest],
                         decisions: Sequence[DecisionRecord] = ()) -> list[Admission]:
        """Judge the requests in order and commit the admitted ones' increments, and
        ``decisions``, in one transaction (see
        :mod:`~decido_service.store.postgres_counters`)."""
        prepared: list[Prepared] = []
        for specs, now, key_id in requests:
            checked = check_specs(specs)
            prepared.append((checked, float(now), key_id,
                             [window_bounds(s.window, now) for s in checked]))
        rows = [_decision_row(d) for d in decisions]
        if not prepared and not rows:
            return []

        async def admit(conn: Conn) -> list[Admission]:
            if rows:
                async with conn.cursor() as cur:
                    await cur.executemany(_INSERT_DECISION, rows)
            return await admit_batch(conn, prepared)

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
                "DELETE FROM counters WHERE \"window\" <> 'month' AND window_end < %s",
                [int(when) - PRUNE_GRACE])
            logged = await conn.execute("DELETE FROM decisions WHERE created_epoch < %s",
                                        [when - self.decision_retention])
            return counters.rowcount + logged.rowcount

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
        row = {name: run.get(name) for name in _RUN_FIELDS}
        row["id"] = row["id"] or uuid.uuid4().hex
        row["created_at"] = row["created_at"] or iso_utc(self._clock())
        seed = row["seed"]
        if isinstance(seed, int) and not -(2**63) <= seed < 2**63:
            seed = str(seed)  # as the SQLite backend keeps it
        row["seed"] = None if seed is None else Jsonb(seed)
        sql = (f"INSERT INTO runs ({', '.join(_RUN_FIELDS)}) "
               f"VALUES ({', '.join('%(' + f + ')s' for f in _RUN_FIELDS)})")

        async def insert(conn: Conn) -> None:
            await conn.execute(sql, row)  # type: ignore[arg-type]  # built from literals

        await self._write(insert)

    async def list_runs(self, key_id: str | None = None,
                        limit: int = 100) -> list[dict[str, Any]]:
        """The newest run records, optionally of one key."""
        where, args = ("WHERE key_id = %s", [key_id]) if key_id is not None else ("", [])
        sql = (f"SELECT {', '.join(_RUN_FIELDS)} FROM runs {where} "
               "ORDER BY created_at DESC, seq DESC LIMIT %s")

        async def rows(conn: Conn) -> list[Any]:
            cur = await conn.execute(sql, [*args, int(limit)])  # type: ignore[arg-type]
            return await cur.fetchall()

        return [dict(zip(_RUN_FIELDS, row, strict=True)) for row in await self._read(rows)]

    # ------------------------------------------------------------------ decision log
    async def list_decisions(self, key_id: str, limit: int,
                             starting_after: str | None = None) -> list[DecisionRecord]:
        """A page of ``key_id``'s log, newest first (see the protocol)."""
        async def page(conn: Conn) -> list[Any]:
            before = 2**63 - 1
            if starting_after is not None:
                cur = await conn.execute("SELECT seq FROM decisions WHERE id = %s AND "
                                         "key_id = %s", [starting_after, key_id])
                found = await cur.fetchone()
                if found is None:
                    raise ValueError(f"starting_after: no decision {starting_after!r} "
                                     "of this key")
                before = int(found[0])
            cur = await conn.execute(
                "SELECT id, key_id, created_at, summary FROM decisions WHERE key_id = %s"
                " AND seq < %s ORDER BY seq DESC LIMIT %s", [key_id, before, int(limit)])
            return await cur.fetchall()

        return [DecisionRecord(id=r[0], key_id=r[1], created_at=r[2],
                               summary=json.loads(r[3]), request=None, answer=None)
                for r in await self._read(page)]

    async def get_decision(self, key_id: str, decision_id: str) -> DecisionRecord | None:
        """One of ``key_id``'s logged decisions, or ``None``."""
        async def get(conn: Conn) -> Any:
            cur = await conn.execute(
                "SELECT id, key_id, created_at, summary, request, answer FROM decisions"
                " WHERE id = %s AND key_id = %s", [decision_id, key_id])
            return await cur.fetchone()

        r = await self._read(get)
        if r is None:
            return None
        return DecisionRecord(id=r[0], key_id=r[1], created_at=r[2], summary=json.loads(r[3]),
                              request=json.loads(r[4]),
                              answer=None if r[5] is None else json.loads(r[5]))

    # ------------------------------------------------------------------ lifecycle
    async def close(self) -> None:
        """Close the pool (transactions in progress finish first); later calls raise
        ``StoreError``."""
        self._closed = True
        if not self._pool.closed:
            await self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"


async def _schema_version(conn: Conn) -> int:
    cur = await conn.execute(_HAS_VERSION_TABLE)
    exists = await cur.fetchone()
    if not exists or not exists[0]:
        return 0
    cur = await conn.execute(_VERSION)
    row = await cur.fetchone()
    return int(row[0]) if row else 0


def _connection_lost(exc: psycopg.Error) -> bool:
    """True when ``exc`` says the connection is gone (closed by the server, reset, or
    never made): nothing the failed statement did can have been committed."""
    if isinstance(exc, PoolTimeout):
        return False  # waited for a connection long enough: say so now
    if isinstance(exc, (errors.AdminShutdown, errors.CrashShutdown, errors.CannotConnectNow)):
        return True
    return isinstance(exc, psycopg.OperationalError) and exc.sqlstate in (None, "57P01",
                                                                           "57P02", "57P03")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _key_record(row: Sequence[Any]) -> KeyRecord:
    return KeyRecord(id=row[0], prefix=row[1], plan=row[2], tier=row[3], label=row[4],
                     created_at=row[5], revoked_at=row[6],
                     limits=None if row[7] is None else json.loads(row[7]))
