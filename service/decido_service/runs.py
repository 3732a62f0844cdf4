"""Runs as resources: the run record, its document, its trace, and how a run executes.

Every optimization the service admits (``POST /v1/runs`` and ``POST /v1/optimize``) is a
row of the store's ``runs`` table from the moment it is counted until it is deleted: it is
created ``queued`` right after admission, becomes ``running`` when a thread of the run pool
picks it up, and ends ``succeeded``, ``failed`` or ``cancelled``. All of it goes through the
store, not the memory of one worker, because the service runs several worker processes and
a read or a cancel may reach another worker than the one executing the run:

- the executing worker writes the run's progress (evaluations, iterations, best so far,
  elapsed) into the run's document at most every :data:`PROGRESS_INTERVAL` seconds;
- ``POST /v1/runs/{id}/cancel`` sets the row's ``cancel_requested`` flag; the executing
  worker reads it at the same pace and stops the run through its :class:`decido.RunMonitor`
  (the run ends after its current iteration, ``cancelled``, its best so far kept). A run
  cancelled before a thread picked it up ends ``cancelled`` without a result;
- a run the engine ends with status ``stopped`` (its monitor was stopped: a cancel, or the
  ``/v1/optimize`` client went away) is ``cancelled``; an error inside the run is
  ``failed`` with a problem document.

The stored document (JSON in the row's ``document`` column) holds ``request`` (the body as
decoded, defaults filled in), ``started_at``, ``progress``, ``result``, ``problem`` and
``trace``; :func:`run_view` turns a row into the API's ``Run``. Rows written before runs
were resources have no document: they read back with their engine, goal, seed, status,
value and evaluations, and ``request`` ``null``.

The trace is ``[evaluations, best]`` at every improvement of the run (the engine's history),
thinned to at most :data:`TRACE_POINTS` points by :func:`thin_trace`.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import msgspec
import orjson

import decido
from decido_service.errors import PROBLEM_BASE, ApiError, as_api_error
from decido_service.schemas import engine_table
from decido_service.store import FINISHED_STATES, RUN_STATES, KeyRecord, Store, iso_utc
from decido_service.types import RUN_ID_PATTERN, OptimizeRequest

__all__ = ["PROGRESS_INTERVAL", "RUN_ID", "TRACE_POINTS", "Execution", "new_run_id",
           "run_problem", "run_view", "start", "thin_trace", "valid_run_id",
           "SHUTDOWN_GRACE", "fail_interrupted", "wind_down",
           "DEFAULT_PAGE", "MAX_PAGE", "TRACE_COLUMNS", "PageQuery", "cancel", "find",
           "not_found", "page", "page_query", "trace_csv"]

#: seconds between two progress writes (and cancel-flag reads) of a running run
PROGRESS_INTERVAL = 0.25
#: the most points a stored trace keeps (:func:`thin_trace`)
TRACE_POINTS = 1000
#: seconds a running run is given to finish when its worker shuts down (SIGTERM)
SHUTDOWN_GRACE = 5.0
#: what a run id looks like (:data:`~decido_service.types.RUN_ID_PATTERN`)
RUN_ID = re.compile(RUN_ID_PATTERN)


def new_run_id() -> str:
    """A fresh run id (``run_`` + 96 random bits in hex)."""
    return "run_" + secrets.token_hex(12)


def valid_run_id(text: str) -> bool:
    """True when ``text`` has the shape of a run id (others are 404 without a lookup)."""
    return RUN_ID.fullmatch(text) is not None


def thin_trace(points: list[list[float]], limit: int = TRACE_POINTS) -> list[list[float]]:
    """``points`` when there are at most ``limit`` of them; otherwise ``limit`` of them
    evenly spaced by index, the first and the last always kept (an improvement curve is
    monotone, so every kept point lies on it and its shape stays)."""
    n = len(points)
    if n <= limit:
        return points
    step = (n - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def run_problem(run_id: str, request_id: str, error: ApiError) -> dict[str, Any]:
    """The problem document of a run that failed while executing."""
    return {"type": PROBLEM_BASE + error.code, "title": error.title,
            "status": error.status_code, "detail": error.detail, "code": error.code,
            "instance": f"/v1/runs/{run_id}", "request_id": request_id, **(error.extra or {})}


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
        out["trace"] = doc.get("trace", [])
    return out


class Execution:
    """One admitted run on its way through the run pool (see the module docs).

    ``task`` ends with the run's result body (the ``/v1/optimize`` answer without ``id``)
    or raises the run's error; the row is final before it ends."""

    def __init__(self, store: Store, key_id: str, run_id: str, request_id: str,
                 req: OptimizeRequest, document: dict[str, Any]) -> None:
        self.store = store
        self.key_id = key_id
        self.run_id = run_id
        self.request_id = request_id
        self.req = req
        self.document = document
        self.monitor = decido.RunMonitor()
        self.started_at: float | None = None
        self.cancelled = threading.Event()
        self.task: asyncio.Future[dict[str, Any] | None] | None = None

    def stop(self) -> None:
        """Stop the run (after its current iteration; at once if not started)."""
        self.cancelled.set()
        self.monitor.stop()

    def _execute(self, fn: Any, *args: Any) -> dict[str, Any] | None:
        """In a run-pool thread: nothing when cancelled before starting, else ``fn``."""
        if self.cancelled.is_set():
            return None
        self.started_at = time.time()
        result: dict[str, Any] = fn(*args, self.monitor)
        return result

    async def drive(self, pool: Any, fn: Any, *args: Any) -> dict[str, Any] | None:
        """Run ``fn(*args, monitor)`` in ``pool``, mirroring state, progress and cancel
        requests through the store; write the final row."""
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(pool, self._execute, fn, *args)
        running = False
        try:
            while not future.done():
                await asyncio.wait({future}, timeout=PROGRESS_INTERVAL)
                if future.done():
                    break
                running = await self._tick(running)
            body = await future
        except Exception as exc:
            await self._finish("failed", problem=run_problem(
                self.run_id, self.request_id, as_api_error(exc)))
            raise
        if body is None:
            await self._finish("cancelled")
            return None
        body = {"run_id": self.run_id, **body}
        state = "cancelled" if body["status"] == "stopped" else "succeeded"
        trace = thin_trace(body["history"])
        result = {k: body[k] for k in ("x", "value", "evaluations", "iterations", "status",
                                       "message", "elapsed_ms", "seed")}
        await self._finish(state, result=result, trace=trace, columns={
            "status": body["status"], "value": body["value"], "seed": body["seed"],
            "evaluations": body["evaluations"], "elapsed_ms": body["elapsed_ms"]})
        return body

    async def _tick(self, running: bool) -> bool:
        """One progress write (and the move to ``running``); a requested cancel stops the
        run. Store errors are skipped: the next tick tries again."""
        changes: dict[str, Any] = {}
        if self.started_at is not None:
            if not running:
                changes["state"] = "running"
                self.document["started_at"] = iso_utc(self.started_at)
            p = self.monitor.progress()
            self.document["progress"] = {
                "evaluations": p["evaluations"], "iterations": p["iterations"],
                "best": p["best"], "elapsed_ms": round(p["elapsed"] * 1e3, 3)}
            changes["document"] = orjson.dumps(self.document).decode()
        try:
            if changes:
                await self.store.update_run(self.run_id, changes)
                running = running or "state" in changes
            row = await self.store.get_run(self.key_id, self.run_id)
        except Exception:  # noqa: BLE001 - a busy store: progress is written next time
            return running
        if row is not None and row["cancel_requested"]:
            self.stop()
        return running

    async def _finish(self, state: str, *, result: dict[str, Any] | None = None,
                      trace: list[list[float]] | None = None,
                      problem: dict[str, Any] | None = None,
                      columns: dict[str, Any] | None = None) -> None:
        assert state in FINISHED_STATES
        self.document.update(result=result, trace=trace or [], problem=problem)
        if self.started_at is not None:
            self.document["started_at"] = iso_utc(self.started_at)
        if result is not None:
            self.document["progress"] = None
        await self.store.update_run(self.run_id, {
            "state": state, "finished_at": iso_utc(time.time()),
            "document": orjson.dumps(self.document).decode(), **(columns or {})})


