"""How the service answers and reads: Sanic's public response class and one request hook.

Every answer is a :class:`sanic.response.HTTPResponse`; :func:`json_response` makes one
from an already serialised body. ``X-Request-Id``, the ``X-RateLimit-*`` headers and the
access log line are added by :func:`decido_service.middleware.finish`. HEAD is answered
wherever GET is (:func:`read_route`): Sanic writes the headers of the GET answer,
``Content-Length`` included, and no body.

:class:`DecidoRequest` is the app's request class. It overrides
:meth:`~sanic.request.Request.receive_body`, which Sanic documents as the hook for custom
body handling, to give the whole body a deadline (``DECIDO_BODY_TIMEOUT``): a client that
sends a head and then trickles or stalls its body gets 408 ``request_timeout`` instead of
holding the connection.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from sanic import Blueprint
from sanic.exceptions import RequestTimeout
from sanic.request import Request
from sanic.response import HTTPResponse

__all__ = ["JSON", "READ", "DecidoRequest", "json_response", "read_route"]

JSON = "application/json"
#: the methods of a read-only route: GET and, with the same status and headers, HEAD
READ = ("GET", "HEAD")
Handler = TypeVar("Handler", bound=Callable[..., Awaitable[Any]])


def json_response(body: bytes, status: int = 200, headers: dict[str, str] | None = None,
                  content_type: str = JSON) -> HTTPResponse:
    """An ``HTTPResponse`` with an already serialised body."""
    return HTTPResponse(body, status=status, headers=headers, content_type=content_type)


def read_route(bp: Blueprint, uri: str) -> Callable[[Handler], Handler]:
    """``@read_route(bp, "/health")``: route GET and HEAD of ``uri`` to the handler (Sanic's
    ``Blueprint.route`` with :data:`READ`, typed)."""
    return cast(Callable[[Handler], Handler], bp.route(uri, methods=READ))


class DecidoRequest(Request):
    """Sanic's request whose body must arrive whole within the app's body timeout
    (``app.ctx.settings.body_timeout`` seconds from when the handler asks for it)."""

    __slots__ = ()

    async def receive_body(self) -> None:
        """Receive ``request.body`` (if not already received) within the body timeout;
        :class:`~sanic.exceptions.RequestTimeout` (408) when it has not arrived by then."""
        if self.body:
            return
        limit = self.app.ctx.settings.body_timeout
        try:
            if sys.version_info >= (3, 11):
                async with asyncio.timeout(limit):
                    await super().receive_body()  # type: ignore[no-untyped-call]
            else:  # pragma: no cover - Python 3.10
                await asyncio.wait_for(super().receive_body(), limit)  # type: ignore[no-untyped-call]
        except asyncio.TimeoutError:  # TimeoutError itself from Python 3.11
            raise RequestTimeout(f"the body did not arrive within {limit} s") from None
