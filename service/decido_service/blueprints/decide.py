"""The decision surface: ``POST /v1/decide`` and ``POST /v1/batch``, passed to the library.

The JSON body goes to :func:`decido.decide` / :func:`decido.decide_batch` unchanged and the
answer comes back unchanged; a ``DecisionError`` is a 422 naming the field. A decision is
counted on the month when it is computed, ok or error (k for a batch of k items).

A small request (a body of at most ``listeners.INLINE_BYTES`` bytes) is decided on the event loop
right after it is counted: it takes tens of microseconds, less than handing it to a thread.
Larger ones run in the worker's decision threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

import decido
from decido_service import limits
from decido_service.admission import admit, authenticate, refusals
from decido_service.errors import limit_error
from decido_service.listeners import by_size
from decido_service.middleware import endpoint
from decido_service.responses import json_response
from decido_service.schemas import batch_size, json_body

__all__ = ["bp"]

bp = Blueprint("decide")


async def _run(request: Request, fn: Callable[[Any], dict[str, Any]], body: Any) -> HTTPResponse:
    """``fn(body)``, on the event loop for a small body (:func:`listeners.by_size`)."""
    return json_response(orjson.dumps(await by_size(request, fn, body)))


@bp.post("/decide")
@endpoint
async def decide(request: Request) -> HTTPResponse:
    """One decision: rank the options under the constraints."""
    key = await authenticate(request)
    async with refusals(request, key, "decide"):
        body = json_body(request)
    await admit(request, key, "decide")
    return await _run(request, decido.decide, body)


@bp.post("/batch")
@endpoint
async def batch(request: Request) -> HTTPResponse:
    """Many decisions; each item succeeds or fails on its own."""
    key = await authenticate(request)
    async with refusals(request, key, "batch"):
        body = json_body(request)
        size = batch_size(body)
        violation = limits.check_batch(key, size, settings=request.app.ctx.settings)
        if violation is not None:
            raise limit_error(violation)
    await admit(request, key, "batch", amount=size)
    return await _run(request, decido.decide_batch, body)
