"""``decido.minimize`` / ``maximize``: engines in C behind one driver.

One path for every run: the keywords are a :class:`decido.run_spec.RunSpec` (their names,
defaults and the signatures ``help()`` shows come from it), checked once (:func:`_check`),
then a run of one objective or, for a list of them, a run of several (its front:
:mod:`decido.pareto` holds what only a front needs) calls ``_engine.run`` with the
arguments the spec gives."""

from __future__ import annotations

import dataclasses
import inspect
import math
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from decido import _engine
from decido._engine import RunMonitor
from decido._problem import Problem, engine_error
from decido._problem import is_real as _is_real
from decido.decisions.faults import did_you_mean
from decido.design import Constraint, Design, compile_constraints, design_problems
from decido.errors import EngineError
from decido.expression import Expression
from decido.goals import goal_name, goal_problem
from decido.objectives import ObjectiveSpec, compile_objectives, objective_problems
from decido.pareto import (
    ParetoResult,
    default_multi_engine,
    front_callable,
    front_result,
    reference_problems,
)
from decido.run_spec import (
    DEFAULT_EVALUATIONS_PER_DIM,
    MIN_DEFAULT_EVALUATIONS,
    SEED_END,
    FrontKeywords,
    RunKeywords,
    RunSpec,
    check_hooks,
    front_problems,
    keyword_names,
    value_problems,
    with_stop_option,
)
from decido.status import SUCCESSFUL, Status, engine_stop

__all__ = [
    "DEFAULT_EVALUATIONS_PER_DIM",
    "MIN_DEFAULT_EVALUATIONS",
    "SEED_END",
    "OptimizeResult",
    "ParetoResult",
    "Problem",
    "RunMonitor",
    "default_engine",
    "engines",
    "maximize",
    "minimize",
    "optimize",
    "optimize_front",
    "problems",
]

if TYPE_CHECKING:  # typing.Unpack is 3.11+
    from typing_extensions import Unpack

