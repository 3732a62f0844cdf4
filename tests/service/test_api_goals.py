"""One goal rule and one weight rule over HTTP: ``min`` and ``max`` are aliases of
``minimize`` and ``maximize`` wherever the API takes a goal (a run's, an objective's, a
criterion's, a scored decision's), answers say the long form, and a criterion's weight
defaults to 1; the OpenAPI document says both."""

from __future__ import annotations

from conftest import LiveServer, auth

RANKED = {"options": [{"id": "a", "attributes": {"price": 10, "quality": 7}},
                      {"id": "b", "attributes": {"price": 12, "quality": 9}}],
          "method": "wsm"}


def test_a_runs_goal_may_be_short_and_is_answered_long(server: LiveServer,
                                                       free_key: str) -> None:
    body = {"objective_expression": "x[0] - x[1]", "bounds": [[0, 1], [0, 1]],
            "goal": "max", "seed": 5, "max_evaluations": 500}
    short = server.request("POST", "/v1/optimize", body, headers=auth(free_key))
    assert short.status == 200, short.body
    assert short.json()["goal"] == "maximize" and short.json()["value"] > 0.99
    queued = server.request("POST", "/v1/runs", {**body, "goal": "min"},
                            headers=auth(free_key))
    assert queued.status == 202, queued.body
    run = server.request("GET", f"/v1/runs/{queued.json()['id']}",
                         headers=auth(free_key)).json()
    assert run["goal"] == "minimize" and run["request"]["goal"] == "minimize"
    bad = server.request("POST", "/v1/optimize", {**body, "goal": "up"},
                         headers=auth(free_key))
    assert bad.status == 422 and bad.json()["errors"][0]["pointer"] == "/goal"


def test_an_objectives_goal_may_be_short(server: LiveServer, free_key: str) -> None:
    body = {"objectives": [{"name": "f", "expression": "x[0]", "goal": "max"},
                           {"name": "g", "expression": "(x[0] - 1)**2", "goal": "min"}],
            "bounds": [[0, 1]], "seed": 1, "max_evaluations": 600}
    out = server.request("POST", "/v1/optimize", body, headers=auth(free_key))
    assert out.status == 200, out.body
    assert [o["goal"] for o in out.json()["objectives"]] == ["maximize", "minimize"]


def test_a_criterions_goal_may_be_short_and_its_weight_defaults_to_one(
        server: LiveServer, free_key: str) -> None:
    long = {**RANKED, "criteria": [{"attribute": "price", "goal": "minimize", "weight": 1},
                                   {"attribute": "quality", "goal": "maximize", "weight": 1}]}
    short = {**RANKED, "criteria": [{"attribute": "price", "goal": "min"},
                                    {"attribute": "quality", "goal": "max"}]}
    answers = [server.request("POST", "/v1/decide", r, headers=auth(free_key))
               for r in (long, short)]
    assert [a.status for a in answers] == [200, 200], answers[1].body
    assert answers[0].json()["ranking"] == answers[1].json()["ranking"]
    scored = {"options": RANKED["options"], "expression": "price", "goal": "min"}
    ranked = server.request("POST", "/v1/decide", scored, headers=auth(free_key)).json()
    assert ranked["ranking"][0]["id"] == "a"


def test_the_openapi_document_says_both_rules(server: LiveServer) -> None:
    schemas = server.request("GET", "/v1/openapi.json").json()["components"]["schemas"]
    criterion = schemas["DecisionCriterion"]["properties"]
    assert criterion["weight"]["default"] == 1
    assert set(criterion["goal"]["enum"]) == {"minimize", "maximize", "min", "max"}
    goal = schemas["OptimizeRequest"]["properties"]["goal"]
    assert set(goal["enum"]) == {"minimize", "maximize", "min", "max"}
    assert "aliases" in goal["description"]
