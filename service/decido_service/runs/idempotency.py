"""``Idempotency-Key`` on ``POST /v1/runs`` and ``POST /v1/optimize``.

A client that may retry a submission sends a key of its choice (1 to
:data:`~decido_service.types.params.MAX_IDEMPOTENCY_KEY` characters; longer, or empty: 400
``invalid_parameter``). The
record is the API key's, kept :data:`TTL` seconds (24 h) in the store, and holds a
fingerprint of the request (method, path and body bytes):

- the first request with the key is checked as usual (credentials, validation, caps:
  nothing about the key is stored for a request refused there); right before it is
  counted its record is written *pending*; when the run is admitted the record gets its
  outcome (the run id, and for ``/v1/runs`` the 202 answer); when the admission is
  refused (429, 503) the pending record is forgotten, so a retry is a new request;
- a retry with the same request gets the first answer again and counts nothing:
  ``/v1/runs`` the same 202 body, ``/v1/optimize`` the run's answer once it has ended
  (rebuilt from the run; while it runs, 409), with :data:`REPLAYED` ``: true``;
- the key with another request: 422 ``idempotency_key_reused``; while the first request
  is being admitted (or, ``/v1/optimize``, while its run lasts): 409
  ``idempotency_key_in_use`` with ``Retry-After: 1``.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator
from typing import Any

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

__all__ = ["REPLAYED", "TTL", "Claim", "Outcome", "claim", "replay", "replayed"]

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
    """A pending record of this request; :meth:`done` stores the outcome."""

    def __init__(self) -> None:
        self.outcome: Outcome | None = None

    def done(self, run_id: str, status: int, body: bytes | None = None) -> None:
        """The admitted run (and, to be replayed as is, the answer's status and body)."""
        self.outcome = Outcome(run_id, status, None if body is None else body.decode())


@contextlib.asynccontextmanager
async def claim(request: ApiRequest, key: KeyRecord) -> AsyncIterator[Claim | Outcome | None]:
    """Around an admission: ``None`` without a key; the stored :class:`Outcome` of an
    earlier request with the same key and request; else a :class:`Claim` whose outcome
    is stored on the way out (forgotten when the block raised before :meth:`Claim.done`)."""
    idem_key = headers(request, IdempotencyHeaders).key
    if idem_key is None:
        yield None
        return
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
        yield _OUTCOME.decode(stored)
        return
    pending = Claim()
    try:
        yield pending
    finally:
        outcome = None if pending.outcome is None else encode(pending.outcome).decode()
        with contextlib.suppress(Exception):  # a lost outcome: the record expires in 24 h
            await store.runs.idempotency_end(key["id"], idem_key, outcome)


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


async def replayed(request: ApiRequest, key: KeyRecord, outcome: Outcome) -> Response:
    """The answer to a repeated request (:func:`replay`), with the run's ``Location``."""
    store: Store = request.app.ctx.store
    row = None if outcome.body is not None else await store.runs.get(key["id"], outcome.run_id)
    pareto = None if row is None or row["state"] not in FINISHED_STATES else \
        await front.points(store, row)
    status, body = replay(outcome, row, pareto)
    return json_response(body, status=status,
                         headers={"Location": f"/v1/runs/{outcome.run_id}",
                                  REPLAYED: "true"},
                         content_type=PROBLEM_TYPE if status >= 400 else "application/json")


def _in_use() -> ApiError:
    return ApiError("idempotency_key_in_use", "a request with this Idempotency-Key is still "
                    "being answered; retry shortly", headers={"Retry-After": "1"})
