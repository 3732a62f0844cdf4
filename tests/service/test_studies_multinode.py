"""Studies across two nodes on one PostgreSQL database: 50 clients suggest and complete
on one study at once (every trial handed out once, nothing lost, counts right); the same
seed and the same ordered tells on two nodes give the same suggestions."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from conftest import LiveServer, auth
from test_store_multinode import (
    database,  # noqa: F401 - fixture
    nodes,
)

CLIENTS, ROUNDS = 50, 4


def test_fifty_clients_on_two_nodes(tmp_path: Path, database: tuple[str, str]) -> None:  # noqa: F811
    with nodes(tmp_path, database[1], 2) as servers:
        key = servers[0].create_key(tier="team")["key"]
        r = servers[0].request("POST", "/v1/studies", {
            "bounds": [[-5, 5]] * 3, "engine": "de", "seed": 1}, headers=auth(key))
        assert r.status == 201, r.body
        sid = r.json()["id"]
        seen: list[int] = []
        faults: list[Any] = []
        lock = threading.Lock()

        def client(i: int) -> None:
            server = servers[i % 2]
            for _ in range(ROUNDS):
                got = server.request("POST", f"/v1/studies/{sid}/suggest",
                                     {"count": 1, "client_id": f"c{i}"}, headers=auth(key),
                                     timeout=120)
                if got.status != 200:
                    faults.append(got.body)
                    return
                (trial,) = got.json()["trials"]
                value = sum(v * v for v in trial["x"])
                done = servers[(i + 1) % 2].request(
                    "POST", f"/v1/studies/{sid}/trials/{trial['number']}/complete",
                    {"value": value}, headers=auth(key), timeout=120)
                if done.status != 200:
                    faults.append(done.body)
                    return
                with lock:
                    seen.append(trial["number"])

        with ThreadPoolExecutor(CLIENTS) as pool:
            list(pool.map(client, range(CLIENTS)))
        assert not faults, faults[:3]
        assert sorted(seen) == list(range(CLIENTS * ROUNDS))
        study = servers[1].request("GET", f"/v1/studies/{sid}", headers=auth(key)).json()
        assert study["trials"]["completed"] == CLIENTS * ROUNDS
        assert sum(study["trials"].values()) == CLIENTS * ROUNDS
        best = min(sum(v * v for v in t["x"]) for t in _all(servers[0], key, sid))
        assert study["best"]["value"] == best


def _all(server: LiveServer, key: str, sid: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after = ""
    while True:
        page = server.request("GET", f"/v1/studies/{sid}/trials?limit=100{after}",
                              headers=auth(key)).json()
        out += page["data"]
        if not page["has_more"]:
            return out
        after = f"&starting_after={out[-1]['number']}"


def test_replay_on_two_nodes_gives_the_same_suggestions(
        tmp_path: Path, database: tuple[str, str]) -> None:  # noqa: F811
    with nodes(tmp_path, database[1], 2) as (a, b):
        key = a.create_key(tier="team")["key"]
        body = {"bounds": [[-3, 3]] * 4, "engine": "cmaes", "seed": 42}
        ids = [a.request("POST", "/v1/studies", body, headers=auth(key)).json()["id"]
               for _ in range(2)]
        history: list[list[list[float]]] = [[], []]
        for _ in range(6):
            for k, (sid, node, other) in enumerate(((ids[0], a, b), (ids[1], b, a))):
                # suggest on one node, tell on the other: every step crosses the store
                got = node.request("POST", f"/v1/studies/{sid}/suggest", {"count": 3},
                                   headers=auth(key)).json()["trials"]
                history[k] += [t["x"] for t in got]
                tells = [{"number": t["number"], "value": sum(abs(v) for v in t["x"])}
                         for t in got]
                r = other.request("POST", f"/v1/studies/{sid}/complete", {"trials": tells},
                                  headers=auth(key))
                assert r.status == 200, r.body
        assert history[0] == history[1] and len(history[0]) == 18
