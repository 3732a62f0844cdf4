"""A run's front (a run of several objectives), kept apart from its document.

A front can hold tens of thousands of points of hundreds of variables each: tens of MB of
JSON. It is written once, with the run's final state, as chunks of consecutive points of
about :data:`~decido_service.runs.execution.CHUNK_BYTES` each
(:func:`~decido_service.runs.execution.front_chunks`; ``run_fronts`` in the store), and the run's
document keeps only its size (``result.front_size``) beside its hypervolume and reference
point. So a run, a page of runs, a run's event stream, a webhook's payload and the
dashboard's run page stay small whatever the front's size, and the front is read in pages
(``GET /v1/runs/{id}/front``: :func:`page`), each at most ``limit`` points and about the
tier's ``front_page_bytes`` (:func:`decido_service.pages.within`, the decision log's rule
too). What needs the whole front (a decision on it, ``from_run``; the compare page; an
``Idempotency-Key`` replay of ``/v1/optimize``) reads every chunk (:func:`points`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from decido_service.pages import within
from decido_service.runs.api import find, front_result
from decido_service.runs.execution import CHUNK_BYTES, read_document
from decido_service.store import Store
from decido_service.types import FrontQuery, ParetoPoint, RunFront, RunResult

__all__ = ["page", "points"]

_POINTS = msgspec.json.Decoder(list[ParetoPoint])
_ALL = 1 << 40


async def page(store: Store, key_id: str, run_id: str, query: FrontQuery,
               max_bytes: int | None) -> RunFront:
    """A page of the front of ``key_id``'s run ``run_id``: the points after index
    ``query.starting_after``, at most ``query.limit`` of them and about ``max_bytes``
    bytes (``None``: no byte cap); 404 for a run that is not the key's or has one
    objective, 409 for one without a front (yet)."""
    row = await find(store, key_id, run_id)
    result = front_result(row)
    after = -1 if query.starting_after is None else query.starting_after
    size = _size(result)
    if result.pareto is not None:  # a document written before fronts had rows of their own
        found = list(enumerate(result.pareto))[after + 1:after + 1 + query.limit]
    else:
        rows = _ALL if max_bytes is None else max_bytes // CHUNK_BYTES + 3
        found = []
        for first, _, text in await store.runs.front(run_id, after, rows):
            found += [(first + j, p) for j, p in enumerate(_POINTS.decode(text))
                      if first + j > after]
            if len(found) >= query.limit:
                break
        found = found[:query.limit]
    shown, _ = within((p for _, p in found), _ALL if max_bytes is None else max_bytes)
    start = found[0][0] if found else min(after + 1, size)
    return RunFront(run_id=run_id, first=start, data=shown,
                    size=size, has_more=start + len(shown) < size)


def _size(result: RunResult) -> int:
    if result.front_size is not None:
        return result.front_size
    return len(result.pareto or ())


async def points(store: Store, row: dict[str, Any]) -> list[ParetoPoint] | None:
    """The whole front of the run of ``row`` (a finished run of several objectives), or
    ``None`` for a run without one."""
    result = read_document(row["document"]).result
    if result is None or result.objectives is None:
        return None
    if result.pareto is not None:
        return result.pareto
    out: list[ParetoPoint] = []
    for _, _, text in await store.runs.front(row["id"], -1, _ALL):
        out += _POINTS.decode(text)
    return out
