"""How the service answers and reads: Sanic's public response class and one request hook.

Every answer is a :class:`Response`, Sanic's ``HTTPResponse`` with a cheaper encoding of
its headers: :func:`answer` encodes a Struct of :mod:`decido_service.types` with the one
encoder (:data:`encode`), :func:`json_response` takes an already serialised body.
``X-Request-Id``, the ``X-RateLimit-*`` headers and the access log line are added by
:func:`decido_service.http.endpoint.finish`; Sanic writes the answer. HEAD is answered
wherever GET is (:class:`decido_service.http.routes.Routes`): Sanic writes the headers of
the GET answer, ``Content-Length`` included, and no body.

:class:`DecidoRequest` is the app's request class. It overrides
:meth:`~sanic.request.Request.receive_body`, which Sanic documents as the hook for custom
body handling, to give the whole body a deadline (``DECIDO_BODY_TIMEOUT``): a client that
sends a head and then trickles or stalls its body gets 408 ``request_timeout`` instead of
holding the connection.
"""

from __future__ import annotations

import asyncio
import sys
import weakref
from collections.abc import Iterator
from typing import Any

from sanic.exceptions import RequestTimeout
from sanic.helpers import has_message_body
from sanic.request import Request
from sanic.response import HTTPResponse

from decido_service.types import encode

__all__ = ["JSON", "BodyDeadlines", "DecidoRequest", "Response", "answer", "encode",
           "json_response"]

JSON = "application/json"


class Response(HTTPResponse):
    """Sanic's ``HTTPResponse`` whose :attr:`processed_headers` (the public property Sanic
    encodes the response head from) skips Sanic's sanitiser when there is nothing to strip.

    Sanic removes CR, LF and NUL from every header name and value with ``str.translate``
    and a dictionary table, which looks each character up in the table and raises and
    clears a ``KeyError`` for each one that is not there. Building, encoding and formatting
    the seven headers of an answer took 150,000 instructions that way and takes 69,000 here
    (callgrind, ``HTTPResponse`` against this class). A name or value that is printable
    ASCII has nothing to strip, so it is encoded as it is, to the bytes Sanic's encoding
    gives; an answer with any other header is encoded by Sanic whole
    (``tests/service/test_responses.py`` compares both)."""

    __slots__ = ()

    @property
    def processed_headers(self) -> Iterator[tuple[bytes, bytes]]:
        """The headers as ``(name, value)`` bytes, ``content-type`` added as Sanic adds it."""
        if has_message_body(self.status):  # type: ignore[no-untyped-call]
            self.headers.setdefault("content-type", self.content_type)
        out = []
        for name, value in self.headers.items():
            text = f"{value}"
            if not (name.isascii() and name.isprintable() and text.isascii()
                    and text.isprintable()):
                return super().processed_headers
            out.append((name.encode(), text.encode()))
        return iter(out)


def answer(value: object, status: int = 200, headers: dict[str, str] | None = None, *,
           content_type: str = JSON) -> Response:
    """A :class:`Response` with ``value`` encoded (:data:`encode`)."""
    return Response(encode(value), status=status, headers=headers, content_type=content_type)


def json_response(body: bytes, status: int = 200, headers: dict[str, str] | None = None,
                  content_type: str = JSON) -> Response:
    """A :class:`Response` with an already serialised body."""
    return Response(body, status=status, headers=headers, content_type=content_type)


class BodyDeadlines:
    """The requests of one worker that are waiting for their body, and their deadlines.

    A sweep every :data:`TICK` seconds (scheduled only while some request is waiting)
    cancels the task of each request past its deadline; that request's
    :meth:`DecidoRequest.receive_body` turns the cancellation into a 408. A timer per request
    (``asyncio.timeout``) cost 31,000 instructions per decision request (callgrind: 535k
    against 504k without a deadline); this bookkeeping costs 9,000 (513k)."""

    TICK = 0.25

    def __init__(self) -> None:
        self.waiting: dict[asyncio.Task[Any], float] = {}
        #: cancelled for their deadline, not yet turned into a 408 (weak: a task that ends
        #: otherwise, say its connection was lost, is not kept)
        self.expired: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
        self._sweep: asyncio.TimerHandle | None = None

    def add(self, task: asyncio.Task[Any], seconds: float) -> None:
        """``task`` waits for a body until ``seconds`` from now."""
        loop = task.get_loop()
        self.waiting[task] = loop.time() + seconds
        if self._sweep is None:
            self._sweep = loop.call_later(self.TICK, self.sweep, loop)

    def sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        """Cancel the tasks past their deadline; sweep again while any is waiting."""
        now = loop.time()
        for task, deadline in list(self.waiting.items()):
            if deadline <= now:
                del self.waiting[task]
                self.expired.add(task)
                task.cancel()
        self._sweep = loop.call_later(self.TICK, self.sweep, loop) if self.waiting else None


class DecidoRequest(Request):
    """Sanic's request whose body must arrive whole within the app's body timeout
    (``app.ctx.settings.body_timeout`` seconds from when the handler asks for it)."""

    __slots__ = ()

    async def receive_body(self) -> None:
        """Receive ``request.body`` (if not already received) within the body timeout;
        :class:`~sanic.exceptions.RequestTimeout` (408) when it has not arrived by then."""
        if self.body:
            return
        ctx = self.app.ctx
        deadlines: BodyDeadlines = ctx.body_deadlines
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - Sanic always reads a body in a task
            await super().receive_body()  # type: ignore[no-untyped-call]
            return
        deadlines.add(task, ctx.settings.body_timeout)
        try:
            # Sanic's documented streaming read (``request.stream.read()`` until ``None``):
            # a plain loop, cheaper than the async generator Sanic's own method joins
            stream: Any = self.stream  # Sanic types it as its abstract Stream
            chunks = []
            while (chunk := await stream.read()) is not None:
                chunks.append(chunk)
            self.body = b"".join(chunks)
        except asyncio.CancelledError:
            if task not in deadlines.expired:
                raise  # the connection went away, or Sanic's own timeout
            deadlines.expired.discard(task)
            if sys.version_info >= (3, 11):
                task.uncancel()
            raise RequestTimeout(
                f"the body did not arrive within {ctx.settings.body_timeout} s") from None
        finally:
            deadlines.waiting.pop(task, None)
