"""Runs across nodes on one PostgreSQL database (three ``decido serve`` processes): a run
submitted to node A is watched over SSE from node B and cancelled from node C; queued
runs are taken by whichever node has a free thread; ``kill -9`` of the node running a run
is noticed by the others (a lease that runs out) and the run starts again on another."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from conftest import LiveServer, auth
from sse import Stream
from test_api_runs import SLOW, SPHERE, submit, wait_for
from test_store_multinode import database  # noqa: F401 - fixture
from test_store_multinode import nodes as fleet

FINAL = ("succeeded", "failed", "cancelled")
#: one run thread per worker, a 2 s lease: a dead node's run is noticed in seconds
ENV = {"DECIDO_RUN_THREADS": "1", "DECIDO_RUN_LEASE": "2"}


@contextlib.contextmanager
def nodes(workdir: Path, url: str, count: int = 3) -> Iterator[list[LiveServer]]:
    """Three one-worker nodes on the real clock (leases and time limits are real time)."""
    with fleet(workdir, url, count, env={**ENV, "DECIDO_FAKE_NOW": ""}, workers=1) as servers:
        yield servers


def test_submit_on_a_watch_on_b_cancel_from_c(
        tmp_path: Path, database: tuple[str, str]) -> None:  # noqa: F811
    with nodes(tmp_path, database[1]) as (a, b, c):
        key = a.create_key(tier="team")["key"]
        run = submit(a, key, SLOW)
        seen: list[tuple[float, str, dict]] = []
        with Stream(b.port, f"/v1/runs/{run['id']}/events", auth(key)) as stream:
            def read() -> None:
                for event in stream.events():
                    if event.kind != "comment":
                        seen.append((time.monotonic(), event.kind, event.data))

            reader = threading.Thread(target=read)
            reader.start()
            deadline = time.monotonic() + 30
            while not any(kind == "progress" for _, kind, _ in seen):
                assert time.monotonic() < deadline, seen
                time.sleep(0.05)
            sent = time.monotonic()
            r = c.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(key))
            assert r.status == 202
            reader.join(60)
        kinds = [kind for _, kind, _ in seen]
        assert kinds[-1] == "result" and seen[-1][2]["state"] == "cancelled"
        cancelled_at = next(t for t, kind, d in seen
                            if kind == "state" and d["state"] == "cancelled")
        # the cancel crossed three processes through the store: C sets the flag, A reads
        # it and stops, B reads the final row (printed for docs/service.md)
        print(f"cancel on C -> cancelled state on B's stream: {cancelled_at - sent:.3f} s")
        assert c.request("GET", f"/v1/runs/{run['id']}", headers=auth(key)).json()[
            "state"] == "cancelled"


def test_queued_runs_go_to_any_node(tmp_path: Path, database: tuple[str, str]) -> None:  # noqa: F811
    with nodes(tmp_path, database[1]) as servers:
        key = servers[0].create_key(tier="team")["key"]
        busy = submit(servers[0], key, SLOW)  # A's only thread is taken
        wait_for(servers[0], key, busy["id"], "running")
        small = [submit(servers[0], key, {**SPHERE, "seed": s}) for s in range(4)]
        for run in small:
            end = wait_for(servers[1], key, run["id"], *FINAL, timeout=60)
            assert end["state"] == "succeeded", end
        servers[2].request("POST", f"/v1/runs/{busy['id']}/cancel", headers=auth(key))
        assert wait_for(servers[1], key, busy["id"], *FINAL)["state"] == "cancelled"


def test_kill_9_of_the_node_running_a_run(tmp_path: Path, database: tuple[str, str]) -> None:  # noqa: F811
    with nodes(tmp_path, database[1]) as (a, b, _):
        key = a.create_key(tier="team")["key"]
        run = submit(a, key, SLOW)
        first = wait_for(a, key, run["id"], "running")["started_at"]
        a.kill9()
        started = time.monotonic()
        while True:  # given back to the queue and started again by B or C
            again = wait_for(b, key, run["id"], "running", *FINAL, timeout=60)
            if again["state"] != "running" or again["started_at"] != first:
                break
            assert time.monotonic() - started < 60
            time.sleep(0.1)
        noticed = time.monotonic() - started
        assert again["state"] == "running" and again["started_at"] != first, again
        assert noticed < 30, noticed
        print(f"kill -9 of the running node -> running again on another node: {noticed:.1f} s")
        b.request("POST", f"/v1/runs/{run['id']}/cancel", headers=auth(key))
        assert wait_for(b, key, run["id"], *FINAL)["state"] == "cancelled"
