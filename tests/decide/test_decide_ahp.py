"""Weights from pairwise judgments (AHP) and from several decision makers, against values
computed here with NumPy and against published figures: Saaty's city example (Saaty 2004,
as reproduced in the ahpsurvey 0.4.1 vignette: weights 0.1522, 0.4335, 0.0716, 0.3050,
0.0378; CR 0.0508 with RI(5) = 1.11, which Saaty reports as 0.05; the largest error on
cult/fam) and Saaty's (2003)
family-house matrix (CR 0.17, the judgment nbrhd/cond the maximum deviation method
replaces)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from jsonschema import Draft202012Validator

import decido

NAMES = ["cult", "fam", "house", "jobs", "trans"]
CITY = [
    [1, 1 / 5, 3, 1 / 2, 5],
    [5, 1, 7, 1, 7],
    [1 / 3, 1 / 7, 1, 1 / 4, 3],
    [2, 1, 4, 1, 7],
    [1 / 5, 1 / 7, 1 / 3, 1 / 7, 1],
]
HOUSE_NAMES = ["size", "trans", "nbrhd", "age", "yard", "modern", "cond", "finance"]
HOUSE = [
    [1, 5, 3, 7, 6, 6, 1 / 3, 1 / 4],
    [1 / 5, 1, 1 / 3, 5, 3, 3, 1 / 5, 1 / 7],
    [1 / 3, 3, 1, 6, 3, 4, 6, 1 / 5],
    [1 / 7, 1 / 5, 1 / 6, 1, 1 / 3, 1 / 4, 1 / 7, 1 / 8],
    [1 / 6, 1 / 3, 1 / 3, 3, 1, 1 / 2, 1 / 5, 1 / 6],
    [1 / 6, 1 / 3, 1 / 4, 4, 2, 1, 1 / 5, 1 / 6],
    [3, 5, 1 / 6, 7, 5, 5, 1, 1 / 2],
    [4, 7, 5, 8, 6, 6, 2, 1],
]


def request(names, pairwise=None, **more):
    options = [{"id": f"o{i}", "attributes": {n: float((i * 7 + j * 3) % 5 + 1)
                                               for j, n in enumerate(names)}}
               for i in range(4)]
    body = {"options": options, "criteria": [{"attribute": n} for n in names], **more}
    if pairwise is not None:
        body["pairwise"] = pairwise
    return body


def eig_weights(A):
    values, vectors = np.linalg.eig(np.array(A, dtype=float))
    top = np.argmax(values.real)
    v = np.abs(vectors[:, top].real)
    return v / v.sum(), values.real[top]


def test_saaty_city_example():
    out = decido.decide(request(NAMES, CITY))
    assert out["weighting"] == "ahp"  # inferred from pairwise
    w = [out["weights"][n] for n in NAMES]
    assert w == pytest.approx([0.1522, 0.4335, 0.0716, 0.3050, 0.0378], abs=5e-5)
    c = out["consistency"]
    # the vignette's CR 0.0508 with RI(5) = 1.11 is CI = 0.0564; Saaty reports CR 0.05
    assert c["index"] == pytest.approx(0.0508 * 1.11, abs=1e-4)
    assert c["ratio"] == pytest.approx(c["index"] / 1.12, rel=1e-12)
    assert round(c["ratio"], 2) == 0.05
    assert c["acceptable"] is True
    assert c["most_inconsistent"] == ["cult", "fam"]
    assert not [x for x in out["warnings"] if x["code"] == "inconsistent_judgments"]


def test_saaty_house_example_is_inconsistent_and_still_answers():
    out = decido.decide(request(HOUSE_NAMES, HOUSE))
    c = out["consistency"]
    assert c["ratio"] == pytest.approx(0.17, abs=5e-3)
    assert c["acceptable"] is False
    assert c["most_inconsistent"] == ["nbrhd", "cond"]
    warned = [x for x in out["warnings"] if x["code"] == "inconsistent_judgments"]
    assert warned and warned[0]["path"] == "pairwise"
    assert out["status"] == "ok" and out["best"] is not None


@pytest.mark.parametrize("seed", range(6))
def test_eigenvector_and_geometric_mean_against_numpy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    scale = np.array([1 / 9, 1 / 7, 1 / 5, 1 / 3, 1, 3, 5, 7, 9])
    A = np.ones((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            A[i, j] = rng.choice(scale)
            A[j, i] = 1 / A[i, j]
    names = [f"c{j}" for j in range(n)]
    upper = [[A[i, j] if j >= i else None for j in range(n)] for i in range(n)]
    out = decido.decide(request(names, upper, weighting="ahp"))
    w, lam = eig_weights(A)
    assert [out["weights"][c] for c in names] == pytest.approx(w, rel=1e-9)
    c = out["consistency"]
    assert c["lambda_max"] == pytest.approx(lam, rel=1e-9)
    index = max(lam - n, 0) / (n - 1)
    ri = {3: 0.58, 4: 0.90, 5: 1.12, 6: 1.24, 7: 1.32, 8: 1.41}.get(n)
    assert c["index"] == pytest.approx(index, abs=1e-12)
    assert c["ratio"] == pytest.approx(0.0 if ri is None else index / ri, abs=1e-12)
    err = np.abs(np.log(A * w[None, :] / w[:, None]))
    if err.max() > 1e-9:
        i, j = np.unravel_index(np.argmax(np.triu(err)), err.shape)
        assert c["most_inconsistent"] == [names[i], names[j]]
    gm = decido.decide(request(names, upper, weighting="ahp", ahp_method="geometric_mean"))
    g = np.exp(np.log(A).mean(axis=1))
    assert [gm["weights"][c] for c in names] == pytest.approx(g / g.sum(), rel=1e-9)


def test_two_criteria_are_always_consistent():
    out = decido.decide(request(["a", "b"], [[1, 3], [None, 1]]))
    assert out["weights"] == pytest.approx({"a": 0.75, "b": 0.25})
    assert out["consistency"]["ratio"] == 0 and out["consistency"]["most_inconsistent"] is None


def test_every_matrix_fault_with_its_pointer():
    bad = [[1, 2, "x"], [0.5, 2, -1], [None, None]]
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(request(["a", "b", "c"], bad))
    faults = {(e["pointer"], e["code"]) for e in info.value.errors}
    assert ("/pairwise/0/2", "invalid_request") in faults
    assert ("/pairwise/1/1", "invalid_pairwise") in faults
    assert ("/pairwise/1/2", "non_positive_value") in faults
    assert ("/pairwise/2", "invalid_pairwise") in faults
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(request(["a", "b", "c"], [[1, 2, 4], [0.4, 1, None], [0.25, 1, 1]]))
    faults = {(e["pointer"], e["code"]) for e in info.value.errors}
    assert faults == {("/pairwise/1/0", "invalid_pairwise"), ("/pairwise/1/2", "invalid_pairwise")}
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(request(["a", "b"], [[1, 2]]))
    assert info.value.errors[0]["pointer"] == "/pairwise"
    with pytest.raises(decido.DecisionError) as info:
        decido.decide(request(["a", "b"], weighting="ahp"))
    assert info.value.errors[0]["pointer"] == "/pairwise"


def test_reciprocals_within_the_tolerance_are_accepted():
    out = decido.decide(request(["a", "b"], [[1, 3], [1 / 3 + 1e-9, 1]]))
    assert out["weights"]["a"] == pytest.approx(0.75)


MEMBERS_A = [[1, 3, 5], [None, 1, 2], [None, None, 1]]
MEMBERS_B = [[1, 1 / 2, 2], [None, 1, 4], [None, None, 1]]


def full(upper):
    A = np.array([[x if x is not None else 0.0 for x in row] for row in upper], dtype=float)
    for i in range(len(A)):
        for j in range(i):
            A[i, j] = 1 / A[j, i]
    return A


def test_group_aij_and_aip():
    names = ["a", "b", "c"]
    makers = [{"id": "ann", "weight": 2, "pairwise": MEMBERS_A},
              {"id": "bob", "pairwise": MEMBERS_B}]
    out = decido.decide(request(names, decision_makers=makers))
    share = np.array([2 / 3, 1 / 3])
    A, B = full(MEMBERS_A), full(MEMBERS_B)
    G = np.exp(share[0] * np.log(A) + share[1] * np.log(B))
    w, lam = eig_weights(G)
    assert [out["weights"][n] for n in names] == pytest.approx(w, rel=1e-9)
    group = out["group"]
    assert group["aggregation"] == "aij"
    assert group["consistency"]["lambda_max"] == pytest.approx(lam, rel=1e-9)
    assert out["consistency"] == group["consistency"]
    wa, wb = eig_weights(A)[0], eig_weights(B)[0]
    assert [group["members"][0]["weights"][n] for n in names] == pytest.approx(wa, rel=1e-9)
    assert group["members"][1]["weight"] == pytest.approx(1 / 3)
    tv = share[0] * 0.5 * np.abs(wa - w).sum() + share[1] * 0.5 * np.abs(wb - w).sum()
    assert group["consensus"] == pytest.approx(1 - tv, rel=1e-9)

    aip = decido.decide(request(names, decision_makers=makers, aggregation="aip"))
    g = np.exp(share[0] * np.log(wa) + share[1] * np.log(wb))
    assert [aip["weights"][n] for n in names] == pytest.approx(g / g.sum(), rel=1e-9)
    assert aip["group"]["consistency"] is None and "consistency" not in aip


def test_group_direct_weights_and_full_agreement():
    names = ["a", "b"]
    makers = [{"id": 1, "weights": {"a": 3, "b": 1}}, {"id": 2, "weight": 3,
                                                        "weights": {"a": 1, "b": 1}}]
    out = decido.decide(request(names, decision_makers=makers))
    assert out["weighting"] == "given"
    expected_a = 0.25 * 0.75 + 0.75 * 0.5
    assert out["weights"] == pytest.approx({"a": expected_a, "b": 1 - expected_a})
    same = [{"id": 1, "weights": {"a": 2, "b": 1}}, {"id": 2, "weights": {"a": 4, "b": 2}}]
    assert decido.decide(request(names, decision_makers=same))["group"]["consensus"] == 1.0


def test_group_faults():
    names = ["a", "b"]
    cases = [
        ([{"id": 1, "weights": {"a": 1, "b": 1}}, {"id": 1, "weights": {"a": 1}}],
         {("/decision_makers/1/id", "invalid_request"),
          ("/decision_makers/1/weights/b", "missing_weight")}),
        ([{"id": 1, "pairwise": [[1, 2], [None, 1]]}, {"id": 2, "weights": {"a": 1, "b": 1}}],
         {("/decision_makers", "invalid_request")}),
        ([{"id": 1, "weight": 0, "pairwise": [[1, -2], [None, 1]], "extra": 1}],
         {("/decision_makers/0/weight", "non_positive_value"),
          ("/decision_makers/0/pairwise/0/1", "non_positive_value"),
          ("/decision_makers/0/extra", "invalid_request")}),
    ]
    for makers, expected in cases:
        with pytest.raises(decido.DecisionError) as info:
            decido.decide(request(names, decision_makers=makers))
        assert {(e["pointer"], e["code"]) for e in info.value.errors} == expected


def test_answers_match_the_schema():
    schema = {"components": {"schemas": decido.decision_schemas()},
              "$ref": "#/components/schemas/DecideResult"}
    requests = {"$ref": "#/components/schemas/DecideRequest",
                "components": {"schemas": decido.decision_schemas()}}
    bodies = [request(NAMES, CITY),
              request(["a", "b", "c"], decision_makers=[{"id": "x", "pairwise": MEMBERS_A}])]
    for body in bodies:
        Draft202012Validator(requests).validate(body)
        Draft202012Validator(schema).validate(decido.decide(body))
    assert math.isclose(sum(decido.decide(bodies[0])["weights"].values()), 1.0)
