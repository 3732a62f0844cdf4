"""``decido.minimize`` / ``maximize``: engines in C behind one driver."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from decido import _engine
from decido._engine import RunMonitor
from decido.errors import EngineError
from decido.expression import Expression

__all__ = [
    "SEED_END",
    "OptimizeResult",
    "Problem",
    "RunMonitor",
    "default_engine",
    "engines",
    "maximize",
    "minimize",
    "optimize",
    "problems",
]

Objective = str | Expression | Callable[..., Any]

#: Budget when max_evaluations is None: 2,000 evaluations per dimension, at least 10,000.
DEFAULT_EVALUATIONS_PER_DIM = 2000
MIN_DEFAULT_EVALUATIONS = 10_000
_HISTORY = 512
#: Seeds are integers in ``[0, SEED_END)`` (64 bits).
SEED_END = 2**64


@dataclass(frozen=True)
class OptimizeResult:
    """The outcome of a run, values in the caller's sense (maximize: the maximum).

    Attributes:
        x: the best point found (inside the bounds).
        fun: its objective value.
        evaluations: objective evaluations used (never more than the budget; n term
            evaluations of a separable objective count as one).
        iterations: engine iterations (ask/tell rounds).
        status: ``converged``, ``target_reached``, ``max_evaluations``, ``time_limit``
            or ``stopped`` (by the callback or the monitor; ``message`` says which);
            ``interrupted`` only on the ``result`` of a ``KeyboardInterrupt``.
        message: a human explanation of the status.
        elapsed: wall seconds.
        history: ``(evaluations, best)`` at each improvement and at the end (bounded).
        engine: the engine id.  seed: the seed used (replays the run).
        goal: ``minimize`` or ``maximize``.  gradients: gradient evaluations among them.
    """

    x: NDArray[np.float64]
    fun: float
    evaluations: int
    iterations: int
    status: str
    message: str
    elapsed: float
    history: list[tuple[int, float]] = field(repr=False)
    engine: str
    seed: int
    goal: str
    gradients: int = 0

    @property
    def success(self) -> bool:
        """True when the engine converged or reached the target."""
        return self.status in ("converged", "target_reached")


def engines() -> list[dict[str, Any]]:
    """Metadata of every engine: id, name, summary, kind, max_dims, options (name,
    default, min, max, integer, description)."""
    return _engine.engines()


def default_engine() -> str:
    """The id of the default engine."""
    return str(_engine.default_engine())


class Problem(NamedTuple):
    """One fault of an optimization request, as :func:`problems` reports it.

    ``path`` is where it is (``("bounds", 3)``, ``("options", "popsize")``, ``()`` for the
    whole request), ``code`` a stable machine code (those of :class:`EngineError`),
    ``message`` a human explanation."""

    path: tuple[str | int, ...]
    code: str
    message: str

    @property
    def pointer(self) -> str:
        """The RFC 6901 JSON pointer of :attr:`path` in a request body: ``/bounds/3``."""
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in self.path)

    @property
    def field(self) -> str:
        """:attr:`path` as :attr:`EngineError.field` writes it: ``bounds[3]``,
        ``options.popsize`` (``""`` for the whole request)."""
        out = ""
        for p in self.path:
            out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
        return out

    def error(self) -> EngineError:
        """This fault as the :class:`EngineError` that :func:`optimize` raises."""
        return EngineError(self.code, self.message, self.field or None)


@dataclass(frozen=True)
class _Checked:
    """What :func:`_check` found: the faults, and the parsed arguments when there are none."""

    problems: list[Problem]
    bounds: Any
    """an (n, 2) array or a list of n pairs"""
    engine: str
    options: dict[str, float]


_NO_BOUNDS = np.empty((0, 2), dtype=np.float64)


def _is_real(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(
        value, (int, float, np.integer, np.floating)
    )


def _is_float(value: Any) -> bool:
    """True when ``float(value)`` works (an int may be beyond a float's range)."""
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _pair_problem(j: int, lo: float, hi: float) -> Problem | None:
    where = ("bounds", j)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return Problem(where, "invalid_bounds", f"bounds[{j}] must be finite, got [{lo}, {hi}]")
    if lo > hi:
        return Problem(where, "invalid_bounds",
                       f"bounds[{j}]: the lower bound {lo} is above the upper bound {hi}")
    if not math.isfinite(hi - lo):
        return Problem(where, "invalid_bounds", f"bounds[{j}]: the interval is too wide")
    return None


def _pairwise(bounds: list[Any] | tuple[Any, ...]) -> list[Problem]:
    """Each pair on its own, for bounds that are not an (n, 2) array of numbers."""
    out: list[Problem] = []
    for j, pair in enumerate(bounds):
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(map(_is_real, pair)):
            found = _pair_problem(j, float(pair[0]), float(pair[1]))
        else:
            found = Problem(("bounds", j), "invalid_bounds",
                            f"bounds[{j}] must be a pair of numbers [lower, upper]")
        if found is not None:
            out.append(found)
    return out


def _python_pairs(bounds: list[Any] | tuple[Any, ...]) -> list[Problem] | None:
    """The faults of a list of ``[lower, upper]`` pairs of Python numbers, checked in Python
    (cheaper than NumPy's conversion of a list: ~0.2 µs a pair against ~0.35, and no fixed
    cost); ``None`` when an item is anything else (NumPy's path then decides)."""
    found: list[Problem] = []
    isfinite = math.isfinite
    for j, pair in enumerate(bounds):
        if type(pair) is not list and type(pair) is not tuple or len(pair) != 2:
            return None
        lo, hi = pair
        if (type(lo) is not float and type(lo) is not int) or (
                type(hi) is not float and type(hi) is not int):
            return None
        try:
            width = float(hi) - float(lo)  # finite and >= 0 exactly when both are finite
        except OverflowError:              # and in order
            return None
        if not (width >= 0 and isfinite(width)):
            problem = _pair_problem(j, float(lo), float(hi))
            if problem is not None:
                found.append(problem)
    return found


def _bounds(bounds: ArrayLike) -> tuple[list[Problem], Any]:
    """The faults of ``bounds`` and, when there are none, the bounds (an (n, 2) array, or
    the list of pairs as given)."""
    if isinstance(bounds, (list, tuple)) and bounds:
        found = _python_pairs(bounds)
        if found is not None:
            return found, None if found else bounds
    try:
        b = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(bounds, (list, tuple)) and bounds:
            return _pairwise(bounds), None
        return [Problem(("bounds",), "invalid_bounds",
                        f"bounds must be a list of [lower, upper] pairs: {exc}")], None
    if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] == 0:
        return [Problem(("bounds",), "invalid_bounds",
                        f"bounds must have shape (n, 2) with n >= 1, got shape {b.shape}")], None
    lo, hi = b[:, 0], b[:, 1]
    with np.errstate(over="ignore", invalid="ignore"):
        width = hi - lo  # finite and >= 0 exactly when both are finite and in order
        ok = np.isfinite(width) & (width >= 0)
    if ok.all():
        return [], b
    faults = (_pair_problem(int(j), float(lo[j]), float(hi[j])) for j in np.flatnonzero(~ok))
    return [p for p in faults if p is not None], None


