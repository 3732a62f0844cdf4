"""How a run executes: the run record and its document from admission to its final state.

Every optimization the service admits (``POST /v1/runs`` and ``POST /v1/optimize``) is a
row of the store's ``runs`` table from the moment it is counted until it is deleted: it is
created ``queued`` at admission, is taken by one worker process (its ``owner``, under a
lease: :mod:`decido_service.runs.queue`), becomes ``running`` when a thread of that worker's
run pool starts it, and ends ``succeeded``, ``failed`` or ``cancelled``. All of it goes
through the store, not the memory of one worker, because the service runs several worker
processes (and nodes) and a read or a cancel may reach another one than the one executing
the run:

- the executing worker writes the run's progress (evaluations, iterations, best so far,
  elapsed) into the run's document at most every :data:`PROGRESS_INTERVAL` seconds, which
  renews its lease;
- ``POST /v1/runs/{id}/cancel`` sets the row's ``cancel_requested`` flag; the executing
  worker reads it at the same pace and stops the run through its :class:`decido.RunMonitor`
  (the run ends after its current iteration, ``cancelled``, its best so far kept). A run
  cancelled before a thread started it ends ``cancelled`` without a result (one nobody had
  taken, at once: :func:`cancel_queued`);
- a run the engine ends with status ``stopped`` (its monitor was stopped: a cancel, or the
  ``/v1/optimize`` client went away) is ``cancelled``, its result's ``message`` saying
  why and by whom (:data:`CANCELLED`); an error inside the run is ``failed`` with a
  problem document.

The row's document is a :class:`~decido_service.types.RunDocument`: ``request`` (the body
as decoded, defaults filled in), ``budget`` (the evaluations and time limit the tier
allowed, for whichever worker executes it), ``started_at``, ``progress``, ``result``,
``problem`` and ``trace``; the store reads a row as a :class:`~decido_service.store.RunRow`
(its document decoded), which :func:`decido_service.runs.api.run_view` makes the ``Run``.

The trace is ``[evaluations, elapsed_ms, best]`` at every improvement of the run
(:mod:`decido_service.runs.trace`); for a run of several objectives ``best`` is the
front's hypervolume (the library's history).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any, Literal, TypeVar, cast

import msgspec

import decido
from decido.status import run_state
from decido_service.errors import ServiceError, as_service_error, problem
from decido_service.runs.trace import thin_trace, timed
from decido_service.store import (
    FINISHED_STATES,
    FrontChunk,
    RunRow,
    Store,
    StoreError,
    iso_utc,
    ordered_id,
)
from decido_service.store.wakeup import RUNS_CHANNEL
from decido_service.types import (
    ConstraintValue,
    ObjectiveInfo,
    OptimizeRequest,
    OptimizeResult,
    ParetoPoint,
    Problem,
    RunDocument,
    RunProgress,
    RunResult,
)
from decido_service.types.optimize import RunStatus

__all__ = ["CANCELLED", "CHUNK_BYTES", "PROGRESS_INTERVAL", "RUN_ATTEMPTS", "SHUTDOWN_GRACE",
           "Execution", "cancel_queued", "cancelled_before_start", "fail_run", "front_chunks",
           "interrupted", "new_run_id", "optimize_result", "progress_of", "requeue_interrupted",
           "result_of", "run_problem", "wind_down"]

#: the times a run is started at most: one whose process stops (its lease runs out) goes
#: back to the queue until it has been started this many times, then fails ``interrupted``
RUN_ATTEMPTS = 3
#: why the service stopped a run (:meth:`Execution.stop`)
StopReason = Literal["request", "client", "shutdown", "lost", "revoked"]
#: the ``message`` of a run the service stopped, by reason (the engine's own says only
#: that its monitor stopped it)
CANCELLED: dict[StopReason, str] = {
    "request": "cancelled at its key's request (POST /v1/runs/{id}/cancel or the "
               "dashboard's Cancel); the best point so far is kept",
    "client": "cancelled: the client of POST /v1/optimize disconnected before the run "
              "ended; the best point so far is kept",
    "shutdown": "cancelled: the service shut down before the run ended; the best point so "
                "far is kept",
    "lost": "cancelled: another process took the run over",
    "revoked": "cancelled: its key was revoked while the run streamed (POST /v1/optimize); "
               "the best point so far is kept",
}

#: the bytes of a stored chunk of a front's points, about (a larger point is one chunk)
CHUNK_BYTES = 64 * 1024
#: seconds between two progress writes (and cancel-flag reads) of a running run
PROGRESS_INTERVAL = 0.25
#: seconds a running run is given to finish when its worker shuts down (SIGTERM)
SHUTDOWN_GRACE = 5.0
P = TypeVar("P", bound=RunProgress)
#: what a run executes in a pool thread: the library's run, stopped through the monitor
Run = Callable[[decido.RunMonitor], decido.OptimizeResult | decido.ParetoResult]


def new_run_id() -> str:
    """A fresh run id (``run_`` + 24 hex digits: :func:`~decido_service.store.ordered_id`)."""
    return ordered_id("run_", time.time())


def run_problem(run_id: str, request_id: str, error: ServiceError) -> Problem:
    """The problem document of a run that failed while executing."""
    return problem(error, f"/v1/runs/{run_id}", request_id, Problem)


def progress_of(monitor: decido.RunMonitor, kind: type[P], *, several: bool = False) -> P:
    """A running run's progress read from its monitor (as ``kind``: a stream's
    ``ProgressEvent``); ``several``: a run of several objectives (with the front's
    hypervolume and size)."""
    p = monitor.progress()
    return kind(evaluations=p["evaluations"], iterations=p["iterations"], best=p["best"],
                elapsed_ms=round(p["elapsed"] * 1e3, 3),
                hypervolume=p["hypervolume"] if several else None,
                front_size=p["front_size"] if several else None)


def cancelled_before_start(run_id: str) -> ServiceError:
    """The 409 of a ``/v1/optimize`` run cancelled before a thread picked it up (it has no
    result), naming the run's ``Location`` as every answer about a run does."""
    return ServiceError("run_cancelled", f"run {run_id} was cancelled before it started",
                        headers={"Location": f"/v1/runs/{run_id}"})


