"""The locked operation every change of a study runs in (docs/studies.md, "Over HTTP").

:func:`locked` runs an operation in one store transaction holding the study's row lock,
in which the worker's :class:`decido.Study` is replayed up to the store's log, active
trials whose lease ran out are failed (``lease_expired``) and their points queued again;
the operation (an :class:`Operation`'s caller) applies its asks and tells, and
:meth:`Operation.flush` appends their log entries and events and writes the trials,
counts and summary. So suggest and tell from many clients and nodes are serialised per
study, lose no tell and never give one trial to two clients. A key sees only its own
studies (another key's, an unknown and a malformed id: 404 ``not_found``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec
import orjson

from decido_service.errors import ServiceError
from decido_service.store import Store, StudyTx, iso_utc
from decido_service.store.studies import TRIAL_FIELDS
from decido_service.store.webhooks import STUDY_COMPLETED
from decido_service.studies.replay import Cached, StudyCache, synced, tell_entry
from decido_service.studies.views import study_view, trial_json
from decido_service.types.studies import MAX_NUMBER, STUDY_ID_PATTERN

__all__ = ["FINISHED", "Context", "Operation", "best_event", "check_number", "clock",
           "finished", "locked", "not_found", "valid_id"]

T = TypeVar("T")
_STUDY_ID = re.compile(STUDY_ID_PATTERN)
#: the states of a finished trial
FINISHED = frozenset(("completed", "infeasible", "failed", "early_stopped", "abandoned"))


@dataclass
class Context:
    """What the operations take: the store, the worker's replayed studies and the events
    a study keeps (its newest; :attr:`Settings.study_events
    <decido_service.config.Settings.study_events>`)."""

    store: Store
    cache: StudyCache
    events_kept: int | None = None


def valid_id(study_id: str) -> bool:
    """Whether ``study_id`` has a study id's shape (any other is 404 at once)."""
    return _STUDY_ID.fullmatch(study_id) is not None


def not_found(study_id: str) -> ServiceError:
    """404 ``not_found`` for ``study_id``."""
    return ServiceError("not_found", f"no study {study_id!r} of this key")


def check_number(study_id: str, number: int) -> None:
    """404 for a trial number no trial can have (the store holds up to 2**53)."""
    if not 0 <= number <= MAX_NUMBER:
        raise ServiceError("not_found", f"study {study_id} has no trial {number}")


def clock(ctx: Context) -> float:
    """The store's clock (epoch seconds)."""
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


class Operation:
    """One operation on a locked, replayed study: collects log entries, trial changes
    and count moves, written by :meth:`flush`."""

    def __init__(self, stx: StudyTx, cached: Cached, spec: dict[str, Any],
                 now: float, events_kept: int | None = None) -> None:
        self.stx, self.cached, self.spec, self.now = stx, cached, spec, now
        self.events_kept = events_kept
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
                self.asked >= max_trials:
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
        await self.stx.add_events(self.events, self.events_kept)
        await self.stx.save(changes)
        if done:  # its webhook in the same transaction as the change that finished it
            payload = orjson.dumps(msgspec.to_builtins(study_view(self.stx.row))).decode()
            wall = time.time()  # the delivery worker's clock (settings' may be fixed)
            await self.stx.webhook(STUDY_COMPLETED, payload, iso_utc(wall), wall)

    def _several(self) -> bool:
        return len(self.study.objectives) > 1

    @property
    def asked(self) -> int:
        """The trials the engine was asked for so far."""
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


async def locked(ctx: Context, key_id: str, study_id: str,
                  op: Callable[[Operation], Awaitable[T]]) -> T:
    """``op`` on the locked, replayed, swept study (module docs); 404 for no such study.
    Any failure forgets the worker's copy (the transaction rolled back)."""
    if not valid_id(study_id):
        raise not_found(study_id)
    now = clock(ctx)

    async def body(stx: StudyTx) -> tuple[T]:
        spec = orjson.loads(stx.row["spec"])
        cached = await synced(stx, ctx.cache, spec["library"])
        work = Operation(stx, cached, spec, now, ctx.events_kept)
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
        raise not_found(study_id)
    result: T = found[0]
    return result
