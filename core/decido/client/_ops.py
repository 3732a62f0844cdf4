"""The client's operations as generators of instructions (:mod:`decido.client._protocol`),
and the conversion of the service's JSON into the library's own types.

A remote optimization answers a :class:`decido.OptimizeResult` built from the run's
document and its trace (``x`` as an array, ``fun`` the objective value, ``elapsed`` in
seconds, ``history`` the ``(evaluations, best)`` points), and a run of several objectives
a :class:`decido.ParetoResult` (``history`` the ``(evaluations, hypervolume)`` points); a
decision answers the same dict :func:`decido.decide` returns.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from decido.client._protocol import Call, Emit, Event, NextEvent, Op, OpenStream, Sleep
from decido.client.errors import RunFailed, Timeout, error_from_problem
from decido.errors import EngineError
from decido.expression import Expression
from decido.optimize import OptimizeResult
from decido.pareto import ParetoResult
from decido.run_spec import FrontOnlyKeywords, SharedKeywords, with_stop_option
from decido.status import FINISHED_RUN_STATES, status

__all__ = [
    "FrontKeywords",
    "Objective",
    "ObjectiveItem",
    "Objectives",
    "Progress",
    "Result",
    "RunArgs",
    "RunKeywords",
    "RunState",
    "decide",
    "decision",
    "events",
    "filters",
    "front_points",
    "get_run",
    "labelled",
    "pages",
    "run_body",
    "submit",
    "wait",
]

#: what a server can optimize: an expression (its text is sent)
Objective = str | Expression
#: one of several objectives: an expression, or a dict ``{"name", "expression", "goal"}``
#: (``name`` defaults to ``f1``, ``f2``, ...; ``goal`` to the run's)
ObjectiveItem = str | Expression | Mapping[str, Any]
#: several objectives, each an :data:`ObjectiveItem`: a run of them answers their Pareto
#: front (``Any`` items, as :func:`decido.minimize` takes them: a ``list[str]`` fits)
Objectives = list[Any] | tuple[Any, ...]
#: what a finished run gives: one objective's best point, or several objectives' front
Result = OptimizeResult | ParetoResult
R = TypeVar("R", bound=Result)
#: a callback of :meth:`Run.wait`: called with the run's ``progress`` member
Progress = Callable[[dict[str, Any]], Any]
_TERMINAL = ("result", "error")


class _Keywords(SharedKeywords, total=False):
    """The keyword arguments of every run on a server, one objective or several: those of
    :func:`decido.optimize` (``callback``, ``monitor`` and ``vectorized`` have no meaning
    on a server), and its labels."""

    options: Mapping[str, float] | None
    metadata: Mapping[str, str] | None
    """labels of the run (:mod:`decido.metadata`); lists filter by them"""


class RunKeywords(_Keywords, total=False):
    """The keyword arguments of a run of one objective but ``goal``: the type of the
    client's run methods' ``**kwargs`` (:mod:`decido.client._run_methods`)."""

    target: float | None


class FrontKeywords(_Keywords, FrontOnlyKeywords, total=False):
    """The keyword arguments of a run of several objectives but ``goal``, with those only
    such a run of :func:`decido.minimize` takes (:class:`decido.run_spec.FrontOnlyKeywords`)."""


class RunArgs(RunKeywords, FrontKeywords, total=False):
    """The keyword arguments of a run, every one (:class:`RunKeywords`,
    :class:`FrontKeywords`), and its ``goal``."""

    goal: str


def _expression(item: Any, where: str) -> Any:
    """An objective's text (an Expression's); a callable cannot be sent."""
    if isinstance(item, Expression):
        return item.text
    if callable(item):
        raise EngineError("invalid_argument", "a server optimizes expressions: pass "
                          f"{where} as an expression string or a decido.Expression, "
                          "not a callable", where)
    return item


def _objectives(items: Objectives) -> list[Any]:
    """The ``objectives`` member: each item a dict with a ``name`` (``f1``, ``f2``, ...
    by default, as the library names them); anything else is sent as it is, for the
    server's 422 to name."""
    out: list[Any] = []
    for k, item in enumerate(items):
        if isinstance(item, Mapping):
            d = {"name": f"f{k + 1}", **item}
            if "expression" in d:
                d["expression"] = _expression(d["expression"], f"objectives[{k}].expression")
            out.append(d)
        else:
            out.append({"name": f"f{k + 1}",
                        "expression": _expression(item, f"objectives[{k}]")})
    return out


