"""Fronts bounded in bytes (issue 38, High 3), over HTTP against a live server: a run of
several objectives keeps its front apart, so a page of runs, a run, its event stream and
its webhook payload carry the front's size and hypervolume, never its points; its points
come in pages of ``GET /v1/runs/{id}/front``, each at most ``limit`` points and about the
tier's ``front_page_bytes``, which together are the whole front (the same as the
``/v1/optimize`` answer's); the client pages through them for its ``ParetoResult``."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from conftest import LiveServer, auth
from test_api_runs import submit, wait_for

from decido.client import AsyncClient, Client
from decido.pareto import ParetoResult
from decido_service.tiers import DEFAULT_TIERS
from decido_service.types import Run, RunFront, RunList

#: a free key's page of a front: about this many bytes of points
FREE_PAGE = DEFAULT_TIERS["free"]["front_page_bytes"]
assert FREE_PAGE is not None
DIMS, POINTS = 50, 2500


def big_front(points: int = POINTS, dims: int = DIMS, seed: int = 5) -> dict[str, Any]:
    """A run whose every point is on its front (x0 against -x0): a front of ``points``
    points of ``dims`` variables, about 1 KB of JSON each at 50 variables."""
    return {"bounds": [[0, 1]] * dims, "seed": seed, "max_evaluations": 3 * points,
            "archive_size": points, "time_limit": 10,
            "objectives": [{"name": "a", "expression": "x[0]"},
                           {"name": "b", "expression": "-x[0]"}]}


def front_pages(server: LiveServer, key: str, run_id: str, limit: int | None = None
                ) -> list[dict[str, Any]]:
    """Every page of the run's front, in order (each checked against its schema)."""
    pages: list[dict[str, Any]] = []
    query = "" if limit is None else f"limit={limit}"
    while True:
        path = f"/v1/runs/{run_id}/front" + (f"?{query}" if query else "")
        r = server.request("GET", path, headers=auth(key))
        assert r.status == 200, r.body[:300]
        page = r.json()
        msgspec.convert(page, RunFront)
        page["bytes"] = len(r.body)
        pages.append(page)
        if not page["has_more"]:
            return pages
        after = page["first"] + len(page["data"]) - 1
        query = "&".join(q for q in (f"limit={limit}" if limit else "",
                                     f"starting_after={after}") if q)


@pytest.fixture(scope="module")
def optimized(server: LiveServer) -> tuple[str, dict[str, Any]]:
    """A free key (allowed a front of POINTS points, beyond the tier's archive_size cap)
    and the ``/v1/optimize`` answer of its run with a front of about 2.5 MB (the whole front
    inline: that is the answer of /v1/optimize)."""
    key = server.create_key(limits={"optimization": {"max_archive_size": POINTS}})["key"]
    r = server.request("POST", "/v1/optimize", big_front(), headers=auth(key), timeout=120)
    assert r.status == 200, r.body[:300]
    doc = r.json()
    assert len(doc["pareto"]) == POINTS and len(r.body) > 2 * FREE_PAGE
    return key, doc


def test_a_list_page_and_a_run_carry_the_fronts_size_not_its_points(
        server: LiveServer, optimized: tuple[str, dict[str, Any]]) -> None:
    key, doc = optimized
    r = server.request("GET", "/v1/runs", headers=auth(key))
    assert r.status == 200
    page = msgspec.to_builtins(msgspec.convert(r.json(), RunList))
    (run,) = page["data"]
    assert run["id"] == doc["run_id"]
    assert len(r.body) < 64 * 1024, len(r.body)  # it was the whole front: 2.5 MB
    result = run["result"]
    assert "pareto" not in result and result["front_size"] == POINTS
    assert result["hypervolume"] == doc["hypervolume"] > 0
    assert result["reference_point"] == doc["reference_point"]
    one = server.request("GET", f"/v1/runs/{doc['run_id']}", headers=auth(key))
    assert len(one.body) < 64 * 1024 and "pareto" not in one.json()["result"]
    msgspec.convert(one.json(), Run)
    assert doc["front_size"] == POINTS  # the inline answer says it too


