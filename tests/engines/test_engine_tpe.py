"""The ``tpe`` engine (multivariate Tree-structured Parzen Estimator, csrc/engine/tpe.c)
through ``decido.minimize``: better than random search, categorical (discrete) variables,
constraints, batches with a constant liar, replays. Its speed per trial is measured in
benchmarks/ (not here)."""

from __future__ import annotations

import numpy as np
import pytest

import decido

ENGINE = "tpe"
SHIFTED = "sum((x-0.7)**2)"


def run(objective, bounds=None, **kwargs):
    kwargs.setdefault("seed", 1)
    return decido.minimize(objective, bounds, engine=ENGINE, **kwargs)


def test_listed_with_its_options_and_what_it_takes():
    (info,) = [e for e in decido.engines() if e["id"] == ENGINE]
    defaults = {o["name"]: o["default"] for o in info["options"]}
    assert defaults == {"batch": 1, "startup": 0, "gamma": 0.1, "candidates": 24,
                        "min_bandwidth": 1e-9, "stop_on_convergence": 1}
    assert info["kind"] == "model"
    assert info["supports"] == {"constraints": True, "integers": True, "x0": True,
                                "objectives": False}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_better_than_random_search(seed):
    bounds = [(-3, 4)] * 4
    tpe = run(SHIFTED, bounds, max_evaluations=400, seed=seed)
    rnd = decido.minimize(SHIFTED, bounds, engine="random", max_evaluations=400, seed=seed)
    assert tpe.evaluations == 400
    assert tpe.fun < rnd.fun / 5, (tpe.fun, rnd.fun)


def test_categorical_choices():
    colours = [1.0, 2.0, 3.0, 4.0, 5.0]
    r = run("where(c == 4, 0, 1) + where(s == 2, 0, 1) + (z - 0.5)**2", variables=[
        {"name": "c", "values": colours}, {"name": "s", "values": [1.0, 2.0, 3.0]},
        {"name": "z", "lower": 0, "upper": 1}], max_evaluations=150)
    assert r.variables is not None
    assert r.variables["c"] == 4 and r.variables["s"] == 2 and r.fun < 0.01


def test_a_constrained_problem():
    r = run("x[0] + x[1]", [[-2, 2], [-2, 2]], constraints=["x[0]**2 + x[1]**2 <= 1"],
            max_evaluations=1500, seed=3)
    assert r.feasible and r.fun < -1.35


def test_a_batch_of_distinct_points_and_the_same_seed_replays():
    seen = []

    def f(x):
        seen.append(tuple(x))
        return float(np.sum((x - 0.3) ** 2))

    a = run(f, [(-1, 1)] * 3, max_evaluations=200, options={"batch": 8})
    assert a.iterations == 25 and len(set(seen)) == len(seen)
    b = run(f, [(-1, 1)] * 3, max_evaluations=200, options={"batch": 8})
    assert a.fun == b.fun and np.array_equal(a.x, b.x)


@pytest.mark.parametrize("options", [{"gamma": 0.9}, {"candidates": 0}])
def test_options_validated(options):
    with pytest.raises(decido.EngineError):
        run(SHIFTED, [(-1, 1)] * 2, max_evaluations=20, options=options)
