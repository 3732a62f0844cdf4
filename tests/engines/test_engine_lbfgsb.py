"""Tests of the ``lbfgsb`` engine (projected L-BFGS) through ``decido.minimize``.

Accuracies stated here are what a projected L-BFGS with exact (AD) gradients
reaches from the box's centre: f - f* < 1e-10 on sphere, ellipsoid (condition
1e6) and Rosenbrock up to d = 100 within a few hundred to a few thousand
gradient evaluations (one evaluation each for expressions); with central
differences (callables, 2n + 1 evaluations per gradient) 1e-8.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import decido

ENGINE = "lbfgsb"
ROSEN = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"
ELLIPSOID = "sum(10**(6*(i-1)/(n-1))*x**2)"
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"


def run(objective, bounds, **kw):
    kw.setdefault("seed", 1)
    return decido.minimize(objective, bounds, engine=ENGINE, **kw)


def rosen_np(x):
    return float(np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2))


# ---- accuracy ----


@pytest.mark.parametrize(
    ("expr", "bounds", "budget"),
    [
        ("sum(x**2)", [(-5, 5)] * 10, 100),
        ("sum(x**2)", [(-3, 7)] * 10, 100),  # optimum off the centre
        ("sum((x-1.7)**2)", [(-3, 4)] * 10, 100),
        (ELLIPSOID, [(-3, 7)] * 10, 2_000),
        (ELLIPSOID, [(-3, 7)] * 30, 15_000),
    ],
)
def test_quadratics_converge(expr, bounds, budget):
    r = run(expr, bounds, max_evaluations=budget)
    assert r.status == "converged"
    assert r.fun < 1e-10
    assert r.evaluations <= budget


@pytest.mark.parametrize(("d", "budget"), [(2, 200), (10, 400), (100, 2_000)])
def test_rosenbrock(d, budget):
    r = run(ROSEN, [(-5, 5)] * d, max_evaluations=budget)
    assert r.status == "converged"
    assert r.fun < 1e-10
    np.testing.assert_allclose(r.x, 1.0, atol=1e-5)


def test_optimum_on_a_bound_is_exact():
    r = run("sum((x-7)**2)", [(-5, 5)] * 8, max_evaluations=100)
    assert r.status == "converged"
    assert np.all(r.x == 5.0)
    assert r.fun == 8 * 4.0
    # mixed: some coordinates at the lower bound, some at the upper, some inside
    r = run("sum((x-(i-3)*4)**2)", [(-5, 5)] * 5, max_evaluations=200)
    assert r.x[0] == -5.0 and r.x[4] == 5.0
    np.testing.assert_allclose(r.x[1:4], [-4.0, 0.0, 4.0], atol=1e-12)


def test_callable_finite_differences_converge():
    d = 10
    r = run(rosen_np, [(-5, 5)] * d, max_evaluations=20_000)
    assert r.status == "converged"
    assert r.fun < 1e-8
    np.testing.assert_allclose(r.x, 1.0, atol=1e-4)
    # a finite-difference gradient costs 2n + 1 evaluations
    assert r.gradients * (2 * d + 1) <= r.evaluations <= 20_000


def test_gradients_count_against_the_budget():
    # expressions: exact AD gradients, one evaluation each
    r = run(ROSEN, [(-5, 5)] * 10, max_evaluations=30)
    assert r.status == "max_evaluations"
    assert r.evaluations == r.gradients == 30
    # callables: central differences, 2n + 1 evaluations each
    calls = []

    def f(x):
        calls.append(1)
        return rosen_np(x)

    d = 4
    r = run(f, [(-5, 5)] * d, max_evaluations=200)
    assert r.status == "max_evaluations"
    assert r.evaluations == len(calls) == 200
    assert r.gradients == 200 // (2 * d + 1)


@pytest.mark.parametrize("d", [2, 10])
def test_as_good_as_scipy_lbfgsb(d):
    so = pytest.importorskip("scipy.optimize")

    def fg(x):
        g = np.zeros_like(x)
        t = x[1:] - x[:-1] ** 2
        g[1:] += 200 * t
        g[:-1] += -400 * x[:-1] * t - 2 * (1 - x[:-1])
        return rosen_np(x), g

    bounds = np.array([(-5.0, 5.0)] * d)
    ref = so.minimize(fg, bounds.mean(axis=1), jac=True, method="L-BFGS-B", bounds=bounds)
    r = run(ROSEN, bounds, max_evaluations=1_000)
    assert r.fun <= ref.fun + 1e-12
    assert r.evaluations <= 2 * ref.nfev + 20


# ---- budget, bounds, determinism ----


def test_exact_budget_with_restarts():
    calls = []

    def f(x):
        calls.append(x.copy())
        return float(np.sum(x**2 - 10 * np.cos(2 * np.pi * x)))

    r = run(f, [(-5.12, 5.12)] * 3, max_evaluations=1_001, options={"restarts": 1000})
    assert r.status == "max_evaluations"
    assert r.evaluations == len(calls) == 1_001
    r = run(RASTRIGIN, [(-5.12, 5.12)] * 3, max_evaluations=777, options={"restarts": 1000})
    assert r.evaluations == 777


@pytest.mark.parametrize("budget", [1, 2, 5, 12])
def test_tiny_budgets(budget):
    calls = []

    def f(x):
        calls.append(1)
        return float(np.sum(x**2))

    r = run(f, [(-1, 2)] * 5, max_evaluations=budget)
    assert r.evaluations == len(calls) == budget
    assert math.isfinite(r.fun)


def test_points_within_bounds():
    lo = np.array([-3.0, 0.5, -1e-3, 2.0])
    hi = np.array([4.0, 0.75, 1e-3, 9.0])
    seen = []

    def f(x):
        seen.append(x.copy())
        return float(np.sum((x - 10) ** 2) + np.sum(np.sin(5 * x)))

    r = run(f, np.c_[lo, hi], max_evaluations=3_000,
            options={"restarts": 100, "stop_on_convergence": 0})
    X = np.array(seen)
    assert len(X) == r.evaluations == 3_000
    assert np.all(X >= lo) and np.all(X <= hi)
    assert np.all(r.x >= lo) and np.all(r.x <= hi)


def test_deterministic():
    kw = {"max_evaluations": 3_000, "options": {"restarts": 50, "start": 1}}
    a = run(RASTRIGIN, [(-5.12, 5.12)] * 6, seed=5, **kw)
    b = run(RASTRIGIN, [(-5.12, 5.12)] * 6, seed=5, **kw)
    c = run(RASTRIGIN, [(-5.12, 5.12)] * 6, seed=6, **kw)
    assert a.x.tobytes() == b.x.tobytes() and a.fun == b.fun
    assert a.history == b.history
    assert a.x.tobytes() != c.x.tobytes() or a.history != c.history
    # from the centre, without restarts, the seed plays no part
    d = run(ROSEN, [(-5, 5)] * 4, seed=1)
    e = run(ROSEN, [(-5, 5)] * 4, seed=2)
    assert d.x.tobytes() == e.x.tobytes()


def test_restarts_use_the_budget_and_help():
    bounds = [(-5.12, 5.12)] * 5
    local = run(RASTRIGIN, bounds, max_evaluations=5_000, options={"start": 1})
    multi = run(RASTRIGIN, bounds, max_evaluations=5_000, options={"start": 1, "restarts": 10**6})
    assert local.status == "converged" and local.evaluations < 5_000
    assert multi.status == "max_evaluations" and multi.evaluations == 5_000
    assert multi.fun <= local.fun


# ---- options ----


def test_option_defaults_listed():
    info = next(e for e in decido.engines() if e["id"] == ENGINE)
    opts = {o["name"]: o for o in info["options"]}
    assert {k: v["default"] for k, v in opts.items()} == {
        "memory": 10,
        "pgtol": 1e-10,
        "ftol": 1e-15,
        "restarts": 0,
        "start": 0,
        "max_linesearch": 30,
        "stop_on_convergence": 1,
    }
    assert (opts["memory"]["min"], opts["memory"]["max"]) == (1, 100)
    assert (opts["restarts"]["min"], opts["restarts"]["max"]) == (0, 1_000_000)
    assert (opts["max_linesearch"]["min"], opts["max_linesearch"]["max"]) == (1, 100)
    assert info["kind"] == "local"


@pytest.mark.parametrize(
    "options",
    [
        {"nope": 1},
        {"memory": 0},
        {"memory": 101},
        {"memory": 2.5},
        {"restarts": -1},
        {"start": 2},
        {"max_linesearch": 0},
        {"pgtol": -1e-3},
        {"ftol": float("nan")},
    ],
)
def test_bad_options(options):
    with pytest.raises(decido.EngineError):
        run("sum(x**2)", [(-1, 1)] * 2, options=options)


def test_options_take_effect():
    loose = run(ROSEN, [(-5, 5)] * 10, options={"pgtol": 1e-2, "ftol": 1e-3})
    tight = run(ROSEN, [(-5, 5)] * 10)
    assert loose.status == "converged" and loose.evaluations < tight.evaluations
    m1 = run(ROSEN, [(-5, 5)] * 10, options={"memory": 1}, max_evaluations=5_000)
    assert m1.fun < 1e-6
    assert m1.evaluations != tight.evaluations


# ---- objectives of every kind ----


def test_callable_and_vectorized_agree_with_expression():
    bounds = [(-3, 4)] * 5
    scalar = run(lambda x: float(np.sum((x - 1.7) ** 2) + x[0] * x[1]), bounds)
    vector = run(
        lambda X: np.sum((X - 1.7) ** 2, axis=1) + X[:, 0] * X[:, 1], bounds, vectorized=True
    )
    expr = run("sum((x-1.7)**2) + x[0]*x[1]", bounds)
    # the same finite differences: bit-identical
    assert scalar.x.tobytes() == vector.x.tobytes() and scalar.fun == vector.fun
    assert scalar.evaluations == vector.evaluations
    # the expression gets exact gradients: the same minimizer, to FD accuracy
    np.testing.assert_allclose(scalar.x, expr.x, atol=1e-6)
    assert abs(scalar.fun - expr.fun) < 1e-9


def test_nan_regions_survive():
    # NaN around the centre (the first start) and in a slab the path crosses
    def f(x):
        if np.max(np.abs(x)) < 1 or 2.5 < x[0] < 2.6:
            return math.nan
        return float(np.sum((x - 3) ** 2))

    r = run(f, [(-5, 5)] * 3, max_evaluations=5_000)
    assert math.isfinite(r.fun) and r.fun < 1e-6
    r = run("sum(sqrt(x - 1)) + sum((x-2)**2)", [(-5, 5)] * 3, max_evaluations=2_000)
    assert math.isfinite(r.fun) and np.all(r.x >= 1)


def test_one_dimension():
    r = run("(x[0]-0.3)**2 + 1", [(-2, 9)], max_evaluations=100)
    assert r.status == "converged"
    assert abs(r.x[0] - 0.3) < 1e-8 and r.fun - 1 < 1e-15


def test_fixed_coordinates():
    bounds = [(-5, 5), (0.25, 0.25), (-5, 5), (3, 3)]
    r = run(ROSEN, bounds, max_evaluations=2_000)
    assert r.x[1] == 0.25 and r.x[3] == 3.0
    assert r.status == "converged"
    seen = []

    def f(x):
        seen.append(x.copy())
        return float(np.sum((x - 1) ** 2))

    run(f, bounds, max_evaluations=500)
    X = np.array(seen)
    assert np.all(X[:, 1] == 0.25) and np.all(X[:, 3] == 3.0)
    all_fixed = run("sum(x**2)", [(1, 1), (2, 2)], max_evaluations=50)
    assert all_fixed.fun == 5.0 and all_fixed.evaluations == 1


def test_maximize():
    r = decido.maximize(
        "-sum((x-1.5)**2) + 4", [(-5, 5)] * 6, engine=ENGINE, seed=1, max_evaluations=200
    )
    assert r.status == "converged"
    assert abs(r.fun - 4) < 1e-12
    np.testing.assert_allclose(r.x, 1.5, atol=1e-7)
    # maximum on a bound
    r = decido.maximize("sum(x)", [(-5, 5)] * 3, engine=ENGINE, seed=1, max_evaluations=50)
    np.testing.assert_array_equal(r.x, 5.0)
