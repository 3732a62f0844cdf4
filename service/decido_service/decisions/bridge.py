"""From a front to a decision: ``"from_run": "run_…"`` in a ``/v1/decide`` body (or an item
of ``/v1/batch``) instead of ``options``.

The options are the run's Pareto front as :meth:`decido.ParetoResult.options` makes them
(id: the point's index as a string; attributes: the objectives' names with ``f``, then the
variables' names or ``x0``, ``x1``, ... with ``x``); ``criteria`` default to the objectives
with their goals and equal weights. Everything else of the body (method, constraints,
weighting, sensitivity, ties) goes to :func:`decido.decide` as it is, and each ranking item
of the answer carries its point's ``x`` and ``f``.

The run must be one of the key's (404 ``not_found`` otherwise), finished with a result
(409 ``run_not_finished``) and of several objectives (422 at ``/from_run``). The fronts of
one request (a batch's items together) hold at most the plan's ``from_run_points`` points:
beyond, a 422 lists each ``from_run`` up to the one past the cap with its front's size,
before anything is decided (and no further front is read).
Reading a front (its points decoded, its options made) is CPU work done in the
worker's decision threads (``pool``), never on the event loop; so is the decision
(:func:`decido_service.decisions.decide.decide` with ``heavy``). The decision log keeps the
body as sent, ``from_run`` included.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any, NamedTuple

import orjson

import decido
from decido.goals import goal_name
from decido_service import limits
from decido_service.config import Settings
from decido_service.errors import ServiceError, field_error, validation_error
from decido_service.runs import front as run_front
from decido_service.runs.api import find
from decido_service.store import KeyRecord, Store
from decido_service.studies.views import trial_json
from decido_service.types import ParetoPoint, RunDocument, RunResult
from decido_service.types.studies import STUDY_ID_PATTERN

__all__ = ["FROM_RUN", "FROM_STUDY", "Points", "Source", "resolve", "resolve_batch",
           "with_points"]

#: the body member naming the run whose front is decided on
FROM_RUN = "from_run"
#: the body member naming the study whose front (several objectives) or completed trials
#: (one objective) are decided on: option ids are the trials' numbers as strings
FROM_STUDY = "from_study"
#: the most completed trials of a study of one objective read for a decision (without a
#: plan cap)
_STUDY_TRIALS = 100_000
#: what a study id looks like
STUDY_ID = re.compile(STUDY_ID_PATTERN)
#: each front's points (``{"x", "f"}`` by option id), by the place of its decision
Points = dict[int, dict[str, dict[str, Any]]]


def _options(result: RunResult, pareto: list[ParetoPoint],
             variables: list[str] | None) -> list[dict[str, Any]]:
    """The front (``pareto``, of the run of ``result``) as decision options, named by the
    library's rule."""
    assert result.objectives is not None
    front = decido.ParetoResult(
        pareto=[{"x": p.x, "f": p.f, "feasible": p.feasible,
                 "max_violation": p.max_violation} for p in pareto],
        hypervolume=result.hypervolume or 0.0, reference_point=[],
        objectives=[{"name": o.name, "goal": o.goal} for o in result.objectives],
        evaluations=result.evaluations, iterations=result.iterations, status=result.status,
        message=result.message, elapsed=result.elapsed_ms / 1e3, history=[],
        engine="", seed=result.seed, variables=variables)
    return front.options()


class Source(NamedTuple):
    """Where fronts are read: the store, the key deciding (its runs, its plan's
    ``from_run_points``), the decision threads and the settings (plans)."""

    store: Store
    key: KeyRecord
    pool: Executor
    settings: Settings | None = None


class _Front(NamedTuple):
    """A front read for a body: ``decided`` (None when it did not fit: only its size was
    read), its points by option id and its size."""

    decided: dict[str, Any] | None
    points: dict[str, dict[str, Any]]
    size: int


async def _front_body(source: Source, body: Mapping[str, Any], where: str, room: int | None
                      ) -> _Front:
    """``body`` with its run's front as options (and default criteria), and the points
    by option id, read in the decision threads; only the size when it holds more than
    ``room`` points (None: no cap). ``where``: the JSON pointer of ``body``."""
    if FROM_STUDY in body:
        return await _study_body(source, body, where, room)
    run_id = body[FROM_RUN]
    if "options" in body:
        raise _fault(FROM_RUN, where, "invalid_argument", "give options or from_run, not both")
    if not isinstance(run_id, str):
        raise _fault(FROM_RUN, where, "invalid_type",
                     "from_run must be a run id (run_ + 24 hex digits)")
    row = await find(source.store, source.key["id"], run_id)
    document = row.document
    result = document.result
    if result is None:
        raise ServiceError("run_not_finished", f"run {run_id} is {row.state}: it has no "
                                           "front to decide on (yet)")
    if result.objectives is None:
        raise _fault(FROM_RUN, where, "invalid_argument", f"run {run_id} has one objective: "
                     "from_run takes a run of several (its front)")
    size = result.front_size if result.front_size is not None else len(result.pareto or ())
    if room is not None and size > room:
        return _Front(None, {}, size)
    pareto = await run_front.points(source.store, row)
    assert pareto is not None
    return await asyncio.get_running_loop().run_in_executor(source.pool, _decided, document,
                                                            pareto, body)


