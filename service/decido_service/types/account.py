"""Keys and usage: the body of `POST /v1/keys`, the new key, and `/v1/usage`."""

from __future__ import annotations

from typing import Annotated

from msgspec import UNSET, Meta, Struct, UnsetType

from decido_service.types.fields import MAX_LABEL, Count, Epoch, Limit, Timestamp

#: a surface's budget of refused requests (docs/service.md, "Refused requests")
RefusedPerMinute = Annotated[Limit, Meta(
    description="refused requests a minute before 429 too_many_refused")]

__all__ = ["DecisionUsage", "KeyCreated", "KeyRequest", "KeyUsage", "MinuteUsage", "MonthUsage",
           "OptimizationUsage", "Usage"]


class KeyRequest(Struct, forbid_unknown_fields=True):
    """The optional body of `POST /v1/keys` (the body may also be empty)."""

    label: Annotated[str, Meta(
        max_length=MAX_LABEL, description="free text to recognise the key by")
    ] | UnsetType = UNSET



class KeyCreated(Struct, forbid_unknown_fields=True):
    """A new key. The secret (`key`) is shown in this answer only."""

    key: Annotated[str, Meta(pattern="^dk_[A-Za-z0-9_-]{43}$",
                             description="the secret: shown once, never again")]
    id: str
    prefix: str
    plan: str
    tier: str
    label: str | None
    created_at: Timestamp


class MinuteUsage(Struct, forbid_unknown_fields=True):
    """A per-minute counter."""

    limit: Limit
    remaining: Limit
    reset: Epoch


class MonthUsage(Struct, forbid_unknown_fields=True):
    """A per-month counter (UTC calendar month; `period_end` exclusive)."""

    limit: Limit
    used: Count
    remaining: Limit
    period_start: Timestamp
    period_end: Timestamp
    reset: Epoch


class KeyUsage(Struct, forbid_unknown_fields=True):
    """The key (never its secret)."""

    id: str
    prefix: str
    label: str | None
    created: Timestamp


class DecisionUsage(Struct, forbid_unknown_fields=True):
    """The key's decision plan and its usage."""

    plan: str
    minute: MinuteUsage
    month: MonthUsage
    batch_max: Limit
    refused_per_minute: RefusedPerMinute
    max_smaa_values: Annotated[int | None, Meta(description=(
        "the sampled values (samples x options x the attributes read per option: the "
        "criteria, and the names of the constraints and the expression) a decision under "
        "uncertainty may draw, and a batch's decisions together; above: 422 too_many at "
        "the samples; null: the library's own cap"))]


class OptimizationUsage(Struct, forbid_unknown_fields=True):
    """The key's optimization tier, its usage and per-run caps."""

    tier: str
    minute: MinuteUsage
    month: MonthUsage
    study_minute: Annotated[MinuteUsage, Meta(description=(
        "the studies' suggest and tell calls this minute (counter study.minute), apart "
        "from minute"))]
    max_dims: Limit
    max_evaluations: Limit
    max_time_limit: Annotated[float, Meta(description="seconds")]
    refused_per_minute: RefusedPerMinute


class Usage(Struct, forbid_unknown_fields=True):
    """The key, its plan and tier, their limits and current usage."""

    key: KeyUsage
    decision: DecisionUsage
    optimization: OptimizationUsage