def test_the_front_endpoint_pages_through_every_point(
        server: LiveServer, optimized: tuple[str, dict[str, Any]]) -> None:
    key, doc = optimized
    pages = front_pages(server, key, doc["run_id"])
    assert len(pages) >= 3  # about 2.5 MB in pages of about 1 MiB
    point = max(len(msgspec.json.encode(p)) for p in doc["pareto"])
    for page in pages:
        assert page["size"] == POINTS and page["run_id"] == doc["run_id"]
        assert page["bytes"] <= FREE_PAGE + point + 512
    assert [p["first"] for p in pages] == [
        sum(len(q["data"]) for q in pages[:k]) for k in range(len(pages))]
    assert [x for p in pages for x in p["data"]] == doc["pareto"]
    # a smaller limit: more pages, the same points
    small = front_pages(server, key, doc["run_id"], limit=700)
    assert [len(p["data"]) for p in small] == [700, 700, 700, 400]
    assert [x for p in small for x in p["data"]] == doc["pareto"]
    # past the end: an empty last page
    end = server.request("GET", f"/v1/runs/{doc['run_id']}/front?starting_after={POINTS - 1}",
                         headers=auth(key)).json()
    assert end == {"run_id": doc["run_id"], "first": POINTS, "data": [], "size": POINTS,
                   "has_more": False}


def test_the_client_pages_through_the_whole_front(
        server: LiveServer, optimized: tuple[str, dict[str, Any]]) -> None:
    key, doc = optimized
    with Client(f"http://127.0.0.1:{server.port}", key) as client:
        result = client.run(doc["run_id"]).wait(timeout=60)
    assert isinstance(result, ParetoResult)
    assert len(result.pareto) == POINTS
    assert [p["x"] for p in result.pareto] == [p["x"] for p in doc["pareto"]]
    assert result.hypervolume == doc["hypervolume"]

    async def asynchronously() -> Any:
        async with AsyncClient(f"http://127.0.0.1:{server.port}", key) as client:
            run = await client.run(doc["run_id"])
            return await run.wait(timeout=60)

    same = asyncio.run(asynchronously())
    assert isinstance(same, ParetoResult) and same.pareto == result.pareto


def test_a_front_is_read_only_by_its_key_and_only_of_a_run_with_one(
        server: LiveServer, optimized: tuple[str, dict[str, Any]]) -> None:
    key, doc = optimized
    other = server.create_key(tier="pro")["key"]
    r = server.request("GET", f"/v1/runs/{doc['run_id']}/front", headers=auth(other))
    assert r.status == 404
    single = submit(server, other, {"objective_expression": "sum(x**2)",
                                    "bounds": [[-1, 1]] * 2, "max_evaluations": 200})
    wait_for(server, other, single["id"], "succeeded")
    r = server.request("GET", f"/v1/runs/{single['id']}/front", headers=auth(other))
    assert r.status == 404 and "one objective" in r.json()["detail"]
    bad = server.request("GET", f"/v1/runs/{doc['run_id']}/front?starting_after=-1",
                         headers=auth(key))
    assert bad.status == 400 and "starting_after" in bad.json()["detail"]


def test_an_idempotent_replay_of_optimize_rebuilds_the_whole_front(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    headers = {**auth(key), "Idempotency-Key": "front-replay"}
    body = big_front(points=300, dims=3, seed=2)
    first = server.request("POST", "/v1/optimize", body, headers=headers)
    assert first.status == 200, first.body[:300]
    again = server.request("POST", "/v1/optimize", body, headers=headers)
    assert again.status == 200 and again.header("idempotent-replayed") == "true"
    assert again.json()["pareto"] == first.json()["pareto"]
    assert len(again.json()["pareto"]) == again.json()["front_size"] == 300
