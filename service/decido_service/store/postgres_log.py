"""The decision log on PostgreSQL: the insert an admission batch writes its entries with,
and the reads of a key's entries (see :class:`~decido_service.store.Store`)."""

from __future__ import annotations

from typing import Any

import orjson
from asyncpg import Connection as Conn  # type: ignore[import-untyped]  # no type hints

from decido_service.store.postgres_pool import PostgresPool
from decido_service.store.records import DecisionRecord

__all__ = ["INSERT_DECISION", "PostgresLog"]

#: the insert of one decision-log row (the columns of a
#: :class:`~decido_service.store.DecisionEntry`, in its order)
INSERT_DECISION = (
    "INSERT INTO decisions (id, key_id, created_at, created_epoch, summary, request, answer)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7)"
)


class PostgresLog(PostgresPool):
    """The decision-log reads of :class:`~decido_service.store.postgres.PostgresStore`."""

    async def list_decisions(self, key_id: str, limit: int,
                             starting_after: str | None = None) -> list[DecisionRecord]:
        """A page of ``key_id``'s log, newest first (see the protocol)."""
        async def page(conn: Conn) -> list[Any]:
            before = 2**63 - 1
            if starting_after is not None:
                found = await conn.fetchrow("SELECT seq FROM decisions WHERE id = $1 AND "
                                            "key_id = $2", starting_after, key_id)
                if found is None:
                    raise ValueError(f"starting_after: no decision {starting_after!r} "
                                     "of this key")
                before = int(found[0])
            return list(await conn.fetch(
                "SELECT id, key_id, created_at, summary FROM decisions WHERE key_id = $1"
                " AND seq < $2 ORDER BY seq DESC LIMIT $3", key_id, before, int(limit)))

        return [DecisionRecord(id=r[0], key_id=r[1], created_at=r[2],
                               summary=orjson.loads(r[3]), request=None, answer=None)
                for r in await self._read(page)]

    async def get_decision(self, key_id: str, decision_id: str) -> DecisionRecord | None:
        """One of ``key_id``'s logged decisions, or ``None``."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(
                "SELECT id, key_id, created_at, summary, request, answer FROM decisions"
                " WHERE id = $1 AND key_id = $2", decision_id, key_id)

        r = await self._read(get)
        if r is None:
            return None
        return DecisionRecord(id=r[0], key_id=r[1], created_at=r[2], summary=orjson.loads(r[3]),
                              request=orjson.loads(r[4]),
                              answer=None if r[5] is None else orjson.loads(r[5]))
