"""``stop_on_convergence`` over HTTP: the option every engine takes, read by the service from
the core's engine table (``GET /v1/engines``), checked like any option, and honoured."""

from __future__ import annotations

from conftest import LiveServer, auth
from test_api_meta import assert_problem

SPHERE = {"bounds": [[-5, 5]] * 4, "objective_expression": "sum((x - 1)**2)", "seed": 7,
          "engine": "nelder_mead", "max_evaluations": 50_000}


def test_every_engine_lists_the_option(server: LiveServer) -> None:
    engines = server.request("GET", "/v1/engines").json()["engines"]
    for engine in engines:
        (opt,) = [o for o in engine["options"] if o["name"] == "stop_on_convergence"]
        assert (opt["default"], opt["min"], opt["max"], opt["integer"]) == (1, 0, 1, True)


def test_a_solved_run_stops_and_the_option_spends_the_budget(server: LiveServer,
                                                              free_key: str) -> None:
    body = server.request("POST", "/v1/optimize", SPHERE, headers=auth(free_key)).json()
    assert body["status"] == "converged" and body["evaluations"] < 50_000, body
    assert body["value"] < 1e-12
    req = {**SPHERE, "options": {"stop_on_convergence": 0}}
    full = server.request("POST", "/v1/optimize", req, headers=auth(free_key, "x")).json()
    assert full["status"] == "max_evaluations" and full["evaluations"] == 50_000, full


def test_a_bad_value_is_a_validation_error(server: LiveServer, free_key: str) -> None:
    req = {**SPHERE, "options": {"stop_on_convergence": 2}}
    body = assert_problem(server.request("POST", "/v1/optimize", req, headers=auth(free_key)),
                          422, "validation_failed")
    assert [e["pointer"] for e in body["errors"]] == ["/options/stop_on_convergence"]
