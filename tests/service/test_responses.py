"""How answers go on the wire: ``ApiResponse.http1_bytes`` (one format, one write) against
Sanic's own encoding, the cases it leaves to Sanic, and both paths on the live server."""

from __future__ import annotations

import socket
import time

import orjson
import pytest
from sanic.headers import format_http1_response
from sanic.response import HTTPResponse

from decido_service.responses import ApiResponse

STAMP = (b"X-Request-Id: 0123456789abcdef0123456789abcdef\r\nX-RateLimit-Limit: 100\r\n"
         b"X-RateLimit-Remaining: 99\r\nX-RateLimit-Reset: 1767225600\r\n")
_BODY = (b'{"options": [{"id": "a", "attributes": {"p": 2}}, {"id": "b", "attributes": '
         b'{"p": 1}}], "criteria": [{"attribute": "p", "weight": 1}]}')


def _parse(raw: bytes) -> tuple[bytes, list[tuple[str, str]], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.split(b"\r\n")
    headers = sorted((n.decode().lower(), v.decode()) for n, _, v in
                     (line.partition(b": ") for line in lines))
    return status, headers, body


def _sanic_bytes(res: ApiResponse, keep_alive: bool) -> bytes:
    """What Sanic's own ``http1_response_header`` writes for ``res`` (a whole answer)."""
    body = res.body or b""
    res.headers["content-length"] = len(body)
    res.headers["connection"] = "keep-alive" if keep_alive else "close"
    return format_http1_response(res.status, res.processed_headers) + body


def _response(status: int = 200, headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> ApiResponse:
    res = ApiResponse(b'{"a":1}', status=status, headers=headers, content_type=content_type)
    res.stamp = STAMP
    return res


@pytest.mark.parametrize("keep_alive", [True, False])
@pytest.mark.parametrize(("status", "headers", "content_type"), [
    (200, None, "application/json"),
    (201, {"Location": "/v1/keys/k1"}, "application/json"),
    (401, {"WWW-Authenticate": 'Bearer realm="decido"'}, "application/problem+json"),
    (429, {"Retry-After": "17"}, "application/problem+json"),
    (503, {"Retry-After": "1", "Cache-Control": "no-store"}, "application/problem+json"),
    (200, {"Content-Type": "text/plain; charset=utf-8"}, "application/json"),
    (200, None, "text/html; charset=utf-8"),
])
def test_one_format_writes_what_sanic_writes(status: int, headers: dict[str, str] | None,
                                             content_type: str, keep_alive: bool) -> None:
    fast = _response(status, headers, content_type).http1_bytes(keep_alive)
    assert fast is not None
    slow = _sanic_bytes(_response(status, headers, content_type), keep_alive)
    assert _parse(fast) == _parse(slow)
    assert fast.startswith(b"HTTP/1.1 %d " % status) and fast.endswith(b'\r\n\r\n{"a":1}')


@pytest.mark.parametrize(("body", "status", "headers", "content_type"), [
    (b'{"a":1}', 200, None, "application/json"),
    ("text", 503, {"Retry-After": "1"}, "application/problem+json"),
    (None, 204, {}, "application/json"),
])
def test_api_response_has_the_state_of_an_http_response(body, status, headers,
                                                        content_type) -> None:
    """ApiResponse sets HTTPResponse's attributes itself: every slot Sanic's classes
    declare must hold what HTTPResponse.__init__ would have put there."""
    ours = ApiResponse(body, status=status, headers=headers, content_type=content_type)
    theirs = HTTPResponse(body, status=status, headers=headers, content_type=content_type)
    slots = {name for cls in type(theirs).__mro__ for name in getattr(cls, "__slots__", ())}
    assert slots  # Sanic's response classes declare their state in __slots__
    for name in slots:
        mine, want = getattr(ours, name), getattr(theirs, name)
        if name == "headers":
            assert type(mine) is type(want) and list(mine.items()) == list(want.items())
        else:
            assert mine == want, name


def test_the_stamp_is_in_the_answer_once() -> None:
    status, headers, body = _parse(_response().http1_bytes(True) or b"")
    names = [n for n, _ in headers]
    assert status == b"HTTP/1.1 200 OK" and body == b'{"a":1}'
    for name in ("x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining",
                 "x-ratelimit-reset", "content-type", "content-length", "connection"):
        assert names.count(name) == 1, name
    assert ("content-length", "7") in headers and ("connection", "keep-alive") in headers


@pytest.mark.parametrize("value", ["a\r\nInjected: 1", "nul\x00byte", "tab\tx", "naïve"])
def test_headers_that_need_sanitising_are_left_to_sanic(value: str) -> None:
    res = _response(headers={"X-Test": value})
    assert res.http1_bytes(True) is None
    ours = list(res.processed_headers)
    sanic = list(HTTPResponse(b"{}", headers={"X-Test": value},
                              content_type="application/json").processed_headers)
    assert ours[:len(sanic)] == sanic  # same encoding as Sanic, then the stamp's lines
    assert ours[len(sanic):] == [(b"X-Request-Id", b"0123456789abcdef0123456789abcdef"),
                                 (b"X-RateLimit-Limit", b"100"),
                                 (b"X-RateLimit-Remaining", b"99"),
                                 (b"X-RateLimit-Reset", b"1767225600")]
    assert all(b"\r" not in v and b"\n" not in v for _, v in ours)


def test_cases_without_a_whole_body_are_left_to_sanic() -> None:
    assert _response(status=204).http1_bytes(True) is None  # no body allowed
    assert _response(status=304).http1_bytes(True) is None
    framed = _response(headers={"Content-Length": "7"})
    assert framed.http1_bytes(True) is None  # framing set by hand
    with_cookie = _response()
    with_cookie.add_cookie("a", "b")
    assert with_cookie.http1_bytes(True) is None
    untyped = ApiResponse(b"{}", content_type="application/json")
    untyped.content_type = None
    assert untyped.http1_bytes(True) is None


def _exchange(port: int, request: bytes, expect_continue: bool = False) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        if expect_continue:
            head, _, body = request.partition(b"\r\n\r\n")
            s.sendall(head + b"\r\n\r\n")
            assert s.recv(4096).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
            s.sendall(body)
        else:
            s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):  # the server closes: Connection: close
            chunks.append(chunk)
    return b"".join(chunks)


def test_connection_close_is_honoured(server) -> None:
    raw = _exchange(server.port, b"GET /v1/health HTTP/1.1\r\nHost: x\r\n"
                                 b"Connection: close\r\n\r\n")
    status, headers, body = _parse(raw)
    assert status == b"HTTP/1.1 200 OK" and ("connection", "close") in headers
    assert b'"status":"ok"' in body
    assert "x-request-id" in {n for n, _ in headers}


def test_expect_continue_goes_through_sanic_with_every_header(server) -> None:
    key = server.create_key(plan="sdk")["key"]
    body = _BODY
    raw = _exchange(server.port, b"POST /v1/decide HTTP/1.1\r\nHost: x\r\n"
                                 b"Authorization: Bearer %b\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: %d\r\nExpect: 100-continue\r\n"
                                 b"Connection: close\r\n\r\n%b" % (key.encode(), len(body), body),
                    expect_continue=True)
    status, headers, answer = _parse(raw)
    names = [n for n, _ in headers]
    assert status == b"HTTP/1.1 200 OK" and b'"best":"a"' in answer, answer
    for name in ("x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining",
                 "x-ratelimit-reset", "content-type"):
        assert names.count(name) == 1, name


# ---------------------------------------------------------------- request bodies


def _decide_request(key: str, body: bytes = _BODY, close: bool = False,
                    length: int | None = None) -> bytes:
    return (b"POST /v1/decide HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %b\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n%b\r\n%b"
            % (key.encode(), len(body) if length is None else length,
               b"Connection: close\r\n" if close else b"", body))


def _answers(raw: bytes) -> list[tuple[bytes, bytes]]:
    """(status line, body) of each answer in ``raw`` (Content-Length framed)."""
    out = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = next(int(v) for n, _, v in (line.partition(b": ") for line in lines[1:])
                      if n.lower() == b"content-length")
        out.append((lines[0], rest[:length]))
        raw = rest[length:]
    return out


def _pending_body(buffer: bytes, length: int, limit: int = 1 << 20) -> tuple:
    """A DecidoRequest whose connection (a DecidoHttp, not connected) is waiting for a body
    of ``length`` bytes with ``buffer`` received; its ``read`` must not be called."""
    from decido_service.responses import DecidoHttp, DecidoRequest

    class NoRead(DecidoHttp):
        __slots__ = ()

        async def read(self) -> bytes | None:
            raise AssertionError("Http.read was called")

    http = NoRead.__new__(NoRead)
    http.recv_buffer = bytearray(buffer)
    http.request_body, http.expecting_continue = True, False
    http.request_bytes_left = http.request_bytes = length
    http.request_max_size = limit
    request = DecidoRequest.__new__(DecidoRequest)
    request.body, request.stream = b"", http
    return request, http


def test_a_whole_body_is_taken_from_the_buffer_in_one_step() -> None:
    import asyncio

    request, http = _pending_body(b'{"a": 1}GET / HTTP/1.1\r\n', 8)
    asyncio.run(request.receive_body())
    assert request.body == b'{"a": 1}'
    assert bytes(http.recv_buffer) == b"GET / HTTP/1.1\r\n"  # the next request stays
    assert http.request_bytes_left == 0 and http.request_body is None


@pytest.mark.parametrize(("buffer", "length", "limit"), [
    (b'{"a"', 8, 1 << 20),  # not all there yet
    (b'{"a": 1}', 8, 4),  # over the size limit: Sanic's 413
])
def test_other_bodies_go_through_sanic(buffer: bytes, length: int, limit: int) -> None:
    import asyncio

    request, _ = _pending_body(buffer, length, limit)
    with pytest.raises(AssertionError, match="Http.read was called"):
        asyncio.run(request.receive_body())


def test_pipelined_bodies_are_each_read_whole(server) -> None:
    """Two requests in one write: the first body is taken from the buffer without the
    second request's bytes, which are then read as a request of their own."""
    key = server.create_key(plan="sdk")["key"]
    swapped = _BODY.replace(b'"p": 2', b'"p": 0')
    raw = _exchange(server.port, _decide_request(key) + _decide_request(key, swapped, close=True))
    (s1, b1), (s2, b2) = _answers(raw)
    assert s1 == s2 == b"HTTP/1.1 200 OK"
    assert b'"best":"a"' in b1 and b'"best":"b"' in b2


def test_a_body_that_arrives_in_pieces_is_read_whole(server) -> None:
    key = server.create_key(plan="sdk")["key"]
    request = _decide_request(key, close=True)
    cut = request.index(b"\r\n\r\n") + 4 + 10  # the head and 10 bytes of the body
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(request[:cut])
        time.sleep(0.2)  # the handler starts with part of the body in the buffer
        s.sendall(request[cut:])
        raw = b"".join(iter(lambda: s.recv(65536), b""))
    ((status, body),) = _answers(raw)
    assert status == b"HTTP/1.1 200 OK" and b'"best":"a"' in body


def test_a_chunked_body_is_read_whole(server) -> None:
    key = server.create_key(plan="sdk")["key"]
    chunks = b"".join(b"%x\r\n%b\r\n" % (len(part), part)
                      for part in (_BODY[:30], _BODY[30:])) + b"0\r\n\r\n"
    raw = _exchange(server.port, b"POST /v1/decide HTTP/1.1\r\nHost: x\r\n"
                                 b"Authorization: Bearer %b\r\nContent-Type: application/json\r\n"
                                 b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n%b"
                                 % (key.encode(), chunks))
    ((status, body),) = _answers(raw)
    assert status == b"HTTP/1.1 200 OK" and b'"best":"a"' in body


def test_a_body_over_the_limit_is_still_413(server) -> None:
    """The fast path leaves an oversized body to Sanic, which answers 413 (and closes the
    connection, which may reset it under the rest of the upload)."""
    key = server.create_key(plan="sdk")["key"]
    big = b'{"pad": "' + b"x" * (1024 * 1024) + b'"}'
    received = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        try:
            s.sendall(_decide_request(key, big, close=True))
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            while chunk := s.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass
    status, _, rest = received.partition(b"\r\n")
    assert status == b"HTTP/1.1 413 Request Entity Too Large", received[:200]
    assert b'"code":"body_too_large"' in rest


# ---------------------------------------------------------------- access log lines
@pytest.mark.parametrize(
    ("method", "path", "status", "ms", "rid", "key_id"),
    [
        ("GET", "/v1/health", 200, 0.12345, "0123456789abcdef0123456789abcdef", None),
        ("POST", "/v1/decide", 429, 12.0, "client-id.1_2", "5f0c3b9e2d8a4c1fb7e6a9d0c4b2e1f3"),
        ("GET", "/v1/x", 404, None, "abc", None),  # failed before the clock started
        ("GET", '/v1/"quoted"\\back', 404, 1.5, "r", None),  # JSON escapes: orjson's path
        ("GET", "/v1/caf\u00e9/\u2603", 404, 1.5, "r", None),  # non-ASCII path
        ("GET", "/v1/tab\there\x7f", 404, 1.5, "r", None),  # control characters
        ("GET", "/v1/health", 200, 3e15, "r", None),  # beyond %.3f's plain digits
        ("GET", "/v1/health", 200, float("nan"), "r", None),
    ],
)
def test_access_lines_are_json_with_the_same_fields(method, path, status, ms, rid, key_id):
    from decido_service.middleware import access_line

    line = access_line(method, path, status, ms, rid, key_id)
    assert b"\n" not in line
    parsed = orjson.loads(line)
    assert parsed["method"] == method and parsed["path"] == path
    assert parsed["status"] == status and parsed["request_id"] == rid
    assert parsed["key_id"] == key_id
    if ms is None or ms != ms:
        assert parsed["ms"] is None
    else:
        assert parsed["ms"] == pytest.approx(round(ms, 3), abs=1e-9)
