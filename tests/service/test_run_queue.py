"""The durable run queue on live servers (SQLite): the per-tier cap (429 too_many_runs),
the store-wide queue cap (503), Idempotency-Key, queued runs that survive a restart,
cancel of a queued run, cancel racing completion, the time limit of /v1/optimize
counting its wait, deleting a key's runs, and a lease that runs out."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import LiveServer, Response, auth, running
from test_api_runs import SLOW, SPHERE, submit, wait_for

FINAL = ("succeeded", "failed", "cancelled")
#: one run thread per worker, team keys capped at 2 runs, at most 3 runs queued
QUEUE_ENV = {"DECIDO_RUN_THREADS": "1", "DECIDO_RUN_BACKLOG": "3",
             "DECIDO_TIERS": json.dumps({"team": {"max_runs": 2}})}


@pytest.fixture(scope="module")
def queue_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with running(tmp_path_factory.mktemp("queue"), QUEUE_ENV, workers=2) as srv:
        yield srv


def used(server: LiveServer, key: str) -> int:
    return int(server.request("GET", "/v1/usage", headers=auth(key)).json()
               ["optimization"]["month"]["used"])


def cancel_all(server: LiveServer, key: str) -> None:
    for run in server.request("GET", "/v1/runs", headers=auth(key)).json()["data"]:
        if run["state"] not in FINAL:
            server.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(key))
            wait_for(server, key, run["id"], *FINAL)


def test_the_tier_caps_runs_queued_and_running(queue_server: LiveServer) -> None:
    srv = queue_server
    key = srv.create_key(tier="team")["key"]
    first, second = submit(srv, key, SLOW), submit(srv, key, SLOW)
    r = srv.request("POST", "/v1/runs", SLOW, headers=auth(key))
    assert r.status == 429 and r.json()["code"] == "too_many_runs", r.body
    assert r.header("retry-after") and r.json()["limit_value"] == 2
    sync = srv.request("POST", "/v1/optimize", SPHERE, headers=auth(key))
    assert sync.status == 429 and sync.json()["code"] == "too_many_runs"
    for answer in (r, sync):  # as every answer to a valid key: the per-minute counter
        assert int(answer.header("x-ratelimit-remaining")) == int(
            answer.header("x-ratelimit-limit")) - 2, answer.headers
    # refused: no row, no count
    assert used(srv, key) == 2
    assert len(srv.request("GET", "/v1/runs", headers=auth(key)).json()["data"]) == 2
    srv.request("POST", f"/v1/runs/{first['id']}/cancel", headers=auth(key))
    wait_for(srv, key, first["id"], *FINAL)
    assert srv.request("POST", "/v1/optimize", SPHERE, headers=auth(key)).status == 200
    srv.request("POST", f"/v1/runs/{second['id']}/cancel", headers=auth(key))
    wait_for(srv, key, second["id"], *FINAL)


def test_a_full_queue_is_503_and_a_queued_run_cancels_at_once(queue_server: LiveServer) -> None:
    srv = queue_server
    keys = [srv.create_key(tier="team")["key"] for _ in range(3)]
    # two running (one thread per worker), then three queued
    busy = [submit(srv, keys[0], SLOW) for _ in range(2)]
    for run in busy:
        wait_for(srv, keys[0], run["id"], "running")
    queued = [submit(srv, keys[1], SLOW), submit(srv, keys[1], SLOW),
              submit(srv, keys[2], SPHERE)]
    full = srv.request("POST", "/v1/runs", SPHERE, headers=auth(keys[2]))
    assert full.status == 503 and full.json()["code"] == "overloaded", full.body
    assert full.header("retry-after") == "1" and used(srv, keys[2]) == 1
    # a queued run nobody took ends cancelled at once, without a result
    r = srv.request("POST", f"/v1/runs/{queued[0]['id']}/cancel", headers=auth(keys[1]))
    assert r.status == 202 and r.json()["state"] == "cancelled" and r.json()["result"] is None
    for key in keys:
        cancel_all(srv, key)
    # the queue drained: the small run was taken and finished or was cancelled
    assert wait_for(srv, keys[2], queued[2]["id"], *FINAL)["state"] in FINAL


def test_idempotency_key(queue_server: LiveServer) -> None:
    srv = queue_server
    key = srv.create_key(tier="team")["key"]
    headers = {**auth(key), "Idempotency-Key": "order-42"}

    def post(_: int) -> Response:
        return srv.request("POST", "/v1/runs", SPHERE, headers=headers)

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(post, range(2)))
    statuses = sorted(a.status for a in answers)
    assert statuses in ([202, 202], [202, 409]), [a.body for a in answers]
    ids = {a.json()["id"] for a in answers if a.status == 202}
    assert len(ids) == 1 and used(srv, key) == 1
    (run_id,) = ids
    again = post(0)
    first = next(a for a in answers if a.status == 202)
    assert again.status == 202 and again.body == first.body
    assert again.header("location") == f"/v1/runs/{run_id}"
    assert again.header("idempotent-replayed") == "true"  # a replay says so
    accepted = [a.header("idempotent-replayed") for a in answers if a.status == 202]
    assert sorted(accepted, key=str) == [None, "true"][:len(accepted)]  # one first answer
    assert len(srv.request("GET", "/v1/runs", headers=auth(key)).json()["data"]) == 1
    other = srv.request("POST", "/v1/runs", {**SPHERE, "seed": 8}, headers=headers)
    assert other.status == 422 and other.json()["code"] == "idempotency_key_reused"
    too_long = srv.request("POST", "/v1/runs", SPHERE,
                           headers={**auth(key), "Idempotency-Key": "k" * 256})
    assert too_long.status == 400 and too_long.json()["detail"].startswith("Idempotency-Key")
    # /v1/optimize: the same answer again, counted once; another key's use is its own
    sync_headers = {**auth(key), "Idempotency-Key": "sync-1"}
    one = srv.request("POST", "/v1/optimize", SPHERE, headers=sync_headers)
    two = srv.request("POST", "/v1/optimize", SPHERE, headers=sync_headers)
    assert one.status == two.status == 200 and one.json() == two.json()
    assert (one.header("idempotent-replayed"), two.header("idempotent-replayed")) == (None,
                                                                                     "true")
    assert used(srv, key) == 2
    mine = srv.create_key(tier="team")["key"]
    assert srv.request("POST", "/v1/runs", SPHERE,
                       headers={**auth(mine), "Idempotency-Key": "order-42"}).status == 202


def test_a_refused_admission_frees_the_idempotency_key(queue_server: LiveServer) -> None:
    srv = queue_server
    key = srv.create_key(tier="team")["key"]
    busy = [submit(srv, key, SLOW) for _ in range(2)]
    headers = {**auth(key), "Idempotency-Key": "retry-me"}
    assert srv.request("POST", "/v1/runs", SPHERE, headers=headers).status == 429
    cancel_all(srv, key)
    assert all(wait_for(srv, key, b["id"], *FINAL) for b in busy)
    r = srv.request("POST", "/v1/runs", SPHERE, headers=headers)
    assert r.status == 202, r.body  # the 429 was not stored


def test_cancel_racing_completion(queue_server: LiveServer) -> None:
    """A cancel sent while a short run ends: 202 and the run ends cancelled or succeeded,
    or 409 once it has ended; never stuck, never both."""
    srv = queue_server
    key = srv.create_key(tier="team")["key"]
    for _ in range(6):
        run = submit(srv, key, {**SPHERE, "engine": "random", "max_evaluations": 3000})
        r = srv.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(key))
        end = wait_for(srv, key, run["id"], *FINAL)
        if r.status == 409:
            assert r.json()["code"] == "run_finished" and end["state"] == "succeeded"
        else:
            assert r.status == 202 and end["state"] in ("cancelled", "succeeded"), end


def test_delete_every_finished_run_of_a_key(queue_server: LiveServer) -> None:
    srv = queue_server
    key = srv.create_key(tier="team")["key"]
    other = srv.create_key(tier="team")["key"]
    done = [submit(srv, key, SPHERE) for _ in range(2)]
    for run in done:
        wait_for(srv, key, run["id"], *FINAL)
    theirs = submit(srv, other, SPHERE)
    busy = submit(srv, key, SLOW)
    r = srv.request("DELETE", "/v1/runs", headers=auth(key))
    assert r.status == 200 and r.json() == {"deleted": 2}, r.body
    left = srv.request("GET", "/v1/runs", headers=auth(key)).json()["data"]
    assert [x["id"] for x in left] == [busy["id"]]
    assert srv.request("GET", f"/v1/runs/{theirs['id']}", headers=auth(other)).status == 200
    cancel_all(srv, key)


def test_queued_runs_survive_a_restart(tmp_path: Path) -> None:
    env = {"DECIDO_RUN_THREADS": "1"}
    with running(tmp_path, env, workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        busy = submit(srv, key, SLOW)
        wait_for(srv, key, busy["id"], "running")
        waiting = [submit(srv, key, {**SPHERE, "seed": s}) for s in (1, 2)]
        srv.stop()  # the running run is cancelled after the grace; the queued ones stay
        db = sqlite3.connect(srv.db)
        states = dict(db.execute("SELECT id, state FROM runs").fetchall())
        db.close()
        assert states[busy["id"]] == "cancelled"
        assert [states[w["id"]] for w in waiting] == ["queued", "queued"]
        srv.start()
        for run in waiting:
            end = wait_for(srv, key, run["id"], *FINAL)
            assert end["state"] == "succeeded" and end["result"]["value"] < 1e-9


def test_the_time_limit_of_optimize_counts_its_wait(tmp_path: Path) -> None:
    """One run thread: a second /v1/optimize waits for the first, and its time limit
    runs meanwhile, so it gets the rest of it (next to nothing) once it starts."""
    env = {"DECIDO_RUN_THREADS": "1", "DECIDO_RUN_QUEUE": "1"}
    slow = {**SLOW, "bounds": [[-5, 5]] * 200, "time_limit": 3}
    with running(tmp_path, env, workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        out: dict[str, Any] = {}
        first = threading.Thread(target=lambda: out.setdefault(
            "first", srv.request("POST", "/v1/optimize", slow, headers=auth(key))))
        first.start()
        deadline = time.monotonic() + 30
        while not any(r["state"] == "running" for r in srv.request(
                "GET", "/v1/runs", headers=auth(key)).json()["data"]):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        second = srv.request("POST", "/v1/optimize", slow, headers=auth(key), timeout=60)
        first.join(60)
        assert out["first"].status == 200 and out["first"].json()["status"] == "time_limit"
        assert second.status == 200 and second.json()["status"] == "time_limit"
        # it waited most of its 3 s for the thread: it ran far less than its limit
        assert second.json()["elapsed_ms"] < out["first"].json()["elapsed_ms"] / 2


def test_a_run_whose_lease_runs_out_runs_again_with_the_same_result(tmp_path: Path) -> None:
    """A process that stops renewing its lease (here: frozen with SIGSTOP, as a dead
    node looks to the others) has its run given back to the queue by another process
    within lease + sweep interval; that one runs it again from its start, and a seeded
    run ends as the same request run without interruption does."""
    import os
    import signal

    env = {"DECIDO_RUN_THREADS": "1", "DECIDO_RUN_LEASE": "2"}
    body = {"bounds": [[-5, 5]] * 1000, "objective_expression": "sum(sin(x)**2 + cos(3*x))",
            "engine": "random", "max_evaluations": 60_000, "time_limit": 300, "seed": 11}
    with running(tmp_path, env, workers=2) as srv:
        key = srv.create_key(tier="team")["key"]
        run = submit(srv, key, body)
        wait_for(srv, key, run["id"], "running")
        db = sqlite3.connect(srv.db)
        (owner,) = db.execute("SELECT owner FROM runs WHERE id = ?", (run["id"],)).fetchone()
        db.close()
        pid = int(owner.split(":")[1])
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            while stored_row(srv.db, run["id"])[2] == 0:  # not given back yet
                assert time.monotonic() - started < 60
                time.sleep(0.1)
            noticed = time.monotonic() - started
            while (state := stored_state(srv.db, run["id"]))[0] not in FINAL:
                assert time.monotonic() - started < 120, state
                time.sleep(0.1)
        finally:
            os.kill(pid, signal.SIGCONT)
        assert noticed < 30, noticed
        assert state == ("succeeded", None), state
        # the frozen process, woken, finds the run is no longer its own and leaves it
        time.sleep(1)
        again = wait_for(srv, key, run["id"], *FINAL)
        assert stored_row(srv.db, run["id"]) == ("succeeded", None, 1)
        reference = wait_for(srv, key, submit(srv, key, body)["id"], *FINAL, timeout=120)
        assert again["result"]["x"] == reference["result"]["x"]
        assert again["result"]["value"] == reference["result"]["value"]
        assert again["result"]["evaluations"] == reference["result"]["evaluations"] == 60_000


def stored_row(path: Path, run_id: str) -> tuple[str, str | None, int]:
    """The run's state, owner and attempts, read from the SQLite file."""
    db = sqlite3.connect(path, timeout=10)
    try:
        state, owner, attempts = db.execute(
            "SELECT state, owner, attempts FROM runs WHERE id = ?", (run_id,)).fetchone()
    finally:
        db.close()
    return state, owner, int(attempts)


