"""The webhooks concern of the store: its tables, its statements (written once, with
``?`` placeholders; :func:`numbered` gives PostgreSQL's ``$n``), its rows and its protocol
(:class:`WebhookStore`, part of :class:`~decido_service.store.Store`).

Two tables: ``webhooks`` (a key's endpoints, with the signing secret and, for 24 h after a
rotation, the previous one) and ``webhook_deliveries`` (one row per event and endpoint:
the event's data, every attempt so far, when the next one is due, and the process that
owns the attempt in progress under a lease). A delivery of a run event is written in the
transaction that writes the run's final state (``update_run`` of either backend calls
the backend's ``enqueue_run_event``), so a run never ends without its deliveries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

__all__ = ["CLAIM", "DELIVERY_FIELDS", "DISABLE_FAILING", "FINISH", "RUN_EVENTS",
           "WEBHOOK_FIELDS", "WEBHOOK_UPDATABLE", "WebhookStore", "ddl", "numbered",
           "subscribed"]

#: the columns of a webhook row, in select order
WEBHOOK_FIELDS: tuple[str, ...] = (
    "id", "key_id", "url", "events", "description", "enabled", "disabled_reason", "secret",
    "old_secret", "old_secret_until", "failing_since", "created_at")
#: the columns ``update_webhook`` may set
WEBHOOK_UPDATABLE = frozenset({"url", "events", "description", "enabled", "disabled_reason",
                               "secret", "old_secret", "old_secret_until", "failing_since"})
#: the columns of a delivery row, in select order
DELIVERY_FIELDS: tuple[str, ...] = (
    "id", "webhook_id", "key_id", "event", "payload", "created_at", "state", "attempts",
    "next_attempt", "retry_index", "owner", "lease_until")
#: run state -> the event it sends
RUN_EVENTS = {"succeeded": "run.succeeded", "failed": "run.failed",
              "cancelled": "run.cancelled"}


def ddl(identity: str) -> tuple[str, ...]:
    """The migration's statements; ``identity``: the backend's auto-numbered key column
    type (SQLite ``INTEGER PRIMARY KEY AUTOINCREMENT``, PostgreSQL ``BIGINT GENERATED
    ALWAYS AS IDENTITY PRIMARY KEY``)."""
    return (
        f"""CREATE TABLE webhooks (
            seq              {identity},
            id               TEXT NOT NULL UNIQUE,
            key_id           TEXT NOT NULL,
            url              TEXT NOT NULL,
            events           TEXT NOT NULL,
            description      TEXT,
            enabled          INTEGER NOT NULL DEFAULT 1,
            disabled_reason  TEXT,
            secret           TEXT NOT NULL,
            old_secret       TEXT,
            old_secret_until DOUBLE PRECISION,
            failing_since    DOUBLE PRECISION,
            created_at       TEXT NOT NULL
        )""",
        "CREATE INDEX webhooks_by_key ON webhooks (key_id, seq)",
        f"""CREATE TABLE webhook_deliveries (
            seq          {identity},
            id           TEXT NOT NULL UNIQUE,
            webhook_id   TEXT NOT NULL,
            key_id       TEXT NOT NULL,
            event        TEXT NOT NULL,
            payload      TEXT NOT NULL,
            created_at   TEXT NOT NULL,
            state        TEXT NOT NULL,
            attempts     TEXT NOT NULL,
            next_attempt DOUBLE PRECISION,
            retry_index  INTEGER NOT NULL,
            owner        TEXT,
            lease_until  DOUBLE PRECISION
        )""",
        "CREATE INDEX deliveries_by_webhook ON webhook_deliveries (webhook_id, seq)",
        "CREATE INDEX deliveries_due ON webhook_deliveries (next_attempt) "
        "WHERE state = 'pending'",
    )


def numbered(sql: str) -> str:
    """``sql`` with its ``?`` placeholders written ``$1``, ``$2``... (PostgreSQL)."""
    count = iter(range(1, sql.count("?") + 1))
    return re.sub(r"\?", lambda _: f"${next(count)}", sql)


_W = ", ".join(WEBHOOK_FIELDS)
_D = ", ".join(DELIVERY_FIELDS)
INSERT_WEBHOOK = f"INSERT INTO webhooks ({_W}) VALUES ({', '.join('?' * len(WEBHOOK_FIELDS))})"
COUNT_WEBHOOKS = "SELECT count(*) FROM webhooks WHERE key_id = ?"
LIST_WEBHOOKS = f"SELECT {_W} FROM webhooks WHERE key_id = ? ORDER BY seq"
GET_WEBHOOK = f"SELECT {_W} FROM webhooks WHERE key_id = ? AND id = ?"
DELETE_WEBHOOK = "DELETE FROM webhooks WHERE key_id = ? AND id = ?"
DELETE_DELIVERIES = "DELETE FROM webhook_deliveries WHERE webhook_id = ?"
ENABLED_WEBHOOKS = "SELECT id, events FROM webhooks WHERE key_id = ? AND enabled = 1"
INSERT_DELIVERY = (f"INSERT INTO webhook_deliveries ({_D}) VALUES "
                   f"({', '.join('?' * len(DELIVERY_FIELDS))})")
GET_DELIVERY = f"SELECT {_D} FROM webhook_deliveries WHERE key_id = ? AND webhook_id = ? AND id = ?"
DELIVERY_SEQ = "SELECT seq FROM webhook_deliveries WHERE key_id = ? AND webhook_id = ? AND id = ?"
PAGE_DELIVERIES = (f"SELECT {_D} FROM webhook_deliveries WHERE key_id = ? AND webhook_id = ? "
                   "AND seq < ? ORDER BY seq DESC LIMIT ?")
RESEND = ("UPDATE webhook_deliveries SET state = 'pending', next_attempt = ?, retry_index = ? "
          "WHERE key_id = ? AND webhook_id = ? AND id = ? AND owner IS NULL")
#: the deliveries due at ``now`` whose endpoint is enabled and whose attempt nobody holds
#: (or whose holder's lease ran out); the caller appends its row lock
CLAIM = (f"SELECT {', '.join('d.' + f for f in DELIVERY_FIELDS)}, w.url, w.secret, "
         "w.old_secret, w.old_secret_until FROM webhook_deliveries d JOIN webhooks w ON "
         "w.id = d.webhook_id WHERE d.state = 'pending' AND d.next_attempt <= ? AND "
         "(d.owner IS NULL OR d.lease_until < ?) AND w.enabled = 1 ORDER BY d.next_attempt "
         "LIMIT ?")
TAKE = "UPDATE webhook_deliveries SET owner = ?, lease_until = ? WHERE id = ?"
FINISH = ("UPDATE webhook_deliveries SET attempts = ?, state = ?, next_attempt = ?, "
          "retry_index = ?, owner = NULL, lease_until = NULL WHERE id = ? AND owner = ?")
SUCCEEDED = "UPDATE webhooks SET failing_since = NULL WHERE id = ?"
GONE = "UPDATE webhooks SET enabled = 0, disabled_reason = 'gone' WHERE id = ?"
FAILING = "UPDATE webhooks SET failing_since = COALESCE(failing_since, ?) WHERE id = ?"
#: disable an endpoint whose attempts have all failed since before the given time
DISABLE_FAILING = ("UPDATE webhooks SET enabled = 0, disabled_reason = 'failing' "
                   "WHERE id = ? AND failing_since <= ?")
PRUNE_DELIVERIES = "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ?"


def subscribed(rows: Sequence[Sequence[Any]], event: str) -> list[str]:
    """The ids among ``(id, events JSON)`` rows whose events include ``event`` (or ``*``)."""
    return [str(r[0]) for r in rows if {event, "*"} & set(json.loads(r[1]))]


def webhook_row(row: Sequence[Any]) -> dict[str, Any]:
    """A webhook row as a dict of :data:`WEBHOOK_FIELDS`."""
    return dict(zip(WEBHOOK_FIELDS, row, strict=True))


def delivery_row(row: Sequence[Any]) -> dict[str, Any]:
    """A delivery row (and, from a claim, its endpoint's url and secrets) as a dict."""
    return dict(zip((*DELIVERY_FIELDS, "url", "secret", "old_secret", "old_secret_until"),
                    row, strict=False))


def check_webhook_changes(changes: Mapping[str, Any]) -> list[str]:
    """The columns of ``changes``; ``ValueError`` for one ``update_webhook`` may not set."""
    bad = sorted(set(changes) - WEBHOOK_UPDATABLE)
    if bad:
        raise ValueError(f"not updatable webhook columns: {', '.join(bad)}")
    return list(changes)


class WebhookStore(Protocol):
    """What the webhooks need from the store (every method a coroutine)."""

    async def create_webhook(self, webhook: Mapping[str, Any], cap: int | None) -> bool:
        """Insert ``webhook`` (:data:`WEBHOOK_FIELDS`) unless its key already has ``cap``
        endpoints (checked and written atomically for the key); False when refused."""

    async def list_webhooks(self, key_id: str) -> list[dict[str, Any]]:
        """The key's endpoints, oldest first."""

    async def get_webhook(self, key_id: str, webhook_id: str) -> dict[str, Any] | None:
        """One of the key's endpoints, or ``None`` (another key's too)."""

    async def update_webhook(self, key_id: str, webhook_id: str,
                             changes: Mapping[str, Any]) -> dict[str, Any] | None:
        """Set :data:`WEBHOOK_UPDATABLE` columns; the row after, or ``None``."""

    async def delete_webhook(self, key_id: str, webhook_id: str) -> bool:
        """Delete an endpoint and its deliveries; False when the key has no such one."""

    async def add_delivery(self, delivery: Mapping[str, Any]) -> None:
        """Insert one delivery (:data:`DELIVERY_FIELDS`; ``owner``/``lease_until`` NULL)."""

    async def get_delivery(self, key_id: str, webhook_id: str,
                           delivery_id: str) -> dict[str, Any] | None:
        """One delivery of one of the key's endpoints, or ``None``."""

    async def page_deliveries(self, key_id: str, webhook_id: str, limit: int,
                              starting_after: str | None = None) -> list[dict[str, Any]]:
        """Up to ``limit`` of the endpoint's deliveries, newest first, after
        ``starting_after`` (``ValueError`` when that is not one of them)."""

    async def resend_delivery(self, key_id: str, webhook_id: str, delivery_id: str,
                              now: float, retry_index: int) -> bool:
        """Make a delivery pending, due at ``now``, unless an attempt of it is in
        progress; False when refused (or no such delivery)."""

    async def claim_deliveries(self, owner: str, now: float, lease_until: float,
                               limit: int) -> list[dict[str, Any]]:
        """Take up to ``limit`` deliveries due at ``now`` (:data:`CLAIM`): each is
        ``owner``'s until ``lease_until``, and no concurrent caller (any process, any node)
        takes it. Each row has the delivery's columns and its endpoint's url and secrets."""

    async def finish_delivery(self, delivery: Mapping[str, Any], owner: str,
                              outcome: str, now: float, failing_after: float) -> bool:
        """Record an attempt (``delivery``: ``id``, ``attempts``, ``state``,
        ``next_attempt``, ``retry_index``) if ``owner`` still holds it, and its outcome on
        the endpoint: ``ok`` ends its failing streak, ``gone`` disables it, ``failed``
        starts (or continues) a streak and disables it once the streak began at or before
        ``now - failing_after``. False when the attempt was no longer ``owner``'s."""

    async def prune_deliveries(self, created_before: str) -> int:
        """Delete finished deliveries created before ``created_before`` (ISO 8601)."""
