"""PostgreSQL backend of the store: one database shared by every node and worker process.

- **Driver**: asyncpg and its connection pool: one pool per worker process
  (:mod:`~decido_service.store.postgres_url` for its sizes), explicit ``BEGIN`` ...
  ``COMMIT``, every statement prepared once per connection (asyncpg's statement cache).
  Chosen over psycopg 3 by a measurement of admission throughput and CPU per admission
  (``benchmarks/load/pg_drivers.py``; numbers in docs/service.md, "PostgreSQL").
- **Admission**: one transaction per group-commit batch that locks the batch's counter
  rows in a fixed order (:mod:`~decido_service.store.admissions`), so limits are exact
  across nodes.
- **Failures**: every database error becomes :class:`~decido_service.store.StoreError`
  (the app's 503 ``store_unavailable``). A transaction that failed before its ``COMMIT``
  was sent (a connection the server had closed, a deadlock, a serialization failure) did
  nothing, so it is retried on a fresh connection, up to ``pool_max + 1`` times; one whose
  ``COMMIT`` was lost is never retried (it may have been counted). A call waits at most
  ``pool_timeout`` for a connection; once the database was found unreachable, calls fail
  at once for :data:`FAIL_FAST` seconds (a quick 503, not a queue of waiting requests).
  The pool reopens a closed connection when it is next handed out, so a node serves
  again as soon as the server is back, with no restart.
- **Schema**: :func:`~decido_service.store.schema.upgrade` in one transaction holding a
  transaction-level advisory lock, on a connection of its own (so connection errors name
  their cause), so nodes starting together apply each version exactly once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type hints
from asyncpg import Connection as Conn
from asyncpg import exceptions as errors

from decido_service.store import schema
from decido_service.store.dialect import POSTGRES, Body, Row, numbered
from decido_service.store.postgres_url import parse_postgres_url, redact_url
from decido_service.store.records import StoreError, StoreMissing

__all__ = ["FAILURES", "FAIL_FAST", "PING_TIMEOUT", "PostgresDatabase", "PostgresTx"]

T = TypeVar("T")

#: seconds during which calls fail at once after the database was found unreachable
FAIL_FAST = 1.0
#: seconds before a lost ``LISTEN`` connection is opened again
LISTEN_RETRY = 1.0
#: seconds :meth:`PostgresDatabase.ping` waits for a connection (health checks answer quickly)
PING_TIMEOUT = 1.0
#: errors after which a transaction that never reached COMMIT is retried
_RETRYABLE = (errors.DeadlockDetectedError, errors.SerializationError)
#: what a database failure can raise (asyncpg's errors, the socket's, a timeout)
FAILURES = (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError,
            OSError, asyncio.TimeoutError)


class PostgresTx:
    """A :class:`~decido_service.store.dialect.Tx` on an asyncpg connection."""

    __slots__ = ("conn",)

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    async def execute(self, sql: str, *args: Any) -> int:
        """Run a statement; the rows it wrote (from its command status)."""
        count = str(await self.conn.execute(numbered(sql), *args)).rsplit(" ", 1)[-1]
        return int(count) if count.isdigit() else 0

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run a statement once per row."""
        await self.conn.executemany(numbered(sql), rows)

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        """Every row of a query."""
        return list(await self.conn.fetch(numbered(sql), *args))

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        """The first row of a query, or ``None``."""
        row: Row | None = await self.conn.fetchrow(numbered(sql), *args)
        return row


