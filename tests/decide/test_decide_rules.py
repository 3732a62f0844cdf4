"""The rules of issue 4: constraints, ranks, infeasibility, constant criteria,
VIKOR/SPOTIS direction, the rule-6 conventions, explanations, JSON output."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from decide_cases import problem, request, run, scores

import decido

METHODS = [
    "wsm",
    "wpm",
    "topsis",
    "vikor",
    "promethee2",
    "waspas",
    "copras",
    "moora",
    "edas",
    "aras",
    "spotis",
]

SUPPLIERS = [
    {"id": "s1", "attributes": {"price": 18.5, "quality": 7.2, "lead_time": 5}},
    {"id": "s2", "attributes": {"price": 22.0, "quality": 8.1, "lead_time": 12}},
    {"id": "s3", "attributes": {"price": 15.0, "quality": 6.0, "lead_time": 3}},
    {"id": "s4", "attributes": {"price": 30.0, "quality": 9.5, "lead_time": 2}},
    {"id": "s5", "attributes": {"price": 24.0, "quality": 9.1, "lead_time": 14}},
]
CRITERIA = [
    {"attribute": "price", "goal": "minimize", "weight": 5},
    {"attribute": "quality", "goal": "maximize", "weight": 3},
    {"attribute": "lead_time", "goal": "minimize", "weight": 2},
]


def suppliers(**fields):
    return {"options": SUPPLIERS, "method": "wsm", "criteria": CRITERIA, **fields}


def assert_json_ready(value):
    """Plain JSON types only (no numpy scalars), no NaN or infinity."""
    json.dumps(value, allow_nan=False)
    if isinstance(value, dict):
        assert all(type(k) is str for k in value)
        for v in value.values():
            assert_json_ready(v)
    elif isinstance(value, list):
        for v in value:
            assert_json_ready(v)
    else:
        assert value is None or type(value) in (str, int, float, bool), type(value)


# ---------------------------------------------------------------- the issue's example
def test_issue_example_shape():
    result = decido.decide(
        suppliers(
            constraints=["price <= 25", "lead_time < 10 or quality >= 9"], top_k=2, explain=True
        )
    )
    assert_json_ready(result)
    assert list(result) == [
        "status", "method", "normalization", "weighting", "weights", "higher_is_better",
        "best", "best_is_tied", "ties", "n_options", "n_feasible", "ranking", "infeasible",
        "warnings",
    ]  # fmt: skip
    assert result["status"] == "ok" and result["method"] == "wsm"
    assert result["normalization"] == "minmax" and result["weighting"] == "given"
    assert result["weights"] == {"price": 0.5, "quality": 0.3, "lead_time": 0.2}
    assert result["n_options"] == 5 and result["n_feasible"] == 3
    assert result["infeasible"] == [
        {"id": "s2", "violated": ["lead_time < 10 or quality >= 9"]},
        {"id": "s4", "violated": ["price <= 25"]},
    ]
    assert [e["id"] for e in result["ranking"]] == ["s3", "s1"]
    assert result["best"] == "s3"
    top = result["ranking"][0]
    assert top["rank"] == 1 and top["score"] == pytest.approx(0.7)
    assert top["explanation"]["normalized"] == {"price": 1.0, "quality": 0.0, "lead_time": 1.0}


@pytest.mark.parametrize("method", METHODS)
def test_every_method_answers_json(method):
    result = decido.decide(suppliers(method=method, explain=True))
    assert_json_ready(result)
    assert result["status"] == "ok" and len(result["ranking"]) == 5
    assert result["higher_is_better"] is (method not in ("vikor", "spotis"))
    assert ("compromise" in result) is (method == "vikor")


# ---------------------------------------------------------------- rule 1
def test_constraints_over_any_attribute_with_the_full_language():
    opts = [
        {"id": i, "attributes": {"a": float(i), "b": float(10 - i), "tag": i % 2}}
        for i in range(10)
    ]
    cons = ["2 <= a < 8", "not tag or b > 6", "where(a > 5, b * 2, 100) >= 5", "a % 3 != 0"]
    result = decido.decide(
        {
            "options": opts,
            "criteria": [{"attribute": "a", "goal": "maximize"}],
            "weighting": "equal",
            "constraints": cons,
        }
    )
    ok = [i for i in range(10) if 2 <= i < 8 and (not i % 2 or 10 - i > 6) and i % 3 != 0]
    ok = [i for i in ok if (2 * (10 - i) if i > 5 else 100) >= 5]
    assert sorted(e["id"] for e in result["ranking"]) == ok
    assert [v["id"] for v in result["infeasible"]] == [i for i in range(10) if i not in ok]
    v0 = result["infeasible"][0]
    assert v0 == {"id": 0, "violated": ["2 <= a < 8", "a % 3 != 0"]}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("weighting", ["given", "entropy", "critic", "std"])
def test_infeasible_options_do_not_influence_scores(method, weighting):
    X, benefit, w = problem(3, 8, 3)
    X[0] = [1000.0, 0.5, 1000.0]  # an extreme option, excluded by a constraint
    X[5] = [0.7, 990.0, 0.9]
    req = request(X, benefit, w if weighting == "given" else None, method, weighting=weighting)
    req["constraints"] = ["c0 < 500 and c1 < 500"]
    result = decido.decide(req)
    assert [v["id"] for v in result["infeasible"]] == ["o0", "o5"]
    keep = [i for i in range(8) if i not in (0, 5)]
    alone = request(
        X[keep], benefit, w if weighting == "given" else None, method, weighting=weighting
    )
    for i, opt in zip(keep, alone["options"], strict=True):
        opt["id"] = f"o{i}"
    reference = decido.decide(alone)
    assert result["weights"] == pytest.approx(reference["weights"])
    ours = {e["id"]: e["score"] for e in result["ranking"]}
    theirs = {e["id"]: e["score"] for e in reference["ranking"]}
    assert ours == pytest.approx(theirs)


def test_constraint_that_is_nan_does_not_hold():
    result = decido.decide(suppliers(constraints=["sqrt(quality - 8)"]))
    assert {v["id"] for v in result["infeasible"]} == {"s1", "s3"}  # sqrt of a negative
    assert {e["id"] for e in result["ranking"]} == {"s2", "s4", "s5"}


# ---------------------------------------------------------------- rule 2
def tie_request(values, **fields):
    return {
        "options": [{"id": f"t{i}", "attributes": {"v": v}} for i, v in enumerate(values)],
        "method": "wsm",
        "criteria": [{"attribute": "v", "goal": "maximize", "weight": 1}],
        **fields,
    }


def test_competition_ranks_and_input_order_for_ties():
    result = decido.decide(tie_request([3.0, 5.0, 4.0, 4.0, 1.0, 4.0]))
    assert [(e["id"], e["rank"]) for e in result["ranking"]] == [
        ("t1", 1), ("t2", 2), ("t3", 2), ("t5", 2), ("t0", 5), ("t4", 6),
    ]  # fmt: skip


def test_top_k_cuts_but_ranks_stay():
    result = decido.decide(tie_request([3.0, 5.0, 4.0, 4.0, 1.0, 4.0], top_k=3))
    assert [(e["id"], e["rank"]) for e in result["ranking"]] == [("t1", 1), ("t2", 2), ("t3", 2)]
    assert result["n_feasible"] == 6
    result = decido.decide(tie_request([1.0, 2.0], top_k=10))
    assert len(result["ranking"]) == 2


def test_ties_within_rounding_share_a_rank():
    # 0.1 + 0.2 and 0.3 differ in the last bit; they tie
    result = decido.decide(
        {
            "options": [
                {"id": "a", "attributes": {"x": 0.1, "y": 0.2}},
                {"id": "b", "attributes": {"x": 0.3, "y": 0.0}},
                {"id": "c", "attributes": {"x": 0.0, "y": 0.0}},
            ],
            "method": "expression",
            "expression": "x + y",
        }
    )
    assert [(e["id"], e["rank"]) for e in result["ranking"]] == [("a", 1), ("b", 1), ("c", 3)]


def test_identical_options_tie_in_every_method():
    for method in METHODS:
        opts = [dict(o) for o in SUPPLIERS] + [
            {"id": "s1bis", "attributes": SUPPLIERS[0]["attributes"]}
        ]
        result = decido.decide(suppliers(method=method, options=opts))
        r = {e["id"]: e["rank"] for e in result["ranking"]}
        assert r["s1"] == r["s1bis"], method
        ids = [e["id"] for e in result["ranking"]]
        assert ids.index("s1") < ids.index("s1bis")


# ---------------------------------------------------------------- rule 3
@pytest.mark.parametrize("method", [*METHODS, "expression"])
def test_nothing_feasible_is_a_normal_answer(method):
    fields = {"expression": "quality - price"} if method == "expression" else {}
    result = decido.decide(suppliers(method=method, constraints=["price < 0"], **fields))
    assert_json_ready(result)
    assert result["status"] == "infeasible" and result["best"] is None
    assert result["ranking"] == [] and result["n_feasible"] == 0
    assert [v["id"] for v in result["infeasible"]] == ["s1", "s2", "s3", "s4", "s5"]
    assert all(v["violated"] == ["price < 0"] for v in result["infeasible"])


@pytest.mark.parametrize("method", [*METHODS, "expression"])
def test_one_feasible_option_ranks_first(method):
    fields = {"expression": "quality - price"} if method == "expression" else {}
    result = decido.decide(
        suppliers(method=method, constraints=["price < 16"], explain=True, **fields)
    )
    assert_json_ready(result)
    assert result["status"] == "ok" and result["best"] == "s3"
    (entry,) = result["ranking"]
    assert entry["rank"] == 1
    if method == "promethee2":
        assert entry["score"] is None  # flows need two options
        assert entry["explanation"] == {"phi_plus": None, "phi_minus": None}
    else:
        assert entry["score"] is not None


def test_one_option_with_automatic_weights_warns_and_uses_equal_weights():
    result = decido.decide(suppliers(weighting="entropy", constraints=["price < 16"]))
    assert result["weights"] == pytest.approx(
        {"price": 1 / 3, "quality": 1 / 3, "lead_time": 1 / 3}
    )
    codes = [w["code"] for w in result["warnings"]]
    assert "single_option" in codes and "degenerate_weights" in codes


# ---------------------------------------------------------------- rule 4
@pytest.mark.parametrize("method", METHODS)
def test_constant_criterion_warns_and_does_not_discriminate(method):
    opts = [{"id": o["id"], "attributes": {**o["attributes"], "lead_time": 4}} for o in SUPPLIERS]
    result = decido.decide(suppliers(method=method, options=opts, explain=True))
    assert_json_ready(result)
    assert all(e["score"] is not None for e in result["ranking"])
    warning = [w for w in result["warnings"] if w["code"] == "constant_criterion"]
    assert len(warning) == 1 and warning[0]["path"] == "criteria[2]"
    for e in result["ranking"]:
        ex = e["explanation"]
        if "normalized" in ex and method in ("wsm", "wpm", "topsis", "waspas"):
            # min-max (wsm) divides by zero: 1; vector (topsis): 1 - 1/sqrt(5) for a cost;
            # linear (wpm, waspas): min/x = 1
            want = 1 - 1 / math.sqrt(5) if method == "topsis" else 1.0
            assert ex["normalized"]["lead_time"] == pytest.approx(want, rel=1e-15)
        if method == "vikor":
            assert ex["regret"]["lead_time"] == 0.0
        if method == "spotis":
            assert ex["distance"]["lead_time"] == 0.0
    if method == "topsis":  # distance 0 on it: the ranking is the one without it
        without = decido.decide(suppliers(method=method, criteria=CRITERIA[:2]))
        assert [e["id"] for e in result["ranking"]] == [e["id"] for e in without["ranking"]]


@pytest.mark.parametrize("method", ["wsm", "topsis", "vikor", "edas", "promethee2"])
def test_all_criteria_constant(method):
    opts = [{"id": i, "attributes": {"a": 2.0, "b": 5.0}} for i in range(4)]
    crit = [{"attribute": "a", "weight": 1}, {"attribute": "b", "goal": "minimize", "weight": 1}]
    result = decido.decide({"options": opts, "method": method, "criteria": crit})
    assert [e["rank"] for e in result["ranking"]] == [1, 1, 1, 1]
    assert [e["id"] for e in result["ranking"]] == [0, 1, 2, 3]
    assert len(result["warnings"]) == 2


@pytest.mark.parametrize("weighting", ["entropy", "critic", "std"])
def test_constant_criterion_gets_zero_automatic_weight(weighting):
    opts = [{"id": o["id"], "attributes": {**o["attributes"], "lead_time": 4}} for o in SUPPLIERS]
    result = decido.decide(suppliers(options=opts, weighting=weighting))
    assert result["weights"]["lead_time"] == 0.0
    assert sum(result["weights"].values()) == pytest.approx(1.0)


# ---------------------------------------------------------------- rule 5
def test_vikor_ascending_zero_spread_and_compromise():
    result = decido.decide(suppliers(method="vikor", explain=True))
    qs = [e["score"] for e in result["ranking"]]
    assert qs == sorted(qs) and 0.0 <= qs[0] and qs[-1] <= 1.0
    assert result["higher_is_better"] is False
    for e in result["ranking"]:
        ex = e["explanation"]
        assert ex["S"] == pytest.approx(sum(ex["regret"].values()))
        assert ex["R"] == pytest.approx(max(ex["regret"].values()))
    # the compromise set is reported apart; ranks are competition ranks of Q
    assert result["compromise"][0] == result["best"]
    assert [e["rank"] for e in result["ranking"]] == [1, 2, 3, 4, 5]


def test_vikor_zero_spread_term_contributes_zero():
    # one criterion: R = S for every option, both spreads equal; two equal options:
    opts = [{"id": i, "attributes": {"a": v}} for i, v in enumerate([1.0, 1.0, 1.0])]
    result = decido.decide(
        {"options": opts, "method": "vikor", "criteria": [{"attribute": "a", "weight": 1}]}
    )
    assert [e["score"] for e in result["ranking"]] == [0.0, 0.0, 0.0]
    # v = 1: Q is S~ only
    X, benefit, w = problem(4, 6, 3)
    res = run(X, benefit, w, "vikor", params={"v": 1.0}, explain=True)
    S = np.array([e["explanation"]["S"] for e in res["ranking"]])
    Q = np.array([e["score"] for e in res["ranking"]])
    np.testing.assert_allclose(Q, (S - S.min()) / (S.max() - S.min()), atol=1e-12)


def test_vikor_compromise_conditions():
    # a clear winner: acceptable advantage and stability -> one option
    opts = [{"id": i, "attributes": {"a": v, "b": v}} for i, v in enumerate([10.0, 1.0, 2.0])]
    crit = [{"attribute": "a", "weight": 1}, {"attribute": "b", "weight": 1}]
    result = decido.decide({"options": opts, "method": "vikor", "criteria": crit})
    assert result["compromise"] == [0]
    # no acceptable advantage: Q(a2) - Q(a1) < 1/(m-1)
    points = [(10, 0), (0, 10), (6, 6), (6.5, 5.4), (5.2, 6.6)]
    opts = [{"id": i, "attributes": {"a": a, "b": b}} for i, (a, b) in enumerate(points)]
    result = decido.decide({"options": opts, "method": "vikor", "criteria": crit})
    assert result["compromise"] == [2, 3, 4]  # every Q within 1/(m-1) = 0.25 of the best
    assert [e["rank"] for e in result["ranking"]] == [1, 2, 3, 4, 4]


def test_spotis_ascending_and_bounds():
    result = decido.decide(
        suppliers(
            method="spotis",
            params={"bounds": {"price": [0, 40], "quality": [0, 10], "lead_time": [0, 20]}},
            explain=True,
        )
    )
    assert result["higher_is_better"] is False and result["warnings"] == []
    s1 = next(e for e in result["ranking"] if e["id"] == "s1")
    expected = 0.5 * 18.5 / 40 + 0.3 * (10 - 7.2) / 10 + 0.2 * 5 / 20
    assert s1["score"] == pytest.approx(expected)
    assert s1["explanation"]["distance"]["price"] == pytest.approx(18.5 / 40)


# ---------------------------------------------------------------- rule 6
def test_copras_classical_formula_not_pymcdm():
    X = np.array([[10.0, 4.0, 7.0], [8.0, 6.0, 3.0], [12.0, 5.0, 9.0], [9.0, 2.0, 4.0]])
    benefit = np.array([True, False, False])
    w = np.array([0.5, 0.3, 0.2])
    D = X / X.sum(axis=0) * w
    s_plus, s_minus = D[:, 0], D[:, 1:].sum(axis=1)
    Q = s_plus + s_minus.min() * s_minus.sum() / (s_minus * (s_minus.min() / s_minus).sum())
    result = run(X, benefit, w, "copras", explain=True)
    np.testing.assert_allclose(scores(result), Q / Q.max(), rtol=1e-12)
    pymcdm = pytest.importorskip("pymcdm")
    theirs = pymcdm.methods.COPRAS()(X, w, np.where(benefit, 1, -1))
    # pymcdm 1.4.0's Q reduces to S+ + S-: not the classical formula
    np.testing.assert_allclose(theirs, (s_plus + s_minus) / (s_plus + s_minus).max())
    assert not np.allclose(scores(result), theirs)
    e = result["ranking"][0]["explanation"]
    assert set(e) == {"weighted", "S_plus", "S_minus", "Q"}


def test_copras_without_cost_criteria():
    X = np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 2.0]])
    result = run(X, [True, True], [0.5, 0.5], "copras")
    s_plus = (X / X.sum(axis=0) * 0.5).sum(axis=1)
    np.testing.assert_allclose(scores(result), s_plus / s_plus.max())


def test_aras_normalizes_with_the_ideal_row():
    X = np.array([[10.0, 4.0], [8.0, 6.0], [12.0, 5.0]])
    benefit = np.array([True, False])
    w = np.array([0.6, 0.4])
    ideal = np.array([12.0, 4.0])
    E = np.vstack([ideal, X])
    E[:, 1] = 1.0 / E[:, 1]
    N = E / E.sum(axis=0)
    S = (N * w).sum(axis=1)
    result = run(X, benefit, w, "aras", explain=True)
    np.testing.assert_allclose(scores(result), S[1:] / S[0], rtol=1e-12)
    # normalizing by the sums of the options alone gives other numbers
    sums = E[1:].sum(axis=0)
    without = (E[1:] / sums * w).sum(axis=1) / (E[0] / sums * w).sum()
    assert not np.allclose(scores(result), without)
    best = result["ranking"][0]
    assert best["explanation"]["S"] / best["explanation"]["S_ideal"] == pytest.approx(best["score"])


def test_wpm_reports_the_product():
    X, benefit, w = problem(8, 5, 3)
    result = run(X, benefit, w, "wpm", explain=True)
    for e in result["ranking"]:
        factors = e["explanation"]["factor"]
        assert math.prod(factors.values()) == pytest.approx(e["score"], rel=1e-12)
        assert 0 < e["score"] <= 1
        for name, r in e["explanation"]["normalized"].items():
            assert factors[name] == pytest.approx(r ** result["weights"][name])


# ---------------------------------------------------------------- explanations
def test_explanation_keys_and_identities():
    X, benefit, w = problem(9, 6, 3)
    keys = {
        "wsm": {"normalized", "contribution"},
        "wpm": {"normalized", "factor"},
        "topsis": {"normalized", "weighted", "d_best", "d_worst"},
        "vikor": {"regret", "S", "R"},
        "promethee2": {"phi_plus", "phi_minus"},
        "waspas": {"normalized", "wsm", "wpm"},
        "moora": {"normalized", "contribution"},
        "edas": {"pda", "nda", "SP", "SN"},
        "aras": {"normalized", "contribution", "S", "S_ideal"},
        "spotis": {"distance", "contribution"},
    }
    for method, expected in keys.items():
        result = run(X, benefit, w, method, explain=True)
        for e in result["ranking"]:
            assert set(e["explanation"]) == expected, method
    for e in run(X, benefit, w, "wsm", explain=True)["ranking"]:
        assert sum(e["explanation"]["contribution"].values()) == pytest.approx(e["score"])
    for e in run(X, benefit, w, "topsis", explain=True)["ranking"]:
        ex = e["explanation"]
        assert ex["d_worst"] / (ex["d_best"] + ex["d_worst"]) == pytest.approx(e["score"])
    without = run(X, benefit, w, "wsm")
    assert all("explanation" not in e for e in without["ranking"])


def test_waspas_lambda_ends_are_wsm_and_wpm():
    X, benefit, w = problem(10, 6, 4)
    wsm = scores(run(X, benefit, w, "wsm", normalization="linear"))
    wpm = scores(run(X, benefit, w, "wpm"))
    np.testing.assert_allclose(scores(run(X, benefit, w, "waspas", params={"lambda": 1})), wsm)
    np.testing.assert_allclose(scores(run(X, benefit, w, "waspas", params={"lambda": 0})), wpm)


# ---------------------------------------------------------------- expression method
def test_expression_method_goal_and_explanation():
    req = {
        "options": SUPPLIERS,
        "method": "expression",
        "expression": "quality*100 - price",
        "constraints": ["lead_time <= 12"],
        "explain": True,
    }
    result = decido.decide(req)
    assert result["weights"] == {} and result["normalization"] is None
    assert [e["id"] for e in result["ranking"]] == ["s4", "s2", "s1", "s3"]
    assert result["ranking"][0]["score"] == pytest.approx(920.0)
    assert result["ranking"][0]["explanation"] == {"values": {"quality": 9.5, "price": 30.0}}
    low = decido.decide({**req, "goal": "minimize"})
    assert low["higher_is_better"] is False
    assert [e["id"] for e in low["ranking"]] == ["s3", "s1", "s2", "s4"]


def test_expression_method_is_the_default_when_an_expression_is_given():
    result = decido.decide({"options": SUPPLIERS, "expression": "-price"})
    assert result["method"] == "expression" and result["best"] == "s3"


def test_expression_nan_ranks_last_and_infinity_is_null():
    opts = [{"id": i, "attributes": {"a": v}} for i, v in enumerate([1.0, -1.0, 0.0, 2.0])]
    result = decido.decide({"options": opts, "expression": "sqrt(a) + 1/a"})
    assert_json_ready(result)
    # a = 0 gives +inf (best), a = -1 gives NaN (last)
    assert [(e["id"], e["score"]) for e in result["ranking"]][0] == (2, None)
    assert result["ranking"][-1]["id"] == 1 and result["ranking"][-1]["score"] is None
    assert "nan_score" in [w["code"] for w in result["warnings"]]


def test_attributes_may_differ_between_options_when_unused():
    opts = [
        {"id": "a", "attributes": {"x": 1.0, "note": 3}},
        {"id": "b", "attributes": {"x": 2.0}},
        {"id": "c", "attributes": {"x": 0.5, "extra": float("nan")}},
    ]
    result = decido.decide({"options": opts, "expression": "x"})
    assert result["best"] == "b"


def test_booleans_count_as_one_and_zero():
    opts = [
        {"id": "a", "attributes": {"x": 1.0, "ok": True}},
        {"id": "b", "attributes": {"x": 2.0, "ok": False}},
    ]
    result = decido.decide({"options": opts, "expression": "x", "constraints": ["ok"]})
    assert result["best"] == "a" and result["infeasible"] == [{"id": "b", "violated": ["ok"]}]


def test_pi_and_e_are_constants_unless_an_attribute_shadows_them():
    opts = [{"id": "a", "attributes": {"x": 1.0}}, {"id": "b", "attributes": {"x": 2.0}}]
    result = decido.decide({"options": opts, "expression": "x * pi", "explain": True})
    assert result["ranking"][0]["score"] == pytest.approx(2 * math.pi)
    assert result["ranking"][0]["explanation"] == {"values": {"x": 2.0}}
    opts = [{"id": "a", "attributes": {"e": 1.0}}, {"id": "b", "attributes": {"e": 2.0}}]
    result = decido.decide({"options": opts, "expression": "-e + 1e3"})
    assert result["best"] == "a" and result["ranking"][0]["score"] == 999.0


def test_ignored_fields_warn():
    result = decido.decide(suppliers(method="vikor", normalization="vector", expression="price"))
    assert {w["path"] for w in result["warnings"]} == {"normalization", "expression"}
    assert result["normalization"] is None
    result = decido.decide(suppliers(weighting="equal"))
    assert [w["path"] for w in result["warnings"]] == ["criteria"]
    assert result["weights"] == pytest.approx(
        dict.fromkeys(["price", "quality", "lead_time"], 1 / 3)
    )


def test_request_id_is_echoed():
    result = decido.decide(suppliers(id="req-7"))
    assert next(iter(result)) == "id" and result["id"] == "req-7"


def test_large_promethee_uses_blocks():
    from decido.decisions import methods as _mcdm_methods

    X, benefit, w = problem(12, 300, 3)
    full = scores(run(X, benefit, w, "promethee2"))
    old = _mcdm_methods.PROMETHEE_BLOCK_ELEMENTS
    _mcdm_methods.PROMETHEE_BLOCK_ELEMENTS = 5000  # blocks of 5 rows
    try:
        blocked = scores(run(X, benefit, w, "promethee2"))
    finally:
        _mcdm_methods.PROMETHEE_BLOCK_ELEMENTS = old
    np.testing.assert_allclose(blocked, full, atol=1e-12)
    assert abs(full.sum()) < 1e-9  # net flows sum to zero


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("weighting", ["entropy", "critic", "std"])
def test_zero_automatic_weight_is_harmless(method, weighting):
    # the only minimized criterion is constant: automatic weighting gives it 0
    opts = [{"id": o["id"], "attributes": {**o["attributes"], "lead_time": 4}} for o in SUPPLIERS]
    crit = [
        {"attribute": "quality", "goal": "maximize"},
        {"attribute": "price", "goal": "maximize"},
        {"attribute": "lead_time", "goal": "minimize"},
    ]
    result = decido.decide(
        {"options": opts, "method": method, "criteria": crit, "weighting": weighting}
    )
    assert_json_ready(result)
    assert result["weights"]["lead_time"] == 0.0
    assert all(e["score"] is not None for e in result["ranking"])


def test_concurrent_decisions_agree():
    from concurrent.futures import ThreadPoolExecutor

    requests = [
        request(*problem(seed, 200, 5), method, constraints=["c0 < 90"], explain=True)
        for seed, method in enumerate(METHODS)
    ]
    expected = [decido.decide(r) for r in requests]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(decido.decide, requests)) == expected
