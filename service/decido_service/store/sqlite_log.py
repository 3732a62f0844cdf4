"""The decision log on SQLite (blocking): the insert an admission batch writes its entries
with, and the reads of a key's entries (see :class:`~decido_service.store.Store`)."""

from __future__ import annotations

import orjson

from decido_service.store.records import DecisionRecord
from decido_service.store.sqlite_connection import SQLiteConnections

__all__ = ["INSERT_DECISION", "SQLiteLog"]

#: the insert of one decision-log row (the columns of a
#: :class:`~decido_service.store.DecisionEntry`, in its order)
INSERT_DECISION = (
    "INSERT INTO decisions (id, key_id, created_at, created_epoch, summary, request, answer)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


class SQLiteLog(SQLiteConnections):
    """The decision-log reads of :class:`~decido_service.store.sqlite_db.SQLiteDatabase`."""

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