def _fault(member: str, where: str, code: str, message: str) -> ServiceError:
    """The 422 of a fault of ``member`` of the body at ``where`` (its JSON pointer)."""
    return validation_error([field_error(member, code, message, pointer=f"{where}/{member}")])


async def _study_body(source: Source, body: Mapping[str, Any], where: str, room: int | None
                      ) -> _Front:
    """``body`` with its study's trials as options: the front of a study of several
    objectives, the completed trials of one of one objective (ids: trial numbers)."""
    study_id = body[FROM_STUDY]
    if "options" in body or FROM_RUN in body:
        raise _fault(FROM_STUDY, where, "invalid_argument",
                           "give one of options, from_run and from_study")
    if not isinstance(study_id, str):
        raise _fault(FROM_STUDY, where, "invalid_type",
                           "from_study must be a study id (st_ + 24 hex digits)")
    row = await source.store.studies.get(source.key["id"], study_id) \
        if STUDY_ID.fullmatch(study_id) else None
    if row is None:
        raise ServiceError("not_found", f"no study {study_id!r} of this key")
    spec = orjson.loads(row["spec"])["library"]
    objectives = spec["objectives"] or [{"name": "value", "goal": goal_name(spec["goal"])}]
    if len(objectives) > 1:
        summary = orjson.loads(row["summary"] or "{}")
        trials = list(summary.get("pareto") or [])
    else:
        limit = _STUDY_TRIALS if room is None else room + 1
        rows = await source.store.studies.trials(source.key["id"], study_id, limit, None,
                                                 "completed") or []
        trials = [trial_json(r) for r in rows]
    if room is not None and len(trials) > room:
        return _Front(None, {}, len(trials))
    if not trials:
        raise _fault(FROM_STUDY, where, "invalid_argument",
                           f"study {study_id} has no completed trial to decide on yet")
    return await asyncio.get_running_loop().run_in_executor(
        source.pool, _study_decided, objectives, trials, body)


def _study_decided(objectives: list[dict[str, str]], trials: list[dict[str, Any]],
                   body: Mapping[str, Any]) -> _Front:
    """:func:`_study_body`'s CPU work (a decision thread)."""
    names = [o["name"] for o in objectives]
    options = []
    for t in trials:
        attributes: dict[str, Any] = dict(zip(names, t["values"], strict=True))
        attributes.update({k: v for k, v in t["variables"].items()
                           if isinstance(v, (int, float)) and not isinstance(v, bool)
                           and k not in attributes})
        options.append({"id": str(t["number"]), "attributes": attributes})
    points = {str(t["number"]): {"x": t["x"], "f": t["values"]} for t in trials}
    return _with_options(body, FROM_STUDY, options, objectives, points)


def _decided(document: RunDocument, pareto: list[ParetoPoint], body: Mapping[str, Any]
             ) -> _Front:
    """:func:`_front_body`'s CPU work (a decision thread): the front made into options."""
    result = document.result
    assert result is not None and result.objectives is not None
    request = document.request
    variables = None if request.variables is None else [v.name for v in request.variables]
    points = {str(i): {"x": p.x, "f": p.f} for i, p in enumerate(pareto)}
    return _with_options(body, FROM_RUN, _options(result, pareto, variables),
                         [{"name": o.name, "goal": o.goal} for o in result.objectives], points)


def _with_options(body: Mapping[str, Any], member: str, options: list[dict[str, Any]],
                  objectives: list[dict[str, str]], points: dict[str, dict[str, Any]]
                  ) -> _Front:
    """``body`` deciding on a front's ``options`` instead of its ``member``, its criteria
    (unless it gives its own) the ``objectives`` with their goals and equal weights."""
    decided = {k: v for k, v in body.items() if k != member}
    decided["options"] = options
    if "criteria" not in decided:
        decided["criteria"] = [{"attribute": o["name"], "goal": o["goal"], "weight": 1.0}
                               for o in objectives]
    return _Front(decided, points, len(points))


async def resolve(source: Source, body: Any) -> tuple[Any, Points]:
    """A ``/v1/decide`` body with ``from_run`` resolved (others unchanged)."""
    if not isinstance(body, dict) or (FROM_RUN not in body and FROM_STUDY not in body):
        return body, {}
    cap = _cap(source)
    front = await _front_body(source, body, "", cap)
    if front.decided is None:
        member = _member(body)
        raise _over_cap(source, cap, [("", member, body[member], front.size)], front.size)
    return front.decided, {0: front.points}


