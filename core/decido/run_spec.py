"""One run specification: the keywords of a run, one objective or several, written once.

:class:`RunSpec` holds them, each field with its default and a one-line doc; its metadata
says which runs take it (``scope``: every run, or only a run of several objectives),
whether it only means something on this machine (``local``: a callback, a monitor, a
vectorized callable) and whether a request to a server carries it as a member
(``wire``). Everything else is derived from it: the signatures ``help()`` shows of
``decido.optimize``/``minimize``/``maximize``/``optimize_front``, the keyword check
(:meth:`RunSpec.of`), the checks of the values (:func:`value_problems`,
:func:`front_problems`), the Cython call's arguments (:meth:`RunSpec.engine_arguments`),
the keywords the client sends, the mapping of the service's request onto the library's
call and the CLI's options of a front (docs/architecture.md, "Where each fact lives").

The static types of the keywords (:class:`RunKeywords`, :class:`FrontKeywords` and the
mixins the client extends) are TypedDicts, which a type checker cannot derive from a
dataclass: they sit beside it and tests/engines/test_library_front_door.py holds them equal.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypedDict

import numpy as np
from numpy.typing import ArrayLike

from decido import _engine
from decido._engine import RunMonitor
from decido._problem import Problem, is_float, is_real
from decido.decisions.faults import did_you_mean
from decido.errors import EngineError

__all__ = ["DEFAULT_ARCHIVE_SIZE", "DEFAULT_EVALUATIONS_PER_DIM", "MAX_ARCHIVE",
           "MAX_EVALUATIONS", "MIN_DEFAULT_EVALUATIONS", "SEED_END", "FrontKeywords",
           "FrontOnlyKeywords", "RunKeywords", "RunSpec", "Scope", "SharedKeywords",
           "check_hooks", "fields", "front_problems", "keyword_names", "only_for_several",
           "value_problems", "with_stop_option"]

#: Budget when max_evaluations is None: 2,000 evaluations per dimension, at least 10,000.
DEFAULT_EVALUATIONS_PER_DIM = 2000
MIN_DEFAULT_EVALUATIONS = 10_000
#: The largest budget a run takes (the driver counts evaluations in 64 bits).
MAX_EVALUATIONS = 2**63 - 1
#: Seeds are integers in ``[0, SEED_END)`` (64 bits).
SEED_END = 2**64
#: The front's size cap when none is given (the C core's DC_DEFAULT_ARCHIVE).
DEFAULT_ARCHIVE_SIZE: int = _engine.DEFAULT_ARCHIVE
#: The largest front cap.
MAX_ARCHIVE = 100_000

#: which runs take a keyword: every run, or only a run of several objectives
Scope = Literal["every", "several"]


def _kw(doc: str, *, scope: Scope = "every", local: bool = False, wire: bool = True,
        default: Any = None) -> Any:
    """A field of :class:`RunSpec`: its default, one-line ``doc``, ``scope``, whether it
    is ``local`` (a Python object a server cannot take) and whether a request to a server
    carries it as a member of its own (``wire``)."""
    return dataclasses.field(default=default, metadata={
        "doc": doc, "scope": scope, "local": local, "wire": wire and not local})


@dataclass(frozen=True)
class RunSpec:
    """The keywords of a run but ``goal`` (the objective and the box are the run's own
    arguments), in the order the signatures show them."""

    engine: str | None = _kw("an engine id of decido.engines() (default: chosen for the run)")
    max_evaluations: int | None = _kw("most evaluations (default max(10000, 2000 n))")
    time_limit: float | None = _kw("seconds")
    target: float | None = _kw(
        "stop once the best value is this good (a run of several refuses it)")
    seed: int | None = _kw("replays a run (drawn and reported when absent)")
    options: Mapping[str, Any] | None = _kw("the engine's options by name")
    callback: Callable[[dict[str, Any]], Any] | None = _kw(
        "called with the progress; a truthy answer stops the run", local=True)
    vectorized: bool = _kw("the callable objective takes a population (P, n)", local=True,
                           default=False)
    monitor: RunMonitor | None = _kw("progress and stop from any thread", local=True)
    # on the wire: the engine option of the same name (options), not a member of its own
    stop_on_convergence: bool | None = _kw(
        "False spends the whole budget (a converged engine starts again)", wire=False)
    constraints: list[str] | None = _kw("'[name:] lhs <= rhs' (or >=, ==) over x")
    constraint_tolerance: float | None = _kw("largest violation that counts as feasible")
    integers: list[int] | None = _kw("indices of x that take integer values")
    variables: list[dict[str, Any]] | None = _kw("named variables instead of bounds")
    x0: ArrayLike | None = _kw("a start point or a list of them")
    reference_point: ArrayLike | None = _kw(
        "the hypervolume's reference point, one value each", scope="several")
    archive_size: int | None = _kw(
        f"the most points the front keeps (default {DEFAULT_ARCHIVE_SIZE})", scope="several")

    @classmethod
    def of(cls, function: str, given: Mapping[str, Any], several: bool) -> RunSpec:
        """The spec of ``function``'s keyword arguments ``given``; one it does not take
        (or that only the other kind of run takes) raises :class:`TypeError` naming it."""
        known = keyword_names(several=several)
        for name in given:
            if name not in known:
                hint = (" (it is for a run of several objectives: a list of them)"
                        if name in keyword_names(several=True) else did_you_mean(name, known))
                raise TypeError(f"{function}() got an unexpected keyword argument "
                                f"{name!r}{hint}")
        return cls(**given)

    def budget(self, n: int) -> int:
        """The run's budget: ``max_evaluations``, else ``max(10000, 2000 n)``."""
        if self.max_evaluations is None:
            return max(MIN_DEFAULT_EVALUATIONS, DEFAULT_EVALUATIONS_PER_DIM * n)
        return int(self.max_evaluations)

    def engine_arguments(self, n: int) -> dict[str, Any]:
        """The keyword arguments of ``_engine.run`` that come from the spec (a run over
        ``n`` dimensions; the checked engine, options and design are the caller's)."""
        return {
            "vectorized": bool(self.vectorized), "max_evaluations": self.budget(n),
            "time_limit": 0.0 if self.time_limit is None else float(self.time_limit),
            "target": None if self.target is None else float(self.target),
            "callback": self.callback, "monitor": self.monitor,
            "reference_point": None if self.reference_point is None else np.array(
                self.reference_point, dtype=np.float64),
            "archive_capacity": DEFAULT_ARCHIVE_SIZE if self.archive_size is None
            else int(self.archive_size),
        }


