"""Sending a capability's Server-Sent Events over HTTP: the answer's head, each chunk
sent once the transport drained (:func:`send_within`), a watcher that does not read
dropped.

:func:`send_study_events` answers ``GET /v1/studies/{id}/events`` and the dashboard's
study stream (the event source: :mod:`decido_service.studies.events`);
:func:`decido_service.http.events.send_events` a run's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

from decido_service import limits
from decido_service.errors import ServiceError
from decido_service.http.context import ApiRequest
from decido_service.http.endpoint import response_headers, streamed
from decido_service.http.params import headers
from decido_service.http.problems import as_api_error, problem_body
from decido_service.store import KeyRecord
from decido_service.streams import Ticket
from decido_service.studies import events as study_events
from decido_service.types import Problem, encode
from decido_service.types.studies import StudyEventsHeaders

__all__ = ["DRAIN_TIMEOUT", "SEND_SLICE", "ended_event", "send_chunks", "send_study_events",
           "send_within"]

#: seconds a watcher's transport may stay full (Sanic's write buffer of 64 KiB and the
#: socket's): then the stream is dropped (closed), and the client may resume with
#: ``Last-Event-ID``
DRAIN_TIMEOUT = 10.0
#: bytes of an event written at a time: a large run document (its request can be about
#: 1 MB) goes out in slices, each once the transport has drained
SEND_SLICE = 16 * 1024


def ended_event(request: ApiRequest, problem: Exception) -> bytes:
    """The ``error`` event (no id: not one of the run's or the study's) that ends a stream
    for ``problem`` (a revoked key's: :class:`decido_service.streams.Ticket`), its data the
    problem document of ``request``."""
    body = problem_body(request, as_api_error(problem), Problem)
    return b"event: error\ndata: %s\n\n" % encode(body)


async def send_within(send: Callable[[bytes], Awaitable[Any]], data: bytes, seconds: float,
                      transport: asyncio.WriteTransport | None = None) -> bool:
    """Send ``data`` in slices of :data:`SEND_SLICE` bytes, each once the transport has
    drained (a watcher's transport holds a slice and Sanic's buffer, never a whole large
    event); False when a slice waited more than ``seconds``. A slice sent while
    ``transport`` holds nothing cannot wait (the transport is not paused), so it goes
    without the timeout's task and timer: the common case of a watcher that reads, and
    most of the cost of fanning an event out to many watchers."""
    for start in range(0, len(data), SEND_SLICE):
        chunk = data[start:start + SEND_SLICE]
        if transport is not None and not transport.get_write_buffer_size():
            await send(chunk)
            continue
        try:
            await asyncio.wait_for(send(chunk), seconds)
        except asyncio.TimeoutError:
            return False
    return True


async def send_chunks(request: ApiRequest, chunks: AsyncIterator[bytes], *,
                      drain: float = DRAIN_TIMEOUT, ended: Ticket | None = None) -> None:
    """Answer 200 ``text/event-stream`` and send ``chunks`` until they end (then the
    response ends, after an ``error`` event when ``ended`` was ended: the key was
    revoked) or the watcher does not take one within ``drain`` seconds (then its
    connection is dropped: it may resume with ``Last-Event-ID``). A slice sent while the
    transport holds nothing goes without a timer (:func:`send_within`)."""
    response = await request.respond(
        status=200, content_type="text/event-stream",
        headers={**response_headers(request), "Cache-Control": "no-store",
                 "X-Accel-Buffering": "no"})
    streamed(request, 200)
    transport = cast(asyncio.WriteTransport | None, request.transport)
    async for chunk in chunks:
        if not await send_within(response.send, chunk, drain, transport):
            if request.transport is not None:  # dropped, not closed: it holds data
                cast(asyncio.Transport, request.transport).abort()
            return
    if ended is not None and ended.ended is not None:
        await response.send(ended_event(request, ended.ended))
    await response.eof()


async def send_study_events(request: ApiRequest, key: KeyRecord, study_id: str) -> None:
    """Answer with the event stream of ``key``'s study, resumed after ``Last-Event-ID``
    (``GET /v1/studies/{id}/events``, and the dashboard's, which has the key from its
    session); its refusals (404, 400, 429) are raised before anything is sent."""
    ctx = request.app.ctx
    last = headers(request, StudyEventsHeaders).last_event_id
    cap = limits.tier_limits(key, settings=ctx.settings)["max_streams"]
    try:
        with ctx.streams.hold(key["id"]) as ticket:  # the worker's cap; ends if revoked
            watching = study_events.watch(ctx.store, ctx.study_feeds, key["id"], study_id,
                                          last, cap, heartbeat=ctx.settings.sse_heartbeat)
            async with watching as watcher:
                ticket.on_end(watcher.feed.wake)
                events = watcher.chunks(lambda: ticket.ended is not None)
                async with contextlib.aclosing(events) as chunks:
                    await send_chunks(request, chunks, ended=ticket)
    except ServiceError as exc:  # an ApiError: charged to the refused budget by the caller
        raise as_api_error(exc) from None