def _json(value: Any) -> Any:
    """An argument as JSON: arrays and tuples become lists, mappings dicts."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def run_body(objective: Objective | Objectives, bounds: ArrayLike | None,
             args: RunArgs) -> dict[str, Any]:
    """The JSON body of ``POST /v1/runs`` (None arguments are left out: the defaults); a
    list or tuple of objectives makes a run of several (``objectives``)."""
    body: dict[str, Any] = {}
    if isinstance(objective, (list, tuple)):
        body["objectives"] = _objectives(objective)
    else:
        text = _expression(objective, "the objective")
        if not isinstance(text, str):
            raise EngineError("invalid_argument", "a server optimizes expressions: pass the "
                              "objective as an expression string or a decido.Expression "
                              "(or a list of them for several objectives)", "objective")
        body["objective_expression"] = text
    if bounds is not None:
        body["bounds"] = np.asarray(bounds, dtype=np.float64).tolist()
    given = dict(args)
    options = with_stop_option(given.pop("options", None), given.pop("stop_on_convergence",
                                                                     None))
    for name, value in {**given, "options": options}.items():
        if value is not None:
            body[name] = _json(value)
    return body


def _history(trace: Mapping[str, Any]) -> list[tuple[int, float]]:
    """The trace's ``evaluations`` and ``best`` (a front's ``hypervolume``) columns as
    ``(evaluations, value)``."""
    columns = list(trace.get("columns") or ["evaluations", "best"])
    at = columns.index("evaluations")
    best = columns.index("hypervolume" if "hypervolume" in columns else "best")
    return [(int(p[at]), math.nan if p[best] is None else float(p[best]))
            for p in trace.get("points") or []]


def result_of(run: Mapping[str, Any], trace: Mapping[str, Any]) -> Result:
    """The library's result of a finished run (its document) and its trace (``columns``
    and ``points``: ``history`` is its ``evaluations`` and ``best`` columns)."""
    r = run["result"]
    if r.get("pareto") is not None:
        return front_result(run, trace)
    value = r.get("value")
    return OptimizeResult(
        x=np.asarray(r.get("x") or [], dtype=np.float64),
        fun=math.nan if value is None else float(value),
        evaluations=int(r.get("evaluations") or 0),
        iterations=int(r.get("iterations") or 0),
        status=status(str(r.get("status"))),
        message=str(r.get("message") or ""),
        elapsed=float(r.get("elapsed_ms") or 0.0) / 1e3,
        history=_history(trace),
        engine=str(run.get("engine")),
        seed=int(r["seed"]) if isinstance(r.get("seed"), int) else 0,
        goal=str(run.get("goal") or "minimize"),
        feasible=bool(r.get("feasible", True)),
        max_violation=_number(r.get("max_violation"), math.inf),
        constraints=[dict(c) for c in r.get("constraints") or []],
        variables=r.get("variables"),
    )


def front_result(run: Mapping[str, Any], trace: Mapping[str, Any]) -> ParetoResult:
    """The :class:`decido.ParetoResult` of a finished run of several objectives: its
    front's values as the library gives them (a null, a value that was not finite, is
    NaN; a null violation infinite), ``history`` the ``(evaluations, hypervolume)``
    points of its trace, ``variables`` the names of the request's variables."""
    r = run["result"]
    named = (run.get("request") or {}).get("variables")
    pareto = []
    for p in r["pareto"]:
        point: dict[str, Any] = {
            "x": [float(v) for v in p["x"]], "f": [_number(v, math.nan) for v in p["f"]],
            "feasible": bool(p["feasible"]),
            "max_violation": _number(p.get("max_violation"), math.inf)}
        if p.get("variables") is not None:
            point["variables"] = dict(p["variables"])
        pareto.append(point)
    return ParetoResult(
        pareto=pareto, hypervolume=_number(r.get("hypervolume"), math.nan),
        reference_point=[_number(v, math.nan) for v in r.get("reference_point") or []],
        objectives=[dict(o) for o in r.get("objectives") or []],
        evaluations=int(r.get("evaluations") or 0),
        iterations=int(r.get("iterations") or 0),
        status=status(str(r.get("status"))), message=str(r.get("message") or ""),
        elapsed=float(r.get("elapsed_ms") or 0.0) / 1e3, history=_history(trace),
        engine=str(run.get("engine")),
        seed=int(r["seed"]) if isinstance(r.get("seed"), int) else 0,
        variables=None if not named else [str(v["name"]) for v in named])


def _number(value: Any, missing: float) -> float:
    """A JSON number (null: ``missing``, e.g. a violation that was not finite)."""
    return missing if value is None else float(value)


