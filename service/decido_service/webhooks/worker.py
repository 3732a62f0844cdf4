"""The delivery worker: one per worker process, on every node.

It claims the deliveries that are due (``store.webhooks.claim``: each is this process's
under a lease of :data:`LEASE` seconds, longer than an attempt can take, and no
other process takes it meanwhile), at most ``DECIDO_WEBHOOK_CONCURRENCY`` at once, every
:data:`CLAIM_INTERVAL` seconds or at once when woken (a test event sent here). Claims are
fair across keys: a key's oldest due delivery goes before another key's second, and a key
has at most ``DECIDO_WEBHOOK_KEY_CONCURRENCY`` attempts in flight (an endpoint
``DECIDO_WEBHOOK_ENDPOINT_CONCURRENCY``), every process of every node together, so one
key's receivers that never answer hold a few slots for :data:`~.delivery.TIMEOUT` seconds,
never every slot, and another key's deliveries go on meanwhile. Each attempt
runs as a task of its own on the event loop — the HTTP exchange is asynchronous, so it
never holds up a request or a run — and its outcome is written with the lease checked: an
attempt whose lease ran out (the process stalled) records nothing, and the delivery is
attempted again by whoever claims it next, with the same ``webhook-id``. A process that
dies in the middle of an attempt leaves its lease to run out the same way: at least once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import httpx
import orjson

from decido_service.config import Settings, webhook_networks
from decido_service.poller import Every, Poller
from decido_service.store import Store, iso_utc
from decido_service.webhooks import delivery
from decido_service.webhooks.events import event_body, request_headers

__all__ = ["CLAIM_INTERVAL", "FAILING_AFTER", "LEASE", "STOP_GRACE", "DeliveryWorker"]

log = logging.getLogger("decido.service")

#: seconds a claimed attempt is this process's (well above delivery.TIMEOUT)
LEASE = 60.0
#: seconds between two looks for due deliveries of an idle worker
CLAIM_INTERVAL = 1.0
#: seconds of nothing but failed attempts after which an endpoint is disabled (5 days)
FAILING_AFTER = 5 * 86400.0
#: seconds the attempts in progress get to end when the process stops
STOP_GRACE = 5.0
#: seconds between two deletions of deliveries past their retention (the runs')
PRUNE_INTERVAL = 3600.0


class DeliveryWorker(Poller):
    """Claims and makes delivery attempts for this worker process (module docs)."""

    def __init__(self, store: Store, settings: Settings, owner: str) -> None:
        super().__init__("delivery worker", CLAIM_INTERVAL)
        self.store = store
        self.owner = owner
        self.allowed = webhook_networks(settings.webhook_allow_networks)
        self.schedule = settings.delivery_schedule
        self.concurrency = settings.webhook_concurrency
        self.per_key = settings.webhook_key_concurrency
        self.per_endpoint = settings.webhook_endpoint_concurrency
        self.retention_days = settings.run_retention_days
        self.attempts: set[asyncio.Task[None]] = set()
        self._client: httpx.AsyncClient | None = None
        self._prune = Every(PRUNE_INTERVAL)

    def start(self) -> None:
        """Start claiming."""
        self._client = delivery.client()
        super().start()

    async def stop(self) -> None:
        """Stop claiming, give the attempts in progress :data:`STOP_GRACE` seconds, then
        cancel the rest (their leases run out and another process attempts them again)."""
        await super().stop()
        if self.attempts:
            _, pending = await asyncio.wait(set(self.attempts), timeout=STOP_GRACE)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
        if self._client is not None:
            await self._client.aclose()

    async def round(self) -> None:
        """Claim what is due as far as the concurrency allows; prune when due."""
        free = self.concurrency - len(self.attempts)
        if free > 0:
            now = time.time()
            for row in await self.store.webhooks.claim(
                    self.owner, now, now + LEASE, free, per_key=self.per_key,
                    per_endpoint=self.per_endpoint):
                task = asyncio.ensure_future(self._attempt(row))
                self.attempts.add(task)
                task.add_done_callback(self._done)
        if self._prune.due():
            await self.store.webhooks.prune(
                iso_utc(time.time() - self.retention_days * 86400.0))

    def _done(self, task: asyncio.Task[None]) -> None:
        self.attempts.discard(task)
        self.wake.set()

    async def _attempt(self, row: dict[str, Any]) -> None:
        """One attempt of a claimed delivery, and its record."""
        assert self._client is not None
        body = await asyncio.to_thread(event_body, row)  # decoded and encoded off the loop
        headers = request_headers(row, body, time.time())
        found = await delivery.post(self._client, row["url"], headers, body, self.allowed)
        now = time.time()
        attempts = [*orjson.loads(row["attempts"]), {
            "at": iso_utc(now), "status": found.status, "error": found.error,
            "duration_ms": found.duration_ms, "response": found.response}]
        state, due, index = "delivered", None, row["retry_index"]
        outcome = "ok"
        if not found.ok:
            outcome = "gone" if found.status == 410 else "failed"
            delay = None if outcome == "gone" else delivery.next_delay(
                index, self.schedule, found.retry_after)
            state, due = ("failed", None) if delay is None else ("pending", now + delay)
            index += 1
        try:
            await self.store.webhooks.finish(
                {"id": row["id"], "webhook_id": row["webhook_id"],
                 "attempts": orjson.dumps(attempts).decode(), "state": state,
                 "next_attempt": due, "retry_index": index}, self.owner, outcome, now,
                FAILING_AFTER)
        except Exception:  # noqa: BLE001 - unrecorded: attempted again once the lease ends
            log.warning("delivery %s: its attempt could not be recorded", row["id"],
                        exc_info=True)
