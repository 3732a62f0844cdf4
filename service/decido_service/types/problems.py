"""Errors: the problem document (RFC 9457) and the faults of a request it lists."""

from __future__ import annotations

from typing import Annotated

from msgspec import UNSET, Meta, Struct, UnsetType

from decido_service.http.problems import PROBLEM_BASE
from decido_service.types.fields import ProblemCode

__all__ = ["ErrorEntry", "Problem"]


class ErrorEntry(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """One fault of a request (422 `errors`)."""

    pointer: Annotated[str, Meta(
        description="RFC 6901 JSON pointer of the member at fault, e.g. /bounds/3 "
                    "('' for the whole body)")]
    field: Annotated[str, Meta(description="the same place written bounds[3] or "
                                           "options.popsize ('' for the whole body)")]
    code: Annotated[str, Meta(description="stable machine code of this fault")]
    message: str
    position: Annotated[int, Meta(
        ge=0, description="for expressions: 0-based character offset of the fault")
    ] | UnsetType = UNSET


class Problem(Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """An error (RFC 9457 problem document, `application/problem+json`)."""

    type: Annotated[str, Meta(extra_json_schema={"format": "uri"},
                              description=f"{PROBLEM_BASE}<code>")]
    title: str
    status: Annotated[int, Meta(ge=400, le=599)]
    detail: str
    code: ProblemCode
    instance: Annotated[str, Meta(description="the request path")]
    request_id: Annotated[str, Meta(description="the X-Request-Id header's value")]
    errors: Annotated[list[ErrorEntry], Meta(
        description="422: every fault of the request")] | UnsetType = UNSET
    limit: Annotated[str, Meta(
        description="429: the counter that refused (decide.minute, decide.month, "
                    "decide.refused, optimize.minute, optimize.month, optimize.refused, "
                    "keys.hour)")] | UnsetType = UNSET
    limit_value: Annotated[int | None, Meta(
        description="429, 403: the limit or cap")] | UnsetType = UNSET
    reset: Annotated[int, Meta(
        description="429: epoch seconds at which the counter's window ends")
    ] | UnsetType = UNSET
    field: Annotated[str, Meta(description="403: the field beyond the cap")] | UnsetType = UNSET
    requested: Annotated[float, Meta(
        description="403: what the request asked for")] | UnsetType = UNSET
