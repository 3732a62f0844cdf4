"""The optimization surface: ``POST /v1/optimize``.

A valid request within the tier's caps takes a run slot of this worker (503 ``overloaded``
when ``run_threads + run_queue`` are taken), is counted, and runs :func:`decido.optimize` in
the run pool with the GIL released. Every run has a time limit (the tier's cap unless the
request sets a lower one) and is recorded in the store before the answer is sent. The run
carries a :class:`decido.RunMonitor`: a client that disconnects cancels the handler, which
stops the run through its monitor (it ends after its current iteration, recorded with status
``stopped``), and progress is read from the monitor without touching the run's thread.

With ``Accept: application/x-ndjson`` the answer streams: one JSON object per line, a
``progress`` event every :data:`PROGRESS_INTERVAL` seconds while the run lasts, then one
``result`` event (the JSON answer's members) or one ``error`` event (a problem document).
Everything decided before the run starts (credentials, validation, caps, limits) is answered
as usual, with problem+json.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

import decido
from decido_service import limits
from decido_service.admission import admit, authenticate, observe, refusals
from decido_service.errors import ApiError, as_api_error, limit_error, problem_body
from decido_service.listeners import by_size, in_thread
from decido_service.middleware import endpoint, response_headers, streamed
from decido_service.responses import json_response
from decido_service.schemas import compile_objective, decode_optimize, json_bytes
from decido_service.store import KeyRecord
from decido_service.types import OptimizeRequest

__all__ = ["NDJSON", "PROGRESS_INTERVAL", "bp", "execute", "wants_stream"]

bp = Blueprint("optimize")
NDJSON = "application/x-ndjson"
#: seconds between two progress events of a streamed run
PROGRESS_INTERVAL = 0.25


@bp.post("/optimize")
@endpoint
async def optimize(request: Request) -> HTTPResponse | None:
    """One optimization run over the box ``bounds`` (streamed with progress on request)."""
    key = await authenticate(request)
    async with refusals(request, key, "optimize"):
        # nothing compiled yet; a large body is decoded in a thread
        req = await by_size(request, decode_optimize, json_bytes(request))
        budget = _budget(request, key, req)  # the tier's caps before any compile
        objective = await in_thread(request.app.ctx.decide_pool, compile_objective, req)
    future, monitor = await _start(request, key, req, objective, budget)
    if wants_stream(request):
        await _stream(request, future, monitor)
        return None
    try:
        result = await asyncio.shield(future)
    except asyncio.CancelledError:
        monitor.stop()  # the client went away: the run stops after its current iteration
        raise
    return json_response(orjson.dumps(result))


def wants_stream(request: Request) -> bool:
    """True when the ``Accept`` header lists ``application/x-ndjson`` with a q above 0."""
    for item in request.headers.get("accept", "").split(","):
        media, *params = (part.strip() for part in item.split(";"))
        if media.lower() != NDJSON:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q > 0:
            return True
    return False


def _budget(request: Request, key: KeyRecord, req: OptimizeRequest) -> dict[str, Any]:
    """The run's ``max_evaluations`` and ``time_limit`` within the tier (403 beyond)."""
    settings = request.app.ctx.settings
    violation = limits.check_dims(key, req.dims, settings=settings)
    if violation is None:
        budget, violation = limits.run_caps(key, req.dims, req.max_evaluations, req.time_limit,
                                            settings=settings)
    if violation is not None:
        raise limit_error(violation)
    return budget


async def _start(request: Request, key: KeyRecord, req: OptimizeRequest,
                 objective: decido.Expression, budget: dict[str, Any]
                 ) -> tuple[asyncio.Future[dict[str, Any]], decido.RunMonitor]:
    """Take a slot, count the run, start it in the run pool (recorded when it ends)."""
    ctx = request.app.ctx
    try:
        ctx.run_slots.acquire()
    except ApiError:  # 503 overloaded: nothing counted; the headers show the minute
        await observe(request, limits.refusal_specs("optimize", key, settings=ctx.settings)[:1])
        raise
    try:
        await admit(request, key, "optimize")
        monitor = decido.RunMonitor()
        future = asyncio.ensure_future(
            _run_and_record(ctx, key["id"], req, objective, budget, monitor))
    except BaseException:
        ctx.run_slots.release()
        raise
    future.add_done_callback(lambda _: ctx.run_slots.release())
    return future, monitor