async def start(store: Store, key: KeyRecord, req: OptimizeRequest, request_id: str,
                pool: Any, fn: Any, *args: Any) -> Execution:
    """Record an admitted run ``queued`` and start it: ``fn(*args, monitor)`` in ``pool``
    (the caller has counted it). Returns the execution; its ``task`` ends with the run."""
    run_id = new_run_id()
    document: dict[str, Any] = {"request": msgspec.to_builtins(req),
                                "started_at": None, "progress": None, "result": None,
                                "problem": None, "trace": []}
    await store.record_run({"id": run_id, "key_id": key["id"], "engine": req.engine,
                            "dims": req.dims, "goal": req.goal, "seed": req.seed,
                            "state": "queued", "document": orjson.dumps(document).decode()})
    execution = Execution(store, key["id"], run_id, request_id, req, document)
    execution.task = asyncio.ensure_future(execution.drive(pool, fn, *args))
    return execution


async def wind_down(executions: set[Execution], grace: float = SHUTDOWN_GRACE) -> None:
    """On shutdown: give this worker's runs ``grace`` seconds to finish, then stop the
    rest (running ones end ``cancelled`` with their best so far, queued ones without a
    result) and wait until each has written its final row."""
    tasks = {e.task for e in executions if e.task is not None}
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=grace)
    for execution in list(executions):
        if execution.task in pending:
            execution.stop()
    if pending:
        await asyncio.wait(pending)