class RunState(Generic[R]):
    """What a run handle knows: ``id``, the last ``document`` read and, once the run has
    ended with one, ``result`` (a :class:`decido.OptimizeResult`, or for a run of several
    objectives a :class:`decido.ParetoResult`)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.id: str = document["id"]
        self.document = document
        self.result: R | None = None

    @property
    def several(self) -> bool:
        """True for a run of several objectives (its result is their front)."""
        return (self.document.get("request") or {}).get("objectives") is not None

    @property
    def state(self) -> str:
        """``queued``, ``running``, ``succeeded``, ``failed`` or ``cancelled``."""
        return str(self.document["state"])

    @property
    def finished(self) -> bool:
        """The run has ended."""
        return self.state in FINISHED_RUN_STATES

    @property
    def metadata(self) -> dict[str, str]:
        """The run's labels (``{}``: none)."""
        return dict(self.document.get("metadata") or {})

    @property
    def progress(self) -> dict[str, Any] | None:
        """``evaluations``, ``iterations``, ``best``, ``elapsed_ms`` while it runs."""
        return self.document.get("progress")

    def __repr__(self) -> str:
        return f"<Run {self.id} {self.state}>"


def _path(run_id: str, *rest: str) -> str:
    return "/".join(("/v1/runs", run_id, *rest))


def _learn(run: RunState[Any], document: dict[str, Any]) -> Op[None]:
    """Keep ``document`` (with the ``request`` member of the last one that had it: an event
    stream sends it once); when it is a finished run with a result, read its trace once
    (and, for a run of several objectives, its whole front: :func:`front_points`)."""
    if "request" not in document and "request" in run.document:
        document = {**document, "request": run.document["request"]}
    run.document = document
    if run.result is None and document.get("result") is not None and run.finished:
        trace = (yield Call("GET", _path(run.id, "trace"), resend=True)).json()
        found = document["result"]
        if found.get("pareto") is None and found.get("front_size") is not None:
            found = {**found, "pareto": (yield from front_points(run.id))}
        run.result = result_of({**document, "result": found}, trace)


def front_points(run_id: str) -> Op[list[dict[str, Any]]]:
    """Every point of a finished run's front, page after page of ``GET
    /v1/runs/{id}/front`` (a run keeps its front apart: the run says its ``front_size``;
    each page is bounded in bytes by the key's tier)."""
    points: list[dict[str, Any]] = []
    query: dict[str, str] | None = None
    while True:
        page = (yield Call("GET", _path(run_id, "front"), params=query, resend=True)).json()
        points += page["data"]
        if not page["has_more"] or not page["data"]:
            return points
        query = {"starting_after": str(page["first"] + len(page["data"]) - 1)}


def submit(body: dict[str, Any], idempotency_key: str | None) -> Op[dict[str, Any]]:
    """``POST /v1/runs`` with an ``Idempotency-Key`` (a new one unless given), so a resent
    submission never makes a second run; the queued run's document."""
    key = idempotency_key or uuid.uuid4().hex
    reply = yield Call("POST", "/v1/runs", json=body, headers={"Idempotency-Key": key},
                       resend=True)
    document: dict[str, Any] = reply.json()
    return document


def get_run(run: RunState[R]) -> Op[RunState[R]]:
    """Read the run again (and its trace once it has ended)."""
    document = (yield Call("GET", _path(run.id), resend=True)).json()
    yield from _learn(run, document)
    return run


def cancel(run: RunState[R]) -> Op[RunState[R]]:
    """Ask the run to stop (it ends ``cancelled`` with its best so far)."""
    yield from _learn(run, (yield Call("POST", _path(run.id, "cancel"))).json())
    return run


def outcome(run: RunState[R]) -> R | None:
    """The result of an ended run; raise :class:`RunFailed` for a failed one (a run
    cancelled before it started has no result: None)."""
    if run.state == "failed":
        raise RunFailed(run.document)
    return run.result