async def _run_and_record(ctx: Any, key_id: str, req: OptimizeRequest,
                          objective: decido.Expression, budget: dict[str, Any],
                          monitor: decido.RunMonitor) -> dict[str, Any]:
    """Run in the run pool, then record the run in the store; a task of its own, so a
    client that goes away stops the run (through ``monitor``) but never its record."""
    record: dict[str, Any] = {"id": uuid.uuid4().hex, "key_id": key_id, "engine": req.engine,
                              "dims": req.dims, "goal": req.goal, "seed": req.seed}
    loop = asyncio.get_running_loop()
    try:
        body = await loop.run_in_executor(ctx.run_pool, execute, req, objective, budget,
                                          monitor)
    except Exception:
        await ctx.store.record_run({**record, "status": "error"})
        raise
    await ctx.store.record_run({**record, "status": body["status"], "value": body["value"],
                                "seed": body["seed"], "evaluations": body["evaluations"],
                                "elapsed_ms": body["elapsed_ms"]})
    return {"id": record["id"], **body}


async def _stream(request: Request, future: asyncio.Future[dict[str, Any]],
                  monitor: decido.RunMonitor) -> None:
    """Answer with NDJSON: progress events while the run lasts, then its result or error."""
    try:
        response = await request.respond(
            status=200, content_type=NDJSON,
            headers={**response_headers(request), "Cache-Control": "no-store",
                     "X-Accel-Buffering": "no"})
        streamed(request, 200)
        while not future.done():
            await asyncio.wait({future}, timeout=PROGRESS_INTERVAL)
            if not future.done():
                await response.send(_line({"event": "progress", **progress_event(monitor)}))
        try:
            last = {"event": "result", **future.result()}
        except Exception as exc:  # noqa: BLE001 - the stream ends with the problem document
            last = {"event": "error", **problem_body(request, as_api_error(exc))}
        await response.send(_line(last))
        await response.eof()
    except BaseException:  # the client went away (or the connection broke): stop the run
        monitor.stop()
        raise


def progress_event(monitor: decido.RunMonitor) -> dict[str, Any]:
    """The members of a ``progress`` event: evaluations, iterations, best, elapsed_ms."""
    p = monitor.progress()
    return {"evaluations": p["evaluations"], "iterations": p["iterations"], "best": p["best"],
            "elapsed_ms": round(p["elapsed"] * 1e3, 3)}


def _line(event: dict[str, Any]) -> bytes:
    return orjson.dumps(event, option=orjson.OPT_APPEND_NEWLINE)


def execute(req: OptimizeRequest, objective: decido.Expression, budget: dict[str, Any],
            monitor: decido.RunMonitor) -> dict[str, Any]:
    """Run one optimization (in a pool thread); the response body without its ``id``."""
    r = decido.optimize(
        objective, req.bounds, goal=req.goal, engine=req.engine,
        max_evaluations=budget["max_evaluations"], time_limit=budget["time_limit"],
        target=req.target, seed=req.seed, options=req.options, monitor=monitor,
    )
    elapsed_ms = round(r.elapsed * 1e3, 3)
    return {
        "engine": r.engine, "status": r.status, "message": r.message,
        "x": r.x.tolist(), "value": r.fun, "goal": r.goal, "evaluations": r.evaluations,
        "iterations": r.iterations, "elapsed_ms": elapsed_ms, "seed": r.seed,
        "dims": req.dims, "history": [[int(e), float(b)] for e, b in r.history],
    }
