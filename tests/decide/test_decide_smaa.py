"""Decisions under uncertainty (SMAA-2) against closed forms: two criteria with weights
uniform on the simplex (w1 = t ~ U(0, 1)) and WSM, where each option ranks first on an
interval of t (acceptability = its length, central weight = its midpoint, confidence 1);
a normal value against a constant (Phi); constraints per sample; every method against the
plain decision when nothing is uncertain; the batched scoring against the one-matrix
methods; seeds replay."""

from __future__ import annotations

import numpy as np
import pytest
from jsonschema import Draft202012Validator

import decido
from decido.decisions import _kernels
from decido.decisions import methods as _mcdm_methods
from decido.decisions.vocabulary import METHODS

# minmax over [0, 10]: A (1, 0), B (0, 1), C (0.7, 0.5); score t a + (1 - t) b
OPTIONS = [
    {"id": "A", "attributes": {"x": 10, "y": 0}},
    {"id": "B", "attributes": {"x": 0, "y": 10}},
    {"id": "C", "attributes": {"x": 7, "y": 5}},
]
CRITERIA = [{"attribute": "x"}, {"attribute": "y"}]
N = 50_000


def smaa(**more):
    body = {"options": OPTIONS, "criteria": CRITERIA, "method": "wsm",
            "weighting": "unknown", "uncertainty": {"samples": N, "seed": 7}, **more}
    return decido.decide(body)


def test_two_criteria_uniform_weights_closed_form():
    out = smaa()
    acc, central, conf = (out["smaa"][k] for k in ("acceptability", "central_weights",
                                                    "confidence"))
    # A first for t > 5/8, B for t < 5/12, C between
    assert acc["A"][0] == pytest.approx(3 / 8, abs=0.01)
    assert acc["B"][0] == pytest.approx(5 / 12, abs=0.01)
    assert acc["C"][0] == pytest.approx(5 / 24, abs=0.01)
    for row in acc.values():
        assert sum(row) == pytest.approx(1.0)
    assert central["A"]["x"] == pytest.approx((5 / 8 + 1) / 2, abs=0.005)
    assert central["B"]["x"] == pytest.approx(5 / 24, abs=0.005)
    assert central["C"]["x"] == pytest.approx((5 / 12 + 5 / 8) / 2, abs=0.005)
    assert conf == {"A": 1.0, "B": 1.0, "C": 1.0}
    assert out["best"] == "B" and [e["id"] for e in out["ranking"]] == ["B", "A", "C"]
    assert out["ranking"][0]["score"] == acc["B"][0]
    assert out["weights"]["x"] == pytest.approx(0.5, abs=0.01)


def test_weight_intervals_restrict_the_simplex():
    criteria = [{"attribute": "x", "weight": {"low": 0.5, "high": 1}}, {"attribute": "y"}]
    out = smaa(criteria=criteria)
    acc = out["smaa"]["acceptability"]
    assert acc["A"][0] == pytest.approx(0.75, abs=0.01)  # t > 5/8 of t in [0.5, 1]
    assert acc["C"][0] == pytest.approx(0.25, abs=0.01)
    assert acc["B"][0] == 0.0 and out["smaa"]["central_weights"]["B"] is None


def test_symmetric_options_tie_as_today():
    options = [{"id": "A", "attributes": {"x": 10, "y": 0}},
               {"id": "B", "attributes": {"x": 0, "y": 10}}]
    out = decido.decide({"options": options, "criteria": CRITERIA, "method": "wsm",
                         "weighting": "equal", "uncertainty": {"samples": 10}})
    # equal weights: every sample ties A and B: both rank 1 in every sample
    assert out["smaa"]["acceptability"] == {"A": [1.0, 0.0], "B": [1.0, 0.0]}
    assert out["best"] == "A" and out["best_is_tied"] and out["ties"] == [["A", "B"]]
    assert [e["rank"] for e in out["ranking"]] == [1, 1]


