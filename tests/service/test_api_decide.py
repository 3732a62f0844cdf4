"""``POST /v1/decide`` and ``POST /v1/batch`` against the live server."""

from __future__ import annotations

from conftest import LiveServer, auth
from test_api_meta import assert_common_headers, assert_problem

import decido

OPTIONS = [
    {"id": "s1", "attributes": {"price": 18.5, "quality": 7.2, "lead_time": 5}},
    {"id": "s2", "attributes": {"price": 22.0, "quality": 8.1, "lead_time": 12}},
    {"id": "s3", "attributes": {"price": 15.0, "quality": 6.0, "lead_time": 3}},
    {"id": "s4", "attributes": {"price": 19.0, "quality": 9.0, "lead_time": 8}},
    {"id": "s5", "attributes": {"price": 30.0, "quality": 9.5, "lead_time": 2}},
]
DECISION = {
    "options": OPTIONS,
    "method": "topsis",
    "criteria": [{"attribute": "price", "goal": "minimize", "weight": 5},
                 {"attribute": "quality", "goal": "maximize", "weight": 3}],
    "constraints": ["price <= 25", "lead_time < 10 or quality >= 9"],
    "explain": True,
}


def usage(server: LiveServer, key: str) -> dict:
    r = server.request("GET", "/v1/usage", headers=auth(key))
    assert r.status == 200, r.body
    return r.json()


def test_decide_passes_the_library_answer_through(server: LiveServer) -> None:
    key = server.create_key(plan="sdk")["key"]
    r = server.request("POST", "/v1/decide", DECISION, headers=auth(key))
    assert r.status == 200, r.body
    assert r.json() == decido.decide(DECISION)
    assert r.header("x-ratelimit-limit") == "100"  # sdk: 100 per minute
    assert int(r.header("x-ratelimit-remaining")) == 99
    assert_common_headers(r)
    assert usage(server, key)["decision"]["month"]["used"] == 1


def test_decide_validation_errors_name_the_field_and_position(server: LiveServer,
                                                              free_key: str) -> None:
    bad = {**DECISION, "constraints": ["price <= 25", "lead_time < "]}
    r = server.request("POST", "/v1/decide", bad, headers=auth(free_key, "x-api-key"))
    body = assert_problem(r, 422, "validation_failed")
    (error,) = body["errors"]
    assert error["field"] == "constraints[1]" and error["code"] == "invalid_expression"
    assert error["position"] == 12
    bad = {**DECISION, "criteria": [{"attribute": "price", "weight": -1}]}
    (error,) = assert_problem(server.request("POST", "/v1/decide", bad, headers=auth(free_key)),
                              422, "validation_failed")["errors"]
    assert error == {"pointer": "/criteria/0/weight", "field": "criteria[0].weight",
                     "code": "non_positive_value", "message": error["message"]}
    # a decision that fails validation is still a decision computed: it counts
    assert usage(server, free_key)["decision"]["month"]["used"] == 2


def test_decide_400_and_415(server: LiveServer, free_key: str) -> None:
    h = auth(free_key)
    assert_problem(server.request("POST", "/v1/decide", raw=b"{not json",
                                  headers={**h, "Content-Type": "application/json"}),
                   400, "malformed_json")
    assert_problem(server.request("POST", "/v1/decide", raw=b"",
                                  headers={**h, "Content-Type": "application/json"}),
                   400, "malformed_json")
    r = server.request("POST", "/v1/decide", raw=b"options=1",
                       headers={**h, "Content-Type": "application/x-www-form-urlencoded"})
    assert_problem(r, 415, "unsupported_media_type")
    assert r.header("x-ratelimit-limit") == "10"  # key known: the key's minute counter
    assert_problem(server.request("POST", "/v1/decide", raw=b"{}", headers=h),
                   415, "unsupported_media_type")  # no content type
    # none of these was counted
    assert usage(server, free_key)["decision"]["month"]["used"] == 0


