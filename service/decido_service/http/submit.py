"""Submitting a run over HTTP (``POST /v1/optimize``, ``POST /v1/runs``, the dashboard's
replay): the key, the body and the ``Idempotency-Key`` read from the request, refusals
charged to the key, then :mod:`decido_service.runs.submit` (the checks) and
:mod:`decido_service.runs.queue` (the admission) with the worker's services and the
request's :class:`~decido_service.admission.Gate`."""

from __future__ import annotations

from decido_service.admission import Gate
from decido_service.http.admission import gate, gate_of, refusals
from decido_service.http.context import ApiRequest
from decido_service.http.endpoint import request_id
from decido_service.http.params import headers, json_bytes
from decido_service.runs import queue, submit
from decido_service.runs.idempotency import Claim
from decido_service.runs.objective import Compiled
from decido_service.store import KeyRecord, RunRow
from decido_service.types import Budget, IdempotencyHeaders, OptimizeRequest

__all__ = ["enqueue", "prepare_body", "submission"]


async def submission(request: ApiRequest
                     ) -> tuple[Gate, OptimizeRequest, Compiled, Budget, str | None]:
    """Everything decided before a run is admitted: the request's admission of its key
    (``gate.key``), the decoded body, its budget within the tier's caps and the compiled
    objective (refusals charged to the key), and its ``Idempotency-Key``."""
    async with await gate_of(request, "optimize") as gate:
        req, objective, budget = await submit.prepare(request.app.ctx, gate.key,
                                                      json_bytes(request))
    return gate, req, objective, budget, headers(request, IdempotencyHeaders).key


async def prepare_body(request: ApiRequest, key: KeyRecord, raw: bytes
                       ) -> tuple[OptimizeRequest, Compiled, Budget]:
    """:func:`submission` for a body already read (the dashboard's replay sends a stored
    one): :func:`decido_service.runs.submit.prepare`, refusals charged."""
    async with refusals(request, key, "optimize"):
        return await submit.prepare(request.app.ctx, key, raw)


async def enqueue(request: ApiRequest, key: KeyRecord, req: OptimizeRequest,
                  objective: Compiled, budget: Budget, claim: Claim | None = None) -> RunRow:
    """:func:`decido_service.runs.queue.enqueue` for ``request``."""
    return await queue.enqueue(request.app.ctx, gate(request, key, "optimize"),
                               request_id(request), req, objective, budget, claim)
