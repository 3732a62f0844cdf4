"""Counters on PostgreSQL: the admission rule (:func:`decido_service.store.judge`) with row
locks, exact across any number of nodes and worker processes on one database.

:func:`admit_batch` runs inside the caller's transaction (``READ COMMITTED``):

1. one ``SELECT`` of the revocations of the batch's keys;
2. one ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` of the batch's *total* per counter,
   its rows sorted by ``(name, subject, window, window_start)``. The UPSERT creates missing
   counter rows and **locks every counter row of the batch** until the transaction ends; as
   every batch locks its rows in the same order, two batches never deadlock. What it
   returns minus the batch's total is each counter's count before the batch, and no one
   else can change it until we commit;
3. the requests are judged in order from those counts, each against what the ones before
   it left (:func:`judge`), exactly as if they came one at a time;
4. only when some request was refused, one ``UPDATE`` takes back the increments the
   refused requests did not earn.

So the common case is two statements and a commit, however many requests the batch holds.
A revoked (or unknown) key's request is left out of the totals and refused with
``revoked_at`` set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asyncpg import Connection  # type: ignore[import-untyped]  # no type hints

from decido_service.store.admission_rule import (
    Ident,
    Prepared,
    batch_totals,
    counter_state,
    increment,
    judge,
)
from decido_service.store.records import Admission, CounterSpec, CounterState, iso_utc

__all__ = ["admit_batch", "states"]

_UPSERT = (
    'INSERT INTO counters (name, subject, "window", window_start, window_end, count)'
    " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[],"
    " $6::bigint[]) AS t ORDER BY 1, 2, 3, 4"
    ' ON CONFLICT (name, subject, "window", window_start)'
    " DO UPDATE SET count = counters.count + excluded.count"
    ' RETURNING name, subject, "window", window_start, count'
)
_TAKE_BACK = (
    "UPDATE counters SET count = counters.count - t.amount"
    " FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])"
    ' AS t (name, subject, "window", window_start, amount)'
    ' WHERE counters.name = t.name AND counters.subject = t.subject'
    ' AND counters."window" = t."window" AND counters.window_start = t.window_start'
)
_COUNTS = (
    'SELECT c.name, c.subject, c."window", c.window_start, c.count'
    " FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])"
    ' AS t (name, subject, "window", window_start)'
    ' JOIN counters c ON c.name = t.name AND c.subject = t.subject'
    ' AND c."window" = t."window" AND c.window_start = t.window_start'
)
_REVOCATIONS = "SELECT id, revoked_at FROM keys WHERE id = ANY($1::text[])"


def _columns(idents: Sequence[Ident]) -> list[list[Any]]:
    """``idents`` as four parallel lists (for ``unnest``)."""
    return [[i[0] for i in idents], [i[1] for i in idents], [i[2] for i in idents],
            [i[3] for i in idents]]


async def _revocations(conn: Connection, key_ids: set[str],
                       now: float) -> dict[str, str]:
    """``{key id: revoked_at}`` of the keys that are revoked (or gone: as good as revoked)."""
    if not key_ids:
        return {}
    found = {row[0]: row[1] for row in await conn.fetch(_REVOCATIONS, sorted(key_ids))}
    out: dict[str, str] = {}
    for key_id in key_ids:
        if key_id not in found:
            out[key_id] = iso_utc(now)
        elif found[key_id] is not None:
            out[key_id] = found[key_id]
    return out


async def counts(conn: Connection, idents: Sequence[Ident]) -> dict[Ident, int]:
    """The counts of the counters ``idents`` that have a row (no lock taken)."""
    if not idents:
        return {}
    rows = await conn.fetch(_COUNTS, *_columns(idents))
    return {(r[0], r[1], r[2], int(r[3])): int(r[4]) for r in rows}


async def admit_batch(conn: Connection,
                      prepared: Sequence[Prepared]) -> list[Admission]:
    """Judge every request of the batch in order and write what the admitted ones count
    (module docs); the caller commits."""
    key_ids = {item[2] for item in prepared if item[2] is not None}
    revoked = await _revocations(conn, key_ids, prepared[0][1] if prepared else 0.0)
    totals = batch_totals(prepared, revoked)  # ident -> [window end, amount]
    used: dict[Ident, int] = {}
    if totals:
        idents = list(totals)
        rows = await conn.fetch(_UPSERT, *_columns(idents), [totals[i][0] for i in idents],
                                [totals[i][1] for i in idents])
        for name, subject, window, start, after in rows:
            ident = (name, subject, window, int(start))
            used[ident] = int(after) - totals[ident][1]  # the count before this batch
    out: list[Admission] = []
    earned: dict[Ident, int] = dict.fromkeys(totals, 0)
    for specs, _, key_id, bounds in prepared:
        idents = [(s.name, s.subject, s.window, b[0]) for s, b in zip(specs, bounds,
                                                                       strict=True)]
        if key_id is not None and key_id in revoked:
            out.append(await _refused_for_revocation(conn, specs, bounds, idents, used,
                                                     revoked[key_id]))
            continue
        admission = judge(specs, [used[i] for i in idents], bounds)
        if admission.admitted:
            for ident, spec, state in zip(idents, specs, admission.counters, strict=True):
                used[ident] = state.used
                earned[ident] += increment(spec)
        out.append(admission)
    unearned = [(ident, totals[ident][1] - earned[ident]) for ident in totals
                if totals[ident][1] != earned[ident]]
    if unearned:
        await conn.execute(_TAKE_BACK, *_columns([i for i, _ in unearned]),
                           [amount for _, amount in unearned])
    return out


async def _refused_for_revocation(conn: Connection, specs: list[CounterSpec],
                                  bounds: list[tuple[int, int]], idents: list[Ident],
                                  used: dict[Ident, int], revoked_at: str) -> Admission:
    """A revoked key's request: refused, with its counters as the batch has left them."""
    missing = [i for i in idents if i not in used]
    found = await counts(conn, missing)
    values = [used[i] if i in used else found.get(i, 0) for i in idents]
    states = [counter_state(s, v, b) for s, v, b in zip(specs, values, bounds, strict=True)]
    return Admission(False, states, None, revoked_at)


async def states(conn: Connection, specs: list[CounterSpec],
                 bounds: list[tuple[int, int]]) -> list[CounterState]:
    """The states of ``specs`` as they are (nothing counted, nothing locked)."""
    idents = [(s.name, s.subject, s.window, b[0]) for s, b in zip(specs, bounds, strict=True)]
    found = await counts(conn, idents)
    return [counter_state(s, found.get(i, 0), b)
            for s, i, b in zip(specs, idents, bounds, strict=True)]
