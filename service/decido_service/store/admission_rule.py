"""The admission rule and the steps a backend takes to apply it to a batch.

Counters are identified by ``(name, subject, window)``: ``name`` such as ``"decide.minute"``,
``subject`` a key id or a client address, ``window`` ``"minute"``, ``"hour"`` or
``"month"`` (UTC calendar month, :func:`window_bounds`).

**The admission rule** (:func:`judge`, which every backend applies): a request is a list of
:class:`CounterSpec`; each spec is

- *counted* (``amount`` > 0): it passes when ``limit is None`` or ``used + amount <= limit``;
- a *gate* (``gate=True``): never incremented; it passes when ``limit is None`` or
  ``used < limit`` (there is room for one more);
- *observed* (``amount == 0``, not a gate): never incremented, always passes.

A request is admitted when every spec passes; then every counted spec is incremented, all
in one atomic step. Otherwise nothing is written and ``refused`` is the first spec that did
not pass. Requests of one :meth:`Admissions.admit_many` call are judged in order, each against
the counts the ones before it left, and committed together: the service's group commit.
A backend must make this exact under any concurrency (SQLite: one write transaction;
a server database: row locks on the counters of the batch).

:func:`judge` is the rule for one request; :func:`prepare` checks a batch's specs
(:func:`check_specs`) and computes their windows (:func:`window_bounds`);
:func:`batch_totals` is what a backend writes (and locks) in one statement before it
judges the batch in order; :func:`logged` the decision-log rows the batch writes.
"""

from __future__ import annotations

import calendar
from collections.abc import Container, Sequence
from datetime import datetime, timezone
from functools import lru_cache

from decido_service.store.records import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionEntry,
)

__all__ = [
    "PRUNE_GRACE",
    "WINDOWS",
    "Ident",
    "Prepared",
    "batch_totals",
    "check_specs",
    "counter_state",
    "increment",
    "judge",
    "logged",
    "prepare",
    "window_bounds",
]

WINDOWS: tuple[str, ...] = ("minute", "hour", "month")
#: minute and hour counter rows this many seconds past their window's end are pruned (both
#: backends' ``prune``)
PRUNE_GRACE = 3600


def logged(requests: Sequence[AdmissionRequest], admissions: Sequence[Admission],
           decisions: Sequence[DecisionEntry]) -> list[DecisionEntry]:
    """The decision-log rows an :meth:`Admissions.admit_many` call writes: ``decisions``, then
    the ``log`` of each admitted request."""
    return [*decisions, *(r.log for r, a in zip(requests, admissions, strict=True)
                          if r.log is not None and a.admitted)]


def judge(specs: Sequence[CounterSpec], used: Sequence[int],
          bounds: Sequence[tuple[int, int]]) -> Admission:
    """The admission rule (module docs) for one request whose counters stand at ``used``
    in the windows ``bounds``: the states after it when admitted, before it when not.
    (Run for every request of every batch: plain loops, no ``zip(strict=True)``, whose
    keyword parsing cost more than the rule.)"""
    n = len(specs)
    if len(used) != n or len(bounds) != n:
        raise ValueError("judge: specs, used and bounds differ in length")
    refused_at = -1
    for i in range(n):
        spec = specs[i]
        limit = spec.limit
        if limit is not None and ((used[i] >= limit) if spec.gate
                                  else (used[i] + spec.amount > limit)):
            refused_at = i
            break
    admitted = refused_at < 0
    states = []
    for i in range(n):
        spec = specs[i]
        states.append(counter_state(spec, used[i] + spec.amount if admitted and not spec.gate
                                    else used[i], bounds[i]))
    return Admission(admitted, states, None if admitted else states[refused_at])


#: one request of a batch as a backend prepares it: its specs, the time it is judged at,
#: its key id, its counters' windows
Prepared = tuple[list[CounterSpec], float, "str | None", list[tuple[int, int]]]
#: a counter row: name, subject, window, window start
Ident = tuple[str, str, str, int]


def increment(spec: CounterSpec) -> int:
    """What admitting ``spec`` adds to its counter (nothing for a gate or an observer)."""
    return 0 if spec.gate else spec.amount


