"""The access log: one JSON line per request, buffered per worker
(:func:`decido_service.http.endpoint.log_request` writes to it)."""

from __future__ import annotations

import asyncio
import time
from typing import BinaryIO

import orjson

__all__ = ["AccessLog", "access_line"]


class _UtcClock:
    """``2026-11-25T16:54:03.123Z`` for now: the date and time formatted once a second."""

    def __init__(self) -> None:
        self._second = -1
        self._text = ""

    def now(self) -> str:
        t = time.time()
        second = int(t)
        if second != self._second:
            self._second = second
            self._text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._text}.{min(999, int((t - second) * 1000)):03d}Z"


_CLOCK = _UtcClock()


def access_line(method: str, path: str, status: int, ms: float | None, rid: str,
                key_id: str | None, at: str | None = None) -> bytes:
    """One access log line: a JSON object (no newline) with ``time`` (``at``, default
    now: UTC, ISO 8601 with milliseconds), ``method``, ``path``, ``status``, ``ms`` (3
    decimals, or null), ``request_id`` and ``key_id`` (or null).

    The common line (printable ASCII strings, no quote or backslash) is formatted
    directly; anything else is encoded by orjson. (orjson starts every output in a
    1 KiB buffer from the C allocator; at one line per request that churned the heap
    enough to cost a page fault every few requests.)"""
    # one check of the texts together: each property _plain checks is per character
    texts = method + path + rid if key_id is None else method + path + rid + key_id
    at = at or _CLOCK.now()
    if ms is not None and ms == ms and ms < 1e12 and _plain(texts):
        return (b'{"time":"%s","method":"%s","path":"%s","status":%d,"ms":%.3f,'
                b'"request_id":"%s","key_id":%s}') % (
                    at.encode(), method.encode(), path.encode(), status, ms, rid.encode(),
                    b"null" if key_id is None else b'"%s"' % key_id.encode())
    return orjson.dumps({"time": at, "method": method, "path": path, "status": status,
                         "ms": None if ms is None else round(ms, 3), "request_id": rid,
                         "key_id": key_id})


def _plain(text: str) -> bool:
    """Printable ASCII without ``"`` or ``\\``: the same in JSON between quotes."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


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
