"""The decision-log concern: entries are written by the admission that counts their request
(:meth:`DecisionLog.append`, in the admission's transaction), read a key at a time,
newest first, and deleted after their retention by a scheduled job.

**The byte cap.** A key's log holds at most ``byte_cap`` bytes (the service's
``DECIDO_DECISION_LOG_BYTES``; ``None`` or 0: no cap). An entry's size is the UTF-8 bytes
of what its row keeps: summary, request, answer and labels (:func:`entry_size`, stored in its
``size`` column). Each key's running total is a row of ``decision_log_bytes``, added to by
one UPSERT in the transaction that inserts the entries (the UPSERT returns the new totals,
and on PostgreSQL locks the key's total row until the commit, so a key's appends never
interleave). When a total is over the cap, the key's **oldest entries are deleted first**,
in the same transaction, until the rest fits in :data:`KEEP` of the cap (so a key at its
cap deletes a batch of entries once every 1/64 of the cap's worth of new ones, rather than
one on every call: measured, ``benchmarks/load/instructions.py``); the entry just written
is never deleted, so a log whose newest entry alone is larger than the cap holds that entry
alone. Retention
pruning takes what it deletes off the totals in its own transaction, locking the totals of
the keys it prunes (in key order, as the UPSERT does) before it deletes, so the two never
deadlock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import orjson

from decido_service.store import labels
from decido_service.store.dialect import Database, Row, Tx, after_cursor, insert_sql
from decido_service.store.labels import Scope
from decido_service.store.records import DecisionEntry, DecisionRecord, metadata_of

__all__ = ["INSERT_DECISION", "KEEP", "DecisionLog", "entry_size"]

#: the insert of one decision-log row (the columns of a
#: :class:`~decido_service.store.DecisionEntry`, in its order, then its size)
INSERT_DECISION = insert_sql("decisions", (*DecisionEntry._fields, "size"))
#: the columns an entry is read from: :class:`~decido_service.store.DecisionRecord`'s
_RECORD = ", ".join(DecisionRecord.__annotations__)
_SUBTRACT = "UPDATE decision_log_bytes SET total = total - ? WHERE key_id = ?"
#: the share of the cap a key's log is brought back to once it is over it
KEEP = 63 / 64
#: the most rows read at a time while looking for the oldest entries to delete
_TRIM_PAGE = 1024


def _octets(text: str | None) -> int:
    """The UTF-8 bytes of ``text`` (ASCII text, the usual case, is not encoded)."""
    if text is None:
        return 0
    return len(text) if text.isascii() else len(text.encode())


def entry_size(entry: DecisionEntry) -> int:
    """The bytes an entry counts against its key's cap: its summary, request, answer and
    labels as stored (UTF-8)."""
    return (_octets(entry.summary) + _octets(entry.request) + _octets(entry.answer)
            + _octets(entry.metadata))


class DecisionLog:
    """A key's logged decisions, on a database; ``byte_cap``: the bytes a key's log may
    hold (module docs; ``None`` or 0: no cap)."""

    def __init__(self, database: Database, byte_cap: int | None = None) -> None:
        self.db = database
        self.byte_cap = byte_cap or None

    async def append(self, tx: Tx, entries: Sequence[DecisionEntry]) -> None:
        """Write ``entries`` (in order) inside the caller's write transaction, add their
        sizes to their keys' totals and delete the oldest entries of any key over the cap
        (module docs)."""
        if not entries:
            return
        rows: list[tuple[Any, ...]] = []
        added: dict[str, int] = {}
        newest: dict[str, str] = {}
        for entry in entries:
            size = entry_size(entry)
            rows.append((*entry, size))
            added[entry.key_id] = added.get(entry.key_id, 0) + size
            newest[entry.key_id] = entry.id
        await tx.executemany(INSERT_DECISION, rows)
        await labels.index(tx, self.db.dialect, "decisions",
                           [entry.id for entry in entries if entry.metadata is not None])
        flat: list[Any] = []
        for key_id in sorted(added):  # every transaction locks totals in key order
            flat += [key_id, added[key_id]]
        for key_id, total in await tx.fetch(_add_sql(len(added)), *flat):
            if self.byte_cap is not None and total > self.byte_cap:
                await _trim(tx, key_id, total - int(self.byte_cap * KEEP), newest[key_id])

    async def page(self, key_id: str, limit: int, starting_after: str | None = None,
                   metadata: Mapping[str, str] | None = None) -> list[DecisionRecord]:
        """Up to ``limit`` of ``key_id``'s logged decisions, newest first, after
        ``starting_after`` (an entry id: the entry's position, or the position its id
        would have, :func:`~decido_service.store.dialect.after_cursor`), optionally only
        those with every member of ``metadata``; ``request`` and
        ``answer`` are ``None`` in a listing."""
        scope = Scope("decisions", key_id, metadata)

        async def body(tx: Tx) -> list[Row]:
            condition, value = f"{scope.seq} < ?", 2**63 - 1
            if starting_after is not None:
                condition, value = await after_cursor(tx, "decisions", key_id, starting_after,
                                                      (scope.seq, "t.id"))
            return await tx.fetch(
                "SELECT t.id, t.key_id, t.created_at, t.summary, NULL, NULL, t.metadata FROM "
                f"{scope.source} WHERE {' AND '.join(scope.where)} AND {condition}"
                f" ORDER BY {scope.seq} DESC LIMIT ?", *scope.source_args, *scope.where_args,
                value, int(limit))

        return [_record(row) for row in await self.db.read(body)]

    async def get(self, key_id: str, decision_id: str) -> DecisionRecord | None:
        """One of ``key_id``'s logged decisions, or ``None`` (another key's too)."""
        row = await self.db.read(lambda tx: tx.fetchrow(
            f"SELECT {_RECORD} FROM decisions WHERE id = ? AND key_id = ?", decision_id, key_id))
        return None if row is None else _record(row)

    async def stored_bytes(self, key_id: str) -> int:
        """The bytes of ``key_id``'s log (its running total, module docs)."""
        row = await self.db.read(lambda tx: tx.fetchrow(
            "SELECT total FROM decision_log_bytes WHERE key_id = ?", key_id))
        return 0 if row is None else int(row[0])

    async def prune(self, created_before: float) -> int:
        """Delete the entries created before ``created_before`` (epoch seconds); how
        many."""
        lock = self.db.dialect.for_update

        async def body(tx: Tx) -> int:
            if lock:  # the totals first, in key order (module docs)
                await tx.fetch("SELECT key_id FROM decision_log_bytes WHERE key_id IN"
                               " (SELECT key_id FROM decisions WHERE created_epoch < ?)"
                               " ORDER BY key_id" + lock, created_before)
            gone = await tx.fetch("DELETE FROM decisions WHERE created_epoch < ?"
                                  " RETURNING key_id, size", created_before)
            freed: dict[str, int] = {}
            for key_id, size in gone:
                freed[key_id] = freed.get(key_id, 0) + int(size)
            await tx.executemany(_SUBTRACT, [(freed[k], k) for k in sorted(freed)])
            return len(gone)

        return await self.db.write(body)


