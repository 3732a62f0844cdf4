"""The small-request fast paths give the same bits as the NumPy code they replace.

The one-pass C kernels behind ``decido._mcdm`` (csrc/decide/kernels.c) must
reproduce ``decido._mcdm_methods``' NumPy paths exactly, including NumPy's
summation orders (``numpy.einsum`` for column norms, ``sum(axis=1)`` for row
sums); these tests compare every array of the result byte for byte with the
fast path switched off (``FAST_MAX_OPTIONS`` = 0), over thousands of random
matrices: signed zeros, integers, extreme magnitudes (overflow to inf and NaN
included), constant columns and zero weights.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import decido  # noqa: F401  (imports the modules below)

methods = sys.modules["decido._mcdm_methods"]
kernels = sys.modules["decido._mcdm"]

KINDS = 7


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
    elif kind == 4:
        X = rng.lognormal(0, 3, (m, k))
    elif kind == 5:  # +0.0 and -0.0 mixed, also as column minimum and maximum
        X = rng.choice([0.0, -0.0, 1.0, -1.0, 2.5], (m, k))
    else:  # near the largest double: differences overflow to inf, inf/inf is NaN
        X = rng.choice([1.7e308, -1.7e308, 1e308, 0.0, 3.0], (m, k))
    return np.asfortranarray(X)


def _arrays(scored) -> list[tuple[str, bytes, tuple[int, ...]]]:
    parts = {"score": scored.score, **scored.per_criterion, **scored.per_option}
    out = [(key, a.tobytes(), a.shape) for key, a in parts.items()]
    return out + [("compromise", repr(scored.compromise).encode(), ())]


def _problem(rng, kind: int, trial: int):
    m = int(rng.integers(2, 40)) if trial % 4 else int(rng.integers(2, 257))
    k = int(rng.integers(1, 9))
    X = _matrix(rng, kind, m, k)
    benefit = rng.random(k) < 0.5
    w = rng.uniform(0.1, 3.0, k)
    if trial % 7 == 0:  # automatic weights can be 0
        w[rng.random(k) < 0.3] = 0.0
    w = w / w.sum() if w.sum() > 0 else np.full(k, 1.0 / k)
    if trial % 3 == 0:
        constant = X.max(axis=0) == X.min(axis=0)
        constant |= rng.random(k) < 0.2
    else:
        constant = None
    return X, benefit, w, constant


def _params(name: str, rng, X, benefit) -> dict:
    k = X.shape[1]
    if name == "topsis":
        return {"normalization": "vector"}
    if name == "wsm":
        return {"normalization": "minmax"}
    if name == "vikor":
        return {"v": float(rng.choice([0.5, 0.0, 1.0, rng.uniform()]))}
    if name == "spotis":
        lo, hi = X.min(axis=0), X.max(axis=0)
        widen = rng.random(k) < 0.5
        lo = np.where(widen, lo - rng.uniform(0, 10, k), lo)
        hi = np.where(widen, hi + rng.uniform(0, 10, k), hi)
        return {"bounds": np.column_stack([lo, hi])}
    return {}


FAST_METHODS = ["topsis", "wsm", "moora", "vikor", "spotis"]


@pytest.mark.parametrize("name", FAST_METHODS)
@pytest.mark.parametrize("kind", range(KINDS))
def test_fast_path_is_bit_identical(monkeypatch, name, kind):
    rng = np.random.default_rng(1000 * kind + FAST_METHODS.index(name))
    method = methods.METHODS[name]
    for trial in range(400):
        X, benefit, w, constant = _problem(rng, kind, trial)
        p = _params(name, rng, X, benefit)
        with np.errstate(all="ignore"):
            fast = _arrays(method(X, benefit, w, constant, p))
            with monkeypatch.context() as patch:
                patch.setattr(methods, "FAST_MAX_OPTIONS", 0)
                slow = _arrays(method(X, benefit, w, constant, p))
        assert fast == slow, (name, X.shape, trial)


@pytest.mark.parametrize(
    ("name", "kernel"),
    [("topsis", "topsis_vector"), ("wsm", "wsm_minmax"), ("moora", "moora"),
     ("vikor", "vikor"), ("spotis", "spotis")],
)  # fmt: skip
def test_fast_path_is_taken(monkeypatch, name, kernel):
    def boom(*args):
        raise RuntimeError("fast path")

    monkeypatch.setattr(kernels, kernel, boom)
    X = np.asfortranarray([[1.0, 2.0], [3.0, 1.0]])
    benefit, w = np.array([True, False]), np.array([0.5, 0.5])
    p = _params(name, np.random.default_rng(0), X, benefit)
    with pytest.raises(RuntimeError, match="fast path"):
        methods.METHODS[name](X, benefit, w, None, p)
    # C-ordered input (NumPy sums in another order there) keeps the NumPy path
    Xc = np.ascontiguousarray(np.arange(6.0).reshape(3, 2))
    pc = _params(name, np.random.default_rng(0), Xc, benefit)
    methods.METHODS[name](Xc, benefit, w, None, pc)


def test_wsm_zero_tie_falls_back():
    """A column whose minimum is a zero held as both +0.0 and -0.0: NumPy does not
    say which it returns, so the kernel declines and the NumPy path answers."""
    X = np.asfortranarray([[0.0, 1.0], [-0.0, 2.0], [3.0, 0.5]])
    b = np.array([True, True]).tobytes()
    assert kernels.wsm_minmax(X, b, np.array([0.5, 0.5]), None) is None
    # cost column: the maximum is the zero that matters
    X = np.asfortranarray([[0.0, 1.0], [-0.0, 2.0], [-3.0, 0.5]])
    b = np.array([False, True]).tobytes()
    assert kernels.wsm_minmax(X, b, np.array([0.5, 0.5]), None) is None
    assert kernels.wsm_minmax(X, np.array([True, True]).tobytes(), np.array([0.5, 0.5]), None)


def test_kernels_reject_bad_shapes():
    X = np.asfortranarray(np.ones((3, 2)))
    b, w = b"\x01\x00", np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="shapes"):
        kernels.moora(X, b"\x01", w)
    with pytest.raises(ValueError, match="shapes"):
        kernels.topsis_vector(X, b, np.array([1.0]), None)
    with pytest.raises(ValueError, match="shapes"):
        kernels.wsm_minmax(X, b, w, b"\x00")
    with pytest.raises(ValueError, match="shapes"):
        kernels.vikor(np.asfortranarray(np.ones((0, 2))), b, w, 0.5)
    with pytest.raises(ValueError, match="shapes"):
        kernels.spotis(X, b, w, np.ones((3, 2)))


@pytest.mark.parametrize("name", ["decido.decide", "decido._mcdm_request", "decido._mcdm_methods"])
def test_decision_modules_are_compiled(name):
    """The wheel compiles these pure-Python modules with Cython (core/CMakeLists.txt)."""
    assert not sys.modules[name].__file__.endswith(".py")
