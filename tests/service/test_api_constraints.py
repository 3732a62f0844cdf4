"""Constraints, integer and discrete variables and start points over HTTP (issue 19), against
the live server: ``/v1/optimize``, ``/v1/runs`` and ``/v1/engines``."""

from __future__ import annotations

import math
import time

from conftest import LiveServer, auth
from test_api_meta import assert_problem

import decido

#: a pressure-vessel-like design: a discrete thickness, an integer count, a real length
DESIGN = {
    "objective_expression": "t * r * 10 + n * 2 + 0.1 * length",
    "variables": [
        {"name": "t", "values": [0.0625 * k for k in range(1, 20)]},
        {"name": "n", "lower": 0.5, "upper": 6.5, "type": "integer"},
        {"name": "r", "lower": 1, "upper": 5},
        {"name": "length", "lower": 1, "upper": 10},
    ],
    "constraints": ["hoop: t >= 0.02 * r * 10", "capacity: n * length >= 12",
                    "r * length >= 8"],
    "seed": 5, "max_evaluations": 8000,
}


def test_engines_list_what_each_supports(server: LiveServer) -> None:
    body = server.request("GET", "/v1/engines").json()
    table = {e["id"]: e["supports"] for e in body["engines"]}
    assert table == {e["id"]: e["supports"] for e in decido.engines()}
    assert table["lbfgsb"] == {"constraints": True, "integers": False, "x0": True,
                               "objectives": False}
    assert table["moea"]["objectives"]


def test_a_constrained_mixed_problem_runs_and_is_recorded(server: LiveServer,
                                                          free_key: str) -> None:
    r = server.request("POST", "/v1/optimize", DESIGN, headers=auth(free_key))
    assert r.status == 200, r.body
    body = r.json()
    assert body["dims"] == 4 and body["feasible"] is True
    assert body["status"] in ("converged", "max_evaluations")
    assert body["max_violation"] <= 1e-6
    assert [c["name"] for c in body["constraints"]] == ["hoop", "capacity", "c2"]
    assert all(c["violation"] <= 1e-6 for c in body["constraints"])
    v = body["variables"]
    assert set(v) == {"t", "n", "r", "length"} and body["x"] == [v["t"], v["n"], v["r"],
                                                                  v["length"]]
    assert v["n"] == round(v["n"]) and 1 <= v["n"] <= 6
    assert any(math.isclose(v["t"], 0.0625 * k) for k in range(1, 20))
    # the same seed replays the run exactly
    again = server.request("POST", "/v1/optimize", DESIGN, headers=auth(free_key)).json()
    assert again["x"] == body["x"] and again["value"] == body["value"]
    # the run resource keeps the request and the constraint report
    run = server.request("GET", f"/v1/runs/{body['run_id']}", headers=auth(free_key)).json()
    assert run["request"]["constraints"] == DESIGN["constraints"]
    assert run["request"]["variables"][1] == DESIGN["variables"][1]
    assert run["result"]["feasible"] is True
    assert run["result"]["constraints"] == body["constraints"]


