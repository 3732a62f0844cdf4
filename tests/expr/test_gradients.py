"""Reverse-mode gradients: central differences on smooth expressions, and the conventions
at kinks (DESIGN §2 as decided for the implementation)."""

import math

import numpy as np
import pytest
from grammar_strategies import decision_case, optimization_case, point
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reference import Reference

import decido

RELAXED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"
ROSENBROCK = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"


def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))


def check_gradient(e, x, ref):
    """Gradient of e at x vs central differences (two step sizes, Richardson-style
    error estimate) computed from the VM's own values."""
    x = np.asarray(x, dtype=float)
    n = x.size
    f = e.evaluate(x)
    value, g = e.gradient(x)
    assert isinstance(g, np.ndarray) and g.shape == (n,) and g.dtype == np.float64
    assert same(value, f), ("gradient value differs from evaluate", value, f)
    assume(np.isfinite(f) and np.all(np.isfinite(g)))
    _, err = ref.evaluate_bound(x[None])
    assume(np.isfinite(err[0]))
    fds = []
    for scale in (1e-5, 5e-6):
        h = scale * np.maximum(1.0, np.abs(x))
        plus, minus = x + np.diag(h), x - np.diag(h)
        step = np.diag(plus) - np.diag(minus)  # the steps actually taken
        F = e.evaluate_many(np.vstack([plus, minus]))
        fds.append((F[:n] - F[n:]) / step)
    fd1, fd2 = fds
    assume(np.all(np.isfinite(fd1)) and np.all(np.isfinite(fd2)))
    h = 5e-6 * np.maximum(1.0, np.abs(x))
    noise = 8 * (err[0] + 4 * np.finfo(float).eps * abs(f)) / h  # value noise over the step
    # a function that turns within the step (sin(1e6 x)) has central differences that do
    # not settle when the step halves: they say nothing of the derivative there
    assume(np.all(np.abs(fd1 - fd2) <= 0.1 * np.abs(fd2) + 1e-6 * (1 + np.max(np.abs(g)))
                  + noise))
    tol = 1e-6 * (1 + np.max(np.abs(g))) + 1e-5 * np.abs(g) + 4 * np.abs(fd1 - fd2) + noise
    bad = np.abs(g - fd2) > tol
    assert not bad.any(), {
        "coordinates": np.flatnonzero(bad)[:8].tolist(),
        "gradient": g[bad][:8].tolist(),
        "central differences": fd2[bad][:8].tolist(),
        "x": x[bad][:8].tolist(),
    }


@settings(max_examples=300, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(1, 2, 7), max_depth=4, smooth=True), data=st.data())
def test_gradient_small_n(case, data):
    n, text = case
    x = data.draw(point(n, lo=-2.0, hi=2.0, extreme=False))
    e = decido.Expression(text, n=n)
    check_gradient(e, x, Reference(text, n=n))


@settings(max_examples=150, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(1, 2, 7), max_depth=4), seed=st.integers(0, 2**32 - 1))
def test_gradient_any_expression_at_generic_points(case, seed):
    # all functions, including kinks and jumps, at a random point that is almost surely away
    # from them; a kink or jump within the step shows as central differences that do not
    # settle when the step shrinks, and such points are skipped
    n, text = case
    x = np.random.default_rng(seed).uniform(-3.0, 3.0, n)
    e = decido.Expression(text, n=n)
    f = e.evaluate(x)
    value, g = e.gradient(x)
    assert same(value, f)
    assume(np.isfinite(f) and np.all(np.isfinite(g)))
    fds = []
    for scale in (1e-5, 5e-6, 2.5e-6, 1e-9):
        h = scale * np.maximum(1.0, np.abs(x))
        plus, minus = x + np.diag(h), x - np.diag(h)
        F = e.evaluate_many(np.vstack([plus, minus]))
        fds.append((F[:n] - F[n:]) / (np.diag(plus) - np.diag(minus)))
    fd1, fd2, fd3, fd_tiny = fds
    assume(np.all(np.isfinite(fd1) & np.isfinite(fd2) & np.isfinite(fd3)))
    settled = 1e-4 * (1 + np.abs(fd3))
    assume(np.all(np.abs(fd1 - fd2) <= settled) and np.all(np.abs(fd2 - fd3) <= settled))
    # the rounding of the value and of what it is made of, over the step: 1e308 + x does
    # not move when x does by 1e-5, so neither do abs or sin of it (differences 0)
    _, err = Reference(text, n=n).evaluate_bound(x[None])
    assume(np.isfinite(err[0]))
    rounding = 8 * (err[0] + 4 * np.finfo(float).eps * abs(f))
    noise = rounding / (2.5e-6 * np.maximum(1.0, np.abs(x)))
    # jumps closer together than the steps (floor(x**-100), -7 % x near 0) settle on the
    # slope of the staircase; a step 2,500 times shorter lands between two of them, unless
    # the value moves by half a unit even there (floor(x**101): a jump every ulp of x)
    tiny = 1e-9 * np.maximum(1.0, np.abs(x))
    assume(np.all(np.abs(fd_tiny - fd3) <= settled + rounding / tiny))
    assume(np.all(np.abs(fd_tiny) * 2 * tiny < 0.5))
    tol = 1e-6 * (1 + np.max(np.abs(g))) + 1e-5 * np.abs(g) + 4 * np.abs(fd2 - fd3) + noise
    bad = np.abs(g - fd3) > tol
    assert not bad.any(), (text, x.tolist(), g.tolist(), fd3.tolist())


