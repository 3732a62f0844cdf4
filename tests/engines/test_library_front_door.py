"""The library's front door: ``decido.minimize``/``maximize`` show their real keywords,
``decido.option_table`` is public and does what the docs say, and one goal rule
(``min``/``max`` aliases of ``minimize``/``maximize``, answers in the long form) and one
weight rule (a criterion's weight defaults to 1) hold on every surface of the library."""

from __future__ import annotations

import inspect
import typing

import pytest

import decido
from decido._run_args import FrontKeywords, RunKeywords
from decido.goals import GOAL_NAMES, goal_name
from decido.pareto import optimize_front

BOX = [[-1.0, 2.0]] * 2


def _keywords(function: typing.Callable[..., typing.Any]) -> dict[str, inspect.Parameter]:
    return {name: p for name, p in inspect.signature(function).parameters.items()
            if p.kind is p.KEYWORD_ONLY}


@pytest.mark.parametrize("function", [decido.minimize, decido.maximize])
def test_minimize_and_maximize_show_their_keywords(function: typing.Any) -> None:
    shown = inspect.signature(function)
    assert list(shown.parameters)[:2] == ["objective", "bounds"]
    single, front = _keywords(decido.optimize), _keywords(optimize_front)
    expected = [n for n in single if n != "goal"] + [n for n in front if n not in single]
    assert list(_keywords(function)) == expected  # not **kwargs
    assert "goal" not in shown.parameters and "kwargs" not in shown.parameters
    for name, parameter in _keywords(function).items():
        origin = single.get(name) or front[name]
        assert (parameter.default, parameter.annotation) == (origin.default, origin.annotation)
    assert "max_evaluations: 'int | None' = None" in str(shown)
    assert "reference_point" in str(shown) and "archive_size" in str(shown)


def test_the_keyword_types_are_optimizes_own() -> None:
    """RunKeywords and FrontKeywords (the static types of the keywords) are exactly the
    keyword parameters of optimize and optimize_front, goal aside, with the same types."""
    for typed, function in ((RunKeywords, decido.optimize), (FrontKeywords, optimize_front)):
        own = {n: p.annotation for n, p in _keywords(function).items() if n != "goal"}
        typed_own = {n: getattr(t, "__forward_arg__", t)
                     for n, t in typed.__annotations__.items()}
        assert typed_own == own, function.__name__
        assert not typed.__required_keys__


def test_the_shown_keywords_work() -> None:
    r = decido.maximize("-(x[0] - 1)**2 - x[1]**2", BOX, engine="de", seed=4,
                        max_evaluations=3000)
    assert r.goal == "maximize" and r.engine == "de" and r.seed == 4 and r.fun > -1e-4
    front = decido.minimize(["x[0]**2", "(x[0] - 1)**2"], [[-2.0, 2.0]], seed=1,
                            max_evaluations=2000, archive_size=10)
    assert isinstance(front, decido.ParetoResult) and 0 < len(front.pareto) <= 10
    with pytest.raises(TypeError, match="enigne"):
        decido.minimize("x[0]", BOX, enigne="de")  # type: ignore[call-overload]


def test_option_table_is_public_and_feeds_decide() -> None:
    assert "option_table" in decido.__all__
    assert decido.option_table.__name__ == "decido.option_table"
    options, problems = decido.option_table.options_from_csv(
        "id,price,quality\nA,10,5\nB,12,9\nC,11,7\n")
    assert problems == [] and [o["id"] for o in options] == ["A", "B", "C"]
    answer = decido.decide({"options": options, "method": "topsis", "criteria": [
        {"attribute": "price", "goal": "min"}, {"attribute": "quality", "goal": "max"}]})
    assert answer["status"] == "ok" and answer["ranking"][0]["id"] in {"A", "B", "C"}


def test_the_goal_rule() -> None:
    assert GOAL_NAMES == ("minimize", "maximize", "min", "max")
    assert [goal_name(g) for g in GOAL_NAMES] == ["minimize", "maximize"] * 2
    assert [goal_name(g) for g in ("Max", "up", None, 1, "")] == [None] * 5


@pytest.mark.parametrize(("short", "long"), [("min", "minimize"), ("max", "maximize")])
def test_optimize_takes_the_short_goals_and_answers_the_long(short: str, long: str) -> None:
    r = decido.optimize("x[0] - x[1]", BOX, goal=short, seed=2, max_evaluations=2000)
    assert r.goal == long
    assert r.fun == decido.optimize("x[0] - x[1]", BOX, goal=long, seed=2,
                                    max_evaluations=2000).fun
    with pytest.raises(decido.EngineError, match=r"goal must be 'minimize' or 'maximize' "
                                                 r"\('min', 'max'\), got 'up'"):
        decido.optimize("x[0]", BOX, goal="up")


def test_objectives_and_hypervolume_take_the_short_goals() -> None:
    front = decido.minimize([{"name": "f", "expression": "x[0]", "goal": "max"},
                             {"name": "g", "expression": "(x[0] - 1)**2", "goal": "min"}],
                            [[0.0, 1.0]], seed=3, max_evaluations=1500)
    assert [o["goal"] for o in front.objectives] == ["maximize", "minimize"]
    assert decido.hypervolume([[1.0, 1.0]], [2.0, 0.0], goals=["min", "max"]) == \
        decido.hypervolume([[1.0, 1.0]], [2.0, 0.0], goals=["minimize", "maximize"]) == 1.0


OPTIONS = [{"id": "a", "attributes": {"price": 10.0, "quality": 7.0}},
           {"id": "b", "attributes": {"price": 12.0, "quality": 9.0}},
           {"id": "c", "attributes": {"price": 9.0, "quality": 5.0}}]


def test_decide_takes_the_short_goals() -> None:
    long = {"options": OPTIONS, "method": "topsis", "criteria": [
        {"attribute": "price", "goal": "minimize", "weight": 2},
        {"attribute": "quality", "goal": "maximize", "weight": 1}]}
    short = {**long, "criteria": [{**c, "goal": c["goal"][:3]} for c in long["criteria"]]}
    assert decido.decide(short)["ranking"] == decido.decide(long)["ranking"]
    scored = {"options": OPTIONS, "expression": "price", "goal": "min"}
    assert decido.decide(scored)["ranking"][0]["id"] == "c"


def test_a_criterions_weight_defaults_to_one() -> None:
    given = {"options": OPTIONS, "method": "wsm", "criteria": [
        {"attribute": "price", "goal": "min", "weight": 1},
        {"attribute": "quality", "weight": 1.0}]}
    left_out = {**given, "criteria": [{"attribute": "price", "goal": "min"},
                                      {"attribute": "quality"}]}
    assert decido.decide(left_out)["ranking"] == decido.decide(given)["ranking"]
    assert decido.decide(left_out)["warnings"] == []
    criterion = decido.decision_schemas()["DecisionCriterion"]["properties"]
    assert criterion["weight"]["default"] == 1 and criterion["goal"]["default"] == "maximize"
    assert criterion["goal"]["enum"] == ["minimize", "maximize", "min", "max"]
