"""A run's Server-Sent Events written to the client (``GET /v1/runs/{id}/events`` and the
dashboard's): what is sent and when is :mod:`decido_service.runs.events`, how it is sent
:func:`decido_service.http.sse.send_chunks`."""

from __future__ import annotations

import contextlib

from decido_service import limits
from decido_service.http.context import ApiRequest
from decido_service.http.params import headers
from decido_service.http.sse import send_chunks
from decido_service.runs.api import find
from decido_service.runs.events import Snapshot, check_resumable, chunks, cursor_of
from decido_service.store import KeyRecord
from decido_service.types import EventsHeaders

__all__ = ["send_events"]


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
    watching = ctx.run_feeds.watch(ctx.store, key["id"], run_id, row, cap)
    del row  # the feed has what it needs (a watcher holds no copy of the run)
    async with watching as feed:
        with ctx.streams.hold(key["id"]) as ticket:  # the worker's cap; ends if revoked
            ticket.on_end(feed.wake)
            events = chunks(feed, cursor, heartbeat=ctx.settings.sse_heartbeat,
                            stop=lambda: ticket.ended is not None)
            async with contextlib.aclosing(events) as sent:
                await send_chunks(request, sent, ended=ticket)
