"""Submitting a run: what ``POST /v1/optimize``, ``POST /v1/runs`` and the dashboard's
replay all go through once the body is read (:mod:`decido_service.http.submit`), before
:mod:`decido_service.runs.queue` admits the run (``start_run``, ``enqueue``).

:func:`prepare` decides everything before a run is admitted: the decoded body, its budget
within the tier's caps (:func:`checked`) and the compiled objective.
"""

from __future__ import annotations

from decido_service import limits
from decido_service.config import Settings
from decido_service.errors import field_error, limit_error, validation_error
from decido_service.runs.objective import Compiled, compile_objective
from decido_service.schemas import decode_optimize
from decido_service.services import Services, by_size, in_thread
from decido_service.store import KeyRecord
from decido_service.types import Budget, OptimizeRequest

__all__ = ["checked", "prepare"]


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
