"""Keys over HTTP: creation, both header styles, every 401, secrets never at rest or in logs."""

from __future__ import annotations

import re
import subprocess
import time

import pytest
from conftest import LiveServer, auth, decido_command
from test_api_meta import assert_common_headers, assert_problem

SECRET = re.compile(r"dk_[A-Za-z0-9_-]{43}")


def test_create_key_over_http(server: LiveServer) -> None:
    r = server.request("POST", "/v1/keys", {"label": "from a test"})
    assert r.status == 201, r.body
    body = r.json()
    assert SECRET.fullmatch(body["key"])
    assert body["plan"] == "free" and body["tier"] == "free" and body["label"] == "from a test"
    assert body["prefix"] == body["key"][:11]
    assert r.header("cache-control") == "no-store"
    assert r.header("x-ratelimit-limit") == "5"  # keys.hour
    assert server.request("GET", "/v1/usage", headers=auth(body["key"])).status == 200


@pytest.mark.parametrize("style", ["bearer", "x-api-key"])
def test_both_header_styles(server: LiveServer, free_key: str, style: str) -> None:
    r = server.request("GET", "/v1/usage", headers=auth(free_key, style))
    assert r.status == 200
    assert_common_headers(r)
    assert r.header("x-ratelimit-limit") == "10"  # the free plan's decide.minute


def test_same_key_in_both_headers_is_fine(server: LiveServer, free_key: str) -> None:
    headers = {**auth(free_key, "bearer"), **auth(free_key, "x-api-key")}
    assert server.request("GET", "/v1/usage", headers=headers).status == 200


def test_conflicting_credentials(server: LiveServer, free_key: str) -> None:
    other = server.create_key()["key"]
    headers = {**auth(free_key, "bearer"), **auth(other, "x-api-key")}
    r = server.request("GET", "/v1/usage", headers=headers)
    assert_problem(r, 401, "conflicting_credentials")
    assert r.header("www-authenticate").startswith("Bearer")


@pytest.mark.parametrize(("headers", "code"), [
    ({}, "missing_credentials"),
    ({"Authorization": "Basic dXNlcjpwYXNz"}, "invalid_credentials"),
    ({"Authorization": "Bearer"}, "invalid_credentials"),
    ({"Authorization": "Bearer dk_" + "A" * 43}, "invalid_credentials"),
    ({"X-API-Key": "not-a-key"}, "invalid_credentials"),
])
def test_401s(server: LiveServer, headers: dict, code: str) -> None:
    for method, path in (("GET", "/v1/usage"), ("POST", "/v1/decide"),
                         ("POST", "/v1/batch"), ("POST", "/v1/optimize")):
        r = server.request(method, path, {} if method == "POST" else None, headers=headers)
        body = assert_problem(r, 401, code)
        assert r.header("x-ratelimit-limit") is None, body  # no key: nothing was counted


def test_revoked_key(server: LiveServer) -> None:
    made = server.create_key(label="to revoke")
    assert server.request("GET", "/v1/usage", headers=auth(made["key"])).status == 200
    subprocess.run([*decido_command(), "keys", "revoke", made["id"], "--db",
                    server.db_url or str(server.db)], check=True, capture_output=True,
                   timeout=60, env=server.environment())
    r = server.request("GET", "/v1/usage", headers=auth(made["key"], "x-api-key"))
    assert_problem(r, 401, "revoked_key")


def test_no_plaintext_key_at_rest_or_in_logs(server: LiveServer) -> None:
    made = server.request("POST", "/v1/keys").json()["key"]
    cli = server.create_key()["key"]
    for key in (made, cli):
        assert server.request("GET", "/v1/usage", headers=auth(key)).status == 200
        server.request("POST", "/v1/decide", {"x": 1}, headers=auth(key, "x-api-key"))
    blobs = b"".join(p.read_bytes() for p in server.db.parent.glob("decido.db*"))
    time.sleep(0.2)  # access log lines are written within 50 ms
    log = server.log.read_bytes()
    for key in (made, cli):
        assert key.encode() not in blobs
        assert key.encode() not in log
        assert key[3:].encode() not in blobs  # not even without its prefix
    assert b'"key_id"' in log  # the JSON access log is there, with ids only
