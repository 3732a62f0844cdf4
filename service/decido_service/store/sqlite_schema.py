"""The SQLite backend's schema migrations and its store URLs."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

__all__ = ["MIGRATIONS", "current_version", "parse_sqlite_url"]


def _m001_initial(conn: sqlite3.Connection) -> None:
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


def _m002_decisions(conn: sqlite3.Connection) -> None:
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


#: Ordered migrations: ``MIGRATIONS[i]`` takes the schema from version ``i`` to ``i + 1``.
#: Append only; never edit one that has shipped.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_m001_initial, _m002_decisions]


def parse_sqlite_url(url: str) -> tuple[str, dict[str, Any]]:
    """``(path, options)`` from a store URL or a plain path (see ``open_store``)."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("the store URL is empty")
    options: dict[str, Any] = {}
    if url.startswith("sqlite:"):
        rest, _, query = url[len("sqlite:"):].partition("?")
        if rest.startswith("///"):
            path = "/" + rest.lstrip("/")
        elif rest.startswith("//"):
            raise ValueError(f"store URL {url!r}: use sqlite:///absolute/path or sqlite:relative")
        else:
            path = rest
        for name, value in parse_qsl(query, keep_blank_values=True):
            if name == "synchronous":
                options["synchronous"] = value
            elif name == "busy_timeout":
                options["busy_timeout_ms"] = int(value)
            else:
                raise ValueError(f"store URL {url!r}: unknown option {name!r}")
    elif "://" in url:
        raise ValueError(f"unsupported store URL {url!r}; this build has sqlite only")
    else:
        path = url
    if not path or path == ":memory:" or path.startswith("file:"):
        raise ValueError(f"store URL {url!r}: a database file path is required")
    return path, options


def current_version(conn: sqlite3.Connection) -> int:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if exists is None:
        return 0
    return int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0])
