"""Runs as resources, read and changed: what ``/v1/runs`` and the dashboard both call.

A key sees only its own runs: another key's run, an unknown id and a malformed one are all
404 ``not_found`` (a malformed id without a store lookup). Every read goes to the store, so
any worker answers for any run. :func:`run_view` turns a store row into the API's ``Run``;
its Server-Sent Events are :func:`decido_service.http.events.send_events`.
"""

from __future__ import annotations

import re

import msgspec
import orjson

from decido_service.errors import ServiceError
from decido_service.runs.execution import cancel_queued
from decido_service.runs.trace import columns_of
from decido_service.store import FINISHED_STATES, RunRow, Store
from decido_service.types import RUN_ID_PATTERN, Run, RunList, RunPage, RunResult, RunTrace

__all__ = ["RUN_ID", "cancel", "delete", "find", "front_result", "not_found", "page",
           "run_trace", "run_view", "trace_csv", "valid_run_id"]

#: what a run id looks like (:data:`~decido_service.types.RUN_ID_PATTERN`)
RUN_ID = re.compile(RUN_ID_PATTERN)


#: how a finished run ended, for a sentence ("run ... has already succeeded")
_ENDED = {"succeeded": "succeeded", "failed": "failed", "cancelled": "been cancelled"}


def valid_run_id(text: str) -> bool:
    """True when ``text`` has the shape of a run id (others are 404 without a lookup)."""
    return RUN_ID.fullmatch(text) is not None


def run_view(row: RunRow) -> Run:
    """The API's ``Run`` of a store row: a front's size, never its points
    (:mod:`decido_service.runs.front`)."""
    doc = row.document
    result = doc.result
    if result is not None and result.pareto is not None:  # written before fronts had rows
        result = msgspec.structs.replace(result, pareto=None, front_size=len(result.pareto))
    return Run(id=row.id, state=row.state, created_at=row.created_at,
               started_at=doc.started_at, finished_at=row.finished_at,
               engine=row.engine, goal=row.goal, dims=row.dims, request=doc.request,
               progress=doc.progress, result=result, problem=doc.problem,
               cancel_requested=row.cancel_requested, metadata=row.metadata)


def run_trace(row: RunRow) -> RunTrace:
    """The run's convergence trace (:mod:`decido_service.runs.trace`)."""
    return RunTrace(run_id=row.id, columns=columns_of(row.document.request.several),
                    points=row.document.trace)


def front_result(row: RunRow) -> RunResult:
    """The result of the finished run of several objectives of ``row``; 409
    ``run_not_finished`` for a run without a result (yet), 404 for one of one objective
    (no front)."""
    result = row.document.result
    if result is None:
        why = "its front is written when it ends" if row.state in ("queued", "running") \
            else "it ended without a result, so it has no front"
        raise ServiceError("run_not_finished", f"run {row.id} is {row.state}: {why}")
    if result.objectives is None:
        raise ServiceError("not_found", f"run {row.id} has one objective: it has no front "
                                    "(its result is one point, x and value)")
    return result


def not_found(run_id: str) -> ServiceError:
    """The 404 of a run that is not one of the key's (or no run at all)."""
    return ServiceError("not_found", f"no run {run_id!r} of this key")


async def find(store: Store, key_id: str, run_id: str) -> RunRow:
    """The row of one of ``key_id``'s runs; 404 ``not_found`` otherwise (a malformed id
    without a lookup)."""
    row = await store.runs.get(key_id, run_id) if valid_run_id(run_id) else None
    if row is None:
        raise not_found(run_id)
    return row


async def page(store: Store, key_id: str, query: RunPage) -> RunList:
    """A page of ``key_id``'s runs, newest first."""
    rows = await store.runs.page(key_id, query.limit + 1, query.starting_after, query.state,
                                 query.engine, query.metadata)
    return RunList(data=[run_view(r) for r in rows[:query.limit]],
                   has_more=len(rows) > query.limit)


async def cancel(store: Store, key_id: str, run_id: str) -> Run:
    """Ask a queued or running run to stop (a queued one nobody took ends at once); its
    row after the request. 404 for a run that is not the key's, 409 ``run_finished`` for
    a finished one."""
    state = await store.runs.request_cancel(key_id, run_id) if valid_run_id(run_id) else None
    if state is None:
        raise not_found(run_id)
    if state in FINISHED_STATES:
        raise ServiceError("run_finished", f"run {run_id} has already {_ENDED[state]}")
    if state == "queued":
        await cancel_queued(store, run_id)
    return run_view(await find(store, key_id, run_id))


def trace_csv(trace: RunTrace) -> str:
    """A trace as CSV: the header (its columns), then one line per point (an unknown
    ``elapsed_ms`` empty)."""
    lines = [",".join(trace.columns)] + [",".join(
        "" if v is None else orjson.dumps(v).decode() for v in point) for point in trace.points]
    return "\n".join(lines) + "\n"


async def delete(store: Store, key_id: str, run_id: str) -> None:
    """Delete a finished run of ``key_id``; 404 for a run that is not the key's, 409
    ``run_not_finished`` for a queued or running one."""
    state = await store.runs.delete(key_id, run_id) if valid_run_id(run_id) else None
    if state is None:
        raise not_found(run_id)
    if state not in FINISHED_STATES:
        raise ServiceError("run_not_finished",
                       f"run {run_id} is {state}; cancel it and delete it once it ends")

