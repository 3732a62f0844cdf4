"""``decido.hypervolume`` (C: ``dc_hypervolume``) against an independent implementation,
moocore's, on random fronts of 1 to 8 objectives, to 1e-12 relative; hand cases; goals;
faults."""

from __future__ import annotations

import math
import time

import moocore
import numpy as np
import pytest

import decido


def _front(rng: np.random.Generator, k: int, m: int, kind: str) -> np.ndarray:
    if kind == "sphere":  # a concave front (DTLZ2-like)
        F = np.abs(rng.normal(size=(k, m)))
        return F / np.linalg.norm(F, axis=1, keepdims=True)
    if kind == "linear":  # a flat front with ties
        F = rng.dirichlet(np.ones(m), size=k)
        return np.round(F * 8) / 8
    return rng.random((k, m))  # dominated points too


@pytest.mark.parametrize("m", range(1, 9))
@pytest.mark.parametrize("kind", ["sphere", "linear", "cloud"])
def test_agrees_with_moocore(m: int, kind: str) -> None:
    rng = np.random.default_rng(1000 * m + len(kind))
    sizes = [1, 2, 7, 40, 150] if m <= 4 else [1, 2, 7, 30]
    for k in sizes:
        F = _front(rng, k, m, kind)
        ref = np.full(m, 1.1)
        want = float(moocore.hypervolume(F, ref=ref))
        got = decido.hypervolume(F, ref)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300), (m, kind, k)


def test_hand_cases() -> None:
    assert decido.hypervolume([[1, 2], [2, 1], [2.5, 2.5]], [3, 3]) == 3.0
    assert decido.hypervolume([[0, 0, 0.5], [0.5, 0.5, 0], [0.5, 0.5, 0.5]], [1, 1, 1]) == 0.625
    assert decido.hypervolume([[3, 0], [0, 3]], [3, 3]) == 0.0  # on the faces: nothing
    assert decido.hypervolume(np.empty((0, 2)), [1, 1]) == 0.0
    assert decido.hypervolume([[math.nan, 0], [1, 1]], [3, 3]) == 4.0


def test_goals() -> None:
    # maximize both: points (2, 1), (1, 2) above the reference (0, 0)
    assert decido.hypervolume([[2, 1], [1, 2]], [0, 0], goals=["maximize", "maximize"]) == 3.0
    assert decido.hypervolume([[2, 1]], [0, 3], goals=["maximize", "minimize"]) == 4.0


def test_faults_are_listed() -> None:
    with pytest.raises(decido.EngineError) as info:
        decido.hypervolume([[1, 2, 3]], [1, math.inf, 2, 4], goals=["up"])
    assert [e["pointer"] for e in info.value.errors] == ["/reference_point", "/goals"]
    with pytest.raises(decido.EngineError) as info:
        decido.hypervolume([[1] * 9], [2] * 9)
    assert info.value.errors[0]["pointer"] == "/points"
    with pytest.raises(decido.EngineError) as info:
        decido.hypervolume([[1, 2]], [3, math.nan])
    assert info.value.errors[0]["pointer"] == "/reference_point/1"


def test_a_time_limit_bounds_the_exact_computation() -> None:
    """WFG on 600 points of 8 objectives (the simplex: none dominates another) takes hours;
    with ``time_limit`` it raises TimeoutError as soon as the limit passes."""
    F = np.random.default_rng(3).uniform(0.1, 1, size=(600, 8))
    F /= F.sum(axis=1, keepdims=True)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="600 points of 8 objectives"):
        decido.hypervolume(F, [1.0] * 8, time_limit=0.2)
    assert time.monotonic() - started < 0.2 + 0.5
    assert decido.hypervolume([[1, 2], [2, 1]], [3, 3], time_limit=5) == 3.0
    with pytest.raises(decido.EngineError) as info:
        decido.hypervolume([[1, 2]], [3, 3], time_limit=0)
    assert info.value.errors[0]["pointer"] == "/time_limit"
