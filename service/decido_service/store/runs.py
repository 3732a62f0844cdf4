"""The runs concern: run rows and their pages, the durable queue (capped enqueue counted
in the same transaction, claims under a lease, expired leases) and the idempotency
records of ``Idempotency-Key``.

A run is read back as a frozen :class:`RunRow`, its document decoded once, here (in a
read thread of the SQLite backend, off the event loop).

A run's front (a run of several objectives) is kept apart from its row, in ``run_fronts``:
:data:`FrontChunk` rows of consecutive points, written with the run's final state
(:meth:`Runs.update`), read a few rows at a time (:meth:`Runs.front`) and deleted
with the run, so reading or listing runs never reads a front.

A claim takes the oldest unowned queued row (``FOR UPDATE SKIP LOCKED`` on PostgreSQL:
nodes claiming at the same moment each take a different run and never wait for each
other; SQLite's write transaction holds the file). The per-key cap of
:meth:`Runs.enqueue` is serialised per key (PostgreSQL: an advisory lock on the key's
hash) while it counts, admits and inserts.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from decido import status
from decido_service.store import labels
from decido_service.store.admission_rule import prepare
from decido_service.store.admissions import admit
from decido_service.store.dialect import Database, Row, Tx, after_cursor, insert_sql, set_clause
from decido_service.store.labels import Scope
from decido_service.store.records import (
    Admission,
    AdmissionRequest,
    iso_utc,
    metadata_of,
    metadata_text,
)
from decido_service.store.webhooks import enqueue_run_event
from decido_service.types.fields import EngineId, Goal, RunState
from decido_service.types.runs import RunDocument

__all__ = ["FINISHED_STATES", "RUN_FIELDS", "RUN_STATES", "RUN_UPDATABLE", "FrontChunk",
           "RunRow", "Runs", "run_row"]


class RunRow(msgspec.Struct, frozen=True, kw_only=True):
    """A run's row as the store reads it, its document decoded; its fields but
    ``cancel_requested`` are its columns (:data:`RUN_FIELDS`): ``metadata`` its labels
    (``{}``: none), ``attempts`` the times it went back to the queue after its process
    stopped, ``owner`` the process that has it until ``lease_until`` (epoch seconds)."""

    id: str
    key_id: str
    created_at: str
    engine: EngineId
    dims: int
    goal: Goal
    state: RunState
    document: RunDocument
    status: str | None = None
    value: float | None = None
    evaluations: int | None = None
    elapsed_ms: float | None = None
    seed: int | str | None = None
    finished_at: str | None = None
    owner: str | None = None
    lease_until: float | None = None
    metadata: dict[str, str] = {}
    attempts: int = 0
    cancel_requested: bool = False


#: The columns of a run row: :class:`RunRow`'s fields but ``cancel_requested``.
RUN_FIELDS: tuple[str, ...] = tuple(
    f for f in RunRow.__struct_fields__ if f != "cancel_requested")
#: The columns :meth:`Runs.update` may change.
RUN_UPDATABLE: frozenset[str] = frozenset(
    ("status", "value", "evaluations", "elapsed_ms", "seed", "state", "document",
     "finished_at", "owner", "lease_until", "attempts"))
#: A run's lifecycle: ``queued`` -> ``running`` -> one of :data:`FINISHED_STATES` (it can
#: be deleted then; cancelling it is refused); the names are the library's (decido.status).
RUN_STATES: tuple[str, ...] = status.RUN_STATES
FINISHED_STATES: frozenset[str] = frozenset(status.FINISHED_RUN_STATES)

_UNFINISHED = "state IN ('queued', 'running')"  # the partial index runs_unfinished
_SELECT = f"SELECT {', '.join(RUN_FIELDS)}, cancel_requested FROM runs"
_SELECT_T = f"SELECT {', '.join(f't.{c}' for c in RUN_FIELDS)}, t.cancel_requested"
_INSERT = insert_sql("runs", RUN_FIELDS)
_KEY_ID = RUN_FIELDS.index("key_id")
_DOCUMENT = msgspec.json.Decoder(RunDocument)
#: consecutive points of a run's front: the index of the first, how many, and the points as
#: one JSON array (text, the service's: opaque here)
FrontChunk = tuple[int, int, str]
_INSERT_FRONT = "INSERT INTO run_fronts (run_id, first, count, points) VALUES (?, ?, ?, ?)"
_DELETE_FRONT = "DELETE FROM run_fronts WHERE run_id = ?"
_METADATA = RUN_FIELDS.index("metadata")
#: the run a claim takes (the dialect's lock of ``t`` appended): of the key with the fewest
#: runs owned now (counted once per key, from the partial index of unfinished runs), its
#: oldest
_CLAIM = (f"{_SELECT_T} FROM runs t LEFT JOIN (SELECT key_id, count(*) AS owned FROM runs"
          f" WHERE {_UNFINISHED} AND owner IS NOT NULL GROUP BY key_id) o"
          " ON o.key_id = t.key_id WHERE t.state IN ('queued', 'running')"
          " AND t.state = 'queued' AND t.owner IS NULL"
          " ORDER BY COALESCE(o.owned, 0), t.seq LIMIT 1")
#: the answer of a pending idempotency record (response, key_id, idem_key)
_ANSWER = "UPDATE idempotency SET response = ? WHERE key_id = ? AND idem_key = ?"


class Runs:
    """Run rows, the run queue and idempotency records."""

    def __init__(self, database: Database) -> None:
        self.db = database

    def _values(self, run: Mapping[str, Any]) -> list[Any]:
        """The arguments of the insert of ``run`` (id, created_at and state filled)."""
        row = {name: run.get(name) for name in RUN_FIELDS}
        row["id"] = row["id"] or uuid.uuid4().hex
        row["created_at"] = row["created_at"] or iso_utc(self.db.clock())
        row["state"] = row["state"] or "queued"
        row["document"] = run["document"]  # every run has one
        row["attempts"] = row["attempts"] or 0
        return [_column(name, row[name]) for name in RUN_FIELDS]

    async def record(self, run: Mapping[str, Any]) -> None:
        """Store one run row: :class:`RunRow`'s columns (others ignored; ``id``, ``created_at``
        and ``state``, ``queued``, filled in; a ``document`` given, the others NULL if not)."""
        values = self._values(run)
        await self.db.write(lambda tx: self._insert(tx, values))

    async def _insert(self, tx: Tx, values: list[Any]) -> None:
        """Insert a run row and its labels (:mod:`~decido_service.store.labels`)."""
        await tx.execute(_INSERT, *values)
        if values[_METADATA] is not None:
            await labels.index(tx, self.db.dialect, "runs", [values[0]])

    async def enqueue(self, run: Mapping[str, Any], admission: AdmissionRequest,
                      cap: int | None = None, queue_cap: int | None = None,
                      idempotency: tuple[str, str] | None = None
                      ) -> Admission | Literal["cap", "queue"]:
        """In one transaction: unless the run's key has ``cap`` runs ``queued`` or
        ``running`` (``"cap"``) or the store ``queue_cap`` runs ``queued`` (``"queue"``;
        ``None``: no cap), judge ``admission`` and, when it is admitted, record ``run``
        with it and store ``idempotency``'s answer (``(idem_key, response)``: the pending
        record of the run's key, :meth:`idempotency_begin`, gets ``response``). Nothing is
        written (row, count or answer) unless all of it is."""
        values, prepared, dialect = self._values(run), prepare([admission]), self.db.dialect

        async def body(tx: Tx) -> Admission | Literal["cap", "queue"]:
            key_id = values[_KEY_ID]
            if await dialect.at_cap(tx, cap, key_id, "runs", f"key_id = ? AND {_UNFINISHED}",
                                    key_id):
                return "cap"
            if await dialect.at_cap(tx, queue_cap, None, "runs",
                                    f"{_UNFINISHED} AND state = 'queued'"):
                return "queue"
            (admitted,) = await admit(tx, dialect, prepared)
            if admitted.admitted:
                await self._insert(tx, values)
                if idempotency is not None:
                    await tx.execute(_ANSWER, idempotency[1], values[_KEY_ID], idempotency[0])
            return admitted

        return await self.db.write(body)

    async def update(self, run_id: str, changes: Mapping[str, Any],
                     expect: Mapping[str, Any] | None = None,
                     front: Sequence[FrontChunk] = ()) -> bool:
        """Set the :data:`RUN_UPDATABLE` columns in ``changes`` (``ValueError`` for any
        other); ``False`` when there is no such run, or (``expect``) when one of the
        row's columns named there is not equal to the value given (``None``: NULL). A
        final state written here writes the run's webhook deliveries in the same
        transaction (:func:`~decido_service.store.webhooks.enqueue_run_event`), and
        ``front`` (its front's chunks, in order) replaces the run's front there too."""
        if not changes:
            raise ValueError(f"a run update sets some of {', '.join(sorted(RUN_UPDATABLE))}")
        columns, values = set_clause({c: _column(c, v) for c, v in changes.items()},
                                      RUN_UPDATABLE)
        expected = list((expect or {}).items())
        set_clause(dict(expected), RUN_UPDATABLE)  # the columns compared are checked too
        sql = f"UPDATE runs SET {columns} WHERE id = ?" + "".join(
            f" AND {c} IS NOT DISTINCT FROM ?" for c, _ in expected)
        final = changes.get("state") in FINISHED_STATES

        async def body(tx: Tx) -> bool:
            if await tx.execute(sql, *values, run_id, *(v for _, v in expected)) != 1:
                return False
            if front:
                await tx.execute(_DELETE_FRONT, run_id)
                await tx.executemany(_INSERT_FRONT, [(run_id, *chunk) for chunk in front])
            if final:  # its webhook deliveries, in the same transaction
                row = await tx.fetchrow(f"{_SELECT} WHERE id = ?", run_id)
                assert row is not None
                await enqueue_run_event(tx, _columns(row), time.time())
            return True

        return await self.db.write(body)

    async def claim(self, owner: str, lease_until: float) -> RunRow | None:
        """Take a ``queued`` run no process owns: it is ``owner``'s until ``lease_until``
        (epoch seconds); ``None`` when there is none. Fair across keys: the oldest of the
        key with the fewest runs owned (taken, running) now, so one key's backlog does not
        hold another key's run back. Concurrent callers (any process, any node) never take
        the same run."""
        skip_locked = self.db.dialect.skip_locked_of.format(alias="t")

        async def body(tx: Tx) -> Row | None:
            row = await tx.fetchrow(_CLAIM + skip_locked)
            if row is not None:
                await tx.execute("UPDATE runs SET owner = ?, lease_until = ? WHERE id = ?",
                                 owner, lease_until, row[0])
            return row

        row = await self.db.write(body)  # decoded once the write transaction is over
        return None if row is None else run_row(
            {**_columns(row), "owner": owner, "lease_until": lease_until})

    async def expired(self, now: float) -> list[RunRow]:
        """The unfinished runs whose owner's lease ended before ``now``."""
        return await self._rows(f"{_SELECT} WHERE {_UNFINISHED} AND owner IS NOT NULL AND "
                                "lease_until < ? ORDER BY seq", now)

    async def get(self, key_id: str, run_id: str) -> RunRow | None:
        """One of ``key_id``'s runs, or ``None`` (another key's too)."""
        found = await self._rows(f"{_SELECT} WHERE id = ? AND key_id = ?", run_id, key_id)
        return found[0] if found else None

    async def page(self, key_id: str, limit: int, starting_after: str | None = None,
                   state: str | None = None, engine: str | None = None,
                   metadata: Mapping[str, str] | None = None) -> list[RunRow]:
        """Up to ``limit`` of ``key_id``'s runs, newest first, after ``starting_after`` (a
        run id: the run's position, or the position its id would have,
        :func:`~decido_service.store.dialect.after_cursor`), optionally only those in
        ``state``, of ``engine`` and with every member of ``metadata``."""
        scope = Scope("runs", key_id, metadata)

        async def body(tx: Tx) -> list[RunRow]:
            where, args = list(scope.where), list(scope.where_args)
            if starting_after is not None:
                condition, value = await after_cursor(tx, "runs", key_id, starting_after,
                                                      (scope.seq, "t.id"))
                where.append(condition)
                args.append(value)
            for column, value in (("state", state), ("engine", engine)):
                if value is not None:
                    where.append(f"t.{column} = ?")
                    args.append(value)
            return [run_row(_columns(row)) for row in await tx.fetch(
                f"{_SELECT_T} FROM {scope.source} WHERE {' AND '.join(where)}"
                f" ORDER BY {scope.seq} DESC LIMIT ?", *scope.source_args, *args, int(limit))]

        return await self.db.read(body)

    async def front(self, run_id: str, after: int, rows: int) -> list[FrontChunk]:
        """Up to ``rows`` chunks of the run's front, in order, from the one holding the
        point after index ``after`` (-1: the first); ``[]`` for none."""
        found = await self.db.read(lambda tx: tx.fetch(
            "SELECT first, count, points FROM run_fronts WHERE run_id = ? AND "
            "first + count > ? ORDER BY first LIMIT ?", run_id, after + 1, int(rows)))
        return [(int(first), int(count), str(points)) for first, count, points in found]

    async def cancel_requested(self, run_id: str) -> bool | None:
        """The run's ``cancel_requested`` flag; ``None`` when there is no such run."""
        row = await self.db.read(lambda tx: tx.fetchrow(
            "SELECT cancel_requested FROM runs WHERE id = ?", run_id))
        return None if row is None else bool(row[0])

    async def unfinished(self) -> list[RunRow]:
        """Every run (of any key) not in one of :data:`FINISHED_STATES`, oldest first."""
        return await self._rows(f"{_SELECT} WHERE {_UNFINISHED} ORDER BY seq")

    async def count_by_state(self) -> dict[str, int]:
        """The number of runs (of every key) in each state that has any; finished runs
        count until their retention ends."""
        rows = await self.db.read(lambda tx: tx.fetch(
            "SELECT state, count(*) FROM runs GROUP BY state"))
        return {str(state): int(n) for state, n in rows}

    async def request_cancel(self, key_id: str, run_id: str) -> str | None:
        """Set the run's ``cancel_requested`` flag unless it is finished; its state, or
        ``None`` when ``key_id`` has no such run."""
        return await self._finished_or_not(
            key_id, run_id, "UPDATE runs SET cancel_requested = 1 WHERE id = ?", False)

    async def delete(self, key_id: str, run_id: str) -> str | None:
        """Delete the run if it is finished; its state (the row is gone only when that is
        one of :data:`FINISHED_STATES`), or ``None`` when ``key_id`` has no such run."""
        return await self._finished_or_not(key_id, run_id, "DELETE FROM runs WHERE id = ?",
                                           True, _DELETE_FRONT)

    async def _finished_or_not(self, key_id: str, run_id: str, change: str,
                               finished: bool, *more: str) -> str | None:
        """The state of ``key_id``'s run (``None``: none), ``change`` (and ``more``) made
        to it when it is finished (``finished``) or unfinished (not ``finished``)."""
        for_update = self.db.dialect.for_update

        async def body(tx: Tx) -> str | None:
            row = await tx.fetchrow(f"SELECT state FROM runs WHERE id = ? AND key_id = ?"
                                    f"{for_update}", run_id, key_id)
            if row is None:
                return None
            if (row[0] in FINISHED_STATES) == finished:
                for statement in (change, *more):
                    await tx.execute(statement, run_id)
            return str(row[0])

        return await self.db.write(body)

    async def delete_finished(self, key_id: str) -> int:
        """Delete every finished run of ``key_id``; how many."""
        return await self._delete_where(f"key_id = ? AND NOT ({_UNFINISHED})", key_id)

    async def prune(self, finished_before: str) -> int:
        """Delete every run (of any key) finished before ``finished_before`` (ISO 8601
        UTC, as :func:`~decido_service.store.iso_utc` writes); how many."""
        return await self._delete_where("finished_at IS NOT NULL AND finished_at < ?",
                                        finished_before)

    async def _delete_where(self, where: str, *args: Any) -> int:
        """Delete the runs ``where`` holds for, their fronts first; how many runs."""
        async def body(tx: Tx) -> int:
            await tx.execute("DELETE FROM run_fronts WHERE run_id IN "
                             f"(SELECT id FROM runs WHERE {where})", *args)
            return await tx.execute(f"DELETE FROM runs WHERE {where}", *args)

        return await self.db.write(body)

    async def idempotency_begin(self, key_id: str, idem_key: str, fingerprint: str,
                                now: float, ttl: float) -> tuple[str, str | None]:
        """Look up ``idem_key`` of ``key_id`` (a record older than ``ttl`` seconds counts
        as absent and is replaced): ``("new", None)`` when there was none (a pending
        record is written), ``("pending", None)`` while the first request with it is
        still being answered, ``("mismatch", None)`` when it was used with another
        ``fingerprint``, ``("done", response)`` with the stored answer."""
        for_update = self.db.dialect.for_update

        async def body(tx: Tx) -> tuple[str, str | None]:
            row = await tx.fetchrow(
                "INSERT INTO idempotency (key_id, idem_key, fingerprint, created_epoch) "
                "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1",
                key_id, idem_key, fingerprint, now)
            if row is None:
                row = await tx.fetchrow(
                    "SELECT fingerprint, created_epoch, response FROM idempotency "
                    f"WHERE key_id = ? AND idem_key = ?{for_update}", key_id, idem_key)
                if row is not None and row[1] >= now - ttl:
                    if row[0] != fingerprint:
                        return "mismatch", None
                    return ("pending", None) if row[2] is None else ("done", str(row[2]))
                await tx.execute(
                    "UPDATE idempotency SET fingerprint = ?, created_epoch = ?, response = NULL"
                    " WHERE key_id = ? AND idem_key = ?", fingerprint, now, key_id, idem_key)
            await tx.execute("DELETE FROM idempotency WHERE key_id = ? AND created_epoch < ?",
                             key_id, now - ttl)
            return "new", None

        return await self.db.write(body)

    async def idempotency_end(self, key_id: str, idem_key: str,
                              response: str | None) -> None:
        """Store the answer of the request that began ``idem_key`` (``None``: forget the
        record if it is still pending, so a retry is a new request; one whose answer was
        stored, by this call or with its run by :meth:`enqueue`, is kept)."""
        if response is None:
            await self.db.write(lambda tx: tx.execute(
                "DELETE FROM idempotency WHERE key_id = ? AND idem_key = ? AND "
                "response IS NULL", key_id, idem_key))
        else:
            await self.db.write(lambda tx: tx.execute(_ANSWER, response, key_id, idem_key))

    async def _rows(self, sql: str, *args: Any) -> list[RunRow]:
        async def body(tx: Tx) -> list[RunRow]:
            return [run_row(_columns(row)) for row in await tx.fetch(sql, *args)]

        return await self.db.read(body)


def _column(name: str, value: Any) -> Any:
    """A run's value as its column keeps it: the document and a seed as JSON text (a seed
    beyond 64 bits as a string, as every backend reads it back), labels as metadata_text."""
    if name == "document" or (name == "seed" and value is not None):
        big = isinstance(value, int) and not -(2**63) <= value < 2**63
        return msgspec.json.encode(str(value) if big else value).decode()
    return metadata_text(value) if name == "metadata" else value


def _columns(row: Row) -> dict[str, Any]:
    """A row read by name, seed and labels decoded (the document text): its event's payload."""
    out = dict(zip(RUN_FIELDS, row, strict=False))
    out["seed"] = None if out["seed"] is None else msgspec.json.decode(out["seed"])
    out["metadata"] = metadata_of(out["metadata"])
    out["cancel_requested"] = bool(row[len(RUN_FIELDS)])
    return out


def run_row(columns: Mapping[str, Any]) -> RunRow:
    """The :class:`RunRow` of a run's columns by name (a row's, its event's payload)."""
    return RunRow(**{**columns, "document": _DOCUMENT.decode(columns["document"])})

