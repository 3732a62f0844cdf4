"""The PostgreSQL backend's run queue and idempotency records: the statements of
:class:`~decido_service.store.postgres.PostgresStore`'s methods of the same names, each
run inside the store's transaction on ``conn`` (see :class:`~decido_service.store.Store`).

A claim is ``SELECT … FOR UPDATE SKIP LOCKED`` inside an ``UPDATE``: nodes claiming at the
same moment each take a different run and never wait for each other. The per-key cap holds
a transaction-level advisory lock on the key (``hashtext(key_id)``) while it counts and
inserts, so two nodes admitting runs of one key are serialised.
"""

from __future__ import annotations

from typing import Any

from asyncpg import Connection as Conn  # type: ignore[import-untyped]

from decido_service.store import RUN_FIELDS

__all__ = ["COLUMNS", "INSERT", "claim", "delete_finished", "enqueue", "expired",
           "idempotency_begin", "idempotency_end", "prune"]

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
