"""The SQLite database's settings, connections and transactions (blocking): the base of
:class:`~decido_service.store.sqlite_db.SQLiteDatabase` and of its parts (keys, runs,
decision log), which all reach the file through :meth:`SQLiteConnections._conn` and
:meth:`SQLiteConnections._transaction`."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

from decido_service.store.records import StoreError

__all__ = ["LOCK_RETRY_INTERVAL", "SQLiteConnections"]

#: Seconds between two tries for the write lock while another connection holds it.
LOCK_RETRY_INTERVAL = 50e-6


class SQLiteConnections:
    """A SQLite file's settings and its connections: one per thread (and per process),
    opened lazily; every method runs in the calling thread."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] | None = None,
        synchronous: str = "normal",
        busy_timeout_ms: int = 10_000,
        prune_interval: float | None = 60.0,
        decision_retention: float = 30 * 86400.0,
    ) -> None:
        sync = synchronous.upper()
        if sync not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be normal, full or extra, got {synchronous!r}")
        if busy_timeout_ms < 0:
            raise ValueError("busy_timeout_ms must be >= 0")
        self.path = os.fspath(path)
        self.synchronous = sync
        self.busy_timeout_ms = int(busy_timeout_ms)
        self.prune_interval = prune_interval
        self.decision_retention = float(decision_retention)
        self._clock = clock or time.time
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: list[tuple[int, sqlite3.Connection]] = []
        self._closed = False
        self._last_prune = time.monotonic()

    # ---------------------------------------------------------------- connections
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=0,  # no busy handler: _transaction retries the write lock itself
            isolation_level=None,  # autocommit; transactions are explicit BEGIN ... COMMIT
            check_same_thread=False,  # used by one thread; closed by close() from any
        )
        try:
            mode = self._enter_wal(conn)
            if str(mode).lower() != "wal":
                raise StoreError(f"cannot put {self.path!r} in WAL mode (got {mode!r})")
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _enter_wal(self, conn: sqlite3.Connection) -> str:
        """``PRAGMA journal_mode = WAL``, retried while another process holds the lock.

        Switching a new file to WAL can fail at once with "database is locked" when several
        processes open it together (SQLite does not always call the busy handler there),
        so retry for up to ``busy_timeout``."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        while True:
            try:
                return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
            except sqlite3.OperationalError as exc:
                transient = "locked" in str(exc) or "busy" in str(exc)
                if not transient or time.monotonic() >= deadline:
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
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self.busy_timeout_ms / 1000
                elif now >= deadline:
                    raise
                time.sleep(LOCK_RETRY_INTERVAL)

    def _transaction(self, mode: str = "IMMEDIATE") -> _Transaction:
        """``BEGIN <mode>`` ... ``COMMIT``; rolled back on any exception."""
        return _Transaction(self, mode)

    # ---------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close the connections this process opened; later calls raise ``StoreError``."""
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


class _Transaction:
    """``BEGIN <mode>`` ... ``COMMIT`` on the store's connection, rolled back on any
    exception; SQLite errors (in BEGIN, the block, COMMIT or ROLLBACK) become
    ``StoreError``. A class rather than a generator context manager: every group commit
    enters one, and a generator's set-up costs more than the rest of the Python there."""

    __slots__ = ("conn", "mode", "store")

    def __init__(self, store: SQLiteConnections, mode: str) -> None:
        self.store = store
        self.mode = mode
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        conn = self.store._conn()
        try:
            self.store._begin(conn, self.mode)
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
