"""Labels (``metadata``) on runs and logged decisions through a real server, on SQLite and
PostgreSQL: set at creation (``POST /v1/runs``, ``/v1/optimize``, ``/v1/decide``,
``/v1/batch``), returned with the resource, filtered (``?metadata[key]=value``, several
ANDed, page after page), every fault of a body a 422 entry with its JSON pointer, and the
OpenAPI document showing the field and the ``deepObject`` parameter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from conftest import LiveServer, auth, running
from test_api_meta import assert_problem

RUN = {"objective_expression": "sum(x**2)", "bounds": [[-1, 1]] * 2, "engine": "random",
       "max_evaluations": 50, "seed": 1}
DECISION = {"options": [{"id": "a", "attributes": {"price": 10}},
                        {"id": "b", "attributes": {"price": 12}}],
            "method": "wsm", "criteria": [{"attribute": "price", "goal": "minimize",
                                           "weight": 1}]}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[LiveServer]:
    """A server of its own on each backend (PostgreSQL: a throwaway database)."""
    workdir: Path = tmp_path_factory.mktemp(f"metadata-{request.param}")
    if request.param == "sqlite":
        with running(workdir, workers=2) as server:
            yield server
        return
    from pg_server import throwaway_database

    with throwaway_database() as (_, url), running(workdir, workers=2, db_url=url) as server:
        yield server


@pytest.fixture(scope="module")
def key(live: LiveServer) -> str:
    return live.create_key(plan="sdk", tier="enterprise")["key"]


def _get(server: LiveServer, key: str, path: str, **query: str) -> Any:
    r = server.request("GET", f"{path}?{urlencode(query)}" if query else path,
                       headers=auth(key))
    assert r.status == 200, r.body
    return r.json()


def _all(server: LiveServer, key: str, path: str, **query: str) -> list[dict[str, Any]]:
    """Every item of a list, one item a page (the filter holds across pages)."""
    found: list[dict[str, Any]] = []
    after: dict[str, str] = {}
    while True:
        page = _get(server, key, path, limit="1", **query, **after)
        found += page["data"]
        if not page["has_more"]:
            return found
        after = {"starting_after": page["data"][-1]["id"]}


def test_runs_keep_their_labels_and_lists_filter_by_them(live: LiveServer, key: str) -> None:
    made = []
    for labels in ({"project": "bridge-A", "team": "north"}, {"project": "bridge-B"},
                   {"project": "bridge-A", "team": "south"}):
        r = live.request("POST", "/v1/runs", {**RUN, "metadata": labels}, headers=auth(key))
        assert r.status == 202, r.body
        assert r.json()["metadata"] == labels
        made.append(r.json()["id"])
    r = live.request("POST", "/v1/optimize", {**RUN, "metadata": {"project": "bridge-A"}},
                     headers=auth(key))
    assert r.status == 200, r.body
    made.append(r.json()["run_id"])
    plain = live.request("POST", "/v1/runs", RUN, headers=auth(key)).json()
    assert plain["metadata"] == {}

    assert _get(live, key, f"/v1/runs/{made[0]}")["metadata"] == {"project": "bridge-A",
                                                                   "team": "north"}
    assert _get(live, key, f"/v1/runs/{made[3]}")["metadata"] == {"project": "bridge-A"}
    a = _all(live, key, "/v1/runs", **{"metadata[project]": "bridge-A"})
    assert [run["id"] for run in a] == [made[3], made[2], made[0]]
    both = _all(live, key, "/v1/runs", **{"metadata[project]": "bridge-A",
                                          "metadata[team]": "south"})
    assert [run["id"] for run in both] == [made[2]]
    assert _all(live, key, "/v1/runs", **{"metadata[project]": "bridge-C"}) == []
    assert _all(live, key, "/v1/runs", **{"metadata[project]": "bridge-A",
                                          "engine": "de"}) == []
    listed = _get(live, key, "/v1/runs", limit="100")["data"]
    assert {run["id"] for run in listed} >= {*made, plain["id"]}


def test_decisions_keep_their_labels_and_the_log_filters_by_them(live: LiveServer,
                                                                 key: str) -> None:
    ids = []
    for labels in ({"project": "bridge-A"}, {"project": "bridge-B"}, None):
        body = DECISION if labels is None else {**DECISION, "metadata": labels}
        r = live.request("POST", "/v1/decide", body, headers=auth(key))
        assert r.status == 200, r.body
        assert "metadata" not in r.json()  # the library's answer, unchanged
        ids.append(_get(live, key, "/v1/decisions", limit="1")["data"][0]["id"])
    batch = {"defaults": {**DECISION, "metadata": {"project": "bridge-A", "kind": "batch"}},
             "decisions": [{"id": 1}, {"id": 2}]}
    assert live.request("POST", "/v1/batch", batch, headers=auth(key)).status == 200
    newest = _get(live, key, "/v1/decisions", limit="1")["data"][0]
    assert newest["kind"] == "batch"
    assert newest["metadata"] == {"project": "bridge-A", "kind": "batch"}

    a = _all(live, key, "/v1/decisions", **{"metadata[project]": "bridge-A"})
    assert [d["id"] for d in a] == [newest["id"], ids[0]]
    assert [d["id"] for d in _all(live, key, "/v1/decisions", **{
        "metadata[project]": "bridge-A", "metadata[kind]": "batch"})] == [newest["id"]]
    record = _get(live, key, f"/v1/decisions/{ids[1]}")
    assert record["metadata"] == {"project": "bridge-B"}
    assert _get(live, key, f"/v1/decisions/{ids[2]}")["metadata"] == {}


def test_every_fault_of_a_run_s_labels_is_listed(live: LiveServer, key: str) -> None:
    labels: dict[str, Any] = {f"k{i}": "v" for i in range(19)}
    labels.update({"x" * 41: "v", "long": "v" * 501, "n": 7, "a[b]": "v"})
    r = live.request("POST", "/v1/runs", {**RUN, "metadata": labels, "engine": "L-BFGS-B"},
                     headers=auth(key))
    body = assert_problem(r, 422, "validation_failed")
    faults = {(e["pointer"], e["code"]) for e in body["errors"]}
    assert faults == {("/metadata", "invalid_metadata"),
                      ("/metadata/" + "x" * 41, "invalid_metadata"),
                      ("/metadata/long", "invalid_metadata"),
                      ("/metadata/n", "invalid_metadata"),
                      ("/metadata/a[b]", "invalid_metadata"),
                      ("/engine", "unknown_engine")}, body["errors"]
    messages = {e["pointer"]: e["message"] for e in body["errors"]}
    assert "at most 20" in messages["/metadata"]
    assert "500 characters" in messages["/metadata/long"]
    assert "did you mean 'lbfgsb'" in messages["/engine"]
    assert _get(live, key, "/v1/runs", **{"metadata[n]": "7"})["data"] == []  # nothing made


def test_null_labels_are_a_422_naming_them(live: LiveServer, key: str) -> None:
    for path in ("/v1/runs", "/v1/optimize"):  # they were a 500
        r = live.request("POST", path, {**RUN, "metadata": None}, headers=auth(key))
        body = assert_problem(r, 422, "validation_failed")
        assert [(e["pointer"], e["code"]) for e in body["errors"]] == [
            ("/metadata", "invalid_type")], body


def test_a_batch_item_s_labels_are_kept(live: LiveServer, key: str) -> None:
    batch = {"defaults": {**DECISION, "metadata": {"project": "bridge-D"}},
             "decisions": [{"id": 1, "metadata": {"owner": "kim"}}, {"id": 2},
                           {"id": 3, "metadata": {"owner": "kim", "step": "2"}}]}
    r = live.request("POST", "/v1/batch", batch, headers=auth(key))
    assert r.status == 200, r.body
    (entry,) = _all(live, key, "/v1/decisions", **{"metadata[owner]": "kim"})
    assert entry["metadata"] == {"project": "bridge-D", "owner": "kim", "step": "2"}
    # one entry has one value a label: two items that differ are refused, each named
    clash = {"defaults": {**DECISION, "metadata": {"owner": "kim"}},
             "decisions": [{"id": 1, "metadata": {"owner": "lee"}},
                           {"id": 2, "metadata": {"owner": "kim", "x": "1"}},
                           {"id": 3, "metadata": {"x": "2"}}]}
    r = live.request("POST", "/v1/batch", clash, headers=auth(key))
    body = assert_problem(r, 422, "validation_failed")
    assert [(e["pointer"], e["code"]) for e in body["errors"]] == [
        ("/decisions/0/metadata/owner", "invalid_metadata"),
        ("/decisions/2/metadata/x", "invalid_metadata")], body
    assert "'lee' here and 'kim' in /defaults/metadata" in body["errors"][0]["message"]
    assert "in /decisions/1/metadata" in body["errors"][1]["message"]
    assert _get(live, key, "/v1/decisions", **{"metadata[owner]": "lee"})["data"] == []


def test_every_fault_of_a_decision_s_labels_is_listed(live: LiveServer, key: str) -> None:
    r = live.request("POST", "/v1/decide",
                     {**DECISION, "method": "wsmm", "metadata": {"": "v", "ok": ["x"]}},
                     headers=auth(key))
    body = assert_problem(r, 422, "validation_failed")
    assert {e["pointer"] for e in body["errors"]} == {"/method", "/metadata/", "/metadata/ok"}
    batch = {"defaults": {**DECISION, "metadata": {"p": 1}}, "decisions": [{"id": 1}]}
    r = live.request("POST", "/v1/batch", batch, headers=auth(key))
    body = assert_problem(r, 422, "validation_failed")
    assert [e["pointer"] for e in body["errors"]] == ["/defaults/metadata/p"]
    assert _get(live, key, "/v1/decisions", **{"metadata[p]": "1"})["data"] == []


@pytest.mark.parametrize(("query", "named"), [
    ("metadata=bridge-A", "metadata"),
    ("metadata[" + "k" * 41 + "]=v", "metadata[" + "k" * 41 + "]"),
    ("metadata[]=v", "metadata[]"),
])
def test_a_bad_filter_is_a_400_naming_it(live: LiveServer, key: str, query: str,
                                         named: str) -> None:
    for path in ("/v1/runs", "/v1/decisions"):
        r = live.request("GET", f"{path}?{query}", headers=auth(key))
        body = assert_problem(r, 400, "invalid_parameter")
        assert body["detail"].startswith(named + ":"), body["detail"]


def test_the_openapi_document_shows_the_labels(live: LiveServer) -> None:
    doc = live.request("GET", "/v1/openapi.json").json()
    schemas = doc["components"]["schemas"]
    for name in ("Run", "OptimizeRequest", "DecisionLogEntry", "DecisionLogRecord",
                 "DecideRequest"):
        member = schemas[name]["properties"]["metadata"]
        text = str(member)
        assert "20" in text and "40" in text and "500" in text, (name, member)
    assert "metadata" in schemas["Run"]["required"]
    for path in ("/v1/runs", "/v1/decisions"):
        (param,) = [p for p in doc["paths"][path]["get"]["parameters"]
                    if p["name"] == "metadata"]
        assert (param["in"], param["style"], param["explode"]) == ("query", "deepObject", True)
        assert param["schema"]["type"] == "object"
        assert param["schema"]["additionalProperties"] == {"type": "string"}
