"""Keys, dashboard sessions and service secrets on PostgreSQL (see
:class:`~decido_service.store.Store` for what each does)."""

from __future__ import annotations

from typing import Any

from asyncpg import Connection as Conn  # type: ignore[import-untyped]  # no type hints

from decido_service import keys
from decido_service.store.key_rows import (
    ACCOUNT_OF,
    KEY_COLUMNS,
    SESSION_KEY,
    key_record,
    new_key,
)
from decido_service.store.postgres_pool import PostgresPool, rowcount
from decido_service.store.records import KeyRecord, iso_utc

__all__ = ["PostgresKeys"]


class PostgresKeys(PostgresPool):
    """The key, session and service-secret methods of
    :class:`~decido_service.store.postgres.PostgresStore`."""

    async def create_key(self, plan: str, tier: str, label: str | None = None,
                         limits: dict[str, Any] | None = None,
                         owner: str | None = None) -> tuple[KeyRecord, str]:
        """Create a key; ``(record, secret)``. Only the secret's hash is written; with
        ``owner``, the key joins that key's account."""
        record, secret, row = new_key(plan, tier, label, limits, self._clock())

        async def insert(conn: Conn) -> None:
            await conn.execute(f"INSERT INTO keys ({KEY_COLUMNS}, hash, account) VALUES "
                               "($1, $2, $3, $4, $5, $6, $7, $8, $9, "
                               f"{ACCOUNT_OF.format('$10')})", *row, owner)

        await self._write(insert)
        return record, secret

    async def find_key(self, secret: str) -> KeyRecord | None:
        """The key whose hash matches ``secret``; ``None`` if malformed or unknown."""
        if not keys.is_well_formed(secret):
            return None

        async def find(conn: Conn) -> Any:
            return await conn.fetchrow(f"SELECT {KEY_COLUMNS}, hash FROM keys WHERE hash = $1",
                                       keys.hash_secret(secret))

        row = await self._read(find)
        if row is None or not keys.verify(secret, row[-1]):
            return None
        return key_record(row)

    async def get_key(self, key_id: str) -> KeyRecord | None:
        """The key with this public id, or ``None``."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(f"SELECT {KEY_COLUMNS} FROM keys WHERE id = $1", key_id)

        row = await self._read(get)
        return None if row is None else key_record(row)

    async def list_keys(self) -> list[KeyRecord]:
        """All keys in creation order."""
        async def rows(conn: Conn) -> list[Any]:
            return list(await conn.fetch(f"SELECT {KEY_COLUMNS} FROM keys ORDER BY seq"))

        return [key_record(row) for row in await self._read(rows)]

    async def account_keys(self, key_id: str) -> list[KeyRecord]:
        """The keys of ``key_id``'s account, oldest first (``[]``: unknown id)."""
        async def rows(conn: Conn) -> list[Any]:
            return list(await conn.fetch(
                f"SELECT {KEY_COLUMNS} FROM keys WHERE COALESCE(account, id) = "
                f"{ACCOUNT_OF.format('$1')} ORDER BY seq", key_id))

        return [key_record(row) for row in await self._read(rows)]

    async def service_secret(self, name: str, candidate: str) -> str:
        """The secret stored under ``name`` (``candidate`` the first time)."""
        async def get(conn: Conn) -> str:
            await conn.execute("INSERT INTO service_secrets (name, value) VALUES ($1, $2) "
                               "ON CONFLICT (name) DO NOTHING", name, candidate)
            return str(await conn.fetchval(
                "SELECT value FROM service_secrets WHERE name = $1", name))

        return await self._write(get)

    async def open_session(self, session_id: str, key_id: str, expires: float,
                           now: float) -> None:
        """Record a session (expired ones deleted)."""
        async def insert(conn: Conn) -> None:
            await conn.execute("DELETE FROM sessions WHERE expires_epoch <= $1", now)
            await conn.execute("INSERT INTO sessions (id, key_id, expires_epoch) "
                               "VALUES ($1, $2, $3)", session_id, key_id, expires)

        await self._write(insert)

    async def session_key(self, session_id: str, now: float) -> KeyRecord | None:
        """The key of a live session, else ``None``."""
        async def get(conn: Conn) -> Any:
            return await conn.fetchrow(SESSION_KEY.format("$1", "$2"), session_id, now)

        row = await self._read(get)
        return None if row is None else key_record(row)

    async def close_session(self, session_id: str) -> None:
        """End a session."""
        async def delete(conn: Conn) -> None:
            await conn.execute("DELETE FROM sessions WHERE id = $1", session_id)

        await self._write(delete)

    async def revoke_key(self, key_id: str) -> bool:
        """Revoke; ``True`` if the key exists (an earlier ``revoked_at`` is kept)."""
        when = iso_utc(self._clock())

        async def revoke(conn: Conn) -> bool:
            status = await conn.execute(
                "UPDATE keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2",
                when, key_id)
            return rowcount(status) == 1

        return await self._write(revoke)
