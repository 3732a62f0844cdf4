"""Counters on SQLite: the admission rule (:func:`decido_service.store.judge`) in SQL.

Every function here runs inside the caller's ``BEGIN IMMEDIATE`` transaction, which holds
the database's write lock, so nothing another connection does can come between reading a
count and writing it.

- :func:`admit_batch` is the common case of a group commit: one lookup of the keys'
  revocations, one multi-row UPSERT of the batch's total per counter it adds to (a gate or
  an observed counter is only read), then the requests are judged in order from each
  counter's count before the batch. If one of them would be refused, the UPSERT is undone
  and it returns ``None``.
- :func:`admit_one` then judges the requests one at a time: read the counts, judge, and
  write the increments only when admitted.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from typing import Any

from decido_service.store.admission_rule import (
    Ident,
    Prepared,
    batch_totals,
    counter_state,
    increment,
    judge,
)
from decido_service.store.records import Admission, CounterSpec, CounterState, iso_utc

__all__ = ["admit_batch", "admit_one", "count", "states"]

_UPSERT_ONE = (
    "INSERT INTO counters (name, subject, window, window_start, window_end, count)"
    " VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (name, subject, window, window_start)"
    " DO UPDATE SET count = count + excluded.count"
)
_UPSERT_MANY_HEAD = (
    "INSERT INTO counters (name, subject, window, window_start, window_end, count) VALUES "
)
_UPSERT_MANY_TAIL = (
    " ON CONFLICT (name, subject, window, window_start)"
    " DO UPDATE SET count = count + excluded.count"
    " RETURNING name, subject, window, window_start, count"
)
_UNDO = (
    "UPDATE counters SET count = count - ? WHERE name = ? AND subject = ? AND window = ?"
    " AND window_start = ?"
)


def count(conn: sqlite3.Connection, spec: CounterSpec, start: int) -> int:
    """The count of ``spec``'s counter in the window starting at ``start`` (0 if none)."""
    return _count_row(conn, (spec.name, spec.subject, spec.window, start))


def _count_row(conn: sqlite3.Connection, ident: Ident) -> int:
    row = conn.execute(
        "SELECT count FROM counters WHERE name = ? AND subject = ? AND window = ?"
        " AND window_start = ?", ident).fetchone()
    return 0 if row is None else int(row[0])


def _revocations(conn: sqlite3.Connection, key_ids: set[str], now: float) -> dict[str, str]:
    """``{key id: revoked_at}`` of the keys that are revoked (or gone: as good as revoked)."""
    if not key_ids:
        return {}
    found = dict(conn.execute(_keys_sql(len(key_ids)), list(key_ids)).fetchall())
    out: dict[str, str] = {}
    for key_id in key_ids:
        if key_id not in found:
            out[key_id] = iso_utc(now)
        elif found[key_id] is not None:
            out[key_id] = found[key_id]
    return out


def _refused_for_revocation(conn: sqlite3.Connection, specs: list[CounterSpec],
                            bounds: list[tuple[int, int]], revoked_at: str) -> Admission:
    states = [counter_state(s, count(conn, s, b[0]), b) for s, b in zip(specs, bounds,
                                                                          strict=True)]
    return Admission(False, states, None, revoked_at)


def admit_batch(conn: sqlite3.Connection,
                prepared: Sequence[Prepared]) -> list[Admission] | None:
    """Admit every request of the batch with one UPSERT of the per-counter totals, or
    return ``None`` (having written nothing) when one would be refused."""
    key_ids = {item[2] for item in prepared if item[2] is not None}
    revoked = _revocations(conn, key_ids, prepared[0][1] if prepared else 0.0)
    totals = batch_totals(prepared, revoked)  # ident -> [window end, amount]
    # counters the batch adds to are written (and read back) by one UPSERT; those it only
    # looks at (gates, observed ones) are read, never written
    written = {ident: total for ident, total in totals.items() if total[1]}
    used: dict[Ident, int] = {ident: _count_row(conn, ident) for ident in totals
                              if ident not in written}
    if written:
        flat: list[Any] = []
        for ident, (end, amount) in written.items():
            flat += [*ident, end, amount]
        for name, subject, window, start, after in conn.execute(
                _upsert_many_sql(len(written)), flat).fetchall():
            ident = (name, subject, window, start)
            used[ident] = after - written[ident][1]  # the count before this batch
    out: list[Admission] = []
    for specs, _, key_id, bounds in prepared:
        if key_id is not None and key_id in revoked:
            out.append(_refused_for_revocation(conn, specs, bounds, revoked[key_id]))
            continue
        idents = [(s.name, s.subject, s.window, bounds[i][0]) for i, s in enumerate(specs)]
        admission = judge(specs, [used[i] for i in idents], bounds)
        if not admission.admitted:
            conn.executemany(_UNDO, [(amount, *ident) for ident, (_, amount) in written.items()])
            return None
        for i, state in enumerate(admission.counters):
            used[idents[i]] = state.used
        out.append(admission)
    return out


def admit_one(conn: sqlite3.Connection, specs: list[CounterSpec], now: float,
              key_id: str | None, bounds: list[tuple[int, int]]) -> Admission:
    """One request judged on its own: counts read, judged, increments written if admitted."""
    if key_id is not None:
        revoked = _revocations(conn, {key_id}, now)
        if key_id in revoked:
            return _refused_for_revocation(conn, specs, bounds, revoked[key_id])
    admission = judge(specs, [count(conn, s, b[0]) for s, b in zip(specs, bounds, strict=True)],
                      bounds)
    if admission.admitted:
        conn.executemany(_UPSERT_ONE, [
            (s.name, s.subject, s.window, start, end, increment(s))
            for s, (start, end) in zip(specs, bounds, strict=True) if increment(s)])
    return admission


def states(conn: sqlite3.Connection, specs: list[CounterSpec],
           bounds: list[tuple[int, int]]) -> list[CounterState]:
    """The states of ``specs`` as they are (nothing counted)."""
    return [counter_state(s, count(conn, s, b[0]), b) for s, b in zip(specs, bounds, strict=True)]


@functools.lru_cache(maxsize=64)
def _keys_sql(n: int) -> str:
    """``SELECT id, revoked_at`` of ``n`` keys."""
    return f"SELECT id, revoked_at FROM keys WHERE id IN ({','.join('?' * n)})"


@functools.lru_cache(maxsize=256)
def _upsert_many_sql(n: int) -> str:
    """The UPSERT of ``n`` counter rows, returning each one's count after it."""
    return _UPSERT_MANY_HEAD + ",".join(["(?, ?, ?, ?, ?, ?)"] * n) + _UPSERT_MANY_TAIL
