"""What the ``/v1/studies`` endpoints do (docs/studies.md, "Over HTTP").

Every change of a study runs in :func:`_locked`: one store transaction holding the study's
row lock, in which the worker's :class:`decido.Study` is replayed up to the store's log,
active trials whose lease ran out are failed (``lease_expired``) and their points queued
again, the operation applies its asks and tells, appends their log entries and writes the
trials, counts and summary. So suggest and tell from many clients and nodes are serialised
per study, lose no tell and never give one trial to two clients. A key sees only its own
studies (another key's, an unknown and a malformed id: 404 ``not_found``).
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec
import orjson

import decido
from decido.errors import EngineError, StudyError
from decido_service.errors import ServiceError, fault, invalid
from decido_service.store import (
    Admission,
    AdmissionRequest,
    Store,
    StudyTx,
    iso_utc,
    ordered_id,
)
from decido_service.store.studies import TRIAL_FIELDS
from decido_service.store.webhooks import STUDY_COMPLETED
from decido_service.studies.replay import Cached, StudyCache, ask_entry, synced, tell_entry
from decido_service.studies.views import study_view, trial_json, trial_view
from decido_service.types.studies import (
    MAX_NUMBER,
    STUDY_ID_PATTERN,
    ReportAnswer,
    Study,
    StudyCreate,
    StudyList,
    StudyPage,
    SuggestAnswer,
    SuggestRequest,
    Trial,
    TrialList,
    TrialPage,
    TrialReport,
    TrialsAdd,
    TrialsTell,
    TrialTell,
)

__all__ = ["FINISHED", "Caps", "Context", "Created", "abandon", "add_trials", "best_event",
           "create", "delete", "find", "finished", "heartbeat", "page", "report", "stop",
           "suggest", "sweep", "tell", "tell_many", "trial", "trials"]

T = TypeVar("T")
_encode = msgspec.json.Encoder().encode
_STUDY_ID = re.compile(STUDY_ID_PATTERN)
#: the states of a finished trial
FINISHED = frozenset(("completed", "infeasible", "failed", "early_stopped", "abandoned"))
#: the library's message codes that are faults of a tell's body, by the member at fault
_VALUE_CODES = {"invalid_values": "/value", "missing_metric": "/metrics",
                "invalid_point": "/variables"}


@dataclass
class Context:
    """What the operations take: the store and the worker's replayed studies."""

    store: Store
    cache: StudyCache


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


def _not_found(study_id: str) -> ServiceError:
    return ServiceError("not_found", f"no study {study_id!r} of this key")


def _numbered(study_id: str, number: int) -> None:
    """404 for a trial number no trial can have (the store holds up to 2**53)."""
    if not 0 <= number <= MAX_NUMBER:
        raise ServiceError("not_found", f"study {study_id} has no trial {number}")


def _now(ctx: Context) -> float:
    return ctx.store.database.clock()


def finished(state: str, counts: dict[str, int]) -> bool:
    """Whether a study is finished: it takes no more suggestions (``completed`` or
    ``stopped``) and every trial is finished (none ``active`` or ``queued``)."""
    return state != "active" and not counts.get("active", 0) and not counts.get("queued", 0)


def best_event(summary: str, several: bool) -> str:
    """The data of a ``best`` event from a study's summary: ``{"best": Trial | null}``
    for one objective, ``{"front_size", "hypervolume"}`` for several."""
    found = orjson.loads(summary)
    if several:
        return orjson.dumps({"front_size": len(found.get("pareto") or []),
                             "hypervolume": found.get("hypervolume")}).decode()
    return orjson.dumps({"best": found.get("best")}).decode()


# ---- creating and reading ----

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
    now = _now(ctx)
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
    row = await ctx.store.studies.get(key_id, study_id) if _STUDY_ID.fullmatch(study_id) \
        else None
    if row is None:
        raise _not_found(study_id)
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
        if _STUDY_ID.fullmatch(study_id) else None
    if rows is None:
        raise _not_found(study_id)
    return TrialList(data=[trial_view(r) for r in rows[:query.limit]],
                     has_more=len(rows) > query.limit)


async def trial(ctx: Context, key_id: str, study_id: str, number: int) -> Trial:
    """One trial of a study; 404 for no such study or trial."""
    _numbered(study_id, number)
    rows = await ctx.store.studies.trials(key_id, study_id, 1, number - 1, None) \
        if _STUDY_ID.fullmatch(study_id) else None
    if rows is None:
        raise _not_found(study_id)
    if not rows or rows[0]["number"] != number:
        raise ServiceError("not_found", f"study {study_id} has no trial {number}")
    return trial_view(rows[0])


