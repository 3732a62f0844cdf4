"""Attribute values anywhere in the double range: a criterion measured in units 2**k times
larger or smaller gives the same answer bit for bit, also where its squares, spans, sums or
norms would overflow (values beyond 1e154 for a standard deviation, near the largest double
for a span or a norm) or fall into subnormals (values below 1e-154). Before, such a column
scored 0 or NaN (a wrong best, ``null`` scores) or made ``std`` find "nothing to weigh"."""

from __future__ import annotations

import math

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
