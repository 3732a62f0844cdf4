"""``decido.minimize`` / ``maximize``: engines in C behind one driver."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from decido import _engine
from decido._engine import RunMonitor
from decido.errors import EngineError
from decido.expression import Expression

__all__ = [
    "OptimizeResult",
    "RunMonitor",
    "default_engine",
    "engines",
    "maximize",
    "minimize",
    "optimize",
]

Objective = str | Expression | Callable[..., Any]

#: Budget when max_evaluations is None: 2,000 evaluations per dimension, at least 10,000.
DEFAULT_EVALUATIONS_PER_DIM = 2000
MIN_DEFAULT_EVALUATIONS = 10_000
_HISTORY = 512


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
            or ``stopped`` (by the callback or the monitor; ``message`` says which).
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


def _bounds(bounds: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    try:
        b = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EngineError(
            "invalid_bounds", f"bounds must be a list of [lower, upper] pairs: {exc}", "bounds"
        ) from None
    if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] == 0:
        raise EngineError(
            "invalid_bounds",
            f"bounds must have shape (n, 2) with n >= 1, got shape {b.shape}",
            "bounds",
        )
    for j, (lo, hi) in enumerate(b):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise EngineError(
                "invalid_bounds", f"bounds[{j}] must be finite, got [{lo}, {hi}]", f"bounds[{j}]"
            )
        if lo > hi:
            raise EngineError(
                "invalid_bounds",
                f"bounds[{j}]: the lower bound {lo} is above the upper bound {hi}",
                f"bounds[{j}]",
            )
        if not math.isfinite(float(hi) - float(lo)):
            raise EngineError(
                "invalid_bounds", f"bounds[{j}]: the interval is too wide", f"bounds[{j}]"
            )
    return np.ascontiguousarray(b[:, 0]), np.ascontiguousarray(b[:, 1])


def _engine_info(engine: str) -> dict[str, Any]:
    for info in _engine.engines():
        if info["id"] == engine:
            return info
    known = ", ".join(e["id"] for e in _engine.engines())
    raise EngineError("unknown_engine", f"unknown engine {engine!r}; engines: {known}", "engine")


def _options(info: dict[str, Any], options: Mapping[str, Any] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    specs = {o["name"]: o for o in info["options"]}
    for name, value in (options or {}).items():
        if name not in specs:
            known = ", ".join(specs) or "none"
            raise EngineError(
                "invalid_option",
                f"unknown option {name!r} for engine {info['id']!r} (options: {known})",
                f"options.{name}",
            )
        spec = specs[name]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise EngineError(
                "invalid_option", f"option {name!r} must be a number", f"options.{name}"
            )
        v = float(value)
        if not (spec["min"] <= v <= spec["max"]) or (spec["integer"] and v != int(v)):
            kind = "an integer" if spec["integer"] else "a number"
            raise EngineError(
                "invalid_option",
                f"option {name!r} of engine {info['id']!r} must be {kind} between "
                f"{spec['min']} and {spec['max']}, got {value!r}",
                f"options.{name}",
            )
        out[name] = v
    return out


def _positive(name: str, value: Any, integer: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise EngineError("invalid_argument", f"{name} must be a number, got {value!r}", name)
    v = float(value)
    if not math.isfinite(v) or v <= 0 or (integer and v != int(v)):
        kind = "a positive integer" if integer else "a positive number"
        raise EngineError("invalid_argument", f"{name} must be {kind}, got {value!r}", name)
    return v


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
    reported in the result.  Invalid arguments raise :class:`decido.EngineError` or
    :class:`decido.ExpressionError` (both ``ValueError``) before any work starts.
    """
    if goal not in ("minimize", "maximize"):
        raise EngineError(
            "invalid_argument", f"goal must be 'minimize' or 'maximize', got {goal!r}", "goal"
        )
    lower, upper = _bounds(bounds)
    n = lower.shape[0]
    engine_id = default_engine() if engine is None else engine
    if not isinstance(engine_id, str):
        raise EngineError("unknown_engine", "engine must be a string", "engine")
    info = _engine_info(engine_id)
    if info["max_dims"] is not None and n > info["max_dims"]:
        raise EngineError(
            "invalid_argument",
            f"engine {engine_id!r} handles at most {info['max_dims']} dimensions, got {n}",
            "bounds",
        )
    opts = _options(info, options)
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
        else int(_positive("max_evaluations", max_evaluations, True))
    )
    limit = 0.0 if time_limit is None else _positive("time_limit", time_limit, False)
    if target is not None:
        if isinstance(target, bool) or not isinstance(target, (int, float, np.number)):
            raise EngineError("invalid_argument", "target must be a number", "target")
        if math.isnan(float(target)):
            raise EngineError("invalid_argument", "target must not be NaN", "target")
    if seed is None:
        seed = secrets.randbits(63)
    elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not (
        0 <= int(seed) < 2**64
    ):
        raise EngineError("invalid_argument", "seed must be an integer in [0, 2**64)", "seed")
    if callback is not None and not callable(callback):
        raise EngineError("invalid_argument", "callback must be callable", "callback")
    if monitor is not None and not isinstance(monitor, RunMonitor):
        raise EngineError(
            "invalid_argument",
            f"monitor must be a decido.RunMonitor, got {type(monitor).__name__}",
            "monitor",
        )
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
    return OptimizeResult(
        x=out["x"],
        fun=float(out["fun"]),
        evaluations=int(out["evaluations"]),
        iterations=int(out["iterations"]),
        status=out["status"],
        message=out["message"],
        elapsed=float(out["elapsed"]),
        history=out["history"],
        engine=engine_id,
        seed=int(seed),
        goal=goal,
        gradients=int(out["gradients"]),
    )


def minimize(objective: Objective, bounds: ArrayLike, **kwargs: Any) -> OptimizeResult:
    """Minimize ``objective`` over ``bounds``; see :func:`optimize` for the arguments."""
    return optimize(objective, bounds, goal="minimize", **kwargs)


def maximize(objective: Objective, bounds: ArrayLike, **kwargs: Any) -> OptimizeResult:
    """Maximize ``objective`` over ``bounds``; see :func:`optimize` for the arguments."""
    return optimize(objective, bounds, goal="maximize", **kwargs)