def test_batch_counts_every_item(server: LiveServer) -> None:
    key = server.create_key(plan="sdk")["key"]
    batch = {"defaults": {"options": OPTIONS, "criteria": DECISION["criteria"]},
             "decisions": [{"id": "a", "method": "wsm"}, {"id": "b", "method": "topsis"},
                           {"id": "c", "method": "nope"}]}
    r = server.request("POST", "/v1/batch", batch, headers=auth(key, "x-api-key"))
    assert r.status == 200, r.body
    body = r.json()
    assert body == decido.decide_batch(batch)
    assert (body["n_ok"], body["n_error"]) == (2, 1)
    month = usage(server, key)["decision"]["month"]
    assert month["used"] == 3
    minute = server.request("GET", "/v1/usage", headers=auth(key)).json()["decision"]["minute"]
    assert minute["remaining"] == 100 - 1  # the batch: one request (usage counts nothing)


def test_batch_too_large_for_the_plan(server: LiveServer, free_key: str) -> None:
    batch = {"defaults": {"options": OPTIONS, "criteria": DECISION["criteria"]},
             "decisions": [{"id": i} for i in range(11)]}  # free: 10 per batch
    body = assert_problem(server.request("POST", "/v1/batch", batch, headers=auth(free_key)),
                          403, "batch_too_large")
    assert body["limit_value"] == 10 and body["requested"] == 11
    assert body["field"] == "decisions"
    assert usage(server, free_key)["decision"]["month"]["used"] == 0


def test_batch_envelope_errors(server: LiveServer, free_key: str) -> None:
    body = assert_problem(server.request("POST", "/v1/batch", {"decisions": 3},
                                         headers=auth(free_key)), 422, "validation_failed")
    assert body["errors"][0]["field"] == "decisions"
    body = assert_problem(server.request("POST", "/v1/batch", [1, 2], headers=auth(free_key)),
                          422, "validation_failed")


def test_judgments_and_uncertainty_through_decide_and_batch(server: LiveServer) -> None:
    """AHP weights, decision makers and SMAA-2 take the same bodies over HTTP as in the
    library (the service validates with the library's schema), each decision counted once
    whatever its samples; a bad matrix is a 422 listing every fault with its pointer."""
    key = server.create_key(plan="sdk")["key"]
    criteria = [{"attribute": "price", "goal": "minimize"}, {"attribute": "quality"}]
    options = [{**o, "attributes": {**o["attributes"],
                                    "price": {"low": 0.9 * o["attributes"]["price"],
                                              "high": 1.1 * o["attributes"]["price"]}}}
               for o in OPTIONS]
    sampled = {"options": options, "criteria": criteria, "method": "topsis",
               "pairwise": [[1, 2], [None, 1]], "uncertainty": {"samples": 3000, "seed": 9}}
    r = server.request("POST", "/v1/decide", sampled, headers=auth(key))
    assert r.status == 200, r.body
    assert r.json() == decido.decide(sampled)
    assert set(r.json()["smaa"]) == {"samples", "seed", "acceptability", "central_weights",
                                     "confidence"}
    group = {"options": OPTIONS, "criteria": criteria,
             "decision_makers": [{"id": "a", "pairwise": [[1, 3], [None, 1]]},
                                 {"id": "b", "weight": 2, "pairwise": [[1, 0.5], [None, 1]]}]}
    batch = {"decisions": [sampled, group, {**group, "aggregation": "aip"}]}
    r = server.request("POST", "/v1/batch", batch, headers=auth(key))
    assert r.status == 200, r.body
    assert r.json() == decido.decide_batch(batch) and r.json()["n_ok"] == 3
    assert usage(server, key)["decision"]["month"]["used"] == 4
    bad = {**group, "decision_makers": [{"id": "a", "pairwise": [[1, -3], [2, 2]]}]}
    body = assert_problem(server.request("POST", "/v1/decide", bad, headers=auth(key)), 422,
                          "validation_failed")
    assert {(e["pointer"], e["code"]) for e in body["errors"]} == {
        ("/decision_makers/0/pairwise/0/1", "non_positive_value"),
        ("/decision_makers/0/pairwise/1/1", "invalid_pairwise")}
    doc = server.request("GET", "/v1/openapi.json").json()
    request = doc["components"]["schemas"]["DecideRequest"]["properties"]
    assert {"pairwise", "decision_makers", "uncertainty"} <= set(request)
    assert "DecisionSmaa" in doc["components"]["schemas"]
