"""Structure (separability / interaction graph) and separable_terms, checked numerically."""

import numpy as np
import pytest
from grammar_strategies import optimization_case, point
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reference import Reference

import decido

RELAXED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
ROSENBROCK = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"
KINDS = {"constant", "separable", "chained", "grouped", "general"}

SEPARABLE = [
    (RASTRIGIN, True),
    ("sum(i*x**2)", False),
    ("sum(abs(x)) + x[0]**2", False),
    ("sum(x[::2]**2) + sum(cos(x[1::2]))", False),
    ("sum(x**2)", True),
    ("3 + sum(exp(sin(x))) - 2*n", True),
    ("sum(x) + x[-1]**3 - mean(x**2)", False),
    ("sum(where(x > 0, x, -2*x))", True),
    ("x[0]", False),
]


def separable_constant(e, T):
    """f(T_k) - sum_j G[k, j] per row, and the scale of the terms."""
    G = e.separable_terms(T)
    assert isinstance(G, np.ndarray) and G.shape == T.shape
    f = e.evaluate_many(T)
    with np.errstate(all="ignore"):
        return f - G.sum(axis=1), np.abs(f) + np.abs(G).sum(axis=1)


def assert_constant_offset(e, T, text):
    c, scale = separable_constant(e, T)
    ok = np.isfinite(c)
    assert ok.any()
    c, scale = c[ok], scale[ok]
    spread = np.abs(c - c[0])
    assert np.all(spread <= 1e-9 * (1 + scale + abs(c[0]))), (text, c.tolist())


def components(used, edges):
    """Connected components of the interaction graph over the used coordinates."""
    parent = {j: j for j in np.flatnonzero(used).tolist()}

    def find(j):
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        return j

    for u, v in edges.tolist():
        parent[find(u)] = find(v)
    groups = {}
    for j in sorted(parent):
        groups.setdefault(find(j), []).append(j)
    return sorted(groups.values())


@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000])
@pytest.mark.parametrize("text, identical", SEPARABLE)
def test_separable_terms_consistent(text, identical, n):
    if n == 1 and "x[1::2]" in text:
        pytest.skip("x[1::2] is empty for n=1")
    e = decido.Expression(text, n=n)
    s = e.structure
    assert s.kind == "separable", (text, s.kind)
    if n >= 2 and text != "x[0]":
        assert bool(s.identical_terms) == identical, (text, n)
    rng = np.random.default_rng(n)
    T = rng.uniform(-3, 3, (6, n))
    assert_constant_offset(e, T, text)


