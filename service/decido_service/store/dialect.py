"""What a concern's SQL runs on: a transaction (:class:`Tx`), the backend that hands one
out (:class:`Database`) and the few ways the two SQL dialects differ (:class:`Dialect`).

A concern (accounts, admissions, runs, decision log) writes each statement once, with
``?`` placeholders, and runs it through :meth:`Database.read` or :meth:`Database.write`
as an ``async`` body of a :class:`Tx`. Both backends support what the statements use
(``RETURNING``, ``ON CONFLICT ... DO UPDATE``/``DO NOTHING``, ``IS NOT DISTINCT FROM``,
partial indexes, double-quoted ``"window"``); what they do not share is here:

- **placeholders**: SQLite takes ``?``; the PostgreSQL transaction numbers them ``$1``,
  ``$2``, ... (:func:`numbered`, once per statement text);
- **locks**: SQLite's write transaction (``BEGIN IMMEDIATE``) holds the whole file, so a
  read inside it needs no lock; PostgreSQL locks rows (``FOR UPDATE``, ``SKIP LOCKED``
  for the run queue, the admission's counter rows through its UPSERT) and serialises a
  key's caps (:meth:`Dialect.at_cap`) and the migrations with transaction-scoped advisory
  locks;
- **schema**: the ordering key column (``seq``: SQLite's ``rowid`` alias, PostgreSQL's
  identity column), ``WITHOUT ROWID`` tables, and how to ask whether a table exists;
- **JSON**: how the members of a JSON object kept as text are read (the label index:
  SQLite's ``json_each``, PostgreSQL's ``jsonb_each_text``).

Times are written by the service (epoch seconds; ISO 8601 text,
:func:`~decido_service.store.iso_utc`), never by the database's ``now()``, so both
backends store the same values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, TypeVar

__all__ = ["POSTGRES", "SQLITE", "Body", "Database", "Dialect", "Row", "Tx", "after_cursor",
           "insert_sql", "numbered", "set_clause"]

T = TypeVar("T")
#: a row as a backend returns it (a tuple, an asyncpg record): indexed by column position
Row = Sequence[Any]


class Tx(Protocol):
    """One connection inside a transaction (or, for a read, in autocommit)."""

    async def execute(self, sql: str, *args: Any) -> int:
        """Run a statement; the number of rows it wrote."""

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run a statement once per row of arguments."""

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        """Every row of a query."""

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        """The first row of a query, or ``None``."""


#: what a concern hands a backend: the work of one transaction (or read) on a :class:`Tx`
Body = Callable[[Tx], Coroutine[Any, Any, T]]


class Database(Protocol):
    """A backend: its dialect, its clock, and transactions on its connections."""

    dialect: Dialect
    clock: Callable[[], float]

    async def read(self, body: Body[T]) -> T:
        """``body`` on a connection in autocommit (for reads)."""

    async def write(self, body: Body[T]) -> T:
        """``body`` in one transaction, committed when it returns and rolled back when it
        raises; a cancelled caller stops waiting, never the transaction."""

    async def ping(self) -> bool:
        """True when the database answers and its schema is current (never raises)."""

    async def close(self) -> None:
        """Release every connection; later calls raise ``StoreError``."""


@dataclass(frozen=True)
class Dialect:
    """The differences between the backends' SQL (module docs)."""

    name: str
    #: the DDL of the ``seq`` column: the table's ordering key, growing with each insert
    identity: str
    #: appended to the DDL of a table keyed by its primary key alone
    without_rowid: str
    #: appended to a ``SELECT`` whose rows the transaction will change
    for_update: str
    #: appended to the ``SELECT`` of a queue's next row: concurrent takers skip it
    skip_locked: str
    #: :attr:`skip_locked` of a join: the rows of the table aliased ``{alias}`` only
    skip_locked_of: str
    #: True when rows a transaction only reads must be locked to stay as read
    row_locks: bool
    #: serialises the transactions of one key (its argument), or ``None`` (not needed)
    key_lock: str | None
    #: serialises schema migrations, or ``None`` (the write transaction already does)
    migration_lock: str | None
    #: one row when the table named by its argument exists
    has_table: str
    #: a table of the members (columns ``key``, ``value``: text) of the JSON object of
    #: strings in the text column ``{column}`` (the label index,
    #: :mod:`~decido_service.store.labels`)
    json_members: str

    async def at_cap(self, tx: Tx, cap: int | None, lock: str | None, table: str, where: str,
                     *args: Any) -> bool:
        """True when ``table`` has ``cap`` rows ``where`` holds for (``None``: no cap),
        counted under the :attr:`key_lock` of ``lock`` (``None``: unlocked; held to the
        end of the transaction, so concurrent inserts of one key count one at a time)."""
        if cap is None:
            return False
        if lock is not None and self.key_lock is not None:
            await tx.execute(self.key_lock, lock)
        row = await tx.fetchrow(f"SELECT count(*) FROM {table} WHERE {where}", *args)
        return row is not None and int(row[0]) >= cap


