"""Runs on PostgreSQL: the run methods of
:class:`~decido_service.store.postgres.PostgresStore` (:class:`PostgresRuns`, see
:class:`~decido_service.store.Store` for what each does), and the statements of its run
queue and idempotency records, each run inside the store's transaction on ``conn``.

A claim is ``SELECT … FOR UPDATE SKIP LOCKED`` inside an ``UPDATE``: nodes claiming at the
same moment each take a different run and never wait for each other. The per-key cap holds
a transaction-level advisory lock on the key (``hashtext(key_id)``) while it counts and
inserts, so two nodes admitting runs of one key are serialised.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from asyncpg import Connection as Conn  # type: ignore[import-untyped]

from decido_service.store.postgres_pool import PostgresPool, rowcount
from decido_service.store.postgres_webhooks import enqueue_run_event
from decido_service.store.records import iso_utc
from decido_service.store.run_rows import (
    COUNT_RUNS_SQL,
    FINISHED_STATES,
    RUN_FIELDS,
    check_run_changes,
)

__all__ = ["COLUMNS", "INSERT", "PostgresRuns", "claim", "delete_finished", "enqueue",
           "expired", "idempotency_begin", "idempotency_end", "prune"]

#: what a run read selects (the order of :data:`~decido_service.store.RUN_FIELDS`, then
#: ``cancel_requested``)
COLUMNS = ", ".join(f if f != "seed" else "seed::text" for f in RUN_FIELDS) + \
    ", cancel_requested"
_UNFINISHED = "state IN ('queued', 'running')"  # the partial index runs_unfinished
#: the insert of one run (arguments in :data:`RUN_FIELDS` order)
INSERT = (f"INSERT INTO runs ({', '.join(RUN_FIELDS)}) VALUES ("
           + ", ".join(f"${i + 1}" + ("::jsonb" if f == "seed" else "")
                       for i, f in enumerate(RUN_FIELDS)) + ")")
_KEY_ID = RUN_FIELDS.index("key_id")
_RUN_FIELDS = RUN_FIELDS
_RUN_SELECT = f"SELECT {COLUMNS} FROM runs"


async def enqueue(conn: Conn, values: list[Any], cap: int | None,
                  queue_cap: int | None) -> str | None:
    """Insert the run (``values`` in :data:`RUN_FIELDS` order) unless its key is at ``cap``
    or the queue at ``queue_cap`` (``"cap"``, ``"queue"``)."""
    key_id = values[_KEY_ID]
    if cap is not None:
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", key_id)
        count = await conn.fetchval(
            f"SELECT count(*) FROM runs WHERE key_id = $1 AND {_UNFINISHED}", key_id)
        if count >= cap:
            return "cap"
    if queue_cap is not None:
        count = await conn.fetchval(
            f"SELECT count(*) FROM runs WHERE {_UNFINISHED} AND state = 'queued'")
        if count >= queue_cap:
            return "queue"
    await conn.execute(INSERT, *values)
    return None


async def claim(conn: Conn, owner: str, lease_until: float) -> Any:
    """The claimed row (``None``: nothing queued)."""
    return await conn.fetchrow(
        f"UPDATE runs SET owner = $1, lease_until = $2 WHERE id = (SELECT id FROM runs "
        f"WHERE {_UNFINISHED} AND state = 'queued' AND owner IS NULL ORDER BY seq LIMIT 1 "
        f"FOR UPDATE SKIP LOCKED) RETURNING {COLUMNS}", owner, lease_until)


async def expired(conn: Conn, now: float) -> list[Any]:
    """Unfinished runs whose lease ended before ``now``."""
    return list(await conn.fetch(
        f"SELECT {COLUMNS} FROM runs WHERE {_UNFINISHED} AND owner IS NOT NULL AND "
        "lease_until < $1 ORDER BY seq", now))


async def delete_finished(conn: Conn, key_id: str) -> int:
    """Delete the key's finished runs; how many."""
    status = await conn.execute(f"DELETE FROM runs WHERE key_id = $1 AND state IS NOT NULL "
                                f"AND NOT ({_UNFINISHED})", key_id)
    return int(status.rsplit(" ", 1)[-1])


async def prune(conn: Conn, finished_before: str) -> int:
    """Delete runs finished before ``finished_before``; how many."""
    status = await conn.execute("DELETE FROM runs WHERE finished_at IS NOT NULL AND "
                                "finished_at < $1", finished_before)
    return int(status.rsplit(" ", 1)[-1])


