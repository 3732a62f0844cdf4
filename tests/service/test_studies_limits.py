"""A study's suggest and tell calls count on an allowance of their own (``study.minute``:
its headers, 429 beyond, never the key's requests per minute); the cap of active studies
holds under concurrent creations on two nodes sharing PostgreSQL; a study's creation, its
count, its cap and its ``Idempotency-Key`` answer are one store transaction (SQLite and
PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import FAKE_NOW, LiveServer, auth, fake_clock_supported, running
from pg_server import throwaway_database
from test_store_multinode import (
    database,  # noqa: F401 - fixture
    nodes,
)

from decido_service.store import AdmissionRequest, CounterSpec, Store, open_store

SPHERE = {"bounds": [[-5, 5], [-5, 5]], "engine": "random", "seed": 7, "max_trials": None}


def post(server: LiveServer, key: str, path: str, body: Any = None) -> Any:
    return server.request("POST", path, body, headers=auth(key), timeout=60)


def test_study_calls_have_an_allowance_of_their_own(tmp_path: Path) -> None:
    env = {"DECIDO_TIERS": json.dumps({"free": {"study_minute": 6}})}
    if fake_clock_supported():
        env["DECIDO_FAKE_NOW"] = str(FAKE_NOW)  # no minute rolls over during the test
    with running(tmp_path, env) as server:
        key = server.create_key()["key"]  # free: 10 requests a minute, 6 study calls
        made = post(server, key, "/v1/studies", SPHERE)
        assert made.status == 201, made.body
        assert made.header("x-ratelimit-limit") == "10"  # the create is an optimization
        sid = made.json()["id"]
        base = f"/v1/studies/{sid}"
        calls = [("suggest", {"count": 2}), ("trials/0/complete", {"value": 1.0}),
                 ("trials/1/report", {"step": 1, "value": 2.0}), ("trials/1/heartbeat", None),
                 ("trials", {"trials": [{"x": [0, 0], "value": 0.0}]}),
                 ("complete", {"trials": [{"number": 1, "value": 3.0}]})]
        remaining = []
        for path, body in calls:
            r = post(server, key, f"{base}/{path}", body)
            assert r.status == 200, (path, r.body)
            assert r.header("x-ratelimit-limit") == "6", path
            remaining.append(int(r.header("x-ratelimit-remaining") or "-1"))
        assert remaining == [5, 4, 3, 2, 1, 0]
        over = post(server, key, f"{base}/suggest", {"count": 1})
        assert over.status == 429 and over.header("content-type") == "application/problem+json"
        problem = over.json()
        assert problem["code"] == "rate_limited" and problem["limit"] == "study.minute"
        assert problem["limit_value"] == 6 and int(over.header("retry-after") or "0") >= 1
        assert post(server, key, f"{base}/trials/2/abandon").status == 429
        # the key's own requests per minute are untouched: reads, a new study
        read = server.request("GET", base, headers=auth(key))
        assert read.status == 200 and read.header("x-ratelimit-limit") == "10"
        usage = server.request("GET", "/v1/usage", headers=auth(key)).json()
        assert usage["optimization"]["minute"]["remaining"] == 9  # only the create
        assert usage["optimization"]["study_minute"]["limit"] == 6  # the study calls'
        assert usage["optimization"]["study_minute"]["remaining"] == 0
        assert post(server, key, "/v1/studies", SPHERE).status == 201
        assert read.json()["trials"] == {"queued": 0, "active": 0, "completed": 3,
                                         "infeasible": 0, "failed": 0, "early_stopped": 0,
                                         "abandoned": 0}


def test_concurrent_creates_never_pass_the_cap_on_postgresql(
        tmp_path: Path, database: tuple[str, str]) -> None:  # noqa: F811
    env = {"DECIDO_TIERS": json.dumps({"team": {"max_studies": 3}})}
    with nodes(tmp_path, database[1], 2, env=env) as servers:
        key = servers[0].create_key(tier="team")["key"]

        def make(i: int) -> Any:
            return post(servers[i % 2], key, "/v1/studies", {**SPHERE, "seed": i})

        with ThreadPoolExecutor(24) as pool:
            answers = list(pool.map(make, range(24)))
        statuses = sorted(a.status for a in answers)
        assert statuses == [201] * 3 + [429] * 21, statuses
        assert {a.json()["code"] for a in answers if a.status == 429} == {"too_many_studies"}
        listed = servers[1].request("GET", "/v1/studies?state=active&limit=100",
                                    headers=auth(key)).json()["data"]
        assert sorted(s["id"] for s in listed) == sorted(
            a.json()["id"] for a in answers if a.status == 201)
        usage = servers[0].request("GET", "/v1/usage", headers=auth(key)).json()
        assert usage["optimization"]["month"]["used"] == 3  # the refused ones counted nothing


BACKENDS = [pytest.param("sqlite", marks=pytest.mark.fast), "postgresql"]


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'studies.db'}"
        return
    with throwaway_database() as (_, pg_url):
        yield pg_url


def _row(study_id: str, key_id: str = "key_a") -> dict[str, Any]:
    return {"id": study_id, "key_id": key_id, "created_at": "2026-01-01T00:00:00Z",
            "state": "active", "spec": "{}", "metadata": None, "counts": "{}",
            "summary": None, "log_length": 0, "next_number": 0, "events": 0,
            "lease_until": None}


def test_creation_and_its_idempotency_answer_are_one_transaction(url: str) -> None:
    now = 1_750_000_000.0

    def counted(limit: int | None) -> AdmissionRequest:
        return AdmissionRequest([CounterSpec("optimize.month", "key_a", "month", limit, 1)],
                                now, None)

    async def answer(store: Store, idem: str) -> tuple[str, str | None]:
        return await store.runs.idempotency_begin("key_a", idem, "fp", now, 86400.0)

    async def scenario(store: Store) -> None:
        sid = "st_" + "1" * 24
        assert await answer(store, "i1") == ("new", None)
        made = await store.studies.create(_row(sid), counted(None), 2, ("i1", "the answer"))
        assert not isinstance(made, str) and made.admitted
        assert await answer(store, "i1") == ("done", "the answer")
        assert await store.studies.get("key_a", sid) is not None
        # the insert fails (the same id): the answer is not stored either
        assert await answer(store, "i2") == ("new", None)
        with pytest.raises(Exception):  # noqa: B017, PT011 - the backend's integrity error
            await store.studies.create(_row(sid), counted(None), 2, ("i2", "lost"))
        assert await answer(store, "i2") == ("pending", None)
        # refused by its count: neither the study nor the answer
        other = "st_" + "2" * 24
        refused = await store.studies.create(_row(other), counted(1), 2, ("i2", "refused"))
        assert not isinstance(refused, str) and not refused.admitted
        assert await store.studies.get("key_a", other) is None
        assert await answer(store, "i2") == ("pending", None)
        # at the cap of active studies: nothing written, nothing counted
        await store.studies.create(_row("st_" + "3" * 24), counted(None), 2)
        assert await store.studies.create(_row(other), counted(None), 2, ("i2", "cap")) \
            == "cap"
        assert await store.studies.get("key_a", other) is None
        assert await answer(store, "i2") == ("pending", None)
        month = await store.admissions.peek(
            [CounterSpec("optimize.month", "key_a", "month", None, 0)], now)
        assert month[0].used == 2

    async def main() -> None:
        store = await open_store(url)
        try:
            await scenario(store)
        finally:
            await store.close()

    asyncio.run(main())
