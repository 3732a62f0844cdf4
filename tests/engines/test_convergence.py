"""Engines stop when they can tell they have converged (docs/optimization.md, "Convergence"):
a local engine by its own test, a population when it collapsed, a restart strategy when
consecutive restarts end at the same best; ``stop_on_convergence=False`` spends the budget."""

import numpy as np
import pytest
from engine_budgets import capped, small

import decido
from decido import EngineError
from decido.optimize import problems

ENGINES = [e["id"] for e in decido.engines()]
#: every engine that restarts (or is local): each stops on a sphere long before the budget
STOPPING = ["dss", "cmaes", "pso", "nelder_mead", "lbfgsb"]
BUDGET = 200_000


def sphere(x):
    return float(np.sum((x - 0.3) ** 2))


@pytest.mark.parametrize("engine", STOPPING)
@pytest.mark.parametrize("objective", ["sum((x - 0.3)**2)", sphere], ids=["expression", "callable"])
def test_a_solved_sphere_ends_converged_before_the_budget(engine, objective):
    r = decido.minimize(objective, [[-5, 5]] * 10, engine=engine, seed=3,
                        max_evaluations=BUDGET)
    assert r.status == "converged" and r.success, (r.status, r.evaluations)
    assert r.evaluations < BUDGET // 2
    assert r.fun < 1e-8
    # a compiled expression has a proven floor (0 here): the run may end on reaching it
    assert "convergence test" in r.message or "proven bound" in r.message


#: random and tpe sample (tpe resolves a minimum only as finely as its kernels), and moea is
#: the multi-objective engine (with one objective a plain genetic algorithm that stalls near
#: 1e-11 on the 2-D sphere): none stops on a sphere by convergence (docs/optimization.md,
#: "Convergence"; the test below pins moea's behaviour)
SAMPLING = ("random", "moea", "tpe")


@pytest.mark.parametrize("engine", [e for e in ENGINES if e not in SAMPLING])
def test_the_2d_sphere_stops_within_5000_evaluations(engine):
    # issue 31: a budget of 100,000 and no target; interval arithmetic proves f >= 0 over
    # the box, so a best value within 1e-10 of 0 cannot improve meaningfully.  An engine
    # built for a smaller budget (bo: typical_budget) runs at most that many evaluations
    # and need not end converged within them, only get there
    r = decido.minimize("sum(x**2)", [[-5, 5]] * 2, engine=engine, seed=1,
                        max_evaluations=capped(engine, 100_000))
    if not small(engine):
        assert r.status == "converged" and r.evaluations <= 5000, (r.evaluations, r.message)
    assert r.fun <= 1e-10


def test_a_maximization_stops_at_its_proven_ceiling():
    r = decido.maximize("5 - sum((x - 0.3)**2)", [[-5, 5]] * 2, engine="de", seed=2,
                        max_evaluations=100_000)
    assert r.status == "converged" and r.evaluations <= 5000 and "proven bound" in r.message
    assert 5 - r.fun <= 1e-14


def test_random_search_on_the_2d_sphere_spends_its_budget():
    # random search never gets within 1e-10 of the floor: it is the baseline that samples
    r = decido.minimize("sum(x**2)", [[-5, 5]] * 2, engine="random", seed=1,
                        max_evaluations=20_000)
    assert r.status == "max_evaluations" and r.evaluations == 20_000


def test_moea_on_one_objective_ends_converged_only_at_a_proven_floor():
    # a generational GA: its population never collapses, so it has no convergence test of
    # its own; on the 2-D sphere it stalls near 1e-11 (3.1e-8 after 20,000 evaluations,
    # 8.7e-11 after 100,000, 4.5e-11 after 400,000: seed 1) and spends the budget ...
    r = decido.minimize("sum(x**2)", [[-5, 5]] * 2, engine="moea", seed=1,
                        max_evaluations=20_000)
    assert r.status == "max_evaluations" and r.evaluations == 20_000 and r.fun < 1e-6
    # ... while a minimum it reaches (a corner of the box) is the proven floor: converged
    r = decido.minimize("sum(x)", [[0, 1]] * 3, engine="moea", seed=1,
                        max_evaluations=100_000)
    assert r.status == "converged" and "proven bound" in r.message
    assert r.evaluations < 100_000


