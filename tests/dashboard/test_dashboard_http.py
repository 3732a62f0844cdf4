"""The dashboard over plain HTTP: sessions, cookies, CSRF, headers, bad input (no browser).

A forged, expired, malformed or ended session always leads to the sign-in page (303),
never a 500; forms without their CSRF token, or from another origin, are refused (403);
the key never appears in a response or in the server's log.
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import http.client
import re
import sqlite3
import time
from typing import Any
from urllib.parse import urlencode

import orjson
import pytest
from browser_support import auth, live

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def cookie_of(response: Any, name: str) -> str | None:
    """The value a response sets for cookie ``name`` (http.client joins Set-Cookie)."""
    header = response.header("set-cookie") or ""
    found = re.search(rf"{name}=([^;,]*)", header)
    return found.group(1) if found else None


def sign_in(server: Any, key: str) -> str:
    """Sign in through the form; the session cookie's value."""
    form = server.request("GET", "/dashboard/sign-in")
    nonce = cookie_of(form, "decido_signin")
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', form.body.decode()).group(1)
    done = server.request("POST", "/dashboard/sign-in",
                          raw=urlencode({"csrf": token, "key": key}).encode(),
                          headers={**FORM, "Cookie": f"decido_signin={nonce}"})
    assert done.status == 303 and done.header("location") == "/dashboard", done.body
    assert key not in done.body.decode()
    session = cookie_of(done, "decido_session")
    assert session
    return session


def get(server: Any, path: str, session: str | None) -> Any:
    headers = {"Cookie": f"decido_session={session}"} if session else {}
    return server.request("GET", path, headers=headers)


def csrf_of(html: bytes) -> str:
    return re.search(r'name="csrf" value="([0-9a-f]+)"', html.decode()).group(1)


def test_pages_carry_a_strict_policy_and_no_key(server: Any, key: str) -> None:
    session = sign_in(server, key)
    for path in ("/dashboard", "/dashboard/runs", "/dashboard/keys", "/dashboard/decide",
                 "/dashboard/engines", "/dashboard/compare", "/dashboard/decisions",
                 "/dashboard/runs/new", "/dashboard/studies"):
        page = get(server, path, session)
        assert page.status == 200, (path, page.body[:300])
        csp = page.header("content-security-policy")
        assert "default-src 'self'" in csp and "script-src 'self'" in csp
        assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert page.header("cache-control") == "no-store"
        assert page.header("x-content-type-options") == "nosniff"
        assert key not in page.body.decode()
        assert "<script>" not in page.body.decode()  # no inline script: files only
    assert key not in server.log.read_text()  # nor in any log line


def test_the_session_cookie(server: Any, key: str) -> None:
    form = server.request("GET", "/dashboard/sign-in")
    nonce = cookie_of(form, "decido_signin")
    done = server.request("POST", "/dashboard/sign-in",
                          raw=urlencode({"csrf": csrf_of(form.body), "key": key}).encode(),
                          headers={**FORM, "Cookie": f"decido_signin={nonce}"})
    header = done.header("set-cookie")
    assert "HttpOnly" in header and "SameSite=Strict" in header
    assert "Path=/dashboard" in header and "Max-Age=28800" in header
    assert "Secure" not in header  # plain HTTP, DECIDO_TLS unset


def test_every_worker_knows_the_session(server: Any, key: str) -> None:
    """Two workers, one secret (made once, kept in the store): every request on a new
    connection (either worker) opens the page."""
    session = sign_in(server, key)
    assert all(get(server, "/dashboard/runs", session).status == 200 for _ in range(16))


@pytest.mark.parametrize("cookie", [
    "x", "a.b.c", "..", "a.1.b", "0" * 32 + ".9999999999." + "0" * 64, "é.ü.ß",
    "%00%ff.1.2", "a" * 5000,
])
def test_a_forged_cookie_leads_to_sign_in(server: Any, cookie: str) -> None:
    page = server.request("GET", "/dashboard/runs",
                          headers={"Cookie": f"decido_session={cookie}"})
    assert page.status == 303 and page.header("location") == "/dashboard/sign-in"
    data = server.request("GET", "/dashboard/runs/live.json",
                          headers={"Cookie": f"decido_session={cookie}"})
    assert data.status == 401 and data.json()["code"] == "missing_credentials"


