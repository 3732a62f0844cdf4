"""The studies concern: a study's row, its trials and its ordered log (what
:class:`decido.Study` replays), changed only inside :meth:`Studies.mutate`.

:meth:`Studies.mutate` runs the caller's body in one transaction that first locks the
study's row (PostgreSQL ``SELECT ... FOR UPDATE``; SQLite's write transaction holds the
file), so every change of one study, from any worker or node, is serialised. The body gets a
:class:`StudyTx`: the row, the log entries after a position, the trials it asks for, and
writes; :meth:`StudyTx.compute` runs a CPU-bound call off the event loop (SQLite: the body
already runs on the store's writer thread; PostgreSQL: the loop's default executor).

Trials are numbered 0, 1, ... per study; ``lib`` is the number :class:`decido.Study` gave
the trial (``NULL`` for a queued point the engine has not been told of). JSON columns
(``spec``, ``summary``, ``x``, ``variables``, ``vals``, ``metrics``, ``steps``, log
entries) are the service's text, opaque here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from decido_service.store.admission_rule import prepare
from decido_service.store.admissions import admit
from decido_service.store.dialect import Database, Row, Tx, after_cursor, insert_sql, set_clause
from decido_service.store.records import Admission, AdmissionRequest, metadata_of, metadata_text
from decido_service.store.webhooks import enqueue_event

__all__ = ["EVENTS_SCHEMA", "SCHEMA", "STUDY_FIELDS", "TRIAL_FIELDS", "Studies", "StudyTx"]

T = TypeVar("T")

SCHEMA = (
    """CREATE TABLE studies (
        seq {identity}, id TEXT NOT NULL UNIQUE, key_id TEXT NOT NULL,
        created_at TEXT NOT NULL, state TEXT NOT NULL, spec TEXT NOT NULL,
        metadata TEXT, counts TEXT NOT NULL, summary TEXT, log_length BIGINT NOT NULL,
        next_number BIGINT NOT NULL, events BIGINT NOT NULL DEFAULT 0,
        lease_until DOUBLE PRECISION)""",
    "CREATE INDEX studies_by_key ON studies (key_id, seq)",
    "CREATE INDEX studies_by_lease ON studies (lease_until) WHERE lease_until IS NOT NULL",
    """CREATE TABLE study_trials (
        study_id TEXT NOT NULL, number BIGINT NOT NULL, lib BIGINT, state TEXT NOT NULL,
        x TEXT NOT NULL, variables TEXT NOT NULL, vals TEXT, metrics TEXT,
        client_id TEXT, lease_until DOUBLE PRECISION, reason TEXT, steps TEXT,
        created_at TEXT NOT NULL, completed_at TEXT, PRIMARY KEY (study_id, number))""",
    # a rowid table: without statistics SQLite reads a WITHOUT ROWID table's primary key
    # (every trial of the study) rather than these partial indexes of the open trials
    "CREATE INDEX study_trials_active ON study_trials (study_id, number)"
    " WHERE state = 'active'",
    "CREATE INDEX study_trials_queued ON study_trials (study_id, number)"
    " WHERE state = 'queued'",
    """CREATE TABLE study_log (
        study_id TEXT NOT NULL, position BIGINT NOT NULL, entry TEXT NOT NULL,
        PRIMARY KEY (study_id, position)){without_rowid}""",
)

#: a study's events (migration 8): what its event stream sends, numbered ``seq`` 1, 2, ...
#: per study in the transaction of the change they tell of (the study's ``events`` column
#: is the last number given), so the order is the order of the changes on every node; the
#: oldest are deleted in that transaction beyond the newest the service keeps
#: (:meth:`StudyTx.add_events`)
EVENTS_SCHEMA = (
    """CREATE TABLE study_events (
        study_id TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,
        PRIMARY KEY (study_id, seq)){without_rowid}""",
)

#: a study row's columns, as :meth:`Studies.get` returns them
STUDY_FIELDS: tuple[str, ...] = ("id", "key_id", "created_at", "state", "spec", "metadata",
                                 "counts", "summary", "log_length", "next_number", "events",
                                 "lease_until")
#: a trial row's columns
TRIAL_FIELDS: tuple[str, ...] = ("study_id", "number", "lib", "state", "x", "variables", "vals",
                                 "metrics", "client_id", "lease_until", "reason", "steps",
                                 "created_at", "completed_at")
_STUDY_UPDATABLE = frozenset(("state", "counts", "summary", "log_length", "next_number",
                              "events", "lease_until"))
_TRIAL_UPDATABLE = frozenset(("lib", "state", "vals", "metrics", "client_id", "lease_until",
                              "reason", "steps", "completed_at"))
_SELECT_STUDY = f"SELECT {', '.join(STUDY_FIELDS)} FROM studies"
_ONE_STUDY = f"{_SELECT_STUDY} WHERE id = ? AND key_id = ?"
_SELECT_TRIAL = f"SELECT {', '.join(TRIAL_FIELDS)} FROM study_trials"
_INSERT_TRIAL = insert_sql("study_trials", TRIAL_FIELDS)


def _study(row: Row) -> dict[str, Any]:
    out = dict(zip(STUDY_FIELDS, row, strict=True))
    out["metadata"] = metadata_of(out["metadata"])
    return out


def _trial(row: Row) -> dict[str, Any]:
    return dict(zip(TRIAL_FIELDS, row, strict=True))


class StudyTx:
    """One study inside :meth:`Studies.mutate`'s transaction, its row locked."""

    def __init__(self, tx: Tx, row: dict[str, Any], offload: bool) -> None:
        self.tx = tx
        self.row = row
        self._offload = offload

    async def compute(self, fn: Callable[[], T]) -> T:
        """``fn()`` off the event loop (module docs)."""
        if self._offload:
            return await asyncio.get_running_loop().run_in_executor(None, fn)
        return fn()

    async def log_after(self, position: int) -> list[str]:
        """The log entries from ``position`` on, in order."""
        rows = await self.tx.fetch("SELECT entry FROM study_log WHERE study_id = ? AND "
                                   "position >= ? ORDER BY position", self.row["id"], position)
        return [r[0] for r in rows]

    async def append_log(self, entries: Sequence[str]) -> None:
        """Append ``entries`` to the log (the row's ``log_length`` follows)."""
        start = int(self.row["log_length"])
        if entries:
            await self.tx.executemany(
                "INSERT INTO study_log (study_id, position, entry) VALUES (?, ?, ?)",
                [(self.row["id"], start + k, e) for k, e in enumerate(entries)])
        self.row["log_length"] = start + len(entries)

    async def add_events(self, events: Sequence[tuple[str, str]], keep: int | None = None
                         ) -> None:
        """Append ``(kind, data)`` events, numbered after the row's ``events`` (which
        follows, written by :meth:`save`); with ``keep``, the study's events older than
        its newest ``keep`` are deleted."""
        last = int(self.row["events"])
        if events:
            await self.tx.executemany(
                "INSERT INTO study_events (study_id, seq, kind, data) VALUES (?, ?, ?, ?)",
                [(self.row["id"], last + k + 1, kind, data)
                 for k, (kind, data) in enumerate(events)])
            if keep is not None and last + len(events) > keep:
                await self.tx.execute("DELETE FROM study_events WHERE study_id = ? AND "
                                      "seq <= ?", self.row["id"], last + len(events) - keep)
        self.row["events"] = last + len(events)

    async def webhook(self, event: str, payload: str, created_at: str, now: float) -> None:
        """The deliveries of the study's webhook ``event`` (``payload``: its data as JSON
        text), in this transaction (:func:`~decido_service.store.webhooks.enqueue_event`)."""
        await enqueue_event(self.tx, self.row["key_id"], event, payload, created_at, now)

    async def trials(self, where: str, *args: Any, limit: int | None = None
                     ) -> list[dict[str, Any]]:
        """The study's trials where ``where`` (over :data:`TRIAL_FIELDS`), by number."""
        tail = "" if limit is None else f" LIMIT {int(limit)}"
        rows = await self.tx.fetch(f"{_SELECT_TRIAL} WHERE study_id = ? AND ({where}) "
                                   f"ORDER BY number{tail}", self.row["id"], *args)
        return [_trial(r) for r in rows]

    async def insert_trials(self, trials: Sequence[Mapping[str, Any]]) -> None:
        """Insert trial rows (:data:`TRIAL_FIELDS`; missing ones NULL)."""
        await self.tx.executemany(_INSERT_TRIAL, [
            [self.row["id"] if f == "study_id" else t.get(f) for f in TRIAL_FIELDS]
            for t in trials])

    async def update_trials(self, changes: Sequence[tuple[int, Mapping[str, Any]]]) -> None:
        """Set columns of trials: ``(number, {column: value})`` each."""
        for number, change in changes:
            columns, args = set_clause(change, _TRIAL_UPDATABLE)
            await self.tx.execute(f"UPDATE study_trials SET {columns} WHERE study_id = ? AND "
                                  "number = ?", *args, self.row["id"], number)

    async def save(self, changes: Mapping[str, Any]) -> None:
        """Write columns of the study's row (its ``log_length`` and ``events`` as
        appended)."""
        merged = {**changes, "log_length": self.row["log_length"],
                  "events": self.row["events"]}
        columns, args = set_clause(merged, _STUDY_UPDATABLE)
        await self.tx.execute(f"UPDATE studies SET {columns} WHERE id = ?", *args,
                              self.row["id"])
        self.row.update(merged)


