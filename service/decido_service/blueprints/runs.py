"""The runs surface: submit a run, read, list, trace, cancel and delete runs.

``POST /v1/runs`` takes the body of ``/v1/optimize`` through the same validation, caps
and admission (:mod:`decido_service.runs.submit`), then answers 202 with the queued run and
``Location`` at once. Everything else is a keyed read under the one read policy
(:meth:`decido_service.admission.Gate.read`: counted nothing, the ``optimize.minute`` headers)
over :mod:`decido_service.runs.api`.
"""

from __future__ import annotations

from sanic.response import HTTPResponse

from decido_service import limits
from decido_service.http import idempotency
from decido_service.http.admission import read, refusals
from decido_service.http.context import ApiRequest
from decido_service.http.events import send_events
from decido_service.http.params import read_query
from decido_service.http.responses import Response, answer
from decido_service.http.routes import READ, READ_PARAMS, Doc, Routes
from decido_service.http.submit import enqueue, submission
from decido_service.runs import api as runs
from decido_service.runs import front
from decido_service.runs.idempotency import Claim
from decido_service.types import (
    SEMANTIC_FAULTS,
    EventsHeaders,
    FrontQuery,
    IdempotencyHeaders,
    RunPage,
    RunPath,
    RunsDeleted,
    TraceQuery,
)

__all__ = ["api"]

api = Routes("runs")


@api.route("/runs", post=Doc(
    "submitRun", "Submit a run (answered at once; it runs in the background)", "runs",
    (202, "Run"), (400, 415, 422, 403, 409, 401, 413, 429, 503), "OptimizeRequest",
    params=(IdempotencyHeaders,),
    description="The body, validation, caps and limits of /v1/optimize; the run is counted "
                "at admission and answered `queued` with `Location`. A key's runs queued or "
                "running at once are capped by its tier (429 `too_many_runs`); a full queue "
                "is 503 `overloaded`. " + SEMANTIC_FAULTS))
async def submit(request: ApiRequest) -> HTTPResponse:
    """Admit a run and answer 202 with it queued (it runs in the background: in this
    worker when one of its run threads is free, else in whichever takes it first)."""
    gate, req, objective, budget, idem_key = await submission(request)
    key = gate.key

    async def admit(claim: Claim | None) -> HTTPResponse:
        row = await enqueue(request, key, req, objective, budget, claim)
        if claim is not None:  # the answer stored with the run
            return idempotency.claimed(claim)
        return answer(runs.run_view(row), 202, {"Location": f"/v1/runs/{row.id}"})

    return await idempotency.once(request, key, idem_key, admit, status=202,
                                  keep_answer=True)


@api.route("/runs", get=Doc("listRuns", "The key's runs, newest first", "runs",
                            (200, "RunList"), READ_PARAMS, params=(RunPage,)))
async def list_runs(request: ApiRequest) -> HTTPResponse:
    """A page of the key's runs, newest first (``limit``, ``starting_after``, ``state``,
    ``engine``)."""
    key, page = await read_query(request, "optimize", RunPage)
    return answer(await runs.page(request.app.ctx.store, key["id"], page))


@api.route("/runs", delete=Doc("deleteRuns", "Delete every finished run of the key", "runs",
                               (200, "RunsDeleted"), READ,
                               description="Queued and running runs are kept (cancel them "
                                           "first)."))
async def delete_runs(request: ApiRequest) -> HTTPResponse:
    """Delete every finished run of the key (queued and running ones stay)."""
    key = await read(request, "optimize")
    return answer(RunsDeleted(await request.app.ctx.store.runs.delete_finished(key["id"])))


@api.route(
    "/runs/<run_id:str>",
    get=Doc("getRun", "One run (with progress while it runs)", "runs", (200, "Run"),
            (404, *READ), params=(RunPath,)),
    delete=Doc("deleteRun", "Delete a finished run", "runs", (204, "empty"),
               (404, 409, *READ), params=(RunPath,)))