@cache
def _engine_table() -> dict[str, dict[str, Any]]:
    """``{engine id: metadata}`` of the registry (read once)."""
    return {e["id"]: e for e in _engine.engines()}


def _options(info: dict[str, Any], options: Any) -> tuple[list[Problem], dict[str, float]]:
    if options is None:
        return [], {}
    if not isinstance(options, Mapping):
        return [Problem(("options",), "invalid_option", "options must be a mapping of "
                                                        "option names to numbers")], {}
    found: list[Problem] = []
    out: dict[str, float] = {}
    specs = {o["name"]: o for o in info["options"]}
    for name, value in options.items():
        where = ("options", str(name))
        spec = specs.get(name)
        if spec is None:
            known = ", ".join(specs) or "none"
            found.append(Problem(where, "invalid_option", f"unknown option {name!r} for engine "
                                                          f"{info['id']!r} (options: {known})"))
        elif not _is_real(value):
            found.append(Problem(where, "invalid_option", f"option {name!r} must be a number"))
        elif not (spec["min"] <= value <= spec["max"]) or (
                spec["integer"] and float(value) != int(value)):
            kind = "an integer" if spec["integer"] else "a number"
            found.append(Problem(where, "invalid_option",
                                 f"option {name!r} of engine {info['id']!r} must be {kind} "
                                 f"between {spec['min']} and {spec['max']}, got {value!r}"))
        else:
            out[name] = float(value)
    return found, out


#: The largest budget a run takes (the driver counts evaluations in 64 bits).
MAX_EVALUATIONS = 2**63 - 1


