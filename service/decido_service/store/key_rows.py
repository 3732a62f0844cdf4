"""Key rows as both backends write and read them: the columns, the SQL fragments of
accounts and sessions, a new key's row (only the secret's hash is stored) and the record
of a row read back."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from decido_service import keys
from decido_service.store.records import KeyRecord, iso_utc

__all__ = ["ACCOUNT_OF", "KEY_COLUMNS", "SESSION_KEY", "key_record", "new_key"]

#: the columns of a key row in the order :func:`key_record` reads and :func:`new_key` writes
#: them (the hash of the secret follows them in a written row)
KEY_COLUMNS = "id, prefix, plan, tier, label, created_at, revoked_at, limits"
#: the account of the key whose id is the statement's parameter (none: NULL)
ACCOUNT_OF = "(SELECT COALESCE(account, id) FROM keys WHERE id = {})"
#: the key of a live session: the parameters are the session id and the time now
SESSION_KEY = ("SELECT " + KEY_COLUMNS + " FROM keys WHERE id = (SELECT key_id FROM sessions "
               "WHERE id = {} AND expires_epoch > {})")


def new_key(plan: str, tier: str, label: str | None, limits: dict[str, Any] | None,
            now: float) -> tuple[KeyRecord, str, tuple[Any, ...]]:
    """A new key: its record, its secret (shown once) and the row a backend inserts
    (:data:`KEY_COLUMNS`, then the secret's hash: only the hash is ever stored).
    ``ValueError`` for a malformed argument."""
    for what, value in (("plan", plan), ("tier", tier)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{what} must be a non-empty string")
    if label is not None and not isinstance(label, str):
        raise ValueError("label must be a string or None")
    if limits is not None and not isinstance(limits, dict):
        raise ValueError("limits must be a dict or None")
    secret, prefix, digest = keys.new_key_material()
    record = KeyRecord(id=uuid.uuid4().hex, prefix=prefix, plan=plan, tier=tier, label=label,
                       created_at=iso_utc(now), revoked_at=None, limits=limits)
    row = (record["id"], prefix, plan, tier, label, record["created_at"], None,
           None if limits is None else json.dumps(limits, sort_keys=True), digest)
    return record, secret, row


def key_record(row: Sequence[Any]) -> KeyRecord:
    """The record of a row read as :data:`KEY_COLUMNS`."""
    return KeyRecord(id=row[0], prefix=row[1], plan=row[2], tier=row[3], label=row[4],
                     created_at=row[5], revoked_at=row[6],
                     limits=None if row[7] is None else json.loads(row[7]))