async def one_run(request: ApiRequest, run_id: str) -> HTTPResponse:
    """GET (HEAD): one run, with its progress while it runs; DELETE: delete a finished run
    (204; a queued or running one is 409). (One route for the three methods, so a 405 on
    the path lists them in ``Allow``.)"""
    key = await read(request, "optimize")
    store = request.app.ctx.store
    if request.method == "DELETE":
        await runs.delete(store, key["id"], run_id)
        return Response(status=204)
    return answer(runs.run_view(await runs.find(store, key["id"], run_id)))


@api.route("/runs/<run_id:str>/trace", get=Doc(
    "runTrace", "A run's convergence trace", "runs", (200, "RunTrace"), (404, *READ_PARAMS),
    params=(RunPath, TraceQuery)))
async def trace(request: ApiRequest, run_id: str) -> HTTPResponse:
    """The run's convergence trace: JSON, or CSV with ``?format=csv``."""
    key, form = await read_query(request, "optimize", TraceQuery)
    found = runs.run_trace(await runs.find(request.app.ctx.store, key["id"], run_id))
    if form.format == "csv":
        return Response(runs.trace_csv(found), content_type="text/csv; charset=utf-8")
    return answer(found)


@api.route("/runs/<run_id:str>/front", get=Doc(
    "runFront", "A page of a finished run's Pareto front", "runs", (200, "RunFront"),
    (404, 409, *READ_PARAMS), params=(RunPath, FrontQuery),
    description="A run of several objectives keeps its front apart from the run (which "
                "says its `front_size`): its points in pages, in the front's order, at most "
                "`limit` points and about the tier's `front_page_bytes` (at least one "
                "point). A queued or running run, or one that ended without a result, is "
                "409 `run_not_finished`; a run of one objective has no front: 404."))
async def run_front(request: ApiRequest, run_id: str) -> HTTPResponse:
    """A page of the run's front (``limit``, ``starting_after``: a point's index)."""
    key, page = await read_query(request, "optimize", FrontQuery)
    cap = limits.tier_limits(key, settings=request.app.ctx.settings)["front_page_bytes"]
    return answer(await front.page(request.app.ctx.store, key["id"], run_id, page, cap))


@api.route("/runs/<run_id:str>/events", head=False, get=Doc(
    "runEvents", "Watch a run: Server-Sent Events until it ends", "runs", (200, "events"),
    (404, *READ_PARAMS), params=(RunPath, EventsHeaders),
    description="`text/event-stream`. Each event has `id:`, `event:` and one `data:` line "
                "of JSON: `state` (data: the Run, on each state change: queued, running, "
                "the final state), `progress` (data: RunProgress, at most every 0.25 s "
                "while running), then exactly one `result` (final state succeeded or "
                "cancelled) or `error` (failed), data: the final Run; then the stream ends. "
                "A `: heartbeat` comment every 15 s. Send the last event id seen as "
                "`Last-Event-ID` to resume with no duplicate and no missed state (an id "
                "this stream has not sent is 400); a finished run yields its final state "
                "and terminal event at once. The Run's `request` is in the first Run "
                "document of a connection only (absent from the later ones). A key's open "
                "streams per worker are capped by its tier (429 `too_many_streams`), and "
                "a worker's streams, every key together, by the service (503 `overloaded` "
                "with `Retry-After`). A "
                "revoked key's open streams end within seconds with an `error` event "
                "without an id whose data is a problem document (`revoked_key`)."))
async def events(request: ApiRequest, run_id: str) -> None:
    """The run's Server-Sent Events (:mod:`decido_service.runs.events`), resumed after
    ``Last-Event-ID``; the stream ends after the terminal ``result`` or ``error`` event."""
    key = await read(request, "optimize")
    async with refusals(request, key, "optimize"):  # a bad Last-Event-ID is a refusal
        await send_events(request, key, run_id)


@api.route("/runs/<run_id:str>/cancel", post=Doc(
    "cancelRun", "Stop a queued or running run", "runs", (202, "Run"),
    (404, 409, *READ), params=(RunPath,),
    description="The run stops after its current iteration and ends `cancelled` with its "
                "best so far; a finished run is 409."))
async def cancel(request: ApiRequest, run_id: str) -> HTTPResponse:
    """Ask a queued or running run to stop (202); a finished one is 409."""
    key = await read(request, "optimize")
    return answer(await runs.cancel(request.app.ctx.store, key["id"], run_id), 202)
