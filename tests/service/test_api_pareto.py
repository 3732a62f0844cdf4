"""Runs of several objectives over HTTP (a live server): inline and as a resource, their
events and trace, refusals with their pointers, and the bridge from a front to a decision
(``from_run``), keys kept apart."""

from __future__ import annotations

import time
from typing import Any

import msgspec
import pytest
from conftest import LiveServer, auth
from test_api_fronts import front_pages
from test_api_runs import submit, wait_for
from test_run_events import check_contract, watch

import decido
from decido_service.http.problems import ApiError
from decido_service.schemas import decode_optimize
from decido_service.types import OptimizeResult

#: Schaffer's problem N.1 in two variables: the front is x0 = x1 in [0, 2]
FRONT = {"bounds": [[-3, 3], [-3, 3]], "seed": 11, "max_evaluations": 2000,
         "objectives": [{"name": "cost", "expression": "x[0]**2 + x[1]**2"},
                        {"name": "risk", "expression": "(x[0] - 2)**2 + (x[1] - 2)**2"}]}


def front_of(server: LiveServer, key: str, run_id: str) -> list[dict[str, Any]]:
    """Every point of a finished run's front (``GET /v1/runs/{id}/front``, page after
    page)."""
    return [p for page in front_pages(server, key, run_id) for p in page["data"]]


def library_front(body: dict[str, Any]) -> decido.ParetoResult:
    """The same run through the library."""
    return decido.minimize(
        [dict(o) for o in body["objectives"]], body["bounds"], seed=body["seed"],
        max_evaluations=body["max_evaluations"])


