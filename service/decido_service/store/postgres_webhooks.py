"""Webhooks on PostgreSQL: the statements of :mod:`~decido_service.store.webhook_sql`
(numbered), each method one transaction or one read (:class:`PostgresWebhooks`, a part of
:class:`~decido_service.store.postgres.PostgresStore`). A claim locks the rows it takes
with ``FOR UPDATE OF d SKIP LOCKED``, so nodes claiming at once take different deliveries;
creating an endpoint holds the key's advisory lock while it counts, so the per-key cap is
exact across nodes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from asyncpg import Connection as Conn  # type: ignore[import-untyped]  # no type hints

from decido_service.store import webhook_sql as sql
from decido_service.store.postgres_pool import PostgresPool, rowcount
from decido_service.store.records import iso_utc, ordered_id

__all__ = ["PostgresWebhooks", "enqueue_run_event"]

_N = sql.numbered
_LAST = 2**62


async def enqueue_run_event(conn: Conn, run: Mapping[str, Any], now: float) -> None:
    """In the transaction that wrote the run's final state: its deliveries (see the SQLite
    backend's function of the same name)."""
    event = sql.RUN_EVENTS.get(str(run["state"]))
    if event is None or run["key_id"] is None:
        return
    hooks = sql.subscribed(await conn.fetch(_N(sql.ENABLED_WEBHOOKS), run["key_id"]), event)
    payload = orjson.dumps(dict(run)).decode()
    for hook in hooks:
        await conn.execute(_N(sql.INSERT_DELIVERY), ordered_id("msg_", now), hook,
                           run["key_id"], event, payload, run["finished_at"] or iso_utc(now),
                           "pending", "[]", now, 1, None, None)


