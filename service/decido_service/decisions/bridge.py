"""From a front to a decision: ``"from_run": "run_…"`` in a ``/v1/decide`` body (or an item
of ``/v1/batch``) instead of ``options``.

The options are the run's Pareto front as :meth:`decido.ParetoResult.options` makes them
(id: the point's index as a string; attributes: the objectives' names with ``f``, then the
variables' names or ``x0``, ``x1``, ... with ``x``); ``criteria`` default to the objectives
with their goals and equal weights. Everything else of the body (method, constraints,
weighting, sensitivity, ties) goes to :func:`decido.decide` as it is, and each ranking item
of the answer carries its point's ``x`` and ``f``.

The run must be one of the key's (404 ``not_found`` otherwise), finished with a result
(409 ``run_not_finished``) and of several objectives (422 at ``/from_run``). The decision
log keeps the body as sent, ``from_run`` included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import decido
from decido_service.http.problems import ApiError, field_error, validation_error
from decido_service.runs.api import find
from decido_service.runs.execution import read_document
from decido_service.store import Store
from decido_service.types import RunResult

__all__ = ["FROM_RUN", "Points", "resolve", "resolve_batch", "with_points"]

#: the body member naming the run whose front is decided on
FROM_RUN = "from_run"
#: each front's points (``{"x", "f"}`` by option id), by the place of its decision
Points = dict[int, dict[str, dict[str, Any]]]


def _options(result: RunResult, variables: list[str] | None) -> list[dict[str, Any]]:
    """The front as decision options, named by the library's rule."""
    assert result.pareto is not None and result.objectives is not None
    front = decido.ParetoResult(
        pareto=[{"x": p.x, "f": p.f, "feasible": p.feasible,
                 "max_violation": p.max_violation} for p in result.pareto],
        hypervolume=result.hypervolume or 0.0, reference_point=[],
        objectives=[{"name": o.name, "goal": o.goal} for o in result.objectives],
        evaluations=result.evaluations, iterations=result.iterations, status=result.status,
        message=result.message, elapsed=result.elapsed_ms / 1e3, history=[],
        engine="", seed=result.seed, variables=variables)
    return front.options()


