"""Telling trials their results: one (``tell``), several in one transaction
(``tell_many``), points added told or queued (``add_trials``), and intermediate values
with early stopping (``report``) (docs/studies.md, "Over HTTP")."""

from __future__ import annotations

import statistics
from typing import Any

import orjson

from decido.errors import StudyError
from decido_service.errors import ServiceError, fault, invalid
from decido_service.studies.leases import active
from decido_service.studies.operation import (
    FINISHED,
    Context,
    Operation,
    check_number,
    locked,
)
from decido_service.studies.views import trial_view
from decido_service.types.studies import (
    ReportAnswer,
    Trial,
    TrialList,
    TrialReport,
    TrialsAdd,
    TrialsTell,
    TrialTell,
)

__all__ = ["add_trials", "report", "tell", "tell_many"]

#: the library's message codes that are faults of a tell's body, by the member at fault
_VALUE_CODES = {"invalid_values": "/value", "missing_metric": "/metrics",
                "invalid_point": "/variables"}


def _tell_faults(work: Operation, item: TrialTell, at: str) -> list[dict[str, Any]]:
    """The faults of a tell's body that need no engine (value count, state)."""
    m = len(work.study.objectives)
    if item.state != "completed":
        if item.value is not None or item.values is not None:
            return [fault(at + ("/value" if item.value is not None else "/values"),
                          "invalid_values", f"a {item.state} trial is told without values")]
        return []
    if (item.value is None) == (item.values is None):
        return [fault(at or "", "invalid_values",
                      "give value (one objective) or values (one per objective)")]
    got = [item.value] if item.values is None else item.values
    if len(got) != m:
        return [fault(at + ("/value" if item.values is None else "/values"), "invalid_values",
                      f"the study has {m} objective{'s' if m > 1 else ''}: tell "
                      f"{'value' if m == 1 else f'{m} values'}")]
    return []


async def _tell_row(work: Operation, study_id: str, item: TrialTell, number: int, at: str
                    ) -> dict[str, Any]:
    """Tell one trial (faults raised as :class:`ServiceError`)."""
    found = await work.stx.trials("number = ?", number)
    if not found:
        raise ServiceError("not_found", f"study {study_id} has no trial {number}")
    row = found[0]
    if row["state"] in FINISHED:
        raise ServiceError("trial_finished", f"trial {number} of study {study_id} is already "
                                             f"{row['state']}")
    faults = _tell_faults(work, item, at)
    if faults:
        raise invalid(faults)
    values: list[float] | None = None
    if item.state == "completed":
        values = list(item.values) if item.values is not None else \
            [item.value] if item.value is not None else None
    try:
        return await work.finish(row, item.state, values, item.metrics, item.reason)
    except StudyError as exc:
        raise invalid([fault(at + _VALUE_CODES.get(exc.code, ""), exc.code,
                             exc.message)]) from None


async def tell(ctx: Context, key_id: str, study_id: str, number: int, req: TrialTell
               ) -> Trial:
    """Complete one trial (value(s), or failed / infeasible); 409 ``trial_finished``."""
    check_number(study_id, number)
    async def op(work: Operation) -> dict[str, Any]:
        return await _tell_row(work, study_id, req, number, "")

    return trial_view(await locked(ctx, key_id, study_id, op))


async def tell_many(ctx: Context, key_id: str, study_id: str, req: TrialsTell) -> TrialList:
    """Complete several trials in one transaction: every bad item named by its pointer
    and nothing applied."""
    async def op(work: Operation) -> list[dict[str, Any]]:
        numbers = [i.number for i in req.trials]
        marks = ", ".join("?" * len(set(numbers)))
        rows = {int(r["number"]): r for r in
                await work.stx.trials(f"number IN ({marks})", *set(numbers))}
        faults: list[dict[str, Any]] = []
        seen: set[int] = set()
        for k, item in enumerate(req.trials):
            at = f"/trials/{k}"
            row = rows.get(item.number)
            if row is None:
                faults.append(fault(at + "/number", "not_found",
                                    f"study {study_id} has no trial {item.number}"))
            elif row["state"] in FINISHED or item.number in seen:
                faults.append(fault(at + "/number", "trial_finished",
                                    f"trial {item.number} is already finished"))
            faults += _tell_faults(work, item, at)
            seen.add(item.number)
        if faults:
            raise invalid(faults)
        out = []
        for k, item in enumerate(req.trials):
            out.append(await _tell_row(work, study_id, item, item.number, f"/trials/{k}"))
        return out

    rows = await locked(ctx, key_id, study_id, op)
    return TrialList(data=[trial_view(r) for r in rows], has_more=False)