def test_normal_value_against_a_constant():
    from math import erf, sqrt
    options = [{"id": "A", "attributes": {"x": {"mean": 1.0, "sd": 1.0}}},
               {"id": "B", "attributes": {"x": 0.0}}]
    out = decido.decide({"options": options, "criteria": [{"attribute": "x", "weight": 1}],
                         "uncertainty": {"samples": N, "seed": 1}})
    phi = 0.5 * (1 + erf(1 / sqrt(2)))
    assert out["smaa"]["acceptability"]["A"][0] == pytest.approx(phi, abs=0.01)
    assert out["smaa"]["confidence"]["A"] == pytest.approx(phi, abs=0.01)


def test_clipped_normal_and_uniform_values():
    options = [{"id": "A", "attributes": {"x": {"mean": 0.0, "sd": 5.0, "low": 1, "high": 2}}},
               {"id": "B", "attributes": {"x": {"low": 0.0, "high": 0.999}}}]
    out = decido.decide({"options": options, "criteria": [{"attribute": "x", "weight": 1}],
                         "method": "topsis", "uncertainty": {"samples": 500}})
    assert out["smaa"]["acceptability"]["A"] == [1.0, 0.0]


def test_constraints_apply_per_sample():
    options = [{"id": "A", "attributes": {"x": {"low": 0, "high": 1}}},
               {"id": "B", "attributes": {"x": -1}},
               {"id": "C", "attributes": {"x": -2}}]
    out = decido.decide({"options": options, "criteria": [{"attribute": "x", "weight": 1}],
                         "constraints": ["x > 0.25 or x < 0"],
                         "uncertainty": {"samples": N, "seed": 3}})
    acc = out["smaa"]["acceptability"]
    assert sum(acc["A"]) == pytest.approx(0.75, abs=0.01)
    assert acc["A"][0] == pytest.approx(0.75, abs=0.01)
    assert acc["B"][0] == pytest.approx(0.25, abs=0.01)
    never = decido.decide({"options": options, "criteria": [{"attribute": "x", "weight": 1}],
                           "constraints": ["x > 0"], "uncertainty": {"samples": 100}})
    assert [e["id"] for e in never["infeasible"]] == ["B", "C"]
    assert never["infeasible"][0]["violated"] == ["x > 0"]


def test_the_same_seed_gives_the_same_answer():
    first, again, other = smaa(), smaa(), smaa(uncertainty={"samples": N, "seed": 8})
    assert first == again
    assert first["smaa"]["acceptability"] != other["smaa"]["acceptability"]


@pytest.mark.parametrize("method", [m for m in METHODS if m != "expression"])
def test_every_method_matches_the_plain_decision_when_nothing_is_uncertain(method):
    rng = np.random.default_rng(5)
    options = [{"id": i, "attributes": {"a": float(rng.uniform(1, 9)),
                                        "b": float(rng.uniform(1, 9)),
                                        "c": float(rng.uniform(1, 9))}} for i in range(6)]
    criteria = [{"attribute": "a", "weight": 2}, {"attribute": "b", "goal": "minimize",
                                                   "weight": 1}, {"attribute": "c", "weight": 1}]
    body = {"options": options, "criteria": criteria, "method": method,
            "constraints": ["a > 2"]}
    plain = decido.decide(body)
    out = decido.decide({**body, "uncertainty": {"samples": 3}})
    ranks = {e["id"]: e["rank"] for e in plain["ranking"]}
    acc = out["smaa"]["acceptability"]
    assert set(acc) == {str(i) for i in ranks}
    for i, r in ranks.items():
        assert acc[str(i)][r - 1] == 1.0
    assert [e["id"] for e in out["infeasible"]] == [e["id"] for e in plain["infeasible"]]


def test_expression_method_under_uncertainty():
    options = [{"id": "A", "attributes": {"x": {"low": 0, "high": 2}}},
               {"id": "B", "attributes": {"x": 1}}]
    out = decido.decide({"options": options, "expression": "x * 2",
                         "uncertainty": {"samples": N}})
    assert out["smaa"]["acceptability"]["A"][0] == pytest.approx(0.5, abs=0.01)
    assert out["smaa"]["central_weights"]["A"] is None and out["weights"] == {}


