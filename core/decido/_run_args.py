"""Arguments every run takes, one objective or several: their keywords as types
(:class:`RunKeywords`, :class:`FrontKeywords`: what ``decido.minimize`` and ``maximize``
show), the budget's default, the ``stop_on_convergence`` keyword, the callback and the
monitor."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypedDict

from numpy.typing import ArrayLike

from decido._engine import RunMonitor
from decido.errors import EngineError

__all__ = ["DEFAULT_EVALUATIONS_PER_DIM", "MIN_DEFAULT_EVALUATIONS", "FrontKeywords",
           "RunKeywords", "SharedKeywords", "check_hooks", "run_budget", "with_stop_option"]

#: Budget when max_evaluations is None: 2,000 evaluations per dimension, at least 10,000.
DEFAULT_EVALUATIONS_PER_DIM = 2000
MIN_DEFAULT_EVALUATIONS = 10_000


class SharedKeywords(TypedDict, total=False):
    """The keyword arguments a run takes, one objective or several, on this machine or on
    a server (``decido.Client``'s run methods: :mod:`decido.client._ops`)."""

    engine: str | None
    max_evaluations: int | None
    time_limit: float | None
    seed: int | None
    stop_on_convergence: bool | None
    constraints: list[str] | None
    constraint_tolerance: float | None
    integers: list[int] | None
    variables: list[dict[str, Any]] | None
    x0: ArrayLike | None


class RunKeywords(SharedKeywords, total=False):
    """The keyword arguments of a run but ``goal``, as ``decido.optimize`` takes them (its
    docstring says what each does): the type of ``decido.minimize``'s and ``maximize``'s
    ``**kwargs``, so a type checker and an IDE know them
    (tests/engines/test_library_front_door.py holds the two equal)."""

    target: float | None
    options: Mapping[str, Any] | None
    callback: Callable[[dict[str, Any]], Any] | None
    vectorized: bool
    monitor: RunMonitor | None


class FrontKeywords(RunKeywords, total=False):
    """:class:`RunKeywords` and those of a run of several objectives
    (``decido.pareto.optimize_front``)."""

    reference_point: ArrayLike | None
    archive_size: int | None


def with_stop_option(options: Any, stop_on_convergence: Any) -> Any:
    """``options`` with the run option ``stop_on_convergence`` set from the keyword."""
    if stop_on_convergence is None:
        return options
    if not isinstance(stop_on_convergence, bool):
        raise EngineError("invalid_argument", "stop_on_convergence must be True or False",
                          "stop_on_convergence")
    if options is None or isinstance(options, Mapping):
        return {**(options or {}), "stop_on_convergence": int(stop_on_convergence)}
    return options


def run_budget(max_evaluations: int | None, n: int) -> int:
    """The run's budget: ``max_evaluations``, else ``max(10000, 2000 n)``."""
    if max_evaluations is None:
        return max(MIN_DEFAULT_EVALUATIONS, DEFAULT_EVALUATIONS_PER_DIM * n)
    return int(max_evaluations)


def check_hooks(callback: Any, monitor: Any) -> None:
    """Raise :class:`EngineError` for a callback that is not callable or a monitor that
    is not a :class:`RunMonitor`."""
    if callback is not None and not callable(callback):
        raise EngineError("invalid_argument", "callback must be callable", "callback")
    if monitor is not None and not isinstance(monitor, RunMonitor):
        raise EngineError(
            "invalid_argument",
            f"monitor must be a decido.RunMonitor, got {type(monitor).__name__}",
            "monitor",
        )
