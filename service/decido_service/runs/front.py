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

import asyncio
from collections.abc import Iterable, Iterator
from itertools import islice

import msgspec

from decido_service.pages import within
from decido_service.runs.api import find, front_result
from decido_service.runs.execution import CHUNK_BYTES
from decido_service.store import FrontChunk, RunRow, Store
from decido_service.types import FrontQuery, ParetoPoint, RunFront, RunResult

__all__ = ["page", "points"]

_POINTS = msgspec.json.Decoder(list[ParetoPoint])
_ALL = 1 << 40


async def page(store: Store, key_id: str, run_id: str, query: FrontQuery,
               max_bytes: int | None) -> RunFront:
    """A page of the front of ``key_id``'s run ``run_id``: the points after index
    ``query.starting_after``, at most ``query.limit`` of them and about ``max_bytes``
    bytes (``None``: no byte cap); 404 for a run that is not the key's or has one
    objective, 409 for one without a front (yet). The points are decoded and measured in
    a thread, off the event loop."""
    row = await find(store, key_id, run_id)
    result = front_result(row)
    after = -1 if query.starting_after is None else query.starting_after
    size = result.front_size if result.front_size is not None else len(result.pareto or ())
    found: Iterable[tuple[int, ParetoPoint]]
    if result.pareto is not None:  # a document written before fronts had rows of their own
        found = list(enumerate(result.pareto))[after + 1:]
    else:  # enough chunks for the byte cap (each holds about CHUNK_BYTES, the last less)
        rows = _ALL if max_bytes is None else max_bytes // CHUNK_BYTES + 3
        found = _decoded(await store.runs.front(run_id, after, rows), after)
    first, shown = await asyncio.to_thread(_cut, found, query.limit,
                                           _ALL if max_bytes is None else max_bytes)
    start = min(after + 1, size) if first is None else first
    return RunFront(run_id=run_id, first=start, data=shown,
                    size=size, has_more=start + len(shown) < size)


def _decoded(chunks: list[FrontChunk], after: int) -> Iterator[tuple[int, ParetoPoint]]:
    """The points of ``chunks`` after index ``after``, with their indices (each chunk
    decoded once it is reached)."""
    for first, _, text in chunks:
        for j, point in enumerate(_POINTS.decode(text)):
            if first + j > after:
                yield first + j, point


def _cut(found: Iterable[tuple[int, ParetoPoint]], limit: int, max_bytes: int
         ) -> tuple[int | None, list[ParetoPoint]]:
    """The index of the first of ``found`` (``None``: none) and the page's points: at
    most ``limit`` of them, about ``max_bytes`` (:func:`~decido_service.pages.within`)."""
    taken = list(islice(found, limit))
    shown, _ = within((point for _, point in taken), max_bytes)
    return (taken[0][0] if taken else None), shown


async def points(store: Store, row: RunRow) -> list[ParetoPoint] | None:
    """The whole front of the run of ``row`` (a finished run of several objectives), or
    ``None`` for a run without one (decoded in a thread)."""
    result: RunResult | None = row.document.result
    if result is None or result.objectives is None:
        return None
    if result.pareto is not None:
        return result.pareto
    chunks = await store.runs.front(row.id, -1, _ALL)
    return await asyncio.to_thread(lambda: [p for _, p in _decoded(chunks, -1)])