def optimize_result(run_id: str, req: OptimizeRequest, result: RunResult,
                    history: list[list[float | None]]) -> OptimizeResult:
    """The ``/v1/optimize`` answer of a finished run: ``history`` is ``[evaluations, best]``
    at each improvement."""
    return OptimizeResult(**msgspec.structs.asdict(result), id=run_id, run_id=run_id,
                          engine=req.engine_id, goal=req.run_goal, dims=req.dims, history=history)


def result_of(r: decido.OptimizeResult | decido.ParetoResult) -> RunResult:
    """The outcome of a finished run (non-finite numbers are encoded null)."""
    if isinstance(r, decido.ParetoResult):
        return _front_of(r)
    return RunResult(
        status=cast(RunStatus, r.status), x=r.x.tolist(), value=r.fun, evaluations=r.evaluations,
        iterations=r.iterations, message=r.message, elapsed_ms=round(r.elapsed * 1e3, 3),
        seed=r.seed, feasible=r.feasible, max_violation=r.max_violation,
        constraints=[ConstraintValue(c["name"], c["value"], c["violation"])
                     for c in r.constraints], variables=r.variables,
        engine_chosen=r.engine_chosen or None)


def _front_of(r: decido.ParetoResult) -> RunResult:
    """The outcome of a run of several objectives: its front (``x`` empty, ``value`` null,
    each point with its own feasibility)."""
    d = r.to_dict()
    violations = [p["max_violation"] for p in d["pareto"] if p["max_violation"] is not None]
    return RunResult(
        status=cast(RunStatus, r.status), x=[], value=None, evaluations=r.evaluations,
        iterations=r.iterations, message=r.message, elapsed_ms=round(r.elapsed * 1e3, 3),
        seed=r.seed, feasible=r.feasible,
        max_violation=min(violations) if violations else None, constraints=[],
        variables=None, pareto=msgspec.convert(d["pareto"], list[ParetoPoint]),
        hypervolume=d["hypervolume"], reference_point=d["reference_point"],
        objectives=msgspec.convert(d["objectives"], list[ObjectiveInfo]),
        engine_chosen=r.engine_chosen or None)


def front_chunks(front: Sequence[ParetoPoint]) -> list[FrontChunk]:
    """``front`` as the store keeps it apart from the document
    (:mod:`decido_service.runs.front`): ``(first, count, JSON array)`` chunks of about
    :data:`CHUNK_BYTES` each, in order."""
    out: list[FrontChunk] = []
    encoded: list[bytes] = []
    size = first = 0
    for i, point in enumerate(front):
        if encoded and size >= CHUNK_BYTES:
            out.append((first, len(encoded), _array(encoded)))
            encoded, size, first = [], 0, i
        item = msgspec.json.encode(point)
        encoded.append(item)
        size += len(item) + 1
    if encoded:
        out.append((first, len(encoded), _array(encoded)))
    return out


def _array(encoded: list[bytes]) -> str:
    return (b"[" + b",".join(encoded) + b"]").decode()


