"""Limits on the live server: exact under concurrency, 429 bodies, quotas, rollover, kill -9."""

from __future__ import annotations

import http.client
import json
import threading
import time
from calendar import timegm

import pytest
from conftest import FAKE_NOW, LiveServer, auth, fake_clock_supported, running
from test_api_decide import DECISION
from test_api_meta import assert_problem

from decido_service.store import CounterSpec
from decido_service.store.blocking import open_blocking

CONCURRENT = 50
TINY = {"tiny": {"minute": 100, "month": 3, "batch_max": 2, "refused": 60,
                 "from_run_points": 1_000, "max_smaa_values": 1_000_000}}


def counter(server: LiveServer, name: str, subject: str, window: str, now: float) -> int:
    """The store's count of one counter (read directly, nothing counted)."""
    with open_blocking(str(server.db)) as store:
        (state,) = store.admissions.peek([CounterSpec(name, subject, window, None, 0)], now)
    return state.used


def server_now(server: LiveServer) -> float:
    return FAKE_NOW if "DECIDO_FAKE_NOW" in server.env else time.time()


def avoid_minute_edge(server: LiveServer) -> None:
    """On the real clock, do not start a burst in the last seconds of a UTC minute."""
    if "DECIDO_FAKE_NOW" not in server.env and time.time() % 60 > 50:
        time.sleep(61 - time.time() % 60)


