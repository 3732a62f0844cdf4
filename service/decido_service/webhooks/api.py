"""What the ``/v1/webhooks`` endpoints do, for the HTTP handlers and the dashboard alike.

Every function takes the store and the caller's key and answers a type of
:mod:`decido_service.types.webhooks`: a key sees only its own endpoints (another key's, an
unknown id and a malformed one are all 404 ``not_found``). A URL is checked by the address
guard when it is given (422 with the pointer ``/url``: resolved once, every address
checked) and again at every delivery.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import msgspec
import orjson

from decido_service import limits
from decido_service.config import Settings, webhook_networks
from decido_service.errors import ServiceError, field_error, validation_error
from decido_service.schemas import decode_body
from decido_service.store import KeyRecord, Store, iso_utc, ordered_id
from decido_service.types.webhooks import (
    DELIVERY_ID_PATTERN,
    WEBHOOK_ID_PATTERN,
    Delivery,
    DeliveryAttempt,
    DeliveryList,
    DeliveryPage,
    Webhook,
    WebhookCreate,
    WebhookCreated,
    WebhookUpdate,
)
from decido_service.webhooks.events import TEST_EVENT
from decido_service.webhooks.guard import GuardError, destination
from decido_service.webhooks.signing import new_secret

__all__ = ["RESOLVE_TIMEOUT", "SECRET_GRACE", "create", "decode", "delete", "delivery_view",
           "find", "page_deliveries", "resend", "rotate", "send_test", "update", "webhook_view"]

#: seconds a rotated-out secret keeps signing beside the new one
SECRET_GRACE = 86400.0
#: seconds the check of a new URL may wait for its name to resolve
RESOLVE_TIMEOUT = 5.0
_WEBHOOK_ID = re.compile(WEBHOOK_ID_PATTERN)
_DELIVERY_ID = re.compile(DELIVERY_ID_PATTERN)


def webhook_view(row: Mapping[str, Any]) -> Webhook:
    """The API's ``Webhook`` of a row (never its secret)."""
    return Webhook(id=row["id"], url=row["url"], events=orjson.loads(row["events"]),
                   description=row["description"], enabled=bool(row["enabled"]),
                   disabled_reason=row["disabled_reason"], created_at=row["created_at"])


def _with_secret(row: Mapping[str, Any]) -> WebhookCreated:
    """The API's ``WebhookCreated``: the endpoint and its secret (shown once)."""
    return WebhookCreated(**msgspec.structs.asdict(webhook_view(row)), secret=row["secret"])


def delivery_view(row: Mapping[str, Any]) -> Delivery:
    """The API's ``Delivery`` of a row."""
    attempts = msgspec.convert(orjson.loads(row["attempts"]), list[DeliveryAttempt])
    due = row["next_attempt"] if row["state"] == "pending" else None
    return Delivery(id=row["id"], webhook_id=row["webhook_id"], event=row["event"],
                    created_at=row["created_at"], state=row["state"], attempts=attempts,
                    next_attempt_at=None if due is None else iso_utc(due),
                    attempt_count=len(attempts))


def _not_found(what: str, ident: str) -> ServiceError:
    return ServiceError("not_found", f"no {what} {ident!r} of this key")


async def find(store: Store, key: KeyRecord, webhook_id: str) -> dict[str, Any]:
    """The row of one of the key's endpoints; 404 otherwise."""
    row = await store.webhooks.get(key["id"], webhook_id) \
        if _WEBHOOK_ID.fullmatch(webhook_id) else None
    if row is None:
        raise _not_found("webhook", webhook_id)
    return row


async def _url_fault(url: str, settings: Settings) -> dict[str, Any] | None:
    """The fault at ``/url`` when the guard refuses ``url`` now (a name that does not
    resolve within :data:`RESOLVE_TIMEOUT` seconds included), else ``None``."""
    allowed = webhook_networks(settings.webhook_allow_networks)
    try:
        await asyncio.wait_for(destination(url, allowed), RESOLVE_TIMEOUT)
    except GuardError as exc:
        return field_error("url", "address_refused", str(exc))
    except asyncio.TimeoutError:
        return field_error("url", "address_refused",
                           f"the host did not resolve within {RESOLVE_TIMEOUT:g} s")
    return None


async def _checked_url(url: str, settings: Settings) -> str:
    """``url`` when the guard lets it through now (422 at ``/url`` otherwise)."""
    fault = await _url_fault(url, settings)
    if fault is not None:
        raise validation_error([fault])
    return url


Body = TypeVar("Body", WebhookCreate, WebhookUpdate)


async def decode(kind: type[Body], body: bytes, settings: Settings) -> Body:
    """A ``POST /v1/webhooks`` or ``PATCH /v1/webhooks/{id}`` body; 400, or a 422 listing
    every fault: the types' and, when the body's ``url`` is a string they do not fault,
    the address guard's (a bad URL and an unknown event are both named at once)."""
    try:
        return decode_body(kind, body)
    except ServiceError as exc:
        if exc.code != "validation_failed":
            raise
        faults: list[dict[str, Any]] = list((exc.extra or {}).get("errors", []))
    raw = orjson.loads(body)
    url = raw.get("url") if isinstance(raw, dict) else None
    if isinstance(url, str) and not any(f["pointer"] == "/url" for f in faults):
        fault = await _url_fault(url, settings)
        if fault is not None:
            faults.insert(0, fault)
    raise validation_error(faults)


