"""The ``auto`` engine: it chooses an engine by budget, dimension and variable kinds
(docs/optimization.md has the table), runs it, and the result says which
(``engine_chosen``)."""

from __future__ import annotations

import numpy as np
import pytest

import decido
from decido_service.runs.execution import result_of

SHIFTED = "sum((x-0.7)**2)"


@pytest.mark.parametrize(("dims", "budget", "chosen"), [
    # the thresholds' edges: 20 dimensions (at 60 evaluations: two runs of bo in 20-D at 200
    # took 125 s of the tests' wall time on a loaded machine), 200 evaluations
    (3, 100, "bo"), (20, 60, "bo"), (3, 200, "bo"), (21, 200, "cmaes"), (3, 201, "cmaes"),
    (5, 5000, "cmaes")])
def test_the_choice_by_budget_and_dimension(dims, budget, chosen):
    r = decido.minimize(SHIFTED, [(-1, 2)] * dims, engine="auto", max_evaluations=budget,
                        seed=1, options={"bo_budget": 200} if budget > 150 else None)
    assert r.engine == "auto" and r.engine_chosen == chosen
    # it is that engine, run with its defaults: the same seed gives the same run
    same = decido.minimize(SHIFTED, [(-1, 2)] * dims, engine=chosen, max_evaluations=budget,
                           seed=1)
    assert r.fun == same.fun and np.array_equal(r.x, same.x)


def test_mostly_categorical_problems_go_to_tpe():
    r = decido.minimize("where(a == 2, 0, 1) + where(b == 3, 0, 1) + z**2", variables=[
        {"name": "a", "values": [1, 2, 3]}, {"name": "b", "values": [1, 2, 3, 4]},
        {"name": "z", "lower": -1, "upper": 1}], engine="auto", max_evaluations=100, seed=2)
    assert r.engine_chosen == "tpe"


def test_the_thresholds_are_options():
    r = decido.minimize(SHIFTED, [(-1, 2)] * 3, engine="auto", max_evaluations=100, seed=1,
                        options={"bo_budget": 50})
    assert r.engine_chosen == "cmaes"


def test_several_objectives_go_to_bo_at_small_budgets_else_to_moea():
    two = ["x[0]", "1 - x[0] + x[1]**2"]
    r = decido.minimize(two, [[0, 1], [0, 1]], engine="auto", max_evaluations=400, seed=1)
    assert r.engine == "auto" and r.engine_chosen == "moea" and r.pareto
    r = decido.minimize(two, [[0, 1], [0, 1]], engine="auto", max_evaluations=200, seed=1)
    assert r.engine_chosen == "bo" and r.pareto and r.evaluations == 200
    r = decido.minimize(two, [[0, 1]] * 21, engine="auto", max_evaluations=100, seed=1)
    assert r.engine_chosen == "moea"  # beyond bo_dims


def test_several_objectives_without_an_engine_run_auto_up_to_200_evaluations():
    two = ["x[0]", "1 - x[0] + x[1]**2"]
    r = decido.minimize(two, [[0, 1], [0, 1]], max_evaluations=100, seed=1)
    assert r.engine == "auto" and r.engine_chosen == "bo"
    r = decido.minimize(two, [[0, 1], [0, 1]], max_evaluations=300, seed=1)
    assert r.engine == "moea"


def test_every_other_engine_names_itself():
    for info in decido.engines():
        if info["id"] in ("auto", "moea"):
            continue
        r = decido.minimize(SHIFTED, [(-1, 2)] * 2, engine=info["id"], max_evaluations=30,
                            seed=1)
        assert r.engine_chosen == info["id"]


def test_the_service_result_says_the_choice():
    r = decido.minimize(SHIFTED, [(-1, 2)] * 2, engine="auto", max_evaluations=30, seed=1)
    assert result_of(r).engine_chosen == "bo"


def test_minimize_without_an_engine_runs_auto_for_small_budgets():
    r = decido.minimize(SHIFTED, [(-1, 2)] * 3, max_evaluations=100, seed=1)
    assert r.engine == "auto" and r.engine_chosen == "bo" and r.evaluations <= 100
    at = decido.maximize("-" + SHIFTED, [(-1, 2)] * 3, max_evaluations=200, seed=1)
    assert at.engine == "auto" and at.engine_chosen == "bo"
    # an expression with a larger budget, or none: the default engine
    beyond = decido.minimize(SHIFTED, [(-1, 2)] * 3, max_evaluations=201, seed=1)
    assert beyond.engine == beyond.engine_chosen == decido.default_engine() == "dss"
    plain = decido.minimize(decido.Expression(SHIFTED, n=3), [(-1, 2)] * 3, seed=1)
    assert plain.engine == "dss"
    # a named engine is run whatever the budget
    assert decido.minimize(SHIFTED, [(-1, 2)] * 3, engine="cmaes", max_evaluations=50,
                           seed=1).engine_chosen == "cmaes"


def test_minimize_of_a_python_callable_without_a_budget_runs_auto():
    def f(x):
        return float(np.sum((x - 0.7) ** 2))

    r = decido.minimize(f, [(-1, 2)] * 3, seed=1)
    # auto chooses for the default budget (max(10000, 2000 n)): cmaes beyond 200
    assert r.engine == "auto" and r.engine_chosen == "cmaes" and r.fun < 1e-8
    small = decido.minimize(f, [(-1, 2)] * 3, seed=1, max_evaluations=60)
    assert small.engine == "auto" and small.engine_chosen == "bo" and small.evaluations <= 60
    big = decido.minimize(f, [(-1, 2)] * 3, seed=1, max_evaluations=5000)
    assert big.engine == "dss"
    vec = decido.minimize(lambda X: np.sum((X - 0.7) ** 2, axis=1), [(-1, 2)] * 2,
                          vectorized=True, seed=1, max_evaluations=40)
    assert vec.engine_chosen == "bo"
