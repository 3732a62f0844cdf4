"""The decision surface: ``POST /v1/decide`` and ``POST /v1/batch``, passed to the library.

The JSON body goes to :func:`decido.decide` / :func:`decido.decide_batch` unchanged and the
answer comes back unchanged; a ``DecisionError`` is a 422 naming the field. A decision is
counted on the month when it is computed, ok or error (k for a batch of k items).

A small request (a body of at most :data:`INLINE_BYTES` bytes) is decided on the event loop
right after it is counted: it takes tens of microseconds, less than handing it to a thread.
Larger ones run in the worker's decision threads.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import orjson
from sanic import Blueprint, Request
from sanic.response import HTTPResponse

import decido
from decido_service import limits
from decido_service.auth import admit, authenticate
from decido_service.errors import limit_error
from decido_service.middleware import endpoint
from decido_service.responses import json_response
from decido_service.schemas import batch_size, json_body

__all__ = ["bp"]

bp = Blueprint("decide")
#: bodies up to this size are decided on the event loop (the size bounds the work: at most
#: a few dozen options or a short expression), larger ones in a thread
INLINE_BYTES = 4096


def _pool(request: Request) -> ThreadPoolExecutor | None:
    """Where to decide: ``None`` (on the loop) for a small body, else the thread pool."""
    return None if len(request.body) <= INLINE_BYTES else request.app.ctx.decide_pool


@bp.post("/decide")
@endpoint
async def decide(request: Request) -> HTTPResponse:
    """One decision: rank the options under the constraints."""
    key = authenticate(request, "decide")
    body = json_body(request)
    ctx = request.app.ctx
    specs = limits.specs_for("decide", key, settings=ctx.settings)
    result = await admit(request, specs, decido.decide, body, pool=_pool(request))
    return json_response(orjson.dumps(result))


@bp.post("/batch")
@endpoint
async def batch(request: Request) -> HTTPResponse:
    """Many decisions; each item succeeds or fails on its own."""
    key = authenticate(request, "batch")
    body = json_body(request)
    ctx, size = request.app.ctx, batch_size(body)
    violation = limits.check_batch(key, size, settings=ctx.settings)
    if violation is not None:
        raise limit_error(violation)
    specs = limits.specs_for("batch", key, amount=size, settings=ctx.settings)
    result = await admit(request, specs, decido.decide_batch, body, pool=_pool(request))
    return json_response(orjson.dumps(result))
