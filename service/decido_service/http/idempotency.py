"""``Idempotency-Key`` over HTTP: the request's fingerprint and the answers
(:mod:`decido_service.runs.idempotency` keeps the records; its docs say what a key does).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from decido_service.http.context import ApiRequest
from decido_service.http.responses import Response, json_response
from decido_service.runs.idempotency import Claim, begin, replay
from decido_service.store import KeyRecord
from decido_service.types.params import REPLAYED
from decido_service.types.problems import PROBLEM_TYPE

__all__ = ["REPLAYED", "claimed", "once"]

T = TypeVar("T")


async def once(request: ApiRequest, key: KeyRecord, idem_key: str | None,
               admit: Callable[[Claim | None], Awaitable[T]],
               *, status: int, keep_answer: bool, location: str = "/v1/runs/"
               ) -> T | Response:
    """``admit(claim)`` under the request's ``Idempotency-Key`` ``idem_key``: without one,
    ``admit(None)``; the replayed answer of an earlier request with the same key and
    request; else ``admit`` of a pending :class:`Claim`, which the run's admission answers
    in its own transaction (forgotten when ``admit`` raises before it).

    The lookup, the admission and the bookkeeping run as one task the handler's
    cancellation (a client that cut its connection) cannot stop half-way: once begun, the
    run is admitted with its record answered, or the record is forgotten, so a resend
    gets the same run or makes the only one (a ``/v1/optimize`` run whose client left
    during its admission runs on, for the resend's answer). ``location``: the path of the
    resource a replayed answer names (its id appended)."""
    if idem_key is None:
        return await admit(None)
    task = asyncio.ensure_future(_once(request, key, admit, idem_key, status, keep_answer,
                                       location))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.add_done_callback(_unawaited)
        raise


async def _once(request: ApiRequest, key: KeyRecord,
                admit: Callable[[Claim | None], Awaitable[T]], idem_key: str, status: int,
                keep_answer: bool, location: str) -> T | Response:
    """:func:`once` with a key, in its own task."""
    ctx = request.app.ctx
    claim = Claim(idem_key, status, keep_answer)
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    digest.update(request.body or b"")
    first = await begin(ctx.store, key["id"], claim, digest.hexdigest(), ctx.settings.now())
    if first is None:  # this request's claim, pending
        try:
            return await admit(claim)
        except BaseException:
            await claim.forget(ctx.store, key["id"])
            raise
    replayed, body = await replay(ctx.store, key["id"], first)  # the first answer again
    return json_response(body, status=replayed,
                         headers={"Location": f"{location}{first.run_id}", REPLAYED: "true"},
                         content_type=PROBLEM_TYPE if replayed >= 400 else "application/json")


def _unawaited(task: asyncio.Task[Any]) -> None:
    """Retrieve the outcome of a :func:`once` task whose handler was cancelled (its error
    was answered to nobody)."""
    if not task.cancelled():
        task.exception()


def claimed(claim: Claim) -> Response:
    """The first answer, the one :meth:`Claim.record` stored (``keep_answer``)."""
    outcome = claim.outcome
    assert outcome is not None and outcome.body is not None
    return json_response(outcome.body.encode(), status=outcome.status,
                         headers={"Location": f"/v1/runs/{outcome.run_id}"})
