"""Problem details (RFC 9457): the service's error classes and the one handler that writes them.

Every error the service answers with is an :class:`ApiError` (``status_code``, a stable
``code``, a ``title``, ``quiet``, ``headers`` such as ``Retry-After``, and extra members
such as the 422 ``errors`` list or the 429 ``limit``). Exceptions from elsewhere — Sanic's
own (``NotFound``, ``MethodNotAllowed``, ``PayloadTooLarge``, ``RequestTimeout``,
``BadRequest``), the library's (``DecisionError``, ``EngineError``, ``ExpressionError``),
the store's ``StoreError`` — are translated by :func:`as_api_error`; anything else is a 500
whose body says nothing about it.
:func:`problem_handler` renders them all as ``application/problem+json``.
"""

from __future__ import annotations

import logging
import re
from typing import Any, TypeVar

from sanic.exceptions import SanicException
from sanic.response import HTTPResponse

from decido import DecisionError, EngineError, ExpressionError
from decido_service.errors import ServiceError
from decido_service.http.context import ApiRequest
from decido_service.http.responses import answer
from decido_service.store import StoreError
from decido_service.types.problems import PROBLEM_BASE, PROBLEM_TYPE, TITLES, Problem

__all__ = [
    "PROBLEM_BASE",
    "PROBLEM_TYPE",
    "TITLES",
    "ApiError",
    "as_api_error",
    "field_error",
    "field_of",
    "limit_error",
    "pointer_of",
    "problem",
    "problem_body",
    "problem_handler",
    "validation_error",
]

_BY_STATUS: dict[int, str] = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
                              408: "request_timeout", 413: "body_too_large",
                              414: "uri_too_long", 415: "unsupported_media_type",
                              422: "validation_failed", 431: "headers_too_large",
                              503: "overloaded"}

log = logging.getLogger("decido.service")
P = TypeVar("P", bound=Problem)


class ApiError(SanicException):
    """An error answered as problem+json: ``ApiError("malformed_json", "...")``.

    ``code`` picks the status and title from :data:`TITLES`; ``extra`` members are added to
    the body (``errors`` for 422, ``limit``/``limit_value``/``reset`` for 429); ``headers``
    are added to the response (``Retry-After``, ``Allow``)."""

    quiet = True

    def __init__(
        self,
        code: str,
        detail: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        status, title = TITLES[code]
        super().__init__(detail or title, status_code=status, quiet=True)
        self.status_code = status
        self.code = code
        self.title = title
        self.detail = detail or title
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})


_FIELD_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def pointer_of(field: str) -> str:
    """The RFC 6901 pointer of a field written ``bounds[3]`` or ``criteria[0].weight``
    (``/bounds/3``, ``/criteria/0/weight``; ``""`` for the whole body)."""
    parts = (index or name for index, name in _FIELD_PART.findall(field))
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def field_of(pointer: str) -> str:
    """The field written ``options[2].attributes.price`` of an RFC 6901 pointer
    (``/options/2/attributes/price``): the inverse of :func:`pointer_of`."""
    out = ""
    for part in pointer.split("/")[1:]:
        name = part.replace("~1", "/").replace("~0", "~")
        out += f"[{name}]" if name.isdigit() else (f".{name}" if out else name)
    return out


def field_error(
    field: str, code: str, message: str, position: int | None = None, *,
    pointer: str | None = None,
) -> dict[str, Any]:
    """One entry of a 422's ``errors`` list: ``pointer`` (RFC 6901; derived from ``field``
    unless given), ``field`` (``bounds[3]``), ``code``, ``message``, ``position``?"""
    out: dict[str, Any] = {"pointer": pointer_of(field) if pointer is None else pointer,
                           "field": field, "code": code, "message": message}
    if position is not None:
        out["position"] = position
    return out


def validation_error(errors: list[dict[str, Any]]) -> ApiError:
    """A 422 ``validation_failed`` carrying ``errors`` (entries of :func:`field_error`)."""
    first = errors[0]
    field, message = first["field"], first["message"]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    # a message that already names its field (the library's "bounds[0]: the lower
    # bound ...") is not prefixed with it again
    named = bool(field) and message.startswith(field) and \
        message[len(field):len(field) + 1] in (":", " ")
    said = message if named else f"{field or 'body'}: {message}"
    return ApiError(
        "validation_failed", f"{said}{more}",
        extra={"errors": errors},
    )


