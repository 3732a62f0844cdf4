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
  :class:`~decido_service.store.StoreError`. Every call is short and synchronous, so the
  service may run it on its event loop.
- **Schema**: ``schema_version`` records each applied migration; :data:`MIGRATIONS` is the
  ordered list (migration *i* brings the schema to version *i + 1*). :meth:`migrate` runs
  the missing ones inside one ``BEGIN IMMEDIATE``, so workers starting together are safe.
- **Secrets**: only SHA-256 hashes of keys are stored (plus their public 11-character prefix).
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl

from decido_service import keys
from decido_service.store import (
    WINDOWS,
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    KeyRecord,
    StoreError,
    iso_utc,
    window_bounds,
)

__all__ = ["MIGRATIONS", "SQLiteStore", "parse_sqlite_url"]

#: Minute and hour counter rows older than this (seconds past their window's end) are pruned.
PRUNE_GRACE = 3600
#: Seconds between two tries for the write lock while another connection holds it.
LOCK_RETRY_INTERVAL = 50e-6

_KEY_COLUMNS = "id, prefix, plan, tier, label, created_at, revoked_at, limits"
_RUN_FIELDS = (
    "id", "key_id", "created_at", "engine", "dims", "status", "value", "evaluations",
    "elapsed_ms", "goal", "seed",
)


def _m001_initial(conn: sqlite3.Connection) -> None:
    """Keys (hashed), usage counters per window, optimization run records."""
    conn.execute(
        """CREATE TABLE keys (
            id          TEXT PRIMARY KEY,
            prefix      TEXT NOT NULL,
            hash        TEXT NOT NULL UNIQUE,
            plan        TEXT NOT NULL,
            tier        TEXT NOT NULL,
            label       TEXT,
            created_at  TEXT NOT NULL,
            revoked_at  TEXT,
            limits      TEXT
        )"""
    )
    conn.execute(
        """CREATE TABLE counters (
            name          TEXT NOT NULL,
            subject       TEXT NOT NULL,
            window        TEXT NOT NULL,
            window_start  INTEGER NOT NULL,
            window_end    INTEGER NOT NULL,
            count         INTEGER NOT NULL,
            PRIMARY KEY (name, subject, window, window_start)
        ) WITHOUT ROWID"""
    )
    conn.execute(
        """CREATE TABLE runs (
            id           TEXT PRIMARY KEY,
            key_id       TEXT,
            created_at   TEXT NOT NULL,
            engine       TEXT,
            dims         INTEGER,
            status       TEXT,
            value        REAL,
            evaluations  INTEGER,
            elapsed_ms   REAL,
            goal         TEXT,
            seed
        )"""
    )
    conn.execute("CREATE INDEX runs_by_key ON runs (key_id, created_at)")


#: Ordered migrations: ``MIGRATIONS[i]`` takes the schema from version ``i`` to ``i + 1``.
#: Append only; never edit one that has shipped.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_m001_initial]


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
        raise ValueError(f"unsupported store URL {url!r}; this build has sqlite only")
    else:
        path = url
    if not path or path == ":memory:" or path.startswith("file:"):
        raise ValueError(f"store URL {url!r}: a database file path is required")
    return path, options


