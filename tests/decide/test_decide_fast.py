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

import array
import math
import sys

import numpy as np
import orjson
import pytest

import decido

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


# ---------------------------------------------------------------- the direct path of decide
decide_module = sys.modules["decido.decide"]
DIRECT = [("topsis", None), ("topsis", "vector"), ("wsm", None), ("wsm", "minmax"),
          ("moora", None)]


def _decision(rng, kind: int, trial: int) -> dict:
    """A request the direct path takes: topsis/vector, wsm/minmax or moora, given or
    equal weights, no explanation."""
    m = int(rng.integers(2, 40)) if trial % 4 else int(rng.integers(2, 257))
    k = int(rng.integers(1, 9))
    X = _matrix(rng, kind, m, k)
    names = [f"c{j}" for j in range(k)]
    method, normalization = DIRECT[trial % len(DIRECT)]
    criteria = []
    for j in range(k):
        c = {"attribute": names[j], "goal": str(rng.choice(["maximize", "minimize"]))}
        if trial % 5:
            c["weight"] = float(rng.choice([rng.uniform(0.1, 3.0), 1.0, 1e300, 1e-300]))
        criteria.append(c)
    request = {
        "options": [{"id": i if trial % 2 else f"o{i}",
                     "attributes": dict(zip(names, X[i].tolist(), strict=True))}
                    for i in range(m)],
        "method": method,
        "criteria": criteria,
        "weighting": "given" if trial % 5 else "equal",
    }
    if normalization is not None:
        request["normalization"] = normalization
    if trial % 3 == 0:
        request["top_k"] = int(rng.integers(1, m + 1))
    return request


def _direct_and_general(monkeypatch, request) -> tuple[bytes, bytes]:
    """``decide``'s answer as it is and with the direct paths off (``DIRECT_MAX_OPTIONS``
    = 0 turns off the plain path too)."""
    with np.errstate(all="ignore"):
        direct = orjson.dumps(decido.decide(request))
        with monkeypatch.context() as patch:
            patch.setattr(decide_module, "DIRECT_MAX_OPTIONS", 0)
            general = orjson.dumps(decido.decide(request))
    return direct, general


@pytest.mark.parametrize("kind", range(KINDS))
def test_direct_decision_is_byte_identical(monkeypatch, kind):
    """``decide`` through ``rank_values`` (no NumPy array) answers the same bytes as
    the general path, warnings included."""
    rng = np.random.default_rng(77 + kind)
    for trial in range(300):
        direct, general = _direct_and_general(monkeypatch, _decision(rng, kind, trial))
        assert direct == general, (kind, trial)


@pytest.mark.parametrize("kind", range(KINDS))
def test_direct_decision_without_the_plain_path_is_byte_identical(monkeypatch, kind):
    """The same with the plain path off: ``parse_plan`` then ``rank_values``."""
    rng = np.random.default_rng(177 + kind)
    monkeypatch.setattr(decide_module, "PLAIN_PATH", False)
    for trial in range(150):
        direct, general = _direct_and_general(monkeypatch, _decision(rng, kind, trial))
        assert direct == general, (kind, trial)


def _answer(request) -> bytes:
    try:
        with np.errstate(all="ignore"):
            return orjson.dumps(decido.decide(request))
    except decido.DecisionError as exc:
        return orjson.dumps({"error": exc.to_dict()})


