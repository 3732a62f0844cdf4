"""The store's schema migrations: one ordered list for every backend.

``MIGRATIONS[i]`` takes a database from schema version ``i`` to ``i + 1`` on either backend:
its ``sqlite`` half is a function of a :class:`sqlite3.Connection`, its ``postgres`` half a
tuple of SQL statements. Both backends record each applied version in a ``schema_version``
table, apply the missing ones in one transaction that only one process can hold at a time
(SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: a transaction-scoped advisory lock), and refuse a
database whose version is newer than ``len(MIGRATIONS)``. Append only; never edit an entry
that has shipped.

The PostgreSQL tables have the SQLite ones' columns, with ``seq`` identity columns where
SQLite orders by ``rowid``; ``"window"`` is quoted there (a reserved word).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import NamedTuple

from decido_service.store.webhook_sql import ddl as webhook_ddl

__all__ = ["MIGRATIONS", "Migration"]


class Migration(NamedTuple):
    """One schema version: what it adds, and how each backend adds it."""

    name: str
    sqlite: Callable[[sqlite3.Connection], None]
    postgres: tuple[str, ...]


def _sqlite_initial(conn: sqlite3.Connection) -> None:
    """Keys (hashed), usage counters per window, optimization run records."""
    conn.execute(
        """CREATE TABLE keys (
            id          TEXT PRIMARY KEY,
            prefix      TEXT NOT NULL,
            hash        TEXT NOT NULL UNIQUE,
            plan        TEXT NOT NULL,
            tier        TEXT NOT NULL,
            label       TEXT,
            created_at  TEXT NOT NULL,
            revoked_at  TEXT,
            limits      TEXT
        )"""
    )
    conn.execute(
        """CREATE TABLE counters (
            name          TEXT NOT NULL,
            subject       TEXT NOT NULL,
            window        TEXT NOT NULL,
            window_start  INTEGER NOT NULL,
            window_end    INTEGER NOT NULL,
            count         INTEGER NOT NULL,
            PRIMARY KEY (name, subject, window, window_start)
        ) WITHOUT ROWID"""
    )
    conn.execute(
        """CREATE TABLE runs (
            id           TEXT PRIMARY KEY,
            key_id       TEXT,
            created_at   TEXT NOT NULL,
            engine       TEXT,
            dims         INTEGER,
            status       TEXT,
            value        REAL,
            evaluations  INTEGER,
            elapsed_ms   REAL,
            goal         TEXT,
            seed
        )"""
    )
    conn.execute("CREATE INDEX runs_by_key ON runs (key_id, created_at)")


_POSTGRES_INITIAL = (
    """CREATE TABLE keys (
        seq         BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
        id          TEXT PRIMARY KEY,
        prefix      TEXT NOT NULL,
        hash        TEXT NOT NULL UNIQUE,
        plan        TEXT NOT NULL,
        tier        TEXT NOT NULL,
        label       TEXT,
        created_at  TEXT NOT NULL,
        revoked_at  TEXT,
        limits      TEXT
    )""",
    """CREATE TABLE counters (
        name          TEXT NOT NULL,
        subject       TEXT NOT NULL,
        "window"      TEXT NOT NULL,
        window_start  BIGINT NOT NULL,
        window_end    BIGINT NOT NULL,
        count         BIGINT NOT NULL,
        PRIMARY KEY (name, subject, "window", window_start)
    )""",
    "CREATE INDEX counters_by_end ON counters (window_end) WHERE \"window\" <> 'month'",
    """CREATE TABLE runs (
        seq          BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
        id           TEXT PRIMARY KEY,
        key_id       TEXT,
        created_at   TEXT NOT NULL,
        engine       TEXT,
        dims         BIGINT,
        status       TEXT,
        value        DOUBLE PRECISION,
        evaluations  BIGINT,
        elapsed_ms   DOUBLE PRECISION,
        goal         TEXT,
        seed         JSONB
    )""",
    "CREATE INDEX runs_by_key ON runs (key_id, created_at)",
)


def _sqlite_decisions(conn: sqlite3.Connection) -> None:
    """The decision log: one row per logged ``/v1/decide`` or ``/v1/batch`` call."""
    conn.execute(
        """CREATE TABLE decisions (
            seq           INTEGER PRIMARY KEY AUTOINCREMENT,
            id            TEXT NOT NULL UNIQUE,
            key_id        TEXT NOT NULL,
            created_at    TEXT NOT NULL,
            created_epoch REAL NOT NULL,
            summary       TEXT NOT NULL,
            request       TEXT NOT NULL,
            answer        TEXT
        )"""
    )
    conn.execute("CREATE INDEX decisions_by_key ON decisions (key_id, seq)")
    conn.execute("CREATE INDEX decisions_by_age ON decisions (created_epoch)")


_POSTGRES_DECISIONS = (
    """CREATE TABLE decisions (
        seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id            TEXT NOT NULL UNIQUE,
        key_id        TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        created_epoch DOUBLE PRECISION NOT NULL,
        summary       TEXT NOT NULL,
        request       TEXT NOT NULL,
        answer        TEXT
    )""",
    "CREATE INDEX decisions_by_key ON decisions (key_id, seq)",
    "CREATE INDEX decisions_by_age ON decisions (created_epoch)",
)


_RUN_STATE_BACKFILL = ("UPDATE runs SET state = CASE WHEN status = 'error' THEN 'failed' "
                       "ELSE 'succeeded' END WHERE state IS NULL")


def _sqlite_run_documents(conn: sqlite3.Connection) -> None:
    """Runs as resources: a lifecycle ``state``, the run ``document`` (request, result,
    problem, progress, trace; JSON), a ``cancel_requested`` flag any worker can set, and
    ``finished_at``. Rows written before it are finished runs (``failed`` when their status
    was ``error``) without a document."""
    for column in ("state TEXT", "document TEXT",
                   "cancel_requested INTEGER NOT NULL DEFAULT 0", "finished_at TEXT"):
        conn.execute(f"ALTER TABLE runs ADD COLUMN {column}")
    conn.execute(_RUN_STATE_BACKFILL)
    conn.execute("CREATE INDEX runs_by_key_order ON runs (key_id)")  # + rowid, implicitly


_POSTGRES_RUN_DOCUMENTS = (
    "ALTER TABLE runs ADD COLUMN state TEXT",
    "ALTER TABLE runs ADD COLUMN document TEXT",
    "ALTER TABLE runs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE runs ADD COLUMN finished_at TEXT",
    _RUN_STATE_BACKFILL,
    "CREATE INDEX runs_by_key_order ON runs (key_id, seq)",
)

_QUEUE_INDEXES = (
    # the queue, the per-key cap and the lease sweep only ever look at unfinished runs
    "CREATE INDEX runs_unfinished ON runs (key_id) WHERE state IN ('queued', 'running')",
    "CREATE INDEX runs_by_finish ON runs (finished_at) WHERE finished_at IS NOT NULL",
)


def _sqlite_run_queue(conn: sqlite3.Connection) -> None:
    """The durable queue: the process that owns a run (``owner``) until ``lease_until``
    (epoch seconds) unless it renews the lease; the ``idempotency`` records of
    ``Idempotency-Key`` (the request's fingerprint, and the answer once there is one)."""
    for column in ("owner TEXT", "lease_until REAL"):
        conn.execute(f"ALTER TABLE runs ADD COLUMN {column}")
    for statement in _QUEUE_INDEXES:
        conn.execute(statement)
    conn.execute(
        """CREATE TABLE idempotency (
            key_id        TEXT NOT NULL,
            idem_key      TEXT NOT NULL,
            fingerprint   TEXT NOT NULL,
            created_epoch REAL NOT NULL,
            response      TEXT,
            PRIMARY KEY (key_id, idem_key)
        ) WITHOUT ROWID"""
    )


_POSTGRES_RUN_QUEUE = (
    "ALTER TABLE runs ADD COLUMN owner TEXT",
    "ALTER TABLE runs ADD COLUMN lease_until DOUBLE PRECISION",
    *_QUEUE_INDEXES,
    """CREATE TABLE idempotency (
        key_id        TEXT NOT NULL,
        idem_key      TEXT NOT NULL,
        fingerprint   TEXT NOT NULL,
        created_epoch DOUBLE PRECISION NOT NULL,
        response      TEXT,
        PRIMARY KEY (key_id, idem_key)
    )""",
)

_KEY_ACCOUNTS = (
    "ALTER TABLE keys ADD COLUMN account TEXT",
    "CREATE INDEX keys_by_account ON keys (account)",
    "CREATE TABLE service_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE sessions (
        id            TEXT PRIMARY KEY,
        key_id        TEXT NOT NULL,
        expires_epoch DOUBLE PRECISION NOT NULL
    )""",
    "CREATE INDEX sessions_by_expiry ON sessions (expires_epoch)",
)


def _sqlite_key_accounts(conn: sqlite3.Connection) -> None:
    """Key accounts, service secrets, dashboard sessions: a key made by another key (the
    dashboard's keys page) has that key's ``account`` (NULL: the key is its own account,
    ``account`` = its id); ``service_secrets`` holds secrets every worker and node shares
    (the dashboard's session secret), made once; ``sessions`` the dashboard's signed-in
    sessions (a session ends when its row goes: sign-out, expiry)."""
    for statement in _KEY_ACCOUNTS:
        conn.execute(statement)


def _sqlite_webhooks(conn: sqlite3.Connection) -> None:
    """Webhook endpoints and their deliveries (:mod:`~decido_service.store.webhook_sql`)."""
    for statement in webhook_ddl("INTEGER PRIMARY KEY AUTOINCREMENT"):
        conn.execute(statement)


#: The ordered list (module docs): version ``i + 1`` is ``MIGRATIONS[i]``.
MIGRATIONS: list[Migration] = [
    Migration("initial: keys, counters, runs", _sqlite_initial, _POSTGRES_INITIAL),
    Migration("the decision log", _sqlite_decisions, _POSTGRES_DECISIONS),
    Migration("runs as resources: state, document, cancel flag", _sqlite_run_documents,
              _POSTGRES_RUN_DOCUMENTS),
    Migration("the run queue (owner, lease) and idempotency records", _sqlite_run_queue,
              _POSTGRES_RUN_QUEUE),

    Migration("key accounts, service secrets, sessions", _sqlite_key_accounts, _KEY_ACCOUNTS),
    Migration("webhooks and their deliveries", _sqlite_webhooks,
              webhook_ddl("BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")),
]
