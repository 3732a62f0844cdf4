"""SQLite backend of the store: one WAL database file shared by every worker process.

- **Connections**: one per thread (and per process: a connection is never reused after a
  ``fork``), opened lazily; :meth:`SQLiteDatabase.close` closes those this process opened.
- **Durability**: ``journal_mode=WAL`` with ``synchronous=NORMAL`` by default. A commit is in
  the WAL file when ``COMMIT`` returns, so it survives ``kill -9`` of the process (the OS
  still holds the write); only a power loss or OS crash can drop the last commits. Pass
  ``synchronous="full"`` (URL ``?synchronous=full``) to fsync every commit as well.
- **Concurrency**: every write is one ``BEGIN IMMEDIATE`` transaction, which takes the
  database's single write lock first, so concurrent admissions from any number of threads
  and processes are serialised and a limit is never overshot. A writer that finds the lock
  taken retries every 50 microseconds (not SQLite's busy handler, which sleeps 1, 2, 5,
  10... ms between tries and made the tail latency of a busy service tens of
  milliseconds); past ``busy_timeout`` the call raises
  :class:`~decido_service.store.StoreError`.
- **Off the event loop**, generically: a concern's ``async`` body
  (:data:`~decido_service.store.dialect.Body`) is run to its end in a thread of the store:
  the one for everything that writes (SQLite has one writer anyway) or one of
  :data:`READ_THREADS` for reads (WAL lets readers run side by side, and sqlite3 lets go
  of the GIL while a statement runs), so a slow write stalls neither the event loop nor
  the reads, and a slow read does not hold up the reads behind it. The body's awaits
  of its :class:`SQLiteTx` never suspend (sqlite3 is blocking), so the thread drives the
  coroutine with one ``send`` (:func:`_drive`).
- **Schema**: :func:`~decido_service.store.schema.upgrade` in one ``BEGIN IMMEDIATE`` (a
  read-only check first, so workers opening an up-to-date file never wait for the lock).
"""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Literal, TypeVar, cast
from urllib.parse import parse_qsl

from decido_service.store import schema
from decido_service.store.dialect import SQLITE, Body, Row
from decido_service.store.records import StoreError

__all__ = ["LOCK_RETRY_INTERVAL", "READ_THREADS", "SQLiteDatabase", "SQLiteTx",
           "parse_sqlite_url"]

T = TypeVar("T")

#: Seconds between two tries for the write lock while another connection holds it.
LOCK_RETRY_INTERVAL = 50e-6
#: Threads (each with its connection) that run reads, per store
READ_THREADS = 4


class SQLiteTx:
    """A :class:`~decido_service.store.dialect.Tx` on a sqlite3 connection (blocking
    underneath: its coroutines never suspend)."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    async def execute(self, sql: str, *args: Any) -> int:
        """Run a statement; the rows it wrote."""
        return int(self.conn.execute(sql, args).rowcount)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run a statement once per row."""
        self.conn.executemany(sql, rows)

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        """Every row of a query."""
        return self.conn.execute(sql, args).fetchall()

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        """The first row of a query, or ``None``."""
        row: Row | None = self.conn.execute(sql, args).fetchone()
        return row