def limit_error(violation: Any) -> ApiError:
    """The error for a plan or tier cap (a ``limits.LimitViolation``): 403
    ``max_dims_exceeded`` / ``compute_cap_exceeded`` / ``batch_too_large`` (the status
    comes from :data:`TITLES`, by code). The body names the field, the cap and the request."""
    extra: dict[str, Any] = {"field": violation.field, "limit_value": violation.limit,
                             "requested": violation.requested}
    if TITLES[violation.code][0] == 422:
        extra["errors"] = [field_error(violation.field, violation.code, violation.detail)]
    return ApiError(violation.code, violation.detail, extra=extra)


def as_api_error(exc: BaseException) -> ApiError:
    """Translate any exception into the :class:`ApiError` the client sees."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, ServiceError):
        return ApiError(exc.code, exc.detail, headers=exc.headers, extra=exc.extra)
    if isinstance(exc, DecisionError):
        return validation_error([
            field_error(field_of(e["pointer"]), e["code"], e["message"], e.get("position"),
                        pointer=e["pointer"]) for e in exc.errors])
    if isinstance(exc, ExpressionError):
        return validation_error(
            [field_error("objective_expression", exc.code, exc.message, exc.position)]
        )
    if isinstance(exc, EngineError):
        return validation_error([field_error(exc.field or "", exc.code, exc.message)])
    if isinstance(exc, StoreError):
        return ApiError("store_unavailable", "the store is not answering; retry shortly",
                        headers={"Retry-After": "1"})
    if isinstance(exc, SanicException) and 400 <= exc.status_code < 500:
        return _from_sanic(exc)
    return ApiError("internal_error", "an unexpected error occurred; quote the request id")


def _from_sanic(exc: SanicException) -> ApiError:
    status = exc.status_code
    message = str(exc)
    if status == 400 and "json" in message.lower():
        return ApiError("malformed_json", "the body is not valid JSON")
    headers = {k: v for k, v in (getattr(exc, "headers", None) or {}).items() if k == "Allow"}
    code = _BY_STATUS.get(status, "bad_request")
    if code == "body_too_large" and "header" in message.lower():
        # Sanic's buffer for the request head overflowed before anything was parsed; the
        # error handler tells the request line from the header fields when it can
        # (decido_service.http.heads.overflow_error), this is the answer when it cannot
        return ApiError("headers_too_large", "the request line and header fields together "
                                             "are above the size limit")
    detail = {
        "not_found": "no such endpoint; see /v1/docs",
        "method_not_allowed": "this method is not allowed here",
        "body_too_large": "the body is above the size limit",
        "request_timeout": "the request did not arrive in time",
    }.get(code, message or TITLES[code][1])
    return ApiError(code, detail, headers=headers)


def problem(error: ApiError, instance: str, request_id: str, kind: type[P]) -> P:
    """The RFC 9457 document of ``error`` about ``instance`` (the request's path, or the
    run's for a run that failed): a :class:`~decido_service.types.Problem`, or ``kind``
    (a streamed run's ``ErrorEvent``)."""
    return kind(type=PROBLEM_BASE + error.code, title=error.title, status=error.status_code,
                detail=error.detail, code=error.code, instance=instance,
                request_id=request_id, **(error.extra or {}))


def problem_body(request: ApiRequest, error: ApiError, kind: type[P]) -> P:
    """The problem document of ``error`` answering ``request``."""
    return problem(error, request.path, getattr(request.ctx, "request_id", None) or "", kind)


def problem_handler(request: ApiRequest, exc: Exception) -> HTTPResponse:
    """The one error handler: every exception becomes problem+json (500s are logged)."""
    error = as_api_error(exc)
    request.ctx.problem_code = error.code  # for the metrics of refused admissions
    if error.status_code >= 500 and error.code == "internal_error":
        log.error(
            "unhandled error", exc_info=exc,
            extra={"request_id": getattr(request.ctx, "request_id", None)},
        )
    return answer(problem_body(request, error, Problem), error.status_code, error.headers,
                  content_type=PROBLEM_TYPE)
