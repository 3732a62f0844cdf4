"""The decision surface: ``POST /v1/decide`` and ``POST /v1/batch``, passed to the library,
and the decision log (``GET /v1/decisions``, ``GET /v1/decisions/{id}``).

The JSON body goes to :func:`decido.decide` / :func:`decido.decide_batch` unchanged and the
answer comes back unchanged (a body with ``from_run`` decides on that run's front:
:mod:`decido_service.decisions.bridge`); how it is counted and logged:
:mod:`decido_service.decisions`.
Reading the log is a keyed read under the one read policy
(:meth:`decido_service.admission.Gate.read`: counted nothing, the ``decide.minute`` headers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sanic.response import HTTPResponse

import decido
from decido_service import limits
from decido_service.admission import Gate
from decido_service.decisions import bridge, sampling
from decido_service.decisions import log as decision_log
from decido_service.decisions.decide import decide as decided
from decido_service.http.admission import authenticate, read, refusals
from decido_service.http.context import ApiRequest
from decido_service.http.params import json_body, read_query
from decido_service.http.problems import field_error, field_of, limit_error, validation_error
from decido_service.http.responses import answer, json_response
from decido_service.http.routes import READ_PARAMS, Doc, Routes
from decido_service.limits import Surface
from decido_service.schemas import batch_size
from decido_service.store import KeyRecord
from decido_service.types import DecisionPage, DecisionPath

__all__ = ["api"]

api = Routes("decide")
_POSTED = (400, 415, 422, 401, 404, 409, 413, 429, 503)


#: what the decision operations say of decisions under uncertainty
_SAMPLED = ("A decision under uncertainty (`uncertainty`) may draw at most the plan's "
            "`max_smaa_values` sampled values (samples x options x the attributes read per "
            "option; `GET /v1/usage` shows it): above, 422 `too_many` at its samples, before "
            "anything is sampled or counted. Each worker computes one per key at a time "
            "(503 `overloaded` with `Retry-After` beyond).")


@api.route("/decide", post=Doc("decide", "One decision", "decisions", (200, "DecideResult"),
                               _POSTED, "DecideRequest", description=_SAMPLED))
async def decide(request: ApiRequest) -> HTTPResponse:
    """One decision: rank the options under the constraints."""
    key = await authenticate(request)
    async with refusals(request, key, "decide") as admission:
        body = json_body(request)
        log = decision_log.wants_log(body, batch=False)
        body, points = await bridge.resolve(_source(request, key), body)
        _check_sampling(admission, body, batch=False)
    return await _answer(request, key, "decide",
                         bridge.with_points(decido.decide, points, batch=False), body, log=log,
                         heavy=bool(points))


@api.route("/batch", post=Doc(
    "batch", "Many decisions (each item ok or error on its own)", "decisions",
    (200, "BatchResult"), (400, 415, 422, 403, 401, 404, 409, 413, 429, 503), "BatchRequest",
    description=_SAMPLED + " In a batch, each item and all items together are held to it."))
async def batch(request: ApiRequest) -> HTTPResponse:
    """Many decisions; each item succeeds or fails on its own."""
    key = await authenticate(request)
    async with refusals(request, key, "batch") as admission:
        body = json_body(request)
        log = decision_log.wants_log(body, batch=True)
        decision_log.labels(body, batch=True)  # its labels: a fault is a 422 here
        size = batch_size(body)
        violation = limits.check_batch(key, size, settings=request.app.ctx.settings)
        if violation is not None:
            raise limit_error(violation)
        body, points = await bridge.resolve_batch(_source(request, key), body)
        _check_sampling(admission, body, batch=True)
    return await _answer(request, key, "batch",
                         bridge.with_points(decido.decide_batch, points, batch=True), body,
                         log=log, amount=size, heavy=bool(points))


async def _answer(request: ApiRequest, key: KeyRecord, surface: Surface,
                  fn: Callable[[Any], dict[str, Any]], body: Any, *, log: bool,
                  amount: int = 1, heavy: bool = False) -> HTTPResponse:
    """The 200 answer of :func:`decido_service.decisions.decide.decide` on the request's
    JSON body ``body``."""
    _, encoded = await decided(request.app.ctx, request.ctx, key, surface, fn, body,
                               request.body, log=log, amount=amount, heavy=heavy)
    return json_response(encoded)


def _source(request: ApiRequest, key: KeyRecord) -> bridge.Source:
    """Where this request's fronts (``from_run``) are read."""
    ctx = request.app.ctx
    return bridge.Source(ctx.store, key, ctx.decide_pool, ctx.settings)


def _check_sampling(admission: Gate, body: Any, *, batch: bool) -> None:
    """422 listing every place where ``body`` samples more than the key's plan allows
    (:mod:`decido_service.decisions.sampling`; the plan's row of the request's
    ``admission``), before anything is counted or sampled."""
    cap = admission.counters.row["max_smaa_values"]
    faults = sampling.sampling_faults(body, cap, batch=batch)
    if faults:
        raise validation_error([field_error(field_of(f.pointer), "too_many", f.message,
                                            pointer=f.pointer) for f in faults])


@api.route("/decisions", get=Doc(
    "decisions", "The key's decision log, newest first", "decisions",
    (200, "DecisionLogPage"), READ_PARAMS, params=(DecisionPage,),
    description="At most `limit` entries and about 1 MiB of them (at least one): a page of "
                "large entries holds fewer, and `has_more` says more follow. Option ids "
                "longer than 200 characters are cut in summaries (to 200, the last one "
                "`…`); the entry keeps them whole."))
async def decisions(request: ApiRequest) -> HTTPResponse:
    """The key's decision log, newest first, a page at a time."""
    key, page = await read_query(request, "decide", DecisionPage)
    return answer(await decision_log.page(request.app.ctx.store, key["id"], page.limit,
                                          page.starting_after, page.metadata))


@api.route("/decisions/<decision_id:str>", get=Doc(
    "decision", "One logged decision with its request and answer", "decisions",
    (200, "DecisionLogRecord"), (401, 404, 503), params=(DecisionPath,)))
async def decision(request: ApiRequest, decision_id: str) -> HTTPResponse:
    """One entry of the key's decision log, with its request and answer."""
    key = await read(request, "decide")
    return answer(await decision_log.find(request.app.ctx.store, key["id"], decision_id))
