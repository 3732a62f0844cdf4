"""The blocking half of the SQLite backend (see :mod:`decido_service.store.sqlite`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from decido_service.store.admission_rule import (
    PRUNE_GRACE,
    check_specs,
    logged,
    prepare,
    window_bounds,
)
from decido_service.store.records import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionEntry,
    StoreError,
    iso_utc,
)
from decido_service.store.sqlite_counters import admit_batch, admit_one, states
from decido_service.store.sqlite_keys import SQLiteKeys
from decido_service.store.sqlite_log import INSERT_DECISION, SQLiteLog
from decido_service.store.sqlite_runs import SQLiteRuns
from decido_service.store.sqlite_schema import MIGRATIONS, current_version, parse_sqlite_url

__all__ = ["SQLiteDatabase", "open_database"]


class SQLiteDatabase(SQLiteKeys, SQLiteRuns, SQLiteLog):
    """The blocking half of the SQLite backend: every method runs in the calling thread
    (:class:`SQLiteStore` calls them from its own threads). Its connections and
    transactions are :class:`~decido_service.store.sqlite_connection.SQLiteConnections`;
    keys, runs and the decision log are its parts of the same names
    (:mod:`~decido_service.store.sqlite_keys`, :mod:`~decido_service.store.sqlite_runs`,
    :mod:`~decido_service.store.sqlite_log`); here are the schema and the counters."""

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
        the decision log's new rows (:func:`~decido_service.store.admission_rule.logged`) in it."""
        prepared = prepare(requests)
        with self._transaction() as conn:
            together = admit_batch(conn, prepared)
            # one of them is refused: one request at a time
            out = together if together is not None else [admit_one(conn, *item)
                                                         for item in prepared]
            rows = logged(requests, out, decisions)
            if rows:
                conn.executemany(INSERT_DECISION, rows)
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

    def __enter__(self) -> SQLiteDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteDatabase({self.path!r}, synchronous={self.synchronous.lower()!r})"


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
