"""PostgreSQL backend of the store: one database shared by every node and worker process.

- **Driver**: asyncpg and its connection pool: one pool per worker process
  (:mod:`~decido_service.store.postgres_url` for its sizes), explicit ``BEGIN`` ...
  ``COMMIT``, every statement prepared once per connection (asyncpg's statement cache).
  Chosen over psycopg 3 by a measurement of admission throughput and CPU per admission
  (``benchmarks/load/pg_drivers.py``; numbers in docs/service.md, "PostgreSQL").
- **Admission**: :meth:`PostgresStore.admit_many` is one transaction per group-commit batch
  that locks the batch's counter rows in a fixed order
  (:mod:`~decido_service.store.postgres_counters`), so limits are exact across nodes.
- **Failures**: which database errors become :class:`~decido_service.store.StoreError`,
  which transactions are retried, and failing fast while the database is unreachable:
  :mod:`~decido_service.store.postgres_pool`.
- **Schema**: the shared ordered list :data:`~decido_service.store.migrations.MIGRATIONS`;
  :meth:`PostgresStore.migrate` applies the missing ones in one transaction holding a
  transaction-level advisory lock (:data:`MIGRATION_LOCK`), so nodes starting together
  apply each exactly once; a database newer than the code is refused.
- **Secrets**: only SHA-256 hashes of keys are stored (plus their public prefix).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from asyncpg import Connection as Conn  # type: ignore[import-untyped]  # no type hints

from decido_service.store.admission_rule import (
    PRUNE_GRACE,
    check_specs,
    logged,
    prepare,
    window_bounds,
)
from decido_service.store.migrations import MIGRATIONS
from decido_service.store.postgres_counters import admit_batch, states
from decido_service.store.postgres_keys import PostgresKeys
from decido_service.store.postgres_log import INSERT_DECISION, PostgresLog
from decido_service.store.postgres_pool import FAILURES, first_line, rowcount
from decido_service.store.postgres_runs import PostgresRuns
from decido_service.store.postgres_url import parse_postgres_url
from decido_service.store.postgres_webhooks import PostgresWebhooks
from decido_service.store.records import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionEntry,
    StoreError,
    iso_utc,
)

__all__ = ["MIGRATION_LOCK", "PostgresStore"]

#: the advisory lock key that serialises migrations (``pg_advisory_xact_lock``)
MIGRATION_LOCK = 0x646563_69646F  # "decido"
#: seconds :meth:`PostgresStore.ping` waits for a connection (health checks answer quickly)
PING_TIMEOUT = 1.0
_VERSION = "SELECT COALESCE(MAX(version), 0) FROM schema_version"
_HAS_VERSION_TABLE = "SELECT to_regclass('schema_version') IS NOT NULL"


class PostgresStore(PostgresKeys, PostgresRuns, PostgresLog, PostgresWebhooks):
    """The async :class:`~decido_service.store.Store` on one PostgreSQL database (module
    docs). Build with :meth:`from_url`, then :meth:`migrate` (``open_store`` does both).
    Its pool and transactions are :class:`~decido_service.store.postgres_pool.PostgresPool`;
    keys, runs and the decision log are its parts of the same names
    (:mod:`~decido_service.store.postgres_keys`, :mod:`~decido_service.store.postgres_runs`,
    :mod:`~decido_service.store.postgres_log`); here are the schema and the counters."""

    @classmethod
    def from_url(cls, url: str, *, clock: Callable[[], float] | None = None,
                 **kw: Any) -> PostgresStore:
        """A store for ``url`` (``ValueError`` for a malformed one); nothing is opened."""
        return cls(parse_postgres_url(url), url=url, clock=clock, **kw)

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
        except FAILURES as exc:
            raise StoreError(f"store error: {first_line(exc)}") from exc
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
                await conn.executemany(INSERT_DECISION, rows)
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
            return rowcount(counters) + rowcount(logged)

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

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"


async def _schema_version(conn: Conn) -> int:
    if not await conn.fetchval(_HAS_VERSION_TABLE):
        return 0
    return int(await conn.fetchval(_VERSION) or 0)
