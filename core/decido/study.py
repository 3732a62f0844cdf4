"""``decido.Study``: ask/tell optimization of an objective that only the caller's code can
compute (a simulation, a training run, a measurement), on the same engines as
:func:`decido.minimize`.

The study holds the engine's state (C: ``dc_study``, engine/study.c); the caller asks for
trials, evaluates them anywhere, and tells the results back in any order::

    study = decido.Study(bounds=[(-5, 5)] * 3, seed=1)
    for _ in range(200):
        for trial in study.ask():
            study.tell(trial, sum(v * v for v in trial.x))
    print(study.best.value)

Determinism: the same arguments (``seed`` included) and the same calls in the same order
give bit-identical trials on any machine, so a study is stored as its arguments and the log
of its calls (:meth:`Study.to_dict`) and rebuilt by replaying them (:meth:`Study.from_dict`).
docs/studies.md describes the API, the ranking of failed and infeasible trials and the
partial batches of population engines.
"""

from __future__ import annotations

import math
import secrets
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from decido import _engine, _study
from decido._problem import Problem, engine_error, is_real
from decido._study_constraints import DEFAULT_CONSTRAINT_TOLERANCE, StudyConstraints
from decido._study_space import Space, space_problems
from decido.errors import EngineError, StudyError
from decido.goals import goal_name, goal_problem
from decido.objectives import MAX_OBJECTIVES, NAME_PATTERN
from decido.pareto import hypervolume

__all__ = ["STATES", "Front", "Study", "Trial"]

#: a trial's states: asked and not yet told, told with values, told failed, told
#: infeasible (without values)
STATES = ("active", "completed", "failed", "infeasible")
_TOLD_STATES = {"completed": _study.OK, "failed": _study.FAILED,
                "infeasible": _study.INFEASIBLE}
#: the trials an engine plans for when ``max_trials`` is None: this many per variable,
#: at least _MIN_BUDGET
_BUDGET_PER_VARIABLE = 100
_MIN_BUDGET = 1000
_SEED_END = 2**64


@dataclass
class Trial:
    """One point of a study and what was told of it.

    Attributes:
        number: its number in the study (0, 1, ...: in the order trials were asked or told
            without being asked).
        x: the point (a categorical variable: the index of its value).
        variables: the point by name (a categorical choice: its string; an integer: an
            int); names ``x0``, ``x1``, ... for a study of ``bounds``.
        state: ``active`` (asked, not told), ``completed``, ``failed`` or ``infeasible``.
        value: the objective's value (one objective), values: every objective's (in the
            objectives' order); None until completed.
        metrics: the numbers the tell reported besides.
        feasible: every constraint holds (True without constraints; False for an
            ``infeasible`` trial).  constraints: ``{"name", "value", "violation"}`` each.
        asked: the study handed it out (False for a warm-start point).
    """

    number: int
    x: NDArray[np.float64] = field(repr=False)
    variables: dict[str, Any]
    state: str = "active"
    value: float | None = None
    values: list[float] | None = None
    metrics: dict[str, float] = field(default_factory=dict, repr=False)
    feasible: bool = True
    constraints: list[dict[str, Any]] = field(default_factory=list, repr=False)
    asked: bool = True

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (a non-finite number becomes None)."""
        def num(v: float | None) -> float | None:
            return v if v is not None and math.isfinite(v) else None
        return {"number": self.number, "state": self.state, "x": self.x.tolist(),
                "variables": dict(self.variables), "value": num(self.value),
                "values": None if self.values is None else [num(v) for v in self.values],
                "metrics": dict(self.metrics), "feasible": self.feasible,
                "asked": self.asked}


@dataclass(frozen=True)
class Front:
    """The non-dominated completed trials of a study of several objectives.

    Attributes:
        trials: the front's trials (feasible ones; when none is feasible, the least
            violating), in the order they were numbered.
        hypervolume: its hypervolume at ``reference_point``.
        reference_point: the front's nadir moved outward by a tenth of the front's range
            in each objective (by ``max(1, |nadir|) / 10`` where the range is 0), as a run
            of several objectives derives it.
        objectives: ``{"name", "goal"}`` of each.
    """

    trials: list[Trial]
    hypervolume: float
    reference_point: list[float]
    objectives: list[dict[str, str]]

    def options(self) -> list[dict[str, Any]]:
        """The front as options of :func:`decido.decide`: ids the trial numbers as
        strings; attributes the objectives' values by name, then the variables."""
        names = [o["name"] for o in self.objectives]
        out = []
        for t in self.trials:
            assert t.values is not None
            attrs: dict[str, Any] = dict(zip(names, t.values, strict=True))
            attrs.update({k: v for k, v in t.variables.items() if is_real(v)})
            out.append({"id": str(t.number), "attributes": attrs})
        return out


