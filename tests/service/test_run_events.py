"""``GET /v1/runs/{id}/events`` on a live server: state, progress and one terminal event;
resume with Last-Event-ID (no duplicate, no gap); a finished run at once; heartbeats;
other keys and bad ids."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
from conftest import LiveServer, auth, running
from sse import Event, Stream
from test_api_runs import SLOW, SPHERE, submit, wait_for

from decido_service.types import Run

FINAL = ("succeeded", "failed", "cancelled")


def watch(server: LiveServer, key: str, run_id: str, last_id: str | None = None,
          stop_after: int | None = None) -> list[Event]:
    """The events of one connection (all of them, or the first ``stop_after``)."""
    headers = auth(key)
    if last_id is not None:
        headers["Last-Event-ID"] = last_id
    out: list[Event] = []
    with Stream(server.port, f"/v1/runs/{run_id}/events", headers) as stream:
        assert stream.status == 200, stream.response.read()
        assert stream.headers["content-type"].startswith("text/event-stream")
        for event in stream.events():
            if event.kind == "comment":
                continue
            out.append(event)
            if stop_after is not None and len(out) >= stop_after:
                break
    return out


def check_contract(events: list[Event], one_connection: bool = True) -> None:
    """Every event has an id; one terminal event, last; states in lifecycle order; the
    run's request in the first run document of a connection only."""
    assert all(e.id for e in events)
    kinds = [e.kind for e in events]
    assert kinds[-1] in ("result", "error") and sum(k in ("result", "error") for k in kinds) == 1
    documents = [e.data for e in events if e.kind in ("state", "result", "error")]
    if one_connection:
        assert "request" in documents[0]
        assert all("request" not in d for d in documents[1:])
    for e in events:
        if e.kind in ("state", "result", "error"):
            msgspec.convert({"request": documents[0]["request"], **e.data}, Run)
        if e.kind == "progress":
            assert set(e.data) == {"evaluations", "iterations", "best", "elapsed_ms"}
    states = [e.data["state"] for e in events if e.kind == "state"]
    order = ["queued", "running", "final"]
    ranks = [order.index(s if s in order else "final") for s in states]
    assert ranks == sorted(set(ranks)), states


def test_watch_a_run_from_queued_to_its_result(server: LiveServer) -> None:
    key = server.create_key(tier="team")["key"]
    run = submit(server, key, {**SLOW, "time_limit": 2})
    events = watch(server, key, run["id"])
    check_contract(events)
    states = [e.data["state"] for e in events if e.kind == "state"]
    assert states[-2:] == ["running", "succeeded"], states
    assert any(e.kind == "progress" for e in events)
    assert events[-1].kind == "result" and events[-1].data["state"] == "succeeded"
    assert events[-1].data["result"]["status"] == "time_limit"
    evaluations = [e.data["evaluations"] for e in events if e.kind == "progress"]
    assert evaluations == sorted(set(evaluations))


def test_joining_a_finished_run_yields_its_final_state_and_result_at_once(
        server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    run = submit(server, key, SPHERE)
    done = wait_for(server, key, run["id"], *FINAL)
    events = watch(server, key, run["id"])
    assert [e.kind for e in events] == ["state", "result"]
    # the request once: the result's document is the run without it
    assert events[0].data == done
    assert events[1].data == {k: v for k, v in done.items() if k != "request"}
    # resuming after the terminal event: nothing more, the stream ends
    assert watch(server, key, run["id"], last_id=events[-1].id) == []
    # resuming after the final state: only the terminal event
    assert [e.kind for e in watch(server, key, run["id"], last_id=events[0].id)] == ["result"]


def test_resume_with_last_event_id_has_no_duplicate_and_no_gap(server: LiveServer) -> None:
    key = server.create_key(tier="team")["key"]
    run = submit(server, key, {**SLOW, "time_limit": 3})
    first = watch(server, key, run["id"], stop_after=1)
    assert first[0].kind == "state"
    seen = list(first)
    # reconnect after each event, several times, until the stream ends
    while seen[-1].kind not in ("result", "error"):
        more = watch(server, key, run["id"], last_id=seen[-1].id, stop_after=2)
        assert more, "a resumed stream of an unfinished run sends something"
        assert not {e.id for e in more} & {e.id for e in seen}, "duplicate event"
        seen += more
    check_contract(seen, one_connection=False)
    states = [e.data["state"] for e in seen if e.kind == "state"]
    assert states[0] in ("queued", "running") and states[-1] == "succeeded"
    if states[0] == "queued":
        assert states == ["queued", "running", "succeeded"]
    # a resume from "queued" after the run ended replays the missed "running" state
    replay = watch(server, key, run["id"], last_id="1")
    assert [e.kind for e in replay] == ["state", "state", "result"]
    assert [e.data["state"] for e in replay[:2]] == ["running", "succeeded"]
    assert replay[0].data["result"] is None and replay[0].data["finished_at"] is None


def test_cancel_is_seen_as_a_state_and_a_result(server: LiveServer) -> None:
    key = server.create_key(tier="team")["key"]
    run = submit(server, key, SLOW)
    wait_for(server, key, run["id"], "running")
    with Stream(server.port, f"/v1/runs/{run['id']}/events", auth(key)) as stream:
        events = stream.events()
        first = next(events)
        assert first.kind == "state" and first.data["state"] == "running"
        r = server.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(key))
        assert r.status == 202
        rest = [e for e in events if e.kind != "comment"]
    check_contract([first, *rest])
    assert rest[-2].kind == "state" and rest[-2].data["state"] == "cancelled"
    assert rest[-1].kind == "result" and rest[-1].data["result"]["status"] == "stopped"