class SQLiteDatabase:
    """The SQLite :class:`~decido_service.store.dialect.Database` (module docs)."""

    dialect = SQLITE

    def __init__(self, path: str | os.PathLike[str], *, clock: Callable[[], float] | None = None,
                 synchronous: str = "normal", busy_timeout_ms: int = 10_000) -> None:
        sync = synchronous.upper()
        if sync not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be normal, full or extra, got {synchronous!r}")
        if busy_timeout_ms < 0:
            raise ValueError("busy_timeout_ms must be >= 0")
        self.path = os.fspath(path)
        self.synchronous = sync
        self.busy_timeout_ms = int(busy_timeout_ms)
        self.clock = clock or time.time
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: list[tuple[int, sqlite3.Connection]] = []
        self._closed = False
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="decido-store-write")
        self._reader = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="decido-store-read")

    # ------------------------------------------------------------------ the async layer
    async def read(self, body: Body[T]) -> T:
        """``body`` in a read thread, in autocommit."""
        return await self._call(self._reader, functools.partial(self._run, body, None))

    async def write(self, body: Body[T]) -> T:
        """``body`` in the write thread, in one ``BEGIN IMMEDIATE`` transaction."""
        return await self._call(self._writer, functools.partial(self._run, body, "IMMEDIATE"))

    @staticmethod
    async def _call(pool: ThreadPoolExecutor, call: Callable[[], T]) -> T:
        """``call()`` in ``pool``; a caller that is cancelled stops waiting, never the call
        (a write handed to the database always completes). A closed store's pools take no
        more calls: ``StoreError``."""
        try:
            future = asyncio.get_running_loop().run_in_executor(pool, call)
        except RuntimeError as exc:  # "cannot schedule new futures after shutdown"
            raise StoreError("the store is closed") from exc
        return await asyncio.shield(future)

    def _run(self, body: Body[T], mode: str | None) -> T:
        """``body`` on this thread's connection: in a transaction (``BEGIN <mode>``) or,
        for ``None``, in autocommit; sqlite3's errors become ``StoreError``."""
        if mode is None:
            with self._errors():
                return _drive(body(SQLiteTx(self._conn())))
        with _Transaction(self, mode) as conn:
            result = _drive(body(SQLiteTx(conn)))
        return result

    # ------------------------------------------------------------------ schema
    async def migrate(self) -> None:
        """Bring the schema to the current version (safe across processes).

        Several processes opening a new file together can see "database is locked" even
        on a read (while another one switches the file to WAL or recovers it): the whole
        step, idempotent, is retried for up to ``busy_timeout``."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        while True:
            try:
                if await self.schema_version() != len(schema.MIGRATIONS):
                    await self.write(lambda tx: schema.upgrade(tx, SQLITE))
                return
            except StoreError as exc:
                if not _is_busy(exc.__cause__ or exc) or time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(0.005)

    async def schema_version(self) -> int:
        """The applied schema version (0 for a new file)."""
        return await self.read(lambda tx: schema.version(tx, SQLITE))

    async def ping(self) -> bool:
        """True when the file answers and its schema is current (never raises)."""
        try:
            return await self.schema_version() == len(schema.MIGRATIONS)
        except StoreError:
            return False

    # ------------------------------------------------------------------ connections
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=0,  # no busy handler: _begin retries the write lock itself
            isolation_level=None,  # autocommit; transactions are explicit BEGIN ... COMMIT
            check_same_thread=False,  # used by one thread; closed by close() from any
        )
        try:
            mode = self._enter_wal(conn)
            if mode.lower() != "wal":
                raise StoreError(f"cannot put {self.path!r} in WAL mode (got {mode!r})")
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            conn.execute("PRAGMA foreign_keys = ON")  # the label index's cascade
            if sqlite3.sqlite_version_info < (3, 43, 0):  # built in since 3.43
                conn.create_function("octet_length", 1, _octet_length, deterministic=True)
        except BaseException:
            conn.close()
            raise
        return conn

    def _enter_wal(self, conn: sqlite3.Connection) -> str:
        """``PRAGMA journal_mode = WAL``, retried while another process holds the lock:
        switching a new file to WAL can fail at once with "database is locked" when several
        processes open it together (SQLite does not always call the busy handler there)."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        while True:
            try:
                return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("the store is closed")
        pid = os.getpid()
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != pid:
            with self._errors():
                conn = self._connect()
            with self._lock:
                self._conns.append((pid, conn))
            self._local.conn, self._local.pid = conn, pid
        return conn

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"store error: {exc}") from exc

    def _begin(self, conn: sqlite3.Connection, mode: str) -> None:
        """``BEGIN <mode>``, retried every :data:`LOCK_RETRY_INTERVAL` seconds while
        another connection holds the lock, for up to ``busy_timeout``."""
        deadline = None
        while True:
            try:
                conn.execute(f"BEGIN {mode}")
                return
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self.busy_timeout_ms / 1000
                elif now >= deadline:
                    raise
                time.sleep(LOCK_RETRY_INTERVAL)

    # ------------------------------------------------------------------ lifecycle
    async def close(self) -> None:
        """Let queued calls finish, then close the connections this process opened; later
        calls raise ``StoreError``."""
        loop = asyncio.get_running_loop()
        for pool in (self._writer, self._reader):
            await loop.run_in_executor(None, functools.partial(pool.shutdown, wait=True))
        self._closed = True
        pid = os.getpid()
        with self._lock:
            conns, self._conns = self._conns, []
        for owner, conn in conns:
            if owner == pid:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass

    def __repr__(self) -> str:
        return f"SQLiteDatabase({self.path!r}, synchronous={self.synchronous.lower()!r})"


class _Transaction:
    """``BEGIN <mode>`` ... ``COMMIT`` on the database's connection, rolled back on any
    exception; SQLite errors (in BEGIN, the block, COMMIT or ROLLBACK) become
    ``StoreError``. A class rather than a generator context manager: every group commit
    enters one, and a generator's set-up costs more than the rest of the Python there."""

    __slots__ = ("conn", "database", "mode")

    def __init__(self, database: SQLiteDatabase, mode: str) -> None:
        self.database = database
        self.mode = mode
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        conn = self.database._conn()
        try:
            self.database._begin(conn, self.mode)
        except sqlite3.Error as exc:
            raise StoreError(f"store error: {exc}") from exc
        self.conn = conn
        return conn

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> Literal[False]:
        conn = self.conn
        assert conn is not None
        try:
            if kind is None:
                try:
                    conn.execute("COMMIT")
                    return False
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error as err:
            raise StoreError(f"store error: {err}") from err
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"store error: {exc}") from exc
        return False


def _octet_length(value: Any) -> int | None:
    """SQL ``octet_length`` (PostgreSQL's, SQLite's from 3.43): the UTF-8 bytes of a text."""
    if value is None:
        return None
    return len(value) if isinstance(value, bytes) else len(str(value).encode())


def _drive(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a body whose awaits never suspend (they reach only a :class:`SQLiteTx`)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    coroutine.close()
    raise RuntimeError("a store body awaited something other than its SQLite transaction")


def _is_busy(exc: BaseException) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def parse_sqlite_url(url: str) -> tuple[str, dict[str, Any]]:
    """``(path, options)`` from a store URL or a plain path (see ``open_store``)."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("the store URL is empty")
    options: dict[str, Any] = {}
    if url.startswith("sqlite:"):
        rest, _, query = url[len("sqlite:"):].partition("?")
        if rest.startswith("///"):
            path = "/" + rest.lstrip("/")
        elif rest.startswith("//"):
            raise ValueError(f"store URL {url!r}: use sqlite:///absolute/path or sqlite:relative")
        else:
            path = rest
        for name, value in parse_qsl(query, keep_blank_values=True):
            if name == "synchronous":
                options["synchronous"] = value
            elif name == "busy_timeout":
                options["busy_timeout_ms"] = int(value)
            else:
                raise ValueError(f"store URL {url!r}: unknown option {name!r}")
    elif "://" in url:
        raise ValueError(f"unsupported store URL {url!r}; expected sqlite: or postgresql://")
    else:
        path = url
    if not path or path == ":memory:" or path.startswith("file:"):
        raise ValueError(f"store URL {url!r}: a database file path is required")
    return path, options
