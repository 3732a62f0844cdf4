"""Answers that rounding must not decide: a change of units (a criterion scaled by a positive
factor) keeps every score. Each case was found in random mode by the property test
``test_scaling_a_benefit_attribute_keeps_the_ranking`` or a search like it, where a one-ulp
difference turned a 0/0 into 0 or 1; the expected values are worked out here by hand."""

from __future__ import annotations

import numpy as np
import pytest
from decide_cases import request

import decido


def _scores(X, benefit, weights, method, weighting):
    out = decido.decide(request(np.asarray(X, dtype=float), np.asarray(benefit), weights,
                                method, weighting=weighting))
    return {e["id"]: e["score"] for e in out["ranking"]}, out


def _scaled(X, j, factor):
    Y = np.asarray(X, dtype=float).copy()
    Y[:, j] *= factor
    return Y


@pytest.mark.parametrize("factor", [1.0, 48.10877598745856, 0.37, 1e6])
def test_vikor_regret_maxima_that_tie_do_not_spread(factor):
    """Entropy weights of c0 = (6, 3) and c1 = (3, 6) are equal (the same values), so
    R = max regret is w0 for both options: R does not spread and its term is 0, whatever
    the rounding of w1 after c1's units change. S: o0 = w1 + w2 > o1 = w0, so Q = (0.5, 0)."""
    X = [[6.0, 3.0, 5.0], [3.0, 6.0, 4.0]]
    got, _ = _scores(_scaled(X, 1, factor), [True, True, False], None, "vikor", "entropy")
    assert got == {"o0": 0.5, "o1": 0.0}


@pytest.mark.parametrize("factor", [1.0, 30.55607531622764, 0.1, 3.0])
def test_edas_constant_criterion_is_at_distance_zero(factor):
    """A constant criterion's mean, rounded, can miss its value by an ulp; it is at distance
    0 from the average all the same, so SP = SN = 0 and every option scores (1 + 1)/2."""
    X = [[1.0], [1.0], [1.0]]
    got, _ = _scores(_scaled(X, 0, factor), [True], np.array([2.0]), "edas", "given")
    assert got == {"o0": 1.0, "o1": 1.0, "o2": 1.0}


@pytest.mark.parametrize("factor", [1.0, 0.3, 7.77, 123.456])
def test_critic_criteria_that_move_together_fall_back_to_equal_weights(factor):
    """Goal-aware, c0 = (1, 4, 5) and c1 = 7 - c0 (minimized) scale to the same column:
    their correlation is 1 up to rounding, so neither conflicts with the other and CRITIC
    has nothing to weigh (before, the weights were a ratio of rounding errors)."""
    X = [[1.0, 6.0], [4.0, 3.0], [5.0, 2.0]]
    got, out = _scores(_scaled(X, 0, factor), [True, False], None, "moora", "critic")
    assert out["weights"] == {"c0": 0.5, "c1": 0.5}
    assert [w["code"] for w in out["warnings"]] == ["degenerate_weights"]
    Y = _scaled(X, 0, factor)
    norms = np.sqrt((Y**2).sum(axis=0))
    want = {f"o{i}": 0.5 * Y[i, 0] / norms[0] - 0.5 * Y[i, 1] / norms[1] for i in range(3)}
    assert got == pytest.approx(want, rel=1e-12)


def test_entropy_gives_a_constant_criterion_weight_exactly_zero():
    """p = 1/3 rounds, so E came out 1 - ulp and the constant criterion a weight of ~1e-16."""
    X = [[3.0, 1.0], [3.0, 2.0], [3.0, 4.0]]
    _, out = _scores(X, [True, True], None, "wsm", "entropy")
    assert out["weights"]["c0"] == 0.0
    assert out["weights"]["c1"] == 1.0


@pytest.mark.parametrize(("X", "benefit", "factor", "best"), [
    # Q = (5 - x)/4: o1 0, o2 and o4 0.25, m = 5, so Q(a2) - Q(a1) = 1/(m - 1) exactly
    ([[1.0], [5.0], [4.0], [1.0], [4.0]], [True], 33.837354547119176, "o1"),
    # Q = (x - 1)/5: o2 0, o4 0.2, m = 6: again the advantage is exactly 1/(m - 1)
    ([[3.0], [5.0], [1.0], [6.0], [2.0], [3.0]], [False], 81.4532273081223, "o2"),
])
def test_vikor_compromise_at_exactly_the_acceptable_advantage(X, benefit, factor, best):
    """C1 (Q(a2) - Q(a1) >= 1/(m - 1)) holds with equality, and the best option is best by
    S (C2): the compromise set is the best option alone, in any units (before, the scaled
    Q fell an ulp short of the advantage and the set took in the runners-up)."""
    for Y in (X, _scaled(X, 0, factor)):
        _, out = _scores(Y, benefit, None, "vikor", "equal")
        assert out["best"] == best
        assert out["compromise"] == [best]