def test_a_floor_is_not_a_target_when_the_minimum_is_above_it():
    # Rastrigin shifted up by 1: the interval floor is 1 - 1e-? below every value, the
    # minimum 1 is reached at x = 0 and ends the run; a bound that is not reached (a loose
    # one, as for Styblinski-Tang) never stops anything
    r = decido.minimize("1 + 10*n + sum(x**2 - 10*cos(2*pi*x))", [[-5.12, 5.12]] * 3,
                        engine="dss", seed=1, max_evaluations=50_000)
    assert r.status == "converged" and abs(r.fun - 1.0) <= 1e-9
    loose = decido.minimize("sum(x**4 - 16*x**2 + 5*x)/2", [[-5, 5]] * 2, engine="pso",
                            seed=1, max_evaluations=5_000)
    assert "proven bound" not in loose.message


def test_the_issue_example_sphere_found_at_once_stops_early():
    # the centre is the minimum: dss's first polish finds it at once; the run then ends
    r = decido.minimize(lambda x: float(np.sum(x**2)), [[-5, 5]] * 10, seed=1,
                        max_evaluations=BUDGET)
    assert r.fun == 0.0 and r.history[0][1] == 0.0
    assert r.status == "converged" and r.evaluations < BUDGET // 2


@pytest.mark.parametrize("engine", ENGINES)
def test_stop_on_convergence_false_spends_the_whole_budget(engine):
    budget = capped(engine, 3000)
    r = decido.minimize("sum((x - 0.3)**2)", [[-5, 5]] * 4, engine=engine, seed=3,
                        max_evaluations=budget, stop_on_convergence=False)
    assert r.status == "max_evaluations" and r.evaluations == budget
    # random, tpe (1,000 evaluations) and moea (a generational GA on one objective) only
    # approach the minimum
    assert r.fun < {"random": 1.0, "moea": 1e-3, "tpe": 1e-2}.get(engine, 1e-6)
    # the same through the engine's options, as the HTTP service passes them
    again = decido.minimize("sum((x - 0.3)**2)", [[-5, 5]] * 4, engine=engine, seed=3,
                            max_evaluations=budget, options={"stop_on_convergence": 0})
    assert again.evaluations == budget and again.fun == r.fun


def test_a_local_engine_that_converged_starts_again_from_random_points():
    r = decido.minimize("sum((x - 0.3)**2) + 0.1*sum(cos(9*x))", [[-2, 2]] * 3,
                        engine="lbfgsb", seed=5, max_evaluations=2000,
                        stop_on_convergence=False)
    once = decido.minimize("sum((x - 0.3)**2) + 0.1*sum(cos(9*x))", [[-2, 2]] * 3,
                           engine="lbfgsb", seed=5, max_evaluations=2000)
    assert once.status == "converged" and once.evaluations < 2000
    assert r.evaluations == 2000 and r.fun <= once.fun


def test_restarts_that_end_in_different_basins_go_on():
    # Rastrigin shifted off the centre (where nelder_mead starts, and would find the
    # minimum 0 = the proven floor at once): every descent ends in another local minimum
    r = decido.minimize("10*n + sum((x-1.3)**2 - 10*cos(2*pi*(x-1.3)))", [[-5.12, 5.12]] * 8,
                        engine="nelder_mead", seed=2, max_evaluations=20_000)
    assert r.status == "max_evaluations"


def test_every_engine_lists_the_option():
    for info in decido.engines():
        (opt,) = [o for o in info["options"] if o["name"] == "stop_on_convergence"]
        assert (opt["default"], opt["min"], opt["max"], opt["integer"]) == (1, 0, 1, True)


@pytest.mark.parametrize("value", [2, 0.5, -1])
def test_the_option_is_checked_like_any_other(value):
    with pytest.raises(EngineError) as info:
        decido.minimize("sum(x**2)", [[0, 1]], options={"stop_on_convergence": value})
    assert info.value.code == "invalid_option" and info.value.field == "options.stop_on_convergence"
    found = problems([[0, 1]], engine="pso", options={"stop_on_convergence": value})
    assert [p.pointer for p in found] == ["/options/stop_on_convergence"]


def test_the_keyword_takes_a_bool_only():
    with pytest.raises(EngineError) as info:
        decido.minimize("sum(x**2)", [[0, 1]], stop_on_convergence=1)
    assert info.value.field == "stop_on_convergence"
