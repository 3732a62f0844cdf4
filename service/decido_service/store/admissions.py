"""The admissions concern: usage counters, judged by the admission rule
(:mod:`~decido_service.store.admission_rule`) exactly under any concurrency.

:func:`admit` runs inside the caller's write transaction (an admission batch, or a run
enqueued with its count, :meth:`~decido_service.store.runs.Runs.enqueue`):

1. one ``SELECT`` of the revocations of the batch's keys;
2. one ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` of the batch's *total* per counter,
   its rows sorted by ``(name, subject, window, window_start)``; what it returns minus the
   batch's total is each counter's count before the batch. On PostgreSQL the UPSERT also
   **locks every counter row of the batch** (those only read, gates and observed counters,
   are written with nothing added) until the transaction ends; as every batch locks its
   rows in the same order, two batches never deadlock. On SQLite the transaction holds
   the file's write lock already, and counters only read are read;
3. the requests are judged in order from those counts, each against what the ones before
   it left (:func:`~decido_service.store.admission_rule.judge`), exactly as if they came
   one at a time;
4. only when some request was refused, one statement per counter takes back the
   increments the refused requests did not earn.

So the common case is two statements and a commit, however many requests the batch holds.
A revoked (or unknown) key's request is left out of the totals and refused with
``revoked_at`` set. Old minute and hour rows are deleted by :meth:`Admissions.prune`,
a scheduled job (:meth:`~decido_service.store.Store.start_pruning`), never by an admission.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from decido_service.store.admission_rule import (
    PRUNE_GRACE,
    Ident,
    Prepared,
    batch_totals,
    check_specs,
    counter_state,
    increment,
    judge,
    logged,
    prepare,
    window_bounds,
)
from decido_service.store.decisions import DecisionLog
from decido_service.store.dialect import Database, Dialect, Tx
from decido_service.store.records import (
    Admission,
    AdmissionRequest,
    CounterSpec,
    CounterState,
    DecisionEntry,
    iso_utc,
)

__all__ = ["Admissions", "admit"]

_COUNT = ('SELECT count FROM counters WHERE name = ? AND subject = ? AND "window" = ?'
          " AND window_start = ?")
_TAKE_BACK = ('UPDATE counters SET count = count - ? WHERE name = ? AND subject = ?'
              ' AND "window" = ? AND window_start = ?')


class Admissions:
    """Counting requests against their limits, on a database, writing the decision log
    ``log``."""

    def __init__(self, database: Database, log: DecisionLog) -> None:
        self.db = database
        self.log = log

    async def admit_many(self, requests: Sequence[AdmissionRequest],
                         decisions: Sequence[DecisionEntry] = ()) -> list[Admission]:
        """Judge each request in order (the admission rule) and commit the admitted ones'
        increments together (and, with ``key_id``, refuse a revoked key's request);
        ``decisions``, and the ``log`` of every admitted request, are written to the
        decision log in the same transaction
        (:func:`~decido_service.store.admission_rule.logged`)."""
        prepared = prepare(requests)
        if not prepared and not decisions:
            return []
        dialect = self.db.dialect

        async def body(tx: Tx) -> list[Admission]:
            admissions = await admit(tx, dialect, prepared)
            await self.log.append(tx, logged(requests, admissions, decisions))
            return admissions

        return await self.db.write(body)

    async def peek(self, specs: Sequence[CounterSpec], now: float) -> list[CounterState]:
        """Current states of ``specs`` without counting."""
        checked = check_specs(specs)
        bounds = [window_bounds(s.window, now) for s in checked]

        async def body(tx: Tx) -> list[CounterState]:
            return [counter_state(s, await _count(tx, (s.name, s.subject, s.window, b[0])), b)
                    for s, b in zip(checked, bounds, strict=True)]

        return await self.db.read(body)

    async def prune(self, now: float) -> int:
        """Delete minute and hour counter rows whose window ended more than
        :data:`~decido_service.store.admission_rule.PRUNE_GRACE` seconds before ``now``
        (month rows are kept as the usage record); how many."""
        return await self.db.write(lambda tx: tx.execute(
            """DELETE FROM counters WHERE "window" <> 'month' AND window_end < ?""",
            int(now) - PRUNE_GRACE))


async def admit(tx: Tx, dialect: Dialect, prepared: Sequence[Prepared]) -> list[Admission]:
    """Judge every request of the batch in order and write what the admitted ones count
    (module docs), inside the caller's write transaction."""
    key_ids = {item[2] for item in prepared if item[2] is not None}
    revoked = await _revocations(tx, key_ids, prepared[0][1] if prepared else 0.0)
    totals = batch_totals(prepared, revoked)  # ident -> [window end, amount]
    upserted = sorted(ident for ident, total in totals.items()
                      if total[1] or dialect.row_locks)
    used: dict[Ident, int] = {}
    if upserted:
        flat: list[Any] = []
        for ident in upserted:
            flat += [*ident, *totals[ident]]
        for name, subject, window, start, after in await tx.fetch(_upsert_sql(len(upserted)),
                                                                  *flat):
            ident = (name, subject, window, start)
            used[ident] = after - totals[ident][1]  # the count before this batch
    for ident in totals:
        if ident not in used:  # only read (SQLite)
            used[ident] = await _count(tx, ident)
    out: list[Admission] = []
    refused = False
    for specs, _, key_id, bounds in prepared:  # (plain loops: this runs for every request)
        idents = [(s.name, s.subject, s.window, bounds[i][0]) for i, s in enumerate(specs)]
        if key_id is not None and key_id in revoked:
            values = [used[i] if i in used else await _count(tx, i) for i in idents]
            out.append(Admission(False, [counter_state(s, v, b) for s, v, b in zip(
                specs, values, bounds, strict=True)], None, revoked[key_id]))
            continue
        admission = judge(specs, [used[i] for i in idents], bounds)
        if admission.admitted:
            counters = admission.counters
            for i, ident in enumerate(idents):
                used[ident] = counters[i].used
        else:
            refused = True
        out.append(admission)
    if refused:  # take back what the refused requests added to the totals
        unearned = {ident: total[1] for ident, total in totals.items()}
        for (specs, _, _, bounds), admission in zip(prepared, out, strict=True):
            if admission.admitted:
                for i, spec in enumerate(specs):
                    unearned[(spec.name, spec.subject, spec.window, bounds[i][0])] -= \
                        increment(spec)
        await tx.executemany(_TAKE_BACK, [(amount, *ident) for ident, amount in unearned.items()
                                          if amount])
    return out


async def _count(tx: Tx, ident: Ident) -> int:
    """The count of a counter row (0 when it has none)."""
    row = await tx.fetchrow(_COUNT, *ident)
    return 0 if row is None else int(row[0])


async def _revocations(tx: Tx, key_ids: set[str], now: float) -> dict[str, str]:
    """``{key id: revoked_at}`` of the keys that are revoked (or gone: as good as revoked)."""
    if not key_ids:
        return {}
    found = {row[0]: row[1] for row in await tx.fetch(_keys_sql(len(key_ids)), *key_ids)}
    out: dict[str, str] = {}
    for key_id in key_ids:
        if key_id not in found:
            out[key_id] = iso_utc(now)
        elif found[key_id] is not None:
            out[key_id] = found[key_id]
    return out


@lru_cache(maxsize=64)
def _keys_sql(n: int) -> str:
    """``SELECT id, revoked_at`` of ``n`` keys."""
    return f"SELECT id, revoked_at FROM keys WHERE id IN ({', '.join('?' * n)})"


@lru_cache(maxsize=256)
def _upsert_sql(n: int) -> str:
    """The UPSERT of ``n`` counter rows, returning each one's count after it."""
    return ('INSERT INTO counters (name, subject, "window", window_start, window_end, count)'
            " VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?)"] * n)
            + ' ON CONFLICT (name, subject, "window", window_start)'
            " DO UPDATE SET count = counters.count + excluded.count"
            ' RETURNING name, subject, "window", window_start, count')
