"""The optimization surface: ``POST /v1/optimize``.

A valid request within the tier's caps takes a run slot of this worker (503 ``overloaded``
when ``run_threads + run_queue`` are taken), is counted, is recorded as a run
(:mod:`decido_service.runs.execution`: readable at ``/v1/runs/{id}`` from then on, final before the
answer is sent) and runs :func:`decido.optimize` in the run pool with the GIL released. The
answer carries ``run_id`` and ``Location: /v1/runs/{id}``. Every run has a time limit (the
tier's cap unless the request sets a lower one). The run
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
from typing import Any

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

import decido
from decido_service.http.endpoint import endpoint, response_headers, streamed
from decido_service.http.problems import as_api_error, problem_body
from decido_service.http.responses import json_response
from decido_service.runs import idempotency
from decido_service.runs.execution import Execution
from decido_service.runs.submit import answer_of, prepare, start_run
from decido_service.store import KeyRecord
from decido_service.types import OptimizeRequest

__all__ = ["NDJSON", "PROGRESS_INTERVAL", "bp", "wants_stream"]

bp = Blueprint("optimize")
NDJSON = "application/x-ndjson"
#: seconds between two progress events of a streamed run
PROGRESS_INTERVAL = 0.25


@bp.post("/optimize")
@endpoint
async def optimize(request: Request) -> HTTPResponse | None:
    """One optimization run over the box ``bounds`` (streamed with progress on request)."""
    key, req, objective, budget = await prepare(request)
    started = await _start_once(request, key, req, objective, budget)
    if isinstance(started, HTTPResponse):  # the stored answer of a repeated Idempotency-Key
        return started
    if wants_stream(request):
        await _stream(request, started)
        return None
    return await _result(started)


async def _start_once(request: Request, key: KeyRecord, req: OptimizeRequest,
                      objective: decido.Expression, budget: dict[str, Any]
                      ) -> Execution | HTTPResponse:
    """The run started for this request, or the answer replayed for a request repeated
    under the same ``Idempotency-Key``."""
    async with idempotency.claim(request, key, idempotency.header(request)) as prior:
        if isinstance(prior, dict):
            return await idempotency.replayed(request, key, prior)
        execution = await start_run(request, key, req, objective, budget)
        if prior is not None:
            prior.done(execution.run_id, 200)
    return execution


async def _result(execution: Execution) -> HTTPResponse:
    """The 200 answer once the run has ended; a client that goes away stops the run."""
    assert execution.task is not None
    try:
        body = await asyncio.shield(execution.task)
    except asyncio.CancelledError:
        execution.stop()  # the client went away: the run stops after its current iteration
        raise
    return json_response(orjson.dumps(answer_of(execution.run_id, body)),
                         headers={"Location": f"/v1/runs/{execution.run_id}"})


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


async def _stream(request: Request, execution: Execution) -> None:
    """Answer with NDJSON: progress events while the run lasts, then its result or error."""
    future, monitor = execution.task, execution.monitor
    assert future is not None
    try:
        response = await request.respond(
            status=200, content_type=NDJSON,
            headers={**response_headers(request), "Cache-Control": "no-store",
                     "X-Accel-Buffering": "no",
                     "Location": f"/v1/runs/{execution.run_id}"})
        streamed(request, 200)
        while not future.done():
            await asyncio.wait({future}, timeout=PROGRESS_INTERVAL)
            if not future.done():
                await response.send(_line({"event": "progress", **progress_event(monitor)}))
        try:
            last = {"event": "result", **answer_of(execution.run_id, future.result())}
        except Exception as exc:  # noqa: BLE001 - the stream ends with the problem document
            last = {"event": "error", **problem_body(request, as_api_error(exc))}
        await response.send(_line(last))
        await response.eof()
    except BaseException:  # the client went away (or the connection broke): stop the run
        execution.stop()
        raise


def progress_event(monitor: decido.RunMonitor) -> dict[str, Any]:
    """The members of a ``progress`` event: evaluations, iterations, best, elapsed_ms."""
    p = monitor.progress()
    return {"evaluations": p["evaluations"], "iterations": p["iterations"], "best": p["best"],
            "elapsed_ms": round(p["elapsed"] * 1e3, 3)}


def _line(event: dict[str, Any]) -> bytes:
    return orjson.dumps(event, option=orjson.OPT_APPEND_NEWLINE)
