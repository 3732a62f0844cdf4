"""The run record as both backends store it: its columns, the ones an update may change,
its states, and the SQL and checks the two backends share for runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from decido import status

__all__ = [
    "COUNT_RUNS_SQL",
    "FINISHED_STATES",
    "RUN_FIELDS",
    "RUN_STATES",
    "RUN_UPDATABLE",
    "check_run_changes",
]

#: runs by state (:meth:`Store.count_runs`), the same SQL on both backends; rows written
#: before runs had states count as ``succeeded``
COUNT_RUNS_SQL = "SELECT COALESCE(state, 'succeeded') AS s, count(*) FROM runs GROUP BY s"

#: The columns of a run row: :meth:`Store.record_run` writes them (missing ones NULL),
#: :meth:`Store.get_run` and :meth:`Store.page_runs` return them (plus ``cancel_requested``).
#: ``document`` is the run document as JSON text (the service's, opaque to the store).
RUN_FIELDS: tuple[str, ...] = (
    "id", "key_id", "created_at", "engine", "dims", "status", "value", "evaluations",
    "elapsed_ms", "goal", "seed", "state", "document", "finished_at", "owner", "lease_until",
)
#: The columns :meth:`Store.update_run` may change.
RUN_UPDATABLE: frozenset[str] = frozenset(
    ("status", "value", "evaluations", "elapsed_ms", "seed", "state", "document",
     "finished_at", "owner", "lease_until"))
#: A run's lifecycle: ``queued`` -> ``running`` -> one of :data:`FINISHED_STATES` (it can
#: be deleted then; cancelling it is refused); the names are the library's (decido.status).
RUN_STATES: tuple[str, ...] = status.RUN_STATES
FINISHED_STATES: frozenset[str] = frozenset(status.FINISHED_RUN_STATES)


def check_run_changes(changes: Mapping[str, Any]) -> list[str]:
    """The columns of an :meth:`Store.update_run`, or ``ValueError`` for one that is not
    in :data:`RUN_UPDATABLE` (or for none at all)."""
    columns = list(changes)
    unknown = [c for c in columns if c not in RUN_UPDATABLE]
    if unknown or not columns:
        raise ValueError(f"a run update sets some of {sorted(RUN_UPDATABLE)}, not {unknown}")
    return columns
