"""The response class of every answer the service writes, how it goes on the wire, and how
a request's body comes off it.

:class:`ApiResponse` is Sanic's ``HTTPResponse`` with two additions:

- ``stamp``: the header lines every answer carries (``X-Request-Id``, ``X-RateLimit-*``),
  already encoded by :func:`decido_service.middleware.finish` with one ``%``-format
  instead of going through Sanic's case-insensitive header dictionary one by one.
- :meth:`ApiResponse.http1_bytes`: the whole HTTP/1.1 answer (status line, headers, body)
  in one ``%``-format. :class:`DecidoHttp` (the connection's HTTP/1.1 handler, installed
  by ``decido serve`` through :class:`DecidoProtocol`) sends it with one write. Sanic's
  own path costs about 1.5 us per header (a translate to drop CR, LF and NUL, two encodes
  and a format each), which for the seven headers of an answer was more than everything
  else a health check does.

Whatever the fast path does not cover goes through Sanic unchanged: HEAD requests, answers
without a body (204, 304), streamed answers, cookies, a ``100-continue``, and any header
name or value that is not plain ASCII free of CR, LF and NUL (Sanic's sanitiser handles
those). :attr:`ApiResponse.processed_headers`, which Sanic's path uses, includes the stamp,
so both paths write the same headers.

:class:`DecidoRequest` (the app's request class) takes a request body that is already
whole in the connection's buffer in one step, where Sanic's ``receive_body`` runs an async
generator and two awaits of ``Http.read`` per request. Anything else (a body still on its
way, chunked encoding, ``Expect: 100-continue``, a body over the size limit, which Sanic
answers with 413) goes through Sanic's own code. The one thing the fast path does not do
is dispatch Sanic's ``http.lifecycle.read_body`` signal, which the service does not use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from sanic.compat import Header
from sanic.headers import format_http1_response
from sanic.helpers import has_message_body
from sanic.http import Http, Stage
from sanic.request import Request
from sanic.response import HTTPResponse
from sanic.server.protocols.http_protocol import HttpProtocol

__all__ = ["ApiResponse", "DecidoHttp", "DecidoProtocol", "DecidoRequest", "json_response"]

JSON = "application/json"
_STATUS_LINES = {status: format_http1_response(status, ()).removesuffix(b"\r\n")
                 for status in range(200, 600)}
_FRAMING = (b"content-length: %d\r\nconnection: close\r\n\r\n%b",
            b"content-length: %d\r\nconnection: keep-alive\r\n\r\n%b")


def _plain(text: str) -> bool:
    """Whether ``text`` can be written as it is: printable ASCII (no CR, LF, NUL)."""
    return text.isascii() and text.isprintable()


class ApiResponse(HTTPResponse):
    """``HTTPResponse`` with the per-request header lines pre-encoded (``stamp``) and a
    one-format HTTP/1.1 encoding (:meth:`http1_bytes`)."""

    __slots__ = ("stamp",)

    def __init__(self, body: bytes | None = None, status: int = 200,
                 headers: Mapping[str, str] | None = None, content_type: str = JSON) -> None:
        # the state HTTPResponse.__init__ sets, set once: it makes its header dictionary
        # twice, and every answer is built here (a test checks that the attributes agree)
        self.asgi = False
        self.body = self._encode_body(body)
        self.content_type = content_type
        self.stream = None
        self.status = status
        self.headers = Header(headers or {})
        self._cookies = None
        #: encoded header lines (``b"Name: value\r\n"`` each) added by ``finish``
        self.stamp = b""

    def http1_bytes(self, keep_alive: bool) -> bytes | None:
        """The whole answer as HTTP/1.1 bytes, or ``None`` when Sanic's own path must write
        it (no body allowed, framing headers set by hand, a header that needs sanitising)."""
        status = self.status
        content_type = self.content_type
        if type(status) is not int or not 200 <= status < 600 or not has_message_body(status) \
                or self._cookies is not None or content_type is None:
            return None
        headers = self.headers
        if headers:
            if "content-length" in headers or "transfer-encoding" in headers or \
                    "connection" in headers:
                return None
            if "content-type" not in headers:
                headers["content-type"] = content_type
            lines = []
            for name, value in headers.items():
                value = f"{value}"
                if not (_plain(name) and _plain(value)):
                    return None
                lines.append(f"{name}: {value}\r\n")
            fixed = "".join(lines).encode("ascii")
        elif _plain(content_type):
            fixed = b"content-type: %b\r\n" % content_type.encode("ascii")
        else:
            return None
        body = self.body or b""
        return _STATUS_LINES[status] + fixed + self.stamp + \
            _FRAMING[keep_alive] % (len(body), body)

    @property
    def processed_headers(self) -> Iterator[tuple[bytes, bytes]]:
        """The headers as bytes for Sanic's own path (the same bytes Sanic's encoding would
        give), the stamp's lines last."""
        if has_message_body(self.status):
            self.headers.setdefault("content-type", self.content_type)
        out = []
        for name, value in self.headers.items():
            value = f"{value}"
            if _plain(name) and _plain(value):
                out.append((name.encode("ascii"), value.encode("ascii")))
            else:
                out.append((self._sanitize_header_value(name).encode("ascii"),
                            self._sanitize_header_value(value).encode(
                                errors="surrogateescape")))
        for line in self.stamp.split(b"\r\n")[:-1]:
            name, _, value = line.partition(b": ")
            out.append((name, value))
        return iter(out)


def json_response(body: bytes, status: int = 200,
                  headers: Mapping[str, str] | None = None,
                  content_type: str = JSON) -> ApiResponse:
    """An :class:`ApiResponse` with an already serialised body."""
    return ApiResponse(body, status=status, headers=headers, content_type=content_type)


class DecidoHttp(Http):
    """Sanic's HTTP/1.1 connection handler, writing an :class:`ApiResponse` sent whole in
    one format and one write (:meth:`ApiResponse.http1_bytes`); anything else, and every
    case that method declines, goes through Sanic's own code."""

    __slots__ = ()

    async def http1_response_header(self, data: bytes, end_stream: bool) -> None:
        """Send the response header (and, for a whole answer, its body)."""
        res = self.response
        if end_stream and not data and type(res) is ApiResponse and not self.head_only \
                and not self.expecting_continue:
            out = res.http1_bytes(self.keep_alive)
            if out is not None:
                self.response_size = len(res.body or b"")
                self.response_func = None
                if self.protocol.access_log:
                    self.log_response()
                await self._send(out)
                self.stage = Stage.IDLE
                return
        await super().http1_response_header(data, end_stream)


class DecidoProtocol(HttpProtocol):
    """Sanic's HTTP protocol with :class:`DecidoHttp` as its HTTP/1.1 handler."""

    HTTP_CLASS = DecidoHttp


class DecidoRequest(Request):
    """Sanic's request, whose :meth:`receive_body` takes a body that has fully arrived
    without going through ``Http.read`` (see the module docs)."""

    __slots__ = ()

    async def receive_body(self) -> None:
        """Receive ``request.body``, if not already received."""
        stream = self.stream
        if not self.body and isinstance(stream, Http) and stream.request_body is True \
                and not stream.expecting_continue:
            left = stream.request_bytes_left
            buf = stream.recv_buffer
            if 0 < left <= len(buf) and stream.request_bytes <= stream.request_max_size:
                self.body = bytes(buf[:left])
                del buf[:left]
                stream.request_bytes_left = 0
                stream.request_body = None  # what Http.read leaves at the end of a body
                return
        await super().receive_body()