async def fail_interrupted(store: Store) -> int:
    """Mark every queued or running run ``failed`` with a problem of code ``interrupted``;
    the number marked. Only for a store no process is running runs of: ``decido serve``
    calls it on a SQLite store (one node's file) before its workers start, so these are
    the runs of a process that died (``kill -9``, a crash, a power loss)."""
    rows = await store.unfinished_runs()
    error = ApiError("interrupted", "the process running this run stopped before it ended; "
                                    "submit it again (its request is kept)")
    for row in rows:
        doc: dict[str, Any] = orjson.loads(row["document"]) if row["document"] else {}
        doc.update(progress=None, problem=run_problem(row["id"], "", error))
        await store.update_run(row["id"], {"state": "failed", "finished_at": iso_utc(time.time()),
                                           "document": orjson.dumps(doc).decode()})
    return len(rows)


# ------------------------------------------------ reads and cancels, for every surface
#: the page size of a list of runs without ``limit``, and its largest value
DEFAULT_PAGE, MAX_PAGE = 20, 100
#: the columns of a trace (JSON ``columns``, the CSV header)
TRACE_COLUMNS = ["evaluations", "best"]


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
    limit = _limit(args.get("limit"))
    after, state, engine = args.get("starting_after"), args.get("state"), args.get("engine")
    if after is not None and not valid_run_id(after):
        raise ApiError("invalid_parameter", f"starting_after: {after!r} is not a run id")
    if state is not None and state not in RUN_STATES:
        raise ApiError("invalid_parameter", f"state: expected one of {', '.join(RUN_STATES)}")
    if engine is not None and engine not in engine_table():
        raise ApiError("invalid_parameter", f"engine: {engine!r} is not an engine id (/v1/engines)")
    return PageQuery(limit, after, state, engine)


def _limit(text: str | None) -> int:
    if text is None:
        return DEFAULT_PAGE
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_PAGE or not text.strip().isdigit():
        raise ApiError("invalid_parameter", f"limit: expected an integer from 1 to {MAX_PAGE}")
    return value


async def page(store: Store, key_id: str, query: PageQuery) -> tuple[list[dict[str, Any]], bool]:
    """The rows of a page of ``key_id``'s runs, newest first, and whether more follow."""
    try:
        rows = await store.page_runs(key_id, query.limit + 1, query.starting_after, query.state,
                                     query.engine)
    except ValueError as exc:  # a cursor that is not one of the key's runs
        raise ApiError("invalid_parameter", str(exc)) from None
    return rows[:query.limit], len(rows) > query.limit


async def cancel(store: Store, key_id: str, run_id: str) -> dict[str, Any]:
    """Ask a queued or running run to stop; its row after the request. 404 for a run
    that is not the key's, 409 ``run_finished`` for a finished one."""
    state = await store.request_cancel(key_id, run_id) if valid_run_id(run_id) else None
    if state is None:
        raise not_found(run_id)
    if state in FINISHED_STATES:
        raise ApiError("run_finished", f"run {run_id} is already {state}")
    return await find(store, key_id, run_id)


def trace_csv(points: list[list[float]]) -> str:
    """A trace as CSV: the header :data:`TRACE_COLUMNS`, then one line per point."""
    lines = [",".join(TRACE_COLUMNS)] + [f"{int(e)},{orjson.dumps(b).decode()}"
                                         for e, b in points]
    return "\n".join(lines) + "\n"
