"""Issue 20's reference conventions, against values computed here (not by decido):
constant criteria under each normalization, entropy and std weights."""

from __future__ import annotations

import math
import statistics

import pytest

import decido

OPTIONS = [
    {"id": "a", "attributes": {"price": 10.0, "quality": 7.0, "flat": 4.0, "zero": 0.0}},
    {"id": "b", "attributes": {"price": 12.0, "quality": 8.0, "flat": 4.0, "zero": 3.0}},
    {"id": "c", "attributes": {"price": 9.0, "quality": 6.0, "flat": 4.0, "zero": 1.0}},
    {"id": "d", "attributes": {"price": 15.0, "quality": 9.0, "flat": 4.0, "zero": 0.0}},
]
M = len(OPTIONS)


def _normalized_flat(normalization: str, goal: str) -> list[float]:
    out = decido.decide({
        "options": OPTIONS, "method": "wsm", "normalization": normalization, "explain": True,
        "criteria": [{"attribute": "price", "goal": "minimize", "weight": 1},
                     {"attribute": "flat", "goal": goal, "weight": 1}],
    })  # fmt: skip
    assert any(w["code"] == "constant_criterion" for w in out["warnings"])
    return [e["explanation"]["normalized"]["flat"] for e in out["ranking"]]


@pytest.mark.parametrize(("normalization", "goal", "want"), [
    ("minmax", "maximize", 1.0),  # (x - min)/0: the rule, every option 1
    ("minmax", "minimize", 1.0),
    ("sum", "maximize", 1 / M),  # x / (m x)
    ("sum", "minimize", 1 / M),  # (1/x) / (m/x)
    ("vector", "maximize", 1 / math.sqrt(M)),  # x / (sqrt(m) x)
    ("vector", "minimize", 1 - 1 / math.sqrt(M)),
    ("max", "maximize", 1.0),  # x / x
    ("max", "minimize", 0.0),  # 1 - x/x
    ("linear", "minimize", 1.0),  # min/x
])  # fmt: skip
def test_constant_criterion_uses_the_formula_where_it_is_defined(normalization, goal, want):
    for value in _normalized_flat(normalization, goal):
        assert value == pytest.approx(want, rel=1e-15, abs=1e-15)


def _entropy_by_hand(columns: list[list[float]]) -> list[float]:
    """scikit-criteria's entropy weights: p = x/sum x on the raw values, 0 ln 0 = 0."""
    d = []
    for x in columns:
        total = math.fsum(x)
        plogp = [p * math.log(p) for p in (v / total for v in x) if p > 0]
        d.append(1 + math.fsum(plogp) / math.log(len(x)))
    return [v / math.fsum(d) for v in d]


def test_entropy_weights_ignore_the_goal_and_allow_zeros():
    crit = [{"attribute": "price", "goal": "minimize"}, {"attribute": "quality"},
            {"attribute": "zero", "goal": "minimize"}]
    out = decido.decide({"options": OPTIONS, "criteria": crit, "weighting": "entropy"})
    cols = [[o["attributes"][c["attribute"]] for o in OPTIONS] for c in crit]
    want = _entropy_by_hand(cols)
    got = [out["weights"][c["attribute"]] for c in crit]
    assert got == pytest.approx(want, rel=1e-12)
    # the goal does not enter: maximizing price gives the same weights
    crit[0]["goal"] = "maximize"
    again = decido.decide({"options": OPTIONS, "criteria": crit, "weighting": "entropy"})
    assert again["weights"] == pytest.approx(out["weights"], rel=1e-15)


def test_entropy_refuses_negative_values_naming_the_attribute():
    opts = [dict(o, attributes=dict(o["attributes"])) for o in OPTIONS]
    opts[2]["attributes"]["zero"] = -1.0
    crit = [{"attribute": "price"}, {"attribute": "zero", "goal": "minimize"}]
    with pytest.raises(decido.DecisionError) as info:
        decido.decide({"options": opts, "criteria": crit, "weighting": "entropy"})
    err = info.value
    assert (err.code, err.path) == ("non_positive_value", "options[2].attributes.zero")
    assert "'zero'" in err.message and ">= 0" in err.message


def test_std_weights_are_sample_deviations_of_the_raw_values():
    crit = [{"attribute": "price", "goal": "minimize"}, {"attribute": "quality"},
            {"attribute": "flat"}]
    out = decido.decide({"options": OPTIONS, "criteria": crit, "weighting": "std"})
    d = [statistics.stdev([o["attributes"][c["attribute"]] for o in OPTIONS]) for c in crit]
    want = [v / math.fsum(d) for v in d]
    assert [out["weights"][c["attribute"]] for c in crit] == pytest.approx(want, rel=1e-12)
    assert out["weights"]["flat"] == 0.0