async def _front_body(store: Store, key_id: str, body: Mapping[str, Any], where: str
                      ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``body`` with its run's front as options (and default criteria), and the points
    by option id. ``where``: the JSON pointer of ``body`` in the request."""
    run_id = body[FROM_RUN]
    if "options" in body:
        raise validation_error([field_error(
            FROM_RUN, "invalid_argument", "give options or from_run, not both",
            pointer=f"{where}/{FROM_RUN}")])
    if not isinstance(run_id, str):
        raise validation_error([field_error(
            FROM_RUN, "invalid_type", "from_run must be a run id (run_ + 24 hex digits)",
            pointer=f"{where}/{FROM_RUN}")])
    row = await find(store, key_id, run_id)
    document = read_document(row["document"])
    result = document.result
    if result is None:
        raise ApiError("run_not_finished", f"run {run_id} is {row['state']}: it has no "
                                           "front to decide on (yet)")
    if result.pareto is None or result.objectives is None:
        raise validation_error([field_error(
            FROM_RUN, "invalid_argument",
            f"run {run_id} has one objective: from_run takes a run of several "
            "(its front)", pointer=f"{where}/{FROM_RUN}")])
    request = document.request
    variables = None if request.variables is None else [v.name for v in request.variables]
    options = _options(result, variables)
    decided = {k: v for k, v in body.items() if k != FROM_RUN}
    decided["options"] = options
    if "criteria" not in decided:
        decided["criteria"] = [{"attribute": o.name, "goal": o.goal, "weight": 1.0}
                               for o in result.objectives]
    points = {str(i): {"x": p.x, "f": p.f} for i, p in enumerate(result.pareto)}
    return decided, points


async def resolve(store: Store, key_id: str, body: Any) -> tuple[Any, Points]:
    """A ``/v1/decide`` body with ``from_run`` resolved (others unchanged)."""
    if not isinstance(body, Mapping) or FROM_RUN not in body:
        return body, {}
    decided, points = await _front_body(store, key_id, body, "")
    return decided, {0: points}


async def resolve_batch(store: Store, key_id: str, body: Any) -> tuple[Any, Points]:
    """A ``/v1/batch`` body with the ``from_run`` of each item resolved: the item's own,
    else the ``defaults``' (an item with ``options`` of its own takes none from there). An
    item whose ``from_run`` cannot be resolved (an unknown or unfinished run, a run of one
    objective) fails on its own, as any other bad item does: it goes on as an item the
    library answers with that error (:func:`_failed_item`), the others are decided."""
    items = body.get("decisions") if isinstance(body, Mapping) else None
    defaults = body.get("defaults") if isinstance(body, Mapping) else None
    shared = defaults.get(FROM_RUN) if isinstance(defaults, Mapping) else None
    if not isinstance(items, list) or (shared is None and not any(
            isinstance(item, Mapping) and FROM_RUN in item for item in items)):
        return body, {}
    out: list[Any] = []
    found: Points = {}
    for k, item in enumerate(items):
        if isinstance(item, Mapping) and shared is not None and FROM_RUN not in item \
                and "options" not in item:
            item = {**item, FROM_RUN: shared}
        if isinstance(item, Mapping) and FROM_RUN in item:
            try:
                item, found[k] = await _front_body(store, key_id, item, f"/decisions/{k}")
            except ApiError as refused:
                item = _failed_item(item, refused)
        out.append(item)
    resolved = {**body, "decisions": out}
    if isinstance(defaults, Mapping) and FROM_RUN in defaults:
        resolved["defaults"] = {k: v for k, v in defaults.items() if k != FROM_RUN}
    return resolved, found


#: the member of a batch item whose ``from_run`` could not be resolved: the library refuses
#: it as an unknown field of that item only, and :func:`with_points` answers the item with
#: the refusal it carries
_REFUSED = "__from_run_refused__"


def _failed_item(item: Mapping[str, Any], refused: ApiError) -> dict[str, Any]:
    """A batch item standing for one whose ``from_run`` was refused: its ``id`` and the
    refusal (code, message), answered by :func:`with_points` as that item's error."""
    errors = (refused.extra or {}).get("errors") or [{"code": refused.code,
                                                      "message": refused.detail}]
    error = {"code": errors[0]["code"], "message": "; ".join(e["message"] for e in errors),
             "path": FROM_RUN}
    return {"id": item.get("id"), _REFUSED: error}


def _answer_refused(answer: dict[str, Any], items: list[Any]) -> None:
    """Put the refusal of each item :func:`_failed_item` made in its place in the answer."""
    results = answer.get("results", [])
    for k, item in enumerate(items):
        if isinstance(item, Mapping) and _REFUSED in item and k < len(results):
            results[k] = {"id": item.get("id"), "status": "error", "error": item[_REFUSED]}
    n_error = sum(r.get("status") == "error" for r in results if isinstance(r, dict))
    answer.update(n_ok=len(results) - n_error, n_error=n_error)


def _attach(answer: dict[str, Any], points: dict[str, dict[str, Any]]) -> None:
    for item in answer.get("ranking", ()):
        point = points.get(str(item.get("id")))
        if point is not None:
            item.update(point)


def with_points(fn: Callable[[Any], dict[str, Any]], points: Points, *, batch: bool
                ) -> Callable[[Any], dict[str, Any]]:
    """``fn`` whose answer's ranking items carry their front point's ``x`` and ``f`` (and,
    for a batch, whose items with a refused ``from_run`` answer that refusal)."""
    def decide(body: Any) -> dict[str, Any]:
        answer = fn(body)
        if not batch:
            if points:
                _attach(answer, points[0])
            return answer
        results = answer.get("results", [])
        for k, front in points.items():
            if k < len(results) and isinstance(results[k], dict):
                _attach(results[k], front)
        items = body.get("decisions") if isinstance(body, Mapping) else None
        if isinstance(items, list):
            _answer_refused(answer, items)
        return answer

    return decide