# ---- the locked operation ----

class _Op:
    """One operation on a locked, replayed study: collects log entries, trial changes
    and count moves, written by :meth:`flush`."""

    def __init__(self, stx: StudyTx, cached: Cached, spec: dict[str, Any],
                 now: float) -> None:
        self.stx, self.cached, self.spec, self.now = stx, cached, spec, now
        self.study = cached.study
        self.entries: list[str] = []
        self.counts: dict[str, int] = orjson.loads(stx.row["counts"])
        self.told = False
        self.state: str = stx.row["state"]
        self.was_finished = finished(stx.row["state"], self.counts)
        self.events: list[tuple[str, str]] = []

    @property
    def lease(self) -> float:
        return float(self.spec["trial_lease"])

    def move(self, before: str | None, after: str, n: int = 1) -> None:
        """Count ``n`` trials moved from ``before`` (``None``: new) to ``after``."""
        if before is not None:
            self.counts[before] = self.counts.get(before, 0) - n
        self.counts[after] = self.counts.get(after, 0) + n

    def number(self) -> int:
        """The next trial number."""
        n = int(self.stx.row["next_number"])
        self.stx.row["next_number"] = n + 1
        return n

    def trial_event(self, row: dict[str, Any]) -> None:
        """The ``trial`` event of a trial's new state (``row``: as written)."""
        self.events.append(("trial", orjson.dumps(trial_json(row)).decode()))

    async def sweep(self) -> int:
        """Fail the active trials whose lease ran out (``lease_expired``) and, while the
        study is active, queue their points again; how many."""
        expired = await self.stx.trials("state = 'active' AND lease_until < ?", self.now)
        if not expired:
            return 0
        for row in expired:
            await self.finish(row, "failed", None, None, "lease_expired")
        if self.state == "active":  # a stopped study suggests nothing: its points stay told
            again = [self.queued(orjson.loads(r["x"]), r["variables"]) for r in expired]
            await self.stx.insert_trials(again)
            for row in again:
                self.trial_event(row)
        return len(expired)

    def queued(self, x: list[float], variables: str) -> dict[str, Any]:
        """A new queued trial's row."""
        self.move(None, "queued")
        return self.new_row(number=self.number(), state="queued", x=orjson.dumps(x).decode(),
                            variables=variables, created_at=iso_utc(self.now))

    def new_row(self, **values: Any) -> dict[str, Any]:
        """A new trial's row: ``values``, the other columns NULL."""
        return {**dict.fromkeys(TRIAL_FIELDS), "study_id": self.stx.row["id"], **values}

    async def finish(self, row: dict[str, Any], state: str, values: list[float] | None,
                     metrics: dict[str, float] | None, reason: str | None) -> dict[str, Any]:
        """Tell the library a trial's end (a queued point not asked: as a point) and write
        it; the trial's row after."""
        told = "failed" if state in ("early_stopped", "abandoned") else state
        lib = row["lib"]
        if lib is not None:
            await self.stx.compute(lambda: self.study.tell(
                int(lib), values=values, state=told, metrics=metrics))
            self.entries.append(tell_entry(int(lib), told, values, metrics))
        else:
            point = orjson.loads(row["variables"]) if self.study.space.named else \
                orjson.loads(row["x"])
            t = await self.stx.compute(lambda: self.study.tell(
                point, values=values, state=told, metrics=metrics))
            lib = t.number
            self.entries.append(tell_entry(point, told, values, metrics))
        change = {"lib": lib, "state": state,
                  "vals": None if values is None else orjson.dumps(values).decode(),
                  "metrics": orjson.dumps(metrics).decode() if metrics else None,
                  "lease_until": None, "reason": reason, "completed_at": iso_utc(self.now)}
        await self.stx.update_trials([(int(row["number"]), change)])
        self.move(row["state"], state)
        self.told = True
        after = {**row, **change}
        self.trial_event(after)
        return after

    async def flush(self) -> None:
        """Append the log and the events, write the counts, the summary, the earliest
        lease and the study's state (``completed`` once ``max_trials`` were asked and
        none is open)."""
        await self.stx.append_log(self.entries)
        open_ = self.counts.get("active", 0) + self.counts.get("queued", 0)
        max_trials = self.study.max_trials
        if self.state == "active" and max_trials is not None and open_ == 0 and \
                self._asked() >= max_trials:
            self.state = "completed"
        leases = await self.stx.trials("state = 'active'", limit=None) \
            if self.counts.get("active", 0) else []
        counts = {k: v for k, v in self.counts.items() if v}
        changes: dict[str, Any] = {
            "counts": orjson.dumps(counts).decode(),
            "next_number": self.stx.row["next_number"], "state": self.state,
            "lease_until": min((r["lease_until"] for r in leases), default=None)}
        if self.told:
            summary = await self._summary()
            if summary != self.stx.row["summary"]:
                changes["summary"] = summary
                self.events.append(("best", best_event(summary, self._several())))
        status = {"id": self.stx.row["id"], "state": self.state, "trials": counts}
        if self.state != self.stx.row["state"]:
            self.events.append(("state", orjson.dumps(status).decode()))
        done = not self.was_finished and finished(self.state, self.counts)
        if done:
            self.events.append(("finished", orjson.dumps(status).decode()))
        await self.stx.add_events(self.events)
        await self.stx.save(changes)
        if done:  # its webhook in the same transaction as the change that finished it
            payload = orjson.dumps(msgspec.to_builtins(study_view(self.stx.row))).decode()
            wall = time.time()  # the delivery worker's clock (settings' may be fixed)
            await self.stx.webhook(STUDY_COMPLETED, payload, iso_utc(wall), wall)

    def _several(self) -> bool:
        return len(self.study.objectives) > 1

    def _asked(self) -> int:
        return self.cached.asked

    async def _summary(self) -> str:
        """The best trial (one objective) or the front and its hypervolume (several), as
        trial JSON."""
        several = self._several()

        def numbers() -> tuple[list[int], float | None]:
            if several:
                front = self.study.pareto
                return [t.number for t in front.trials], front.hypervolume
            best = self.study.best
            return ([] if best is None else [best.number]), None

        libs, hypervolume = await self.stx.compute(numbers)
        if not libs:
            return orjson.dumps({"best": None, "pareto": [] if several else None,
                                 "hypervolume": None}).decode()
        marks = ", ".join("?" * len(libs))
        rows = await self.stx.trials(f"lib IN ({marks})", *libs)
        shown = [trial_json(r) for r in rows]
        return orjson.dumps({"best": None if several else shown[0],
                             "pareto": shown if several else None,
                             "hypervolume": hypervolume}).decode()


