"""The decision log (`/v1/decisions`): a page of entries and one entry in full."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from decido_service.types.fields import Metadata

__all__ = ["DecisionLogEntry", "DecisionLogPage", "DecisionLogRecord"]


OptionId = str | int | None


class DecisionLogEntry(Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """One logged `/v1/decide` or `/v1/batch` call, as a list shows it."""

    id: Annotated[str, Meta(description="`dec_` and 24 hex digits")]
    created_at: Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
    kind: Literal["decide", "batch"]
    status: Annotated[str | None, Meta(
        description="decide: ok or infeasible; batch: ok or partial")]
    elapsed_ms: float
    answer_truncated: Annotated[bool, Meta(
        description="the answer was above the size cap and is not kept")]
    top: Annotated[list[dict[str, Any]], Meta(
        description="decide: the first 10 of the ranking (id, rank, score); batch: the "
                    "first 10 items (id, best, status)")]
    metadata: Annotated[Metadata, Meta(
        description="the labels sent with the call (decide: metadata; batch: "
                    "defaults.metadata)")]
    method: str | None | UnsetType = UNSET
    best: OptionId | UnsetType = UNSET
    best_is_tied: bool | None | UnsetType = UNSET
    n_options: int | None | UnsetType = UNSET
    n_feasible: int | None | UnsetType = UNSET
    n_decisions: int | None | UnsetType = UNSET
    n_ok: int | None | UnsetType = UNSET
    n_error: int | None | UnsetType = UNSET


class DecisionLogPage(Struct, forbid_unknown_fields=True):
    """A page of the key's decision log, newest first."""

    data: list[DecisionLogEntry]
    has_more: Annotated[bool, Meta(description="pass the last id as starting_after for more")]


class DecisionLogRecord(DecisionLogEntry, forbid_unknown_fields=True, omit_defaults=True,
                        kw_only=True):
    """One logged call with its request and (unless truncated) its answer."""

    request: Any
    answer: dict[str, Any] | None