class PostgresDatabase:
    """The PostgreSQL :class:`~decido_service.store.dialect.Database` (module docs) at
    ``url`` (``ValueError`` for a malformed one); nothing is opened before the first call
    (``open_store`` calls :meth:`migrate`)."""

    dialect = POSTGRES

    def __init__(self, url: str, *, clock: Callable[[], float] | None = None) -> None:
        self.options = parse_postgres_url(url)
        self.url = redact_url(url)
        self.clock = clock or time.time
        self._closed = False
        self._unavailable_until = 0.0
        self._last_failure = ""
        self._pool: asyncpg.Pool | None = None
        self._opening = asyncio.Lock()

    # ------------------------------------------------------------------ plumbing
    async def _connect(self) -> Conn:
        """A new connection of its own (not the pool's), its errors as the server says them."""
        try:
            return await asyncpg.connect(self.options.dsn,
                                         timeout=self.options.connect_timeout)
        except FAILURES as exc:
            raise StoreError(f"cannot connect to {self.url}: {first_line(exc)}") from exc

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
                    except FAILURES as exc:
                        raise self._failed(exc) from exc
        return self._pool

    async def _acquire(self, pool: asyncpg.Pool, timeout: float | None) -> Conn:
        """A connection of the pool, waiting at most ``timeout`` (default
        ``pool_timeout``) for one; ``StoreError`` when none can be had (no retry: a pool
        that cannot open a connection now will not a moment later)."""
        try:
            conn: Conn = await pool.acquire(
                timeout=self.options.pool_timeout if timeout is None else timeout)
        except FAILURES as exc:
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
        message = first_line(exc)
        if _unreachable(exc):
            self._unavailable_until = time.monotonic() + FAIL_FAST
            self._last_failure = message
        return StoreError(f"store error: {message}")

    async def _transaction(self, body: Body[T]) -> T:
        """``await body(tx)`` between ``BEGIN`` and ``COMMIT`` on a pooled connection,
        retried on a fresh one while it failed before ``COMMIT`` (module docs)."""
        async def run(conn: Conn) -> T:
            await conn.execute("BEGIN")
            try:
                result = await body(PostgresTx(conn))
            except BaseException:
                if not conn.is_closed():
                    await conn.execute("ROLLBACK")
                raise
            try:
                await conn.execute("COMMIT")
            except FAILURES as exc:  # not retried: it may have been committed
                raise StoreError("store error: the commit's outcome is unknown "
                                 f"({first_line(exc)})") from exc
            return result

        return await self._attempts(run, None, lambda exc: isinstance(exc, _RETRYABLE)
                                    or _lost(exc))

    async def read(self, body: Body[T], timeout: float | None = None) -> T:
        """``await body(tx)`` on a pooled connection (autocommit), waiting at most
        ``timeout`` (default ``pool_timeout``) for one; retried like :meth:`_transaction`
        when the connection was lost (a read changes nothing)."""
        return await self._attempts(lambda conn: body(PostgresTx(conn)), timeout, _lost)

    async def _attempts(self, run: Callable[[Conn], Awaitable[T]], timeout: float | None,
                        retry: Callable[[BaseException], bool]) -> T:
        """``await run(conn)`` on a pooled connection, on a fresh one again after a
        failure ``retry`` accepts, up to ``pool_max + 1`` times."""
        self._check_available()
        pool = await self._open()
        attempts = self.options.pool_max + 1
        for attempt in range(attempts):
            conn = await self._acquire(pool, timeout)
            try:
                return await run(conn)
            except FAILURES as exc:
                if isinstance(exc, asyncpg.InternalClientError):
                    conn.terminate()  # its protocol state is broken: never pooled again
                if not retry(exc) or attempt + 1 == attempts or self._closed:
                    raise self._failed(exc) from exc
            finally:
                await _release(pool, conn)
        raise AssertionError("unreachable")  # pragma: no cover

    async def write(self, body: Body[T]) -> T:
        """:meth:`_transaction`, shielded: a cancelled caller stops waiting, never the
        transaction."""
        return await asyncio.shield(asyncio.ensure_future(self._transaction(body)))

    # ------------------------------------------------------------------ schema
    async def migrate(self, *, create: bool = True) -> None:
        """Apply the missing migrations under the advisory lock (module docs).
        ``create=False``: a database without the schema is a ``StoreError`` and nothing
        is created."""
        if self._closed:
            raise StoreError("the store is closed")
        conn = await self._connect()
        try:
            current = await schema.version(PostgresTx(conn), POSTGRES)
            if current == 0 and not create:
                raise StoreMissing(self.url)
            if current != len(schema.MIGRATIONS):
                async with conn.transaction():
                    await schema.upgrade(PostgresTx(conn), POSTGRES)
        except FAILURES as exc:
            raise StoreError(f"store error: {first_line(exc)}") from exc
        finally:
            await conn.close()

    async def schema_version(self) -> int:
        """The applied schema version (0 for an empty database)."""
        return await self.read(lambda tx: schema.version(tx, POSTGRES))

    async def ping(self) -> bool:
        """True when the database answers and its schema is current (never raises)."""
        try:
            found = await self.read(lambda tx: schema.version(tx, POSTGRES), PING_TIMEOUT)
        except StoreError:
            return False
        return found == len(schema.MIGRATIONS)

    # ------------------------------------------------------------------ wake-ups
    async def notify(self, channel: str) -> None:
        """``NOTIFY`` ``channel`` (:mod:`~decido_service.store.wakeup`)."""
        await self.write(lambda tx: tx.execute("SELECT pg_notify(?, '')", channel))

    async def listen(self, channel: str, wake: Callable[[], None]) -> None:
        """``LISTEN`` on ``channel`` on a connection of its own (not the pool's), calling
        ``wake`` for each notification and each time the connection is opened (one may
        have been missed), until cancelled; a lost connection is opened again after
        :data:`LISTEN_RETRY` seconds."""
        while True:
            conn: Conn | None = None
            try:
                conn = await self._connect()
                lost = asyncio.Event()
                conn.add_termination_listener(lambda _conn, lost=lost: lost.set())
                await conn.add_listener(channel, lambda *_args: wake())
                wake()
                await lost.wait()
            except (StoreError, *FAILURES):
                pass  # the database is away: listen again shortly
            finally:
                if conn is not None and not conn.is_closed():
                    conn.terminate()
            await asyncio.sleep(LISTEN_RETRY)

    # ------------------------------------------------------------------ lifecycle
    async def close(self) -> None:
        """Close the pool (transactions in progress finish first); later calls raise
        ``StoreError``."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            try:
                await asyncio.wait_for(pool.close(), self.options.pool_timeout)
            except (asyncio.TimeoutError, *FAILURES):
                pool.terminate()

    def __repr__(self) -> str:
        return f"PostgresDatabase({self.url!r})"


def _unreachable(exc: BaseException) -> bool:
    """True when ``exc`` says the connection is gone or could not be made (closed by the
    server, reset, refused, the database not accepting connections): nothing the failed
    statement did can have been committed, and a fresh connection may work. asyncpg's
    ``InternalClientError`` ("cannot switch to state ...; another operation is in
    progress": a connection whose backend was terminated during an earlier operation) is
    raised before anything is sent."""
    return isinstance(exc, (asyncpg.InterfaceError, asyncpg.InternalClientError, OSError,
                            asyncio.TimeoutError,
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
    except FAILURES:
        conn.terminate()


def _lost(exc: BaseException) -> bool:
    """:func:`_unreachable`, but not a statement that timed out (``command_timeout``):
    worth one more try on a fresh connection."""
    return _unreachable(exc) and not isinstance(exc, asyncio.TimeoutError)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
