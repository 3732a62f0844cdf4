"""What both drivers share about httpx: importing it, the headers, a :class:`Call` as
httpx's arguments, httpx's errors as the client's, the default progress printer."""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Any

import decido
from decido.client._protocol import Call
from decido.client.errors import ConnectionFailed, MissingDependency, Timeout

__all__ = ["DEFAULT_URL", "STREAM_READ", "call_args", "failed", "headers", "httpx",
           "print_progress", "translate"]

#: the server when neither ``base_url`` nor ``DECIDO_URL`` says another
DEFAULT_URL = "http://127.0.0.1:8000"
#: the shortest read timeout of an event stream (seconds): the server sends a heartbeat
#: every 15 s
STREAM_READ = 40.0


def httpx() -> ModuleType:
    """The httpx module, or :class:`MissingDependency` naming the extra to install."""
    try:
        import httpx as module
    except ModuleNotFoundError as exc:
        raise MissingDependency(
            "decido.Client needs httpx: pip install 'decido[client]'") from exc
    return module


def headers(key: str | None) -> dict[str, str]:
    """The headers of every call: the key (``key``, else ``DECIDO_KEY``) as a bearer token."""
    key = key if key is not None else os.environ.get("DECIDO_KEY")
    out = {"User-Agent": f"decido-client/{decido.__version__}",
           "Accept": "application/json"}
    if key:
        out["Authorization"] = f"Bearer {key}"
    return out


def call_args(call: Call, timeout: float, stream: bool = False) -> dict[str, Any]:
    """The keyword arguments of ``httpx.Client.request`` (and ``stream``) for ``call``."""
    seconds = call.timeout if call.timeout is not None else timeout
    http = httpx()
    hdrs = dict(call.headers)
    if stream:
        hdrs["Accept"] = "text/event-stream"
    return {"method": call.method, "url": call.path, "params": call.params,
            "json": call.json, "headers": hdrs,
            "timeout": http.Timeout(seconds, read=max(seconds, STREAM_READ) if stream
                                    else seconds)}


def translate(exc: BaseException) -> BaseException:
    """httpx's exceptions as the client's (:class:`Timeout`, :class:`ConnectionFailed`);
    anything else unchanged."""
    http = httpx()
    if isinstance(exc, http.TimeoutException):
        return Timeout(f"the service at {_where(exc)} did not answer in time: {exc!r}")
    if isinstance(exc, http.TransportError):
        return ConnectionFailed(f"cannot reach the service at {_where(exc)}: "
                                f"{exc or type(exc).__name__}")
    return exc


def _where(exc: Any) -> str:
    """The address a failed request tried: ``http://host:port`` and the call."""
    try:
        url = exc.request.url
    except (AttributeError, RuntimeError):  # httpx: an error raised outside a request
        return "(unknown address)"
    return f"{url.scheme}://{url.netloc.decode()} ({exc.request.method} {url.path})"


def failed(exc: Exception) -> Exception:
    """What a driver throws into the operation for ``exc``, a failure of its I/O: the
    client's exception (:func:`translate`), caused by ``exc``."""
    error = translate(exc)
    if error is not exc:
        error.__cause__ = exc
    assert isinstance(error, Exception)
    return error


def print_progress(progress: dict[str, Any]) -> None:
    """The default progress of :meth:`Run.wait` (``progress=True``): one line on stderr."""
    best = progress.get("best")
    line = (f"evaluations {progress['evaluations']}  best "
            f"{'-' if best is None else format(best, '.6g')}  "
            f"elapsed {progress['elapsed_ms'] / 1e3:.1f} s")
    end = "\r" if sys.stderr.isatty() else "\n"
    sys.stderr.write(line + end)
    sys.stderr.flush()