#: changes that take a request off the plain path (or keep it on), each applied alone
MUTATIONS = [
    lambda r: r.update(explain=True),
    lambda r: r.update(explain=False),
    lambda r: r.update(explain=None),
    lambda r: r.update(explain=1),
    lambda r: r.update(id=True),
    lambda r: r.update(id=7),
    lambda r: r.update(id="x"),
    lambda r: r.update(id=1.5),
    lambda r: r.update(top_k=0),
    lambda r: r.update(top_k=True),
    lambda r: r.update(top_k=2.0),
    lambda r: r.update(top_k=None),
    lambda r: r.update(method=None),
    lambda r: r.update(method="vikor"),
    lambda r: r.update(method="TOPSIS"),
    lambda r: r.update(method=3),
    lambda r: r.update(normalization="vector"),
    lambda r: r.update(normalization="minmax"),
    lambda r: r.update(normalization="sum"),
    lambda r: r.update(normalization=None),
    lambda r: r.update(normalization=""),
    lambda r: r.update(weighting="equal"),
    lambda r: r.update(weighting="entropy"),
    lambda r: r.update(weighting=None),
    lambda r: r.update(weighting="Given"),
    lambda r: r.update(params={}),
    lambda r: r.update(params={"v": 0.3}),
    lambda r: r.update(constraints=[]),
    lambda r: r.update(goal="maximize"),
    lambda r: r.update(unknown=1),
    lambda r: r.update(options=r["options"][:1]),
    lambda r: r.update(options=[]),
    lambda r: r.update(options="abc"),
    lambda r: r.update(criteria=[]),
    lambda r: r.update(criteria={"attribute": "c0"}),
    lambda r: r["criteria"][0].update(goal=None),
    lambda r: r["criteria"][0].update(goal="min"),
    lambda r: r["criteria"][0].update(goal="minimize"),
    lambda r: r["criteria"][0].update(weight=None),
    lambda r: r["criteria"][0].pop("weight", None),
    lambda r: r["criteria"][0].update(weight=0),
    lambda r: r["criteria"][0].update(weight=-1.0),
    lambda r: r["criteria"][0].update(weight=True),
    lambda r: r["criteria"][0].update(weight="2"),
    lambda r: r["criteria"][0].update(weight=10**400),
    lambda r: r["criteria"][0].update(weight=3),
    lambda r: r["criteria"][0].update(attribute=""),
    lambda r: r["criteria"][0].update(attribute=5),
    lambda r: r["criteria"][0].update(attribute="nope"),
    lambda r: r["criteria"][0].update(extra=1),
    lambda r: r["criteria"].append(dict(r["criteria"][0])),
    lambda r: r["criteria"].__setitem__(0, "c0"),
    lambda r: r["options"][1].update(id=r["options"][0]["id"]),
    lambda r: r["options"][1].update(id=True),
    lambda r: r["options"][1].update(id=None),
    lambda r: r["options"][1].pop("id"),
    lambda r: r["options"][1].update(extra={"a": 1}),
    lambda r: r["options"][1].update(attributes=[1, 2]),
    lambda r: r["options"][1].pop("attributes"),
    lambda r: r["options"].__setitem__(1, [1, 2]),
    lambda r: r["options"][1]["attributes"].pop("c0"),
    lambda r: r["options"][1]["attributes"].update(c0=True),
    lambda r: r["options"][1]["attributes"].update(c0=False),
    lambda r: r["options"][1]["attributes"].update(c0="1"),
    lambda r: r["options"][1]["attributes"].update(c0=None),
    lambda r: r["options"][1]["attributes"].update(c0=10**400),
    lambda r: r["options"][1]["attributes"].update(c0=2**60 + 1),
    lambda r: r["options"][1]["attributes"].update(c0=float("inf")),
    lambda r: r["options"][1]["attributes"].update(c0=float("nan")),
    lambda r: r["options"][1]["attributes"].update(c0=1e308),
    lambda r: r["options"][1]["attributes"].update(c0=-0.0),
    lambda r: r["options"][1]["attributes"].update(other=[1]),
]


