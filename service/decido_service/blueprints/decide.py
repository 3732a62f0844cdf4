"""The decision surface: ``POST /v1/decide`` and ``POST /v1/batch``, passed to the library,
and the decision log (``GET /v1/decisions``, ``GET /v1/decisions/{id}``).

The JSON body goes to :func:`decido.decide` / :func:`decido.decide_batch` unchanged and the
answer comes back unchanged; how it is counted and logged: :mod:`decido_service.decisions.decide`.
"""

from __future__ import annotations

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

import decido
from decido_service import limits
from decido_service.admission import admit, authenticate, refusals
from decido_service.decisions import log as decision_log
from decido_service.decisions.decide import answer
from decido_service.http.endpoint import endpoint
from decido_service.http.problems import limit_error
from decido_service.http.responses import json_response, read_route
from decido_service.schemas import batch_size, json_body

__all__ = ["bp"]

bp = Blueprint("decide")


@bp.post("/decide")
@endpoint
async def decide(request: Request) -> HTTPResponse:
    """One decision: rank the options under the constraints."""
    key = await authenticate(request)
    async with refusals(request, key, "decide"):
        body = json_body(request)
        log = decision_log.wants_log(body, batch=False)
    return await answer(request, key, "decide", decido.decide, body, log=log)


@bp.post("/batch")
@endpoint
async def batch(request: Request) -> HTTPResponse:
    """Many decisions; each item succeeds or fails on its own."""
    key = await authenticate(request)
    async with refusals(request, key, "batch"):
        body = json_body(request)
        log = decision_log.wants_log(body, batch=True)
        size = batch_size(body)
        violation = limits.check_batch(key, size, settings=request.app.ctx.settings)
        if violation is not None:
            raise limit_error(violation)
    return await answer(request, key, "batch", decido.decide_batch, body, log=log,
                        amount=size)


@read_route(bp, "/decisions")
@endpoint
async def decisions(request: Request) -> HTTPResponse:
    """The key's decision log, newest first, a page at a time."""
    key = await authenticate(request)
    async with refusals(request, key, "decide"):
        limit, cursor = decision_log.page_params(request)
    await admit(request, key, "decide", amount=0)
    data, more = await decision_log.page(request.app.ctx.store, key["id"], limit, cursor)
    return json_response(orjson.dumps({"data": data, "has_more": more}))


@read_route(bp, "/decisions/<decision_id:str>")
@endpoint
async def decision(request: Request, decision_id: str) -> HTTPResponse:
    """One entry of the key's decision log, with its request and answer."""
    key = await authenticate(request)
    await admit(request, key, "decide", amount=0)
    found = await decision_log.find(request.app.ctx.store, key["id"], decision_id)
    return json_response(orjson.dumps({
        "id": found["id"], "created_at": found["created_at"], **found["summary"],
        "request": found["request"], "answer": found["answer"]}))
