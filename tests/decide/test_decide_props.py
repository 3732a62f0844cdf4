"""Hypothesis invariants: rankings do not depend on units of a benefit
attribute, on the order of the options, or on the scale of the weights; ranks
are competition ranks; the output is always JSON-ready."""

from __future__ import annotations

import json

import numpy as np
import pytest
from decide_cases import request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw, min_m=2, max_m=9):
    """Small matrices of positive values; integers make ties and constant criteria."""
    m = draw(st.integers(min_m, max_m))
    k = draw(st.integers(1, 4))
    ints = draw(st.booleans())
    elem = st.integers(1, 6).map(float) if ints else st.floats(0.5, 1000.0)
    X = np.array(draw(st.lists(st.lists(elem, min_size=k, max_size=k), min_size=m, max_size=m)))
    benefit = np.array(draw(st.lists(st.booleans(), min_size=k, max_size=k)))
    w = np.array(draw(st.lists(st.integers(1, 9), min_size=k, max_size=k)), dtype=float)
    return X, benefit, w


def rank_by_id(result):
    return {e["id"]: e["rank"] for e in result["ranking"]}


def score_by_id(result):
    return {e["id"]: e["score"] for e in result["ranking"]}


def same_scores(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if a[key] is None or b[key] is None:
            assert a[key] is b[key]
        else:
            assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-12)


@FAST
@given(
    problems(),
    st.sampled_from(METHODS),
    # not std: its weights are the raw columns' deviations, which follow the units
    st.sampled_from(["given", "entropy", "critic"]),
    st.integers(-6, 6),
    st.data(),
)
def test_scaling_a_benefit_attribute_keeps_the_ranking(prob, method, weighting, power, data):
    X, benefit, w = prob
    if not benefit.any():
        benefit[0] = True
    j = data.draw(st.sampled_from(np.flatnonzero(benefit).tolist()))
    weights = w if weighting == "given" else None
    base = decido.decide(request(X, benefit, weights, method, weighting=weighting))
    Y = X.copy()
    Y[:, j] *= 2.0**power  # exact in binary floating point
    scaled = decido.decide(request(Y, benefit, weights, method, weighting=weighting))
    assert rank_by_id(scaled) == rank_by_id(base)
    assert [e["id"] for e in scaled["ranking"]] == [e["id"] for e in base["ranking"]]
    # any positive factor: the same scores up to rounding
    Y[:, j] = X[:, j] * data.draw(st.floats(0.01, 100.0))
    same_scores(
        score_by_id(decido.decide(request(Y, benefit, weights, method, weighting=weighting))),
        score_by_id(base),
    )


@FAST
@given(problems(), st.sampled_from([*METHODS, "expression"]), st.randoms(use_true_random=False))
def test_reordering_options_keeps_ranks_and_scores(prob, method, rnd):
    X, benefit, w = prob
    fields = {"expression": f"c0 * 2 - c{X.shape[1] - 1}"} if method == "expression" else {}
    req = request(X, benefit, w, method, **fields)
    base = decido.decide(req)
    shuffled = dict(req)
    shuffled["options"] = list(req["options"])
    rnd.shuffle(shuffled["options"])
    again = decido.decide(shuffled)
    assert rank_by_id(again) == rank_by_id(base)
    same_scores(score_by_id(again), score_by_id(base))
    # within a tie, input order decides
    position = {o["id"]: i for i, o in enumerate(shuffled["options"])}
    for a, b in zip(again["ranking"], again["ranking"][1:], strict=False):
        if a["rank"] == b["rank"]:
            assert position[a["id"]] < position[b["id"]]


@FAST
@given(problems(), st.sampled_from(METHODS), st.floats(1e-3, 1e3))
def test_scaling_all_weights_keeps_the_ranking(prob, method, factor):
    X, benefit, w = prob
    base = decido.decide(request(X, benefit, w, method))
    scaled = decido.decide(request(X, benefit, w * factor, method))
    assert scaled["weights"] == pytest.approx(base["weights"], rel=1e-12)
    assert rank_by_id(scaled) == rank_by_id(base)
    same_scores(score_by_id(scaled), score_by_id(base))


@FAST
@given(problems(min_m=1), st.sampled_from(METHODS), st.booleans(), st.integers(1, 10))
def test_competition_ranks_and_json(prob, method, explain, top_k):
    X, benefit, w = prob
    full = decido.decide(request(X, benefit, w, method, explain=explain))
    json.dumps(full, allow_nan=False)
    ranking = full["ranking"]
    assert len(ranking) == X.shape[0] and ranking[0]["rank"] == 1
    assert full["best"] == ranking[0]["id"]
    sign = 1 if full["higher_is_better"] else -1
    for n, e in enumerate(ranking):
        # rank = 1 + the number of options strictly before it in a different tie group
        assert e["rank"] == 1 + sum(1 for f in ranking[:n] if f["rank"] != e["rank"]) or (
            e["rank"] == ranking[n - 1]["rank"]
        )
        if n and e["score"] is not None and ranking[n - 1]["score"] is not None:
            assert sign * (ranking[n - 1]["score"] - e["score"]) >= -1e-9
        if n and e["rank"] != ranking[n - 1]["rank"]:
            assert e["rank"] == n + 1
    cut = decido.decide(request(X, benefit, w, method, explain=explain, top_k=top_k))
    assert cut["ranking"] == ranking[:top_k]


@FAST
@given(
    problems(min_m=2, max_m=12),
    st.sampled_from(METHODS),
    st.sampled_from(["entropy", "critic", "std", "equal"]),
)
def test_automatic_weights_never_give_nan(prob, method, weighting):
    X, benefit, _ = prob
    result = decido.decide(request(X, benefit, None, method, weighting=weighting, explain=True))
    json.dumps(result, allow_nan=False)
    w = np.array(list(result["weights"].values()))
    assert w.sum() == pytest.approx(1.0) and (w >= 0).all()
    assert all(e["score"] is not None for e in result["ranking"])
