"""Runs as resources, read and changed: what ``/v1/runs`` and the dashboard both call.

A key sees only its own runs: another key's run, an unknown id and a malformed one are all
404 ``not_found`` (a malformed id without a store lookup). Every read goes to the store, so
any worker answers for any run. :func:`run_view` turns a store row into the API's ``Run``;
its Server-Sent Events are :func:`decido_service.runs.events.send_events`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

from decido_service.http.problems import ApiError
from decido_service.pages import page_limit
from decido_service.runs.execution import cancel_queued
from decido_service.runs.trace import COLUMNS, points
from decido_service.schemas import engine_table
from decido_service.store import FINISHED_STATES, RUN_STATES, Store
from decido_service.types import RUN_ID_PATTERN

__all__ = ["RUN_ID", "PageQuery", "cancel", "delete", "find", "not_found", "page",
           "page_query", "run_view", "trace_csv", "valid_run_id"]

#: what a run id looks like (:data:`~decido_service.types.RUN_ID_PATTERN`)
RUN_ID = re.compile(RUN_ID_PATTERN)


def valid_run_id(text: str) -> bool:
    """True when ``text`` has the shape of a run id (others are 404 without a lookup)."""
    return RUN_ID.fullmatch(text) is not None


def run_view(row: dict[str, Any], *, trace: bool = False) -> dict[str, Any]:
    """The API's ``Run`` document of a store row (``trace`` included on request)."""
    doc: dict[str, Any] = orjson.loads(row["document"]) if row.get("document") else {}
    result = doc.get("result")
    if result is None and row.get("document") is None and row.get("status") is not None:
        result = {"status": row["status"], "value": row["value"],
                  "evaluations": row["evaluations"], "elapsed_ms": row["elapsed_ms"],
                  "seed": row["seed"], "x": None, "iterations": None, "message": None}
    out = {
        "id": row["id"], "state": row["state"] or "succeeded",
        "created_at": row["created_at"], "started_at": doc.get("started_at"),
        "finished_at": row.get("finished_at"), "engine": row["engine"], "goal": row["goal"],
        "dims": row["dims"], "request": doc.get("request"), "progress": doc.get("progress"),
        "result": result, "problem": doc.get("problem"),
        "cancel_requested": bool(row.get("cancel_requested")),
    }
    if trace:
        out["trace"] = points(doc.get("trace") or [])
    return out


class PageQuery(NamedTuple):
    """A page of a key's runs: its size, the cursor and the filters."""

    limit: int
    starting_after: str | None
    state: str | None
    engine: str | None


def not_found(run_id: str) -> ApiError:
    """The 404 of a run that is not one of the key's (or no run at all)."""
    return ApiError("not_found", f"no run {run_id!r} of this key")


async def find(store: Store, key_id: str, run_id: str) -> dict[str, Any]:
    """The row of one of ``key_id``'s runs; 404 ``not_found`` otherwise (a malformed id
    without a lookup)."""
    row = await store.get_run(key_id, run_id) if valid_run_id(run_id) else None
    if row is None:
        raise not_found(run_id)
    return row


def page_query(args: Mapping[str, str]) -> PageQuery:
    """The page asked for by ``limit``, ``starting_after``, ``state`` and ``engine`` (one
    value each); 400 ``invalid_parameter`` naming the first bad one."""
    limit = page_limit(args.get("limit"))
    after, state, engine = args.get("starting_after"), args.get("state"), args.get("engine")
    if after is not None and not valid_run_id(after):
        raise ApiError("invalid_parameter", f"starting_after: {after!r} is not a run id")
    if state is not None and state not in RUN_STATES:
        raise ApiError("invalid_parameter", f"state: expected one of {', '.join(RUN_STATES)}")
    if engine is not None and engine not in engine_table():
        raise ApiError("invalid_parameter", f"engine: {engine!r} is not an engine id (/v1/engines)")
    return PageQuery(limit, after, state, engine)


async def page(store: Store, key_id: str, query: PageQuery) -> tuple[list[dict[str, Any]], bool]:
    """The rows of a page of ``key_id``'s runs, newest first, and whether more follow."""
    try:
        rows = await store.page_runs(key_id, query.limit + 1, query.starting_after, query.state,
                                     query.engine)
    except ValueError as exc:  # a cursor that is not one of the key's runs
        raise ApiError("invalid_parameter", str(exc)) from None
    return rows[:query.limit], len(rows) > query.limit


async def cancel(store: Store, key_id: str, run_id: str) -> dict[str, Any]:
    """Ask a queued or running run to stop (a queued one nobody took ends at once); its
    row after the request. 404 for a run that is not the key's, 409 ``run_finished`` for
    a finished one."""
    state = await store.request_cancel(key_id, run_id) if valid_run_id(run_id) else None
    if state is None:
        raise not_found(run_id)
    if state in FINISHED_STATES:
        raise ApiError("run_finished", f"run {run_id} is already {state}")
    if state == "queued":
        await cancel_queued(store, run_id)
    return await find(store, key_id, run_id)


def trace_csv(trace: list[list[Any]]) -> str:
    """A trace as CSV: the header :data:`~decido_service.runs.trace.COLUMNS`, then one
    line per point (an unknown ``elapsed_ms`` empty)."""
    lines = [",".join(COLUMNS)] + [",".join("" if v is None else orjson.dumps(v).decode()
                                            for v in point) for point in trace]
    return "\n".join(lines) + "\n"


async def delete(store: Store, key_id: str, run_id: str) -> None:
    """Delete a finished run of ``key_id``; 404 for a run that is not the key's, 409
    ``run_not_finished`` for a queued or running one."""
    state = await store.delete_run(key_id, run_id) if valid_run_id(run_id) else None
    if state is None:
        raise not_found(run_id)
    if state not in FINISHED_STATES:
        raise ApiError("run_not_finished",
                       f"run {run_id} is {state}; cancel it and delete it once it ends")

