"""The webhooks concern: a key's endpoints (with the signing secret and, for 24 h after a
rotation, the previous one) and their deliveries (one row per event and endpoint: the
event's data, every attempt so far, when the next one is due, and the process that holds
the attempt in progress under a lease).

A run event's deliveries are written by :func:`enqueue_run_event` in the transaction that
writes the run's final state (:meth:`~decido_service.store.runs.Runs.update` calls it
with its :class:`~decido_service.store.dialect.Tx`), so a run never ends without them; a
study's ``study.completed`` by :func:`enqueue_event` in the transaction of the change that
finished the study (:meth:`~decido_service.store.studies.StudyTx.webhook`). A
claim takes due deliveries whose endpoint is enabled, fairly across keys and within the
caller's caps on the attempts in flight per key and per endpoint (one transaction-scoped
advisory lock serialises the claimers of every node on PostgreSQL, so the loads they count
are exact, and ``FOR UPDATE SKIP LOCKED`` passes over rows another transaction holds;
SQLite's write transaction holds the file); creating an endpoint counts the key's under
its key lock, so the tier's cap is exact across nodes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from decido_service.store.dialect import Database, Row, Tx, after_cursor, insert_sql, set_clause
from decido_service.store.records import iso_utc, ordered_id

__all__ = ["CANDIDATES", "DELIVERY_FIELDS", "RUN_EVENTS", "SCHEMA", "STUDY_COMPLETED",
           "WEBHOOK_FIELDS", "WEBHOOK_UPDATABLE", "Webhooks", "enqueue_event",
           "enqueue_run_event"]

#: the columns of a webhook row, in select order
WEBHOOK_FIELDS: tuple[str, ...] = (
    "id", "key_id", "url", "events", "description", "enabled", "disabled_reason", "secret",
    "old_secret", "old_secret_until", "failing_since", "created_at")
#: the columns :meth:`Webhooks.update` may set
WEBHOOK_UPDATABLE = frozenset({"url", "events", "description", "enabled", "disabled_reason",
                               "secret", "old_secret", "old_secret_until", "failing_since"})
#: the columns of a delivery row, in select order
DELIVERY_FIELDS: tuple[str, ...] = (
    "id", "webhook_id", "key_id", "event", "payload", "created_at", "state", "attempts",
    "next_attempt", "retry_index", "owner", "lease_until")
#: run state -> the event it sends
RUN_EVENTS = {"succeeded": "run.succeeded", "failed": "run.failed",
              "cancelled": "run.cancelled"}
#: the event of a study that is finished (it reached ``max_trials`` or was stopped, and
#: every trial finished)
STUDY_COMPLETED = "study.completed"
#: the concern's tables (a migration of :mod:`~decido_service.store.schema`)
SCHEMA: tuple[str, ...] = (
    """CREATE TABLE webhooks (
        seq {identity}, id TEXT NOT NULL UNIQUE, key_id TEXT NOT NULL, url TEXT NOT NULL,
        events TEXT NOT NULL, description TEXT, enabled INTEGER NOT NULL DEFAULT 1,
        disabled_reason TEXT, secret TEXT NOT NULL, old_secret TEXT,
        old_secret_until DOUBLE PRECISION, failing_since DOUBLE PRECISION,
        created_at TEXT NOT NULL)""",
    "CREATE INDEX webhooks_by_key ON webhooks (key_id, seq)",
    """CREATE TABLE webhook_deliveries (
        seq {identity}, id TEXT NOT NULL UNIQUE, webhook_id TEXT NOT NULL,
        key_id TEXT NOT NULL, event TEXT NOT NULL, payload TEXT NOT NULL,
        created_at TEXT NOT NULL, state TEXT NOT NULL, attempts TEXT NOT NULL,
        next_attempt DOUBLE PRECISION, retry_index INTEGER NOT NULL, owner TEXT,
        lease_until DOUBLE PRECISION)""",
    "CREATE INDEX deliveries_by_webhook ON webhook_deliveries (webhook_id, seq)",
    "CREATE INDEX deliveries_due ON webhook_deliveries (next_attempt) WHERE state = 'pending'",
)

_W = ", ".join(WEBHOOK_FIELDS)
_D = ", ".join(DELIVERY_FIELDS)
_INSERT_WEBHOOK = insert_sql("webhooks", WEBHOOK_FIELDS)
_GET_WEBHOOK = f"SELECT {_W} FROM webhooks WHERE key_id = ? AND id = ?"
_INSERT_DELIVERY = insert_sql("webhook_deliveries", DELIVERY_FIELDS)
_GET_DELIVERY = (f"SELECT {_D} FROM webhook_deliveries WHERE key_id = ? AND webhook_id = ? "
                 "AND id = ?")
_LAST = 2**62  # "no cursor": above every seq
#: the due deliveries of enabled endpoints that nobody holds (or whose holder's lease ran
#: out), taken fairly across keys. ``held``: the attempts in flight (claimed under a lease
#: that has not run out; a claimed delivery stays due, so the due rows hold them); keys and
#: endpoints at their cap are passed over, and of the others' due deliveries the
#: :data:`CANDIDATES` due first are ranked: ``hook_load`` (``key_load``) is a delivery's
#: place in its endpoint's (key's) line, after that endpoint's (key's) attempts in flight;
#: a delivery is taken while both loads are within the caps, the lowest key load first
#: (each key's oldest, then each key's second...), so one key's many deliveries never
#: queue another key's behind them. The work is one pass over the due rows (their index)
#: and a sort of at most :data:`CANDIDATES`. Parameters: now x3, the key cap, the
#: endpoint cap, :data:`CANDIDATES`, the endpoint cap, the key cap, the limit; the row
#: lock (the dialect's) is taken on the rows chosen
_DUE = (
    "WITH held AS (SELECT key_id, webhook_id FROM webhook_deliveries WHERE "
    "state = 'pending' AND next_attempt <= ? AND owner IS NOT NULL AND lease_until >= ?), "
    "key_busy AS (SELECT key_id, count(*) AS n FROM held GROUP BY key_id), "
    "hook_busy AS (SELECT webhook_id, count(*) AS n FROM held GROUP BY webhook_id), "
    "candidates AS (SELECT d.id, d.key_id, d.webhook_id, d.next_attempt, d.seq "
    "FROM webhook_deliveries d WHERE d.state = 'pending' AND d.next_attempt <= ? "
    "AND (d.owner IS NULL OR d.lease_until < ?) "
    "AND d.key_id NOT IN (SELECT key_id FROM key_busy WHERE n >= ?) "
    "AND d.webhook_id NOT IN (SELECT webhook_id FROM hook_busy WHERE n >= ?) "
    "AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.enabled = 1) "
    "ORDER BY d.next_attempt LIMIT ?), "
    "by_hook AS (SELECT c.id, c.key_id, c.next_attempt, c.seq, ROW_NUMBER() OVER "
    "(PARTITION BY c.webhook_id ORDER BY c.next_attempt, c.seq) + COALESCE(hb.n, 0) "
    "AS hook_load FROM candidates c LEFT JOIN hook_busy hb ON hb.webhook_id = c.webhook_id), "
    "by_key AS (SELECT h.id, h.next_attempt, h.seq, ROW_NUMBER() OVER (PARTITION BY "
    "h.key_id ORDER BY h.next_attempt, h.seq) + COALESCE(kb.n, 0) AS key_load FROM "
    "by_hook h LEFT JOIN key_busy kb ON kb.key_id = h.key_id WHERE h.hook_load <= ?) "
    f"SELECT {_D} FROM webhook_deliveries WHERE id IN (SELECT id FROM by_key WHERE "
    "key_load <= ? ORDER BY key_load, next_attempt, seq LIMIT ?)")
#: due deliveries ranked per claim at most (module docs): a key or endpoint whose due
#: deliveries outnumber it is at its cap after this claim, and passed over by the next
CANDIDATES = 256
#: no cap (the loads are row counts, far below it)
_UNCAPPED = 2**62

async def enqueue_run_event(tx: Tx, run: Mapping[str, Any], now: float) -> None:
    """In the transaction that wrote the run's final state: one delivery of its event per
    enabled endpoint of its key that subscribes to it (``run``: the row as
    :meth:`Runs.get <decido_service.store.runs.Runs.get>` reads it)."""
    event = RUN_EVENTS.get(str(run["state"]))
    if event is None or run["key_id"] is None:
        return
    await enqueue_event(tx, run["key_id"], event, json.dumps(dict(run)),
                        run["finished_at"] or iso_utc(now), now)


async def enqueue_event(tx: Tx, key_id: str, event: str, payload: str, created_at: str,
                        now: float) -> None:
    """In the caller's transaction: one delivery of ``event`` (its data ``payload``, JSON
    text; it happened at ``created_at``) per enabled endpoint of ``key_id`` that
    subscribes to it, due at once."""
    hooks = [r[0] for r in await tx.fetch(
        "SELECT id, events FROM webhooks WHERE key_id = ? AND enabled = 1", key_id)
        if {event, "*"} & set(json.loads(r[1]))]
    for hook in hooks:
        await tx.execute(_INSERT_DELIVERY, ordered_id("msg_", now), hook, key_id, event,
                         payload, created_at, "pending", "[]", now, 1, None, None)


class Webhooks:
    """What the webhooks need from the store."""

    def __init__(self, database: Database) -> None:
        self.db = database

    async def create(self, webhook: Mapping[str, Any], cap: int | None) -> bool:
        """Insert ``webhook`` (:data:`WEBHOOK_FIELDS`) unless its key already has ``cap``
        endpoints (checked and written atomically for the key); False when refused."""
        values = [webhook.get(f) for f in WEBHOOK_FIELDS]
        key_id, dialect = webhook["key_id"], self.db.dialect

        async def body(tx: Tx) -> bool:
            if await dialect.at_cap(tx, cap, "webhooks:" + key_id, "webhooks", "key_id = ?",
                                    key_id):
                return False
            await tx.execute(_INSERT_WEBHOOK, *values)
            return True

        return await self.db.write(body)

    async def of_key(self, key_id: str) -> list[dict[str, Any]]:
        """The key's endpoints, oldest first."""
        rows = await self.db.read(lambda tx: tx.fetch(
            f"SELECT {_W} FROM webhooks WHERE key_id = ? ORDER BY seq", key_id))
        return [_webhook(r) for r in rows]

    async def get(self, key_id: str, webhook_id: str) -> dict[str, Any] | None:
        """One of the key's endpoints, or ``None`` (another key's too)."""
        row = await self.db.read(lambda tx: tx.fetchrow(_GET_WEBHOOK, key_id, webhook_id))
        return None if row is None else _webhook(row)

    async def update(self, key_id: str, webhook_id: str,
                     changes: Mapping[str, Any]) -> dict[str, Any] | None:
        """Set :data:`WEBHOOK_UPDATABLE` columns; the row after, or ``None``."""
        columns, args = set_clause(changes, WEBHOOK_UPDATABLE)

        async def body(tx: Tx) -> Row | None:
            if args:
                await tx.execute(f"UPDATE webhooks SET {columns} WHERE key_id = ? AND id = ?",
                                 *args, key_id, webhook_id)
            return await tx.fetchrow(_GET_WEBHOOK, key_id, webhook_id)

        row = await self.db.write(body)
        return None if row is None else _webhook(row)

    async def delete(self, key_id: str, webhook_id: str) -> bool:
        """Delete an endpoint and its deliveries; False when the key has no such one."""
        async def body(tx: Tx) -> bool:
            if await tx.execute("DELETE FROM webhooks WHERE key_id = ? AND id = ?",
                                key_id, webhook_id) != 1:
                return False
            await tx.execute("DELETE FROM webhook_deliveries WHERE webhook_id = ?", webhook_id)
            return True

        return await self.db.write(body)

    async def add_delivery(self, delivery: Mapping[str, Any]) -> None:
        """Insert one delivery (:data:`DELIVERY_FIELDS`; ``owner``/``lease_until`` NULL)."""
        values = [delivery.get(f) for f in DELIVERY_FIELDS]
        await self.db.write(lambda tx: tx.execute(_INSERT_DELIVERY, *values))

    async def get_delivery(self, key_id: str, webhook_id: str,
                           delivery_id: str) -> dict[str, Any] | None:
        """One delivery of one of the key's endpoints, or ``None``."""
        row = await self.db.read(lambda tx: tx.fetchrow(_GET_DELIVERY, key_id, webhook_id,
                                                        delivery_id))
        return None if row is None else _delivery(row)

    async def page_deliveries(self, key_id: str, webhook_id: str, limit: int,
                              starting_after: str | None = None) -> list[dict[str, Any]]:
        """Up to ``limit`` of the endpoint's deliveries, newest first, after
        ``starting_after`` (a delivery id: its position, or the position its id would have,
        :func:`~decido_service.store.dialect.after_cursor`)."""
        async def body(tx: Tx) -> list[Row]:
            condition, value = "seq < ?", _LAST
            if starting_after is not None:
                condition, value = await after_cursor(tx, "webhook_deliveries", key_id,
                                                      starting_after)
            return await tx.fetch(
                f"SELECT {_D} FROM webhook_deliveries WHERE key_id = ? AND webhook_id = ? "
                f"AND {condition} ORDER BY seq DESC LIMIT ?", key_id, webhook_id, value, limit)

        return [_delivery(r) for r in await self.db.read(body)]

    async def resend(self, key_id: str, webhook_id: str, delivery_id: str, now: float,
                     retry_index: int) -> bool:
        """Make a delivery pending, due at ``now``, unless an attempt of it is in
        progress; False when refused (or no such delivery)."""
        return await self.db.write(lambda tx: tx.execute(
            "UPDATE webhook_deliveries SET state = 'pending', next_attempt = ?, "
            "retry_index = ? WHERE key_id = ? AND webhook_id = ? AND id = ? AND "
            "owner IS NULL", now, retry_index, key_id, webhook_id, delivery_id)) == 1

    async def claim(self, owner: str, now: float, lease_until: float, limit: int, *,
                    per_key: int | None = None,
                    per_endpoint: int | None = None) -> list[dict[str, Any]]:
        """Take up to ``limit`` deliveries due at ``now``: each is ``owner``'s until
        ``lease_until`` and no concurrent caller (any process, any node) takes it. Each
        row has the delivery's columns and its endpoint's url and secrets. Taken fairly
        across keys (each key's oldest due first, then each key's next), and never so
        many that a key would have more than ``per_key`` attempts in flight (claimed under
        a lease not yet run out, by any caller), or an endpoint more than
        ``per_endpoint`` (``None``: no such cap)."""
        dialect = self.db.dialect
        hook_cap, key_cap = (_UNCAPPED if c is None else c for c in (per_endpoint, per_key))

        async def body(tx: Tx) -> list[dict[str, Any]]:
            if dialect.key_lock is not None:  # claimers of every node count the same loads
                await tx.execute(dialect.key_lock, "webhooks:claim")
            rows = [_delivery(r) for r in await tx.fetch(
                _DUE + dialect.skip_locked, now, now, now, now, key_cap, hook_cap, CANDIDATES,
                hook_cap, key_cap, limit)]
            if not rows:
                return []
            await tx.executemany(
                "UPDATE webhook_deliveries SET owner = ?, lease_until = ? WHERE id = ?",
                [(owner, lease_until, r["id"]) for r in rows])
            hooks = {r["webhook_id"] for r in rows}
            found = await tx.fetch(
                "SELECT id, url, secret, old_secret, old_secret_until FROM webhooks WHERE "
                f"id IN ({', '.join('?' * len(hooks))})", *hooks)
            endpoint = {r[0]: dict(zip(("url", "secret", "old_secret", "old_secret_until"),
                                       r[1:], strict=True)) for r in found}
            return [{**r, **endpoint[r["webhook_id"]], "owner": owner,
                     "lease_until": lease_until} for r in rows]

        return await self.db.write(body)

    async def finish(self, delivery: Mapping[str, Any], owner: str, outcome: str,
                     now: float, failing_after: float) -> bool:
        """Record an attempt (``delivery``: ``id``, ``webhook_id``, ``attempts``,
        ``state``, ``next_attempt``, ``retry_index``) if ``owner`` still holds it, and its
        outcome on the endpoint: ``ok`` ends its failing streak, ``gone`` disables it,
        ``failed`` starts (or continues) a streak and disables it once the streak began at
        or before ``now - failing_after``. False when the attempt was no longer
        ``owner``'s."""
        hook = delivery["webhook_id"]

        async def body(tx: Tx) -> bool:
            if await tx.execute(
                    "UPDATE webhook_deliveries SET attempts = ?, state = ?, next_attempt = ?, "
                    "retry_index = ?, owner = NULL, lease_until = NULL WHERE id = ? AND "
                    "owner = ?", delivery["attempts"], delivery["state"],
                    delivery["next_attempt"], delivery["retry_index"], delivery["id"],
                    owner) != 1:
                return False
            if outcome == "ok":
                await tx.execute("UPDATE webhooks SET failing_since = NULL WHERE id = ?", hook)
            elif outcome == "gone":
                await tx.execute("UPDATE webhooks SET enabled = 0, disabled_reason = 'gone' "
                                 "WHERE id = ?", hook)
            else:
                await tx.execute("UPDATE webhooks SET failing_since = "
                                 "COALESCE(failing_since, ?) WHERE id = ?", now, hook)
                await tx.execute("UPDATE webhooks SET enabled = 0, disabled_reason = "
                                 "'failing' WHERE id = ? AND failing_since <= ?", hook,
                                 now - failing_after)
            return True

        return await self.db.write(body)

    async def prune(self, created_before: str) -> int:
        """Delete finished deliveries created before ``created_before`` (ISO 8601)."""
        return await self.db.write(lambda tx: tx.execute(
            "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ?",
            created_before))


def _webhook(row: Sequence[Any]) -> dict[str, Any]:
    return dict(zip(WEBHOOK_FIELDS, row, strict=True))


def _delivery(row: Sequence[Any]) -> dict[str, Any]:
    return dict(zip(DELIVERY_FIELDS, row, strict=True))
