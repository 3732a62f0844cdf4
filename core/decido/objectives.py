"""The objectives of a run of several objectives (``decido.minimize([f1, f2, ...], ...)``).

Each item is an expression string, a :class:`decido.Expression`, a callable, or a dict
``{"name", "expression", "goal"}`` whose ``expression`` is any of the three.  Names default
to ``f1``, ``f2``, ...; goals to the run's (``minimize`` for :func:`decido.minimize`).
:func:`objective_problems` lists every fault; :func:`compile_objectives` compiles the
expressions in the problem's context.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from decido import _engine
from decido._problem import Problem
from decido.design import Design
from decido.errors import ExpressionError
from decido.expression import Expression
from decido.goals import goal_name, goal_problem

__all__ = ["MAX_OBJECTIVES", "NAME_PATTERN", "ObjectiveSpec", "compile_objectives",
           "objective_problems"]

#: At most this many objectives in one run (the C core's DC_MAX_OBJECTIVES).
MAX_OBJECTIVES: int = _engine.MAX_OBJECTIVES
#: An objective's name: an identifier of at most 64 characters (it becomes an attribute
#: of the front's decision options, usable in decision expressions).
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
_KEYS = ("name", "expression", "goal")


@dataclass(frozen=True)
class ObjectiveSpec:
    """One objective: its name, goal and expression (a string, an Expression or a
    callable)."""

    name: str
    goal: str
    expression: str | Expression | Callable[..., Any]
    in_dict: bool = False
    """given as a dict (its expression's faults are at ``/objectives/k/expression``)"""

    @property
    def is_callable(self) -> bool:
        """True for a Python callable (not an expression)."""
        return not isinstance(self.expression, (str, Expression))

    def describe(self) -> dict[str, Any]:
        """``{"name", "goal"}``, and ``"expression"`` (its text) for an expression."""
        out: dict[str, Any] = {"name": self.name, "goal": self.goal}
        if isinstance(self.expression, str):
            out["expression"] = self.expression
        elif isinstance(self.expression, Expression):
            out["expression"] = self.expression.text
        return out


def _item(k: int, item: Any, goal: str) -> tuple[list[Problem], ObjectiveSpec | None]:
    where = ("objectives", k)
    if isinstance(item, (str, Expression)) or (callable(item) and not isinstance(item, Mapping)):
        return [], ObjectiveSpec(f"f{k + 1}", goal, item)
    if not isinstance(item, Mapping):
        return [Problem(where, "invalid_argument",
                        f"objectives[{k}] must be an expression string, a decido.Expression, "
                        "a callable or a dict {name, expression, goal}")], None
    found = [Problem((*where, str(key)), "invalid_argument",
                     f"unknown field {key!r} (fields: {', '.join(_KEYS)})")
             for key in item if key not in _KEYS]
    name = item.get("name", f"f{k + 1}")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        found.append(Problem((*where, "name"), "invalid_argument",
                             f"objectives[{k}].name must be an identifier (a letter or _, then "
                             f"letters, digits or _; at most 64), got {name!r}"))
    own_goal = goal_name(item.get("goal", goal))
    if own_goal is None:
        found.append(Problem((*where, "goal"), "invalid_argument",
                             goal_problem(f"objectives[{k}].goal", item.get("goal", goal))))
    expression = item.get("expression")
    if not (isinstance(expression, (str, Expression)) or callable(expression)):
        found.append(Problem((*where, "expression"), "invalid_argument",
                             f"objectives[{k}].expression is required: an expression string, "
                             "a decido.Expression or a callable"))
    if found:
        return found, None
    assert expression is not None
    return [], ObjectiveSpec(str(name), str(own_goal), expression, True)


def objective_problems(objectives: Any, goal: str, variable_names: Sequence[str]
                       ) -> tuple[list[Problem], list[ObjectiveSpec]]:
    """Every fault of ``objectives`` (the list, its items, their names against each other
    and against ``variable_names``, expressions and callables mixed) and the parsed
    objectives when there is none."""
    if not isinstance(objectives, (list, tuple)) or not objectives:
        return [Problem(("objectives",), "invalid_argument",
                        "objectives must be a non-empty list")], []
    found: list[Problem] = []
    if len(objectives) > MAX_OBJECTIVES:
        found.append(Problem(("objectives",), "invalid_argument",
                             f"at most {MAX_OBJECTIVES} objectives, got {len(objectives)}"))
    parsed: list[tuple[int, ObjectiveSpec]] = []
    for k, item in enumerate(objectives):
        faults, spec = _item(k, item, goal)
        found += faults
        if spec is not None:
            parsed.append((k, spec))
    seen: dict[str, int] = {}
    taken = set(variable_names)
    for k, spec in parsed:
        where = ("objectives", k, "name")
        if spec.name in seen:
            found.append(Problem(where, "invalid_argument",
                                 f"objectives[{k}].name {spec.name!r} is also the name of "
                                 f"objectives[{seen[spec.name]}]"))
        elif spec.name in taken:
            found.append(Problem(where, "invalid_argument",
                                 f"objectives[{k}].name {spec.name!r} is also the name of a "
                                 "variable (the front's decision options carry both)"))
        seen.setdefault(spec.name, k)
    if len({spec.is_callable for _, spec in parsed}) > 1:
        found += [Problem(("objectives", k), "invalid_argument",
                          f"objectives[{k}] is a callable but others are expressions: give "
                          "expressions only or callables only")
                  for k, spec in parsed if spec.is_callable]
    specs = [spec for _, spec in parsed]
    return found, specs if not found else []


def compile_objectives(specs: list[ObjectiveSpec], design: Design
                       ) -> tuple[list[Problem], list[Any]]:
    """The programs of expression objectives in the design's context (``x`` and ``n``, or
    the variables' names), with a fault for each that does not compile; callables are
    returned as they are."""
    found: list[Problem] = []
    out: list[Any] = []
    for k, spec in enumerate(specs):
        expr = spec.expression
        where: tuple[str | int, ...] = ("objectives", k, "expression") if spec.in_dict \
            else ("objectives", k)
        try:
            if isinstance(expr, str):
                compiled = Expression(expr, variables=design.names) if design.names is not None \
                    else Expression(expr, n=design.n)
                out.append(compiled._program)
            elif isinstance(expr, Expression):
                wanted = design.names if design.names is not None else design.n
                have = expr.variables if design.names is not None else expr.n
                if have != wanted:
                    found.append(Problem(where, "invalid_argument",
                                         f"objectives[{k}] has n={expr.n}, variables "
                                         f"{expr.variables}; the problem has {wanted}"))
                out.append(expr._program)
            else:
                out.append(expr)
        except ExpressionError as exc:
            found.append(Problem(where, exc.code, f"objectives[{k}]: {exc.message} at "
                                                  f"position {exc.position}"))
    return found, out
