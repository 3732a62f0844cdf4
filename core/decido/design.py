"""What a problem is made of beyond a box: named, integer and discrete variables, start
points and constraints (the arguments ``variables``, ``integers``, ``x0``, ``constraints``
and ``constraint_tolerance`` of :func:`decido.optimize`).

:func:`design_problems` finds every fault of these arguments (as :class:`Problem` rows,
for the HTTP service to list them all) and builds the :class:`Design` the C driver takes;
:func:`compile_constraints` compiles the constraint strings with the objective's
variables (``x``, ``n`` or the names) and refuses any that is NaN at every point tried.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido import _expr
from decido._problem import Problem, is_real
from decido.errors import ConstraintError, ExpressionError
from decido.expression import DEFAULT_LIMITS

__all__ = ["DEFAULT_CONSTRAINT_TOLERANCE", "Constraint", "Design", "compile_constraints",
           "design_problems"]

#: a point is feasible when every constraint is violated by at most this much
DEFAULT_CONSTRAINT_TOLERANCE = 1e-6
#: points at which a constraint is tried before a run (NaN at all of them: refused)
_PROBE_POINTS = 32
_SENSES = ("<=", ">=", "==")


@dataclass(frozen=True)
class Constraint:
    """A compiled constraint: ``g = lhs - rhs`` must be ``<= 0``, ``>= 0`` or ``== 0``."""

    name: str
    text: str
    sense: str
    program: Any

    def violation(self, g: float) -> float:
        """How far ``g`` (lhs - rhs) is from satisfying the comparison (NaN: infinite)."""
        if math.isnan(g):
            return math.inf
        if self.sense == "<=":
            return max(0.0, g)
        if self.sense == ">=":
            return max(0.0, -g)
        return abs(g)


@dataclass(frozen=True)
class Design:
    """The arrays of a run beyond its box (None where the argument was not given)."""

    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    names: tuple[str, ...] | None
    integer: NDArray[np.uint8] | None
    discrete: list[NDArray[np.float64] | None] | None
    x0: NDArray[np.float64] | None
    tolerance: float

    @property
    def n(self) -> int:
        """Number of variables."""
        return int(self.lower.shape[0])

    def sample(self, rows: int, seed: int) -> NDArray[np.float64]:
        """``rows`` points the variables can take: the centre, then uniform ones."""
        rng = np.random.default_rng(seed)
        U = rng.random((rows, self.n))
        U[0] = 0.5
        X = self.lower + U * (self.upper - self.lower)
        if self.integer is not None:
            ints = self.integer.astype(bool)
            lo, hi = np.ceil(self.lower[ints]), np.floor(self.upper[ints])
            X[:, ints] = np.minimum(lo + np.floor(U[:, ints] * (hi - lo + 1)), hi)
        for j, vals in enumerate(self.discrete or ()):
            if vals is not None:
                X[:, j] = vals[np.minimum((U[:, j] * len(vals)).astype(int), len(vals) - 1)]
        return X


def _getter(v: Any) -> Callable[[str], Any]:
    """Members of a variable given as a dict or as an object with attributes."""
    if isinstance(v, dict):
        return v.get
    return lambda key: getattr(v, key, None)


def _variable_problems(variables: Any) -> tuple[list[Problem], list[tuple[str, Any]]]:
    """Faults of ``variables``, and ``(name, spec)`` of each well-formed one."""
    if not isinstance(variables, (list, tuple)) or not variables:
        return [Problem(("variables",), "invalid_argument",
                        "variables must be a non-empty list of {name, lower, upper, type} "
                        "or {name, values}")], []
    found: list[Problem] = []
    good: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for k, v in enumerate(variables):
        where = ("variables", k)
        get = _getter(v)
        name = get("name")
        if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
            found.append(Problem(where, "invalid_argument",
                                 f"variables[{k}].name must be a name (letters, digits, _), "
                                 f"got {name!r}"))
            continue
        if name in seen:
            found.append(Problem(where, "invalid_argument",
                                 f"variables[{k}]: the name {name!r} is used twice"))
            continue
        seen.add(name)
        values = get("values")
        kind = get("type") or "real"
        if values is not None:
            if not isinstance(values, (list, tuple)) or not values:
                found.append(Problem(where, "invalid_argument",
                                     f"variables[{k}] ({name}): values must be a non-empty list"))
            elif not all(is_real(x) and math.isfinite(float(x)) for x in values):
                found.append(Problem(where, "invalid_argument",
                                     f"variables[{k}] ({name}): every value must be a finite "
                                     f"number (no NaN)"))
            elif get("lower") is not None or get("upper") is not None or get("type") is not None:
                found.append(Problem(where, "invalid_argument",
                                     f"variables[{k}] ({name}): give values, or lower, upper "
                                     f"and type, not both"))
            else:
                good.append((name, sorted({float(x) for x in values})))
            continue
        lo, hi = get("lower"), get("upper")
        if kind not in ("real", "integer"):
            found.append(Problem(where, "invalid_argument",
                                 f"variables[{k}] ({name}): type must be 'real' or 'integer', "
                                 f"got {kind!r}"))
        elif not (is_real(lo) and is_real(hi)):
            found.append(Problem(where, "invalid_bounds",
                                 f"variables[{k}] ({name}) needs numbers lower and upper "
                                 f"(or values)"))
        elif not (math.isfinite(float(lo)) and math.isfinite(float(hi))) or lo > hi \
                or not math.isfinite(float(hi) - float(lo)):
            found.append(Problem(where, "invalid_bounds",
                                 f"variables[{k}] ({name}): [{lo}, {hi}] must be finite with "
                                 f"lower <= upper"))
        elif kind == "integer" and math.ceil(lo) > math.floor(hi):
            found.append(Problem(where, "invalid_bounds",
                                 f"variables[{k}] ({name}): [{lo}, {hi}] holds no integer"))
        else:
            good.append((name, (float(lo), float(hi), kind == "integer")))
    return found, good


def _integer_problems(integers: Any, lower: NDArray[np.float64], upper: NDArray[np.float64]
                      ) -> tuple[list[Problem], NDArray[np.uint8] | None]:
    n = lower.shape[0]
    if not isinstance(integers, (list, tuple, np.ndarray)):
        return [Problem(("integers",), "invalid_argument",
                        "integers must be a list of indices of x")], None
    found: list[Problem] = []
    mask = np.zeros(n, dtype=np.uint8)
    for k, j in enumerate(integers):
        where = ("integers", k)
        if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or not 0 <= j < n:
            found.append(Problem(where, "invalid_argument",
                                 f"integers[{k}] must be an index of x in [0, {n}), got {j!r}"))
        elif mask[j]:
            found.append(Problem(where, "invalid_argument",
                                 f"integers[{k}]: index {j} is listed twice"))
        elif math.ceil(lower[j]) > math.floor(upper[j]):
            found.append(Problem(where, "invalid_bounds",
                                 f"integers[{k}]: bounds[{j}] = [{lower[j]}, {upper[j]}] holds "
                                 f"no integer"))
        else:
            mask[j] = 1
    return found, (mask if mask.any() else None)


def _x0_problems(x0: Any, design: Design) -> tuple[list[Problem], NDArray[np.float64] | None]:
    n = design.n
    try:
        X = np.asarray(x0, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        X = np.empty((0,))
    if X.ndim == 1:
        X = X.reshape(1, -1)
    if X.ndim != 2 or X.shape[1] != n or X.shape[0] == 0:
        return [Problem(("x0",), "invalid_argument",
                        f"x0 must be a point of {n} numbers or a non-empty list of them")], None
    found: list[Problem] = []
    single = np.asarray(x0, dtype=np.float64).ndim == 1
    for r in range(X.shape[0]):
        for j in range(n):
            v = float(X[r, j])
            where: tuple[str | int, ...] = ("x0", j) if single else ("x0", r, j)
            label = f"x0[{j}]" if single else f"x0[{r}][{j}]"
            vals = design.discrete[j] if design.discrete is not None else None
            if vals is not None:
                if v not in vals:
                    found.append(Problem(where, "invalid_argument",
                                         f"{label} = {v} is not one of the values of x[{j}]"))
            elif not (design.lower[j] <= v <= design.upper[j]):
                found.append(Problem(where, "invalid_argument",
                                     f"{label} = {v} is outside the bounds [{design.lower[j]}, "
                                     f"{design.upper[j]}]"))
            elif design.integer is not None and design.integer[j] and v != math.floor(v):
                found.append(Problem(where, "invalid_argument",
                                     f"{label} = {v} must be an integer"))
    return found, (None if found else np.ascontiguousarray(X))


def design_problems(
    bounds: Any, *, variables: Any = None, integers: Any = None, x0: Any = None,
    constraints: Any = None, constraint_tolerance: Any = None,
) -> tuple[list[Problem], Design | None]:
    """Every fault of these arguments and, when there is none, the :class:`Design`.

    ``bounds`` is the checked (n, 2) array or None (when ``variables`` replace it or it has
    faults of its own)."""
    found: list[Problem] = []
    names: tuple[str, ...] | None = None
    integer: NDArray[np.uint8] | None = None
    discrete: list[NDArray[np.float64] | None] | None = None
    if variables is not None:
        found, good = _variable_problems(variables)
        if found:
            return found, None
        names = tuple(name for name, _ in good)
        lower = np.empty(len(good))
        upper = np.empty(len(good))
        integer = np.zeros(len(good), dtype=np.uint8)
        discrete = [None] * len(good)
        for j, (_, spec) in enumerate(good):
            if isinstance(spec, list):
                discrete[j] = np.array(spec, dtype=np.float64)
                lower[j], upper[j] = spec[0], spec[-1]
            else:
                lower[j], upper[j], integer[j] = spec
        if integers is not None:
            found.append(Problem(("integers",), "invalid_argument",
                                 "with variables, give a variable type 'integer' instead of "
                                 "integers"))
        integer = integer if integer.any() else None
        discrete = discrete if any(v is not None for v in discrete) else None
    elif bounds is None:
        return found, None
    else:
        b = np.asarray(bounds, dtype=np.float64)
        lower, upper = np.ascontiguousarray(b[:, 0]), np.ascontiguousarray(b[:, 1])
        if integers is not None:
            faults, integer = _integer_problems(integers, lower, upper)
            found += faults
    tolerance = DEFAULT_CONSTRAINT_TOLERANCE
    if constraint_tolerance is not None:
        if not is_real(constraint_tolerance) or not (
                0 < float(constraint_tolerance) < math.inf):
            found.append(Problem(("constraint_tolerance",), "invalid_argument",
                                 "constraint_tolerance must be a positive number, got "
                                 f"{constraint_tolerance!r}"))
        else:
            tolerance = float(constraint_tolerance)
    if constraints is not None:
        if isinstance(constraints, str) or not isinstance(constraints, (list, tuple)):
            found.append(Problem(("constraints",), "invalid_argument",
                                 "constraints must be a list of strings"))
        else:
            found += [Problem(("constraints", k), "invalid_argument",
                              f"constraints[{k}] must be a non-empty string")
                      for k, c in enumerate(constraints) if not isinstance(c, str) or not c]
    design = Design(lower, upper, names, integer, discrete, None, tolerance)
    if x0 is not None:
        faults, X0 = _x0_problems(x0, design)
        found += faults
        design = Design(lower, upper, names, integer, discrete, X0, tolerance)
    return found, (None if found else design)


def compile_constraints(texts: Sequence[str], design: Design, *, n: int | None = None,
                        probe_seed: int = 0) -> list[Constraint]:
    """The constraints compiled in the objective's context (``x`` of length ``n``, or the
    design's names); :class:`ConstraintError` for the first that does not compile or is NaN
    at every one of a few points the variables can take (the centre and random ones)."""
    out: list[Constraint] = []
    variables = list(design.names) if design.names is not None else []
    size = 0 if design.names is not None else (n or design.n)
    limit = DEFAULT_LIMITS["max_length"]
    for k, text in enumerate(texts):
        if len(text) > limit:
            raise ConstraintError(k, "too_long", f"constraint too long: {len(text)} characters "
                                  f"(limit {limit})", limit, len(text) - limit, text)
        try:
            prog = _expr.Program(text.encode("utf-8", "surrogatepass"), size, variables, limit,
                                 DEFAULT_LIMITS["max_depth"], DEFAULT_LIMITS["max_instructions"],
                                 text, True)
        except ExpressionError as exc:
            raise ConstraintError(k, exc.code, exc.message, exc.position, exc.length,
                                  text) from None
        assert prog.constraint is not None
        sense, name_pos, name_len, _, _ = prog.constraint
        name = text[name_pos:name_pos + name_len] if name_len else f"c{k}"
        out.append(Constraint(name, text, _SENSES[sense], prog))
    if out:
        X = design.sample(_PROBE_POINTS, probe_seed)
        for k, c in enumerate(out):
            if np.isnan(c.program.evaluate_many(X)).all():
                raise ConstraintError(k, "constraint_nan",
                                      f"the constraint is NaN at every one of {_PROBE_POINTS} "
                                      f"points tried (the centre and random points)", 0,
                                      len(c.text), c.text)
    names = [c.name for c in out]
    for k, name in enumerate(names):
        if names.index(name) != k:
            raise ConstraintError(k, "invalid_constraint",
                                  f"the name {name!r} is used by constraints[{names.index(name)}]"
                                  f" too", 0, len(name), out[k].text)
    return out
