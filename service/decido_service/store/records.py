"""The records the store takes and returns (keys, counters, admissions, decision-log
entries), the error it raises, and how record ids and times are written.

Every backend and the service use these; they are re-exported by
:mod:`decido_service.store`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, NamedTuple, TypedDict

import orjson

__all__ = [
    "Admission",
    "AdmissionRequest",
    "CounterSpec",
    "CounterState",
    "DecisionEntry",
    "DecisionRecord",
    "KeyRecord",
    "StoreError",
    "iso_utc",
    "metadata_of",
    "metadata_text",
    "ordered_id",
    "short_id",
]


class StoreError(RuntimeError):
    """The store cannot do what was asked (unreachable, locked past the busy timeout,
    closed, missing, or a schema newer than this code). The app answers 503
    ``store_unavailable``."""


class StoreMissing(StoreError):
    """There is no store at ``where`` (a SQLite file's absolute path, a PostgreSQL database
    without the schema) and none was to be created."""

    def __init__(self, where: str) -> None:
        super().__init__(f"no decido store at {where}; `decido keys create --create` or "
                         "`decido serve` creates one")
        self.where = where


class KeyRecord(TypedDict):
    """A key as the store returns it: public fields only, never the secret or its hash."""

    id: str
    prefix: str
    plan: str
    tier: str
    label: str | None
    created_at: str
    revoked_at: str | None
    limits: dict[str, Any] | None


class CounterSpec(NamedTuple):
    """One counter a request passes (see :mod:`~decido_service.store.admission_rule` for
    ``amount`` and ``gate``); ``limit`` ``None`` = unlimited."""

    name: str
    subject: str
    window: str
    limit: int | None
    amount: int = 1
    gate: bool = False


class CounterState(NamedTuple):
    """A counter's state in its current window (after the increment when admitted).

    ``reset`` equals ``window_end``: the epoch second at which the window ends."""

    name: str
    limit: int | None
    used: int
    remaining: int | None
    reset: int
    window_start: int
    window_end: int


class Admission(NamedTuple):
    """The answer to one request's counters: ``counters`` in the order of the specs.

    ``revoked_at`` is set (and ``admitted`` false, ``refused`` ``None``) when the admission
    named a key that is revoked or no longer exists."""

    admitted: bool
    counters: list[CounterState]
    refused: CounterState | None
    revoked_at: str | None = None


class DecisionRecord(TypedDict):
    """One entry of the decision log: ``summary`` is what a listing shows (method, best,
    the top of the ranking, timing); ``request`` and ``answer`` are the bodies (``answer``
    ``None`` when it was above the size cap; both ``None`` in a listing); ``metadata``
    its labels (``{}``: none)."""

    id: str
    key_id: str
    created_at: str
    summary: dict[str, Any]
    request: Any
    answer: Any
    metadata: dict[str, str]


class DecisionEntry(NamedTuple):
    """A decision-log entry as it is written: the columns of its row, the bodies already
    JSON text (the request as received, the answer as sent: nothing is encoded twice)."""

    id: str
    key_id: str
    created_at: str
    created_epoch: float
    summary: str
    request: str
    answer: str | None
    metadata: str | None = None
    """the labels as JSON text (:func:`metadata_text`)"""


class AdmissionRequest(NamedTuple):
    """One request's counters for :meth:`Admissions.admit_many`; ``key_id`` (optional) is
    checked for revocation in the same transaction; ``log`` (optional) is written to the
    decision log in that transaction when, and only when, the request is admitted."""

    specs: Sequence[CounterSpec]
    now: float
    key_id: str | None = None
    log: DecisionEntry | None = None


def metadata_text(metadata: Mapping[str, str] | None) -> str | None:
    """A record's ``metadata`` as its column keeps it: JSON text, ``None`` when empty."""
    return orjson.dumps(dict(metadata)).decode() if metadata else None


def metadata_of(text: str | None) -> dict[str, str]:
    """A ``metadata`` column read back (``{}`` for none)."""
    return {} if text is None else dict(orjson.loads(text))


def ordered_id(prefix: str, epoch: float) -> str:
    """A new record id: ``prefix``, then 12 hex digits of the creation time in milliseconds
    and 12 of randomness (48 bits). Ids of later records sort after earlier ones (to the
    millisecond), so a table's unique index on them grows at its end: a decision-log row
    costs 0.75x the CPU to insert of one with fully random ids (batches of 10, WAL:
    ``benchmarks/load/log_ids.py``). The randomness only keeps ids apart, it guards
    nothing (every read of a record is scoped to its key), so it comes from the process's
    ``random`` generator (seeded from the OS) rather than a system call per id."""
    return f"{prefix}{int(epoch * 1000):012x}{random.getrandbits(48):012x}"


#: how many characters of an id's random tail its short form shows
SHORT_ID_LENGTH = 8


def short_id(record_id: str) -> str:
    """The short form of a record id that a person tells apart from its neighbours: the
    last :data:`SHORT_ID_LENGTH` characters, from the random tail of an
    :func:`ordered_id` (its time prefix is the same for records made in a row)."""
    return record_id[-SHORT_ID_LENGTH:]


def iso_utc(epoch: float) -> str:
    """``2025-01-31T23:59:59Z``: ISO 8601, UTC, whole seconds."""
    return _iso_second(int(epoch // 1))


@lru_cache(maxsize=4)
def _iso_second(second: int) -> str:
    """:func:`iso_utc` of a whole second, remembered: every logged decision and run of the
    same second has the same text (formatting it cost ~3 us, the cache ~0.2 us)."""
    return datetime.fromtimestamp(second, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
