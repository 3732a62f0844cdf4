"""The goal of an objective or a criterion: one rule for every surface.

A goal is ``"minimize"`` or ``"maximize"``; ``"min"`` and ``"max"`` are their aliases,
taken wherever a goal is (``decido.optimize``, a run of several objectives, a decision's
criteria and its ``goal``, the HTTP API, the CLI, the dashboard). Answers always say the
long form.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["GOALS", "GOAL_ALIASES", "GOAL_NAMES", "Goal", "GoalName", "goal_name",
           "goal_problem"]

#: the goals, as answers say them
GOALS = ("minimize", "maximize")
#: the short forms a caller may write instead
GOAL_ALIASES = {"min": "minimize", "max": "maximize"}
#: every name a goal may be given by
GOAL_NAMES = (*GOALS, *GOAL_ALIASES)
#: a goal as answers say it
Goal = Literal["minimize", "maximize"]
#: a goal as a caller may write it
GoalName = Literal["minimize", "maximize", "min", "max"]


def goal_name(value: object) -> Goal | None:
    """The goal ``value`` names, in its long form (``"min"`` -> ``"minimize"``); None when
    it names none."""
    if type(value) is not str:
        return None
    if value == "minimize" or GOAL_ALIASES.get(value) == "minimize":
        return "minimize"
    if value == "maximize" or GOAL_ALIASES.get(value) == "maximize":
        return "maximize"
    return None


def goal_problem(what: str, value: object) -> str:
    """The sentence refusing ``value`` as the goal ``what``."""
    return f"{what} must be 'minimize' or 'maximize' ('min', 'max'), got {value!r}"
