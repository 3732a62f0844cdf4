"""Keys, dashboard sessions and service secrets on SQLite (blocking; see
:class:`~decido_service.store.Store` for what each does)."""

from __future__ import annotations

from typing import Any

from decido_service import keys
from decido_service.store.key_rows import (
    ACCOUNT_OF,
    KEY_COLUMNS,
    SESSION_KEY,
    key_record,
    new_key,
)
from decido_service.store.records import KeyRecord, iso_utc
from decido_service.store.sqlite_connection import SQLiteConnections

__all__ = ["SQLiteKeys"]


class SQLiteKeys(SQLiteConnections):
    """The key, session and service-secret methods of
    :class:`~decido_service.store.sqlite_db.SQLiteDatabase`."""

    def create_key(self, plan: str, tier: str, label: str | None = None,
                   limits: dict[str, Any] | None = None,
                   owner: str | None = None) -> tuple[KeyRecord, str]:
        """Create a key; return ``(record, secret)``. Only the secret's hash is written;
        with ``owner``, the key joins that key's account."""
        record, secret, row = new_key(plan, tier, label, limits, self._clock())
        with self._transaction() as conn:
            conn.execute(f"INSERT INTO keys ({KEY_COLUMNS}, hash, account) "
                         f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {ACCOUNT_OF.format('?')})",
                         (*row, owner))
        return record, secret

    def find_key(self, secret: str) -> KeyRecord | None:
        """The key whose hash matches ``secret``; ``None`` if malformed or unknown."""
        if not keys.is_well_formed(secret):
            return None
        conn = self._conn()
        with self._errors():
            row = conn.execute(
                f"SELECT {KEY_COLUMNS}, hash FROM keys WHERE hash = ?",
                (keys.hash_secret(secret),),
            ).fetchone()
        if row is None or not keys.verify(secret, row[-1]):
            return None
        return key_record(row)

    def get_key(self, key_id: str) -> KeyRecord | None:
        """The key with this public id, or ``None``. (Addition to the protocol.)"""
        conn = self._conn()
        with self._errors():
            row = conn.execute(f"SELECT {KEY_COLUMNS} FROM keys WHERE id = ?", (key_id,))
            row = row.fetchone()
        return None if row is None else key_record(row)

    def list_keys(self) -> list[KeyRecord]:
        """All keys in creation order."""
        conn = self._conn()
        with self._errors():
            rows = conn.execute(f"SELECT {KEY_COLUMNS} FROM keys ORDER BY rowid").fetchall()
        return [key_record(row) for row in rows]

    def account_keys(self, key_id: str) -> list[KeyRecord]:
        """The keys of ``key_id``'s account, oldest first (``[]``: unknown id)."""
        conn = self._conn()
        with self._errors():
            rows = conn.execute(f"SELECT {KEY_COLUMNS} FROM keys WHERE COALESCE(account, id) = "
                                f"{ACCOUNT_OF.format('?')} ORDER BY rowid", (key_id,)).fetchall()
        return [key_record(row) for row in rows]

    def service_secret(self, name: str, candidate: str) -> str:
        """The secret stored under ``name`` (``candidate`` the first time)."""
        with self._transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO service_secrets (name, value) VALUES (?, ?)",
                         (name, candidate))
            row = conn.execute("SELECT value FROM service_secrets WHERE name = ?", (name,))
            return str(row.fetchone()[0])

    def open_session(self, session_id: str, key_id: str, expires: float, now: float) -> None:
        """Record a session (expired ones deleted)."""
        with self._transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE expires_epoch <= ?", (now,))
            conn.execute("INSERT INTO sessions (id, key_id, expires_epoch) VALUES (?, ?, ?)",
                         (session_id, key_id, expires))

    def session_key(self, session_id: str, now: float) -> KeyRecord | None:
        """The key of a live session, else ``None``."""
        conn = self._conn()
        with self._errors():
            row = conn.execute(SESSION_KEY.format("?", "?"), (session_id, now)).fetchone()
        return None if row is None else key_record(row)

    def close_session(self, session_id: str) -> None:
        """End a session."""
        with self._transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def revoke_key(self, key_id: str) -> bool:
        """Revoke; ``True`` if the key exists (an earlier ``revoked_at`` is kept)."""
        with self._transaction() as conn:
            cur = conn.execute(
                "UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?",
                (iso_utc(self._clock()), key_id),
            )
            return cur.rowcount == 1
