"""dss on integer and discrete problems, and constraints that are only bounds (issue 19):
the neighbourhood search of integer coordinates, bounds tightened by one-variable linear
constraints, and the separable path kept for them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import decido

#: a 0-1 knapsack of 12 items (values, weights, capacity 40% of the total weight)
_RNG = np.random.default_rng(11)
_V = _RNG.integers(10, 100, 12)
_W = _RNG.integers(5, 60, 12)
_CAP = int(_W.sum() * 0.4)
KNAPSACK = "-(" + " + ".join(f"{a}*x[{j}]" for j, a in enumerate(_V)) + ")"
CAPACITY = " + ".join(f"{a}*x[{j}]" for j, a in enumerate(_W)) + f" <= {_CAP}"


def _knapsack_optimum() -> float:
    X = np.array(list(itertools.product([0, 1], repeat=12)))
    return float(-(X @ _V)[X @ _W <= _CAP].max())


def _knapsack(seed: int, neighbours: int) -> decido.OptimizeResult:
    return decido.minimize(KNAPSACK, [[0, 1]] * 12, integers=list(range(12)),
                           constraints=[CAPACITY], seed=seed, max_evaluations=1000,
                           options={"neighbours": neighbours})


def test_the_neighbourhood_search_finds_the_knapsack_optimum_more_often() -> None:
    # the population rounds alone (cells rounded to 0/1) stall one swap from the optimum;
    # moving one or two items at a time around the best point finds it
    best = _knapsack_optimum()
    hits = {nb: sum(_knapsack(seed, nb).fun == best for seed in range(8)) for nb in (0, 1)}
    assert hits[1] >= 6 and hits[1] > hits[0], hits
    for seed in range(8):
        r = _knapsack(seed, 1)
        assert r.feasible and r.fun >= best


def test_the_neighbourhood_search_replays_bit_for_bit() -> None:
    a, b = _knapsack(5, 1), _knapsack(5, 1)
    assert a.fun == b.fun and a.evaluations == b.evaluations
    assert np.array_equal(a.x, b.x) and a.history == b.history


def test_the_neighbourhood_option_is_validated() -> None:
    with pytest.raises(decido.EngineError):
        decido.minimize("x[0]", [[0, 1]], engine="dss", options={"neighbours": 2})


@pytest.mark.parametrize("constraint, lo, hi", [
    ("x[0] <= 3", -5.0, 3.0),
    ("2*x[0] >= 1", 0.5, 5.0),
    ("-x[0] + 1 >= 0", -5.0, 1.0),
    ("(x[0] - 1)/4 <= 0.5", -5.0, 3.0),
    ("x[0] == 2.5", 2.5, 2.5),
])
def test_a_one_variable_linear_constraint_is_a_bound(constraint: str, lo: float, hi: float
                                                     ) -> None:
    # every engine searches the tightened box only: even random search never leaves it
    seen: list[float] = []

    def f(x: np.ndarray) -> float:
        seen.append(float(x[0]))
        return float((x[0] - 10.0) ** 2 + (x[1] + 10.0) ** 2)

    r = decido.minimize(f, [[-5, 5]] * 2, engine="random", constraints=[constraint], seed=1,
                        max_evaluations=300)
    assert r.feasible
    assert min(seen) >= lo - 1e-12 and max(seen) <= hi + 1e-12
    assert min(seen) < lo + 0.5 and max(seen) > hi - 0.5


def test_a_nonlinear_or_two_variable_constraint_is_not_a_bound() -> None:
    for constraint in ("x[0]**2 <= 1", "x[0] + x[1] <= 1", "abs(x[0]) <= 1"):
        seen: list[float] = []

        def f(x: np.ndarray) -> float:
            seen.append(float(x[0]))  # noqa: B023
            return float(x[0] + x[1])

        decido.minimize(f, [[-5, 5]] * 2, engine="random", constraints=[constraint], seed=1,
                        max_evaluations=300)
        assert max(seen) > 2.0, constraint  # the engine still searches the whole box


def test_integer_and_discrete_coordinates_take_the_tightened_bounds() -> None:
    r = decido.minimize("-(t + k)", variables=[
        {"name": "t", "values": [0.5, 1.0, 1.5, 2.0, 2.5]},
        {"name": "k", "lower": 0, "upper": 10, "type": "integer"}],
        constraints=["t <= 1.7", "2*k <= 9"], seed=0, max_evaluations=200)
    assert r.feasible and r.variables == {"t": 1.5, "k": 4.0}


def test_a_separable_objective_with_bound_constraints_stays_separable() -> None:
    # Rastrigin is solved coordinate by coordinate (status converged, few evaluations) with
    # x[0] <= -1.5 and x[3] >= 2.5 as with its box alone; the answer sits on the new bounds'
    # nearest minima of each coordinate
    rastrigin = "10*n + sum(x**2 - 10*cos(2*pi*x))"
    box = [[-5.12, 5.12]] * 6
    free = decido.minimize(rastrigin, box, seed=0)
    r = decido.minimize(rastrigin, box, constraints=["x[0] <= -1.5", "x[3] >= 2.5"], seed=0)
    assert free.status == r.status == "converged"
    assert r.evaluations <= 2 * free.evaluations
    assert r.feasible
    assert r.x[0] == pytest.approx(-1.99, abs=0.01) and r.x[3] == pytest.approx(2.98, abs=0.01)
    assert np.allclose(np.delete(r.x, [0, 3]), 0.0, atol=1e-6)
    # a general constraint keeps the hybrid (the whole budget, no separable convergence)
    g = decido.minimize(rastrigin, box, constraints=["x[0]*x[1] <= 1"], seed=0,
                        max_evaluations=3000)
    assert g.status == "max_evaluations"


#: the pressure vessel (Coello 2000) with thicknesses in 1/16-inch steps (best known 6059.714)
VESSEL = dict(
    objective="0.6224*ts*r*l + 1.7781*th*r**2 + 3.1661*ts**2*l + 19.84*ts**2*r",
    variables=[{"name": "ts", "values": [0.0625 * k for k in range(1, 100)]},
               {"name": "th", "values": [0.0625 * k for k in range(1, 100)]},
               {"name": "r", "lower": 10, "upper": 200}, {"name": "l", "lower": 10, "upper": 200}],
    constraints=["ts >= 0.0193*r", "th >= 0.00954*r", "pi*r**2*l + 4/3*pi*r**3 >= 1296000",
                 "l <= 240"])


def test_moves_of_discrete_thicknesses_search_the_real_coordinates_again() -> None:
    # a thinner shell is only feasible with a smaller radius: around each move the real
    # coordinates are searched again (Nelder-Mead, the thicknesses held) before the move is
    # compared, so runs leave 7/8 inch for the best known 13/16
    def gaps(neighbours: int) -> list[float]:
        return [decido.minimize(**VESSEL, seed=seed, max_evaluations=5000,  # type: ignore[arg-type]
                                options={"neighbours": neighbours}).fun / 6059.714 - 1
                for seed in range(10)]
    off, on = gaps(0), gaps(1)
    assert float(np.median(on)) < 0.1 * float(np.median(off)), (on, off)
    assert sum(g < 1e-5 for g in on) >= 4


def test_a_mixed_constrained_run_replays_bit_for_bit() -> None:
    a = decido.minimize(**VESSEL, seed=4, max_evaluations=3000)  # type: ignore[arg-type]
    b = decido.minimize(**VESSEL, seed=4, max_evaluations=3000)  # type: ignore[arg-type]
    assert a.fun == b.fun and np.array_equal(a.x, b.x) and a.history == b.history
    assert a.feasible


def test_the_constrained_polish_solves_g01_by_augmented_lagrangian_rounds() -> None:
    # CEC 2006 G01 (optimum -15 at a vertex): dss's polish solves one subproblem after
    # another (new multipliers between them) instead of one per round
    names = " ".join(f"x{k}" for k in range(1, 14)).split()
    variables = [{"name": v, "lower": 0, "upper": 100 if k in (9, 10, 11) else 1}
                 for k, v in enumerate(names)]
    objective = ("5*(x1+x2+x3+x4) - 5*(x1**2+x2**2+x3**2+x4**2)"
                 " - (x5+x6+x7+x8+x9+x10+x11+x12+x13)")
    constraints = ["2*x1+2*x2+x10+x11 <= 10", "2*x1+2*x3+x10+x12 <= 10",
                   "2*x2+2*x3+x11+x12 <= 10", "-8*x1+x10 <= 0", "-8*x2+x11 <= 0",
                   "-8*x3+x12 <= 0", "-2*x4-x5+x10 <= 0", "-2*x6-x7+x11 <= 0",
                   "-2*x8-x9+x12 <= 0"]
    for seed in (0, 1):
        r = decido.minimize(objective, variables=variables, constraints=constraints, seed=seed,
                            max_evaluations=1500)
        assert r.feasible and r.fun == pytest.approx(-15.0, abs=1e-6)


#: CEC 2006 G13 (three equalities within 1e-4; best known 0.053941514)
G13 = dict(objective="exp(x[0]*x[1]*x[2]*x[3]*x[4])",
           bounds=[[-2.3, 2.3]] * 2 + [[-3.2, 3.2]] * 3,
           constraints=["sum(x**2) == 10", "x[1]*x[2] - 5*x[3]*x[4] == 0",
                        "x[0]**3 + x[1]**3 == -1"], constraint_tolerance=1e-4)


def test_equality_constrained_problems_get_polishes_from_random_points() -> None:
    # the population rounds hardly reach G13's thin feasible set; polishes from random
    # points find its best basin in most runs
    found = [decido.minimize(**G13, seed=seed, max_evaluations=5000)  # type: ignore[arg-type]
             for seed in range(6)]
    assert all(r.feasible for r in found)
    assert sum(r.fun < 0.053941514 * (1 + 1e-6) for r in found) >= 3


def test_a_polish_reaches_the_edge_of_an_equality_s_tolerance() -> None:
    # G11: x1**2 + (x2 - 1)**2 with x2 == x1**2 within 1e-4: 0.75 exactly, 0.7499 on the
    # tolerance's edge (the best known value), which the Lagrangian's band reaches
    r = decido.minimize("x[0]**2 + (x[1] - 1)**2", [[-1, 1]] * 2,
                        constraints=["x[1] - x[0]**2 == 0"], constraint_tolerance=1e-4,
                        engine="lbfgsb", x0=[0.5, 0.5], max_evaluations=2000)
    assert r.feasible and r.max_violation <= 1e-4
    assert r.fun == pytest.approx(0.7499, abs=1e-7)