def test_an_expired_cookie_leads_to_sign_in(server: Any, key: str) -> None:
    """A cookie with a valid MAC (made with the store's secret) whose time is up."""
    session_id, _, _ = sign_in(server, key).split(".")
    with sqlite3.connect(server.db) as db:
        secret = db.execute("SELECT value FROM service_secrets WHERE name = "
                            "'dashboard_session'").fetchone()[0].encode()
    expires = int(time.time()) - 1
    mac = hmac.new(secret, f"session:{session_id}.{expires}".encode(), hashlib.sha256)
    page = get(server, "/dashboard", f"{session_id}.{expires}.{mac.hexdigest()}")
    assert page.status == 303 and page.header("location") == "/dashboard/sign-in"


def test_forms_need_their_token_and_this_origin(server: Any, key: str) -> None:
    session = sign_in(server, key)
    token = csrf_of(get(server, "/dashboard/keys", session).body)
    cookie = {"Cookie": f"decido_session={session}"}
    for form, extra in [({}, {}), ({"csrf": "0" * 64}, {}),
                        ({"csrf": token}, {"Origin": "http://evil.example"})]:
        refused = server.request("POST", "/dashboard/keys", raw=urlencode(form).encode(),
                                 headers={**FORM, **cookie, **extra})
        assert refused.status == 403 and b"Cross-site request refused" in refused.body
    made = server.request("POST", "/dashboard/keys", raw=urlencode({"csrf": token}).encode(),
                          headers={**FORM, **cookie,
                                   "Origin": f"http://127.0.0.1:{server.port}"})
    assert made.status == 200 and b'id="new-secret"' in made.body
    assert made.header("cache-control") == "no-store"


def test_sign_in_refusals_never_echo_the_key(server: Any, key: str) -> None:
    form = server.request("GET", "/dashboard/sign-in")
    nonce = cookie_of(form, "decido_signin")
    wrong = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    for secret, message in [(wrong, b"not a key of this service"),
                            ("not-a-key", b"not a key of this service")]:
        page = server.request("POST", "/dashboard/sign-in",
                              raw=urlencode({"csrf": csrf_of(form.body), "key": secret}).encode(),
                              headers={**FORM, "Cookie": f"decido_signin={nonce}"})
        assert page.status == 200 and message in page.body and secret.encode() not in page.body
        assert cookie_of(page, "decido_session") is None
    stale = server.request("POST", "/dashboard/sign-in",
                           raw=urlencode({"csrf": "0" * 64, "key": key}).encode(), headers=FORM)
    assert b"sign-in form is stale" in stale.body and cookie_of(stale, "decido_session") is None


def test_other_keys_runs_and_bad_parameters(server: Any, key: str) -> None:
    other = server.create_key()["key"]
    run = server.request("POST", "/v1/runs", {"bounds": [[-1, 1]], "seed": 1,
                                              "objective_expression": "sum(x**2)"},
                         headers=auth(other)).json()["id"]
    session = sign_in(server, key)
    for path in (f"/dashboard/runs/{run}", "/dashboard/runs/nope",
                 f"/dashboard/runs/{run}/trace.json", f"/dashboard/runs/{run}/trace.csv",
                 "/dashboard/decisions/dec_nope"):
        assert get(server, path, session).status == 404, path
    for path in ("/dashboard/runs?state=bogus", "/dashboard/runs?limit=0",
                 "/dashboard/runs?starting_after=run_nope",
                 "/dashboard/decisions?starting_after=dec_nope"):
        page = get(server, path, session)
        assert page.status == 400 and b"Invalid parameter" in page.body, path
    ids = "&".join(f"id=run_{i:024x}" for i in range(101))
    assert get(server, f"/dashboard/runs/live.json?{ids}", session).status == 400