Objective = str | Expression | Callable[..., Any]
F = TypeVar("F", bound=Callable[..., Any])

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
            or ``stopped`` (by the callback or the monitor; ``message`` says which);
            ``interrupted`` only on the ``result`` of a ``KeyboardInterrupt``
            (:data:`decido.status.Status`, from C's table of stop reasons).
        message: a human explanation of the status.
        elapsed: wall seconds.
        history: ``(evaluations, best)`` at each improvement and at the end (bounded).
        engine: the engine id asked for.  engine_chosen: the engine that ran (``engine``
            itself, or what ``auto`` chose for the problem: docs/optimization.md).
        seed: the seed used (replays the run).
        goal: ``minimize`` or ``maximize``.  gradients: gradient evaluations among them.
        feasible: every constraint holds at ``x`` (within ``constraint_tolerance``; True
            without constraints).  max_violation: the largest violation at ``x``.
        constraints: per constraint at ``x``: ``{"name", "value", "violation"}`` (value:
            lhs - rhs).  variables: ``x`` by name when the problem had ``variables``.
        With constraints and no feasible point found, ``status`` is ``infeasible`` and
        ``x`` the least violating point (``message`` says why the run stopped).
    """

    x: NDArray[np.float64]
    fun: float
    evaluations: int
    iterations: int
    status: Status
    message: str
    elapsed: float
    history: list[tuple[int, float]] = field(repr=False)
    engine: str
    seed: int
    goal: str
    gradients: int = 0
    feasible: bool = True
    max_violation: float = 0.0
    constraints: list[dict[str, Any]] = field(default_factory=list, repr=False)
    variables: dict[str, float] | None = None
    engine_chosen: str = ""

    @property
    def success(self) -> bool:
        """True when the engine converged or reached the target."""
        return self.status in SUCCESSFUL


def engines() -> list[dict[str, Any]]:
    """Metadata of every engine: id, name, summary, kind, max_dims, options (name,
    default, min, max, integer, description)."""
    return _engine.engines()


def default_engine() -> str:
    """The id of the default engine."""
    return str(_engine.default_engine())


@dataclass(frozen=True)
class _Checked:
    """What :func:`_check` found: the faults, and the parsed arguments when there are none."""

    problems: list[Problem]
    bounds: Any
    """an (n, 2) array or a list of n pairs"""
    engine: str
    options: dict[str, float]
    design: Design | None = None


_NO_BOUNDS = np.empty((0, 2), dtype=np.float64)


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


#: a run (of one objective or several) that names no engine runs ``auto`` up to this many
#: evaluations
#: (docs/optimization.md, "Sample-efficient engines")
AUTO_MAX_EVALUATIONS = 200


def engine_for(objective: Any, engine: Any, max_evaluations: Any) -> Any:
    """The engine of a run (several objectives: ``objective`` is their list): ``engine``
    when named; else ``auto`` when ``max_evaluations`` is at most
    :data:`AUTO_MAX_EVALUATIONS`, or when the objective is a Python callable (not an
    expression: its cost is unknown, often seconds) and no budget is given; else None:
    the default engine (``dss``; several objectives: ``moea``).  The result's
    ``engine_chosen`` names the engine ``auto`` ran."""
    if engine is not None or "auto" not in _engine_table():
        return engine
    python = callable(objective) and not isinstance(objective, (str, Expression))
    small = _is_real(max_evaluations) and max_evaluations <= AUTO_MAX_EVALUATIONS
    return "auto" if small or (python and max_evaluations is None) else None


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

def _goal(goal: Any) -> list[Problem]:
    if goal_name(goal) is not None:
        return []
    return [Problem(("goal",), "invalid_argument", goal_problem("goal", goal))]


def _check(bounds: Any, goal: Any, spec: RunSpec, engine: Any, options: Any, *,
           several: bool = False) -> _Checked:
    """Every fault of a run's box (or variables), design, ``engine`` (None: the default),
    ``options`` (the spec's with ``stop_on_convergence``), goal, budgets and seed
    (``target`` on a run of ``several`` objectives is :func:`front_problems`')."""
    found = _goal(goal)
    variables = spec.variables
    if variables is not None and bounds is not None:
        found.append(Problem(("variables",), "invalid_argument",
                             "give bounds or variables, not both"))
        bounds = None
    if variables is None:
        bound_faults, b = _bounds(bounds) if bounds is not None else (
            [Problem(("bounds",), "required", "bounds (or variables) are required")],
            None)
        found += bound_faults
    else:
        b = None
    design_faults, design = design_problems(
        b, variables=variables, integers=spec.integers, x0=spec.x0,
        constraints=spec.constraints, constraint_tolerance=spec.constraint_tolerance)
    found += design_faults
    if design is not None and variables is not None:
        b = np.column_stack((design.lower, design.upper))
    engine_id = default_engine() if engine is None else engine
    info = _engine_table().get(engine_id) if isinstance(engine_id, str) else None
    opts: dict[str, float] = {}
    if info is None:
        known = list(_engine_table())
        hint = did_you_mean(engine_id, known) if isinstance(engine_id, str) else ""
        found.append(Problem(("engine",), "unknown_engine",
                             f"unknown engine {engine_id!r}{hint} (engines: "
                             f"{', '.join(known)})"))
    else:
        n = len(b) if b is not None else len(bounds) if isinstance(bounds, (list, tuple)) \
            else None
        if n is not None and info["max_dims"] is not None and n > info["max_dims"]:
            found.append(Problem(("bounds",), "invalid_argument",
                                 f"engine {engine_id!r} handles at most {info['max_dims']} "
                                 f"dimensions, got {n}"))
        option_faults, opts = _options(info, options)
        found += option_faults
        found += _support(info, design, spec.constraints)
    found += value_problems(spec.max_evaluations, spec.time_limit,
                            None if several else spec.target, spec.seed)
    if found or b is None:
        return _Checked(found, _NO_BOUNDS, str(engine_id), {})
    return _Checked([], b, engine_id, opts, design)


def _support(info: dict[str, Any], design: Design | None, constraints: Any) -> list[Problem]:
    """What the problem asks of the engine beyond a box, against ``info["supports"]``."""
    wants = []
    if constraints:
        wants.append(("constraints", "constraints", "constraints"))
    if design is not None and (design.integer is not None or design.discrete is not None):
        wants.append(("integers", "integers", "integer or discrete variables"))
    if design is not None and design.x0 is not None:
        wants.append(("x0", "x0", "a start point (x0)"))
    found = []
    for flag, where, what in wants:
        if not info["supports"][flag]:
            able = ", ".join(e["id"] for e in _engine_table().values() if e["supports"][flag])
            found.append(Problem((where,), "invalid_argument",
                                 f"engine {info['id']!r} cannot take {what}; engines that "
                                 f"can: {able}"))
    return found


def problems(bounds: Any, *, goal: Any = "minimize", **keywords: Any) -> list[Problem]:
    """Every fault of these :func:`optimize` arguments (the objective and the constraints'
    text aside; the keywords of a run of one objective a server takes:
    :func:`decido.run_spec.keyword_names`), in the order :func:`optimize` checks them;
    ``[]`` when it would start the run.

    The one check of bounds (finite, ``lower <= upper``, a finite width) or variables, of
    ``integers``, ``x0`` and ``constraint_tolerance`` (:mod:`decido.design`), the engine
    (known, the dimensions within its ``max_dims``, able to take constraints, integers and
    start points as asked), its options (known names, within their ranges, integral where
    the engine says so), the goal, budgets and seed. :func:`optimize` raises the first as an
    :class:`EngineError`; the HTTP service lists them all."""
    spec = RunSpec.of("problems", keywords, several=False)
    options = with_stop_option(spec.options, spec.stop_on_convergence)
    return _check(bounds, goal, spec, spec.engine, options).problems


def _objective(objective: Objective, design: Design) -> Any:
    """The program (or callable) the driver evaluates, in the design's context."""
    n = design.n
    if isinstance(objective, str):
        if design.names is not None:
            return Expression(objective, variables=design.names)._program
        return Expression(objective, n=n)._program
    if isinstance(objective, Expression):
        wanted = ("the variables " + ", ".join(design.names)) if design.names is not None \
            else f"n={n}"
        have = objective.variables if design.names is not None else objective.n
        if have != (design.names if design.names is not None else n):
            what = f"n={objective.n}" if objective.n else (
                f"variables {objective.variables}" if objective.variables else "no vector x")
            raise EngineError("invalid_argument",
                              f"the expression has {what} but the problem has {wanted}",
                              "objective")
        return objective._program
    if callable(objective):
        return objective
    raise EngineError(
        "invalid_argument",
        "objective must be an expression string, a decido.Expression or a callable",
        "objective",
    )


def _constraint_report(cons: list[Constraint], g: list[float]) -> list[dict[str, Any]]:
    return [{"name": c.name, "value": v, "violation": c.violation(v)}
            for c, v in zip(cons, g, strict=True)]


@dataclass(frozen=True)
class _Front:
    """What a run of several objectives adds to the driver's call: the objectives'
    specs and programs (or one callable over them)."""

    specs: list[ObjectiveSpec]
    programs: list[Any]

    def engine_arguments(self, vectorized: bool) -> dict[str, Any]:
        """The arguments of ``_engine.run`` that the objectives give."""
        callables = self.specs[0].is_callable
        return {"objective": front_callable(self.programs, vectorized) if callables else None,
                "n_objectives": len(self.specs),
                "objectives": None if callables else self.programs,
                "maximized": np.array([s.goal == "maximize" for s in self.specs],
                                      dtype=np.uint8)}


def _front(objectives: Any, goal: Any, spec: RunSpec, checked: _Checked) -> _Front:
    """The objectives of a run of several, compiled; every fault of the run raises one
    :class:`EngineError` listing them all."""
    design = checked.design
    names = [] if design is None else list(design.names) if design.names is not None else [
        f"x{j}" for j in range(design.n)]
    found, specs = objective_problems(objectives, goal, names)
    found += checked.problems
    m = len(objectives) if isinstance(objectives, (list, tuple)) else 0
    found += front_problems(m, lambda name: checked.engine if name == "engine"
                            else getattr(spec, name))
    if found:
        raise engine_error(found)
    assert design is not None
    compile_faults, programs = compile_objectives(specs, design)
    if not compile_faults:
        compile_faults = reference_problems(programs, [s.name for s in specs],
                                            [s.goal for s in specs], design,
                                            spec.reference_point)
    if compile_faults:
        raise engine_error(compile_faults)
    return _Front(specs, programs)


def _run(objective: Any, bounds: ArrayLike | None, goal: Any, spec: RunSpec, several: bool
         ) -> OptimizeResult | ParetoResult:
    """A run of one objective, or of ``several`` (the module's docs)."""
    engine = engine_for(objective, spec.engine, spec.max_evaluations)
    if several and engine is None:
        engine = default_multi_engine()
    options = with_stop_option(spec.options, spec.stop_on_convergence)
    checked = _check(bounds, goal, spec, engine, options, several=several)
    front = None
    if several:
        front = _front(objective, goal, spec, checked)
    elif checked.problems:
        raise engine_error(checked.problems)
    design = checked.design
    assert design is not None
    goal = goal_name(goal) or goal
    arguments = spec.engine_arguments(design.n)
    if front is None:
        arguments.update(objective=_objective(objective, design), maximize=goal == "maximize")
    else:
        arguments.update(front.engine_arguments(bool(spec.vectorized)), maximize=False)
    check_hooks(spec.callback, spec.monitor)
    seed = secrets.randbits(63) if spec.seed is None else int(spec.seed)
    cons = compile_constraints(spec.constraints or [], design, probe_seed=seed)

    def result(out: dict[str, Any], interrupted: bool = False) -> Any:
        if front is not None:
            return front_result(out, checked.engine, seed, front.specs, design)
        return _result(out, checked.engine, seed, goal, design, cons, interrupted)

    try:
        out = _engine.run(
            engine=checked.engine, lower=design.lower, upper=design.upper, seed=seed,
            options=checked.options, history_capacity=_HISTORY, x0=design.x0,
            integer=design.integer, discrete=design.discrete,
            constraints=[c.program for c in cons],
            senses=[("<=", ">=", "==").index(c.sense) for c in cons],
            constraint_tolerance=design.tolerance, **arguments)
    except KeyboardInterrupt as exc:
        partial = getattr(exc, "result", None)
        if isinstance(partial, dict):  # the run in C was interrupted: its best so far
            partial.update(message="interrupted (KeyboardInterrupt)")
            if front is not None:
                partial.update(status="interrupted")
            exc.result = result(partial, interrupted=True)  # type: ignore[attr-defined]
        raise
    answer: OptimizeResult | ParetoResult = result(out)
    return answer


def _result(out: dict[str, Any], engine: str, seed: int, goal: str, design: Design,
            cons: list[Constraint], interrupted: bool = False) -> OptimizeResult:
    feasible = bool(out["feasible"])
    status: Status = "infeasible" if not feasible else (
        "interrupted" if interrupted else engine_stop(out["status"]))
    return OptimizeResult(
        x=out["x"],
        fun=float(out["fun"]),
        evaluations=int(out["evaluations"]),
        iterations=int(out["iterations"]),
        status=status,
        message=out["message"],
        elapsed=float(out["elapsed"]),
        history=out["history"],
        engine=engine,
        seed=seed,
        goal=goal,
        gradients=int(out["gradients"]),
        feasible=feasible,
        max_violation=float(out["max_violation"]),
        constraints=_constraint_report(cons, out["g"]),
        variables=None if design.names is None else {
            name: float(v) for name, v in zip(design.names, out["x"], strict=True)},
        engine_chosen=str(out.get("engine_chosen") or engine),
    )


def _keyword_parameters(several: bool) -> list[inspect.Parameter]:
    """The keyword parameters of a run, from :class:`RunSpec` (defaults, annotations)."""
    fields = {f.name: f for f in dataclasses.fields(RunSpec)}
    return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                              default=fields[name].default, annotation=fields[name].type)
            for name in keyword_names(several=several)]


def _signature_shown(function: F) -> F:
    """Give ``decido.optimize``/``minimize``/``maximize``/``optimize_front`` the signature
    ``help()`` and :func:`inspect.signature` show: their own parameters (``goal`` when they
    take it), then the keywords of :class:`RunSpec` (those only a run of several objectives
    takes last), and a list of them with their docs at the end of the docstring. Their
    static type is :class:`RunKeywords` / :class:`FrontKeywords` (``**kwargs``)."""
    own = inspect.signature(function)
    shown = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    vars(function)["__signature__"] = own.replace(parameters=shown + _keyword_parameters(True))
    function.__doc__ = (function.__doc__ or "").rstrip() + "\n\n    Keywords:\n" + "".join(
        f"        {f.name}: {f.metadata['doc']}"
        f"{' (several objectives)' if f.metadata['scope'] == 'several' else ''}\n"
        for f in dataclasses.fields(RunSpec))
    return function


@overload
def optimize(objective: Objective, bounds: ArrayLike | None = None, *,
             goal: str = "minimize", **kwargs: Unpack[RunKeywords]) -> OptimizeResult: ...
@overload
def optimize(objective: list[Any] | tuple[Any, ...], bounds: ArrayLike | None = None, *,
             goal: str = "minimize", **kwargs: Unpack[FrontKeywords]) -> ParetoResult: ...
@_signature_shown
def optimize(objective: Objective | list[Any] | tuple[Any, ...],
             bounds: ArrayLike | None = None, *, goal: str = "minimize",
             **kwargs: Any) -> OptimizeResult | ParetoResult:
    """Optimize ``objective`` over the box ``bounds`` (``goal`` = minimize | maximize).

    ``objective`` is an expression string (compiled with ``n = len(bounds)``, or over the
    names of ``variables``), a :class:`decido.Expression`, a callable ``f(x) -> float``, or
    with ``vectorized=True`` a callable ``f(X) -> array`` over a population ``X`` of shape
    ``(P, n)``.
    ``engine`` (an id of ``decido.engines()``): when none is named, ``auto`` runs when
    ``max_evaluations`` is at most 200 or the objective is a Python callable without a
    budget (``result.engine_chosen`` says which engine ``auto`` ran), else ``dss``.
    Stops at ``max_evaluations`` (default ``max(10000, 2000 n)``), ``time_limit``
    seconds, once the best value reaches ``target``, when the engine converges,
    when ``callback(progress)`` returns a truthy value, or when ``monitor.stop()``
    was called (a :class:`decido.RunMonitor`: progress and stop from any thread,
    without the GIL; see its docstring).  ``seed=None`` draws a seed,
    reported in the result.  ``stop_on_convergence=False`` (the option of the same name,
    which every engine takes) spends the whole budget: an engine that converged starts
    again.  Invalid arguments raise :class:`decido.EngineError`,
    :class:`decido.ExpressionError` or :class:`decido.ConstraintError` (all
    ``ValueError``) before any work starts.

    Ctrl-C (``KeyboardInterrupt``) stops a run within about 10 ms, also one that runs in
    C; the exception carries the best point so far as ``exc.result``, an
    :class:`OptimizeResult` with status ``interrupted``.

    Beyond a box: ``constraints`` (strings ``"[name:] lhs <= rhs"``, ``>=`` or ``==`` in
    the expression language, over the objective's variables; feasible within
    ``constraint_tolerance``, default 1e-6), ``integers`` (indices of ``x`` that take
    integer values), ``variables`` instead of ``bounds`` (``{"name", "lower", "upper",
    "type": "real" | "integer"}`` or ``{"name", "values": [...]}``), and ``x0`` (a start
    point or a list of them: each is evaluated first and the engine starts from the best).
    ``decido.engines()`` says which engine takes what.

    A list of objectives (expressions, callables, or dicts ``{"name", "expression",
    "goal"}``) makes a run of several, :func:`optimize_front`, whose result
    is their front (a :class:`ParetoResult`), with keywords of its own (below). A keyword
    that is not one raises :class:`TypeError` naming it.
    """
    several = isinstance(objective, (list, tuple))
    return _run(objective, bounds, goal, RunSpec.of("optimize", kwargs, several), several)


@_signature_shown
def optimize_front(objectives: list[Any] | tuple[Any, ...], bounds: ArrayLike | None = None,
                   *, goal: str = "minimize", **kwargs: Unpack[FrontKeywords]) -> ParetoResult:
    """Optimize several objectives over ``bounds``: :func:`optimize` with a list of
    objectives, the same path. ``callback(progress)`` gets ``evaluations``,
    ``iterations``, ``hypervolume``, ``front_size`` and ``elapsed``.  Every fault of the
    arguments raises one :class:`decido.EngineError` listing them all (``errors``, with
    JSON pointers)."""
    result = _run(objectives, bounds, goal, RunSpec.of("optimize_front", kwargs, True), True)
    assert isinstance(result, ParetoResult)
    return result


@overload
def minimize(objective: Objective, bounds: ArrayLike | None = None,
             **kwargs: Unpack[RunKeywords]) -> OptimizeResult: ...
@overload
def minimize(objective: list[Any] | tuple[Any, ...], bounds: ArrayLike | None = None,
             **kwargs: Unpack[FrontKeywords]) -> ParetoResult: ...
@_signature_shown
def minimize(objective: Objective | list[Any] | tuple[Any, ...],
             bounds: ArrayLike | None = None, **kwargs: Any) -> OptimizeResult | ParetoResult:
    """Minimize ``objective`` over ``bounds``: :func:`optimize` with ``goal="minimize"``,
    the same keyword arguments (see it for what each does).  A list of objectives makes a
    run of several (:func:`optimize_front`: the result is a :class:`ParetoResult`; the
    keywords marked "several objectives" below are its own)."""
    return optimize(objective, bounds, goal="minimize", **kwargs)


@overload
def maximize(objective: Objective, bounds: ArrayLike | None = None,
             **kwargs: Unpack[RunKeywords]) -> OptimizeResult: ...
@overload
def maximize(objective: list[Any] | tuple[Any, ...], bounds: ArrayLike | None = None,
             **kwargs: Unpack[FrontKeywords]) -> ParetoResult: ...
@_signature_shown
def maximize(objective: Objective | list[Any] | tuple[Any, ...],
             bounds: ArrayLike | None = None, **kwargs: Any) -> OptimizeResult | ParetoResult:
    """Maximize ``objective`` over ``bounds``: :func:`optimize` with ``goal="maximize"``,
    the same keyword arguments.  A list of objectives makes a run of several, each
    maximized unless its dict says ``"goal": "minimize"`` (a :class:`ParetoResult`; the
    keywords marked "several objectives" below are its own)."""
    return optimize(objective, bounds, goal="maximize", **kwargs)