def fields(*, several: bool | None = None, local: bool = True, wire: bool = False
           ) -> Iterator[dataclasses.Field[Any]]:
    """The fields of :class:`RunSpec` a run takes (``several``: of several objectives,
    False: of one; None: every field), without the ``local`` ones when ``local`` is False,
    only the members of a request to a server when ``wire``."""
    for f in dataclasses.fields(RunSpec):
        if several is False and f.metadata["scope"] == "several":
            continue
        if (f.metadata["local"] and not local) or (wire and not f.metadata["wire"]):
            continue
        yield f


@cache
def keyword_names(*, several: bool | None = None, local: bool = True, wire: bool = False
                  ) -> tuple[str, ...]:
    """The names of :func:`fields`, in order (computed once per question: a run asks
    twice)."""
    return tuple(f.name for f in fields(several=several, local=local, wire=wire))


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


class FrontOnlyKeywords(TypedDict, total=False):
    """The keyword arguments only a run of several objectives takes."""

    reference_point: ArrayLike | None
    archive_size: int | None


class RunKeywords(SharedKeywords, total=False):
    """The keyword arguments of a run but ``goal``, as ``decido.optimize`` takes them (its
    docstring says what each does): the type of ``decido.minimize``'s and ``maximize``'s
    ``**kwargs``, so a type checker and an IDE know them."""

    target: float | None
    options: Mapping[str, Any] | None
    callback: Callable[[dict[str, Any]], Any] | None
    vectorized: bool
    monitor: RunMonitor | None


