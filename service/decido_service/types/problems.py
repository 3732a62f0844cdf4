"""Errors: the problem document (RFC 9457), the faults of a request it lists, and every
problem code the service answers with (:data:`TITLES`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

__all__ = ["PROBLEM_BASE", "PROBLEM_TYPE", "TITLES", "ErrorEntry", "Problem", "ProblemCode"]

PROBLEM_BASE = "https://decido.dev/problems/"
PROBLEM_TYPE = "application/problem+json"

#: code -> (status, title): every code the service answers with.
TITLES: dict[str, tuple[int, str]] = {
    "malformed_json": (400, "Malformed JSON"),
    "bad_request": (400, "Bad request"),
    "invalid_parameter": (400, "Invalid parameter"),
    "missing_credentials": (401, "Missing credentials"),
    "invalid_credentials": (401, "Invalid credentials"),
    "conflicting_credentials": (401, "Conflicting credentials"),
    "revoked_key": (401, "Revoked key"),
    "max_dims_exceeded": (403, "Too many dimensions for the tier"),
    "compute_cap_exceeded": (403, "Above the tier's per-run compute cap"),
    "csrf_failed": (403, "Cross-site request refused"),
    "not_found": (404, "Not found"),
    "method_not_allowed": (405, "Method not allowed"),
    "request_timeout": (408, "Request timeout"),
    "body_too_large": (413, "Body too large"),
    "uri_too_long": (414, "URI too long"),
    "unsupported_media_type": (415, "Unsupported media type"),
    "run_finished": (409, "Run already finished"),
    "run_not_finished": (409, "Run not finished"),
    "run_cancelled": (409, "Run cancelled before it started"),
    "study_finished": (409, "Study finished"),
    "study_not_stopped": (409, "Study not stopped"),
    "trial_finished": (409, "Trial already finished"),
    "too_many_studies": (429, "Too many active studies"),
    "idempotency_key_in_use": (409, "Idempotency-Key in use"),
    "idempotency_key_reused": (422, "Idempotency-Key reused with another request"),
    "validation_failed": (422, "Validation failed"),
    "headers_too_large": (431, "Request header fields too large"),
    "batch_too_large": (403, "Batch too large for the plan"),
    "rate_limited": (429, "Rate limited"),
    "monthly_quota_exceeded": (429, "Monthly quota exceeded"),
    "key_creation_throttled": (429, "Key creation throttled"),
    "too_many_refused": (429, "Too many refused requests"),
    "too_many_runs": (429, "Too many runs queued or running"),
    "too_many_webhooks": (403, "Too many webhooks for the tier"),
    "webhook_disabled": (409, "Webhook disabled"),
    "delivery_in_progress": (409, "Delivery attempt in progress"),
    "too_many_streams": (429, "Too many event streams open"),
    "internal_error": (500, "Internal server error"),
    "interrupted": (500, "Run interrupted"),
    "overloaded": (503, "Overloaded"),
    "store_unavailable": (503, "Store unavailable"),
}

if TYPE_CHECKING:
    ProblemCode = str
else:
    ProblemCode = Literal[tuple(sorted(TITLES))]


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
