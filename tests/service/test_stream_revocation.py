"""A revoked key's open streams end within seconds with a final ``error`` event (the problem
``revoked_key``), on a live server: a run's Server-Sent Events (several, on both workers),
a streamed ``POST /v1/optimize`` (NDJSON) and a study's events, the key revoked by
``decido keys revoke`` from another process while they are open (before, they went on to
the run's end)."""

from __future__ import annotations

import http.client
import json
import subprocess
import threading
import time
from typing import Any

from conftest import LiveServer, auth, decido_command
from sse import Stream
from test_api_runs import SLOW, submit, wait_for

#: seconds within which every stream of a revoked key must have ended
PROMPT = 5.0


def _watch(server: LiveServer, key: str, run_id: str, out: dict[str, Any],
           opened: threading.Event) -> None:
    with Stream(server.port, f"/v1/runs/{run_id}/events", auth(key), timeout=90) as stream:
        assert stream.status == 200
        events = []
        for event in stream.events():
            if event.kind != "comment":
                events.append(event)
                opened.set()
        out["events"], out["ended"] = events, time.monotonic()


def _watch_study(server: LiveServer, key: str, study_id: str, out: dict[str, Any],
                 opened: threading.Event) -> None:
    with Stream(server.port, f"/v1/studies/{study_id}/events", auth(key),
                timeout=90) as stream:
        assert stream.status == 200
        events = []
        for event in stream.events():
            if event.kind != "comment":
                events.append(event)
                opened.set()
        out["events"], out["ended"] = events, time.monotonic()


def _optimize(server: LiveServer, key: str, out: dict[str, Any],
              opened: threading.Event) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=90)
    try:
        conn.request("POST", "/v1/optimize", json.dumps({**SLOW, "time_limit": 60}),
                     {**auth(key), "Content-Type": "application/json",
                      "Accept": "application/x-ndjson"})
        response = conn.getresponse()
        assert response.status == 200
        out["run_id"] = response.getheader("Location").rsplit("/", 1)[-1]
        lines = []
        while line := response.readline():
            lines.append(json.loads(line))
            opened.set()
        out["lines"], out["ended"] = lines, time.monotonic()
    finally:
        conn.close()


def test_a_revoked_keys_streams_end_at_once_with_an_error_event(server: LiveServer) -> None:
    made = server.create_key(tier="team")
    key = made["key"]
    run = submit(server, key, {**SLOW, "time_limit": 60})
    wait_for(server, key, run["id"], "running")
    study = server.request("POST", "/v1/studies", {"bounds": [[0, 1]], "engine": "random"},
                           headers=auth(key))
    assert study.status == 201, study.json()
    threads, results = [], []
    for target, args in ([(_watch, (run["id"],))] * 4 + [(_optimize, ())]
                         + [(_watch_study, (study.json()["id"],))] * 2):
        out: dict[str, Any] = {}
        opened = threading.Event()
        thread = threading.Thread(target=target, args=(server, key, *args, out, opened),
                                  daemon=True)
        thread.start()
        assert opened.wait(30), "the stream sent nothing"
        threads.append(thread)
        results.append(out)
    time.sleep(1.0)  # every stream open and waiting for its run
    subprocess.run([*decido_command(), "keys", "revoke", made["id"], "--db",
                    server.db_url or str(server.db)], check=True, capture_output=True,
                   env=server.environment(), timeout=60)
    revoked = time.monotonic()
    for thread in threads:
        thread.join(PROMPT + 5)
        assert not thread.is_alive(), "a stream of the revoked key is still open"
    for out in results:
        assert out["ended"] - revoked < PROMPT, out["ended"] - revoked
    for out in results[:4]:  # the events: the run's, then one error event without an id
        last = out["events"][-1]
        assert last.kind == "error" and last.id is None, last
        assert last.data["code"] == "revoked_key" and last.data["status"] == 401
        assert all(e.kind in ("state", "progress") for e in out["events"][:-1])
    streamed = results[4]["lines"]  # NDJSON: progress, then the problem
    assert streamed[-1]["event"] == "error" and streamed[-1]["code"] == "revoked_key"
    assert all(line["event"] == "progress" for line in streamed[:-1])
    for out in results[5:]:  # a study's events: the study, then the error event
        last = out["events"][-1]
        assert last.kind == "error" and last.id is None, last
        assert last.data["code"] == "revoked_key" and last.data["status"] == 401
        assert [e.kind for e in out["events"][:-1]] == ["study"]
    # the key is refused from now on; the streamed run was stopped, the queued one goes on
    r = server.request("GET", f"/v1/runs/{run['id']}/events", headers=auth(key))
    assert r.status == 401 and r.json()["code"] == "revoked_key"