def _record(row: Row) -> DecisionRecord:
    """The entry of a row read as :data:`_RECORD` (a listing reads its bodies as NULL)."""
    request, answer = (None if v is None else orjson.loads(v) for v in row[4:6])
    return DecisionRecord(id=row[0], key_id=row[1], created_at=row[2],
                          summary=orjson.loads(row[3]), request=request, answer=answer,
                          metadata=metadata_of(row[6]))


async def _trim(tx: Tx, key_id: str, excess: int, keep: str) -> None:
    """Delete ``key_id``'s oldest entries, but never ``keep`` (the newest), until at least
    ``excess`` bytes are gone (or only ``keep`` is left), and take them off its total."""
    freed, last, after, page, done = 0, None, -1, 4, False
    while not done:  # pages of 4, 8, 16, ... rows: as many as the excess turns out to need
        rows = await tx.fetch("SELECT seq, id, size FROM decisions WHERE key_id = ?"
                              " AND seq > ? ORDER BY seq LIMIT ?", key_id, after, page)
        for seq, entry_id, size in rows:
            if entry_id == keep or freed >= excess:
                done = True
                break
            freed, last = freed + int(size), seq
        else:
            done = freed >= excess or len(rows) < page
        after, page = (rows[-1][0] if rows else after), min(2 * page, _TRIM_PAGE)
    if last is not None:
        await tx.execute("DELETE FROM decisions WHERE key_id = ? AND seq <= ?", key_id, last)
        await tx.execute(_SUBTRACT, freed, key_id)


@lru_cache(maxsize=64)
def _add_sql(n: int) -> str:
    """The UPSERT adding to ``n`` keys' totals, returning each one's total after it."""
    return ("INSERT INTO decision_log_bytes (key_id, total) VALUES "
            + ", ".join(["(?, ?)"] * n)
            + " ON CONFLICT (key_id) DO UPDATE SET total = decision_log_bytes.total"
            " + excluded.total RETURNING key_id, total")
