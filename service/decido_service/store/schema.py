"""The store's schema, written once for both backends, and its migrations.

:data:`MIGRATIONS` is the ordered list: ``MIGRATIONS[i]`` takes a database from schema
version ``i`` to ``i + 1``, a tuple of statements whose ``{identity}``,
``{without_rowid}`` and ``{members}`` (the members of ``t.metadata``) the
:class:`~decido_service.store.dialect.Dialect` fills in. Both
backends record each applied version in ``schema_version``, apply the missing ones in one
transaction that only one process can hold at a time (:func:`upgrade`: SQLite's
``BEGIN IMMEDIATE``; PostgreSQL adds an advisory lock), and refuse a database whose
version is newer than ``len(MIGRATIONS)``. Append only once a version has shipped.

decido has not been released: the development history is folded into version 1, the
schema below. A database made by a development build before it is refused as newer (its
``schema_version`` says 5); make a new one.

Every table orders its rows by ``seq`` (:attr:`Dialect.identity`), so pages and the run
queue read the same order on both backends. Times are epoch seconds (``*_epoch``,
``window_*``, ``lease_until``) or ISO 8601 UTC text (``*_at``).
"""

from __future__ import annotations

import time

from decido_service.store import labels, studies, webhooks
from decido_service.store.dialect import Dialect, Tx
from decido_service.store.records import StoreError, iso_utc

__all__ = ["MIGRATIONS", "upgrade", "version"]

_SCHEMA = (
    # accounts: keys (only the secret's hash), the account a key belongs to (NULL: its
    # own), secrets every worker and node shares, the dashboard's sessions
    """CREATE TABLE keys (
        seq {identity}, id TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE, plan TEXT NOT NULL, tier TEXT NOT NULL, label TEXT,
        created_at TEXT NOT NULL, revoked_at TEXT, limits TEXT, account TEXT)""",
    "CREATE INDEX keys_by_account ON keys (account)",
    "CREATE TABLE service_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY, key_id TEXT NOT NULL, expires_epoch DOUBLE PRECISION NOT NULL)""",
    "CREATE INDEX sessions_by_expiry ON sessions (expires_epoch)",
    # admissions: one row per counter and window
    """CREATE TABLE counters (
        name TEXT NOT NULL, subject TEXT NOT NULL, "window" TEXT NOT NULL,
        window_start BIGINT NOT NULL, window_end BIGINT NOT NULL, count BIGINT NOT NULL,
        PRIMARY KEY (name, subject, "window", window_start)){without_rowid}""",
    """CREATE INDEX counters_by_end ON counters (window_end) WHERE "window" <> 'month'""",
    # runs: the run document is the service's JSON, opaque here; seed is JSON text;
    # metadata (runs and decisions) a JSON object of strings, NULL when empty
    """CREATE TABLE runs (
        seq {identity}, id TEXT NOT NULL UNIQUE, key_id TEXT, created_at TEXT NOT NULL,
        engine TEXT, dims BIGINT, status TEXT, value DOUBLE PRECISION, evaluations BIGINT,
        elapsed_ms DOUBLE PRECISION, goal TEXT, seed TEXT, state TEXT NOT NULL,
        document TEXT, cancel_requested INTEGER NOT NULL DEFAULT 0, finished_at TEXT,
        owner TEXT, lease_until DOUBLE PRECISION, metadata TEXT)""",
    "CREATE INDEX runs_by_key ON runs (key_id, seq)",
    # the queue, the per-key cap and the lease sweep only ever look at unfinished runs
    "CREATE INDEX runs_unfinished ON runs (key_id) WHERE state IN ('queued', 'running')",
    "CREATE INDEX runs_by_finish ON runs (finished_at) WHERE finished_at IS NOT NULL",
    """CREATE TABLE idempotency (
        key_id TEXT NOT NULL, idem_key TEXT NOT NULL, fingerprint TEXT NOT NULL,
        created_epoch DOUBLE PRECISION NOT NULL, response TEXT,
        PRIMARY KEY (key_id, idem_key)){without_rowid}""",
    # the decision log
    """CREATE TABLE decisions (
        seq {identity}, id TEXT NOT NULL UNIQUE, key_id TEXT NOT NULL,
        created_at TEXT NOT NULL, created_epoch DOUBLE PRECISION NOT NULL,
        summary TEXT NOT NULL, request TEXT NOT NULL, answer TEXT, metadata TEXT)""",
    "CREATE INDEX decisions_by_key ON decisions (key_id, seq)",
    "CREATE INDEX decisions_by_age ON decisions (created_epoch)",
)

