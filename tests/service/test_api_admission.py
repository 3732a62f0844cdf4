"""Admission through a real server: the refused-request budget, /v1/usage that counts
nothing, X-Forwarded-For from trusted proxies only, and store work off the event loop."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

from conftest import LiveServer, auth, running
from test_api_meta import assert_common_headers, assert_problem

DECISION = {"options": [{"id": "a", "attributes": {"p": 1.0}},
                        {"id": "b", "attributes": {"p": 2.0}}],
            "criteria": [{"attribute": "p", "goal": "minimize", "weight": 1}]}
#: a plan whose refused budget is small enough to use up in a test
STRICT = {"strict": {"minute": 100, "month": 1000, "batch_max": 10, "refused": 3,
                     "from_run_points": 1_000, "max_smaa_values": 1_000_000}}


def test_refused_requests_cost_their_own_budget_then_429(tmp_path) -> None:
    env = {"DECIDO_PLANS": json.dumps(STRICT)}
    with running(tmp_path, env, workers=1) as srv:
        key = srv.create_key(plan="strict")["key"]
        assert srv.request("POST", "/v1/decide", DECISION, headers=auth(key)).status == 200
        for _ in range(3):  # invalid bodies: refused, charged to decide.refused only
            r = srv.request("POST", "/v1/decide", raw=b"{nope",
                            headers={**auth(key), "Content-Type": "application/json"})
            assert_problem(r, 400, "malformed_json")
            assert_common_headers(r, rate=True)
            assert r.header("x-ratelimit-remaining") == "99"  # the real allowance is intact
        r = srv.request("POST", "/v1/decide", raw=b"{nope",
                        headers={**auth(key), "Content-Type": "application/json"})
        body = assert_problem(r, 429, "too_many_refused")
        assert body["limit"] == "decide.refused" and body["limit_value"] == 3
        assert 1 <= int(r.header("retry-after")) <= 60
        # until the minute ends, the key's valid requests on that surface wait too...
        r = srv.request("POST", "/v1/decide", DECISION, headers=auth(key))
        assert_problem(r, 429, "too_many_refused")
        # ... and nothing was counted for them
        usage = srv.request("GET", "/v1/usage", headers=auth(key)).json()["decision"]
        assert usage["minute"]["remaining"] == 99 and usage["month"]["used"] == 1
        # the other surface has a budget of its own
        run = {"bounds": [[0, 1]], "objective_expression": "x[0]", "max_evaluations": 50}
        assert srv.request("POST", "/v1/optimize", run, headers=auth(key)).status == 200


def test_a_tier_cap_refusal_is_charged_not_counted(server: LiveServer, free_key: str) -> None:
    run = {"bounds": [[0, 1]] * 51, "objective_expression": "sum(x)"}  # Free: Max Dims 50
    r = server.request("POST", "/v1/optimize", run, headers=auth(free_key))
    assert_problem(r, 403, "max_dims_exceeded")
    assert r.header("x-ratelimit-remaining") == "10"  # optimize.minute untouched
    usage = server.request("GET", "/v1/usage", headers=auth(free_key)).json()
    assert usage["optimization"]["month"]["used"] == 0


def test_usage_counts_nothing(server: LiveServer, free_key: str) -> None:
    for _ in range(50):
        r = server.request("GET", "/v1/usage", headers=auth(free_key))
        assert r.status == 200
        assert r.header("x-ratelimit-limit") == "10" and r.header("x-ratelimit-remaining") == "10"
    for _ in range(10):  # the Free plan's whole minute is still there
        assert server.request("POST", "/v1/decide", DECISION, headers=auth(free_key)).status == 200


def _create_key(srv: LiveServer, forwarded: str | None) -> int:
    headers = {} if forwarded is None else {"X-Forwarded-For": forwarded}
    return srv.request("POST", "/v1/keys", headers=headers).status


def test_forwarded_for_believed_only_from_trusted_proxies(tmp_path) -> None:
    env = {"DECIDO_KEYS_PER_HOUR": "1", "DECIDO_FORWARDED_ALLOW_IPS": "127.0.0.1"}
    (tmp_path / "trusted").mkdir()
    (tmp_path / "untrusted").mkdir()
    with running(tmp_path / "trusted", env, workers=1) as srv:
        # each client behind the proxy has its own allowance...
        assert _create_key(srv, "203.0.113.7") == 201
        assert _create_key(srv, "203.0.113.8") == 201
        assert _create_key(srv, "203.0.113.7") == 429
        # ... the nearest untrusted hop counts (a client cannot pick a fresh address)
        assert _create_key(srv, "198.51.100.1, 203.0.113.8") == 429
        assert _create_key(srv, "198.51.100.1, 127.0.0.1, 203.0.113.9") == 201
    env = {"DECIDO_KEYS_PER_HOUR": "1"}  # trust no proxy (the default)
    with running(tmp_path / "untrusted", env, workers=1) as srv:
        assert _create_key(srv, "203.0.113.7") == 201
        assert _create_key(srv, "203.0.113.8") == 429  # the peer, 127.0.0.1, is what counts


def test_a_held_write_lock_does_not_stall_the_event_loop(tmp_path) -> None:
    """The store works in threads of its own: while another process holds SQLite's write
    lock, requests that need no write are answered at once."""
    with running(tmp_path, {}, workers=1, db_url=f"sqlite:///{tmp_path / 'decido.db'}"
                                             "?busy_timeout=3000") as srv:
        key = srv.create_key()["key"]
        assert srv.request("GET", "/v1/usage", headers=auth(key)).status == 200
        holder = sqlite3.connect(srv.db, timeout=0, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        waiting: dict[str, int] = {}

        def decide() -> None:  # needs the write lock: waits for it
            waiting["status"] = srv.request("POST", "/v1/decide", DECISION,
                                            headers=auth(key)).status

        thread = threading.Thread(target=decide)
        thread.start()
        try:
            time.sleep(0.3)  # the decision is now waiting for the lock
            started = time.monotonic()
            for path in ("/v1/engines", "/v1/health", "/v1/openapi.json"):
                assert srv.request("GET", path).status == 200
            assert srv.request("GET", "/v1/usage", headers=auth(key)).status == 200  # a read
            assert time.monotonic() - started < 1.0
            assert "status" not in waiting
        finally:
            holder.execute("ROLLBACK")
            holder.close()
            thread.join(10)
        assert waiting["status"] == 200  # and it went through once the lock was free


def test_oversized_runs_are_refused_before_compiling_and_charged(tmp_path) -> None:
    """The attack of 1 MB bodies with 110,000 bounds from a Free key: each is refused by
    the Max Dims cap (decoded in a thread, never compiled), charged to the refused budget,
    and once that is spent the key gets 429 while its real allowance stays whole."""
    tiers = {"free": {"refused": 2}}
    body = {"bounds": [[-1, 1]] * 110_000, "objective_expression": "sum(x**2)"}  # ~1 MB
    with running(tmp_path, {"DECIDO_TIERS": json.dumps(tiers)}, workers=1) as srv:
        key = srv.create_key()["key"]
        statuses = []
        for _ in range(3):
            r = srv.request("POST", "/v1/optimize", body, headers=auth(key))
            statuses.append(r.status)
            assert r.header("x-ratelimit-remaining") == "10"
        assert statuses == [403, 403, 429]
        assert r.json()["code"] == "too_many_refused"
        assert srv.request("GET", "/v1/health").status == 200
        usage = srv.request("GET", "/v1/usage", headers=auth(key)).json()["optimization"]
        assert usage["minute"]["remaining"] == 10 and usage["month"]["used"] == 0


def test_a_large_body_of_a_spent_refused_budget_is_refused_before_decoding() -> None:
    """After the refused budget was spent, every further 1 MiB body was still decoded
    before its 429 (90-250 ms each): a worker that saw the budget spent refuses a body
    above SMALL_BODY at once, before the handler reads or decodes it."""
    import asyncio
    from types import SimpleNamespace

    import pytest

    from decido_service.admission import SMALL_BODY, SpentBudgets
    from decido_service.http.admission import refusals
    from decido_service.http.problems import ApiError
    from decido_service.store import CounterState

    now = 1_000_000.0
    spent = SpentBudgets()
    refused = CounterState("optimize.refused", 3, 3, 0, 1_000_020, 999_960, 1_000_020)
    minute = CounterState("optimize.minute", 10, 1, 9, 1_000_020, 999_960, 1_000_020)
    spent.note("k1", refused, minute)

    def request(body: bytes) -> SimpleNamespace:
        settings = SimpleNamespace(now=lambda: now)
        return SimpleNamespace(body=body, ctx=SimpleNamespace(), app=SimpleNamespace(
            ctx=SimpleNamespace(spent_budgets=spent, settings=settings)))

    async def enter(req: SimpleNamespace, key_id: str, surface: str) -> None:
        async with refusals(req, {"id": key_id}, surface):
            pass

    large = request(b"x" * (SMALL_BODY + 1))
    with pytest.raises(ApiError) as caught:
        asyncio.run(enter(large, "k1", "optimize"))
    assert caught.value.code == "too_many_refused"
    assert caught.value.headers["Retry-After"] == "20"
    assert large.ctx.rate == minute  # the X-RateLimit-* headers of the minute counter
    asyncio.run(enter(request(b"x" * SMALL_BODY), "k1", "optimize"))  # small: decoded
    asyncio.run(enter(large, "k2", "optimize"))  # another key
    asyncio.run(enter(large, "k1", "decide"))  # another surface
    now = 1_000_020.0  # the minute is over
    asyncio.run(enter(large, "k1", "optimize"))