def batch_totals(prepared: Sequence[Prepared], skip: Container[str]) -> dict[Ident, list[int]]:
    """``{counter row: [window end, total increment]}`` of a batch, the requests whose key
    id is in ``skip`` (revoked keys) left out: what a backend writes (and locks) in one
    statement before it judges the requests in order."""
    totals: dict[Ident, list[int]] = {}
    for specs, _, key_id, bounds in prepared:
        if key_id is not None and key_id in skip:
            continue
        for i, spec in enumerate(specs):  # bounds[i]: spec i's window (prepare())
            start, end = bounds[i]
            total = totals.get((spec.name, spec.subject, spec.window, start))
            if total is None:
                total = totals[(spec.name, spec.subject, spec.window, start)] = [end, 0]
            if not spec.gate:
                total[1] += spec.amount
    return totals


def counter_state(spec: CounterSpec, used: int, bounds: tuple[int, int]) -> CounterState:
    """The state of ``spec``'s counter at ``used`` in the window ``bounds``."""
    limit = spec.limit
    remaining = None if limit is None else (limit - used if used < limit else 0)
    return CounterState(spec.name, limit, used, remaining, bounds[1], bounds[0], bounds[1])


def check_specs(specs: Sequence[CounterSpec]) -> list[CounterSpec]:
    """``specs`` as a list, or ``ValueError`` for a malformed or repeated spec."""
    out = [s if type(s) is CounterSpec else CounterSpec(*s) for s in specs]
    for s in out:
        if s.window not in WINDOWS:
            raise ValueError(f"unknown counter window {s.window!r}; expected one of {WINDOWS}")
        amount, limit = s.amount, s.limit
        if type(amount) is not int and not isinstance(amount, int) or amount < 0:
            raise ValueError(f"counter {s.name!r}: amount must be an integer >= 0")
        if limit is not None and (type(limit) is not int and not isinstance(limit, int)
                                  or limit < 0):
            raise ValueError(f"counter {s.name!r}: limit must be an integer >= 0 or None")
    if len(out) > 1 and len({(s.name, s.subject, s.window) for s in out}) < len(out):
        seen: set[tuple[str, str, str]] = set()
        for s in out:
            if (s.name, s.subject, s.window) in seen:
                raise ValueError(f"counter {s.name!r} for {s.subject!r} appears twice")
            seen.add((s.name, s.subject, s.window))
    return out


def prepare(requests: Sequence[AdmissionRequest]) -> list[Prepared]:
    """The requests of an :meth:`Admissions.admit_many` as a backend judges them: specs
    checked (:func:`check_specs`), the time as a float, the key id, each counter's window
    (:func:`window_bounds`, computed once per window and second of the batch)."""
    windows: dict[tuple[str, int], tuple[int, int]] = {}
    out: list[Prepared] = []
    for specs, now, key_id, _ in requests:
        checked = check_specs(specs)
        when = float(now)
        second = int(when // 1)
        bounds = []
        for spec in checked:
            found = windows.get((spec.window, second))
            if found is None:
                found = windows[(spec.window, second)] = window_bounds(spec.window, second)
            bounds.append(found)
        out.append((checked, when, key_id, bounds))
    return out


def window_bounds(window: str, now: float) -> tuple[int, int]:
    """``(start, end)`` in epoch seconds of the UTC ``window`` containing ``now``.

    ``minute`` and ``hour`` are floors of the epoch; ``month`` is the calendar month, so
    it is 28 to 31 days long and December rolls over into January of the next year."""
    t = int(now // 1)
    if window == "minute":
        start = t - t % 60
        return start, start + 60
    if window == "hour":
        start = t - t % 3600
        return start, start + 3600
    if window == "month":
        return _month_bounds(t // 60)  # months start and end on whole minutes
    raise ValueError(f"unknown counter window {window!r}; expected one of {WINDOWS}")


@lru_cache(maxsize=64)
def _month_bounds(minute: int) -> tuple[int, int]:
    dt = datetime.fromtimestamp(minute * 60, tz=timezone.utc)
    year, month = dt.year, dt.month
    start = calendar.timegm((year, month, 1, 0, 0, 0))
    year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return start, calendar.timegm((year, month, 1, 0, 0, 0))
