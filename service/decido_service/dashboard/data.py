"""What the dashboard's scripts fetch (session cookie, never the key): a run's trace as
JSON or CSV, its event stream, the rows of running runs for the runs table, and the
static assets."""

from __future__ import annotations

import msgspec
import orjson
from sanic.response import HTTPResponse

from decido_service.dashboard import front, summary
from decido_service.dashboard.render import asset
from decido_service.dashboard.routes import api, data
from decido_service.dashboard.session import Session
from decido_service.http.context import ApiRequest
from decido_service.http.events import send_events
from decido_service.http.problems import ApiError
from decido_service.http.responses import Response, json_response
from decido_service.runs import api as runs
from decido_service.types import MAX_PAGE

__all__: list[str] = []


@api.route("/runs/<run_id:str>/trace.json", "GET")
@data
async def trace_json(request: ApiRequest, session: Session, run_id: str) -> HTTPResponse:
    """The run's document with its trace (as ``GET /v1/runs/{id}`` and its trace) and,
    for a run of several objectives, the first page of its front (``front``: as
    ``GET /v1/runs/{id}/front``, bounded in bytes by the tier)."""
    store = request.app.ctx.store
    row = await runs.find(store, session.key["id"], run_id)
    run = runs.run_view(row)
    view = msgspec.to_builtins(run)
    shown = await front.shown_front(store, request.app.ctx.settings, session.key, run)
    trace = runs.run_trace(row)
    return json_response(orjson.dumps({**view, "trace": trace.points,
                                       "columns": trace.columns,
                                       "front": msgspec.to_builtins(shown),
                                       "row": summary.run_row_of_view(view)}))


@api.route("/runs/<run_id:str>/trace.csv", "GET")
@data
async def trace_csv(request: ApiRequest, session: Session, run_id: str) -> HTTPResponse:
    """The run's trace as CSV (as ``GET /v1/runs/{id}/trace?format=csv``), a download."""
    found = runs.run_trace(await runs.find(request.app.ctx.store, session.key["id"], run_id))
    return Response(runs.trace_csv(found), content_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{run_id}.csv"'})


@api.route("/runs/<run_id:str>/events", "GET", head=False)
@data
async def events(request: ApiRequest, session: Session, run_id: str) -> None:
    """The run's Server-Sent Events, the same stream as ``GET /v1/runs/{id}/events``
    (``Last-Event-ID`` resumes it)."""
    await send_events(request, session.key, run_id)


@api.route("/runs/live.json", "GET")
@data
async def live(request: ApiRequest, session: Session) -> HTTPResponse:
    """The table rows of the runs named by ``id`` (at most a page of them)."""
    ids: list[str] = request.get_args().getlist("id", [])
    if len(ids) > MAX_PAGE:
        raise ApiError("invalid_parameter", f"id: at most {MAX_PAGE} runs at once")
    store, key_id = request.app.ctx.store, session.key["id"]
    rows = [runs.run_view(await runs.find(store, key_id, rid)) for rid in ids]
    return json_response(orjson.dumps({"data": [summary.run_row(r) for r in rows]}))


@api.route("/static/<name:str>", "GET")
async def static(request: ApiRequest, name: str) -> HTTPResponse:
    """A vendored or own asset of the dashboard (public, like the docs page's)."""
    return asset(name, request.headers.get("accept-encoding", ""))
