"""The accounts concern: keys (only the secret's hash is stored), the account a key
belongs to, dashboard sessions and the secrets every worker and node shares.

:class:`Accounts` is written once over a :class:`~decido_service.store.dialect.Database`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from functools import partial
from typing import Any

from decido_service import keys
from decido_service.store.dialect import Database, Row, Tx
from decido_service.store.records import KeyRecord, iso_utc

__all__ = ["Accounts", "key_record"]

#: the columns of a key row in the order :func:`key_record` reads them
_COLUMNS = "id, prefix, plan, tier, label, created_at, revoked_at, limits"
#: key ids one query of :meth:`Accounts.revoked_among` names
_IDS_PER_QUERY = 500
#: the account of the key whose id is the statement's parameter (none: NULL)
_ACCOUNT_OF = "(SELECT COALESCE(account, id) FROM keys WHERE id = ?)"


class Accounts:
    """Keys, their accounts, dashboard sessions and service secrets."""

    def __init__(self, database: Database) -> None:
        self.db = database

    async def create_key(self, plan: str, tier: str, label: str | None = None,
                         limits: dict[str, Any] | None = None,
                         owner: str | None = None) -> tuple[KeyRecord, str]:
        """Create a key; return its record and the secret (the only time it is seen).
        With ``owner`` (a key id) the new key joins that key's account
        (:meth:`account_keys`); an unknown ``owner`` leaves it in an account of its own.
        ``ValueError`` for a malformed argument."""
        for what, value in (("plan", plan), ("tier", tier)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"{what} must be a non-empty string")
        if label is not None and not isinstance(label, str):
            raise ValueError("label must be a string or None")
        if limits is not None and not isinstance(limits, dict):
            raise ValueError("limits must be a dict or None")
        secret, prefix, digest = keys.new_key_material()
        record = KeyRecord(id=uuid.uuid4().hex, prefix=prefix, plan=plan, tier=tier,
                           label=label, created_at=iso_utc(self.db.clock()), revoked_at=None,
                           limits=limits)
        row = (record["id"], prefix, plan, tier, label, record["created_at"], None,
               None if limits is None else json.dumps(limits, sort_keys=True), digest, owner)
        await self.db.write(lambda tx: tx.execute(
            f"INSERT INTO keys ({_COLUMNS}, hash, account) VALUES "
            f"(?, ?, ?, ?, ?, ?, ?, ?, ?, {_ACCOUNT_OF})", *row))
        return record, secret

    async def find_key(self, secret: str) -> KeyRecord | None:
        """The key for a presented secret (revoked keys included), else ``None``.
        Malformed secrets return ``None`` without a lookup."""
        if not keys.is_well_formed(secret):
            return None
        row = await self.db.read(lambda tx: tx.fetchrow(
            f"SELECT {_COLUMNS}, hash FROM keys WHERE hash = ?", keys.hash_secret(secret)))
        if row is None or not keys.verify(secret, row[-1]):
            return None
        return key_record(row)

    async def get_key(self, key_id: str) -> KeyRecord | None:
        """The key with this public id, or ``None``."""
        row = await self.db.read(lambda tx: tx.fetchrow(
            f"SELECT {_COLUMNS} FROM keys WHERE id = ?", key_id))
        return None if row is None else key_record(row)

    async def list_keys(self) -> list[KeyRecord]:
        """All keys, oldest first."""
        rows = await self.db.read(lambda tx: tx.fetch(f"SELECT {_COLUMNS} FROM keys ORDER BY seq"))
        return [key_record(row) for row in rows]

    async def account_keys(self, key_id: str) -> list[KeyRecord]:
        """The keys of ``key_id``'s account (itself, the key that made it and every key
        made by a key of the account; revoked ones included), oldest first; ``[]`` for an
        unknown id."""
        rows = await self.db.read(lambda tx: tx.fetch(
            f"SELECT {_COLUMNS} FROM keys WHERE COALESCE(account, id) = {_ACCOUNT_OF} "
            "ORDER BY seq", key_id))
        return [key_record(row) for row in rows]

    async def revoked_among(self, key_ids: Sequence[str]) -> dict[str, str]:
        """The ``revoked_at`` of each key of ``key_ids`` that is revoked (a query per
        :data:`_IDS_PER_QUERY` ids; an unknown id is left out)."""
        async def revoked(tx: Tx, part: list[str]) -> list[Row]:
            return await tx.fetch(
                "SELECT id, revoked_at FROM keys WHERE revoked_at IS NOT NULL AND id IN "
                f"({', '.join('?' * len(part))})", *part)

        out: dict[str, str] = {}
        for start in range(0, len(key_ids), _IDS_PER_QUERY):
            part = list(key_ids[start:start + _IDS_PER_QUERY])
            rows = await self.db.read(partial(revoked, part=part))
            out.update((row[0], row[1]) for row in rows)
        return out

    async def revoke_key(self, key_id: str) -> bool:
        """Set ``revoked_at`` (kept if already set); ``False`` for an unknown id."""
        when = iso_utc(self.db.clock())
        return await self.db.write(lambda tx: tx.execute(
            "UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?",
            when, key_id)) == 1

    async def open_session(self, session_id: str, key_id: str, expires: float,
                           now: float) -> None:
        """Record a dashboard session of ``key_id`` valid until ``expires`` (epoch
        seconds); sessions expired at ``now`` are deleted on the way."""
        async def insert(tx: Tx) -> None:
            await tx.execute("DELETE FROM sessions WHERE expires_epoch <= ?", now)
            await tx.execute("INSERT INTO sessions (id, key_id, expires_epoch) "
                             "VALUES (?, ?, ?)", session_id, key_id, expires)

        await self.db.write(insert)

    async def session_key(self, session_id: str, now: float) -> KeyRecord | None:
        """The key of a session that exists and has not expired at ``now`` (revoked keys
        included: the caller ends their sessions), else ``None``."""
        row = await self.db.read(lambda tx: tx.fetchrow(
            f"SELECT {_COLUMNS} FROM keys WHERE id = (SELECT key_id FROM sessions "
            "WHERE id = ? AND expires_epoch > ?)", session_id, now))
        return None if row is None else key_record(row)

    async def close_session(self, session_id: str) -> None:
        """End a session (nothing happens for an unknown id)."""
        await self.db.write(lambda tx: tx.execute("DELETE FROM sessions WHERE id = ?",
                                                  session_id))

    async def service_secret(self, name: str, candidate: str) -> str:
        """The secret stored under ``name``; the first call for a name stores
        ``candidate`` and returns it, every later call (any worker, any node) the same
        value."""
        async def get(tx: Tx) -> str:
            await tx.execute("INSERT INTO service_secrets (name, value) VALUES (?, ?) "
                             "ON CONFLICT (name) DO NOTHING", name, candidate)
            row = await tx.fetchrow("SELECT value FROM service_secrets WHERE name = ?", name)
            assert row is not None  # written above, never deleted
            return str(row[0])

        return await self.db.write(get)


def key_record(row: Row) -> KeyRecord:
    """The record of a row read as the key columns (id, prefix, plan, tier, label,
    created_at, revoked_at, limits)."""
    return KeyRecord(id=row[0], prefix=row[1], plan=row[2], tier=row[3], label=row[4],
                     created_at=row[5], revoked_at=row[6],
                     limits=None if row[7] is None else json.loads(row[7]))
