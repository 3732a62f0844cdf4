"""The one read policy (docs/service.md, "Reads"): every keyed read — runs, their traces,
events, cancels and deletes, the decision log — counts nothing, is never refused for a
limit, carries the surface's per-minute headers and refuses a revoked key at once."""

from __future__ import annotations

import subprocess

from conftest import LiveServer, auth, decido_command
from test_api_decision_log import DECISION
from test_api_meta import assert_problem
from test_api_runs import SPHERE, submit, wait_for


def _minute(r) -> tuple[int, int]:
    """``(limit, remaining)`` of an answer's rate-limit headers (both present, and Reset)."""
    assert r.header("x-ratelimit-reset") is not None, (r.status, r.body)
    return int(r.header("x-ratelimit-limit")), int(r.header("x-ratelimit-remaining"))


def test_reads_count_nothing_and_carry_the_surfaces_minute(server: LiveServer) -> None:
    key = server.create_key(plan="sdk", tier="pro")["key"]
    run = submit(server, key, SPHERE)
    wait_for(server, key, run["id"], "succeeded", "failed", "cancelled")
    assert server.request("POST", "/v1/decide", DECISION, headers=auth(key)).status == 200
    usage = server.request("GET", "/v1/usage", headers=auth(key)).json()
    optimize = (usage["optimization"]["minute"]["limit"],
                usage["optimization"]["minute"]["remaining"])
    decide = (usage["decision"]["minute"]["limit"], usage["decision"]["minute"]["remaining"])
    entry = server.request("GET", "/v1/decisions", headers=auth(key)).json()["data"][0]["id"]
    reads = {
        ("GET", "/v1/runs"): optimize, ("GET", f"/v1/runs/{run['id']}"): optimize,
        ("HEAD", f"/v1/runs/{run['id']}"): optimize,
        ("GET", f"/v1/runs/{run['id']}/trace"): optimize,
        ("GET", f"/v1/runs/{run['id']}/trace?format=csv"): optimize,
        ("GET", f"/v1/runs/{run['id']}/events"): optimize,
        ("GET", "/v1/decisions"): decide, ("GET", f"/v1/decisions/{entry}"): decide,
    }
    for _ in range(2):  # read twice: the second sees the same counts
        for (method, path), expected in reads.items():
            r = server.request(method, path, headers=auth(key))
            assert r.status == 200, (method, path, r.body)
            assert _minute(r) == expected, (method, path)
    r = server.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(key))
    assert_problem(r, 409, "run_finished")
    assert _minute(r) == optimize
    after = server.request("GET", "/v1/usage", headers=auth(key)).json()
    assert after["optimization"]["minute"] == usage["optimization"]["minute"]
    assert after["decision"]["minute"] == usage["decision"]["minute"]
    assert after["decision"]["month"]["used"] == 1  # the decision, not the reads
    r = server.request("DELETE", f"/v1/runs/{run['id']}", headers=auth(key))
    assert r.status == 204 and _minute(r) == optimize


def test_reads_are_served_once_the_minute_is_spent(server: LiveServer) -> None:
    key = server.create_key()["key"]  # free: 10 decisions a minute
    statuses = [server.request("POST", "/v1/decide", {**DECISION, "log": True},
                               headers=auth(key)).status for _ in range(11)]
    assert statuses == [200] * 10 + [429]
    r = server.request("GET", "/v1/decisions?limit=100", headers=auth(key))
    assert r.status == 200 and len(r.json()["data"]) == 10
    assert _minute(r) == (10, 0)
    r = server.request("GET", "/v1/runs", headers=auth(key))
    assert r.status == 200 and r.json() == {"data": [], "has_more": False}


def test_a_read_refused_for_its_parameters_is_charged_and_a_revoked_key_is_refused(
        server: LiveServer) -> None:
    made = server.create_key()
    key = made["key"]
    r = server.request("GET", "/v1/runs?limit=0", headers=auth(key))
    assert_problem(r, 400, "invalid_parameter")
    assert _minute(r) == (10, 10)
    usage = server.request("GET", "/v1/usage", headers=auth(key)).json()
    assert usage["optimization"]["minute"]["remaining"] == 10  # a refusal is not a request
    subprocess.run([*decido_command(), "keys", "revoke", made["id"], "--db",
                    server.db_url or str(server.db)], check=True, capture_output=True,
                   timeout=60, env=server.environment())
    for path in ("/v1/runs", "/v1/decisions", f"/v1/runs/run_{'0' * 24}"):
        assert_problem(server.request("GET", path, headers=auth(key)), 401, "revoked_key")
