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

:class:`ConnectionCap` counts each worker's open connections per client address, in
:class:`CappedProtocol`, the HTTP protocol ``decido serve`` gives Sanic (its ``protocol``
argument): once per connection, when it is made and when it is lost, nothing per request.
A connection beyond ``DECIDO_CONNECTIONS_PER_ADDRESS`` from one address is answered at
once with :data:`REFUSAL` (a minimal ``503`` with ``Retry-After`` and ``Connection:
close``, the same bytes every time, written before anything is read), so a client behind
a shared address sees "try again" rather than a network failure. What it sends is
discarded; the connection is closed when the client closes its side (asyncio's default)
or after :data:`REFUSAL_LINGER` seconds (closing while its request is unread would reset
the connection, and the reset can destroy the answer before the client reads it).

The cap is per worker process (the kernel spreads connections over the workers); 0 turns
it off, which is what a service behind a reverse proxy wants unless it believes the
proxy's ``X-Forwarded-For``, since every connection then comes from the proxy's address.
An app run by Sanic's own CLI has Sanic's protocol and so no cap.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from sanic import Sanic
from sanic.server.protocols.http_protocol import HttpProtocol

from decido_service.config import Settings
from decido_service.http.heads import HEAD_BUFFER
from decido_service.http.responses import BodyDeadlines

__all__ = ["HANDLER_TIMEOUT", "REFUSAL", "REFUSAL_LINGER", "CappedProtocol", "ConnectionCap",
           "register"]

#: seconds a handler may go without receiving or sending a byte (a safety net: every run
#: has its own time limit)
HANDLER_TIMEOUT = 3600


#: the whole answer to a connection over the cap (no body to build, nothing per request)
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
           b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 54\r\n\r\n"
           b"too many connections from this address; retry shortly\n")
#: seconds a refused connection is kept open, at most, for the client to read the answer
REFUSAL_LINGER = 1.0


class ConnectionCap:
    """Open connections of one worker per client address, at most ``limit`` each."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open: dict[str, int] = {}

    def admit(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) when it already
        has ``limit`` open."""
        count = self.open.get(address, 0)
        if count >= self.limit:
            return False
        self.open[address] = count + 1
        return True

    def release(self, address: str) -> None:
        """A counted connection from ``address`` is closed; uncount it."""
        count = self.open.get(address, 0) - 1
        if count > 0:
            self.open[address] = count
        else:
            self.open.pop(address, None)


class CappedProtocol(HttpProtocol):
    """Sanic's HTTP protocol with the per-address cap of ``app.ctx.connection_cap`` (when
    the app has one): a connection over it gets :data:`REFUSAL` and never reaches Sanic's
    HTTP handling."""

    __slots__ = ("_address", "_refused")  # Sanic's protocol has slots

    def connection_made(self, transport: Any) -> None:
        self._address: str | None = None  # counted against this address
        self._refused = False
        cap: ConnectionCap | None = getattr(self.app.ctx, "connection_cap", None)
        if cap is not None:
            peer = transport.get_extra_info("peername")
            address = str(peer[0]) if isinstance(peer, tuple) else ""
            if not cap.admit(address):
                self._refused = True
                transport.write(REFUSAL)
                transport.write_eof()
                asyncio.get_running_loop().call_later(REFUSAL_LINGER, transport.close)
                return
            self._address = address
        cast(Any, super()).connection_made(transport)  # Sanic's methods are untyped

    def data_received(self, data: bytes) -> None:
        if not self._refused:
            super().data_received(data)  # a refused connection's bytes are dropped

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        if self._address is not None:
            self.app.ctx.connection_cap.release(self._address)
            self._address = None
        cast(Any, super()).connection_lost(exc)


def register(app: Sanic[Any, Any], settings: Settings) -> None:
    """Set ``app``'s timeouts and head buffer; the per-address cap (if not 0) for
    :class:`CappedProtocol`."""
    app.config.REQUEST_MAX_HEADER_SIZE = HEAD_BUFFER
    app.config.REQUEST_TIMEOUT = settings.header_timeout
    app.config.KEEP_ALIVE_TIMEOUT = settings.keep_alive_timeout
    app.config.RESPONSE_TIMEOUT = HANDLER_TIMEOUT
    app.ctx.body_deadlines = BodyDeadlines()
    if settings.connections_per_address:
        app.ctx.connection_cap = ConnectionCap(settings.connections_per_address)
