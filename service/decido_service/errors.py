"""The errors every layer raises, with no knowledge of HTTP.

A capability (:mod:`decido_service.runs`, :mod:`decido_service.studies`, ...) raises
:class:`ServiceError` with one of the problem codes of
:data:`decido_service.types.problems.TITLES` (``code`` picks the status and title);
``extra`` members are added to the problem document (``errors`` for 422,
``limit``/``limit_value``/``reset`` for 429), ``headers`` to the answer (``Retry-After``,
``Allow``). :func:`as_service_error` translates the library's and the store's exceptions;
the HTTP layer renders them all as problem+json
(:func:`decido_service.http.problems.problem_handler`). This module imports nothing of
``decido_service`` but the problem types and the store's error.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from decido import DecisionError, EngineError, ExpressionError
from decido_service.store.records import StoreError
from decido_service.types.problems import PROBLEM_BASE, TITLES, Problem

__all__ = ["ServiceError", "as_service_error", "fault", "field_error", "field_of", "invalid",
           "limit_error", "pointer_of", "problem", "validation_error"]

P = TypeVar("P", bound=Problem)


class ServiceError(Exception):
    """A refusal answered as a problem document: ``ServiceError("malformed_json", "...")``
    (module docs); ``detail`` defaults to the code's title."""

    quiet = True

    def __init__(self, code: str, detail: str | None = None, *,
                 headers: dict[str, str] | None = None,
                 extra: dict[str, Any] | None = None) -> None:
        status, title = TITLES[code]
        super().__init__(detail or title)
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


def fault(pointer: str, code: str, message: str) -> dict[str, Any]:
    """:func:`field_error` of an RFC 6901 ``pointer`` (its field derived from it)."""
    return {"pointer": pointer, "field": field_of(pointer), "code": code, "message": message}


def validation_error(errors: list[dict[str, Any]]) -> ServiceError:
    """A 422 ``validation_failed`` carrying ``errors`` (entries of :func:`field_error`)."""
    first = errors[0]
    field, message = first["field"], first["message"]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    # a message that already names its field (the library's "bounds[0]: the lower
    # bound ...") is not prefixed with it again
    named = bool(field) and message.startswith(field) and \
        message[len(field):len(field) + 1] in (":", " ")
    said = message if named else f"{field or 'body'}: {message}"
    return ServiceError("validation_failed", f"{said}{more}", extra={"errors": errors})


def invalid(errors: list[dict[str, Any]]) -> ServiceError:
    """A 422 ``validation_failed`` listing ``errors`` (entries of :func:`fault`), its
    detail always prefixed with the first one's field."""
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return ServiceError("validation_failed",
                        f"{first['field'] or 'body'}: {first['message']}{more}",
                        extra={"errors": errors})


def limit_error(violation: Any) -> ServiceError:
    """The error for a plan or tier cap (a ``limits.LimitViolation``): 403
    ``max_dims_exceeded`` / ``compute_cap_exceeded`` / ``batch_too_large`` (the status
    comes from :data:`TITLES`, by code). The body names the field, the cap and the request."""
    extra: dict[str, Any] = {"field": violation.field, "limit_value": violation.limit,
                             "requested": violation.requested}
    if TITLES[violation.code][0] == 422:
        extra["errors"] = [field_error(violation.field, violation.code, violation.detail)]
    return ServiceError(violation.code, violation.detail, extra=extra)


def as_service_error(exc: BaseException) -> ServiceError:
    """Translate an exception of the library, the store or anything else (500
    ``internal_error``, saying nothing about it) into a :class:`ServiceError`."""
    if isinstance(exc, ServiceError):
        return exc
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
        return ServiceError("store_unavailable", "the store is not answering; retry shortly",
                            headers={"Retry-After": "1"})
    return ServiceError("internal_error", "an unexpected error occurred; quote the request id")


def problem(error: ServiceError, instance: str, request_id: str, kind: type[P]) -> P:
    """The RFC 9457 document of ``error`` about ``instance`` (the request's path, or the
    run's for a run that failed): a :class:`~decido_service.types.Problem`, or ``kind``
    (a streamed run's ``ErrorEvent``)."""
    return kind(type=PROBLEM_BASE + error.code, title=error.title, status=error.status_code,
                detail=error.detail, code=error.code, instance=instance,
                request_id=request_id, **(error.extra or {}))
