"""What the API's messages say, on a live server: a field named once, a finished run that
"has already succeeded", a tier's dimension cap and how to get more, a reset as a wait
("in 30 s", not an epoch), and an unknown engine echoed with its near name."""

from __future__ import annotations

import pytest
from conftest import FAKE_NOW, LiveServer, auth, fake_clock_supported
from test_api_meta import assert_problem

SPHERE = {"bounds": [[-5, 5]] * 2, "objective_expression": "sum(x**2)", "seed": 1}
DECISION = {"options": [{"id": "a", "attributes": {"p": 1}}, {"id": "b", "attributes": {"p": 2}}],
            "criteria": [{"attribute": "p", "goal": "minimize", "weight": 1}]}


def test_a_field_is_named_once(server: LiveServer, free_key: str) -> None:
    r = server.request("POST", "/v1/optimize", {**SPHERE, "bounds": [[1, 0], [0, 1]]},
                       headers=auth(free_key))
    body = assert_problem(r, 422, "validation_failed")
    assert body["detail"] == "bounds[0]: the lower bound 1.0 is above the upper bound 0.0"
    r = server.request("POST", "/v1/optimize", {**SPHERE, "bounds": [[0, 1], [1e308, -1e308]]},
                       headers=auth(free_key))
    assert assert_problem(r, 422, "validation_failed")["detail"].count("bounds[1]") == 1


def test_a_finished_run_has_already_succeeded(server: LiveServer, free_key: str) -> None:
    r = server.request("POST", "/v1/optimize", SPHERE, headers=auth(free_key))
    assert r.status == 200, r.body
    run_id = r.json()["run_id"]
    r = server.request("POST", f"/v1/runs/{run_id}/cancel", headers=auth(free_key))
    assert assert_problem(r, 409, "run_finished")["detail"] == \
        f"run {run_id} has already succeeded"


def test_the_dimension_cap_says_the_tier_and_how_to_get_more(server: LiveServer,
                                                             free_key: str) -> None:
    r = server.request("POST", "/v1/runs", {**SPHERE, "bounds": [[0, 1]] * 51},
                       headers=auth(free_key))
    body = assert_problem(r, 403, "max_dims_exceeded")
    assert body["detail"] == (
        "51 dimensions asked; the free tier allows at most 50 dimensions; the pro tier "
        "allows 500 dimensions (its keys are made by the service's operator: decido keys "
        "create --tier pro)")
    assert (body["limit_value"], body["requested"]) == (50, 51)


@pytest.mark.skipif(not fake_clock_supported(), reason="needs DECIDO_FAKE_NOW")
def test_a_limit_says_when_it_resets_as_a_wait(server: LiveServer, free_key: str) -> None:
    """The session server's clock stands at hh:mm:30: a minute window resets in 30 s."""
    for _ in range(10):  # the free plan's decide.minute
        assert server.request("POST", "/v1/decide", DECISION,
                              headers=auth(free_key)).status == 200
    r = server.request("POST", "/v1/decide", DECISION, headers=auth(free_key))
    body = assert_problem(r, 429, "rate_limited")
    wait = 60 - int(FAKE_NOW) % 60
    assert body["detail"] == f"the decide.minute limit of 10 is reached; it resets in {wait} s"
    assert r.header("retry-after") == str(wait) and body["reset"] == int(FAKE_NOW) + wait


@pytest.mark.parametrize(("sent", "near"), [("nelder-mead", "nelder_mead"),
                                            ("L-BFGS-B", "lbfgsb"), ("cmaess", "cmaes")])
def test_an_unknown_engine_is_echoed_with_its_near_name(server: LiveServer, free_key: str,
                                                        sent: str, near: str) -> None:
    for path in ("/v1/optimize", "/v1/runs"):
        r = server.request("POST", path, {**SPHERE, "engine": sent}, headers=auth(free_key))
        body = assert_problem(r, 422, "validation_failed")
        (entry,) = body["errors"]
        assert (entry["pointer"], entry["code"]) == ("/engine", "unknown_engine")
        assert entry["message"].startswith(f"unknown engine {sent!r}; did you mean {near!r}?")
        assert "dss" in entry["message"]  # the engines are listed


def test_the_replay_header_is_in_the_openapi_document(server: LiveServer) -> None:
    doc = server.request("GET", "/v1/openapi.json").json()
    header = doc["components"]["headers"]["Idempotent-Replayed"]
    assert header["schema"] == {"const": "true"} and "Idempotency-Key" in header["description"]
    for path, method, status in (("/v1/runs", "post", "202"), ("/v1/optimize", "post", "200")):
        answer = doc["paths"][path][method]["responses"][status]
        assert answer["headers"]["Idempotent-Replayed"] == {
            "$ref": "#/components/headers/Idempotent-Replayed"}
    assert "Idempotent-Replayed" not in doc["paths"]["/v1/decide"]["post"]["responses"]["200"][
        "headers"]
