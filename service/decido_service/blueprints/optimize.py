"""The optimization surface: ``POST /v1/optimize``.

A valid request within the tier's caps takes a run slot of this worker (503 ``overloaded``
when ``run_threads + run_queue`` are taken), is counted, and runs :func:`decido.optimize` in
the run pool with the GIL released. Every run has a time limit (the tier's cap unless the
request sets a lower one) and is recorded in the store before the answer is sent. A client
that disconnects cancels the handler; the run's callback then sees the stop event and the
run ends at its next iteration (recorded with status ``stopped``).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

import decido
from decido_service import limits
from decido_service.auth import admit, authenticate
from decido_service.errors import limit_error
from decido_service.middleware import endpoint
from decido_service.responses import json_response
from decido_service.schemas import OptimizeRequest, json_body, parse_optimize
from decido_service.store import KeyRecord, Store

__all__ = ["bp", "execute"]

bp = Blueprint("optimize")


@bp.post("/optimize")
@endpoint
async def optimize(request: Request) -> HTTPResponse:
    """One optimization run over the box ``bounds``."""
    key = authenticate(request, "optimize")
    req = parse_optimize(json_body(request))
    budget = _budget(request, key, req)
    result = await _run(request, key, req, budget)
    return json_response(orjson.dumps(result))


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


async def _run(request: Request, key: KeyRecord, req: OptimizeRequest,
               budget: dict[str, Any]) -> dict[str, Any]:
    """Take a slot, count the run, execute it in the run pool; stop it if cancelled."""
    ctx = request.app.ctx
    ctx.run_slots.acquire()
    try:
        await admit(request, limits.specs_for("optimize", key, settings=ctx.settings))
        stop = threading.Event()
        future = asyncio.get_running_loop().run_in_executor(
            ctx.run_pool, execute, ctx.store, key["id"], req, budget, stop)
    except BaseException:
        ctx.run_slots.release()
        raise
    future.add_done_callback(lambda _: ctx.run_slots.release())
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()  # the client went away: the run stops at its next iteration
        raise


def execute(store: Store, key_id: str, req: OptimizeRequest, budget: dict[str, Any],
            stop: threading.Event) -> dict[str, Any]:
    """Run one optimization (in a pool thread), record it, return the response body."""
    run_id = uuid.uuid4().hex
    record = {"id": run_id, "key_id": key_id, "engine": req.engine, "dims": req.dims,
              "goal": req.goal, "seed": req.seed}
    try:
        r = decido.optimize(
            req.objective, req.bounds, goal=req.goal, engine=req.engine,
            max_evaluations=budget["max_evaluations"], time_limit=budget["time_limit"],
            target=req.target, seed=req.seed, options=req.options,
            callback=lambda _progress: stop.is_set(),
        )
    except Exception:
        store.record_run({**record, "status": "error"})
        raise
    elapsed_ms = round(r.elapsed * 1e3, 3)
    store.record_run({**record, "status": r.status, "value": r.fun, "seed": r.seed,
                      "evaluations": r.evaluations, "elapsed_ms": elapsed_ms})
    return {
        "id": run_id, "engine": r.engine, "status": r.status, "message": r.message,
        "x": r.x.tolist(), "value": r.fun, "goal": r.goal, "evaluations": r.evaluations,
        "iterations": r.iterations, "elapsed_ms": elapsed_ms, "seed": r.seed,
        "dims": req.dims, "history": [[int(e), float(b)] for e, b in r.history],
    }