@pytest.mark.parametrize("which", range(len(MUTATIONS)))
def test_plain_path_declines_what_it_does_not_cover(monkeypatch, which):
    """Each change alone, on requests of the plain path's shape: the answer (or the
    error) is the general path's, byte for byte."""
    rng = np.random.default_rng(500 + which)
    for trial in range(12):
        request = _decision(rng, trial % KINDS, trial)
        request["options"] = request["options"][: max(3, len(request["options"]) // 8)]
        if trial % 2:
            request.pop("normalization", None)
        MUTATIONS[which](request)
        plain = _answer(request)
        with monkeypatch.context() as patch:
            patch.setattr(decide_module, "PLAIN_PATH", False)
            patch.setattr(decide_module, "DIRECT_MAX_OPTIONS", 0)
            general = _answer(request)
        assert plain == general, (which, trial)


def test_plain_path_is_taken(monkeypatch):
    def boom(*args):
        raise RuntimeError("general path")

    monkeypatch.setattr(decide_module, "parse_plan", boom)
    out = decido.decide({"options": [{"id": "a", "attributes": {"x": 1}},
                                     {"id": "b", "attributes": {"x": 2}}],
                         "criteria": [{"attribute": "x", "weight": 1}]})
    assert out["best"] == "b"
    with pytest.raises(RuntimeError, match="general path"):
        decido.decide({"options": [{"id": "a", "attributes": {"x": 1}},
                                   {"id": "b", "attributes": {"x": 2}}],
                       "criteria": [{"attribute": "x", "weight": 1}], "explain": True})


@pytest.mark.parametrize(("method", "normalization"), DIRECT)
def test_direct_path_is_taken(monkeypatch, method, normalization):
    def boom(*args):
        raise RuntimeError("direct path")

    monkeypatch.setattr(decide_module, "rank_values", boom)
    request = {"options": [{"id": "a", "attributes": {"x": 1, "y": 2}},
                           {"id": "b", "attributes": {"x": 2, "y": 1}}],
               "method": method, "criteria": [{"attribute": "x", "weight": 1},
                                              {"attribute": "y", "weight": 2}]}
    if normalization is not None:
        request["normalization"] = normalization
    with pytest.raises(RuntimeError, match="direct path"):
        decido.decide(request)
    # explanations, automatic weights, one option: the general path
    decido.decide({**request, "explain": True})
    decido.decide({**request, "weighting": "entropy"})
    decido.decide({**request, "options": request["options"][:1]})


def test_direct_path_declines_a_zero_tie():
    """A min-max column whose minimum is held as +0.0 and -0.0: the kernel declines and
    the general path answers (with the same warnings, none twice)."""
    request = {"options": [{"id": "a", "attributes": {"x": 0.0, "y": 1}},
                           {"id": "b", "attributes": {"x": -0.0, "y": 1}},
                           {"id": "c", "attributes": {"x": 3.0, "y": 1}}],
               "method": "wsm", "criteria": [{"attribute": "x", "weight": 1},
                                             {"attribute": "y", "weight": 1}]}
    out = decido.decide(request)
    assert [w["code"] for w in out["warnings"]] == ["constant_criterion"]
    assert [r["id"] for r in out["ranking"]] == ["c", "a", "b"]


def test_given_weights_are_over_their_exact_sum():
    """Weights are divided by ``math.fsum`` of them (the same in any order); a sum beyond
    the largest double divides by the largest weight first."""
    options = [{"id": "a", "attributes": {"x": 1, "y": 2, "z": 3}},
               {"id": "b", "attributes": {"x": 2, "y": 1, "z": 1}}]
    criteria = [{"attribute": n, "weight": w} for n, w in zip("xyz", [1e16, 1.0, 1.0], strict=True)]
    for explain in (False, True):
        out = decido.decide({"options": options, "criteria": criteria, "explain": explain})
        total = math.fsum([1e16, 1.0, 1.0])
        assert out["weights"] == {"x": 1e16 / total, "y": 1.0 / total, "z": 1.0 / total}
    huge = [{"attribute": n, "weight": 1e308} for n in "xyz"]
    out = decido.decide({"options": options, "criteria": huge})
    assert out["weights"] == {"x": 1 / 3, "y": 1 / 3, "z": 1 / 3}


def test_rank_values_checks_its_arguments():
    values = array.array("d", [1.0, 2.0, 3.0, 4.0])
    args = (2, 2, kernels.RANK_TOPSIS_VECTOR, b"\x01\x00", [0.5, 0.5], True, 1e-12)
    assert kernels.rank_values(values, *args) is not None
    with pytest.raises(ValueError, match="shapes"):
        kernels.rank_values(array.array("d", [1.0]), *args)
    with pytest.raises(ValueError, match="shapes"):
        kernels.rank_values(values, 2, 2, 0, b"\x01", [0.5, 0.5], True, 1e-12)
    with pytest.raises(ValueError, match="shapes"):
        kernels.rank_values(values, 2, 2, 0, b"\x01\x00", [0.5], True, 1e-12)
    with pytest.raises(ValueError, match="unknown kernel"):
        kernels.rank_values(values, 2, 2, 7, b"\x01\x00", [0.5, 0.5], True, 1e-12)
    with pytest.raises(TypeError):
        kernels.rank_values(values, 2, 2, 0, b"\x01\x00", ["a", 0.5], True, 1e-12)
    constant, order, ranks, scores = kernels.rank_values(
        array.array("d", [1.0, 5.0, 2.0, 5.0, 3.0, 5.0]), 3, 2, kernels.RANK_WSM_MINMAX,
        b"\x01\x01", [0.5, 0.5], True, 1e-12)
    assert constant == b"\x00\x01" and order == [2, 1, 0] and ranks == [1, 2, 3]
    assert scores == [1.0, 0.75, 0.5]
