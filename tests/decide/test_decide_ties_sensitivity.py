"""Ties in the answer, and the sensitivity of the top choice to each weight: every bound
is checked by deciding again just inside and just outside it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from decide_cases import problem, request

import decido

# ---------------------------------------------------------------- ties
OPTS = [
    {"id": "a", "attributes": {"x": 1.0, "y": 5.0}},
    {"id": "b", "attributes": {"x": 3.0, "y": 3.0}},
    {"id": "c", "attributes": {"x": 3.0, "y": 3.0}},
    {"id": "d", "attributes": {"x": 0.0, "y": 0.0}},
    {"id": "e", "attributes": {"x": 0.0, "y": 0.0}},
]
CRIT = [{"attribute": "x", "weight": 1}, {"attribute": "y", "weight": 1}]


def test_ties_are_reported_top_or_not():
    out = decido.decide({"options": OPTS, "criteria": CRIT, "method": "wsm"})
    # min-max scores: a (1/3 + 1)/2, b and c (1 + 3/5)/2, d and e 0
    assert [e["id"] for e in out["ranking"]] == ["b", "c", "a", "d", "e"]
    assert [e["rank"] for e in out["ranking"]] == [1, 1, 3, 4, 4]
    assert out["ties"] == [["b", "c"], ["d", "e"]]
    assert out["best"] == "b" and out["best_is_tied"] is True


def test_no_tie():
    crit = [{"attribute": "x", "weight": 2}, {"attribute": "y", "weight": 1}]
    out = decido.decide({"options": OPTS[:2], "criteria": crit})
    assert out["ties"] == [] and out["best_is_tied"] is False


def test_scores_within_a_relative_1e_9_tie():
    opts = [{"id": i, "attributes": {"x": v}} for i, v in enumerate([1.0, 1.0 + 5e-10, 1.0 - 3e-9])]
    out = decido.decide({"options": opts, "expression": "x"})
    assert out["ties"] == [[0, 1]] and out["best"] == 0  # the first in input order
    assert [e["rank"] for e in out["ranking"]] == [1, 1, 3]


# ---------------------------------------------------------------- sensitivity
def _path(w: np.ndarray, j: int, t: float) -> np.ndarray:
    u = w.copy()
    u[j] = 0.0
    u /= u.sum()
    e = np.zeros_like(w)
    e[j] = 1.0
    return (1 - t) * u + t * e


def _best_at(req: dict, weights: np.ndarray):
    again = dict(req, criteria=[dict(c, weight=float(v)) for c, v in
                                zip(req["criteria"], weights, strict=True)])
    again.pop("sensitivity", None)
    return decido.decide(again)["best"]


# bound precision: exact for the linear methods, 1e-6 for bisection
CASES = [("wsm", 1e-9), ("moora", 1e-9), ("spotis", 1e-9), ("promethee2", 1e-9),
         ("topsis", 2e-6), ("vikor", 2e-6), ("wpm", 2e-6), ("copras", 2e-6)]


@pytest.mark.parametrize(("method", "eps"), CASES)
@pytest.mark.parametrize("seed", range(6))
def test_each_bound_is_where_the_top_choice_changes(method, eps, seed):
    X, benefit, w = problem(seed, m=6, k=3)
    req = request(X, benefit, w, method, sensitivity=True)
    out = decido.decide(req)
    sens = out["sensitivity"]
    assert sens["margin"] >= 0
    checked = 0
    for j, item in enumerate(sens["criteria"]):
        t0 = item["weight"]
        assert item["attribute"] == f"c{j}" and math.isclose(t0, w[j], rel_tol=1e-12)
        assert 0 <= item["lower"] <= t0 <= item["upper"] <= 1
        for bound, key, way in (("lower", "lower_changes_to", -1),
                                ("upper", "upper_changes_to", 1)):
            t = item[bound]
            if t in (0.0, 1.0):
                assert item[key] is None
                continue
            assert item[key] is not None and item[key] != out["best"]
            inside = t - way * min(eps / 10, abs(t - t0) / 2)
            if abs(t - t0) > eps:
                assert _best_at(req, _path(w, j, inside)) == out["best"], (bound, t)
            outside = t + way * 2 * eps
            if 0 < outside < 1:
                assert _best_at(req, _path(w, j, outside)) == item[key], (bound, t)
                checked += 1
    assert checked or all(i["lower"] == 0 and i["upper"] == 1 for i in sens["criteria"])


def test_sensitivity_of_one_option_or_one_criterion_is_the_whole_interval():
    one = {"options": OPTS[:1], "criteria": CRIT, "sensitivity": True}
    sens = decido.decide(one)["sensitivity"]
    assert sens["margin"] is None
    assert [(c["lower"], c["upper"], c["lower_changes_to"], c["upper_changes_to"])
            for c in sens["criteria"]] == [(0.0, 1.0, None, None)] * 2
    single = {"options": OPTS, "criteria": CRIT[:1], "method": "topsis", "sensitivity": True}
    item = decido.decide(single)["sensitivity"]["criteria"][0]
    assert (item["weight"], item["lower"], item["upper"]) == (1.0, 0.0, 1.0)


def test_sensitivity_is_json_and_only_when_asked():
    req = {"options": OPTS, "criteria": CRIT}
    assert "sensitivity" not in decido.decide(req)
    out = decido.decide(req | {"sensitivity": True})
    assert out["sensitivity"]["margin"] == 0.0  # b and c tie on top
    expr = decido.decide({"options": OPTS, "expression": "x", "sensitivity": True})
    assert "sensitivity" not in expr
    assert any(w["code"] == "ignored_field" and w["path"] == "sensitivity"
               for w in expr["warnings"])


def test_ties_and_best_is_tied_do_not_depend_on_top_k():
    out = decido.decide({"options": OPTS, "criteria": CRIT, "top_k": 1})
    assert [e["id"] for e in out["ranking"]] == ["b"]
    assert out["ties"] == [["b", "c"], ["d", "e"]] and out["best_is_tied"] is True
    three = OPTS[:1] + [dict(o, id=f"{o['id']}{n}") for o in OPTS[1:2] for n in range(3)]
    crit = [{"attribute": "x", "weight": 2}, {"attribute": "y", "weight": 1}]
    out = decido.decide({"options": three, "criteria": crit})
    assert out["ties"] == [["b0", "b1", "b2"]] and out["best"] == "b0"
    assert [e["rank"] for e in out["ranking"]] == [1, 1, 1, 4]
