"""Creating, reading, stopping and deleting studies (docs/studies.md, "Over HTTP"), and the
worker's sweep of expired leases; every change runs in
:func:`~decido_service.studies.operation.locked`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

import decido
from decido.errors import EngineError
from decido_service.errors import ServiceError, fault, invalid
from decido_service.store import Admission, AdmissionRequest, iso_utc, ordered_id
from decido_service.studies.operation import (
    Context,
    Operation,
    check_number,
    clock,
    locked,
    not_found,
    valid_id,
)
from decido_service.studies.views import study_view, trial_view
from decido_service.types.studies import (
    Study,
    StudyCreate,
    StudyList,
    StudyPage,
    Trial,
    TrialList,
    TrialPage,
)

__all__ = ["Caps", "Created", "check", "create", "delete", "find", "page", "stop", "sweep",
           "trial", "trials"]

_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True)
class Caps:
    """The key's tier's caps on studies (``None``: unlimited): active studies, trials a
    study's engine suggests, variables."""

    max_studies: int | None
    max_study_trials: int | None
    max_dims: int | None


def _over(code: str, field: str, cap: int, requested: int, detail: str) -> ServiceError:
    return ServiceError(code, detail, extra={"field": field, "limit_value": cap,
                                             "requested": requested})


def check(req: StudyCreate, caps: Caps) -> decido.Study:
    """The study ``req`` asks for, within the tier's caps: 422 listing every fault of its
    arguments (the library's checks); 403 ``max_dims_exceeded`` for more variables than
    ``max_dims``, ``compute_cap_exceeded`` for ``max_trials`` above
    ``max_study_trials`` (a study without ``max_trials`` gets that cap)."""
    trials = caps.max_study_trials
    if trials is not None and req.max_trials is not None and req.max_trials > trials:
        raise _over("compute_cap_exceeded", "max_trials", trials, req.max_trials,
                    f"max_trials={req.max_trials} is above the tier's {trials} trials per "
                    "study")
    args: dict[str, Any] = {"bounds": req.bounds, "variables": req.variables,
                            "objectives": req.objectives, "goal": req.goal,
                            "engine": req.engine, "seed": req.seed,
                            "max_trials": req.max_trials or trials,
                            "constraints": req.constraints}
    try:
        study = decido.Study(**args)
    except EngineError as exc:
        raise invalid([fault(e["pointer"], e["code"], e["message"])
                       for e in exc.errors]) from None
    if caps.max_dims is not None and study.space.n > caps.max_dims:
        field = "bounds" if req.bounds is not None else "variables"
        raise _over("max_dims_exceeded", field, caps.max_dims, study.space.n,
                    f"the study has {study.space.n} variables; the tier allows "
                    f"{caps.max_dims}")
    return study


@dataclass(frozen=True)
class Created:
    """A study's creation: the store's answer to its admission (not admitted: nothing was
    written) and the study with its encoded answer (the bytes an ``Idempotency-Key``
    replays)."""

    admission: Admission
    study: Study
    body: bytes


async def create(ctx: Context, key_id: str, req: StudyCreate, caps: Caps,
                 admission: AdmissionRequest,
                 answer: Callable[[str, bytes], tuple[str, str]] | None = None) -> Created:
    """A new study: its arguments and caps checked (:func:`check`), then one store
    transaction counts the key's active studies (429 ``too_many_studies`` at
    ``max_studies``: two creations at once cannot both pass it), counts ``admission``
    (one optimization), writes the row and, with ``answer`` (the pending
    ``Idempotency-Key`` record's: ``(idem_key, record)`` of the study id and its answer),
    the answer's record: a study never exists without it, nor it without the study."""
    study = check(req, caps)
    library = study.to_dict()["spec"]
    spec = {"library": library, "trial_lease": req.trial_lease,
            "early_stopping": None if req.early_stopping is None
            else msgspec.to_builtins(req.early_stopping)}
    now = clock(ctx)
    study_id = ordered_id("st_", now)
    row = {"id": study_id, "key_id": key_id, "created_at": iso_utc(now), "state": "active",
           "spec": orjson.dumps(spec).decode(), "metadata": req.metadata, "counts": "{}",
           "summary": None, "log_length": 0, "next_number": 0, "events": 0,
           "lease_until": None}
    view = study_view(row)
    body = _encode(view)
    made = await ctx.store.studies.create(row, admission, caps.max_studies,
                                          None if answer is None else answer(study_id, body))
    if made == "cap":
        raise ServiceError("too_many_studies",
                           f"the key has {caps.max_studies} active studies, its tier's cap; "
                           "stop one first", extra={"limit_value": caps.max_studies},
                           headers={"Retry-After": "60"})
    return Created(made, view, body)


