"""The search space of a :class:`decido.Study`: ``bounds`` or ``variables`` in the runs'
vocabulary (``{name, lower, upper, type}``, ``{name, values}``) plus ``"log": true`` for a
range searched on a log scale and ``values`` that are strings (a categorical choice).

:func:`space_problems` lists every fault (as :class:`Problem` rows) and builds the
:class:`Space` whose arrays the C study takes; the space turns the C study's points into
variables by name and a caller's point (a mapping by name, or a sequence) into a row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido._problem import Problem, is_real
from decido.errors import StudyError

__all__ = ["Space", "Variable", "space_problems"]

_RANGE_KEYS = ("name", "lower", "upper", "type", "log")
_VALUE_KEYS = ("name", "values")


@dataclass(frozen=True)
class Variable:
    """One variable: a range (``kind`` ``real`` or ``integer``, maybe on a log scale) or a
    list of values (numbers, or strings for a categorical choice)."""

    name: str
    kind: str
    """``real``, ``integer``, ``values`` (numbers) or ``categorical`` (strings)"""
    lower: float = 0.0
    upper: float = 0.0
    log: bool = False
    values: tuple[Any, ...] = ()

    def describe(self) -> dict[str, Any]:
        """The variable as a caller writes it (JSON-ready)."""
        if self.kind in ("values", "categorical"):
            return {"name": self.name, "values": list(self.values)}
        out: dict[str, Any] = {"name": self.name, "lower": self.lower, "upper": self.upper,
                               "type": self.kind}
        if self.log:
            out["log"] = True
        return out


@dataclass(frozen=True)
class Space:
    """The variables, and what the C study takes of them."""

    variables: tuple[Variable, ...]
    named: bool
    """given as ``variables`` (else ``bounds``: names ``x0``, ``x1``, ...)"""

    @property
    def n(self) -> int:
        """Number of variables."""
        return len(self.variables)

    @property
    def names(self) -> list[str]:
        """The variables' names."""
        return [v.name for v in self.variables]

    def arrays(self) -> dict[str, Any]:
        """lower, upper, integer, discrete, log_scale for :class:`decido._study.CStudy`."""
        lower = np.array([v.lower for v in self.variables], dtype=np.float64)
        upper = np.array([v.upper for v in self.variables], dtype=np.float64)
        integer = np.array([v.kind == "integer" for v in self.variables], dtype=np.uint8)
        logs = np.array([v.log for v in self.variables], dtype=np.uint8)
        discrete: list[NDArray[np.float64] | None] = [
            np.array(v.values, dtype=np.float64) if v.kind == "values"
            else np.arange(len(v.values), dtype=np.float64) if v.kind == "categorical"
            else None for v in self.variables]
        return {"lower": lower, "upper": upper,
                "integer": integer if integer.any() else None,
                "discrete": discrete if any(d is not None for d in discrete) else None,
                "log_scale": logs if logs.any() else None}

    def by_name(self, x: NDArray[np.float64]) -> dict[str, Any]:
        """A point of the C study as variables by name (a categorical choice its string,
        an integer an int)."""
        out: dict[str, Any] = {}
        for v, value in zip(self.variables, x.tolist(), strict=True):
            if v.kind == "categorical":
                out[v.name] = v.values[int(value)]
            elif v.kind == "integer":
                out[v.name] = int(value)
            else:
                out[v.name] = float(value)
        return out

    def inputs(self, x: NDArray[np.float64]) -> list[float]:
        """The numbers constraints read of a point (a categorical choice: its index)."""
        return [float(value) for value in x.tolist()]

    def point(self, given: Mapping[str, Any] | Sequence[Any] | NDArray[Any]
              ) -> NDArray[np.float64]:
        """A caller's point (variables by name, or n values in order; a categorical choice
        by its string) as a row of the C study; :class:`StudyError` ``invalid_point``."""
        if isinstance(given, Mapping):
            unknown = [k for k in given if k not in self.names]
            missing = [name for name in self.names if name not in given]
            if unknown or missing:
                raise StudyError("invalid_point",
                                 f"a point needs every variable by name: missing {missing}, "
                                 f"unknown {unknown}")
            items = [given[name] for name in self.names]
        else:
            items = list(given)
            if len(items) != self.n:
                raise StudyError("invalid_point",
                                 f"a point has {self.n} values, got {len(items)}")
        return np.array([self._coordinate(v, item) for v, item in
                         zip(self.variables, items, strict=True)], dtype=np.float64)

    @staticmethod
    def _coordinate(v: Variable, item: Any) -> float:
        if v.kind == "categorical":
            if item in v.values:
                return float(v.values.index(item))
            raise StudyError("invalid_point",
                             f"{v.name}: {item!r} is not one of {list(v.values)}")
        if not is_real(item) or not math.isfinite(float(item)):
            raise StudyError("invalid_point", f"{v.name}: {item!r} is not a finite number")
        value = float(item)
        if v.kind == "values":
            if value not in v.values:
                raise StudyError("invalid_point",
                                 f"{v.name}: {item!r} is not one of {list(v.values)}")
            return value
        if not v.lower <= value <= v.upper:
            raise StudyError("invalid_point",
                             f"{v.name}: {item!r} is outside [{v.lower}, {v.upper}]")
        if v.kind == "integer" and value != math.floor(value):
            raise StudyError("invalid_point", f"{v.name}: {item!r} is not an integer")
        return value


