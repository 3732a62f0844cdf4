"""The library's front door: ``decido.minimize``/``maximize`` show their real keywords,
``decido.option_table`` is public and does what the docs say, and one goal rule
(``min``/``max`` aliases of ``minimize``/``maximize``, answers in the long form) and one
weight rule (a criterion's weight defaults to 1) hold on every surface of the library."""

from __future__ import annotations

import dataclasses
import inspect
import typing

import pytest

import decido
from decido.goals import GOAL_NAMES, goal_name
from decido.optimize import optimize_front
from decido.run_spec import FrontKeywords, RunKeywords, RunSpec, keyword_names

BOX = [[-1.0, 2.0]] * 2


def _keywords(function: typing.Callable[..., typing.Any]) -> dict[str, inspect.Parameter]:
    return {name: p for name, p in inspect.signature(function).parameters.items()
            if p.kind is p.KEYWORD_ONLY}


@pytest.mark.parametrize("function", [decido.minimize, decido.maximize, decido.optimize])
def test_minimize_and_maximize_show_their_keywords(function: typing.Any) -> None:
    shown = inspect.signature(function)
    assert list(shown.parameters)[:2] == ["objective", "bounds"]
    own_goal = function is decido.optimize
    front = _keywords(optimize_front)
    single = {n: p for n, p in front.items() if n in RunKeywords.__annotations__ or n == "goal"}
    expected = [n for n in single if own_goal or n != "goal"] + [
        n for n in front if n not in single]
    assert list(_keywords(function)) == expected  # not **kwargs
    assert ("goal" in shown.parameters) is own_goal and "kwargs" not in shown.parameters
    for name, parameter in _keywords(function).items():
        origin = front[name]
        assert (parameter.default, parameter.annotation) == (origin.default, origin.annotation)
    assert "max_evaluations: 'int | None' = None" in str(shown)
    assert "reference_point" in str(shown) and "archive_size" in str(shown)


def test_the_keyword_types_are_optimizes_own() -> None:
    """FrontKeywords (the static type of the keywords) are exactly the keyword parameters of
    optimize and optimize_front, goal aside, with the same types; RunKeywords those but the
    front's own (reference_point, archive_size)."""
    for function in (decido.optimize, optimize_front):
        own = {n: p.annotation for n, p in _keywords(function).items() if n != "goal"}
        typed_own = {n: getattr(t, "__forward_arg__", t)
                     for n, t in FrontKeywords.__annotations__.items()}
        assert typed_own == own, function.__name__
    assert set(FrontKeywords.__annotations__) - set(RunKeywords.__annotations__) == {
        "reference_point", "archive_size"}
    assert not FrontKeywords.__required_keys__ and not RunKeywords.__required_keys__


def test_the_keywords_are_the_run_specs_fields() -> None:
    """One run specification: the static types, the signatures and the keyword check come
    from RunSpec's fields (names, annotations, defaults)."""
    spec = {f.name: f for f in dataclasses.fields(RunSpec)}
    typed = {n: getattr(t, "__forward_arg__", t) for n, t in FrontKeywords.__annotations__.items()}
    assert typed == {n: f.type for n, f in spec.items()}
    assert list(_keywords(optimize_front)) == ["goal", *spec]
    for name, parameter in _keywords(optimize_front).items():
        if name != "goal":
            assert parameter.default == spec[name].default
    assert set(keyword_names(several=True)) - set(keyword_names(several=False)) == {
        "reference_point", "archive_size"}
    assert all(f.metadata["doc"] for f in spec.values())
    with pytest.raises(TypeError, match="optimize_front.*did you mean 'archive_size'"):
        optimize_front(["x[0]", "-x[0]"], [[0.0, 1.0]], archive_sise=3)  # type: ignore[call-arg]


def test_optimize_front_is_a_branch_of_optimize() -> None:
    """optimize_front and optimize with a list take the same path: the same front, and
    the same faults listed at once."""
    args = {"seed": 3, "max_evaluations": 1500, "archive_size": 8}
    a = optimize_front(["x[0]**2", "(x[0] - 1)**2"], [[-2.0, 2.0]], **args)
    b = decido.optimize(["x[0]**2", "(x[0] - 1)**2"], [[-2.0, 2.0]], **args)
    assert a.pareto == b.pareto and len(a.pareto) <= 8
    with pytest.raises(decido.EngineError) as caught:
        optimize_front(["x[0]", "-x[0]"], [[0.0, 1.0]], engine="dss", target=1.0,
                       archive_size=0, seed=-1)
    assert [e["pointer"] for e in caught.value.errors] == [
        "/seed", "/engine", "/target", "/archive_size"]


def test_optimize_the_general_form_takes_a_list_of_objectives() -> None:
    """``decido.optimize``, the general form, takes what minimize, maximize and
    client.optimize take: a list of objectives makes their front."""
    front = decido.optimize(["x[0]**2", "(x[0] - 1)**2"], [[-2.0, 2.0]], seed=1,
                            max_evaluations=2000, archive_size=10)
    assert isinstance(front, decido.ParetoResult) and 0 < len(front.pareto) <= 10
    same = decido.minimize(["x[0]**2", "(x[0] - 1)**2"], [[-2.0, 2.0]], seed=1,
                           max_evaluations=2000, archive_size=10)
    assert front.pareto == same.pareto
    best = decido.optimize(["-(x[0] - 1)**2", {"name": "b", "expression": "x[0]**2",
                                               "goal": "minimize"}], [[-2.0, 2.0]],
                           goal="maximize", seed=1, max_evaluations=1000)
    assert [o["goal"] for o in best.objectives] == ["maximize", "minimize"]
    with pytest.raises(TypeError, match="archive_size.*several objectives"):
        decido.optimize("x[0]**2", [[-2.0, 2.0]], archive_size=10)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="did you mean 'max_evaluations'"):
        decido.optimize("x[0]**2", [[-2.0, 2.0]], max_evaluation=10)  # type: ignore[call-overload]


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
