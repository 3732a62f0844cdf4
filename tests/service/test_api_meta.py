"""Unauthenticated endpoints, request ids, rate-limit headers and the generic errors."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import time
from typing import Any

import pytest
from conftest import LiveServer

import decido

RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")
URL = re.compile(rb"https?://[^\s\"'`)<>\\]+")


def assert_common_headers(resp, rate: bool | None = None) -> None:
    """``X-Request-Id`` always; the ``X-RateLimit-*`` headers all or none (a response
    carries them when its request made a store call: it had a valid key, or it created a
    key). ``rate`` True/False: they must be there / must not."""
    assert resp.header("x-request-id"), f"x-request-id missing ({resp.status})"
    present = [bool(resp.header(name)) for name in RATE_HEADERS]
    assert all(present) or not any(present), (resp.status, resp.headers)
    if rate is not None:
        assert all(present) is rate, (resp.status, resp.headers)


def assert_problem(resp, status: int, code: str) -> dict:
    assert resp.status == status, resp.body
    assert resp.header("content-type") == "application/problem+json"
    body = resp.json()
    assert body["status"] == status and body["code"] == code
    assert body["type"] == f"https://decido.dev/problems/{code}"
    assert body["request_id"] == resp.header("x-request-id")
    assert {"title", "detail", "instance"} <= set(body)
    assert_common_headers(resp)
    return body


def test_health(server: LiveServer) -> None:
    r = server.request("GET", "/v1/health")
    assert r.status == 200
    assert r.json() == {"status": "ok", "version": "0.1.0", "store": "ok",
                        "engines": len(decido.engines())}
    assert_common_headers(r, rate=False)  # public endpoints count nothing


def _health_within(server: LiveServer, status: int, seconds: float = 5.0) -> Any:
    """The first health answer with ``status`` (readiness is re-checked once a second)."""
    deadline = time.monotonic() + seconds
    while True:
        r = server.request("GET", "/v1/health")
        if r.status == status or time.monotonic() > deadline:
            return r
        time.sleep(0.05)


def test_health_503_when_the_store_is_not_ready(server: LiveServer) -> None:
    # a schema version this code does not know makes the store "not ready" (ping false)
    with sqlite3.connect(server.db) as conn:
        conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (999, 'x')")
    try:
        r = _health_within(server, 503)
        assert r.status == 503
        assert r.json()["store"] == "unavailable" and r.json()["status"] == "unavailable"
        assert r.header("retry-after") == "1"  # as every other 503
        assert_common_headers(r)
    finally:
        with sqlite3.connect(server.db) as conn:
            conn.execute("DELETE FROM schema_version WHERE version = 999")
    # every worker sees the store ready again once its last check is a second old
    assert _health_within(server, 200).status == 200
    time.sleep(1.1)
    assert all(server.request("GET", "/v1/health").status == 200 for _ in range(4))


def test_a_fresh_node_is_ready_for_callers_of_its_first_ping() -> None:
    """A health flood on a fresh server got 503 from the requests that arrived while the
    first readiness ping was out (they read the answer "not yet known" as "not ready")."""
    import asyncio

    from decido_service.admission import Readiness

    class SlowStore:
        pings = 0

        async def ping(self) -> bool:
            self.pings += 1
            await asyncio.sleep(0.05)
            return True

    async def flood() -> list[bool]:
        store = SlowStore()
        readiness = Readiness(store)  # a store that only pings
        answers = await asyncio.gather(*(readiness.ok() for _ in range(20)))
        assert store.pings == 1  # one ping for all of them
        return answers

    assert asyncio.run(flood()) == [True] * 20


def test_engines(server: LiveServer) -> None:
    r = server.request("GET", "/v1/engines")
    assert r.status == 200
    body = r.json()
    assert body["default"] == "dss"
    assert [e["id"] for e in body["engines"]] == [e["id"] for e in decido.engines()]
    for engine in body["engines"]:
        assert {"id", "name", "summary", "kind", "max_dims", "options"} <= set(engine)
    assert_common_headers(r)


def test_request_id_echoed_when_sane(server: LiveServer) -> None:
    assert server.request("GET", "/v1/health", headers={"X-Request-Id": "abc-123.x_y"}
                          ).header("x-request-id") == "abc-123.x_y"
    made = server.request("GET", "/v1/health", headers={"X-Request-Id": "bad id<script>"}
                          ).header("x-request-id")
    assert re.fullmatch(r"[0-9a-f]{32}", made)


def test_404_and_405_are_problems_with_headers(server: LiveServer) -> None:
    body = assert_problem(server.request("GET", "/v1/nope"), 404, "not_found")
    assert body["instance"] == "/v1/nope"
    assert_problem(server.request("GET", "/nothing/here"), 404, "not_found")
    r = server.request("DELETE", "/v1/health")
    assert_problem(r, 405, "method_not_allowed")
    assert "GET" in r.header("allow")
    assert_problem(server.request("GET", "/v1/decide"), 405, "method_not_allowed")


def test_413_body_too_large(server: LiveServer, free_key: str) -> None:
    """Refused from the head's Content-Length, before any of the body is read: the head
    alone gets the answer (sending the body too would race the server's close)."""
    head = ("POST /v1/decide HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"X-API-Key: {free_key}\r\nContent-Length: {1024 * 1024 + 10}\r\n\r\n")
    received = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head.encode())
        while chunk := sock.recv(65536):
            received += chunk
    top, _, body = received.partition(b"\r\n\r\n")
    assert top.startswith(b"HTTP/1.1 413 ")
    problem = json.loads(body)
    assert problem["status"] == 413 and problem["code"] == "body_too_large"


#: the studies' paths (docs/studies.md, "Over HTTP")
STUDY_PATHS = {"/v1/studies", "/v1/studies/{study_id}", "/v1/studies/{study_id}/complete",
               "/v1/studies/{study_id}/events",
               "/v1/studies/{study_id}/stop", "/v1/studies/{study_id}/suggest",
               "/v1/studies/{study_id}/trials", "/v1/studies/{study_id}/trials/{number}",
               *(f"/v1/studies/{{study_id}}/trials/{{number}}/{verb}"
                 for verb in ("abandon", "complete", "heartbeat", "report"))}


def test_openapi_document(server: LiveServer) -> None:
    r = server.request("GET", "/v1/openapi.json")
    assert r.status == 200
    doc = r.json()
    assert doc["openapi"].startswith("3.1")
    assert set(doc["paths"]) == {"/v1/health", "/v1/engines", "/v1/keys", "/v1/usage",
                                 "/v1/decide", "/v1/batch", "/v1/optimize", "/v1/runs",
                                 "/v1/runs/{run_id}", "/v1/runs/{run_id}/cancel",
                                 "/v1/runs/{run_id}/events",
                                 "/v1/runs/{run_id}/trace", "/v1/decisions",
                                 "/v1/decisions/{decision_id}", "/v1/openapi.json", "/v1/docs",
                                 "/v1/webhooks", "/v1/webhooks/{webhook_id}",
                                 "/v1/webhooks/{webhook_id}/rotate",
                                 "/v1/webhooks/{webhook_id}/test",
                                 "/v1/webhooks/{webhook_id}/deliveries",
                                 "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/resend",
                                 "/v1/runs/{run_id}/front", *STUDY_PATHS}
    assert_common_headers(r)


# The URL strings inside the vendored Swagger UI bundle. None is loaded by the page: XML
# namespace identifiers, JSON Schema / OpenAPI dialect ids, links inside error messages and
# comments, the linkify data of social sites, and the online validator (switched off by
# docs-init.js: validatorUrl null). The page's CSP ('self' only) forbids any other origin.
# A new asset version with a new URL fails here and must be reviewed.
ALLOWED_ASSET_URL = re.compile(
    rb"https?://(www\.w3\.org/|json-schema\.org/|spec\.openapis\.org/|datatracker\.ietf\.org/"
    rb"|www\.rfc-editor\.org/|github\.com/|validator\.swagger\.io/|swagger\.io$"
    rb"|(www\.)?(tiktok|facebook|twitter|instagram|soundcloud)\.com/|example\.com/|base"
    rb"|vladimirgorej\.com$|spdx\.org/|redux\.js\.org/|reactjs\.org/|fb\.me/"
    rb"|\xec\x8b\xa4\xeb\xa1\x80\.com/)")  # an IDN example domain (UTF-8 of "example" in Korean)


def test_docs_page_has_no_external_urls(server: LiveServer) -> None:
    page = server.request("GET", "/v1/docs")
    assert page.status == 200 and page.header("content-type").startswith("text/html")
    assert URL.findall(page.body) == []
    csp = page.header("content-security-policy")
    assert "default-src 'self'" in csp and "http" not in csp
    assets = [a for a in re.findall(rb'(?:src|href)="([^"]+)"', page.body)
              if a != b"data:,"]  # the empty favicon: no request at all
    assert sorted(assets) == [b"/v1/docs/docs-init.js", b"/v1/docs/swagger-ui-bundle.js",
                              b"/v1/docs/swagger-ui.css"]
    for asset in assets:
        r = server.request("GET", asset.decode())
        assert r.status == 200 and len(r.body) > 100
        assert "http" not in r.header("content-security-policy")
        unexpected = {u for u in URL.findall(r.body) if not ALLOWED_ASSET_URL.match(u)}
        assert unexpected == set(), asset
    init = server.request("GET", "/v1/docs/docs-init.js").body
    assert b"validatorUrl: null" in init and b'url: "/v1/openapi.json"' in init
    for name in ("LICENSE", "NOTICE", "swagger-ui-bundle.js.LICENSE.txt"):
        assert server.request("GET", f"/v1/docs/{name}").status == 200
    assert_problem(server.request("GET", "/v1/docs/../app.py"), 404, "not_found")
    assert_problem(server.request("GET", "/v1/docs/index.html"), 404, "not_found")


@pytest.mark.parametrize("path", ["/v1/health", "/v1/engines", "/v1/openapi.json",
                                  "/v1/docs"])
def test_public_endpoints_are_never_counted_or_refused(server: LiveServer, path: str) -> None:
    # no per-address allowance: nobody can make them refuse another client
    for _ in range(30):
        r = server.request("GET", path)
        assert r.status == 200
        assert_common_headers(r, rate=False)


def test_serve_prints_docs_and_how_to_get_a_key(server: LiveServer) -> None:
    log = server.log.read_text()
    base = f"http://127.0.0.1:{server.port}"
    assert f"{base}/v1/docs" in log
    assert f"curl -X POST {base}/v1/keys" in log


def test_access_log_line_per_request(server: LiveServer, free_key: str) -> None:
    rid = f"log-probe-{time.monotonic_ns()}"
    r = server.request("GET", "/v1/usage", headers={"X-Request-Id": rid,
                                                     "Authorization": f"Bearer {free_key}"})
    assert r.status == 200
    deadline = time.monotonic() + 5
    lines: list[dict[str, Any]] = []
    while not lines and time.monotonic() < deadline:
        time.sleep(0.05)
        lines = [json.loads(line) for line in server.log.read_text().splitlines()
                 if rid in line]
    assert len(lines) == 1, "one JSON access log line per request, written within 50 ms"
    line = lines[0]
    assert line["method"] == "GET" and line["path"] == "/v1/usage" and line["status"] == 200
    assert line["request_id"] == rid and line["key_id"] == r.json()["key"]["id"]
    assert line["ms"] >= 0 and set(line) == {"time", "method", "path", "status", "ms",
                                             "request_id", "key_id"}
    assert line["time"].endswith("Z") and r.header("x-request-id") == rid
    generated = server.request("GET", "/v1/health").header("x-request-id")
    assert generated and len(generated) == 32  # made when the request has none
    assert free_key not in server.log.read_text()


def test_a_fresh_server_answers_a_health_flood_with_200(tmp_path) -> None:
    """A health flood on a fresh server got 503 for 24 of its first 5,000 requests: those
    that reached a worker while its first readiness ping was out. Flooded as soon as both
    workers are up (nothing asked for health before), every answer is 200."""
    import asyncio
    import contextlib
    import subprocess

    from conftest import START_TIMEOUT, decido_command, free_port

    server = LiveServer(tmp_path, workers=2)
    server.port = free_port()
    cmd = [*decido_command(), "serve", "--workers", "2", "--host", "127.0.0.1", "--port",
           str(server.port), "--db", str(server.db)]
    with open(server.log, "ab") as log:
        server.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                       env=server.environment(), start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while server.log.read_text().count("Worker ready") < 2:
            assert server.proc.poll() is None and time.monotonic() < deadline, \
                server.log.read_text()
            time.sleep(0.02)

        async def connection(statuses: list[int]) -> None:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            with contextlib.closing(writer):
                for _ in range(50):
                    writer.write(b"GET /v1/health HTTP/1.1\r\nHost: t\r\n\r\n")
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = re.search(rb"(?i)content-length: *(\d+)", head)
                    await reader.readexactly(int(length[1]) if length else 0)
                    statuses.append(int(head[9:12]))

        async def flood() -> list[int]:
            statuses: list[int] = []
            await asyncio.gather(*(connection(statuses) for _ in range(40)))
            return statuses

        statuses = asyncio.run(flood())
        assert len(statuses) == 2000 and set(statuses) == {200}, sorted(set(statuses))
    finally:
        server.stop()