def _objective_problems(objectives: Any, goal: Any) -> tuple[list[Problem], list[dict[str, str]]]:
    found: list[Problem] = []
    own = goal_name(goal)
    if own is None:
        found.append(Problem(("goal",), "invalid_argument", goal_problem("goal", goal)))
        own = "minimize"
    if objectives is None:
        return found, [{"name": "value", "goal": own}]
    if not isinstance(objectives, (list, tuple)) or not 1 <= len(objectives) <= MAX_OBJECTIVES:
        return found + [Problem(("objectives",), "invalid_argument",
                                f"objectives must be a list of 1 to {MAX_OBJECTIVES} names "
                                "or {name, goal}")], []
    out: list[dict[str, str]] = []
    for k, item in enumerate(objectives):
        spec = {"name": item} if isinstance(item, str) else item
        if not isinstance(spec, Mapping) or set(spec) - {"name", "goal"}:
            found.append(Problem(("objectives", k), "invalid_argument",
                                 f"objectives[{k}] must be a name or a dict {{name, goal}}"))
            continue
        name, g = spec.get("name"), goal_name(spec.get("goal", own))
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            found.append(Problem(("objectives", k, "name"), "invalid_argument",
                                 f"objectives[{k}].name must be an identifier, got {name!r}"))
        elif name in [o["name"] for o in out]:
            found.append(Problem(("objectives", k, "name"), "invalid_argument",
                                 f"objectives[{k}]: the name {name!r} is used twice"))
        elif g is None:
            found.append(Problem(("objectives", k, "goal"), "invalid_argument",
                                 goal_problem(f"objectives[{k}].goal", spec.get("goal"))))
        else:
            out.append({"name": name, "goal": g})
    return found, out


def _engine_id(engine: Any, several: bool) -> str:
    """``auto`` (or None): the registry's ``auto`` when it has one (that takes several
    objectives when there are several), else its default engine (several objectives: the
    first that takes several)."""
    if engine is not None and engine != "auto":
        return str(engine)
    auto = next((e for e in _engine.engines() if e["id"] == "auto"), None)
    if auto is not None and (auto["supports"]["objectives"] or not several):
        return "auto"
    if several:
        return str(next(e["id"] for e in _engine.engines() if e["supports"]["objectives"]))
    return str(_engine.default_engine())