class SQLiteStore:
    """The :class:`~decido_service.store.Store` on one SQLite file (see module docs)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] | None = None,
        synchronous: str = "normal",
        busy_timeout_ms: int = 10_000,
        prune_interval: float | None = 60.0,
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
            return _current_version(conn)

    def migrate(self) -> None:
        """Apply the missing :data:`MIGRATIONS` in one transaction (a read-only check
        first, so workers opening an up-to-date file never wait for the write lock)."""
        if self.schema_version() == len(MIGRATIONS):
            return
        with self._transaction() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            current = _current_version(conn)
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
                return _current_version(conn) == len(MIGRATIONS)
        except StoreError:
            return False

    # ---------------------------------------------------------------- keys
    def create_key(
        self,
        plan: str,
        tier: str,
        label: str | None = None,
        limits: dict[str, Any] | None = None,
    ) -> tuple[KeyRecord, str]:
        """Create a key; return ``(record, secret)``. Only the secret's hash is written."""
        for what, value in (("plan", plan), ("tier", tier)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"{what} must be a non-empty string")
        if label is not None and not isinstance(label, str):
            raise ValueError("label must be a string or None")
        if limits is not None and not isinstance(limits, dict):
            raise ValueError("limits must be a dict or None")
        secret, prefix, digest = keys.new_key_material()
        record = KeyRecord(
            id=uuid.uuid4().hex,
            prefix=prefix,
            plan=plan,
            tier=tier,
            label=label,
            created_at=iso_utc(self._clock()),
            revoked_at=None,
            limits=limits,
        )
        with self._transaction() as conn:
            conn.execute(
                f"INSERT INTO keys ({_KEY_COLUMNS}, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record["id"], prefix, plan, tier, label, record["created_at"], None,
                    None if limits is None else json.dumps(limits, sort_keys=True),
                    digest,
                ),
            )
        return record, secret

    def find_key(self, secret: str) -> KeyRecord | None:
        """The key whose hash matches ``secret``; ``None`` if malformed or unknown."""
        if not keys.is_well_formed(secret):
            return None
        conn = self._conn()
        with self._errors():
            row = conn.execute(
                f"SELECT {_KEY_COLUMNS}, hash FROM keys WHERE hash = ?",
                (keys.hash_secret(secret),),
            ).fetchone()
        if row is None or not keys.verify(secret, row[-1]):
            return None
        return _key_record(row)

    def get_key(self, key_id: str) -> KeyRecord | None:
        """The key with this public id, or ``None``. (Addition to the protocol.)"""
        conn = self._conn()
        with self._errors():
            row = conn.execute(f"SELECT {_KEY_COLUMNS} FROM keys WHERE id = ?", (key_id,))
            row = row.fetchone()
        return None if row is None else _key_record(row)

    def list_keys(self) -> list[KeyRecord]:
        """All keys in creation order."""
        conn = self._conn()
        with self._errors():
            rows = conn.execute(f"SELECT {_KEY_COLUMNS} FROM keys ORDER BY rowid").fetchall()
        return [_key_record(row) for row in rows]

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
        """Check every spec and increment all of them, or none, in one ``BEGIN IMMEDIATE``.

        A spec passes when ``limit is None`` or ``used + amount <= limit``. When one fails,
        nothing is written, ``refused`` is the first failing counter and every state shows
        the usage before this request. Otherwise states show the usage after it. With
        ``key_id``, the key is checked in the same transaction: a revoked (or deleted) key
        is not admitted and ``revoked_at`` says when it was revoked."""
        return self.admit_many([AdmissionRequest(specs, now, key_id)])[0]

    def admit_many(self, requests: Sequence[AdmissionRequest]) -> list[Admission]:
        """:meth:`admit` for several requests in one transaction (a group commit): each is
        all-or-nothing on its own, in order, so an earlier one can use up a limit that a
        later one then finds reached. One commit for all of them.

        The common case costs a few statements whatever the batch size: one lookup of the
        keys' revocations and one multi-row UPSERT of the batch's total per counter; when
        that total passes a limit, it is undone and the requests go one at a time."""
        prepared = []
        for specs, now, key_id in requests:
            specs = _checked(specs)
            now = time.time() if now is None else float(now)
            prepared.append((specs, now, key_id, [window_bounds(s.window, now) for s in specs]))
        with self._transaction() as conn:
            out = _admit_together(conn, prepared)
            if out is None:  # a limit is reached within the batch: one request at a time
                out = [_admit_one(conn, *item) for item in prepared]
        if prepared:
            self._maybe_prune(prepared[-1][1])
        return out

    def peek(self, specs: Sequence[CounterSpec], now: float | None = None) -> list[CounterState]:
        """States of ``specs`` as they are (``amount`` is ignored; nothing is counted)."""
        specs = _checked(specs)
        now = time.time() if now is None else float(now)
        bounds = [window_bounds(s.window, now) for s in specs]
        with self._transaction("DEFERRED") as conn:
            used = [_count(conn, s, b[0]) for s, b in zip(specs, bounds, strict=True)]
        return [_state(s, u, b) for s, u, b in zip(specs, used, bounds, strict=True)]

    def prune(self, now: float | None = None) -> int:
        """Delete minute and hour counter rows whose window ended more than
        :data:`PRUNE_GRACE` seconds before ``now``; month rows are kept as the usage record.
        Returns the number of rows deleted. (Addition; :meth:`admit` calls it at most once
        per ``prune_interval`` seconds.)"""
        now = time.time() if now is None else float(now)
        with self._transaction() as conn:
            cur = conn.execute(
                "DELETE FROM counters WHERE window != 'month' AND window_end < ?",
                (int(now) - PRUNE_GRACE,),
            )
            return cur.rowcount

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
        row = {name: run.get(name) for name in _RUN_FIELDS}
        row["id"] = row["id"] or uuid.uuid4().hex
        row["created_at"] = row["created_at"] or iso_utc(self._clock())
        seed = row["seed"]
        if isinstance(seed, int) and not -(2**63) <= seed < 2**63:
            row["seed"] = str(seed)  # beyond SQLite's 64-bit integers
        with self._transaction() as conn:
            conn.execute(
                f"INSERT INTO runs ({', '.join(_RUN_FIELDS)}) "
                f"VALUES ({', '.join(':' + f for f in _RUN_FIELDS)})",
                row,
            )

    def list_runs(self, key_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """The newest run records, optionally of one key. (Addition to the protocol.)"""
        conn = self._conn()
        where, args = ("WHERE key_id = ?", [key_id]) if key_id is not None else ("", [])
        with self._errors():
            rows = conn.execute(
                f"SELECT {', '.join(_RUN_FIELDS)} FROM runs {where} "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?",
                [*args, int(limit)],
            ).fetchall()
        return [dict(zip(_RUN_FIELDS, row, strict=True)) for row in rows]

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

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r}, synchronous={self.synchronous.lower()!r})"