def test_optimize_inline_answers_the_libraries_front(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    r = server.request("POST", "/v1/optimize", FRONT, headers=auth(key))
    assert r.status == 200, r.body
    doc = r.json()
    msgspec.convert(doc, OptimizeResult)
    assert doc["engine"] == decido.pareto.default_multi_engine()
    expected = library_front(FRONT).to_dict()
    assert doc["pareto"] == [{k: p[k] for k in ("x", "f", "feasible", "max_violation")}
                             for p in expected["pareto"]]
    assert doc["hypervolume"] == expected["hypervolume"] > 0
    assert doc["reference_point"] == expected["reference_point"]
    assert doc["objectives"] == [{"name": "cost", "goal": "minimize",
                                  "expression": "x[0]**2 + x[1]**2"},
                                 {"name": "risk", "goal": "minimize",
                                  "expression": "(x[0] - 2)**2 + (x[1] - 2)**2"}]
    assert doc["x"] == [] and doc["value"] is None
    assert doc["history"] and all(h[1] is None or h[1] > 0 for h in doc["history"])
    # the run is readable as a resource, with a hypervolume trace
    run = server.request("GET", f"/v1/runs/{doc['run_id']}", headers=auth(key)).json()
    assert "pareto" not in run["result"] and run["result"]["front_size"] == len(doc["pareto"])
    assert front_of(server, key, doc["run_id"]) == doc["pareto"]  # its own endpoint
    trace = server.request("GET", f"/v1/runs/{doc['run_id']}/trace", headers=auth(key)).json()
    assert [p[0] for p in trace["points"]] == [h[0] for h in doc["history"]]
    assert trace["points"][-1][2] == doc["history"][-1][1]
    assert trace["columns"] == ["evaluations", "elapsed_ms", "hypervolume"]  # not "best"
    csv = server.request("GET", f"/v1/runs/{doc['run_id']}/trace?format=csv",
                         headers=auth(key)).body.decode()
    assert csv.splitlines()[0] == "evaluations,elapsed_ms,hypervolume"


def test_a_run_resource_of_several_objectives_and_its_events(server: LiveServer) -> None:
    key = server.create_key(tier="team")["key"]
    body = {**FRONT, "max_evaluations": 400_000, "time_limit": 1.5,
            "objectives": [*FRONT["objectives"],  # type: ignore[list-item]
                           {"name": "spread", "expression": "x[0] - x[1]",
                            "goal": "maximize"}]}
    run = submit(server, key, body)
    assert run["request"]["objectives"][2]["goal"] == "maximize"
    events = watch(server, key, run["id"])
    progress = [e.data for e in events if e.kind == "progress"]
    assert progress, [e.kind for e in events]
    assert all({"evaluations", "iterations", "best", "elapsed_ms", "front_size"} <= set(p) <=
               {"evaluations", "iterations", "best", "elapsed_ms", "front_size", "hypervolume"}
               for p in progress)
    assert any(p["front_size"] > 0 and p["hypervolume"] is not None for p in progress)
    assert events[-1].kind == "result"
    result = events[-1].data["result"]
    assert result["status"] == "time_limit" and result["front_size"] > 1
    assert len(front_of(server, key, run["id"])) == result["front_size"]
    assert [o["goal"] for o in result["objectives"]] == ["minimize", "minimize", "maximize"]
    assert len(result["reference_point"]) == 3 and result["hypervolume"] > 0


def test_single_objective_events_are_unchanged(server: LiveServer) -> None:
    key = server.create_key(tier="team")["key"]
    run = submit(server, key, {"bounds": [[-5, 5]] * 3, "objective_expression": "sum(x**2)",
                               "seed": 3})
    check_contract(watch(server, key, run["id"]))
    done = wait_for(server, key, run["id"], "succeeded")
    assert "pareto" not in done["result"]


def fault_pointers(r: Any) -> list[str]:
    assert r.status == 422, r.body
    assert r.header("content-type").startswith("application/problem+json")
    return [e["pointer"] for e in r.json()["errors"]]


def test_refusals_list_each_fault_with_its_pointer(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    both = {**FRONT, "objective_expression": "sum(x)"}
    neither = {k: v for k, v in FRONT.items() if k != "objectives"}
    for path in ("/v1/optimize", "/v1/runs"):
        assert fault_pointers(server.request("POST", path, both, headers=auth(key))) == \
            ["/objectives"]
        assert fault_pointers(server.request("POST", path, neither, headers=auth(key))) == \
            ["/objective_expression"]
    bad = {**FRONT, "engine": "de", "target": 1.0,
           "objectives": [{"name": "a", "expression": "x[0]"},
                          {"name": "a", "expression": "x[1] +"},
                          {"name": "x0", "expression": "x[1]"}]}
    pointers = fault_pointers(server.request("POST", "/v1/optimize", bad, headers=auth(key)))
    assert set(pointers) == {"/objectives/1/name", "/objectives/2/name", "/engine", "/target"}
    compile_fault = {**FRONT, "objectives": [{"name": "a", "expression": "x[0]"},
                                             {"name": "b", "expression": "x[1] +"}]}
    assert fault_pointers(server.request("POST", "/v1/runs", compile_fault,
                                         headers=auth(key))) == ["/objectives/1/expression"]
    too_many = {**FRONT, "objectives": [{"name": f"f{k}", "expression": "x[0]"}
                                        for k in range(decido.objectives.MAX_OBJECTIVES + 1)]}
    assert fault_pointers(server.request("POST", "/v1/optimize", too_many,
                                         headers=auth(key))) == ["/objectives"]
    # nothing of it was run or counted as a run
    runs = server.request("GET", "/v1/runs", headers=auth(key)).json()
    assert runs["data"] == []


def test_reference_point_and_archive_size_are_the_librarys(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    body = {**FRONT, "reference_point": [20.0, 20.0], "archive_size": 6,
            "options": {"stop_on_convergence": 0}}
    r = server.request("POST", "/v1/optimize", body, headers=auth(key))
    assert r.status == 200, r.body
    doc = r.json()
    expected = decido.minimize(
        [dict(o) for o in FRONT["objectives"]], FRONT["bounds"], seed=FRONT["seed"],
        max_evaluations=FRONT["max_evaluations"], reference_point=[20.0, 20.0],
        archive_size=6, stop_on_convergence=False).to_dict()
    assert doc["reference_point"] == [20.0, 20.0] and len(doc["pareto"]) == 6
    assert doc["hypervolume"] == expected["hypervolume"]
    assert [p["f"] for p in doc["pareto"]] == [p["f"] for p in expected["pareto"]]
    run = submit(server, key, body)
    assert run["request"]["reference_point"] == [20.0, 20.0]
    assert run["request"]["archive_size"] == 6
    done = wait_for(server, key, run["id"], "succeeded")
    assert front_of(server, key, run["id"]) == doc["pareto"]
    assert done["result"]["reference_point"] == [20.0, 20.0]


#: each bad input of issue 29 (and its neighbours) with the pointers of its faults
BAD_INPUT = [
    ({**FRONT, "objectives": []}, ["/objectives"]),
    ({**FRONT, "objectives": [{"name": f"f{k}", "expression": "x[0]"} for k in range(9)]},
     ["/objectives"]),
    ({**FRONT, "objectives": [{"name": "a", "expression": "x[0]"},
                              {"name": "a", "expression": "x[1]"}]}, ["/objectives/1/name"]),
    ({**FRONT, "objectives": [{"name": "2 b", "expression": "x[0]"},
                              {"name": "b", "expression": "x[1]"}]}, ["/objectives/0/name"]),
    ({**FRONT, "reference_point": [1.0]}, ["/reference_point"]),
    ({**FRONT, "reference_point": [1.0, 2.0, 3.0]}, ["/reference_point"]),
    # no point of the box can be better than 0 in cost (a sum of squares) nor than -1 in
    # risk: proven over the bounds, the front could add nothing
    ({**FRONT, "reference_point": [0.0, -1.0]}, ["/reference_point/0", "/reference_point/1"]),
    ({**FRONT, "objective_expression": "sum(x)"}, ["/objectives"]),
    ({**FRONT, "archive_size": 0}, ["/archive_size"]),
    ({"bounds": [[-1, 1]], "objective_expression": "x[0]", "reference_point": [2.0],
      "archive_size": 5}, ["/archive_size", "/reference_point"]),
    # every fault of a request at once
    ({**FRONT, "objectives": [{"name": "a", "expression": "x[0]"},
                              {"name": "a", "expression": "x[1]"}],
      "reference_point": [1.0], "archive_size": 0, "target": 2.0},
     ["/archive_size", "/objectives/1/name", "/reference_point", "/target"]),
    # above the free tier's front and start-point caps (500 and 100), refused before the run
    ({**FRONT, "archive_size": 501, "x0": [[0.0, 0.0]] * 101}, ["/archive_size", "/x0"]),
]


@pytest.mark.parametrize("path", ["/v1/optimize", "/v1/runs"])
def test_bad_input_is_a_422_listing_every_fault_and_counts_nothing(
        server: LiveServer, free_key: str, path: str) -> None:
    for body, pointers in BAD_INPUT:
        r = server.request("POST", path, body, headers=auth(free_key))
        assert sorted(fault_pointers(r)) == pointers, (body, r.body)
        assert r.header("x-ratelimit-remaining") == "10"  # the tier's minute: untouched
    usage = server.request("GET", "/v1/usage", headers=auth(free_key)).json()
    assert usage["optimization"]["month"]["used"] == 0
    assert usage["optimization"]["minute"]["remaining"] == 10
    assert server.request("GET", "/v1/runs", headers=auth(free_key)).json()["data"] == []


def decide(server: LiveServer, key: str, body: dict[str, Any], path: str = "/v1/decide"
           ) -> Any:
    return server.request("POST", path, body, headers=auth(key))


def test_the_bridge_decides_on_a_front(server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    done = server.request("POST", "/v1/optimize", FRONT, headers=auth(key)).json()
    front = library_front(FRONT)
    options = front.options()
    # defaults: the objectives as criteria with their goals and equal weights
    r = decide(server, key, {"from_run": done["run_id"], "method": "topsis"})
    assert r.status == 200, r.body
    criteria = [{"attribute": "cost", "goal": "minimize", "weight": 1.0},
                {"attribute": "risk", "goal": "minimize", "weight": 1.0}]
    expected = decido.decide({"options": options, "method": "topsis", "criteria": criteria})
    answer = r.json()
    assert [i["id"] for i in answer["ranking"]] == [i["id"] for i in expected["ranking"]]
    assert answer["best"] == expected["best"]
    for item in answer["ranking"]:
        point = front.pareto[int(item["id"])]
        assert item["x"] == point["x"] and item["f"] == point["f"]
    # constraints, weights, sensitivity and another method over the front's attributes
    body = {"from_run": done["run_id"], "method": "vikor", "sensitivity": True,
            "constraints": ["cost <= 4", "x0 >= 0"],
            "criteria": [{"attribute": "cost", "goal": "minimize", "weight": 3},
                         {"attribute": "risk", "goal": "minimize", "weight": 1}]}
    r = decide(server, key, body)
    assert r.status == 200, r.body
    library = decido.decide({**{k: v for k, v in body.items() if k != "from_run"},
                             "options": options})
    assert r.json()["best"] == library["best"]
    assert r.json()["sensitivity"] == library["sensitivity"]
    assert r.json()["infeasible"] == library["infeasible"]
    # a batch item too; the log keeps from_run
    r = decide(server, key, {"decisions": [{"from_run": done["run_id"], "method": "wsm"},
                                           {"options": options[:2], "method": "wsm",
                                            "criteria": criteria}]}, "/v1/batch")
    assert r.status == 200, r.body
    first = r.json()["results"][0]
    assert first["status"] == "ok" and "x" in first["ranking"][0]
    log = server.request("GET", "/v1/decisions", headers=auth(key)).json()["data"]
    entry = server.request("GET", f"/v1/decisions/{log[1]['id']}", headers=auth(key)).json()
    assert entry["request"]["from_run"] == done["run_id"]


def test_the_bridge_refuses_other_keys_unfinished_and_single_runs(server: LiveServer) -> None:
    key = server.create_key(tier="team")["key"]
    other = server.create_key(tier="pro")["key"]
    mine = server.request("POST", "/v1/optimize", FRONT, headers=auth(key)).json()["run_id"]
    r = decide(server, other, {"from_run": mine})
    assert r.status == 404 and r.json()["code"] == "not_found", r.body
    r = decide(server, other, {"decisions": [{"id": "a", "from_run": mine}]}, "/v1/batch")
    assert r.status == 200, r.body  # in a batch, the item fails on its own
    assert r.json()["results"] == [{"id": "a", "status": "error", "error": {
        "code": "not_found", "message": r.json()["results"][0]["error"]["message"],
        "path": "from_run"}}]
    assert mine in r.json()["results"][0]["error"]["message"]
    single = server.request("POST", "/v1/optimize", {
        "bounds": [[-1, 1]], "objective_expression": "x[0]**2", "seed": 1},
        headers=auth(key)).json()["run_id"]
    assert fault_pointers(decide(server, key, {"from_run": single})) == ["/from_run"]
    assert fault_pointers(decide(server, key, {"from_run": mine, "options": []})) == \
        ["/from_run"]
    queued = submit(server, key, {**FRONT, "max_evaluations": 10_000_000,
                                  "time_limit": 30})["id"]
    r = decide(server, key, {"from_run": queued})
    assert r.status == 409 and r.json()["code"] == "run_not_finished", r.body
    server.request("POST", f"/v1/runs/{queued}/cancel", headers=auth(key))


def test_a_batch_takes_from_run_in_its_defaults_and_a_bad_item_fails_alone(
        server: LiveServer) -> None:
    key = server.create_key(tier="pro")["key"]
    done = server.request("POST", "/v1/optimize", FRONT, headers=auth(key)).json()["run_id"]
    single = server.request("POST", "/v1/optimize", {
        "bounds": [[-1, 1]], "objective_expression": "x[0]**2", "seed": 1},
        headers=auth(key)).json()["run_id"]
    options = library_front(FRONT).options()
    criteria = [{"attribute": "cost", "goal": "minimize", "weight": 1.0},
                {"attribute": "risk", "goal": "minimize", "weight": 1.0}]
    body = {"defaults": {"from_run": done, "method": "topsis"},
            "decisions": [{"id": "front"},
                          {"id": "mine", "options": options[:2], "criteria": criteria},
                          {"id": "single", "from_run": single},
                          {"id": "unknown", "from_run": "run_" + "0" * 24},
                          {"id": "vikor", "method": "vikor"}]}
    r = decide(server, key, body, "/v1/batch")
    assert r.status == 200, r.body
    answer = r.json()
    results = {item["id"]: item for item in answer["results"]}
    expected = decido.decide({"options": options, "method": "topsis", "criteria": criteria})
    assert results["front"]["status"] == "ok"
    assert results["front"]["best"] == expected["best"] and "x" in \
        results["front"]["ranking"][0]
    assert results["mine"]["status"] == "ok" and "x" not in results["mine"]["ranking"][0]
    assert results["vikor"]["status"] == "ok"
    assert results["single"]["error"]["code"] == "invalid_argument"
    assert "one objective" in results["single"]["error"]["message"]
    assert results["unknown"]["error"]["code"] == "not_found"
    assert (answer["n_decisions"], answer["n_ok"], answer["n_error"]) == (5, 3, 2)


def test_both_objective_forms_with_another_fault_are_both_listed() -> None:
    """The slow path (a body msgspec refuses): the schema's oneOf names /objectives."""
    body = msgspec.json.encode({**FRONT, "objective_expression": "x[0]", "seed": 7.5})
    with pytest.raises(ApiError) as info:
        decode_optimize(body)
    errors = info.value.extra["errors"]
    assert sorted((e["pointer"], e["code"]) for e in errors) == [
        ("/objectives", "invalid_argument"), ("/seed", "invalid_type")]


def test_the_tier_caps_a_fronts_size_and_its_start_points(server: LiveServer,
                                                          free_key: str) -> None:
    r = server.request("POST", "/v1/runs", {**FRONT, "archive_size": 501,
                                            "x0": [[0.0, 0.0]] * 101}, headers=auth(free_key))
    assert r.status == 422 and r.json()["code"] == "validation_failed"
    errors = {e["pointer"]: e for e in r.json()["errors"]}
    assert errors["/archive_size"]["code"] == errors["/x0"]["code"] == "above_tier_cap"
    assert "the free tier's cap of 500 points" in errors["/archive_size"]["message"]
    assert "101 start points given; the free tier takes at most 100" in \
        errors["/x0"]["message"]
    ok = server.request("POST", "/v1/optimize", {**FRONT, "archive_size": 500,
                                                 "x0": [[0.0, 0.0]] * 100},
                        headers=auth(free_key))
    assert ok.status == 200, ok.body


#: 8 objectives whose distinct values never dominate one another (the simplex), and 1,600
#: start points: a front whose exact hypervolume takes hours (issue 38's reproducer)
SIMPLEX8 = {"bounds": [[0, 1]] * 8, "seed": 1, "time_limit": 120, "archive_size": 10_000,
            "objectives": [{"name": f"f{k}", "expression": f"x[{k}] / (sum(x) + 1e-9)"}
                           for k in range(8)],
            "x0": [[((r + 1) * (0.6180339887 + 0.1 * j)) % 1.0 for j in range(8)]
                   for r in range(1600)]}


def test_a_cancelled_run_of_many_objectives_ends_at_once(server: LiveServer) -> None:
    """Its front's hypervolume would take hours: the cancel still ends the run within a
    fraction of a second (the progress interval, the 0.25 s grace), its front kept."""
    key = server.create_key(tier="team")["key"]
    run_id = submit(server, key, SIMPLEX8)["id"]
    wait_for(server, key, run_id, "running")
    time.sleep(1.0)  # the start points evaluated, the hypervolume under way
    asked = time.monotonic()
    r = server.request("POST", f"/v1/runs/{run_id}/cancel", headers=auth(key))
    assert r.status == 202, r.body
    done = wait_for(server, key, run_id, "cancelled", "succeeded", "failed", timeout=30)
    assert time.monotonic() - asked < 2.5
    assert done["state"] == "cancelled" and done["result"]["front_size"] > 1000
    assert done["result"].get("hypervolume") is None  # not measured: absent
    assert "the hypervolume was not measured" in done["result"]["message"]
