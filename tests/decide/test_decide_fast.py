"""The small-request fast paths give the same bits as the NumPy code they replace.

``decido._mcdm.topsis_vector`` (TOPSIS with vector normalization, one C pass)
must reproduce ``decido._mcdm_methods.topsis``'s NumPy path exactly, including
the summation order of ``numpy.einsum``; these tests compare every array of the
result byte for byte with the fast path switched off.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import decido  # noqa: F401  (imports the modules below)

methods = sys.modules["decido._mcdm_methods"]


def _matrix(rng, kind: int, m: int, k: int) -> np.ndarray:
    if kind == 0:
        X = rng.uniform(-100, 100, (m, k))
    elif kind == 1:
        X = rng.integers(-5, 6, (m, k)).astype(float)
    elif kind == 2:  # magnitudes from 1e-300 to 1e306: underflow and overflow of squares
        X = rng.uniform(0.1, 1e6, (m, k)) * 10.0 ** rng.integers(-300, 300, (1, k))
    elif kind == 3:
        X = np.round(rng.uniform(0, 20, (m, k)), 1)
        X[rng.random((m, k)) < 0.2] = -0.0
    else:
        X = rng.lognormal(0, 3, (m, k))
    return np.asfortranarray(X)


def _arrays(scored) -> list[tuple[str, bytes, tuple[int, ...]]]:
    parts = {"score": scored.score, **scored.per_criterion, **scored.per_option}
    return [(key, a.tobytes(), a.shape) for key, a in parts.items()]


@pytest.mark.parametrize("kind", range(5))
def test_topsis_fast_path_is_bit_identical(monkeypatch, kind):
    rng = np.random.default_rng(kind)
    for trial in range(600):
        m = int(rng.integers(2, 40)) if trial % 4 else int(rng.integers(2, 257))
        k = int(rng.integers(1, 9))
        X = _matrix(rng, kind, m, k)
        benefit = rng.random(k) < 0.5
        w = rng.uniform(0.1, 3.0, k)
        w = w / w.sum()
        constant = rng.random(k) < 0.3 if trial % 3 == 0 else None
        p = {"normalization": "vector"}
        fast = _arrays(methods.topsis(X, benefit, w, constant, p))
        with monkeypatch.context() as patch:
            patch.setattr(methods, "TOPSIS_FAST_MAX_OPTIONS", 0)
            slow = _arrays(methods.topsis(X, benefit, w, constant, p))
        assert fast == slow, (m, k, trial)


def test_topsis_fast_path_is_taken(monkeypatch):
    def boom(*args):
        raise RuntimeError("fast path")

    monkeypatch.setattr(methods, "topsis_vector", boom)
    X = np.asfortranarray([[1.0, 2.0], [3.0, 1.0]])
    with pytest.raises(RuntimeError, match="fast path"):
        methods.topsis(X, np.array([True, False]), np.array([0.5, 0.5]), None,
                       {"normalization": "vector"})  # fmt: skip
    # C-ordered input (einsum sums in another order there) keeps the NumPy path
    methods.topsis(np.ascontiguousarray(np.arange(6.0).reshape(3, 2)), np.array([True, False]),
                   np.array([0.5, 0.5]), None, {"normalization": "vector"})  # fmt: skip


@pytest.mark.parametrize("name", ["decido.decide", "decido._mcdm_request", "decido._mcdm_methods"])
def test_decision_modules_are_compiled(name):
    """The wheel compiles these pure-Python modules with Cython (core/CMakeLists.txt)."""
    assert not sys.modules[name].__file__.endswith(".py")
