"""Suggesting trials and their leases: ``suggest``, ``heartbeat`` and ``abandon``
(docs/studies.md, "Over HTTP"; an active trial whose lease ran out is failed by
:meth:`~decido_service.studies.operation.Operation.sweep` in the next change)."""

from __future__ import annotations

from typing import Any

import orjson

from decido_service.errors import ServiceError
from decido_service.store import iso_utc
from decido_service.studies.operation import Context, Operation, check_number, locked
from decido_service.studies.replay import ask_entry
from decido_service.studies.views import trial_view
from decido_service.types.studies import SuggestAnswer, SuggestRequest, Trial

__all__ = ["abandon", "active", "heartbeat", "suggest"]


async def suggest(ctx: Context, key_id: str, study_id: str, req: SuggestRequest
                  ) -> SuggestAnswer:
    """Hand out trials: a ``client_id``'s active trials again (leases renewed), else
    queued points first, then the engine's; 409 ``study_finished`` when the study takes
    no more suggestions."""
    async def op(work: Operation) -> list[dict[str, Any]]:
        stx, until = work.stx, work.now + work.lease
        if req.client_id is not None:
            held = await stx.trials("state = 'active' AND client_id = ?", req.client_id)
            if held:
                await stx.update_trials([(int(r["number"]), {"lease_until": until})
                                         for r in held])
                return [{**r, "lease_until": until} for r in held]  # no transition
        if work.state != "active":
            raise ServiceError("study_finished", f"study {study_id} is {work.state}: it "
                                                 "makes no more suggestions")
        out = await stx.trials("state = 'queued'", limit=req.count)
        given = {"state": "active", "client_id": req.client_id, "lease_until": until}
        await stx.update_trials([(int(r["number"]), given) for r in out])
        work.move("queued", "active", len(out))
        out = [{**r, **given} for r in out]
        rest = req.count - len(out)
        left = None if work.study.max_trials is None else work.study.max_trials - work.asked
        if rest and left is not None:
            rest = min(rest, left)
        if rest > 0:
            asked = await stx.compute(lambda: work.study.ask(rest))
            work.entries.append(ask_entry(rest))
            work.cached.asked += len(asked)
            rows = [work.new_row(number=work.number(), lib=t.number, state="active",
                                 x=orjson.dumps(t.x.tolist()).decode(),
                                 variables=orjson.dumps(t.variables).decode(),
                                 client_id=req.client_id, lease_until=until,
                                 created_at=iso_utc(work.now)) for t in asked]
            await stx.insert_trials(rows)
            work.move(None, "active", len(rows))
            out += rows
        for row in out:
            work.trial_event(row)
        if not out:
            raise ServiceError("study_finished", f"study {study_id} suggested its "
                                                 f"max_trials={work.study.max_trials} trials")
        return out

    rows = await locked(ctx, key_id, study_id, op)
    return SuggestAnswer(trials=[trial_view(r) for r in rows])


async def active(work: Operation, study_id: str, number: int) -> dict[str, Any]:
    """The active trial ``number``: 404 for none, 409 ``trial_finished`` when it is not
    active."""
    found = await work.stx.trials("number = ?", number)
    if not found:
        raise ServiceError("not_found", f"study {study_id} has no trial {number}")
    if found[0]["state"] != "active":
        raise ServiceError("trial_finished", f"trial {number} of study {study_id} is "
                                             f"{found[0]['state']}, not active")
    return found[0]


async def heartbeat(ctx: Context, key_id: str, study_id: str, number: int) -> Trial:
    """Renew an active trial's lease."""
    check_number(study_id, number)
    async def op(work: Operation) -> dict[str, Any]:
        row = await active(work, study_id, number)
        until = work.now + work.lease
        await work.stx.update_trials([(number, {"lease_until": until})])
        return {**row, "lease_until": until}

    return trial_view(await locked(ctx, key_id, study_id, op))


async def abandon(ctx: Context, key_id: str, study_id: str, number: int) -> Trial:
    """Give an active trial up: ``abandoned`` (told failed), never suggested again."""
    check_number(study_id, number)
    async def op(work: Operation) -> dict[str, Any]:
        row = await active(work, study_id, number)
        return await work.finish(row, "abandoned", None, None, "abandoned")

    return trial_view(await locked(ctx, key_id, study_id, op))
