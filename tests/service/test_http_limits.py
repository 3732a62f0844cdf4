"""The request head's limits on the wire: 414 ``uri_too_long`` for a long request target,
431 ``headers_too_large`` for a large header block (with the Bearer challenge when the
credentials were the cause), the same for a head over Sanic's buffer; raw sockets throughout."""

from __future__ import annotations

import socket

import orjson
import pytest
from sanic.exceptions import PayloadTooLarge, RequestTimeout

from decido_service.http.heads import HEAD_BUFFER, MAX_HEADER_BLOCK, MAX_TARGET
from decido_service.http.problems import as_api_error

CHALLENGE = 'Bearer realm="decido"'


def _send(port: int, head: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send one request head; (status, headers, body) of the answer, read to the close."""
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(head)
            while chunk := s.recv(65536):
                received += chunk
        except ConnectionResetError:  # the server may close before reading all of it
            pass
    top, _, body = received.partition(b"\r\n\r\n")
    status, *lines = top.decode().split("\r\n")
    headers = {n.lower(): v for n, _, v in (line.partition(": ") for line in lines)}
    return int(status.split()[1]), headers, body


def _request(target: str, *headers: str) -> bytes:
    lines = [f"GET {target} HTTP/1.1", "Host: x", *headers, "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _problem(body: bytes, code: str, status: int) -> dict:
    doc = orjson.loads(body)
    assert doc["code"] == code and doc["status"] == status, doc
    return doc


def test_the_limits_fit_in_sanics_buffer() -> None:
    """A head over the buffer breaks at least one limit (so 431 or 414 is never wrong for
    a request that fits both)."""
    longest_fitting = len("OPTIONS ") + MAX_TARGET + len(" HTTP/1.1\r\n") + MAX_HEADER_BLOCK
    assert longest_fitting < HEAD_BUFFER


@pytest.mark.parametrize("path", ["/v1/health", "/v1/no-such-route"])
def test_a_long_request_target_is_414(server, path: str) -> None:
    target = f"{path}?q=" + "a" * MAX_TARGET
    status, headers, body = _send(server.port, _request(target))
    assert status == 414 and headers["content-type"] == "application/problem+json"
    _problem(body, "uri_too_long", 414)
    assert "x-request-id" in headers and "www-authenticate" not in headers


def test_a_target_at_the_limit_is_served(server) -> None:
    target = "/v1/health?q=" + "a" * (MAX_TARGET - len("/v1/health?q="))
    status, _, body = _send(server.port, _request(target))
    assert status == 200 and b'"status":"ok"' in body


def test_a_large_header_block_is_431_without_a_challenge(server) -> None:
    status, headers, body = _send(server.port, _request("/v1/health",
                                                        "X-Pad: " + "p" * MAX_HEADER_BLOCK))
    assert status == 431 and headers["content-type"] == "application/problem+json"
    _problem(body, "headers_too_large", 431)
    assert "www-authenticate" not in headers


@pytest.mark.parametrize("credential", ["Authorization: Bearer dk_", "X-API-Key: dk_"])
def test_oversized_credentials_are_431_with_the_challenge(server, credential: str) -> None:
    status, headers, body = _send(server.port, _request(
        "/v1/usage", credential + "k" * MAX_HEADER_BLOCK))
    assert status == 431 and headers["www-authenticate"] == CHALLENGE
    _problem(body, "headers_too_large", 431)


def test_credentials_that_are_not_the_cause_get_no_challenge(server) -> None:
    status, headers, _ = _send(server.port, _request(
        "/v1/usage", "Authorization: Bearer dk_short", "X-Pad: " + "p" * MAX_HEADER_BLOCK))
    assert status == 431 and "www-authenticate" not in headers


@pytest.mark.parametrize("size", [HEAD_BUFFER, 100_000])
def test_a_target_over_sanics_buffer_is_414(server, size: int) -> None:
    """A 100 KB query string overflows Sanic's head buffer; it is still a long target."""
    status, headers, body = _send(server.port, _request("/v1/health?q=" + "a" * size))
    assert status == 414 and headers["content-type"] == "application/problem+json"
    _problem(body, "uri_too_long", 414)
    assert "www-authenticate" not in headers


def test_header_fields_over_sanics_buffer_are_431(server) -> None:
    status, headers, body = _send(server.port, _request(
        "/v1/health", "X-Pad: " + "a" * HEAD_BUFFER))
    assert status == 431 and headers["content-type"] == "application/problem+json"
    _problem(body, "headers_too_large", 431)
    assert "www-authenticate" not in headers


@pytest.mark.parametrize("credential", ["Authorization: Bearer dk_", "X-API-Key: dk_"])
@pytest.mark.parametrize("size", [HEAD_BUFFER, 100_000])
def test_credentials_over_sanics_buffer_are_431_with_the_challenge(
        server, credential: str, size: int) -> None:
    status, headers, body = _send(server.port, _request("/v1/usage", credential + "k" * size))
    assert status == 431 and headers["www-authenticate"] == CHALLENGE
    _problem(body, "headers_too_large", 431)


@pytest.mark.parametrize(("exc", "code", "status"), [
    (PayloadTooLarge("Request header exceeds the size limit"), "headers_too_large", 431),
    (PayloadTooLarge("Request body exceeds the size limit"), "body_too_large", 413),
    (RequestTimeout("Request Timeout"), "request_timeout", 408),
])
def test_sanics_exceptions_map_to_codes(exc: Exception, code: str, status: int) -> None:
    error = as_api_error(exc)
    assert (error.code, error.status_code) == (code, status)
