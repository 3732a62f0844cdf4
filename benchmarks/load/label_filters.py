"""A page of a key's decision log and runs, unfiltered and filtered by a label.

    python benchmarks/load/label_filters.py URL [--records 20000] [--runs 5000] [--rounds 7]

Fills the store at ``URL`` (``sqlite:///path`` or ``postgresql://...``, an empty one) with
``--records`` decision-log entries and ``--runs`` runs of one key, one in 100 labelled
``project=rare`` and the others ``project=common``, then times ``page(limit=21)`` (a
default page and its look-ahead row) without a filter and with ``metadata[project]`` =
``common`` (99 % match), ``rare`` (1 %) and ``none`` (no match: every row of the key is
read without the label index). Reports the median of ``--rounds`` calls in milliseconds.
With the label index (schema version 4, ``store/labels.py``) a filtered page reads the
label's rows only (docs/service.md, "Labels", has the numbers before and after it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from decido_service.store import DecisionEntry, Store, open_store
from decido_service.types import Budget, OptimizeRequest, RunDocument

#: the runs' document (a page of runs reads it back decoded)
_DOCUMENT = RunDocument(request=OptimizeRequest(), budget=Budget(max_evaluations=1,
                                                                 time_limit=1.0))


async def _fill(store: Store, records: int, runs: int) -> None:
    batch: list[DecisionEntry] = []
    for i in range(records):
        labels = {"project": "rare" if i % 100 == 0 else "common", "team": f"t{i % 7}"}
        batch.append(DecisionEntry(f"dec_{i:024x}", "k", "2025-06-15T15:06:40Z", 1.75e9 + i,
                                   json.dumps({"kind": "decide", "best": "a", "top": []}),
                                   "{}", None, json.dumps(labels)))
        if len(batch) == 1000 or i == records - 1:
            await store.admissions.admit_many([], batch)
            batch = []
    for i in range(runs):
        await store.runs.record({"id": f"run_{i:024x}", "key_id": "k", "state": "succeeded",
                                 "metadata": {"project": "rare" if i % 100 == 0 else "common"},
                                 "document": _DOCUMENT})


async def _median_ms(call: Callable[[], Awaitable[Any]], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


async def main(url: str, records: int, runs: int, rounds: int) -> None:
    store = await open_store(url)
    try:
        await _fill(store, records, runs)
        for project in (None, "common", "rare", "none"):
            labels = None if project is None else {"project": project}
            name = "no filter" if project is None else f"project={project}"
            decisions = await _median_ms(
                lambda labels=labels: store.decisions.page("k", 21, None, labels), rounds)
            found = await _median_ms(
                lambda labels=labels: store.runs.page("k", 21, metadata=labels), rounds)
            print(f"{url.split(':')[0]:10s} {name:18s} decisions ({records}): "
                  f"{decisions:8.2f} ms   runs ({runs}): {found:8.2f} ms")
    finally:
        await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(main(args.url, args.records, args.runs, args.rounds))
