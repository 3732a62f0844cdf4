"""One call of the decision surface (``/v1/decide``, ``/v1/batch``): decide, count, log.

A decision is counted when it is computed, answer or :class:`decido.DecisionError` (a 422
naming the field) alike; ``amount`` is the number of decisions (k for a batch of k). The
order depends on the body's size (:data:`~decido_service.http.resources.INLINE_BYTES`):

- **small** (the common case): decided on the event loop first (tens of microseconds, less
  than handing it to a thread), then counted, and its decision-log entry rides in the same
  store transaction as its admission: one group-commit round trip per call. A request over
  its limit has then cost one small computation before its 429.
- **larger**, sampled (a decision with ``uncertainty``, whose cost grows with its
  samples, not its size) or ``heavy`` (on a run's front, ``from_run``: a small body that
  names many options): counted first (a refused one costs no computation), decided in
  the worker's decision threads, and its entry written with the next group-commit batch.

Either way the entry is committed before the answer is sent, and the bodies are encoded
once: the entry keeps the request as received and the answer as sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson
from sanic.response import HTTPResponse

from decido import DecisionError
from decido_service.admission import admit
from decido_service.decisions import log as decision_log
from decido_service.http.context import ApiRequest
from decido_service.http.resources import INLINE_BYTES, in_thread
from decido_service.http.responses import json_response
from decido_service.limits import Surface
from decido_service.store import KeyRecord

__all__ = ["answer", "decide"]


async def answer(request: ApiRequest, key: KeyRecord, surface: Surface,
                 fn: Callable[[Any], dict[str, Any]], body: Any, *, log: bool,
                 amount: int = 1, heavy: bool = False) -> HTTPResponse:
    """The API's 200 answer of :func:`decide` on the request's JSON body."""
    _, encoded = await decide(request, key, surface, fn, body, log=log, amount=amount,
                              heavy=heavy)
    return json_response(encoded)


async def decide(request: ApiRequest, key: KeyRecord, surface: Surface,
                 fn: Callable[[Any], dict[str, Any]], body: Any, *, log: bool,
                 amount: int = 1, sent: bytes | None = None, heavy: bool = False
                 ) -> tuple[dict[str, Any], bytes]:
    """``fn(body)`` counted as ``amount`` decisions of ``surface`` and, when ``log``,
    recorded in the key's decision log with the body's labels (module docs): the answer
    and its JSON. ``sent`` is the body as the client sent it (default: the request's
    body, already read as JSON); ``heavy``: decided in a thread whatever its size (a
    decision on a front)."""
    ctx = request.app.ctx
    started = time.perf_counter()
    if sent is None:
        sent = request.body
    labels = decision_log.labels(body, surface == "batch") if log else None
    if len(sent) <= INLINE_BYTES and not heavy and not _sampled(surface, body):
        try:
            result = fn(body)
        except DecisionError:
            await admit(request, key, surface, amount)
            raise
        encoded = orjson.dumps(result)
        entry = _entry(request, key, surface, sent, result, encoded, started,
                       labels) if log else None
        await admit(request, key, surface, amount, log=entry)
        return result, encoded
    await admit(request, key, surface, amount)
    result, encoded = await in_thread(ctx.decide_pool, _encoded, fn, body)
    if log:
        await ctx.admissions.log(_entry(request, key, surface, sent, result, encoded, started,
                                        labels))
    return result, encoded


def _encoded(fn: Callable[[Any], dict[str, Any]], body: Any) -> tuple[dict[str, Any], bytes]:
    """``fn(body)`` and its JSON (in a decision thread: both grow with the options)."""
    result = fn(body)
    return result, orjson.dumps(result)


def _sampled(surface: Surface, body: Any) -> bool:
    """Whether a decide or batch body asks for a decision under uncertainty."""
    if type(body) is not dict:
        return False
    if "uncertainty" in body or surface == "decide":
        return "uncertainty" in body
    defaults, items = body.get("defaults"), body.get("decisions")
    return (isinstance(defaults, dict) and "uncertainty" in defaults) or (
        isinstance(items, list) and any(isinstance(i, dict) and "uncertainty" in i
                                        for i in items))


def _entry(request: ApiRequest, key: KeyRecord, surface: Surface, sent: bytes,
           result: dict[str, Any], encoded: bytes, started: float,
           labels: dict[str, str] | None) -> decision_log.DecisionEntry:
    return decision_log.entry(key["id"], request.app.ctx.settings.now(), sent, result, encoded,
                              batch=surface == "batch",
                              elapsed_ms=(time.perf_counter() - started) * 1e3,
                              metadata=labels)
