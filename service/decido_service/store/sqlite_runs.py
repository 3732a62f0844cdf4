"""Runs on SQLite (blocking; see :class:`~decido_service.store.Store` for what each
does): the run-row methods of :class:`~decido_service.store.sqlite_db.SQLiteDatabase`
(:class:`SQLiteRuns`), and its run queue and idempotency records (the functions here, which
:class:`~decido_service.store.sqlite.SQLiteStore` calls with its database). Every write is
one ``BEGIN IMMEDIATE`` transaction, which holds the file's single write lock: a claim, a
capped insert or an idempotency check is atomic across every process on the file."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from decido_service.store.records import iso_utc
from decido_service.store.run_rows import (
    COUNT_RUNS_SQL,
    FINISHED_STATES,
    RUN_FIELDS,
    check_run_changes,
)
from decido_service.store.sqlite_connection import SQLiteConnections
from decido_service.store.sqlite_webhooks import enqueue_run_event

__all__ = ["SQLiteRuns", "claim_run", "delete_runs", "discard_run", "enqueue_run",
           "expired_runs", "idempotency_begin", "idempotency_end", "prune_runs"]

_UNFINISHED = "state IN ('queued', 'running')"  # the partial index runs_unfinished
_RUN_FIELDS = RUN_FIELDS
_RUN_SELECT = f"SELECT {', '.join(RUN_FIELDS)}, cancel_requested FROM runs"


class SQLiteRuns(SQLiteConnections):
    """The run-row methods of :class:`~decido_service.store.sqlite_db.SQLiteDatabase`."""

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
            if cur.rowcount == 1 and changes.get("state") in FINISHED_STATES:
                final = conn.execute(f"{_RUN_SELECT} WHERE id = ?", (run_id,)).fetchone()
                enqueue_run_event(conn, _run_row(final), time.time())  # same transaction
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


def _run_row(row: Sequence[Any]) -> dict[str, Any]:
    out = dict(zip(RUN_FIELDS, row, strict=False))
    out["cancel_requested"] = bool(row[len(RUN_FIELDS)])
    return out


def enqueue_run(db: SQLiteRuns, run: Mapping[str, Any], cap: int | None,
                queue_cap: int | None) -> str | None:
    """Insert ``run`` unless its key or the queue is at its cap (one transaction)."""
    with db._transaction() as conn:
        if cap is not None:
            (count,) = conn.execute(f"SELECT count(*) FROM runs WHERE key_id = ? AND "
                                    f"{_UNFINISHED}", (run["key_id"],)).fetchone()
            if count >= cap:
                return "cap"
        if queue_cap is not None:
            (count,) = conn.execute(f"SELECT count(*) FROM runs WHERE {_UNFINISHED} AND "
                                    "state = 'queued'").fetchone()
            if count >= queue_cap:
                return "queue"
        db.insert_run(conn, run)
    return None


def discard_run(db: SQLiteRuns, run_id: str) -> bool:
    """Delete the run whatever its state."""
    with db._transaction() as conn:
        return conn.execute("DELETE FROM runs WHERE id = ?", (run_id,)).rowcount == 1


def claim_run(db: SQLiteRuns, owner: str, lease_until: float) -> dict[str, Any] | None:
    """Own the oldest unowned queued run until ``lease_until``."""
    with db._transaction() as conn:
        row = conn.execute(f"{_RUN_SELECT} WHERE {_UNFINISHED} AND state = 'queued' AND "
                           "owner IS NULL ORDER BY rowid LIMIT 1").fetchone()
        if row is None:
            return None
        conn.execute("UPDATE runs SET owner = ?, lease_until = ? WHERE id = ?",
                     (owner, lease_until, row[0]))
    out = _run_row(row)
    out.update(owner=owner, lease_until=lease_until)
    return out


def expired_runs(db: SQLiteRuns, now: float) -> list[dict[str, Any]]:
    """Unfinished runs whose lease ended before ``now``."""
    conn = db._conn()
    with db._errors():
        rows = conn.execute(f"{_RUN_SELECT} WHERE {_UNFINISHED} AND owner IS NOT NULL AND "
                            "lease_until < ? ORDER BY rowid", (now,)).fetchall()
    return [_run_row(r) for r in rows]


def delete_runs(db: SQLiteRuns, key_id: str) -> int:
    """Delete the key's finished runs."""
    with db._transaction() as conn:
        return conn.execute(f"DELETE FROM runs WHERE key_id = ? AND NOT ({_UNFINISHED}) "
                            "AND state IS NOT NULL", (key_id,)).rowcount


def prune_runs(db: SQLiteRuns, finished_before: str) -> int:
    """Delete runs finished before ``finished_before``."""
    with db._transaction() as conn:
        return conn.execute("DELETE FROM runs WHERE finished_at IS NOT NULL AND "
                            "finished_at < ?", (finished_before,)).rowcount


def idempotency_begin(db: SQLiteRuns, key_id: str, idem_key: str, fingerprint: str,
                      now: float, ttl: float) -> tuple[str, str | None]:
    """Look the key up, and record it pending when new (one transaction)."""
    with db._transaction() as conn:
        row = conn.execute("SELECT fingerprint, created_epoch, response FROM idempotency "
                           "WHERE key_id = ? AND idem_key = ?", (key_id, idem_key)).fetchone()
        if row is not None and row[1] >= now - ttl:
            if row[0] != fingerprint:
                return "mismatch", None
            return ("pending", None) if row[2] is None else ("done", str(row[2]))
        conn.execute("INSERT OR REPLACE INTO idempotency (key_id, idem_key, fingerprint, "
                     "created_epoch, response) VALUES (?, ?, ?, ?, NULL)",
                     (key_id, idem_key, fingerprint, now))
        conn.execute("DELETE FROM idempotency WHERE key_id = ? AND created_epoch < ?",
                     (key_id, now - ttl))
    return "new", None


def idempotency_end(db: SQLiteRuns, key_id: str, idem_key: str,
                    response: str | None) -> None:
    """Store the answer, or forget the pending record."""
    with db._transaction() as conn:
        if response is None:
            conn.execute("DELETE FROM idempotency WHERE key_id = ? AND idem_key = ? AND "
                         "response IS NULL", (key_id, idem_key))
        else:
            conn.execute("UPDATE idempotency SET response = ? WHERE key_id = ? AND "
                         "idem_key = ?", (response, key_id, idem_key))