def stored_state(path: Path, run_id: str) -> tuple[str, str | None]:
    """The run's state and problem code, read from the SQLite file (not through a
    worker: one of them is frozen)."""
    db = sqlite3.connect(path, timeout=10)
    try:
        state, document = db.execute("SELECT state, document FROM runs WHERE id = ?",
                                     (run_id,)).fetchone()
    finally:
        db.close()
    problem = json.loads(document).get("problem")
    return state, None if problem is None else problem["code"]


def test_finished_runs_past_their_retention_are_deleted(tmp_path: Path) -> None:
    """DECIDO_RUN_RETENTION_DAYS: a worker deletes the runs finished longer ago when it
    starts (and hourly); newer ones and unfinished ones stay."""
    with running(tmp_path, {"DECIDO_RUN_RETENTION_DAYS": "7"}, workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        recent = submit(srv, key, SPHERE)
        wait_for(srv, key, recent["id"], *FINAL)
        srv.stop()
        db = sqlite3.connect(srv.db)
        with db:
            db.execute("INSERT INTO runs (id, key_id, created_at, state, document, finished_at)"
                       " SELECT ?, key_id, '2020-01-01T00:00:00Z', 'succeeded', document,"
                       " '2020-01-01T00:00:01Z' FROM runs WHERE id = ?",
                       ("run_" + "0" * 24, recent["id"]))
        db.close()
        srv.start()
        deadline = time.monotonic() + 30
        while srv.request("GET", f"/v1/runs/run_{'0' * 24}", headers=auth(key)).status != 404:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert srv.request("GET", f"/v1/runs/{recent['id']}", headers=auth(key)).status == 200


def test_sigterm_requeues_waiting_runs_and_cancels_waiting_optimize(tmp_path: Path) -> None:
    """A stopping worker gives /v1/runs runs it had not started back to the queue, and
    ends a /v1/optimize run still waiting for its thread cancelled (its client is gone)."""
    env = {"DECIDO_RUN_THREADS": "1", "DECIDO_RUN_QUEUE": "2"}
    with running(tmp_path, env, workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        busy = submit(srv, key, SLOW)
        wait_for(srv, key, busy["id"], "running")
        sync = threading.Thread(target=lambda: srv.request(
            "POST", "/v1/optimize", SPHERE, headers=auth(key), timeout=60), daemon=True)
        sync.start()
        deadline = time.monotonic() + 30
        while len(srv.request("GET", "/v1/runs?state=queued",
                              headers=auth(key)).json()["data"]) < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        waiting = srv.request("GET", "/v1/runs?state=queued", headers=auth(key)).json()["data"]
        srv.stop()
        db = sqlite3.connect(srv.db)
        states = dict(db.execute("SELECT id, state FROM runs").fetchall())
        owners = dict(db.execute("SELECT id, owner FROM runs").fetchall())
        db.close()
        (optimize_run,) = [r["id"] for r in waiting]
        assert states[busy["id"]] == "cancelled" and states[optimize_run] == "cancelled"
        assert all(owner is None for owner in owners.values())
