"""Connection hygiene: read timeouts and a cap of concurrent connections per client address.

:func:`register` sets Sanic's timeouts from the settings and the head buffer of
:mod:`decido_service.http.heads`:

- ``REQUEST_TIMEOUT`` = ``DECIDO_HEADER_TIMEOUT``: while a request head is being read, a
  connection that sends nothing for this many seconds is answered 408 and closed (Sanic
  measures from the last byte received);
- ``KEEP_ALIVE_TIMEOUT`` = ``DECIDO_KEEP_ALIVE_TIMEOUT``: an open connection that has not
  begun a request (a new one, or between two requests) is closed after this many seconds;
- the body has a deadline of its own (``DECIDO_BODY_TIMEOUT``,
  :class:`decido_service.http.responses.DecidoRequest`, swept by ``app.ctx.body_deadlines``);
- ``RESPONSE_TIMEOUT`` = :data:`HANDLER_TIMEOUT`: Sanic cancels a handler that has neither
  received nor sent a byte for this long. Its default (60 s) cut off non-streamed
  optimization runs whose time limit is longer (the tiers allow up to 600 s); a streamed run
  sends a progress event every 0.25 s and is never idle that long.

:class:`ConnectionCap` counts each worker's open connections per client address through
Sanic's ``http.lifecycle.begin`` and ``http.lifecycle.complete`` signals (once per
connection, nothing per request). A connection beyond ``DECIDO_CONNECTIONS_PER_ADDRESS``
from one address is closed at once, before anything is read from it. The cap is per worker
process (the kernel spreads connections over the workers); 0 turns it off, which is what a
service behind a reverse proxy wants unless it believes the proxy's ``X-Forwarded-For``,
since every connection then comes from the proxy's address.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sanic import Sanic
from sanic.models.server_types import ConnInfo

from decido_service.config import Settings
from decido_service.http.heads import HEAD_BUFFER
from decido_service.http.responses import BodyDeadlines

__all__ = ["HANDLER_TIMEOUT", "ConnectionCap", "register"]

#: seconds a handler may go without receiving or sending a byte (a safety net: every run
#: has its own time limit)
HANDLER_TIMEOUT = 3600


class ConnectionCap:
    """Open connections of one worker per client address, at most ``limit`` each."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open: dict[str, int] = {}

    async def begin(self, conn_info: ConnInfo) -> None:
        """``http.lifecycle.begin``: count the connection, or close it when its address
        already has ``limit`` open (raising ``CancelledError`` ends Sanic's connection task
        quietly, which closes the transport, as its own timeouts do)."""
        address = conn_info.client_ip
        count = self.open.get(address, 0)
        if count >= self.limit:
            conn_info.ctx.refused = True
            raise asyncio.CancelledError
        self.open[address] = count + 1

    async def complete(self, conn_info: ConnInfo) -> None:
        """``http.lifecycle.complete``: the connection is closed; uncount it."""
        if getattr(conn_info.ctx, "refused", False):
            return
        address = conn_info.client_ip
        count = self.open.get(address, 0) - 1
        if count > 0:
            self.open[address] = count
        else:
            self.open.pop(address, None)


def register(app: Sanic[Any, Any], settings: Settings) -> None:
    """Set ``app``'s timeouts and head buffer; install the per-address cap (if not 0)."""
    app.config.REQUEST_MAX_HEADER_SIZE = HEAD_BUFFER
    app.config.REQUEST_TIMEOUT = settings.header_timeout
    app.config.KEEP_ALIVE_TIMEOUT = settings.keep_alive_timeout
    app.config.RESPONSE_TIMEOUT = HANDLER_TIMEOUT
    app.ctx.body_deadlines = BodyDeadlines()
    if settings.connections_per_address:
        cap = ConnectionCap(settings.connections_per_address)
        app.ctx.connection_cap = cap
        app.add_signal(cap.begin, "http.lifecycle.begin")
        app.add_signal(cap.complete, "http.lifecycle.complete")
