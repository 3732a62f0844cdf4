"""The runs surface: submit a run, read, list, trace, cancel and delete runs.

``POST /v1/runs`` takes the body of ``/v1/optimize`` through the same validation, caps,
and admission (:mod:`decido_service.runs.submit`), then answers 202 with the queued run and
``Location`` at once. Reads and cancels: :mod:`decido_service.runs.api`. Reads are not
counted; they check the key against the store (a revoked key is refused at once).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

from decido_service.admission import authenticate
from decido_service.http.endpoint import endpoint
from decido_service.http.problems import ApiError
from decido_service.http.responses import READ, Response, json_response, read_route
from decido_service.runs import api as runs
from decido_service.runs import idempotency
from decido_service.runs.events import send_events
from decido_service.runs.submit import enqueue, prepare
from decido_service.runs.trace import COLUMNS
from decido_service.store import KeyRecord, Store

__all__ = ["bp"]

bp = Blueprint("runs")
Handler = TypeVar("Handler", bound=Callable[..., Awaitable[Any]])


def _route(uri: str, methods: tuple[str, ...]) -> Callable[[Handler], Handler]:
    """Sanic's ``Blueprint.route``, typed."""
    return cast(Callable[[Handler], Handler], bp.route(uri, methods=methods))


@bp.post("/runs")
@endpoint
async def submit(request: Request) -> HTTPResponse:
    """Admit a run and answer 202 with it queued (it runs in the background: in this
    worker when one of its run threads is free, else in whichever takes it first)."""
    key, req, objective, budget = await prepare(request)
    async with idempotency.claim(request, key, idempotency.header(request)) as prior:
        if isinstance(prior, dict):
            return await idempotency.replayed(request, key, prior)
        run_id = await enqueue(request, key, req, objective, budget)
        body = orjson.dumps(runs.run_view(await _row(request, key, run_id)))
        if prior is not None:
            prior.done(run_id, 202, body)
    return json_response(body, status=202, headers={"Location": f"/v1/runs/{run_id}"})


@read_route(bp, "/runs")
@endpoint
async def list_runs(request: Request) -> HTTPResponse:
    """A page of the key's runs, newest first (``limit``, ``starting_after``, ``state``,
    ``engine``)."""
    key = await authenticate(request, fresh=True)
    query = runs.page_query(request.get_args(keep_blank_values=True))  # "limit=" is bad
    rows, more = await runs.page(request.app.ctx.store, key["id"], query)
    return json_response(orjson.dumps({"data": [runs.run_view(r) for r in rows],
                                       "has_more": more}))


@_route("/runs", ("DELETE",))
@endpoint
async def delete_runs(request: Request) -> HTTPResponse:
    """Delete every finished run of the key (queued and running ones stay)."""
    key = await authenticate(request, fresh=True)
    store: Store = request.app.ctx.store
    return json_response(orjson.dumps({"deleted": await store.delete_runs(key["id"])}))


@_route("/runs/<run_id:str>", (*READ, "DELETE"))
@endpoint
async def one_run(request: Request, run_id: str) -> HTTPResponse:
    """GET (HEAD): one run, with its progress while it runs; DELETE: delete a finished run.
    (One route for the three methods, so a 405 on the path lists them in ``Allow``.)"""
    key = await authenticate(request, fresh=True)
    if request.method == "DELETE":
        return await _delete(request, key, run_id)
    return json_response(orjson.dumps(runs.run_view(await _row(request, key, run_id))))


@read_route(bp, "/runs/<run_id:str>/trace")
@endpoint
async def trace(request: Request, run_id: str) -> HTTPResponse:
    """The run's convergence trace: JSON, or CSV with ``?format=csv``."""
    key = await authenticate(request, fresh=True)
    fmt = request.get_args(keep_blank_values=True).get("format", "json")
    if fmt not in ("json", "csv"):
        raise ApiError("invalid_parameter", "format: expected json or csv")
    points = runs.run_view(await _row(request, key, run_id), trace=True)["trace"]
    if fmt == "csv":
        return Response(runs.trace_csv(points), content_type="text/csv; charset=utf-8")
    return json_response(orjson.dumps({"run_id": run_id, "columns": COLUMNS,
                                       "points": points}))


@bp.get("/runs/<run_id:str>/events")
@endpoint
async def events(request: Request, run_id: str) -> None:
    """The run's Server-Sent Events (:mod:`decido_service.runs.events`), resumed after
    ``Last-Event-ID``; the stream ends after the terminal ``result`` or ``error`` event."""
    key = await authenticate(request, fresh=True)
    await send_events(request, key, run_id)


@bp.post("/runs/<run_id:str>/cancel")
@endpoint
async def cancel(request: Request, run_id: str) -> HTTPResponse:
    """Ask a queued or running run to stop (202); a finished one is 409."""
    key = await authenticate(request, fresh=True)
    row = await runs.cancel(request.app.ctx.store, key["id"], run_id)
    return json_response(orjson.dumps(runs.run_view(row)), status=202)


async def _delete(request: Request, key: KeyRecord, run_id: str) -> HTTPResponse:
    """Delete a finished run (204); a queued or running one is 409."""
    await runs.delete(request.app.ctx.store, key["id"], run_id)
    return Response(status=204)


async def _row(request: Request, key: KeyRecord, run_id: str) -> dict[str, Any]:
    return await runs.find(request.app.ctx.store, key["id"], run_id)