async def _locked(ctx: Context, key_id: str, study_id: str,
                  op: Callable[[_Op], Awaitable[T]]) -> T:
    """``op`` on the locked, replayed, swept study (module docs); 404 for no such study.
    Any failure forgets the worker's copy (the transaction rolled back)."""
    if not _STUDY_ID.fullmatch(study_id):
        raise _not_found(study_id)
    now = _now(ctx)

    async def body(stx: StudyTx) -> tuple[T]:
        spec = orjson.loads(stx.row["spec"])
        cached = await synced(stx, ctx.cache, spec["library"])
        work = _Op(stx, cached, spec, now)
        await work.sweep()
        out = await op(work)
        await work.flush()
        cached.length = int(stx.row["log_length"])
        return (out,)

    try:
        found = await ctx.store.studies.mutate(key_id, study_id, body)
    except BaseException:
        ctx.cache.drop(study_id)
        raise
    if found is None:
        raise _not_found(study_id)
    result: T = found[0]
    return result


# ---- suggesting ----

async def suggest(ctx: Context, key_id: str, study_id: str, req: SuggestRequest
                  ) -> SuggestAnswer:
    """Hand out trials: a ``client_id``'s active trials again (leases renewed), else
    queued points first, then the engine's; 409 ``study_finished`` when the study takes
    no more suggestions."""
    async def op(work: _Op) -> list[dict[str, Any]]:
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
        left = None if work.study.max_trials is None else work.study.max_trials - work._asked()
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

    rows = await _locked(ctx, key_id, study_id, op)
    return SuggestAnswer(trials=[trial_view(r) for r in rows])


# ---- telling ----

def _tell_faults(work: _Op, item: TrialTell, at: str) -> list[dict[str, Any]]:
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