def test_other_keys_bad_ids_and_bad_last_event_id(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    other = server.create_key(tier="pro")["key"]
    run = submit(server, key, SPHERE)
    for who, path in ((other, f"/v1/runs/{run['id']}/events"),
                      (key, "/v1/runs/run_nope/events"),
                      (key, f"/v1/runs/run_{'0' * 24}/events")):
        r = server.request("GET", path, headers=auth(who))
        assert r.status == 404 and r.json()["code"] == "not_found", path
    assert server.request("GET", f"/v1/runs/{run['id']}/events").status == 401
    for bad in ("5", "x", "3.7", "2.abc"):
        r = server.request("GET", f"/v1/runs/{run['id']}/events",
                           headers={**auth(key), "Last-Event-ID": bad})
        assert r.status == 400 and r.json()["code"] == "invalid_parameter", bad
        assert r.json()["detail"].startswith("Last-Event-ID")


def test_ids_the_stream_never_sent_are_400_on_a_running_run(server: LiveServer) -> None:
    """``3``, ``4`` or a progress id ahead of the run, accepted before, made the client
    skip the final state and terminal events."""
    key = server.create_key(tier="team")["key"]
    run = submit(server, key, {**SLOW, "time_limit": 20})
    wait_for(server, key, run["id"], "running")
    try:
        for never in ("3", "4", f"2.{10**15}"):
            r = server.request("GET", f"/v1/runs/{run['id']}/events",
                               headers={**auth(key), "Last-Event-ID": never})
            assert r.status == 400 and r.json()["code"] == "invalid_parameter", never
            assert r.json()["detail"].startswith("Last-Event-ID")
        events = watch(server, key, run["id"], last_id="1", stop_after=1)  # one it sent
        assert events[0].id == "2" and events[0].data["state"] == "running"
    finally:
        server.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(key))
        wait_for(server, key, run["id"], *FINAL)
    # once the run has ended, its final ids were sent (or could have been)
    assert watch(server, key, run["id"], last_id="3")[-1].id == "4"
    r = server.request("GET", f"/v1/runs/{run['id']}/events",
                       headers={**auth(key), "Last-Event-ID": f"2.{10**15}"})
    assert r.status == 400


def test_streams_beyond_the_tiers_cap_are_429(tmp_path: Path) -> None:
    """1,200 watchers of one run (one key) slowed the worker's health check 60-fold: a
    key's open streams are capped per worker by its tier (max_streams)."""
    env = {"DECIDO_TIERS": '{"team": {"max_streams": 2}}'}
    with running(tmp_path, env, workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        run = submit(srv, key, {**SLOW, "time_limit": 20})
        path = f"/v1/runs/{run['id']}/events"
        try:
            with Stream(srv.port, path, auth(key)) as first, \
                    Stream(srv.port, path, auth(key)) as second:
                assert first.status == second.status == 200
                third = srv.request("GET", path, headers=auth(key))
                assert third.status == 429 and third.json()["code"] == "too_many_streams"
                assert third.json()["limit_value"] == 2 and third.header("retry-after")
                other = srv.create_key(tier="team")["key"]  # another key is not affected
                other_run = submit(srv, other, SPHERE)
                assert watch(srv, other, other_run["id"])[-1].kind == "result"
            time.sleep(0.5)  # closed streams no longer count (once the server saw them close)
            assert watch(srv, key, run["id"], stop_after=1)[0].kind == "state"
        finally:
            srv.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(key))