def test_integers_and_x0_over_http_and_as_a_run(server: LiveServer, free_key: str) -> None:
    req = {"bounds": [[-5.5, 5.5]] * 3, "objective_expression": "sum((x - 2.3)**2)",
           "integers": [0, 1, 2], "x0": [[1, 1, 1], [2, 2, 3]], "engine": "de", "seed": 3,
           "max_evaluations": 2000}
    body = server.request("POST", "/v1/optimize", req, headers=auth(free_key)).json()
    assert body["x"] == [2, 2, 2] and body["history"][0][0] <= 2
    r = server.request("POST", "/v1/runs", req, headers=auth(free_key))
    assert r.status in (201, 202), r.body
    run_id = r.json()["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        run = server.request("GET", f"/v1/runs/{run_id}", headers=auth(free_key)).json()
        if run["state"] not in ("queued", "running"):
            break
        time.sleep(0.1)
    assert run["state"] == "succeeded" and run["result"]["x"] == [2, 2, 2]


def test_an_infeasible_problem_answers_infeasible(server: LiveServer, free_key: str) -> None:
    req = {"bounds": [[0, 1]], "objective_expression": "x[0]",
           "constraints": ["x[0] >= 2"], "engine": "de", "seed": 1, "max_evaluations": 300}
    body = server.request("POST", "/v1/optimize", req, headers=auth(free_key)).json()
    assert body["status"] == "infeasible" and body["feasible"] is False
    assert body["max_violation"] >= 1 - 1e-2


def test_bad_inputs_are_listed_with_pointers_and_positions(server: LiveServer,
                                                           free_key: str) -> None:
    req = {"bounds": [[0, 1]] * 2, "objective_expression": "sum(x)",
           "constraints": ["x[0] <= 1", "x[0] <= x[1] <= 2", "w: x[0] + q >= 0", "x[0]"],
           "integers": [0, 0, 7], "x0": [0.5, 2], "constraint_tolerance": 0}
    body = assert_problem(server.request("POST", "/v1/optimize", req,
                                         headers=auth(free_key)), 422, "validation_failed")
    found = {e["pointer"]: e["code"] for e in body["errors"]}
    assert found == {"/integers/1": "invalid_argument", "/integers/2": "invalid_argument",
                     "/x0/0": "invalid_argument",  # x[0] is an integer: 0.5 is not
                     "/x0/1": "invalid_argument", "/constraint_tolerance": "out_of_range"}
    del req["integers"], req["x0"], req["constraint_tolerance"]
    body = assert_problem(server.request("POST", "/v1/optimize", req,
                                         headers=auth(free_key)), 422, "validation_failed")
    errors = {e["pointer"]: e for e in body["errors"]}
    assert set(errors) == {"/constraints/1", "/constraints/2", "/constraints/3"}
    assert errors["/constraints/1"]["position"] == 13
    assert errors["/constraints/2"]["code"] == "unknown_name"
    assert errors["/constraints/2"]["position"] == 10
    assert errors["/constraints/3"]["code"] == "syntax_error"
    for bad, pointer in [
        ({"variables": [{"name": "a", "values": []}]}, "/variables/0/values"),
        ({"variables": [{"name": "a", "lower": 0.2, "upper": 0.8, "type": "integer"}]},
         "/variables/0"),
        ({"variables": [{"name": "a", "lower": 0, "upper": 1}], "bounds": [[0, 1]]},
         "/variables"),
        ({"bounds": [[0, 1]], "engine": "lbfgsb", "integers": [0]}, "/integers"),
        ({"bounds": [[0, 1]], "engine": "random", "x0": [0.5]}, "/x0"),
    ]:
        req = {"objective_expression": "1", **bad}
        body = assert_problem(server.request("POST", "/v1/optimize", req,
                                             headers=auth(free_key)), 422, "validation_failed")
        assert [e["pointer"] for e in body["errors"]] == [pointer], body


def test_constraint_tolerance_decides_what_is_feasible(server: LiveServer,
                                                       free_key: str) -> None:
    req = {"bounds": [[0, 1]], "objective_expression": "x[0]", "constraints": ["x[0] >= 1.05"],
           "engine": "de", "seed": 2, "max_evaluations": 500}
    strict = server.request("POST", "/v1/optimize", req, headers=auth(free_key)).json()
    loose = server.request("POST", "/v1/optimize", {**req, "constraint_tolerance": 0.1},
                           headers=auth(free_key)).json()
    assert strict["status"] == "infeasible" and loose["feasible"] is True
    assert loose["constraints"][0]["violation"] <= 0.1


def test_max_dims_counts_every_variable(server: LiveServer, free_key: str) -> None:
    # free tier: 50 dimensions; 51 variables (integer and discrete ones too) are refused
    variables = ([{"name": f"v{k}", "lower": 0, "upper": 1} for k in range(49)]
                 + [{"name": "k", "lower": 0, "upper": 3, "type": "integer"},
                    {"name": "s", "values": [1, 2]}])
    req = {"variables": variables, "objective_expression": "v0 + k + s"}
    body = assert_problem(server.request("POST", "/v1/optimize", req, headers=auth(free_key)),
                          403, "max_dims_exceeded")
    assert body["requested"] == 51
