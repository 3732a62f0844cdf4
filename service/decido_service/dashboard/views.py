"""The dashboard's pages (GET): overview, runs, a run, compare, decisions, keys, engines.

Each reads the store and the core through the same service modules as the API
(:mod:`decido_service.runs.api`, :mod:`decido_service.decisions.log`, :mod:`decido_service.limits`,
:func:`decido_service.schemas.engine_table`); none calls the HTTP API.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from sanic import Request
from sanic.response import HTTPResponse

import decido
from decido_service import limits
from decido_service.dashboard import summary
from decido_service.dashboard.render import page
from decido_service.dashboard.routes import html, route
from decido_service.dashboard.session import Session
from decido_service.decisions import log as decision_log
from decido_service.pages import DEFAULT_PAGE
from decido_service.runs import api as runs
from decido_service.schemas import engine_table
from decido_service.store import RUN_STATES, Store

__all__ = ["COMPARE_MAX", "COMPARE_MIN", "COMPARE_OFFERED"]

#: how many runs the compare page overlays, and how many of the latest it offers
COMPARE_MIN, COMPARE_MAX, COMPARE_OFFERED = 2, 8, 30
#: how many runs and decisions the overview lists
LATEST = 5


def _store(request: Request) -> Store:
    store: Store = request.app.ctx.store
    return store


@route("/")
@html
async def overview(request: Request, session: Session) -> HTTPResponse:
    """Plan and tier, usage against quota on both surfaces, the latest runs and decisions."""
    key, settings, store = session.key, request.app.ctx.settings, _store(request)
    states, (rows, _), (decisions, _) = await asyncio.gather(  # three reads at once
        store.peek(limits.usage_specs(key, settings=settings), settings.now()),
        runs.page(store, key["id"], runs.PageQuery(LATEST, None, None, None)),
        decision_log.page(store, key["id"], LATEST))
    usage = limits.usage_document(states, key, settings=settings)
    return page("overview.html", session=session, usage=usage, bars=summary.usage_bars(usage),
                runs=[summary.run_row(r) for r in rows],
                decisions=[summary.decision_row(d) for d in decisions])


@route("/runs")
@html
async def run_list(request: Request, session: Session) -> HTTPResponse:
    """The key's runs, newest first: filters by state and engine, a cursor, live rows."""
    # the filter form sends "state=" for any state: a blank value is no filter here
    args = {k: v[0] for k, v in request.get_args(keep_blank_values=True).items() if v[0]}
    query = runs.page_query(args)
    rows, more = await runs.page(_store(request), session.key["id"], query)
    filters = {"state": query.state, "engine": query.engine}
    return page("runs.html", session=session, runs=[summary.run_row(r) for r in rows],
                more=more, filters=filters, states=RUN_STATES, engines=sorted(engine_table()),
                next_query=summary.next_query(filters, rows) if more else None)


@route("/runs/<run_id:str>")
@html
async def run_page(request: Request, session: Session, run_id: str) -> HTTPResponse:
    """One run: convergence, the best ``x``, the request, the result, cancel and replay."""
    view = runs.run_view(await runs.find(_store(request), session.key["id"], run_id))
    return page("run.html", session=session, run=view, row=summary.run_row_of_view(view),
                request_summary=summary.request_summary(view.get("request")),
                result_json=orjson.dumps(view["result"], option=orjson.OPT_INDENT_2).decode(),
                problem=view["problem"], finished=view["state"] not in ("queued", "running"))


@route("/compare")
@html
async def compare(request: Request, session: Session) -> HTTPResponse:
    """Pick 2-8 runs (the key's latest succeeded ones are offered; any run of the key can
    be named by ``run``) and overlay them."""
    chosen: list[str] = request.get_args().getlist("run", [])
    store = _store(request)
    error = None
    if chosen and not COMPARE_MIN <= len(chosen) <= COMPARE_MAX:
        error = f"pick from {COMPARE_MIN} to {COMPARE_MAX} runs (you picked {len(chosen)})"
    picked = [] if error else [runs.run_view(await runs.find(store, session.key["id"], rid))
                               for rid in chosen]
    rows, _ = await runs.page(store, session.key["id"],
                              runs.PageQuery(COMPARE_OFFERED, None, "succeeded", None))
    return page("compare.html", session=session, offered=[summary.run_row(r) for r in rows],
                picked=[summary.run_row_of_view(v) for v in picked],
                chosen=set(chosen), error=error, low=COMPARE_MIN, high=COMPARE_MAX)


@route("/decisions")
@html
async def decision_list(request: Request, session: Session) -> HTTPResponse:
    """The key's decision log, newest first, a page at a time."""
    shown, more = await decision_log.page(_store(request), session.key["id"], DEFAULT_PAGE,
                                          request.args.get("starting_after"))
    return page("decisions.html", session=session,
                decisions=[summary.decision_row(d) for d in shown],
                next_after=shown[-1]["id"] if more else None)


@route("/decisions/<decision_id:str>")
@html
async def decision_page(request: Request, session: Session, decision_id: str) -> HTTPResponse:
    """One logged decision with its request and answer."""
    found = await decision_log.find(_store(request), session.key["id"], decision_id)
    return page("decision.html", session=session, decision=found,
                request_json=_pretty(found["request"]), answer_json=_pretty(found["answer"]))


@route("/keys")
@html
async def key_list(request: Request, session: Session) -> HTTPResponse:
    """The keys of the signed-in key's account, a form to make one, one to revoke each."""
    keys = await _store(request).account_keys(session.key["id"])
    return page("keys.html", session=session, keys=keys, created=None)


@route("/engines")
@html
async def engine_list(request: Request, session: Session) -> HTTPResponse:
    """Every engine with its options, defaults and ranges."""
    return page("engines.html", session=session, default=decido.default_engine(),
                engines=list(engine_table().values()))


def _pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
