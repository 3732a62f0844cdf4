"""The decision-log concern: entries are written by the admission that counts their request
(:data:`INSERT_DECISION`, in the admission's transaction), read a key at a time, newest
first, and deleted after their retention by a scheduled job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import orjson

from decido_service.store.dialect import Database, Row, Tx
from decido_service.store.records import DecisionRecord, metadata_of

__all__ = ["INSERT_DECISION", "DecisionLog", "SQLDecisionLog"]

#: the insert of one decision-log row (the columns of a
#: :class:`~decido_service.store.DecisionEntry`, in its order)
INSERT_DECISION = (
    "INSERT INTO decisions (id, key_id, created_at, created_epoch, summary, request, answer,"
    " metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


class DecisionLog(Protocol):
    """A key's logged decisions."""

    async def page(self, key_id: str, limit: int, starting_after: str | None = None,
                   metadata: Mapping[str, str] | None = None) -> list[DecisionRecord]:
        """Up to ``limit`` of ``key_id``'s logged decisions, newest first, after the one
        with id ``starting_after`` (``ValueError`` when that is not one of the key's),
        optionally only those with every member of ``metadata``; ``request`` and
        ``answer`` are ``None`` in a listing."""

    async def get(self, key_id: str, decision_id: str) -> DecisionRecord | None:
        """One of ``key_id``'s logged decisions, or ``None`` (another key's too)."""

    async def prune(self, created_before: float) -> int:
        """Delete the entries created before ``created_before`` (epoch seconds); how
        many."""


class SQLDecisionLog:
    """:class:`DecisionLog` on a database."""

    def __init__(self, database: Database) -> None:
        self.db = database

    async def page(self, key_id: str, limit: int, starting_after: str | None = None,
                   metadata: Mapping[str, str] | None = None) -> list[DecisionRecord]:
        """A page of ``key_id``'s log, newest first."""
        labels, label_args = self.db.dialect.member_filters("metadata", metadata)
        where = "".join(f" AND {clause}" for clause in labels)

        async def body(tx: Tx) -> list[Row]:
            before = 2**63 - 1
            if starting_after is not None:
                found = await tx.fetchrow("SELECT seq FROM decisions WHERE id = ? AND "
                                          "key_id = ?", starting_after, key_id)
                if found is None:
                    raise ValueError(f"starting_after: no decision {starting_after!r} "
                                     "of this key")
                before = int(found[0])
            return await tx.fetch(
                "SELECT id, key_id, created_at, summary, metadata FROM decisions WHERE "
                f"key_id = ? AND seq < ?{where} ORDER BY seq DESC LIMIT ?", key_id, before,
                *label_args, int(limit))

        return [DecisionRecord(id=r[0], key_id=r[1], created_at=r[2],
                               summary=orjson.loads(r[3]), request=None, answer=None,
                               metadata=metadata_of(r[4]))
                for r in await self.db.read(body)]

    async def get(self, key_id: str, decision_id: str) -> DecisionRecord | None:
        """One of ``key_id``'s logged decisions, or ``None``."""
        r = await self.db.read(lambda tx: tx.fetchrow(
            "SELECT id, key_id, created_at, summary, request, answer, metadata FROM decisions"
            " WHERE id = ? AND key_id = ?", decision_id, key_id))
        if r is None:
            return None
        return DecisionRecord(id=r[0], key_id=r[1], created_at=r[2], summary=orjson.loads(r[3]),
                              request=orjson.loads(r[4]),
                              answer=None if r[5] is None else orjson.loads(r[5]),
                              metadata=metadata_of(r[6]))

    async def prune(self, created_before: float) -> int:
        """Delete the entries older than ``created_before``; how many."""
        return await self.db.write(lambda tx: tx.execute(
            "DELETE FROM decisions WHERE created_epoch < ?", created_before))