async def add_trials(ctx: Context, key_id: str, study_id: str, req: TrialsAdd) -> TrialList:
    """Add points: told ones (warm starts) or ``queued`` ones (suggested first; 409
    ``study_finished`` for a study that is not active); every bad item named by its
    pointer and nothing applied."""
    async def op(work: Operation) -> list[dict[str, Any]]:
        space = work.study.space
        if work.state != "active" and any(i.state == "queued" for i in req.trials):
            raise ServiceError("study_finished", f"study {study_id} is {work.state}: it "
                                                 "suggests nothing, so it takes no queued "
                                                 "points (told ones it does)")
        faults: list[dict[str, Any]] = []
        points: list[Any] = []
        for k, item in enumerate(req.trials):
            at = f"/trials/{k}"
            if (item.variables is None) == (item.x is None):
                faults.append(fault(at, "invalid_point", "give variables (by name) or x"))
                points.append(None)
                continue
            given: dict[str, Any] | list[float] = \
                item.variables if item.variables is not None else item.x or []
            try:
                points.append(space.point(given))
            except StudyError as exc:
                member = "/variables" if item.variables is not None else "/x"
                faults.append(fault(at + member, exc.code, exc.message))
                points.append(None)
            if item.state == "queued":
                if item.value is not None or item.values is not None:
                    faults.append(fault(at + "/state", "invalid_values",
                                        "a queued point is told without values"))
            else:
                faults += _tell_faults(work, TrialTell(value=item.value, values=item.values,
                                                       state=item.state), at)
        if faults:
            raise invalid(faults)
        out = []
        for k, (item, x) in enumerate(zip(req.trials, points, strict=True)):
            variables = orjson.dumps(space.by_name(x)).decode()
            row = work.queued(x.tolist(), variables)
            await work.stx.insert_trials([row])
            if item.state != "queued":  # told at once: its event is the told state's
                tell_req = TrialTell(value=item.value, values=item.values,
                                     metrics=item.metrics, state=item.state)
                row = await _tell_row(work, study_id, tell_req, row["number"], f"/trials/{k}")
            else:
                work.trial_event(row)
            out.append(row)
        return out

    rows = await locked(ctx, key_id, study_id, op)
    return TrialList(data=[trial_view(r) for r in rows], has_more=False)


def _worse(value: float, others: list[float], goal: str) -> bool:
    median = statistics.median(others)
    return value > median if goal == "minimize" else value < median


async def report(ctx: Context, key_id: str, study_id: str, number: int, req: TrialReport
                 ) -> ReportAnswer:
    """Store an intermediate value (renewing the lease) and answer whether the trial
    should stop: with the median rule, when its value at ``step`` is worse than the
    median of the other trials' at that step and at least ``min_trials`` reported there;
    the trial then ends ``early_stopped`` (told to the engine as failed)."""
    check_number(study_id, number)
    async def op(work: Operation) -> bool:
        row = await active(work, study_id, number)
        steps: dict[str, float] = {} if row["steps"] is None else orjson.loads(row["steps"])
        steps[str(req.step)] = req.value
        until = work.now + work.lease
        await work.stx.update_trials([(number, {"steps": orjson.dumps(steps).decode(),
                                                "lease_until": until})])
        rule = work.spec["early_stopping"]
        if rule is None:
            return False
        others = [float(s[str(req.step)]) for s in
                  (orjson.loads(r["steps"]) for r in
                   await work.stx.trials("steps IS NOT NULL AND number <> ?", number))
                  if str(req.step) in s]
        if len(others) < int(rule["min_trials"]):
            return False
        goal = work.study.objectives[0]["goal"]
        if not _worse(req.value, others, goal):
            return False
        await work.finish({**row, "steps": orjson.dumps(steps).decode()}, "early_stopped",
                          None, None, f"median rule at step {req.step}")
        return True

    return ReportAnswer(should_stop=await locked(ctx, key_id, study_id, op))
