"""Each worker's :class:`decido.Study` objects, kept in step with the store.

A study is stored as its library spec and the ordered log of what was asked and told
(:mod:`decido_service.store.studies`). A worker keeps the studies it served last in a small
LRU (:class:`StudyCache`), each with the log length it has replayed; inside a study's
locked transaction, :func:`synced` replays only the entries written since (by any worker
or node) and the operation appends its own with :func:`write_entries`. The entries mirror
:meth:`decido.Study.to_dict`'s log, so the same seed and the same ordered log give the same
trials on any node.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

import decido
from decido_service.store import StudyTx

__all__ = ["CACHE_SIZE", "Cached", "StudyCache", "apply", "ask_entry", "synced", "tell_entry"]

#: the studies one worker keeps replayed
CACHE_SIZE = 64


@dataclass
class Cached:
    """A replayed study, the log length it reflects and how many trials its engine
    suggested (counting them on the study costs O(trials))."""

    study: decido.Study
    length: int
    asked: int = 0


class StudyCache:
    """A small LRU of replayed studies by id (one per worker)."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._items: OrderedDict[str, Cached] = OrderedDict()

    def get(self, study_id: str) -> Cached | None:
        """The cached study, made most recent; ``None`` when absent."""
        found = self._items.get(study_id)
        if found is not None:
            self._items.move_to_end(study_id)
        return found

    def put(self, study_id: str, cached: Cached) -> None:
        """Keep ``cached``, dropping the least recent beyond the size."""
        self._items[study_id] = cached
        self._items.move_to_end(study_id)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def drop(self, study_id: str) -> None:
        """Forget a study (after a failed operation: the next replays from the store)."""
        self._items.pop(study_id, None)


def apply(study: decido.Study, entry: dict[str, Any]) -> int:
    """Replay one log entry on ``study`` (as :meth:`decido.Study.from_dict` does); the
    trials it asked."""
    if "ask" in entry:
        return len(study.ask(int(entry["ask"])))
    target = entry["point"] if "point" in entry else int(entry["tell"])
    study.tell(target, values=entry.get("values"), state=entry["state"],
               metrics=entry.get("metrics"))
    return 0


def ask_entry(n: int) -> str:
    """The log entry of ``study.ask(n)``."""
    return f'{{"ask":{int(n)}}}'


def tell_entry(target: int | Any, state: str, values: list[float] | None,
               metrics: dict[str, float] | None) -> str:
    """The log entry of a tell of a trial's library number, or of a point (by name or in
    order) never asked."""
    out: dict[str, Any] = {"tell": target} if isinstance(target, int) else {"point": target}
    out["state"] = state
    if values is not None:
        out["values"] = values
    if metrics:
        out["metrics"] = metrics
    return orjson.dumps(out).decode()


async def synced(stx: StudyTx, cache: StudyCache, library_spec: dict[str, Any]
                 ) -> Cached:
    """The study of ``stx`` replayed up to the store's log (off the event loop)."""
    study_id, length = stx.row["id"], int(stx.row["log_length"])
    found = cache.get(study_id)
    if found is not None and found.length > length:  # ahead of a rolled-back write
        found = None
    start = 0 if found is None else found.length
    entries = await stx.log_after(start) if start < length else []

    def build() -> Cached:
        study = decido.Study(**library_spec) if found is None else found.study
        asked = 0 if found is None else found.asked
        for text in entries:
            asked += apply(study, orjson.loads(text))
        return Cached(study, length, asked)

    cached = await stx.compute(build)
    cache.put(study_id, cached)
    return cached
