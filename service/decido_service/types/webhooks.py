"""Webhooks (`/v1/webhooks`): an endpoint, its creation and changes, its deliveries and
their attempts (docs/webhooks.md)."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from msgspec import UNSET, Meta, Struct, UnsetType

from decido_service.types.fields import Count, Timestamp
from decido_service.types.params import CURSOR, Page, PathParams

__all__ = ["DELIVERY_ID_PATTERN", "EVENT_TYPES", "WEBHOOK_ID_PATTERN", "Delivery",
           "DeliveryAttempt", "DeliveryList", "DeliveryPage", "DeliveryPath", "Webhook",
           "WebhookCreate", "WebhookCreated", "WebhookList", "WebhookPath", "WebhookUpdate"]

#: the events an endpoint can subscribe to (``*``: every one of them)
EventName = Literal["run.succeeded", "run.failed", "run.cancelled", "study.completed", "*"]
EVENT_TYPES: tuple[str, ...] = tuple(e for e in get_args(EventName) if e != "*")
#: what a webhook id looks like: ``wh_`` and 24 lowercase hex digits
WEBHOOK_ID_PATTERN = "^wh_[0-9a-f]{24}$"
#: what a delivery id (the ``webhook-id`` header of its attempts) looks like
DELIVERY_ID_PATTERN = "^msg_[0-9a-f]{24}$"
#: the longest endpoint URL and description (characters)
MAX_URL, MAX_DESCRIPTION = 2000, 200

Events = Annotated[list[EventName], Meta(min_length=1, max_length=len(EVENT_TYPES) + 1,
                                         description="event types to receive; * for all")]
Url = Annotated[str, Meta(min_length=1, max_length=MAX_URL, description=(
    "https URL of the receiver (http only for networks the operator allows); private, "
    "loopback, link-local and other non-public addresses are refused"))]
Description = Annotated[str, Meta(max_length=MAX_DESCRIPTION)]


class WebhookCreate(Struct, forbid_unknown_fields=True):
    """The body of `POST /v1/webhooks`."""

    url: Url
    events: Events
    description: Description | UnsetType = UNSET


class WebhookUpdate(Struct, forbid_unknown_fields=True):
    """The body of `PATCH /v1/webhooks/{id}`: the members to change."""

    url: Url | UnsetType = UNSET
    events: Events | UnsetType = UNSET
    enabled: Annotated[bool, Meta(description=(
        "false stops deliveries (pending ones wait); true resumes them"))] | UnsetType = UNSET
    description: Description | UnsetType = UNSET


class Webhook(Struct, forbid_unknown_fields=True):
    """An endpoint (never its secret)."""

    id: Annotated[str, Meta(pattern=WEBHOOK_ID_PATTERN)]
    url: str
    events: list[str]
    description: str | None
    enabled: bool
    disabled_reason: Annotated[str | None, Meta(description=(
        "why the service disabled it: gone (the receiver answered 410) or failing (every "
        "attempt failed for 5 days); null when enabled or disabled by the key"))]
    created_at: Timestamp


class WebhookCreated(Webhook, forbid_unknown_fields=True):
    """A new endpoint (or one whose secret was rotated) with its signing secret, shown in
    this answer only."""

    secret: Annotated[str, Meta(pattern="^whsec_[A-Za-z0-9+/]{43}=?$", description=(
        "whsec_ + base64 of 32 random bytes: the Standard Webhooks signing key"))]


class WebhookList(Struct, forbid_unknown_fields=True):
    """The key's endpoints, oldest first."""

    data: list[Webhook]


class DeliveryAttempt(Struct, forbid_unknown_fields=True):
    """One attempt to deliver an event."""

    at: Timestamp
    status: Annotated[int | None, Meta(description="the HTTP status; null: no answer")]
    error: Annotated[str | None, Meta(description=(
        "what went wrong without an answer (timeout, connection refused, address refused)"))]
    duration_ms: float
    response: Annotated[str | None, Meta(description=(
        "the first characters of the receiver's answer"))]


class Delivery(Struct, forbid_unknown_fields=True):
    """One event sent to one endpoint, with every attempt (the same `webhook-id` on each)."""

    id: Annotated[str, Meta(pattern=DELIVERY_ID_PATTERN, description=(
        "the webhook-id header of every attempt"))]
    webhook_id: str
    event: str
    created_at: Timestamp
    state: Literal["pending", "delivered", "failed"]
    attempts: list[DeliveryAttempt]
    next_attempt_at: Annotated[Timestamp | None, Meta(description=(
        "when the next attempt is due; null when none is"))]
    attempt_count: Count


class DeliveryList(Struct, forbid_unknown_fields=True):
    """A page of an endpoint's deliveries, newest first."""

    data: list[Delivery]
    has_more: Annotated[bool, Meta(
        description="more follow: ask again with starting_after=<last id>")]


class WebhookPath(PathParams):
    """The endpoint of a ``/v1/webhooks/{webhook_id}`` path."""

    webhook_id: Annotated[str, Meta(
        pattern=WEBHOOK_ID_PATTERN,
        description="a webhook id (another key's, unknown or malformed: 404)")]


class DeliveryPath(PathParams):
    """The delivery of a ``.../deliveries/{delivery_id}`` path."""

    delivery_id: Annotated[str, Meta(
        pattern=DELIVERY_ID_PATTERN, description="a delivery id (its webhook-id header)")]


class DeliveryPage(Page, kw_only=True):
    """A page of an endpoint's deliveries."""

    starting_after: Annotated[str, Meta(pattern=DELIVERY_ID_PATTERN, description=CURSOR)
                              ] | None = None
