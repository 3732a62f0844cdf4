"""The optimization surface: ``POST /v1/optimize``.

A valid request within the tier's caps takes a run slot of this worker (503 ``overloaded``
when ``run_threads + run_queue`` are taken), is counted, is recorded as a run
(:mod:`decido_service.runs.execution`: readable at ``/v1/runs/{id}`` from then on, final before the
answer is sent) and runs :func:`decido.optimize` in the run pool with the GIL released. The
answer carries ``run_id`` and ``Location: /v1/runs/{id}``. Every run has a time limit (the
tier's cap unless the request sets a lower one). The run
carries a :class:`decido.RunMonitor`: a client that disconnects cancels the handler, which
stops the run through its monitor (it ends after its current iteration, recorded
``cancelled`` with status ``stopped`` and a message saying the client disconnected), and
progress is read from the monitor without touching the run's thread.

With ``Accept: application/x-ndjson`` the answer streams: one JSON object per line, a
``progress`` event every :data:`PROGRESS_INTERVAL` seconds while the run lasts, then one
``result`` event (the JSON answer's members) or one ``error`` event (a problem document).
Everything decided before the run starts (credentials, validation, caps, limits) is answered
as usual, with problem+json.
"""

from __future__ import annotations

import asyncio

import msgspec
from sanic.response import HTTPResponse

from decido_service.http import idempotency
from decido_service.http.context import ApiRequest
from decido_service.http.endpoint import request_id, response_headers, streamed
from decido_service.http.problems import as_api_error, problem_body
from decido_service.http.responses import answer, encode
from decido_service.http.routes import Doc, Routes
from decido_service.http.submit import submission
from decido_service.runs.execution import Execution, cancelled_before_start, progress_of
from decido_service.runs.queue import start_run
from decido_service.types import (
    SEMANTIC_FAULTS,
    ErrorEvent,
    IdempotencyHeaders,
    OptimizeResult,
    ProgressEvent,
    ResultEvent,
)

__all__ = ["NDJSON", "PROGRESS_INTERVAL", "api", "wants_stream"]

api = Routes("optimize")
NDJSON = "application/x-ndjson"
#: seconds between two progress events of a streamed run
PROGRESS_INTERVAL = 0.25
_POSTED = (400, 415, 422)
_KEYED = (401, 413, 429, 503)


@api.route("/optimize", post=Doc(
    "optimize", "One optimization run", "optimization", (200, "OptimizeResult"),
    (*_POSTED, 403, 409, *_KEYED), "OptimizeRequest", params=(IdempotencyHeaders,),
    description="Runs to the end and answers with the result. Send "
                "`Accept: application/x-ndjson` to have the answer streamed instead: one "
                "JSON object per line (OptimizeEvent), a `progress` event every 0.25 s "
                "while the run lasts, then its `result` (or an `error` problem). "
                "Everything decided before the run starts (credentials, validation, caps, "
                "limits) is answered as usual. A client that disconnects stops its run. "
                + SEMANTIC_FAULTS))
async def optimize(request: ApiRequest) -> HTTPResponse | None:
    """One optimization run over the box ``bounds`` (streamed with progress on request)."""
    stream = wants_stream(request)
    gate, req, objective, budget, idem_key = await submission(request)
    started = await idempotency.once(  # the run started, or the answer replayed for a
        # request repeated under the same Idempotency-Key
        request, gate.key, idem_key, lambda claim: start_run(
            request.app.ctx, gate, request_id(request), req, objective, budget, claim),
        status=200, keep_answer=False)
    if isinstance(started, HTTPResponse):
        return started
    if stream:
        await _stream(request, started)
        return None
    return await _result(started)


async def _result(execution: Execution) -> HTTPResponse:
    """The 200 answer once the run has ended; a client that goes away stops the run."""
    assert execution.task is not None
    try:
        result = await asyncio.shield(execution.task)
    except asyncio.CancelledError:
        execution.stop("client")  # the client went away: it stops after its current iteration
        raise
    found = _answer_of(execution.run_id, result)
    return answer(found, headers={"Location": f"/v1/runs/{execution.run_id}"})


def _answer_of(run_id: str, result: OptimizeResult | None) -> OptimizeResult:
    """The answer of a finished run (409 when it was cancelled before a thread picked it
    up: there is no result)."""
    if result is None:
        raise cancelled_before_start(run_id)
    return result


def wants_stream(request: ApiRequest) -> bool:
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


async def _stream(request: ApiRequest, execution: Execution) -> None:
    """Answer with NDJSON: progress events while the run lasts, then its result or error."""
    future, monitor = execution.task, execution.monitor
    assert future is not None
    try:
        with request.app.ctx.streams.hold(execution.key_id, counted=False) as ticket:
            response = await request.respond(
                status=200, content_type=NDJSON,
                headers={**response_headers(request), "Cache-Control": "no-store",
                         "X-Accel-Buffering": "no",
                         "Location": f"/v1/runs/{execution.run_id}"})
            streamed(request, 200)
            while not future.done() and ticket.ended is None:
                await asyncio.wait({future}, timeout=PROGRESS_INTERVAL)
                if not future.done() and ticket.ended is None:
                    await response.send(encode(progress_of(
                        monitor, ProgressEvent,
                        several=execution.document.request.several)) + b"\n")
            last: ResultEvent | ErrorEvent
            if ticket.ended is not None:  # the key was revoked: the run stops, the stream
                execution.stop("revoked")  # ends with the problem (revoked_key)
                last = problem_body(request, as_api_error(ticket.ended), ErrorEvent)
            else:
                try:
                    result = _answer_of(execution.run_id, future.result())
                    last = ResultEvent(**msgspec.structs.asdict(result))
                except Exception as exc:  # noqa: BLE001 - the stream ends with the problem
                    last = problem_body(request, as_api_error(exc), ErrorEvent)
            await response.send(encode(last) + b"\n")
            await response.eof()
    except BaseException:  # the client went away (or the connection broke): stop the run
        execution.stop("client")
        raise