async def idempotency_begin(conn: Conn, key_id: str, idem_key: str, fingerprint: str,
                            now: float, ttl: float) -> tuple[str, str | None]:
    """Look the key up (row-locked), and record it pending when new or expired."""
    inserted = await conn.fetchval(
        "INSERT INTO idempotency (key_id, idem_key, fingerprint, created_epoch) "
        "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1",
        key_id, idem_key, fingerprint, now)
    if inserted:
        return "new", None
    row = await conn.fetchrow(
        "SELECT fingerprint, created_epoch, response FROM idempotency WHERE key_id = $1 "
        "AND idem_key = $2 FOR UPDATE", key_id, idem_key)
    if row is not None and row[1] >= now - ttl:
        if row[0] != fingerprint:
            return "mismatch", None
        return ("pending", None) if row[2] is None else ("done", str(row[2]))
    await conn.execute(
        "INSERT INTO idempotency (key_id, idem_key, fingerprint, created_epoch) "
        "VALUES ($1, $2, $3, $4) ON CONFLICT (key_id, idem_key) DO UPDATE SET "
        "fingerprint = $3, created_epoch = $4, response = NULL",
        key_id, idem_key, fingerprint, now)
    await conn.execute("DELETE FROM idempotency WHERE key_id = $1 AND created_epoch < $2",
                       key_id, now - ttl)
    return "new", None


async def idempotency_end(conn: Conn, key_id: str, idem_key: str,
                          response: str | None) -> None:
    """Store the answer, or forget the pending record."""
    if response is None:
        await conn.execute("DELETE FROM idempotency WHERE key_id = $1 AND idem_key = $2 "
                           "AND response IS NULL", key_id, idem_key)
    else:
        await conn.execute("UPDATE idempotency SET response = $3 WHERE key_id = $1 AND "
                           "idem_key = $2", key_id, idem_key, response)