#: 3: the decision log's byte cap (:mod:`~decido_service.store.decisions`): each entry's
#: size, and each key's running total (entries logged before it counted as they are)
_LOG_BYTES = (
    "ALTER TABLE decisions ADD COLUMN size BIGINT NOT NULL DEFAULT 0",
    "UPDATE decisions SET size = octet_length(summary) + octet_length(request)"
    " + COALESCE(octet_length(answer), 0) + COALESCE(octet_length(metadata), 0)",
    """CREATE TABLE decision_log_bytes (
        key_id TEXT PRIMARY KEY, total BIGINT NOT NULL){without_rowid}""",
    "INSERT INTO decision_log_bytes (key_id, total)"
    " SELECT key_id, SUM(size) FROM decisions GROUP BY key_id",
)

#: 4: runs' fronts apart from their documents (:meth:`~decido_service.store.runs.Runs.front`):
#: consecutive points of a run's front as one JSON array a row, ``first`` the index of its
#: first point, so a page of a large front reads a few rows and a run's row stays small
_FRONTS = (
    """CREATE TABLE run_fronts (
        run_id TEXT NOT NULL, first BIGINT NOT NULL, count BIGINT NOT NULL,
        points TEXT NOT NULL, PRIMARY KEY (run_id, first)){without_rowid}""",
)

#: The ordered list (module docs): version ``i + 1`` is ``MIGRATIONS[i]``.
MIGRATIONS: list[tuple[str, ...]] = [
    _SCHEMA,
    webhooks.SCHEMA,  # 2: webhook endpoints and their deliveries
    _LOG_BYTES,  # 3: the decision log's byte cap
    _FRONTS,  # 4: runs' fronts in rows of their own
    labels.SCHEMA,  # 5: the label index of runs and decisions
    # 6: how many times a run was given back to the queue (its process stopped)
    ("ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",),
    studies.SCHEMA,  # 7: studies, their trials and logs
    studies.EVENTS_SCHEMA,  # 8: the studies' events (their event streams)
]


async def version(tx: Tx, dialect: Dialect) -> int:
    """The applied schema version (0 for an empty database)."""
    if await tx.fetchrow(dialect.has_table, "schema_version") is None:
        return 0
    row = await tx.fetchrow("SELECT COALESCE(MAX(version), 0) FROM schema_version")
    return 0 if row is None else int(row[0])


async def upgrade(tx: Tx, dialect: Dialect) -> None:
    """Apply the missing :data:`MIGRATIONS` inside the caller's write transaction."""
    if dialect.migration_lock is not None:
        await tx.execute(dialect.migration_lock)
    await tx.execute("CREATE TABLE IF NOT EXISTS schema_version "
                     "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    current = await version(tx, dialect)
    if current > len(MIGRATIONS):
        raise StoreError(f"database schema version {current} is newer than this code "
                         f"({len(MIGRATIONS)}); upgrade decido")
    for number in range(current, len(MIGRATIONS)):
        for statement in MIGRATIONS[number]:
            await tx.execute(statement.format(
                identity=dialect.identity, without_rowid=dialect.without_rowid,
                members=dialect.json_members.format(column="t.metadata")))
        await tx.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                         number + 1, iso_utc(time.time()))