async def _tell_row(work: _Op, study_id: str, item: TrialTell, number: int, at: str
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
    _numbered(study_id, number)
    async def op(work: _Op) -> dict[str, Any]:
        return await _tell_row(work, study_id, req, number, "")

    return trial_view(await _locked(ctx, key_id, study_id, op))


async def tell_many(ctx: Context, key_id: str, study_id: str, req: TrialsTell) -> TrialList:
    """Complete several trials in one transaction: every bad item named by its pointer
    and nothing applied."""
    async def op(work: _Op) -> list[dict[str, Any]]:
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

    rows = await _locked(ctx, key_id, study_id, op)
    return TrialList(data=[trial_view(r) for r in rows], has_more=False)


async def add_trials(ctx: Context, key_id: str, study_id: str, req: TrialsAdd) -> TrialList:
    """Add points: told ones (warm starts) or ``queued`` ones (suggested first; 409
    ``study_finished`` for a study that is not active); every bad item named by its
    pointer and nothing applied."""
    async def op(work: _Op) -> list[dict[str, Any]]:
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

    rows = await _locked(ctx, key_id, study_id, op)
    return TrialList(data=[trial_view(r) for r in rows], has_more=False)


# ---- the life of a trial ----

async def _active(work: _Op, study_id: str, number: int) -> dict[str, Any]:
    found = await work.stx.trials("number = ?", number)
    if not found:
        raise ServiceError("not_found", f"study {study_id} has no trial {number}")
    if found[0]["state"] != "active":
        raise ServiceError("trial_finished", f"trial {number} of study {study_id} is "
                                             f"{found[0]['state']}, not active")
    return found[0]


async def heartbeat(ctx: Context, key_id: str, study_id: str, number: int) -> Trial:
    """Renew an active trial's lease."""
    _numbered(study_id, number)
    async def op(work: _Op) -> dict[str, Any]:
        row = await _active(work, study_id, number)
        until = work.now + work.lease
        await work.stx.update_trials([(number, {"lease_until": until})])
        return {**row, "lease_until": until}

    return trial_view(await _locked(ctx, key_id, study_id, op))


async def abandon(ctx: Context, key_id: str, study_id: str, number: int) -> Trial:
    """Give an active trial up: ``abandoned`` (told failed), never suggested again."""
    _numbered(study_id, number)
    async def op(work: _Op) -> dict[str, Any]:
        row = await _active(work, study_id, number)
        return await work.finish(row, "abandoned", None, None, "abandoned")

    return trial_view(await _locked(ctx, key_id, study_id, op))


def _worse(value: float, others: list[float], goal: str) -> bool:
    median = statistics.median(others)
    return value > median if goal == "minimize" else value < median


async def report(ctx: Context, key_id: str, study_id: str, number: int, req: TrialReport
                 ) -> ReportAnswer:
    """Store an intermediate value (renewing the lease) and answer whether the trial
    should stop: with the median rule, when its value at ``step`` is worse than the
    median of the other trials' at that step and at least ``min_trials`` reported there;
    the trial then ends ``early_stopped`` (told to the engine as failed)."""
    _numbered(study_id, number)
    async def op(work: _Op) -> bool:
        row = await _active(work, study_id, number)
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

    return ReportAnswer(should_stop=await _locked(ctx, key_id, study_id, op))


# ---- the life of a study ----

async def stop(ctx: Context, key_id: str, study_id: str) -> Study:
    """Stop a study: no more suggestions; its trials can still complete."""
    async def op(work: _Op) -> None:
        if work.state == "active":
            work.state = "stopped"
            change = {"state": "abandoned", "reason": "study stopped"}
            queued = await work.stx.trials("state = 'queued'")
            await work.stx.update_trials([(int(r["number"]), change) for r in queued])
            work.move("queued", "abandoned", work.counts.get("queued", 0))
            for row in queued:
                work.trial_event({**row, **change})

    await _locked(ctx, key_id, study_id, op)
    return await find(ctx, key_id, study_id)


async def delete(ctx: Context, key_id: str, study_id: str) -> None:
    """Delete a stopped or completed study; 409 ``study_not_stopped`` for an active one."""
    state = await ctx.store.studies.delete(key_id, study_id) \
        if _STUDY_ID.fullmatch(study_id) else None
    if state is None:
        raise _not_found(study_id)
    if state == "active":
        raise ServiceError("study_not_stopped",
                           f"study {study_id} is active; stop it, then delete it")


async def sweep(ctx: Context) -> int:
    """Fail the expired trials of every study (the worker's periodic sweep); how many
    studies were swept."""
    swept = 0
    for key_id, study_id in await ctx.store.studies.leased(_now(ctx)):
        async def op(work: _Op) -> None:
            return None

        await _locked(ctx, key_id, study_id, op)
        swept += 1
    return swept
