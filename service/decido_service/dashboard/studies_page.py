"""The dashboard's studies (ask/tell optimization, docs/studies.md): the list, a study's
page, its stop and delete forms, and what its script fetches.

The list is the key's studies, newest first, filtered by state and labels, a cursor page
at a time (as the runs list). A study's page shows its spec, its trials by state, the best
trial (or the front: several objectives, with "choose from this front", the decide page
with ``from_study``), its trials a page at a time (``state`` filter, cursor
``starting_after=<number>``), and the charts its script draws from ``trials.json``: the
best value so far against the trial number (over every completed trial), and the
completed trials in parallel coordinates coloured by value (a sample of a large study:
:mod:`~decido_service.dashboard.study_charts`). The page follows the study live over
its event stream (``events``: the API's,
:func:`decido_service.http.sse.send_study_events`), polling ``study.json`` when the
stream is refused. Reads and actions go through
:mod:`decido_service.studies.api`, as the API's do; the charts' trials are read from the
store's trials of the study page after page, past the API's page size.
"""

from __future__ import annotations

import asyncio
import typing
from typing import Any

import msgspec
import orjson
from sanic.response import HTTPResponse

from decido_service.dashboard import study_facts, summary
from decido_service.dashboard.render import page, redirect
from decido_service.dashboard.routes import api, data, html, list_query, query_args
from decido_service.dashboard.session import Session
from decido_service.dashboard.study_charts import Charts
from decido_service.http.context import ApiRequest
from decido_service.http.params import parse
from decido_service.http.responses import json_response
from decido_service.http.sse import send_study_events
from decido_service.studies import api as studies
from decido_service.types.studies import (
    TRIAL_STATES,
    StudyPage,
    StudyState,
    TrialPage,
)

__all__ = ["CHART_PAGE", "STUDY_STATES", "TRIALS_PAGE", "chart_data"]

#: a study's states (the list's filter)
STUDY_STATES: tuple[str, ...] = typing.get_args(StudyState)
#: how many trials a page of the study page's table shows
TRIALS_PAGE = 50
#: completed trials read from the store at a time for the study page's charts
CHART_PAGE = 2_000


@api.route("/studies", "GET")
@html
async def study_list(request: ApiRequest, session: Session) -> HTTPResponse:
    """The key's studies, newest first: filters by state and labels, a cursor."""
    query, labels = list_query(request, StudyPage)
    found = await studies.page(request.app.ctx.studies, session.key["id"], query)
    filters = {"state": query.state, "labels": labels}
    rows = [study_facts.study_row(msgspec.to_builtins(s)) for s in found.data]
    return page("studies.html", session=session, studies=rows, filters=filters,
                states=STUDY_STATES,
                next_query=summary.next_query(filters, found))


@api.route("/studies/<study_id:str>", "GET")
@html
async def study_page(request: ApiRequest, session: Session, study_id: str) -> HTTPResponse:
    """One study: its spec, counts, best or front, a page of its trials, its charts."""
    ctx, key_id = request.app.ctx.studies, session.key["id"]
    study: dict[str, Any] = msgspec.to_builtins(await studies.find(ctx, key_id, study_id))
    query = parse(TrialPage, {"limit": str(TRIALS_PAGE), **query_args(request)})
    found = await studies.trials(ctx, key_id, study_id, query)
    trials: list[dict[str, Any]] = msgspec.to_builtins(found.data)
    filters = {"state": query.state}
    spec = study["spec"]
    objectives = study_facts.objectives_of(spec)
    return page("study.html", session=session, study=study, row=study_facts.study_row(study),
                spec=study_facts.spec_summary(spec), objectives=objectives,
                several=len(objectives) > 1, trials=trials, trial_states=TRIAL_STATES,
                filters=filters, next_query=summary.next_query(filters, found),
                paged=query.starting_after is not None,
                variables=[a["name"] for a in study_facts.axes_of(spec)])


@api.route("/studies/<study_id:str>/stop", "POST")
@html
async def study_stop(request: ApiRequest, session: Session, study_id: str) -> HTTPResponse:
    """Stop the study (as ``POST /v1/studies/{id}/stop``); back to its page."""
    await studies.stop(request.app.ctx.studies, session.key["id"], study_id)
    return redirect(f"/dashboard/studies/{study_id}")


@api.route("/studies/<study_id:str>/delete", "POST")
@html
async def study_delete(request: ApiRequest, session: Session, study_id: str) -> HTTPResponse:
    """Delete a study that is not active (as ``DELETE /v1/studies/{id}``: 409
    ``study_not_stopped`` for an active one); the studies list."""
    await studies.delete(request.app.ctx.studies, session.key["id"], study_id)
    return redirect("/dashboard/studies")


async def chart_data(ctx: studies.Context, key_id: str, study_id: str) -> dict[str, Any]:
    """What the study page's script draws: ``study`` (the ``Study`` document), ``row``
    (its line of the studies table), ``objectives``, ``axes``
    (:func:`~decido_service.dashboard.study_facts.axes_of`), ``front`` (the numbers of the
    front's trials: several objectives), and of every completed trial, read
    :data:`CHART_PAGE` at a time and taken off the event loop,
    :meth:`~decido_service.dashboard.study_charts.Charts.data`: the best so far over all
    of them, a sample (with the best and the front) to draw."""
    study: dict[str, Any] = msgspec.to_builtins(await studies.find(ctx, key_id, study_id))
    spec = study["spec"]
    objectives = study_facts.objectives_of(spec)
    best = study.get("best")
    front = [t["number"] for t in study.get("pareto") or ()]
    charts = Charts(study["trials"]["completed"], [o["goal"] for o in objectives],
                    [*front, *([] if best is None else [best["number"]])])
    loop, after = asyncio.get_running_loop(), None
    while True:
        rows = await ctx.store.studies.trials(key_id, study_id, CHART_PAGE, after,
                                              "completed") or []
        if rows:
            await loop.run_in_executor(None, charts.take, rows)
            after = int(rows[-1]["number"])
        if len(rows) < CHART_PAGE:
            break
    return {"study": study, "row": study_facts.study_row(study), "objectives": objectives,
            "axes": study_facts.axes_of(spec), "front": front, **charts.data()}


@api.route("/studies/<study_id:str>/trials.json", "GET")
@data
async def trials_json(request: ApiRequest, session: Session, study_id: str) -> HTTPResponse:
    """The study and its completed trials as the study page draws them
    (:func:`chart_data`)."""
    found = await chart_data(request.app.ctx.studies, session.key["id"], study_id)
    return json_response(orjson.dumps(found))


@api.route("/studies/<study_id:str>/study.json", "GET")
@data
async def study_json(request: ApiRequest, session: Session, study_id: str) -> HTTPResponse:
    """The study's document (as ``GET /v1/studies/{id}``): what the page polls."""
    found = await studies.find(request.app.ctx.studies, session.key["id"], study_id)
    return json_response(orjson.dumps(msgspec.to_builtins(found)))


@api.route("/studies/<study_id:str>/events", "GET", head=False)
@data
async def study_events(request: ApiRequest, session: Session, study_id: str) -> None:
    """The study's Server-Sent Events, the same stream as ``GET /v1/studies/{id}/events``
    (``Last-Event-ID`` resumes it; the key's streams are capped together)."""
    await send_study_events(request, session.key, study_id)
