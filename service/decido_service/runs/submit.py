"""Submitting a run: what ``POST /v1/optimize``, ``POST /v1/runs`` and the dashboard's
replay all go through once the body is read (:mod:`decido_service.http.submit`).

:func:`prepare` decides everything before a run is admitted: the decoded body, its budget
within the tier's caps (:func:`checked`) and the compiled objective. :func:`start_run`
takes one of the worker's run slots, records and counts the run and starts it here
(``/v1/optimize``); :func:`enqueue` records and counts it queued and starts it here when a
run thread is free (``/v1/runs``). Both admit through
:func:`decido_service.runs.queue.admit_run`.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import msgspec

from decido_service import limits
from decido_service.admission import gate
from decido_service.config import Settings
from decido_service.errors import ServiceError, field_error, limit_error, validation_error
from decido_service.runs.execution import Execution
from decido_service.runs.idempotency import Claim
from decido_service.runs.objective import Compiled, compile_objective
from decido_service.runs.queue import admit_run
from decido_service.schemas import decode_optimize
from decido_service.services import Services, by_size, in_thread
from decido_service.store import KeyRecord
from decido_service.types import Budget, OptimizeRequest

__all__ = ["checked", "enqueue", "prepare", "start_run"]


async def prepare(services: Services, key: KeyRecord, raw: bytes
                  ) -> tuple[OptimizeRequest, Compiled, Budget]:
    """The decoded body ``raw``, its budget and the compiled objective (a large body is
    decoded in a thread, nothing is compiled before the tier's caps passed)."""
    req, budget = await by_size(services, raw, checked, services.settings, key, raw)
    objective = await in_thread(services.decide_pool, compile_objective, req)
    return req, objective, budget


def checked(settings: Settings, key: KeyRecord, raw: bytes) -> tuple[OptimizeRequest, Budget]:
    """The decoded body ``raw`` and the run's ``max_evaluations`` and ``time_limit``
    within the tier (403 beyond its caps, its dimensions included; 422 listing each of
    its size caps it is above)."""
    req = decode_optimize(raw)
    budget, violation = limits.run_caps(key, req.dims, req.max_evaluations, req.time_limit,
                                        settings=settings)
    if violation is not None:
        raise limit_error(violation)
    faults = limits.run_size_faults(key, req, settings=settings)
    if faults:
        raise validation_error([field_error(v.field, v.code, v.detail) for v in faults])
    return req, Budget(**budget)


async def start_run(ctx: Services, tally: SimpleNamespace, request_id: str, key: KeyRecord,
                    req: OptimizeRequest, objective: Compiled, budget: Budget,
                    claim: Claim | None = None) -> Execution:
    """Take one of the worker's ``run_slots``, record and count the run
    (:func:`~decido_service.runs.queue.admit_run`, answering ``claim``) and start it in
    this worker's run pool; the slot is given back when the run ends. The time limit
    counts from now: the run's wait for a thread is taken from it. ``tally``: as for
    :func:`decido_service.admission.gate`."""
    slots = ctx.run_slots
    try:
        slots.acquire()
    except ServiceError:  # 503 overloaded: nothing counted; the headers show the minute
        await gate(ctx, tally, key, "optimize").observe()
        raise
    try:
        budget = msgspec.structs.replace(budget, deadline=time.time() + budget.time_limit)
        run_id, document = await admit_run(ctx, tally, key, req, budget, queued=False,
                                           claim=claim)
        execution = ctx.run_worker.launch(key["id"], run_id, request_id, document,
                                          objective, queued=False)
    except BaseException:
        slots.release()
        raise
    assert execution.task is not None
    execution.task.add_done_callback(lambda _: slots.release())
    return execution


async def enqueue(ctx: Services, tally: SimpleNamespace, request_id: str, key: KeyRecord,
                  req: OptimizeRequest, objective: Compiled, budget: Budget,
                  claim: Claim | None = None) -> str:
    """Record an admitted run queued (counted; ``claim`` answered with it) and start it in
    this worker when one of its run threads is free, else leave it to whichever worker
    takes it first; its id. (Also the dashboard's replay.)"""
    run_id, document = await admit_run(ctx, tally, key, req, budget, queued=True, claim=claim)
    worker = ctx.run_worker
    if worker.free() > 0:
        worker.launch(key["id"], run_id, request_id, document, objective)
    else:
        await worker.release(run_id)
    return run_id
