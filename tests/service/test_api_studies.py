"""``/v1/studies`` on a live server: create, suggest, complete, batch complete, add
trials, read, stop, delete; every error as problem+json listing its faults with their
pointers; idempotent create; a killed client's trials failed (``lease_expired``) within
twice the lease and their points suggested again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conftest import LiveServer, auth, running

SPHERE = {"bounds": [[-5, 5], [-5, 5]], "engine": "cmaes", "seed": 7, "max_trials": 6}


def create(server: LiveServer, key: str, body: dict[str, Any] | None = None,
           headers: dict[str, str] | None = None) -> dict[str, Any]:
    r = server.request("POST", "/v1/studies", body or SPHERE,
                       headers={**auth(key), **(headers or {})})
    assert r.status == 201, r.body
    return r.json()


def post(server: LiveServer, key: str, path: str, body: Any = None) -> Any:
    return server.request("POST", path, body, headers=auth(key))


def sphere(x: list[float]) -> float:
    return sum(v * v for v in x)


def test_suggest_complete_and_read(server: LiveServer, free_key: str) -> None:
    study = create(server, free_key, {**SPHERE, "metadata": {"project": "p1"}})
    assert study["id"].startswith("st_") and study["state"] == "active"
    assert study["spec"]["engine"] == "cmaes" and study["spec"]["trial_lease"] == 600
    sid = study["id"]
    got = post(server, free_key, f"/v1/studies/{sid}/suggest", {"count": 4, "client_id": "w1"})
    assert got.status == 200, got.body
    trials = got.json()["trials"]
    assert [t["number"] for t in trials] == [0, 1, 2, 3]
    assert all(t["state"] == "active" and t["lease_expires_at"] for t in trials)
    # the same client gets the same trials back while it holds them
    again = post(server, free_key, f"/v1/studies/{sid}/suggest", {"count": 2, "client_id": "w1"})
    assert [t["number"] for t in again.json()["trials"]] == [0, 1, 2, 3]
    done = post(server, free_key, f"/v1/studies/{sid}/trials/0/complete",
                {"value": sphere(trials[0]["x"])})
    assert done.status == 200 and done.json()["state"] == "completed", done.body
    twice = post(server, free_key, f"/v1/studies/{sid}/trials/0/complete", {"value": 1.0})
    assert twice.status == 409 and twice.json()["code"] == "trial_finished"
    batch = post(server, free_key, f"/v1/studies/{sid}/complete", {"trials": [
        {"number": t["number"], "value": sphere(t["x"])} for t in trials[1:3]]
        + [{"number": 3, "state": "failed", "reason": "crashed"}]})
    assert batch.status == 200, batch.body
    assert [t["state"] for t in batch.json()["data"]] == ["completed", "completed", "failed"]
    read = server.request("GET", f"/v1/studies/{sid}", headers=auth(free_key)).json()
    assert read["trials"]["completed"] == 3 and read["trials"]["failed"] == 1
    best = min(trials[:3], key=lambda t: sphere(t["x"]))
    assert read["best"]["number"] == best["number"] and read["pareto"] is None
    page = server.request("GET", f"/v1/studies/{sid}/trials?state=completed&limit=2",
                          headers=auth(free_key)).json()
    assert [t["number"] for t in page["data"]] == [0, 1] and page["has_more"]
    one = server.request("GET", f"/v1/studies/{sid}/trials/3", headers=auth(free_key)).json()
    assert one["state"] == "failed" and one["reason"] == "crashed"
    listed = server.request("GET", "/v1/studies?metadata[project]=p1",
                            headers=auth(free_key)).json()
    assert [s["id"] for s in listed["data"]] == [sid]
    # two more trials reach max_trials=6; then the study is finished
    last = post(server, free_key, f"/v1/studies/{sid}/suggest", {"count": 5}).json()["trials"]
    assert [t["number"] for t in last] == [4, 5]
    finished = post(server, free_key, f"/v1/studies/{sid}/suggest", {})
    assert finished.status == 409 and finished.json()["code"] == "study_finished"
    for t in last:
        post(server, free_key, f"/v1/studies/{sid}/trials/{t['number']}/complete",
             {"value": sphere(t["x"])})
    read = server.request("GET", f"/v1/studies/{sid}", headers=auth(free_key)).json()
    assert read["state"] == "completed" and read["trials"]["completed"] == 5


def test_warm_starts_queued_points_stop_and_delete(server: LiveServer, free_key: str) -> None:
    body = {"variables": [{"name": "lr", "lower": 1e-4, "upper": 1, "log": True},
                          {"name": "layers", "lower": 1, "upper": 4, "type": "integer"}],
            "engine": "random", "seed": 3}
    sid = create(server, free_key, body)["id"]
    added = post(server, free_key, f"/v1/studies/{sid}/trials", {"trials": [
        {"variables": {"lr": 0.01, "layers": 2}, "value": 0.5},
        {"variables": {"lr": 0.1, "layers": 3}, "state": "queued"}]})
    assert added.status == 200, added.body
    assert [t["state"] for t in added.json()["data"]] == ["completed", "queued"]
    got = post(server, free_key, f"/v1/studies/{sid}/suggest", {"count": 2}).json()["trials"]
    assert got[0]["number"] == 1 and got[0]["variables"] == {"lr": 0.1, "layers": 3}
    assert got[1]["number"] == 2
    done = post(server, free_key, f"/v1/studies/{sid}/trials/1/complete", {"value": 0.25})
    assert done.json()["state"] == "completed"
    read = server.request("GET", f"/v1/studies/{sid}", headers=auth(free_key)).json()
    assert read["best"]["number"] == 1
    active = server.request("DELETE", f"/v1/studies/{sid}", headers=auth(free_key))
    assert active.status == 409 and active.json()["code"] == "study_not_stopped"
    stopped = post(server, free_key, f"/v1/studies/{sid}/stop")
    assert stopped.status == 200 and stopped.json()["state"] == "stopped"
    refused = post(server, free_key, f"/v1/studies/{sid}/suggest", {})
    assert refused.status == 409 and refused.json()["code"] == "study_finished"
    late = post(server, free_key, f"/v1/studies/{sid}/trials/2/complete", {"value": 0.3})
    assert late.status == 200  # trials still complete after a stop
    gone = server.request("DELETE", f"/v1/studies/{sid}", headers=auth(free_key))
    assert gone.status == 204
    assert server.request("GET", f"/v1/studies/{sid}", headers=auth(free_key)).status == 404


def test_errors_list_every_fault(server: LiveServer, free_key: str) -> None:
    bad = server.request("POST", "/v1/studies", {"bounds": [[1, 0]], "objectives": ["a", "a"],
                                                 "trial_lease": 0}, headers=auth(free_key))
    assert bad.status == 422 and bad.header("content-type") == "application/problem+json"
    assert {e["pointer"] for e in bad.json()["errors"]} == {"/trial_lease"}
    spec = server.request("POST", "/v1/studies", {"bounds": [[1, 0]], "objectives": ["a", "a"]},
                          headers=auth(free_key))
    assert spec.status == 422
    pointers = {e["pointer"] for e in spec.json()["errors"]}
    assert "/objectives/1/name" in pointers and any(p.startswith("/bounds") for p in pointers)
    sid = create(server, free_key)["id"]
    trials = post(server, free_key, f"/v1/studies/{sid}/suggest", {"count": 2}).json()["trials"]
    batch = post(server, free_key, f"/v1/studies/{sid}/complete", {"trials": [
        {"number": 0, "value": 1.0}, {"number": 9, "value": 1.0},
        {"number": 1, "values": [1.0, 2.0]}, {"number": 1, "state": "failed", "value": 3}]})
    assert batch.status == 422, batch.body
    assert [e["pointer"] for e in batch.json()["errors"]] == [
        "/trials/1/number", "/trials/2/values", "/trials/3/number", "/trials/3/value"]
    # nothing was applied
    assert server.request("GET", f"/v1/studies/{sid}/trials/0", headers=auth(free_key)
                          ).json()["state"] == "active"
    points = post(server, free_key, f"/v1/studies/{sid}/trials", {"trials": [
        {"x": [0, 9], "value": 1}, {"value": 1}, {"x": [0, 0], "state": "queued", "value": 2}]})
    assert [e["pointer"] for e in points.json()["errors"]] == [
        "/trials/0/x", "/trials/1", "/trials/2/state"]
    other = LiveServer.create_key(server)["key"]
    for method, path in (("GET", f"/v1/studies/{sid}"), ("POST", f"/v1/studies/{sid}/suggest"),
                         ("GET", f"/v1/studies/{sid}/trials"),
                         ("POST", f"/v1/studies/{sid}/trials/0/heartbeat"),
                         ("GET", "/v1/studies/st_nothing")):
        r = server.request(method, path, headers=auth(other))
        assert r.status == 404 and r.json()["code"] == "not_found", (path, r.body)
    missing = server.request("GET", f"/v1/studies/{sid}/trials/99", headers=auth(free_key))
    assert missing.status == 404
    huge = 2**60  # beyond a store integer: refused, never a 500
    assert server.request("GET", f"/v1/studies/{sid}/trials/{huge}",
                          headers=auth(free_key)).status == 404
    assert post(server, free_key, f"/v1/studies/{sid}/trials/{huge}/complete",
                {"value": 1.0}).status == 404
    far = post(server, free_key, f"/v1/studies/{sid}/complete",
               {"trials": [{"number": huge, "value": 1.0}]})
    assert far.status == 422 and far.json()["errors"][0]["pointer"] == "/trials/0/number"
    assert trials  # suggested before the faults


def test_create_is_idempotent(server: LiveServer, free_key: str) -> None:
    first = server.request("POST", "/v1/studies", SPHERE,
                           headers={**auth(free_key), "Idempotency-Key": "study-1"})
    again = server.request("POST", "/v1/studies", SPHERE,
                           headers={**auth(free_key), "Idempotency-Key": "study-1"})
    assert first.status == again.status == 201
    assert first.json()["id"] == again.json()["id"]
    assert again.header("location") == f"/v1/studies/{first.json()['id']}"
    other = server.request("POST", "/v1/studies", {**SPHERE, "seed": 8},
                           headers={**auth(free_key), "Idempotency-Key": "study-1"})
    assert other.status == 422 and other.json()["code"] == "idempotency_key_reused"


HOLDER = """
import json, sys, time, http.client
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
conn.request("POST", f"/v1/studies/{sys.argv[2]}/suggest", json.dumps({"count": 3}),
             {"Authorization": f"Bearer {sys.argv[3]}", "Content-Type": "application/json"})
