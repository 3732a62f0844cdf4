"""Constraints of a :class:`decido.Study`: comparisons in the expression language
(``"latency <= 100"``, ``"[name:] lhs <= rhs"``, ``>=``, ``==``) over the variables' names,
the objectives' names and the metrics a tell reports.

A name that is neither a variable nor an objective is a metric: the compiler itself finds
the names a text uses (each unknown name becomes an input and the text is compiled again,
as the decision constraints do). A trial's excess is the driver's: the sum over the
constraints of each violation beyond the tolerance; 0 when the trial is feasible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from decido import _expr
from decido._problem import is_real
from decido.design import DEFAULT_CONSTRAINT_TOLERANCE, Constraint
from decido.errors import ConstraintError, ExpressionError, StudyError
from decido.expression import DEFAULT_LIMITS

__all__ = ["DEFAULT_CONSTRAINT_TOLERANCE", "StudyConstraints"]

_SENSES = ("<=", ">=", "==")
#: a constraint text naming more metrics than this is refused
_MAX_NAMES = 256


def _compile(k: int, text: str, known: list[str]) -> tuple[Any, list[str]]:
    """The constraint compiled over ``known`` and the metrics it names (added in order)."""
    names = list(known)
    limit = DEFAULT_LIMITS["max_length"]
    if not isinstance(text, str):
        raise ConstraintError(k, "invalid_constraint", "a constraint must be a string")
    if len(text) > limit:
        raise ConstraintError(k, "too_long", f"constraint too long: {len(text)} characters "
                              f"(limit {limit})", limit, len(text) - limit, text)
    for _ in range(_MAX_NAMES):
        try:
            prog = _expr.Program(text.encode("utf-8", "surrogatepass"), 0, names, limit,
                                 DEFAULT_LIMITS["max_depth"],
                                 DEFAULT_LIMITS["max_instructions"], text, True)
        except ExpressionError as exc:
            name = text[exc.position:exc.position + exc.length]
            if exc.code == "unknown_name" and name.isidentifier() and name not in names:
                names.append(name)
                continue
            raise ConstraintError(k, exc.code, exc.message, exc.position, exc.length,
                                  text) from None
        return prog, names[len(known):]
    raise ConstraintError(k, "invalid_constraint",
                          f"a constraint names at most {_MAX_NAMES} metrics", 0, len(text), text)


@dataclass(frozen=True)
class _Compiled:
    constraint: Constraint
    inputs: list[str]
    """the names the program reads, in its input order"""


class StudyConstraints:
    """The compiled constraints of a study and the metrics they read."""

    def __init__(self, texts: Sequence[str], known: list[str],
                 tolerance: float = DEFAULT_CONSTRAINT_TOLERANCE) -> None:
        self.texts = list(texts)
        self.tolerance = tolerance
        self._known = set(known)
        self._items: list[_Compiled] = []
        for k, text in enumerate(self.texts):
            prog, metrics = _compile(k, text, known)
            assert prog.constraint is not None
            sense, name_pos, name_len, _, _ = prog.constraint
            name = text[name_pos:name_pos + name_len] if name_len else f"c{k}"
            self._items.append(_Compiled(Constraint(name, text, _SENSES[sense], prog),
                                         [*known, *metrics]))
        names = [c.constraint.name for c in self._items]
        for k, name in enumerate(names):
            if names.index(name) != k:
                raise ConstraintError(k, "invalid_constraint",
                                      f"the name {name!r} is used by "
                                      f"constraints[{names.index(name)}] too", 0, len(name),
                                      self.texts[k])

    def __bool__(self) -> bool:
        return bool(self._items)

    @property
    def metrics(self) -> list[str]:
        """The metric names the constraints read (each once, in order of first use)."""
        return list(dict.fromkeys(name for item in self._items for name in item.inputs
                                  if name not in self._known))

    def judge(self, known: Mapping[str, float], metrics: Mapping[str, Any]
              ) -> list[dict[str, Any]]:
        """Each constraint at a trial: ``{"name", "value", "violation"}`` (value: lhs -
        rhs); :class:`StudyError` ``missing_metric`` when one reads a metric the tell did
        not report."""
        out = []
        for item in self._items:
            row = []
            for name in item.inputs:
                if name in known:
                    row.append(float(known[name]))
                elif name in metrics and is_real(metrics[name]):
                    row.append(float(metrics[name]))
                else:
                    raise StudyError("missing_metric",
                                     f"constraint {item.constraint.text!r} reads {name!r}: "
                                     f"report it as a number in metrics")
            g = float(item.constraint.program.evaluate(np.array(row, dtype=np.float64)))
            out.append({"name": item.constraint.name, "value": g,
                        "violation": item.constraint.violation(g)})
        return out

    def excess(self, judged: list[dict[str, Any]]) -> float:
        """The sum of the violations beyond the tolerance (0: feasible)."""
        return math.fsum(max(0.0, c["violation"] - self.tolerance) for c in judged)