class Execution:
    """One run executing in this worker's run pool (see the module docs).

    The process owns the run's row (``owner``) while it executes it: every progress write
    renews the lease (``lease`` seconds) on the condition that the row is still this
    process's; a run whose row was taken away (its lease ran out and another process
    marked it ``failed``, or it was deleted) is stopped and writes nothing more.
    ``task`` ends with the run's ``/v1/optimize`` answer or raises the run's error; the
    row is final before it ends. ``requeue`` (set on shutdown for a ``queued`` run, one of
    ``POST /v1/runs``) gives a run that has not started back to the queue instead of
    cancelling it; a ``/v1/optimize`` run's client is gone with the process, so it is
    cancelled."""

    def __init__(self, store: Store, key_id: str, run_id: str, request_id: str,
                 document: RunDocument, owner: str, lease: float, *,
                 queued: bool = True, attempts: int = 0) -> None:
        self.store = store
        #: the row this execution may write: its owner's, at this attempt
        self.expect = {"owner": owner, "attempts": attempts}
        self.key_id = key_id
        self.run_id = run_id
        self.request_id = request_id
        self.document = document
        self.lease = lease
        self.monitor = decido.RunMonitor()
        self.started_at: float | None = None
        self.cancelled = threading.Event()
        self.reason: StopReason | None = None
        self.queued = queued  # from the queue (POST /v1/runs), not a waiting /v1/optimize
        self.requeue = False
        self.lost = False
        self.samples: list[tuple[int, float]] = []  # (evaluations, elapsed_ms) per tick
        self.task: asyncio.Future[OptimizeResult | None] | None = None

    def stop(self, reason: StopReason) -> None:
        """Stop the run (after its current iteration; at once if not started) for
        ``reason`` (the first one given is its result's message: :data:`CANCELLED`)."""
        if self.reason is None:
            self.reason = reason
        self.cancelled.set()
        self.monitor.stop()

    def _execute(self, run: Run) -> decido.OptimizeResult | decido.ParetoResult | None:
        """In a run-pool thread: nothing when cancelled before starting, else the run."""
        if self.cancelled.is_set():
            return None
        self.started_at = time.time()
        return run(self.monitor)

    async def drive(self, pool: Executor, run: Run) -> OptimizeResult | None:
        """Execute ``run`` in ``pool``, mirroring state, progress and cancel requests
        through the store; write the final row."""
        future = asyncio.get_running_loop().run_in_executor(pool, self._execute, run)
        running = False
        try:
            while not future.done():
                await asyncio.wait({future}, timeout=PROGRESS_INTERVAL)
                if future.done():
                    break
                running = await self._tick(running)
            outcome = await future
        except Exception as exc:
            await self._finish("failed", problem=run_problem(
                self.run_id, self.request_id, as_service_error(exc)))
            raise
        if outcome is None:
            if self.requeue and not self.lost:  # back to the queue: other nodes take it
                await self._write({"owner": None, "lease_until": None})
                with contextlib.suppress(StoreError):
                    await self.store.wakeups.notify(RUNS_CHANNEL)
            else:
                await self._finish("cancelled")
            return None
        # a front of many points is converted off the event loop
        result = await asyncio.to_thread(result_of, outcome) \
            if isinstance(outcome, decido.ParetoResult) else result_of(outcome)
        if result.status == "stopped" and self.reason is not None:
            # why it was cancelled, then the library's notes ("; the hypervolume was not
            # measured: ...") after its own "stopped by its monitor"
            _, notes, rest = result.message.partition("; ")
            result.message = CANCELLED[self.reason] + (f"; {rest}" if notes else "")
        history: list[list[float | None]] = [[int(e), float(b) if math.isfinite(b) else None]
                                             for e, b in outcome.history]
        trace = thin_trace(timed(outcome.history, [*self.samples,
                                                   (result.evaluations, result.elapsed_ms)]))
        stored, front = result, list[FrontChunk]()
        if result.pareto is not None:  # the front in rows of its own, off the event loop
            result.front_size = len(result.pareto)
            front = await asyncio.to_thread(front_chunks, result.pareto)
            stored = msgspec.structs.replace(result, pareto=None)
        await self._finish(run_state(result.status),
                           result=stored, trace=trace, front=front, columns={
                               "status": result.status, "value": result.value,
                               "seed": result.seed, "evaluations": result.evaluations,
                               "elapsed_ms": result.elapsed_ms})
        return optimize_result(self.run_id, self.document.request, result, history)

    async def _write(self, changes: dict[str, Any], front: Sequence[FrontChunk] = ()) -> bool:
        """Update the row (and write ``front``) if it is still this process's (else the
        run is stopped)."""
        if self.lost:
            return False
        if not await self.store.runs.update(self.run_id, changes, self.expect, front):
            self.lost = True
            self.stop("lost")
        return not self.lost

    async def _tick(self, running: bool) -> bool:
        """One progress write with the lease renewed (and the move to ``running``); a
        requested cancel stops the run. Store errors are skipped: the next tick tries
        again."""
        changes: dict[str, Any] = {"lease_until": time.time() + self.lease}
        if self.started_at is not None:
            if not running:
                changes["state"] = "running"
            progress = progress_of(self.monitor, RunProgress, several=self.document.request.several)
            self.samples.append((progress.evaluations, progress.elapsed_ms))
            changes["document"] = self.document = msgspec.structs.replace(
                self.document, started_at=iso_utc(self.started_at), progress=progress)
        try:
            if await self._write(changes):
                running = running or "state" in changes
            cancel = await self.store.runs.cancel_requested(self.run_id)
        except Exception:  # noqa: BLE001 - a busy store: progress is written next time
            return running
        if cancel:
            self.stop("request")
        return running

    async def _finish(self, state: str, *, result: RunResult | None = None,
                      trace: list[list[float | None]] | None = None,
                      problem: Problem | None = None,
                      front: Sequence[FrontChunk] = (),
                      columns: dict[str, Any] | None = None) -> None:
        assert state in FINISHED_STATES
        doc = self.document = msgspec.structs.replace(
            self.document, result=result, trace=trace or [], problem=problem,
            started_at=self.document.started_at if self.started_at is None
            else iso_utc(self.started_at),
            progress=self.document.progress if result is None else None)
        await self._write({"state": state, "finished_at": iso_utc(time.time()),
                           "document": doc, "owner": None, "lease_until": None,
                           **(columns or {})}, front)