def _values_problems(where: tuple[str | int, ...], name: str, values: Any
                     ) -> tuple[list[Problem], Variable | None]:
    if not isinstance(values, (list, tuple)) or not values:
        return [Problem((*where, "values"), "invalid_argument",
                        f"{name}: values must be a non-empty list")], None
    if all(isinstance(x, str) for x in values):
        if len(set(values)) != len(values):
            return [Problem((*where, "values"), "invalid_argument",
                            f"{name}: a value is listed twice")], None
        return [], Variable(name, "categorical", values=tuple(values))
    if all(is_real(x) and math.isfinite(float(x)) for x in values):
        return [], Variable(name, "values", values=tuple(sorted({float(x) for x in values})))
    return [Problem((*where, "values"), "invalid_argument",
                    f"{name}: values must be all finite numbers or all strings")], None


def _range_problems(where: tuple[str | int, ...], name: str, get: Mapping[str, Any]
                    ) -> tuple[list[Problem], Variable | None]:
    kind = get.get("type", "real")
    lo: Any = get.get("lower")
    hi: Any = get.get("upper")
    log = get.get("log", False)
    if kind not in ("real", "integer"):
        return [Problem((*where, "type"), "invalid_argument",
                        f"{name}: type must be 'real' or 'integer', got {kind!r}")], None
    if not isinstance(log, bool):
        return [Problem((*where, "log"), "invalid_argument",
                        f"{name}: log must be true or false, got {log!r}")], None
    if not (is_real(lo) and is_real(hi)):
        return [Problem(where, "invalid_bounds",
                        f"{name} needs numbers lower and upper (or values)")], None
    flo, fhi = float(lo), float(hi)
    if not (math.isfinite(flo) and math.isfinite(fhi)) or flo > fhi \
            or not math.isfinite(fhi - flo):
        return [Problem(where, "invalid_bounds",
                        f"{name}: [{lo}, {hi}] must be finite with lower <= upper")], None
    if kind == "integer" and math.ceil(flo) > math.floor(fhi):
        return [Problem(where, "invalid_bounds", f"{name}: [{lo}, {hi}] holds no integer")], None
    if log and not flo > 0:
        return [Problem((*where, "lower"), "invalid_bounds",
                        f"{name}: a log scale needs lower > 0, got {lo}")], None
    return [], Variable(name, kind, flo, fhi, log)


def _variable_problems(k: int, item: Any, seen: set[str]
                       ) -> tuple[list[Problem], Variable | None]:
    where: tuple[str | int, ...] = ("variables", k)
    if not isinstance(item, Mapping):
        return [Problem(where, "invalid_argument",
                        f"variables[{k}] must be a dict {{name, lower, upper, type, log}} or "
                        "{name, values}")], None
    name = item.get("name")
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        return [Problem((*where, "name"), "invalid_argument",
                        f"variables[{k}].name must be a name (letters, digits, _), "
                        f"got {name!r}")], None
    if name in seen:
        return [Problem((*where, "name"), "invalid_argument",
                        f"variables[{k}]: the name {name!r} is used twice")], None
    seen.add(name)
    keys = _VALUE_KEYS if "values" in item else _RANGE_KEYS
    found = [Problem((*where, str(key)), "invalid_argument",
                     f"variables[{k}] ({name}): unknown field {key!r} (fields: "
                     f"{', '.join(keys)})") for key in item if key not in keys]
    more, var = (_values_problems(where, name, item["values"]) if "values" in item
                 else _range_problems(where, name, item))
    return found + more, var if not found else None


def space_problems(bounds: Any, variables: Any) -> tuple[list[Problem], Space | None]:
    """Every fault of ``bounds`` / ``variables`` (exactly one of them), and the space when
    there is none."""
    if (bounds is None) == (variables is None):
        return [Problem((), "invalid_argument", "give bounds or variables (one of them)")], None
    if variables is not None:
        if not isinstance(variables, (list, tuple)) or not variables:
            return [Problem(("variables",), "invalid_argument",
                            "variables must be a non-empty list")], None
        found: list[Problem] = []
        out: list[Variable] = []
        seen: set[str] = set()
        for k, item in enumerate(variables):
            more, var = _variable_problems(k, item, seen)
            found += more
            if var is not None:
                out.append(var)
        return found, None if found else Space(tuple(out), True)
    try:
        B = np.array(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        B = np.empty(0)
    if B.ndim != 2 or B.shape[0] == 0 or B.shape[1] != 2:
        return [Problem(("bounds",), "invalid_bounds",
                        "bounds must be a non-empty list of [lower, upper] pairs")], None
    found = []
    out = []
    for j, (lo, hi) in enumerate(B.tolist()):
        more, var = _range_problems(("bounds", j), f"bounds[{j}]", {"lower": lo, "upper": hi})
        found += more
        if var is not None:
            out.append(Variable(f"x{j}", "real", var.lower, var.upper))
    return found, None if found else Space(tuple(out), False)