class PostgresWebhooks(PostgresPool):
    """The webhook methods of :class:`~decido_service.store.postgres.PostgresStore` (see
    :class:`~decido_service.store.webhook_sql.WebhookStore` for what each does)."""

    async def create_webhook(self, webhook: Mapping[str, Any], cap: int | None) -> bool:
        """Insert an endpoint unless its key has ``cap`` (under the key's advisory lock)."""
        async def create(conn: Conn) -> bool:
            if cap is not None:
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))",
                                   "webhooks:" + webhook["key_id"])
                if await conn.fetchval(_N(sql.COUNT_WEBHOOKS), webhook["key_id"]) >= cap:
                    return False
            await conn.execute(_N(sql.INSERT_WEBHOOK),
                               *(webhook.get(f) for f in sql.WEBHOOK_FIELDS))
            return True

        return await self._write(create)

    async def list_webhooks(self, key_id: str) -> list[dict[str, Any]]:
        """The key's endpoints, oldest first."""
        async def rows(conn: Conn) -> list[Any]:
            return list(await conn.fetch(_N(sql.LIST_WEBHOOKS), key_id))

        return [sql.webhook_row(r) for r in await self._read(rows)]

    async def get_webhook(self, key_id: str, webhook_id: str) -> dict[str, Any] | None:
        """One of the key's endpoints."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(_N(sql.GET_WEBHOOK), key_id, webhook_id)

        row = await self._read(get)
        return None if row is None else sql.webhook_row(row)

    async def update_webhook(self, key_id: str, webhook_id: str,
                             changes: Mapping[str, Any]) -> dict[str, Any] | None:
        """Change an endpoint; its row after."""
        columns = sql.check_webhook_changes(changes)
        sets = ", ".join(f"{c} = ?" for c in columns)

        async def update(conn: Conn) -> Any:
            if columns:
                await conn.execute(_N(f"UPDATE webhooks SET {sets} WHERE key_id = ? AND id = ?"),
                                   *(changes[c] for c in columns), key_id, webhook_id)
            return await conn.fetchrow(_N(sql.GET_WEBHOOK), key_id, webhook_id)

        row = await self._write(update)
        return None if row is None else sql.webhook_row(row)

    async def delete_webhook(self, key_id: str, webhook_id: str) -> bool:
        """Delete an endpoint and its deliveries."""
        async def delete(conn: Conn) -> bool:
            if rowcount(await conn.execute(_N(sql.DELETE_WEBHOOK), key_id, webhook_id)) != 1:
                return False
            await conn.execute(_N(sql.DELETE_DELIVERIES), webhook_id)
            return True

        return await self._write(delete)

    async def add_delivery(self, delivery: Mapping[str, Any]) -> None:
        """Insert one delivery."""
        async def insert(conn: Conn) -> None:
            await conn.execute(_N(sql.INSERT_DELIVERY),
                               *(delivery.get(f) for f in sql.DELIVERY_FIELDS))

        await self._write(insert)

    async def get_delivery(self, key_id: str, webhook_id: str,
                           delivery_id: str) -> dict[str, Any] | None:
        """One delivery of one of the key's endpoints."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(_N(sql.GET_DELIVERY), key_id, webhook_id, delivery_id)

        row = await self._read(get)
        return None if row is None else sql.delivery_row(row)

    async def page_deliveries(self, key_id: str, webhook_id: str, limit: int,
                              starting_after: str | None = None) -> list[dict[str, Any]]:
        """A page of an endpoint's deliveries, newest first."""
        async def page(conn: Conn) -> list[Any]:
            seq = _LAST
            if starting_after is not None:
                seq = await conn.fetchval(_N(sql.DELIVERY_SEQ), key_id, webhook_id,
                                          starting_after)
                if seq is None:
                    raise ValueError(f"starting_after: no delivery {starting_after!r} of "
                                     "this webhook")
            return list(await conn.fetch(_N(sql.PAGE_DELIVERIES), key_id, webhook_id, seq,
                                         limit))

        return [sql.delivery_row(r) for r in await self._read(page)]

    async def resend_delivery(self, key_id: str, webhook_id: str, delivery_id: str,
                              now: float, retry_index: int) -> bool:
        """Make a delivery pending again, due now."""
        async def resend(conn: Conn) -> bool:
            return rowcount(await conn.execute(_N(sql.RESEND), now, retry_index, key_id,
                                               webhook_id, delivery_id)) == 1

        return await self._write(resend)

    async def claim_deliveries(self, owner: str, now: float, lease_until: float,
                               limit: int) -> list[dict[str, Any]]:
        """Take the deliveries due at ``now`` (``SKIP LOCKED``)."""
        async def claim(conn: Conn) -> list[dict[str, Any]]:
            rows = [sql.delivery_row(r) for r in await conn.fetch(
                _N(sql.CLAIM) + " FOR UPDATE OF d SKIP LOCKED", now, now, limit)]
            if rows:
                await conn.executemany(_N(sql.TAKE),
                                       [(owner, lease_until, r["id"]) for r in rows])
            return rows

        rows = await self._write(claim)
        for r in rows:
            r.update(owner=owner, lease_until=lease_until)
        return rows

    async def finish_delivery(self, delivery: Mapping[str, Any], owner: str,
                              outcome: str, now: float, failing_after: float) -> bool:
        """Record an attempt and its outcome on the endpoint."""
        async def finish(conn: Conn) -> bool:
            if rowcount(await conn.execute(
                    _N(sql.FINISH), delivery["attempts"], delivery["state"],
                    delivery["next_attempt"], delivery["retry_index"], delivery["id"],
                    owner)) != 1:
                return False
            hook = delivery["webhook_id"]
            if outcome == "ok":
                await conn.execute(_N(sql.SUCCEEDED), hook)
            elif outcome == "gone":
                await conn.execute(_N(sql.GONE), hook)
            else:
                await conn.execute(_N(sql.FAILING), now, hook)
                await conn.execute(_N(sql.DISABLE_FAILING), hook, now - failing_after)
            return True

        return await self._write(finish)

    async def prune_deliveries(self, created_before: str) -> int:
        """Delete old finished deliveries."""
        async def prune(conn: Conn) -> int:
            return rowcount(await conn.execute(_N(sql.PRUNE_DELIVERIES), created_before))

        return await self._write(prune)