print(conn.getresponse().read().decode(), flush=True)
time.sleep(3600)
"""


def test_killed_client_trials_expire_and_are_suggested_again(tmp_path: Path) -> None:
    with running(tmp_path, {"DECIDO_FAKE_NOW": ""}) as server:
        key = server.create_key()["key"]
        sid = create(server, key, {**SPHERE, "max_trials": None, "trial_lease": 2})["id"]
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(server.port), sid, key],
                                  stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None
        import json
        held = json.loads(holder.stdout.readline())["trials"]
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        killed = time.monotonic()
        # nobody calls the study: the worker's periodic sweep notices within 2 x the lease
        while True:
            states = [server.request("GET", f"/v1/studies/{sid}/trials/{t['number']}",
                                     headers=auth(key)).json() for t in held]
            if all(s["state"] == "failed" for s in states):
                break
            assert time.monotonic() - killed < 4.0, states
            time.sleep(0.1)
        assert all(s["reason"] == "lease_expired" for s in states)
        again = post(server, key, f"/v1/studies/{sid}/suggest", {"count": 3}).json()["trials"]
        assert [t["x"] for t in again] == [t["x"] for t in held]
        assert [t["number"] for t in again] == [3, 4, 5]


def test_a_two_objective_front_flows_into_decide(server: LiveServer, free_key: str) -> None:
    body = {"bounds": [[0, 1]], "objectives": ["cost", {"name": "quality", "goal": "maximize"}],
            "engine": "moea", "seed": 5}
    sid = create(server, free_key, body)["id"]
    points = [0.1, 0.4, 0.7, 0.9]
    trials = [{"x": [x], "values": [x, x * 2]} for x in points]  # all on the front
    trials.append({"x": [0.5], "values": [0.8, 0.1]})  # dominated by 0.4
    r = post(server, free_key, f"/v1/studies/{sid}/trials", {"trials": trials})
    assert r.status == 200, r.body
    study = server.request("GET", f"/v1/studies/{sid}", headers=auth(free_key)).json()
    assert sorted(t["number"] for t in study["pareto"]) == [0, 1, 2, 3] and study["best"] is None
    decided = post(server, free_key, "/v1/decide", {"from_study": sid, "method": "topsis"})
    assert decided.status == 200, decided.body
    ranking = decided.json()["ranking"]
    assert sorted(item["id"] for item in ranking) == ["0", "1", "2", "3"]
    assert all(item["f"] == [float(item["x"][0]), item["x"][0] * 2] for item in ranking)
    batch = post(server, free_key, "/v1/batch", {"decisions": [
        {"from_study": sid, "method": "topsis"}, {"from_study": "st_" + "0" * 24}]})
    assert batch.status == 200, batch.body  # a bad from_study fails its own item only
    assert batch.json()["results"][0]["status"] == "ok"
    assert batch.json()["results"][1]["error"]["code"] == "not_found"
    assert batch.json()["results"][1]["error"]["path"] == "from_study"
    one = create(server, free_key, {**SPHERE, "max_trials": None})["id"]
    post(server, free_key, f"/v1/studies/{one}/trials", {"trials": [
        {"x": [1, 1], "value": 2.0}, {"x": [0, 1], "value": 1.0}]})
    single = post(server, free_key, "/v1/decide", {"from_study": one, "method": "topsis"})
    assert single.status == 200, single.body
    assert single.json()["ranking"][0]["id"] == "1"


def test_the_tier_caps_studies(server: LiveServer, free_key: str) -> None:
    """Free: 2 active studies, 1,000 trials per study, 50 variables."""
    first = create(server, free_key, {"bounds": [[0, 1]]})
    assert first["spec"]["max_trials"] == 1000  # the tier's cap, filled in
    trials = server.request("POST", "/v1/studies", {"bounds": [[0, 1]], "max_trials": 5000},
                            headers=auth(free_key))
    assert trials.status == 403 and trials.json()["code"] == "compute_cap_exceeded"
    assert trials.json()["limit_value"] == 1000 and trials.json()["field"] == "max_trials"
    dims = server.request("POST", "/v1/studies", {"bounds": [[0, 1]] * 51},
                          headers=auth(free_key))
    assert dims.status == 403 and dims.json()["code"] == "max_dims_exceeded", dims.body
    create(server, free_key, {"bounds": [[0, 1]]})
    third = server.request("POST", "/v1/studies", {"bounds": [[0, 1]]}, headers=auth(free_key))
    assert third.status == 429 and third.json()["code"] == "too_many_studies"
    assert third.json()["limit_value"] == 2
    post(server, free_key, f"/v1/studies/{first['id']}/stop")
    create(server, free_key, {"bounds": [[0, 1]]})  # a stopped study is not active


def test_report_median_rule_heartbeat_and_abandon(server: LiveServer, free_key: str) -> None:
    body = {**SPHERE, "max_trials": None, "early_stopping": {"rule": "median", "min_trials": 2}}
    sid = create(server, free_key, body)["id"]
    trials = post(server, free_key, f"/v1/studies/{sid}/suggest", {"count": 5}).json()["trials"]
    base = f"/v1/studies/{sid}/trials"
    for number, value in ((0, 1.0), (1, 2.0)):  # too few others at step 1 for the rule
        r = post(server, free_key, f"{base}/{number}/report", {"step": 1, "value": value})
        assert r.status == 200 and r.json() == {"should_stop": False}, r.body
    good = post(server, free_key, f"{base}/2/report", {"step": 1, "value": 0.5})
    assert good.json() == {"should_stop": False}  # better than the median 1.5
    bad = post(server, free_key, f"{base}/3/report", {"step": 1, "value": 9.0})
    assert bad.json() == {"should_stop": True}  # worse than the median 1.0 of three
    stopped = server.request("GET", f"{base}/3", headers=auth(free_key)).json()
    assert stopped["state"] == "early_stopped" and stopped["completed_at"]
    late = post(server, free_key, f"{base}/3/report", {"step": 2, "value": 1.0})
    assert late.status == 409 and late.json()["code"] == "trial_finished"
    beat = post(server, free_key, f"{base}/4/heartbeat")
    assert beat.status == 200 and beat.json()["state"] == "active"
    gone = post(server, free_key, f"{base}/4/abandon")
    assert gone.status == 200 and gone.json()["state"] == "abandoned"
    again = post(server, free_key, f"{base}/4/heartbeat")
    assert again.status == 409 and again.json()["code"] == "trial_finished"
    counts = server.request("GET", f"/v1/studies/{sid}", headers=auth(free_key)).json()["trials"]
    assert counts["early_stopped"] == 1 and counts["abandoned"] == 1 and counts["active"] == 3
    assert len(trials) == 5


def test_the_default_engine_auto_suggests_diverse_batches(
        server: LiveServer, free_key: str) -> None:
    # no engine named: auto (bo for 40 trials in 3 dimensions); a batch of pending trials
    # is spread out (Kriging believer), before and after the model has seen values
    study = create(server, free_key, {"bounds": [[-2, 3]] * 3, "seed": 5, "max_trials": 40})
    assert study["spec"]["engine"] == "auto"
    sid = study["id"]
    seen: list[list[float]] = []
    for round_ in range(3):
        got = post(server, free_key, f"/v1/studies/{sid}/suggest",
                   {"count": 4, "client_id": f"w{round_}"})
        assert got.status == 200, got.body
        trials = got.json()["trials"]
        xs = [t["x"] for t in trials]
        assert len(xs) == 4 and all(len(x) == 3 for x in xs)
        for i, a in enumerate(xs):
            for b in xs[i + 1:] + seen:
                assert sum((p - q) ** 2 for p, q in zip(a, b, strict=True)) > 1e-6, round_
        seen += xs
        done = post(server, free_key, f"/v1/studies/{sid}/complete", {"trials": [
            {"number": t["number"], "value": sphere([v - 0.5 for v in t["x"]])}
            for t in trials]})
        assert done.status == 200, done.body
    read = server.request("GET", f"/v1/studies/{sid}", headers=auth(free_key)).json()
    assert read["trials"]["completed"] == 12 and read["best"]["value"] is not None
