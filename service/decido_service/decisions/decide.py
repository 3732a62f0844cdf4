"""One call of the decision surface (``/v1/decide``, ``/v1/batch``): decide, count, log.

A decision is counted when it is computed, answer or :class:`decido.DecisionError` (a 422
naming the field) alike; ``amount`` is the number of decisions (k for a batch of k). The
order depends on the body's size (:data:`~decido_service.services.INLINE_BYTES`):

- **small** (the common case): decided on the event loop first (tens of microseconds, less
  than handing it to a thread), then counted, and its decision-log entry rides in the same
  store transaction as its admission: one group-commit round trip per call. A request over
  its limit has then cost one small computation before its 429.
- **larger** or ``heavy`` (on a run's front, ``from_run``: a small body that names many
  options): counted first (a refused one costs no computation), decided in the worker's
  decision threads, and its entry written with the next group-commit batch.
- **sampled** (a decision with ``uncertainty``, whose cost grows with its samples, not
  its size; the plan's cap on it was checked before: :mod:`.sampling`): as a larger one,
  in the worker's own threads for them (``sample_pool``) once it has one of the worker's
  ``sample_slots`` (one per key, a few in all; 503 ``overloaded`` before anything is
  counted otherwise), so a key's sampled decisions never delay another key's requests
  nor queue its sampled decisions behind theirs. The slot is the computation's until it
  ends, even when the client leaves first.

Either way the entry is committed before the answer is sent, and the bodies are encoded
once: the entry keeps the request as received and the answer as sent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import orjson

from decido import DecisionError
from decido_service.admission import gate
from decido_service.decisions import log as decision_log
from decido_service.limits import Surface
from decido_service.services import INLINE_BYTES, Services, in_thread
from decido_service.store import KeyRecord

__all__ = ["decide"]


async def decide(ctx: Services, tally: SimpleNamespace, key: KeyRecord, surface: Surface,
                 fn: Callable[[Any], dict[str, Any]], body: Any, sent: bytes, *, log: bool,
                 amount: int = 1, heavy: bool = False) -> tuple[dict[str, Any], bytes]:
    """``fn(body)`` counted as ``amount`` decisions of ``surface`` and, when ``log``,
    recorded in the key's decision log with the body's labels (module docs): the answer
    and its JSON. ``sent`` is the body as the client sent it (``body`` is it read as
    JSON); ``heavy``: decided in a thread whatever its size (a decision on a front);
    ``tally``: as for :func:`decido_service.admission.gate`."""
    started = time.perf_counter()
    labels = decision_log.labels(body, surface == "batch") if log else None
    sampled = _sampled(surface, body)
    if len(sent) <= INLINE_BYTES and not heavy and not sampled:
        try:
            result = fn(body)
        except DecisionError:
            await gate(ctx, tally, key, surface).admit(amount)
            raise
        encoded = orjson.dumps(result)
        entry = _entry(ctx, key, surface, sent, result, encoded, started,
                       labels) if log else None
        await gate(ctx, tally, key, surface).admit(amount, log=entry)
        return result, encoded
    if sampled:
        result, encoded = await _sample(ctx, tally, key, surface, amount, fn, body)
    else:
        await gate(ctx, tally, key, surface).admit(amount)
        result, encoded = await in_thread(ctx.decide_pool, _encoded, fn, body)
    if log:
        await ctx.admissions.log(_entry(ctx, key, surface, sent, result, encoded, started,
                                        labels))
    return result, encoded


def _encoded(fn: Callable[[Any], dict[str, Any]], body: Any) -> tuple[dict[str, Any], bytes]:
    """``fn(body)`` and its JSON (in a decision thread: both grow with the options)."""
    result = fn(body)
    return result, orjson.dumps(result)


async def _sample(ctx: Services, tally: SimpleNamespace, key: KeyRecord, surface: Surface,
                  amount: int, fn: Callable[[Any], dict[str, Any]], body: Any
                  ) -> tuple[dict[str, Any], bytes]:
    """A sampled decision: a slot of the worker's (or 503), counted, then computed (and
    encoded) in the worker's sample threads; the slot is given back when the computation
    ends."""
    slots, key_id = ctx.sample_slots, key["id"]
    slots.acquire(key_id)
    try:
        await gate(ctx, tally, key, surface).admit(amount)
    except BaseException:
        slots.release(key_id)
        raise
    future = asyncio.get_running_loop().run_in_executor(ctx.sample_pool, _encoded, fn, body)
    future.add_done_callback(lambda _: slots.release(key_id))
    return await asyncio.shield(future)


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


def _entry(ctx: Services, key: KeyRecord, surface: Surface, sent: bytes,
           result: dict[str, Any], encoded: bytes, started: float,
           labels: dict[str, str] | None) -> decision_log.DecisionEntry:
    return decision_log.entry(key["id"], ctx.settings.now(), sent, result, encoded,
                              batch=surface == "batch",
                              elapsed_ms=(time.perf_counter() - started) * 1e3,
                              metadata=labels)