@settings(max_examples=40, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(64, 1000), max_depth=3, smooth=True), data=st.data())
def test_gradient_large_n(case, data):
    n, text = case
    x = data.draw(point(n, lo=-2.0, hi=2.0, extreme=False))
    e = decido.Expression(text, n=n)
    check_gradient(e, x, Reference(text, n=n))


@settings(max_examples=60, deadline=None, suppress_health_check=RELAXED)
@given(case=decision_case(max_depth=4, smooth=True), data=st.data())
def test_gradient_decision_context(case, data):
    names, text = case
    x = data.draw(point(len(names), lo=-2.0, hi=2.0, extreme=False))
    e = decido.Expression(text, variables=names)
    check_gradient(e, x, Reference(text, variables=names))


@settings(max_examples=60, deadline=None, suppress_health_check=RELAXED)
@given(case=decision_case(max_depth=3), data=st.data())
def test_gradient_value_matches_evaluate_any_expression(case, data):
    # not only smooth expressions: the value returned with a gradient is f(x) exactly
    names, text = case
    x = data.draw(point(len(names)))
    e = decido.Expression(text, variables=names)
    value, g = e.gradient(x)
    assert same(value, e.evaluate(x)), (text, x, value, e.evaluate(x))
    assert g.shape == (len(names),)


@settings(max_examples=60, deadline=None, suppress_health_check=RELAXED)
@given(case=optimization_case(ns=(1, 2, 7, 64)), data=st.data())
def test_gradient_value_matches_evaluate_optimization(case, data):
    n, text = case
    x = data.draw(point(n))
    e = decido.Expression(text, n=n)
    value, g = e.gradient(x)
    assert same(value, e.evaluate(x)), (text, x.tolist(), value, e.evaluate(x))
    assert g.shape == (n,)


@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_known_gradients(n):
    rng = np.random.default_rng(7)
    x = rng.uniform(-2, 2, n)
    _, g = decido.Expression(RASTRIGIN, n=n).gradient(x)
    np.testing.assert_allclose(g, 2 * x + 20 * np.pi * np.sin(2 * np.pi * x), rtol=1e-12,
                               atol=1e-12)
    _, g = decido.Expression("sum(i*x**2)", n=n).gradient(x)
    np.testing.assert_allclose(g, 2 * np.arange(1, n + 1) * x, rtol=1e-14)
    if n > 1:
        _, g = decido.Expression(ROSENBROCK, n=n).gradient(x)
        want = np.zeros(n)
        t = x[1:] - x[:-1] ** 2
        want[1:] += 200 * t
        want[:-1] += -400 * t * x[:-1] - 2 * (1 - x[:-1])
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-10)


# ---------------------------------------------------------------------------- conventions
def grad(text, x, **kw):
    x = np.asarray(x, dtype=float)
    if "variables" not in kw:
        kw["n"] = x.size
    return decido.Expression(text, **kw).gradient(x)[1]


