"""Problem details (RFC 9457): the one handler that writes every error as problem+json.

Every error the service answers with is an :class:`ApiError`, the
:class:`~decido_service.errors.ServiceError` every layer raises (``status_code``, a stable
``code``, a ``title``, ``headers`` such as ``Retry-After``, and extra members such as the
422 ``errors`` list or the 429 ``limit``). Exceptions from elsewhere — Sanic's own
(``NotFound``, ``MethodNotAllowed``, ``PayloadTooLarge``, ``RequestTimeout``,
``BadRequest``), the library's and the store's
(:func:`~decido_service.errors.as_service_error`) — are translated by :func:`as_api_error`;
anything else is a 500 whose body says nothing about it.
:func:`problem_handler` renders them all as ``application/problem+json``.
"""

from __future__ import annotations

import logging
from typing import TypeVar

from sanic.exceptions import SanicException
from sanic.response import HTTPResponse

from decido_service.errors import ServiceError as ApiError
from decido_service.errors import (
    as_service_error,
    field_error,
    field_of,
    limit_error,
    pointer_of,
    problem,
    validation_error,
)
from decido_service.http.context import ApiRequest
from decido_service.http.responses import answer
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


def as_api_error(exc: BaseException) -> ApiError:
    """Translate any exception into the :class:`ApiError` the client sees."""
    if isinstance(exc, SanicException) and 400 <= exc.status_code < 500:
        return _from_sanic(exc)
    return as_service_error(exc)


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
