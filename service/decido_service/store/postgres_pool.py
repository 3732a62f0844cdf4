"""The PostgreSQL store's pool, transactions and failure handling: the base of
:class:`~decido_service.store.postgres.PostgresStore` and of its parts (keys, runs,
decision log), which all reach the database through :meth:`PostgresPool._transaction`,
:meth:`PostgresPool._read` and :meth:`PostgresPool._write`.

Every database error becomes :class:`~decido_service.store.StoreError`
(the app's 503 ``store_unavailable``). A transaction that failed before its ``COMMIT``
was sent (a connection the server had closed, a deadlock, a serialization failure) did
nothing, so it is retried on a fresh connection, up to ``pool_max + 1`` times; one whose
``COMMIT`` was lost is never retried (it may have been counted). A call waits at most
``pool_timeout`` for a connection; once the database was found unreachable, calls fail
at once for :data:`FAIL_FAST` seconds (a quick 503, not a queue of waiting requests).
The pool reopens a closed connection when it is next handed out, so a node serves
again as soon as the server is back, with no restart.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type hints
from asyncpg import Connection as Conn
from asyncpg import exceptions as errors

from decido_service.store.postgres_url import PostgresOptions, redact_url
from decido_service.store.records import StoreError

__all__ = ["FAILURES", "FAIL_FAST", "PostgresPool", "first_line", "rowcount"]

T = TypeVar("T")

#: seconds during which calls fail at once after the database was found unreachable
FAIL_FAST = 1.0
#: errors after which a transaction that never reached COMMIT is retried
_RETRYABLE = (errors.DeadlockDetectedError, errors.SerializationError)
#: what a database failure can raise (asyncpg's errors, the socket's, a timeout)
FAILURES = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, asyncio.TimeoutError)


class _CommitLost(Exception):
    """The connection failed while ``COMMIT`` was in flight: the outcome is unknown."""


class PostgresPool:
    """One PostgreSQL database's settings and its connection pool (module docs)."""

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
                except FAILURES as exc:
                    raise _CommitLost(first_line(exc)) from exc
                return result
            except _CommitLost as exc:
                raise StoreError(f"store error: the commit's outcome is unknown ({exc})") \
                    from exc
            except FAILURES as exc:
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
            except FAILURES as exc:
                if not _lost(exc) or attempt + 1 == attempts or self._closed:
                    raise self._failed(exc) from exc
            finally:
                await _release(pool, conn)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _write(self, body: Callable[[Conn], Awaitable[T]]) -> T:
        """:meth:`_transaction`, shielded: a cancelled caller stops waiting, never the
        transaction."""
        return await asyncio.shield(asyncio.ensure_future(self._transaction(body)))

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
    except FAILURES:
        conn.terminate()


def _lost(exc: BaseException) -> bool:
    """:func:`_unreachable`, but not a statement that timed out (``command_timeout``):
    worth one more try on a fresh connection."""
    return _unreachable(exc) and not isinstance(exc, asyncio.TimeoutError)


def rowcount(status: str) -> int:
    """The row count of a command status such as ``UPDATE 1``."""
    return int(status.rsplit(" ", 1)[-1])


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
