"""The blocking half of the SQLite backend (see :mod:`decido_service.store.sqlite`)."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import orjson

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
    prepare,
    window_bounds,
)
from decido_service.store.sqlite_counters import admit_batch, admit_one, states
from decido_service.store.sqlite_schema import MIGRATIONS, current_version, parse_sqlite_url

__all__ = ["SQLiteDatabase", "open_database"]

#: Minute and hour counter rows older than this (seconds past their window's end) are pruned.
PRUNE_GRACE = 3600
#: Seconds between two tries for the write lock while another connection holds it.
LOCK_RETRY_INTERVAL = 50e-6

_INSERT_DECISION = (
    "INSERT INTO decisions (id, key_id, created_at, created_epoch, summary, request, answer)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_RUN_FIELDS = RUN_FIELDS
_RUN_SELECT = f"SELECT {', '.join(RUN_FIELDS)}, cancel_requested FROM runs"


class SQLiteDatabase:
    """The blocking half of the SQLite backend: every method runs in the calling thread
    (:class:`SQLiteStore` calls them from its own threads)."""

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

    # ---------------------------------------------------------------- schema
    def schema_version(self) -> int:
        """The applied schema version (0 for a new file)."""
        with self._transaction("DEFERRED") as conn:
            return current_version(conn)

    def migrate(self) -> None:
        """Apply the missing :data:`MIGRATIONS` in one transaction (a read-only check
        first, so workers opening an up-to-date file never wait for the write lock).

        Several processes opening a new file together can see "database is locked" even
        on a read (while another one switches the file to WAL or recovers it): the whole
        step, idempotent, is retried for up to ``busy_timeout``."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000
        while True:
            try:
                return self._migrate_once()
            except StoreError as exc:
                cause = str(exc.__cause__ or exc)
                transient = "locked" in cause or "busy" in cause
                if not transient or time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)

    def _migrate_once(self) -> None:
        if self.schema_version() == len(MIGRATIONS):
            return
        with self._transaction() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            current = current_version(conn)
            if current > len(MIGRATIONS):
                raise StoreError(
                    f"database schema version {current} is newer than this code "
                    f"({len(MIGRATIONS)}); upgrade decido"
                )
            for version in range(current, len(MIGRATIONS)):
                MIGRATIONS[version](conn)
                conn.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                    (version + 1, iso_utc(time.time())),
                )

    def ping(self) -> bool:
        """True when the database file answers (and has been migrated)."""
        try:
            with self._transaction("DEFERRED") as conn:
                return current_version(conn) == len(MIGRATIONS)
        except StoreError:
            return False

    # ---------------------------------------------------------------- keys
    def create_key(self, plan: str, tier: str, label: str | None = None,
                   limits: dict[str, Any] | None = None,
                   owner: str | None = None) -> tuple[KeyRecord, str]:
        """Create a key; return ``(record, secret)``. Only the secret's hash is written;
        with ``owner``, the key joins that key's account."""
        record, secret, row = new_key(plan, tier, label, limits, self._clock())
        with self._transaction() as conn:
            conn.execute(f"INSERT INTO keys ({KEY_COLUMNS}, hash, account) "
                         f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {ACCOUNT_OF.format('?')})",
                         (*row, owner))
        return record, secret

    def find_key(self, secret: str) -> KeyRecord | None:
        """The key whose hash matches ``secret``; ``None`` if malformed or unknown."""
        if not keys.is_well_formed(secret):
            return None
        conn = self._conn()
        with self._errors():
            row = conn.execute(
                f"SELECT {KEY_COLUMNS}, hash FROM keys WHERE hash = ?",
                (keys.hash_secret(secret),),
            ).fetchone()
        if row is None or not keys.verify(secret, row[-1]):
            return None
        return key_record(row)

    def get_key(self, key_id: str) -> KeyRecord | None:
        """The key with this public id, or ``None``. (Addition to the protocol.)"""
        conn = self._conn()
        with self._errors():
            row = conn.execute(f"SELECT {KEY_COLUMNS} FROM keys WHERE id = ?", (key_id,))
            row = row.fetchone()
        return None if row is None else key_record(row)

    def list_keys(self) -> list[KeyRecord]:
        """All keys in creation order."""
        conn = self._conn()
        with self._errors():
            rows = conn.execute(f"SELECT {KEY_COLUMNS} FROM keys ORDER BY rowid").fetchall()
        return [key_record(row) for row in rows]

    def account_keys(self, key_id: str) -> list[KeyRecord]:
        """The keys of ``key_id``'s account, oldest first (``[]``: unknown id)."""
        conn = self._conn()
        with self._errors():
            rows = conn.execute(f"SELECT {KEY_COLUMNS} FROM keys WHERE COALESCE(account, id) = "
                                f"{ACCOUNT_OF.format('?')} ORDER BY rowid", (key_id,)).fetchall()
        return [key_record(row) for row in rows]

    def service_secret(self, name: str, candidate: str) -> str:
        """The secret stored under ``name`` (``candidate`` the first time)."""
        with self._transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO service_secrets (name, value) VALUES (?, ?)",
                         (name, candidate))
            row = conn.execute("SELECT value FROM service_secrets WHERE name = ?", (name,))
            return str(row.fetchone()[0])

    def open_session(self, session_id: str, key_id: str, expires: float, now: float) -> None:
        """Record a session (expired ones deleted)."""
        with self._transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE expires_epoch <= ?", (now,))
            conn.execute("INSERT INTO sessions (id, key_id, expires_epoch) VALUES (?, ?, ?)",
                         (session_id, key_id, expires))

    def session_key(self, session_id: str, now: float) -> KeyRecord | None:
        """The key of a live session, else ``None``."""
        conn = self._conn()
        with self._errors():
            row = conn.execute(SESSION_KEY.format("?", "?"), (session_id, now)).fetchone()
        return None if row is None else key_record(row)

    def close_session(self, session_id: str) -> None:
        """End a session."""
        with self._transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def revoke_key(self, key_id: str) -> bool:
        """Revoke; ``True`` if the key exists (an earlier ``revoked_at`` is kept)."""
        with self._transaction() as conn:
            cur = conn.execute(
                "UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?",
                (iso_utc(self._clock()), key_id),
            )
            return cur.rowcount == 1

    # ---------------------------------------------------------------- counters
    def admit(self, specs: Sequence[CounterSpec], now: float | None = None,
              key_id: str | None = None) -> Admission:
        """One request's admission (:meth:`admit_many` of one; ``now`` defaults to the
        current time)."""
        when = time.time() if now is None else now
        return self.admit_many([AdmissionRequest(specs, when, key_id)])[0]

    def admit_many(self, requests: Sequence[AdmissionRequest],
                   decisions: Sequence[DecisionEntry] = ()) -> list[Admission]:
        """Judge the requests in order in one ``BEGIN IMMEDIATE`` transaction (one commit
        for all of them; see :mod:`~decido_service.store.sqlite_counters`), and write
        the decision log's new rows (:func:`~decido_service.store.logged`) in it."""
        prepared = prepare(requests)
        with self._transaction() as conn:
            together = admit_batch(conn, prepared)
            # one of them is refused: one request at a time
            out = together if together is not None else [admit_one(conn, *item)
                                                         for item in prepared]
            rows = logged(requests, out, decisions)
            if rows:
                conn.executemany(_INSERT_DECISION, rows)
        if prepared:
            self._maybe_prune(prepared[-1][1])
        return out

    def peek(self, specs: Sequence[CounterSpec], now: float | None = None) -> list[CounterState]:
        """States of ``specs`` as they are (nothing is counted; ``now`` defaults to the
        current time)."""
        now = time.time() if now is None else now
        checked = check_specs(specs)
        bounds = [window_bounds(s.window, now) for s in checked]
        with self._transaction("DEFERRED") as conn:
            return states(conn, checked, bounds)

    def prune(self, now: float | None = None) -> int:
        """Delete minute and hour counter rows whose window ended more than
        :data:`PRUNE_GRACE` seconds before ``now`` (month rows are kept as the usage
        record) and logged decisions older than ``decision_retention`` seconds. Returns
        the number of rows deleted. (:meth:`admit_many` calls it at most once per
        ``prune_interval`` seconds.)"""
        now = time.time() if now is None else float(now)
        with self._transaction() as conn:
            counters = conn.execute(
                "DELETE FROM counters WHERE window != 'month' AND window_end < ?",
                (int(now) - PRUNE_GRACE,),
            ).rowcount
            decisions = conn.execute("DELETE FROM decisions WHERE created_epoch < ?",
                                     (now - self.decision_retention,)).rowcount
            return int(counters) + int(decisions)

    def _maybe_prune(self, now: float) -> None:
        if self.prune_interval is None:
            return
        tick = time.monotonic()
        if tick - self._last_prune < self.prune_interval:
            return
        self._last_prune = tick
        try:
            self.prune(now)
        except StoreError:
            pass  # opportunistic: a busy database is pruned next time

    # ---------------------------------------------------------------- runs
    def record_run(self, run: Mapping[str, Any]) -> None:
        """Insert one run record; missing ``id``/``created_at`` are filled in, other
        missing fields are NULL, unknown fields are ignored."""
        with self._transaction() as conn:
            self.insert_run(conn, run)

    def insert_run(self, conn: sqlite3.Connection, run: Mapping[str, Any]) -> None:
        """:meth:`record_run` inside the caller's transaction on ``conn``."""
        row = {name: run.get(name) for name in _RUN_FIELDS}
        row["id"] = row["id"] or uuid.uuid4().hex
        row["created_at"] = row["created_at"] or iso_utc(self._clock())
        seed = row["seed"]
        if isinstance(seed, int) and not -(2**63) <= seed < 2**63:
            row["seed"] = str(seed)  # beyond SQLite's 64-bit integers
        conn.execute(f"INSERT INTO runs ({', '.join(_RUN_FIELDS)}) "
                     f"VALUES ({', '.join(':' + f for f in _RUN_FIELDS)})", row)

    def list_runs(self, key_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """The newest run records, optionally of one key (for tools and tests; the service
        pages runs with :meth:`page_runs`)."""
        conn = self._conn()
        where, args = ("WHERE key_id = ?", [key_id]) if key_id is not None else ("", [])
        with self._errors():
            rows = conn.execute(
                f"SELECT {', '.join(_RUN_FIELDS)} FROM runs {where} "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?",
                [*args, int(limit)],
            ).fetchall()
        return [dict(zip(_RUN_FIELDS, row, strict=True)) for row in rows]

    def update_run(self, run_id: str, changes: Mapping[str, Any],
                   expect: Mapping[str, Any] | None = None) -> bool:
        """Set some :data:`RUN_UPDATABLE` columns of a run (see the protocol)."""
        columns = check_run_changes(changes)
        row = dict(changes)
        seed = row.get("seed")
        if isinstance(seed, int) and not -(2**63) <= seed < 2**63:
            row["seed"] = str(seed)
        sets = ", ".join(f"{c} = :{c}" for c in columns)
        conditions = "".join(f" AND {c} IS :expect_{c}" for c in check_run_changes(expect)) \
            if expect else ""
        expected = {f"expect_{c}": v for c, v in (expect or {}).items()}
        with self._transaction() as conn:
            cur = conn.execute(f"UPDATE runs SET {sets} WHERE id = :run_id{conditions}",
                               {**row, **expected, "run_id": run_id})
            return cur.rowcount == 1

    def get_run(self, key_id: str, run_id: str) -> dict[str, Any] | None:
        """One of ``key_id``'s runs, or ``None``."""
        conn = self._conn()
        with self._errors():
            row = conn.execute(f"{_RUN_SELECT} WHERE id = ? AND key_id = ?",
                               (run_id, key_id)).fetchone()
        return None if row is None else _run_row(row)

    def page_runs(self, key_id: str, limit: int, starting_after: str | None = None,
                  state: str | None = None, engine: str | None = None) -> list[dict[str, Any]]:
        """A page of ``key_id``'s runs, newest first (see the protocol)."""
        conn = self._conn()
        where, args = ["key_id = ?"], [key_id]
        with self._errors():
            if starting_after is not None:
                found = conn.execute("SELECT rowid FROM runs WHERE id = ? AND key_id = ?",
                                     (starting_after, key_id)).fetchone()
                if found is None:
                    raise ValueError(f"starting_after: no run {starting_after!r} of this key")
                where.append("rowid < ?")
                args.append(found[0])
            for column, value in (("state", state), ("engine", engine)):
                if value is not None:
                    where.append(f"{column} = ?")
                    args.append(value)
            rows = conn.execute(f"{_RUN_SELECT} WHERE {' AND '.join(where)} "
                                "ORDER BY rowid DESC LIMIT ?", [*args, int(limit)]).fetchall()
        return [_run_row(row) for row in rows]

    def unfinished_runs(self) -> list[dict[str, Any]]:
        """Every queued or running run, oldest first."""
        conn = self._conn()
        with self._errors():
            rows = conn.execute(f"{_RUN_SELECT} WHERE state IN ('queued', 'running') "
                                "ORDER BY rowid").fetchall()
        return [_run_row(row) for row in rows]

    def count_runs(self) -> dict[str, int]:
        """Runs by state (see the protocol)."""
        conn = self._conn()
        with self._errors():
            rows = conn.execute(COUNT_RUNS_SQL).fetchall()
        return {str(state): int(n) for state, n in rows}

    def request_cancel(self, key_id: str, run_id: str) -> str | None:
        """Flag an unfinished run for cancellation; its state (see the protocol)."""
        with self._transaction() as conn:
            row = conn.execute("SELECT state FROM runs WHERE id = ? AND key_id = ?",
                               (run_id, key_id)).fetchone()
            if row is None:
                return None
            if row[0] not in FINISHED_STATES:
                conn.execute("UPDATE runs SET cancel_requested = 1 WHERE id = ?", (run_id,))
            return str(row[0])

    def delete_run(self, key_id: str, run_id: str) -> str | None:
        """Delete a finished run; its state (see the protocol)."""
        with self._transaction() as conn:
            row = conn.execute("SELECT state FROM runs WHERE id = ? AND key_id = ?",
                               (run_id, key_id)).fetchone()
            if row is None:
                return None
            if row[0] in FINISHED_STATES:
                conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
            return str(row[0])

    # ---------------------------------------------------------------- decision log
    def list_decisions(self, key_id: str, limit: int,
                       starting_after: str | None = None) -> list[DecisionRecord]:
        """A page of ``key_id``'s log, newest first (see the protocol)."""
        conn = self._conn()
        with self._errors():
            before = None
            if starting_after is not None:
                row = conn.execute("SELECT seq FROM decisions WHERE id = ? AND key_id = ?",
                                   (starting_after, key_id)).fetchone()
                if row is None:
                    raise ValueError(f"starting_after: no decision {starting_after!r} "
                                     "of this key")
                before = int(row[0])
            rows = conn.execute(
                "SELECT id, key_id, created_at, summary FROM decisions WHERE key_id = ?"
                " AND seq < ? ORDER BY seq DESC LIMIT ?",
                (key_id, before if before is not None else 2**63 - 1, int(limit)),
            ).fetchall()
        return [DecisionRecord(id=r[0], key_id=r[1], created_at=r[2],
                               summary=orjson.loads(r[3]), request=None, answer=None)
                for r in rows]

    def get_decision(self, key_id: str, decision_id: str) -> DecisionRecord | None:
        """One of ``key_id``'s logged decisions, or ``None``."""
        conn = self._conn()
        with self._errors():
            r = conn.execute(
                "SELECT id, key_id, created_at, summary, request, answer FROM decisions"
                " WHERE id = ? AND key_id = ?", (decision_id, key_id)).fetchone()
        if r is None:
            return None
        return DecisionRecord(id=r[0], key_id=r[1], created_at=r[2], summary=orjson.loads(r[3]),
                              request=orjson.loads(r[4]),
                              answer=None if r[5] is None else orjson.loads(r[5]))

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

    def __enter__(self) -> SQLiteDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteDatabase({self.path!r}, synchronous={self.synchronous.lower()!r})"


class _Transaction:
    """``BEGIN <mode>`` ... ``COMMIT`` on the store's connection, rolled back on any
    exception; SQLite errors (in BEGIN, the block, COMMIT or ROLLBACK) become
    ``StoreError``. A class rather than a generator context manager: every group commit
    enters one, and a generator's set-up costs more than the rest of the Python there."""

    __slots__ = ("conn", "mode", "store")

    def __init__(self, store: SQLiteDatabase, mode: str) -> None:
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


def open_database(url: str, *, clock: Callable[[], float] | None = None) -> SQLiteDatabase:
    """The blocking database at ``url`` (the URLs of
    :func:`~decido_service.store.open_store`), migrated: for tools and tests that want
    SQLite calls without an event loop."""
    path, options = parse_sqlite_url(url)
    database = SQLiteDatabase(path, clock=clock, **options)
    try:
        database.migrate()
    except BaseException:
        database.close()
        raise
    return database


def _run_row(row: Sequence[Any]) -> dict[str, Any]:
    out = dict(zip(RUN_FIELDS, row, strict=False))
    out["cancel_requested"] = bool(row[len(RUN_FIELDS)])
    return out

