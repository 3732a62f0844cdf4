"""``Idempotency-Key`` on ``POST /v1/runs`` and ``POST /v1/optimize``.

A client that may retry a submission sends a key of its choice (1 to
:data:`~decido_service.types.params.MAX_IDEMPOTENCY_KEY` characters; longer, or empty: 400
``invalid_parameter``). The
record is the API key's, kept :data:`TTL` seconds (24 h) in the store, and holds a
fingerprint of the request (method, path and body bytes):

- the first request with the key is checked as usual (credentials, validation, caps:
  nothing about the key is stored for a request refused there); right before it is
  counted its record is written *pending*; the run is admitted and the record gets its
  outcome (the run id, and for ``/v1/runs`` the 202 answer) in one store transaction;
  when the admission is refused (429, 503) the pending record is forgotten, so a retry
  is a new request. A client that cuts its connection cannot stop this half-way
  (:func:`once`): a resend gets the same run, or makes the only one;
- a retry with the same request gets the first answer again and counts nothing:
  ``/v1/runs`` the same 202 body, ``/v1/optimize`` the run's answer once it has ended
  (rebuilt from the run; while it runs, 409), with :data:`REPLAYED` ``: true``;
- the key with another request: 422 ``idempotency_key_reused``; while the first request
  is being admitted (or, ``/v1/optimize``, while its run lasts): 409
  ``idempotency_key_in_use`` with ``Retry-After: 1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec

from decido_service.http.context import ApiRequest
from decido_service.http.params import headers
from decido_service.http.problems import PROBLEM_TYPE, ApiError
from decido_service.http.responses import Response, encode, json_response
from decido_service.runs import front
from decido_service.runs.api import run_trace, run_view
from decido_service.runs.execution import optimize_result
from decido_service.store import FINISHED_STATES, KeyRecord, Store
from decido_service.types import IdempotencyHeaders, ParetoPoint
from decido_service.types.params import REPLAYED

__all__ = ["REPLAYED", "TTL", "Claim", "Outcome", "once", "replay", "replayed"]

T = TypeVar("T")

#: seconds an idempotency record is kept
TTL = 86400.0


class Outcome(msgspec.Struct):
    """What the record of an admitted request keeps: its run, and (to be replayed as is)
    the answer's status and body; a ``/v1/optimize`` answer is rebuilt from its run."""

    run_id: str
    status: int
    body: str | None = None


_OUTCOME = msgspec.json.Decoder(Outcome)


class Claim:
    """The pending record of this request: :meth:`record` gives the answer the admission
    stores with the run (``status``; the answer itself too when ``keep_answer``)."""

    def __init__(self, idem_key: str, status: int, keep_answer: bool) -> None:
        self.idem_key, self.status, self.keep_answer = idem_key, status, keep_answer
        self.outcome: Outcome | None = None

    def record(self, run_id: str, row: dict[str, Any]) -> tuple[str, str]:
        """``(idem_key, response)`` for :meth:`Runs.enqueue
        <decido_service.store.runs.Runs.enqueue>`, from the run ``row`` as admitted."""
        body = encode(run_view(row)).decode() if self.keep_answer else None
        self.outcome = Outcome(run_id, self.status, body)
        return self.idem_key, encode(self.outcome).decode()

    def answer(self, resource_id: str, body: bytes) -> tuple[str, str]:
        """``(idem_key, response)`` recording ``body`` (with this claim's status) as the
        answer of the request that made ``resource_id`` (a study), for the store call
        that makes it (:meth:`Studies.create <decido_service.store.studies.Studies.create>`):
        a resend gets it as it was."""
        self.outcome = Outcome(resource_id, self.status, body.decode())
        return self.idem_key, encode(self.outcome).decode()

    def response(self) -> Response:
        """The first answer, the one :meth:`record` stored (``keep_answer``)."""
        outcome = self.outcome
        assert outcome is not None and outcome.body is not None
        return json_response(outcome.body.encode(), status=outcome.status,
                             headers={"Location": f"/v1/runs/{outcome.run_id}"})


