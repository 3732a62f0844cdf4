"""The response class of every answer the service writes.

:class:`ApiResponse` is Sanic's ``HTTPResponse`` with a cheaper header encoding: Sanic
passes every header name and value through ``str.translate`` to drop CR, LF and NUL, which
for the six or seven headers of each answer cost more than the rest of a health check.
A name or value that is printable ASCII (every header this service writes: the request id
is echoed only when it matches ``[A-Za-z0-9._-]{1,128}``) contains none of those and is
encoded as it is; anything else still goes through Sanic's sanitiser.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from sanic.helpers import has_message_body
from sanic.response import HTTPResponse

__all__ = ["ApiResponse", "json_response"]

JSON = "application/json"


class ApiResponse(HTTPResponse):
    """``HTTPResponse`` whose plain-ASCII headers skip the per-character sanitiser."""

    __slots__ = ()

    @property
    def processed_headers(self) -> Iterator[tuple[bytes, bytes]]:
        """The headers as bytes (the same bytes Sanic's own encoding would give)."""
        if has_message_body(self.status):
            self.headers.setdefault("content-type", self.content_type)
        out = []
        for name, value in self.headers.items():
            value = f"{value}"
            if name.isascii() and name.isprintable() and value.isascii() and \
                    value.isprintable():
                out.append((name.encode("ascii"), value.encode("ascii")))
            else:
                out.append((self._sanitize_header_value(name).encode("ascii"),
                            self._sanitize_header_value(value).encode(
                                errors="surrogateescape")))
        return iter(out)


def json_response(body: bytes, status: int = 200,
                  headers: Mapping[str, str] | None = None,
                  content_type: str = JSON) -> ApiResponse:
    """An :class:`ApiResponse` with an already serialised body."""
    return ApiResponse(body, status=status, headers=headers, content_type=content_type)
