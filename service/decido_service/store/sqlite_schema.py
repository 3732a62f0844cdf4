"""The SQLite backend's migrations (its halves of the shared list) and its store URLs."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from decido_service.store.migrations import MIGRATIONS as SHARED_MIGRATIONS

__all__ = ["MIGRATIONS", "current_version", "parse_sqlite_url"]


#: The SQLite halves of :data:`decido_service.store.migrations.MIGRATIONS` (the one ordered
#: list of both backends): ``MIGRATIONS[i]`` takes the schema from version ``i`` to ``i + 1``.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [m.sqlite for m in SHARED_MIGRATIONS]


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
        raise ValueError(f"unsupported store URL {url!r}; expected sqlite: or postgresql://")
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