class Study:
    """Ask/tell optimization on one engine (module docstring; docs/studies.md).

    Args:
        bounds: ``[(lower, upper), ...]`` (variables named ``x0``, ``x1``, ...), or
        variables: ``[{"name", "lower", "upper", "type": "real" | "integer", "log":
            bool}, {"name", "values": [...]}, ...]`` (values: numbers, or strings for a
            categorical choice).
        objectives: None (one objective, ``value``), or 1 to 8 names or ``{"name",
            "goal"}``.  goal: the objectives' default goal (``minimize``, ``maximize``).
        engine: an engine id of :func:`decido.engines`; ``auto`` (default): the
            registry's ``auto`` when it has one, else its default engine (several
            objectives: ``moea``).
        seed: 64-bit seed (None: a random one, kept in ``study.seed``).
        max_trials: at most this many trials are asked (None: no limit); the engine
            plans for it (None: 100 per variable, at least 1,000).
        constraints: comparisons in the expression language over the variables', the
            objectives' and the metrics' names (``"latency <= 100"``).
        constraint_tolerance: a trial is feasible when every violation is at most this.
        options: the engine's options by name.

    Faults of the arguments raise one :class:`decido.EngineError` listing them all (a
    constraint that does not compile: :class:`decido.ConstraintError`); misuse of a
    study raises :class:`decido.StudyError`.  A study may be shared by threads (a lock
    serialises its calls).
    """

    def __init__(self, bounds: Any = None, *, variables: Any = None, objectives: Any = None,
                 goal: str = "minimize", engine: str | None = "auto", seed: int | None = None,
                 max_trials: int | None = None, constraints: Sequence[str] | None = None,
                 constraint_tolerance: float = DEFAULT_CONSTRAINT_TOLERANCE,
                 options: Mapping[str, float] | None = None) -> None:
        found, space = space_problems(bounds, variables)
        more, objs = _objective_problems(objectives, goal)
        found += more
        if seed is not None and not (isinstance(seed, int) and not isinstance(seed, bool)
                                     and 0 <= seed < _SEED_END):
            found.append(Problem(("seed",), "invalid_argument",
                                 f"seed must be an integer in [0, 2**64), got {seed!r}"))
        if max_trials is not None and not (isinstance(max_trials, int) and max_trials >= 1
                                           and not isinstance(max_trials, bool)):
            found.append(Problem(("max_trials",), "invalid_argument",
                                 f"max_trials must be a positive integer, got {max_trials!r}"))
        if not (is_real(constraint_tolerance) and constraint_tolerance >= 0):
            found.append(Problem(("constraint_tolerance",), "invalid_argument",
                                 "constraint_tolerance must be a number >= 0"))
        if options is not None and not (isinstance(options, Mapping) and all(
                isinstance(k, str) and is_real(v) for k, v in options.items())):
            found.append(Problem(("options",), "invalid_option",
                                 "options must map option names to numbers"))
        if constraints is not None and (isinstance(constraints, str)
                                        or not isinstance(constraints, (list, tuple))):
            found.append(Problem(("constraints",), "invalid_argument",
                                 "constraints must be a list of strings"))
        if found or space is None:
            raise engine_error(found)
        self.space: Space = space
        self.objectives: list[dict[str, str]] = objs
        self.engine: str = _engine_id(engine, len(objs) > 1)
        self.seed: int = secrets.randbits(64) if seed is None else seed
        self.max_trials: int | None = max_trials
        self._constraints = StudyConstraints(list(constraints or ()),
                                             [*space.names, *(o["name"] for o in objs)],
                                             float(constraint_tolerance))
        self._options = {k: float(v) for k, v in (options or {}).items()}
        self._spec = {"bounds": None if space.named else [[v.lower, v.upper] for v in
                                                          space.variables],
                      "variables": [v.describe() for v in space.variables] if space.named
                      else None,
                      "objectives": objs if objectives is not None else None, "goal": goal,
                      "engine": self.engine, "seed": self.seed, "max_trials": max_trials,
                      "constraints": list(constraints or ()),
                      "constraint_tolerance": float(constraint_tolerance),
                      "options": dict(self._options)}
        budget = max_trials or max(_MIN_BUDGET, _BUDGET_PER_VARIABLE * space.n)
        several = len(objs) > 1
        self._c = _study.CStudy(
            self.engine, n_objectives=len(objs) if several else 0,
            maximized=np.array([o["goal"] == "maximize" for o in objs], dtype=np.uint8),
            seed=self.seed, budget=budget, options=self._options,
            constrained=bool(self._constraints), **space.arrays())
        self._trials: list[Trial] = []
        self._asked = 0
        self._log: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    # ---- asking ----

    def ask(self, n: int = 1) -> list[Trial]:
        """``n`` new trials (fewer when ``max_trials`` leaves fewer; :class:`StudyError`
        ``study_finished`` when it leaves none).  Asking beyond what is left of the
        engine's batch closes the batch: its results told so far go to the engine and the
        rest count as failed (docs/studies.md, "Batches")."""
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= _study.MAX_ASK:
            raise StudyError("invalid_argument",
                             f"n must be an integer from 1 to {_study.MAX_ASK}, got {n!r}")
        with self._lock:
            if self.max_trials is not None:
                if self._asked >= self.max_trials:
                    raise StudyError("study_finished",
                                     f"the study asked its max_trials={self.max_trials} trials")
                n = min(n, self.max_trials - self._asked)
            try:
                ids, X = self._c.ask(n)
            except BaseException:
                self._drop_unseen()
                raise
            out = []
            for number, x in zip(ids.tolist(), X, strict=True):
                trial = Trial(int(number), x.copy(), self.space.by_name(x))
                self._trials.append(trial)
                out.append(trial)
            self._asked += n
            self._log.append({"ask": n})
            return out

    def _drop_unseen(self) -> None:
        """After a failed ask (the engine ran out of memory): the trials the C study
        numbered before it failed never reached the caller; they are told failed (their
        batch can close) and kept as failed trials without a point, so numbers and trials
        stay one list."""
        for number in range(len(self._trials), self._c.n_trials):
            self._c.tell(number, _study.FAILED, None, 0.0)
            nan = np.full(self.space.n, math.nan)
            self._trials.append(Trial(number, nan, {}, state="failed"))

    # ---- telling ----

    def tell(self, trial: Trial | int | Mapping[str, Any] | Sequence[float],
             value: float | None = None, *, values: Sequence[float] | None = None,
             state: str = "completed", metrics: Mapping[str, float] | None = None) -> Trial:
        """Tell the result of a trial (a :class:`Trial` of this study or its number), or
        of a point never asked (a warm start: variables by name, or the values in order).

        ``value`` (one objective) or ``values`` (one per objective), with ``state``
        ``completed`` (default); or ``state="failed"`` (ranked worst) or
        ``"infeasible"`` (ranked after every feasible trial) without values.  ``metrics``:
        numbers the constraints may read.  Returns the trial; :class:`StudyError` for a
        trial told twice or unknown, values of the wrong count, a missing metric."""
        if state not in _TOLD_STATES:
            raise StudyError("invalid_argument",
                             f"state must be 'completed', 'failed' or 'infeasible', got "
                             f"{state!r}")
        vals = self._values(value, values, state)
        mets = self._metrics(metrics)
        with self._lock:
            if isinstance(trial, (Trial, int, np.integer)) and not isinstance(trial, bool):
                return self._tell_asked(trial if isinstance(trial, Trial) else int(trial),
                                        vals, state, mets)
            if isinstance(trial, (Mapping, Sequence, np.ndarray)) and not isinstance(trial, str):
                return self._tell_point(trial, vals, state, mets)
            raise StudyError("unknown_trial",
                             f"tell takes a Trial, a trial number or a point, got "
                             f"{type(trial).__name__}")

    def _values(self, value: Any, values: Any, state: str) -> list[float] | None:
        m = len(self.objectives)
        if state != "completed":
            if value is not None or values is not None:
                raise StudyError("invalid_values", f"a {state} trial is told without values")
            return None
        if (value is None) == (values is None):
            raise StudyError("invalid_values",
                             "give value (one objective) or values (one per objective)")
        got = [value] if values is None else values
        if isinstance(got, (str, bytes)) or not isinstance(got, (Sequence, np.ndarray)) \
                or len(got) != m:
            raise StudyError("invalid_values",
                             f"the study has {m} objective{'s' if m > 1 else ''} "
                             f"({', '.join(o['name'] for o in self.objectives)}): tell "
                             f"{'value' if m == 1 else f'{m} values'}, got {got!r}")
        if not all(is_real(v) for v in got):
            raise StudyError("invalid_values", f"values must be numbers, got {got!r}")
        return [float(v) for v in got]

    @staticmethod
    def _metrics(metrics: Any) -> dict[str, float]:
        if metrics is None:
            return {}
        if not isinstance(metrics, Mapping) or not all(
                isinstance(k, str) and is_real(v) for k, v in metrics.items()):
            raise StudyError("invalid_values", "metrics must map names to numbers")
        return {k: float(v) for k, v in metrics.items()}

    def _judge(self, t: Trial, vals: list[float] | None, state: str,
               mets: dict[str, float]) -> float:
        """The trial's excess (0: feasible), its constraints filled in."""
        if state == "infeasible":
            t.feasible = False
            return 0.0
        if state == "failed" or not self._constraints or vals is None:
            return 0.0
        known = dict(zip(self.space.names, self.space.inputs(t.x), strict=True))
        known.update(zip((o["name"] for o in self.objectives), vals, strict=True))
        t.constraints = self._constraints.judge(known, mets)
        excess = self._constraints.excess(t.constraints)
        t.feasible = excess == 0.0
        return excess

    def _record(self, t: Trial, vals: list[float] | None, state: str,
                mets: dict[str, float]) -> None:
        t.state = state
        t.values = vals
        t.value = vals[0] if vals is not None and len(vals) == 1 else None
        t.metrics = mets

    def _tell_asked(self, trial: Trial | int, vals: list[float] | None, state: str,
                    mets: dict[str, float]) -> Trial:
        number = trial.number if isinstance(trial, Trial) else trial
        if not 0 <= number < len(self._trials) or (
                isinstance(trial, Trial) and self._trials[number] is not trial):
            raise StudyError("unknown_trial", f"trial {number} is not a trial of this study")
        t = self._trials[number]
        if t.state != "active":
            raise StudyError("trial_finished", f"trial {number} was already told ({t.state})")
        probe = Trial(t.number, t.x, t.variables)
        excess = self._judge(probe, vals, state, mets)
        self._c.tell(number, _TOLD_STATES[state], vals, excess)
        self._record(t, vals, state, mets)
        t.feasible, t.constraints = probe.feasible, probe.constraints
        self._log.append(self._entry(number, vals, state, mets))
        return t

    def _tell_point(self, point: Any, vals: list[float] | None, state: str,
                    mets: dict[str, float]) -> Trial:
        x = self.space.point(point)
        t = Trial(len(self._trials), x, self.space.by_name(x), asked=False)
        excess = self._judge(t, vals, state, mets)
        number = self._c.tell_point(x, _TOLD_STATES[state], vals, excess)
        assert number == t.number
        self._record(t, vals, state, mets)
        self._trials.append(t)
        self._log.append({"point": t.variables if self.space.named else x.tolist(),
                          **self._entry(None, vals, state, mets)})
        return t

    @staticmethod
    def _entry(number: int | None, vals: list[float] | None, state: str,
               mets: dict[str, float]) -> dict[str, Any]:
        out: dict[str, Any] = {"tell": number, "state": state}
        if vals is not None:
            out["values"] = vals
        if mets:
            out["metrics"] = mets
        return out

    # ---- reading ----

    @property
    def trials(self) -> list[Trial]:
        """Every trial, by number."""
        return list(self._trials)

    @property
    def best(self) -> Trial | None:
        """The best completed trial (feasible before infeasible, then by value; a NaN
        value is never best), None before any; :class:`StudyError` ``several_objectives``
        for a study of several objectives (see :attr:`pareto`)."""
        if len(self.objectives) > 1:
            raise StudyError("several_objectives",
                             "a study of several objectives has a front: study.pareto")
        number = self._c.best
        return self._trials[number] if number >= 0 else None

    @property
    def pareto(self) -> Front:
        """The front of the completed trials (several objectives; one objective: the
        trials of the best value)."""
        signs = np.array([-1.0 if o["goal"] == "maximize" else 1.0 for o in self.objectives])
        done = [t for t in self._trials if t.state == "completed" and t.values is not None
                and all(math.isfinite(v) for v in t.values)]
        pool = [t for t in done if t.feasible]
        if not pool and done:
            least = min(_violation(t) for t in done)
            pool = [t for t in done if _violation(t) == least]
        F = np.array([t.values for t in pool], dtype=np.float64).reshape(len(pool),
                                                                          len(signs)) * signs
        keep = _non_dominated(F)
        front = [pool[i] for i in keep]
        if not front:
            return Front([], 0.0, [], [dict(o) for o in self.objectives])
        G = F[keep]
        nadir, ideal = G.max(axis=0), G.min(axis=0)
        span = nadir - ideal
        ref = nadir + np.where(span > 0, span / 10, np.maximum(1.0, np.abs(nadir)) / 10)
        goals = [o["goal"] for o in self.objectives]
        ref_user = (ref * signs).tolist()
        hv = hypervolume(G * signs, ref_user, goals)
        return Front(front, hv, ref_user, [dict(o) for o in self.objectives])

    def __len__(self) -> int:
        return len(self._trials)

    def __repr__(self) -> str:
        told = sum(t.state != "active" for t in self._trials)
        return (f"Study(engine={self.engine!r}, variables={self.space.names}, "
                f"trials={len(self._trials)}, told={told})")

    # ---- state ----

    def to_dict(self) -> dict[str, Any]:
        """The study as JSON-ready data: its arguments (``spec``, the engine resolved and
        the seed drawn) and ``log``, every ask and tell in order.  :meth:`from_dict`
        replays the log on a new study, which gives the same trials bit for bit (the
        engines are deterministic), on any process or machine."""
        with self._lock:
            return {"version": 1, "spec": dict(self._spec), "log": [dict(e) for e in self._log]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Study:
        """The study :meth:`to_dict` wrote, rebuilt by replaying its log;
        :class:`StudyError` ``invalid_state`` for data it did not write."""
        try:
            spec, log = dict(data["spec"]), list(data["log"])
            if data.get("version") != 1:
                raise KeyError("version")
        except (KeyError, TypeError) as exc:
            raise StudyError("invalid_state", f"not a study's state: {exc}") from None
        try:
            study = cls(**spec)
        except EngineError as exc:
            raise StudyError("invalid_state", f"the state's spec is refused: {exc}") from None
        for k, entry in enumerate(log):
            try:
                if "ask" in entry:
                    study.ask(int(entry["ask"]))
                    continue
                target = entry["point"] if "point" in entry else int(entry["tell"])
                vals = entry.get("values")
                study.tell(target, values=vals, state=entry["state"],
                           metrics=entry.get("metrics"))
            except (KeyError, TypeError, ValueError) as exc:
                raise StudyError("invalid_state", f"log[{k}] does not replay: {exc}") from None
        return study


def _non_dominated(F: NDArray[np.float64]) -> list[int]:
    """The rows of ``F`` (minimized) no other row dominates, in their order.  In
    lexicographic order a row can only be dominated by rows before it, and by one of the
    non-dominated ones among them (domination is transitive): O(rows x front)."""
    order = np.lexsort(F.T[::-1]) if len(F) else np.empty(0, dtype=np.int64)
    front: list[int] = []
    if F.shape[1] == 2:  # a sweep: dominated by an earlier row iff its second value is
        low = math.inf   # above the least so far, or equal to it at a larger first value
        low_first = math.inf
        for i in order.tolist():
            a, b = float(F[i, 0]), float(F[i, 1])
            if b < low or (b == low and a == low_first):
                front.append(i)
                low, low_first = b, a
        return sorted(front)
    for i in order.tolist():
        if front:
            G = F[front]
            if np.any(np.all(G <= F[i], axis=1) & np.any(G < F[i], axis=1)):
                continue
        front.append(i)
    return sorted(front)


def _violation(t: Trial) -> float:
    return max((c["violation"] for c in t.constraints), default=0.0)
