"""Competition ranks in C (decido.decisions._kernels.competition_ranks, csrc/decide/rank.c)
against the NumPy formulation they replaced, written out here as the reference."""

from __future__ import annotations

import numpy as np
import pytest

from decido.decide import RANK_TOLERANCE
from decido.decisions import _kernels


def reference(score: np.ndarray, higher_is_better: bool) -> tuple[np.ndarray, np.ndarray]:
    """Stable sort of the key, NaN last; neighbours within the tolerance tie;
    ties take input order (the pre-C implementation, unchanged)."""
    n = score.shape[0]
    key = -score if higher_is_better else score
    nan = np.isnan(key)
    has_nan = bool(nan.any())
    if has_nan:
        key = np.where(nan, np.inf, key)
    order = np.argsort(key, kind="stable")
    if has_nan:
        order = np.concatenate([order[~nan[order]], np.flatnonzero(nan)])
    finite = np.isfinite(score)
    tol = RANK_TOLERANCE * float(np.abs(score[finite]).max()) if finite.any() else 0.0
    ks = key[order]
    new_group = np.empty(n, dtype=bool)
    new_group[:1] = True
    with np.errstate(invalid="ignore"):
        np.greater(ks[1:] - ks[:-1], tol, out=new_group[1:])
    if has_nan:
        last = nan[order]
        new_group[1:] = np.where(last[1:], ~last[:-1], new_group[1:])
    if new_group.all():
        return order, np.arange(1, n + 1)
    group = np.cumsum(new_group) - 1
    order = order[np.lexsort((order, group))]
    return order, np.flatnonzero(new_group)[group] + 1


def draw(rng: np.random.Generator, n: int) -> np.ndarray:
    pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0 + 1e-13, 1.0 + 3e-13, 2.0])
    score = rng.normal(size=n) * 10.0 ** rng.integers(-3, 4)
    pick = rng.random(n) < 0.4
    score[pick] = rng.choice(pool, size=int(pick.sum()))
    return score


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 17, 33, 100, 1_000, 5_000])
@pytest.mark.parametrize("higher", [True, False])
def test_matches_reference(n, higher):
    rng = np.random.default_rng(n * 2 + higher)
    for _ in range(20):
        score = draw(rng, n)
        order, ranks = _kernels.competition_ranks(score, higher, RANK_TOLERANCE)
        want_order, want_ranks = reference(score, higher)
        assert order.tolist() == want_order.tolist()
        assert ranks.tolist() == want_ranks.tolist()


def test_large_ties_and_empty():
    score = np.repeat([3.0, 1.0, 2.0], 40_000)
    order, ranks = _kernels.competition_ranks(score, True, RANK_TOLERANCE)
    want_order, want_ranks = reference(score, True)
    assert np.array_equal(order, want_order) and np.array_equal(ranks, want_ranks)
    order, ranks = _kernels.competition_ranks(np.empty(0), True, RANK_TOLERANCE)
    assert order.shape == ranks.shape == (0,)
