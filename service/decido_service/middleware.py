"""What every response gets: ``X-Request-Id``, the ``X-RateLimit-*`` headers, an access log line.

The request id echoes a sane incoming ``X-Request-Id`` (1-128 characters of
``[A-Za-z0-9._-]``), else is a new uuid4 hex. Access logs are one JSON object per line on
stderr: method, path, status, ms, request_id, key_id — never a secret, a header value or a
body. The event loop collects the lines of each worker and writes them together at most
:data:`AccessLog.FLUSH_AFTER` seconds later (or at once past :data:`AccessLog.MAX_LINES`
lines, and when the worker stops), so a busy worker makes one ``write`` for many requests
and no thread competes with the loop for the GIL.
"""

from __future__ import annotations

import asyncio
import random
import re
import sys
import time
import uuid
from typing import BinaryIO

import orjson
from sanic import Request, Sanic
from sanic.response import HTTPResponse

from decido_service.auth import rate_headers
from decido_service.store import StoreError

__all__ = ["AccessLog", "register", "request_id"]

_SANE_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")


def _new_id() -> str:
    """A uuid4 hex from the process's PRNG: unique enough for correlating logs, and no
    system call on the event loop (``os.urandom`` releases the GIL, which a busy worker
    thread may then keep for a whole switch interval)."""
    return uuid.UUID(int=random.getrandbits(128), version=4).hex


def request_id(request: Request) -> str:
    """The request's id, made on first use (errors can come before any middleware ran)."""
    rid = getattr(request.ctx, "request_id", None)
    if rid is None:
        incoming = request.headers.get("x-request-id", "")
        rid = incoming if _SANE_ID.fullmatch(incoming) else _new_id()
        request.ctx.request_id = rid
    return rid


async def on_request(request: Request) -> None:
    """Start the clock and fix the request id."""
    request.ctx.started = time.perf_counter()
    request_id(request)


class AccessLog:
    """Buffered JSON lines of one worker, written by the event loop."""

    FLUSH_AFTER = 0.05
    MAX_LINES = 512

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self._lines: list[bytes] = []
        self._timer: asyncio.TimerHandle | None = None

    def add(self, line: bytes) -> None:
        """Queue one line (no newline); written within :data:`FLUSH_AFTER` seconds."""
        self._lines.append(line)
        if len(self._lines) >= self.MAX_LINES:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.FLUSH_AFTER, self.flush)

    def flush(self) -> None:
        """Write every queued line now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        lines, self._lines = self._lines, []
        if lines:
            try:
                self.out.write(b"\n".join(lines) + b"\n")
                self.out.flush()
            except (OSError, ValueError):
                pass  # stderr closed: the process is going away


async def on_response(request: Request, response: HTTPResponse) -> None:
    """Add ``X-Request-Id`` and ``X-RateLimit-*``; log the request."""
    headers = response.headers
    headers["X-Request-Id"] = request_id(request)
    try:
        headers.update(rate_headers(request))
    except StoreError:
        pass  # the response itself says what went wrong; headers are best effort here
    ctx = request.ctx
    started = getattr(ctx, "started", None)
    key = getattr(ctx, "key", None)
    request.app.ctx.access_log.add(orjson.dumps({
        "method": request.method,
        "path": request.path,
        "status": response.status,
        "ms": None if started is None else round((time.perf_counter() - started) * 1e3, 3),
        "request_id": ctx.request_id,
        "key_id": key["id"] if key else None,
    }))


async def _open_log(app: Sanic) -> None:
    app.ctx.access_log = AccessLog(sys.stderr.buffer)


async def _close_log(app: Sanic) -> None:
    log = getattr(app.ctx, "access_log", None)
    if log is not None:
        log.flush()


def register(app: Sanic) -> None:
    """Attach the request and response middleware (and the access log) to ``app``."""
    app.register_listener(_open_log, "before_server_start")
    app.register_listener(_close_log, "after_server_stop")
    app.register_middleware(on_request, "request")
    app.register_middleware(on_response, "response")
