"""``decido.optimize.problems``: the one check of optimization arguments lists every fault."""

from __future__ import annotations

import math

import numpy as np
import pytest

import decido
from decido.optimize import Problem, problems


def test_every_fault_is_listed_with_its_path() -> None:
    found = problems([[0, 1], [2, 1], [0, math.inf], [-1e308, 1e308]], engine="random",
                     options={"batch": 0, "nope": 1}, max_evaluations=0, time_limit=-1,
                     seed=-1, goal="up")
    assert [(p.path, p.code) for p in found] == [
        (("goal",), "invalid_argument"),
        (("bounds", 1), "invalid_bounds"), (("bounds", 2), "invalid_bounds"),
        (("bounds", 3), "invalid_bounds"),
        (("options", "batch"), "invalid_option"), (("options", "nope"), "invalid_option"),
        (("max_evaluations",), "invalid_argument"), (("time_limit",), "invalid_argument"),
        (("seed",), "invalid_argument"),
    ]
    assert problems([[0, 1]] * 3, engine="de", options={"popsize_factor": 10}) == []


@pytest.mark.parametrize("bounds", [
    [[0, 1], [3, 2], [0, math.nan]],
    [(0.0, 1.0)] * 40 + [(3.0, 2.0)],
    [[0, 1], [1e308, -1e308]] * 20,
])
def test_lists_and_arrays_give_the_same_faults(bounds: list) -> None:
    as_list = problems(bounds)
    assert as_list and as_list == problems(np.asarray(bounds, dtype=np.float64))
    with pytest.raises(decido.EngineError) as info:
        decido.minimize("sum(x)", bounds)
    assert info.value.field == as_list[0].field and info.value.code == "invalid_bounds"


def test_pointer_and_field() -> None:
    p = Problem(("options", "a/b~c"), "invalid_option", "m")
    assert p.pointer == "/options/a~1b~0c" and p.field == "options.a/b~c"
    q = Problem(("bounds", 3), "invalid_bounds", "m")
    assert (q.pointer, q.field) == ("/bounds/3", "bounds[3]")
    assert q.error().field == "bounds[3]" and Problem((), "x", "m").pointer == ""


def test_dimensions_beyond_the_engine() -> None:
    engine = next(e for e in decido.engines() if e["max_dims"] is not None)
    wide = [[0, 1]] * (engine["max_dims"] + 1)
    (fault,) = problems(wide, engine=engine["id"])
    assert fault.path == ("bounds",) and fault.code == "invalid_argument"


@pytest.mark.parametrize(("sent", "near"), [("nelder-mead", "'nelder_mead'"),
                                            ("L-BFGS-B", "'lbfgsb'"), ("CMAES", "'cmaes'"),
                                            ("cmaess", "'cmaes'")])
def test_an_unknown_engine_is_echoed_with_its_near_name(sent: str, near: str) -> None:
    with pytest.raises(decido.EngineError) as caught:
        decido.minimize("sum(x**2)", [[0, 1]], engine=sent)
    assert caught.value.code == "unknown_engine"
    assert str(caught.value.message).startswith(f"unknown engine {sent!r}; did you mean {near}?")


def test_an_engine_far_from_every_name_gets_the_list_only() -> None:
    (found,) = [p for p in problems([[0, 1]], engine="simplex") if p.code == "unknown_engine"]
    assert "did you mean" not in found.message and "(engines: dss, " in found.message
