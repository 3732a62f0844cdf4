"""Webhooks on SQLite: the statements of :mod:`~decido_service.store.webhook_sql` in
``BEGIN IMMEDIATE`` transactions (the file's one write lock makes a claim atomic across
every process on it), and :class:`SQLiteWebhooks`, the async methods of
:class:`~decido_service.store.sqlite.SQLiteStore` around them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

import orjson

from decido_service.store import webhook_sql as sql
from decido_service.store.records import iso_utc, ordered_id
from decido_service.store.sqlite_connection import SQLiteConnections

__all__ = ["SQLiteWebhooks", "enqueue_run_event"]

T = TypeVar("T")
_LAST = 2**62  # "no cursor": above every seq


def enqueue_run_event(conn: sqlite3.Connection, run: Mapping[str, Any], now: float) -> None:
    """In the transaction that wrote the run's final state: one delivery of its event per
    enabled endpoint of its key that subscribes to it (``run``: the row as
    ``get_run`` reads it)."""
    event = sql.RUN_EVENTS.get(str(run["state"]))
    if event is None or run["key_id"] is None:
        return
    hooks = sql.subscribed(conn.execute(sql.ENABLED_WEBHOOKS, (run["key_id"],)).fetchall(),
                           event)
    payload = orjson.dumps(dict(run)).decode()
    for hook in hooks:
        conn.execute(sql.INSERT_DELIVERY, (
            ordered_id("msg_", now), hook, run["key_id"], event, payload,
            run["finished_at"] or iso_utc(now), "pending", "[]", now, 1, None, None))


def _create(db: SQLiteConnections, webhook: Mapping[str, Any], cap: int | None) -> bool:
    with db._transaction() as conn:
        if cap is not None and conn.execute(sql.COUNT_WEBHOOKS, (webhook["key_id"],)
                                            ).fetchone()[0] >= cap:
            return False
        conn.execute(sql.INSERT_WEBHOOK, [webhook.get(f) for f in sql.WEBHOOK_FIELDS])
    return True


def _list(db: SQLiteConnections, key_id: str) -> list[dict[str, Any]]:
    with db._errors():
        return [sql.webhook_row(r) for r in db._conn().execute(sql.LIST_WEBHOOKS, (key_id,))]


def _get(db: SQLiteConnections, key_id: str, webhook_id: str) -> dict[str, Any] | None:
    with db._errors():
        row = db._conn().execute(sql.GET_WEBHOOK, (key_id, webhook_id)).fetchone()
    return None if row is None else sql.webhook_row(row)


def _update(db: SQLiteConnections, key_id: str, webhook_id: str,
            changes: Mapping[str, Any]) -> dict[str, Any] | None:
    columns = sql.check_webhook_changes(changes)
    with db._transaction() as conn:
        if columns:
            conn.execute(f"UPDATE webhooks SET {', '.join(c + ' = ?' for c in columns)} "
                         "WHERE key_id = ? AND id = ?",
                         [*(changes[c] for c in columns), key_id, webhook_id])
        row = conn.execute(sql.GET_WEBHOOK, (key_id, webhook_id)).fetchone()
    return None if row is None else sql.webhook_row(row)


def _delete(db: SQLiteConnections, key_id: str, webhook_id: str) -> bool:
    with db._transaction() as conn:
        if conn.execute(sql.DELETE_WEBHOOK, (key_id, webhook_id)).rowcount != 1:
            return False
        conn.execute(sql.DELETE_DELIVERIES, (webhook_id,))
    return True


def _add_delivery(db: SQLiteConnections, delivery: Mapping[str, Any]) -> None:
    with db._transaction() as conn:
        conn.execute(sql.INSERT_DELIVERY, [delivery.get(f) for f in sql.DELIVERY_FIELDS])


def _get_delivery(db: SQLiteConnections, key_id: str, webhook_id: str,
                  delivery_id: str) -> dict[str, Any] | None:
    with db._errors():
        row = db._conn().execute(sql.GET_DELIVERY, (key_id, webhook_id, delivery_id)
                                 ).fetchone()
    return None if row is None else sql.delivery_row(row)


def _page(db: SQLiteConnections, key_id: str, webhook_id: str, limit: int,
          starting_after: str | None) -> list[dict[str, Any]]:
    conn = db._conn()
    with db._errors():
        seq = _LAST
        if starting_after is not None:
            found = conn.execute(sql.DELIVERY_SEQ, (key_id, webhook_id, starting_after)
                                 ).fetchone()
            if found is None:
                raise ValueError(f"starting_after: no delivery {starting_after!r} of this "
                                 "webhook")
            seq = found[0]
        rows = conn.execute(sql.PAGE_DELIVERIES, (key_id, webhook_id, seq, limit)).fetchall()
    return [sql.delivery_row(r) for r in rows]


def _resend(db: SQLiteConnections, key_id: str, webhook_id: str, delivery_id: str,
            now: float, retry_index: int) -> bool:
    with db._transaction() as conn:
        return conn.execute(sql.RESEND, (now, retry_index, key_id, webhook_id, delivery_id)
                            ).rowcount == 1


def _claim(db: SQLiteConnections, owner: str, now: float, lease_until: float,
           limit: int) -> list[dict[str, Any]]:
    with db._transaction() as conn:
        rows = [sql.delivery_row(r) for r in conn.execute(sql.CLAIM, (now, now, limit))]
        conn.executemany(sql.TAKE, [(owner, lease_until, r["id"]) for r in rows])
    for r in rows:
        r.update(owner=owner, lease_until=lease_until)
    return rows


def _finish(db: SQLiteConnections, delivery: Mapping[str, Any], owner: str, outcome: str,
            now: float, failing_after: float) -> bool:
    with db._transaction() as conn:
        if conn.execute(sql.FINISH, (delivery["attempts"], delivery["state"],
                                     delivery["next_attempt"], delivery["retry_index"],
                                     delivery["id"], owner)).rowcount != 1:
            return False
        hook = delivery["webhook_id"]
        if outcome == "ok":
            conn.execute(sql.SUCCEEDED, (hook,))
        elif outcome == "gone":
            conn.execute(sql.GONE, (hook,))
        else:
            conn.execute(sql.FAILING, (now, hook))
            conn.execute(sql.DISABLE_FAILING, (hook, now - failing_after))
    return True


def _prune(db: SQLiteConnections, created_before: str) -> int:
    with db._transaction() as conn:
        return int(conn.execute(sql.PRUNE_DELIVERIES, (created_before,)).rowcount)


class _Pools(Protocol):
    """What the methods below use of :class:`~decido_service.store.sqlite.SQLiteStore`:
    its database and its writer and reader threads."""

    @property
    def database(self) -> SQLiteConnections: ...

    async def _write(self, fn: Callable[..., T], *args: Any) -> T: ...

    async def _read(self, fn: Callable[..., T], *args: Any) -> T: ...


class SQLiteWebhooks:
    """The webhook methods of :class:`~decido_service.store.sqlite.SQLiteStore` (see
    :class:`~decido_service.store.webhook_sql.WebhookStore` for what each does)."""

    async def create_webhook(self: _Pools, webhook: Mapping[str, Any], cap: int | None) -> bool:
        """Insert an endpoint unless its key has ``cap``."""
        return await self._write(_create, self.database, webhook, cap)

    async def list_webhooks(self: _Pools, key_id: str) -> list[dict[str, Any]]:
        """The key's endpoints, oldest first."""
        return await self._read(_list, self.database, key_id)

    async def get_webhook(self: _Pools, key_id: str, webhook_id: str) -> dict[str, Any] | None:
        """One of the key's endpoints."""
        return await self._read(_get, self.database, key_id, webhook_id)

    async def update_webhook(self: _Pools, key_id: str, webhook_id: str,
                             changes: Mapping[str, Any]) -> dict[str, Any] | None:
        """Change an endpoint; its row after."""
        return await self._write(_update, self.database, key_id, webhook_id, changes)

    async def delete_webhook(self: _Pools, key_id: str, webhook_id: str) -> bool:
        """Delete an endpoint and its deliveries."""
        return await self._write(_delete, self.database, key_id, webhook_id)

    async def add_delivery(self: _Pools, delivery: Mapping[str, Any]) -> None:
        """Insert one delivery."""
        await self._write(_add_delivery, self.database, delivery)

    async def get_delivery(self: _Pools, key_id: str, webhook_id: str,
                           delivery_id: str) -> dict[str, Any] | None:
        """One delivery of one of the key's endpoints."""
        return await self._read(_get_delivery, self.database, key_id, webhook_id, delivery_id)

    async def page_deliveries(self: _Pools, key_id: str, webhook_id: str, limit: int,
                              starting_after: str | None = None) -> list[dict[str, Any]]:
        """A page of an endpoint's deliveries, newest first."""
        return await self._read(_page, self.database, key_id, webhook_id, limit,
                                starting_after)

    async def resend_delivery(self: _Pools, key_id: str, webhook_id: str, delivery_id: str,
                              now: float, retry_index: int) -> bool:
        """Make a delivery pending again, due now."""
        return await self._write(_resend, self.database, key_id, webhook_id, delivery_id,
                                 now, retry_index)

    async def claim_deliveries(self: _Pools, owner: str, now: float, lease_until: float,
                               limit: int) -> list[dict[str, Any]]:
        """Take the deliveries due at ``now``."""
        return await self._write(_claim, self.database, owner, now, lease_until, limit)

    async def finish_delivery(self: _Pools, delivery: Mapping[str, Any], owner: str,
                              outcome: str, now: float, failing_after: float) -> bool:
        """Record an attempt and its outcome on the endpoint."""
        return await self._write(_finish, self.database, delivery, owner, outcome, now,
                                 failing_after)

    async def prune_deliveries(self: _Pools, created_before: str) -> int:
        """Delete old finished deliveries."""
        return await self._write(_prune, self.database, created_before)