def _positive(name: str, value: Any, integer: bool) -> Problem | None:
    if not _is_real(value):
        return Problem((name,), "invalid_argument", f"{name} must be a number, got {value!r}")
    if integer and isinstance(value, (int, np.integer)) and int(value) > MAX_EVALUATIONS:
        return Problem((name,), "invalid_argument",
                       f"{name} must be at most 2**63 - 1, got {value!r}")
    v = float(value) if _is_float(value) else math.inf
    if not math.isfinite(v) or v <= 0 or (integer and v != int(v)) or (
            integer and not isinstance(value, (int, np.integer)) and v >= 2.0**63):
        kind = "a positive integer" if integer else "a positive number"
        return Problem((name,), "invalid_argument", f"{name} must be {kind}, got {value!r}")
    return None


def _goal(goal: Any) -> list[Problem]:
    if goal in ("minimize", "maximize"):
        return []
    return [Problem(("goal",), "invalid_argument",
                    f"goal must be 'minimize' or 'maximize', got {goal!r}")]


def _scalars(max_evaluations: Any, time_limit: Any, target: Any, seed: Any) -> list[Problem]:
    found: list[Problem | None] = []
    if max_evaluations is not None:
        found.append(_positive("max_evaluations", max_evaluations, True))
    if time_limit is not None:
        found.append(_positive("time_limit", time_limit, False))
    if target is not None and (not _is_real(target) or not _is_float(target)
                               or math.isnan(float(target))):
        found.append(Problem(("target",), "invalid_argument",
                             "target must be a number (not NaN, within the range of a float)"))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                             or not 0 <= int(seed) < SEED_END):
        found.append(Problem(("seed",), "invalid_argument",
                             "seed must be an integer in [0, 2**64)"))
    return [p for p in found if p is not None]


def _check(
    bounds: Any, *, goal: Any = "minimize", engine: Any = None, max_evaluations: Any = None,
    time_limit: Any = None, target: Any = None, seed: Any = None, options: Any = None,
) -> _Checked:
    found = _goal(goal)
    bound_faults, b = _bounds(bounds)
    found += bound_faults
    engine_id = default_engine() if engine is None else engine
    info = _engine_table().get(engine_id) if isinstance(engine_id, str) else None
    opts: dict[str, float] = {}
    if info is None:
        known = ", ".join(_engine_table())
        found.append(Problem(("engine",), "unknown_engine",
                             f"unknown engine {engine_id!r}; engines: {known}"))
    else:
        n = len(b) if b is not None else len(bounds) if isinstance(bounds, (list, tuple)) \
            else None
        if n is not None and info["max_dims"] is not None and n > info["max_dims"]:
            found.append(Problem(("bounds",), "invalid_argument",
                                 f"engine {engine_id!r} handles at most {info['max_dims']} "
                                 f"dimensions, got {n}"))
        option_faults, opts = _options(info, options)
        found += option_faults
    found += _scalars(max_evaluations, time_limit, target, seed)
    if found or b is None:
        return _Checked(found, _NO_BOUNDS, str(engine_id), {})
    return _Checked([], b, engine_id, opts)


def problems(
    bounds: Any,
    *,
    goal: Any = "minimize",
    engine: Any = None,
    max_evaluations: Any = None,
    time_limit: Any = None,
    target: Any = None,
    seed: Any = None,
    options: Any = None,
) -> list[Problem]:
    """Every fault of these :func:`optimize` arguments (the objective aside), in the order
    :func:`optimize` checks them; ``[]`` when it would start the run.

    The one check of bounds (finite, ``lower <= upper``, a finite width), the engine (known,
    ``len(bounds)`` within its ``max_dims``), its options (known names, within their ranges,
    integral where the engine says so), the goal, budgets and seed. :func:`optimize` raises
    the first as an :class:`EngineError`; the HTTP service lists them all."""
    return _check(bounds, goal=goal, engine=engine, max_evaluations=max_evaluations,
                  time_limit=time_limit, target=target, seed=seed, options=options).problems