def test_separable_terms_single_coordinate_changes():
    # G[k, j] depends on T[k, j] only: changing one coordinate changes one column
    e = decido.Expression("sum(x[::2]**2) + sum(cos(x[1::2])) + x[0]*3", n=7)
    T = np.random.default_rng(1).uniform(-2, 2, (4, 7))
    G = e.separable_terms(T)
    T2 = T.copy()
    T2[:, 3] += 0.5
    G2 = e.separable_terms(T2)
    np.testing.assert_array_equal(np.delete(G, 3, axis=1), np.delete(G2, 3, axis=1))
    np.testing.assert_allclose(G2[:, 3] - G[:, 3], np.cos(T2[:, 3]) - np.cos(T[:, 3]),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("text", [ROSENBROCK, "sum(x)**2", "x[0]*x[1]", "prod(x)"])
def test_separable_terms_rejects_coupled(text):
    e = decido.Expression(text, n=4)
    with pytest.raises(decido.ExpressionError) as info:
        e.separable_terms(np.zeros((2, 4)))
    assert info.value.code == "not_separable"


# ---------------------------------------------------------------------------- known kinds
def test_rastrigin_kind():
    s = decido.Expression(RASTRIGIN, n=50).structure
    assert s.kind == "separable" and s.identical_terms
    assert s.used.dtype == bool and s.used.all()
    assert s.edges().shape == (0, 2)
    assert s.groups == [[j] for j in range(50)]


def test_weighted_sphere_kind():
    s = decido.Expression("sum(i*x**2)", n=10).structure
    assert s.kind == "separable" and not s.identical_terms


@pytest.mark.parametrize("n", [2, 3, 10, 1000])
def test_rosenbrock_kind(n):
    s = decido.Expression(ROSENBROCK, n=n).structure
    assert s.kind == "chained"
    edges = s.edges()
    assert edges.dtype == np.int64
    np.testing.assert_array_equal(edges, [[j, j + 1] for j in range(n - 1)])
    assert s.groups == [list(range(n))]


def test_pairs_grouped():
    s = decido.Expression("sum((x[::2]-x[1::2])**2)", n=6).structure
    assert s.kind == "grouped"
    assert s.groups == [[0, 1], [2, 3], [4, 5]]
    np.testing.assert_array_equal(s.edges(), [[0, 1], [2, 3], [4, 5]])
    assert not s.identical_terms


def test_square_of_sum_general():
    s = decido.Expression("sum(x)**2", n=5).structure
    assert s.kind == "general"
    assert s.groups == [list(range(5))]
    assert len(s.edges()) == 10


def test_unused_coordinate():
    s = decido.Expression("x[0]*x[2]", n=3).structure
    assert s.groups == [[0, 2]]
    np.testing.assert_array_equal(s.used, [True, False, True])
    np.testing.assert_array_equal(s.edges(), [[0, 2]])
    assert s.kind in ("grouped", "general")


@pytest.mark.parametrize("text, context", [("2*pi + n", {"n": 3}), ("sum(i)", {"n": 4}),
                                           ("3", {"n": 1}), ("2 + e", {}),
                                           ("pi", {"variables": ["a", "b"]})])
def test_constant_kind(text, context):
    s = decido.Expression(text, **context).structure
    assert s.kind == "constant"
    assert not s.used.any()
    assert s.groups == []
    assert s.edges().shape == (0, 2)


# ---------------------------------------------------------------------------- properties
def _mixed_difference(e, ref, x, u, v, du, dv):
    """f(x + du e_u + dv e_v) - f(x + du e_u) - f(x + dv e_v) + f(x), and a bound on the
    rounding in those four values."""
    a = x.copy()
    b = x.copy()
    b[u] += du
    c = x.copy()
    c[v] += dv
    d = b.copy()
    d[v] += dv
    X = np.stack([a, b, c, d])
    f = e.evaluate_many(X)
    _, err = ref.evaluate_bound(X)
    with np.errstate(all="ignore"):
        return f[3] - f[1] - f[2] + f[0], 1e-9 * (1 + np.max(np.abs(f))) + 4 * np.sum(err)


@settings(max_examples=200, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(1, 2, 7)), data=st.data())
def test_structure_claims_hold(case, data):
    n, text = case
    e = decido.Expression(text, n=n)
    ref = Reference(text, n=n)
    s = e.structure
    assert s.kind in KINDS
    used = np.asarray(s.used)
    assert used.shape == (n,) and used.dtype == bool
    edges = np.asarray(s.edges())
    assert edges.ndim == 2 and edges.shape[1] == 2 and edges.dtype == np.int64
    if len(edges):
        assert np.all(edges[:, 0] < edges[:, 1])
        assert np.all(used[edges.ravel()])
        assert len({tuple(p) for p in edges.tolist()}) == len(edges)
        assert edges.tolist() == sorted(edges.tolist())
    assert [sorted(g) for g in s.groups] == components(used, edges)
    if s.kind == "constant":
        assert not used.any()
    if s.kind == "separable":
        assert used.any() and len(edges) == 0
    if not used.any():
        assert s.kind == "constant"
    elif len(edges) == 0:
        assert s.kind == "separable", (text, s.kind)
    if s.kind == "chained":
        assert all(v == u + 1 for u, v in edges.tolist())

    x = data.draw(point(n, lo=-2.0, hi=2.0, extreme=False))
    f0 = e.evaluate(x)
    # an unused coordinate changes nothing
    for j in np.flatnonzero(~used):
        y = x.copy()
        y[j] = data.draw(st.floats(-4, 4))
        f1 = e.evaluate(y)
        assert f1 == f0 or (np.isnan(f1) and np.isnan(f0)), (text, j)
    # a pair without an edge does not interact: the mixed difference vanishes
    edge_set = {tuple(p) for p in edges.tolist()}
    for u in range(n):
        for v in range(u + 1, n):
            if (u, v) in edge_set:
                continue
            du, dv = data.draw(st.floats(0.1, 1.5)), data.draw(st.floats(0.1, 1.5))
            mixed, tol = _mixed_difference(e, ref, x, u, v, du, dv)
            if np.isfinite(mixed):
                assert abs(mixed) <= tol, (text, x.tolist(), u, v, du, dv, mixed)
    # separable: separable_terms reproduces f up to a constant
    if s.kind == "separable":
        T = np.stack([x] + [data.draw(point(n, lo=-2.0, hi=2.0, extreme=False))
                            for _ in range(3)])
        c, scale = separable_constant(e, T)
        ok = np.isfinite(c)
        assume(ok.sum() >= 2)
        c, scale = c[ok], scale[ok]
        assert np.all(np.abs(c - c[0]) <= 1e-9 * (1 + scale + abs(c[0]))), (text, c.tolist())
    if s.identical_terms:
        # the same g for every coordinate: equal inputs give equal terms
        assert s.kind == "separable"
        t = np.array([data.draw(st.floats(-2, 2)) for _ in range(3)])
        G = e.separable_terms(np.repeat(t[:, None], n, axis=1))
        spread = np.abs(G - G[:, :1])
        with np.errstate(invalid="ignore"):
            ok = ((G == G[:, :1]) | (spread <= 1e-12 * (1 + np.abs(G)))
                  | (np.isnan(G) & np.isnan(G[:, :1])))  # equal infinities: log(0) terms
        assert ok.all(), (text, t.tolist(), G.tolist())
