"""Read timeouts and the per-address connection cap on a live server (loopback only).

The server here has short timeouts (1 s for a head, 1 s for a body, 2 s idle) and a cap of
:data:`CAP` connections per address. Linux routes all of 127.0.0.0/8 to the loopback
interface, so a client can come from "another address" by binding 127.0.0.x.
"""

from __future__ import annotations

import selectors
import socket
import sys
import time
from pathlib import Path

import pytest
from conftest import running

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="binds 127.0.0.x source addresses (Linux loopback)")

CAP = 50
HEADER_TIMEOUT, BODY_TIMEOUT, KEEP_ALIVE_TIMEOUT = 1, 1, 2
#: Sanic checks its timeouts every half of the shortest one; a little more for a loaded VM
SLACK = 2.0
HEALTH = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
PARTIAL = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: "


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory):
    """One worker (so the per-worker cap is exact) with short timeouts."""
    env = {"DECIDO_HEADER_TIMEOUT": str(HEADER_TIMEOUT), "DECIDO_BODY_TIMEOUT": str(BODY_TIMEOUT),
           "DECIDO_KEEP_ALIVE_TIMEOUT": str(KEEP_ALIVE_TIMEOUT),
           "DECIDO_CONNECTIONS_PER_ADDRESS": str(CAP)}
    with running(Path(tmp_path_factory.mktemp("strict")), env, workers=1) as srv:
        yield srv


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10,
                                    source_address=(source, 0))


def _read_all(s: socket.socket) -> bytes:
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    return out


def _health(port: int, source: str) -> tuple[bytes, float]:
    """The status line of a health check from ``source`` and how long it took."""
    start = time.monotonic()
    with _connect(port, source) as s:
        s.sendall(HEALTH)
        answer = _read_all(s)
    return answer.partition(b"\r\n")[0], time.monotonic() - start


def _closed_within(socks: list[socket.socket], seconds: float) -> tuple[int, list[bytes]]:
    """How many of ``socks`` the server closed within ``seconds``, and what it sent each."""
    sel = selectors.DefaultSelector()
    received: dict[int, list[bytes]] = {}
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, received.setdefault(s.fileno(), []))
    closed, deadline = 0, time.monotonic() + seconds
    while closed < len(socks) and (left := deadline - time.monotonic()) > 0:
        for key, _ in sel.select(left):
            try:
                chunk = key.fileobj.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if chunk:
                key.data.append(chunk)
                continue
            sel.unregister(key.fileobj)
            closed += 1
    sel.close()
    return closed, [b"".join(parts) for parts in received.values()]


def test_a_stalled_head_is_answered_408_and_closed(strict) -> None:
    with _connect(strict.port) as s:
        s.sendall(PARTIAL)
        start = time.monotonic()
        answer = _read_all(s)
        took = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer[:100]
    assert b'"code":"request_timeout"' in answer
    assert HEADER_TIMEOUT <= took + 0.1 and took < HEADER_TIMEOUT + SLACK


def test_a_stalled_body_is_answered_408(strict) -> None:
    with _connect(strict.port) as s:
        s.sendall(b"POST /v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"label\":")
        start = time.monotonic()
        s.settimeout(BODY_TIMEOUT + SLACK + 5)
        head = s.recv(65536)
        took = time.monotonic() - start
    assert head.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), head[:100]
    assert b'"code":"request_timeout"' in head
    assert BODY_TIMEOUT <= took + 0.1 and took < BODY_TIMEOUT + SLACK


def test_an_idle_connection_is_closed(strict) -> None:
    with _connect(strict.port) as s:
        start = time.monotonic()
        assert _read_all(s) == b""
        took = time.monotonic() - start
    assert KEEP_ALIVE_TIMEOUT <= took + 0.1 and took < KEEP_ALIVE_TIMEOUT + SLACK