class PostgresRuns(PostgresPool):
    """The run methods of :class:`~decido_service.store.postgres.PostgresStore`: each one
    transaction, or one read, around the statements above (``idempotency_begin`` and
    ``idempotency_end`` call the module's functions of the same names)."""

    async def record_run(self, run: Mapping[str, Any]) -> None:
        """Insert one run record; missing ``id``/``created_at`` are filled in, other
        missing fields are NULL, unknown fields are ignored."""
        values = self._run_values(run)

        async def insert(conn: Conn) -> None:
            await conn.execute(INSERT, *values)

        await self._write(insert)

    def _run_values(self, run: Mapping[str, Any]) -> list[Any]:
        """The arguments of :data:`INSERT` for ``run`` (id and created_at filled)."""
        row = {name: run.get(name) for name in _RUN_FIELDS}
        row["id"] = row["id"] or uuid.uuid4().hex
        row["created_at"] = row["created_at"] or iso_utc(self._clock())
        row["seed"] = _jsonb_seed(row["seed"])
        return [row[f] for f in _RUN_FIELDS]

    async def update_run(self, run_id: str, changes: Mapping[str, Any],
                         expect: Mapping[str, Any] | None = None) -> bool:
        """Set some :data:`RUN_UPDATABLE` columns of a run (see the protocol)."""
        columns = check_run_changes(changes)
        values = [_jsonb_seed(changes[c]) if c == "seed" else changes[c] for c in columns]
        sets = ", ".join(f"{c} = ${i + 2}" + ("::jsonb" if c == "seed" else "")
                         for i, c in enumerate(columns))
        expected = list((expect or {}).items())
        if expected:
            check_run_changes(expect or {})
        where = "".join(f" AND {c} IS NOT DISTINCT FROM ${len(values) + i + 2}"
                        for i, (c, _) in enumerate(expected))

        async def update(conn: Conn) -> bool:
            status = await conn.execute(f"UPDATE runs SET {sets} WHERE id = $1{where}",
                                        run_id, *values, *(v for _, v in expected))
            if rowcount(status) == 1 and changes.get("state") in FINISHED_STATES:
                final = await conn.fetchrow(f"{_RUN_SELECT} WHERE id = $1", run_id)
                await enqueue_run_event(conn, _run_row(final), time.time())  # same transaction
            return rowcount(status) == 1

        return await self._write(update)

    async def enqueue_run(self, run: Mapping[str, Any], cap: int | None,
                          queue_cap: int | None = None) -> str | None:
        """Insert a run unless its key or the queue is at its cap (the key's advisory
        lock serialises the check and the insert across nodes)."""
        values = self._run_values(run)
        return await self._write(lambda conn: enqueue(conn, values, cap,
                                                                    queue_cap))

    async def discard_run(self, run_id: str) -> bool:
        """Delete a run whatever its state."""
        async def delete(conn: Conn) -> bool:
            return rowcount(await conn.execute("DELETE FROM runs WHERE id = $1", run_id)) == 1

        return await self._write(delete)

    async def claim_run(self, owner: str, lease_until: float) -> dict[str, Any] | None:
        """Own the oldest unowned queued run until ``lease_until`` (``SKIP LOCKED``)."""
        row = await self._write(lambda conn: claim(conn, owner, lease_until))
        return None if row is None else _run_row(row)

    async def expired_runs(self, now: float) -> list[dict[str, Any]]:
        """Unfinished runs whose lease ended before ``now``."""
        rows = await self._read(lambda conn: expired(conn, now))
        return [_run_row(row) for row in rows]

    async def delete_runs(self, key_id: str) -> int:
        """Delete the key's finished runs; how many."""
        return await self._write(lambda conn: delete_finished(conn, key_id))

    async def prune_runs(self, finished_before: str) -> int:
        """Delete runs finished before ``finished_before``; how many."""
        return await self._write(lambda conn: prune(conn, finished_before))

    async def idempotency_begin(self, key_id: str, idem_key: str, fingerprint: str,
                                now: float, ttl: float) -> tuple[str, str | None]:
        """Look up (and when new, record) an idempotency key."""
        return await self._write(lambda conn: idempotency_begin(
            conn, key_id, idem_key, fingerprint, now, ttl))

    async def idempotency_end(self, key_id: str, idem_key: str,
                              response: str | None) -> None:
        """Store the answer of an idempotency key (``None``: forget it)."""
        await self._write(lambda conn: idempotency_end(
            conn, key_id, idem_key, response))

    async def get_run(self, key_id: str, run_id: str) -> dict[str, Any] | None:
        """One of ``key_id``'s runs, or ``None``."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(f"{_RUN_SELECT} WHERE id = $1 AND key_id = $2",
                                       run_id, key_id)

        row = await self._read(get)
        return None if row is None else _run_row(row)

    async def page_runs(self, key_id: str, limit: int, starting_after: str | None = None,
                        state: str | None = None,
                        engine: str | None = None) -> list[dict[str, Any]]:
        """A page of ``key_id``'s runs, newest first (see the protocol)."""
        async def page(conn: Conn) -> list[Any]:
            where, args = ["key_id = $1"], list[Any]([key_id])
            if starting_after is not None:
                seq = await conn.fetchval("SELECT seq FROM runs WHERE id = $1 AND key_id = $2",
                                          starting_after, key_id)
                if seq is None:
                    raise ValueError(f"starting_after: no run {starting_after!r} of this key")
                args.append(seq)
                where.append(f"seq < ${len(args)}")
            for column, value in (("state", state), ("engine", engine)):
                if value is not None:
                    args.append(value)
                    where.append(f"{column} = ${len(args)}")
            args.append(int(limit))
            return list(await conn.fetch(f"{_RUN_SELECT} WHERE {' AND '.join(where)} "
                                         f"ORDER BY seq DESC LIMIT ${len(args)}", *args))

        return [_run_row(row) for row in await self._read(page)]

    async def unfinished_runs(self) -> list[dict[str, Any]]:
        """Every queued or running run, oldest first."""
        async def rows(conn: Conn) -> list[Any]:
            return list(await conn.fetch(
                f"{_RUN_SELECT} WHERE state IN ('queued', 'running') ORDER BY seq"))

        return [_run_row(row) for row in await self._read(rows)]

    async def count_runs(self) -> dict[str, int]:
        """Runs by state (see the protocol)."""
        async def rows(conn: Conn) -> list[Any]:
            return list(await conn.fetch(COUNT_RUNS_SQL))

        return {str(r[0]): int(r[1]) for r in await self._read(rows)}

    async def request_cancel(self, key_id: str, run_id: str) -> str | None:
        """Flag an unfinished run for cancellation; its state (see the protocol)."""
        async def cancel(conn: Conn) -> str | None:
            state = await conn.fetchval(
                "SELECT state FROM runs WHERE id = $1 AND key_id = $2 FOR UPDATE",
                run_id, key_id)
            if state is None:
                return None
            if state not in FINISHED_STATES:
                await conn.execute("UPDATE runs SET cancel_requested = 1 WHERE id = $1", run_id)
            return str(state)

        return await self._write(cancel)

    async def delete_run(self, key_id: str, run_id: str) -> str | None:
        """Delete a finished run; its state (see the protocol)."""
        async def delete(conn: Conn) -> str | None:
            state = await conn.fetchval(
                "SELECT state FROM runs WHERE id = $1 AND key_id = $2 FOR UPDATE",
                run_id, key_id)
            if state is None:
                return None
            if state in FINISHED_STATES:
                await conn.execute("DELETE FROM runs WHERE id = $1", run_id)
            return str(state)

        return await self._write(delete)


def _jsonb_seed(seed: Any) -> str | None:
    """A seed as JSON text for the ``jsonb`` column (beyond 64 bits: a string, as the
    SQLite backend keeps it)."""
    if isinstance(seed, int) and not -(2**63) <= seed < 2**63:
        seed = str(seed)
    return None if seed is None else json.dumps(seed)


def _run_row(row: Sequence[Any]) -> dict[str, Any]:
    out = dict(zip(RUN_FIELDS, row, strict=False))
    out["seed"] = None if out["seed"] is None else json.loads(out["seed"])
    out["cancel_requested"] = bool(row[len(RUN_FIELDS)])
    return out