@pytest.mark.parametrize(
    "text, x, want",
    [
        # abs'(0) = 0
        ("abs(x[0])", [0.0], [0.0]),
        ("abs(x[0])", [-0.0], [0.0]),
        ("sum(abs(x))", [0.0, 2.0, -3.0], [0.0, 1.0, -1.0]),
        # min/max of two: ties go to the first argument
        ("min(x[0], x[1])", [1.0, 1.0], [1.0, 0.0]),
        ("min(x[0], x[1])", [1.0, 2.0], [1.0, 0.0]),
        ("min(x[0], x[1])", [2.0, 1.0], [0.0, 1.0]),
        ("max(x[0], x[1])", [1.0, 1.0], [1.0, 0.0]),
        ("max(x[0], x[1])", [2.0, 1.0], [1.0, 0.0]),
        ("max(x[0], x[1])", [1.0, 2.0], [0.0, 1.0]),
        ("min(x[1], x[0])", [1.0, 1.0], [0.0, 1.0]),
        ("min(x[0], x[1], x[2])", [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]),
        ("max(x[0], x[1], x[2])", [0.0, 3.0, 3.0], [0.0, 1.0, 0.0]),
        ("min(2*x[0], x[1])", [1.0, 2.0], [2.0, 0.0]),
        ("sum(min(x, 0))", [-1.0, 0.0, 1.0], [1.0, 1.0, 0.0]),
        ("sum(max(x, 0))", [-1.0, 0.0, 1.0], [0.0, 1.0, 1.0]),
        ("sum(max(0, x))", [-1.0, 0.0, 1.0], [0.0, 0.0, 1.0]),
        # where: only the chosen branch
        ("where(x[0] > 0, x[1]**2, 3*x[2])", [1.0, 2.0, 5.0], [0.0, 4.0, 0.0]),
        ("where(x[0] > 0, x[1]**2, 3*x[2])", [-1.0, 2.0, 5.0], [0.0, 0.0, 3.0]),
        ("where(x[0], x[1], x[2])", [0.0, 2.0, 5.0], [0.0, 0.0, 1.0]),
        ("sum(where(x > 0, x**2, -x))", [-1.0, 0.0, 2.0], [-1.0, -1.0, 4.0]),
        # piecewise constant functions, comparisons and logic have gradient 0
        ("floor(x[0]) + ceil(x[1]) + round(x[2]) + sign(x[3])", [2.0, 0.5, 0.5, 0.0],
         [0.0, 0.0, 0.0, 0.0]),
        ("floor(x[0]) + ceil(x[1]) + round(x[2]) + sign(x[3])", [2.3, -1.5, 2.7, -4.0],
         [0.0, 0.0, 0.0, 0.0]),
        ("(x[0] < x[1]) + (x[1] <= x[0] < 3) + (x[0] == x[1]) + (x[0] != x[1])", [1.0, 2.0],
         [0.0, 0.0]),
        ("(x[0] and x[1]) + (x[0] or x[1]) + (not x[0])", [1.0, 0.0], [0.0, 0.0]),
        ("x[0] * (x[1] > 0)", [3.0, 1.0], [1.0, 0.0]),
        ("sum(x * (x > 0))", [-1.0, 2.0], [0.0, 1.0]),
        # clip(v, lo, hi) = min(max(v, lo), hi): v gets the gradient when lo <= v <= hi
        ("clip(x[0], x[1], x[2])", [0.5, 0.0, 1.0], [1.0, 0.0, 0.0]),
        ("clip(x[0], x[1], x[2])", [-1.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
        ("clip(x[0], x[1], x[2])", [2.0, 0.0, 1.0], [0.0, 0.0, 1.0]),
        ("clip(x[0], x[1], x[2])", [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]),
        ("clip(x[0], x[1], x[2])", [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]),
        ("sum(clip(x, -1, 1))", [-2.0, -1.0, 0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 1.0, 0.0]),
        # min(v) / max(v): the first argmin / argmax
        ("min(x)", [3.0, 1.0, 1.0, 2.0], [0.0, 1.0, 0.0, 0.0]),
        ("max(x)", [1.0, 5.0, 5.0], [0.0, 1.0, 0.0]),
        ("max(x)", [7.0, 7.0, 7.0], [1.0, 0.0, 0.0]),
        ("min(x**2)", [-1.0, 1.0, 2.0], [-2.0, 0.0, 0.0]),
        ("max(x[::-1])", [5.0, 1.0, 5.0], [0.0, 0.0, 1.0]),
        # prod with zeros: the product of the others
        ("prod(x)", [2.0, 3.0, 4.0], [12.0, 8.0, 6.0]),
        ("prod(x)", [2.0, 0.0, 3.0], [0.0, 6.0, 0.0]),
        ("prod(x)", [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]),
        ("prod(x)", [0.0], [1.0]),
        ("prod(x - 1)", [1.0, 3.0], [2.0, 0.0]),
        # cumsum
        ("sum(i*cumsum(x))", [0.3, -1.0, 2.0], [6.0, 5.0, 3.0]),
        ("cumsum(x)[-1]", [1.0, 2.0, 3.0], [1.0, 1.0, 1.0]),
        ("cumsum(x)[1]", [1.0, 2.0, 3.0], [1.0, 1.0, 0.0]),
        ("sum(cumsum(x)**2)", [1.0, 2.0], [2 * 1 + 2 * 3, 2 * 3]),
        # indexing, slicing, reuse
        ("x[0]*x[0]", [3.0], [6.0]),
        ("x[-1]*x[0]", [2.0, 5.0, 3.0], [3.0, 0.0, 2.0]),
        ("sum(x[::2])", [1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 1.0, 0.0, 1.0]),
        ("sum(x[::-1] * i)", [1.0, 1.0, 1.0], [3.0, 2.0, 1.0]),
        ("sum((x[::2] - x[1::2])**2)", [1.0, 3.0, 2.0, 0.0], [-4.0, 4.0, 4.0, -4.0]),
        ("mean(x)", [1.0, 2.0, 4.0, 8.0], [0.25, 0.25, 0.25, 0.25]),
        ("norm(x)", [3.0, 4.0], [0.6, 0.8]),
        # smooth basics
        ("x[0] % x[1]", [7.5, 2.0], [1.0, -3.0]),
        ("x[0] / x[1]", [3.0, 2.0], [0.5, -0.75]),
        ("x[0] ** x[1]", [2.0, 3.0], [12.0, 8.0 * math.log(2.0)]),
        ("atan2(x[0], x[1])", [1.0, 1.0], [0.5, -0.5]),
        ("hypot(x[0], x[1])", [3.0, 4.0], [0.6, 0.8]),
        ("-x[0]**2", [3.0], [-6.0]),
        ("2**-x[0]", [1.0], [-0.5 * math.log(2.0)]),
    ],
)
def test_gradient_conventions(text, x, want):
    g = grad(text, x)
    np.testing.assert_allclose(g, want, rtol=1e-14, atol=1e-15, err_msg=text)


def test_where_unchosen_branch_does_not_poison_gradient():
    # the unchosen branch is sqrt of a negative number: its local derivative is NaN, but it
    # receives no gradient, so x[0] gets exactly -1 from the chosen branch
    g = grad("where(x[0] > 0, sqrt(x[0]), -x[0])", [-4.0])
    np.testing.assert_array_equal(g, [-1.0])
    g = grad("where(x[0] > 0, x[0], log(x[0]))", [2.0])
    np.testing.assert_array_equal(g, [1.0])


def test_gradient_decision_and_constant_contexts():
    g = grad("quality*100 - price", [0.5, 20.0], variables=["quality", "price"])
    np.testing.assert_array_equal(g, [100.0, -1.0])
    g = grad("e*2 + pi*sin(pi)", [3.0, 3.0], variables=["e", "pi"])
    np.testing.assert_allclose(g, [2.0, math.sin(3.0) + 3.0 * math.cos(3.0)], rtol=1e-14)
    value, g = decido.Expression("2*pi").gradient([])
    assert value == 2 * math.pi and g.shape == (0,)


def test_gradient_is_repeatable():
    rng = np.random.default_rng(3)
    e = decido.Expression(ROSENBROCK, n=64)
    xs = rng.uniform(-2, 2, (5, 64))
    first = [e.gradient(x) for x in xs]
    for x, (v, g) in zip(xs, first, strict=True):
        v2, g2 = e.gradient(x)
        assert v2 == v and np.array_equal(g, g2)