def optimize(
    objective: Objective,
    bounds: ArrayLike,
    *,
    goal: str = "minimize",
    engine: str | None = None,
    max_evaluations: int | None = None,
    time_limit: float | None = None,
    target: float | None = None,
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    callback: Callable[[dict[str, Any]], Any] | None = None,
    vectorized: bool = False,
    monitor: RunMonitor | None = None,
    stop_on_convergence: bool | None = None,
) -> OptimizeResult:
    """Optimize ``objective`` over the box ``bounds`` (``goal`` = minimize | maximize).

    ``objective`` is an expression string (compiled with ``n = len(bounds)``), a
    :class:`decido.Expression`, a callable ``f(x) -> float``, or with ``vectorized=True``
    a callable ``f(X) -> array`` over a population ``X`` of shape ``(P, n)``.
    Stops at ``max_evaluations`` (default ``max(10000, 2000 n)``), ``time_limit``
    seconds, once the best value reaches ``target``, when the engine converges,
    when ``callback(progress)`` returns a truthy value, or when ``monitor.stop()``
    was called (a :class:`decido.RunMonitor`: progress and stop from any thread,
    without the GIL; see its docstring).  ``seed=None`` draws a seed,
    reported in the result.  ``stop_on_convergence=False`` (the option of the same name,
    which every engine takes) spends the whole budget: an engine that converged starts
    again.  Invalid arguments raise :class:`decido.EngineError` or
    :class:`decido.ExpressionError` (both ``ValueError``) before any work starts.

    Ctrl-C (``KeyboardInterrupt``) stops a run within about 10 ms, also one that runs in
    C; the exception carries the best point so far as ``exc.result``, an
    :class:`OptimizeResult` with status ``interrupted``.
    """
    if stop_on_convergence is not None:
        if not isinstance(stop_on_convergence, bool):
            raise EngineError("invalid_argument", "stop_on_convergence must be True or False",
                              "stop_on_convergence")
        if options is None or isinstance(options, Mapping):
            options = {**(options or {}), "stop_on_convergence": int(stop_on_convergence)}
    checked = _check(bounds, goal=goal, engine=engine, max_evaluations=max_evaluations,
                     time_limit=time_limit, target=target, seed=seed, options=options)
    if checked.problems:
        raise checked.problems[0].error()
    engine_id, opts = checked.engine, checked.options
    b = np.asarray(checked.bounds, dtype=np.float64)
    lower, upper = np.ascontiguousarray(b[:, 0]), np.ascontiguousarray(b[:, 1])
    n = lower.shape[0]
    if isinstance(objective, str):
        program: Any = Expression(objective, n=n)._program
    elif isinstance(objective, Expression):
        if objective.n != n:
            what = f"n={objective.n}" if objective.n else "no vector x"
            raise EngineError(
                "invalid_argument",
                f"the expression has {what} but there are {n} bounds",
                "objective",
            )
        program = objective._program
    elif callable(objective):
        program = objective
    else:
        raise EngineError(
            "invalid_argument",
            "objective must be an expression string, a decido.Expression or a callable",
            "objective",
        )
    budget = (
        max(MIN_DEFAULT_EVALUATIONS, DEFAULT_EVALUATIONS_PER_DIM * n)
        if max_evaluations is None
        else int(max_evaluations)
    )
    limit = 0.0 if time_limit is None else float(time_limit)
    if seed is None:
        seed = secrets.randbits(63)
    if callback is not None and not callable(callback):
        raise EngineError("invalid_argument", "callback must be callable", "callback")
    if monitor is not None and not isinstance(monitor, RunMonitor):
        raise EngineError(
            "invalid_argument",
            f"monitor must be a decido.RunMonitor, got {type(monitor).__name__}",
            "monitor",
        )
    try:
        out = _engine.run(
            engine_id,
            lower,
            upper,
            program,
            bool(vectorized),
            goal == "maximize",
            budget,
            limit,
            None if target is None else float(target),
            int(seed),
            opts,
            callback,
            _HISTORY,
            monitor,
        )
    except KeyboardInterrupt as exc:
        partial = getattr(exc, "result", None)
        if isinstance(partial, dict):  # the run in C was interrupted: its best so far
            partial.update(status="interrupted", message="interrupted (KeyboardInterrupt)")
            exc.result = _result(partial, engine_id, int(seed), goal)  # type: ignore[attr-defined]
        raise
    return _result(out, engine_id, int(seed), goal)


def _result(out: dict[str, Any], engine: str, seed: int, goal: str) -> OptimizeResult:
    return OptimizeResult(
        x=out["x"],
        fun=float(out["fun"]),
        evaluations=int(out["evaluations"]),
        iterations=int(out["iterations"]),
        status=out["status"],
        message=out["message"],
        elapsed=float(out["elapsed"]),
        history=out["history"],
        engine=engine,
        seed=seed,
        goal=goal,
        gradients=int(out["gradients"]),
    )


def minimize(objective: Objective, bounds: ArrayLike, **kwargs: Any) -> OptimizeResult:
    """Minimize ``objective`` over ``bounds``; see :func:`optimize` for the arguments."""
    return optimize(objective, bounds, goal="minimize", **kwargs)


def maximize(objective: Objective, bounds: ArrayLike, **kwargs: Any) -> OptimizeResult:
    """Maximize ``objective`` over ``bounds``; see :func:`optimize` for the arguments."""
    return optimize(objective, bounds, goal="maximize", **kwargs)


