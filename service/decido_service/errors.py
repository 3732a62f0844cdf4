"""The errors capability packages raise, with no knowledge of HTTP.

A capability (:mod:`decido_service.studies`, say) raises :class:`ServiceError` with one of
the problem codes of :data:`decido_service.types.problems.TITLES`; the HTTP layer renders it
exactly as it renders its own errors (:func:`decido_service.http.problems.as_api_error`).
This module imports nothing of ``decido_service``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ServiceError", "fault", "invalid"]


class ServiceError(Exception):
    """A refusal: ``code`` (a problem code), ``detail`` (a sentence), ``extra`` members of
    the problem document (``errors`` for 422) and ``headers`` of the answer."""

    def __init__(self, code: str, detail: str, *, extra: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})


def fault(pointer: str, code: str, message: str) -> dict[str, Any]:
    """One entry of a 422's ``errors``: ``pointer`` (RFC 6901), ``field`` (``trials[3].x``),
    ``code``, ``message``."""
    field = ""
    for part in pointer.split("/")[1:]:
        name = part.replace("~1", "/").replace("~0", "~")
        field += f"[{name}]" if name.isdigit() else (f".{name}" if field else name)
    return {"pointer": pointer, "field": field, "code": code, "message": message}


def invalid(errors: list[dict[str, Any]]) -> ServiceError:
    """A 422 ``validation_failed`` listing ``errors`` (entries of :func:`fault`)."""
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return ServiceError("validation_failed",
                        f"{first['field'] or 'body'}: {first['message']}{more}",
                        extra={"errors": errors})