async def find(ctx: Context, key_id: str, study_id: str) -> Study:
    """One of the key's studies; 404 otherwise."""
    row = await ctx.store.studies.get(key_id, study_id) if valid_id(study_id) \
        else None
    if row is None:
        raise not_found(study_id)
    return study_view(row)


async def page(ctx: Context, key_id: str, query: StudyPage) -> StudyList:
    """A page of the key's studies, newest first."""
    rows = await ctx.store.studies.page(key_id, query.limit + 1, query.starting_after,
                                        query.state, query.metadata)
    return StudyList(data=[study_view(r) for r in rows[:query.limit]],
                     has_more=len(rows) > query.limit)


async def trials(ctx: Context, key_id: str, study_id: str, query: TrialPage) -> TrialList:
    """A page of a study's trials by number (``state`` filter)."""
    rows = await ctx.store.studies.trials(key_id, study_id, query.limit + 1,
                                          query.starting_after, query.state) \
        if valid_id(study_id) else None
    if rows is None:
        raise not_found(study_id)
    return TrialList(data=[trial_view(r) for r in rows[:query.limit]],
                     has_more=len(rows) > query.limit)


async def trial(ctx: Context, key_id: str, study_id: str, number: int) -> Trial:
    """One trial of a study; 404 for no such study or trial."""
    check_number(study_id, number)
    rows = await ctx.store.studies.trials(key_id, study_id, 1, number - 1, None) \
        if valid_id(study_id) else None
    if rows is None:
        raise not_found(study_id)
    if not rows or rows[0]["number"] != number:
        raise ServiceError("not_found", f"study {study_id} has no trial {number}")
    return trial_view(rows[0])


async def stop(ctx: Context, key_id: str, study_id: str) -> Study:
    """Stop a study: no more suggestions; its trials can still complete."""
    async def op(work: Operation) -> None:
        if work.state == "active":
            work.state = "stopped"
            change = {"state": "abandoned", "reason": "study stopped"}
            queued = await work.stx.trials("state = 'queued'")
            await work.stx.update_trials([(int(r["number"]), change) for r in queued])
            work.move("queued", "abandoned", work.counts.get("queued", 0))
            for row in queued:
                work.trial_event({**row, **change})

    await locked(ctx, key_id, study_id, op)
    return await find(ctx, key_id, study_id)


async def delete(ctx: Context, key_id: str, study_id: str) -> None:
    """Delete a stopped or completed study; 409 ``study_not_stopped`` for an active one."""
    state = await ctx.store.studies.delete(key_id, study_id) \
        if valid_id(study_id) else None
    if state is None:
        raise not_found(study_id)
    if state == "active":
        raise ServiceError("study_not_stopped",
                           f"study {study_id} is active; stop it, then delete it")


async def sweep(ctx: Context) -> int:
    """Fail the expired trials of every study (the worker's periodic sweep); how many
    studies were swept."""
    swept = 0
    for key_id, study_id in await ctx.store.studies.leased(clock(ctx)):
        async def op(work: Operation) -> None:
            return None

        await locked(ctx, key_id, study_id, op)
        swept += 1
    return swept
