"""The ``cmaes`` engine (BIPOP-CMA-ES, IPOP as an option, sep-CMA-ES above 100 dimensions) through
``decido.minimize``.

Accuracies asserted below (f - f* < tol, seeds 1 and 2, budgets in evaluations) are
what CMA-ES with its defaults (lambda = 4 + 3 ln n, sigma0 = 0.3 of the box, active
weights, BIPOP restarts) reaches; over seeds 0..19 the worst value measured is at least 1e3
times below the tolerance:

- sphere ``sum(x**2)`` on [-5, 5]: d=2, 2,000 -> 1e-12; d=10, 10,000 -> 1e-11
  (1e-8 after about 1,500 evaluations, as pycma); d=100 (full covariance), 20,000
  -> 1e-8 (1e-8 after about 12,500).
- shifted sphere ``sum((x-1.7)**2)`` on [-3, 4] (optimum off centre): d=2 and 10.
- ellipsoid (condition 1e6) on [-5, 5]: d=2, 3,000 -> 1e-12; d=10, 20,000 -> 1e-11
  (1e-8 after about 4,300; pycma 3,900); d=150 (automatic sep-CMA), 60,000 -> 1e-8.
- Rosenbrock on [-5, 5]: d=2, 3,000 -> 1e-12; d=10, 20,000 -> 1e-11 (1e-8 after
  about 5,700; pycma 5,400).
- an optimum on the boundary: ``sum((x-5)**2)`` on [-3, 4] -> n (x = 4).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import decido

ENGINE = "cmaes"
SPHERE = "sum(x**2)"
SHIFTED = "sum((x-1.7)**2)"
ELLIPSOID = "sum(10**(6*(i-1)/(n-1))*x**2)"
ROSENBROCK = "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)"
RASTRIGIN = "10*n + sum(x**2 - 10*cos(2*pi*x))"


def run(objective, bounds, **kwargs):
    kwargs.setdefault("seed", 1)
    return decido.minimize(objective, bounds, engine=ENGINE, **kwargs)


@pytest.mark.parametrize(
    ("expr", "d", "lo", "hi", "budget", "fstar", "tol"),
    [
        (SPHERE, 2, -5, 5, 2_000, 0.0, 1e-12),
        (SPHERE, 10, -5, 5, 10_000, 0.0, 1e-11),
        (SHIFTED, 2, -3, 4, 2_000, 0.0, 1e-12),
        (SHIFTED, 10, -3, 4, 10_000, 0.0, 1e-11),
        (ELLIPSOID, 2, -5, 5, 3_000, 0.0, 1e-12),
        (ELLIPSOID, 10, -5, 5, 20_000, 0.0, 1e-11),
        (ROSENBROCK, 2, -5, 5, 3_000, 0.0, 1e-12),
        (ROSENBROCK, 10, -5, 5, 20_000, 0.0, 1e-11),
        ("sum((x-5)**2)", 5, -3, 4, 5_000, 5.0, 1e-12),
    ],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_accuracy(expr, d, lo, hi, budget, fstar, tol, seed):
    r = run(expr, [(lo, hi)] * d, max_evaluations=budget, seed=seed)
    assert r.fun - fstar < tol, (expr, d, r.fun)
    assert r.evaluations <= budget
    assert np.all(r.x >= lo) and np.all(r.x <= hi)


def test_high_dimension():
    # d = 100: full covariance (eigendecomposition every few generations)
    r = run(SPHERE, [(-5, 5)] * 100, max_evaluations=20_000)
    assert r.fun < 1e-8
    # d = 150: separable covariance chosen automatically; the ellipsoid is separable
    r = run(ELLIPSOID, [(-5, 5)] * 150, max_evaluations=60_000)
    assert r.fun < 1e-8


def test_diagonal_option():
    r = run(ELLIPSOID, [(-5, 5)] * 10, max_evaluations=20_000, options={"diagonal": 1})
    assert r.fun < 1e-11
    full = run(ELLIPSOID, [(-5, 5)] * 10, max_evaluations=20_000)
    assert r.x.tolist() != full.x.tolist()


def test_beats_random_on_rastrigin():
    bounds = [(-5.12, 5.12)] * 10
    cma = [run(RASTRIGIN, bounds, max_evaluations=20_000, seed=s).fun for s in range(3)]
    rnd = [
        decido.minimize(RASTRIGIN, bounds, engine="random", max_evaluations=20_000, seed=s).fun
        for s in range(3)
    ]
    assert np.median(cma) < 8.0 < min(rnd)


def test_deterministic():
    bounds = [(-5, 5)] * 6
    a = run(ROSENBROCK, bounds, max_evaluations=3_000, seed=7)
    b = run(ROSENBROCK, bounds, max_evaluations=3_000, seed=7)
    c = run(ROSENBROCK, bounds, max_evaluations=3_000, seed=8)
    assert a.x.tobytes() == b.x.tobytes() and a.fun == b.fun
    assert a.history == b.history and a.iterations == b.iterations
    assert a.x.tobytes() != c.x.tobytes()


def test_exact_budget_and_bounds():
    lo = np.array([-3.0, 0.5, -1.0, 2.0])
    hi = np.array([4.0, 0.75, 10.0, 2.5])
    calls, values = [], []

    def f(x):
        calls.append(np.array(x, copy=True))
        values.append(float(np.sum((x + 2.0) ** 2) + np.sum(np.cos(7 * x))))  # optimum outside
        return values[-1]

    r = run(f, np.c_[lo, hi], max_evaluations=1_234)
    pts = np.array(calls)
    assert r.evaluations == len(calls) == 1_234
    assert r.status == "max_evaluations"
    assert np.all(pts >= lo) and np.all(pts <= hi)
    assert np.all(r.x >= lo) and np.all(r.x <= hi)
    assert r.fun == min(values)


@pytest.mark.parametrize("budget", [1, 2, 5, 13])
def test_tiny_budgets(budget):
    r = run(SPHERE, [(-5, 5)] * 3, max_evaluations=budget)
    assert r.evaluations == budget and math.isfinite(r.fun)


def sphere(x):
    return float(np.sum(x**2))


def test_convergence_and_restarts():
    # a callable: the expression would end at its proven floor during the first run
    bounds = [(-5, 5)] * 4
    one = run(sphere, bounds, max_evaluations=100_000, options={"restarts": 0})
    assert one.status == "converged" and one.evaluations < 5_000 and one.fun < 1e-12
    # lambda0 = 8 in 4-D; incpopsize 1 keeps it, so every generation costs 8
    flat = run(sphere, bounds, max_evaluations=100_000, options={"restarts": 2, "incpopsize": 1})
    assert flat.status == "converged" and flat.evaluations == 8 * flat.iterations
    # IPOP (schedule 1): populations 8, 16, 32 -> more than 8 evaluations per generation
    ipop = run(sphere, bounds, max_evaluations=100_000, options={"restarts": 2, "schedule": 1})
    assert ipop.status == "converged" and ipop.evaluations > 8 * ipop.iterations
    assert ipop.evaluations > flat.evaluations
    # BIPOP (the default): 8 (counted as a small run), a large one (16), then small runs
    # (8 to 16; they do not count as restarts) until they have spent as much as the large
    # ones: fewer evaluations per generation than IPOP
    bipop = run(sphere, bounds, max_evaluations=100_000, options={"restarts": 2})
    assert bipop.status == "converged" and bipop.evaluations > 8 * bipop.iterations
    assert bipop.evaluations / bipop.iterations < ipop.evaluations / ipop.iterations
    # default: 9 restarts, then converged (the budget is not the limit)
    full = run(sphere, bounds, max_evaluations=1_000_000)
    assert full.status == "converged" and full.evaluations < 1_000_000


def test_popsize_and_sigma0():
    r = run(SPHERE, [(-5, 5)] * 3, max_evaluations=50_000, options={"popsize": 20, "restarts": 0})
    assert r.evaluations == 20 * r.iterations and r.fun < 1e-12
    r = run(SHIFTED, [(-3, 4)] * 3, max_evaluations=5_000, options={"sigma0": 0.01})
    assert r.fun < 1e-10


@pytest.mark.parametrize(
    "options",
    [
        {"nope": 1},
        {"popsize": -1},
        {"popsize": 2.5},
        {"popsize": 100_001},
        {"sigma0": 0},
        {"sigma0": 1.5},
        {"restarts": 101},
        {"restarts": -1},
        {"incpopsize": 0.5},
        {"incpopsize": 11},
        {"diagonal": 2},
    ],
)
def test_options_validated(options):
    with pytest.raises(decido.EngineError):
        run(SPHERE, [(-1, 1)] * 2, max_evaluations=100, options=options)


def test_option_defaults():
    (info,) = [e for e in decido.engines() if e["id"] == ENGINE]
    defaults = {o["name"]: o["default"] for o in info["options"]}
    assert defaults == {"popsize": 0, "sigma0": 0.3, "restarts": 9, "incpopsize": 2, "diagonal": 0,
                        "schedule": 0, "stop_on_convergence": 1}
    assert info["max_dims"] is None
    assert "BIPOP" in info["name"] and "BIPOP" in info["summary"]
    (schedule,) = [o for o in info["options"] if o["name"] == "schedule"]
    assert schedule["description"].startswith("restart schedule: 0 = BIPOP (the default")


def populations(schedule, seed):
    """The result and the population of every generation (evaluations per iteration) of a
    run on Rastrigin in 4-D, where restarts never agree: the restart schedule shows."""
    sizes = []
    done = [0]

    def record(progress):
        sizes.append(progress["evaluations"] - done[0])
        done[0] = progress["evaluations"]

    options = {} if schedule is None else {"schedule": schedule}
    r = run(
        RASTRIGIN,
        [(-5.12, 5.12)] * 4,
        max_evaluations=60_000,
        seed=seed,
        options=options,
        callback=record,
    )
    return r, sizes


def runs_of(sizes):
    """Consecutive generations of equal population, as (population, generations)."""
    out: list[list[int]] = []
    for lam in sizes:
        if out and out[-1][0] == lam:
            out[-1][1] += 1
        else:
            out.append([lam, 1])
    return [(lam, g) for lam, g in out]


@pytest.mark.parametrize("seed", [1, 2])
def test_bipop_small_regime_on_rastrigin(seed):
    r, sizes = populations(None, seed)
    # every generation is reported but the one the budget cut
    assert r.evaluations == 60_000 and 0 <= 60_000 - sum(sizes) < 2 * max(sizes)
    runs = runs_of(sizes[:-1])  # the last generation may be cut by the budget
    lams = [lam for lam, _ in runs]
    # the default run (lambda = 4 + floor(3 ln 4) = 8) first, then a large one (16)
    assert lams[:2] == [8, 16]
    large = [8]
    small = []
    for lam in lams[1:]:
        if lam == 2 * large[-1]:
            large.append(lam)
        else:  # a small run: between the default and the last large population
            assert 8 <= lam <= large[-1]
            small.append(lam)
    assert len(large) >= 4 and len(small) >= 3
    # small runs between the first two large ones, with a population below the large one
    first16, first32 = lams.index(16), lams.index(32)
    assert first32 > first16 + 1 and all(lam <= 16 for lam in lams[first16 + 1 : first32])
    # IPOP on the same problem only doubles
    _, ipop = populations(1, seed)
    ipop_lams = [lam for lam, _ in runs_of(ipop[:-1])]
    assert ipop_lams == [8 * 2**k for k in range(len(ipop_lams))]
    # and BIPOP finds Rastrigin's global minimum
    assert r.fun < 1e-8


def test_bipop_replays_bit_for_bit():
    a, sa = populations(None, 5)
    b, sb = populations(None, 5)
    assert sa == sb and a.x.tobytes() == b.x.tobytes() and a.fun == b.fun
    assert a.history == b.history
    c, sc = populations(None, 6)
    assert sc != sa


def test_callables_match_expression():
    bounds = [(-3, 4)] * 4

    def f(x):
        s = 0.0
        for v in x:
            s += (v - 1.7) ** 2
        return s

    def fv(X):
        return np.array([f(row) for row in X])

    a = run(SHIFTED, bounds, max_evaluations=1_500, seed=3)
    # the expression's run may end at its proven floor: the same run up to there
    b = run(f, bounds, max_evaluations=a.evaluations, seed=3)
    c = run(fv, bounds, max_evaluations=a.evaluations, seed=3, vectorized=True)
    assert a.x.tobytes() == b.x.tobytes() == c.x.tobytes()
    assert a.fun == b.fun == c.fun and a.evaluations == b.evaluations == c.evaluations


def test_nan_regions():
    def f(x):
        if x[0] > 1.0 or x[1] < -4.0:
            return float("nan")
        return float(np.sum((x - 0.5) ** 2))

    r = run(f, [(-5, 5)] * 3, max_evaluations=5_000)
    assert r.fun < 1e-10
    r = run(lambda x: float("nan"), [(-5, 5)] * 3, max_evaluations=300)
    assert r.evaluations == 300 and math.isnan(r.fun)


def test_one_dimension():
    r = run("(x[0]-0.3)**2", [(-2, 2)], max_evaluations=1_000)
    assert r.fun < 1e-14 and abs(r.x[0] - 0.3) < 1e-7


def test_fixed_coordinates():
    r = run(SHIFTED, [(-3, 4), (2, 2), (-3, 4), (0.25, 0.25)], max_evaluations=3_000)
    assert r.x[1] == 2 and r.x[3] == 0.25
    assert r.fun - ((2 - 1.7) ** 2 + (0.25 - 1.7) ** 2) < 1e-12
    every = run(SPHERE, [(1, 1), (2, 2)], max_evaluations=50)
    assert every.fun == 5 and every.status == "converged"


def test_maximize():
    r = decido.maximize(
        "-sum((x-1)**2) + 3", [(-5, 5)] * 5, engine=ENGINE, max_evaluations=5_000, seed=1
    )
    assert 3 - r.fun < 1e-12 and np.allclose(r.x, 1, atol=1e-6)