class _Transaction:
    """``BEGIN <mode>`` ... ``COMMIT`` on the store's connection, rolled back on any
    exception; SQLite errors (in BEGIN, the block, COMMIT or ROLLBACK) become
    ``StoreError``. A class rather than a generator context manager: every group commit
    enters one, and a generator's set-up costs more than the rest of the Python there."""

    __slots__ = ("conn", "mode", "store")

    def __init__(self, store: SQLiteStore, mode: str) -> None:
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
                 tb: object) -> bool:
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


def _current_version(conn: sqlite3.Connection) -> int:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if exists is None:
        return 0
    return conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]


def _key_record(row: Sequence[Any]) -> KeyRecord:
    return KeyRecord(
        id=row[0],
        prefix=row[1],
        plan=row[2],
        tier=row[3],
        label=row[4],
        created_at=row[5],
        revoked_at=row[6],
        limits=None if row[7] is None else json.loads(row[7]),
    )


def _checked(specs: Sequence[CounterSpec]) -> list[CounterSpec]:
    specs = [s if type(s) is CounterSpec else CounterSpec(*s) for s in specs]
    seen: set[tuple[str, str, str]] = set()
    for s in specs:
        if s.window not in WINDOWS:
            raise ValueError(f"unknown counter window {s.window!r}; expected one of {WINDOWS}")
        if not isinstance(s.amount, int) or s.amount < 0:
            raise ValueError(f"counter {s.name!r}: amount must be an integer >= 0")
        if s.limit is not None and (not isinstance(s.limit, int) or s.limit < 0):
            raise ValueError(f"counter {s.name!r}: limit must be an integer >= 0 or None")
        ident = (s.name, s.subject, s.window)
        if ident in seen:
            raise ValueError(f"counter {s.name!r} for {s.subject!r} appears twice")
        seen.add(ident)
    return specs


def _count(conn: sqlite3.Connection, spec: CounterSpec, start: int) -> int:
    row = conn.execute(
        "SELECT count FROM counters WHERE name = ? AND subject = ? AND window = ?"
        " AND window_start = ?",
        (spec.name, spec.subject, spec.window, start),
    ).fetchone()
    return 0 if row is None else int(row[0])


def _state(spec: CounterSpec, used: int, bounds: tuple[int, int]) -> CounterState:
    remaining = None if spec.limit is None else max(spec.limit - used, 0)
    return CounterState(spec.name, spec.limit, used, remaining, bounds[1], bounds[0], bounds[1])


_UPSERT = (
    "INSERT INTO counters (name, subject, window, window_start, window_end, count)"
    " VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (name, subject, window, window_start)"
    " DO UPDATE SET count = count + excluded.count RETURNING count"
)
_UPSERT_MANY_HEAD = (
    "INSERT INTO counters (name, subject, window, window_start, window_end, count) VALUES "
)
_UPSERT_MANY_TAIL = (
    " ON CONFLICT (name, subject, window, window_start)"
    " DO UPDATE SET count = count + excluded.count"
    " RETURNING name, subject, window, window_start, count"
)
_UNDO = (
    "UPDATE counters SET count = count - ? WHERE name = ? AND subject = ? AND window = ?"
    " AND window_start = ?"
)


Prepared = tuple[list[CounterSpec], float, "str | None", list[tuple[int, int]]]


