"""Attribute values anywhere in the double range: a criterion measured in units 2**k times
larger or smaller gives the same answer bit for bit, also where its squares, spans, sums or
norms would overflow (values beyond 1e154 for a standard deviation, near the largest double
for a span or a norm) or fall into subnormals (values below 1e-154). Before, such a column
scored 0 or NaN (a wrong best, ``null`` scores) or made ``std`` find "nothing to weigh"."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from decide_cases import request

import decido

#: 3 options; the first criterion spans zero, the second is positive
X = np.array([[1.0, 1.0], [-1.0, 2.0], [0.0, 3.0]])
POSITIVE = np.array([[1.0, 1.0], [0.5, 2.0], [0.25, 3.0]])
#: powers of two that put the first column's magnitude near the largest double (2**1023
#: times 1.0 is 9e307; the span of +-that overflows), past 1e154 (squares overflow), and
#: near the smallest normal doubles and in the subnormals (squares underflow)
EXPONENTS = [1023, 600, 520, -600, -1060]


def _answer(Y, method, **fields):
    weights = None if "weighting" in fields else [3.0, 1.0]
    return decido.decide(request(Y, [True, False], weights, method, **fields))


def _same(a, b):
    assert [e["id"] for e in a["ranking"]] == [e["id"] for e in b["ranking"]]
    assert [e["score"] for e in a["ranking"]] == [e["score"] for e in b["ranking"]]
    assert a["weights"] == b["weights"]
    assert a["best"] == b["best"]
    assert [w["code"] for w in a["warnings"]] == [w["code"] for w in b["warnings"]]


CASES = [("wsm", {"normalization": "minmax"}), ("wsm", {"normalization": "vector"}),
         ("topsis", {}), ("topsis", {"normalization": "minmax"}), ("vikor", {}),
         ("moora", {}), ("spotis", {}), ("promethee2", {}),
         ("promethee2", {"params": {"preference": "linear", "q": {"c0": 0.25, "c1": 0.0},
                                    "p": {"c0": 0.75, "c1": 2.0}}}),
         ("spotis", {"params": {"bounds": {"c0": [-1.0, 1.0], "c1": [0.0, 4.0]}}})]


@pytest.mark.parametrize("method, fields", CASES)
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_a_criterion_in_other_units_keeps_every_score(method, fields, exponent):
    base = _answer(X, method, **fields)
    Y = X.copy()
    Y[:, 0] = np.ldexp(Y[:, 0], exponent)
    scaled = dict(fields)
    if "params" in fields:  # thresholds and bounds are in the units of the values
        params = {key: dict(value) if isinstance(value, dict) else value
                  for key, value in fields["params"].items()}
        for key in ("q", "p"):
            if key in params:
                params[key]["c0"] = math.ldexp(params[key]["c0"], exponent)
        if "bounds" in params:
            params["bounds"]["c0"] = [math.ldexp(v, exponent) for v in params["bounds"]["c0"]]
        scaled["params"] = params
    _same(_answer(Y, method, **scaled), base)
    assert base["best"] == "o0"  # c0 weighs 3 of 4 and o0 has its largest value


@pytest.mark.parametrize("weighting", ["entropy", "critic"])
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_weightings_that_ignore_units_ignore_them_at_any_magnitude(weighting, exponent):
    Y = POSITIVE.copy()
    Y[:, 0] = np.ldexp(Y[:, 0], exponent)
    _same(_answer(Y, "wsm", weighting=weighting), _answer(POSITIVE, "wsm",
                                                          weighting=weighting))


@pytest.mark.parametrize("exponent", EXPONENTS)
def test_std_weights_follow_the_units_without_overflow(exponent):
    """std weights are the columns' sample standard deviations over their sum: c0's grows
    by 2**exponent, c1's does not, so the weights are (s0 2**e, s1) / (s0 2**e + s1)."""
    Y = POSITIVE.copy()
    Y[:, 0] = np.ldexp(Y[:, 0], exponent)
    got = _answer(Y, "wsm", weighting="std")
    s0, s1 = np.std(POSITIVE, axis=0, ddof=1)
    big = math.ldexp(s0, exponent)
    if math.isfinite(big) and big > 1e-300:
        want = [big / (big + s1), s1 / (big + s1)]
        assert [got["weights"]["c0"], got["weights"]["c1"]] == pytest.approx(want, rel=1e-12)
    else:  # one weight is (all but) everything, the other the ratio of the deviations
        big_one, small_one = ("c0", "c1") if exponent > 0 else ("c1", "c0")
        small = math.ldexp(s1 / s0, -exponent) if exponent > 0 else math.ldexp(s0 / s1,
                                                                              exponent)
        assert got["weights"][big_one] == 1.0
        assert got["weights"][small_one] == pytest.approx(small, rel=1e-12, abs=1e-322)
    assert not [w for w in got["warnings"] if w["code"] == "degenerate_weights"]
    assert all(e["score"] is not None for e in got["ranking"])


