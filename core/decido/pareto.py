"""Runs of several objectives: ``decido.minimize([f1, f2, ...], bounds, ...)`` gives a
:class:`ParetoResult`, the non-dominated front of everything evaluated; and
:func:`hypervolume`, the indicator that measures a front (exact, in C).

The objectives (:mod:`decido.objectives`) run on the engines that take several
(``decido.engines()[i]["supports"]["objectives"]``; the default is ``auto`` up to 200
evaluations, which runs ``bo`` there, else the first of them, ``moea``) behind the same
driver as one objective: bounds, variables, integers, ``x0``, constraints, ``seed``,
``max_evaluations``, ``time_limit``, ``callback``, ``monitor`` and Ctrl-C work as they do
there (docs/optimization.md, "Several objectives"): the run is
:func:`decido.optimize.optimize_front`, the branch of :func:`decido.optimize`'s path for a
list of objectives; this module holds what only a front needs (its result, the check of a
reference point against the objectives' ranges, one callable over Python objectives).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from decido import _engine
from decido._problem import Problem, engine_error, is_real
from decido.design import Design
from decido.errors import EngineError
from decido.goals import goal_name
from decido.objectives import MAX_OBJECTIVES, ObjectiveSpec
from decido.status import Status, status

__all__ = ["ParetoResult", "default_multi_engine", "front_callable", "front_result",
           "hypervolume", "reference_problems"]
#: A reference point value within this (relative to ``max(1, |bound|)``) of a proven bound
#: of its objective over the box is refused (:func:`reference_problems`): the enclosure is
#: widened for rounding, so a reference at the exact optimum (0 for a sum of squares) sits
#: just inside it, and no point can be better by more than this.
REFERENCE_RTOL = 1e-12


def _json_float(v: float) -> float | None:
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class ParetoResult:
    """The outcome of a run of several objectives, values in each objective's own sense.

    Attributes:
        pareto: the front, at most the front's cap of points: dicts ``{"x": [...], "f":
            [...], "feasible": bool, "max_violation": float}`` (``f`` in the objectives'
            order; ``"variables": {name: value}`` too when the problem has ``variables``).
            When no feasible point was found: the non-dominated points of least violation,
            ``feasible`` false, and ``status`` ``infeasible``.  The best archive the run
            measured (least violation, then the hypervolume at the given reference point,
            else at a fixed one derived early in the run): when thinning left the final
            archive worse, ``message`` says which archive this is.
        hypervolume: the front's hypervolume at ``reference_point``.
        reference_point: the one given, else the front's nadir moved outward by a tenth
            of the front's range in each objective (by ``max(1, |nadir|) / 10`` where the
            range is 0).
        objectives: ``{"name", "goal"}`` (and ``"expression"``, its text) of each.
        status, message, evaluations, iterations, elapsed, engine, seed, engine_chosen:
            as in :class:`decido.OptimizeResult`.
        history: ``(evaluations, hypervolume)`` after iterations that changed it
            (bounded), each at the reference point of that moment (see ``reference_point``;
            give one to compare runs).
        variables: the variables' names when the problem has ``variables``, else None.
    """

    pareto: list[dict[str, Any]]
    hypervolume: float
    reference_point: list[float]
    objectives: list[dict[str, Any]]
    evaluations: int
    iterations: int
    status: Status
    message: str
    elapsed: float
    history: list[tuple[int, float]] = field(repr=False)
    engine: str
    seed: int
    variables: list[str] | None = None
    engine_chosen: str = ""

    @property
    def feasible(self) -> bool:
        """True when the front's points are feasible (always without constraints)."""
        return bool(self.pareto) and bool(self.pareto[0]["feasible"])

    def options(self) -> list[dict[str, Any]]:
        """The front as options of :func:`decido.decide`: id ``"0"``, ``"1"``, ...;
        attributes the objectives' names with ``f``, then the variables' names (or ``x0``,
        ``x1``, ...) with ``x``."""
        names = [o["name"] for o in self.objectives]
        xs = self.variables if self.variables is not None else [
            f"x{j}" for j in range(len(self.pareto[0]["x"]) if self.pareto else 0)]
        return [{"id": str(i), "attributes": {**dict(zip(names, p["f"], strict=True)),
                                              **dict(zip(xs, p["x"], strict=True))}}
                for i, p in enumerate(self.pareto)]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (a non-finite number becomes None)."""
        return {
            "pareto": [{**p, "f": [_json_float(v) for v in p["f"]],
                        "max_violation": _json_float(p["max_violation"])}
                       for p in self.pareto],
            "hypervolume": _json_float(self.hypervolume),
            "reference_point": [_json_float(v) for v in self.reference_point],
            "objectives": [dict(o) for o in self.objectives],
            "evaluations": self.evaluations, "iterations": self.iterations,
            "status": self.status, "message": self.message, "elapsed": self.elapsed,
            "history": [[e, _json_float(h)] for e, h in self.history],
            "engine": self.engine, "seed": self.seed, "feasible": self.feasible,
            "variables": self.variables,
        }


def hypervolume(points: ArrayLike, reference_point: ArrayLike,
                goals: list[str] | None = None, *, time_limit: float | None = None) -> float:
    """The hypervolume of ``points`` (shape ``(k, m)``, 1 <= m <= 8) at
    ``reference_point`` (m finite values): the measure of the region the points dominate
    up to it; a point that is not better than it in every objective adds nothing.
    ``goals``: ``"minimize"`` (default) or ``"maximize"`` per objective.  Exact (C: a sweep
    for 2 and 3 objectives in O(k log k), WFG's recursion beyond, whose cost grows
    exponentially with the objectives).  ``time_limit`` (seconds > 0): raise
    :class:`TimeoutError` when the computation has not ended by then (it gives up within a
    millisecond or so).  Faults raise one :class:`decido.EngineError` listing them all."""
    found: list[Problem] = []
    try:
        F = np.array(points, dtype=np.float64, ndmin=2)
        ref = np.array(reference_point, dtype=np.float64, ndmin=1)
    except (TypeError, ValueError) as exc:
        raise EngineError("invalid_argument", f"points and reference_point must be numbers: "
                                              f"{exc}", "points") from None
    if F.size == 0:
        F = F.reshape(0, ref.shape[0])
    if F.ndim != 2:
        found.append(Problem(("points",), "invalid_argument",
                             f"points must have shape (k, m), got {F.shape}"))
    m = F.shape[-1]
    if not 1 <= m <= MAX_OBJECTIVES:
        found.append(Problem(("points",), "invalid_argument",
                             f"1 to {MAX_OBJECTIVES} objectives, got {m}"))
    if ref.ndim != 1 or ref.shape[0] != m:
        found.append(Problem(("reference_point",), "invalid_argument",
                             f"reference_point must have {m} values, got shape {ref.shape}"))
    else:
        found += [Problem(("reference_point", j), "invalid_argument",
                          f"reference_point[{j}] must be finite")
                  for j in range(m) if not math.isfinite(ref[j])]
    signs = _signs(goals, m, found)
    if time_limit is not None and not (is_real(time_limit) and time_limit > 0
                                       and math.isfinite(time_limit)):
        found.append(Problem(("time_limit",), "invalid_argument",
                             f"time_limit must be a number of seconds > 0, got {time_limit!r}"))
    if found:
        raise engine_error(found)
    out = float(_engine.hypervolume(np.ascontiguousarray(F * signs), ref * signs,
                                    0.0 if time_limit is None else float(time_limit)))
    if math.isnan(out):
        raise TimeoutError(f"the hypervolume of {F.shape[0]} points of {m} objectives did not "
                           f"end within time_limit={time_limit} s")
    return out


def _signs(goals: Any, m: int, found: list[Problem]) -> NDArray[np.float64]:
    if goals is None:
        return np.ones(m)
    if not isinstance(goals, (list, tuple)) or len(goals) != m or any(
            goal_name(g) is None for g in goals):
        found.append(Problem(("goals",), "invalid_argument",
                             f"goals must be {m} of 'minimize' or 'maximize' ('min', 'max')"))
        return np.ones(m)
    return np.array([-1.0 if goal_name(g) == "maximize" else 1.0 for g in goals])


def default_multi_engine() -> str:
    """The engine of a run of several objectives when none is named: the first engine of
    the registry that takes several objectives."""
    return str(next(e["id"] for e in _engine.engines() if e["supports"]["objectives"]))


def reference_problems(programs: list[Any], names: list[str], goals: list[str],
                       design: Design, reference_point: Any) -> list[Problem]:
    """The faults of a given ``reference_point`` that no point of the box can be better
    than in some objective (a front there adds nothing to the hypervolume, whatever the
    run finds): the interval that encloses an expression objective's values over the
    bounds (C's ``dc_program_range``) proves it, within :data:`REFERENCE_RTOL`. Callables,
    and what the interval cannot prove, are not checked: the run's ``message`` counts the
    points it leaves out."""
    if reference_point is None:
        return []
    lo = np.ascontiguousarray(design.lower, dtype=np.float64)
    hi = np.ascontiguousarray(design.upper, dtype=np.float64)
    found: list[Problem] = []
    for j, (program, name, given) in enumerate(zip(programs, names, goals, strict=True)):
        goal = goal_name(given)
        if not hasattr(program, "range"):  # a Python callable
            continue
        f_lo, f_hi = program.range(lo, hi)
        r = float(reference_point[j])
        # the bound as said (a widening for rounding around 0 shown as 0)
        shown = [0.0 if abs(v) < REFERENCE_RTOL else v for v in (f_lo, f_hi)]
        if goal == "minimize" and r <= f_lo + REFERENCE_RTOL * max(1.0, abs(f_lo)):
            found.append(Problem(("reference_point", j), "invalid_argument",
                                 f"reference_point[{j}] is {r:g}, but objective {name!r} is "
                                 f"at least {shown[0]:.6g} everywhere within the bounds "
                                 "(proven), so no point can be better than it and the hypervolume "
                                 f"would be 0: give a value above {shown[0]:.6g}"))
        elif goal == "maximize" and r >= f_hi - REFERENCE_RTOL * max(1.0, abs(f_hi)):
            found.append(Problem(("reference_point", j), "invalid_argument",
                                 f"reference_point[{j}] is {r:g}, but objective {name!r} is "
                                 f"at most {shown[1]:.6g} everywhere within the bounds "
                                 "(proven), so no point can be better than it and the hypervolume "
                                 f"would be 0: give a value below {shown[1]:.6g}"))
    return found


def front_callable(funcs: list[Callable[..., Any]], vectorized: bool
                   ) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
    """One callable over a batch of rows giving (rows, m) values."""
    if vectorized:
        def batch(X: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.column_stack([np.asarray(f(X), dtype=np.float64).reshape(-1)
                                    for f in funcs])
    else:
        def batch(X: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.array([[float(f(x)) for f in funcs] for x in X], dtype=np.float64)
    return batch


def front_result(out: dict[str, Any], engine: str, seed: int, specs: list[ObjectiveSpec],
            design: Design) -> ParetoResult:
    X, F = out["pareto_x"], out["pareto_f"]
    points: list[dict[str, Any]] = []
    for q in range(X.shape[0]):
        point: dict[str, Any] = {"x": [float(v) for v in X[q]], "f": [float(v) for v in F[q]],
                                 "feasible": bool(out["pareto_feasible"][q]),
                                 "max_violation": float(out["pareto_violation"][q])}
        if design.names is not None:
            point["variables"] = dict(zip(design.names, point["x"], strict=True))
        points.append(point)
    feasible = bool(points) and points[0]["feasible"]
    ref, message = [float(v) for v in out["reference_point"]], out["message"]
    outside = sum(1 for p in points if not all(
        (v < r) if s.goal == "minimize" else (v > r)
        for v, r, s in zip(p["f"], ref, specs, strict=True)))
    if outside:
        message += (f"; {outside} of the front's {len(points)} points are not better than "
                    "reference_point in every objective and add nothing to the hypervolume")
    return ParetoResult(
        pareto=points, hypervolume=float(out["hypervolume"]),
        reference_point=ref,
        objectives=[s.describe() for s in specs],
        evaluations=int(out["evaluations"]), iterations=int(out["iterations"]),
        status=status(out["status"]) if feasible or out["status"] == "interrupted"
        else "infeasible",
        message=message, elapsed=float(out["elapsed"]), history=out["history"],
        engine=engine, seed=seed,
        variables=None if design.names is None else list(design.names),
        engine_chosen=str(out.get("engine_chosen") or engine),
    )
