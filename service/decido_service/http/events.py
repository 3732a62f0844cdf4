"""A run's Server-Sent Events written to the client (``GET /v1/runs/{id}/events`` and the
dashboard's): what is sent and when is :mod:`decido_service.runs.events`."""

from __future__ import annotations

import asyncio
from typing import cast

from decido_service import limits
from decido_service.http.context import ApiRequest
from decido_service.http.endpoint import response_headers, streamed
from decido_service.http.params import headers
from decido_service.http.problems import as_api_error, problem_body
from decido_service.runs.api import find
from decido_service.runs.events import Snapshot, check_resumable, cursor_of, stream
from decido_service.store import KeyRecord
from decido_service.types import EventsHeaders, Problem, encode

__all__ = ["ended_event", "send_events"]


def ended_event(request: ApiRequest, problem: Exception) -> bytes:
    """The ``error`` event (no id: not one of the run's or the study's) that ends a stream
    for ``problem`` (a revoked key's: :class:`decido_service.streams.Ticket`), its data the
    problem document of ``request``."""
    body = problem_body(request, as_api_error(problem), Problem)
    return b"event: error\ndata: %s\n\n" % encode(body)


async def send_events(request: ApiRequest, key: KeyRecord, run_id: str) -> None:
    """Answer with the event stream of ``key``'s run, resumed after ``Last-Event-ID``
    (``GET /v1/runs/{id}/events``, and the dashboard's, which has the key from its
    session); 400 ``invalid_parameter`` for an id this stream never sent."""
    text = headers(request, EventsHeaders).last_event_id
    cursor = cursor_of(text)
    ctx = request.app.ctx
    row = await find(ctx.store, key["id"], run_id)
    if cursor != (0, -1):  # judged on the row just read: the newest this worker knows
        check_resumable(Snapshot(row), cursor, text)
    cap = limits.tier_limits(key, settings=ctx.settings)["max_streams"]
    watching = ctx.run_feeds.watch(ctx.store, key["id"], row, cap)
    del row  # the feed has what it needs (a watcher holds no copy of the run)
    async with watching as feed:
        with ctx.streams.hold(key["id"]) as ticket:  # the worker's cap; ends if revoked
            ticket.on_end(feed.wake)
            response = await request.respond(
                status=200, content_type="text/event-stream",
                headers={**response_headers(request), "Cache-Control": "no-store",
                         "X-Accel-Buffering": "no"})
            streamed(request, 200)
            if await stream(feed, cursor, response.send,
                            heartbeat=ctx.settings.sse_heartbeat, ended=ticket,
                            transport=cast(asyncio.WriteTransport | None, request.transport)):
                if ticket.ended is not None:  # the key was revoked: a last error event
                    await response.send(ended_event(request, ticket.ended))
                await response.eof()
            elif request.transport is not None:  # a watcher that does not read: dropped
                cast(asyncio.Transport, request.transport).abort()  # (it holds data)