def burst(server: LiveServer, method: str, path: str, body: dict, headers: dict, n: int):
    """``n`` requests at once, one connection each, released together by a barrier."""
    barrier, results, lock = threading.Barrier(n), [], threading.Lock()
    payload = json.dumps(body).encode()

    def one() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            conn.connect()
            barrier.wait(30)
            conn.request(method, path, body=payload,
                         headers={**headers, "Content-Type": "application/json"})
            resp = conn.getresponse()
            out = (resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
        finally:
            conn.close()
        with lock:
            results.append(out)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert len(results) == n
    return results


def test_exact_limit_under_50_concurrent_requests(server: LiveServer) -> None:
    made = server.create_key()  # free: 10 requests per minute on /v1/decide
    avoid_minute_edge(server)
    results = burst(server, "POST", "/v1/decide", DECISION, auth(made["key"]), CONCURRENT)
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [200] * 10 + [429] * 40
    remaining = sorted(int(h["x-ratelimit-remaining"]) for s, h, _ in results if s == 200)
    assert remaining == list(range(10))  # each admitted request saw its own count
    for status, headers, body in results:
        assert headers["x-ratelimit-limit"] == "10" and headers["x-request-id"]
        if status == 429:
            problem = json.loads(body)
            assert problem["code"] == "rate_limited" and problem["limit"] == "decide.minute"
            assert problem["limit_value"] == 10
            assert headers["x-ratelimit-remaining"] == "0"
            assert 1 <= int(headers["retry-after"]) <= 60
            assert int(headers["x-ratelimit-reset"]) == problem["reset"]
    now = server_now(server)
    assert counter(server, "decide.minute", made["id"], "minute", now) == 10
    assert counter(server, "decide.month", made["id"], "month", now) == 10  # refused: uncounted


def test_exact_optimize_limit_across_workers(server: LiveServer) -> None:
    made = server.create_key(tier="free")  # free: 10 optimizations per minute
    avoid_minute_edge(server)
    body = {"bounds": [[-1, 1]] * 2, "objective_expression": "sum(x**2)", "seed": 1}
    results = burst(server, "POST", "/v1/optimize", body, auth(made["key"], "x"), 30)
    statuses = [s for s, _, _ in results]
    # a worker's single run slot may turn some away (503, uncounted); never more than 10 run
    assert statuses.count(200) <= 10 and statuses.count(200) + statuses.count(429) + \
        statuses.count(503) == 30
    now = server_now(server)
    assert counter(server, "optimize.minute", made["id"], "minute", now) == statuses.count(200)


def test_key_creation_throttled_per_address(server: LiveServer) -> None:
    for _ in range(6):  # 5 per hour per address; earlier tests may have used some
        r = server.request("POST", "/v1/keys")
        if r.status == 429:
            break
        assert r.status == 201
    body = assert_problem(r, 429, "key_creation_throttled")
    assert body["limit"] == "keys.hour" and body["limit_value"] == 5
    assert r.header("x-ratelimit-limit") == "5" and r.header("x-ratelimit-remaining") == "0"
    assert 1 <= int(r.header("retry-after")) <= 3600


def test_monthly_quota_all_or_nothing(tmp_path) -> None:
    env = {"DECIDO_PLANS": json.dumps(TINY)}
    with running(tmp_path, env) as srv:
        key = srv.create_key(plan="tiny")["key"]
        for _ in range(2):
            assert srv.request("POST", "/v1/decide", DECISION, headers=auth(key)).status == 200
        batch = {"defaults": DECISION, "decisions": [{"id": 1}, {"id": 2}]}
        body = assert_problem(srv.request("POST", "/v1/batch", batch, headers=auth(key)),
                              429, "monthly_quota_exceeded")
        assert body["limit"] == "decide.month" and body["limit_value"] == 3
        usage = srv.request("GET", "/v1/usage", headers=auth(key)).json()["decision"]
        assert usage["month"]["used"] == 2 and usage["month"]["remaining"] == 1
        assert srv.request("POST", "/v1/decide", DECISION, headers=auth(key)).status == 200
        r = srv.request("POST", "/v1/decide", DECISION, headers=auth(key))
        assert_problem(r, 429, "monthly_quota_exceeded")
        assert int(r.header("retry-after")) > 60  # until the month ends


@pytest.mark.skipif(not fake_clock_supported(), reason="settings have no DECIDO_FAKE_NOW")
def test_month_rollover(tmp_path) -> None:
    before = timegm((2025, 1, 31, 23, 59, 50))
    env = {"DECIDO_PLANS": json.dumps(TINY), "DECIDO_FAKE_NOW": str(before)}
    with running(tmp_path, env) as srv:
        key = srv.create_key(plan="tiny")["key"]
        for _ in range(3):
            assert srv.request("POST", "/v1/decide", DECISION, headers=auth(key)).status == 200
        r = srv.request("POST", "/v1/decide", DECISION, headers=auth(key))
        assert_problem(r, 429, "monthly_quota_exceeded")
        assert r.header("retry-after") == "10"  # 23:59:50 -> 00:00:00
        month = srv.request("GET", "/v1/usage", headers=auth(key)).json()["decision"]["month"]
        assert month["period_start"] == "2025-01-01T00:00:00Z"
        assert month["period_end"] == "2025-02-01T00:00:00Z"
    env["DECIDO_FAKE_NOW"] = str(timegm((2025, 2, 1, 0, 0, 5)))
    with running(tmp_path, env) as srv:
        assert srv.request("POST", "/v1/decide", DECISION, headers=auth(key)).status == 200
        month = srv.request("GET", "/v1/usage", headers=auth(key)).json()["decision"]["month"]
        assert month["used"] == 1 and month["period_start"] == "2025-02-01T00:00:00Z"
        assert month["period_end"] == "2025-03-01T00:00:00Z"


def test_counted_requests_survive_kill_9(tmp_path) -> None:
    srv = LiveServer(tmp_path).start()
    try:
        key = srv.request("POST", "/v1/keys").json()["key"]  # made over HTTP, then killed
        r = srv.request("POST", "/v1/decide", DECISION, headers=auth(key))
        assert r.status == 200
        run = srv.request("POST", "/v1/optimize", {"bounds": [[0, 1]],
                                                   "objective_expression": "x[0]"},
                          headers=auth(key))
        assert run.status == 200
        srv.kill9()  # right after the answers: no clean shutdown, no checkpoint
        srv.start()
        usage = srv.request("GET", "/v1/usage", headers=auth(key))
        assert usage.status == 200  # the key survived
        doc = usage.json()
        assert doc["decision"]["month"]["used"] == 1
        assert doc["optimization"]["month"]["used"] == 1
        with open_blocking(str(srv.db)) as store:
            assert [r.id for r in store.runs.page(doc["key"]["id"], 100)] == [run.json()["id"]]
    finally:
        srv.stop()