def test_copras_costs_further_apart_than_doubles_reach():
    """COPRAS's S- = w x / sum(x) of a cost 1e-300 or 5e-324 next to 740 underflows to 0;
    every score was NaN (all ranked 1, null). The scores against exact rational arithmetic
    (``fractions``), within 1e-12 of the best score."""
    from fractions import Fraction

    cost = [1e-300, 91.0, 5e-324, 740.0, 2e-323]
    gain = [1.0, 2.0, 3.0, 4.0, 5.0]
    Y = np.column_stack([gain, cost])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 1/0 along the way either
        got = decido.decide(request(Y, [True, False], [1.0, 3.0], "copras"))
    w_gain, w_cost = Fraction(1, 4), Fraction(3, 4)
    s_plus = [w_gain * Fraction(g) / sum(map(Fraction, gain)) for g in gain]
    s_minus = [w_cost * Fraction(c) / sum(map(Fraction, cost)) for c in cost]
    inverse = sum(1 / s for s in s_minus)
    q = [p + sum(s_minus) / (s * inverse) for p, s in zip(s_plus, s_minus, strict=True)]
    want = {f"o{i}": float(v / max(q)) for i, v in enumerate(q)}
    scores = {e["id"]: e["score"] for e in got["ranking"]}
    assert scores == pytest.approx(want, rel=0, abs=1e-12)
    assert got["best"] == "o2"  # the smallest cost, by 10**300


@pytest.mark.parametrize("method, fields, values, goal, best", [
    # a criterion spanning more than the double range below its top is scored as it is:
    # scaling it would turn 1e-300 into 0, which ARAS (values > 0) cannot take
    ("aras", {}, [1e300, 1e-300, 1.0, 5.0], True, "o0"),
    ("aras", {}, [1e300, 1e-300, 1.0, 5.0], False, "o1"),
    ("copras", {}, [1e-300, 1e-300, 1e300], False, "o1"),  # o1 wins the second
    # the reciprocal of a cost of 5e-324 overflows; relative to the smallest it is 1
    ("aras", {}, [1 / 3, 5e-324, 6.0], False, "o1"),
    ("aras", {}, [2.2250738585072014e-308] * 3 + [429.6], False, "o2"),
    ("wsm", {"normalization": "sum"}, [1e300, 1e-300, 1.0], True, "o0"),
    ("topsis", {"sensitivity": True}, [3.0, 1e-300, 0.0], False, "o2"),
])
def test_values_far_apart_in_one_criterion(method, fields, values, goal, best):
    """Values of one criterion 1e300 or 1e308 apart: a sane answer, no 1/0, overflow or
    NaN along the way (each case was a warning or a NaN score, found by a fuzzer)."""
    Y = np.column_stack([values, np.arange(1.0, len(values) + 1)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = decido.decide(request(Y, [goal, True], [1e6, 1.0], method, **fields))
    assert got["best"] == best
    assert all(e["score"] is not None for e in got["ranking"])