def wait(run: RunState[R], timeout: float | None, progress: Progress | None,
         interval: float = 0.1, longest: float = 1.0) -> Op[R | None]:
    """Read the run until it ends (every ``interval`` seconds, growing to ``longest``),
    calling ``progress`` with its progress while it runs; its :func:`outcome`.
    :class:`Timeout` after ``timeout`` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        yield from get_run(run)
        if run.finished:
            return outcome(run)
        if progress is not None and run.progress is not None:
            progress(run.progress)
        if deadline is not None and time.monotonic() >= deadline:
            raise Timeout(f"run {run.id} is still {run.state} after {timeout} s")
        yield Sleep(interval if deadline is None else
                    max(0.0, min(interval, deadline - time.monotonic())))
        interval = min(longest, interval * 1.5)


def events(run: RunState[Any], last_id: str | None, reconnects: int = 5) -> Op[None]:
    """``GET /v1/runs/{id}/events``: emit every :class:`~decido.client.Event` until the
    terminal one (``result`` or ``error``), reconnecting with ``Last-Event-ID`` (up to
    ``reconnects`` times in a row) when the stream breaks. ``state``, ``result`` and
    ``error`` events update the handle; an ``error`` event without an id (a problem
    document: the service ended the stream, e.g. its key was revoked) raises it."""
    failures = 0
    while True:
        headers = {"Last-Event-ID": last_id} if last_id is not None else {}
        yield OpenStream(Call("GET", _path(run.id, "events"), headers=headers, resend=True))
        while True:
            event: Event | None = yield NextEvent()
            if event is None:
                break
            failures, last_id = 0, event.id if event.id is not None else last_id
            if event.event == "error" and event.id is None and isinstance(event.data, dict):
                # the service ended the stream (its key was revoked): a problem, no run
                raise error_from_problem(int(event.data.get("status", 500)), event.data, None)
            if event.event in ("state", *_TERMINAL) and isinstance(event.data, dict):
                yield from _learn(run, event.data)
            yield Emit(event)
            if event.event in _TERMINAL:
                return
        failures += 1
        if failures > reconnects:
            raise Timeout(f"the event stream of run {run.id} broke {failures} times in a row")
        yield Sleep(min(2.0, 0.1 * 2 ** failures))


def decision(request: Mapping[str, Any] | None, **members: Any) -> dict[str, Any]:
    """A decision request: ``request``'s members and the given (not None) ``members``."""
    return {**(request or {}), **{k: v for k, v in members.items() if v is not None}}


def decide(run: RunState[Any], request: Mapping[str, Any]) -> Op[dict[str, Any]]:
    """``POST /v1/decide`` on the run's front: ``from_run`` with the run's id and the
    members of ``request`` (method, criteria, constraints, ...); the answer's ranking items
    carry their point's ``x`` and ``f``."""
    answer: dict[str, Any] = yield from fetch("POST", "/v1/decide",
                                              {**_json(request), "from_run": run.id})
    return answer


def pages(path: str, params: Mapping[str, str | None]) -> Op[None]:
    """Emit every item of a paged list (``data``, ``has_more``, ``starting_after``)."""
    query = {k: v for k, v in params.items() if v is not None}
    while True:
        page = (yield Call("GET", path, params=query, resend=True)).json()
        for item in page["data"]:
            yield Emit(item)
        if not page["has_more"] or not page["data"]:
            return
        query["starting_after"] = page["data"][-1]["id"]


def filters(metadata: Mapping[str, str] | None, **params: str | None) -> dict[str, str | None]:
    """The query of a list: ``params`` and each label of ``metadata`` as
    ``metadata[key]=value`` (the service keeps the items that have them all)."""
    return {**params, **{f"metadata[{k}]": v for k, v in (metadata or {}).items()}}


def labelled(request: dict[str, Any], metadata: Mapping[str, str] | None,
             batch: bool = False) -> dict[str, Any]:
    """A decision (``batch``: a batch) body with its log entry's labels: ``metadata``
    (a batch's in ``defaults``); the body as it is when there are none."""
    if not metadata:
        return request
    if batch:
        return {**request, "defaults": {**(request.get("defaults") or {}),
                                        "metadata": dict(metadata)}}
    return {**request, "metadata": dict(metadata)}


def fetch(method: str, path: str, body: Any = None, **params: str | None) -> Op[Any]:
    """One call; its JSON answer. Reads are safe to resend."""
    query = {k: v for k, v in params.items() if v is not None} or None
    reply = yield Call(method, path, params=query, json=body, resend=method == "GET")
    return reply.json()


def engines() -> Op[list[dict[str, Any]]]:
    """``GET /v1/engines``: the list :func:`decido.engines` returns."""
    listed: list[dict[str, Any]] = (yield from fetch("GET", "/v1/engines"))["engines"]
    return listed


def create_key(label: str | None) -> Op[dict[str, Any]]:
    """``POST /v1/keys``: a new free key (``key`` is its secret, shown once)."""
    created: dict[str, Any] = yield from fetch(
        "POST", "/v1/keys", {} if label is None else {"label": label})
    return created