def test_streams_beyond_the_workers_cap_are_503(tmp_path: Path) -> None:
    """1,200 watchers over 5 keys (each within its tier's cap) took health p50 to 2 s: a
    worker's open streams, every key together, are capped too (DECIDO_WORKER_STREAMS)."""
    with running(tmp_path, {"DECIDO_WORKER_STREAMS": "3"}, workers=1) as srv:
        keys = [srv.create_key(tier="team")["key"] for _ in range(3)]
        runs = [submit(srv, key, {**SLOW, "time_limit": 20}) for key in keys[:2]]
        paths = [f"/v1/runs/{run['id']}/events" for run in runs]
        try:
            with Stream(srv.port, paths[0], auth(keys[0])) as first, \
                    Stream(srv.port, paths[0], auth(keys[0])) as second, \
                    Stream(srv.port, paths[1], auth(keys[1])) as third:
                assert first.status == second.status == third.status == 200
                fourth = srv.request("GET", paths[1], headers=auth(keys[1]))
                assert fourth.status == 503, fourth.body
                assert fourth.header("content-type") == "application/problem+json"
                assert fourth.json()["code"] == "overloaded"
                assert fourth.json()["limit_value"] == 3
                assert int(fourth.header("retry-after")) >= 1
                # a key with no stream open is refused as well: the worker is full
                third_run = submit(srv, keys[2], SPHERE)
                r = srv.request("GET", f"/v1/runs/{third_run['id']}/events",
                                headers=auth(keys[2]))
                assert r.status == 503 and r.json()["code"] == "overloaded"
            time.sleep(0.5)  # closed streams no longer count (once the server saw them close)
            assert watch(srv, keys[1], runs[1]["id"], stop_after=1)[0].kind == "state"
        finally:
            for key, run in zip(keys[:2], runs, strict=True):
                srv.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(key))


def test_a_watcher_that_does_not_read_is_dropped() -> None:
    """150 watchers that never read grew a worker by 1 GB (every event held for each):
    a stream waits for its transport to drain, and drops the watcher after a while."""
    import asyncio
    import json

    from decido_service.http.sse import send_within
    from decido_service.runs.events import Snapshot, chunks
    from decido_service.schemas import decode_optimize
    from decido_service.store import RunRow
    from decido_service.types import Budget, RunDocument, RunProgress

    request = decode_optimize(json.dumps({"bounds": [[-1, 1]] * 10,
                                          "objective_expression": "sum(x**2)"}).encode())
    doc = RunDocument(request=request, budget=Budget(max_evaluations=100, time_limit=1.0),
                      started_at="2026-01-01T00:00:00Z",
                      progress=RunProgress(evaluations=5, iterations=1, best=1.0,
                                           elapsed_ms=1.0))
    row = RunRow(id="run_" + "0" * 24, key_id="k", state="running",
                 created_at="2026-01-01T00:00:00Z", engine="random", goal="minimize", dims=10,
                 document=doc)

    class Feed:
        snapshot = Snapshot(row)

        async def changed(self, timeout: float) -> bool:
            await asyncio.sleep(timeout)
            return False

    sent: list[bytes] = []

    async def stuck(data: bytes) -> None:  # a transport that never drains
        sent.append(data)
        await asyncio.sleep(3600)

    async def send_all() -> bool:  # each chunk sent as http.sse.send_chunks sends it
        async for chunk in chunks(Feed(), (0, -1)):
            if not await send_within(stuck, chunk, 0.2):
                return False
        return True

    async def scenario() -> bool:
        return await asyncio.wait_for(send_all(), 5)

    assert asyncio.run(scenario()) is False  # dropped, not waiting for ever
    assert len(sent) == 1


def test_heartbeat_comments_while_nothing_changes(tmp_path: Path) -> None:
    """A run held in the queue (one run thread, busy) sends no event for a while: the
    stream carries ``: heartbeat`` comments (every DECIDO_SSE_HEARTBEAT seconds)."""
    env = {"DECIDO_RUN_THREADS": "1", "DECIDO_SSE_HEARTBEAT": "1"}
    with running(tmp_path, env, workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        busy = submit(srv, key, SLOW)
        waiting = submit(srv, key, SPHERE)
        with Stream(srv.port, f"/v1/runs/{waiting['id']}/events", auth(key)) as stream:
            events = stream.events()
            first = next(events)
            assert first.kind == "state" and first.data["state"] == "queued"
            assert next(events).kind == "comment" and next(events).kind == "comment"
            srv.request("POST", f"/v1/runs/{busy['id']}/cancel", headers=auth(key))
            rest = [e for e in events if e.kind != "comment"]
        check_contract([first, *rest])
        assert rest[-1].kind == "result" and rest[-1].data["state"] == "succeeded"