class FrontKeywords(RunKeywords, FrontOnlyKeywords, total=False):
    """:class:`RunKeywords` and those of a run of several objectives."""


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


def _positive(name: str, value: Any, integer: bool) -> Problem | None:
    if not is_real(value):
        return Problem((name,), "invalid_argument", f"{name} must be a number, got {value!r}")
    if integer and isinstance(value, (int, np.integer)) and int(value) > MAX_EVALUATIONS:
        return Problem((name,), "invalid_argument",
                       f"{name} must be at most 2**63 - 1, got {value!r}")
    v = float(value) if is_float(value) else math.inf
    if not math.isfinite(v) or v <= 0 or (integer and v != int(v)) or (
            integer and not isinstance(value, (int, np.integer)) and v >= 2.0**63):
        kind = "a positive integer" if integer else "a positive number"
        return Problem((name,), "invalid_argument", f"{name} must be {kind}, got {value!r}")
    return None


def value_problems(max_evaluations: Any, time_limit: Any, target: Any, seed: Any
                   ) -> list[Problem]:
    """The faults of a run's budgets, target and seed (every run's numbers)."""
    found: list[Problem | None] = []
    if max_evaluations is not None:
        found.append(_positive("max_evaluations", max_evaluations, True))
    if time_limit is not None:
        found.append(_positive("time_limit", time_limit, False))
    if target is not None and (not is_real(target) or not is_float(target)
                               or math.isnan(float(target))):
        found.append(Problem(("target",), "invalid_argument",
                             "target must be a number (not NaN, within the range of a float)"))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                             or not 0 <= int(seed) < SEED_END):
        found.append(Problem(("seed",), "invalid_argument",
                             "seed must be an integer in [0, 2**64)"))
    return [p for p in found if p is not None]


def front_problems(m: int, get: Callable[[str], Any]) -> list[Problem]:
    """Faults of the arguments that differ on a run of ``m`` objectives (``get(name)``:
    a keyword's value, None when absent): the engine must take several, ``target`` does
    not apply, the front's own keywords are checked (the service checks a request with it
    before admitting the run)."""
    found: list[Problem] = []
    table = {e["id"]: e for e in _engine.engines()}
    engine = get("engine")
    if isinstance(engine, str) and engine in table and not table[engine]["supports"][
            "objectives"]:
        able = ", ".join(i for i, e in table.items() if e["supports"]["objectives"])
        found.append(Problem(("engine",), "invalid_argument",
                             f"engine {engine!r} takes one objective; engines that take "
                             f"several: {able}"))
    if get("target") is not None:
        found.append(Problem(("target",), "invalid_argument",
                             "target does not apply to several objectives"))
    reference_point, archive_size = get("reference_point"), get("archive_size")
    if reference_point is not None:
        if not isinstance(reference_point, (list, tuple, np.ndarray)) or \
                len(reference_point) != m:
            found.append(Problem(("reference_point",), "invalid_argument",
                                 f"reference_point must be a list of {m} numbers, one per "
                                 "objective"))
        else:
            found += [Problem(("reference_point", j), "invalid_argument",
                              f"reference_point[{j}] must be a finite number, got {v!r}")
                      for j, v in enumerate(reference_point)
                      if not (is_real(v) and math.isfinite(float(v)))]
    if archive_size is not None and (
            not isinstance(archive_size, (int, np.integer)) or isinstance(archive_size, bool)
            or not 1 <= int(archive_size) <= MAX_ARCHIVE):
        found.append(Problem(("archive_size",), "invalid_argument",
                             f"archive_size must be an integer in [1, {MAX_ARCHIVE}]"))
    return found


def only_for_several(get: Callable[[str], Any]) -> list[str]:
    """The keywords given (``get(name)`` not None) that only a run of several objectives
    takes, in order."""
    return [f.name for f in fields() if f.metadata["scope"] == "several"
            and get(f.name) is not None]
