"""Runs as resources on a live server (2 workers, one SQLite file): submit, read while
running, list, trace, cancel, delete, keys kept apart, bad input, shutdown."""

from __future__ import annotations

import contextlib
import csv
import http.client
import io
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from conftest import LiveServer, auth, running

from decido_service.runs.trace import TRACE_POINTS, thin_trace, timed
from decido_service.types import Run, RunList, RunTrace

SPHERE = {"bounds": [[-5, 5]] * 4, "objective_expression": "sum((x - 1)**2)", "seed": 7}
#: a run that only stops at its time limit: random search on 1,000 dimensions
SLOW = {"bounds": [[-5, 5]] * 1000, "objective_expression": "sum(sin(x)**2 + cos(3*x))",
        "engine": "random", "max_evaluations": 5_000_000, "time_limit": 20}


def wait_for(server: LiveServer, key: str, run_id: str, *states: str,
             timeout: float = 30) -> dict[str, Any]:
    """Poll the run until it is in one of ``states``; its document."""
    deadline = time.monotonic() + timeout
    while True:
        r = server.request("GET", f"/v1/runs/{run_id}", headers=auth(key))
        assert r.status == 200, r.body
        doc = msgspec.to_builtins(msgspec.convert(r.json(), Run))
        if doc["state"] in states:
            return r.json()
        assert time.monotonic() < deadline, doc
        time.sleep(0.05)


def submit(server: LiveServer, key: str, body: dict[str, Any]) -> dict[str, Any]:
    r = server.request("POST", "/v1/runs", body, headers=auth(key))
    assert r.status == 202, r.body
    doc = r.json()
    assert r.header("location") == f"/v1/runs/{doc['id']}"
    msgspec.convert(doc, Run)
    assert doc["created_at"] and doc["request"]["bounds"] == body["bounds"]
    return dict(doc)


def test_submit_then_read_trace_list_and_delete(server: LiveServer) -> None:
    made = server.create_key(tier="pro")
    key = made["key"]
    doc = submit(server, key, SPHERE)
    assert doc["request"]["objective_expression"] == SPHERE["objective_expression"]
    assert doc["request"]["engine"] == "dss"  # defaults filled in
    done = wait_for(server, key, doc["id"], "succeeded", "failed", "cancelled")
    assert done["state"] == "succeeded", done
    assert done["result"]["status"] == "converged" and done["result"]["value"] < 1e-12
    assert all(abs(v - 1) < 1e-6 for v in done["result"]["x"])
    assert done["started_at"] and done["finished_at"] and done["progress"] is None
    # replay: the same request and seed give the same x and value
    direct = server.request("POST", "/v1/optimize", SPHERE, headers=auth(key)).json()
    assert direct["x"] == done["result"]["x"] and direct["value"] == done["result"]["value"]
    trace = server.request("GET", f"/v1/runs/{doc['id']}/trace", headers=auth(key))
    assert trace.status == 200
    points = msgspec.convert(trace.json(), RunTrace).points
    assert [[e, b] for e, _, b in points] == direct["history"]
    assert points[-1][2] == done["result"]["value"]
    times = [ms for _, ms, _ in points]
    assert times == sorted(times) and times[-1] == done["result"]["elapsed_ms"]
    as_csv = server.request("GET", f"/v1/runs/{doc['id']}/trace?format=csv", headers=auth(key))
    assert as_csv.status == 200 and as_csv.header("content-type").startswith("text/csv")
    rows = list(csv.reader(io.StringIO(as_csv.body.decode())))
    assert rows[0] == ["evaluations", "elapsed_ms", "best"] and len(rows) == len(points) + 1
    assert [int(rows[1][0]), float(rows[1][1]), float(rows[1][2])] == points[0]
    listed = server.request("GET", "/v1/runs", headers=auth(key))
    page = msgspec.convert(listed.json(), RunList)
    assert [r.id for r in page.data] == [direct["run_id"], doc["id"]] and not page.has_more
    usage = server.request("GET", "/v1/usage", headers=auth(key)).json()
    assert usage["optimization"]["month"]["used"] == 2  # counted once each, at admission
    gone = server.request("DELETE", f"/v1/runs/{doc['id']}", headers=auth(key))
    assert gone.status == 204 and gone.body == b""
    assert server.request("GET", f"/v1/runs/{doc['id']}", headers=auth(key)).status == 404
    assert server.request("DELETE", f"/v1/runs/{doc['id']}", headers=auth(key)).status == 404


