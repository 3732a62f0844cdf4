"""Labels as an index: the members of a run's or a decision's ``metadata``, one row each in
``run_labels`` or ``decision_labels``, so that a label filter (``metadata[k]=v`` on a list
endpoint) reads the matching rows of the key and no others.

A label row is ``(key_id, name, value, seq)``, keyed in that order, so the rows of a key
with one label are a range of the primary key, newest (highest ``seq``) last: a page
filtered by a label reads that range backwards from its cursor and stops after ``limit``
rows, whether the label matches one row in a million or every row. A second label is a
lookup of the same key per candidate. The label rows are derived, in SQL, from the
``metadata`` column (the one place the labels are written), in the transaction that
inserts the row (:func:`index`); they are deleted with it (a foreign key ``ON DELETE
CASCADE`` to the row's ``seq``, SQLite's ``PRAGMA foreign_keys`` being on for every
connection). The migration that adds the tables derives the rows of every row already
stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from decido_service.store.dialect import Dialect, Tx

__all__ = ["SCHEMA", "Labelled", "Scope", "index"]

#: the tables labels are kept for, and their label tables
Labelled = Literal["runs", "decisions"]
_TABLES: dict[str, str] = {"runs": "run_labels", "decisions": "decision_labels"}


def _schema(table: str, labels: str) -> tuple[str, ...]:
    return (
        f"""CREATE TABLE {labels} (
            key_id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
            seq BIGINT NOT NULL REFERENCES {table} (seq) ON DELETE CASCADE,
            PRIMARY KEY (key_id, name, value, seq)){{without_rowid}}""",
        f"CREATE INDEX {labels}_by_row ON {labels} (seq)",  # the cascade's lookup
        f"INSERT INTO {labels} (key_id, name, value, seq) SELECT t.key_id, m.key, m.value,"
        f" t.seq FROM {table} t, {{members}} m WHERE t.metadata IS NOT NULL"
        " AND t.key_id IS NOT NULL",
    )


#: 4: the label tables, filled from the rows already stored (a migration of
#: :mod:`~decido_service.store.schema`; ``{members}`` is :attr:`Dialect.json_members` of
#: ``t.metadata``)
SCHEMA: tuple[str, ...] = (*_schema("runs", "run_labels"),
                           *_schema("decisions", "decision_labels"))


async def index(tx: Tx, dialect: Dialect, table: Labelled, ids: Sequence[str]) -> None:
    """Write the label rows of the rows of ``table`` with these ``ids`` (just inserted in
    the caller's transaction; pass only those with labels)."""
    if ids:
        members = dialect.json_members.format(column="t.metadata")
        await tx.executemany(
            f"INSERT INTO {_TABLES[table]} (key_id, name, value, seq) SELECT t.key_id, m.key,"
            f" m.value, t.seq FROM {table} t, {members} m WHERE t.id = ?"
            " AND t.key_id IS NOT NULL", [(row_id,) for row_id in ids])


class Scope:
    """Where a page of one key's rows of a table reads, with a label filter or without:
    ``source`` (the ``FROM``, its row aliased ``t``; its arguments ``source_args``
    first), ``where`` (ANDed; ``where_args``) and ``seq`` (the column that orders the page
    and that a cursor compares)."""

    __slots__ = ("seq", "source", "source_args", "where", "where_args")

    def __init__(self, table: Labelled, key_id: str,
                 metadata: Mapping[str, str] | None) -> None:
        members = sorted((metadata or {}).items())
        if not members:
            self.source, self.source_args = f"{table} t", list[Any]()
            self.where, self.where_args, self.seq = ["t.key_id = ?"], [key_id], "t.seq"
            return
        labels = _TABLES[table]
        self.source = f"{labels} l0 JOIN {table} t ON t.seq = l0.seq" + "".join(
            f" JOIN {labels} l{i} ON l{i}.key_id = l0.key_id AND l{i}.name = ?"
            f" AND l{i}.value = ? AND l{i}.seq = l0.seq" for i in range(1, len(members)))
        self.source_args = [v for member in members[1:] for v in member]
        self.where = ["l0.key_id = ?", "l0.name = ?", "l0.value = ?"]
        self.where_args = [key_id, *members[0]]
        self.seq = "l0.seq"

