"""What every response gets: ``X-Request-Id``, the ``X-RateLimit-*`` headers, an access log line.

The request id echoes a sane incoming ``X-Request-Id`` (1-128 characters of
``[A-Za-z0-9._-]``), else is a new uuid4 hex. Access logs are one JSON object per line on
stderr, written by a background thread: method, path, status, ms, request_id, key_id — never
a secret, a header value or a body.
"""

from __future__ import annotations

import queue
import random
import re
import sys
import threading
import time
import uuid
from typing import Any

import orjson
from sanic import Request, Sanic
from sanic.response import HTTPResponse

from decido_service.auth import rate_state
from decido_service.store import StoreError

__all__ = ["register", "request_id"]

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


async def on_response(request: Request, response: HTTPResponse) -> None:
    """Add ``X-Request-Id`` and ``X-RateLimit-*``; write the access log line."""
    response.headers["X-Request-Id"] = request_id(request)
    try:
        response.headers.update(await rate_state(request))
    except StoreError:
        pass  # the response itself says what went wrong; headers are best effort here
    started = getattr(request.ctx, "started", None)
    key = getattr(request.ctx, "key", None)
    _LINES.put(orjson.dumps({
        "method": request.method,
        "path": request.path,
        "status": response.status,
        "ms": None if started is None else round((time.perf_counter() - started) * 1e3, 3),
        "request_id": request.ctx.request_id,
        "key_id": key["id"] if key else None,
    }))


_LINES: queue.SimpleQueue[bytes] = queue.SimpleQueue()


def _write_lines(out: Any) -> None:
    """The access log writer thread: one JSON object per line, whatever is queued at once."""
    while True:
        lines = [_LINES.get()]
        while not _LINES.empty() and len(lines) < 1024:
            lines.append(_LINES.get_nowait())
        try:
            out.write(b"\n".join(lines) + b"\n")
            out.flush()
        except (OSError, ValueError):
            return  # stderr closed: the process is going away


def configure_access_log() -> None:
    """Start the writer thread (once per process): the event loop only enqueues bytes."""
    global _WRITER
    if _WRITER is None:
        _WRITER = threading.Thread(target=_write_lines, args=(sys.stderr.buffer,),
                                   name="decido-access-log", daemon=True)
        _WRITER.start()


_WRITER: threading.Thread | None = None


def register(app: Sanic) -> None:
    """Attach the request and response middleware to ``app``."""
    configure_access_log()
    app.register_middleware(on_request, "request")
    app.register_middleware(on_response, "response")
