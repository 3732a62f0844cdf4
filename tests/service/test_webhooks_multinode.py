"""Two nodes on one PostgreSQL database deliver webhooks: every event reaches the
receiver once per attempt (the receiver fails each event's first attempt, so each
``webhook-id`` arrives exactly twice), whichever node ran the run or made the attempt."""

from __future__ import annotations

import collections
import time
from pathlib import Path

from conftest import auth
from test_api_runs import SPHERE, submit
from test_store_multinode import (
    database,  # noqa: F401 - fixture
    nodes,
)
from test_webhooks import ENV, create, deliveries, receiver

RUNS = 12


def test_two_nodes_deliver_each_event_once_per_attempt(
        tmp_path: Path, database: tuple[str, str]) -> None:  # noqa: F811
    with nodes(tmp_path, database[1], 2, env=ENV, workers=1) as (a, b), \
            receiver(tmp_path / "rcv") as rcv:
        key = a.create_key(tier="team")["key"]
        hook = create(a, key, rcv.url)
        rcv.secrets(hook["secret"])
        rcv.plan(fail_first=True)
        for i in range(RUNS):
            submit((a, b)[i % 2], key, {**SPHERE, "seed": i})
        got = rcv.wait(lambda g: len(g) >= 2 * RUNS, timeout=90)
        per_id = collections.Counter(g["id"] for g in got)
        assert len(per_id) == RUNS and set(per_id.values()) == {2}, per_id
        assert all(g["verified"] for g in got)
        deadline = time.monotonic() + 30  # the receiver answers before the record is written
        while True:
            listed = deliveries(b, key, hook["id"], "?limit=100")["data"]
            if len(listed) == RUNS and all(d["state"] == "delivered" for d in listed):
                break
            assert time.monotonic() < deadline, listed
            time.sleep(0.1)
        assert all(len(d["attempts"]) == 2 for d in listed)
        assert [a.request("GET", f"/v1/webhooks/{hook['id']}", headers=auth(key)).status,
                b.request("GET", f"/v1/webhooks/{hook['id']}", headers=auth(key)).status] == \
            [200, 200]