def test_optimize_is_recorded_as_a_run(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    r = server.request("POST", "/v1/optimize", SPHERE, headers=auth(key))
    assert r.status == 200
    body = r.json()
    assert body["run_id"] == body["id"] and r.header("location") == f"/v1/runs/{body['id']}"
    run = wait_for(server, key, body["id"], "succeeded")  # final before the answer
    assert run["result"]["x"] == body["x"] and run["result"]["seed"] == 7
    assert run["request"]["seed"] == 7 and run["engine"] == "dss" and run["dims"] == 4


def test_running_run_shows_progress_then_cancel_keeps_its_best(server: LiveServer) -> None:
    key = server.create_key(tier="team")["key"]
    doc = submit(server, key, SLOW)
    wait_for(server, key, doc["id"], "running")
    deadline = time.monotonic() + 10
    while (run := wait_for(server, key, doc["id"], "running"))["progress"] is None:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert run["progress"]["evaluations"] > 0 and run["started_at"]
    busy = server.request("DELETE", f"/v1/runs/{doc['id']}", headers=auth(key))
    assert busy.status == 409 and busy.json()["code"] == "run_not_finished"
    started = time.monotonic()
    r = server.request("POST", f"/v1/runs/{doc['id']}/cancel", headers=auth(key))
    assert r.status == 202 and r.json()["cancel_requested"] is True
    end = wait_for(server, key, doc["id"], "cancelled", "succeeded", "failed")
    assert time.monotonic() - started < 5  # far from its 20 s time limit
    assert end["state"] == "cancelled" and end["result"]["status"] == "stopped"
    assert end["result"]["message"].startswith("cancelled at its key's request (POST "
                                               "/v1/runs/{id}/cancel"), end["result"]
    assert end["result"]["evaluations"] >= run["progress"]["evaluations"]
    assert end["result"]["value"] is not None and len(end["result"]["x"]) == 1000
    again = server.request("POST", f"/v1/runs/{doc['id']}/cancel", headers=auth(key))
    assert again.status == 409 and again.json()["code"] == "run_finished"
    assert again.json()["detail"] == f"run {doc['id']} has already been cancelled"
    assert server.request("DELETE", f"/v1/runs/{doc['id']}", headers=auth(key)).status == 204


def test_a_key_sees_only_its_runs(server: LiveServer) -> None:
    mine = server.create_key(tier="pro")["key"]
    other = server.create_key(tier="pro")["key"]
    run_id = submit(server, mine, SPHERE)["id"]
    wait_for(server, mine, run_id, "succeeded")
    for method, path in (("GET", f"/v1/runs/{run_id}"), ("GET", f"/v1/runs/{run_id}/trace"),
                         ("POST", f"/v1/runs/{run_id}/cancel"),
                         ("DELETE", f"/v1/runs/{run_id}")):
        r = server.request(method, path, headers=auth(other))
        assert r.status == 404 and r.json()["code"] == "not_found", (method, path)
    assert server.request("GET", "/v1/runs", headers=auth(other)).json() == {
        "data": [], "has_more": False}
    # another key's run as a cursor is only a position: none of this key's is there
    cursor = server.request("GET", f"/v1/runs?starting_after={run_id}", headers=auth(other))
    assert cursor.status == 200 and cursor.json() == {"data": [], "has_more": False}
    assert server.request("GET", f"/v1/runs/{run_id}").status == 401
    assert server.request("GET", f"/v1/runs/{run_id}", headers=auth(mine)).status == 200


def test_pages_filters_and_bad_parameters(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    ids = []
    for engine in ("dss", "nelder_mead", "dss"):
        ids.append(submit(server, key, {**SPHERE, "engine": engine})["id"])
        wait_for(server, key, ids[-1], "succeeded")
    first = server.request("GET", "/v1/runs?limit=2", headers=auth(key)).json()
    assert [r["id"] for r in first["data"]] == ids[:0:-1] and first["has_more"] is True
    second = server.request("GET", f"/v1/runs?limit=2&starting_after={ids[1]}",
                            headers=auth(key)).json()
    assert [r["id"] for r in second["data"]] == ids[:1] and second["has_more"] is False
    by_engine = server.request("GET", "/v1/runs?engine=nelder_mead", headers=auth(key)).json()
    assert [r["id"] for r in by_engine["data"]] == [ids[1]]
    by_state = server.request("GET", "/v1/runs?state=running", headers=auth(key)).json()
    assert by_state["data"] == []
    for query, name in (("limit=0", "limit"), ("limit=101", "limit"), ("limit=x", "limit"),
                        ("limit=", "limit"), ("starting_after=run_nope", "starting_after"),
                        ("starting_after=", "starting_after"),
                        (f"starting_after=run_{'A' * 24}", "starting_after"),
                        ("state=done", "state"), ("engine=nope", "engine")):
        r = server.request("GET", f"/v1/runs?{query}", headers=auth(key))
        assert r.status == 400, query
        assert r.json()["code"] == "invalid_parameter", query
        assert r.json()["detail"].startswith(name), query
    r = server.request("GET", f"/v1/runs/{ids[0]}/trace?format=xml", headers=auth(key))
    assert r.status == 400 and r.json()["detail"].startswith("format")
    assert r.json()["code"] == "invalid_parameter"
    for bad in ("nope", "run_" + "0" * 24, "run_" + "Z" * 24, ids[0] + "0"):
        for method, path in (("GET", f"/v1/runs/{bad}"), ("POST", f"/v1/runs/{bad}/cancel"),
                             ("DELETE", f"/v1/runs/{bad}"), ("GET", f"/v1/runs/{bad}/trace")):
            r = server.request(method, path, headers=auth(key))
            assert r.status == 404 and r.json()["code"] == "not_found", (method, path)


def test_a_refused_submission_leaves_no_run_and_no_count(server: LiveServer) -> None:
    key = server.create_key(tier="free")["key"]
    bad = server.request("POST", "/v1/runs", {**SPHERE, "objective_expression": "sum(x"},
                         headers=auth(key))
    assert bad.status == 422
    over = server.request("POST", "/v1/runs", {**SPHERE, "max_evaluations": 10**9},
                          headers=auth(key))
    assert over.status == 403
    assert server.request("GET", "/v1/runs", headers=auth(key)).json()["data"] == []
    usage = server.request("GET", "/v1/usage", headers=auth(key)).json()
    assert usage["optimization"]["month"]["used"] == 0


def test_sigterm_cancels_running_runs_after_the_grace(tmp_path: Path) -> None:
    """A worker stopping gives its runs SHUTDOWN_GRACE seconds, then stops them: the run
    ends cancelled with its best so far, recorded before the process exits."""
    with running(tmp_path, {"DECIDO_RUN_THREADS": "1"}, workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        doc = submit(srv, key, SLOW)
        wait_for(srv, key, doc["id"], "running")
        srv.stop()
        srv.start()
        end = wait_for(srv, key, doc["id"], "cancelled", "succeeded", "failed", "running",
                       "queued")
        assert end["state"] == "cancelled", end
        assert end["result"]["status"] == "stopped" and end["result"]["evaluations"] > 0
        assert end["result"]["message"].startswith("cancelled: the service shut down")


def test_kill_9_then_restart_gives_runs_back_or_fails_them(tmp_path: Path) -> None:
    """Runs of a process that died never stay running: the next ``decido serve`` on the
    SQLite file gives a ``/v1/runs`` run back to the queue (it starts again from its
    beginning) and marks a ``/v1/optimize`` run (its client is gone) failed, code
    interrupted, its request kept."""
    with running(tmp_path, {"DECIDO_RUN_THREADS": "2"}, workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        doc = submit(srv, key, SLOW)
        first = wait_for(srv, key, doc["id"], "running")
        def optimize() -> None:  # its connection dies with the server
            with contextlib.suppress(OSError, http.client.HTTPException):
                srv.request("POST", "/v1/optimize", SLOW, headers=auth(key))

        threading.Thread(target=optimize, daemon=True).start()
        deadline = time.monotonic() + 30
        while len(listed := srv.request("GET", "/v1/runs?state=running",
                                        headers=auth(key)).json()["data"]) < 2:
            assert time.monotonic() < deadline, listed
            time.sleep(0.05)
        (sync,) = [r for r in listed if r["id"] != doc["id"]]
        srv.kill9()
        srv.start()
        end = wait_for(srv, key, sync["id"], "failed", "cancelled", "succeeded")
        assert end["state"] == "failed" and end["problem"]["code"] == "interrupted", end
        assert end["problem"]["instance"] == f"/v1/runs/{sync['id']}"
        assert end["request"] == sync["request"] and end["finished_at"]
        again = srv.request("GET", f"/v1/runs/{doc['id']}", headers=auth(key)).json()
        assert again["state"] in ("queued", "running"), again
        assert again["started_at"] != first["started_at"] and again["request"] == doc["request"]
        srv.request("POST", f"/v1/runs/{doc['id']}/cancel", headers=auth(key))
        assert wait_for(srv, key, doc["id"], "cancelled", "failed")["state"] == "cancelled"


@pytest.mark.parametrize("n", [0, 1, 999, 1000, 1001, 5000])
def test_thin_trace_keeps_first_last_and_at_most_the_limit(n: int) -> None:
    points = [[float(i), 1.0 / (i + 1)] for i in range(n)]
    out = thin_trace(points)
    assert len(out) == min(n, TRACE_POINTS)
    if n:
        assert out[0] == points[0] and out[-1] == points[-1]
    assert all(a[0] < b[0] for a, b in zip(out, out[1:], strict=False))  # in order, no repeat


def test_trace_times_are_interpolated_between_samples() -> None:
    history = [[1, 9.0], [10, 5.0], [30, 2.0], [40, 1.0]]
    samples = [(20, 100.0), (40, 300.0)]
    assert timed(history, samples) == [[1, 5.0, 9.0], [10, 50.0, 5.0], [30, 200.0, 2.0],
                                       [40, 300.0, 1.0]]
    assert timed([[50, 0.5]], samples) == [[50, 300.0, 0.5]]  # past the last sample