def _events(events: Sequence[str]) -> str:
    return orjson.dumps(list(dict.fromkeys(events))).decode()


async def create(store: Store, settings: Settings, key: KeyRecord,
                 req: WebhookCreate) -> WebhookCreated:
    """A new endpoint of the key, with its secret (403 ``too_many_webhooks`` at the
    tier's ``max_webhooks``)."""
    url = await _checked_url(req.url, settings)
    now = time.time()
    row = {"id": ordered_id("wh_", now), "key_id": key["id"], "url": url,
           "events": _events(req.events),
           "description": req.description if isinstance(req.description, str) else None,
           "enabled": 1, "disabled_reason": None, "secret": new_secret(),
           "created_at": iso_utc(now)}
    cap = limits.tier_limits(key, settings=settings)["max_webhooks"]
    if not await store.webhooks.create(row, cap):
        raise ServiceError("too_many_webhooks", f"this key has {cap} webhooks, the most its tier "
                       "allows; delete one first", extra={"limit_value": cap})
    return _with_secret(row)


async def update(store: Store, settings: Settings, key: KeyRecord, webhook_id: str,
                 req: WebhookUpdate) -> Webhook:
    """Change an endpoint's url, events, description or enabled flag (enabling it again
    clears the reason and the failing streak it was disabled for)."""
    await find(store, key, webhook_id)
    changes: dict[str, Any] = {}
    if isinstance(req.url, str):
        changes["url"] = await _checked_url(req.url, settings)
    if isinstance(req.events, list):
        changes["events"] = _events(req.events)
    if isinstance(req.description, str):
        changes["description"] = req.description
    if isinstance(req.enabled, bool):
        changes.update(enabled=int(req.enabled), disabled_reason=None, failing_since=None)
    row = await store.webhooks.update(key["id"], webhook_id, changes)
    if row is None:
        raise _not_found("webhook", webhook_id)
    return webhook_view(row)


async def delete(store: Store, key: KeyRecord, webhook_id: str) -> None:
    """Delete an endpoint and its deliveries."""
    if not (_WEBHOOK_ID.fullmatch(webhook_id) and
            await store.webhooks.delete(key["id"], webhook_id)):
        raise _not_found("webhook", webhook_id)


async def rotate(store: Store, key: KeyRecord, webhook_id: str) -> WebhookCreated:
    """A new secret; the current one signs beside it for :data:`SECRET_GRACE` seconds."""
    row = await find(store, key, webhook_id)
    changed = await store.webhooks.update(key["id"], webhook_id, {
        "secret": new_secret(), "old_secret": row["secret"],
        "old_secret_until": time.time() + SECRET_GRACE})
    if changed is None:
        raise _not_found("webhook", webhook_id)
    return _with_secret(changed)


async def send_test(store: Store, key: KeyRecord, webhook_id: str) -> Delivery:
    """Queue a ``webhook.test`` event due at once (409 ``webhook_disabled`` for a disabled
    endpoint); the delivery. The caller wakes its delivery worker."""
    row = await find(store, key, webhook_id)
    if not row["enabled"]:
        raise ServiceError("webhook_disabled", f"webhook {webhook_id} is disabled; enable it "
                       "first (PATCH enabled: true)")
    now = time.time()
    delivery = {"id": ordered_id("msg_", now), "webhook_id": webhook_id, "key_id": key["id"],
                "event": TEST_EVENT, "payload": orjson.dumps({"webhook_id": webhook_id}).decode(),
                "created_at": iso_utc(now), "state": "pending", "attempts": "[]",
                "next_attempt": now, "retry_index": 1}
    await store.webhooks.add_delivery(delivery)
    return delivery_view(delivery)


async def page_deliveries(store: Store, key: KeyRecord, webhook_id: str,
                          query: DeliveryPage) -> DeliveryList:
    """A page of the endpoint's deliveries, newest first."""
    await find(store, key, webhook_id)
    rows = await store.webhooks.page_deliveries(key["id"], webhook_id, query.limit + 1,
                                                query.starting_after)
    return DeliveryList(data=[delivery_view(r) for r in rows[:query.limit]],
                        has_more=len(rows) > query.limit)


async def resend(store: Store, settings: Settings, key: KeyRecord, webhook_id: str,
                 delivery_id: str) -> Delivery:
    """Attempt a delivery once more, at once, with the same ``webhook-id`` (no retries
    after it); 409 ``delivery_in_progress`` while an attempt of it is under way."""
    await find(store, key, webhook_id)
    row = await store.webhooks.get_delivery(key["id"], webhook_id, delivery_id) \
        if _DELIVERY_ID.fullmatch(delivery_id) else None
    if row is None:
        raise _not_found("delivery", delivery_id)
    if not await store.webhooks.resend(key["id"], webhook_id, delivery_id, time.time(),
                                       len(settings.delivery_schedule)):
        raise ServiceError("delivery_in_progress", f"an attempt of {delivery_id} is under way; "
                       "retry when it ends", headers={"Retry-After": "1"})
    found = await store.webhooks.get_delivery(key["id"], webhook_id, delivery_id)
    assert found is not None
    return delivery_view(found)
