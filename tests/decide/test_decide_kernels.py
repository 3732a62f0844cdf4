"""The C kernels (csrc/decide/kernels.c) through ``decido.decisions._kernels``: argument checks, the
normalizations against formulas written here, every size (no size limit), and the
compiled decision modules."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import decido

kernels = sys.modules["decido.decisions._kernels"]


def _norm_reference(X: np.ndarray, benefit: np.ndarray, name: str) -> np.ndarray:
    """The normalization table of docs/decisions.md, column by column, in Python."""
    R = np.empty_like(X)
    for j in range(X.shape[1]):
        x, b = X[:, j], bool(benefit[j])
        lo, hi = x.min(), x.max()
        if name == "minmax":
            R[:, j] = 1.0 if hi == lo else ((x - lo) if b else (hi - x)) / (hi - lo)
        elif name == "vector":
            n = math.sqrt(math.fsum(v * v for v in x))
            R[:, j] = 1.0 if n == 0 else (x / n if b else 1 - x / n)
        elif name == "sum":
            R[:, j] = x / math.fsum(x) if b else (1 / x) / math.fsum(1 / x)
        elif name == "max":
            R[:, j] = x / hi if b else 1 - x / hi
        else:
            R[:, j] = x / hi if b else lo / x
    return R


@pytest.mark.parametrize("name", kernels.NORMALIZATIONS)
@pytest.mark.parametrize("m", [1, 2, 5, 300, 5000])
def test_normalizations_match_their_formulas(name, m):
    rng = np.random.default_rng(m)
    X = np.asfortranarray(rng.uniform(0.5, 50.0, (m, 4)))
    X[:, 3] = 7.0  # a constant column
    benefit = np.array([True, False, True, False])
    R = kernels.normalize(X, benefit.astype(np.uint8).tobytes(), name)
    np.testing.assert_allclose(R, _norm_reference(X, benefit, name), rtol=1e-12, atol=1e-15)


def test_vector_norm_does_not_overflow():
    X = np.asfortranarray([[1e200], [1e200]])
    R = kernels.normalize(X, b"\x01", "vector")
    np.testing.assert_allclose(R[:, 0], [1 / math.sqrt(2)] * 2, rtol=1e-15)


def test_kernels_reject_bad_arguments():
    X = np.asfortranarray(np.ones((3, 2)))
    b, w = b"\x01\x00", np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="shapes"):
        kernels.moora(X, b"\x01", w)
    with pytest.raises(ValueError, match="shapes"):
        kernels.topsis(X, b, np.array([1.0]), "vector")
    with pytest.raises(ValueError, match="shapes"):
        kernels.wsm(X, b"\x00", w, "minmax")
    with pytest.raises(ValueError, match="shapes"):
        kernels.vikor(np.asfortranarray(np.ones((0, 2))), b, w, 0.5, 1e-9)
    with pytest.raises(ValueError, match="shapes"):
        kernels.spotis(X, b, w, np.ones((3, 2)))
    with pytest.raises(ValueError, match="unknown normalization"):
        kernels.normalize(X, b, "zscore")


@pytest.mark.parametrize("method", ["topsis", "wsm", "moora", "vikor", "spotis"])
def test_kernel_methods_take_any_number_of_options(method):
    """One implementation for every size: 1 option and 20,000 options alike."""
    for m in (1, 20_000):
        rng = np.random.default_rng(m)
        opts = [{"id": i, "attributes": {"a": float(a), "b": float(b)}}
                for i, (a, b) in enumerate(rng.uniform(1, 9, (m, 2)))]
        crit = [{"attribute": "a", "weight": 1},
                {"attribute": "b", "goal": "minimize", "weight": 2}]
        out = decido.decide({"options": opts, "criteria": crit, "method": method, "top_k": 3})
        assert out["status"] == "ok" and out["n_feasible"] == m


def test_given_weights_are_over_their_exact_sum():
    """Weights are divided by ``math.fsum`` of them (the same in any order); a sum beyond
    the largest double divides by the largest weight first."""
    options = [{"id": "a", "attributes": {"x": 1, "y": 2, "z": 3}},
               {"id": "b", "attributes": {"x": 2, "y": 1, "z": 1}}]
    criteria = [{"attribute": n, "weight": w} for n, w in zip("xyz", [1e16, 1.0, 1.0], strict=True)]
    out = decido.decide({"options": options, "criteria": criteria})
    total = math.fsum([1e16, 1.0, 1.0])
    assert out["weights"] == {"x": 1e16 / total, "y": 1.0 / total, "z": 1.0 / total}
    huge = [{"attribute": n, "weight": 1e308} for n in "xyz"]
    out = decido.decide({"options": options, "criteria": huge})
    assert out["weights"] == {"x": 1 / 3, "y": 1 / 3, "z": 1 / 3}


@pytest.mark.parametrize("name", [
    "decido.decisions.pipeline", "decido.decisions.request", "decido.decisions.methods",
    "decido.decisions.faults", "decido.decisions.vocabulary", "decido.decisions.decision",
    "decido.decisions.options", "decido.decisions.expressions", "decido.decisions.answer"])
def test_decision_modules_are_compiled(name):
    """The wheel compiles these pure-Python modules with Cython (core/CMakeLists.txt)."""
    assert not sys.modules[name].__file__.endswith(".py")
