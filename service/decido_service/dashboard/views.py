"""The dashboard's pages (GET): overview, runs, a run, compare, decisions, keys, engines.

Each reads the store and the core through the same service modules as the API
(:mod:`decido_service.runs.api`, :mod:`decido_service.decisions.log`, :mod:`decido_service.limits`,
:func:`decido_service.schemas.engine_table`); none calls the HTTP API.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from sanic.response import HTTPResponse

import decido
from decido_service import limits
from decido_service.dashboard import front, summary
from decido_service.dashboard.render import page, pretty
from decido_service.dashboard.routes import api, html, list_query
from decido_service.dashboard.session import Session
from decido_service.decisions import log as decision_log
from decido_service.http.context import ApiRequest
from decido_service.runs import api as runs
from decido_service.runs import front as run_front
from decido_service.schemas import engine_table
from decido_service.services import in_thread
from decido_service.store import RUN_STATES, RunRow
from decido_service.types import DecisionPage, ParetoPoint, RunPage

__all__ = ["COMPARE_MAX", "COMPARE_MIN", "COMPARE_OFFERED"]

#: how many runs the compare page overlays, and how many of the latest it offers
COMPARE_MIN, COMPARE_MAX, COMPARE_OFFERED = 2, 8, 30
#: how many runs and decisions the overview lists
LATEST = 5


@api.route("/", "GET")
@html
async def overview(request: ApiRequest, session: Session) -> HTTPResponse:
    """Plan and tier, usage against quota on both surfaces, the latest runs and decisions."""
    key, settings, store = session.key, request.app.ctx.settings, request.app.ctx.store
    states, latest, decisions = await asyncio.gather(  # three reads at once
        store.admissions.peek(limits.usage_specs(key, settings=settings), settings.now()),
        runs.page(store, key["id"], RunPage(limit=LATEST)),
        decision_log.page(store, key["id"], LATEST))
    usage = msgspec.to_builtins(limits.usage_document(states, key, settings=settings))
    return page("overview.html", session=session, usage=usage, bars=summary.usage_bars(usage),
                runs=[summary.run_row(r) for r in latest.data],
                decisions=[summary.decision_row(d) for d in msgspec.to_builtins(decisions.data)])


@api.route("/runs", "GET")
@html
async def run_list(request: ApiRequest, session: Session) -> HTTPResponse:
    """The key's runs, newest first: filters by state and engine, a cursor, live rows."""
    query, labels = list_query(request, RunPage)
    found = await runs.page(request.app.ctx.store, session.key["id"], query)
    filters = {"state": query.state, "engine": query.engine, "labels": labels}
    return page("runs.html", session=session, runs=[summary.run_row(r) for r in found.data],
                more=found.has_more, filters=filters, states=RUN_STATES,
                engines=sorted(engine_table()),
                next_query=summary.next_query(filters, found))


@api.route("/runs/<run_id:str>", "GET")
@html
async def run_page(request: ApiRequest, session: Session, run_id: str) -> HTTPResponse:
    """One run: convergence, the best ``x``, the request, the result, cancel and replay; a
    run of several objectives: its hypervolume, its front, "choose from this front"."""
    view = msgspec.to_builtins(
        runs.run_view(await runs.find(request.app.ctx.store, session.key["id"], run_id)))
    return page("run.html", session=session, run=view, row=summary.run_row_of_view(view),
                request_summary=summary.request_summary(view["request"]),
                objectives=summary.objectives_of(view["request"]), front=front.front_facts(view),
                result_json=pretty(view["result"]),
                problem=view["problem"], finished=view["state"] not in ("queued", "running"))


@api.route("/compare", "GET")
@html
async def compare(request: ApiRequest, session: Session) -> HTTPResponse:
    """Pick 2-8 runs (the key's latest succeeded ones are offered; any run of the key can
    be named by ``run``) and overlay them: the convergence of runs of one objective, the
    hypervolume of runs of several (:func:`~decido_service.dashboard.front.compare_kinds`)."""
    # a run named twice is compared once
    chosen: list[str] = list(dict.fromkeys(request.get_args().getlist("run", [])))
    store = request.app.ctx.store
    error = None
    if chosen and not COMPARE_MIN <= len(chosen) <= COMPARE_MAX:
        error = (f"pick from {COMPARE_MIN} to {COMPARE_MAX} runs (you picked {len(chosen)} "
                 "different ones)")
    rows = [] if error else [await runs.find(store, session.key["id"], rid) for rid in chosen]
    offered = await store.runs.page(session.key["id"], COMPARE_OFFERED, state="succeeded")
    fronts = [await run_front.points(store, row) for row in rows]
    listed, picked, notes, kinds = await in_thread(request.app.ctx.decide_pool, _compared,
                                                   offered, rows, fronts)
    return page("compare.html", session=session, offered=listed, picked=picked, notes=notes,
                kinds=kinds, chosen=set(chosen), error=error, low=COMPARE_MIN,
                high=COMPARE_MAX)


def _compared(offered: list[RunRow], rows: list[RunRow],
              fronts: list[list[ParetoPoint] | None]) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The compare page's lines of the runs offered, and of the runs picked (with their
    ``fronts``: each run's whole front, None for a run of one objective) with their notes
    and kinds, from their store rows: CPU work that grows with the runs' fronts (fronts
    converted and measured by :func:`~decido_service.dashboard.front.compare_kinds`),
    done in a worker thread."""
    listed = [summary.run_row(runs.run_view(row)) for row in offered]
    views = [msgspec.to_builtins(runs.run_view(row)) for row in rows]
    for view, points in zip(views, fronts, strict=True):
        if points is not None:
            view["result"]["pareto"] = msgspec.to_builtins(points)
    notes = summary.compare_notes({v["id"]: v["request"] for v in views})
    return (listed, [summary.run_row_of_view(v) for v in views], notes,
            front.compare_kinds(views))


@api.route("/decisions", "GET")
@html
async def decision_list(request: ApiRequest, session: Session) -> HTTPResponse:
    """The key's decision log, newest first, a page at a time (filtered by labels)."""
    query, labels = list_query(request, DecisionPage)
    found = await decision_log.page(request.app.ctx.store, session.key["id"], query.limit,
                                    query.starting_after, query.metadata)
    return page("decisions.html", session=session, labels=labels,
                decisions=[summary.decision_row(d) for d in msgspec.to_builtins(found.data)],
                next_query=summary.next_query({"labels": labels}, found))


@api.route("/decisions/<decision_id:str>", "GET")
@html
async def decision_page(request: ApiRequest, session: Session, decision_id: str) -> HTTPResponse:
    """One logged decision with its request and answer."""
    found = await decision_log.find(request.app.ctx.store, session.key["id"], decision_id)
    return page("decision.html", session=session, decision=msgspec.to_builtins(found),
                request_json=pretty(found.request), answer_json=pretty(found.answer))


@api.route("/keys", "GET")
@html
async def key_list(request: ApiRequest, session: Session) -> HTTPResponse:
    """The keys of the signed-in key's account, a form to make one, one to revoke each."""
    keys = await request.app.ctx.store.accounts.account_keys(session.key["id"])
    return page("keys.html", session=session, keys=keys, created=None)


@api.route("/engines", "GET")
@html
async def engine_list(request: ApiRequest, session: Session) -> HTTPResponse:
    """Every engine with its options, defaults and ranges."""
    return page("engines.html", session=session, default=decido.default_engine(),
                engines=list(engine_table().values()))