def _admit_together(conn: sqlite3.Connection,
                    prepared: Sequence[Prepared]) -> list[Admission] | None:
    """Admit every request of the batch with one UPSERT of the per-counter totals, or
    return ``None`` (having written nothing) when a request would pass a limit, so that
    the caller decides them one by one. Requests of revoked keys are not counted."""
    key_ids = {item[2] for item in prepared}
    key_ids.discard(None)
    revoked: dict[str, str] = {}
    if key_ids:
        found = dict(conn.execute(_keys_revoked_sql(len(key_ids)), list(key_ids)).fetchall())
        for key_id in key_ids:
            if key_id not in found:
                revoked[key_id] = iso_utc(prepared[0][1])  # deleted: as good as revoked
            elif found[key_id] is not None:
                revoked[key_id] = found[key_id]
    # each request's counters as (ident, spec, start, end); the totals per ident
    counted: list[list[tuple[tuple[str, str, str, int], CounterSpec, int, int]] | None] = []
    totals: dict[tuple[str, str, str, int], list[int]] = {}  # -> [window end, amount]
    for specs, _, key_id, bounds in prepared:
        if key_id in revoked:
            counted.append(None)
            continue
        mine = []
        for spec, (start, end) in zip(specs, bounds, strict=True):
            ident = (spec.name, spec.subject, spec.window, start)
            total = totals.get(ident)
            if total is None:
                totals[ident] = [end, spec.amount]
            else:
                total[1] += spec.amount
            mine.append((ident, spec, start, end))
        counted.append(mine)
    used: dict[tuple[str, str, str, int], int] = {}
    if totals:
        flat: list[Any] = []
        for ident, (end, amount) in totals.items():
            flat += ident
            flat.append(end)
            flat.append(amount)
        for name, subject, window, start, count in conn.execute(
                _upsert_many_sql(len(totals)), flat).fetchall():
            ident = (name, subject, window, start)
            used[ident] = count - totals[ident][1]  # the count before this batch
    # replay the batch in order from each counter's count before it
    out: list[Admission] = []
    for (specs, _, key_id, bounds), mine in zip(prepared, counted, strict=True):
        if mine is None:
            states = [_state(s, _count(conn, s, b[0]), b) for s, b in zip(specs, bounds,
                                                                            strict=True)]
            out.append(Admission(False, states, None, revoked[key_id]))
            continue
        states = []
        for ident, spec, start, end in mine:
            now_used = used[ident] + spec.amount
            used[ident] = now_used
            limit = spec.limit
            if limit is None:
                remaining = None
            elif now_used > limit:
                conn.executemany(_UNDO, [(amount, *ident) for ident, (_, amount)
                                         in totals.items()])
                return None
            else:
                remaining = limit - now_used
            states.append(CounterState(spec.name, limit, now_used, remaining, end, start, end))
        out.append(Admission(True, states, None))
    return out


@functools.lru_cache(maxsize=64)
def _keys_revoked_sql(n: int) -> str:
    """``SELECT id, revoked_at`` of ``n`` keys."""
    return f"SELECT id, revoked_at FROM keys WHERE id IN ({','.join('?' * n)})"


@functools.lru_cache(maxsize=256)
def _upsert_many_sql(n: int) -> str:
    """The UPSERT of ``n`` counter rows, returning each one's count after it."""
    return _UPSERT_MANY_HEAD + ",".join(["(?, ?, ?, ?, ?, ?)"] * n) + _UPSERT_MANY_TAIL


def _admit_one(conn: sqlite3.Connection, specs: list[CounterSpec], now: float,
               key_id: str | None, bounds: list[tuple[int, int]]) -> Admission:
    """One all-or-nothing admission inside the caller's write transaction.

    Every counter is incremented with one UPSERT ... RETURNING; the first one that goes
    over its limit is undone together with those before it (the transaction holds the
    write lock, so nobody saw them), which costs statements only on the refusal path."""
    if key_id is not None:
        row = conn.execute("SELECT revoked_at FROM keys WHERE id = ?", (key_id,)).fetchone()
        revoked_at = iso_utc(now) if row is None else row[0]
        if revoked_at is not None:
            used = [_count(conn, s, b[0]) for s, b in zip(specs, bounds, strict=True)]
            states = [_state(s, u, b) for s, u, b in zip(specs, used, bounds, strict=True)]
            return Admission(False, states, None, revoked_at)
    used: list[int] = []
    for i, (spec, (start, end)) in enumerate(zip(specs, bounds, strict=True)):
        after = conn.execute(
            _UPSERT, (spec.name, spec.subject, spec.window, start, end, spec.amount)
        ).fetchone()[0]
        if spec.limit is not None and after > spec.limit:
            for s, b in zip(specs[: i + 1], bounds, strict=False):
                conn.execute(_UNDO, (s.amount, s.name, s.subject, s.window, b[0]))
            before = [u - s.amount for u, s in zip(used, specs, strict=False)]
            before.append(after - spec.amount)
            before += [_count(conn, s, b[0]) for s, b in zip(specs[i + 1:], bounds[i + 1:],
                                                            strict=True)]
            states = [_state(s, u, b) for s, u, b in zip(specs, before, bounds, strict=True)]
            return Admission(False, states, states[i])
        used.append(after)
    states = [_state(s, u, b) for s, u, b in zip(specs, used, bounds, strict=True)]
    return Admission(True, states, None)
