#!/usr/bin/env python3
"""Issue 38's label-filter reproducer: what one key's filtered reads of a big decision log
cost the other keys' reads.

Key A's decision log is filled with ``--records`` entries (through the store, before the
server starts), every one labelled ``project=common``. Then, on a two-worker server,
``--clients`` clients of key A ask for ``GET /v1/decisions?metadata[project]=rare`` (a
label no entry has) back to back for ``--seconds``, while one client of key B asks for
``GET /v1/usage`` and one for ``GET /v1/health`` every 50 ms. Reported: the medians of A's
pages and the p50, p99 and maximum of B's and the health check's answers, in ms.

Usage::

    python benchmarks/load/label_reads.py [--records 100000] [--clients 2] [--seconds 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from run import _decido
from runs import server

from decido_service.store import DecisionEntry
from decido_service.store.blocking import open_blocking


def made_key(db: Path) -> dict[str, str]:
    """A new enterprise key (its ``id`` and secret ``key``)."""
    made = subprocess.run([*_decido(), "keys", "create", "--create", "--plan", "enterprise",
                           "--tier", "enterprise", "--db", str(db), "--json"],
                          capture_output=True, text=True, check=True)
    return dict(json.loads(made.stdout))


def fill(db: Path, key_id: str, records: int) -> None:
    """``records`` entries of ``key_id``'s log, each labelled ``project=common``."""
    with open_blocking(str(db)) as store:
        batch: list[DecisionEntry] = []
        for i in range(records):
            batch.append(DecisionEntry(
                f"dec_{i:024x}", key_id, "2025-06-15T15:06:40Z", time.time(),
                json.dumps({"kind": "decide", "best": "a", "top": []}), "{}", None,
                json.dumps({"project": "common", "team": f"t{i % 7}"})))
            if len(batch) == 1000 or i == records - 1:
                store.run(store.store.admissions.admit_many([], batch))
                batch = []


def loop(port: int, path: str, key: str | None, stop: threading.Event, out: list[float],
         pause: float) -> None:
    """GET ``path`` until ``stop``, ``pause`` seconds apart; each answer's ms in ``out``."""
    headers = {} if key is None else {"Authorization": f"Bearer {key}"}
    while not stop.is_set():
        started = time.monotonic()
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
        with urllib.request.urlopen(request, timeout=120) as answer:
            answer.read()
        out.append((time.monotonic() - started) * 1e3)
        time.sleep(pause)


def quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return (f"p50 {statistics.median(ordered):8.1f}  p99 {p99:8.1f}  max {ordered[-1]:8.1f}"
            f"  ({len(ordered)} answers)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "decido.db"
        a, b = made_key(db), made_key(db)
        fill(db, a["id"], args.records)
        with server(db, Path(tmp) / "server.log", {}, workers=2) as port:
            stop = threading.Event()
            pages: list[float] = []
            usage: list[float] = []
            health: list[float] = []
            threads = [threading.Thread(target=loop, args=(
                port, "/v1/decisions?metadata%5Bproject%5D=rare", a["key"], stop, pages, 0))
                for _ in range(args.clients)]
            threads += [threading.Thread(target=loop, args=(port, "/v1/usage", b["key"], stop,
                                                            usage, 0.05)),
                        threading.Thread(target=loop, args=(port, "/v1/health", None, stop,
                                                            health, 0.05))]
            for thread in threads:
                thread.start()
            time.sleep(args.seconds)
            stop.set()
            for thread in threads:
                thread.join()
    print(f"{args.records} entries of key A, {args.clients} clients of A filtering, "
          f"{args.seconds:.0f} s (ms):")
    print(f"  A's filtered page   {quantiles(pages)}")
    print(f"  B's /v1/usage       {quantiles(usage)}")
    print(f"  /v1/health          {quantiles(health)}")


if __name__ == "__main__":
    main()
