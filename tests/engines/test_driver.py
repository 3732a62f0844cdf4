"""The driver every engine runs in: budgets, time, target, callback, bounds,
NaN, exceptions, maximize, seeds, history and argument checks (DESIGN §3)."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from engine_budgets import capped

import decido
from decido import EngineError, ExpressionError

ENGINES = [e["id"] for e in decido.engines()]
SPHERE = "sum((x - 0.3)**2)"


class Recorder:
    """A callable objective that records every point it is asked."""

    def __init__(self, fn=lambda x: float(np.sum((x - 0.3) ** 2))):
        self.fn = fn
        self.points = []

    def __call__(self, x):
        self.points.append(np.array(x, copy=True))
        return self.fn(x)


def test_registry_lists_every_engine_with_options():
    infos = decido.engines()
    ids = [e["id"] for e in infos]
    assert ids[0] == "dss" and decido.default_engine() == "dss"
    for required in ("dss", "random"):
        assert required in ids
    for info in infos:
        assert set(info) == {"id", "name", "summary", "kind", "max_dims", "typical_budget",
                             "options", "supports"}
        assert info["typical_budget"] is None or info["typical_budget"] >= 1
        assert set(info["supports"]) == {"constraints", "integers", "x0", "objectives"}
        for opt in info["options"]:
            assert opt["min"] <= opt["default"] <= opt["max"], (info["id"], opt)
            assert opt["description"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("budget", [1, 2, 5, 37, 500])
def test_budget_is_never_exceeded_and_counted_exactly(engine, budget):
    budget = capped(engine, budget)
    f = Recorder()
    r = decido.minimize(f, [[-2, 2], [-1, 3], [0, 1]], engine=engine, max_evaluations=budget,
                        seed=3)
    assert r.evaluations == len(f.points) <= budget
    if r.status == "max_evaluations":
        assert r.evaluations == budget


@pytest.mark.parametrize("engine", ENGINES)
def test_every_point_lies_within_the_bounds(engine):
    bounds = np.array([[-2.0, -1.0], [0.5, 3.0], [-1e-3, 1e-3], [7.0, 7.0]])
    f = Recorder()
    r = decido.minimize(f, bounds, engine=engine, max_evaluations=capped(engine, 800), seed=5)
    pts = np.array(f.points)
    assert np.all(pts >= bounds[:, 0]) and np.all(pts <= bounds[:, 1])
    assert np.all(pts[:, 3] == 7.0)  # a degenerate interval fixes the coordinate
    assert np.all(r.x >= bounds[:, 0]) and np.all(r.x <= bounds[:, 1]) and r.x[3] == 7.0


@pytest.mark.parametrize("engine", ENGINES)
def test_same_seed_same_result_and_seed_is_reported(engine):
    kw = {"engine": engine, "max_evaluations": capped(engine, 600)}
    a = decido.minimize(SPHERE, [[-3, 3]] * 4, seed=42, **kw)
    b = decido.minimize(SPHERE, [[-3, 3]] * 4, seed=42, **kw)
    assert a.fun == b.fun and np.array_equal(a.x, b.x) and a.evaluations == b.evaluations
    c = decido.minimize(SPHERE, [[-3, 3]] * 4, **kw)
    replay = decido.minimize(SPHERE, [[-3, 3]] * 4, seed=c.seed, **kw)
    assert c.fun == replay.fun and np.array_equal(c.x, replay.x)


@pytest.mark.parametrize("engine", ENGINES)
def test_expression_and_callables_agree(engine):
    kw = {"engine": engine, "max_evaluations": capped(engine, 400), "seed": 9}
    bounds = [[-3, 3]] * 3
    by_text = decido.minimize(SPHERE, bounds, **kw)
    if engine == "dss":  # dss reads the expression's structure: a callable is a black box
        return
    if engine != "lbfgsb":  # the expression's run may end at its proven floor: the same
        kw["max_evaluations"] = by_text.evaluations  # run up to there
    by_call = decido.minimize(lambda x: float(np.sum((x - 0.3) ** 2)), bounds, **kw)
    by_vec = decido.minimize(
        lambda X: np.sum((X - 0.3) ** 2, axis=1), bounds, vectorized=True, **kw
    )
    if engine == "lbfgsb":  # exact AD gradients vs central differences
        assert by_call.fun == pytest.approx(by_text.fun, abs=1e-6)
        return
    assert by_text.fun == pytest.approx(by_call.fun, rel=1e-12, abs=1e-15)
    assert np.allclose(by_text.x, by_vec.x, rtol=1e-12, atol=1e-15)


def test_time_limit_stops_the_run():
    r = decido.minimize(SPHERE, [[-1, 1]] * 5, engine="random", max_evaluations=10**12,
                        time_limit=0.2, seed=1)
    assert r.status == "time_limit"
    assert r.elapsed < 5.0  # honoured, with a generous margin for a loaded machine
    slow = Recorder(lambda x: (sum(range(20000)), float(np.sum(x**2)))[1])
    r2 = decido.minimize(slow, [[-1, 1]] * 3, engine="random", max_evaluations=10**9,
                         time_limit=0.1, seed=1)
    assert r2.status == "time_limit" and len(slow.points) == r2.evaluations


def test_target_stops_once_reached():
    r = decido.minimize(SPHERE, [[-1, 1]] * 2, engine="random", target=0.05, seed=2,
                        max_evaluations=100000)
    assert r.status == "target_reached" and r.fun <= 0.05 and r.evaluations < 100000
    m = decido.maximize("-" + SPHERE, [[-1, 1]] * 2, engine="random", target=-0.05, seed=2)
    assert m.status == "target_reached" and m.fun >= -0.05


def test_callback_sees_progress_and_can_stop():
    seen = []

    def cb(progress):
        seen.append(progress)
        return len(seen) >= 3

    r = decido.minimize(SPHERE, [[-1, 1]] * 2, engine="random", callback=cb, seed=1,
                        max_evaluations=100000)
    assert r.status == "stopped" and len(seen) == 3 and r.iterations == 3
    assert set(seen[0]) == {"evaluations", "iterations", "best", "x", "elapsed"}
    assert seen[-1]["best"] == r.fun and np.array_equal(seen[-1]["x"], r.x)
    assert [p["evaluations"] for p in seen] == sorted(p["evaluations"] for p in seen)


def test_exceptions_propagate_unchanged():
    boom = KeyError("boom")

    def bad_objective(x):
        raise boom

    with pytest.raises(KeyError) as info:
        decido.minimize(bad_objective, [[0, 1]], engine="random")
    assert info.value is boom

    def bad_callback(progress):
        raise RuntimeError("stop it")

    with pytest.raises(RuntimeError, match="stop it"):
        decido.minimize(SPHERE, [[0, 1]], engine="random", callback=bad_callback)
    with pytest.raises(ValueError, match="must return 4 values"):
        decido.minimize(lambda X: np.zeros(3), [[0, 1]], engine="random", vectorized=True,
                        options={"batch": 4})
    with pytest.raises(TypeError):
        decido.minimize(lambda x: [1.0, 2.0], [[0, 1]], engine="random")


@pytest.mark.parametrize("engine", ENGINES)
def test_nan_counts_as_worse_than_any_number(engine):
    def f(x):
        return math.nan if x[0] < 0 else float(np.sum((x - 0.3) ** 2))

    budget = capped(engine, 1500)
    r = decido.minimize(f, [[-1, 1]] * 2, engine=engine, max_evaluations=budget, seed=4)
    assert math.isfinite(r.fun) and r.x[0] >= 0
    g = decido.minimize("where(x[0] < 0, 0/0, " + SPHERE + ")", [[-1, 1]] * 2, engine=engine,
                        max_evaluations=budget, seed=4)
    assert math.isfinite(g.fun)


@pytest.mark.parametrize("engine", ENGINES)
def test_maximize_reports_in_the_callers_sense(engine):
    r = decido.maximize("5 - " + SPHERE, [[-1, 1]] * 2, engine=engine,
                        max_evaluations=capped(engine, 3000), seed=8)
    assert r.goal == "maximize" and r.fun <= 5.0 and r.fun > 4.5
    assert all(b >= a for (_, a), (_, b) in zip(r.history, r.history[1:], strict=False))


@pytest.mark.parametrize("engine", ENGINES)
def test_one_dimension(engine):
    r = decido.minimize("(x[0] - 0.7)**2", [[-2, 2]], engine=engine,
                        max_evaluations=capped(engine, 2000), seed=1)
    assert abs(r.x[0] - 0.7) < 0.05


def test_history_records_improvements_and_the_end():
    r = decido.minimize(SPHERE, [[-1, 1]] * 3, engine="random", max_evaluations=5000, seed=1)
    evals = [e for e, _ in r.history]
    bests = [b for _, b in r.history]
    assert evals == sorted(evals) and evals[-1] == r.evaluations
    assert bests == sorted(bests, reverse=True) and bests[-1] == r.fun


@pytest.mark.parametrize(
    ("bounds", "field"),
    [
        ([], "bounds"),
        ([[1, 0]], "bounds[0]"),
        ([[0, 1], [0, math.inf]], "bounds[1]"),
        ([[0, 1], [math.nan, 1]], "bounds[1]"),
        ([[0, 1, 2]], "bounds"),
        ([0, 1], "bounds"),
        ([[-1e308, 1e308]], "bounds[0]"),
        ("abc", "bounds"),
    ],
)
def test_bad_bounds_are_rejected_before_any_work(bounds, field):
    f = Recorder()
    with pytest.raises(EngineError) as info:
        decido.minimize(f, bounds)
    assert info.value.code == "invalid_bounds" and info.value.field == field
    assert isinstance(info.value, ValueError) and not f.points


def test_bad_arguments_are_rejected_before_any_work():
    f = Recorder()
    cases = [
        ({"engine": "nope"}, "unknown_engine"),
        ({"engine": "random", "options": {"nope": 1}}, "invalid_option"),
        ({"engine": "random", "options": {"batch": 0}}, "invalid_option"),
        ({"engine": "random", "options": {"batch": 2.5}}, "invalid_option"),
        ({"engine": "random", "options": {"batch": "3"}}, "invalid_option"),
        ({"max_evaluations": 0}, "invalid_argument"),
        ({"max_evaluations": 2.5}, "invalid_argument"),
        ({"time_limit": -1}, "invalid_argument"),
        ({"target": math.nan}, "invalid_argument"),
        ({"seed": -1}, "invalid_argument"),
        ({"goal": "sideways"}, "invalid_argument"),
        ({"callback": 3}, "invalid_argument"),
    ]
    for kwargs, code in cases:
        with pytest.raises(EngineError) as info:
            decido.optimize(f, [[0, 1]], **kwargs)
        assert info.value.code == code, kwargs
    assert not f.points
    with pytest.raises(ExpressionError) as err:
        decido.minimize("x", [[0, 1]] * 3)
    assert err.value.code == "not_scalar"
    with pytest.raises(EngineError):
        decido.minimize(decido.Expression("sum(x)", n=2), [[0, 1]] * 3)
    with pytest.raises(EngineError):
        decido.minimize(42, [[0, 1]])


def test_the_engine_table_states_each_typical_budget():
    # docs/optimization.md, "Engines": the column is the registry's (engines.def)
    text = (Path(__file__).parents[2] / "docs" / "optimization.md").read_text()
    start = text.index("| id | what | typical budget | notes |")
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| ([\d,]+|any) \|", text[start:], re.M)
    stated = {engine: None if cell == "any" else int(cell.replace(",", ""))
              for engine, cell in rows}
    assert stated == {e["id"]: e["typical_budget"] for e in decido.engines()}