SQLITE = Dialect(
    name="sqlite", identity="INTEGER PRIMARY KEY AUTOINCREMENT", without_rowid=" WITHOUT ROWID",
    for_update="", skip_locked="", skip_locked_of="", row_locks=False, key_lock=None,
    migration_lock=None,
    has_table="SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
    json_members="json_each({column})")

POSTGRES = Dialect(
    name="postgresql", identity="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    without_rowid="", for_update=" FOR UPDATE", skip_locked=" FOR UPDATE SKIP LOCKED",
    skip_locked_of=" FOR UPDATE OF {alias} SKIP LOCKED",
    row_locks=True, key_lock="SELECT pg_advisory_xact_lock(hashtext(?))",
    migration_lock="SELECT pg_advisory_xact_lock(110386622325871)",  # 0x646563_69646F: "decido"
    has_table="SELECT 1 WHERE to_regclass(?) IS NOT NULL",
    json_members="jsonb_each_text({column}::jsonb)")

_PLACEHOLDER = re.compile(r"\?")


@lru_cache(maxsize=1024)
def numbered(sql: str) -> str:
    """``sql`` with its ``?`` placeholders numbered ``$1``, ``$2``, ... (PostgreSQL). The
    statements hold no ``?`` inside a literal."""
    count = iter(range(1, sql.count("?") + 1))
    return _PLACEHOLDER.sub(lambda _: f"${next(count)}", sql)


async def after_cursor(tx: Tx, table: str, key_id: str, cursor: str,
                       columns: tuple[str, str] = ("seq", "id")) -> tuple[str, Any]:
    """The condition (SQL and its argument) of a page of ``key_id``'s rows of ``table``
    (newest first, by ``seq``) that follows ``cursor``: the rows before it when it is one
    of the key's; otherwise (deleted since, another key's, never made) the rows whose id
    sorts before it. Ids begin with their creation time
    (:func:`~decido_service.store.records.ordered_id`), so a page after an entry deleted
    while a client was paging starts where that entry was, and any well-formed id is a
    position. ``columns``: how the page's query names ``seq`` and ``id`` (a page read
    through a label index compares the label row's ``seq``)."""
    found = await tx.fetchrow(f"SELECT seq FROM {table} WHERE id = ? AND key_id = ?",
                              cursor, key_id)
    if found is None:
        return f"{columns[1]} < ?", cursor
    return f"{columns[0]} < ?", found[0]


def insert_sql(table: str, columns: Sequence[str]) -> str:
    """The ``INSERT`` of one row of ``table`` into ``columns``, each bound to a ``?``
    parameter (:func:`numbered` turns them into ``$n`` for PostgreSQL)."""
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def set_clause(changes: Mapping[str, Any], allowed: frozenset[str]) -> tuple[str, list[Any]]:
    """The ``SET`` list of an ``UPDATE`` writing ``changes``, and its arguments;
    ``ValueError`` naming the columns of ``changes`` not ``allowed``, and those allowed."""
    if wrong := sorted(set(changes) - allowed):
        raise ValueError(f"not updatable: {', '.join(wrong)} (updatable: "
                         f"{', '.join(sorted(allowed))})")
    return ", ".join(f"{c} = ?" for c in changes), list(changes.values())