async def once(request: ApiRequest, key: KeyRecord, admit: Callable[[Claim | None],
                                                                    Awaitable[T]],
               *, status: int, keep_answer: bool, location: str = "/v1/runs/"
               ) -> T | Response:
    """``admit(claim)`` under the request's ``Idempotency-Key`` (module docs): without a
    key, ``admit(None)``; the replayed answer of an earlier request with the same key and
    request; else ``admit`` of a pending :class:`Claim`, which the run's admission answers
    in its own transaction (forgotten when ``admit`` raises before it).

    The lookup, the admission and the bookkeeping run as one task the handler's
    cancellation (a client that cut its connection) cannot stop half-way: once begun, the
    run is admitted with its record answered, or the record is forgotten, so a resend
    gets the same run or makes the only one (a ``/v1/optimize`` run whose client left
    during its admission runs on, for the resend's answer). ``location``: the path of the
    resource a replayed answer names (its id appended)."""
    if headers(request, IdempotencyHeaders).key is None:
        return await admit(None)
    task = asyncio.ensure_future(_once(request, key, admit, status, keep_answer, location))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.add_done_callback(_unawaited)
        raise


async def _once(request: ApiRequest, key: KeyRecord,
                admit: Callable[[Claim | None], Awaitable[T]], status: int,
                keep_answer: bool, location: str) -> T | Response:
    """:func:`once` with a key, in its own task."""
    idem_key = headers(request, IdempotencyHeaders).key
    assert idem_key is not None
    ctx = request.app.ctx
    store: Store = ctx.store
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    digest.update(request.body or b"")
    state, stored = await store.runs.idempotency_begin(key["id"], idem_key, digest.hexdigest(),
                                                  ctx.settings.now(), TTL)
    if state == "mismatch":
        raise ApiError("idempotency_key_reused", "this Idempotency-Key was used with "
                       "another request in the last 24 h; use a new key")
    if state == "pending":
        raise _in_use()
    if state == "done":
        assert stored is not None
        return await replayed(request, key, _OUTCOME.decode(stored), location)
    try:
        return await admit(Claim(idem_key, status, keep_answer))
    except BaseException:
        # not admitted (refused, failed): forget the pending record so a retry is a new
        # request (a record answered with its run is kept); a lost call: it expires in 24 h
        with contextlib.suppress(Exception):
            await store.runs.idempotency_end(key["id"], idem_key, None)
        raise


def _unawaited(task: asyncio.Task[Any]) -> None:
    """Retrieve the outcome of a :func:`once` task whose handler was cancelled (its error
    was answered to nobody)."""
    if not task.cancelled():
        task.exception()


def replay(outcome: Outcome, row: dict[str, Any] | None,
           pareto: list[ParetoPoint] | None = None) -> tuple[int, bytes]:
    """The status and body of a repeated request: the stored answer, or (``/v1/optimize``)
    the answer rebuilt from its run ``row`` (and its front, ``pareto``) once it has
    ended."""
    if outcome.body is not None:
        return outcome.status, outcome.body.encode()
    run_id = outcome.run_id
    if row is None:
        raise ApiError("not_found", f"the run of this Idempotency-Key, {run_id}, was deleted")
    run, trace = run_view(row), run_trace(row)
    if run.state not in FINISHED_STATES:
        raise _in_use()
    if run.problem is not None:
        return run.problem.status, encode(run.problem)
    if run.result is None:
        raise ApiError("run_cancelled", f"run {run_id} was cancelled before it started")
    history: list[list[float | None]] = [[e, b] for e, _, b in trace.points]
    result = run.result if pareto is None else msgspec.structs.replace(run.result,
                                                                         pareto=pareto)
    return 200, encode(optimize_result(run_id, run.request, result, history))


async def replayed(request: ApiRequest, key: KeyRecord, outcome: Outcome,
                   location: str = "/v1/runs/") -> Response:
    """The answer to a repeated request (:func:`replay`), with the resource's ``Location``
    (``location`` and its id)."""
    store: Store = request.app.ctx.store
    row = None if outcome.body is not None else await store.runs.get(key["id"], outcome.run_id)
    pareto = None if row is None or row["state"] not in FINISHED_STATES else \
        await front.points(store, row)
    status, body = replay(outcome, row, pareto)
    return json_response(body, status=status,
                         headers={"Location": f"{location}{outcome.run_id}",
                                  REPLAYED: "true"},
                         content_type=PROBLEM_TYPE if status >= 400 else "application/json")


def _in_use() -> ApiError:
    return ApiError("idempotency_key_in_use", "a request with this Idempotency-Key is still "
                    "being answered; retry shortly", headers={"Retry-After": "1"})
