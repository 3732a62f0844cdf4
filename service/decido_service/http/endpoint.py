"""What every response gets: ``X-Request-Id``, the ``X-RateLimit-*`` headers, an access log line.

Route handlers are wrapped by :func:`endpoint` (the clock starts, the request head's limits
are checked, any exception becomes problem+json, then :func:`finish`); what fails before a
handler runs (404, 405, 408, 413, 414, 431, a malformed request) goes through
:func:`error_response`, Sanic's error handler, which also calls :func:`finish`. Both are
plain calls rather than Sanic request/response middleware, which cost more than a whole
health check. The headers go on Sanic's own ``HTTPResponse`` (public API only).

The request id echoes a sane incoming ``X-Request-Id`` (1-128 characters of
``[A-Za-z0-9._-]``), else is 32 hex digits: a random per-process prefix and a counter,
unique across workers and restarts. Access logs are one JSON object per line on stderr:
time (UTC, ISO 8601 with milliseconds), method, path, status, ms, request_id, key_id —
never a secret, a header value or a body.
The event loop collects the lines of each worker and writes them together at most
:data:`AccessLog.FLUSH_AFTER` seconds later (or at once past :data:`AccessLog.MAX_LINES`
lines, and when the worker stops), so a busy worker makes one ``write`` for many requests
and no thread competes with the loop for the GIL.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sanic import Sanic
from sanic.response import HTTPResponse

from decido_service import limits
from decido_service.http.access_log import AccessLog, access_line
from decido_service.http.context import ApiRequest
from decido_service.http.heads import head_error, overflow_error
from decido_service.http.problems import problem_handler

__all__ = [
    "AccessLog",
    "access_line",
    "endpoint",
    "error_response",
    "finish",
    "log_request",
    "rate_headers",
    "register",
    "request_id",
    "response_headers",
    "streamed",
]

_SANE_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
Handler = Callable[..., Awaitable[HTTPResponse | None]]


class _IdSource:
    """Request ids of this process: a random 64-bit prefix and a counter (re-seeded in a
    forked child, so two processes never share a prefix)."""

    def __init__(self) -> None:
        self.reseed()
        os.register_at_fork(after_in_child=self.reseed)

    def reseed(self) -> None:
        self._prefix = secrets.token_hex(8)
        self._counter = itertools.count()

    def new(self) -> str:
        return f"{self._prefix}{next(self._counter):016x}"


_IDS = _IdSource()


def request_id(request: ApiRequest, ctx: Any = None) -> str:
    """The request's id, made on first use. ``ctx`` is ``request.ctx`` when the caller
    already has it (Sanic's ``ctx`` is a Python property: each read is a call)."""
    if ctx is None:
        ctx = request.ctx
    rid = getattr(ctx, "request_id", None)
    if rid is None:
        incoming = request.headers.get("x-request-id")
        rid = incoming if incoming and _SANE_ID.fullmatch(incoming) else _IDS.new()
        ctx.request_id = rid
    return rid


def endpoint(handler: Handler) -> Handler:
    """Wrap a route handler: start the clock, answer any exception with problem+json,
    then :func:`finish` the response. A handler that streamed its answer itself (see
    :func:`streamed`) returns ``None`` and is only logged."""

    @functools.wraps(handler)
    async def wrapped(request: ApiRequest, *args: Any, **kwargs: Any) -> HTTPResponse | None:
        request.ctx.started = time.perf_counter()
        try:
            error = head_error(request)
            if error is not None:
                raise error
            response = await handler(request, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every error is answered as problem+json
            status = getattr(request.ctx, "streamed_status", None)
            if status is not None:  # headers are out: nothing else can be answered
                log_request(request, status)
                raise
            request_id(request)
            response = problem_handler(request, exc)
        if response is None:
            log_request(request, request.ctx.streamed_status)
            return None
        return finish(request, response)

    return wrapped


def error_response(request: ApiRequest, exc: Exception) -> HTTPResponse:
    """Sanic's error handler: problem+json for what failed outside a handler, finished. An
    over-long request target or header block is named first (414, 431: it may be why a
    route was not found), also when the head overflowed Sanic's buffer."""
    request_id(request)
    return finish(request, problem_handler(
        request, head_error(request) or overflow_error(request, exc) or exc))


def response_headers(request: ApiRequest, ctx: Any = None) -> dict[str, str]:
    """``X-Request-Id`` and the ``X-RateLimit-*`` headers every answer carries. ``ctx`` as
    for :func:`request_id`."""
    return {"X-Request-Id": request_id(request, ctx), **rate_headers(request)}


def rate_headers(request: ApiRequest) -> dict[str, str]:
    """The ``X-RateLimit-*`` headers: from the counter states of the request's store call
    (none for a request that made no store call, e.g. one without a valid key)."""
    state = getattr(request.ctx, "rate", None)
    return {} if state is None else limits.headers_for(state)


def streamed(request: ApiRequest, status: int) -> None:
    """Note that the handler sent its own (streamed) response with ``status``."""
    request.ctx.streamed_status = status


def finish(request: ApiRequest, response: HTTPResponse) -> HTTPResponse:
    """Add ``X-Request-Id`` and ``X-RateLimit-*`` to ``response`` and log the request."""
    ctx = request.ctx
    response.headers.update(response_headers(request, ctx))
    log_request(request, response.status, ctx)
    return response


def log_request(request: ApiRequest, status: int, ctx: Any = None) -> None:
    """Queue the request's access log line. ``ctx`` as for :func:`request_id`."""
    if ctx is None:
        ctx = request.ctx
    started = getattr(ctx, "started", None)
    key = getattr(ctx, "key", None)
    seconds = None if started is None else time.perf_counter() - started
    request.app.ctx.access_log.add(access_line(
        request.method, request.path, status, None if seconds is None else seconds * 1e3,
        request_id(request, ctx), key["id"] if key else None))
    metrics = request.app.ctx.metrics
    if metrics is not None:
        metrics.observe(request, status, seconds)


async def _open_log(app: Sanic[Any, Any]) -> None:
    app.ctx.access_log = AccessLog(sys.stderr.buffer)


async def _close_log(app: Sanic[Any, Any]) -> None:
    log = getattr(app.ctx, "access_log", None)
    if log is not None:
        log.flush()


def register(app: Sanic[Any, Any]) -> None:
    """Attach the access log and the error handler to ``app`` (handlers use
    :func:`endpoint` themselves)."""
    app.register_listener(_open_log, "before_server_start")
    app.register_listener(_close_log, "after_server_stop")
    app.error_handler.add(Exception, error_response)
