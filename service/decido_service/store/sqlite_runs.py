"""The SQLite backend's run queue and idempotency records (blocking; see
:class:`~decido_service.store.Store` for what each does). Every write is one ``BEGIN
IMMEDIATE`` transaction, which holds the file's single write lock: a claim, a capped
insert or an idempotency check is atomic across every process on the file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from decido_service.store.sqlite_db import _RUN_SELECT as _SELECT
from decido_service.store.sqlite_db import SQLiteDatabase
from decido_service.store.sqlite_db import _run_row as _row

__all__ = ["claim_run", "delete_runs", "discard_run", "enqueue_run", "expired_runs",
           "idempotency_begin", "idempotency_end", "prune_runs"]

_UNFINISHED = "state IN ('queued', 'running')"  # the partial index runs_unfinished


def enqueue_run(db: SQLiteDatabase, run: Mapping[str, Any], cap: int | None,
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


def discard_run(db: SQLiteDatabase, run_id: str) -> bool:
    """Delete the run whatever its state."""
    with db._transaction() as conn:
        return conn.execute("DELETE FROM runs WHERE id = ?", (run_id,)).rowcount == 1


def claim_run(db: SQLiteDatabase, owner: str, lease_until: float) -> dict[str, Any] | None:
    """Own the oldest unowned queued run until ``lease_until``."""
    with db._transaction() as conn:
        row = conn.execute(f"{_SELECT} WHERE {_UNFINISHED} AND state = 'queued' AND "
                           "owner IS NULL ORDER BY rowid LIMIT 1").fetchone()
        if row is None:
            return None
        conn.execute("UPDATE runs SET owner = ?, lease_until = ? WHERE id = ?",
                     (owner, lease_until, row[0]))
    out = _row(row)
    out.update(owner=owner, lease_until=lease_until)
    return out


def expired_runs(db: SQLiteDatabase, now: float) -> list[dict[str, Any]]:
    """Unfinished runs whose lease ended before ``now``."""
    conn = db._conn()
    with db._errors():
        rows = conn.execute(f"{_SELECT} WHERE {_UNFINISHED} AND owner IS NOT NULL AND "
                            "lease_until < ? ORDER BY rowid", (now,)).fetchall()
    return [_row(r) for r in rows]


def delete_runs(db: SQLiteDatabase, key_id: str) -> int:
    """Delete the key's finished runs."""
    with db._transaction() as conn:
        return conn.execute(f"DELETE FROM runs WHERE key_id = ? AND NOT ({_UNFINISHED}) "
                            "AND state IS NOT NULL", (key_id,)).rowcount


def prune_runs(db: SQLiteDatabase, finished_before: str) -> int:
    """Delete runs finished before ``finished_before``."""
    with db._transaction() as conn:
        return conn.execute("DELETE FROM runs WHERE finished_at IS NOT NULL AND "
                            "finished_at < ?", (finished_before,)).rowcount


def idempotency_begin(db: SQLiteDatabase, key_id: str, idem_key: str, fingerprint: str,
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


def idempotency_end(db: SQLiteDatabase, key_id: str, idem_key: str,
                    response: str | None) -> None:
    """Store the answer, or forget the pending record."""
    with db._transaction() as conn:
        if response is None:
            conn.execute("DELETE FROM idempotency WHERE key_id = ? AND idem_key = ? AND "
                         "response IS NULL", (key_id, idem_key))
        else:
            conn.execute("UPDATE idempotency SET response = ? WHERE key_id = ? AND "
                         "idem_key = ?", (response, key_id, idem_key))

