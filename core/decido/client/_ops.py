"""The client's operations as generators of instructions (:mod:`decido.client._protocol`),
and the conversion of the service's JSON into the library's own types.

A remote optimization answers a :class:`decido.OptimizeResult` built from the run's
document and its trace (``x`` as an array, ``fun`` the objective value, ``elapsed`` in
seconds, ``history`` the ``(evaluations, best)`` points); a decision answers the same dict
:func:`decido.decide` returns.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypedDict

import numpy as np
from numpy.typing import ArrayLike

from decido.client._protocol import Call, Emit, Event, NextEvent, Op, OpenStream, Sleep
from decido.client.errors import RunFailed, Timeout
from decido.errors import EngineError
from decido.expression import Expression
from decido.optimize import OptimizeResult
from decido.status import FINISHED_RUN_STATES, status

__all__ = [
    "Objective",
    "Progress",
    "RunArgs",
    "RunState",
    "events",
    "filters",
    "get_run",
    "labelled",
    "pages",
    "run_body",
    "submit",
    "wait",
]

#: what a server can optimize: an expression (its text is sent)
Objective = str | Expression
#: a callback of :meth:`Run.wait`: called with the run's ``progress`` member
Progress = Callable[[dict[str, Any]], Any]
_TERMINAL = ("result", "error")


class RunArgs(TypedDict, total=False):
    """The keyword arguments of a run, as for :func:`decido.optimize` (``callback``,
    ``monitor`` and ``vectorized`` have no meaning on a server)."""

    goal: str
    engine: str | None
    max_evaluations: int | None
    time_limit: float | None
    target: float | None
    seed: int | None
    options: Mapping[str, float] | None
    constraints: list[str] | None
    constraint_tolerance: float | None
    metadata: Mapping[str, str] | None
    """labels of the run (:mod:`decido.metadata`); lists filter by them"""


def run_body(objective: Objective, bounds: ArrayLike, args: RunArgs) -> dict[str, Any]:
    """The JSON body of ``POST /v1/runs`` (None arguments are left out: the defaults)."""
    if isinstance(objective, Expression):
        objective = objective.text
    if not isinstance(objective, str):
        raise EngineError("invalid_argument", "a server optimizes expressions: pass the "
                          "objective as an expression string or a decido.Expression",
                          "objective")
    b = np.asarray(bounds, dtype=np.float64)
    body: dict[str, Any] = {"objective_expression": objective, "bounds": b.tolist()}
    for name, value in args.items():
        if value is not None:
            body[name] = dict(value) if isinstance(value, Mapping) else \
                list(value) if isinstance(value, (list, tuple)) else value
    return body


def optimize_result(run: Mapping[str, Any], trace: Mapping[str, Any]) -> OptimizeResult:
    """The library's result of a finished run (its document) and its trace (``columns``
    and ``points``: ``history`` is its ``evaluations`` and ``best`` columns)."""
    r = run["result"]
    columns = list(trace.get("columns") or ["evaluations", "best"])
    at, best = columns.index("evaluations"), columns.index("best")
    value = r.get("value")
    return OptimizeResult(
        x=np.asarray(r.get("x") or [], dtype=np.float64),
        fun=math.nan if value is None else float(value),
        evaluations=int(r.get("evaluations") or 0),
        iterations=int(r.get("iterations") or 0),
        status=status(str(r.get("status"))),
        message=str(r.get("message") or ""),
        elapsed=float(r.get("elapsed_ms") or 0.0) / 1e3,
        history=[(int(p[at]), math.nan if p[best] is None else float(p[best]))
                 for p in trace.get("points") or []],
        engine=str(run.get("engine")),
        seed=int(r["seed"]) if isinstance(r.get("seed"), int) else 0,
        goal=str(run.get("goal") or "minimize"),
        feasible=bool(r.get("feasible", True)),
        max_violation=_number(r.get("max_violation"), math.inf),
        constraints=[dict(c) for c in r.get("constraints") or []],
        variables=r.get("variables"),
    )


def _number(value: Any, missing: float) -> float:
    """A JSON number (null: ``missing``, e.g. a violation that was not finite)."""
    return missing if value is None else float(value)


class RunState:
    """What a run handle knows: ``id``, the last ``document`` read and, once the run has
    ended with one, ``result`` (a :class:`decido.OptimizeResult`)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.id: str = document["id"]
        self.document = document
        self.result: OptimizeResult | None = None

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


def _learn(run: RunState, document: dict[str, Any]) -> Op[None]:
    """Keep ``document``; when it is a finished run with a result, read its trace once."""
    run.document = document
    if run.result is None and document.get("result") is not None and run.finished:
        trace = (yield Call("GET", _path(run.id, "trace"), resend=True)).json()
        run.result = optimize_result(document, trace)


def submit(body: dict[str, Any], idempotency_key: str | None) -> Op[dict[str, Any]]:
    """``POST /v1/runs`` with an ``Idempotency-Key`` (a new one unless given), so a resent
    submission never makes a second run; the queued run's document."""
    key = idempotency_key or uuid.uuid4().hex
    reply = yield Call("POST", "/v1/runs", json=body, headers={"Idempotency-Key": key},
                       resend=True)
    document: dict[str, Any] = reply.json()
    return document


def get_run(run: RunState) -> Op[RunState]:
    """Read the run again (and its trace once it has ended)."""
    document = (yield Call("GET", _path(run.id), resend=True)).json()
    yield from _learn(run, document)
    return run


def cancel(run: RunState) -> Op[RunState]:
    """Ask the run to stop (it ends ``cancelled`` with its best so far)."""
    yield from _learn(run, (yield Call("POST", _path(run.id, "cancel"))).json())
    return run


def outcome(run: RunState) -> OptimizeResult | None:
    """The result of an ended run; raise :class:`RunFailed` for a failed one (a run
    cancelled before it started has no result: None)."""
    if run.state == "failed":
        raise RunFailed(run.document)
    return run.result


def wait(run: RunState, timeout: float | None, progress: Progress | None,
         interval: float = 0.1, longest: float = 1.0) -> Op[OptimizeResult | None]:
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


def events(run: RunState, last_id: str | None, reconnects: int = 5) -> Op[None]:
    """``GET /v1/runs/{id}/events``: emit every :class:`~decido.client.Event` until the
    terminal one (``result`` or ``error``), reconnecting with ``Last-Event-ID`` (up to
    ``reconnects`` times in a row) when the stream breaks. ``state``, ``result`` and
    ``error`` events update the handle."""
    failures = 0
    while True:
        headers = {"Last-Event-ID": last_id} if last_id is not None else {}
        yield OpenStream(Call("GET", _path(run.id, "events"), headers=headers, resend=True))
        while True:
            event: Event | None = yield NextEvent()
            if event is None:
                break
            failures, last_id = 0, event.id if event.id is not None else last_id
            if event.event in ("state", *_TERMINAL) and isinstance(event.data, dict):
                yield from _learn(run, event.data)
            yield Emit(event)
            if event.event in _TERMINAL:
                return
        failures += 1
        if failures > reconnects:
            raise Timeout(f"the event stream of run {run.id} broke {failures} times in a row")
        yield Sleep(min(2.0, 0.1 * 2 ** failures))


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