def _finished(server: Any, key: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` run through ``POST /v1/optimize``: its answer."""
    r = server.request("POST", "/v1/optimize", body, headers=auth(key), timeout=120)
    assert r.status == 200, r.body[:300]
    answer: dict[str, Any] = r.json()
    return answer


def test_what_the_pages_scripts_fetch_is_never_sniffed(server: Any, key: str) -> None:
    run = _finished(server, key, {"bounds": [[-1, 1]], "seed": 1, "max_evaluations": 100,
                                  "objective_expression": "sum(x**2)"})["run_id"]
    session = sign_in(server, key)
    for path in (f"/dashboard/runs/{run}/trace.json", f"/dashboard/runs/{run}/trace.csv",
                 f"/dashboard/runs/live.json?id={run}"):
        found = get(server, path, session)
        assert found.status == 200, path
        assert found.header("x-content-type-options") == "nosniff", path


def test_a_run_page_is_bounded_whatever_its_front(server: Any) -> None:
    """A free key's run with a front of 2,500 points of 50 variables (about 2.5 MB): the
    run page holds its size, not its points; what its script fetches holds the first
    page of the front (about the tier's front_page_bytes, 1 MiB). The key is allowed that
    front beyond the tier's archive_size cap."""
    key = server.create_key(limits={"optimization": {"max_archive_size": 2500}})["key"]
    answer = _finished(server, key, {
        "bounds": [[0, 1]] * 50, "seed": 5, "max_evaluations": 7500, "archive_size": 2500,
        "objectives": [{"name": "a", "expression": "x[0]"},
                       {"name": "b", "expression": "-x[0]"}]})
    assert len(answer["pareto"]) == 2500
    session = sign_in(server, key)
    page = get(server, f"/dashboard/runs/{answer['run_id']}", session)
    assert page.status == 200 and len(page.body) < 64 * 1024, len(page.body)
    data = get(server, f"/dashboard/runs/{answer['run_id']}/trace.json", session)
    assert data.status == 200 and len(data.body) < (1 << 20) + 64 * 1024, len(data.body)
    shown = data.json()["front"]
    assert shown["size"] == 2500 and shown["has_more"] and shown["first"] == 0
    assert shown["data"] == answer["pareto"][:len(shown["data"])]
    assert data.json()["result"]["front_size"] == 2500


def test_assets_are_compressed_and_licensed(server: Any) -> None:
    js = server.request("GET", "/dashboard/static/uPlot.iife.min.js",
                        headers={"Accept-Encoding": "gzip"})
    assert js.status == 200 and js.header("content-encoding") == "gzip"
    assert gzip.decompress(js.body).startswith(b"/*! https://github.com/leeoniya/uPlot (v1.6.32)")
    assert b"MIT License" in server.request("GET", "/dashboard/static/uPlot.LICENSE").body
    assert server.request("GET", "/dashboard/static/../session.py").status == 404
    assert server.request("GET", "/dashboard/static/nope.js").status == 404


def test_secure_cookies_under_tls(tmp_path: Any) -> None:
    with live.running(tmp_path, {"DECIDO_TLS": "1",
                                 "DECIDO_SESSION_SECRET": "s" * 40}, workers=1) as srv:
        form = srv.request("GET", "/dashboard/sign-in")
        assert "Secure" in form.header("set-cookie")


def test_a_logged_request_with_a_huge_integer_reads_back(server: Any, key: str) -> None:
    """A decide body may carry an integer beyond 64 bits where it is ignored; its log entry
    reads back through the API and the dashboard as the service read it (a double)."""
    body = {"options": [{"id": "a", "attributes": {"p": 1}, "note": 2**100},
                        {"id": "b", "attributes": {"p": 2}}],
            "criteria": [{"attribute": "p", "weight": 1}], "method": "wsm"}
    assert server.request("POST", "/v1/decide", body, headers=auth(key)).status == 200
    logged = server.request("GET", "/v1/decisions", headers=auth(key)).json()["data"][0]["id"]
    entry = server.request("GET", f"/v1/decisions/{logged}", headers=auth(key))
    assert entry.status == 200 and entry.json()["request"]["options"][0]["note"] == 2.0**100
    page = get(server, f"/dashboard/decisions/{logged}", sign_in(server, key))
    assert page.status == 200 and orjson.dumps(2.0**100) in page.body


def test_the_decide_form_keeps_to_the_plans_sampling_cap(server: Any, key: str) -> None:
    """A decision under uncertainty made on the dashboard is refused above the plan's cap
    on sampled values as ``POST /v1/decide`` is (nothing sampled or counted): the fault is
    shown next to the form."""
    session = sign_in(server, key)  # an sdk key: 5,000,000 sampled values
    page = get(server, "/dashboard/decide", session)
    options = [{"id": f"o{i}", "attributes": {"c": {"low": i + 1.0, "high": i + 3.0}}}
               for i in range(60)]
    fields = {"csrf": csrf_of(page.body), "method": "wsm", "options": orjson.dumps(
        options).decode(), "criteria": "c maximize 1", "samples": "100000", "seed": "1"}
    used = server.request("GET", "/v1/usage", headers=auth(key)).json()["decision"]["month"]
    answer = server.request("POST", "/dashboard/decide", raw=urlencode(fields).encode(),
                            headers={**FORM, "Cookie": f"decido_session={session}"})
    assert answer.status == 200
    problems = answer.body.decode().split('id="decide-problems"')[1].split("</div>")[0]
    assert "6,000,000 sampled values" in problems and "5,000,000" in problems, problems
    after = server.request("GET", "/v1/usage", headers=auth(key)).json()["decision"]["month"]
    assert after["used"] == used["used"]


def _try_sign_in(server: Any, secret: str, source: str = "127.0.0.1") -> Any:
    """One try of the sign-in form from loopback address ``source`` (its own form and
    nonce); the answer."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30,
                                      source_address=(source, 0))
    try:
        conn.request("GET", "/dashboard/sign-in")
        form = conn.getresponse()
        body = form.read()
        nonce = re.search(r"decido_signin=([^;,]*)", form.getheader("set-cookie") or "")
        assert nonce, form.getheaders()
        conn.request("POST", "/dashboard/sign-in",
                     body=urlencode({"csrf": csrf_of(body), "key": secret}).encode(),
                     headers={**FORM, "Cookie": f"decido_signin={nonce.group(1)}"})
        answer = conn.getresponse()
        return live.Response(answer.status, {k.lower(): v for k, v in answer.getheaders()},
                             answer.read())
    finally:
        conn.close()


def test_sign_in_is_throttled_per_address_and_per_key_prefix(tmp_path: Any) -> None:
    """Past ``DECIDO_SIGN_INS_PER_MINUTE`` tries from one address, or at one key's prefix
    from many, the form answers 429 with ``Retry-After`` (and no session), even for the
    right key; another address and another key are not held back (before: 241 tries a
    second went through)."""
    env = {"DECIDO_SIGN_INS_PER_MINUTE": "4", "DECIDO_FAKE_NOW": str(live.FAKE_NOW)}
    with live.running(tmp_path, env, workers=2) as srv:  # a fixed clock: one minute
        key = srv.create_key("sdk", "team")["key"]
        other = srv.create_key("sdk", "team")["key"]
        wrong = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")  # same prefix
        statuses = [_try_sign_in(srv, wrong).status for _ in range(4)]
        assert statuses == [200] * 4  # the form again: not a key
        held = _try_sign_in(srv, key)  # the fifth try from this address: the right key
        assert held.status == 429 and int(held.header("retry-after")) >= 1, held.body
        assert b"sign_in.address" in held.body and cookie_of(held, "decido_session") is None
        assert key.encode() not in held.body
        # another address signs in with another key
        assert _try_sign_in(srv, other, "127.0.0.2").status == 303
        # the key's prefix: its 4 tries are spent (from 127.0.0.1), so from elsewhere too
        held = _try_sign_in(srv, key, "127.0.0.3")
        assert held.status == 429 and b"sign_in.prefix" in held.body
        assert cookie_of(held, "decido_session") is None
        # a malformed secret counts on the address only
        assert _try_sign_in(srv, "not-a-key", "127.0.0.4").status == 200
