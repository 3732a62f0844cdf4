"""How answers go on the wire (Sanic's own response path, public API only): framing,
keep-alive and ``Connection: close``, ``Expect: 100-continue``, request bodies whole, in
pieces, chunked or pipelined, HEAD wherever GET works, and the access log lines."""

from __future__ import annotations

import socket
import time
from datetime import datetime, timezone

import orjson
import pytest

import decido

_BODY = (b'{"options": [{"id": "a", "attributes": {"p": 2}}, {"id": "b", "attributes": '
         b'{"p": 1}}], "criteria": [{"attribute": "p", "weight": 1}]}')
#: headers whose values differ from one request to the next
_PER_REQUEST = {"x-request-id", "x-ratelimit-remaining"}


@pytest.mark.parametrize("value", ["plain", "a\r\nInjected: 1", "nul\x00byte", "tab\tx",
                                   "na\u00efve", "", "dk_" + "A" * 43, 17])
@pytest.mark.parametrize(("status", "content_type"), [(200, "application/json"),
                                                      (401, "application/problem+json"),
                                                      (204, "application/json"),
                                                      (304, "text/html; charset=utf-8")])
def test_response_encodes_headers_as_sanic_does(value, status: int, content_type: str) -> None:
    """The cheaper encoding gives Sanic's bytes, and leaves what needs sanitising to Sanic."""
    from sanic.response import HTTPResponse

    from decido_service.http.responses import Response

    def headers() -> dict:
        return {"X-Test": value, "X-Request-Id": "0123456789abcdef", "X-RateLimit-Limit": "10"}

    ours = Response(b"{}", status=status, headers=headers(), content_type=content_type)
    sanic = HTTPResponse(b"{}", status=status, headers=headers(), content_type=content_type)
    ours.headers["content-length"] = sanic.headers["content-length"] = 2
    encoded = list(ours.processed_headers)
    assert encoded == list(sanic.processed_headers)
    assert all(b"\r" not in v and b"\n" not in v and b"\x00" not in v for _, v in encoded)
    assert (b"content-type" in dict(encoded)) == (status not in (204, 304))


def _parse(raw: bytes) -> tuple[bytes, list[tuple[str, str]], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.split(b"\r\n")
    headers = sorted((n.decode().lower(), v.decode()) for n, _, v in
                     (line.partition(b": ") for line in lines))
    return status, headers, body


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


def test_every_answer_carries_its_headers_once(server) -> None:
    key = server.create_key()["key"].encode()
    raw = _exchange(server.port, b"GET /v1/usage HTTP/1.1\r\nHost: x\r\nX-API-Key: " + key +
                                 b"\r\nConnection: close\r\n\r\n")
    status, headers, body = _parse(raw)
    names = [n for n, _ in headers]
    assert status == b"HTTP/1.1 200 OK"
    for name in ("x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining",
                 "x-ratelimit-reset", "content-type", "content-length", "connection"):
        assert names.count(name) == 1, name
    assert ("content-length", str(len(body))) in headers
    assert ("content-type", "application/json") in headers


def test_expect_continue_is_answered_with_every_header(server) -> None:
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


def test_a_body_over_the_limit_is_413(server) -> None:
    """Sanic answers 413 (and closes the connection, which may reset it under the rest of
    the upload)."""
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


# ---------------------------------------------------------------- HEAD


def _get_and_head(port: int, path: str, headers: bytes = b"") -> tuple[tuple, tuple]:
    """(status, headers, body) of a GET and then a HEAD of ``path``, each on its own
    connection, headers that change per request left out."""
    out = []
    for method in (b"GET", b"HEAD"):
        raw = _exchange(port, b"%b %b HTTP/1.1\r\nHost: x\r\n%bConnection: close\r\n\r\n"
                        % (method, path.encode(), headers))
        status, lines, body = _parse(raw)
        out.append((status, [(n, v) for n, v in lines if n not in _PER_REQUEST], body))
    return out[0], out[1]


@pytest.mark.parametrize("path", ["/v1/health", "/v1/engines", "/v1/openapi.json", "/v1/docs",
                                  "/v1/docs/swagger-ui.css", "/v1/docs/docs-init.js"])
def test_head_answers_like_get_without_a_body(server, path: str) -> None:
    (status, headers, body), (h_status, h_headers, h_body) = _get_and_head(server.port, path)
    assert status == h_status == b"HTTP/1.1 200 OK"
    assert h_headers == headers and ("content-length", str(len(body))) in h_headers
    assert body and h_body == b""


def test_head_of_usage_needs_the_key_like_get(server) -> None:
    key = server.create_key()["key"]
    (status, headers, body), (h_status, h_headers, h_body) = _get_and_head(
        server.port, "/v1/usage", b"Authorization: Bearer %b\r\n" % key.encode())
    assert status == h_status == b"HTTP/1.1 200 OK"
    assert h_headers == headers and ("content-length", str(len(body))) in h_headers
    assert b'"plan":"free"' in body and h_body == b""
    (status, headers, body), (h_status, h_headers, h_body) = _get_and_head(server.port,
                                                                           "/v1/usage")
    assert status == h_status == b"HTTP/1.1 401 Unauthorized"
    assert ("www-authenticate", 'Bearer realm="decido"') in h_headers
    assert h_headers == headers and b"missing_credentials" in body and h_body == b""


@pytest.mark.parametrize(("path", "status"), [("/v1/nothing", b"HTTP/1.1 404 Not Found"),
                                              ("/v1/decide", b"HTTP/1.1 405 Method Not Allowed")])
def test_head_of_an_error_is_the_error_without_a_body(server, path: str, status: bytes) -> None:
    (g_status, headers, body), (h_status, h_headers, h_body) = _get_and_head(server.port, path)
    assert g_status == h_status == status
    assert h_headers == headers and ("content-type", "application/problem+json") in headers
    assert body and h_body == b""


def test_head_on_a_kept_alive_connection_is_followed_by_the_next_answer(server) -> None:
    """No body after a HEAD answer: the next answer on the connection starts right after it."""
    raw = _exchange(server.port, b"HEAD /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
                                 b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    first, _, rest = raw.partition(b"\r\n\r\n")
    assert first.startswith(b"HTTP/1.1 200 OK") and rest.startswith(b"HTTP/1.1 200 OK")
    engines = f'"engines":{len(decido.engines())}}}'.encode()
    assert b'"status"' not in first and rest.endswith(engines)


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
    from decido_service.http.endpoint import access_line

    line = access_line(method, path, status, ms, rid, key_id)
    assert b"\n" not in line
    parsed = orjson.loads(line)
    assert parsed["method"] == method and parsed["path"] == path
    assert parsed["status"] == status and parsed["request_id"] == rid
    assert parsed["key_id"] == key_id
    assert list(parsed)[0] == "time"
    assert datetime.strptime(parsed["time"], "%Y-%m-%dT%H:%M:%S.%fZ")  # UTC, milliseconds
    assert abs(datetime.strptime(parsed["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=timezone.utc).timestamp() - time.time()) < 3600
    if ms is None or ms != ms:
        assert parsed["ms"] is None
    else:
        assert parsed["ms"] == pytest.approx(round(ms, 3), abs=1e-9)
