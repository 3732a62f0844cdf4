"""Constraints, integer and discrete variables, start points (issue 19), through the public
``decido.minimize``/``maximize`` on every engine that takes them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from engine_budgets import capped

import decido
from decido.optimize import problems

ENGINES = [e["id"] for e in decido.engines()]
CONSTRAINED = [e["id"] for e in decido.engines() if e["supports"]["constraints"]]
INTEGER = [e["id"] for e in decido.engines() if e["supports"]["integers"]]
WITH_X0 = [e["id"] for e in decido.engines() if e["supports"]["x0"]]

#: min x0 + x1 on the unit disk: -sqrt(2) at (-1/sqrt 2, -1/sqrt 2)
DISK = dict(objective="x[0] + x[1]", bounds=[[-2, 2]] * 2,
            constraints=["disk: x[0]**2 + x[1]**2 <= 1"])


def test_engines_say_what_they_support() -> None:
    table = {e["id"]: e["supports"] for e in decido.engines()}
    assert set(table) == set(ENGINES)
    assert all(s["constraints"] for s in table.values())
    assert not table["lbfgsb"]["integers"] and table["dss"]["integers"]
    assert not table["random"]["x0"] and table["cmaes"]["x0"] and table["dss"]["x0"]


@pytest.mark.parametrize("engine", CONSTRAINED)
def test_each_engine_solves_a_constrained_problem(engine: str) -> None:
    r = decido.minimize(DISK["objective"], DISK["bounds"], constraints=DISK["constraints"],
                        engine=engine, seed=3, max_evaluations=capped(engine, 6000))
    assert r.feasible and r.status != "infeasible"
    assert r.max_violation <= 1e-6
    assert r.fun == pytest.approx(-math.sqrt(2), abs=0.05 if engine == "random" else 2e-3)
    (c,) = r.constraints
    assert c["name"] == "disk" and c["violation"] <= 1e-6
    assert c["value"] == pytest.approx(r.x[0] ** 2 + r.x[1] ** 2 - 1, abs=1e-12)


@pytest.mark.parametrize("engine", INTEGER)
def test_each_engine_solves_an_integer_problem(engine: str) -> None:
    r = decido.minimize("sum((x - 2.3)**2)", [[-5.5, 5.5]] * 3, integers=[0, 1, 2],
                        engine=engine, seed=5, max_evaluations=capped(engine, 4000))
    assert np.all(r.x == np.round(r.x)) and np.all(np.abs(r.x) <= 5)
    if engine not in ("random", "nelder_mead"):
        assert list(r.x) == [2, 2, 2] and r.fun == pytest.approx(3 * 0.09)


@pytest.mark.parametrize("engine", INTEGER)
def test_each_engine_solves_a_discrete_problem_with_a_constraint(engine: str) -> None:
    # plate thicknesses in 1/16 steps, a strength constraint t * w >= 1.3
    sizes = [k / 16 for k in range(1, 33)]
    r = decido.minimize("t * w + 0.01 * w", variables=[
        {"name": "t", "values": sizes}, {"name": "w", "lower": 1, "upper": 4}],
        constraints=["strength: t * w >= 1.3"], engine=engine, seed=11,
        max_evaluations=capped(engine, 4000))
    assert r.variables is not None and r.variables["t"] in sizes
    assert 1 <= r.variables["w"] <= 4
    assert r.feasible and r.variables["t"] * r.variables["w"] >= 1.3 - 1e-6
    if engine != "random":
        assert r.fun == pytest.approx(1.3 + 0.01 * 1.3 / 2.0, rel=0.02)


def test_lbfgsb_solves_an_equality_constrained_problem_by_augmented_lagrangian() -> None:
    r = decido.minimize("x[0]**2 + 2*x[1]**2 + x[2]**2", [[-3, 3]] * 3,
                        constraints=["plane: x[0] + x[1] + x[2] == 1", "x[0] >= 0.5"],
                        engine="lbfgsb", seed=1)
    assert r.status == "converged" and r.feasible
    assert r.x == pytest.approx([0.5, 1 / 6, 1 / 3], abs=1e-5)  # Lagrange: lambda = 2/3
    assert [c["name"] for c in r.constraints] == ["plane", "c1"]
    assert r.gradients > 0


def test_maximize_and_callables_take_constraints() -> None:
    r = decido.maximize("x[0] * x[1]", [[0, 3]] * 2, constraints=["x[0] + x[1] <= 2"],
                        engine="cmaes", seed=2, max_evaluations=4000)
    assert r.feasible and r.fun == pytest.approx(1.0, abs=1e-4)
    r = decido.minimize(lambda x: float(x[0] + x[1]), DISK["bounds"],
                        constraints=DISK["constraints"], engine="dss", seed=2,
                        max_evaluations=3000)
    assert r.feasible and r.fun == pytest.approx(-math.sqrt(2), abs=1e-3)


def test_an_infeasible_problem_ends_infeasible_with_the_least_violating_point() -> None:
    r = decido.minimize("x[0]", [[0, 1]], constraints=["x[0] >= 2"], engine="de", seed=1,
                        max_evaluations=500)
    assert r.status == "infeasible" and not r.feasible and not r.success
    assert r.x[0] == pytest.approx(1.0, abs=5e-3)
    assert r.max_violation == pytest.approx(2 - r.x[0], abs=1e-12)
    assert "no feasible point" in r.message


def test_a_target_counts_only_when_feasible() -> None:
    r = decido.minimize("x[0]", [[-1, 1]], constraints=["x[0] >= 0.5"], target=0.6,
                        engine="de", seed=4, max_evaluations=3000)
    assert r.status == "target_reached" and r.feasible and 0.5 - 1e-6 <= r.fun <= 0.6


@pytest.mark.parametrize("engine", ["dss", "de", "lbfgsb", "cmaes"])
def test_a_constrained_run_replays_bit_for_bit(engine: str) -> None:
    runs = [decido.minimize("(x[0]-1)**2 + (x[1]-2)**2 + sin(3*x[2])", [[-3, 3]] * 3,
                            constraints=["x[0] + x[1] <= 1", "x[2]**2 == 0.25"],
                            engine=engine, seed=99, max_evaluations=3000) for _ in range(2)]
    assert runs[0].x.tobytes() == runs[1].x.tobytes()
    assert runs[0].fun == runs[1].fun and runs[0].history == runs[1].history
    assert runs[0].constraints == runs[1].constraints


@pytest.mark.parametrize("engine", WITH_X0)
def test_each_engine_starts_from_x0(engine: str) -> None:
    # the start point is the optimum: every engine reports it at once
    r = decido.minimize("sum((x - 0.3)**2)", [[-5, 5]] * 4, x0=[0.3] * 4, engine=engine,
                        seed=1, max_evaluations=200)
    assert r.fun == 0.0 and list(r.x) == [0.3] * 4
    assert r.history[0] == (1, 0.0)


def test_several_start_points_are_evaluated_and_the_best_wins() -> None:
    r = decido.minimize("sum((x - 1)**2)", [[-5, 5]] * 2, x0=[[4, 4], [1, 1.5], [-3, 0]],
                        engine="nelder_mead", seed=1, max_evaluations=3)
    assert r.evaluations == 3 and list(r.x) == [1, 1.5]


def test_what_an_engine_cannot_take_is_refused_naming_those_that_can() -> None:
    with pytest.raises(decido.EngineError, match="lbfgsb.*cannot take integer.*dss") as info:
        decido.minimize("sum(x**2)", [[-1, 1]] * 2, integers=[0], engine="lbfgsb")
    assert info.value.field == "integers"
    with pytest.raises(decido.EngineError, match="random.*cannot take a start point") as info:
        decido.minimize("sum(x**2)", [[-1, 1]] * 2, x0=[0, 0], engine="random")
    assert info.value.field == "x0"


def test_max_dims_counts_every_variable() -> None:
    variables = [{"name": f"v{k}", "lower": 0, "upper": 1} for k in range(101)]
    with pytest.raises(decido.EngineError, match="at most 100 dimensions, got 101"):
        decido.minimize("v0", variables=variables, engine="nelder_mead")


@pytest.mark.parametrize(("text", "code", "position"), [
    ("x[0] + x[1]", "syntax_error", 0),                 # not a comparison
    ("x[0] <= x[1] <= 1", "syntax_error", 13),          # a chain
    ("c: x[0] < 1", "syntax_error", 8),                 # strict
    ("x[0] != 1", "syntax_error", 5),
    ("x[0] <= 1 and x[1] <= 1", "syntax_error", 10),    # two conditions
    ("x[0] <= y", "unknown_name", 8),                   # an unknown name, in the rhs
    ("sqrt(q) >= 1", "unknown_name", 5),                # ... in the lhs
    ("x[0] <=", "empty_expression", 5),
    ("x[7] <= 1", "invalid_index", 2),
    ("x <= 1", "not_scalar", 0),
    ("sqrt(-1 - x[0]**2) <= 1", "constraint_nan", 0),   # NaN at every point tried
])
def test_bad_constraints_raise_with_their_position(text: str, code: str,
                                                   position: int) -> None:
    with pytest.raises(decido.ConstraintError) as info:
        decido.minimize("sum(x**2)", [[-1, 1]] * 2, constraints=["x[0] >= -1", text])
    err = info.value
    assert err.code == code and err.index == 1 and err.position == position, err
    assert err.text == text and str(err).startswith("constraints[1]: ")
    assert isinstance(err, decido.ExpressionError) and isinstance(err, ValueError)


def test_duplicate_constraint_names_are_refused() -> None:
    with pytest.raises(decido.ConstraintError, match="used by constraints\\[0\\]"):
        decido.minimize("x[0]", [[0, 1]], constraints=["a: x[0] <= 1", "a: x[0] >= 0"])


@pytest.mark.parametrize(("kwargs", "path", "code"), [
    ({"integers": [0, 0]}, ("integers", 1), "invalid_argument"),
    ({"integers": [5]}, ("integers", 0), "invalid_argument"),
    ({"integers": [True]}, ("integers", 0), "invalid_argument"),
    ({"integers": [1], "bounds": [[0, 1], [0.2, 0.8]]}, ("integers", 0), "invalid_bounds"),
    ({"x0": [0.5]}, ("x0",), "invalid_argument"),
    ({"x0": [0.5, 3]}, ("x0", 1), "invalid_argument"),
    ({"x0": [[0.5, 0.5], [0.5, float("nan")]]}, ("x0", 1, 1), "invalid_argument"),
    ({"x0": [0.5, 0.5], "integers": [0]}, ("x0", 0), "invalid_argument"),
    ({"constraint_tolerance": 0}, ("constraint_tolerance",), "invalid_argument"),
    ({"constraints": "x[0] <= 1"}, ("constraints",), "invalid_argument"),
    ({"constraints": [""]}, ("constraints", 0), "invalid_argument"),
    ({"variables": [{"name": "a", "values": []}], "bounds": None}, ("variables", 0),
     "invalid_argument"),
    ({"variables": [{"name": "a", "values": [1, float("nan")]}], "bounds": None},
     ("variables", 0), "invalid_argument"),
    ({"variables": [{"name": "a", "lower": 0.2, "upper": 0.7, "type": "integer"}],
      "bounds": None}, ("variables", 0), "invalid_bounds"),
    ({"variables": [{"name": "a", "lower": 0, "upper": 1}, {"name": "a", "values": [1]}],
      "bounds": None}, ("variables", 1), "invalid_argument"),
    ({"variables": [{"name": "1a", "lower": 0, "upper": 1}], "bounds": None},
     ("variables", 0), "invalid_argument"),
    ({"variables": [{"name": "a", "lower": 0, "upper": 1}]}, ("variables",),
     "invalid_argument"),
    ({"bounds": None}, ("bounds",), "required"),
])
def test_bad_arguments_are_listed_with_their_place(kwargs: dict, path: tuple, code: str
                                                   ) -> None:
    args = {"bounds": [[0, 1], [0, 1]], **kwargs}
    found = problems(args.pop("bounds"), **args)
    assert found and found[0].path == path and found[0].code == code, found
    with pytest.raises(decido.EngineError) as info:
        decido.minimize("1", **({"bounds": [[0, 1], [0, 1]]} | kwargs))
    assert info.value.code == code


def test_integer_bounds_are_rounded_inward_and_discrete_sets_sorted() -> None:
    r = decido.minimize("-x[0]", [[-0.5, 2.7]], integers=[0], engine="de", seed=1,
                        max_evaluations=300)
    assert r.x[0] == 2.0
    r = decido.minimize("(s - 2.2)**2", variables=[{"name": "s", "values": [3, 1, 2, 2]}],
                        engine="pso", seed=1, max_evaluations=200)
    assert r.variables == {"s": 2.0}


def test_a_separable_integer_problem_is_solved_coordinate_by_coordinate() -> None:
    n = 200
    r = decido.minimize("sum((x - 0.4)**2 * (1 + i))", [[-10, 10]] * n, integers=list(range(n)),
                        engine="dss", seed=1)
    assert r.status == "converged" and list(r.x) == [0.0] * n
