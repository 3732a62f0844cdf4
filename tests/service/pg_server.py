"""The PostgreSQL server the store tests run against, and throwaway databases on it.

The server is the one named by ``DECIDO_TEST_POSTGRES`` (a ``postgresql://`` URL of a role
that may create databases), else the local one on the Unix socket ``/var/run/postgresql``
as ``postgres`` (trust auth). When none answers the PostgreSQL tests skip with a loud
reason, unless ``DECIDO_REQUIRE_POSTGRES=1`` (set by ``.ci/run``), which makes them fail.

:func:`throwaway_database` creates a uniquely named database and drops it afterwards,
whatever happened in between (its connections are terminated first).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Iterator
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

import pytest

DEFAULT_ADMIN_URL = "postgresql://postgres@/postgres?host=/var/run/postgresql"
PREFIX = "decido_test_"


def admin_url() -> str:
    """The URL of the maintenance database of the test server."""
    return os.environ.get("DECIDO_TEST_POSTGRES") or DEFAULT_ADMIN_URL


@lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """Why no PostgreSQL can be used (``None`` when one answers)."""
    try:
        import asyncpg  # noqa: F401
    except ImportError as exc:
        return f"asyncpg is not installed ({exc})"
    try:
        execute(admin_url(), "SELECT 1")
    except Exception as exc:  # any failure to reach it: the reason is reported
        return f"no PostgreSQL at {admin_url()}: {str(exc).strip().splitlines()[0]}"
    return None


def require_postgres() -> None:
    """Skip (or, with ``DECIDO_REQUIRE_POSTGRES=1``, fail) when no PostgreSQL answers."""
    reason = unavailable_reason()
    if reason is None:
        return
    message = (f"POSTGRESQL TESTS NOT RUN: {reason}. Set DECIDO_TEST_POSTGRES to a "
               "postgresql:// URL of a role that may create databases.")
    if os.environ.get("DECIDO_REQUIRE_POSTGRES") == "1":
        pytest.fail(message + " (DECIDO_REQUIRE_POSTGRES=1 makes this a failure)")
    pytest.skip(message)


def database_url(name: str) -> str:
    """The admin URL pointed at database ``name``."""
    parts = urlsplit(admin_url())
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def execute(url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Run one statement on the database of ``url`` (autocommit); its rows, if any."""
    import asyncpg

    async def run() -> list[tuple[object, ...]]:
        conn = await asyncpg.connect(url, timeout=5)
        try:
            return [tuple(r) for r in await conn.fetch(sql, *params)]
        finally:
            await conn.close()

    return asyncio.run(run())


def admin_execute(sql: str, *params: object) -> list[tuple[object, ...]]:
    """Run one statement on the maintenance database; its rows, if any."""
    return execute(admin_url(), sql, *params)


def terminate_backends(name: str) -> int:
    """``pg_terminate_backend`` every connection to database ``name``; how many."""
    rows = admin_execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                         "WHERE datname = $1 AND pid <> pg_backend_pid()", name)
    return int(rows[0][0])  # type: ignore[call-overload]


def allow_connections(name: str, allowed: bool) -> None:
    """Let (or stop) new connections to ``name``: an outage of that database only."""
    admin_execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {str(allowed).lower()}')


@contextlib.contextmanager
def throwaway_database() -> Iterator[tuple[str, str]]:
    """``(name, url)`` of a new empty database, dropped on the way out."""
    require_postgres()
    name = f"{PREFIX}{os.getpid()}_{uuid.uuid4().hex[:10]}"
    admin_execute(f'CREATE DATABASE "{name}"')
    try:
        yield name, database_url(name)
    finally:
        with contextlib.suppress(Exception):
            allow_connections(name, True)
        admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