class Studies:
    """Study rows, their trials and logs."""

    def __init__(self, database: Database) -> None:
        self.db = database

    async def create(self, study: Mapping[str, Any], admission: AdmissionRequest,
                     cap: int | None = None, idempotency: tuple[str, str] | None = None
                     ) -> Admission | Literal["cap"]:
        """Insert a study row (:data:`STUDY_FIELDS`; ``metadata`` a mapping) in one
        transaction that first counts the key's active studies under the key's lock
        (``"cap"``, nothing written, when there are ``cap``), then counts ``admission``
        (nothing written when refused) and stores ``idempotency``'s answer (``(idem_key,
        response)``: the pending record of the key, as runs' :meth:`Runs.enqueue
        <decido_service.store.runs.Runs.enqueue>`)."""
        values = [metadata_text(study.get("metadata")) if f == "metadata" else study.get(f)
                  for f in STUDY_FIELDS]
        key_id, dialect, prepared = study["key_id"], self.db.dialect, prepare([admission])

        async def body(tx: Tx) -> Admission | Literal["cap"]:
            if await dialect.at_cap(tx, cap, "studies:" + key_id, "studies",
                                    "key_id = ? AND state = 'active'", key_id):
                return "cap"
            (admitted,) = await admit(tx, dialect, prepared)
            if admitted.admitted:
                await tx.execute(insert_sql("studies", STUDY_FIELDS), *values)
                if idempotency is not None:
                    await tx.execute("UPDATE idempotency SET response = ? WHERE key_id = ? "
                                     "AND idem_key = ?", idempotency[1], key_id, idempotency[0])
            return admitted

        return await self.db.write(body)

    async def get(self, key_id: str, study_id: str) -> dict[str, Any] | None:
        """One of ``key_id``'s studies, or ``None``."""
        row = await self.db.read(lambda tx: tx.fetchrow(_ONE_STUDY, study_id, key_id))
        return None if row is None else _study(row)

    async def page(self, key_id: str, limit: int, starting_after: str | None = None,
                   state: str | None = None,
                   metadata: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
        """Up to ``limit`` of the key's studies, newest first (as runs' pages)."""
        members = self.db.dialect.json_members.format(column="metadata")
        labels = [f"EXISTS (SELECT 1 FROM {members} WHERE key = ? AND value = ?)"
                  for _ in metadata or {}]
        label_args = [part for item in (metadata or {}).items() for part in item]

        async def body(tx: Tx) -> list[Row]:
            where, args = ["key_id = ?"], list[Any]([key_id])
            if starting_after is not None:
                condition, value = await after_cursor(tx, "studies", key_id, starting_after)
                where.append(condition)
                args.append(value)
            if state is not None:
                where.append("state = ?")
                args.append(state)
            where += labels
            args += label_args
            return await tx.fetch(f"{_SELECT_STUDY} WHERE {' AND '.join(where)} "
                                  f"ORDER BY seq DESC LIMIT ?", *args, limit)

        return [_study(r) for r in await self.db.read(body)]

    async def trials(self, key_id: str, study_id: str, limit: int, after: int | None,
                     state: str | None) -> list[dict[str, Any]] | None:
        """Up to ``limit`` trials by number after ``after``; ``None`` for no such study."""
        async def body(tx: Tx) -> list[Row] | None:
            if await tx.fetchrow("SELECT 1 FROM studies WHERE id = ? AND key_id = ?",
                                 study_id, key_id) is None:
                return None
            where, args = ["study_id = ?", "number > ?"], list[Any]([study_id, -1 if after is None
                                                                      else after])
            if state is not None:
                where.append("state = ?")
                args.append(state)
            return await tx.fetch(f"{_SELECT_TRIAL} WHERE {' AND '.join(where)} "
                                  "ORDER BY number LIMIT ?", *args, limit)

        rows = await self.db.read(body)
        return None if rows is None else [_trial(r) for r in rows]

    async def mutate(self, key_id: str, study_id: str,
                     body: Callable[[StudyTx], Any]) -> Any:
        """``await body(StudyTx)`` in one transaction holding the study's row lock; ``None``
        (nothing run) when the key has no such study."""
        dialect = self.db.dialect

        async def run(tx: Tx) -> Any:
            row = await tx.fetchrow(_ONE_STUDY + dialect.for_update, study_id, key_id)
            if row is None:
                return None
            return await body(StudyTx(tx, _study(row), dialect.row_locks))

        return await self.db.write(run)

    async def events_after(self, key_id: str, study_id: str, after: int, limit: int
                           ) -> tuple[dict[str, Any], list[tuple[int, str, str]]] | None:
        """The study's row, then up to ``limit`` of its events numbered above ``after``
        (``(seq, kind, data)``, in order; every event the row counts is among those read
        after it, unless deleted as older than the newest kept: the first read is then
        numbered above ``after + 1``); ``None`` for no such study."""
        async def body(tx: Tx) -> tuple[dict[str, Any], list[tuple[int, str, str]]] | None:
            row = await tx.fetchrow(_ONE_STUDY, study_id, key_id)
            if row is None:
                return None
            rows = await tx.fetch("SELECT seq, kind, data FROM study_events WHERE "
                                  "study_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                                  study_id, after, limit)
            return _study(row), [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

        return await self.db.read(body)

    async def leased(self, now: float) -> list[tuple[str, str]]:
        """``(key_id, study_id)`` of studies with an active trial whose lease ended."""
        rows = await self.db.read(lambda tx: tx.fetch(
            "SELECT key_id, id FROM studies WHERE lease_until IS NOT NULL AND lease_until < ?"
            " ORDER BY lease_until", now))
        return [(r[0], r[1]) for r in rows]

    async def delete(self, key_id: str, study_id: str) -> str | None:
        """Delete the study if it is not ``active``; its state before, ``None`` for none."""
        async def body(tx: Tx) -> str | None:
            row = await tx.fetchrow(f"SELECT state FROM studies WHERE id = ? AND key_id = ?"
                                    f"{self.db.dialect.for_update}", study_id, key_id)
            if row is None:
                return None
            if row[0] != "active":
                for table in ("study_log", "study_trials", "study_events"):
                    await tx.execute(f"DELETE FROM {table} WHERE study_id = ?", study_id)
                await tx.execute("DELETE FROM studies WHERE id = ?", study_id)
            return str(row[0])

        return await self.db.write(body)