async def wind_down(executions: set[Execution], grace: float = SHUTDOWN_GRACE) -> None:
    """On shutdown: give this worker's runs ``grace`` seconds to finish, then stop the
    rest (running ones end ``cancelled`` with their best so far; ``/v1/runs`` runs not
    started go back to the queue, for a process that stays or the next one; waiting
    ``/v1/optimize`` runs end ``cancelled``) and wait until each has written its row."""
    tasks = {e.task for e in executions if e.task is not None}
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=grace)
    # the waiting ones first: a running one stopped first frees its thread, which could
    # otherwise start a waiting run before that run hears it is stopped
    for execution in sorted(executions, key=lambda e: e.started_at is not None):
        if execution.task in pending:
            execution.requeue = execution.queued
            execution.stop("shutdown")
    if pending:
        await asyncio.wait(pending)


async def cancel_queued(store: Store, run_id: str) -> None:
    """End a queued run nobody has taken yet ``cancelled`` (no result) at once; a run a
    process owns is left to it (it reads the cancel flag within a progress interval)."""
    await store.runs.update(run_id, {"state": "cancelled", "finished_at": iso_utc(time.time())},
                           {"state": "queued", "owner": None})


_INTERRUPTED = ServiceError("interrupted", "the process running this run stopped before "
                            f"it ended (a run of POST /v1/runs is started up to "
                            f"{RUN_ATTEMPTS} times); submit it again (its request is kept)")


async def fail_run(store: Store, row: RunRow, expect: dict[str, Any] | None = None,
                   error: ServiceError = _INTERRUPTED) -> bool:
    """Mark ``row``'s run ``failed`` with the problem of ``error`` (by default code
    ``interrupted``) when the row is still as ``expect`` says; True when it was marked."""
    doc = msgspec.structs.replace(row.document, progress=None,
                                  problem=run_problem(row.id, "", error))
    return await store.runs.update(row.id, {
        "state": "failed", "finished_at": iso_utc(time.time()), "owner": None,
        "lease_until": None, "document": doc}, expect)


async def interrupted(store: Store, row: RunRow, expect: dict[str, Any] | None = None) -> bool:
    """The run of ``row`` lost its process (when the row is still as ``expect`` says): back
    to the queue, from its start, its ``attempts`` counted (a seeded run replays
    identically), unless it has been given back :data:`RUN_ATTEMPTS` - 1 times already,
    was cancelled, or is a ``/v1/optimize`` run (its client was the process's): then
    ``failed`` (``interrupted``, :func:`fail_run`). True when the row was changed."""
    doc, attempts = row.document, row.attempts + 1
    if attempts >= RUN_ATTEMPTS or row.cancel_requested or doc.budget.deadline is not None:
        return await fail_run(store, row, expect)
    return await store.runs.update(row.id, {
        "state": "queued", "owner": None, "lease_until": None, "attempts": attempts,
        "document": RunDocument(request=doc.request, budget=doc.budget)}, expect)


async def requeue_interrupted(store: Store) -> int:
    """Give every run a process owned or was running back to the queue, or fail it
    (:func:`interrupted`); the number changed. Only for a store no process is running
    runs of: ``decido serve`` calls it on a SQLite store (one node's file) before its
    workers start, so these are the runs of a process that died (``kill -9``, a crash, a
    power loss). Queued runs nobody had taken stay queued: they run once the workers are
    up."""
    count = 0
    for row in await store.runs.unfinished():
        if row.owner is not None or row.state == "running":
            count += await interrupted(store, row)
    return count