async def resolve_batch(source: Source, body: Any) -> tuple[Any, Points]:
    """A ``/v1/batch`` body with the ``from_run`` of each item resolved: the item's own,
    else the ``defaults``' (an item with ``options`` of its own takes none from there). An
    item whose ``from_run`` cannot be resolved (an unknown or unfinished run, a run of one
    objective) fails on its own, as any other bad item does: it goes on as an item the
    library answers with that error (:func:`_failed_item`), the others are decided. The
    fronts together are under the plan's cap, or the whole batch is refused (422)."""
    items = body.get("decisions") if isinstance(body, dict) else None
    defaults = body.get("defaults") if isinstance(body, dict) else None
    shared = defaults.get(FROM_RUN) if isinstance(defaults, dict) else None
    if not isinstance(items, list) or (shared is None and not any(
            isinstance(item, dict) and (FROM_RUN in item or FROM_STUDY in item)
            for item in items)):
        return body, {}
    cap = _cap(source)
    out: list[Any] = []
    found: Points = {}
    read: list[tuple[str, str, str, int]] = []  # (where, member, id, front size) of each
    total = 0
    for k, item in enumerate(items):
        if isinstance(item, dict) and shared is not None and FROM_RUN not in item \
                and FROM_STUDY not in item and "options" not in item:
            item = {**item, FROM_RUN: shared}
        if isinstance(item, dict) and (FROM_RUN in item or FROM_STUDY in item):
            where = f"/decisions/{k}"
            try:
                front = await _front_body(source, item, where,
                                          None if cap is None else max(cap - total, 0))
            except ServiceError as refused:
                out.append(_failed_item(item, refused))
                continue
            total += front.size
            member = _member(item)
            read.append((where, member, item[member], front.size))
            if cap is not None and total > cap:  # no more fronts read: refused already
                raise _over_cap(source, cap, read, total)
            assert front.decided is not None
            item, found[k] = front.decided, front.points
        out.append(item)
    resolved = {**body, "decisions": out}
    if isinstance(defaults, dict) and FROM_RUN in defaults:
        resolved["defaults"] = {k: v for k, v in defaults.items() if k != FROM_RUN}
    return resolved, found


#: the member of a batch item whose ``from_run`` could not be resolved: the library refuses
#: it as an unknown field of that item only, and :func:`with_points` answers the item with
#: the refusal it carries
_REFUSED = "__from_run_refused__"


def _failed_item(item: Mapping[str, Any], refused: ServiceError) -> dict[str, Any]:
    """A batch item standing for one whose ``from_run`` was refused: its ``id`` and the
    refusal (code, message), answered by :func:`with_points` as that item's error."""
    errors = (refused.extra or {}).get("errors") or [{"code": refused.code,
                                                      "message": refused.detail}]
    error = {"code": errors[0]["code"], "message": "; ".join(e["message"] for e in errors),
             "path": _member(item)}
    return {"id": item.get("id"), _REFUSED: error}


def _answer_refused(answer: dict[str, Any], items: list[Any]) -> None:
    """Put the refusal of each item :func:`_failed_item` made in its place in the answer."""
    results = answer.get("results", [])
    for k, item in enumerate(items):
        if isinstance(item, dict) and _REFUSED in item and k < len(results):
            results[k] = {"id": item.get("id"), "status": "error", "error": item[_REFUSED]}
    n_error = sum(r.get("status") == "error" for r in results if isinstance(r, dict))
    answer.update(n_ok=len(results) - n_error, n_error=n_error)


def _cap(source: Source) -> int | None:
    """The plan's ``from_run_points`` (None: no cap)."""
    cap: int | None = limits.plan_limits(source.key, settings=source.settings)[
        "from_run_points"]
    return cap


def _over_cap(source: Source, cap: int | None, read: list[tuple[str, str, str, int]],
              total: int) -> ServiceError:
    """The 422 of fronts holding more than the plan's cap: one entry per front read (the
    items up to the one past the cap: where, the member naming it, its id and size)."""
    plan = source.key["plan"]
    return validation_error([field_error(
        member, "above_plan_cap",
        f"the front of {source_id} has {size} points; the {plan} plan decides on at most "
        f"{cap} front points per request (the fronts named up to here hold {total})",
        pointer=f"{where}/{member}") for where, member, source_id, size in read])


def _member(body: Mapping[str, Any]) -> str:
    """The member of ``body`` that names its front: ``from_study``, else ``from_run``."""
    return FROM_STUDY if FROM_STUDY in body else FROM_RUN


def _attach(answer: dict[str, Any], points: dict[str, dict[str, Any]]) -> None:
    for item in answer.get("ranking", ()):
        point = points.get(str(item.get("id")))
        if point is not None:
            item.update(point)


def with_points(fn: Callable[[Any], dict[str, Any]], points: Points, *, batch: bool
                ) -> Callable[[Any], dict[str, Any]]:
    """``fn`` whose answer's ranking items carry their front point's ``x`` and ``f`` (and,
    for a batch, whose items with a refused ``from_run`` answer that refusal): ``fn``
    itself for a decision on no front."""
    if not points and not batch:
        return fn

    def decide(body: Any) -> dict[str, Any]:
        answer = fn(body)
        if not batch:
            _attach(answer, points[0])
            return answer
        results = answer.get("results", [])
        for k, front in points.items():
            if k < len(results) and isinstance(results[k], dict):
                _attach(results[k], front)
        items = body.get("decisions") if isinstance(body, dict) else None
        if isinstance(items, list):
            _answer_refused(answer, items)
        return answer

    return decide
