"""``GET /v1/studies/{id}/events`` on a live server: trial transitions, the best so far
(or the front's size and hypervolume), the study's state changes and one ``finished``
event, then the end; ``Last-Event-ID`` resumes with no duplicate and no gap (on two nodes
sharing PostgreSQL too); lease expiry and stop seen as events; other keys, bad ids and
the per-key stream cap."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
from conftest import LiveServer, auth, running
from sse import Event, Stream
from test_api_runs import SLOW
from test_store_multinode import (
    database,  # noqa: F401 - fixture
    nodes,
)

from decido_service.types.studies import Study, Trial

SPHERE = {"bounds": [[-5, 5], [-5, 5]], "engine": "cmaes", "seed": 7, "max_trials": 4}


def create(server: LiveServer, key: str, body: dict[str, Any]) -> str:
    r = server.request("POST", "/v1/studies", body, headers=auth(key))
    assert r.status == 201, r.body
    sid: str = r.json()["id"]
    return sid


def post(server: LiveServer, key: str, path: str, body: Any = None) -> Any:
    r = server.request("POST", path, body, headers=auth(key), timeout=60)
    assert r.status == 200, (path, r.body)
    return r.json()


def watch(server: LiveServer, key: str, sid: str, last_id: str | None = None,
          stop_after: int | None = None) -> list[Event]:
    """The events of one connection (all of them until the stream ends, or the first
    ``stop_after``)."""
    headers = auth(key)
    if last_id is not None:
        headers["Last-Event-ID"] = last_id
    out: list[Event] = []
    with Stream(server.port, f"/v1/studies/{sid}/events", headers) as stream:
        assert stream.status == 200, stream.response.read()
        assert stream.headers["content-type"].startswith("text/event-stream")
        for event in stream.events():
            if event.kind == "comment":
                continue
            out.append(event)
            if stop_after is not None and len(out) >= stop_after:
                break
    return out


class Watching:
    """A stream read in a thread while the test drives the study."""

    def __init__(self, server: LiveServer, key: str, sid: str) -> None:
        self.events: list[Event] = []
        self.thread = threading.Thread(
            target=lambda: self.events.extend(watch(server, key, sid)), daemon=True)
        self.thread.start()

    def join(self, timeout: float = 30) -> list[Event]:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the stream did not end"
        return self.events


def check_contract(events: list[Event]) -> None:
    """Ids consecutive from the ``study`` event's; data of each kind as documented;
    ``finished`` once, last."""
    assert events[0].kind == "study"
    msgspec.convert(events[0].data, Study)
    first = int(events[0].id or "")
    assert [int(e.id or "") for e in events[1:]] == list(range(first + 1, first + len(events)))
    kinds = [e.kind for e in events]
    assert kinds.count("finished") == 1 and kinds[-1] == "finished", kinds
    for e in events[1:]:
        if e.kind == "trial":
            msgspec.convert(e.data, Trial)
        elif e.kind == "best":
            assert set(e.data) in ({"best"}, {"front_size", "hypervolume"}), e.data
        else:
            assert e.kind in ("state", "finished"), e.kind
            assert set(e.data) == {"id", "state", "trials"}


def transitions(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.data["number"], e.data["state"]) for e in events if e.kind == "trial"]


def test_watch_a_study_until_it_is_finished(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    sid = create(server, key, SPHERE)
    watching = Watching(server, key, sid)
    time.sleep(0.3)  # connected before the first change (the stream starts at the study)
    base = f"/v1/studies/{sid}"
    got = post(server, key, f"{base}/suggest", {"count": 2})["trials"]
    post(server, key, f"{base}/trials/{got[0]['number']}/complete", {"value": 3.0})
    post(server, key, f"{base}/trials/{got[1]['number']}/complete",
         {"state": "infeasible", "reason": "out of range"})
    more = post(server, key, f"{base}/suggest", {"count": 5})["trials"]
    assert [t["number"] for t in more] == [2, 3]
    post(server, key, f"{base}/complete", {"trials": [{"number": 2, "value": 1.0},
                                                     {"number": 3, "state": "failed"}]})
    events = watching.join()
    check_contract(events)
    assert events[0].id == "0" and events[0].data["state"] == "active"
    assert transitions(events) == [(0, "active"), (1, "active"), (0, "completed"),
                                   (1, "infeasible"), (2, "active"), (3, "active"),
                                   (2, "completed"), (3, "failed")]
    bests = [e.data["best"]["number"] for e in events if e.kind == "best"]
    assert bests == [0, 2]  # sent when it changed
    tail = [(e.kind, e.data["state"]) for e in events[-2:]]
    assert tail == [("state", "completed"), ("finished", "completed")]
    assert events[-1].data["trials"] == {"completed": 2, "infeasible": 1, "failed": 1}
    # joining a finished study: the study at once, then the end
    late = watch(server, key, sid)
    assert [(e.kind, e.id) for e in late] == [("study", events[-1].id)]
    assert late[0].data["state"] == "completed"


def test_resume_with_last_event_id_has_no_duplicate_and_no_gap(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    sid = create(server, key, {**SPHERE, "max_trials": 6, "engine": "random"})
    base = f"/v1/studies/{sid}"
    first = watch(server, key, sid, stop_after=1)
    assert [(e.kind, e.id) for e in first] == [("study", "0")]
    seen = list(first)
    for _ in range(3):  # changes between reconnections, each resumed after the last seen
        got = post(server, key, f"{base}/suggest", {"count": 2})["trials"]
        for t in got:
            post(server, key, f"{base}/trials/{t['number']}/complete", {"value": t["x"][0]})
        more = watch(server, key, sid, last_id=seen[-1].id, stop_after=3)
        assert more and not {e.id for e in more} & {e.id for e in seen}, "duplicate event"
        seen += more
    seen += watch(server, key, sid, last_id=seen[-1].id)  # to the end
    check_contract(seen)
    assert sorted(n for n, s in transitions(seen) if s == "completed") == list(range(6))
    # a resume from any id replays exactly the events after it
    for cut in (0, 3, len(seen) - 2):
        again = watch(server, key, sid, last_id=seen[cut].id)
        assert [(e.id, e.kind, e.data) for e in again] == \
            [(e.id, e.kind, e.data) for e in seen[cut + 1:]]
    assert watch(server, key, sid, last_id=seen[-1].id) == []


def test_a_study_keeps_its_newest_events_and_an_older_resume_gets_the_study(
        tmp_path: Path) -> None:
    """Events are not kept for ever: the newest DECIDO_STUDY_EVENTS, the older deleted
    as new ones are written; a resume from before them is sent the ``study`` event (the
    study now) and the events after it, never a silent gap."""
    import sqlite3

    with running(tmp_path, {"DECIDO_STUDY_EVENTS": "5"}) as server:
        key = server.create_key(tier="pro")["key"]
        sid = create(server, key, {**SPHERE, "max_trials": 6, "engine": "random"})
        base = f"/v1/studies/{sid}"
        for _ in range(3):
            for t in post(server, key, f"{base}/suggest", {"count": 2})["trials"]:
                post(server, key, f"{base}/trials/{t['number']}/complete",
                     {"value": t["x"][0]})
        last = server.request("GET", base, headers=auth(key)).json()
        assert last["state"] == "completed"
        with sqlite3.connect(server.db) as db:
            kept = [r[0] for r in db.execute(
                "SELECT seq FROM study_events WHERE study_id = ? ORDER BY seq", (sid,))]
        newest = kept[-1]
        assert newest > 12 and kept == list(range(newest - 4, newest + 1))
        # within what is kept: exactly the events after the id
        within = watch(server, key, sid, last_id=str(newest - 5))
        assert [int(e.id or "") for e in within] == kept
        assert within[-1].kind == "finished"
        # older than what is kept: the study now (the last event's id), then the end
        for old in ("0", "3", str(newest - 6)):
            again = watch(server, key, sid, last_id=old)
            assert [(e.kind, e.id) for e in again] == [("study", str(newest))], old
            assert again[0].data["trials"]["completed"] == 6


def test_lease_expiry_stop_and_abandon_are_events(tmp_path: Path) -> None:
    with running(tmp_path, {"DECIDO_FAKE_NOW": ""}) as server:
        key = server.create_key(tier="pro")["key"]
        sid = create(server, key, {**SPHERE, "max_trials": None, "trial_lease": 1})
        base = f"/v1/studies/{sid}"
        watching = Watching(server, key, sid)
        time.sleep(0.3)
        held = post(server, key, f"{base}/suggest", {"count": 2})["trials"]
        # nobody calls: the sweep fails both within 2 x the lease and queues their points
        deadline = time.monotonic() + 4
        while server.request("GET", f"{base}/trials?state=queued",
                             headers=auth(key)).json()["data"] == []:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        again = post(server, key, f"{base}/suggest", {"count": 1})["trials"]
        assert again[0]["x"] == held[0]["x"]
        post(server, key, f"{base}/trials/{again[0]['number']}/abandon")
        post(server, key, f"{base}/stop")
        events = watching.join()
    check_contract(events)
    trials = [e.data for e in events if e.kind == "trial"]
    expired = [t for t in trials if t["reason"] == "lease_expired"]
    assert sorted(t["number"] for t in expired) == [0, 1]
    assert all(t["state"] == "failed" for t in expired)
    assert [(t["number"], t["state"]) for t in trials if t["number"] >= 2] == [
        (2, "queued"), (3, "queued"), (2, "active"), (2, "abandoned"), (3, "abandoned")]
    assert [(e.kind, e.data["state"]) for e in events[-2:]] == [("state", "stopped"),
                                                                 ("finished", "stopped")]


def test_a_stopped_study_finishes_when_its_last_trial_does(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    sid = create(server, key, {**SPHERE, "max_trials": None})
    base = f"/v1/studies/{sid}"
    got = post(server, key, f"{base}/suggest", {"count": 1})["trials"]
    post(server, key, f"{base}/stop")
    with Stream(server.port, f"{base}/events", auth(key)) as stream:
        events = stream.events()
        first = next(events)
        assert first.kind == "study" and first.data["state"] == "stopped"
        post(server, key, f"{base}/trials/{got[0]['number']}/complete", {"value": 2.0})
        rest = [e for e in events if e.kind != "comment"]
    assert [e.kind for e in rest] == ["trial", "best", "finished"]
    assert rest[-1].data["trials"] == {"completed": 1}
    # a finished study takes told points, never queued ones (it could never suggest them)
    queued = server.request("POST", f"{base}/trials", {"trials": [
        {"x": [1, 1], "state": "queued"}]}, headers=auth(key))
    assert queued.status == 409 and queued.json()["code"] == "study_finished"
    post(server, key, f"{base}/trials", {"trials": [{"x": [1, 1], "value": 2.0}]})


def test_several_objectives_send_the_front_size_and_hypervolume(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    sid = create(server, key, {"bounds": [[0, 1]], "engine": "moea", "seed": 5,
                               "objectives": ["cost", {"name": "quality",
                                                       "goal": "maximize"}]})
    base = f"/v1/studies/{sid}"
    post(server, key, f"{base}/trials", {"trials": [
        {"x": [0.1], "values": [0.1, 0.2]}, {"x": [0.4], "values": [0.4, 0.8]}]})
    post(server, key, f"{base}/trials", {"trials": [{"x": [0.5], "values": [0.8, 0.1]}]})
    post(server, key, f"{base}/stop")
    events = watch(server, key, sid, last_id="0")
    fronts = [e.data for e in events if e.kind == "best"]
    assert [f["front_size"] for f in fronts] == [2]  # a dominated point changes nothing
    assert fronts[0]["hypervolume"] > 0
    assert [e.kind for e in events][-2:] == ["state", "finished"]


def test_other_keys_bad_ids_and_bad_last_event_id(server: LiveServer) -> None:
    key = server.create_key(tier="free")["key"]
    other = server.create_key(tier="free")["key"]
    sid = create(server, key, {**SPHERE, "max_trials": None})
    for who, path in ((other, f"/v1/studies/{sid}/events"),
                      (key, "/v1/studies/st_nope/events"),
                      (key, f"/v1/studies/st_{'0' * 24}/events")):
        r = server.request("GET", path, headers=auth(who))
        assert r.status == 404 and r.json()["code"] == "not_found", path
    assert server.request("GET", f"/v1/studies/{sid}/events").status == 401
    for bad in ("1", "x", "2.5", "-1"):
        r = server.request("GET", f"/v1/studies/{sid}/events",
                           headers={**auth(key), "Last-Event-ID": bad})
        assert r.status == 400, (bad, r.body)
        assert r.header("content-type") == "application/problem+json"
        assert r.json()["code"] == "invalid_parameter"


def test_streams_of_runs_and_studies_share_the_tiers_cap(tmp_path: Path) -> None:
    env = {"DECIDO_TIERS": '{"team": {"max_streams": 2}}'}
    with running(tmp_path, env, workers=1) as srv:
        key = srv.create_key(tier="team")["key"]
        other = srv.create_key(tier="team")["key"]
        sid = create(srv, key, {**SPHERE, "max_trials": None})
        run = srv.request("POST", "/v1/runs", {**SLOW, "time_limit": 20}, headers=auth(key))
        assert run.status == 202, run.body
        path = f"/v1/studies/{sid}/events"
        try:
            with Stream(srv.port, f"/v1/runs/{run.json()['id']}/events", auth(key)) as first, \
                    Stream(srv.port, path, auth(key)) as second:
                assert first.status == second.status == 200
                over = srv.request("GET", path, headers=auth(key))
                assert over.status == 429 and over.json()["code"] == "too_many_streams"
                assert over.json()["limit_value"] == 2 and over.header("retry-after") == "5"
                theirs = create(srv, other, {**SPHERE, "max_trials": None})
                assert watch(srv, other, theirs, stop_after=1)[0].kind == "study"
            time.sleep(0.2)  # the closed streams are let go
            assert watch(srv, key, sid, stop_after=1)[0].kind == "study"
        finally:
            srv.request("POST", f"/v1/runs/{run.json()['id']}/cancel", headers=auth(key))


def test_resume_across_two_nodes_on_postgresql(tmp_path: Path,
                                               database: tuple[str, str]) -> None:  # noqa: F811
    with nodes(tmp_path, database[1], 2) as servers:
        key = servers[0].create_key(tier="team")["key"]
        sid = create(servers[0], key, {**SPHERE, "max_trials": 40, "engine": "random"})
        base = f"/v1/studies/{sid}"
        watchers = [Watching(servers[i], key, sid) for i in range(2)]
        time.sleep(0.5)

        def client(i: int) -> None:
            for _ in range(4):
                got = post(servers[i % 2], key, f"{base}/suggest", {"count": 1})["trials"]
                post(servers[(i + 1) % 2], key, f"{base}/trials/{got[0]['number']}/complete",
                     {"value": got[0]["x"][0]})

        threads = [threading.Thread(target=client, args=(i,)) for i in range(10)]
        for t in threads:
            t.start()
        # a third watcher hops between the nodes, resuming after what it saw
        hops: list[Event] = watch(servers[0], key, sid, stop_after=5)
        for k in range(100):
            more = watch(servers[k % 2], key, sid, last_id=hops[-1].id, stop_after=7)
            hops += more
            if hops[-1].kind == "finished":
                break
        for t in threads:
            t.join()
        full = [w.join(60) for w in watchers]
    for events in (*full, hops):
        check_contract(events)
        numbers = sorted(n for n, s in transitions(events) if s == "completed")
        assert numbers == list(range(40)), numbers
    assert [(e.id, e.kind, e.data) for e in full[0]] == [(e.id, e.kind, e.data) for e in full[1]]
    ids = [int(e.id or "") for e in hops]
    assert ids == list(range(ids[0], ids[0] + len(ids)))  # no gap, no duplicate


def test_study_completed_webhook_is_delivered_once_signed(tmp_path: Path) -> None:
    """A study that reaches max_trials, and a stopped one whose last trial finishes, each
    deliver one ``study.completed`` (Standard Webhooks, verified by the receiver); an
    endpoint for runs' events only gets none; the same change's events say ``finished``."""
    from test_webhooks import ENV, receiver, wait_delivery
    from test_webhooks import create as create_hook

    with running(tmp_path, ENV, workers=1) as server, \
            receiver(tmp_path / "rcv") as rcv:
        key = server.create_key(tier="pro")["key"]
        hook = create_hook(server, key, rcv.url, ["study.completed"])
        runs_only = create_hook(server, key, rcv.url, ["run.succeeded"])
        rcv.secrets(hook["secret"], runs_only["secret"])
        sid = create(server, key, {**SPHERE, "max_trials": 2, "metadata": {"team": "a"}})
        base = f"/v1/studies/{sid}"
        got = post(server, key, f"{base}/suggest", {"count": 2})["trials"]
        post(server, key, f"{base}/trials/{got[0]['number']}/complete", {"value": 1.0})
        assert rcv.received() == []  # one trial is still active
        post(server, key, f"{base}/trials/{got[1]['number']}/complete", {"value": 0.5})
        first = rcv.wait(lambda g: len(g) >= 1)
        body = json.loads(first[0]["body"])
        study = server.request("GET", base, headers=auth(key)).json()
        assert body["type"] == "study.completed" and body["data"] == study
        assert body["data"]["state"] == "completed" and body["data"]["metadata"] == {"team": "a"}
        assert first[0]["verified"] == [hook["secret"]]
        # stopped with an active trial: completed once that trial finishes
        other = create(server, key, {**SPHERE, "max_trials": None})
        held = post(server, key, f"/v1/studies/{other}/suggest", {"count": 1})["trials"]
        post(server, key, f"/v1/studies/{other}/stop")
        post(server, key, f"/v1/studies/{other}/trials/{held[0]['number']}/abandon")
        got2 = rcv.wait(lambda g: len(g) >= 2)
        data = json.loads(got2[1]["body"])["data"]
        assert data["id"] == other and data["state"] == "stopped"
        assert data["trials"]["abandoned"] == 1 and data["trials"]["active"] == 0
        time.sleep(1.0)  # nothing more: once per study, never to the runs-only endpoint
        assert len(rcv.received()) == 2
        assert deliveries_of(server, key, runs_only["id"]) == []
        found = wait_delivery(server, key, hook["id"], lambda d: d["state"] == "delivered")
        assert found["event"] == "study.completed"
        events = watch(server, key, other, last_id="0")
        assert events[-1].kind == "finished"


def deliveries_of(server: LiveServer, key: str, hook: str) -> list[Any]:
    r = server.request("GET", f"/v1/webhooks/{hook}/deliveries", headers=auth(key))
    assert r.status == 200, r.body
    data: list[Any] = r.json()["data"]
    return data