def test_connections_beyond_the_cap_are_answered_503_and_closed(strict) -> None:
    held = [_connect(strict.port, "127.0.0.2") for _ in range(CAP)]
    try:
        for s in held:
            s.sendall(PARTIAL)
        time.sleep(0.3)  # the server has counted them
        with _connect(strict.port, "127.0.0.2") as extra:
            start = time.monotonic()
            extra.sendall(HEALTH)
            answer = _read_all(extra)  # a minimal 503, then the server closes
            assert time.monotonic() - start < 1.0 + SLACK
        head, _, body = answer.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        assert lines[0] == b"HTTP/1.1 503 Service Unavailable", answer
        assert b"Retry-After: 1" in lines and b"Connection: close" in lines
        assert body == b"too many connections from this address; retry shortly\n"
        with _connect(strict.port, "127.0.0.2") as silent:  # one that sends nothing
            assert _read_all(silent).startswith(b"HTTP/1.1 503 ")
        status, _ = _health(strict.port, "127.0.0.3")  # another address is not affected
        assert status == b"HTTP/1.1 200 OK"
    finally:
        for s in held:
            s.close()
    time.sleep(0.3)  # closed connections are uncounted
    status, _ = _health(strict.port, "127.0.0.2")
    assert status == b"HTTP/1.1 200 OK"


def test_half_sent_requests_do_not_starve_new_clients(strict) -> None:
    """1,500 half-sent requests (30 addresses, each within the cap): a new client is
    answered at once, and every half-open connection is closed within the head timeout."""
    socks: list[socket.socket] = []
    try:
        for i in range(1500):
            s = _connect(strict.port, f"127.0.1.{i % 30 + 1}")
            s.sendall(PARTIAL)
            socks.append(s)
        sent = time.monotonic()
        status, took = _health(strict.port, "127.0.2.1")
        assert status == b"HTTP/1.1 200 OK" and took < 1.0, took
        closed, answers = _closed_within(socks, HEADER_TIMEOUT + SLACK + 2)
        assert closed == len(socks), (closed, time.monotonic() - sent)
        assert all(a == b"" or a.startswith(b"HTTP/1.1 408 ") for a in answers)
    finally:
        for s in socks:
            s.close()


# ---------------------------------------------------------------- settings and the counter


def test_the_settings_read_the_environment() -> None:
    from decido_service.config import Settings

    s = Settings.from_env({"DECIDO_HEADER_TIMEOUT": "3", "DECIDO_BODY_TIMEOUT": "7",
                           "DECIDO_KEEP_ALIVE_TIMEOUT": "4",
                           "DECIDO_CONNECTIONS_PER_ADDRESS": "0"})
    assert (s.header_timeout, s.body_timeout, s.keep_alive_timeout,
            s.connections_per_address) == (3, 7, 4, 0)
    d = Settings.from_env({})
    assert (d.header_timeout, d.body_timeout, d.keep_alive_timeout,
            d.connections_per_address) == (5, 10, 10, 64)


@pytest.mark.parametrize(("var", "value"), [("DECIDO_HEADER_TIMEOUT", "0"),
                                            ("DECIDO_BODY_TIMEOUT", "-1"),
                                            ("DECIDO_KEEP_ALIVE_TIMEOUT", "0"),
                                            ("DECIDO_CONNECTIONS_PER_ADDRESS", "-1")])
def test_bad_settings_are_refused(var: str, value: str) -> None:
    from decido_service.config import Settings

    with pytest.raises(ValueError, match="must be"):
        Settings.from_env({var: value})


def test_the_cap_counts_per_address_and_forgets_closed_connections() -> None:
    from decido_service.http.connections import ConnectionCap

    cap = ConnectionCap(2)
    assert cap.admit("10.0.0.1") and cap.admit("10.0.0.1") and cap.admit("::1")
    assert not cap.admit("10.0.0.1")  # refused, not counted
    assert cap.open == {"10.0.0.1": 2, "::1": 1}
    cap.release("10.0.0.1")
    cap.release("::1")
    assert cap.open == {"10.0.0.1": 1}
    assert cap.admit("10.0.0.1")
    assert cap.open == {"10.0.0.1": 2}