@pytest.mark.parametrize("method", [m for m in METHODS if m != "expression"])
def test_batched_scores_equal_one_matrix_at_a_time(method):
    rng = np.random.default_rng(11)
    n, m, k = 7, 5, 3
    X3 = rng.uniform(1, 9, size=(n, k, m))  # each sample an m x k column-major matrix
    W = rng.dirichlet(np.ones(k), size=n)
    benefit = np.array([True, False, True])
    params = {"normalization": METHODS[method].normalization, "v": 0.5, "lambda": 0.3,
              "preference": "linear", "q": np.full(k, 0.5), "p": np.full(k, 2.0),
              "bounds": np.ascontiguousarray([[0.0, 10.0]] * k)}
    row = METHODS[method]
    if row.kernel == "C":
        batch = _kernels.scores_batch(method, X3, benefit.tobytes(), W, params["normalization"],
                                   0.5, _mcdm_methods.RANK_TOLERANCE, params["bounds"], None)
    else:
        batch = row.score(X3.transpose(0, 2, 1), benefit, W, params).score
    for s in range(n):
        one = row.score(np.asfortranarray(X3[s].T), benefit, W[s], params).score
        assert batch[s] == pytest.approx(one, rel=1e-12, abs=1e-15)


def test_faults_of_uncertain_requests():
    options = [{"id": "A", "attributes": {"x": {"low": 2, "high": 1}, "y": {"mean": 1}}},
               {"id": "B", "attributes": {"x": {"low": 0, "high": 1, "z": 1}, "y": 1}}]
    body = {"options": options, "criteria": [{"attribute": "x", "weight": {"low": 1}},
                                             {"attribute": "y", "weight": 1}],
            "uncertainty": {"samples": 0, "seed": -1, "n": 2}}
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(body)
    pointers = {e["pointer"] for e in info.value.errors}
    assert {"/uncertainty/samples", "/uncertainty/seed", "/uncertainty/n",
            "/criteria/0/weight"} <= pointers
    body["uncertainty"] = {"samples": 10}
    body["criteria"][0]["weight"] = 1
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(body)
    assert {e["pointer"] for e in info.value.errors} == {
        "/options/0/attributes/x", "/options/0/attributes/y", "/options/1/attributes/x/z"}
    with pytest.raises(decido.DecisionError) as info:  # uncertain values need uncertainty
        decido.decide({"options": options, "criteria": [{"attribute": "x", "weight": 1}]})
    assert "uncertainty" in info.value.errors[0]["message"]
    with pytest.raises(decido.DecisionError) as info:
        decido.decide({"options": OPTIONS, "criteria": CRITERIA, "weighting": "unknown"})
    assert info.value.errors[0]["pointer"] == "/weighting"
    with pytest.raises(decido.DecisionError) as info:  # positivity over the support
        decido.decide({"options": [{"id": 1, "attributes": {"x": {"mean": 3, "sd": 1}}},
                                   {"id": 2, "attributes": {"x": 2}}], "method": "copras",
                       "criteria": [{"attribute": "x", "weight": 1}],
                       "uncertainty": {"samples": 10}})
    assert info.value.errors[0]["code"] == "non_positive_value"


def test_answers_and_requests_match_the_schema():
    schemas = decido.decision_schemas()
    for name, body in (("DecideRequest", {"options": OPTIONS, "criteria": CRITERIA,
                                          "weighting": "unknown",
                                          "uncertainty": {"samples": 10}}),):
        Draft202012Validator({"components": {"schemas": schemas},
                              "$ref": f"#/components/schemas/{name}"}).validate(body)
    Draft202012Validator({"components": {"schemas": schemas},
                          "$ref": "#/components/schemas/DecideResult"}).validate(smaa())
